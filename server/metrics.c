/*
 * metrics.c: counting, the Prometheus text exposition, and the plain-HTTP
 * endpoint that serves it with the readiness and liveness checks (see
 * metrics.h).
 *
 * The HTTP side is deliberately tiny: one request per connection, the head
 * read into a fixed buffer, no keep-alive, no request bodies, no chunking.
 * It does not serve the animation protocol and never blocks the loop: a
 * scrape renders a few kilobytes from counters already in memory.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include "body.h"
#include "log.h"
#include "metrics.h"
#include "learned/lmm.h"
#include "net.h"

/* ---- counting ------------------------------------------------------------------------ */

static const double bounds[SRV_METRICS_BUCKETS] = {0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025,
                                                    0.005,   0.01,   0.025,   0.05,   0.1,   0.25,
                                                    0.5,     1.0,    2.0,     2.5};

const double *srv_histogram_bounds(void) { return bounds; }

void srv_histogram_observe(srv_histogram_t *h, double seconds) {
  h->count++;
  h->sum += seconds;
  for (int i = 0; i < SRV_METRICS_BUCKETS; i++)
    if (seconds <= bounds[i]) {
      h->buckets[i]++;
      return;
    }
  /* Above the last bound: only in count (the +Inf bucket). */
}

void srv_metrics_request_at(srv_metrics_t *m, int type, uint64_t received_ns, uint64_t now) {
  if (type < 0 || type > SRV_REQ_COUNT) type = SRV_REQ_COUNT;
  m->requests[type]++;
  srv_histogram_observe(&m->latency[type], now > received_ns ? (double)(now - received_ns) * 1e-9 : 0.0);
}

void srv_metrics_error(srv_metrics_t *m, int code) {
  /* libuv codes or anything outside the list land in slot 0 ("UNKNOWN"). */
  m->errors[code < 0 && code >= ANIM_ERRNO_MIN ? -code : 0]++;
}

void srv_metrics_tick(srv_metrics_t *m, uint64_t lateness_ns, uint64_t work_ns) {
  srv_histogram_observe(&m->tick_lateness, (double)lateness_ns * 1e-9);
  srv_histogram_observe(&m->tick_work, (double)work_ns * 1e-9);
}

int srv_metrics_ready(const srv_metrics_t *m) { return m->source.ready(m->source.data); }

/* ---- exposition -------------------------------------------------------------------------- */

typedef struct {
  char *data;
  size_t len, cap;
  int failed;
} text_t;

