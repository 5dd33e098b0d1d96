/*
 * service_fit.c: align (the Umeyama fit of two point sets, core/math/umeyama.h)
 * and fit_pose (a one-shot full-body fit to tracked points,
 * core/fit/pose_fit.h).
 *
 * fit_pose needs the model of its database and tracked bones
 * (fit_models.h): prepare takes the cached one; when there is none, handle
 * runs on the pool, builds it and fits, and finish caches it, so the next
 * request with those bones is answered on the loop. A one-shot fit is one
 * step of a fresh fitter over memory of the response: its prior comes from
 * a search on the trackers' positions and velocities (velocities absent:
 * 0, a user standing), tried facing 8 ways. Tracker characters and
 * set_trackers are service_character.c's.
 */
#include <stdio.h>
#include <string.h>
#include "anim_error.h"
#include "fit_models.h"
#include "service.h"

/* Points above which an align goes to the pool (a pass over the points
 * takes about 20 ns each). */
#define ALIGN_LOOP_POINTS 10000

static const char *const align_modes[] = {"ALIGN_RIGID", "ALIGN_SIMILARITY", "ALIGN_YAW"};

static int align(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  (void)ctx;
  const srv_align_request_t *req = &request->body.align;
  int rc = anim_umeyama_fit(&out->body.align.fit, req->mode, req->source, req->target, req->weights, req->npoints);
  if (rc == 0) return 0;
  int need = req->mode == ANIM_UMEYAMA_YAW ? 2 : 3;
  int weighted = 0;
  for (int i = 0; i < req->npoints; i++) weighted += !req->weights || req->weights[i] > 0.0f;
  if (weighted < need)
    return srv_response_fail(out, rc, "align: %d point%s of weight > 0: %s needs at least %d", weighted,
                             weighted == 1 ? "" : "s", align_modes[req->mode], need);
  return srv_response_fail(out, rc,
                           req->mode == ANIM_UMEYAMA_YAW
                               ? "align: degenerate points: source or target has no horizontal extent, or they do "
                                 "not correlate (ALIGN_YAW needs 2 points apart on the ground)"
                               : "align: degenerate points: source or target is collinear or all equal (the "
                                 "rotation is not determined; %s needs 3 points spanning a plane)",
                           align_modes[req->mode]);
}

static int align_off_loop(const srv_request_t *request, const srv_response_t *prepared) {
  (void)prepared;
  return request->body.align.npoints > ALIGN_LOOP_POINTS;
}

/* ---- fit_pose ---- */

/* The model key of the request's trackers; order[i]: model tracker of trackers[i]. */
static int fit_key(const srv_fit_pose_request_t *req, const anim_database_t *db, srv_fit_key_t *key, int *order,
                   srv_response_t *out) {
  char err[160];
  int rc = srv_fit_key_make(key, db, &req->trackers[0].tracked, sizeof req->trackers[0], req->ntrackers, order, err,
                            sizeof err);
  return rc ? srv_response_fail(out, rc, "fit_pose.trackers%s", err) : 0;
}

static int fit_prepare(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  int rc = srv_service_acquire_database(ctx, request, out);
  srv_fit_key_t key;
  int order[SRV_MAX_TRACKERS];
  if (rc || (rc = fit_key(&request->body.fit_pose, &out->entry->db, &key, order, out))) return rc;
  out->fit_model = srv_fit_cache_find(&out->entry->fit_models, &key);
  return 0;
}

/* A cached model: a fit is ~0.1 ms (8 searches and a solve), done here. */
static int fit_off_loop(const srv_request_t *request, const srv_response_t *prepared) {
  (void)request;
  return prepared->fit_model == NULL;
}

static int fit_pose(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  (void)ctx;
  const srv_fit_pose_request_t *req = &request->body.fit_pose;
  srv_fit_pose_response_t *res = &out->body.fit_pose;
  const anim_database_t *db = &out->entry->db;
  srv_fit_key_t key;
  int order[SRV_MAX_TRACKERS];
  char err[160];
  int rc = fit_key(req, db, &key, order, out);
  if (rc) return rc;
  if (!out->fit_model) {
    if ((rc = srv_fit_model_build(db, &key, &out->fit_model, err, sizeof err)))
      return srv_response_fail(out, rc, "fit_pose.trackers: %s", err);
    res->model_built = 1;
  }
  const anim_pose_fit_model_t *model = &out->fit_model->model;
  size_t bytes = anim_pose_fitter_memory_size(model);
  void *memory = srv_response_alloc(out, bytes); /* the pose arrays live in it until the answer is out */
  if (!memory) return ANIM_ENOMEM;
  anim_pose_fitter_t fitter;
  if ((rc = anim_pose_fitter_init(&fitter, model, &req->params, memory, bytes)))
    return srv_response_fail(out, rc, "fit_pose.params: %s", anim_strerror(rc));
  anim_tracker_input_t in[SRV_MAX_TRACKERS];
  memset(in, 0, sizeof in);
  for (int i = 0; i < req->ntrackers; i++) in[order[i]] = req->trackers[i].input;
  rc = anim_pose_fitter_step(&fitter, in, 1.0f / db->frame_rate);
  if (rc) return srv_response_fail(out, rc, "fit_pose: the fit failed: %s", anim_strerror(rc));
  res->nbones = db->nbones;
  res->local_positions = fitter.pose_positions, res->global_positions = fitter.global_positions;
  res->local_rotations = fitter.pose_rotations, res->global_rotations = fitter.global_rotations;
  res->prior_frame = fitter.prior_frame;
  res->scale = fitter.scale;
  res->nresiduals = req->ntrackers;
  for (int i = 0; i < req->ntrackers; i++) res->residuals[i] = fitter.residuals[order[i]];
  anim_pose_fitter_free(&fitter); /* forgets the memory, which stays the response's */
  return 0;
}

/* A model built on the pool joins its database's cache. */
static int fit_finish(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  (void)ctx, (void)request;
  if (out->body.fit_pose.model_built) out->fit_model = srv_fit_cache_put(&out->entry->fit_models, out->fit_model);
  return 0;
}

const srv_service_t srv_service_align = {.handle = align, .off_loop = align_off_loop};
const srv_service_t srv_service_fit_pose = {
    .prepare = fit_prepare, .handle = fit_pose, .finish = fit_finish, .off_loop = fit_off_loop};
