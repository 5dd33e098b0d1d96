/* wire_client.c: raw protobuf requests and answers for tests (see wire_client.h): the
 * raw client's steps, failing the test where it would return an error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>
#include "anim_error.h"
#include "wire_client.h"

void anim_wire_open(anim_wire_t *w, const anim_test_server_t *server) {
  if (anim_test_raw_open(w, server) != 0) fail_msg("cannot connect to the test server");
}

void anim_wire_close(anim_wire_t *w) { anim_test_raw_close(w); }

uint64_t anim_wire_send(anim_wire_t *w, Animserver__Request *request) {
  request->id = 0; /* a fresh id each time the same request is sent again */
  if (anim_test_raw_send(w, request) != 0) fail_msg("send failed: the server closed the connection?");
  return request->id;
}

Animserver__ServerMessage *anim_wire_next(anim_wire_t *w, int timeout_ms) {
  Animserver__ServerMessage *m = anim_test_raw_next(w, timeout_ms);
  if (!m) fail_msg("no message from the server within %d ms (or the connection closed, or a bad frame)", timeout_ms);
  return m;
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
    fail_msg("expected %s \"...%s...\"\n          got %s \"%s\"", anim_err_name(code), contains,
             anim_err_name(-(int)e->code), e->message);
  anim_wire_free(m);
}
