/*
 * feature.c: feature extraction and z-score normalization (see feature.h).
 *
 * Character space is the simulation bone's (bone 0): positions relative to
 * it and rotated into its facing, velocities rotated likewise. Trajectory
 * samples past the end of a range clamp to the range's last frame, so the
 * last frames of a clip describe "the character stops here".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "database.h"
#include "feature.h"

static const int default_offsets[3] = {20, 40, 60};

static int term_dims(const anim_feature_term_t *t) {
  switch (t->kind) {
  case ANIM_FEATURE_BONE_POSITION:
  case ANIM_FEATURE_BONE_VELOCITY:
  case ANIM_FEATURE_INERTIALIZE: return 3;
  case ANIM_FEATURE_TRAJECTORY_POSITION:
  case ANIM_FEATURE_TRAJECTORY_DIRECTION: return 2 * t->nsamples;
  }
  return 0;
}

int anim_feature_schema_dims(const anim_feature_schema_t *schema) {
  int dims = 0;
  for (int i = 0; i < schema->nterms; i++) dims += term_dims(&schema->terms[i]);
  return dims;
}

static const char *first_bone(const anim_database_t *db, const char *const *names) {
  for (int i = 0; names[i]; i++)
    if (anim_skeleton_find(&db->skeleton, names[i]) >= 0) return names[i];
  return NULL;
}

static void add_bone_term(anim_feature_schema_t *s, anim_feature_kind_t kind, const char *bone, float weight) {
  anim_feature_term_t *t = &s->terms[s->nterms++];
  memset(t, 0, sizeof *t);
  t->kind = kind;
  snprintf(t->bone, sizeof t->bone, "%s", bone);
  t->weight = weight;
}

static void add_trajectory_term(anim_feature_schema_t *s, anim_feature_kind_t kind, float weight) {
  anim_feature_term_t *t = &s->terms[s->nterms++];
  memset(t, 0, sizeof *t);
  t->kind = kind;
  t->weight = weight;
  t->nsamples = 3;
  memcpy(t->frame_offsets, default_offsets, sizeof default_offsets);
}

int anim_feature_schema_default(anim_feature_schema_t *out, const anim_database_t *db) {
  static const char *const left_foot[] = {"LeftFoot", "Foot_L", "LeftAnkle", "lAnkle", "LeftFootIK", "l_foot", NULL};
  static const char *const right_foot[] = {"RightFoot", "Foot_R", "RightAnkle", "rAnkle", "RightFootIK", "r_foot", NULL};
  static const char *const hips[] = {"Hips", "hips", "Hip", "pelvis", "Pelvis", "RootJoint", NULL};
  const char *lf = first_bone(db, left_foot), *rf = first_bone(db, right_foot), *h = first_bone(db, hips);
  memset(out, 0, sizeof *out);
  if (!lf || !rf || !h) return ANIM_ENOTFOUND;
  /* The seed's layout and weights. */
  add_bone_term(out, ANIM_FEATURE_BONE_POSITION, lf, 0.75f);
  add_bone_term(out, ANIM_FEATURE_BONE_POSITION, rf, 0.75f);
  add_bone_term(out, ANIM_FEATURE_BONE_VELOCITY, lf, 1.0f);
  add_bone_term(out, ANIM_FEATURE_BONE_VELOCITY, rf, 1.0f);
  add_bone_term(out, ANIM_FEATURE_BONE_VELOCITY, h, 1.0f);
  add_trajectory_term(out, ANIM_FEATURE_TRAJECTORY_POSITION, 1.0f);
  add_trajectory_term(out, ANIM_FEATURE_TRAJECTORY_DIRECTION, 1.5f);
  return 0;
}

static int schema_fail(char *err, int errlen, int term, const char *what) {
  if (err && errlen > 0) snprintf(err, (size_t)errlen, "feature term %d: %s", term, what);
  return ANIM_EINVAL;
}

