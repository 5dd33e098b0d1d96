/*
 * test_quantize.c: the stream encodings keep their documented error bounds,
 * on random rotations, on the rotations of a real database, and on the edge
 * cases (identity, q and -q, two components equal, 180-degree turns).
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
#include "offline/procgen.h"
#include "pose/quantize.h"
#include "pose/world.h"
#include "procgen_db.h"

/* In double: acos near 1 in float cannot see angles below ~1e-3. The
 * relative rotation's vector part gives the angle without that loss. */
static float angle_between(quat a, quat b) {
  quat r = quat_mul(quat_inv(a), b);
  double v = sqrt((double)r.x * r.x + (double)r.y * r.y + (double)r.z * r.z);
  return (float)(2.0 * atan2(v, fabs((double)r.w)));
}

static void check_rotation(quat q, float *worst) {
  quat back = anim_quat_unpack(anim_quat_pack(q));
  float e = angle_between(quat_normalize(q), back);
  if (e > *worst) *worst = e;
  if (e > ANIM_QUAT_PACK_MAX_ANGLE)
    fail_msg("rotation (%g %g %g %g) comes back %.3g rad off", q.w, q.x, q.y, q.z, e);
}

static void test_rotation_edge_cases(void **state) {
  float worst = 0.0f;
  const float h = 0.70710678f;
  quat cases[] = {quat_identity(), quat_make(-1, 0, 0, 0), quat_make(0, 1, 0, 0), quat_make(0, 0, -1, 0),
                  quat_make(h, h, 0, 0),  quat_make(h, -h, 0, 0), quat_make(0.5f, 0.5f, 0.5f, 0.5f),
                  quat_make(-0.5f, 0.5f, -0.5f, 0.5f), quat_make(0, 0, 0, 1)};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_rotation(cases[i], &worst);
}

static void test_random_and_real_rotations(void **state) {
  unsigned seed = 5;
  float worst = 0.0f;
  for (int i = 0; i < 200000; i++) {
    quat q = quat_make((float)rand_r(&seed) / RAND_MAX - 0.5f, (float)rand_r(&seed) / RAND_MAX - 0.5f,
                       (float)rand_r(&seed) / RAND_MAX - 0.5f, (float)rand_r(&seed) / RAND_MAX - 0.5f);
    check_rotation(q, &worst);
  }
  anim_database_t db;
  anim_test_procgen(&db);
  for (size_t i = 0; i < (size_t)db.nframes * (size_t)db.nbones; i++) check_rotation(db.local_rotations[i], &worst);
  anim_database_free(&db);
  printf("worst rotation error %.3g rad (bound %.3g)\n", worst, ANIM_QUAT_PACK_MAX_ANGLE);
}

static void test_positions(void **state) {
  for (float x = -3.9f; x < 3.9f; x += 0.00137f) {
    float e = fabsf(anim_local_position_unpack(anim_local_position_pack(x)) - x);
    assert_true(e <= 0.5f * ANIM_LOCAL_POSITION_STEP + 1e-6f);
  }
  for (float x = -1000.0f; x < 1000.0f; x += 0.731f) {
    float e = fabsf(anim_root_position_unpack(anim_root_position_pack(x)) - x);
    assert_true(e <= 0.5f * ANIM_ROOT_POSITION_STEP + 1e-4f * fabsf(x) * 1e-3f);
  }
  /* Out of range clamps instead of wrapping. */
  assert_true(anim_local_position_unpack(anim_local_position_pack(100.0f)) > 3.99f);
  assert_true(anim_local_position_unpack(anim_local_position_pack(-100.0f)) < -3.99f);
}

/* A whole record is the documented layout byte for byte (root x, y, z as
 * 4-byte little-endian steps; 7 bytes per rotation code; 2 per local position
 * value), with and without positions, and not a byte past its end. */
/* The world (world.h) against the root's code: every coordinate up to the
 * limit comes back as the same float (its spacing there, 2^-10 m, is
 * twenty times the step); confine steps a point back onto the boundary,
 * coordinate by coordinate, and leaves what it cannot place alone. */
