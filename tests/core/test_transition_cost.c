/* test_transition_cost.c: exact and approximate inertialization
 * displacement against a fine numerical integral of |x(t)|. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <cmocka.h>
#include "anim_error.h"
#include "motion/transition_cost.h"

/* Trapezoid of |x(t)| over [0, T] with T = 60 / y (e^-60 is negligible),
 * with the crossing added as a node so the kink is integrated exactly. */
static double numeric_area(double x, double v, double y) {
  double T = 60.0 / y, sum = 0.0;
  const int n = 100000;
  double tc = -x / (v + x * y);
  double prev_t = 0.0, prev_f = fabs(x);
  int crossed = !(tc > 0.0 && tc < T);
  for (int i = 1; i <= n; i++) {
    double t = T * i / n;
    if (!crossed && t > tc) {
      /* node at the crossing: |x| = 0 there */
      sum += 0.5 * (prev_f + 0.0) * (tc - prev_t);
      prev_t = tc, prev_f = 0.0, crossed = 1;
    }
    double f = fabs(exp(-y * t) * (x + (v + x * y) * t));
    sum += 0.5 * (prev_f + f) * (t - prev_t);
    prev_t = t, prev_f = f;
  }
  return sum;
}

/* ---- invalid inputs ------------------------------------------------------------- */

static void test_bones_rejects_bad_arguments(void **state) {
  vec3 p[2] = {{0}}, v[2] = {{0}};
  float c;
  assert_int_equal(anim_transition_cost_bones(NULL, p, v, p, v, 2, 0.1f), ANIM_EINVAL);
  assert_int_equal(anim_transition_cost_bones(&c, NULL, v, p, v, 2, 0.1f), ANIM_EINVAL);
  assert_int_equal(anim_transition_cost_bones(&c, p, v, p, NULL, 2, 0.1f), ANIM_EINVAL);
  assert_int_equal(anim_transition_cost_bones(&c, p, v, p, v, 2, 0.0f), ANIM_EINVAL);
  assert_int_equal(anim_transition_cost_bones(&c, p, v, p, v, 2, NAN), ANIM_EINVAL);
  p[0].x = INFINITY;
  assert_int_equal(anim_transition_cost_bones(&c, p, v, v, v, 2, 0.1f), ANIM_ENONFINITE);
  assert_int_equal(anim_transition_cost_bones(&c, NULL, NULL, NULL, NULL, 0, 0.1f), 0);
  assert_true(c == 0.0f);
}

/* ---- behaviour -------------------------------------------------------------------- */

static void test_exact_matches_numeric_integral(void **state) {
  const float hs[] = {0.05f, 0.15f, 0.6f};
  double worst = 0.0;
  int crossings = 0;
  for (int h = 0; h < 3; h++) {
    double y = halflife_to_damping(hs[h]) / 2.0;
    for (int i = -4; i <= 4; i++)
      for (int j = -6; j <= 6; j++) {
        /* velocities scaled by y so every regime (crossing or not) appears */
        float x = 0.3f * i, v = (float)(0.4 * j * y * 0.5);
        double exact = anim_transition_cost_exact(x, v, hs[h]);
        double num = numeric_area(x, v, y);
        double err = fabs(exact - num) / fmax(num, 1e-6);
        if (err > worst) worst = err;
        if (anim_transition_zero_crossing(x, v, hs[h]) > 0.0f) crossings++;
      }
  }
  print_message("exact vs trapezoid: worst relative error %.3g, %d cases with a crossing\n", worst, crossings);
  assert_true(crossings > 20);
  assert_true(worst < 1e-5);
}

static void test_approx_equals_exact_without_crossing(void **state) {
  for (int i = -5; i <= 5; i++)
    for (int j = -5; j <= 5; j++) {
      float x = 0.2f * i, v = 1.1f * j, h = 0.2f;
      if (anim_transition_zero_crossing(x, v, h) > 0.0f) continue;
      float e = anim_transition_cost_exact(x, v, h), a = anim_transition_cost_approx(x, v, h);
      assert_float_equal(e, a, 1e-6f * (1.0f + e));
    }
}

