/*
 * animctl_load.c: `animctl load`, a load generator on the client library.
 *
 *   animctl load [--connections N] [--pipeline P] [--duration S] [--rate R]
 *                [--mix ping=W,search=W] [--database NAME] [--k K]
 *
 * N connections on one thread, each keeping up to P requests in flight.
 * Without --rate it runs closed-loop as fast as the server answers and
 * reports throughput (latency then measured from each request's send).
 * By default the connections speak the protocol directly (requests packed
 * with protobuf-c, responses only framed and matched by id, as
 * redis-benchmark does), so the load generator costs little next to the
 * server; --library runs them through the client library instead.
 * With --rate R (requests/s in total) every request has an intended start
 * time on a fixed schedule and its latency is measured from that time, even
 * when it could only be sent later because the pipeline was full: a stalled
 * server shows up in the tail instead of silently slowing the load down
 * (no coordinated omission).
 */
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>
#include "animctl.h"
#include "animserver.pb-c.h"
#include "fields.h"
#include "frame.h"

#define RAW_SLOTS 1024 /* pipeline depth bound: send times by id % RAW_SLOTS */

typedef struct {
  int connections, pipeline;
  double duration_s, rate;
  int weight_ping, weight_search;
  const char *database;
  int k;
  int library; /* use the client library instead of raw frames */
} load_options_t;

typedef struct load_state load_state_t;

typedef struct {
  anim_client_t *client;
  load_state_t *state;
  int in_flight;
  /* raw mode */
  int fd;
  uint64_t next_id;
  uint64_t sent_ns[RAW_SLOTS];
  anim_frame_reader_t reader;
  uint8_t *out;
  size_t out_len, out_cap;
  uint64_t next_intended_ns; /* rate mode: the schedule of this connection */
  uint64_t interval_ns;
} load_conn_t;

struct load_state {
  const load_options_t *o;
  int nframes;
  uint64_t *latencies_ns;
  size_t nlatencies, cap;
  uint64_t errors, sent;
  unsigned seed;
};

typedef struct {
  load_conn_t *conn;
  uint64_t start_ns;
} request_tag_t;

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void record(load_state_t *s, request_tag_t *tag, int status) {
  load_conn_t *c = tag->conn;
  c->in_flight--;
  if (status != 0) s->errors++;
  if (s->nlatencies == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 1 << 16;
    uint64_t *grown = realloc(s->latencies_ns, cap * sizeof *grown);
    if (!grown) return;
    s->latencies_ns = grown;
    s->cap = cap;
  }
  s->latencies_ns[s->nlatencies++] = now_ns() - tag->start_ns;
  free(tag);
}

static void on_ping(anim_client_t *client, uint64_t id, int status, const anim_ping_result_t *r, void *data) {
  request_tag_t *tag = data;
  record(tag->conn->state, tag, status);
}

static void on_search(anim_client_t *client, uint64_t id, int status, const anim_search_reply_t *r, void *data) {
  request_tag_t *tag = data;
  record(tag->conn->state, tag, status);
}

/* ---- raw mode ---------------------------------------------------------------------- */

static int raw_connect(const char *host, int port) {
  char service[16];
  snprintf(service, sizeof service, "%d", port);
  struct addrinfo hints = {0}, *list = NULL;
  hints.ai_socktype = SOCK_STREAM;
  if (getaddrinfo(host, service, &hints, &list) != 0) return -1;
  int fd = -1;
  for (struct addrinfo *ai = list; ai && fd < 0; ai = ai->ai_next) {
    fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
    if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) close(fd), fd = -1;
  }
  freeaddrinfo(list);
  if (fd < 0) return -1;
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  return fd;
}

