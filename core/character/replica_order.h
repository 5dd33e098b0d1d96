/*
 * replica_order.h: the order of a replicated frame's records (the stream's
 * replicated encoding, docs/protocol.md), kept alike by the server that
 * writes the frames (server/stream_replica.c) and the client replica that
 * reads them (client/replica/replica.c).
 *
 * Outside a region, a record names its character relative to the one at
 * the same place in the previous frame: zigzag(id - base), base that
 * character's id or 0 past the previous frame's end; one byte while the
 * set of characters stays the same. A frame that starts over (fresh) has
 * no previous one: its ids go whole. Both sides hold the previous frame's
 * ids and this one's, in order, in two arrays of one capacity that swap at
 * the frame's end.
 *
 * Not here: the records' bytes (the writer's and the reader's own), a
 * region frame's ids (each the delta from the one before in the frame).
 */
#ifndef ANIM_REPLICA_ORDER_H
#define ANIM_REPLICA_ORDER_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
  uint64_t *previous, *current; /* the ids of the previous frame's records, in order, and this frame's */
  size_t nprevious, ncurrent, capacity;
} anim_replica_order_t;

/* Starts a frame: no ids yet; fresh: no previous frame either. */
void anim_replica_order_begin(anim_replica_order_t *order, int fresh);

/* Room for one more id in this frame (both arrays grown together). 0, or
 * ANIM_ENOMEM with the ids kept. */
int anim_replica_order_reserve(anim_replica_order_t *order);

/* Room for n ids a frame, made ahead (a writer that must not allocate in
 * its frames sizes the arrays when it knows how many records can come). 0,
 * or ANIM_ENOMEM with the ids and the old capacity kept. */
int anim_replica_order_reserve_for(anim_replica_order_t *order, size_t n);

/* The id the next record's is coded against: the previous frame's at its place, or 0. */
static inline uint64_t anim_replica_order_base(const anim_replica_order_t *order) {
  return order->ncurrent < order->nprevious ? order->previous[order->ncurrent] : 0;
}

/* The code of id as the next record (the caller writes it as a varint). */
static inline uint64_t anim_replica_order_code(const anim_replica_order_t *order, uint64_t id) {
  int64_t delta = (int64_t)(id - anim_replica_order_base(order));
  return ((uint64_t)delta << 1) ^ (uint64_t)(delta >> 63);
}

/* The id the next record's code names. */
static inline uint64_t anim_replica_order_id(const anim_replica_order_t *order, uint64_t code) {
  return anim_replica_order_base(order) + (uint64_t)((int64_t)(code >> 1) ^ -(int64_t)(code & 1));
}

/* Appends id to this frame (after anim_replica_order_reserve). */
static inline void anim_replica_order_push(anim_replica_order_t *order, uint64_t id) {
  order->current[order->ncurrent++] = id;
}

/* Ends the frame: its ids become the previous frame's. */
void anim_replica_order_end(anim_replica_order_t *order);

/* Bytes the two arrays hold. */
size_t anim_replica_order_bytes(const anim_replica_order_t *order);

/* Frees the arrays; order is left empty (all zero). */
void anim_replica_order_free(anim_replica_order_t *order);

#endif
