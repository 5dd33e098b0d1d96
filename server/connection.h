/*
 * connection.h: one client connection: reads frames, decodes and dispatches
 * requests, writes responses with accounting of queued bytes.
 *
 * Memory per connection is bounded: the frame reader keeps at most one
 * partial frame (<= max_frame_bytes); queued output above the soft limit
 * pauses reading (the client must read its answers before sending more), and
 * above the hard limit closes the connection. A framing error (oversize
 * length, bad varint) is answered with an error and closes only this
 * connection; a frame that is not a valid Request is answered with an error
 * and the connection carries on (the stream is still in sync).
 *
 * Created by srv_connection_accept, torn down through uv_close and freed in
 * its close callback, once no thread-pool job refers to it.
 */
#ifndef SRV_CONNECTION_H
#define SRV_CONNECTION_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>
#include "frame.h"
#include "stream.h"

struct srv_server;

typedef struct srv_connection {
  uv_tcp_t tcp;
  struct srv_server *server;
  uint64_t id;
  char peer[64];
  anim_frame_reader_t reader;
  size_t queued_bytes;  /* queued or written to libuv, not yet on the wire */
  struct write_batch *batch; /* answers waiting for the end of the current read */
  int batching;         /* inside on_read: answers join the batch */
  uint32_t in_flight;   /* requests on the thread pool */
  int reading;          /* uv_read_start is active */
  int paused;           /* reading stopped by output backpressure */
  int draining;         /* shutting down: answer in-flight work, then close */
  int shutdown_sent;    /* uv_shutdown called: output is final */
  int closing;          /* uv_close called */
  int closed;           /* close callback ran */
  srv_streams_t streams; /* pose subscriptions */
  int authenticated;    /* a hello carried the auth token (or the server has none) */
  int admin;            /* may load, reload and unload */
  uint64_t last_activity_ms; /* loop time of the last read (idle timeout) */
  struct srv_connection *prev, *next;
} srv_connection_t;

/* Accepts a pending connection on listener. 0 or a negative libuv/ANIM code. */
int srv_connection_accept(struct srv_server *server, uv_stream_t *listener);

/* Stops reading, lets in-flight requests answer and output flush, then closes. */
void srv_connection_drain(srv_connection_t *connection);

/* Closes now; queued output is dropped. The connection's characters are destroyed. */
void srv_connection_close(srv_connection_t *connection, const char *reason);

/* Queues framed bytes for the client (a malloc'd buffer; ownership taken),
 * with the output limits applied. */
void srv_connection_write(srv_connection_t *connection, uint8_t *buffer, size_t len);

/* A job that counted itself in in_flight is done (frees a closed connection). */
void srv_connection_job_done(srv_connection_t *connection);

/* Runs a request parked by srv_crowd_defer (or drops it if the connection closed). */
void srv_connection_resume(srv_connection_t *connection, void *request);

#endif
