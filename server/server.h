/*
 * server.h: the server: the listener and its sessions, signals, graceful
 * shutdown, and the routing between the parts that do not know each other.
 *
 *   a request:  connection (bytes) -> dispatch (auth, steps, pool, parking)
 *               -> service -> core -> codec -> connection
 *   a tick:     crowd (simulate) -> server -> stream (encode, deliver)
 *               -> connection; crowd (tick ended) -> server -> dispatch (parked)
 *
 * The connection callbacks of every session and the crowd's hooks are set
 * here, so no part below walks another's lists: a connection that closes
 * has its characters destroyed and its subscriptions dropped by the
 * server's on_close.
 *
 * Lifecycle: srv_server_start binds and listens (port 0 takes an ephemeral
 * port, readable in bound_port) with the databases already in registry;
 * uv_run serves; SIGINT/SIGTERM or a shutdown request stop accepting, let
 * in-flight work answer, flush and close every connection, and close the
 * server's handles, so uv_run returns; srv_server_close then frees what is
 * left and uv_loop_close succeeds. With metrics_port >= 0 the metrics
 * endpoint (metrics.h) listens too, from start until shutdown.
 */
#ifndef SRV_SERVER_H
#define SRV_SERVER_H

#include <stdint.h>
#include <uv.h>
#include "config.h"
#include "counters.h"
#include "crowd.h"
#include "dispatch.h"
#include "machines.h"
#include "metrics.h"
#include "registry.h"
#include "stream.h"

typedef struct srv_server {
  uv_loop_t *loop;
  srv_config_t config;
  uv_tcp_t listener;
  uv_signal_t sigint, sigterm, sighup;
  uv_timer_t idle_sweep;       /* closes idle connections (--idle-timeout) */
  int argc;                    /* the command line, parsed again on SIGHUP */
  char **argv;
  int reloading;               /* databases being reopened on the pool */
  srv_session_t *sessions;     /* doubly linked */
  uint64_t next_connection_id;
  int shutting_down;
  char bound_host[64];
  int bound_port;
  uint64_t start_ns;           /* monotonic, for uptime */
  uint64_t trimmed_freed_bytes; /* the crowd's freed_bytes at the last malloc_trim */
  srv_counters_t counters;
  srv_metrics_t metrics;       /* by type and code, histograms, the HTTP endpoint; loop thread only */
  srv_registry_t registry;     /* loop thread only */
  srv_machines_t machines;     /* loaded state machines; loop thread only */
  srv_crowd_t crowd;           /* characters and their tick */
  srv_streams_t streams;       /* subscriptions and their frames */
  srv_dispatch_t dispatch;     /* requests */
} srv_server_t;

/* Binds, listens and installs signal handlers on loop (SIGINT/SIGTERM drain
 * and stop; SIGHUP reloads settings and databases, see reload.h). registry
 * (may be NULL) is moved into the server. 0 or a negative code with a
 * message in err (bad address, port in use). */
int srv_server_start(srv_server_t *server, uv_loop_t *loop, const srv_config_t *config, srv_registry_t *registry,
                     char *err, int errlen);

/* Stops accepting and drains every connection; idempotent. */
void srv_server_shutdown(srv_server_t *server);

/* After uv_run returned (everything drained): closes the signal handles,
 * frees the characters and the databases. */
void srv_server_close(srv_server_t *server);

#endif
