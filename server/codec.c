/* codec.c: framed protobuf <-> anim_request_t / anim_response_t (see codec.h). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "animserver.pb-c.h"
#include "codec.h"
#include "frame.h"

#define CLIENT_NAME_MAX 256

/* ---- budgeted allocator ---------------------------------------------------- */

typedef struct {
  size_t used, limit;
  int exceeded;
} budget_t;

/* Each block carries its size in front so frees give the budget back. */
typedef union {
  size_t size;
  max_align_t align;
} block_header_t;

static void *budget_alloc(void *data, size_t size) {
  budget_t *budget = data;
  if (size > budget->limit - budget->used) {
    budget->exceeded = 1;
    return NULL;
  }
  block_header_t *block = malloc(sizeof *block + size);
  if (!block) return NULL;
  block->size = size;
  budget->used += size;
  return block + 1;
}

static void budget_free(void *data, void *pointer) {
  if (!pointer) return;
  budget_t *budget = data;
  block_header_t *block = (block_header_t *)pointer - 1;
  budget->used -= block->size;
  free(block);
}

/* ---- decoding ------------------------------------------------------------------ */

/* Reads field 1 (the id) of a Request without a full decode, so that even a
 * request that fails to decode can be answered by id. 0 when absent. */
static uint64_t peek_request_id(const uint8_t *frame, size_t len) {
  size_t pos = 0;
  while (pos < len) {
    uint64_t key, value;
    int n = anim_varint_decode(frame + pos, len - pos, &key);
    if (n <= 0) return 0;
    pos += (size_t)n;
    switch (key & 7) {
    case 0:
      n = anim_varint_decode(frame + pos, len - pos, &value);
      if (n <= 0) return 0;
      if (key >> 3 == 1) return value;
      pos += (size_t)n;
      break;
    case 1: pos += 8; break;
    case 2:
      n = anim_varint_decode(frame + pos, len - pos, &value);
      if (n <= 0 || value > len) return 0;
      pos += (size_t)n + (size_t)value;
      break;
    case 5: pos += 4; break;
    default: return 0;
    }
  }
  return 0;
}

