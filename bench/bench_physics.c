/*
 * bench_physics.c: the engine choice for physics/ measured (issue 32):
 * MuJoCo (libmujoco-dev 2.2.2) against ODE (libode-dev 0.16.2) on the same
 * humanoid: the body model physics/ builds for the default database (one
 * capsule per bone, de Leva masses, 70 kg, ball joints, on a ground plane),
 * built once through MuJoCo and once through ODE's API with the same
 * bodies, masses, joints and step (1/240 s).
 *
 * Figures:
 *  1. step cost: microseconds per engine step of one body standing on the
 *     ground (no drives: it falls and lies), median of 7 interleaved runs
 *     of 2400 steps; and anim_physics_step (a 60 Hz tick: 4 engine steps
 *     and the drives) against the mj_step time inside it (MuJoCo's timers);
 *  2. determinism: 8 bodies pushed in different directions, stepped 600
 *     times on 1 thread, then split over 2 threads: states bit-identical?
 *  3. two worlds on two threads: 5 runs in child processes (a crash is
 *     counted, not fatal); a run passes when it ends and matches the
 *     single-threaded states bit for bit.
 * Usage: bench_physics [--quick]. Prints a table (docs/physics.md).
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
#include <ode/ode.h>
#include <ode/threading_impl.h>

#include "../physics/body_internal.h"
#include "offline/procgen.h"

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

static double mj_contacts, ode_contacts; /* mean contacts per step in the last cost run */

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

/* ---- ODE: the same bodies ------------------------------------------------ */

typedef struct {
  dWorldID world;
  dSpaceID space;
  dGeomID ground;
  dJointGroupID contacts;
  dBodyID body[ANIM_MAX_BONES];
  int quick;
  dThreadingImplementationID threading; /* own self-threaded implementation, or NULL: ODE's default */
  long ncontacts;
} ode_world_t;

static void ode_near(void *data, dGeomID a, dGeomID b) {
  ode_world_t *w = data;
  if (a != w->ground && b != w->ground) return; /* the ground only, as the MuJoCo model */
  dContact c[4];
  int n = dCollide(a, b, 4, &c[0].geom, sizeof(dContact));
  w->ncontacts += n;
  for (int i = 0; i < n; i++) {
    c[i].surface.mode = dContactApprox1;
    c[i].surface.mu = 1.0;
    dJointID j = dJointCreateContact(w->world, w->contacts, &c[i]);
    dJointAttach(j, dGeomGetBody(c[i].geom.g1), dGeomGetBody(c[i].geom.g2));
  }
}

/* World position of bone b in the rest pose standing. */
static void rest_position(int b, double *out) {
  vec3 p = vec3_zero();
  for (int a = b; a != model->root; a = model->parents[a]) p = vec3_add(p, model->offsets[a]);
  out[0] = p.x, out[1] = p.y + model->rest_root_height, out[2] = p.z;
}

