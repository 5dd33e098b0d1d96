/*
 * bench_graph.c: `animbench graph`, motion graphs and state machines.
 *
 *   animbench graph [--shared DIR] [--sizes 6k,30k] [--seconds S] [--threads N] [--write DIR]
 *   animbench graph --plans 1 [--shared DIR] [--seconds S] [--budget N] [--horizon S] [--memory S]
 *   animbench graph --crowd N [--seconds S] [--runs R] [--budget N] [--keep S] [--steer on|off|both]
 *
 * With --plans, the planners compared: on the default database (from its
 * idle node) and on Bandai Namco 6k (from a walk), each graph built with
 * and without options.slide, a character follows a line straight ahead, a
 * line along +X (on its left; 10 m, and 5 m), an L of 3 + 3 m turning left and right and
 * circles of radius 3 m turning right and left, planned by the planner
 * as it is (anim_path_options_default) and as it was before the seeds, the
 * bound and the carried lag (warm 0, bound 0, memory 0) in the same run:
 * distance from the path (mean, worst; circles after 5 s), the path covered,
 * plans, edges tried a plan, plans cut short by the budget, planning CPU
 * time a plan and its ratio to the older planner's. --budget, --horizon set
 * both planners' max_expansions and horizon; --memory the new one's.
 *
 * With --write, nothing is timed: the databases are written as
 * DIR/graph-6k.animdb and DIR/graph-30k.animdb, for a server to load
 * (bench/graph_wire.py measures the same over the wire).
 *
 * Build: the Bandai Namco database as the tests build it (every clip, 60 Hz,
 * mirrored: ~6k frames) and a ~30k-frame one (the same clips at five
 * playback speeds, 0.85x to 1.15x, each mirrored). For each: the graph's
 * build time on the caller's thread and on N threads (strips shared out),
 * the peak memory the build adds (VmHWM after clearing it, less the RSS
 * before) beside the full matrix's size, and the graph. Baseline, same run:
 * the one-pair distance (anim_umeyama_fit on the windows' points) timed on a
 * sample of pairs, scaled to the whole upper triangle.
 *
 * Use: a graph character following a straight line and a circle (radius 3
 * m) on the 6k graph for S seconds: distance of the root to the path after
 * the first 5 s (mean, worst), and the planning done in the ticks that plan
 * (per plan: mean and worst time, edges tried); baseline, same run: the
 * mean tick of a motion-matching character on the same database. And the
 * tick of a character running the seed's jump machine (test_machine_character.c).
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "offline/build.h"
#include "offline/feature_build.h"
#include "bench_util.h"
#include "graph_paths.h"
#include "offline/build.h"
#include "character/controller.h"
#include "database/database.h"
#include "offline/dbfile_write.h"
#include "database/feature.h"
#include "offline/feature_build.h"
#include "graph/graph_character.h"
#include "offline/import.h"
#include "machine/machine_character.h"
#include "graph/motion_graph.h"
#include "offline/procgen.h"
#include "search/search.h"
#include "machine/state_machine.h"

int bench_graph(int argc, char **argv);

static double cpu_now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* ---- process memory -------------------------------------------------------------------- */

static long status_kib(const char *field) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long value = -1;
  size_t n = strlen(field);
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, field, n) == 0) value = atol(line + n + 1);
  if (f) fclose(f);
  return value;
}

/* Resets VmHWM to the current RSS (Linux: "5" to clear_refs). */
static int reset_peak(void) {
  FILE *f = fopen("/proc/self/clear_refs", "w");
  if (!f) return -1;
  int ok = fputs("5", f) >= 0;
  return fclose(f) == 0 && ok ? 0 : -1;
}

/* ---- databases ------------------------------------------------------------------------------ */

