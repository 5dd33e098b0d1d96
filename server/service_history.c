/*
 * service_history.c: the debugger's requests: a character's history turned
 * on or off (set_history), a span of it read (character_history), its
 * controller parameters changed (set_character_params).
 *
 * Every step runs on the loop between ticks (SRV_SERVICE_CROWD), so the
 * characters and their histories may be read and changed freely. A history
 * is allocated here, once, when turned on (core/character/history.h): the
 * tick only writes into it. Its bytes are part of the character's memory
 * (actor_matching.c's heap_bytes, re-measured here) and are held against
 * two limits, the server's and the owner's (--max-history-memory,
 * --max-history-memory-per-connection), summed over the characters when
 * asked: turning a history on is rare, and nothing then has to be kept in
 * step as characters come and go.
 *
 * Who may: only the owner turns a history on or off or changes parameters
 * (ANIM_EPERM otherwise); anyone may read a history, as character_state.
 * What it does not: kinds other than motion matching (ANIM_EUNSUPPORTED).
 */
#include <math.h>
#include <stdlib.h>
#include "anim_error.h"
#include "character/history.h"
#include "character/tuning.h"
#include "service.h"

/* Bytes a character's history takes as the limits count it. */
static size_t history_bytes(const anim_controller_t *c) {
  return c->history ? sizeof *c->history + c->history->bytes : 0;
}

/* The histories' bytes: the server's (every character's) and owner's, but
 * for except's. */
static void histories(const srv_crowd_t *crowd, uint64_t owner, const srv_actor_t *except, uint64_t *out_all,
                      uint64_t *out_owner) {
  uint32_t cursor;
  *out_all = *out_owner = 0;
  for (srv_actor_t *a = srv_crowd_first(crowd, &cursor); a; a = srv_crowd_next(crowd, &cursor)) {
    if (a == except || !a->kind->controller) continue;
    size_t bytes = history_bytes(a->kind->controller(a->character));
    *out_all += bytes;
    if (a->owner == owner) *out_owner += bytes;
  }
}

/* The caller's motion-matching character named by field, or NULL with the response failed. */
static srv_actor_t *controller_actor(const srv_service_ctx_t *ctx, uint64_t id, const char *field, int owned,
                                     srv_response_t *out) {
  srv_actor_t *a = srv_crowd_find(ctx->env->crowd, id);
  if (!a)
    srv_response_fail(out, ANIM_ENOTFOUND, "%s = %llu: no such character", field, (unsigned long long)id);
  else if (owned && a->owner != ctx->connection_id)
    srv_response_fail(out, ANIM_EPERM, "%s = %llu: the character belongs to another connection", field,
                      (unsigned long long)id);
  else if (!a->kind->controller)
    srv_response_fail(out, ANIM_EUNSUPPORTED, "%s = %llu: a %s character has no motion-matching controller "
                      "(MODE_MOTION_MATCHING only)", field, (unsigned long long)id, a->kind->name);
  else
    return a;
  return NULL;
}

static int set_history(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  const srv_set_history_request_t *req = &request->body.set_history;
  const srv_config_t *config = ctx->env->config;
  srv_crowd_t *crowd = ctx->env->crowd;
  srv_actor_t *a = controller_actor(ctx, req->character, "set_history.character", 1, out);
  if (!a) return out->error;
  anim_controller_t *c = a->kind->controller(a->character);
  srv_set_history_response_t *res = &out->body.set_history;
  if (req->seconds == 0.0f) { /* off */
    if (c->history) anim_history_free(c->history), free(c->history), c->history = NULL;
    srv_crowd_remeasure(crowd, a);
    return 0;
  }
  if (req->seconds > config->max_history_seconds)
    return srv_response_fail(out, ANIM_ERANGE, "set_history.seconds = %g: at most %g s (--max-history-seconds)",
                             req->seconds, config->max_history_seconds);
  double ticks = ceil((double)req->seconds * config->tick_rate);
  int capacity = ticks < 1.0 ? 1 : (int)ticks;
  size_t bytes = sizeof(anim_history_t) + anim_history_bytes(c->db, capacity, req->candidates);
  uint64_t all, owner;
  histories(crowd, a->owner, a, &all, &owner); /* this character's old history is replaced */
  if (config->max_history_memory_per_connection && owner + bytes > config->max_history_memory_per_connection)
    return srv_response_fail(out, ANIM_ELIMIT, "set_history: this connection's histories would take %llu bytes, "
                             "at most %zu (--max-history-memory-per-connection)", (unsigned long long)(owner + bytes),
                             config->max_history_memory_per_connection);
  if (config->max_history_memory && all + bytes > config->max_history_memory)
    return srv_response_fail(out, ANIM_ELIMIT, "set_history: the server's histories would take %llu bytes, at "
                             "most %zu (--max-history-memory)", (unsigned long long)(all + bytes),
                             config->max_history_memory);
  anim_history_t *h = malloc(sizeof *h);
  if (!h) return ANIM_ENOMEM;
  /* Stamped with the crowd's tick, read as each record is written. */
  int rc = anim_history_init(h, c->db, capacity, req->candidates, &crowd->tick, 0);
  if (rc) {
    free(h);
    return srv_response_fail(out, rc, "set_history: %s", anim_strerror(rc));
  }
  if (c->history) anim_history_free(c->history), free(c->history);
  c->history = h;
  srv_crowd_remeasure(crowd, a);
  res->capacity = (uint32_t)capacity;
  res->bytes = history_bytes(c);
  res->tick = crowd->tick + 1;
  return 0;
}

