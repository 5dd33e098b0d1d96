/*
 * test_foot_lock.c: two-bone IK and contact locking. Invalid setups first;
 * then the IK reaches reachable targets exactly (bone lengths kept, the foot
 * keeping its world rotation, the knee bending about its hinge), stops short
 * of straight for unreachable ones, and on the default database a planted
 * foot stays where it landed while the rest of the body moves, then is
 * released without a jump; on the ground, a foot the animation leaves
 * behind steps (lifting, landing where the animation is) and plants again
 * rather than being dragged, and the pelvis comes down for a planted foot
 * out of reach, no further than allowed.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "anim_error.h"
#include "character/foot_lock.h"
#include "pose/kinematics.h"
#include "offline/procgen.h"
#include "procgen_db.h"

static anim_database_t db;

static int setup(void **state) { return anim_test_procgen_load(&db); }

static int teardown(void **state) {
  anim_database_free(&db);
  return 0;
}

static void test_invalid_setups(void **state) {
  anim_foot_locks_t locks;
  assert_int_equal(anim_foot_locks_init(&locks, &db, 0.0f, 0.1f), ANIM_EINVAL);
  assert_int_equal(anim_foot_locks_init(&locks, &db, 0.2f, -1.0f), ANIM_EINVAL);
  anim_database_t shallow = db;
  int contacts[ANIM_MAX_CONTACTS] = {1}; /* "Hips": no leg above it */
  memcpy(shallow.contact_bones, contacts, sizeof contacts);
  shallow.ncontacts = 1;
  assert_int_equal(anim_foot_locks_init(&locks, &shallow, 0.2f, 0.1f), ANIM_EINVAL);
  assert_int_equal(anim_foot_locks_init(&locks, &db, 0.2f, 0.1f), 0);
  assert_int_equal(locks.nfeet, db.ncontacts);
}

/* A database frame's pose, its FK, and a leg's IK toward offset targets. */
static void test_ik_reaches_and_keeps_lengths(void **state) {
  anim_foot_locks_t locks;
  assert_int_equal(anim_foot_locks_init(&locks, &db, 0.2f, 0.1f), 0);
  const anim_foot_lock_t *f = &locks.feet[0];
  int n = db.nbones;
  const vec3 offsets[] = {{0.05f, 0.0f, 0.0f}, {0.0f, 0.1f, 0.05f}, {-0.08f, 0.04f, -0.06f}};
  float worst_reach = 0, worst_length = 0, worst_foot = 0;
  for (int frame = 0; frame < db.nframes; frame += 97)
    for (int k = 0; k < 3; k++) {
      vec3 lp[128];
      quat lr[128], gr[128];
      vec3 gp[128];
      memcpy(lp, db.local_positions + (size_t)frame * n, (size_t)n * sizeof *lp);
      memcpy(lr, db.local_rotations + (size_t)frame * n, (size_t)n * sizeof *lr);
      anim_fk(gp, gr, lp, lr, db.skeleton.parents, n);
      vec3 a = gp[f->hip], b = gp[f->knee], c = gp[f->ankle];
      float lab = vec3_length(vec3_sub(b, a)), lbc = vec3_length(vec3_sub(c, b));
      vec3 target = vec3_add(c, offsets[k]);
      /* only targets the IK may reach: within 99% of the leg and no straighter than now */
      float reach = fmaxf(vec3_length(vec3_sub(c, a)), 0.99f * (lab + lbc));
      if (vec3_length(vec3_sub(target, a)) > 0.98f * reach) continue;
      quat ankle_world = gr[f->ankle];
      anim_two_bone_ik(&lr[f->hip], &lr[f->knee], &lr[f->ankle], gr[db.skeleton.parents[f->hip]], gr[f->hip],
                       gr[f->knee], gr[f->ankle], a, b, c, target, quat_mul_vec3(gr[f->hip], f->hinge));
      anim_fk(gp, gr, lp, lr, db.skeleton.parents, n);
      worst_reach = fmaxf(worst_reach, vec3_length(vec3_sub(gp[f->ankle], target)));
      worst_length = fmaxf(worst_length, fabsf(vec3_length(vec3_sub(gp[f->knee], gp[f->hip])) - lab));
      worst_length = fmaxf(worst_length, fabsf(vec3_length(vec3_sub(gp[f->ankle], gp[f->knee])) - lbc));
      worst_foot = fmaxf(worst_foot, 1.0f - fabsf(quat_dot(gr[f->ankle], ankle_world)));
    }
  printf("IK: ankle within %.2g m of its target, lengths within %.2g m, foot rotation 1-|dot| %.2g\n", worst_reach,
         worst_length, worst_foot);
  assert_true(worst_reach < 1e-3f);
  assert_true(worst_length < 1e-4f);
  assert_true(worst_foot < 1e-5f);
}

