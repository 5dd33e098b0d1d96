/*
 * api_admin.c: the server's counters and its shutdown (see
 * include/anim_client_admin.h).
 *
 * Each a _send with its typed completion, the blocking form that send plus
 * a wait for its id. Database administration (load, reload, unload) is
 * api_database.c's.
 */
#include <string.h>
#include "client_internal.h"
#include "convert.h"

static void stats_complete(anim_client_t *client, anim__pending_t *p, int status, const Animserver__Response *r) {
  anim_server_stats_t stats;
  memset(&stats, 0, sizeof stats);
  if (status == 0) status = anim__client_check_answer(client, anim__server_stats_from(r->server_stats, &stats));
  if (anim__pending_deliver(p, status, &stats, sizeof stats)) return;
  anim_server_stats_cb cb = (anim_server_stats_cb)p->cb;
  if (cb) cb(client, p->id, status, status ? NULL : &stats, p->data);
}

int anim_client_server_stats_send(anim_client_t *client, anim_server_stats_cb cb, void *data, uint64_t *out_id) {
  if (!client) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__ServerStatsRequest stats = ANIMSERVER__SERVER_STATS_REQUEST__INIT;
  request.body_case = ANIMSERVER__REQUEST__BODY_SERVER_STATS;
  request.server_stats = &stats;
  return anim__client_send(client, &request, ANIMSERVER__RESPONSE__BODY_SERVER_STATS, stats_complete, (anim__cb_fn)cb,
                           data, out_id);
}

int anim_client_server_stats(anim_client_t *client, anim_server_stats_t *out_stats, int timeout_ms) {
  if (!client || !out_stats) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  memset(out_stats, 0, sizeof *out_stats);
  int rc;
  ANIM__CLIENT_RUN(rc, client, timeout_ms, out_stats, sizeof *out_stats,
                   anim_client_server_stats_send(client, NULL, NULL, &id_));
  return rc;
}

int anim_client_shutdown_send(anim_client_t *client, anim_status_cb cb, void *data, uint64_t *out_id) {
  if (!client) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__ShutdownRequest shutdown = ANIMSERVER__SHUTDOWN_REQUEST__INIT;
  request.body_case = ANIMSERVER__REQUEST__BODY_SHUTDOWN;
  request.shutdown = &shutdown;
  return anim__client_send(client, &request, ANIMSERVER__RESPONSE__BODY_SHUTDOWN, anim__client_status_complete,
                           (anim__cb_fn)cb, data, out_id);
}

int anim_client_shutdown(anim_client_t *client, int timeout_ms) {
  if (!client) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  uint64_t unused;
  int rc;
  ANIM__CLIENT_RUN(rc, client, timeout_ms, &unused, sizeof unused, anim_client_shutdown_send(client, NULL, NULL, &id_));
  return rc;
}
