/*
 * test_controller.c: a motion-matching character on the default database,
 * driven by a scripted input (walk, turn, run, stop) at 60 Hz. Invalid
 * parameters and inputs first; then motion quality on what it displays:
 * planted feet do not slide, transitions do not pop (and would without
 * inertialization), and the character reaches the asked speed in time.
 * Bounds are in one place with their reasons.
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
#include "offline/build.h"
#include "character/controller.h"
#include "offline/procgen.h"
#include "procgen_db.h"
#include "shared_data.h"

/* Horizontal speed of a foot in the middle of a contact the character
 * shows (anim_controller_contacts: two ticks in from either end), 95th
 * percentile, m/s. The data's footprints are fixed (0.007 m/s in the
 * database itself); the decaying offsets of transitions would move planted
 * feet (0.31 without foot locking); foot locking holds them, and a foot the
 * animation leaves behind steps instead of sliding: measured 0.000 here and
 * on the Bandai Namco clips. (test_foot_quality.c bounds slide, pops and
 * responsiveness on two mocap datasets under three input programs.) */
#define MAX_CONTACT_SLIDE_P95 0.05f
/* Largest change of any bone's velocity in the tick of a transition, m/s.
 * Inertialization keeps velocity continuous; what remains is the clip's own
 * acceleration plus the offset's decay (half-life 0.1 s) and, with foot
 * locking, a knee moving faster when the IK holds a nearly straight leg.
 * Measured 1.1 here and 3.9 on the crowd test's script (3.3 there without foot
 * locking); with inertialization all but off the same script jumps by 10
 * (tested below). */
#define MAX_VELOCITY_JUMP 5.0f
/* From the run command (3.5 m/s) until the root's speed is within 10% of it, s:
 * the velocity spring (half-life 0.27 s) plus a search interval. */
#define MAX_RESPONSE_TIME 1.5f
/* Transitions in 10 s of standing still from frame 0 (the idle clip). Each
 * is a visible change for nothing: nothing in the input moved. Measured 7
 * (the idle played, looping back 60 frames or more before its end); before
 * 26 (a periodic search hopping 20 frames back for a 1e-4 better match,
 * with no transition cost), and 19 with the cost alone (searches forced at
 * the idle's end landing 20 frames before it, looping its last 0.33 s). */
#define MAX_STANDING_TRANSITIONS 10
/* Transitions in 10 s of walking (stick 0.85, 1.49 m/s). Measured 13; 48
 * before the default transition cost (hops between near-identical frames
 * of walk, walk_start and walk_stop, the current frame losing by 1e-4). */
#define MAX_WALKING_TRANSITIONS 20
/* Starting and stopping after standing 10 s (stick 0.85 for 3 s, then
 * let go): to 90% of the walk speed, and to below 10% of it, s. The
 * figures before this change (commit 116fd4a) with 10% for chance: a
 * change to the controller sends the character down another path (animbench
 * transitions --spread 64 measures both the same within their standard
 * errors over 64 starts). */
#define START_BEFORE 1.13f
#define STOP_BEFORE 0.93f
#define START_STOP_MARGIN 1.1f

static anim_database_t db;
static anim_search_index_t *index_fast;

static int setup(void **state) { return anim_test_procgen_indexed(&db, &index_fast); }

static int teardown(void **state) {
  anim_test_procgen_indexed_free(&db, index_fast);
  return 0;
}

