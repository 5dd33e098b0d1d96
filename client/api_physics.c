/*
 * api_physics.c: push, set_body_modes and recover on physical characters
 * (see include/anim_client_physics.h). Each request is built on the stack
 * (a few small messages), sent with the one-number completion (the tick it
 * applies at), and its blocking form is that send plus a wait.
 */
#include <math.h>
#include <string.h>
#include "client_internal.h"

void anim_push_init(anim_push_t *push) { memset(push, 0, sizeof *push); }

void anim_body_part_init(anim_body_part_t *part) {
  memset(part, 0, sizeof *part);
  part->mode = ANIM_BODY_POWERED;
}

void anim_root_stabiliser_init(anim_root_stabiliser_t *root) {
  /* physics/body.h's anim_physics_root_default for 70 kg: 3 x its weight. */
  root->mode = ANIM_BODY_POWERED, root->halflife = 0.03f, root->damping_ratio = 1.0f;
  root->max_force = 3.0f * 70.0f * 9.81f, root->max_torque = 300.0f, root->duration = 0.0f;
}

static void tick_complete(anim_client_t *client, anim__pending_t *p, int status, const Animserver__Response *r) {
  uint64_t tick = 0;
  if (status == 0 && r->body_case == ANIMSERVER__RESPONSE__BODY_PUSH && r->push) tick = r->push->tick;
  if (status == 0 && r->body_case == ANIMSERVER__RESPONSE__BODY_SET_BODY_MODES && r->set_body_modes)
    tick = r->set_body_modes->tick;
  if (status == 0 && r->body_case == ANIMSERVER__RESPONSE__BODY_RECOVER && r->recover) tick = r->recover->tick;
  anim__client_complete_status(client, p, status, tick);
}

static int wait_tick(anim_client_t *client, int rc, uint64_t id, uint64_t *out_tick, int timeout_ms) {
  uint64_t tick = 0;
  rc = anim__client_wait(client, rc, id, &tick, sizeof tick, timeout_ms);
  if (rc == 0 && out_tick) *out_tick = tick;
  return rc;
}

/* ---- push ---- */

int anim_client_push_send(anim_client_t *client, uint64_t character, const anim_push_t *push, anim_status_cb cb,
                          void *data, uint64_t *out_id) {
  if (!client || !push) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  Animserver__Vec3 point = ANIMSERVER__VEC3__INIT, amount = ANIMSERVER__VEC3__INIT;
  point.x = push->point[0], point.y = push->point[1], point.z = push->point[2];
  const float *v = push->is_force ? push->force : push->impulse;
  amount.x = v[0], amount.y = v[1], amount.z = v[2];
  Animserver__PushRequest m = ANIMSERVER__PUSH_REQUEST__INIT;
  m.character = character;
  m.bone = (char *)(push->bone ? push->bone : "");
  m.bone_index = push->bone_index;
  m.point = &point;
  if (push->is_force) m.force = &amount, m.duration = push->duration;
  else m.impulse = &amount;
  m.tick = push->tick;
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  request.body_case = ANIMSERVER__REQUEST__BODY_PUSH, request.push = &m;
  return anim__client_send(client, &request, ANIMSERVER__RESPONSE__BODY_PUSH, tick_complete, (anim__cb_fn)cb, data,
                           out_id);
}

int anim_client_push(anim_client_t *client, uint64_t character, const anim_push_t *push, uint64_t *out_tick,
                     int timeout_ms) {
  if (!client) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  uint64_t id = 0;
  int rc = anim__client_ready(client, &timeout_ms);
  if (rc == 0) rc = anim_client_push_send(client, character, push, NULL, NULL, &id);
  return wait_tick(client, rc, id, out_tick, timeout_ms);
}

/* ---- set_body_modes ---- */

#define MAX_PARTS 64

int anim_client_set_body_modes_send(anim_client_t *client, uint64_t character, const anim_body_part_t *parts, int n,
                                    const anim_root_stabiliser_t *root, int reset, anim_status_cb cb, void *data,
                                    uint64_t *out_id) {
  if (!client || n < 0 || n > MAX_PARTS || (n > 0 && !parts)) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  Animserver__BodyPart part[MAX_PARTS], *pointers[MAX_PARTS];
  Animserver__Strength strength[MAX_PARTS];
  for (int i = 0; i < n; i++) {
    const anim_body_part_t *in = &parts[i];
    Animserver__BodyPart p = ANIMSERVER__BODY_PART__INIT;
    Animserver__Strength s = ANIMSERVER__STRENGTH__INIT;
    p.bone = (char *)(in->bone ? in->bone : "");
    p.bone_index = in->bone_index;
    p.descendants = in->descendants != 0;
    p.mode = (Animserver__BodyMode)in->mode;
    p.duration = in->duration;
    s.halflife = in->halflife, s.damping_ratio = in->damping_ratio, s.max_torque = in->max_torque;
    strength[i] = s, part[i] = p;
    if (in->has_strength) part[i].strength = &strength[i];
    pointers[i] = &part[i];
  }
  Animserver__RootStabiliser r = ANIMSERVER__ROOT_STABILISER__INIT;
  Animserver__SetBodyModesRequest m = ANIMSERVER__SET_BODY_MODES_REQUEST__INIT;
  m.character = character;
  m.n_parts = (size_t)n, m.parts = pointers;
  m.reset = reset != 0;
  if (root) {
    r.mode = (Animserver__BodyMode)root->mode, r.halflife = root->halflife, r.damping_ratio = root->damping_ratio;
    r.max_force = root->max_force, r.max_torque = root->max_torque, r.duration = root->duration;
    m.root = &r;
  }
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  request.body_case = ANIMSERVER__REQUEST__BODY_SET_BODY_MODES, request.set_body_modes = &m;
  return anim__client_send(client, &request, ANIMSERVER__RESPONSE__BODY_SET_BODY_MODES, tick_complete,
                           (anim__cb_fn)cb, data, out_id);
}

int anim_client_set_body_modes(anim_client_t *client, uint64_t character, const anim_body_part_t *parts, int n,
                               const anim_root_stabiliser_t *root, int reset, uint64_t *out_tick, int timeout_ms) {
  if (!client) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  uint64_t id = 0;
  int rc = anim__client_ready(client, &timeout_ms);
  if (rc == 0) rc = anim_client_set_body_modes_send(client, character, parts, n, root, reset, NULL, NULL, &id);
  return wait_tick(client, rc, id, out_tick, timeout_ms);
}

/* ---- recover ---- */

int anim_client_recover_send(anim_client_t *client, uint64_t character, anim_status_cb cb, void *data,
                             uint64_t *out_id) {
  if (!client) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  Animserver__RecoverRequest m = ANIMSERVER__RECOVER_REQUEST__INIT;
  m.character = character;
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  request.body_case = ANIMSERVER__REQUEST__BODY_RECOVER, request.recover = &m;
  return anim__client_send(client, &request, ANIMSERVER__RESPONSE__BODY_RECOVER, tick_complete, (anim__cb_fn)cb, data,
                           out_id);
}

int anim_client_recover(anim_client_t *client, uint64_t character, uint64_t *out_tick, int timeout_ms) {
  if (!client) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  uint64_t id = 0;
  int rc = anim__client_ready(client, &timeout_ms);
  if (rc == 0) rc = anim_client_recover_send(client, character, NULL, NULL, &id);
  return wait_tick(client, rc, id, out_tick, timeout_ms);
}
