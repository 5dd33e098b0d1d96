/*
 * codec.c: the codec's entry points and what every area shares (see
 * codec.h): the budgeted allocator and arena, the string check on the raw
 * bytes, the decode and encode dispatch generated from request_types.h,
 * field paths and checks, and framing. What each request's fields mean is
 * in codec_<area>.c.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "codec_internal.h"
#include "fields.h"
#include "frame.h"
#include "registry.h"
#include "base/utf8.h"
#include "pose/world.h"

/* ---- budgeted allocator, and the connection's arena ------------------------- */

/* A block of a connection's arena (codec.h): requests bump-allocate from it
 * and count themselves in live; the block starts over when live is back to
 * zero and it is still its arena's current one, else the last release frees
 * it (owner NULL: the arena itself is gone). */
typedef struct arena_chunk {
  struct srv_decode_arena *owner;
  int live;
  size_t used, cap;
  max_align_t data[];
} arena_chunk_t;

struct srv_decode_arena {
  arena_chunk_t *current;
};

#define ARENA_CHUNK_BYTES ((size_t)64 * 1024)
/* A pinned block with less room than this is left for a new one. */
#define ARENA_CHUNK_MIN_FREE ((size_t)8 * 1024)

typedef struct {
  size_t used, limit;
  int exceeded;
  arena_chunk_t *chunk; /* NULL: every block from malloc */
  int foreign;          /* blocks from malloc although chunk is set (it was full) */
} budget_t;

/* Each block carries its size in front so frees give the budget back. */
typedef union {
  size_t size;
  max_align_t align;
} block_header_t;

static int charge(budget_t *budget, size_t size) {
  if (size > budget->limit - budget->used) {
    budget->exceeded = 1;
    return 0;
  }
  budget->used += size;
  return 1;
}

/* size bytes from the chunk, aligned like malloc's, or NULL when it is full. */
static void *chunk_take(arena_chunk_t *c, size_t size) {
  if (!c) return NULL;
  size_t align = sizeof(max_align_t), at = (c->used + align - 1) / align * align;
  if (at > c->cap || size > c->cap - at) return NULL;
  c->used = at + size;
  return (char *)c->data + at;
}

static int chunk_holds(const arena_chunk_t *c, const void *p) {
  return c && (const char *)p >= (const char *)c->data && (const char *)p < (const char *)c->data + c->cap;
}

static void chunk_release(arena_chunk_t *c) {
  if (--c->live > 0) return;
  if (c->owner && c->owner->current == c) c->used = 0; /* reused by the next request */
  else free(c);
}

srv_decode_arena_t *srv_decode_arena_new(void) { return calloc(1, sizeof(srv_decode_arena_t)); }

void srv_decode_arena_free(srv_decode_arena_t *arena) {
  if (!arena) return;
  arena_chunk_t *c = arena->current;
  if (c && c->live == 0) free(c);
  else if (c) c->owner = NULL;
  free(arena);
}

/* The block the next request decodes into (live counted), or NULL. */
static arena_chunk_t *arena_enter(srv_decode_arena_t *arena) {
  arena_chunk_t *c = arena->current;
  if (!c || (c->live > 0 && c->cap - c->used < ARENA_CHUNK_MIN_FREE)) {
    arena_chunk_t *fresh = malloc(sizeof *fresh + ARENA_CHUNK_BYTES);
    if (!fresh) return NULL;
    fresh->owner = arena, fresh->live = 0, fresh->used = 0, fresh->cap = ARENA_CHUNK_BYTES;
    if (c) c->owner = NULL; /* pinned: its last request frees it */
    arena->current = c = fresh;
  }
  c->live++;
  return c;
}

static void *budget_alloc(void *data, size_t size) {
  budget_t *budget = data;
  if (!charge(budget, size)) return NULL;
  block_header_t *block = budget->chunk ? chunk_take(budget->chunk, sizeof *block + size) : NULL;
  if (!block) {
    if (!(block = malloc(sizeof *block + size))) {
      budget->used -= size;
      return NULL;
    }
    if (budget->chunk) budget->foreign++;
  }
  block->size = size;
  return block + 1;
}

static void budget_free(void *data, void *pointer) {
  if (!pointer) return;
  budget_t *budget = data;
  block_header_t *block = (block_header_t *)pointer - 1;
  budget->used -= block->size;
  if (!chunk_holds(budget->chunk, block)) free(block);
}

/* ---- request arena: converted arrays, charged to the same budget ------------ */

typedef struct arena_block {
  struct arena_block *next;
  max_align_t data[];
} arena_block_t;

