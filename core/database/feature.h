/*
 * feature.h: the motion-matching feature schema and what the runtime does
 * with features: a query row from explicit inputs, normalization.
 *
 * A schema is a list of weighted terms over named bones (so it fits any
 * skeleton); each term contributes a group of dimensions. Normalization is
 * per group: offset = per-dimension mean, scale = (mean over the group's
 * dimensions of the per-dimension std, floored) / weight. Queries are
 * normalized with the same offset and scale, stored with the database.
 *
 * What it does not: extract features from database frames or compute the
 * offsets and scales (the builder, core/offline/feature_build.h); this file
 * only reads a schema and a built feature matrix.
 *
 * Validity rules (anim_feature_schema_validate):
 *  1. 1 <= nterms <= ANIM_MAX_FEATURE_TERMS; total dims <= ANIM_MAX_FEATURE_DIMS;
 *  2. every weight finite and > 0;
 *  3. bone terms name a bone of the skeleton;
 *  4. trajectory terms have 1..ANIM_MAX_TRAJECTORY_SAMPLES frame offsets > 0;
 *  5. inertialization terms have a finite halflife > 0 (seconds).
 */
#ifndef ANIM_FEATURES_H
#define ANIM_FEATURES_H

#include "math/anim_math.h"
#include "pose/clip.h"

#define ANIM_MAX_FEATURE_TERMS 16
#define ANIM_MAX_FEATURE_DIMS 128
#define ANIM_MAX_TRAJECTORY_SAMPLES 8
#define ANIM_FEATURE_NAME_MAX 64

typedef enum {
  ANIM_FEATURE_BONE_POSITION = 0,   /* 3 dims, character space, metres */
  ANIM_FEATURE_BONE_VELOCITY = 1,   /* 3 dims, character space, m/s */
  ANIM_FEATURE_TRAJECTORY_POSITION = 2,  /* 2 dims per sample (x, z), character space */
  ANIM_FEATURE_TRAJECTORY_DIRECTION = 3, /* 2 dims per sample (x, z), character space */
  ANIM_FEATURE_INERTIALIZE = 4      /* 3 dims: 2*pos/y + vel/y^2, y = 2 ln2 / halflife (000_*) */
} anim_feature_kind_t;

typedef struct {
  anim_feature_kind_t kind;
  char bone[ANIM_FEATURE_NAME_MAX]; /* bone terms */
  float weight;
  float halflife;                   /* ANIM_FEATURE_INERTIALIZE, seconds */
  int nsamples;                     /* trajectory terms */
  int frame_offsets[ANIM_MAX_TRAJECTORY_SAMPLES]; /* at the database rate */
} anim_feature_term_t;

typedef struct {
  int nterms;
  anim_feature_term_t terms[ANIM_MAX_FEATURE_TERMS];
} anim_feature_schema_t;

/* Normalized feature matrix plus what normalizes a query. */
typedef struct {
  anim_feature_schema_t schema;
  int rows, cols;
  float *values;  /* rows x cols, row-major, normalized */
  float *offset;  /* cols */
  float *scale;   /* cols */
  int group_start[ANIM_MAX_FEATURE_TERMS]; /* first column of each term */
  int group_dims[ANIM_MAX_FEATURE_TERMS];
} anim_features_t;

/* Dimensions the schema produces, and one term's (3 for bone terms, 2 per
 * sample for trajectory terms). */
int anim_feature_schema_dims(const anim_feature_schema_t *schema);
int anim_feature_term_dims(const anim_feature_term_t *term);
/* 1 for the terms over one bone (position, velocity, inertialization). */
int anim_feature_term_is_bone(const anim_feature_term_t *term);
/* 0 when the rules above hold for skeleton; else ANIM_EINVAL with a message
 * naming the term. */
int anim_feature_schema_validate(const anim_feature_schema_t *schema, const anim_skeleton_t *skeleton, char *err,
                                 int errlen);

/* The 3 raw values of a bone term from the bone's character-space position
 * (m) and velocity (m/s): the position, the velocity, or the
 * inertialization value 2 pos / y + vel / y^2 (feature.c says why). */
void anim_feature_bone_values(const anim_feature_term_t *term, vec3 position, vec3 velocity, float *out_values);

/* What a query is made of when it does not come from a database frame, all
 * in character space (relative to the simulation bone's position and yaw):
 * bone positions (m) and velocities (m/s) by bone name, and the desired
 * trajectory as (x, z) pairs per sample, in the order of the schema's frame
 * offsets. Views, not owned. */
typedef struct {
  const char *const *bone_names; /* nbones names */
  const vec3 *bone_positions;    /* nbones, or NULL when no term needs them */
  const vec3 *bone_velocities;   /* nbones, or NULL */
  int nbones;
  const float *trajectory_positions;  /* 2 x ntrajectory_positions */
  int ntrajectory_positions;
  const float *trajectory_directions; /* 2 x ntrajectory_directions, unit (x, z) */
  int ntrajectory_directions;
} anim_feature_inputs_t;

/* The raw feature row of a valid schema from explicit inputs: the same
 * values anim_features_compute_frame gives for a frame whose bones and
 * future trajectory are the inputs. 0; ANIM_ENOTFOUND (a term's bone has no
 * position or velocity given), ANIM_EDIMENSION (trajectory samples differ
 * from a term's nsamples); message in err. */
int anim_features_compute_inputs(const anim_feature_schema_t *schema, const anim_feature_inputs_t *inputs,
                                 float *out_raw, char *err, int errlen);

/* out_normalized[j] = (raw[j] - offset[j]) / scale[j]. */
void anim_features_normalize(const anim_features_t *features, const float *raw, float *out_normalized);
void anim_features_denormalize(const anim_features_t *features, const float *normalized, float *out_raw);

#endif
