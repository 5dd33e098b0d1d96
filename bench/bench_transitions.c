/*
 * bench_transitions.c: `animbench transitions`: how often a motion-matching
 * character transitions, why, and what each transition costs the eye, under
 * four simple inputs, on the default database and the real mocap datasets.
 *
 * Scenarios (60 Hz ticks, --seconds each, camera azimuth 0, from the
 * origin facing +Z playing frame 0, as a server character created without
 * a start frame):
 *  - stand: no input at all (the stick at rest);
 *  - walk: the stick forward at 0.85 (1.49 m/s with the default speeds);
 *  - turn: the stick at 0.85, its direction turning at 0.8 rad/s (a circle
 *    of about 1.9 m radius);
 *  - stopstart: walk 2 s, stand 2 s, over and over.
 *
 * Per run: transitions (and a second), each put down to why its tick
 * searched (the range ending: forced; the desired velocity changing: the
 * input; else the periodic search finding a better frame); the mean
 * length of a played segment; at transitions the largest jump between the
 * source and destination database poses (any bone's root-relative
 * position, cm, and velocity, m/s: what inertialization has to hide) and
 * the largest change of a displayed bone's velocity in the tick
 * (tests/test_controller.c's pop measure); contact-foot slide and the pop
 * ratio (tests/support/motion_quality.h); the time to reach 90% of the
 * commanded speed (and to 50% of it) after each start and to come below 10% of it after each
 * stop; while standing, how far the displayed root drifts and how fast the
 * body moves about the root (mean bone speed relative to the root).
 *
 * --set name=value,... overrides controller parameters (e.g.
 * transition_cost=0.02); --trace DATASET/SCENARIO prints every transition
 * of that run (time, frames, ranges, reason, costs). In process, one
 * thread; deterministic, so two builds compare run for run.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench_datasets.h"
#include "character/controller.h"
#include "motion_quality.h"
#include "quality_run.h"
#include "search/search.h"

#define TR_DATASETS BENCH_DATASETS
static float WALK_STICK = 0.85f; /* --stick */
#define TURN_RATE 0.8f      /* rad/s of the stick's direction */
#define STOPSTART_HALF 2.0f /* s walking, then s standing */

typedef enum { SC_STAND, SC_WALK, SC_TURN, SC_STOPSTART, SC_COUNT } scenario_t;
static const char *scenario_names[SC_COUNT] = {"stand", "walk", "turn", "stopstart"};

typedef bench_dataset_t dataset_t;

typedef struct {
  int transitions, searches;
  int by_end, by_replan, by_periodic;
  float seconds;
  float pose_jump_max, pose_jump_sum; /* m */
  float vel_jump_max;                 /* m/s, data pair */
  float shown_jump_max;               /* m/s, displayed */
  anim_quality_t q;
  int starts, started, started_half, stops, stopped;
  float start_sum, start_max, start_half_sum, stop_sum, stop_max; /* s */
  float stand_drift, stand_body_speed;                            /* m, m/s */
  long stand_ticks;
} result_t;

/* The input of scenario s at time t, and whether the character is asked to walk. */
static int scenario_input(scenario_t s, float t, anim_controller_input_t *in) {
  memset(in, 0, sizeof *in);
  in->kind = ANIM_INPUT_STICK;
  int walking = s == SC_WALK || s == SC_TURN || (s == SC_STOPSTART && fmodf(t, 2.0f * STOPSTART_HALF) < STOPSTART_HALF);
  if (!walking) return 0;
  float a = s == SC_TURN ? TURN_RATE * t : 0.0f;
  in->stick_x = WALK_STICK * sinf(a), in->stick_z = WALK_STICK * cosf(a);
  return 1;
}

/* Root-relative position and velocity of bone b in database frame f. */
static void local_of(const anim_database_t *db, int f, int b, vec3 *out_p, vec3 *out_v) {
  size_t base = (size_t)f * (size_t)db->nbones;
  quat r = db->global_rotations[base];
  *out_p = quat_inv_mul_vec3(r, vec3_sub(db->global_positions[base + (size_t)b], db->global_positions[base]));
  *out_v = quat_inv_mul_vec3(r, db->global_velocities[base + (size_t)b]);
}

