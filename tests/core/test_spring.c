/* test_spring.c: Lambert W, exact critically damped springs against RK4,
 * spring tuning (half-life for a fraction, ERP/CFM). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <stdlib.h>
#include <cmocka.h>
#include "anim_error.h"
#include "math/lambertw.h"
#include "motion/spring.h"

#define E_CONST 2.71828182845904523536

/* RK4 on x'' = -2y x' - y^2 x + y^2 g + 2y gv (a critical spring toward goal
 * g moving at gv: g advances with the state), n steps over t. */
static void rk4_spring(double *x, double *v, double g, double gv, double y, double t, int n) {
  double h = t / n;
  for (int i = 0; i < n; i++) {
    double tg = g + gv * h * i;
#define ACC(X, V, G) (-2.0 * y * ((V) - gv) - y * y * ((X) - (G)))
    double k1x = *v, k1v = ACC(*x, *v, tg);
    double k2x = *v + 0.5 * h * k1v, k2v = ACC(*x + 0.5 * h * k1x, k2x, tg + 0.5 * h * gv);
    double k3x = *v + 0.5 * h * k2v, k3v = ACC(*x + 0.5 * h * k2x, k3x, tg + 0.5 * h * gv);
    double k4x = *v + h * k3v, k4v = ACC(*x + h * k3x, k4x, tg + h * gv);
#undef ACC
    *x += h / 6.0 * (k1x + 2 * k2x + 2 * k3x + k4x);
    *v += h / 6.0 * (k1v + 2 * k2v + 2 * k3v + k4v);
  }
}

static double y_of(double halflife) { return halflife_to_damping((float)halflife) / 2.0; }

/* ---- invalid inputs ------------------------------------------------------------- */

static void test_lambertw_domain_errors(void **state) {
  double w;
  assert_int_equal(anim_lambertw0(-0.5, &w), ANIM_EINVAL);
  assert_int_equal(anim_lambertw0(NAN, &w), ANIM_ENONFINITE);
  assert_int_equal(anim_lambertw0(INFINITY, &w), ANIM_ENONFINITE);
  assert_int_equal(anim_lambertwm1(0.0, &w), ANIM_EINVAL);
  assert_int_equal(anim_lambertwm1(0.1, &w), ANIM_EINVAL);
  assert_int_equal(anim_lambertwm1(-0.4, &w), ANIM_EINVAL);
  assert_int_equal(anim_lambertwm1(NAN, &w), ANIM_ENONFINITE);
}

static void test_tuning_rejects_bad_arguments(void **state) {
  double h, k, c;
  assert_int_equal(anim_spring_halflife_reaching(&h, 0.0, 1.0), ANIM_EINVAL);
  assert_int_equal(anim_spring_halflife_reaching(&h, 1.0, 1.0), ANIM_EINVAL);
  assert_int_equal(anim_spring_halflife_reaching(&h, -0.5, 1.0), ANIM_EINVAL);
  assert_int_equal(anim_spring_halflife_reaching(&h, 0.5, 0.0), ANIM_EINVAL);
  assert_int_equal(anim_spring_halflife_reaching(&h, NAN, 1.0), ANIM_ENONFINITE);
  assert_int_equal(anim_spring_time_reaching(&h, 0.5, -1.0), ANIM_EINVAL);
  assert_int_equal(anim_spring_halflife_reaching_with_velocity(&h, 0.0, 1.0, 0.5, 1.0), ANIM_EINVAL);
  assert_int_equal(anim_spring_halflife_reaching_with_velocity(&h, 1.0, INFINITY, 0.5, 1.0), ANIM_ENONFINITE);
  /* b = v0 t / x0 = -3 < ln(0.5): the velocity overshoots zero so far that no
   * damping brings x back to +0.5 x0 at t. */
  assert_int_equal(anim_spring_halflife_reaching_with_velocity(&h, 1.0, -3.0, 0.5, 1.0), ANIM_ERANGE);
  assert_int_equal(anim_spring_critical_gains(&k, &c, 0.0, 1.0), ANIM_EINVAL);
  assert_int_equal(anim_spring_critical_gains(&k, &c, 0.1, -1.0), ANIM_EINVAL);
  assert_int_equal(anim_spring_implicit_to_erp_cfm(&k, &c, -1.0, 1.0, 0.01), ANIM_EINVAL);
  assert_int_equal(anim_spring_implicit_to_erp_cfm(&k, &c, 0.0, 0.0, 0.01), ANIM_EINVAL);
  assert_int_equal(anim_spring_implicit_to_erp_cfm(&k, &c, 1.0, 1.0, 0.0), ANIM_EINVAL);
  assert_int_equal(anim_spring_erp_cfm_to_implicit(&k, &c, 1.5, 1e-5, 0.01), ANIM_EINVAL);
  assert_int_equal(anim_spring_erp_cfm_to_implicit(&k, &c, 0.2, 0.0, 0.01), ANIM_EINVAL);
  assert_int_equal(anim_spring_erp_cfm_to_implicit(&k, &c, 0.2, NAN, 0.01), ANIM_ENONFINITE);
}

