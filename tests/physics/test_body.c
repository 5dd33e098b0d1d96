/*
 * test_body.c: the physics body of a database's skeleton (physics/body.h)
 * on the default database and every shared mocap folder.
 *
 * Bad input first (NULL, options and drive fields out of range, a bone out
 * of range), then per database: the total mass, capsule lengths equal to
 * the bone lengths, the model standing in its rest pose on the ground for
 * 10 s with the drives on (and falling limp), a powered body tracking a
 * walk clip (mean joint error, thresholds below), a kinematic one on its
 * target, two runs bit-identical, no allocation per step.
 * Figures printed per dataset (docs/physics.md quotes them).
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

#include "alloc_counter.h"
#include "anim_error.h"
#include "body.h"
#include "body_internal.h" /* test_divergence poisons a body's MuJoCo state */
#include "offline/build.h"
#include "offline/import.h"
#include "offline/procgen.h"
#include "pose/kinematics.h"
#include "shared_data.h"

/* Standing: the root stays within this share of its rest height for 10 s
 * (a fall puts the hips near the ground, under 0.3 of it). */
#define STAND_SECONDS 10
#define STAND_MIN_SHARE 0.9f
/* Tracking a walk for 60 s (the duration): mean joint position
 * error (all bones, every tick), m. Measured 2.1-3.4 cm over the
 * datasets, the root (held by the limited stabiliser) 0.6-1.4 cm of it
 * (docs/physics.md); the target is 3 cm, met on four of five
 * (games105: 3.39). The bound catches a regression, not the target. Never falls: the
 * simulated root stays above TRACK_MIN_ROOT_SHARE of the target's height. */
#define TRACK_MAX_MEAN_M 0.04f
#define TRACK_SECONDS 60
#define TRACK_MIN_ROOT_SHARE 0.5f

static void default_database(anim_database_t *out_db) {
  char err[256];
  if (anim_procgen_database(out_db, NULL, err, sizeof err)) fail_msg("default database: %s", err);
}

/* ---- bad input -------------------------------------------------------------- */

