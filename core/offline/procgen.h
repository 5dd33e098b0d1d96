/*
 * procgen.h: the embedded default database: a procedural biped that idles,
 * walks, jogs and runs at several speeds, turns at several rates, starts and
 * stops, built without any data file so a fresh server has something real to
 * search and stream.
 *
 * Deterministic: the same clips and database version on every run and
 * machine (of one float ABI). Feet are placed by two-bone IK on footprints
 * that stay fixed through each stance, so planted feet do not slide; the
 * hips bob, the chest counter-twists, the arms counter-swing; standing idle
 * breathes (chest and shoulders) and sways slowly.
 *
 * Skeleton (bone 0 is Hips: anim_database_build adds the ground-level
 * simulation bone above it): Hips, Spine, Chest, Neck, Head, then per side
 * Left/Right UpLeg, Leg, Foot, Toe, and Shoulder, Arm, ForeArm, Hand, the
 * names the default feature schema and the contact detector look for.
 * Units: metres, seconds, Y up, the character faces +Z at the start.
 */
#ifndef ANIM_PROCGEN_H
#define ANIM_PROCGEN_H

#include "pose/clip.h"
#include "offline/feature_build.h" /* builds a database with features: its options and results */

/* One clip of the generator: a speed profile and a turn rate. */
typedef struct {
  const char *name;
  const char *tags;       /* space-separated */
  float duration;         /* seconds */
  int nkeys;              /* speed keyframes (time s, speed m/s), linear between */
  float key_time[4], key_speed[4];
  float turn_rate;        /* radians per second, + = left (counter-clockwise seen from above) */
} anim_procgen_clip_spec_t;

/* The built-in list of clips and its length. */
const anim_procgen_clip_spec_t *anim_procgen_specs(int *out_count);

/* The skeleton every generated clip uses. */
void anim_procgen_skeleton(anim_skeleton_t *out_skeleton);

/* Generates one clip at rate Hz into out_clip (caller frees with anim_clip_free).
 * ANIM_EINVAL for a rate outside (0, 1000] or a spec that is not: duration in
 * (0, 600] s, 1..4 keys at increasing times, speeds in [0, 12] m/s, finite
 * turn rate. ANIM_ENOMEM. */
int anim_procgen_clip(anim_clip_t *out_clip, const anim_procgen_clip_spec_t *spec, float rate);

/* Every built-in clip at rate Hz, in anim_procgen_specs order. *out_clips is
 * an array of *out_count clips; free it with anim_procgen_clips_free. */
int anim_procgen_clips(anim_clip_t **out_clips, int *out_count, float rate);
void anim_procgen_clips_free(anim_clip_t *clips, int count);

/* The whole default database, named "default", at 60 Hz, with the seed's
 * feature schema and range tags. options may be NULL. Caller frees with
 * anim_database_free. 0, ANIM_ENOMEM, or another code with a message. */
int anim_procgen_database(anim_database_t *out_db, const anim_build_options_t *options, char *err, int errlen);

#endif
