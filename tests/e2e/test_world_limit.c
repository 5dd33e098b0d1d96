/*
 * test_world_limit.c: the bounded world (core/pose/world.h) end to end,
 * through the real server and the real client library.
 *
 * Invalid inputs first: every request carrying a world position is refused
 * just past the limit with ANIM_EINVAL and a message naming the field
 * (placements, a goal, a path's and a query's points and start, tracked
 * points, align's points, an explicit pose's root, an anchor); a goal at
 * 1e30 and a placement at 300 km (which used to be accepted and streamed
 * 214.7 km in the quantized encoding) among them. Then the behaviour: Hello
 * reports the limit (and, through the client library, every other fixed
 * bound Limits states); characters on the limit's corners stream their root in
 * every encoding (floats, quantized, the world positions asked for besides)
 * as placed; a character walked onto the boundary is held on it, in the
 * stream and in its state, and walks back in; so are a machine's and a
 * graph's.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "anim_client.h"
#include "fixture.h"
#include "pose/quantize.h"
#include "pose/world.h"
#include "server_proc.h"
#include "shared_data.h"

#define TIMEOUT_MS 10000
#define L ANIM_WORLD_LIMIT
#define PAST "10001"   /* as the server prints a coordinate just past the limit */
#define PAST_VALUE 10001.0f
#define RULE ": outside the world (every coordinate within +-10000 m, Limits.world_limit)"

/* A root decoded from the quantized stream against the float stream's of
 * the same tick: half a step (quantize.h), plus half a float's spacing at
 * the limit (both are floats again on the client: 0.49 mm at 10 km). */
#define MAX_ROOT_ERROR (0.5f * ANIM_ROOT_POSITION_STEP + 0.5f * 9.765625e-4f)
/* How far an idle character's root strays from where it was placed in its
 * first ticks (the default database's idle sways by centimetres). */
#define MAX_IDLE_DRIFT 0.5f

static anim_test_fixture_t fx;

/* With the shared networks the server serves learned characters too (--lmm). */
static int setup(void **state) { return anim_test_fixture_start_lmm(&fx, "world_limit", 1, NULL); }
static int teardown(void **state) { return anim_test_fixture_stop(&fx); }

static void drain_frames(anim_client_t *c) {
  anim_stream_frame_t *f;
  while (anim_client_next_frame(c, &f, 0) == 0) anim_stream_frame_free(f);
}

/* rc is code and the client's last error is message, exactly. */
static void expect(int rc, int code, const char *message) {
  const char *got = anim_client_last_error(fx.client);
  if (rc != code || strcmp(got, message) != 0)
    fail_msg("expected %s \"%s\"\n          got %s \"%s\"", anim_err_name(code), message, anim_err_name(rc), got);
}

/* ---- invalid inputs ---------------------------------------------------------------------- */

static void test_placements_refused(void **state) {
  uint64_t ids[2];
  /* Was accepted, and its quantized stream said x = 214748.4 m. */
  anim_character_placement_t far = {300000.0f, 0.0f, 0.0f, -1};
  int rc = anim_client_characters_create(fx.client, "default", NULL, &far, 1, ids, TIMEOUT_MS);
  if (rc == 0) { /* say what the stream made of it */
    anim_subscribe_options_t o = {ids, 1, 0, 1, ANIM_POSE_QUANTIZED, 0, 0};
    assert_int_equal(anim_client_subscribe(fx.client, &o, NULL, NULL, NULL, NULL, TIMEOUT_MS), 0);
    anim_stream_frame_t *f;
    assert_int_equal(anim_client_next_frame(fx.client, &f, TIMEOUT_MS), 0);
    fail_msg("a character placed at x = 300000 m was created; the quantized stream says x = %.2f m",
             f->poses[0].positions[0]);
  }
  expect(rc, ANIM_EINVAL, "create_characters.placements[0].x = 300000" RULE);
  anim_character_placement_t two[2] = {{0.0f, 0.0f, 0.0f, -1}, {0.0f, -PAST_VALUE, 0.0f, -1}};
  expect(anim_client_characters_create(fx.client, "default", NULL, two, 2, ids, TIMEOUT_MS), ANIM_EINVAL,
         "create_characters.placements[1].z = -" PAST RULE);
  anim_character_placement_t inf = {INFINITY, 0.0f, 0.0f, -1};
  assert_int_equal(anim_client_characters_create(fx.client, "default", NULL, &inf, 1, ids, TIMEOUT_MS),
                   ANIM_ENONFINITE);
  anim_server_stats_t stats; /* nothing made in part */
  assert_int_equal(anim_client_server_stats(fx.client, &stats, TIMEOUT_MS), 0);
  assert_int_equal(stats.characters, 0);
}

