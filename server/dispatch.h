/*
 * dispatch.h: a request's life from its frame to its answer.
 *
 * For each frame a connection reads: decode it (codec.h); before a hello
 * that carries the auth token nothing else is served, and administrative
 * requests need the admin token; run the service's steps (service.h):
 * prepare on the loop, handle on the loop or, when the service says the
 * work is long, on the libuv thread pool (the job holds the connection),
 * finish on the loop; a request that reads or changes characters while a
 * tick is in flight is parked and run when the crowd's tick ends (and such
 * a request's finish step after the pool likewise); then
 * encode the answer (on the pool when no finish step follows) and hand it
 * to the connection. Counting (requests, errors, latency) happens here, once
 * per answer. A service that asks for a shutdown (SRV_AFTER_SHUTDOWN) gets
 * its answer out first; the dispatcher then calls its on_shutdown.
 *
 * Searches that arrive in one read are answered as one batch (read_batch.h):
 * the dispatcher decides which may join (authenticated, under the
 * connection's in-flight limit, not sent to the pool on their own) and
 * counts them as they are answered; the answers of that read and of the
 * reads after it on the same connection wait behind the batch, so a
 * connection's answers keep the order of its requests (requests sent to the
 * pool on their own, and parked ones, may be answered after later ones).
 *
 * A session is what the dispatcher keeps per connection: the connection
 * itself, its authentication, its requests in flight, its subscriber.
 */
#ifndef SRV_DISPATCH_H
#define SRV_DISPATCH_H

#include <stdint.h>
#include <uv.h>
#include "connection.h"
#include "metrics.h"
#include "read_batch.h"
#include "request.h"
#include "service.h"
#include "stream.h"

typedef struct parked parked_t;

typedef struct srv_dispatch {
  uv_loop_t *loop;
  srv_service_env_t env;
  srv_counters_t *counters;
  srv_metrics_t *metrics;
  parked_t *parked_head, *parked_tail; /* requests waiting for the tick's end */
  srv_read_batches_t reads;            /* pipelined searches' batches, server-wide (read_batch.h) */
  srv_buffer_pool_t answers;           /* small answers' buffers, encoded and released on the loop (buffer.h) */
  srv_encoder_spares_t spares;         /* encoders' scratch kept for the next answers, any thread (codec.h) */
  void (*on_shutdown)(void *data);     /* a shutdown request was answered */
  void *data;
} srv_dispatch_t;

typedef struct srv_session {
  srv_connection_t connection; /* first: the connection callbacks find the session from it */
  srv_dispatch_t *dispatch;
  srv_subscriber_t subscriber;
  int authenticated;           /* a hello carried the auth token (or the server has none) */
  int admin;                   /* may run administrative requests */
  uint32_t in_flight;          /* requests on the pool or parked */
  struct srv_decode_arena *arena; /* its requests' decode memory (codec.h); made at the first */
  /* Answers given while one read is handled are timed together at its end
   * (one clock read per read): their request types, in order. */
  int in_read;
  int nread_answers;
  uint8_t read_answers[64];
  srv_read_queue_t reads; /* searches of one read run together (read_batch.h) */
  struct srv_session *prev, *next;
} srv_session_t;

void srv_dispatch_init(srv_dispatch_t *dispatch, uv_loop_t *loop, const srv_service_env_t *env,
                       srv_counters_t *counters, srv_metrics_t *metrics, void (*on_shutdown)(void *data), void *data);

/* Frees what the dispatcher keeps for reuse and closes its lane, once no
 * connection is left (run the loop once more for the lane's close callback). */
void srv_dispatch_close(srv_dispatch_t *dispatch);

/* A session on an initialized connection: authenticated when the server
 * has no auth token, then everything is allowed. */
void srv_session_init(srv_session_t *session, srv_dispatch_t *dispatch);
/* What the session holds beyond its connection, once the connection is freed. */
void srv_session_release(srv_session_t *session);

/* A frame the session's connection read: decode, check, run, answer.
 * Returns non-zero when the connection stops reading this buffer. */
int srv_dispatch_frame(srv_session_t *session, const uint8_t *frame, size_t len);
/* The session's connection finished handling one read (before its answers
 * are written): the latencies of that read's answers are recorded. */
void srv_dispatch_read_end(srv_session_t *session);
/* The connection's bytes were not framed right: answers with id 0. */
void srv_dispatch_bad_frame(srv_session_t *session, int code);
/* An error about the connection itself (id 0): limits at accept, shutdown. */
void srv_dispatch_refuse(srv_session_t *session, int code, const char *message);

/* The crowd's tick ended: parked requests run, in arrival order. */
void srv_dispatch_resume(srv_dispatch_t *dispatch);

#endif
