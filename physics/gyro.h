/*
 * gyro.h: one step of a free rigid body's rotation with the gyroscopic
 * term integrated explicitly (as ODE does by default) or implicitly (the
 * seed's step after Lacoursiere), in plain C. This is the seed's
 * experiment, kept as a reference: MuJoCo steps the characters, and these
 * functions only show why an explicit gyroscopic term must not be used.
 *
 * World frame, as ODE: orientation R (a unit quaternion), angular velocity
 * w, principal inertia I0 (body frame, diagonal), I = R I0 R^T, L = I w.
 * Euler's equation I w' = tau + L x w (the gyroscopic torque L x w).
 *  - Explicit: w1 = w0 + h I^-1 (L0 x w0 + tau).
 *    Kinetic energy E = w.I w / 2 grows every step: with dw = w1 - w0,
 *    E1 - E0 = dw.I w0 + dw.I dw / 2, and dw.I w0 = h (L0 x w0).w0 = 0,
 *    so E1 = E0 + |dw|_I^2 / 2 > E0 (tau = 0), faster the faster it spins.
 *  - Implicit (backward Euler on the gyroscopic term, linearized in L0):
 *    I w1 = I w0 + h (L0 x w1 + tau), i.e. (I - h [L0]x) w1 = I w0 + h tau,
 *    the seed's modified inertia I~ = I - h [L0]x (non-symmetric, always
 *    invertible: its symmetric part is I). With tau = 0, dotting with w1:
 *    w1.I w1 = w1.I w0 + h w1.(L0 x w1) = w1.I w0 <= |w1|_I |w0|_I, so
 *    |w1|_I <= |w0|_I: the kinetic energy never increases.
 * The orientation then turns by h w1 about w1 (R1 = exp(h w1) R0), which
 * leaves w1.I w1 unchanged (the rotation's axis is w1 itself), so the
 * energy statements hold for the whole step.
 * The seed's torque form tau~ = I I~^-1 (L0 / h + tau) - L0 / h gives the
 * same w1 through the explicit update (checked in the test).
 */
#ifndef ANIM_PHYSICS_GYRO_H
#define ANIM_PHYSICS_GYRO_H

typedef struct {
  double q[4]; /* orientation, w x y z */
  double w[3]; /* angular velocity, world frame, rad/s */
} anim_gyro_state_t;

/* One step of h seconds with torque (world, N m; may be NULL for none). */
void anim_gyro_step_explicit(anim_gyro_state_t *io_state, const double inertia[3], const double *torque, double h);
void anim_gyro_step_implicit(anim_gyro_state_t *io_state, const double inertia[3], const double *torque, double h);

/* The seed's equivalent torque for the explicit update (see the top). */
void anim_gyro_implicit_torque(double out_torque[3], const anim_gyro_state_t *state, const double inertia[3],
                               const double *torque, double h);

/* Kinetic energy w.I w / 2 (J) and angular momentum |I w| (N m s). */
double anim_gyro_energy(const anim_gyro_state_t *state, const double inertia[3]);
double anim_gyro_momentum(const anim_gyro_state_t *state, const double inertia[3]);

#endif