static void test_invalid_params_and_inputs(void **state) {
  anim_controller_t c;
  anim_controller_params_t p;
  anim_controller_params_default(&p);
  p.search_interval = 0;
  assert_int_equal(anim_controller_init(&c, &db, index_fast, &p, vec3_zero(), 0, 0), ANIM_EINVAL);
  anim_controller_params_default(&p);
  p.inertialize_halflife = NAN;
  assert_int_equal(anim_controller_init(&c, &db, index_fast, &p, vec3_zero(), 0, 0), ANIM_ENONFINITE);
  assert_int_equal(anim_controller_init(&c, &db, index_fast, NULL, vec3_zero(), 0, db.nframes), ANIM_ERANGE);
  assert_int_equal(anim_controller_init(&c, &db, index_fast, NULL, vec3_zero(), 0, 0), 0);
  anim_controller_input_t in;
  memset(&in, 0, sizeof in);
  in.stick_x = 1.0f, in.stick_z = 1.0f; /* |stick| > 1 */
  assert_int_equal(anim_controller_set_input(&c, &in), ANIM_EINVAL);
  in.stick_x = NAN;
  assert_int_equal(anim_controller_set_input(&c, &in), ANIM_ENONFINITE);
  memset(&in, 0, sizeof in);
  in.kind = (anim_input_kind_t)7;
  assert_int_equal(anim_controller_set_input(&c, &in), ANIM_EINVAL);
  assert_int_equal(anim_controller_tick(&c, 0.0f), ANIM_EINVAL);
  assert_int_equal(anim_controller_tick(&c, NAN), ANIM_EINVAL);
  anim_controller_free(&c);
}

typedef struct {
  float slide_p95, max_velocity_jump, response_time;
  int transitions;
  float distance;
} quality_t;

static int cmp_float(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return x < y ? -1 : x > y;
}

/* Runs the script on a database; measures on the displayed pose. */
static quality_t run_script_on(const anim_database_t *d, const anim_search_index_t *index, float inertialize_halflife) {
  anim_controller_params_t p;
  anim_controller_params_default(&p);
  p.inertialize_halflife = inertialize_halflife;
  anim_controller_t c;
  assert_int_equal(anim_controller_init(&c, d, index, &p, vec3_zero(), 0.0f, 0), 0);
  const float dt = 1.0f / 60.0f;
  enum { TICKS = 12 * 60 };
  int nb = d->nbones, feet[2] = {d->contact_bones[0], d->contact_bones[1]};
  vec3 *prev = calloc((size_t)nb, sizeof *prev), *prev_velocity = calloc((size_t)nb, sizeof *prev_velocity);
  float *slides = malloc(TICKS * 2 * sizeof *slides);
  int nslides = 0, contact_run[2] = {0, 0};
  float foot_speed_prev[2][3] = {{0}};
  quality_t q = {0, 0, -1, 0, 0};
  vec3 start = vec3_zero();
  for (int t = 0; t < TICKS; t++) {
    anim_controller_input_t in;
    memset(&in, 0, sizeof in);
    float time = (float)t * dt;
    if (time < 3.0f) in.kind = ANIM_INPUT_STICK, in.stick_z = 0.85f;                         /* walk */
    else if (time < 6.0f) in.kind = ANIM_INPUT_STICK, in.stick_x = 0.85f;                    /* turn */
    else if (time < 9.0f) {                                                                  /* run */
      in.kind = ANIM_INPUT_VELOCITY;
      in.facing = atan2f(1.0f, 0.0f);
      in.velocity = vec3_make(3.5f, 0.0f, 0.0f);
    } else in.kind = ANIM_INPUT_STICK;                                                       /* stop */
    assert_int_equal(anim_controller_set_input(&c, &in), 0);
    assert_int_equal(anim_controller_tick(&c, dt), 0);
    anim_controller_global_pose(&c);
    if (t == 0) start = c.global_positions[0];
    for (int b = 0; b < nb && t > 1; b++) {
      vec3 v = vec3_scale(vec3_sub(c.global_positions[b], prev[b]), 1.0f / dt);
      float jump = vec3_length(vec3_sub(v, prev_velocity[b]));
      /* Only the tick a transition happens in: pops, not the clip's own accelerations. */
      if (t > 2 && c.time_since_transition <= dt * 1.01f && jump > q.max_velocity_jump) q.max_velocity_jump = jump;
      prev_velocity[b] = v;
    }
    for (int s = 0; s < 2; s++) {
      int contact = (anim_controller_contacts(&c) >> s) & 1u;
      vec3 step = vec3_sub(c.global_positions[feet[s]], prev[feet[s]]);
      float speed = sqrtf(step.x * step.x + step.z * step.z) / dt;
      /* The middle of a contact: record the speed two ticks back once two more ticks stayed down. */
      contact_run[s] = contact ? contact_run[s] + 1 : 0;
      if (contact_run[s] >= 5 && t > 60) slides[nslides++] = foot_speed_prev[s][1];
      foot_speed_prev[s][2] = foot_speed_prev[s][1], foot_speed_prev[s][1] = foot_speed_prev[s][0];
      foot_speed_prev[s][0] = speed;
    }
    vec3 root_velocity = c.pose_velocities[0];
    float root_speed = sqrtf(root_velocity.x * root_velocity.x + root_velocity.z * root_velocity.z);
    if (time >= 6.0f && q.response_time < 0 && fabsf(root_speed - 3.5f) < 0.35f) q.response_time = time - 6.0f;
    memcpy(prev, c.global_positions, (size_t)nb * sizeof *prev);
  }
  qsort(slides, (size_t)nslides, sizeof *slides, cmp_float);
  q.slide_p95 = nslides ? slides[(int)(0.95f * (float)nslides)] : 0.0f;
  q.transitions = (int)c.transitions;
  q.distance = vec3_length(vec3_sub(c.global_positions[0], start));
  free(prev), free(prev_velocity), free(slides);
  anim_controller_free(&c);
  return q;
}

