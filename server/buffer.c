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

/* Small buffers (a response) are kept per thread once written, up to
 * SMALL_KEPT of them, and handed out again: pipelined answers are written
 * and freed by the dozen, more than malloc's own per-thread cache holds. */
#define SMALL_CAP 512
#define SMALL_KEPT 256
static _Thread_local struct {
  srv_buffer_t *items[SMALL_KEPT];
  int n;
} small_kept;

int srv_buffer_reserve(srv_buffer_t **buffer, size_t cap) {
  srv_buffer_t *b = *buffer;
  if (b && b->cap >= cap) return 0;
  if (!b && cap + cap / 8 + 256 <= SMALL_CAP) {
    if (small_kept.n) b = small_kept.items[--small_kept.n];
    else if (!(b = malloc(sizeof *b + SMALL_CAP))) return ANIM_ENOMEM;
    b->refs = 1, b->len = 0, b->cap = SMALL_CAP;
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
  if (!buffer || --buffer->refs > 0) return;
  if (buffer->cap == SMALL_CAP && small_kept.n < SMALL_KEPT) small_kept.items[small_kept.n++] = buffer;
  else free(buffer);
}

size_t srv_buffer_footprint(const srv_buffer_t *buffer) { return buffer ? sizeof *buffer + buffer->cap : 0; }
