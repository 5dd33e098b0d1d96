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
  return b;
}

int srv_buffer_reserve(srv_buffer_t **buffer, size_t cap) {
  srv_buffer_t *b = *buffer;
  if (b && b->cap >= cap) return 0;
  /* Room to spare: a stream frame's size wanders by a few bytes from tick
   * to tick (varints, flags), and a buffer reused every tick must not be
   * reallocated for that; growing by half again keeps growth geometric. */
  size_t grown = b ? b->cap + b->cap / 2 : 0;
  if (grown < cap + cap / 8 + 256) grown = cap + cap / 8 + 256;
  srv_buffer_t *n = realloc(b, sizeof *n + grown);
  if (!n) return ANIM_ENOMEM;
  if (!b) n->refs = 1, n->len = 0;
  n->cap = grown;
  *buffer = n;
  return 0;
}

srv_buffer_t *srv_buffer_retain(srv_buffer_t *buffer) {
  buffer->refs++;
  return buffer;
}

void srv_buffer_release(srv_buffer_t *buffer) {
  if (buffer && --buffer->refs == 0) free(buffer);
}

size_t srv_buffer_footprint(const srv_buffer_t *buffer) { return buffer ? sizeof *buffer + buffer->cap : 0; }
