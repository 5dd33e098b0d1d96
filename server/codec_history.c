/*
 * codec_history.c: the debugger's requests on the wire: set_history,
 * character_history, set_character_params (see codec.h), and the
 * ControllerParams encoder character_state shares.
 *
 * A history span is encoded straight from the character's ring (the
 * response holds a view; the encoder runs before the next tick records).
 */
#include <math.h>
#include <string.h>
#include "anim_error.h"
#include "codec_internal.h"
#include "registry.h"

#define SET_BODY(out, CASE, field, value) ((out)->body_case = ANIMSERVER__RESPONSE__BODY_##CASE, (out)->field = (value))

int srv_decode_set_history(srv_decoder_t *d, const Animserver__SetHistoryRequest *in, srv_request_t *out) {
  srv_set_history_request_t *r = &out->body.set_history;
  int rc;
  if ((rc = srv_check_finite_value(d, "seconds", in->seconds))) return rc;
  if (in->seconds < 0.0f)
    return srv_decode_fail(d, ANIM_EINVAL, ".seconds = %g: must be >= 0 (0 turns the history off)", in->seconds);
  if ((rc = srv_check_max(d, "candidates", in->candidates, ANIM_HISTORY_MAX_CANDIDATES, ANIM_EINVAL))) return rc;
  r->character = in->character;
  r->seconds = in->seconds;
  r->candidates = in->candidates ? (int)in->candidates : SRV_HISTORY_DEFAULT_CANDIDATES;
  return 0;
}

int srv_decode_character_history(srv_decoder_t *d, const Animserver__CharacterHistoryRequest *in,
                                 srv_request_t *out) {
  srv_character_history_request_t *r = &out->body.character_history;
  int rc;
  if ((rc = srv_check_finite_value(d, "last_seconds", in->last_seconds))) return rc;
  if (in->last_seconds < 0.0f)
    return srv_decode_fail(d, ANIM_EINVAL, ".last_seconds = %g: must be >= 0", in->last_seconds);
  if (in->last_seconds > 0.0f && (in->from_tick || in->to_tick))
    return srv_decode_fail(d, ANIM_EINVAL, ".last_seconds: give either last_seconds or from_tick and to_tick");
  if (in->last_seconds == 0.0f && in->from_tick > in->to_tick)
    return srv_decode_fail(d, ANIM_EINVAL, ".from_tick = %llu: after to_tick = %llu",
                           (unsigned long long)in->from_tick, (unsigned long long)in->to_tick);
  if (in->last_seconds == 0.0f && in->to_tick == 0)
    return srv_decode_fail(d, ANIM_EINVAL, ": give last_seconds or a tick range (to_tick is 0)");
  r->character = in->character;
  r->from_tick = in->from_tick, r->to_tick = in->to_tick;
  r->last_seconds = in->last_seconds;
  r->poses = in->poses, r->queries = in->queries;
  return 0;
}

int srv_decode_set_character_params(srv_decoder_t *d, const Animserver__SetCharacterParamsRequest *in,
                                    srv_request_t *out) {
  srv_set_character_params_request_t *r = &out->body.set_character_params;
  memset(&r->params, 0, sizeof r->params); /* zero: not given, kept */
  r->params.warp.rate = r->params.warp.stand = r->params.warp.orient = r->params.warp.stride = -1;
  r->params.warp.steer = -1; /* flags: -1 not given */
  r->character = in->character;
  if (!in->params) return srv_decode_fail(d, ANIM_EINVAL, ".params is missing: give the parameters to change");
  return srv_decode_controller_params(d, in->params, &r->params);
}

