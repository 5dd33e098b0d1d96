/*
 * bench_lmm_quality.c: `animbench lmm-quality`: learned characters on
 * networks tools/lmm_train trained on a database, against motion-matching
 * characters on the same database, by the meter `animbench feet` uses
 * (tests/support/motion_quality.h) under the same input programs (tour,
 * wander, reversals; tests/support/input_program.h). Issue 37.
 *
 *   animbench lmm-quality [--db build/lmm-bandai/bandai.animdb] [--lmm DIR] [--seconds 60] [--seeds 2] [--json FILE]
 *                         [--projection-interval N] [--no-warp] [--no-learned-rate]
 *
 * DIR defaults to the database's NAME.lmm beside it (what the server
 * serves). The learned character is set up as the server sets one up
 * (server/actor_learned.c: anim_lmm_params_default, the feet locked on
 * the database's legs, anim_lmm_character_feet), ticked in process at 60
 * Hz (--projection-interval N: the projector every N frames instead of
 * the default 6, to see what the frequency does); the motion-matching one
 * (--no-warp: without animation warping's play rate, which learned
 * characters did not have before issue 37's play rate, to see what it adds
 * to the speeds; --no-learned-rate: the learned character without its play
 * rate, as before) is anim_quality_run_controller's (the
 * controller's defaults, the FAST index). Per program and kind, over the
 * seeds (the worst seed's p50/p95, as animbench feet merges them):
 *  - contact slide p50/p95/worst (m/s) of the toes flagged on;
 *  - pop: the worst bone speed against the source's fastest for that bone;
 *  - speed: the mean horizontal speed of the root (bone 0, the simulation
 *    bone) over the last second of every input held at least 1.5 s (the
 *    speed an input reaches), and over the whole run (wander's inputs last
 *    0.3-1 s: there the whole run's mean is the figure); the learned
 *    character's against motion matching's as a ratio.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench_util.h"
#include "character/controller.h"
#include "database/dbfile.h"
#include "input_program.h"
#include "learned/lmm.h"
#include "motion_quality.h"
#include "quality_run.h"
#include "search/search.h"

#define DT (1.0f / 60.0f)

int bench_lmm_quality(int argc, char **argv);

/* The speed an input reaches: the root's horizontal speed over the last
 * second of each input held at least 1.5 s, and over the whole run. */
typedef struct {
  vec3 last;
  int have_last;
  float held;                /* s since the input changed */
  double window[60];         /* the last second's speeds (a ring) */
  int nwindow, next;
  double settled_sum, run_sum;
  long settled_count, run_count;
} speed_meter_t;

static void speed_input_changed(speed_meter_t *m) {
  if (m->held >= 1.5f && m->nwindow == 60) {
    double s = 0.0;
    for (int i = 0; i < 60; i++) s += m->window[i];
    m->settled_sum += s / 60.0, m->settled_count++;
  }
  m->held = 0.0f, m->nwindow = m->next = 0;
}

static void speed_frame(speed_meter_t *m, vec3 root) {
  if (m->have_last) {
    float dx = root.x - m->last.x, dz = root.z - m->last.z;
    double v = sqrt((double)(dx * dx + dz * dz)) / DT;
    m->window[m->next++ % 60] = v; /* order does not matter: the mean of the ring */
    if (m->nwindow < 60) m->nwindow++;
    m->run_sum += v, m->run_count++;
  }
  m->last = root, m->have_last = 1;
  m->held += DT;
}

typedef struct {
  anim_quality_t q;
  double settled, run; /* m/s: mean settled speed, mean speed */
} result_t;

/* As animbench feet merges seeds: the worst seed's slide and pop; the speeds averaged. */
static void merge(result_t *into, const result_t *r, int first) {
  if (first) {
    *into = *r;
    return;
  }
  anim_quality_t *a = &into->q;
  const anim_quality_t *q = &r->q;
  if (q->slide_p95 > a->slide_p95) a->slide_p95 = q->slide_p95;
  if (q->slide_p50 > a->slide_p50) a->slide_p50 = q->slide_p50;
  if (q->slide_max > a->slide_max) a->slide_max = q->slide_max, a->slide_worst_foot = q->slide_worst_foot;
  if (q->pop_ratio > a->pop_ratio) a->pop_ratio = q->pop_ratio, a->pop_bone = q->pop_bone, a->pop_frame = q->pop_frame;
  a->reached += q->reached, a->commands += q->commands;
  a->slide_samples += q->slide_samples;
  into->settled += r->settled, into->run += r->run;
}

/* One character under a program: motion matching (lmm NULL) as
 * quality_run.c drives it, or learned as the server sets one up. */