static quality_t run_script(float inertialize_halflife) {
  return run_script_on(&db, index_fast, inertialize_halflife);
}

static void test_scripted_motion_quality(void **state) {
  quality_t q = run_script(0.1f);
  printf("controller: %d transitions, %.1f m travelled, contact slide p95 %.3f m/s, "
         "largest jump at a transition %.2f m/s, run reached in %.2f s\n",
         q.transitions, q.distance, q.slide_p95, q.max_velocity_jump, q.response_time);
  assert_true(q.transitions >= 5);
  assert_true(q.distance > 10.0f);
  if (q.slide_p95 > MAX_CONTACT_SLIDE_P95) fail_msg("feet slide: p95 %.3f m/s", q.slide_p95);
  if (q.max_velocity_jump > MAX_VELOCITY_JUMP)
    fail_msg("pop: a bone's velocity jumped by %.2f m/s", q.max_velocity_jump);
  if (q.response_time < 0 || q.response_time > MAX_RESPONSE_TIME)
    fail_msg("run speed reached after %.2f s (or never)", q.response_time);
}

/* The same script on real motion capture (the Bandai Namco clips, mirrored):
 * the slide, pop and responsiveness bounds hold there too (measured: slide
 * p95 0.000 m/s, largest jump at a transition 1.4 m/s, run speed in 1.28 s;
 * 1.12 s before the default transition cost, which sends the character
 * through other clips: from 64 start frames the run speed comes 1.05 s
 * after the command on average before and 1.04 s after, animbench
 * transitions --spread 64).
 * Before feet re-planted with a step, this slid 0.9 m/s in the middle of
 * contacts: after transitions between frames whose planted feet are 0.3-0.5
 * m apart (walk-turn clips) a lock let go and the foot followed the
 * animation with its contact still reported. */
static void test_scripted_motion_on_mocap(void **state) {
  anim_database_t mocap;
  if (!anim_test_bandai_database(&mocap)) return;
  char err[256];
  anim_search_data_t data = anim_search_data_of(&mocap);
  anim_search_index_t *index = anim_search_index_build(ANIM_SEARCH_FAST, &data, err, sizeof err);
  assert_non_null(index);
  quality_t q = run_script_on(&mocap, index, 0.1f);
  printf("on mocap (%d frames): %d transitions, %.1f m travelled, contact slide p95 %.3f m/s, largest jump at a "
         "transition %.2f m/s, run reached in %.2f s\n", mocap.nframes, q.transitions, q.distance, q.slide_p95,
         q.max_velocity_jump, q.response_time);
  anim_search_index_free(index);
  anim_database_free(&mocap);
  assert_true(q.transitions >= 5);
  assert_true(q.distance > 10.0f && isfinite(q.distance));
  if (!(q.slide_p95 <= MAX_CONTACT_SLIDE_P95)) fail_msg("feet slide on mocap: p95 %.3f m/s", q.slide_p95);
  if (q.max_velocity_jump > MAX_VELOCITY_JUMP) fail_msg("pop on mocap: %.2f m/s at a transition", q.max_velocity_jump);
  if (q.response_time < 0 || q.response_time > MAX_RESPONSE_TIME)
    fail_msg("run speed reached on mocap after %.2f s (or never)", q.response_time);
}

