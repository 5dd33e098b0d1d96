/* stream.c: subscriptions, stream frames and latest-wins backpressure (see stream.h). */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "anim_error.h"
#include "codec.h"
#include "connection.h"
#include "crowd.h"
#include "log.h"
#include "quantize.h"
#include "server.h"
#include "stream.h"

#define MAX_SUBSCRIPTIONS 64

static uint64_t wall_clock_us(void) {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  return (uint64_t)now.tv_sec * 1000000u + (uint64_t)now.tv_nsec / 1000u;
}

static void subscription_free(srv_subscription_t *s) {
  free(s->ids), free(s->gone), free(s->resolved), free(s->encoded), free(s->waiting);
  free(s);
}

void srv_streams_free(srv_streams_t *streams) {
  for (srv_subscription_t *s = streams->subscriptions, *next; s; s = next) {
    next = s->next;
    subscription_free(s);
  }
  streams->subscriptions = NULL;
  streams->count = 0;
}

int srv_streams_active(const srv_streams_t *streams) {
  for (const srv_subscription_t *s = streams->subscriptions; s; s = s->next)
    if (!s->paused) return 1;
  return 0;
}

static srv_subscription_t *find(srv_connection_t *c, uint64_t id) {
  for (srv_subscription_t *s = c->streams.subscriptions; s; s = s->next)
    if (s->id == id) return s;
  return NULL;
}

/* ---- requests ---------------------------------------------------------------------- */

int srv_stream_subscribe(srv_connection_t *c, const srv_subscribe_request_t *req, srv_response_t *out) {
  srv_crowd_t *crowd = &c->server->crowd;
  if (c->streams.count >= MAX_SUBSCRIPTIONS)
    return srv_response_fail(out, ANIM_ELIMIT, "at most %d subscriptions per connection", MAX_SUBSCRIPTIONS);
  if (!req->owned && req->nids == 0)
    return srv_response_fail(out, ANIM_EINVAL, "subscribe: name characters or set owned");
  uint32_t bones = 0;
  for (int i = 0; i < req->nids; i++) {
    srv_actor_t *a = srv_crowd_find(crowd, req->ids[i]);
    if (!a) return srv_response_fail(out, ANIM_ENOTFOUND, "characters[%d]: no character %llu", i,
                                      (unsigned long long)req->ids[i]);
    if (!bones) bones = (uint32_t)a->entry->db.nbones;
  }
  if (!bones && req->owned) {
    uint32_t cursor;
    for (srv_actor_t *a = srv_crowd_first(crowd, &cursor); a && !bones; a = srv_crowd_next(crowd, &cursor))
      if (a->owner == c->id) bones = (uint32_t)a->entry->db.nbones;
  }
  srv_subscription_t *s = calloc(1, sizeof *s);
  if (!s || (req->nids && !(s->ids = malloc((size_t)req->nids * sizeof *s->ids)))) {
    free(s);
    return srv_response_fail(out, ANIM_ENOMEM, "out of memory");
  }
  if (req->nids) memcpy(s->ids, req->ids, (size_t)req->nids * sizeof *s->ids);
  s->nids = req->nids;
  s->owned = req->owned;
  s->rate_divisor = req->rate_divisor;
  s->encoding = req->encoding;
  s->global_positions = req->global_positions;
  s->rotations_only = req->rotations_only;
  s->id = ++c->server->next_subscription_id;
  s->next = c->streams.subscriptions;
  c->streams.subscriptions = s;
  c->streams.count++;
  out->body.subscribe.subscription = s->id;
  out->body.subscribe.tick_rate = (float)c->server->config.tick_rate;
  out->body.subscribe.bones = bones;
  return 0;
}

int srv_stream_update(srv_connection_t *c, const srv_subscription_request_t *req, srv_response_t *out) {
  srv_subscription_t *s = find(c, req->subscription);
  if (!s) return srv_response_fail(out, ANIM_ENOTFOUND, "no subscription %llu on this connection",
                                    (unsigned long long)req->subscription);
  s->rate_divisor = req->rate_divisor;
  s->encoding = req->encoding;
  s->paused = req->paused;
  out->body.subscription = s->id;
  return 0;
}

