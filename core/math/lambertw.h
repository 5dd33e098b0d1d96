/*
 * lambertw.h: the real branches of the Lambert W function, the inverse of
 * w -> w e^w, in double precision.
 *
 * W0 (the principal branch) maps [-1/e, inf) onto [-1, inf); W-1 maps
 * [-1/e, 0) onto (-inf, -1]. Both meet at W(-1/e) = -1. The spring tuner
 * (spring.c) uses W-1 to solve (1 + u) e^-u = alpha for the stiffness that
 * reaches a fraction of the start in a given time. Halley iteration from
 * series / asymptotic first guesses; results satisfy w e^w = x to a few ulp
 * (about 1e-12 relative in w except right at the branch point, where W has
 * a square-root singularity and any rounding of x is amplified).
 * Nothing here allocates.
 */
#ifndef ANIM_LAMBERTW_H
#define ANIM_LAMBERTW_H

/* W0(x) into *out_w. x must be finite and >= -1/e (values below -1/e by a
 * few ulp are taken as -1/e). 0, ANIM_ENONFINITE for NaN/inf, ANIM_EINVAL
 * below the domain. */
int anim_lambertw0(double x, double *out_w);

/* W-1(x) into *out_w. x must be in [-1/e, 0) (same rounding allowance).
 * 0, ANIM_ENONFINITE, or ANIM_EINVAL outside the domain. */
int anim_lambertwm1(double x, double *out_w);

#endif
