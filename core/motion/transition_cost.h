/*
 * transition_cost.h: how much an inertialized transition moves the pose, as
 * a cost for motion matching.
 *
 * A transition leaves an offset x (source - destination) with velocity v
 * that decays as x(t) = e^-yt (x + (v + x y) t), y = halflife_to_damping(h)/2.
 * Its total displacement is the area  D = int_0^inf |x(t)| dt:
 *   - the signed area is  A = (2 x y + v) / y^2;
 *   - x(t) crosses zero once, at t* = -x / (v + x y), when t* > 0 (x and
 *     v + x y of opposite signs); then with the tail beyond t*
 *     B = e^-y t* (x y + v) / y^2,  D = |A - B| + |B|; otherwise D = |A|.
 * The approximation |A| ignores the crossing, so |A| <= D always, with
 * equality when there is no crossing. |A| is a difference of the feature
 * 2 pos / y + vel / y^2 of source and destination, which is what lets a
 * nearest-neighbour search minimise it.
 * halflife > 0 is the caller's responsibility; nothing allocates or fails
 * except the bone sum, which checks its arguments.
 */
#ifndef ANIM_TRANSITION_COST_H
#define ANIM_TRANSITION_COST_H

#include <stddef.h>

#include "math/anim_math.h"

/* Exact int_0^inf |x(t)| dt (metres * seconds for positions). */
float anim_transition_cost_exact(float x, float v, float halflife);
/* Sum of the exact cost of the three components. */
float anim_transition_cost_exact_vec3(vec3 x, vec3 v, float halflife);

/* |(2 x y + v) / y^2|, and its sum over components. */
float anim_transition_cost_approx(float x, float v, float halflife);
float anim_transition_cost_approx_vec3(vec3 x, vec3 v, float halflife);

/* The feature 2 pos / y + vel / y^2 whose source-destination difference has
 * absolute value anim_transition_cost_approx. */
float anim_transition_feature(float pos, float vel, float halflife);
vec3 anim_transition_feature_vec3(vec3 pos, vec3 vel, float halflife);

/* Time t* > 0 at which the offset crosses zero, or a negative value when it
 * never does (also when v + x y = 0 or x = 0). */
float anim_transition_zero_crossing(float x, float v, float halflife);

/* Exact cost of a transition from src to dst summed over count bones (and
 * their three axes): offsets src - dst in positions and velocities. Arrays
 * are read-only views of count entries. 0, ANIM_EINVAL (NULL array with
 * count > 0, halflife <= 0), ANIM_ENONFINITE (non-finite result). */
int anim_transition_cost_bones(float *out_cost, const vec3 *src_positions, const vec3 *src_velocities,
                               const vec3 *dst_positions, const vec3 *dst_velocities, size_t count,
                               float halflife);

#endif
