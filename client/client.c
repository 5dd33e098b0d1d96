/*
 * client.c: the animserver client library (see include/anim_client.h).
 *
 * One non-blocking socket; an output buffer flushed as the socket allows; the
 * pure frame reader of wire/ for input; a list of pending requests matched
 * by id. Blocking calls are the non-blocking ones plus a poll loop that runs
 * until their own response arrives.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "anim_client.h"
#include "animserver.pb-c.h"
#include "frame.h"

#define DEFAULT_CONNECT_TIMEOUT_MS 5000
#define DEFAULT_MAX_FRAME (64u << 20)

typedef enum { PENDING_HELLO, PENDING_PING } pending_kind_t;

typedef struct pending {
  uint64_t id;
  pending_kind_t kind;
  union {
    anim_hello_cb hello;
    anim_ping_cb ping;
  } cb;
  void *data;
  uint64_t sent_us;
  struct pending *next;
} pending_t;

struct anim_client {
  int fd;
  uint64_t next_id;
  anim_frame_reader_t reader;
  uint8_t *out;
  size_t out_len, out_pos, out_cap;
  pending_t *pending;
  int npending;
  int broken; /* sticky error once the stream is unusable */
  int server_error; /* code of an error the server sent about the stream (id 0) */
  char last_error[256];
};

static uint64_t monotonic_us(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (uint64_t)now.tv_sec * 1000000u + (uint64_t)now.tv_nsec / 1000u;
}

static int set_error(anim_client_t *client, int code, const char *message) {
  snprintf(client->last_error, sizeof client->last_error, "%s", message);
  return code;
}

const char *anim_client_last_error(const anim_client_t *client) { return client->last_error; }
int anim_client_fd(const anim_client_t *client) { return client->fd; }
int anim_client_wants_write(const anim_client_t *client) { return client->out_pos < client->out_len; }
int anim_client_pending(const anim_client_t *client) { return client->npending; }

/* ---- connecting ---------------------------------------------------------------- */

static int wait_connected(int fd, int timeout_ms) {
  struct pollfd p = {fd, POLLOUT, 0};
  int n;
  do n = poll(&p, 1, timeout_ms);
  while (n < 0 && errno == EINTR);
  if (n == 0) return ANIM_ETIMEDOUT;
  int soerr = 0;
  socklen_t len = sizeof soerr;
  if (n < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) < 0 || soerr != 0) return ANIM_ECONNECT;
  return 0;
}

static int connect_one(const struct addrinfo *ai, int timeout_ms, int *out_fd) {
  int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
  if (fd < 0) return ANIM_ECONNECT;
  int rc = 0;
  if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
    rc = errno == EINPROGRESS ? wait_connected(fd, timeout_ms) : ANIM_ECONNECT;
  }
  if (rc != 0) {
    close(fd);
    return rc;
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  *out_fd = fd;
  return 0;
}

anim_client_t *anim_client_connect(const char *host, int port, const anim_client_options_t *options, int *out_err) {
  int dummy;
  if (!out_err) out_err = &dummy;
  if (!host || port <= 0 || port > 65535) {
    *out_err = ANIM_EINVAL;
    return NULL;
  }
  int timeout_ms = options && options->timeout_ms > 0 ? options->timeout_ms : DEFAULT_CONNECT_TIMEOUT_MS;
  uint32_t max_frame = options && options->max_frame_bytes ? options->max_frame_bytes : DEFAULT_MAX_FRAME;
  char service[16];
  snprintf(service, sizeof service, "%d", port);
  struct addrinfo hints = {0}, *list = NULL;
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  if (getaddrinfo(host, service, &hints, &list) != 0) {
    *out_err = ANIM_ECONNECT;
    return NULL;
  }
  int fd = -1, rc = ANIM_ECONNECT;
  for (struct addrinfo *ai = list; ai && fd < 0; ai = ai->ai_next) rc = connect_one(ai, timeout_ms, &fd);
  freeaddrinfo(list);
  if (fd < 0) {
    *out_err = rc;
    return NULL;
  }
  anim_client_t *client = calloc(1, sizeof *client);
  if (!client) {
    close(fd);
    *out_err = ANIM_ENOMEM;
    return NULL;
  }
  client->fd = fd;
  client->next_id = 1;
  anim_frame_reader_init(&client->reader, max_frame);
  *out_err = 0;
  return client;
}

