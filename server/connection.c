/* connection.c: per-connection reading, dispatch and writing (see connection.h). */
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "codec.h"
#include "crowd.h"
#include "connection.h"
#include "log.h"
#include "server.h"
#include "search.h"
#include "service.h"

/* Responses written together: one uv_write (one writev) for all the answers
 * produced while handling one read, as pipelining clients expect. */
#define WRITE_BATCH_MAX 64

typedef struct write_batch {
  uv_write_t req;
  srv_connection_t *connection;
  size_t len;
  int n;
  uv_buf_t bufs[WRITE_BATCH_MAX];
} write_batch_t;

/* A request sent to the thread pool. */
typedef struct {
  uv_work_t work;
  srv_connection_t *connection;
  const srv_service_t *service;
  srv_service_ctx_t ctx;
  srv_request_t request;
  srv_response_t response;
  uint8_t *encoded; /* encoded on the pool when no finish step follows */
  size_t encoded_len;
} job_t;

static void start_reading(srv_connection_t *c);
static void batch_free(write_batch_t *b);
static void maybe_finish_drain(srv_connection_t *c);
static void connection_free(srv_connection_t *c);

static void connection_free(srv_connection_t *c) {
  if (c->batch) batch_free(c->batch); /* answers that never went out */
  srv_streams_free(&c->streams);
  anim_frame_reader_free(&c->reader);
  srv_server_connection_closed(c->server, c);
  free(c);
}

static void on_close(uv_handle_t *handle) {
  srv_connection_t *c = handle->data;
  c->closed = 1;
  /* A job still on the pool holds a pointer: the last one frees. */
  if (c->in_flight == 0) connection_free(c);
}

void srv_connection_close(srv_connection_t *c, const char *reason) {
  if (c->closing) return;
  c->closing = 1;
  srv_crowd_connection_closed(&c->server->crowd, c->id);
  srv_log(SRV_LOG_INFO, "connection %llu from %s closed: %s", (unsigned long long)c->id, c->peer, reason);
  uv_close((uv_handle_t *)&c->tcp, on_close);
}

static void batch_free(write_batch_t *b) {
  for (int i = 0; i < b->n; i++) free(b->bufs[i].base);
  free(b);
}

static void on_write(uv_write_t *req, int status) {
  write_batch_t *b = (write_batch_t *)req;
  srv_connection_t *c = b->connection;
  c->queued_bytes -= b->len;
  batch_free(b);
  if (c->closing) return;
  if (status < 0) {
    srv_connection_close(c, uv_strerror(status));
    return;
  }
  if (c->paused && c->queued_bytes <= c->server->config.output_soft_limit / 2) {
    c->paused = 0;
    start_reading(c);
  }
  srv_streams_on_drain(c);
  maybe_finish_drain(c);
}

/* Hands the batch being filled to libuv. */
static void flush_output(srv_connection_t *c) {
  write_batch_t *b = c->batch;
  if (!b) return;
  c->batch = NULL;
  int rc = uv_write(&b->req, (uv_stream_t *)&c->tcp, b->bufs, (unsigned)b->n, on_write);
  if (rc < 0) {
    c->queued_bytes -= b->len;
    batch_free(b);
    srv_connection_close(c, uv_strerror(rc));
  }
}

/* Queues framed bytes (a malloc'd buffer; ownership taken). While a read is
 * being handled they wait in the batch; otherwise they go out at once. */
static void write_buffer(srv_connection_t *c, uint8_t *buffer, size_t len) {
  if (c->closing || c->shutdown_sent) {
    free(buffer);
    return;
  }
  if (!c->batch && !(c->batch = calloc(1, sizeof *c->batch))) {
    free(buffer);
    srv_connection_close(c, "out of memory");
    return;
  }
  write_batch_t *b = c->batch;
  b->connection = c;
  b->bufs[b->n++] = uv_buf_init((char *)buffer, (unsigned)len);
  b->len += len;
  c->queued_bytes += len;
  if (!c->batching || b->n == WRITE_BATCH_MAX) flush_output(c);
  const srv_config_t *config = &c->server->config;
  if (c->queued_bytes > config->output_hard_limit) {
    srv_log(SRV_LOG_WARN, "connection %llu: %zu bytes of output queued, over the hard limit",
             (unsigned long long)c->id, c->queued_bytes);
    srv_connection_close(c, "output hard limit");
  } else if (c->queued_bytes > config->output_soft_limit && c->reading) {
    /* The client is not reading its answers: stop reading its requests. */
    uv_read_stop((uv_stream_t *)&c->tcp);
    c->reading = 0;
    c->paused = 1;
  }
}

