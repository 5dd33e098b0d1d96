/*
 * pending.h: requests sent and not yet answered, by id (client library
 * internals, not installed).
 *
 * Each entry holds the request's typed completion: a function that turns the
 * answer into the caller's C result and hands it over, either to the
 * caller's callback (a _send) or to a blocking caller waiting on that id (a
 * waiter attached to the entry). The table is a FIFO: answers mostly come
 * in order, so the one looked for is usually first. No I/O, no protobuf
 * parsing: the client looks entries up, the area files write completions.
 */
#ifndef ANIM_CLIENT_PENDING_H
#define ANIM_CLIENT_PENDING_H

#include <stddef.h>
#include <stdint.h>
#include "anim_client_session.h"
#include "animserver.pb-c.h"

typedef struct anim__pending anim__pending_t;

/* Turns the answer r (NULL when status != 0) into the request's C result and
 * delivers it: anim__pending_deliver first (a blocking caller), else the
 * caller's callback p->cb (cast back to its type; may be NULL). Frees what it
 * made unless a waiter took it. */
typedef void (*anim__complete_fn)(anim_client_t *client, anim__pending_t *p, int status,
                                  const Animserver__Response *r);

/* Any callback type, stored until the completion casts it back. */
typedef void (*anim__cb_fn)(void);

/* A blocking caller waiting for one id. */
typedef struct {
  int done, status;
  void *out;          /* where the completion's result is copied */
  size_t out_size;
  size_t size;        /* bytes the completion delivered (may exceed out_size: truncated) */
} anim__waiter_t;

struct anim__pending {
  uint64_t id;
  Animserver__Response__BodyCase expect;  /* the answer's body case */
  anim__complete_fn complete;
  anim__cb_fn cb;
  void *data;
  void *extra;            /* the request's own state for its completion (freed with the entry) */
  anim__waiter_t *waiter; /* set by a blocking caller after the send */
  uint64_t sent_us;
  anim__pending_t *next;
};

typedef struct {
  anim__pending_t *head, *tail;
  int count;
} anim__pending_table_t;

/* A new entry (not in a table yet); NULL when out of memory. */
anim__pending_t *anim__pending_new(Animserver__Response__BodyCase expect, anim__complete_fn complete, anim__cb_fn cb,
                                   void *data, void *extra);
/* Frees p and its extra. */
void anim__pending_free(anim__pending_t *p);
void anim__pending_add(anim__pending_table_t *table, anim__pending_t *p);
/* Removes and returns the entry for id (NULL: none). */
anim__pending_t *anim__pending_take(anim__pending_table_t *table, uint64_t id);
/* Removes and returns the oldest entry (NULL: empty). */
anim__pending_t *anim__pending_pop(anim__pending_table_t *table);
/* The entry for id, left in the table (NULL: none). */
anim__pending_t *anim__pending_find(anim__pending_table_t *table, uint64_t id);

/* For completions: when a blocking caller waits on p, copies size bytes of
 * result into its output (a struct, or the pointer to an owned result, which
 * then becomes the caller's), marks it done with status and returns 1.
 * Otherwise 0: the completion calls p->cb. */
int anim__pending_deliver(anim__pending_t *p, int status, const void *result, size_t size);

#endif
