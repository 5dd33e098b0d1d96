/*
 * client.c: the client's connection (see include/anim_client_session.h).
 *
 * One non-blocking socket (net.c), an output buffer flushed as the socket
 * allows, the reader (reader.c) fed from the socket, and the table of
 * pending requests (pending.c) that answers are matched against. Every
 * request goes out through anim__client_send with its typed completion; a
 * blocking call is that send plus anim__client_wait for its id, which
 * drives this file's poll/process loop until the completion has run.
 *
 * Not here: what any request means or returns (api_<area>.c and
 * convert*.c), stream messages (api_stream.c registers their handler),
 * bringing a lost connection back (reconnect.c; this file only tears one
 * down and takes a new one), anim_client_connect itself (api_session.c:
 * it opens the client here, then registers what a new connection says
 * first).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "client_internal.h"
#include "convert.h"
#include "frame.h"

#define DEFAULT_CONNECT_TIMEOUT_MS 5000
#define DEFAULT_MAX_FRAME (64u << 20)
#define READ_CHUNK 65536
/* Reads per anim_client_process: a server streaming faster than the
 * callbacks run still lets the caller's loop come back. */
#define READS_PER_PROCESS 16

uint64_t anim__monotonic_us(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (uint64_t)now.tv_sec * 1000000u + (uint64_t)now.tv_nsec / 1000u;
}

int anim__client_set_error(anim_client_t *client, int code, const char *message) {
  snprintf(client->last_error, sizeof client->last_error, "%s", message);
  return code;
}

int anim__client_refuse(anim_client_t *client, int code, const char *function) {
  if (!client) return code;
  if (code == ANIM_ENOMEM) snprintf(client->last_error, sizeof client->last_error, "%s: out of memory", function);
  else
    snprintf(client->last_error, sizeof client->last_error,
             "%s: %s: refused before sending (a NULL pointer, or a count or value out of the range its header gives)",
             function, anim_strerror(code));
  return code;
}

int anim__client_check_answer(anim_client_t *client, int rc) {
  if (rc == ANIM_ENOMEM) return anim__client_set_error(client, rc, "out of memory");
  if (rc) return anim__client_set_error(client, rc, "malformed answer from the server");
  return 0;
}

const char *anim_client_last_error(const anim_client_t *client) { return client->last_error; }
int anim_client_fd(const anim_client_t *client) { return client->fd; }
int anim_client_wants_write(const anim_client_t *client) {
  /* A reconnection's connect in progress completes as POLLOUT. */
  return client->out_pos < client->out_len || client->reconnect.state == ANIM__CONN_CONNECTING;
}
int anim_client_pending(const anim_client_t *client) { return client->pending.count; }

/* ---- answers -------------------------------------------------------------------------- */

/* The reader's response handler: the pending entry for the id, out of the
 * table before its completion runs (which may dispatch more answers). */
static void on_response(void *ctx, const Animserver__Response *r, size_t wire_bytes) {
  anim_client_t *client = ctx;
  anim__pending_t *p = anim__pending_take(&client->pending, r->id);
  if (!p) {
    /* An error about a frame the server could not attribute (id 0), kept
     * as the reason should it close the connection next. */
    if (r->error) {
      client->server_error = anim__error_code(r->error);
      anim__client_set_error(client, client->server_error, r->error->message ? r->error->message : "");
    }
    return; /* or the answer to a request given up (timed out) */
  }
  int status = 0;
  if (r->error) {
    status = anim__client_set_error(client, anim__error_code(r->error), r->error->message ? r->error->message : "");
  } else if (r->body_case != p->expect) {
    status = anim__client_set_error(client, ANIM_EPROTO, "the server answered with another response type");
  } else if (!client->reconnect.proven) {
    anim__reconnect_answered(client);
  }
  p->complete(client, p, status, status ? NULL : r);
  anim__pending_free(p);
}

static void fail_all_pending(anim_client_t *client, int status) {
  /* Callbacks may send: refused, since the connection is broken by now. */
  anim__pending_t *p;
  while ((p = anim__pending_pop(&client->pending))) {
    p->complete(client, p, status, NULL);
    anim__pending_free(p);
  }
}

void anim__client_complete_status(anim_client_t *client, anim__pending_t *p, int status, uint64_t value) {
  if (anim__pending_deliver(p, status, &value, sizeof value)) return;
  anim_status_cb cb = (anim_status_cb)p->cb;
  if (cb) cb(client, p->id, status, p->data);
}

void anim__client_status_complete(anim_client_t *client, anim__pending_t *p, int status,
                                  const Animserver__Response *r) {
  anim__client_complete_status(client, p, status, 0);
}

/* ---- connecting and closing ------------------------------------------------------------- */

