/*
 * connection.h: one client connection's bytes: reading, framing, writing
 * with accounting, backpressure and draining. It knows nothing of requests:
 * each complete frame goes to the owner's on_frame callback, and the owner
 * hands back encoded buffers to write.
 *
 * Memory is bounded per connection: the frame reader keeps at most one
 * partial frame (<= max_frame_bytes). Output is what libuv has queued plus
 * what the owner has waiting to send (srv_connection_set_held: stream
 * frames held back by backpressure); above the output soft limit reading
 * pauses (the client must read its answers before sending more). Memory is
 * the queued output plus everything the owner holds for the connection
 * (waiting frames, reusable encode buffers); above the output hard limit the
 * connection is closed. Memory is summed for the whole server in
 * counters->output_bytes.
 *
 * Answers produced while one read is handled go out together in one
 * writev, as pipelining clients expect: straight to the socket when libuv
 * has nothing queued (uv_try_write; no write request, no completion turn),
 * the rest through uv_write. The owner's on_read_end runs after the read's
 * frames and before that write. A framing error
 * (oversize length, bad varint) is reported to the owner (on_bad_frame, to
 * answer it) and the connection drains.
 *
 * Lifetime: caller-allocated (embedded in the owner's session), set up by
 * srv_connection_init, accepted, started; torn down through uv_close. The
 * owner's on_free runs once the handle is closed and no hold is left (pool
 * jobs that point at the connection take a hold), and only then may the
 * memory go. Loop thread only.
 */
#ifndef SRV_CONNECTION_H
#define SRV_CONNECTION_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>
#include "buffer.h"
#include "config.h"
#include "counters.h"
#include "frame.h"

typedef struct srv_connection srv_connection_t;

typedef struct {
  /* A complete frame; return non-zero to stop handling this read (closed). */
  int (*on_frame)(srv_connection_t *c, const uint8_t *frame, size_t len);
  /* The stream was not framed right (ANIM_ETOOBIG, ANIM_EPROTO): answer before the drain. */
  void (*on_bad_frame)(srv_connection_t *c, int code);
  /* A write completed (room may have opened for held output). */
  void (*on_written)(srv_connection_t *c);
  /* The connection is closing: drop what the owner keeps for it. */
  void (*on_close)(srv_connection_t *c, const char *reason);
  /* Closed and no holds left: the memory may be freed. */
  void (*on_free)(srv_connection_t *c);
  /* The frames of one read are handled; their answers are written right
   * after (may be NULL). */
  void (*on_read_end)(srv_connection_t *c);
} srv_connection_callbacks_t;

struct write_batch;

struct srv_connection {
  uv_tcp_t tcp;
  const srv_connection_callbacks_t *callbacks;
  const srv_config_t *config; /* limits, read live (SIGHUP may change them) */
  srv_counters_t *counters;
  uint64_t id;
  char peer[64];
  anim_frame_reader_t reader;
  size_t queued_bytes;        /* handed to libuv, not yet on the wire */
  size_t pending_bytes;       /* the owner's frames waiting to be sent */
  size_t held_bytes;          /* everything the owner holds for this connection (>= pending) */
  struct write_batch *batch;  /* answers waiting for the end of the current read */
  struct write_batch *spare;  /* finished batches kept for the next writes */
  int nspare;
  uint32_t holds;             /* the owner's work that points here (pool jobs, parked requests) */
  uint32_t internal;          /* the connection's own: writes in flight, a read, the shutdown */
  int batching;               /* corked (inside a read, a delivery): writes join the batch */
  int reading, paused, draining, shutdown_sent, closing, closed;
  int over_hard_limit;        /* closed at the output hard limit (the owner's on_close sees it) */
  uint64_t last_activity_ms;  /* loop time of the last read (idle timeout) */
  /* CLOCK_MONOTONIC ns when the read being handled arrived: one clock read per read, not per frame */
  uint64_t read_ns;
};

/* Sets up c on loop (the handle is initialized: close it to tear down). */
void srv_connection_init(srv_connection_t *c, uv_loop_t *loop, uint64_t id, const srv_config_t *config,
                         srv_counters_t *counters, const srv_connection_callbacks_t *callbacks);
/* Accepts a pending connection from listener. 0 or a libuv code (then close c). */
int srv_connection_accept(srv_connection_t *c, uv_stream_t *listener);
/* Starts reading. */
void srv_connection_start(srv_connection_t *c);

/* Queues an encoded frame, taking the caller's reference to buffer. While a
 * read is handled it waits for the read's end; otherwise it goes out now.
 * The output limits apply (this may close the connection). */
void srv_connection_write(srv_connection_t *c, srv_buffer_t *buffer);
/* Hands the answers of the current read to libuv now. */
void srv_connection_flush(srv_connection_t *c);
/* Between cork and uncork (nested) writes wait and then go out in one
 * uv_write, as the answers to one read do. */
void srv_connection_cork(srv_connection_t *c);
void srv_connection_uncork(srv_connection_t *c);

/* What the owner holds for this connection (replaces the previous figures):
 * pending bytes waiting to be sent, and all its memory for it (>= pending).
 * Over the hard limit together with the queued output, the connection closes. */
void srv_connection_set_held(srv_connection_t *c, size_t pending, size_t memory);
/* Output: queued plus pending bytes (what the soft limits compare). */
size_t srv_connection_output(const srv_connection_t *c);
/* Bytes handed to libuv and not yet written. */
size_t srv_connection_queued(const srv_connection_t *c);
/* Memory: queued plus held bytes (what the hard limit compares). */
size_t srv_connection_memory(const srv_connection_t *c);

/* A hold keeps the memory alive past the close (a pool job that points here). */
void srv_connection_hold(srv_connection_t *c);
void srv_connection_release(srv_connection_t *c);

/* Stops reading, lets holds finish and output flush, then closes. */
void srv_connection_drain(srv_connection_t *c);
/* Closes now; queued output is dropped. */
void srv_connection_close(srv_connection_t *c, const char *reason);
/* Closes now because the output hard limit would be passed: counted in
 * counters->output_limit_closed, and c->over_hard_limit is set while the
 * owner's on_close runs (a subscriber so closed is a slow one). */
void srv_connection_close_over_limit(srv_connection_t *c, const char *reason);
/* 1 until a close starts. */
int srv_connection_open(const srv_connection_t *c);

#endif