static void pose_jump(const anim_database_t *db, int src, int dst, float *out_p, float *out_v) {
  *out_p = *out_v = 0.0f;
  for (int b = 1; b < db->nbones; b++) {
    vec3 ps, vs, pd, vd;
    local_of(db, src, b, &ps, &vs);
    local_of(db, dst, b, &pd, &vd);
    float dp = vec3_length(vec3_sub(ps, pd)), dv = vec3_length(vec3_sub(vs, vd));
    if (dp > *out_p) *out_p = dp;
    if (dv > *out_v) *out_v = dv;
  }
}

static const char *range_name(const anim_database_t *db, int frame, int *out_offset, int *out_left) {
  int r = anim_database_range_of(db, frame);
  *out_offset = frame - db->ranges[r].start, *out_left = db->ranges[r].stop - 1 - frame;
  return db->ranges[r].name;
}

static int run(const dataset_t *set, const anim_controller_params_t *params, scenario_t s, float seconds, int trace,
               result_t *out) {
  const anim_database_t *db = &set->db;
  memset(out, 0, sizeof *out);
  anim_controller_t c;
  anim_quality_meter_t meter;
  int rc = anim_controller_init(&c, db, set->index, params, vec3_zero(), 0.0f, 0);
  if (rc) return rc;
  if (anim_quality_meter_init(&meter, db)) return anim_controller_free(&c), -1;
  int nb = db->nbones;
  vec3 *prev = calloc((size_t)nb, sizeof *prev), *prev_velocity = calloc((size_t)nb, sizeof *prev_velocity);
  const float dt = 1.0f / 60.0f;
  int ticks = (int)(seconds * 60.0f + 0.5f), was_walking = -1, start_pending = 0, half_pending = 0, stop_pending = 0;
  float walk_speed = WALK_STICK * c.params.forward_speed, command_time = 0.0f;
  long segment_start = 0;
  for (int t = 0; t < ticks && !rc; t++) {
    float time = (float)t * dt;
    anim_controller_input_t in;
    int walking = scenario_input(s, time, &in);
    if ((rc = anim_controller_set_input(&c, &in))) break;
    float query[ANIM_MAX_FEATURE_DIMS];
    anim_search_query_t search;
    int src = c.frame;
    int searching = anim_controller_tick_begin(&c, dt, query, &search);
    if (searching < 0) {
      rc = searching;
      break;
    }
    anim_search_hit_t best;
    int count = 0, found = searching && anim_search_run(set->index, &search, &best, &count, NULL) == 0 && count > 0;
    if ((rc = anim_controller_tick_end(&c, found ? &best : NULL))) break;
    if (walking != was_walking) {
      if (walking)
        anim_quality_meter_command(&meter, c.sim.desired_velocity), out->starts++, start_pending = half_pending = 1;
      else if (was_walking == 1)
        out->stops++, stop_pending = 1, start_pending = half_pending = 0;
      if (!walking) anim_quality_meter_command(&meter, vec3_zero());
      command_time = time, was_walking = walking;
    }
    out->searches += searching;
    anim_controller_global_pose(&c);
    if (c.transitioned) {
      int reasons = c.search_reasons;
      out->transitions++;
      if (reasons & ANIM_CONTROLLER_SEARCH_RANGE_END)
        out->by_end++;
      else if (reasons & ANIM_CONTROLLER_SEARCH_REPLAN)
        out->by_replan++;
      else
        out->by_periodic++;
      float jp, jv;
      pose_jump(db, src, best.frame, &jp, &jv);
      out->pose_jump_sum += jp;
      if (jp > out->pose_jump_max) out->pose_jump_max = jp;
      if (jv > out->vel_jump_max) out->vel_jump_max = jv;
      if (trace) {
        int so, sl, doff, dl;
        const char *sn = range_name(db, src, &so, &sl), *dn = range_name(db, best.frame, &doff, &dl);
        float own = search.current_frame >= 0
                        ? anim_search_distance(query, db->features.values + (size_t)src * (size_t)db->features.cols,
                                               db->features.cols)
                        : NAN;
        printf("    %6.2f s %s%s%s %5d %-24.24s +%-4d (%3d left) -> %5d %-24.24s +%-4d (%3d left) cost %.4f, "
               "current %.4f, jump %.1f cm, played %.2f s\n",
               (double)time, reasons & ANIM_CONTROLLER_SEARCH_RANGE_END ? "E" : "-",
               reasons & ANIM_CONTROLLER_SEARCH_REPLAN ? "R" : "-",
               reasons & ANIM_CONTROLLER_SEARCH_PERIODIC ? "P" : "-", src, sn, so, sl, best.frame, dn, doff, dl,
               (double)best.cost, (double)own, 100.0 * jp, (double)((float)(t - segment_start) * dt));
      }
      segment_start = t;
    }
    for (int b = 0; b < nb && t > 1; b++) {
      vec3 v = vec3_scale(vec3_sub(c.global_positions[b], prev[b]), 1.0f / dt);
      float jump = vec3_length(vec3_sub(v, prev_velocity[b]));
      if (t > 2 && c.transitioned && jump > out->shown_jump_max) out->shown_jump_max = jump;
      prev_velocity[b] = v;
    }
    vec3 rv = c.pose_velocities[0];
    float root_speed = sqrtf(rv.x * rv.x + rv.z * rv.z);
    if (start_pending && vec3_dot(rv, c.sim.desired_velocity) >= 0.9f * walk_speed * walk_speed) {
      float took = time + dt - command_time;
      out->started++, out->start_sum += took, start_pending = 0;
      if (took > out->start_max) out->start_max = took;
    }
    if (half_pending && vec3_dot(rv, c.sim.desired_velocity) >= 0.5f * walk_speed * walk_speed)
      out->started_half++, out->start_half_sum += time + dt - command_time, half_pending = 0;
    if (stop_pending && root_speed < 0.1f * walk_speed) {
      float took = time + dt - command_time;
      out->stopped++, out->stop_sum += took, stop_pending = 0;
      if (took > out->stop_max) out->stop_max = took;
    }
    if (!walking && t > 1 && (s == SC_STAND || time - command_time > 1.5f)) {
      /* Standing (after 1.5 s to stop when it walked): drift and the body's motion about the root. */
      vec3 d = vec3_sub(c.global_positions[0], prev[0]);
      out->stand_drift += sqrtf(d.x * d.x + d.z * d.z);
      float sum = 0.0f;
      for (int b = 1; b < nb; b++) sum += vec3_length(vec3_sub(vec3_sub(c.global_positions[b], prev[b]), d)) / dt;
      out->stand_body_speed += sum / (float)(nb - 1);
      out->stand_ticks++;
    }
    anim_quality_meter_frame(&meter, c.global_positions, anim_quality_streamed_contacts(&c),
                             (long)anim_database_contacts(c.db, c.frame), dt);
    memcpy(prev, c.global_positions, (size_t)nb * sizeof *prev);
  }
  anim_quality_meter_result(&meter, &out->q);
  out->seconds = seconds;
  if (out->stand_ticks) out->stand_body_speed /= (float)out->stand_ticks;
  anim_quality_meter_free(&meter);
  anim_controller_free(&c);
  free(prev), free(prev_velocity);
  return rc;
}

