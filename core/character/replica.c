/* replica.c: a motion-matching character's keyframe as bytes (see replica.h). */
#include <math.h>
#include <string.h>
#include "anim_error.h"
#include "character/replica.h"

static const uint8_t magic[4] = {'R', 'P', 'L', '2'};
#define HEADER_BYTES 20       /* magic, nbones, nfeet, database version */
#define FIXED_FLOATS (4 + 6 + 7 + 14 + 2)
#define PARAM_WORDS 13        /* from the frame to the warp's flags (replica_params reads them) */
/* The words after the header that are integers, not floats. */
static const uint8_t int_words[] = {0, 3, 7, 10, 11, 12, 16};
#define BONE_FLOATS (13 + 7)
#define FOOT_FLOATS 22

size_t anim_controller_replica_size(const anim_controller_t *c) {
  return HEADER_BYTES + 4 * (FIXED_FLOATS + (size_t)c->db->nbones * BONE_FLOATS + (size_t)c->feet.nfeet * FOOT_FLOATS);
}

/* A cursor over the bytes; every field 4 bytes but the version. */
typedef struct {
  uint8_t *w;
  const uint8_t *r;
} cursor_t;

static void put(cursor_t *c, const void *v) { memcpy(c->w, v, 4), c->w += 4; }
static void put_f(cursor_t *c, float v) { put(c, &v); }
static void put_i(cursor_t *c, int32_t v) { put(c, &v); }
static void put_v(cursor_t *c, vec3 v) { put_f(c, v.x), put_f(c, v.y), put_f(c, v.z); }
static void put_q(cursor_t *c, quat q) { put_f(c, q.w), put_f(c, q.x), put_f(c, q.y), put_f(c, q.z); }

static float get_f(cursor_t *c) {
  float v;
  memcpy(&v, c->r, 4), c->r += 4;
  return v;
}
static int32_t get_i(cursor_t *c) {
  int32_t v;
  memcpy(&v, c->r, 4), c->r += 4;
  return v;
}
static vec3 get_v(cursor_t *c) {
  vec3 v;
  v.x = get_f(c), v.y = get_f(c), v.z = get_f(c);
  return v;
}
static quat get_q(cursor_t *c) {
  quat q;
  q.w = get_f(c), q.x = get_f(c), q.y = get_f(c), q.z = get_f(c);
  return q;
}

size_t anim_controller_replica_save(const anim_controller_t *c, uint8_t *out) {
  cursor_t k = {out, NULL};
  const anim_controller_params_t *p = &c->params;
  const anim_inertializer_t *in = &c->inertializer;
  memcpy(k.w, magic, 4), k.w += 4;
  put_i(&k, c->db->nbones), put_i(&k, c->feet.nfeet);
  memcpy(k.w, &c->db->version, 8), k.w += 8;
  put_i(&k, c->frame), put_f(&k, c->frame_time_accum), put_f(&k, c->time_since_transition), put_i(&k, c->holding);
  put_f(&k, p->inertialize_halflife), put_f(&k, p->body_halflife_scale), put_f(&k, p->root_halflife_scale);
  put_i(&k, p->foot_lock.enabled), put_f(&k, p->foot_lock.unlock_radius), put_f(&k, p->foot_lock.release_halflife);
  const anim_warp_t *w = &c->warp;
  put_i(&k, p->warp.rate), put_i(&k, p->warp.stand), put_i(&k, p->warp.orient);
  put_f(&k, w->shown), put_f(&k, w->angle), put_f(&k, w->view_phase);
  put_i(&k, (w->view_held ? 1 : 0) | (w->have_view ? 2 : 0) | (c->feet_skipped ? 4 : 0));
  put_v(&k, in->anchor_anim_position), put_q(&k, in->anchor_anim_rotation);
  put_v(&k, in->anchor_world_position), put_q(&k, in->anchor_world_rotation);
  for (int b = 0; b < c->db->nbones; b++) {
    put_v(&k, c->offset_positions[b]), put_v(&k, c->offset_velocities[b]);
    put_q(&k, c->offset_rotations[b]), put_v(&k, c->offset_angular_velocities[b]);
  }
  for (int b = 0; b < c->db->nbones; b++) put_v(&k, c->pose_positions[b]), put_q(&k, c->pose_rotations[b]);
  for (int i = 0; i < c->feet.nfeet; i++) {
    const anim_foot_lock_t *f = &c->feet.feet[i];
    put_i(&k, (int32_t)f->state), put_v(&k, f->lock_position), put_v(&k, f->step_from);
    put_f(&k, f->step_time), put_f(&k, f->step_lift), put_v(&k, f->offset), put_v(&k, f->offset_velocity);
    put_v(&k, f->previous_toe), put_v(&k, f->previous_target), put_i(&k, f->have_previous);
  }
  put_f(&k, c->feet.drop), put_f(&k, c->feet.drop_velocity);
  return (size_t)(k.w - out);
}

