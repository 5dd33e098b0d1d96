/*
 * codec_fit.c: the requests on poses from tracked points on the wire:
 * align, fit_pose, set_trackers, and the TrackerSetup of create_characters
 * (see codec.h, request_fit.h). Bone names are checked for syntax and
 * repetition only; the services resolve them in the database.
 */
#include <math.h>
#include <stddef.h>
#include <string.h>
#include "anim_error.h"
#include "codec_internal.h"
#include "pose/world.h"

#define TRACKER_MAX_SPEED 100.0f /* m/s, |velocity| */
#define OFFSET_MAX_METRES 10.0f  /* |coordinate| of a tracked point in its bone's frame */
#define WEIGHT_MAX 1e6f

/* ---- shared pieces ----
 * set_trackers carries thousands of points a tick: values are checked
 * first and the field path is only built for an error (building it costs
 * a formatted print per field, most of the decode's time). */

/* A vector bounded by bound (unit); bound WORLD: a world position (the
 * world limit, core/pose/world.h, its own message). */
#define WORLD -1.0f
static int decode_vec3(srv_decoder_t *d, const char *field, const Animserver__Vec3 *v, float bound, const char *unit,
                       vec3 *out) {
  float b = bound == WORLD ? ANIM_WORLD_LIMIT : bound;
  if (fabsf(v->x) <= b && fabsf(v->y) <= b && fabsf(v->z) <= b) { /* NaN compares false */
    *out = vec3_make(v->x, v->y, v->z);
    return 0;
  }
  if (field) srv_path_field(d, field);
  int rc;
  if (bound == WORLD) {
    if ((rc = srv_check_world(d, "x", v->x)) || (rc = srv_check_world(d, "y", v->y)) ||
        (rc = srv_check_world(d, "z", v->z)))
      return rc;
  }
  if ((rc = srv_check_finite_value(d, "x", v->x)) || (rc = srv_check_finite_value(d, "y", v->y)) ||
      (rc = srv_check_finite_value(d, "z", v->z)))
    return rc;
  return srv_decode_fail(d, ANIM_EINVAL, " = (%g, %g, %g): each coordinate at most %g %s", v->x, v->y, v->z,
                         (double)bound, unit);
}

/* Runs decode on item index of a list; only when it fails is it run again
 * with "[index]" on the path, so the error names the item. */
#define DECODE_ITEM(d, index, call)                 \
  do {                                             \
    size_t mark_ = (d)->len;                       \
    if ((call) != 0) {                             \
      srv_path_restore((d), mark_);                \
      srv_path_index((d), (index));                \
      int rc_ = (call);                            \
      if (rc_ != 0) return rc_;                    \
    }                                              \
  } while (0)

/* A unit quaternion (w, x, y, z) within 1e-2, as the other codecs take
 * rotations; normalized here so the core's tighter check passes. */
static int decode_orientation(srv_decoder_t *d, const Animserver__Quat *q, quat *out) {
  float norm = sqrtf(q->w * q->w + q->x * q->x + q->y * q->y + q->z * q->z);
  if (isfinite(norm) && fabsf(norm - 1.0f) <= 1e-2f) {
    *out = quat_make(q->w / norm, q->x / norm, q->y / norm, q->z / norm);
    return 0;
  }
  srv_path_field(d, "orientation");
  float values[4] = {q->w, q->x, q->y, q->z};
  int rc = srv_check_finite(d, NULL, values, 4);
  return rc ? rc : srv_decode_fail(d, ANIM_EINVAL, " has norm %g: a rotation is a unit quaternion (w, x, y, z)", norm);
}

static int decode_bone_name(srv_decoder_t *d, const char *name, int required) {
  if (required && (!name || !*name)) return srv_decode_fail(d, ANIM_EINVAL, ".bone is empty: name the tracked bone");
  size_t len = name ? strlen(name) : 0;
  return len < ANIM_NAME_MAX ? 0 : srv_check_max(d, "bone", len, ANIM_NAME_MAX - 1, ANIM_EBADNAME);
}

/* Bone i must not repeat an earlier one (names[0..i)). */
static int check_repeated(srv_decoder_t *d, const char *const *names, int i) {
  for (int j = 0; j < i; j++)
    if (strcmp(names[j], names[i]) == 0)
      return srv_decode_fail(d, ANIM_EINVAL, ".bone = \"%s\": given twice (also [%d])", names[i], j);
  return 0;
}