static int build_database(anim_database_t *out, const char *shared, int speeds, char *err, int errlen) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/data/mocap/bandai-namco", shared);
  anim_clip_list_t list = {NULL, 0, 0};
  anim_bvh_options_t bo = {0.01f};
  int rc = anim_import_path(&list, dir, &bo, err, errlen);
  if (rc) return rc;
  static const float scales[] = {1.0f, 0.85f, 0.92f, 1.08f, 1.15f};
  int n = list.count * speeds;
  anim_clip_t *clips = calloc((size_t)n, sizeof *clips);
  for (int s = 0; s < speeds && clips; s++)
    for (int c = 0; c < list.count; c++) {
      const anim_clip_t *a = &list.clips[c];
      anim_clip_t *b = &clips[s * list.count + c];
      anim_clip_alloc(b, &a->skeleton, a->nframes, a->frame_time / scales[s]);
      snprintf(b->name, sizeof b->name, "%.48s_x%.2f", a->name, scales[s]);
      size_t count = (size_t)a->nframes * (size_t)a->skeleton.nbones;
      memcpy(b->local_positions, a->local_positions, count * sizeof(vec3));
      memcpy(b->local_rotations, a->local_rotations, count * sizeof(quat));
    }
  anim_build_options_t o;
  anim_build_options_default(&o);
  o.mirror = 1;
  rc = clips ? anim_database_build(out, "bench", clips, n, &o, err, errlen) : -1;
  anim_feature_schema_t schema;
  if (!rc && !(rc = anim_feature_schema_default(&schema, out))) rc = anim_features_build(out, &schema, err, errlen);
  for (int i = 0; clips && i < n; i++) anim_clip_free(&clips[i]);
  free(clips);
  anim_clip_list_free(&list);
  return rc;
}

/* ---- build ----------------------------------------------------------------------------------- */

typedef struct {
  anim_graph_builder_t *builder;
  int next, count;
  pthread_mutex_t lock;
} pool_t;

static void *run_strips(void *arg) {
  pool_t *p = arg;
  for (;;) {
    pthread_mutex_lock(&p->lock);
    int s = p->next < p->count ? p->next++ : -1;
    pthread_mutex_unlock(&p->lock);
    if (s < 0 || anim_graph_builder_run(p->builder, s)) return NULL;
  }
}

static anim_motion_graph_t *build_threads(const anim_database_t *db, int threads, double *out_seconds) {
  char err[256];
  double t0 = bench_now_s();
  *out_seconds = 0.0;
  anim_graph_builder_t *b = anim_graph_builder_create(db, NULL, err, sizeof err);
  if (!b) return NULL;
  pool_t pool = {b, 0, anim_graph_builder_strips(b), PTHREAD_MUTEX_INITIALIZER};
  pthread_t ids[16];
  for (int i = 0; i < threads; i++) pthread_create(&ids[i], NULL, run_strips, &pool);
  for (int i = 0; i < threads; i++) pthread_join(ids[i], NULL);
  anim_motion_graph_t *g = anim_graph_builder_finish(b, err, sizeof err);
  *out_seconds = bench_now_s() - t0;
  anim_graph_builder_free(b);
  return g;
}

static void bench_build(const anim_database_t *db, int threads, anim_motion_graph_t **out_graph) {
  char err[256];
  long rss = status_kib("VmRSS:");
  int peak_ok = reset_peak() == 0;
  double t0 = bench_now_s(), c0 = cpu_now_s();
  anim_motion_graph_t *g = anim_motion_graph_build(db, NULL, err, sizeof err);
  double seconds = bench_now_s() - t0, cpu = cpu_now_s() - c0;
  long hwm = status_kib("VmHWM:");
  if (!g) {
    printf("  build failed: %s\n", err);
    return;
  }
  anim_graph_builder_t *b = anim_graph_builder_create(db, NULL, err, sizeof err);
  double rows = anim_graph_builder_rows(b);
  size_t strip = anim_graph_builder_strip_memory(b);
  anim_graph_builder_free(b);
  printf("  graph: %d frames compared, %d candidates, %d -> %d nodes, %d -> %d edges, %d components, %d transitions\n",
         g->nframes, g->candidates, g->nodes_built, g->nnodes, g->edges_built, g->nedges, g->components,
         g->ntransitions);
  printf("  build, 1 thread: %.2f s wall, %.2f s CPU (%.1f ns CPU per matrix entry of the upper triangle)\n", seconds,
         cpu, cpu * 1e9 / (rows * rows / 2.0));
  if (peak_ok)
    printf("  peak memory added: %.1f MiB (a strip's scratch %.1f MiB; the full matrix in float would be %.0f MiB)\n",
           (double)(hwm - rss) / 1024.0, (double)strip / 1048576.0, rows * rows * 4.0 / 1048576.0);
  if (threads > 1) {
    double tn = 0.0;
    anim_motion_graph_t *gn = build_threads(db, threads, &tn);
    printf("  build, %d threads: %.2f s (%.2fx), same transitions: %s\n", threads, tn, seconds / tn,
           gn && gn->ntransitions == g->ntransitions && gn->nnodes == g->nnodes ? "yes" : "NO");
    anim_motion_graph_free(gn);
  }
  /* Baseline: anim_umeyama_fit on the points of sampled pairs. */
  unsigned seed = 12345;
  int sampled = 0;
  double b0 = bench_now_s();
  while (sampled < 2000) {
    int i = (int)(bench_uniform(&seed) * (float)db->nframes), j = (int)(bench_uniform(&seed) * (float)db->nframes);
    float d;
    if (anim_graph_distance(db, NULL, i, j, &d, NULL, NULL, NULL) == 0) sampled++;
  }
  double per_pair = (bench_now_s() - b0) / sampled;
  printf("  baseline, anim_umeyama_fit per pair: %.0f ns a pair, %.1f s for the upper triangle (%.0fx the build)\n",
         per_pair * 1e9, per_pair * rows * rows / 2.0, per_pair * rows * rows / 2.0 / seconds);
  *out_graph = g;
}

