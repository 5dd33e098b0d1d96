/*
 * bench_graph_steer.c: `animbench graph-steer`: root steering of graph
 * characters (issue 34; graph_character.h, "Root steering"), with and
 * without it in the same run.
 *
 *   animbench graph-steer [--shared DIR] [--datasets default,bandai-namco] [--seconds 20] [--verbose]
 *
 * On the default database (from its idle node) and on Bandai Namco (as
 * `animdb build --mirror` builds it, tests/support/quality_run.h; from a
 * walk), each with its graph built as build_graph builds it (default
 * options), a graph character follows seven paths: a 10 m line ahead, a 10
 * m line along +X (on its left), a 5 m one, an L of 3 + 3 m either way
 * (open: they end), and circles of radius 3 m either way (closed, --seconds
 * long, measured after 5 s). Each path three times: steering off, on (the
 * default: with foot locking), and on without foot locking ("nolck", what
 * the locks take up). Per path: the root's distance from the path (mean, worst), on
 * an open path the root's distance from its end when the run ends and the
 * nearest it came (a graph that cannot stop walks on past it), and when
 * the character arrived (graph_character.h) in seconds; foot slide p95 and
 * worst (m/s) and pops (the worst bone speed over its source's fastest)
 * measured on the displayed pose with the data's contact flags
 * (tests/support/motion_quality.h), the flags being those shown (foot
 * locking's while it holds the feet) and their share of foot-frames; the
 * mean steering correction (m/s).
 * Then per dataset the means over the paths.
 *
 * The cost per character-tick is `animbench graph --crowd N --steer both`
 * (bench_graph.c): the crowd following paths with steering on and off,
 * alternated in each run.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph_character.h"
#include "graph/motion_graph.h"
#include "graph_paths.h"
#include "motion_quality.h"
#include "offline/procgen.h"
#include "quality_run.h"

int bench_graph_steer(int argc, char **argv);

typedef struct {
  double mean, worst, end_distance, nearest_end, arrived_s, steer_mean;
  anim_quality_t q;
} steer_result_t;

static int verbose;

/* The node to start from: the idle clip's first (default database) or a
 * walk's, past its start (Bandai Namco); else node 0. */
static int start_node(const anim_motion_graph_t *g, const anim_database_t *db) {
  for (int u = 0; u < g->nnodes; u++) {
    const anim_range_t *r = &db->ranges[g->nodes[u].range];
    if (!strcmp(r->name, "idle")) return u;
    if (strstr(r->name, "walk_normal") && !strstr(r->name, "mirror") && g->nodes[u].frame > r->start + 120) return u;
  }
  return 0;
}

static int run_case(const anim_motion_graph_t *g, const anim_database_t *db, const bench_graph_path_t *k, int start,
                    int steer, steer_result_t *out) {
  memset(out, 0, sizeof *out);
  anim_graph_character_t c;
  anim_quality_meter_t m;
  if (anim_graph_character_init(&c, g, db, NULL, 0.1f, vec3_zero(), k->facing, start)) return -1;
  if (anim_quality_meter_init(&m, db)) return anim_graph_character_free(&c), -1;
  anim_warp_params_t w = c.warp;
  w.steer = steer != 0;
  if (steer == 2) c.feet.nfeet = 0; /* steering without foot locking: what the locks take up */
  anim_graph_character_set_warp(&c, &w);
  anim_path_t path = {k->points, k->count, k->closed};
  anim_graph_character_set_path(&c, &path);
  int ticks = (int)(k->seconds * 60.0f), n = 0;
  out->arrived_s = -1.0, out->nearest_end = INFINITY;
  float ex = k->points[2 * k->count - 2], ez = k->points[2 * k->count - 1];
  for (int t = 0; t < ticks; t++) {
    anim_graph_character_tick(&c, 1.0f / 60.0f);
    anim_graph_character_global_pose(&c);
    anim_quality_meter_frame(&m, c.global_positions, anim_graph_character_contacts(&c),
                             (long)anim_database_contacts(db, c.frame), 1.0f / 60.0f);
    out->steer_mean += c.steering;
    if (c.arrived && out->arrived_s < 0.0) out->arrived_s = (t + 1) / 60.0;
    out->nearest_end = fmin(out->nearest_end, hypotf(c.pose_positions[0].x - ex, c.pose_positions[0].z - ez));
    if (t < k->settle) continue;
    float d;
    anim_path_planner_project(&c.planner, c.pose_positions[0].x, c.pose_positions[0].z, 0.0f, -1.0f, &d);
    out->mean += d, out->worst = d > out->worst ? d : out->worst, n++;
  }
  out->mean /= n ? n : 1;
  out->steer_mean /= ticks ? ticks : 1;
  if (!k->closed) out->end_distance = hypotf(c.pose_positions[0].x - ex, c.pose_positions[0].z - ez);
  anim_quality_meter_result(&m, &out->q);
  anim_quality_meter_free(&m);
  anim_graph_character_free(&c);
  return 0;
}

