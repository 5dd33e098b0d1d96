/*
 * test_foot_quality.c: motion quality of motion-matching characters on real
 * mocap under any input (issue 16): planted feet stay planted, nothing pops,
 * responsiveness is kept.
 *
 * Every shared dataset (Bandai Namco, GAMES-105 and the two CMU folders,
 * as `animdb build --mirror` builds them) and three input programs (tests/support/input_program.h: the tour,
 * a wander changing direction every 0.3-1 s, velocity reversals), each run
 * in process for 60 s (the random ones with two seeds) and measured on what the character
 * displays with the contacts the server streams
 * (tests/support/motion_quality.h); then the same programs over the wire
 * (Bandai Namco and GAMES-105), measured from the real server's stream. Invalid parameters first; then
 * the measure failing where it should (feet not locked slide); then the
 * bounds. Bounds are below with their reasons; failures name the dataset,
 * program, seed, and the worst foot or bone and frame.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "anim_error.h"
#include "character/controller.h"
#include "data_dir.h"
#include "fixture.h"
#include "quality_run.h"
#include "quality_wire.h"
#include "search/search.h"
#include "shared_data.h"

/* Contact-foot slide, m/s (the targets): the horizontal speed of a
 * contact bone between two frames the stream flags, ends of contacts left
 * out. A shown planted foot is held exactly (measured 0.000 on Bandai,
 * 0.002 p95 / 0.006 worst on GAMES-105, whose toes the IK holds within a
 * millimetre); before, 0.25-1.8 p95 and 1.9-4.1 worst. */
#define MAX_SLIDE_P95 0.1f
#define MAX_SLIDE_WORST 0.3f
/* No pops (the target): no bone faster than 1.2 times the fastest
 * it moves anywhere in the source data. Measured 0.78 on Bandai, 1.17 on
 * GAMES-105 (its wrists when a walk turns into its one short run clip,
 * which starts at full speed; 1.27 before the body blended slower than the
 * legs) and 1.12 on CMU 3dsMax. */
#define MAX_SPEED_RATIO 1.2f
/* Responsiveness: the mean time to reach 90% of a commanded speed over
 * RESPONSE_RUNS paths (check_response) no worse than the same mean
 * measured on the controller of commit 965f67c (response_before), with a
 * margin of RESPONSE_Z standard errors of the difference of two such means
 * (sqrt 2 times the standard error measured in the run): a change to the
 * controller sends each path elsewhere by chance, and one path's figure
 * moved by more than the 10% margin this bound had before (CMU 3dsMax's
 * tour from frame 0: 0.54 s, then 0.59 against 0.594), while the mean over
 * 16 paths has a standard error of 0.004-0.007 s on the tours and 0.03-0.04
 * s on the reversals. A slower controller fails (velocity_halflife 0.27 s
 * doubled: see the commit). The target was "not worse than before
 * the feet were planted" (commit e8c933e), measured there on one path
 * only: 0.75, 0.63 and 0.54 s on the tours, 1.92, 1.57 and 1.18 s on the
 * reversals (two seeds). */
#define RESPONSE_RUNS 16
#define RESPONSE_Z 3.0
/* Feet stay planted: the share of the data's contact frames the character
 * shows planted (shown share / data share). The rest is feet stepping to
 * where the animation went after a transition, or landing; measured 0.75
 * (Bandai wander, a transition every 0.3 s) to 0.96 (the tours). */
#define MIN_PLANTED_SHARE 0.7f

/* Per dataset (anim_quality_datasets' order): the response before (tour,
 * wander unused, reversals; 0: not checked; means over RESPONSE_RUNS
 * paths, commit 965f67c), the pop and planted-share
 * bounds. CMU MotionBuilder is one walk clip and its mirror: the tour's and
 * reversals' run speeds are not in it (the tour reaches none), and most
 * transitions land in another phase of the same cycle, the leg carrying the
 * old phase's swing for a few frames: pops measured 1.37-1.71 (1.45-1.65
 * before the feet were planted, e8c933e), so the 1.2 is not met
 * there and the bound only guards against worse; feet step to re-plant
 * after most transitions (planted 0.58 of the data's on the wander). */
