/* lmm.c: the learned-motion-matching networks and character (see lmm.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "base/hash.h"
#include "pose/kinematics.h"
#include "learned/lmm.h"
#include "motion/spring.h"
#include "character/steering.h"

const anim_lmm_group_t anim_lmm_groups[ANIM_LMM_GROUPS] = {
    {"left foot position", 0, 3, 0.75f}, {"right foot position", 3, 3, 0.75f}, {"left foot velocity", 6, 3, 1.0f},
    {"right foot velocity", 9, 3, 1.0f}, {"hips velocity", 12, 3, 1.0f},      {"trajectory position", 15, 6, 1.0f},
    {"trajectory direction", 21, 6, 1.5f},
};

static const char *const bone_names[ANIM_LMM_BONES] = {
    "Simulation", "Hips",      "LeftUpLeg",    "LeftLeg",     "LeftFoot", "LeftToe",       "RightUpLeg", "RightLeg",
    "RightFoot",  "RightToe",  "Spine",        "Spine1",      "Spine2",   "Neck",          "Head",       "LeftShoulder",
    "LeftArm",    "LeftForeArm", "LeftHand",   "RightShoulder", "RightArm", "RightForeArm", "RightHand"};
static const int bone_parents[ANIM_LMM_BONES] = {-1, 0,  1,  2,  3,  4,  1,  6,  7,  8,  1,  10,
                                                 11, 12, 13, 12, 15, 16, 17, 12, 19, 20, 21};

/* Trajectory samples ahead, in seconds (20, 40, 60 frames at 60 Hz). */
static const float trajectory_times[ANIM_LMM_TRAJECTORY] = {20.0f / 60.0f, 40.0f / 60.0f, 60.0f / 60.0f};

static const vec3 up = {0.0f, 1.0f, 0.0f};

/* ---- networks ------------------------------------------------------------------------------ */

static anim_lmm_networks_t *finish_networks(anim_lmm_networks_t *nets, int *out_code, char *err, int errlen);

uint64_t anim_lmm_networks_hash(const anim_nnet_t *projector, const anim_nnet_t *stepper,
                                const anim_nnet_t *decompressor) {
  uint64_t h[3] = {projector->hash, stepper->hash, decompressor->hash};
  return anim_hash64(h, sizeof h, 0x6c6d6d);
}

int anim_lmm_networks_check(const anim_nnet_t *p, const anim_nnet_t *s, const anim_nnet_t *d,
                            const anim_lmm_normalization_t *norm, char *err, int errlen) {
#define REFUSE(...) \
  do { \
    if (err && errlen > 0) snprintf(err, (size_t)errlen, __VA_ARGS__); \
    return ANIM_EFORMAT; \
  } while (0)
  if (!p || !s || !d) REFUSE("a network is missing");
  if (p->ninputs != ANIM_LMM_FEATURES)
    REFUSE("the projector takes %d inputs, not the %d features", p->ninputs, ANIM_LMM_FEATURES);
  if (p->noutputs <= ANIM_LMM_FEATURES || p->noutputs > ANIM_LMM_MAX_STATE)
    REFUSE("the projector gives %d outputs: features (%d) and a latent, at most %d in all", p->noutputs,
           ANIM_LMM_FEATURES, ANIM_LMM_MAX_STATE);
  if (s->ninputs != p->noutputs || s->noutputs != p->noutputs)
    REFUSE("the stepper maps %d to %d values, the projector's state has %d", s->ninputs, s->noutputs, p->noutputs);
  if (d->ninputs != p->noutputs)
    REFUSE("the decompressor takes %d inputs, the projector's state has %d", d->ninputs, p->noutputs);
  if (d->noutputs != ANIM_LMM_POSE_OUTPUTS)
    REFUSE("the decompressor gives %d outputs, the %d-bone skeleton with %d contacts needs %d", d->noutputs,
           ANIM_LMM_BONES, ANIM_LMM_CONTACTS, ANIM_LMM_POSE_OUTPUTS);
  if (norm) {
    for (int j = 0; j < ANIM_LMM_FEATURES; j++)
      if (!isfinite(norm->offset[j]) || !isfinite(norm->scale[j]) || !(norm->scale[j] > 0.0f))
        REFUSE("normalization column %d: offset %g, scale %g (finite, scale > 0)", j, (double)norm->offset[j],
               (double)norm->scale[j]);
    uint64_t hash = anim_lmm_networks_hash(p, s, d);
    if (norm->networks_hash && norm->networks_hash != hash)
      REFUSE("the normalization belongs to other networks (hash %016llx, these are %016llx): recover it with "
             "tools/lmm_recover",
             (unsigned long long)norm->networks_hash, (unsigned long long)hash);
  }
  return 0;
#undef REFUSE
}

