/*
 * client.c: the animserver client library (see include/anim_client.h).
 *
 * One non-blocking socket; an output buffer flushed as the socket allows; the
 * pure frame reader of wire/ for input; a list of pending requests matched
 * by id. Blocking calls are the non-blocking ones plus a poll loop that runs
 * until their own response arrives. Bringing a lost connection back, when
 * asked, is reconnect.c's; this file only tears one down and takes a new one.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "anim_client.h"
#include "animserver.pb-c.h"
#include "client_internal.h"
#include "frame.h"

#define DEFAULT_CONNECT_TIMEOUT_MS 5000
#define DEFAULT_MAX_FRAME (64u << 20)

static uint64_t monotonic_us(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (uint64_t)now.tv_sec * 1000000u + (uint64_t)now.tv_nsec / 1000u;
}

uint64_t anim__monotonic_us(void) { return monotonic_us(); }

static int set_error(anim_client_t *client, int code, const char *message) {
  snprintf(client->last_error, sizeof client->last_error, "%s", message);
  return code;
}

int anim__client_set_error(anim_client_t *client, int code, const char *message) {
  return set_error(client, code, message);
}

const char *anim_client_last_error(const anim_client_t *client) { return client->last_error; }
int anim_client_fd(const anim_client_t *client) { return client->fd; }
int anim_client_wants_write(const anim_client_t *client) {
  /* A reconnection's connect in progress completes as POLLOUT. */
  return client->out_pos < client->out_len || client->reconnect.state == CONN_CONNECTING;
}
int anim_client_pending(const anim_client_t *client) { return client->npending; }

/* ---- connecting ---------------------------------------------------------------- */

static int wait_connected(int fd, int timeout_ms) {
  struct pollfd p = {fd, POLLOUT, 0};
  int n;
  do n = poll(&p, 1, timeout_ms);
  while (n < 0 && errno == EINTR);
  if (n == 0) return ANIM_ETIMEDOUT;
  int soerr = 0;
  socklen_t len = sizeof soerr;
  if (n < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) < 0 || soerr != 0) return ANIM_ECONNECT;
  return 0;
}

static int connect_one(const struct addrinfo *ai, int timeout_ms, int *out_fd) {
  int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
  if (fd < 0) return ANIM_ECONNECT;
  int rc = 0;
  if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
    rc = errno == EINPROGRESS ? wait_connected(fd, timeout_ms) : ANIM_ECONNECT;
  }
  if (rc != 0) {
    close(fd);
    return rc;
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  *out_fd = fd;
  return 0;
}

anim_client_t *anim_client_connect(const char *host, int port, const anim_client_options_t *options, int *out_err) {
  int dummy;
  if (!out_err) out_err = &dummy;
  if (!host || port <= 0 || port > 65535) {
    *out_err = ANIM_EINVAL;
    return NULL;
  }
  int timeout_ms = options && options->timeout_ms > 0 ? options->timeout_ms : DEFAULT_CONNECT_TIMEOUT_MS;
  uint32_t max_frame = options && options->max_frame_bytes ? options->max_frame_bytes : DEFAULT_MAX_FRAME;
  char service[16];
  snprintf(service, sizeof service, "%d", port);
  struct addrinfo hints = {0}, *list = NULL;
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  if (getaddrinfo(host, service, &hints, &list) != 0) {
    *out_err = ANIM_ECONNECT;
    return NULL;
  }
  int fd = -1, rc = ANIM_ECONNECT;
  for (struct addrinfo *ai = list; ai && fd < 0; ai = ai->ai_next) rc = connect_one(ai, timeout_ms, &fd);
  anim_client_t *client = fd >= 0 ? calloc(1, sizeof *client) : NULL;
  /* Reconnection needs every address the name gave, not only the one that answered. */
  if (client && anim__reconnect_init(client, options, list) != 0) {
    free(client);
    client = NULL;
  }
  freeaddrinfo(list);
  if (fd < 0) {
    *out_err = rc;
    return NULL;
  }
  if (!client) {
    close(fd);
    *out_err = ANIM_ENOMEM;
    return NULL;
  }
  client->fd = fd;
  client->next_id = 1;
  if (options && options->auth_token) snprintf(client->auth_token, sizeof client->auth_token, "%s", options->auth_token);
  anim_frame_reader_init(&client->reader, max_frame);
  *out_err = 0;
  return client;
}

/* ---- pending requests -------------------------------------------------------------- */

static pending_t *pending_take(anim_client_t *client, uint64_t id) {
  for (pending_t **p = &client->pending; *p; p = &(*p)->next) {
    if ((*p)->id == id) {
      pending_t *found = *p;
      *p = found->next;
      client->npending--;
      return found;
    }
  }
  return NULL;
}

/* Calls the callback of p with a failure status and no result. */
static void pending_fail(anim_client_t *client, pending_t *p, int status) { p->complete(client, p, status, NULL); }

static void fail_all_pending(anim_client_t *client, int status) {
  while (client->pending) {
    pending_t *p = client->pending;
    client->pending = p->next;
    client->npending--;
    pending_fail(client, p, status);
    free(p);
  }
}

void anim_client_close(anim_client_t *client) {
  if (!client) return;
  set_error(client, ANIM_ECLOSED, "client closed");
  fail_all_pending(client, ANIM_ECLOSED);
  anim__client_streams_free(client);
  if (client->fd >= 0) close(client->fd);
  anim__reconnect_free(client);
  anim_frame_reader_free(&client->reader);
  free(client->out);
  free(client);
}

void anim__client_drop_connection(anim_client_t *client, int status) {
  /* Refuse new requests first: callbacks below may try to send. */
  if (!client->broken) client->broken = status;
  if (client->fd >= 0) close(client->fd);
  client->fd = -1;
  client->out_pos = client->out_len = 0;
  size_t max_frame = client->reader.max_frame;
  anim_frame_reader_free(&client->reader);
  anim_frame_reader_init(&client->reader, max_frame);
  fail_all_pending(client, status);
  anim__client_streams_free(client);
}

void anim__client_attach(anim_client_t *client, int fd) {
  client->fd = fd;
  client->broken = 0;
  client->server_error = 0;
}

/* ---- output -------------------------------------------------------------------------- */

static int flush_output(anim_client_t *client) {
  while (client->out_pos < client->out_len) {
    ssize_t n = send(client->fd, client->out + client->out_pos, client->out_len - client->out_pos, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
      client->broken = ANIM_ECLOSED;
      return set_error(client, ANIM_ECLOSED, strerror(errno));
    }
    client->out_pos += (size_t)n;
  }
  client->out_pos = client->out_len = 0;
  return 0;
}

static int reserve_output(anim_client_t *client, size_t extra) {
  if (client->out_pos > 0 && client->out_pos == client->out_len) client->out_pos = client->out_len = 0;
  if (client->out_len + extra <= client->out_cap) return 0;
  size_t cap = client->out_cap ? client->out_cap : 4096;
  while (cap < client->out_len + extra) cap *= 2;
  uint8_t *grown = realloc(client->out, cap);
  if (!grown) return ANIM_ENOMEM;
  client->out = grown;
  client->out_cap = cap;
  return 0;
}

/* Frames and queues request, registers its pending entry, tries to flush. */
static int send_request(anim_client_t *client, Animserver__Request *request, pending_t *p, uint64_t *out_id) {
  if (client->broken) {
    free(p);
    return set_error(client, client->broken, "connection is no longer usable");
  }
  request->id = client->next_id++;
  size_t size = animserver__request__get_packed_size(request);
  if (reserve_output(client, size + ANIM_VARINT_MAX) != 0) {
    free(p);
    return set_error(client, ANIM_ENOMEM, "out of memory");
  }
  client->out_len += anim_varint_encode(size, client->out + client->out_len);
  animserver__request__pack(request, client->out + client->out_len);
  client->out_len += size;
  p->id = request->id;
  p->sent_us = monotonic_us();
  p->next = client->pending;
  client->pending = p;
  client->npending++;
  if (out_id) *out_id = p->id;
  flush_output(client);
  return 0;
}

static pending_t *pending_new(Animserver__Response__BodyCase expect, complete_fn complete, void (*cb)(void),
                              void *data);

int anim__client_send(anim_client_t *client, Animserver__Request *request, Animserver__Response__BodyCase expect,
                      complete_fn complete, void (*cb)(void), void *data, uint64_t *out_id) {
  pending_t *p = pending_new(expect, complete, cb, data);
  if (!p) return ANIM_ENOMEM;
  return send_request(client, request, p, out_id);
}

static pending_t *pending_new(Animserver__Response__BodyCase expect, complete_fn complete, void (*cb)(void),
                              void *data) {
  pending_t *p = calloc(1, sizeof *p);
  if (p) {
    p->expect = expect;
    p->complete = complete;
    p->cb = cb;
    p->data = data;
  }
  return p;
}

