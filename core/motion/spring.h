/*
 * spring.h: critically damped spring maths in exact closed form, and the
 * tuning of such springs (half-life for a target fraction, implicit spring
 * gains <-> ERP/CFM).
 *
 * Every spring here is critically damped and written with the half-damping
 * y = halflife_to_damping(halflife) / 2 = 2 ln2 / halflife (1/s). An offset
 * (x, v) decaying toward zero obeys x'' = -2y x' - y^2 x, whose solution is
 *   x(t) = e^-yt (x0 + (v0 + y x0) t)
 *   v(t) = e^-yt (v0 - (v0 + y x0) y t)
 * so every update is exact for any dt: no sub-stepping, no stability limit.
 * Note the half-life convention (shared with anim_math.h): the envelope
 * e^-yt halves every halflife / 2, and an offset released at rest is at
 * (1 + 2 ln2) / 4 = 0.597 of its start after one half-life.
 * Per unit mass the spring has stiffness y^2 (1/s^2) and damping 2y (1/s);
 * halflife_to_damping / damping_to_halflife live in anim_math.h.
 *
 * Functions with float state are plain maths (no failure; halflife > 0 and
 * dt >= 0 are the caller's responsibility). Tuning functions take user
 * parameters in double and return 0 or a negative ANIM_E* code.
 * Nothing here allocates.
 */
#ifndef ANIM_SPRING_H
#define ANIM_SPRING_H

#include <stddef.h>
#include <stdint.h>

#include "math/anim_math.h"

/* ---- critical-damping conversions (per unit mass) -------------------------- */

/* Stiffness (1/s^2) of the critically damped spring with this damping (1/s). */
static inline float anim_spring_damping_to_stiffness(float damping) { return 0.25f * damping * damping; }
/* Damping (1/s) that makes a spring of this stiffness (1/s^2) critical. */
static inline float anim_spring_stiffness_to_damping(float stiffness) { return 2.0f * sqrtf(stiffness); }
static inline float anim_spring_halflife_to_stiffness(float halflife) {
  return anim_spring_damping_to_stiffness(halflife_to_damping(halflife));
}
static inline float anim_spring_stiffness_to_halflife(float stiffness) {
  return damping_to_halflife(anim_spring_stiffness_to_damping(stiffness));
}

/* ---- exact decays of an offset toward zero --------------------------------- */

/* Advances the offset (*io_x, *io_v) by dt seconds of critically damped decay
 * toward zero with the given half-life (seconds). Exact for any dt >= 0. */
void anim_spring_decay(float *io_x, float *io_v, float halflife, float dt);
void anim_spring_decay_vec3(vec3 *io_x, vec3 *io_v, float halflife, float dt);
/* The same for a rotation offset *io_q (unit quaternion) and its angular
 * velocity *io_w (rad/s): the rotation vector of the shortest-arc offset
 * (q and -q give the same result) decays like a vec3 offset. */
void anim_spring_decay_quat(quat *io_q, vec3 *io_w, float halflife, float dt);

/* The decay of every spring with one half-life over one dt, computed once
 * (one exp) and applied to many: a whole pose's offsets in one tick. */
typedef struct {
  double y, e, dt; /* rate 2 ln 2 / halflife (1/s), exp(-y dt), dt (s) */
  /* The decay as a matrix: x' = xx x + xv v, v' = vx x + vv v. */
  double xx, xv, vx, vv;
  float xx_f, xv_f, vx_f, vv_f; /* the same in float: the vector lanes' precision (spring.c) */
} anim_spring_decayer_t;
void anim_spring_decayer_make(anim_spring_decayer_t *out, float halflife, float dt);
void anim_spring_decayer_vec3(const anim_spring_decayer_t *decayer, vec3 *io_x, vec3 *io_v);
/* n values of x with their velocities v, one flat loop (a pose's positions
 * seen as 3 n floats): the same decay as anim_spring_decayer_vec3's. */
void anim_spring_decayer_floats(const anim_spring_decayer_t *decayer, float *io_x, float *io_v, size_t n);
void anim_spring_decayer_quat(const anim_spring_decayer_t *decayer, quat *io_q, vec3 *io_w);
/* anim_spring_decayer_quat for an offset about +Y alone, (*io_c, 0, *io_s, 0)
 * turning at (0, *io_w, 0) (a character's facing): the same bits, without
 * the two zero axes. 0, or ANIM_ERANGE (nothing changed) when the offset is
 * too large for the series (over 145 degrees, or decaying past 180): the
 * caller decays it as a quaternion. */
int anim_spring_decayer_yaw(const anim_spring_decayer_t *decayer, float *io_c, float *io_s, float *io_w);
/* anim_spring_decayer_quat over n offsets (a pose's), ANIM_LANES at a time
 * in vectors: the same to a float's rounding (tests/test_spring.c). */
void anim_spring_decayer_quats(const anim_spring_decayer_t *decayer, quat *io_q, vec3 *io_w, size_t n);
/* The same with offset i decayed by decayers[which[i]]: a pose whose parts
 * blend at different speeds, still ANIM_LANES at a time. */
