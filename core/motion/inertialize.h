/*
 * inertialize.h: inertialization, the transition between two animations by
 * an offset that starts at (source - destination) and decays to zero.
 *
 * Per bone the state is an offset in position (m), velocity (m/s), rotation
 * (unit quaternion, applied on the left) and angular velocity (rad/s). The
 * displayed pose is
 *   position  = input position + offset position
 *   velocity  = input velocity + offset velocity
 *   rotation  = offset rotation * input rotation
 *   angular velocity = offset angular velocity + offset rotation (input angvel)
 * A transition from the source input (what was playing) to the destination
 * input re-bases the offset on the destination so the displayed pose stays
 * exactly continuous: offset <- (source + offset) - destination, i.e. the
 * new offset is "what is displayed now, minus the destination". Transitioning
 * again while an old offset is still decaying therefore just works. Offsets
 * decay with the exact critically damped spring of spring.h (rotations via
 * their rotation vector, the short way round, so q and -q are the same).
 * The offset angular velocity is the rate of that rotation vector, which is
 * the offset's true angular velocity when the two are parallel (a single
 * axis, or small offsets) and a close approximation otherwise.
 *
 * The whole-pose job (anim_inertializer_t) treats bone 0 as the character
 * root, which moves in the world, while the other bones are local to their
 * parent. Clips store their root in their own animation space; the job keeps
 * an anchor, a rigid map from the playing clip's animation space to the
 * world, set at each transition so that the destination's root lands exactly
 * on the displayed root. The root offsets are computed in world space: the
 * destination root velocity and angular velocity are re-expressed through
 * the new anchor, so the root's position and rotation offsets are zero and
 * only its velocity offsets decay. The anchor uses the full root rotation:
 * bone 0 is expected to be the ground-projected character root.
 *
 * Nothing here allocates: the offset arrays and every pose are caller-owned
 * views (pointer + count). What it does not: choose when to transition or
 * which half-life a part of the body blends with (the controller does).
 */
#ifndef ANIM_INERTIALIZE_H
#define ANIM_INERTIALIZE_H

#include <stddef.h>
#include <stdint.h>

#include "math/anim_math.h"
#include "pose/pose.h"

/* ---- one bone ------------------------------------------------------------------ */

/* Re-bases a position offset from src (the input being displayed, with the
 * current offset) onto dst, keeping output position and velocity unchanged. */
void anim_inertialize_transition_vec3(vec3 *io_off_x, vec3 *io_off_v, vec3 src_x, vec3 src_v, vec3 dst_x,
                                      vec3 dst_v);
/* The same for a rotation offset and angular velocity offset. */
void anim_inertialize_transition_quat(quat *io_off_q, vec3 *io_off_w, quat src_q, vec3 src_w, quat dst_q,
                                      vec3 dst_w);

/* Decays the offset by dt seconds (exact) and writes the displayed output
 * for the input (in_x, in_v). */
void anim_inertialize_update_vec3(vec3 *out_x, vec3 *out_v, vec3 *io_off_x, vec3 *io_off_v, vec3 in_x, vec3 in_v,
                                  float halflife, float dt);
void anim_inertialize_update_quat(quat *out_q, vec3 *out_w, quat *io_off_q, vec3 *io_off_w, quat in_q, vec3 in_w,
                                  float halflife, float dt);

/* The output t seconds after the offset's current state, offset unchanged
 * (for callers that keep the offset at the transition and a clock). */
void anim_inertialize_evaluate_vec3(vec3 *out_x, vec3 *out_v, vec3 off_x, vec3 off_v, vec3 in_x, vec3 in_v,
                                    float halflife, float t);
void anim_inertialize_evaluate_quat(quat *out_q, vec3 *out_w, quat off_q, vec3 off_w, quat in_q, vec3 in_w,
                                    float halflife, float t);

/* ---- whole pose ----------------------------------------------------------------- */

/* anim_pose_view_t and anim_pose_buffer_t: pose.h. */

