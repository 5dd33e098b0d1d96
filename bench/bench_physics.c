/*
 * bench_physics.c: MuJoCo's figures for physics/ (docs/physics.md): the
 * body physics/ builds for the default database, stepped at 1/240 s.
 *  1. step cost: microseconds per mj_step of the body released undriven
 *     (it falls and lies), median of 7 rounds of 2400 steps; and
 *     anim_physics_step (a 60 Hz tick: 4 engine steps and the drives)
 *     against the mj_step time inside it (MuJoCo's timers);
 *  2. determinism and threads: 8 bodies pushed in different directions,
 *     stepped 600 times on 1 thread, then split over 2 threads (one shared
 *     mjModel, an mjData each), 5 runs in child processes (a crash is
 *     counted, not fatal): states bit-identical?
 * The comparison with ODE that chose MuJoCo was this program at commit
 * d694f65 (ODE has left the build; docs/physics.md keeps its figures).
 * 3. --track [seconds [rounds [database|all [levers]]]]: per dataset (the default and
 *    ../shared/data/mocap, or $ANIM_SHARED_DIR), the powered body tracking
 *    the walk the tests use, for each engine lever below: mean joint error
 *    and CPU microseconds per tick (median over rounds, levers alternating);
 *    levers: their indices, as "0,2" (default: all).
 * 4. --ratio [seconds [rounds [database|all]]]: the tick against the
 *    engine's own steps of the same humanoid on the same states (see
 *    ratio_walk), besides the model defaults' tracking.
 * Usage: bench_physics [--quick | --track [seconds [rounds [database|all [levers]]]]
 *                     | --ratio [seconds [rounds [database|all]]]].
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <mujoco/mujoco.h>

#include "../physics/body_internal.h"
#include "offline/import.h"
#include "offline/procgen.h"
#include "pose/kinematics.h"

#define H (1.0 / 240.0)
#define NBODIES 8
#define DET_STEPS 600

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static const anim_physics_model_t *model;

/* ---- MuJoCo -------------------------------------------------------------- */

static void mj_push(mjData *d, int i) {
  /* A different push per body: sideways velocity on the root. */
  d->qvel[0] = 0.5 * cos(i), d->qvel[2] = 0.5 * sin(i);
}

static void mj_run(mjData *d, int i, int steps) {
  mj_resetData(model->m, d);
  mj_push(d, i);
  for (int s = 0; s < steps; s++) mj_step(model->m, d);
}

typedef struct {
  int first, count;
  mjData **d;
  double (*states)[256];
} mj_job_t;

static void *mj_thread(void *arg) {
  mj_job_t *j = arg;
  for (int i = j->first; i < j->first + j->count; i++) {
    mj_run(j->d[i], i, DET_STEPS);
    memcpy(j->states[i], j->d[i]->qpos, sizeof(double) * (size_t)model->m->nq);
  }
  return NULL;
}

/* States of NBODIES bodies stepped on nthreads threads. */
static void mj_states(int nthreads, double (*states)[256]) {
  mjData *d[NBODIES];
  for (int i = 0; i < NBODIES; i++) d[i] = mj_makeData(model->m);
  pthread_t th[2];
  mj_job_t jobs[2];
  int per = NBODIES / nthreads;
  for (int t = 0; t < nthreads; t++) {
    jobs[t] = (mj_job_t){t * per, per, d, states};
    pthread_create(&th[t], NULL, mj_thread, &jobs[t]);
  }
  for (int t = 0; t < nthreads; t++) pthread_join(th[t], NULL);
  for (int i = 0; i < NBODIES; i++) mj_deleteData(d[i]);
}

static double mj_contacts; /* mean contacts per step in the last cost run */

static double mj_step_cost(int steps) {
  mjData *d = mj_makeData(model->m);
  mj_resetData(model->m, d);
  double t0 = now();
  long ncon = 0;
  for (int s = 0; s < steps; s++) mj_step(model->m, d), ncon += d->ncon;
  double us = (now() - t0) / steps * 1e6;
  mj_contacts = (double)ncon / steps;
  mj_deleteData(d);
  return us;
}

static mjtNum clock_us(void) { return (mjtNum)(now() * 1e6); }
static double last_engine_share; /* share of anim_physics_step spent inside mj_step */