/* ---- use ---------------------------------------------------------------------------------------- */

static int walk_node(const anim_motion_graph_t *g, const anim_database_t *db) {
  for (int u = 0; u < g->nnodes; u++)
    if (strstr(db->ranges[g->nodes[u].range].name, "dataset-2_walk_normal_001") &&
        !strstr(db->ranges[g->nodes[u].range].name, "mirror") &&
        g->nodes[u].frame > db->ranges[g->nodes[u].range].start + 120)
      return u;
  return 0;
}

static void bench_follow(const anim_motion_graph_t *g, const anim_database_t *db, const char *what, const float *points,
                         int count, int closed, float facing, float seconds, double mm_tick) {
  anim_graph_character_t c;
  if (anim_graph_character_init(&c, g, db, NULL, 0.1f, vec3_zero(), facing, walk_node(g, db))) return;
  anim_path_t path = {points, count, closed};
  anim_graph_character_set_path(&c, &path);
  double sum = 0.0, worst = 0.0, plan_time = 0.0, plan_worst = 0.0, tick_time = 0.0;
  int n = 0, exhausted = 0, ticks = (int)(seconds * 60.0f);
  for (int t = 0; t < ticks; t++) {
    double t0 = bench_now_s();
    anim_graph_character_tick(&c, 1.0f / 60.0f);
    double spent = bench_now_s() - t0;
    if (c.replanned) {
      plan_time += spent, plan_worst = spent > plan_worst ? spent : plan_worst;
      exhausted += c.planner.exhausted;
    } else {
      tick_time += spent;
    }
    if (t < 5 * 60) continue;
    float d;
    anim_path_planner_project(&c.planner, c.pose_positions[0].x, c.pose_positions[0].z, 0.0f, -1.0f, &d);
    sum += d, worst = d > worst ? d : worst, n++;
  }
  double plans = (double)(c.plans ? c.plans : 1);
  printf("  %s: root to path %.3f m mean, %.3f m worst; %llu plans, %.3f ms mean (%.0fx a motion-matching tick), "
         "%.3f ms worst, %.0f edges tried a plan, %d ran out of budget; other ticks %.1f us\n",
         what, sum / (n ? n : 1), worst, (unsigned long long)c.plans, plan_time / plans * 1e3,
         plan_time / plans / mm_tick, plan_worst * 1e3, (double)c.expansions / plans, exhausted,
         tick_time / (double)(ticks - (int)c.plans) * 1e6);
  anim_graph_character_free(&c);
}

static double controller_tick(const anim_database_t *db, const anim_search_index_t *index) {
  anim_controller_t c;
  if (anim_controller_init(&c, db, index, NULL, vec3_zero(), 0.0f, 0)) return 1.0;
  anim_controller_input_t in;
  memset(&in, 0, sizeof in);
  in.kind = ANIM_INPUT_STICK, in.stick_z = 1.0f;
  anim_controller_set_input(&c, &in);
  double t0 = bench_now_s();
  int ticks = 1800;
  for (int t = 0; t < ticks; t++) {
    if (t % 240 == 120) in.stick_x = in.stick_x > 0 ? -0.7f : 0.7f, anim_controller_set_input(&c, &in);
    anim_controller_tick(&c, 1.0f / 60.0f);
  }
  double per = (bench_now_s() - t0) / ticks;
  anim_controller_free(&c);
  return per;
}

