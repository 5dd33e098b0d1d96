/* controller.c: the motion-matching character (see controller.h). */
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "character/controller.h"
#include "pose/kinematics.h"
#include "motion/spring.h"
#include "character/steering.h"
#include "character/history.h"
#include "character/stride.h"

static const vec3 up = {0.0f, 1.0f, 0.0f};

void anim_controller_params_default(anim_controller_params_t *p) {
  p->search_interval = 10;
  p->inertialize_halflife = 0.1f;
  p->body_halflife_scale = 2.0f;
  p->root_halflife_scale = 0.5f;
  p->velocity_halflife = 0.27f;
  p->rotation_halflife = 0.27f;
  p->forward_speed = 1.75f;
  p->side_speed = 1.5f;
  p->back_speed = 1.25f;
  p->ignore_surrounding = 20;
  p->ignore_range_end = 20;
  p->transition_cost = 0.01f;
  p->replan_threshold = 0.5f;
  p->input_f = 4.0f;
  p->input_zeta = 1.0f;
  p->input_r = 0.0f;
  p->foot_lock = (anim_foot_lock_params_t){.enabled = 1, .unlock_radius = 0.2f, .release_halflife = 0.1f};
  anim_warp_params_default(&p->warp);
}

int anim_controller_params_validate(const anim_controller_params_t *p) {
  float values[] = {p->inertialize_halflife, p->velocity_halflife, p->rotation_halflife, p->forward_speed,
                    p->side_speed, p->back_speed, p->transition_cost, p->replan_threshold, p->input_f,
                    p->input_zeta, p->input_r, p->foot_lock.unlock_radius, p->foot_lock.release_halflife,
                    p->body_halflife_scale, p->root_halflife_scale};
  if (!anim_floats_finite(values, (int)(sizeof values / sizeof values[0]))) return ANIM_ENONFINITE;
  if (p->search_interval < 1 || !(p->inertialize_halflife > 0) || !(p->velocity_halflife > 0) ||
      !(p->rotation_halflife > 0) || p->forward_speed < 0 || p->side_speed < 0 || p->back_speed < 0 ||
      p->ignore_surrounding < 0 || p->ignore_range_end < 0 || p->transition_cost < 0 || p->replan_threshold < 0 ||
      !(p->input_f > 0) || p->input_zeta < 0 || !(p->body_halflife_scale > 0) || !(p->root_halflife_scale > 0))
    return ANIM_EINVAL;
  int rc = anim_foot_lock_params_validate(&p->foot_lock);
  return rc ? rc : anim_warp_params_validate(&p->warp);
}

/* ---- views of the database ------------------------------------------------------------ */

/* ---- input -> desired velocity and facing (steering.h, shared with the learned controller) ---- */

static quat yaw_rotation(float angle) { return quat_from_angle_axis(angle, up); }

int anim_controller_input_validate(const anim_controller_input_t *in) {
  float values[] = {in->stick_x, in->stick_z, in->camera_azimuth, in->velocity.x, in->velocity.y, in->velocity.z,
                    in->facing, in->goal.x, in->goal.y, in->goal.z, in->goal_speed};
  if (!anim_floats_finite(values, (int)(sizeof values / sizeof values[0]))) return ANIM_ENONFINITE;
  if ((unsigned)in->kind > ANIM_INPUT_GOAL || in->stick_x * in->stick_x + in->stick_z * in->stick_z > 1.002f ||
      in->goal_speed < 0.0f)
    return ANIM_EINVAL;
  return 0;
}

int anim_controller_set_input(anim_controller_t *c, const anim_controller_input_t *in) {
  int rc = anim_controller_input_validate(in);
  if (rc == 0) c->input = *in;
  return rc;
}

/* ---- simulation and trajectory ---------------------------------------------------------- */

/* Predicts n samples, frame_offsets[i] frames ahead, from the simulation state. */
static void predict(const anim_controller_t *c, vec3 target_velocity, const int *frame_offsets, int n,
                    vec3 *out_positions, quat *out_rotations) {
  float times[ANIM_MAX_TRAJECTORY_SAMPLES];
  for (int i = 0; i < n; i++) times[i] = (float)frame_offsets[i] / c->db->frame_rate;
  anim_steering_predict(out_positions, out_rotations, &c->sim, target_velocity, &c->params, times, n);
}

/* ---- search --------------------------------------------------------------------------- */

