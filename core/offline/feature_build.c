/*
 * feature_build.c: features of a built database (see feature_build.h):
 * the default schema, raw rows from frames, normalization with floors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "offline/feature_build.h"

/* Floors of a group's std, in its units (feature_build.h says why these). */
#define FLOOR_POSITION_M 0.05f
#define FLOOR_VELOCITY_M_S 0.1f
#define FLOOR_TRAJECTORY_POSITION_M 0.1f
#define FLOOR_TRAJECTORY_DIRECTION 0.1f

static const int default_offsets[3] = {20, 40, 60};

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

static int missing_role(char *err, int errlen, anim_bone_role_t role, const char *what) {
  if (err && errlen > 0)
    snprintf(err, (size_t)errlen, "no bone found by name for %s (%s)", anim_bone_role_name(role), what);
  return ANIM_ENOTFOUND;
}

int anim_feature_schema_make(anim_feature_schema_t *out, const anim_database_t *db, const anim_bone_names_t *bones,
                             char *err, int errlen) {
  int roles[ANIM_BONE_ROLE_COUNT];
  memset(out, 0, sizeof *out);
  int rc = anim_bone_roles_find(&db->skeleton, bones, roles, err, errlen);
  if (rc) return rc;
  int lf = roles[ANIM_BONE_FOOT_LEFT], rf = roles[ANIM_BONE_FOOT_RIGHT], hips = roles[ANIM_BONE_HIPS];
  if (lf < 0) return missing_role(err, errlen, ANIM_BONE_FOOT_LEFT, "a left foot or ankle");
  if (rf < 0) return missing_role(err, errlen, ANIM_BONE_FOOT_RIGHT, "a right foot or ankle");
  /* The hips fall back to the root, which for a database is the simulation bone: no use. */
  if (hips <= 0) return missing_role(err, errlen, ANIM_BONE_HIPS, "the bone the legs hang from");
  /* The seed's layout and weights. */
  add_bone_term(out, ANIM_FEATURE_BONE_POSITION, db->skeleton.names[lf], 0.75f);
  add_bone_term(out, ANIM_FEATURE_BONE_POSITION, db->skeleton.names[rf], 0.75f);
  add_bone_term(out, ANIM_FEATURE_BONE_VELOCITY, db->skeleton.names[lf], 1.0f);
  add_bone_term(out, ANIM_FEATURE_BONE_VELOCITY, db->skeleton.names[rf], 1.0f);
  add_bone_term(out, ANIM_FEATURE_BONE_VELOCITY, db->skeleton.names[hips], 1.0f);
  add_trajectory_term(out, ANIM_FEATURE_TRAJECTORY_POSITION, 1.0f);
  add_trajectory_term(out, ANIM_FEATURE_TRAJECTORY_DIRECTION, 1.5f);
  return 0;
}

int anim_feature_schema_default(anim_feature_schema_t *out, const anim_database_t *db) {
  return anim_feature_schema_make(out, db, NULL, NULL, 0);
}

/* ---- raw rows ----------------------------------------------------------------------- */

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

