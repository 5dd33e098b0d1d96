/*
 * lmm_database.c: the learned skeleton's database (see lmm_database.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "offline/build.h"
#include "offline/feature_build.h"
#include "offline/lmm_database.h"

/* The scripted input at frame f: a second standing, walking, running, a
 * turn back at a walk. */
static void script_input(int f, anim_controller_input_t *out) {
  memset(out, 0, sizeof *out);
  out->kind = ANIM_INPUT_STICK;
  float t = (float)f / ANIM_LMM_FRAME_RATE;
  if (t < 1.0f) return;
  if (t < 4.0f) out->stick_z = 0.5f;
  else if (t < 7.0f) out->stick_z = 1.0f;
  else out->stick_x = 0.5f;
}

/* Records the character's frames as a clip of bones 1..22, Hips at the root
 * in world space (the builder adds the simulation bone back). */
static int record(anim_clip_t *clip, const anim_lmm_networks_t *nets, float *scratch) {
  anim_skeleton_t skeleton = {0};
  skeleton.nbones = ANIM_LMM_BONES - 1;
  for (int b = 1; b < ANIM_LMM_BONES; b++) {
    memcpy(skeleton.names[b - 1], nets->skeleton.names[b], sizeof skeleton.names[0]);
    skeleton.parents[b - 1] = nets->skeleton.parents[b] - 1; /* Hips' parent 0 becomes -1 */
    skeleton.offsets[b - 1] = nets->skeleton.offsets[b];
  }
  int rc = anim_clip_alloc(clip, &skeleton, ANIM_LMM_DATABASE_FRAMES, 1.0f / ANIM_LMM_FRAME_RATE);
  if (rc) return rc;
  snprintf(clip->name, sizeof clip->name, "lmm_walk");
  anim_lmm_character_t *c = malloc(sizeof *c);
  if (!c) return ANIM_ENOMEM;
  /* The networks' own motion, not played at a rate: this walk is the data
   * (its speeds are what the rate later reads as the data's gaits). */
  anim_controller_params_t params;
  anim_lmm_params_default(&params);
  params.warp.rate = 0;
  rc = anim_lmm_character_init(c, nets, &params, vec3_make(0.0f, 0.0f, 0.0f), 0.0f, scratch);
  for (int f = 0; !rc && f < ANIM_LMM_DATABASE_FRAMES; f++) {
    anim_controller_input_t input;
    script_input(f, &input);
    if ((rc = anim_lmm_set_input(c, &input)) || (rc = anim_lmm_tick(c, 1.0f / ANIM_LMM_FRAME_RATE, scratch))) break;
    anim_lmm_global_pose(c);
    size_t row = (size_t)f * (size_t)skeleton.nbones;
    clip->local_positions[row] = c->global_positions[ANIM_LMM_HIPS];
    clip->local_rotations[row] = c->global_rotations[ANIM_LMM_HIPS];
    for (int b = 2; b < ANIM_LMM_BONES; b++) {
      clip->local_positions[row + (size_t)b - 1] = c->pose.positions[b];
      clip->local_rotations[row + (size_t)b - 1] = c->pose.rotations[b];
    }
  }
  free(c);
  return rc;
}

int anim_lmm_database(anim_database_t *out_db, const char *name, const anim_lmm_networks_t *nets, char *err,
                      int errlen) {
  if (!out_db || !name || !nets) return ANIM_EINVAL;
  float *scratch = malloc(anim_lmm_scratch_floats(nets, 1) * sizeof *scratch);
  anim_clip_t clip;
  memset(&clip, 0, sizeof clip);
  int rc = scratch ? record(&clip, nets, scratch) : ANIM_ENOMEM;
  free(scratch);
  if (rc) {
    anim_clip_free(&clip);
    snprintf(err, (size_t)errlen, "the learned walk: %s", anim_strerror(rc));
    return rc;
  }
  anim_build_options_t options;
  anim_build_options_default(&options);
  rc = anim_database_build(out_db, name, &clip, 1, &options, err, errlen);
  anim_clip_free(&clip);
  anim_feature_schema_t schema;
  if (!rc && (rc = anim_feature_schema_make(&schema, out_db, NULL, err, errlen)) == 0)
    rc = anim_features_build(out_db, &schema, err, errlen);
  if (rc) anim_database_free(out_db);
  return rc;
}
