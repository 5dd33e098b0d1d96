/*
 * lambertw.c: Lambert W branches 0 and -1 by Halley iteration.
 *
 * First guesses: near the branch point the series in p = sqrt(2(e x + 1))
 * (W = -1 +- p - p^2/3 +- 11/72 p^3), for large |ln| the asymptotic
 * L1 - L2 + L2/L1, and in between Winitzki's log(1+x) formula for W0. From
 * there Halley's method (cubic convergence) needs at most a handful of steps.
 */
#include <math.h>

#include "anim_error.h"
#include "math/lambertw.h"

#define E_CONST 2.71828182845904523536
#define INV_E 0.36787944117144232160
#define MAX_ITERATIONS 32

/* Halley's iteration on f(w) = w e^w - x, stopping when the step is below
 * a few ulp of w. */
static double halley(double x, double w) {
  for (int i = 0; i < MAX_ITERATIONS; i++) {
    double ew = exp(w);
    double f = w * ew - x;
    double wp1 = w + 1.0;
    /* At w = -1 the derivative vanishes: we are on the branch point. */
    if (wp1 == 0.0) return w;
    double denom = ew * wp1 - (w + 2.0) * f / (2.0 * wp1);
    if (denom == 0.0 || !isfinite(denom)) return w;
    double step = f / denom;
    w -= step;
    if (fabs(step) <= 4e-16 * (1.0 + fabs(w))) break;
  }
  return w;
}

/* Distance of x above the branch point -1/e, or -1 when below it by more
 * than rounding allows; sets *at_branch when x is (numerically) -1/e. */
static int check_branch_domain(double x, int *at_branch) {
  double d = x + INV_E;
  *at_branch = 0;
  if (d < -4e-16) return ANIM_EINVAL;
  if (d <= 4e-17) *at_branch = 1;
  return 0;
}

int anim_lambertw0(double x, double *out_w) {
  int at_branch, rc;
  if (!isfinite(x)) return ANIM_ENONFINITE;
  if ((rc = check_branch_domain(x, &at_branch)) < 0) return rc;
  if (at_branch) { *out_w = -1.0; return 0; }
  if (x == 0.0) { *out_w = 0.0; return 0; }
  double w;
  if (x < -0.25) {
    double p = sqrt(2.0 * (E_CONST * x + 1.0));
    w = -1.0 + p * (1.0 + p * (-1.0 / 3.0 + p * (11.0 / 72.0)));
  } else if (x < 20.0) {
    double l = log1p(x);
    w = l * (1.0 - log1p(l) / (2.0 + l));
  } else {
    double l1 = log(x), l2 = log(l1);
    w = l1 - l2 + l2 / l1;
  }
  *out_w = halley(x, w);
  return 0;
}

int anim_lambertwm1(double x, double *out_w) {
  int at_branch, rc;
  if (!isfinite(x)) return ANIM_ENONFINITE;
  if (x >= 0.0) return ANIM_EINVAL;
  if ((rc = check_branch_domain(x, &at_branch)) < 0) return rc;
  if (at_branch) { *out_w = -1.0; return 0; }
  double w;
  if (x < -0.25) {
    double p = sqrt(2.0 * (E_CONST * x + 1.0));
    w = -1.0 - p * (1.0 + p * (1.0 / 3.0 + p * (11.0 / 72.0)));
  } else {
    /* Asymptotic as x -> 0-: W-1 ~ L1 - L2 + L2/L1, L1 = ln(-x), L2 = ln(-L1). */
    double l1 = log(-x), l2 = log(-l1);
    w = l1 - l2 + l2 / l1;
  }
  *out_w = halley(x, w);
  return 0;
}
