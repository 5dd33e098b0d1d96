/*
 * pose_fit_model.c: the pose fitter's model and parameters (see pose_fit.h):
 * the trackers' features over the database and their index, each joint's
 * range of motion and the root fit's weights, built once and then shared
 * read-only by every fitter; parameter defaults and validation.
 *
 * What it does not: fit (pose_fit.c does, per step, in the fitter's memory).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anim_error.h"
#include "offline/feature_build.h"
#include "pose/kinematics.h"
#include "fit/pose_fit.h"

/* A joint's spread in the database is floored: a joint that never moves in
 * the data (a folded root, a fixed toe) still gets a little freedom. */
#define MIN_JOINT_SIGMA 0.02f /* rad */

static void set_err(char *err, int errlen, const char *msg, const char *what) {
  if (err && errlen > 0) snprintf(err, (size_t)errlen, "%s%s%s", msg, what ? ": " : "", what ? what : "");
}

/* ---- model ------------------------------------------------------------------------------ */

static int find_any(const anim_skeleton_t *s, const char *const *names) {
  for (int i = 0; names[i]; i++) {
    int b = anim_skeleton_find(s, names[i]);
    if (b >= 0) return b;
  }
  return -1;
}

static const char *const head_names[] = {"Head", "head", "mixamorig:Head", NULL};
static const char *const left_hand_names[] = {"LeftHand", "Hand_L", "lHand", "LeftWrist", "l_hand", "hand_l", NULL};
static const char *const right_hand_names[] = {"RightHand", "Hand_R", "rHand", "RightWrist", "r_hand", "hand_r", NULL};
static const char *const pelvis_names[] = {"Hips",   "hips",      "Hip",           "pelvis",
                                           "Pelvis", "RootJoint", "mixamorig:Hips", NULL};

int anim_pose_fit_model_options_default(anim_pose_fit_model_options_t *out, const anim_database_t *db) {
  memset(out, 0, sizeof *out);
  const char *const *lists[4] = {head_names, left_hand_names, right_hand_names, pelvis_names};
  for (int k = 0; k < 4; k++) {
    int b = find_any(&db->skeleton, lists[k]);
    if (b < 0) return ANIM_ENOTFOUND;
    out->tracker_bones[k] = db->skeleton.names[b];
  }
  out->ntrackers = 4;
  out->pelvis_bone = NULL;
  out->position_weight = 1.0f;
  out->velocity_weight = 1.0f;
  out->search_method = ANIM_SEARCH_FAST;
  return 0;
}

void anim_pose_fit_model_free(anim_pose_fit_model_t *m) {
  if (m->index) anim_search_index_free(m->index);
  anim_features_free(&m->features);
  free(m->joints), free(m->joint_of_bone), free(m->joint_mean);
  free(m->joint_low), free(m->joint_high), free(m->joint_sigma);
  memset(m, 0, sizeof *m);
}

/* Mean local rotation of each joint over the database (quaternions summed
 * on one hemisphere, normalized: the chordal mean, close to the Karcher
 * mean for the spreads of real joints), then the range and per-axis spread
 * of the rotation vector about it. */
