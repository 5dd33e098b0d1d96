/* buffer.c: reference-counted output buffers (see buffer.h). */
#include <stdlib.h>
#include "anim_error.h"
#include "buffer.h"

srv_buffer_t *srv_buffer_new(size_t cap) {
  srv_buffer_t *b = malloc(sizeof *b + cap);
  if (!b) return NULL;
  b->refs = 1;
  b->len = 0;
  b->cap = cap;
  b->pool = NULL;
  return b;
}

/* The capacity of a small buffer, the only ones a pool keeps. */
#define SMALL_CAP 512

int srv_buffer_reserve_in(srv_buffer_pool_t *pool, srv_buffer_t **buffer, size_t cap) {
  srv_buffer_t *b = *buffer;
  if (b && b->cap >= cap) return 0;
  if (!b && cap + cap / 8 + 256 <= SMALL_CAP) {
    if (pool && pool->n) b = pool->items[--pool->n];
    else if (!(b = malloc(sizeof *b + SMALL_CAP))) return ANIM_ENOMEM;
    b->refs = 1, b->len = 0, b->cap = SMALL_CAP, b->pool = pool;
    *buffer = b;
    return 0;
  }
  /* Room to spare: a stream frame's size wanders by a few bytes from tick
   * to tick (varints, flags), and a buffer reused every tick must not be
   * reallocated for that; growing by half again keeps growth geometric. */
  size_t grown = b ? b->cap + b->cap / 2 : 0;
  if (grown < cap + cap / 8 + 256) grown = cap + cap / 8 + 256;
  srv_buffer_t *n = realloc(b, sizeof *n + grown);
  if (!n) return ANIM_ENOMEM;
  if (!b) n->refs = 1, n->len = 0, n->pool = NULL;
  n->cap = grown;
  *buffer = n;
  return 0;
}

srv_buffer_t *srv_buffer_retain(srv_buffer_t *buffer) {
  buffer->refs++;
  return buffer;
}

void srv_buffer_release(srv_buffer_t *buffer) {
  if (!buffer || --buffer->refs > 0) return;
  srv_buffer_pool_t *pool = buffer->pool;
  if (pool && !pool->closed && buffer->cap == SMALL_CAP && pool->n < SRV_BUFFER_POOL_KEPT)
    pool->items[pool->n++] = buffer;
  else
    free(buffer);
}

void srv_buffer_pool_close(srv_buffer_pool_t *pool) {
  while (pool->n > 0) free(pool->items[--pool->n]);
  pool->closed = 1;
}

size_t srv_buffer_footprint(const srv_buffer_t *buffer) { return buffer ? sizeof *buffer + buffer->cap : 0; }