Animserver__ControllerParams *srv_encode_controller_params(srv_encoder_t *e, const anim_controller_params_t *p) {
  Animserver__ControllerParams *m = SRV_ENCODER_NEW(e, Animserver__ControllerParams, ANIMSERVER__CONTROLLER_PARAMS__INIT);
  if (!m) return NULL;
  m->search_interval = (uint32_t)p->search_interval;
  m->inertialize_halflife = p->inertialize_halflife;
  m->velocity_halflife = p->velocity_halflife, m->rotation_halflife = p->rotation_halflife;
  m->forward_speed = p->forward_speed, m->side_speed = p->side_speed, m->back_speed = p->back_speed;
  m->ignore_surrounding = (uint32_t)p->ignore_surrounding, m->ignore_range_end = (uint32_t)p->ignore_range_end;
  m->transition_cost = p->transition_cost;
  m->replan_threshold = p->replan_threshold;
  m->input_f = p->input_f, m->input_zeta = p->input_zeta, m->input_r = p->input_r;
  m->no_play_rate = !p->warp.rate, m->no_stand_warp = !p->warp.stand, m->no_orientation_warp = !p->warp.orient;
  /* Every field set, the flags too (each its oneof's, for presence). */
  m->play_rate_switch_case = ANIMSERVER__CONTROLLER_PARAMS__PLAY_RATE_SWITCH_NO_PLAY_RATE;
  m->stand_warp_switch_case = ANIMSERVER__CONTROLLER_PARAMS__STAND_WARP_SWITCH_NO_STAND_WARP;
  m->orientation_warp_switch_case = ANIMSERVER__CONTROLLER_PARAMS__ORIENTATION_WARP_SWITCH_NO_ORIENTATION_WARP;
  m->stride_warp_switch_case = ANIMSERVER__CONTROLLER_PARAMS__STRIDE_WARP_SWITCH_NO_STRIDE_WARP;
  m->no_stride_warp = !p->warp.stride;
  m->stride_scale_min = p->warp.stride_min, m->stride_scale_max = p->warp.stride_max;
  m->root_steering_switch_case = ANIMSERVER__CONTROLLER_PARAMS__ROOT_STEERING_SWITCH_NO_ROOT_STEERING;
  m->no_root_steering = !p->warp.steer, m->root_steering_max = p->warp.steer_max;
  m->play_rate_min = p->warp.rate_min, m->play_rate_max = p->warp.rate_max;
  m->orientation_warp_max = p->warp.orient_max;
  return m;
}

void srv_encode_set_history(srv_encoder_t *e, const srv_response_t *in, Animserver__Response *out) {
  Animserver__SetHistoryResponse *m =
      SRV_ENCODER_NEW(e, Animserver__SetHistoryResponse, ANIMSERVER__SET_HISTORY_RESPONSE__INIT);
  if (!m) return;
  m->capacity = in->body.set_history.capacity;
  m->bytes = in->body.set_history.bytes;
  m->tick = in->body.set_history.tick;
  SET_BODY(out, SET_HISTORY, set_history, m);
}

void srv_encode_set_character_params(srv_encoder_t *e, const srv_response_t *in, Animserver__Response *out) {
  Animserver__SetCharacterParamsResponse *m =
      SRV_ENCODER_NEW(e, Animserver__SetCharacterParamsResponse, ANIMSERVER__SET_CHARACTER_PARAMS_RESPONSE__INIT);
  if (!m) return;
  m->tick = in->body.set_character_params.tick;
  m->params = srv_encode_controller_params(e, &in->body.set_character_params.params);
  SET_BODY(out, SET_CHARACTER_PARAMS, set_character_params, m);
}

static Animserver__Vec3 *vec3_message(srv_encoder_t *e, vec3 v) {
  Animserver__Vec3 *m = SRV_ENCODER_NEW(e, Animserver__Vec3, ANIMSERVER__VEC3__INIT);
  if (m) m->x = v.x, m->y = v.y, m->z = v.z;
  return m;
}

/* The reasons' bits as SearchReason values, in their order. */
static void encode_reasons(srv_encoder_t *e, uint32_t reasons, Animserver__HistoryTick *m) {
  static const struct {
    uint32_t bit;
    Animserver__SearchReason value;
  } table[] = {{ANIM_CONTROLLER_SEARCH_PERIODIC, ANIMSERVER__SEARCH_REASON__SEARCH_PERIODIC},
               {ANIM_CONTROLLER_SEARCH_REPLAN, ANIMSERVER__SEARCH_REASON__SEARCH_REPLAN},
               {ANIM_CONTROLLER_SEARCH_RANGE_END, ANIMSERVER__SEARCH_REASON__SEARCH_RANGE_END}};
  if (!reasons || !(m->reasons = srv_encoder_alloc(e, 3 * sizeof *m->reasons))) return;
  for (size_t i = 0; i < 3; i++)
    if (reasons & table[i].bit) m->reasons[m->n_reasons++] = table[i].value;
}

