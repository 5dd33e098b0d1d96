/* test_umeyama.c: rigid, similarity and yaw fits of point sets: degenerate
 * and invalid inputs refused, known transforms recovered exactly without
 * noise and within statistical bounds with noise, the fit never worse than
 * any other transform of its family, mirrored sets give proper rotations. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <string.h>
#include <cmocka.h>
#include "anim_error.h"
#include "math/umeyama.h"

/* Noise-free recovery. The points are float: a coordinate of magnitude
 * ~2 m is off by up to 2^-24 * 2 = 1.2e-7 m, so over a set spread ~1 m the
 * rotation is determined to ~1e-7 rad; 2e-6 leaves a factor of ten and
 * still fails any formula error (a wrong centroid or transposed R is off by
 * far more). Points 500 m from the origin carry 500x the rounding. */
#define TOL_EXACT_ANGLE 2e-6    /* rad */
#define TOL_EXACT_POSITION 2e-6 /* m, translation and rms, points near the origin */
#define TOL_EXACT_SCALE 2e-6    /* relative */
#define TOL_FAR_ANGLE 5e-4      /* rad, points 500 m away */
#define TOL_FAR_POSITION 5e-4   /* m */
/* With Gaussian noise of sigma per coordinate on n points of spread ~L, the
 * rotation error is ~ sigma / (L sqrt(n)) per axis: 5 mm, n = 50, L ~ 0.6 m
 * gives ~1.2e-3 rad; 6e-3 is about five standard deviations over the 200
 * trials' worst. The rms residual estimates sigma sqrt(3 (n - 7) / n). */
#define NOISE_SIGMA 0.005f
#define TOL_NOISE_ANGLE 6e-3
#define TOL_NOISE_RMS_LOW 0.75  /* rms / (sigma sqrt(3(n-7)/n)) */
#define TOL_NOISE_RMS_HIGH 1.25

static unsigned rng_state = 2024u;
static float uniform(void) { /* [-1, 1) */
  rng_state ^= rng_state << 13, rng_state ^= rng_state >> 17, rng_state ^= rng_state << 5;
  return (float)(rng_state >> 8) / 8388608.0f - 1.0f;
}
static float gaussian(void) { /* Box-Muller */
  float u1 = 0.5f * (uniform() + 1.0f) + 1e-7f, u2 = uniform();
  return sqrtf(-2.0f * logf(u1)) * cosf(ANIM_PI * u2);
}
static vec3 random_point(float spread) { return vec3_make(spread * uniform(), spread * uniform(), spread * uniform()); }
static quat random_rotation(void) {
  quat q = quat_make(gaussian(), gaussian(), gaussian(), gaussian());
  return quat_normalize(q);
}
/* The angle of a^-1 b, from its vector part (acos of a float dot product
 * would resolve nothing below ~5e-4 rad). */
static double angle_between(quat a, quat b) {
  double aw = a.w, ax = a.x, ay = a.y, az = a.z, bw = b.w, bx = b.x, by = b.y, bz = b.z;
  double w = aw * bw + ax * bx + ay * by + az * bz;
  double x = aw * bx - ax * bw - ay * bz + az * by;
  double y = aw * by - ay * bw - az * bx + ax * bz;
  double z = aw * bz - az * bw - ax * by + ay * bx;
  return 2.0 * atan2(sqrt(x * x + y * y + z * z), fabs(w));
}
static vec3 transform(quat r, vec3 t, float c, vec3 p) { return vec3_add(vec3_scale(quat_mul_vec3(r, p), c), t); }
/* sum w |b - (c R a + t)|^2 in double, so the comparisons below resolve
 * differences far smaller than float rounding of the transformed points. */
