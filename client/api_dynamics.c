/*
 * api_dynamics.c: inverse dynamics (see include/anim_client_dynamics.h): the
 * request built from the options, the answer's flat arrays copied into one
 * result the caller frees.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "client_internal.h"
#include "convert.h"

void anim_inverse_dynamics_free(anim_inverse_dynamics_t *result) {
  if (!result) return;
  if (result->bones)
    for (int b = 0; b < result->nbones; b++) free(result->bones[b]);
  free(result->bones);
  free(result->torques), free(result->foot_forces), free(result->foot_cops), free(result->residual_forces);
  free(result->residual_torques), free(result->power), free(result->com), free(result->over_limit);
  free(result->left_foot), free(result->right_foot);
  free(result);
}

static int result_from(const Animserver__InverseDynamicsResponse *m, anim_inverse_dynamics_t **out) {
  *out = NULL;
  if (!m) return ANIM_EPROTO;
  anim_inverse_dynamics_t *r = calloc(1, sizeof *r);
  if (!r) return ANIM_ENOMEM;
  size_t n = m->frames, nb = m->n_bones;
  r->database_version = m->database_version, r->start = (int)m->start, r->nframes = (int)n, r->step = (int)m->step;
  r->frame_rate = m->frame_rate, r->total_mass = m->total_mass;
  r->frames_over_limit = (int)m->frames_over_limit, r->worst_frame = (int)m->worst_frame;
  r->character = m->character, r->first_tick = m->first_tick, r->ticks_filled = (int)m->ticks_filled;
  r->mean_residual_force = m->mean_residual_force, r->max_residual_force = m->max_residual_force;
  r->mean_residual_torque = m->mean_residual_torque, r->max_residual_torque = m->max_residual_torque;
  int rc = 0;
  if (!(r->bones = calloc(nb + 1, sizeof *r->bones))) rc = ANIM_ENOMEM;
  for (size_t b = 0; !rc && b < nb; b++)
    if (!(r->bones[b] = strdup(m->bones[b]))) rc = ANIM_ENOMEM;
  if (!rc) r->nbones = (int)nb;
  r->torques = anim__floats_copy(m->torques, m->n_torques, n * nb * 3, &rc);
  r->foot_forces = anim__floats_copy(m->foot_forces, m->n_foot_forces, n * 6, &rc);
  r->foot_cops = anim__floats_copy(m->foot_cops, m->n_foot_cops, n * 6, &rc);
  r->residual_forces = anim__floats_copy(m->residual_forces, m->n_residual_forces, n * 3, &rc);
  r->residual_torques = anim__floats_copy(m->residual_torques, m->n_residual_torques, n * 3, &rc);
  r->power = anim__floats_copy(m->power, m->n_power, n, &rc);
  r->com = anim__floats_copy(m->com, m->n_com, n * 3, &rc);
  if (!rc && m->n_over_limit != n) rc = ANIM_EPROTO;
  if (!rc && !(r->over_limit = malloc(n + 1))) rc = ANIM_ENOMEM;
  for (size_t i = 0; !rc && i < n; i++) r->over_limit[i] = m->over_limit[i] ? 1 : 0;
  if (!rc && (!(r->left_foot = strdup(m->left_foot ? m->left_foot : "")) ||
              !(r->right_foot = strdup(m->right_foot ? m->right_foot : ""))))
    rc = ANIM_ENOMEM;
  if (rc) {
    anim_inverse_dynamics_free(r);
    return rc;
  }
  *out = r;
  return 0;
}

static void result_complete(anim_client_t *client, anim__pending_t *p, int status, const Animserver__Response *r) {
  anim_inverse_dynamics_t *result = NULL;
  if (status == 0) status = anim__client_check_answer(client, result_from(r->inverse_dynamics, &result));
  if (anim__pending_deliver(p, status, &result, sizeof result)) return;
  anim_inverse_dynamics_cb cb = (anim_inverse_dynamics_cb)p->cb;
  if (cb) cb(client, p->id, status, result, p->data);
  anim_inverse_dynamics_free(result);
}

/* The options into the request; ANIM_EINVAL when one is negative or not a number. */
static int put_options(Animserver__InverseDynamicsRequest *q, const anim_inverse_dynamics_options_t *options) {
  anim_inverse_dynamics_options_t o = {0};
  if (options) o = *options;
  if (!(o.max_root_torque >= 0) || !(o.max_root_force >= 0) || !(o.contact_height >= 0) || !(o.contact_speed >= 0) ||
      !(o.total_mass >= 0) || o.step < 0)
    return ANIM_EINVAL;
  q->max_root_torque = o.max_root_torque, q->max_root_force = o.max_root_force;
  q->contact_height = o.contact_height, q->contact_speed = o.contact_speed;
  q->total_mass = o.total_mass, q->step = (uint32_t)o.step;
  return 0;
}

