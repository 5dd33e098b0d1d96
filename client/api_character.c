/*
 * api_character.c: characters the server ticks (see
 * include/anim_client_character.h).
 *
 * Creating characters in a mode, steering them with input, reading their
 * state, destroying them; and the small initializers of the public input
 * types. Each request is a _send with its typed completion, the blocking
 * form that send plus a wait for its id. Their poses arrive through
 * subscriptions, which are api_stream.c's; wire structs are built in
 * convert_request.c.
 */
#include <stdlib.h>
#include <string.h>
#include "client_internal.h"
#include "convert.h"

void anim_character_params_init(anim_character_params_t *params) { memset(params, 0, sizeof *params); }

void anim_character_input_stick(anim_character_input_t *out, float x, float z, float camera_azimuth, int strafe) {
  memset(out, 0, sizeof *out);
  out->kind = ANIM_INPUT_KIND_STICK;
  out->stick_x = x, out->stick_z = z, out->camera_azimuth = camera_azimuth, out->strafe = strafe;
}

void anim_character_input_velocity(anim_character_input_t *out, float vx, float vz, float facing) {
  memset(out, 0, sizeof *out);
  out->kind = ANIM_INPUT_KIND_VELOCITY;
  out->velocity_x = vx, out->velocity_z = vz, out->facing = facing;
}

void anim_character_input_goal(anim_character_input_t *out, float x, float z, float speed) {
  memset(out, 0, sizeof *out);
  out->kind = ANIM_INPUT_KIND_GOAL;
  out->goal_x = x, out->goal_z = z, out->goal_speed = speed;
}

/* ---- create ---------------------------------------------------------------------------------- */

static void create_complete(anim_client_t *client, anim__pending_t *p, int status, const Animserver__Response *r) {
  int n = *(const int *)p->extra; /* characters asked for */
  const uint64_t *ids = NULL;
  if (status == 0 && (!r->create_characters || r->create_characters->n_characters != (size_t)n))
    status = anim__client_set_error(client, ANIM_EPROTO, "the server created another number of characters");
  if (status == 0) ids = r->create_characters->characters;
  if (anim__pending_deliver(p, status, ids, (size_t)n * sizeof *ids)) return;
  anim_characters_created_cb cb = (anim_characters_created_cb)p->cb;
  if (cb) cb(client, p->id, status, ids, status ? 0 : n, p->data);
}

int anim_client_characters_create_send(anim_client_t *client, const char *database, const anim_character_mode_t *mode,
                                       const anim_character_params_t *params,
                                       const anim_character_placement_t *placements, int n,
                                       anim_characters_created_cb cb, void *data, uint64_t *out_id) {
  if (!client) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  anim__create_views_t views;
  int rc = anim__create_to_proto(database, mode, params, placements, n, &views);
  if (rc) return anim__client_refuse(client, rc, __func__);
  int *count = malloc(sizeof *count);
  if (!count) rc = ANIM_ENOMEM;
  if (rc == 0) {
    *count = n;
    Animserver__Request request = ANIMSERVER__REQUEST__INIT;
    request.body_case = ANIMSERVER__REQUEST__BODY_CREATE_CHARACTERS;
    request.create_characters = &views.create;
    rc = anim__client_send_with(client, &request, ANIMSERVER__RESPONSE__BODY_CREATE_CHARACTERS, create_complete,
                                (anim__cb_fn)cb, data, count, out_id);
  }
  anim__create_views_free(&views);
  return rc;
}

int anim_client_characters_create_mode(anim_client_t *client, const char *database, const anim_character_mode_t *mode,
                                       const anim_character_params_t *params,
                                       const anim_character_placement_t *placements, int n, uint64_t *out_ids,
                                       int timeout_ms) {
  if (!client || !out_ids || n < 1) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  int rc;
  ANIM__CLIENT_RUN(rc, client, timeout_ms, out_ids, (size_t)n * sizeof *out_ids,
                   anim_client_characters_create_send(client, database, mode, params, placements, n, NULL, NULL, &id_));
  return rc;
}

int anim_client_characters_create(anim_client_t *client, const char *database, const anim_character_params_t *params,
                                  const anim_character_placement_t *placements, int n, uint64_t *out_ids,
                                  int timeout_ms) {
  return anim_client_characters_create_mode(client, database, NULL, params, placements, n, out_ids, timeout_ms);
}

/* ---- destroy, input: answered by a status and a number ------------------------------------------ */