int anim_feature_schema_validate(const anim_feature_schema_t *s, const anim_database_t *db, char *err, int errlen) {
  if (s->nterms < 1 || s->nterms > ANIM_MAX_FEATURE_TERMS) return schema_fail(err, errlen, 0, "1..16 terms needed");
  if (anim_feature_schema_dims(s) > ANIM_MAX_FEATURE_DIMS) return schema_fail(err, errlen, 0, "more than 128 dims");
  for (int i = 0; i < s->nterms; i++) {
    const anim_feature_term_t *t = &s->terms[i];
    if (!isfinite(t->weight) || !(t->weight > 0.0f)) return schema_fail(err, errlen, i, "weight must be finite and > 0");
    switch (t->kind) {
    case ANIM_FEATURE_INERTIALIZE:
      if (!isfinite(t->halflife) || !(t->halflife > 0.0f)) return schema_fail(err, errlen, i, "halflife must be > 0");
      __attribute__((fallthrough)); /* it names a bone too */
    case ANIM_FEATURE_BONE_POSITION:
    case ANIM_FEATURE_BONE_VELOCITY:
      if (anim_skeleton_find(&db->skeleton, t->bone) < 0) return schema_fail(err, errlen, i, "unknown bone");
      break;
    case ANIM_FEATURE_TRAJECTORY_POSITION:
    case ANIM_FEATURE_TRAJECTORY_DIRECTION:
      if (t->nsamples < 1 || t->nsamples > ANIM_MAX_TRAJECTORY_SAMPLES)
        return schema_fail(err, errlen, i, "1..8 trajectory samples needed");
      for (int k = 0; k < t->nsamples; k++)
        if (t->frame_offsets[k] <= 0) return schema_fail(err, errlen, i, "frame offsets must be > 0");
      break;
    default: return schema_fail(err, errlen, i, "unknown kind");
    }
  }
  return 0;
}

/* ---- raw features -------------------------------------------------------------------- */

static void character_space(const anim_database_t *db, int frame, int bone, vec3 *out_pos, vec3 *out_vel) {
  size_t base = (size_t)frame * (size_t)db->nbones;
  vec3 root = db->global_positions[base];
  quat facing = db->global_rotations[base];
  *out_pos = quat_inv_mul_vec3(facing, vec3_sub(db->global_positions[base + (size_t)bone], root));
  *out_vel = quat_inv_mul_vec3(facing, db->global_velocities[base + (size_t)bone]);
}

static void trajectory(const anim_database_t *db, int frame, const anim_feature_term_t *t, float *out) {
  int range = anim_database_range_of(db, frame);
  int last = range >= 0 ? db->ranges[range].stop - 1 : db->nframes - 1;
  size_t base = (size_t)frame * (size_t)db->nbones;
  vec3 root = db->global_positions[base];
  quat facing = db->global_rotations[base];
  for (int k = 0; k < t->nsamples; k++) {
    int future = frame + t->frame_offsets[k];
    if (future > last) future = last;
    size_t fb = (size_t)future * (size_t)db->nbones;
    vec3 v = t->kind == ANIM_FEATURE_TRAJECTORY_POSITION
                 ? vec3_sub(db->global_positions[fb], root)
                 : quat_mul_vec3(db->global_rotations[fb], vec3_make(0.0f, 0.0f, 1.0f));
    v = quat_inv_mul_vec3(facing, v);
    out[2 * k] = v.x;
    out[2 * k + 1] = v.z;
  }
}

static void term_values(const anim_database_t *db, int frame, const anim_feature_term_t *t, float *out) {
  vec3 pos, vel, v;
  switch (t->kind) {
  case ANIM_FEATURE_BONE_POSITION:
  case ANIM_FEATURE_BONE_VELOCITY:
  case ANIM_FEATURE_INERTIALIZE: {
    character_space(db, frame, anim_skeleton_find(&db->skeleton, t->bone), &pos, &vel);
    if (t->kind == ANIM_FEATURE_BONE_POSITION) v = pos;
    else if (t->kind == ANIM_FEATURE_BONE_VELOCITY) v = vel;
    else {
      /* 000_*: |(2 x y + v) / y^2| is a difference of 2 pos / y + vel / y^2. */
      float y = halflife_to_damping(t->halflife) / 2.0f;
      v = vec3_add(vec3_scale(pos, 2.0f / y), vec3_scale(vel, 1.0f / (y * y)));
    }
    out[0] = v.x, out[1] = v.y, out[2] = v.z;
    break;
  }
  case ANIM_FEATURE_TRAJECTORY_POSITION:
  case ANIM_FEATURE_TRAJECTORY_DIRECTION: trajectory(db, frame, t, out); break;
  }
}

