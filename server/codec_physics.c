/*
 * codec_physics.c: the physics characters' requests on the wire: push,
 * set_body_modes, recover (see codec.h; the rules in the proto's
 * PushRequest and request_physics.h). Every value a request carries is
 * checked here, where no character is needed: finite, within its bounds,
 * one of impulse or force; bones are checked by the character's kind.
 */
#include <math.h>
#include <string.h>
#include "anim_error.h"
#include "body.h"
#include "codec_internal.h"

#define SET_BODY(out, CASE, field, value) ((out)->body_case = ANIMSERVER__RESPONSE__BODY_##CASE, (out)->field = (value))

/* A Vec3 field: finite, its length at most max (unit for the message). */
static int decode_bounded(srv_decoder_t *d, const char *field, const Animserver__Vec3 *in, float max, const char *unit,
                          vec3 *out) {
  size_t mark = srv_path_field(d, field);
  const float v[3] = {in->x, in->y, in->z};
  int rc = srv_check_finite(d, NULL, v, 3);
  if (rc) return rc;
  double length = sqrt((double)v[0] * v[0] + (double)v[1] * v[1] + (double)v[2] * v[2]);
  if (length > max)
    return srv_decode_fail(d, ANIM_EINVAL, " = (%g, %g, %g): its size %g %s is past the bound %g %s", v[0], v[1], v[2],
                           length, unit, max, unit);
  *out = vec3_make(v[0], v[1], v[2]);
  srv_path_restore(d, mark);
  return 0;
}

static int decode_bone(srv_decoder_t *d, const char *name, uint32_t index, srv_bone_ref_t *out) {
  if (name && name[0] && strlen(name) >= ANIM_NAME_MAX)
    return srv_decode_fail(d, ANIM_EBADNAME, ".bone: %zu bytes, at most %d", strlen(name), ANIM_NAME_MAX - 1);
  out->name = name && name[0] ? name : NULL;
  out->index = index;
  if (!out->name && index == 0)
    return srv_decode_fail(d, ANIM_EINVAL, ".bone: neither a name nor a bone_index (0 is the simulation bone, never "
                           "simulated)");
  return 0;
}

int srv_decode_push(srv_decoder_t *d, const Animserver__PushRequest *in, srv_request_t *out) {
  srv_push_request_t *r = &out->body.push;
  int rc;
  r->character = in->character;
  if ((rc = decode_bone(d, in->bone, in->bone_index, &r->bone))) return rc;
  if (in->point && (rc = decode_bounded(d, "point", in->point, SRV_PUSH_MAX_POINT, "m", &r->point))) return rc;
  if (!in->impulse == !in->force)
    return srv_decode_fail(d, ANIM_EINVAL, ": one of impulse (N s) or force (N with a duration), not %s",
                           in->impulse ? "both" : "neither");
  if ((rc = srv_check_finite_value(d, "duration", in->duration))) return rc;
  if (in->impulse) {
    if ((rc = decode_bounded(d, "impulse", in->impulse, SRV_PUSH_MAX_IMPULSE, "N s", &r->impulse))) return rc;
    if (in->duration != 0.0f)
      return srv_decode_fail(d, ANIM_EINVAL, ".duration = %g: an impulse acts at once (a duration goes with force)",
                             in->duration);
    r->is_impulse = 1;
  } else {
    if ((rc = decode_bounded(d, "force", in->force, SRV_PUSH_MAX_FORCE, "N", &r->force))) return rc;
    if (!(in->duration > 0.0f && in->duration <= SRV_PUSH_MAX_DURATION))
      return srv_decode_fail(d, ANIM_EINVAL, ".duration = %g: a force's must be in (0, %g] s", in->duration,
                             SRV_PUSH_MAX_DURATION);
    r->duration = in->duration;
  }
  r->tick = in->tick;
  return 0;
}

static int decode_mode(srv_decoder_t *d, int mode, int *out) {
  if (mode != ANIM_PHYSICS_KINEMATIC && mode != ANIM_PHYSICS_POWERED && mode != ANIM_PHYSICS_LIMP)
    return srv_decode_fail(d, ANIM_EINVAL, ".mode = %d: BODY_KINEMATIC (0), BODY_POWERED (1) or BODY_LIMP (2)", mode);
  *out = mode;
  return 0;
}

static int decode_duration(srv_decoder_t *d, float duration, float *out) {
  int rc = srv_check_finite_value(d, "duration", duration);
  if (rc) return rc;
  if (!(duration >= 0.0f && duration <= SRV_BODY_MAX_DURATION))
    return srv_decode_fail(d, ANIM_EINVAL, ".duration = %g: in [0, %g] s (0: until set again)", duration,
                           SRV_BODY_MAX_DURATION);
  *out = duration;
  return 0;
}