/* A folded knee bent backwards by exactly what the reach asks it to open:
 * the knee's turn is half a turn, the one case that takes the angle itself
 * instead of the half angle of its cosine and sine. The leg still points at
 * the target, reaching as far as it may, its bones keep their lengths, and
 * nothing is NaN. One leg alone: hip at a, knee b, ankle c, every global
 * rotation the identity (the offsets are world vectors). */
static void test_ik_half_turn(void **state) {
  const float lab = 0.5f, lbc = 0.45f;
  vec3 a = vec3_make(0.0f, 1.0f, 0.0f), b = vec3_make(0.0f, 0.5f, 0.0f), hinge = vec3_make(1.0f, 0.0f, 0.0f);
  vec3 target = vec3_make(0.0f, -3.0f, 0.0f);
  float reach = 0.99f * (lab + lbc); /* anim_two_bone_ik's reach for a leg folded tighter than that */
  float want = acosf((lab * lab + lbc * lbc - reach * reach) / (2.0f * lab * lbc));
  float fold = -(3.14159265f - want); /* the knee's angle now: a turn of pi opens it to want */
  vec3 c = vec3_add(b, vec3_make(0.0f, lbc * cosf(fold), lbc * sinf(fold)));
  quat hip = quat_identity(), knee = quat_identity(), ankle = quat_identity();
  anim_two_bone_ik(&hip, &knee, &ankle, quat_identity(), quat_identity(), quat_identity(), quat_identity(), a, b, c,
                   target, hinge);
  vec3 knee_at = vec3_add(a, quat_mul_vec3(hip, vec3_sub(b, a)));
  vec3 ankle_at = vec3_add(knee_at, quat_mul_vec3(quat_mul(hip, knee), vec3_sub(c, b)));
  assert_true(isfinite(ankle_at.x + ankle_at.y + ankle_at.z));
  assert_float_equal(vec3_length(vec3_sub(knee_at, a)), lab, 1e-5f);
  assert_float_equal(vec3_length(vec3_sub(ankle_at, knee_at)), lbc, 1e-5f);
  assert_float_equal(vec3_length(vec3_sub(ankle_at, a)), reach, 1e-3f);
  assert_true(vec3_normalize(vec3_sub(ankle_at, a)).y < -0.9999f); /* towards the target, below */
}

/* A target straight opposite the ankle, as far from the hip as the ankle
 * is: the knee stays (to a rounding), and the hip swings a half turn, where
 * rotation_between's (|u||v| + u.v, u x v) is a difference of nearly equal
 * numbers. The ankle must land on the target. (Its branch for directions
 * exactly opposite is not reached here: the knee's rounding leaves them a
 * hair apart, and the formula lands the ankle as well; the next test
 * reaches it.) */
