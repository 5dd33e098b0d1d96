/*
 * convert_fit.c: pose fitting between protobuf and the client's C types
 * (see convert.h): the alignment and the fitted pose the server answers;
 * point sets and trackers to align, fit_pose and set_trackers requests.
 *
 * Pure, like convert.c: nothing allocated on failure, a fitted pose's four
 * arrays all of one bone count. No socket, no client: api_fit.c sends and
 * completes the requests.
 */
#include <stdlib.h>
#include <string.h>
#include "convert.h"

int anim__align_from(const Animserver__AlignResponse *m, anim_align_result_t *out) {
  memset(out, 0, sizeof *out);
  if (!m || m->n_matrix != 9) return ANIM_EPROTO;
  anim__quat_from(out->rotation, m->rotation);
  memcpy(out->matrix, m->matrix, sizeof out->matrix);
  anim__vec3_from(out->translation, m->translation);
  out->scale = m->scale, out->yaw = m->yaw, out->cost = m->cost, out->rms = m->rms;
  return 0;
}

void anim_fit_result_free(anim_fit_result_t *r) {
  if (!r) return;
  free(r->local_positions), free(r->residuals); /* local_positions: the block of all four arrays */
  free(r);
}

int anim__fit_from(const Animserver__FitPoseResponse *m, anim_fit_result_t **out) {
  *out = NULL;
  if (!m) return ANIM_EPROTO;
  const Animserver__Pose *p = m->pose;
  if (!p || p->n_local_rotations % 4 || !p->n_local_rotations) return ANIM_EPROTO;
  size_t nb = p->n_local_rotations / 4;
  if (p->n_local_positions != 3 * nb || p->n_global_positions != 3 * nb || p->n_global_rotations != 4 * nb)
    return ANIM_EPROTO;
  anim_fit_result_t *f = calloc(1, sizeof *f);
  float *block = malloc(14 * nb * sizeof *block);
  float *residuals = malloc((m->n_residuals + 1) * sizeof *residuals);
  if (!f || !block || !residuals) {
    free(f), free(block), free(residuals);
    return ANIM_ENOMEM;
  }
  f->database_version = m->database_version, f->frame = p->frame, f->nbones = (int)nb, f->scale = m->scale;
  f->local_positions = block, f->local_rotations = block + 3 * nb;
  f->global_positions = block + 7 * nb, f->global_rotations = block + 10 * nb;
  memcpy(f->local_positions, p->local_positions, 3 * nb * sizeof *block);
  memcpy(f->local_rotations, p->local_rotations, 4 * nb * sizeof *block);
  memcpy(f->global_positions, p->global_positions, 3 * nb * sizeof *block);
  memcpy(f->global_rotations, p->global_rotations, 4 * nb * sizeof *block);
  if (m->n_residuals) memcpy(residuals, m->residuals, m->n_residuals * sizeof *residuals);
  f->residuals = residuals, f->nresiduals = (int)m->n_residuals;
  *out = f;
  return 0;
}

/* ---- requests ------------------------------------------------------------------------------- */

void anim__align_views_free(anim__align_views_t *v) {
  free(v->points), free(v->pointers);
  v->points = NULL, v->pointers = NULL;
}

int anim__align_to_proto(const float *source, const float *target, const float *weights, int n, int mode,
                         anim__align_views_t *v) {
  memset(v, 0, sizeof *v);
  if (!source || !target || n < 1 || mode < ANIM_ALIGN_RIGID || mode > ANIM_ALIGN_YAW) return ANIM_EINVAL;
  v->points = calloc(2 * (size_t)n, sizeof *v->points);
  v->pointers = calloc(2 * (size_t)n, sizeof *v->pointers);
  if (!v->points || !v->pointers) {
    anim__align_views_free(v);
    return ANIM_ENOMEM;
  }
  for (int i = 0; i < 2 * n; i++) {
    anim__vec3_to_proto(&v->points[i], i < n ? source + 3 * i : target + 3 * (i - n));
    v->pointers[i] = &v->points[i];
  }
  Animserver__AlignRequest align = ANIMSERVER__ALIGN_REQUEST__INIT;
  v->align = align;
  v->align.n_source = v->align.n_target = (size_t)n;
  v->align.source = v->pointers, v->align.target = v->pointers + n;
  if (weights) v->align.n_weights = (size_t)n, v->align.weights = (float *)weights;
  v->align.mode = (Animserver__AlignMode)mode;
  return 0;
}

