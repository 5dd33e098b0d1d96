/* connection.c: a connection's bytes in and out (see connection.h). */
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "connection.h"
#include "log.h"
#include "net.h"

/* Frames written together: one uv_write (one writev) for all the answers
 * produced while handling one read. */
#define WRITE_BATCH_MAX 64

/* Finished batches kept for the next writes: steady streaming allocates none. */
#define SPARE_BATCHES 4

typedef struct write_batch {
  uv_write_t req;
  srv_connection_t *connection;
  struct write_batch *next_spare;
  size_t len;
  int n;
  srv_buffer_t *buffers[WRITE_BATCH_MAX];
  uv_buf_t bufs[WRITE_BATCH_MAX];
} write_batch_t;

/* Reads land here and are consumed before the next read (one loop thread):
 * idle connections hold no read buffer at all. */
static char read_buffer[64 * 1024];

static void start_reading(srv_connection_t *c);
static void maybe_finish_drain(srv_connection_t *c);
static void on_write(uv_write_t *req, int status);

int srv_connection_open(const srv_connection_t *c) { return !c->closing; }
size_t srv_connection_output(const srv_connection_t *c) { return c->queued_bytes + c->pending_bytes; }
size_t srv_connection_queued(const srv_connection_t *c) { return c->queued_bytes; }
size_t srv_connection_memory(const srv_connection_t *c) { return c->queued_bytes + c->held_bytes; }

/* ---- lifetime ------------------------------------------------------------------- */

static void batch_clear(write_batch_t *b) {
  for (int i = 0; i < b->n; i++) srv_buffer_release(b->buffers[i]);
  b->n = 0;
  b->len = 0;
}

static void batch_free(write_batch_t *b) {
  if (!b) return;
  batch_clear(b);
  free(b);
}

static void maybe_free(srv_connection_t *c) {
  if (!c->closed || c->holds > 0 || c->internal > 0) return;
  batch_free(c->batch);
  while (c->spare) {
    write_batch_t *b = c->spare;
    c->spare = b->next_spare;
    free(b);
  }
  c->batch = NULL;
  anim_frame_reader_free(&c->reader);
  c->callbacks->on_free(c);
}

static void on_close(uv_handle_t *handle) {
  srv_connection_t *c = handle->data;
  c->closed = 1;
  maybe_free(c);
}

void srv_connection_close(srv_connection_t *c, const char *reason) {
  if (c->closing) return;
  c->closing = 1;
  c->callbacks->on_close(c, reason);
  srv_connection_set_held(c, 0, 0);
  srv_log(SRV_LOG_INFO, "connection %llu from %s closed: %s", (unsigned long long)c->id, c->peer, reason);
  uv_close((uv_handle_t *)&c->tcp, on_close);
}

void srv_connection_close_over_limit(srv_connection_t *c, const char *reason) {
  if (c->closing) return;
  c->counters->output_limit_closed++;
  c->over_hard_limit = 1;
  srv_connection_close(c, reason);
}

void srv_connection_hold(srv_connection_t *c) { c->holds++; }

void srv_connection_release(srv_connection_t *c) {
  c->holds--;
  if (c->closed) maybe_free(c);
  else maybe_finish_drain(c);
}

/* The connection's own references: writes in flight, a read being handled, the shutdown. */
static void internal_hold(srv_connection_t *c) { c->internal++; }

static void internal_release(srv_connection_t *c) {
  c->internal--;
  maybe_free(c);
}

/* ---- output accounting ------------------------------------------------------------ */

static void account(srv_connection_t *c, size_t queued, size_t held) {
  srv_counters_t *k = c->counters;
  k->output_bytes = k->output_bytes - c->queued_bytes - c->held_bytes + queued + held;
  if (k->output_bytes > k->output_bytes_peak) k->output_bytes_peak = k->output_bytes;
  c->queued_bytes = queued;
  c->held_bytes = held;
}

/* The limits after output grew: pause reading above the soft limit, close above the hard one. */
static void enforce_limits(srv_connection_t *c) {
  if (c->closing) return;
  size_t output = srv_connection_output(c), memory = srv_connection_memory(c);
  if (memory > c->config->output_hard_limit) {
    srv_log(SRV_LOG_WARN, "connection %llu: %zu bytes of output queued or held, over the hard limit",
            (unsigned long long)c->id, memory);
    srv_connection_close_over_limit(c, "output hard limit");
  } else if (output > c->config->output_soft_limit && c->reading) {
    /* The client is not reading its answers: stop reading its requests. */
    uv_read_stop((uv_stream_t *)&c->tcp);
    c->reading = 0;
    c->paused = 1;
  }
}