static void test_ik_swings_to_the_opposite_side(void **state) {
  vec3 a = vec3_make(0.0f, 1.0f, 0.0f), b = vec3_make(0.0f, 0.6f, 0.25f), c = vec3_make(0.0f, 0.25f, 0.0f);
  vec3 hinge = vec3_make(1.0f, 0.0f, 0.0f);
  vec3 target = vec3_add(a, vec3_sub(a, c)); /* 0.75 m above the hip, the ankle 0.75 m below it */
  quat hip = quat_identity(), knee = quat_identity(), ankle = quat_identity();
  anim_two_bone_ik(&hip, &knee, &ankle, quat_identity(), quat_identity(), quat_identity(), quat_identity(), a, b, c,
                   target, hinge);
  vec3 knee_at = vec3_add(a, quat_mul_vec3(hip, vec3_sub(b, a)));
  vec3 ankle_at = vec3_add(knee_at, quat_mul_vec3(quat_mul(hip, knee), vec3_sub(c, b)));
  assert_float_equal(vec3_length(vec3_sub(knee_at, a)), vec3_length(vec3_sub(b, a)), 1e-5f);
  assert_float_equal(vec3_length(vec3_sub(ankle_at, knee_at)), vec3_length(vec3_sub(c, b)), 1e-5f);
  if (vec3_length(vec3_sub(ankle_at, target)) > 1e-4f)
    fail_msg("ankle at (%g %g %g), target (%g %g %g)", ankle_at.x, ankle_at.y, ankle_at.z, target.x, target.y,
             target.z);
}

/* The same swing with the directions exactly opposite, so that the
 * formula's u x v and |u||v| + u.v are both exactly 0 and only
 * rotation_between's branch for opposite directions can turn the leg (the
 * formula's zero quaternion would leave it where it is). Exact in floats:
 * coordinates in 1/64 m, the ankle 5/8 or 1/2 m from the hip (a length
 * whose square is exact), knees for which the law of cosines gives back
 * the knee's own angle to the bit (the first a right angle, sides 3/8 and
 * 1/2; the second found by a search over 1/64 m grids), so the knee's turn
 * is the identity, and the ankle and the target are exact mirror images
 * through the hip. The first leg lies in the y-z plane (the branch's
 * perpendicular comes from x), the second points along x (x is no
 * perpendicular; it comes from y). */
static void test_ik_swings_exactly_opposite(void **state) {
  static const struct {
    vec3 knee, ankle, hinge; /* the hip at (0, 1, 0) */
  } legs[] = {
      {{0.0f, 0.625f, 0.0f}, {0.0f, 0.625f, 0.5f}, {1.0f, 0.0f, 0.0f}},
      {{0.25f, 0.625f, 0.0f}, {0.5f, 1.0f, 0.0f}, {0.0f, 0.0f, -1.0f}},
  };
  for (size_t i = 0; i < sizeof legs / sizeof legs[0]; i++) {
    vec3 a = vec3_make(0.0f, 1.0f, 0.0f), b = legs[i].knee, c = legs[i].ankle;
    vec3 target = vec3_add(a, vec3_sub(a, c)); /* exactly */
    float lab = vec3_length(vec3_sub(b, a)), lbc = vec3_length(vec3_sub(c, b));
    quat hip = quat_identity(), knee = quat_identity(), ankle = quat_identity();
    anim_two_bone_ik(&hip, &knee, &ankle, quat_identity(), quat_identity(), quat_identity(), quat_identity(), a, b,
                     c, target, legs[i].hinge);
    assert_float_equal(fabsf(knee.w), 1.0f, 1e-6f); /* the knee kept its angle */
    vec3 knee_at = vec3_add(a, quat_mul_vec3(hip, vec3_sub(b, a)));
    vec3 ankle_at = vec3_add(knee_at, quat_mul_vec3(quat_mul(hip, knee), vec3_sub(c, b)));
    assert_true(isfinite(ankle_at.x + ankle_at.y + ankle_at.z));
    assert_float_equal(vec3_length(vec3_sub(knee_at, a)), lab, 1e-6f);
    assert_float_equal(vec3_length(vec3_sub(ankle_at, knee_at)), lbc, 1e-6f);
    if (vec3_length(vec3_sub(ankle_at, target)) > 1e-6f)
      fail_msg("leg %zu: ankle at (%g %g %g), target (%g %g %g)", i, ankle_at.x, ankle_at.y, ankle_at.z, target.x,
               target.y, target.z);
  }
}