static void joint_statistics(anim_pose_fit_model_t *m) {
  const anim_database_t *db = m->db;
  for (int j = 0; j < m->njoints; j++) {
    int b = m->joints[j];
    quat first = db->local_rotations[b], sum = quat_make(0, 0, 0, 0);
    for (int f = 0; f < db->nframes; f++) {
      quat q = db->local_rotations[(size_t)f * (size_t)db->nbones + (size_t)b];
      if (quat_dot(q, first) < 0.0f) q = quat_neg(q);
      sum = quat_make(sum.w + q.w, sum.x + q.x, sum.y + q.y, sum.z + q.z);
    }
    quat mean = quat_normalize(sum);
    vec3 lo = vec3_make(INFINITY, INFINITY, INFINITY), hi = vec3_neg(lo);
    double s1[3] = {0, 0, 0}, s2[3] = {0, 0, 0};
    for (int f = 0; f < db->nframes; f++) {
      quat q = db->local_rotations[(size_t)f * (size_t)db->nbones + (size_t)b];
      vec3 v = quat_to_scaled_angle_axis(quat_abs(quat_inv_mul(mean, q)));
      lo = vec3_make(fminf(lo.x, v.x), fminf(lo.y, v.y), fminf(lo.z, v.z));
      hi = vec3_make(fmaxf(hi.x, v.x), fmaxf(hi.y, v.y), fmaxf(hi.z, v.z));
      float c[3] = {v.x, v.y, v.z};
      for (int a = 0; a < 3; a++) s1[a] += c[a], s2[a] += (double)c[a] * c[a];
    }
    float sigma[3];
    for (int a = 0; a < 3; a++) {
      double mu = s1[a] / db->nframes, var = s2[a] / db->nframes - mu * mu;
      sigma[a] = fmaxf(MIN_JOINT_SIGMA, (float)sqrt(var > 0.0 ? var : 0.0));
    }
    m->joint_mean[j] = mean;
    m->joint_low[j] = lo, m->joint_high[j] = hi;
    m->joint_sigma[j] = vec3_make(sigma[0], sigma[1], sigma[2]);
  }
}

/* How firmly each tracked point rides on the root: the inverse of its
 * position variance in character space over the database (the pelvis moves
 * a few centimetres about the root, a hand tens), floored at 1 cm. The root
 * fit weighs the points by it: it is the fit's maximum-likelihood weight
 * when the prior's points scatter about the user's with that variance. */
static void root_weights(anim_pose_fit_model_t *m) {
  const anim_database_t *db = m->db;
  for (int k = 0; k < m->ntrackers; k++) {
    double s1[3] = {0, 0, 0}, s2 = 0.0;
    for (int f = 0; f < db->nframes; f++) {
      size_t base = (size_t)f * (size_t)db->nbones, i = base + (size_t)m->tracker_bones[k];
      vec3 p = vec3_add(db->global_positions[i], quat_mul_vec3(db->global_rotations[i], m->tracker_offsets[k]));
      vec3 c = quat_inv_mul_vec3(db->global_rotations[base], vec3_sub(p, db->global_positions[base]));
      s1[0] += c.x, s1[1] += c.y, s1[2] += c.z, s2 += (double)vec3_dot(c, c);
    }
    double n = db->nframes, var = s2 / n - (s1[0] * s1[0] + s1[1] * s1[1] + s1[2] * s1[2]) / (n * n);
    m->root_weights[k] = (float)(1.0 / ((var > 0.0 ? var : 0.0) + 1e-4));
  }
}

/* The model's features: the trackers' own schema over the database, beside
 * (not instead of) the database's features, so a loaded database serves too. */
static int build_features(anim_pose_fit_model_t *m, const anim_pose_fit_model_options_t *o, char *err, int errlen) {
  anim_feature_schema_t schema;
  memset(&schema, 0, sizeof schema);
  for (int k = 0; k < o->ntrackers; k++)
    for (int kind = 0; kind < 2; kind++) {
      anim_feature_term_t *t = &schema.terms[schema.nterms++];
      t->kind = kind ? ANIM_FEATURE_BONE_VELOCITY : ANIM_FEATURE_BONE_POSITION;
      snprintf(t->bone, sizeof t->bone, "%s", m->db->skeleton.names[m->tracker_bones[k]]);
      t->weight = kind ? o->velocity_weight : o->position_weight;
    }
  /* Tracked bones of small spread (the pelvis in character space) are what
   * the trackers tell most precisely: normalized by their own spread, not
   * the floor the database's schema gets for degenerate groups. */
  anim_feature_build_options_t options = {.exact_scales = 1};
  return anim_features_compute(m->db, &schema, &options, &m->features, err, errlen);
}

