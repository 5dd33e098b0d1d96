/*
 * database.c: building a motion database from clips (see database.h).
 *
 * Per clip: resample to the database rate (lerp positions, slerp rotations),
 * optionally mirror (a second copy with left and right swapped, reflected in
 * the character's sagittal plane), add the ground-projected simulation bone,
 * then forward kinematics, finite-difference velocities and foot contacts.
 * One range per clip. What it does not do: feature extraction (feature.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "database.h"
#include "hash.h"
#include "kinematics.h"

#define SIMULATION_BONE "Simulation"
/* Gaussian smoothing (sigma, in frames at the database rate) of the
 * simulation bone's path and facing: enough to remove the gait's sway (the
 * facing sways more than the path), little enough to keep turns and stops. */
#define PATH_SMOOTHING_SIGMA 6.0f
#define FACING_SMOOTHING_SIGMA 10.0f

void anim_build_options_default(anim_build_options_t *o) {
  memset(o, 0, sizeof *o);
  o->frame_rate = 60.0f;
  o->contact_height = 0.06f;
  o->contact_speed = 0.35f;
}

static int fail(char *err, int errlen, int code, const char *fmt, const char *arg) {
  if (err && errlen > 0) snprintf(err, (size_t)errlen, fmt, arg);
  return code;
}

/* ---- bone naming ---------------------------------------------------------------- */

static int find_any(const anim_skeleton_t *s, const char *const *names) {
  for (int i = 0; names[i]; i++) {
    int b = anim_skeleton_find(s, names[i]);
    if (b >= 0) return b;
  }
  return -1;
}

static const char *const hips_names[] = {"Hips", "hips", "Hip", "pelvis", "Pelvis", "RootJoint", "mixamorig:Hips", NULL};
static const char *const left_hip_names[] = {"LeftUpLeg", "UpperLeg_L", "LeftHip", "LeftUpperLeg", "LeftThigh", "lHip", "l_hip", NULL};
static const char *const right_hip_names[] = {"RightUpLeg", "UpperLeg_R", "RightHip", "RightUpperLeg", "RightThigh", "rHip", "r_hip", NULL};
static const char *const left_foot_names[] = {"LeftToe", "LeftToeBase", "Toes_L", "LeftToes", "lToeJoint", "LeftFoot", "Foot_L", "LeftAnkle", "lAnkle", NULL};
static const char *const right_foot_names[] = {"RightToe", "RightToeBase", "Toes_R", "RightToes", "rToeJoint", "RightFoot", "Foot_R", "RightAnkle", "rAnkle", NULL};