static void test_unreachable_target_stops_short(void **state) {
  anim_foot_locks_t locks;
  assert_int_equal(anim_foot_locks_init(&locks, &db, 0.2f, 0.1f), 0);
  const anim_foot_lock_t *f = &locks.feet[1];
  int n = db.nbones;
  vec3 lp[128], gp[128];
  quat lr[128], gr[128];
  memcpy(lp, db.local_positions, (size_t)n * sizeof *lp);
  memcpy(lr, db.local_rotations, (size_t)n * sizeof *lr);
  anim_fk(gp, gr, lp, lr, db.skeleton.parents, n);
  vec3 a = gp[f->hip], b = gp[f->knee], c = gp[f->ankle];
  float legs = vec3_length(vec3_sub(b, a)) + vec3_length(vec3_sub(c, b));
  vec3 target = vec3_add(a, vec3_make(0.0f, -3.0f, 0.0f)); /* three metres down */
  anim_two_bone_ik(&lr[f->hip], &lr[f->knee], &lr[f->ankle], gr[db.skeleton.parents[f->hip]], gr[f->hip], gr[f->knee],
                   gr[f->ankle], a, b, c, target, quat_mul_vec3(gr[f->hip], f->hinge));
  anim_fk(gp, gr, lp, lr, db.skeleton.parents, n);
  vec3 leg = vec3_sub(gp[f->ankle], gp[f->hip]);
  float reach = fmaxf(vec3_length(vec3_sub(c, a)), 0.99f * legs);
  assert_float_equal(vec3_length(leg), reach, 1e-3f);
  assert_true(vec3_normalize(leg).y < -0.999f); /* pointing at it */
}

/* Drives a pose along the database's first clip (a walk), swaying the whole
 * body; the locked toe stays where it landed while the contact lasts and the
 * leg can reach it. */
static void test_locked_foot_stays_and_releases_smoothly(void **state) {
  anim_foot_locks_t locks;
  assert_int_equal(anim_foot_locks_init(&locks, &db, 0.2f, 0.1f), 0);
  int n = db.nbones, toe = locks.feet[0].toe;
  float worst_drift = 0, worst_release_jump = 0;
  int locked_ticks = 0, releases = 0;
  vec3 landed = vec3_zero(), previous_toe = vec3_zero();
  int r = 0;
  while (r < db.nranges && !strstr(db.ranges[r].name, "walk")) r++;
  assert_true(r < db.nranges);
  printf("clip %s, frames %d-%d\n", db.ranges[r].name, db.ranges[r].start, db.ranges[r].stop - 1);
  for (int frame = db.ranges[r].start; frame < db.ranges[r].stop; frame++) {
    vec3 lp[128], gp[128];
    quat lr[128], gr[128];
    memcpy(lp, db.local_positions + (size_t)frame * n, (size_t)n * sizeof *lp);
    memcpy(lr, db.local_rotations + (size_t)frame * n, (size_t)n * sizeof *lr);
    lp[0] = vec3_add(lp[0], vec3_make(0.02f * sinf(0.1f * (float)frame), 0.0f, 0.0f)); /* a swaying root */
    anim_fk(gp, gr, lp, lr, db.skeleton.parents, n);
    const uint8_t *contacts = db.contacts + (size_t)frame * (size_t)db.ncontacts;
    int was_locked = (locks.feet[0].state == ANIM_FOOT_PLANTED);
    anim_foot_locks_apply(&locks, contacts, lp, lr, 1.0f / db.frame_rate);
    anim_fk(gp, gr, lp, lr, db.skeleton.parents, n);
    if ((locks.feet[0].state == ANIM_FOOT_PLANTED) && !was_locked) landed = gp[toe];
    if ((locks.feet[0].state == ANIM_FOOT_PLANTED)) {
      worst_drift = fmaxf(worst_drift, vec3_length(vec3_sub(gp[toe], landed)));
      locked_ticks++;
    }
    if (was_locked && !(locks.feet[0].state == ANIM_FOOT_PLANTED)) {
      releases++;
      worst_release_jump = fmaxf(worst_release_jump, vec3_length(vec3_sub(gp[toe], previous_toe)));
    }
    previous_toe = gp[toe];
  }
  printf("lock: %d locked ticks, %d releases, drift while locked %.2g m, largest step at a release %.3f m\n",
         locked_ticks, releases, worst_drift, worst_release_jump);
  assert_true(locked_ticks > 100);
  assert_true(releases > 3);
  assert_true(worst_drift < 1e-3f);
  /* A release continues from where the foot was: one tick's step, not a pop (walk foot speed < 5 m/s). */
  assert_true(worst_release_jump < 5.0f / db.frame_rate);
}