static const char jump_text[] =
    "halflife 0.1\n"
    "stand        { clip dataset-2_walk_normal_001_x1.00 [0 0.5] loop   JUMP_PRESS stand2crouch }\n"
    "stand2crouch { clip dataset-2_walk_normal_001_x1.00 [0.5 1.2]  JUMP_RELEASE hop   END crouch }\n"
    "crouch       { clip dataset-2_run_normal_001_x1.00 [0 0.3] loop    JUMP_RELEASE takeoff halflife 0.15 }\n"
    "takeoff      { clip dataset-2_run_normal_001_x1.00 [0.3 0.8]       END float }\n"
    "hop          { clip dataset-1_run_normal_001_x1.00 [0 0.4]         END float }\n"
    "float        { clip dataset-1_run_active_001_x1.00 [0.15 0.45] loop NEAR_GROUND land exit 0.2 }\n"
    "land         { clip dataset-1_run_normal_001_x1.00 [0.4 0.76]      END stand }\n";

static void bench_machine(const anim_database_t *db, double mm_tick) {
  char err[256];
  anim_state_machine_t *sm = anim_state_machine_parse(jump_text, strlen(jump_text), "jump", NULL, err, sizeof err);
  if (!sm || anim_state_machine_bind(sm, db, NULL, err, sizeof err)) {
    printf("  jump machine: %s\n", err);
    anim_state_machine_free(sm);
    return;
  }
  anim_machine_character_t c;
  anim_machine_character_init(&c, sm, db, NULL, NULL, vec3_zero(), 0.0f);
  static const char *script[] = {"JUMP_PRESS", "JUMP_RELEASE", "NEAR_GROUND"};
  int ticks = 60 * 60;
  double t0 = bench_now_s();
  for (int t = 0; t < ticks; t++) {
    if (t % 60 == 30) anim_machine_character_send_name(&c, script[(t / 60) % 3]);
    anim_machine_character_tick(&c, 1.0f / 60.0f);
  }
  double per = (bench_now_s() - t0) / ticks;
  printf("  jump machine: %.2f us a tick (%.2fx a motion-matching tick), %llu transitions in %d ticks\n", per * 1e6,
         per / mm_tick, (unsigned long long)c.transitions, ticks);
  anim_machine_character_free(&c);
  anim_state_machine_free(sm);
}

/* ---- planners ------------------------------------------------------------------------------ */

typedef struct {
  double mean, worst, arc, seconds;
  int reached;
  uint64_t plans;
  double edges, plan_cpu;
  int exhausted;
} plan_result_t;

static double thread_cpu_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Follows one case as test_graph_character.c's follow() does: distance of the
 * displayed root to the path after `settle` ticks, the arc covered
 * (nearest point searched near the last), the planning's CPU time. */
static plan_result_t plan_follow(const anim_motion_graph_t *g, const anim_database_t *db,
                                 const anim_path_options_t *options, const bench_graph_path_t *k, int start) {
  plan_result_t r;
  memset(&r, 0, sizeof r);
  anim_graph_character_t c;
  if (anim_graph_character_init(&c, g, db, options, 0.1f, vec3_zero(), k->facing, start)) return r;
  anim_path_t path = {k->points, k->count, k->closed};
  anim_graph_character_set_path(&c, &path);
  float s = c.s;
  int n = 0, ticks = (int)(k->seconds * 60.0f);
  for (int t = 0; t < ticks; t++) {
    double t0 = thread_cpu_s();
    anim_graph_character_tick(&c, 1.0f / 60.0f);
    double spent = thread_cpu_s() - t0;
    if (c.replanned) r.plan_cpu += spent, r.exhausted += c.planner.exhausted;
    vec3 root = c.pose_positions[0];
    float now = anim_path_planner_project(&c.planner, root.x, root.z, s, ANIM_GRAPH_TRACK_WINDOW, NULL), ds = now - s;
    if (c.planner.closed) ds -= c.planner.length * roundf(ds / c.planner.length);
    r.arc += ds, s = now, r.seconds = (t + 1) / 60.0;
    if (t >= k->settle) {
      float d;
      anim_path_planner_project(&c.planner, root.x, root.z, 0.0f, -1.0f, &d);
      r.mean += d, r.worst = d > r.worst ? d : r.worst, n++;
    }
    if (!k->closed && s >= c.planner.length - 0.05f) {
      r.reached = 1;
      break;
    }
  }
  r.mean /= n ? n : 1;
  r.plans = c.plans;
  r.edges = (double)c.expansions / (double)(c.plans ? c.plans : 1);
  r.plan_cpu /= (double)(c.plans ? c.plans : 1);
  anim_graph_character_free(&c);
  return r;
}

