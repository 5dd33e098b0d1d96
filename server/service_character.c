/*
 * service_character.c: create, destroy, steer and inspect characters, and
 * subscribe to their poses.
 *
 * Every step here runs on the loop between ticks (the dispatcher parks these
 * requests while a tick is in flight), so it may read and change actors
 * freely (a create whose kind built on the pool, a tracker's fit model, makes its
 * characters in its finish step, which waits for the tick's end too). A
 * character is steered (set_inputs, set_trackers) or destroyed only by the
 * connection that created it (ANIM_EPERM otherwise); anyone may read its
 * state or stream it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "crowd.h"
#include "service.h"
#include "stream.h"

/* ---- create: the kind of the request's mode sets its characters up ---- */

static const srv_actor_kind_t *kind_of(const srv_request_t *request) {
  return srv_actor_kind_for(request->body.create_characters.mode);
}

/* The database, and what the kind finds cached (actor.h, prepare). */
static int create_prepare(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  int rc = srv_service_acquire_database(ctx, request, out);
  const srv_actor_kind_t *kind = kind_of(request);
  if (rc || !kind || !kind->prepare) return rc;
  return kind->prepare(&request->body.create_characters, out);
}

/* What the kind must build goes to the pool; the characters are made by finish. */
static int create_off_loop(const srv_request_t *request, const srv_response_t *prepared) {
  (void)request;
  return prepared->body.create_characters.build;
}

static int create_build(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  (void)ctx;
  if (!out->body.create_characters.build) return 0;
  return kind_of(request)->build(&request->body.create_characters, out);
}

static int create(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  const srv_create_characters_request_t *req = &request->body.create_characters;
  const srv_actor_kind_t *kind = kind_of(request);
  if (out->body.create_characters.build && kind->built) kind->built(req, out); /* kept even if the rest fails */
  srv_crowd_t *crowd = ctx->env->crowd;
  const srv_config_t *config = ctx->env->config;
  int n = req->nplacements ? req->nplacements : 1;
  uint32_t owned = srv_crowd_owned_count(crowd, ctx->connection_id);
  if (owned + (uint32_t)n > config->max_characters_per_connection)
    return srv_response_fail(out, ANIM_ELIMIT,
                             "create_characters: this connection would own %u characters, at most %u "
                             "(--max-characters-per-connection)", owned + (uint32_t)n,
                             config->max_characters_per_connection);
  if (crowd->count + (uint32_t)n > config->max_characters)
    return srv_response_fail(out, ANIM_ELIMIT, "create_characters: the server would hold %u characters, at most %u "
                             "(--max-characters)", crowd->count + (uint32_t)n, config->max_characters);
  if (!kind)
    return srv_response_fail(out, ANIM_EUNSUPPORTED, "create_characters.mode = %d: not a CharacterMode this server has",
                             req->mode);
  int rc = anim_controller_params_validate(&req->params); /* defaults when another mode ignores them */
  if (rc) return srv_response_fail(out, rc, "create_characters.params: %s", anim_strerror(rc));
  const anim_database_t *db = &out->entry->db;
  for (int i = 0; i < req->nplacements; i++)
    if (req->placements[i].start_frame >= db->nframes)
      return srv_response_fail(out, ANIM_ERANGE, "create_characters.placements[%d].start_frame.frame = %d: database %s "
                               "has frames 0..%d", i, req->placements[i].start_frame, db->name, db->nframes - 1);
  uint64_t *ids = srv_response_alloc(out, (size_t)n * sizeof *ids);
  if (!ids) return ANIM_ENOMEM;
  void *shared = NULL;
  void (*release)(void *) = NULL;
  srv_actor_env_t env = {ctx->env->machines};
  if (kind->setup && (rc = kind->setup(&env, req, out, &shared, &release))) return rc;
  for (int i = 0; i < n && rc == 0; i++) {
    srv_placement_t origin = {0.0f, 0.0f, 0.0f, -1};
    const srv_placement_t *p = req->nplacements ? &req->placements[i] : &origin;
    srv_actor_setup_t setup = {req, vec3_make(p->x, 0.0f, p->z), p->facing, p->start_frame >= 0 ? p->start_frame : 0, 0,
                               shared};
    char err[160] = "";
    rc = srv_crowd_create(crowd, ctx->connection_id, out->entry, kind, &setup, &ids[i], err, sizeof err);
    if (rc) { /* all or nothing */
      for (int j = 0; j < i; j++) srv_crowd_destroy(crowd, srv_crowd_find(crowd, ids[j]));
      srv_response_fail(out, rc, "create_characters.placements[%d]: %s", i, err[0] ? err : anim_strerror(rc));
    }
  }
  if (release) release(shared); /* the characters hold their own references */
  if (rc) return rc;
  out->body.create_characters.ids = ids;
  out->body.create_characters.n = n;
  return 0;
}