/* One TrackerInput. fit: fit_pose's rules (bone required, offset allowed,
 * lost refused); else set_trackers' (bone optional, offset refused). */
static int decode_tracker(srv_decoder_t *d, const Animserver__TrackerInput *in, int fit, srv_tracker_item_t *out) {
  memset(out, 0, sizeof *out);
  int rc = decode_bone_name(d, in->bone, fit);
  if (rc) return rc;
  out->tracked.bone = in->bone && *in->bone ? in->bone : NULL;
  if (in->offset) {
    if (!fit) return srv_decode_fail(d, ANIM_EINVAL, ".offset: set at the character's creation (tracker.trackers)");
    if ((rc = decode_vec3(d, "offset", in->offset, OFFSET_MAX_METRES, "m", &out->tracked.offset))) return rc;
  }
  anim_tracker_input_t *t = &out->input;
  if (in->lost) {
    if (fit) return srv_decode_fail(d, ANIM_EINVAL, ".lost: a one-shot fit takes the trackers it has (leave it out)");
    return 0; /* present 0: the rest is ignored */
  }
  if (!in->position) return srv_decode_fail(d, ANIM_EINVAL, ".position is missing: required unless lost");
  if ((rc = decode_vec3(d, "position", in->position, WORLD, "m", &t->position))) return rc;
  if (in->orientation) {
    if ((rc = decode_orientation(d, in->orientation, &t->orientation))) return rc;
    t->has_orientation = 1;
  }
  if (in->velocity) {
    if ((rc = decode_vec3(d, "velocity", in->velocity, TRACKER_MAX_SPEED, "m/s", &t->velocity))) return rc;
    t->has_velocity = 1;
  }
  if (!isfinite(in->weight)) return srv_check_finite_value(d, "weight", in->weight);
  if (in->weight < 0.0f || in->weight > WEIGHT_MAX)
    return srv_decode_fail(d, ANIM_EINVAL, ".weight = %g: in (0, %g] (or 0 for 1)", in->weight, (double)WEIGHT_MAX);
  t->weight = in->weight > 0.0f ? in->weight : 1.0f;
  t->present = 1;
  return 0;
}

/* One tracker of a list: decoded, and (fit) its bone not a repeat. */
static int decode_listed_tracker(srv_decoder_t *d, const Animserver__TrackerInput *in, int fit,
                                 srv_tracker_item_t *items, const char **names, int i) {
  int rc = decode_tracker(d, in, fit, &items[i]);
  names[i] = items[i].tracked.bone ? items[i].tracked.bone : "";
  return rc ? rc : fit ? check_repeated(d, names, i) : 0;
}

/* n TrackerInputs at the current path + field, 1..SRV_MAX_TRACKERS. */
static int decode_trackers(srv_decoder_t *d, const char *field, Animserver__TrackerInput *const *in, size_t n, int fit,
                           srv_tracker_item_t **out) {
  if (n == 0 || n > SRV_MAX_TRACKERS) {
    int rc = srv_check_max(d, field, n, SRV_MAX_TRACKERS, ANIM_ELIMIT);
    return rc ? rc : srv_decode_fail(d, ANIM_EINVAL, ".%s is empty: give 1 to %d trackers", field, SRV_MAX_TRACKERS);
  }
  srv_tracker_item_t *items = srv_decode_alloc(d, n * sizeof *items);
  if (!items) return ANIM_ELIMIT;
  const char *names[SRV_MAX_TRACKERS];
  size_t mark = d->len;
  for (size_t i = 0; i < n; i++)
    if (decode_listed_tracker(d, in[i], fit, items, names, (int)i) != 0) { /* again, naming it */
      srv_path_restore(d, mark);
      srv_path_field(d, field);
      srv_path_index(d, i);
      return decode_listed_tracker(d, in[i], fit, items, names, (int)i);
    }
  *out = items;
  return 0;
}

/* A FitParams float field: its name, where it goes, its rule. A field left
 * 0 keeps the server default, so only what a non-zero value may be is checked. */
typedef struct {
  const char *name;
  size_t in_offset, out_offset;
  float max;       /* exclusive upper bound, or 0: none */
  const char *unit;
} fit_field_t;

