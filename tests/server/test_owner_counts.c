/*
 * test_owner_counts.c: the crowd's characters-per-owner table
 * (server/owner_counts.h) against a plain array doing the same adds and
 * removes: every owner's count agrees after every step, the table holds
 * exactly the owners with a count (one at zero is forgotten), it grows
 * past many owners and shrinks back when they leave, and removals from the
 * middle of probe runs (sequential ids, owner 0, ids far apart) never hide
 * an owner behind a gap.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>
#include "server/owner_counts.h"

#define OWNERS 600
#define STEPS 200000

static uint64_t owner_ids[OWNERS];
static uint32_t model[OWNERS];

static void check_all(const srv_owner_counts_t *t, int step) {
  uint32_t present = 0;
  for (int k = 0; k < OWNERS; k++) {
    present += model[k] > 0;
    if (srv_owner_counts_get(t, owner_ids[k]) != model[k])
      fail_msg("step %d: owner %llu counts %u, it holds %u", step, (unsigned long long)owner_ids[k],
               srv_owner_counts_get(t, owner_ids[k]), model[k]);
  }
  assert_int_equal(t->owners, present);
  assert_true(t->owners == 0 || 2 * t->owners <= t->capacity);
}

static void test_empty_table(void **state) {
  srv_owner_counts_t t = {0};
  assert_int_equal(srv_owner_counts_get(&t, 0), 0);
  assert_int_equal(srv_owner_counts_get(&t, 42), 0);
  srv_owner_counts_free(&t);
  assert_null(t.slots);
}

static void test_counts_follow_a_model(void **state) {
  /* Sequential ids (as connections get them), owner 0 (the server's own), and ids far apart. */
  for (int k = 0; k < OWNERS; k++) owner_ids[k] = k < 400 ? (uint64_t)k : (uint64_t)k << 40 | 7u;
  srv_owner_counts_t t = {0};
  srand(7);
  uint32_t peak = 0;
  for (int step = 0; step < STEPS; step++) {
    /* Three phases: many owners arrive, churn, then nearly all leave. */
    int phase = step < STEPS / 3 ? 0 : step < 2 * STEPS / 3 ? 1 : 2;
    int k = rand() % OWNERS;
    int add = phase == 0 ? rand() % 4 != 0 : phase == 1 ? rand() % 2 : rand() % 8 == 0;
    if (add) {
      assert_int_equal(srv_owner_counts_add(&t, owner_ids[k]), 0);
      model[k]++;
    } else if (model[k]) {
      srv_owner_counts_remove(&t, owner_ids[k]);
      model[k]--;
    }
    if (t.capacity > peak) peak = t.capacity;
    if (step % 997 == 0) check_all(&t, step);
  }
  check_all(&t, STEPS);
  /* Everyone leaves: the table shrinks to its least and holds nobody. */
  for (int k = 0; k < OWNERS; k++)
    while (model[k]) srv_owner_counts_remove(&t, owner_ids[k]), model[k]--;
  check_all(&t, STEPS + 1);
  assert_int_equal(t.owners, 0);
  assert_true(peak >= 1024); /* 600 owners at most half full */
  assert_int_equal(t.capacity, 16);
  srv_owner_counts_free(&t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_empty_table),
      cmocka_unit_test(test_counts_follow_a_model),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
