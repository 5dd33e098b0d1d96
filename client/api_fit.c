/*
 * api_fit.c: poses from tracked points (see include/anim_client_fit.h).
 *
 * align (a transform between two point sets), fit_pose (a full-body pose
 * from a few tracked bones, once) and set_trackers (the points tracker
 * characters follow every tick): each a _send with its typed completion
 * (answers converted by convert_fit.c), the blocking form that send plus a
 * wait for its id. Creating tracker characters is api_character.c's.
 */
#include <string.h>
#include "client_internal.h"
#include "convert.h"

/* ---- align ------------------------------------------------------------------------------------- */

static void align_complete(anim_client_t *client, anim__pending_t *p, int status, const Animserver__Response *r) {
  anim_align_result_t result;
  memset(&result, 0, sizeof result);
  if (status == 0) status = anim__client_check_answer(client, anim__align_from(r->align, &result));
  if (anim__pending_deliver(p, status, &result, sizeof result)) return;
  anim_align_cb cb = (anim_align_cb)p->cb;
  if (cb) cb(client, p->id, status, status ? NULL : &result, p->data);
}

int anim_client_align_send(anim_client_t *client, const float *source, const float *target, const float *weights,
                           int n, int mode, anim_align_cb cb, void *data, uint64_t *out_id) {
  if (!client) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  anim__align_views_t v;
  int rc = anim__align_to_proto(source, target, weights, n, mode, &v);
  if (rc) return anim__client_refuse(client, rc, __func__);
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  request.body_case = ANIMSERVER__REQUEST__BODY_ALIGN, request.align = &v.align;
  rc = anim__client_send(client, &request, ANIMSERVER__RESPONSE__BODY_ALIGN, align_complete, (anim__cb_fn)cb, data,
                         out_id);
  anim__align_views_free(&v);
  return rc;
}

int anim_client_align(anim_client_t *client, const float *source, const float *target, const float *weights, int n,
                      int mode, anim_align_result_t *out_result, int timeout_ms) {
  if (!client || !out_result) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  memset(out_result, 0, sizeof *out_result);
  int rc;
  ANIM__CLIENT_RUN(rc, client, timeout_ms, out_result, sizeof *out_result,
                   anim_client_align_send(client, source, target, weights, n, mode, NULL, NULL, &id_));
  return rc;
}

/* ---- fit_pose ---------------------------------------------------------------------------------- */

static void fit_complete(anim_client_t *client, anim__pending_t *p, int status, const Animserver__Response *r) {
  anim_fit_result_t *fit = NULL;
  if (status == 0) status = anim__client_check_answer(client, anim__fit_from(r->fit_pose, &fit));
  if (anim__pending_deliver(p, status, &fit, sizeof fit)) return;
  anim_fit_cb cb = (anim_fit_cb)p->cb;
  if (cb) cb(client, p->id, status, fit, p->data);
  anim_fit_result_free(fit);
}

int anim_client_fit_pose_send(anim_client_t *client, const char *database, const anim_tracker_t *trackers, int n,
                              anim_fit_cb cb, void *data, uint64_t *out_id) {
  if (!client) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  anim__trackers_views_t v;
  int rc = anim__fit_to_proto(database, trackers, n, &v);
  if (rc) return anim__client_refuse(client, rc, __func__);
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  request.body_case = ANIMSERVER__REQUEST__BODY_FIT_POSE, request.fit_pose = &v.fit;
  rc = anim__client_send(client, &request, ANIMSERVER__RESPONSE__BODY_FIT_POSE, fit_complete, (anim__cb_fn)cb, data,
                         out_id);
  anim__trackers_views_free(&v);
  return rc;
}

int anim_client_fit_pose(anim_client_t *client, const char *database, const anim_tracker_t *trackers, int n,
                         anim_fit_result_t **out_result, int timeout_ms) {
  if (out_result) *out_result = NULL;
  if (!client || !out_result) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  int rc;
  ANIM__CLIENT_RUN(rc, client, timeout_ms, out_result, sizeof *out_result,
                   anim_client_fit_pose_send(client, database, trackers, n, NULL, NULL, &id_));
  return rc;
}

/* ---- set_trackers ------------------------------------------------------------------------------ */

static void trackers_complete(anim_client_t *client, anim__pending_t *p, int status, const Animserver__Response *r) {
  anim__client_complete_status(client, p, status, status == 0 && r->set_trackers ? r->set_trackers->tick : 0);
}

int anim_client_trackers_set_at_send(anim_client_t *client, uint64_t tick, const uint64_t *characters,
                                     const anim_tracker_t *trackers, const int *counts, int n, anim_status_cb cb,
                                     void *data, uint64_t *out_id) {
  if (!client) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  anim__trackers_views_t v;
  int rc = anim__set_trackers_to_proto(characters, trackers, counts, n, &v);
  if (rc) return anim__client_refuse(client, rc, __func__);
  v.set.tick = tick;
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  request.body_case = ANIMSERVER__REQUEST__BODY_SET_TRACKERS, request.set_trackers = &v.set;
  rc = anim__client_send(client, &request, ANIMSERVER__RESPONSE__BODY_SET_TRACKERS, trackers_complete, (anim__cb_fn)cb,
                         data, out_id);
  anim__trackers_views_free(&v);
  return rc;
}

int anim_client_trackers_set_send(anim_client_t *client, const uint64_t *characters, const anim_tracker_t *trackers,
                                  const int *counts, int n, anim_status_cb cb, void *data, uint64_t *out_id) {
  return anim_client_trackers_set_at_send(client, 0, characters, trackers, counts, n, cb, data, out_id);
}

int anim_client_trackers_set_at(anim_client_t *client, uint64_t tick, const uint64_t *characters,
                                const anim_tracker_t *trackers, const int *counts, int n, uint64_t *out_tick,
                                int timeout_ms) {
  if (!client) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  uint64_t at = 0;
  int rc;
  ANIM__CLIENT_RUN(rc, client, timeout_ms, &at, sizeof at,
                   anim_client_trackers_set_at_send(client, tick, characters, trackers, counts, n, NULL, NULL, &id_));
  if (rc == 0 && out_tick) *out_tick = at;
  return rc;
}

int anim_client_trackers_set(anim_client_t *client, const uint64_t *characters, const anim_tracker_t *trackers,
                             const int *counts, int n, uint64_t *out_tick, int timeout_ms) {
  return anim_client_trackers_set_at(client, 0, characters, trackers, counts, n, out_tick, timeout_ms);
}
