/* heldout.c: databases with clips left out (see heldout.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "database/database.h"
#include "database/feature.h"
#include "offline/build.h"
#include "offline/feature_build.h"
#include "heldout.h"
#include "offline/import.h"

const char *const anim_heldout_bandai_clips[] = {"dataset-2_walk_normal_001", "dataset-2_run_normal_001",
                                                 "dataset-2_walk-turn-left_normal_001"};
const int anim_heldout_bandai_count = 3;

static int is_held_out(const char *name, const char *const *held_out, int nheld) {
  for (int i = 0; i < nheld; i++)
    if (strcmp(name, held_out[i]) == 0) return 1;
  return 0;
}

int anim_heldout_build(const char *mocap_dir, const char *const *held_out, int nheld, anim_database_t *out_db,
                       anim_database_t *out_truth, char *err, int errlen) {
  memset(out_db, 0, sizeof *out_db);
  memset(out_truth, 0, sizeof *out_truth);
  anim_clip_list_t clips = {NULL, 0, 0};
  anim_bvh_options_t bo = {0.01f};
  int rc = anim_import_path(&clips, mocap_dir, &bo, err, errlen);
  if (rc) return rc;
  /* Clips are moved (by value) into two arrays; the list still owns them. */
  anim_clip_t *kept = malloc(sizeof(anim_clip_t) * (size_t)(clips.count + 1));
  anim_clip_t *held = malloc(sizeof(anim_clip_t) * (size_t)(clips.count + 1));
  int nkept = 0, nfound = 0;
  if (!kept || !held) rc = ANIM_ENOMEM, snprintf(err, (size_t)errlen, "out of memory");
  for (int i = 0; !rc && i < clips.count; i++) {
    if (is_held_out(clips.clips[i].name, held_out, nheld)) held[nfound++] = clips.clips[i];
    else kept[nkept++] = clips.clips[i];
  }
  if (!rc && nfound != nheld) rc = ANIM_ENOTFOUND, snprintf(err, (size_t)errlen, "held-out clip not found");
  anim_build_options_t o;
  anim_build_options_default(&o);
  o.mirror = 1;
  if (!rc) rc = anim_database_build(out_db, "fit", kept, nkept, &o, err, errlen);
  anim_feature_schema_t schema;
  if (!rc && !(rc = anim_feature_schema_default(&schema, out_db)))
    rc = anim_features_build(out_db, &schema, err, errlen);
  o.mirror = 0;
  if (!rc) rc = anim_database_build(out_truth, "truth", held, nfound, &o, err, errlen);
  free(kept), free(held);
  anim_clip_list_free(&clips);
  if (rc) anim_database_free(out_db), anim_database_free(out_truth);
  return rc;
}