/* The planner before the seeds, the bound, the carried lag and the
 * cost-to-go (graph_path.h), for the ratios. */
static void plain_options(anim_path_options_t *o) {
  anim_path_options_default(o);
  o->warm = 0, o->bound = 0, o->memory = 0.0f, o->togo = 0;
}

static void bench_plans(const anim_database_t *db, const char *dbname, int start_node_of_db, float seconds,
                        int budget, float horizon, float memory) {
  bench_graph_paths_t paths;
  bench_graph_paths_init(&paths, 20.0f, seconds);
  /* The names this comparison's report has always given them. */
  paths.paths[0].name = "line +Z", paths.paths[1].name = "line +X (left)";
  const bench_graph_path_t *cases = paths.paths;
  char err[256];
  for (int slide = 0; slide <= 1; slide++) {
    anim_graph_options_t go;
    anim_graph_options_default(&go);
    go.slide = slide;
    anim_motion_graph_t *g = anim_motion_graph_build(db, &go, err, sizeof err);
    if (!g) {
      printf("  %s slide %d: %s\n", dbname, slide, err);
      continue;
    }
    int start = start_node_of_db >= 0 ? start_node_of_db : walk_node(g, db);
    if (start_node_of_db == -2) /* the idle node */
      for (int u = 0; u < g->nnodes; u++)
        if (!strcmp(db->ranges[g->nodes[u].range].name, "idle")) {
          start = u;
          break;
        }
    anim_path_planner_t probe;
    float step = 0.0f, speed = 0.0f;
    if (anim_path_planner_init(&probe, g, db, NULL) == 0) step = probe.step_max, speed = probe.speed;
    anim_path_planner_free(&probe);
    printf("%s, slide %d: %d nodes, %d edges (start node %d), pacer %.2f m/s, fastest frame %.2f m/s\n", dbname, slide,
           g->nnodes, g->nedges, start, speed, step * db->frame_rate);
    for (int k = 0; k < BENCH_GRAPH_PATHS; k++) {
      anim_path_options_t plain, now;
      plain_options(&plain);
      anim_path_options_default(&now);
      if (budget > 0) plain.max_expansions = now.max_expansions = budget;
      if (horizon > 0) plain.horizon = now.horizon = horizon;
      if (memory >= 0) now.memory = memory;
      plan_result_t a = plan_follow(g, db, &plain, &cases[k], start), b = plan_follow(g, db, &now, &cases[k], start);
      const plan_result_t *rs[2] = {&a, &b};
      for (int v = 0; v < 2; v++) {
        const plan_result_t *r = rs[v];
        printf("  %-17s %-6s mean %.3f worst %.3f m, %5.2f m in %5.2f s%s, %3llu plans, %6.0f edges/plan, "
               "%3d exhausted, %.3f ms/plan",
               cases[k].name, v ? "now" : "before", r->mean, r->worst, r->arc, r->seconds, r->reached ? " (end)" : "",
               (unsigned long long)r->plans, r->edges, r->exhausted, r->plan_cpu * 1e3);
        if (v) printf(" (%.2fx before)", a.plan_cpu > 0 ? b.plan_cpu / a.plan_cpu : 0.0);
        printf("\n");
      }
    }
    anim_motion_graph_free(g);
  }
}

/* ---- a crowd: wandering against following ------------------------------------------------ */

/* --crowd N: N graph characters on the default database's graph (default
 * options, as build_graph makes it), ticked in this process on one thread
 * at 60 Hz for --seconds, first all wandering, then all following paths,
 * the two alternated --runs times: CPU time per character-tick of each
 * (the process's CPU clock; nothing else runs) and its ratio, the plans a
 * second and edges tried a plan. The paths, placed from each character's
 * start: a third closed circles (radius 2 to 5 m, either way), a third
 * long open zigzags (10 m legs, never ended in the run), a third L's of 3
 * + 3 m (ended within the run: those arrive and stand). The root's mean
 * distance from its path (after 5 s) says the following is not bought with
 * worse paths. --steer: root steering (graph_character.h) on (default) or
 * off; both: in each run the paths also with it off, and the ratio. */
typedef struct {
  float points[2 * 64];
  int count, closed;
} crowd_path_t;

