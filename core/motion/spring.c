/*
 * spring.c: exact critically damped springs and their tuning.
 *
 * The decays are evaluated in double (the exponential and the (v + y x) t
 * products lose little that way) and stored back in float. The tuning
 * formulas were re-derived here; the spring-tuning note in the seeds has
 * k_p = (...)^2 t^2 m where it must be m (.../t)^2 (u = y t, so y = u / t),
 * and k_d = 1 / (2 sqrt(m k_p)) where critical damping is k_d = 2 sqrt(m k_p).
 * Its ERP/CFM formulas and their inverse are right.
 */
#include <math.h>

#include "anim_error.h"
#include "math/lambertw.h"
#include "math/lanes.h"
#include "motion/spring.h"

#define LN2 0.69314718055994530942
#define INV_E 0.36787944117144232160

/* Half-damping y (1/s) of the critically damped spring with this half-life;
 * the same small epsilon as halflife_to_damping so halflife 0 snaps. */
static double halflife_to_y(double halflife) { return 2.0 * LN2 / (halflife + 1e-8); }
static double y_to_halflife(double y) { return 2.0 * LN2 / y; }

/* exp(-y dt), the decays' one transcendental. Not memoized: a per-thread
 * memo by argument saved about 1 ns of glibc's exp a call, 0.4% of a
 * controller's tick, not worth hidden state. */
static double decay_exp(double y, double dt) { return exp(-y * dt); }

/* The exact decay of one dimension, with e = exp(-y dt) shared by callers. */
static void decay_axis(float *io_x, float *io_v, double y, double e, double dt) {
  double x = *io_x, v = *io_v;
  double j1 = v + x * y;
  *io_x = (float)(e * (x + j1 * dt));
  *io_v = (float)(e * (v - j1 * y * dt));
}

void anim_spring_decay(float *io_x, float *io_v, float halflife, float dt) {
  double y = halflife_to_y(halflife);
  decay_axis(io_x, io_v, y, decay_exp(y, dt), dt);
}

/* decay_axis written as a matrix: x' = e ((1 + y dt) x + dt v),
 * v' = e (-y^2 dt x + (1 - y dt) v), the same in double to a few ulps, in a
 * loop with no dependency from one value to the next (it vectorizes). */
void anim_spring_decayer_make(anim_spring_decayer_t *out, float halflife, float dt) {
  double y = halflife_to_y(halflife), e = decay_exp(y, dt);
  out->y = y, out->e = e, out->dt = dt;
  out->xx = e * (1.0 + y * dt), out->xv = e * dt;
  out->vx = -e * y * y * dt, out->vv = e * (1.0 - y * dt);
  out->xx_f = (float)out->xx, out->xv_f = (float)out->xv, out->vx_f = (float)out->vx, out->vv_f = (float)out->vv;
}


void anim_spring_decayer_vec3(const anim_spring_decayer_t *d, vec3 *io_x, vec3 *io_v) {
  decay_axis(&io_x->x, &io_v->x, d->y, d->e, d->dt);
  decay_axis(&io_x->y, &io_v->y, d->y, d->e, d->dt);
  decay_axis(&io_x->z, &io_v->z, d->y, d->e, d->dt);
}

static inline void decay_pair(const anim_spring_decayer_t *d, float *io_x, float *io_v) {
  double x = *io_x, v = *io_v;
  *io_x = (float)(d->xx * x + d->xv * v);
  *io_v = (float)(d->vx * x + d->vv * v);
}

void anim_spring_decayer_floats(const anim_spring_decayer_t *d, float *io_x, float *io_v, size_t n) {
  for (size_t i = 0; i < n; i++) decay_pair(d, &io_x[i], &io_v[i]);
}

/* The log map of a unit quaternion (c, v) = (cos phi, sin phi u), phi in
 * [0, pi/2] (the short way), without atan2: r = 2 phi u = 2 (phi / sin phi) v,
 * and phi / sin phi = acos(c) / sqrt(1 - c^2) is, in t = 1 - c, the series
 * sum_k a_k t^k with a_0 = 1, a_k = a_{k-1} k / (2k + 1) (1, 1/3, 2/15, 2/35,
 * 8/315, ...: sympy's series of acos(1 - t) / sqrt(t (2 - t)), radius 2).
 * Up to t = LOG_SERIES_MAX_T (phi 72.5 degrees, a 145-degree offset) the
 * terms through t^8 leave a relative error under 1.2e-8 (mpmath), below a
 * float's rounding; larger offsets take the exact map. */
