/*
 * read_batch.h: the searches a connection pipelined in one read, answered
 * together.
 *
 * Why: a client that pipelines searches sends many in one read; each
 * searched, encoded and written on its own costs the loop a clock read, an
 * output buffer and a write each, and keeps the other core idle. Here the
 * searches of one read are gathered into a batch (prepared on the loop as
 * they are decoded, or taken undecoded: their frames copied, decoded where
 * the batch runs), then searched and encoded together into one buffer at
 * the read's end, on the thread pool (a lane, lane.h: one pool thread at a
 * time, so the loop keeps the other core for reading, decoding and
 * writing) when there are enough of them to pay for the hand-off and the
 * lane is not already full, else on the loop.
 *
 * Order: the other answers of that read, and of the reads after it on the
 * same connection, queue behind the batch (srv_read_queue_add_answer), so
 * a connection's answers keep the order of its requests.
 *
 * How it meets its caller: two objects. srv_read_batches_t, one per
 * server, owns the lane and the search sets kept for reuse (a set holds a
 * batch's requests, responses and frames: 70 KB and more). srv_read_queue_t,
 * one per connection, holds that connection's batches: the one being
 * filled during the read, those waiting for their answers (oldest first),
 * one kept for reuse. A batch holds its connection (srv_connection_hold)
 * until its answers are handed over; its searches reach the caller once
 * each, on the loop, through answered_cb (count them, let go of what the
 * caller counted in flight), before the answers are written.
 *
 * What it does not: decide whether a request may join (authentication,
 * in-flight limits: the dispatcher's), answer requests other than search,
 * or cancel (a batch pushed runs, even at shutdown).
 *
 * Threads: everything here is called on the loop thread; a batch runs on a
 * pool thread or the loop's.
 */
#ifndef SRV_READ_BATCH_H
#define SRV_READ_BATCH_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>
#include "buffer.h"
#include "codec.h"
#include "connection.h"
#include "counters.h"
#include "lane.h"
#include "registry.h"
#include "request.h"
#include "service.h"

typedef struct srv_search_set srv_search_set_t;
typedef struct srv_read_batch srv_read_batch_t;
typedef struct srv_read_queue srv_read_queue_t;

/* A search of a batch is answered (loop thread): its answer is in the
 * batch's buffer, not yet written. now_ns: one clock read for the batch. */
typedef void (*srv_read_answered_cb)(srv_read_queue_t *queue, const srv_request_t *request,
                                     const srv_response_t *response, uint64_t now_ns);

#define SRV_READ_SETS_KEPT 8

typedef struct srv_read_batches {
  srv_lane_t lane;             /* batches searched on the pool, one at a time */
  int lane_ok;                 /* else no frame joins a batch undecoded, and every batch runs on the loop */
  srv_search_set_t *sets[SRV_READ_SETS_KEPT]; /* kept for the next batches, shared by every connection */
  int nsets;
  srv_counters_t *counters;    /* read_batch_*, read_batches_* */
  srv_registry_t *registry;    /* the databases undecoded searches name */
  srv_encoder_spares_t *spares; /* the encoders' kept scratch (codec.h), the caller's */
  srv_read_answered_cb answered_cb;
} srv_read_batches_t;

struct srv_read_queue {
  srv_read_batches_t *batches;
  srv_connection_t *connection;
  srv_read_batch_t *filling;          /* this read's, until its end */
  srv_read_batch_t *head, *tail;      /* waiting for their answers, in order */
  srv_read_batch_t *spare;            /* kept for the next read */
  int searches;                       /* searches waiting in them */
};

/* The server's batches on loop; answered_cb as above. 0 always: without a
 * lane (it could not start) every batch runs on the loop. */
int srv_read_batches_init(srv_read_batches_t *batches, uv_loop_t *loop, srv_counters_t *counters,
                          srv_registry_t *registry, srv_encoder_spares_t *spares, srv_read_answered_cb answered_cb);
/* Frees the kept sets and closes the lane, once no queue holds a batch (run
 * the loop once more for the lane's close callback). */
void srv_read_batches_close(srv_read_batches_t *batches);

/* A connection's queue, empty. */
void srv_read_queue_init(srv_read_queue_t *queue, srv_read_batches_t *batches, srv_connection_t *connection);
/* What the queue keeps beyond its batches, once its connection is freed
 * (a batch holds the connection: none is left then). */
void srv_read_queue_release(srv_read_queue_t *queue);

/* Whether the connection has a batch filling or waiting: an answer given
 * during a read then goes through srv_read_queue_add_answer. */
static inline int srv_read_queue_pending(const srv_read_queue_t *queue) {
  return queue->filling || queue->head;
}

/* An encoded answer of this read (the queue takes the buffer over) waits
 * behind the batches before it. 0, or an error (the caller writes it). */
int srv_read_queue_add_answer(srv_read_queue_t *queue, const srv_service_ctx_t *ctx, srv_buffer_t *encoded);

/* A prepared search (request and response) joins this read's batch, taken
 * over (a shallow copy: the caller forgets both). ctx: the connection's,
 * for its search. 0, or an error when it must be answered on its own. */
int srv_read_queue_add_search(srv_read_queue_t *queue, const srv_service_ctx_t *ctx, srv_request_t *request,
                              srv_response_t *response);

/* The database a search's undecoded frame names, retained, when the frame
 * may join a batch undecoded: a search (by its peek) of a loaded database
 * that passes its check and is small enough that every search method is
 * light, the frame small enough to copy. NULL: the ordinary way. */
srv_db_entry_t *srv_read_queue_frame_database(srv_read_queue_t *queue, const uint8_t *frame, size_t len);

/* The undecoded frame of such a search joins this read's batch: the frame
 * copied, entry (the caller's reference) taken over, decoded under limits
 * where the batch runs. 0, or an error when it must take the ordinary way
 * (the caller keeps entry). */
int srv_read_queue_add_frame(srv_read_queue_t *queue, const srv_service_ctx_t *ctx, const uint8_t *frame, size_t len,
                             srv_db_entry_t *entry, const srv_codec_limits_t *limits, uint64_t received_ns);

/* The read ended: the batch being filled runs (in the lane when it has
 * enough searches), and waits behind the earlier ones. */
void srv_read_queue_end(srv_read_queue_t *queue);

#endif
