/*
 * test_steering.c: the goal input (steering.h): a character sent to a goal
 * arrives, stands still there for good and does not spin, without losing
 * responsiveness on the way.
 *
 * Invalid goal inputs first. Then the maths on the springs alone: the rest
 * point anim_steering_stop_offset predicts is where the ticked springs come
 * to rest, and braking on it does not overshoot where speed profiles of the
 * distance do (the old one, and the speed from which the spring could still
 * stop). Then characters, each sent from standing to goals 2, 5 and 10 m away
 * in four directions at 1.5 and 3.5 m/s and run for 20 s at 60 Hz, measured
 * on the displayed root: on GAMES-105 (real mocap with an idle clip), on the
 * procedural database, and on the learned character. Bandai Namco has no
 * standing frames (its character walks on with the stick released: tested
 * below), so there it is only held to staying near the goal. A new goal
 * starts an arrived character again. Responsiveness: toward a far goal the
 * character reaches full speed as fast as under the velocity input at the
 * same speed in the same run (what the goal input did before: far from the
 * goal both ask for goal_speed toward it at once), and arrives within a
 * braking allowance of when the velocity input passes the goal.
 *
 * Before this braking (the same runs on 673d342, commit b21ce40's harness),
 * no run stood still: 20 s after the goal was set the root still moved at
 * 0.6-1.4 m/s (the learned character 0.09-0.6 m/s), circling 0.1-1.3 m from
 * the goal and turning round by more than 90 degrees up to 20 times (the
 * learned character 9-27 times, on the spot), after overshooting it by up to
 * 1.0 m (GAMES-105), 1.7 m (Bandai).
 *
 * Bounds are in one place below with their reasons; a failure names the
 * database and the goal.
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
#include "learned/lmm.h"
#include "procgen_db.h"
#include "quality_run.h"
#include "search/search.h"
#include "shared_data.h"
#include "motion/spring.h"
#include "character/steering.h"

/* ---- bounds ---------------------------------------------------------------------------------- */

/* Standing: the displayed root's horizontal speed, tick to tick, over the
 * last 2 s of the 20 s, m/s (the task's bound). Measured 0.005 on GAMES-105
 * (idle sway); 0.002-0.047 on the procedural database (the end of its
 * walk_stop clip searched back into itself every 7 s: 0.008 m/s with a
 * 0.047 m/s tick at each jump); 0.030 for the learned character (its idle
 * drifts). */
#define MAX_STILL_SPEED 0.05f
/* Heading flips (the displayed facing turning by more than 90 degrees from
 * where it was at the last flip) once the root has first come within
 * NEAR_RADIUS of the goal: measured 0, once 1 (procedural, 2 m to the side
 * at 3.5 m/s: it came near while still turning toward the goal); before,
 * 9-27. One is allowed: a character carried past the goal may turn round
 * once to come back. */
#define MAX_FLIPS 1
/* How far past the goal the root goes, along the line from its start to the
 * goal, m. GAMES-105 stops by cutting from a walk to its idle clip once the
 * query looks like standing (it has no stopping clip), 0.1-0.6 m past the
 * springs' rest point (worst measured 1.08 m, a run turning round to a goal
 * 2 m behind it, since the root's turn blends at the legs' pace: 0.62 m
 * before that; 0.46 m or less in the 23 other runs; before the fix 1.0 m
 * and never standing); the procedural database's stops are straight, so one arriving in a turn runs on along it
 * (worst 1.37 m, in a turn round a goal behind it); the learned character
 * stops short and drifts (0.54 m). */
#define MAX_OVERSHOOT_MOCAP 1.2f
#define MAX_OVERSHOOT_PROCGEN 1.6f
#define MAX_OVERSHOOT_LEARNED 1.0f
/* Where the root ends, m from the goal, arrived. Measured worst 1.10 m on
 * GAMES-105 (the run turning round above; 0.75 m or less in the others,
 * mean 0.3), 1.78 m on the procedural database (a turn it cannot
 * stop in; 0.05-0.33 m from straight ahead), 0.69 m for the learned
 * character (it cannot walk slower than ~0.5 m/s, stops at the arrival
 * radius, then its idle drifts at 0.03 m/s). The procedural bound is the
 * leave radius: it stays arrived. */
#define MAX_FINAL_MOCAP 1.2f
#define MAX_FINAL_PROCGEN ANIM_STEERING_LEAVE_RADIUS
#define MAX_FINAL_LEARNED 1.0f
/* Runs on GAMES-105 whose root comes within the arrival radius of the goal
 * on the way (the rest would arrive by no longer closing in within
 * NEAR_RADIUS): measured 24 of 24. */
#define MIN_REACHED_MOCAP 20
/* Bandai Namco, which cannot stand: after first coming near the goal the
 * root stays within this of it, m (it walks out to the leave radius, comes
 * back, and again: measured 3.2 m; before, 1.3-1.8 m but circling). */
#define MAX_WANDER_BANDAI (ANIM_STEERING_LEAVE_RADIUS + 1.5f)
/* Far from the goal the goal input asks what it asked before: goal_speed
 * toward the goal (then min(goal_speed, 2 d)), so a character sets off and
 * reaches full speed as before. Braking starts when the gap beyond the rest
 * point falls under goal_speed times BRAKE_TIME: within S + (ANIMATION_LAG
 * + BRAKE_TIME) v of the goal, S = 0.47 v (steering.h), 2.7 m at 3.5 m/s;
 * beyond FAR_FIELD_M the desired speed must be goal_speed exactly. */
