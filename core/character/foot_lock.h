/*
 * foot_lock.h: planted feet held where they landed, with two-bone IK, and
 * re-planted with a visible step when the animation moves on without them.
 *
 * Motion matching shows a database pose plus decaying inertialization
 * offsets, so a foot the data says is planted still drifts while an offset
 * decays, and after a transition the new clip may put the planted foot
 * somewhere else. Each foot is in one of three states:
 *  - FREE: the foot follows the animation (plus an offset left by the last
 *    release, decaying critically damped with release_halflife, so a release
 *    does not pop);
 *  - PLANTED: the contact bone is held where it was planted; the leg is bent
 *    by two-bone IK (hip, knee) so it stays there, the foot keeping its world
 *    orientation; its height follows the animation (the toe rolls);
 *  - STEPPING: the lock and the animation disagreed too much (the animated
 *    contact bone more than unlock_radius from the planted point), so the
 *    foot steps over step_seconds along an arc (at most step_height high,
 *    half the distance for short steps) from where it was held to where the
 *    animation has it, and plants again there if the data still says
 *    contact. It is never dragged while planted.
 * A FREE foot plants where it is shown when its frame's data says contact;
 * the data lifting the foot frees it. The planted flags
 * (anim_foot_locks_contacts) describe the displayed feet, so a caller that
 * reports contacts reports what is shown.
 *
 * On the ground (anim_foot_locks_ground; a character whose pose is the
 * data's, not a fit's), also:
 *  - a foot plants only once it is down: no higher than the data's own
 *    planted height (the 95th percentile over its contact frames) plus 1 cm;
 *    a foot an inertialization offset holds up (less than 8 cm) lands,
 *    critically damped, and a planted toe is kept down the same way;
 *  - the pelvis (the bone both legs hang from) comes down, at most max_drop,
 *    when a planted foot is out of the leg's reach, at once as far as
 *    needed and back up critically damped; a foot that would need more, or
 *    is out of reach sideways, steps instead of being dragged;
 *  - a foot does not plant where the pelvis would have to drop at once.
 *
 * The chain of each contact bone is found from the skeleton: contact bone
 * (toe) <- ankle <- knee <- hip.
 *
 * Validity rules (anim_foot_locks_init): every contact bone has three
 * ancestors below the root and at most ANIM_FOOT_CHAIN_MAX bones from the
 * root down to it; unlock_radius > 0, release_halflife > 0; max_drop >= 0
 * (anim_foot_locks_ground).
 * Nothing allocates; the state is a small struct per character.
 */
#ifndef ANIM_FOOT_LOCK_H
#define ANIM_FOOT_LOCK_H

#include <stdint.h>
#include "math/anim_math.h"
#include "database/database.h"

#define ANIM_FOOT_CHAIN_MAX 24 /* bones from the root to a contact bone */

#define ANIM_FOOT_STEP_SECONDS 0.2f /* a re-planting step's duration, s */
#define ANIM_FOOT_STEP_HEIGHT 0.06f /* its highest lift, m */
#define ANIM_FOOT_MAX_DROP 0.05f    /* a default for anim_foot_locks_ground: how far the pelvis may come down, m */

/* Whether and how a character's feet are locked: a part of the database
 * controller's, the learned one's (controller.h) and the pose fitter's
 * (pose_fit.h) parameters; each has its own defaults. */
typedef struct {
  int enabled;            /* hold planted feet with two-bone IK */
  float unlock_radius;    /* m a lock may stretch before it lets go */
  float release_halflife; /* s, blend back after a release */
} anim_foot_lock_params_t;

/* 0 when the locking is off, or on with unlock_radius > 0 and
 * release_halflife > 0; else ANIM_EINVAL (NaN included). */
int anim_foot_lock_params_validate(const anim_foot_lock_params_t *params);

typedef enum { ANIM_FOOT_FREE = 0, ANIM_FOOT_PLANTED = 1, ANIM_FOOT_STEPPING = 2 } anim_foot_state_t;

