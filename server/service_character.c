/*
 * service_character.c: create, destroy, steer and inspect characters;
 * subscribe to their poses; server statistics.
 *
 * Every step here runs on the loop between ticks (the connection parks these
 * requests while a tick is in flight), so it may read and change actors
 * freely. A character is steered or destroyed only by the connection that
 * created it (ANIM_EPERM otherwise); anyone may read its state or stream it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include "anim_error.h"
#include "connection.h"
#include "crowd.h"
#include "metrics.h"
#include "scheduler.h"
#include "server.h"
#include "services.h"
#include "stream.h"

int srv_character_create(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  const srv_create_request_t *req = &request->body.create;
  srv_crowd_t *crowd = &ctx->server->crowd;
  const srv_config_t *config = ctx->config;
  int n = req->nplacements ? req->nplacements : 1;
  uint32_t owned = srv_crowd_owned_count(crowd, ctx->connection_id);
  if (owned + (uint32_t)n > config->max_characters_per_connection)
    return srv_response_fail(out, ANIM_ELIMIT, "this connection would own %u characters, at most %u",
                              owned + (uint32_t)n, config->max_characters_per_connection);
  if (crowd->count + (uint32_t)n > config->max_characters)
    return srv_response_fail(out, ANIM_ELIMIT, "the server would hold %u characters, at most %u",
                              crowd->count + (uint32_t)n, config->max_characters);
  int rc = anim_controller_params_validate(&req->params);
  if (rc) return srv_response_fail(out, rc, "params: %s", anim_strerror(rc));
  const anim_database_t *db = &out->entry->db;
  for (int i = 0; i < req->nplacements; i++)
    if (req->placements[i].start_frame >= db->nframes)
      return srv_response_fail(out, ANIM_ERANGE, "placements[%d].start_frame %d: the database has %d frames", i,
                                req->placements[i].start_frame, db->nframes);
  uint64_t *ids = malloc((size_t)n * sizeof *ids);
  if (!ids) return srv_response_fail(out, ANIM_ENOMEM, "out of memory");
  for (int i = 0; i < n; i++) {
    srv_placement_t origin = {0.0f, 0.0f, 0.0f, -1};
    const srv_placement_t *p = req->nplacements ? &req->placements[i] : &origin;
    rc = srv_crowd_create(crowd, ctx->connection_id, out->entry, &req->params, vec3_make(p->x, 0.0f, p->z), p->facing,
                           p->start_frame >= 0 ? p->start_frame : 0, &ids[i]);
    if (rc) { /* all or nothing */
      for (int j = 0; j < i; j++) srv_crowd_destroy(crowd, srv_crowd_find(crowd, ids[j]));
      free(ids);
      return srv_response_fail(out, rc, "placements[%d]: %s", i, anim_strerror(rc));
    }
  }
  out->body.create.ids = ids;
  out->body.create.n = n;
  return 0;
}

/* The actor named, steerable by this connection; else fails the response. */
static srv_actor_t *owned_actor(const srv_service_ctx_t *ctx, uint64_t id, const char *field, int index,
                                 srv_response_t *out) {
  srv_actor_t *a = srv_crowd_find(&ctx->server->crowd, id);
  if (!a) srv_response_fail(out, ANIM_ENOTFOUND, "%s[%d]: no character %llu", field, index, (unsigned long long)id);
  else if (a->owner != ctx->connection_id)
    srv_response_fail(out, ANIM_EPERM, "%s[%d]: character %llu belongs to another connection", field, index,
                       (unsigned long long)id);
  else return a;
  return NULL;
}

int srv_character_destroy(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  const srv_ids_request_t *req = &request->body.destroy;
  for (int i = 0; i < req->n; i++)
    if (!owned_actor(ctx, req->ids[i], "characters", i, out)) return out->error;
  uint32_t destroyed = 0;
  for (int i = 0; i < req->n; i++) {
    srv_actor_t *a = srv_crowd_find(&ctx->server->crowd, req->ids[i]);
    if (a) srv_crowd_destroy(&ctx->server->crowd, a), destroyed++; /* a name given twice is destroyed once */
  }
  out->body.destroyed = destroyed;
  return 0;
}

int srv_character_set_inputs(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  const srv_inputs_request_t *req = &request->body.inputs;
  /* All checked before any is applied. */
  for (int i = 0; i < req->n; i++) {
    if (!owned_actor(ctx, req->items[i].character, "inputs", i, out)) return out->error;
    int rc = anim_controller_input_validate(&req->items[i].input);
    if (rc) return srv_response_fail(out, rc, "inputs[%d]: %s (|stick| <= 1, speeds >= 0, finite values)", i,
                                      anim_strerror(rc));
  }
  for (int i = 0; i < req->n; i++)
    anim_controller_set_input(&srv_crowd_find(&ctx->server->crowd, req->items[i].character)->character,
                             &req->items[i].input);
  out->body.tick = ctx->server->crowd.tick + 1;
  return 0;
}

