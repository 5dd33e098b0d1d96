/*
 * replica.h: a motion-matching character's state as bytes, so that another
 * process holding the same database can rebuild its displayed pose tick by
 * tick (the stream's replicated encoding, docs/protocol.md).
 *
 * A replica is an anim_controller_t made with no search index: it never
 * searches or steers. Given the original's whole state once (a keyframe,
 * anim_controller_replica_save/_load), then each tick the original's
 * record (controller.h: the transition it started, whether it held its
 * frame, whether something moved it outside the tick) and dt,
 * anim_controller_replay runs the same code the original's tick_end ran
 * and leaves the same displayed pose, bit for bit on the same build.
 *
 * What a keyframe holds: what the pose rebuild reads and a tick changes:
 * the frame and the fraction of a frame not yet played, the hold, the
 * blend half-lives, foot-lock parameters and which warps are on (so a
 * replica is made like the original), the warp's shown rate and upper-body
 * turn and the phase of the pose it last showed, the inertializer's anchor and per-bone offsets, the displayed
 * pose, each foot's lock and the pelvis drop. Not the input, simulation,
 * trajectory or search counters: a replica does not decide anything. The
 * database is named by its content hash (anim_database_t.version); a
 * keyframe for another database is refused.
 *
 * Layout (host order; the machines this runs on are little-endian; every
 * field 4 bytes unless said):
 *   magic "RPL2"; nbones; nfeet; database version (8 bytes);
 *   frame; frame_time_accum; time_since_transition; holding;
 *   inertialize_halflife, body_halflife_scale, root_halflife_scale;
 *   foot_lock.enabled, .unlock_radius, .release_halflife;
 *   warp: params.rate, .stand, .orient (on or off); shown rate, angle,
 *     view_phase; view flags (1 held, 2 have_view: the pose last shown,
 *     made again on load from the frame at view_phase; 4 foot locking
 *     skipped in the last tick);
 *   anchor: anim position (3), anim rotation (4), world position (3), world rotation (4);
 *   per bone: offset position (3), velocity (3), rotation (4), angular velocity (3);
 *   per bone: displayed position (3), rotation (4);
 *   per foot: state; lock_position (3); step_from (3); step_time; step_lift;
 *     offset (3); offset_velocity (3); previous_toe (3); previous_target (3); have_previous;
 *   pelvis drop, drop velocity.
 */
#ifndef ANIM_REPLICA_H
#define ANIM_REPLICA_H

#include <stddef.h>
#include <stdint.h>
#include "character/controller.h"

/* Bytes of a keyframe of c. */
size_t anim_controller_replica_size(const anim_controller_t *c);

/* Writes c's keyframe into out (anim_controller_replica_size(c) bytes). Returns the bytes written. */
size_t anim_controller_replica_save(const anim_controller_t *c, uint8_t *out);

/* The parameters a keyframe was saved with, to make the replica with
 * (anim_controller_init(.., index NULL, ..)): the half-lives, foot
 * locking and which warps are on; the rest are the defaults. Also its database version and bone
 * count. 0, ANIM_EFORMAT (magic), ANIM_ETRUNCATED, ANIM_ENONFINITE. */
int anim_controller_replica_params(const uint8_t *bytes, size_t len, anim_controller_params_t *out_params,
                                   uint64_t *out_database_version, int *out_nbones);

/* Loads a keyframe into replica c (made on the keyframe's database with
 * the keyframe's parameters). 0, ANIM_EFORMAT (magic, bone or foot count,
 * another database, a frame outside it, other warps on, a warp rate
 * outside [0, 4] or angle outside [-pi, pi]), ANIM_ETRUNCATED (len),
 * ANIM_ENONFINITE; c is left unchanged on error. */
int anim_controller_replica_load(anim_controller_t *c, const uint8_t *bytes, size_t len);

#endif