static void test_world_fits_the_root_code(void **state) {
  (void)state;
  const float at[] = {ANIM_WORLD_LIMIT, -ANIM_WORLD_LIMIT, nextafterf(ANIM_WORLD_LIMIT, 0.0f), 9999.123f, -1234.5678f};
  for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
    float back = anim_root_position_unpack(anim_root_position_pack(at[i]));
    if (back != at[i]) fail_msg("%.6f comes back as %.6f", at[i], back);
  }
  /* The code's own range is far beyond: 21 times the limit. */
  assert_true(anim_root_position_unpack(anim_root_position_pack(21.0f * ANIM_WORLD_LIMIT)) == 21.0f * ANIM_WORLD_LIMIT);
  assert_true(anim_world_contains(vec3_make(ANIM_WORLD_LIMIT, -ANIM_WORLD_LIMIT, 0.0f)));
  assert_false(anim_world_contains(vec3_make(nextafterf(ANIM_WORLD_LIMIT, INFINITY), 0.0f, 0.0f)));
  assert_false(anim_world_contains(vec3_make(NAN, 0.0f, 0.0f)));
  vec3 step = anim_world_confine(vec3_make(10003.0f, 2.0f, -10000.5f));
  assert_true(step.x == -3.0f && step.y == 0.0f && step.z == 0.5f);
  step = anim_world_confine(vec3_make(5.0f, -3.0f, 1.0f));
  assert_true(step.x == 0.0f && step.y == 0.0f && step.z == 0.0f);
  step = anim_world_confine(vec3_make(INFINITY, 0.0f, 20000.0f));
  assert_true(step.x == 0.0f && step.y == 0.0f && step.z == 0.0f);
}

static void test_record_layout(void **state) {
  enum { BONES = 23 };
  vec3 p[BONES];
  quat q[BONES];
  unsigned seed = 4;
  for (int b = 0; b < BONES; b++) {
    p[b] = vec3_make((float)rand_r(&seed) / RAND_MAX - 0.5f, (float)rand_r(&seed) / RAND_MAX, 0.3f * (float)b);
    q[b] = quat_normalize(quat_make((float)rand_r(&seed) / RAND_MAX - 0.5f, (float)rand_r(&seed) / RAND_MAX - 0.5f,
                                    (float)rand_r(&seed) / RAND_MAX - 0.5f, (float)rand_r(&seed) / RAND_MAX - 0.5f));
  }
  p[0] = vec3_make(1234.5f, 0.9f, -77.25f);
  for (int rotations_only = 0; rotations_only < 2; rotations_only++) {
    size_t size = anim_pose_quantized_size(BONES, rotations_only);
    uint8_t got[1024], want[1024];
    memset(got, 0xAB, sizeof got);
    anim_pose_quantize(got, p, q, BONES, rotations_only);
    size_t at = 0;
    for (int i = 0; i < 3; i++) {
      uint32_t v = (uint32_t)anim_root_position_pack(i == 0 ? p[0].x : i == 1 ? p[0].y : p[0].z);
      for (int k = 0; k < 4; k++) want[at++] = (uint8_t)(v >> (8 * k));
    }
    for (int b = 0; b < BONES; b++) {
      uint64_t code = anim_quat_pack(q[b]);
      for (int k = 0; k < 7; k++) want[at++] = (uint8_t)(code >> (8 * k));
    }
    for (int b = 1; b < BONES && !rotations_only; b++)
      for (int i = 0; i < 3; i++) {
        uint16_t v = (uint16_t)anim_local_position_pack(i == 0 ? p[b].x : i == 1 ? p[b].y : p[b].z);
        want[at++] = (uint8_t)v, want[at++] = (uint8_t)(v >> 8);
      }
    assert_int_equal(at, size);
    assert_memory_equal(got, want, size);
    for (size_t k = size; k < size + 16; k++) assert_int_equal(got[k], 0xAB);
  }
}