static void test_goals_refused(void **state) {
  uint64_t id;
  assert_int_equal(anim_client_characters_create(fx.client, "default", NULL, NULL, 1, &id, TIMEOUT_MS), 0);
  anim_character_input_t in;
  anim_character_input_goal(&in, 1e30f, 0.0f, 1.0f); /* was accepted */
  expect(anim_client_characters_set_input(fx.client, &id, &in, 1, NULL, TIMEOUT_MS), ANIM_EINVAL,
         "set_inputs.inputs[0].goal.x = 1e+30" RULE);
  anim_character_input_goal(&in, 0.0f, PAST_VALUE, 1.0f);
  expect(anim_client_characters_set_input(fx.client, &id, &in, 1, NULL, TIMEOUT_MS), ANIM_EINVAL,
         "set_inputs.inputs[0].goal.z = " PAST RULE);
  anim_character_input_goal(&in, -L, L, 1.0f); /* on the limit: taken */
  assert_int_equal(anim_client_characters_set_input(fx.client, &id, &in, 1, NULL, TIMEOUT_MS), 0);
  assert_int_equal(anim_client_characters_destroy(fx.client, &id, 1, TIMEOUT_MS), 0);
}

static void test_paths_refused(void **state) {
  /* Checked before the character or the graph is looked up. */
  uint64_t id = 1;
  const float points[] = {0.0f, 0.0f, 5.0f, 0.0f, PAST_VALUE, 3.0f};
  const float *list[] = {points};
  int npoints = 3, closed = 0;
  expect(anim_client_graph_paths(fx.client, &id, list, &npoints, &closed, 1, NULL, TIMEOUT_MS), ANIM_EINVAL,
         "set_paths.paths[0].points[2].x = " PAST RULE);
  anim_graph_query_t q = {points, 3, 0, 0.0f, 0.0f, 0.0f, NULL, 10.0f, 0.0f, 0};
  anim_graph_walk_t *walk = NULL;
  expect(anim_client_graph_query(fx.client, "default", &q, &walk, TIMEOUT_MS), ANIM_EINVAL,
         "query_graph.points[2].x = " PAST RULE);
  q.npoints = 2, q.start_z = -1e7f;
  expect(anim_client_graph_query(fx.client, "default", &q, &walk, TIMEOUT_MS), ANIM_EINVAL,
         "query_graph.start.z = -1e+07" RULE);
  assert_null(walk);
}

static void test_tracked_points_refused(void **state) {
  anim_tracker_t t[2] = {{"Hips", {0, 0, 0}, {0.0f, 1.0f, 0.0f}, 0, 0, {1, 0, 0, 0}, {0, 0, 0}, 0.0f, 0},
                         {"Head", {0, 0, 0}, {0.0f, PAST_VALUE, 0.0f}, 0, 0, {1, 0, 0, 0}, {0, 0, 0}, 0.0f, 0}};
  anim_fit_result_t *fit = NULL;
  expect(anim_client_fit_pose(fx.client, "default", t, 2, &fit, TIMEOUT_MS), ANIM_EINVAL,
         "fit_pose.trackers[1].position.y = " PAST RULE);
  uint64_t id = 1;
  int counts[] = {2};
  t[0].bone = t[1].bone = NULL;
  t[1].position[1] = 1.0f, t[1].position[2] = -PAST_VALUE;
  expect(anim_client_trackers_set(fx.client, &id, t, counts, 1, NULL, TIMEOUT_MS), ANIM_EINVAL,
         "set_trackers.characters[0].trackers[1].position.z = -" PAST RULE);
  const float source[9] = {0, 0, 0, 1, 0, 0, 0, 0, 1}, target[9] = {0, 0, 0, 1, 0, 0, 0, 0, PAST_VALUE};
  anim_align_result_t result;
  expect(anim_client_align(fx.client, source, target, NULL, 3, 0, &result, TIMEOUT_MS), ANIM_EINVAL,
         "align.target[2].z = " PAST RULE);
}