/* Index of the first record held whose tick is >= tick (held when none). */
static uint64_t lower_bound(const anim_history_t *h, uint64_t tick) {
  uint64_t lo = 0, hi = anim_history_held(h);
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (anim_history_at(h, mid)->tick < tick) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

static int character_history(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  const srv_character_history_request_t *req = &request->body.character_history;
  srv_actor_t *a = controller_actor(ctx, req->character, "character_history.character", 0, out);
  if (!a) return out->error;
  const anim_controller_t *c = a->kind->controller(a->character);
  const anim_history_t *h = c->history;
  unsigned long long id = (unsigned long long)req->character;
  if (!h)
    return srv_response_fail(out, ANIM_ENOTFOUND, "character_history.character = %llu: its history is off "
                             "(set_history turns it on)", id);
  srv_character_history_response_t *res = &out->body.character_history;
  if (anim_history_span(h, &res->first_held, &res->last_held) != 0)
    return srv_response_fail(out, ANIM_ERANGE, "character_history: character %llu's history holds no tick yet "
                             "(it records from the next tick)", id);
  double rate = ctx->env->config->tick_rate;
  uint64_t held = anim_history_held(h);
  if (req->last_seconds > 0.0f) {
    double length = h->capacity / rate;
    if (req->last_seconds > length + 0.5 / rate)
      return srv_response_fail(out, ANIM_ERANGE, "character_history.last_seconds = %g: character %llu's history "
                               "is %g s long (%d ticks)", req->last_seconds, id, length, h->capacity);
    uint64_t want = (uint64_t)ceil((double)req->last_seconds * rate - 1e-6);
    res->count = want < held ? want : held;
    res->first = held - res->count;
  } else {
    if (req->from_tick < res->first_held || req->to_tick > res->last_held)
      return srv_response_fail(out, ANIM_ERANGE, "character_history.%s = %llu: character %llu's history holds "
                               "ticks %llu..%llu", req->from_tick < res->first_held ? "from_tick" : "to_tick",
                               (unsigned long long)(req->from_tick < res->first_held ? req->from_tick : req->to_tick),
                               id, (unsigned long long)res->first_held, (unsigned long long)res->last_held);
    res->first = lower_bound(h, req->from_tick);
    res->count = lower_bound(h, req->to_tick + 1) - res->first;
  }
  res->history = h;
  res->poses = req->poses, res->queries = req->queries;
  res->tick_rate = (float)rate;
  out->entry = srv_db_entry_retain(a->entry); /* the encoder reads names and the version */
  return 0;
}

/* The given (non-zero; flags >= 0) fields of given over current. */
static anim_controller_params_t merged(const anim_controller_params_t *current, const anim_controller_params_t *given) {
  anim_controller_params_t p = *current;
#define TAKE(field) \
  if (given->field != 0) p.field = given->field
  TAKE(search_interval);
  TAKE(inertialize_halflife);
  TAKE(velocity_halflife);
  TAKE(rotation_halflife);
  TAKE(forward_speed);
  TAKE(side_speed);
  TAKE(back_speed);
  TAKE(ignore_surrounding);
  TAKE(ignore_range_end);
  TAKE(transition_cost);
  TAKE(replan_threshold);
  TAKE(input_f);
  TAKE(input_zeta);
  TAKE(input_r);
  TAKE(warp.rate_min);
  TAKE(warp.rate_max);
  TAKE(warp.orient_max);
  TAKE(warp.stride_min);
  TAKE(warp.stride_max);
  TAKE(warp.steer_max);
#undef TAKE
  /* The warps' flags: -1 not given (a call that leaves them out keeps them). */
#define TAKE_FLAG(field) \
  if (given->field >= 0) p.field = given->field
  TAKE_FLAG(warp.rate);
  TAKE_FLAG(warp.stand);
  TAKE_FLAG(warp.orient);
  TAKE_FLAG(warp.stride);
  TAKE_FLAG(warp.steer);
#undef TAKE_FLAG
  return p;
}

static int set_character_params(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  const srv_set_character_params_request_t *req = &request->body.set_character_params;
  srv_actor_t *a = srv_crowd_find(ctx->env->crowd, req->character);
  /* A kind that takes some of the parameters (graph characters: the
   * warps), through its own hooks; the rest are controllers. */
  if (a && a->owner == ctx->connection_id && !a->kind->controller && a->kind->set_params) {
    anim_controller_params_t next;
    a->kind->get_params(a->character, &next);
    next = merged(&next, &req->params);
    char err[256] = "";
    int rc = a->kind->set_params(a->character, &next, err, sizeof err);
    if (rc && err[0]) return srv_response_fail(out, rc, "set_character_params.params.%s", err);
    if (rc) return srv_response_fail(out, rc, "set_character_params.params: %s", anim_strerror(rc));
    out->body.set_character_params.tick = ctx->env->crowd->tick + 1;
    a->kind->get_params(a->character, &out->body.set_character_params.params);
    return 0;
  }
  a = controller_actor(ctx, req->character, "set_character_params.character", 1, out);
  if (!a) return out->error;
  anim_controller_t *c = a->kind->controller(a->character);
  anim_controller_params_t next = merged(&c->params, &req->params);
  /* The codec checked each field; this checks them together, and applies all or nothing. */
  int rc = anim_controller_set_params(c, &next);
  if (rc) return srv_response_fail(out, rc, "set_character_params.params: %s", anim_strerror(rc));
  out->body.set_character_params.tick = ctx->env->crowd->tick + 1;
  out->body.set_character_params.params = c->params;
  return 0;
}

const srv_service_t srv_service_set_history = {.handle = set_history, .flags = SRV_SERVICE_CROWD};
const srv_service_t srv_service_character_history = {.handle = character_history, .flags = SRV_SERVICE_CROWD};
const srv_service_t srv_service_set_character_params = {.handle = set_character_params, .flags = SRV_SERVICE_CROWD};
