/*
 * simulation_bone.c: the simulation bone of a database clip (see
 * simulation_bone.h): the hips' path on the ground and the hip line's
 * facing, smoothed, and every frame rewritten under it.
 */
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "pose/kinematics.h"
#include "offline/simulation_bone.h"

/* Gaussian smoothing (sigma, in frames at the database rate) of the
 * simulation bone's path and facing: enough to remove the gait's sway (the
 * facing sways more than the path), little enough to keep turns and stops. */
#define PATH_SMOOTHING_SIGMA 6.0f
#define FACING_SMOOTHING_SIGMA 10.0f

/* Sample j of x[0..n) extended past both ends by point reflection
 * (x[-k] = 2 x[0] - x[k]): a straight or steadily turning path stays
 * straight or steady up to the ends instead of bending toward a clamped end. */
static vec3 reflected(const vec3 *x, int n, int j) {
  if (j >= 0 && j < n) return x[j];
  int edge = j < 0 ? 0 : n - 1, mirror = 2 * edge - j;
  if (mirror < 0) mirror = 0;
  if (mirror > n - 1) mirror = n - 1;
  return vec3_sub(vec3_scale(x[edge], 2.0f), x[mirror]);
}

/* Gaussian smoothing (sigma in frames) of n vec3 samples, ends reflected. */
static int smooth(vec3 *io, int n, float sigma) {
  int radius = (int)ceilf(3.0f * sigma);
  vec3 *copy = malloc((size_t)n * sizeof *copy);
  if (!copy) return ANIM_ENOMEM;
  memcpy(copy, io, (size_t)n * sizeof *copy);
  for (int i = 0; i < n; i++) {
    vec3 sum = vec3_zero();
    float wsum = 0.0f;
    for (int k = -radius; k <= radius; k++) {
      float w = expf(-0.5f * (float)(k * k) / (sigma * sigma));
      sum = vec3_add(sum, vec3_scale(reflected(copy, n, i + k), w));
      wsum += w;
    }
    io[i] = vec3_scale(sum, 1.0f / wsum);
  }
  free(copy);
  return 0;
}

/* The source bones of clip that the simulation bone absorbs: the ancestors of
 * the hips (a ground-level root such as Bandai's joint_Root). folded[b] = 1. */
static void find_folded(const anim_skeleton_t *s, int hips, uint8_t *folded) {
  memset(folded, 0, (size_t)s->nbones);
  for (int p = s->parents[hips]; p >= 0; p = s->parents[p]) folded[p] = 1;
}

/* The character's facing in one pose: "forward" is perpendicular to the line
 * from the right to the left hip joint, on the ground; without hip joints the
 * hips' own +Z. Zero when the pose gives no direction (hips line vertical). */
vec3 anim_pose_facing(const vec3 *gp, const quat *gr, int hips, int lhip, int rhip) {
  vec3 forward;
  if (lhip >= 0 && rhip >= 0) {
    /* Facing +Z with Y up, the left side is +X: forward = left x up. */
    vec3 left = vec3_sub(gp[lhip], gp[rhip]);
    forward = vec3_cross(left, vec3_make(0.0f, 1.0f, 0.0f));
  } else {
    forward = quat_mul_vec3(gr[hips], vec3_make(0.0f, 0.0f, 1.0f));
  }
  forward.y = 0.0f;
  return vec3_normalize(forward);
}

/* Per frame of clip: the hips on the ground (out_path) and the facing
 * direction (out_facing), both Gaussian-smoothed over frames. */
