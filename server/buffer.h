/*
 * buffer.h: a reference-counted byte buffer, the unit of output.
 *
 * A response or stream frame is encoded into a buffer and handed to a
 * connection, which holds a reference until libuv has written it. A stream
 * subscription keeps its own reference to the buffer it encodes into, so
 * once the write is done (the count back to one) the next tick reuses it:
 * in steady state no output is allocated per tick. Counts change on the loop
 * thread only; a pool job may fill a buffer that nobody else holds.
 *
 * Small buffers (a response of a few hundred bytes) are kept for reuse in a
 * pool (srv_buffer_pool_t) that the caller owns, not by the allocator:
 * pipelined answers are written and freed by the dozen, more than malloc's
 * own per-thread cache holds (test_pipelined_alloc counts 8,000
 * allocations in its window without one). A buffer remembers the pool it
 * came from and goes back to it on its last release.
 */
#ifndef SRV_BUFFER_H
#define SRV_BUFFER_H

#include <stddef.h>
#include <stdint.h>

#define SRV_BUFFER_POOL_KEPT 256

/* Small buffers kept for reuse, up to SRV_BUFFER_POOL_KEPT. One thread's:
 * buffers taken from it are taken and released on that thread (the loop's:
 * references are counted there). It must outlive every buffer taken from
 * it; srv_buffer_pool_close frees what it keeps, and a buffer released
 * after that is freed. Zeroed: an empty pool. */
typedef struct srv_buffer_pool {
  struct srv_buffer *items[SRV_BUFFER_POOL_KEPT];
  int n;
  int closed;
} srv_buffer_pool_t;

typedef struct srv_buffer {
  int refs;
  size_t len, cap;         /* bytes written, bytes allocated (data) */
  srv_buffer_pool_t *pool; /* where it goes back on its last release when small (NULL: freed) */
  uint8_t data[];
} srv_buffer_t;

/* A buffer of capacity cap (len 0, refs 1), or NULL. */
srv_buffer_t *srv_buffer_new(size_t cap);

/* Makes *buffer hold at least cap bytes, reallocating when it is smaller
 * (*buffer NULL: a new one, from pool when small and a pool is given). The
 * caller must be the only holder. 0 or ANIM_ENOMEM (*buffer unchanged). */
int srv_buffer_reserve_in(srv_buffer_pool_t *pool, srv_buffer_t **buffer, size_t cap);
static inline int srv_buffer_reserve(srv_buffer_t **buffer, size_t cap) {
  return srv_buffer_reserve_in(NULL, buffer, cap);
}

/* Frees the buffers the pool keeps; buffers released later are freed. */
void srv_buffer_pool_close(srv_buffer_pool_t *pool);

srv_buffer_t *srv_buffer_retain(srv_buffer_t *buffer);
/* Drops a reference; frees at zero. NULL is ignored. */
void srv_buffer_release(srv_buffer_t *buffer);

/* Bytes a buffer of this capacity takes from the heap (for memory accounting). */
size_t srv_buffer_footprint(const srv_buffer_t *buffer);

#endif
