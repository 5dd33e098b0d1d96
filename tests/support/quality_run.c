/* quality_run.c: the in-process quality runs (see quality_run.h). */
#include <stdio.h>
#include <string.h>
#include "anim_error.h"
#include "offline/build.h"
#include "offline/feature_build.h"
#include "offline/import.h"
#include "quality_run.h"

const anim_quality_dataset_t anim_quality_datasets[ANIM_QUALITY_DATASETS] = {
    {"bandai-namco", "bandai-namco", 0.01f},
    {"games105", "games105", 1.0f},
    {"cmu-3dsmax", "cmu-3dsmax", 0.056444f},
    {"cmu-motionbuilder", "cmu-motionbuilder", 0.056444f},
};

int anim_quality_dataset_build(anim_database_t *out_db, const char *shared_dir, int d, char *err, int errlen) {
  memset(out_db, 0, sizeof *out_db);
  if (d < 0 || d >= ANIM_QUALITY_DATASETS) return snprintf(err, (size_t)errlen, "no dataset %d", d), ANIM_EINVAL;
  char path[1024];
  snprintf(path, sizeof path, "%s/data/mocap/%s", shared_dir, anim_quality_datasets[d].folder);
  anim_clip_list_t clips = {NULL, 0, 0};
  anim_bvh_options_t bo = {anim_quality_datasets[d].scale};
  anim_build_options_t o;
  anim_build_options_default(&o);
  o.mirror = 1;
  anim_feature_schema_t schema;
  int rc = anim_import_path(&clips, path, &bo, err, errlen);
  if (!rc) rc = anim_database_build(out_db, anim_quality_datasets[d].name, clips.clips, clips.count, &o, err, errlen);
  anim_clip_list_free(&clips);
  if (!rc && !(rc = anim_feature_schema_default(&schema, out_db)))
    rc = anim_features_build(out_db, &schema, err, errlen);
  if (rc) anim_database_free(out_db);
  return rc;
}

uint32_t anim_quality_streamed_contacts(const anim_controller_t *c) { return anim_controller_contacts(c); }

int anim_quality_run_controller(const anim_database_t *db, const anim_search_index_t *index,
                                const anim_controller_params_t *params, anim_program_kind_t kind, uint32_t seed,
                                float seconds, anim_quality_t *out, anim_quality_tick_cb cb, void *ctx) {
  return anim_quality_run_controller_from(db, index, params, kind, seed, 0, 0.0f, seconds, out, cb, ctx);
}

int anim_quality_run_controller_from(const anim_database_t *db, const anim_search_index_t *index,
                                     const anim_controller_params_t *params, anim_program_kind_t kind, uint32_t seed,
                                     int start_frame, float facing, float seconds, anim_quality_t *out,
                                     anim_quality_tick_cb cb, void *ctx) {
  anim_controller_t c;
  anim_quality_meter_t meter;
  int rc = anim_controller_init(&c, db, index, params, vec3_zero(), facing, start_frame);
  if (rc) return rc;
  if (anim_quality_meter_init(&meter, db)) return anim_controller_free(&c), ANIM_ENOMEM;
  anim_input_program_t program;
  anim_input_program_init(&program, kind, seed);
  const float dt = 1.0f / 60.0f;
  int ticks = (int)(seconds * 60.0f + 0.5f);
  for (int t = 0; t < ticks && !rc; t++) {
    anim_controller_input_t in;
    vec3 command;
    int commanded;
    if (anim_input_program_at(&program, (float)t * dt, &in, &command, &commanded)) {
      rc = anim_controller_set_input(&c, &in);
      if (commanded) anim_quality_meter_command(&meter, command);
    }
    if (!rc) rc = anim_controller_tick(&c, dt);
    if (rc) break;
    anim_controller_global_pose(&c);
    uint32_t flags = anim_quality_streamed_contacts(&c);
    anim_quality_meter_frame(&meter, c.global_positions, flags, (long)anim_database_contacts(c.db, c.frame), dt);
    if (cb) cb(ctx, &c, flags);
  }
  anim_quality_meter_result(&meter, out);
  anim_quality_meter_free(&meter);
  anim_controller_free(&c);
  return rc;
}
