/*
 * codec_character.c: the character and stream requests on the wire: create,
 * destroy, set_inputs, character_state, subscribe, update_subscription,
 * unsubscribe (see codec.h). Stream frames themselves are codec.c's.
 */
#include <math.h>
#include <stddef.h>
#include <string.h>
#include "anim_error.h"
#include "codec_internal.h"
#include "pose/world.h"
#include "registry.h"

/* Speeds a character may be asked for (m/s): ten times a sprint. Past it a
 * motion-matching character cannot follow anyway, and far past it (1e20,
 * 3e38) the springs' squares overflow and the character silently stands:
 * refused instead. */
#define SPEED_MAX 100.0f

/* A ControllerParams float field: its name, where it goes, and its rule. A
 * field left 0 keeps the server default, so only the sign (and for speeds
 * the bound) is checked. */
typedef struct {
  const char *name;
  size_t in_offset, out_offset;
  int positive; /* 1: > 0 when given; 0: >= 0 */
  const char *unit;
  float max;    /* 0: none */
} param_field_t;

#define PARAM(field, positive, unit, max)                                                          \
  {#field, offsetof(Animserver__ControllerParams, field), offsetof(anim_controller_params_t, field), \
   positive, unit, max}
static const param_field_t param_fields[] = {
    PARAM(inertialize_halflife, 1, "s", 0),   PARAM(velocity_halflife, 1, "s", 0),
    PARAM(rotation_halflife, 1, "s", 0),      PARAM(forward_speed, 0, "m/s", SPEED_MAX),
    PARAM(side_speed, 0, "m/s", SPEED_MAX),   PARAM(back_speed, 0, "m/s", SPEED_MAX),
    PARAM(transition_cost, 0, "", 0),         PARAM(replan_threshold, 0, "m/s", SPEED_MAX),
    PARAM(input_f, 1, "Hz", 0),               PARAM(input_zeta, 0, "", 0),
    PARAM(input_r, -1, "", 0),
};
#undef PARAM

static int decode_param(srv_decoder_t *d, const param_field_t *f, const Animserver__ControllerParams *in,
                        anim_controller_params_t *out) {
  float value = *(const float *)((const char *)in + f->in_offset);
  int rc = srv_check_finite_value(d, f->name, value);
  if (rc) return rc;
  if (value == 0.0f) return 0; /* the default */
  if (f->positive >= 0 && (value < 0.0f))
    return srv_decode_fail(d, ANIM_EINVAL, ".%s = %g: must be %s 0%s%s (or 0 for the default)", f->name, value,
                           f->positive ? ">" : ">=", *f->unit ? " " : "", f->unit);
  if (f->max > 0.0f && value > f->max)
    return srv_decode_fail(d, ANIM_EINVAL, ".%s = %g: at most %g%s%s", f->name, value, (double)f->max,
                           *f->unit ? " " : "", f->unit);
  *(float *)((char *)out + f->out_offset) = value;
  return 0;
}