void *srv_decode_alloc(srv_decoder_t *d, size_t size) {
  srv_request_t *request = d->request;
  budget_t *budget = request->budget;
  if (budget->chunk && charge(budget, size)) {
    void *p = chunk_take(budget->chunk, size);
    if (p) return memset(p, 0, size);
    budget->used -= size;
  }
  arena_block_t *block = NULL;
  if (charge(budget, size) && !(block = calloc(1, sizeof *block + size))) budget->used -= size;
  if (!block) {
    srv_decode_fail(d, ANIM_ELIMIT, ": over the request memory budget (%zu bytes)", d->limits->budget_bytes);
    return NULL;
  }
  block->next = request->arena;
  request->arena = block;
  return block->data;
}

static void arena_free(arena_block_t *arena) {
  for (arena_block_t *b = arena, *next; b; b = next) {
    next = b->next;
    free(b);
  }
}

/* ---- field paths and checks ------------------------------------------------------ */

/* Appends n bytes of text to the path, truncated to fit (a path is built for
 * every field a request converts, so no formatted print here: it was a
 * sixth of a pipelined search's time). */
static void path_append(srv_decoder_t *d, const char *text, size_t n) {
  size_t room = sizeof d->path - 1 - d->len;
  if (n > room) n = room;
  memcpy(d->path + d->len, text, n);
  d->len += n;
  d->path[d->len] = '\0';
}

size_t srv_path_field(srv_decoder_t *d, const char *name) {
  size_t mark = d->len;
  if (d->len) path_append(d, ".", 1);
  path_append(d, name, strlen(name));
  return mark;
}

size_t srv_path_index(srv_decoder_t *d, size_t index) {
  size_t mark = d->len;
  char digits[24];
  size_t at = sizeof digits;
  digits[--at] = ']';
  do digits[--at] = (char)('0' + index % 10), index /= 10;
  while (index);
  digits[--at] = '[';
  path_append(d, digits + at, sizeof digits - at);
  return mark;
}

void srv_path_restore(srv_decoder_t *d, size_t mark) {
  d->len = mark;
  d->path[mark] = '\0';
}

int srv_decode_fail(srv_decoder_t *d, int code, const char *fmt, ...) {
  int n = snprintf(d->err, (size_t)d->errlen, "%s", d->path);
  if (n < 0 || n >= d->errlen) return code;
  va_list args;
  va_start(args, fmt);
  vsnprintf(d->err + n, (size_t)(d->errlen - n), fmt, args);
  va_end(args);
  return code;
}

/* Runs a check against path.field, then restores the path. */
#define WITH_FIELD(d, field, expr)                      \
  do {                                                  \
    size_t mark_ = (field) ? srv_path_field(d, field) : (d)->len; \
    int rc_ = (expr);                                   \
    if (rc_ == 0) srv_path_restore(d, mark_);           \
    return rc_;                                         \
  } while (0)

static int finite_array(srv_decoder_t *d, const float *values, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!isfinite(values[i]))
      return srv_decode_fail(d, ANIM_ENONFINITE, "[%zu] is %s: values must be finite", i,
                             isnan(values[i]) ? "NaN" : values[i] > 0 ? "+Inf" : "-Inf");
  return 0;
}

/* The checks below test first and build the field's path only to name a
 * failure: a pipelined search converts a dozen fields, each passing. */
int srv_check_finite(srv_decoder_t *d, const char *field, const float *values, size_t n) {
  size_t i = 0;
  while (i < n && isfinite(values[i])) i++;
  if (i == n) return 0;
  WITH_FIELD(d, field, finite_array(d, values, n));
}

static int finite_value(srv_decoder_t *d, double value) {
  if (isfinite(value)) return 0;
  return srv_decode_fail(d, ANIM_ENONFINITE, " is %s: must be finite",
                         isnan(value) ? "NaN" : value > 0 ? "+Inf" : "-Inf");
}

int srv_check_finite_value(srv_decoder_t *d, const char *field, double value) {
  if (isfinite(value)) return 0;
  WITH_FIELD(d, field, finite_value(d, value));
}

int srv_check_option(srv_decoder_t *d, const char *field, float value, float lo, float hi, const char *unit) {
  int rc = srv_check_finite_value(d, field, value);
  if (rc) return rc;
  if (value != 0.0f && !(value >= lo && value <= hi)) {
    size_t mark = srv_path_field(d, field);
    rc = srv_decode_fail(d, ANIM_EINVAL, " = %g: must be in [%g, %g] %s (0: the default)", value, lo, hi, unit);
    srv_path_restore(d, mark);
  }
  return rc;
}

/* One message for every world coordinate refused: the value, the limit and
 * where a client reads it. */
static int outside_world(srv_decoder_t *d, double value) {
  return srv_decode_fail(d, ANIM_EINVAL,
                         " = %g: outside the world (every coordinate within +-%g m, Limits.world_limit)", value,
                         (double)ANIM_WORLD_LIMIT);
}