static const struct {
  float response_before[ANIM_PROGRAM_COUNT];
  float max_speed_ratio, min_planted_share;
} bounds[] = {
    {{0.767f, 0.0f, 1.987f}, MAX_SPEED_RATIO, MIN_PLANTED_SHARE}, /* Bandai Namco */
    {{0.633f, 0.0f, 1.646f}, MAX_SPEED_RATIO, MIN_PLANTED_SHARE}, /* GAMES-105 */
    {{0.615f, 0.0f, 1.105f}, MAX_SPEED_RATIO, MIN_PLANTED_SHARE}, /* CMU 3dsMax */
    {{0.0f, 0.0f, 0.0f}, 1.8f, 0.5f},                           /* CMU MotionBuilder: see above */
};
#define DATASETS ((int)(sizeof bounds / sizeof bounds[0]))
_Static_assert(sizeof bounds / sizeof bounds[0] == ANIM_QUALITY_DATASETS, "one row of bounds per dataset");
/* A foot shown planted is on the ground: its contact bone no higher (95th
 * percentile) than the data's own planted contact bones plus 1.5 cm
 * (measured +0.4 cm on Bandai, -0.1 on GAMES-105; the issue saw toes 15 cm
 * up with contact on). */
#define MAX_HEIGHT_ABOVE_DATA 0.015f
/* Standing still (no input, 10 s from frame 0): at most this many
 * transitions, and the displayed root moving at most MAX_STANDING_DRIFT
 * (path length, m). Measured (before this stop's change, commit 116fd4a):
 * GAMES-105 12 (27; it has an idle clip, now looped a second or more at a
 * time), CMU 3dsMax 1 (60, hopping between the first frames of a clip and
 * of its mirror, the only standing poses, 6 times a second: now the best
 * one is held; drift 0.001 m, 0.45 before). Bandai Namco and CMU
 * MotionBuilder have no standing data at all: their characters walk on
 * when asked to stand (about 9 and 12 m in 10 s), so no bound there.
 * Then the stick forward (0.85, 1.49 m/s asked): half that speed no later
 * than before with 10% for chance (STANDING_START_MARGIN; measured 0.33 s before
 * on GAMES-105, now 0.35; 1.10 s before on CMU 3dsMax, now 0.40: the held
 * pose starts a clip that walks off). */
static const int max_standing_transitions[] = {-1, 16, 3, -1};
static const float standing_start_before[] = {0.0f, 0.33f, 1.10f, 0.0f};
#define MAX_STANDING_DRIFT 0.1f
#define STANDING_START_MARGIN 1.1f
_Static_assert(sizeof max_standing_transitions / sizeof max_standing_transitions[0] == ANIM_QUALITY_DATASETS,
               "one standing bound per dataset");
/* Seconds per in-process run and seeds. */
#define RUN_SECONDS 60.0f
#define SEEDS 2
/* Over the wire: seconds of server ticks, all six characters at once. */
#define WIRE_SECONDS 10.0f

typedef struct {
  anim_database_t db;
  anim_search_index_t *index;
  int built;
} dataset_t;

static dataset_t sets[DATASETS];

/* The dataset's database, built once for the group; 0 after skip/fail. */
static dataset_t *dataset(int d) {
  char rel[128], path[1024], err[512];
  snprintf(rel, sizeof rel, "data/mocap/%s", anim_quality_datasets[d].folder);
  if (!anim_test_shared_path(path, sizeof path, rel)) return NULL;
  dataset_t *s = &sets[d];
  if (s->built) return s;
  if (anim_quality_dataset_build(&s->db, anim_test_shared_dir(), d, err, sizeof err))
    fail_msg("%s: %s", anim_quality_datasets[d].name, err);
  anim_search_data_t data = anim_search_data_of(&s->db);
  s->index = anim_search_index_build(ANIM_SEARCH_FAST, &data, err, sizeof err);
  if (!s->index) fail_msg("%s: %s", anim_quality_datasets[d].name, err);
  s->built = 1;
  return s;
}

static int teardown(void **state) {
  for (int d = 0; d < DATASETS; d++)
    if (sets[d].built) anim_search_index_free(sets[d].index), anim_database_free(&sets[d].db);
  return 0;
}