typedef struct {
  int toe, ankle, knee, hip; /* bone indices */
  int chain[ANIM_FOOT_CHAIN_MAX]; /* root .. toe, so a tick needs the FK of the leg only */
  int nchain;
  vec3 hinge;                /* the knee's bend axis in the hip's frame, learnt from the data */
  float plant_height;        /* m: on the ground, the contact bone plants no higher than this */
  int pelvis_at;             /* the pelvis's index in chain (when there is one) */
  anim_foot_state_t state;
  vec3 lock_position;        /* world: PLANTED, where the contact bone is held (its y unused) */
  vec3 step_from;            /* world: STEPPING, where the step began */
  float step_time, step_lift; /* STEPPING: s since it began; m, its highest lift */
  vec3 offset, offset_velocity; /* FREE: decaying offset of the target from the animated foot */
  vec3 previous_toe, previous_target;
  int have_previous;
} anim_foot_lock_t;

typedef struct {
  int nfeet;
  anim_foot_lock_t feet[ANIM_MAX_CONTACTS];
  float unlock_radius;       /* m */
  float release_halflife;    /* s */
  float step_seconds;        /* s, ANIM_FOOT_STEP_SECONDS unless changed after init */
  float step_height;         /* m, ANIM_FOOT_STEP_HEIGHT unless changed after init */
  int on_ground;             /* anim_foot_locks_ground was called */
  float max_drop;            /* m, how far the pelvis may come down (0 unless on the ground) */
  int pelvis;                /* bone every leg hangs from (below the root), or -1 */
  float drop, drop_velocity; /* m, m/s: how far the pelvis is down */
} anim_foot_locks_t;

/* Finds each contact bone's leg, its knee's bend axis (averaged over the
 * database's frames, in the hip's frame, so the knee never bends backwards
 * when the leg passes through straight) and its planting height (from the
 * data's contact frames). 0, or ANIM_EINVAL (a contact bone without a
 * three-bone chain above it, or bad parameters). */
int anim_foot_locks_init(anim_foot_locks_t *out, const anim_database_t *db, float unlock_radius,
                         float release_halflife);

/* Plants feet on the ground from now on (see above), the pelvis coming
 * down at most max_drop metres. 0, or ANIM_EINVAL (max_drop < 0 or not
 * finite). */
int anim_foot_locks_ground(anim_foot_locks_t *locks, float max_drop);

/* Releases every lock at once, without blending (a teleport). */
void anim_foot_locks_reset(anim_foot_locks_t *locks);

/* Moves every world-space point the locks hold by step (metres), for a
 * character moved as a whole (held on the world's boundary): planted feet
 * stay planted relative to it instead of pulling the legs back. */
void anim_foot_locks_translate(anim_foot_locks_t *locks, vec3 step);

/* Applies the locks to a displayed pose for one tick of dt seconds.
 * contacts: this frame's flags in the data, one per foot. local_rotations
 * (bone 0 in world space, as the controller keeps it) are changed on the
 * legs, local_positions on the pelvis when it comes down. Only the legs'
 * chains are transformed (no whole-pose FK). Returns 1 when the pose was
 * changed (the pose's FK, if the caller keeps one, is then stale), else 0. */
int anim_foot_locks_apply(anim_foot_locks_t *locks, const uint8_t *contacts, vec3 *local_positions,
                          quat *local_rotations, float dt);

/* The feet shown planted after the last apply: bit i for contact i. */
uint32_t anim_foot_locks_contacts(const anim_foot_locks_t *locks);

/* Whether the locks have let go: every foot free, its offset from the
 * animation under ANIM_FOOT_SETTLED metres and the pelvis up as near. A
 * caller letting go gently (apply with no contacts until this says so)
 * can then stop applying them, and reset them, moving nothing visibly. */
#define ANIM_FOOT_SETTLED 1e-3f
int anim_foot_locks_let_go(const anim_foot_locks_t *locks);

/* Two-bone IK: rotates the hip and knee (global rotations given, local ones
 * written) so the ankle reaches target as nearly as the leg's lengths allow
 * (never quite straight), the knee bending about hinge (world space, the
 * direction about which a positive turn bends the knee further); the ankle
 * keeps its world rotation. a, b, c: hip, knee, ankle world positions. */
void anim_two_bone_ik(quat *io_hip_local, quat *io_knee_local, quat *io_ankle_local, quat hip_parent_global,
                      quat hip_global, quat knee_global, quat ankle_global, vec3 a, vec3 b, vec3 c, vec3 target,
                      vec3 hinge);

#endif