typedef struct {
  uint64_t transitions;
} counter_t;

static void count_transitions(void *ctx, const anim_controller_t *c, uint32_t contacts) {
  ((counter_t *)ctx)->transitions += (uint64_t)c->transitioned;
}

/* --set name=value,...: the controller parameters a run may change. */
static int set_params(anim_controller_params_t *p, const char *list) {
  char buf[512];
  snprintf(buf, sizeof buf, "%s", list);
  for (char *save = NULL, *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(item, '=');
    if (!eq) return -1;
    *eq = 0;
    double v = atof(eq + 1);
    if (!strcmp(item, "transition_cost"))
      p->transition_cost = (float)v;
    else if (!strcmp(item, "search_interval"))
      p->search_interval = (int)v;
    else if (!strcmp(item, "ignore_range_end"))
      p->ignore_range_end = (int)v;
    else if (!strcmp(item, "ignore_surrounding"))
      p->ignore_surrounding = (int)v;
    else if (!strcmp(item, "replan_threshold"))
      p->replan_threshold = (float)v;
    else if (!strcmp(item, "inertialize_halflife"))
      p->inertialize_halflife = (float)v;
    else if (!strcmp(item, "warp_rate")) /* animation warping (warp.h): 0 turns one off */
      p->warp.rate = (int)v;
    else if (!strcmp(item, "warp_stand"))
      p->warp.stand = (int)v;
    else if (!strcmp(item, "warp_orient"))
      p->warp.orient = (int)v;
    else if (!strcmp(item, "warp_stride"))
      p->warp.stride = (int)v;
    else if (!strcmp(item, "warp_steer"))
      p->warp.steer = (int)v;
    else
      return -1;
  }
  return anim_controller_params_validate(p);
}

