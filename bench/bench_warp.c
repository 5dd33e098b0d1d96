/*
 * bench_warp.c: `animbench warp`: what animation warping (issue 34) is
 * for, per dataset (the default database and every shared mocap set, as
 * `animdb build --mirror` builds them), in process, one thread:
 *
 *  - speed: asked speeds from 0.5 m/s to the data's fastest (a second's
 *    root travel, tests/support/warp_measure.h) in 0.1 m/s steps, each for
 *    --seconds straight ahead: mean and worst absolute error of the
 *    achieved speed over the second half (%), and the transitions a second
 *    there (mean, and the worst speed's);
 *  - direction: 1.2 m/s (or the data's fastest, if slower) at 45 and 90
 *    degrees either side while facing forward: mean and worst error of
 *    the direction travelled (degrees);
 *  - stand: walking at 1.2 m/s, then asked to stop: seconds until the
 *    root last moved faster than 0.1 m/s, and its drift over 10 s after
 *    that (m);
 *  - slide p95/worst (m/s) and pops (the worst bone speed over its
 *    source's fastest) over every run above and over the three programs of
 *    issue 16 (tour, wander, reversals; --program-seconds each);
 *  - cost: CPU time per character tick, --cost-characters wandering,
 *    beside the same characters with every warp off in the same run.
 *
 * --svg PREFIX: filmstrips on Bandai Namco (bench/feet_strip.h): PREFIX
 * speed.svg (1.8 m/s asked, between its walk and its run), PREFIX
 * sideways.svg (1.2 m/s to the right while facing forward) and PREFIX
 * stop.svg (walking, then asked to stand).
 *
 * --off: every warp off (the controller as it was before warping), to
 * compare two columns in one build.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench_datasets.h"
#include "character/controller.h"
#include "feet_strip.h"
#include "input_program.h"
#include "quality_run.h"
#include "search/search.h"
#include "warp_measure.h"
#include "wander_cost.h"

#define WB_DATASETS BENCH_DATASETS

typedef bench_dataset_t dataset_t;

typedef struct {
  float fastest;
  float speed_err_mean, speed_err_max, trans_mean, trans_max, trans_max_speed;
  float dir_err_mean, dir_err_max;
  float rest_time, drift;
  float slide_p95, slide_max, pop;     /* the warp runs */
  float prog_p95, prog_max, prog_pop;  /* the programs */
  double cost_us, cost_off_us;
} row_t;

/* --set rate=0,stand=0,orient=0,stride=0,steer=0,rate_min=X,rate_max=X,orient_max=X,stride_min=X,
 * stride_max=X,steer_max=X */
static const char *warp_set;

static void params_for(anim_controller_params_t *p, int off) {
  anim_controller_params_default(p);
  char buf[256];
  snprintf(buf, sizeof buf, "%s", warp_set ? warp_set : "");
  for (char *save = NULL, *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(item, '=');
    if (!eq) continue;
    *eq = 0;
    float v = (float)atof(eq + 1);
    if (!strcmp(item, "rate")) p->warp.rate = (int)v;
    else if (!strcmp(item, "stand")) p->warp.stand = (int)v;
    else if (!strcmp(item, "orient")) p->warp.orient = (int)v;
    else if (!strcmp(item, "rate_min")) p->warp.rate_min = v;
    else if (!strcmp(item, "rate_max")) p->warp.rate_max = v;
    else if (!strcmp(item, "orient_max")) p->warp.orient_max = v;
    else if (!strcmp(item, "stride")) p->warp.stride = (int)v;
    else if (!strcmp(item, "stride_min")) p->warp.stride_min = v;
    else if (!strcmp(item, "stride_max")) p->warp.stride_max = v;
    else if (!strcmp(item, "steer")) p->warp.steer = (int)v;
    else if (!strcmp(item, "steer_max")) p->warp.steer_max = v;
  }
  if (off) p->warp.rate = p->warp.orient = p->warp.stand = p->warp.stride = p->warp.steer = 0;
}

