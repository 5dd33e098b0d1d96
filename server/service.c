/* service.c: session handlers (hello, ping) and the dispatch table. */
#include <stdio.h>
#include <time.h>
#include "anim_error.h"
#include "service.h"

#define ANIM_SEARCH_MAX_K_WIRE 1024

static uint64_t wall_clock_us(void) {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  return (uint64_t)now.tv_sec * 1000000u + (uint64_t)now.tv_nsec / 1000u;
}

static int handle_hello(const anim_service_ctx_t *ctx, const anim_request_t *request, anim_response_t *out) {
  anim_hello_response_t *hello = &out->body.hello;
  const anim_config_t *c = ctx->config;
  /* Version 0 means "unspecified"; a newer client is told ours and decides. */
  if (request->body.hello.protocol_version > ANIM_PROTOCOL_VERSION + 100u)
    return anim_response_fail(out, ANIM_EVERSION, "protocol version %u is not supported (server speaks %d)",
                              request->body.hello.protocol_version, ANIM_PROTOCOL_VERSION);
  hello->protocol_version = ANIM_PROTOCOL_VERSION;
  hello->server_version = ANIM_VERSION;
  hello->ncapabilities = 0;
  hello->capabilities[hello->ncapabilities++] = "ping";
  hello->capabilities[hello->ncapabilities++] = "pipelining";
  hello->limits.max_frame_bytes = c->max_frame_bytes;
  hello->limits.max_in_flight = c->max_in_flight;
  hello->limits.max_batch = c->max_batch;
  hello->limits.max_k = ANIM_SEARCH_MAX_K_WIRE;
  hello->limits.output_soft_limit = c->output_soft_limit;
  hello->limits.output_hard_limit = c->output_hard_limit;
  hello->connection_id = ctx->connection_id;
  return 0;
}

static int handle_ping(const anim_service_ctx_t *ctx, const anim_request_t *request, anim_response_t *out) {
  out->body.ping.payload = request->body.ping.payload;
  out->body.ping.payload_len = request->body.ping.payload_len;
  out->body.ping.server_time_us = wall_clock_us();
  return 0;
}

static const anim_service_t services[ANIM_REQUEST_TYPE_COUNT] = {
    [ANIM_REQUEST_HELLO] = {"hello", handle_hello, 0},
    [ANIM_REQUEST_PING] = {"ping", handle_ping, 0},
};

const anim_service_t *anim_service_for(anim_request_type_t type) {
  return (unsigned)type < ANIM_REQUEST_TYPE_COUNT ? &services[type] : NULL;
}
