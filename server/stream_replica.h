/*
 * stream_replica.h: the replicated encoding's records (PoseEncoding
 * ENCODING_REPLICATED; the layout is in the proto's StreamMessage.replica).
 *
 * Instead of a pose, each motion-matching character of a frame is a record
 * of what its tick decided (core/character/controller.h's record: the
 * transition it started, its hold) and, when the client cannot have its
 * state, a keyframe (core/character/replica.h). The client replays the
 * tick with the core's own code (anim_controller_replay) and holds the
 * pose the server holds. What it cannot carry (every other kind) the
 * caller sends as quantized poses.
 *
 * Encoded on the pool, after the characters' ticks, into a buffer the
 * subscription keeps (grown to its largest frame; nothing allocated per
 * tick in steady state).
 */
#ifndef SRV_STREAM_REPLICA_H
#define SRV_STREAM_REPLICA_H

#include <stddef.h>
#include <stdint.h>
#include "actor.h"
#include "character/replica_order.h"
#include "aoi.h"
#include "crowd.h"

/* A record names its character relative to the one at the same place in
 * the subscription's previous frame (one byte while the set stays the
 * same); a frame that starts over (keys) names them whole. */
typedef struct {
  uint8_t *bytes;
  size_t len, capacity;
  anim_replica_order_t order;   /* the ids of the previous frame's records, and this one's */
  int failed;                   /* out of memory this frame */
  int region;                   /* this frame is a region's (srv_replica_append_region) */
  uint64_t last_id;             /* a region frame's last record's id */
} srv_replica_records_t;

/* The controller a's record is read from, or NULL (its kind goes as poses). */
const anim_controller_t *srv_replica_of(const srv_actor_t *a);

/* An upper bound of a's record in bytes, decided before its tick (loop):
 * with a keyframe when `keys` (the subscription resends every state) or a
 * has not ticked yet. A keyframe forced by the tick itself (a character
 * moved onto the world's limit) is not foreseen: the frame grows. */
size_t srv_replica_bound(const srv_actor_t *a, int keys);

/* The same for a region subscription's record of a, whose subscriber
 * last had its state at its controller tick count `sent` (0: never). */
size_t srv_replica_bound_region(const srv_actor_t *a, int keys, uint64_t sent);

/* Starts a frame's records (keys: every record a keyframe, ids whole;
 * region: a region subscription's frame, srv_replica_append_region's
 * records); after its records, srv_replica_end. */
void srv_replica_begin(srv_replica_records_t *records, int keys, int region);
/* Ends the frame: its order becomes the previous one. 0, or ANIM_ENOMEM (a record failed). */
int srv_replica_end(srv_replica_records_t *records);
/* Appends a's record (c = srv_replica_of(a)); with a keyframe when keys,
 * a's first tick, or something moved it outside the tick. 0, ANIM_ENOMEM. */
int srv_replica_append(srv_replica_records_t *records, const srv_actor_t *a, const anim_controller_t *c, int keys);
/* A region subscription's record of a (ids rising through the frame: the
 * caller appends them in id order). *io_sent is a's controller tick count
 * when the subscriber last had its state (0: never); a band that skips
 * ticks sends, when a is due, every tick since then from a's ring
 * (actor.h), so the client's replica still steps each tick: with each
 * tick's dt when it is not frame_dt (a server behind its rate). A
 * keyframe when keys, when *io_sent is 0, or when the ring no longer
 * holds those ticks (more than SRV_ACTOR_RECORDS, or one moved a outside
 * a tick). Sets *io_sent to a's tick count. 0, ANIM_ENOMEM. */
int srv_replica_append_region(srv_replica_records_t *records, const srv_actor_t *a, const anim_controller_t *c,
                              int keys, uint64_t *io_sent, float frame_dt);
void srv_replica_records_free(srv_replica_records_t *records);

/* Sizes the records' order, outside the tick, for every character the
 * subscription could hold now (view's cap, else the crowd; view may be
 * NULL): it otherwise grows inside the tick whose membership first passes
 * a power of two (two allocations test_tick_alloc saw). A failure only
 * leaves the growth to the tick. */
void srv_replica_size_for(srv_replica_records_t *records, const srv_crowd_t *crowd, const srv_aoi_view_t *view);

/* Bytes the records hold (their buffer and order). */
size_t srv_replica_bytes(const srv_replica_records_t *records);

/* A replicated region's motion-matching members keep their last ticks'
 * records (actor.h's ring), from the tick a replicated region first sees
 * them: once per character, never per tick. keep_members: v's found
 * characters (0, or ANIM_ENOMEM). keep_all: every character alive, when a
 * region becomes replicated (loop, between ticks), so later ticks allocate
 * only for characters made after; out of memory there is no error, the
 * tick that first sees such a character tries again. */
int srv_replica_keep_members(srv_crowd_t *crowd, const srv_aoi_view_t *v);
void srv_replica_keep_all(srv_crowd_t *crowd);

#endif