/* The warping fields (warp.h's rules, each named): nothing applied unless all pass. */
static int decode_warp(srv_decoder_t *d, const Animserver__ControllerParams *in, anim_warp_params_t *out) {
  float values[] = {in->play_rate_min,    in->play_rate_max,    in->orientation_warp_max,
                    in->stride_scale_min, in->stride_scale_max, in->root_steering_max};
  const char *names[] = {"play_rate_min",    "play_rate_max",    "orientation_warp_max",
                         "stride_scale_min", "stride_scale_max", "root_steering_max"};
  for (int i = 0; i < 6; i++) {
    int rc = srv_check_finite_value(d, names[i], values[i]);
    if (rc) return rc;
  }
  anim_warp_params_t w = *out;
  if (in->play_rate_min != 0.0f && !(in->play_rate_min > 0.0f && in->play_rate_min <= 1.0f))
    return srv_decode_fail(d, ANIM_EINVAL, ".play_rate_min = %g: must be in (0, 1] (or 0 for the default)",
                           (double)in->play_rate_min);
  if (in->play_rate_max != 0.0f && !(in->play_rate_max >= 1.0f && in->play_rate_max <= 4.0f))
    return srv_decode_fail(d, ANIM_EINVAL, ".play_rate_max = %g: must be in [1, 4] (or 0 for the default)",
                           (double)in->play_rate_max);
  if (in->orientation_warp_max != 0.0f && !(in->orientation_warp_max > 0.0f && in->orientation_warp_max <= (float)M_PI))
    return srv_decode_fail(d, ANIM_EINVAL, ".orientation_warp_max = %g: must be in (0, pi] rad (or 0 for the default)",
                           (double)in->orientation_warp_max);
  if (in->stride_scale_min != 0.0f && !(in->stride_scale_min > 0.0f && in->stride_scale_min <= 1.0f))
    return srv_decode_fail(d, ANIM_EINVAL, ".stride_scale_min = %g: must be in (0, 1] (or 0 for the default)",
                           (double)in->stride_scale_min);
  if (in->stride_scale_max != 0.0f && !(in->stride_scale_max >= 1.0f && in->stride_scale_max <= 2.0f))
    return srv_decode_fail(d, ANIM_EINVAL, ".stride_scale_max = %g: must be in [1, 2] (or 0 for the default)",
                           (double)in->stride_scale_max);
  if (in->root_steering_max != 0.0f && !(in->root_steering_max > 0.0f && in->root_steering_max <= 1.0f))
    return srv_decode_fail(d, ANIM_EINVAL, ".root_steering_max = %g: must be in (0, 1] (or 0 for the default)",
                           (double)in->root_steering_max);
  if (in->root_steering_max != 0.0f) w.steer_max = in->root_steering_max;
  if (in->stride_scale_min != 0.0f) w.stride_min = in->stride_scale_min;
  if (in->stride_scale_max != 0.0f) w.stride_max = in->stride_scale_max;
  if (in->play_rate_min != 0.0f) w.rate_min = in->play_rate_min;
  if (in->play_rate_max != 0.0f) w.rate_max = in->play_rate_max;
  if (in->orientation_warp_max != 0.0f) w.orient_max = in->orientation_warp_max;
  /* Each flag is alone in a oneof, for presence (its case non-zero: given).
   * One left out keeps what out holds: the default on create, "not given"
   * for set_character_params, which keeps the character's. */
  if (in->play_rate_switch_case) w.rate = !in->no_play_rate;
  if (in->stand_warp_switch_case) w.stand = !in->no_stand_warp;
  if (in->orientation_warp_switch_case) w.orient = !in->no_orientation_warp;
  if (in->stride_warp_switch_case) w.stride = !in->no_stride_warp;
  if (in->root_steering_switch_case) w.steer = !in->no_root_steering;
  *out = w;
  return 0;
}

/* Server defaults with the client's non-zero fields on top. */
static int decode_params(srv_decoder_t *d, const Animserver__ControllerParams *in, anim_controller_params_t *out) {
  anim_controller_params_default(out);
  return in ? srv_decode_controller_params(d, in, out) : 0;
}

int srv_decode_controller_params(srv_decoder_t *d, const Animserver__ControllerParams *in,
                                 anim_controller_params_t *out) {
  size_t mark = srv_path_field(d, "params");
  int rc = 0;
  for (size_t i = 0; i < sizeof param_fields / sizeof param_fields[0] && rc == 0; i++)
    rc = decode_param(d, &param_fields[i], in, out);
  if (rc || (rc = srv_check_max(d, "search_interval", in->search_interval, 600, ANIM_EINVAL)) ||
      (rc = srv_check_max(d, "ignore_surrounding", in->ignore_surrounding, 100000, ANIM_EINVAL)) ||
      (rc = srv_check_max(d, "ignore_range_end", in->ignore_range_end, 100000, ANIM_EINVAL)))
    return rc;
  if ((rc = decode_warp(d, in, &out->warp))) return rc;
  if (in->search_interval) out->search_interval = (int)in->search_interval;
  if (in->ignore_surrounding) out->ignore_surrounding = (int)in->ignore_surrounding;
  if (in->ignore_range_end) out->ignore_range_end = (int)in->ignore_range_end;
  srv_path_restore(d, mark);
  return 0;
}

