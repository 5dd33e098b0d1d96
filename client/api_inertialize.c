/*
 * api_inertialize.c: inertialization, transition cost and springs computed
 * by the server (see include/anim_client_inertialize.h).
 *
 * Stateless requests: the caller sends the inertializer state it keeps and
 * gets the new one back. Each is a _send with its typed completion (the
 * answer converted by convert.c), the blocking form that send plus a wait
 * for its id. Poses and states are put on the wire by convert_request.c.
 */
#include <string.h>
#include "client_internal.h"
#include "convert.h"

/* What an inertialization answer carries: both owned (the pose only for an evaluation). */
typedef struct {
  anim_inertializer_state_t *state;
  anim_pose_t *pose;
} inertialized_t;

static void inertialize_complete(anim_client_t *client, anim__pending_t *p, int status,
                                 const Animserver__Response *r) {
  inertialized_t out = {NULL, NULL};
  if (status == 0) {
    int rc = p->expect == ANIMSERVER__RESPONSE__BODY_INERTIALIZE_TRANSITION
                 ? anim__transition_from(r->inertialize_transition, &out.state)
                 : anim__evaluate_from(r->inertialize_evaluate, &out.state, &out.pose);
    status = anim__client_check_answer(client, rc);
  }
  if (anim__pending_deliver(p, status, &out, sizeof out)) return;
  anim_inertialize_cb cb = (anim_inertialize_cb)p->cb;
  if (cb) cb(client, p->id, status, out.state, out.pose, p->data);
  anim_inertializer_state_free(out.state);
  anim_pose_free(out.pose);
}

/* The blocking form of both: hands each result to its output, or frees it. */
static int inertialize_wait(anim_client_t *client, int rc, uint64_t id, anim_inertializer_state_t **out_state,
                            anim_pose_t **out_pose, int timeout_ms) {
  inertialized_t out = {NULL, NULL};
  rc = anim__client_wait(client, rc, id, &out, sizeof out, timeout_ms);
  if (out_state) *out_state = out.state;
  else anim_inertializer_state_free(out.state);
  if (out_pose) *out_pose = out.pose;
  else anim_pose_free(out.pose);
  return rc;
}

int anim_client_inertialize_transition_send(anim_client_t *client, const char *database,
                                            const anim_pose_source_t *source, const anim_pose_source_t *destination,
                                            const anim_inertializer_state_t *state, anim_inertialize_cb cb, void *data,
                                            uint64_t *out_id) {
  if (!client) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  anim__pose_source_views_t src, dst;
  Animserver__InertializerState st;
  if (anim__pose_source_to_proto(source, &src) || anim__pose_source_to_proto(destination, &dst))
    return anim__client_refuse(client, ANIM_EINVAL, __func__);
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__InertializeTransitionRequest t = ANIMSERVER__INERTIALIZE_TRANSITION_REQUEST__INIT;
  t.database = (char *)(database ? database : "");
  t.source = &src.ref;
  t.destination = &dst.ref;
  if (state) {
    anim__inertializer_state_to_proto(state, &st);
    t.state = &st;
  }
  request.body_case = ANIMSERVER__REQUEST__BODY_INERTIALIZE_TRANSITION;
  request.inertialize_transition = &t;
  return anim__client_send(client, &request, ANIMSERVER__RESPONSE__BODY_INERTIALIZE_TRANSITION, inertialize_complete,
                           (anim__cb_fn)cb, data, out_id);
}

int anim_client_inertialize_transition(anim_client_t *client, const char *database, const anim_pose_source_t *source,
                                       const anim_pose_source_t *destination, const anim_inertializer_state_t *state,
                                       anim_inertializer_state_t **out_state, int timeout_ms) {
  if (!client || !out_state) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  *out_state = NULL;
  uint64_t id = 0;
  int rc = anim__client_ready(client, &timeout_ms);
  if (rc == 0)
    rc = anim_client_inertialize_transition_send(client, database, source, destination, state, NULL, NULL, &id);
  return inertialize_wait(client, rc, id, out_state, NULL, timeout_ms);
}

int anim_client_inertialize_evaluate_send(anim_client_t *client, const char *database,
                                          const anim_inertializer_state_t *state, const anim_pose_source_t *input,
                                          float halflife, float t, anim_inertialize_cb cb, void *data,
                                          uint64_t *out_id) {
  if (!client || !state) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  anim__pose_source_views_t in;
  Animserver__InertializerState st;
  if (anim__pose_source_to_proto(input, &in)) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  anim__inertializer_state_to_proto(state, &st);
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__InertializeEvaluateRequest e = ANIMSERVER__INERTIALIZE_EVALUATE_REQUEST__INIT;
  e.database = (char *)(database ? database : "");
  e.state = &st;
  e.input = &in.ref;
  e.halflife = halflife;
  e.t = t;
  request.body_case = ANIMSERVER__REQUEST__BODY_INERTIALIZE_EVALUATE;
  request.inertialize_evaluate = &e;
  return anim__client_send(client, &request, ANIMSERVER__RESPONSE__BODY_INERTIALIZE_EVALUATE, inertialize_complete,
                           (anim__cb_fn)cb, data, out_id);
}