/* The current frame's features with its trajectory replaced by the
 * prediction toward target_velocity, relative to the displayed root. The
 * trajectory-position term's predicted samples (world space) go to
 * out_positions/out_rotations and their count is returned (0 without one). */
static int query_for(const anim_controller_t *c, vec3 target_velocity, float *out_query, vec3 *out_positions,
                     quat *out_rotations) {
  const anim_features_t *f = &c->db->features;
  float raw[ANIM_MAX_FEATURE_DIMS];
  int npredicted = 0;
  anim_features_denormalize(f, f->values + (size_t)c->frame * (size_t)f->cols, raw);
  vec3 root = c->pose_positions[0];
  quat root_rotation = c->pose_rotations[0];
  for (int t = 0; t < f->schema.nterms; t++) {
    const anim_feature_term_t *term = &f->schema.terms[t];
    if (term->kind != ANIM_FEATURE_TRAJECTORY_POSITION && term->kind != ANIM_FEATURE_TRAJECTORY_DIRECTION) continue;
    vec3 positions[ANIM_MAX_TRAJECTORY_SAMPLES];
    quat rotations[ANIM_MAX_TRAJECTORY_SAMPLES];
    predict(c, target_velocity, term->frame_offsets, term->nsamples, positions, rotations);
    for (int s = 0; s < term->nsamples; s++) {
      vec3 world = term->kind == ANIM_FEATURE_TRAJECTORY_POSITION
                       ? vec3_sub(positions[s], root)
                       : quat_mul_vec3(rotations[s], vec3_make(0.0f, 0.0f, 1.0f));
      vec3 local = anim_warp_query_sample(&c->warp, quat_inv_mul_vec3(root_rotation, world),
                                          term->kind == ANIM_FEATURE_TRAJECTORY_POSITION);
      raw[f->group_start[t] + 2 * s] = local.x;
      raw[f->group_start[t] + 2 * s + 1] = local.z;
      if (term->kind == ANIM_FEATURE_TRAJECTORY_POSITION && s < ANIM_MAX_TRAJECTORY_SAMPLES)
        out_positions[s] = positions[s], out_rotations[s] = rotations[s], npredicted = term->nsamples;
    }
  }
  anim_features_normalize(f, raw, out_query);
  return npredicted;
}

/* The query of a search made now; keeps its predicted trajectory. */
static void build_query(anim_controller_t *c, vec3 target_velocity, float *out_query) {
  int n = query_for(c, target_velocity, out_query, c->trajectory_positions, c->trajectory_rotations);
  if (n) c->ntrajectory = n;
}

void anim_controller_query(const anim_controller_t *c, float *out_query) {
  vec3 positions[ANIM_MAX_TRAJECTORY_SAMPLES];
  quat rotations[ANIM_MAX_TRAJECTORY_SAMPLES];
  query_for(c, c->sim.smoothed_velocity.y, out_query, positions, rotations);
}

/* ---- standing still ---------------------------------------------------------------------- */

/* At rest: asked to stand (the smoothed input), the simulation neither
 * moving nor turning and facing where asked. The query is then the same
 * from one search to the next: no transition can follow the input better,
 * and each is a visible change for nothing. */
#define REST_SPEED 0.1f      /* m/s, of the smoothed input and the simulation */
#define REST_TURN 0.1f       /* rad/s, of the simulation */
#define REST_FACING 0.99875f /* |cos(half the angle)| to the asked facing: within 0.1 rad */

static int at_rest(const anim_controller_t *c, vec3 target) {
  return vec3_length(target) < REST_SPEED && vec3_length(c->sim.velocity) < REST_SPEED &&
         vec3_length(c->sim.angular_velocity) < REST_TURN &&
         fabsf(quat_dot(c->sim.rotation, c->sim.desired_rotation)) > REST_FACING;
}

/* A still pose of the data: every contact on and the root (the simulation
 * bone) slower than REST_SPEED. */
static int still_frame(const anim_database_t *db, int frame) {
  vec3 v = db->global_velocities[(size_t)frame * (size_t)db->nbones];
  if (v.x * v.x + v.z * v.z >= REST_SPEED * REST_SPEED) return 0;
  for (int s = 0; s < db->ncontacts; s++)
    if (!db->contacts[(size_t)frame * (size_t)db->ncontacts + (size_t)s]) return 0;
  return db->ncontacts > 0;
}