/* Lag spikes: one tick of a second and one of ten (the server's scheduler
 * caps a tick at 0.25 s; a direct caller need not). Springs and filters are
 * exact for any step, so the character stays finite, keeps to its speed and
 * walks on through ordinary ticks afterwards. */
static void test_lag_spikes(void **state) {
  anim_controller_t c;
  assert_int_equal(anim_controller_init(&c, &db, index_fast, NULL, vec3_zero(), 0.0f, 0), 0);
  anim_controller_input_t in;
  memset(&in, 0, sizeof in);
  in.kind = ANIM_INPUT_STICK, in.stick_z = 0.8f;
  assert_int_equal(anim_controller_set_input(&c, &in), 0);
  float top_speed = 0.0f;
  for (int t = 0; t < 180; t++) {
    float dt = t == 60 ? 1.0f : t == 100 ? 10.0f : 1.0f / 60.0f;
    assert_int_equal(anim_controller_tick(&c, dt), 0);
    anim_controller_global_pose(&c);
    for (int b = 0; b < db.nbones; b++) {
      vec3 p = c.global_positions[b];
      if (!isfinite(p.x) || !isfinite(p.y) || !isfinite(p.z)) fail_msg("bone %d not finite after tick %d", b, t);
    }
    float speed = vec3_length(c.sim.velocity);
    if (speed > top_speed) top_speed = speed;
    assert_true(c.frame >= 0 && c.frame < db.nframes);
  }
  printf("lag spikes: top simulation speed %.2f m/s (asked 0.8 x 1.75 = 1.40)\n", top_speed);
  assert_true(top_speed < 1.40f * 1.05f);                  /* a critically damped spring does not overshoot */
  assert_true(vec3_length(c.sim.velocity) > 1.40f * 0.9f); /* and still walks after them */
  anim_controller_free(&c);
}

/* pose_bone_rates 0 (the server's crowd) shows the same character: a
 * controller without the other bones' rates, ticked beside one with them
 * through walking, turning and stopping (searches, transitions, foot locks),
 * has the same pose bit for bit, the same root rates, frame and simulation. */
static void test_root_rates_only_show_the_same(void **state) {
  (void)state;
  anim_controller_t full, lean;
  assert_int_equal(anim_controller_init(&full, &db, index_fast, NULL, vec3_zero(), 0.0f, 0), 0);
  assert_int_equal(anim_controller_init(&lean, &db, index_fast, NULL, vec3_zero(), 0.0f, 0), 0);
  lean.pose_bone_rates = 0;
  size_t n = (size_t)db.nbones;
  for (int t = 0; t < 6 * 60; t++) {
    anim_controller_input_t in;
    memset(&in, 0, sizeof in);
    in.kind = ANIM_INPUT_STICK;
    in.stick_z = t < 120 ? 0.9f : 0.0f, in.stick_x = t >= 120 && t < 240 ? -0.9f : 0.0f;
    assert_int_equal(anim_controller_set_input(&full, &in), 0);
    assert_int_equal(anim_controller_set_input(&lean, &in), 0);
    assert_int_equal(anim_controller_tick(&full, 1.0f / 60.0f), 0);
    assert_int_equal(anim_controller_tick(&lean, 1.0f / 60.0f), 0);
    assert_int_equal(full.frame, lean.frame);
    assert_memory_equal(full.pose_positions, lean.pose_positions, n * sizeof(vec3));
    assert_memory_equal(full.pose_rotations, lean.pose_rotations, n * sizeof(quat));
    assert_memory_equal(&full.pose_velocities[0], &lean.pose_velocities[0], sizeof(vec3));
    assert_memory_equal(&full.pose_angular_velocities[0], &lean.pose_angular_velocities[0], sizeof(vec3));
    assert_memory_equal(&full.sim.position, &lean.sim.position, sizeof(vec3));
  }
  assert_true(full.transitions > 2); /* the run did transition */
  anim_controller_free(&full);
  anim_controller_free(&lean);
}

/* anim_controller_translate, as the server's world boundary uses it: a
 * character moved while walking (feet locked) goes on as one never moved,
 * shifted by the step: the same frames and searches, its shown root, its
 * simulation and its held feet (within float rounding). */