static void print_header(void) {
  printf("%-17s %-9s %5s %5s %4s %4s %4s %5s %5s %6s %5s %5s %6s %6s %5s %16s %11s %6s %6s\n", "dataset", "scenario",
         "trans", "/s", "end", "inp", "per", "seg s", "jump", "cm avg", "dv", "shown", "slp95", "slmax", "pop",
         "start s", "stop s", "drift", "body");
}

static void print_row(const char *dataset, scenario_t s, const result_t *r) {
  char start[32] = "-", stop[32] = "-";
  if (r->starts)
    snprintf(start, sizeof start, "%.2f %.2f/%.2f",
             r->started_half ? (double)(r->start_half_sum / (float)r->started_half) : -1.0,
             r->started ? (double)(r->start_sum / (float)r->started) : -1.0, (double)r->start_max);
  if (r->stops)
    snprintf(stop, sizeof stop, "%.2f/%.2f", r->stopped ? (double)(r->stop_sum / (float)r->stopped) : -1.0,
             (double)r->stop_max);
  if (r->started < r->starts)
    snprintf(start + strlen(start), sizeof start - strlen(start), "!%d", r->starts - r->started);
  if (r->stopped < r->stops) snprintf(stop + strlen(stop), sizeof stop - strlen(stop), "!%d", r->stops - r->stopped);
  printf("%-17s %-9s %5d %5.2f %4d %4d %4d %5.2f %5.1f %6.1f %5.2f %5.2f %6.3f %6.3f %5.2f %16s %11s %6.3f %6.3f\n",
         dataset, scenario_names[s], r->transitions, (double)((float)r->transitions / r->seconds), r->by_end,
         r->by_replan, r->by_periodic, (double)(r->seconds / (float)(r->transitions + 1)),
         100.0 * (double)r->pose_jump_max,
         r->transitions ? 100.0 * (double)(r->pose_jump_sum / (float)r->transitions) : 0.0, (double)r->vel_jump_max,
         (double)r->shown_jump_max, (double)r->q.slide_p95, (double)r->q.slide_max, (double)r->q.pop_ratio, start, stop,
         (double)r->stand_drift, (double)r->stand_body_speed);
}

/* --response 1 (2: only these): the responsiveness figures of
 * tests/test_foot_quality.c (the tour with seed 1, the reversals with seeds
 * 1 and 2, 60 s each; mean time to 90% of a commanded speed) with the
 * transitions they made, on every mocap dataset built. */
static int print_responses(const dataset_t *sets, const anim_controller_params_t *params) {
  printf("\nresponse (tests/test_foot_quality.c's programs, 60 s): mean s to 90%% of a commanded speed "
         "(reached/commands), "
         "transitions a second, pop\n");
  for (int d = 1; d < TR_DATASETS; d++) {
    if (!sets[d].ok) continue;
    printf("%-17s", sets[d].name);
    for (int k = 0; k < ANIM_PROGRAM_COUNT; k++) {
      if (k == ANIM_PROGRAM_WANDER) continue;
      float sum = 0.0f, pop = 0.0f;
      int reached = 0, commands = 0;
      uint64_t transitions = 0;
      for (uint32_t seed = 1; seed <= (k == ANIM_PROGRAM_TOUR ? 1u : 2u); seed++) {
        anim_quality_t q;
        counter_t counter = {0};
        int rc = anim_quality_run_controller(&sets[d].db, sets[d].index, params, (anim_program_kind_t)k, seed, 60.0f,
                                             &q, count_transitions, &counter);
        if (rc) return rc;
        sum += q.response_mean * (float)q.reached, reached += q.reached, commands += q.commands;
        transitions += counter.transitions;
        if (q.pop_ratio > pop) pop = q.pop_ratio;
      }
      printf("  %s %.2f s (%d/%d) %.2f/s pop %.2f", anim_input_program_name((anim_program_kind_t)k),
             reached ? (double)(sum / (float)reached) : -1.0, reached, commands,
             (double)transitions / (k == ANIM_PROGRAM_TOUR ? 60.0 : 120.0), (double)pop);
    }
    printf("\n");
  }
  return 0;
}