static void ode_build(ode_world_t *w, int quick) {
  memset(w, 0, sizeof *w);
  w->quick = quick & 1;
  w->world = dWorldCreate();
  if (quick & 2) {
    /* ODE's default stepping runs through one process-wide "self-threaded"
     * implementation; a world can be given its own instead. */
    w->threading = dThreadingAllocateSelfThreadedImplementation();
    dWorldSetStepThreadingImplementation(w->world, dThreadingImplementationGetFunctions(w->threading), w->threading);
  }
  dWorldSetGravity(w->world, 0, -9.81, 0);
  dWorldSetQuickStepNumIterations(w->world, 20);
  w->space = dSimpleSpaceCreate(0);
  w->ground = dCreatePlane(w->space, 0, 1, 0, 0);
  w->contacts = dJointGroupCreate(0);
  for (int b = 1; b < model->nbones; b++) {
    if (!model->sim[b]) continue;
    /* The body's origin at its centre of mass (ODE requires it), its capsules offset from there. */
    double jp[3], com[3] = {0, 0, 0}, mass = 0;
    rest_position(b, jp);
    for (int i = 0; i < model->ncapsules; i++) {
      const anim_physics_capsule_t *c = &model->capsules[i];
      if (c->bone != b) continue;
      double mid[3] = {jp[0], jp[1], jp[2]};
      if (c->child >= 0) {
        vec3 o = model->offsets[c->child];
        mid[0] += 0.5 * o.x, mid[1] += 0.5 * o.y, mid[2] += 0.5 * o.z;
      }
      for (int k = 0; k < 3; k++) com[k] += c->mass * mid[k];
      mass += c->mass;
    }
    for (int k = 0; k < 3; k++) com[k] /= mass;
    dBodyID body = dBodyCreate(w->world);
    dBodySetPosition(body, com[0], com[1], com[2]);
    dMass total;
    dMassSetZero(&total);
    for (int i = 0; i < model->ncapsules; i++) {
      const anim_physics_capsule_t *c = &model->capsules[i];
      if (c->bone != b) continue;
      double mid[3] = {jp[0], jp[1], jp[2]}, dir[3] = {0, 0, 1};
      if (c->child >= 0 && c->length > 1e-4f) {
        vec3 o = model->offsets[c->child];
        mid[0] += 0.5 * o.x, mid[1] += 0.5 * o.y, mid[2] += 0.5 * o.z;
        dir[0] = o.x / c->length, dir[1] = o.y / c->length, dir[2] = o.z / c->length;
      }
      dMatrix3 R;
      dRFromZAxis(R, dir[0], dir[1], dir[2]);
      dMass m;
      dGeomID g;
      if (c->child >= 0 && c->length > 1e-4f) {
        dMassSetCapsuleTotal(&m, c->mass, 3, c->radius, c->length);
        g = dCreateCapsule(w->space, c->radius, c->length);
      } else {
        dMassSetSphereTotal(&m, c->mass, c->radius);
        g = dCreateSphere(w->space, c->radius);
      }
      dMassRotate(&m, R);
      dMassTranslate(&m, mid[0] - com[0], mid[1] - com[1], mid[2] - com[2]);
      dMassAdd(&total, &m);
      dGeomSetBody(g, body);
      dGeomSetOffsetWorldPosition(g, mid[0], mid[1], mid[2]);
      dGeomSetOffsetWorldRotation(g, R);
    }
    /* Recentre what rounding left off-centre (ODE checks c == 0). */
    dMassTranslate(&total, -total.c[0], -total.c[1], -total.c[2]);
    dBodySetMass(body, &total);
    w->body[b] = body;
    if (b != model->root) {
      dJointID j = dJointCreateBall(w->world, 0);
      dJointAttach(j, w->body[model->parents[b]], body);
      dJointSetBallAnchor(j, jp[0], jp[1], jp[2]);
    }
  }
}

static void ode_step(ode_world_t *w) {
  dSpaceCollide(w->space, w, ode_near);
  if (w->quick) dWorldQuickStep(w->world, H);
  else dWorldStep(w->world, H);
  dJointGroupEmpty(w->contacts);
}

static void ode_free(ode_world_t *w) {
  dJointGroupDestroy(w->contacts);
  dSpaceDestroy(w->space);
  if (w->threading) dWorldSetStepThreadingImplementation(w->world, NULL, NULL);
  dWorldDestroy(w->world);
  if (w->threading) dThreadingFreeImplementation(w->threading);
}

static double ode_step_cost(int quick, int steps) {
  ode_world_t w;
  ode_build(&w, quick);
  double t0 = now();
  for (int s = 0; s < steps; s++) ode_step(&w);
  double us = (now() - t0) / steps * 1e6;
  ode_contacts = (double)w.ncontacts / steps;
  ode_free(&w);
  return us;
}

static void ode_run(int i, int quick, double *out_state) {
  ode_world_t w;
  ode_build(&w, quick);
  dBodySetLinearVel(w.body[model->root], 0.5 * cos(i), 0, 0.5 * sin(i));
  for (int s = 0; s < DET_STEPS; s++) ode_step(&w);
  int k = 0;
  for (int b = 1; b < model->nbones; b++) {
    if (!w.body[b]) continue;
    memcpy(out_state + k, dBodyGetPosition(w.body[b]), 3 * sizeof(double));
    memcpy(out_state + k + 3, dBodyGetQuaternion(w.body[b]), 4 * sizeof(double));
    k += 7;
  }
  ode_free(&w);
}

typedef struct {
  int first, count, quick;
  double (*states)[1024];
} ode_job_t;

static void *ode_thread(void *arg) {
  ode_job_t *j = arg;
  dAllocateODEDataForThread(dAllocateMaskAll);
  for (int i = j->first; i < j->first + j->count; i++) ode_run(i, j->quick, j->states[i]);
  dCleanupODEAllDataForThread();
  return NULL;
}