static void test_invalid(void **state) {
  (void)state;
  char err[256];
  anim_database_t db;
  default_database(&db);
  assert_null(anim_physics_model_create(NULL, NULL, err, sizeof err));
  assert_string_equal(err, "db: NULL");
  anim_physics_model_options_t o;
  anim_physics_model_options_default(&o);
  o.total_mass = NAN;
  assert_null(anim_physics_model_create(&db, &o, err, sizeof err));
  assert_non_null(strstr(err, "total_mass"));
  anim_physics_model_options_default(&o);
  o.substeps = 0;
  assert_null(anim_physics_model_create(&db, &o, err, sizeof err));
  assert_non_null(strstr(err, "substeps"));
  anim_physics_model_options_default(&o);
  o.tick = -1.0f;
  assert_null(anim_physics_model_create(&db, &o, err, sizeof err));
  assert_non_null(strstr(err, "tick"));
  anim_physics_model_options_default(&o);
  o.weld_leaves = 2;
  assert_null(anim_physics_model_create(&db, &o, err, sizeof err));
  assert_non_null(strstr(err, "weld_leaves"));
  anim_physics_model_options_default(&o);
  o.fix_still = -1;
  assert_null(anim_physics_model_create(&db, &o, err, sizeof err));
  assert_non_null(strstr(err, "fix_still"));
  anim_physics_model_options_default(&o);
  o.upper_armature = NAN;
  assert_null(anim_physics_model_create(&db, &o, err, sizeof err));
  assert_non_null(strstr(err, "upper_armature"));

  anim_physics_model_t *model = anim_physics_model_create(&db, NULL, err, sizeof err);
  if (!model) fail_msg("%s", err);
  anim_physics_body_t *body = anim_physics_body_create(model, err, sizeof err);
  assert_non_null(body);
  anim_physics_model_info_t info;
  anim_physics_model_info(model, &info);
  anim_physics_drive_t drive, bad;
  anim_physics_drive_default(model, &drive);
  assert_int_equal(anim_physics_body_set_drive(body, 0, &drive, err, sizeof err), ANIM_ERANGE);
  assert_int_equal(anim_physics_body_set_drive(body, info.root, &drive, err, sizeof err), ANIM_ERANGE);
  assert_int_equal(anim_physics_body_set_drive(body, info.nbones, &drive, err, sizeof err), ANIM_ERANGE);
  /* A leaf (welded into its parent, no joint) keeps a drive it is given. */
  int leaf = -1;
  for (int b = info.root + 1; b < info.nbones && leaf < 0; b++) {
    int children = 0;
    for (int c = 1; c < info.nbones; c++) children += db.skeleton.parents[c] == b;
    if (!children) leaf = b;
  }
  assert_true(leaf > 0);
  assert_int_equal(anim_physics_body_set_drive(body, leaf, &drive, err, sizeof err), 0);
  int bone = info.root + 1;
  bad = drive, bad.mode = 7;
  assert_int_equal(anim_physics_body_set_drive(body, bone, &bad, err, sizeof err), ANIM_EINVAL);
  assert_non_null(strstr(err, "mode"));
  bad = drive, bad.halflife = 0.0f;
  assert_int_equal(anim_physics_body_set_drive(body, bone, &bad, err, sizeof err), ANIM_EINVAL);
  assert_non_null(strstr(err, "halflife"));
  bad = drive, bad.damping_ratio = INFINITY;
  assert_int_equal(anim_physics_body_set_drive(body, bone, &bad, err, sizeof err), ANIM_EINVAL);
  assert_non_null(strstr(err, "damping_ratio"));
  bad = drive, bad.max_torque = -1.0f;
  assert_int_equal(anim_physics_body_set_drive(body, bone, &bad, err, sizeof err), ANIM_EINVAL);
  assert_non_null(strstr(err, "max_torque"));
  anim_physics_root_t root;
  anim_physics_root_default(model, &root);
  root.max_force = NAN;
  assert_int_equal(anim_physics_body_set_root(body, &root, err, sizeof err), ANIM_EINVAL);
  assert_non_null(strstr(err, "max_force"));

  /* A non-finite target leaves the body as it was. */
  anim_pose_view_t p = anim_database_frame_pose(&db, 0);
  vec3 pos[ANIM_MAX_BONES];
  quat rot[ANIM_MAX_BONES];
  memcpy(pos, p.positions, sizeof(vec3) * p.count);
  memcpy(rot, p.rotations, sizeof(quat) * p.count);
  assert_int_equal(anim_physics_body_reset(body, pos, rot), 0);
  rot[3].x = NAN;
  assert_int_equal(anim_physics_step(body, pos, rot, NULL, NULL), ANIM_ENONFINITE);
  assert_int_equal(anim_physics_step(body, NULL, rot, NULL, NULL), ANIM_EINVAL);

  anim_physics_body_free(body);
  anim_physics_model_free(model);
  anim_database_free(&db);
}

/* ---- behaviour per database ------------------------------------------------- */

static void check_model(const char *name, const anim_database_t *db, const anim_physics_model_t *model) {
  anim_physics_model_info_t info;
  anim_physics_model_info(model, &info);
  double mass = 0, capsule_mass = 0;
  for (int b = 0; b < info.nbones; b++) mass += info.body_mass[b];
  for (int i = 0; i < info.ncapsules; i++) capsule_mass += info.capsules[i].mass;
  if (fabs(mass - 70.0) > 1e-3 || fabs(capsule_mass - 70.0) > 1e-3)
    fail_msg("%s: total mass %.4f kg (capsules %.4f), want 70", name, mass, capsule_mass);
  int links = 0;
  for (int i = 0; i < info.ncapsules; i++) {
    const anim_physics_capsule_t *c = &info.capsules[i];
    if (c->child < 0) continue;
    links++;
    float bone = vec3_length(db->skeleton.offsets[c->child]);
    if (fabsf(c->length - bone) > 1e-6f)
      fail_msg("%s: capsule of bone %s is %.4f m, the bone %.4f m", name, db->skeleton.names[c->child], c->length, bone);
    assert_int_equal(db->skeleton.parents[c->child], c->bone);
  }
  /* Every bone below the root hangs from a capsule. */
  int below = 0;
  for (int b = 1; b < info.nbones; b++)
    for (int a = db->skeleton.parents[b]; a >= 0; a = db->skeleton.parents[a])
      if (a == info.root) { below++; break; }
  assert_int_equal(links, below);
  printf("  %-18s %2d bones, %2d capsules, root %s at %.3f m\n", name, info.nbones, info.ncapsules,
         db->skeleton.names[info.root], info.rest_root_height);
}

/* 10 s holding a pose with the drives on: the root stays up. The pose is
 * the rest pose where the skeleton stands in it, else (Bandai Namco's rest
 * pose lies along the ground: its root at 8 cm) the walk's first frame. */