/* ---- Lambert W ---------------------------------------------------------------- */

static void test_lambertw_known_values(void **state) {
  double w;
  assert_int_equal(anim_lambertw0(1.0, &w), 0);
  assert_true(fabs(w - 0.5671432904097838) < 1e-15);
  assert_int_equal(anim_lambertw0(E_CONST, &w), 0);
  assert_true(fabs(w - 1.0) < 1e-15);
  assert_int_equal(anim_lambertw0(0.0, &w), 0);
  assert_true(w == 0.0);
  assert_int_equal(anim_lambertwm1(-0.1, &w), 0);
  assert_true(fabs(w - -3.577152063957297) < 1e-14);
  assert_int_equal(anim_lambertw0(-1.0 / E_CONST, &w), 0);
  assert_true(fabs(w + 1.0) < 1e-7);
  assert_int_equal(anim_lambertwm1(-1.0 / E_CONST, &w), 0);
  assert_true(fabs(w + 1.0) < 1e-7);
  /* W0(-0.1) = -0.11183255915896297, W0(10) = 1.7455280027406994 */
  assert_int_equal(anim_lambertw0(-0.1, &w), 0);
  assert_true(fabs(w - -0.11183255915896297) < 1e-15);
  assert_int_equal(anim_lambertw0(10.0, &w), 0);
  assert_true(fabs(w - 1.7455280027406994) < 1e-14);
}

static void test_lambertw_identity_sweep(void **state) {
  double worst = 0.0;
  /* W0 over [-1/e, 1e300] on a log-ish grid, W-1 over [-1/e, -1e-300). */
  for (int i = 0; i <= 4000; i++) {
    double s = i / 4000.0, x0, xm, w;
    x0 = -1.0 / E_CONST + (s < 0.5 ? s * 2.0 * (1.0 / E_CONST + 1.0) : pow(10.0, (s - 0.5) * 600.0));
    xm = -1.0 / E_CONST * (s < 0.5 ? 1.0 - s * 1.9 : pow(10.0, -(s - 0.5) * 598.0) * 0.05);
    assert_int_equal(anim_lambertw0(x0, &w), 0);
    assert_true(w >= -1.0);
    double r = fabs(w * exp(w) - x0) / fmax(fabs(x0), 1e-300);
    if (r > worst) worst = r;
    assert_int_equal(anim_lambertwm1(xm, &w), 0);
    assert_true(w <= -1.0);
    r = fabs(w * exp(w) - xm) / fabs(xm);
    if (r > worst) worst = r;
  }
  print_message("lambertw: worst relative residual of w e^w = x: %.3g\n", worst);
  assert_true(worst < 1e-12);
}

