/*
 * test_warp.c: animation warping (core/character/warp.h, issue 34).
 *
 * Invalid parameters first; then the maths on the procedural database (the
 * query's scale and turn, the pose between two frames, the upper body's
 * counter-turn); then what it is for, on real mocap (Bandai Namco: no
 * standing pose, no strafing, walks and runs at a few speeds), measured
 * with tests/support/warp_measure.h as `animbench warp` measures it, each
 * bound also checked to fail with its warp turned off.
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
#include "character/stride.h"
#include "character/warp.h"
#include "offline/procgen.h"
#include "quality_run.h"
#include "pose/kinematics.h"
#include "search/search.h"
#include "shared_data.h"
#include "warp_measure.h"

/* The targets. Speed: the mean absolute error of the achieved
 * speed over asked speeds between Bandai's slowest walk and its run (1.2
 * to 3.0 m/s in 0.3 m/s steps; measured 1.6%; 10.9% without the play
 * rate); direction: sideways and diagonal while facing forward (measured
 * 1-9 degrees; 32-77 without the orientation warp); standing: at rest
 * within 2 s of the stop and drifting under 0.1 m in 10 s (measured 0.97
 * s, 0.000 m, held on both feet; never, 9.1 m without the stand warp); slide and pops over those runs as
 * test_foot_quality.c bounds them. */
#define MAX_SPEED_ERROR 0.05f
#define MAX_DIRECTION_ERROR (10.0f * (float)M_PI / 180.0f)
#define MAX_REST_TIME 2.0f
#define MAX_DRIFT 0.1f
#define MAX_SLIDE_P95 0.1f
#define MAX_SLIDE_WORST 0.3f
#define MAX_POP 1.2f
#define RUN_SECONDS 8.0f

static anim_database_t procgen, bandai;
static anim_search_index_t *procgen_index, *bandai_index;
static int have_bandai_db;

static int setup(void **state) {
  (void)state;
  char err[256];
  if (anim_procgen_database(&procgen, NULL, err, sizeof err)) return -1;
  anim_search_data_t data = anim_search_data_of(&procgen);
  procgen_index = anim_search_index_build(ANIM_SEARCH_FAST, &data, err, sizeof err);
  return procgen_index ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  anim_search_index_free(procgen_index), anim_database_free(&procgen);
  if (have_bandai_db) anim_search_index_free(bandai_index), anim_database_free(&bandai);
  return 0;
}

/* Bandai Namco, built once (skipped, or failed under CI, without the data). */
static int have_bandai(void) {
  if (have_bandai_db) return 1;
  if (!anim_test_bandai_database(&bandai)) return 0;
  char err[256];
  anim_search_data_t data = anim_search_data_of(&bandai);
  bandai_index = anim_search_index_build(ANIM_SEARCH_FAST, &data, err, sizeof err);
  if (!bandai_index) fail_msg("bandai index: %s", err);
  have_bandai_db = 1;
  return 1;
}

static void test_invalid_params(void **state) {
  (void)state;
  anim_warp_params_t p;
  anim_warp_params_default(&p);
  assert_int_equal(anim_warp_params_validate(&p), 0);
  anim_warp_params_t bad = p;
  bad.rate_min = 0.0f;
  assert_int_equal(anim_warp_params_validate(&bad), ANIM_EINVAL);
  bad = p, bad.rate_min = 1.1f;
  assert_int_equal(anim_warp_params_validate(&bad), ANIM_EINVAL);
  bad = p, bad.rate_max = 0.9f;
  assert_int_equal(anim_warp_params_validate(&bad), ANIM_EINVAL);
  bad = p, bad.rate_max = 5.0f;
  assert_int_equal(anim_warp_params_validate(&bad), ANIM_EINVAL);
  bad = p, bad.orient_max = -0.1f;
  assert_int_equal(anim_warp_params_validate(&bad), ANIM_EINVAL);
  bad = p, bad.orient_max = 4.0f;
  assert_int_equal(anim_warp_params_validate(&bad), ANIM_EINVAL);
  bad = p, bad.stride_min = 0.0f;
  assert_int_equal(anim_warp_params_validate(&bad), ANIM_EINVAL);
  bad = p, bad.stride_min = 1.1f;
  assert_int_equal(anim_warp_params_validate(&bad), ANIM_EINVAL);
  bad = p, bad.stride_max = 0.9f;
  assert_int_equal(anim_warp_params_validate(&bad), ANIM_EINVAL);
  bad = p, bad.stride_max = 2.5f;
  assert_int_equal(anim_warp_params_validate(&bad), ANIM_EINVAL);
  bad = p, bad.rate_max = NAN;
  assert_int_equal(anim_warp_params_validate(&bad), ANIM_ENONFINITE);
  bad = p, bad.stride_max = NAN;
  assert_int_equal(anim_warp_params_validate(&bad), ANIM_ENONFINITE);
  bad = p, bad.steer_max = -0.1f;
  assert_int_equal(anim_warp_params_validate(&bad), ANIM_EINVAL);
  bad = p, bad.steer_max = 1.5f;
  assert_int_equal(anim_warp_params_validate(&bad), ANIM_EINVAL);
  bad = p, bad.steer_max = NAN;
  assert_int_equal(anim_warp_params_validate(&bad), ANIM_ENONFINITE);
  /* The controller refuses them too, and allocates nothing. */
  anim_controller_params_t cp;
  anim_controller_params_default(&cp);
  cp.warp.rate_min = 2.0f;
  assert_int_equal(anim_controller_params_validate(&cp), ANIM_EINVAL);
  anim_controller_t c;
  assert_int_equal(anim_controller_init(&c, &procgen, procgen_index, &cp, vec3_zero(), 0.0f, 0), ANIM_EINVAL);
  assert_null(c.warp.buffers[0].positions);
}