static void test_poses_refused(void **state) {
  float positions[6] = {PAST_VALUE, 0.9f, 0.0f, 0.0f, 0.1f, 0.0f}, zeros[6] = {0};
  float rotations[8] = {1, 0, 0, 0, 1, 0, 0, 0};
  anim_pose_source_t far = {-1, 2, positions, zeros, rotations, zeros};
  anim_pose_source_t near = {-1, 2, zeros, zeros, rotations, zeros};
  anim_inertializer_state_t *out = NULL;
  expect(anim_client_inertialize_transition(fx.client, NULL, &far, &near, NULL, &out, TIMEOUT_MS), ANIM_EINVAL,
         "inertialize_transition.source.pose.positions[0] = " PAST RULE);
  float offsets_q[8] = {1, 0, 0, 0, 1, 0, 0, 0};
  anim_inertializer_state_t st = {2, zeros, zeros, offsets_q, zeros, {0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0}};
  st.anchor[8] = -PAST_VALUE; /* the world position's y */
  expect(anim_client_inertialize_transition(fx.client, NULL, &near, &near, &st, &out, TIMEOUT_MS), ANIM_EINVAL,
         "inertialize_transition.state.anchor[8] = -" PAST RULE);
  assert_null(out);
}

/* ---- behaviour ------------------------------------------------------------------------------ */

static void test_limit_in_hello(void **state) {
  anim_hello_info_t info;
  assert_int_equal(anim_client_hello(fx.client, "world_limit", &info, TIMEOUT_MS), 0);
  assert_true(info.world_limit == L);
  /* The ahead bounds through the client library (each shown enforced at its value in test_fit_service.c and
   * test_physical.c). */
  assert_int_equal(info.max_trackers_ahead, 31);
  assert_int_equal(info.max_trackers_waiting, 32);
  assert_int_equal(info.max_push_ahead, 36000);
  assert_int_equal(info.max_pushes_pending, 8); /* SRV_PUSHES_MAX_PENDING, enforced in test_physical.c */
  /* Fields 16-25 of Limits, the server's constants (none has an option). */
  assert_int_equal(info.max_machines, 64);             /* SRV_MACHINES_MAX */
  assert_int_equal(info.max_machine_bytes, 1u << 20);  /* SRV_MACHINE_MAX_TEXT */
  assert_int_equal(info.max_events_waiting, 32);       /* ANIM_MACHINE_QUEUE */
  assert_int_equal(info.max_path_points, 4096);        /* ANIM_PATH_MAX_POINTS */
  assert_true(info.max_query_seconds == 600.0f);       /* SRV_QUERY_MAX_SECONDS */
  assert_int_equal(info.max_graph_builds, 1);          /* SRV_GRAPH_MAX_BUILDS */
  assert_int_equal(info.max_path_expansions, 1000000); /* SRV_PATH_MAX_EXPANSIONS */
  assert_int_equal(info.max_align_points, 65536);      /* SRV_ALIGN_MAX_POINTS */
  assert_int_equal(info.max_trackers, 8);              /* SRV_MAX_TRACKERS */
  assert_int_equal(info.fit_models_per_database, 8);   /* SRV_FIT_MODELS_PER_DATABASE */
}

/* Character id's pose in f, or NULL; its root. */
static const anim_character_pose_t *pose_of(const anim_stream_frame_t *f, uint64_t id) {
  for (int i = 0; i < f->nposes; i++)
    if (f->poses[i].character == id) return &f->poses[i];
  return NULL;
}
static const float *root_of(const anim_stream_frame_t *f, uint64_t id) {
  const anim_character_pose_t *p = pose_of(f, id);
  return p ? p->positions : NULL;
}