/* ---- completions: protobuf response -> plain C, then the caller's callback ---- */

static void copy_string(char *out, size_t size, const char *in) { snprintf(out, size, "%s", in ? in : ""); }

static void complete_hello(anim_client_t *client, pending_t *p, int status, const Animserver__Response *r) {
  anim_hello_cb cb = (anim_hello_cb)p->cb;
  if (status || !r) {
    if (cb) cb(client, p->id, status, NULL, p->data);
    return;
  }
  const Animserver__HelloResponse *h = r->hello;
  anim_hello_info_t info;
  memset(&info, 0, sizeof info);
  info.protocol_version = h->protocol_version;
  copy_string(info.server_version, sizeof info.server_version, h->server_version);
  for (size_t i = 0; i < h->n_capabilities && info.ncapabilities < ANIM_MAX_CAPABILITIES; i++)
    copy_string(info.capabilities[info.ncapabilities++], sizeof info.capabilities[0], h->capabilities[i]);
  if (h->limits) {
    info.max_frame_bytes = h->limits->max_frame_bytes;
    info.max_in_flight = h->limits->max_in_flight;
    info.max_batch = h->limits->max_batch;
    info.max_k = h->limits->max_k;
    info.output_soft_limit = h->limits->output_soft_limit_bytes;
    info.output_hard_limit = h->limits->output_hard_limit_bytes;
    info.max_characters = h->limits->max_characters;
    info.tick_rate = h->limits->tick_rate;
  }
  info.connection_id = h->connection_id;
  info.admin = h->admin;
  if (cb) cb(client, p->id, 0, &info, p->data);
}

static void complete_ping(anim_client_t *client, pending_t *p, int status, const Animserver__Response *r) {
  anim_ping_cb cb = (anim_ping_cb)p->cb;
  if (!cb) return;
  if (status || !r) {
    cb(client, p->id, status, NULL, p->data);
    return;
  }
  anim_ping_result_t result = {r->ping->payload.data, r->ping->payload.len, r->ping->server_time_us};
  cb(client, p->id, 0, &result, p->data);
}

static void summary_from(anim_db_summary_t *out, const Animserver__DatabaseSummary *m) {
  memset(out, 0, sizeof *out);
  if (!m) return;
  copy_string(out->name, sizeof out->name, m->name);
  out->version = m->version;
  out->frames = m->frames;
  out->bones = m->bones;
  out->frame_rate = m->frame_rate;
  out->feature_dims = m->feature_dims;
  out->ranges = m->ranges;
  out->memory_bytes = m->memory_bytes;
}

/* Internal callbacks pass the raw response to blocking callers. */
typedef void (*raw_cb)(anim_client_t *client, uint64_t id, int status, const Animserver__Response *r, void *data);

static void complete_raw(anim_client_t *client, pending_t *p, int status, const Animserver__Response *r) {
  raw_cb cb = (raw_cb)p->cb;
  if (cb) cb(client, p->id, status, r, p->data);
}

static float *copy_floats(const float *values, size_t n) {
  if (n == 0) return NULL;
  float *copy = malloc(n * sizeof *copy);
  if (copy) memcpy(copy, values, n * sizeof *copy);
  return copy;
}

static void pose_free_arrays(anim_pose_t *pose) {
  free((void *)pose->local_positions);
  free((void *)pose->local_rotations);
  free((void *)pose->local_velocities);
  free((void *)pose->local_angular_velocities);
  free((void *)pose->global_positions);
  free((void *)pose->global_rotations);
  free((void *)pose->global_velocities);
  free((void *)pose->global_angular_velocities);
  free((void *)pose->contacts);
}

static void pose_from(anim_pose_t *out, const Animserver__Pose *m) {
  memset(out, 0, sizeof *out);
  out->frame = m->frame;
  size_t n3 = m->n_local_positions ? m->n_local_positions : m->n_global_positions;
  out->nbones = (int)(n3 / 3);
  out->local_positions = copy_floats(m->local_positions, m->n_local_positions);
  out->local_rotations = copy_floats(m->local_rotations, m->n_local_rotations);
  out->local_velocities = copy_floats(m->local_velocities, m->n_local_velocities);
  out->local_angular_velocities = copy_floats(m->local_angular_velocities, m->n_local_angular_velocities);
  out->global_positions = copy_floats(m->global_positions, m->n_global_positions);
  out->global_rotations = copy_floats(m->global_rotations, m->n_global_rotations);
  out->global_velocities = copy_floats(m->global_velocities, m->n_global_velocities);
  out->global_angular_velocities = copy_floats(m->global_angular_velocities, m->n_global_angular_velocities);
  if (m->n_contacts) {
    uint8_t *contacts = malloc(m->n_contacts);
    for (size_t i = 0; contacts && i < m->n_contacts; i++) contacts[i] = m->contacts[i] ? 1 : 0;
    out->contacts = contacts;
    out->ncontacts = contacts ? (int)m->n_contacts : 0;
  }
}

void anim_pose_reply_free(anim_pose_reply_t *reply) {
  if (!reply) return;
  for (int i = 0; i < reply->nposes; i++) pose_free_arrays(&reply->poses[i]);
  free(reply->poses);
  free(reply);
}

static anim_pose_reply_t *pose_reply_from(const Animserver__PoseResponse *m) {
  anim_pose_reply_t *reply = calloc(1, sizeof *reply);
  if (!reply) return NULL;
  reply->database_version = m->database_version;
  reply->poses = calloc(m->n_poses + 1, sizeof *reply->poses);
  if (!reply->poses) {
    free(reply);
    return NULL;
  }
  for (size_t i = 0; i < m->n_poses; i++) pose_from(&reply->poses[reply->nposes++], m->poses[i]);
  return reply;
}

void anim_search_reply_free(anim_search_reply_t *reply) {
  if (!reply) return;
  for (int i = 0; i < reply->nresults; i++) {
    anim_result_t *r = &reply->results[i];
    for (int j = 0; j < r->nmatches; j++)
      if (r->matches[j].pose) {
        pose_free_arrays(r->matches[j].pose);
        free(r->matches[j].pose);
      }
    free(r->matches);
    free(r->explain_names);
    free(r->explain_costs);
  }
  free(reply->results);
  free(reply);
}

static int result_from(anim_result_t *out, const Animserver__SearchResult *m) {
  memset(out, 0, sizeof *out);
  if (!m) return 0;
  out->matches = calloc(m->n_matches + 1, sizeof *out->matches);
  out->explain_names = calloc(m->n_explanation + 1, sizeof *out->explain_names);
  out->explain_costs = calloc(m->n_explanation + 1, sizeof *out->explain_costs);
  if (!out->matches || !out->explain_names || !out->explain_costs) return ANIM_ENOMEM;
  for (size_t i = 0; i < m->n_matches; i++) {
    anim_match_t *match = &out->matches[out->nmatches++];
    match->frame = m->matches[i]->frame;
    match->range = m->matches[i]->range;
    copy_string(match->range_name, sizeof match->range_name, m->matches[i]->range_name);
    match->cost = m->matches[i]->cost;
    if (m->matches[i]->pose) {
      match->pose = malloc(sizeof *match->pose);
      if (!match->pose) return ANIM_ENOMEM;
      pose_from(match->pose, m->matches[i]->pose);
    }
  }
  for (size_t i = 0; i < m->n_explanation; i++) {
    copy_string(out->explain_names[i], sizeof out->explain_names[i], m->explanation[i]->name);
    out->explain_costs[i] = m->explanation[i]->cost;
  }
  out->nexplain = (int)m->n_explanation;
  out->margin = m->margin;
  return 0;
}

static anim_search_reply_t *search_reply_from(uint64_t version, Animserver__SearchResult **results, size_t n) {
  anim_search_reply_t *reply = calloc(1, sizeof *reply);
  if (!reply) return NULL;
  reply->database_version = version;
  reply->results = calloc(n + 1, sizeof *reply->results);
  if (!reply->results) {
    free(reply);
    return NULL;
  }
  for (size_t i = 0; i < n; i++) {
    int rc = result_from(&reply->results[reply->nresults++], results[i]);
    if (rc) {
      anim_search_reply_free(reply);
      return NULL;
    }
  }
  return reply;
}

