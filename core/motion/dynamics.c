/*
 * dynamics.c: the exact discretisation of y + k1 y' + k2 y'' = x + k3 x'
 * under a piecewise-linear input.
 *
 * The stability limit in the seed (T < sqrt(4 k2 + k1^2) - k1 for the
 * semi-implicit Euler step) checks out, both by the Jury conditions and
 * numerically (tests/test_dynamics.c); it is only marginal though: at the
 * limit an eigenvalue sits at -1 and just below it the output jitters from
 * frame to frame, so sub-stepping to the limit is not enough for quality.
 * The exact step avoids the question.
 */
#include <math.h>

#include "anim_error.h"
#include "motion/dynamics.h"

#define PI_D 3.14159265358979323846

/* Exact transition matrix of e'' + 2 sigma e' + w^2 e = 0 over dt:
 * Phi = e^(-sigma dt) [C I + S (A + sigma I)], A + sigma I = [[sigma, 1],
 * [-w^2, -sigma]], with C, S the cos/sin (underdamped), 1/dt (critical) or
 * cosh/sinh (overdamped) of the damped frequency. */
typedef struct {
  double m00, m01, m10, m11;
} transition_t;

/* Made again at each step, not kept: keeping the last one per thread saved
 * about 27 ns of a controller's 2.6 us tick (1%), not seen in a crowd's CPU
 * time; hidden state is not worth that. */
static transition_t transition_make(const anim_dynamics_params_t *p, double dt) {
  double w = 2.0 * PI_D * p->f, z = p->zeta, sigma = z * w;
  double ec, es; /* e^(-sigma dt) C and e^(-sigma dt) S */
  double wd = w * sqrt(fabs(1.0 - z * z)), u = wd * dt;
  if (u < 1e-3) {
    /* near critical: series of cos/cosh and sin/sinh over u, sign by regime */
    double sgn = z > 1.0 ? 1.0 : -1.0, u2 = u * u, e = exp(-sigma * dt);
    ec = e * (1.0 + sgn * u2 / 2.0 + u2 * u2 / 24.0);
    es = e * dt * (1.0 + sgn * u2 / 6.0 + u2 * u2 / 120.0);
  } else if (z < 1.0) {
    double e = exp(-sigma * dt);
    ec = e * cos(u);
    es = e * sin(u) / wd;
  } else {
    /* overdamped, in exponentials so cosh/sinh of huge arguments never
     * overflow; the slow root written without cancellation */
    double slow = -w / (z + sqrt(z * z - 1.0)), fast = -sigma - wd;
    double a = exp(slow * dt), b = exp(fast * dt);
    ec = 0.5 * (a + b);
    es = (a - b) / (2.0 * wd);
  }
  transition_t t = {ec + es * sigma, es, -es * w * w, ec - es * sigma};
  return t;
}

/* One exact step of one dimension: input line ending at x_end with slope s. */
static void step_axis(float *io_y, float *io_v, const anim_dynamics_params_t *p, const transition_t *t,
                      double x_end, double s, double dt) {
  /* particular solution y_p = x(t) + (k3 - k1) s; e = y - y_p is homogeneous */
  double c = (p->k3 - p->k1) * s, x_start = x_end - s * dt;
  double e0 = *io_y - x_start - c, e0d = *io_v - s;
  double e1 = t->m00 * e0 + t->m01 * e0d, e1d = t->m10 * e0 + t->m11 * e0d;
  *io_y = (float)(x_end + c + e1);
  *io_v = (float)(s + e1d);
}

int anim_dynamics_params_make(anim_dynamics_params_t *out, float f, float zeta, float r) {
  if (!out) return ANIM_EINVAL;
  if (!isfinite(f) || !isfinite(zeta) || !isfinite(r)) return ANIM_ENONFINITE;
  if (!(f > 0.0f) || zeta < 0.0f) return ANIM_EINVAL;
  out->f = f, out->zeta = zeta, out->r = r;
  out->k1 = zeta / (PI_D * f);
  out->k2 = 1.0 / ((2.0 * PI_D * f) * (2.0 * PI_D * f));
  out->k3 = r * zeta / (2.0 * PI_D * f);
  return 0;
}

double anim_dynamics_euler_critical_dt(const anim_dynamics_params_t *p) {
  return sqrt(4.0 * p->k2 + p->k1 * p->k1) - p->k1;
}