#define FIT(field, max, unit) \
  { #field, offsetof(Animserver__FitParams, field), offsetof(anim_pose_fit_params_t, field), max, unit }
static const fit_field_t fit_fields[] = {
    FIT(tracker_time, 0, "s"),          FIT(tracker_alpha, 1, ""),         FIT(tracker_sigma, 0, "m"),
    FIT(orientation_sigma, 0, "rad"),   FIT(prior_sigma_scale, 0, ""),     FIT(translation_sigma, 0, "m"),
    FIT(limit_margin, 0, "rad"),        FIT(transition_cost, 0, ""),       FIT(root_halflife, 0, "s"),
    FIT(inertialize_halflife, 0, "s"),  FIT(lost_halflife, 0, "s"),        FIT(scale, 0, ""),
    FIT(scale_halflife, 0, "s"),
};
#undef FIT

/* The client's non-zero fields on top of the defaults already in *out. */
static int decode_fit_params(srv_decoder_t *d, const Animserver__FitParams *in, anim_pose_fit_params_t *out) {
  if (!in) return 0;
  size_t mark = srv_path_field(d, "params");
  int rc = 0;
  for (size_t i = 0; i < sizeof fit_fields / sizeof *fit_fields; i++) {
    const fit_field_t *f = &fit_fields[i];
    float value = *(const float *)((const char *)in + f->in_offset);
    if ((rc = srv_check_finite_value(d, f->name, value))) return rc;
    if (value == 0.0f) continue;
    if (value < 0.0f || (f->max > 0.0f && value >= f->max))
      return srv_decode_fail(d, ANIM_EINVAL, ".%s = %g: must be > 0%s%s%s (or 0 for the default)", f->name, value,
                             f->max > 0.0f ? " and < 1" : "", *f->unit ? " " : "", f->unit);
    *(float *)((char *)out + f->out_offset) = value;
  }
  if ((rc = srv_check_max(d, "iterations", in->iterations, ANIM_POSE_FIT_MAX_ITERATIONS, ANIM_EINVAL)) ||
      (rc = srv_check_max(d, "search_interval", in->search_interval, 600, ANIM_EINVAL)))
    return rc;
  if (in->iterations) out->iterations = (int)in->iterations;
  if (in->search_interval) out->search_interval = (int)in->search_interval;
  out->foot_lock.enabled = !in->no_foot_lock;
  out->limit_joints = !in->no_joint_limits;
  if (anim_pose_fit_params_validate(out) != 0) /* the rules above are the core's: a mismatch is a bug here */
    return srv_decode_fail(d, ANIM_EINTERNAL, ": rejected by the fit (the codec's checks are out of date)");
  srv_path_restore(d, mark);
  return 0;
}

/* ---- align ---- */

static int decode_points(srv_decoder_t *d, const char *field, Animserver__Vec3 *const *in, size_t n, vec3 **out) {
  vec3 *points = srv_decode_alloc(d, (n + 1) * sizeof *points);
  if (!points) return ANIM_ELIMIT;
  size_t mark = srv_path_field(d, field);
  for (size_t i = 0; i < n; i++) {
    size_t item = srv_path_index(d, i);
    int rc = decode_vec3(d, NULL, in[i], WORLD, "m", &points[i]);
    if (rc) return rc;
    srv_path_restore(d, item);
  }
  srv_path_restore(d, mark);
  *out = points;
  return 0;
}

int srv_decode_align(srv_decoder_t *d, const Animserver__AlignRequest *in, srv_request_t *out) {
  srv_align_request_t *r = &out->body.align;
  int rc;
  if ((rc = srv_check_max(d, "source", in->n_source, SRV_ALIGN_MAX_POINTS, ANIM_ELIMIT))) return rc;
  if (in->n_target != in->n_source)
    return srv_decode_fail(d, ANIM_EDIMENSION, ".target has %zu points: as many as source (%zu)", in->n_target,
                           in->n_source);
  if (in->n_weights != 0 && in->n_weights != in->n_source)
    return srv_decode_fail(d, ANIM_EDIMENSION, ".weights has %zu values: none, or one per point (%zu)", in->n_weights,
                           in->n_source);
  if ((unsigned)in->mode > ANIMSERVER__ALIGN_MODE__ALIGN_YAW)
    return srv_decode_fail(d, ANIM_EINVAL, ".mode = %d: ALIGN_RIGID (0), ALIGN_SIMILARITY (1) or ALIGN_YAW (2)",
                           (int)in->mode);
  vec3 *source, *target;
  if ((rc = decode_points(d, "source", in->source, in->n_source, &source)) ||
      (rc = decode_points(d, "target", in->target, in->n_target, &target)) ||
      (rc = srv_check_finite(d, "weights", in->weights, in->n_weights)))
    return rc;
  for (size_t i = 0; i < in->n_weights; i++)
    if (in->weights[i] < 0.0f)
      return srv_decode_fail(d, ANIM_EINVAL, ".weights[%zu] = %g: must be >= 0", i, in->weights[i]);
  r->mode = (anim_umeyama_mode_t)in->mode;
  r->source = source, r->target = target;
  r->weights = in->n_weights ? in->weights : NULL;
  r->npoints = (int)in->n_source;
  return 0;
}

/* ---- fit_pose ---- */

int srv_decode_fit_pose(srv_decoder_t *d, const Animserver__FitPoseRequest *in, srv_request_t *out) {
  srv_fit_pose_request_t *r = &out->body.fit_pose;
  srv_tracker_item_t *items = NULL;
  int rc;
  anim_pose_fit_params_default(&r->params);
  if ((rc = srv_decode_database(d, "database", in->database)) ||
      (rc = decode_trackers(d, "trackers", in->trackers, in->n_trackers, 1, &items)) ||
      (rc = decode_fit_params(d, in->params, &r->params)))
    return rc;
  r->trackers = items;
  r->ntrackers = (int)in->n_trackers;
  return 0;
}

/* ---- set_trackers ---- */

int srv_decode_set_trackers(srv_decoder_t *d, const Animserver__SetTrackersRequest *in, srv_request_t *out) {
  srv_set_trackers_request_t *r = &out->body.set_trackers;
  int rc = srv_check_max(d, "characters", in->n_characters, d->limits->max_ids, ANIM_ELIMIT);
  srv_character_trackers_t *items = rc ? NULL : srv_decode_alloc(d, (in->n_characters + 1) * sizeof *items);
  if (!items) return rc ? rc : ANIM_ELIMIT;
  size_t mark = srv_path_field(d, "characters");
  for (size_t i = 0; i < in->n_characters; i++) {
    size_t item = d->len;
    const Animserver__CharacterTrackers *c = in->characters[i];
    srv_tracker_item_t *trackers = NULL;
    DECODE_ITEM(d, i, decode_trackers(d, "trackers", c->trackers, c->n_trackers, 0, &trackers));
    items[i] = (srv_character_trackers_t){c->character, trackers, (int)c->n_trackers, c->reset};
    srv_path_restore(d, item);
  }
  srv_path_restore(d, mark);
  r->characters = items;
  r->n = (int)in->n_characters;
  r->tick = in->tick; /* checked against the crowd's tick by the service */
  return 0;
}

/* ---- create_characters' TrackerSetup ---- */

int srv_decode_tracker_setup(srv_decoder_t *d, const Animserver__TrackerSetup *in, srv_tracker_setup_t *out) {
  memset(out, 0, sizeof *out);
  anim_pose_fit_params_default(&out->params);
  out->params.iterations = SRV_TRACKER_ITERATIONS;
  out->hold_seconds = SRV_TRACKER_HOLD_SECONDS;
  if (!in) return 0;
  size_t mark = srv_path_field(d, "tracker");
  int rc = srv_check_max(d, "trackers", in->n_trackers, SRV_MAX_TRACKERS, ANIM_ELIMIT);
  if (rc) return rc;
  if (in->n_trackers == 0)
    return srv_decode_fail(d, ANIM_EINVAL, ".trackers is empty: give 1 to %d tracked bones", SRV_MAX_TRACKERS);
  size_t list = srv_path_field(d, "trackers");
  const char *names[SRV_MAX_TRACKERS];
  for (size_t i = 0; i < in->n_trackers; i++) {
    size_t item = srv_path_index(d, i);
    const Animserver__TrackedBone *b = in->trackers[i];
    if ((rc = decode_bone_name(d, b->bone, 1))) return rc;
    names[i] = out->trackers[i].bone = b->bone;
    if ((rc = check_repeated(d, names, (int)i))) return rc;
    if (b->offset && (rc = decode_vec3(d, "offset", b->offset, OFFSET_MAX_METRES, "m", &out->trackers[i].offset)))
      return rc;
    srv_path_restore(d, item);
  }
  srv_path_restore(d, list);
  out->ntrackers = (int)in->n_trackers;
  if ((rc = decode_fit_params(d, in->params, &out->params)) ||
      (rc = srv_check_finite_value(d, "hold_seconds", in->hold_seconds)))
    return rc;
  if (in->hold_seconds < 0.0f || in->hold_seconds > SRV_TRACKER_HOLD_MAX_SECONDS)
    return srv_decode_fail(d, ANIM_EINVAL, ".hold_seconds = %g: in (0, %g] s (or 0 for %g)", in->hold_seconds,
                           (double)SRV_TRACKER_HOLD_MAX_SECONDS, (double)SRV_TRACKER_HOLD_SECONDS);
  if (in->hold_seconds > 0.0f) out->hold_seconds = in->hold_seconds;
  out->present = 1;
  srv_path_restore(d, mark);
  return 0;
}

/* ---- encoding ---- */

static Animserver__Vec3 *encode_vec3(srv_encoder_t *e, vec3 v) {
  Animserver__Vec3 *m = SRV_ENCODER_NEW(e, Animserver__Vec3, ANIMSERVER__VEC3__INIT);
  if (m) m->x = v.x, m->y = v.y, m->z = v.z;
  return m;
}

void srv_encode_align(srv_encoder_t *e, const srv_response_t *in, Animserver__Response *out) {
  const anim_umeyama_t *f = &in->body.align.fit;
  Animserver__AlignResponse *m = SRV_ENCODER_NEW(e, Animserver__AlignResponse, ANIMSERVER__ALIGN_RESPONSE__INIT);
  Animserver__Quat *q = SRV_ENCODER_NEW(e, Animserver__Quat, ANIMSERVER__QUAT__INIT);
  float *matrix = srv_encoder_alloc(e, 9 * sizeof *matrix);
  if (!m || !q || !matrix || !(m->translation = encode_vec3(e, f->translation))) return;
  q->w = f->rotation.w, q->x = f->rotation.x, q->y = f->rotation.y, q->z = f->rotation.z;
  for (int i = 0; i < 9; i++) matrix[i] = (float)f->matrix[i / 3][i % 3];
  m->rotation = q;
  m->n_matrix = 9, m->matrix = matrix;
  m->scale = f->scale, m->yaw = f->yaw, m->cost = f->cost, m->rms = f->rms;
  out->body_case = ANIMSERVER__RESPONSE__BODY_ALIGN;
  out->align = m;
}

void srv_encode_fit_pose(srv_encoder_t *e, const srv_response_t *in, Animserver__Response *out) {
  const srv_fit_pose_response_t *r = &in->body.fit_pose;
  Animserver__FitPoseResponse *m = SRV_ENCODER_NEW(e, Animserver__FitPoseResponse, ANIMSERVER__FIT_POSE_RESPONSE__INIT);
  Animserver__Pose *p = SRV_ENCODER_NEW(e, Animserver__Pose, ANIMSERVER__POSE__INIT);
  if (!m || !p) return;
  size_t n3 = 3 * (size_t)r->nbones, n4 = 4 * (size_t)r->nbones;
  p->frame = (uint32_t)r->prior_frame;
  p->n_local_positions = n3, p->local_positions = (float *)r->local_positions;
  p->n_local_rotations = n4, p->local_rotations = (float *)r->local_rotations;
  p->n_global_positions = n3, p->global_positions = (float *)r->global_positions;
  p->n_global_rotations = n4, p->global_rotations = (float *)r->global_rotations;
  m->database_version = in->entry->db.version;
  m->pose = p;
  m->n_residuals = (size_t)r->nresiduals, m->residuals = (float *)r->residuals;
  m->scale = r->scale;
  out->body_case = ANIMSERVER__RESPONSE__BODY_FIT_POSE;
  out->fit_pose = m;
}

void srv_encode_set_trackers(srv_encoder_t *e, const srv_response_t *in, Animserver__Response *out) {
  Animserver__SetTrackersResponse *m =
      SRV_ENCODER_NEW(e, Animserver__SetTrackersResponse, ANIMSERVER__SET_TRACKERS_RESPONSE__INIT);
  if (!m) return;
  m->tick = in->body.set_trackers.tick;
  out->body_case = ANIMSERVER__RESPONSE__BODY_SET_TRACKERS;
  out->set_trackers = m;
}