anim_client_t *anim__client_open(const char *host, int port, const anim_client_options_t *options, int *out_err) {
  int dummy;
  if (!out_err) out_err = &dummy;
  if (!host || port <= 0 || port > 65535) {
    *out_err = ANIM_EINVAL;
    return NULL;
  }
  int timeout_ms = options && options->timeout_ms > 0 ? options->timeout_ms : DEFAULT_CONNECT_TIMEOUT_MS;
  uint32_t max_frame = options && options->max_frame_bytes ? options->max_frame_bytes : DEFAULT_MAX_FRAME;
  /* Every address the name gives is kept: reconnection tries them all. */
  anim__address_t *addresses;
  int naddresses, fd = -1;
  int rc = anim__net_resolve(host, port, &addresses, &naddresses);
  if (rc == 0) rc = anim__net_connect(addresses, naddresses, timeout_ms, &fd);
  anim_client_t *client = rc == 0 ? calloc(1, sizeof *client) : NULL;
  if (rc == 0 && !client) rc = ANIM_ENOMEM;
  if (rc) {
    if (fd >= 0) close(fd);
    free(addresses);
    *out_err = rc;
    return NULL;
  }
  client->fd = fd;
  client->next_id = 1;
  client->addresses = addresses;
  client->naddresses = naddresses;
  if (options && options->auth_token)
    snprintf(client->auth_token, sizeof client->auth_token, "%s", options->auth_token);
  anim__reader_init(&client->reader, max_frame);
  client->handlers.response = on_response;
  client->handlers.response_ctx = client;
  anim__reconnect_init(client, options);
  *out_err = 0;
  return client;
}

void anim__client_on_stream(anim_client_t *client, anim__stream_fn fn, void *ctx, anim__stream_drop_fn drop) {
  client->handlers.stream = fn;
  client->handlers.stream_ctx = ctx;
  client->stream_drop = drop;
}

static void drop_streams(anim_client_t *client) {
  anim__stream_drop_fn drop = client->stream_drop;
  void *ctx = client->handlers.stream_ctx;
  anim__client_on_stream(client, NULL, NULL, NULL);
  if (drop) drop(client, ctx);
}

void anim_client_close(anim_client_t *client) {
  if (!client) return;
  anim__client_set_error(client, ANIM_ECLOSED, "client closed");
  if (!client->broken) client->broken = ANIM_ECLOSED; /* callbacks below may try to send */
  fail_all_pending(client, ANIM_ECLOSED);
  drop_streams(client);
  if (client->fd >= 0) close(client->fd);
  anim__reader_free(&client->reader);
  free(client->addresses);
  free(client->out);
  free(client);
}

void anim__client_drop_connection(anim_client_t *client, int status) {
  /* Refuse new requests first: callbacks below may try to send. */
  if (!client->broken) client->broken = status;
  if (client->fd >= 0) close(client->fd);
  client->fd = -1;
  client->out_pos = client->out_len = 0;
  anim__reader_reset(&client->reader);
  fail_all_pending(client, status);
  drop_streams(client);
}

void anim__client_attach(anim_client_t *client, int fd) {
  client->fd = fd;
  client->broken = 0;
  client->server_error = 0;
}

/* ---- output ------------------------------------------------------------------------------- */

static int flush_output(anim_client_t *client) {
  if (client->out_pos == client->out_len) return 0;
  size_t sent = 0;
  int rc = anim__net_send(client->fd, client->out + client->out_pos, client->out_len - client->out_pos, &sent);
  client->out_pos += sent;
  if (rc) {
    client->broken = rc;
    return anim__client_set_error(client, rc, "cannot write to the server");
  }
  if (client->out_pos == client->out_len) client->out_pos = client->out_len = 0;
  return 0;
}

static int reserve_output(anim_client_t *client, size_t extra) {
  if (client->out_len + extra <= client->out_cap) return 0;
  size_t cap = client->out_cap ? client->out_cap : 4096;
  while (cap < client->out_len + extra) cap *= 2;
  uint8_t *grown = realloc(client->out, cap);
  if (!grown) return ANIM_ENOMEM;
  client->out = grown;
  client->out_cap = cap;
  return 0;
}

int anim__client_send_with(anim_client_t *client, Animserver__Request *request, Animserver__Response__BodyCase expect,
                           anim__complete_fn complete, anim__cb_fn cb, void *data, void *extra, uint64_t *out_id) {
  if (client->broken) {
    free(extra);
    return anim__client_set_error(client, client->broken, "connection is no longer usable");
  }
  anim__pending_t *p = anim__pending_new(expect, complete, cb, data, extra);
  request->id = client->next_id; /* sized with its id */
  size_t size = animserver__request__get_packed_size(request);
  if (!p || reserve_output(client, size + ANIM_VARINT_MAX) != 0) {
    if (p) anim__pending_free(p);
    else free(extra);
    return anim__client_set_error(client, ANIM_ENOMEM, "out of memory");
  }
  client->next_id++;
  client->out_len += anim_varint_encode(size, client->out + client->out_len);
  animserver__request__pack(request, client->out + client->out_len);
  client->out_len += size;
  p->id = request->id;
  p->sent_us = anim__monotonic_us();
  anim__pending_add(&client->pending, p);
  if (out_id) *out_id = p->id;
  /* A write error shows at the next process: the request then fails like
   * every pending one, through its completion. */
  flush_output(client);
  return 0;
}

