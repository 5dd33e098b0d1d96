/*
 * fit.c: align, fit_pose and set_trackers (anim_client_fit.h): requests
 * built from C arguments, answers copied into the caller's or
 * library-owned structs. Not here: tracker characters' creation
 * (character.c).
 */
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "client_internal.h"

static void vec3_to_wire(Animserver__Vec3 *out, const float *v) {
  Animserver__Vec3 init = ANIMSERVER__VEC3__INIT;
  *out = init;
  out->x = v[0], out->y = v[1], out->z = v[2];
}

static void quat_to_wire(Animserver__Quat *out, const float *q) {
  Animserver__Quat init = ANIMSERVER__QUAT__INIT;
  *out = init;
  out->w = q[0], out->x = q[1], out->y = q[2], out->z = q[3];
}

/* ---- align ---- */

static int convert_align(anim_client_t *client, const Animserver__Response *r, void *out) {
  (void)client;
  const Animserver__AlignResponse *m = r->align;
  anim_align_result_t *a = out;
  memset(a, 0, sizeof *a);
  if (m->n_matrix != 9) return ANIM_EPROTO;
  anim__copy_quat(a->rotation, m->rotation);
  memcpy(a->matrix, m->matrix, sizeof a->matrix);
  anim__copy_vec3(a->translation, m->translation);
  a->scale = m->scale, a->yaw = m->yaw, a->cost = m->cost, a->rms = m->rms;
  return 0;
}

int anim_client_align(anim_client_t *client, const float *source, const float *target, const float *weights, int n,
                      int mode, anim_align_result_t *out_result, int timeout_ms) {
  if (!client || !source || !target || n < 1 || !out_result || mode < ANIM_ALIGN_RIGID || mode > ANIM_ALIGN_YAW)
    return ANIM_EINVAL;
  Animserver__Vec3 *points = calloc(2 * (size_t)n, sizeof *points);
  Animserver__Vec3 **pointers = calloc(2 * (size_t)n, sizeof *pointers);
  int rc = points && pointers ? 0 : ANIM_ENOMEM;
  for (int i = 0; !rc && i < 2 * n; i++) {
    vec3_to_wire(&points[i], i < n ? source + 3 * i : target + 3 * (i - n));
    pointers[i] = &points[i];
  }
  if (!rc) {
    Animserver__Request request = ANIMSERVER__REQUEST__INIT;
    Animserver__AlignRequest align = ANIMSERVER__ALIGN_REQUEST__INIT;
    align.n_source = align.n_target = (size_t)n;
    align.source = pointers, align.target = pointers + n;
    if (weights) align.n_weights = (size_t)n, align.weights = (float *)weights;
    align.mode = (Animserver__AlignMode)mode;
    request.body_case = ANIMSERVER__REQUEST__BODY_ALIGN, request.align = &align;
    rc = anim__client_call(client, &request, ANIMSERVER__RESPONSE__BODY_ALIGN, convert_align, out_result, timeout_ms);
  }
  free(points), free(pointers);
  return rc;
}

/* ---- trackers on the wire ---- */

typedef struct {
  Animserver__TrackerInput input;
  Animserver__Vec3 offset, position, velocity;
  Animserver__Quat orientation;
} wire_tracker_t;

/* n trackers as wire inputs (caller frees *out_block, one allocation). */
static int trackers_to_wire(const anim_tracker_t *trackers, int n, int with_offsets, Animserver__TrackerInput ***out_list,
                            void **out_block) {
  size_t size = (size_t)n * (sizeof(wire_tracker_t) + sizeof(Animserver__TrackerInput *));
  uint8_t *block = calloc(1, size ? size : 1);
  *out_block = block;
  if (!block) return ANIM_ENOMEM;
  wire_tracker_t *w = (wire_tracker_t *)block;
  Animserver__TrackerInput **list = (Animserver__TrackerInput **)(w + n);
  for (int i = 0; i < n; i++) {
    const anim_tracker_t *t = &trackers[i];
    Animserver__TrackerInput init = ANIMSERVER__TRACKER_INPUT__INIT;
    w[i].input = init;
    w[i].input.bone = (char *)(t->bone ? t->bone : "");
    w[i].input.lost = t->lost != 0, w[i].input.weight = t->weight;
    if (!t->lost) {
      vec3_to_wire(&w[i].position, t->position), w[i].input.position = &w[i].position;
      if (with_offsets) vec3_to_wire(&w[i].offset, t->offset), w[i].input.offset = &w[i].offset;
      if (t->has_velocity) vec3_to_wire(&w[i].velocity, t->velocity), w[i].input.velocity = &w[i].velocity;
      if (t->has_orientation)
        quat_to_wire(&w[i].orientation, t->orientation), w[i].input.orientation = &w[i].orientation;
    }
    list[i] = &w[i].input;
  }
  *out_list = list;
  return 0;
}

/* ---- fit_pose ---- */