static int send_request(anim_client_t *client, Animserver__InverseDynamicsRequest *q, anim_inverse_dynamics_cb cb,
                        void *data, uint64_t *out_id) {
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  request.body_case = ANIMSERVER__REQUEST__BODY_INVERSE_DYNAMICS, request.inverse_dynamics = q;
  return anim__client_send(client, &request, ANIMSERVER__RESPONSE__BODY_INVERSE_DYNAMICS, result_complete,
                           (anim__cb_fn)cb, data, out_id);
}

int anim_client_inverse_dynamics_send(anim_client_t *client, const char *database, int start, int stop,
                                      const anim_inverse_dynamics_options_t *options, anim_inverse_dynamics_cb cb,
                                      void *data, uint64_t *out_id) {
  if (!client) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  Animserver__InverseDynamicsRequest q = ANIMSERVER__INVERSE_DYNAMICS_REQUEST__INIT;
  if (!database || start < 0 || stop < 0 || put_options(&q, options))
    return anim__client_refuse(client, ANIM_EINVAL, __func__);
  q.database = (char *)database, q.start = (uint32_t)start, q.stop = (uint32_t)stop;
  return send_request(client, &q, cb, data, out_id);
}

int anim_client_inverse_dynamics(anim_client_t *client, const char *database, int start, int stop,
                                 const anim_inverse_dynamics_options_t *options, anim_inverse_dynamics_t **out_result,
                                 int timeout_ms) {
  if (out_result) *out_result = NULL;
  if (!client || !out_result) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  uint64_t id = 0;
  int rc = anim__client_ready(client, &timeout_ms);
  if (rc == 0) rc = anim_client_inverse_dynamics_send(client, database, start, stop, options, NULL, NULL, &id);
  return anim__client_wait(client, rc, id, out_result, sizeof *out_result, timeout_ms);
}

int anim_client_inverse_dynamics_character_send(anim_client_t *client, const anim_inverse_dynamics_span_t *span,
                                                const anim_inverse_dynamics_options_t *options,
                                                anim_inverse_dynamics_cb cb, void *data, uint64_t *out_id) {
  if (!client) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  Animserver__InverseDynamicsRequest q = ANIMSERVER__INVERSE_DYNAMICS_REQUEST__INIT;
  if (!span || !span->character || !(span->seconds >= 0) || !isfinite(span->seconds) || put_options(&q, options) ||
      (span->seconds > 0 && (span->from_tick || span->to_tick)) ||
      (span->seconds == 0 && !span->to_tick))
    return anim__client_refuse(client, ANIM_EINVAL, __func__);
  q.database = "";
  q.character = span->character, q.seconds = span->seconds;
  q.from_tick = span->from_tick, q.to_tick = span->to_tick;
  return send_request(client, &q, cb, data, out_id);
}

int anim_client_inverse_dynamics_character(anim_client_t *client, const anim_inverse_dynamics_span_t *span,
                                           const anim_inverse_dynamics_options_t *options,
                                           anim_inverse_dynamics_t **out_result, int timeout_ms) {
  if (out_result) *out_result = NULL;
  if (!client || !out_result) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  uint64_t id = 0;
  int rc = anim__client_ready(client, &timeout_ms);
  if (rc == 0) rc = anim_client_inverse_dynamics_character_send(client, span, options, NULL, NULL, &id);
  return anim__client_wait(client, rc, id, out_result, sizeof *out_result, timeout_ms);
}