static int decode_part(srv_decoder_t *d, const Animserver__BodyPart *in, srv_body_part_t *out) {
  int rc;
  if ((rc = decode_bone(d, in->bone, in->bone_index, &out->bone)) || (rc = decode_mode(d, in->mode, &out->mode)) ||
      (rc = decode_duration(d, in->duration, &out->duration)))
    return rc;
  out->descendants = in->descendants;
  if (in->strength) {
    size_t mark = srv_path_field(d, "strength");
    const float v[3] = {in->strength->halflife, in->strength->damping_ratio, in->strength->max_torque};
    static const char *const names[3] = {"halflife", "damping_ratio", "max_torque"};
    for (int k = 0; k < 3; k++)
      if ((rc = srv_check_finite_value(d, names[k], v[k]))) return rc;
    srv_path_restore(d, mark);
    out->strength.given = 1;
    out->strength.halflife = v[0], out->strength.damping_ratio = v[1], out->strength.max_torque = v[2];
  }
  return 0;
}

int srv_decode_set_body_modes(srv_decoder_t *d, const Animserver__SetBodyModesRequest *in, srv_request_t *out) {
  srv_set_body_modes_request_t *r = &out->body.set_body_modes;
  r->character = in->character;
  r->reset = in->reset;
  int rc = srv_check_max(d, "parts", in->n_parts, SRV_BODY_MAX_PARTS, ANIM_ELIMIT);
  srv_body_part_t *parts = rc ? NULL : srv_decode_alloc(d, (in->n_parts + 1) * sizeof *parts);
  if (!parts) return rc ? rc : ANIM_ELIMIT;
  size_t mark = srv_path_field(d, "parts");
  for (size_t i = 0; i < in->n_parts; i++) {
    size_t item = srv_path_index(d, i);
    if ((rc = decode_part(d, in->parts[i], &parts[i]))) return rc;
    srv_path_restore(d, item);
  }
  srv_path_restore(d, mark);
  r->parts = parts, r->nparts = (int)in->n_parts;
  if (in->root) {
    const Animserver__RootStabiliser *s = in->root;
    srv_root_setting_t *o = &r->root;
    mark = srv_path_field(d, "root");
    const float v[4] = {s->halflife, s->damping_ratio, s->max_force, s->max_torque};
    static const char *const names[4] = {"halflife", "damping_ratio", "max_force", "max_torque"};
    for (int k = 0; k < 4; k++)
      if ((rc = srv_check_finite_value(d, names[k], v[k]))) return rc;
    if ((rc = decode_mode(d, s->mode, &o->mode)) || (rc = decode_duration(d, s->duration, &o->duration))) return rc;
    srv_path_restore(d, mark);
    o->given = 1;
    o->halflife = v[0], o->damping_ratio = v[1], o->max_force = v[2], o->max_torque = v[3];
  }
  return 0;
}

int srv_decode_recover(srv_decoder_t *d, const Animserver__RecoverRequest *in, srv_request_t *out) {
  (void)d;
  out->body.recover.character = in->character;
  return 0;
}

void srv_encode_push(srv_encoder_t *e, const srv_response_t *in, Animserver__Response *out) {
  Animserver__PushResponse *m = SRV_ENCODER_NEW(e, Animserver__PushResponse, ANIMSERVER__PUSH_RESPONSE__INIT);
  if (!m) return;
  m->tick = in->body.push.tick;
  SET_BODY(out, PUSH, push, m);
}

void srv_encode_set_body_modes(srv_encoder_t *e, const srv_response_t *in, Animserver__Response *out) {
  Animserver__SetBodyModesResponse *m =
      SRV_ENCODER_NEW(e, Animserver__SetBodyModesResponse, ANIMSERVER__SET_BODY_MODES_RESPONSE__INIT);
  if (!m) return;
  m->tick = in->body.set_body_modes.tick;
  SET_BODY(out, SET_BODY_MODES, set_body_modes, m);
}

void srv_encode_recover(srv_encoder_t *e, const srv_response_t *in, Animserver__Response *out) {
  Animserver__RecoverResponse *m = SRV_ENCODER_NEW(e, Animserver__RecoverResponse, ANIMSERVER__RECOVER_RESPONSE__INIT);
  if (!m) return;
  m->tick = in->body.recover.tick;
  SET_BODY(out, RECOVER, recover, m);
}