int srv_decode_placement(srv_decoder_t *d, const Animserver__Placement *p, srv_placement_t *out) {
  int rc;
  if ((rc = srv_check_world(d, "x", p->x)) || (rc = srv_check_world(d, "z", p->z)) ||
      (rc = srv_check_finite_value(d, "facing", p->facing)))
    return rc;
  *out = (srv_placement_t){p->x, p->z, p->facing, -1};
  return p->start_frame ? srv_check_frame(d, "start_frame.frame", p->start_frame->frame, &out->start_frame) : 0;
}

/* MODE_PHYSICAL's body: total_mass finite, 0 (the default) or within its bounds. */
static int decode_physics_options(srv_decoder_t *d, int mode, const Animserver__PhysicsOptions *in, float *out_mass) {
  *out_mass = SRV_PHYSICS_DEFAULT_MASS;
  if (!in) return 0;
  if (mode != ANIMSERVER__CHARACTER_MODE__MODE_PHYSICAL)
    return srv_decode_fail(d, ANIM_EINVAL, ".physics: only for MODE_PHYSICAL");
  size_t mark = srv_path_field(d, "physics");
  int rc = srv_check_finite_value(d, "total_mass", in->total_mass);
  if (rc) return rc;
  if (in->total_mass != 0.0f && !(in->total_mass >= SRV_PHYSICS_MIN_MASS && in->total_mass <= SRV_PHYSICS_MAX_MASS))
    return srv_decode_fail(d, ANIM_EINVAL, ".total_mass = %g: in [%g, %g] kg (0: %g)", in->total_mass,
                           SRV_PHYSICS_MIN_MASS, SRV_PHYSICS_MAX_MASS, SRV_PHYSICS_DEFAULT_MASS);
  if (in->total_mass != 0.0f) *out_mass = in->total_mass;
  srv_path_restore(d, mark);
  return 0;
}

int srv_decode_create_characters(srv_decoder_t *d, const Animserver__CreateCharactersRequest *in, srv_request_t *out) {
  srv_create_characters_request_t *r = &out->body.create_characters;
  int rc;
  if ((rc = srv_decode_database(d, "database", in->database)) ||
      (rc = srv_check_max(d, "placements", in->n_placements, d->limits->max_ids, ANIM_ELIMIT)) ||
      (rc = decode_params(d, in->params, &r->params)))
    return rc;
  r->search_interval_given = in->params && in->params->search_interval;
  r->mode = (int)in->mode;
  r->machine = in->machine;
  if (in->mode == ANIMSERVER__CHARACTER_MODE__MODE_MACHINE && (rc = srv_check_name(d, "machine", in->machine)))
    return rc;
  if (in->mode != ANIMSERVER__CHARACTER_MODE__MODE_MACHINE && in->machine[0])
    return srv_decode_fail(d, ANIM_EINVAL, ".machine = \"%.64s\": only with mode MODE_MACHINE", in->machine);
  if ((rc = srv_decode_path_options(d, "path", in->path, &r->path))) return rc;
  int tracker_mode = in->mode == ANIMSERVER__CHARACTER_MODE__MODE_TRACKER;
  if (tracker_mode != (in->tracker != NULL))
    return srv_decode_fail(d, ANIM_EINVAL, tracker_mode ? ".tracker is missing: MODE_TRACKER needs its tracked bones"
                                                        : ".tracker: only for MODE_TRACKER");
  if ((rc = srv_decode_tracker_setup(d, in->tracker, &r->tracker))) return rc;
  if ((rc = decode_physics_options(d, in->mode, in->physics, &r->physics_total_mass))) return rc;
  srv_placement_t *placements = srv_decode_alloc(d, (in->n_placements + 1) * sizeof *placements);
  if (!placements) return ANIM_ELIMIT;
  size_t mark = srv_path_field(d, "placements");
  for (size_t i = 0; i < in->n_placements; i++) {
    size_t item = srv_path_index(d, i);
    if ((rc = srv_decode_placement(d, in->placements[i], &placements[i]))) return rc;
    srv_path_restore(d, item);
  }
  srv_path_restore(d, mark);
  r->placements = placements;
  r->nplacements = (int)in->n_placements;
  return 0;
}

