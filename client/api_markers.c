/*
 * api_markers.c: marker fitting (see include/anim_client_markers.h): the
 * request built from the markers and positions (viewed, not copied, while
 * it is packed), the answer's flat arrays copied into one result the caller
 * frees.
 */
#include <stdlib.h>
#include <string.h>

#include "client_internal.h"
#include "convert.h"

void anim_marker_fit_result_free(anim_marker_fit_result_t *result) {
  if (!result) return;
  if (result->bones)
    for (int b = 0; b < result->nbones; b++) free(result->bones[b]);
  free(result->bones);
  free(result->positions), free(result->rotations), free(result->residuals), free(result->offsets);
  free(result);
}

static int result_from(const Animserver__MarkerFitResponse *m, anim_marker_fit_result_t **out) {
  *out = NULL;
  if (!m) return ANIM_EPROTO;
  anim_marker_fit_result_t *r = calloc(1, sizeof *r);
  if (!r) return ANIM_ENOMEM;
  size_t n = m->frames, nb = m->n_bones, nm = m->n_offsets / 3;
  r->database_version = m->database_version, r->nframes = (int)n, r->nmarkers = (int)nm;
  r->scale = m->scale, r->mean_residual = m->mean_residual, r->max_residual = m->max_residual;
  r->worst_frame = (int)m->worst_frame, r->worst_marker = (int)m->worst_marker;
  int rc = m->n_offsets % 3 ? ANIM_EPROTO : 0;
  if (!rc && !(r->bones = calloc(nb + 1, sizeof *r->bones))) rc = ANIM_ENOMEM;
  for (size_t b = 0; !rc && b < nb; b++)
    if (!(r->bones[b] = strdup(m->bones[b]))) rc = ANIM_ENOMEM;
  if (!rc) r->nbones = (int)nb;
  r->positions = anim__floats_copy(m->positions, m->n_positions, n * nb * 3, &rc);
  r->rotations = anim__floats_copy(m->rotations, m->n_rotations, n * nb * 4, &rc);
  r->residuals = anim__floats_copy(m->residuals, m->n_residuals, n * nm, &rc);
  r->offsets = anim__floats_copy(m->offsets, m->n_offsets, nm * 3, &rc);
  if (rc) {
    anim_marker_fit_result_free(r);
    return rc;
  }
  *out = r;
  return 0;
}

static void result_complete(anim_client_t *client, anim__pending_t *p, int status, const Animserver__Response *r) {
  anim_marker_fit_result_t *result = NULL;
  if (status == 0) status = anim__client_check_answer(client, result_from(r->marker_fit, &result));
  if (anim__pending_deliver(p, status, &result, sizeof result)) return;
  anim_marker_fit_cb cb = (anim_marker_fit_cb)p->cb;
  if (cb) cb(client, p->id, status, result, p->data);
  anim_marker_fit_result_free(result);
}

int anim_client_marker_fit_send(anim_client_t *client, const char *database, const anim_marker_desc_t *markers,
                                int nmarkers, const float *positions, const uint8_t *missing, int nframes,
                                const anim_client_marker_fit_options_t *options, anim_marker_fit_cb cb, void *data,
                                uint64_t *out_id) {
  if (!client) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  anim_client_marker_fit_options_t o;
  memset(&o, 0, sizeof o);
  if (options) o = *options;
  if (!database || !markers || !positions || nmarkers < 1 || nframes < 1 || !(o.frame_time >= 0) ||
      !(o.marker_halflife >= 0) || !(o.prior_halflife >= 0) || !(o.outlier_distance >= 0) || !(o.far_ratio >= 0) ||
      !(o.settle_time >= 0) || !(o.scale >= 0) || !(o.total_mass >= 0))
    return anim__client_refuse(client, ANIM_EINVAL, __func__);
  for (int i = 0; i < nmarkers; i++)
    if (!markers[i].bone) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  size_t nk = (size_t)nframes * (size_t)nmarkers;
  Animserver__Marker *mk = calloc((size_t)nmarkers, sizeof *mk);
  Animserver__Marker **mkp = calloc((size_t)nmarkers, sizeof *mkp);
  protobuf_c_boolean *miss = missing ? calloc(nk, sizeof *miss) : NULL;
  if (!mk || !mkp || (missing && !miss)) {
    free(mk), free(mkp), free(miss);
    return anim__client_refuse(client, ANIM_ENOMEM, __func__);
  }
  for (int i = 0; i < nmarkers; i++) {
    Animserver__Marker init = ANIMSERVER__MARKER__INIT;
    mk[i] = init;
    mk[i].bone = (char *)markers[i].bone;
    if (markers[i].has_offset) mk[i].offset = (float *)markers[i].offset, mk[i].n_offset = 3;
    mkp[i] = &mk[i];
  }
  for (size_t k = 0; miss && k < nk; k++) miss[k] = missing[k] != 0;
  Animserver__MarkerFitRequest q = ANIMSERVER__MARKER_FIT_REQUEST__INIT;
  q.database = (char *)database, q.markers = mkp, q.n_markers = (size_t)nmarkers, q.frames = (uint32_t)nframes;
  q.positions = (float *)positions, q.n_positions = nk * 3;
  q.missing = miss, q.n_missing = miss ? nk : 0;
  q.frame_time = o.frame_time, q.marker_halflife = o.marker_halflife, q.prior_halflife = o.prior_halflife;
  q.outlier_distance = o.outlier_distance, q.far_ratio = o.far_ratio, q.settle_time = o.settle_time;
  q.scale = o.scale, q.estimate_scale = o.estimate_scale != 0, q.total_mass = o.total_mass;
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  request.body_case = ANIMSERVER__REQUEST__BODY_MARKER_FIT, request.marker_fit = &q;
  int rc = anim__client_send(client, &request, ANIMSERVER__RESPONSE__BODY_MARKER_FIT, result_complete, (anim__cb_fn)cb, data,
                             out_id);
  free(mk), free(mkp), free(miss);
  return rc;
}

int anim_client_marker_fit(anim_client_t *client, const char *database, const anim_marker_desc_t *markers, int nmarkers,
                           const float *positions, const uint8_t *missing, int nframes,
                           const anim_client_marker_fit_options_t *options, anim_marker_fit_result_t **out_result,
                           int timeout_ms) {
  if (out_result) *out_result = NULL;
  if (!client || !out_result) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  uint64_t id = 0;
  int rc = anim__client_ready(client, &timeout_ms);
  if (rc == 0)
    rc = anim_client_marker_fit_send(client, database, markers, nmarkers, positions, missing, nframes, options, NULL, NULL,
                                     &id);
  return anim__client_wait(client, rc, id, out_result, sizeof *out_result, timeout_ms);
}