static void stand(const char *name, const anim_database_t *db, const anim_physics_model_t *model, int frame) {
  char err[256];
  anim_physics_model_info_t info;
  anim_physics_model_info(model, &info);
  anim_physics_body_t *body = anim_physics_body_create(model, err, sizeof err);
  assert_non_null(body);
  vec3 pos[ANIM_MAX_BONES], out_pos[ANIM_MAX_BONES], g[ANIM_MAX_BONES];
  quat rot[ANIM_MAX_BONES], out_rot[ANIM_MAX_BONES], grot[ANIM_MAX_BONES];
  const char *what = "rest pose";
  if (info.rest_root_height > 0.5f) {
    for (int b = 0; b < info.nbones; b++) pos[b] = db->skeleton.offsets[b], rot[b] = quat_identity();
    for (int b = 0; b <= info.root; b++) pos[b] = vec3_zero(); /* bone 0 and any bone above the hips at the origin */
    pos[info.root] = vec3_make(0.0f, info.rest_root_height, 0.0f);
  } else {
    anim_pose_view_t p = anim_database_frame_pose(db, frame);
    memcpy(pos, p.positions, sizeof(vec3) * p.count);
    memcpy(rot, p.rotations, sizeof(quat) * p.count);
    what = "walk's first frame";
  }
  assert_int_equal(anim_physics_body_reset(body, pos, rot), 0);
  anim_fk(g, grot, pos, rot, db->skeleton.parents, info.nbones);
  float start = g[info.root].y, low = INFINITY;
  int ticks = (int)lroundf(STAND_SECONDS / info.tick);
  for (int t = 0; t < ticks; t++) {
    assert_int_equal(anim_physics_step(body, pos, rot, out_pos, out_rot), 0);
    anim_fk(g, grot, out_pos, out_rot, db->skeleton.parents, info.nbones);
    if (g[info.root].y < low) low = g[info.root].y;
  }
  float share = low / start;
  printf("  %-18s holds its %s 10 s: lowest root %.3f m of %.3f (%.3f)\n", name, what, low, start, share);
  if (share < STAND_MIN_SHARE) fail_msg("%s: fell holding its %s: root down to %.3f m of %.3f", name, what, low, start);

  /* The same pose limp (every joint and the root): it falls within 3 s,
   * so what holds it up above is the drives. */
  assert_int_equal(anim_physics_body_reset(body, pos, rot), 0);
  anim_physics_drive_t limp;
  anim_physics_drive_default(model, &limp);
  limp.mode = ANIM_PHYSICS_LIMP;
  for (int b = 1; b < info.nbones; b++)
    if (b != info.root) anim_physics_body_set_drive(body, b, &limp, NULL, 0); /* bones above the hips refuse: fine */
  anim_physics_root_t root;
  anim_physics_root_default(model, &root);
  root.mode = ANIM_PHYSICS_LIMP;
  assert_int_equal(anim_physics_body_set_root(body, &root, err, sizeof err), 0);
  low = INFINITY;
  for (int t = 0; t < (int)lroundf(3.0f / info.tick); t++) {
    assert_int_equal(anim_physics_step(body, pos, rot, out_pos, out_rot), 0);
    anim_fk(g, grot, out_pos, out_rot, db->skeleton.parents, info.nbones);
    if (g[info.root].y < low) low = g[info.root].y;
  }
  printf("  %-18s limp, falls to %.3f m within 3 s\n", name, low);
  if (low > 0.5f * start) fail_msg("%s: a limp body stayed up (root at %.3f m of %.3f)", name, low, start);
  anim_physics_body_free(body);
}

static double last_root_error; /* m, the last track's mean root error */
static double last_root_share; /* the last track's lowest simulated / target root height */
static int last_worst_bone;    /* the last track's bone with the largest mean error */
static double last_worst_error;

/* The powered body following a walk range: mean joint error (m) over the
 * ticks; out_hash: the simulated poses' bytes folded (determinism). */
