/*
 * marker_prior.c: the marker fitter's prior pose from fit_pose's search
 * (marker_prior.h says which markers and when). Only the prior is used:
 * the fitter runs one Gauss-Newton step and no foot locks, which shape its
 * own output but not the frame it plays.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anim_error.h"
#include "body_internal.h"
#include "fit/pose_fit.h"
#include "marker_prior.h"

struct anim_marker_prior {
  anim_pose_fit_model_t model; /* its own, unless shared */
  int owns_model;
  anim_pose_fitter_t fitter;
  int nsearched;
  int searched[ANIM_POSE_FIT_MAX_TRACKERS];   /* marker index of each chosen marker */
  int tracker_of[ANIM_POSE_FIT_MAX_TRACKERS]; /* the model's tracker of each */
};

/* Farthest first (marker_prior.h): candidates[] the first marker of each
 * bone, the result in out (at most ANIM_POSE_FIT_MAX_TRACKERS). */
int anim_marker_prior_choose(const anim_database_t *db, int root, const anim_marker_t *markers, int nmarkers, int *out) {
  int cand[ANIM_MARKER_FIT_MAX_MARKERS], nc = 0;
  for (int i = 0; i < nmarkers; i++) {
    int dup = 0;
    for (int c = 0; c < nc; c++) dup |= markers[cand[c]].bone == markers[i].bone;
    if (!dup) cand[nc++] = i;
  }
  if (nc <= ANIM_POSE_FIT_MAX_TRACKERS) {
    memcpy(out, cand, sizeof(int) * (size_t)nc);
    return nc;
  }
  const vec3 *g = db->global_positions; /* frame 0 */
  int depth_best = 1 << 30, first = 0;
  for (int c = 0; c < nc; c++) {
    int depth = 0;
    for (int a = markers[cand[c]].bone; a >= 0 && a != root; a = db->skeleton.parents[a]) depth++;
    if (depth < depth_best) depth_best = depth, first = c;
  }
  unsigned char taken[ANIM_MARKER_FIT_MAX_MARKERS] = {0};
  int n = 0;
  out[n++] = cand[first], taken[first] = 1;
  while (n < ANIM_POSE_FIT_MAX_TRACKERS) {
    float best = -1;
    int pick = -1;
    for (int c = 0; c < nc; c++) {
      if (taken[c]) continue;
      float near = INFINITY;
      for (int k = 0; k < n; k++)
        near = fminf(near, vec3_length(vec3_sub(g[markers[cand[c]].bone], g[markers[out[k]].bone])));
      if (near > best) best = near, pick = c;
    }
    out[n++] = cand[pick], taken[pick] = 1;
  }
  return n;
}

anim_marker_prior_t *anim_marker_prior_create(const anim_database_t *db, int root, const anim_marker_t *markers,
                                              int nmarkers, const anim_pose_fit_model_t *shared, const int *tracker_of,
                                              char *err, int errlen) {
  anim_marker_prior_t *p = calloc(1, sizeof *p);
  if (!p) return body_errorf(err, errlen, "out of memory"), NULL;
  p->nsearched = anim_marker_prior_choose(db, root, markers, nmarkers, p->searched);
  for (int k = 0; k < p->nsearched; k++) p->tracker_of[k] = shared ? tracker_of[k] : k;
  if (shared && (shared->db != db || shared->ntrackers != p->nsearched)) {
    free(p);
    return body_errorf(err, errlen, "the prior's search: a pose-fit model of another database or marker set"), NULL;
  }
  const anim_pose_fit_model_t *model = shared ? shared : &p->model;
  anim_pose_fit_model_options_t mo;
  memset(&mo, 0, sizeof mo);
  mo.ntrackers = p->nsearched;
  mo.pelvis_bone = db->skeleton.names[root];
  mo.position_weight = 1.0f, mo.velocity_weight = 1.0f; /* fit_pose's defaults */
  mo.search_method = ANIM_SEARCH_FAST;
  for (int k = 0; k < p->nsearched; k++) {
    const anim_marker_t *mk = &markers[p->searched[k]];
    mo.tracker_bones[k] = db->skeleton.names[mk->bone];
    mo.tracker_offsets[k] = mk->has_offset ? mk->offset : vec3_zero();
  }
  char why[256] = "";
  if (!shared) {
    if (anim_pose_fit_model_build(&p->model, db, &mo, why, sizeof why)) {
      free(p);
      return body_errorf(err, errlen, "the prior's search (fit_pose's model): %s", why), NULL;
    }
    p->owns_model = 1;
  }
  anim_pose_fit_params_t fp;
  anim_pose_fit_params_default(&fp);
  fp.scale = 1;             /* the markers come at the body's size */
  fp.iterations = 1;        /* its solve shapes its output, not the frame it plays */
  fp.foot_lock.enabled = 0; /* likewise */
  fp.search_interval = 1;
  if (anim_pose_fitter_init(&p->fitter, model, &fp, NULL, 0)) {
    if (p->owns_model) anim_pose_fit_model_free(&p->model);
    free(p);
    return body_errorf(err, errlen, "out of memory"), NULL;
  }
  return p;
}

void anim_marker_prior_free(anim_marker_prior_t *p) {
  if (!p) return;
  anim_pose_fitter_free(&p->fitter);
  if (p->owns_model) anim_pose_fit_model_free(&p->model);
  free(p);
}

int anim_marker_prior_step(anim_marker_prior_t *p, const vec3 *positions, const unsigned char *use, float dt,
                           int restart) {
  anim_tracker_input_t in[ANIM_POSE_FIT_MAX_TRACKERS];
  memset(in, 0, sizeof in);
  int any = 0;
  for (int k = 0; k < p->nsearched; k++) {
    int i = p->searched[k];
    anim_tracker_input_t *t = &in[p->tracker_of[k]];
    t->present = use[i], t->position = positions[i], t->weight = 1;
    any |= use[i];
  }
  if (restart) {
    if (!any) return ANIM_ENOTFOUND;
    anim_pose_fitter_reset(&p->fitter);
  }
  return anim_pose_fitter_step(&p->fitter, in, dt);
}

const quat *anim_marker_prior_rotations(const anim_marker_prior_t *p) { return p->fitter.prior_rotations; }

int anim_marker_prior_frame(const anim_marker_prior_t *p) { return p->fitter.prior_frame; }

int anim_marker_prior_searched(const anim_marker_prior_t *p, int *out_markers) {
  memcpy(out_markers, p->searched, sizeof(int) * (size_t)p->nsearched);
  return p->nsearched;
}
