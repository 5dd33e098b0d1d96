/* test_frame.c: the varint-delimited frame reader, byte by byte. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "anim_error.h"
#include "fields.h"
#include "frame.h"

#define MAX_FRAMES 512

typedef struct {
  int count;
  size_t lens[MAX_FRAMES];
  uint8_t *data[MAX_FRAMES];
  int stop_after; /* return 99 after this many frames; 0: never */
} collected_t;

static int collect(void *ctx, const uint8_t *frame, size_t len) {
  collected_t *c = ctx;
  assert_true(c->count < MAX_FRAMES);
  c->lens[c->count] = len;
  c->data[c->count] = malloc(len ? len : 1);
  memcpy(c->data[c->count], frame, len);
  c->count++;
  return c->stop_after && c->count >= c->stop_after ? 99 : 0;
}

static void collected_free(collected_t *c) {
  for (int i = 0; i < c->count; i++) free(c->data[i]);
}

/* Appends varint(len) + len bytes of pattern to out; returns bytes written. */
static size_t put_frame(uint8_t *out, size_t len, uint8_t seed) {
  size_t n = anim_varint_encode(len, out);
  for (size_t i = 0; i < len; i++) out[n + i] = (uint8_t)(seed + i * 7);
  return n + len;
}

/* ---- invalid input first ----------------------------------------------------------- */

static void test_oversize_length_rejected_before_allocation(void **state) {
  anim_frame_reader_t r;
  anim_frame_reader_init(&r, 1000);
  uint8_t header[ANIM_VARINT_MAX];
  size_t n = anim_varint_encode(1001, header);
  collected_t c = {0};
  assert_int_equal(anim_frame_reader_feed(&r, header, n, collect, &c), ANIM_ETOOBIG);
  assert_int_equal(c.count, 0);
  assert_null(r.partial); /* nothing was allocated for the refused frame */
  /* Sticky: the stream stays failed. */
  uint8_t ok[8];
  size_t m = put_frame(ok, 3, 1);
  assert_int_equal(anim_frame_reader_feed(&r, ok, m, collect, &c), ANIM_ETOOBIG);
  anim_frame_reader_free(&r);
}

static void test_huge_length_rejected(void **state) {
  anim_frame_reader_t r;
  anim_frame_reader_init(&r, 1u << 20);
  uint8_t header[ANIM_VARINT_MAX];
  size_t n = anim_varint_encode(UINT64_MAX, header);
  assert_int_equal(n, 10);
  collected_t c = {0};
  assert_int_equal(anim_frame_reader_feed(&r, header, n, collect, &c), ANIM_ETOOBIG);
  anim_frame_reader_free(&r);
}

static void test_garbage_varint(void **state) {
  anim_frame_reader_t r;
  anim_frame_reader_init(&r, 1u << 20);
  uint8_t garbage[16];
  memset(garbage, 0xff, sizeof garbage);
  collected_t c = {0};
  assert_int_equal(anim_frame_reader_feed(&r, garbage, sizeof garbage, collect, &c), ANIM_EPROTO);
  assert_int_equal(c.count, 0);
  anim_frame_reader_free(&r);
}

static void test_varint_tenth_byte_overflow(void **state) {
  uint8_t bytes[10];
  memset(bytes, 0x80, 9);
  bytes[9] = 0x02; /* bit 64: does not fit */
  uint64_t v;
  assert_int_equal(anim_varint_decode(bytes, 10, &v), ANIM_EPROTO);
  bytes[9] = 0x01;
  assert_int_equal(anim_varint_decode(bytes, 10, &v), 10);
  assert_true(v == (uint64_t)1 << 63);
}

static void test_truncated_varint_needs_more(void **state) {
  uint8_t bytes[ANIM_VARINT_MAX];
  size_t n = anim_varint_encode(300000, bytes);
  uint64_t v;
  for (size_t i = 0; i < n; i++) assert_int_equal(anim_varint_decode(bytes, i, &v), 0);
  assert_int_equal(anim_varint_decode(bytes, n, &v), (int)n);
  assert_true(v == 300000);
}

static void test_callback_stop_propagates(void **state) {
  anim_frame_reader_t r;
  anim_frame_reader_init(&r, 100);
  uint8_t buf[64];
  size_t n = 0;
  for (int i = 0; i < 4; i++) n += put_frame(buf + n, 5, (uint8_t)i);
  collected_t c = {0};
  c.stop_after = 2;
  assert_int_equal(anim_frame_reader_feed(&r, buf, n, collect, &c), 99);
  assert_int_equal(c.count, 2);
  collected_free(&c);
  anim_frame_reader_free(&r);
}