static double track(const anim_database_t *db, const anim_physics_model_t *model, int start, int stop, uint64_t *out_hash,
                    long *out_allocs, int mode) {
  char err[256];
  anim_physics_body_t *body = anim_physics_body_create(model, err, sizeof err);
  assert_non_null(body);
  if (mode == ANIM_PHYSICS_KINEMATIC) {
    anim_physics_drive_t drive;
    anim_physics_drive_default(model, &drive);
    drive.mode = mode;
    for (int b = 1; b < db->nbones; b++) anim_physics_body_set_drive(body, b, &drive, NULL, 0); /* the root and above refuse */
    anim_physics_root_t root;
    anim_physics_root_default(model, &root);
    root.mode = mode;
    assert_int_equal(anim_physics_body_set_root(body, &root, err, sizeof err), 0);
  }
  int n = db->nbones;
  vec3 pos[ANIM_MAX_BONES], want[ANIM_MAX_BONES], got[ANIM_MAX_BONES];
  quat rot[ANIM_MAX_BONES], grot[ANIM_MAX_BONES];
  anim_pose_view_t p = anim_database_frame_pose(db, start);
  assert_int_equal(anim_physics_body_reset(body, p.positions, p.rotations), 0);
  double sum = 0, root_sum = 0, per_bone[ANIM_MAX_BONES] = {0}, root_share = INFINITY;
  long count = 0;
  anim_physics_model_info_t info;
  anim_physics_model_info(model, &info);
  int root = info.root;
  uint64_t hash = 1469598103934665603ull;
  int ticks = (int)lroundf(TRACK_SECONDS * db->frame_rate);
  anim_alloc_counter_open();
  for (int t = 0; t < ticks; t++) {
    /* Back and forth over the range keeps it going for TRACK_SECONDS. */
    int len = stop - start, k = (t + 1) % (2 * len - 2);
    int f = start + (k < len ? k : 2 * len - 2 - k);
    p = anim_database_frame_pose(db, f);
    if (anim_physics_step(body, p.positions, p.rotations, pos, rot)) fail_msg("diverged at tick %d", t);
    anim_fk(got, grot, pos, rot, db->skeleton.parents, n);
    anim_fk(want, grot, p.positions, p.rotations, db->skeleton.parents, n);
    for (int b = 1; b < n; b++) {
      double e = vec3_length(vec3_sub(got[b], want[b]));
      sum += e, count++, per_bone[b] += e;
    }
    root_sum += vec3_length(vec3_sub(got[root], want[root]));
    if (got[root].y / want[root].y < root_share) root_share = got[root].y / want[root].y;
    const unsigned char *bytes = (const unsigned char *)pos;
    for (size_t i = 0; i < sizeof(vec3) * (size_t)n; i++) hash = (hash ^ bytes[i]) * 1099511628211ull;
    bytes = (const unsigned char *)rot;
    for (size_t i = 0; i < sizeof(quat) * (size_t)n; i++) hash = (hash ^ bytes[i]) * 1099511628211ull;
  }
  *out_allocs = anim_alloc_counter_close();
  last_root_error = root_sum / ticks;
  last_root_share = root_share;
  last_worst_bone = 1;
  for (int b = 1; b < n; b++)
    if (per_bone[b] > per_bone[last_worst_bone]) last_worst_bone = b;
  last_worst_error = per_bone[last_worst_bone] / ticks;
  *out_hash = hash;
  anim_physics_body_free(body);
  return sum / (double)count;
}

static void check_database(const char *name, const anim_database_t *db, const char *walk) {
  char err[512];
  anim_physics_model_t *model = anim_physics_model_create(db, NULL, err, sizeof err);
  if (!model) fail_msg("%s: %s", name, err);
  check_model(name, db, model);
  int r = -1;
  for (int i = 0; i < db->nranges; i++)
    if (!strcmp(db->ranges[i].name, walk)) r = i;
  if (r < 0) fail_msg("%s: no range %s", name, walk);
  stand(name, db, model, db->ranges[r].start);
  uint64_t h1, h2;
  long a1, a2;
  double e1 = track(db, model, db->ranges[r].start, db->ranges[r].stop, &h1, &a1, ANIM_PHYSICS_POWERED);
  double root1 = last_root_error, worst1 = last_worst_error;
  double share1 = last_root_share;
  int worst_bone1 = last_worst_bone;
  double e2 = track(db, model, db->ranges[r].start, db->ranges[r].stop, &h2, &a2, ANIM_PHYSICS_POWERED);
  /* Every part kinematic: the simulated pose is the target's. */
  uint64_t hk;
  long ak;
  double ek = track(db, model, db->ranges[r].start, db->ranges[r].stop, &hk, &ak, ANIM_PHYSICS_KINEMATIC);
  printf("  %-18s all kinematic: mean joint error %.2g m\n", name, ek);
  if (ek > 1e-4) fail_msg("%s: a kinematic body is %.3g m off its target", name, ek);
  printf("  %-18s tracks %s: mean joint error %.2f cm (root %.2f, worst %s %.2f), runs identical %s, allocations %ld\n",
         name, walk, 100 * e1, 100 * root1, db->skeleton.names[worst_bone1], 100 * worst1,
         h1 == h2 && e1 == e2 ? "yes" : "NO", a1 + a2);
  printf("  %-18s lowest root over %d s: %.3f of the target's height\n", name, TRACK_SECONDS, share1);
  if (e1 > TRACK_MAX_MEAN_M)
    fail_msg("%s: mean joint error %.2f cm over %s, limit %.2f (worst %s %.2f)", name, 100 * e1, walk, 100 * TRACK_MAX_MEAN_M,
             db->skeleton.names[worst_bone1], 100 * worst1);
  if (share1 < TRACK_MIN_ROOT_SHARE) fail_msg("%s: fell tracking %s: root down to %.2f of the target's height", name, walk, share1);
  if (h1 != h2 || e1 != e2) fail_msg("%s: two runs differ", name);
  if (a1 + a2) fail_msg("%s: %ld allocations while stepping", name, a1 + a2);
  anim_physics_model_free(model);
}

