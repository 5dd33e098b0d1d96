/*
 * test_crowd_chunks.c: a crowd whose simulation jobs outgrow the chunk array
 * in one tick. 4,500 characters created in one request make the first tick
 * plan 18 chunks of 256 at once, growing (moving) the array past 16 while
 * planning; every job must still point into the array it runs from (a
 * use-after-free under the sanitizers, a crash or a silent read of freed
 * memory without them, before crowd.c set work.data after planning). The
 * server keeps ticking with no tick errors and answers a ping.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>
#include "anim_client.h"
#include "fixture.h"

#define TIMEOUT_MS 30000
#define CHARACTERS 4500 /* 18 chunks of CHUNK_MAX (256) */

static void test_chunks_grow_in_one_tick(void **state) {
  anim_test_fixture_t f;
  assert_int_equal(anim_test_fixture_start(&f, "crowd_chunks", NULL, 0), 0);
  static uint64_t ids[CHARACTERS];
  assert_int_equal(anim_client_characters_create(f.client, "default", NULL, NULL, CHARACTERS, ids, TIMEOUT_MS), 0);
  anim_server_stats_t before, after;
  assert_int_equal(anim_client_server_stats(f.client, &before, TIMEOUT_MS), 0);
  /* Several ticks of the whole crowd (each plans its chunks again). */
  for (int i = 0; i < 200; i++) {
    assert_int_equal(anim_client_server_stats(f.client, &after, TIMEOUT_MS), 0);
    if (after.ticks >= before.ticks + 10) break;
    anim_client_poll(f.client, 20);
  }
  assert_true(after.ticks >= before.ticks + 10);
  assert_int_equal(after.characters, CHARACTERS);
  uint64_t rtt;
  assert_int_equal(anim_client_ping(f.client, "x", 1, &rtt, TIMEOUT_MS), 0);
  assert_int_equal(anim_test_fixture_stop(&f), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_chunks_grow_in_one_tick)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