/* On the limit's corners and edges: each streams its root in the quantized
 * encoding as in the float one, tick by tick, where it was placed. */
static void test_at_limit_streams_exactly(void **state) {
  enum { N = 5 };
  anim_character_placement_t at[N] = {
      {L, L, 0.0f, -1}, {-L, -L, 1.0f, -1}, {L, -L, 2.0f, -1}, {-L, 0.0f, 3.0f, -1}, {0.0f, L, 4.0f, -1}};
  uint64_t ids[N];
  assert_int_equal(anim_client_characters_create(fx.client, "default", NULL, at, N, ids, TIMEOUT_MS), 0);
  drain_frames(fx.client);
  uint64_t subs[2];
  anim_subscribe_options_t floats = {ids, N, 0, 1, ANIM_POSE_FLOAT, 1, 0};
  anim_subscribe_options_t quantized = {ids, N, 0, 1, ANIM_POSE_QUANTIZED, 0, 0};
  assert_int_equal(anim_client_subscribe(fx.client, &floats, NULL, NULL, &subs[0], NULL, TIMEOUT_MS), 0);
  assert_int_equal(anim_client_subscribe(fx.client, &quantized, NULL, NULL, &subs[1], NULL, TIMEOUT_MS), 0);
  /* Frames of both subscriptions, by tick (either may come first), then
   * compared tick by tick. */
  enum { TICKS = 30 };
  float roots[2][TICKS][N][3];
  uint64_t ticks[2][TICKS];
  int have[2] = {0, 0};
  while (have[0] < TICKS || have[1] < TICKS) {
    anim_stream_frame_t *f;
    assert_int_equal(anim_client_next_frame(fx.client, &f, TIMEOUT_MS), 0);
    int e = f->subscription == subs[0] ? 0 : f->subscription == subs[1] ? 1 : -1;
    if (e >= 0 && have[e] < TICKS) {
      for (int c = 0; c < N; c++) {
        const float *r = root_of(f, ids[c]);
        assert_non_null(r);
        memcpy(roots[e][have[e]][c], r, sizeof roots[0][0][0]);
        if (e == 0) { /* the world positions asked for besides: bone 0's is the root's */
          const float *g = pose_of(f, ids[c])->global_positions;
          assert_non_null(g);
          assert_memory_equal(g, r, 3 * sizeof(float));
        }
        const float placed[3] = {at[c].x, r[1], at[c].z};
        for (int k = 0; k < 3; k += 2) {
          assert_true(fabsf(r[k]) <= L);
          if (fabsf(r[k] - placed[k]) > MAX_IDLE_DRIFT)
            fail_msg("%s stream: character %d root[%d] = %.4f, placed at %.4f", e ? "quantized" : "float", c, k,
                     r[k], placed[k]);
        }
      }
      ticks[e][have[e]++] = f->tick;
    }
    anim_stream_frame_free(f);
  }
  int compared = 0;
  float worst = 0.0f;
  for (int a = 0; a < TICKS; a++)
    for (int b = 0; b < TICKS; b++) {
      if (ticks[0][a] != ticks[1][b]) continue;
      for (int c = 0; c < N; c++)
        for (int k = 0; k < 3; k++) {
          float e = fabsf(roots[1][b][c][k] - roots[0][a][c][k]);
          if (e > worst) worst = e;
          if (e > MAX_ROOT_ERROR)
            fail_msg("tick %llu, character %d: quantized root[%d] = %.5f, float %.5f (%.2e m off)",
                     (unsigned long long)ticks[0][a], c, k, roots[1][b][c][k], roots[0][a][c][k], e);
        }
      compared++;
    }
  assert_true(compared >= TICKS / 2);
  print_message("  %d ticks compared, worst quantized root error %.2e m (bound %.2e)\n", compared, worst,
                MAX_ROOT_ERROR);
  assert_int_equal(anim_client_unsubscribe(fx.client, subs[0], TIMEOUT_MS), 0);
  assert_int_equal(anim_client_unsubscribe(fx.client, subs[1], TIMEOUT_MS), 0);
  assert_int_equal(anim_client_characters_destroy(fx.client, ids, N, TIMEOUT_MS), 0);
  drain_frames(fx.client);
}