anim_lmm_networks_t *anim_lmm_networks_create(anim_nnet_t *projector, anim_nnet_t *stepper, anim_nnet_t *decompressor,
                                              const anim_lmm_normalization_t *normalization, int *out_code, char *err,
                                              int errlen) {
  if (!normalization) normalization = &anim_lmm_normalization_recovered;
  int code = anim_lmm_networks_check(projector, stepper, decompressor, normalization, err, errlen);
  anim_lmm_networks_t *nets = NULL;
  if (code == 0 && !(nets = calloc(1, sizeof *nets))) {
    code = ANIM_ENOMEM;
    if (err && errlen > 0) snprintf(err, (size_t)errlen, "out of memory");
  }
  if (out_code) *out_code = code;
  if (code) return NULL;
  nets->projector = projector, nets->stepper = stepper, nets->decompressor = decompressor;
  nets->normalization = *normalization;
  anim_skeleton_t *sk = &nets->skeleton;
  sk->nbones = ANIM_LMM_BONES;
  for (int b = 0; b < ANIM_LMM_BONES; b++) {
    snprintf(sk->names[b], ANIM_NAME_MAX, "%s", bone_names[b]);
    sk->parents[b] = bone_parents[b];
  }
  nets->nbones = ANIM_LMM_BONES, nets->nfeatures = ANIM_LMM_FEATURES, nets->ncontacts = ANIM_LMM_CONTACTS;
  nets->contact_bones[0] = ANIM_LMM_LEFT_TOE, nets->contact_bones[1] = ANIM_LMM_RIGHT_TOE;
  nets->frame_rate = ANIM_LMM_FRAME_RATE;
  nets->ntrajectory = 2;
  for (int t = 0; t < 2; t++) {
    anim_lmm_trajectory_term_t *term = &nets->trajectory[t];
    term->first = 15 + 6 * t, term->nsamples = ANIM_LMM_TRAJECTORY, term->direction = t;
    for (int i = 0; i < ANIM_LMM_TRAJECTORY; i++) term->times[i] = trajectory_times[i];
  }
  return finish_networks(nets, out_code, err, errlen);
}

/* What both kinds share once the layout is set: state size, hash, bone
 * offsets, the constant bones and the pose network. Frees nets (not its
 * networks) on failure. */
static anim_lmm_networks_t *finish_networks(anim_lmm_networks_t *nets, int *out_code, char *err, int errlen) {
  int code = 0;
  const anim_nnet_t *decompressor = nets->decompressor;
  nets->nstate = nets->projector->noutputs;
  nets->npose = 15 * (nets->nbones - 1) + 6 + nets->ncontacts;
  nets->hash = anim_lmm_networks_hash(nets->projector, nets->stepper, nets->decompressor);
  anim_skeleton_t *sk = &nets->skeleton;
  int nb = nets->nbones;
  for (int b = 0; b < nb; b++) {
    /* Bone offsets: the decompressor's mean local positions (constant for
     * the bones below the Hips, whose output std is 0; the Hips' mean height for bone 1). */
    const float *m = decompressor->output_mean + 3 * (b - 1);
    sk->offsets[b] = b == 0 ? vec3_zero() : vec3_make(m[0], m[1], m[2]);
    const float *sd = decompressor->output_std + 3 * (b - 1);
    if (b > 0 && sd[0] < ANIM_LMM_CONSTANT_BONE_STD && sd[1] < ANIM_LMM_CONSTANT_BONE_STD &&
        sd[2] < ANIM_LMM_CONSTANT_BONE_STD)
      nets->constant_bones |= 1ull << b;
  }
  /* The outputs decoding reads: all but the constant bones' positions and velocities. */
  int columns[sizeof nets->pose_column / sizeof nets->pose_column[0]], ncolumns = 0;
  for (int o = 0; o < nets->npose; o++) {
    int in_positions = o < 3 * (nb - 1);
    int in_velocities = o >= 9 * (nb - 1) && o < 12 * (nb - 1);
    int bone = in_positions ? 1 + o / 3 : in_velocities ? 1 + (o - 9 * (nb - 1)) / 3 : 0;
    int skipped = (in_positions || in_velocities) && (nets->constant_bones >> bone & 1u);
    nets->pose_column[o] = (int16_t)(skipped ? -1 : ncolumns);
    if (!skipped) columns[ncolumns++] = o;
  }
  nets->pose_network = anim_nnet_select_outputs(decompressor, columns, ncolumns, &code, err, errlen);
  if (!nets->pose_network) {
    free(nets);
    if (out_code) *out_code = code;
    return NULL;
  }
  /* Everything read from the full decompressor is copied (offsets,
   * constant bones, hash): release it (lmm.h). */
  anim_nnet_free(nets->decompressor);
  nets->decompressor = NULL;
  if (out_code) *out_code = 0;
  return nets;
}