static void test_translate(void **state) {
  (void)state;
  anim_controller_t a, b;
  assert_int_equal(anim_controller_init(&a, &db, index_fast, NULL, vec3_zero(), 0.0f, 0), 0);
  assert_int_equal(anim_controller_init(&b, &db, index_fast, NULL, vec3_zero(), 0.0f, 0), 0);
  assert_true(b.params.foot_lock.enabled && b.feet.nfeet > 0);
  const vec3 step = vec3_make(3.0f, 0.0f, -2.0f);
  int locked_at_step = 0;
  for (int t = 0; t < 4 * 60; t++) {
    anim_controller_input_t in;
    memset(&in, 0, sizeof in);
    in.kind = ANIM_INPUT_STICK;
    in.stick_z = 0.9f, in.stick_x = t >= 120 ? -0.4f : 0.0f;
    assert_int_equal(anim_controller_set_input(&a, &in), 0);
    assert_int_equal(anim_controller_set_input(&b, &in), 0);
    if (t == 60) {
      for (int f = 0; f < b.feet.nfeet; f++) locked_at_step |= b.feet.feet[f].state == ANIM_FOOT_PLANTED;
      anim_controller_translate(&b, step);
    }
    assert_int_equal(anim_controller_tick(&a, 1.0f / 60.0f), 0);
    assert_int_equal(anim_controller_tick(&b, 1.0f / 60.0f), 0);
    if (t < 60) continue;
    assert_int_equal(a.frame, b.frame);
    vec3 d = vec3_sub(vec3_sub(b.pose_positions[0], a.pose_positions[0]), step);
    vec3 s = vec3_sub(vec3_sub(b.sim.position, a.sim.position), step);
    if (vec3_length(d) > 1e-3f || vec3_length(s) > 1e-3f)
      fail_msg("tick %d: root %.5f m, simulation %.5f m off the moved ones", t, vec3_length(d), vec3_length(s));
    /* The legs, which foot locking bends toward held world positions. */
    for (int i = 1; i < db.nbones; i++) {
      float turn = 2.0f * acosf(fminf(1.0f, fabsf(quat_dot(a.pose_rotations[i], b.pose_rotations[i]))));
      if (turn > 1e-2f) fail_msg("tick %d: bone %s turned %.4f rad apart", t, db.skeleton.names[i], turn);
    }
  }
  assert_true(locked_at_step);
  assert_true(b.transitions > 2);
  anim_controller_free(&a);
  anim_controller_free(&b);
}

/* anim_controller_query (for inspection between ticks) reads only, and is the
 * query the next search builds: after two seconds of one stick input (the
 * input smoothing settled), a tick forced to search builds the same vector;
 * columns other than the trajectory's are the playing frame's own (up to the
 * rounding of denormalizing and normalizing again). */