static int world_value(srv_decoder_t *d, double value) {
  int rc = finite_value(d, value);
  return rc ? rc : fabs(value) <= ANIM_WORLD_LIMIT ? 0 : outside_world(d, value);
}

int srv_check_world(srv_decoder_t *d, const char *field, double value) {
  if (fabs(value) <= ANIM_WORLD_LIMIT) return 0; /* NaN compares false */
  WITH_FIELD(d, field, world_value(d, value));
}

static int world_array(srv_decoder_t *d, const float *values, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!(fabsf(values[i]) <= ANIM_WORLD_LIMIT)) {
      size_t mark = srv_path_index(d, i);
      int rc = world_value(d, values[i]);
      if (rc == 0) srv_path_restore(d, mark);
      return rc;
    }
  return 0;
}

int srv_check_world_array(srv_decoder_t *d, const char *field, const float *values, size_t n) {
  size_t i = 0;
  while (i < n && fabsf(values[i]) <= ANIM_WORLD_LIMIT) i++;
  if (i == n) return 0;
  WITH_FIELD(d, field, world_array(d, values, n));
}

static int at_most(srv_decoder_t *d, uint64_t value, uint64_t max, int code) {
  if (value <= max) return 0;
  return srv_decode_fail(d, code, " = %llu: at most %llu", (unsigned long long)value, (unsigned long long)max);
}

int srv_check_max(srv_decoder_t *d, const char *field, uint64_t value, uint64_t max, int code) {
  if (value <= max) return 0;
  WITH_FIELD(d, field, at_most(d, value, max, code));
}

int srv_check_frame(srv_decoder_t *d, const char *field, uint64_t value, int *out) {
  int rc = srv_check_max(d, field, value, INT32_MAX, ANIM_ERANGE);
  if (rc == 0) *out = (int)value;
  return rc;
}

static int plain_name(srv_decoder_t *d, const char *name) {
  if (!name || !*name) return srv_decode_fail(d, ANIM_EBADNAME, " is empty: a name is 1-63 characters");
  if (srv_db_name_validate(name) != 0)
    return srv_decode_fail(d, ANIM_EBADNAME,
                           " = \"%.64s\": not a plain name (1-63 of A-Z a-z 0-9 _ - ., not starting with '.')", name);
  return 0;
}

int srv_check_name(srv_decoder_t *d, const char *field, const char *name) {
  if (name && *name && srv_db_name_validate(name) == 0) return 0;
  WITH_FIELD(d, field, plain_name(d, name));
}

int srv_decode_database(srv_decoder_t *d, const char *field, const char *name) {
  int rc = srv_check_name(d, field, name);
  if (rc == 0) d->request->database = name, d->request->database_field = field;
  return rc;
}

/* ---- strings, on the raw bytes ---------------------------------------------------- */

static int check_string(srv_decoder_t *d, const uint8_t *s, size_t n) {
  if (n > SRV_MAX_STRING) return srv_decode_fail(d, ANIM_EBADNAME, ": %zu bytes, at most %d", n, SRV_MAX_STRING);
  for (size_t i = 0; i < n;) {
    if (s[i] == 0) return srv_decode_fail(d, ANIM_EBADNAME, ": byte %zu is NUL (strings must not contain NUL)", i);
    size_t len = anim_utf8_sequence(s + i, n - i);
    if (len == 0) return srv_decode_fail(d, ANIM_EBADNAME, ": byte %zu is not valid UTF-8", i);
    i += len;
  }
  return 0;
}

/* Whether a message of desc can hold a string at any depth: the walk below
 * skips those that cannot (a ping's body). Asked again each time, not kept:
 * a per-thread table of the answers saved at most 40 ns of a 650 ns search
 * decode and nothing measurable on a batch search of 256 queries or
 * set_inputs of 1,000 (thread CPU time, old and new builds alternately). */
static int may_hold_strings(const ProtobufCMessageDescriptor *desc, int depth) {
  int strings = depth > 32; /* no recursive messages in the schema; a bound all the same */
  for (unsigned f = 0; f < desc->n_fields && !strings; f++) {
    const ProtobufCFieldDescriptor *field = &desc->fields[f];
    strings = field->type == PROTOBUF_C_TYPE_STRING ||
              (field->type == PROTOBUF_C_TYPE_MESSAGE && may_hold_strings(field->descriptor, depth + 1));
  }
  return strings;
}

/* Walks a message's wire bytes (already known to unpack) with its
 * descriptor: every string field, at any depth, through check_string.
 * With paths 0 the field path is not built (a formatted print per field:
 * most of the time of a request with thousands of small messages); a
 * caller that gets an error runs it again with paths 1 to name the field. */