/* Where a search forced by the clip's end at rest may land: a whole
 * trajectory horizon (the schema's furthest sample) before a range's end,
 * so the landing's features are all the clip's own, not extrapolated past
 * its end, and it plays at least that long; but never so far that the
 * range playing has no candidate left (a state machine's search may be
 * kept to a few short tagged clips). */
static int rest_range_end(const anim_controller_t *c) {
  const anim_database_t *db = c->db;
  int horizon = 0, r = anim_database_range_of(db, c->frame);
  for (int t = 0; t < db->features.schema.nterms; t++) {
    const anim_feature_term_t *term = &db->features.schema.terms[t];
    for (int s = 0; s < term->nsamples; s++)
      if (term->frame_offsets[s] > horizon) horizon = term->frame_offsets[s];
  }
  int length = r >= 0 ? db->ranges[r].stop - db->ranges[r].start : 1;
  if (horizon > length - 1) horizon = length - 1;
  return horizon > c->params.ignore_range_end ? horizon : c->params.ignore_range_end;
}

/* Whether a character at rest should hold frame `frame` rather than play
 * on: a still pose whose clip, search_interval frames on, matches the
 * query worse by more than a transition costs (a clip that stands a moment
 * and then walks off; on data with no idle to loop, the best standing
 * frame is the start of such a clip, and playing on and jumping back made
 * CMU's character hop six times a second). A clip that goes on standing
 * (an idle) plays on. */
static int should_hold(const anim_controller_t *c, const float *query, int frame) {
  const anim_database_t *db = c->db;
  const anim_features_t *f = &db->features;
  int later = frame + c->params.search_interval;
  if (!still_frame(db, frame) || later >= anim_database_range_stop(db, frame)) return 0;
  float now = anim_search_distance(query, f->values + (size_t)frame * (size_t)f->cols, f->cols);
  float then = anim_search_distance(query, f->values + (size_t)later * (size_t)f->cols, f->cols);
  return then > now + c->params.transition_cost;
}

/* Fills the search for this tick: the current frame competes unless the
 * clip is about to end (it has no future there). At rest, a search forced
 * by the clip's end lands only a trajectory horizon or more before a range
 * end (rest_range_end): the frames nearest the end of an idle match its
 * end best, and landing there looped its last ignore_range_end frames (a
 * transition every 0.33 s on the default database's idle). */
static void prepare_search(anim_controller_t *c, vec3 target_velocity, int must_leave, float *out_query,
                           anim_search_query_t *out_search) {
  const anim_controller_params_t *p = &c->params;
  build_query(c, target_velocity, out_query);
  int rest = at_rest(c, target_velocity);
  int range_end = rest && must_leave ? rest_range_end(c) : p->ignore_range_end;
  c->search_at_rest = rest, c->search_query = out_query;
  anim_search_query_t q = {out_query, 1, must_leave ? -1 : c->frame, p->transition_cost, range_end,
                           p->ignore_surrounding, 0};
  *out_search = q;
  c->search_spec = out_search;
  c->searches++;
  c->frames_since_search = 0;
  c->velocity_at_last_search = target_velocity;
}

/* The pose of frame, still when held: its velocities zero (the per-bone
 * block's array of zeros after the global positions, never written). */
static anim_pose_view_t shown_frame_pose(const anim_controller_t *c, int frame, int held) {
  anim_pose_view_t view = anim_database_frame_pose(c->db, frame);
  if (held) view.velocities = view.angular_velocities = c->offset_positions + 7 * (size_t)c->db->nbones;
  return view;
}

/* The pose to show: between two frames when warping plays at a rate (warp.h). */
static anim_pose_view_t shown_pose(anim_controller_t *c) {
  if (!c->warp.params.rate && !c->warp.params.stand) return shown_frame_pose(c, c->frame, c->holding);
  return anim_warp_pose(&c->warp, c->frame, c->frame_time_accum * c->db->frame_rate, c->holding);
}

static void transition_to(anim_controller_t *c, int frame) {
  int warped = c->warp.have_view; /* both poses between two frames (warp.h) */
  anim_pose_view_t src = warped ? c->warp.view : shown_frame_pose(c, c->frame, c->holding);
  anim_pose_view_t dst = warped ? anim_warp_transition_pose(&c->warp, frame) : anim_database_frame_pose(c->db, frame);
  if (anim_inertializer_transition(&c->inertializer, &src, &dst) != 0) return;
  c->frame = frame;
  c->time_since_transition = 0.0f;
  c->transitions++;
  c->transitioned = 1;
}