static int decode_ids(srv_decoder_t *d, const char *field, const uint64_t *ids, size_t n, const uint64_t **out,
                      int *out_n) {
  int rc = srv_check_max(d, field, n, d->limits->max_ids, ANIM_ELIMIT);
  *out = ids;
  *out_n = (int)n;
  return rc;
}

int srv_decode_destroy_characters(srv_decoder_t *d, const Animserver__DestroyCharactersRequest *in,
                                  srv_request_t *out) {
  srv_destroy_characters_request_t *r = &out->body.destroy_characters;
  return decode_ids(d, "characters", in->characters, in->n_characters, &r->ids, &r->n);
}

static int decode_stick(srv_decoder_t *d, const Animserver__StickInput *s, anim_controller_input_t *c) {
  size_t mark = srv_path_field(d, "stick");
  int rc;
  if ((rc = srv_check_finite_value(d, "x", s->x)) || (rc = srv_check_finite_value(d, "z", s->z)) ||
      (rc = srv_check_finite_value(d, "camera_azimuth", s->camera_azimuth)))
    return rc;
  float length = sqrtf(s->x * s->x + s->z * s->z);
  /* A unit stick rounded through float may come out a hair over 1. */
  if (length > 1.001f) return srv_decode_fail(d, ANIM_EINVAL, " (%g, %g) has length %g: at most 1", s->x, s->z, length);
  c->kind = ANIM_INPUT_STICK;
  c->stick_x = s->x, c->stick_z = s->z, c->camera_azimuth = s->camera_azimuth, c->strafe = s->strafe;
  srv_path_restore(d, mark);
  return 0;
}

static int decode_velocity(srv_decoder_t *d, const Animserver__VelocityInput *v, anim_controller_input_t *c) {
  size_t mark = srv_path_field(d, "velocity");
  int rc;
  if ((rc = srv_check_finite_value(d, "x", v->x)) || (rc = srv_check_finite_value(d, "z", v->z)) ||
      (rc = srv_check_finite_value(d, "facing", v->facing)))
    return rc;
  float speed = sqrtf(v->x * v->x + v->z * v->z);
  if (speed > SPEED_MAX)
    return srv_decode_fail(d, ANIM_EINVAL, " (%g, %g) is %g m/s: at most %g m/s", v->x, v->z, speed,
                           (double)SPEED_MAX);
  c->kind = ANIM_INPUT_VELOCITY;
  c->velocity = vec3_make(v->x, 0.0f, v->z);
  c->facing = v->facing;
  srv_path_restore(d, mark);
  return 0;
}

static int decode_goal(srv_decoder_t *d, const Animserver__GoalInput *g, anim_controller_input_t *c) {
  size_t mark = srv_path_field(d, "goal");
  int rc;
  if ((rc = srv_check_world(d, "x", g->x)) || (rc = srv_check_world(d, "z", g->z)) ||
      (rc = srv_check_finite_value(d, "speed", g->speed)))
    return rc;
  if (g->speed < 0.0f || g->speed > SPEED_MAX)
    return srv_decode_fail(d, ANIM_EINVAL, ".speed = %g: must be in [0, %g] m/s", g->speed, (double)SPEED_MAX);
  c->kind = ANIM_INPUT_GOAL;
  c->goal = vec3_make(g->x, 0.0f, g->z);
  c->goal_speed = g->speed;
  srv_path_restore(d, mark);
  return 0;
}

static int decode_input(srv_decoder_t *d, const Animserver__CharacterInput *in, srv_input_item_t *out) {
  memset(out, 0, sizeof *out);
  out->character = in->character;
  switch (in->input_case) {
  case ANIMSERVER__CHARACTER_INPUT__INPUT_STICK: return decode_stick(d, in->stick, &out->input);
  case ANIMSERVER__CHARACTER_INPUT__INPUT_VELOCITY: return decode_velocity(d, in->velocity, &out->input);
  case ANIMSERVER__CHARACTER_INPUT__INPUT_GOAL: return decode_goal(d, in->goal, &out->input);
  default: return srv_decode_fail(d, ANIM_EINVAL, ": give stick, velocity or goal");
  }
}

