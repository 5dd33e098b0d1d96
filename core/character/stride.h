/*
 * stride.h: stride warping (issue 34): a displayed pose's legs reaching s
 * times as far along the direction of travel, so that a clip whose root is
 * moved s times its own motion keeps its planted feet still in the world.
 *
 * A walk played with its root travelling s times as fast would slide each
 * planted foot by (s - 1) times the root's speed: in the data the planted
 * foot moves back under the body as fast as the body moves on. Scaling each
 * foot's offset from its hip along the travel direction by s makes the
 * foot move back s times as fast, which is what the faster root asks, so
 * the foot stays put (and foot locking, foot_lock.h, holds what is left).
 * Each leg is bent by two-bone IK (anim_two_bone_ik) to its scaled place,
 * the foot keeping its world rotation; a stride longer than the leg can
 * reach lowers the pelvis (the bone both legs hang from) by up to max_drop
 * metres, the rest of the way the foot falls short (the IK never
 * straightens a knee past 99% of the leg).
 *
 * What it does not do: move the root (the caller scales its travel), turn
 * the pelvis, or change the height of a foot (a swing's lift is the
 * data's). The legs are foot locking's (its chains and knee axes), one per
 * hip: a skeleton whose contacts are toe and heel warps each leg once.
 * Nothing allocates.
 */
#ifndef ANIM_STRIDE_H
#define ANIM_STRIDE_H

#include "character/foot_lock.h"

/* Scales the legs of a displayed pose (local positions and rotations, bone
 * 0 in world space, as the controller keeps them) by scale along direction
 * (world, horizontal, unit). legs: foot locking's state (its chains, knee
 * axes and pelvis; nothing of it changes). Returns 1 when the pose
 * changed, 0 when scale is 1 or there are no legs. */
int anim_stride_apply(const anim_foot_locks_t *legs, float scale, vec3 direction, float max_drop,
                      vec3 *local_positions, quat *local_rotations);

#endif