static void test_default_database(void **state) {
  (void)state;
  anim_database_t db;
  default_database(&db);
  check_database("default", &db, "walk");
  anim_database_free(&db);
}

static void test_datasets(void **state) {
  (void)state;
  for (int d = 0; d < ANIM_TEST_MOCAP_SETS; d++) {
    anim_database_t db; /* no features: the body needs the skeleton and the frames */
    if (!anim_test_mocap_database(d, NULL, &db)) return;
    check_database(anim_test_mocap_sets[d].folder, &db, anim_test_mocap_sets[d].walk);
    anim_database_free(&db);
  }
}

/* ---- mass --------------------------------------------------------------------- */

/* A body of another mass (body.h: everything with a unit of mass scales
 * with it, the torque limits too): its segments sum to it, and it tracks
 * the walk as the 70 kg body does. With the armature and the torque limits
 * left at the 70 kg body's, the default database's walk measured 2.44,
 * 2.05, 2.84, 7.31 and 15.75 cm at 20, 45, 70, 140 and 300 kg (300 N m
 * binds); scaled, 2.84 cm at every mass. */
static void test_mass_scaling(void **state) {
  (void)state;
  anim_database_t db;
  default_database(&db);
  int r = -1;
  for (int i = 0; i < db.nranges; i++)
    if (!strcmp(db.ranges[i].name, "walk")) r = i;
  assert_true(r >= 0);
  static const float masses[] = {70.0f, 20.0f, 45.0f, 140.0f, 300.0f};
  double reference = 0.0;
  for (size_t k = 0; k < sizeof masses / sizeof *masses; k++) {
    char err[256];
    anim_physics_model_options_t o;
    anim_physics_model_options_default(&o);
    o.total_mass = masses[k];
    anim_physics_model_t *model = anim_physics_model_create(&db, &o, err, sizeof err);
    if (!model) fail_msg("%g kg: %s", (double)masses[k], err);
    anim_physics_model_info_t info;
    anim_physics_model_info(model, &info);
    double sum = 0;
    for (int b = 0; b < info.nbones; b++) sum += info.body_mass[b];
    if (fabs(sum - masses[k]) > 1e-3 * masses[k] || info.total_mass != masses[k])
      fail_msg("%g kg asked: segments sum to %.4f kg, the model says %g", (double)masses[k], sum, (double)info.total_mass);
    anim_physics_drive_t drive;
    anim_physics_drive_default(model, &drive);
    assert_true(fabsf(drive.max_torque - 300.0f * masses[k] / 70.0f) < 1e-3f);
    uint64_t hash;
    long allocs;
    double e = track(&db, model, db.ranges[r].start, db.ranges[r].stop, &hash, &allocs, ANIM_PHYSICS_POWERED);
    printf("  %5.0f kg: mean joint error %.3f cm (root %.3f), lowest root %.3f of the target's\n", (double)masses[k],
           100 * e, 100 * last_root_error, last_root_share);
    if (k == 0) reference = e;
    /* Not worse than at 70 kg (the scaled body is the same system: the
     * figures agree to rounding). */
    else if (e > reference * 1.02 + 1e-4)
      fail_msg("%g kg tracks worse than 70 kg: %.3f cm against %.3f", (double)masses[k], 100 * e, 100 * reference);
    if (last_root_share < TRACK_MIN_ROOT_SHARE) fail_msg("%g kg: fell tracking the walk", (double)masses[k]);
    anim_physics_model_free(model);
  }
  anim_database_free(&db);
}