static int simulation_path(const anim_clip_t *clip, int hips, int lhip, int rhip, vec3 *out_path, vec3 *out_facing) {
  const anim_skeleton_t *s = &clip->skeleton;
  int nb = s->nbones, n = clip->nframes;
  vec3 gp[ANIM_MAX_BONES];
  quat gr[ANIM_MAX_BONES];
  for (int f = 0; f < n; f++) {
    size_t k = (size_t)f * (size_t)nb;
    anim_fk(gp, gr, clip->local_positions + k, clip->local_rotations + k, s->parents, nb);
    out_path[f] = vec3_make(gp[hips].x, 0.0f, gp[hips].z);
    out_facing[f] = anim_pose_facing(gp, gr, hips, lhip, rhip);
    if (vec3_length(out_facing[f]) < 0.5f) out_facing[f] = f > 0 ? out_facing[f - 1] : vec3_make(0.0f, 0.0f, 1.0f);
  }
  int rc = smooth(out_path, n, PATH_SMOOTHING_SIGMA);
  return rc ? rc : smooth(out_facing, n, FACING_SMOOTHING_SIGMA);
}

/* Writes frame f of clip under the simulation bone (sim_pos, sim_rot) to
 * out_pos/out_rot (nb + 1 entries). Folded bones become the identity (they
 * coincide with the simulation bone); bones hanging from the simulation bone
 * or from a folded one get their global transform relative to the
 * simulation bone; the rest keep their local transform. */
static void write_frame(vec3 *out_pos, quat *out_rot, const anim_clip_t *clip, int f, const uint8_t *folded,
                        vec3 sim_pos, quat sim_rot) {
  const anim_skeleton_t *s = &clip->skeleton;
  int nb = s->nbones;
  const vec3 *lp = clip->local_positions + (size_t)f * (size_t)nb;
  const quat *lr = clip->local_rotations + (size_t)f * (size_t)nb;
  vec3 gp[ANIM_MAX_BONES];
  quat gr[ANIM_MAX_BONES];
  anim_fk(gp, gr, lp, lr, s->parents, nb);
  out_pos[0] = sim_pos;
  out_rot[0] = sim_rot;
  for (int b = 0; b < nb; b++) {
    int p = s->parents[b];
    vec3 pos = lp[b];
    quat rot = lr[b];
    if (folded[b]) {
      pos = vec3_zero(), rot = quat_identity();
    } else if (p < 0 || folded[p]) {
      pos = quat_inv_mul_vec3(sim_rot, vec3_sub(gp[b], sim_pos));
      rot = quat_normalize(quat_inv_mul(sim_rot, gr[b]));
    }
    out_pos[b + 1] = pos;
    out_rot[b + 1] = rot;
  }
}

int anim_simulation_bone_write(anim_database_t *db, int start, const anim_clip_t *clip, const int *roles) {
  const anim_skeleton_t *s = &clip->skeleton;
  int n = clip->nframes, hips = roles[ANIM_BONE_HIPS];
  vec3 *path = malloc((size_t)n * sizeof *path), *facing = malloc((size_t)n * sizeof *facing);
  if (!path || !facing) {
    free(path), free(facing);
    return ANIM_ENOMEM;
  }
  uint8_t folded[ANIM_MAX_BONES];
  find_folded(s, hips, folded);
  int rc = simulation_path(clip, hips, roles[ANIM_BONE_THIGH_LEFT], roles[ANIM_BONE_THIGH_RIGHT], path, facing);
  for (int f = 0; f < n && !rc; f++) {
    /* Opposite facings inside the smoothing window can cancel: keep the last direction. */
    vec3 dir = vec3_length(facing[f]) > 1e-3f || f == 0 ? vec3_normalize(facing[f]) : vec3_normalize(facing[f - 1]);
    if (vec3_length(dir) < 0.5f) dir = vec3_make(0.0f, 0.0f, 1.0f);
    facing[f] = dir;
    quat sim_rot = quat_from_angle_axis(atan2f(dir.x, dir.z), vec3_make(0.0f, 1.0f, 0.0f));
    size_t out = (size_t)(start + f) * (size_t)db->nbones;
    write_frame(db->local_positions + out, db->local_rotations + out, clip, f, folded, path[f], sim_rot);
  }
  free(path), free(facing);
  return rc;
}

