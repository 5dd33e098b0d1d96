/*
 * test_codec_peek.c: srv_codec_peek_search and srv_codec_peek_ping
 * (server/codec.h), the looks at a frame's wire bytes that let the
 * dispatcher send a pipelined search to be decoded off the loop with its
 * database already found, and answer a ping without decoding it. What must
 * hold: whenever the search peek says "a search of database D", the full
 * decoder, if it takes the frame at all, reads a search of D (the peek
 * never sends a request the wrong way nor to the wrong database); whenever
 * the ping peek reads a ping, the decoder reads the same ping (id and
 * payload) and does not refuse it; and plain searches and pings, as
 * clients send them, do peek (else the fast ways are never taken).
 * Malformed and other frames first, then the searches and pings, then
 * thousands of mutations of frames of several kinds checked against the
 * decoder.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "anim_error.h"
#include "animserver.pb-c.h"
#include "server/codec.h"

static const srv_codec_limits_t limits = {16u << 20, 4096, 1024, 10000, 100000};

typedef struct {
  uint8_t bytes[1024];
  size_t len;
} frame_t;

static frame_t pack(const Animserver__Request *r) {
  frame_t f;
  f.len = animserver__request__get_packed_size(r);
  assert_true(f.len <= sizeof f.bytes);
  animserver__request__pack(r, f.bytes);
  return f;
}

/* A search of database by frame (k 3, tags and a trajectory: nested fields the peek must step over). */
static frame_t search_frame(uint64_t id, const char *database) {
  static char *tags[] = {"walk", "run"};
  Animserver__Vec2 points[3] = {ANIMSERVER__VEC2__INIT, ANIMSERVER__VEC2__INIT, ANIMSERVER__VEC2__INIT};
  Animserver__Vec2 *pointers[3] = {&points[0], &points[1], &points[2]};
  for (int i = 0; i < 3; i++) points[i].x = 0.5f * (float)i, points[i].z = 1.0f + (float)i;
  Animserver__FrameIndex from = ANIMSERVER__FRAME_INDEX__INIT;
  Animserver__SearchQuery q = ANIMSERVER__SEARCH_QUERY__INIT;
  Animserver__SearchRequest s = ANIMSERVER__SEARCH_REQUEST__INIT;
  Animserver__Request r = ANIMSERVER__REQUEST__INIT;
  from.frame = 12;
  q.from_frame = &from, q.k = 3, q.tags = tags, q.n_tags = 2, q.trajectory_positions = pointers;
  q.n_trajectory_positions = 3;
  s.database = (char *)database, s.query = &q;
  r.id = id, r.body_case = ANIMSERVER__REQUEST__BODY_SEARCH, r.search = &s;
  return pack(&r);
}

static frame_t ping_frame(uint64_t id) {
  Animserver__PingRequest p = ANIMSERVER__PING_REQUEST__INIT;
  Animserver__Request r = ANIMSERVER__REQUEST__INIT;
  p.payload.data = (uint8_t *)"default", p.payload.len = 7;
  r.id = id, r.body_case = ANIMSERVER__REQUEST__BODY_PING, r.ping = &p;
  return pack(&r);
}

static frame_t batch_search_frame(uint64_t id) {
  Animserver__SearchQuery q = ANIMSERVER__SEARCH_QUERY__INIT, *queries[1] = {&q};
  Animserver__FrameIndex from = ANIMSERVER__FRAME_INDEX__INIT;
  Animserver__BatchSearchRequest b = ANIMSERVER__BATCH_SEARCH_REQUEST__INIT;
  Animserver__Request r = ANIMSERVER__REQUEST__INIT;
  q.from_frame = &from, q.k = 1;
  b.database = "default", b.queries = queries, b.n_queries = 1;
  r.id = id, r.body_case = ANIMSERVER__REQUEST__BODY_BATCH_SEARCH, r.batch_search = &b;
  return pack(&r);
}

static frame_t pose_frame(uint64_t id) {
  Animserver__PoseRequest p = ANIMSERVER__POSE_REQUEST__INIT;
  Animserver__Request r = ANIMSERVER__REQUEST__INIT;
  p.database = "default", p.frame = 3, p.count = 1;
  r.id = id, r.body_case = ANIMSERVER__REQUEST__BODY_POSE, r.pose = &p;
  return pack(&r);
}

