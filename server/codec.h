/*
 * codec.h: framed protobuf bytes <-> plain C requests and responses.
 *
 * Decoding runs protobuf-c through an allocator that charges every
 * allocation to a per-request budget, so a small frame cannot expand into
 * unbounded memory (protobuf-c 1.4 has no such limit of its own; the schema
 * has no recursive messages, so depth is bounded already). Every string
 * field of every request is checked in one place, on the raw bytes before
 * conversion (protobuf-c would cut a string at an embedded NUL): at most
 * SRV_MAX_STRING bytes, no NUL, valid UTF-8. Field checks that need no
 * server state (sizes, finiteness, name syntax) follow, and every error
 * message names the field as the proto spells it, with indices
 * ("batch_search.queries[2].features[3]"), the value and the rule it broke.
 *
 * The codec is split by area (codec_<area>.c: one decode and one encode
 * function per request type, dispatched from request_types.h) and by
 * direction for streams (codec_stream.c). It touches no server state:
 * encoding reads only the response (and the database it holds), so it runs
 * on any thread.
 */
#ifndef SRV_CODEC_H
#define SRV_CODEC_H

#include <stddef.h>
#include <pthread.h>
#include <stdint.h>
#include "buffer.h"
#include "request.h"

#define SRV_MAX_STRING 4096

/* Bounds the codec enforces while converting. */
typedef struct {
  size_t budget_bytes;      /* memory one request's decode and conversion may use */
  uint32_t max_batch;       /* queries in one batch search */
  uint32_t max_k;           /* results per query */
  uint32_t max_pose_frames; /* frames in one pose request */
  uint32_t max_ids;         /* characters, placements or inputs in one request */
} srv_codec_limits_t;

/* Decodes one frame into out_request. On failure returns ANIM_EPROTO (not a
 * Request), ANIM_ELIMIT (over budget or a limit) or a validation code, fills
 * err (naming the field), and sets out_request->id (and ->type when known)
 * so the error can still be answered. Release with srv_request_release in
 * every case. */
int srv_codec_decode_request(const uint8_t *frame, size_t len, const srv_codec_limits_t *limits,
                             srv_request_t *out_request, char *err, int errlen);
void srv_request_release(srv_request_t *request);

/* A connection's decode memory. Requests decoded from it take their memory
 * (the protobuf message, the converted arrays, the budget) from one block
 * by bumping a pointer, and the block starts over when no request decoded
 * from it is alive: pipelined requests answered on the loop, each released
 * before the next is decoded, allocate nothing. A request kept longer (on
 * the pool, parked) pins its block; when it runs short the next request
 * starts a new one, and the pinned one is freed by its last release.
 * Loop thread, the releases of its requests included. */
typedef struct srv_decode_arena srv_decode_arena_t;
srv_decode_arena_t *srv_decode_arena_new(void);
/* The connection is done with it; blocks still pinned go with their last request. */
void srv_decode_arena_free(srv_decode_arena_t *arena);
/* srv_codec_decode_request from arena (NULL: malloc, as above). */
int srv_codec_decode_request_in(const uint8_t *frame, size_t len, const srv_codec_limits_t *limits,
                                srv_decode_arena_t *arena, srv_request_t *out_request, char *err, int errlen);

/* Whether a frame is a search, read from its wire bytes without decoding
 * it (any thread, no allocation): 1 when it is a Request with exactly one
 * search body, no other body and exactly one database name in it, whose
 * bytes (in the frame, not terminated) it gives; 0 for anything else. So
 * the dispatcher can send a pipelined search to be decoded off the loop
 * with its database already found; the full decode has the last word (a
 * frame that peeks as a search may still be refused). */
int srv_codec_peek_search(const uint8_t *frame, size_t len, const uint8_t **out_name, size_t *out_len);

/* A ping read from its frame's wire bytes instead of decoded (any thread,
 * no allocation): 1 when the frame is a Request of exactly one id (not 0)
 * and exactly one ping body holding at most one payload and nothing else, and
 * decoding it would fit limits' budget; out_request is then what
 * srv_codec_decode_request_in would give, its payload pointing into frame
 * (valid while frame is), and needs no release. 0 for anything else: decode
 * it (the decoder judges every other frame, well-formed or not). Pipelined
 * pings were a tenth of their CPU in protobuf-c's unpack and our decode. */
int srv_codec_peek_ping(const uint8_t *frame, size_t len, const srv_codec_limits_t *limits,
                        srv_request_t *out_request);

/* Encodes response as one framed ServerMessage into a new buffer (refs 1,
 * the caller's). 0 or ANIM_ENOMEM. Any thread. */
