/*
 * umeyama.c: rigid, similarity and yaw fits of corresponding point sets
 * (formulas and sources in umeyama.h). One moments pass shared by the three
 * modes, the rotation from the signed SVD or the yaw's atan2, one residual
 * pass. No allocation.
 */
#include <math.h>
#include <string.h>

#include "anim_error.h"
#include "math/svd3.h"
#include "math/umeyama.h"

typedef struct {
  double w;                /* sum of weights */
  double a_bar[3], b_bar[3];
  double ca[3][3], cb[3][3]; /* covariances sum w (x - x_bar)(x - x_bar)^T / W */
  double var_a, var_b;     /* their traces: sum w |x - x_bar|^2 / W */
  double s[3][3];          /* cross-covariance sum w (b - b_bar)(a - a_bar)^T / W */
  int positive;            /* points with weight > 0 */
} moments_t;

static void vec3_to(double out[3], vec3 v) { out[0] = v.x, out[1] = v.y, out[2] = v.z; }

/* Two passes (centroids, then centred sums) rather than raw second moments:
 * sum w x x^T - W x_bar x_bar^T cancels catastrophically for points far
 * from the origin. */
static int moments_compute(moments_t *m, const vec3 *from, const vec3 *to, const float *weights, int count) {
  memset(m, 0, sizeof *m);
  for (int i = 0; i < count; i++) {
    double w = weights ? (double)weights[i] : 1.0, a[3], b[3];
    vec3_to(a, from[i]), vec3_to(b, to[i]);
    if (!isfinite(w)) return ANIM_ENONFINITE;
    for (int k = 0; k < 3; k++)
      if (!isfinite(a[k]) || !isfinite(b[k])) return ANIM_ENONFINITE;
    if (w < 0.0) return ANIM_EINVAL;
    if (w == 0.0) continue;
    m->positive++;
    m->w += w;
    for (int k = 0; k < 3; k++) m->a_bar[k] += w * a[k], m->b_bar[k] += w * b[k];
  }
  if (!(m->w > 0.0)) return ANIM_EINVAL;
  for (int k = 0; k < 3; k++) m->a_bar[k] /= m->w, m->b_bar[k] /= m->w;
  for (int i = 0; i < count; i++) {
    double w = weights ? (double)weights[i] : 1.0, a[3], b[3];
    if (w == 0.0) continue;
    vec3_to(a, from[i]), vec3_to(b, to[i]);
    for (int k = 0; k < 3; k++) a[k] -= m->a_bar[k], b[k] -= m->b_bar[k];
    for (int r = 0; r < 3; r++)
      for (int c = 0; c < 3; c++) {
        m->ca[r][c] += w * a[r] * a[c];
        m->cb[r][c] += w * b[r] * b[c];
        m->s[r][c] += w * b[r] * a[c];
      }
  }
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 3; c++) m->ca[r][c] /= m->w, m->cb[r][c] /= m->w, m->s[r][c] /= m->w;
  m->var_a = m->ca[0][0] + m->ca[1][1] + m->ca[2][2];
  m->var_b = m->cb[0][0] + m->cb[1][1] + m->cb[2][2];
  return 0;
}

/* Rotation matrix -> unit quaternion, branching on the largest of w, x, y, z
 * so the square root is taken of the biggest term (Shepperd, "Quaternion
 * from rotation matrix", J. Guidance and Control 1(3), 1978). */
static quat quat_from_matrix(const double r[3][3]) {
  double tr = r[0][0] + r[1][1] + r[2][2], w, x, y, z;
  if (tr >= r[0][0] && tr >= r[1][1] && tr >= r[2][2]) {
    double s = 2.0 * sqrt(1.0 + tr);
    w = 0.25 * s, x = (r[2][1] - r[1][2]) / s, y = (r[0][2] - r[2][0]) / s, z = (r[1][0] - r[0][1]) / s;
  } else if (r[0][0] >= r[1][1] && r[0][0] >= r[2][2]) {
    double s = 2.0 * sqrt(1.0 + r[0][0] - r[1][1] - r[2][2]);
    w = (r[2][1] - r[1][2]) / s, x = 0.25 * s, y = (r[0][1] + r[1][0]) / s, z = (r[0][2] + r[2][0]) / s;
  } else if (r[1][1] >= r[2][2]) {
    double s = 2.0 * sqrt(1.0 + r[1][1] - r[0][0] - r[2][2]);
    w = (r[0][2] - r[2][0]) / s, x = (r[0][1] + r[1][0]) / s, y = 0.25 * s, z = (r[1][2] + r[2][1]) / s;
  } else {
    double s = 2.0 * sqrt(1.0 + r[2][2] - r[0][0] - r[1][1]);
    w = (r[1][0] - r[0][1]) / s, x = (r[0][2] + r[2][0]) / s, y = (r[1][2] + r[2][1]) / s, z = 0.25 * s;
  }
  if (w < 0.0) w = -w, x = -x, y = -y, z = -z;
  double n = sqrt(w * w + x * x + y * y + z * z);
  return quat_make((float)(w / n), (float)(x / n), (float)(y / n), (float)(z / n));
}

#define VARIANCE_RATIO (ANIM_UMEYAMA_MIN_SPREAD_RATIO * ANIM_UMEYAMA_MIN_SPREAD_RATIO)

/* A point set spans at least a plane: its second principal variance is not
 * negligible against its first. */