int anim_pose_fit_model_build(anim_pose_fit_model_t *out, const anim_database_t *db,
                              const anim_pose_fit_model_options_t *options, char *err, int errlen) {
  memset(out, 0, sizeof *out);
  anim_pose_fit_model_options_t defaults;
  if (!db || db->nframes < 1) return set_err(err, errlen, "no database", NULL), ANIM_EINVAL;
  if (!options) {
    int rc = anim_pose_fit_model_options_default(&defaults, db);
    if (rc) return set_err(err, errlen, "no head, hands or pelvis found by name", NULL), rc;
    options = &defaults;
  }
  const anim_pose_fit_model_options_t *o = options;
  if (o->ntrackers < 1 || o->ntrackers > ANIM_POSE_FIT_MAX_TRACKERS)
    return set_err(err, errlen, "tracker count out of range", NULL), ANIM_EINVAL;
  if (!(o->position_weight > 0.0f) || !(o->velocity_weight > 0.0f) || !isfinite(o->position_weight) ||
      !isfinite(o->velocity_weight) || (unsigned)o->search_method >= ANIM_SEARCH_METHOD_COUNT)
    return set_err(err, errlen, "feature weights must be finite and > 0, method known", NULL), ANIM_EINVAL;
  const anim_skeleton_t *s = &db->skeleton;
  out->db = db;
  out->pelvis = o->pelvis_bone ? anim_skeleton_find(s, o->pelvis_bone) : find_any(s, pelvis_names);
  if (out->pelvis < 0) return set_err(err, errlen, "pelvis bone not found", o->pelvis_bone), ANIM_ENOTFOUND;
  out->ntrackers = o->ntrackers;
  for (int k = 0; k < o->ntrackers; k++) {
    int b = o->tracker_bones[k] ? anim_skeleton_find(s, o->tracker_bones[k]) : -1;
    if (b < 0) return set_err(err, errlen, "tracker bone not found", o->tracker_bones[k]), ANIM_ENOTFOUND;
    for (int i = 0; i < k; i++)
      if (out->tracker_bones[i] == b) return set_err(err, errlen, "tracker bone given twice", s->names[b]), ANIM_EINVAL;
    if (!vec3_finite(o->tracker_offsets[k]))
      return set_err(err, errlen, "tracker offset not finite", NULL), ANIM_EINVAL;
    int a = b;
    while (a >= 0 && a != out->pelvis) a = s->parents[a];
    if (a != out->pelvis)
      return set_err(err, errlen, "tracker bone not at or below the pelvis", s->names[b]), ANIM_EINVAL;
    out->tracker_bones[k] = b;
    out->tracker_offsets[k] = o->tracker_offsets[k];
  }
  int nb = db->nbones;
  out->joints = malloc((size_t)nb * sizeof(int));
  out->joint_of_bone = malloc((size_t)nb * sizeof(int));
  out->joint_mean = malloc((size_t)nb * sizeof(quat));
  out->joint_low = malloc((size_t)nb * sizeof(vec3));
  out->joint_high = malloc((size_t)nb * sizeof(vec3));
  out->joint_sigma = malloc((size_t)nb * sizeof(vec3));
  if (!out->joints || !out->joint_of_bone || !out->joint_mean || !out->joint_low || !out->joint_high ||
      !out->joint_sigma) {
    anim_pose_fit_model_free(out);
    return set_err(err, errlen, "out of memory", NULL), ANIM_ENOMEM;
  }
  /* Joints: every bone on a path pelvis -> tracked bone; bone order keeps
   * parents first. */
  for (int b = 0; b < nb; b++) out->joint_of_bone[b] = -1;
  for (int k = 0; k < o->ntrackers; k++)
    for (int a = out->tracker_bones[k];; a = s->parents[a]) {
      out->joint_of_bone[a] = 0;
      if (a == out->pelvis) break;
    }
  for (int b = 0; b < nb; b++)
    if (out->joint_of_bone[b] == 0) out->joint_of_bone[b] = out->njoints, out->joints[out->njoints++] = b;
  for (int k = 0; k < o->ntrackers; k++)
    for (int a = out->tracker_bones[k];; a = s->parents[a]) {
      int j = out->joint_of_bone[a];
      out->tracker_joint_mask[k][j >> 5] |= 1u << (j & 31);
      if (a == out->pelvis) break;
    }
  joint_statistics(out);
  for (int k = 0; k < o->ntrackers; k++) {
    double sum = 0.0;
    for (int f = 0; f < db->nframes; f++) {
      size_t i = (size_t)f * (size_t)nb + (size_t)out->tracker_bones[k];
      sum += db->global_positions[i].y + quat_mul_vec3(db->global_rotations[i], out->tracker_offsets[k]).y;
    }
    out->mean_heights[k] = (float)(sum / db->nframes);
  }
  root_weights(out);
  int rc = build_features(out, o, err, errlen);
  if (!rc) {
    anim_search_data_t data = {out->features.values, out->features.rows, out->features.cols, db->ranges, db->nranges};
    out->index = anim_search_index_build(o->search_method, &data, err, errlen);
    if (!out->index) rc = ANIM_ENOMEM;
  }
  if (rc) anim_pose_fit_model_free(out);
  return rc;
}