int anim_features_compute_frame(const anim_database_t *db, const anim_feature_schema_t *schema, int frame,
                                float *out_raw) {
  if (frame < 0 || frame >= db->nframes) return ANIM_ERANGE;
  int col = 0;
  for (int i = 0; i < schema->nterms; i++) {
    term_values(db, frame, &schema->terms[i], out_raw + col);
    col += term_dims(&schema->terms[i]);
  }
  return 0;
}

/* ---- normalization ----------------------------------------------------------------- */

/* Per-dimension mean; one scale per group: the mean of its dims' std over the weight. */
static int normalize_group(anim_features_t *f, int term, char *err, int errlen) {
  int start = f->group_start[term], dims = f->group_dims[term];
  double std_sum = 0.0;
  for (int j = start; j < start + dims; j++) {
    double mean = 0.0, var = 0.0;
    for (int i = 0; i < f->rows; i++) mean += f->values[(size_t)i * (size_t)f->cols + (size_t)j];
    mean /= f->rows;
    for (int i = 0; i < f->rows; i++) {
      double d = f->values[(size_t)i * (size_t)f->cols + (size_t)j] - mean;
      var += d * d;
    }
    f->offset[j] = (float)mean;
    std_sum += sqrt(var / f->rows);
  }
  float scale = (float)(std_sum / dims) / f->schema.terms[term].weight;
  if (!(scale > 1e-8f) || !isfinite(scale)) {
    if (err && errlen > 0)
      snprintf(err, (size_t)errlen, "feature term %d (%s%s%s) does not vary over the database", term,
               f->schema.terms[term].bone, *f->schema.terms[term].bone ? " " : "",
               f->schema.terms[term].kind <= ANIM_FEATURE_BONE_VELOCITY ? "bone" : "trajectory");
    return ANIM_EINVAL;
  }
  for (int j = start; j < start + dims; j++) f->scale[j] = scale;
  return 0;
}

int anim_features_build(anim_database_t *db, const anim_feature_schema_t *schema, char *err, int errlen) {
  int rc = anim_feature_schema_validate(schema, db, err, errlen);
  if (rc) return rc;
  anim_features_t f;
  memset(&f, 0, sizeof f);
  f.schema = *schema;
  f.rows = db->nframes;
  f.cols = anim_feature_schema_dims(schema);
  f.values = malloc((size_t)f.rows * (size_t)f.cols * sizeof(float));
  f.offset = calloc((size_t)f.cols, sizeof(float));
  f.scale = calloc((size_t)f.cols, sizeof(float));
  if (!f.values || !f.offset || !f.scale) {
    anim_features_free(&f);
    if (err && errlen > 0) snprintf(err, (size_t)errlen, "out of memory");
    return ANIM_ENOMEM;
  }
  for (int t = 0, col = 0; t < schema->nterms; t++) {
    f.group_start[t] = col;
    f.group_dims[t] = term_dims(&schema->terms[t]);
    col += f.group_dims[t];
  }
  for (int i = 0; i < f.rows; i++) anim_features_compute_frame(db, schema, i, f.values + (size_t)i * (size_t)f.cols);
  for (int t = 0; t < schema->nterms && !rc; t++) rc = normalize_group(&f, t, err, errlen);
  if (rc) {
    anim_features_free(&f);
    return rc;
  }
  for (int i = 0; i < f.rows; i++) {
    float *row = f.values + (size_t)i * (size_t)f.cols;
    anim_features_normalize(&f, row, row);
  }
  anim_features_free(&db->features);
  db->features = f;
  anim_database_update_version(db);
  return 0;
}

void anim_features_free(anim_features_t *f) {
  free(f->values), free(f->offset), free(f->scale);
  f->values = f->offset = f->scale = NULL;
  f->rows = f->cols = 0;
}

void anim_features_normalize(const anim_features_t *f, const float *raw, float *out) {
  for (int j = 0; j < f->cols; j++) out[j] = (raw[j] - f->offset[j]) / f->scale[j];
}

void anim_features_denormalize(const anim_features_t *f, const float *normalized, float *out) {
  for (int j = 0; j < f->cols; j++) out[j] = normalized[j] * f->scale[j] + f->offset[j];
}