static void run_dataset(const anim_database_t *db, const char *name, float seconds) {
  char err[512];
  anim_graph_options_t go;
  anim_graph_options_default(&go);
  anim_motion_graph_t *g = anim_motion_graph_build(db, &go, err, sizeof err);
  if (!g) {
    fprintf(stderr, "animbench graph-steer: %s: %s\n", name, err);
    return;
  }
  bench_graph_paths_t paths;
  bench_graph_paths_init(&paths, 15.0f, seconds);
  const bench_graph_path_t *cases = paths.paths;
  static const char *const modes[3] = {"off", "on", "nolck"};
  int ncases = BENCH_GRAPH_PATHS, start = start_node(g, db);
  printf("%s: graph of %d nodes, %d edges, from node %d (%s)\n", name, g->nnodes, g->nedges, start,
         db->ranges[g->nodes[start].range].name);
  printf("  %-17s %-5s %7s %7s %8s %8s %8s %7s %7s %6s %6s %7s\n", "path", "steer", "mean m", "worst m", "end m",
         "nearest",
         "arrive s", "slide95", "slidemx", "pops", "steer", "flagged");
  /* Means over the paths (open paths for the end), off then on. */
  double sum[3][8] = {{0}};
  int opens = 0;
  for (int k = 0; k < ncases; k++) {
    steer_result_t r[3];
    for (int s = 0; s < 3; s++) run_case(g, db, &cases[k], start, s, &r[s]);
    if (!cases[k].closed) opens++;
    for (int s = 0; s < 3; s++) {
      const steer_result_t *x = &r[s];
      sum[s][0] += x->mean, sum[s][1] += x->worst, sum[s][2] += x->end_distance;
      if (!cases[k].closed) sum[s][7] += x->nearest_end;
      sum[s][3] = fmax(sum[s][3], x->q.slide_p95), sum[s][4] = fmax(sum[s][4], x->q.slide_max);
      sum[s][5] = fmax(sum[s][5], x->q.pop_ratio), sum[s][6] += x->steer_mean;
      if (!verbose) continue;
      char end[32] = "-", nearest[32] = "-", arrive[32] = "-";
      if (!cases[k].closed) snprintf(end, sizeof end, "%.3f", x->end_distance);
      if (!cases[k].closed) snprintf(nearest, sizeof nearest, "%.3f", x->nearest_end);
      if (x->arrived_s >= 0.0) snprintf(arrive, sizeof arrive, "%.2f", x->arrived_s);
      printf("  %-17s %-5s %7.3f %7.3f %8s %8s %8s %7.3f %7.3f %6.2f %6.3f %7.2f\n", cases[k].name, modes[s], x->mean,
             x->worst, end, nearest, arrive, x->q.slide_p95, x->q.slide_max, x->q.pop_ratio, x->steer_mean, x->q.flagged_share);
    }
  }
  for (int s = 0; s < 3; s++)
    printf("  %-17s %-5s %7.3f %7.3f %8.3f %8.3f %8s %7.3f %7.3f %6.2f %6.3f   (means; slide, pops: worst path)\n",
           "all paths", modes[s], sum[s][0] / ncases, sum[s][1] / ncases, sum[s][2] / (opens ? opens : 1),
           sum[s][7] / (opens ? opens : 1), "",
           sum[s][3], sum[s][4], sum[s][5], sum[s][6] / ncases);
  anim_motion_graph_free(g);
}

int bench_graph_steer(int argc, char **argv) {
  const char *shared = "../shared", *datasets = "default,bandai-namco";
  float seconds = 20.0f;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--verbose")) verbose = 1;
    else if (i + 1 < argc && !strcmp(argv[i], "--shared")) shared = argv[++i];
    else if (i + 1 < argc && !strcmp(argv[i], "--datasets")) datasets = argv[++i];
    else if (i + 1 < argc && !strcmp(argv[i], "--seconds")) seconds = (float)atof(argv[++i]);
    else return fprintf(stderr, "animbench graph-steer: unknown option %s\n", argv[i]), 2;
  }
  char err[512];
  if (strstr(datasets, "default")) {
    anim_database_t db;
    if (anim_procgen_database(&db, NULL, err, sizeof err)) return fprintf(stderr, "animbench graph-steer: %s\n", err), 1;
    run_dataset(&db, "default", seconds);
    anim_database_free(&db);
  }
  for (int d = 0; d < ANIM_QUALITY_DATASETS; d++) {
    if (!strstr(datasets, anim_quality_datasets[d].name)) continue;
    anim_database_t db;
    if (anim_quality_dataset_build(&db, shared, d, err, sizeof err)) {
      fprintf(stderr, "animbench graph-steer: %s: %s\n", anim_quality_datasets[d].name, err);
      continue;
    }
    run_dataset(&db, anim_quality_datasets[d].name, seconds);
    anim_database_free(&db);
  }
  return 0;
}