#define FAR_FIELD_M 4.0f
/* Far goal straight ahead, where the goal and velocity inputs ask the same
 * of it: full speed (90% of the top speed the velocity input reaches toward
 * the goal in the same run) no later than under the velocity input, plus
 * half a second: on GAMES-105 and the procedural database the two reach it
 * on the same tick, but Bandai Namco's choice of clips flips with the
 * smallest change of trajectory (the goal's direction follows the root's
 * sideways drift, the velocity input's does not): measured 0.48 s later at
 * 1.5 m/s, 2.1 s earlier at 3.5 m/s. */
#define FULL_SPEED_SLACK_S 0.5f
/* Far goal straight ahead: the root has come to within the arrival radius of
 * it, along the line from the start, no later than under the velocity input
 * at the same speed (which walks on through) plus what braking costs the
 * springs alone with the animation allowance (computed below: 0.33 s at 1.5
 * m/s, 0.75 s at 3.5 m/s, of which the allowance is 0.27 and 0.55 s: it
 * starts braking earlier for an animation that stops later), plus this.
 * Measured 0.02-0.11 s at 1.5 m/s and 0.20-0.70 s at 3.5 m/s behind the
 * velocity input. */
#define ARRIVAL_DELAY_SLACK_S 0.1f
/* The springs alone (no animation), m: braking on the rest point overshoots
 * by float rounding; the speed profiles of the distance alone overshoot
 * 0.27-0.74 m (steering.h). */
#define MAX_MODEL_OVERSHOOT 0.01f
#define MIN_PROFILE_OVERSHOOT 0.2f
/* anim_steering_stop_offset against the springs ticked at 1 kHz, m: exact in
 * continuous time; ticking adds about half a step's input (the input ramps
 * from x_prev over the first step, and the spring holds each step's target):
 * measured 0.44 cm from states of up to 4 m/s and 10 m/s^2. */
#define MAX_STOP_OFFSET_ERROR 0.005f

/* ---- running a character toward a goal --------------------------------------------------------- */

#define DT (1.0f / 60.0f)
#define RUN_SECONDS 20.0f
#define NGOALS 24

typedef struct {
  float final;          /* m from the goal at the end */
  float still;          /* largest root speed over the last 2 s */
  int flips;            /* heading flips after first coming near */
  float overshoot;      /* m past the goal along the approach */
  int reached;          /* the root came within the arrival radius */
  int arrived;          /* the character's own arrival at the end */
  float top_speed;      /* fastest the root moved toward the goal, m/s */
  float wander;         /* farthest from the goal after first coming near */
  float far_slowest;    /* slowest desired speed while farther than FAR_FIELD_M, m/s */
  float cover_time;     /* s until the root has come to within the arrival radius of the goal along the line to it */
} arrival_t;

/* The character under test, one of the two kinds, behind one face. */
typedef struct {
  anim_controller_t matcher;
  anim_lmm_character_t learned;
  const anim_lmm_networks_t *nets;
  float *scratch;
} character_t;

typedef struct {
  const char *name;
  const anim_database_t *db; /* NULL: the learned character */
  const anim_search_index_t *index;
  const anim_lmm_networks_t *nets;
  float *scratch;
} subject_t;

static void character_start(character_t *c, const subject_t *s) {
  memset(c, 0, sizeof *c);
  c->nets = s->nets, c->scratch = s->scratch;
  if (s->db) assert_int_equal(anim_controller_init(&c->matcher, s->db, s->index, NULL, vec3_zero(), 0.0f, 0), 0);
  else assert_int_equal(anim_lmm_character_init(&c->learned, s->nets, NULL, vec3_zero(), 0.0f, s->scratch), 0);
}

static void character_input(character_t *c, const anim_controller_input_t *in) {
  assert_int_equal(c->nets ? anim_lmm_set_input(&c->learned, in) : anim_controller_set_input(&c->matcher, in), 0);
}

static void character_tick(character_t *c) {
  assert_int_equal(c->nets ? anim_lmm_tick(&c->learned, DT, c->scratch) : anim_controller_tick(&c->matcher, DT), 0);
}

static vec3 character_root(const character_t *c) {
  vec3 p = c->nets ? c->learned.pose.positions[0] : c->matcher.pose_positions[0];
  return vec3_make(p.x, 0.0f, p.z);
}

static vec3 character_desired_velocity(const character_t *c) {
  return c->nets ? c->learned.sim.desired_velocity : c->matcher.sim.desired_velocity;
}

static vec3 character_root_velocity(const character_t *c) {
  return c->nets ? c->learned.pose.velocities[0] : c->matcher.pose_velocities[0];
}

static float character_heading(const character_t *c) {
  vec3 f = quat_mul_vec3(c->nets ? c->learned.pose.rotations[0] : c->matcher.pose_rotations[0], vec3_make(0, 0, 1));
  return atan2f(f.x, f.z);
}

static const anim_goal_arrival_t *character_arrival(const character_t *c) {
  return c->nets ? &c->learned.sim.arrival : &c->matcher.sim.arrival;
}

static void character_free(character_t *c) {
  if (!c->nets) anim_controller_free(&c->matcher);
}

static float flat_length(vec3 v) { return sqrtf(v.x * v.x + v.z * v.z); }

#define RUN_TICKS 1200 /* RUN_SECONDS at 60 Hz */

/* Standing a second (so every run starts alike), then input in toward goal
 * (relative to the root then); measures the next 20 s into out, and when
 * out_toward is not NULL the root's speed toward the goal each tick
 * (RUN_TICKS floats). in's goal is made absolute. */