void anim_dynamics_reset(anim_dynamics_t *s, float x0) { s->y = s->x_prev = x0, s->v = 0.0f; }
void anim_dynamics_vec3_reset(anim_dynamics_vec3_t *s, vec3 x0) { s->y = s->x_prev = x0, s->v = vec3_zero(); }

/* Angle in [-pi, pi]. */
static double wrap_angle(double a) { return remainder(a, 2.0 * PI_D); }

void anim_dynamics_angle_reset(anim_dynamics_angle_t *s, float x0) {
  s->y = s->x_prev = (float)wrap_angle(x0), s->v = 0.0f;
}

static int check_step(const void *s, const anim_dynamics_params_t *p, float dt) {
  if (!s || !p) return ANIM_EINVAL;
  if (!isfinite(dt)) return ANIM_ENONFINITE;
  if (dt < 0.0f) return ANIM_EINVAL;
  return 0;
}

int anim_dynamics_update_with_velocity(anim_dynamics_t *s, const anim_dynamics_params_t *p, float x, float xd,
                                       float dt) {
  int rc = check_step(s, p, dt);
  if (rc < 0) return rc;
  if (!isfinite(x) || !isfinite(xd)) return ANIM_ENONFINITE;
  if (dt == 0.0f) return 0;
  transition_t t = transition_make(p, dt);
  step_axis(&s->y, &s->v, p, &t, x, xd, dt);
  s->x_prev = x;
  return 0;
}

int anim_dynamics_update(anim_dynamics_t *s, const anim_dynamics_params_t *p, float x, float dt) {
  int rc = check_step(s, p, dt);
  if (rc < 0 || dt == 0.0f) return rc;
  return anim_dynamics_update_with_velocity(s, p, x, (float)(((double)x - s->x_prev) / dt), dt);
}

int anim_dynamics_vec3_update_with_velocity(anim_dynamics_vec3_t *s, const anim_dynamics_params_t *p, vec3 x,
                                            vec3 xd, float dt) {
  int rc = check_step(s, p, dt);
  if (rc < 0) return rc;
  if (!vec3_finite(x) || !vec3_finite(xd)) return ANIM_ENONFINITE;
  if (dt == 0.0f) return 0;
  transition_t t = transition_make(p, dt);
  step_axis(&s->y.x, &s->v.x, p, &t, x.x, xd.x, dt);
  step_axis(&s->y.y, &s->v.y, p, &t, x.y, xd.y, dt);
  step_axis(&s->y.z, &s->v.z, p, &t, x.z, xd.z, dt);
  s->x_prev = x;
  return 0;
}

int anim_dynamics_vec3_update(anim_dynamics_vec3_t *s, const anim_dynamics_params_t *p, vec3 x, float dt) {
  int rc = check_step(s, p, dt);
  if (rc < 0 || dt == 0.0f) return rc;
  vec3 xd = vec3_scale(vec3_sub(x, s->x_prev), 1.0f / dt);
  return anim_dynamics_vec3_update_with_velocity(s, p, x, xd, dt);
}

int anim_dynamics_angle_update_with_velocity(anim_dynamics_angle_t *s, const anim_dynamics_params_t *p, float x,
                                             float xd, float dt) {
  int rc = check_step(s, p, dt);
  if (rc < 0) return rc;
  if (!isfinite(x) || !isfinite(xd)) return ANIM_ENONFINITE;
  if (dt == 0.0f) return 0;
  /* the input at its representation nearest the output: the short way */
  double x_end = s->y + wrap_angle((double)x - s->y);
  transition_t t = transition_make(p, dt);
  step_axis(&s->y, &s->v, p, &t, x_end, xd, dt);
  s->y = (float)wrap_angle(s->y);
  s->x_prev = (float)wrap_angle(x);
  return 0;
}

int anim_dynamics_angle_update(anim_dynamics_angle_t *s, const anim_dynamics_params_t *p, float x, float dt) {
  int rc = check_step(s, p, dt);
  if (rc < 0 || dt == 0.0f) return rc;
  if (!isfinite(x)) return ANIM_ENONFINITE;
  double xd = wrap_angle((double)x - s->x_prev) / dt;
  return anim_dynamics_angle_update_with_velocity(s, p, x, (float)xd, dt);
}