void anim_spring_decayers_quats(const anim_spring_decayer_t *decayers, const uint8_t *which, quat *io_q, vec3 *io_w,
                                size_t n);

/* ---- springs toward a goal ------------------------------------------------- */

/* The "simple spring damper": *io_x moves toward the fixed goal x_goal,
 * critically damped with the given half-life, exact over dt. */
void anim_spring_simple(float *io_x, float *io_v, float x_goal, float halflife, float dt);
void anim_spring_simple_vec3(vec3 *io_x, vec3 *io_v, vec3 x_goal, float halflife, float dt);

/* Tracking a goal that moves at constant velocity v_goal and is at x_goal at
 * the start of the step: the error (x - goal, v - v_goal) decays exactly, so
 * after the step the state has caught up with goal x_goal + v_goal dt by the
 * decay factor. */
void anim_spring_track(float *io_x, float *io_v, float x_goal, float v_goal, float halflife, float dt);
void anim_spring_track_vec3(vec3 *io_x, vec3 *io_v, vec3 x_goal, vec3 v_goal, float halflife, float dt);

/* A character-style velocity spring: the velocity *io_v approaches v_goal
 * (critically damped, acceleration *io_a is its rate) and the position *io_x
 * is the exact integral of that velocity over dt. Used to predict a
 * trajectory from a desired velocity. */
void anim_spring_character_vec3(vec3 *io_x, vec3 *io_v, vec3 *io_a, vec3 v_goal, float halflife, float dt);

/* ---- tuning ----------------------------------------------------------------- */

/* Half-life (s) with which a critically damped spring released at rest from
 * x0 reaches alpha * x0 after t seconds (0 < alpha < 1, t > 0). With u = y t
 * this solves (1 + u) e^-u = alpha, i.e. u = -1 - W-1(-alpha / e).
 * 0, ANIM_EINVAL for alpha outside (0, 1) or t <= 0, ANIM_ENONFINITE. */
int anim_spring_halflife_reaching(double *out_halflife, double alpha, double t);

/* Time (s) after which a spring of this half-life, released at rest, is at
 * alpha * x0 (the inverse of anim_spring_halflife_reaching). Errors as above. */
int anim_spring_time_reaching(double *out_t, double alpha, double halflife);

/* Half-life such that a spring starting at (x0, v0) is at exactly alpha * x0
 * after t seconds. With b = v0 t / x0 and u = y t the condition is
 * (1 + b + u) e^-u = alpha; the solution taken is u = -1 - b - W-1(-alpha
 * e^-(1+b)), the unique one on the decaying side of the response (when
 * b >= 0 it is the only one; when b < 0 and 1 + b < alpha < e^b a slower
 * spring also passes through alpha x0 while still rising, and is not chosen).
 * Needs x0 != 0, 0 < alpha < 1, t > 0. ANIM_ERANGE when no damping reaches
 * alpha x0 at t (alpha > e^b: the initial velocity carries x too far away
 * from zero), ANIM_EINVAL / ANIM_ENONFINITE for bad arguments. */
int anim_spring_halflife_reaching_with_velocity(double *out_halflife, double x0, double v0,
                                                double alpha, double t);

/* Force-law gains of the critically damped spring with this half-life acting
 * on mass (kg): stiffness k = m y^2 (N/m), damping c = 2 m y (N s/m).
 * 0 or ANIM_EINVAL (halflife <= 0, mass <= 0), ANIM_ENONFINITE. */
int anim_spring_critical_gains(double *out_stiffness, double *out_damping, double halflife, double mass);

/* An implicit (backward Euler) spring m (v1 - v0) = dt (-k x1 - c v1),
 * x1 = x0 + dt v1, is what a constraint solver computes for the velocity
 * constraint v1 + CFM F = -(ERP / dt) x0 (ODE's convention, F the constraint
 * force) with ERP = dt k / (dt k + c) and CFM = 1 / (dt k + c). Mass does not
 * enter: it is the same force law for any body. k, c >= 0, dt k + c > 0,
 * dt > 0. 0, ANIM_EINVAL, ANIM_ENONFINITE. */
int anim_spring_implicit_to_erp_cfm(double *out_erp, double *out_cfm, double stiffness,
                                    double damping, double dt);
/* The inverse: k = ERP / (dt CFM), c = (1 - ERP) / CFM. Needs 0 <= ERP <= 1,
 * CFM > 0, dt > 0. */
int anim_spring_erp_cfm_to_implicit(double *out_stiffness, double *out_damping, double erp,
                                    double cfm, double dt);
/* One step of the soft constraint on a body of mass m: solves
 * m (v1 - v0) = dt F together with v1 + CFM F = -(ERP / dt) x0, giving
 * v1 = (CFM m v0 - ERP x0) / (dt + CFM m), x1 = x0 + dt v1 (identical to the
 * implicit spring step). Arguments as above plus mass > 0; plain maths. */
void anim_spring_erp_cfm_step(double *io_x, double *io_v, double erp, double cfm, double mass, double dt);

#endif
