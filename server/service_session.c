/* service_session.c: hello and ping. */
#include <time.h>
#include "anim_error.h"
#include "search.h"
#include "connection.h"
#include "server.h"
#include "services.h"

static uint64_t wall_clock_us(void) {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  return (uint64_t)now.tv_sec * 1000000u + (uint64_t)now.tv_nsec / 1000u;
}

int srv_session_hello(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  srv_hello_response_t *hello = &out->body.hello;
  const srv_config_t *c = ctx->config;
  /* Version 0 means "unspecified"; a newer client is told ours and decides. */
  if (request->body.hello.protocol_version > ANIM_PROTOCOL_VERSION + 100u)
    return srv_response_fail(out, ANIM_EVERSION, "protocol version %u is not supported (server speaks %d)",
                              request->body.hello.protocol_version, ANIM_PROTOCOL_VERSION);
  static const char *const capabilities[] = {"ping",   "pipelining",  "databases",       "search",
                                             "batch_search", "pose", "inertialize", "transition_cost", "spring_tune",
                                             "characters", "stream", "stats"};
  hello->protocol_version = ANIM_PROTOCOL_VERSION;
  hello->server_version = ANIM_VERSION;
  hello->ncapabilities = 0;
  for (size_t i = 0; i < sizeof capabilities / sizeof capabilities[0]; i++)
    hello->capabilities[hello->ncapabilities++] = capabilities[i];
  hello->limits.max_frame_bytes = c->max_frame_bytes;
  hello->limits.max_in_flight = c->max_in_flight;
  hello->limits.max_batch = c->max_batch;
  hello->limits.max_k = ANIM_SEARCH_MAX_K;
  hello->limits.output_soft_limit = c->output_soft_limit;
  hello->limits.output_hard_limit = c->output_hard_limit;
  hello->limits.max_characters = c->max_characters_per_connection;
  hello->limits.tick_rate = (float)c->tick_rate;
  hello->connection_id = ctx->connection_id;
  hello->admin = ctx->connection && ctx->connection->admin;
  return 0;
}

int srv_session_shutdown(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  ctx->server->shutdown_requested = 1;
  return 0;
}

int srv_session_ping(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  out->body.ping.payload = request->body.ping.payload;
  out->body.ping.payload_len = request->body.ping.payload_len;
  out->body.ping.server_time_us = wall_clock_us();
  return 0;
}