static void take_quality(row_t *row, const anim_quality_t *q) {
  if (q->slide_p95 > row->slide_p95) row->slide_p95 = q->slide_p95;
  if (q->slide_max > row->slide_max) row->slide_max = q->slide_max;
  if (q->pop_ratio > row->pop) row->pop = q->pop_ratio;
}

/* CPU seconds per character tick of n characters wandering. */
static double tick_cost(const dataset_t *set, int n, int off) {
  anim_controller_params_t p;
  params_for(&p, off);
  return bench_wander_tick_cost(&set->db, set->index, &p, n);
}

static int measure(const dataset_t *set, int off, float seconds, float program_seconds, int cost_characters,
                   int verbose, row_t *row) {
  memset(row, 0, sizeof *row);
  anim_controller_params_t p;
  params_for(&p, off);
  const anim_database_t *db = &set->db;
  row->fastest = anim_warp_data_fastest(db);
  int n = 0, rc = 0;
  if (verbose) {
    anim_warp_t w;
    if (anim_warp_init(&w, db, &p.warp) == 0)
      printf("    %-13s slowest gait %.2f m/s, spine %d bones\n", set->name, (double)w.slowest_gait, w.nspine);
    anim_warp_free(&w);
  }
  double err_sum = 0.0, trans_sum = 0.0;
  for (float v = 0.5f; v <= row->fastest + 1e-3f && !rc; v += 0.1f, n++) {
    anim_warp_result_t r;
    if ((rc = anim_warp_measure_speed(db, set->index, &p, v, seconds, &r, NULL, NULL))) break;
    float err = 100.0f * fabsf(r.achieved_speed - v) / v;
    err_sum += err, trans_sum += r.transitions_per_s;
    if (err > row->speed_err_max) row->speed_err_max = err;
    if (r.transitions_per_s > row->trans_max) row->trans_max = r.transitions_per_s, row->trans_max_speed = v;
    take_quality(row, &r.q);
    if (verbose)
      printf("    %-13s %.1f m/s: achieved %.3f (%+.1f%%), %.2f transitions/s (%d forced), rate %.2f, pop %.2f (%s, tick %ld), "
             "slide %.3f/%.3f\n",
             set->name, (double)v, (double)r.achieved_speed, 100.0 * (double)((r.achieved_speed - v) / v),
             (double)r.transitions_per_s, r.forced, (double)r.rate_mean, (double)r.q.pop_ratio,
             r.q.pop_bone >= 0 ? db->skeleton.names[r.q.pop_bone] : "-", r.q.pop_frame, (double)r.q.slide_p95,
             (double)r.q.slide_max);
  }
  if (rc) return rc;
  row->speed_err_mean = n ? (float)(err_sum / n) : 0.0f;
  row->trans_mean = n ? (float)(trans_sum / n) : 0.0f;
  float walk = row->fastest < 1.2f ? row->fastest : 1.2f;
  const float angles[] = {0.25f * (float)M_PI, 0.5f * (float)M_PI, -0.25f * (float)M_PI, -0.5f * (float)M_PI};
  double dir_sum = 0.0;
  for (int a = 0; a < 4 && !rc; a++) {
    anim_warp_result_t r;
    if ((rc = anim_warp_measure_direction(db, set->index, &p, angles[a], walk, seconds, &r, NULL, NULL))) break;
    float deg = r.direction_error * 180.0f / (float)M_PI;
    dir_sum += deg;
    if (deg > row->dir_err_max) row->dir_err_max = deg;
    take_quality(row, &r.q);
    if (verbose)
      printf("    %-13s %+.0f deg: error %.1f deg, %.3f m/s, pop %.2f\n", set->name,
             (double)(angles[a] * 180.0f / (float)M_PI), (double)deg, (double)r.achieved_speed, (double)r.q.pop_ratio);
  }
  row->dir_err_mean = (float)(dir_sum / 4.0);
  anim_warp_result_t r;
  if (!rc && !(rc = anim_warp_measure_stand(db, set->index, &p, walk, &r, NULL, NULL))) {
    row->rest_time = r.rest_time, row->drift = r.drift;
    take_quality(row, &r.q);
  }
  for (int k = 0; k < ANIM_PROGRAM_COUNT && !rc; k++) {
    anim_quality_t q;
    if ((rc = anim_quality_run_controller(db, set->index, &p, (anim_program_kind_t)k, 1u, program_seconds, &q, NULL,
                                          NULL)))
      break;
    if (verbose)
      printf("    %-13s %s: pop %.2f (%s, tick %ld), slide %.3f/%.3f\n", set->name,
             anim_input_program_name((anim_program_kind_t)k), (double)q.pop_ratio,
             q.pop_bone >= 0 ? db->skeleton.names[q.pop_bone] : "-", q.pop_frame, (double)q.slide_p95,
             (double)q.slide_max);
    if (q.slide_p95 > row->prog_p95) row->prog_p95 = q.slide_p95;
    if (q.slide_max > row->prog_max) row->prog_max = q.slide_max;
    if (q.pop_ratio > row->prog_pop) row->prog_pop = q.pop_ratio;
  }
  if (!rc && cost_characters > 0) {
    /* Interleaved repeats, the best of each: the machine is shared. */
    row->cost_us = row->cost_off_us = 1e9;
    for (int k = 0; k < 3; k++) {
      double a = tick_cost(set, cost_characters, 1) * 1e6, b = tick_cost(set, cost_characters, off) * 1e6;
      if (a < row->cost_off_us) row->cost_off_us = a;
      if (b < row->cost_us) row->cost_us = b;
    }
  }
  return rc;
}