static int fail(char *err, int errlen, int code, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int fail(char *err, int errlen, int code, const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  vsnprintf(err, (size_t)errlen, fmt, args);
  va_end(args);
  return code;
}

static int convert_hello(const Animserver__HelloRequest *in, anim_hello_request_t *out, char *err, int errlen) {
  const char *name = in->client_name ? in->client_name : "";
  if (strlen(name) > CLIENT_NAME_MAX)
    return fail(err, errlen, ANIM_EINVAL, "hello.client_name: longer than %d bytes", CLIENT_NAME_MAX);
  out->protocol_version = in->protocol_version;
  out->client_name = name;
  return 0;
}

static int convert_request(const Animserver__Request *in, anim_request_t *out, char *err, int errlen) {
  switch (in->body_case) {
  case ANIMSERVER__REQUEST__BODY_HELLO:
    out->type = ANIM_REQUEST_HELLO;
    return convert_hello(in->hello, &out->body.hello, err, errlen);
  case ANIMSERVER__REQUEST__BODY_PING:
    out->type = ANIM_REQUEST_PING;
    out->body.ping.payload = in->ping->payload.data;
    out->body.ping.payload_len = in->ping->payload.len;
    return 0;
  default:
    return fail(err, errlen, ANIM_EUNSUPPORTED, "request has no body, or one this server does not know");
  }
}

int anim_codec_decode_request(const uint8_t *frame, size_t len, size_t budget_bytes, anim_request_t *out,
                              char *err, int errlen) {
  memset(out, 0, sizeof *out);
  out->id = peek_request_id(frame, len);
  budget_t *budget = calloc(1, sizeof *budget);
  if (!budget) return fail(err, errlen, ANIM_ENOMEM, "out of memory");
  budget->limit = budget_bytes;
  out->budget = budget;
  ProtobufCAllocator allocator = {budget_alloc, budget_free, budget};
  Animserver__Request *request = animserver__request__unpack(&allocator, len, frame);
  if (!request) {
    if (budget->exceeded)
      return fail(err, errlen, ANIM_ELIMIT, "request needs more than %zu bytes to decode", budget_bytes);
    return fail(err, errlen, ANIM_EPROTO, "frame is not a valid Request message");
  }
  out->decoded = request;
  out->id = request->id;
  return convert_request(request, out, err, errlen);
}

void anim_request_release(anim_request_t *request) {
  if (request->decoded) {
    ProtobufCAllocator allocator = {budget_alloc, budget_free, request->budget};
    animserver__request__free_unpacked(request->decoded, &allocator);
  }
  free(request->budget);
  request->decoded = NULL;
  request->budget = NULL;
}

int anim_response_fail(anim_response_t *response, int code, const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  vsnprintf(response->message, sizeof response->message, fmt, args);
  va_end(args);
  response->error = code;
  return code;
}

/* ---- encoding ------------------------------------------------------------------ */

static const char *const request_type_names[ANIM_REQUEST_TYPE_COUNT] = {"hello", "ping"};

const char *anim_request_type_name(anim_request_type_t type) {
  return (unsigned)type < ANIM_REQUEST_TYPE_COUNT ? request_type_names[type] : "unknown";
}

/* Encodes the protobuf message as varint(length) + bytes after headroom. */
static int encode_framed(const ProtobufCMessage *message, size_t headroom, uint8_t **out_buffer, size_t *out_len) {
  size_t size = protobuf_c_message_get_packed_size(message);
  size_t prefix = anim_varint_size(size);
  uint8_t *buffer = malloc(headroom + prefix + size);
  if (!buffer) return ANIM_ENOMEM;
  anim_varint_encode(size, buffer + headroom);
  protobuf_c_message_pack(message, buffer + headroom + prefix);
  *out_buffer = buffer;
  *out_len = prefix + size;
  return 0;
}

int anim_codec_encode_response(const anim_response_t *in, size_t headroom, uint8_t **out_buffer, size_t *out_len) {
  Animserver__ServerMessage message = ANIMSERVER__SERVER_MESSAGE__INIT;
  Animserver__Response response = ANIMSERVER__RESPONSE__INIT;
  Animserver__Error error = ANIMSERVER__ERROR__INIT;
  Animserver__HelloResponse hello = ANIMSERVER__HELLO_RESPONSE__INIT;
  Animserver__Limits limits = ANIMSERVER__LIMITS__INIT;
  Animserver__PingResponse ping = ANIMSERVER__PING_RESPONSE__INIT;

  message.kind_case = ANIMSERVER__SERVER_MESSAGE__KIND_RESPONSE;
  message.response = &response;
  response.id = in->id;
  if (in->error) {
    error.code = (Animserver__ErrorCode)(-in->error);
    error.message = (char *)in->message;
    response.error = &error;
    return encode_framed(&message.base, headroom, out_buffer, out_len);
  }
  switch (in->type) {
  case ANIM_REQUEST_HELLO: {
    const anim_hello_response_t *h = &in->body.hello;
    hello.protocol_version = h->protocol_version;
    hello.server_version = (char *)h->server_version;
    hello.n_capabilities = (size_t)h->ncapabilities;
    hello.capabilities = (char **)h->capabilities;
    limits.max_frame_bytes = h->limits.max_frame_bytes;
    limits.max_in_flight = h->limits.max_in_flight;
    limits.max_batch = h->limits.max_batch;
    limits.max_k = h->limits.max_k;
    limits.output_soft_limit_bytes = h->limits.output_soft_limit;
    limits.output_hard_limit_bytes = h->limits.output_hard_limit;
    hello.limits = &limits;
    hello.connection_id = h->connection_id;
    response.body_case = ANIMSERVER__RESPONSE__BODY_HELLO;
    response.hello = &hello;
    break;
  }
  case ANIM_REQUEST_PING:
    ping.payload.data = (uint8_t *)in->body.ping.payload;
    ping.payload.len = in->body.ping.payload_len;
    ping.server_time_us = in->body.ping.server_time_us;
    response.body_case = ANIMSERVER__RESPONSE__BODY_PING;
    response.ping = &ping;
    break;
  case ANIM_REQUEST_TYPE_COUNT:
    break;
  }
  return encode_framed(&message.base, headroom, out_buffer, out_len);
}