void anim_fit_result_free(anim_fit_result_t *r) {
  if (!r) return;
  free(r->local_positions), free(r->residuals);
  free(r);
}

static int convert_fit(anim_client_t *client, const Animserver__Response *r, void *out) {
  (void)client;
  const Animserver__FitPoseResponse *m = r->fit_pose;
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
  memcpy(residuals, m->residuals, m->n_residuals * sizeof *residuals);
  f->residuals = residuals, f->nresiduals = (int)m->n_residuals;
  *(anim_fit_result_t **)out = f;
  return 0;
}

int anim_client_fit_pose(anim_client_t *client, const char *database, const anim_tracker_t *trackers, int n,
                         anim_fit_result_t **out_result, int timeout_ms) {
  if (out_result) *out_result = NULL;
  if (!client || !database || !trackers || n < 1 || !out_result) return ANIM_EINVAL;
  Animserver__TrackerInput **list;
  void *block;
  int rc = trackers_to_wire(trackers, n, 1, &list, &block);
  if (!rc) {
    Animserver__Request request = ANIMSERVER__REQUEST__INIT;
    Animserver__FitPoseRequest fit = ANIMSERVER__FIT_POSE_REQUEST__INIT;
    fit.database = (char *)database, fit.n_trackers = (size_t)n, fit.trackers = list;
    request.body_case = ANIMSERVER__REQUEST__BODY_FIT_POSE, request.fit_pose = &fit;
    rc = anim__client_call(client, &request, ANIMSERVER__RESPONSE__BODY_FIT_POSE, convert_fit, out_result, timeout_ms);
  }
  free(block);
  return rc;
}

/* ---- set_trackers ---- */

typedef struct {
  Animserver__Request request;
  Animserver__SetTrackersRequest set;
  Animserver__CharacterTrackers *items, **list;
  void *block;
} set_trackers_t;

static void set_trackers_free(set_trackers_t *q) { free(q->items), free(q->list), free(q->block); }

static int build_set_trackers(set_trackers_t *q, const uint64_t *characters, const anim_tracker_t *trackers,
                              const int *counts, int n) {
  memset(q, 0, sizeof *q);
  if (!characters || !trackers || !counts || n < 1) return ANIM_EINVAL;
  int total = 0;
  for (int i = 0; i < n; i++) {
    if (counts[i] < 0) return ANIM_EINVAL;
    total += counts[i];
  }
  Animserver__TrackerInput **inputs;
  q->items = calloc((size_t)n, sizeof *q->items), q->list = calloc((size_t)n, sizeof *q->list);
  int rc = q->items && q->list ? trackers_to_wire(trackers, total, 0, &inputs, &q->block) : ANIM_ENOMEM;
  if (rc) return set_trackers_free(q), rc;
  for (int i = 0, at = 0; i < n; at += counts[i], i++) {
    Animserver__CharacterTrackers init = ANIMSERVER__CHARACTER_TRACKERS__INIT;
    q->items[i] = init;
    q->items[i].character = characters[i];
    q->items[i].n_trackers = (size_t)counts[i], q->items[i].trackers = inputs + at;
    q->list[i] = &q->items[i];
  }
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__SetTrackersRequest set = ANIMSERVER__SET_TRACKERS_REQUEST__INIT;
  q->request = request, q->set = set;
  q->set.n_characters = (size_t)n, q->set.characters = q->list;
  q->request.body_case = ANIMSERVER__REQUEST__BODY_SET_TRACKERS, q->request.set_trackers = &q->set;
  return 0;
}

static int convert_trackers_tick(anim_client_t *client, const Animserver__Response *r, void *out) {
  (void)client;
  if (out) *(uint64_t *)out = r->set_trackers->tick;
  return 0;
}

int anim_client_trackers_set(anim_client_t *client, const uint64_t *characters, const anim_tracker_t *trackers,
                             const int *counts, int n, uint64_t *out_tick, int timeout_ms) {
  set_trackers_t q;
  int rc = client ? build_set_trackers(&q, characters, trackers, counts, n) : ANIM_EINVAL;
  if (rc) return rc;
  rc = anim__client_call(client, &q.request, ANIMSERVER__RESPONSE__BODY_SET_TRACKERS, convert_trackers_tick, out_tick,
                         timeout_ms);
  set_trackers_free(&q);
  return rc;
}

int anim_client_trackers_set_send(anim_client_t *client, const uint64_t *characters, const anim_tracker_t *trackers,
                                  const int *counts, int n, anim_status_cb cb, void *data, uint64_t *out_id) {
  set_trackers_t q;
  int rc = client ? build_set_trackers(&q, characters, trackers, counts, n) : ANIM_EINVAL;
  if (rc) return rc;
  rc = anim__client_send_status(client, &q.request, ANIMSERVER__RESPONSE__BODY_SET_TRACKERS, cb, data, out_id);
  set_trackers_free(&q);
  return rc;
}