static void destroy_complete(anim_client_t *client, anim__pending_t *p, int status, const Animserver__Response *r) {
  uint64_t destroyed = status == 0 && r->destroy_characters ? r->destroy_characters->destroyed : 0;
  anim__client_complete_status(client, p, status, destroyed);
}

int anim_client_characters_destroy_send(anim_client_t *client, const uint64_t *ids, int n, anim_status_cb cb,
                                        void *data, uint64_t *out_id) {
  if (!client || n < 0 || (n && !ids)) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__DestroyCharactersRequest destroy = ANIMSERVER__DESTROY_CHARACTERS_REQUEST__INIT;
  destroy.n_characters = (size_t)n;
  destroy.characters = (uint64_t *)ids;
  request.body_case = ANIMSERVER__REQUEST__BODY_DESTROY_CHARACTERS;
  request.destroy_characters = &destroy;
  return anim__client_send(client, &request, ANIMSERVER__RESPONSE__BODY_DESTROY_CHARACTERS, destroy_complete,
                           (anim__cb_fn)cb, data, out_id);
}

int anim_client_characters_destroy(anim_client_t *client, const uint64_t *ids, int n, int timeout_ms) {
  if (!client) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  uint64_t destroyed;
  int rc;
  ANIM__CLIENT_RUN(rc, client, timeout_ms, &destroyed, sizeof destroyed,
                   anim_client_characters_destroy_send(client, ids, n, NULL, NULL, &id_));
  return rc;
}

static void input_complete(anim_client_t *client, anim__pending_t *p, int status, const Animserver__Response *r) {
  anim__client_complete_status(client, p, status, status == 0 && r->set_inputs ? r->set_inputs->tick : 0);
}

int anim_client_characters_set_input_send(anim_client_t *client, const uint64_t *ids,
                                          const anim_character_input_t *inputs, int n, anim_status_cb cb, void *data,
                                          uint64_t *out_id) {
  if (!client) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  anim__input_views_t views;
  int rc = anim__inputs_to_proto(ids, inputs, n, &views);
  if (rc) return anim__client_refuse(client, rc, __func__);
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  request.body_case = ANIMSERVER__REQUEST__BODY_SET_INPUTS;
  request.set_inputs = &views.set;
  rc = anim__client_send(client, &request, ANIMSERVER__RESPONSE__BODY_SET_INPUTS, input_complete, (anim__cb_fn)cb,
                         data, out_id);
  anim__input_views_free(&views);
  return rc;
}

int anim_client_characters_set_input(anim_client_t *client, const uint64_t *ids, const anim_character_input_t *inputs,
                                     int n, uint64_t *out_tick, int timeout_ms) {
  if (!client) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  uint64_t tick = 0;
  int rc;
  ANIM__CLIENT_RUN(rc, client, timeout_ms, &tick, sizeof tick,
                   anim_client_characters_set_input_send(client, ids, inputs, n, NULL, NULL, &id_));
  if (rc == 0 && out_tick) *out_tick = tick;
  return rc;
}

/* ---- state ----------------------------------------------------------------------------------- */

static void state_complete(anim_client_t *client, anim__pending_t *p, int status, const Animserver__Response *r) {
  anim_character_state_t *state = NULL;
  if (status == 0) status = anim__client_check_answer(client, anim__character_state_from(r->character_state, &state));
  if (anim__pending_deliver(p, status, &state, sizeof state)) return;
  anim_character_state_cb cb = (anim_character_state_cb)p->cb;
  if (cb) cb(client, p->id, status, state, p->data);
  anim_character_state_free(state);
}

int anim_client_character_state_send(anim_client_t *client, uint64_t id, int offsets, anim_character_state_cb cb,
                                     void *data, uint64_t *out_id) {
  if (!client) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__CharacterStateRequest state = ANIMSERVER__CHARACTER_STATE_REQUEST__INIT;
  state.character = id;
  state.offsets = offsets ? 1 : 0;
  request.body_case = ANIMSERVER__REQUEST__BODY_CHARACTER_STATE;
  request.character_state = &state;
  return anim__client_send(client, &request, ANIMSERVER__RESPONSE__BODY_CHARACTER_STATE, state_complete,
                           (anim__cb_fn)cb, data, out_id);
}

int anim_client_character_state(anim_client_t *client, uint64_t id, int offsets, anim_character_state_t **out_state,
                                int timeout_ms) {
  if (!client || !out_state) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  *out_state = NULL;
  int rc;
  ANIM__CLIENT_RUN(rc, client, timeout_ms, out_state, sizeof *out_state,
                   anim_client_character_state_send(client, id, offsets, NULL, NULL, &id_));
  return rc;
}