static void run_input(character_t *c, anim_controller_input_t in, vec3 goal_offset, arrival_t *out, float *out_toward) {
  anim_controller_input_t stand;
  memset(&stand, 0, sizeof stand);
  stand.kind = ANIM_INPUT_STICK;
  character_input(c, &stand);
  for (int t = 0; t < 60; t++) character_tick(c);
  vec3 start = character_root(c), goal = vec3_add(start, goal_offset);
  vec3 direction = vec3_scale(goal_offset, 1.0f / flat_length(goal_offset));
  if (in.kind == ANIM_INPUT_GOAL) in.goal = goal;
  character_input(c, &in);
  memset(out, 0, sizeof *out);
  out->cover_time = -1.0f;
  out->far_slowest = INFINITY;
  vec3 previous = start;
  float reference = 0.0f;
  int near = 0;
  for (int t = 0; t < RUN_TICKS; t++) {
    character_tick(c);
    float time = (float)(t + 1) * DT;
    vec3 root = character_root(c);
    float d = flat_length(vec3_sub(root, goal)), speed = flat_length(vec3_sub(root, previous)) / DT;
    float toward = vec3_dot(character_root_velocity(c), direction), heading = character_heading(c);
    previous = root;
    if (out_toward) out_toward[t] = toward;
    if (d > FAR_FIELD_M) out->far_slowest = fminf(out->far_slowest, vec3_length(character_desired_velocity(c)));
    out->overshoot = fmaxf(out->overshoot, vec3_dot(vec3_sub(root, goal), direction));
    out->top_speed = fmaxf(out->top_speed, toward);
    float along = vec3_dot(vec3_sub(root, start), direction);
    if (out->cover_time < 0.0f && along >= flat_length(goal_offset) - ANIM_STEERING_ARRIVE_RADIUS)
      out->cover_time = time;
    if (d <= ANIM_STEERING_ARRIVE_RADIUS) out->reached = 1;
    if (!near && d <= ANIM_STEERING_NEAR_RADIUS) near = 1, reference = heading;
    if (near) {
      if (fabsf(remainderf(heading - reference, 2.0f * ANIM_PI)) > 0.5f * ANIM_PI) out->flips++, reference = heading;
      out->wander = fmaxf(out->wander, d);
    }
    if (time > RUN_SECONDS - 2.0f) out->still = fmaxf(out->still, speed);
    out->final = d;
  }
  out->arrived = character_arrival(c)->arrived;
}

/* The 24 goals: distance (m), direction from the start's facing (degrees), speed (m/s). */
static void goal_of(int g, float *out_distance, float *out_degrees, float *out_speed) {
  static const float distances[3] = {2.0f, 5.0f, 10.0f}, degrees[4] = {0.0f, 90.0f, 180.0f, -135.0f};
  *out_speed = g < 12 ? 1.5f : 3.5f;
  *out_distance = distances[(g % 12) / 4], *out_degrees = degrees[g % 4];
}

static vec3 offset_of(float distance, float degrees) {
  float a = degrees * ANIM_PI / 180.0f;
  return vec3_make(distance * sinf(a), 0.0f, distance * cosf(a));
}

static void run_goal(const subject_t *s, int g, arrival_t *out) {
  float distance, degrees, speed;
  goal_of(g, &distance, &degrees, &speed);
  anim_controller_input_t in;
  memset(&in, 0, sizeof in);
  in.kind = ANIM_INPUT_GOAL, in.goal_speed = speed;
  character_t c;
  character_start(&c, s);
  run_input(&c, in, offset_of(distance, degrees), out, NULL);
  character_free(&c);
  printf("  %s %4.0f m %5.0f deg %.1f m/s: ends %.2f m away (%s), still %.3f m/s, %d flips, overshoot %.2f m, "
         "%s\n", s->name, distance, degrees, speed, out->final, out->arrived ? "arrived" : "not arrived", out->still,
         out->flips, out->overshoot, out->reached ? "came within the arrival radius" : "stopped near");
}

/* Every goal: stands still, at most one flip, overshoot and final distance
 * within the bounds, arrived; returns how many came within the radius. */
static int check_arrivals(const subject_t *s, float max_overshoot, float max_final) {
  int reached = 0;
  for (int g = 0; g < NGOALS; g++) {
    arrival_t a;
    run_goal(s, g, &a);
    float distance, degrees, speed;
    goal_of(g, &distance, &degrees, &speed);
    if (!(a.still < MAX_STILL_SPEED))
      fail_msg("%s, goal %.0f m at %.0f deg, %.1f m/s: still moving %.3f m/s at the end", s->name, distance, degrees,
               speed, a.still);
    if (a.flips > MAX_FLIPS)
      fail_msg("%s, goal %.0f m at %.0f deg, %.1f m/s: %d heading flips near the goal", s->name, distance, degrees,
               speed, a.flips);
    if (!(a.overshoot <= max_overshoot))
      fail_msg("%s, goal %.0f m at %.0f deg, %.1f m/s: %.2f m past the goal", s->name, distance, degrees, speed,
               a.overshoot);
    if (!(a.final <= max_final) || !a.arrived)
      fail_msg("%s, goal %.0f m at %.0f deg, %.1f m/s: ends %.2f m from it, %s", s->name, distance, degrees, speed,
               a.final, a.arrived ? "arrived" : "not arrived");
    reached += a.reached;
  }
  return reached;
}

/* ---- data ------------------------------------------------------------------------------------- */

static anim_database_t procgen, games105, bandai;
static anim_search_index_t *procgen_index, *games105_index, *bandai_index;
static int games105_built, bandai_built;

