/*
 * api_history.c: a character's history and live parameters (see
 * include/anim_client_history.h).
 *
 * Each request is a _send with its typed completion and the blocking form
 * (send, then wait for its id). A history answer is converted into one
 * block (the struct, its ticks, candidates, group costs, queries, poses and
 * group names), freed by anim_character_history_free.
 */
#include <stdlib.h>
#include <string.h>
#include "client_internal.h"
#include "convert.h"

/* ---- set_history ---------------------------------------------------------------------------- */

static void set_complete(anim_client_t *client, anim__pending_t *p, int status, const Animserver__Response *r) {
  anim_history_info_t info = {0, 0, 0};
  if (status == 0 && !r->set_history) status = anim__client_check_answer(client, ANIM_EPROTO);
  if (status == 0) info.capacity = r->set_history->capacity, info.bytes = r->set_history->bytes,
                   info.tick = r->set_history->tick;
  if (anim__pending_deliver(p, status, &info, sizeof info)) return;
  anim_history_set_cb cb = (anim_history_set_cb)p->cb;
  if (cb) cb(client, p->id, status, status ? NULL : &info, p->data);
}

int anim_client_history_set_send(anim_client_t *client, uint64_t character, float seconds, int candidates,
                                 anim_history_set_cb cb, void *data, uint64_t *out_id) {
  if (!client || candidates < 0 || !(seconds >= 0.0f)) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__SetHistoryRequest set = ANIMSERVER__SET_HISTORY_REQUEST__INIT;
  set.character = character, set.seconds = seconds, set.candidates = (uint32_t)candidates;
  request.body_case = ANIMSERVER__REQUEST__BODY_SET_HISTORY;
  request.set_history = &set;
  return anim__client_send(client, &request, ANIMSERVER__RESPONSE__BODY_SET_HISTORY, set_complete, (anim__cb_fn)cb,
                           data, out_id);
}

int anim_client_history_set(anim_client_t *client, uint64_t character, float seconds, int candidates,
                            anim_history_info_t *out_info, int timeout_ms) {
  if (!client) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  anim_history_info_t info;
  uint64_t id = 0;
  int rc = anim__client_ready(client, &timeout_ms);
  if (rc == 0) rc = anim_client_history_set_send(client, character, seconds, candidates, NULL, NULL, &id);
  rc = anim__client_wait(client, rc, id, &info, sizeof info, timeout_ms);
  if (rc == 0 && out_info) *out_info = info;
  return rc;
}

/* ---- character_history ---------------------------------------------------------------------- */

void anim_character_history_free(anim_character_history_t *history) { free(history); }

/* Carves n bytes (8-aligned) from *at. */
static void *take(char **at, size_t n) {
  void *p = *at;
  *at += (n + 7) & ~(size_t)7;
  return p;
}

static int history_from(const Animserver__CharacterHistoryResponse *m, anim_character_history_t **out) {
  *out = NULL;
  if (!m) return ANIM_EPROTO;
  /* Sizes first: one block for all of it. */
  size_t bytes = sizeof(anim_character_history_t) + 8 + m->n_groups * (sizeof(char *) + 8) +
                 m->n_ticks * (sizeof(anim_history_tick_t) + 8);
  for (size_t g = 0; g < m->n_groups; g++) bytes += strlen(m->groups[g]) + 8;
  for (size_t t = 0; t < m->n_ticks; t++) {
    const Animserver__HistoryTick *k = m->ticks[t];
    bytes += k->n_candidates * (sizeof(anim_history_candidate_t) + m->n_groups * sizeof(float) + 16) + 16;
    bytes += (k->n_query + k->n_rotations) * sizeof(float) + 16;
  }
  char *block = calloc(1, bytes), *at = block;
  if (!block) return ANIM_ENOMEM;
  anim_character_history_t *h = take(&at, sizeof *h);
  h->database_version = m->database_version;
  h->first_tick = m->first_tick, h->last_tick = m->last_tick;
  h->capacity = m->capacity, h->tick_rate = m->tick_rate;
  char **groups = take(&at, m->n_groups * sizeof *groups);
  for (size_t g = 0; g < m->n_groups; g++) {
    size_t len = strlen(m->groups[g]);
    groups[g] = memcpy(take(&at, len + 1), m->groups[g], len + 1);
  }
  h->groups = (const char *const *)groups, h->ngroups = (int)m->n_groups;
  anim_history_tick_t *ticks = take(&at, m->n_ticks * sizeof *ticks);
  for (size_t t = 0; t < m->n_ticks; t++) {
    const Animserver__HistoryTick *k = m->ticks[t];
    anim_history_tick_t *o = &ticks[t];
    o->tick = k->tick, o->frame = k->frame, o->searched = k->searched, o->chosen = k->chosen;
    for (size_t r = 0; r < k->n_reasons; r++)
      if (k->reasons[r] >= 1 && k->reasons[r] <= 3) o->reasons |= 1u << (k->reasons[r] - 1);
    o->transitioned = k->transitioned, o->at_rest = k->at_rest, o->holding = k->holding;
    o->current_frame = k->current_frame, o->transition_cost = k->transition_cost;
    o->ignore_range_end = (int)k->ignore_range_end, o->ignore_surrounding = (int)k->ignore_surrounding;
    anim_history_candidate_t *cands = take(&at, k->n_candidates * sizeof *cands);
    for (size_t c = 0; c < k->n_candidates; c++) {
      const Animserver__HistoryCandidate *in = k->candidates[c];
      cands[c].frame = in->frame, cands[c].range = in->range, cands[c].cost = in->cost;
      if (anim__name_from(cands[c].range_name, sizeof cands[c].range_name, in->range_name) != 0 ||
          in->n_group_costs != m->n_groups) {
        free(block);
        return ANIM_EPROTO;
      }
      float *costs = take(&at, m->n_groups * sizeof *costs);
      if (m->n_groups) memcpy(costs, in->group_costs, m->n_groups * sizeof *costs);
      cands[c].group_costs = costs;
    }
    o->candidates = cands, o->ncandidates = (int)k->n_candidates;
    float *query = take(&at, k->n_query * sizeof *query);
    if (k->n_query) memcpy(query, k->query, k->n_query * sizeof *query);
    o->query = k->n_query ? query : NULL, o->nquery = (int)k->n_query;
    o->time_since_transition = k->time_since_transition, o->inertialize_halflife = k->inertialize_halflife;
    anim__vec3_from(o->offset_position, k->offset_position);
    o->offset_angle = k->offset_angle;
    anim__vec3_from(o->root_position, k->root_position);
    float *rotations = take(&at, k->n_rotations * sizeof *rotations);
    if (k->n_rotations) memcpy(rotations, k->rotations, k->n_rotations * sizeof *rotations);
    o->rotations = k->n_rotations ? rotations : NULL, o->nbones = (int)(k->n_rotations / 4);
  }
  h->ticks = ticks, h->nticks = (int)m->n_ticks;
  *out = h;
  return 0;
}

