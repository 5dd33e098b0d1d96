/* request.c: request names and the lifetime of a response (see request.h). */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "fit_models.h"
#include "registry.h"
#include "request.h"

static const char *const names[SRV_REQ_COUNT] = {
#define SRV_REQ_NAME(TYPE, name, Message) [SRV_REQ_##TYPE] = #name,
    SRV_REQUEST_TYPES(SRV_REQ_NAME)
#undef SRV_REQ_NAME
};

const char *srv_request_name(int type) {
  if (type == SRV_REQ_COUNT) return "undecoded";
  return type >= 0 && type < SRV_REQ_COUNT ? names[type] : "unknown";
}

void srv_response_init(srv_response_t *r, uint64_t id, int type) {
  static const size_t body_bytes[SRV_REQ_COUNT] = {
#define SRV_BODY_BYTES(TYPE, name, Message) [SRV_REQ_##TYPE] = sizeof(srv_##name##_response_t),
      SRV_REQUEST_TYPES(SRV_BODY_BYTES)
#undef SRV_BODY_BYTES
  };
  memset(r, 0, offsetof(srv_response_t, message));
  r->message[0] = '\0';
  memset(&r->entry, 0, offsetof(srv_response_t, body) - offsetof(srv_response_t, entry));
  memset(&r->body, 0, type >= 0 && type < SRV_REQ_COUNT ? body_bytes[type] : sizeof r->body);
  r->id = id;
  r->type = (srv_request_type_t)type;
}

int srv_response_fail(srv_response_t *response, int code, const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  vsnprintf(response->message, sizeof response->message, fmt, args);
  va_end(args);
  response->error = code;
  return code;
}

typedef struct block {
  struct block *next;
  max_align_t data[];
} block_t;

void *srv_response_alloc(srv_response_t *response, size_t size) {
  size_t aligned = (size + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
  if (response->lent && aligned >= size && aligned <= response->lent_size - response->lent_used) {
    void *p = response->lent + response->lent_used;
    response->lent_used += aligned;
    return memset(p, 0, size);
  }
  block_t *block = calloc(1, sizeof *block + size);
  if (!block) {
    srv_response_fail(response, ANIM_ENOMEM, "out of memory");
    return NULL;
  }
  block->next = response->arena;
  response->arena = block;
  return block->data;
}

void srv_response_release(srv_response_t *response) {
  for (block_t *b = response->arena, *next; b; b = next) {
    next = b->next;
    free(b);
  }
  response->arena = NULL;
  response->lent = NULL;
  response->lent_size = response->lent_used = 0;
  if (response->held && response->release_held) response->release_held(response->held);
  response->held = NULL;
  srv_fit_model_release(response->fit_model); /* before its database */
  response->fit_model = NULL;
  srv_db_entry_release(response->entry);
  srv_db_entry_release(response->built);
  response->entry = response->built = NULL;
}