void srv_connection_set_held(srv_connection_t *c, size_t pending, size_t memory) {
  size_t before = c->held_bytes, pending_before = c->pending_bytes;
  c->pending_bytes = pending;
  account(c, c->queued_bytes, memory);
  if (memory > before || pending > pending_before) enforce_limits(c);
}

/* ---- writing ----------------------------------------------------------------------- */

static void on_write(uv_write_t *req, int status) {
  write_batch_t *b = (write_batch_t *)req;
  srv_connection_t *c = b->connection;
  account(c, c->queued_bytes - b->len, c->held_bytes);
  batch_clear(b);
  if (c->nspare < SPARE_BATCHES) {
    b->next_spare = c->spare;
    c->spare = b;
    c->nspare++;
  } else {
    free(b);
  }
  if (!c->closing && status < 0) {
    srv_connection_close(c, uv_strerror(status));
  } else if (!c->closing) {
    if (c->paused && srv_connection_output(c) <= c->config->output_soft_limit / 2) {
      c->paused = 0;
      start_reading(c);
    }
    c->callbacks->on_written(c);
    maybe_finish_drain(c);
  }
  internal_release(c);
}

/* What on_write does once bytes left: reading resumes below half the soft
 * limit, a drain finishes. */
static void after_output_drop(srv_connection_t *c) {
  if (c->paused && srv_connection_output(c) <= c->config->output_soft_limit / 2) {
    c->paused = 0;
    start_reading(c);
  }
  maybe_finish_drain(c);
}

void srv_connection_flush(srv_connection_t *c) {
  write_batch_t *b = c->batch;
  if (!b || b->n == 0) return;
  if (c->closing) { /* closed while corked: the answers go nowhere */
    c->batch = NULL;
    account(c, c->queued_bytes - b->len, c->held_bytes);
    batch_free(b);
    return;
  }
  /* Straight to the socket when libuv has nothing queued (the usual case):
   * a uv_write that completes at once still costs a completion callback on
   * the next loop turn and an epoll_ctl when libuv stops watching for room
   * (one per read under pipelining). Only what did not fit is queued. The
   * owner's on_written is left to real completions: with frames held back
   * (pending) the whole batch goes through uv_write. */
  int sent = c->pending_bytes == 0 ? uv_try_write((uv_stream_t *)&c->tcp, b->bufs, (unsigned)b->n) : UV_EAGAIN;
  if (sent < 0 && sent != UV_EAGAIN) {
    c->batch = NULL;
    account(c, c->queued_bytes - b->len, c->held_bytes);
    batch_free(b);
    srv_connection_close(c, uv_strerror(sent));
    return;
  }
  size_t done = sent > 0 ? (size_t)sent : 0;
  if (done == b->len) { /* all written: the batch stays for the next answers */
    account(c, c->queued_bytes - b->len, c->held_bytes);
    batch_clear(b);
    after_output_drop(c);
    return;
  }
  c->batch = NULL;
  int first = 0;
  account(c, c->queued_bytes - done, c->held_bytes);
  b->len -= done;
  while (done >= b->bufs[first].len) done -= b->bufs[first++].len;
  b->bufs[first].base += done;
  b->bufs[first].len -= (unsigned)done;
  internal_hold(c);
  int rc = uv_write(&b->req, (uv_stream_t *)&c->tcp, b->bufs + first, (unsigned)(b->n - first), on_write);
  if (rc < 0) {
    account(c, c->queued_bytes - b->len, c->held_bytes);
    batch_free(b);
    srv_connection_close(c, uv_strerror(rc));
    internal_release(c);
  }
}

static write_batch_t *take_batch(srv_connection_t *c) {
  if (c->batch) return c->batch;
  if (c->spare) {
    c->batch = c->spare;
    c->spare = c->spare->next_spare;
    c->nspare--;
  } else if (!(c->batch = calloc(1, sizeof *c->batch))) {
    return NULL;
  }
  c->batch->connection = c;
  c->batch->req.data = c->batch;
  return c->batch;
}