static void test_query_for_inspection(void **state) {
  anim_controller_t c;
  assert_int_equal(anim_controller_init(&c, &db, index_fast, NULL, vec3_zero(), 0.0f, 0), 0);
  anim_controller_input_t in;
  memset(&in, 0, sizeof in);
  in.kind = ANIM_INPUT_STICK, in.stick_x = 0.6f, in.stick_z = 0.6f;
  assert_int_equal(anim_controller_set_input(&c, &in), 0);
  for (int t = 0; t < 120; t++) assert_int_equal(anim_controller_tick(&c, 1.0f / 60.0f), 0);
  const anim_features_t *f = &db.features;
  float query[ANIM_MAX_FEATURE_DIMS], searched[ANIM_MAX_FEATURE_DIMS];
  anim_controller_t before = c;
  vec3 trajectory[ANIM_MAX_TRAJECTORY_SAMPLES];
  memcpy(trajectory, c.trajectory_positions, sizeof trajectory);
  anim_controller_query(&c, query);
  assert_memory_equal(&before, &c, sizeof c);
  assert_memory_equal(trajectory, c.trajectory_positions, sizeof trajectory);
  const float *row = f->values + (size_t)c.frame * (size_t)f->cols;
  for (int t = 0; t < f->schema.nterms; t++) {
    anim_feature_kind_t kind = f->schema.terms[t].kind;
    if (kind == ANIM_FEATURE_TRAJECTORY_POSITION || kind == ANIM_FEATURE_TRAJECTORY_DIRECTION) continue;
    for (int i = f->group_start[t]; i < f->group_start[t] + f->group_dims[t]; i++)
      if (fabsf(query[i] - row[i]) > 1e-5f * (1.0f + fabsf(row[i])))
        fail_msg("term %d column %d: %g, the playing frame's %g", t, i, query[i], row[i]);
  }
  c.frames_since_search = c.params.search_interval;
  anim_search_query_t search;
  assert_int_equal(anim_controller_tick_begin(&c, 1.0f / 60.0f, searched, &search), 1);
  float worst = 0.0f;
  int worst_col = 0;
  for (int i = 0; i < f->cols; i++)
    if (fabsf(query[i] - searched[i]) > worst) worst = fabsf(query[i] - searched[i]), worst_col = i;
  printf("inspection query against the search's: worst %.2e (column %d)\n", worst, worst_col);
  if (worst > 1e-3f) fail_msg("column %d: %g inspected, %g searched", worst_col, query[worst_col], searched[worst_col]);
  assert_int_equal(anim_controller_tick_end(&c, NULL), 0);
  anim_controller_free(&c);
}

/* A character told nothing stands still: at most a few transitions in 10
 * s; then it still starts and stops as fast as before. */
static void test_standing_still(void **state) {
  anim_controller_t c;
  assert_int_equal(anim_controller_init(&c, &db, index_fast, NULL, vec3_zero(), 0.0f, 0), 0);
  const float dt = 1.0f / 60.0f;
  anim_controller_input_t in;
  memset(&in, 0, sizeof in);
  in.kind = ANIM_INPUT_STICK;
  assert_int_equal(anim_controller_set_input(&c, &in), 0);
  for (int t = 0; t < 600; t++) assert_int_equal(anim_controller_tick(&c, dt), 0);
  int standing = (int)c.transitions;
  float walk = 0.85f * c.params.forward_speed, start = -1.0f, stop = -1.0f;
  in.stick_z = 0.85f;
  assert_int_equal(anim_controller_set_input(&c, &in), 0);
  for (int t = 0; t < 360; t++) {
    if (t == 180) in.stick_z = 0.0f, assert_int_equal(anim_controller_set_input(&c, &in), 0);
    assert_int_equal(anim_controller_tick(&c, dt), 0);
    vec3 v = c.pose_velocities[0];
    float time = (float)(t + 1) * dt;
    if (t < 180 && start < 0 && v.z >= 0.9f * walk) start = time;
    if (t >= 180 && stop < 0 && sqrtf(v.x * v.x + v.z * v.z) < 0.1f * walk) stop = time - 3.0f;
  }
  printf("standing 10 s: %d transitions (%llu searches); then walk speed reached in %.2f s (before %.2f), stopped in "
         "%.2f s (before %.2f)\n", standing, (unsigned long long)c.searches, (double)start, (double)START_BEFORE,
         (double)stop, (double)STOP_BEFORE);
  anim_controller_free(&c);
  if (standing > MAX_STANDING_TRANSITIONS)
    fail_msg("standing still: %d transitions in 10 s, at most %d", standing, MAX_STANDING_TRANSITIONS);
  if (start < 0 || start > START_BEFORE * START_STOP_MARGIN)
    fail_msg("walk speed reached %.2f s after the stick (or never), before %.2f", (double)start, (double)START_BEFORE);
  if (stop < 0 || stop > STOP_BEFORE * START_STOP_MARGIN)
    fail_msg("stopped %.2f s after letting go (or never), before %.2f", (double)stop, (double)STOP_BEFORE);
}

/* Standing on a database whose only clips are shorter than the trajectory
 * horizon (two idles of 0.8 s, 49 frames): a search forced by a clip's end
 * at rest must still find somewhere to land (the clip playing's start at
 * worst), so the idle goes on playing; asking for a full 60 frames before
 * any range's end there found nothing, and the character froze on the
 * clip's last frame, searching every tick. */
