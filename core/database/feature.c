/*
 * feature.c: the runtime side of matching features (see feature.h): schema
 * sizes and validation, a raw row from explicit inputs, normalization.
 * What it does not: extract rows from database frames or normalize a whole
 * matrix (core/offline/feature_build.c). It reads no database: a schema is
 * checked against a skeleton, so this file depends on nothing above clip.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "database/feature.h"

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

/* The 3 values of a bone term from the bone's character-space position and
 * velocity. The inertialization term: an inertializer decays an offset
 * (x, v) as e^{-y t} (x + (v + x y) t) with y = damping / 2; its integral over
 * [0, inf) is (2 x y + v) / y^2 = 2 x / y + v / y^2, linear in (x, v), so the
 * cost |integral| of a transition is the distance between the two frames'
 * values of 2 pos / y + vel / y^2 (derived again from 000_*). */
void anim_feature_bone_values(const anim_feature_term_t *t, vec3 pos, vec3 vel, float *out) {
  vec3 v = pos;
  if (t->kind == ANIM_FEATURE_BONE_VELOCITY) v = vel;
  if (t->kind == ANIM_FEATURE_INERTIALIZE) {
    float y = halflife_to_damping(t->halflife) / 2.0f;
    v = vec3_add(vec3_scale(pos, 2.0f / y), vec3_scale(vel, 1.0f / (y * y)));
  }
  out[0] = v.x, out[1] = v.y, out[2] = v.z;
}

int anim_feature_term_is_bone(const anim_feature_term_t *t) {
  return t->kind == ANIM_FEATURE_BONE_POSITION || t->kind == ANIM_FEATURE_BONE_VELOCITY ||
         t->kind == ANIM_FEATURE_INERTIALIZE;
}

static int schema_fail(char *err, int errlen, int term, const char *what) {
  if (err && errlen > 0) snprintf(err, (size_t)errlen, "feature term %d: %s", term, what);
  return ANIM_EINVAL;
}

int anim_feature_schema_validate(const anim_feature_schema_t *s, const anim_skeleton_t *skeleton, char *err,
                                 int errlen) {
  if (s->nterms < 1 || s->nterms > ANIM_MAX_FEATURE_TERMS) return schema_fail(err, errlen, 0, "1..16 terms needed");
  if (anim_feature_schema_dims(s) > ANIM_MAX_FEATURE_DIMS) return schema_fail(err, errlen, 0, "more than 128 dims");
  for (int i = 0; i < s->nterms; i++) {
    const anim_feature_term_t *t = &s->terms[i];
    if (!isfinite(t->weight) || !(t->weight > 0.0f))
      return schema_fail(err, errlen, i, "weight must be finite and > 0");
    switch (t->kind) {
    case ANIM_FEATURE_INERTIALIZE:
      if (!isfinite(t->halflife) || !(t->halflife > 0.0f)) return schema_fail(err, errlen, i, "halflife must be > 0");
      __attribute__((fallthrough)); /* it names a bone too */
    case ANIM_FEATURE_BONE_POSITION:
    case ANIM_FEATURE_BONE_VELOCITY:
      if (anim_skeleton_find(skeleton, t->bone) < 0) return schema_fail(err, errlen, i, "unknown bone");
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
  if (anim_feature_term_is_bone(t)) {
    const vec3 *p = find_input(in, in->bone_positions, t->bone), *v = find_input(in, in->bone_velocities, t->bone);
    vec3 zero = vec3_zero();
    if (t->kind != ANIM_FEATURE_BONE_VELOCITY && !p)
      return inputs_fail(err, errlen, ANIM_ENOTFOUND, i, "no position given for bone ", t->bone);
    if (t->kind != ANIM_FEATURE_BONE_POSITION && !v)
      return inputs_fail(err, errlen, ANIM_ENOTFOUND, i, "no velocity given for bone ", t->bone);
    anim_feature_bone_values(t, p ? *p : zero, v ? *v : zero, out);
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

void anim_features_normalize(const anim_features_t *f, const float *raw, float *out) {
  for (int j = 0; j < f->cols; j++) out[j] = (raw[j] - f->offset[j]) / f->scale[j];
}

void anim_features_denormalize(const anim_features_t *f, const float *normalized, float *out) {
  for (int j = 0; j < f->cols; j++) out[j] = normalized[j] * f->scale[j] + f->offset[j];
}
