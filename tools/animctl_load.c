/*
 * animctl_load.c: `animctl load`, a load generator on the client library.
 *
 *   animctl load [--connections N] [--pipeline P] [--duration S] [--rate R]
 *                [--mix ping=W,search=W] [--database NAME] [--k K] [--pose]
 *
 * N connections on one thread, each keeping up to P requests in flight.
 * Without --rate it runs closed-loop as fast as the server answers and
 * reports throughput (latency then measured from each request's send).
 * By default the connections speak the protocol directly, as
 * redis-benchmark does, so the load generator costs little next to the
 * server it shares the machine with: requests are packed with protobuf-c
 * once before the run (the ping, and 1024 searches from random frames used
 * in turn; each send prefixes the frame length and the id field), sockets
 * are watched with epoll, and an answer is read only as far as its framing:
 * it must be a Response whose id is a request in flight on that connection
 * (else the run stops with a protocol error) and whose body is the one
 * asked for (ping or search); an error answer, or another body, counts in
 * errors. Answers that arrive in one recv share one clock read.
 * --pose asks each search for its matches' poses (local, as a previewer
 * does): answers of hundreds of bytes a match instead of tens.
 * --library runs the connections through the client library instead
 * (every answer decoded in full).
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
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>
#include "animctl.h"
#include "animserver.pb-c.h"
#include "fields.h"
#include "frame.h"

/* Requests in flight per connection, by id % RAW_SLOTS; a connection whose
 * next id's slot is still taken waits (at most --pipeline 1024 in flight). */
#define RAW_SLOTS 4096
/* Search requests packed before the run, from random frames, sent in turn. */
#define SEARCH_TEMPLATES 1024

/* Latencies go to a log-linear histogram: values under 64 ns exact, then 64
 * buckets per power of two (under 1.6% apart), so memory stays fixed however
 * long the run and percentiles need no sort. */
#define HIST_SUB 64
#define HIST_BUCKETS (HIST_SUB + (64 - 6) * HIST_SUB)

typedef struct {
  int connections, pipeline;
  double duration_s, rate;
  int weight_ping, weight_search;
  const char *database;
  int k;
  int pose;    /* searches carry their matches' poses */
  int library; /* use the client library instead of raw frames */
} load_options_t;

typedef struct load_state load_state_t;

typedef struct {
  uint64_t id;      /* 0: free */
  uint64_t sent_ns; /* latency origin (intended start in rate mode) */
  int expect;       /* the Response body field the answer must carry */
} raw_slot_t;

typedef struct {
  anim_client_t *client;
  load_state_t *state;
  int in_flight;
  /* raw mode */
  int fd;
  uint64_t next_id;
  raw_slot_t slots[RAW_SLOTS];
  anim_frame_reader_t reader;
  uint64_t arrived_ns; /* the clock read of the recv being handled */
  uint8_t *out;
  size_t out_len, out_cap;
  int watching_out; /* epoll also waits for room to send */
  uint64_t next_intended_ns; /* rate mode: the schedule of this connection */
  uint64_t interval_ns;
} load_conn_t;

/* A request packed once: the Request's bytes without its id (field 1 is
 * prepended per send; fields of a protobuf message may come in any order). */
typedef struct {
  size_t offset, len;
  int body; /* Request and Response body field number (they match) */
} template_t;

