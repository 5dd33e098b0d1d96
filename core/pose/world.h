/*
 * world.h: the bounded world every position lives in.
 *
 * One limit, ANIM_WORLD_LIMIT metres, bounds |x|, |y| and |z| of every world
 * position: the server refuses an input beyond it (a placement, a goal, a
 * path's point, a tracked point, a pose's root; ANIM_EINVAL naming the
 * field) and holds a character that walks up to it on the boundary
 * (anim_world_confine): it may slide along it or turn back in, never cross.
 *
 * Why 10 km and why a limit at all: characters are simulated in float32,
 * whose spacing is 2^-10 m (1 mm) between 8 and 16 km, 7.8 mm at 100 km and
 * 6 cm at 1000 km. A walk at 1.5 m/s moves 25 mm a tick at 60 Hz, so past a
 * few tens of km the motion itself steps visibly, whatever the stream then
 * carries. 10 km keeps every computed position within half a millimetre.
 * The quantized stream (quantize.h) stores the root in int32 steps of 1e-4 m,
 * +-214.7 km: twenty times the limit, so a confined character always fits
 * (an origin per frame would have carried any float, but would have changed
 * every decoder for positions the simulation cannot hold well anyway).
 *
 * What it does not: know about characters (each kind's translate moves one
 * by the step anim_world_confine gives).
 */
#ifndef ANIM_WORLD_H
#define ANIM_WORLD_H

#include "math/anim_math.h"

#define ANIM_WORLD_LIMIT_METRES 10000 /* |x|, |y|, |z| of any world position */
#define ANIM_WORLD_LIMIT ((float)ANIM_WORLD_LIMIT_METRES)

/* 1 when every coordinate of p is finite and within the limit. */
static inline int anim_world_contains(vec3 p) {
  return fabsf(p.x) <= ANIM_WORLD_LIMIT && fabsf(p.y) <= ANIM_WORLD_LIMIT && fabsf(p.z) <= ANIM_WORLD_LIMIT;
}

/* The step that brings p back onto the boundary: each coordinate beyond the
 * limit clamped to it (zero for a point inside, or not finite: nothing
 * sensible to move it by). */
static inline vec3 anim_world_confine(vec3 p) {
  if (!vec3_finite(p)) return vec3_zero();
  vec3 q = vec3_make(clampf(p.x, -ANIM_WORLD_LIMIT, ANIM_WORLD_LIMIT), clampf(p.y, -ANIM_WORLD_LIMIT, ANIM_WORLD_LIMIT),
                     clampf(p.z, -ANIM_WORLD_LIMIT, ANIM_WORLD_LIMIT));
  return vec3_sub(q, p);
}

#endif
