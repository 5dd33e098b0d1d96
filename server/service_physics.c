/*
 * service_physics.c: push, set_body_modes and recover on physical
 * characters (MODE_PHYSICAL; the kind is actor_physical.c).
 *
 * Each runs on the loop between ticks, on a character the connection owns
 * (ANIM_EPERM otherwise) whose kind takes the request (ANIM_EUNSUPPORTED);
 * the kind checks it whole before taking it, so nothing is applied in part.
 * A push names the crowd tick it applies at (0: the next); the kind counts
 * it from the next tick, so it applies at that tick however late the
 * request came, as long as it came before.
 */
#include <stdio.h>
#include "anim_error.h"
#include "crowd.h"
#include "service.h"

static srv_actor_t *physical(const srv_service_ctx_t *ctx, uint64_t id, const char *request, srv_response_t *out) {
  srv_actor_t *a = srv_crowd_find(ctx->env->crowd, id);
  if (!a)
    srv_response_fail(out, ANIM_ENOTFOUND, "%s.character = %llu: no such character", request, (unsigned long long)id);
  else if (a->owner != ctx->connection_id)
    srv_response_fail(out, ANIM_EPERM, "%s.character = %llu: the character belongs to another connection", request,
                      (unsigned long long)id);
  else if (!a->kind->push)
    srv_response_fail(out, ANIM_EUNSUPPORTED, "%s.character = %llu: a %s character, not MODE_PHYSICAL", request,
                      (unsigned long long)id, a->kind->name);
  else
    return a;
  return NULL;
}

static int push(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  const srv_push_request_t *req = &request->body.push;
  srv_actor_t *a = physical(ctx, req->character, "push", out);
  if (!a) return out->error;
  uint64_t next = ctx->env->crowd->tick + 1, at = req->tick ? req->tick : next;
  if (at < next)
    return srv_response_fail(out, ANIM_ERANGE, "push.tick = %llu: already past (the next tick is %llu)",
                             (unsigned long long)at, (unsigned long long)next);
  if (at - next > SRV_PUSH_MAX_AHEAD)
    return srv_response_fail(out, ANIM_ERANGE, "push.tick = %llu: more than %u ticks ahead of the next (%llu)",
                             (unsigned long long)at, SRV_PUSH_MAX_AHEAD, (unsigned long long)next);
  char err[240] = "";
  int rc = a->kind->push(a->character, req, at - next, 0, err, sizeof err);
  if (rc) return srv_response_fail(out, rc, "%s", err);
  a->kind->push(a->character, req, at - next, 1, err, sizeof err);
  srv_crowd_remeasure(ctx->env->crowd, a); /* its first push made its body */
  out->body.push.tick = at;
  return 0;
}

static int set_body_modes(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  const srv_set_body_modes_request_t *req = &request->body.set_body_modes;
  srv_actor_t *a = physical(ctx, req->character, "set_body_modes", out);
  if (!a) return out->error;
  char err[240] = "";
  int rc = a->kind->set_body_modes(a->character, req, 0, err, sizeof err);
  if (rc) return srv_response_fail(out, rc, "%s", err);
  a->kind->set_body_modes(a->character, req, 1, err, sizeof err);
  srv_crowd_remeasure(ctx->env->crowd, a);
  out->body.set_body_modes.tick = ctx->env->crowd->tick + 1;
  return 0;
}

static int recover(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  srv_actor_t *a = physical(ctx, request->body.recover.character, "recover", out);
  if (!a) return out->error;
  a->kind->recover(a->character);
  out->body.recover.tick = ctx->env->crowd->tick + 1;
  return 0;
}

const srv_service_t srv_service_push = {.handle = push, .flags = SRV_SERVICE_CROWD};
const srv_service_t srv_service_set_body_modes = {.handle = set_body_modes, .flags = SRV_SERVICE_CROWD};
const srv_service_t srv_service_recover = {.handle = recover, .flags = SRV_SERVICE_CROWD};
