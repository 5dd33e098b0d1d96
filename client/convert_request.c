/*
 * convert_request.c: the client's C arguments -> protobuf requests (see
 * convert.h).
 *
 * Views, not copies: the protobuf structs point into the caller's arrays,
 * valid while the caller's arguments are (packing happens at once, in the
 * send). Each builder checks its arguments against the public type's rules
 * (ANIM_EINVAL) so a request that would be refused anyway never goes out.
 * Pure: no socket, no client.
 */
#include <stdlib.h>
#include <string.h>
#include "convert.h"

void anim__vec3_to_proto(Animserver__Vec3 *out, const float *v) {
  Animserver__Vec3 init = ANIMSERVER__VEC3__INIT;
  *out = init;
  out->x = v[0], out->y = v[1], out->z = v[2];
}

void anim__quat_to_proto(Animserver__Quat *out, const float *q) {
  Animserver__Quat init = ANIMSERVER__QUAT__INIT;
  *out = init;
  out->w = q[0], out->x = q[1], out->y = q[2], out->z = q[3];
}

/* ---- search queries ------------------------------------------------------------------- */

static void bones_to_proto(const char *const *names, const float *xyz, int n, Animserver__BoneVector *vecs,
                           Animserver__BoneVector **ptrs) {
  for (int i = 0; i < n; i++) {
    Animserver__BoneVector v = ANIMSERVER__BONE_VECTOR__INIT;
    v.bone = (char *)names[i];
    v.x = xyz[3 * i], v.y = xyz[3 * i + 1], v.z = xyz[3 * i + 2];
    vecs[i] = v;
    ptrs[i] = &vecs[i];
  }
}

static void vec2s_to_proto(const float *xz, int n, Animserver__Vec2 *vecs, Animserver__Vec2 **ptrs) {
  for (int i = 0; i < n; i++) {
    Animserver__Vec2 vec = ANIMSERVER__VEC2__INIT;
    vec.x = xz[2 * i];
    vec.z = xz[2 * i + 1];
    vecs[i] = vec;
    ptrs[i] = &vecs[i];
  }
}

int anim__query_to_proto(const anim_query_t *in, anim__query_views_t *v) {
  if (!in || in->ntrajectory_positions < 0 || in->ntrajectory_positions > 8 || in->ntrajectory_directions < 0 ||
      in->ntrajectory_directions > 8 || in->nfeatures < 0 || in->ntags < 0 || in->k < 0 || in->npositions < 0 ||
      in->npositions > 16 || in->nvelocities < 0 || in->nvelocities > 16 ||
      (in->npositions && (!in->position_bones || !in->positions)) ||
      (in->nfeatures && !in->features) || (in->ntags && !in->tags) ||
      (in->ntrajectory_positions && !in->trajectory_positions) ||
      (in->ntrajectory_directions && !in->trajectory_directions) ||
      (in->nvelocities && (!in->velocity_bones || !in->velocities)))
    return ANIM_EINVAL;
  Animserver__SearchQuery init = ANIMSERVER__SEARCH_QUERY__INIT;
  Animserver__FrameIndex frame_init = ANIMSERVER__FRAME_INDEX__INIT;
  memset(v, 0, sizeof *v);
  v->query = init;
  v->from = v->current = frame_init;
  Animserver__SearchQuery *q = &v->query;
  q->n_features = (size_t)in->nfeatures;
  q->features = (float *)in->features;
  q->raw_features = in->raw_features;
  if (in->from_frame >= 0) {
    v->from.frame = (uint32_t)in->from_frame;
    q->from_frame = &v->from;
  }
  vec2s_to_proto(in->trajectory_positions, in->ntrajectory_positions, v->positions, v->position_ptrs);
  vec2s_to_proto(in->trajectory_directions, in->ntrajectory_directions, v->directions, v->direction_ptrs);
  q->n_trajectory_positions = (size_t)in->ntrajectory_positions;
  q->trajectory_positions = v->position_ptrs;
  q->n_trajectory_directions = (size_t)in->ntrajectory_directions;
  q->trajectory_directions = v->direction_ptrs;
  q->k = (uint32_t)in->k;
  if (in->current_frame >= 0) {
    v->current.frame = (uint32_t)in->current_frame;
    q->current_frame = &v->current;
  }
  q->transition_cost = in->transition_cost;
  q->ignore_range_end = (uint32_t)(in->ignore_range_end > 0 ? in->ignore_range_end : 0);
  q->ignore_surrounding = (uint32_t)(in->ignore_surrounding > 0 ? in->ignore_surrounding : 0);
  q->n_tags = (size_t)in->ntags;
  q->tags = (char **)in->tags;
  q->include_pose = in->include_pose;
  q->explain = in->explain;
  q->method = (Animserver__SearchMethod)in->method;
  bones_to_proto(in->position_bones, in->positions, in->npositions, v->bone_positions, v->bone_position_ptrs);
  bones_to_proto(in->velocity_bones, in->velocities, in->nvelocities, v->bone_velocities, v->bone_velocity_ptrs);
  q->n_bone_positions = (size_t)in->npositions;
  q->bone_positions = v->bone_position_ptrs;
  q->n_bone_velocities = (size_t)in->nvelocities;
  q->bone_velocities = v->bone_velocity_ptrs;
  return 0;
}