/* Reads frames of sub for seconds: the largest of each root coordinate
 * seen, and the last root. */
static void watch_root(uint64_t sub, uint64_t id, float seconds, float out_max[3], float out_last[3]) {
  uint64_t first = 0;
  out_max[0] = out_max[1] = out_max[2] = -INFINITY;
  for (;;) {
    anim_stream_frame_t *f;
    assert_int_equal(anim_client_next_frame(fx.client, &f, TIMEOUT_MS), 0);
    const float *r = f->subscription == sub ? root_of(f, id) : NULL;
    if (r) {
      if (!first) first = f->tick;
      for (int k = 0; k < 3; k++) out_max[k] = fmaxf(out_max[k], r[k]), out_last[k] = r[k];
    }
    int done = r && (float)(f->tick - first) >= seconds * 60.0f;
    anim_stream_frame_free(f);
    if (done) return;
  }
}

#define EAST 1.5707963f /* a heading facing +X */

/* A character of database's mode placed at x, facing +X, streamed
 * quantized (*out_sub) and walked out at 3 m/s for seconds: never past the
 * limit, and on it at the end (still pushing). */
static void walk_out(const char *database, const anim_character_mode_t *mode, float x, float seconds,
                     const char *what, uint64_t *out_id, uint64_t *out_sub) {
  anim_character_placement_t at = {x, 0.0f, EAST, -1};
  assert_int_equal(anim_client_characters_create_mode(fx.client, database, mode, NULL, &at, 1, out_id, TIMEOUT_MS), 0);
  drain_frames(fx.client);
  anim_subscribe_options_t o = {out_id, 1, 0, 1, ANIM_POSE_QUANTIZED, 0, 0};
  assert_int_equal(anim_client_subscribe(fx.client, &o, NULL, NULL, out_sub, NULL, TIMEOUT_MS), 0);
  anim_character_input_t in;
  anim_character_input_velocity(&in, 3.0f, 0.0f, EAST);
  assert_int_equal(anim_client_characters_set_input(fx.client, out_id, &in, 1, NULL, TIMEOUT_MS), 0);
  float max[3], last[3];
  watch_root(*out_sub, *out_id, seconds, max, last);
  print_message("  %swalking out: largest x %.4f, last %.4f\n", what, max[0], last[0]);
  assert_true(max[0] <= L);
  assert_true(last[0] >= L - 0.05f);
}

/* The character walk_out left on the boundary walks back in at once (3 s
 * at 3 m/s toward -X); then it and its subscription are gone. */
static void walk_back(uint64_t id, uint64_t sub, const char *what) {
  anim_character_input_t in;
  anim_character_input_velocity(&in, -3.0f, 0.0f, -EAST);
  assert_int_equal(anim_client_characters_set_input(fx.client, &id, &in, 1, NULL, TIMEOUT_MS), 0);
  float max[3], last[3];
  watch_root(sub, id, 3.0f, max, last);
  print_message("  %swalking back: last x %.4f\n", what, last[0]);
  assert_true(last[0] < L - 3.0f);
  assert_int_equal(anim_client_unsubscribe(fx.client, sub, TIMEOUT_MS), 0);
  assert_int_equal(anim_client_characters_destroy(fx.client, &id, 1, TIMEOUT_MS), 0);
  drain_frames(fx.client);
}

/* Walked at 3 m/s toward +X from 3 m inside the limit: held on it for the
 * rest of 4 s (before: x = 10009 m streamed as float, and a longer walk in
 * the quantized stream past 214.7 km clamped), its state too; then it walks
 * back in. */