static void test_lambertw_is_accurate_in_w(void **state) {
  /* Compare against w recovered from x = w e^w on a grid of exact w. */
  for (int i = 0; i < 400; i++) {
    double w0 = -0.999 + i * 0.05, wm = -1.001 - i * 0.5, w;
    assert_int_equal(anim_lambertw0(w0 * exp(w0), &w), 0);
    assert_true(fabs(w - w0) < 1e-12 * fmax(1.0, fabs(w0)) * 100.0);
    assert_int_equal(anim_lambertwm1(wm * exp(wm), &w), 0);
    assert_true(fabs(w - wm) < 1e-12 * fabs(wm) * 100.0);
  }
}

/* ---- exact decay ---------------------------------------------------------------- */

static void test_conversions_roundtrip(void **state) {
  float h = 0.2f;
  float k = anim_spring_halflife_to_stiffness(h);
  float d = halflife_to_damping(h);
  assert_float_equal(k, d * d / 4.0f, 1e-3f);
  assert_float_equal(anim_spring_stiffness_to_halflife(k), h, 1e-6f);
  assert_float_equal(anim_spring_stiffness_to_damping(anim_spring_damping_to_stiffness(d)), d, 1e-5f);
}

static void test_decay_matches_rk4(void **state) {
  const float xs[] = {1.0f, -0.5f, 0.0f, 2.0f};
  const float vs[] = {0.0f, 3.0f, -4.0f, -10.0f};
  const float hs[] = {0.05f, 0.2f, 1.0f};
  const float ts[] = {0.0f, 0.001f, 0.016f, 0.1f, 0.5f, 2.0f, 7.0f};
  double worst = 0.0;
  for (int i = 0; i < 4; i++)
    for (int h = 0; h < 3; h++)
      for (int t = 0; t < 7; t++) {
        float x = xs[i], v = vs[i];
        anim_spring_decay(&x, &v, hs[h], ts[t]);
        double rx = xs[i], rv = vs[i];
        rk4_spring(&rx, &rv, 0.0, 0.0, y_of(hs[h]), ts[t], 20000);
        double ex = fabs(x - rx), ev = fabs(v - rv) * hs[h]; /* velocity scaled to units of x */
        if (ex > worst) worst = ex;
        if (ev > worst) worst = ev;
      }
  print_message("decay vs RK4: worst error %.3g\n", worst);
  assert_true(worst < 1e-5);
}

static void test_decay_steps_compose(void **state) {
  /* Exactness means many small steps equal one big one. */
  float x1 = 1.5f, v1 = -2.0f, x2 = x1, v2 = v1;
  for (int i = 0; i < 60; i++) anim_spring_decay(&x1, &v1, 0.15f, 1.0f / 60.0f);
  anim_spring_decay(&x2, &v2, 0.15f, 1.0f);
  assert_float_equal(x1, x2, 1e-5f);
  assert_float_equal(v1, v2, 1e-5f);
  /* The half-life convention (halflife_to_damping): y = 2 ln2 / halflife, so
   * the envelope e^-yt halves every halflife / 2; v = -y x cancels the t term. */
  float x = 1.0f, v = -(float)y_of(0.3);
  anim_spring_decay(&x, &v, 0.3f, 0.15f);
  assert_float_equal(x, 0.5f, 1e-5f);
  /* released at rest, one half-life leaves (1 + 2 ln2) / 4 of the offset */
  x = 1.0f, v = 0.0f;
  anim_spring_decay(&x, &v, 0.3f, 0.3f);
  assert_float_equal(x, (1.0f + 2.0f * ANIM_LN2) / 4.0f, 1e-5f);
}

/* The decays keep their last exponentials per thread (spring.c): decays
 * with 24 half-lives and 3 time steps, interleaved so the kept answers are
 * overwritten and their slots shared, give the bits of the decay's formula
 * with exp computed afresh (the same double arithmetic as decay_axis). A
 * kept answer returned for another argument would differ. */