static void complete_search(anim_client_t *client, pending_t *p, int status, const Animserver__Response *r) {
  anim_search_cb cb = (anim_search_cb)p->cb;
  anim_search_reply_t *reply = NULL;
  if (!status && r) {
    if (r->body_case == ANIMSERVER__RESPONSE__BODY_SEARCH)
      reply = search_reply_from(r->search->database_version, &r->search->result, r->search->result ? 1 : 0);
    else
      reply = search_reply_from(r->batch_search->database_version, r->batch_search->results,
                                r->batch_search->n_results);
    if (!reply) status = set_error(client, ANIM_ENOMEM, "out of memory");
  }
  client->kept = NULL;
  if (cb) cb(client, p->id, status, reply, p->data);
  if (client->kept != reply) anim_search_reply_free(reply);
  client->kept = NULL;
}

/* ---- requests ----------------------------------------------------------------------- */

int anim_client_hello_send(anim_client_t *client, const char *client_name, anim_hello_cb cb, void *data,
                           uint64_t *out_id) {
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__HelloRequest hello = ANIMSERVER__HELLO_REQUEST__INIT;
  hello.protocol_version = 1;
  hello.client_name = (char *)(client_name ? client_name : "");
  hello.auth_token = client->auth_token;
  request.body_case = ANIMSERVER__REQUEST__BODY_HELLO;
  request.hello = &hello;
  pending_t *p = pending_new(ANIMSERVER__RESPONSE__BODY_HELLO, complete_hello, (void (*)(void))cb, data);
  if (!p) return ANIM_ENOMEM;
  return send_request(client, &request, p, out_id);
}

/* The automatic hello of a new connection: a refused token is the reason the next LOST gives. */
static void hello_again_done(anim_client_t *client, uint64_t id, int status, const anim_hello_info_t *info,
                             void *data) {
  if (status && status != ANIM_ECLOSED) client->reconnect.hello_status = status;
}

int anim__client_hello_again(anim_client_t *client) {
  return anim_client_hello_send(client, "reconnect", hello_again_done, NULL, NULL);
}

int anim_client_ping_send(anim_client_t *client, const void *payload, size_t len, anim_ping_cb cb, void *data,
                          uint64_t *out_id) {
  if (len > 0 && !payload) return ANIM_EINVAL;
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__PingRequest ping = ANIMSERVER__PING_REQUEST__INIT;
  ping.payload.data = (uint8_t *)payload;
  ping.payload.len = len;
  request.body_case = ANIMSERVER__REQUEST__BODY_PING;
  request.ping = &ping;
  pending_t *p = pending_new(ANIMSERVER__RESPONSE__BODY_PING, complete_ping, (void (*)(void))cb, data);
  if (!p) return ANIM_ENOMEM;
  return send_request(client, &request, p, out_id);
}

void anim_query_init(anim_query_t *q) {
  memset(q, 0, sizeof *q);
  q->from_frame = -1;
  q->current_frame = -1;
  q->k = 1;
}

/* Protobuf views of one query; arrays live in the caller's anim_query_t. */
typedef struct {
  Animserver__SearchQuery query;
  Animserver__FrameIndex from, current;
  Animserver__Vec2 positions[8], directions[8];
  Animserver__Vec2 *position_ptrs[8], *direction_ptrs[8];
  Animserver__BoneVector bone_positions[16], bone_velocities[16];
  Animserver__BoneVector *bone_position_ptrs[16], *bone_velocity_ptrs[16];
} query_views_t;

static void bones_to_proto(const char *const *names, const float *xyz, int n, Animserver__BoneVector *vecs,
                           Animserver__BoneVector **ptrs) {
  for (int i = 0; i < n; i++) {
    Animserver__BoneVector v = ANIMSERVER__BONE_VECTOR__INIT;
    v.bone = (char *)names[i];
    v.x = xyz[3 * i], v.y = xyz[3 * i + 1], v.z = xyz[3 * i + 2];
    vecs[i] = v;
    ptrs[i] = &vecs[i];
  }
}

static void vec2s_to_proto(const float *xz, int n, Animserver__Vec2 *vecs, Animserver__Vec2 **ptrs) {
  for (int i = 0; i < n; i++) {
    Animserver__Vec2 vec = ANIMSERVER__VEC2__INIT;
    vec.x = xz[2 * i];
    vec.z = xz[2 * i + 1];
    vecs[i] = vec;
    ptrs[i] = &vecs[i];
  }
}

static int query_to_proto(const anim_query_t *in, query_views_t *v) {
  if (in->ntrajectory_positions < 0 || in->ntrajectory_positions > 8 || in->ntrajectory_directions < 0 ||
      in->ntrajectory_directions > 8 || in->nfeatures < 0 || in->ntags < 0 || in->k < 0 || in->npositions < 0 ||
      in->npositions > 16 || in->nvelocities < 0 || in->nvelocities > 16 ||
      (in->npositions && (!in->position_bones || !in->positions)) ||
      (in->nvelocities && (!in->velocity_bones || !in->velocities)))
    return ANIM_EINVAL;
  Animserver__SearchQuery init = ANIMSERVER__SEARCH_QUERY__INIT;
  Animserver__FrameIndex frame_init = ANIMSERVER__FRAME_INDEX__INIT;
  v->query = init;
  v->from = v->current = frame_init;
  Animserver__SearchQuery *q = &v->query;
  q->n_features = (size_t)in->nfeatures;
  q->features = (float *)in->features;
  q->raw_features = in->raw_features;
  if (in->from_frame >= 0) {
    v->from.frame = (uint32_t)in->from_frame;
    q->from_frame = &v->from;
  }
  vec2s_to_proto(in->trajectory_positions, in->ntrajectory_positions, v->positions, v->position_ptrs);
  vec2s_to_proto(in->trajectory_directions, in->ntrajectory_directions, v->directions, v->direction_ptrs);
  q->n_trajectory_positions = (size_t)in->ntrajectory_positions;
  q->trajectory_positions = v->position_ptrs;
  q->n_trajectory_directions = (size_t)in->ntrajectory_directions;
  q->trajectory_directions = v->direction_ptrs;
  q->k = (uint32_t)in->k;
  if (in->current_frame >= 0) {
    v->current.frame = (uint32_t)in->current_frame;
    q->current_frame = &v->current;
  }
  q->transition_cost = in->transition_cost;
  q->ignore_range_end = (uint32_t)(in->ignore_range_end > 0 ? in->ignore_range_end : 0);
  q->ignore_surrounding = (uint32_t)(in->ignore_surrounding > 0 ? in->ignore_surrounding : 0);
  q->n_tags = (size_t)in->ntags;
  q->tags = (char **)in->tags;
  q->include_pose = in->include_pose;
  q->explain = in->explain;
  q->method = (Animserver__SearchMethod)in->method;
  bones_to_proto(in->position_bones, in->positions, in->npositions, v->bone_positions, v->bone_position_ptrs);
  bones_to_proto(in->velocity_bones, in->velocities, in->nvelocities, v->bone_velocities, v->bone_velocity_ptrs);
  q->n_bone_positions = (size_t)in->npositions;
  q->bone_positions = v->bone_position_ptrs;
  q->n_bone_velocities = (size_t)in->nvelocities;
  q->bone_velocities = v->bone_velocity_ptrs;
  return 0;
}

int anim_client_search_send(anim_client_t *client, const char *database, const anim_query_t *queries, int n,
                            anim_search_cb cb, void *data, uint64_t *out_id) {
  if (!database || !queries || n < 1) return set_error(client, ANIM_EINVAL, "search needs a database and queries");
  query_views_t *views = calloc((size_t)n, sizeof *views);
  Animserver__SearchQuery **list = calloc((size_t)n, sizeof *list);
  int rc = views && list ? 0 : ANIM_ENOMEM;
  for (int i = 0; rc == 0 && i < n; i++) {
    rc = query_to_proto(&queries[i], &views[i]);
    list[i] = &views[i].query;
  }
  if (rc == 0) {
    Animserver__Request request = ANIMSERVER__REQUEST__INIT;
    Animserver__SearchRequest single = ANIMSERVER__SEARCH_REQUEST__INIT;
    Animserver__BatchSearchRequest batch = ANIMSERVER__BATCH_SEARCH_REQUEST__INIT;
    if (n == 1) {
      single.database = (char *)database;
      single.query = list[0];
      request.body_case = ANIMSERVER__REQUEST__BODY_SEARCH;
      request.search = &single;
    } else {
      batch.database = (char *)database;
      batch.n_queries = (size_t)n;
      batch.queries = list;
      request.body_case = ANIMSERVER__REQUEST__BODY_BATCH_SEARCH;
      request.batch_search = &batch;
    }
    pending_t *p = pending_new(n == 1 ? ANIMSERVER__RESPONSE__BODY_SEARCH : ANIMSERVER__RESPONSE__BODY_BATCH_SEARCH,
                               complete_search, (void (*)(void))cb, data);
    rc = p ? send_request(client, &request, p, out_id) : ANIM_ENOMEM;
  }
  free(views);
  free(list);
  return rc;
}