static void test_invalid_parameters(void **state) {
  anim_controller_params_t p;
  anim_controller_params_default(&p);
  p.body_halflife_scale = 0.0f;
  assert_int_equal(anim_controller_params_validate(&p), ANIM_EINVAL);
  anim_controller_params_default(&p);
  p.root_halflife_scale = -1.0f;
  assert_int_equal(anim_controller_params_validate(&p), ANIM_EINVAL);
  p.root_halflife_scale = NAN;
  assert_int_equal(anim_controller_params_validate(&p), ANIM_ENONFINITE);
  anim_controller_params_default(&p);
  assert_int_equal(anim_controller_params_validate(&p), 0);
  anim_foot_locks_t locks;
  memset(&locks, 0, sizeof locks);
  assert_int_equal(anim_foot_locks_ground(&locks, -0.01f), ANIM_EINVAL);
  assert_int_equal(anim_foot_locks_ground(&locks, INFINITY), ANIM_EINVAL);
  assert_int_equal(anim_foot_locks_ground(&locks, 0.05f), 0);
  assert_int_equal(locks.on_ground, 1);
}

/* The checks of one run; label names dataset, program and seed. */
static void check(int d, anim_program_kind_t k, const anim_quality_t *q, const char *label) {
  const anim_database_t *db = &sets[d].db;
  char line[768];
  anim_quality_format(q, &db->skeleton, line, sizeof line);
  printf("  %s: %s\n", label, line);
  const char *foot = q->slide_worst_foot >= 0 ? db->skeleton.names[db->contact_bones[q->slide_worst_foot]] : "-";
  if (!(q->slide_p95 < MAX_SLIDE_P95)) fail_msg("%s: contact slide p95 %.3f m/s", label, (double)q->slide_p95);
  if (!(q->slide_max < MAX_SLIDE_WORST))
    fail_msg("%s: contact slide %.3f m/s, %s at frame %ld", label, (double)q->slide_max, foot, q->slide_worst_frame);
  if (!(q->pop_ratio <= bounds[d].max_speed_ratio))
    fail_msg("%s: %s at %.2f m/s in frame %ld, %.2f times its source maximum %.2f", label,
             db->skeleton.names[q->pop_bone], (double)q->pop_speed, q->pop_frame, (double)q->pop_ratio,
             (double)q->pop_source);
  if (!(q->slide_samples > 100)) fail_msg("%s: only %ld slide samples", label, q->slide_samples);
  if (!(q->flagged_share >= bounds[d].min_planted_share * q->data_share))
    fail_msg("%s: feet shown planted %.2f of the time, the data %.2f", label, (double)q->flagged_share,
             (double)q->data_share);
  if (!(q->flagged_height_p95 <= q->data_height_p95 + MAX_HEIGHT_ABOVE_DATA))
    fail_msg("%s: planted contact bones %.3f m high (p95), the data's %.3f", label, (double)q->flagged_height_p95,
             (double)q->data_height_p95);
}

/* Responsiveness of one program over RESPONSE_RUNS paths: run r from
 * start frame r * 7919 mod the frames, facing 0.7 r rad, seed 1 + r
 * (animbench transitions --spread's runs, so its figures compare), each
 * run's mean time to the commanded speed averaged over the runs. */
static void check_response(int d, anim_program_kind_t k) {
  if (k == ANIM_PROGRAM_WANDER || bounds[d].response_before[k] == 0.0f)
    return; /* no commanded speed, or none in the data */
  const anim_database_t *db = &sets[d].db;
  double sum = 0.0, sq = 0.0;
  int n = 0, reached = 0, commands = 0;
  for (int r = 0; r < RESPONSE_RUNS; r++) {
    anim_quality_t q;
    int start = (int)(((long)r * 7919) % db->nframes);
    assert_int_equal(anim_quality_run_controller_from(db, sets[d].index, NULL, k, 1u + (uint32_t)r, start,
                                                      0.7f * (float)r, RUN_SECONDS, &q, NULL, NULL),
                     0);
    reached += q.reached, commands += q.commands;
    if (q.reached) sum += q.response_mean, sq += (double)q.response_mean * q.response_mean, n++;
  }
  double mean = n ? sum / n : INFINITY, var = n > 1 ? (sq - n * mean * mean) / (n - 1) : 0.0;
  double se = var > 0.0 ? sqrt(var / n) : 0.0, before = bounds[d].response_before[k];
  double bound = before + RESPONSE_Z * sqrt(2.0) * se;
  printf("  %s %s: commanded speed reached in %.3f +- %.3f s on average over %d paths (%d of %d commands; before "
         "%.3f s, bound %.3f)\n",
         anim_quality_datasets[d].name, anim_input_program_name(k), mean, se, n, reached, commands, before, bound);
  if (reached < commands / 3 || n < RESPONSE_RUNS / 2 || !(mean <= bound))
    fail_msg("%s %s: commanded speed reached in %.3f +- %.3f s on average over %d paths (%d of %d commands), "
             "before %.3f, bound %.3f",
             anim_quality_datasets[d].name, anim_input_program_name(k), mean, se, n, reached, commands, before, bound);
}