static void test_kept_exponentials_are_the_arguments_own(void **state) {
  (void)state;
  const float dts[] = {1.0f / 60.0f, 1.0f / 3.0f, 0.05f};
  for (int round = 0; round < 3; round++)
    for (int i = 0; i < 24 * 3; i++) {
      float halflife = 0.05f + 0.037f * (float)(i % 24), dt = dts[(i / 24 + round) % 3];
      float x = 0.7f - 0.01f * (float)i, v = 1.3f + 0.02f * (float)round;
      double y = 2.0 * 0.69314718055994530942 / ((double)halflife + 1e-8), e = exp(-y * (double)dt);
      double j1 = (double)v + (double)x * y;
      float want_x = (float)(e * ((double)x + j1 * (double)dt)),
            want_v = (float)(e * ((double)v - j1 * y * (double)dt));
      anim_spring_decay(&x, &v, halflife, dt);
      assert_true(x == want_x && v == want_v);
    }
}

static void test_decay_vec3_and_huge_dt(void **state) {
  vec3 x = vec3_make(1.0f, -2.0f, 3.0f), v = vec3_make(0.5f, 0.0f, -1.0f);
  float sx = 1.0f, sv = 0.5f;
  anim_spring_decay_vec3(&x, &v, 0.1f, 0.25f);
  anim_spring_decay(&sx, &sv, 0.1f, 0.25f);
  assert_float_equal(x.x, sx, 1e-7f);
  assert_float_equal(v.x, sv, 1e-7f);
  anim_spring_decay_vec3(&x, &v, 0.1f, 1e6f);
  assert_true(x.x == 0.0f && x.y == 0.0f && v.z == 0.0f);
  /* halflife 0 snaps instead of producing NaN */
  float a = 1.0f, b = 1.0f;
  anim_spring_decay(&a, &b, 0.0f, 0.016f);
  assert_true(isfinite(a) && isfinite(b) && fabsf(a) < 1e-6f);
}

static void test_decay_quat_double_cover(void **state) {
  quat q = quat_from_angle_axis(2.5f, vec3_make(0.0f, 0.6f, 0.8f));
  quat qa = q, qb = quat_neg(q);
  vec3 wa = vec3_make(1.0f, 0.0f, 0.0f), wb = wa;
  anim_spring_decay_quat(&qa, &wa, 0.2f, 0.1f);
  anim_spring_decay_quat(&qb, &wb, 0.2f, 0.1f);
  assert_float_equal(fabsf(quat_dot(qa, qb)), 1.0f, 1e-6f);
  assert_float_equal(wa.x, wb.x, 1e-6f);
  /* the same as decaying the rotation vector */
  vec3 r = quat_to_scaled_angle_axis(q), w = vec3_make(1.0f, 0.0f, 0.0f);
  anim_spring_decay_vec3(&r, &w, 0.2f, 0.1f);
  quat qr = quat_from_scaled_angle_axis(r);
  assert_float_equal(fabsf(quat_dot(qa, qr)), 1.0f, 1e-6f);
  /* -q would be a 2pi - 2.5 rotation the long way; it must not be. */
  float angle = vec3_length(quat_to_scaled_angle_axis(quat_abs(qb)));
  assert_true(angle < 2.5f);
  /* In a pose's lanes too, to the bit: q and -q take the same path (a
   * flip that missed would send -q the scalar way, a rounding apart). */
  enum { N = 19 };
  quat pa[N], pb[N];
  vec3 va[N], vb[N];
  for (int i = 0; i < N; i++) {
    pa[i] = quat_from_angle_axis(0.05f * (float)(i + 1), vec3_normalize(vec3_make(1.0f, (float)i, 2.0f)));
    pb[i] = i % 2 ? quat_neg(pa[i]) : pa[i];
    va[i] = vb[i] = vec3_make(0.3f * (float)i, -1.0f, 0.5f);
  }
  anim_spring_decayer_t d;
  anim_spring_decayer_make(&d, 0.2f, 1.0f / 60.0f);
  anim_spring_decayer_quats(&d, pa, va, N);
  anim_spring_decayer_quats(&d, pb, vb, N);
  assert_memory_equal(pa, pb, sizeof pa);
  assert_memory_equal(va, vb, sizeof va);
}

/* The tick's rotation decay (log and exp maps as series, spring.c) against
 * the exact maps it replaces, over offsets from 0 to 180 degrees (both
 * series' domain ends and past them), random axes and angular velocities,
 * and the inertializer's half-lives and steps. Names the worst case. */