int srv_decode_set_inputs(srv_decoder_t *d, const Animserver__SetInputsRequest *in, srv_request_t *out) {
  srv_set_inputs_request_t *r = &out->body.set_inputs;
  int rc = srv_check_max(d, "inputs", in->n_inputs, d->limits->max_ids, ANIM_ELIMIT);
  srv_input_item_t *items = rc ? NULL : srv_decode_alloc(d, (in->n_inputs + 1) * sizeof *items);
  if (!items) return rc ? rc : ANIM_ELIMIT;
  size_t mark = srv_path_field(d, "inputs");
  for (size_t i = 0; i < in->n_inputs; i++) {
    size_t item = srv_path_index(d, i);
    if ((rc = decode_input(d, in->inputs[i], &items[i]))) return rc;
    srv_path_restore(d, item);
  }
  srv_path_restore(d, mark);
  r->items = items;
  r->n = (int)in->n_inputs;
  return 0;
}

int srv_decode_character_state(srv_decoder_t *d, const Animserver__CharacterStateRequest *in, srv_request_t *out) {
  out->body.character_state.character = in->character;
  out->body.character_state.offsets = in->offsets;
  out->body.character_state.query = in->query;
  return 0;
}

static int decode_encoding(srv_decoder_t *d, int value, srv_encoding_t *out) {
  if (value != SRV_ENCODING_FLOAT && value != SRV_ENCODING_QUANTIZED && value != SRV_ENCODING_REPLICATED)
    return srv_decode_fail(d, ANIM_EINVAL,
                           ".encoding = %d: ENCODING_FLOAT (0), ENCODING_QUANTIZED (1) or ENCODING_REPLICATED (2)",
                           value);
  *out = (srv_encoding_t)value;
  return 0;
}

/* A replica steps every tick: it cannot skip ticks, so the rate is 1. A
 * region's bands skip ticks too, but its records carry the ticks they
 * skipped (stream_replica.h), so a region may be replicated. */
static int check_replicated(srv_decoder_t *d, srv_encoding_t encoding, uint32_t rate_divisor) {
  if (encoding != SRV_ENCODING_REPLICATED) return 0;
  if (rate_divisor > 1)
    return srv_decode_fail(d, ANIM_EINVAL, ".rate_divisor = %u: ENCODING_REPLICATED sends every tick (0 or 1)",
                           rate_divisor);
  return 0;
}

static int decode_divisor(srv_decoder_t *d, uint32_t value, uint32_t *out) {
  *out = value ? value : 1;
  return srv_check_max(d, "rate_divisor", value, 3600, ANIM_EINVAL);
}

/* A region's extent (radius, half_x, half_z): finite, > 0 and at most
 * three world limits, past which a circle from anywhere in the world covers
 * all of it already (the far corner is 2 sqrt 2 limits away). */
#define AOI_EXTENT_MAX (3.0f * ANIM_WORLD_LIMIT)

static int aoi_extent(srv_decoder_t *d, const char *field, float value) {
  int rc = srv_check_finite_value(d, field, value);
  if (rc) return rc;
  size_t mark = srv_path_field(d, field);
  if (!(value > 0.0f)) return srv_decode_fail(d, ANIM_EINVAL, " = %g: must be > 0 m", (double)value);
  if (value > AOI_EXTENT_MAX)
    return srv_decode_fail(d, ANIM_EINVAL, " = %g: at most %g m (3 x Limits.world_limit)", (double)value,
                           (double)AOI_EXTENT_MAX);
  srv_path_restore(d, mark);
  return 0;
}

static int aoi_band(srv_decoder_t *d, const Animserver__AoiBand *in, float previous, srv_aoi_band_t *out) {
  int rc = aoi_extent(d, "radius", in->radius);
  if (rc) return rc;
  if (!(in->radius > previous))
    return srv_decode_fail(d, ANIM_EINVAL, ".radius = %g: bands must be in order of radius, each past the one "
                                           "before (%g m)", (double)in->radius, (double)previous);
  out->radius = in->radius;
  return decode_divisor(d, in->rate_divisor, &out->rate_divisor);
}