#define LOG_SERIES_MAX_T 0.3f
/* Horner, unrolled: a chain of eight multiply-adds per bone, which the bones
 * of a pose overlap. A macro, so that the scalar path and the vector one
 * (decay_quat_lanes, t a vector) evaluate the one series in the same order. */
#define PHI_OVER_SIN_PHI(t)                                                                                          \
  ((((((((128.0f / 109395.0f * (t) + 16.0f / 6435.0f) * (t) + 16.0f / 3003.0f) * (t) + 8.0f / 693.0f) * (t) +         \
       8.0f / 315.0f) * (t) + 2.0f / 35.0f) * (t) + 2.0f / 15.0f) * (t) + 1.0f / 3.0f) * (t) + 1.0f)

/* The exp map's two factors as series in p = phi^2 (no square root, no
 * trigonometry): cos phi = sum (-p)^k / (2k)! and sin phi / phi = sum
 * (-p)^k / (2k + 1)!, through k = 7: at phi = pi/2 (p = 2.47, the short
 * way's end) the first dropped terms are 6e-9 and 4e-10. */
#define EXP_SERIES_MAX_P 2.4674011f /* (pi/2)^2 */
/* In m = -p, for a float or a vector m, as PHI_OVER_SIN_PHI. */
#define COS_SERIES(m)                                                                                                \
  (((((((1.0f / 87178291200.0f * (m) + 1.0f / 479001600.0f) * (m) + 1.0f / 3628800.0f) * (m) + 1.0f / 40320.0f) *   \
         (m) + 1.0f / 720.0f) * (m) + 1.0f / 24.0f) * (m) + 1.0f / 2.0f) * (m) + 1.0f)
#define SINC_SERIES(m)                                                                                               \
  (((((((1.0f / 1307674368000.0f * (m) + 1.0f / 6227020800.0f) * (m) + 1.0f / 39916800.0f) * (m) + 1.0f / 362880.0f) * \
         (m) + 1.0f / 5040.0f) * (m) + 1.0f / 120.0f) * (m) + 1.0f / 6.0f) * (m) + 1.0f)

/* The decay of a rotation offset: its rotation vector r = log map of q decays
 * like a vec3 with w, and the offset is exp(r). Both maps are the series
 * above on the usual offsets (the exact maps past their domains), so a tick
 * costs a few multiply-adds per bone instead of atan2, sin and cos
 * (tests/test_spring.c checks the two against the exact maps). */
static inline void decay_quat(const anim_spring_decayer_t *d, quat *io_q, vec3 *io_w) {
  /* quat_abs picks the short way round, so q and -q decay identically. */
  quat q = quat_abs(*io_q);
  float t = 1.0f - q.w;
  vec3 r = t <= LOG_SERIES_MAX_T ? vec3_scale(vec3_make(q.x, q.y, q.z), 2.0f * PHI_OVER_SIN_PHI(t))
                                 : quat_to_scaled_angle_axis(q);
  anim_spring_decayer_floats(d, &r.x, &io_w->x, 3);
  vec3 h = vec3_scale(r, 0.5f); /* phi u */
  float p = vec3_dot(h, h);
  if (!(p <= EXP_SERIES_MAX_P)) {
    *io_q = quat_from_scaled_angle_axis(r);
    return;
  }
  float c = COS_SERIES(-p), sinc = SINC_SERIES(-p);
  *io_q = quat_make(c, sinc * h.x, sinc * h.y, sinc * h.z);
}

void anim_spring_decayer_quat(const anim_spring_decayer_t *d, quat *io_q, vec3 *io_w) { decay_quat(d, io_q, io_w); }

int anim_spring_decayer_yaw(const anim_spring_decayer_t *d, float *io_c, float *io_s, float *io_w) {
  /* decay_quat's steps on the offset's non-zero parts, in its order: a
   * zero part adds or subtracts exact zeros there (no fused multiply-adds
   * in this build), so these are its bits. */
  float c = *io_c, s = *io_s;
  if (c < 0.0f) c = -c, s = -s; /* quat_abs */
  float t = 1.0f - c;
  if (!(t <= LOG_SERIES_MAX_T)) return ANIM_ERANGE;
  float r = s * (2.0f * PHI_OVER_SIN_PHI(t)), w = *io_w;
  decay_pair(d, &r, &w);
  float h = r * 0.5f, p = h * h;
  if (!(p <= EXP_SERIES_MAX_P)) return ANIM_ERANGE;
  *io_c = COS_SERIES(-p), *io_s = SINC_SERIES(-p) * h, *io_w = w;
  return 0;
}

