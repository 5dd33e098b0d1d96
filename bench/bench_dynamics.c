/*
 * bench_dynamics.c: `animbench dynamics`: what inverse dynamics
 * (physics/inverse_dynamics.h) costs a frame, as a ratio to MuJoCo's own
 * inverse-dynamics call on the same model in the same run (issue 33: at
 * most 1.5x).
 *
 *   animbench dynamics [--shared DIR] [--rounds 7] [--repeat 5] [--json FILE]
 *
 * Per clip (Bandai Namco's dataset-1 walk, GAMES-105's walkF and idle, the
 * default database's walk): the database's body model, one solver, and
 * --rounds rounds, each timing --repeat runs of anim_idyn_run over the clip
 * (configurations, differences, mj_inverse, the contact fit, the torques)
 * and then anim_idyn_reference_cost: mj_inverse alone on the same inputs,
 * on the solver's copy of the model (constraints and passive forces off)
 * and on the original (contacts on). CPU time of the process, one thread;
 * the best and the median round of each, alternating, so the machine's
 * load shows as the spread and the ratio holds. The figures were in
 * test_inverse_dynamics before; a test keeps no timing.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "body.h"
#include "inverse_dynamics.h"
#include "offline/build.h"
#include "offline/import.h"
#include "offline/procgen.h"

int bench_dynamics(int argc, char **argv);

typedef struct {
  const char *folder; /* under data/mocap; NULL: the default (procedural) database */
  float scale;        /* metres per file unit */
  const char *range;
} clip_t;

static const clip_t clips[] = {
    {"bandai-namco", 0.01f, "dataset-1_walk_normal_001"},
    {"games105", 1.0f, "walkF"},
    {"games105", 1.0f, "idle"},
    {NULL, 1.0f, "walk"},
};

static int compare_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, compare_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static double lowest(const double *v, int n) {
  double m = INFINITY;
  for (int i = 0; i < n; i++) m = fmin(m, v[i]);
  return m;
}

static int open_database(const char *shared, const clip_t *c, anim_database_t *out) {
  char err[512];
  if (!c->folder) return anim_procgen_database(out, NULL, err, sizeof err) ? (fprintf(stderr, "%s\n", err), -1) : 0;
  char path[1024];
  snprintf(path, sizeof path, "%s/data/mocap/%s", shared, c->folder);
  anim_clip_list_t list = {NULL, 0, 0};
  anim_bvh_options_t bo = {c->scale};
  if (anim_import_path(&list, path, &bo, err, sizeof err)) return fprintf(stderr, "%s: %s\n", path, err), -1;
  anim_build_options_t o;
  anim_build_options_default(&o), o.mirror = 1;
  int rc = anim_database_build(out, c->folder, list.clips, list.count, &o, err, sizeof err);
  anim_clip_list_free(&list);
  if (rc) fprintf(stderr, "%s: %s\n", c->folder, err);
  return rc ? -1 : 0;
}

