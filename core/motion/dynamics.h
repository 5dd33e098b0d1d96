/*
 * dynamics.h: second-order dynamics, a filter that gives procedural motion a
 * character: y + k1 y' + k2 y'' = x + k3 x'  (x the input, y the output).
 *
 * Parameters (f, zeta, r): f the natural frequency (Hz), zeta the damping
 * ratio (0 undamped, < 1 overshoots, 1 critical, > 1 sluggish), r the initial
 * response (0 eases in, 1 follows at once, > 1 overshoots, < 0 anticipates):
 *   k1 = zeta / (pi f),  k2 = 1 / (2 pi f)^2,  k3 = r zeta / (2 pi f).
 *
 * Discretisation: exact, not semi-implicit Euler. Over one step the input is
 * taken as the straight line that ends at the new x with slope x' (the given
 * velocity, or (x - x_prev) / dt). For such an input the ODE has the closed
 * form y = x(t) + (k3 - k1) x' + e(t), where e solves the homogeneous system
 * e'' + 2 zeta w e' + w^2 e = 0 (w = 2 pi f) and is advanced by its exact
 * transition matrix. Its eigenvalues e^(lambda dt) have modulus e^(-zeta w dt)
 * < 1 for every dt > 0 and zeta > 0, so any frame time, a lag spike of
 * seconds, or f far above the frame rate is stable and exact at the frames;
 * no sub-steps, one exp and one cos/sin (or two exps) per update.
 * Why not the semi-implicit Euler step (y += T v; v += T (x + k3 x' - y -
 * k1 v) / k2): its transition matrix [[1, T], [-T/k2, 1 - T(T + k1)/k2]] has
 * trace 2 - T(T + k1)/k2 and determinant 1 - T k1/k2; by the Jury conditions
 * it is stable iff T^2 + 2 k1 T < 4 k2 (and T < 2 k2/k1, which is implied),
 * i.e. T < T_crit = sqrt(4 k2 + k1^2) - k1 = (sqrt(1 + zeta^2) - zeta)/(pi f):
 * 4.4 ms for f = 30 Hz, zeta = 1; a 60 Hz frame breaks it, and a 10 s spike
 * would need thousands of sub-steps. anim_dynamics_euler_critical_dt gives
 * that limit for callers that use Euler elsewhere.
 *
 * Angles: the angle filter works on the shortest angular difference (input
 * taken at its representation nearest the output; input velocity from the
 * wrapped difference of successive inputs) and keeps its output in [-pi, pi].
 * States are small caller-owned structs; nothing allocates.
 */
#ifndef ANIM_DYNAMICS_H
#define ANIM_DYNAMICS_H

#include "math/anim_math.h"

/* Validity: f > 0, zeta >= 0, all finite (anim_dynamics_params_make). */
typedef struct {
  float f, zeta, r;
  double k1, k2, k3; /* seconds, seconds^2, seconds */
} anim_dynamics_params_t;

typedef struct {
  float y, v;   /* output and its rate */
  float x_prev; /* last input, for the velocity estimate */
} anim_dynamics_t;

typedef struct {
  vec3 y, v, x_prev;
} anim_dynamics_vec3_t;

typedef struct {
  float y, v, x_prev; /* radians, y and x_prev in [-pi, pi] */
} anim_dynamics_angle_t;

/* Fills *out from (f, zeta, r). 0, ANIM_EINVAL (NULL, f <= 0, zeta < 0),
 * ANIM_ENONFINITE. */
int anim_dynamics_params_make(anim_dynamics_params_t *out, float f, float zeta, float r);

/* The largest stable step of semi-implicit Euler for these parameters (s):
 * sqrt(4 k2 + k1^2) - k1. Not used by the filters below. */
double anim_dynamics_euler_critical_dt(const anim_dynamics_params_t *p);

/* Start at rest on input x0. */
void anim_dynamics_reset(anim_dynamics_t *s, float x0);
void anim_dynamics_vec3_reset(anim_dynamics_vec3_t *s, vec3 x0);
void anim_dynamics_angle_reset(anim_dynamics_angle_t *s, float x0);

/* Advances by dt seconds toward input x, estimating x' = (x - x_prev) / dt.
 * dt == 0 changes nothing (the next step sees the whole input change).
 * (With a changing input, steps far below a millisecond amplify rounding in
 * the estimated velocity; pass the velocity if such steps are expected.)
 * 0, ANIM_EINVAL (NULL, dt < 0), ANIM_ENONFINITE (x or dt not finite); the
 * state is unchanged on error. */
int anim_dynamics_update(anim_dynamics_t *s, const anim_dynamics_params_t *p, float x, float dt);
int anim_dynamics_vec3_update(anim_dynamics_vec3_t *s, const anim_dynamics_params_t *p, vec3 x, float dt);
int anim_dynamics_angle_update(anim_dynamics_angle_t *s, const anim_dynamics_params_t *p, float x, float dt);

/* The same with the input velocity xd given (units of x per second). */
int anim_dynamics_update_with_velocity(anim_dynamics_t *s, const anim_dynamics_params_t *p, float x, float xd,
                                       float dt);
int anim_dynamics_vec3_update_with_velocity(anim_dynamics_vec3_t *s, const anim_dynamics_params_t *p, vec3 x,
                                            vec3 xd, float dt);
int anim_dynamics_angle_update_with_velocity(anim_dynamics_angle_t *s, const anim_dynamics_params_t *p, float x,
                                             float xd, float dt);

#endif