static void test_standing_on_short_clips(void **state) {
  anim_procgen_clip_spec_t spec = {"idle", "idle", 0.8f, 1, {0}, {0}, 0};
  anim_clip_t clips[2];
  assert_int_equal(anim_procgen_clip(&clips[0], &spec, 60.0f), 0);
  spec.name = "idle2", spec.duration = 0.7f;
  assert_int_equal(anim_procgen_clip(&clips[1], &spec, 60.0f), 0);
  anim_build_options_t o;
  anim_build_options_default(&o);
  anim_database_t small;
  anim_feature_schema_t schema;
  char err[256];
  int rc = anim_database_build(&small, "short", clips, 2, &o, err, sizeof err);
  anim_clip_free(&clips[0]), anim_clip_free(&clips[1]);
  if (rc) fail_msg("%s", err);
  assert_int_equal(anim_feature_schema_default(&schema, &small), 0);
  if (anim_features_build(&small, &schema, err, sizeof err)) fail_msg("%s", err);
  anim_search_data_t data = anim_search_data_of(&small);
  anim_search_index_t *index = anim_search_index_build(ANIM_SEARCH_BRUTE, &data, err, sizeof err);
  assert_non_null(index);
  anim_controller_t c;
  assert_int_equal(anim_controller_init(&c, &small, index, NULL, vec3_zero(), 0.0f, 0), 0);
  int last = -1, changes = 0;
  for (int t = 0; t < 300; t++) {
    assert_int_equal(anim_controller_tick(&c, 1.0f / 60.0f), 0);
    if (t >= 180 && c.frame != last) changes++;
    last = c.frame;
  }
  printf("standing on 0.8 s clips: %llu transitions, %llu searches in 5 s; the frame changed %d times in the last 2 s\n",
         (unsigned long long)c.transitions, (unsigned long long)c.searches, changes);
  uint64_t searches = c.searches;
  anim_controller_free(&c);
  anim_search_index_free(index);
  anim_database_free(&small);
  if (changes < 60) fail_msg("the idle froze: its frame changed %d times in 2 s", changes);
  if (searches > 60) fail_msg("%llu searches in 5 s", (unsigned long long)searches);
}

/* Walking straight on keeps to its clip: a transition only when another
 * frame is better by the transition cost. */
static void test_walking_transitions(void **state) {
  anim_controller_t c;
  assert_int_equal(anim_controller_init(&c, &db, index_fast, NULL, vec3_zero(), 0.0f, 0), 0);
  anim_controller_input_t in;
  memset(&in, 0, sizeof in);
  in.kind = ANIM_INPUT_STICK, in.stick_z = 0.85f;
  assert_int_equal(anim_controller_set_input(&c, &in), 0);
  for (int t = 0; t < 600; t++) assert_int_equal(anim_controller_tick(&c, 1.0f / 60.0f), 0);
  printf("walking 10 s: %llu transitions\n", (unsigned long long)c.transitions);
  int transitions = (int)c.transitions;
  anim_controller_free(&c);
  if (transitions > MAX_WALKING_TRANSITIONS)
    fail_msg("walking: %d transitions in 10 s, at most %d", transitions, MAX_WALKING_TRANSITIONS);
}

/* The pop measure can fail: with inertialization all but off, transitions jump. */
static void test_pops_without_inertialization(void **state) {
  quality_t q = run_script(1e-4f);
  printf("without inertialization: largest velocity jump %.2f m/s\n", q.max_velocity_jump);
  assert_true(q.max_velocity_jump > MAX_VELOCITY_JUMP);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_invalid_params_and_inputs),
      cmocka_unit_test(test_scripted_motion_quality),
      cmocka_unit_test(test_scripted_motion_on_mocap),
      cmocka_unit_test(test_lag_spikes),
      cmocka_unit_test(test_root_rates_only_show_the_same),
      cmocka_unit_test(test_translate),
      cmocka_unit_test(test_query_for_inspection),
      cmocka_unit_test(test_pops_without_inertialization),
      cmocka_unit_test(test_standing_still),
      cmocka_unit_test(test_standing_on_short_clips),
      cmocka_unit_test(test_walking_transitions),
  };
  return cmocka_run_group_tests_name("controller", tests, setup, teardown);
}