static void append(frame_t *f, const frame_t *more) {
  assert_true(f->len + more->len <= sizeof f->bytes);
  memcpy(f->bytes + f->len, more->bytes, more->len);
  f->len += more->len;
}

static int peek(const frame_t *f, char *out_name) {
  const uint8_t *name = NULL;
  size_t len = 0;
  int yes = srv_codec_peek_search(f->bytes, f->len, &name, &len);
  if (yes) {
    assert_true(len < 64);
    memcpy(out_name, name, len);
    out_name[len] = '\0';
  }
  return yes;
}

/* The property: a frame that peeks as a search of D decodes (if at all) as a search of D. */
static void assert_peek_agrees(const frame_t *f) {
  char name[64];
  if (!peek(f, name)) return;
  srv_request_t request;
  char err[256];
  int rc = srv_codec_decode_request(f->bytes, f->len, &limits, &request, err, sizeof err);
  if (rc == 0) {
    assert_int_equal(request.type, SRV_REQ_SEARCH);
    assert_non_null(request.database);
    assert_string_equal(request.database, name);
  }
  srv_request_release(&request);
}

/* The ping property: a frame the ping peek reads is the decoder's same
 * ping, never refused by it. Returns whether it peeked. */
static int assert_ping_peek_agrees(const frame_t *f, const srv_codec_limits_t *with) {
  srv_request_t peeked, decoded;
  char err[256];
  if (!srv_codec_peek_ping(f->bytes, f->len, with, &peeked)) return 0;
  int rc = srv_codec_decode_request(f->bytes, f->len, with, &decoded, err, sizeof err);
  if (rc != 0) fail_msg("a frame the ping peek reads is refused by the decoder: %s", err);
  assert_int_equal(decoded.type, SRV_REQ_PING);
  assert_int_equal(peeked.type, SRV_REQ_PING);
  assert_int_equal(peeked.id, decoded.id);
  assert_int_equal(peeked.body.ping.payload_len, decoded.body.ping.payload_len);
  if (decoded.body.ping.payload_len)
    assert_memory_equal(peeked.body.ping.payload, decoded.body.ping.payload, decoded.body.ping.payload_len);
  assert_null(peeked.database);
  assert_null(peeked.decoded);
  srv_request_release(&peeked); /* nothing to free: must not crash */
  srv_request_release(&decoded);
  return 1;
}

static frame_t ping_with(uint64_t id, const uint8_t *payload, size_t len) {
  Animserver__PingRequest p = ANIMSERVER__PING_REQUEST__INIT;
  Animserver__Request r = ANIMSERVER__REQUEST__INIT;
  p.payload.data = (uint8_t *)payload, p.payload.len = len;
  r.id = id, r.body_case = ANIMSERVER__REQUEST__BODY_PING, r.ping = &p;
  return pack(&r);
}

/* The field numbers the peek reads (server/codec.c) are the proto's. */
static void test_field_numbers(void **state) {
  assert_int_equal(protobuf_c_message_descriptor_get_field_by_name(&animserver__request__descriptor, "id")->id, 1);
  assert_int_equal(
      protobuf_c_message_descriptor_get_field_by_name(&animserver__search_request__descriptor, "database")->id, 1);
  assert_int_equal(protobuf_c_message_descriptor_get_field_by_name(&animserver__request__descriptor, "search")->id,
                   ANIMSERVER__REQUEST__BODY_SEARCH);
  assert_int_equal(protobuf_c_message_descriptor_get_field_by_name(&animserver__request__descriptor, "ping")->id,
                   ANIMSERVER__REQUEST__BODY_PING);
  assert_int_equal(animserver__ping_request__descriptor.n_fields, 1); /* a new field: the peek must learn it */
  assert_int_equal(
      protobuf_c_message_descriptor_get_field_by_name(&animserver__ping_request__descriptor, "payload")->id, 1);
}

