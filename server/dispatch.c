/* dispatch.c: authentication, the service steps, pool jobs and parked requests (see dispatch.h). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "codec.h"
#include "dispatch.h"
#include "log.h"
#include "registry.h"
#include "search/search.h"

/* A request sent to the thread pool; it holds the connection. */
typedef struct {
  uv_work_t work;
  srv_session_t *session;
  const srv_service_t *service;
  srv_service_ctx_t ctx;
  srv_request_t request;
  srv_response_t response;
  srv_buffer_t *encoded; /* encoded on the pool when no finish step follows */
} job_t;

/* A request waiting for the crowd's tick to end; it holds the connection.
 * With job set, a pool job whose finish step changes characters (the
 * request and response are the job's). */
struct parked {
  srv_session_t *session;
  srv_request_t request;
  job_t *job;
  struct parked *next;
};

/* Batches waiting in the lane, server-wide; past this the loop searches
 * the oldest itself (lane.h), so both cores search when the lane's thread
 * cannot keep up or has no core. */
#ifndef BATCH_LANE_QUEUED
#define BATCH_LANE_QUEUED 32
#endif

static void run(srv_session_t *s, srv_request_t *request);
static void batch_close(srv_session_t *s);
static void search_set_free(search_set_t *set);
static int park_job(job_t *job);

void srv_dispatch_init(srv_dispatch_t *d, uv_loop_t *loop, const srv_service_env_t *env, srv_counters_t *counters,
                       srv_metrics_t *metrics, void (*on_shutdown)(void *data), void *data) {
  memset(d, 0, sizeof *d);
  d->loop = loop;
  d->env = *env;
  d->counters = counters;
  d->metrics = metrics;
  d->on_shutdown = on_shutdown;
  d->data = data;
  srv_lane_options_t lane = {.workers = 1, .loop_helps = 1, .max_queued = BATCH_LANE_QUEUED};
  d->lane_ok = srv_lane_init(&d->lane, loop, &lane) == 0;
}

void srv_dispatch_close(srv_dispatch_t *d) {
  while (d->nsearch_sets > 0) search_set_free(d->search_sets[--d->nsearch_sets]);
  if (d->lane_ok) srv_lane_close(&d->lane);
  d->lane_ok = 0;
}

void srv_session_init(srv_session_t *s, srv_dispatch_t *d) {
  s->dispatch = d;
  /* Without an auth token every connection may do everything (loopback only, by protected mode). */
  s->authenticated = s->admin = d->env.config->auth_token[0] == '\0';
  srv_subscriber_init(&s->subscriber, d->env.streams, &s->connection, s->connection.id);
}

void srv_session_release(srv_session_t *s) {
  srv_decode_arena_free(s->arena);
  s->arena = NULL;
  free(s->batch_spare); /* the others hold the connection: none is left once it is freed */
  s->batch_spare = NULL;
}

static srv_service_ctx_t service_ctx(srv_session_t *s) {
  srv_service_ctx_t ctx = {&s->dispatch->env, s->connection.id, s->admin, &s->subscriber};
  return ctx;
}

/* ---- answering ------------------------------------------------------------------------ */

/* Counts an answer that is going out (loop thread). One given while its
 * own read is handled is timed at the read's end, with the read's others;
 * another at now, the clock read for the caller's answers (0: read here):
 * a batch's end times its searches with one read. */
static void count_at(srv_session_t *s, int type, int error, uint64_t received_ns, uint64_t now) {
  srv_dispatch_t *d = s->dispatch;
  if (error) {
    d->counters->errors++;
    srv_metrics_error(d->metrics, error);
  }
  if (s->in_read && received_ns && received_ns == s->connection.read_ns &&
      s->nread_answers < (int)sizeof s->read_answers) {
    s->read_answers[s->nread_answers++] = (uint8_t)(type < 0 || type > SRV_REQ_COUNT ? SRV_REQ_COUNT : type);
    return;
  }
  srv_metrics_request_at(d->metrics, type, received_ns, now ? now : srv_scheduler_now_ns());
}

