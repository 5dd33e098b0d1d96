/*
 * owner_counts.h: how many characters each owner (a connection id) holds,
 * asked and changed in O(1).
 *
 * An open-addressing table (linear probing) of the owners holding at least
 * one character: an owner whose count comes back to 0 leaves the table
 * (backward-shift deletion, so no tombstones pile up), and the table halves
 * when it is an eighth full, so its size follows the owners holding
 * characters now, not every connection the server has seen. The crowd keeps
 * one (crowd.h) beside its characters; loop thread only, no locks. Counts
 * only: not a general map.
 */
#ifndef SRV_OWNER_COUNTS_H
#define SRV_OWNER_COUNTS_H

#include <stdint.h>

typedef struct {
  uint64_t owner;
  uint32_t count; /* 0: an empty slot */
} srv_owner_count_t;

/* Zeroed is an empty table. */
typedef struct {
  srv_owner_count_t *slots;
  uint32_t capacity; /* a power of two (at least 16), or 0 before the first owner */
  uint32_t owners;   /* slots in use: owners with count >= 1 (at most half the capacity) */
} srv_owner_counts_t;

/* The home slot of owner in a table of mask + 1 slots (a power of two):
 * Fibonacci hashing, as connection ids are sequential and their products
 * spread. Also the streams' per-tick table of subscribers by owner. */
static inline uint32_t srv_owner_home(uint64_t owner, uint32_t mask) {
  return (uint32_t)((owner * 0x9e3779b97f4a7c15u) >> 32) & mask;
}

/* owner's count: 0 when it holds nothing. */
uint32_t srv_owner_counts_get(const srv_owner_counts_t *table, uint64_t owner);
/* One more for owner. 0, or ANIM_ENOMEM (the table could not grow; nothing changed). */
int srv_owner_counts_add(srv_owner_counts_t *table, uint64_t owner);
/* One less for owner, who must hold at least one (asserted); at 0 it is forgotten. */
void srv_owner_counts_remove(srv_owner_counts_t *table, uint64_t owner);
/* Frees the slots; the table is empty (zeroed) again. */
void srv_owner_counts_free(srv_owner_counts_t *table);

#endif