srv_actor_t *srv_service_owned_actor(const srv_service_ctx_t *ctx, uint64_t id, const char *field, int index,
                                srv_response_t *out) {
  srv_actor_t *a = srv_crowd_find(ctx->env->crowd, id);
  if (!a)
    srv_response_fail(out, ANIM_ENOTFOUND, "%s[%d] = %llu: no such character", field, index, (unsigned long long)id);
  else if (a->owner != ctx->connection_id)
    srv_response_fail(out, ANIM_EPERM, "%s[%d] = %llu: the character belongs to another connection", field, index,
                      (unsigned long long)id);
  else
    return a;
  return NULL;
}

static int destroy(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  const srv_destroy_characters_request_t *req = &request->body.destroy_characters;
  for (int i = 0; i < req->n; i++)
    if (!srv_service_owned_actor(ctx, req->ids[i], "destroy_characters.characters", i, out)) return out->error;
  uint32_t destroyed = 0;
  for (int i = 0; i < req->n; i++) {
    srv_actor_t *a = srv_crowd_find(ctx->env->crowd, req->ids[i]);
    if (a) srv_crowd_destroy(ctx->env->crowd, a), destroyed++; /* a name given twice is destroyed once */
  }
  out->body.destroy_characters.destroyed = destroyed;
  return 0;
}

static int set_inputs(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  const srv_set_inputs_request_t *req = &request->body.set_inputs;
  /* All checked before any is applied (the codec checked every value). */
  for (int i = 0; i < req->n; i++) {
    const srv_actor_t *a = srv_service_owned_actor(ctx, req->items[i].character, "set_inputs.inputs", i, out);
    if (!a) return out->error;
    if (!a->kind->set_input)
      return srv_response_fail(out, ANIM_EUNSUPPORTED, "set_inputs.inputs[%d]: character %llu (%s) is not steered by "
                               "input", i, (unsigned long long)a->id, a->kind->name);
    if (!(a->kind->inputs & (1u << req->items[i].input.kind)))
      return srv_response_fail(out, ANIM_EUNSUPPORTED, "set_inputs.inputs[%d]: character %llu (%s) does not take this "
                               "input%s", i, (unsigned long long)a->id, a->kind->name,
                               a->kind->inputs == 1u << ANIM_INPUT_GOAL ? " (a goal only)" : "");
  }
  for (int i = 0; i < req->n; i++) {
    srv_actor_t *a = srv_crowd_find(ctx->env->crowd, req->items[i].character);
    int rc = a->kind->set_input(a->character, &req->items[i].input);
    if (rc) return srv_response_fail(out, rc, "set_inputs.inputs[%d]: %s", i, anim_strerror(rc));
  }
  out->body.set_inputs.tick = ctx->env->crowd->tick + 1;
  return 0;
}

/* set_trackers: every character's trackers checked before any is applied.
 * A tick ahead waits in each character (counted from the next tick in
 * seconds of ticks, as its clock runs); one already past is the next. */