/* Sends a request whose answer a blocking caller reads raw. */
static int send_raw(anim_client_t *client, Animserver__Request *request, Animserver__Response__BodyCase expect,
                    raw_cb cb, void *data, uint64_t *out_id) {
  pending_t *p = pending_new(expect, complete_raw, (void (*)(void))cb, data);
  if (!p) return ANIM_ENOMEM;
  return send_request(client, request, p, out_id);
}

/* ---- input ------------------------------------------------------------------------------ */

static void complete(anim_client_t *client, const Animserver__Response *r) {
  pending_t *p = pending_take(client, r->id);
  if (!p) {
    /* An error about a frame the server could not attribute (id 0). */
    if (r->error) {
      client->server_error = -(int)r->error->code;
      set_error(client, client->server_error, r->error->message ? r->error->message : "");
    }
    return;
  }
  if (r->error) {
    int code = -(int)r->error->code;
    if (code >= 0) code = ANIM_EPROTO;
    set_error(client, code, r->error->message ? r->error->message : "");
    pending_fail(client, p, code);
  } else if (r->body_case != p->expect) {
    set_error(client, ANIM_EPROTO, "the server answered with another response type");
    pending_fail(client, p, ANIM_EPROTO);
  } else {
    if (!client->reconnect.proven) anim__reconnect_answered(client);
    p->complete(client, p, 0, r);
  }
  free(p);
}

static int on_frame(void *ctx, const uint8_t *frame, size_t len) {
  anim_client_t *client = ctx;
  Animserver__ServerMessage *message = animserver__server_message__unpack(NULL, len, frame);
  if (!message) return set_error(client, ANIM_EPROTO, "server sent a frame that is not a ServerMessage");
  if (message->kind_case == ANIMSERVER__SERVER_MESSAGE__KIND_RESPONSE && message->response)
    complete(client, message->response);
  else if (message->kind_case == ANIMSERVER__SERVER_MESSAGE__KIND_STREAM && message->stream)
    anim__client_stream(client, message->stream, len);
  animserver__server_message__free_unpacked(message, NULL);
  /* With reconnection, bytes of a connection a callback saw break are not delivered. */
  return client->reconnect.enabled ? client->broken : 0;
}

static int read_input(anim_client_t *client) {
  uint8_t buffer[16384];
  for (;;) {
    ssize_t n = recv(client->fd, buffer, sizeof buffer, 0);
    if (n > 0) {
      client->feeding++;
      int rc = anim_frame_reader_feed(&client->reader, buffer, (size_t)n, on_frame, client);
      client->feeding--;
      if (rc != 0 && client->broken) return client->broken; /* broken during a callback */
      if (rc != 0) {
        client->broken = rc;
        return set_error(client, rc, rc == ANIM_ETOOBIG ? "server frame over max_frame_bytes" : "malformed frame");
      }
      continue;
    }
    if (n == 0) {
      /* Keep the server's own reason when it gave one before closing. */
      client->broken = client->server_error ? client->server_error : ANIM_ECLOSED;
      if (!client->server_error) set_error(client, ANIM_ECLOSED, "server closed the connection");
      return client->broken;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
    client->broken = ANIM_ECLOSED;
    return set_error(client, ANIM_ECLOSED, strerror(errno));
  }
}

int anim_client_process(anim_client_t *client) {
  if (client->reconnect.enabled) {
    int rc = anim__reconnect_drive(client);
    if (rc) return rc;
  }
  if (client->broken) return client->broken;
  int rc = flush_output(client);
  if (rc == 0) rc = read_input(client);
  if (rc != 0) {
    fail_all_pending(client, rc);
    if (client->reconnect.enabled) anim__reconnect_drive(client); /* LOST now, not at the next call */
  }
  return rc;
}

int anim_client_poll(anim_client_t *client, int timeout_ms) {
  if (client->reconnect.enabled && (client->broken || client->reconnect.state != CONN_CONNECTED))
    return anim__reconnect_poll(client, timeout_ms);
  if (client->broken) return client->broken;
  struct pollfd p = {client->fd, (short)(POLLIN | (anim_client_wants_write(client) ? POLLOUT : 0)), 0};
  int n = poll(&p, 1, timeout_ms);
  if (n < 0) return errno == EINTR ? 0 : set_error(client, ANIM_EIO, strerror(errno));
  if (n == 0) return ANIM_ETIMEDOUT;
  return anim_client_process(client);
}

/* ---- blocking calls -------------------------------------------------------------- */

/* What a blocking call waits for; its callback fills it. */
typedef struct {
  int done, status;
  uint64_t sent_us, rtt_us;
  anim_hello_info_t *hello;
  /* raw responses are converted by the waiting function's own callback */
  void (*convert)(anim_client_t *client, const Animserver__Response *r, void *waiter);
  void *out;          /* conversion target */
  int max, *out_count;
} waiter_t;

/* Polls until *done or timeout_ms has passed since the start; on timeout the
 * request id is forgotten (a late answer is then ignored). */
int anim__client_wait(anim_client_t *client, const int *done, uint64_t id, int timeout_ms) {
  uint64_t deadline = monotonic_us() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0) * 1000u;
  while (!*done) {
    uint64_t now = monotonic_us();
    if (now >= deadline) {
      pending_t *p = pending_take(client, id);
      free(p);
      return set_error(client, ANIM_ETIMEDOUT, "no response before the timeout");
    }
    int rc = anim_client_poll(client, (int)((deadline - now + 999) / 1000));
    if (rc != 0 && rc != ANIM_ETIMEDOUT && !*done) return rc;
  }
  return 0;
}

/* Polls until w->done or timeout_ms has passed since the start. */
static int wait_for(anim_client_t *client, waiter_t *w, uint64_t id, int timeout_ms) {
  uint64_t deadline = monotonic_us() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0) * 1000u;
  while (!w->done) {
    uint64_t now = monotonic_us();
    if (now >= deadline) {
      pending_t *p = pending_take(client, id);
      free(p); /* a late response is then ignored */
      return set_error(client, ANIM_ETIMEDOUT, "no response before the timeout");
    }
    int rc = anim_client_poll(client, (int)((deadline - now + 999) / 1000));
    if (rc != 0 && rc != ANIM_ETIMEDOUT && !w->done) return rc;
  }
  return w->status;
}

static void hello_done(anim_client_t *client, uint64_t id, int status, const anim_hello_info_t *info, void *data) {
  waiter_t *w = data;
  w->done = 1;
  w->status = status;
  if (info && w->hello) *w->hello = *info;
}

int anim_client_hello(anim_client_t *client, const char *client_name, anim_hello_info_t *out_info, int timeout_ms) {
  waiter_t w = {0};
  w.hello = out_info;
  uint64_t id;
  int rc = anim__client_await(client, &timeout_ms);
  if (rc == 0) rc = anim_client_hello_send(client, client_name, hello_done, &w, &id);
  return rc ? rc : wait_for(client, &w, id, timeout_ms);
}

static void ping_done(anim_client_t *client, uint64_t id, int status, const anim_ping_result_t *result, void *data) {
  waiter_t *w = data;
  w->done = 1;
  w->status = status;
  w->rtt_us = monotonic_us() - w->sent_us;
}

int anim_client_ping(anim_client_t *client, const void *payload, size_t len, uint64_t *out_rtt_us, int timeout_ms) {
  waiter_t w = {0};
  uint64_t id;
  int rc = anim__client_await(client, &timeout_ms);
  w.sent_us = monotonic_us();
  if (rc == 0) rc = anim_client_ping_send(client, payload, len, ping_done, &w, &id);
  if (rc == 0) rc = wait_for(client, &w, id, timeout_ms);
  if (rc == 0 && out_rtt_us) *out_rtt_us = w.rtt_us;
  return rc;
}

static void raw_done(anim_client_t *client, uint64_t id, int status, const Animserver__Response *r, void *data) {
  waiter_t *w = data;
  w->done = 1;
  w->status = status;
  if (!status && r && w->convert) w->convert(client, r, w);
}

/* The asynchronous form of the requests that have one: the blocking function
 * builds the request as usual, but with client->async set, call_raw sends it
 * and returns at once; when the answer arrives the same converter fills the
 * call's own storage and deliver() hands the typed result to the caller. */
typedef struct {
  anim_inertializer_state_t **state;
  anim_pose_t **pose;
} inertialize_out_t;

typedef struct async_call {
  waiter_t w; /* the converters write through w.out into the storage below */
  void (*deliver)(anim_client_t *client, uint64_t id, int status, struct async_call *call);
  void (*cb)(void);
  void *data;
  anim_db_summary_t summaries[64];
  int count;
  anim_db_summary_t summary;
  anim_db_description_t *description;
  anim_pose_reply_t *poses;
  anim_inertializer_state_t *state;
  anim_pose_t *pose;
  inertialize_out_t io;
  anim_transition_cost_t *cost;
  anim_spring_tuning_t tuning;
} async_call_t;