static anim_search_index_t *index_of(const anim_database_t *db) {
  char err[256];
  anim_search_data_t data = anim_search_data_of(db);
  anim_search_index_t *index = anim_search_index_build(ANIM_SEARCH_FAST, &data, err, sizeof err);
  if (!index) fail_msg("search index: %s", err);
  return index;
}

static int setup(void **state) {
  (void)state;
  if (anim_test_procgen_load(&procgen)) return -1;
  anim_search_data_t data = anim_search_data_of(&procgen);
  char err[256];
  procgen_index = anim_search_index_build(ANIM_SEARCH_FAST, &data, err, sizeof err);
  return procgen_index ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  anim_search_index_free(procgen_index), anim_database_free(&procgen);
  if (games105_built) anim_search_index_free(games105_index), anim_database_free(&games105);
  if (bandai_built) anim_search_index_free(bandai_index), anim_database_free(&bandai);
  return 0;
}

/* GAMES-105 as test_foot_quality.c builds it (dataset 1); 0 after skip/fail. */
static int have_games105(void) {
  char path[1024], err[512];
  if (games105_built) return 1;
  if (!anim_test_shared_path(path, sizeof path, "data/mocap/games105")) return 0;
  if (anim_quality_dataset_build(&games105, anim_test_shared_dir(), 1, err, sizeof err)) fail_msg("games105: %s", err);
  games105_index = index_of(&games105);
  games105_built = 1;
  return 1;
}

static int have_bandai(void) {
  if (bandai_built) return 1;
  if (!anim_test_bandai_database(&bandai)) return 0;
  bandai_index = index_of(&bandai);
  bandai_built = 1;
  return 1;
}

/* ---- invalid inputs ------------------------------------------------------------------------------ */

static void test_invalid_goal_inputs(void **state) {
  (void)state;
  anim_controller_t c;
  assert_int_equal(anim_controller_init(&c, &procgen, procgen_index, NULL, vec3_zero(), 0.0f, 0), 0);
  anim_controller_input_t in;
  memset(&in, 0, sizeof in);
  in.kind = ANIM_INPUT_GOAL, in.goal = vec3_make(3.0f, 0.0f, 4.0f), in.goal_speed = 1.5f;
  assert_int_equal(anim_controller_set_input(&c, &in), 0);
  anim_controller_input_t bad = in;
  bad.goal.x = NAN;
  assert_int_equal(anim_controller_set_input(&c, &bad), ANIM_ENONFINITE);
  bad = in, bad.goal.z = INFINITY;
  assert_int_equal(anim_controller_set_input(&c, &bad), ANIM_ENONFINITE);
  bad = in, bad.goal_speed = NAN;
  assert_int_equal(anim_controller_set_input(&c, &bad), ANIM_ENONFINITE);
  bad = in, bad.goal_speed = -0.5f;
  assert_int_equal(anim_controller_set_input(&c, &bad), ANIM_EINVAL);
  /* A refused input leaves the last good one in place. */
  assert_memory_equal(&c.input, &in, sizeof in);
  /* A goal at zero speed is valid: the character asks for nothing. */
  in.goal_speed = 0.0f;
  assert_int_equal(anim_controller_set_input(&c, &in), 0);
  for (int t = 0; t < 30; t++) assert_int_equal(anim_controller_tick(&c, DT), 0);
  assert_true(vec3_length(c.sim.desired_velocity) == 0.0f);
  anim_controller_free(&c);
}

/* ---- the springs alone ------------------------------------------------------------------------- */

static float uniform(uint32_t *seed, float lo, float hi) {
  *seed = *seed * 1664525u + 1013904223u;
  return lo + (hi - lo) * (float)(*seed >> 8) / 16777216.0f;
}

/* From random states (velocity, acceleration, smoothing state and last
 * input), the springs ticked at 1 kHz with the desired velocity at zero come
 * to rest where anim_steering_stop_offset says; with and without the
 * smoothing's initial response (r). */
static void test_stop_offset_is_where_the_springs_rest(void **state) {
  (void)state;
  uint32_t seed = 7;
  const float halflife = 0.27f, dt = 0.001f, r[2] = {0.0f, 0.8f};
  float worst = 0.0f;
  for (int k = 0; k < 2; k++) {
    anim_dynamics_params_t smoothing;
    assert_int_equal(anim_dynamics_params_make(&smoothing, 4.0f, 1.0f, r[k]), 0);
    for (int trial = 0; trial < 50; trial++) {
      vec3 v = vec3_make(uniform(&seed, -4, 4), 0, uniform(&seed, -4, 4));
      vec3 a = vec3_make(uniform(&seed, -8, 8), 0, uniform(&seed, -8, 8));
      anim_dynamics_vec3_t smoothed = {vec3_make(uniform(&seed, -4, 4), 0, uniform(&seed, -4, 4)),
                                       vec3_make(uniform(&seed, -10, 10), 0, uniform(&seed, -10, 10)),
                                       vec3_make(uniform(&seed, -4, 4), 0, uniform(&seed, -4, 4))};
      vec3 predicted = anim_steering_stop_offset(v, a, &smoothed, &smoothing, halflife);
      vec3 x = vec3_zero();
      for (int i = 0; i < 20000; i++) {
        assert_int_equal(anim_dynamics_vec3_update(&smoothed, &smoothing, vec3_zero(), dt), 0);
        anim_spring_character_vec3(&x, &v, &a, smoothed.y, halflife, dt);
      }
      assert_true(vec3_length(v) < 1e-4f); /* at rest */
      float error = vec3_length(vec3_sub(x, predicted));
      if (error > worst) worst = error;
      if (!(error <= MAX_STOP_OFFSET_ERROR))
        fail_msg("r %.1f trial %d: rests at (%.4f, %.4f), predicted (%.4f, %.4f)", r[k], trial, x.x, x.z, predicted.x,
                 predicted.z);
    }
  }
  printf("stop offset: worst %.4f m from where the ticked springs rest\n", worst);
}