void srv_connection_write(srv_connection_t *c, uint8_t *buffer, size_t len) { write_buffer(c, buffer, len); }

static void send_response(srv_connection_t *c, const srv_response_t *response) {
  uint8_t *buffer;
  size_t len;
  if (response->error) {
    c->server->stats.errors++;
    srv_metrics_error(&c->server->metrics, response->error);
  }
  if (srv_codec_encode_response(response, 0, &buffer, &len) != 0) {
    srv_connection_close(c, "out of memory encoding a response");
    return;
  }
  write_buffer(c, buffer, len);
}

static void send_error(srv_connection_t *c, uint64_t id, int code, const char *message) {
  srv_response_t response;
  memset(&response, 0, sizeof response);
  response.id = id;
  srv_response_fail(&response, code, "%s", message);
  send_response(c, &response);
}

static srv_service_ctx_t service_ctx(srv_connection_t *c) {
  srv_service_ctx_t ctx = {c->server, &c->server->config, c->id, c};
  return ctx;
}

/* Runs a step unless the request already failed; the step's code becomes the error. */
static void run_step(srv_service_step_fn step, const srv_service_ctx_t *ctx, const srv_request_t *request,
                     srv_response_t *response) {
  if (!step || response->error) return;
  int rc = step(ctx, request, response);
  if (rc && !response->error) srv_response_fail(response, rc, "%s", anim_strerror(rc));
}

/* Answers and releases a request whose steps are done (loop thread). */
static void complete(srv_connection_t *c, srv_request_t *request, srv_response_t *response) {
  send_response(c, response);
  srv_metrics_request(&c->server->metrics, request->type, request->received_ns);
  srv_response_release(response);
  srv_request_release(request);
}

/* ---- thread-pool path ------------------------------------------------------------- */

static void job_run(uv_work_t *work) {
  job_t *job = work->data;
  run_step(job->service->handle, &job->ctx, &job->request, &job->response);
  /* Encoding reads only the job's own data and read-only databases: do it
   * here too, unless a finish step on the loop may still change the answer. */
  if (!job->service->finish &&
      srv_codec_encode_response(&job->response, 0, &job->encoded, &job->encoded_len) != 0)
    job->encoded = NULL;
}

static void job_done(uv_work_t *work, int status) {
  job_t *job = work->data;
  srv_connection_t *c = job->connection;
  if (status < 0) {
    free(job->encoded);
    job->encoded = NULL;
    srv_response_fail(&job->response, ANIM_ESHUTDOWN, "request cancelled");
  }
  if (job->encoded) {
    if (job->response.error) {
      c->server->stats.errors++;
      srv_metrics_error(&c->server->metrics, job->response.error);
    }
    write_buffer(c, job->encoded, job->encoded_len);
    srv_metrics_request(&c->server->metrics, job->request.type, job->request.received_ns);
    srv_response_release(&job->response);
    srv_request_release(&job->request);
  } else {
    if (status == 0) run_step(job->service->finish, &job->ctx, &job->request, &job->response);
    complete(c, &job->request, &job->response);
  }
  free(job);
  srv_connection_job_done(c);
}

/* Queues the prepared request on the pool; the job takes both structs over. */
static int dispatch_off_loop(srv_connection_t *c, const srv_service_t *service, srv_request_t *request,
                             srv_response_t *response) {
  job_t *job = calloc(1, sizeof *job);
  if (!job) return ANIM_ENOMEM;
  job->work.data = job;
  job->connection = c;
  job->service = service;
  job->ctx = service_ctx(c);
  job->request = *request;
  job->response = *response;
  if (uv_queue_work(c->server->loop, &job->work, job_run, job_done) < 0) {
    free(job);
    return ANIM_EINTERNAL;
  }
  c->in_flight++;
  return 0;
}

/* ---- reading ---------------------------------------------------------------------- */

/* Constant time in the length of the expected token, so timing tells an
 * attacker nothing about how much of a guess was right. */
static int token_matches(const char *expected, const char *given) {
  size_t n = strlen(expected), m = strlen(given);
  unsigned char diff = (unsigned char)(n != m);
  for (size_t i = 0; i < n; i++) diff |= (unsigned char)(expected[i] ^ given[i < m ? i : 0]);
  return diff == 0;
}