/* Every dataset built and scenario, one row each. */
static int print_scenarios(const dataset_t *sets, const anim_controller_params_t *params, float seconds,
                           const char *trace) {
  printf("%.0f s a run; transition_cost %g, search_interval %d, ignore_range_end %d, replan_threshold %g\n",
         (double)seconds, (double)params->transition_cost, params->search_interval, params->ignore_range_end,
         (double)params->replan_threshold);
  printf("trans: transitions (end: forced by the range ending, inp: input change, per: periodic search); seg s: mean\n"
         "played segment; jump: largest source/destination pose jump (cm, max then mean), dv its velocity (m/s);\n"
         "shown: largest displayed velocity change at a transition (m/s); slide p95/max (m/s); pop: speed/source max;\n"
         "start: s to 50%% of the walk speed (mean), to 90%% (mean/worst, !n never); stop: s to below 10%% of it;\n"
         "drift: m the root moves while standing; body: mean bone speed about the root while standing (m/s)\n");
  print_header();
  int rc = 0;
  for (int d = 0; d < TR_DATASETS && !rc; d++) {
    if (!sets[d].ok) continue;
    for (int s = 0; s < SC_COUNT && !rc; s++) {
      char label[96];
      snprintf(label, sizeof label, "%s/%s", sets[d].name, scenario_names[s]);
      int tracing = trace && !strcmp(trace, label);
      result_t r;
      if ((rc = run(&sets[d], params, (scenario_t)s, seconds, tracing, &r)))
        fprintf(stderr, "animbench transitions: %s failed (%d)\n", label, rc);
      else
        print_row(sets[d].name, (scenario_t)s, &r);
    }
  }
  return rc;
}

/* One program run from a given start frame and facing (as the foot-quality
 * tests average them): the commands' mean response (s) summed, how many
 * reached, and the transitions, added to the totals. */
static int program_run(const dataset_t *set, const anim_controller_params_t *params, anim_program_kind_t kind,
                       uint32_t seed, int start_frame, float facing, float seconds, float *out_sum, int *out_reached,
                       int *out_commands, uint64_t *out_transitions) {
  anim_quality_t q;
  counter_t counter = {0};
  int rc = anim_quality_run_controller_from(&set->db, set->index, params, kind, seed, start_frame, facing, seconds, &q,
                                            count_transitions, &counter);
  if (rc) return rc;
  *out_sum += q.response_mean * (float)q.reached, *out_reached += q.reached, *out_commands += q.commands;
  *out_transitions += counter.transitions;
  return 0;
}

/* A start from rest: standing 3 s from start_frame (at rest, a still pose
 * held or an idle looping), then the stick at 0.85 toward `direction`
 * (radians, camera azimuth 0) for 3 s, then let go for 3 s. The times to
 * 50% and 90% of the walk speed along the stick and to below 10% after
 * letting go go to out_times[0..2] (s; a time not reached counts as 3 s). */