static void crowd_path(int i, float x0, float z0, crowd_path_t *out) {
  int kind = i % 3;
  float turn = (i / 3) % 2 ? 1.0f : -1.0f;
  if (kind == 0) {
    float r = 2.0f + (float)(i % 7) * 0.5f;
    for (int k = 0; k < 64; k++) {
      float a = 2.0f * (float)M_PI * (float)k / 64.0f;
      out->points[2 * k] = x0 + turn * r * sinf(a), out->points[2 * k + 1] = z0 + r - r * cosf(a);
    }
    out->count = 64, out->closed = 1;
  } else if (kind == 1) {
    for (int k = 0; k < 8; k++)
      out->points[2 * k] = x0 + turn * (k % 2 ? 3.0f : 0.0f), out->points[2 * k + 1] = z0 + 10.0f * (float)k;
    out->count = 8, out->closed = 0;
  } else {
    float l[6] = {0, 0, 0, 3, 3 * turn, 3};
    for (int k = 0; k < 6; k += 2) out->points[k] = x0 + l[k], out->points[k + 1] = z0 + l[k + 1];
    out->count = 3, out->closed = 0;
  }
}

typedef struct {
  double cpu_per_tick, plans_per_s, edges_per_plan, mean_error, searched;
  double kind_error[3];
  double first_edges, kind_edges[3]; /* edges a plan: of the first plans; of the later ones per kind */
} crowd_result_t;

static int crowd_budget = 0;  /* --budget: their max_expansions (0: default) */
static float crowd_keep = 0;  /* --keep: their keep (0: default) */
static int crowd_steer = 1;   /* --steer on|off|both: root steering (graph_character.h); both: each run twice */


static crowd_result_t crowd_run(const anim_motion_graph_t *g, const anim_database_t *db, int n, float seconds,
                                int follow, int steer) {
  crowd_result_t r = {0};
  anim_graph_character_t *c = calloc((size_t)n, sizeof *c);
  crowd_path_t *paths = calloc((size_t)n, sizeof *paths);
  if (!c || !paths) return free(c), free(paths), r;
  unsigned seed = 12345u;
  for (int i = 0; i < n; i++) {
    float x = 20.0f * (float)(i % 40), z = 80.0f * (float)(i / 40);
    int start = (int)(bench_uniform(&seed) * (float)g->nnodes) % g->nnodes;
    anim_path_options_t o;
    anim_path_options_default(&o);
    if (crowd_budget > 0) o.max_expansions = crowd_budget;
    if (crowd_keep > 0) o.keep = crowd_keep;

    anim_graph_character_init(&c[i], g, db, &o, 0.1f, vec3_make(x, 0, z), 0.0f, start);
    anim_graph_character_wander(&c[i], (uint32_t)i * 2654435761u + 1u);
    anim_warp_params_t w = c[i].warp;
    w.steer = steer;
    anim_graph_character_set_warp(&c[i], &w);
    if (follow) {
      crowd_path(i, x, z, &paths[i]);
      anim_path_t path = {paths[i].points, paths[i].count, paths[i].closed};
      anim_graph_character_set_path(&c[i], &path);
    }
  }
  int ticks = (int)(seconds * 60.0f), counted = 0, kind_counted[3] = {0};
  uint64_t *first = calloc((size_t)n, sizeof *first); /* edges of each one's first plan */
  double cpu = 0.0, error = 0.0;
  for (int t = 0; t < ticks; t++) {
    double t0 = cpu_now_s();
    for (int i = 0; i < n; i++) anim_graph_character_tick(&c[i], 1.0f / 60.0f);
    cpu += cpu_now_s() - t0;
    for (int i = 0; i < n; i++)
      if (c[i].plans == 1 && !first[i]) first[i] = c[i].expansions + 1;
    if (follow && t >= 300 && t % 10 == 0)
      for (int i = 0; i < n; i++) {
        float d;
        anim_path_planner_project(&c[i].planner, c[i].pose_positions[0].x, c[i].pose_positions[0].z, 0.0f, -1.0f, &d);
        error += d, counted++;
        r.kind_error[i % 3] += d, kind_counted[i % 3]++;
      }
  }
  uint64_t plans = 0, edges = 0, kind_plans[3] = {0};
  int firsts = 0;
  for (int i = 0; i < n; i++) {
    if (first[i]) {
      r.first_edges += (double)(first[i] - 1), firsts++;
      r.kind_edges[i % 3] += (double)(c[i].expansions - (first[i] - 1)), kind_plans[i % 3] += c[i].plans - 1;
    }
#ifdef ANIM_PATH_ARRIVE_DISTANCE
    r.searched += (double)c[i].searches;
#else
    r.searched += (double)c[i].plans;
#endif
    plans += c[i].plans, edges += c[i].expansions;
    anim_graph_character_free(&c[i]);
  }
  r.searched /= plans ? (double)plans : 1.0;
  r.first_edges /= firsts ? firsts : 1;
  for (int k = 0; k < 3; k++) r.kind_edges[k] /= kind_plans[k] ? (double)kind_plans[k] : 1.0;
  free(first);
  for (int k = 0; k < 3; k++) r.kind_error[k] /= kind_counted[k] ? kind_counted[k] : 1;
  r.cpu_per_tick = cpu / ((double)ticks * (double)n);
  r.plans_per_s = (double)plans / (double)seconds;
  r.edges_per_plan = plans ? (double)edges / (double)plans : 0.0;
  r.mean_error = counted ? error / counted : 0.0;
  free(c), free(paths);
  return r;
}

