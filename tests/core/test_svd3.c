/* test_svd3.c: the 3x3 symmetric eigen-decomposition and signed SVD against
 * their defining identities on random, rank-deficient, repeated-value,
 * reflected and extreme-scale matrices. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <float.h>
#include <cmocka.h>
#include "anim_error.h"
#include "math/svd3.h"

/* Reconstruction and orthogonality bounds, relative to the largest singular
 * value: Jacobi + Givens are backward stable, so a few hundred ulp of double
 * over the whole pipeline (A^T A, up to 32 sweeps, three rotations) is ample. */
#define TOL_RECONSTRUCT 1e-13
#define TOL_ORTHO 1e-13

static unsigned rng_state = 12345u;
static double uniform(void) { /* [-1, 1) */
  rng_state ^= rng_state << 13, rng_state ^= rng_state >> 17, rng_state ^= rng_state << 5;
  return (double)(rng_state >> 8) / 8388608.0 - 1.0;
}

static double det3(const double m[3][3]) {
  return m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
         m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
}

static void assert_rotation(const double m[3][3], const char *what) {
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      double dot = m[0][i] * m[0][j] + m[1][i] * m[1][j] + m[2][i] * m[2][j];
      if (fabs(dot - (i == j ? 1.0 : 0.0)) > TOL_ORTHO) fail_msg("%s: columns %d.%d = %.3g", what, i, j, dot);
    }
  if (fabs(det3(m) - 1.0) > TOL_ORTHO) fail_msg("%s: det %.17g", what, det3(m));
}

/* Checks every property of a signed SVD of a and returns its singular values. */
static void check_svd(const double a[3][3], double out_s[3]) {
  double u[3][3], v[3][3], s[3];
  assert_int_equal(anim_svd3(a, u, s, v), 0);
  assert_rotation(u, "U");
  assert_rotation(v, "V");
  /* the order of values at rounding level (rank-deficient input) is noise */
  assert_true(s[0] >= s[1] && s[1] >= fabs(s[2]) - 1e-14 * s[0] && s[1] >= 0.0);
  double scale = fmax(s[0], DBL_MIN);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      double r = u[i][0] * s[0] * v[j][0] + u[i][1] * s[1] * v[j][1] + u[i][2] * s[2] * v[j][2];
      if (fabs(r - a[i][j]) > TOL_RECONSTRUCT * scale)
        fail_msg("reconstruction (%d,%d): %.17g vs %.17g (s0 %.3g)", i, j, r, a[i][j], s[0]);
    }
  double product = s[0] * s[1] * s[2], det = det3(a);
  assert_true(fabs(product - det) <= 1e-12 * scale * scale * scale);
  if (out_s)
    for (int k = 0; k < 3; k++) out_s[k] = s[k];
}

/* ---- invalid inputs ------------------------------------------------------------- */

static void test_nonfinite_is_refused(void **state) {
  double a[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}, u[3][3], v[3][3], s[3], q[3][3], l[3];
  a[1][2] = NAN;
  assert_int_equal(anim_svd3(a, u, s, v), ANIM_ENONFINITE);
  assert_int_equal(anim_sym3_eigen(a, l, q), ANIM_ENONFINITE);
  a[1][2] = INFINITY;
  assert_int_equal(anim_svd3(a, u, s, v), ANIM_ENONFINITE);
  a[1][2] = 0.0, a[0][1] = -INFINITY;
  assert_int_equal(anim_sym3_eigen(a, l, q), ANIM_ENONFINITE);
}

/* ---- behaviour --------------------------------------------------------------------- */

static void test_random_matrices(void **state) {
  for (int trial = 0; trial < 20000; trial++) {
    double a[3][3];
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) a[i][j] = uniform();
    check_svd(a, NULL);
  }
}