typedef enum {
  PROFILE_BRAKING,           /* the goal input, its root moving as the springs do, no animation allowance */
  PROFILE_BRAKING_ALLOWANCE, /* the same with the allowance for an animation running on (root velocity = springs') */
  PROFILE_OLD,               /* min(speed, 2 d), stopping within 5 cm: the goal input before */
  PROFILE_CAN_STOP,          /* min(speed, y d / 2): the speed from which the spring can stop in d */
  PROFILE_CONSTANT           /* speed toward the goal, never stopping */
} profile_t;

typedef struct {
  float overshoot; /* m */
  float final;     /* m from the goal after 10 s */
  float cover;     /* s until within the arrival radius of it */
} model_t;

/* A point that is the simulation alone (its position the springs'), sent
 * 10 m ahead at speed under the profile, for 10 s. */
static model_t model_run(profile_t profile, float speed) {
  anim_controller_params_t p;
  anim_controller_params_default(&p);
  anim_dynamics_params_t smoothing;
  assert_int_equal(anim_dynamics_params_make(&smoothing, p.input_f, p.input_zeta, p.input_r), 0);
  anim_dynamics_vec3_t smoothed;
  anim_dynamics_vec3_reset(&smoothed, vec3_zero());
  vec3 x = vec3_zero(), v = vec3_zero(), a = vec3_zero(), goal = vec3_make(0.0f, 0.0f, 10.0f);
  quat facing = quat_identity();
  anim_goal_arrival_t arrival;
  memset(&arrival, 0, sizeof arrival);
  anim_controller_input_t in;
  memset(&in, 0, sizeof in);
  in.kind = ANIM_INPUT_GOAL, in.goal = goal, in.goal_speed = speed;
  float y = 0.5f * halflife_to_damping(p.velocity_halflife);
  model_t m = {0.0f, 0.0f, -1.0f};
  for (int t = 0; t < 600; t++) {
    vec3 desired;
    float d = goal.z - x.z, u = speed;
    if (profile == PROFILE_BRAKING || profile == PROFILE_BRAKING_ALLOWANCE) {
      anim_steering_state_t st = {x, facing, profile == PROFILE_BRAKING ? vec3_zero() : v,
                                  anim_steering_stop_offset(v, a, &smoothed, &smoothing, p.velocity_halflife)};
      anim_steering_desired(&desired, &facing, &arrival, &in, &p, &st);
    } else {
      if (profile == PROFILE_OLD) u = fabsf(d) < 0.05f ? 0.0f : fminf(speed, 2.0f * fabsf(d));
      if (profile == PROFILE_CAN_STOP) u = fminf(speed, 0.5f * y * fabsf(d));
      desired = vec3_make(0.0f, 0.0f, copysignf(u, d));
    }
    assert_int_equal(anim_dynamics_vec3_update(&smoothed, &smoothing, desired, DT), 0);
    anim_spring_character_vec3(&x, &v, &a, smoothed.y, p.velocity_halflife, DT);
    m.overshoot = fmaxf(m.overshoot, x.z - goal.z);
    if (m.cover < 0.0f && goal.z - x.z <= ANIM_STEERING_ARRIVE_RADIUS) m.cover = (float)(t + 1) * DT;
  }
  m.final = fabsf(goal.z - x.z);
  return m;
}

static void test_braking_on_the_springs(void **state) {
  (void)state;
  const float speeds[2] = {1.5f, 3.5f};
  for (int s = 0; s < 2; s++) {
    model_t braking = model_run(PROFILE_BRAKING, speeds[s]);
    model_t allowance = model_run(PROFILE_BRAKING_ALLOWANCE, speeds[s]);
    model_t old = model_run(PROFILE_OLD, speeds[s]), can_stop = model_run(PROFILE_CAN_STOP, speeds[s]);
    printf("springs alone at %.1f m/s: braking overshoots %.4f m and ends %.3f m away (%.4f and %.3f m with the "
           "animation allowance); min(v, 2d) overshoots %.2f m, min(v, y d / 2) %.2f m\n", speeds[s],
           braking.overshoot, braking.final, allowance.overshoot, allowance.final, old.overshoot, can_stop.overshoot);
    if (!(braking.overshoot <= MAX_MODEL_OVERSHOOT && allowance.overshoot <= MAX_MODEL_OVERSHOOT))
      fail_msg("%.1f m/s: braking overshoots %.4f m (%.4f m with the allowance)", speeds[s], braking.overshoot,
               allowance.overshoot);
    assert_true(braking.final <= ANIM_STEERING_ARRIVE_RADIUS && allowance.final <= ANIM_STEERING_ARRIVE_RADIUS);
    /* The measure can fail: the profiles of the distance overshoot. */
    assert_true(old.overshoot > MIN_PROFILE_OVERSHOOT && can_stop.overshoot > MIN_PROFILE_OVERSHOOT);
  }
}

/* ---- characters --------------------------------------------------------------------------------- */

static void test_arrivals_on_mocap(void **state) {
  (void)state;
  if (!have_games105()) return;
  subject_t s = {"games105", &games105, games105_index, NULL, NULL};
  int reached = check_arrivals(&s, MAX_OVERSHOOT_MOCAP, MAX_FINAL_MOCAP);
  printf("games105: %d of %d came within the arrival radius\n", reached, NGOALS);
  if (reached < MIN_REACHED_MOCAP) fail_msg("games105: only %d of %d came within the arrival radius", reached, NGOALS);
}

