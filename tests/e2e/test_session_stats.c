/*
 * test_session_stats.c: server_stats' memory figures, through the real
 * client on a real server. character_bytes is the memory every live
 * character holds, whatever its kind (it used to be one motion-matching
 * character's size, whatever the server held): it starts at 0, grows by the
 * same amount for each character of one kind, by another amount for
 * another kind (a graph character keeps a path planner's search arrays, a
 * motion-matching one does not; a machine character keeps five poses of
 * its own), and comes back down
 * by exactly what each destroyed character added, and to 0 when the
 * characters' connection closes. pose_buffer_bytes stays one
 * motion-matching character's pose buffers on the default database.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>
#include "anim_client.h"
#include "anim_error.h"
#include "fixture.h"

#define TIMEOUT_MS 20000
/* build_graph answers once the build is done: seconds under the sanitizers on a loaded machine. */
#define BUILD_TIMEOUT_MS 120000
#define MATCHING 10
#define GRAPHS 3
#define MACHINES 2

static const char machine_text[] = "idle   { clip idle loop  GO moving }\n"
                                   "moving { clip walk [0 1] loop  STOP idle }\n";

static anim_test_fixture_t fx;

static int setup(void **state) { return anim_test_fixture_start(&fx, "session_stats", NULL, 1); }

static int teardown(void **state) { return anim_test_fixture_stop(&fx); }

static anim_server_stats_t stats_now(void) {
  anim_server_stats_t st;
  assert_int_equal(anim_client_server_stats(fx.client, &st, TIMEOUT_MS), 0);
  return st;
}

/* The default database's motion graph, built (or building already) and ready. */
static void graph_ready(void) {
  anim_graph_description_t *d = NULL;
  anim_graph_build_options_t o = {0};
  int rc = anim_client_graph_build(fx.client, "default", &o, &d, BUILD_TIMEOUT_MS);
  if (rc != 0 && rc != ANIM_EBUSY) /* seen once under load: name it */
    fail_msg("build_graph: %s: %s", anim_strerror(rc), anim_client_last_error(fx.client));
  for (int i = 0; i < 600; i++) {
    anim_graph_description_free(d);
    assert_int_equal(anim_client_graph_describe(fx.client, "default", 0, 0, &d, TIMEOUT_MS), 0);
    int ready = d->status != ANIM_GRAPH_BUILDING && d->ready;
    assert_int_not_equal(d->status, ANIM_GRAPH_FAILED);
    if (ready) {
      anim_graph_description_free(d);
      return;
    }
    uint64_t rtt;
    anim_client_ping(fx.client, NULL, 0, &rtt, TIMEOUT_MS);
  }
  fail_msg("the graph did not finish building");
}

static void test_character_bytes_follow_the_characters(void **state) {
  const anim_db_summary_t *db = &fx.defaults->summary;
  anim_server_stats_t st = stats_now();
  assert_int_equal(st.characters, 0);
  assert_int_equal(st.character_bytes, 0);
  uint64_t pose_buffers = st.pose_buffer_bytes;
  assert_true(pose_buffers > 0);

  /* Motion matching, on another connection (closed at the end). */
  anim_client_t *owner = anim_test_connect(&fx.server);
  uint64_t matching[MATCHING], graphs[GRAPHS];
  assert_int_equal(anim_client_characters_create(owner, "default", NULL, NULL, MATCHING, matching, TIMEOUT_MS), 0);
  st = stats_now();
  assert_int_equal(st.characters, MATCHING);
  assert_int_equal(st.character_bytes % MATCHING, 0); /* the same for each */
  uint64_t per_matching = st.character_bytes / MATCHING;
  /* Its pose buffers, and the actor and controller besides. */
  assert_true(per_matching > pose_buffers);
  assert_int_equal(st.pose_buffer_bytes, pose_buffers);

  /* Graph characters: a planner with a float per database frame, and 7
   * vec3 and 3 quat arrays a bone; one more kind makes the total its own. */
  graph_ready();
  anim_character_mode_t mode = {.mode = ANIM_MODE_GRAPH};
  assert_int_equal(anim_client_characters_create_mode(owner, "default", &mode, NULL, NULL, GRAPHS, graphs, TIMEOUT_MS),
                   0);
  anim_server_stats_t with_graphs = stats_now();
  assert_int_equal(with_graphs.characters, MATCHING + GRAPHS);
  uint64_t added = with_graphs.character_bytes - st.character_bytes;
  assert_int_equal(added % GRAPHS, 0);
  uint64_t per_graph = added / GRAPHS;
  uint64_t graph_least = (uint64_t)db->bones * (7 * 12 + 3 * 16);
  printf("  per character: motion matching %llu bytes (%llu of pose buffers), graph %llu (at least %llu: %u bones)\n",
         (unsigned long long)per_matching, (unsigned long long)pose_buffers, (unsigned long long)per_graph,
         (unsigned long long)graph_least, db->bones);
  if (per_graph < graph_least)
    fail_msg("a graph character counts %llu bytes, its pose arrays alone take %llu",
             (unsigned long long)per_graph, (unsigned long long)graph_least);
  assert_true(per_graph != per_matching);

  /* Machine characters: three input poses, the pose and the offsets (3
   * vec3 and a quat a bone each), global positions and rotations. */
  anim_machine_summary_t *summary = NULL;
  assert_int_equal(
      anim_client_machine_load(fx.client, "stats", machine_text, sizeof machine_text - 1, 0, &summary, TIMEOUT_MS), 0);
  anim_machine_summary_free(summary);
  uint64_t machines[MACHINES];
  anim_character_mode_t machine = {.mode = ANIM_MODE_MACHINE, .machine = "stats"};
  assert_int_equal(
      anim_client_characters_create_mode(owner, "default", &machine, NULL, NULL, MACHINES, machines, TIMEOUT_MS), 0);
  st = stats_now();
  added = st.character_bytes - with_graphs.character_bytes;
  assert_int_equal(added % MACHINES, 0);
  uint64_t per_machine = added / MACHINES, machine_least = (uint64_t)db->bones * (5 * (3 * 12 + 16) + 12 + 16);
  printf("  machine %llu (at least %llu)\n", (unsigned long long)per_machine, (unsigned long long)machine_least);
  assert_true(per_machine >= machine_least && per_machine != per_matching);
  assert_int_equal(anim_client_characters_destroy(owner, machines, MACHINES, TIMEOUT_MS), 0);
  assert_int_equal(stats_now().character_bytes, with_graphs.character_bytes);

  /* Destroyed: exactly what each added goes. */
  assert_int_equal(anim_client_characters_destroy(owner, matching, 4, TIMEOUT_MS), 0);
  st = stats_now();
  assert_int_equal(st.characters, MATCHING + GRAPHS - 4);
  assert_int_equal(with_graphs.character_bytes - st.character_bytes, 4 * per_matching);
  assert_int_equal(anim_client_characters_destroy(owner, graphs, 1, TIMEOUT_MS), 0);
  st = stats_now();
  assert_int_equal(with_graphs.character_bytes - st.character_bytes, 4 * per_matching + per_graph);
  /* The owner goes, and its characters with it. */
  anim_client_close(owner);
  for (int i = 0; i < 500 && (st = stats_now()).characters; i++) {
    uint64_t rtt;
    anim_client_ping(fx.client, NULL, 0, &rtt, TIMEOUT_MS);
  }
  assert_int_equal(st.characters, 0);
  assert_int_equal(st.character_bytes, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_character_bytes_follow_the_characters),
  };
  return cmocka_run_group_tests_name("session_stats", tests, setup, teardown);
}
