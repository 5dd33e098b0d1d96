/*
 * aoi.h: areas of interest: which characters lie inside a region of the
 * ground plane, found through one spatial index for every region
 * subscription, and what a subscriber must be told as they come and go.
 *
 * The index is a uniform grid of SRV_AOI_CELL metre cells over (x, z),
 * held as an open-addressing table of the cells that hold a character
 * (so its size follows the crowd, not the 20 km world), with the crowd's
 * characters grouped by cell in one array: a counting sort. It is rebuilt
 * once a tick for all region subscriptions (srv_aoi_grid_build, O(n) in
 * the characters), from each character's root as the previous tick left
 * it: membership at tick t is decided from the poses streamed at t - 1, one
 * tick behind the poses it then sends. 8 m: a region of a few metres
 * touches 1-4 cells, a 100 m one some 700, and walking characters change
 * cell every few seconds; the query visits the cells the region's bounding
 * box touches, or, when those outnumber the cells in use (a region as big
 * as the world), the cells in use.
 *
 * A view (one region subscription) each tick: its region's characters
 * (srv_aoi_view_update), capped to the nearest max_characters, each given
 * the band its distance falls in; those due this tick (band divisor,
 * phased by the character's id so a band's characters spread over ticks)
 * and those that entered go in the frame; `entered` and `left` are the
 * difference from the members the subscriber was last told of, which
 * becomes this tick's only once the frame carrying it is delivered
 * (srv_aoi_view_commit): a frame lost (out of memory, not encoded) leaves
 * its news for the next one, so each arrival and departure is said once.
 *
 * Memory: the grid's and a view's arrays grow to the largest crowd and
 * membership seen, between or at the start of ticks (the loop thread), and
 * are kept: nothing is allocated per tick in steady state. Nothing here
 * knows connections, frames or the wire.
 */
#ifndef SRV_AOI_H
#define SRV_AOI_H

#include <stddef.h>
#include <stdint.h>
#include "actor.h"
#include "codec.h"
#include "request.h"

#define SRV_AOI_CELL 8.0f /* m, the grid's cell side */

typedef struct {
  int32_t cx, cz;
  uint32_t start, count; /* count 0: an empty slot */
} srv_aoi_cell_t;

typedef struct {
  srv_actor_t *actor;
  float x, z;
} srv_aoi_entry_t;

typedef struct {
  srv_aoi_cell_t *cells;     /* open addressing, cells_capacity (a power of two) slots */
  uint32_t cells_capacity;
  uint32_t *occupied;        /* slots in use, ncells of them */
  uint32_t ncells;
  srv_aoi_entry_t *entries;  /* grouped by cell: cells[k].start .. + count */
  uint32_t *slot_of;         /* scratch: each actor's cell slot */
  uint32_t nentries, capacity;
} srv_aoi_grid_t;

/* Indexes actors[0..n) by their roots (those without a pose are left out).
 * 0, or ANIM_ENOMEM (the grid is then empty). Loop thread, between ticks or
 * in the crowd's prepare hook. */
int srv_aoi_grid_build(srv_aoi_grid_t *grid, srv_actor_t *const *actors, uint32_t n);
void srv_aoi_grid_free(srv_aoi_grid_t *grid);
size_t srv_aoi_grid_bytes(const srv_aoi_grid_t *grid);

typedef struct {
  srv_actor_t *actor;
  float d2;      /* squared distance from the centre, m^2 */
  uint32_t slot; /* its place in found_set (and found_sent) */
  /* The replicated encoding's: the character's controller tick count when
   * the subscriber was last sent its state (0: never), carried from tick
   * to tick with the members told; the encoder sets it for the members it
   * sends (stream_replica.h). */
  uint64_t sent;
} srv_aoi_member_t;

typedef struct {
  srv_aoi_region_t region;
  float x, z;                /* the centre this tick (the followed character's root) */
  /* This tick (srv_aoi_view_update). */
  srv_aoi_member_t *found;   /* inside, the nearest max_characters first when capped */
  uint32_t nfound, found_capacity;
  uint64_t *found_set;       /* their ids, a hash set (0: empty slot) */
  uint32_t found_set_capacity;
  srv_stream_entered_t *entered;
  uint32_t nentered, entered_capacity;
  uint64_t *left;
  uint32_t nleft, left_capacity;
  srv_actor_t **due;         /* poses in this tick's frame: band due, or entered */
  uint32_t *due_member;      /* each one's index in found */
  uint32_t ndue, due_capacity, due_member_capacity;
  /* What the subscriber was last told (srv_aoi_view_commit). */
  uint64_t *told;
  uint32_t ntold, told_capacity;
  uint64_t *told_set;
  uint32_t told_set_capacity;
  uint64_t *found_sent, *told_sent; /* the members' `sent`, by their slots in found_set and told_set */
  uint32_t found_sent_capacity, told_sent_capacity;
} srv_aoi_view_t;

/* A view of region, centred on (x, z) until srv_aoi_view_update moves it.
 * NULL when out of memory. Free with srv_aoi_view_free. */
srv_aoi_view_t *srv_aoi_view_create(const srv_aoi_region_t *region, float x, float z);
void srv_aoi_view_free(srv_aoi_view_t *view);
size_t srv_aoi_view_bytes(const srv_aoi_view_t *view);

/* This tick's members, entered, left and due from the grid (every member
 * due when all_due: a frame that starts over). 0, or ANIM_ENOMEM (nothing
 * to send this tick; the next tries again). */
int srv_aoi_view_update(srv_aoi_view_t *view, const srv_aoi_grid_t *grid, uint64_t tick, int all_due);
/* Orders the due members by id (a replicated frame's records name each
 * character relative to the one before). No allocation. */
void srv_aoi_view_sort_due(srv_aoi_view_t *view);
/* This tick's frame reached the subscriber: its members are now what it was told. */
void srv_aoi_view_commit(srv_aoi_view_t *view);

#endif