static void count(srv_session_t *s, int type, int error, uint64_t received_ns) {
  count_at(s, type, error, received_ns, 0);
}

void srv_dispatch_read_end(srv_session_t *s) {
  batch_close(s); /* its answers are counted as they go (or at the pool's end) */
  if (s->nread_answers > 0) {
    uint64_t now = srv_scheduler_now_ns();
    for (int i = 0; i < s->nread_answers; i++)
      srv_metrics_request_at(s->dispatch->metrics, s->read_answers[i], s->connection.read_ns, now);
  }
  s->nread_answers = 0;
  s->in_read = 0;
}

/* A response for request id of type, empty: the header and the type's own
 * body zeroed, not the whole union (kilobytes, for the largest body). */
static void response_init(srv_response_t *r, uint64_t id, int type) {
  static const size_t body_bytes[SRV_REQ_COUNT] = {
#define SRV_BODY_BYTES(TYPE, name, Message) [SRV_REQ_##TYPE] = sizeof(srv_##name##_response_t),
      SRV_REQUEST_TYPES(SRV_BODY_BYTES)
#undef SRV_BODY_BYTES
  };
  memset(r, 0, offsetof(srv_response_t, message));
  r->message[0] = '\0';
  memset(&r->entry, 0, offsetof(srv_response_t, body) - offsetof(srv_response_t, entry));
  memset(&r->body, 0, type >= 0 && type < SRV_REQ_COUNT ? body_bytes[type] : sizeof r->body);
  r->id = id;
  r->type = (srv_request_type_t)type;
}

static int batch_add_answer(srv_session_t *s, srv_buffer_t *encoded);

/* Hands an encoded answer (or, when encoding failed, closes the connection).
 * During a read, while a batch of this connection is pending, it queues
 * behind the batch. */
static void write_answer(srv_session_t *s, srv_buffer_t *encoded) {
  if (encoded && s->in_read && (s->batch || s->batch_head) && batch_add_answer(s, encoded) == 0) return;
  if (encoded) srv_connection_write(&s->connection, encoded);
  else srv_connection_close(&s->connection, "out of memory encoding a response");
}

static void answer(srv_session_t *s, const srv_response_t *response, uint64_t received_ns) {
  srv_buffer_t *encoded = NULL;
  count(s, response->type, response->error, received_ns);
  srv_codec_encode_response(response, &encoded);
  write_answer(s, encoded);
}

static void answer_error(srv_session_t *s, uint64_t id, int type, int code, const char *message, uint64_t received_ns) {
  srv_response_t response;
  response_init(&response, id, type);
  srv_response_fail(&response, code, "%s", message);
  answer(s, &response, received_ns);
}

void srv_dispatch_refuse(srv_session_t *s, int code, const char *message) {
  answer_error(s, 0, SRV_REQ_COUNT, code, message, 0);
}

void srv_dispatch_bad_frame(srv_session_t *s, int code) {
  answer_error(s, 0, SRV_REQ_COUNT, code,
               code == ANIM_ETOOBIG ? "frame length over the server's max_frame_bytes" : "malformed frame length", 0);
}

/* Answers and releases a request whose steps are done (loop thread); a
 * shutdown it asked for starts once its answer is on its way. */
static void complete(srv_session_t *s, srv_request_t *request, srv_response_t *response) {
  answer(s, response, request->received_ns);
  unsigned after = response->after;
  srv_response_release(response);
  srv_request_release(request);
  if ((after & SRV_AFTER_SHUTDOWN) && s->dispatch->on_shutdown) {
    srv_connection_flush(&s->connection); /* the answer goes out before the drain shuts the stream */
    srv_log(SRV_LOG_INFO, "shutdown requested by connection %llu from %s", (unsigned long long)s->connection.id,
            s->connection.peer);
    s->dispatch->on_shutdown(s->dispatch->data);
  }
}

/* ---- the thread pool ------------------------------------------------------------------- */

