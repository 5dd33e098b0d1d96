/* server.c: listener, connection set, signals and graceful shutdown (see server.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include "anim_error.h"
#include "connection.h"
#include "log.h"
#include "reload.h"
#include "server.h"

static void on_connection(uv_stream_t *listener, int status) {
  srv_server_t *server = listener->data;
  if (status < 0) {
    srv_log(SRV_LOG_WARN, "accept failed: %s", uv_strerror(status));
    return;
  }
  int rc = srv_connection_accept(server, listener);
  if (rc < 0) srv_log(SRV_LOG_WARN, "accept failed: %s", rc < ANIM_ERRNO_MIN ? uv_strerror(rc) : anim_strerror(rc));
}

static void on_signal(uv_signal_t *handle, int signum) {
  srv_server_t *server = handle->data;
  if (server->shutting_down) {
    srv_log(SRV_LOG_INFO, "received a signal while shutting down: still draining");
    return;
  }
  if (signum == SIGHUP) {
    srv_log(SRV_LOG_INFO, "received SIGHUP: reloading settings and databases");
    srv_server_reload(server);
    return;
  }
  srv_log(SRV_LOG_INFO, "received %s: shutting down", signum == SIGINT ? "SIGINT" : "SIGTERM");
  srv_server_shutdown(server);
}

/* Four times a second: connections with nothing to do for idle_timeout are
 * drained. A subscriber receiving frames, or one with work in flight, is not
 * idle (as Redis spares pub/sub clients its timeout). */
static void on_idle_sweep(uv_timer_t *timer) {
  srv_server_t *server = timer->data;
  double timeout = server->config.idle_timeout;
  if (!(timeout > 0)) return;
  uint64_t now = uv_now(server->loop);
  for (srv_connection_t *c = server->connections, *next; c; c = next) {
    next = c->next;
    if (c->closing || c->draining || c->in_flight || srv_streams_active(&c->streams)) continue;
    if ((double)(now - c->last_activity_ms) / 1000.0 < timeout) continue;
    server->stats.idle_closed++;
    srv_log(SRV_LOG_INFO, "connection %llu from %s: idle for %g s, closing", (unsigned long long)c->id, c->peer,
             timeout);
    srv_connection_drain(c);
  }
}

static int resolve(const char *host, int port, struct sockaddr_storage *out) {
  if (uv_ip4_addr(host, port, (struct sockaddr_in *)out) == 0) return 0;
  if (uv_ip6_addr(host, port, (struct sockaddr_in6 *)out) == 0) return 0;
  return ANIM_EINVAL;
}

/* The listening handle. With reuseport the socket must exist before bind to
 * take SO_REUSEPORT (libuv 1.44 has no bind flag for it), so it is created
 * for the address's family, set, and bound by the caller; the kernel then
 * spreads new connections over every socket bound to the port with the
 * option (same user). The handle is initialized even on failure (closed by
 * the caller). */
static int open_listener(srv_server_t *server, uv_loop_t *loop, const struct sockaddr_storage *addr, int reuseport) {
  server->listener.data = server;
  if (!reuseport) return uv_tcp_init(loop, &server->listener);
  int rc = uv_tcp_init_ex(loop, &server->listener, addr->ss_family);
  if (rc < 0) {
    uv_tcp_init(loop, &server->listener);
    server->listener.data = server;
    return rc;
  }
  uv_os_fd_t fd;
  if ((rc = uv_fileno((uv_handle_t *)&server->listener, &fd)) < 0) return rc;
  int on = 1;
  if (setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof on) < 0) return uv_translate_sys_error(errno);
  return 0;
}

void srv_address_name(const struct sockaddr_storage *addr, char *out_host, size_t size, int *out_port) {
  if (addr->ss_family == AF_INET6) {
    uv_ip6_name((const struct sockaddr_in6 *)addr, out_host, size);
    *out_port = ntohs(((const struct sockaddr_in6 *)addr)->sin6_port);
  } else {
    uv_ip4_name((const struct sockaddr_in *)addr, out_host, size);
    *out_port = ntohs(((const struct sockaddr_in *)addr)->sin_port);
  }
}

