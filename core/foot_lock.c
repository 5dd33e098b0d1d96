/* foot_lock.c: contact locking and two-bone IK (see foot_lock.h). */
#include <string.h>
#include "anim_error.h"
#include "foot_lock.h"
#include "kinematics.h"
#include "spring.h"

int anim_foot_locks_init(anim_foot_locks_t *out, const anim_database_t *db, float unlock_radius,
                         float release_halflife) {
  memset(out, 0, sizeof *out);
  if (!(unlock_radius > 0.0f) || !(release_halflife > 0.0f)) return ANIM_EINVAL;
  const int *parents = db->skeleton.parents;
  for (int s = 0; s < db->ncontacts; s++) {
    anim_foot_lock_t *f = &out->feet[s];
    f->toe = db->contact_bones[s];
    f->ankle = f->toe > 0 ? parents[f->toe] : -1;
    f->knee = f->ankle > 0 ? parents[f->ankle] : -1;
    f->hip = f->knee > 0 ? parents[f->knee] : -1;
    if (f->hip <= 0) return ANIM_EINVAL; /* the hip must hang below the root */
    int reversed[ANIM_MAX_BONES], depth = 0;
    for (int b = f->toe; b >= 0 && depth < ANIM_MAX_BONES; b = parents[b]) reversed[depth++] = b;
    if (depth > ANIM_FOOT_CHAIN_MAX) return ANIM_EINVAL;
    for (int i = 0; i < depth; i++) f->chain[i] = reversed[depth - 1 - i];
    f->nchain = depth;
    /* The bend axis, weighted by how bent the knee is in each frame. */
    vec3 sum = vec3_zero();
    for (int frame = 0; frame < db->nframes; frame += 4) {
      size_t base = (size_t)frame * (size_t)db->nbones;
      const vec3 *g = db->global_positions + base;
      vec3 n = vec3_cross(vec3_sub(g[f->hip], g[f->knee]), vec3_sub(g[f->ankle], g[f->knee]));
      sum = vec3_add(sum, quat_inv_mul_vec3(db->global_rotations[base + (size_t)f->hip], n));
    }
    f->hinge = vec3_dot(sum, sum) > 1e-12f ? vec3_normalize(sum) : vec3_make(1.0f, 0.0f, 0.0f);
  }
  out->nfeet = db->ncontacts;
  out->unlock_radius = unlock_radius;
  out->release_halflife = release_halflife;
  return 0;
}

void anim_foot_locks_reset(anim_foot_locks_t *locks) {
  for (int s = 0; s < locks->nfeet; s++) {
    anim_foot_lock_t *f = &locks->feet[s];
    f->locked = f->have_previous = f->released = 0;
    f->offset = f->offset_velocity = vec3_zero();
  }
}

/* The shortest rotation taking direction u to direction v (both non-zero). */
static quat rotation_between(vec3 u, vec3 v) {
  u = vec3_normalize(u), v = vec3_normalize(v);
  float d = vec3_dot(u, v);
  if (d < -0.999999f) { /* opposite: half a turn about any perpendicular */
    vec3 axis = vec3_cross(u, vec3_make(1.0f, 0.0f, 0.0f));
    if (vec3_dot(axis, axis) < 1e-6f) axis = vec3_cross(u, vec3_make(0.0f, 1.0f, 0.0f));
    return quat_from_angle_axis(ANIM_PI, vec3_normalize(axis));
  }
  vec3 c = vec3_cross(u, v);
  return quat_normalize(quat_make(1.0f + d, c.x, c.y, c.z));
}

void anim_two_bone_ik(quat *io_hip_local, quat *io_knee_local, quat *io_ankle_local, quat hip_parent_global,
                      quat hip_global, quat knee_global, quat ankle_global, vec3 a, vec3 b, vec3 c, vec3 target,
                      vec3 hinge) {
  float lab = vec3_length(vec3_sub(b, a)), lbc = vec3_length(vec3_sub(c, b));
  if (lab < 1e-5f || lbc < 1e-5f) return;
  /* Reachable distance: never straighter than the leg already is, or than
   * 99% of its length. A straight leg's knee moves fast for a small change
   * of the target, and reaching past the animation's own extension would
   * straighten a knee the data bends. */
  float reach = fmaxf(vec3_length(vec3_sub(c, a)), 0.99f * (lab + lbc));
  float lat = clampf(vec3_length(vec3_sub(target, a)), fabsf(lab - lbc) + 1e-4f, fminf(reach, (lab + lbc) * 0.9999f));
  /* Knee: from its current angle, signed about the hinge (a knee bent
   * backwards has a negative one), to the one the law of cosines asks. A
   * positive turn about the hinge moves c away from a, opening the knee. */
  vec3 u = vec3_sub(a, b), w = vec3_sub(c, b);
  float now = atan2f(vec3_dot(vec3_cross(u, w), hinge), vec3_dot(u, w));
  float want = acosf(clampf((lab * lab + lbc * lbc - lat * lat) / (2.0f * lab * lbc), -1.0f, 1.0f));
  quat knee_turn = quat_from_angle_axis(want - now, hinge);
  vec3 c1 = vec3_add(b, quat_mul_vec3(knee_turn, vec3_sub(c, b)));
  /* Hip: swing the whole leg so the ankle points at the target. */
  quat hip_turn = rotation_between(vec3_sub(c1, a), vec3_sub(target, a));
  quat hip_new = quat_normalize(quat_mul(hip_turn, hip_global));
  quat knee_new = quat_normalize(quat_mul(hip_turn, quat_mul(knee_turn, knee_global)));
  *io_hip_local = quat_normalize(quat_inv_mul(hip_parent_global, hip_new));
  *io_knee_local = quat_normalize(quat_inv_mul(hip_new, knee_new));
  *io_ankle_local = quat_normalize(quat_inv_mul(knee_new, ankle_global)); /* the foot keeps its world rotation */
}