static int run_one(const anim_database_t *db, const anim_search_index_t *index, const anim_lmm_networks_t *lmm,
                   int interval, int no_warp, int no_learned_rate, float *scratch, anim_program_kind_t kind, uint32_t seed, float seconds,
                   result_t *out) {
  anim_controller_t mm;
  anim_lmm_character_t *learned = NULL;
  int rc;
  if (lmm) {
    if (!(learned = calloc(1, sizeof *learned))) return -1;
    anim_controller_params_t params;
    anim_lmm_params_default(&params);
    if (interval > 0) params.search_interval = interval;
    if (no_learned_rate) params.warp.rate = 0;
    rc = anim_lmm_character_init(learned, lmm, &params, vec3_zero(), 0.0f, scratch);
    if (!rc) rc = anim_lmm_character_feet(learned, db);
  } else {
    anim_controller_params_t params;
    anim_controller_params_default(&params);
    if (no_warp) params.warp.rate = 0; /* the data's own speeds, as learned characters have */
    rc = anim_controller_init(&mm, db, index, &params, vec3_zero(), 0.0f, 0);
  }
  if (rc) return free(learned), rc;
  anim_quality_meter_t meter;
  if (anim_quality_meter_init(&meter, db)) return lmm ? (void)0 : anim_controller_free(&mm), free(learned), -1;
  speed_meter_t speed;
  memset(&speed, 0, sizeof speed);
  anim_input_program_t program;
  anim_input_program_init(&program, kind, seed);
  int ticks = (int)(seconds * 60.0f + 0.5f);
  for (int t = 0; t < ticks && !rc; t++) {
    anim_controller_input_t in;
    vec3 command;
    int commanded;
    if (anim_input_program_at(&program, (float)t * DT, &in, &command, &commanded)) {
      rc = lmm ? anim_lmm_set_input(learned, &in) : anim_controller_set_input(&mm, &in);
      if (commanded) anim_quality_meter_command(&meter, command);
      speed_input_changed(&speed);
    }
    if (rc) break;
    if (lmm) {
      if ((rc = anim_lmm_tick(learned, DT, scratch))) break;
      anim_lmm_global_pose(learned);
      anim_quality_meter_frame(&meter, learned->global_positions, anim_lmm_contacts(learned), -1, DT);
      speed_frame(&speed, learned->global_positions[0]);
    } else {
      if ((rc = anim_controller_tick(&mm, DT))) break;
      anim_controller_global_pose(&mm);
      anim_quality_meter_frame(&meter, mm.global_positions, anim_quality_streamed_contacts(&mm),
                               (long)anim_database_contacts(mm.db, mm.frame), DT);
      speed_frame(&speed, mm.global_positions[0]);
    }
  }
  speed_input_changed(&speed);
  anim_quality_meter_result(&meter, &out->q);
  anim_quality_meter_free(&meter);
  out->settled = speed.settled_count ? speed.settled_sum / (double)speed.settled_count : 0.0;
  out->run = speed.run_count ? speed.run_sum / (double)speed.run_count : 0.0;
  if (lmm) free(learned);
  else anim_controller_free(&mm);
  return rc;
}

static void print_row(const char *kind, const char *program, const result_t *r, const anim_skeleton_t *sk,
                      double settled_ratio, double run_ratio) {
  printf("%-8s %-10s %6.3f %6.3f %6.3f  %5.2f %-14s %6.2f %6.2f", kind, program, (double)r->q.slide_p50,
         (double)r->q.slide_p95, (double)r->q.slide_max, (double)r->q.pop_ratio,
         r->q.pop_bone >= 0 ? sk->names[r->q.pop_bone] : "-", r->settled, r->run);
  if (run_ratio > 0.0) printf("  %5.2f %5.2f", settled_ratio, run_ratio);
  printf("\n");
}

