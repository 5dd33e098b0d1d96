/*
 * test_character_ids.c: what a character's id promises (crowd.h): never 0,
 * never issued twice in a run (a slot whose 32-bit generation comes round
 * to the run's first retires), and very likely different from every id of
 * another run of the server, so that a client reconnecting to a restarted
 * server with an old id gets NOT_FOUND, not someone else's new character.
 *
 * The crowd's own rules are checked on a crowd in this process (no server,
 * a loop that never ticks), its first generation set so that the 32-bit
 * wrap and the retirement happen within a few characters. The restart is
 * checked end to end: the real server started twice, ids created on each
 * through the real client library. Two runs draw the same first generation
 * with probability 2^-32: the test does not retry.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "anim_client.h"
#include "anim_error.h"
#include "fixture.h"
#include "inprocess_server.h"
#include "server_proc.h"
#include "server/crowd.h"

#define TIMEOUT_MS 10000

/* ---- a crowd in this process ----------------------------------------------------------------- */

static uv_loop_t loop;
static srv_config_t config;
static srv_registry_t registry;
static srv_db_entry_t *entry;
static srv_crowd_t crowd;

static void no_hook(srv_crowd_t *c, void *data) {
  (void)c, (void)data;
}

static void crowd_open(uint32_t first_generation) {
  anim_test_inprocess_setup(&config, &loop);
  memset(&registry, 0, sizeof registry);
  entry = anim_test_register_procgen(&registry);
  srv_crowd_hooks_t hooks = {.prepare = no_hook, .simulated = no_hook, .ended = no_hook};
  assert_int_equal(srv_crowd_init(&crowd, &loop, &config, &hooks), 0);
  srv_crowd_set_first_generation(&crowd, first_generation);
}

/* Frees everything; the loop must close clean (no handle left). */
static void crowd_close(void) {
  srv_crowd_close(&crowd);
  uv_run(&loop, UV_RUN_DEFAULT);
  srv_registry_clear(&registry);
  assert_int_equal(uv_loop_close(&loop), 0);
}

static uint64_t create(void) {
  static srv_create_characters_request_t request;
  anim_controller_params_default(&request.params);
  srv_actor_setup_t setup = {&request, vec3_zero(), 0.0f, 0, 0, NULL};
  char err[256];
  uint64_t id = 0;
  assert_int_equal(srv_crowd_create(&crowd, 1, entry, &srv_actor_matching, &setup, &id, err, sizeof err), 0);
  assert_ptr_not_equal(srv_crowd_find(&crowd, id), NULL);
  return id;
}

static void destroy(uint64_t id) {
  srv_actor_t *a = srv_crowd_find(&crowd, id);
  assert_non_null(a);
  srv_crowd_destroy(&crowd, a);
  assert_null(srv_crowd_find(&crowd, id));
}

static uint32_t slot_of(uint64_t id) { return (uint32_t)(id & 0xffffffffu) - 1; }
static uint32_t generation_of(uint64_t id) { return (uint32_t)(id >> 32); }

/* Ids that name nothing: 0 and a slot never used are not found. */
static void test_unknown_ids_not_found(void **state) {
  crowd_open(1);
  assert_null(srv_crowd_find(&crowd, 0));
  uint64_t id = create();
  assert_int_equal(id, 4294967297u); /* generation 1, slot 0: what the fuzz harness relies on */
  assert_null(srv_crowd_find(&crowd, 0));
  assert_null(srv_crowd_find(&crowd, id + 1));             /* slot 1, never used */
  assert_null(srv_crowd_find(&crowd, id & 0xffffffffu));   /* slot 0, generation 0 */
  assert_null(srv_crowd_find(&crowd, id + (1ull << 32)));  /* slot 0, the next generation */
  destroy(id);
  crowd_close();
}

/* A fresh crowd draws its first generation: two crowds in one process
 * (as two runs) almost surely differ, and the layout is kept. */