static int set_trackers(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  const srv_set_trackers_request_t *req = &request->body.set_trackers;
  char err[160];
  uint64_t next = ctx->env->crowd->tick + 1, at = req->tick > next ? req->tick : next;
  if (at - next > SRV_TRACKERS_MAX_AHEAD)
    return srv_response_fail(out, ANIM_ERANGE, "set_trackers.tick = %llu: more than %u ticks ahead of the next (%llu)",
                             (unsigned long long)at, SRV_TRACKERS_MAX_AHEAD, (unsigned long long)next);
  double ahead = (double)(at - next) / ctx->env->config->tick_rate;
  for (int i = 0; i < req->n; i++) {
    srv_actor_t *a = srv_service_owned_actor(ctx, req->characters[i].character, "set_trackers.characters", i, out);
    if (!a) return out->error;
    if (!a->kind->set_trackers)
      return srv_response_fail(out, ANIM_EUNSUPPORTED, "set_trackers.characters[%d]: character %llu (%s) is not driven "
                               "by trackers (MODE_TRACKER)", i, (unsigned long long)a->id, a->kind->name);
    int rc = a->kind->set_trackers(a->character, &req->characters[i], ahead, 0, err, sizeof err);
    if (rc) return srv_response_fail(out, rc, "set_trackers.characters[%d]%s", i, err);
  }
  for (int i = 0; i < req->n; i++) {
    srv_actor_t *a = srv_crowd_find(ctx->env->crowd, req->characters[i].character);
    a->kind->set_trackers(a->character, &req->characters[i], ahead, 1, err, sizeof err);
    if (ahead > 0.0) srv_crowd_remeasure(ctx->env->crowd, a); /* its first set ahead made room for them */
  }
  out->body.set_trackers.tick = at;
  return 0;
}

static int character_state(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  const srv_character_state_request_t *req = &request->body.character_state;
  srv_actor_t *a = srv_crowd_find(ctx->env->crowd, req->character);
  if (!a)
    return srv_response_fail(out, ANIM_ENOTFOUND, "character_state.character = %llu: no such character",
                             (unsigned long long)req->character);
  out->entry = srv_db_entry_retain(a->entry); /* the encoder reads the version and range names */
  out->body.character_state.tick = ctx->env->crowd->tick;
  out->body.character_state.range = -1;
  out->body.character_state.play_rate = 1.0f; /* a kind that warps reports its own */
  out->body.character_state.stride_scale = 1.0f;
  out->body.character_state.mode = srv_actor_kind_mode(a->kind);
  if (req->query && !(out->body.character_state.query =
                          srv_response_alloc(out, (size_t)a->entry->db.features.cols * sizeof(float))))
    return ANIM_ENOMEM;
  return a->kind->state(a->character, req->offsets, out);
}

static int subscribe(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  return srv_stream_subscribe(ctx->subscriber, &request->body.subscribe, out);
}

static int update_subscription(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  return srv_stream_update(ctx->subscriber, &request->body.update_subscription, out);
}

static int unsubscribe(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  return srv_stream_unsubscribe(ctx->subscriber, request->body.unsubscribe.subscription, out);
}

const srv_service_t srv_service_create_characters = {.prepare = create_prepare,
                                                     .handle = create_build,
                                                     .finish = create,
                                                     .off_loop = create_off_loop,
                                                     .flags = SRV_SERVICE_CROWD};
const srv_service_t srv_service_destroy_characters = {.handle = destroy, .flags = SRV_SERVICE_CROWD};
const srv_service_t srv_service_set_inputs = {.handle = set_inputs, .flags = SRV_SERVICE_CROWD};
const srv_service_t srv_service_set_trackers = {.handle = set_trackers, .flags = SRV_SERVICE_CROWD};
const srv_service_t srv_service_character_state = {.handle = character_state, .flags = SRV_SERVICE_CROWD};
const srv_service_t srv_service_subscribe = {.handle = subscribe, .flags = SRV_SERVICE_CROWD};
const srv_service_t srv_service_update_subscription = {.handle = update_subscription, .flags = SRV_SERVICE_CROWD};
const srv_service_t srv_service_unsubscribe = {.handle = unsubscribe, .flags = SRV_SERVICE_CROWD};