static void job_run(uv_work_t *work) {
  job_t *job = work->data;
  srv_service_run_step(job->service->handle, &job->ctx, &job->request, &job->response);
  /* Encoding reads only the job's own data and read-only databases: do it
   * here too, unless a finish step on the loop may still change the answer. */
  if (!job->service->finish && srv_codec_encode_response(&job->response, &job->encoded) != 0) job->encoded = NULL;
}

/* The job's answer is out (or dropped): it lets go of its connection. */
static void job_end(job_t *job) {
  srv_session_t *s = job->session;
  free(job);
  s->in_flight--;
  srv_connection_release(&s->connection);
}

/* Runs the job's finish step and answers (loop thread, not during a tick
 * when the step changes characters). */
static void job_finish(job_t *job) {
  srv_service_run_step(job->service->finish, &job->ctx, &job->request, &job->response);
  complete(job->session, &job->request, &job->response);
  job_end(job);
}

static void job_done(uv_work_t *work, int status) {
  job_t *job = work->data;
  srv_session_t *s = job->session;
  if (status < 0) {
    srv_buffer_release(job->encoded);
    job->encoded = NULL;
    srv_response_fail(&job->response, ANIM_ESHUTDOWN, "%s: cancelled: the server is shutting down",
                      srv_request_name(job->request.type));
  }
  if (job->encoded) {
    count(s, job->response.type, job->response.error, job->request.received_ns);
    write_answer(s, job->encoded);
    srv_response_release(&job->response);
    srv_request_release(&job->request);
  } else if (status == 0 && job->service->finish) {
    /* A crowd request's finish step waits for the tick's end, as the request did. */
    if (!((job->service->flags & SRV_SERVICE_CROWD) && srv_crowd_ticking(s->dispatch->env.crowd) && park_job(job) == 0))
      job_finish(job);
    return;
  } else {
    complete(s, &job->request, &job->response);
  }
  job_end(job);
}

/* Queues the prepared request on the pool; the job takes both structs over. */
static int run_off_loop(srv_session_t *s, const srv_service_t *service, srv_request_t *request,
                        srv_response_t *response) {
  job_t *job = calloc(1, sizeof *job);
  if (!job) return ANIM_ENOMEM;
  job->work.data = job;
  job->session = s;
  job->service = service;
  job->ctx = service_ctx(s);
  job->request = *request;
  job->response = *response;
  if (uv_queue_work(s->dispatch->loop, &job->work, job_run, job_done) < 0) {
    free(job);
    return ANIM_EINTERNAL;
  }
  s->in_flight++;
  srv_connection_hold(&s->connection);
  return 0;
}

/* ---- parking: requests that wait for the tick's end ------------------------------------ */

static int park(srv_session_t *s, srv_request_t *request) {
  srv_dispatch_t *d = s->dispatch;
  parked_t *p = calloc(1, sizeof *p);
  if (!p) return ANIM_ENOMEM;
  p->session = s;
  p->request = *request;
  if (d->parked_tail) d->parked_tail->next = p;
  else d->parked_head = p;
  d->parked_tail = p;
  s->in_flight++;
  srv_connection_hold(&s->connection);
  return 0;
}

/* Parks a pool job before its finish step; it keeps its hold on the connection. */
static int park_job(job_t *job) {
  srv_dispatch_t *d = job->session->dispatch;
  parked_t *p = calloc(1, sizeof *p);
  if (!p) return ANIM_ENOMEM;
  p->session = job->session;
  p->job = job;
  if (d->parked_tail) d->parked_tail->next = p;
  else d->parked_head = p;
  d->parked_tail = p;
  return 0;
}

void srv_dispatch_resume(srv_dispatch_t *d) {
  /* Requests parked now (by a resumed one) wait for the next tick's end. */
  parked_t *p = d->parked_head;
  d->parked_head = d->parked_tail = NULL;
  while (p) {
    parked_t *next = p->next;
    srv_session_t *s = p->session;
    if (p->job) { /* a closed connection's characters would have no owner: answer without finishing */
      if (srv_connection_open(&s->connection)) job_finish(p->job);
      else srv_response_release(&p->job->response), srv_request_release(&p->job->request), job_end(p->job);
      free(p);
      p = next;
      continue;
    }
    s->in_flight--;
    if (srv_connection_open(&s->connection)) run(s, &p->request);
    else srv_request_release(&p->request);
    free(p);
    srv_connection_release(&s->connection);
    p = next;
  }
}