static double cost_of(quat r, vec3 t, float c, const vec3 *a, const vec3 *b, const float *w, int n) {
  double qw = r.w, qx = r.x, qy = r.y, qz = r.z, qn = sqrt(qw * qw + qx * qx + qy * qy + qz * qz);
  qw /= qn, qx /= qn, qy /= qn, qz /= qn;
  double m[3][3] = {{1 - 2 * (qy * qy + qz * qz), 2 * (qx * qy - qw * qz), 2 * (qx * qz + qw * qy)},
                    {2 * (qx * qy + qw * qz), 1 - 2 * (qx * qx + qz * qz), 2 * (qy * qz - qw * qx)},
                    {2 * (qx * qz - qw * qy), 2 * (qy * qz + qw * qx), 1 - 2 * (qx * qx + qy * qy)}};
  double cost = 0.0, tt[3] = {t.x, t.y, t.z};
  for (int i = 0; i < n; i++) {
    double p[3] = {a[i].x, a[i].y, a[i].z}, q[3] = {b[i].x, b[i].y, b[i].z}, d2 = 0.0;
    for (int k = 0; k < 3; k++) {
      double d = q[k] - (c * (m[k][0] * p[0] + m[k][1] * p[1] + m[k][2] * p[2]) + tt[k]);
      d2 += d * d;
    }
    cost += (w ? w[i] : 1.0) * d2;
  }
  return cost;
}
static double det3(const double m[3][3]) {
  return m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
         m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
}

/* ---- invalid and degenerate inputs ------------------------------------------------- */

static void test_invalid_arguments(void **state) {
  vec3 a[4] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  float w[4] = {1, 1, 1, 1};
  anim_umeyama_t fit;
  assert_int_equal(anim_umeyama_fit(NULL, ANIM_UMEYAMA_RIGID, a, a, NULL, 4), ANIM_EINVAL);
  assert_int_equal(anim_umeyama_fit(&fit, ANIM_UMEYAMA_RIGID, NULL, a, NULL, 4), ANIM_EINVAL);
  assert_int_equal(anim_umeyama_fit(&fit, ANIM_UMEYAMA_RIGID, a, NULL, NULL, 4), ANIM_EINVAL);
  assert_int_equal(anim_umeyama_fit(&fit, ANIM_UMEYAMA_RIGID, a, a, NULL, 0), ANIM_EINVAL);
  assert_int_equal(anim_umeyama_fit(&fit, (anim_umeyama_mode_t)7, a, a, NULL, 4), ANIM_EINVAL);
  w[2] = -1.0f;
  assert_int_equal(anim_umeyama_fit(&fit, ANIM_UMEYAMA_RIGID, a, a, w, 4), ANIM_EINVAL);
  w[2] = NAN;
  assert_int_equal(anim_umeyama_fit(&fit, ANIM_UMEYAMA_RIGID, a, a, w, 4), ANIM_ENONFINITE);
  w[2] = INFINITY;
  assert_int_equal(anim_umeyama_fit(&fit, ANIM_UMEYAMA_SIMILARITY, a, a, w, 4), ANIM_ENONFINITE);
  vec3 b[4] = {{0, 0, 0}, {1, 0, 0}, {0, NAN, 0}, {0, 0, 1}};
  for (int mode = 0; mode < 3; mode++) {
    assert_int_equal(anim_umeyama_fit(&fit, (anim_umeyama_mode_t)mode, a, b, NULL, 4), ANIM_ENONFINITE);
    assert_int_equal(anim_umeyama_fit(&fit, (anim_umeyama_mode_t)mode, b, a, NULL, 4), ANIM_ENONFINITE);
  }
}

/* Every degenerate configuration is refused in every mode it is degenerate
 * for, and *out is left untouched. */
