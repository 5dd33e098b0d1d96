/* server.c: listener, sessions, signals, graceful shutdown and the routing between parts (see server.h). */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "body.h"
#include "graphs.h"
#include "log.h"
#include "net.h"
#include "reload.h"
#include "server.h"

/* After this much memory went back to the allocator (a client's output, its
 * characters), the server gives it back to the system. */
#define TRIM_AFTER_BYTES (4u << 20)

/* ---- sessions: the connections' callbacks ------------------------------------------------- */

/* glibc keeps freed memory in its arenas; after a client that held many
 * megabytes (output, characters) goes, trimming lets the server's RSS follow
 * its load instead of its worst moment. */
static void give_back_memory(srv_server_t *server) {
  uint64_t freed = server->crowd.stats.freed_bytes;
  int output = server->counters.output_bytes_peak >= server->counters.output_bytes + TRIM_AFTER_BYTES;
  if (!output && freed < server->trimmed_freed_bytes + TRIM_AFTER_BYTES) return;
  malloc_trim(0);
  server->trimmed_freed_bytes = freed;
  server->counters.output_bytes_peak = server->counters.output_bytes;
}

static srv_session_t *session_of(srv_connection_t *c) { return (srv_session_t *)c; }
static srv_server_t *server_of(srv_session_t *s) { return s->dispatch->data; }

static int on_frame(srv_connection_t *c, const uint8_t *frame, size_t len) {
  return srv_dispatch_frame(session_of(c), frame, len);
}

static void on_bad_frame(srv_connection_t *c, int code) { srv_dispatch_bad_frame(session_of(c), code); }

static void on_written(srv_connection_t *c) { srv_subscriber_on_written(&session_of(c)->subscriber); }

/* The session's characters and subscriptions go with its connection. A
 * subscriber closed at the output hard limit read its stream too slowly as
 * much as one closed by the stream limits (stream.c): counted with them. */
static void on_close(srv_connection_t *c, const char *reason) {
  srv_session_t *s = session_of(c);
  if (c->over_hard_limit && srv_subscriber_active(&s->subscriber)) server_of(s)->counters.slow_subscribers_closed++;
  srv_crowd_destroy_owned(&server_of(s)->crowd, c->id);
  srv_subscriber_close(&s->subscriber);
}

static void on_free(srv_connection_t *c) {
  srv_session_t *s = session_of(c);
  srv_server_t *server = server_of(s);
  if (s->prev) s->prev->next = s->next;
  else server->sessions = s->next;
  if (s->next) s->next->prev = s->prev;
  server->counters.connections--;
  srv_session_release(s);
  free(s);
  give_back_memory(server);
}

static void on_read_end(srv_connection_t *c) { srv_dispatch_read_end(session_of(c)); }

static const srv_connection_callbacks_t session_callbacks = {on_frame, on_bad_frame, on_written, on_close, on_free,
                                                             on_read_end};

static void on_connection(uv_stream_t *listener, int status) {
  srv_server_t *server = listener->data;
  if (status < 0) {
    srv_log(SRV_LOG_WARN, "accept failed: %s", uv_strerror(status));
    return;
  }
  srv_session_t *s = calloc(1, sizeof *s);
  if (!s) {
    srv_log(SRV_LOG_ERROR, "out of memory accepting a connection");
    return;
  }
  srv_connection_init(&s->connection, server->loop, ++server->next_connection_id, &server->config, &server->counters,
                      &session_callbacks);
  srv_session_init(s, &server->dispatch);
  s->next = server->sessions;
  if (server->sessions) server->sessions->prev = s;
  server->sessions = s;
  server->counters.connections++;
  int rc = srv_connection_accept(&s->connection, listener);
  if (rc < 0) {
    srv_log(SRV_LOG_WARN, "accept failed: %s", uv_strerror(rc));
    srv_connection_close(&s->connection, uv_strerror(rc));
    return;
  }
  if (server->counters.connections > server->config.max_connections || server->shutting_down) {
    server->counters.connections_refused++;
    srv_dispatch_refuse(s, server->shutting_down ? ANIM_ESHUTDOWN : ANIM_ELIMIT,
                        server->shutting_down ? "server is shutting down" : "too many connections (--max-connections)");
    srv_connection_drain(&s->connection);
    return;
  }
  server->counters.connections_accepted++;
  srv_log(SRV_LOG_DEBUG, "connection %llu from %s", (unsigned long long)s->connection.id, s->connection.peer);
  srv_connection_start(&s->connection);
}

/* ---- the crowd's hooks, routed to the streams, the dispatcher and the metrics ------------ */

static void crowd_prepare(srv_crowd_t *crowd, void *data) { srv_streams_prepare(&((srv_server_t *)data)->streams); }
static void crowd_chunk_simulated(srv_crowd_t *crowd, int chunk, void *data) {
  srv_streams_chunk_simulated(&((srv_server_t *)data)->streams, chunk);
}
static void crowd_simulated(srv_crowd_t *crowd, void *data) { srv_streams_run(&((srv_server_t *)data)->streams); }
static void crowd_ended(srv_crowd_t *crowd, void *data) {
  srv_server_t *server = data;
  srv_dispatch_resume(&server->dispatch);
  give_back_memory(server);
}
static int crowd_wants_ticks(srv_crowd_t *crowd, void *data) {
  return srv_streams_want_ticks(&((srv_server_t *)data)->streams);
}
static void crowd_counted(srv_crowd_t *crowd, uint64_t lateness_ns, uint64_t work_ns, void *data) {
  srv_metrics_tick(&((srv_server_t *)data)->metrics, lateness_ns, work_ns);
}

