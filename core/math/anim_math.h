/*
 * anim_math.h: the small vector and quaternion algebra of the animation core.
 *
 * Plain structs passed by value and static inline functions named for the
 * operation, so the animation code reads like the maths it implements.
 * Conventions: Y is up; quaternions are unit (w, x, y, z) and rotate vectors
 * as q * v * q^-1; angles are radians, positions metres, time seconds.
 * Nothing here allocates or fails.
 */
#ifndef ANIM_MATH_H
#define ANIM_MATH_H

#include <math.h>

#define ANIM_PI 3.14159265358979323846f
#define ANIM_LN2 0.69314718055994530942f

typedef struct { float x, y, z; } vec3;
typedef struct { float w, x, y, z; } quat;

static inline vec3 vec3_make(float x, float y, float z) { vec3 v = {x, y, z}; return v; }
static inline vec3 vec3_zero(void) { return vec3_make(0.0f, 0.0f, 0.0f); }
static inline vec3 vec3_add(vec3 a, vec3 b) { return vec3_make(a.x + b.x, a.y + b.y, a.z + b.z); }
static inline vec3 vec3_sub(vec3 a, vec3 b) { return vec3_make(a.x - b.x, a.y - b.y, a.z - b.z); }
static inline vec3 vec3_scale(vec3 a, float s) { return vec3_make(a.x * s, a.y * s, a.z * s); }
static inline vec3 vec3_mul(vec3 a, vec3 b) { return vec3_make(a.x * b.x, a.y * b.y, a.z * b.z); }
static inline vec3 vec3_neg(vec3 a) { return vec3_make(-a.x, -a.y, -a.z); }
static inline float vec3_dot(vec3 a, vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static inline float vec3_length(vec3 a) { return sqrtf(vec3_dot(a, a)); }
static inline int vec3_finite(vec3 v) { return isfinite(v.x) && isfinite(v.y) && isfinite(v.z); }
/* 1 when every one of values[0..n) is finite: validating a parameter struct
 * gathers its floats in an array and asks once (ANIM_ENONFINITE if not). */
static inline int anim_floats_finite(const float *values, int n) {
  for (int i = 0; i < n; i++)
    if (!isfinite(values[i])) return 0;
  return 1;
}
static inline vec3 vec3_lerp(vec3 a, vec3 b, float t) {
  return vec3_add(a, vec3_scale(vec3_sub(b, a), t));
}
static inline vec3 vec3_cross(vec3 a, vec3 b) {
  return vec3_make(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
/* a / |a|, or the zero vector when |a| is below eps. */
static inline vec3 vec3_normalize(vec3 a) {
  float len = vec3_length(a);
  return len > 1e-8f ? vec3_scale(a, 1.0f / len) : vec3_zero();
}

static inline quat quat_make(float w, float x, float y, float z) { quat q = {w, x, y, z}; return q; }
static inline quat quat_identity(void) { return quat_make(1.0f, 0.0f, 0.0f, 0.0f); }
static inline quat quat_conj(quat q) { return quat_make(q.w, -q.x, -q.y, -q.z); }
/* Inverse of a unit quaternion. */
static inline quat quat_inv(quat q) { return quat_conj(q); }
static inline quat quat_neg(quat q) { return quat_make(-q.w, -q.x, -q.y, -q.z); }
static inline float quat_dot(quat a, quat b) { return a.w * b.w + a.x * b.x + a.y * b.y + a.z * b.z; }
static inline quat quat_mul(quat a, quat b) {
  return quat_make(a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
                   a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
                   a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
                   a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w);
}
static inline quat quat_normalize(quat q) {
  float len = sqrtf(quat_dot(q, q));
  if (len < 1e-12f) return quat_identity();
  float s = 1.0f / len;
  return quat_make(q.w * s, q.x * s, q.y * s, q.z * s);
}
/* The same rotation with w >= 0 (the short way round). */
static inline quat quat_abs(quat q) { return q.w < 0.0f ? quat_neg(q) : q; }
/* a^-1 * b */
static inline quat quat_inv_mul(quat a, quat b) { return quat_mul(quat_inv(a), b); }
/* a * b^-1 */
static inline quat quat_mul_inv(quat a, quat b) { return quat_mul(a, quat_inv(b)); }

static inline vec3 quat_mul_vec3(quat q, vec3 v) {
  vec3 u = vec3_make(q.x, q.y, q.z);
  vec3 t = vec3_scale(vec3_cross(u, v), 2.0f);
  return vec3_add(vec3_add(v, vec3_scale(t, q.w)), vec3_cross(u, t));
}
static inline vec3 quat_inv_mul_vec3(quat q, vec3 v) { return quat_mul_vec3(quat_inv(q), v); }

/* Rotation of angle radians about a unit axis. */
static inline quat quat_from_angle_axis(float angle, vec3 axis) {
  float c = cosf(angle * 0.5f), s = sinf(angle * 0.5f);
  return quat_make(c, s * axis.x, s * axis.y, s * axis.z);
}

/* exp/log maps between unit quaternions and half-angle-axis vectors. */
static inline quat quat_exp(vec3 v) {
  float halfangle = vec3_length(v);
  if (halfangle < 1e-8f) return quat_normalize(quat_make(1.0f, v.x, v.y, v.z));
  float c = cosf(halfangle), s = sinf(halfangle) / halfangle;
  return quat_make(c, s * v.x, s * v.y, s * v.z);
}
static inline vec3 quat_log(quat q) {
  float len = sqrtf(q.x * q.x + q.y * q.y + q.z * q.z);
  if (len < 1e-8f) return vec3_make(q.x, q.y, q.z);
  float halfangle = atan2f(len, q.w);
  return vec3_scale(vec3_make(q.x, q.y, q.z), halfangle / len);
}
/* Rotation vector (axis * angle, radians) <-> quaternion. */
static inline quat quat_from_scaled_angle_axis(vec3 v) { return quat_exp(vec3_scale(v, 0.5f)); }
static inline vec3 quat_to_scaled_angle_axis(quat q) { return vec3_scale(quat_log(q), 2.0f); }

/* Shortest-path normalized lerp; adequate between close rotations. */
static inline quat quat_nlerp_shortest(quat a, quat b, float t) {
  if (quat_dot(a, b) < 0.0f) b = quat_neg(b);
  return quat_normalize(quat_make(a.w + (b.w - a.w) * t, a.x + (b.x - a.x) * t,
                                  a.y + (b.y - a.y) * t, a.z + (b.z - a.z) * t));
}
/* Shortest-path spherical interpolation. */
static inline quat quat_slerp_shortest(quat a, quat b, float t) {
  if (quat_dot(a, b) < 0.0f) b = quat_neg(b);
  float d = quat_dot(a, b);
  if (d > 0.9995f) return quat_nlerp_shortest(a, b, t);
  float theta = acosf(d), s = sinf(theta);
  float wa = sinf((1.0f - t) * theta) / s, wb = sinf(t * theta) / s;
  return quat_make(wa * a.w + wb * b.w, wa * a.x + wb * b.x, wa * a.y + wb * b.y, wa * a.z + wb * b.z);
}

/* Angular velocity (radians/s, world axes) that turns a into b over dt seconds. */
static inline vec3 quat_angular_velocity(quat a, quat b, float dt) {
  return vec3_scale(quat_to_scaled_angle_axis(quat_abs(quat_mul_inv(b, a))), 1.0f / dt);
}

/* The angle (rad) about +Y of q's facing: its +Z axis on the ground. */
static inline float quat_yaw_angle(quat q) {
  vec3 fwd = quat_mul_vec3(q, vec3_make(0.0f, 0.0f, 1.0f));
  return atan2f(fwd.x, fwd.z);
}
/* Rotation about +Y only that best matches q's facing. */
static inline quat quat_yaw(quat q) { return quat_from_angle_axis(quat_yaw_angle(q), vec3_make(0.0f, 1.0f, 0.0f)); }

static inline float clampf(float x, float lo, float hi) { return x < lo ? lo : (x > hi ? hi : x); }
static inline float squaref(float x) { return x * x; }

/* Critically damped spring constants: half-life (s) <-> damping (1/s). */
static inline float halflife_to_damping(float halflife) { return (4.0f * ANIM_LN2) / (halflife + 1e-8f); }
static inline float damping_to_halflife(float damping) { return (4.0f * ANIM_LN2) / (damping + 1e-8f); }

#endif