static void test_degenerate_inputs(void **state) {
  anim_umeyama_t fit, sentinel;
  memset(&sentinel, 0x5a, sizeof sentinel);
  vec3 a[4] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  /* fewer than 3 points (3-D) / 2 points (yaw) */
  for (int mode = 0; mode < 2; mode++) {
    fit = sentinel;
    assert_int_equal(anim_umeyama_fit(&fit, (anim_umeyama_mode_t)mode, a, a, NULL, 2), ANIM_EINVAL);
    assert_memory_equal(&fit, &sentinel, sizeof fit);
  }
  assert_int_equal(anim_umeyama_fit(&fit, ANIM_UMEYAMA_YAW, a, a, NULL, 1), ANIM_EINVAL);
  /* zero weights: all zero; all but two (3-D); all but one (yaw) */
  float w0[4] = {0, 0, 0, 0}, w2[4] = {1, 0, 0, 1}, w1[4] = {0, 3, 0, 0};
  for (int mode = 0; mode < 3; mode++)
    assert_int_equal(anim_umeyama_fit(&fit, (anim_umeyama_mode_t)mode, a, a, w0, 4), ANIM_EINVAL);
  assert_int_equal(anim_umeyama_fit(&fit, ANIM_UMEYAMA_RIGID, a, a, w2, 4), ANIM_EINVAL);
  assert_int_equal(anim_umeyama_fit(&fit, ANIM_UMEYAMA_YAW, a, a, w1, 4), ANIM_EINVAL);
  /* all points equal */
  vec3 same[5];
  for (int i = 0; i < 5; i++) same[i] = vec3_make(0.3f, 1.2f, -4.0f);
  for (int mode = 0; mode < 3; mode++) {
    assert_int_equal(anim_umeyama_fit(&fit, (anim_umeyama_mode_t)mode, same, a, NULL, 4), ANIM_EINVAL);
    assert_int_equal(anim_umeyama_fit(&fit, (anim_umeyama_mode_t)mode, a, same, NULL, 4), ANIM_EINVAL);
  }
  /* collinear points (exactly, and to float rounding far from the origin) */
  vec3 line[6], far_line[6], other[6];
  for (int i = 0; i < 6; i++) {
    line[i] = vec3_make(0.1f * i, 0.2f * i - 1.0f, -0.05f * i);
    far_line[i] = vec3_make(500.0f + 0.1f * i, 0.3f * i, 300.0f + 0.07f * i);
    other[i] = random_point(1.0f);
  }
  for (int mode = 0; mode < 2; mode++) {
    assert_int_equal(anim_umeyama_fit(&fit, (anim_umeyama_mode_t)mode, line, other, NULL, 6), ANIM_EINVAL);
    assert_int_equal(anim_umeyama_fit(&fit, (anim_umeyama_mode_t)mode, other, line, NULL, 6), ANIM_EINVAL);
    assert_int_equal(anim_umeyama_fit(&fit, (anim_umeyama_mode_t)mode, far_line, far_line, NULL, 6), ANIM_EINVAL);
  }
  /* yaw: a line is enough (2 points), but points stacked vertically are not */
  assert_int_equal(anim_umeyama_fit(&fit, ANIM_UMEYAMA_YAW, line, line, NULL, 2), 0);
  vec3 stack[3] = {{1, 0, 2}, {1, 1, 2}, {1, 1.7f, 2}};
  assert_int_equal(anim_umeyama_fit(&fit, ANIM_UMEYAMA_YAW, stack, other, NULL, 3), ANIM_EINVAL);
  assert_int_equal(anim_umeyama_fit(&fit, ANIM_UMEYAMA_YAW, other, stack, NULL, 3), ANIM_EINVAL);
}

/* ---- behaviour ---------------------------------------------------------------------- */

/* b = c R a + t exactly: every mode's parameters come back. */
static void test_exact_recovery(void **state) {
  enum { N = 12 };
  for (int trial = 0; trial < 500; trial++) {
    vec3 a[N], b[N];
    quat r = random_rotation();
    vec3 t = random_point(2.0f);
    float c = 0.5f + 1.5f * (0.5f * (uniform() + 1.0f));
    int n = trial % 4 == 0 ? 3 : N; /* the minimum count too */
    for (int i = 0; i < n; i++) a[i] = random_point(0.8f), b[i] = transform(r, t, c, a[i]);
    anim_umeyama_t fit;
    assert_int_equal(anim_umeyama_fit(&fit, ANIM_UMEYAMA_SIMILARITY, a, b, NULL, n), 0);
    assert_true(angle_between(fit.rotation, r) < TOL_EXACT_ANGLE);
    assert_true(vec3_length(vec3_sub(fit.translation, t)) < TOL_EXACT_POSITION * c);
    assert_true(fabsf(fit.scale - c) < TOL_EXACT_SCALE * c);
    assert_true(fit.rms < TOL_EXACT_POSITION);
    assert_true(fabs(det3(fit.matrix) - 1.0) < 1e-12);
    for (int i = 0; i < n; i++) b[i] = transform(r, t, 1.0f, a[i]);
    assert_int_equal(anim_umeyama_fit(&fit, ANIM_UMEYAMA_RIGID, a, b, NULL, n), 0);
    assert_true(angle_between(fit.rotation, r) < TOL_EXACT_ANGLE);
    assert_true(vec3_length(vec3_sub(fit.translation, t)) < TOL_EXACT_POSITION);
    assert_true(fit.scale == 1.0f && fit.rms < TOL_EXACT_POSITION);
    /* the quaternion and the matrix are the same rotation */
    vec3 p = random_point(1.0f), q1 = quat_mul_vec3(fit.rotation, p), q2 = anim_umeyama_apply(&fit, p);
    assert_true(vec3_length(vec3_sub(vec3_add(q1, fit.translation), q2)) < 1e-6f);
  }
}