/* ---- poses and inertializer states --------------------------------------------------------- */

int anim__pose_source_to_proto(const anim_pose_source_t *in, anim__pose_source_views_t *v) {
  Animserver__PoseRef ref = ANIMSERVER__POSE_REF__INIT;
  Animserver__PoseState pose = ANIMSERVER__POSE_STATE__INIT;
  v->ref = ref;
  v->pose = pose;
  if (!in) return ANIM_EINVAL;
  if (in->frame >= 0) {
    v->ref.source_case = ANIMSERVER__POSE_REF__SOURCE_FRAME;
    v->ref.frame = (uint32_t)in->frame;
    return 0;
  }
  if (in->nbones < 1 || !in->positions || !in->velocities || !in->rotations || !in->angular_velocities)
    return ANIM_EINVAL;
  size_t n = (size_t)in->nbones;
  v->pose.n_positions = 3 * n, v->pose.positions = (float *)in->positions;
  v->pose.n_velocities = 3 * n, v->pose.velocities = (float *)in->velocities;
  v->pose.n_rotations = 4 * n, v->pose.rotations = (float *)in->rotations;
  v->pose.n_angular_velocities = 3 * n, v->pose.angular_velocities = (float *)in->angular_velocities;
  v->ref.source_case = ANIMSERVER__POSE_REF__SOURCE_POSE;
  v->ref.pose = &v->pose;
  return 0;
}

void anim__inertializer_state_to_proto(const anim_inertializer_state_t *in, Animserver__InertializerState *out) {
  Animserver__InertializerState init = ANIMSERVER__INERTIALIZER_STATE__INIT;
  *out = init;
  size_t n = (size_t)in->nbones;
  out->n_offset_positions = 3 * n, out->offset_positions = in->offset_positions;
  out->n_offset_velocities = 3 * n, out->offset_velocities = in->offset_velocities;
  out->n_offset_rotations = 4 * n, out->offset_rotations = in->offset_rotations;
  out->n_offset_angular_velocities = 3 * n, out->offset_angular_velocities = in->offset_angular_velocities;
  out->n_anchor = 14, out->anchor = (float *)in->anchor;
}

/* ---- characters ------------------------------------------------------------------------- */

void anim__controller_params_to_proto(Animserver__ControllerParams *m, const anim_character_params_t *p) {
  m->search_interval = p->search_interval > 0 ? (uint32_t)p->search_interval : 0;
  m->inertialize_halflife = p->inertialize_halflife;
  m->velocity_halflife = p->velocity_halflife, m->rotation_halflife = p->rotation_halflife;
  m->forward_speed = p->forward_speed, m->side_speed = p->side_speed, m->back_speed = p->back_speed;
  m->ignore_surrounding = p->ignore_surrounding > 0 ? (uint32_t)p->ignore_surrounding : 0;
  m->ignore_range_end = p->ignore_range_end > 0 ? (uint32_t)p->ignore_range_end : 0;
  m->transition_cost = p->transition_cost, m->replan_threshold = p->replan_threshold;
  m->input_f = p->input_f, m->input_zeta = p->input_zeta, m->input_r = p->input_r;
  /* The flags: 0 left out (on at create, kept by set_character_params),
   * positive off, negative on. */
  m->no_play_rate = p->no_play_rate > 0, m->no_stand_warp = p->no_stand_warp > 0;
  m->no_orientation_warp = p->no_orientation_warp > 0;
  if (p->no_play_rate) m->play_rate_switch_case = ANIMSERVER__CONTROLLER_PARAMS__PLAY_RATE_SWITCH_NO_PLAY_RATE;
  if (p->no_stand_warp) m->stand_warp_switch_case = ANIMSERVER__CONTROLLER_PARAMS__STAND_WARP_SWITCH_NO_STAND_WARP;
  if (p->no_orientation_warp)
    m->orientation_warp_switch_case = ANIMSERVER__CONTROLLER_PARAMS__ORIENTATION_WARP_SWITCH_NO_ORIENTATION_WARP;
  m->play_rate_min = p->play_rate_min, m->play_rate_max = p->play_rate_max;
  m->orientation_warp_max = p->orientation_warp_max;
  m->no_stride_warp = p->no_stride_warp > 0;
  if (p->no_stride_warp) m->stride_warp_switch_case = ANIMSERVER__CONTROLLER_PARAMS__STRIDE_WARP_SWITCH_NO_STRIDE_WARP;
  m->stride_scale_min = p->stride_scale_min, m->stride_scale_max = p->stride_scale_max;
  m->no_root_steering = p->no_root_steering > 0;
  if (p->no_root_steering)
    m->root_steering_switch_case = ANIMSERVER__CONTROLLER_PARAMS__ROOT_STEERING_SWITCH_NO_ROOT_STEERING;
  m->root_steering_max = p->root_steering_max;
}

