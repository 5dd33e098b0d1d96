/* raw_client.c: the protocol over a raw socket with protobuf-c (see raw_client.h). */
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "frame.h"
#include "raw_client.h"

int anim_test_raw_open(anim_test_raw_t *c, const anim_test_server_t *server) {
  memset(c, 0, sizeof *c);
  c->fd = anim_test_server_raw_connect(server);
  c->next_id = 1;
  return c->fd >= 0 ? 0 : -1;
}

void anim_test_raw_close(anim_test_raw_t *c) {
  if (c->fd >= 0) close(c->fd);
  free(c->buffer);
  memset(c, 0, sizeof *c);
  c->fd = -1;
}

size_t anim_test_raw_append(uint8_t *buf, size_t at, const Animserver__Request *request) {
  at += anim_varint_encode(animserver__request__get_packed_size(request), buf + at);
  return at + animserver__request__pack(request, buf + at);
}

size_t anim_test_raw_append_search(uint8_t *buf, size_t at, uint64_t id, const char *database, uint32_t frame,
                                   uint32_t k) {
  Animserver__Request r = ANIMSERVER__REQUEST__INIT;
  Animserver__SearchRequest sr = ANIMSERVER__SEARCH_REQUEST__INIT;
  Animserver__SearchQuery q = ANIMSERVER__SEARCH_QUERY__INIT;
  Animserver__FrameIndex from = ANIMSERVER__FRAME_INDEX__INIT;
  from.frame = frame;
  q.from_frame = &from;
  q.k = k;
  sr.database = (char *)database;
  sr.query = &q;
  r.id = id;
  r.body_case = ANIMSERVER__REQUEST__BODY_SEARCH;
  r.search = &sr;
  return anim_test_raw_append(buf, at, &r);
}

int anim_test_raw_send(anim_test_raw_t *c, Animserver__Request *request) {
  if (request->id == 0) request->id = c->next_id++;
  uint8_t *frame = malloc(animserver__request__get_packed_size(request) + ANIM_VARINT_MAX);
  if (!frame) return -1;
  size_t len = anim_test_raw_append(frame, 0, request), sent = 0;
  while (sent < len) {
    ssize_t w = send(c->fd, frame + sent, len - sent, MSG_NOSIGNAL);
    if (w <= 0) break;
    sent += (size_t)w;
  }
  free(frame);
  return sent == len ? 0 : -1;
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

Animserver__ServerMessage *anim_test_raw_next(anim_test_raw_t *c, int timeout_ms) {
  double deadline = now_ms() + timeout_ms;
  for (;;) {
    uint64_t len;
    int n = anim_varint_decode(c->buffer, c->have, &len);
    if (n > 0 && c->have >= (size_t)n + len) {
      Animserver__ServerMessage *m = animserver__server_message__unpack(NULL, (size_t)len, c->buffer + n);
      memmove(c->buffer, c->buffer + n + len, c->have - (size_t)n - len);
      c->have -= (size_t)n + len;
      return m;
    }
    if (n < 0) return NULL;
    if (c->capacity - c->have < 65536) {
      size_t capacity = c->capacity ? 2 * c->capacity : 1 << 20;
      uint8_t *grown = realloc(c->buffer, capacity);
      if (!grown) return NULL;
      c->buffer = grown, c->capacity = capacity;
    }
    int left = (int)(deadline - now_ms());
    struct pollfd p = {c->fd, POLLIN, 0};
    if (left <= 0 || poll(&p, 1, left) <= 0) return NULL;
    ssize_t got = recv(c->fd, c->buffer + c->have, c->capacity - c->have, 0);
    if (got <= 0) return NULL;
    c->have += (size_t)got;
  }
}

Animserver__Response *anim_test_raw_call(anim_test_raw_t *c, Animserver__Request *request, int timeout_ms) {
  if (anim_test_raw_send(c, request) != 0) return NULL;
  double deadline = now_ms() + timeout_ms;
  for (;;) {
    int left = (int)(deadline - now_ms());
    Animserver__ServerMessage *m = left > 0 ? anim_test_raw_next(c, left) : NULL;
    if (!m) return NULL;
    if (m->kind_case == ANIMSERVER__SERVER_MESSAGE__KIND_RESPONSE && m->response->id == request->id) {
      Animserver__Response *r = m->response;
      m->response = NULL;
      animserver__server_message__free_unpacked(m, NULL);
      return r;
    }
    if (m->kind_case == ANIMSERVER__SERVER_MESSAGE__KIND_STREAM && c->on_stream) c->on_stream(m->stream, c->user);
    animserver__server_message__free_unpacked(m, NULL);
  }
}