/* ---- behaviour ---------------------------------------------------------------------- */

static void test_varint_round_trip(void **state) {
  const uint64_t values[] = {0, 1, 127, 128, 255, 16383, 16384, 1u << 21, UINT32_MAX, (uint64_t)1 << 56, UINT64_MAX};
  for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
    uint8_t buf[ANIM_VARINT_MAX];
    size_t n = anim_varint_encode(values[i], buf);
    assert_int_equal(n, anim_varint_size(values[i]));
    uint64_t back;
    assert_int_equal(anim_varint_decode(buf, n, &back), (int)n);
    assert_true(back == values[i]);
  }
}

static void test_many_frames_in_one_read(void **state) {
  anim_frame_reader_t r;
  anim_frame_reader_init(&r, 1000);
  uint8_t buf[8192];
  size_t n = 0;
  for (int i = 0; i < 50; i++) n += put_frame(buf + n, (size_t)(i * 3), (uint8_t)i);
  collected_t c = {0};
  assert_int_equal(anim_frame_reader_feed(&r, buf, n, collect, &c), 0);
  assert_int_equal(c.count, 50);
  for (int i = 0; i < 50; i++) {
    assert_int_equal(c.lens[i], i * 3);
    for (size_t j = 0; j < c.lens[i]; j++) assert_int_equal(c.data[i][j], (uint8_t)(i + j * 7));
  }
  assert_null(r.partial); /* whole frames were handed out in place */
  collected_free(&c);
  anim_frame_reader_free(&r);
}

static void test_frame_split_across_many_reads(void **state) {
  anim_frame_reader_t r;
  anim_frame_reader_init(&r, 100000);
  uint8_t buf[70000];
  size_t n = put_frame(buf, 65000, 3); /* three-byte varint header */
  collected_t c = {0};
  for (size_t i = 0; i < n; i++) {
    assert_int_equal(anim_frame_reader_feed(&r, buf + i, 1, collect, &c), 0);
    assert_int_equal(c.count, i + 1 == n ? 1 : 0);
  }
  assert_int_equal(c.lens[0], 65000);
  assert_memory_equal(c.data[0], buf + 3, 65000);
  assert_int_equal(anim_frame_reader_buffered(&r), 0);
  collected_free(&c);
  anim_frame_reader_free(&r);
}

static void test_partial_frames_and_empty_frames(void **state) {
  anim_frame_reader_t r;
  anim_frame_reader_init(&r, 100);
  uint8_t buf[256];
  size_t n = 0;
  n += put_frame(buf + n, 0, 0);
  n += put_frame(buf + n, 10, 1);
  n += put_frame(buf + n, 0, 0);
  n += put_frame(buf + n, 20, 2);
  collected_t c = {0};
  /* First read ends inside the second frame; second read ends inside the last. */
  assert_int_equal(anim_frame_reader_feed(&r, buf, 6, collect, &c), 0);
  assert_int_equal(c.count, 1);
  assert_int_equal(anim_frame_reader_buffered(&r), 4);
  assert_int_equal(anim_frame_reader_feed(&r, buf + 6, 20, collect, &c), 0);
  assert_int_equal(c.count, 3);
  assert_int_equal(anim_frame_reader_feed(&r, buf + 26, n - 26, collect, &c), 0);
  assert_int_equal(c.count, 4);
  assert_int_equal(c.lens[1], 10);
  assert_int_equal(c.lens[2], 0);
  assert_int_equal(c.lens[3], 20);
  assert_int_equal(c.data[3][19], (uint8_t)(2 + 19 * 7));
  collected_free(&c);
  anim_frame_reader_free(&r);
}