void anim__create_views_free(anim__create_views_t *views) {
  free(views->items);
  free(views->pointers);
  free(views->frames);
  views->items = NULL, views->pointers = NULL, views->frames = NULL;
}

/* The mode's part of a create request. */
static int mode_to_proto(const anim_character_mode_t *mode, anim__create_views_t *v) {
  if (!mode) return 0;
  if (mode->mode < ANIM_MODE_MOTION_MATCHING || mode->mode > ANIM_MODE_PHYSICAL) return ANIM_EINVAL;
  v->create.mode = (Animserver__CharacterMode)mode->mode;
  if (mode->mode == ANIM_MODE_MACHINE) {
    if (!mode->machine) return ANIM_EINVAL;
    v->create.machine = (char *)mode->machine;
  }
  if (mode->mode == ANIM_MODE_GRAPH) {
    anim_walk_options_t walk = {mode->path_horizon,      mode->path_keep,          mode->path_max_expansions,
                                mode->path_disable_warm, mode->path_disable_bound, mode->path_disable_memory};
    anim__walk_options_to_proto(&walk, &v->path);
    v->create.path = &v->path;
  }
  if (mode->mode == ANIM_MODE_TRACKER) {
    if (!mode->trackers || mode->ntrackers < 1 || mode->ntrackers > 8) return ANIM_EINVAL;
    Animserver__TrackerSetup init = ANIMSERVER__TRACKER_SETUP__INIT;
    v->tracker = init;
    for (int i = 0; i < mode->ntrackers; i++) {
      Animserver__TrackedBone bone = ANIMSERVER__TRACKED_BONE__INIT;
      v->bones[i] = bone;
      anim__vec3_to_proto(&v->offsets[i], mode->trackers[i].offset);
      v->bones[i].bone = (char *)(mode->trackers[i].bone ? mode->trackers[i].bone : "");
      v->bones[i].offset = &v->offsets[i];
      v->bone_pointers[i] = &v->bones[i];
    }
    v->tracker.n_trackers = (size_t)mode->ntrackers, v->tracker.trackers = v->bone_pointers;
    v->tracker.hold_seconds = mode->hold_seconds;
    v->create.tracker = &v->tracker;
  }
  if (mode->mode == ANIM_MODE_PHYSICAL && mode->total_mass != 0.0f) {
    Animserver__PhysicsOptions init = ANIMSERVER__PHYSICS_OPTIONS__INIT;
    v->physics = init;
    v->physics.total_mass = mode->total_mass; /* checked by the server, which names the field */
    v->create.physics = &v->physics;
  }
  return 0;
}

