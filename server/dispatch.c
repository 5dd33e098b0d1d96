/* dispatch.c: authentication, the service steps, pool jobs and parked requests (see dispatch.h);
 * pipelined searches are batched by read_batch.c. */
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

static void run(srv_session_t *s, srv_request_t *request);
static int park_job(job_t *job);
static void search_answered(srv_read_queue_t *queue, const srv_request_t *request, const srv_response_t *response,
                            uint64_t now_ns);

void srv_dispatch_init(srv_dispatch_t *d, uv_loop_t *loop, const srv_service_env_t *env, srv_counters_t *counters,
                       srv_metrics_t *metrics, void (*on_shutdown)(void *data), void *data) {
  memset(d, 0, sizeof *d);
  d->loop = loop;
  d->env = *env;
  d->counters = counters;
  d->metrics = metrics;
  d->on_shutdown = on_shutdown;
  d->data = data;
  srv_encoder_spares_init(&d->spares);
  srv_read_batches_init(&d->reads, loop, counters, env->registry, &d->spares, search_answered);
}

void srv_dispatch_close(srv_dispatch_t *d) {
  srv_read_batches_close(&d->reads);
  srv_buffer_pool_close(&d->answers); /* answers still being written are freed when written */
  srv_encoder_spares_close(&d->spares); /* no connection left: nothing encodes */
}

void srv_session_init(srv_session_t *s, srv_dispatch_t *d) {
  s->dispatch = d;
  /* Without an auth token every connection may do everything (loopback only, by protected mode). */
  s->authenticated = s->admin = d->env.config->auth_token[0] == '\0';
  srv_subscriber_init(&s->subscriber, d->env.streams, &s->connection, s->connection.id);
  srv_read_queue_init(&s->reads, &d->reads, &s->connection);
}

void srv_session_release(srv_session_t *s) {
  srv_decode_arena_free(s->arena);
  s->arena = NULL;
  srv_read_queue_release(&s->reads);
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

/* A search of a read batch is answered (read_batch.h): counted at the
 * batch's clock read, no longer in flight. */
static void search_answered(srv_read_queue_t *queue, const srv_request_t *request, const srv_response_t *response,
                            uint64_t now_ns) {
  srv_session_t *s = (srv_session_t *)((char *)queue - offsetof(srv_session_t, reads));
  count_at(s, response->type, response->error, request->received_ns, now_ns);
  s->in_flight--;
}

void srv_dispatch_read_end(srv_session_t *s) {
  srv_read_queue_end(&s->reads); /* its searches are counted as they are answered (search_answered) */
  if (s->nread_answers > 0) {
    uint64_t now = srv_scheduler_now_ns();
    for (int i = 0; i < s->nread_answers; i++)
      srv_metrics_request_at(s->dispatch->metrics, s->read_answers[i], s->connection.read_ns, now);
  }
  s->nread_answers = 0;
  s->in_read = 0;
}

/* Hands an encoded answer (or, when encoding failed, closes the connection).
 * During a read, while a batch of this connection is pending, it queues
 * behind the batch. */
static void write_answer(srv_session_t *s, srv_buffer_t *encoded) {
  if (encoded && s->in_read && srv_read_queue_pending(&s->reads)) {
    srv_service_ctx_t ctx = service_ctx(s);
    if (srv_read_queue_add_answer(&s->reads, &ctx, encoded) == 0) return;
  }
  if (encoded) srv_connection_write(&s->connection, encoded);
  else srv_connection_close(&s->connection, "out of memory encoding a response");
}

static void answer(srv_session_t *s, const srv_response_t *response, uint64_t received_ns) {
  srv_buffer_t *encoded = NULL;
  count(s, response->type, response->error, received_ns);
  srv_codec_encode_response_in(response, &s->dispatch->answers, &s->dispatch->spares, &encoded);
  write_answer(s, encoded);
}

static void answer_error(srv_session_t *s, uint64_t id, int type, int code, const char *message, uint64_t received_ns) {
  srv_response_t response;
  srv_response_init(&response, id, type);
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
  if (!job->service->finish &&
      srv_codec_encode_response_in(&job->response, NULL, &job->session->dispatch->spares, &job->encoded) != 0)
    job->encoded = NULL;
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
  srv_response_init(&response, request->id, request->type);
  srv_service_run_step(service->prepare, &ctx, request, &response);
  /* A search of a read waits for the read's end, to run with the others. */
  if (!response.error && request->type == SRV_REQ_SEARCH && s->in_read && !at_in_flight_limit(s) &&
      !service->off_loop(request, &response) && srv_read_queue_add_search(&s->reads, &ctx, request, &response) == 0) {
    s->in_flight++; /* until search_answered */
    return;
  }
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
  srv_db_entry_t *entry =
      s->authenticated && !at_in_flight_limit(s) ? srv_read_queue_frame_database(&s->reads, frame, len) : NULL;
  if (entry) {
    srv_service_ctx_t ctx = service_ctx(s);
    if (srv_read_queue_add_frame(&s->reads, &ctx, frame, len, entry, &limits, received_ns) == 0) {
      s->in_flight++; /* until search_answered */
      return 0;
    }
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
