/* shared_data.c: locating ../shared for tests (see shared_data.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>
#include "offline/feature_build.h"
#include "offline/import.h"
#include "shared_data.h"

const char *anim_test_shared_dir(void) {
  const char *dir = getenv("ANIM_SHARED_DIR");
  return dir && *dir ? dir : "../shared";
}

int anim_test_shared_path(char *out_path, int len, const char *relative) {
  struct stat st;
  snprintf(out_path, (size_t)len, "%s/%s", anim_test_shared_dir(), relative);
  if (stat(out_path, &st) == 0) return 1;
  const char *ci = getenv("CI");
  if (ci && strcmp(ci, "true") == 0) {
    fail_msg("shared data %s is missing, and CI=true forbids skipping", out_path);
  }
  printf("skipped: shared data %s not found (set ANIM_SHARED_DIR)\n", out_path);
  skip();
  return 0;
}

int anim_test_bandai_database(anim_database_t *out_db) {
  char dir[1024], err[512];
  if (!anim_test_shared_path(dir, sizeof dir, "data/mocap/bandai-namco")) return 0;
  anim_clip_list_t clips = {NULL, 0, 0};
  anim_bvh_options_t bo = {0.01f};
  anim_build_options_t o;
  anim_feature_schema_t schema;
  anim_build_options_default(&o);
  o.mirror = 1;
  int rc = anim_import_path(&clips, dir, &bo, err, sizeof err);
  if (!rc) rc = anim_database_build(out_db, "bandai", clips.clips, clips.count, &o, err, sizeof err);
  anim_clip_list_free(&clips);
  if (!rc && !(rc = anim_feature_schema_default(&schema, out_db)))
    rc = anim_features_build(out_db, &schema, err, sizeof err);
  if (rc) fail_msg("bandai database: %s", err);
  return 1;
}

const anim_test_mocap_set_t anim_test_mocap_sets[ANIM_TEST_MOCAP_SETS] = {
    {"bandai-namco", 0.01f, 14, "dataset-1_walk_normal_001"},
    {"cmu-3dsmax", 0.056444f, 4, "131_01"},
    {"cmu-motionbuilder", 0.056444f, 1, "02_01"},
    {"games105", 1.0f, 6, "walk_forward"},
};

int anim_test_mocap_database(int set, const anim_build_options_t *options, anim_database_t *out_db) {
  return anim_test_mocap_database_sized(set, 1.0f, options, out_db);
}

int anim_test_mocap_set_find(const char *folder) {
  for (int i = 0; i < ANIM_TEST_MOCAP_SETS; i++)
    if (!strcmp(anim_test_mocap_sets[i].folder, folder)) return i;
  fail_msg("no shared mocap set in %s", folder);
  return -1;
}

const anim_range_t *anim_test_range_find(const anim_database_t *db, const char *name) {
  for (int i = 0; i < db->nranges; i++)
    if (!strcmp(db->ranges[i].name, name)) return &db->ranges[i];
  fail_msg("%s: no range %s", db->name, name);
  return NULL;
}

int anim_test_mocap_database_sized(int set, float size, const anim_build_options_t *options, anim_database_t *out_db) {
  const anim_test_mocap_set_t *m = &anim_test_mocap_sets[set];
  char rel[128], path[1024], err[512];
  snprintf(rel, sizeof rel, "data/mocap/%s", m->folder);
  if (!anim_test_shared_path(path, sizeof path, rel)) return 0;
  anim_clip_list_t clips = {NULL, 0, 0};
  anim_bvh_options_t bo = {m->scale * size};
  if (anim_import_path(&clips, path, &bo, err, sizeof err)) fail_msg("%s", err);
  if (clips.count != m->clips) fail_msg("%s: %d clips, expected %d", m->folder, clips.count, m->clips);
  anim_build_options_t o;
  if (options) o = *options;
  else anim_build_options_default(&o), o.mirror = 1;
  if (anim_database_build(out_db, m->folder, clips.clips, clips.count, &o, err, sizeof err))
    fail_msg("%s: %s", m->folder, err);
  anim_clip_list_free(&clips);
  return 1;
}
