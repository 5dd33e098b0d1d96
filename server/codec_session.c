/* codec_session.c: hello, ping, server_stats and shutdown on the wire (see codec.h). */
#include <string.h>
#include "anim_error.h"
#include "codec_internal.h"
#include "graphs.h"
#include "machine/machine_character.h"
#include "machines.h"
#include "fit_models.h"
#include "pose/world.h"
#include "request_fit.h"
#include "request_physics.h"

#define CLIENT_NAME_MAX 256
#define TOKEN_MAX 127

int srv_decode_hello(srv_decoder_t *d, const Animserver__HelloRequest *in, srv_request_t *out) {
  srv_hello_request_t *hello = &out->body.hello;
  const char *name = in->client_name ? in->client_name : "";
  const char *token = in->auth_token ? in->auth_token : "";
  int rc = srv_check_max(d, "client_name", strlen(name), CLIENT_NAME_MAX, ANIM_EINVAL);
  if (!rc) rc = srv_check_max(d, "auth_token", strlen(token), TOKEN_MAX, ANIM_EINVAL);
  hello->protocol_version = in->protocol_version;
  hello->client_name = name;
  hello->auth_token = token;
  return rc;
}

int srv_decode_ping(srv_decoder_t *d, const Animserver__PingRequest *in, srv_request_t *out) {
  out->body.ping.payload = in->payload.data;
  out->body.ping.payload_len = in->payload.len;
  return 0;
}

int srv_decode_server_stats(srv_decoder_t *d, const Animserver__ServerStatsRequest *in, srv_request_t *out) {
  return 0;
}
int srv_decode_shutdown(srv_decoder_t *d, const Animserver__ShutdownRequest *in, srv_request_t *out) { return 0; }

void srv_encode_hello(srv_encoder_t *e, const srv_response_t *in, Animserver__Response *out) {
  const srv_hello_response_t *h = &in->body.hello;
  Animserver__HelloResponse *hello = SRV_ENCODER_NEW(e, Animserver__HelloResponse, ANIMSERVER__HELLO_RESPONSE__INIT);
  Animserver__Limits *limits = SRV_ENCODER_NEW(e, Animserver__Limits, ANIMSERVER__LIMITS__INIT);
  if (!hello || !limits) return;
  hello->protocol_version = h->protocol_version;
  hello->server_version = (char *)h->server_version;
  hello->n_capabilities = (size_t)h->ncapabilities;
  hello->capabilities = (char **)h->capabilities;
  limits->max_frame_bytes = h->limits.max_frame_bytes;
  limits->max_in_flight = h->limits.max_in_flight;
  limits->max_batch = h->limits.max_batch;
  limits->max_k = h->limits.max_k;
  limits->output_soft_limit_bytes = h->limits.output_soft_limit;
  limits->output_hard_limit_bytes = h->limits.output_hard_limit;
  limits->max_characters = h->limits.max_characters;
  limits->tick_rate = h->limits.tick_rate;
  limits->max_pose_frames = h->limits.max_pose_frames;
  limits->decode_budget_bytes = h->limits.decode_budget_bytes;
  limits->stream_soft_limit_bytes = h->limits.stream_soft_limit;
  limits->max_characters_total = h->limits.max_characters_total;
  limits->max_subscriptions = h->limits.max_subscriptions;
  limits->max_ids = h->limits.max_ids;
  limits->max_string_bytes = SRV_MAX_STRING;
  limits->max_machines = SRV_MACHINES_MAX;
  limits->max_machine_bytes = SRV_MACHINE_MAX_TEXT;
  limits->max_events_waiting = ANIM_MACHINE_QUEUE;
  limits->max_path_points = ANIM_PATH_MAX_POINTS;
  limits->max_query_seconds = SRV_QUERY_MAX_SECONDS;
  limits->max_graph_builds = SRV_GRAPH_MAX_BUILDS;
  limits->max_path_expansions = SRV_PATH_MAX_EXPANSIONS;
  limits->max_align_points = SRV_ALIGN_MAX_POINTS;
  limits->max_trackers = SRV_MAX_TRACKERS;
  limits->fit_models_per_database = SRV_FIT_MODELS_PER_DATABASE;
  limits->world_limit = ANIM_WORLD_LIMIT;
  limits->max_trackers_ahead = SRV_TRACKERS_MAX_AHEAD;
  limits->max_trackers_waiting = SRV_TRACKERS_MAX_PENDING;
  limits->max_push_ahead = SRV_PUSH_MAX_AHEAD;
  limits->max_pushes_pending = SRV_PUSHES_MAX_PENDING;
  hello->limits = limits;
  hello->connection_id = h->connection_id;
  hello->admin = h->admin;
  out->body_case = ANIMSERVER__RESPONSE__BODY_HELLO;
  out->hello = hello;
}

