/* read_batch.c: the searches of one read, answered together (see read_batch.h). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "log.h"
#include "read_batch.h"
#include "scheduler.h"
#include "search/search.h"

/* Batches waiting in the lane, server-wide; past this the loop searches
 * the oldest itself (lane.h), so both cores search when the lane's thread
 * cannot keep up or has no core. */
#ifndef BATCH_LANE_QUEUED
#define BATCH_LANE_QUEUED 32
#endif

static void batch_close(srv_read_queue_t *q);

/* Searches per batch; a read with more fills several. */
#define BATCH_SEARCHES 16
/* Answers per batch, searches and others in request order. */
#define BATCH_ANSWERS 64
/* Fewer searches than this are searched on the loop while the lane is
 * idle: waking its pool thread (a lock, a wake-up, an eventfd write back)
 * costs about as much as a few searches. While the lane runs, a batch joins
 * it for the cost of an append. */
#ifndef BATCH_LANE_MIN
#define BATCH_LANE_MIN 4
#endif
typedef struct batch_search {
  srv_request_t request;
  srv_response_t response;
  /* A search still undecoded (frame_len > 0): its frame in the batch's
   * frames and the database its peek found, retained on the loop; the
   * batch decodes it where it runs (batch_decode). */
  size_t frame_at, frame_len;
  srv_db_entry_t *entry;
  uint64_t received_ns;
  /* Lent to the response (request.h): a search's results and hits, up to
   * k of about a hundred, without malloc. */
  max_align_t response_memory[1024 / sizeof(max_align_t)];
} batch_search_t;

static void slot_lend_memory(batch_search_t *slot) {
  slot->response.lent = (unsigned char *)slot->response_memory;
  slot->response.lent_size = sizeof slot->response_memory;
  slot->response.lent_used = 0;
}

/* A batch's searches: their requests and responses, the frames of those
 * still undecoded and the memory they decode into. Used by one thread at a
 * time (the loop filling it, the thread running the batch, the loop
 * releasing its requests). */
struct srv_search_set {
  batch_search_t slots[BATCH_SEARCHES];
  uint8_t *frames;
  size_t frames_len, frames_cap;
  srv_decode_arena_t *arena;
  /* The last batch's answers buffer, kept (a reference) for the next batch
   * to write into once its socket has let go of it: a batch's answers are
   * encoded on the lane's thread and freed on the loop's, and allocating
   * one per batch cost two allocations and a free across threads. */
  srv_buffer_t *out;
};

struct srv_read_batch {
  srv_lane_item_t item; /* first: the lane's callbacks find the batch from it */
  srv_read_queue_t *queue;
  srv_service_ctx_t ctx;
  srv_read_batch_t *next;
  int nanswers, nsearches;
  int done, failed;
  srv_buffer_t *out; /* every answer, in order, once done */
  /* Each answer: an encoded buffer, or (encoded NULL) the next search. */
  srv_buffer_t *answers[BATCH_ANSWERS];
  srv_search_set_t *set;    /* its searches, from the first search on */
  srv_codec_limits_t limits; /* what its undecoded searches decode under */
};

/* Search sets (70 KB and more each: a response is kilobytes) are shared by
 * every connection: taken by a batch at its first search, kept for the
 * next up to this many, so a connection that no longer pipelines searches
 * holds none (SRV_READ_SETS_KEPT). */
/* Searches of one connection waiting in batches; past this they are
 * answered on the loop at once (their answers still wait in order): a
 * connection's batches hold at most this many requests and responses. */
#define BATCH_SEARCHES_PENDING (2 * BATCH_SEARCHES)

/* A kept answers buffer larger than this is let go (8 sets keep at most 512 KiB). */
#define BATCH_OUT_KEPT_BYTES ((size_t)64 * 1024)

static void search_set_free(srv_search_set_t *set) {
  if (!set) return;
  srv_buffer_release(set->out);
  free(set->frames);
  srv_decode_arena_free(set->arena);
  free(set);
}

static srv_search_set_t *search_set_take(srv_read_batches_t *bs) {
  srv_search_set_t *set;
  if (bs->nsets > 0) set = bs->sets[--bs->nsets];
  else if ((set = malloc(sizeof *set))) set->frames = NULL, set->frames_cap = 0, set->arena = NULL, set->out = NULL;
  if (set) set->frames_len = 0;
  return set;
}

static void search_set_give_back(srv_read_batches_t *bs, srv_search_set_t *set) {
  if (set && bs->nsets < SRV_READ_SETS_KEPT) bs->sets[bs->nsets++] = set;
  else search_set_free(set);
}