/* Where the target goes this tick. A release re-bases the offset on the
 * animated foot so the target's position and velocity carry on (an
 * inertialized switch). */
static vec3 foot_target(anim_foot_lock_t *f, int contact, vec3 toe, float unlock_radius, float halflife, float dt) {
  vec3 toe_velocity = vec3_zero(), target_velocity = vec3_zero();
  if (f->have_previous && dt > 0.0f) toe_velocity = vec3_scale(vec3_sub(toe, f->previous_toe), 1.0f / dt);
  anim_spring_decay_vec3(&f->offset, &f->offset_velocity, halflife, dt);
  vec3 target = vec3_add(f->locked ? f->lock_position : toe, f->offset);
  if (f->have_previous && dt > 0.0f) target_velocity = vec3_scale(vec3_sub(target, f->previous_target), 1.0f / dt);
  if (!contact) f->released = 0;
  if (contact && !f->locked && !f->released) {
    /* Lock where the foot is shown now, and stop it there: a landing foot is
     * stopped by the ground too. (Carrying its velocity on would let it slide
     * out and back, 0.15 m/s in the middle of contacts on the test script;
     * stopping it costs at most 1.8 m/s of velocity change at the landing,
     * where the data itself has 1.2.) */
    f->locked = 1;
    f->lock_position = target;
    f->offset = vec3_zero();
    f->offset_velocity = vec3_zero();
  } else if (f->locked && (!contact || vec3_length(vec3_sub(f->lock_position, toe)) > unlock_radius)) {
    /* Back toward the animated foot. Let go for stretching, the foot must
     * not lock again in the same contact: it would lock where it is shown,
     * near the old point, and stretch again the next tick. */
    f->released = contact;
    f->locked = 0;
    f->offset = vec3_sub(target, toe);
    f->offset_velocity = vec3_sub(target_velocity, toe_velocity);
  }
  f->previous_toe = toe;
  f->previous_target = target;
  f->have_previous = 1;
  return target;
}

/* World transforms along a foot's chain (root first); out index i is chain[i]. */
static void chain_fk(const anim_foot_lock_t *f, const vec3 *lp, const quat *lr, vec3 *out_p, quat *out_r) {
  out_p[0] = lp[f->chain[0]], out_r[0] = lr[f->chain[0]];
  for (int i = 1; i < f->nchain; i++) {
    int b = f->chain[i];
    out_p[i] = vec3_add(out_p[i - 1], quat_mul_vec3(out_r[i - 1], lp[b]));
    out_r[i] = quat_mul(out_r[i - 1], lr[b]);
  }
}

int anim_foot_locks_apply(anim_foot_locks_t *locks, const uint8_t *contacts, const vec3 *local_positions,
                          quat *local_rotations, float dt) {
  int changed = 0;
  vec3 gp[ANIM_FOOT_CHAIN_MAX];
  quat gr[ANIM_FOOT_CHAIN_MAX];
  for (int s = 0; s < locks->nfeet; s++) {
    anim_foot_lock_t *f = &locks->feet[s];
    chain_fk(f, local_positions, local_rotations, gp, gr);
    /* In the chain: ..., hip parent (n-5), hip (n-4), knee (n-3), ankle (n-2), toe (n-1). */
    int n = f->nchain, hp = n - 5, hip = n - 4, knee = n - 3, ankle = n - 2, toe_i = n - 1;
    vec3 toe = gp[toe_i];
    vec3 target = foot_target(f, contacts[s], toe, locks->unlock_radius, locks->release_halflife, dt);
    vec3 delta = vec3_sub(target, toe);
    if (vec3_dot(delta, delta) < 1e-10f) continue;
    anim_two_bone_ik(&local_rotations[f->hip], &local_rotations[f->knee], &local_rotations[f->ankle], gr[hp], gr[hip],
                     gr[knee], gr[ankle], gp[hip], gp[knee], gp[ankle], vec3_add(gp[ankle], delta),
                     quat_mul_vec3(gr[hip], f->hinge));
    changed = 1;
  }
  return changed;
}
