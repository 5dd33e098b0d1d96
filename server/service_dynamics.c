/*
 * service_dynamics.c: inverse_dynamics, on the thread pool: the body model
 * of the request's database (physics/body.h, built per request: its mass is
 * the request's), then physics/inverse_dynamics.h over the frames, copied
 * into the response's flat arrays. Bounds against the database are checked
 * here (the decoder does not know it); nothing is answered in part.
 */
#include <stdio.h>
#include <string.h>

#include "anim_error.h"
#include "inverse_dynamics.h"
#include "registry.h"
#include "service.h"

_Static_assert(sizeof(vec3) == 3 * sizeof(float), "vec3 arrays are copied as floats");

static int inverse_dynamics(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  (void)ctx;
  const srv_inverse_dynamics_request_t *req = &request->body.inverse_dynamics;
  srv_inverse_dynamics_response_t *r = &out->body.inverse_dynamics;
  const anim_database_t *db = &out->entry->db;
  if (req->stop > db->nframes)
    return srv_response_fail(out, ANIM_ERANGE, "inverse_dynamics.stop = %d: database %s has frames 0..%d", req->stop,
                             db->name, db->nframes - 1);
  int range = anim_database_range_of(db, req->start);
  if (range < 0 || req->stop > db->ranges[range].stop)
    return srv_response_fail(out, ANIM_ERANGE, "inverse_dynamics.stop = %d: frames [%d, %d) cross the end of range %s "
                             "[%d, %d)", req->stop, req->start, req->stop, range < 0 ? "?" : db->ranges[range].name,
                             range < 0 ? 0 : db->ranges[range].start, range < 0 ? 0 : db->ranges[range].stop);
  char err[256];
  anim_physics_model_options_t mo;
  anim_physics_model_options_default(&mo);
  if (req->total_mass > 0) mo.total_mass = req->total_mass;
  anim_physics_model_t *model = anim_physics_model_create(db, &mo, err, sizeof err);
  if (!model)
    return srv_response_fail(out, ANIM_EUNSUPPORTED, "inverse_dynamics.database = \"%s\": no body model: %s", db->name, err);
  anim_idyn_options_t o;
  anim_idyn_options_default(model, &o);
  if (req->max_root_torque > 0) o.max_root_torque = req->max_root_torque;
  if (req->max_root_force > 0) o.max_root_force = req->max_root_force;
  if (req->contact_height > 0) o.contact_height = req->contact_height;
  if (req->contact_speed > 0) o.contact_speed = req->contact_speed;
  o.step = req->step;
  anim_idyn_t *id = anim_idyn_create(model, db, &o, err, sizeof err);
  if (!id) {
    anim_physics_model_free(model);
    return srv_response_fail(out, ANIM_EUNSUPPORTED, "inverse_dynamics.database = \"%s\": %s", db->name, err);
  }
  int n = req->stop - req->start, nb = db->nbones, rc = 0;
  anim_idyn_frame_t *frames = srv_response_alloc(out, (size_t)n * sizeof *frames);
  vec3 *torques = srv_response_alloc(out, (size_t)n * (size_t)nb * sizeof *torques);
  float *block = srv_response_alloc(out, (size_t)n * (6 + 6 + 3 + 3 + 1 + 3) * sizeof(float));
  r->over_limit = srv_response_alloc(out, (size_t)n + 1);
  anim_idyn_summary_t sum;
  if (!frames || !torques || !block || !r->over_limit) rc = ANIM_ENOMEM;
  if (!rc && (rc = anim_idyn_run(id, db, req->start, req->stop, frames, torques, &sum, err, sizeof err)))
    srv_response_fail(out, rc, "inverse_dynamics.%s", err);
  if (!rc) {
    int feet[2];
    anim_idyn_feet(id, feet);
    r->start = req->start, r->nframes = n, r->nbones = nb, r->frame_rate = db->frame_rate;
    r->step = o.step ? o.step : (int)(db->frame_rate / 30.0f + 0.5f);
    r->total_mass = mo.total_mass;
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
  anim_physics_model_free(model);
  return rc;
}

static int always(const srv_request_t *request, const srv_response_t *prepared) {
  (void)request, (void)prepared;
  return 1;
}

const srv_service_t srv_service_inverse_dynamics = {
    .prepare = srv_service_acquire_database, .handle = inverse_dynamics, .off_loop = always};