static int check_strings(srv_decoder_t *d, const ProtobufCMessageDescriptor *desc, const uint8_t *data, size_t len,
                         int paths) {
  uint32_t seen[64]; /* occurrences per field index, for "[i]" in paths */
  if (paths) memset(seen, 0, sizeof seen);
  size_t pos = 0;
  anim_wire_field_t f;
  while (anim_wire_next_field(data, len, &pos, &f) == 1) {
    const ProtobufCFieldDescriptor *field = protobuf_c_message_descriptor_get_field(desc, f.number);
    if (f.type != ANIM_WIRE_BYTES || !field ||
        (field->type != PROTOBUF_C_TYPE_STRING &&
         (field->type != PROTOBUF_C_TYPE_MESSAGE || !may_hold_strings(field->descriptor, 0))))
      continue;
    size_t index = (size_t)(field - desc->fields), mark = paths ? srv_path_field(d, field->name) : d->len;
    if (paths && field->label == PROTOBUF_C_LABEL_REPEATED && index < 64) srv_path_index(d, seen[index]++);
    int rc = field->type == PROTOBUF_C_TYPE_STRING ? check_string(d, f.data, f.len)
                                                    : check_strings(d, field->descriptor, f.data, f.len, paths);
    if (rc) return rc;
    srv_path_restore(d, mark);
  }
  return 0;
}

/* ---- where a refused decode's memory would go ------------------------------------- */

/* What a field's occurrences in one message weigh in a decode: their wire
 * bytes, and for messages their structs too (a repeated field of tiny
 * messages expands most). */
typedef struct {
  size_t weight, bytes;
  long count;
} field_weight_t;

/* Fields weighed apart per message (the schema's largest has 37); the
 * last slot holds the unknown ones. */
enum { WEIGHED_FIELDS = 128 };

/* Appends to d's path the field of desc (wire bytes data) whose decode
 * weighs most, followed down while it is a single message; *out_count and
 * *out_bytes get its occurrences and their wire bytes. Unknown fields are
 * weighed together (protobuf-c keeps each: a frame of tiny unknown fields
 * expands tenfold). For a budget refusal to say which field to send less of. */
static void path_heaviest(srv_decoder_t *d, const ProtobufCMessageDescriptor *desc, const uint8_t *data, size_t len,
                          long *out_count, size_t *out_bytes) {
  for (int depth = 0; depth < 16; depth++) {
    field_weight_t w[WEIGHED_FIELDS] = {{0}}; /* by field index; the last: unknown fields */
    const size_t unknown = WEIGHED_FIELDS - 1;
    size_t pos = 0;
    anim_wire_field_t f;
    while (anim_wire_next_field(data, len, &pos, &f) == 1) {
      const ProtobufCFieldDescriptor *field = protobuf_c_message_descriptor_get_field(desc, f.number);
      size_t i = field && (size_t)(field - desc->fields) < unknown ? (size_t)(field - desc->fields) : unknown;
      size_t bytes = f.type == ANIM_WIRE_BYTES ? f.len : 8;
      w[i].weight += bytes + (!field ? sizeof(ProtobufCMessageUnknownField)
                              : field->type == PROTOBUF_C_TYPE_MESSAGE ? ((const ProtobufCMessageDescriptor *)
                                                                              field->descriptor)->sizeof_message
                                                                       : 0);
      w[i].bytes += bytes, w[i].count++;
    }
    size_t best = 0;
    for (size_t i = 1; i < WEIGHED_FIELDS; i++)
      if (w[i].weight > w[best].weight) best = i;
    *out_count = w[best].count, *out_bytes = w[best].bytes;
    if (best == unknown) {
      srv_path_field(d, "(unknown fields)");
      return;
    }
    const ProtobufCFieldDescriptor *field = &desc->fields[best];
    srv_path_field(d, field->name);
    if (field->type != PROTOBUF_C_TYPE_MESSAGE || w[best].count != 1) return;
    /* One message holding the weight: look inside it. */
    const uint8_t *inner = NULL;
    size_t inner_len = 0;
    for (pos = 0; anim_wire_next_field(data, len, &pos, &f) == 1;)
      if (f.number == field->id && f.type == ANIM_WIRE_BYTES) inner = f.data, inner_len = f.len;
    desc = field->descriptor, data = inner, len = inner_len;
  }
}

/* ---- decoding ------------------------------------------------------------------ */

/* Field numbers of proto/animserver.proto the peeks read (the body's case
 * numbers are generated: ANIMSERVER__REQUEST__BODY_*); test_codec_peek
 * holds them to the descriptors. */
enum { REQUEST_ID_FIELD = 1, SEARCH_REQUEST_DATABASE_FIELD = 1, PING_REQUEST_PAYLOAD_FIELD = 1 };

/* The id of a Request read without a full decode, so that even a
 * request that fails to decode can be answered by id. 0 when absent. */
