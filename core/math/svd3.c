/*
 * svd3.c: 3x3 symmetric eigen-decomposition by cyclic Jacobi and the signed
 * SVD on top of it (McAdams et al. 2011; see svd3.h for the method and the
 * sources). Everything in double; no allocation, no failure but NaN input.
 */
#include <math.h>
#include <string.h>

#include "anim_error.h"
#include "math/svd3.h"

/* Jacobi converges quadratically: 4-6 sweeps reach rounding for any
 * symmetric 3x3; the cap only guards against a pathological input looping. */
#define JACOBI_MAX_SWEEPS 32

static int finite9(const double a[3][3]) {
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      if (!isfinite(a[i][j])) return 0;
  return 1;
}

static void identity(double m[3][3]) {
  memset(m, 0, 9 * sizeof(double));
  m[0][0] = m[1][1] = m[2][2] = 1.0;
}

/* Swaps columns i and j of m and negates the new column j: a rotation stays
 * a rotation (a bare swap would flip its determinant). */
static void swap_columns_keep_det(double m[3][3], int i, int j) {
  for (int r = 0; r < 3; r++) {
    double t = m[r][i];
    m[r][i] = m[r][j];
    m[r][j] = -t;
  }
}

/* Sorts key[3] in decreasing order by three compare-exchanges, moving the
 * matching columns of m1 and (when not NULL) m2 along, det-preserving. */
static void sort_decreasing(double key[3], double m1[3][3], double m2[3][3]) {
  static const int pairs[3][2] = {{0, 1}, {0, 2}, {1, 2}};
  for (int k = 0; k < 3; k++) {
    int i = pairs[k][0], j = pairs[k][1];
    if (key[j] > key[i]) {
      double t = key[i];
      key[i] = key[j], key[j] = t;
      swap_columns_keep_det(m1, i, j);
      if (m2) swap_columns_keep_det(m2, i, j);
    }
  }
}

/* One Jacobi rotation J in the (p, q) plane chosen so that (J^T a J)_pq = 0
 * (Golub & Van Loan, Algorithm 8.5.1 "sym.schur2"); a <- J^T a J, q <- q J. */
static void jacobi_rotate(double a[3][3], double v[3][3], int p, int q) {
  double apq = a[p][q];
  if (apq == 0.0) return;
  double tau = (a[q][q] - a[p][p]) / (2.0 * apq);
  /* The smaller root of t^2 + 2 tau t - 1 = 0 (|angle| <= pi/4), written so
   * that it neither cancels nor overflows for large |tau|. */
  double t = fabs(tau) > 1e150 ? 0.5 / tau : (tau >= 0.0 ? 1.0 : -1.0) / (fabs(tau) + sqrt(1.0 + tau * tau));
  double c = 1.0 / sqrt(1.0 + t * t), s = t * c;
  for (int k = 0; k < 3; k++) { /* a <- a J (columns p, q) */
    double akp = a[k][p], akq = a[k][q];
    a[k][p] = c * akp - s * akq;
    a[k][q] = s * akp + c * akq;
  }
  for (int k = 0; k < 3; k++) { /* a <- J^T a (rows p, q) */
    double apk = a[p][k], aqk = a[q][k];
    a[p][k] = c * apk - s * aqk;
    a[q][k] = s * apk + c * aqk;
  }
  a[p][q] = a[q][p] = 0.0; /* exact by the choice of t; drop the rounding */
  for (int k = 0; k < 3; k++) {
    double vkp = v[k][p], vkq = v[k][q];
    v[k][p] = c * vkp - s * vkq;
    v[k][q] = s * vkp + c * vkq;
  }
}

int anim_sym3_eigen(const double in[3][3], double out_values[3], double out_q[3][3]) {
  if (!finite9(in)) return ANIM_ENONFINITE;
  double a[3][3];
  for (int i = 0; i < 3; i++)
    for (int j = i; j < 3; j++) a[i][j] = a[j][i] = in[i][j];
  identity(out_q);
  for (int sweep = 0; sweep < JACOBI_MAX_SWEEPS; sweep++) {
    double off = a[0][1] * a[0][1] + a[0][2] * a[0][2] + a[1][2] * a[1][2];
    double diag = a[0][0] * a[0][0] + a[1][1] * a[1][1] + a[2][2] * a[2][2];
    if (off <= 1e-34 * diag) break; /* off-diagonal below rounding of the diagonal (also a = 0) */
    jacobi_rotate(a, out_q, 0, 1);
    jacobi_rotate(a, out_q, 0, 2);
    jacobi_rotate(a, out_q, 1, 2);
  }
  double d[3] = {a[0][0], a[1][1], a[2][2]};
  sort_decreasing(d, out_q, NULL);
  memcpy(out_values, d, sizeof d);
  return 0;
}

/* A Givens rotation on rows k (pivot) and i of m that zeroes m[i][k] and
 * leaves m[k][k] = hypot >= 0; u <- u G^T keeps u m unchanged. With both
 * entries zero it is the identity, so no pivot is ever divided by. */
static void givens_qr_step(double m[3][3], double u[3][3], int k, int i) {
  double a = m[k][k], b = m[i][k];
  double r = hypot(a, b);
  double c = 1.0, s = 0.0;
  if (r > 0.0) c = a / r, s = b / r;
  for (int col = 0; col < 3; col++) {
    double mk = m[k][col], mi = m[i][col];
    m[k][col] = c * mk + s * mi;
    m[i][col] = -s * mk + c * mi;
  }
  m[i][k] = 0.0;
  for (int row = 0; row < 3; row++) {
    double uk = u[row][k], ui = u[row][i];
    u[row][k] = c * uk + s * ui;
    u[row][i] = -s * uk + c * ui;
  }
}

int anim_svd3(const double a[3][3], double out_u[3][3], double out_s[3], double out_v[3][3]) {
  if (!finite9(a)) return ANIM_ENONFINITE;
  /* Scale to unit magnitude so A^T A neither overflows nor underflows. */
  double amax = 0.0;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) amax = fmax(amax, fabs(a[i][j]));
  if (amax == 0.0) {
    identity(out_u), identity(out_v);
    out_s[0] = out_s[1] = out_s[2] = 0.0;
    return 0;
  }
  double as[3][3], ata[3][3], lambda[3];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) as[i][j] = a[i][j] / amax;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) ata[i][j] = as[0][i] * as[0][j] + as[1][i] * as[1][j] + as[2][i] * as[2][j];
  (void)anim_sym3_eigen(ata, lambda, out_v); /* finite by construction */

  double m[3][3]; /* m = A V, its columns orthogonal up to rounding */
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) m[i][j] = as[i][0] * out_v[0][j] + as[i][1] * out_v[1][j] + as[i][2] * out_v[2][j];
  /* Sort by the columns' actual norms: for clustered eigenvalues of A^T A
   * they are the better-resolved order (McAdams et al., sec. 3.3). */
  double norm[3];
  for (int j = 0; j < 3; j++) norm[j] = m[0][j] * m[0][j] + m[1][j] * m[1][j] + m[2][j] * m[2][j];
  sort_decreasing(norm, m, out_v);
  identity(out_u);
  givens_qr_step(m, out_u, 0, 1);
  givens_qr_step(m, out_u, 0, 2);
  givens_qr_step(m, out_u, 1, 2);
  for (int j = 0; j < 3; j++) out_s[j] = m[j][j] * amax;
  return 0;
}