/* Hello decides what the connection may do; 0, or an error already sent. */
static int authenticate(srv_connection_t *c, const srv_request_t *request) {
  const srv_config_t *config = &c->server->config;
  if (request->type == SRV_REQ_HELLO && config->auth_token[0]) {
    const char *token = request->body.hello.auth_token;
    int user = token_matches(config->auth_token, token);
    int admin = config->admin_token[0] ? token_matches(config->admin_token, token) : user;
    if (!user && !admin) {
      c->server->stats.auth_failures++;
      send_error(c, request->id, ANIM_EPERM, "wrong auth token");
      flush_output(c); /* the answer goes out before the drain shuts the stream */
      srv_connection_drain(c); /* one guess per connection */
      return ANIM_EPERM;
    }
    c->authenticated = 1;
    c->admin = admin;
    return 0;
  }
  if (!c->authenticated) {
    send_error(c, request->id, ANIM_EPERM, "this server needs authentication: send hello with the auth token first");
    return ANIM_EPERM;
  }
  const srv_service_t *service = srv_service_for(request->type);
  if (service->admin && !c->admin) {
    send_error(c, request->id, ANIM_EPERM, "an administrative request: needs the admin token");
    return ANIM_EPERM;
  }
  return 0;
}

static void dispatch(srv_connection_t *c, srv_request_t *request) {
  const srv_service_t *service = srv_service_for(request->type);
  if (authenticate(c, request) != 0) {
    srv_metrics_request(&c->server->metrics, request->type, request->received_ns);
    srv_request_release(request);
    return;
  }
  if (service->crowd && c->server->crowd.ticking) { /* the pool owns the characters until the tick ends */
    if (c->in_flight >= c->server->config.max_in_flight)
      send_error(c, request->id, ANIM_ELIMIT, "too many requests in flight on this connection");
    else if (srv_crowd_defer(&c->server->crowd, c, request) == 0)
      return; /* the crowd holds the request now */
    else
      send_error(c, request->id, ANIM_ENOMEM, "out of memory");
    srv_metrics_request(&c->server->metrics, request->type, request->received_ns);
    srv_request_release(request);
    return;
  }
  srv_service_ctx_t ctx = service_ctx(c);
  srv_response_t response;
  memset(&response, 0, sizeof response);
  response.id = request->id;
  response.type = request->type;
  run_step(service->prepare, &ctx, request, &response);
  if (!response.error && service->off_loop && service->off_loop(request, &response)) {
    if (c->in_flight >= c->server->config.max_in_flight)
      srv_response_fail(&response, ANIM_ELIMIT, "more than %u requests in flight on this connection",
                         c->server->config.max_in_flight);
    else if (dispatch_off_loop(c, service, request, &response) == 0)
      return; /* the job owns request and response now */
    else
      srv_response_fail(&response, ANIM_EINTERNAL, "cannot queue the request");
  }
  run_step(service->handle, &ctx, request, &response);
  run_step(service->finish, &ctx, request, &response);
  complete(c, request, &response);
  if (c->server->shutdown_requested && !c->server->shutting_down) {
    flush_output(c); /* the answer goes out before the drain shuts the stream */
    srv_log(SRV_LOG_INFO, "shutdown requested by connection %llu from %s", (unsigned long long)c->id, c->peer);
    srv_server_shutdown(c->server);
  }
}

void srv_connection_job_done(srv_connection_t *c) {
  c->in_flight--;
  if (c->closed && c->in_flight == 0) connection_free(c);
  else maybe_finish_drain(c);
}

void srv_connection_resume(srv_connection_t *c, void *parked) {
  srv_request_t *request = parked;
  if (c->closing) srv_request_release(request);
  else dispatch(c, request);
  srv_connection_job_done(c);
}

static int on_frame(void *ctx, const uint8_t *frame, size_t len) {
  srv_connection_t *c = ctx;
  srv_request_t request;
  char err[SRV_ERROR_MESSAGE_MAX];
  const srv_config_t *config = &c->server->config;
  srv_codec_limits_t limits = {config->decode_budget_bytes, config->max_batch, ANIM_SEARCH_MAX_K,
                                config->max_pose_frames};
  c->server->stats.requests++;
  uint64_t received_ns = srv_scheduler_now_ns();
  int rc = srv_codec_decode_request(frame, len, &limits, &request, err, sizeof err);
  if (rc != 0) {
    srv_log(SRV_LOG_DEBUG, "connection %llu: bad request: %s", (unsigned long long)c->id, err);
    send_error(c, request.id, rc, err);
    srv_metrics_request(&c->server->metrics, SRV_REQ_COUNT, received_ns);
    srv_request_release(&request);
  } else {
    request.received_ns = received_ns;
    dispatch(c, &request);
  }
  /* Backpressure or an error may have stopped this connection mid-buffer. */
  return c->closing ? ANIM_ECLOSED : 0;
}