/* Name of bone with its left/right mark swapped into out, or 0 when it has none. */
static int mirror_name(const char *name, char *out, size_t size, const anim_build_options_t *o) {
  const char *pairs[][2] = {{o->mirror_left ? o->mirror_left : "Left", o->mirror_right ? o->mirror_right : "Right"},
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

/* ---- per-clip steps ----------------------------------------------------------------- */

/* Resamples clip to rate into out (allocated). */
static int resample(anim_clip_t *out, const anim_clip_t *clip, float rate) {
  float duration = (float)(clip->nframes - 1) * clip->frame_time;
  int nframes = (int)floorf(duration * rate + 1e-3f) + 1;
  int rc = anim_clip_alloc(out, &clip->skeleton, nframes, 1.0f / rate);
  if (rc) return rc;
  snprintf(out->name, sizeof out->name, "%s", clip->name);
  int nb = clip->skeleton.nbones;
  for (int f = 0; f < nframes; f++) {
    float s = (float)f / rate / clip->frame_time;
    int i0 = (int)floorf(s);
    if (i0 > clip->nframes - 1) i0 = clip->nframes - 1;
    int i1 = i0 + 1 < clip->nframes ? i0 + 1 : i0;
    float a = s - (float)i0;
    for (int b = 0; b < nb; b++) {
      size_t k0 = (size_t)i0 * (size_t)nb + (size_t)b, k1 = (size_t)i1 * (size_t)nb + (size_t)b;
      size_t k = (size_t)f * (size_t)nb + (size_t)b;
      out->local_positions[k] = vec3_lerp(clip->local_positions[k0], clip->local_positions[k1], a);
      out->local_rotations[k] = quat_slerp_shortest(clip->local_rotations[k0], clip->local_rotations[k1], a);
    }
  }
  return 0;
}

/* The reflection across X = 0 of a rotation (M R M): the quaternion (w, x, -y, -z). */
static quat reflect_rotation(quat q) { return quat_make(q.w, q.x, -q.y, -q.z); }

/* The actor's facing as a rotation about +Y, from the hip line (left x up is
 * forward); identity without hip joints or when the line is vertical. */
static quat hips_facing(const vec3 *gp, int lhip, int rhip) {
  if (lhip < 0 || rhip < 0) return quat_identity();
  vec3 forward = vec3_cross(vec3_sub(gp[lhip], gp[rhip]), vec3_make(0.0f, 1.0f, 0.0f));
  if (forward.x * forward.x + forward.z * forward.z < 1e-8f) return quat_identity();
  return quat_from_angle_axis(atan2f(forward.x, forward.z), vec3_make(0.0f, 1.0f, 0.0f));
}

static const quat half_turns[4] = {{1.0f, 0.0f, 0.0f, 0.0f}, {0.0f, 1.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 1.0f, 0.0f},
                                   {0.0f, 0.0f, 0.0f, 1.0f}};

/* The left/right partner of every bone (itself when it has none). */
static void mirror_partners(const anim_skeleton_t *s, const anim_build_options_t *o, int *out_partner) {
  for (int b = 0; b < s->nbones; b++) {
    char other[ANIM_NAME_MAX];
    out_partner[b] = b;
    if (mirror_name(s->names[b], other, sizeof other, o)) {
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
static void mirror_evidence(const anim_clip_t *clip, const int *partner, float (*score)[4]) {
  int nb = clip->skeleton.nbones;
  int lhip = find_any(&clip->skeleton, left_hip_names), rhip = find_any(&clip->skeleton, right_hip_names);
  vec3 gp[ANIM_MAX_BONES];
  quat gr[ANIM_MAX_BONES];
  int step = clip->nframes > 128 ? clip->nframes / 128 : 1;
  for (int f = 0; f < clip->nframes; f += step) {
    size_t k = (size_t)f * (size_t)nb;
    anim_fk(gp, gr, clip->local_positions + k, clip->local_rotations + k, clip->skeleton.parents, nb);
    quat facing = quat_conj(hips_facing(gp, lhip, rhip));
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
static vec3 pose_facing(const vec3 *gp, const quat *gr, int hips, int lhip, int rhip) {
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
static int simulation_path(const anim_clip_t *clip, int hips, vec3 *out_path, vec3 *out_facing) {
  const anim_skeleton_t *s = &clip->skeleton;
  int nb = s->nbones, n = clip->nframes;
  int lhip = find_any(s, left_hip_names), rhip = find_any(s, right_hip_names);
  vec3 gp[ANIM_MAX_BONES];
  quat gr[ANIM_MAX_BONES];
  for (int f = 0; f < n; f++) {
    size_t k = (size_t)f * (size_t)nb;
    anim_fk(gp, gr, clip->local_positions + k, clip->local_rotations + k, s->parents, nb);
    out_path[f] = vec3_make(gp[hips].x, 0.0f, gp[hips].z);
    out_facing[f] = pose_facing(gp, gr, hips, lhip, rhip);
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

/* Writes the clip's frames under a new simulation bone 0 into db at frame
 * offset `start` (see database.h, "The simulation bone"). */
static int add_simulation_root(anim_database_t *db, int start, const anim_clip_t *clip) {
  const anim_skeleton_t *s = &clip->skeleton;
  int n = clip->nframes, hips = find_any(s, hips_names);
  if (hips < 0) hips = 0;
  vec3 *path = malloc((size_t)n * sizeof *path), *facing = malloc((size_t)n * sizeof *facing);
  if (!path || !facing) {
    free(path), free(facing);
    return ANIM_ENOMEM;
  }
  uint8_t folded[ANIM_MAX_BONES];
  find_folded(s, hips, folded);
  int rc = simulation_path(clip, hips, path, facing);
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

/* ---- whole-database steps ------------------------------------------------------------ */

static int alloc_arrays(anim_database_t *db) {
  size_t n = (size_t)db->nframes * (size_t)db->nbones;
  db->local_positions = calloc(n, sizeof(vec3));
  db->local_velocities = calloc(n, sizeof(vec3));
  db->local_rotations = calloc(n, sizeof(quat));
  db->local_angular_velocities = calloc(n, sizeof(vec3));
  db->global_positions = calloc(n, sizeof(vec3));
  db->global_velocities = calloc(n, sizeof(vec3));
  db->global_rotations = calloc(n, sizeof(quat));
  db->global_angular_velocities = calloc(n, sizeof(vec3));
  return db->local_positions && db->local_velocities && db->local_rotations && db->local_angular_velocities &&
                 db->global_positions && db->global_velocities && db->global_rotations &&
                 db->global_angular_velocities
             ? 0
             : ANIM_ENOMEM;
}

/* Central differences inside each range, one-sided at its ends. */
static void compute_velocities(anim_database_t *db) {
  int nb = db->nbones;
  float dt = 1.0f / db->frame_rate;
  for (int r = 0; r < db->nranges; r++) {
    int a = db->ranges[r].start, z = db->ranges[r].stop;
    for (int f = a; f < z; f++) {
      int f0 = f > a ? f - 1 : f, f1 = f + 1 < z ? f + 1 : f;
      float span = (float)(f1 - f0) * dt;
      for (int b = 0; b < nb; b++) {
        size_t k0 = (size_t)f0 * (size_t)nb + (size_t)b, k1 = (size_t)f1 * (size_t)nb + (size_t)b;
        size_t k = (size_t)f * (size_t)nb + (size_t)b;
        if (f1 == f0) {
          db->local_velocities[k] = vec3_zero();
          db->local_angular_velocities[k] = vec3_zero();
          continue;
        }
        db->local_velocities[k] = vec3_scale(vec3_sub(db->local_positions[k1], db->local_positions[k0]), 1.0f / span);
        db->local_angular_velocities[k] = quat_angular_velocity(db->local_rotations[k0], db->local_rotations[k1], span);
        /* The angular velocity of a local rotation, in the parent's frame. */
      }
    }
  }
  for (int f = 0; f < db->nframes; f++) {
    size_t k = (size_t)f * (size_t)nb;
    anim_fk_velocity(db->global_positions + k, db->global_rotations + k, db->global_velocities + k,
                     db->global_angular_velocities + k, db->local_positions + k, db->local_rotations + k,
                     db->local_velocities + k, db->local_angular_velocities + k, db->skeleton.parents, nb);
  }
}

/* A foot is in contact when near its lowest height in the range and slow;
 * single-frame blips either way are removed. */
static void compute_contacts(anim_database_t *db, const anim_build_options_t *o) {
  int nb = db->nbones, nc = db->ncontacts;
  for (int r = 0; r < db->nranges; r++) {
    int a = db->ranges[r].start, z = db->ranges[r].stop;
    for (int c = 0; c < nc; c++) {
      int bone = db->contact_bones[c];
      float lowest = 1e30f;
      for (int f = a; f < z; f++) lowest = fminf(lowest, db->global_positions[(size_t)f * (size_t)nb + (size_t)bone].y);
      for (int f = a; f < z; f++) {
        size_t k = (size_t)f * (size_t)nb + (size_t)bone;
        vec3 v = db->global_velocities[k];
        float horizontal = sqrtf(v.x * v.x + v.z * v.z);
        db->contacts[(size_t)f * (size_t)nc + (size_t)c] =
            db->global_positions[k].y < lowest + o->contact_height && horizontal < o->contact_speed;
      }
      for (int f = a + 1; f + 1 < z; f++) {
        uint8_t *prev = &db->contacts[(size_t)(f - 1) * (size_t)nc + (size_t)c];
        uint8_t *cur = prev + nc, *next = cur + nc;
        if (*prev == *next && *cur != *prev) *cur = *prev;
      }
    }
  }
}

static int find_contact_bones(anim_database_t *db, const anim_build_options_t *o) {
  db->ncontacts = 0;
  if (o->contact_bone_names[0]) {
    for (int i = 0; i < ANIM_MAX_CONTACTS && o->contact_bone_names[i]; i++) {
      int b = anim_skeleton_find(&db->skeleton, o->contact_bone_names[i]);
      if (b < 0) return ANIM_ENOTFOUND;
      db->contact_bones[db->ncontacts++] = b;
    }
    return 0;
  }
  int l = find_any(&db->skeleton, left_foot_names), r = find_any(&db->skeleton, right_foot_names);
  if (l >= 0) db->contact_bones[db->ncontacts++] = l;
  if (r >= 0) db->contact_bones[db->ncontacts++] = r;
  return 0;
}

static int same_skeleton(const anim_skeleton_t *a, const anim_skeleton_t *b) {
  if (a->nbones != b->nbones) return 0;
  for (int i = 0; i < a->nbones; i++)
    if (a->parents[i] != b->parents[i] || strcmp(a->names[i], b->names[i]) != 0) return 0;
  return 1;
}

/* Options and clips fit to build from: 0, or the error with its message. */
static int check_inputs(const char *name, const anim_clip_t *clips, int nclips, const anim_build_options_t *o,
                        char *err, int errlen) {
  if (!clips || nclips < 1) return fail(err, errlen, ANIM_EINVAL, "%s: no clips", name);
  if (!(o->frame_rate > 0.0f) || o->frame_rate > 1000.0f)
    return fail(err, errlen, ANIM_EINVAL, "%s: frame rate must be in (0, 1000] Hz", name);
  if (!(o->contact_height >= 0.0f) || !(o->contact_speed >= 0.0f) || !isfinite(o->contact_height) ||
      !isfinite(o->contact_speed))
    return fail(err, errlen, ANIM_EINVAL, "%s: contact height and speed must be finite and >= 0", name);
  if (clips[0].skeleton.nbones + 1 > ANIM_MAX_BONES)
    return fail(err, errlen, ANIM_EINVAL, "%s: no room for the simulation bone (128 bones at most)", clips[0].name);
  for (int c = 0; c < nclips; c++) {
    int rc = anim_clip_validate(&clips[c], err, errlen);
    if (rc) return rc;
    if (!same_skeleton(&clips[0].skeleton, &clips[c].skeleton))
      return fail(err, errlen, ANIM_EINVAL, "%s: skeleton differs from the first clip's", clips[c].name);
  }
  return 0;
}

/* The database skeleton: the simulation bone, then the clips' bones shifted by one. */
static void make_skeleton(anim_database_t *db, const anim_skeleton_t *src) {
  anim_skeleton_t *s = &db->skeleton;
  s->nbones = src->nbones + 1;
  snprintf(s->names[0], ANIM_NAME_MAX, "%s", SIMULATION_BONE);
  s->parents[0] = -1;
  for (int b = 0; b < src->nbones; b++) {
    snprintf(s->names[b + 1], ANIM_NAME_MAX, "%s", src->names[b]);
    s->parents[b + 1] = src->parents[b] + 1;
    s->offsets[b + 1] = src->offsets[b];
  }
  db->nbones = s->nbones;
}

/* Resampled (and mirrored) copies of the clips: out_copies[c * copies + m]. */
static int resample_all(anim_clip_t *out_copies, const anim_clip_t *clips, int nclips, int copies,
                        const anim_build_options_t *o, int *out_frames) {
  *out_frames = 0;
  for (int c = 0; c < nclips; c++)
    for (int m = 0; m < copies; m++) {
      int rc = resample(&out_copies[c * copies + m], &clips[c], o->frame_rate);
      if (rc) return rc;
      *out_frames += out_copies[c * copies + m].nframes;
    }
  if (copies < 2) return 0;
  /* One skeleton (checked): the mirror's axis fixes come from every clip. */
  float score[ANIM_MAX_BONES][4]; /* 2 KiB */
  int partner[ANIM_MAX_BONES];
  quat fix[ANIM_MAX_BONES];
  memset(score, 0, sizeof score);
  mirror_partners(&clips[0].skeleton, o, partner);
  for (int c = 0; c < nclips; c++) mirror_evidence(&out_copies[c * copies], partner, score);
  mirror_fixes_from(score, clips[0].skeleton.nbones, fix);
  for (int c = 0; c < nclips; c++) mirror_clip(&out_copies[c * copies + 1], partner, fix);
  return 0;
}

/* Ranges and frames of the copies, under the simulation bone. */
static int fill_frames(anim_database_t *db, const anim_clip_t *copies) {
  int start = 0;
  for (int i = 0; i < db->nranges; i++) {
    db->ranges[i].start = start;
    db->ranges[i].stop = start + copies[i].nframes;
    snprintf(db->ranges[i].name, ANIM_NAME_MAX, "%s", copies[i].name);
    int rc = add_simulation_root(db, start, &copies[i]);
    if (rc) return rc;
    start += copies[i].nframes;
  }
  return 0;
}

int anim_database_build(anim_database_t *out, const char *name, const anim_clip_t *clips, int nclips,
                        const anim_build_options_t *options, char *err, int errlen) {
  anim_build_options_t defaults;
  if (!options) anim_build_options_default(&defaults), options = &defaults;
  if (!name) name = "database";
  memset(out, 0, sizeof *out);
  int rc = check_inputs(name, clips, nclips, options, err, errlen);
  if (rc) return rc;
  snprintf(out->name, sizeof out->name, "%s", name);
  out->frame_rate = options->frame_rate;
  make_skeleton(out, &clips[0].skeleton);
  if ((rc = find_contact_bones(out, options)))
    return fail(err, errlen, rc, "%s: a contact bone is not in the skeleton", name);

  int copies = options->mirror ? 2 : 1;
  out->nranges = nclips * copies;
  anim_clip_t *resampled = calloc((size_t)out->nranges, sizeof *resampled);
  out->ranges = calloc((size_t)out->nranges, sizeof *out->ranges);
  rc = resampled && out->ranges ? resample_all(resampled, clips, nclips, copies, options, &out->nframes) : ANIM_ENOMEM;
  if (!rc) rc = alloc_arrays(out);
  if (!rc && !(out->contacts = calloc((size_t)out->nframes * (size_t)(out->ncontacts ? out->ncontacts : 1), 1)))
    rc = ANIM_ENOMEM;
  if (!rc) rc = fill_frames(out, resampled);
  for (int i = 0; resampled && i < out->nranges; i++) anim_clip_free(&resampled[i]);
  free(resampled);
  if (rc) {
    anim_database_free(out);
    return fail(err, errlen, rc, "%s: out of memory", name);
  }
  compute_velocities(out);
  compute_contacts(out, options);
  for (int i = 1; options->mirror && i < out->nranges; i += 2) anim_database_tag_range(out, i, "mirror");
  anim_database_update_version(out);
  return 0;
}

/* ---- tags, lookup, lifetime --------------------------------------------------------- */

int anim_database_find_tag(const anim_database_t *db, const char *tag) {
  for (int t = 0; t < db->ntags; t++)
    if (strcmp(db->tag_names[t], tag) == 0) return t;
  return -1;
}

int anim_database_tag_range(anim_database_t *db, int r, const char *tag) {
  if (r < 0 || r >= db->nranges || !tag || !*tag || strlen(tag) >= ANIM_NAME_MAX) return ANIM_EINVAL;
  int t = anim_database_find_tag(db, tag);
  if (t < 0) {
    if (db->ntags == ANIM_MAX_TAGS) return ANIM_ELIMIT;
    t = db->ntags++;
    snprintf(db->tag_names[t], ANIM_NAME_MAX, "%s", tag);
  }
  db->ranges[r].tag_mask |= 1u << t;
  return 0;
}

int anim_database_range_of(const anim_database_t *db, int frame) {
  int lo = 0, hi = db->nranges - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    if (frame < db->ranges[mid].start) hi = mid - 1;
    else if (frame >= db->ranges[mid].stop) lo = mid + 1;
    else return mid;
  }
  return -1;
}

void anim_database_free(anim_database_t *db) {
  if (!db) return;
  if (db->mapping) {
    /* Arrays point into a file mapping owned by dbfile.c. */
    anim_dbfile_release(db);
  } else {
    free(db->local_positions), free(db->local_velocities), free(db->local_rotations);
    free(db->local_angular_velocities), free(db->global_positions), free(db->global_velocities);
    free(db->global_rotations), free(db->global_angular_velocities), free(db->contacts), free(db->ranges);
    anim_features_free(&db->features);
  }
  memset(db, 0, sizeof *db);
}

/* Rule 6: the schema fits the skeleton, and the groups its columns. */
static int validate_feature_layout(const anim_database_t *db, char *err, int errlen) {
  const anim_features_t *f = &db->features;
  char why[160];
  if (anim_feature_schema_validate(&f->schema, db, why, sizeof why))
    return fail(err, errlen, ANIM_EFORMAT, "feature schema: %s", why);
  int col = 0;
  for (int t = 0; t < f->schema.nterms; t++) {
    if (f->group_start[t] != col || f->group_dims[t] != anim_feature_term_dims(&f->schema.terms[t]))
      return fail(err, errlen, ANIM_EFORMAT, "%s: a feature group's columns differ from its term's", db->name);
    col += f->group_dims[t];
  }
  if (col != f->cols) return fail(err, errlen, ANIM_EFORMAT, "%s: feature groups do not make up the columns", db->name);
  return 0;
}

int anim_database_validate(const anim_database_t *db, char *err, int errlen) {
  const anim_skeleton_t *s = &db->skeleton;
  if (s->nbones < 1 || s->nbones > ANIM_MAX_BONES || db->nbones != s->nbones || s->parents[0] != -1)
    return fail(err, errlen, ANIM_EFORMAT, "%s: bad skeleton", db->name);
  for (int b = 1; b < s->nbones; b++)
    if (s->parents[b] < 0 || s->parents[b] >= b) return fail(err, errlen, ANIM_EFORMAT, "%s: parents out of order", db->name);
  if (db->nframes < 1 || !(db->frame_rate > 0.0f)) return fail(err, errlen, ANIM_EFORMAT, "%s: no frames", db->name);
  int expect = 0;
  for (int r = 0; r < db->nranges; r++) {
    const anim_range_t *range = &db->ranges[r];
    if (range->start != expect || range->stop <= range->start || range->stop > db->nframes)
      return fail(err, errlen, ANIM_EFORMAT, "%s: ranges must be sorted, disjoint and cover every frame", db->name);
    if (!memchr(range->name, 0, sizeof range->name))
      return fail(err, errlen, ANIM_EFORMAT, "%s: a range name is not terminated", db->name);
    if (db->ntags < 32 && (range->tag_mask >> db->ntags) != 0)
      return fail(err, errlen, ANIM_EFORMAT, "%s: a range has an unknown tag", db->name);
    expect = range->stop;
  }
  if (expect != db->nframes || db->nranges < 1)
    return fail(err, errlen, ANIM_EFORMAT, "%s: ranges must cover every frame", db->name);
  if (db->ncontacts < 0 || db->ncontacts > ANIM_MAX_CONTACTS)
    return fail(err, errlen, ANIM_EFORMAT, "%s: bad contact count", db->name);
  for (int c = 0; c < db->ncontacts; c++)
    if (db->contact_bones[c] < 0 || db->contact_bones[c] >= db->nbones)
      return fail(err, errlen, ANIM_EFORMAT, "%s: contact bone out of range", db->name);
  if (db->features.values && db->features.rows != db->nframes)
    return fail(err, errlen, ANIM_EFORMAT, "%s: feature rows differ from frames", db->name);
  if (db->features.values) return validate_feature_layout(db, err, errlen);
  return 0;
}

/* Chains anim_hash64 (hash.h) over one array: the previous hash seeds the next. */
static uint64_t mix(uint64_t h, const void *data, size_t len) { return data ? anim_hash64(data, len, h) : h; }

/* A name hashed up to its terminator: bytes after it are not content. */
static uint64_t mix_name(uint64_t h, const char *name) { return mix(h, name, strnlen(name, ANIM_NAME_MAX)) + 1; }

void anim_database_update_version(anim_database_t *db) {
  size_t n = (size_t)db->nframes * (size_t)db->nbones;
  uint64_t h = 0x616e696d64620001ull; /* "animdb", 1 */
  for (int b = 0; b < db->skeleton.nbones; b++) h = mix_name(h, db->skeleton.names[b]);
  h = mix(h, db->skeleton.parents, (size_t)db->skeleton.nbones * sizeof(int));
  h = mix(h, db->skeleton.offsets, (size_t)db->skeleton.nbones * sizeof(vec3));
  h = mix(h, &db->frame_rate, sizeof db->frame_rate);
  h = mix(h, db->local_positions, n * sizeof(vec3));
  h = mix(h, db->local_rotations, n * sizeof(quat));
  for (int r = 0; r < db->nranges; r++) {
    const anim_range_t *range = &db->ranges[r];
    int bounds[2] = {range->start, range->stop};
    h = mix(mix(h, bounds, sizeof bounds), &range->tag_mask, sizeof range->tag_mask);
    h = mix_name(h, range->name);
  }
  for (int t = 0; t < db->ntags; t++) h = mix_name(h, db->tag_names[t]);
  h = mix(h, db->contact_bones, (size_t)db->ncontacts * sizeof(int));
  h = mix(h, db->contacts, (size_t)db->nframes * (size_t)db->ncontacts);
  const anim_features_t *f = &db->features;
  if (f->values) {
    h = mix(h, f->values, (size_t)f->rows * (size_t)f->cols * sizeof(float));
    h = mix(h, f->offset, (size_t)f->cols * sizeof(float));
    h = mix(h, f->scale, (size_t)f->cols * sizeof(float));
  }
  /* 0 means "no database" to clients. */
  db->version = h ? h : 1;
}