#define DECAY_QUAT_TOLERANCE 2e-6f
static void test_decay_quat_series_matches_exact_maps(void **state) {
  unsigned seed = 9;
  float worst = 0.0f, worst_angle = 0.0f;
  int worst_case = -1;
  static const float halflives[3] = {0.05f, 0.1f, 0.3f}, steps[3] = {1.0f / 60.0f, 1.0f / 30.0f, 0.1f};
  for (int i = 0; i < 20000; i++) {
    float u1 = (float)rand_r(&seed) / (float)RAND_MAX, u2 = (float)rand_r(&seed) / (float)RAND_MAX;
    float u3 = (float)rand_r(&seed) / (float)RAND_MAX;
    /* Angles spread over [0, pi], denser near 0 where offsets live, and the series' edges exactly. */
    float angle = i % 4 == 0 ? 3.14159265f * u1
                             : (i % 4 == 1 ? 0.1f * u1
                                           : (i % 4 == 2 ? 2.0f * acosf(0.7f) + 0.02f * (u1 - 0.5f) : 1e-4f * u1));
    vec3 axis = vec3_normalize(vec3_make(u1 - 0.5f, u2 - 0.5f, u3 - 0.4f));
    quat q = quat_from_angle_axis(angle, axis);
    if (i % 3 == 0) q = quat_neg(q); /* the double cover */
    vec3 w = vec3_make(20.0f * (u2 - 0.5f), 10.0f * (u3 - 0.5f), 5.0f * (u1 - 0.5f));
    anim_spring_decayer_t d;
    anim_spring_decayer_make(&d, halflives[i % 3], steps[(i / 3) % 3]);
    quat got_q = q;
    vec3 got_w = w;
    /* One at a time, or as offset i % 19 of a pose of 19 (two whole groups
     * of vector lanes and a padded tail). */
    if (i % 2) {
      anim_spring_decayer_quat(&d, &got_q, &got_w);
    } else {
      quat pose_q[19];
      vec3 pose_w[19];
      for (int b = 0; b < 19; b++) pose_q[b] = quat_identity(), pose_w[b] = vec3_zero();
      pose_q[i % 19] = q, pose_w[i % 19] = w;
      anim_spring_decayer_quats(&d, pose_q, pose_w, 19);
      got_q = pose_q[i % 19], got_w = pose_w[i % 19];
    }
    vec3 r = quat_to_scaled_angle_axis(quat_abs(q)), ref_w = w;
    anim_spring_decayer_vec3(&d, &r, &ref_w);
    quat ref_q = quat_from_scaled_angle_axis(r);
    float err = 1.0f - fabsf(quat_dot(got_q, ref_q));
    float dq = sqrtf(2.0f * fmaxf(err, 0.0f)); /* ~ half the angle between them */
    float e = fmaxf(fmaxf(fabsf(got_q.w - ref_q.w), fabsf(got_q.x - ref_q.x)),
                    fmaxf(fabsf(got_q.y - ref_q.y), fabsf(got_q.z - ref_q.z)));
    e = fmaxf(fminf(e, dq), vec3_length(vec3_sub(got_w, ref_w)) / fmaxf(1.0f, vec3_length(ref_w)));
    assert_float_equal(quat_dot(got_q, got_q), 1.0f, 1e-5f);
    if (e > worst) worst = e, worst_angle = angle, worst_case = i;
  }
  if (worst > DECAY_QUAT_TOLERANCE)
    fail_msg("case %d (offset %.4f rad): %.3g from the exact maps (tolerance %.1g)", worst_case, worst_angle, worst,
             DECAY_QUAT_TOLERANCE);
  print_message("rotation decay: worst %.3g from the exact maps (case %d, offset %.4f rad)\n", worst, worst_case,
                worst_angle);
}

/* Per-offset decayers: each offset of a pose decays exactly as it would
 * with its own decayer alone (the vector path mixes decayers across
 * lanes), including the padded tail and offsets outside the series. */