void srv_encode_ping(srv_encoder_t *e, const srv_response_t *in, Animserver__Response *out) {
  Animserver__PingResponse *ping = SRV_ENCODER_NEW(e, Animserver__PingResponse, ANIMSERVER__PING_RESPONSE__INIT);
  if (!ping) return;
  ping->payload.data = (uint8_t *)in->body.ping.payload;
  ping->payload.len = in->body.ping.payload_len;
  ping->server_time_us = in->body.ping.server_time_us;
  out->body_case = ANIMSERVER__RESPONSE__BODY_PING;
  out->ping = ping;
  /* payload (tag, length) 6 + bytes, server_time_us (tag, varint) 11. */
  srv_encoder_bound(e, &animserver__ping_response__descriptor, 2, SRV_RESPONSE_FRAMING_BOUND + 17, ping->payload.len);
}

void srv_encode_server_stats(srv_encoder_t *e, const srv_response_t *in, Animserver__Response *out) {
  const srv_server_stats_response_t *st = &in->body.server_stats;
  Animserver__ServerStatsResponse *m =
      SRV_ENCODER_NEW(e, Animserver__ServerStatsResponse, ANIMSERVER__SERVER_STATS_RESPONSE__INIT);
  if (!m) return;
  m->uptime_us = st->uptime_us, m->connections = st->connections, m->requests = st->requests;
  m->errors = st->errors, m->characters = st->characters, m->tick_rate = st->tick_rate;
  m->ticks = st->ticks, m->ticks_late = st->ticks_late, m->ticks_skipped = st->ticks_skipped;
  m->lateness_p50_us = st->lateness_p50_us, m->lateness_p99_us = st->lateness_p99_us;
  m->lateness_max_us = st->lateness_max_us;
  m->tick_work_p50_us = st->work_p50_us, m->tick_work_p99_us = st->work_p99_us;
  m->frames_sent = st->frames_sent, m->frames_dropped = st->frames_dropped, m->stream_bytes = st->stream_bytes;
  m->poses_sent = st->poses_sent, m->cpu_user_s = st->cpu_user_s, m->cpu_system_s = st->cpu_system_s;
  m->rss_bytes = st->rss_bytes, m->slow_subscribers_closed = st->slow_subscribers_closed;
  m->character_bytes = st->character_bytes, m->pose_buffer_bytes = st->pose_buffer_bytes;
  m->physics_resets = st->physics_resets;
  out->body_case = ANIMSERVER__RESPONSE__BODY_SERVER_STATS;
  out->server_stats = m;
}

void srv_encode_shutdown(srv_encoder_t *e, const srv_response_t *in, Animserver__Response *out) {
  Animserver__ShutdownResponse *m =
      SRV_ENCODER_NEW(e, Animserver__ShutdownResponse, ANIMSERVER__SHUTDOWN_RESPONSE__INIT);
  if (!m) return;
  out->body_case = ANIMSERVER__RESPONSE__BODY_SHUTDOWN;
  out->shutdown = m;
}
