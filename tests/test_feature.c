/*
 * test_feature.c: feature schemas, extraction and normalization. Invalid
 * schemas first; then normalization statistics, the stored row equal to a
 * fresh computation, the inertialization feature against its formula, and the
 * default schema on every shared skeleton.
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
#include "bvh.h"
#include "feature.h"
#include "procgen.h"
#include "shared_data.h"

static anim_database_t db;

static int setup(void **state) {
  char err[256];
  return anim_procgen_database(&db, NULL, err, sizeof err) == 0 ? 0 : -1;
}
static int teardown(void **state) {
  anim_database_free(&db);
  return 0;
}

static anim_feature_term_t bone_term(anim_feature_kind_t kind, const char *bone, float weight) {
  anim_feature_term_t t;
  memset(&t, 0, sizeof t);
  t.kind = kind;
  snprintf(t.bone, sizeof t.bone, "%s", bone);
  t.weight = weight;
  return t;
}

static void test_invalid_schemas(void **state) {
  char err[256];
  anim_feature_schema_t s;
  memset(&s, 0, sizeof s);
  assert_int_equal(anim_feature_schema_validate(&s, &db, err, sizeof err), ANIM_EINVAL); /* no terms */
  s.nterms = 1;
  s.terms[0] = bone_term(ANIM_FEATURE_BONE_POSITION, "LeftFoot", 0.0f);
  assert_int_equal(anim_feature_schema_validate(&s, &db, err, sizeof err), ANIM_EINVAL);
  s.terms[0] = bone_term(ANIM_FEATURE_BONE_POSITION, "NoSuchBone", 1.0f);
  assert_int_equal(anim_feature_schema_validate(&s, &db, err, sizeof err), ANIM_EINVAL);
  s.terms[0] = bone_term(ANIM_FEATURE_INERTIALIZE, "LeftFoot", 1.0f); /* halflife 0 */
  assert_int_equal(anim_feature_schema_validate(&s, &db, err, sizeof err), ANIM_EINVAL);
  s.terms[0] = bone_term(ANIM_FEATURE_TRAJECTORY_POSITION, "", 1.0f);
  s.terms[0].nsamples = 9;
  assert_int_equal(anim_feature_schema_validate(&s, &db, err, sizeof err), ANIM_EINVAL);
  s.terms[0].nsamples = 1, s.terms[0].frame_offsets[0] = 0;
  assert_int_equal(anim_feature_schema_validate(&s, &db, err, sizeof err), ANIM_EINVAL);
  /* The simulation bone never moves in its own space: zero variance, named in the error. */
  s.terms[0] = bone_term(ANIM_FEATURE_BONE_POSITION, "Simulation", 1.0f);
  anim_database_t copy = db;
  memset(&copy.features, 0, sizeof copy.features);
  assert_int_equal(anim_features_build(&copy, &s, err, sizeof err), ANIM_EINVAL);
  assert_non_null(strstr(err, "does not vary"));
}

static void test_normalization_statistics(void **state) {
  const anim_features_t *f = &db.features;
  assert_int_equal(f->cols, 27);
  for (int t = 0; t < f->schema.nterms; t++) {
    double std_sum = 0.0;
    for (int j = f->group_start[t]; j < f->group_start[t] + f->group_dims[t]; j++) {
      double mean = 0.0, var = 0.0;
      for (int i = 0; i < f->rows; i++) mean += f->values[(size_t)i * (size_t)f->cols + (size_t)j];
      mean /= f->rows;
      for (int i = 0; i < f->rows; i++) {
        double d = f->values[(size_t)i * (size_t)f->cols + (size_t)j] - mean;
        var += d * d;
      }
      if (fabs(mean) > 1e-3) fail_msg("column %d: normalized mean %g", j, mean);
      std_sum += sqrt(var / f->rows);
      assert_true(f->scale[j] == f->scale[f->group_start[t]]); /* one scale per group */
    }
    /* The group's average std is its weight (scale = std / weight). */
    double group_std = std_sum / f->group_dims[t];
    if (fabs(group_std - f->schema.terms[t].weight) > 1e-3)
      fail_msg("term %d: average std %g, weight %g", t, group_std, f->schema.terms[t].weight);
  }
}