/* The layout of networks trained on db, checked against their shapes. */
static int layout_for(anim_lmm_networks_t *nets, const anim_database_t *db, char *err, int errlen) {
#define REFUSE(code, ...) \
  do { \
    if (err && errlen > 0) snprintf(err, (size_t)errlen, __VA_ARGS__); \
    return code; \
  } while (0)
  const anim_nnet_t *p = nets->projector, *s = nets->stepper, *d = nets->decompressor;
  const anim_features_t *f = &db->features;
  if (!f->values || f->cols < 1) REFUSE(ANIM_EINVAL, "database %s has no matching features", db->name);
  if (db->ncontacts < 1) REFUSE(ANIM_EINVAL, "database %s has no contact bones", db->name);
  if (db->nbones < 2 || db->nbones > ANIM_LMM_MAX_BONES)
    REFUSE(ANIM_EINVAL, "database %s has %d bones (learned characters: 2..%d)", db->name, db->nbones,
           ANIM_LMM_MAX_BONES);
  if (f->cols > ANIM_LMM_MAX_FEATURES) REFUSE(ANIM_EINVAL, "database %s has %d features", db->name, f->cols);
  int npose = 15 * (db->nbones - 1) + 6 + db->ncontacts;
  if (p->ninputs != f->cols)
    REFUSE(ANIM_EFORMAT, "projector.bin takes %d inputs, database %s has %d features", p->ninputs, db->name, f->cols);
  if (p->noutputs <= f->cols || p->noutputs > ANIM_LMM_MAX_STATE)
    REFUSE(ANIM_EFORMAT, "projector.bin gives %d outputs: the %d features and a latent, at most %d in all",
           p->noutputs, f->cols, ANIM_LMM_MAX_STATE);
  if (s->ninputs != p->noutputs || s->noutputs != p->noutputs)
    REFUSE(ANIM_EFORMAT, "stepper.bin maps %d to %d values, projector.bin's state has %d", s->ninputs, s->noutputs,
           p->noutputs);
  if (d->ninputs != p->noutputs)
    REFUSE(ANIM_EFORMAT, "decompressor.bin takes %d inputs, projector.bin's state has %d", d->ninputs, p->noutputs);
  if (d->noutputs != npose)
    REFUSE(ANIM_EFORMAT, "decompressor.bin gives %d outputs, database %s's %d bones and %d contacts need %d",
           d->noutputs, db->name, db->nbones, db->ncontacts, npose);
#undef REFUSE
  nets->nbones = db->nbones, nets->nfeatures = f->cols, nets->ncontacts = db->ncontacts;
  memcpy(nets->contact_bones, db->contact_bones, sizeof nets->contact_bones);
  nets->frame_rate = db->frame_rate;
  nets->skeleton = db->skeleton;
  nets->slowest_gait = anim_warp_gaits(db, &nets->fastest);
  snprintf(nets->database, sizeof nets->database, "%s", db->name);
  for (int j = 0; j < f->cols; j++) nets->normalization.offset[j] = f->offset[j], nets->normalization.scale[j] = f->scale[j];
  nets->normalization.networks_hash = 0;
  nets->ntrajectory = 0;
  for (int t = 0; t < f->schema.nterms; t++) {
    const anim_feature_term_t *term = &f->schema.terms[t];
    if (term->kind != ANIM_FEATURE_TRAJECTORY_POSITION && term->kind != ANIM_FEATURE_TRAJECTORY_DIRECTION) continue;
    anim_lmm_trajectory_term_t *out = &nets->trajectory[nets->ntrajectory++];
    out->first = f->group_start[t], out->nsamples = term->nsamples;
    out->direction = term->kind == ANIM_FEATURE_TRAJECTORY_DIRECTION;
    for (int i = 0; i < term->nsamples; i++) out->times[i] = (float)term->frame_offsets[i] / db->frame_rate;
  }
  return 0;
}

anim_lmm_networks_t *anim_lmm_networks_create_for(anim_nnet_t *projector, anim_nnet_t *stepper,
                                                  anim_nnet_t *decompressor, const anim_database_t *db,
                                                  int *out_code, char *err, int errlen) {
  int code = 0;
  anim_lmm_networks_t *nets = NULL;
  if (!projector || !stepper || !decompressor || !db) {
    code = ANIM_EINVAL;
    if (err && errlen > 0) snprintf(err, (size_t)errlen, "a network or the database is missing");
  } else if (!(nets = calloc(1, sizeof *nets))) {
    code = ANIM_ENOMEM;
    if (err && errlen > 0) snprintf(err, (size_t)errlen, "out of memory");
  } else {
    nets->projector = projector, nets->stepper = stepper, nets->decompressor = decompressor;
    code = layout_for(nets, db, err, errlen);
  }
  if (code) {
    free(nets);
    if (out_code) *out_code = code;
    return NULL;
  }
  return finish_networks(nets, out_code, err, errlen);
}

static const char *const network_files[3] = {"projector.bin", "stepper.bin", "decompressor.bin"};

/* The three files of dir, all or none. */
static int load_three(const char *dir, anim_nnet_t **nn, char *err, int errlen) {
  int code = 0;
  for (int i = 0; i < 3 && code == 0; i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, network_files[i]);
    nn[i] = anim_nnet_load(path, &code, err, errlen);
  }
  if (code)
    for (int i = 0; i < 3; i++) anim_nnet_free(nn[i]), nn[i] = NULL;
  return code;
}

anim_lmm_networks_t *anim_lmm_networks_load_for(const char *dir, const anim_database_t *db, int *out_code, char *err,
                                                int errlen) {
  anim_nnet_t *nn[3] = {NULL, NULL, NULL};
  int code = load_three(dir, nn, err, errlen);
  anim_lmm_networks_t *nets = code ? NULL : anim_lmm_networks_create_for(nn[0], nn[1], nn[2], db, &code, err, errlen);
  if (!nets)
    for (int i = 0; i < 3; i++) anim_nnet_free(nn[i]);
  if (out_code) *out_code = code;
  return nets;
}

anim_lmm_networks_t *anim_lmm_networks_load(const char *dir, const anim_lmm_normalization_t *normalization,
                                            int *out_code, char *err, int errlen) {
  anim_nnet_t *nn[3] = {NULL, NULL, NULL};
  int code = load_three(dir, nn, err, errlen);
  anim_lmm_networks_t *nets =
      code ? NULL : anim_lmm_networks_create(nn[0], nn[1], nn[2], normalization, &code, err, errlen);
  if (!nets)
    for (int i = 0; i < 3; i++) anim_nnet_free(nn[i]);
  if (out_code) *out_code = code;
  return nets;
}

void anim_lmm_networks_free(anim_lmm_networks_t *nets) {
  if (!nets) return;
  anim_nnet_free(nets->projector), anim_nnet_free(nets->stepper), anim_nnet_free(nets->decompressor);
  anim_nnet_free(nets->pose_network);
  free(nets);
}

size_t anim_lmm_networks_memory(const anim_lmm_networks_t *nets) {
  return sizeof *nets + nets->projector->bytes + nets->stepper->bytes + nets->pose_network->bytes;
}

/* ---- poses and features ------------------------------------------------------------------------- */

/* The rotation whose matrix has columns x, y, z (orthonormal), by the
 * largest of the four quaternion components (Shepperd's method); unit to
 * rounding for an orthonormal matrix. */