/* ANIM_LANES offsets at once, one per lane (core/math/lanes.h): the same series
 * in vectors (the pose's quaternions and velocities gathered lane by lane),
 * the decay matrix in float (the scalar path's double decay differs by a
 * float's rounding); a lane outside either series' domain is done again by
 * the scalar path from its input, still in place. Eight lanes instead of
 * four: a pose of 23-60 bones 1.35-1.5x faster (sixteen spill registers and
 * gain nothing more below 60 bones). */
typedef anim_lanes_f vf;
typedef anim_lanes_i vi;

/* The decay matrices of a group's lanes, in float (the lanes' precision:
 * each decayer's float matrix, made with it). */
typedef struct {
  vf xx, xv, vx, vv;
} lane_decay_t;

/* d[l]: lane l's decayer, for a lane outside the series (the scalar path);
 * m: the lanes' matrices. */
static void decay_quat_lanes(const anim_spring_decayer_t *const d[ANIM_LANES], const lane_decay_t *m, quat *io_q,
                             vec3 *io_w) {
  vf qw, qx, qy, qz, wx, wy, wz;
  for (int l = 0; l < ANIM_LANES; l++) {
    quat q = io_q[l];
    qw[l] = q.w, qx[l] = q.x, qy[l] = q.y, qz[l] = q.z;
    wx[l] = io_w[l].x, wy[l] = io_w[l].y, wz[l] = io_w[l].z;
  }
  /* quat_abs on the lanes: a sign flip is exact, as the scalar path's -1 x. */
  vi flip = (qw < 0.0f) & ((vi){0} + INT32_MIN); /* the sign bit where w < 0 */
  qw = (vf)((vi)qw ^ flip), qx = (vf)((vi)qx ^ flip), qy = (vf)((vi)qy ^ flip), qz = (vf)((vi)qz ^ flip);
  vf t = ANIM_LANES_SPLAT(1.0f) - qw;
  vf f = PHI_OVER_SIN_PHI(t) * 2.0f;
  vf rx = f * qx, ry = f * qy, rz = f * qz;
  vf nrx = m->xx * rx + m->xv * wx, nry = m->xx * ry + m->xv * wy, nrz = m->xx * rz + m->xv * wz;
  wx = m->vx * rx + m->vv * wx, wy = m->vx * ry + m->vv * wy, wz = m->vx * rz + m->vv * wz;
  vf hx = nrx * 0.5f, hy = nry * 0.5f, hz = nrz * 0.5f;
  vf p = hx * hx + hy * hy + hz * hz, m2 = -p;
  vf c = COS_SERIES(m2), sn = SINC_SERIES(m2);
  /* NaN compares false: such a lane goes the scalar way too. */
  vi inside = (t <= LOG_SERIES_MAX_T) & (p <= EXP_SERIES_MAX_P);
  for (int l = 0; l < ANIM_LANES; l++) {
    if (!inside[l]) {
      decay_quat(d[l], &io_q[l], &io_w[l]);
      continue;
    }
    io_q[l] = quat_make(c[l], sn[l] * hx[l], sn[l] * hy[l], sn[l] * hz[l]);
    io_w[l] = vec3_make(wx[l], wy[l], wz[l]);
  }
}

/* The lanes' decayers and matrices for offsets i.. (a lane past n: the first decayer). */
static void lanes_for(const anim_spring_decayer_t *decayers, const uint8_t *which, size_t i, size_t n,
                      const anim_spring_decayer_t *d[ANIM_LANES], lane_decay_t *m) {
  for (int l = 0; l < ANIM_LANES; l++) {
    const anim_spring_decayer_t *k = &decayers[which && i + (size_t)l < n ? which[i + (size_t)l] : 0];
    d[l] = k;
    m->xx[l] = k->xx_f, m->xv[l] = k->xv_f, m->vx[l] = k->vx_f, m->vv[l] = k->vv_f;
  }
}