int anim__create_to_proto(const char *database, const anim_character_mode_t *mode,
                          const anim_character_params_t *params, const anim_character_placement_t *placements,
                          int count, anim__create_views_t *out) {
  memset(out, 0, sizeof *out);
  if (!database || count < 1) return ANIM_EINVAL;
  size_t n = (size_t)count;
  Animserver__CreateCharactersRequest create = ANIMSERVER__CREATE_CHARACTERS_REQUEST__INIT;
  Animserver__ControllerParams params_init = ANIMSERVER__CONTROLLER_PARAMS__INIT;
  out->create = create;
  out->params = params_init;
  if (mode_to_proto(mode, out) != 0) return ANIM_EINVAL;
  /* 0 means the server's default; a negative count of frames is a mistake,
   * not a default (it was sent as one). */
  if (params && (params->search_interval < 0 || params->ignore_surrounding < 0 || params->ignore_range_end < 0))
    return ANIM_EINVAL;
  for (size_t i = 0; placements && i < n; i++)
    if (placements[i].start_frame < -1) return ANIM_EINVAL; /* -1: the first frame */
  out->items = calloc(n, sizeof *out->items);
  out->pointers = calloc(n, sizeof *out->pointers);
  out->frames = calloc(n, sizeof *out->frames);
  if (!out->items || !out->pointers || !out->frames) {
    anim__create_views_free(out);
    return ANIM_ENOMEM;
  }
  for (size_t i = 0; i < n; i++) {
    Animserver__Placement item = ANIMSERVER__PLACEMENT__INIT;
    Animserver__FrameIndex frame = ANIMSERVER__FRAME_INDEX__INIT;
    out->items[i] = item;
    out->frames[i] = frame;
    const anim_character_placement_t *p = placements ? &placements[i] : NULL;
    if (p) {
      out->items[i].x = p->x, out->items[i].z = p->z, out->items[i].facing = p->facing;
      if (p->start_frame >= 0) {
        out->frames[i].frame = (uint32_t)p->start_frame;
        out->items[i].start_frame = &out->frames[i];
      }
    }
    out->pointers[i] = &out->items[i];
  }
  out->create.database = (char *)database;
  if (params) anim__controller_params_to_proto(&out->params, params), out->create.params = &out->params;
  out->create.n_placements = n;
  out->create.placements = out->pointers;
  return 0;
}

/* One input's wire structs: the oneof's three cases side by side. */
struct anim__input_wire {
  Animserver__CharacterInput input;
  Animserver__StickInput stick;
  Animserver__VelocityInput velocity;
  Animserver__GoalInput goal;
};

void anim__input_views_free(anim__input_views_t *views) {
  free(views->wire);
  free(views->pointers);
  views->wire = NULL, views->pointers = NULL;
}

static int input_to_proto(uint64_t id, const anim_character_input_t *in, struct anim__input_wire *w) {
  Animserver__CharacterInput input = ANIMSERVER__CHARACTER_INPUT__INIT;
  Animserver__StickInput stick = ANIMSERVER__STICK_INPUT__INIT;
  Animserver__VelocityInput velocity = ANIMSERVER__VELOCITY_INPUT__INIT;
  Animserver__GoalInput goal = ANIMSERVER__GOAL_INPUT__INIT;
  w->input = input, w->stick = stick, w->velocity = velocity, w->goal = goal;
  w->input.character = id;
  if (in->kind == ANIM_INPUT_KIND_VELOCITY) {
    w->velocity.x = in->velocity_x, w->velocity.z = in->velocity_z, w->velocity.facing = in->facing;
    w->input.input_case = ANIMSERVER__CHARACTER_INPUT__INPUT_VELOCITY, w->input.velocity = &w->velocity;
  } else if (in->kind == ANIM_INPUT_KIND_GOAL) {
    w->goal.x = in->goal_x, w->goal.z = in->goal_z, w->goal.speed = in->goal_speed;
    w->input.input_case = ANIMSERVER__CHARACTER_INPUT__INPUT_GOAL, w->input.goal = &w->goal;
  } else if (in->kind == ANIM_INPUT_KIND_STICK) {
    w->stick.x = in->stick_x, w->stick.z = in->stick_z;
    w->stick.camera_azimuth = in->camera_azimuth, w->stick.strafe = in->strafe;
    w->input.input_case = ANIMSERVER__CHARACTER_INPUT__INPUT_STICK, w->input.stick = &w->stick;
  } else {
    return ANIM_EINVAL;
  }
  return 0;
}

int anim__inputs_to_proto(const uint64_t *ids, const anim_character_input_t *inputs, int n, anim__input_views_t *out) {
  memset(out, 0, sizeof *out);
  if (n < 0 || (n && (!ids || !inputs))) return ANIM_EINVAL;
  Animserver__SetInputsRequest set = ANIMSERVER__SET_INPUTS_REQUEST__INIT;
  out->set = set;
  out->wire = calloc((size_t)n + 1, sizeof *out->wire);
  out->pointers = calloc((size_t)n + 1, sizeof *out->pointers);
  if (!out->wire || !out->pointers) {
    anim__input_views_free(out);
    return ANIM_ENOMEM;
  }
  for (int i = 0; i < n; i++) {
    if (input_to_proto(ids[i], &inputs[i], &out->wire[i]) != 0) {
      anim__input_views_free(out);
      return ANIM_EINVAL;
    }
    out->pointers[i] = &out->wire[i].input;
  }
  out->set.n_inputs = (size_t)n;
  out->set.inputs = out->pointers;
  return 0;
}