static quat quat_from_columns(vec3 x, vec3 y, vec3 z) {
  float m00 = x.x, m10 = x.y, m20 = x.z, m01 = y.x, m11 = y.y, m21 = y.z, m02 = z.x, m12 = z.y, m22 = z.z;
  float trace = m00 + m11 + m22;
  if (trace > 0.0f) {
    float s = 2.0f * sqrtf(1.0f + trace), r = 1.0f / s;
    return quat_make(0.25f * s, (m21 - m12) * r, (m02 - m20) * r, (m10 - m01) * r);
  }
  if (m00 > m11 && m00 > m22) {
    float s = 2.0f * sqrtf(1.0f + m00 - m11 - m22), r = 1.0f / s;
    return quat_make((m21 - m12) * r, 0.25f * s, (m01 + m10) * r, (m02 + m20) * r);
  }
  if (m11 > m22) {
    float s = 2.0f * sqrtf(1.0f + m11 - m00 - m22), r = 1.0f / s;
    return quat_make((m02 - m20) * r, (m01 + m10) * r, 0.25f * s, (m12 + m21) * r);
  }
  float s = 2.0f * sqrtf(1.0f + m22 - m00 - m11), r = 1.0f / s;
  return quat_make((m10 - m01) * r, (m02 + m20) * r, (m12 + m21) * r, 0.25f * s);
}

/* The rotation from the first two matrix columns as the decompressor gives
 * them (m00 m01 m10 m11 m20 m21), made orthonormal by Gram-Schmidt (x kept
 * as it points, z = x cross y, y = z cross x). Degenerate columns (zero or
 * parallel) give the identity. */
static quat quat_from_two_columns(const float *m) {
  vec3 x = vec3_make(m[0], m[2], m[4]), y = vec3_make(m[1], m[3], m[5]);
  vec3 z = vec3_cross(x, y);
  float xx = vec3_dot(x, x), zz = vec3_dot(z, z);
  if (!(xx > 1e-12f) || !(zz > 1e-12f)) return quat_identity();
  x = vec3_scale(x, 1.0f / sqrtf(xx)), z = vec3_scale(z, 1.0f / sqrtf(zz));
  return quat_from_columns(x, vec3_cross(z, x), z);
}

void anim_lmm_decode(const float *row, const anim_lmm_networks_t *nets, anim_lmm_pose_t *out, vec3 *out_root_velocity,
                     vec3 *out_root_angular_velocity, float *out_contacts) {
  const int nbones = nets ? nets->nbones : ANIM_LMM_BONES, NB = nbones - 1;
  const int POS = 0, ROT = 3 * NB, VEL = 9 * NB, ANG = 12 * NB, ROOT = 15 * NB;
  const int ncontacts = nets ? nets->ncontacts : ANIM_LMM_CONTACTS;
  const int16_t *col = nets ? nets->pose_column : NULL;
#define AT(i) (col ? row[col[i]] : row[i])
  for (int b = 1; b < nbones; b++) {
    int i = b - 1;
    if (nets && (nets->constant_bones >> b & 1u)) {
      out->positions[b] = nets->skeleton.offsets[b], out->velocities[b] = vec3_zero();
    } else {
      out->positions[b] = vec3_make(AT(POS + 3 * i), AT(POS + 3 * i + 1), AT(POS + 3 * i + 2));
      out->velocities[b] = vec3_make(AT(VEL + 3 * i), AT(VEL + 3 * i + 1), AT(VEL + 3 * i + 2));
    }
    float m[6];
    for (int e = 0; e < 6; e++) m[e] = AT(ROT + 6 * i + e);
    out->rotations[b] = quat_from_two_columns(m);
    out->angular_velocities[b] = vec3_make(AT(ANG + 3 * i), AT(ANG + 3 * i + 1), AT(ANG + 3 * i + 2));
  }
  if (out_root_velocity) *out_root_velocity = vec3_make(AT(ROOT), AT(ROOT + 1), AT(ROOT + 2));
  if (out_root_angular_velocity) *out_root_angular_velocity = vec3_make(AT(ROOT + 3), AT(ROOT + 4), AT(ROOT + 5));
  if (out_contacts)
    for (int k = 0; k < ncontacts; k++) out_contacts[k] = AT(ROOT + 6 + k);
#undef AT
}

void anim_lmm_pose_features(float *out_raw, const anim_lmm_pose_t *pose, vec3 root_velocity,
                            vec3 root_angular_velocity) {
  anim_lmm_pose_t p = *pose;
  p.positions[0] = vec3_zero(), p.rotations[0] = quat_identity();
  p.velocities[0] = root_velocity, p.angular_velocities[0] = root_angular_velocity;
  static const int bones[3] = {ANIM_LMM_LEFT_FOOT, ANIM_LMM_RIGHT_FOOT, ANIM_LMM_HIPS};
  vec3 x[3], v[3], w;
  quat q;
  for (int i = 0; i < 3; i++)
    anim_fk_bone_velocity(&x[i], &q, &v[i], &w, p.positions, p.rotations, p.velocities, p.angular_velocities,
                          bone_parents, bones[i]);
  /* Root at the origin facing +Z: world is the root's frame already. */
  vec3 values[5] = {x[0], x[1], v[0], v[1], v[2]};
  for (int i = 0; i < 5; i++)
    out_raw[3 * i] = values[i].x, out_raw[3 * i + 1] = values[i].y, out_raw[3 * i + 2] = values[i].z;
}

void anim_lmm_trajectory_features(float *out_raw, vec3 root_position, quat root_rotation, const vec3 *positions,
                                  const quat *rotations) {
  for (int s = 0; s < ANIM_LMM_TRAJECTORY; s++) {
    vec3 p = quat_inv_mul_vec3(root_rotation, vec3_sub(positions[s], root_position));
    vec3 d = quat_inv_mul_vec3(root_rotation, quat_mul_vec3(rotations[s], vec3_make(0.0f, 0.0f, 1.0f)));
    out_raw[2 * s] = p.x, out_raw[2 * s + 1] = p.z;
    out_raw[6 + 2 * s] = d.x, out_raw[6 + 2 * s + 1] = d.z;
  }
}