int anim_client_inertialize_evaluate(anim_client_t *client, const char *database,
                                     const anim_inertializer_state_t *state, const anim_pose_source_t *input,
                                     float halflife, float t, anim_inertializer_state_t **out_state,
                                     anim_pose_t **out_pose, int timeout_ms) {
  if (!client) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  if (out_state) *out_state = NULL;
  if (out_pose) *out_pose = NULL;
  uint64_t id = 0;
  int rc = anim__client_ready(client, &timeout_ms);
  if (rc == 0) rc = anim_client_inertialize_evaluate_send(client, database, state, input, halflife, t, NULL, NULL, &id);
  return inertialize_wait(client, rc, id, out_state, out_pose, timeout_ms);
}

/* ---- transition cost ----------------------------------------------------------------------- */

static void cost_complete(anim_client_t *client, anim__pending_t *p, int status, const Animserver__Response *r) {
  anim_transition_cost_t *cost = NULL;
  if (status == 0) status = anim__client_check_answer(client, anim__transition_cost_from(r->transition_cost, &cost));
  if (anim__pending_deliver(p, status, &cost, sizeof cost)) return;
  anim_transition_cost_cb cb = (anim_transition_cost_cb)p->cb;
  if (cb) cb(client, p->id, status, cost, p->data);
  anim_transition_cost_free(cost);
}

int anim_client_transition_cost_send(anim_client_t *client, const char *database, const anim_pose_source_t *source,
                                     const anim_pose_source_t *destination, float halflife, const char *const *bones,
                                     int nbones, anim_transition_cost_cb cb, void *data, uint64_t *out_id) {
  if (!client || nbones < 0 || (nbones > 0 && !bones)) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  anim__pose_source_views_t src, dst;
  if (anim__pose_source_to_proto(source, &src) || anim__pose_source_to_proto(destination, &dst))
    return anim__client_refuse(client, ANIM_EINVAL, __func__);
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__TransitionCostRequest c = ANIMSERVER__TRANSITION_COST_REQUEST__INIT;
  c.database = (char *)(database ? database : "");
  c.source = &src.ref;
  c.destination = &dst.ref;
  c.halflife = halflife;
  c.n_bones = (size_t)nbones;
  c.bones = (char **)bones;
  request.body_case = ANIMSERVER__REQUEST__BODY_TRANSITION_COST;
  request.transition_cost = &c;
  return anim__client_send(client, &request, ANIMSERVER__RESPONSE__BODY_TRANSITION_COST, cost_complete,
                           (anim__cb_fn)cb, data, out_id);
}

int anim_client_transition_cost(anim_client_t *client, const char *database, const anim_pose_source_t *source,
                                const anim_pose_source_t *destination, float halflife, const char *const *bones,
                                int nbones, anim_transition_cost_t **out_cost, int timeout_ms) {
  if (!client || !out_cost) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  *out_cost = NULL;
  uint64_t id = 0;
  int rc = anim__client_ready(client, &timeout_ms);
  if (rc == 0)
    rc = anim_client_transition_cost_send(client, database, source, destination, halflife, bones, nbones, NULL, NULL,
                                          &id);
  return anim__client_wait(client, rc, id, out_cost, sizeof *out_cost, timeout_ms);
}

/* ---- springs: one request, three problems -------------------------------------------------------- */

static void spring_complete(anim_client_t *client, anim__pending_t *p, int status, const Animserver__Response *r) {
  anim_spring_tuning_t tuning;
  memset(&tuning, 0, sizeof tuning);
  if (status == 0) status = anim__client_check_answer(client, anim__spring_tuning_from(r->spring_tune, &tuning));
  if (anim__pending_deliver(p, status, &tuning, sizeof tuning)) return;
  anim_spring_cb cb = (anim_spring_cb)p->cb;
  if (cb) cb(client, p->id, status, status ? NULL : &tuning, p->data);
}

static int spring_send(anim_client_t *client, Animserver__SpringTuneRequest *tune, anim_spring_cb cb, void *data,
                       uint64_t *out_id) {
  if (!client) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  request.body_case = ANIMSERVER__REQUEST__BODY_SPRING_TUNE;
  request.spring_tune = tune;
  return anim__client_send(client, &request, ANIMSERVER__RESPONSE__BODY_SPRING_TUNE, spring_complete,
                           (anim__cb_fn)cb, data, out_id);
}