static uint64_t peek_request_id(const uint8_t *frame, size_t len) {
  size_t pos = 0;
  anim_wire_field_t f;
  while (anim_wire_next_field(frame, len, &pos, &f) == 1)
    if (f.number == REQUEST_ID_FIELD && f.type == ANIM_WIRE_VARINT) return f.value;
  return 0;
}

int srv_codec_peek_search(const uint8_t *frame, size_t len, const uint8_t **out_name, size_t *out_len) {
  anim_wire_field_t f, search = {0}, name = {0};
  int nsearch = 0, nname = 0;
  size_t pos = 0;
  int rc;
  while ((rc = anim_wire_next_field(frame, len, &pos, &f)) == 1) {
    if (f.number == ANIMSERVER__REQUEST__BODY_SEARCH && f.type == ANIM_WIRE_BYTES) search = f, nsearch++;
    else if (f.number != REQUEST_ID_FIELD) return 0; /* another body (or one unknown here): the decoder judges */
  }
  if (rc != 0 || nsearch != 1) return 0;
  pos = 0;
  while ((rc = anim_wire_next_field(search.data, search.len, &pos, &f)) == 1)
    if (f.number == SEARCH_REQUEST_DATABASE_FIELD) name = f, nname++;
  if (rc != 0 || nname != 1 || name.type != ANIM_WIRE_BYTES) return 0;
  *out_name = name.data;
  *out_len = name.len;
  return 1;
}

int srv_codec_peek_ping(const uint8_t *frame, size_t len, const srv_codec_limits_t *limits, srv_request_t *out) {
  anim_wire_field_t f, id = {0}, ping = {0}, payload = {0};
  int nid = 0, nping = 0, npayload = 0, rc;
  size_t pos = 0;
  while ((rc = anim_wire_next_field(frame, len, &pos, &f)) == 1) {
    if (f.number == REQUEST_ID_FIELD && f.type == ANIM_WIRE_VARINT) id = f, nid++;
    else if (f.number == ANIMSERVER__REQUEST__BODY_PING && f.type == ANIM_WIRE_BYTES) ping = f, nping++;
    else return 0;
  }
  /* Repeated fields merge in a decode, and id 0 is refused: the decoder judges. */
  if (rc != 0 || nid != 1 || id.value == 0 || nping != 1) return 0;
  pos = 0;
  while ((rc = anim_wire_next_field(ping.data, ping.len, &pos, &f)) == 1) {
    if (f.number != PING_REQUEST_PAYLOAD_FIELD || f.type != ANIM_WIRE_BYTES) return 0;
    payload = f, npayload++;
  }
  if (rc != 0 || npayload > 1) return 0;
  /* What a decode charges its budget, at most: both messages and the
   * payload's copy, each with its block header. */
  size_t decoded = sizeof(Animserver__Request) + sizeof(Animserver__PingRequest) + 3 * sizeof(block_header_t);
  if (payload.len > limits->budget_bytes || decoded > limits->budget_bytes - payload.len) return 0;
  memset(out, 0, offsetof(srv_request_t, body) + sizeof out->body.ping);
  memset(&out->decoded, 0, sizeof *out - offsetof(srv_request_t, decoded));
  out->type = SRV_REQ_PING;
  out->id = id.value;
  out->body.ping.payload = payload.len ? payload.data : NULL;
  out->body.ping.payload_len = payload.len;
  return 1;
}