/* ---- lifetime and tick ----------------------------------------------------------------- */

size_t anim_controller_bone_bytes(int nbones) {
  /* 7 vec3 arrays and one of zeros (the rates of a held pose; 96 bytes a
   * bone keep the quats 16-byte aligned), 3 quat arrays, a flag a bone. */
  return (size_t)(nbones > 0 ? nbones : 0) * (8 * sizeof(vec3) + 3 * sizeof(quat) + 1);
}

void anim_controller_prefetch(const anim_controller_t *c) {
  const char *state = (const char *)c, *bones = (const char *)c->offset_positions;
  size_t bone_bytes = anim_controller_bone_bytes(c->db ? c->db->nbones : 0);
  for (size_t at = 0; at < sizeof *c; at += 64) __builtin_prefetch(state + at);
  for (size_t at = 0; at < bone_bytes; at += 64) __builtin_prefetch(bones + at);
}

void anim_controller_free(anim_controller_t *c) {
  free(c->offset_positions); /* the block of every per-bone array */
  anim_warp_free(&c->warp);
  memset(c, 0, sizeof *c);
}

static int has_trajectory(const anim_database_t *db) {
  for (int t = 0; t < db->features.schema.nterms; t++)
    if (db->features.schema.terms[t].kind == ANIM_FEATURE_TRAJECTORY_POSITION) return 1;
  return 0;
}

/* The rotations blending at the legs' speed: each contact bone and the
 * three bones above it (those below the root), and the root's turn. */
static void find_fast_rotations(anim_controller_t *c) {
  const anim_database_t *db = c->db;
  c->fast_rotations[0] = 1;
  for (int s = 0; s < db->ncontacts; s++)
    for (int b = db->contact_bones[s], k = 0; b > 0 && k < 4; b = db->skeleton.parents[b], k++)
      c->fast_rotations[b] = 1;
}

int anim_controller_init(anim_controller_t *c, const anim_database_t *db, const anim_search_index_t *index,
                        const anim_controller_params_t *params, vec3 position, float facing, int start_frame) {
  memset(c, 0, sizeof *c);
  anim_controller_params_t defaults;
  if (!params) anim_controller_params_default(&defaults), params = &defaults;
  int rc = anim_controller_params_validate(params);
  if (rc) return rc;
  if (!db || !db->features.values || !has_trajectory(db) || !isfinite(position.x + position.z + facing))
    return ANIM_EINVAL;
  if (start_frame < 0 || start_frame >= db->nframes) return ANIM_ERANGE;
  size_t n = (size_t)db->nbones;
  c->db = db, c->index = index, c->params = *params;
  c->pose_bone_rates = 1;
  /* Everything per bone in one block: a character's pose state stays together in memory. */
  vec3 *v = calloc(1, anim_controller_bone_bytes(db->nbones));
  if (!v) return ANIM_ENOMEM;
  if ((rc = anim_warp_init(&c->warp, db, &params->warp))) return free(v), rc;
  c->offset_positions = v, c->offset_velocities = v + n, c->offset_angular_velocities = v + 2 * n;
  c->pose_positions = v + 3 * n, c->pose_velocities = v + 4 * n, c->pose_angular_velocities = v + 5 * n;
  c->global_positions = v + 6 * n;
  quat *q = (quat *)(v + 8 * n); /* after an array of zeros (anim_controller_bone_bytes) */
  c->offset_rotations = q, c->pose_rotations = q + n, c->global_rotations = q + 2 * n;
  c->fast_rotations = (uint8_t *)(q + 3 * n);
  anim_inertializer_init(&c->inertializer, n, c->offset_positions, c->offset_velocities, c->offset_rotations,
                         c->offset_angular_velocities);
  anim_dynamics_params_make(&c->sim.smoothing, params->input_f, params->input_zeta, params->input_r);
  c->input.kind = ANIM_INPUT_STICK;
  find_fast_rotations(c);
  /* A skeleton whose contact bones have no legs above them simply goes unlocked. */
  const anim_foot_lock_params_t *lock = &params->foot_lock;
  if (lock->enabled && (anim_foot_locks_init(&c->feet, db, lock->unlock_radius, lock->release_halflife) != 0 ||
                        anim_foot_locks_ground(&c->feet, ANIM_FOOT_MAX_DROP) != 0))
    c->feet.nfeet = 0;
  c->warp.can_stride = c->feet.nfeet > 0; /* stride warping bends foot locking's legs */
  anim_controller_reset(c, position, facing, vec3_zero(), start_frame);
  return 0;
}

