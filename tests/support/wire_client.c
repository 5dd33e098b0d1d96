/* wire_client.c: raw protobuf requests and answers for tests (see wire_client.h). */
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>
#include "anim_error.h"
#include "frame.h"
#include "wire_client.h"

void anim_wire_open(anim_wire_t *w, const anim_test_server_t *server) {
  memset(w, 0, sizeof *w);
  w->fd = anim_test_server_raw_connect(server);
  if (w->fd < 0) fail_msg("cannot connect to the test server");
  w->capacity = 1 << 16;
  w->buffer = malloc(w->capacity);
  w->next_id = 1;
}

void anim_wire_close(anim_wire_t *w) {
  if (w->fd >= 0) close(w->fd);
  free(w->buffer);
  memset(w, 0, sizeof *w);
  w->fd = -1;
}

uint64_t anim_wire_send(anim_wire_t *w, Animserver__Request *request) {
  request->id = w->next_id++;
  size_t size = animserver__request__get_packed_size(request);
  uint8_t *frame = malloc(size + ANIM_VARINT_MAX);
  size_t n = anim_varint_encode(size, frame);
  animserver__request__pack(request, frame + n);
  for (size_t sent = 0; sent < n + size;) {
    ssize_t k = send(w->fd, frame + sent, n + size - sent, MSG_NOSIGNAL);
    if (k <= 0) fail_msg("send failed: the server closed the connection?");
    sent += (size_t)k;
  }
  free(frame);
  return request->id;
}

Animserver__ServerMessage *anim_wire_next(anim_wire_t *w, int timeout_ms) {
  for (;;) {
    uint64_t len;
    int n = anim_varint_decode(w->buffer, w->have, &len);
    if (n > 0 && w->have >= (size_t)n + len) {
      Animserver__ServerMessage *m = animserver__server_message__unpack(NULL, (size_t)len, w->buffer + n);
      if (!m) fail_msg("a frame that is not a ServerMessage");
      memmove(w->buffer, w->buffer + n + len, w->have - (size_t)n - len);
      w->have -= (size_t)n + len;
      return m;
    }
    if (n > 0 && (size_t)n + len > w->capacity) {
      w->capacity = (size_t)n + len;
      w->buffer = realloc(w->buffer, w->capacity);
    } else if (w->have == w->capacity) {
      w->capacity *= 2;
      w->buffer = realloc(w->buffer, w->capacity);
    }
    struct pollfd p = {w->fd, POLLIN, 0};
    if (poll(&p, 1, timeout_ms) <= 0) fail_msg("no message from the server within %d ms", timeout_ms);
    ssize_t got = recv(w->fd, w->buffer + w->have, w->capacity - w->have, 0);
    if (got <= 0) fail_msg("the server closed the connection");
    w->have += (size_t)got;
  }
}

void anim_wire_free(Animserver__ServerMessage *m) {
  if (m) animserver__server_message__free_unpacked(m, NULL);
}

Animserver__ServerMessage *anim_wire_call(anim_wire_t *w, Animserver__Request *request, int timeout_ms) {
  uint64_t id = anim_wire_send(w, request);
  for (;;) {
    Animserver__ServerMessage *m = anim_wire_next(w, timeout_ms);
    if (m->kind_case == ANIMSERVER__SERVER_MESSAGE__KIND_RESPONSE && m->response->id == id) return m;
    anim_wire_free(m);
  }
}

Animserver__ServerMessage *anim_wire_ok(anim_wire_t *w, Animserver__Request *request, int timeout_ms) {
  Animserver__ServerMessage *m = anim_wire_call(w, request, timeout_ms);
  if (m->response->error)
    fail_msg("request %d failed: %s \"%s\"", (int)request->body_case, anim_err_name(-(int)m->response->error->code),
             m->response->error->message);
  return m;
}

void anim_wire_expect_error(anim_wire_t *w, Animserver__Request *request, int code, const char *contains) {
  Animserver__ServerMessage *m = anim_wire_call(w, request, 10000);
  const Animserver__Error *e = m->response->error;
  if (!e) fail_msg("expected %s \"...%s...\", got an answer", anim_err_name(code), contains);
  if (-(int)e->code != code || !strstr(e->message, contains))
    fail_msg("expected %s \"...%s...\"\n          got %s \"%s\"", anim_err_name(code), contains, anim_err_name(-(int)e->code),
             e->message);
  anim_wire_free(m);
}