/* The three filmstrips on set (Bandai Namco). */
static int write_strips(const dataset_t *set, int off, const char *prefix) {
  anim_controller_params_t p;
  params_for(&p, off);
  const float dt = 1.0f / 60.0f;
  for (int k = 0; k < 3; k++) {
    feet_strip_t strip;
    feet_strip_init(&strip, &set->db, dt);
    anim_warp_result_t r;
    char path[1024], title[512];
    int rc;
    if (k == 0) {
      rc = anim_warp_measure_speed(&set->db, set->index, &p, 1.8f, 8.0f, &r, feet_strip_record, &strip);
      snprintf(title, sizeof title,
               "Bandai Namco asked 1.8 m/s (between its walk and its run), warps %s: %.2f m/s achieved over the last "
               "4 s at rate %.2f, %.2f transitions/s; slide p95 %.3f m/s, pop %.2f",
               off ? "off" : "on", (double)r.achieved_speed, (double)r.rate_mean, (double)r.transitions_per_s,
               (double)r.q.slide_p95, (double)r.q.pop_ratio);
    } else if (k == 1) {
      rc = anim_warp_measure_direction(&set->db, set->index, &p, 0.5f * (float)M_PI, 1.2f, 8.0f, &r, feet_strip_record,
                                       &strip);
      snprintf(title, sizeof title,
               "Bandai Namco asked 1.2 m/s to the right (+X) while facing +Z, warps %s: travelled %.1f deg off, "
               "%.2f m/s; slide p95 %.3f m/s, pop %.2f",
               off ? "off" : "on", (double)(r.direction_error * 180.0f / (float)M_PI), (double)r.achieved_speed,
               (double)r.q.slide_p95, (double)r.q.pop_ratio);
    } else {
      rc = anim_warp_measure_stand(&set->db, set->index, &p, 1.2f, &r, feet_strip_record, &strip);
      snprintf(title, sizeof title,
               "Bandai Namco walking 1.2 m/s for 4 s, then asked to stand 12 s, warps %s: at rest %.2f s after the "
               "stop, drift %.3f m in 10 s",
               off ? "off" : "on", (double)r.rest_time, (double)r.drift);
    }
    snprintf(path, sizeof path, "%s%s.svg", prefix, k == 0 ? "speed" : k == 1 ? "sideways" : "stop");
    if (!rc) rc = feet_strip_write(&strip, path, 4.0f, title);
    feet_strip_free(&strip);
    if (rc) return fprintf(stderr, "animbench warp: could not write %s\n", path), 1;
    printf("filmstrip: %s\n", path);
  }
  return 0;
}