int anim_controller_reset(anim_controller_t *c, vec3 position, float facing, vec3 velocity, int start_frame) {
  if (!isfinite(position.x + position.z + facing + velocity.x + velocity.z)) return ANIM_ENONFINITE;
  if (start_frame < 0 || start_frame >= c->db->nframes) return ANIM_ERANGE;
  const anim_database_t *db = c->db;
  size_t n = (size_t)db->nbones;
  memset(c->offset_positions, 0, n * sizeof(vec3)), memset(c->offset_velocities, 0, n * sizeof(vec3));
  memset(c->offset_angular_velocities, 0, n * sizeof(vec3));
  for (size_t b = 0; b < n; b++) c->offset_rotations[b] = quat_identity();
  c->frame = start_frame;
  c->sim.position = vec3_make(position.x, 0.0f, position.z);
  c->sim.velocity = c->sim.desired_velocity = c->velocity_at_last_search = vec3_make(velocity.x, 0.0f, velocity.z);
  c->sim.acceleration = c->sim.angular_velocity = vec3_zero();
  c->sim.rotation = c->sim.desired_rotation = yaw_rotation(facing);
  c->sim.arrival.arrived = c->sim.arrival.set_off = 0;
  anim_dynamics_vec3_reset(&c->sim.smoothed_velocity, c->sim.velocity);
  c->frame_time_accum = c->time_since_transition = c->tick_dt = 0.0f;
  c->tick_frames = c->tick_searching = c->search_reasons = c->transitioned = c->globals_fresh = 0;
  c->holding = c->search_at_rest = 0;
  c->search_query = NULL;
  anim_warp_reset(&c->warp);
  size_t base = (size_t)start_frame * n;
  anim_inertializer_place(&c->inertializer, db->local_positions[base], db->local_rotations[base], c->sim.position,
                          c->sim.rotation);
  /* A first displayed pose, so queries have a root from the start. */
  anim_pose_view_t view = anim_database_frame_pose(db, start_frame);
  anim_pose_buffer_t out = {n, c->pose_positions, c->pose_velocities, c->pose_rotations, c->pose_angular_velocities};
  anim_inertializer_update(&c->inertializer, &out, &view, c->params.inertialize_halflife, 0.0f);
  c->frames_since_search = c->params.search_interval; /* search on the first tick */
  anim_foot_locks_reset(&c->feet);
  c->feet_skipped = 0;
  c->moved_between = 1;
  return 0;
}

/* Whole frames dt brings, keeping the remainder for the next tick. */
static int take_frames(anim_controller_t *c, float dt) {
  c->frame_time_accum += dt;
  int frames = (int)floorf(c->frame_time_accum * c->db->frame_rate);
  c->frame_time_accum -= (float)frames / c->db->frame_rate;
  return frames;
}