void anim_lmm_normalize(const anim_lmm_normalization_t *norm, const float *raw, float *out, int first, int count) {
  for (int j = 0; j < count; j++) out[j] = (raw[j] - norm->offset[first + j]) / norm->scale[first + j];
}

/* ---- the character --------------------------------------------------------------------------- */

void anim_lmm_params_default(anim_controller_params_t *p) {
  anim_controller_params_default(p);
  p->search_interval = 6;
  p->foot_lock.enabled = 1;
}

size_t anim_lmm_scratch_floats(const anim_lmm_networks_t *nets, int n) {
  size_t rows = (size_t)(n > 0 ? n : 1), s = (size_t)nets->nstate;
  size_t nn = anim_nnet_scratch_floats(nets->projector, (int)rows);
  size_t t = anim_nnet_scratch_floats(nets->stepper, (int)rows);
  if (t > nn) nn = t;
  t = anim_nnet_scratch_floats(nets->pose_network, (int)(2 * rows));
  if (t > nn) nn = t;
  /* queries, projections, stepper outputs, decompressor inputs (2 rows per
   * character at most), decompressor outputs, network scratch */
  return rows * (size_t)nets->nfeatures + rows * s + rows * s + 2 * rows * s + 2 * rows * (size_t)nets->npose + nn;
}

typedef struct {
  float *queries, *projections, *steps, *states, *poses, *nn;
} scratch_t;

static scratch_t scratch_layout(const anim_lmm_networks_t *nets, int n, float *base) {
  size_t rows = (size_t)(n > 0 ? n : 1), s = (size_t)nets->nstate;
  scratch_t l;
  l.queries = base;
  l.projections = l.queries + rows * (size_t)nets->nfeatures;
  l.steps = l.projections + rows * s;
  l.states = l.steps + rows * s;
  l.poses = l.states + 2 * rows * s;
  l.nn = l.poses + 2 * rows * (size_t)nets->npose;
  return l;
}

static void bind_inertializer(anim_lmm_character_t *c) {
  c->inertializer.offset_positions = c->offset_positions, c->inertializer.offset_velocities = c->offset_velocities;
  c->inertializer.offset_rotations = c->offset_rotations;
  c->inertializer.offset_angular_velocities = c->offset_angular_velocities;
}

static anim_pose_view_t view_of(const anim_lmm_pose_t *p, int nbones) {
  anim_pose_view_t v = {nbones, p->positions, p->velocities, p->rotations, p->angular_velocities};
  return v;
}

/* Decodes a pose row with its root at (position, rotation) in animation
 * space, moving as decoded: on the ground and turning about +Y only. */
static void decode_rooted(const anim_lmm_networks_t *nets, anim_lmm_pose_t *out, const float *row, vec3 position,
                          quat rotation, float *out_contacts) {
  vec3 v, w;
  anim_lmm_decode(row, nets, out, &v, &w, out_contacts);
  vec3 world_v = quat_mul_vec3(rotation, v);
  world_v.y = 0.0f;
  out->positions[0] = position, out->rotations[0] = rotation;
  out->velocities[0] = world_v, out->angular_velocities[0] = vec3_make(0.0f, w.y, 0.0f);
}

/* The data's contact flags from the decoded outputs, with hysteresis. */
static void update_contacts(anim_lmm_character_t *c, const float *values) {
  for (int k = 0; k < c->nets->ncontacts; k++) {
    c->contact_values[k] = values[k];
    c->contacts[k] = c->contacts[k] ? values[k] >= ANIM_LMM_CONTACT_OFF : values[k] > ANIM_LMM_CONTACT_ON;
  }
}

/* The query: the current foot and hip features (normalized already) and the
 * predicted trajectory relative to the displayed root, normalized. */
static void build_query(anim_lmm_character_t *c, vec3 target_velocity, float *out_query) {
  const anim_lmm_networks_t *nets = c->nets;
  memcpy(out_query, c->state, (size_t)nets->nfeatures * sizeof(float));
  /* Each trajectory term from the steering's prediction at its own times
   * (the first term's is kept for character_state). */
  for (int t = nets->ntrajectory - 1; t >= 0; t--) {
    const anim_lmm_trajectory_term_t *term = &nets->trajectory[t];
    vec3 positions[ANIM_MAX_TRAJECTORY_SAMPLES];
    quat rotations[ANIM_MAX_TRAJECTORY_SAMPLES];
    anim_steering_predict(positions, rotations, &c->sim, target_velocity, &c->params, term->times, term->nsamples);
    float raw[2 * ANIM_MAX_TRAJECTORY_SAMPLES];
    for (int i = 0; i < term->nsamples; i++) {
      vec3 p = quat_inv_mul_vec3(c->pose.rotations[0], vec3_sub(positions[i], c->pose.positions[0]));
      /* The play rate's query (warp.h): positions at the speed the data has,
       * so that the clip playing keeps matching while its rate meets the asked speed. */
      if (c->query_rate != 1.0f) p = vec3_scale(p, 1.0f / c->query_rate);
      vec3 d = quat_inv_mul_vec3(c->pose.rotations[0], quat_mul_vec3(rotations[i], vec3_make(0.0f, 0.0f, 1.0f)));
      raw[2 * i] = term->direction ? d.x : p.x, raw[2 * i + 1] = term->direction ? d.z : p.z;
    }
    anim_lmm_normalize(&nets->normalization, raw, out_query + term->first, term->first, 2 * term->nsamples);
    if (t == 0) {
      c->ntrajectory = term->nsamples;
      memcpy(c->trajectory_positions, positions, sizeof positions);
    }
  }
}