/* The set's kept answers buffer, emptied, when nothing else holds it (it
 * was written and the write has ended), else NULL. Loop thread: references
 * are counted there. */
static srv_buffer_t *search_set_take_out(srv_search_set_t *set) {
  srv_buffer_t *out = set->out;
  set->out = NULL;
  if (out && out->refs == 1) {
    out->len = 0;
    return out;
  }
  srv_buffer_release(out);
  return NULL;
}

/* The batch of this read, made (or taken from the spare) when missing. */
static srv_read_batch_t *batch_current(srv_read_queue_t *q, const srv_service_ctx_t *ctx) {
  if (q->filling) return q->filling;
  srv_read_batch_t *b = q->spare;
  q->spare = NULL;
  if (!b && !(b = malloc(sizeof *b))) return NULL;
  b->queue = q;
  b->ctx = *ctx;
  b->next = NULL;
  b->nanswers = b->nsearches = 0;
  b->done = b->failed = 0;
  b->out = NULL;
  b->set = NULL;
  q->filling = b;
  srv_connection_hold(q->connection); /* until its answers are handed over */
  return b;
}

int srv_read_queue_add_answer(srv_read_queue_t *q, const srv_service_ctx_t *ctx, srv_buffer_t *encoded) {
  if (q->filling && q->filling->nanswers == BATCH_ANSWERS) batch_close(q);
  srv_read_batch_t *b = batch_current(q, ctx);
  if (!b) return ANIM_ENOMEM;
  b->answers[b->nanswers++] = encoded;
  return 0;
}

/* The batch the next search of this read joins, with room for it (and
 * frame_len more bytes of frames), or NULL: an error when it must be
 * answered on its own. The caller fills the slot and counts it in. */
static srv_read_batch_t *batch_for_search(srv_read_queue_t *q, const srv_service_ctx_t *ctx, size_t frame_len,
                                          int *out_rc) {
  *out_rc = ANIM_ELIMIT;
  if (q->searches >= BATCH_SEARCHES_PENDING) return NULL;
  if (q->filling && (q->filling->nsearches == BATCH_SEARCHES || q->filling->nanswers == BATCH_ANSWERS))
    batch_close(q);
  *out_rc = ANIM_ENOMEM;
  srv_read_batch_t *b = batch_current(q, ctx);
  if (!b) return NULL;
  if (!b->set) {
    if (!(b->set = search_set_take(q->batches))) return NULL;
    if (!b->out) b->out = search_set_take_out(b->set);
  }
  srv_search_set_t *set = b->set;
  if (set->frames_len + frame_len > set->frames_cap) {
    size_t cap = set->frames_cap ? 2 * set->frames_cap : 4096;
    while (cap < set->frames_len + frame_len) cap *= 2;
    uint8_t *grown = realloc(set->frames, cap);
    if (!grown) return NULL;
    set->frames = grown, set->frames_cap = cap;
  }
  return b;
}

/* The slot just filled joins the batch. */
static void batch_count_search(srv_read_queue_t *q, srv_read_batch_t *b) {
  b->answers[b->nanswers++] = NULL;
  b->nsearches++;
  q->searches++;
}

int srv_read_queue_add_search(srv_read_queue_t *q, const srv_service_ctx_t *ctx, srv_request_t *request,
                              srv_response_t *response) {
  int rc;
  srv_read_batch_t *b = batch_for_search(q, ctx, 0, &rc);
  if (!b) return rc;
  /* Only what a search uses: the unions hold kilobytes a search never touches. */
  batch_search_t *slot = &b->set->slots[b->nsearches];
  srv_request_t *r = &slot->request;
  srv_response_t *o = &slot->response;
  memcpy(r, request, offsetof(srv_request_t, body) + sizeof request->body.search);
  memcpy(&r->decoded, &request->decoded, sizeof *r - offsetof(srv_request_t, decoded));
  memcpy(o, response, offsetof(srv_response_t, message));
  o->message[0] = '\0';
  memcpy(&o->entry, &response->entry,
         offsetof(srv_response_t, body) + sizeof response->body.search - offsetof(srv_response_t, entry));
  slot_lend_memory(slot);
  slot->frame_len = 0;
  batch_count_search(q, b);
  return 0;
}

