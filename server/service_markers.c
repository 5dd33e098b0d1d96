/*
 * service_markers.c: marker_fit.
 *  - prepare (loop): the database's reference, its body model if it has
 *    one (body_models.h), and the pose-fit model the prior searches with
 *    (physics/marker_prior.h) from the database's cache (fit_models.h)
 *    when it is there;
 *  - handle (pool): the body model: the database's at its own mass (70 kg,
 *    built here when the entry had none, never on the loop), or one built
 *    for this request at another total_mass; then physics/marker_fit.h
 *    over the frames, copied into the response's flat arrays. The bones
 *    are checked against the database here (the decoder does not know it);
 *  - finish (loop): a body model the handle built becomes the entry's, a
 *    pose-fit model joins the cache.
 * Nothing is answered in part. The fitter builds its own MuJoCo model from
 * the body model's MJCF (with the markers' bodies), so the shared model is
 * only read.
 */
#include <math.h>
#include <string.h>

#include "anim_error.h"
#include "body_models.h"
#include "fit_models.h"
#include "marker_prior.h"
#include "marker_fit.h"
#include "registry.h"
#include "service.h"

_Static_assert(SRV_MARKER_FIT_MAX_MARKERS == ANIM_MARKER_FIT_MAX_MARKERS, "one bound on the markers");

/* The request's markers on db; 0, or ANIM_ENOTFOUND with the response
 * failed naming the bone. */
static int markers_of(const srv_marker_fit_request_t *req, const anim_database_t *db, anim_marker_t *out_markers,
                      srv_response_t *out) {
  for (int i = 0; i < req->nmarkers; i++) {
    int b = anim_skeleton_find(&db->skeleton, req->bones[i]);
    if (b < 0)
      return srv_response_fail(out, ANIM_ENOTFOUND, "marker_fit.markers[%d].bone = \"%s\": no such bone in database %s", i,
                               req->bones[i], db->name);
    out_markers[i] = (anim_marker_t){b, req->has_offset[i] ? req->offsets[i] : vec3_zero(), req->has_offset[i]};
  }
  return 0;
}

/* The key of the pose-fit model the prior searches with (the markers it
 * chooses, physics/marker_prior.h) and tracker_of[k], the model's tracker
 * of the k-th chosen marker. 0, or the key's error (a bone the body model
 * will refuse: the fitter names it). */
static int prior_key(const anim_database_t *db, const anim_marker_t *markers, int nmarkers, srv_fit_key_t *out_key,
                     int *out_tracker_of) {
  int root = -1; /* the body model's free root: bone 0's child (physics/body.h) */
  for (int b = 1; b < db->nbones && root < 0; b++)
    if (db->skeleton.parents[b] == 0) root = b;
  if (root < 0) return ANIM_EINVAL;
  int chosen[ANIM_POSE_FIT_MAX_TRACKERS];
  int n = anim_marker_prior_choose(db, root, markers, nmarkers, chosen);
  srv_tracked_bone_t bones[ANIM_POSE_FIT_MAX_TRACKERS];
  for (int k = 0; k < n; k++) bones[k] = (srv_tracked_bone_t){db->skeleton.names[markers[chosen[k]].bone], markers[chosen[k]].offset};
  char err[160];
  return srv_fit_key_make(out_key, db, bones, sizeof bones[0], n, out_tracker_of, err, sizeof err);
}