int anim_controller_tick_begin(anim_controller_t *c, float dt, float *out_query, anim_search_query_t *out_search) {
  if (!(dt > 0.0f) || !isfinite(dt)) return ANIM_EINVAL;
  const anim_controller_params_t *p = &c->params;
  anim_steering_sim_desire(&c->sim, &c->input, p, c->pose_velocities[0], dt);
  vec3 target = c->sim.smoothed_velocity.y;
  c->tick_dt = dt;
  float sim_speed = vec3_length(c->sim.velocity);
  float rate_before = c->warp.shown, angle_before = c->warp.angle;
  c->tick_frames = take_frames(c, anim_warp_begin(&c->warp, c->frame, c->sim.desired_velocity,
                                                  c->sim.desired_rotation, c->pose_rotations[0], sim_speed, dt));
  c->frames_since_search += c->tick_frames;
  c->transitioned = 0;
  c->globals_fresh = 0;
  c->search_spec = NULL;
  /* Search from the pose shown last (the transition's source must be the
   * input of the last update), before advancing. */
  int near_end = c->frame + c->tick_frames >= anim_database_range_stop(c->db, c->frame) - 1;
  int replan = vec3_length(vec3_sub(target, c->velocity_at_last_search)) > p->replan_threshold;
  /* A held pose is let go as soon as the character is no longer at rest. */
  if (c->holding && !at_rest(c, target)) c->holding = 0;
  uint8_t changed = (uint8_t)((memcmp(&rate_before, &c->warp.shown, sizeof rate_before) ? ANIM_RECORD_PLAY_RATE : 0) |
                               (memcmp(&angle_before, &c->warp.angle, sizeof angle_before) ? ANIM_RECORD_WARP_ANGLE : 0));
  c->record = (anim_controller_record_t){-1, (uint8_t)c->holding, 0, (uint8_t)c->moved_between, 0, changed,
                                         c->warp.shown, c->warp.angle, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f};
  c->moved_between = 0;
  int periodic = c->frames_since_search >= p->search_interval * (c->search_scale > 1 ? c->search_scale : 1);
  c->search_reasons = (periodic ? ANIM_CONTROLLER_SEARCH_PERIODIC : 0) | (replan ? ANIM_CONTROLLER_SEARCH_REPLAN : 0) |
                      (near_end ? ANIM_CONTROLLER_SEARCH_RANGE_END : 0);
  c->tick_searching = c->search_reasons != 0 && !c->warp.settled; /* a held stance searches when asked to move */
  if (c->tick_searching) prepare_search(c, target, near_end, out_query, out_search);
  return c->tick_searching;
}

/* How far the pelvis may come down for a longer stride (m; stride.h). */
#define STRIDE_MAX_DROP 0.06f

/* Stride warping (warp.h, stride.h): the root's travel this tick by the
 * clip's own motion (its velocity in the data, through the inertializer's
 * anchor into the world) along the asked direction, stride - 1 times
 * more, the anchor with it so the next tick goes on from there; the
 * displayed velocity as much faster; the legs reaching as much further
 * along that direction, so planted feet keep still. Only the clip's
 * motion: scaling the root's whole displacement scaled a transition's
 * decaying offset too; and only along the asked direction: stretching a
 * curving clip's own sway sent CMU 3dsMax's sideways walks 17 degrees
 * off. */
static void warp_stride(anim_controller_t *c, const anim_pose_view_t *view, float stride, float dt) {
  const anim_inertializer_t *in = &c->inertializer;
  quat anchor = quat_normalize(quat_mul_inv(in->anchor_world_rotation, in->anchor_anim_rotation));
  vec3 v = quat_mul_vec3(anchor, view->velocities[0]), direction = c->warp.travel;
  float along = v.x * direction.x + v.z * direction.z, speed = sqrtf(v.x * v.x + v.z * v.z);
  if (along < 0.05f || speed < 0.05f) return; /* not travelling that way: nothing to stretch */
  /* Stretched as much as the clip goes that way (the cosine squared), so
   * a clip turning away from it lets the legs go smoothly. */
  float cosine = along / speed;
  stride = 1.0f + (stride - 1.0f) * cosine * cosine;
  float more = (stride - 1.0f) * along;
  vec3 extra = vec3_make(more * direction.x * dt, 0.0f, more * direction.z * dt);
  c->inertializer.anchor_world_position = vec3_add(c->inertializer.anchor_world_position, extra);
  c->pose_positions[0] = vec3_add(c->pose_positions[0], extra);
  c->pose_velocities[0].x += more * direction.x, c->pose_velocities[0].z += more * direction.z;
  anim_stride_apply(&c->feet, stride, direction, STRIDE_MAX_DROP, c->pose_positions, c->pose_rotations);
}

/* Root steering (warp.h, anim_warp_steer): toward the simulation's
 * velocity, the input's asked; a goal ahead is never braked for. */
static vec3 steer_correction(anim_controller_t *c) {
  const vec3 *goal = c->input.kind == ANIM_INPUT_GOAL ? &c->input.goal : NULL;
  return anim_warp_steer(&c->warp.params, c->pose_velocities[0], c->sim.velocity, c->sim.desired_velocity, goal,
                         c->pose_positions[0]);
}

/* The root moved by a steering correction d (m/s) for dt, the anchor
 * with it: the original's and a replica's (its record's d). */
static void steer_apply(anim_controller_t *c, vec3 d, float dt) {
  vec3 *v = &c->pose_velocities[0], extra = vec3_scale(d, dt);
  c->inertializer.anchor_world_position = vec3_add(c->inertializer.anchor_world_position, extra);
  c->pose_positions[0] = vec3_add(c->pose_positions[0], extra);
  v->x += d.x, v->z += d.z;
  c->warp.steering = sqrtf(d.x * d.x + d.z * d.z);
}