/* The region, whole, or an error naming its field ("subscribe.region.bands[1].radius"). */
static int decode_region(srv_decoder_t *d, const Animserver__AoiRegion *in, uint32_t rate_divisor,
                         srv_aoi_region_t *out) {
  size_t mark = srv_path_field(d, "region");
  int rc = 0;
  int circle = in->radius != 0.0f, box = in->half_x != 0.0f || in->half_z != 0.0f;
  if (circle == box)
    return srv_decode_fail(d, ANIM_EINVAL, circle ? ": radius (a circle) or half_x and half_z (a box), not both"
                                                  : ": set radius (a circle) or half_x and half_z (a box)");
  out->box = box;
  if (circle) rc = aoi_extent(d, "radius", in->radius);
  else if (!(rc = aoi_extent(d, "half_x", in->half_x))) rc = aoi_extent(d, "half_z", in->half_z);
  if (rc) return rc;
  out->radius = in->radius, out->half_x = in->half_x, out->half_z = in->half_z;
  out->follow = in->follow;
  if (!in->follow && in->centre) {
    size_t centre = srv_path_field(d, "centre");
    if ((rc = srv_check_world(d, "x", in->centre->x)) || (rc = srv_check_world(d, "z", in->centre->z))) return rc;
    srv_path_restore(d, centre);
    out->x = in->centre->x, out->z = in->centre->z;
  }
  if ((rc = srv_check_max(d, "bands", in->n_bands, SRV_AOI_MAX_BANDS, ANIM_ELIMIT))) return rc;
  if (in->n_bands && rate_divisor > 1) {
    srv_path_restore(d, mark);
    return srv_decode_fail(d, ANIM_EINVAL, ".rate_divisor = %u: with region.bands, each band sets its own rate",
                           rate_divisor);
  }
  float previous = 0.0f;
  for (size_t i = 0; i < in->n_bands; i++) {
    size_t band = srv_path_field(d, "bands");
    srv_path_index(d, i);
    if ((rc = aoi_band(d, in->bands[i], previous, &out->bands[i]))) return rc;
    srv_path_restore(d, band);
    previous = in->bands[i]->radius;
  }
  out->nbands = (int)in->n_bands;
  if (!out->nbands) out->bands[0] = (srv_aoi_band_t){AOI_EXTENT_MAX, rate_divisor}, out->nbands = 1;
  out->max_characters = in->max_characters;
  srv_path_restore(d, mark);
  return 0;
}

int srv_decode_subscribe(srv_decoder_t *d, const Animserver__SubscribeRequest *in, srv_request_t *out) {
  srv_subscribe_request_t *r = &out->body.subscribe;
  int rc = decode_ids(d, "characters", in->characters, in->n_characters, &r->ids, &r->nids);
  if (!rc) rc = decode_divisor(d, in->rate_divisor, &r->rate_divisor);
  if (!rc) rc = decode_encoding(d, (int)in->encoding, &r->encoding);
  r->has_region = in->region != NULL;
  if (!rc && in->region && (in->owned || in->n_characters))
    rc = srv_decode_fail(d, ANIM_EINVAL, ".region: not with characters or owned (a region picks its own)");
  if (!rc && in->region) rc = decode_region(d, in->region, r->rate_divisor, &r->region);
  if (!rc) rc = check_replicated(d, r->encoding, r->rate_divisor);
  if (!rc && !in->owned && in->n_characters == 0 && !in->region)
    rc = srv_decode_fail(d, ANIM_EINVAL, ": name characters, set owned or give a region");
  r->owned = in->owned;
  r->global_positions = in->global_positions;
  r->rotations_only = in->rotations_only;
  return rc;
}

int srv_decode_update_subscription(srv_decoder_t *d, const Animserver__UpdateSubscriptionRequest *in,
                                   srv_request_t *out) {
  srv_update_subscription_request_t *r = &out->body.update_subscription;
  r->subscription = in->subscription;
  r->paused = in->paused;
  int rc = decode_divisor(d, in->rate_divisor, &r->rate_divisor);
  if (!rc) rc = decode_encoding(d, (int)in->encoding, &r->encoding);
  return rc ? rc : check_replicated(d, r->encoding, r->rate_divisor); /* a region's rate: stream.c */
}