static void test_first_generation_drawn_per_crowd(void **state) {
  srv_crowd_hooks_t hooks = {.prepare = no_hook, .simulated = no_hook, .ended = no_hook};
  anim_test_inprocess_setup(&config, &loop);
  srv_crowd_t a, b;
  assert_int_equal(srv_crowd_init(&a, &loop, &config, &hooks), 0);
  assert_int_equal(srv_crowd_init(&b, &loop, &config, &hooks), 0);
  printf("first generations %u and %u\n", a.first_generation, b.first_generation);
  assert_int_not_equal(a.first_generation, b.first_generation);
  srv_crowd_close(&a);
  srv_crowd_close(&b);
  uv_run(&loop, UV_RUN_DEFAULT);
  assert_int_equal(uv_loop_close(&loop), 0);
}

/* The 32-bit generation wraps through 0 (the id stays non-zero: its low
 * half is slot + 1), and a slot retires when its next generation would be
 * the run's first again. */
static void test_generation_wraps_and_slot_retires(void **state) {
  const uint32_t first = 0xfffffffeu;
  crowd_open(first);
  uint64_t ids[5];
  ids[0] = create();
  assert_int_equal(slot_of(ids[0]), 0);
  assert_int_equal(generation_of(ids[0]), first);
  destroy(ids[0]);
  ids[1] = create();
  assert_int_equal(generation_of(ids[1]), 0xffffffffu);
  destroy(ids[1]);
  ids[2] = create(); /* generation 0 */
  assert_int_equal(ids[2], 1);
  destroy(ids[2]);
  /* As if slot 0 had held 2^32 - 4 more characters: its next is the last
   * generation before the run's first comes round. */
  crowd.generations[0] = first - 2;
  ids[3] = create();
  assert_int_equal(slot_of(ids[3]), 0);
  assert_int_equal(generation_of(ids[3]), first - 1);
  destroy(ids[3]);
  /* Slot 0 retired: the next character takes a new slot, at the run's first. */
  ids[4] = create();
  assert_int_equal(slot_of(ids[4]), 1);
  assert_int_equal(generation_of(ids[4]), first);
  for (int i = 0; i < 5; i++) {
    assert_int_not_equal(ids[i], 0);
    for (int j = 0; j < i; j++) assert_int_not_equal(ids[i], ids[j]);
    if (i < 4) assert_null(srv_crowd_find(&crowd, ids[i]));
  }
  /* The retired slot stays out of use however many come and go. */
  destroy(ids[4]);
  for (int i = 0; i < 3; i++) {
    uint64_t id = create();
    assert_int_equal(slot_of(id), 1);
    destroy(id);
  }
  crowd_close();
}

/* ---- the real server, started twice ---------------------------------------------------------- */

static void run_once(uint64_t *out_ids, int n, const uint64_t *earlier, int nearlier) {
  anim_test_server_t server;
  assert_int_equal(anim_test_server_start(&server, "test_character_ids", NULL), 0);
  anim_client_t *client = anim_test_connect(&server);
  assert_int_equal(anim_client_characters_create(client, "default", NULL, NULL, n, out_ids, TIMEOUT_MS), 0);
  for (int i = 0; i < n; i++) assert_int_equal(out_ids[i] & 0xffffffffu, (uint64_t)i + 1); /* slots 0.. */
  /* A client of the earlier run reconnecting with its ids: none names a
   * character of this run. */
  anim_character_state_t *st = NULL;
  for (int i = 0; i < nearlier; i++)
    assert_int_equal(anim_client_character_state(client, earlier[i], 0, &st, TIMEOUT_MS), ANIM_ENOTFOUND);
  anim_client_close(client);
  assert_int_equal(anim_test_server_stop(&server), 0);
}

static void test_ids_differ_across_restarts(void **state) {
  uint64_t first[3], second[3];
  run_once(first, 3, NULL, 0);
  run_once(second, 3, first, 3);
  printf("first run's first id %llu, the second's %llu\n", (unsigned long long)first[0],
         (unsigned long long)second[0]);
  assert_int_not_equal(first[0], second[0]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_unknown_ids_not_found),
      cmocka_unit_test(test_first_generation_drawn_per_crowd),
      cmocka_unit_test(test_generation_wraps_and_slot_retires),
      cmocka_unit_test(test_ids_differ_across_restarts),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