int bench_dynamics(int argc, char **argv) {
  const char *shared = getenv("ANIM_SHARED_DIR") ? getenv("ANIM_SHARED_DIR") : "../shared", *json = NULL;
  int rounds = 7, repeat = 5;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--shared") && i + 1 < argc) shared = argv[++i];
    else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--json") && i + 1 < argc) json = argv[++i];
    else {
      fprintf(stderr, "usage: animbench dynamics [--shared DIR] [--rounds 7] [--repeat 5] [--json FILE]\n");
      return 2;
    }
  }
  if (rounds < 1 || rounds > 1000 || repeat < 1 || repeat > 1000) {
    fprintf(stderr, "animbench dynamics: --rounds and --repeat in 1..1000\n");
    return 2;
  }
  FILE *js = json ? fopen(json, "w") : NULL;
  if (json && !js) return fprintf(stderr, "%s: cannot write\n", json), 1;
  if (js) fprintf(js, "[");
  printf("inverse dynamics per frame against MuJoCo's mj_inverse on the same inputs: CPU us, best / median of %d "
         "rounds (%d runs of the clip each)\n", rounds, repeat);
  printf("%-14s %-26s %6s | %15s | %15s %11s | %15s %11s\n", "database", "clip", "frames", "inverse dyn.",
         "mj_inverse copy", "ratio", "mj_inverse orig", "ratio");
  double *ours = calloc((size_t)rounds, sizeof *ours), *copy = calloc((size_t)rounds, sizeof *copy),
         *orig = calloc((size_t)rounds, sizeof *orig);
  int status = 0, first = 1;
  for (size_t k = 0; k < sizeof clips / sizeof clips[0] && !status; k++) {
    const clip_t *c = &clips[k];
    anim_database_t db;
    if (open_database(shared, c, &db)) {
      status = 1;
      break;
    }
    char err[512];
    anim_physics_model_t *model = anim_physics_model_create(&db, NULL, err, sizeof err);
    anim_idyn_t *id = model ? anim_idyn_create(model, &db, NULL, err, sizeof err) : NULL;
    int r = -1;
    for (int i = 0; i < db.nranges; i++)
      if (!strcmp(db.ranges[i].name, c->range)) r = i;
    if (!id || r < 0) {
      fprintf(stderr, "%s %s: %s\n", db.name, c->range, id ? "no such range" : err);
      status = 1;
    } else {
      int start = db.ranges[r].start, stop = db.ranges[r].stop, n = stop - start;
      anim_idyn_frame_t *frames = calloc((size_t)n, sizeof *frames);
      vec3 *torques = calloc((size_t)n * (size_t)db.nbones, sizeof *torques);
      for (int round = 0; round < rounds && !status; round++) {
        double t0 = bench_cpu_s();
        for (int rep = 0; rep < repeat; rep++)
          if (anim_idyn_run(id, &db, start, stop, frames, torques, NULL, err, sizeof err)) {
            fprintf(stderr, "%s: %s\n", c->range, err);
            status = 1;
          }
        ours[round] = (bench_cpu_s() - t0) / ((double)repeat * n);
        anim_idyn_reference_cost(id, &db, start, stop, repeat, &orig[round], &copy[round]);
      }
      double best = lowest(ours, rounds), best_copy = lowest(copy, rounds), best_orig = lowest(orig, rounds);
      double med = median(ours, rounds), med_copy = median(copy, rounds), med_orig = median(orig, rounds);
      printf("%-14s %-26s %6d | %6.1f / %6.1f | %6.1f / %6.1f %4.2f/%4.2fx | %6.1f / %6.1f %4.2f/%4.2fx\n", db.name,
             c->range, n, 1e6 * best, 1e6 * med, 1e6 * best_copy, 1e6 * med_copy, best / best_copy, med / med_copy,
             1e6 * best_orig, 1e6 * med_orig, best / best_orig, med / med_orig);
      if (js)
        fprintf(js, "%s\n {\"database\": \"%s\", \"clip\": \"%s\", \"frames\": %d, \"us_best\": %.3f, \"us_median\": %.3f, "
                "\"mj_inverse_copy_us_best\": %.3f, \"mj_inverse_copy_us_median\": %.3f, \"ratio_best\": %.4f, "
                "\"ratio_median\": %.4f, \"mj_inverse_original_us_best\": %.3f, \"ratio_original_best\": %.4f}",
                first ? "" : ",", db.name, c->range, n, 1e6 * best, 1e6 * med, 1e6 * best_copy, 1e6 * med_copy,
                best / best_copy, med / med_copy, 1e6 * best_orig, best / best_orig);
      first = 0;
      free(frames);
      free(torques);
    }
    anim_idyn_free(id);
    anim_physics_model_free(model);
    anim_database_free(&db);
  }
  printf("ratio: inverse dynamics / mj_inverse on the solver's copy (the issue's bound: 1.5x); \"orig\": on the "
         "model with its contacts on\n");
  if (js) fprintf(js, "\n]\n"), fclose(js);
  free(ours), free(copy), free(orig);
  return status;
}