static int marker_fit(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  (void)ctx;
  const srv_marker_fit_request_t *req = &request->body.marker_fit;
  srv_marker_fit_response_t *r = &out->body.marker_fit;
  const anim_database_t *db = &out->entry->db;
  anim_marker_t markers[ANIM_MARKER_FIT_MAX_MARKERS];
  int rc = markers_of(req, db, markers, out);
  if (rc) return rc;
  /* The prior's pose-fit model: the cache's, or built here (cached by finish). */
  srv_fit_key_t key;
  int tracker_of[ANIM_POSE_FIT_MAX_TRACKERS];
  const anim_pose_fit_model_t *prior_model = NULL;
  if (prior_key(db, markers, req->nmarkers, &key, tracker_of) == 0) {
    char why[160];
    if (!out->fit_model && srv_fit_model_build(db, &key, &out->fit_model, why, sizeof why) == 0) r->prior_built = 1;
    if (out->fit_model) prior_model = &out->fit_model->model;
  }
  char err[256];
  anim_physics_model_options_t mo;
  anim_physics_model_options_default(&mo);
  /* The database's model serves at its own mass (the entry's is built at
   * the default); another mass builds one for this request, freed below. */
  anim_physics_model_t *model = NULL, *own = NULL;
  if (req->total_mass > 0 && req->total_mass != mo.total_mass) {
    mo.total_mass = req->total_mass;
    own = model = anim_physics_model_create(db, &mo, err, sizeof err);
    if (!model)
      return srv_response_fail(out, ANIM_EUNSUPPORTED, "marker_fit.database = \"%s\": no body model: %s", db->name, err);
  } else {
    model = r->model ? r->model : srv_body_model_build(out, "marker_fit.database");
    if (!model) return out->error;
  }
  anim_marker_fit_options_t o;
  anim_marker_fit_options_default(&o);
  if (req->marker_halflife > 0) o.marker_halflife = req->marker_halflife;
  if (req->prior_halflife > 0) o.prior_halflife = req->prior_halflife;
  if (req->outlier_distance > 0) o.outlier_distance = req->outlier_distance;
  if (req->far_ratio > 0) o.far_ratio = req->far_ratio;
  if (req->settle_time > 0) o.settle_time = req->settle_time;
  if (req->scale > 0) o.scale = req->scale;
  if (req->estimate_scale) o.scale = 0;
  anim_marker_fit_t *fit =
      anim_marker_fit_create_shared(model, db, markers, req->nmarkers, &o, prior_model, tracker_of, err, sizeof err);
  if (!fit) {
    anim_physics_model_free(own);
    return srv_response_fail(out, ANIM_EINVAL, "marker_fit.%s", err);
  }
  int n = req->nframes, nb = db->nbones, nm = req->nmarkers;
  vec3 *lp = srv_response_alloc(out, (size_t)n * (size_t)nb * sizeof *lp);
  quat *lq = srv_response_alloc(out, (size_t)n * (size_t)nb * sizeof *lq);
  r->rotations = srv_response_alloc(out, (size_t)n * (size_t)nb * 4 * sizeof(float));
  r->residuals = srv_response_alloc(out, (size_t)n * (size_t)nm * sizeof(float));
  r->offsets = srv_response_alloc(out, (size_t)nm * 3 * sizeof(float));
  if (!lp || !lq || !r->rotations || !r->residuals || !r->offsets) rc = ANIM_ENOMEM;
  float frame_time = req->frame_time > 0 ? req->frame_time : 1.0f / db->frame_rate, scale = 1;
  if (!rc && (rc = anim_marker_fit_run(fit, req->positions, req->present, n, frame_time, lp, lq, r->residuals, &scale, err,
                                       sizeof err)))
    srv_response_fail(out, rc, "marker_fit.%s", err);
  if (!rc) {
    r->nframes = n, r->nbones = nb, r->nmarkers = nm, r->scale = scale;
    r->positions = (float *)lp; /* vec3 is three packed floats */
    for (size_t k = 0; k < (size_t)n * nb; k++) {
      float *q = r->rotations + 4 * k;
      q[0] = lq[k].w, q[1] = lq[k].x, q[2] = lq[k].y, q[3] = lq[k].z;
    }
    vec3 offsets[ANIM_MARKER_FIT_MAX_MARKERS];
    anim_marker_fit_offsets(fit, offsets);
    memcpy(r->offsets, offsets, (size_t)nm * sizeof(vec3));
    double sum = 0;
    long seen = 0;
    r->max_residual = 0, r->worst_frame = 0, r->worst_marker = 0;
    for (int f = 0; f < n; f++)
      for (int i = 0; i < nm; i++) {
        float e = r->residuals[(size_t)f * nm + i];
        if (isnan(e)) continue;
        sum += e, seen++;
        if (e > r->max_residual) r->max_residual = e, r->worst_frame = f, r->worst_marker = i;
      }
    r->mean_residual = seen ? (float)(sum / (double)seen) : 0.0f;
  }
  anim_marker_fit_free(fit);
  anim_physics_model_free(own);
  return rc;
}

static int prepare(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  int rc = srv_service_acquire_database(ctx, request, out);
  if (rc || out->error) return rc ? rc : out->error;
  out->body.marker_fit.model = out->entry->physics;
  const srv_marker_fit_request_t *req = &request->body.marker_fit;
  anim_marker_t markers[ANIM_MARKER_FIT_MAX_MARKERS];
  srv_fit_key_t key;
  int tracker_of[ANIM_POSE_FIT_MAX_TRACKERS];
  srv_response_t scratch; /* a bone not found is the handle's to report */
  srv_response_init(&scratch, 0, SRV_REQ_MARKER_FIT);
  if (markers_of(req, &out->entry->db, markers, &scratch) == 0 &&
      prior_key(&out->entry->db, markers, req->nmarkers, &key, tracker_of) == 0)
    out->fit_model = srv_fit_cache_find(&out->entry->fit_models, &key);
  return 0;
}

/* Loop: the model the handle built becomes the entry's. */
static int finish(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  (void)ctx, (void)request;
  srv_body_model_install(out);
  if (out->body.marker_fit.prior_built) out->fit_model = srv_fit_cache_put(&out->entry->fit_models, out->fit_model);
  return 0;
}

static int always(const srv_request_t *request, const srv_response_t *prepared) {
  (void)request, (void)prepared;
  return 1;
}

const srv_service_t srv_service_marker_fit = {
    .prepare = prepare, .handle = marker_fit, .finish = finish, .off_loop = always};