static Animserver__HistoryTick *encode_tick(srv_encoder_t *e, const anim_database_t *db,
                                            const srv_character_history_response_t *s,
                                            const anim_history_record_t *r) {
  const anim_history_t *h = s->history;
  Animserver__HistoryTick *m = SRV_ENCODER_NEW(e, Animserver__HistoryTick, ANIMSERVER__HISTORY_TICK__INIT);
  if (!m) return NULL;
  m->tick = r->tick;
  m->frame = (uint32_t)r->frame;
  m->searched = (r->flags & ANIM_HISTORY_SEARCHED) != 0;
  m->chosen = r->chosen;
  encode_reasons(e, r->reasons, m);
  m->transitioned = (r->flags & ANIM_HISTORY_TRANSITIONED) != 0;
  m->at_rest = (r->flags & ANIM_HISTORY_AT_REST) != 0;
  m->holding = (r->flags & ANIM_HISTORY_HOLDING) != 0;
  m->current_frame = r->current_frame;
  m->transition_cost = r->transition_cost;
  m->ignore_range_end = (uint32_t)r->ignore_range_end, m->ignore_surrounding = (uint32_t)r->ignore_surrounding;
  m->time_since_transition = r->time_since_transition;
  m->inertialize_halflife = r->halflife;
  m->offset_position = vec3_message(e, r->offset_position);
  m->offset_angle = r->offset_angle;
  if (r->ncandidates && (m->candidates = srv_encoder_alloc(e, (size_t)r->ncandidates * sizeof *m->candidates))) {
    const anim_search_hit_t *hits = anim_history_candidates(h, r);
    const float *costs = anim_history_group_costs(h, r);
    for (int i = 0; i < r->ncandidates; i++) {
      Animserver__HistoryCandidate *c =
          SRV_ENCODER_NEW(e, Animserver__HistoryCandidate, ANIMSERVER__HISTORY_CANDIDATE__INIT);
      if (!c) return m;
      int range = anim_database_range_of(db, hits[i].frame);
      c->frame = (uint32_t)hits[i].frame;
      c->range = range < 0 ? 0 : (uint32_t)range;
      c->range_name = range < 0 ? "" : (char *)db->ranges[range].name;
      c->cost = hits[i].cost;
      c->n_group_costs = (size_t)h->nterms; /* the ring's own floats: read before the next tick */
      c->group_costs = (float *)(costs + (size_t)i * (size_t)h->nterms);
      m->candidates[m->n_candidates++] = c;
    }
  }
  if (s->queries && (r->flags & ANIM_HISTORY_SEARCHED))
    m->n_query = (size_t)h->cols, m->query = (float *)anim_history_query(h, r);
  if (s->poses) {
    m->root_position = vec3_message(e, r->root_position);
    m->n_rotations = 4 * (size_t)h->nbones, m->rotations = (float *)anim_history_rotations(h, r);
  }
  return m;
}

void srv_encode_character_history(srv_encoder_t *e, const srv_response_t *in, Animserver__Response *out) {
  const srv_character_history_response_t *s = &in->body.character_history;
  const anim_database_t *db = &in->entry->db;
  const anim_feature_schema_t *schema = &db->features.schema;
  Animserver__CharacterHistoryResponse *m =
      SRV_ENCODER_NEW(e, Animserver__CharacterHistoryResponse, ANIMSERVER__CHARACTER_HISTORY_RESPONSE__INIT);
  if (!m || !(m->groups = srv_encoder_alloc(e, (size_t)schema->nterms * sizeof *m->groups + 1)) ||
      !(m->ticks = srv_encoder_alloc(e, (size_t)s->count * sizeof *m->ticks + 1)))
    return;
  m->database_version = db->version;
  m->first_tick = s->first_held, m->last_tick = s->last_held;
  m->capacity = (uint32_t)s->history->capacity;
  m->tick_rate = s->tick_rate;
  for (int t = 0; t < schema->nterms; t++) {
    char *label = srv_encoder_alloc(e, 96);
    if (!label) return;
    srv_feature_term_label(&schema->terms[t], label, 96);
    m->groups[m->n_groups++] = label;
  }
  for (uint64_t i = 0; i < s->count; i++) {
    Animserver__HistoryTick *t = encode_tick(e, db, s, anim_history_at(s->history, s->first + i));
    if (!t) return;
    m->ticks[m->n_ticks++] = t;
  }
  SET_BODY(out, CHARACTER_HISTORY, character_history, m);
}