int anim_features_compute_frame(const anim_database_t *db, const anim_feature_schema_t *schema, int frame,
                                float *out_raw) {
  if (frame < 0 || frame >= db->nframes) return ANIM_ERANGE;
  int col = 0;
  for (int i = 0; i < schema->nterms; i++) {
    const anim_feature_term_t *t = &schema->terms[i];
    if (anim_feature_term_is_bone(t)) {
      int bone = anim_skeleton_find(&db->skeleton, t->bone);
      if (bone < 0) return ANIM_EINVAL; /* a schema not validated against db */
      vec3 pos, vel;
      character_space(db, frame, bone, &pos, &vel);
      anim_feature_bone_values(t, pos, vel, out_raw + col);
    } else {
      trajectory(db, frame, t, out_raw + col);
    }
    col += anim_feature_term_dims(t);
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

float anim_feature_scale_floor(const anim_feature_term_t *t) {
  switch (t->kind) {
  case ANIM_FEATURE_BONE_POSITION: return FLOOR_POSITION_M;
  case ANIM_FEATURE_BONE_VELOCITY: return FLOOR_VELOCITY_M_S;
  case ANIM_FEATURE_TRAJECTORY_POSITION: return FLOOR_TRAJECTORY_POSITION_M;
  case ANIM_FEATURE_TRAJECTORY_DIRECTION: return FLOOR_TRAJECTORY_DIRECTION;
  case ANIM_FEATURE_INERTIALIZE: {
    /* The position and velocity floors through the term's own formula (feature.c). */
    float values[3];
    anim_feature_bone_values(t, vec3_make(FLOOR_POSITION_M, 0.0f, 0.0f), vec3_make(FLOOR_VELOCITY_M_S, 0.0f, 0.0f),
                             values);
    return values[0];
  }
  }
  return FLOOR_POSITION_M;
}

/* Per-dimension mean; one scale per group: the mean of its dims' std, at
 * least the floor, over the weight. */
static int normalize_group(anim_features_t *f, int term, const anim_feature_build_options_t *o, char *err,
                           int errlen) {
  const anim_feature_term_t *t = &f->schema.terms[term];
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
  float std = (float)(std_sum / dims), floor = anim_feature_scale_floor(t);
  const char *of = anim_feature_term_is_bone(t) ? " of " : "", *bone = anim_feature_term_is_bone(t) ? t->bone : "";
  if (!isfinite(std)) {
    if (err && errlen > 0)
      snprintf(err, (size_t)errlen, "feature term %d (%s%s%s) has values that are not finite", term,
               kind_name(t->kind), of, bone);
    return ANIM_EINVAL;
  }
  if (o && o->exact_scales && std > 0.0f) {
    /* The caller wants the data's own spread, small or not. */
  } else if (!(std >= floor)) {
    anim_build_warn(
        o ? o->warn : NULL, o ? o->warn_ctx : NULL,
        "feature term %d (%s%s%s) hardly varies over the database (std %.3g): normalized by the floor %g instead", term,
        kind_name(t->kind), of, bone, (double)std, (double)floor);
    std = floor;
  }
  for (int j = start; j < start + dims; j++) f->scale[j] = std / t->weight;
  return 0;
}

int anim_features_compute(const anim_database_t *db, const anim_feature_schema_t *schema,
                          const anim_feature_build_options_t *options, anim_features_t *out, char *err, int errlen) {
  memset(out, 0, sizeof *out);
  int rc = anim_feature_schema_validate(schema, &db->skeleton, err, errlen);
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
  for (int t = 0; t < schema->nterms && !rc; t++) rc = normalize_group(&f, t, options, err, errlen);
  if (rc) {
    anim_features_free(&f);
    return rc;
  }
  for (int i = 0; i < f.rows; i++) {
    float *row = f.values + (size_t)i * (size_t)f.cols;
    anim_features_normalize(&f, row, row);
  }
  *out = f;
  return 0;
}

int anim_features_build_with(anim_database_t *db, const anim_feature_schema_t *schema,
                             const anim_feature_build_options_t *options, char *err, int errlen) {
  if (!anim_database_is_built(db)) {
    if (err && errlen > 0) snprintf(err, (size_t)errlen, "%s: a database loaded from a file is read-only", db->name);
    return ANIM_EINVAL;
  }
  anim_features_t f;
  int rc = anim_features_compute(db, schema, options, &f, err, errlen);
  if (rc) return rc;
  anim_features_free(&db->features);
  db->features = f;
  anim_database_update_version(db);
  return 0;
}

int anim_features_build(anim_database_t *db, const anim_feature_schema_t *schema, char *err, int errlen) {
  return anim_features_build_with(db, schema, NULL, err, errlen);
}

void anim_features_free(anim_features_t *f) {
  free(f->values), free(f->offset), free(f->scale);
  f->values = f->offset = f->scale = NULL;
  f->rows = f->cols = 0;
}