static int spring_call(anim_client_t *client, Animserver__SpringTuneRequest *tune, anim_spring_tuning_t *out,
                       int timeout_ms) {
  if (!client || !out) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  memset(out, 0, sizeof *out);
  int rc;
  ANIM__CLIENT_RUN(rc, client, timeout_ms, out, sizeof *out, spring_send(client, tune, NULL, NULL, &id_));
  return rc;
}

/* The three problems' requests, in views the caller keeps on its stack. */
typedef struct {
  Animserver__SpringTuneRequest tune;
  Animserver__SpringFraction fraction;
  Animserver__SpringGains gains;
  Animserver__SpringConstraint constraint;
} spring_views_t;

static Animserver__SpringTuneRequest *fraction_views(spring_views_t *v, double alpha, double t, double x0, double v0,
                                                     double mass) {
  Animserver__SpringTuneRequest tune = ANIMSERVER__SPRING_TUNE_REQUEST__INIT;
  Animserver__SpringFraction f = ANIMSERVER__SPRING_FRACTION__INIT;
  v->tune = tune, v->fraction = f;
  v->fraction.alpha = alpha, v->fraction.t = t, v->fraction.x0 = x0, v->fraction.v0 = v0, v->fraction.mass = mass;
  v->tune.problem_case = ANIMSERVER__SPRING_TUNE_REQUEST__PROBLEM_FRACTION;
  v->tune.fraction = &v->fraction;
  return &v->tune;
}

static Animserver__SpringTuneRequest *gains_views(spring_views_t *v, double stiffness, double damping, double dt) {
  Animserver__SpringTuneRequest tune = ANIMSERVER__SPRING_TUNE_REQUEST__INIT;
  Animserver__SpringGains g = ANIMSERVER__SPRING_GAINS__INIT;
  v->tune = tune, v->gains = g;
  v->gains.stiffness = stiffness, v->gains.damping = damping, v->gains.dt = dt;
  v->tune.problem_case = ANIMSERVER__SPRING_TUNE_REQUEST__PROBLEM_TO_CONSTRAINT;
  v->tune.to_constraint = &v->gains;
  return &v->tune;
}

static Animserver__SpringTuneRequest *constraint_views(spring_views_t *v, double erp, double cfm, double dt) {
  Animserver__SpringTuneRequest tune = ANIMSERVER__SPRING_TUNE_REQUEST__INIT;
  Animserver__SpringConstraint c = ANIMSERVER__SPRING_CONSTRAINT__INIT;
  v->tune = tune, v->constraint = c;
  v->constraint.erp = erp, v->constraint.cfm = cfm, v->constraint.dt = dt;
  v->tune.problem_case = ANIMSERVER__SPRING_TUNE_REQUEST__PROBLEM_FROM_CONSTRAINT;
  v->tune.from_constraint = &v->constraint;
  return &v->tune;
}

int anim_client_spring_halflife(anim_client_t *client, double alpha, double t, double x0, double v0, double mass,
                                anim_spring_tuning_t *out_tuning, int timeout_ms) {
  spring_views_t v;
  return spring_call(client, fraction_views(&v, alpha, t, x0, v0, mass), out_tuning, timeout_ms);
}

int anim_client_spring_halflife_send(anim_client_t *client, double alpha, double t, double x0, double v0, double mass,
                                     anim_spring_cb cb, void *data, uint64_t *out_id) {
  spring_views_t v;
  return spring_send(client, fraction_views(&v, alpha, t, x0, v0, mass), cb, data, out_id);
}

int anim_client_spring_to_constraint(anim_client_t *client, double stiffness, double damping, double dt,
                                     anim_spring_tuning_t *out_tuning, int timeout_ms) {
  spring_views_t v;
  return spring_call(client, gains_views(&v, stiffness, damping, dt), out_tuning, timeout_ms);
}

int anim_client_spring_to_constraint_send(anim_client_t *client, double stiffness, double damping, double dt,
                                          anim_spring_cb cb, void *data, uint64_t *out_id) {
  spring_views_t v;
  return spring_send(client, gains_views(&v, stiffness, damping, dt), cb, data, out_id);
}

int anim_client_spring_from_constraint(anim_client_t *client, double erp, double cfm, double dt,
                                       anim_spring_tuning_t *out_tuning, int timeout_ms) {
  spring_views_t v;
  return spring_call(client, constraint_views(&v, erp, cfm, dt), out_tuning, timeout_ms);
}

int anim_client_spring_from_constraint_send(anim_client_t *client, double erp, double cfm, double dt,
                                            anim_spring_cb cb, void *data, uint64_t *out_id) {
  spring_views_t v;
  return spring_send(client, constraint_views(&v, erp, cfm, dt), cb, data, out_id);
}
