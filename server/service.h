/*
 * service.h: what each request does, and the dispatch table from request
 * type to service.
 *
 * A service has up to three steps:
 *   prepare  (loop thread)  resolve names, take database references;
 *   handle   (loop thread, or the thread pool when off_loop says so) the work;
 *   finish   (loop thread)  apply results to shared state (registry swaps).
 * Each returns 0 or an ANIM_E* code (srv_response_fail sets code and message
 * together); a failing step ends the request with that error. Work on the pool
 * touches only read-only shared data (database entries it holds a reference
 * to) and its own request and response.
 */
#ifndef SRV_SERVICE_H
#define SRV_SERVICE_H

#include <stdint.h>
#include "config.h"
#include "request.h"

struct srv_server;

struct srv_connection;

typedef struct {
  struct srv_server *server;
  const srv_config_t *config;
  uint64_t connection_id;
  struct srv_connection *connection; /* steps on the loop only: pool steps must not touch it */
} srv_service_ctx_t;

typedef int (*srv_service_step_fn)(const srv_service_ctx_t *ctx, const srv_request_t *request,
                                    srv_response_t *response);

typedef struct {
  const char *name;
  srv_service_step_fn prepare; /* may be NULL */
  srv_service_step_fn handle;
  srv_service_step_fn finish;  /* may be NULL */
  /* 1 when this request may take longer than about a millisecond and must
   * run on the thread pool. NULL: always on the loop. */
  int (*off_loop)(const srv_request_t *request, const srv_response_t *prepared);
  /* 1 when it reads or changes characters or subscriptions: it waits while a tick is in flight. */
  int crowd;
  /* 1 for administration (load, reload, unload): the connection must be admin. */
  int admin;
} srv_service_t;

/* The entry for type; NULL for an invalid type. */
const srv_service_t *srv_service_for(srv_request_type_t type);

#endif