static int ready(void *data) {
  const srv_server_t *server = data;
  return !server->shutting_down && server->registry.count > 0;
}

static void on_shutdown_request(void *data) { srv_server_shutdown(data); }

/* ---- signals and the idle sweep ------------------------------------------------------------ */

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
  for (srv_session_t *s = server->sessions, *next; s; s = next) {
    next = s->next;
    srv_connection_t *c = &s->connection;
    if (c->closing || c->draining || s->in_flight || srv_subscriber_active(&s->subscriber)) continue;
    if ((double)(now - c->last_activity_ms) / 1000.0 < timeout) continue;
    server->counters.idle_closed++;
    srv_log(SRV_LOG_INFO, "connection %llu from %s: idle for %g s, closing", (unsigned long long)c->id, c->peer,
            timeout);
    srv_connection_drain(c);
  }
}

static void start_signals(srv_server_t *server) {
  uv_signal_t *handles[3] = {&server->sigint, &server->sigterm, &server->sighup};
  const int signums[3] = {SIGINT, SIGTERM, SIGHUP};
  for (int i = 0; i < 3; i++) {
    uv_signal_init(server->loop, handles[i]);
    handles[i]->data = server;
    uv_signal_start(handles[i], on_signal, signums[i]);
  }
}

/* ---- lifecycle ------------------------------------------------------------------------------ */

/* MuJoCo's warnings and errors (physical characters, any thread): to the
 * log, which writes each line with one fprintf from a stack buffer, safe
 * from the pool; never MUJOCO_LOG.TXT, never an exit (body.h). */
static void physics_log(int error, const char *message) {
  srv_log(error ? SRV_LOG_ERROR : SRV_LOG_WARN, "mujoco: %s", message);
}

int srv_server_start(srv_server_t *server, uv_loop_t *loop, const srv_config_t *config, srv_registry_t *registry,
                     char *err, int errlen) {
  memset(server, 0, sizeof *server);
  anim_physics_set_log(physics_log);
  server->loop = loop;
  server->config = *config;
  if (registry) {
    server->registry = *registry;
    memset(registry, 0, sizeof *registry);
  }
  server->start_ns = srv_scheduler_now_ns();
  server->listener.data = server;
  int rc = srv_listen(&server->listener, loop, config->host, config->port, config->reuseport, 511, on_connection,
                      server->bound_host, sizeof server->bound_host, &server->bound_port);
  if (rc < 0) {
    if (rc == ANIM_EINVAL)
      snprintf(err, errlen, "--host %s: not an IPv4 or IPv6 address", config->host);
    else
      snprintf(err, errlen, "cannot listen on %s:%d: %s%s", config->host, config->port, uv_strerror(rc),
               rc == UV_EADDRINUSE
                   ? (config->reuseport ? " (instances share a port only when every one has --reuseport)"
                                        : " (several instances on one port need --reuseport)")
                   : "");
    uv_close((uv_handle_t *)&server->listener, NULL);
    return rc == ANIM_EINVAL ? rc : ANIM_EIO;
  }
  srv_crowd_hooks_t hooks = {.data = server, .prepare = crowd_prepare, .chunk_simulated = crowd_chunk_simulated,
                             .simulated = crowd_simulated, .ended = crowd_ended, .wants_ticks = crowd_wants_ticks,
                             .counted = crowd_counted};
  if (srv_crowd_init(&server->crowd, loop, &server->config, &hooks) != 0) {
    snprintf(err, errlen, "cannot create the tick timer (timerfd) or the crowd's eventfd");
    uv_close((uv_handle_t *)&server->listener, NULL);
    return ANIM_EIO;
  }
  srv_streams_init(&server->streams, loop, &server->config, &server->counters, &server->crowd);
  srv_service_env_t env = {&server->config, &server->registry, &server->crowd, &server->streams, &server->counters,
                           server->start_ns, &server->machines};
  srv_dispatch_init(&server->dispatch, loop, &env, &server->counters, &server->metrics, on_shutdown_request, server);
  srv_metrics_source_t source = {.counters = &server->counters, .crowd = &server->crowd,
                                 .registry = &server->registry, .read_lane = &server->dispatch.reads.lane,
                                 .start_ns = server->start_ns, .ready = ready, .data = server};
  if ((rc = srv_metrics_start(&server->metrics, loop, config->metrics_host, config->metrics_port, &source, err,
                              errlen))) {
    uv_close((uv_handle_t *)&server->listener, NULL);
    srv_crowd_stop(&server->crowd);
    return rc;
  }
  start_signals(server);
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
  srv_metrics_close(&server->metrics);
  srv_crowd_stop(&server->crowd); /* a tick in flight still finishes */
  srv_graphs_cancel(&server->registry); /* graph builds stop at their next strip */
  for (srv_session_t *s = server->sessions; s; s = s->next) srv_connection_drain(&s->connection);
}

void srv_server_close(srv_server_t *server) {
  uv_close((uv_handle_t *)&server->sigint, NULL);
  uv_close((uv_handle_t *)&server->sigterm, NULL);
  uv_close((uv_handle_t *)&server->sighup, NULL);
  srv_dispatch_close(&server->dispatch);
  srv_crowd_close(&server->crowd);
  uv_run(server->loop, UV_RUN_DEFAULT); /* their close callbacks */
  srv_machines_clear(&server->machines);
  srv_registry_clear(&server->registry);
}
