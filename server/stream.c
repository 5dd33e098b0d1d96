/* stream.c: subscriptions, stream frames and latest-wins backpressure (see stream.h). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "anim_error.h"
#include "log.h"
#include "owner_counts.h"
#include "pose/quantize.h"
#include "stream.h"

static uint64_t wall_clock_us(void) {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  return (uint64_t)now.tv_sec * 1000000u + (uint64_t)now.tv_nsec / 1000u;
}

static void subscription_free(srv_subscription_t *s) {
  for (int i = 0; i < SRV_SUBSCRIPTION_BUFFERS; i++) srv_buffer_release(s->buffers[i]);
  srv_stream_scratch_free(&s->scratch);
  srv_aoi_view_free(s->view);
  srv_replica_records_free(&s->replica);
  free(s->ids), free(s->gone), free(s->resolved), free(s->poses);
  free(s);
}

/* ---- the subscriber and the hub's list ------------------------------------------------ */

void srv_streams_init(srv_streams_t *hub, uv_loop_t *loop, const srv_config_t *config, srv_counters_t *counters,
                      srv_crowd_t *crowd) {
  memset(hub, 0, sizeof *hub);
  hub->loop = loop;
  hub->config = config;
  hub->counters = counters;
  hub->crowd = crowd;
}

void srv_subscriber_init(srv_subscriber_t *sub, srv_streams_t *hub, srv_connection_t *connection, uint64_t owner) {
  memset(sub, 0, sizeof *sub);
  sub->hub = hub;
  sub->connection = connection;
  sub->owner = owner;
}

static void list_add(srv_subscriber_t *sub) {
  if (sub->listed) return;
  srv_streams_t *hub = sub->hub;
  sub->prev = NULL;
  sub->next = hub->subscribers;
  if (hub->subscribers) hub->subscribers->prev = sub;
  hub->subscribers = sub;
  sub->listed = 1;
}

static void list_remove(srv_subscriber_t *sub) {
  if (!sub->listed) return;
  srv_streams_t *hub = sub->hub;
  if (sub->prev) sub->prev->next = sub->next;
  else hub->subscribers = sub->next;
  if (sub->next) sub->next->prev = sub->prev;
  sub->listed = 0;
  if (!hub->subscribers) { /* the last one: the hub keeps nothing (the hub has no close of its own) */
    free(hub->owners);
    hub->owners = NULL;
    hub->owners_capacity = 0;
    srv_aoi_grid_free(&hub->grid);
  }
}

static void free_subscriptions(srv_subscriber_t *sub) {
  for (srv_subscription_t *s = sub->subscriptions, *next; s; s = next) {
    next = s->next;
    subscription_free(s);
  }
  sub->subscriptions = NULL;
  sub->count = 0;
  free(sub->owned), free(sub->chunks_needed);
  sub->owned = NULL, sub->chunks_needed = NULL;
  sub->nowned = sub->owned_capacity = 0;
  sub->chunks_words = 0;
}

void srv_subscriber_close(srv_subscriber_t *sub) {
  sub->closed = 1;
  list_remove(sub);
  if (!sub->encoding) free_subscriptions(sub); /* else after the job */
}

int srv_subscriber_active(const srv_subscriber_t *sub) {
  for (const srv_subscription_t *s = sub->subscriptions; s; s = s->next)
    if (!s->paused) return 1;
  return 0;
}

static srv_subscription_t *find(srv_subscriber_t *sub, uint64_t id) {
  for (srv_subscription_t *s = sub->subscriptions; s; s = s->next)
    if (s->id == id) return s;
  return NULL;
}

/* ---- memory held for the connection -------------------------------------------------- */

/* Memory: buffers only the subscription holds (waiting, or free for reuse)
 * and the encoding scratch; buffers on the wire are the connection's queued
 * bytes. Pending: the waiting frames. */
static void update_held(srv_subscriber_t *sub) {
  /* While a job encodes, its target buffers may be moving (growing): the
   * figure is brought up to date when the job's frames are delivered. */
  if (sub->closed || sub->encoding || !srv_connection_open(sub->connection)) return;
  size_t memory = 0, pending = 0;
  for (const srv_subscription_t *s = sub->subscriptions; s; s = s->next) {
    for (int i = 0; i < SRV_SUBSCRIPTION_BUFFERS; i++)
      if (s->buffers[i] && s->buffers[i]->refs == 1) memory += srv_buffer_footprint(s->buffers[i]);
    memory += s->poses_capacity * sizeof *s->poses + srv_stream_scratch_bytes(&s->scratch) + srv_replica_bytes(&s->replica);
    if (s->view) memory += srv_aoi_view_bytes(s->view);
    if (s->waiting) pending += s->waiting->len;
  }
  memory += sub->owned_capacity * sizeof *sub->owned + (size_t)sub->chunks_words * sizeof *sub->chunks_needed;
  srv_connection_set_held(sub->connection, pending, memory);
}

/* ---- requests ---------------------------------------------------------------------- */