/* The query: positions scaled to the data's speed, facings turned toward
 * the travel; nothing changed at rate 1 and no turn. */
static void test_query_sample(void **state) {
  (void)state;
  anim_warp_t w;
  anim_warp_params_t p;
  anim_warp_params_default(&p);
  assert_int_equal(anim_warp_init(&w, &procgen, &p), 0);
  vec3 v = vec3_make(0.3f, 0.0f, 1.2f);
  vec3 same = anim_warp_query_sample(&w, v, 1);
  assert_true(same.x == v.x && same.z == v.z);
  w.query_rate = 1.25f;
  vec3 scaled = anim_warp_query_sample(&w, v, 1);
  assert_float_equal(scaled.z, 1.2f / 1.25f, 1e-6f);
  assert_float_equal(scaled.x, 0.3f / 1.25f, 1e-6f);
  w.query_angle = 0.5f * (float)M_PI; /* travel to the right (+X) of the facing (+Z) */
  vec3 turned = anim_warp_query_sample(&w, vec3_make(0.0f, 0.0f, 1.0f), 0);
  assert_float_equal(turned.x, 1.0f, 1e-5f);
  assert_float_equal(turned.z, 0.0f, 1e-5f);
  anim_warp_free(&w);
}

/* The pose between two frames: the frame itself at phase 0, between the
 * two at 0.5 (each rotation half way), the rates scaled by the rate
 * shown, zero when held. */
static void test_pose_between_frames(void **state) {
  (void)state;
  anim_warp_t w;
  anim_warp_params_t p;
  anim_warp_params_default(&p);
  assert_int_equal(anim_warp_init(&w, &procgen, &p), 0);
  int frame = procgen.ranges[0].start + 10, n = procgen.nbones;
  const quat *q0 = procgen.local_rotations + (size_t)frame * (size_t)n, *q1 = q0 + n;
  anim_pose_view_t v = anim_warp_pose(&w, frame, 0.0f, 0);
  for (int b = 0; b < n; b++) assert_true(fabsf(quat_dot(v.rotations[b], q0[b])) > 1.0f - 1e-6f);
  w.rate = 1.1f;
  v = anim_warp_pose(&w, frame, 0.5f, 0);
  float worst = 0.0f;
  for (int b = 0; b < n; b++) {
    quat half = quat_slerp_shortest(q0[b], q1[b], 0.5f);
    float off = 1.0f - fabsf(quat_dot(v.rotations[b], half));
    if (off > worst) worst = off;
    assert_float_equal(vec3_length(v.velocities[b]),
                       1.1f * vec3_length(procgen.local_velocities[(size_t)frame * (size_t)n + (size_t)b]),
                       1e-3f + 0.2f * vec3_length(procgen.local_velocities[(size_t)frame * (size_t)n + (size_t)b]));
  }
  assert_true(worst < 1e-5f);
  v = anim_warp_pose(&w, frame, 0.5f, 1);
  for (int b = 0; b < n; b++) assert_true(vec3_length(v.velocities[b]) == 0.0f);
  /* A transition's destination at the phase of the pose shown, in the other buffer. */
  anim_pose_view_t dst = anim_warp_transition_pose(&w, frame);
  assert_ptr_not_equal(dst.rotations, w.view.rotations);
  for (int b = 0; b < n; b++) assert_true(fabsf(quat_dot(dst.rotations[b], w.view.rotations[b])) > 1.0f - 1e-6f);
  anim_warp_free(&w);
}