/* ---- pending requests -------------------------------------------------------------- */

static pending_t *pending_take(anim_client_t *client, uint64_t id) {
  for (pending_t **p = &client->pending; *p; p = &(*p)->next) {
    if ((*p)->id == id) {
      pending_t *found = *p;
      *p = found->next;
      client->npending--;
      return found;
    }
  }
  return NULL;
}

/* Calls the callback of p with a failure status and no result. */
static void pending_fail(anim_client_t *client, pending_t *p, int status) {
  switch (p->kind) {
  case PENDING_HELLO: if (p->cb.hello) p->cb.hello(client, p->id, status, NULL, p->data); break;
  case PENDING_PING: if (p->cb.ping) p->cb.ping(client, p->id, status, NULL, p->data); break;
  }
}

static void fail_all_pending(anim_client_t *client, int status) {
  while (client->pending) {
    pending_t *p = client->pending;
    client->pending = p->next;
    client->npending--;
    pending_fail(client, p, status);
    free(p);
  }
}

void anim_client_close(anim_client_t *client) {
  if (!client) return;
  set_error(client, ANIM_ECLOSED, "client closed");
  fail_all_pending(client, ANIM_ECLOSED);
  close(client->fd);
  anim_frame_reader_free(&client->reader);
  free(client->out);
  free(client);
}

/* ---- output -------------------------------------------------------------------------- */

static int flush_output(anim_client_t *client) {
  while (client->out_pos < client->out_len) {
    ssize_t n = send(client->fd, client->out + client->out_pos, client->out_len - client->out_pos, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
      client->broken = ANIM_ECLOSED;
      return set_error(client, ANIM_ECLOSED, strerror(errno));
    }
    client->out_pos += (size_t)n;
  }
  client->out_pos = client->out_len = 0;
  return 0;
}

static int reserve_output(anim_client_t *client, size_t extra) {
  if (client->out_pos > 0 && client->out_pos == client->out_len) client->out_pos = client->out_len = 0;
  if (client->out_len + extra <= client->out_cap) return 0;
  size_t cap = client->out_cap ? client->out_cap : 4096;
  while (cap < client->out_len + extra) cap *= 2;
  uint8_t *grown = realloc(client->out, cap);
  if (!grown) return ANIM_ENOMEM;
  client->out = grown;
  client->out_cap = cap;
  return 0;
}

/* Frames and queues request, registers its pending entry, tries to flush. */
static int send_request(anim_client_t *client, Animserver__Request *request, pending_t *p, uint64_t *out_id) {
  if (client->broken) {
    free(p);
    return set_error(client, client->broken, "connection is no longer usable");
  }
  request->id = client->next_id++;
  size_t size = animserver__request__get_packed_size(request);
  if (reserve_output(client, size + ANIM_VARINT_MAX) != 0) {
    free(p);
    return set_error(client, ANIM_ENOMEM, "out of memory");
  }
  client->out_len += anim_varint_encode(size, client->out + client->out_len);
  animserver__request__pack(request, client->out + client->out_len);
  client->out_len += size;
  p->id = request->id;
  p->sent_us = monotonic_us();
  p->next = client->pending;
  client->pending = p;
  client->npending++;
  if (out_id) *out_id = p->id;
  flush_output(client);
  return 0;
}

static pending_t *pending_new(pending_kind_t kind, void *data) {
  pending_t *p = calloc(1, sizeof *p);
  if (p) {
    p->kind = kind;
    p->data = data;
  }
  return p;
}

int anim_client_hello_send(anim_client_t *client, const char *client_name, anim_hello_cb cb, void *data,
                           uint64_t *out_id) {
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__HelloRequest hello = ANIMSERVER__HELLO_REQUEST__INIT;
  hello.protocol_version = 1;
  hello.client_name = (char *)(client_name ? client_name : "");
  request.body_case = ANIMSERVER__REQUEST__BODY_HELLO;
  request.hello = &hello;
  pending_t *p = pending_new(PENDING_HELLO, data);
  if (!p) return ANIM_ENOMEM;
  p->cb.hello = cb;
  return send_request(client, &request, p, out_id);
}

