/*
 * call.c: the shapes most requests take, shared by the request files
 * (machine.c, graph.c, fit.c): a blocking call that converts its answer
 * into the caller's structs, and a queued request answered by its status.
 * Not here: building requests (each area's file) and the connection
 * (client.c).
 */
#include <stdio.h>
#include <string.h>
#include "anim_error.h"
#include "client_internal.h"

typedef struct {
  int done, status;
  anim__convert_fn convert;
  void *out;
} blocking_t;

static void complete_blocking(anim_client_t *client, pending_t *p, int status, const Animserver__Response *r) {
  blocking_t *b = p->data;
  if (!status && r && b->convert) status = b->convert(client, r, b->out);
  b->status = status;
  b->done = 1;
}

int anim__client_call(anim_client_t *client, Animserver__Request *request, Animserver__Response__BodyCase expect,
                      anim__convert_fn convert, void *out, int timeout_ms) {
  blocking_t b = {0, 0, convert, out};
  uint64_t id;
  int rc = anim__client_await(client, &timeout_ms);
  if (rc == 0) rc = anim__client_send(client, request, expect, complete_blocking, NULL, &b, &id);
  if (rc) return rc;
  rc = anim__client_wait(client, &b.done, id, timeout_ms);
  return rc ? rc : b.status;
}

static void complete_status(anim_client_t *client, pending_t *p, int status, const Animserver__Response *r) {
  (void)r;
  anim_status_cb cb = (anim_status_cb)p->cb;
  if (cb) cb(client, p->id, status, p->data);
}

int anim__client_send_status(anim_client_t *client, Animserver__Request *request,
                             Animserver__Response__BodyCase expect, anim_status_cb cb, void *data, uint64_t *out_id) {
  return anim__client_send(client, request, expect, complete_status, (void (*)(void))cb, data, out_id);
}

void anim__copy_vec3(float *out, const Animserver__Vec3 *v) {
  out[0] = v ? v->x : 0.0f, out[1] = v ? v->y : 0.0f, out[2] = v ? v->z : 0.0f;
}

void anim__copy_quat(float *out, const Animserver__Quat *q) {
  out[0] = q ? q->w : 1.0f, out[1] = q ? q->x : 0.0f, out[2] = q ? q->y : 0.0f, out[3] = q ? q->z : 0.0f;
}

int anim__copy_name(char *out, size_t size, const char *s) {
  size_t n = s ? strlen(s) : 0;
  if (n >= size) return ANIM_EPROTO;
  memcpy(out, s ? s : "", n + 1);
  return 0;
}
