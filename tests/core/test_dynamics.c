/* test_dynamics.c: second-order dynamics (f, zeta, r): exactness against a
 * fine RK4 of the ODE, step responses, stability for any dt, the derived
 * semi-implicit Euler limit, anticipation, angles across the seam. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <cmocka.h>
#include "anim_error.h"
#include "motion/dynamics.h"

#define PI_D 3.14159265358979323846

static anim_dynamics_params_t params(float f, float zeta, float r) {
  anim_dynamics_params_t p;
  assert_int_equal(anim_dynamics_params_make(&p, f, zeta, r), 0);
  return p;
}

/* RK4 of k2 y'' + k1 y' + y = x + k3 x' with x a line of slope s ending at
 * x_end after dt (n sub-steps). */
static void rk4_step(double *y, double *v, const anim_dynamics_params_t *p, double x_end, double s, double dt, int n) {
  double h = dt / n, x0 = x_end - s * dt;
  for (int i = 0; i < n; i++) {
    double t = h * i;
#define ACC(T, Y, V) ((x0 + s * (T) + p->k3 * s - (Y) - p->k1 * (V)) / p->k2)
    double k1y = *v, k1v = ACC(t, *y, *v);
    double k2y = *v + 0.5 * h * k1v, k2v = ACC(t + 0.5 * h, *y + 0.5 * h * k1y, k2y);
    double k3y = *v + 0.5 * h * k2v, k3v = ACC(t + 0.5 * h, *y + 0.5 * h * k2y, k3y);
    double k4y = *v + h * k3v, k4v = ACC(t + h, *y + h * k3y, k4y);
#undef ACC
    *y += h / 6 * (k1y + 2 * k2y + 2 * k3y + k4y);
    *v += h / 6 * (k1v + 2 * k2v + 2 * k3v + k4v);
  }
}

/* The semi-implicit Euler step of the seed, for checking its stability limit. */
static void euler_step(double *y, double *v, const anim_dynamics_params_t *p, double x, double xd, double dt) {
  *y += dt * *v;
  *v += dt * (x + p->k3 * xd - *y - p->k1 * *v) / p->k2;
}

/* ---- invalid inputs ------------------------------------------------------------- */

static void test_rejects_invalid(void **state) {
  anim_dynamics_params_t p;
  assert_int_equal(anim_dynamics_params_make(NULL, 1, 1, 0), ANIM_EINVAL);
  assert_int_equal(anim_dynamics_params_make(&p, 0, 1, 0), ANIM_EINVAL);
  assert_int_equal(anim_dynamics_params_make(&p, -2, 1, 0), ANIM_EINVAL);
  assert_int_equal(anim_dynamics_params_make(&p, 1, -0.1f, 0), ANIM_EINVAL);
  assert_int_equal(anim_dynamics_params_make(&p, NAN, 1, 0), ANIM_ENONFINITE);
  assert_int_equal(anim_dynamics_params_make(&p, 1, 1, INFINITY), ANIM_ENONFINITE);
  p = params(2, 0.5f, 0);
  anim_dynamics_t s;
  anim_dynamics_reset(&s, 1.0f);
  assert_int_equal(anim_dynamics_update(NULL, &p, 0, 0.1f), ANIM_EINVAL);
  assert_int_equal(anim_dynamics_update(&s, NULL, 0, 0.1f), ANIM_EINVAL);
  assert_int_equal(anim_dynamics_update(&s, &p, 0, -0.1f), ANIM_EINVAL);
  assert_int_equal(anim_dynamics_update(&s, &p, 0, NAN), ANIM_ENONFINITE);
  assert_int_equal(anim_dynamics_update(&s, &p, NAN, 0.1f), ANIM_ENONFINITE);
  assert_int_equal(anim_dynamics_update_with_velocity(&s, &p, 0, INFINITY, 0.1f), ANIM_ENONFINITE);
  anim_dynamics_vec3_t sv;
  anim_dynamics_vec3_reset(&sv, vec3_zero());
  assert_int_equal(anim_dynamics_vec3_update(&sv, &p, vec3_make(0, NAN, 0), 0.1f), ANIM_ENONFINITE);
  anim_dynamics_angle_t sa;
  anim_dynamics_angle_reset(&sa, 0);
  assert_int_equal(anim_dynamics_angle_update(&sa, &p, INFINITY, 0.1f), ANIM_ENONFINITE);
  /* errors leave the state alone; dt = 0 is a no-op */
  assert_true(s.y == 1.0f && s.v == 0.0f && s.x_prev == 1.0f);
  assert_int_equal(anim_dynamics_update(&s, &p, 5.0f, 0.0f), 0);
  assert_true(s.y == 1.0f && s.x_prev == 1.0f);
}