static int raw_queue(load_conn_t *c, const Animserver__Request *request) {
  size_t size = animserver__request__get_packed_size(request);
  if (c->out_len + size + ANIM_VARINT_MAX > c->out_cap) {
    size_t cap = c->out_cap ? 2 * c->out_cap : 65536;
    while (cap < c->out_len + size + ANIM_VARINT_MAX) cap *= 2;
    uint8_t *grown = realloc(c->out, cap);
    if (!grown) return ANIM_ENOMEM;
    c->out = grown, c->out_cap = cap;
  }
  c->out_len += anim_varint_encode(size, c->out + c->out_len);
  c->out_len += animserver__request__pack(request, c->out + c->out_len);
  return 0;
}

static int raw_send(load_conn_t *c, int search, int frame, uint64_t start_ns) {
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__PingRequest ping = ANIMSERVER__PING_REQUEST__INIT;
  Animserver__SearchRequest sr = ANIMSERVER__SEARCH_REQUEST__INIT;
  Animserver__SearchQuery q = ANIMSERVER__SEARCH_QUERY__INIT;
  Animserver__FrameIndex from = ANIMSERVER__FRAME_INDEX__INIT;
  request.id = c->next_id++;
  if (search) {
    from.frame = (uint32_t)frame;
    q.from_frame = &from;
    q.k = (uint32_t)c->state->o->k;
    sr.database = (char *)c->state->o->database;
    sr.query = &q;
    request.body_case = ANIMSERVER__REQUEST__BODY_SEARCH;
    request.search = &sr;
  } else {
    ping.payload.data = (uint8_t *)"load";
    ping.payload.len = 4;
    request.body_case = ANIMSERVER__REQUEST__BODY_PING;
    request.ping = &ping;
  }
  c->sent_ns[request.id % RAW_SLOTS] = start_ns;
  return raw_queue(c, &request);
}

static int raw_flush(load_conn_t *c) {
  size_t done = 0;
  while (done < c->out_len) {
    ssize_t n = send(c->fd, c->out + done, c->out_len - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n <= 0) return ANIM_ECLOSED;
    done += (size_t)n;
  }
  memmove(c->out, c->out + done, c->out_len - done);
  c->out_len -= done;
  return 0;
}

/* ServerMessage{response(1){id(1), error(2)?...}}: the id and whether an error came. */
static int raw_on_frame(void *ctx, const uint8_t *frame, size_t len) {
  load_conn_t *c = ctx;
  uint64_t id = 0;
  int error = 0;
  size_t pos = 0, inner = 0;
  anim_wire_field_t f, g;
  if (anim_wire_next_field(frame, len, &pos, &f) != 1 || f.number != 1 || f.type != ANIM_WIRE_BYTES) return ANIM_EPROTO;
  while (anim_wire_next_field(f.data, f.len, &inner, &g) == 1) {
    if (g.number == 1 && g.type == ANIM_WIRE_VARINT) id = g.value;
    if (g.number == 2 && g.type == ANIM_WIRE_BYTES) error = 1;
  }
  load_state_t *s = c->state;
  c->in_flight--;
  if (error) s->errors++;
  if (s->nlatencies == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 1 << 16;
    uint64_t *grown = realloc(s->latencies_ns, cap * sizeof *grown);
    if (!grown) return ANIM_ENOMEM;
    s->latencies_ns = grown, s->cap = cap;
  }
  s->latencies_ns[s->nlatencies++] = now_ns() - c->sent_ns[id % RAW_SLOTS];
  return 0;
}

static int raw_process(load_conn_t *c) {
  uint8_t buffer[65536];
  for (;;) {
    ssize_t n = recv(c->fd, buffer, sizeof buffer, 0);
    if (n > 0) {
      int rc = anim_frame_reader_feed(&c->reader, buffer, (size_t)n, raw_on_frame, c);
      if (rc) return rc;
      continue;
    }
    if (n == 0) return ANIM_ECLOSED;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return raw_flush(c);
    return ANIM_ECLOSED;
  }
}

/* A hello carrying the auth token, answered before the load starts: a
 * server with a token serves nothing else first. Blocking, up to timeout_ms. */