static int spans_plane(const double c[3][3]) {
  double values[3], q[3][3];
  if (anim_sym3_eigen(c, values, q)) return 0;
  return values[0] > 0.0 && values[1] > VARIANCE_RATIO * values[0];
}

/* R = U V^T and the trace of the signed singular values; ANIM_EINVAL when
 * either set is collinear or the cross-covariance has rank < 2 (then the
 * rotation is not unique). */
static int rotation_3d(const moments_t *m, double out_r[3][3], double *out_trace) {
  double u[3][3], s[3], v[3][3];
  if (!spans_plane(m->ca) || !spans_plane(m->cb)) return ANIM_EINVAL;
  int rc = anim_svd3(m->s, u, s, v);
  if (rc) return rc;
  if (!(s[1] > VARIANCE_RATIO * sqrt(m->var_a * m->var_b))) return ANIM_EINVAL;
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 3; c++) out_r[r][c] = u[r][0] * v[c][0] + u[r][1] * v[c][1] + u[r][2] * v[c][2];
  *out_trace = s[0] + s[1] + s[2];
  return 0;
}

/* The yaw maximising sum w b.(R a); ANIM_EINVAL when either set has no
 * horizontal extent or the horizontal correlation vanishes (see umeyama.h). */
static int rotation_yaw(const moments_t *m, double out_r[3][3], double *out_theta) {
  double ha = m->ca[0][0] + m->ca[2][2], hb = m->cb[0][0] + m->cb[2][2];
  if (!(ha > VARIANCE_RATIO * m->var_a) || !(hb > VARIANCE_RATIO * m->var_b)) return ANIM_EINVAL;
  double cs = m->s[0][0] + m->s[2][2], sn = m->s[0][2] - m->s[2][0];
  if (!(hypot(cs, sn) > VARIANCE_RATIO * sqrt(m->var_a * m->var_b))) return ANIM_EINVAL;
  double theta = atan2(sn, cs), c = cos(theta), s = sin(theta);
  double r[3][3] = {{c, 0.0, s}, {0.0, 1.0, 0.0}, {-s, 0.0, c}};
  memcpy(out_r, r, sizeof r);
  *out_theta = theta;
  return 0;
}

int anim_umeyama_fit(anim_umeyama_t *out, anim_umeyama_mode_t mode, const vec3 *from, const vec3 *to,
                     const float *weights, int count) {
  if (!out || !from || !to || count < 1) return ANIM_EINVAL;
  if (mode != ANIM_UMEYAMA_RIGID && mode != ANIM_UMEYAMA_SIMILARITY && mode != ANIM_UMEYAMA_YAW) return ANIM_EINVAL;
  moments_t m;
  int rc = moments_compute(&m, from, to, weights, count);
  if (rc) return rc;
  if (m.positive < (mode == ANIM_UMEYAMA_YAW ? 2 : 3)) return ANIM_EINVAL;

  anim_umeyama_t fit;
  memset(&fit, 0, sizeof fit);
  double r[3][3], scale = 1.0, theta = 0.0, trace;
  if (mode == ANIM_UMEYAMA_YAW) {
    rc = rotation_yaw(&m, r, &theta);
  } else {
    rc = rotation_3d(&m, r, &trace);
    if (!rc && mode == ANIM_UMEYAMA_SIMILARITY) scale = trace / m.var_a; /* var_a > 0: s0 > 0 */
  }
  if (rc) return rc;

  double t[3];
  for (int k = 0; k < 3; k++)
    t[k] = m.b_bar[k] - scale * (r[k][0] * m.a_bar[0] + r[k][1] * m.a_bar[1] + r[k][2] * m.a_bar[2]);
  if (mode == ANIM_UMEYAMA_YAW) t[1] = 0.0;

  /* The residual measured, not taken from the moments: the closed form
   * var_b - 2 c tr + c^2 var_a cancels to noise when the fit is good. */
  double cost = 0.0;
  for (int i = 0; i < count; i++) {
    double w = weights ? (double)weights[i] : 1.0, a[3], b[3];
    if (w == 0.0) continue;
    vec3_to(a, from[i]), vec3_to(b, to[i]);
    for (int k = 0; k < 3; k++) {
      double d = b[k] - (scale * (r[k][0] * a[0] + r[k][1] * a[1] + r[k][2] * a[2]) + t[k]);
      cost += w * d * d;
    }
  }
  memcpy(fit.matrix, r, sizeof r);
  fit.rotation = mode == ANIM_UMEYAMA_YAW ? quat_make((float)cos(0.5 * theta), 0.0f, (float)sin(0.5 * theta), 0.0f)
                                          : quat_from_matrix(r);
  fit.translation = vec3_make((float)t[0], (float)t[1], (float)t[2]);
  fit.scale = (float)scale;
  fit.yaw = (float)theta;
  fit.cost = cost;
  fit.rms = sqrt(cost / m.w);
  *out = fit;
  return 0;
}

vec3 anim_umeyama_apply(const anim_umeyama_t *fit, vec3 p) {
  const double (*r)[3] = fit->matrix;
  double c = fit->scale;
  return vec3_make((float)(c * (r[0][0] * p.x + r[0][1] * p.y + r[0][2] * p.z) + fit->translation.x),
                   (float)(c * (r[1][0] * p.x + r[1][1] * p.y + r[1][2] * p.z) + fit->translation.y),
                   (float)(c * (r[2][0] * p.x + r[2][1] * p.y + r[2][2] * p.z) + fit->translation.z));
}