static void test_rows_equal_fresh_computation(void **state) {
  const anim_features_t *f = &db.features;
  float raw[ANIM_MAX_FEATURE_DIMS], normalized[ANIM_MAX_FEATURE_DIMS], back[ANIM_MAX_FEATURE_DIMS];
  for (int i = 0; i < f->rows; i += 97) {
    assert_int_equal(anim_features_compute_frame(&db, &f->schema, i, raw), 0);
    anim_features_normalize(f, raw, normalized);
    assert_memory_equal(normalized, f->values + (size_t)i * (size_t)f->cols, (size_t)f->cols * sizeof(float));
    anim_features_denormalize(f, normalized, back);
    for (int j = 0; j < f->cols; j++) assert_true(fabsf(back[j] - raw[j]) <= 1e-4f * (1.0f + fabsf(raw[j])));
  }
  assert_int_equal(anim_features_compute_frame(&db, &f->schema, f->rows, raw), ANIM_ERANGE);
  /* Trajectory samples past a range's end clamp to its last frame: the last
   * frame's future positions are all zero (it is its own future). */
  int last = db.ranges[3].stop - 1;
  anim_features_compute_frame(&db, &f->schema, last, raw);
  for (int j = f->group_start[5]; j < f->group_start[5] + f->group_dims[5]; j++) assert_true(fabsf(raw[j]) < 1e-5f);
}

static void test_inertialize_feature(void **state) {
  anim_feature_schema_t s;
  memset(&s, 0, sizeof s);
  s.nterms = 1;
  s.terms[0] = bone_term(ANIM_FEATURE_INERTIALIZE, "LeftFoot", 1.0f);
  s.terms[0].halflife = 0.1f;
  anim_feature_schema_t p = s, v = s;
  p.terms[0].kind = ANIM_FEATURE_BONE_POSITION;
  v.terms[0].kind = ANIM_FEATURE_BONE_VELOCITY;
  float y = 2.0f * ANIM_LN2 / 0.1f; /* half-damping of a 0.1 s half-life */
  for (int i = 100; i < db.nframes; i += 500) {
    float fi[3], fp[3], fv[3];
    anim_features_compute_frame(&db, &s, i, fi);
    anim_features_compute_frame(&db, &p, i, fp);
    anim_features_compute_frame(&db, &v, i, fv);
    for (int d = 0; d < 3; d++) {
      float expect = 2.0f * fp[d] / y + fv[d] / (y * y);
      assert_true(fabsf(fi[d] - expect) < 1e-5f);
    }
  }
}

static void test_default_schema_on_every_skeleton(void **state) {
  static const struct {
    const char *file;
    float scale;
  } clips[] = {{"bandai-namco/dataset-2_walk_normal_001.bvh", 0.01f},
               {"cmu-3dsmax/131_01.bvh", 0.056444f},
               {"cmu-motionbuilder/02_01.bvh", 0.056444f},
               {"games105/walk_forward.bvh", 1.0f}};
  for (size_t i = 0; i < sizeof clips / sizeof clips[0]; i++) {
    char relative[256], path[1024], err[256];
    snprintf(relative, sizeof relative, "data/mocap/%s", clips[i].file);
    if (!anim_test_shared_path(path, sizeof path, relative)) return;
    anim_clip_t clip;
    anim_bvh_options_t o = {clips[i].scale};
    assert_int_equal(anim_bvh_load(&clip, path, &o, err, sizeof err), 0);
    anim_database_t one;
    assert_int_equal(anim_database_build(&one, "one", &clip, 1, NULL, err, sizeof err), 0);
    anim_feature_schema_t schema;
    if (anim_feature_schema_default(&schema, &one)) fail_msg("%s: no default schema", clips[i].file);
    assert_int_equal(anim_feature_schema_dims(&schema), 27);
    if (anim_features_build(&one, &schema, err, sizeof err)) fail_msg("%s: %s", clips[i].file, err);
    anim_database_free(&one);
    anim_clip_free(&clip);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_invalid_schemas),
      cmocka_unit_test(test_normalization_statistics),
      cmocka_unit_test(test_rows_equal_fresh_computation),
      cmocka_unit_test(test_inertialize_feature),
      cmocka_unit_test(test_default_schema_on_every_skeleton),
  };
  return cmocka_run_group_tests_name("feature", tests, setup, teardown);
}