/* One tracker's wire structs. */
struct anim__wire_tracker {
  Animserver__TrackerInput input;
  Animserver__Vec3 offset, position, velocity;
  Animserver__Quat orientation;
};

void anim__trackers_views_free(anim__trackers_views_t *v) {
  free(v->wire), free(v->inputs), free(v->items), free(v->list);
  memset(v, 0, sizeof *v);
}

/* n trackers as wire inputs into v->wire / v->inputs (offsets only for fit_pose). */
static int trackers_to_proto(const anim_tracker_t *trackers, int n, int with_offsets, anim__trackers_views_t *v) {
  v->wire = calloc((size_t)n + 1, sizeof *v->wire);
  v->inputs = calloc((size_t)n + 1, sizeof *v->inputs);
  if (!v->wire || !v->inputs) return ANIM_ENOMEM;
  for (int i = 0; i < n; i++) {
    const anim_tracker_t *t = &trackers[i];
    struct anim__wire_tracker *w = &v->wire[i];
    Animserver__TrackerInput init = ANIMSERVER__TRACKER_INPUT__INIT;
    w->input = init;
    w->input.bone = (char *)(t->bone ? t->bone : "");
    w->input.lost = t->lost != 0, w->input.weight = t->weight;
    if (!t->lost) {
      anim__vec3_to_proto(&w->position, t->position), w->input.position = &w->position;
      if (with_offsets) anim__vec3_to_proto(&w->offset, t->offset), w->input.offset = &w->offset;
      if (t->has_velocity) anim__vec3_to_proto(&w->velocity, t->velocity), w->input.velocity = &w->velocity;
      if (t->has_orientation)
        anim__quat_to_proto(&w->orientation, t->orientation), w->input.orientation = &w->orientation;
    }
    v->inputs[i] = &w->input;
  }
  return 0;
}

int anim__fit_to_proto(const char *database, const anim_tracker_t *trackers, int n, anim__trackers_views_t *v) {
  memset(v, 0, sizeof *v);
  if (!database || !trackers || n < 1) return ANIM_EINVAL;
  if (trackers_to_proto(trackers, n, 1, v)) {
    anim__trackers_views_free(v);
    return ANIM_ENOMEM;
  }
  Animserver__FitPoseRequest fit = ANIMSERVER__FIT_POSE_REQUEST__INIT;
  v->fit = fit;
  v->fit.database = (char *)database, v->fit.n_trackers = (size_t)n, v->fit.trackers = v->inputs;
  return 0;
}

int anim__set_trackers_to_proto(const uint64_t *characters, const anim_tracker_t *trackers, const int *counts, int n,
                                anim__trackers_views_t *v) {
  memset(v, 0, sizeof *v);
  if (!characters || !trackers || !counts || n < 1) return ANIM_EINVAL;
  int total = 0;
  for (int i = 0; i < n; i++) {
    if (counts[i] < 0 || counts[i] > 1024) return ANIM_EINVAL;
    total += counts[i];
  }
  v->items = calloc((size_t)n, sizeof *v->items);
  v->list = calloc((size_t)n, sizeof *v->list);
  if (!v->items || !v->list || trackers_to_proto(trackers, total, 0, v)) {
    anim__trackers_views_free(v);
    return ANIM_ENOMEM;
  }
  for (int i = 0, at = 0; i < n; at += counts[i], i++) {
    Animserver__CharacterTrackers init = ANIMSERVER__CHARACTER_TRACKERS__INIT;
    v->items[i] = init;
    v->items[i].character = characters[i];
    v->items[i].n_trackers = (size_t)counts[i], v->items[i].trackers = v->inputs + at;
    v->list[i] = &v->items[i];
  }
  Animserver__SetTrackersRequest set = ANIMSERVER__SET_TRACKERS_REQUEST__INIT;
  v->set = set;
  v->set.n_characters = (size_t)n, v->set.characters = v->list;
  return 0;
}