/* decayers: 1 (which NULL) or up to 256 (which's values) decayers. */
static void decay_quats(const anim_spring_decayer_t *decayers, const uint8_t *which, quat *io_q, vec3 *io_w, size_t n) {
  const anim_spring_decayer_t *d[ANIM_LANES];
  lane_decay_t m;
  if (!which) lanes_for(decayers, NULL, 0, n, d, &m); /* the same for every group */
  size_t i = 0;
  for (; i + ANIM_LANES <= n; i += ANIM_LANES) {
    if (which) lanes_for(decayers, which, i, n, d, &m);
    decay_quat_lanes(d, &m, io_q + i, io_w + i);
  }
  if (i == n) return;
  /* The rest in a padded group (identity offsets decay to themselves). */
  quat q[ANIM_LANES];
  vec3 w[ANIM_LANES];
  if (which) lanes_for(decayers, which, i, n, d, &m);
  for (int l = 0; l < ANIM_LANES; l++) q[l] = quat_identity(), w[l] = vec3_zero();
  for (size_t l = 0; i + l < n; l++) q[l] = io_q[i + l], w[l] = io_w[i + l];
  decay_quat_lanes(d, &m, q, w);
  for (size_t l = 0; i + l < n; l++) io_q[i + l] = q[l], io_w[i + l] = w[l];
}

void anim_spring_decayer_quats(const anim_spring_decayer_t *d, quat *io_q, vec3 *io_w, size_t n) {
  decay_quats(d, NULL, io_q, io_w, n);
}

void anim_spring_decayers_quats(const anim_spring_decayer_t *decayers, const uint8_t *which, quat *io_q, vec3 *io_w,
                                size_t n) {
  decay_quats(decayers, which, io_q, io_w, n);
}

void anim_spring_decay_vec3(vec3 *io_x, vec3 *io_v, float halflife, float dt) {
  anim_spring_decayer_t d;
  anim_spring_decayer_make(&d, halflife, dt);
  anim_spring_decayer_vec3(&d, io_x, io_v);
}

void anim_spring_decay_quat(quat *io_q, vec3 *io_w, float halflife, float dt) {
  anim_spring_decayer_t d;
  anim_spring_decayer_make(&d, halflife, dt);
  anim_spring_decayer_quat(&d, io_q, io_w);
}

void anim_spring_simple(float *io_x, float *io_v, float x_goal, float halflife, float dt) {
  float e = *io_x - x_goal;
  anim_spring_decay(&e, io_v, halflife, dt);
  *io_x = e + x_goal;
}

void anim_spring_simple_vec3(vec3 *io_x, vec3 *io_v, vec3 x_goal, float halflife, float dt) {
  vec3 e = vec3_sub(*io_x, x_goal);
  anim_spring_decay_vec3(&e, io_v, halflife, dt);
  *io_x = vec3_add(e, x_goal);
}

void anim_spring_track(float *io_x, float *io_v, float x_goal, float v_goal, float halflife, float dt) {
  /* In the goal's moving frame the error obeys the plain decay ODE. */
  float ex = *io_x - x_goal, ev = *io_v - v_goal;
  anim_spring_decay(&ex, &ev, halflife, dt);
  *io_x = ex + x_goal + v_goal * dt;
  *io_v = ev + v_goal;
}

void anim_spring_track_vec3(vec3 *io_x, vec3 *io_v, vec3 x_goal, vec3 v_goal, float halflife, float dt) {
  vec3 ex = vec3_sub(*io_x, x_goal), ev = vec3_sub(*io_v, v_goal);
  anim_spring_decay_vec3(&ex, &ev, halflife, dt);
  *io_x = vec3_add(ex, vec3_add(x_goal, vec3_scale(v_goal, dt)));
  *io_v = vec3_add(ev, v_goal);
}

/* One axis of the velocity spring: v - v_goal decays critically with rate y
 * (e = exp(-y dt), shared by the three axes); x integrates v exactly:
 * int_0^dt e^-ys ds = (1 - e)/y and int_0^dt s e^-ys ds = (1 - e (1 + y dt)) / y^2. */
static void character_axis(float *io_x, float *io_v, float *io_a, double v_goal, double y, double e, double dt) {
  double j0 = *io_v - v_goal, j1 = *io_a + j0 * y;
  double x = *io_x + v_goal * dt + j0 * (1.0 - e) / y + j1 * (1.0 - e * (1.0 + y * dt)) / (y * y);
  *io_x = (float)x;
  *io_v = (float)(e * (j0 + j1 * dt) + v_goal);
  *io_a = (float)(e * (*io_a - j1 * y * dt));
}

void anim_spring_character_vec3(vec3 *io_x, vec3 *io_v, vec3 *io_a, vec3 v_goal, float halflife, float dt) {
  double y = halflife_to_y(halflife), e = decay_exp(y, dt);
  character_axis(&io_x->x, &io_v->x, &io_a->x, v_goal.x, y, e, dt);
  character_axis(&io_x->y, &io_v->y, &io_a->y, v_goal.y, y, e, dt);
  character_axis(&io_x->z, &io_v->z, &io_a->z, v_goal.z, y, e, dt);
}