/* The upper body's turn: the last spine bone's facing turns by the warp
 * angle about the vertical, the hips and legs not at all. */
static void test_upper_body_turn(void **state) {
  (void)state;
  anim_warp_t w;
  anim_warp_params_t p;
  anim_warp_params_default(&p);
  assert_int_equal(anim_warp_init(&w, &procgen, &p), 0);
  assert_true(w.nspine >= 1 && w.hips > 0);
  int n = procgen.nbones, frame = procgen.ranges[0].start;
  quat local[256];
  assert_true(n <= 256);
  memcpy(local, procgen.local_rotations + (size_t)frame * (size_t)n, (size_t)n * sizeof(quat));
  quat before[256], after[256];
  vec3 pos[256];
  anim_fk(pos, before, procgen.local_positions + (size_t)frame * (size_t)n, local, procgen.skeleton.parents, n);
  w.angle = 0.6f;
  anim_warp_apply(&w, local);
  anim_fk(pos, after, procgen.local_positions + (size_t)frame * (size_t)n, local, procgen.skeleton.parents, n);
  int chest = w.spine[w.nspine - 1];
  float turn = quat_yaw_angle(after[chest]) - quat_yaw_angle(before[chest]);
  assert_float_equal(turn, 0.6f, 1e-3f);
  assert_true(fabsf(quat_dot(after[w.hips], before[w.hips])) > 1.0f - 1e-6f);
  for (int s = 0; s < procgen.ncontacts; s++) {
    int foot = procgen.contact_bones[s];
    assert_true(fabsf(quat_dot(after[foot], before[foot])) > 1.0f - 1e-6f);
  }
  anim_warp_free(&w);
}

/* The legs' stride: each foot's reach from its hip along the travel
 * scaled (here 1.2 along +Z; a frame of the procedural walk), its side
 * offset and height kept; scale 1 changes nothing. */
static void test_stride_legs(void **state) {
  (void)state;
  anim_foot_locks_t legs;
  assert_int_equal(anim_foot_locks_init(&legs, &procgen, 0.2f, 0.1f), 0);
  /* The frame whose contact bones are furthest apart along the root's facing: mid-stride. */
  int n = procgen.nbones, frame = 0;
  float widest = 0.0f;
  for (int f = 0; f < procgen.nframes; f++) {
    size_t base = (size_t)f * (size_t)n;
    vec3 fwd = quat_mul_vec3(procgen.global_rotations[base], vec3_make(0.0f, 0.0f, 1.0f));
    vec3 d = vec3_sub(procgen.global_positions[base + (size_t)legs.feet[0].toe],
                      procgen.global_positions[base + (size_t)legs.feet[1].toe]);
    float apart = fabsf(d.x * fwd.x + d.z * fwd.z);
    if (apart > widest) widest = apart, frame = f;
  }
  vec3 lp[256], gp0[256], gp1[256];
  quat lr[256], gr[256];
  assert_true(n <= 256);
  memcpy(lp, procgen.local_positions + (size_t)frame * (size_t)n, (size_t)n * sizeof(vec3));
  memcpy(lr, procgen.local_rotations + (size_t)frame * (size_t)n, (size_t)n * sizeof(quat));
  vec3 dir = quat_mul_vec3(lr[0], vec3_make(0.0f, 0.0f, 1.0f));
  dir = vec3_normalize(vec3_make(dir.x, 0.0f, dir.z));
  assert_int_equal(anim_stride_apply(&legs, 1.0f, dir, 0.06f, lp, lr), 0);
  anim_fk(gp0, gr, lp, lr, procgen.skeleton.parents, n);
  assert_int_equal(anim_stride_apply(&legs, 1.2f, dir, 0.06f, lp, lr), 1);
  anim_fk(gp1, gr, lp, lr, procgen.skeleton.parents, n);
  for (int s = 0; s < legs.nfeet; s++) {
    const anim_foot_lock_t *f = &legs.feet[s];
    vec3 a0 = vec3_sub(gp0[f->toe], gp0[f->hip]); /* the contact bone leads; the foot moves with it */
    float along0 = a0.x * dir.x + a0.z * dir.z;
    vec3 moved = vec3_sub(gp1[f->toe], gp0[f->toe]);
    float along = moved.x * dir.x + moved.z * dir.z, side = moved.x * dir.z - moved.z * dir.x;
    printf("  foot %d: %.3f m from its hip along the travel, moved %.3f (want %.3f), side %.4f, up %.4f\n", s,
           (double)along0, (double)along, 0.2 * (double)along0, (double)side, (double)moved.y);
    assert_float_equal(along, 0.2f * along0, 0.01f);
    assert_float_equal(side, 0.0f, 0.005f);
    assert_float_equal(moved.y, 0.0f, 0.01f);
  }
  /* One foot ahead and one behind: the stride itself is longer. */
  int l = legs.feet[0].toe, r = legs.feet[1].toe;
  float before = fabsf((gp0[l].x - gp0[r].x) * dir.x + (gp0[l].z - gp0[r].z) * dir.z);
  float after = fabsf((gp1[l].x - gp1[r].x) * dir.x + (gp1[l].z - gp1[r].z) * dir.z);
  printf("  stride %.3f -> %.3f m\n", (double)before, (double)after);
  assert_float_equal(after, 1.2f * before, 0.02f);
  assert_true(after > before + 0.02f);
}

