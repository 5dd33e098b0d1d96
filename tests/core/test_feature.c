/*
 * test_feature.c: feature schemas, extraction and normalization. Invalid
 * schemas first; then normalization statistics, the stored row equal to a
 * fresh computation, the inertialization feature against its formula, the
 * default schema on every shared skeleton; groups that hardly vary (one
 * straight walk, one frame) build with a warning and the floor as scale.
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
#include "offline/bvh.h"
#include "database/feature.h"
#include "offline/procgen.h"
#include "shared_data.h"
#include "procgen_db.h"

static anim_database_t db;

static int setup(void **state) { return anim_test_procgen_load(&db); }
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
  assert_int_equal(anim_feature_schema_validate(&s, &db.skeleton, err, sizeof err), ANIM_EINVAL); /* no terms */
  s.nterms = 1;
  s.terms[0] = bone_term(ANIM_FEATURE_BONE_POSITION, "LeftFoot", 0.0f);
  assert_int_equal(anim_feature_schema_validate(&s, &db.skeleton, err, sizeof err), ANIM_EINVAL);
  s.terms[0] = bone_term(ANIM_FEATURE_BONE_POSITION, "NoSuchBone", 1.0f);
  assert_int_equal(anim_feature_schema_validate(&s, &db.skeleton, err, sizeof err), ANIM_EINVAL);
  s.terms[0] = bone_term(ANIM_FEATURE_INERTIALIZE, "LeftFoot", 1.0f); /* halflife 0 */
  assert_int_equal(anim_feature_schema_validate(&s, &db.skeleton, err, sizeof err), ANIM_EINVAL);
  s.terms[0] = bone_term(ANIM_FEATURE_TRAJECTORY_POSITION, "", 1.0f);
  s.terms[0].nsamples = 9;
  assert_int_equal(anim_feature_schema_validate(&s, &db.skeleton, err, sizeof err), ANIM_EINVAL);
  s.terms[0].nsamples = 1, s.terms[0].frame_offsets[0] = 0;
  assert_int_equal(anim_feature_schema_validate(&s, &db.skeleton, err, sizeof err), ANIM_EINVAL);
  /* Features are built on a built database only: a loaded one is read-only. */
  s.terms[0] = bone_term(ANIM_FEATURE_BONE_POSITION, "LeftFoot", 1.0f);
  anim_database_t loaded = db;
  loaded.release = NULL;
  assert_int_equal(anim_features_build(&loaded, &s, err, sizeof err), ANIM_EINVAL);
  assert_non_null(strstr(err, "read-only"));
  /* A frame out of range; a schema that names a bone db lacks. */
  float raw[ANIM_MAX_FEATURE_DIMS];
  assert_int_equal(anim_features_compute_frame(&db, &db.features.schema, -1, raw), ANIM_ERANGE);
  s.terms[0] = bone_term(ANIM_FEATURE_BONE_VELOCITY, "NoSuchBone", 1.0f);
  assert_int_equal(anim_features_compute_frame(&db, &s, 0, raw), ANIM_EINVAL);
}

/* Every normalized column has mean 0; every group shares one scale and its
 * columns' standard deviations average to the term's weight. */
