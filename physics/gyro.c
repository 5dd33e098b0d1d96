/* gyro.c: explicit and implicit gyroscopic steps of a free body (gyro.h derives them). */
#include "gyro.h"

#include <math.h>
#include <string.h>

/* Rotation matrix of the unit quaternion q (w x y z), row-major. */
static void quat_to_matrix(double R[9], const double q[4]) {
  double w = q[0], x = q[1], y = q[2], z = q[3];
  R[0] = 1 - 2 * (y * y + z * z), R[1] = 2 * (x * y - w * z), R[2] = 2 * (x * z + w * y);
  R[3] = 2 * (x * y + w * z), R[4] = 1 - 2 * (x * x + z * z), R[5] = 2 * (y * z - w * x);
  R[6] = 2 * (x * z - w * y), R[7] = 2 * (y * z + w * x), R[8] = 1 - 2 * (x * x + y * y);
}

/* World inertia I = R diag(I0) R^T. */
static void world_inertia(double I[9], const double q[4], const double I0[3]) {
  double R[9];
  quat_to_matrix(R, q);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) I[3 * i + j] = R[3 * i] * I0[0] * R[3 * j] + R[3 * i + 1] * I0[1] * R[3 * j + 1] + R[3 * i + 2] * I0[2] * R[3 * j + 2];
}

static void mat_vec(double out[3], const double M[9], const double v[3]) {
  double r[3];
  for (int i = 0; i < 3; i++) r[i] = M[3 * i] * v[0] + M[3 * i + 1] * v[1] + M[3 * i + 2] * v[2];
  memcpy(out, r, sizeof r);
}

static void cross(double out[3], const double a[3], const double b[3]) {
  double r[3] = {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
  memcpy(out, r, sizeof r);
}

/* Solves M x = b for a general 3x3 M (Cramer's rule: M is small and, here, well conditioned). */
static void solve3(double x[3], const double M[9], const double b[3]) {
  double c0[3] = {M[0], M[3], M[6]}, c1[3] = {M[1], M[4], M[7]}, c2[3] = {M[2], M[5], M[8]}, t[3];
  cross(t, c1, c2);
  double det = c0[0] * t[0] + c0[1] * t[1] + c0[2] * t[2];
  double r[3];
  /* x_i = det(M with column i replaced by b) / det(M) */
  cross(t, c1, c2), r[0] = (b[0] * t[0] + b[1] * t[1] + b[2] * t[2]) / det;
  cross(t, b, c2), r[1] = (c0[0] * t[0] + c0[1] * t[1] + c0[2] * t[2]) / det;
  cross(t, c1, b), r[2] = (c0[0] * t[0] + c0[1] * t[1] + c0[2] * t[2]) / det;
  memcpy(x, r, sizeof r);
}

/* R1 = exp(h w) R0 on the quaternion. */
static void rotate(double q[4], const double w[3], double h) {
  double a = h * sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
  if (a < 1e-300) return;
  double s = sin(0.5 * a) / (a / h), d[4] = {cos(0.5 * a), s * w[0], s * w[1], s * w[2]};
  double r[4] = {d[0] * q[0] - d[1] * q[1] - d[2] * q[2] - d[3] * q[3], d[0] * q[1] + d[1] * q[0] + d[2] * q[3] - d[3] * q[2],
                 d[0] * q[2] - d[1] * q[3] + d[2] * q[0] + d[3] * q[1], d[0] * q[3] + d[1] * q[2] - d[2] * q[1] + d[3] * q[0]};
  double n = sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + r[3] * r[3]);
  for (int i = 0; i < 4; i++) q[i] = r[i] / n;
}

void anim_gyro_step_explicit(anim_gyro_state_t *io_state, const double inertia[3], const double *torque, double h) {
  double I[9], L[3], t[3], dw[3];
  world_inertia(I, io_state->q, inertia);
  mat_vec(L, I, io_state->w);
  cross(t, L, io_state->w); /* the gyroscopic torque L x w */
  if (torque)
    for (int k = 0; k < 3; k++) t[k] += torque[k];
  solve3(dw, I, t);
  for (int k = 0; k < 3; k++) io_state->w[k] += h * dw[k];
  rotate(io_state->q, io_state->w, h);
}

/* The modified inertia I~ = I - h [L]x (row-major). */
static void modified_inertia(double It[9], const double I[9], const double L[3], double h) {
  memcpy(It, I, sizeof(double) * 9);
  It[1] -= h * -L[2], It[2] -= h * L[1];
  It[3] -= h * L[2], It[5] -= h * -L[0];
  It[6] -= h * -L[1], It[7] -= h * L[0];
}

void anim_gyro_step_implicit(anim_gyro_state_t *io_state, const double inertia[3], const double *torque, double h) {
  double I[9], It[9], L[3], rhs[3];
  world_inertia(I, io_state->q, inertia);
  mat_vec(L, I, io_state->w);
  modified_inertia(It, I, L, h);
  for (int k = 0; k < 3; k++) rhs[k] = L[k] + (torque ? h * torque[k] : 0.0);
  solve3(io_state->w, It, rhs);
  rotate(io_state->q, io_state->w, h);
}

void anim_gyro_implicit_torque(double out_torque[3], const anim_gyro_state_t *state, const double inertia[3],
                               const double *torque, double h) {
  double I[9], It[9], L[3], rhs[3], x[3];
  world_inertia(I, state->q, inertia);
  mat_vec(L, I, state->w);
  modified_inertia(It, I, L, h);
  for (int k = 0; k < 3; k++) rhs[k] = L[k] / h + (torque ? torque[k] : 0.0);
  solve3(x, It, rhs);
  mat_vec(out_torque, I, x);
  for (int k = 0; k < 3; k++) out_torque[k] -= L[k] / h;
}

double anim_gyro_energy(const anim_gyro_state_t *state, const double inertia[3]) {
  double I[9], L[3];
  world_inertia(I, state->q, inertia);
  mat_vec(L, I, state->w);
  return 0.5 * (L[0] * state->w[0] + L[1] * state->w[1] + L[2] * state->w[2]);
}

double anim_gyro_momentum(const anim_gyro_state_t *state, const double inertia[3]) {
  double I[9], L[3];
  world_inertia(I, state->q, inertia);
  mat_vec(L, I, state->w);
  return sqrt(L[0] * L[0] + L[1] * L[1] + L[2] * L[2]);
}
