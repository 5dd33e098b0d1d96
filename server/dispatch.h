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
 * Searches that arrive in one read are answered as one batch: prepared on
 * the loop as they are decoded, then searched and encoded together into one
 * buffer at the read's end, on the thread pool (a lane, lane.h: one pool
 * thread at a time, so the loop keeps the other core for reading, decoding
 * and writing) when there are enough of them to pay for the hand-off and
 * the lane is not already full, else on the loop. The answers of that read and of the reads
 * after it on the same connection wait behind the batch, so a connection's
 * answers keep the order of its requests (as before, requests sent to the
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
#include "lane.h"
#include "metrics.h"
#include "request.h"
#include "service.h"
#include "stream.h"

typedef struct parked parked_t;
typedef struct batch_search batch_search_t;
typedef struct search_set search_set_t;

typedef struct srv_dispatch {
  uv_loop_t *loop;
  srv_service_env_t env;
  srv_counters_t *counters;
  srv_metrics_t *metrics;
  parked_t *parked_head, *parked_tail; /* requests waiting for the tick's end */
  srv_lane_t lane;                     /* read batches searched on the pool, one at a time */
  int lane_ok;                         /* else every batch is searched on the loop */
  search_set_t *search_sets[8];        /* kept for the next read batches (dispatch.c) */
  int nsearch_sets;
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
  /* Searches of one read run together (dispatch.c, read batches): the one
   * being filled during the read, those waiting for their answers in
   * order (head first), one kept for reuse. */
  struct read_batch *batch, *batch_head, *batch_tail, *batch_spare;
  int batch_searches; /* searches waiting in them */
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