static void check_quality(const char *what, const anim_warp_result_t *r) {
  if (r->q.slide_p95 > MAX_SLIDE_P95 || r->q.slide_max > MAX_SLIDE_WORST)
    fail_msg("%s: slide p95 %.3f worst %.3f m/s (foot %d, frame %ld)", what, (double)r->q.slide_p95,
             (double)r->q.slide_max, r->q.slide_worst_foot, r->q.slide_worst_frame);
  if (r->q.pop_ratio > MAX_POP)
    fail_msg("%s: pop %.2f x its source's fastest (bone %s, frame %ld)", what, (double)r->q.pop_ratio,
             r->q.pop_bone >= 0 ? bandai.skeleton.names[r->q.pop_bone] : "-", r->q.pop_frame);
}

/* Mean absolute speed error (fraction) over 1.2..3.0 m/s. */
static float speed_error(const anim_controller_params_t *p, int check) {
  double sum = 0.0;
  int n = 0;
  for (float v = 1.2f; v <= 3.0f + 1e-3f; v += 0.3f, n++) {
    anim_warp_result_t r;
    assert_int_equal(anim_warp_measure_speed(&bandai, bandai_index, p, v, RUN_SECONDS, &r, NULL, NULL), 0);
    sum += fabsf(r.achieved_speed - v) / v;
    printf("  %.1f m/s asked: %.3f achieved, rate %.2f, %.2f transitions/s, pop %.2f\n", (double)v,
           (double)r.achieved_speed, (double)r.rate_mean, (double)r.transitions_per_s, (double)r.q.pop_ratio);
    if (check) {
      char what[64];
      snprintf(what, sizeof what, "bandai at %.1f m/s", (double)v);
      check_quality(what, &r);
    }
  }
  return (float)(sum / n);
}

static void test_bandai_speed(void **state) {
  (void)state;
  if (!have_bandai()) return;
  anim_controller_params_t p, off;
  anim_controller_params_default(&p);
  /* Any of the three alone nearly meets Bandai's speeds (its gaps are
   * narrow: 1.3% with the stride alone, 3.2% with root steering alone):
   * the tests of each alone are GAMES-105's and CMU 3dsMax's below. */
  off = p, off.warp.rate = off.warp.stride = off.warp.steer = 0;
  float with = speed_error(&p, 1), without = speed_error(&off, 0);
  printf("bandai speed error %.1f%% with the speed warps, %.1f%% without\n", 100.0 * with, 100.0 * without);
  if (!(with < MAX_SPEED_ERROR)) fail_msg("speed error %.1f%%, at most %.0f%%", 100.0 * with, 100.0 * MAX_SPEED_ERROR);
  if (!(without > MAX_SPEED_ERROR)) fail_msg("without the speed warps only %.1f%%: the test tests nothing", 100.0 * without);
}

