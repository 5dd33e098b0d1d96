/*
 * service_dynamics.c: inverse_dynamics, of a database range or of a
 * character's recent motion.
 *
 *  - prepare (loop, between ticks): the database's reference and its body
 *    model if it has one (body_models.h); a range checked against the
 *    database; a character's span checked against its history and its
 *    poses copied out of it (the ring is written by the next tick);
 *  - handle (pool): the body model built when the entry had none (never
 *    on the loop), then physics/inverse_dynamics.h over the frames on a
 *    private copy of it (the request's mass scales the copy), copied into
 *    the response's flat arrays;
 *  - finish (loop): a model the handle built becomes the entry's, so the
 *    next request (and the physical characters) find it.
 * Nothing is answered in part.
 *
 * A character's span: ticks are the crowd's, each record stamped with the
 * tick it was shown at. A late tick folds skipped deadlines into its dt
 * and the clock passes over them; those ticks have no record and are
 * interpolated between their neighbours (counted in ticks_filled), so frame
 * i is always tick first_tick + i at the tick rate.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "anim_error.h"
#include "body_models.h"
#include "character/history.h"
#include "inverse_dynamics.h"
#include "registry.h"
#include "service.h"

_Static_assert(sizeof(vec3) == 3 * sizeof(float), "vec3 arrays are copied as floats");

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

/* The character's span, checked, its poses copied into the response. */
static int prepare_character(const srv_service_ctx_t *ctx, const srv_inverse_dynamics_request_t *req,
                             srv_response_t *out) {
  srv_inverse_dynamics_response_t *r = &out->body.inverse_dynamics;
  unsigned long long id = (unsigned long long)req->character;
  srv_actor_t *a = srv_crowd_find(ctx->env->crowd, req->character);
  if (!a) return srv_response_fail(out, ANIM_ENOTFOUND, "inverse_dynamics.character = %llu: no such character", id);
  if (a->owner != ctx->connection_id)
    return srv_response_fail(out, ANIM_EPERM, "inverse_dynamics.character = %llu: the character belongs to another "
                             "connection", id);
  if (!a->kind->controller)
    return srv_response_fail(out, ANIM_EUNSUPPORTED, "inverse_dynamics.character = %llu: a %s character keeps no "
                             "history (MODE_MOTION_MATCHING only)", id, a->kind->name);
  const anim_controller_t *c = a->kind->controller(a->character);
  const anim_history_t *h = c->history;
  if (!h)
    return srv_response_fail(out, ANIM_ENOTFOUND, "inverse_dynamics.character = %llu: its history is off (set_history "
                             "turns it on; inverse dynamics reads the poses it recorded)", id);
  uint64_t first_held, last_held;
  if (anim_history_span(h, &first_held, &last_held) != 0)
    return srv_response_fail(out, ANIM_ERANGE, "inverse_dynamics.%s: character %llu's history holds no tick yet",
                             req->seconds > 0.0f ? "seconds" : "to_tick", id);
  double rate = ctx->env->config->tick_rate;
  uint64_t from, to;
  if (req->seconds > 0.0f) {
    double length = h->capacity / rate;
    uint64_t want = (uint64_t)ceil((double)req->seconds * rate - 1e-6);
    if (req->seconds > length + 0.5 / rate)
      return srv_response_fail(out, ANIM_ERANGE, "inverse_dynamics.seconds = %g: character %llu's history is %g s long "
                               "(%d ticks; set_history sets it)", req->seconds, id, length, h->capacity);
    if (want > last_held - first_held + 1)
      return srv_response_fail(out, ANIM_ERANGE, "inverse_dynamics.seconds = %g: character %llu's history holds "
                               "%.2f s so far (ticks %llu..%llu)", req->seconds, id,
                               (double)(last_held - first_held + 1) / rate, (unsigned long long)first_held,
                               (unsigned long long)last_held);
    if (want < 3)
      return srv_response_fail(out, ANIM_ERANGE, "inverse_dynamics.seconds = %g: %llu ticks, the differences need 3",
                               req->seconds, (unsigned long long)want);
    if (want > ctx->env->config->max_pose_frames)
      return srv_response_fail(out, ANIM_ELIMIT, "inverse_dynamics.seconds = %g: %llu ticks, at most %u "
                               "(--max-pose-frames)", req->seconds, (unsigned long long)want,
                               ctx->env->config->max_pose_frames);
    from = last_held - want + 1, to = last_held;
  } else {
    from = req->from_tick, to = req->to_tick; /* the codec checked from <= to, 3 <= count <= max_pose_frames */
    if (to > last_held)
      return srv_response_fail(out, ANIM_ERANGE, "inverse_dynamics.to_tick = %llu: not yet shown: character %llu's "
                               "history holds ticks %llu..%llu", (unsigned long long)to, id,
                               (unsigned long long)first_held, (unsigned long long)last_held);
    if (from < first_held)
      return srv_response_fail(out, ANIM_ERANGE, "inverse_dynamics.from_tick = %llu: no longer held: character %llu's "
                               "history holds ticks %llu..%llu", (unsigned long long)from, id,
                               (unsigned long long)first_held, (unsigned long long)last_held);
  }
  int n = (int)(to - from + 1), nb = c->db->nbones;
  r->positions = srv_response_alloc(out, (size_t)n * (size_t)nb * sizeof *r->positions);
  r->rotations = srv_response_alloc(out, (size_t)n * (size_t)nb * sizeof *r->rotations);
  if (!r->positions || !r->rotations) return ANIM_ENOMEM;
  /* A tick each: the record stamped with it, or the two around it blended
   * (the records are sorted by tick; from and to are held). */
  uint64_t i = lower_bound(h, from);
  for (int f = 0; f < n; f++) {
    uint64_t tick = from + (uint64_t)f;
    const anim_history_record_t *next = anim_history_at(h, i);
    while (next && next->tick < tick) next = anim_history_at(h, ++i);
    vec3 *pp = r->positions + (size_t)f * nb;
    quat *pq = r->rotations + (size_t)f * nb;
    if (next->tick == tick) {
      memcpy(pp, anim_history_positions(h, next), (size_t)nb * sizeof *pp);
      memcpy(pq, anim_history_rotations(h, next), (size_t)nb * sizeof *pq);
      continue;
    }
    const anim_history_record_t *prev = anim_history_at(h, i - 1); /* i > 0: from is held */
    float t = (float)(tick - prev->tick) / (float)(next->tick - prev->tick);
    const vec3 *p0 = anim_history_positions(h, prev), *p1 = anim_history_positions(h, next);
    const quat *q0 = anim_history_rotations(h, prev), *q1 = anim_history_rotations(h, next);
    for (int b = 0; b < nb; b++) pp[b] = vec3_lerp(p0[b], p1[b], t), pq[b] = quat_slerp_shortest(q0[b], q1[b], t);
    r->ticks_filled++;
  }
  r->character = req->character, r->first_tick = from, r->nposes = n, r->tick_rate = (float)rate;
  out->entry = srv_db_entry_retain(a->entry);
  return 0;
}

