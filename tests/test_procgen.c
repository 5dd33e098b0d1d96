/*
 * test_procgen.c: the embedded default database. Determinism, plausible
 * motion (planted feet do not slide, speeds as specified, everything finite
 * and unit), and features with no zero-variance group.
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
#include "procgen.h"

/* Horizontal speed of feet in the middle of each contact (two frames in from
 * either end), m/s, 95th percentile. Footprints are fixed through each
 * stance, so these must be nearly still; the ends of a contact are left out
 * because the detector itself admits up to 0.35 m/s at touch-down and
 * lift-off. Measured: 0.007 m/s (worst single frame 0.06). */
#define MAX_CONTACT_FOOT_SPEED_P95 0.05f
/* Mean measured root speed within this fraction of the specified speed
 * (the path integrates the speed exactly; the smoothing of the simulation
 * bone rounds the turns). */
#define SPEED_TOLERANCE 0.05f

static anim_database_t db;

static int setup(void **state) {
  char err[256];
  return anim_procgen_database(&db, NULL, err, sizeof err) == 0 ? 0 : -1;
}
static int teardown(void **state) {
  anim_database_free(&db);
  return 0;
}

static void test_deterministic(void **state) {
  anim_database_t again;
  char err[256];
  assert_int_equal(anim_procgen_database(&again, NULL, err, sizeof err), 0);
  assert_true(again.version == db.version);
  assert_memory_equal(again.features.values, db.features.values,
                      (size_t)db.features.rows * (size_t)db.features.cols * sizeof(float));
  anim_database_free(&again);
}

static void test_valid_and_finite(void **state) {
  char err[256];
  assert_int_equal(anim_database_validate(&db, err, sizeof err), 0);
  size_t n = (size_t)db.nframes * (size_t)db.nbones;
  for (size_t i = 0; i < n; i++) {
    quat q = db.local_rotations[i];
    vec3 p = db.global_positions[i];
    if (fabsf(sqrtf(quat_dot(q, q)) - 1.0f) > 1e-4f || !isfinite(p.x + p.y + p.z))
      fail_msg("frame %zu bone %s: bad transform", i / (size_t)db.nbones, db.skeleton.names[i % (size_t)db.nbones]);
  }
  int tags[] = {anim_database_find_tag(&db, "idle"), anim_database_find_tag(&db, "walk"), anim_database_find_tag(&db, "run"),
                anim_database_find_tag(&db, "turn"), anim_database_find_tag(&db, "start"), anim_database_find_tag(&db, "stop")};
  for (size_t t = 0; t < sizeof tags / sizeof tags[0]; t++) assert_true(tags[t] >= 0);
  for (int g = 0; g < db.features.schema.nterms; g++)
    assert_true(db.features.scale[db.features.group_start[g]] > 0.0f);
}

static int cmp_float(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return x < y ? -1 : x > y;
}

static void test_planted_feet_do_not_slide(void **state) {
  float *speeds = malloc((size_t)db.nframes * (size_t)db.ncontacts * sizeof *speeds), worst = 0.0f;
  int n = 0, worst_frame = -1, worst_foot = -1;
  for (int f = 2; f + 2 < db.nframes; f++)
    for (int c = 0; c < db.ncontacts; c++) {
      int inside = 1;
      for (int d = -2; d <= 2; d++) inside &= db.contacts[(size_t)(f + d) * (size_t)db.ncontacts + (size_t)c];
      if (!inside) continue;
      vec3 v = db.global_velocities[(size_t)f * (size_t)db.nbones + (size_t)db.contact_bones[c]];
      speeds[n] = sqrtf(v.x * v.x + v.z * v.z);
      if (speeds[n] > worst) worst = speeds[n], worst_frame = f, worst_foot = c;
      n++;
    }
  assert_true(n > db.nframes / 3);
  qsort(speeds, (size_t)n, sizeof *speeds, cmp_float);
  float p95 = speeds[(int)(0.95 * n)];
  free(speeds);
  if (p95 > MAX_CONTACT_FOOT_SPEED_P95)
    fail_msg("feet in contact slide: 95th percentile %.3f m/s (worst %.3f, foot %s, frame %d)", p95, worst,
             db.skeleton.names[db.contact_bones[worst_foot]], worst_frame);
}

static void test_speeds_as_specified(void **state) {
  int n;
  const anim_procgen_clip_spec_t *specs = anim_procgen_specs(&n);
  assert_int_equal(n, db.nranges);
  for (int r = 0; r < n; r++) {
    if (specs[r].nkeys != 1 || specs[r].key_speed[0] <= 0.0f) continue; /* constant-speed clips */
    const anim_range_t *range = &db.ranges[r];
    int a = range->start + 30, z = range->stop - 30;
    vec3 p0 = db.global_positions[(size_t)a * (size_t)db.nbones], p1 = db.global_positions[(size_t)z * (size_t)db.nbones];
    float path = 0.0f;
    for (int f = a + 1; f <= z; f++)
      path += vec3_length(vec3_sub(db.global_positions[(size_t)f * (size_t)db.nbones], db.global_positions[(size_t)(f - 1) * (size_t)db.nbones]));
    float speed = path * db.frame_rate / (float)(z - a);
    (void)p0, (void)p1;
    if (fabsf(speed - specs[r].key_speed[0]) > SPEED_TOLERANCE * specs[r].key_speed[0])
      fail_msg("clip %s: root speed %.3f m/s, specified %.3f", specs[r].name, speed, specs[r].key_speed[0]);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_deterministic),
      cmocka_unit_test(test_valid_and_finite),
      cmocka_unit_test(test_planted_feet_do_not_slide),
      cmocka_unit_test(test_speeds_as_specified),
  };
  return cmocka_run_group_tests_name("procgen", tests, setup, teardown);
}