int bench_warp(int argc, char **argv);
int bench_warp(int argc, char **argv) {
  const char *shared = "../shared", *only = NULL, *svg = NULL;
  float seconds = 8.0f, program_seconds = 30.0f;
  int off = 0, verbose = 0, cost_characters = 100;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--off")) off = 1;
    else if (!strcmp(a, "--verbose")) verbose = 1;
    else if (!v) return fprintf(stderr, "animbench warp: %s needs a value\n", a), 2;
    else if (!strcmp(a, "--shared")) shared = v, i++;
    else if (!strcmp(a, "--set")) warp_set = v, i++;
    else if (!strcmp(a, "--svg")) svg = v, i++;
    else if (!strcmp(a, "--seconds")) seconds = (float)atof(v), i++;
    else if (!strcmp(a, "--program-seconds")) program_seconds = (float)atof(v), i++;
    else if (!strcmp(a, "--datasets")) only = v, i++;
    else if (!strcmp(a, "--cost-characters")) cost_characters = atoi(v), i++;
    else return fprintf(stderr, "animbench warp: unknown option %s\n", a), 2;
  }
  if (!(seconds > 1.0f) || !(program_seconds > 0.0f) || cost_characters < 0)
    return fprintf(stderr, "animbench warp: --seconds > 1, --program-seconds > 0, --cost-characters >= 0\n"), 2;
  dataset_t sets[WB_DATASETS];
  bench_datasets_load(sets, shared, only, "animbench warp");
  printf("warps %s; %.0f s a speed or direction run (second half measured), programs %.0f s, cost over %d "
         "characters\n",
         off ? "off" : "as by default", (double)seconds, (double)program_seconds, cost_characters);
  printf("speed err: |achieved - asked| / asked over 0.5 m/s..fastest step 0.1 (mean/worst %%); trans/s: at a steady\n"
         "speed (mean/worst, at m/s); dir: error of the direction travelled asked 45/90 deg off the facing (mean/worst\n"
         "deg); rest: s from a stop until the root last moved > 0.1 m/s, drift: m over the 10 s after 2 s; slide p95/\n"
         "worst m/s and pop over the warp runs | over tour, wander, reversals; cost: CPU us a character tick (warps off)\n");
  printf("%-13s %5s %13s %16s %11s %5s %6s %17s %17s %14s\n", "dataset", "fast", "speed err %", "trans/s (@m/s)",
         "dir deg", "rest", "drift", "warp runs", "programs", "cost us");
  int rc = 0;
  if (svg) rc = sets[1].ok ? write_strips(&sets[1], off, svg) : (fprintf(stderr, "animbench warp: no Bandai Namco\n"), 1);
  for (int d = 0; d < WB_DATASETS && !rc && !(svg && only); d++) {
    if (!sets[d].ok) continue;
    row_t row;
    if ((rc = measure(&sets[d], off, seconds, program_seconds, cost_characters, verbose, &row))) {
      fprintf(stderr, "animbench warp: %s failed (%d)\n", sets[d].name, rc);
      break;
    }
    printf("%-13s %5.2f %6.1f/%6.1f %5.2f/%4.2f (%3.1f) %5.1f/%5.1f %5.2f %6.2f %5.3f/%5.3f %5.2f %5.3f/%5.3f %5.2f "
           "%6.2f (%5.2f)\n",
           sets[d].name, (double)row.fastest, (double)row.speed_err_mean, (double)row.speed_err_max,
           (double)row.trans_mean, (double)row.trans_max, (double)row.trans_max_speed, (double)row.dir_err_mean,
           (double)row.dir_err_max, (double)row.rest_time, (double)row.drift, (double)row.slide_p95,
           (double)row.slide_max, (double)row.pop, (double)row.prog_p95, (double)row.prog_max, (double)row.prog_pop,
           row.cost_us, row.cost_off_us);
    fflush(stdout);
  }
  bench_datasets_free(sets);
  return rc ? 1 : 0;
}