static int prepare(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  const srv_inverse_dynamics_request_t *req = &request->body.inverse_dynamics;
  int rc = req->character ? prepare_character(ctx, req, out) : srv_service_acquire_database(ctx, request, out);
  if (rc || out->error) return rc ? rc : out->error;
  out->body.inverse_dynamics.model = out->entry->physics;
  if (req->character) return 0;
  const anim_database_t *db = &out->entry->db;
  if (req->stop > db->nframes)
    return srv_response_fail(out, ANIM_ERANGE, "inverse_dynamics.stop = %d: database %s has frames 0..%d", req->stop,
                             db->name, db->nframes - 1);
  int range = anim_database_range_of(db, req->start);
  if (range < 0 || req->stop > db->ranges[range].stop)
    return srv_response_fail(out, ANIM_ERANGE, "inverse_dynamics.stop = %d: frames [%d, %d) cross the end of range %s "
                             "[%d, %d)", req->stop, req->start, req->stop, range < 0 ? "?" : db->ranges[range].name,
                             range < 0 ? 0 : db->ranges[range].start, range < 0 ? 0 : db->ranges[range].stop);
  return 0;
}

static int inverse_dynamics(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  (void)ctx;
  const srv_inverse_dynamics_request_t *req = &request->body.inverse_dynamics;
  srv_inverse_dynamics_response_t *r = &out->body.inverse_dynamics;
  const anim_database_t *db = &out->entry->db;
  /* Built here, on the pool, when the database had none yet. */
  anim_physics_model_t *model = r->model ? r->model : srv_body_model_build(out, "inverse_dynamics.database");
  if (!model) return out->error;
  char err[256];
  anim_idyn_options_t o;
  anim_idyn_options_default(model, &o);
  anim_physics_model_info_t info;
  anim_physics_model_info(model, &info);
  float mass = req->total_mass > 0 ? req->total_mass : info.total_mass;
  o.total_mass = mass;
  o.max_root_force = 0.1f * 9.81f * mass; /* the default: a tenth of this body's weight */
  if (req->max_root_torque > 0) o.max_root_torque = req->max_root_torque;
  if (req->max_root_force > 0) o.max_root_force = req->max_root_force;
  if (req->contact_height > 0) o.contact_height = req->contact_height;
  if (req->contact_speed > 0) o.contact_speed = req->contact_speed;
  o.step = req->step;
  anim_idyn_t *id = anim_idyn_create(model, db, &o, err, sizeof err);
  if (!id) return srv_response_fail(out, ANIM_EUNSUPPORTED, "inverse_dynamics.database = \"%s\": %s", db->name, err);
  int n = req->character ? r->nposes : req->stop - req->start, nb = db->nbones, rc = 0;
  float rate = req->character ? r->tick_rate : db->frame_rate;
  anim_idyn_frame_t *frames = srv_response_alloc(out, (size_t)n * sizeof *frames);
  vec3 *torques = srv_response_alloc(out, (size_t)n * (size_t)nb * sizeof *torques);
  float *block = srv_response_alloc(out, (size_t)n * (6 + 6 + 3 + 3 + 1 + 3) * sizeof(float));
  r->over_limit = srv_response_alloc(out, (size_t)n + 1);
  anim_idyn_summary_t sum;
  if (!frames || !torques || !block || !r->over_limit) rc = ANIM_ENOMEM;
  else if (req->character)
    rc = anim_idyn_run_poses(id, r->positions, r->rotations, n, rate, 0, n, frames, torques, &sum, err, sizeof err);
  else
    rc = anim_idyn_run(id, db, req->start, req->stop, frames, torques, &sum, err, sizeof err);
  if (rc && rc != ANIM_ENOMEM)
    srv_response_fail(out, rc, "inverse_dynamics.%s%s", req->character ? "character's poses: " : "", err);
  if (!rc) {
    int feet[2];
    anim_idyn_feet(id, feet);
    r->start = req->character ? 0 : req->start, r->nframes = n, r->nbones = nb, r->frame_rate = rate;
    int k = (int)lroundf(rate / 30.0f); /* inverse_dynamics.h's default step */
    r->step = o.step ? o.step : k < 1 ? 1 : k;
    r->total_mass = mass;
    r->torques = (float *)torques; /* vec3 is three packed floats */
    r->foot_forces = block, r->foot_cops = block + 6 * n, r->residual_forces = block + 12 * n;
    r->residual_torques = block + 15 * n, r->power = block + 18 * n, r->com = block + 19 * n;
    for (int i = 0; i < n; i++) {
      const anim_idyn_frame_t *f = &frames[i];
      memcpy(r->foot_forces + 6 * i, f->foot_force, 6 * sizeof(float));
      memcpy(r->foot_cops + 6 * i, f->foot_cop, 6 * sizeof(float));
      memcpy(r->residual_forces + 3 * i, &f->residual_force, 3 * sizeof(float));
      memcpy(r->residual_torques + 3 * i, &f->residual_torque, 3 * sizeof(float));
      memcpy(r->com + 3 * i, &f->com, 3 * sizeof(float));
      r->power[i] = f->power;
      r->over_limit[i] = (uint8_t)(f->over_limit != 0);
    }
    r->frames_over_limit = sum.frames_over_limit, r->worst_frame = sum.worst_frame;
    r->mean_residual_force = sum.mean_residual_force, r->max_residual_force = sum.max_residual_force;
    r->mean_residual_torque = sum.mean_residual_torque, r->max_residual_torque = sum.max_residual_torque;
    r->left_foot = feet[0], r->right_foot = feet[1];
  }
  anim_idyn_free(id);
  return rc;
}

/* Loop: the model the handle built becomes the entry's. */
static int finish(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  (void)ctx, (void)request;
  srv_body_model_install(out);
  return 0;
}

static int always(const srv_request_t *request, const srv_response_t *prepared) {
  (void)request, (void)prepared;
  return 1;
}

/* SRV_SERVICE_CROWD: prepare reads a character's history between ticks. */
const srv_service_t srv_service_inverse_dynamics = {
    .prepare = prepare, .handle = inverse_dynamics, .finish = finish, .off_loop = always, .flags = SRV_SERVICE_CROWD};
