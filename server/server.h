/*
 * server.h: the listening server: libuv loop, TCP listener, the set of live
 * connections, signals and graceful shutdown.
 *
 * Lifecycle: srv_server_start binds and listens (port 0 takes an ephemeral
 * port, readable in bound_port); uv_run serves; SIGINT/SIGTERM or
 * srv_server_shutdown stop accepting, let in-flight work answer, flush and
 * close every connection, and close the server's handles, so uv_run returns
 * and uv_loop_close succeeds. With config metrics_port >= 0 the metrics
 * endpoint (metrics.h) listens too, from start until shutdown.
 */
#ifndef SRV_SERVER_H
#define SRV_SERVER_H

#include <stdint.h>
#include <uv.h>
#include "config.h"
#include "crowd.h"
#include "metrics.h"
#include "registry.h"

struct srv_connection;

typedef struct {
  uint64_t connections_accepted, connections_refused;
  uint64_t requests, errors, frames_rejected;
  uint64_t frames_sent, frames_dropped, stream_bytes, poses_sent, slow_subscribers_closed;
  uint64_t auth_failures, idle_closed;
} srv_counters_t;

typedef struct srv_server {
  uv_loop_t *loop;
  srv_config_t config;
  uv_tcp_t listener;
  uv_signal_t sigint, sigterm, sighup;
  uv_timer_t idle_sweep;       /* closes idle connections (--idle-timeout) */
  int argc;                    /* the command line, parsed again on SIGHUP */
  char **argv;
  int reloading;               /* databases being reopened on the pool */
  int shutdown_requested;      /* a shutdown request was answered: drain after it */
  struct srv_connection *connections; /* doubly linked */
  uint32_t nconnections;
  uint64_t next_connection_id;
  int shutting_down;
  char bound_host[64];
  int bound_port;
  srv_counters_t stats;
  srv_metrics_t metrics;      /* by type and code, histograms, the HTTP endpoint; loop thread only */
  srv_registry_t registry;    /* loop thread only */
  srv_crowd_t crowd;          /* characters and their tick */
  uint64_t next_subscription_id;
  uint64_t start_ns;           /* monotonic, for uptime */
  /* Reads land here and are consumed before the next read: one buffer serves
   * every connection, so idle connections hold no read buffer at all. */
  char read_buffer[64 * 1024];
} srv_server_t;

/* Binds, listens and installs signal handlers on loop (SIGINT/SIGTERM drain
 * and stop; SIGHUP reloads settings and databases, see reload.h). 0 or a
 * negative code with a message in err (bad address, port in use). */
int srv_server_start(srv_server_t *server, uv_loop_t *loop, const srv_config_t *config, char *err, int errlen);

/* Stops accepting and drains every connection; idempotent. */
void srv_server_shutdown(srv_server_t *server);

/* The numeric address and port of a socket address (IPv4 or IPv6). */
void srv_address_name(const struct sockaddr_storage *addr, char *out_host, size_t size, int *out_port);

/* After uv_run returned (everything drained): closes the signal handles. */
void srv_server_close(srv_server_t *server);

/* Called by a connection when it has been closed and freed. */
void srv_server_connection_closed(srv_server_t *server, struct srv_connection *connection);

#endif