static int snapshot_offsets(const anim_controller_t *c, srv_inertialize_response_t *out) {
  size_t n = (size_t)c->db->nbones;
  float *block = malloc(n * 13 * sizeof *block);
  if (!block) return ANIM_ENOMEM;
  out->block = block;
  out->nbones = (int)n;
  out->offset_positions = block, out->offset_velocities = block + 3 * n;
  out->offset_rotations = block + 6 * n, out->offset_angular_velocities = block + 10 * n;
  memcpy(out->offset_positions, c->offset_positions, n * sizeof(vec3));
  memcpy(out->offset_velocities, c->offset_velocities, n * sizeof(vec3));
  memcpy(out->offset_rotations, c->offset_rotations, n * sizeof(quat));
  memcpy(out->offset_angular_velocities, c->offset_angular_velocities, n * sizeof(vec3));
  return 0;
}

int srv_character_state(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  const srv_state_request_t *req = &request->body.state;
  srv_actor_t *a = srv_crowd_find(&ctx->server->crowd, req->character);
  if (!a) return srv_response_fail(out, ANIM_ENOTFOUND, "no character %llu", (unsigned long long)req->character);
  const anim_controller_t *c = &a->character;
  srv_state_response_t *s = &out->body.state;
  out->entry = a->entry;
  a->entry->refs++; /* the encoder reads the version and range names */
  s->tick = ctx->server->crowd.tick;
  s->position = c->sim_position, s->velocity = c->sim_velocity, s->rotation = c->sim_rotation;
  s->angular_velocity = c->sim_angular_velocity, s->desired_velocity = c->desired_velocity;
  s->desired_rotation = c->desired_rotation;
  s->ntrajectory = c->ntrajectory;
  memcpy(s->trajectory, c->trajectory_positions, sizeof s->trajectory);
  s->frame = c->frame;
  s->range = anim_database_range_of(c->db, c->frame);
  s->time_since_transition = c->time_since_transition;
  s->halflife = c->params.inertialize_halflife;
  s->searches = c->searches, s->transitions = c->transitions;
  const anim_inertializer_t *in = &c->inertializer;
  float anchor[14] = {in->anchor_anim_position.x,  in->anchor_anim_position.y,  in->anchor_anim_position.z,
                      in->anchor_anim_rotation.w,  in->anchor_anim_rotation.x,  in->anchor_anim_rotation.y,
                      in->anchor_anim_rotation.z,  in->anchor_world_position.x, in->anchor_world_position.y,
                      in->anchor_world_position.z, in->anchor_world_rotation.w, in->anchor_world_rotation.x,
                      in->anchor_world_rotation.y, in->anchor_world_rotation.z};
  memcpy(s->inertializer.anchor, anchor, sizeof anchor);
  if (req->offsets && snapshot_offsets(c, &s->inertializer) != 0)
    return srv_response_fail(out, ANIM_ENOMEM, "out of memory");
  return 0;
}

int srv_character_subscribe(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  return srv_stream_subscribe(ctx->connection, &request->body.subscribe, out);
}

int srv_character_update_subscription(const srv_service_ctx_t *ctx, const srv_request_t *request,
                                       srv_response_t *out) {
  return srv_stream_update(ctx->connection, &request->body.subscription, out);
}

int srv_character_unsubscribe(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  return srv_stream_unsubscribe(ctx->connection, &request->body.subscription, out);
}

int srv_server_stats_handle(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  const srv_server_t *server = ctx->server;
  srv_stats_response_t *s = &out->body.stats;
  srv_scheduler_stats_t t;
  srv_scheduler_stats(&server->crowd.scheduler, &t);
  s->uptime_us = (srv_scheduler_now_ns() - server->start_ns) / 1000u;
  s->connections = server->nconnections;
  s->characters = server->crowd.count;
  s->requests = server->stats.requests, s->errors = server->stats.errors;
  s->tick_rate = (float)ctx->config->tick_rate;
  s->ticks = t.ticks, s->ticks_late = t.late, s->ticks_skipped = t.skipped;
  s->lateness_p50_us = t.lateness_p50_ns / 1000u, s->lateness_p99_us = t.lateness_p99_ns / 1000u;
  s->lateness_max_us = t.lateness_max_ns / 1000u;
  s->work_p50_us = t.work_p50_ns / 1000u, s->work_p99_us = t.work_p99_ns / 1000u;
  s->frames_sent = server->stats.frames_sent, s->frames_dropped = server->stats.frames_dropped;
  s->stream_bytes = server->stats.stream_bytes, s->poses_sent = server->stats.poses_sent;
  s->slow_subscribers_closed = server->stats.slow_subscribers_closed;
  srv_process_usage(&s->cpu_user_s, &s->cpu_system_s, &s->rss_bytes);
  s->character_bytes = srv_crowd_actor_bytes();
  srv_db_entry_t *def = srv_registry_acquire((srv_registry_t *)&server->registry, "default");
  if (def) {
    s->pose_buffer_bytes = srv_crowd_pose_buffer_bytes(&def->db);
    srv_db_entry_release(def);
  }
  return 0;
}