static void test_bandai_sideways(void **state) {
  (void)state;
  if (!have_bandai()) return;
  anim_controller_params_t p, off;
  anim_controller_params_default(&p);
  off = p, off.warp.orient = 0;
  const float angles[] = {0.25f * (float)M_PI, 0.5f * (float)M_PI, -0.25f * (float)M_PI, -0.5f * (float)M_PI};
  float worst_off = 0.0f;
  for (int a = 0; a < 4; a++) {
    anim_warp_result_t r, u;
    assert_int_equal(anim_warp_measure_direction(&bandai, bandai_index, &p, angles[a], 1.2f, RUN_SECONDS, &r, NULL, NULL), 0);
    assert_int_equal(anim_warp_measure_direction(&bandai, bandai_index, &off, angles[a], 1.2f, RUN_SECONDS, &u, NULL, NULL), 0);
    float deg = 180.0f / (float)M_PI;
    printf("  %+.0f deg asked: %.1f deg off (%.1f without the orientation warp), %.2f m/s\n", (double)(angles[a] * deg),
           (double)(r.direction_error * deg), (double)(u.direction_error * deg), (double)r.achieved_speed);
    if (!(r.direction_error < MAX_DIRECTION_ERROR))
      fail_msg("%+.0f deg asked: travelled %.1f deg off", (double)(angles[a] * deg), (double)(r.direction_error * deg));
    check_quality("bandai sideways", &r);
    if (u.direction_error > worst_off) worst_off = u.direction_error;
  }
  if (!(worst_off > MAX_DIRECTION_ERROR)) fail_msg("without the orientation warp within bounds: the test tests nothing");
}

static void test_bandai_stop(void **state) {
  (void)state;
  if (!have_bandai()) return;
  anim_controller_params_t p, off;
  anim_controller_params_default(&p);
  off = p, off.warp.stand = 0;
  anim_warp_result_t r, u;
  assert_int_equal(anim_warp_measure_stand(&bandai, bandai_index, &p, 1.2f, &r, NULL, NULL), 0);
  assert_int_equal(anim_warp_measure_stand(&bandai, bandai_index, &off, 1.2f, &u, NULL, NULL), 0);
  printf("bandai asked to stop: at rest after %.2f s, drifting %.3f m in 10 s (without the stand warp %.2f s, %.2f m)\n",
         (double)r.rest_time, (double)r.drift, (double)u.rest_time, (double)u.drift);
  if (!(r.rest_time <= MAX_REST_TIME)) fail_msg("at rest only %.2f s after the stop", (double)r.rest_time);
  if (!(r.drift < MAX_DRIFT)) fail_msg("drifted %.3f m standing", (double)r.drift);
  check_quality("bandai stop", &r);
  if (!(u.drift > MAX_DRIFT)) fail_msg("without the stand warp it stood: the test tests nothing");
}

/* GAMES-105 (one walk speed, 1.2 m/s) asked 0.5-0.8 m/s: below what its
 * walk at the slowest rate makes (0.72 m/s), the stride meets the rest;
 * either alone cannot (0.5 m/s is rate 0.6 times stride 0.68). Measured
 * 0.0% mean error, 7.3% without the stride warp (the walk at rate 0.6,
 * root steering making up 15%; 18.6% without either),
 * 99% without the play rate (it stands: searching for the slowest gait
 * played slowly is the play rate's); no new slide: p95 0.001 m/s. */