static int raw_hello(load_conn_t *c, const char *token, int timeout_ms) {
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__HelloRequest hello = ANIMSERVER__HELLO_REQUEST__INIT;
  hello.client_name = "animctl load";
  hello.auth_token = (char *)token;
  request.id = c->next_id++;
  request.body_case = ANIMSERVER__REQUEST__BODY_HELLO;
  request.hello = &hello;
  int rc = raw_queue(c, &request);
  c->in_flight++;
  c->sent_ns[request.id % RAW_SLOTS] = now_ns();
  load_state_t *s = c->state;
  uint64_t errors = s->errors, deadline = now_ns() + (uint64_t)timeout_ms * 1000000u;
  while (rc == 0 && c->in_flight > 0) {
    struct pollfd p = {c->fd, (short)(POLLIN | (c->out_len ? POLLOUT : 0)), 0};
    if (now_ns() > deadline) return ANIM_ETIMEDOUT;
    if (poll(&p, 1, 100) < 0 && errno != EINTR) return ANIM_EIO;
    if ((rc = raw_flush(c)) == 0) rc = raw_process(c);
  }
  /* The hello is not part of the measurement. */
  if (s->nlatencies > 0) s->nlatencies--;
  if (rc == 0 && s->errors != errors) rc = ANIM_EPERM;
  s->errors = errors;
  return rc;
}

static int send_one(load_conn_t *c, uint64_t start_ns) {
  load_state_t *s = c->state;
  if (!s->o->library) {
    int total = s->o->weight_ping + s->o->weight_search;
    int search = (int)(rand_r(&s->seed) % (unsigned)total) >= s->o->weight_ping;
    int rc = raw_send(c, search, search ? (int)(rand_r(&s->seed) % (unsigned)s->nframes) : 0, start_ns);
    if (rc) return rc;
    c->in_flight++;
    s->sent++;
    return 0;
  }
  request_tag_t *tag = malloc(sizeof *tag);
  if (!tag) return ANIM_ENOMEM;
  tag->conn = c;
  tag->start_ns = start_ns;
  int total = s->o->weight_ping + s->o->weight_search;
  int rc;
  if ((int)(rand_r(&s->seed) % (unsigned)total) < s->o->weight_ping) {
    rc = anim_client_ping_send(c->client, "load", 4, on_ping, tag, NULL);
  } else {
    anim_query_t q;
    anim_query_init(&q);
    q.from_frame = (int)(rand_r(&s->seed) % (unsigned)s->nframes);
    q.k = s->o->k;
    rc = anim_client_search_send(c->client, s->o->database, &q, 1, on_search, tag, NULL);
  }
  if (rc) {
    free(tag);
    return rc;
  }
  c->in_flight++;
  s->sent++;
  return 0;
}

/* Sends what this connection may send now: up to the pipeline depth, and in
 * rate mode only requests whose intended time has come. */
static int top_up(load_conn_t *c, uint64_t now, uint64_t end) {
  while (c->in_flight < c->state->o->pipeline) {
    uint64_t start = now;
    if (c->interval_ns) {
      if (c->next_intended_ns > now || c->next_intended_ns >= end) break;
      start = c->next_intended_ns;
      c->next_intended_ns += c->interval_ns;
    } else if (now >= end) {
      break;
    }
    int rc = send_one(c, start);
    if (rc) return rc;
  }
  return 0;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static double percentile_us(const uint64_t *sorted, size_t n, double p) {
  if (n == 0) return 0.0;
  size_t i = (size_t)ceil(p / 100.0 * (double)n);
  if (i > 0) i--;
  if (i >= n) i = n - 1;
  return (double)sorted[i] / 1000.0;
}

static int parse_mix(const char *text, load_options_t *o) {
  o->weight_ping = o->weight_search = 0;
  char buf[128];
  snprintf(buf, sizeof buf, "%s", text);
  for (char *item = strtok(buf, ","); item; item = strtok(NULL, ",")) {
    char *eq = strchr(item, '=');
    int w = eq ? atoi(eq + 1) : 1;
    if (eq) *eq = 0;
    if (w < 0) return -1;
    if (!strcmp(item, "ping")) o->weight_ping = w;
    else if (!strcmp(item, "search")) o->weight_search = w;
    else return -1;
  }
  return o->weight_ping + o->weight_search > 0 ? 0 : -1;
}

static int parse_load_options(int argc, char **argv, load_options_t *o) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
    i++;
    if (!strcmp(a, "--connections")) o->connections = atoi(v);
    else if (!strcmp(a, "--pipeline")) o->pipeline = atoi(v);
    else if (!strcmp(a, "--duration")) o->duration_s = atof(v);
    else if (!strcmp(a, "--rate")) o->rate = atof(v);
    else if (!strcmp(a, "--database")) o->database = v;
    else if (!strcmp(a, "--k")) o->k = atoi(v);
    else if (!strcmp(a, "--library")) o->library = 1, i--; /* a flag: no value */
    else if (!strcmp(a, "--mix")) {
      if (parse_mix(v, o)) return -1;
    } else {
      return -1;
    }
  }
  if (o->connections < 1 || o->connections > 10000 || o->pipeline < 1 || o->pipeline > 1024 ||
      !(o->duration_s > 0.0) || o->duration_s > 3600 || o->rate < 0 || o->k < 1)
    return -1;
  return 0;
}