/* Random frames, random chunking: what comes out is what went in. */
static void test_random_chunking(void **state) {
  srand(12345);
  for (int round = 0; round < 50; round++) {
    uint8_t *buf = malloc(1 << 20);
    size_t lens[100], n = 0;
    int frames = 1 + rand() % 100;
    for (int i = 0; i < frames; i++) {
      lens[i] = (size_t)(rand() % 3000);
      n += put_frame(buf + n, lens[i], (uint8_t)i);
    }
    anim_frame_reader_t r;
    anim_frame_reader_init(&r, 3000);
    collected_t c = {0};
    for (size_t pos = 0; pos < n;) {
      size_t chunk = 1 + (size_t)(rand() % 5000);
      if (chunk > n - pos) chunk = n - pos;
      assert_int_equal(anim_frame_reader_feed(&r, buf + pos, chunk, collect, &c), 0);
      pos += chunk;
    }
    assert_int_equal(c.count, frames);
    for (int i = 0; i < frames; i++) {
      assert_int_equal(c.lens[i], lens[i]);
      for (size_t j = 0; j < lens[i]; j++) assert_int_equal(c.data[i][j], (uint8_t)(i + j * 7));
    }
    collected_free(&c);
    anim_frame_reader_free(&r);
    free(buf);
  }
}

/* ---- fields read without a schema ---- */

static void test_fields_refuse_malformed(void **state) {
  anim_wire_field_t f;
  size_t pos = 0;
  const uint8_t zero_field[] = {0x00, 0x01};        /* field number 0 */
  const uint8_t group[] = {0x0b};                   /* wire type 3: a group */
  const uint8_t overlong[] = {0x0a, 0x05, 'a', 'b'}; /* 5 bytes announced, 2 there */
  const uint8_t short_fixed[] = {0x0d, 1, 2, 3};    /* fixed32 with 3 bytes */
  assert_int_equal(anim_wire_next_field(zero_field, sizeof zero_field, &pos, &f), ANIM_EPROTO);
  pos = 0;
  assert_int_equal(anim_wire_next_field(group, sizeof group, &pos, &f), ANIM_EPROTO);
  pos = 0;
  assert_int_equal(anim_wire_next_field(overlong, sizeof overlong, &pos, &f), ANIM_EPROTO);
  pos = 0;
  assert_int_equal(anim_wire_next_field(short_fixed, sizeof short_fixed, &pos, &f), ANIM_EPROTO);
  assert_int_equal(pos, 0); /* nothing consumed on failure */
}

static void test_fields_walk_every_type(void **state) {
  /* id = 300 (varint), name = "ab" (bytes), a fixed64 and a fixed32. */
  const uint8_t m[] = {0x08, 0xac, 0x02, 0x12, 0x02, 'a', 'b', 0x19, 1, 2, 3, 4, 5, 6, 7, 8, 0x25, 9, 9, 9, 9};
  anim_wire_field_t f;
  size_t pos = 0;
  assert_int_equal(anim_wire_next_field(m, sizeof m, &pos, &f), 1);
  assert_int_equal(f.number, 1), assert_int_equal(f.type, ANIM_WIRE_VARINT), assert_int_equal(f.value, 300);
  assert_int_equal(anim_wire_next_field(m, sizeof m, &pos, &f), 1);
  assert_int_equal(f.number, 2), assert_int_equal(f.len, 2), assert_memory_equal(f.data, "ab", 2);
  assert_int_equal(anim_wire_next_field(m, sizeof m, &pos, &f), 1);
  assert_int_equal(f.number, 3), assert_int_equal(f.type, ANIM_WIRE_FIXED64), assert_int_equal(f.len, 8);
  assert_int_equal(anim_wire_next_field(m, sizeof m, &pos, &f), 1);
  assert_int_equal(f.number, 4), assert_int_equal(f.type, ANIM_WIRE_FIXED32), assert_int_equal(f.data[0], 9);
  assert_int_equal(anim_wire_next_field(m, sizeof m, &pos, &f), 0);
  assert_int_equal(pos, sizeof m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_oversize_length_rejected_before_allocation),
      cmocka_unit_test(test_huge_length_rejected),
      cmocka_unit_test(test_garbage_varint),
      cmocka_unit_test(test_varint_tenth_byte_overflow),
      cmocka_unit_test(test_truncated_varint_needs_more),
      cmocka_unit_test(test_callback_stop_propagates),
      cmocka_unit_test(test_varint_round_trip),
      cmocka_unit_test(test_many_frames_in_one_read),
      cmocka_unit_test(test_frame_split_across_many_reads),
      cmocka_unit_test(test_partial_frames_and_empty_frames),
      cmocka_unit_test(test_random_chunking),
      cmocka_unit_test(test_fields_refuse_malformed),
      cmocka_unit_test(test_fields_walk_every_type),
  };
  return cmocka_run_group_tests_name("frame", tests, NULL, NULL);
}