int srv_read_queue_add_frame(srv_read_queue_t *q, const srv_service_ctx_t *ctx, const uint8_t *frame, size_t len,
                             srv_db_entry_t *entry, const srv_codec_limits_t *limits, uint64_t received_ns) {
  int rc;
  srv_read_batch_t *b = batch_for_search(q, ctx, len, &rc);
  if (!b) return rc;
  srv_search_set_t *set = b->set;
  if (!set->arena) set->arena = srv_decode_arena_new(); /* NULL: its searches decode with malloc */
  batch_search_t *slot = &set->slots[b->nsearches];
  memcpy(set->frames + set->frames_len, frame, len);
  slot->frame_at = set->frames_len;
  slot->frame_len = len;
  slot->entry = entry;
  slot->received_ns = received_ns;
  set->frames_len += len;
  b->limits = *limits;
  batch_count_search(q, b);
  q->batches->counters->read_batch_decoded++;
  return 0;
}

/* Decodes an undecoded search of the batch and prepares its response as
 * the search service's prepare step would (its database is the one its
 * peek found); a frame the decoder refuses gets its error as the ordinary
 * way answers it. Any thread: nothing here takes or drops a reference. */
static void batch_decode(srv_read_batch_t *b, batch_search_t *slot) {
  char err[SRV_ERROR_MESSAGE_MAX];
  srv_request_t *request = &slot->request;
  const srv_search_set_t *set = b->set;
  int rc = srv_codec_decode_request_in(set->frames + slot->frame_at, slot->frame_len, &b->limits, set->arena, request,
                                       err, sizeof err);
  request->received_ns = slot->received_ns;
  if (rc == 0 && (request->type != SRV_REQ_SEARCH || strcmp(request->database, slot->entry->db.name) != 0))
    rc = ANIM_EINTERNAL, snprintf(err, sizeof err, "a search's peek and its decode disagree");
  srv_response_init(&slot->response, request->id, rc ? SRV_REQ_COUNT : SRV_REQ_SEARCH);
  slot_lend_memory(slot);
  slot->response.entry = slot->entry; /* released with the response, on the loop */
  slot->entry = NULL;
  slot->frame_len = 0;
  if (rc) srv_response_fail(&slot->response, rc, "%s", err);
}

/* Searches and encodes every answer of the batch into one buffer (any
 * thread: the searches read only their databases, held by reference). */
static void batch_run(srv_lane_item_t *item) {
  srv_read_batch_t *b = (srv_read_batch_t *)item;
  const srv_service_t *service = srv_service_for(SRV_REQ_SEARCH);
  for (int i = 0; i < b->nsearches; i++) {
    batch_search_t *slot = &b->set->slots[i];
    if (slot->frame_len) batch_decode(b, slot);
    if (!slot->response.error) srv_service_run_step(service->handle, &b->ctx, &slot->request, &slot->response);
  }
  for (int i = 0, next = 0; i < b->nanswers && !b->failed; i++) {
    srv_buffer_t *a = b->answers[i];
    if (!a) {
      srv_response_t *response = &b->set->slots[next++].response;
      b->failed = srv_codec_append_response_in(response, b->queue->batches->spares, &b->out) != 0;
    } else {
      size_t at = b->out ? b->out->len : 0;
      b->failed = srv_buffer_reserve(&b->out, at + a->len) != 0;
      if (!b->failed) memcpy(b->out->data + at, a->data, a->len), b->out->len = at + a->len;
    }
  }
}

/* Hands over the answers of the batches at the head that are done, in order. */
static void batch_flush_ready(srv_read_queue_t *q) {
  while (q->head && q->head->done) {
    srv_read_batch_t *b = q->head;
    q->head = b->next;
    if (!q->head) q->tail = NULL;
    if (b->failed) {
      srv_buffer_release(b->out);
      srv_connection_close(q->connection, "out of memory encoding a response");
    } else if (b->nsearches > 0) {
      srv_connection_write(q->connection, b->out); /* the answers were copied in */
    } else {
      srv_buffer_release(b->out); /* taken for a search that could not join */
      for (int i = 0; i < b->nanswers; i++) srv_connection_write(q->connection, b->answers[i]), b->answers[i] = NULL;
    }
    for (int i = 0; i < b->nanswers; i++) srv_buffer_release(b->answers[i]);
    if (!q->spare) q->spare = b;
    else free(b);
  }
}

/* The batch's searches are answered (loop thread): the caller counts them,
 * they let go of their requests, and what is ready is handed over. */