static void test_arrivals_on_procgen(void **state) {
  (void)state;
  subject_t s = {"procgen", &procgen, procgen_index, NULL, NULL};
  check_arrivals(&s, MAX_OVERSHOOT_PROCGEN, MAX_FINAL_PROCGEN);
}

static void test_arrivals_learned(void **state) {
  (void)state;
  char dir[1024], err[512];
  if (!anim_test_shared_path(dir, sizeof dir, "data/lmm")) return;
  int code = 0;
  anim_lmm_networks_t *nets = anim_lmm_networks_load(dir, NULL, &code, err, sizeof err);
  if (!nets) fail_msg("%s (%d)", err, code);
  float *scratch = malloc(sizeof(float) * anim_lmm_scratch_floats(nets, 1));
  assert_non_null(scratch);
  subject_t s = {"learned", NULL, NULL, nets, scratch};
  check_arrivals(&s, MAX_OVERSHOOT_LEARNED, MAX_FINAL_LEARNED);
  free(scratch);
  anim_lmm_networks_free(nets);
}

/* Bandai Namco has no standing pose: 16 of its 6044 frames have the root
 * slower than 0.1 m/s. Before animation warping (warp.h) its character
 * walked on with the stick released (9 m in 10 s); now the walk is
 * slowed to a held stance, and without the stand warp it still walks on
 * (the test of the test). Sent to a goal it comes near, and stays within
 * reach of it. */
static float bandai_released_walk(int stand_warp) {
  anim_controller_params_t p;
  anim_controller_params_default(&p);
  p.warp.stand = stand_warp;
  anim_controller_t c;
  assert_int_equal(anim_controller_init(&c, &bandai, bandai_index, &p, vec3_zero(), 0.0f, 0), 0);
  anim_controller_input_t stand;
  memset(&stand, 0, sizeof stand);
  stand.kind = ANIM_INPUT_STICK;
  assert_int_equal(anim_controller_set_input(&c, &stand), 0);
  vec3 start = c.pose_positions[0];
  for (int t = 0; t < 600; t++) assert_int_equal(anim_controller_tick(&c, DT), 0);
  float walked = flat_length(vec3_sub(c.pose_positions[0], start));
  anim_controller_free(&c);
  return walked;
}

#define MAX_BANDAI_STAND_WALK 1.0f /* m in 10 s from frame 0 (a walk): measured 0.8 */

static void test_bandai_stands_by_warping(void **state) {
  (void)state;
  if (!have_bandai()) return;
  int slow = 0;
  for (int f = 0; f < bandai.nframes; f++)
    slow += flat_length(bandai.local_velocities[(size_t)f * (size_t)bandai.nbones]) < 0.1f;
  subject_t s = {"bandai", &bandai, bandai_index, NULL, NULL};
  float walked = bandai_released_walk(1), unwarped = bandai_released_walk(0);
  printf("bandai: %d of %d frames slower than 0.1 m/s; the stick released, the root is %.1f m away after 10 s "
         "(%.1f m without the stand warp)\n", slow, bandai.nframes, walked, unwarped);
  assert_true(slow < bandai.nframes / 100); /* no standing data */
  if (!(walked < MAX_BANDAI_STAND_WALK)) fail_msg("bandai walked %.2f m asked to stand", walked);
  if (!(unwarped > MAX_BANDAI_STAND_WALK)) fail_msg("bandai without the stand warp walked only %.2f m", unwarped);
  for (int g = 0; g < NGOALS; g++) {
    arrival_t a;
    run_goal(&s, g, &a);
    float distance, degrees, speed;
    goal_of(g, &distance, &degrees, &speed);
    if (!(a.wander > 0.0f && a.wander <= MAX_WANDER_BANDAI))
      fail_msg("bandai, goal %.0f m at %.0f deg, %.1f m/s: wandered %.2f m from it", distance, degrees, speed,
               a.wander);
  }
}

/* An arrived character set a new goal goes there and arrives again; the
 * same goal given again (or moved by less than the arrival radius) does not
 * start it. */
static void test_new_goal_starts_again(void **state) {
  (void)state;
  subject_t s = {"procgen", &procgen, procgen_index, NULL, NULL};
  character_t c;
  character_start(&c, &s);
  anim_controller_input_t in;
  memset(&in, 0, sizeof in);
  in.kind = ANIM_INPUT_GOAL, in.goal_speed = 1.5f;
  arrival_t a;
  run_input(&c, in, vec3_make(0.0f, 0.0f, 5.0f), &a, NULL);
  assert_true(a.arrived && a.still < MAX_STILL_SPEED);
  in = c.matcher.input;
  vec3 here = character_root(&c);
  in.goal.x += 0.5f * ANIM_STEERING_ARRIVE_RADIUS;
  for (int t = 0; t < 120; t++) character_input(&c, &in), character_tick(&c);
  float moved = flat_length(vec3_sub(character_root(&c), here));
  printf("new goal: %.3f m moved for the goal nudged by %.2f m\n", moved, 0.5f * ANIM_STEERING_ARRIVE_RADIUS);
  assert_true(c.matcher.sim.arrival.arrived && moved < 0.05f);
  /* 3 m to the side of where it stands: it sets off and arrives there. */
  in.goal = vec3_add(here, vec3_make(0.0f, 0.0f, 3.0f));
  character_input(&c, &in);
  float top = 0.0f;
  for (int t = 0; t < 600; t++) {
    character_tick(&c);
    top = fmaxf(top, flat_length(character_root_velocity(&c)));
  }
  float left = flat_length(vec3_sub(character_root(&c), in.goal));
  printf("new goal 3 m on: top speed %.2f m/s, ends %.2f m from it\n", top, left);
  assert_true(top > 1.0f && c.matcher.sim.arrival.arrived && left <= ANIM_STEERING_NEAR_RADIUS);
  character_free(&c);
}

