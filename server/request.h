/*
 * request.h: requests and responses as plain C structs.
 *
 * The codec (codec.c) turns a validated protobuf Request into an
 * anim_request_t and an anim_response_t into framed protobuf bytes; services
 * never see protobuf-c types. Strings and byte views in a request point into
 * the decoded message and live as long as the request (anim_request_release).
 */
#ifndef ANIM_REQUEST_H
#define ANIM_REQUEST_H

#include <stddef.h>
#include <stdint.h>

#define ANIM_ERROR_MESSAGE_MAX 256
#define ANIM_MAX_CAPABILITIES 16

typedef enum {
  ANIM_REQUEST_HELLO = 0,
  ANIM_REQUEST_PING,
  ANIM_REQUEST_TYPE_COUNT
} anim_request_type_t;

typedef struct {
  uint32_t protocol_version;
  const char *client_name; /* NUL-terminated, <= 256 bytes */
} anim_hello_request_t;

typedef struct {
  const uint8_t *payload;
  size_t payload_len;
} anim_ping_request_t;

typedef struct {
  uint64_t id;
  anim_request_type_t type;
  union {
    anim_hello_request_t hello;
    anim_ping_request_t ping;
  } body;
  void *decoded; /* the codec's message; owns what the views point to */
  void *budget;  /* the allocator state that decoded it */
} anim_request_t;

typedef struct {
  uint32_t max_frame_bytes, max_in_flight, max_batch, max_k;
  uint64_t output_soft_limit, output_hard_limit;
} anim_limits_t;

typedef struct {
  uint32_t protocol_version;
  const char *server_version;
  const char *capabilities[ANIM_MAX_CAPABILITIES];
  int ncapabilities;
  anim_limits_t limits;
  uint64_t connection_id;
} anim_hello_response_t;

typedef struct {
  const uint8_t *payload; /* may point into the request */
  size_t payload_len;
  uint64_t server_time_us;
} anim_ping_response_t;

typedef struct {
  uint64_t id;
  anim_request_type_t type;
  int error; /* 0, or an ANIM_E* code: then only message is sent */
  char message[ANIM_ERROR_MESSAGE_MAX];
  union {
    anim_hello_response_t hello;
    anim_ping_response_t ping;
  } body;
} anim_response_t;

/* Sets response->error and a formatted message; returns code (for `return`). */
int anim_response_fail(anim_response_t *response, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
