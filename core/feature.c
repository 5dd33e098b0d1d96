/*
 * feature.c: feature extraction and z-score normalization (see feature.h).
 *
 * Character space is the simulation bone's (bone 0): positions relative to
 * it and rotated into its facing, velocities rotated likewise. Trajectory
 * samples past the end of a range continue the range's last frame: its root
 * velocity and turning rate carried on for the missing time. A clip that
 * ends at rest (a stop) therefore still says "the character stops here",
 * while a clip cut in mid-stride (short mocap takes: 47 frames of running)
 * keeps describing the running it is: clamping to the last frame would make
 * every frame within 60 of its end look like a stop, and a walk query would
 * match them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "database.h"
#include "feature.h"

static const int default_offsets[3] = {20, 40, 60};

int anim_feature_term_dims(const anim_feature_term_t *t) {
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
  for (int i = 0; i < schema->nterms; i++) dims += anim_feature_term_dims(&schema->terms[i]);
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
    float beyond = future > last ? (float)(future - last) / db->frame_rate : 0.0f; /* s past the end */
    if (future > last) future = last;
    size_t fb = (size_t)future * (size_t)db->nbones;
    vec3 position = vec3_add(db->global_positions[fb], vec3_scale(db->global_velocities[fb], beyond));
    vec3 turn = vec3_make(0.0f, db->global_angular_velocities[fb].y * beyond, 0.0f); /* yaw only */
    quat rotation = quat_mul(quat_from_scaled_angle_axis(turn), db->global_rotations[fb]);
    vec3 v = t->kind == ANIM_FEATURE_TRAJECTORY_POSITION ? vec3_sub(position, root)
                                                         : quat_mul_vec3(rotation, vec3_make(0.0f, 0.0f, 1.0f));
    v = quat_inv_mul_vec3(facing, v);
    out[2 * k] = v.x;
    out[2 * k + 1] = v.z;
  }
}

/* The 3 values of a bone term from the bone's character-space position and
 * velocity. The inertialization term: an inertializer decays an offset
 * (x, v) as e^{-y t} (x + (v + x y) t) with y = damping / 2; its integral over
 * [0, inf) is (2 x y + v) / y^2 = 2 x / y + v / y^2, linear in (x, v), so the
 * cost |integral| of a transition is the distance between the two frames'
 * values of 2 pos / y + vel / y^2 (derived again from 000_*). */
static void bone_term_values(const anim_feature_term_t *t, vec3 pos, vec3 vel, float *out) {
  vec3 v = pos;
  if (t->kind == ANIM_FEATURE_BONE_VELOCITY) v = vel;
  if (t->kind == ANIM_FEATURE_INERTIALIZE) {
    float y = halflife_to_damping(t->halflife) / 2.0f;
    v = vec3_add(vec3_scale(pos, 2.0f / y), vec3_scale(vel, 1.0f / (y * y)));
  }
  out[0] = v.x, out[1] = v.y, out[2] = v.z;
}

static int is_bone_term(const anim_feature_term_t *t) {
  return t->kind == ANIM_FEATURE_BONE_POSITION || t->kind == ANIM_FEATURE_BONE_VELOCITY ||
         t->kind == ANIM_FEATURE_INERTIALIZE;
}

int anim_features_compute_frame(const anim_database_t *db, const anim_feature_schema_t *schema, int frame,
                                float *out_raw) {
  if (frame < 0 || frame >= db->nframes) return ANIM_ERANGE;
  int col = 0;
  for (int i = 0; i < schema->nterms; i++) {
    const anim_feature_term_t *t = &schema->terms[i];
    if (is_bone_term(t)) {
      int bone = anim_skeleton_find(&db->skeleton, t->bone);
      if (bone < 0) return ANIM_EINVAL; /* a schema not validated against db */
      vec3 pos, vel;
      character_space(db, frame, bone, &pos, &vel);
      bone_term_values(t, pos, vel, out_raw + col);
    } else {
      trajectory(db, frame, t, out_raw + col);
    }
    col += anim_feature_term_dims(t);
  }
  return 0;
}

static const vec3 *find_input(const anim_feature_inputs_t *in, const vec3 *values, const char *bone) {
  if (!values) return NULL;
  for (int i = 0; i < in->nbones; i++)
    if (in->bone_names[i] && strcmp(in->bone_names[i], bone) == 0) return &values[i];
  return NULL;
}

static int inputs_fail(char *err, int errlen, int code, int term, const char *what, const char *bone) {
  if (err && errlen > 0) snprintf(err, (size_t)errlen, "feature term %d: %s%s", term, what, bone);
  return code;
}

/* One term's values from explicit inputs. */
static int input_term_values(const anim_feature_term_t *t, int i, const anim_feature_inputs_t *in, float *out,
                             char *err, int errlen) {
  if (is_bone_term(t)) {
    const vec3 *p = find_input(in, in->bone_positions, t->bone), *v = find_input(in, in->bone_velocities, t->bone);
    vec3 zero = vec3_zero();
    if (t->kind != ANIM_FEATURE_BONE_VELOCITY && !p)
      return inputs_fail(err, errlen, ANIM_ENOTFOUND, i, "no position given for bone ", t->bone);
    if (t->kind != ANIM_FEATURE_BONE_POSITION && !v)
      return inputs_fail(err, errlen, ANIM_ENOTFOUND, i, "no velocity given for bone ", t->bone);
    bone_term_values(t, p ? *p : zero, v ? *v : zero, out);
    return 0;
  }
  int positions = t->kind == ANIM_FEATURE_TRAJECTORY_POSITION;
  const float *values = positions ? in->trajectory_positions : in->trajectory_directions;
  int n = positions ? in->ntrajectory_positions : in->ntrajectory_directions;
  if (!values || n != t->nsamples)
    return inputs_fail(err, errlen, ANIM_EDIMENSION, i, "trajectory sample count differs from the term's", "");
  memcpy(out, values, 2 * (size_t)n * sizeof *out);
  return 0;
}

int anim_features_compute_inputs(const anim_feature_schema_t *schema, const anim_feature_inputs_t *inputs,
                                 float *out_raw, char *err, int errlen) {
  int col = 0;
  for (int i = 0; i < schema->nterms; i++) {
    int rc = input_term_values(&schema->terms[i], i, inputs, out_raw + col, err, errlen);
    if (rc) return rc;
    col += anim_feature_term_dims(&schema->terms[i]);
  }
  return 0;
}

static const char *kind_name(anim_feature_kind_t kind) {
  switch (kind) {
  case ANIM_FEATURE_BONE_POSITION: return "bone position";
  case ANIM_FEATURE_BONE_VELOCITY: return "bone velocity";
  case ANIM_FEATURE_TRAJECTORY_POSITION: return "trajectory position";
  case ANIM_FEATURE_TRAJECTORY_DIRECTION: return "trajectory direction";
  case ANIM_FEATURE_INERTIALIZE: return "inertialization";
  }
  return "unknown";
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
    const anim_feature_term_t *t = &f->schema.terms[term];
    if (err && errlen > 0)
      snprintf(err, (size_t)errlen, "feature term %d (%s%s%s) does not vary over the database", term, kind_name(t->kind),
               is_bone_term(t) ? " of " : "", is_bone_term(t) ? t->bone : "");
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
    f.group_dims[t] = anim_feature_term_dims(&schema->terms[t]);
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