/* ---- exactness -------------------------------------------------------------------- */

static void test_matches_rk4_for_ramped_inputs(void **state) {
  const float cfg[][3] = {{2, 0.3f, 0}, {2, 1, 0}, {1, 2.5f, 0}, {3, 0.5f, 2},
                          {1.5f, 0.5f, -2}, {4, 1.0f, 1}, {1, 0, 0}};
  double worst = 0.0;
  for (int c = 0; c < 7; c++) {
    anim_dynamics_params_t p = params(cfg[c][0], cfg[c][1], cfg[c][2]);
    anim_dynamics_t s;
    anim_dynamics_reset(&s, 0.0f);
    double y = 0, v = 0, x_prev = 0;
    for (int i = 1; i <= 120; i++) {
      float dt = (i % 3 == 0) ? 1.0f / 30.0f : 1.0f / 60.0f; /* uneven frames */
      float x = (i < 40) ? 1.0f : (float)sin(0.1 * i);
      assert_int_equal(anim_dynamics_update(&s, &p, x, dt), 0);
      double sl = ((double)x - x_prev) / dt;
      sl = (float)sl;
      rk4_step(&y, &v, &p, x, sl, dt, 2000);
      x_prev = x;
      double e = fmax(fabs(s.y - y), fabs(s.v - v) / (2 * PI_D * cfg[c][0]));
      if (e > worst) worst = e;
    }
  }
  print_message("exact step vs RK4: worst error %.3g\n", worst);
  assert_true(worst < 1e-4);
}

static void test_step_response_settles(void **state) {
  const float zetas[] = {0.2f, 0.7f, 1.0f, 3.0f};
  for (int z = 0; z < 4; z++) {
    anim_dynamics_params_t p = params(2, zetas[z], 1);
    anim_dynamics_t s;
    anim_dynamics_reset(&s, 0.0f);
    for (int i = 0; i < 60 * 20; i++) assert_int_equal(anim_dynamics_update(&s, &p, 1.0f, 1.0f / 60), 0);
    assert_float_equal(s.y, 1.0f, 1e-4f);
    assert_float_equal(s.v, 0.0f, 1e-3f);
  }
}

static void test_critical_damping_does_not_overshoot(void **state) {
  const float zetas[] = {1.0f, 1.5f};
  for (int z = 0; z < 2; z++) {
    anim_dynamics_params_t p = params(3, zetas[z], 0);
    anim_dynamics_t s;
    anim_dynamics_reset(&s, 0.0f);
    float prev = 0.0f;
    for (int i = 0; i < 600; i++) {
      assert_int_equal(anim_dynamics_update(&s, &p, 1.0f, 1.0f / 60), 0);
      assert_true(s.y <= 1.0f + 1e-6f);
      assert_true(s.y >= prev - 1e-7f); /* monotone */
      prev = s.y;
    }
  }
}

static void test_underdamped_overshoot_matches_analytic(void **state) {
  const float zetas[] = {0.1f, 0.3f, 0.6f};
  for (int z = 0; z < 3; z++) {
    float f = 1.0f, zeta = zetas[z];
    anim_dynamics_params_t p = params(f, zeta, 0);
    anim_dynamics_t s;
    anim_dynamics_reset(&s, 0.0f);
    double w = 2 * PI_D * f, sigma = zeta * w, wd = w * sqrt(1 - zeta * zeta);
    double peak = 0.0, worst = 0.0, dt = 1.0 / 240.0;
    for (int i = 1; i <= 240 * 3; i++) {
      /* a true step: the input velocity is zero (no ramp) */
      assert_int_equal(anim_dynamics_update_with_velocity(&s, &p, 1.0f, 0.0f, (float)dt), 0);
      double t = i * dt;
      double ref = 1.0 - exp(-sigma * t) * (cos(wd * t) + sigma / wd * sin(wd * t));
      worst = fmax(worst, fabs(s.y - ref));
      peak = fmax(peak, s.y);
    }
    double overshoot = exp(-PI_D * zeta / sqrt(1 - zeta * zeta));
    print_message("zeta %.1f: overshoot %.5f (analytic %.5f), worst sample error %.2g\n", zeta, peak - 1.0,
                  overshoot, worst);
    assert_true(worst < 1e-5);
    assert_true(fabs((peak - 1.0) - overshoot) < 1e-3);
  }
}