static void record_bound_address(srv_server_t *server) {
  struct sockaddr_storage addr;
  int len = sizeof addr;
  uv_tcp_getsockname(&server->listener, (struct sockaddr *)&addr, &len);
  srv_address_name(&addr, server->bound_host, sizeof server->bound_host, &server->bound_port);
}

int srv_server_start(srv_server_t *server, uv_loop_t *loop, const srv_config_t *config, char *err, int errlen) {
  memset(server, 0, sizeof *server);
  server->loop = loop;
  server->config = *config;
  struct sockaddr_storage addr;
  if (resolve(config->host, config->port, &addr) != 0) {
    snprintf(err, errlen, "--host %s: not an IPv4 or IPv6 address", config->host);
    return ANIM_EINVAL;
  }
  int rc = open_listener(server, loop, &addr, config->reuseport);
  if (rc == 0) rc = uv_tcp_bind(&server->listener, (const struct sockaddr *)&addr, 0);
  if (rc == 0) rc = uv_listen((uv_stream_t *)&server->listener, 511, on_connection);
  if (rc < 0) {
    snprintf(err, errlen, "cannot listen on %s:%d: %s%s", config->host, config->port, uv_strerror(rc),
             rc == UV_EADDRINUSE ? (config->reuseport ? " (instances share a port only when every one has --reuseport)"
                                                      : " (several instances on one port need --reuseport)")
                                 : "");
    uv_close((uv_handle_t *)&server->listener, NULL);
    return ANIM_EIO;
  }
  record_bound_address(server);
  server->start_ns = srv_scheduler_now_ns();
  if ((rc = srv_metrics_start(server, err, errlen)) != 0) {
    uv_close((uv_handle_t *)&server->listener, NULL);
    return rc;
  }
  if (srv_crowd_init(&server->crowd, server) != 0) {
    snprintf(err, errlen, "cannot create the tick timer (timerfd)");
    uv_close((uv_handle_t *)&server->listener, NULL);
    srv_metrics_close(server);
    return ANIM_EIO;
  }
  uv_signal_init(loop, &server->sigint);
  uv_signal_init(loop, &server->sigterm);
  server->sigint.data = server->sigterm.data = server;
  uv_signal_start(&server->sigint, on_signal, SIGINT);
  uv_signal_start(&server->sigterm, on_signal, SIGTERM);
  uv_signal_init(loop, &server->sighup);
  server->sighup.data = server;
  uv_signal_start(&server->sighup, on_signal, SIGHUP);
  uv_timer_init(loop, &server->idle_sweep);
  server->idle_sweep.data = server;
  uv_timer_start(&server->idle_sweep, on_idle_sweep, 250, 250);
  uv_unref((uv_handle_t *)&server->idle_sweep);
  return 0;
}

void srv_server_shutdown(srv_server_t *server) {
  if (server->shutting_down) return;
  server->shutting_down = 1;
  uv_close((uv_handle_t *)&server->listener, NULL);
  /* Signals stay handled while draining (a second SIGTERM must not kill a
   * server that is finishing its work), but no longer keep the loop alive;
   * srv_server_close closes them once the loop has run dry. */
  uv_unref((uv_handle_t *)&server->sigint);
  uv_unref((uv_handle_t *)&server->sigterm);
  uv_unref((uv_handle_t *)&server->sighup);
  uv_close((uv_handle_t *)&server->idle_sweep, NULL);
  /* /ready would say 503 from here on; the endpoint closes with the rest so the loop can end. */
  srv_metrics_close(server);
  srv_scheduler_close(&server->crowd.scheduler); /* a tick in flight still finishes */
  /* Drain may free a connection synchronously only through uv callbacks, so
   * walking the list here is safe. */
  for (srv_connection_t *c = server->connections; c; c = c->next) srv_connection_drain(c);
}

void srv_server_close(srv_server_t *server) {
  uv_close((uv_handle_t *)&server->sigint, NULL);
  uv_close((uv_handle_t *)&server->sigterm, NULL);
  uv_close((uv_handle_t *)&server->sighup, NULL);
  uv_run(server->loop, UV_RUN_DEFAULT); /* their close callbacks */
}

void srv_server_connection_closed(srv_server_t *server, srv_connection_t *c) {
  if (c->prev) c->prev->next = c->next;
  else server->connections = c->next;
  if (c->next) c->next->prev = c->prev;
  server->nconnections--;
}
