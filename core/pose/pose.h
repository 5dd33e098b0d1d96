/*
 * pose.h: how a pose is handed to the animation functions: views (pointers
 * and a count, never owners) of local positions, velocities, rotations and
 * angular velocities per bone. Types only.
 */
#ifndef ANIM_POSE_H
#define ANIM_POSE_H

#include <stddef.h>
#include "math/anim_math.h"

/* A read-only pose: count bones; bone 0 the root in its clip's animation
 * space, the others local to their parent. Velocities in the same frames. */
typedef struct {
  size_t count;
  const vec3 *positions;
  const vec3 *velocities;
  const quat *rotations;
  const vec3 *angular_velocities;
} anim_pose_view_t;

/* A pose to write into (caller-owned arrays of count entries); bone 0 is
 * written in world space. */
typedef struct {
  size_t count;
  vec3 *positions;
  vec3 *velocities;
  quat *rotations;
  vec3 *angular_velocities;
} anim_pose_buffer_t;

#endif