static void test_pings_peek_as_they_decode(void **state) {
  srv_request_t r;
  /* As clients send them: with a payload, without. */
  frame_t f = ping_frame(42);
  assert_true(assert_ping_peek_agrees(&f, &limits));
  assert_true(srv_codec_peek_ping(f.bytes, f.len, &limits, &r));
  assert_int_equal(r.id, 42);
  assert_int_equal(r.body.ping.payload_len, 7);
  assert_memory_equal(r.body.ping.payload, "default", 7);
  f = ping_with(7, NULL, 0);
  assert_true(assert_ping_peek_agrees(&f, &limits));
  /* Id 0 (or none) is refused by the decoder: not peeked. */
  f = ping_with(0, (const uint8_t *)"x", 1);
  assert_false(srv_codec_peek_ping(f.bytes, f.len, &limits, &r));
  /* An empty body field, written out (decoders read a ping with no payload). */
  frame_t bare = {.bytes = {0x08, 3, (uint8_t)(ANIMSERVER__REQUEST__BODY_PING << 3 | 2), 0}, .len = 4};
  assert_true(assert_ping_peek_agrees(&bare, &limits));
  /* Others are the decoder's: searches, two ids, two bodies, an unknown
   * field in the ping, a payload of the wrong wire type. */
  f = search_frame(1, "default");
  assert_false(srv_codec_peek_ping(f.bytes, f.len, &limits, &r));
  frame_t twice = ping_frame(5), id = ping_frame(6);
  id.len = 2; /* field 1, varint 6 */
  append(&twice, &id);
  assert_false(srv_codec_peek_ping(twice.bytes, twice.len, &limits, &r));
  frame_t two_bodies = ping_frame(5), body = ping_frame(0);
  append(&two_bodies, &body);
  assert_false(srv_codec_peek_ping(two_bodies.bytes, two_bodies.len, &limits, &r));
  frame_t unknown = {.bytes = {0x08, 3, (uint8_t)(ANIMSERVER__REQUEST__BODY_PING << 3 | 2), 2, 0x10, 1}, .len = 6};
  assert_false(srv_codec_peek_ping(unknown.bytes, unknown.len, &limits, &r));
  frame_t varint_payload = {.bytes = {0x08, 3, (uint8_t)(ANIMSERVER__REQUEST__BODY_PING << 3 | 2), 2, 0x08, 1}, .len = 6};
  assert_false(srv_codec_peek_ping(varint_payload.bytes, varint_payload.len, &limits, &r));
}

/* A ping whose decode would not fit the budget is the decoder's (which
 * refuses it): at every budget, the peek and the decoder agree. */
static void test_ping_peek_keeps_the_budget(void **state) {
  static uint8_t payload[600];
  memset(payload, 'p', sizeof payload);
  frame_t f = ping_with(9, payload, sizeof payload);
  int peeked = 0, refused = 0;
  for (size_t budget = 64; budget < 4096; budget += 8) {
    srv_codec_limits_t tight = limits;
    tight.budget_bytes = budget;
    srv_request_t r;
    char err[256];
    if (assert_ping_peek_agrees(&f, &tight)) peeked++;
    else if (srv_codec_decode_request(f.bytes, f.len, &tight, &r, err, sizeof err) != 0) refused++;
    srv_request_release(&r);
  }
  assert_true(peeked > 0 && refused > 0);
  srv_request_t r;
  assert_false(srv_codec_peek_ping(f.bytes, f.len, &(srv_codec_limits_t){.budget_bytes = 600}, &r));
}

static void test_not_searches(void **state) {
  char name[64];
  frame_t empty = {.len = 0};
  assert_false(peek(&empty, name));
  frame_t garbage = {.bytes = {0xff, 0xff, 0xff}, .len = 3};
  assert_false(peek(&garbage, name));
  srv_request_t r;
  assert_false(srv_codec_peek_ping(empty.bytes, empty.len, &limits, &r));
  assert_false(srv_codec_peek_ping(garbage.bytes, garbage.len, &limits, &r));
  frame_t f = ping_frame(1);
  assert_false(peek(&f, name));
  f = batch_search_frame(2);
  assert_false(peek(&f, name));
  f = pose_frame(3);
  assert_false(peek(&f, name));
  /* A search cut short anywhere is not well-formed on the wire. */
  frame_t s = search_frame(4, "default");
  for (size_t cut = 1; cut < s.len; cut++) {
    frame_t t = s;
    t.len = cut;
    assert_peek_agrees(&t);
  }
  /* Field 40 as a varint: not a search body. */
  frame_t varint40 = {.bytes = {0x08, 5, 0xc0, 0x02, 7}, .len = 5};
  assert_false(peek(&varint40, name));
}