static void check_statistics(const anim_features_t *f) {
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

static void test_normalization_statistics(void **state) {
  check_statistics(&db.features);
  anim_database_t bandai;
  if (!anim_test_bandai_database(&bandai)) return;
  check_statistics(&bandai.features);
  anim_database_free(&bandai);
}

/* Doubling one term's weight doubles its normalized columns (scale = std /
 * weight) and leaves the others' bit for bit. */
static void test_weights_scale_groups(void **state) {
  anim_feature_schema_t s = db.features.schema;
  int t = 2;
  s.terms[t].weight *= 2.0f;
  anim_database_t copy = db;
  memset(&copy.features, 0, sizeof copy.features);
  char err[256];
  assert_int_equal(anim_features_build(&copy, &s, err, sizeof err), 0);
  const anim_features_t *a = &db.features, *b = &copy.features;
  for (int i = 0; i < a->rows; i += 13)
    for (int j = 0; j < a->cols; j++) {
      float x = a->values[(size_t)i * (size_t)a->cols + (size_t)j],
            y = b->values[(size_t)i * (size_t)b->cols + (size_t)j];
      int in_group = j >= a->group_start[t] && j < a->group_start[t] + a->group_dims[t];
      if (in_group ? fabsf(y - 2.0f * x) > 1e-5f * (1.0f + fabsf(x)) : x != y)
        fail_msg("row %d column %d: %g with the weight doubled, %g before", i, j, y, x);
    }
  anim_features_free(&copy.features);
}

/* A frame's bones and future trajectory passed as explicit inputs give the
 * frame's own raw row. */
static void test_inputs_equal_frame(void **state) {
  const anim_features_t *f = &db.features;
  const anim_feature_schema_t *s = &f->schema;
  const char *names[ANIM_MAX_FEATURE_TERMS];
  vec3 pos[ANIM_MAX_FEATURE_TERMS], vel[ANIM_MAX_FEATURE_TERMS];
  float raw[ANIM_MAX_FEATURE_DIMS], from_inputs[ANIM_MAX_FEATURE_DIMS], traj_p[16], traj_d[16];
  char err[256];
  for (int i = 0; i < db.nframes; i += 211) {
    assert_int_equal(anim_features_compute_frame(&db, s, i, raw), 0);
    size_t base = (size_t)i * (size_t)db.nbones;
    int n = 0;
    for (int t = 0; t < s->nterms; t++) {
      if (s->terms[t].kind == ANIM_FEATURE_TRAJECTORY_POSITION)
        memcpy(traj_p, raw + f->group_start[t], 6 * sizeof(float));
      if (s->terms[t].kind == ANIM_FEATURE_TRAJECTORY_DIRECTION)
        memcpy(traj_d, raw + f->group_start[t], 6 * sizeof(float));
      if (s->terms[t].kind > ANIM_FEATURE_BONE_VELOCITY) continue;
      int b = anim_skeleton_find(&db.skeleton, s->terms[t].bone);
      quat root = db.global_rotations[base];
      names[n] = s->terms[t].bone;
      pos[n] = quat_inv_mul_vec3(root, vec3_sub(db.global_positions[base + (size_t)b], db.global_positions[base]));
      vel[n++] = quat_inv_mul_vec3(root, db.global_velocities[base + (size_t)b]);
    }
    anim_feature_inputs_t in = {names, pos, vel, n, traj_p, 3, traj_d, 3};
    assert_int_equal(anim_features_compute_inputs(s, &in, from_inputs, err, sizeof err), 0);
    for (int j = 0; j < f->cols; j++)
      if (fabsf(from_inputs[j] - raw[j]) > 1e-5f)
        fail_msg("frame %d column %d: %g from inputs, %g", i, j, from_inputs[j], raw[j]);
    /* Missing pieces are named. */
    in.bone_velocities = NULL;
    assert_int_equal(anim_features_compute_inputs(s, &in, from_inputs, err, sizeof err), ANIM_ENOTFOUND);
    assert_non_null(strstr(err, "velocity"));
    in.bone_velocities = vel, in.ntrajectory_directions = 2;
    assert_int_equal(anim_features_compute_inputs(s, &in, from_inputs, err, sizeof err), ANIM_EDIMENSION);
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
  /* Trajectory samples past a range's end continue its last frame: the last
   * frame's future positions are its root velocity (in character space)
   * times each sample's time ahead. */
  for (int r = 0; r < db.nranges; r++) {
    int last = db.ranges[r].stop - 1;
    size_t base = (size_t)last * (size_t)db.nbones;
    vec3 v = quat_inv_mul_vec3(db.global_rotations[base], db.global_velocities[base]);
    anim_features_compute_frame(&db, &f->schema, last, raw);
    const anim_feature_term_t *t = &f->schema.terms[5];
    for (int k = 0; k < t->nsamples; k++) {
      float ahead = (float)t->frame_offsets[k] / db.frame_rate;
      assert_true(fabsf(raw[f->group_start[5] + 2 * k] - v.x * ahead) < 1e-4f);
      assert_true(fabsf(raw[f->group_start[5] + 2 * k + 1] - v.z * ahead) < 1e-4f);
    }
  }
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
  float y = 2.0f * ANIM_LN2 / 0.1f; /* half-damping of a 0.1 s half-life: 13.86 /s */
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

/* By hand: a half-life of 2 ln 2 s makes the half-damping y = 1 /s, so the
 * feature is 2 pos + vel, pos and vel taken straight from the database. */
static void test_inertialize_feature_by_hand(void **state) {
  anim_feature_schema_t s;
  memset(&s, 0, sizeof s);
  s.nterms = 1;
  s.terms[0] = bone_term(ANIM_FEATURE_INERTIALIZE, "RightFoot", 1.0f);
  s.terms[0].halflife = 2.0f * ANIM_LN2;
  int b = anim_skeleton_find(&db.skeleton, "RightFoot");
  for (int i = 7; i < db.nframes; i += 401) {
    size_t base = (size_t)i * (size_t)db.nbones;
    quat root = db.global_rotations[base];
    vec3 p = quat_inv_mul_vec3(root, vec3_sub(db.global_positions[base + (size_t)b], db.global_positions[base]));
    vec3 v = quat_inv_mul_vec3(root, db.global_velocities[base + (size_t)b]);
    float fi[3], expect[3] = {2.0f * p.x + v.x, 2.0f * p.y + v.y, 2.0f * p.z + v.z};
    assert_int_equal(anim_features_compute_frame(&db, &s, i, fi), 0);
    for (int d = 0; d < 3; d++)
      if (fabsf(fi[d] - expect[d]) > 1e-5f * (1.0f + fabsf(expect[d])))
        fail_msg("frame %d: %g, by hand %g", i, fi[d], expect[d]);
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

/* ---- degenerate groups ------------------------------------------------------------------- */

typedef struct {
  int count;
  unsigned terms; /* bit t: term t was reported */
} floored_t;

static void collect_floored(void *ctx, const char *message) {
  floored_t *f = ctx;
  int term;
  f->count++;
  if (sscanf(message, "feature term %d", &term) == 1 && term >= 0 && term < 32) f->terms |= 1u << term;
}

/* Features of a database built from clips, with the floored groups reported. */
static void build_reporting(anim_database_t *out, const anim_clip_t *clips, int n, floored_t *floored) {
  char err[256];
  if (anim_database_build(out, "degenerate", clips, n, NULL, err, sizeof err)) fail_msg("%s", err);
  anim_feature_schema_t schema;
  assert_int_equal(anim_feature_schema_default(&schema, out), 0);
  anim_feature_build_options_t o = {.warn = collect_floored, .warn_ctx = floored};
  if (anim_features_build_with(out, &schema, &o, err, sizeof err)) fail_msg("%s", err);
  const anim_features_t *f = &out->features;
  for (size_t i = 0; i < (size_t)f->rows * (size_t)f->cols; i++)
    if (!isfinite(f->values[i])) fail_msg("row %zu column %zu is not finite", i / (size_t)f->cols, i % (size_t)f->cols);
  /* A floored group's scale is the floor over the weight; the others' std is above it. */
  for (int t = 0; t < f->schema.nterms; t++) {
    const anim_feature_term_t *term = &f->schema.terms[t];
    float std = f->scale[f->group_start[t]] * term->weight, floor = anim_feature_scale_floor(term);
    if (floored->terms & (1u << t)) assert_true(fabsf(std - floor) < 1e-6f * floor);
    else assert_true(std > floor);
  }
}

/* One straight walk at constant speed: its trajectory does not turn, so the
 * direction group (and the future positions, always the same, and here the
 * steady hips' velocity) are floored; the feet still vary and keep their std. */
static void test_straight_walk_floored(void **state) {
  int n;
  const anim_procgen_clip_spec_t *specs = anim_procgen_specs(&n);
  anim_clip_t walk;
  assert_int_equal(anim_procgen_clip(&walk, &specs[2], 60.0f), 0); /* walk, 1.5 m/s, straight */
  anim_database_t one;
  floored_t floored = {0, 0};
  build_reporting(&one, &walk, 1, &floored);
  assert_true(floored.terms & (1u << 6)); /* trajectory direction */
  assert_false(floored.terms & 0xfu);     /* the feet vary */
  /* Searching its own rows still finds them: the floor keeps costs finite and ordered. */
  const anim_features_t *f = &one.features;
  for (int i = 0; i < f->rows; i += 17) {
    int best = -1;
    float best_cost = INFINITY;
    for (int j = 0; j < f->rows; j++) {
      float c = 0.0f;
      for (int k = 0; k < f->cols; k++) {
        float d =
            f->values[(size_t)i * (size_t)f->cols + (size_t)k] - f->values[(size_t)j * (size_t)f->cols + (size_t)k];
        c += d * d;
      }
      if (c < best_cost) best_cost = c, best = j;
    }
    assert_int_equal(best, i);
  }
  anim_database_free(&one);
  anim_clip_free(&walk);
}

/* One frame: nothing varies, every group is floored, all values finite. */
static void test_one_frame_floored(void **state) {
  int n;
  const anim_procgen_clip_spec_t *specs = anim_procgen_specs(&n);
  anim_clip_t walk, single;
  assert_int_equal(anim_procgen_clip(&walk, &specs[2], 60.0f), 0);
  assert_int_equal(anim_clip_alloc(&single, &walk.skeleton, 1, walk.frame_time), 0);
  size_t nb = (size_t)walk.skeleton.nbones;
  memcpy(single.local_positions, walk.local_positions + 30 * nb, nb * sizeof(vec3));
  memcpy(single.local_rotations, walk.local_rotations + 30 * nb, nb * sizeof(quat));
  snprintf(single.name, sizeof single.name, "pose");
  anim_database_t one;
  floored_t floored = {0, 0};
  build_reporting(&one, &single, 1, &floored);
  assert_int_equal(one.nframes, 1);
  assert_int_equal(floored.count, 7);
  anim_database_free(&one);
  anim_clip_free(&single);
  anim_clip_free(&walk);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_invalid_schemas),
      cmocka_unit_test(test_normalization_statistics),
      cmocka_unit_test(test_rows_equal_fresh_computation),
      cmocka_unit_test(test_inertialize_feature),
      cmocka_unit_test(test_inertialize_feature_by_hand),
      cmocka_unit_test(test_weights_scale_groups),
      cmocka_unit_test(test_inputs_equal_frame),
      cmocka_unit_test(test_default_schema_on_every_skeleton),
      cmocka_unit_test(test_straight_walk_floored),
      cmocka_unit_test(test_one_frame_floored),
  };
  return cmocka_run_group_tests_name("feature", tests, setup, teardown);
}