static int run_load(const options_t *g, load_options_t *o, load_state_t *s, load_conn_t *conns) {
  uint64_t start = now_ns(), end = start + (uint64_t)(o->duration_s * 1e9);
  uint64_t interval = o->rate > 0 ? (uint64_t)(1e9 * o->connections / o->rate) : 0;
  for (int i = 0; i < o->connections; i++) {
    conns[i].interval_ns = interval;
    /* Stagger the schedules so connections do not fire in lockstep. */
    conns[i].next_intended_ns = start + (interval ? interval * (uint64_t)i / (uint64_t)o->connections : 0);
  }
  struct pollfd *fds = calloc((size_t)o->connections, sizeof *fds);
  if (!fds) return ANIM_ENOMEM;
  int rc = 0, outstanding = 1;
  while (rc == 0 && (now_ns() < end || outstanding)) {
    uint64_t now = now_ns();
    outstanding = 0;
    for (int i = 0; i < o->connections && rc == 0; i++) {
      rc = top_up(&conns[i], now, end);
      if (!rc && !o->library) rc = raw_flush(&conns[i]);
      fds[i].fd = o->library ? anim_client_fd(conns[i].client) : conns[i].fd;
      int wants = o->library ? anim_client_wants_write(conns[i].client) : conns[i].out_len > 0;
      fds[i].events = (short)(POLLIN | (wants ? POLLOUT : 0));
      outstanding += conns[i].in_flight;
    }
    if (now > end + 10ull * 1000000000u) break; /* answers that never come */
    /* Sleep no later than the next intended start: the schedule's resolution
     * is the load generator's own error, so keep it well under a millisecond. */
    uint64_t wake = now + 100000000u;
    for (int i = 0; interval && i < o->connections; i++)
      if (conns[i].in_flight < o->pipeline && conns[i].next_intended_ns < wake) wake = conns[i].next_intended_ns;
    uint64_t wait = wake > now ? wake - now : 0;
    struct timespec timeout = {(time_t)(wait / 1000000000u), (long)(wait % 1000000000u)};
    if (ppoll(fds, (nfds_t)o->connections, &timeout, NULL) < 0) continue;
    for (int i = 0; i < o->connections && rc == 0; i++)
      if (fds[i].revents) rc = o->library ? anim_client_process(conns[i].client) : raw_process(&conns[i]);
  }
  free(fds);
  (void)g;
  return rc;
}