int srv_stream_unsubscribe(srv_connection_t *c, const srv_subscription_request_t *req, srv_response_t *out) {
  for (srv_subscription_t **p = &c->streams.subscriptions; *p; p = &(*p)->next) {
    if ((*p)->id != req->subscription) continue;
    srv_subscription_t *s = *p;
    *p = s->next;
    c->streams.count--;
    out->body.subscription = s->id;
    subscription_free(s);
    return 0;
  }
  return srv_response_fail(out, ANIM_ENOTFOUND, "no subscription %llu on this connection",
                            (unsigned long long)req->subscription);
}

/* ---- the tick: what to record, whom to send ------------------------------------------ */

static uint32_t want_of(const srv_subscription_t *s) {
  return (s->encoding == SRV_ENCODING_QUANTIZED ? SRV_WANT_QUANTIZED : 0u) | (s->global_positions ? SRV_WANT_GLOBAL : 0u);
}

/* Resolves the named characters on the loop, so the encoding job never reads
 * the id table; names found gone are reported once, then forgotten. */
static void resolve(srv_crowd_t *crowd, srv_subscription_t *s) {
  if (!s->resolved && s->nids && !(s->resolved = malloc((size_t)s->nids * sizeof *s->resolved))) {
    s->fires = 0;
    return;
  }
  s->nresolved = 0;
  int kept = 0;
  for (int i = 0; i < s->nids; i++) {
    srv_actor_t *a = srv_crowd_find(crowd, s->ids[i]);
    if (a) {
      s->resolved[s->nresolved++] = a;
      a->want |= want_of(s);
      s->ids[kept++] = s->ids[i];
    } else {
      uint64_t *gone = realloc(s->gone, (size_t)(s->ngone + 1) * sizeof *gone);
      if (gone) s->gone = gone, s->gone[s->ngone++] = s->ids[i];
    }
  }
  s->nids = kept;
}

int srv_streams_prepare_tick(srv_crowd_t *crowd, uint64_t tick) {
  for (uint32_t i = 0; i < crowd->ntick_actors; i++) crowd->tick_actors[i]->want = 0;
  int connections = 0;
  for (srv_connection_t *c = crowd->server->connections; c; c = c->next) {
    c->streams.owned_want = 0;
    c->streams.firing = 0;
    if (c->closing) continue;
    for (srv_subscription_t *s = c->streams.subscriptions; s; s = s->next) {
      s->fires = !s->paused && tick % s->rate_divisor == 0;
      if (!s->fires) continue;
      if (s->owned) c->streams.owned_want |= want_of(s);
      resolve(crowd, s);
      c->streams.firing += s->fires;
    }
    connections += c->streams.firing > 0;
  }
  /* Owned subscriptions: one pass over the crowd, through each owner's mask. */
  for (srv_connection_t *c = crowd->server->connections; c; c = c->next) {
    if (!c->streams.owned_want) continue;
    for (uint32_t i = 0; i < crowd->ntick_actors; i++)
      if (crowd->tick_actors[i]->owner == c->id) crowd->tick_actors[i]->want |= c->streams.owned_want;
  }
  return connections;
}

/* ---- encoding (pool thread) ---------------------------------------------------------- */

static void pose_of(const srv_subscription_t *s, const srv_actor_t *a, srv_stream_pose_t *out) {
  const anim_controller_t *c = &a->character;
  int n = c->db->nbones;
  memset(out, 0, sizeof *out);
  out->character = a->id;
  out->frame = (uint32_t)c->frame;
  out->contacts = a->contacts;
  out->transition = c->transitioned;
  if (s->encoding == SRV_ENCODING_QUANTIZED) {
    out->quantized = a->quantized;
    out->quantized_len = anim_pose_quantized_size(n, s->rotations_only); /* a prefix of the full record */
  } else {
    out->positions = (const float *)c->pose_positions;
    out->npositions = s->rotations_only ? 3 : 3 * (size_t)n;
    out->rotations = (const float *)c->pose_rotations;
    out->nrotations = 4 * (size_t)n;
  }
  if (s->global_positions) {
    out->global_positions = (const float *)c->global_positions;
    out->nglobal = 3 * (size_t)n;
  }
}