static int follow_detail = 1;

static int bench_crowd_graph(int n, float seconds, int runs) {
  char err[512];
  anim_database_t db;
  if (anim_procgen_database(&db, NULL, err, sizeof err)) return fprintf(stderr, "animbench graph: %s\n", err), 1;
  anim_graph_options_t go;
  anim_graph_options_default(&go);
  anim_motion_graph_t *g = anim_motion_graph_build(&db, &go, err, sizeof err);
  if (!g) return fprintf(stderr, "animbench graph: %s\n", err), anim_database_free(&db), 1;
  printf("default database graph: %d nodes, %d edges; %d characters, %.0f s at 60 Hz, one thread\n", g->nnodes,
         g->nedges, n, seconds);
  double sum_ratio = 0.0;
  double sum_steer = 0.0, sum_wander = 0.0;
  for (int k = 0; k < runs; k++) {
    int steer = crowd_steer == 2 ? 1 : crowd_steer;
    crowd_result_t w = crowd_run(g, &db, n, seconds, 0, steer), p = crowd_run(g, &db, n, seconds, 1, steer);
    double ratio = w.cpu_per_tick > 0 ? p.cpu_per_tick / w.cpu_per_tick : 0.0;
    sum_ratio += ratio;
    printf("  run %d: wander %.2f us/char-tick; path %.2f us/char-tick (%.2fx wander), %.0f plans/s (%.0f%% searched), "
           "%.0f edges/plan; mean from path %.3f m (circles %.3f, zigzags %.3f, L's %.3f)%s\n",
           k + 1, w.cpu_per_tick * 1e6, p.cpu_per_tick * 1e6, ratio, p.plans_per_s, 100.0 * p.searched,
           p.edges_per_plan, p.mean_error, p.kind_error[0], p.kind_error[1], p.kind_error[2],
           crowd_steer == 2 ? ", steering on" : "");
    if (follow_detail)
      printf("    edges a plan: first plans %.0f; later, circles %.0f, zigzags %.0f, L's %.0f\n", p.first_edges,
             p.kind_edges[0], p.kind_edges[1], p.kind_edges[2]);
    if (crowd_steer == 2) {
      /* The same without steering (nor its foot locking), in the same run: its cost ratio. */
      crowd_result_t ow = crowd_run(g, &db, n, seconds, 0, 0), o = crowd_run(g, &db, n, seconds, 1, 0);
      double r = o.cpu_per_tick > 0 ? p.cpu_per_tick / o.cpu_per_tick : 0.0;
      sum_steer += r, sum_wander += ow.cpu_per_tick > 0 ? w.cpu_per_tick / ow.cpu_per_tick : 0.0;
      printf("         steering off: wander %.2f us/char-tick (on/off %.2fx); path %.2f us/char-tick (on/off %.2fx), "
             "%.0f edges/plan; mean from path %.3f m (circles %.3f, zigzags %.3f, L's %.3f)\n",
             ow.cpu_per_tick * 1e6, ow.cpu_per_tick > 0 ? w.cpu_per_tick / ow.cpu_per_tick : 0.0,
             o.cpu_per_tick * 1e6, r, o.edges_per_plan, o.mean_error, o.kind_error[0], o.kind_error[1],
             o.kind_error[2]);
    }
  }
  if (crowd_steer == 2)
    printf("  mean ratio steering on/off: path %.2fx, wander %.2fx\n", sum_steer / (runs > 0 ? runs : 1),
           sum_wander / (runs > 0 ? runs : 1));
  printf("  mean ratio path/wander: %.2fx\n", sum_ratio / (runs > 0 ? runs : 1));
  anim_motion_graph_free(g);
  anim_database_free(&db);
  return 0;
}