/* Zeroes the query's columns that do not come from the trajectory (the
 * database means: standing at rest). */
static void zero_pose_columns(const anim_lmm_networks_t *nets, float *query) {
  float keep[ANIM_LMM_MAX_FEATURES];
  memcpy(keep, query, (size_t)nets->nfeatures * sizeof(float));
  memset(query, 0, (size_t)nets->nfeatures * sizeof(float));
  for (int t = 0; t < nets->ntrajectory; t++) {
    const anim_lmm_trajectory_term_t *term = &nets->trajectory[t];
    memcpy(query + term->first, keep + term->first, (size_t)(2 * term->nsamples) * sizeof(float));
  }
}

int anim_lmm_character_init(anim_lmm_character_t *c, const anim_lmm_networks_t *nets,
                            const anim_controller_params_t *params, vec3 position, float facing, float *scratch) {
  memset(c, 0, sizeof *c);
  anim_controller_params_t defaults;
  if (!params) anim_lmm_params_default(&defaults), params = &defaults;
  int rc = anim_controller_params_validate(params);
  if (rc) return rc;
  if (!nets || !scratch || !isfinite(position.x + position.z + facing)) return ANIM_EINVAL;
  c->nets = nets, c->params = *params;
  c->rate = c->rate_target = c->query_rate = 1.0f;
  c->input.kind = ANIM_INPUT_STICK;
  c->sim.position = vec3_make(position.x, 0.0f, position.z);
  c->sim.rotation = c->sim.desired_rotation = quat_from_angle_axis(facing, up);
  anim_dynamics_params_make(&c->sim.smoothing, params->input_f, params->input_zeta, params->input_r);
  anim_dynamics_vec3_reset(&c->sim.smoothed_velocity, vec3_zero());
  /* Standing: project a query whose foot and hip features are the database
   * means (0 normalized) and whose trajectory stays where it is, facing on. */
  scratch_t s = scratch_layout(nets, 1, scratch);
  c->pose.positions[0] = c->sim.position, c->pose.rotations[0] = c->sim.rotation;
  build_query(c, vec3_zero(), s.queries);
  zero_pose_columns(nets, s.queries);
  anim_nnet_run(nets->projector, s.queries, nets->nfeatures, c->state, nets->nstate, 1, s.nn);
  anim_nnet_run(nets->pose_network, c->state, nets->nstate, s.poses, nets->npose, 1, s.nn);
  float contacts[ANIM_MAX_CONTACTS];
  decode_rooted(nets, &c->decoded, s.poses, c->sim.position, c->sim.rotation, contacts);
  for (int k = 0; k < nets->ncontacts; k++) c->contacts[k] = contacts[k] > 0.5f, c->contact_values[k] = contacts[k]; /* no history yet */
  anim_inertializer_init(&c->inertializer, nets->nbones, c->offset_positions, c->offset_velocities,
                         c->offset_rotations, c->offset_angular_velocities);
  anim_pose_view_t in = view_of(&c->decoded, nets->nbones);
  anim_pose_buffer_t out = {nets->nbones, c->pose.positions, c->pose.velocities, c->pose.rotations,
                            c->pose.angular_velocities};
  anim_inertializer_update(&c->inertializer, &out, &in, params->inertialize_halflife, 0.0f);
  c->time_since_projection = (float)params->search_interval / nets->frame_rate; /* project on the first tick */
  c->tick_row = c->tick_destination = -1;
  return 0;
}

int anim_lmm_set_input(anim_lmm_character_t *c, const anim_controller_input_t *in) {
  int rc = anim_controller_input_validate(in);
  if (rc == 0) c->input = *in;
  return rc;
}

int anim_lmm_set_params(anim_lmm_character_t *c, const anim_controller_params_t *params) {
  anim_controller_params_t next = *params;
  next.foot_lock = c->params.foot_lock; /* the legs were set up at init, as a controller's */
  int rc = anim_controller_params_validate(&next);
  if (rc) return rc;
  c->params = next;
  anim_dynamics_params_make(&c->sim.smoothing, next.input_f, next.input_zeta, next.input_r);
  return 0;
}

void anim_lmm_stagger(anim_lmm_character_t *c, int frames) {
  c->time_since_projection -= (float)frames / c->nets->frame_rate;
}

/* The play rate this tick, by the motion-matching characters' rule
 * (anim_warp_targets: the same bounds, the data's gaits, no stride). The
 * clip's speed is the decoded root's (the data's speed now, before the
 * rate), not the travel its trajectory features predict (what
 * anim_warp_data_speed reads from a database): the root moves by the
 * decoded velocity, and on the reference networks the features' travel
 * ran 10% under it, so a rate set by them asked 3.5 m/s ran at 3.86-4.06
 * (3.52 this way; 3.60 without a rate). */
static void follow_rate(anim_lmm_character_t *c, float dt) {
  const anim_warp_params_t *w = &c->params.warp;
  vec3 desired = c->sim.desired_velocity;
  float speed = sqrtf(desired.x * desired.x + desired.z * desired.z);
  anim_warp_targets_t t =
      anim_warp_targets(w, speed, c->root_speed, c->nets->fastest, c->nets->slowest_gait, 0, 1.0f, 1.0f);
  c->rate_target = t.rate, c->query_rate = t.query_rate;
  c->rate = anim_warp_follow_rate(c->rate, c->rate_target, dt);
}

/* First phase: input, smoothing, the play rate, and whether this character
 * projects (its query then goes to row *io_rows of queries). */