struct load_state {
  const load_options_t *o;
  int nframes;
  uint64_t histogram[HIST_BUCKETS];
  uint64_t answered, max_ns;
  uint64_t errors, sent;
  unsigned seed;
  uint8_t *packed; /* the templates' bytes */
  template_t ping, searches[SEARCH_TEMPLATES];
  int next_search;
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

/* ---- latency histogram --------------------------------------------------------------- */

static int hist_bucket(uint64_t v) {
  if (v < HIST_SUB) return (int)v;
  int m = 63 - __builtin_clzll(v), shift = m - 6; /* m >= 6 */
  return HIST_SUB + shift * HIST_SUB + (int)((v >> shift) - HIST_SUB);
}

/* The middle of bucket b's values. */
static double hist_value(int b) {
  if (b < HIST_SUB) return (double)b;
  int shift = (b - HIST_SUB) / HIST_SUB, sub = (b - HIST_SUB) % HIST_SUB;
  double low = (double)((uint64_t)(HIST_SUB + sub) << shift);
  return low + (double)((uint64_t)1 << shift) / 2.0;
}

static void observe(load_state_t *s, uint64_t ns) {
  s->histogram[hist_bucket(ns)]++;
  s->answered++;
  if (ns > s->max_ns) s->max_ns = ns;
}

static double percentile_us(const load_state_t *s, double p) {
  if (s->answered == 0) return 0.0;
  uint64_t rank = (uint64_t)ceil(p / 100.0 * (double)s->answered), seen = 0;
  if (rank == 0) rank = 1;
  for (int b = 0; b < HIST_BUCKETS; b++)
    if ((seen += s->histogram[b]) >= rank) return hist_value(b) / 1000.0;
  return (double)s->max_ns / 1000.0;
}

static void record(load_state_t *s, request_tag_t *tag, int status) {
  load_conn_t *c = tag->conn;
  c->in_flight--;
  if (status != 0) s->errors++;
  observe(s, now_ns() - tag->start_ns);
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

static int out_reserve(load_conn_t *c, size_t more) {
  if (c->out_len + more <= c->out_cap) return 0;
  size_t cap = c->out_cap ? 2 * c->out_cap : 65536;
  while (cap < c->out_len + more) cap *= 2;
  uint8_t *grown = realloc(c->out, cap);
  if (!grown) return ANIM_ENOMEM;
  c->out = grown, c->out_cap = cap;
  return 0;
}

/* Takes the slot of the connection's next id; 0 when it is still in flight. */
static raw_slot_t *slot_take(load_conn_t *c, uint64_t start_ns, int expect) {
  raw_slot_t *slot = &c->slots[c->next_id % RAW_SLOTS];
  if (slot->id) return NULL;
  slot->id = c->next_id++;
  slot->sent_ns = start_ns;
  slot->expect = expect;
  return slot;
}

/* Queues a request packed by protobuf-c in full (the hello: not timed). */
static int raw_queue(load_conn_t *c, Animserver__Request *request, uint64_t start_ns) {
  raw_slot_t *slot = slot_take(c, start_ns, (int)request->body_case);
  if (!slot) return ANIM_ELIMIT;
  request->id = slot->id;
  size_t size = animserver__request__get_packed_size(request);
  if (out_reserve(c, size + ANIM_VARINT_MAX)) return ANIM_ENOMEM;
  c->out_len += anim_varint_encode(size, c->out + c->out_len);
  c->out_len += animserver__request__pack(request, c->out + c->out_len);
  return 0;
}

/* Queues a packed template under the next id: length, id field, the rest.
 * 1 when the pipeline's slots are full (nothing queued). */
static int raw_send(load_conn_t *c, const template_t *t, uint64_t start_ns) {
  raw_slot_t *slot = slot_take(c, start_ns, t->body);
  if (!slot) return 1;
  uint8_t id_field[1 + ANIM_VARINT_MAX];
  id_field[0] = 0x08; /* field 1, varint */
  size_t id_len = 1 + anim_varint_encode(slot->id, id_field + 1);
  if (out_reserve(c, 2 * ANIM_VARINT_MAX + 1 + t->len)) return ANIM_ENOMEM;
  uint8_t *out = c->out + c->out_len;
  size_t n = anim_varint_encode(id_len + t->len, out);
  memcpy(out + n, id_field, id_len);
  memcpy(out + n + id_len, c->state->packed + t->offset, t->len);
  c->out_len += n + id_len + t->len;
  return 0;
}

/* Packs the ping and the search templates (ids left out) into s->packed. */
static int pack_templates(load_state_t *s) {
  const load_options_t *o = s->o;
  Animserver__Request requests[1 + SEARCH_TEMPLATES];
  Animserver__PingRequest ping = ANIMSERVER__PING_REQUEST__INIT;
  Animserver__SearchRequest sr[SEARCH_TEMPLATES];
  Animserver__SearchQuery q[SEARCH_TEMPLATES];
  Animserver__FrameIndex from[SEARCH_TEMPLATES];
  int n = o->weight_search > 0 ? SEARCH_TEMPLATES : 0;
  size_t total = 0;
  for (int i = 0; i <= n; i++) {
    Animserver__Request r = ANIMSERVER__REQUEST__INIT;
    requests[i] = r;
    if (i == 0) {
      ping.payload.data = (uint8_t *)"load";
      ping.payload.len = 4;
      requests[i].body_case = ANIMSERVER__REQUEST__BODY_PING;
      requests[i].ping = &ping;
    } else {
      Animserver__SearchRequest sr0 = ANIMSERVER__SEARCH_REQUEST__INIT;
      Animserver__SearchQuery q0 = ANIMSERVER__SEARCH_QUERY__INIT;
      Animserver__FrameIndex f0 = ANIMSERVER__FRAME_INDEX__INIT;
      sr[i - 1] = sr0, q[i - 1] = q0, from[i - 1] = f0;
      from[i - 1].frame = (uint32_t)(rand_r(&s->seed) % (unsigned)s->nframes);
      q[i - 1].from_frame = &from[i - 1];
      q[i - 1].k = (uint32_t)o->k;
      q[i - 1].include_pose = o->pose;
      sr[i - 1].database = (char *)o->database;
      sr[i - 1].query = &q[i - 1];
      requests[i].body_case = ANIMSERVER__REQUEST__BODY_SEARCH;
      requests[i].search = &sr[i - 1];
    }
    total += animserver__request__get_packed_size(&requests[i]);
  }
  if (!(s->packed = malloc(total))) return ANIM_ENOMEM;
  size_t at = 0;
  for (int i = 0; i <= n; i++) {
    template_t *t = i == 0 ? &s->ping : &s->searches[i - 1];
    t->offset = at;
    t->len = animserver__request__pack(&requests[i], s->packed + at);
    t->body = (int)requests[i].body_case;
    at += t->len;
  }
  return 0;
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

/* ServerMessage{response(1){id(1), error(2) | body}}, read only as far as
 * its fields' framing: the id must be in flight here, the body the one its
 * request asked for (else an error). */
static int raw_on_frame(void *ctx, const uint8_t *frame, size_t len) {
  load_conn_t *c = ctx;
  uint64_t id = 0;
  int error = 0, body = 0;
  size_t pos = 0, inner = 0;
  anim_wire_field_t f, g;
  if (anim_wire_next_field(frame, len, &pos, &f) != 1 || f.number != 1 || f.type != ANIM_WIRE_BYTES) return ANIM_EPROTO;
  while (anim_wire_next_field(f.data, f.len, &inner, &g) == 1) {
    if (g.number == 1 && g.type == ANIM_WIRE_VARINT) id = g.value;
    else if (g.number == 2 && g.type == ANIM_WIRE_BYTES) error = 1;
    else if (g.type == ANIM_WIRE_BYTES) body = (int)g.number;
  }
  raw_slot_t *slot = &c->slots[id % RAW_SLOTS];
  if (id == 0 || slot->id != id) return ANIM_EPROTO; /* an answer to no request in flight */
  load_state_t *s = c->state;
  c->in_flight--;
  if (error || body != slot->expect) s->errors++;
  observe(s, c->arrived_ns > slot->sent_ns ? c->arrived_ns - slot->sent_ns : 0);
  slot->id = 0;
  return 0;
}

static int raw_process(load_conn_t *c) {
  uint8_t buffer[65536];
  for (;;) {
    ssize_t n = recv(c->fd, buffer, sizeof buffer, 0);
    if (n > 0) {
      c->arrived_ns = now_ns(); /* one clock read for the answers of one recv */
      int rc = anim_frame_reader_feed(&c->reader, buffer, (size_t)n, raw_on_frame, c);
      if (rc) return rc;
      if ((size_t)n < sizeof buffer) return 0; /* drained: level-triggered polling says when there is more */
      continue;
    }
    if (n == 0) return ANIM_ECLOSED;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
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
  request.body_case = ANIMSERVER__REQUEST__BODY_HELLO;
  request.hello = &hello;
  int rc = raw_queue(c, &request, now_ns());
  c->in_flight++;
  load_state_t *s = c->state;
  uint64_t errors = s->errors, deadline = now_ns() + (uint64_t)timeout_ms * 1000000u;
  while (rc == 0 && c->in_flight > 0) {
    struct pollfd p = {c->fd, (short)(POLLIN | (c->out_len ? POLLOUT : 0)), 0};
    if (now_ns() > deadline) return ANIM_ETIMEDOUT;
    if (poll(&p, 1, 100) < 0 && errno != EINTR) return ANIM_EIO;
    if ((rc = raw_flush(c)) == 0) rc = raw_process(c);
  }
  /* The hello is not part of the measurement. */
  memset(s->histogram, 0, sizeof s->histogram);
  s->answered = s->max_ns = 0;
  if (rc == 0 && s->errors != errors) rc = ANIM_EPERM;
  s->errors = errors;
  return rc;
}

static int send_one(load_conn_t *c, uint64_t start_ns) {
  load_state_t *s = c->state;
  int total = s->o->weight_ping + s->o->weight_search;
  int search = s->o->weight_search > 0 &&
               (s->o->weight_ping == 0 || (int)(rand_r(&s->seed) % (unsigned)total) >= s->o->weight_ping);
  if (!s->o->library) {
    const template_t *t = &s->ping;
    if (search) t = &s->searches[s->next_search++ % SEARCH_TEMPLATES];
    int rc = raw_send(c, t, start_ns);
    if (rc) return rc;
    c->in_flight++;
    s->sent++;
    return 0;
  }
  request_tag_t *tag = malloc(sizeof *tag);
  if (!tag) return ANIM_ENOMEM;
  tag->conn = c;
  tag->start_ns = start_ns;
  int rc;
  if (!search) {
    rc = anim_client_ping_send(c->client, "load", 4, on_ping, tag, NULL);
  } else {
    anim_query_t q;
    anim_query_init(&q);
    q.from_frame = (int)(rand_r(&s->seed) % (unsigned)s->nframes);
    q.k = s->o->k;
    q.include_pose = s->o->pose;
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
    if (!c->state->o->library && c->slots[c->next_id % RAW_SLOTS].id) break; /* that id's slot is still in flight */
    uint64_t start = now;
    if (c->interval_ns) {
      if (c->next_intended_ns > now || c->next_intended_ns >= end) break;
      start = c->next_intended_ns;
      c->next_intended_ns += c->interval_ns;
    } else if (now >= end) {
      break;
    }
    int rc = send_one(c, start);
    if (rc) return rc < 0 ? rc : 0;
  }
  return 0;
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
    else if (!strcmp(a, "--pose")) o->pose = 1, i--;
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

/* Epoll also waits for room to send while c has output left. */
static int watch_output(int ep, load_conn_t *c) {
  int want = c->out_len > 0;
  if (want == c->watching_out) return 0;
  struct epoll_event ev = {(uint32_t)(EPOLLIN | (want ? EPOLLOUT : 0)), {.ptr = c}};
  c->watching_out = want;
  return epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev) == 0 ? 0 : ANIM_EIO;
}

/* Raw frames, closed loop: a connection sends its next requests as soon as
 * answers come back (as redis-benchmark does), watched with epoll. */
static int run_raw(load_options_t *o, load_state_t *s, load_conn_t *conns) {
  int ep = epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) return ANIM_EIO;
  uint64_t now = now_ns(), end = now + (uint64_t)(o->duration_s * 1e9);
  int rc = 0;
  for (int i = 0; i < o->connections && rc == 0; i++) {
    struct epoll_event ev = {EPOLLIN, {.ptr = &conns[i]}};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, conns[i].fd, &ev) != 0) rc = ANIM_EIO;
  }
  for (int i = 0; i < o->connections && rc == 0; i++)
    if (!(rc = top_up(&conns[i], now, end)) && !(rc = raw_flush(&conns[i]))) rc = watch_output(ep, &conns[i]);
  struct epoll_event events[64];
  while (rc == 0) {
    now = now_ns();
    if (now >= end && s->answered >= s->sent) break;
    if (now > end + 10ull * 1000000000u) break; /* answers that never come */
    int n = epoll_wait(ep, events, 64, 100);
    for (int e = 0; e < n && rc == 0; e++) {
      load_conn_t *c = events[e].data.ptr;
      if (events[e].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) {
        c->arrived_ns = 0;
        rc = raw_process(c);
        if (!rc) rc = top_up(c, c->arrived_ns ? c->arrived_ns : now_ns(), end);
      }
      if (!rc) rc = raw_flush(c);
      if (!rc) rc = watch_output(ep, c);
    }
  }
  close(ep);
  return rc;
}

static void report(const options_t *g, const load_options_t *o, load_state_t *s, double elapsed_s) {
  size_t answered = (size_t)s->answered;
  double rps = (double)answered / elapsed_s;
  double p50 = percentile_us(s, 50), p99 = percentile_us(s, 99), p999 = percentile_us(s, 99.9),
         max = (double)s->max_ns / 1000.0;
  if (g->json) {
    printf("{\"connections\":%d,\"pipeline\":%d,\"rate\":%g,\"mix\":{\"ping\":%d,\"search\":%d},\"duration_s\":%.3f,"
           "\"requests\":%zu,\"errors\":%llu,\"requests_per_s\":%.1f,\"p50_us\":%.1f,\"p99_us\":%.1f,"
           "\"p999_us\":%.1f,\"max_us\":%.1f,\"latency_from\":\"%s\"}\n",
           o->connections, o->pipeline, o->rate, o->weight_ping, o->weight_search, elapsed_s, answered,
           (unsigned long long)s->errors, rps, p50, p99, p999, max, o->rate > 0 ? "intended" : "sent");
  } else {
    printf("%d connections (%s), pipeline %d, %s, mix ping=%d search=%d\n", o->connections,
           o->library ? "client library" : "raw frames", o->pipeline,
           o->rate > 0 ? "fixed rate (latency from intended start)" : "closed loop (latency from send)",
           o->weight_ping, o->weight_search);
    printf("requests %zu in %.2f s: %.0f req/s, errors %llu\n", answered, elapsed_s, rps,
           (unsigned long long)s->errors);
    printf("latency us: p50 %.1f  p99 %.1f  p99.9 %.1f  max %.1f\n", p50, p99, p999, max);
  }
}

int animctl_load(const options_t *g, int argc, char **argv) {
  load_options_t o = {50, 1, 5.0, 0.0, 1, 0, "default", 1, 0, 0};
  if (parse_load_options(argc, argv, &o)) {
    return animctl_fail("load [--connections N] [--pipeline P] [--duration S] [--rate R] "
                    "[--mix ping=W,search=W] [--database NAME] [--k K] [--pose] [--library]");
  }
  anim_client_t *first;
  int rc = animctl_connect(g, &first);
  if (rc) return rc;
  load_state_t *s = calloc(1, sizeof *s); /* the histogram: too big for the stack */
  if (!s) return report_error("load", ANIM_ENOMEM, first);
  s->o = &o, s->nframes = 1, s->seed = 12345u;
  if (o.weight_search > 0) {
    anim_db_description_t *d;
    rc = anim_client_db_describe(first, o.database, &d, g->timeout_ms);
    if (rc) {
      free(s);
      return report_error("load: describe", rc, first);
    }
    s->nframes = d->summary.frames > 0 ? (int)d->summary.frames : 1;
    anim_db_description_free(d);
  }
  if (!o.library) rc = pack_templates(s);
  load_conn_t *conns = rc ? NULL : calloc((size_t)o.connections, sizeof *conns);
  if (!rc && !conns) rc = ANIM_ENOMEM;
  for (int i = 0; rc == 0 && i < o.connections; i++) {
    anim_client_options_t copts = {.timeout_ms = g->timeout_ms, .auth_token = g->auth_token};
    int token = g->auth_token && *g->auth_token;
    conns[i].state = s;
    conns[i].next_id = 1;
    conns[i].fd = -1;
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
  if (rc == 0) rc = o.library || o.rate > 0 ? run_load(g, &o, s, conns) : run_raw(&o, s, conns);
  double elapsed = (double)(now_ns() - t0) / 1e9;
  if (rc == 0) report(g, &o, s, elapsed);
  else report_error("load", rc, first);
  for (int i = 0; conns && i < o.connections; i++) {
    if (o.library && i > 0) anim_client_close(conns[i].client);
    if (!o.library && conns[i].fd >= 0) close(conns[i].fd);
    anim_frame_reader_free(&conns[i].reader);
    free(conns[i].out);
  }
  free(conns);
  free(s->packed);
  free(s);
  return rc ? 1 : 0;
}