static void encode_subscription(srv_connection_t *c, const srv_crowd_t *crowd, srv_subscription_t *s,
                                uint64_t tick, double dt) {
  size_t capacity = (size_t)s->nresolved + (s->owned ? crowd->ntick_actors : 0);
  srv_stream_pose_t *poses = malloc((capacity ? capacity : 1) * sizeof *poses);
  if (!poses) return;
  int n = 0;
  for (int i = 0; i < s->nresolved; i++) pose_of(s, s->resolved[i], &poses[n++]);
  if (s->owned)
    for (uint32_t i = 0; i < crowd->ntick_actors; i++)
      if (crowd->tick_actors[i]->owner == c->id) pose_of(s, crowd->tick_actors[i], &poses[n++]);
  srv_stream_frame_t frame = {s->id, tick, wall_clock_us(), s->dropped, (int)s->encoding, (float)dt,
                               poses, n, s->gone, s->ngone};
  if (srv_codec_encode_stream(&frame, &s->encoded, &s->encoded_len) != 0) s->encoded = NULL;
  s->encoded_poses = n;
  free(poses);
}

void srv_streams_encode(srv_connection_t *c, const srv_crowd_t *crowd, uint64_t tick, double dt) {
  for (srv_subscription_t *s = c->streams.subscriptions; s; s = s->next)
    if (s->fires) encode_subscription(c, crowd, s, tick, dt);
}

/* ---- delivery (loop thread) ------------------------------------------------------------ */

/* Over the soft limit for too long: the subscriber is not keeping up at all. */
static int too_slow(srv_connection_t *c) {
  const srv_config_t *config = &c->server->config;
  if (c->queued_bytes <= config->stream_soft_limit) {
    c->streams.over_soft_since_ns = 0;
    return 0;
  }
  uint64_t now = srv_scheduler_now_ns();
  if (!c->streams.over_soft_since_ns) c->streams.over_soft_since_ns = now;
  return (double)(now - c->streams.over_soft_since_ns) * 1e-9 > config->stream_soft_seconds;
}

static void send_frame(srv_connection_t *c, uint8_t *frame, size_t len) {
  c->server->stats.frames_sent++;
  c->server->stats.stream_bytes += len;
  srv_connection_write(c, frame, len);
}

void srv_streams_deliver(srv_connection_t *c) {
  int slow = too_slow(c);
  for (srv_subscription_t *s = c->streams.subscriptions; s; s = s->next) {
    if (!s->fires) continue;
    s->fires = 0;
    if (s->ngone && s->encoded) { /* reported in this frame */
      free(s->gone);
      s->gone = NULL;
      s->ngone = 0;
    }
    if (!s->encoded) continue;
    uint8_t *frame = s->encoded;
    size_t len = s->encoded_len;
    s->encoded = NULL;
    c->server->stats.poses_sent += (uint64_t)s->encoded_poses;
    if (c->queued_bytes > c->server->config.stream_soft_limit) {
      /* Latest wins: the frame still waiting is replaced, never queued behind. */
      if (s->waiting) {
        free(s->waiting);
        s->dropped++;
        c->server->stats.frames_dropped++;
      }
      s->waiting = frame;
      s->waiting_len = len;
    } else {
      send_frame(c, frame, len);
    }
    if (c->closing) return;
  }
  if (slow) {
    c->server->stats.slow_subscribers_closed++;
    srv_log(SRV_LOG_WARN, "connection %llu: over the stream soft limit for %g s, closing",
             (unsigned long long)c->id, c->server->config.stream_soft_seconds);
    srv_connection_close(c, "slow subscriber");
  }
}

void srv_streams_on_drain(srv_connection_t *c) {
  for (srv_subscription_t *s = c->streams.subscriptions; s && !c->closing; s = s->next) {
    if (!s->waiting || c->queued_bytes > c->server->config.stream_soft_limit) continue;
    uint8_t *frame = s->waiting;
    s->waiting = NULL;
    send_frame(c, frame, s->waiting_len);
  }
}