static int rest_start_run(const dataset_t *set, const anim_controller_params_t *params, int start_frame,
                          float direction, double *out_times) {
  anim_controller_t c;
  int rc = anim_controller_init(&c, &set->db, set->index, params, vec3_zero(), 0.0f, start_frame);
  if (rc) return rc;
  const float dt = 1.0f / 60.0f, walk = WALK_STICK * c.params.forward_speed;
  float half = 3.0f, full = 3.0f, stop = 3.0f;
  for (int t = 0; t < 9 * 60 && !rc; t++) {
    float time = (float)t * dt;
    anim_controller_input_t in;
    memset(&in, 0, sizeof in);
    in.kind = ANIM_INPUT_STICK;
    int walking = time >= 3.0f && time < 6.0f;
    if (walking) in.stick_x = WALK_STICK * sinf(direction), in.stick_z = WALK_STICK * cosf(direction);
    if (!(rc = anim_controller_set_input(&c, &in))) rc = anim_controller_tick(&c, dt);
    vec3 v = c.pose_velocities[0], along = vec3_make(sinf(direction), 0.0f, cosf(direction));
    float since = time + dt - (walking ? 3.0f : 6.0f), speed = sqrtf(v.x * v.x + v.z * v.z);
    if (walking && vec3_dot(v, along) >= 0.5f * walk && since < half) half = since;
    if (walking && vec3_dot(v, along) >= 0.9f * walk && since < full) full = since;
    if (time >= 6.0f && speed < 0.1f * walk && since < stop) stop = since;
  }
  out_times[0] = half, out_times[1] = full, out_times[2] = stop;
  anim_controller_free(&c);
  return rc;
}

/* tests/test_controller.c's script from start_frame facing `facing`: walk
 * (stick 0.85) 3 s, turn (stick right) 3 s, run (3.5 m/s) 3 s, stop 3 s.
 * Returns the seconds from the run command until the root's speed is
 * within 10% of 3.5 m/s (as the test measures it), 6 when never. */
static float script_run(const dataset_t *set, const anim_controller_params_t *params, int start_frame, float facing,
                        uint64_t *out_transitions) {
  anim_controller_t c;
  if (anim_controller_init(&c, &set->db, set->index, params, vec3_zero(), facing, start_frame)) return -1.0f;
  const float dt = 1.0f / 60.0f;
  float response = 6.0f;
  for (int t = 0; t < 12 * 60; t++) {
    anim_controller_input_t in;
    memset(&in, 0, sizeof in);
    float time = (float)t * dt;
    in.kind = ANIM_INPUT_STICK, in.camera_azimuth = facing;
    if (time < 3.0f) in.stick_z = 0.85f;
    else if (time < 6.0f) in.stick_x = 0.85f;
    else if (time < 9.0f) {
      float a = facing + atan2f(1.0f, 0.0f);
      in.kind = ANIM_INPUT_VELOCITY, in.facing = a, in.velocity = vec3_make(3.5f * sinf(a), 0.0f, 3.5f * cosf(a));
    }
    if (anim_controller_set_input(&c, &in) || anim_controller_tick(&c, dt)) break;
    vec3 v = c.pose_velocities[0];
    float speed = sqrtf(v.x * v.x + v.z * v.z);
    if (time >= 6.0f && response > 5.9f && fabsf(speed - 3.5f) < 0.35f) response = time - 6.0f;
  }
  *out_transitions += c.transitions;
  anim_controller_free(&c);
  return response;
}

/* --spread N: the same programs N times each from start frames spread over
 * the database, turned 0.7 rad more each run (the reversals with seeds
 * 1..N): a change to the controller sends a character down another path
 * within seconds, so the tests' few commands move by chance; the mean over
 * many, with its standard error, says whether a change is more than that. */
