/*
 * pending.c: the table of requests in flight (see pending.h).
 *
 * A singly linked FIFO with a tail pointer: add at the tail, look up from the
 * head. Entries are taken out of the table before their completion runs, so a
 * completion that dispatches more answers (a blocking call inside a
 * callback) never meets its own entry again: each request completes once.
 */
#include <stdlib.h>
#include <string.h>
#include "pending.h"

anim__pending_t *anim__pending_new(Animserver__Response__BodyCase expect, anim__complete_fn complete, anim__cb_fn cb,
                                   void *data, void *extra) {
  anim__pending_t *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  p->expect = expect;
  p->complete = complete;
  p->cb = cb;
  p->data = data;
  p->extra = extra;
  return p;
}

void anim__pending_free(anim__pending_t *p) {
  if (!p) return;
  free(p->extra);
  free(p);
}

void anim__pending_add(anim__pending_table_t *table, anim__pending_t *p) {
  p->next = NULL;
  if (table->tail) table->tail->next = p;
  else table->head = p;
  table->tail = p;
  table->count++;
}

/* Unlinks *link (whose predecessor is prev, NULL for the head). */
static anim__pending_t *unlink_entry(anim__pending_table_t *table, anim__pending_t **link, anim__pending_t *prev) {
  anim__pending_t *p = *link;
  *link = p->next;
  if (table->tail == p) table->tail = prev;
  table->count--;
  p->next = NULL;
  return p;
}

anim__pending_t *anim__pending_take(anim__pending_table_t *table, uint64_t id) {
  anim__pending_t *prev = NULL;
  for (anim__pending_t **link = &table->head; *link; prev = *link, link = &(*link)->next)
    if ((*link)->id == id) return unlink_entry(table, link, prev);
  return NULL;
}

anim__pending_t *anim__pending_pop(anim__pending_table_t *table) {
  return table->head ? unlink_entry(table, &table->head, NULL) : NULL;
}

anim__pending_t *anim__pending_find(anim__pending_table_t *table, uint64_t id) {
  for (anim__pending_t *p = table->head; p; p = p->next)
    if (p->id == id) return p;
  return NULL;
}

int anim__pending_deliver(anim__pending_t *p, int status, const void *result, size_t size) {
  anim__waiter_t *w = p->waiter;
  if (!w) return 0;
  w->done = 1;
  w->status = status;
  w->size = size;
  if (status == 0 && result && w->out) memcpy(w->out, result, size < w->out_size ? size : w->out_size);
  return 1;
}
