/* test_replica_order.c: the replicated stream's record order
 * (core/character/replica_order.h) as the server writes it and the client
 * replica reads it: the codes on the wire, fresh frames, growth. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "character/replica_order.h"

/* One frame of ids through a writer's order and a reader's: the reader
 * must name the writer's ids; the codes go to out_codes. */
static void frame(anim_replica_order_t *writer, anim_replica_order_t *reader, int fresh, const uint64_t *ids, int n,
                  uint64_t *out_codes) {
  anim_replica_order_begin(writer, fresh);
  anim_replica_order_begin(reader, fresh);
  for (int i = 0; i < n; i++) {
    assert_int_equal(anim_replica_order_reserve(writer), 0);
    out_codes[i] = anim_replica_order_code(writer, ids[i]);
    anim_replica_order_push(writer, ids[i]);
    assert_int_equal(anim_replica_order_reserve(reader), 0);
    uint64_t id = anim_replica_order_id(reader, out_codes[i]);
    assert_int_equal(id, ids[i]);
    anim_replica_order_push(reader, id);
  }
  anim_replica_order_end(writer);
  anim_replica_order_end(reader);
}

/* ---- edges: an empty order, a fresh frame, ids past the previous frame's end ---------------- */

static void test_empty_and_fresh(void **state) {
  anim_replica_order_t o = {0};
  assert_int_equal(anim_replica_order_base(&o), 0);
  assert_int_equal(anim_replica_order_bytes(&o), 0);
  anim_replica_order_free(&o); /* nothing held: no-op */
  anim_replica_order_t w = {0}, r = {0};
  uint64_t codes[3], first[] = {5, 7, 9};
  frame(&w, &r, 0, first, 3, codes);
  /* No previous frame: ids whole, zigzagged. */
  assert_int_equal(codes[0], 10), assert_int_equal(codes[1], 14), assert_int_equal(codes[2], 18);
  /* A fresh frame forgets the previous one: the same ids go whole again. */
  frame(&w, &r, 1, first, 3, codes);
  assert_int_equal(codes[0], 10), assert_int_equal(codes[2], 18);
  assert_int_equal(w.nprevious, 3);
  anim_replica_order_free(&w), anim_replica_order_free(&r);
  assert_null(w.previous), assert_int_equal(w.capacity, 0);
}

/* ---- behaviour ------------------------------------------------------------------------------ */

/* The same set: one byte each (code 0); a change costs only where it is. */
static void test_codes_against_previous_frame(void **state) {
  anim_replica_order_t w = {0}, r = {0};
  uint64_t codes[4];
  const uint64_t a[] = {5, 7, 9}, b[] = {5, 7, 9}, c[] = {5, 6, 9, 12}, d[] = {UINT64_MAX, 0, 9};
  frame(&w, &r, 0, a, 3, codes);
  frame(&w, &r, 0, b, 3, codes);
  assert_int_equal(codes[0], 0), assert_int_equal(codes[1], 0), assert_int_equal(codes[2], 0);
  frame(&w, &r, 0, c, 4, codes);
  /* 6 against 7: -1 -> 1; 12 past the previous frame's end: whole. */
  assert_int_equal(codes[0], 0), assert_int_equal(codes[1], 1), assert_int_equal(codes[2], 0);
  assert_int_equal(codes[3], 24);
  /* Deltas that wrap: UINT64_MAX against 5, 0 against 6. */
  frame(&w, &r, 0, d, 3, codes);
  assert_int_equal(codes[0], 11), assert_int_equal(codes[1], 11), assert_int_equal(codes[2], 0);
  anim_replica_order_free(&w), anim_replica_order_free(&r);
}

/* Past the first capacity (256) both arrays grow, and the previous
 * frame survives the swap at the new size. */
static void test_growth(void **state) {
  enum { N = 1000 };
  static uint64_t ids[N], codes[N];
  anim_replica_order_t w = {0}, r = {0};
  for (int i = 0; i < N; i++) ids[i] = 1000 + 3 * (uint64_t)i;
  frame(&w, &r, 0, ids, N, codes);
  assert_true(w.capacity >= N);
  assert_int_equal(anim_replica_order_bytes(&w), 2 * w.capacity * sizeof(uint64_t));
  ids[N - 1] += 1;
  frame(&w, &r, 0, ids, N, codes);
  for (int i = 0; i < N - 1; i++) assert_int_equal(codes[i], 0);
  assert_int_equal(codes[N - 1], 2);
  anim_replica_order_free(&w), anim_replica_order_free(&r);
}

/* Sized ahead for n ids, a frame of n reserves without growing; the ids
 * already held survive a later sizing. */
static void test_reserve_for(void **state) {
  anim_replica_order_t o = {0};
  assert_int_equal(anim_replica_order_reserve_for(&o, 300), 0);
  size_t capacity = o.capacity;
  assert_true(capacity >= 300);
  uint64_t *held = o.current;
  anim_replica_order_begin(&o, 1);
  for (uint64_t i = 0; i < 300; i++) {
    assert_int_equal(anim_replica_order_reserve(&o), 0);
    anim_replica_order_push(&o, 7 + i);
  }
  assert_int_equal(o.capacity, capacity);
  assert_ptr_equal(o.current, held); /* no growth inside the frame */
  assert_int_equal(anim_replica_order_reserve_for(&o, 100), 0); /* never shrinks */
  assert_int_equal(o.capacity, capacity);
  assert_int_equal(anim_replica_order_reserve_for(&o, 5000), 0);
  assert_true(o.capacity >= 5000);
  for (uint64_t i = 0; i < 300; i++) assert_int_equal(o.current[i], 7 + i);
  anim_replica_order_free(&o);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_empty_and_fresh),
      cmocka_unit_test(test_codes_against_previous_frame),
      cmocka_unit_test(test_growth),
      cmocka_unit_test(test_reserve_for),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
