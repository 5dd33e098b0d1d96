/*
 * fuzz_bvh.c: libFuzzer target for the BVH importer, and for what is built
 * from an imported clip.
 *
 * The input is the file's text (not NUL-terminated: the parser must never read
 * past len). A clip that parses must pass anim_clip_validate (abort
 * otherwise: the importer promises a usable clip). When it is small enough
 * (at most 20000 frame-bones once resampled to 60 Hz, to keep each run fast
 * and inside libFuzzer's memory limit) it is then built into a database with
 * the default feature schema, as `animdb build` does with files it is given
 * (bone roles read from whatever names the input has). Then, mirrored, next
 * to a copy of itself whose joints are listed in another order (children
 * reversed): that must build too, into the database two plain copies give
 * (the same version: joints are matched by name, abort otherwise).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "clip_reorder.h"
#include "offline/bvh.h"
#include "offline/feature_build.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_BUILD_FRAME_BONES 20000.0

/* Two clips the same but for their joint order build the database two copies build. */
static void build_reordered(const anim_clip_t *clip) {
  anim_clip_t reordered, pair[2];
  if (anim_test_reverse_children(clip, &reordered)) return;
  anim_build_options_t o;
  anim_build_options_default(&o);
  o.mirror = 1;
  anim_database_t same, mixed;
  char err[256];
  pair[0] = *clip, pair[1] = *clip;
  int rc = anim_database_build(&same, "fuzz", pair, 2, &o, err, sizeof err);
  pair[1] = reordered;
  int rc_mixed = anim_database_build(&mixed, "fuzz", pair, 2, &o, err, sizeof err);
  if (rc != rc_mixed) {
    fprintf(stderr, "joint order changed the build: %d vs %d (%s)\n", rc, rc_mixed, err);
    abort();
  }
  if (rc == 0 && same.version != mixed.version) {
    fprintf(stderr, "joint order changed the database\n");
    abort();
  }
  if (rc == 0) anim_database_free(&same), anim_database_free(&mixed);
  anim_clip_free(&reordered);
}

static void build_database(const anim_clip_t *clip) {
  double frames = (double)clip->nframes * (double)clip->frame_time * 60.0 + 2.0;
  if (frames * (double)clip->skeleton.nbones > MAX_BUILD_FRAME_BONES) return;
  anim_database_t db;
  char err[256];
  if (anim_database_build(&db, "fuzz", clip, 1, NULL, err, sizeof err) != 0) return;
  if (anim_database_validate(&db, err, sizeof err) != 0) abort();
  anim_feature_schema_t schema;
  if (anim_feature_schema_default(&schema, &db) == 0) anim_features_build(&db, &schema, err, sizeof err);
  anim_database_free(&db);
  build_reordered(clip);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* An exact-size copy, so reading one byte past len is caught by ASan. */
  char *text = malloc(size ? size : 1);
  if (!text) return 0;
  memcpy(text, data, size);
  anim_clip_t clip;
  char err[256];
  anim_bvh_options_t options;
  anim_bvh_options_default(&options);
  if (anim_bvh_parse(&clip, text, size, "fuzz.bvh", &options, err, sizeof err) == 0) {
    if (anim_clip_validate(&clip, err, sizeof err) != 0) {
      fprintf(stderr, "parsed clip fails validation: %s\n", err);
      abort();
    }
    build_database(&clip);
    anim_clip_free(&clip);
  }
  free(text);
  return 0;
}