/* Inertializer state over caller-owned offset arrays.
 * Validity rules (anim_inertializer_validate):
 *  1. count >= 1 and the four offset arrays are non-NULL (count entries);
 *  2. anchor rotations are unit length (1e-3), anchor positions finite;
 *  3. poses passed in have the same count and non-NULL arrays.
 * The offsets describe the instant of the last update/transition: a
 * transition must be given the source pose of that same instant (the input
 * that was passed to the last update). */
typedef struct {
  size_t count;
  vec3 *offset_positions;
  vec3 *offset_velocities;
  quat *offset_rotations;
  vec3 *offset_angular_velocities;
  /* Anchor: the playing clip's root pose (animation space) at the last
   * transition, and where it was placed in the world. A point p of the clip
   * is displayed at world_position + R (p - anim_position) with
   * R = world_rotation * anim_rotation^-1. */
  vec3 anchor_anim_position;
  quat anchor_anim_rotation;
  vec3 anchor_world_position;
  quat anchor_world_rotation;
} anim_inertializer_t;

/* Sets up *out over the given arrays (count entries each, caller-owned and
 * kept alive while *out is used): zero offsets, identity anchor (animation
 * space = world). 0 or ANIM_EINVAL. */
int anim_inertializer_init(anim_inertializer_t *out, size_t count, vec3 *offset_positions,
                           vec3 *offset_velocities, quat *offset_rotations, vec3 *offset_angular_velocities);
/* 0 when the rules above hold (rule 3 checked by the jobs), else ANIM_EINVAL. */
int anim_inertializer_validate(const anim_inertializer_t *s);

/* Places the playing clip without a transition: its root pose anim_root_*
 * is shown at world_root_* from now on. Offsets are kept. 0, ANIM_EINVAL,
 * ANIM_ENONFINITE. */
int anim_inertializer_place(anim_inertializer_t *s, vec3 anim_root_position, quat anim_root_rotation,
                            vec3 world_root_position, quat world_root_rotation);

/* Transition from src (the pose of the clip playing now, at the offsets'
 * instant) to dst (the pose of the clip to play, its root in its own
 * animation space). Updates offsets and anchor so the displayed pose, its
 * velocities included, is unchanged. 0, ANIM_EINVAL (count mismatch, NULL),
 * ANIM_ENONFINITE (non-finite input; the state is then left unchanged). */
int anim_inertializer_transition(anim_inertializer_t *s, const anim_pose_view_t *src, const anim_pose_view_t *dst);

/* Decays the offsets by dt seconds and writes the displayed pose for input
 * pose in (root in the playing clip's animation space) into out, root in
 * world space. dt >= 0, halflife > 0. 0, ANIM_EINVAL. */
int anim_inertializer_update(anim_inertializer_t *s, const anim_pose_buffer_t *out, const anim_pose_view_t *in,
                             float halflife, float dt);

/* Parts of the body blending at their own speeds (anim_inertializer_update_parts):
 * every offset decays with halflife, except the root's position, with
 * root_halflife, and the rotation of each bone b with fast[b] set, with
 * fast_halflife (fast: count flags, or NULL for none). Half-lives > 0.
 * With root_rates_only, the output's velocities and angular velocities are
 * written for the root alone (the other bones' are left as they are): for a
 * caller that shows positions and rotations, 14-20% of an update. The
 * offsets decay the same either way. */
typedef struct {
  float halflife, root_halflife, fast_halflife;
  const uint8_t *fast;
  int root_rates_only;
} anim_inertialize_speeds_t;

/* anim_inertializer_update with a half-life per part, in the same passes
 * over the pose (three exps a tick, whatever the bone count). 0, ANIM_EINVAL. */
int anim_inertializer_update_parts(anim_inertializer_t *s, const anim_pose_buffer_t *out, const anim_pose_view_t *in,
                                   const anim_inertialize_speeds_t *speeds, float dt);

/* As update, but t seconds after the offsets' instant, leaving s unchanged. */
int anim_inertializer_evaluate(const anim_inertializer_t *s, const anim_pose_buffer_t *out,
                               const anim_pose_view_t *in, float halflife, float t);

#endif