static void test_exact_recovery_far_from_origin(void **state) {
  enum { N = 10 };
  vec3 a[N], b[N], off = vec3_make(500.0f, 20.0f, -350.0f);
  quat r = quat_from_angle_axis(0.8f, vec3_normalize(vec3_make(0.3f, 1.0f, -0.2f)));
  vec3 t = vec3_make(3.0f, 0.1f, 250.0f);
  for (int i = 0; i < N; i++) a[i] = vec3_add(off, random_point(1.0f)), b[i] = transform(r, t, 1.0f, a[i]);
  anim_umeyama_t fit;
  assert_int_equal(anim_umeyama_fit(&fit, ANIM_UMEYAMA_RIGID, a, b, NULL, N), 0);
  assert_true(angle_between(fit.rotation, r) < TOL_FAR_ANGLE);
  for (int i = 0; i < N; i++)
    assert_true(vec3_length(vec3_sub(anim_umeyama_apply(&fit, a[i]), b[i])) < TOL_FAR_POSITION);
}

/* Gaussian noise on the targets: parameters within the statistical bound,
 * the residual estimates the noise, and the fit's cost is never above the
 * cost of the true transform or of small perturbations of the fit (it is the
 * least-squares optimum of its family). */
static void test_noisy_recovery_and_optimality(void **state) {
  enum { N = 50 };
  double worst_angle = 0.0;
  for (int trial = 0; trial < 200; trial++) {
    vec3 a[N], b[N];
    float w[N];
    quat r = random_rotation();
    vec3 t = random_point(2.0f);
    float c = trial % 2 ? 1.0f : 1.3f;
    anim_umeyama_mode_t mode = trial % 2 ? ANIM_UMEYAMA_RIGID : ANIM_UMEYAMA_SIMILARITY;
    for (int i = 0; i < N; i++) {
      a[i] = random_point(1.0f);
      vec3 noise = vec3_make(gaussian(), gaussian(), gaussian());
      b[i] = vec3_add(transform(r, t, c, a[i]), vec3_scale(noise, NOISE_SIGMA));
      w[i] = trial % 4 < 2 ? 1.0f : 0.5f + 0.5f * (uniform() + 1.0f);
    }
    const float *weights = trial % 4 < 2 ? NULL : w;
    anim_umeyama_t fit;
    assert_int_equal(anim_umeyama_fit(&fit, mode, a, b, weights, N), 0);
    double angle = angle_between(fit.rotation, r);
    worst_angle = fmax(worst_angle, angle);
    double cost = cost_of(fit.rotation, fit.translation, fit.scale, a, b, weights, N);
    assert_true(fabs(cost - fit.cost) < 1e-6 * fit.cost + 1e-9);
    assert_true(cost <= cost_of(r, t, c, a, b, weights, N) * (1.0 + 1e-6));
    for (int k = 0; k < 20; k++) {
      quat dr = quat_from_scaled_angle_axis(vec3_scale(random_point(1.0f), 0.01f));
      vec3 dt = vec3_scale(random_point(1.0f), 0.002f);
      float dc = mode == ANIM_UMEYAMA_SIMILARITY ? 1.0f + 0.002f * uniform() : 1.0f;
      assert_true(cost <= cost_of(quat_mul(dr, fit.rotation), vec3_add(fit.translation, dt), fit.scale * dc, a, b,
                                  weights, N) * (1.0 + 1e-6));
    }
    if (!weights) {
      double expect = NOISE_SIGMA * sqrt(3.0 * (N - 7) / N);
      assert_true(fit.rms > TOL_NOISE_RMS_LOW * expect && fit.rms < TOL_NOISE_RMS_HIGH * expect);
    }
  }
  if (worst_angle > TOL_NOISE_ANGLE) fail_msg("worst rotation error with noise %.3g rad", worst_angle);
}