int bench_lmm_quality(int argc, char **argv) {
  const char *db_path = "build/lmm-bandai/bandai.animdb", *lmm_dir = NULL, *json_path = NULL;
  float seconds = 60.0f;
  int seeds = 2, interval = 0, no_warp = 0, no_learned_rate = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!v && strcmp(a, "--no-warp") && strcmp(a, "--no-learned-rate")) return fprintf(stderr, "animbench lmm-quality: %s needs a value\n", a), 2;
    if (!strcmp(a, "--db")) db_path = v, i++;
    else if (!strcmp(a, "--lmm")) lmm_dir = v, i++;
    else if (!strcmp(a, "--seconds")) seconds = (float)atof(v), i++;
    else if (!strcmp(a, "--seeds")) seeds = atoi(v), i++;
    else if (!strcmp(a, "--json")) json_path = v, i++;
    else if (!strcmp(a, "--projection-interval")) interval = atoi(v), i++;
    else if (!strcmp(a, "--no-warp")) no_warp = 1;
    else if (!strcmp(a, "--no-learned-rate")) no_learned_rate = 1;
    else return fprintf(stderr, "animbench lmm-quality: unknown option %s\n", a), 2;
  }
  if (seeds < 1 || !(seconds > 0) || interval < 0) return fprintf(stderr, "animbench lmm-quality: --seeds >= 1, --seconds > 0\n"), 2;
  char dir[1024], err[512];
  if (lmm_dir) snprintf(dir, sizeof dir, "%s", lmm_dir);
  else {
    size_t n = strlen(db_path);
    if (n > 7 && !strcmp(db_path + n - 7, ".animdb")) n -= 7;
    snprintf(dir, sizeof dir, "%.*s.lmm", (int)n, db_path);
  }
  anim_database_t db;
  if (anim_dbfile_load(&db, db_path, err, sizeof err))
    return fprintf(stderr, "animbench lmm-quality: %s\n", err), 1;
  int code = 0;
  anim_lmm_networks_t *nets = anim_lmm_networks_load_for(dir, &db, &code, err, sizeof err);
  if (!nets) return fprintf(stderr, "animbench lmm-quality: %s: %s\n", dir, err), anim_database_free(&db), 1;
  anim_search_data_t data = anim_search_data_of(&db);
  anim_search_index_t *index = anim_search_index_build(ANIM_SEARCH_FAST, &data, err, sizeof err);
  float *scratch = malloc(sizeof(float) * anim_lmm_scratch_floats(nets, 1));
  if (!index || !scratch) {
    fprintf(stderr, "animbench lmm-quality: %s\n", index ? "out of memory" : err);
    return anim_lmm_networks_free(nets), anim_database_free(&db), 1;
  }
  FILE *json = json_path ? fopen(json_path, "w") : NULL;
  printf("%s (%d frames), networks %s (%.2f MB); %g s per run, %d seeds: the worst seed's p50/p95, the worst\n",
         db.name, db.nframes, dir, (double)anim_lmm_networks_memory(nets) / 1e6, (double)seconds, seeds);
  printf("%-8s %-10s %20s  %20s %13s  %11s\n", "kind", "program", "contact slide, m/s", "speed / source max",
         "speed, m/s", "learned/MM");
  printf("%-8s %-10s %6s %6s %6s  %5s %-14s %6s %6s  %5s %5s\n", "", "", "p50", "p95", "worst", "pop", "(bone)",
         "held", "run", "held", "run");
  if (json) fprintf(json, "{\"database\": \"%s\", \"seconds\": %g, \"seeds\": %d, \"rows\": [\n", db.name,
                    (double)seconds, seeds);
  int rc = 0;
  for (int k = 0; k < ANIM_PROGRAM_COUNT && !rc; k++) {
    result_t all[2];
    for (int learned = 0; learned < 2 && !rc; learned++)
      for (int s = 0; s < seeds && !rc; s++) {
        result_t r;
        rc = run_one(&db, index, learned ? nets : NULL, interval, no_warp, no_learned_rate, scratch, (anim_program_kind_t)k, 1u + (uint32_t)s, seconds, &r);
        if (!rc) merge(&all[learned], &r, s == 0);
      }
    if (rc) break;
    const char *program = anim_input_program_name((anim_program_kind_t)k);
    for (int learned = 0; learned < 2; learned++) all[learned].settled /= seeds, all[learned].run /= seeds;
    double held = all[0].settled > 0 ? all[1].settled / all[0].settled : 0.0;
    double run = all[0].run > 0 ? all[1].run / all[0].run : 0.0;
    print_row("matching", program, &all[0], &db.skeleton, 0.0, 0.0);
    print_row("learned", program, &all[1], &db.skeleton, held, run);
    for (int learned = 0; json && learned < 2; learned++)
      fprintf(json,
              "%s  {\"kind\": \"%s\", \"program\": \"%s\", \"slide_p50\": %.4f, \"slide_p95\": %.4f, \"slide_max\": "
              "%.4f, \"pop_ratio\": %.3f, \"pop_bone\": \"%s\", \"speed_held\": %.3f, \"speed_run\": %.3f%s",
              k || learned ? ",\n" : "", learned ? "learned" : "matching", program, (double)all[learned].q.slide_p50,
              (double)all[learned].q.slide_p95, (double)all[learned].q.slide_max, (double)all[learned].q.pop_ratio,
              all[learned].q.pop_bone >= 0 ? db.skeleton.names[all[learned].q.pop_bone] : "-", all[learned].settled,
              all[learned].run, learned ? "" : "}");
    if (json) fprintf(json, ", \"speed_held_ratio\": %.3f, \"speed_run_ratio\": %.3f}", held, run);
  }
  if (rc) fprintf(stderr, "animbench lmm-quality: a run failed (%d)\n", rc);
  if (json) fprintf(json, "\n]}\n"), fclose(json);
  free(scratch);
  anim_search_index_free(index);
  anim_lmm_networks_free(nets);
  anim_database_free(&db);
  return rc ? 1 : 0;
}
