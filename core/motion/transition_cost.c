/*
 * transition_cost.c: the area under a decaying inertialization offset.
 *
 * Evaluated in double. The seed note's tail integral
 * e^-yt/y^2 (t v y + x y (t y + 2) + v) is right; at t = t* it simplifies,
 * since t* (v + x y) = -x, to e^-yt* (x y + v) / y^2, used here.
 */
#include <math.h>

#include "anim_error.h"
#include "motion/transition_cost.h"

static double halflife_to_y(float halflife) { return halflife_to_damping(halflife) * 0.5; }

/* t* = -x / (v + x y) when positive; -1 otherwise. */
static double zero_crossing(double x, double v, double y) {
  double j1 = v + x * y;
  if (x == 0.0 || j1 == 0.0) return -1.0;
  double t = -x / j1;
  return t > 0.0 ? t : -1.0;
}

static double cost_exact(double x, double v, double y) {
  double area = (2.0 * x * y + v) / (y * y);
  double t = zero_crossing(x, v, y);
  if (t < 0.0) return fabs(area);
  double tail = exp(-y * t) * (x * y + v) / (y * y);
  return fabs(area - tail) + fabs(tail);
}

float anim_transition_cost_exact(float x, float v, float halflife) {
  return (float)cost_exact(x, v, halflife_to_y(halflife));
}

float anim_transition_cost_exact_vec3(vec3 x, vec3 v, float halflife) {
  double y = halflife_to_y(halflife);
  return (float)(cost_exact(x.x, v.x, y) + cost_exact(x.y, v.y, y) + cost_exact(x.z, v.z, y));
}

float anim_transition_cost_approx(float x, float v, float halflife) {
  double y = halflife_to_y(halflife);
  return (float)fabs((2.0 * x * y + v) / (y * y));
}

float anim_transition_cost_approx_vec3(vec3 x, vec3 v, float halflife) {
  return anim_transition_cost_approx(x.x, v.x, halflife) + anim_transition_cost_approx(x.y, v.y, halflife) +
         anim_transition_cost_approx(x.z, v.z, halflife);
}

float anim_transition_feature(float pos, float vel, float halflife) {
  double y = halflife_to_y(halflife);
  return (float)(2.0 * pos / y + vel / (y * y));
}

vec3 anim_transition_feature_vec3(vec3 pos, vec3 vel, float halflife) {
  return vec3_make(anim_transition_feature(pos.x, vel.x, halflife), anim_transition_feature(pos.y, vel.y, halflife),
                   anim_transition_feature(pos.z, vel.z, halflife));
}

float anim_transition_zero_crossing(float x, float v, float halflife) {
  return (float)zero_crossing(x, v, halflife_to_y(halflife));
}

int anim_transition_cost_bones(float *out_cost, const vec3 *src_positions, const vec3 *src_velocities,
                               const vec3 *dst_positions, const vec3 *dst_velocities, size_t count,
                               float halflife) {
  if (!out_cost || !(halflife > 0.0f)) return ANIM_EINVAL;
  if (count > 0 && (!src_positions || !src_velocities || !dst_positions || !dst_velocities)) return ANIM_EINVAL;
  double y = halflife_to_y(halflife), sum = 0.0;
  for (size_t i = 0; i < count; i++) {
    vec3 x = vec3_sub(src_positions[i], dst_positions[i]);
    vec3 v = vec3_sub(src_velocities[i], dst_velocities[i]);
    sum += cost_exact(x.x, v.x, y) + cost_exact(x.y, v.y, y) + cost_exact(x.z, v.z, y);
  }
  if (!isfinite(sum)) return ANIM_ENONFINITE;
  *out_cost = (float)sum;
  return 0;
}