/* ---- divergence ------------------------------------------------------------- */

static int mujoco_errors, mujoco_warnings;
static void count_log(int error, const char *message) {
  (void)message;
  if (error) mujoco_errors++;
  else mujoco_warnings++;
}

/* A step that diverges is reported, never passed off as a pose: a state
 * poisoned with NaN, or with a value past MuJoCo's bound (1e10, which
 * MuJoCo answers by resetting the whole mjData to the model's rest pose
 * at the origin with a warning: the step must not return that as the
 * body's motion), gives ANIM_ENONFINITE; a MuJoCo error inside the step
 * (its stack too small) gives ANIM_EINTERNAL; a reset body steps on. The
 * poison is this test's hook on the mjData, not the server's. */
static void test_divergence(void **state) {
  (void)state;
  anim_physics_set_log(count_log);
  anim_database_t db;
  default_database(&db);
  char err[256];
  anim_physics_model_t *model = anim_physics_model_create(&db, NULL, err, sizeof err);
  if (!model) fail_msg("%s", err);
  anim_physics_model_info_t info;
  anim_physics_model_info(model, &info);
  anim_physics_body_t *body = anim_physics_body_create(model, err, sizeof err);
  assert_non_null(body);
  anim_pose_view_t p = anim_database_frame_pose(&db, 0);
  vec3 pos[ANIM_MAX_BONES];
  quat rot[ANIM_MAX_BONES];
  int bone = info.root + 1;
  while (!model->joint[bone]) bone++;
  static const double poisons[] = {NAN, INFINITY, 1e12};
  static const int where[] = {0, 1, 1}; /* qvel, qpos, qpos */
  for (int k = 0; k < 3; k++) {
    assert_int_equal(anim_physics_body_reset(body, p.positions, p.rotations), 0);
    for (int t = 0; t < 10; t++) assert_int_equal(anim_physics_step_guarded(body, p.positions, p.rotations, pos, rot), 0);
    int warnings = mujoco_warnings;
    if (where[k]) body->d->qpos[model->qposadr[bone]] = poisons[k];
    else body->d->qvel[model->dofadr[bone]] = poisons[k];
    int rc = anim_physics_step_guarded(body, p.positions, p.rotations, pos, rot);
    printf("  %s poisoned with %g: step %s, MuJoCo warnings %d\n", where[k] ? "qpos" : "qvel", poisons[k],
           anim_strerror(rc), mujoco_warnings - warnings);
    if (rc != ANIM_ENONFINITE) fail_msg("poison %d (%g): the step returned %d, not ANIM_ENONFINITE", k, poisons[k], rc);
    /* Reset, it follows its target again. */
    assert_int_equal(anim_physics_body_reset(body, p.positions, p.rotations), 0);
    for (int t = 0; t < 30; t++) assert_int_equal(anim_physics_step_guarded(body, p.positions, p.rotations, pos, rot), 0);
    vec3 g[ANIM_MAX_BONES], want[ANIM_MAX_BONES];
    quat grot[ANIM_MAX_BONES];
    anim_fk(g, grot, pos, rot, db.skeleton.parents, info.nbones);
    anim_fk(want, grot, p.positions, p.rotations, db.skeleton.parents, info.nbones);
    assert_true(vec3_length(vec3_sub(g[info.root], want[info.root])) < 0.05f);
  }

  /* A MuJoCo error in the step: its stack (mjData.nstack) cut to 100
   * values, the next allocation on it fails. */
  long nstack = (long)body->d->nstack;
  body->d->nstack = 100;
  int errors = mujoco_errors;
  int rc = anim_physics_step_guarded(body, p.positions, p.rotations, pos, rot);
  printf("  a 100-value stack: step %s, MuJoCo errors %d\n", anim_strerror(rc), mujoco_errors - errors);
  assert_int_equal(rc, ANIM_EINTERNAL);
  assert_int_equal(mujoco_errors - errors, 1);
  body->d->nstack = nstack;
  assert_int_equal(anim_physics_body_reset(body, p.positions, p.rotations), 0);
  assert_int_equal(anim_physics_step_guarded(body, p.positions, p.rotations, pos, rot), 0);
  anim_physics_body_free(body);
  anim_physics_model_free(model);
  anim_database_free(&db);
}

int main(void) {
  anim_alloc_counter_install();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_invalid),
      cmocka_unit_test(test_default_database),
      cmocka_unit_test(test_mass_scaling),
      cmocka_unit_test(test_divergence),
      cmocka_unit_test(test_datasets),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
