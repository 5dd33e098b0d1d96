/*
 * anim_client_physics.h: physical characters (ANIM_MODE_PHYSICAL): push
 * them, set their body parts' drives, make them recover.
 *
 * A physical character plays motion matching (steered like a
 * motion-matching one) and is kinematic, costing what a motion-matching
 * character costs, until a push makes its body simulated: powered joints
 * follow the matched pose, the root is held by a limited stabiliser; it
 * staggers and recovers (blending back to motion matching by
 * inertialization), or, pushed past what the stabiliser holds, falls, lies
 * still for 2 s and gets up (or at once on anim_client_recover). Its state
 * is in each streamed pose (anim_character_pose_t.physics) and in
 * anim_character_state_t. Characters do not collide with one another.
 *
 * Each request has a _send form (a callback with the tick it applies at)
 * and a blocking one. Errors: ANIM_ENOTFOUND (no such character),
 * ANIM_EPERM (another connection's), ANIM_EUNSUPPORTED (not physical),
 * ANIM_EINVAL / ANIM_ERANGE / ANIM_ENOTFOUND / ANIM_ENONFINITE for a field
 * out of its rule (anim_client_last_error names it); nothing is applied
 * in part.
 */
#ifndef ANIM_CLIENT_PHYSICS_H
#define ANIM_CLIENT_PHYSICS_H

#include <stdint.h>
#include "anim_client_session.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A physical character's state (PhysicsState on the wire); 0 for other kinds. */
enum {
  ANIM_PHYSICS_STATE_NONE = 0,
  ANIM_PHYSICS_STATE_KINEMATIC = 1,  /* motion matching, not simulated */
  ANIM_PHYSICS_STATE_POWERED = 2,    /* simulated, drives on: staggering */
  ANIM_PHYSICS_STATE_LIMP = 3,       /* the root set limp by anim_client_set_body_modes */
  ANIM_PHYSICS_STATE_RECOVERING = 4, /* blending back to motion matching */
  ANIM_PHYSICS_STATE_FALLEN = 5      /* lost its balance: limp, falling or lying */
};

/* A body part's drive mode. */
enum { ANIM_BODY_KINEMATIC = 0, ANIM_BODY_POWERED = 1, ANIM_BODY_LIMP = 2 };

/* A push: an impulse (N s) at once, or a force (N) for duration seconds,
 * at point (m, in the bone's frame: its joint the origin) on a bone named
 * by bone, or by bone_index when bone is NULL (0: unset; bone 0 has no
 * body). Bounds: |impulse| <= 2000 N s, |force| <= 20000 N, duration in
 * (0, 2] s, |point| <= 1 m. tick: the server tick it applies at (0: the
 * next), at most 36000 ahead (anim_hello_info_t.max_push_ahead; ANIM_ERANGE
 * past it); a character holds at most 8 pushes pending
 * (anim_hello_info_t.max_pushes_pending; ANIM_ELIMIT past it). The same
 * pushes at the same ticks give the same stream. A standing 70 kg character staggers and recovers from
 * about 40 N s at the chest, and falls from about 200 N s. */
typedef struct {
  const char *bone;
  uint32_t bone_index;
  float point[3];
  int is_force;      /* 0: impulse; 1: force for duration */
  float impulse[3];
  float force[3];
  float duration;
  uint64_t tick;
} anim_push_t;

/* All zero: an impulse of 0 at the bone's joint, at the next tick. */
void anim_push_init(anim_push_t *push);

int anim_client_push(anim_client_t *client, uint64_t character, const anim_push_t *push, uint64_t *out_tick,
                     int timeout_ms);
int anim_client_push_send(anim_client_t *client, uint64_t character, const anim_push_t *push, anim_status_cb cb,
                          void *data, uint64_t *out_id);

/* One body part's drive: a bone (by name, or bone_index when bone is NULL)
 * with a ball joint (below the root), and with descendants every bone
 * under it. mode ANIM_BODY_*. With has_strength: halflife in [0.005, 10] s,
 * damping_ratio in [0, 10], max_torque in [0, 1e5] N m (UE Physics
 * Control's strength, damping ratio and max torque); without: the default
 * (0.05 s, 1, 300 N m). duration > 0 (s, at most 60): back to the default
 * after it (weaken a hit arm for 0.3 s); 0: until set again. */
typedef struct {
  const char *bone;
  uint32_t bone_index;
  int descendants;
  int mode;
  int has_strength;
  float halflife, damping_ratio, max_torque;
  float duration;
} anim_body_part_t;

/* The root stabiliser: mode (LIMP drops the character at once), its
 * half-life and damping ratio as a part's, its limits max_force (N, [0,
 * 1e6]) and max_torque (N m, [0, 1e5]); duration as a part's. */
typedef struct {
  int mode;
  float halflife, damping_ratio, max_force, max_torque;
  float duration;
} anim_root_stabiliser_t;

void anim_body_part_init(anim_body_part_t *part);               /* powered, default strength, for good */
void anim_root_stabiliser_init(anim_root_stabiliser_t *root);   /* the server's defaults for a 70 kg body */

/* Sets n parts (at most 64) and, when root is not NULL, the stabiliser;
 * reset: everything back to its defaults first. They act while the
 * character is simulated (a kinematic one keeps them for its next push). */
int anim_client_set_body_modes(anim_client_t *client, uint64_t character, const anim_body_part_t *parts, int n,
                               const anim_root_stabiliser_t *root, int reset, uint64_t *out_tick, int timeout_ms);
int anim_client_set_body_modes_send(anim_client_t *client, uint64_t character, const anim_body_part_t *parts, int n,
                                    const anim_root_stabiliser_t *root, int reset, anim_status_cb cb, void *data,
                                    uint64_t *out_id);

/* Blends a simulated character back to motion matching now (a kinematic one is left as it is). */
int anim_client_recover(anim_client_t *client, uint64_t character, uint64_t *out_tick, int timeout_ms);
int anim_client_recover_send(anim_client_t *client, uint64_t character, anim_status_cb cb, void *data,
                             uint64_t *out_id);

#ifdef __cplusplus
}
#endif

#endif