/* Seconds until series (RUN_TICKS ticks) first reaches at least value; -1 never. */
static float first_time_at(const float *series, float value) {
  for (int t = 0; t < RUN_TICKS; t++)
    if (series[t] >= value) return (float)(t + 1) * DT;
  return -1.0f;
}

/* Toward far goals (10 m, four directions, walk and run): goal_speed asked
 * for far from the goal; straight ahead, full speed no later than under the
 * velocity input at the same speed, and the arrival within the braking
 * allowance of when the velocity input passes the goal. */
static void check_responsiveness(const subject_t *s) {
  for (int g = 0; g < NGOALS; g++) {
    float distance, degrees, speed;
    goal_of(g, &distance, &degrees, &speed);
    if (distance != 10.0f) continue;
    vec3 offset = offset_of(distance, degrees);
    anim_controller_input_t goal, velocity;
    memset(&goal, 0, sizeof goal), memset(&velocity, 0, sizeof velocity);
    goal.kind = ANIM_INPUT_GOAL, goal.goal_speed = speed;
    velocity.kind = ANIM_INPUT_VELOCITY, velocity.velocity = vec3_scale(offset, speed / distance);
    velocity.facing = degrees * ANIM_PI / 180.0f;
    arrival_t by_goal, by_velocity;
    static float toward_goal[RUN_TICKS], toward_velocity[RUN_TICKS];
    character_t c;
    character_start(&c, s);
    run_input(&c, velocity, offset, &by_velocity, toward_velocity);
    character_free(&c);
    character_start(&c, s);
    run_input(&c, goal, offset, &by_goal, toward_goal);
    character_free(&c);
    /* Full speed: 90% of the velocity input's top speed toward the goal. */
    float full = 0.9f * by_velocity.top_speed;
    float t_goal = first_time_at(toward_goal, full), t_velocity = first_time_at(toward_velocity, full);
    float allowed = model_run(PROFILE_BRAKING_ALLOWANCE, speed).cover - model_run(PROFILE_CONSTANT, speed).cover;
    printf("  %s 10 m %4.0f deg %.1f m/s: full speed (%.2f m/s) in %.2f s, velocity input %.2f s; within the arrival "
           "radius along the line at %.2f s, velocity input %.2f s (braking allows %.2f s)\n", s->name, degrees, speed,
           full, t_goal, t_velocity, by_goal.cover_time, by_velocity.cover_time, allowed);
    if (!(fabsf(by_goal.far_slowest - speed) <= 1e-5f * speed)) /* to a float's rounding */
      fail_msg("%s, 10 m at %.0f deg, %.1f m/s: asked for %.3f m/s while farther than %.1f m", s->name, degrees, speed,
               by_goal.far_slowest, FAR_FIELD_M);
    if (degrees == 0.0f && !(t_goal >= 0.0f && t_goal <= t_velocity + FULL_SPEED_SLACK_S))
      fail_msg("%s, 10 m at %.0f deg, %.1f m/s: full speed after %.2f s, the velocity input %.2f s", s->name, degrees,
               speed, t_goal, t_velocity);
    if (degrees == 0.0f && !(by_goal.cover_time >= 0.0f && by_velocity.cover_time >= 0.0f &&
                             by_goal.cover_time <= by_velocity.cover_time + allowed + ARRIVAL_DELAY_SLACK_S))
      fail_msg("%s, 10 m ahead at %.1f m/s: there after %.2f s, the velocity input after %.2f s "
               "(braking allows %.2f s)",
               s->name, speed, by_goal.cover_time, by_velocity.cover_time, allowed);
  }
}

static void test_far_goal_responsiveness(void **state) {
  (void)state;
  subject_t p = {"procgen", &procgen, procgen_index, NULL, NULL};
  check_responsiveness(&p);
  if (!have_games105()) return;
  subject_t g = {"games105", &games105, games105_index, NULL, NULL};
  check_responsiveness(&g);
  if (!have_bandai()) return;
  subject_t b = {"bandai", &bandai, bandai_index, NULL, NULL};
  check_responsiveness(&b);
}

/* The facing spring about +Y (steering.c's path without the zero axes)
 * gives the quaternion path's values: 20,000 random facings, goals, turn
 * rates and steps, offsets up to a half turn (past the series' domain the
 * path hands over to the quaternion one), compared component by component
 * with the spring written out on quaternions. */