static void async_done(anim_client_t *client, uint64_t id, int status, const Animserver__Response *r, void *data) {
  async_call_t *a = data;
  a->w.done = 1;
  a->w.status = status;
  if (!status && r && a->w.convert) a->w.convert(client, r, &a->w);
  a->deliver(client, id, a->w.status, a);
  free(a);
}

/* Sends request and waits (or, asynchronously, only sends); the answer is converted by w->convert. */
static int call_raw(anim_client_t *client, Animserver__Request *request, Animserver__Response__BodyCase expect,
                    waiter_t *w, int timeout_ms) {
  uint64_t id;
  async_call_t *a = client->async;
  if (a) {
    client->async = NULL;
    a->w.convert = w->convert, a->w.max = w->max, a->w.out_count = w->out_count;
    a->w.out = w->out;
    int rc = send_raw(client, request, expect, async_done, a, &id);
    if (rc) free(a);
    else client->async_id = id;
    return rc;
  }
  int rc = anim__client_await(client, &timeout_ms);
  if (rc == 0) rc = send_raw(client, request, expect, raw_done, w, &id);
  return rc ? rc : wait_for(client, w, id, timeout_ms);
}

static async_call_t *async_new(void (*deliver)(anim_client_t *, uint64_t, int, async_call_t *), void (*cb)(void),
                               void *data) {
  async_call_t *a = calloc(1, sizeof *a);
  if (a) a->deliver = deliver, a->cb = cb, a->data = data;
  return a;
}

/* Runs a blocking builder in asynchronous mode; frees the call if it never went out. */
static int async_finish(anim_client_t *client, async_call_t *a, int rc, uint64_t *out_id) {
  if (client->async == a) { /* refused before sending */
    client->async = NULL;
    free(a);
    return rc ? rc : ANIM_EINVAL;
  }
  if (rc == 0 && out_id) *out_id = client->async_id;
  return rc;
}

static void convert_list(anim_client_t *client, const Animserver__Response *r, void *data) {
  waiter_t *w = data;
  const Animserver__ListDatabasesResponse *list = r->list_databases;
  anim_db_summary_t *out = w->out;
  for (size_t i = 0; i < list->n_databases && (int)i < w->max; i++) summary_from(&out[i], list->databases[i]);
  *w->out_count = (int)list->n_databases;
}

int anim_client_db_list(anim_client_t *client, anim_db_summary_t *out_summaries, int max, int *out_count,
                        int timeout_ms) {
  if (max < 0 || (max > 0 && !out_summaries) || !out_count) return ANIM_EINVAL;
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__ListDatabasesRequest list = ANIMSERVER__LIST_DATABASES_REQUEST__INIT;
  request.body_case = ANIMSERVER__REQUEST__BODY_LIST_DATABASES;
  request.list_databases = &list;
  waiter_t w = {0};
  w.convert = convert_list;
  w.out = out_summaries;
  w.max = max;
  w.out_count = out_count;
  return call_raw(client, &request, ANIMSERVER__RESPONSE__BODY_LIST_DATABASES, &w, timeout_ms);
}

void anim_db_description_free(anim_db_description_t *d) {
  if (!d) return;
  free(d->bone_names);
  free(d->bone_parents);
  free(d->ranges);
  free(d->groups);
  free(d->feature_offset);
  free(d->feature_scale);
  free(d->contact_bones);
  free(d);
}

static anim_db_description_t *description_from(const Animserver__DescribeDatabaseResponse *m) {
  anim_db_description_t *d = calloc(1, sizeof *d);
  if (!d) return NULL;
  summary_from(&d->summary, m->summary);
  size_t dims = d->summary.feature_dims;
  d->bone_names = calloc(m->n_bones + 1, sizeof *d->bone_names);
  d->bone_parents = calloc(m->n_bones + 1, sizeof *d->bone_parents);
  d->ranges = calloc(m->n_ranges + 1, sizeof *d->ranges);
  d->groups = calloc(m->n_features + 1, sizeof *d->groups);
  d->feature_offset = calloc(dims + 1, sizeof *d->feature_offset);
  d->feature_scale = calloc(dims + 1, sizeof *d->feature_scale);
  if (!d->bone_names || !d->bone_parents || !d->ranges || !d->groups || !d->feature_offset || !d->feature_scale) {
    anim_db_description_free(d);
    return NULL;
  }
  for (size_t i = 0; i < m->n_bones; i++) {
    copy_string(d->bone_names[i], sizeof d->bone_names[i], m->bones[i]->name);
    d->bone_parents[i] = m->bones[i]->parent;
  }
  d->nbones = (int)m->n_bones;
  for (size_t i = 0; i < m->n_ranges; i++) {
    anim_range_info_t *r = &d->ranges[i];
    copy_string(r->name, sizeof r->name, m->ranges[i]->name);
    r->start = m->ranges[i]->start;
    r->stop = m->ranges[i]->stop;
    for (size_t t = 0; t < m->ranges[i]->n_tags && r->ntags < 8; t++)
      copy_string(r->tags[r->ntags++], sizeof r->tags[0], m->ranges[i]->tags[t]);
  }
  d->nranges = (int)m->n_ranges;
  for (size_t i = 0; i < m->n_features; i++) {
    const Animserver__FeatureGroup *g = m->features[i];
    anim_feature_group_info_t *out = &d->groups[i];
    out->kind = (int)g->kind;
    copy_string(out->bone, sizeof out->bone, g->bone);
    out->weight = g->weight;
    out->halflife = g->halflife;
    for (size_t s = 0; s < g->n_frame_offsets && out->nsamples < 8; s++)
      out->frame_offsets[out->nsamples++] = g->frame_offsets[s];
    out->first_column = g->first_column;
    out->dims = g->dims;
    for (size_t c = 0; c < g->n_offset && c < g->n_scale; c++) {
      if (g->first_column + c >= dims) break;
      d->feature_offset[g->first_column + c] = g->offset[c];
      d->feature_scale[g->first_column + c] = g->scale[c];
    }
  }
  d->ngroups = (int)m->n_features;
  /* Contact bones as bone indices (bit i of a stream pose's contacts). */
  d->contact_bones = calloc(m->n_contact_bones + 1, sizeof *d->contact_bones);
  if (!d->contact_bones) {
    anim_db_description_free(d);
    return NULL;
  }
  for (size_t i = 0; i < m->n_contact_bones; i++) {
    d->contact_bones[i] = -1;
    for (int b = 0; b < d->nbones; b++)
      if (strcmp(d->bone_names[b], m->contact_bones[i] ? m->contact_bones[i] : "") == 0) d->contact_bones[i] = b;
  }
  d->ncontact_bones = (int)m->n_contact_bones;
  return d;
}

static void convert_describe(anim_client_t *client, const Animserver__Response *r, void *data) {
  waiter_t *w = data;
  *(anim_db_description_t **)w->out = description_from(r->describe_database);
  if (!*(anim_db_description_t **)w->out) w->status = set_error(client, ANIM_ENOMEM, "out of memory");
}

int anim_client_db_describe(anim_client_t *client, const char *name, anim_db_description_t **out_description,
                            int timeout_ms) {
  if (!name || !out_description) return ANIM_EINVAL;
  *out_description = NULL;
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__DescribeDatabaseRequest describe = ANIMSERVER__DESCRIBE_DATABASE_REQUEST__INIT;
  describe.name = (char *)name;
  request.body_case = ANIMSERVER__REQUEST__BODY_DESCRIBE_DATABASE;
  request.describe_database = &describe;
  waiter_t w = {0};
  w.convert = convert_describe;
  w.out = out_description;
  return call_raw(client, &request, ANIMSERVER__RESPONSE__BODY_DESCRIBE_DATABASE, &w, timeout_ms);
}

static void convert_changed(anim_client_t *client, const Animserver__Response *r, void *data) {
  waiter_t *w = data;
  if (w->out) summary_from(w->out, r->database_changed->summary);
}

