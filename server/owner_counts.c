/* owner_counts.c: characters per owner, an open-addressing table (see owner_counts.h). */
#include <assert.h>
#include <stdlib.h>
#include "anim_error.h"
#include "owner_counts.h"

#define MIN_CAPACITY 16u

/* The slot holding owner, or the empty slot where it would go. */
static uint32_t find(const srv_owner_counts_t *t, uint64_t owner) {
  uint32_t mask = t->capacity - 1, i = srv_owner_home(owner, mask);
  while (t->slots[i].count && t->slots[i].owner != owner) i = (i + 1) & mask;
  return i;
}

/* Moves every owner into a table of capacity slots. 0 or ANIM_ENOMEM (the old table stays). */
static int rehash(srv_owner_counts_t *t, uint32_t capacity) {
  srv_owner_counts_t grown = {calloc(capacity, sizeof *grown.slots), capacity, t->owners};
  if (!grown.slots) return ANIM_ENOMEM;
  for (uint32_t i = 0; i < t->capacity; i++)
    if (t->slots[i].count) grown.slots[find(&grown, t->slots[i].owner)] = t->slots[i];
  free(t->slots);
  *t = grown;
  return 0;
}

uint32_t srv_owner_counts_get(const srv_owner_counts_t *t, uint64_t owner) {
  return t->capacity ? t->slots[find(t, owner)].count : 0;
}

int srv_owner_counts_add(srv_owner_counts_t *t, uint64_t owner) {
  if (t->capacity) {
    srv_owner_count_t *slot = &t->slots[find(t, owner)];
    if (slot->count) {
      slot->count++;
      return 0;
    }
  }
  /* A new owner: at most half full, so probes stay short. */
  if (2 * (t->owners + 1) > t->capacity && rehash(t, t->capacity ? 2 * t->capacity : MIN_CAPACITY) != 0)
    return ANIM_ENOMEM;
  t->slots[find(t, owner)] = (srv_owner_count_t){owner, 1};
  t->owners++;
  return 0;
}

/* Empties slot hole, moving back each later entry of its run that may sit
 * there (its home is not between the hole and it), so a lookup never stops
 * at a gap short of its owner: linear probing without tombstones. */
static void take_out(srv_owner_counts_t *t, uint32_t hole) {
  uint32_t mask = t->capacity - 1;
  for (uint32_t j = (hole + 1) & mask; t->slots[j].count; j = (j + 1) & mask)
    if (((j - srv_owner_home(t->slots[j].owner, mask)) & mask) >= ((j - hole) & mask)) {
      t->slots[hole] = t->slots[j];
      hole = j;
    }
  t->slots[hole].count = 0;
}

void srv_owner_counts_remove(srv_owner_counts_t *t, uint64_t owner) {
  assert(t->capacity);
  uint32_t i = find(t, owner);
  assert(t->slots[i].count > 0);
  if (--t->slots[i].count) return;
  take_out(t, i);
  t->owners--;
  /* Shrunk when an eighth full (a failed shrink keeps the larger table: nothing is lost). */
  if (t->capacity > MIN_CAPACITY && 8 * t->owners < t->capacity) rehash(t, t->capacity / 2);
}

void srv_owner_counts_free(srv_owner_counts_t *t) {
  free(t->slots);
  *t = (srv_owner_counts_t){0};
}