static void test_facing_spring_about_up_is_the_quaternion_one(void **state) {
  (void)state;
  unsigned seed = 7;
  for (int i = 0; i < 20000; i++) {
    float facing = ((float)rand_r(&seed) / (float)RAND_MAX - 0.5f) * 2.0f * ANIM_PI;
    float goal_facing = facing + ((float)rand_r(&seed) / (float)RAND_MAX - 0.5f) * 2.0f * ANIM_PI;
    float turn = ((float)rand_r(&seed) / (float)RAND_MAX - 0.5f) * 40.0f;
    float halflife = 0.05f + 0.5f * (float)rand_r(&seed) / (float)RAND_MAX;
    float dt = i % 3 ? 1.0f / 60.0f : (float)rand_r(&seed) / (float)RAND_MAX;
    quat rotation = quat_from_angle_axis(facing, vec3_make(0.0f, 1.0f, 0.0f));
    quat goal = quat_from_angle_axis(goal_facing, vec3_make(0.0f, 1.0f, 0.0f));
    vec3 w = vec3_make(0.0f, turn, 0.0f), want_w = w;
    quat offset = quat_abs(quat_inv_mul(goal, rotation));
    anim_spring_decay_quat(&offset, &want_w, halflife, dt);
    quat want = quat_normalize(quat_mul(goal, offset));
    anim_steering_rotation_spring(&rotation, &w, goal, halflife, dt);
    if (!(rotation.w == want.w && rotation.x == want.x && rotation.y == want.y && rotation.z == want.z &&
          w.x == want_w.x && w.y == want_w.y && w.z == want_w.z))
      fail_msg("case %d: facing %g goal %g turn %g halflife %g dt %g: (%.9g %.9g) w %.9g, the quaternion path "
               "(%.9g %.9g) w %.9g", i, facing, goal_facing, turn, halflife, dt, rotation.w, rotation.y, w.y,
               want.w, want.y, want_w.y);
  }
}

/* The stick's facing is the velocity's heading, as yaw_rotation(atan2f(x,
 * z)) gives it, within a few float roundings: random sticks, cameras and
 * facings, and sticks straight back (x = +0 and -0: a half turn either way),
 * ahead, and sideways. The facing stays about +Y exactly (the spring's fast
 * path needs x = z = 0). Measured: 1.2e-7 at most (one float step below 1;
 * the trigonometric form is itself a rounding or two off). */
#define FACING_TOLERANCE 2.4e-7f
static void check_stick_facing(const anim_controller_params_t *p, float stick_x, float stick_z, float camera,
                               float facing, const char *what) {
  anim_controller_input_t in = {.kind = ANIM_INPUT_STICK, .stick_x = stick_x, .stick_z = stick_z,
                                .camera_azimuth = camera};
  anim_steering_state_t st = {.rotation = quat_from_angle_axis(facing, vec3_make(0.0f, 1.0f, 0.0f))};
  anim_goal_arrival_t arrival = {0};
  vec3 v;
  quat q = st.rotation;
  anim_steering_desired(&v, &q, &arrival, &in, p, &st);
  quat want = quat_from_angle_axis(atan2f(v.x, v.z), vec3_make(0.0f, 1.0f, 0.0f));
  float error = fmaxf(fabsf(q.w - want.w), fabsf(q.y - want.y));
  if (q.x != 0.0f || q.z != 0.0f || !(error <= FACING_TOLERANCE))
    fail_msg("%s: stick (%g, %g) camera %g facing %g: velocity (%.9g, %.9g) faced (%.9g %.9g %.9g %.9g), "
             "atan2f's (%.9g %.9g), off by %g", what, stick_x, stick_z, camera, facing, v.x, v.z, q.w, q.x, q.y, q.z,
             want.w, want.y, error);
}

static void test_stick_facing_is_the_velocity_heading(void **state) {
  (void)state;
  anim_controller_params_t p;
  anim_controller_params_default(&p);
  check_stick_facing(&p, 0.0f, -1.0f, 0.0f, 0.0f, "straight back, x = +0");
  check_stick_facing(&p, -0.0f, -1.0f, 0.0f, 0.0f, "straight back, x = -0");
  check_stick_facing(&p, 0.0f, 1.0f, 0.0f, 0.0f, "straight ahead");
  check_stick_facing(&p, 1.0f, 0.0f, 0.0f, 0.0f, "sideways");
  check_stick_facing(&p, 1e-3f, -1.0f, 0.0f, 0.0f, "nearly straight back");
  /* Speeds of 0 are valid: a pushed stick then asks for no velocity, and the
   * facing is atan2f's for a zero direction (the identity). */
  anim_controller_params_t still = p;
  still.forward_speed = still.side_speed = still.back_speed = 0.0f;
  assert_int_equal(anim_controller_params_validate(&still), 0);
  check_stick_facing(&still, 0.6f, 0.8f, 1.0f, 0.5f, "zero speeds");
  unsigned seed = 11;
  for (int i = 0; i < 20000; i++) {
    float x = 2.0f * (float)rand_r(&seed) / (float)RAND_MAX - 1.0f;
    float z = 2.0f * (float)rand_r(&seed) / (float)RAND_MAX - 1.0f;
    if (x * x + z * z < 1e-3f) continue; /* a released stick keeps the facing */
    float camera = 2.0f * ANIM_PI * (float)rand_r(&seed) / (float)RAND_MAX;
    float facing = 2.0f * ANIM_PI * (float)rand_r(&seed) / (float)RAND_MAX - ANIM_PI;
    check_stick_facing(&p, x, z, camera, facing, "random");
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_invalid_goal_inputs),
      cmocka_unit_test(test_stop_offset_is_where_the_springs_rest),
      cmocka_unit_test(test_braking_on_the_springs),
      cmocka_unit_test(test_arrivals_on_mocap),
      cmocka_unit_test(test_arrivals_on_procgen),
      cmocka_unit_test(test_arrivals_learned),
      cmocka_unit_test(test_bandai_stands_by_warping),
      cmocka_unit_test(test_new_goal_starts_again),
      cmocka_unit_test(test_far_goal_responsiveness),
      cmocka_unit_test(test_facing_spring_about_up_is_the_quaternion_one),
      cmocka_unit_test(test_stick_facing_is_the_velocity_heading),
  };
  return cmocka_run_group_tests_name("steering", tests, setup, teardown);
}