static void ode_states(int nthreads, int quick, double (*states)[1024]) {
  memset(states, 0, sizeof(double) * 1024 * NBODIES);
  pthread_t th[2];
  ode_job_t jobs[2];
  int per = NBODIES / nthreads;
  dRandSetSeed(1);
  for (int t = 0; t < nthreads; t++) {
    jobs[t] = (ode_job_t){t * per, per, quick, states};
    pthread_create(&th[t], NULL, ode_thread, &jobs[t]);
  }
  for (int t = 0; t < nthreads; t++) pthread_join(th[t], NULL);
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

static int ode_two_threads_match(int quick) {
  static double one[NBODIES][1024], two[NBODIES][1024];
  ode_states(1, quick, one);
  ode_states(2, quick, two);
  return memcmp(one, two, sizeof one) ? 1 : 0;
}

static int cost_steps = 2400;
static double mj_cost(int unused) { return mj_step_cost(cost_steps); }
static double ode_cost(int quick) { return ode_step_cost(quick, cost_steps); }
static double tick_cost_of(int unused) { return tick_cost(cost_steps / 4); }

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "--quick")) cost_steps = 600;
  char err[512];
  anim_database_t db;
  if (anim_procgen_database(&db, NULL, err, sizeof err)) return fprintf(stderr, "%s\n", err), 1;
  anim_physics_model_options_t o;
  anim_physics_model_options_default(&o);
  model = anim_physics_model_create(&db, &o, err, sizeof err);
  if (!model) return fprintf(stderr, "%s\n", err), 1;
  dInitODE2(0);
  int nbody = 0;
  for (int b = 1; b < model->nbones; b++) nbody += model->sim[b];
  printf("humanoid: %d bodies, %d ball joints + a free root, %d capsules, %.0f kg, step %.5f s\n", nbody, nbody - 1,
         model->ncapsules, model->total_mass, H);
  printf("MuJoCo %s, ODE %s (%s)\n\n", mj_versionString(), "0.16.2", dGetConfiguration());

  /* Interleaved rounds, medians: the machine is shared, its load moves. */
  double v[4][7], c[2] = {0, 0};
  for (int r = 0; r < 7; r++) {
    v[0][r] = mj_cost(0), c[0] += mj_contacts;
    v[1][r] = ode_cost(1), c[1] += ode_contacts;
    v[2][r] = ode_cost(0);
    v[3][r] = tick_cost_of(0);
  }
  for (int k = 0; k < 4; k++) qsort(v[k], 7, sizeof(double), cmp_double);
  double mj = v[0][3], ode_q = v[1][3], ode_s = v[2][3], tick = v[3][3];
  printf("step cost (median of 7 interleaved rounds of %d steps; the body released in its rest pose,\n"
         "undriven, falls and lies: MuJoCo %.1f contacts per step on average, ODE %.1f):\n", cost_steps, c[0] / 7, c[1] / 7);
  printf("  MuJoCo mj_step                      %7.1f us\n", mj);
  printf("  ODE dWorldQuickStep (20 iterations) %7.1f us (with its collision pass) = %.2f x MuJoCo\n", ode_q, ode_q / mj);
  printf("  ODE dWorldStep (Dantzig LCP)        %7.1f us (with its collision pass) = %.2f x MuJoCo\n", ode_s, ode_s / mj);
  printf("  anim_physics_step, standing (1 tick: 4 mj_step + drives) %.1f us, of which mj_step %.0f%%:\n"
         "    the tick costs %.2f x the engine's own 4 steps on the same state\n\n", tick, 100 * last_engine_share, 1 / last_engine_share);

  int crashed;
  int mj_ok = runs_ok(mj_two_threads_match, 0, &crashed);
  printf("%d bodies on 1 thread vs 2 threads, %d steps, 5 runs (each in a child process):\n", NBODIES, DET_STEPS);
  printf("  MuJoCo (one shared mjModel, one mjData per body): %d/5 bit-identical, %d crashed\n", mj_ok, crashed);
  int ode_ok = runs_ok(ode_two_threads_match, 1, &crashed);
  printf("  ODE QuickStep (one world per body, per-thread ODE data): %d/5 bit-identical, %d crashed\n", ode_ok, crashed);
  ode_ok = runs_ok(ode_two_threads_match, 0, &crashed);
  printf("  ODE dWorldStep (one world per body, per-thread ODE data): %d/5 bit-identical, %d crashed\n", ode_ok, crashed);
  ode_ok = runs_ok(ode_two_threads_match, 3, &crashed);
  printf("  ODE QuickStep, each world its own threading implementation: %d/5 bit-identical, %d crashed\n", ode_ok, crashed);
  ode_ok = runs_ok(ode_two_threads_match, 2, &crashed);
  printf("  ODE dWorldStep, each world its own threading implementation: %d/5 bit-identical, %d crashed\n", ode_ok, crashed);
  anim_physics_model_free((anim_physics_model_t *)model);
  anim_database_free(&db);
  dCloseODE();
  return 0;
}