static void test_symmetric_eigen(void **state) {
  for (int trial = 0; trial < 5000; trial++) {
    double a[3][3], q[3][3], l[3];
    for (int i = 0; i < 3; i++)
      for (int j = i; j < 3; j++) a[i][j] = a[j][i] = uniform();
    if (trial % 3 == 0) a[0][0] = a[1][1]; /* repeated diagonal entries */
    assert_int_equal(anim_sym3_eigen(a, l, q), 0);
    assert_rotation(q, "Q");
    assert_true(l[0] >= l[1] && l[1] >= l[2]);
    for (int k = 0; k < 3; k++)
      for (int i = 0; i < 3; i++) {
        double aq = a[i][0] * q[0][k] + a[i][1] * q[1][k] + a[i][2] * q[2][k];
        assert_true(fabs(aq - l[k] * q[i][k]) < 1e-13);
      }
  }
}

/* Rank 2 (coplanar points' covariance), rank 1 (collinear), rank 0: U and V
 * stay rotations and the missing singular values come out ~0. */
static void test_rank_deficient(void **state) {
  double s[3];
  for (int trial = 0; trial < 2000; trial++) {
    double x[3], y[3], p[3], q[3], a[3][3];
    for (int k = 0; k < 3; k++) x[k] = uniform(), y[k] = uniform(), p[k] = uniform(), q[k] = uniform();
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) a[i][j] = x[i] * p[j] + y[i] * q[j]; /* rank 2 */
    check_svd(a, s);
    assert_true(fabs(s[2]) < 1e-14 * s[0]);
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) a[i][j] = x[i] * p[j]; /* rank 1 */
    check_svd(a, s);
    assert_true(fabs(s[1]) < 1e-14 * s[0] && fabs(s[2]) < 1e-14 * s[0]);
  }
  double zero[3][3] = {{0}};
  check_svd(zero, s);
  assert_true(s[0] == 0.0 && s[1] == 0.0 && s[2] == 0.0);
}

/* Identity, a rotation (all singular values 1), diagonal with repeats, and
 * reflections: det < 0 shows up as s[2] < 0 with U, V proper rotations. */
static void test_repeated_values_and_reflections(void **state) {
  double s[3];
  double id[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  check_svd(id, s);
  assert_true(fabs(s[0] - 1) < 1e-15 && fabs(s[1] - 1) < 1e-15 && fabs(s[2] - 1) < 1e-15);
  double c = cos(0.7), sn = sin(0.7);
  double rot[3][3] = {{c, -sn, 0}, {sn, c, 0}, {0, 0, 1}};
  check_svd(rot, s);
  assert_true(fabs(s[2] - 1) < 1e-14);
  double mirror[3][3] = {{-1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  check_svd(mirror, s);
  assert_true(fabs(s[2] + 1) < 1e-14);
  double diag[3][3] = {{2, 0, 0}, {0, -3, 0}, {0, 0, 2}};
  check_svd(diag, s);
  assert_true(fabs(s[0] - 3) < 1e-14 && fabs(s[1] - 2) < 1e-14 && fabs(s[2] + 2) < 1e-14);
  for (int trial = 0; trial < 2000; trial++) { /* random reflections-with-scale */
    double a[3][3];
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) a[i][j] = uniform();
    if (det3(a) > 0)
      for (int j = 0; j < 3; j++) a[0][j] = -a[0][j];
    check_svd(a, s);
    assert_true(s[2] <= 0.0);
  }
}

static void test_extreme_scales(void **state) {
  double scales[] = {1e-300, 1e-150, 1e-20, 1e20, 1e150, 1e300};
  for (size_t k = 0; k < sizeof scales / sizeof *scales; k++)
    for (int trial = 0; trial < 200; trial++) {
      double a[3][3];
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) a[i][j] = uniform() * scales[k];
      double u[3][3], v[3][3], s[3];
      assert_int_equal(anim_svd3(a, u, s, v), 0);
      assert_rotation(u, "U");
      assert_rotation(v, "V");
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
          double r = u[i][0] * s[0] * v[j][0] + u[i][1] * s[1] * v[j][1] + u[i][2] * s[2] * v[j][2];
          assert_true(fabs(r - a[i][j]) <= TOL_RECONSTRUCT * s[0]);
        }
    }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_nonfinite_is_refused),
      cmocka_unit_test(test_random_matrices),
      cmocka_unit_test(test_symmetric_eigen),
      cmocka_unit_test(test_rank_deficient),
      cmocka_unit_test(test_repeated_values_and_reflections),
      cmocka_unit_test(test_extreme_scales),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
