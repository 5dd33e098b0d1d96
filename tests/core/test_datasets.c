/*
 * test_datasets.c: every shared mocap folder builds into a database the
 * controller can run (issue 16 point 4): one database per folder (each is
 * one skeleton), mirrored, with the default schema, as `animdb build`
 * makes them.
 *
 * Per dataset: the database is valid and has a range per clip and mirror;
 * both feet have contacts (a share of frames between the bounds below);
 * every feature and scale is finite; searching a row's own features finds
 * a row at cost 0 with those features (sampled rows, the fast index); and a
 * character driven for 12 s (walk, turn, run, stop) stays finite, on the
 * ground and moves. Foot slide and other quality figures are the
 * foot-planting work's, not checked here. Failures name the dataset, and
 * the frame or tick.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "anim_error.h"
#include "character/controller.h"
#include "offline/import.h"
#include "offline/procgen.h"
#include "search/search.h"
#include "shared_data.h"

/* Share of a database's frames a foot is in contact: real locomotion plants
 * each foot 30-70% of the time (idle clips 100%, sprints less); measured
 * 0.47-0.64 over these folders. Outside 10-95% the detector or the bone is
 * wrong. */
#define MIN_CONTACT_SHARE 0.10f
#define MAX_CONTACT_SHARE 0.95f
/* The character's hips above the ground, m: a human's are 0.5-1.2 high. */
#define MIN_HIPS_HEIGHT 0.4f
#define MAX_HIPS_HEIGHT 1.3f
/* How far the character must travel in the 12 s script, m (it walks 3 s
 * and runs 3 s): well under any real walk, far above standing still. */
#define MIN_TRAVEL_M 3.0f

static void count_warning(void *ctx, const char *message) { (*(int *)ctx)++; }

/* The folder's database as `animdb build --mirror` makes it. 0 when the data is missing (skipped). */
static int build_dataset(int d, anim_database_t *out_db) {
  const char *name = anim_test_mocap_sets[d].folder;
  char err[512];
  int warnings = 0;
  anim_build_options_t o;
  anim_build_options_default(&o);
  o.mirror = 1;
  o.warn = count_warning, o.warn_ctx = &warnings;
  if (!anim_test_mocap_database(d, &o, out_db)) return 0;
  anim_feature_schema_t schema;
  if (anim_feature_schema_make(&schema, out_db, NULL, err, sizeof err)) fail_msg("%s: %s", name, err);
  anim_feature_build_options_t fo = {.warn = count_warning, .warn_ctx = &warnings};
  if (anim_features_build_with(out_db, &schema, &fo, err, sizeof err)) fail_msg("%s: %s", name, err);
  printf("  %-18s %6d frames, %2d ranges, %d warnings\n", name, out_db->nframes, out_db->nranges, warnings);
  return 1;
}

static void check_database(int d, const anim_database_t *db) {
  const char *name = anim_test_mocap_sets[d].folder;
  char err[256];
  if (anim_database_validate(db, err, sizeof err)) fail_msg("%s: %s", name, err);
  assert_int_equal(db->nranges, 2 * anim_test_mocap_sets[d].clips);
  if (db->ncontacts != 2) fail_msg("%s: %d contact bones", name, db->ncontacts);
  for (int c = 0; c < 2; c++) {
    int planted = 0;
    for (int f = 0; f < db->nframes; f++) planted += db->contacts[(size_t)f * 2 + (size_t)c];
    float share = (float)planted / (float)db->nframes;
    printf("  %-18s %-14s in contact %.2f of frames\n", name, db->skeleton.names[db->contact_bones[c]], (double)share);
    if (share < MIN_CONTACT_SHARE || share > MAX_CONTACT_SHARE)
      fail_msg("%s: %s in contact %.2f of frames", name, db->skeleton.names[db->contact_bones[c]], (double)share);
  }
  const anim_features_t *f = &db->features;
  assert_int_equal(f->rows, db->nframes);
  for (int j = 0; j < f->cols; j++)
    if (!isfinite(f->scale[j]) || !(f->scale[j] > 0.0f) || !isfinite(f->offset[j]))
      fail_msg("%s: column %d scale %g offset %g", name, j, (double)f->scale[j], (double)f->offset[j]);
  for (int i = 0; i < f->rows; i++)
    for (int j = 0; j < f->cols; j++)
      if (!isfinite(f->values[(size_t)i * (size_t)f->cols + (size_t)j]))
        fail_msg("%s: frame %d column %d not finite", name, i, j);
}