int anim_client_ping_send(anim_client_t *client, const void *payload, size_t len, anim_ping_cb cb, void *data,
                          uint64_t *out_id) {
  if (len > 0 && !payload) return ANIM_EINVAL;
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__PingRequest ping = ANIMSERVER__PING_REQUEST__INIT;
  ping.payload.data = (uint8_t *)payload;
  ping.payload.len = len;
  request.body_case = ANIMSERVER__REQUEST__BODY_PING;
  request.ping = &ping;
  pending_t *p = pending_new(PENDING_PING, data);
  if (!p) return ANIM_ENOMEM;
  p->cb.ping = cb;
  return send_request(client, &request, p, out_id);
}

/* ---- input ------------------------------------------------------------------------------ */

static void copy_string(char *out, size_t size, const char *in) { snprintf(out, size, "%s", in ? in : ""); }

static void complete_hello(anim_client_t *client, pending_t *p, const Animserver__Response *r) {
  if (r->body_case != ANIMSERVER__RESPONSE__BODY_HELLO) {
    set_error(client, ANIM_EPROTO, "hello answered with another response type");
    pending_fail(client, p, ANIM_EPROTO);
    return;
  }
  const Animserver__HelloResponse *h = r->hello;
  anim_hello_info_t info;
  memset(&info, 0, sizeof info);
  info.protocol_version = h->protocol_version;
  copy_string(info.server_version, sizeof info.server_version, h->server_version);
  for (size_t i = 0; i < h->n_capabilities && info.ncapabilities < 16; i++)
    copy_string(info.capabilities[info.ncapabilities++], sizeof info.capabilities[0], h->capabilities[i]);
  if (h->limits) {
    info.max_frame_bytes = h->limits->max_frame_bytes;
    info.max_in_flight = h->limits->max_in_flight;
    info.max_batch = h->limits->max_batch;
    info.max_k = h->limits->max_k;
    info.output_soft_limit = h->limits->output_soft_limit_bytes;
    info.output_hard_limit = h->limits->output_hard_limit_bytes;
  }
  info.connection_id = h->connection_id;
  if (p->cb.hello) p->cb.hello(client, p->id, 0, &info, p->data);
}

static void complete_ping(anim_client_t *client, pending_t *p, const Animserver__Response *r) {
  if (r->body_case != ANIMSERVER__RESPONSE__BODY_PING) {
    set_error(client, ANIM_EPROTO, "ping answered with another response type");
    pending_fail(client, p, ANIM_EPROTO);
    return;
  }
  anim_ping_result_t result = {r->ping->payload.data, r->ping->payload.len, r->ping->server_time_us};
  if (p->cb.ping) p->cb.ping(client, p->id, 0, &result, p->data);
}

static void complete(anim_client_t *client, const Animserver__Response *r) {
  pending_t *p = pending_take(client, r->id);
  if (!p) {
    /* An error about a frame the server could not attribute (id 0). */
    if (r->error) {
      client->server_error = -(int)r->error->code;
      set_error(client, client->server_error, r->error->message ? r->error->message : "");
    }
    return;
  }
  if (r->error) {
    int code = -(int)r->error->code;
    set_error(client, code < 0 ? code : ANIM_EPROTO, r->error->message ? r->error->message : "");
    pending_fail(client, p, code < 0 ? code : ANIM_EPROTO);
  } else if (p->kind == PENDING_HELLO) {
    complete_hello(client, p, r);
  } else {
    complete_ping(client, p, r);
  }
  free(p);
}

static int on_frame(void *ctx, const uint8_t *frame, size_t len) {
  anim_client_t *client = ctx;
  Animserver__ServerMessage *message = animserver__server_message__unpack(NULL, len, frame);
  if (!message) return set_error(client, ANIM_EPROTO, "server sent a frame that is not a ServerMessage");
  if (message->kind_case == ANIMSERVER__SERVER_MESSAGE__KIND_RESPONSE && message->response)
    complete(client, message->response);
  animserver__server_message__free_unpacked(message, NULL);
  return 0;
}