static void test_games105_slow_stride(void **state) {
  (void)state;
  char path[1024], err[512];
  if (!anim_test_shared_path(path, sizeof path, "data/mocap/games105")) return;
  anim_database_t db;
  if (anim_quality_dataset_build(&db, anim_test_shared_dir(), 1, err, sizeof err)) fail_msg("games105: %s", err);
  anim_search_data_t data = anim_search_data_of(&db);
  anim_search_index_t *index = anim_search_index_build(ANIM_SEARCH_FAST, &data, err, sizeof err);
  assert_non_null(index);
  anim_controller_params_t p, off, no_rate;
  anim_controller_params_default(&p);
  off = p, off.warp.stride = 0;
  no_rate = p, no_rate.warp.rate = 0;
  double with = 0.0, without = 0.0, rateless = 0.0;
  int n = 0;
  for (float v = 0.5f; v <= 0.8f + 1e-3f; v += 0.1f, n++) {
    anim_warp_result_t r, u, k;
    assert_int_equal(anim_warp_measure_speed(&db, index, &p, v, RUN_SECONDS, &r, NULL, NULL), 0);
    assert_int_equal(anim_warp_measure_speed(&db, index, &off, v, RUN_SECONDS, &u, NULL, NULL), 0);
    assert_int_equal(anim_warp_measure_speed(&db, index, &no_rate, v, RUN_SECONDS, &k, NULL, NULL), 0);
    printf("  %.1f m/s asked: %.3f achieved (%.3f without the stride warp, %.3f without the play rate), slide p95 "
           "%.3f, pop %.2f\n",
           (double)v, (double)r.achieved_speed, (double)u.achieved_speed, (double)k.achieved_speed,
           (double)r.q.slide_p95, (double)r.q.pop_ratio);
    with += fabsf(r.achieved_speed - v) / v, without += fabsf(u.achieved_speed - v) / v;
    rateless += fabsf(k.achieved_speed - v) / v;
    if (r.q.slide_p95 > MAX_SLIDE_P95 || r.q.slide_max > MAX_SLIDE_WORST || r.q.pop_ratio > MAX_POP)
      fail_msg("games105 at %.1f m/s: slide p95 %.3f worst %.3f m/s, pop %.2f", (double)v, (double)r.q.slide_p95,
               (double)r.q.slide_max, (double)r.q.pop_ratio);
  }
  with /= n, without /= n, rateless /= n;
  printf("games105 0.5-0.8 m/s: speed error %.1f%% with the stride warp, %.1f%% without, %.1f%% without the play "
         "rate\n",
         100.0 * with, 100.0 * without, 100.0 * rateless);
  anim_search_index_free(index), anim_database_free(&db);
  if (!(with < MAX_SPEED_ERROR)) fail_msg("speed error %.1f%%, at most %.0f%%", 100.0 * with, 100.0 * MAX_SPEED_ERROR);
  if (!(without > MAX_SPEED_ERROR)) fail_msg("without the stride warp only %.1f%%: the test tests nothing", 100.0 * without);
  if (!(rateless > MAX_SPEED_ERROR)) fail_msg("without the play rate only %.1f%%: the test tests nothing", 100.0 * rateless);
}

/* Root steering: sideways and diagonal walks (1.2 m/s at 45 and 90
 * degrees either side while facing forward) on the procedural database
 * travel within 5 degrees of the asked direction (measured at most 1.9;
 * 7.5 without root steering: the orientation warp's forward walks drift
 * off by what their clips curve). */
#define MAX_STEERED_DIRECTION_ERROR (5.0f * (float)M_PI / 180.0f)
static void test_steering_direction(void **state) {
  (void)state;
  anim_controller_params_t p[2];
  anim_controller_params_default(&p[0]);
  p[1] = p[0], p[1].warp.steer = 0;
  const float angles[] = {0.25f * (float)M_PI, 0.5f * (float)M_PI, -0.25f * (float)M_PI, -0.5f * (float)M_PI};
  float worst[2] = {0.0f, 0.0f}, deg = 180.0f / (float)M_PI;
  for (int k = 0; k < 2; k++)
    for (int a = 0; a < 4; a++) {
      anim_warp_result_t r;
      assert_int_equal(
          anim_warp_measure_direction(&procgen, procgen_index, &p[k], angles[a], 1.2f, RUN_SECONDS, &r, NULL, NULL), 0);
      if (r.direction_error > worst[k]) worst[k] = r.direction_error;
      if (k == 0 && (r.q.slide_p95 > MAX_SLIDE_P95 || r.q.slide_max > MAX_SLIDE_WORST || r.q.pop_ratio > MAX_POP))
        fail_msg("%+.0f deg: slide p95 %.3f worst %.3f m/s, pop %.2f", (double)(angles[a] * deg),
                 (double)r.q.slide_p95, (double)r.q.slide_max, (double)r.q.pop_ratio);
    }
  printf("procedural sideways and diagonal: worst %.1f deg off (%.1f without root steering)\n",
         (double)(worst[0] * deg), (double)(worst[1] * deg));
  if (!(worst[0] < MAX_STEERED_DIRECTION_ERROR)) fail_msg("%.1f deg off", (double)(worst[0] * deg));
  if (!(worst[1] > MAX_STEERED_DIRECTION_ERROR)) fail_msg("without root steering within 5 deg: the test tests nothing");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_invalid_params),      cmocka_unit_test(test_query_sample),
      cmocka_unit_test(test_pose_between_frames), cmocka_unit_test(test_upper_body_turn),
      cmocka_unit_test(test_bandai_speed),        cmocka_unit_test(test_bandai_sideways),
      cmocka_unit_test(test_bandai_stop),         cmocka_unit_test(test_stride_legs),
      cmocka_unit_test(test_games105_slow_stride), cmocka_unit_test(test_steering_direction),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