static void append(text_t *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void append(text_t *t, const char *fmt, ...) {
  if (t->failed) return;
  for (;;) {
    va_list args;
    va_start(args, fmt);
    int n = vsnprintf(t->data + t->len, t->cap - t->len, fmt, args);
    va_end(args);
    if (n < 0) {
      t->failed = 1;
      return;
    }
    if ((size_t)n < t->cap - t->len) {
      t->len += (size_t)n;
      return;
    }
    size_t cap = t->cap * 2 + (size_t)n;
    char *grown = realloc(t->data, cap);
    if (!grown) {
      t->failed = 1;
      return;
    }
    t->data = grown;
    t->cap = cap;
  }
}

static void header(text_t *t, const char *name, const char *type, const char *help) {
  append(t, "# HELP animserver_%s %s\n# TYPE animserver_%s %s\n", name, help, name, type);
}

static void scalar(text_t *t, const char *name, const char *type, const char *help, double value) {
  header(t, name, type, help);
  append(t, "animserver_%s %.15g\n", name, value); /* integers exact to 15 digits, no float noise */
}

static void counter(text_t *t, const char *name, const char *help, uint64_t value) {
  header(t, name, "counter", help);
  append(t, "animserver_%s %llu\n", name, (unsigned long long)value);
}

/* One histogram's series; label is "" or `key="value"`. Buckets are written
 * cumulative, as the format requires. */
static void histogram_series(text_t *t, const char *name, const char *label, const srv_histogram_t *h) {
  uint64_t cumulative = 0;
  const char *sep = label[0] ? "," : "";
  for (int i = 0; i < SRV_METRICS_BUCKETS; i++) {
    cumulative += h->buckets[i];
    append(t, "animserver_%s_bucket{%s%sle=\"%g\"} %llu\n", name, label, sep, bounds[i],
           (unsigned long long)cumulative);
  }
  append(t, "animserver_%s_bucket{%s%sle=\"+Inf\"} %llu\n", name, label, sep, (unsigned long long)h->count);
  const char *open = label[0] ? "{" : "", *close = label[0] ? "}" : "";
  append(t, "animserver_%s_sum%s%s%s %.9f\n", name, open, label, close, h->sum);
  append(t, "animserver_%s_count%s%s%s %llu\n", name, open, label, close, (unsigned long long)h->count);
}

static const char *type_name(int type) { return type == SRV_REQ_COUNT ? "unknown" : srv_request_name(type); }

void srv_process_usage(double *out_cpu_user_s, double *out_cpu_system_s, uint64_t *out_rss_bytes) {
  struct rusage usage;
  *out_cpu_user_s = *out_cpu_system_s = 0.0;
  if (getrusage(RUSAGE_SELF, &usage) == 0) {
    *out_cpu_user_s = (double)usage.ru_utime.tv_sec + (double)usage.ru_utime.tv_usec * 1e-6;
    *out_cpu_system_s = (double)usage.ru_stime.tv_sec + (double)usage.ru_stime.tv_usec * 1e-6;
  }
  FILE *f = fopen("/proc/self/statm", "r");
  unsigned long pages = 0, resident = 0;
  if (f) {
    if (fscanf(f, "%lu %lu", &pages, &resident) != 2) resident = 0;
    fclose(f);
  }
  *out_rss_bytes = (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

static void render_requests(text_t *t, const srv_metrics_t *m) {
  header(t, "requests_total", "counter", "Requests answered, by type (unknown: frames that did not decode).");
  for (int i = 0; i <= SRV_REQ_COUNT; i++)
    append(t, "animserver_requests_total{type=\"%s\"} %llu\n", type_name(i), (unsigned long long)m->requests[i]);
  header(t, "errors_total", "counter", "Error responses sent, by error code.");
  for (int i = 0; i <= -ANIM_ERRNO_MIN; i++)
    append(t, "animserver_errors_total{code=\"%s\"} %llu\n", i ? anim_err_name(-i) : "UNKNOWN",
           (unsigned long long)m->errors[i]);
  /* Only the types seen: two dozen empty histograms would triple every scrape. */
  header(t, "request_duration_seconds", "histogram",
         "Seconds from a request's frame decode to its response handed to libuv, by type.");
  for (int i = 0; i <= SRV_REQ_COUNT; i++) {
    if (m->latency[i].count == 0) continue;
    char label[64];
    snprintf(label, sizeof label, "type=\"%s\"", type_name(i));
    histogram_series(t, "request_duration_seconds", label, &m->latency[i]);
  }
}

/* One lane's items by the thread that ran them (lane.h: counted on the loop
 * thread when each item's done runs, so no pool thread writes them). */
static void lane_series(text_t *t, const char *lane_name, const srv_lane_t *lane) {
  append(t, "animserver_lane_items_total{lane=\"%s\",ran_on=\"loop\"} %llu\n", lane_name, lane->run_by_loop);
  append(t, "animserver_lane_items_total{lane=\"%s\",ran_on=\"pool\"} %llu\n", lane_name, lane->run_by_pool);
}

char *srv_metrics_render(const srv_metrics_t *m, size_t *out_len) {
  const srv_counters_t *s = m->source.counters;
  const srv_crowd_t *crowd = m->source.crowd;
  const srv_registry_t *registry = m->source.registry;
  const srv_scheduler_t *sched = &crowd->scheduler;
  text_t t = {malloc(16384), 0, 16384, 0};
  if (!t.data) return NULL;
  scalar(&t, "up", "gauge", "1 while the server's loop runs.", 1);
  scalar(&t, "ready", "gauge", "1 when the server accepts requests (what GET /ready answers).",
         srv_metrics_ready(m));
  scalar(&t, "uptime_seconds", "gauge", "Seconds since the server started.",
         (double)(srv_scheduler_now_ns() - m->source.start_ns) * 1e-9);
  scalar(&t, "connections", "gauge", "Client connections open on the protocol port.", s->connections);
  counter(&t, "connections_accepted_total", "Client connections accepted.", s->connections_accepted);
  counter(&t, "connections_refused_total", "Client connections refused (limit reached, shutting down).",
          s->connections_refused);
  counter(&t, "frames_rejected_total", "Frames refused before decoding (oversize, malformed length).",
          s->frames_rejected);
  counter(&t, "auth_failures_total", "Hello requests with a wrong auth token.", s->auth_failures);
  render_requests(&t, m);
  scalar(&t, "characters", "gauge", "Characters alive on the server.", crowd->count);
  counter(&t, "ticks_total", "Character ticks run.", sched->ticks);
  counter(&t, "ticks_late_total", "Ticks that started more than a tenth of a period after their deadline.",
          sched->late);
  counter(&t, "ticks_skipped_total", "Tick deadlines folded into a later tick (the crowd fell behind).",
          sched->skipped);
  header(&t, "tick_lateness_seconds", "histogram", "Seconds a tick started after its deadline.");
  histogram_series(&t, "tick_lateness_seconds", "", &m->tick_lateness);
  header(&t, "tick_work_seconds", "histogram", "Seconds from a tick's deadline to its frames handed to connections.");
  histogram_series(&t, "tick_work_seconds", "", &m->tick_work);
  counter(&t, "stream_frames_sent_total", "Pose frames sent to subscribers.", s->frames_sent);
  counter(&t, "stream_frames_dropped_total", "Pose frames replaced by a newer one for a slow subscriber.",
          s->frames_dropped);
  counter(&t, "stream_bytes_total", "Bytes of pose frames sent.", s->stream_bytes);
  counter(&t, "slow_subscribers_closed_total",
          "Connections closed for reading their stream too slowly: over the stream soft limit too long, or at the "
          "output hard limit with a subscription.",
          s->slow_subscribers_closed);
  counter(&t, "physics_resets_total",
          "Physical characters' simulations that diverged (a non-finite state) and were reset to their kinematic pose.",
          crowd->stats.physics_resets);
  scalar(&t, "output_bytes", "gauge", "Bytes of output queued or held for every connection.", (double)s->output_bytes);
  counter(&t, "output_limit_closed_total",
          "Connections closed at the output hard limit (subscribers among them count in slow_subscribers_closed too).",
          s->output_limit_closed);
  header(&t, "lane_items_total", "counter",
         "Items run by a lane (read_batches: pipelined searches; crowd: simulation chunks and stream encodings), "
         "by the thread that ran them (the loop, or a thread-pool job).");
  lane_series(&t, "read_batches", m->source.read_lane);
  lane_series(&t, "crowd", &crowd->lane);
  header(&t, "read_batches_total", "counter",
         "Batches of the searches pipelined in one read, by where they went: the read_batches lane, or searched on "
         "the loop at once (a few searches while the lane was idle).");
  append(&t, "animserver_read_batches_total{sent_to=\"lane\"} %llu\n", (unsigned long long)s->read_batches_lane);
  append(&t, "animserver_read_batches_total{sent_to=\"loop\"} %llu\n", (unsigned long long)s->read_batches_loop);
  counter(&t, "read_batch_searches_total", "Searches answered in read batches.", s->read_batch_searches);
  counter(&t, "read_batch_searches_decoded_total",
          "Searches of read batches decoded by their batch (off the loop when the lane ran it); the others were "
          "decoded on the loop as they arrived.",
          s->read_batch_decoded);
  scalar(&t, "databases", "gauge", "Databases loaded.", registry->count);
  /* Names are [A-Za-z0-9_.-] (srv_db_name_validate): no label escaping needed. */
  header(&t, "database_memory_bytes", "gauge", "Bytes a loaded database takes (poses, features, indexes).");
  for (int i = 0; i < registry->count; i++) {
    const srv_db_entry_t *e = registry->entries[i];
    append(&t, "animserver_database_memory_bytes{database=\"%s\"} %llu\n", e->db.name,
           (unsigned long long)e->memory_bytes);
  }
  header(&t, "lmm_networks_memory_bytes", "gauge",
         "Bytes a loaded database's learned networks take (projector, stepper, trimmed decompressor; 0 without "
         "networks; included in database_memory_bytes for networks trained on the database, not --lmm's).");
  for (int i = 0; i < registry->count; i++) {
    const srv_db_entry_t *e = registry->entries[i];
    append(&t, "animserver_lmm_networks_memory_bytes{database=\"%s\"} %llu\n", e->db.name,
           (unsigned long long)(e->lmm ? anim_lmm_networks_memory(e->lmm) : 0));
  }
  header(&t, "graph_memory_bytes", "gauge",
         "Bytes a loaded database's motion graph takes (its arrays and distance picture; 0 without one).");
  for (int i = 0; i < registry->count; i++) {
    const srv_db_entry_t *e = registry->entries[i];
    append(&t, "animserver_graph_memory_bytes{database=\"%s\"} %llu\n", e->db.name,
           (unsigned long long)e->graph_memory_bytes);
  }
  header(&t, "physics_memory_bytes", "gauge",
         "Bytes a loaded database's physics models take (its 70 kg model and one per other body mass of its physical "
         "characters; 0 without).");
  for (int i = 0; i < registry->count; i++) {
    const srv_db_entry_t *e = registry->entries[i];
    append(&t, "animserver_physics_memory_bytes{database=\"%s\"} %llu\n", e->db.name,
           (unsigned long long)(anim_physics_model_bytes(e->physics) + e->physics_models_bytes));
  }
  double user, system;
  uint64_t rss;
  srv_process_usage(&user, &system, &rss);
  scalar(&t, "process_cpu_seconds_total", "counter", "User and system CPU seconds of the process.", user + system);
  scalar(&t, "process_resident_memory_bytes", "gauge", "Resident memory of the process in bytes.", (double)rss);
  if (t.failed) {
    free(t.data);
    return NULL;
  }
  *out_len = t.len;
  return t.data;
}

/* ---- the HTTP endpoint ---------------------------------------------------------------------- */

typedef struct metrics_conn {
  uv_tcp_t tcp;
  uv_timer_t timer;
  uv_write_t write;
  uv_shutdown_t shutdown;
  srv_metrics_t *metrics;
  char head[SRV_METRICS_HEAD_MAX];
  size_t len;
  char *out;        /* the response being written */
  int answered;     /* after the answer, reads are discarded until the peer closes */
  int closing;
  int open_handles; /* freed when both handles' close callbacks ran */
  struct metrics_conn *prev, *next;
} metrics_conn_t;

static void on_handle_closed(uv_handle_t *handle) {
  metrics_conn_t *c = handle->data;
  if (--c->open_handles > 0) return;
  free(c->out);
  free(c);
}

static void conn_close(metrics_conn_t *c) {
  if (c->closing) return;
  c->closing = 1;
  srv_metrics_t *m = c->metrics;
  if (c->prev) c->prev->next = c->next;
  else m->conns = c->next;
  if (c->next) c->next->prev = c->prev;
  m->nconns--;
  c->open_handles = 2;
  uv_close((uv_handle_t *)&c->timer, on_handle_closed);
  uv_close((uv_handle_t *)&c->tcp, on_handle_closed);
}

static void on_timeout(uv_timer_t *timer) { conn_close(timer->data); }

static void on_alloc(uv_handle_t *handle, size_t suggested, uv_buf_t *buf) {
  metrics_conn_t *c = handle->data;
  /* After the answer the head buffer is scratch for discarded bytes. */
  if (c->answered) c->len = 0;
  buf->base = c->head + c->len;
  buf->len = sizeof c->head - c->len;
}

static void on_shutdown(uv_shutdown_t *req, int status) {
  metrics_conn_t *c = req->data;
  if (status < 0) conn_close(c);
  /* Otherwise keep reading until the peer closes (or the timer fires):
   * closing with unread request bytes would reset the connection and could
   * destroy the answer before the client read it. */
}

static void on_written(uv_write_t *req, int status) {
  metrics_conn_t *c = req->data;
  if (c->closing) return;
  if (status < 0 || uv_shutdown(&c->shutdown, (uv_stream_t *)&c->tcp, on_shutdown) < 0) conn_close(c);
}

static const char *status_text(int status) {
  switch (status) {
  case 200: return "OK";
  case 400: return "Bad Request";
  case 404: return "Not Found";
  case 405: return "Method Not Allowed";
  case 431: return "Request Header Fields Too Large";
  case 500: return "Internal Server Error";
  default: return "Service Unavailable";
  }
}

/* Sends one response (body may be NULL for a status-text body) and closes after it. */
static void respond(metrics_conn_t *c, int status, const char *content_type, const char *body, size_t body_len) {
  char text[64];
  if (!body) {
    body_len = (size_t)snprintf(text, sizeof text, "%s\n", status_text(status));
    body = text;
  }
  char head[256];
  int n = snprintf(head, sizeof head,
                   "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n%s\r\n",
                   status, status_text(status), content_type, body_len, status == 405 ? "Allow: GET\r\n" : "");
  c->answered = 1;
  c->out = malloc((size_t)n + body_len);
  if (!c->out) {
    conn_close(c);
    return;
  }
  memcpy(c->out, head, (size_t)n);
  memcpy(c->out + n, body, body_len);
  uv_buf_t buf = uv_buf_init(c->out, (unsigned)((size_t)n + body_len));
  c->write.data = c;
  c->shutdown.data = c;
  if (uv_write(&c->write, (uv_stream_t *)&c->tcp, &buf, 1, on_written) < 0) conn_close(c);
}

/* The end of the head (just past its blank line) in the first len bytes, or NULL. */
static const char *head_end(const char *head, size_t len) {
  for (size_t i = 0; i + 1 < len; i++) {
    if (head[i] != '\n') continue;
    if (head[i + 1] == '\n') return head + i + 2;
    if (i + 2 < len && head[i + 1] == '\r' && head[i + 2] == '\n') return head + i + 3;
  }
  return NULL;
}

static int is_token_char(char ch) {
  return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
         strchr("!#$%&'*+-.^_`|~", ch);
}

/* Checks the head (request line, then "Name: value" lines): 0 with the
 * target's path in out_path, or the HTTP status to refuse it with. */
static int parse_head(char *head, size_t head_len, char **out_path) {
  char *end = head + head_len;
  if (memchr(head, '\0', head_len)) return 400;
  char *line_end = memchr(head, '\n', head_len);
  *line_end = '\0';
  if (line_end > head && line_end[-1] == '\r') line_end[-1] = '\0';
  /* Request line: METHOD SP target SP HTTP/1.x */
  char *method = head, *sp1 = strchr(head, ' ');
  char *target = sp1 ? sp1 + 1 : NULL, *sp2 = target ? strchr(target, ' ') : NULL;
  if (!sp1 || !sp2 || sp1 == method) return 400;
  *sp1 = *sp2 = '\0';
  const char *version = sp2 + 1;
  for (const char *q = method; *q; q++)
    if (!is_token_char(*q)) return 400;
  if (target[0] != '/' || (strcmp(version, "HTTP/1.1") != 0 && strcmp(version, "HTTP/1.0") != 0)) return 400;
  /* Header lines: each "name: value"; folded lines (leading space) are obsolete and refused. */
  for (char *line = line_end + 1; line < end;) {
    char *nl = memchr(line, '\n', (size_t)(end - line));
    size_t n = (size_t)(nl - line);
    if (n > 0 && line[n - 1] == '\r') n--;
    if (n == 0) break; /* the blank line */
    char *colon = memchr(line, ':', n);
    if (!colon || colon == line || line[0] == ' ' || line[0] == '\t') return 400;
    line = nl + 1;
  }
  if (strcmp(method, "GET") != 0) return 405;
  char *query = strchr(target, '?');
  if (query) *query = '\0';
  *out_path = target;
  return 0;
}

static void handle_head(metrics_conn_t *c, size_t head_len) {
  static const char plain[] = "text/plain; charset=utf-8";
  char *path = NULL;
  int status = parse_head(c->head, head_len, &path);
  srv_metrics_t *m = c->metrics;
  if (status) {
    respond(c, status, plain, NULL, 0);
  } else if (strcmp(path, "/metrics") == 0) {
    size_t len;
    char *text = srv_metrics_render(m, &len);
    if (text) respond(c, 200, "text/plain; version=0.0.4; charset=utf-8", text, len);
    else respond(c, 500, plain, NULL, 0);
    free(text);
  } else if (strcmp(path, "/ready") == 0) {
    int ready = srv_metrics_ready(m);
    const char *body = ready ? "ready\n" : "not ready\n";
    respond(c, ready ? 200 : 503, plain, body, strlen(body));
  } else if (strcmp(path, "/live") == 0) {
    respond(c, 200, plain, "live\n", 5);
  } else {
    respond(c, 404, plain, NULL, 0);
  }
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf) {
  metrics_conn_t *c = stream->data;
  if (nread < 0) { /* EOF or error: a head never finished, or the client is done with the answer */
    conn_close(c);
    return;
  }
  if (c->answered || c->closing) return; /* discarded */
  c->len += (size_t)nread;
  const char *end = head_end(c->head, c->len);
  if (end) {
    /* Reading goes on after the answer, discarding, until the peer closes. */
    c->metrics->http_requests++;
    handle_head(c, (size_t)(end - c->head));
  } else if (c->len == sizeof c->head) {
    respond(c, 431, "text/plain; charset=utf-8", NULL, 0);
  }
}

static void on_connection(uv_stream_t *listener, int status) {
  srv_metrics_t *m = listener->data;
  if (status < 0) return;
  metrics_conn_t *c = calloc(1, sizeof *c);
  if (!c) {
    /* libuv stops watching the listener until this connection is accepted,
     * so without 4 KiB to spare the endpoint goes quiet: say so. */
    srv_log(SRV_LOG_ERROR, "metrics endpoint: out of memory accepting a connection");
    return;
  }
  c->metrics = m;
  uv_tcp_init(m->loop, &c->tcp);
  uv_timer_init(m->loop, &c->timer);
  c->tcp.data = c->timer.data = c;
  c->next = m->conns;
  if (m->conns) m->conns->prev = c;
  m->conns = c;
  m->nconns++;
  if (uv_accept(listener, (uv_stream_t *)&c->tcp) < 0 || m->nconns > SRV_METRICS_MAX_CONNECTIONS) {
    conn_close(c);
    return;
  }
  uv_timer_start(&c->timer, on_timeout, SRV_METRICS_TIMEOUT_MS, 0);
  uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
}

int srv_metrics_start(srv_metrics_t *m, uv_loop_t *loop, const char *host, int port, const srv_metrics_source_t *source,
                      char *err, int errlen) {
  m->loop = loop;
  m->source = *source;
  if (port < 0) return 0;
  m->listener.data = m;
  m->listening = 1;
  int rc = srv_listen(&m->listener, loop, host, port, 0, 64, on_connection, m->bound_host, sizeof m->bound_host,
                      &m->bound_port);
  if (rc == ANIM_EINVAL) {
    snprintf(err, errlen, "--metrics-host %s: not an IPv4 or IPv6 address", host);
  } else if (rc < 0) {
    snprintf(err, errlen, "cannot listen on %s:%d for metrics: %s", host, port, uv_strerror(rc));
    rc = ANIM_EIO;
  }
  if (rc) srv_metrics_close(m);
  return rc;
}

void srv_metrics_close(srv_metrics_t *m) {
  if (!m->listening) return;
  m->listening = 0;
  uv_close((uv_handle_t *)&m->listener, NULL);
  while (m->conns) conn_close(m->conns); /* each close unlinks it */
}