static void tick_begin(anim_lmm_character_t *c, float dt, float *queries, int *io_rows) {
  const anim_controller_params_t *p = &c->params;
  anim_steering_sim_desire(&c->sim, &c->input, p, c->pose.velocities[0], dt);
  follow_rate(c, dt);
  vec3 target = c->sim.smoothed_velocity.y;
  c->time_since_projection += dt;
  c->transitioned = 0, c->globals_fresh = 0;
  c->tick_row = c->tick_destination = -1;
  /* Half a frame of slack so that 60 Hz ticks of float dt land on the frame. */
  int due = c->time_since_projection >= ((float)p->search_interval - 0.5f) / c->nets->frame_rate;
  int replan = vec3_length(vec3_sub(target, c->velocity_at_last_projection)) > p->replan_threshold;
  if (!due && !replan) return;
  c->tick_row = (*io_rows)++;
  build_query(c, target, queries + (size_t)c->tick_row * (size_t)c->nets->nfeatures);
  c->time_since_projection = 0.0f;
  c->velocity_at_last_projection = target;
  c->projections++;
}

/* Second phase: take the projection unless it is within the transition cost
 * of the current features; a taken one is decompressed as a transition's
 * destination (row *io_destinations of the decompressor's second half). */
static void take_projection(anim_lmm_character_t *c, const float *projection, float *destinations,
                            int *io_destinations) {
  int nstate = c->nets->nstate;
  float d2 = 0.0f;
  for (int j = 0; j < c->nets->nfeatures; j++) d2 += squaref(projection[j] - c->state[j]);
  if (!(d2 > squaref(c->params.transition_cost))) return;
  memcpy(c->state, projection, (size_t)nstate * sizeof(float));
  c->tick_destination = (*io_destinations)++;
  memcpy(destinations + (size_t)c->tick_destination * (size_t)nstate, projection, (size_t)nstate * sizeof(float));
}

/* A pose's rates times the play rate (the data's rates played at it). */
static void scale_rates(anim_lmm_pose_t *pose, int nbones, float rate) {
  if (rate == 1.0f) return;
  for (int b = 0; b < nbones; b++)
    pose->velocities[b] = vec3_scale(pose->velocities[b], rate),
    pose->angular_velocities[b] = vec3_scale(pose->angular_velocities[b], rate);
}

/* Last phase: the transition (if any), the new pose, root, inertialization,
 * simulation. The pose and root play c->rate * dt seconds of the data. */
static int tick_end(anim_lmm_character_t *c, float dt, const float *pose_row, const float *destination_row) {
  const anim_controller_params_t *p = &c->params;
  float play = dt * c->rate;
  bind_inertializer(c);
  vec3 root = c->decoded.positions[0];
  quat root_rotation = c->decoded.rotations[0];
  if (destination_row) {
    /* The destination at the same instant as the source: the same root, the
     * projected state's velocities. */
    anim_lmm_pose_t dst;
    decode_rooted(c->nets, &dst, destination_row, root, root_rotation, NULL);
    scale_rates(&dst, c->nets->nbones, c->rate); /* as the source's: a rate is no offset */
    anim_pose_view_t src_view = view_of(&c->decoded, c->nets->nbones), dst_view = view_of(&dst, c->nets->nbones);
    if (anim_inertializer_transition(&c->inertializer, &src_view, &dst_view) == 0)
      c->transitioned = 1, c->transitions++;
  }
  float contacts[ANIM_MAX_CONTACTS];
  vec3 v, w;
  anim_lmm_decode(pose_row, c->nets, &c->decoded, &v, &w, contacts);
  update_contacts(c, contacts);
  /* Root: integrate the decoded velocities from where the root was (yaw only, on the ground). */
  vec3 world_v = quat_mul_vec3(root_rotation, v);
  world_v.y = 0.0f;
  vec3 world_w = vec3_make(0.0f, w.y, 0.0f);
  c->decoded.positions[0] = vec3_add(root, vec3_scale(world_v, play));
  c->decoded.rotations[0] =
      quat_normalize(quat_mul(quat_from_scaled_angle_axis(vec3_scale(world_w, play)), root_rotation));
  c->decoded.velocities[0] = world_v, c->decoded.angular_velocities[0] = world_w;
  c->root_speed = vec3_length(world_v);
  scale_rates(&c->decoded, c->nets->nbones, c->rate);
  anim_pose_view_t in = view_of(&c->decoded, c->nets->nbones);
  anim_pose_buffer_t out = {c->nets->nbones, c->pose.positions, c->pose.velocities, c->pose.rotations,
                            c->pose.angular_velocities};
  int rc = anim_inertializer_update(&c->inertializer, &out, &in, p->inertialize_halflife, dt);
  if (rc) return rc;
  if (c->feet.nfeet) {
    /* The displayed legs hold planted feet (the root is untouched, so the
     * simulation below still follows the shown root). */
    uint8_t flags[ANIM_MAX_CONTACTS];
    for (int f = 0; f < c->feet.nfeet; f++) flags[f] = c->contacts[c->foot_contact[f]];
    anim_foot_locks_apply(&c->feet, flags, c->pose.positions, c->pose.rotations, dt);
  }
  /* Simulation springs; then the simulation starts from where the character is. */
  anim_steering_sim_advance(&c->sim, p, dt);
  c->sim.position = vec3_make(c->pose.positions[0].x, 0.0f, c->pose.positions[0].z);
  c->ticks++;
  return 0;
}