static void run_dataset(int d) {
  if (!dataset(d)) return;
  for (int k = 0; k < ANIM_PROGRAM_COUNT; k++) {
    for (uint32_t seed = 1; seed <= (k == ANIM_PROGRAM_TOUR ? 1u : SEEDS); seed++) { /* the tour draws nothing */
      anim_quality_t q;
      assert_int_equal(anim_quality_run_controller(&sets[d].db, sets[d].index, NULL, (anim_program_kind_t)k, seed,
                                                   RUN_SECONDS, &q, NULL, NULL),
                       0);
      char label[128];
      snprintf(label, sizeof label, "%s %s seed %u", anim_quality_datasets[d].name,
               anim_input_program_name((anim_program_kind_t)k), seed);
      check(d, (anim_program_kind_t)k, &q, label);
    }
    check_response(d, (anim_program_kind_t)k);
  }
}

static void test_bandai_namco(void **state) { run_dataset(0); }
static void test_games105(void **state) { run_dataset(1); }
static void test_cmu_3dsmax(void **state) { run_dataset(2); }
static void test_cmu_motionbuilder(void **state) { run_dataset(3); }

/* The measure can fail: without foot locking, feet shown with the data's
 * contacts slide well past the bounds on the wander (1.5 m/s p95 measured). */
static void test_unlocked_feet_slide(void **state) {
  if (!dataset(0)) return;
  anim_controller_params_t p;
  anim_controller_params_default(&p);
  p.foot_lock.enabled = 0;
  anim_quality_t q;
  assert_int_equal(anim_quality_run_controller(&sets[0].db, sets[0].index, &p, ANIM_PROGRAM_WANDER, 1, 30.0f, &q,
                                               NULL, NULL),
                   0);
  printf("  without foot locking: slide p95 %.3f m/s, worst %.3f\n", (double)q.slide_p95, (double)q.slide_max);
  assert_true(q.slide_p95 > MAX_SLIDE_P95);
  assert_true(q.slide_max > MAX_SLIDE_WORST);
}

/* A character told nothing stands still where the data has standing, and
 * starts walking from there as soon as before. */
static void test_standing_still(void **state) {
  for (int d = 0; d < DATASETS; d++) {
    if (!dataset(d)) return;
    anim_controller_t c;
    assert_int_equal(anim_controller_init(&c, &sets[d].db, sets[d].index, NULL, vec3_zero(), 0.0f, 0), 0);
    vec3 last = c.pose_positions[0];
    float drift = 0.0f; /* horizontal path of the displayed root, m */
    for (int t = 0; t < 600; t++) {
      assert_int_equal(anim_controller_tick(&c, 1.0f / 60.0f), 0);
      vec3 step = vec3_sub(c.pose_positions[0], last);
      drift += sqrtf(step.x * step.x + step.z * step.z), last = c.pose_positions[0];
    }
    int transitions = (int)c.transitions;
    /* Then a walk forward (1.49 m/s asked): the time to half that speed. */
    anim_controller_input_t in;
    memset(&in, 0, sizeof in);
    in.kind = ANIM_INPUT_STICK, in.stick_z = 0.85f;
    assert_int_equal(anim_controller_set_input(&c, &in), 0);
    float start = -1.0f, half = 0.5f * 0.85f * c.params.forward_speed;
    for (int t = 0; t < 180 && start < 0; t++) {
      assert_int_equal(anim_controller_tick(&c, 1.0f / 60.0f), 0);
      if (c.pose_velocities[0].z >= half) start = (float)(t + 1) / 60.0f;
    }
    anim_controller_free(&c);
    printf("  %s standing 10 s: %d transitions, the root moved %.3f m; then half the walk speed in %.2f s\n",
           anim_quality_datasets[d].name, transitions, (double)drift, (double)start);
    if (max_standing_transitions[d] < 0) continue; /* no standing data */
    if (start < 0 || start > STANDING_START_MARGIN * standing_start_before[d])
      fail_msg("%s: half the walk speed %.2f s after the stick (or not in 3 s) from standing, before %.2f",
               anim_quality_datasets[d].name, (double)start, (double)standing_start_before[d]);
    if (transitions > max_standing_transitions[d])
      fail_msg("%s standing still: %d transitions in 10 s, at most %d", anim_quality_datasets[d].name, transitions,
               max_standing_transitions[d]);
    if (!(drift <= MAX_STANDING_DRIFT))
      fail_msg("%s standing still: the root moved %.3f m in 10 s, at most %.3f", anim_quality_datasets[d].name,
               (double)drift, (double)MAX_STANDING_DRIFT);
  }
}