/* A mirrored set has no exact rotation: the fit must still be a proper
 * rotation (det +1), and the best one. For a planar set mirrored through
 * its own plane the mirror image is the set itself: the answer is the
 * identity with zero residual, where an unfixed U V^T is a reflection. */
static void test_mirrored_sets(void **state) {
  enum { N = 8 };
  vec3 a[N], b[N];
  for (int i = 0; i < N; i++) a[i] = vec3_make(uniform(), uniform(), 0.0f), b[i] = vec3_make(a[i].x, a[i].y, -a[i].z);
  anim_umeyama_t fit;
  assert_int_equal(anim_umeyama_fit(&fit, ANIM_UMEYAMA_RIGID, a, b, NULL, N), 0);
  assert_true(fabs(det3(fit.matrix) - 1.0) < 1e-12);
  assert_true(angle_between(fit.rotation, quat_identity()) < TOL_EXACT_ANGLE && fit.rms < TOL_EXACT_POSITION);

  for (int trial = 0; trial < 50; trial++) {
    quat r = random_rotation();
    for (int i = 0; i < N; i++) {
      a[i] = random_point(1.0f);
      vec3 m = vec3_make(-a[i].x, a[i].y, a[i].z);
      b[i] = quat_mul_vec3(r, m);
    }
    for (int mode = 0; mode < 2; mode++) {
      assert_int_equal(anim_umeyama_fit(&fit, (anim_umeyama_mode_t)mode, a, b, NULL, N), 0);
      assert_true(fabs(det3(fit.matrix) - 1.0) < 1e-12);
      assert_true(fit.scale > 0.0f);
      for (int k = 0; k < 500; k++) { /* no rotation does better */
        quat other = random_rotation();
        vec3 t = vec3_scale(random_point(1.0f), 0.1f);
        float c = mode == ANIM_UMEYAMA_SIMILARITY ? fit.scale * (1.0f + 0.05f * uniform()) : 1.0f;
        assert_true(fit.cost <= cost_of(other, t, c, a, b, NULL, N) * (1.0 + 1e-6));
      }
      for (float dc = -0.02f; dc <= 0.02f; dc += 0.005f) /* nor does another scale */
        if (mode == ANIM_UMEYAMA_SIMILARITY)
          assert_true(fit.cost <= cost_of(fit.rotation, fit.translation, fit.scale * (1.0f + dc), a, b, NULL, N) *
                                      (1.0 + 1e-6));
    }
  }
}

/* Weights: a zero weight removes a point (an outlier), an integer weight is
 * the point repeated. */
static void test_weights(void **state) {
  enum { N = 9 };
  vec3 a[N + 2], b[N + 2];
  float w[N];
  quat r = random_rotation();
  vec3 t = vec3_make(0.5f, -1.0f, 2.0f);
  for (int i = 0; i < N; i++) a[i] = random_point(1.0f), b[i] = transform(r, t, 1.0f, a[i]), w[i] = 1.0f;
  b[4] = vec3_add(b[4], vec3_make(3.0f, 0.0f, 0.0f)); /* outlier */
  w[4] = 0.0f;
  anim_umeyama_t fit, fit2;
  assert_int_equal(anim_umeyama_fit(&fit, ANIM_UMEYAMA_RIGID, a, b, w, N), 0);
  assert_true(angle_between(fit.rotation, r) < TOL_EXACT_ANGLE && fit.rms < TOL_EXACT_POSITION);
  assert_int_equal(anim_umeyama_fit(&fit, ANIM_UMEYAMA_RIGID, a, b, NULL, N), 0);
  assert_true(fit.rms > 0.1); /* the outlier counts without the weight */

  w[4] = 3.0f;
  a[N] = a[N + 1] = a[4], b[N] = b[N + 1] = b[4];
  for (int mode = 0; mode < 3; mode++) {
    assert_int_equal(anim_umeyama_fit(&fit, (anim_umeyama_mode_t)mode, a, b, w, N), 0);
    assert_int_equal(anim_umeyama_fit(&fit2, (anim_umeyama_mode_t)mode, a, b, NULL, N + 2), 0);
    assert_true(angle_between(fit.rotation, fit2.rotation) < 1e-6);
    assert_true(vec3_length(vec3_sub(fit.translation, fit2.translation)) < 1e-5f);
    assert_true(fabsf(fit.scale - fit2.scale) < 1e-6f && fabs(fit.cost - fit2.cost) < 1e-6 * fit.cost);
  }
}

