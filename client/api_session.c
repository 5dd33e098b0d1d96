/*
 * api_session.c: hello and ping (see include/anim_client_session.h).
 *
 * Connecting, the handshake, which carries the auth token (also sent again
 * by itself after a reconnection: anim_client_connect registers it with
 * reconnect.c, which calls it back), and the round trip. Each request is a
 * _send with its typed completion; the blocking form is that send plus a
 * wait for its id. The connection itself (opening it, process, poll,
 * close) is client.c's, bringing it back reconnect.c's.
 */
#include <string.h>
#include "client_internal.h"
#include "convert.h"

/* ---- hello -------------------------------------------------------------------------------- */

static void hello_complete(anim_client_t *client, anim__pending_t *p, int status, const Animserver__Response *r) {
  anim_hello_info_t info;
  memset(&info, 0, sizeof info);
  if (status == 0) status = anim__client_check_answer(client, anim__hello_info_from(r->hello, &info));
  if (anim__pending_deliver(p, status, &info, sizeof info)) return;
  anim_hello_cb cb = (anim_hello_cb)p->cb;
  if (cb) cb(client, p->id, status, status ? NULL : &info, p->data);
}

int anim_client_hello_send(anim_client_t *client, const char *client_name, anim_hello_cb cb, void *data,
                           uint64_t *out_id) {
  if (!client) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__HelloRequest hello = ANIMSERVER__HELLO_REQUEST__INIT;
  hello.protocol_version = ANIM_PROTOCOL_VERSION;
  hello.client_name = (char *)(client_name ? client_name : "");
  hello.auth_token = client->auth_token;
  request.body_case = ANIMSERVER__REQUEST__BODY_HELLO;
  request.hello = &hello;
  return anim__client_send(client, &request, ANIMSERVER__RESPONSE__BODY_HELLO, hello_complete, (anim__cb_fn)cb, data,
                           out_id);
}

int anim_client_hello(anim_client_t *client, const char *client_name, anim_hello_info_t *out_info, int timeout_ms) {
  if (!client) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  anim_hello_info_t info;
  int rc;
  ANIM__CLIENT_RUN(rc, client, timeout_ms, &info, sizeof info,
                   anim_client_hello_send(client, client_name, NULL, NULL, &id_));
  if (rc == 0 && out_info) *out_info = info;
  return rc;
}

/* The automatic hello of a new connection: a refused token is the reason the next LOST gives. */
static void hello_again_done(anim_client_t *client, uint64_t id, int status, const anim_hello_info_t *info,
                             void *data) {
  if (status && status != ANIM_ECLOSED) anim__reconnect_hello_failed(client, status);
}

/* reconnect.c's restored callback: the token first, when there is one. */
static void hello_again(anim_client_t *client, void *data) {
  (void)data;
  if (client->auth_token[0]) anim_client_hello_send(client, "reconnect", hello_again_done, NULL, NULL);
}

/* ---- connecting ------------------------------------------------------------------------------ */

anim_client_t *anim_client_connect(const char *host, int port, const anim_client_options_t *options, int *out_err) {
  anim_client_t *client = anim__client_open(host, port, options, out_err);
  if (client) anim__reconnect_on_restored(client, hello_again, NULL);
  return client;
}

/* ---- ping ------------------------------------------------------------------------------------ */

static void ping_complete(anim_client_t *client, anim__pending_t *p, int status, const Animserver__Response *r) {
  anim_ping_result_t result;
  memset(&result, 0, sizeof result);
  if (status == 0 && !r->ping) status = anim__client_check_answer(client, ANIM_EPROTO);
  if (status == 0) {
    result.payload = r->ping->payload.data;
    result.payload_len = r->ping->payload.len;
    result.server_time_us = r->ping->server_time_us;
    result.rtt_us = anim__monotonic_us() - p->sent_us;
  }
  /* A blocking caller reads rtt_us only: the payload dies with the message. */
  if (anim__pending_deliver(p, status, &result, sizeof result)) return;
  anim_ping_cb cb = (anim_ping_cb)p->cb;
  if (cb) cb(client, p->id, status, status ? NULL : &result, p->data);
}

int anim_client_ping_send(anim_client_t *client, const void *payload, size_t len, anim_ping_cb cb, void *data,
                          uint64_t *out_id) {
  if (!client || (len > 0 && !payload)) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__PingRequest ping = ANIMSERVER__PING_REQUEST__INIT;
  ping.payload.data = (uint8_t *)payload;
  ping.payload.len = len;
  request.body_case = ANIMSERVER__REQUEST__BODY_PING;
  request.ping = &ping;
  return anim__client_send(client, &request, ANIMSERVER__RESPONSE__BODY_PING, ping_complete, (anim__cb_fn)cb, data,
                           out_id);
}

int anim_client_ping(anim_client_t *client, const void *payload, size_t len, uint64_t *out_rtt_us, int timeout_ms) {
  if (!client) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  anim_ping_result_t result;
  int rc;
  ANIM__CLIENT_RUN(rc, client, timeout_ms, &result, sizeof result,
                   anim_client_ping_send(client, payload, len, NULL, NULL, &id_));
  if (rc == 0 && out_rtt_us) *out_rtt_us = result.rtt_us;
  return rc;
}