static void on_alloc(uv_handle_t *handle, size_t suggested, uv_buf_t *buf) {
  srv_connection_t *c = handle->data;
  buf->base = c->server->read_buffer;
  buf->len = sizeof c->server->read_buffer;
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf) {
  srv_connection_t *c = stream->data;
  if (nread == UV_EOF) {
    srv_connection_close(c, "client closed");
    return;
  }
  if (nread < 0) {
    srv_connection_close(c, uv_strerror((int)nread));
    return;
  }
  c->last_activity_ms = uv_now(c->server->loop);
  c->batching = 1;
  int rc = anim_frame_reader_feed(&c->reader, (const uint8_t *)buf->base, (size_t)nread, on_frame, c);
  c->batching = 0;
  flush_output(c);
  if (rc == ANIM_ETOOBIG || rc == ANIM_EPROTO || rc == ANIM_ENOMEM) {
    c->server->stats.frames_rejected++;
    send_error(c, 0, rc,
               rc == ANIM_ETOOBIG ? "frame length over the server's max_frame_bytes" : "malformed frame length");
    srv_connection_drain(c);
  }
}

static void start_reading(srv_connection_t *c) {
  if (c->reading || c->closing || c->draining) return;
  if (uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) == 0) c->reading = 1;
}

/* ---- drain and accept ------------------------------------------------------------ */

static void on_shutdown(uv_shutdown_t *req, int status) {
  srv_connection_t *c = req->data;
  free(req);
  srv_connection_close(c, "drained");
}

static void maybe_finish_drain(srv_connection_t *c) {
  if (!c->draining || c->shutdown_sent || c->closing || c->in_flight > 0) return;
  c->shutdown_sent = 1; /* no more writes; uv_shutdown flushes what is queued */
  uv_shutdown_t *req = malloc(sizeof *req);
  if (req) {
    req->data = c;
    if (uv_shutdown(req, (uv_stream_t *)&c->tcp, on_shutdown) == 0) return;
    free(req);
  }
  srv_connection_close(c, "drained");
}

void srv_connection_drain(srv_connection_t *c) {
  if (c->draining || c->closing) return;
  c->draining = 1;
  if (c->reading) uv_read_stop((uv_stream_t *)&c->tcp);
  c->reading = 0;
  maybe_finish_drain(c);
}

int srv_connection_accept(srv_server_t *server, uv_stream_t *listener) {
  srv_connection_t *c = calloc(1, sizeof *c);
  if (!c) return ANIM_ENOMEM;
  uv_tcp_init(server->loop, &c->tcp);
  c->tcp.data = c;
  c->server = server;
  c->id = ++server->next_connection_id;
  c->last_activity_ms = uv_now(server->loop);
  /* Without an auth token every connection may do everything (loopback only, by protected mode). */
  c->authenticated = c->admin = server->config.auth_token[0] == '\0';
  anim_frame_reader_init(&c->reader, server->config.max_frame_bytes);
  c->next = server->connections;
  if (server->connections) server->connections->prev = c;
  server->connections = c;
  server->nconnections++;

  int rc = uv_accept(listener, (uv_stream_t *)&c->tcp);
  if (rc < 0) {
    srv_connection_close(c, uv_strerror(rc));
    return rc;
  }
  uv_tcp_nodelay(&c->tcp, 1);
  struct sockaddr_storage addr;
  int addrlen = sizeof addr;
  snprintf(c->peer, sizeof c->peer, "?");
  if (uv_tcp_getpeername(&c->tcp, (struct sockaddr *)&addr, &addrlen) == 0) {
    char ip[48] = "?";
    int port = 0;
    srv_address_name(&addr, ip, sizeof ip, &port);
    snprintf(c->peer, sizeof c->peer, "%s:%d", ip, port);
  }
  if (server->nconnections > server->config.max_connections || server->shutting_down) {
    server->stats.connections_refused++;
    send_error(c, 0, server->shutting_down ? ANIM_ESHUTDOWN : ANIM_ELIMIT,
               server->shutting_down ? "server is shutting down" : "too many connections");
    srv_connection_drain(c);
    return 0;
  }
  server->stats.connections_accepted++;
  srv_log(SRV_LOG_DEBUG, "connection %llu from %s", (unsigned long long)c->id, c->peer);
  start_reading(c);
  return 0;
}