/* load, reload, unload: one request shape, a different body field each. */
static int db_admin(anim_client_t *client, Animserver__Request__BodyCase which, const char *name,
                    anim_db_summary_t *out_summary, int timeout_ms) {
  if (!name) return ANIM_EINVAL;
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__LoadDatabaseRequest load = ANIMSERVER__LOAD_DATABASE_REQUEST__INIT;
  Animserver__ReloadDatabaseRequest reload = ANIMSERVER__RELOAD_DATABASE_REQUEST__INIT;
  Animserver__UnloadDatabaseRequest unload = ANIMSERVER__UNLOAD_DATABASE_REQUEST__INIT;
  load.name = reload.name = unload.name = (char *)name;
  request.body_case = which;
  if (which == ANIMSERVER__REQUEST__BODY_LOAD_DATABASE) request.load_database = &load;
  else if (which == ANIMSERVER__REQUEST__BODY_RELOAD_DATABASE) request.reload_database = &reload;
  else request.unload_database = &unload;
  waiter_t w = {0};
  w.convert = convert_changed;
  w.out = out_summary;
  return call_raw(client, &request, ANIMSERVER__RESPONSE__BODY_DATABASE_CHANGED, &w, timeout_ms);
}

int anim_client_db_load(anim_client_t *client, const char *name, anim_db_summary_t *out_summary, int timeout_ms) {
  return db_admin(client, ANIMSERVER__REQUEST__BODY_LOAD_DATABASE, name, out_summary, timeout_ms);
}
int anim_client_db_reload(anim_client_t *client, const char *name, anim_db_summary_t *out_summary, int timeout_ms) {
  return db_admin(client, ANIMSERVER__REQUEST__BODY_RELOAD_DATABASE, name, out_summary, timeout_ms);
}
int anim_client_db_unload(anim_client_t *client, const char *name, int timeout_ms) {
  return db_admin(client, ANIMSERVER__REQUEST__BODY_UNLOAD_DATABASE, name, NULL, timeout_ms);
}

static void search_done(anim_client_t *client, uint64_t id, int status, const anim_search_reply_t *reply, void *data) {
  waiter_t *w = data;
  w->done = 1;
  w->status = status;
  *(anim_search_reply_t **)w->out = (anim_search_reply_t *)reply;
  client->kept = (void *)reply; /* the blocking caller owns it now */
}

int anim_client_search_batch(anim_client_t *client, const char *database, const anim_query_t *queries, int n,
                             anim_search_reply_t **out_reply, int timeout_ms) {
  if (!out_reply) return ANIM_EINVAL;
  *out_reply = NULL;
  waiter_t w = {0};
  w.out = out_reply;
  uint64_t id;
  int rc = anim__client_await(client, &timeout_ms);
  if (rc == 0) rc = anim_client_search_send(client, database, queries, n, search_done, &w, &id);
  if (rc == 0) rc = wait_for(client, &w, id, timeout_ms);
  if (rc != 0) {
    anim_search_reply_free(*out_reply);
    *out_reply = NULL;
  }
  return rc;
}

int anim_client_search(anim_client_t *client, const char *database, const anim_query_t *query,
                       anim_search_reply_t **out_reply, int timeout_ms) {
  return anim_client_search_batch(client, database, query, 1, out_reply, timeout_ms);
}

static void convert_pose(anim_client_t *client, const Animserver__Response *r, void *data) {
  waiter_t *w = data;
  *(anim_pose_reply_t **)w->out = pose_reply_from(r->pose);
  if (!*(anim_pose_reply_t **)w->out) w->status = set_error(client, ANIM_ENOMEM, "out of memory");
}

int anim_client_pose(anim_client_t *client, const char *database, int frame, int count,
                     const anim_pose_options_t *options, anim_pose_reply_t **out_reply, int timeout_ms) {
  if (!database || !out_reply || frame < 0 || count < 0) return ANIM_EINVAL;
  *out_reply = NULL;
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__PoseRequest pose = ANIMSERVER__POSE_REQUEST__INIT;
  Animserver__PoseOptions opts = ANIMSERVER__POSE_OPTIONS__INIT;
  pose.database = (char *)database;
  pose.frame = (uint32_t)frame;
  pose.count = (uint32_t)count;
  if (options) {
    opts.local = options->local;
    opts.global = options->global;
    opts.velocities = options->velocities;
    pose.options = &opts;
  }
  request.body_case = ANIMSERVER__REQUEST__BODY_POSE;
  request.pose = &pose;
  waiter_t w = {0};
  w.convert = convert_pose;
  w.out = out_reply;
  int rc = call_raw(client, &request, ANIMSERVER__RESPONSE__BODY_POSE, &w, timeout_ms);
  if (rc != 0) {
    anim_pose_reply_free(*out_reply);
    *out_reply = NULL;
  }
  return rc;
}

/* ---- inertialization ------------------------------------------------------------------ */

void anim_inertializer_state_free(anim_inertializer_state_t *state) {
  if (!state) return;
  free(state->offset_positions); /* one block holds all four arrays */
  free(state);
}

void anim_transition_cost_free(anim_transition_cost_t *cost) {
  if (!cost) return;
  free(cost->names);
  free(cost->exact_per_bone);
  free(cost->approximate_per_bone);
  free(cost);
}

void anim_pose_free(anim_pose_t *pose) {
  if (!pose) return;
  pose_free_arrays(pose);
  free(pose);
}

/* Protobuf views of a pose source. */
typedef struct {
  Animserver__PoseRef ref;
  Animserver__PoseState pose;
} pose_ref_views_t;

static int source_to_proto(const anim_pose_source_t *in, pose_ref_views_t *v) {
  Animserver__PoseRef ref = ANIMSERVER__POSE_REF__INIT;
  Animserver__PoseState pose = ANIMSERVER__POSE_STATE__INIT;
  v->ref = ref;
  v->pose = pose;
  if (!in) return ANIM_EINVAL;
  if (in->frame >= 0) {
    v->ref.source_case = ANIMSERVER__POSE_REF__SOURCE_FRAME;
    v->ref.frame = (uint32_t)in->frame;
    return 0;
  }
  if (in->nbones < 1 || !in->positions || !in->velocities || !in->rotations || !in->angular_velocities)
    return ANIM_EINVAL;
  size_t n = (size_t)in->nbones;
  v->pose.n_positions = 3 * n, v->pose.positions = (float *)in->positions;
  v->pose.n_velocities = 3 * n, v->pose.velocities = (float *)in->velocities;
  v->pose.n_rotations = 4 * n, v->pose.rotations = (float *)in->rotations;
  v->pose.n_angular_velocities = 3 * n, v->pose.angular_velocities = (float *)in->angular_velocities;
  v->ref.source_case = ANIMSERVER__POSE_REF__SOURCE_POSE;
  v->ref.pose = &v->pose;
  return 0;
}

static void state_to_proto(const anim_inertializer_state_t *in, Animserver__InertializerState *out) {
  Animserver__InertializerState init = ANIMSERVER__INERTIALIZER_STATE__INIT;
  *out = init;
  size_t n = (size_t)in->nbones;
  out->n_offset_positions = 3 * n, out->offset_positions = in->offset_positions;
  out->n_offset_velocities = 3 * n, out->offset_velocities = in->offset_velocities;
  out->n_offset_rotations = 4 * n, out->offset_rotations = in->offset_rotations;
  out->n_offset_angular_velocities = 3 * n, out->offset_angular_velocities = in->offset_angular_velocities;
  out->n_anchor = 14, out->anchor = (float *)in->anchor;
}

anim_inertializer_state_t *anim__state_from(const Animserver__InertializerState *m) {
  if (!m) return NULL;
  size_t n = m->n_offset_positions / 3;
  if (m->n_offset_velocities != 3 * n || m->n_offset_rotations != 4 * n || m->n_offset_angular_velocities != 3 * n)
    return NULL;
  anim_inertializer_state_t *s = calloc(1, sizeof *s);
  float *block = calloc(13 * n + 1, sizeof *block);
  if (!s || !block) {
    free(s);
    free(block);
    return NULL;
  }
  s->nbones = (int)n;
  s->offset_positions = block, s->offset_velocities = block + 3 * n;
  s->offset_rotations = block + 6 * n, s->offset_angular_velocities = block + 10 * n;
  if (n > 0) { /* no offsets (a state asked without them): the wire arrays are NULL */
    memcpy(s->offset_positions, m->offset_positions, 3 * n * sizeof *block);
    memcpy(s->offset_velocities, m->offset_velocities, 3 * n * sizeof *block);
    memcpy(s->offset_rotations, m->offset_rotations, 4 * n * sizeof *block);
    memcpy(s->offset_angular_velocities, m->offset_angular_velocities, 3 * n * sizeof *block);
  }
  if (m->n_anchor == 14) memcpy(s->anchor, m->anchor, sizeof s->anchor);
  return s;
}

static void convert_transition(anim_client_t *client, const Animserver__Response *r, void *data) {
  waiter_t *w = data;
  inertialize_out_t *o = w->out;
  *o->state = anim__state_from(r->inertialize_transition->state);
  if (!*o->state) w->status = set_error(client, ANIM_EPROTO, "malformed inertializer state in the answer");
}