/* ---- tuning ----------------------------------------------------------------- */

static int check_fraction(double alpha, double t) {
  if (!isfinite(alpha) || !isfinite(t)) return ANIM_ENONFINITE;
  if (!(alpha > 0.0 && alpha < 1.0) || !(t > 0.0)) return ANIM_EINVAL;
  return 0;
}

int anim_spring_halflife_reaching(double *out_halflife, double alpha, double t) {
  int rc = check_fraction(alpha, t);
  if (rc < 0) return rc;
  /* (1 + u) e^-u = alpha  <=>  w e^w = -alpha/e with w = -(1 + u); u > 0
   * means w < -1, the lower branch. */
  double w;
  if ((rc = anim_lambertwm1(-alpha * INV_E, &w)) < 0) return rc;
  double u = -1.0 - w;
  if (!(u > 0.0)) return ANIM_ERANGE; /* alpha rounds to 1 */
  *out_halflife = y_to_halflife(u / t);
  return 0;
}

int anim_spring_time_reaching(double *out_t, double alpha, double halflife) {
  int rc = check_fraction(alpha, halflife);
  if (rc < 0) return rc;
  double w;
  if ((rc = anim_lambertwm1(-alpha * INV_E, &w)) < 0) return rc;
  *out_t = (-1.0 - w) / (2.0 * LN2 / halflife);
  return 0;
}

int anim_spring_halflife_reaching_with_velocity(double *out_halflife, double x0, double v0,
                                                double alpha, double t) {
  int rc = check_fraction(alpha, t);
  if (rc < 0) return rc;
  if (!isfinite(x0) || !isfinite(v0)) return ANIM_ENONFINITE;
  if (x0 == 0.0) return ANIM_EINVAL;
  double b = v0 * t / x0;
  /* (1 + b + u) e^-u = alpha  <=>  w e^w = -alpha e^-(1+b), w = -(1 + b + u).
   * Real only when alpha e^-b <= 1; the decaying-side root is on W-1. */
  if (!isfinite(b) || b < log(alpha)) return ANIM_ERANGE;
  double z = -alpha * exp(-1.0 - b);
  if (z < -INV_E) z = -INV_E; /* b == ln(alpha) up to rounding */
  double w;
  if ((rc = anim_lambertwm1(z, &w)) < 0) return ANIM_ERANGE;
  double u = -1.0 - b - w;
  if (!(u > 0.0) || !isfinite(u)) return ANIM_ERANGE;
  *out_halflife = y_to_halflife(u / t);
  return 0;
}

int anim_spring_critical_gains(double *out_stiffness, double *out_damping, double halflife, double mass) {
  if (!isfinite(halflife) || !isfinite(mass)) return ANIM_ENONFINITE;
  if (!(halflife > 0.0) || !(mass > 0.0)) return ANIM_EINVAL;
  double y = y_to_halflife(halflife); /* the map y <-> halflife is its own inverse */
  *out_stiffness = mass * y * y;
  *out_damping = 2.0 * mass * y;
  return 0;
}

int anim_spring_implicit_to_erp_cfm(double *out_erp, double *out_cfm, double stiffness,
                                    double damping, double dt) {
  if (!isfinite(stiffness) || !isfinite(damping) || !isfinite(dt)) return ANIM_ENONFINITE;
  if (stiffness < 0.0 || damping < 0.0 || !(dt > 0.0)) return ANIM_EINVAL;
  double s = dt * stiffness + damping;
  if (!(s > 0.0)) return ANIM_EINVAL;
  *out_erp = dt * stiffness / s;
  *out_cfm = 1.0 / s;
  return 0;
}

int anim_spring_erp_cfm_to_implicit(double *out_stiffness, double *out_damping, double erp,
                                    double cfm, double dt) {
  if (!isfinite(erp) || !isfinite(cfm) || !isfinite(dt)) return ANIM_ENONFINITE;
  if (erp < 0.0 || erp > 1.0 || !(cfm > 0.0) || !(dt > 0.0)) return ANIM_EINVAL;
  *out_stiffness = erp / (dt * cfm);
  *out_damping = (1.0 - erp) / cfm;
  return 0;
}

void anim_spring_erp_cfm_step(double *io_x, double *io_v, double erp, double cfm, double mass, double dt) {
  double v1 = (cfm * mass * *io_v - erp * *io_x) / (dt + cfm * mass);
  *io_x += dt * v1;
  *io_v = v1;
}