/* One database frame's pose, the root moved by offset. */
static void frame_pose(int frame, vec3 offset, vec3 *lp, quat *lr) {
  int n = db.nbones;
  memcpy(lp, db.local_positions + (size_t)frame * n, (size_t)n * sizeof *lp);
  memcpy(lr, db.local_rotations + (size_t)frame * n, (size_t)n * sizeof *lr);
  lp[0] = vec3_add(lp[0], offset);
}

static int find_range(const char *name) {
  for (int r = 0; r < db.nranges; r++)
    if (strcmp(db.ranges[r].name, name) == 0) return r;
  fail_msg("no range %s", name);
  return -1;
}

/* Standing (idle, both feet down for 4 s) while the root drifts sideways
 * at 0.6 m/s away from its feet: each planted foot is left behind until
 * the lock would stretch, then steps, lifted, to where the animation has
 * it, and plants there again; while shown planted it does not move. */
static void test_left_behind_foot_steps_and_replants(void **state) {
  anim_foot_locks_t locks;
  assert_int_equal(anim_foot_locks_init(&locks, &db, 0.2f, 0.1f), 0);
  assert_int_equal(anim_foot_locks_ground(&locks, ANIM_FOOT_MAX_DROP), 0);
  int r = find_range("idle"), toe = locks.feet[0].toe, n = db.nbones;
  const float dt = 1.0f / db.frame_rate;
  float worst_drift = 0, highest_lift = 0, fastest_step = 0, lift_from = 0;
  int steps = 0, replants = 0, planted_ticks = 0;
  vec3 planted_at = vec3_zero(), previous = vec3_zero();
  anim_foot_state_t before = ANIM_FOOT_FREE;
  for (int frame = db.ranges[r].start; frame < db.ranges[r].stop; frame++) {
    vec3 lp[128], gp[128];
    quat lr[128], gr[128];
    frame_pose(frame, vec3_make(0.6f * dt * (float)(frame - db.ranges[r].start), 0.0f, 0.0f), lp, lr);
    anim_foot_locks_apply(&locks, db.contacts + (size_t)frame * (size_t)db.ncontacts, lp, lr, dt);
    anim_fk(gp, gr, lp, lr, db.skeleton.parents, n);
    anim_foot_state_t now = locks.feet[0].state;
    int shown = (anim_foot_locks_contacts(&locks) & 1u) != 0;
    assert_int_equal(shown, now == ANIM_FOOT_PLANTED);
    if (now == ANIM_FOOT_PLANTED && before != ANIM_FOOT_PLANTED) planted_at = gp[toe];
    if (now == ANIM_FOOT_PLANTED)
      worst_drift = fmaxf(worst_drift, vec3_length(vec3_sub(gp[toe], planted_at))), planted_ticks++;
    if (now == ANIM_FOOT_STEPPING && before != ANIM_FOOT_STEPPING) steps++, lift_from = previous.y;
    if (now == ANIM_FOOT_STEPPING) {
      highest_lift = fmaxf(highest_lift, gp[toe].y - lift_from);
      fastest_step = fmaxf(fastest_step, vec3_length(vec3_sub(gp[toe], previous)) / dt);
    }
    if (before == ANIM_FOOT_STEPPING && now == ANIM_FOOT_PLANTED) replants++;
    before = now, previous = gp[toe];
  }
  printf("left behind: %d planted ticks, %d steps (%d re-planted), drift while planted %.2g m, highest lift %.3f m, "
         "fastest step %.2f m/s\n", planted_ticks, steps, replants, worst_drift, highest_lift, fastest_step);
  assert_true(steps >= 3);
  assert_true(replants >= 1);
  assert_true(planted_ticks > 60);
  assert_true(worst_drift < 1e-3f);
  assert_true(highest_lift > 0.02f);  /* visibly lifted, not dragged */
  assert_true(fastest_step < 5.0f);   /* a step, not a pop (the walks' own feet reach 3.6 m/s) */
}