int anim_client_inertialize_transition(anim_client_t *client, const char *database, const anim_pose_source_t *source,
                                       const anim_pose_source_t *destination, const anim_inertializer_state_t *state,
                                       anim_inertializer_state_t **out_state, int timeout_ms) {
  if (!out_state) return ANIM_EINVAL;
  *out_state = NULL;
  pose_ref_views_t src, dst;
  Animserver__InertializerState st;
  if (source_to_proto(source, &src) || source_to_proto(destination, &dst)) return ANIM_EINVAL;
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__InertializeTransitionRequest t = ANIMSERVER__INERTIALIZE_TRANSITION_REQUEST__INIT;
  t.database = (char *)(database ? database : "");
  t.source = &src.ref;
  t.destination = &dst.ref;
  if (state) {
    state_to_proto(state, &st);
    t.state = &st;
  }
  request.body_case = ANIMSERVER__REQUEST__BODY_INERTIALIZE_TRANSITION;
  request.inertialize_transition = &t;
  inertialize_out_t local = {out_state, NULL}, *o = client->async ? &client->async->io : &local;
  *o = local;
  waiter_t w = {0};
  w.convert = convert_transition;
  w.out = o;
  int rc = call_raw(client, &request, ANIMSERVER__RESPONSE__BODY_INERTIALIZE_TRANSITION, &w, timeout_ms);
  if (rc) {
    anim_inertializer_state_free(*out_state);
    *out_state = NULL;
  }
  return rc;
}

static void convert_evaluate(anim_client_t *client, const Animserver__Response *r, void *data) {
  waiter_t *w = data;
  inertialize_out_t *o = w->out;
  const Animserver__InertializeEvaluateResponse *e = r->inertialize_evaluate;
  if (o->state) {
    *o->state = anim__state_from(e->state);
    if (!*o->state) w->status = set_error(client, ANIM_EPROTO, "malformed inertializer state in the answer");
  }
  if (o->pose && e->output) {
    anim_pose_t *pose = calloc(1, sizeof *pose);
    if (!pose) {
      w->status = set_error(client, ANIM_ENOMEM, "out of memory");
      return;
    }
    pose->nbones = (int)(e->output->n_positions / 3);
    /* Local pose whose root (bone 0) is in world space. */
    pose->local_positions = copy_floats(e->output->positions, e->output->n_positions);
    pose->local_velocities = copy_floats(e->output->velocities, e->output->n_velocities);
    pose->local_rotations = copy_floats(e->output->rotations, e->output->n_rotations);
    pose->local_angular_velocities = copy_floats(e->output->angular_velocities, e->output->n_angular_velocities);
    *o->pose = pose;
  }
}

int anim_client_inertialize_evaluate(anim_client_t *client, const char *database, const anim_inertializer_state_t *state,
                                     const anim_pose_source_t *input, float halflife, float t,
                                     anim_inertializer_state_t **out_state, anim_pose_t **out_pose, int timeout_ms) {
  if (!state) return ANIM_EINVAL;
  if (out_state) *out_state = NULL;
  if (out_pose) *out_pose = NULL;
  pose_ref_views_t in;
  Animserver__InertializerState st;
  if (source_to_proto(input, &in)) return ANIM_EINVAL;
  state_to_proto(state, &st);
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__InertializeEvaluateRequest e = ANIMSERVER__INERTIALIZE_EVALUATE_REQUEST__INIT;
  e.database = (char *)(database ? database : "");
  e.state = &st;
  e.input = &in.ref;
  e.halflife = halflife;
  e.t = t;
  request.body_case = ANIMSERVER__REQUEST__BODY_INERTIALIZE_EVALUATE;
  request.inertialize_evaluate = &e;
  inertialize_out_t local = {out_state, out_pose}, *o = client->async ? &client->async->io : &local;
  *o = local;
  waiter_t w = {0};
  w.convert = convert_evaluate;
  w.out = o;
  int rc = call_raw(client, &request, ANIMSERVER__RESPONSE__BODY_INERTIALIZE_EVALUATE, &w, timeout_ms);
  if (rc) {
    if (out_state) anim_inertializer_state_free(*out_state), *out_state = NULL;
    if (out_pose) anim_pose_free(*out_pose), *out_pose = NULL;
  }
  return rc;
}

static void convert_cost(anim_client_t *client, const Animserver__Response *r, void *data) {
  waiter_t *w = data;
  const Animserver__TransitionCostResponse *m = r->transition_cost;
  anim_transition_cost_t *c = calloc(1, sizeof *c);
  if (c) {
    c->names = calloc(m->n_bones + 1, sizeof *c->names);
    c->exact_per_bone = calloc(m->n_bones + 1, sizeof *c->exact_per_bone);
    c->approximate_per_bone = calloc(m->n_bones + 1, sizeof *c->approximate_per_bone);
  }
  if (!c || !c->names || !c->exact_per_bone || !c->approximate_per_bone) {
    anim_transition_cost_free(c);
    w->status = set_error(client, ANIM_ENOMEM, "out of memory");
    return;
  }
  c->exact = m->exact;
  c->approximate = m->approximate;
  for (size_t i = 0; i < m->n_bones; i++) {
    copy_string(c->names[i], sizeof c->names[i], m->bones[i]->bone);
    c->exact_per_bone[i] = m->bones[i]->exact;
    c->approximate_per_bone[i] = m->bones[i]->approximate;
  }
  c->nbones = (int)m->n_bones;
  *(anim_transition_cost_t **)w->out = c;
}

int anim_client_transition_cost(anim_client_t *client, const char *database, const anim_pose_source_t *source,
                                const anim_pose_source_t *destination, float halflife, const char *const *bones,
                                int nbones, anim_transition_cost_t **out_cost, int timeout_ms) {
  if (!out_cost || nbones < 0 || (nbones > 0 && !bones)) return ANIM_EINVAL;
  *out_cost = NULL;
  pose_ref_views_t src, dst;
  if (source_to_proto(source, &src) || source_to_proto(destination, &dst)) return ANIM_EINVAL;
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__TransitionCostRequest c = ANIMSERVER__TRANSITION_COST_REQUEST__INIT;
  c.database = (char *)(database ? database : "");
  c.source = &src.ref;
  c.destination = &dst.ref;
  c.halflife = halflife;
  c.n_bones = (size_t)nbones;
  c.bones = (char **)bones;
  request.body_case = ANIMSERVER__REQUEST__BODY_TRANSITION_COST;
  request.transition_cost = &c;
  waiter_t w = {0};
  w.convert = convert_cost;
  w.out = out_cost;
  int rc = call_raw(client, &request, ANIMSERVER__RESPONSE__BODY_TRANSITION_COST, &w, timeout_ms);
  if (rc) {
    anim_transition_cost_free(*out_cost);
    *out_cost = NULL;
  }
  return rc;
}

static void convert_tune(anim_client_t *client, const Animserver__Response *r, void *data) {
  waiter_t *w = data;
  anim_spring_tuning_t *out = w->out;
  out->halflife = r->spring_tune->halflife;
  out->stiffness = r->spring_tune->stiffness;
  out->damping = r->spring_tune->damping;
  out->erp = r->spring_tune->erp;
  out->cfm = r->spring_tune->cfm;
}

static int spring_tune(anim_client_t *client, Animserver__SpringTuneRequest *tune, anim_spring_tuning_t *out,
                       int timeout_ms) {
  if (!out) return ANIM_EINVAL;
  memset(out, 0, sizeof *out);
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  request.body_case = ANIMSERVER__REQUEST__BODY_SPRING_TUNE;
  request.spring_tune = tune;
  waiter_t w = {0};
  w.convert = convert_tune;
  w.out = out;
  return call_raw(client, &request, ANIMSERVER__RESPONSE__BODY_SPRING_TUNE, &w, timeout_ms);
}

int anim_client_spring_halflife(anim_client_t *client, double alpha, double t, double x0, double v0, double mass,
                                anim_spring_tuning_t *out_tuning, int timeout_ms) {
  Animserver__SpringTuneRequest tune = ANIMSERVER__SPRING_TUNE_REQUEST__INIT;
  Animserver__SpringFraction f = ANIMSERVER__SPRING_FRACTION__INIT;
  f.alpha = alpha, f.t = t, f.x0 = x0, f.v0 = v0, f.mass = mass;
  tune.problem_case = ANIMSERVER__SPRING_TUNE_REQUEST__PROBLEM_FRACTION;
  tune.fraction = &f;
  return spring_tune(client, &tune, out_tuning, timeout_ms);
}