static void test_decayers_per_offset(void **state) {
  anim_spring_decayer_t d[3];
  anim_spring_decayer_make(&d[0], 0.2f, 1.0f / 60.0f);
  anim_spring_decayer_make(&d[1], 0.05f, 1.0f / 60.0f);
  anim_spring_decayer_make(&d[2], 0.6f, 1.0f / 30.0f);
  enum { N = 23 };
  quat q[N], ref_q[N];
  vec3 w[N], ref_w[N];
  uint8_t which[N];
  for (int i = 0; i < N; i++) {
    float angle = i == 5 ? 3.0f : 0.05f * (float)(i + 1); /* one far outside the series */
    q[i] = quat_from_angle_axis(angle, vec3_normalize(vec3_make(1.0f, (float)(i % 3), -0.5f * (float)i)));
    w[i] = vec3_make(0.3f * (float)i, -1.0f, 0.1f);
    which[i] = (uint8_t)((i * 7) % 3);
    ref_q[i] = q[i], ref_w[i] = w[i];
    anim_spring_decayer_quat(&d[which[i]], &ref_q[i], &ref_w[i]);
  }
  anim_spring_decayers_quats(d, which, q, w, N);
  for (int i = 0; i < N; i++) {
    float e = 1.0f - fabsf(quat_dot(q[i], ref_q[i]));
    if (e > 1e-6f || vec3_length(vec3_sub(w[i], ref_w[i])) > 1e-4f * fmaxf(1.0f, vec3_length(ref_w[i])))
      fail_msg("offset %d (decayer %d): %g from its own decay", i, which[i], (double)e);
  }
}

static void test_simple_and_track_match_rk4(void **state) {
  float x = 0.0f, v = 1.0f;
  anim_spring_simple(&x, &v, 2.0f, 0.25f, 0.4f);
  double rx = 0.0, rv = 1.0;
  rk4_spring(&rx, &rv, 2.0, 0.0, y_of(0.25), 0.4, 20000);
  assert_float_equal(x, rx, 1e-5);
  assert_float_equal(v, rv, 1e-5);

  float tx = 0.0f, tv = 0.0f;
  anim_spring_track(&tx, &tv, 1.0f, 3.0f, 0.25f, 0.7f);
  rx = 0.0, rv = 0.0;
  rk4_spring(&rx, &rv, 1.0, 3.0, y_of(0.25), 0.7, 20000);
  assert_float_equal(tx, rx, 1e-5);
  assert_float_equal(tv, rv, 1e-5);

  vec3 px = vec3_zero(), pv = vec3_zero();
  anim_spring_track_vec3(&px, &pv, vec3_make(1.0f, 0, 0), vec3_make(3.0f, 0, 0), 0.25f, 0.7f);
  assert_float_equal(px.x, tx, 1e-6);
  vec3 sx = vec3_zero(), sv = vec3_make(0, 1.0f, 0);
  anim_spring_simple_vec3(&sx, &sv, vec3_make(0, 2.0f, 0), 0.25f, 0.4f);
  assert_float_equal(sx.y, x, 1e-6);
  /* tracking a goal for long ends on it, moving with it */
  anim_spring_track(&tx, &tv, 5.0f, 3.0f, 0.25f, 20.0f);
  assert_float_equal(tx, 65.0f, 1e-3);
  assert_float_equal(tv, 3.0f, 1e-4);
}

