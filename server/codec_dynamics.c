/*
 * codec_dynamics.c: inverse_dynamics on the wire (see codec.h): the range
 * (or the character's span) and options checked field by field (bounds
 * against the database and the history are the service's), the per-frame
 * arrays encoded flat.
 */
#include <math.h>
#include <string.h>

#include "anim_error.h"
#include "codec_internal.h"

int srv_decode_inverse_dynamics(srv_decoder_t *d, const Animserver__InverseDynamicsRequest *in, srv_request_t *out) {
  srv_inverse_dynamics_request_t *r = &out->body.inverse_dynamics;
  int rc;
  if (in->character) {
    /* A character's recent ticks: its database is the character's. */
    if (in->database && in->database[0])
      return srv_decode_fail(d, ANIM_EINVAL, ".database = \"%.64s\": give a database range or a character, not both",
                             in->database);
    if (in->start || in->stop)
      return srv_decode_fail(d, ANIM_EINVAL, ".%s = %u: a character's span is given by seconds or ticks, not frames",
                             in->start ? "start" : "stop", in->start ? in->start : in->stop);
    if ((rc = srv_check_finite_value(d, "seconds", in->seconds))) return rc;
    if (in->seconds < 0.0f) return srv_decode_fail(d, ANIM_EINVAL, ".seconds = %g: must be > 0", in->seconds);
    if (in->seconds > 0.0f && (in->from_tick || in->to_tick))
      return srv_decode_fail(d, ANIM_EINVAL, ".seconds: give either seconds or from_tick and to_tick");
    if (in->seconds == 0.0f) {
      if (!in->to_tick) return srv_decode_fail(d, ANIM_EINVAL, ".seconds: give seconds or a tick range (to_tick is 0)");
      if (in->from_tick > in->to_tick)
        return srv_decode_fail(d, ANIM_ERANGE, ".from_tick = %llu: after to_tick = %llu (reversed)",
                               (unsigned long long)in->from_tick, (unsigned long long)in->to_tick);
      if (in->to_tick - in->from_tick + 1 < 3)
        return srv_decode_fail(d, ANIM_ERANGE, ".to_tick = %llu: ticks %llu..%llu are %llu, the differences need 3",
                               (unsigned long long)in->to_tick, (unsigned long long)in->from_tick,
                               (unsigned long long)in->to_tick, (unsigned long long)(in->to_tick - in->from_tick + 1));
      if (in->to_tick - in->from_tick + 1 > d->limits->max_pose_frames)
        return srv_decode_fail(d, ANIM_ELIMIT, ".to_tick = %llu: ticks %llu..%llu are %llu, at most %u",
                               (unsigned long long)in->to_tick, (unsigned long long)in->from_tick,
                               (unsigned long long)in->to_tick, (unsigned long long)(in->to_tick - in->from_tick + 1),
                               (unsigned)d->limits->max_pose_frames);
    }
    r->character = in->character, r->seconds = in->seconds;
    r->from_tick = in->from_tick, r->to_tick = in->to_tick;
  } else {
    if (in->seconds || in->from_tick || in->to_tick)
      return srv_decode_fail(d, ANIM_EINVAL, ".%s: only with a character", in->seconds ? "seconds" : in->from_tick ? "from_tick" : "to_tick");
    if ((rc = srv_decode_database(d, "database", in->database)) || (rc = srv_check_frame(d, "start", in->start, &r->start)) ||
        (rc = srv_check_frame(d, "stop", in->stop, &r->stop)))
      return rc;
    if (in->stop <= in->start)
      return srv_decode_fail(d, ANIM_ERANGE, ".stop = %u: must be past start (%u)", in->stop, in->start);
    if ((rc = srv_check_max(d, "stop", (uint64_t)in->stop - in->start, d->limits->max_pose_frames, ANIM_ELIMIT)))
      return rc;
  }
  if ((rc = srv_check_option(d, "max_root_torque", in->max_root_torque, 0.0f, 1e6f, "N m")) ||
      (rc = srv_check_option(d, "max_root_force", in->max_root_force, 0.0f, 1e7f, "N")) ||
      (rc = srv_check_option(d, "contact_height", in->contact_height, 0.0f, 1.0f, "m")) ||
      (rc = srv_check_option(d, "contact_speed", in->contact_speed, 0.0f, 100.0f, "m/s")) ||
      (rc = srv_check_option(d, "total_mass", in->total_mass, 1e-3f, 1000.0f, "kg")) ||
      (rc = srv_check_max(d, "step", in->step, 8, ANIM_EINVAL)))
    return rc;
  r->max_root_torque = in->max_root_torque, r->max_root_force = in->max_root_force;
  r->contact_height = in->contact_height, r->contact_speed = in->contact_speed;
  r->total_mass = in->total_mass, r->step = (int)in->step;
  return 0;
}

void srv_encode_inverse_dynamics(srv_encoder_t *e, const srv_response_t *in, Animserver__Response *out) {
  const srv_inverse_dynamics_response_t *r = &in->body.inverse_dynamics;
  const anim_database_t *db = &in->entry->db;
  Animserver__InverseDynamicsResponse *m =
      SRV_ENCODER_NEW(e, Animserver__InverseDynamicsResponse, ANIMSERVER__INVERSE_DYNAMICS_RESPONSE__INIT);
  if (!m || !(m->bones = srv_encoder_alloc(e, (size_t)(r->nbones + 1) * sizeof *m->bones))) return;
  size_t n = (size_t)r->nframes;
  m->database_version = db->version;
  m->start = (uint32_t)r->start, m->frames = (uint32_t)r->nframes, m->step = (uint32_t)r->step;
  m->frame_rate = r->frame_rate, m->total_mass = r->total_mass;
  for (int b = 0; b < r->nbones; b++) m->bones[m->n_bones++] = (char *)db->skeleton.names[b];
  /* The arrays are the response's: the message points at them. */
  m->torques = r->torques, m->n_torques = n * (size_t)r->nbones * 3;
  m->foot_forces = r->foot_forces, m->n_foot_forces = n * 6;
  m->foot_cops = r->foot_cops, m->n_foot_cops = n * 6;
  m->residual_forces = r->residual_forces, m->n_residual_forces = n * 3;
  m->residual_torques = r->residual_torques, m->n_residual_torques = n * 3;
  m->power = r->power, m->n_power = n;
  m->com = r->com, m->n_com = n * 3;
  protobuf_c_boolean *over = srv_encoder_alloc(e, (n + 1) * sizeof *over);
  if (!over) return;
  for (size_t i = 0; i < n; i++) over[i] = r->over_limit[i] != 0;
  m->over_limit = over, m->n_over_limit = n;
  m->frames_over_limit = (uint32_t)r->frames_over_limit, m->worst_frame = (uint32_t)r->worst_frame;
  m->mean_residual_force = r->mean_residual_force, m->max_residual_force = r->max_residual_force;
  m->mean_residual_torque = r->mean_residual_torque, m->max_residual_torque = r->max_residual_torque;
  m->character = r->character, m->first_tick = r->first_tick, m->ticks_filled = (uint32_t)r->ticks_filled;
  m->left_foot = (char *)db->skeleton.names[r->left_foot];
  m->right_foot = (char *)db->skeleton.names[r->right_foot];
  out->body_case = ANIMSERVER__RESPONSE__BODY_INVERSE_DYNAMICS, out->inverse_dynamics = m;
}