static void batch_done(srv_lane_item_t *item) {
  srv_read_batch_t *b = (srv_read_batch_t *)item;
  srv_read_queue_t *q = b->queue;
  srv_connection_t *connection = q->connection;
  uint64_t now = srv_scheduler_now_ns();
  for (int i = 0; i < b->nsearches; i++) {
    batch_search_t *slot = &b->set->slots[i];
    srv_response_t *r = &slot->response;
    if (r->type == SRV_REQ_COUNT) /* a frame decoded in the batch that did not decode */
      srv_log(SRV_LOG_DEBUG, "connection %llu: bad request: %s", (unsigned long long)connection->id, r->message);
    q->batches->answered_cb(q, &slot->request, r, now);
    srv_response_release(r);
    srv_request_release(&slot->request);
  }
  q->searches -= b->nsearches;
  if (b->out && !b->failed && b->out->cap <= BATCH_OUT_KEPT_BYTES) b->set->out = srv_buffer_retain(b->out);
  search_set_give_back(q->batches, b->set);
  b->set = NULL;
  b->done = 1;
  batch_flush_ready(q);
  srv_connection_release(connection); /* last: it may free the queue's owner */
}

/* Whether a closing batch goes to the lane (see BATCH_LANE_MIN). */
static int batch_to_lane(srv_read_batches_t *bs, const srv_read_batch_t *b) {
  if (!bs->lane_ok || b->nsearches == 0) return 0;
  return b->nsearches >= BATCH_LANE_MIN || srv_lane_pending(&bs->lane) > 0;
}

/* The batch being filled is complete: its searches run (in the lane when
 * there are enough of them), and it waits behind the earlier ones. */
static void batch_close(srv_read_queue_t *q) {
  srv_read_batch_t *b = q->filling;
  if (!b) return;
  q->filling = NULL;
  if (q->tail) q->tail->next = b;
  else q->head = b;
  q->tail = b;
  b->item.run = batch_run;
  b->item.done = batch_done;
  srv_read_batches_t *bs = q->batches;
  bs->counters->read_batch_searches += (uint64_t)b->nsearches;
  if (batch_to_lane(bs, b) && srv_lane_push(&bs->lane, &b->item) == 0) {
    bs->counters->read_batches_lane++;
    return;
  }
  if (b->nsearches > 0) bs->counters->read_batches_loop++, batch_run(&b->item);
  batch_done(&b->item);
}

void srv_read_queue_end(srv_read_queue_t *q) { batch_close(q); }

/* Frames over this many bytes are decoded on the loop: a batch holds at
 * most BATCH_SEARCHES of them (a search by feature vector is a few hundred
 * bytes). */
#define BATCH_FRAME_MAX 4096

/* A search the ordinary way would send to the pool on its own may not run
 * in a batch, which the loop may take over: hence light databases only. */
srv_db_entry_t *srv_read_queue_frame_database(srv_read_queue_t *q, const uint8_t *frame, size_t len) {
  srv_read_batches_t *bs = q->batches;
  const uint8_t *name;
  size_t name_len;
  char text[ANIM_NAME_MAX], why[SRV_ERROR_MESSAGE_MAX];
  if (!bs->lane_ok || len > BATCH_FRAME_MAX || !srv_codec_peek_search(frame, len, &name, &name_len) || name_len == 0 ||
      name_len >= sizeof text || memchr(name, '\0', name_len))
    return NULL;
  memcpy(text, name, name_len);
  text[name_len] = '\0';
  srv_db_entry_t *entry = srv_registry_acquire(bs->registry, text);
  if (entry && entry->db.nframes <= SRV_SEARCH_LIGHT_ROWS && anim_database_check(&entry->db, why, sizeof why) == 0)
    return entry;
  srv_db_entry_release(entry);
  return NULL;
}

/* ---- the objects ------------------------------------------------------------------------ */

int srv_read_batches_init(srv_read_batches_t *bs, uv_loop_t *loop, srv_counters_t *counters, srv_registry_t *registry,
                          srv_encoder_spares_t *spares, srv_read_answered_cb answered_cb) {
  memset(bs, 0, sizeof *bs);
  bs->counters = counters;
  bs->registry = registry;
  bs->spares = spares;
  bs->answered_cb = answered_cb;
  srv_lane_options_t lane = {.workers = 1, .loop_helps = 1, .max_queued = BATCH_LANE_QUEUED};
  bs->lane_ok = srv_lane_init(&bs->lane, loop, &lane) == 0;
  return 0;
}

void srv_read_batches_close(srv_read_batches_t *bs) {
  while (bs->nsets > 0) search_set_free(bs->sets[--bs->nsets]);
  if (bs->lane_ok) srv_lane_close(&bs->lane);
  bs->lane_ok = 0;
}

void srv_read_queue_init(srv_read_queue_t *q, srv_read_batches_t *bs, srv_connection_t *connection) {
  memset(q, 0, sizeof *q);
  q->batches = bs;
  q->connection = connection;
}

void srv_read_queue_release(srv_read_queue_t *q) {
  free(q->spare); /* the others hold the connection: none is left once it is freed */
  q->spare = NULL;
}