static void test_character_spring_integrates_velocity(void **state) {
  /* RK4 on v' = a, a' = -2y a - y^2 (v - vg), x' = v. */
  double y = y_of(0.3), h = 1e-4, x = 0, v = 1, a = 0, vg = 4;
  for (int i = 0; i < 10000; i++) {
    double k1x = v, k1v = a, k1a = -2 * y * a - y * y * (v - vg);
    double k2x = v + 0.5 * h * k1v, k2v = a + 0.5 * h * k1a, k2a = -2 * y * k2v - y * y * (k2x - vg);
    double k3x = v + 0.5 * h * k2v, k3v = a + 0.5 * h * k2a, k3a = -2 * y * k3v - y * y * (k3x - vg);
    double k4x = v + h * k3v, k4v = a + h * k3a, k4a = -2 * y * k4v - y * y * (k4x - vg);
    x += h / 6 * (k1x + 2 * k2x + 2 * k3x + k4x);
    v += h / 6 * (k1v + 2 * k2v + 2 * k3v + k4v);
    a += h / 6 * (k1a + 2 * k2a + 2 * k3a + k4a);
  }
  vec3 px = vec3_zero(), pv = vec3_make(1, 0, 0), pa = vec3_zero();
  anim_spring_character_vec3(&px, &pv, &pa, vec3_make(4, 0, 0), 0.3f, 1.0f);
  assert_float_equal(px.x, x, 1e-5);
  assert_float_equal(pv.x, v, 1e-5);
  assert_float_equal(pa.x, a, 1e-5);
}

/* ---- tuning ------------------------------------------------------------------- */

static void test_halflife_reaching_fraction(void **state) {
  const double alphas[] = {0.9, 0.5, 0.1, 0.01, 1e-6};
  const double ts[] = {0.05, 0.5, 3.0};
  for (int i = 0; i < 5; i++)
    for (int j = 0; j < 3; j++) {
      double h, t2;
      assert_int_equal(anim_spring_halflife_reaching(&h, alphas[i], ts[j]), 0);
      double y = 2.0 * 0.69314718055994530942 / h, x = 1.0, v = 0.0;
      assert_true(fabs(exp(-y * ts[j]) * (1 + y * ts[j]) - alphas[i]) < 1e-12);
      rk4_spring(&x, &v, 0.0, 0.0, y, ts[j], 20000);
      assert_true(fabs(x - alphas[i]) < 1e-9);
      assert_int_equal(anim_spring_time_reaching(&t2, alphas[i], h), 0);
      assert_true(fabs(t2 - ts[j]) < 1e-12 * ts[j] * 10);
    }
}

static void test_halflife_reaching_with_velocity(void **state) {
  const double vs[] = {-1.5, -0.6, 0.0, 0.7, 5.0};
  const double alphas[] = {0.05, 0.3, 0.8};
  for (int i = 0; i < 5; i++)
    for (int a = 0; a < 3; a++)
      for (int s = -1; s <= 1; s += 2) {
        double x0 = 2.0 * s, v0 = vs[i] * s, t = 1.0, h;
        int rc = anim_spring_halflife_reaching_with_velocity(&h, x0, v0, alphas[a], t);
        double b = v0 * t / x0;
        if (alphas[a] > exp(b)) {
          assert_int_equal(rc, ANIM_ERANGE);
          continue;
        }
        assert_int_equal(rc, 0);
        double y = 2.0 * 0.69314718055994530942 / h, x = x0, v = v0;
        rk4_spring(&x, &v, 0.0, 0.0, y, t, 20000);
        assert_true(fabs(x - alphas[a] * x0) < 1e-8);
      }
  /* v0 = 0 agrees with the plain version */
  double h1, h2;
  assert_int_equal(anim_spring_halflife_reaching(&h1, 0.2, 0.4), 0);
  assert_int_equal(anim_spring_halflife_reaching_with_velocity(&h2, -3.0, 0.0, 0.2, 0.4), 0);
  assert_true(fabs(h1 - h2) < 1e-12);
}

static void test_critical_gains(void **state) {
  double k, c;
  assert_int_equal(anim_spring_critical_gains(&k, &c, 0.2, 3.0), 0);
  double y = 2.0 * 0.69314718055994530942 / 0.2;
  assert_true(fabs(k - 3.0 * y * y) < 1e-9 * k);
  /* critical damping c = 2 sqrt(m k) (the seed's 1 / (2 sqrt(m k)) is wrong) */
  assert_true(fabs(c - 2.0 * sqrt(3.0 * k)) < 1e-9 * c);
}

