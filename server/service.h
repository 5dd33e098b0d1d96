/*
 * service.h: what each request does, and the table from request type to
 * service (service.c, generated from request_types.h).
 *
 * A service has up to three steps:
 *   prepare  (loop thread)  resolve names, take database references;
 *   handle   (loop thread, or the thread pool when off_loop says so) the work;
 *   finish   (loop thread)  apply results to shared state (registry swaps).
 * Each returns 0 or an ANIM_E* code (srv_response_fail sets code and message
 * together); a failing step ends the request with that error. Work on the
 * pool touches only read-only shared data (database entries it holds a
 * reference to), the configuration, and its own request and response.
 *
 * Each service file (service_<area>.c) defines its services with
 * designated initializers:
 *   const srv_service_t srv_service_search = {.prepare = ..., .handle = ...};
 */
#ifndef SRV_SERVICE_H
#define SRV_SERVICE_H

#include <stdint.h>
#include "config.h"
#include "counters.h"
#include "crowd.h"
#include "machines.h"
#include "registry.h"
#include "request.h"
#include "stream.h"

/* What services may use (loop steps only, but config). */
typedef struct {
  const srv_config_t *config;
  srv_registry_t *registry;
  srv_crowd_t *crowd;
  srv_streams_t *streams;
  const srv_counters_t *counters;
  uint64_t start_ns; /* srv_scheduler_now_ns at startup, for uptime */
  srv_machines_t *machines; /* loaded state machines */
} srv_service_env_t;

typedef struct {
  const srv_service_env_t *env;
  uint64_t connection_id;
  int admin;                    /* the connection may run admin requests */
  srv_subscriber_t *subscriber; /* the connection's streams */
} srv_service_ctx_t;

typedef int (*srv_service_step_fn)(const srv_service_ctx_t *ctx, const srv_request_t *request,
                                   srv_response_t *response);

enum {
  SRV_SERVICE_CROWD = 1, /* reads or changes characters or subscriptions: waits while a tick is in flight
                          * (and so does its finish step after a pool handle) */
  SRV_SERVICE_ADMIN = 2  /* administration (load, reload, unload, shutdown): the connection must be admin */
};

typedef struct {
  srv_service_step_fn prepare; /* may be NULL */
  srv_service_step_fn handle;
  srv_service_step_fn finish;  /* may be NULL */
  /* 1 when this request may take longer than about a millisecond and must
   * run on the thread pool. NULL: always on the loop. */
  int (*off_loop)(const srv_request_t *request, const srv_response_t *prepared);
  unsigned flags; /* SRV_SERVICE_* */
} srv_service_t;

#define SRV_SERVICE_DECLARE(TYPE, name, Message) extern const srv_service_t srv_service_##name;
SRV_REQUEST_TYPES(SRV_SERVICE_DECLARE)
#undef SRV_SERVICE_DECLARE

/* The service of a request type; NULL for anything else. */
const srv_service_t *srv_service_for(int type);

/* Runs one step unless the response already failed; a step's bare code
 * becomes the response's error. */
void srv_service_run_step(srv_service_step_fn step, const srv_service_ctx_t *ctx, const srv_request_t *request,
                          srv_response_t *response);

/* prepare step shared by the requests that name a database: a reference to
 * request->database when it is set (ANIM_ENOTFOUND when it is not loaded). */
int srv_service_acquire_database(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *response);

/* data_dir/NAME<suffix> in out_path (PATH_MAX bytes): ANIM_ENOTFOUND when
 * there is no such file, ANIM_EBADNAME when it resolves outside data_dir
 * (symlinks). err says which. Any thread (reads config only). */
int srv_data_file_path(const srv_config_t *config, const char *name, const char *suffix, char *out_path, char *err,
                       int errlen);

/* The character id names as field[index], when this connection may steer
 * it; else NULL with the response failed (ANIM_ENOTFOUND, ANIM_EPERM). */
srv_actor_t *srv_service_owned_actor(const srv_service_ctx_t *ctx, uint64_t id, const char *field, int index,
                                     srv_response_t *out);

/* Opens data_dir/NAME.animdb as a registry entry (any thread: reads config
 * only). 0 or an ANIM_E* code with a message in err. */
int srv_database_open(const srv_config_t *config, const char *name, srv_db_entry_t **out_entry, char *err, int errlen);

#endif
