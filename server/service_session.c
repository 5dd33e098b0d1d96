/* service_session.c: hello, ping, server_stats and shutdown. */
#include <time.h>
#include "anim_error.h"
#include "metrics.h"
#include "search/search.h"
#include "service.h"

/* The oldest protocol version this server still answers (hello with 0: unspecified). */
#define PROTOCOL_VERSION_MIN 1

static uint64_t wall_clock_us(void) {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  return (uint64_t)now.tv_sec * 1000000u + (uint64_t)now.tv_nsec / 1000u;
}

static void fill_limits(const srv_config_t *c, srv_limits_t *out) {
  out->max_frame_bytes = c->max_frame_bytes;
  out->max_in_flight = c->max_in_flight;
  out->max_batch = c->max_batch;
  out->max_k = ANIM_SEARCH_MAX_K;
  out->max_pose_frames = c->max_pose_frames;
  out->decode_budget_bytes = c->decode_budget_bytes;
  out->output_soft_limit = c->output_soft_limit;
  out->output_hard_limit = c->output_hard_limit;
  out->stream_soft_limit = c->stream_soft_limit;
  out->max_characters = c->max_characters_per_connection;
  out->max_characters_total = c->max_characters;
  out->max_subscriptions = SRV_MAX_SUBSCRIPTIONS;
  out->max_ids = c->max_ids_per_request;
  out->tick_rate = (float)c->tick_rate;
}

static int hello(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  srv_hello_response_t *h = &out->body.hello;
  uint32_t asked = request->body.hello.protocol_version;
  if (asked != 0 && (asked < PROTOCOL_VERSION_MIN || asked > ANIM_PROTOCOL_VERSION))
    return srv_response_fail(out, ANIM_EVERSION,
                             "hello.protocol_version = %u: this server speaks versions %d to %d (0: unspecified)",
                             asked, PROTOCOL_VERSION_MIN, ANIM_PROTOCOL_VERSION);
  static const char *const capabilities[] = {"ping",       "pipelining",  "databases",       "search",
                                             "batch_search", "pose",      "inertialize",     "transition_cost",
                                             "spring_tune", "characters", "stream",          "stats",
                                             "machines",    "graphs",     "align",           "fit_pose",
                                             "trackers"};
  h->protocol_version = ANIM_PROTOCOL_VERSION;
  h->server_version = ANIM_VERSION;
  for (size_t i = 0; i < sizeof capabilities / sizeof capabilities[0]; i++)
    h->capabilities[h->ncapabilities++] = capabilities[i];
  /* MODE_LEARNED: on database lmm (--lmm) or any database with networks trained on it. */
  h->capabilities[h->ncapabilities++] = "learned";
  fill_limits(ctx->env->config, &h->limits);
  h->connection_id = ctx->connection_id;
  h->admin = ctx->admin;
  return 0;
}

static int ping(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  /* Pings that arrived in one read (one received_ns) are answered together:
   * one wall-clock read serves them all. */
  static _Thread_local uint64_t read_ns, read_wall_us;
  if (!request->received_ns || request->received_ns != read_ns)
    read_wall_us = wall_clock_us(), read_ns = request->received_ns;
  out->body.ping.payload = request->body.ping.payload;
  out->body.ping.payload_len = request->body.ping.payload_len;
  out->body.ping.server_time_us = read_wall_us;
  return 0;
}

/* Marks the server for a graceful shutdown once this answer is out. */
static int shutdown_server(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  out->after |= SRV_AFTER_SHUTDOWN;
  return 0;
}

static int server_stats(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  const srv_service_env_t *env = ctx->env;
  const srv_counters_t *k = env->counters;
  srv_server_stats_response_t *s = &out->body.server_stats;
  srv_scheduler_stats_t t;
  srv_scheduler_stats(&env->crowd->scheduler, &t);
  s->uptime_us = (srv_scheduler_now_ns() - env->start_ns) / 1000u;
  s->connections = k->connections;
  s->characters = env->crowd->count;
  s->requests = k->requests, s->errors = k->errors;
  s->tick_rate = (float)env->config->tick_rate;
  s->ticks = t.ticks, s->ticks_late = t.late, s->ticks_skipped = t.skipped;
  s->lateness_p50_us = t.lateness_p50_ns / 1000u, s->lateness_p99_us = t.lateness_p99_ns / 1000u;
  s->lateness_max_us = t.lateness_max_ns / 1000u;
  s->work_p50_us = t.work_p50_ns / 1000u, s->work_p99_us = t.work_p99_ns / 1000u;
  s->frames_sent = k->frames_sent, s->frames_dropped = k->frames_dropped;
  s->stream_bytes = k->stream_bytes, s->poses_sent = k->poses_sent;
  s->slow_subscribers_closed = k->slow_subscribers_closed;
  srv_process_usage(&s->cpu_user_s, &s->cpu_system_s, &s->rss_bytes);
  s->character_bytes = srv_crowd_bytes(env->crowd);
  s->physics_resets = env->crowd->stats.physics_resets;
  srv_db_entry_t *def = srv_registry_acquire(env->registry, "default");
  if (def) {
    s->pose_buffer_bytes = srv_crowd_pose_buffer_bytes(&def->db);
    srv_db_entry_release(def);
  }
  return 0;
}

const srv_service_t srv_service_hello = {.handle = hello};
const srv_service_t srv_service_ping = {.handle = ping};
const srv_service_t srv_service_server_stats = {.handle = server_stats};
const srv_service_t srv_service_shutdown = {.handle = shutdown_server, .flags = SRV_SERVICE_ADMIN};
