/*
 * codec.h: framed protobuf bytes <-> plain C requests and responses.
 *
 * Decoding runs protobuf-c through an allocator that charges every
 * allocation to a per-request budget, so a small frame cannot expand into
 * unbounded memory (protobuf-c 1.4 has no such limit of its own; the schema
 * has no recursive messages, so depth is bounded already). Field checks that
 * need no server state (sizes, finiteness, string lengths) happen here, so
 * services receive validated structs.
 */
#ifndef SRV_CODEC_H
#define SRV_CODEC_H

#include <stddef.h>
#include <stdint.h>
#include "request.h"

/* Bounds the codec enforces while converting. */
typedef struct {
  size_t budget_bytes;  /* memory one request's decode and conversion may use */
  uint32_t max_batch;   /* queries in one batch search */
  uint32_t max_k;       /* results per query */
  uint32_t max_pose_frames; /* frames in one pose request */
} srv_codec_limits_t;

/* Decodes one frame into out_request. On failure returns ANIM_EPROTO (not a
 * Request), ANIM_ELIMIT (over budget or a limit) or a validation code, fills
 * err (naming the field), and sets out_request->id when the id could be read
 * (0 otherwise) so the error can still be answered. Release with
 * srv_request_release in every case. */
int srv_codec_decode_request(const uint8_t *frame, size_t len, const srv_codec_limits_t *limits,
                              srv_request_t *out_request, char *err, int errlen);
void srv_request_release(srv_request_t *request);

/* Encodes response as one framed ServerMessage into a fresh buffer of
 * *out_len bytes starting headroom bytes in (the caller's header, e.g. a
 * uv_write_t). Caller frees *out_buffer with free(). 0 or ANIM_ENOMEM.
 * Runs on the loop thread (it may read the registry and database entries
 * the response refers to). */
int srv_codec_encode_response(const srv_response_t *response, size_t headroom, uint8_t **out_buffer,
                               size_t *out_len);

/* One character's pose in a stream frame: pointers into its pose record. */
typedef struct {
  uint64_t character;
  uint32_t frame;
  const float *positions;      /* ENCODING_FLOAT: npositions floats */
  size_t npositions;
  const float *rotations;      /* ENCODING_FLOAT: nrotations floats */
  size_t nrotations;
  const uint8_t *quantized;    /* ENCODING_QUANTIZED */
  size_t quantized_len;
  const float *global_positions; /* NULL, or nglobal floats */
  size_t nglobal;
  uint32_t contacts;
  int transition;
} srv_stream_pose_t;

typedef struct {
  uint64_t subscription, tick, server_time_us, dropped;
  int encoding; /* srv_encoding_t */
  float dt;
  const srv_stream_pose_t *poses;
  int nposes;
  const uint64_t *gone;
  int ngone;
} srv_stream_frame_t;

/* Encodes a stream frame as one framed ServerMessage (any thread). Caller
 * frees *out_buffer. 0 or ANIM_ENOMEM. */
int srv_codec_encode_stream(const srv_stream_frame_t *frame, uint8_t **out_buffer, size_t *out_len);

/* Name of a request type for logs ("hello"). */
const char *srv_request_type_name(srv_request_type_t type);

#endif