int srv_decode_unsubscribe(srv_decoder_t *d, const Animserver__UnsubscribeRequest *in, srv_request_t *out) {
  out->body.unsubscribe.subscription = in->subscription;
  return 0;
}

/* ---- encoding ---- */

#define SET_BODY(out, CASE, field, value) ((out)->body_case = ANIMSERVER__RESPONSE__BODY_##CASE, (out)->field = (value))

void srv_encode_create_characters(srv_encoder_t *e, const srv_response_t *in, Animserver__Response *out) {
  Animserver__CreateCharactersResponse *m =
      SRV_ENCODER_NEW(e, Animserver__CreateCharactersResponse, ANIMSERVER__CREATE_CHARACTERS_RESPONSE__INIT);
  if (!m) return;
  m->database_version = in->entry->db.version;
  m->n_characters = (size_t)in->body.create_characters.n;
  m->characters = in->body.create_characters.ids;
  SET_BODY(out, CREATE_CHARACTERS, create_characters, m);
}

void srv_encode_destroy_characters(srv_encoder_t *e, const srv_response_t *in, Animserver__Response *out) {
  Animserver__DestroyCharactersResponse *m =
      SRV_ENCODER_NEW(e, Animserver__DestroyCharactersResponse, ANIMSERVER__DESTROY_CHARACTERS_RESPONSE__INIT);
  if (!m) return;
  m->destroyed = in->body.destroy_characters.destroyed;
  SET_BODY(out, DESTROY_CHARACTERS, destroy_characters, m);
}

void srv_encode_set_inputs(srv_encoder_t *e, const srv_response_t *in, Animserver__Response *out) {
  Animserver__SetInputsResponse *m =
      SRV_ENCODER_NEW(e, Animserver__SetInputsResponse, ANIMSERVER__SET_INPUTS_RESPONSE__INIT);
  if (!m) return;
  m->tick = in->body.set_inputs.tick;
  SET_BODY(out, SET_INPUTS, set_inputs, m);
}

static Animserver__Vec3 *encode_vec3(srv_encoder_t *e, vec3 v) {
  Animserver__Vec3 *m = SRV_ENCODER_NEW(e, Animserver__Vec3, ANIMSERVER__VEC3__INIT);
  if (m) m->x = v.x, m->y = v.y, m->z = v.z;
  return m;
}

static Animserver__Quat *encode_quat(srv_encoder_t *e, quat q) {
  Animserver__Quat *m = SRV_ENCODER_NEW(e, Animserver__Quat, ANIMSERVER__QUAT__INIT);
  if (m) m->w = q.w, m->x = q.x, m->y = q.y, m->z = q.z;
  return m;
}