int anim__client_send(anim_client_t *client, Animserver__Request *request, Animserver__Response__BodyCase expect,
                      anim__complete_fn complete, anim__cb_fn cb, void *data, uint64_t *out_id) {
  return anim__client_send_with(client, request, expect, complete, cb, data, NULL, out_id);
}

/* ---- input ---------------------------------------------------------------------------------- */

/* Hands out every complete message buffered, one at a time: a handler may
 * read and dispatch again (a blocking call in a callback); this loop then
 * goes on with whatever that left. */
static int dispatch_all(anim_client_t *client) {
  for (;;) {
    /* With reconnection, messages of a connection a callback saw break are
     * not delivered: the connection is torn down next. */
    if (client->broken && client->reconnect.enabled) return client->broken;
    client->dispatching++;
    int rc = anim__reader_dispatch(&client->reader, &client->handlers);
    client->dispatching--;
    if (rc == 0) return 0;
    if (rc < 0) {
      client->broken = rc;
      return anim__client_set_error(client, rc, rc == ANIM_ETOOBIG ? "server frame over max_frame_bytes"
                                                 : rc == ANIM_ENOMEM ? "out of memory"
                                                                     : "malformed frame");
    }
  }
}

static int read_input(anim_client_t *client) {
  for (int reads = 0; reads < READS_PER_PROCESS; reads++) {
    uint8_t *space;
    size_t room;
    if (anim__reader_space(&client->reader, READ_CHUNK, &space, &room) != 0) {
      client->broken = ANIM_ENOMEM;
      return anim__client_set_error(client, ANIM_ENOMEM, "out of memory");
    }
    long n = anim__net_recv(client->fd, space, room);
    if (n == 0) return 0;
    if (n < 0) {
      /* Keep the server's own reason when it gave one before closing. */
      client->broken = client->server_error ? client->server_error : ANIM_ECLOSED;
      if (!client->server_error) anim__client_set_error(client, ANIM_ECLOSED, "server closed the connection");
      return client->broken;
    }
    anim__reader_commit(&client->reader, (size_t)n);
    int rc = dispatch_all(client);
    if (rc) return rc;
  }
  return 0;
}

int anim_client_process(anim_client_t *client) {
  if (client->reconnect.enabled) {
    int rc = anim__reconnect_drive(client);
    if (rc) return rc;
  }
  if (client->broken) return client->broken;
  int rc = flush_output(client);
  if (rc == 0) rc = read_input(client);
  if (rc != 0) {
    fail_all_pending(client, rc);
    if (client->reconnect.enabled) anim__reconnect_drive(client); /* LOST now, not at the next call */
  }
  return rc;
}

int anim_client_poll(anim_client_t *client, int timeout_ms) {
  if (client->reconnect.enabled && (client->broken || client->reconnect.state != ANIM__CONN_CONNECTED))
    return anim__reconnect_poll(client, timeout_ms);
  if (client->broken) return client->broken;
  int n = anim__net_wait(client->fd, anim_client_wants_write(client), timeout_ms);
  if (n < 0) return anim__client_set_error(client, n, "poll failed");
  if (n == 0) return ANIM_ETIMEDOUT;
  return anim_client_process(client);
}

/* ---- blocking calls: send, then wait for that id ---------------------------------------------- */

int anim__client_ready(anim_client_t *client, int *timeout_ms) {
  return client->reconnect.enabled ? anim__reconnect_await(client, timeout_ms) : 0;
}

int anim__client_wait(anim_client_t *client, int rc, uint64_t id, void *out, size_t out_size, int timeout_ms) {
  if (rc) return rc;
  anim__waiter_t w = {0};
  w.out = out;
  w.out_size = out_size;
  anim__pending_t *p = anim__pending_find(&client->pending, id);
  if (!p) return anim__client_set_error(client, ANIM_EPROTO, "no such request in flight");
  p->waiter = &w;
  uint64_t deadline = anim__monotonic_us() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0) * 1000u;
  while (!w.done) {
    uint64_t now = anim__monotonic_us();
    if (now >= deadline) {
      rc = anim__client_set_error(client, ANIM_ETIMEDOUT, "no response before the timeout");
      break;
    }
    int prc = anim_client_poll(client, (int)((deadline - now + 999) / 1000));
    if (prc != 0 && prc != ANIM_ETIMEDOUT && !w.done) {
      rc = prc;
      break;
    }
  }
  if (w.done) return w.status;
  /* Given up: the entry goes (a late answer is then ignored), and with it
   * the pointer to this stack frame's waiter. */
  anim__pending_free(anim__pending_take(&client->pending, id));
  return rc;
}