static double tick_cost(int ticks) {
  char err[256];
  anim_physics_body_t *body = anim_physics_body_create(model, err, sizeof err);
  vec3 pos[ANIM_MAX_BONES];
  quat rot[ANIM_MAX_BONES];
  for (int b = 0; b < model->nbones; b++) pos[b] = model->offsets[b], rot[b] = quat_identity();
  pos[0] = vec3_zero();
  pos[model->root] = vec3_make(0, model->rest_root_height, 0);
  /* MuJoCo's own timers (mjcb_time) say how much of the tick is mj_step. */
  mjcb_time = clock_us;
  mj_resetData(model->m, body->d);
  anim_physics_body_reset(body, pos, rot);
  double t0 = now();
  for (int t = 0; t < ticks; t++) anim_physics_step(body, pos, rot, NULL, NULL);
  double us = (now() - t0) / ticks * 1e6;
  last_engine_share = body->d->timer[mjTIMER_STEP].duration / ticks / us;
  mjcb_time = NULL;
  anim_physics_body_free(body);
  return us;
}

/* ---- the measurements ---------------------------------------------------- */

/* Runs fn in a child 5 times: how many runs ended and matched the reference. */
static int runs_ok(int (*fn)(int), int arg, int *out_crashed) {
  int ok = 0, crashed = 0;
  for (int r = 0; r < 5; r++) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) _exit(fn(arg));
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status)) crashed++;
    else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) ok++;
  }
  *out_crashed = crashed;
  return ok;
}

static int mj_two_threads_match(int unused) {
  static double one[NBODIES][256], two[NBODIES][256];
  memset(one, 0, sizeof one), memset(two, 0, sizeof two);
  mj_states(1, one);
  mj_states(2, two);
  return memcmp(one, two, sizeof one) ? 1 : 0;
}


static int cost_steps = 2400;
static double mj_cost(int unused) { return mj_step_cost(cost_steps); }
static double tick_cost_of(int unused) { return tick_cost(cost_steps / 4); }


/* ---- --track: tracking error and CPU cost per tick, per dataset ------------ */

/* The datasets the tests use (tests/support/shared_data.c): folder, metres
 * per file unit, a walking clip's range. */
static const struct {
  const char *folder;
  float scale;
  const char *walk;
} sets[] = {{"bandai-namco", 0.01f, "dataset-1_walk_normal_001"},
            {"cmu-3dsmax", 0.056444f, "131_01"},
            {"cmu-motionbuilder", 0.056444f, "02_01"},
            {"games105", 1.0f, "walk_forward"}};
#define NSETS (int)(sizeof sets / sizeof sets[0])