void srv_encode_character_state(srv_encoder_t *e, const srv_response_t *in, Animserver__Response *out) {
  Animserver__CharacterStateResponse *m =
      SRV_ENCODER_NEW(e, Animserver__CharacterStateResponse, ANIMSERVER__CHARACTER_STATE_RESPONSE__INIT);
  const srv_character_state_response_t *st = &in->body.character_state;
  if (!m || !(m->trajectory = srv_encoder_alloc(e, (size_t)(st->ntrajectory + 1) * sizeof *m->trajectory))) return;
  const anim_database_t *db = &in->entry->db;
  m->database_version = db->version;
  m->database = (char *)db->name;
  m->tick = st->tick;
  m->position = encode_vec3(e, st->position);
  m->velocity = encode_vec3(e, st->velocity);
  m->rotation = encode_quat(e, st->rotation);
  m->angular_velocity = encode_vec3(e, st->angular_velocity);
  m->desired_velocity = encode_vec3(e, st->desired_velocity);
  m->desired_rotation = encode_quat(e, st->desired_rotation);
  for (int i = 0; i < st->ntrajectory; i++) m->trajectory[m->n_trajectory++] = encode_vec3(e, st->trajectory[i]);
  m->frame = (uint32_t)st->frame;
  m->range = st->range >= 0 ? (uint32_t)st->range : 0;
  m->range_name = st->range >= 0 ? (char *)db->ranges[st->range].name : "";
  m->time_since_transition = st->time_since_transition;
  m->searches = st->searches;
  m->transitions = st->transitions;
  m->inertializer = srv_encode_inertializer(e, &st->inertializer);
  m->inertialize_halflife = st->halflife;
  m->mode = (Animserver__CharacterMode)st->mode;
  if (st->depth && (m->state_path = srv_encoder_alloc(e, (size_t)st->depth * sizeof *m->state_path))) {
    for (int l = 0; l < st->depth; l++) m->state_path[l] = (char *)st->state_path[l];
    m->n_state_path = m->n_state_times = (size_t)st->depth;
    m->state_times = st->state_times;
  }
  m->machine = (char *)st->machine;
  m->events_dropped = st->events_dropped;
  m->follow = (char *)(st->follow ? st->follow : "");
  m->path_arc = st->path_arc;
  m->arrived = st->arrived != 0;
  m->physics = (Animserver__PhysicsState)st->physics;
  m->physics_root_error = st->physics_root_error, m->pushes = st->pushes;
  m->physics_total_mass = st->physics_total_mass;
  m->plans = st->plans, m->expansions = st->expansions;
  m->scale = st->scale;
  m->n_tracker_residuals = (size_t)st->ntracker_residuals;
  m->tracker_residuals = (float *)st->tracker_residuals;
  m->play_rate = st->play_rate, m->warp_angle = st->warp_angle, m->warp_held = st->warp_held != 0;
  m->stride_scale = st->stride_scale, m->root_steering = st->root_steering;
  m->n_query = (size_t)st->nquery;
  m->query = st->query;
  if (st->has_params) m->params = srv_encode_controller_params(e, &st->params);
  if (st->nfeet && (m->feet = srv_encoder_alloc(e, (size_t)st->nfeet * sizeof *m->feet))) {
    for (int i = 0; i < st->nfeet; i++) {
      Animserver__FootLock *f = SRV_ENCODER_NEW(e, Animserver__FootLock, ANIMSERVER__FOOT_LOCK__INIT);
      if (!f) return;
      f->bone = (char *)db->skeleton.names[st->feet[i].bone];
      f->locked = st->feet[i].locked, f->released = st->feet[i].stepping;
      f->position = encode_vec3(e, st->feet[i].position);
      m->feet[m->n_feet++] = f;
    }
  }
  SET_BODY(out, CHARACTER_STATE, character_state, m);
}

void srv_encode_subscribe(srv_encoder_t *e, const srv_response_t *in, Animserver__Response *out) {
  Animserver__SubscribeResponse *m =
      SRV_ENCODER_NEW(e, Animserver__SubscribeResponse, ANIMSERVER__SUBSCRIBE_RESPONSE__INIT);
  if (!m) return;
  m->subscription = in->body.subscribe.subscription;
  m->tick_rate = in->body.subscribe.tick_rate;
  m->bones = in->body.subscribe.bones;
  SET_BODY(out, SUBSCRIBE, subscribe, m);
}

static void encode_subscription_changed(srv_encoder_t *e, uint64_t subscription, Animserver__Response *out) {
  Animserver__SubscriptionChangedResponse *m =
      SRV_ENCODER_NEW(e, Animserver__SubscriptionChangedResponse, ANIMSERVER__SUBSCRIPTION_CHANGED_RESPONSE__INIT);
  if (!m) return;
  m->subscription = subscription;
  SET_BODY(out, SUBSCRIPTION_CHANGED, subscription_changed, m);
}

void srv_encode_update_subscription(srv_encoder_t *e, const srv_response_t *in, Animserver__Response *out) {
  encode_subscription_changed(e, in->body.update_subscription.subscription, out);
}

void srv_encode_unsubscribe(srv_encoder_t *e, const srv_response_t *in, Animserver__Response *out) {
  encode_subscription_changed(e, in->body.unsubscribe.subscription, out);
}