static int read_input(anim_client_t *client) {
  uint8_t buffer[16384];
  for (;;) {
    ssize_t n = recv(client->fd, buffer, sizeof buffer, 0);
    if (n > 0) {
      int rc = anim_frame_reader_feed(&client->reader, buffer, (size_t)n, on_frame, client);
      if (rc != 0) {
        client->broken = rc;
        return set_error(client, rc, rc == ANIM_ETOOBIG ? "server frame over max_frame_bytes" : "malformed frame");
      }
      continue;
    }
    if (n == 0) {
      /* Keep the server's own reason when it gave one before closing. */
      client->broken = client->server_error ? client->server_error : ANIM_ECLOSED;
      if (!client->server_error) set_error(client, ANIM_ECLOSED, "server closed the connection");
      return client->broken;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
    client->broken = ANIM_ECLOSED;
    return set_error(client, ANIM_ECLOSED, strerror(errno));
  }
}

int anim_client_process(anim_client_t *client) {
  if (client->broken) return client->broken;
  int rc = flush_output(client);
  if (rc == 0) rc = read_input(client);
  if (rc != 0) fail_all_pending(client, rc);
  return rc;
}

int anim_client_poll(anim_client_t *client, int timeout_ms) {
  if (client->broken) return client->broken;
  struct pollfd p = {client->fd, (short)(POLLIN | (anim_client_wants_write(client) ? POLLOUT : 0)), 0};
  int n = poll(&p, 1, timeout_ms);
  if (n < 0) return errno == EINTR ? 0 : set_error(client, ANIM_EIO, strerror(errno));
  if (n == 0) return ANIM_ETIMEDOUT;
  return anim_client_process(client);
}

/* ---- blocking calls -------------------------------------------------------------- */

typedef struct {
  int done, status;
  anim_hello_info_t *hello;
  uint64_t sent_us, rtt_us;
} waiter_t;

/* Polls until w->done or timeout_ms has passed since the start. */
static int wait_for(anim_client_t *client, waiter_t *w, uint64_t id, int timeout_ms) {
  uint64_t deadline = monotonic_us() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0) * 1000u;
  while (!w->done) {
    uint64_t now = monotonic_us();
    if (now >= deadline) {
      pending_t *p = pending_take(client, id);
      free(p); /* a late response is then ignored */
      return set_error(client, ANIM_ETIMEDOUT, "no response before the timeout");
    }
    int rc = anim_client_poll(client, (int)((deadline - now + 999) / 1000));
    if (rc != 0 && rc != ANIM_ETIMEDOUT && !w->done) return rc;
  }
  return w->status;
}

static void hello_done(anim_client_t *client, uint64_t id, int status, const anim_hello_info_t *info, void *data) {
  waiter_t *w = data;
  w->done = 1;
  w->status = status;
  if (info && w->hello) *w->hello = *info;
}

int anim_client_hello(anim_client_t *client, const char *client_name, anim_hello_info_t *out_info, int timeout_ms) {
  waiter_t w = {0, 0, out_info, 0, 0};
  uint64_t id;
  int rc = anim_client_hello_send(client, client_name, hello_done, &w, &id);
  return rc ? rc : wait_for(client, &w, id, timeout_ms);
}

static void ping_done(anim_client_t *client, uint64_t id, int status, const anim_ping_result_t *result, void *data) {
  waiter_t *w = data;
  w->done = 1;
  w->status = status;
  w->rtt_us = monotonic_us() - w->sent_us;
}

int anim_client_ping(anim_client_t *client, const void *payload, size_t len, uint64_t *out_rtt_us, int timeout_ms) {
  waiter_t w = {0, 0, NULL, monotonic_us(), 0};
  uint64_t id;
  int rc = anim_client_ping_send(client, payload, len, ping_done, &w, &id);
  if (rc == 0) rc = wait_for(client, &w, id, timeout_ms);
  if (rc == 0 && out_rtt_us) *out_rtt_us = w.rtt_us;
  return rc;
}