/* ---- parameters ---------------------------------------------------------------------- */

void anim_pose_fit_params_default(anim_pose_fit_params_t *p) {
  memset(p, 0, sizeof *p);
  p->tracker_alpha = 0.05f;
  p->tracker_time = 0.1f;
  p->tracker_sigma = 0.005f;
  p->orientation_sigma = 0.05f;
  p->prior_sigma_scale = 0.5f;
  p->translation_sigma = 0.05f;
  p->limit_margin = 0.3f;
  p->limit_joints = 1;
  p->iterations = 2;
  p->search_interval = 2;
  p->transition_cost = 0.5f;
  p->ignore_range_end = 10;
  p->root_halflife = 0.1f;
  p->inertialize_halflife = 0.05f;
  p->lost_halflife = 0.15f;
  p->scale = 0.0f;
  p->scale_halflife = 2.0f;
  p->foot_lock = (anim_foot_lock_params_t){.enabled = 1, .unlock_radius = 0.3f, .release_halflife = 0.1f};
}

int anim_pose_fit_params_validate(const anim_pose_fit_params_t *p) {
  if (!p) return ANIM_EINVAL;
  float values[] = {p->tracker_alpha,     p->tracker_time,         p->tracker_sigma,        p->orientation_sigma,
                    p->prior_sigma_scale, p->translation_sigma,    p->limit_margin,         p->transition_cost,
                    p->root_halflife,     p->inertialize_halflife, p->lost_halflife,        p->scale,
                    p->scale_halflife,    p->foot_lock.unlock_radius, p->foot_lock.release_halflife};
  if (!anim_floats_finite(values, (int)(sizeof values / sizeof values[0]))) return ANIM_ENONFINITE;
  if (!(p->tracker_alpha > 0.0f && p->tracker_alpha < 1.0f) || !(p->tracker_time > 0.0f)) return ANIM_EINVAL;
  if (!(p->tracker_sigma > 0.0f) || !(p->orientation_sigma > 0.0f) || !(p->translation_sigma > 0.0f) ||
      !(p->prior_sigma_scale > 0.0f) || p->limit_margin < 0.0f)
    return ANIM_EINVAL;
  if (p->iterations < 1 || p->iterations > ANIM_POSE_FIT_MAX_ITERATIONS) return ANIM_EINVAL;
  if (p->search_interval < 1 || p->transition_cost < 0.0f || p->ignore_range_end < 0) return ANIM_EINVAL;
  if (!(p->root_halflife > 0.0f) || !(p->inertialize_halflife > 0.0f) || !(p->lost_halflife > 0.0f) ||
      !(p->scale_halflife > 0.0f))
    return ANIM_EINVAL;
  if (p->scale < 0.0f) return ANIM_EINVAL;
  return anim_foot_lock_params_validate(&p->foot_lock);
}