/* Standing (idle) while the root rises 1 mm a tick: the pelvis comes down
 * so the planted feet stay where they are on the ground (their height
 * follows the animation), never more than max_drop; past that the feet
 * step rather than slide. */
static void test_pelvis_comes_down_for_planted_feet(void **state) {
  anim_foot_locks_t locks;
  assert_int_equal(anim_foot_locks_init(&locks, &db, 0.2f, 0.1f), 0);
  assert_int_equal(anim_foot_locks_ground(&locks, 0.03f), 0);
  assert_true(locks.pelvis > 0);
  int r = find_range("idle"), toe = locks.feet[0].toe, n = db.nbones;
  const float dt = 1.0f / db.frame_rate;
  float worst_drift = 0, deepest = 0;
  int planted_ticks = 0, stepped = 0;
  vec3 planted_at = vec3_zero();
  anim_foot_state_t before = ANIM_FOOT_FREE;
  for (int t = 0; t < 120; t++) {
    int frame = db.ranges[r].start + t;
    vec3 lp[128], gp[128];
    quat lr[128], gr[128];
    frame_pose(frame, vec3_make(0.0f, 0.001f * (float)t, 0.0f), lp, lr);
    anim_foot_locks_apply(&locks, db.contacts + (size_t)frame * (size_t)db.ncontacts, lp, lr, dt);
    anim_fk(gp, gr, lp, lr, db.skeleton.parents, n);
    anim_foot_state_t now = locks.feet[0].state;
    if (now == ANIM_FOOT_PLANTED && before != ANIM_FOOT_PLANTED) planted_at = gp[toe];
    vec3 moved = vec3_sub(gp[toe], planted_at);
    if (now == ANIM_FOOT_PLANTED)
      worst_drift = fmaxf(worst_drift, sqrtf(moved.x * moved.x + moved.z * moved.z)), planted_ticks++;
    stepped += now == ANIM_FOOT_STEPPING && before == ANIM_FOOT_PLANTED;
    deepest = fmaxf(deepest, locks.drop);
    before = now;
  }
  printf("rising root: %d planted ticks, pelvis down at most %.3f m, drift while planted %.2g m, %d steps\n",
         planted_ticks, deepest, worst_drift, stepped);
  assert_true(planted_ticks > 20);
  assert_true(deepest > 0.01f && deepest <= 0.03f + 1e-6f);
  assert_true(worst_drift < 1e-3f);
  assert_true(stepped >= 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_invalid_setups),
      cmocka_unit_test(test_ik_reaches_and_keeps_lengths),
      cmocka_unit_test(test_ik_half_turn),
      cmocka_unit_test(test_ik_swings_to_the_opposite_side),
      cmocka_unit_test(test_ik_swings_exactly_opposite),
      cmocka_unit_test(test_unreachable_target_stops_short),
      cmocka_unit_test(test_locked_foot_stays_and_releases_smoothly),
      cmocka_unit_test(test_left_behind_foot_steps_and_replants),
      cmocka_unit_test(test_pelvis_comes_down_for_planted_feet),
  };
  return cmocka_run_group_tests_name("foot_lock", tests, setup, teardown);
}