/* The part of a tick a replica shares: after the transition and the hold
 * are decided, the frame advances (unless held), the displayed pose is
 * the frame's through the inertializer, stretched and steered, and
 * planted feet are held. replay: a replica's record, which says the
 * stride and steering the original worked out from its input (NULL: the
 * original, which writes them into its record). */
static int show_tick(anim_controller_t *c, float dt, const anim_controller_record_t *replay) {
  const anim_controller_params_t *p = &c->params;
  int stop = anim_database_range_stop(c->db, c->frame);
  if (!c->holding) c->frame = c->frame + c->tick_frames < stop ? c->frame + c->tick_frames : stop - 1;
  anim_pose_view_t view = shown_pose(c);
  anim_pose_buffer_t out = {(size_t)c->db->nbones, c->pose_positions, c->pose_velocities, c->pose_rotations,
                            c->pose_angular_velocities};
  /* Three speeds of blending (controller.h), in one pass over the pose. */
  anim_inertialize_speeds_t speeds = {p->inertialize_halflife * p->body_halflife_scale,
                                      p->inertialize_halflife * p->root_halflife_scale, p->inertialize_halflife,
                                      c->fast_rotations, !c->pose_bone_rates};
  int rc = anim_inertializer_update_parts(&c->inertializer, &out, &view, &speeds, dt);
  c->tick_dt = 0.0f;
  c->tick_searching = 0;
  c->globals_fresh = 0;
  if (rc) return rc;
  anim_warp_apply(&c->warp, c->pose_rotations);
  /* The stride, its direction and the steering are played as a replica
   * is sent them, rounded to 16 bits (controller.h): the same bits on both
   * sides, in half the bytes. */
  float stride = replay ? replay->stride : anim_record_stride(anim_record_stride_code(anim_warp_stride(&c->warp)));
  if (replay) c->warp.travel = vec3_make(replay->travel_x, 0.0f, replay->travel_z);
  else
    c->warp.travel = vec3_make(anim_record_unit(anim_record_unit_code(c->warp.travel.x)), 0.0f,
                               anim_record_unit(anim_record_unit_code(c->warp.travel.z)));
  c->record.stride = stride, c->record.travel_x = c->warp.travel.x, c->record.travel_z = c->warp.travel.z;
  if (stride != 1.0f) warp_stride(c, &view, stride, dt);
  vec3 steer = replay ? vec3_make(replay->steer_x, 0.0f, replay->steer_z)
                      : c->warp.params.steer ? steer_correction(c) : vec3_zero();
  if (!replay)
    steer = vec3_make(anim_record_steer(anim_record_steer_code(steer.x)), 0.0f,
                      anim_record_steer(anim_record_steer_code(steer.z)));
  c->record.steer_x = steer.x, c->record.steer_z = steer.z;
  c->warp.steering = 0.0f;
  if (steer.x != 0.0f || steer.z != 0.0f) steer_apply(c, steer, dt);
  /* The simulation starts from where the character actually is. */
  c->sim.position = vec3_make(c->pose_positions[0].x, 0.0f, c->pose_positions[0].z);
  c->time_since_transition += dt;
  c->ticks++;
  if (p->foot_lock.enabled && c->feet.nfeet) {
    static const uint8_t lifted[ANIM_MAX_CONTACTS]; /* no foot in contact */
    const uint8_t *contacts = c->db->contacts + (size_t)c->frame * (size_t)c->db->ncontacts;
    c->record.feet_skipped = (uint8_t)(c->skip_feet != 0);
    if (!c->skip_feet) {
      c->feet_skipped = 0;
      anim_foot_locks_apply(&c->feet, contacts, c->pose_positions, c->pose_rotations, dt);
    } else if (!c->feet_skipped) {
      /* Let go first as if the data lifted every foot: planted feet blend
       * back to the animation (release_halflife), none plants; once all
       * are free and still, skipped. Dropped at once, a planted foot
       * jumped to the animation's (pops of up to 4.4x the data's speed
       * with the level of detail toggled every 1.5 s, animbench feet). */
      anim_foot_locks_apply(&c->feet, lifted, c->pose_positions, c->pose_rotations, dt);
      if (anim_foot_locks_let_go(&c->feet)) anim_foot_locks_reset(&c->feet), c->feet_skipped = 1;
    }
  }
  return 0;
}

