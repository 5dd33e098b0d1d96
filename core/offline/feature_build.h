/*
 * feature_build.h: the matching features of a built database: the default
 * schema for its skeleton, one raw row per frame, and the per-group
 * normalization (offsets and scales) stored with it.
 *
 * What it does: character space is the simulation bone's (bone 0):
 * positions relative to it and rotated into its facing, velocities rotated
 * likewise; trajectory samples past the end of a range continue the range's
 * last frame (its root velocity and turning rate carried on for the missing
 * time), so a clip that ends at rest still says "the character stops here"
 * while a clip cut in mid-stride keeps describing the running it is.
 * Normalization per group: offset = per-dimension mean, scale = the mean of
 * the dimensions' standard deviations, floored, over the term's weight.
 *
 * The floor: a group whose data hardly varies (the trajectory direction of
 * a database of straight walks, every group of a one-frame database) would
 * get a scale near zero, and dividing by it would blow its noise up until it
 * decided every search alone (or overflowed). Such a group builds with a
 * warning and the floor as its std instead: the smallest spread that still
 * means something in the group's units (anim_feature_scale_floor):
 *   bone position 0.05 m, bone velocity 0.1 m/s, trajectory position
 *   0.1 m, trajectory direction 0.1 (a unit vector's component, ~6 deg),
 *   inertialization the position and velocity floors through the term's
 *   formula (2 p / y + v / y^2).
 * Each is below the std of that group in every real database built here
 * (animdb info, scale x weight; Bandai Namco, CMU 3ds Max, GAMES-105
 * mirrored, and procgen): foot positions 0.09-0.14 m, foot velocities
 * 0.64-0.96 m/s, hips velocity 0.17-0.57 m/s, trajectory positions
 * 0.27-0.57 m, trajectory directions 0.13-0.39. So none of those is
 * floored (their content hashes did not change), and a floored group
 * weighs no more than it does in a varied database: its noise cannot
 * decide a search. A group that does not vary at all adds the same cost to
 * every row, so its scale changes no search result; the floor only keeps
 * that cost finite and comparable to the others'. (A single straight walk,
 * CMU 02_01, floors its trajectory position and direction groups.)
 * What it does not: search, or normalize queries at run time (feature.h).
 */
#ifndef ANIM_FEATURE_BUILD_H
#define ANIM_FEATURE_BUILD_H

#include "offline/bone_roles.h"
#include "offline/build.h"
#include "database/feature.h"

/* The seed's 27-dim layout for db's skeleton: both feet's positions and
 * velocities, the hips' velocity, trajectory positions and directions at
 * 20/40/60 frames; the feet and hips found by name (bone_roles.h) unless
 * bones names them. bones may be NULL. 0, or ANIM_ENOTFOUND with the role
 * that is missing (or the named bone that is not in the skeleton) in err. */
int anim_feature_schema_make(anim_feature_schema_t *out_schema, const anim_database_t *db,
                             const anim_bone_names_t *bones, char *err, int errlen);
/* The same with every bone found by name and no message. */
int anim_feature_schema_default(anim_feature_schema_t *out_schema, const anim_database_t *db);

/* The smallest std a group of term is normalized by (see the top). */
float anim_feature_scale_floor(const anim_feature_term_t *term);

/* What anim_features_build may be told. */
typedef struct {
  anim_build_warn_cb warn; /* each floored group, one line; may be NULL */
  void *warn_ctx;
  int exact_scales;        /* 1: every group by its own spread, however small (0 still floored) */
} anim_feature_build_options_t;

/* The features of schema over any database (built or loaded, read only)
 * into out, which the caller frees with anim_features_free; options may be
 * NULL. The errors of anim_features_build_with but the read-only one. For a
 * schema of the caller's own (pose fitting's trackers) beside the
 * database's. */
int anim_features_compute(const anim_database_t *db, const anim_feature_schema_t *schema,
                          const anim_feature_build_options_t *options, anim_features_t *out, char *err, int errlen);

/* Computes and normalizes db->features from schema (replacing any), then
 * updates db->version. db must be built here (anim_database_is_built).
 * options may be NULL. ANIM_EINVAL (invalid schema, a database loaded from
 * a file, non-finite values: message names the term), ANIM_ENOMEM. */
int anim_features_build_with(anim_database_t *db, const anim_feature_schema_t *schema,
                             const anim_feature_build_options_t *options, char *err, int errlen);
int anim_features_build(anim_database_t *db, const anim_feature_schema_t *schema, char *err, int errlen);
void anim_features_free(anim_features_t *features);

/* The raw (unnormalized) feature row of database frame `frame` under schema
 * (which must be valid for db): see the top. 0, ANIM_ERANGE (frame), or
 * ANIM_EINVAL (a bone term naming no bone of db). */
int anim_features_compute_frame(const anim_database_t *db, const anim_feature_schema_t *schema, int frame,
                                float *out_raw);

#endif
