/* stride.c: stride warping of the legs (see stride.h). */
#include "character/stride.h"

/* World transforms along a foot's chain (root first); out index i is chain[i]. */
static void chain_fk(const anim_foot_lock_t *f, const vec3 *lp, const quat *lr, vec3 *out_p, quat *out_r) {
  out_p[0] = lp[f->chain[0]], out_r[0] = lr[f->chain[0]];
  for (int i = 1; i < f->nchain; i++) {
    int b = f->chain[i];
    out_p[i] = vec3_add(out_p[i - 1], quat_mul_vec3(out_r[i - 1], lp[b]));
    out_r[i] = quat_mul(out_r[i - 1], lr[b]);
  }
}

/* How far the hip must come down (m) for the ankle target to be within
 * reach: 0 when it is, -1 when no drop can (too far sideways). */
static float drop_needed(vec3 hip, vec3 target, float reach) {
  vec3 u = vec3_sub(hip, target);
  float side2 = u.x * u.x + u.z * u.z;
  if (side2 >= reach * reach) return -1.0f;
  return fmaxf(0.0f, u.y - sqrtf(reach * reach - side2));
}

int anim_stride_apply(const anim_foot_locks_t *legs, float scale, vec3 direction, float max_drop,
                      vec3 *local_positions, quat *local_rotations) {
  if (legs->nfeet == 0 || fabsf(scale - 1.0f) < 1e-4f) return 0;
  vec3 gp[ANIM_MAX_CONTACTS][ANIM_FOOT_CHAIN_MAX], targets[ANIM_MAX_CONTACTS];
  quat gr[ANIM_MAX_CONTACTS][ANIM_FOOT_CHAIN_MAX];
  int warped[ANIM_MAX_CONTACTS] = {0};
  float need = 0.0f;
  for (int s = 0; s < legs->nfeet; s++) {
    const anim_foot_lock_t *f = &legs->feet[s];
    int dup = 0;
    for (int o = 0; o < s; o++) dup |= warped[o] && legs->feet[o].hip == f->hip;
    if (dup) continue; /* a heel and a toe on one leg: the first listed leads */
    warped[s] = 1;
    chain_fk(f, local_positions, local_rotations, gp[s], gr[s]);
    int n = f->nchain;
    vec3 hip = gp[s][n - 4], knee = gp[s][n - 3], ankle = gp[s][n - 2], toe = gp[s][n - 1];
    /* The foot's reach from its hip along the travel, scaled. */
    float along = (toe.x - hip.x) * direction.x + (toe.z - hip.z) * direction.z;
    vec3 shift = vec3_make((scale - 1.0f) * along * direction.x, 0.0f, (scale - 1.0f) * along * direction.z);
    targets[s] = vec3_add(ankle, shift); /* at the data's height, whatever the pelvis does */
    float thigh = vec3_length(vec3_sub(knee, hip)), shin = vec3_length(vec3_sub(ankle, knee));
    float reach = fmaxf(vec3_length(vec3_sub(ankle, hip)), 0.99f * (thigh + shin));
    float d = drop_needed(hip, targets[s], reach);
    if (d > need) need = d;
  }
  /* The pelvis down as far as the longest stride needs (at most max_drop). */
  float drop = fminf(need, max_drop);
  if (legs->pelvis > 0 && drop > 1e-6f) {
    int at = legs->feet[0].pelvis_at;
    int first = 0;
    while (!warped[first]) first++;
    quat parent = gr[first][at - 1];
    local_positions[legs->pelvis] =
        vec3_add(local_positions[legs->pelvis], quat_inv_mul_vec3(parent, vec3_make(0.0f, -drop, 0.0f)));
    for (int s = 0; s < legs->nfeet; s++)
      if (warped[s])
        for (int i = at; i < legs->feet[s].nchain; i++) gp[s][i].y -= drop;
  }
  for (int s = 0; s < legs->nfeet; s++) {
    if (!warped[s]) continue;
    const anim_foot_lock_t *f = &legs->feet[s];
    int n = f->nchain, hp = n - 5, hip = n - 4, knee = n - 3, ankle = n - 2;
    vec3 hinge = quat_mul_vec3(gr[s][hip], f->hinge);
    anim_two_bone_ik(&local_rotations[f->hip], &local_rotations[f->knee], &local_rotations[f->ankle], gr[s][hp],
                     gr[s][hip], gr[s][knee], gr[s][ankle], gp[s][hip], gp[s][knee], gp[s][ankle],
                     targets[s], hinge);
  }
  return 1;
}
