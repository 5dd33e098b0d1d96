/*
 * service.h: what each request does, and the dispatch table from request
 * type to handler.
 *
 * A handler receives a validated request and fills a response; it returns 0
 * or an ANIM_E* code (anim_response_fail sets code and message together).
 * Handlers marked off_loop run on the libuv thread pool and must touch only
 * read-only shared state (databases) and their own request/response.
 */
#ifndef ANIM_SERVICE_H
#define ANIM_SERVICE_H

#include <stdint.h>
#include "config.h"
#include "request.h"

struct anim_server;

typedef struct {
  struct anim_server *server;
  const anim_config_t *config;
  uint64_t connection_id;
} anim_service_ctx_t;

typedef int (*anim_handler_fn)(const anim_service_ctx_t *ctx, const anim_request_t *request,
                               anim_response_t *out_response);

typedef struct {
  const char *name;
  anim_handler_fn handle;
  int off_loop; /* 1: may take longer than ~1 ms, runs on the thread pool */
} anim_service_t;

/* The entry for type; never NULL for a valid type. */
const anim_service_t *anim_service_for(anim_request_type_t type);

#endif