int bench_graph(int argc, char **argv) {
  const char *shared = "../shared", *sizes = "6k,30k", *write = NULL;
  float seconds = 30.0f;
  int threads = 2, plans = 0, budget = 0, crowd = 0, runs = 3;
  float horizon = 0.0f, memory = -1.0f, keep = 0.0f;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--shared")) shared = argv[i + 1];
    else if (!strcmp(argv[i], "--sizes")) sizes = argv[i + 1];
    else if (!strcmp(argv[i], "--seconds")) seconds = (float)atof(argv[i + 1]);
    else if (!strcmp(argv[i], "--threads")) threads = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--write")) write = argv[i + 1];
    else if (!strcmp(argv[i], "--plans")) plans = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--budget")) budget = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--horizon")) horizon = (float)atof(argv[i + 1]);
    else if (!strcmp(argv[i], "--memory")) memory = (float)atof(argv[i + 1]);
    else if (!strcmp(argv[i], "--crowd")) crowd = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--runs")) runs = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--keep")) keep = (float)atof(argv[i + 1]);
    else if (!strcmp(argv[i], "--steer")) crowd_steer = !strcmp(argv[i + 1], "both") ? 2 : strcmp(argv[i + 1], "off") != 0;

    else {
      fprintf(stderr, "animbench graph: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  if (threads < 1 || threads > 16) threads = 2;
  char err[512];
  if (crowd > 0) {
    crowd_budget = budget, crowd_keep = keep;
    return bench_crowd_graph(crowd, seconds, runs);
  }
  if (plans) {
    anim_database_t db;
    if (anim_procgen_database(&db, NULL, err, sizeof err)) {
      fprintf(stderr, "animbench graph: %s\n", err);
      return 1;
    }
    bench_plans(&db, "default database", -2, seconds, budget, horizon, memory);
    anim_database_free(&db);
    if (build_database(&db, shared, 1, err, sizeof err)) {
      fprintf(stderr, "animbench graph: %s\n", err);
      return 1;
    }
    bench_plans(&db, "Bandai Namco 6k", -1, seconds, budget, horizon, memory);
    anim_database_free(&db);
    return 0;
  }
  for (const char *s = sizes; *s;) {
    int speeds = strncmp(s, "30k", 3) == 0 ? 5 : 1;
    anim_database_t db;
    double t0 = bench_now_s();
    if (build_database(&db, shared, speeds, err, sizeof err)) {
      fprintf(stderr, "animbench graph: %s\n", err);
      return 1;
    }
    printf("database %s: %d frames, %d ranges (built in %.1f s)\n", speeds == 5 ? "30k" : "6k", db.nframes, db.nranges,
           bench_now_s() - t0);
    anim_motion_graph_t *g = NULL;
    if (write) {
      char path[1200];
      snprintf(path, sizeof path, "%s/graph-%s.animdb", write, speeds == 5 ? "30k" : "6k");
      if (anim_dbfile_write(&db, path, err, sizeof err)) {
        fprintf(stderr, "animbench graph: %s\n", err);
        return 1;
      }
      printf("  written to %s\n", path);
    } else {
      bench_build(&db, threads, &g);
    }
    if (speeds == 1 && g) {
      anim_search_data_t data = anim_search_data_of(&db);
      anim_search_index_t *index = anim_search_index_build(ANIM_SEARCH_FAST, &data, err, sizeof err);
      double mm = controller_tick(&db, index);
      printf("  baseline, motion-matching character: %.1f us a tick\n", mm * 1e6);
      float line[] = {0.0f, 0.0f, 0.0f, 200.0f};
      bench_follow(g, &db, "line", line, 2, 0, 0.0f, seconds, mm);
      float circle[128];
      for (int i = 0; i < 64; i++) {
        float a = 2.0f * (float)M_PI * (float)i / 64.0f;
        circle[2 * i] = 3.0f * sinf(a), circle[2 * i + 1] = 3.0f - 3.0f * cosf(a);
      }
      bench_follow(g, &db, "circle r=3 m", circle, 64, 1, (float)M_PI / 2, seconds, mm);
      bench_machine(&db, mm);
      anim_search_index_free(index);
    }
    anim_motion_graph_free(g);
    anim_database_free(&db);
    s = strchr(s, ',');
    if (!s) break;
    s++;
  }
  return 0;
}
