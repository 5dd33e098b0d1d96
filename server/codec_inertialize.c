/*
 * codec_inertialize.c: inertialize_transition, inertialize_evaluate,
 * transition_cost and spring_tune on the wire (see codec.h).
 */
#include <math.h>
#include <string.h>
#include "anim_error.h"
#include "codec_internal.h"
#include "pose/clip.h"
#include "pose/world.h"

/* Per bone: 3 position, 3 velocity, 4 rotation, 3 angular velocity floats. */
static const char *const pose_fields[4] = {"positions", "velocities", "rotations", "angular_velocities"};
static const size_t pose_widths[4] = {3, 3, 4, 3};

static int check_unit_quats(srv_decoder_t *d, const char *field, const float *q, size_t n) {
  for (size_t i = 0; i < n; i++) {
    const float *r = q + 4 * i;
    float norm = sqrtf(r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + r[3] * r[3]);
    if (fabsf(norm - 1.0f) > 1e-2f) {
      srv_path_field(d, field);
      return srv_decode_fail(d, ANIM_EINVAL, "[%zu..%zu] has norm %g: rotations must be unit quaternions (w, x, y, z)",
                             4 * i, 4 * i + 3, norm);
    }
  }
  return 0;
}

/* Four arrays of one bone count (1..ANIM_MAX_BONES), finite, the rotations unit. */
static int decode_arrays(srv_decoder_t *d, const float *const values[4], const size_t counts[4],
                         const char *const names[4], int *out_bones) {
  size_t n = counts[0] / pose_widths[0];
  int same = n > 0 && n <= ANIM_MAX_BONES;
  for (int i = 0; i < 4; i++) same = same && counts[i] == pose_widths[i] * n;
  if (!same)
    return srv_decode_fail(d, ANIM_EDIMENSION,
                           ": %s/%s/%s/%s have %zu/%zu/%zu/%zu floats: need 3/3/4/3 per bone for the same 1..%d bones",
                           names[0], names[1], names[2], names[3], counts[0], counts[1], counts[2], counts[3],
                           ANIM_MAX_BONES);
  int rc = 0;
  for (int i = 0; i < 4 && rc == 0; i++) rc = srv_check_finite(d, names[i], values[i], counts[i]);
  if (rc == 0) rc = check_unit_quats(d, names[2], values[2], n);
  *out_bones = (int)n;
  return rc;
}

static int decode_pose_state(srv_decoder_t *d, const Animserver__PoseState *in, srv_pose_ref_t *out) {
  const float *values[4] = {in->positions, in->velocities, in->rotations, in->angular_velocities};
  const size_t counts[4] = {in->n_positions, in->n_velocities, in->n_rotations, in->n_angular_velocities};
  out->frame = -1;
  out->positions = in->positions, out->velocities = in->velocities;
  out->rotations = in->rotations, out->angular_velocities = in->angular_velocities;
  size_t mark = srv_path_field(d, "pose");
  int rc = decode_arrays(d, values, counts, pose_fields, &out->nbones);
  /* Bone 0 is a world position, the others local offsets: one bound for all. */
  if (rc == 0) rc = srv_check_world_array(d, "positions", in->positions, in->n_positions);
  if (rc == 0) srv_path_restore(d, mark);
  return rc;
}

/* A frame of the request's database, or an explicit pose; *uses_frame set for a frame. */
static int decode_pose_ref(srv_decoder_t *d, const char *field, const Animserver__PoseRef *in, srv_pose_ref_t *out,
                           int *uses_frame) {
  memset(out, 0, sizeof *out);
  size_t mark = srv_path_field(d, field);
  int rc;
  if (!in) return srv_decode_fail(d, ANIM_EINVAL, " is missing: give a frame or a pose");
  if (in->source_case == ANIMSERVER__POSE_REF__SOURCE_FRAME) {
    *uses_frame = 1;
    rc = srv_check_frame(d, "frame", in->frame, &out->frame);
  } else if (in->source_case == ANIMSERVER__POSE_REF__SOURCE_POSE) {
    rc = decode_pose_state(d, in->pose, out);
  } else {
    return srv_decode_fail(d, ANIM_EINVAL, " is empty: give a frame or a pose");
  }
  if (rc == 0) srv_path_restore(d, mark);
  return rc;
}