/* Over the wire: every dataset and program on the real server at once,
 * measured from the stream (its contact bits and global positions). */
static void test_over_the_wire(void **state) {
  if (!dataset(0) || !dataset(1)) return;
  char dir[128];
  anim_test_data_dir_make(dir, sizeof dir, "feet");
  for (int d = 0; d < 2; d++) anim_test_data_dir_put_database(dir, &sets[d].db, anim_quality_datasets[d].name);
  /* --fixed-step: the programs and the meter run on the server's ticks; a
   * loaded server folding late ticks into one long tick (up to 0.25 s)
   * makes a jump no character on a quiet server makes (a lKnee at 1.52
   * times its source speed was one). */
  const char *args[] = {"--data-dir", dir, "--db", anim_quality_datasets[0].name, "--db", anim_quality_datasets[1].name,
                        "--fixed-step", NULL};
  anim_test_server_t server;
  assert_int_equal(anim_test_server_start(&server, "foot_quality", args), 0);
  anim_client_t *client = anim_test_connect(&server);
  anim_quality_wire_run_t runs[2 * ANIM_PROGRAM_COUNT];
  int n = 0;
  for (int d = 0; d < 2; d++)
    for (int k = 0; k < ANIM_PROGRAM_COUNT; k++) {
      memset(&runs[n], 0, sizeof runs[n]);
      runs[n].database = anim_quality_datasets[d].name, runs[n].db = &sets[d].db;
      runs[n].kind = (anim_program_kind_t)k, runs[n].seed = 1;
      n++;
    }
  char err[256];
  int rc = anim_quality_run_wire(client, runs, n, WIRE_SECONDS, err, sizeof err);
  anim_client_close(client);
  assert_int_equal(anim_test_server_stop(&server), 0);
  anim_test_data_dir_remove(dir);
  if (rc) fail_msg("%s", err);
  for (int i = 0; i < n; i++) {
    int d = runs[i].db == &sets[0].db ? 0 : 1;
    const anim_quality_t *q = &runs[i].result;
    char line[768];
    anim_quality_format(q, &sets[d].db.skeleton, line, sizeof line);
    printf("  wire %s %s: %s (%ld frames missed)\n", runs[i].database, anim_input_program_name(runs[i].kind), line,
           runs[i].gaps);
    const char *foot =
        q->slide_worst_foot >= 0 ? sets[d].db.skeleton.names[sets[d].db.contact_bones[q->slide_worst_foot]] : "-";
    if (!(q->slide_p95 < MAX_SLIDE_P95) || !(q->slide_max < MAX_SLIDE_WORST))
      fail_msg("wire %s %s: contact slide p95 %.3f, worst %.3f m/s (%s, frame %ld)", runs[i].database,
               anim_input_program_name(runs[i].kind), (double)q->slide_p95, (double)q->slide_max, foot,
               q->slide_worst_frame);
    if (!(q->pop_ratio <= MAX_SPEED_RATIO))
      fail_msg("wire %s %s: %s %.2f times its source maximum in frame %ld", runs[i].database,
               anim_input_program_name(runs[i].kind), sets[d].db.skeleton.names[q->pop_bone], (double)q->pop_ratio,
               q->pop_frame);
    if (!(q->slide_samples > 20) || !(q->flagged_share >= MIN_PLANTED_SHARE * q->data_share))
      fail_msg("wire %s %s: %ld slide samples, feet shown planted %.2f of the time (data %.2f)", runs[i].database,
               anim_input_program_name(runs[i].kind), q->slide_samples, (double)q->flagged_share,
               (double)q->data_share);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_invalid_parameters),
      cmocka_unit_test(test_unlocked_feet_slide),
      cmocka_unit_test(test_bandai_namco),
      cmocka_unit_test(test_games105),
      cmocka_unit_test(test_cmu_3dsmax),
      cmocka_unit_test(test_cmu_motionbuilder),
      cmocka_unit_test(test_standing_still),
      cmocka_unit_test(test_over_the_wire),
  };
  return cmocka_run_group_tests_name("foot_quality", tests, NULL, teardown);
}