static void test_erp_cfm_roundtrip_and_seed_numbers(void **state) {
  double erp, cfm, k, c;
  assert_int_equal(anim_spring_erp_cfm_to_implicit(&k, &c, 0.2, 1e-5, 1.0 / 60.0), 0);
  assert_true(fabs(k - 1.2e6) < 1e-3 && fabs(c - 8e4) < 1e-6);
  assert_int_equal(anim_spring_implicit_to_erp_cfm(&erp, &cfm, k, c, 1.0 / 60.0), 0);
  assert_true(fabs(erp - 0.2) < 1e-14 && fabs(cfm - 1e-5) < 1e-18);
  /* k = 1e6, critically damped unit mass: ERP ~ 0.8928, CFM ~ 5.357e-5 */
  assert_int_equal(anim_spring_implicit_to_erp_cfm(&erp, &cfm, 1e6, 2.0 * sqrt(1e6), 1.0 / 60.0), 0);
  assert_true(fabs(erp - 0.892857) < 1e-6 && fabs(cfm - 5.357143e-5) < 1e-10);
  /* one soft-constraint step from x = 1 at rest: v = -11.992804, x = 0.8001199 */
  double x = 1.0, v = 0.0;
  anim_spring_erp_cfm_step(&x, &v, 0.2, 1e-5, 1.0, 1.0 / 60.0);
  assert_true(fabs(v - -11.992804) < 1e-6 && fabs(x - 0.8001199) < 1e-7);
}

static void test_erp_cfm_step_is_implicit_euler(void **state) {
  const double ks[] = {0.0, 10.0, 1e4}, cs[] = {0.0, 3.0, 500.0}, ms[] = {0.1, 1.0, 80.0};
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      for (int m = 0; m < 3; m++) {
        double dt = 1.0 / 30.0, erp, cfm;
        if (ks[i] == 0.0 && cs[j] == 0.0) continue;
        assert_int_equal(anim_spring_implicit_to_erp_cfm(&erp, &cfm, ks[i], cs[j], dt), 0);
        double x = 0.7, v = -1.3, ix = x, iv = v;
        for (int s = 0; s < 50; s++) {
          anim_spring_erp_cfm_step(&x, &v, erp, cfm, ms[m], dt);
          /* backward Euler solved directly: (m + dt c + dt^2 k) v1 = m v0 - dt k x0 */
          iv = (ms[m] * iv - dt * ks[i] * ix) / (ms[m] + dt * cs[j] + dt * dt * ks[i]);
          ix += dt * iv;
          /* and it satisfies the implicit spring equation */
        }
        assert_true(fabs(x - ix) < 1e-9 * (1 + fabs(ix)));
        assert_true(fabs(v - iv) < 1e-9 * (1 + fabs(iv)));
      }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_lambertw_domain_errors),
      cmocka_unit_test(test_tuning_rejects_bad_arguments),
      cmocka_unit_test(test_lambertw_known_values),
      cmocka_unit_test(test_lambertw_identity_sweep),
      cmocka_unit_test(test_lambertw_is_accurate_in_w),
      cmocka_unit_test(test_conversions_roundtrip),
      cmocka_unit_test(test_decay_matches_rk4),
      cmocka_unit_test(test_decay_steps_compose),
      cmocka_unit_test(test_kept_exponentials_are_the_arguments_own),
      cmocka_unit_test(test_decay_vec3_and_huge_dt),
      cmocka_unit_test(test_decay_quat_double_cover),
      cmocka_unit_test(test_decay_quat_series_matches_exact_maps),
      cmocka_unit_test(test_simple_and_track_match_rk4),
      cmocka_unit_test(test_character_spring_integrates_velocity),
      cmocka_unit_test(test_halflife_reaching_fraction),
      cmocka_unit_test(test_halflife_reaching_with_velocity),
      cmocka_unit_test(test_decayers_per_offset),
      cmocka_unit_test(test_critical_gains),
      cmocka_unit_test(test_erp_cfm_roundtrip_and_seed_numbers),
      cmocka_unit_test(test_erp_cfm_step_is_implicit_euler),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