static int decode_state(srv_decoder_t *d, const char *field, const Animserver__InertializerState *in,
                        srv_state_ref_t *out) {
  static const char *const names[4] = {"offset_positions", "offset_velocities", "offset_rotations",
                                       "offset_angular_velocities"};
  memset(out, 0, sizeof *out);
  if (!in) return 0;
  size_t mark = srv_path_field(d, field);
  const float *values[4] = {in->offset_positions, in->offset_velocities, in->offset_rotations,
                            in->offset_angular_velocities};
  const size_t counts[4] = {in->n_offset_positions, in->n_offset_velocities, in->n_offset_rotations,
                            in->n_offset_angular_velocities};
  int rc = decode_arrays(d, values, counts, names, &out->nbones);
  if (rc) return rc;
  if (in->n_anchor != 0 && in->n_anchor != 14)
    return srv_decode_fail(d, ANIM_EDIMENSION, ".anchor has %zu floats: need 0 or 14", in->n_anchor);
  if ((rc = srv_check_finite(d, "anchor", in->anchor, in->n_anchor))) return rc;
  if (in->n_anchor) {
    /* anim position (0..2) and world position (7..9): the world's bound. */
    static const size_t positions[6] = {0, 1, 2, 7, 8, 9};
    for (int k = 0; k < 6; k++)
      if (!(fabsf(in->anchor[positions[k]]) <= ANIM_WORLD_LIMIT)) {
        srv_path_field(d, "anchor");
        srv_path_index(d, positions[k]);
        return srv_check_world(d, NULL, in->anchor[positions[k]]);
      }
    if ((rc = check_unit_quats(d, "anchor", in->anchor + 3, 1)) ||
        (rc = check_unit_quats(d, "anchor", in->anchor + 10, 1)))
      return rc;
  }
  out->present = 1;
  out->offset_positions = in->offset_positions, out->offset_velocities = in->offset_velocities;
  out->offset_rotations = in->offset_rotations, out->offset_angular_velocities = in->offset_angular_velocities;
  out->anchor = in->n_anchor ? in->anchor : NULL;
  srv_path_restore(d, mark);
  return 0;
}

/* The database is required exactly when a frame is named; missing, the
 * error says why it is needed (a bare "a name is 1-63 characters" left a
 * client passing frames without one guessing). */
static int decode_optional_database(srv_decoder_t *d, const char *name, int uses_frame) {
  if (!uses_frame) return 0;
  if (!name || !*name)
    return srv_decode_fail(d, ANIM_EBADNAME, ".database is empty: a pose given as a frame needs the database whose "
                                             "frame it is (explicit poses need none)");
  return srv_decode_database(d, "database", name);
}

static int decode_halflife(srv_decoder_t *d, float halflife) {
  int rc = srv_check_finite_value(d, "halflife", halflife);
  if (rc == 0 && !(halflife > 0.0f))
    rc = srv_decode_fail(d, ANIM_EINVAL, ".halflife = %g: must be > 0 seconds", halflife);
  return rc;
}

int srv_decode_inertialize_transition(srv_decoder_t *d, const Animserver__InertializeTransitionRequest *in,
                                      srv_request_t *out) {
  srv_inertialize_transition_request_t *r = &out->body.inertialize_transition;
  int uses_frame = 0, rc;
  if ((rc = decode_pose_ref(d, "source", in->source, &r->source, &uses_frame)) ||
      (rc = decode_pose_ref(d, "destination", in->destination, &r->destination, &uses_frame)) ||
      (rc = decode_state(d, "state", in->state, &r->state)))
    return rc;
  return decode_optional_database(d, in->database, uses_frame);
}

int srv_decode_inertialize_evaluate(srv_decoder_t *d, const Animserver__InertializeEvaluateRequest *in,
                                    srv_request_t *out) {
  srv_inertialize_evaluate_request_t *r = &out->body.inertialize_evaluate;
  int uses_frame = 0, rc;
  if (!in->state) return srv_decode_fail(d, ANIM_EINVAL, ".state is missing");
  if ((rc = decode_state(d, "state", in->state, &r->state)) ||
      (rc = decode_pose_ref(d, "input", in->input, &r->input, &uses_frame)) ||
      (rc = decode_halflife(d, in->halflife)) || (rc = srv_check_finite_value(d, "t", in->t)))
    return rc;
  if (in->t < 0.0f) return srv_decode_fail(d, ANIM_EINVAL, ".t = %g: must be >= 0 seconds", in->t);
  r->halflife = in->halflife;
  r->t = in->t;
  return decode_optional_database(d, in->database, uses_frame);
}

int srv_decode_transition_cost(srv_decoder_t *d, const Animserver__TransitionCostRequest *in, srv_request_t *out) {
  srv_transition_cost_request_t *r = &out->body.transition_cost;
  int uses_frame = 0, rc;
  if ((rc = decode_pose_ref(d, "source", in->source, &r->source, &uses_frame)) ||
      (rc = decode_pose_ref(d, "destination", in->destination, &r->destination, &uses_frame)) ||
      (rc = decode_halflife(d, in->halflife)) ||
      (rc = srv_check_max(d, "bones", in->n_bones, ANIM_MAX_BONES, ANIM_ELIMIT)))
    return rc;
  if (in->n_bones > 0 && !uses_frame)
    return srv_decode_fail(d, ANIM_EINVAL, ".bones: bones can be named only with database frames");
  r->halflife = in->halflife;
  r->bones = (const char *const *)in->bones;
  r->nbones_named = (int)in->n_bones;
  return decode_optional_database(d, in->database, uses_frame);
}

