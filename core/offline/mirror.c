/*
 * mirror.c: left/right mirrored copies of clips (see mirror.h).
 */
#include <stdio.h>
#include <string.h>
#include "pose/kinematics.h"
#include "offline/mirror.h"
#include "offline/simulation_bone.h"

/* Name of bone with its left/right mark swapped into out, or 0 when it has none. */
static int mirror_name(const char *name, char *out, size_t size, const char *left, const char *right) {
  const char *pairs[][2] = {{left ? left : "Left", right ? right : "Right"},
                            {"Left", "Right"}, {"left", "right"}, {"_L", "_R"}, {"_l", "_r"}, {".L", ".R"}};
  for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++)
    for (int side = 0; side < 2; side++) {
      const char *from = pairs[p][side], *to = pairs[p][1 - side];
      const char *hit = strstr(name, from);
      if (!hit) continue;
      snprintf(out, size, "%.*s%s%s", (int)(hit - name), name, to, hit + strlen(from));
      return 1;
    }
  /* CMU style single-letter prefixes: LHipJoint / RHipJoint, lhand / rhand. */
  if ((name[0] == 'L' || name[0] == 'R' || name[0] == 'l' || name[0] == 'r') && name[1] &&
      ((name[1] >= 'A' && name[1] <= 'Z') || (name[0] >= 'a' && name[1] >= 'a'))) {
    snprintf(out, size, "%c%s", name[0] == 'L' ? 'R' : name[0] == 'R' ? 'L' : name[0] == 'l' ? 'r' : 'l', name + 1);
    return 1;
  }
  return 0;
}

/* The reflection across X = 0 of a rotation (M R M): the quaternion (w, x, -y, -z). */
static quat reflect_rotation(quat q) { return quat_make(q.w, q.x, -q.y, -q.z); }

/* The rotation about +Y that turns +Z into direction (x, z); identity for a zero direction. */
static quat yaw_of(vec3 direction) {
  if (direction.x * direction.x + direction.z * direction.z < 1e-8f) return quat_identity();
  return quat_from_angle_axis(atan2f(direction.x, direction.z), vec3_make(0.0f, 1.0f, 0.0f));
}

static const quat half_turns[4] = {{1.0f, 0.0f, 0.0f, 0.0f}, {0.0f, 1.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 1.0f, 0.0f},
                                   {0.0f, 0.0f, 0.0f, 1.0f}};

/* The left/right partner of every bone (itself when it has none). */
static void mirror_partners(const anim_skeleton_t *s, const char *left, const char *right, int *out_partner) {
  for (int b = 0; b < s->nbones; b++) {
    char other[ANIM_NAME_MAX];
    out_partner[b] = b;
    if (mirror_name(s->names[b], other, sizeof other, left, right)) {
      int p = anim_skeleton_find(s, other);
      if (p >= 0) out_partner[b] = p;
    }
  }
}

/* Adds one clip's evidence for each bone's half turn D (or none) that makes
 * its partner's reflected world rotation (M R_p M) D match the bone's own
 * axis convention: how near each choice comes to the bone's own rotation,
 * both taken relative to the actor's facing (which the mirror reflects too).
 * The convention is the skeleton's, so the evidence of every clip is summed:
 * a short clip with one arm swung forward must not decide alone. */
static void mirror_evidence(const anim_clip_t *clip, const int *roles, const int *partner, float (*score)[4]) {
  int nb = clip->skeleton.nbones;
  int hips = roles[ANIM_BONE_HIPS], lhip = roles[ANIM_BONE_THIGH_LEFT], rhip = roles[ANIM_BONE_THIGH_RIGHT];
  vec3 gp[ANIM_MAX_BONES];
  quat gr[ANIM_MAX_BONES];
  int step = clip->nframes > 128 ? clip->nframes / 128 : 1;
  for (int f = 0; f < clip->nframes; f += step) {
    size_t k = (size_t)f * (size_t)nb;
    anim_fk(gp, gr, clip->local_positions + k, clip->local_rotations + k, clip->skeleton.parents, nb);
    quat facing = quat_conj(yaw_of(anim_pose_facing(gp, gr, hips, lhip, rhip)));
    for (int b = 0; b < nb; b++) {
      quat own = quat_mul(facing, gr[b]), mirrored = reflect_rotation(quat_mul(facing, gr[partner[b]]));
      for (int t = 0; t < 4; t++) score[b][t] += fabsf(quat_dot(quat_mul(mirrored, half_turns[t]), own));
    }
  }
}

static void mirror_fixes_from(float (*score)[4], int nbones, quat *out_fix) {
  for (int b = 0; b < nbones; b++) {
    int best = 0;
    for (int t = 1; t < 4; t++)
      if (score[b][t] > score[b][best]) best = t;
    out_fix[b] = half_turns[best];
  }
}

/* Mirrors clip in place across the X = 0 plane, swapping left and right bones.
 *
 * In world space positions reflect and a bone takes its partner's reflected
 * rotation M R_p M. That alone shows the mirrored pose, but through rotations
 * in the partner's axis convention reflected, which is the bone's own only
 * when the skeleton's joint frames are mirror images with x across the body.
 * Where they are not (Bandai's hips: local x points up; its thighs and
 * shoulders), the mirrored clip shows the right pose through rotations half a
 * turn away from the original's, and an inertialized transition between the
 * two swings the body through that half turn. So each bone's reflected
 * rotation is followed by the half turn fix[b] that restores its own
 * convention (mirror_evidence), and local transforms are recomputed from the
 * world ones: every world position is exactly the reflected one. */
static void mirror_clip(anim_clip_t *clip, const int *partner, const quat *fix) {
  int nb = clip->skeleton.nbones;
  vec3 gp[ANIM_MAX_BONES], mp[ANIM_MAX_BONES];
  quat gr[ANIM_MAX_BONES], mr[ANIM_MAX_BONES];
  for (int f = 0; f < clip->nframes; f++) {
    vec3 *lp = clip->local_positions + (size_t)f * (size_t)nb;
    quat *lr = clip->local_rotations + (size_t)f * (size_t)nb;
    anim_fk(gp, gr, lp, lr, clip->skeleton.parents, nb);
    for (int b = 0; b < nb; b++) {
      vec3 p = gp[partner[b]];
      mp[b] = vec3_make(-p.x, p.y, p.z);
      mr[b] = quat_normalize(quat_mul(reflect_rotation(gr[partner[b]]), fix[b]));
    }
    anim_ik_local(lp, lr, mp, mr, clip->skeleton.parents, nb);
  }
  snprintf(clip->name + strnlen(clip->name, ANIM_NAME_MAX - 8), 8, "_mirror");
}

void anim_mirror_clips(anim_clip_t *const *originals, anim_clip_t *const *copies, int nclips, const int *roles,
                       const char *left, const char *right) {
  if (nclips < 1) return;
  /* One skeleton: the axis fixes come from the evidence of every clip. */
  float score[ANIM_MAX_BONES][4]; /* 2 KiB */
  int partner[ANIM_MAX_BONES];
  quat fix[ANIM_MAX_BONES];
  memset(score, 0, sizeof score);
  mirror_partners(&originals[0]->skeleton, left, right, partner);
  for (int c = 0; c < nclips; c++) mirror_evidence(originals[c], roles, partner, score);
  mirror_fixes_from(score, originals[0]->skeleton.nbones, fix);
  for (int c = 0; c < nclips; c++) mirror_clip(copies[c], partner, fix);
}
