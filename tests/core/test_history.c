/*
 * test_history.c: a character's history (core/character/history.h) and its
 * parameters changed live (core/character/tuning.h), on the default
 * database. Invalid sizes and parameters first; then the ring (what it
 * holds after wrapping, found by tick), each record against the character
 * it recorded (frame, search, candidates equal a k-search of the recorded
 * query to the bit, group costs summing to the distance), and a history
 * that changes nothing the character does.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "anim_error.h"
#include "character/controller.h"
#include "character/history.h"
#include "character/tuning.h"
#include "procgen_db.h"

static anim_database_t db;
static anim_search_index_t *index_fast;

static int setup(void **state) { return anim_test_procgen_indexed(&db, &index_fast); }

static int teardown(void **state) {
  anim_test_procgen_indexed_free(&db, index_fast);
  return 0;
}

static void walk(anim_controller_t *c, int ticks, int from_tick) {
  for (int t = 0; t < ticks; t++) {
    float turn = 0.8f * (float)(from_tick + t) / 60.0f;
    anim_controller_input_t in = {.kind = ANIM_INPUT_STICK, .stick_z = 0.85f, .camera_azimuth = turn};
    assert_int_equal(anim_controller_set_input(c, &in), 0);
    assert_int_equal(anim_controller_tick(c, 1.0f / 60.0f), 0);
  }
}

static void test_invalid(void **state) {
  anim_history_t h;
  assert_int_equal(anim_history_init(&h, &db, 0, 8, NULL, 0), ANIM_EINVAL);
  assert_int_equal(anim_history_init(&h, &db, ANIM_HISTORY_MAX_TICKS + 1, 8, NULL, 0), ANIM_EINVAL);
  assert_int_equal(anim_history_init(&h, &db, 10, 0, NULL, 0), ANIM_EINVAL);
  assert_int_equal(anim_history_init(&h, &db, 10, ANIM_HISTORY_MAX_CANDIDATES + 1, NULL, 0), ANIM_EINVAL);
  assert_int_equal(anim_history_init(&h, NULL, 10, 8, NULL, 0), ANIM_EINVAL);
  assert_int_equal(anim_history_bytes(&db, 0, 8), 0);
  assert_int_equal(anim_history_init(&h, &db, 10, 8, NULL, 0), 0);
  uint64_t first, last;
  assert_int_equal(anim_history_span(&h, &first, &last), ANIM_ENOTFOUND); /* nothing recorded */
  assert_null(anim_history_find(&h, 0));
  assert_null(anim_history_at(&h, 0));
  anim_history_free(&h);

  /* Parameters: refused whole, the character's kept. */
  anim_controller_t c;
  assert_int_equal(anim_controller_init(&c, &db, index_fast, NULL, vec3_zero(), 0.0f, 0), 0);
  anim_controller_params_t p = c.params;
  p.forward_speed = 3.0f, p.inertialize_halflife = -1.0f;
  assert_int_equal(anim_controller_set_params(&c, &p), ANIM_EINVAL);
  p.inertialize_halflife = NAN;
  assert_int_equal(anim_controller_set_params(&c, &p), ANIM_ENONFINITE);
  p.inertialize_halflife = 0.1f, p.search_interval = 0;
  assert_int_equal(anim_controller_set_params(&c, &p), ANIM_EINVAL);
  assert_true(c.params.forward_speed == 1.75f && c.params.search_interval == 10);
  anim_controller_free(&c);
}

static void test_ring_wraps(void **state) {
  anim_controller_t c;
  anim_history_t h;
  assert_int_equal(anim_controller_init(&c, &db, index_fast, NULL, vec3_zero(), 0.0f, 0), 0);
  assert_int_equal(anim_history_init(&h, &db, 50, 8, NULL, 1000), 0);
  c.history = &h;
  walk(&c, 130, 0);
  uint64_t first, last;
  assert_int_equal(anim_history_span(&h, &first, &last), 0);
  assert_int_equal(anim_history_held(&h), 50);
  assert_int_equal(first, 1000 + 80); /* the last 50 of 130, numbered from 1000 */
  assert_int_equal(last, 1000 + 129);
  for (uint64_t i = 0; i < 50; i++) assert_int_equal(anim_history_at(&h, i)->tick, first + i);
  assert_ptr_equal(anim_history_find(&h, first + 7), anim_history_at(&h, 7));
  assert_null(anim_history_find(&h, first - 1));
  assert_null(anim_history_find(&h, last + 1));
  /* The newest record is what the character shows now. */
  const anim_history_record_t *r = anim_history_at(&h, 49);
  assert_int_equal(r->frame, c.frame);
  const quat *rotations = anim_history_rotations(&h, r);
  for (int b = 0; b < db.nbones; b++) assert_memory_equal(&rotations[b], &c.pose_rotations[b], sizeof(quat));
  assert_memory_equal(&r->root_position, &c.pose_positions[0], sizeof(vec3));
  const vec3 *positions = anim_history_positions(&h, r);
  for (int b = 0; b < db.nbones; b++) assert_memory_equal(&positions[b], &c.pose_positions[b], sizeof(vec3));
  anim_history_free(&h);
  anim_controller_free(&c);
}