/* ---- stability ---------------------------------------------------------------------- */

static void test_lag_spikes_stay_bounded(void **state) {
  const float cfg[][3] = {{2, 0.5f, 2}, {5, 0.1f, -2}, {100, 1, 0}, {1, 0, 0}, {10, 3, 1}};
  const float spikes[] = {1.0f, 10.0f};
  for (int c = 0; c < 5; c++)
    for (int k = 0; k < 2; k++) {
      anim_dynamics_params_t p = params(cfg[c][0], cfg[c][1], cfg[c][2]);
      anim_dynamics_t s;
      anim_dynamics_reset(&s, 0.0f);
      float maxabs = 0.0f;
      for (int i = 0; i < 400; i++) {
        float dt = (i == 100) ? spikes[k] : 1.0f / 60;
        float x = (i / 50) % 2 ? 1.0f : -1.0f;
        assert_int_equal(anim_dynamics_update(&s, &p, x, dt), 0);
        assert_true(isfinite(s.y) && isfinite(s.v));
        maxabs = fmaxf(maxabs, fabsf(s.y));
      }
      /* input within [-1, 1]; overshoot and r add at most a few times that */
      assert_true(maxabs < 6.0f);
    }
}

static void test_fast_dynamics_at_low_frame_rate(void **state) {
  /* f = 30 Hz at 60 Hz and f = 100 Hz at 30 Hz: far beyond Euler's limit */
  const float cfg[][2] = {{30, 60}, {100, 30}};
  for (int c = 0; c < 2; c++) {
    anim_dynamics_params_t p = params(cfg[c][0], 0.5f, 1);
    float dt = 1.0f / cfg[c][1];
    assert_true(anim_dynamics_euler_critical_dt(&p) < dt);
    anim_dynamics_t s;
    anim_dynamics_vec3_t sv;
    anim_dynamics_reset(&s, 0.0f);
    anim_dynamics_vec3_reset(&sv, vec3_zero());
    double ey = 0, ev = 0;
    int euler_blew_up = 0;
    for (int i = 0; i < 600; i++) {
      float x = sinf(0.05f * i) + (i > 300 ? 2.0f : 0.0f);
      assert_int_equal(anim_dynamics_update(&s, &p, x, dt), 0);
      assert_int_equal(anim_dynamics_vec3_update(&sv, &p, vec3_make(x, -x, 0), dt), 0);
      assert_true(fabsf(s.y - x) < 1.5f); /* it tracks: f is high */
      assert_float_equal(sv.y.x, s.y, 1e-6f);
      assert_float_equal(sv.y.y, -s.y, 1e-6f);
      euler_step(&ey, &ev, &p, x, 0.0, dt);
      if (!(fabs(ey) < 1e6)) euler_blew_up = 1;
    }
    assert_true(euler_blew_up); /* what the exact step saves us from */
    assert_float_equal(s.y, sinf(0.05f * 599) + 2.0f, 0.2f);
  }
}

static void test_euler_limit_is_the_derived_one(void **state) {
  /* The semi-implicit Euler step decays just below T_crit and grows above. */
  const float cfg[][2] = {{1, 0.5f}, {5, 1}, {2, 0.1f}, {3, 2}, {30, 1}};
  for (int c = 0; c < 5; c++) {
    anim_dynamics_params_t p = params(cfg[c][0], cfg[c][1], 0);
    double tc = anim_dynamics_euler_critical_dt(&p);
    double z = cfg[c][1], expect = (sqrt(1.0 + z * z) - z) / (PI_D * cfg[c][0]);
    if (!(fabs(tc - expect) < 1e-12 * expect)) fail_msg("T_crit %.17g vs %.17g", tc, expect);
    for (int side = 0; side < 2; side++) {
      double dt = tc * (side ? 1.02 : 0.98), y = 1.0, v = 0.0;
      for (int i = 0; i < 20000; i++) euler_step(&y, &v, &p, 0.0, 0.0, dt);
      if (side) assert_true(!(fabs(y) < 1.0)); /* grows, possibly to inf */
      else assert_true(fabs(y) < 1e-2);
    }
  }
}

/* ---- character --------------------------------------------------------------------- */