int anim_client_spring_to_constraint(anim_client_t *client, double stiffness, double damping, double dt,
                                     anim_spring_tuning_t *out_tuning, int timeout_ms) {
  Animserver__SpringTuneRequest tune = ANIMSERVER__SPRING_TUNE_REQUEST__INIT;
  Animserver__SpringGains g = ANIMSERVER__SPRING_GAINS__INIT;
  g.stiffness = stiffness, g.damping = damping, g.dt = dt;
  tune.problem_case = ANIMSERVER__SPRING_TUNE_REQUEST__PROBLEM_TO_CONSTRAINT;
  tune.to_constraint = &g;
  return spring_tune(client, &tune, out_tuning, timeout_ms);
}

int anim_client_spring_from_constraint(anim_client_t *client, double erp, double cfm, double dt,
                                       anim_spring_tuning_t *out_tuning, int timeout_ms) {
  Animserver__SpringTuneRequest tune = ANIMSERVER__SPRING_TUNE_REQUEST__INIT;
  Animserver__SpringConstraint c = ANIMSERVER__SPRING_CONSTRAINT__INIT;
  c.erp = erp, c.cfm = cfm, c.dt = dt;
  tune.problem_case = ANIMSERVER__SPRING_TUNE_REQUEST__PROBLEM_FROM_CONSTRAINT;
  tune.from_constraint = &c;
  return spring_tune(client, &tune, out_tuning, timeout_ms);
}

/* ---- asynchronous forms ------------------------------------------------------------------- */

static void deliver_list(anim_client_t *client, uint64_t id, int status, async_call_t *a) {
  if (a->cb) ((anim_db_list_cb)a->cb)(client, id, status, status ? NULL : a->summaries, status ? 0 : a->count, a->data);
}

int anim_client_db_list_send(anim_client_t *client, anim_db_list_cb cb, void *data, uint64_t *out_id) {
  async_call_t *a = async_new(deliver_list, (void (*)(void))cb, data);
  if (!a) return ANIM_ENOMEM;
  client->async = a;
  return async_finish(client, a, anim_client_db_list(client, a->summaries, 64, &a->count, 0), out_id);
}

static void deliver_describe(anim_client_t *client, uint64_t id, int status, async_call_t *a) {
  if (a->cb) ((anim_db_describe_cb)a->cb)(client, id, status, status ? NULL : a->description, a->data);
  anim_db_description_free(a->description);
}

int anim_client_db_describe_send(anim_client_t *client, const char *name, anim_db_describe_cb cb, void *data,
                                 uint64_t *out_id) {
  async_call_t *a = async_new(deliver_describe, (void (*)(void))cb, data);
  if (!a) return ANIM_ENOMEM;
  client->async = a;
  return async_finish(client, a, anim_client_db_describe(client, name, &a->description, 0), out_id);
}

static void deliver_changed(anim_client_t *client, uint64_t id, int status, async_call_t *a) {
  if (a->cb) ((anim_db_changed_cb)a->cb)(client, id, status, status ? NULL : &a->summary, a->data);
}

static int db_admin_send(anim_client_t *client, Animserver__Request__BodyCase which, const char *name,
                         anim_db_changed_cb cb, void *data, uint64_t *out_id) {
  async_call_t *a = async_new(deliver_changed, (void (*)(void))cb, data);
  if (!a) return ANIM_ENOMEM;
  client->async = a;
  return async_finish(client, a, db_admin(client, which, name, &a->summary, 0), out_id);
}

int anim_client_db_load_send(anim_client_t *client, const char *name, anim_db_changed_cb cb, void *data,
                             uint64_t *out_id) {
  return db_admin_send(client, ANIMSERVER__REQUEST__BODY_LOAD_DATABASE, name, cb, data, out_id);
}
int anim_client_db_reload_send(anim_client_t *client, const char *name, anim_db_changed_cb cb, void *data,
                               uint64_t *out_id) {
  return db_admin_send(client, ANIMSERVER__REQUEST__BODY_RELOAD_DATABASE, name, cb, data, out_id);
}
int anim_client_db_unload_send(anim_client_t *client, const char *name, anim_db_changed_cb cb, void *data,
                               uint64_t *out_id) {
  return db_admin_send(client, ANIMSERVER__REQUEST__BODY_UNLOAD_DATABASE, name, cb, data, out_id);
}

static void deliver_pose(anim_client_t *client, uint64_t id, int status, async_call_t *a) {
  if (a->cb) ((anim_pose_cb)a->cb)(client, id, status, status ? NULL : a->poses, a->data);
  anim_pose_reply_free(a->poses);
}

int anim_client_pose_send(anim_client_t *client, const char *database, int frame, int count,
                          const anim_pose_options_t *options, anim_pose_cb cb, void *data, uint64_t *out_id) {
  async_call_t *a = async_new(deliver_pose, (void (*)(void))cb, data);
  if (!a) return ANIM_ENOMEM;
  client->async = a;
  return async_finish(client, a, anim_client_pose(client, database, frame, count, options, &a->poses, 0), out_id);
}

static void deliver_inertialize(anim_client_t *client, uint64_t id, int status, async_call_t *a) {
  if (a->cb) ((anim_inertialize_cb)a->cb)(client, id, status, status ? NULL : a->state, status ? NULL : a->pose, a->data);
  anim_inertializer_state_free(a->state);
  anim_pose_free(a->pose);
}

int anim_client_inertialize_transition_send(anim_client_t *client, const char *database,
                                            const anim_pose_source_t *source, const anim_pose_source_t *destination,
                                            const anim_inertializer_state_t *state, anim_inertialize_cb cb, void *data,
                                            uint64_t *out_id) {
  async_call_t *a = async_new(deliver_inertialize, (void (*)(void))cb, data);
  if (!a) return ANIM_ENOMEM;
  client->async = a;
  return async_finish(
      client, a, anim_client_inertialize_transition(client, database, source, destination, state, &a->state, 0), out_id);
}

int anim_client_inertialize_evaluate_send(anim_client_t *client, const char *database,
                                          const anim_inertializer_state_t *state, const anim_pose_source_t *input,
                                          float halflife, float t, anim_inertialize_cb cb, void *data, uint64_t *out_id) {
  async_call_t *a = async_new(deliver_inertialize, (void (*)(void))cb, data);
  if (!a) return ANIM_ENOMEM;
  client->async = a;
  return async_finish(
      client, a, anim_client_inertialize_evaluate(client, database, state, input, halflife, t, &a->state, &a->pose, 0),
      out_id);
}

static void deliver_cost(anim_client_t *client, uint64_t id, int status, async_call_t *a) {
  if (a->cb) ((anim_transition_cost_cb)a->cb)(client, id, status, status ? NULL : a->cost, a->data);
  anim_transition_cost_free(a->cost);
}

int anim_client_transition_cost_send(anim_client_t *client, const char *database, const anim_pose_source_t *source,
                                     const anim_pose_source_t *destination, float halflife, const char *const *bones,
                                     int nbones, anim_transition_cost_cb cb, void *data, uint64_t *out_id) {
  async_call_t *a = async_new(deliver_cost, (void (*)(void))cb, data);
  if (!a) return ANIM_ENOMEM;
  client->async = a;
  return async_finish(
      client, a, anim_client_transition_cost(client, database, source, destination, halflife, bones, nbones, &a->cost, 0),
      out_id);
}

static void deliver_tuning(anim_client_t *client, uint64_t id, int status, async_call_t *a) {
  if (a->cb) ((anim_spring_cb)a->cb)(client, id, status, status ? NULL : &a->tuning, a->data);
}

int anim_client_spring_halflife_send(anim_client_t *client, double alpha, double t, double x0, double v0, double mass,
                                     anim_spring_cb cb, void *data, uint64_t *out_id) {
  async_call_t *a = async_new(deliver_tuning, (void (*)(void))cb, data);
  if (!a) return ANIM_ENOMEM;
  client->async = a;
  return async_finish(client, a, anim_client_spring_halflife(client, alpha, t, x0, v0, mass, &a->tuning, 0), out_id);
}

int anim_client_spring_to_constraint_send(anim_client_t *client, double stiffness, double damping, double dt,
                                          anim_spring_cb cb, void *data, uint64_t *out_id) {
  async_call_t *a = async_new(deliver_tuning, (void (*)(void))cb, data);
  if (!a) return ANIM_ENOMEM;
  client->async = a;
  return async_finish(client, a, anim_client_spring_to_constraint(client, stiffness, damping, dt, &a->tuning, 0), out_id);
}

int anim_client_spring_from_constraint_send(anim_client_t *client, double erp, double cfm, double dt, anim_spring_cb cb,
                                            void *data, uint64_t *out_id) {
  async_call_t *a = async_new(deliver_tuning, (void (*)(void))cb, data);
  if (!a) return ANIM_ENOMEM;
  client->async = a;
  return async_finish(client, a, anim_client_spring_from_constraint(client, erp, cfm, dt, &a->tuning, 0), out_id);
}