int anim_lmm_tick_batch(anim_lmm_character_t *const *cs, int n, float dt, float *scratch) {
  if (n < 0 || !(dt > 0.0f) || !(dt <= 1.0f) || (n > 0 && (!cs || !scratch))) return ANIM_EINVAL;
  if (n == 0) return 0;
  for (int i = 0; i < n; i++)
    if (!cs[i] || !cs[i]->nets || cs[i]->nets != cs[0]->nets) return ANIM_EINVAL;
  const anim_lmm_networks_t *nets = cs[0]->nets;
  int nstate = nets->nstate;
  scratch_t s = scratch_layout(nets, n, scratch);
  /* 1. Inputs and queries; one projector product for those that project. */
  int nqueries = 0, ndest = 0;
  for (int i = 0; i < n; i++) tick_begin(cs[i], dt, s.queries, &nqueries);
  if (nqueries) anim_nnet_run(nets->projector, s.queries, nets->nfeatures, s.projections, nstate, nqueries, s.nn);
  float *destinations = s.states + (size_t)n * (size_t)nstate;
  for (int i = 0; i < n; i++)
    if (cs[i]->tick_row >= 0)
      take_projection(cs[i], s.projections + (size_t)cs[i]->tick_row * (size_t)nstate, destinations, &ndest);
  /* 2. Step every state: Euler steps of at most one frame of real time
   * (the stepper was trained at 1/60 s), one product each, each state
   * advancing its play rate times that (rate_max, 1.15 by default, makes
   * a step of 1.15 frames: within what Euler on the stepper holds). */
  for (int i = 0; i < n; i++)
    memcpy(s.states + (size_t)i * (size_t)nstate, cs[i]->state, (size_t)nstate * sizeof(float));
  int substeps = (int)ceilf(dt * nets->frame_rate - 1e-3f);
  if (substeps < 1) substeps = 1;
  float h = dt / (float)substeps;
  for (int k = 0; k < substeps; k++) {
    anim_nnet_run(nets->stepper, s.states, nstate, s.steps, nstate, n, s.nn);
    for (int i = 0; i < n; i++) {
      float hr = h * cs[i]->rate;
      float *x = s.states + (size_t)i * (size_t)nstate;
      const float *v = s.steps + (size_t)i * (size_t)nstate;
      for (int j = 0; j < nstate; j++) x[j] += hr * v[j];
    }
  }
  /* 3. One decompressor product: the new states, then the transitions' destinations. */
  anim_nnet_run(nets->pose_network, s.states, nstate, s.poses, nets->npose, n + ndest, s.nn);
  int rc = 0;
  for (int i = 0; i < n; i++) {
    anim_lmm_character_t *c = cs[i];
    memcpy(c->state, s.states + (size_t)i * (size_t)nstate, (size_t)nstate * sizeof(float));
    const float *dest = c->tick_destination >= 0
                            ? s.poses + (size_t)(n + c->tick_destination) * (size_t)nets->npose
                            : NULL;
    int r = tick_end(c, dt, s.poses + (size_t)i * (size_t)nets->npose, dest);
    if (r && !rc) rc = r;
  }
  return rc;
}

int anim_lmm_tick(anim_lmm_character_t *c, float dt, float *scratch) { return anim_lmm_tick_batch(&c, 1, dt, scratch); }

void anim_lmm_translate(anim_lmm_character_t *c, vec3 step) {
  vec3 ground = vec3_make(step.x, 0.0f, step.z);
  c->sim.position = vec3_add(c->sim.position, ground);
  for (int i = 0; i < c->ntrajectory; i++)
    c->trajectory_positions[i] = vec3_add(c->trajectory_positions[i], ground);
  c->inertializer.anchor_world_position = vec3_add(c->inertializer.anchor_world_position, step);
  c->pose.positions[0] = vec3_add(c->pose.positions[0], step);
  c->globals_fresh = 0;
  anim_foot_locks_translate(&c->feet, step);
}

int anim_lmm_character_feet(anim_lmm_character_t *c, const anim_database_t *db) {
  if (!c || !c->nets || !db) return ANIM_EINVAL;
  if (!c->params.foot_lock.enabled) return 0;
  const anim_lmm_networks_t *nets = c->nets;
  if (db->nbones != nets->nbones || db->ncontacts < 1 || db->ncontacts > nets->ncontacts) return ANIM_EINVAL;
  for (int b = 0; b < nets->nbones; b++)
    if (db->skeleton.parents[b] != nets->skeleton.parents[b]) return ANIM_EINVAL;
  anim_foot_locks_t feet;
  uint8_t foot_contact[ANIM_MAX_CONTACTS] = {0};
  int rc = anim_foot_locks_init(&feet, db, c->params.foot_lock.unlock_radius, c->params.foot_lock.release_halflife);
  if (!rc) rc = anim_foot_locks_ground(&feet, ANIM_FOOT_MAX_DROP);
  if (rc) return rc;
  for (int f = 0; f < feet.nfeet; f++) {
    int k = 0;
    while (k < nets->ncontacts && nets->contact_bones[k] != feet.feet[f].toe) k++;
    if (k == nets->ncontacts) return ANIM_EINVAL;
    foot_contact[f] = (uint8_t)k;
  }
  c->feet = feet;
  memcpy(c->foot_contact, foot_contact, sizeof foot_contact);
  return 0;
}

uint32_t anim_lmm_contacts(const anim_lmm_character_t *c) {
  if (c->feet.nfeet) {
    /* anim_foot_locks_contacts's bits are per foot: map them to the outputs. */
    uint32_t planted = anim_foot_locks_contacts(&c->feet), bits = 0;
    for (int f = 0; f < c->feet.nfeet; f++)
      if (planted & (1u << f)) bits |= 1u << c->foot_contact[f];
    return bits;
  }
  uint32_t bits = 0;
  for (int k = 0; k < c->nets->ncontacts; k++)
    if (c->contacts[k]) bits |= 1u << k;
  return bits;
}

void anim_lmm_global_pose(anim_lmm_character_t *c) {
  if (c->globals_fresh) return;
  c->globals_fresh = 1;
  anim_fk(c->global_positions, c->global_rotations, c->pose.positions, c->pose.rotations, c->nets->skeleton.parents,
          c->nets->nbones);
}