static int compare_ids(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* Copies ids to out without repeats, in their order (a subscription is a
 * set: a character named twice was sent twice in every frame). Returns the
 * count, or -1 out of memory. */
static int unique_ids(const uint64_t *ids, int n, uint64_t *out) {
  if (n < 2) {
    if (n) out[0] = ids[0];
    return n;
  }
  uint64_t *sorted = malloc((size_t)n * sizeof *sorted);
  unsigned char *taken = calloc((size_t)n, 1);
  if (!sorted || !taken) return free(sorted), free(taken), -1;
  memcpy(sorted, ids, (size_t)n * sizeof *sorted);
  qsort(sorted, (size_t)n, sizeof *sorted, compare_ids);
  int kept = 0;
  for (int i = 0; i < n; i++) {
    const uint64_t *hit = bsearch(&ids[i], sorted, (size_t)n, sizeof *sorted, compare_ids);
    size_t at = (size_t)(hit - sorted);
    while (at > 0 && sorted[at - 1] == ids[i]) at--; /* the first of equal ids marks them all */
    if (!taken[at]) taken[at] = 1, out[kept++] = ids[i];
  }
  free(sorted), free(taken);
  return kept;
}


int srv_stream_subscribe(srv_subscriber_t *sub, const srv_subscribe_request_t *req, srv_response_t *out) {
  srv_crowd_t *crowd = sub->hub->crowd;
  if (sub->count >= SRV_MAX_SUBSCRIPTIONS)
    return srv_response_fail(out, ANIM_ELIMIT, "subscribe: this connection has %d subscriptions, at most %d",
                             sub->count, SRV_MAX_SUBSCRIPTIONS);
  uint32_t bones = 0;
  float x = req->region.x, z = req->region.z;
  if (req->has_region && req->region.follow) {
    srv_actor_t *a = srv_crowd_find(crowd, req->region.follow);
    if (!a)
      return srv_response_fail(out, ANIM_ENOTFOUND, "subscribe.region.follow = %llu: no such character",
                               (unsigned long long)req->region.follow);
    if (a->owner != sub->owner)
      return srv_response_fail(out, ANIM_EPERM,
                               "subscribe.region.follow = %llu: not this connection's character (a region follows "
                               "only the caller's own)", (unsigned long long)req->region.follow);
    x = a->pose.positions[0].x, z = a->pose.positions[0].z;
    bones = (uint32_t)a->pose.nbones;
  }
  for (int i = 0; i < req->nids; i++) {
    srv_actor_t *a = srv_crowd_find(crowd, req->ids[i]);
    if (!a)
      return srv_response_fail(out, ANIM_ENOTFOUND, "subscribe.characters[%d] = %llu: no such character", i,
                               (unsigned long long)req->ids[i]);
    if (!bones) bones = (uint32_t)a->pose.nbones;
  }
  if (!bones && req->owned) {
    uint32_t cursor;
    for (srv_actor_t *a = srv_crowd_first(crowd, &cursor); a && !bones; a = srv_crowd_next(crowd, &cursor))
      if (a->owner == sub->owner) bones = (uint32_t)a->pose.nbones;
  }
  srv_subscription_t *s = calloc(1, sizeof *s);
  if (!s || (req->nids && (!(s->ids = malloc((size_t)req->nids * sizeof *s->ids)) ||
                           !(s->resolved = malloc((size_t)req->nids * sizeof *s->resolved)))) ||
      (req->has_region && !(s->view = srv_aoi_view_create(&req->region, x, z)))) {
    if (s) free(s->ids), free(s->resolved), free(s);
    return srv_response_fail(out, ANIM_ENOMEM, "out of memory");
  }
  s->nids = unique_ids(req->ids, req->nids, s->ids);
  if (s->nids < 0) {
    free(s->ids), free(s->resolved), free(s);
    return srv_response_fail(out, ANIM_ENOMEM, "out of memory");
  }
  s->owned = req->owned;
  s->rate_divisor = s->view ? 1 : req->rate_divisor; /* a region's bands set its rates */
  s->encoding = req->encoding;
  s->replica_resync = 1; /* the client holds no state yet */
  if (s->view && s->encoding == SRV_ENCODING_REPLICATED) srv_replica_keep_all(crowd);
  if (s->encoding == SRV_ENCODING_REPLICATED) srv_replica_size_for(&s->replica, crowd, s->view);
  s->global_positions = req->global_positions;
  s->rotations_only = req->rotations_only;
  s->id = ++sub->hub->next_subscription_id;
  s->next = sub->subscriptions;
  sub->subscriptions = s;
  sub->count++;
  list_add(sub);
  srv_crowd_wake(crowd);
  out->body.subscribe.subscription = s->id;
  out->body.subscribe.tick_rate = (float)sub->hub->config->tick_rate;
  out->body.subscribe.bones = bones;
  return 0;
}

int srv_stream_update(srv_subscriber_t *sub, const srv_update_subscription_request_t *req, srv_response_t *out) {
  srv_subscription_t *s = find(sub, req->subscription);
  if (!s)
    return srv_response_fail(out, ANIM_ENOTFOUND, "update_subscription.subscription = %llu: none on this connection",
                             (unsigned long long)req->subscription);
  if (s->view && req->rate_divisor > 1)
    return srv_response_fail(out, ANIM_EINVAL,
                             "update_subscription.rate_divisor = %u: subscription %llu is a region's, whose bands set "
                             "its rates (0 or 1 here)", req->rate_divisor, (unsigned long long)s->id);
  s->rate_divisor = s->view ? 1 : req->rate_divisor;
  if (req->encoding != s->encoding) s->replica_resync = 1;
  if (s->view && req->encoding == SRV_ENCODING_REPLICATED) srv_replica_keep_all(sub->hub->crowd);
  s->encoding = req->encoding;
  if (s->encoding == SRV_ENCODING_REPLICATED) srv_replica_size_for(&s->replica, sub->hub->crowd, s->view);
  s->paused = req->paused;
  out->body.update_subscription.subscription = s->id;
  if (!s->paused) srv_crowd_wake(sub->hub->crowd);
  return 0;
}

int srv_stream_unsubscribe(srv_subscriber_t *sub, uint64_t subscription, srv_response_t *out) {
  for (srv_subscription_t **p = &sub->subscriptions; *p; p = &(*p)->next) {
    if ((*p)->id != subscription) continue;
    srv_subscription_t *s = *p;
    *p = s->next;
    sub->count--;
    out->body.unsubscribe.subscription = s->id;
    subscription_free(s);
    if (sub->count == 0) list_remove(sub);
    update_held(sub);
    return 0;
  }
  return srv_response_fail(out, ANIM_ENOTFOUND, "unsubscribe.subscription = %llu: none on this connection",
                           (unsigned long long)subscription);
}

/* ---- the tick: who fires, what each record must hold ------------------------------------ */

/* What a's record must hold for s (a replicated subscription sends a
 * quantized pose only of a character it cannot replicate). */
static uint32_t want_of(const srv_subscription_t *s, const srv_actor_t *a) {
  int quantized = s->encoding == SRV_ENCODING_QUANTIZED ||
                  (s->encoding == SRV_ENCODING_REPLICATED && a && !srv_replica_of(a));
  return (quantized ? SRV_WANT_QUANTIZED : 0u) | (s->global_positions ? SRV_WANT_GLOBAL : 0u);
}

/* An upper bound of the bytes one character's pose takes in s's frames. */
static size_t pose_bytes(const srv_subscription_t *s, const srv_actor_t *a) {
  size_t n = (size_t)a->pose.nbones, floats = s->global_positions ? 3 * n : 0;
  size_t bytes = 48; /* ids, frame, contacts, tags and lengths */
  if (s->encoding == SRV_ENCODING_REPLICATED && srv_replica_of(a)) return srv_replica_bound(a, s->replica_resync);
  if (s->encoding != SRV_ENCODING_FLOAT) bytes += anim_pose_quantized_size((int)n, s->rotations_only);
  else floats += (s->rotations_only ? 3 : 3 * n) + 4 * n;
  /* a machine's state path: index, time and, when it changed, name per level */
  if (a->pose.depth) bytes += 8 + ANIM_SM_MAX_DEPTH * (6 + 5 + 2 + ANIM_NAME_MAX); /* it may deepen by the next tick */
  bytes += 3; /* a physical character's state (field 140: two tag bytes and its value) */
  return bytes + 4 * floats;
}

static int note_gone(srv_subscription_t *s, uint64_t id) {
  uint64_t *gone = realloc(s->gone, (size_t)(s->ngone + 1) * sizeof *gone);
  if (!gone) return ANIM_ENOMEM;
  s->gone = gone;
  s->gone[s->ngone++] = id;
  return 0;
}

/* Resolves the named characters on the loop, so the encoding job never reads
 * the id table; names found gone are reported once, then forgotten. Returns
 * the frame's estimated bytes from them. */
/* sub waits for a's chunk before its frames are encoded. */
static void need_chunk(srv_subscriber_t *sub, const srv_actor_t *a) {
  if (a->chunk < 0 || sub->waits_all_chunks) return; /* not ticking this tick, or waiting for them all */
  uint64_t bit = (uint64_t)1 << (a->chunk & 63), *word = &sub->chunks_needed[a->chunk >> 6];
  if (!(*word & bit)) *word |= bit, sub->chunks_left++;
}

static size_t resolve(srv_subscriber_t *sub, srv_subscription_t *s) {
  srv_crowd_t *crowd = sub->hub->crowd;
  size_t bytes = 64 + 10 * (size_t)s->ngone;
  int kept = 0;
  s->nresolved = 0;
  for (int i = 0; i < s->nids; i++) {
    srv_actor_t *a = srv_crowd_find(crowd, s->ids[i]);
    if (a && s->owned && a->owner == sub->owner) {
      s->ids[kept++] = s->ids[i]; /* in the frame as owned, not twice; still reported when gone */
    } else if (a) {
      s->resolved[s->nresolved++] = a;
      if (s->rate_divisor <= 1) a->lod_scale = 1; /* streamed at full rate: full detail */
      a->want |= want_of(s, a);
      need_chunk(sub, a);
      bytes += pose_bytes(s, a);
      s->ids[kept++] = s->ids[i];
    } else if (note_gone(s, s->ids[i]) == 0) {
      bytes += 10;
    } else {
      s->ids[kept++] = s->ids[i]; /* reported next time */
    }
  }
  s->nids = kept;
  return bytes;
}

/* Over the stream soft limit for too long, or over it while the server is out of output memory. */
static const char *too_slow(srv_subscriber_t *sub) {
  const srv_config_t *config = sub->hub->config;
  srv_connection_t *c = sub->connection;
  if (srv_connection_output(c) <= config->stream_soft_limit) {
    sub->over_soft_since_ns = 0;
    return NULL;
  }
  if (config->max_output_memory && sub->hub->counters->output_bytes > config->max_output_memory)
    return "slow subscriber while the server's output is over max-output-memory";
  uint64_t now = srv_scheduler_now_ns();
  if (!sub->over_soft_since_ns) sub->over_soft_since_ns = now;
  if ((double)(now - sub->over_soft_since_ns) * 1e-9 > config->stream_soft_seconds) return "slow subscriber";
  return NULL;
}

/* The slot of a buffer of s that nobody but s holds and that is not waiting, or -1. */
static int free_buffer(const srv_subscription_t *s) {
  for (int i = 0; i < SRV_SUBSCRIPTION_BUFFERS; i++)
    if (s->buffers[i] && s->buffers[i]->refs == 1 && s->buffers[i] != s->waiting) return i;
  return -1;
}

/* A region subscription's members this tick, from the hub's grid: whether
 * its frame carries anything (poses due, arrivals, departures). A frame
 * still waiting is never replaced (it may tell of arrivals): none is made. */
static int region_fires(srv_subscriber_t *sub, srv_subscription_t *s, uint64_t tick) {
  srv_aoi_view_t *v = s->view;
  /* A replicated region's client steps its characters on the records:
   * a tick it does not get (paused, not encoded) makes the next frame
   * start over. A tick with nothing to say is not one: the skipped ticks
   * of a band go in its next record. */
  if (s->paused) return s->replica_resync = 1, 0;
  if (s->waiting) {
    s->dropped++;
    sub->hub->counters->frames_dropped++;
    return s->replica_resync = 1, 0;
  }
  if (v->region.follow) {
    const srv_actor_t *a = srv_crowd_find(sub->hub->crowd, v->region.follow);
    if (a) v->x = a->pose.positions[0].x, v->z = a->pose.positions[0].z;
    else v->region.follow = 0; /* gone: the region stays where it last was */
  }
  int replicated = s->encoding == SRV_ENCODING_REPLICATED;
  if (srv_aoi_view_update(v, &sub->hub->grid, tick, replicated && s->replica_resync) != 0)
    return s->replica_resync = 1, 0; /* out of memory: next tick tells */
  if (replicated && srv_replica_keep_members(sub->hub->crowd, v) != 0) return s->replica_resync = 1, 0;
  return v->ndue || v->nentered || v->nleft;
}

/* The frame's due poses, arrivals and departures: the chunks it waits for and its estimated bytes. */
static size_t resolve_region(srv_subscriber_t *sub, srv_subscription_t *s) {
  srv_aoi_view_t *v = s->view;
  size_t bytes = 64 + 10 * (size_t)v->nleft + (20 + ANIM_NAME_MAX) * (size_t)v->nentered;
  if (s->encoding == SRV_ENCODING_REPLICATED) srv_aoi_view_sort_due(s->view); /* ids rise through its records */
  for (uint32_t i = 0; i < v->ndue; i++) {
    srv_actor_t *a = v->due[i];
    a->want |= want_of(s, a);
    need_chunk(sub, a);
    bytes += s->encoding == SRV_ENCODING_REPLICATED && srv_replica_of(a)
                 ? srv_replica_bound_region(a, s->replica_resync, v->found[v->due_member[i]].sent)
                 : pose_bytes(s, a);
  }
  s->nresolved = (int)v->ndue;
  return bytes;
}

/* Decides whether s fires this tick; returns its frame's estimated bytes (0: it does not fire). */
static size_t prepare_subscription(srv_subscriber_t *sub, srv_subscription_t *s, uint64_t tick, int over_soft) {
  /* Its named characters all gone and reported, nothing owned: nothing is
   * left to send, and empty frames every tick would be noise. */
  int spent = !s->owned && s->nids == 0 && s->ngone == 0 && !s->view;
  s->fires = s->view ? region_fires(sub, s, tick) : !spent && !s->paused && tick % s->rate_divisor == 0;
  if (!s->fires) {
    if (!s->view) s->replica_resync = 1; /* a tick its client does not get (a region's says so itself) */
    return 0;
  }
  if (over_soft && s->waiting) { /* latest wins, without the work of encoding a frame to throw away */
    s->fires = 0;
    s->dropped++;
    sub->hub->counters->frames_dropped++;
    s->replica_resync = 1;
    return 0;
  }
  s->replica_keys = s->replica_resync;
  s->tick_encoding = s->encoding; /* what the job encodes, whatever an update says meanwhile */
  s->target_slot = free_buffer(s);
  s->target = s->target_slot >= 0 ? s->buffers[s->target_slot] : NULL;
  s->encode_failed = 0;
  if (s->owned) {
    sub->owned_firing = 1, sub->owned_want |= want_of(s, NULL); /* per character: add_owned */
    sub->owned_replicated |= s->encoding == SRV_ENCODING_REPLICATED;
    sub->owned_full_rate |= s->rate_divisor <= 1;
  }
  sub->firing++;
  size_t bytes = s->view ? resolve_region(sub, s) : resolve(sub, s);
  s->replica_resync = 0; /* after resolve, whose bounds read it */
  return bytes;
}

/* ---- owned subscriptions: one pass over the snapshot for every subscriber ---------------- */

/* hub->owners: the subscribers whose owned subscriptions fire this tick, by
 * owner (an open-addressing table at most half full, rebuilt every tick,
 * its array kept). 0, or ANIM_ENOMEM. */
static int index_owners(srv_streams_t *hub, uint32_t n) {
  if (2 * n > hub->owners_capacity) {
    uint32_t capacity = hub->owners_capacity ? hub->owners_capacity : 16;
    while (capacity < 2 * n) capacity *= 2;
    srv_subscriber_t **grown = realloc(hub->owners, capacity * sizeof *grown);
    if (!grown) return ANIM_ENOMEM;
    hub->owners = grown, hub->owners_capacity = capacity;
  }
  uint32_t mask = hub->owners_capacity - 1;
  memset(hub->owners, 0, hub->owners_capacity * sizeof *hub->owners);
  for (srv_subscriber_t *sub = hub->subscribers; sub; sub = sub->next) {
    if (!sub->owned_firing) continue;
    uint32_t slot = srv_owner_home(sub->owner, mask);
    while (hub->owners[slot]) slot = (slot + 1) & mask;
    hub->owners[slot] = sub;
  }
  return 0;
}

static srv_subscriber_t *subscriber_of(const srv_streams_t *hub, uint64_t owner) {
  uint32_t mask = hub->owners_capacity - 1;
  for (uint32_t slot = srv_owner_home(owner, mask); hub->owners[slot]; slot = (slot + 1) & mask)
    if (hub->owners[slot]->owner == owner) return hub->owners[slot];
  return NULL;
}

/* a, owned by sub, goes into its owned subscriptions' frames. */
static void add_owned(srv_subscriber_t *sub, srv_actor_t *a) {
  if (sub->owned_failed) return;
  if (sub->nowned == sub->owned_capacity) {
    size_t capacity = sub->owned_capacity ? 2 * sub->owned_capacity : 64;
    srv_actor_t **grown = realloc(sub->owned, capacity * sizeof *grown);
    if (!grown) {
      sub->owned_failed = 1; /* the owned subscriptions do not fire this tick */
      return;
    }
    sub->owned = grown, sub->owned_capacity = capacity;
  }
  sub->owned[sub->nowned++] = a;
  need_chunk(sub, a);
  if (sub->owned_full_rate) a->lod_scale = 1;
  a->want |= sub->owned_want | (sub->owned_replicated && !srv_replica_of(a) ? SRV_WANT_QUANTIZED : 0u);
  for (srv_subscription_t *s = sub->subscriptions; s; s = s->next)
    if (s->fires && s->owned) sub->owned_bytes += pose_bytes(s, a);
}

/* Hands every character of the snapshot to its owner's subscriber, when an
 * owned subscription of that subscriber fires: one pass over the crowd a
 * tick, whatever the number of subscribers (a pass per subscriber made a
 * tick O(subscribers x characters) on the loop). */
static void collect_owned(srv_streams_t *hub) {
  uint32_t n = 0;
  for (srv_subscriber_t *sub = hub->subscribers; sub; sub = sub->next) n += sub->owned_firing != 0;
  if (!n) return;
  if (index_owners(hub, n) != 0) {
    for (srv_subscriber_t *sub = hub->subscribers; sub; sub = sub->next) sub->owned_failed |= sub->owned_firing;
    return;
  }
  const srv_crowd_t *crowd = hub->crowd;
  for (uint32_t i = 0; i < crowd->ntick_actors; i++) {
    srv_actor_t *a = crowd->tick_actors[i];
    srv_subscriber_t *sub = subscriber_of(hub, a->owner);
    if (sub) add_owned(sub, a);
  }
}

/* Room for every pose of this tick's frame (named + owned), on the loop. */
static int reserve_poses(srv_subscription_t *s, size_t owned) {
  size_t n = (size_t)s->nresolved + (s->owned ? owned : 0);
  if (n <= s->poses_capacity) return 0;
  size_t capacity = n + n / 2 + 8;
  srv_stream_pose_t *poses = realloc(s->poses, capacity * sizeof *poses);
  if (!poses) return ANIM_ENOMEM;
  s->poses = poses;
  s->poses_capacity = capacity;
  return 0;
}

/* Before the owned characters are collected: closes a subscriber too slow,
 * decides which subscriptions fire and resolves their named characters. */
static void prepare_subscriber(srv_subscriber_t *sub, uint64_t tick) {
  srv_connection_t *c = sub->connection;
  const srv_config_t *config = sub->hub->config;
  sub->owned_want = 0;
  sub->owned_replicated = 0;
  sub->owned_full_rate = 0;
  sub->owned_firing = 0;
  sub->owned_failed = 0;
  sub->nowned = 0;
  sub->frame_bytes = sub->owned_bytes = 0;
  sub->firing = 0;
  sub->queued = 0;
  sub->chunks_left = 0;
  sub->waits_all_chunks = 0;
  if (!srv_connection_open(c)) return;
  int words = (sub->hub->crowd->nchunks + 63) / 64;
  if (words > sub->chunks_words) {
    uint64_t *grown = realloc(sub->chunks_needed, (size_t)words * sizeof *grown);
    if (grown) sub->chunks_needed = grown, sub->chunks_words = words;
  }
  if (words && words <= sub->chunks_words) memset(sub->chunks_needed, 0, (size_t)words * sizeof *sub->chunks_needed);
  else sub->waits_all_chunks = 1; /* queued by srv_streams_run, once every chunk is ticked */
  const char *slow = too_slow(sub);
  if (slow) {
    sub->hub->counters->slow_subscribers_closed++;
    srv_log(SRV_LOG_WARN, "connection %llu: %s, closing", (unsigned long long)c->id, slow);
    srv_connection_close(c, slow); /* unlists sub */
    return;
  }
  int over_soft = srv_connection_queued(c) > config->stream_soft_limit;
  for (srv_subscription_t *s = sub->subscriptions; s; s = s->next)
    sub->frame_bytes += prepare_subscription(sub, s, tick, over_soft);
}

/* After: the output limit for this tick's frames, and room for their poses. */
static void finish_subscriber(srv_subscriber_t *sub) {
  srv_connection_t *c = sub->connection;
  const srv_config_t *config = sub->hub->config;
  if (sub->owned_failed) { /* out of memory: the owned subscriptions' frames are lost this tick */
    for (srv_subscription_t *s = sub->subscriptions; s; s = s->next)
      if (s->fires && s->owned) s->fires = 0, sub->firing--, s->replica_resync = 1;
    sub->nowned = 0, sub->owned_bytes = 0;
  }
  sub->frame_bytes += sub->owned_bytes;
  if (sub->firing && srv_connection_memory(c) + sub->frame_bytes > config->output_hard_limit) {
    srv_log(SRV_LOG_WARN, "connection %llu: one tick of its stream frames (%zu bytes) passes the output hard limit",
            (unsigned long long)c->id, sub->frame_bytes);
    srv_connection_close_over_limit(c, "stream frames over the output hard limit"); /* counted as slow (server.c) */
    return;
  }
  for (srv_subscription_t *s = sub->subscriptions; s; s = s->next)
    if (s->fires && reserve_poses(s, sub->nowned) != 0) s->fires = 0, sub->firing--, s->replica_resync = 1;
}

/* The grid, once for every region subscription, when one is active. */
static void index_regions(srv_streams_t *hub) {
  for (srv_subscriber_t *sub = hub->subscribers; sub; sub = sub->next)
    for (srv_subscription_t *s = sub->subscriptions; s; s = s->next)
      if (s->view && !s->paused) {
        if (srv_aoi_grid_build(&hub->grid, hub->crowd->tick_actors, hub->crowd->ntick_actors) != 0)
          srv_log(SRV_LOG_WARN, "tick %llu: out of memory for the region grid (regions see nobody this tick)",
                  (unsigned long long)hub->crowd->tick);
        return;
      }
}

void srv_streams_prepare(srv_streams_t *hub) {
  uint64_t tick = hub->crowd->tick;
  hub->simulating = 1;
  index_regions(hub);
  for (srv_subscriber_t *sub = hub->subscribers, *next; sub; sub = next) {
    next = sub->next; /* a slow subscriber is closed (and unlisted) here */
    prepare_subscriber(sub, tick);
  }
  collect_owned(hub);
  for (srv_subscriber_t *sub = hub->subscribers, *next; sub; sub = next) {
    next = sub->next; /* one over its output limit is closed (and unlisted) here */
    if (sub->firing) finish_subscriber(sub);
  }
}

int srv_streams_want_ticks(const srv_streams_t *hub) {
  for (const srv_subscriber_t *sub = hub->subscribers; sub; sub = sub->next)
    for (const srv_subscription_t *s = sub->subscriptions; s; s = s->next)
      if (!s->paused && (s->nids > 0 || s->ngone > 0 || (s->view && s->view->ntold > 0)))
        return 1; /* a gone to report, or region members to say left */
  return 0;
}

/* ---- encoding (pool thread) ------------------------------------------------------------- */

static void pose_of(const srv_subscription_t *s, const srv_actor_t *a, srv_stream_pose_t *out) {
  const srv_actor_pose_t *p = &a->pose;
  memset(out, 0, sizeof *out);
  out->character = a->id;
  out->frame = p->frame >= 0 ? (uint32_t)p->frame : 0;
  out->contacts = p->contacts;
  out->transition = p->transitioned;
  out->depth = p->depth;
  out->state_path = p->state_path, out->state_times = p->state_times;
  out->state_changed = p->state_changed, out->state_names = p->state_names;
  out->physics = p->physics;
  if (s->tick_encoding != SRV_ENCODING_FLOAT) { /* a replicated subscription's characters it cannot replicate too */
    out->quantized = a->quantized;
    out->quantized_len = anim_pose_quantized_size(p->nbones, s->rotations_only); /* a prefix of the full record */
  } else {
    out->positions = (const float *)p->positions;
    out->npositions = s->rotations_only ? 3 : 3 * (size_t)p->nbones;
    out->rotations = (const float *)p->rotations;
    out->nrotations = 4 * (size_t)p->nbones;
  }
  if (s->global_positions) {
    out->global_positions = (const float *)p->global_positions;
    out->nglobal = 3 * (size_t)p->nbones;
  }
}

/* a's pose, or in a replicated subscription its record when it has one. 0, or ANIM_ENOMEM. */
static int add_character(srv_subscription_t *s, const srv_actor_t *a, int *io_n) {
  const anim_controller_t *c = s->tick_encoding == SRV_ENCODING_REPLICATED ? srv_replica_of(a) : NULL;
  if (c) return srv_replica_append(&s->replica, a, c, s->replica_keys);
  pose_of(s, a, &s->poses[(*io_n)++]);
  return 0;
}

/* A region's due member i: its record (carrying the ticks its band
 * skipped) when replicated and it has one, else its pose. */
static int add_member(srv_subscription_t *s, uint32_t i, float dt, int *io_n) {
  srv_aoi_view_t *v = s->view;
  const srv_actor_t *a = v->due[i];
  const anim_controller_t *c = s->tick_encoding == SRV_ENCODING_REPLICATED ? srv_replica_of(a) : NULL;
  if (c) return srv_replica_append_region(&s->replica, a, c, s->replica_keys, &v->found[v->due_member[i]].sent, dt);
  pose_of(s, a, &s->poses[(*io_n)++]);
  return 0;
}

static void encode_subscription(const srv_subscriber_t *sub, const srv_crowd_t *crowd, srv_subscription_t *s) {
  int n = 0, rc = 0;
  srv_actor_t *const *named = s->resolved;
  if (s->tick_encoding == SRV_ENCODING_REPLICATED) srv_replica_begin(&s->replica, s->replica_keys, s->view != NULL);
  if (s->view)
    for (int i = 0; i < s->nresolved && !rc; i++) rc = add_member(s, (uint32_t)i, (float)crowd->tick_dt, &n);
  else
    for (int i = 0; i < s->nresolved && !rc; i++) rc = add_character(s, named[i], &n);
  if (s->owned)
    for (size_t i = 0; i < sub->nowned && !rc; i++) rc = add_character(s, sub->owned[i], &n);
  if (s->tick_encoding == SRV_ENCODING_REPLICATED && srv_replica_end(&s->replica) != 0) rc = ANIM_ENOMEM;
  srv_stream_frame_t frame = {s->id, crowd->tick, wall_clock_us(), s->dropped, (int)s->tick_encoding,
                              (float)crowd->tick_dt, s->poses, n, s->gone, s->ngone, NULL, 0, NULL, 0,
                              s->tick_encoding == SRV_ENCODING_REPLICATED ? s->replica.bytes : NULL,
                              s->tick_encoding == SRV_ENCODING_REPLICATED ? s->replica.len : 0};
  if (s->view) {
    frame.entered = s->view->entered, frame.nentered = (int)s->view->nentered;
    frame.left = s->view->left, frame.nleft = (int)s->view->nleft;
  }
  s->encoded_poses = n;
  s->encode_failed = rc != 0 || srv_codec_encode_stream(&frame, &s->scratch, &s->target) != 0;
}

static srv_subscriber_t *encoding_subscriber(srv_lane_item_t *item) {
  return (srv_subscriber_t *)((char *)item - offsetof(srv_subscriber_t, encode));
}

static void encode_run(srv_lane_item_t *item) {
  srv_subscriber_t *sub = encoding_subscriber(item);
  for (srv_subscription_t *s = sub->subscriptions; s; s = s->next)
    if (s->fires) encode_subscription(sub, sub->hub->crowd, s);
}

/* ---- delivery (loop thread) ------------------------------------------------------------ */

static void send_frame(srv_subscriber_t *sub, srv_buffer_t *frame) {
  sub->hub->counters->frames_sent++;
  sub->hub->counters->stream_bytes += frame->len;
  srv_connection_write(sub->connection, srv_buffer_retain(frame));
}

/* Keeps this tick's frame among s's buffers: in the slot it was encoded
 * from (growing may have moved it), or, made by the job, in a free slot,
 * forgetting one on the wire if all are taken. */
static void adopt(srv_subscription_t *s, srv_buffer_t *buffer) {
  if (s->target_slot >= 0) {
    s->buffers[s->target_slot] = buffer;
    return;
  }
  int slot = -1;
  for (int i = 0; i < SRV_SUBSCRIPTION_BUFFERS; i++)
    if (!s->buffers[i] && slot < 0) slot = i;
  for (int i = 0; i < SRV_SUBSCRIPTION_BUFFERS && slot < 0; i++)
    if (s->buffers[i] != s->waiting) slot = i;
  srv_buffer_release(s->buffers[slot]); /* still on the wire: libuv's reference frees it */
  s->buffers[slot] = buffer;
}

static void deliver_subscription(srv_subscriber_t *sub, srv_subscription_t *s) {
  s->fires = 0;
  int replicated = s->tick_encoding == SRV_ENCODING_REPLICATED;
  if (!s->target) { /* out of memory: this tick's frame is lost */
    s->replica_resync = 1;
    return;
  }
  adopt(s, s->target);
  if (s->encode_failed) {
    s->target = NULL;
    s->replica_resync = 1;
    return;
  }
  if (replicated && s->waiting && srv_connection_queued(sub->connection) > sub->hub->config->stream_soft_limit) {
    /* A replica steps on every frame: the waiting one is kept and this one
     * skipped, and the next frame carries every state again. */
    s->target = NULL;
    s->dropped++;
    sub->hub->counters->frames_dropped++;
    s->replica_resync = 1;
    return;
  }
  if (s->view) srv_aoi_view_commit(s->view); /* its arrivals and departures are told */
  if (s->ngone) { /* reported in this frame */
    free(s->gone);
    s->gone = NULL;
    s->ngone = 0;
  }
  srv_buffer_t *frame = s->target;
  s->target = NULL;
  sub->hub->counters->poses_sent += (uint64_t)s->encoded_poses;
  if (srv_connection_queued(sub->connection) > sub->hub->config->stream_soft_limit) {
    /* Latest wins: the frame still waiting is replaced, never queued behind. */
    if (s->waiting) {
      s->dropped++;
      sub->hub->counters->frames_dropped++;
    }
    s->waiting = frame;
  } else {
    send_frame(sub, frame);
  }
}

static void deliver(srv_subscriber_t *sub) {
  srv_connection_cork(sub->connection); /* one write for every frame of this tick */
  for (srv_subscription_t *s = sub->subscriptions; s && srv_connection_open(sub->connection); s = s->next)
    if (s->fires) deliver_subscription(sub, s);
  srv_connection_uncork(sub->connection);
  update_held(sub);
}

void srv_subscriber_on_written(srv_subscriber_t *sub) {
  srv_connection_t *c = sub->connection;
  srv_connection_cork(c);
  for (srv_subscription_t *s = sub->subscriptions; s && srv_connection_open(c); s = s->next) {
    if (!s->waiting || srv_connection_queued(c) > sub->hub->config->stream_soft_limit) continue;
    srv_buffer_t *frame = s->waiting;
    s->waiting = NULL;
    send_frame(sub, frame);
  }
  srv_connection_uncork(c);
  update_held(sub);
}

static void encode_done(srv_lane_item_t *item) {
  srv_subscriber_t *sub = encoding_subscriber(item);
  srv_streams_t *hub = sub->hub;
  srv_connection_t *c = sub->connection;
  sub->encoding = 0;
  if (sub->closed) free_subscriptions(sub);
  else deliver(sub);
  srv_connection_release(c); /* may free the session, and sub with it */
  if (--hub->jobs_pending == 0 && !hub->simulating) srv_crowd_tick_release(hub->crowd);
}

static void queue_encoding(srv_streams_t *hub, srv_subscriber_t *sub) {
  sub->queued = 1;
  if (!srv_connection_open(sub->connection)) return;
  /* In the crowd's lane, behind the chunks still waiting there. */
  sub->encode = (srv_lane_item_t){encode_run, encode_done, NULL};
  if (srv_lane_push(&hub->crowd->lane, &sub->encode) != 0) return; /* frames lost this tick */
  sub->encoding = 1;
  srv_connection_hold(sub->connection);
  hub->jobs_pending++;
}

void srv_streams_chunk_simulated(srv_streams_t *hub, int chunk) {
  uint64_t bit = (uint64_t)1 << (chunk & 63);
  for (srv_subscriber_t *sub = hub->subscribers; sub; sub = sub->next) {
    if (!sub->firing || sub->queued || sub->waits_all_chunks || !(sub->chunks_needed[chunk >> 6] & bit)) continue;
    sub->chunks_needed[chunk >> 6] &= ~bit;
    if (--sub->chunks_left == 0) queue_encoding(hub, sub);
  }
}

void srv_streams_run(srv_streams_t *hub) {
  hub->simulating = 0;
  for (srv_subscriber_t *sub = hub->subscribers; sub; sub = sub->next)
    if (sub->firing && !sub->queued) queue_encoding(hub, sub); /* waited for every chunk, or needed none */
  if (hub->jobs_pending == 0) srv_crowd_tick_release(hub->crowd);
}
