/* replica_order.c: the order of a replicated frame's records (see replica_order.h). */
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "character/replica_order.h"

void anim_replica_order_begin(anim_replica_order_t *o, int fresh) {
  o->ncurrent = 0;
  if (fresh) o->nprevious = 0;
}

static int grow(anim_replica_order_t *o, size_t capacity) {
  uint64_t *previous = realloc(o->previous, capacity * sizeof *previous);
  if (previous) o->previous = previous;
  uint64_t *current = previous ? realloc(o->current, capacity * sizeof *current) : NULL;
  if (!current) return ANIM_ENOMEM;
  o->current = current, o->capacity = capacity;
  return 0;
}

int anim_replica_order_reserve(anim_replica_order_t *o) {
  return o->ncurrent < o->capacity ? 0 : grow(o, o->capacity ? 2 * o->capacity : 256);
}

int anim_replica_order_reserve_for(anim_replica_order_t *o, size_t n) {
  size_t capacity = o->capacity ? o->capacity : 256;
  while (capacity < n) capacity *= 2;
  return capacity == o->capacity ? 0 : grow(o, capacity);
}

void anim_replica_order_end(anim_replica_order_t *o) {
  uint64_t *swap = o->previous;
  o->previous = o->current, o->current = swap;
  o->nprevious = o->ncurrent;
}

size_t anim_replica_order_bytes(const anim_replica_order_t *o) { return 2 * o->capacity * sizeof *o->previous; }

void anim_replica_order_free(anim_replica_order_t *o) {
  free(o->previous), free(o->current);
  memset(o, 0, sizeof *o);
}