/* Yaw: a known rotation about +Y and ground translation come back exactly
 * whatever the heights (t.y stays 0); with noise and a vertical offset the
 * closed form is the minimum of a brute-force scan over theta. */
static void test_yaw(void **state) {
  enum { N = 20 };
  vec3 a[N], b[N];
  float w[N];
  for (int trial = 0; trial < 300; trial++) {
    float theta = ANIM_PI * uniform();
    quat r = quat_from_angle_axis(theta, vec3_make(0, 1, 0));
    vec3 t = vec3_make(3.0f * uniform(), 0.0f, 3.0f * uniform());
    int n = trial % 5 == 0 ? 2 : N;
    for (int i = 0; i < n; i++) a[i] = random_point(1.0f), b[i] = transform(r, t, 1.0f, a[i]), w[i] = 1.0f + uniform();
    anim_umeyama_t fit;
    assert_int_equal(anim_umeyama_fit(&fit, ANIM_UMEYAMA_YAW, a, b, trial % 2 ? w : NULL, n), 0);
    double dyaw = fabs(remainder((double)fit.yaw - theta, 2.0 * M_PI));
    assert_true(dyaw < TOL_EXACT_ANGLE);
    assert_true(angle_between(fit.rotation, r) < TOL_EXACT_ANGLE);
    assert_true(vec3_length(vec3_sub(fit.translation, t)) < TOL_EXACT_POSITION && fit.translation.y == 0.0f);
    assert_true(fit.rms < TOL_EXACT_POSITION && fit.scale == 1.0f);
  }
  for (int trial = 0; trial < 50; trial++) {
    quat r = quat_from_angle_axis(ANIM_PI * uniform(), vec3_make(0, 1, 0));
    vec3 t = vec3_make(uniform(), 0.4f, uniform()); /* a vertical offset the yaw fit cannot take */
    for (int i = 0; i < N; i++) {
      a[i] = random_point(1.0f);
      b[i] = vec3_add(transform(r, t, 1.0f, a[i]), vec3_scale(random_point(1.0f), 0.05f));
      w[i] = 1.0f + uniform();
    }
    anim_umeyama_t fit;
    assert_int_equal(anim_umeyama_fit(&fit, ANIM_UMEYAMA_YAW, a, b, w, N), 0);
    double best = INFINITY;
    for (int k = 0; k < 3600; k++) { /* each theta with its optimal ground translation */
      anim_umeyama_t probe = fit;
      float th = (float)(2.0 * M_PI * k / 3600.0);
      probe.rotation = quat_from_angle_axis(th, vec3_make(0, 1, 0));
      vec3 mean_a = vec3_zero(), mean_b = vec3_zero();
      float sw = 0.0f;
      for (int i = 0; i < N; i++)
        mean_a = vec3_add(mean_a, vec3_scale(a[i], w[i])), mean_b = vec3_add(mean_b, vec3_scale(b[i], w[i])),
        sw += w[i];
      vec3 tt = vec3_sub(vec3_scale(mean_b, 1.0f / sw), quat_mul_vec3(probe.rotation, vec3_scale(mean_a, 1.0f / sw)));
      tt.y = 0.0f;
      best = fmin(best, cost_of(probe.rotation, tt, 1.0f, a, b, w, N));
    }
    assert_true(fit.cost <= best * (1.0 + 1e-5));
    assert_true(fabs(cost_of(fit.rotation, fit.translation, 1.0f, a, b, w, N) - fit.cost) < 1e-5 * fit.cost);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_invalid_arguments),
      cmocka_unit_test(test_degenerate_inputs),
      cmocka_unit_test(test_exact_recovery),
      cmocka_unit_test(test_exact_recovery_far_from_origin),
      cmocka_unit_test(test_noisy_recovery_and_optimality),
      cmocka_unit_test(test_mirrored_sets),
      cmocka_unit_test(test_weights),
      cmocka_unit_test(test_yaw),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