int srv_codec_encode_response(const srv_response_t *response, srv_buffer_t **out_buffer);
/* Scratch an encoding keeps for the next ones: a response's largest heap
 * block of protobuf-c messages (up to 256 KiB; a search's matches with their
 * poses), up to SRV_ENCODER_SPARES of them, shared by every thread that
 * encodes with it (under its lock: a batch of searches runs on whichever
 * pool thread is free, and a thread that had not encoded a large response
 * would allocate its block again). Owned by the caller (the dispatcher);
 * srv_encoder_spares_init, then srv_encoder_spares_close once no encoding
 * uses it. */
#define SRV_ENCODER_SPARES 4
typedef struct srv_encoder_spares {
  pthread_mutex_t lock;
  void *blocks[SRV_ENCODER_SPARES];
  int n;
} srv_encoder_spares_t;
void srv_encoder_spares_init(srv_encoder_spares_t *spares);
void srv_encoder_spares_close(srv_encoder_spares_t *spares);

/* The same, a small answer's buffer from pool (buffer.h: the pool's thread
 * only; NULL: malloc) and the encoder's scratch from spares (any thread;
 * NULL: allocated and freed). */
int srv_codec_encode_response_in(const srv_response_t *response, srv_buffer_pool_t *pool,
                                 srv_encoder_spares_t *spares, srv_buffer_t **out_buffer);
/* The same appended after the bytes *io holds (NULL: a new buffer), growing
 * it when needed; the caller must be its only holder. Several answers in one
 * buffer go out as one piece. 0 or ANIM_ENOMEM (*io keeps what it had). Any thread. */
int srv_codec_append_response(const srv_response_t *response, srv_buffer_t **io);
int srv_codec_append_response_in(const srv_response_t *response, srv_encoder_spares_t *spares, srv_buffer_t **io);

/* One character's pose in a stream frame: pointers into its pose record. */
typedef struct {
  uint64_t character;
  uint32_t frame;
  const float *positions; /* ENCODING_FLOAT: npositions floats */
  size_t npositions;
  const float *rotations; /* ENCODING_FLOAT: nrotations floats */
  size_t nrotations;
  const uint8_t *quantized; /* ENCODING_QUANTIZED */
  size_t quantized_len;
  const float *global_positions; /* NULL, or nglobal floats */
  size_t nglobal;
  uint32_t contacts;
  int transition;
  /* Machine characters' state path (depth 0 for the others): indices,
   * seconds in each, and, when it changed this tick, names. */
  int depth;
  const uint32_t *state_path;
  const float *state_times;
  int state_changed;
  char *const *state_names;
  int physics; /* MODE_PHYSICAL: the proto's PhysicsState (0: none) */
} srv_stream_pose_t;

/* A character that came into a region subscription's area: what a client
 * needs to draw it (database name, its content version, bones). */
typedef struct {
  uint64_t character;
  const char *database;
  uint64_t version;
  uint32_t bones;
} srv_stream_entered_t;

typedef struct {
  uint64_t subscription, tick, server_time_us, dropped;
  int encoding; /* srv_encoding_t */
  float dt;
  const srv_stream_pose_t *poses;
  int nposes;
  const uint64_t *gone;
  int ngone;
  const srv_stream_entered_t *entered; /* region subscriptions */
  int nentered;
  const uint64_t *left;
  int nleft;
  const uint8_t *replica; /* ENCODING_REPLICATED: the records (stream_replica.h) */
  size_t replica_len;
} srv_stream_frame_t;

/* What encoding a stream frame needs besides the output: grown to the
 * largest frame seen, kept by the caller across ticks (no allocation per
 * tick in steady state). Zero-initialize; free with srv_stream_scratch_free. */
typedef struct {
  void *poses;    /* protobuf CharacterPose structs */
  void *pointers; /* and the array pointing at them */
  size_t capacity;
  void *entered;  /* protobuf CharacterEntered structs, and their pointers */
  void *entered_pointers;
  size_t entered_capacity;
} srv_stream_scratch_t;

/* Encodes a stream frame as one framed ServerMessage into *io_buffer,
 * growing it when needed (NULL: a new one); the caller must be its only
 * holder. 0 or ANIM_ENOMEM. Any thread. */
int srv_codec_encode_stream(const srv_stream_frame_t *frame, srv_stream_scratch_t *scratch,
                            srv_buffer_t **io_buffer);
void srv_stream_scratch_free(srv_stream_scratch_t *scratch);
/* Heap bytes the scratch holds (memory accounting). */
size_t srv_stream_scratch_bytes(const srv_stream_scratch_t *scratch);

#endif