static int print_spread(const dataset_t *sets, const anim_controller_params_t *params, int runs) {
  printf("\nresponse over %d runs of 60 s each: mean s to 90%% of a commanded speed +- standard error over runs "
         "(reached/commands), transitions a second\n",
         runs);
  for (int d = 0; d < TR_DATASETS; d++) {
    if (!sets[d].ok) continue;
    printf("%-17s", sets[d].name);
    for (int k = 0; k < ANIM_PROGRAM_COUNT; k++) {
      if (k == ANIM_PROGRAM_WANDER) continue;
      double mean_sum = 0.0, mean_sq = 0.0;
      int n = 0, reached = 0, commands = 0;
      uint64_t transitions = 0;
      for (int r = 0; r < runs; r++) {
        float sum = 0.0f;
        int got = 0;
        int start = (int)(((long)r * 7919) % sets[d].db.nframes);
        int rc = program_run(&sets[d], params, (anim_program_kind_t)k, 1u + (uint32_t)r, start, 0.7f * (float)r, 60.0f,
                             &sum, &got, &commands, &transitions);
        if (rc) return rc;
        reached += got;
        if (got) {
          double m = (double)sum / got;
          mean_sum += m, mean_sq += m * m, n++;
        }
      }
      double mean = n ? mean_sum / n : -1.0, var = n > 1 ? (mean_sq - n * mean * mean) / (n - 1) : 0.0;
      printf("  %s %.3f +- %.3f s (%d/%d) %.2f/s", anim_input_program_name((anim_program_kind_t)k), mean,
             var > 0 ? sqrt(var / n) : 0.0, reached, commands, (double)transitions / (60.0 * runs));
    }
    double sum[3] = {0}, sq[3] = {0};
    for (int r = 0; r < runs; r++) {
      double times[3];
      int rc = rest_start_run(&sets[d], params, (int)(((long)r * 7919) % sets[d].db.nframes), 0.7f * (float)r, times);
      if (rc) return rc;
      for (int i = 0; i < 3; i++) sum[i] += times[i], sq[i] += times[i] * times[i];
    }
    printf("  from rest:");
    for (int i = 0; i < 3; i++) {
      double m = sum[i] / runs, var = runs > 1 ? (sq[i] - runs * m * m) / (runs - 1) : 0.0;
      printf(" %s %.3f +- %.3f s", i == 0 ? "50%" : i == 1 ? "90%" : "stop", m, var > 0 ? sqrt(var / runs) : 0.0);
    }
    double ssum = 0.0, ssq = 0.0;
    uint64_t stransitions = 0;
    for (int r = 0; r < runs; r++) {
      double x = script_run(&sets[d], params, (int)(((long)r * 7919) % sets[d].db.nframes), 0.7f * (float)r,
                            &stransitions);
      if (x < 0) return -1;
      ssum += x, ssq += x * x;
    }
    double smean = ssum / runs, svar = runs > 1 ? (ssq - runs * smean * smean) / (runs - 1) : 0.0;
    printf("  script run %.3f +- %.3f s %.2f/s", smean, svar > 0 ? sqrt(svar / runs) : 0.0,
           (double)stransitions / (12.0 * runs));
    printf("\n");
  }
  return 0;
}

int bench_transitions(int argc, char **argv);
int bench_transitions(int argc, char **argv) {
  const char *shared = "../shared", *set = NULL, *trace = NULL, *only = NULL;
  float seconds = 10.0f;
  int response = 0, only_response = 0, spread = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!v) return fprintf(stderr, "animbench transitions: %s needs a value\n", a), 2;
    if (!strcmp(a, "--shared"))
      shared = v, i++;
    else if (!strcmp(a, "--seconds"))
      seconds = (float)atof(v), i++;
    else if (!strcmp(a, "--set"))
      set = v, i++;
    else if (!strcmp(a, "--trace"))
      trace = v, i++;
    else if (!strcmp(a, "--datasets"))
      only = v, i++;
    else if (!strcmp(a, "--stick"))
      WALK_STICK = (float)atof(v), i++;
    else if (!strcmp(a, "--spread"))
      spread = atoi(v), i++;
    else if (!strcmp(a, "--response"))
      response = atoi(v), only_response = response == 2, i++;
    else
      return fprintf(stderr, "animbench transitions: unknown option %s\n", a), 2;
  }
  anim_controller_params_t params;
  anim_controller_params_default(&params);
  if (set && set_params(&params, set)) return fprintf(stderr, "animbench transitions: bad --set %s\n", set), 2;
  if (!(seconds > 0)) return fprintf(stderr, "animbench transitions: --seconds > 0\n"), 2;
  dataset_t sets[TR_DATASETS];
  bench_datasets_load(sets, shared, only, "animbench transitions");
  int rc = only_response ? 0 : print_scenarios(sets, &params, seconds, trace);
  if (!rc && response) rc = print_responses(sets, &params);
  if (!rc && spread > 0) rc = print_spread(sets, &params, spread);
  bench_datasets_free(sets);
  return rc ? 1 : 0;
}