static void report(const options_t *g, const load_options_t *o, load_state_t *s, double elapsed_s) {
  qsort(s->latencies_ns, s->nlatencies, sizeof *s->latencies_ns, cmp_u64);
  double rps = (double)s->nlatencies / elapsed_s;
  double p50 = percentile_us(s->latencies_ns, s->nlatencies, 50), p99 = percentile_us(s->latencies_ns, s->nlatencies, 99),
         p999 = percentile_us(s->latencies_ns, s->nlatencies, 99.9), max = percentile_us(s->latencies_ns, s->nlatencies, 100);
  if (g->json) {
    printf("{\"connections\":%d,\"pipeline\":%d,\"rate\":%g,\"mix\":{\"ping\":%d,\"search\":%d},\"duration_s\":%.3f,"
           "\"requests\":%zu,\"errors\":%llu,\"requests_per_s\":%.1f,\"p50_us\":%.1f,\"p99_us\":%.1f,"
           "\"p999_us\":%.1f,\"max_us\":%.1f,\"latency_from\":\"%s\"}\n",
           o->connections, o->pipeline, o->rate, o->weight_ping, o->weight_search, elapsed_s, s->nlatencies,
           (unsigned long long)s->errors, rps, p50, p99, p999, max, o->rate > 0 ? "intended" : "sent");
  } else {
    printf("%d connections (%s), pipeline %d, %s, mix ping=%d search=%d\n", o->connections,
           o->library ? "client library" : "raw frames", o->pipeline,
           o->rate > 0 ? "fixed rate (latency from intended start)" : "closed loop (latency from send)",
           o->weight_ping, o->weight_search);
    printf("requests %zu in %.2f s: %.0f req/s, errors %llu\n", s->nlatencies, elapsed_s, rps,
           (unsigned long long)s->errors);
    printf("latency us: p50 %.1f  p99 %.1f  p99.9 %.1f  max %.1f\n", p50, p99, p999, max);
  }
}

int animctl_load(anim_client_t *first, const options_t *g, int argc, char **argv) {
  load_options_t o = {50, 1, 5.0, 0.0, 1, 0, "default", 1, 0};
  if (parse_load_options(argc, argv, &o)) {
    fprintf(stderr, "animctl: load [--connections N] [--pipeline P] [--duration S] [--rate R] "
                    "[--mix ping=W,search=W] [--database NAME] [--k K]\n");
    return 2;
  }
  load_state_t s = {&o, 1, NULL, 0, 0, 0, 0, 12345u};
  if (o.weight_search > 0) {
    anim_db_description_t *d;
    int rc = anim_client_db_describe(first, o.database, &d, g->timeout_ms);
    if (rc) return report_error("load: describe", rc, first);
    s.nframes = (int)d->summary.frames;
    anim_db_description_free(d);
  }
  load_conn_t *conns = calloc((size_t)o.connections, sizeof *conns);
  int rc = conns ? 0 : ANIM_ENOMEM;
  for (int i = 0; rc == 0 && i < o.connections; i++) {
    anim_client_options_t copts = {.timeout_ms = g->timeout_ms, .auth_token = g->auth_token};
    int token = g->auth_token && *g->auth_token;
    conns[i].state = &s;
    conns[i].next_id = 1;
    anim_frame_reader_init(&conns[i].reader, 64u << 20);
    if (o.library) {
      conns[i].client = i == 0 ? first : anim_client_connect(g->host, g->port, &copts, &rc);
      if (rc == 0 && i > 0 && token) rc = anim_client_hello(conns[i].client, "animctl load", NULL, g->timeout_ms);
    } else if ((conns[i].fd = raw_connect(g->host, g->port)) < 0) {
      rc = ANIM_ECONNECT;
    } else if (token) {
      rc = raw_hello(&conns[i], g->auth_token, g->timeout_ms);
    }
  }
  uint64_t t0 = now_ns();
  if (rc == 0) rc = run_load(g, &o, &s, conns);
  double elapsed = (double)(now_ns() - t0) / 1e9;
  if (rc == 0) report(g, &o, &s, elapsed);
  else report_error("load", rc, first);
  for (int i = 0; conns && i < o.connections; i++) {
    if (o.library && i > 0) anim_client_close(conns[i].client);
    if (!o.library && conns[i].fd > 0) close(conns[i].fd);
    anim_frame_reader_free(&conns[i].reader);
    free(conns[i].out);
  }
  free(conns);
  free(s.latencies_ns);
  return rc ? 1 : 0;
}