/* value finite and > 0 (>= 0 with allow_zero). */
static int positive(srv_decoder_t *d, const char *field, double value, int allow_zero) {
  int rc = srv_check_finite_value(d, field, value);
  if (rc == 0 && (value < 0.0 || (!allow_zero && value == 0.0)))
    rc = srv_decode_fail(d, ANIM_EINVAL, ".%s = %g: must be %s 0", field, value, allow_zero ? ">=" : ">");
  return rc;
}

static int decode_fraction(srv_decoder_t *d, const Animserver__SpringFraction *f, srv_spring_tune_request_t *out) {
  size_t mark = srv_path_field(d, "fraction");
  int rc;
  out->problem = SRV_TUNE_FRACTION;
  if ((rc = srv_check_finite_value(d, "alpha", f->alpha)) || (rc = srv_check_finite_value(d, "x0", f->x0)) ||
      (rc = srv_check_finite_value(d, "v0", f->v0)) || (rc = positive(d, "t", f->t, 0)) ||
      (rc = positive(d, "mass", f->mass, 1)))
    return rc;
  if (!(f->alpha > 0.0 && f->alpha < 1.0))
    return srv_decode_fail(d, ANIM_EINVAL, ".alpha = %g: must be in (0, 1), the fraction of the distance left",
                           f->alpha);
  out->alpha = f->alpha, out->t = f->t, out->x0 = f->x0 != 0.0 ? f->x0 : 1.0, out->v0 = f->v0;
  out->mass = f->mass > 0.0 ? f->mass : 1.0;
  srv_path_restore(d, mark);
  return 0;
}

int srv_decode_spring_tune(srv_decoder_t *d, const Animserver__SpringTuneRequest *in, srv_request_t *out) {
  srv_spring_tune_request_t *r = &out->body.spring_tune;
  int rc;
  memset(r, 0, sizeof *r);
  switch (in->problem_case) {
  case ANIMSERVER__SPRING_TUNE_REQUEST__PROBLEM_FRACTION: return decode_fraction(d, in->fraction, r);
  case ANIMSERVER__SPRING_TUNE_REQUEST__PROBLEM_TO_CONSTRAINT: {
    const Animserver__SpringGains *g = in->to_constraint;
    srv_path_field(d, "to_constraint");
    r->problem = SRV_TUNE_TO_CONSTRAINT;
    if ((rc = positive(d, "stiffness", g->stiffness, 1)) || (rc = positive(d, "damping", g->damping, 1)) ||
        (rc = positive(d, "dt", g->dt, 0)))
      return rc;
    /* anim_spring_implicit_to_erp_cfm's last rule, named here (the service could only say "invalid argument"). */
    if (!((double)g->dt * g->stiffness + g->damping > 0.0))
      return srv_decode_fail(d, ANIM_EINVAL, ": stiffness = %g, damping = %g: no force at all (dt stiffness + damping "
                             "must be > 0)", g->stiffness, g->damping);
    r->stiffness = g->stiffness, r->damping = g->damping, r->dt = g->dt;
    return 0;
  }
  case ANIMSERVER__SPRING_TUNE_REQUEST__PROBLEM_FROM_CONSTRAINT: {
    const Animserver__SpringConstraint *c = in->from_constraint;
    srv_path_field(d, "from_constraint");
    r->problem = SRV_TUNE_FROM_CONSTRAINT;
    if ((rc = positive(d, "erp", c->erp, 1)) || (rc = positive(d, "cfm", c->cfm, 0)) ||
        (rc = positive(d, "dt", c->dt, 0)))
      return rc;
    if (c->erp > 1.0) return srv_decode_fail(d, ANIM_EINVAL, ".erp = %g: must be <= 1", c->erp);
    r->erp = c->erp, r->cfm = c->cfm, r->dt = c->dt;
    return 0;
  }
  default:
    return srv_decode_fail(d, ANIM_EINVAL, ": give fraction, to_constraint or from_constraint");
  }
}

/* ---- encoding ---- */