static void test_searches_peek_with_their_database(void **state) {
  char name[64];
  frame_t f = search_frame(7, "default");
  assert_true(peek(&f, name));
  assert_string_equal(name, "default");
  f = search_frame(8, "a.b-c_9");
  assert_true(peek(&f, name));
  assert_string_equal(name, "a.b-c_9");
  /* The id after the body, and the id twice: still one search. */
  frame_t body = search_frame(0, "x"), id = ping_frame(9);
  id.len = 2; /* field 1, varint 9 */
  append(&body, &id);
  append(&body, &id);
  assert_true(peek(&body, name));
  assert_string_equal(name, "x");
  assert_peek_agrees(&body);
}

static void test_ambiguous_frames_are_left_to_the_decoder(void **state) {
  char name[64];
  /* Two search bodies (protobuf merges them): not peeked. */
  frame_t two = search_frame(1, "default"), second = search_frame(1, "other");
  append(&two, &second);
  assert_false(peek(&two, name));
  assert_peek_agrees(&two);
  /* A search then a ping body (the last one wins: a ping). */
  frame_t then_ping = search_frame(1, "default"), ping = ping_frame(1);
  append(&then_ping, &ping);
  assert_false(peek(&then_ping, name));
  /* An unknown field: the decoder may skip it, the peek does not guess. */
  frame_t unknown = search_frame(1, "default");
  const uint8_t field_1000[] = {0xc0, 0x3e, 1};
  memcpy(unknown.bytes + unknown.len, field_1000, sizeof field_1000);
  unknown.len += sizeof field_1000;
  assert_false(peek(&unknown, name));
  /* No database name: not peeked (the decoder answers it). */
  frame_t nameless = search_frame(1, NULL);
  assert_false(peek(&nameless, name));
}

/* Random mutations of frames of several kinds: byte flips, truncations,
 * insertions of a byte, a frame's tail appended to another. */
static void test_mutations_agree_with_the_decoder(void **state) {
  frame_t seeds[] = {search_frame(11, "default"), search_frame(12, "tiny"), ping_frame(13), batch_search_frame(14),
                     pose_frame(15)};
  const int nseeds = (int)(sizeof seeds / sizeof seeds[0]);
  uint32_t rng = 12345;
  int peeked = 0, pings_peeked = 0;
  for (int round = 0; round < 200000; round++) {
    frame_t f = seeds[round % nseeds];
    int edits = 1 + (int)((rng = rng * 1664525u + 1013904223u) >> 30);
    for (int e = 0; e < edits && f.len > 0; e++) {
      rng = rng * 1664525u + 1013904223u;
      size_t at = (rng >> 8) % f.len;
      switch ((rng >> 4) % 4) {
      case 0: f.bytes[at] ^= (uint8_t)(1u << ((rng >> 20) % 8)); break;
      case 1: f.len = at; break;
      case 2:
        if (f.len < sizeof f.bytes) {
          memmove(f.bytes + at + 1, f.bytes + at, f.len - at);
          f.bytes[at] = (uint8_t)(rng >> 24);
          f.len++;
        }
        break;
      default: {
        const frame_t *other = &seeds[(rng >> 12) % (uint32_t)nseeds];
        size_t from = (rng >> 16) % other->len, n = other->len - from;
        if (f.len + n <= sizeof f.bytes) memcpy(f.bytes + f.len, other->bytes + from, n), f.len += n;
      }
      }
    }
    char name[64];
    if (peek(&f, name)) peeked++;
    assert_peek_agrees(&f);
    pings_peeked += assert_ping_peek_agrees(&f, &limits);
  }
  assert_true(peeked > 1000); /* the property was tried on many frames that peek */
  assert_true(pings_peeked > 1000);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_field_numbers),
      cmocka_unit_test(test_not_searches),
      cmocka_unit_test(test_searches_peek_with_their_database),
      cmocka_unit_test(test_ambiguous_frames_are_left_to_the_decoder),
      cmocka_unit_test(test_pings_peek_as_they_decode),
      cmocka_unit_test(test_ping_peek_keeps_the_budget),
      cmocka_unit_test(test_mutations_agree_with_the_decoder),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