/* Every searched record's candidates are a k-search of its own query and
 * settings, and its group costs add up to each candidate's distance. */
static void test_records_match_the_search(void **state) {
  anim_controller_t c;
  anim_history_t h;
  assert_int_equal(anim_controller_init(&c, &db, index_fast, NULL, vec3_zero(), 0.0f, 0), 0);
  assert_int_equal(anim_history_init(&h, &db, 300, 12, NULL, 0), 0);
  c.history = &h;
  walk(&c, 300, 0);
  int searched = 0;
  for (uint64_t i = 0; i < anim_history_held(&h); i++) {
    const anim_history_record_t *r = anim_history_at(&h, i);
    if (!(r->flags & ANIM_HISTORY_SEARCHED)) {
      assert_int_equal(r->ncandidates, 0);
      assert_int_equal(r->chosen, -1);
      continue;
    }
    searched++;
    assert_true(r->reasons != 0);
    anim_search_query_t q = {anim_history_query(&h, r), 12, r->current_frame, r->transition_cost,
                             r->ignore_range_end, r->ignore_surrounding, r->tag_mask};
    anim_search_hit_t hits[12];
    int count = 0;
    assert_int_equal(anim_search_run(index_fast, &q, hits, &count, NULL), 0);
    assert_int_equal(count, r->ncandidates);
    const anim_search_hit_t *cands = anim_history_candidates(&h, r);
    assert_memory_equal(hits, cands, (size_t)count * sizeof *hits); /* frames and costs, bit for bit */
    assert_int_equal(r->chosen, cands[0].frame);
    const float *costs = anim_history_group_costs(&h, r);
    for (int k = 0; k < count; k++) {
      double sum = 0.0;
      for (int t = 0; t < db.features.schema.nterms; t++) sum += costs[k * db.features.schema.nterms + t];
      float extra = cands[k].frame == r->current_frame ? 0.0f : r->transition_cost;
      assert_true(fabs(sum + extra - cands[k].cost) <= 1e-4 * (1.0 + cands[k].cost));
    }
  }
  assert_true(searched >= 30); /* every 10 frames, and replans */
  anim_history_free(&h);
  anim_controller_free(&c);
}

/* Recording reads the character, never changes it: the same walk with and
 * without a history shows the same frames and the same pose. */
static void test_history_changes_nothing(void **state) {
  anim_controller_t a, b;
  anim_history_t h;
  assert_int_equal(anim_controller_init(&a, &db, index_fast, NULL, vec3_zero(), 0.0f, 0), 0);
  assert_int_equal(anim_controller_init(&b, &db, index_fast, NULL, vec3_zero(), 0.0f, 0), 0);
  assert_int_equal(anim_history_init(&h, &db, 60, 8, NULL, 0), 0);
  b.history = &h;
  for (int t = 0; t < 240; t++) {
    walk(&a, 1, t), walk(&b, 1, t);
    assert_int_equal(a.frame, b.frame);
  }
  assert_memory_equal(a.pose_rotations, b.pose_rotations, (size_t)db.nbones * sizeof(quat));
  assert_int_equal(a.transitions, b.transitions);
  /* Tuned live: the next ticks use the new half-life, the smoothing remade. */
  anim_controller_params_t p = b.params;
  p.inertialize_halflife = 0.3f, p.input_f = 2.0f;
  assert_int_equal(anim_controller_set_params(&b, &p), 0);
  walk(&b, 1, 240);
  assert_true(anim_history_at(&h, anim_history_held(&h) - 1)->halflife == 0.3f);
  anim_history_free(&h);
  anim_controller_free(&a), anim_controller_free(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_invalid),
      cmocka_unit_test(test_ring_wraps),
      cmocka_unit_test(test_records_match_the_search),
      cmocka_unit_test(test_history_changes_nothing),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