int anim_controller_replica_params(const uint8_t *bytes, size_t len, anim_controller_params_t *out_params,
                                   uint64_t *out_version, int *out_nbones) {
  if (len < HEADER_BYTES + 4 * PARAM_WORDS) return ANIM_ETRUNCATED;
  if (memcmp(bytes, magic, 4) != 0) return ANIM_EFORMAT;
  cursor_t k = {NULL, bytes + 4};
  *out_nbones = get_i(&k);
  get_i(&k);
  memcpy(out_version, k.r, 8), k.r += 8;
  get_i(&k), get_f(&k), get_f(&k), get_i(&k); /* frame, accumulator, time, hold */
  anim_controller_params_default(out_params);
  out_params->inertialize_halflife = get_f(&k);
  out_params->body_halflife_scale = get_f(&k);
  out_params->root_halflife_scale = get_f(&k);
  out_params->foot_lock.enabled = get_i(&k) != 0;
  out_params->foot_lock.unlock_radius = get_f(&k);
  out_params->foot_lock.release_halflife = get_f(&k);
  /* Which warps are on (the pose a replica shows depends on it); their
   * bounds decide only what the original's begin does, which its records
   * carry. */
  out_params->warp.rate = get_i(&k) != 0;
  out_params->warp.stand = get_i(&k) != 0;
  out_params->warp.orient = get_i(&k) != 0;
  /* Stride and root steering are what each record says (its stride,
   * travel and steer), whatever the original's switches. */
  out_params->warp.stride = out_params->warp.steer = 0;
  return anim_controller_params_validate(out_params) == 0 ? 0 : ANIM_ENONFINITE;
}

static int finite_floats(const uint8_t *at, size_t n) {
  for (size_t i = 0; i < n; i++) {
    float v;
    memcpy(&v, at + 4 * i, 4);
    if (!isfinite(v)) return 0;
  }
  return 1;
}

int anim_controller_replica_load(anim_controller_t *c, const uint8_t *bytes, size_t len) {
  if (len < HEADER_BYTES) return ANIM_ETRUNCATED;
  if (memcmp(bytes, magic, 4) != 0) return ANIM_EFORMAT;
  cursor_t k = {NULL, bytes + 4};
  int32_t nbones = get_i(&k), nfeet = get_i(&k);
  uint64_t version;
  memcpy(&version, k.r, 8), k.r += 8;
  if (nbones != c->db->nbones || nfeet != c->feet.nfeet || version != c->db->version) return ANIM_EFORMAT;
  if (len != anim_controller_replica_size(c)) return ANIM_ETRUNCATED;
  /* Everything but the integer fields is a float: checked before anything is taken. */
  const uint8_t *body = k.r;
  int32_t frame = get_i(&k);
  if (frame < 0 || frame >= c->db->nframes) return ANIM_EFORMAT;
  size_t nfloats = (len - HEADER_BYTES) / 4;
  for (size_t i = 0; i < nfloats; i++) {
    size_t at = i; /* the integer fields: int_words, each foot's state and have_previous */
    int integer = 0;
    for (size_t j = 0; j < sizeof int_words; j++) integer |= at == int_words[j];
    if (integer) continue;
    size_t foot_at = FIXED_FLOATS - 2 + (size_t)nbones * BONE_FLOATS; /* after the anchor and the bones */
    if (at >= foot_at && at < foot_at + (size_t)nfeet * FOOT_FLOATS) {
      size_t j = (at - foot_at) % FOOT_FLOATS;
      if (j == 0 || j == FOOT_FLOATS - 1) continue;
    }
    if (!finite_floats(body + 4 * at, 1)) return ANIM_ENONFINITE;
  }
  /* The warp: made with the same warps on, its rate and turn within their bounds (warp.h). */
  cursor_t w = {NULL, body + 4 * 10};
  int32_t warps[3] = {get_i(&w), get_i(&w), get_i(&w)};
  float shown = get_f(&w), angle = get_f(&w);
  const anim_warp_params_t *wp = &c->params.warp;
  if ((warps[0] != 0) != (wp->rate != 0) || (warps[1] != 0) != (wp->stand != 0) || (warps[2] != 0) != (wp->orient != 0) ||
      !(shown >= 0.0f && shown <= 4.0f) || !(fabsf(angle) <= (float)M_PI))
    return ANIM_EFORMAT;
  c->frame = frame;
  c->frame_time_accum = get_f(&k), c->time_since_transition = get_f(&k), c->holding = get_i(&k) != 0;
  k.r += 9 * 4; /* the parameters and the warps on: the replica was made with them */
  shown = get_f(&k), angle = get_f(&k);
  float phase = get_f(&k);
  int32_t view = get_i(&k);
  anim_inertializer_t *in = &c->inertializer;
  in->anchor_anim_position = get_v(&k), in->anchor_anim_rotation = get_q(&k);
  in->anchor_world_position = get_v(&k), in->anchor_world_rotation = get_q(&k);
  for (int b = 0; b < nbones; b++) {
    c->offset_positions[b] = get_v(&k), c->offset_velocities[b] = get_v(&k);
    c->offset_rotations[b] = get_q(&k), c->offset_angular_velocities[b] = get_v(&k);
  }
  for (int b = 0; b < nbones; b++) c->pose_positions[b] = get_v(&k), c->pose_rotations[b] = get_q(&k);
  for (int i = 0; i < nfeet; i++) {
    anim_foot_lock_t *f = &c->feet.feet[i];
    int32_t state = get_i(&k);
    f->state = state == ANIM_FOOT_PLANTED ? ANIM_FOOT_PLANTED : state == ANIM_FOOT_STEPPING ? ANIM_FOOT_STEPPING
                                                                                            : ANIM_FOOT_FREE;
    f->lock_position = get_v(&k), f->step_from = get_v(&k);
    f->step_time = get_f(&k), f->step_lift = get_f(&k), f->offset = get_v(&k), f->offset_velocity = get_v(&k);
    f->previous_toe = get_v(&k), f->previous_target = get_v(&k), f->have_previous = get_i(&k) != 0;
  }
  c->feet.drop = get_f(&k), c->feet.drop_velocity = get_f(&k);
  /* The pose last shown, made again: a transition next tick starts from it. */
  anim_warp_restore(&c->warp, shown, angle, (view & 2) != 0, frame, phase, view & 1);
  c->feet_skipped = (view & 4) != 0; /* the feet shown are the data's (controller.h, skip_feet) */
  c->globals_fresh = 0;
  return 0;
}