static int decode_body(srv_decoder_t *d, const Animserver__Request *in, srv_request_t *out) {
  switch (in->body_case) {
#define SRV_DECODE_CASE(TYPE, name, Message)            \
  case ANIMSERVER__REQUEST__BODY_##TYPE:                \
    out->type = SRV_REQ_##TYPE;                         \
    srv_path_field(d, #name);                           \
    return srv_decode_##name(d, in->name, out);
    SRV_REQUEST_TYPES(SRV_DECODE_CASE)
#undef SRV_DECODE_CASE
  default:
    return srv_decode_fail(d, ANIM_EUNSUPPORTED, "request has no body, or one this server does not know");
  }
}

int srv_codec_decode_request(const uint8_t *frame, size_t len, const srv_codec_limits_t *limits, srv_request_t *out,
                             char *err, int errlen) {
  return srv_codec_decode_request_in(frame, len, limits, NULL, out, err, errlen);
}

/* Whether the body decoded can hold a string: only the body can, Request's
 * own field being its id (test_request_checks holds the schema to it); a ping
 * needs no walk of its bytes (5% of a pipelined ping's loop time). */
static int body_may_hold_strings(const Animserver__Request *request) {
  const ProtobufCFieldDescriptor *body =
      protobuf_c_message_descriptor_get_field(&animserver__request__descriptor, (unsigned)request->body_case);
  return body && body->type == PROTOBUF_C_TYPE_MESSAGE && may_hold_strings(body->descriptor, 0);
}

int srv_codec_decode_request_in(const uint8_t *frame, size_t len, const srv_codec_limits_t *limits,
                                srv_decode_arena_t *arena, srv_request_t *out, char *err, int errlen) {
  memset(out, 0, sizeof *out);
  out->type = SRV_REQ_COUNT;
  srv_decoder_t d = {out, limits, "", 0, err, errlen};
  arena_chunk_t *chunk = arena ? arena_enter(arena) : NULL;
  budget_t *budget = chunk ? chunk_take(chunk, sizeof *budget) : NULL;
  if (budget) memset(budget, 0, sizeof *budget), budget->chunk = chunk;
  else if (chunk) chunk_release(chunk); /* a fresh chunk always has room: not reached */
  if (!budget && !(budget = calloc(1, sizeof *budget))) {
    out->id = peek_request_id(frame, len);
    return srv_decode_fail(&d, ANIM_ENOMEM, "out of memory");
  }
  budget->limit = limits->budget_bytes;
  out->budget = budget;
  ProtobufCAllocator allocator = {budget_alloc, budget_free, budget};
  Animserver__Request *request = animserver__request__unpack(&allocator, len, frame);
  if (!request) {
    out->id = peek_request_id(frame, len); /* only now: a decoded request has its id */
    if (budget->exceeded) {
      long count;
      size_t bytes;
      path_heaviest(&d, &animserver__request__descriptor, frame, len, &count, &bytes);
      return srv_decode_fail(&d, ANIM_ELIMIT,
                             ": %ld of them (%zu bytes on the wire) weigh most in a request that needs more than %zu "
                             "bytes to decode (--decode-budget-bytes)",
                             count, bytes, limits->budget_bytes);
    }
    return srv_decode_fail(&d, ANIM_EPROTO, "frame is not a valid Request message");
  }
  out->decoded = request;
  out->id = request->id;
  if (body_may_hold_strings(request)) {
    int rc = check_strings(&d, &animserver__request__descriptor, frame, len, 0);
    if (rc) rc = check_strings(&d, &animserver__request__descriptor, frame, len, 1);
    if (rc) return rc;
  }
  srv_path_restore(&d, 0);
  if (request->id == 0)
    return srv_decode_fail(&d, ANIM_EINVAL, "id 0 is reserved for errors about the connection: number requests from 1");
  return decode_body(&d, request, out);
}

void srv_request_release(srv_request_t *request) {
  budget_t *budget = request->budget;
  /* A message wholly in the arena's block needs no walk to free it. */
  if (request->decoded && (!budget->chunk || budget->foreign)) {
    ProtobufCAllocator allocator = {budget_alloc, budget_free, budget};
    animserver__request__free_unpacked(request->decoded, &allocator);
  }
  arena_free(request->arena);
  if (budget && budget->chunk) chunk_release(budget->chunk); /* the budget lives in it: last */
  else free(budget);
  request->arena = request->decoded = request->budget = NULL;
}

/* ---- encoding ------------------------------------------------------------------ */

/* Packs message as varint(length) + bytes into *io (grown as needed). */
void srv_encoder_bound(srv_encoder_t *e, const ProtobufCMessageDescriptor *message, unsigned nfields, size_t fixed,
                       size_t variable) {
  e->bound = message->n_fields == nfields && variable <= SIZE_MAX / 2 ? fixed + variable : 0;
}

/* Packs message as varint(length) + bytes at offset at of *io (grown as
 * needed); the buffer's length becomes the end of it. With a bound (> 0:
 * at most that many bytes) in one pass: packed after room for the bound's
 * length prefix, moved down when the real prefix is shorter. */
static int pack_framed_at(const ProtobufCMessage *message, srv_buffer_pool_t *pool, srv_buffer_t **io, size_t at,
                          size_t bound) {
  if (bound) {
    size_t room = anim_varint_size(bound);
    if (srv_buffer_reserve_in(pool, io, at + room + bound) != 0) return ANIM_ENOMEM;
    srv_buffer_t *b = *io;
    size_t size = protobuf_c_message_pack(message, b->data + at + room);
    if (size > bound) { /* a bound that no longer holds: memory past it may be gone */
      fprintf(stderr, "animserver: codec: packed %zu bytes over the bound of %zu\n", size, bound);
      abort();
    }
    size_t prefix = anim_varint_size(size);
    if (prefix < room) memmove(b->data + at + prefix, b->data + at + room, size);
    anim_varint_encode(size, b->data + at);
    b->len = at + prefix + size;
    return 0;
  }
  size_t size = protobuf_c_message_get_packed_size(message);
  size_t prefix = anim_varint_size(size);
  if (srv_buffer_reserve_in(pool, io, at + prefix + size) != 0) return ANIM_ENOMEM;
  srv_buffer_t *b = *io;
  anim_varint_encode(size, b->data + at);
  protobuf_c_message_pack(message, b->data + at + prefix);
  b->len = at + prefix + size;
  return 0;
}

static int pack_framed(const ProtobufCMessage *message, srv_buffer_t **io) {
  return pack_framed_at(message, NULL, io, 0, 0);
}

static void encode_body(srv_encoder_t *e, const srv_response_t *in, Animserver__Response *out) {
  switch (in->type) {
#define SRV_ENCODE_CASE(TYPE, name, Message) \
  case SRV_REQ_##TYPE: srv_encode_##name(e, in, out); break;
    SRV_REQUEST_TYPES(SRV_ENCODE_CASE)
#undef SRV_ENCODE_CASE
  case SRV_REQ_COUNT: break;
  }
}

/* Encodes in as one framed ServerMessage at offset at of *io. */
static int encode_response_at(const srv_response_t *in, srv_buffer_pool_t *pool, srv_encoder_spares_t *spares,
                              srv_buffer_t **io, size_t at) {
  Animserver__ServerMessage message = ANIMSERVER__SERVER_MESSAGE__INIT;
  Animserver__Response response = ANIMSERVER__RESPONSE__INIT;
  Animserver__Error error = ANIMSERVER__ERROR__INIT;
  srv_encoder_t e;
  srv_encoder_init(&e, spares);
  message.kind_case = ANIMSERVER__SERVER_MESSAGE__KIND_RESPONSE;
  message.response = &response;
  response.id = in->id;
  if (in->error) {
    error.code = (Animserver__ErrorCode)(-in->error);
    error.message = (char *)in->message;
    response.error = &error;
    /* ServerMessage.response (tag, length) 6 + Response.id 11 + .error
     * (tag, length) 6 + Error.code 11 + .message (tag, length) 6 + text. */
    srv_encoder_bound(&e, &animserver__error__descriptor, 2, SRV_RESPONSE_FRAMING_BOUND + 23, strlen(in->message));
  } else {
    encode_body(&e, in, &response);
  }
  int rc = e.failed ? ANIM_ENOMEM : pack_framed_at(&message.base, pool, io, at, e.bound);
  srv_encoder_end(&e);
  return rc;
}

int srv_codec_encode_response_in(const srv_response_t *in, srv_buffer_pool_t *pool, srv_encoder_spares_t *spares,
                                 srv_buffer_t **out_buffer) {
  *out_buffer = NULL;
  return encode_response_at(in, pool, spares, out_buffer, 0);
}

int srv_codec_encode_response(const srv_response_t *in, srv_buffer_t **out_buffer) {
  return srv_codec_encode_response_in(in, NULL, NULL, out_buffer);
}

int srv_codec_append_response_in(const srv_response_t *in, srv_encoder_spares_t *spares, srv_buffer_t **io) {
  return encode_response_at(in, NULL, spares, io, *io ? (*io)->len : 0);
}

int srv_codec_append_response(const srv_response_t *in, srv_buffer_t **io) {
  return srv_codec_append_response_in(in, NULL, io);
}

/* ---- stream frames --------------------------------------------------------------- */

void srv_stream_scratch_free(srv_stream_scratch_t *scratch) {
  free(scratch->poses);
  free(scratch->pointers);
  free(scratch->entered);
  free(scratch->entered_pointers);
  memset(scratch, 0, sizeof *scratch);
}

size_t srv_stream_scratch_bytes(const srv_stream_scratch_t *scratch) {
  return scratch->capacity * (sizeof(Animserver__CharacterPose) + sizeof(Animserver__CharacterPose *)) +
         scratch->entered_capacity * (sizeof(Animserver__CharacterEntered) + sizeof(Animserver__CharacterEntered *));
}

static int scratch_reserve_entered(srv_stream_scratch_t *s, size_t n) {
  if (n <= s->entered_capacity) return 0;
  size_t capacity = n + n / 2 + 8;
  Animserver__CharacterEntered *entered = realloc(s->entered, capacity * sizeof *entered);
  if (!entered) return ANIM_ENOMEM;
  s->entered = entered;
  Animserver__CharacterEntered **pointers = realloc(s->entered_pointers, capacity * sizeof *pointers);
  if (!pointers) return ANIM_ENOMEM;
  s->entered_pointers = pointers;
  s->entered_capacity = capacity;
  return 0;
}

static int scratch_reserve(srv_stream_scratch_t *s, size_t n) {
  if (n <= s->capacity) return 0;
  size_t capacity = n + n / 2 + 8;
  Animserver__CharacterPose *poses = realloc(s->poses, capacity * sizeof *poses);
  if (!poses) return ANIM_ENOMEM;
  s->poses = poses;
  Animserver__CharacterPose **pointers = realloc(s->pointers, capacity * sizeof *pointers);
  if (!pointers) return ANIM_ENOMEM;
  s->pointers = pointers;
  s->capacity = capacity;
  return 0;
}

/* Asks for a pose's bytes before protobuf-c copies them: they were written
 * by the simulation, on another core and a while ago, and each copy of a
 * few hundred bytes is too short for the hardware to fetch ahead. Asked for
 * all at once, the frame's (under 1 MB for 1,000 characters) are fetched
 * together instead of one cache line after another: the copies fell from 6%
 * of the server's time to 1% (10 streams of 800 quantized characters).
 * Always inlined: as functions of their own, GCC finds they have no effect
 * (a prefetch has none it can see) and drops every call to them. */
static inline __attribute__((always_inline)) void prefetch_bytes(const void *bytes, size_t len) {
  for (size_t at = 0; at < len; at += 64) __builtin_prefetch((const char *)bytes + at);
}

static inline __attribute__((always_inline)) void prefetch_pose(const srv_stream_pose_t *p) {
  prefetch_bytes(p->quantized, p->quantized_len);
  prefetch_bytes(p->positions, p->npositions * sizeof(float));
  prefetch_bytes(p->rotations, p->nrotations * sizeof(float));
  prefetch_bytes(p->global_positions, p->nglobal * sizeof(float));
}

int srv_codec_encode_stream(const srv_stream_frame_t *in, srv_stream_scratch_t *scratch, srv_buffer_t **io) {
  size_t n = (size_t)in->nposes;
  if (scratch_reserve(scratch, n) != 0) return ANIM_ENOMEM;
  Animserver__CharacterPose *poses = scratch->poses, **pointers = scratch->pointers;
  for (size_t i = 0; i < n; i++) {
    const srv_stream_pose_t *p = &in->poses[i];
    prefetch_pose(p);
    Animserver__CharacterPose m = ANIMSERVER__CHARACTER_POSE__INIT;
    m.character = p->character;
    m.frame = p->frame;
    m.n_positions = p->npositions, m.positions = (float *)p->positions;
    m.n_rotations = p->nrotations, m.rotations = (float *)p->rotations;
    m.quantized.data = (uint8_t *)p->quantized, m.quantized.len = p->quantized_len;
    m.n_global_positions = p->nglobal, m.global_positions = (float *)p->global_positions;
    m.contacts = p->contacts;
    m.transition = p->transition;
    m.n_state_path = m.n_state_times = (size_t)p->depth;
    m.state_path = (uint32_t *)p->state_path, m.state_times = (float *)p->state_times;
    m.state_changed = p->state_changed;
    if (p->state_changed) m.n_state_names = (size_t)p->depth, m.state_names = (char **)p->state_names;
    m.physics = (Animserver__PhysicsState)p->physics;
    poses[i] = m;
    pointers[i] = &poses[i];
  }
  Animserver__ServerMessage message = ANIMSERVER__SERVER_MESSAGE__INIT;
  Animserver__StreamMessage stream = ANIMSERVER__STREAM_MESSAGE__INIT;
  stream.subscription_id = in->subscription;
  stream.tick = in->tick;
  stream.server_time_us = in->server_time_us;
  stream.n_poses = n, stream.poses = pointers;
  stream.dropped_frames = in->dropped;
  stream.encoding = (Animserver__PoseEncoding)in->encoding;
  stream.n_gone = (size_t)in->ngone, stream.gone = (uint64_t *)in->gone;
  stream.dt = in->dt;
  if (in->nentered) {
    if (scratch_reserve_entered(scratch, (size_t)in->nentered) != 0) return ANIM_ENOMEM;
    Animserver__CharacterEntered *entered = scratch->entered, **entered_pointers = scratch->entered_pointers;
    for (int i = 0; i < in->nentered; i++) {
      Animserver__CharacterEntered m = ANIMSERVER__CHARACTER_ENTERED__INIT;
      m.character = in->entered[i].character;
      m.database = (char *)in->entered[i].database;
      m.database_version = in->entered[i].version;
      m.bones = in->entered[i].bones;
      entered[i] = m;
      entered_pointers[i] = &entered[i];
    }
    stream.n_entered = (size_t)in->nentered, stream.entered = entered_pointers;
  }
  stream.n_left = (size_t)in->nleft, stream.left = (uint64_t *)in->left;
  stream.replica.data = (uint8_t *)in->replica, stream.replica.len = in->replica_len;
  message.kind_case = ANIMSERVER__SERVER_MESSAGE__KIND_STREAM;
  message.stream = &stream;
  return pack_framed(&message.base, io);
}