static void test_walk_held_on_boundary(void **state) {
  uint64_t id, sub;
  walk_out("default", NULL, L - 3.0f, 4.0f, "", &id, &sub);
  anim_character_state_t *st = NULL;
  assert_int_equal(anim_client_character_state(fx.client, id, 0, &st, TIMEOUT_MS), 0);
  assert_true(st->position[0] <= L);
  assert_true(st->inertializer.anchor[7] <= L + 5.0f); /* moved with it, not left behind */
  anim_character_state_free(st);
  walk_back(id, sub, "");
}

/* Another kind each, walked by its own motion: a machine looping a run
 * clip from 2 m inside, facing out; a graph character wandering from the
 * limit's corner. Each stays within the limit, the runner on it. */
static void test_other_kinds_held(void **state) {
  static const char runner[] = "go { clip run loop }\n";
  assert_int_equal(anim_client_machine_load(fx.client, "runner", runner, strlen(runner), 1, NULL, TIMEOUT_MS), 0);
  anim_graph_description_t *g = NULL;
  assert_int_equal(anim_client_graph_build(fx.client, "default", NULL, &g, 120000), 0);
  anim_graph_description_free(g);
  anim_character_mode_t machine = {.mode = ANIM_MODE_MACHINE, .machine = "runner"};
  anim_character_mode_t graph = {.mode = ANIM_MODE_GRAPH};
  anim_character_placement_t east = {L - 2.0f, 0.0f, 1.5707963f, -1}, corner = {L, L, 0.785398f, -1};
  uint64_t ids[2], sub;
  assert_int_equal(anim_client_characters_create_mode(fx.client, "default", &machine, NULL, &east, 1, &ids[0],
                                                      TIMEOUT_MS), 0);
  assert_int_equal(anim_client_characters_create_mode(fx.client, "default", &graph, NULL, &corner, 1, &ids[1],
                                                      TIMEOUT_MS), 0);
  drain_frames(fx.client);
  anim_subscribe_options_t o = {ids, 2, 0, 1, ANIM_POSE_QUANTIZED, 0, 0};
  assert_int_equal(anim_client_subscribe(fx.client, &o, NULL, NULL, &sub, NULL, TIMEOUT_MS), 0);
  float max[3], last[3];
  watch_root(sub, ids[0], 3.0f, max, last);
  print_message("  machine runner: largest x %.4f, last %.4f\n", max[0], last[0]);
  assert_true(max[0] <= L);
  assert_true(last[0] >= L - 0.05f);
  watch_root(sub, ids[1], 3.0f, max, last);
  print_message("  graph wanderer from the corner: largest x %.4f, z %.4f\n", max[0], max[2]);
  assert_true(max[0] <= L && max[2] <= L);
  assert_int_equal(anim_client_unsubscribe(fx.client, sub, TIMEOUT_MS), 0);
  assert_int_equal(anim_client_characters_destroy(fx.client, ids, 2, TIMEOUT_MS), 0);
  assert_int_equal(anim_client_machine_unload(fx.client, "runner", TIMEOUT_MS), 0);
  drain_frames(fx.client);
}

/* A learned character walked out at 3 m/s from 2 m inside is held on the
 * boundary and walks back in at once (its anchor and simulation moved with
 * it, not its shown root alone). Needs the shared networks. */
static void test_learned_held(void **state) {
  char path[1024];
  if (!anim_test_shared_path(path, sizeof path, "data/lmm/projector.bin")) return;
  anim_character_mode_t mode = {.mode = ANIM_MODE_LEARNED};
  uint64_t id, sub;
  walk_out("lmm", &mode, L - 2.0f, 3.0f, "learned, ", &id, &sub);
  walk_back(id, sub, "learned, ");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_placements_refused),      cmocka_unit_test(test_goals_refused),
      cmocka_unit_test(test_paths_refused),           cmocka_unit_test(test_tracked_points_refused),
      cmocka_unit_test(test_poses_refused),           cmocka_unit_test(test_limit_in_hello),
      cmocka_unit_test(test_at_limit_streams_exactly), cmocka_unit_test(test_walk_held_on_boundary),
      cmocka_unit_test(test_other_kinds_held),        cmocka_unit_test(test_learned_held),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
