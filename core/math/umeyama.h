/*
 * umeyama.h: the least-squares transform between two corresponding 3-D point
 * sets, in closed form: rigid (rotation + translation), similarity (with a
 * uniform scale), and yaw (a rotation about +Y and a translation on the
 * ground, the alignment of Kovar-Gleicher motion graphs). Optionally
 * weighted.
 *
 * Given points a_i ("from"), b_i ("to") and weights w_i >= 0, each mode finds
 * the transform T(p) = c R p + t minimising sum_i w_i |b_i - T(a_i)|^2:
 *   - moments (one shared pass, double precision): W = sum w_i, centroids
 *     a_bar, b_bar, sigma_a^2 = sum w_i |a_i - a_bar|^2 / W and the cross-
 *     covariance S = sum w_i (b_i - b_bar)(a_i - a_bar)^T / W;
 *   - RIGID and SIMILARITY (S. Umeyama, "Least-squares estimation of
 *     transformation parameters between two point patterns", IEEE PAMI 13(4),
 *     1991, eqs. 38-42): the signed SVD S = U diag(s) V^T with U, V proper
 *     rotations (svd3.h), so R = U V^T and c = (s0 + s1 + s2) / sigma_a^2 (1
 *     for RIGID); t = b_bar - c R a_bar. The signed SVD *is* the reflection
 *     fix: with an ordinary SVD, Umeyama's S = diag(1, 1, det U det V)
 *     flips the smallest singular direction. (The seed note tests
 *     det(Sigma) < 0, which is the same only when S has full rank, and its
 *     Matlab tests prod(diag(D)) < 0, which is never true because singular
 *     values are >= 0; both are wrong for a mirrored coplanar set.)
 *   - YAW: R = rotation by theta about +Y (x' = cos x + sin z, z' = -sin x +
 *     cos z), which maximises sum w b.(R a) = cos (S_xx + S_zz) + sin (S_xz -
 *     S_zx), so theta = atan2(S_xz - S_zx, S_xx + S_zz), c = 1, and t =
 *     b_bar - R a_bar with t.y = 0. That is Kovar, Gleicher & Pighin,
 *     "Motion Graphs", SIGGRAPH 2002, eq. (1) with their sums divided by W;
 *     the vertical coordinates only add a constant to the cost.
 *
 * Degenerate inputs are refused, never answered with an arbitrary transform.
 * With r = ANIM_UMEYAMA_MIN_SPREAD_RATIO (1e-4), the 3-D modes need each set
 * to span a plane (the second eigenvalue of its weighted covariance above
 * r^2 times the first: at least 3 points of weight > 0, not collinear, not
 * all equal) and the cross-covariance to have rank 2 (s1 > r^2 sqrt(sigma_a^2
 * sigma_b^2): a unique rotation); YAW needs each set's horizontal variance
 * above r^2 times its total (at least 2 points of weight > 0 whose ground
 * projections differ; 2 suffice, a line on the ground fixes a yaw) and a
 * non-vanishing horizontal correlation (hypot(S_xx + S_zz, S_xz - S_zx) above
 * the same bound). r = 1e-4 refuses a 1 m triangle flatter than 0.1 mm,
 * about what float coordinates a few hundred metres from the origin can
 * still resolve (2^-24 * 500 m = 3e-5 m), so sets collinear up to float
 * rounding are refused too.
 *
 * Points are float (vec3); all arithmetic is double. Nothing here allocates.
 */
#ifndef ANIM_UMEYAMA_H
#define ANIM_UMEYAMA_H

#include "math/anim_math.h"

#define ANIM_UMEYAMA_MIN_SPREAD_RATIO 1e-4

typedef enum {
  ANIM_UMEYAMA_RIGID = 0,      /* rotation + translation, scale 1 */
  ANIM_UMEYAMA_SIMILARITY = 1, /* rotation + translation + uniform scale > 0 */
  ANIM_UMEYAMA_YAW = 2         /* rotation about +Y + translation in x, z */
} anim_umeyama_mode_t;

/* to ~= scale * rotation(from) + translation. */
typedef struct {
  quat rotation;     /* unit; about +Y only for ANIM_UMEYAMA_YAW */
  double matrix[3][3]; /* the same rotation as a row-major matrix */
  vec3 translation;  /* metres; y = 0 for ANIM_UMEYAMA_YAW */
  float scale;       /* 1 unless ANIM_UMEYAMA_SIMILARITY */
  float yaw;         /* ANIM_UMEYAMA_YAW: theta, radians in (-pi, pi]; else 0 */
  double cost;       /* sum_i w_i |to_i - T(from_i)|^2 (m^2, weighted) */
  double rms;        /* sqrt(cost / sum w_i), metres */
} anim_umeyama_t;

/* Fits the transform of the given mode taking from[i] to to[i], i < count,
 * with weights[i] (NULL: all 1). Writes *out only on success.
 * Errors: ANIM_EINVAL (NULL points or out, count < 1, unknown mode, a weight
 * < 0, fewer than 3 points with weight > 0 for RIGID/SIMILARITY or 2 for YAW,
 * or a degenerate configuration as described above: zero total weight, all
 * points equal, collinear, no horizontal extent for YAW), ANIM_ENONFINITE (a
 * NaN or infinite coordinate or weight). */
int anim_umeyama_fit(anim_umeyama_t *out, anim_umeyama_mode_t mode, const vec3 *from, const vec3 *to,
                     const float *weights, int count);

/* scale * rotation(p) + translation. */
vec3 anim_umeyama_apply(const anim_umeyama_t *fit, vec3 p);

#endif