static void get_complete(anim_client_t *client, anim__pending_t *p, int status, const Animserver__Response *r) {
  anim_character_history_t *h = NULL;
  if (status == 0) status = anim__client_check_answer(client, history_from(r->character_history, &h));
  if (anim__pending_deliver(p, status, &h, sizeof h)) return;
  anim_character_history_cb cb = (anim_character_history_cb)p->cb;
  if (cb) cb(client, p->id, status, h, p->data);
  anim_character_history_free(h);
}

int anim_client_history_get_send(anim_client_t *client, uint64_t character, const anim_history_span_t *span,
                                 anim_character_history_cb cb, void *data, uint64_t *out_id) {
  if (!client || !span || !(span->last_seconds >= 0.0f)) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__CharacterHistoryRequest get = ANIMSERVER__CHARACTER_HISTORY_REQUEST__INIT;
  get.character = character;
  get.from_tick = span->from_tick, get.to_tick = span->to_tick, get.last_seconds = span->last_seconds;
  get.poses = span->poses != 0, get.queries = span->queries != 0;
  request.body_case = ANIMSERVER__REQUEST__BODY_CHARACTER_HISTORY;
  request.character_history = &get;
  return anim__client_send(client, &request, ANIMSERVER__RESPONSE__BODY_CHARACTER_HISTORY, get_complete,
                           (anim__cb_fn)cb, data, out_id);
}

int anim_client_history_get(anim_client_t *client, uint64_t character, const anim_history_span_t *span,
                            anim_character_history_t **out_history, int timeout_ms) {
  if (!client || !out_history) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  *out_history = NULL;
  uint64_t id = 0;
  int rc = anim__client_ready(client, &timeout_ms);
  if (rc == 0) rc = anim_client_history_get_send(client, character, span, NULL, NULL, &id);
  return anim__client_wait(client, rc, id, out_history, sizeof *out_history, timeout_ms);
}

/* ---- set_character_params ------------------------------------------------------------------- */

static void params_complete(anim_client_t *client, anim__pending_t *p, int status, const Animserver__Response *r) {
  anim_character_params_t params;
  memset(&params, 0, sizeof params);
  if (status == 0 && !r->set_character_params) status = anim__client_check_answer(client, ANIM_EPROTO);
  if (status == 0) anim__controller_params_from(r->set_character_params->params, &params);
  if (anim__pending_deliver(p, status, &params, sizeof params)) return;
  anim_character_params_cb cb = (anim_character_params_cb)p->cb;
  if (cb) cb(client, p->id, status, status ? NULL : &params, p->data);
}

int anim_client_character_params_set_send(anim_client_t *client, uint64_t character,
                                          const anim_character_params_t *params, anim_character_params_cb cb,
                                          void *data, uint64_t *out_id) {
  if (!client || !params || params->search_interval < 0 || params->ignore_surrounding < 0 ||
      params->ignore_range_end < 0)
    return anim__client_refuse(client, ANIM_EINVAL, __func__);
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__SetCharacterParamsRequest set = ANIMSERVER__SET_CHARACTER_PARAMS_REQUEST__INIT;
  Animserver__ControllerParams wire = ANIMSERVER__CONTROLLER_PARAMS__INIT;
  anim__controller_params_to_proto(&wire, params);
  set.character = character, set.params = &wire;
  request.body_case = ANIMSERVER__REQUEST__BODY_SET_CHARACTER_PARAMS;
  request.set_character_params = &set;
  return anim__client_send(client, &request, ANIMSERVER__RESPONSE__BODY_SET_CHARACTER_PARAMS, params_complete,
                           (anim__cb_fn)cb, data, out_id);
}

int anim_client_character_params_set(anim_client_t *client, uint64_t character, const anim_character_params_t *params,
                                     anim_character_params_t *out_params, int timeout_ms) {
  if (!client) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  anim_character_params_t applied;
  uint64_t id = 0;
  int rc = anim__client_ready(client, &timeout_ms);
  if (rc == 0) rc = anim_client_character_params_set_send(client, character, params, NULL, NULL, &id);
  rc = anim__client_wait(client, rc, id, &applied, sizeof applied, timeout_ms);
  if (rc == 0 && out_params) *out_params = applied;
  return rc;
}