/* A row's own features find a row at cost 0 with the same features. */
static void check_self_search(int d, const anim_database_t *db, const anim_search_index_t *index) {
  const char *name = anim_test_mocap_sets[d].folder;
  const anim_features_t *f = &db->features;
  for (int i = 0; i < f->rows; i += 7) {
    const float *row = f->values + (size_t)i * (size_t)f->cols;
    anim_search_query_t q = {row, 1, -1, 0.0f, 0, 0, 0};
    anim_search_hit_t hit;
    int count = 0;
    assert_int_equal(anim_search_run(index, &q, &hit, &count, NULL), 0);
    assert_int_equal(count, 1);
    const float *found = f->values + (size_t)hit.frame * (size_t)f->cols;
    if (hit.cost != 0.0f || memcmp(found, row, (size_t)f->cols * sizeof(float)) != 0)
      fail_msg("%s: frame %d's features find frame %d at cost %g", name, i, hit.frame, (double)hit.cost);
  }
}

/* 12 s of walk, turn, run, stop: finite, on the ground, moving. */
static void check_controller(int d, const anim_database_t *db, const anim_search_index_t *index) {
  const char *name = anim_test_mocap_sets[d].folder;
  anim_controller_t c;
  assert_int_equal(anim_controller_init(&c, db, index, NULL, vec3_zero(), 0.0f, 0), 0);
  const float dt = 1.0f / 60.0f;
  int hips = anim_skeleton_find(&db->skeleton, db->features.schema.terms[4].bone);
  assert_true(hips > 0);
  for (int t = 0; t < 12 * 60; t++) {
    anim_controller_input_t in;
    memset(&in, 0, sizeof in);
    float time = (float)t * dt;
    in.kind = ANIM_INPUT_STICK;
    if (time < 3.0f) in.stick_z = 0.85f;
    else if (time < 6.0f) in.stick_x = 0.85f;
    else if (time < 9.0f) {
      in.kind = ANIM_INPUT_VELOCITY;
      in.facing = atan2f(1.0f, 0.0f);
      in.velocity = vec3_make(3.5f, 0.0f, 0.0f);
    }
    assert_int_equal(anim_controller_set_input(&c, &in), 0);
    assert_int_equal(anim_controller_tick(&c, dt), 0);
    anim_controller_global_pose(&c);
    for (int b = 0; b < db->nbones; b++) {
      vec3 p = c.global_positions[b];
      if (!isfinite(p.x) || !isfinite(p.y) || !isfinite(p.z))
        fail_msg("%s: tick %d: bone %s not finite", name, t, db->skeleton.names[b]);
    }
    float h = c.global_positions[hips].y;
    if (h < MIN_HIPS_HEIGHT || h > MAX_HIPS_HEIGHT)
      fail_msg("%s: tick %d: hips %.2f m above the ground (frame %d)", name, t, (double)h, c.frame);
  }
  vec3 root = c.global_positions[0];
  float travel = sqrtf(root.x * root.x + root.z * root.z);
  printf("  %-18s controller: %llu transitions, %.1f m from the start\n", name,
         (unsigned long long)c.transitions, (double)travel);
  if (travel < MIN_TRAVEL_M) fail_msg("%s: the character travelled %.2f m in 12 s", name, (double)travel);
  anim_controller_free(&c);
}

static void run_dataset(int d) {
  anim_database_t db;
  if (!build_dataset(d, &db)) return;
  check_database(d, &db);
  char err[256];
  anim_search_data_t data = anim_search_data_of(&db);
  anim_search_index_t *index = anim_search_index_build(ANIM_SEARCH_FAST, &data, err, sizeof err);
  if (!index) fail_msg("%s", err);
  check_self_search(d, &db, index);
  check_controller(d, &db, index);
  anim_search_index_free(index);
  anim_database_free(&db);
}

static void test_bandai_namco(void **state) { run_dataset(0); }
static void test_cmu_3dsmax(void **state) { run_dataset(1); }
static void test_cmu_motionbuilder(void **state) { run_dataset(2); }
static void test_games105(void **state) { run_dataset(3); }

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bandai_namco),
      cmocka_unit_test(test_cmu_3dsmax),
      cmocka_unit_test(test_cmu_motionbuilder),
      cmocka_unit_test(test_games105),
  };
  return cmocka_run_group_tests_name("datasets", tests, NULL, NULL);
}