/* ---- read batches: the searches of one read, answered together ------------------------ */

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
struct batch_search {
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
};

static void slot_lend_memory(batch_search_t *slot) {
  slot->response.lent = (unsigned char *)slot->response_memory;
  slot->response.lent_size = sizeof slot->response_memory;
  slot->response.lent_used = 0;
}

/* A batch's searches: their requests and responses, the frames of those
 * still undecoded and the memory they decode into. Used by one thread at a
 * time (the loop filling it, the thread running the batch, the loop
 * releasing its requests). */
struct search_set {
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

typedef struct read_batch {
  srv_lane_item_t item; /* first: the lane's callbacks find the batch from it */
  srv_session_t *session;
  srv_service_ctx_t ctx;
  struct read_batch *next;
  int nanswers, nsearches;
  int done, failed;
  srv_buffer_t *out; /* every answer, in order, once done */
  /* Each answer: an encoded buffer, or (encoded NULL) the next search. */
  srv_buffer_t *answers[BATCH_ANSWERS];
  search_set_t *set;        /* its searches, from the first search on */
  srv_codec_limits_t limits; /* what its undecoded searches decode under */
} read_batch_t;

/* Search sets (70 KB and more each: a response is kilobytes) are shared by
 * every connection: taken by a batch at its first search, kept for the
 * next up to this many, so a connection that no longer pipelines searches
 * holds none. */
#define BATCH_SETS_KEPT 8
/* Searches of one connection waiting in batches; past this they are
 * answered on the loop at once (their answers still wait in order): a
 * connection's batches hold at most this many requests and responses. */
#define BATCH_SEARCHES_PENDING (2 * BATCH_SEARCHES)

/* A kept answers buffer larger than this is let go (8 sets keep at most 512 KiB). */
#define BATCH_OUT_KEPT_BYTES ((size_t)64 * 1024)

static void search_set_free(search_set_t *set) {
  if (!set) return;
  srv_buffer_release(set->out);
  free(set->frames);
  srv_decode_arena_free(set->arena);
  free(set);
}

static search_set_t *search_set_take(srv_dispatch_t *d) {
  search_set_t *set;
  if (d->nsearch_sets > 0) set = d->search_sets[--d->nsearch_sets];
  else if ((set = malloc(sizeof *set))) set->frames = NULL, set->frames_cap = 0, set->arena = NULL, set->out = NULL;
  if (set) set->frames_len = 0;
  return set;
}

static void search_set_give_back(srv_dispatch_t *d, search_set_t *set) {
  if (set && d->nsearch_sets < BATCH_SETS_KEPT) d->search_sets[d->nsearch_sets++] = set;
  else search_set_free(set);
}

/* The set's kept answers buffer, emptied, when nothing else holds it (it
 * was written and the write has ended), else NULL. Loop thread: references
 * are counted there. */
static srv_buffer_t *search_set_take_out(search_set_t *set) {
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
static read_batch_t *batch_current(srv_session_t *s) {
  if (s->batch) return s->batch;
  read_batch_t *b = s->batch_spare;
  s->batch_spare = NULL;
  if (!b && !(b = malloc(sizeof *b))) return NULL;
  b->session = s;
  b->ctx = service_ctx(s);
  b->next = NULL;
  b->nanswers = b->nsearches = 0;
  b->done = b->failed = 0;
  b->out = NULL;
  b->set = NULL;
  s->batch = b;
  srv_connection_hold(&s->connection); /* until its answers are handed over */
  return b;
}

static int batch_add_answer(srv_session_t *s, srv_buffer_t *encoded) {
  if (s->batch && s->batch->nanswers == BATCH_ANSWERS) batch_close(s);
  read_batch_t *b = batch_current(s);
  if (!b) return ANIM_ENOMEM;
  b->answers[b->nanswers++] = encoded;
  return 0;
}

/* The batch the next search of this read joins, with room for it (and
 * frame_len more bytes of frames), or NULL: an error when it must be
 * answered on its own. The caller fills the slot and counts it in. */
static read_batch_t *batch_for_search(srv_session_t *s, size_t frame_len, int *out_rc) {
  *out_rc = ANIM_ELIMIT;
  if (s->batch_searches >= BATCH_SEARCHES_PENDING) return NULL;
  if (s->batch && (s->batch->nsearches == BATCH_SEARCHES || s->batch->nanswers == BATCH_ANSWERS)) batch_close(s);
  *out_rc = ANIM_ENOMEM;
  read_batch_t *b = batch_current(s);
  if (!b) return NULL;
  if (!b->set) {
    if (!(b->set = search_set_take(s->dispatch))) return NULL;
    if (!b->out) b->out = search_set_take_out(b->set);
  }
  search_set_t *set = b->set;
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
static void batch_count_search(srv_session_t *s, read_batch_t *b) {
  b->answers[b->nanswers++] = NULL;
  b->nsearches++;
  s->in_flight++;
  s->batch_searches++;
}

/* Takes a prepared search over (request and response): 0, or an error when
 * it must be answered on its own. */
static int batch_add_search(srv_session_t *s, srv_request_t *request, srv_response_t *response) {
  int rc;
  read_batch_t *b = batch_for_search(s, 0, &rc);
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
  batch_count_search(s, b);
  return 0;
}

/* Takes an undecoded search over: its frame (copied) and its database
 * (the caller's reference). 0, or an error when it must take the
 * ordinary way. */
static int batch_add_frame(srv_session_t *s, const uint8_t *frame, size_t len, srv_db_entry_t *entry,
                           const srv_codec_limits_t *limits, uint64_t received_ns) {
  int rc;
  read_batch_t *b = batch_for_search(s, len, &rc);
  if (!b) return rc;
  search_set_t *set = b->set;
  if (!set->arena) set->arena = srv_decode_arena_new(); /* NULL: its searches decode with malloc */
  batch_search_t *slot = &set->slots[b->nsearches];
  memcpy(set->frames + set->frames_len, frame, len);
  slot->frame_at = set->frames_len;
  slot->frame_len = len;
  slot->entry = entry;
  slot->received_ns = received_ns;
  set->frames_len += len;
  b->limits = *limits;
  batch_count_search(s, b);
  s->dispatch->counters->read_batch_decoded++;
  return 0;
}

/* Decodes an undecoded search of the batch and prepares its response as
 * the search service's prepare step would (its database is the one its
 * peek found); a frame the decoder refuses gets its error as the ordinary
 * way answers it. Any thread: nothing here takes or drops a reference. */
static void batch_decode(read_batch_t *b, batch_search_t *slot) {
  char err[SRV_ERROR_MESSAGE_MAX];
  srv_request_t *request = &slot->request;
  const search_set_t *set = b->set;
  int rc = srv_codec_decode_request_in(set->frames + slot->frame_at, slot->frame_len, &b->limits, set->arena, request,
                                       err, sizeof err);
  request->received_ns = slot->received_ns;
  if (rc == 0 && (request->type != SRV_REQ_SEARCH || strcmp(request->database, slot->entry->db.name) != 0))
    rc = ANIM_EINTERNAL, snprintf(err, sizeof err, "a search's peek and its decode disagree");
  response_init(&slot->response, request->id, rc ? SRV_REQ_COUNT : SRV_REQ_SEARCH);
  slot_lend_memory(slot);
  slot->response.entry = slot->entry; /* released with the response, on the loop */
  slot->entry = NULL;
  slot->frame_len = 0;
  if (rc) srv_response_fail(&slot->response, rc, "%s", err);
}

/* Searches and encodes every answer of the batch into one buffer (any
 * thread: the searches read only their databases, held by reference). */
static void batch_run(srv_lane_item_t *item) {
  read_batch_t *b = (read_batch_t *)item;
  const srv_service_t *service = srv_service_for(SRV_REQ_SEARCH);
  for (int i = 0; i < b->nsearches; i++) {
    batch_search_t *slot = &b->set->slots[i];
    if (slot->frame_len) batch_decode(b, slot);
    if (!slot->response.error) srv_service_run_step(service->handle, &b->ctx, &slot->request, &slot->response);
  }
  for (int i = 0, next = 0; i < b->nanswers && !b->failed; i++) {
    srv_buffer_t *a = b->answers[i];
    if (!a) {
      b->failed = srv_codec_append_response(&b->set->slots[next++].response, &b->out) != 0;
    } else {
      size_t at = b->out ? b->out->len : 0;
      b->failed = srv_buffer_reserve(&b->out, at + a->len) != 0;
      if (!b->failed) memcpy(b->out->data + at, a->data, a->len), b->out->len = at + a->len;
    }
  }
}

/* Hands over the answers of the batches at the head that are done, in order. */
static void batch_flush_ready(srv_session_t *s) {
  while (s->batch_head && s->batch_head->done) {
    read_batch_t *b = s->batch_head;
    s->batch_head = b->next;
    if (!s->batch_head) s->batch_tail = NULL;
    if (b->failed) {
      srv_buffer_release(b->out);
      srv_connection_close(&s->connection, "out of memory encoding a response");
    } else if (b->nsearches > 0) {
      srv_connection_write(&s->connection, b->out); /* the answers were copied in */
    } else {
      srv_buffer_release(b->out); /* taken for a search that could not join */
      for (int i = 0; i < b->nanswers; i++) srv_connection_write(&s->connection, b->answers[i]), b->answers[i] = NULL;
    }
    for (int i = 0; i < b->nanswers; i++) srv_buffer_release(b->answers[i]);
    if (!s->batch_spare) s->batch_spare = b;
    else free(b);
  }
}

/* The batch's searches are answered (loop thread): count them, let go of
 * their requests, and hand over what is ready. */
static void batch_done(srv_lane_item_t *item) {
  read_batch_t *b = (read_batch_t *)item;
  srv_session_t *s = b->session;
  uint64_t now = srv_scheduler_now_ns();
  for (int i = 0; i < b->nsearches; i++) {
    batch_search_t *slot = &b->set->slots[i];
    srv_response_t *r = &slot->response;
    if (r->type == SRV_REQ_COUNT) /* a frame decoded in the batch that did not decode */
      srv_log(SRV_LOG_DEBUG, "connection %llu: bad request: %s", (unsigned long long)s->connection.id, r->message);
    count_at(s, r->type, r->error, slot->request.received_ns, now);
    srv_response_release(r);
    srv_request_release(&slot->request);
  }
  s->in_flight -= (uint32_t)b->nsearches;
  s->batch_searches -= b->nsearches;
  if (b->out && !b->failed && b->out->cap <= BATCH_OUT_KEPT_BYTES) b->set->out = srv_buffer_retain(b->out);
  search_set_give_back(s->dispatch, b->set);
  b->set = NULL;
  b->done = 1;
  batch_flush_ready(s);
  srv_connection_release(&s->connection); /* last: it may free the session */
}

/* Whether a closing batch goes to the lane (see BATCH_LANE_MIN). */
static int batch_to_lane(srv_dispatch_t *d, const read_batch_t *b) {
  if (!d->lane_ok || b->nsearches == 0) return 0;
  return b->nsearches >= BATCH_LANE_MIN || srv_lane_pending(&d->lane) > 0;
}

/* The batch being filled is complete: its searches run (in the lane when
 * there are enough of them), and it waits behind the earlier ones. */
static void batch_close(srv_session_t *s) {
  read_batch_t *b = s->batch;
  if (!b) return;
  s->batch = NULL;
  if (s->batch_tail) s->batch_tail->next = b;
  else s->batch_head = b;
  s->batch_tail = b;
  b->item.run = batch_run;
  b->item.done = batch_done;
  srv_counters_t *counters = s->dispatch->counters;
  counters->read_batch_searches += (uint64_t)b->nsearches;
  if (batch_to_lane(s->dispatch, b) && srv_lane_push(&s->dispatch->lane, &b->item) == 0) {
    counters->read_batches_lane++;
    return;
  }
  if (b->nsearches > 0) counters->read_batches_loop++, batch_run(&b->item);
  batch_done(&b->item);
}

/* ---- authentication -------------------------------------------------------------------- */

/* Constant time in the length of the expected token, so timing tells an
 * attacker nothing about how much of a guess was right. */
static int token_matches(const char *expected, const char *given) {
  size_t n = strlen(expected), m = strlen(given);
  unsigned char diff = (unsigned char)(n != m);
  for (size_t i = 0; i < n; i++) diff |= (unsigned char)(expected[i] ^ given[i < m ? i : 0]);
  return diff == 0;
}

/* Hello decides what the connection may do; 0, or an error already answered. */
static int authenticate(srv_session_t *s, const srv_request_t *request) {
  const srv_config_t *config = s->dispatch->env.config;
  if (request->type == SRV_REQ_HELLO && config->auth_token[0]) {
    const char *token = request->body.hello.auth_token;
    int user = token_matches(config->auth_token, token);
    int admin = config->admin_token[0] ? token_matches(config->admin_token, token) : user;
    if (!user && !admin) {
      s->dispatch->counters->auth_failures++;
      answer_error(s, request->id, request->type, ANIM_EPERM, "hello.auth_token: wrong token", request->received_ns);
      srv_connection_flush(&s->connection); /* the answer goes out before the drain shuts the stream */
      srv_connection_drain(&s->connection); /* one guess per connection */
      return ANIM_EPERM;
    }
    s->authenticated = 1;
    s->admin = admin;
    return 0;
  }
  const char *refusal = NULL;
  if (!s->authenticated) refusal = "this server needs authentication: send hello with the auth token first";
  else if ((srv_service_for(request->type)->flags & SRV_SERVICE_ADMIN) && !s->admin)
    refusal = "an administrative request: needs the admin token";
  if (!refusal) return 0;
  answer_error(s, request->id, request->type, ANIM_EPERM, refusal, request->received_ns);
  return ANIM_EPERM;
}

/* ---- the steps ---------------------------------------------------------------------------- */

static int at_in_flight_limit(srv_session_t *s) { return s->in_flight >= s->dispatch->env.config->max_in_flight; }

/* Runs an authenticated, decoded request: parks it during a tick when it
 * touches characters, else prepare, then handle here or on the pool. */
static void run(srv_session_t *s, srv_request_t *request) {
  srv_dispatch_t *d = s->dispatch;
  const srv_service_t *service = srv_service_for(request->type);
  if ((service->flags & SRV_SERVICE_CROWD) && srv_crowd_ticking(d->env.crowd)) {
    int rc = at_in_flight_limit(s) ? ANIM_ELIMIT : park(s, request);
    if (rc == 0) return; /* parked: the dispatcher holds the request now */
    answer_error(
        s, request->id, request->type, rc,
        rc == ANIM_ELIMIT ? "too many requests in flight on this connection (--max-in-flight)" : "out of memory",
        request->received_ns);
    srv_request_release(request);
    return;
  }
  srv_service_ctx_t ctx = service_ctx(s);
  srv_response_t response;
  response_init(&response, request->id, request->type);
  srv_service_run_step(service->prepare, &ctx, request, &response);
  /* A search of a read waits for the read's end, to run with the others. */
  if (!response.error && request->type == SRV_REQ_SEARCH && s->in_read && !at_in_flight_limit(s) &&
      !service->off_loop(request, &response) && batch_add_search(s, request, &response) == 0)
    return;
  if (!response.error && service->off_loop && service->off_loop(request, &response)) {
    if (at_in_flight_limit(s))
      srv_response_fail(&response, ANIM_ELIMIT,
                        "%s: more than %u requests in flight on this connection (--max-in-flight)",
                        srv_request_name(request->type), d->env.config->max_in_flight);
    else if (run_off_loop(s, service, request, &response) == 0)
      return; /* the job owns request and response now */
    else
      srv_response_fail(&response, ANIM_EINTERNAL, "%s: cannot queue the request", srv_request_name(request->type));
  }
  srv_service_run_step(service->handle, &ctx, request, &response);
  srv_service_run_step(service->finish, &ctx, request, &response);
  complete(s, request, &response);
}

/* Frames over this many bytes are decoded on the loop: a batch holds at
 * most BATCH_SEARCHES of them (a search by feature vector is a few hundred
 * bytes). */
#define BATCH_FRAME_MAX 4096

/* The database a pipelined search's frame names, retained, when it can be
 * decoded off the loop: a search (by its peek) of a loaded database that
 * passes its check and is small enough that every search method is light
 * (a search the ordinary way would send to the pool on its own may not run
 * in a batch, which the loop may take over). NULL: the ordinary way. */
static srv_db_entry_t *batch_frame_database(srv_session_t *s, const uint8_t *frame, size_t len) {
  srv_dispatch_t *d = s->dispatch;
  const uint8_t *name;
  size_t name_len;
  char text[ANIM_NAME_MAX], why[SRV_ERROR_MESSAGE_MAX];
  if (!d->lane_ok || !s->authenticated || len > BATCH_FRAME_MAX || at_in_flight_limit(s) ||
      !srv_codec_peek_search(frame, len, &name, &name_len) || name_len == 0 || name_len >= sizeof text ||
      memchr(name, '\0', name_len))
    return NULL;
  memcpy(text, name, name_len);
  text[name_len] = '\0';
  srv_db_entry_t *entry = srv_registry_acquire(d->env.registry, text);
  if (entry && entry->db.nframes <= SRV_SEARCH_LIGHT_ROWS && anim_database_check(&entry->db, why, sizeof why) == 0)
    return entry;
  srv_db_entry_release(entry);
  return NULL;
}

int srv_dispatch_frame(srv_session_t *s, const uint8_t *frame, size_t len) {
  srv_dispatch_t *d = s->dispatch;
  const srv_config_t *config = d->env.config;
  srv_codec_limits_t limits = {config->decode_budget_bytes, config->max_batch, ANIM_SEARCH_MAX_K,
                               config->max_pose_frames, config->max_ids_per_request};
  srv_request_t request;
  char err[SRV_ERROR_MESSAGE_MAX];
  d->counters->requests++;
  s->in_read = 1;
  /* Every frame of one read arrived together: one clock read serves them all. */
  uint64_t received_ns = s->connection.read_ns ? s->connection.read_ns : srv_scheduler_now_ns();
  /* A search joins its read's batch undecoded: the batch decodes it off the loop. */
  srv_db_entry_t *entry = batch_frame_database(s, frame, len);
  if (entry) {
    if (batch_add_frame(s, frame, len, entry, &limits, received_ns) == 0) return 0;
    srv_db_entry_release(entry);
  }
  /* A ping is read from its bytes: answered now, on this thread (a ping
   * never waits nor leaves the loop), while its payload in frame is there. */
  int rc = 0;
  if (!srv_codec_peek_ping(frame, len, &limits, &request)) {
    if (!s->arena) s->arena = srv_decode_arena_new(); /* NULL: requests decode with malloc */
    rc = srv_codec_decode_request_in(frame, len, &limits, s->arena, &request, err, sizeof err);
  }
  request.received_ns = received_ns;
  if (rc != 0) {
    srv_log(SRV_LOG_DEBUG, "connection %llu: bad request: %s", (unsigned long long)s->connection.id, err);
    answer_error(s, request.id, SRV_REQ_COUNT, rc, err, received_ns);
    srv_request_release(&request);
  } else if (authenticate(s, &request) != 0) {
    srv_request_release(&request);
  } else {
    run(s, &request);
  }
  return 0;
}