void srv_connection_write(srv_connection_t *c, srv_buffer_t *buffer) {
  if (c->closing || c->shutdown_sent) {
    srv_buffer_release(buffer);
    return;
  }
  write_batch_t *b = take_batch(c);
  if (!b) {
    srv_buffer_release(buffer);
    srv_connection_close(c, "out of memory");
    return;
  }
  b->buffers[b->n] = buffer;
  b->bufs[b->n++] = uv_buf_init((char *)buffer->data, (unsigned)buffer->len);
  b->len += buffer->len;
  account(c, c->queued_bytes + buffer->len, c->held_bytes);
  if (!c->batching || b->n == WRITE_BATCH_MAX) srv_connection_flush(c);
  enforce_limits(c);
}

void srv_connection_cork(srv_connection_t *c) { c->batching++; }

void srv_connection_uncork(srv_connection_t *c) {
  if (--c->batching == 0) srv_connection_flush(c);
}

/* ---- reading ----------------------------------------------------------------------- */

static int on_frame(void *ctx, const uint8_t *frame, size_t len) {
  srv_connection_t *c = ctx;
  int rc = c->callbacks->on_frame(c, frame, len);
  /* Backpressure or an error may have stopped this connection mid-buffer. */
  return rc ? rc : c->closing || c->draining ? ANIM_ECLOSED : 0;
}

static void on_alloc(uv_handle_t *handle, size_t suggested, uv_buf_t *buf) {
  buf->base = read_buffer;
  buf->len = sizeof read_buffer;
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
  c->last_activity_ms = uv_now(c->tcp.loop);
  c->read_ns = uv_hrtime(); /* CLOCK_MONOTONIC, as srv_scheduler_now_ns */
  internal_hold(c); /* the callbacks may close it: keep the memory until the end of this read */
  srv_connection_cork(c);
  int rc = anim_frame_reader_feed(&c->reader, (const uint8_t *)buf->base, (size_t)nread, on_frame, c);
  if (c->callbacks->on_read_end) c->callbacks->on_read_end(c);
  srv_connection_uncork(c);
  if (!c->closing && (rc == ANIM_ETOOBIG || rc == ANIM_EPROTO || rc == ANIM_ENOMEM)) {
    c->counters->frames_rejected++;
    c->callbacks->on_bad_frame(c, rc);
    srv_connection_flush(c);
    srv_connection_drain(c);
  }
  internal_release(c);
}

static void start_reading(srv_connection_t *c) {
  if (c->reading || c->closing || c->draining) return;
  if (uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) == 0) c->reading = 1;
}

void srv_connection_start(srv_connection_t *c) { start_reading(c); }

/* ---- drain ---------------------------------------------------------------------------- */

static void on_shutdown(uv_shutdown_t *req, int status) {
  srv_connection_t *c = req->data;
  free(req);
  srv_connection_close(c, "drained");
  internal_release(c);
}

static void maybe_finish_drain(srv_connection_t *c) {
  /* Work that holds the connection will still answer: wait for it. */
  if (!c->draining || c->shutdown_sent || c->closing || c->holds > 0) return;
  c->shutdown_sent = 1; /* no more writes; uv_shutdown flushes what is queued */
  uv_shutdown_t *req = malloc(sizeof *req);
  if (req) {
    req->data = c;
    internal_hold(c);
    if (uv_shutdown(req, (uv_stream_t *)&c->tcp, on_shutdown) == 0) return;
    internal_release(c);
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

/* ---- setup ----------------------------------------------------------------------------- */

void srv_connection_init(srv_connection_t *c, uv_loop_t *loop, uint64_t id, const srv_config_t *config,
                         srv_counters_t *counters, const srv_connection_callbacks_t *callbacks) {
  memset(c, 0, sizeof *c);
  uv_tcp_init(loop, &c->tcp);
  c->tcp.data = c;
  c->id = id;
  c->config = config;
  c->counters = counters;
  c->callbacks = callbacks;
  c->last_activity_ms = uv_now(loop);
  snprintf(c->peer, sizeof c->peer, "?");
  anim_frame_reader_init(&c->reader, config->max_frame_bytes);
}

int srv_connection_accept(srv_connection_t *c, uv_stream_t *listener) {
  int rc = uv_accept(listener, (uv_stream_t *)&c->tcp);
  if (rc < 0) return rc;
  uv_tcp_nodelay(&c->tcp, 1);
  struct sockaddr_storage addr;
  int addrlen = sizeof addr;
  if (uv_tcp_getpeername(&c->tcp, (struct sockaddr *)&addr, &addrlen) == 0) {
    char ip[48] = "?";
    int port = 0;
    srv_address_name(&addr, ip, sizeof ip, &port);
    snprintf(c->peer, sizeof c->peer, "%s:%d", ip, port);
  }
  return 0;
}
