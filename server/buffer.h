/*
 * buffer.h: a reference-counted byte buffer, the unit of output.
 *
 * A response or stream frame is encoded into a buffer and handed to a
 * connection, which holds a reference until libuv has written it. A stream
 * subscription keeps its own reference to the buffer it encodes into, so
 * once the write is done (the count back to one) the next tick reuses it:
 * in steady state no output is allocated per tick. Counts change on the loop
 * thread only; a pool job may fill a buffer that nobody else holds.
 */
#ifndef SRV_BUFFER_H
#define SRV_BUFFER_H

#include <stddef.h>
#include <stdint.h>

typedef struct srv_buffer {
  int refs;
  size_t len, cap; /* bytes written, bytes allocated (data) */
  uint8_t data[];
} srv_buffer_t;

/* A buffer of capacity cap (len 0, refs 1), or NULL. */
srv_buffer_t *srv_buffer_new(size_t cap);

/* Makes *buffer hold at least cap bytes, reallocating when it is smaller
 * (*buffer NULL: a new one). The caller must be the only holder. 0 or
 * ANIM_ENOMEM (*buffer unchanged). */
int srv_buffer_reserve(srv_buffer_t **buffer, size_t cap);

srv_buffer_t *srv_buffer_retain(srv_buffer_t *buffer);
/* Drops a reference; frees at zero. NULL is ignored. */
void srv_buffer_release(srv_buffer_t *buffer);

/* Bytes a buffer of this capacity takes from the heap (for memory accounting). */
size_t srv_buffer_footprint(const srv_buffer_t *buffer);

#endif