static double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* A lever: engine options set on the model after it is built (NULL fields
 * and -1 keep the model's). */
typedef struct {
  const char *name;
  int substeps;     /* 0: the default */
  int solver, iterations, cone, jacobian, integrator;
  double tolerance;
  int disable;      /* mjDSBL_* added */
  int no_weld;      /* 1: every bone a body (options.weld_leaves 0) */
  int no_fix;       /* 1: every joint free (options.fix_still 0) */
  float armature;   /* > 0: options.upper_armature (kg m^2) */
} lever_t;

static void lever_apply(mjModel *m, const lever_t *l) {
  if (l->solver >= 0) m->opt.solver = l->solver;
  if (l->iterations > 0) m->opt.iterations = l->iterations;
  if (l->cone >= 0) m->opt.cone = l->cone;
  if (l->jacobian >= 0) m->opt.jacobian = l->jacobian;
  if (l->integrator >= 0) m->opt.integrator = l->integrator;
  if (l->tolerance > 0) m->opt.tolerance = l->tolerance;
  m->opt.disableflags |= l->disable;
}

/* The powered body following the walk range back and forth for seconds:
 * mean joint error (m, all bones, every tick, as tests/physics/test_body.c)
 * and CPU microseconds per tick (this thread's CPU time); out_fell: the
 * root went under half its start height. */
static double track_walk(const anim_database_t *db, const anim_physics_model_t *pm, int r, double seconds,
                         double *out_us, int *out_fell) {
  char err[256];
  anim_physics_body_t *body = anim_physics_body_create(pm, err, sizeof err);
  int start = db->ranges[r].start, stop = db->ranges[r].stop, n = db->nbones;
  anim_pose_view_t p = anim_database_frame_pose(db, start);
  anim_physics_body_reset(body, p.positions, p.rotations);
  vec3 pos[ANIM_MAX_BONES], want[ANIM_MAX_BONES], got[ANIM_MAX_BONES];
  quat rot[ANIM_MAX_BONES], grot[ANIM_MAX_BONES];
  double sum = 0, cpu = 0;
  long count = 0;
  int ticks = (int)lround(seconds * db->frame_rate), fell = 0;
  float start_y = -1;
  for (int t = 0; t < ticks; t++) {
    int len = stop - start, k = (t + 1) % (2 * len - 2);
    int f = start + (k < len ? k : 2 * len - 2 - k);
    p = anim_database_frame_pose(db, f);
    double t0 = cpu_now();
    int rc = anim_physics_step(body, p.positions, p.rotations, pos, rot);
    cpu += cpu_now() - t0;
    if (rc) { fell = 2; break; }
    anim_fk(got, grot, pos, rot, db->skeleton.parents, n);
    anim_fk(want, grot, p.positions, p.rotations, db->skeleton.parents, n);
    if (start_y < 0) start_y = want[pm->root].y;
    if (got[pm->root].y < 0.5f * start_y) fell = 1;
    for (int b = 1; b < n; b++) sum += vec3_length(vec3_sub(got[b], want[b])), count++;
  }
  anim_physics_body_free(body);
  *out_us = cpu / ticks * 1e6;
  *out_fell = fell;
  return count ? sum / count : INFINITY;
}

static int load_set(int s, const char *shared, anim_database_t *out_db) {
  char path[1024], err[512];
  snprintf(path, sizeof path, "%s/data/mocap/%s", shared, sets[s].folder);
  anim_clip_list_t clips = {NULL, 0, 0};
  anim_bvh_options_t bo = {sets[s].scale};
  if (anim_import_path(&clips, path, &bo, err, sizeof err)) return fprintf(stderr, "%s\n", err), -1;
  anim_build_options_t o;
  anim_build_options_default(&o), o.mirror = 1;
  int rc = anim_database_build(out_db, sets[s].folder, clips.clips, clips.count, &o, err, sizeof err);
  anim_clip_list_free(&clips);
  if (rc) fprintf(stderr, "%s: %s\n", sets[s].folder, err);
  return rc;
}

/* Levers tried (docs/physics.md): "-1" keeps the model's setting. */
static const lever_t levers[] = {
    {"model defaults", 0, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0},
    {"2 substeps", 2, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0},
    {"3 substeps", 3, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0},
    {"2 substeps implicit", 2, -1, -1, -1, -1, mjINT_IMPLICIT, 0, 0, 0, 0, 0},
    {"Newton tol 1e-4", 0, -1, -1, -1, -1, -1, 1e-4, 0, 0, 0, 0},
    {"CG", 0, mjSOL_CG, -1, -1, -1, -1, 0, 0, 0, 0, 0},
    {"PGS 20 it", 0, mjSOL_PGS, 20, -1, -1, -1, 0, 0, 0, 0, 0},
    {"elliptic cone", 0, -1, -1, mjCONE_ELLIPTIC, -1, -1, 0, 0, 0, 0, 0},
    {"dense jacobian", 0, -1, -1, -1, mjJAC_DENSE, -1, 0, 0, 0, 0, 0},
    {"sparse jacobian", 0, -1, -1, -1, mjJAC_SPARSE, -1, 0, 0, 0, 0, 0},
    {"no warmstart", 0, -1, -1, -1, -1, -1, 0, mjDSBL_WARMSTART, 0, 0, 0},
    {"every bone a body", 0, -1, -1, -1, -1, -1, 0, 0, 1, 1, 0},
    {"still joints free", 0, -1, -1, -1, -1, -1, 0, 0, 0, 1, 0},
    {"upper armature 0.01", 0, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0.01f},
    {"upper armature 0.1", 0, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0.1f},
    {"upper armature 1", 0, -1, -1, -1, -1, -1, 0, 0, 0, 0, 1.0f},
};
#define NLEVERS (int)(sizeof levers / sizeof levers[0])

/* pick: NULL (every lever) or indices as "0,2". */
static int lever_picked(const char *pick, int l) {
  if (!pick) return 1;
  for (const char *p = pick; *p;) {
    char *end;
    long i = strtol(p, &end, 10);
    if (end == p) return 0;
    if (i == l) return 1;
    p = *end == ',' ? end + 1 : end;
  }
  return 0;
}


/* ---- --ratio: a tick against the engine's own steps, the same states ------- */

/* The engine's own step of the same humanoid: the same MJCF (bodies,
 * joints, geoms, contact pairs) with MuJoCo's stock solver options
 * (Newton, 100 iterations, tolerance 1e-8), no drives. Each tick the
 * tracked body's state (qpos, qvel, warm start) and its last applied
 * forces are copied into the reference, which then takes the tick's
 * substeps with mj_step; the two are timed alternately, tick by tick, in
 * this thread's CPU time. Out: CPU us per tick of anim_physics_step, of
 * the reference's substeps mj_step, and of one reference mj_step. */
static void engine_tick(const mjModel *m, mjData *ref, int substeps) {
  for (int k = 0; k < substeps; k++) mj_step(m, ref);
}

static void ratio_walk(const anim_database_t *db, const anim_physics_model_t *pm, int r, double seconds, double *out_tick,
                       double *out_engine_tick, double *out_engine_step) {
  char err[256];
  anim_physics_body_t *body = anim_physics_body_create(pm, err, sizeof err);
  mjModel *stock = mj_copyModel(NULL, pm->m);
  stock->opt.solver = mjSOL_NEWTON, stock->opt.iterations = 100, stock->opt.tolerance = 1e-8;
  mjData *ref = mj_makeData(stock);
  int start = db->ranges[r].start, stop = db->ranges[r].stop, nq = pm->m->nq, nv = pm->m->nv;
  anim_pose_view_t p = anim_database_frame_pose(db, start);
  anim_physics_body_reset(body, p.positions, p.rotations);
  int ticks = (int)lround(seconds * db->frame_rate);
  double tick = 0, engine = 0;
  for (int t = 0; t < ticks; t++) {
    int len = stop - start, k = (t + 1) % (2 * len - 2);
    int f = start + (k < len ? k : 2 * len - 2 - k);
    p = anim_database_frame_pose(db, f);
    memcpy(ref->qpos, body->d->qpos, sizeof(mjtNum) * (size_t)nq);
    memcpy(ref->qvel, body->d->qvel, sizeof(mjtNum) * (size_t)nv);
    memcpy(ref->qacc_warmstart, body->d->qacc_warmstart, sizeof(mjtNum) * (size_t)nv);
    memcpy(ref->qfrc_applied, body->d->qfrc_applied, sizeof(mjtNum) * (size_t)nv);
    double t0 = cpu_now();
    engine_tick(stock, ref, pm->substeps);
    double t1 = cpu_now();
    anim_physics_step(body, p.positions, p.rotations, NULL, NULL);
    double t2 = cpu_now();
    engine += t1 - t0, tick += t2 - t1;
  }
  *out_tick = tick / ticks * 1e6;
  *out_engine_tick = engine / ticks * 1e6;
  *out_engine_step = *out_engine_tick / pm->substeps;
  mj_deleteData(ref);
  mj_deleteModel(stock);
  anim_physics_body_free(body);
}

static int ratio_rounds; /* --ratio: rounds of ratio_walk on lever 0's model */

static int track_main(const char *shared, double seconds, int rounds, const char *only, const char *pick) {
  printf("%-18s %-28s %8s %8s %5s\n", "database", "lever", "err cm", "us/tick", "fell");
  for (int s = -1; s < NSETS; s++) {
    const char *name = s < 0 ? "default" : sets[s].folder;
    if (only && strcmp(only, name)) continue;
    char err[512];
    anim_database_t db;
    if (s < 0 ? anim_procgen_database(&db, NULL, err, sizeof err) : load_set(s, shared, &db)) return 1;
    const char *walk = s < 0 ? "walk" : sets[s].walk;
    int r = -1;
    for (int i = 0; i < db.nranges; i++)
      if (!strcmp(db.ranges[i].name, walk)) r = i;
    if (r < 0) return fprintf(stderr, "%s: no range %s\n", name, walk), 1;
    anim_physics_model_t *pm[NLEVERS];
    for (int l = 0; l < NLEVERS; l++) {
      pm[l] = NULL;
      if (!lever_picked(pick, l)) continue;
      anim_physics_model_options_t o;
      anim_physics_model_options_default(&o);
      if (levers[l].substeps) o.substeps = levers[l].substeps;
      if (levers[l].no_weld) o.weld_leaves = 0;
      if (levers[l].no_fix) o.fix_still = 0;
      if (levers[l].armature > 0) o.upper_armature = levers[l].armature;
      pm[l] = anim_physics_model_create(&db, &o, err, sizeof err);
      if (!pm[l]) return fprintf(stderr, "%s: %s\n", name, err), 1;
      lever_apply(pm[l]->m, &levers[l]);
    }
    /* Rounds alternate the levers; the error is deterministic, the CPU
     * time is the median over the rounds. */
    double e[NLEVERS], us[NLEVERS][16];
    int fell[NLEVERS];
    for (int k = 0; k < rounds; k++)
      for (int l = 0; l < NLEVERS; l++)
        if (pm[l]) e[l] = track_walk(&db, pm[l], r, seconds, &us[l][k], &fell[l]);
    for (int l = 0; l < NLEVERS; l++) {
      if (!pm[l]) continue;
      qsort(us[l], (size_t)rounds, sizeof(double), cmp_double);
      printf("%-18s %-28s %8.2f %8.1f %5s\n", name, levers[l].name, 100 * e[l], us[l][rounds / 2],
             fell[l] == 2 ? "DIVERGED" : fell[l] ? "yes" : "no");
    }
    if (ratio_rounds) {
      double a[16], b[16], c[16];
      for (int k = 0; k < ratio_rounds; k++) ratio_walk(&db, pm[0] ? pm[0] : NULL, r, seconds, &a[k], &b[k], &c[k]);
      qsort(a, (size_t)ratio_rounds, sizeof(double), cmp_double);
      qsort(b, (size_t)ratio_rounds, sizeof(double), cmp_double);
      qsort(c, (size_t)ratio_rounds, sizeof(double), cmp_double);
      double rt = a[ratio_rounds / 2], rb = b[ratio_rounds / 2], rc = c[ratio_rounds / 2];
      printf("%-18s ratio: tick %.1f us, engine's %d steps %.1f us (%.2fx), one engine step %.1f us (%.2fx)\n", name, rt,
             pm[0]->substeps, rb, rt / rb, rc, rt / rc);
    }
    for (int l = 0; l < NLEVERS; l++) anim_physics_model_free(pm[l]);
    fflush(stdout);
    anim_database_free(&db);
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "--ratio")) {
    /* --ratio [seconds [rounds [database|all]]]: the model defaults only. */
    const char *shared = getenv("ANIM_SHARED_DIR") ? getenv("ANIM_SHARED_DIR") : "../shared";
    ratio_rounds = argc > 3 ? atoi(argv[3]) : 3;
    if (ratio_rounds < 1 || ratio_rounds > 16) ratio_rounds = 3;
    const char *only = argc > 4 && strcmp(argv[4], "all") ? argv[4] : NULL;
    return track_main(shared, argc > 2 ? atof(argv[2]) : 60, 1, only, "0");
  }
  if (argc > 1 && !strcmp(argv[1], "--track")) {
    const char *shared = getenv("ANIM_SHARED_DIR") ? getenv("ANIM_SHARED_DIR") : "../shared";
    double seconds = argc > 2 ? atof(argv[2]) : 60;
    int rounds = argc > 3 ? atoi(argv[3]) : 3;
    if (rounds < 1 || rounds > 16) rounds = 3;
    const char *only = argc > 4 && strcmp(argv[4], "all") ? argv[4] : NULL;
    return track_main(shared, seconds, rounds, only, argc > 5 ? argv[5] : NULL);
  }
  if (argc > 1 && !strcmp(argv[1], "--quick")) cost_steps = 600;
  char err[512];
  anim_database_t db;
  if (anim_procgen_database(&db, NULL, err, sizeof err)) return fprintf(stderr, "%s\n", err), 1;
  anim_physics_model_options_t o;
  anim_physics_model_options_default(&o);
  model = anim_physics_model_create(&db, &o, err, sizeof err);
  if (!model) return fprintf(stderr, "%s\n", err), 1;
  printf("humanoid: %d bodies, %d ball joints + a free root (%d degrees of freedom), %d capsules, %.0f kg, step %.5f s\n",
         model->m->nbody - 1, model->m->njnt - 1, model->m->nv, model->ncapsules, model->total_mass, H);
  printf("MuJoCo %s\n\n", mj_versionString());

  /* Rounds, medians: the machine is shared, its load moves. */
  double v[2][7], c = 0;
  for (int r = 0; r < 7; r++) {
    v[0][r] = mj_cost(0), c += mj_contacts;
    v[1][r] = tick_cost_of(0);
  }
  for (int k = 0; k < 2; k++) qsort(v[k], 7, sizeof(double), cmp_double);
  double mj = v[0][3], tick = v[1][3];
  printf("step cost (median of 7 rounds of %d steps; the body released in its rest pose,\n"
         "undriven, falls and lies: %.1f contacts per step on average):\n", cost_steps, c / 7);
  printf("  MuJoCo mj_step                      %7.1f us\n", mj);
  printf("  anim_physics_step, standing (1 tick: 4 mj_step + drives) %.1f us, of which mj_step %.0f%%:\n"
         "    the tick costs %.2f x the engine's own 4 steps on the same state\n\n", tick, 100 * last_engine_share, 1 / last_engine_share);

  int crashed;
  int mj_ok = runs_ok(mj_two_threads_match, 0, &crashed);
  printf("%d bodies on 1 thread vs 2 threads, %d steps, 5 runs (each in a child process):\n", NBODIES, DET_STEPS);
  printf("  MuJoCo (one shared mjModel, one mjData per body): %d/5 bit-identical, %d crashed\n", mj_ok, crashed);
  anim_physics_model_free((anim_physics_model_t *)model);
  anim_database_free(&db);
  return 0;
}
