/*
 * kinematics.h: forward kinematics over a skeleton whose parents come first.
 *
 * Local transforms (relative to the parent; the root's are global) become
 * global positions, rotations, velocities and angular velocities:
 *   R_i = R_p L_i,  x_i = x_p + R_p l_i,
 *   w_i = w_p + R_p lw_i,  v_i = v_p + w_p x (R_p l_i) + R_p lv_i.
 * Arrays are views of nbones entries whose parents come first (parents[i] <
 * i, -1 for a root); nothing allocates or fails. Velocities in m/s, angular
 * velocities in rad/s about world axes (local ones: about the parent's axes).
 */
#ifndef ANIM_KINEMATICS_H
#define ANIM_KINEMATICS_H

#include "math/anim_math.h"
#include "pose/clip.h"

/* Global positions and rotations of every bone. */
void anim_fk(vec3 *out_positions, quat *out_rotations, const vec3 *local_positions, const quat *local_rotations,
             const int *parents, int nbones);

/* Global positions, rotations, velocities and angular velocities. */
void anim_fk_velocity(vec3 *out_positions, quat *out_rotations, vec3 *out_velocities, vec3 *out_angular_velocities,
                      const vec3 *local_positions, const quat *local_rotations, const vec3 *local_velocities,
                      const vec3 *local_angular_velocities, const int *parents, int nbones);

/* Global position and rotation of one bone (walks up its chain). */
void anim_fk_bone(vec3 *out_position, quat *out_rotation, const vec3 *local_positions, const quat *local_rotations,
                  const int *parents, int bone);

/* Global position, rotation, velocity and angular velocity of one bone (walks
 * up its chain, then applies the recurrence above from the root down; the
 * chain is at most ANIM_MAX_BONES long, as parents come first). */
void anim_fk_bone_velocity(vec3 *out_position, quat *out_rotation, vec3 *out_velocity, vec3 *out_angular_velocity,
                           const vec3 *local_positions, const quat *local_rotations, const vec3 *local_velocities,
                           const vec3 *local_angular_velocities, const int *parents, int bone);

/* Local transforms from global ones (the inverse of anim_fk). */
void anim_ik_local(vec3 *out_local_positions, quat *out_local_rotations, const vec3 *positions, const quat *rotations,
                   const int *parents, int nbones);

#endif