/* A record's rotation codes and local positions (packed four at a time)
 * are anim_quat_pack's and anim_local_position_pack's, bit for bit; for the
 * rotations: unit rotations, rotations a float's rounding off unit length
 * and ones that are not unit at all, ties between the largest components, a
 * dropped component of either sign, and every count of bones left over after
 * the groups of four. */
static quat tricky_rotation(unsigned *seed, int i) {
  float c[4];
  for (int k = 0; k < 4; k++) c[k] = (float)rand_r(seed) / RAND_MAX * 2.0f - 1.0f;
  switch (i % 6) {
  case 0: return quat_normalize(quat_make(c[0], c[1], c[2], c[3]));
  case 1: return quat_make(c[0], c[1], c[2], c[3]); /* not unit: the scalar way for its group */
  case 2: return quat_normalize(quat_make(c[0], -c[0], c[2] * 0.1f, c[3] * 0.1f)); /* |w| == |x| */
  case 3: return quat_normalize(quat_make(c[0] * 0.1f, c[1] * 0.1f, c[2], c[2])); /* y == z */
  case 4: { /* a float's rounding off unit length, either side */
    quat q = quat_normalize(quat_make(c[0], c[1], c[2], c[3]));
    return quat_make(q.w * (1.0f + 4e-7f * c[1]), q.x, q.y, q.z);
  }
  default: return quat_make(c[0] < 0.0f ? -1.0f : 1.0f, 0.0f, 0.0f, 0.0f);
  }
}

static void test_record_matches_scalar(void **state) {
  enum { MAX_BONES = 11 };
  unsigned seed = 9;
  vec3 p[MAX_BONES];
  quat q[MAX_BONES];
  int off_unit = 0;
  for (int round = 0; round < 20000; round++) {
    int bones = 1 + round % MAX_BONES;
    for (int b = 0; b < bones; b++) {
      q[b] = tricky_rotation(&seed, round + b * 7);
      /* metres in and beyond the +-4 m range, some exactly half a step */
      float *xyz = &p[b].x;
      for (int k = 0; k < 3; k++)
        xyz[k] = rand_r(&seed) % 4 ? ((float)rand_r(&seed) / RAND_MAX - 0.5f) * 10.0f
                                   : ((float)(rand_r(&seed) % 4000) - 2000.0f + 0.5f) * ANIM_LOCAL_POSITION_STEP;
    }
    uint8_t got[12 + 13 * MAX_BONES];
    anim_pose_quantize(got, p, q, bones, 0);
    for (int j = 0; j < 3 * (bones - 1); j++) {
      int16_t v = (int16_t)(uint16_t)(got[12 + 7 * bones + 2 * j] | got[12 + 7 * bones + 2 * j + 1] << 8);
      if (v != anim_local_position_pack((&p[1].x)[j]))
        fail_msg("round %d position value %d: %.9g packs to %d, alone %d", round, j, (&p[1].x)[j], v,
                 anim_local_position_pack((&p[1].x)[j]));
    }
    for (int b = 0; b < bones; b++) {
      uint64_t code = 0;
      for (int k = 0; k < 7; k++) code |= (uint64_t)got[12 + 7 * b + k] << (8 * k);
      if (code != anim_quat_pack(q[b]))
        fail_msg("round %d bone %d of %d: (%.9g %.9g %.9g %.9g) packs to %llx, alone %llx", round, b, bones, q[b].w,
                 q[b].x, q[b].y, q[b].z, (unsigned long long)code, (unsigned long long)anim_quat_pack(q[b]));
      off_unit += fabsf(quat_dot(q[b], q[b]) - 1.0f) > 1e-6f;
    }
  }
  assert_true(off_unit > 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rotation_edge_cases),
      cmocka_unit_test(test_random_and_real_rotations),
      cmocka_unit_test(test_positions),
      cmocka_unit_test(test_world_fits_the_root_code),
      cmocka_unit_test(test_record_layout),
      cmocka_unit_test(test_record_matches_scalar),
  };
  return cmocka_run_group_tests_name("quantize", tests, NULL, NULL);
}