Animserver__InertializerState *srv_encode_inertializer(srv_encoder_t *e, const srv_inertializer_t *r) {
  Animserver__InertializerState *m =
      SRV_ENCODER_NEW(e, Animserver__InertializerState, ANIMSERVER__INERTIALIZER_STATE__INIT);
  if (!m) return NULL;
  size_t n = (size_t)r->nbones;
  m->n_offset_positions = 3 * n, m->offset_positions = r->offset_positions;
  m->n_offset_velocities = 3 * n, m->offset_velocities = r->offset_velocities;
  m->n_offset_rotations = 4 * n, m->offset_rotations = r->offset_rotations;
  m->n_offset_angular_velocities = 3 * n, m->offset_angular_velocities = r->offset_angular_velocities;
  m->n_anchor = 14, m->anchor = (float *)r->anchor;
  return m;
}

static Animserver__PoseState *encode_pose_state(srv_encoder_t *e, const srv_inertializer_t *r) {
  Animserver__PoseState *m = SRV_ENCODER_NEW(e, Animserver__PoseState, ANIMSERVER__POSE_STATE__INIT);
  if (!m) return NULL;
  size_t n = (size_t)r->nbones;
  m->n_positions = 3 * n, m->positions = r->positions;
  m->n_velocities = 3 * n, m->velocities = r->velocities;
  m->n_rotations = 4 * n, m->rotations = r->rotations;
  m->n_angular_velocities = 3 * n, m->angular_velocities = r->angular_velocities;
  return m;
}

static uint64_t version_of(const srv_response_t *in) { return in->entry ? in->entry->db.version : 0; }

void srv_encode_inertialize_transition(srv_encoder_t *e, const srv_response_t *in, Animserver__Response *out) {
  Animserver__InertializeTransitionResponse *r =
      SRV_ENCODER_NEW(e, Animserver__InertializeTransitionResponse, ANIMSERVER__INERTIALIZE_TRANSITION_RESPONSE__INIT);
  if (!r) return;
  r->database_version = version_of(in);
  r->state = srv_encode_inertializer(e, &in->body.inertialize_transition);
  out->body_case = ANIMSERVER__RESPONSE__BODY_INERTIALIZE_TRANSITION;
  out->inertialize_transition = r;
}

void srv_encode_inertialize_evaluate(srv_encoder_t *e, const srv_response_t *in, Animserver__Response *out) {
  Animserver__InertializeEvaluateResponse *r =
      SRV_ENCODER_NEW(e, Animserver__InertializeEvaluateResponse, ANIMSERVER__INERTIALIZE_EVALUATE_RESPONSE__INIT);
  if (!r) return;
  r->database_version = version_of(in);
  r->state = srv_encode_inertializer(e, &in->body.inertialize_evaluate);
  r->output = encode_pose_state(e, &in->body.inertialize_evaluate);
  out->body_case = ANIMSERVER__RESPONSE__BODY_INERTIALIZE_EVALUATE;
  out->inertialize_evaluate = r;
}

void srv_encode_transition_cost(srv_encoder_t *e, const srv_response_t *in, Animserver__Response *out) {
  const srv_transition_cost_response_t *c = &in->body.transition_cost;
  Animserver__TransitionCostResponse *r =
      SRV_ENCODER_NEW(e, Animserver__TransitionCostResponse, ANIMSERVER__TRANSITION_COST_RESPONSE__INIT);
  if (!r || !(r->bones = srv_encoder_alloc(e, (size_t)c->nbones * sizeof *r->bones + 1))) return;
  r->database_version = version_of(in);
  r->exact = c->exact;
  r->approximate = c->approximate;
  for (int b = 0; b < c->nbones; b++) {
    Animserver__BoneCost *bc = SRV_ENCODER_NEW(e, Animserver__BoneCost, ANIMSERVER__BONE_COST__INIT);
    if (!bc) return;
    bc->bone = (char *)c->names[b];
    bc->exact = c->bone_exact[b];
    bc->approximate = c->bone_approximate[b];
    r->bones[r->n_bones++] = bc;
  }
  out->body_case = ANIMSERVER__RESPONSE__BODY_TRANSITION_COST;
  out->transition_cost = r;
}

void srv_encode_spring_tune(srv_encoder_t *e, const srv_response_t *in, Animserver__Response *out) {
  const srv_spring_tune_response_t *t = &in->body.spring_tune;
  Animserver__SpringTuneResponse *r =
      SRV_ENCODER_NEW(e, Animserver__SpringTuneResponse, ANIMSERVER__SPRING_TUNE_RESPONSE__INIT);
  if (!r) return;
  r->halflife = t->halflife;
  r->stiffness = t->stiffness;
  r->damping = t->damping;
  r->erp = t->erp;
  r->cfm = t->cfm;
  out->body_case = ANIMSERVER__RESPONSE__BODY_SPRING_TUNE;
  out->spring_tune = r;
}