static void test_approx_never_exceeds_exact(void **state) {
  int strictly_less = 0;
  for (int i = -20; i <= 20; i++)
    for (int j = -20; j <= 20; j++) {
      float x = 0.05f * i, v = 0.7f * j, h = 0.15f;
      float e = anim_transition_cost_exact(x, v, h), a = anim_transition_cost_approx(x, v, h);
      assert_true(a <= e * (1.0f + 1e-6f) + 1e-9f);
      if (a < 0.99f * e) strictly_less++;
    }
  assert_true(strictly_less > 0); /* crossings are underestimated */
}

static void test_feature_difference_is_approx_cost(void **state) {
  vec3 sp = vec3_make(0.1f, 0.9f, -0.3f), sv = vec3_make(1.0f, -0.2f, 0.5f);
  vec3 dp = vec3_make(-0.2f, 0.8f, 0.1f), dv = vec3_make(0.0f, 0.3f, -1.5f);
  float h = 0.15f;
  vec3 d = vec3_sub(anim_transition_feature_vec3(sp, sv, h), anim_transition_feature_vec3(dp, dv, h));
  float from_features = fabsf(d.x) + fabsf(d.y) + fabsf(d.z);
  float direct = anim_transition_cost_approx_vec3(vec3_sub(sp, dp), vec3_sub(sv, dv), h);
  assert_float_equal(from_features, direct, 1e-5f);
}

static void test_vec3_and_bones_sum_components(void **state) {
  vec3 sp[2] = {{0.1f, 0.2f, 0.3f}, {1.0f, 0.0f, -1.0f}}, sv[2] = {{1.0f, -2.0f, 0.0f}, {0.0f, 0.5f, 0.5f}};
  vec3 dp[2] = {{0}}, dv[2] = {{0}};
  float h = 0.2f, c;
  float by_hand = 0.0f;
  for (int i = 0; i < 2; i++) {
    by_hand += anim_transition_cost_exact(sp[i].x, sv[i].x, h) + anim_transition_cost_exact(sp[i].y, sv[i].y, h) +
               anim_transition_cost_exact(sp[i].z, sv[i].z, h);
  }
  assert_int_equal(anim_transition_cost_bones(&c, sp, sv, dp, dv, 2, h), 0);
  assert_float_equal(c, by_hand, 1e-6f);
  assert_float_equal(anim_transition_cost_exact_vec3(sp[0], sv[0], h),
                     anim_transition_cost_exact(0.1f, 1.0f, h) + anim_transition_cost_exact(0.2f, -2.0f, h) +
                         anim_transition_cost_exact(0.3f, 0.0f, h), 1e-6f);
}

static void test_edge_cases(void **state) {
  float h = 0.1f;
  float y = halflife_to_damping(h) / 2.0f;
  /* zero offset with velocity: x(t) = v t e^-yt, area v / y^2 */
  assert_float_equal(anim_transition_cost_exact(0.0f, 2.0f, h), 2.0f / (y * y), 1e-6f);
  /* v + x y = 0: pure exponential, area x / y, no crossing */
  assert_true(anim_transition_zero_crossing(1.0f, -y, h) < 0.0f);
  assert_float_equal(anim_transition_cost_exact(1.0f, -y, h), 1.0f / y, 1e-6f);
  assert_true(anim_transition_cost_exact(0.0f, 0.0f, h) == 0.0f);
  /* symmetric in sign */
  assert_float_equal(anim_transition_cost_exact(0.3f, -5.0f, h), anim_transition_cost_exact(-0.3f, 5.0f, h), 1e-7f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bones_rejects_bad_arguments),
      cmocka_unit_test(test_exact_matches_numeric_integral),
      cmocka_unit_test(test_approx_equals_exact_without_crossing),
      cmocka_unit_test(test_approx_never_exceeds_exact),
      cmocka_unit_test(test_feature_difference_is_approx_cost),
      cmocka_unit_test(test_vec3_and_bones_sum_components),
      cmocka_unit_test(test_edge_cases),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