int anim_controller_tick_end(anim_controller_t *c, const anim_search_hit_t *best) {
  float dt = c->tick_dt;
  if (!(dt > 0.0f)) return ANIM_EINVAL; /* no tick_begin */
  if (c->tick_searching && best && best->frame != c->frame && best->frame >= 0 && best->frame < c->db->nframes)
    transition_to(c, best->frame);
  if (c->transitioned) c->record.transition_frame = c->frame;
  /* At rest a search decides whether to hold, on the frame it kept or landed on. */
  if (c->tick_searching) c->holding = c->search_at_rest && should_hold(c, c->search_query, c->frame);
  c->record.hold_end = (uint8_t)c->holding;
  c->search_query = NULL;
  anim_steering_sim_advance(&c->sim, &c->params, dt);
  int rc = show_tick(c, dt, NULL);
  if (rc == 0 && c->history) anim_history_record(c->history, c, c->search_spec, best); /* history.h */
  return rc;
}

int anim_controller_replay(anim_controller_t *c, float dt, const anim_controller_record_t *r) {
  if (!(dt > 0.0f) || !isfinite(dt) || r->transition_frame >= c->db->nframes) return ANIM_EINVAL;
  /* The warp's rates are bounded by 4 (warp.h), its turn by pi. */
  if (!(r->play_rate >= 0.0f && r->play_rate <= 4.0f) || !(fabsf(r->warp_angle) <= (float)M_PI)) return ANIM_EINVAL;
  /* The stride within warp.h's bounds, along a unit direction; steering bounded as steer_correction does. */
  float travel = r->travel_x * r->travel_x + r->travel_z * r->travel_z;
  if (!(r->stride > 0.0f && r->stride <= 2.0f) || (r->stride != 1.0f && !(fabsf(travel - 1.0f) < 1e-3f)) ||
      !(r->steer_x * r->steer_x + r->steer_z * r->steer_z <= 1.0f))
    return ANIM_EINVAL;
  c->tick_frames = take_frames(c, anim_warp_replay(&c->warp, r->play_rate, r->warp_angle, dt));
  c->transitioned = 0;
  c->holding = r->hold_begin;
  if (r->transition_frame >= 0) transition_to(c, r->transition_frame);
  c->holding = r->hold_end;
  c->record = *r;
  c->skip_feet = r->feet_skipped;
  return show_tick(c, dt, r);
}

int anim_controller_tick(anim_controller_t *c, float dt) {
  if (!c->index) return ANIM_EINVAL; /* a replica */
  float query[ANIM_MAX_FEATURE_DIMS];
  anim_search_query_t search;
  int searching = anim_controller_tick_begin(c, dt, query, &search);
  if (searching < 0) return searching;
  anim_search_hit_t best, scratch[1];
  int count = 0;
  int found = searching && anim_search_run(c->index, &search, &best, &count, scratch) == 0 && count > 0;
  return anim_controller_tick_end(c, found ? &best : NULL);
}

void anim_controller_translate(anim_controller_t *c, vec3 step) {
  vec3 ground = vec3_make(step.x, 0.0f, step.z);
  c->sim.position = vec3_add(c->sim.position, ground);
  for (int i = 0; i < c->ntrajectory; i++) c->trajectory_positions[i] = vec3_add(c->trajectory_positions[i], ground);
  c->inertializer.anchor_world_position = vec3_add(c->inertializer.anchor_world_position, step);
  c->pose_positions[0] = vec3_add(c->pose_positions[0], step);
  c->globals_fresh = 0;
  anim_foot_locks_translate(&c->feet, step);
  c->record.moved = 1;
}

void anim_controller_stagger(anim_controller_t *c, int frames) { c->frames_since_search -= frames; }

void anim_controller_global_pose(anim_controller_t *c) {
  if (c->globals_fresh) return;
  c->globals_fresh = 1;
  anim_fk(c->global_positions, c->global_rotations, c->pose_positions, c->pose_rotations, c->db->skeleton.parents,
          c->db->nbones);
}

uint32_t anim_controller_contacts(const anim_controller_t *c) {
  if (c->params.foot_lock.enabled && c->feet.nfeet && !c->feet_skipped) return anim_foot_locks_contacts(&c->feet);
  return anim_database_contacts(c->db, c->frame);
}
