/*
 * foot_lock.h: planted feet held where they landed, with two-bone IK.
 *
 * Motion matching shows a database pose plus decaying inertialization
 * offsets, so a foot the data says is planted still drifts while an offset
 * decays, and the root's path is the simulation's, not the clip's. Foot
 * locking removes that slide: when a contact begins, the contact bone's
 * world position is recorded; while the contact lasts the leg is bent by
 * two-bone IK (hip, knee) so the contact bone stays there, the foot keeping
 * its world orientation; when the contact ends, or the lock would stretch
 * the leg more than unlock_radius, the foot is released (and, let go for
 * stretching, not locked again before its contact ends). The release is
 * inertialized: the foot target keeps its position and velocity and the
 * difference decays (critically damped, release_halflife), so a stretched
 * foot does not pop back. A lock stops the foot where it is shown. The chain of each contact bone is found from the skeleton: contact
 * bone (toe) <- ankle <- knee <- hip.
 *
 * Validity rules (anim_foot_locks_init): every contact bone has three
 * ancestors below the root and at most ANIM_FOOT_CHAIN_MAX bones from the
 * root down to it; unlock_radius > 0, release_halflife > 0.
 * Nothing allocates; the state is a small struct per character.
 */
#ifndef ANIM_FOOT_LOCK_H
#define ANIM_FOOT_LOCK_H

#include <stdint.h>
#include "anim_math.h"
#include "database.h"

#define ANIM_FOOT_CHAIN_MAX 24 /* bones from the root to a contact bone */

typedef struct {
  int toe, ankle, knee, hip; /* bone indices */
  int chain[ANIM_FOOT_CHAIN_MAX]; /* root .. toe, so a tick needs the FK of the leg only */
  int nchain;
  vec3 hinge;                /* the knee's bend axis in the hip's frame, learnt from the data */
  int locked;
  int released;              /* let go for stretching: no new lock before the contact ends */
  vec3 lock_position;        /* world, while locked */
  vec3 offset, offset_velocity; /* decaying offset of the target from its base (lock point or animated foot) */
  vec3 previous_toe, previous_target;
  int have_previous;
} anim_foot_lock_t;

typedef struct {
  int nfeet;
  anim_foot_lock_t feet[ANIM_MAX_CONTACTS];
  float unlock_radius;       /* m */
  float release_halflife;    /* s */
} anim_foot_locks_t;

/* Finds each contact bone's leg and its knee's bend axis (averaged over the
 * database's frames, in the hip's frame, so the knee never bends backwards
 * when the leg passes through straight). 0, or ANIM_EINVAL (a contact bone
 * without a three-bone chain above it, or bad parameters). */
int anim_foot_locks_init(anim_foot_locks_t *out, const anim_database_t *db, float unlock_radius,
                         float release_halflife);

/* Releases every lock at once, without blending (a teleport). */
void anim_foot_locks_reset(anim_foot_locks_t *locks);

/* Applies the locks to a displayed pose for one tick of dt seconds.
 * contacts: this frame's flags, one per foot. local_rotations (bone 0 in
 * world space, as the controller keeps it) are changed on the legs. Only the
 * legs' chains are transformed (no whole-pose FK). Returns 1 when a leg was
 * bent (the pose's FK, if the caller keeps one, is then stale), else 0. */
int anim_foot_locks_apply(anim_foot_locks_t *locks, const uint8_t *contacts, const vec3 *local_positions,
                          quat *local_rotations, float dt);

/* Two-bone IK: rotates the hip and knee (global rotations given, local ones
 * written) so the ankle reaches target as nearly as the leg's lengths allow
 * (never quite straight), the knee bending about hinge (world space, the
 * direction about which a positive turn bends the knee further); the ankle
 * keeps its world rotation. a, b, c: hip, knee, ankle world positions. */
void anim_two_bone_ik(quat *io_hip_local, quat *io_knee_local, quat *io_ankle_local, quat hip_parent_global,
                      quat hip_global, quat knee_global, quat ankle_global, vec3 a, vec3 b, vec3 c, vec3 target,
                      vec3 hinge);

#endif