static void test_negative_r_anticipates(void **state) {
  anim_dynamics_params_t p = params(2, 0.5f, -2);
  anim_dynamics_t s;
  anim_dynamics_reset(&s, 0.0f);
  float lowest = 0.0f;
  for (int i = 0; i < 120; i++) {
    assert_int_equal(anim_dynamics_update(&s, &p, 1.0f, 1.0f / 60), 0);
    lowest = fminf(lowest, s.y);
  }
  print_message("r = -2: undershoot to %.3f before rising\n", lowest);
  assert_true(lowest < -0.05f);
  /* r = 0 eases in without undershoot, r = 2 jumps ahead at once */
  anim_dynamics_params_t p0 = params(2, 0.5f, 0), p2 = params(2, 0.5f, 2);
  anim_dynamics_t s0, s2;
  anim_dynamics_reset(&s0, 0.0f);
  anim_dynamics_reset(&s2, 0.0f);
  assert_int_equal(anim_dynamics_update(&s0, &p0, 1.0f, 1.0f / 60), 0);
  assert_int_equal(anim_dynamics_update(&s2, &p2, 1.0f, 1.0f / 60), 0);
  assert_true(s0.y >= 0.0f && s0.y < s2.y);
}

/* The step keeps its last transition per thread (dynamics.c): two systems
 * stepped in turn, each over its own dt sequence, end on the bits each
 * ends on when stepped alone; a transition kept for the other's f, zeta
 * or dt would change them. */
static void test_interleaved_systems_step_as_alone(void **state) {
  (void)state;
  anim_dynamics_params_t p[3] = {params(2.0f, 0.5f, 1.0f), params(2.0f, 0.7f, 1.0f), params(3.0f, 0.5f, 0.0f)};
  anim_dynamics_t alone[3], together[3];
  for (int s = 0; s < 3; s++) {
    anim_dynamics_reset(&alone[s], 0.0f);
    for (int i = 0; i < 50; i++)
      assert_int_equal(anim_dynamics_update(&alone[s], &p[s], (float)(i % 7), i % 3 ? 1.0f / 60.0f : 1.0f / 30.0f), 0);
    anim_dynamics_reset(&together[s], 0.0f);
  }
  for (int i = 0; i < 50; i++)
    for (int s = 0; s < 3; s++)
      assert_int_equal(anim_dynamics_update(&together[s], &p[s], (float)(i % 7), i % 3 ? 1.0f / 60.0f : 1.0f / 30.0f),
                       0);
  for (int s = 0; s < 3; s++) assert_true(alone[s].y == together[s].y && alone[s].v == together[s].v);
}

static void test_angle_crosses_the_seam_the_short_way(void **state) {
  anim_dynamics_params_t p = params(2, 1, 0);
  anim_dynamics_angle_t s;
  anim_dynamics_angle_reset(&s, 3.0f);
  /* target -3.0 is 0.283 rad away through +pi, 6 rad the long way */
  for (int i = 0; i < 300; i++) {
    assert_int_equal(anim_dynamics_angle_update(&s, &p, -3.0f, 1.0f / 60), 0);
    assert_true(fabsf(s.y) > 2.9f); /* never swings through 0 */
    assert_true(fabsf(s.y) <= (float)PI_D + 1e-6f);
  }
  assert_float_equal(s.y, -3.0f, 1e-4f);
  /* a steadily spinning input across the seam many times: tracked with the
   * lag of a ramp (k1 * rate), velocity the spin rate, no unwinding */
  anim_dynamics_angle_reset(&s, 0.0f);
  float rate = 4.0f, a = 0.0f;
  for (int i = 0; i < 600; i++) {
    a = (float)remainder(a + rate / 60.0f, 2 * PI_D);
    assert_int_equal(anim_dynamics_angle_update(&s, &p, a, 1.0f / 60), 0);
  }
  float lag = (float)remainder(a - s.y, 2 * PI_D);
  assert_float_equal(lag, (float)(p.k1 * rate), 1e-3f);
  assert_float_equal(s.v, rate, 1e-3f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rejects_invalid),
      cmocka_unit_test(test_matches_rk4_for_ramped_inputs),
      cmocka_unit_test(test_step_response_settles),
      cmocka_unit_test(test_critical_damping_does_not_overshoot),
      cmocka_unit_test(test_underdamped_overshoot_matches_analytic),
      cmocka_unit_test(test_lag_spikes_stay_bounded),
      cmocka_unit_test(test_fast_dynamics_at_low_frame_rate),
      cmocka_unit_test(test_euler_limit_is_the_derived_one),
      cmocka_unit_test(test_negative_r_anticipates),
      cmocka_unit_test(test_angle_crosses_the_seam_the_short_way),
      cmocka_unit_test(test_interleaved_systems_step_as_alone),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
