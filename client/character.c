/*
 * character.c: characters and pose streams in the client library (see
 * include/anim_client.h).
 *
 * Stream frames are decoded here into plain floats whatever their wire
 * encoding (quantized poses are expanded with core/quantize.c, the same code
 * the server encodes with), then handed to the subscription's callback or
 * queued for anim_client_next_frame. The queue is bounded: a caller that
 * stops reading loses the oldest frames, counted, never memory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "client_internal.h"
#include "quantize.h"

#define FRAME_QUEUE_MAX 256

typedef struct client_subscription {
  uint64_t id;
  int rotations_only;
  anim_stream_cb cb;
  void *data;
  struct client_subscription *next;
} client_subscription_t;

typedef struct queued_frame {
  anim_stream_frame_t *frame;
  struct queued_frame *next;
} queued_frame_t;

struct client_streams {
  client_subscription_t *subscriptions;
  queued_frame_t *head, *tail;
  int nqueued;
  uint64_t dropped;
};

static struct client_streams *streams_of(anim_client_t *client) {
  if (!client->streams) client->streams = calloc(1, sizeof *client->streams);
  return client->streams;
}

void anim_stream_frame_free(anim_stream_frame_t *frame) {
  if (!frame) return;
  free(frame); /* one block: header, poses, floats, gone ids */
}

void anim__client_streams_free(anim_client_t *client) {
  struct client_streams *st = client->streams;
  if (!st) return;
  for (client_subscription_t *s = st->subscriptions, *next; s; s = next) next = s->next, free(s);
  for (queued_frame_t *q = st->head, *next; q; q = next) {
    next = q->next;
    anim_stream_frame_free(q->frame);
    free(q);
  }
  free(st);
  client->streams = NULL;
}

/* ---- decoding a frame ------------------------------------------------------------ */

static size_t align8(size_t n) { return (n + 7) & ~(size_t)7; }

/* Bones of a quantized pose, from its size (the layout is in quantize.h). */
static int quantized_bones(size_t len, int rotations_only) {
  if (len < 12 + 7) return 0;
  size_t body = len - 12;
  if (rotations_only) return body % 7 == 0 ? (int)(body / 7) : 0;
  return (body + 6) % 13 == 0 ? (int)((body + 6) / 13) : 0;
}

static int pose_bones(const Animserver__CharacterPose *m, int quantized, int rotations_only) {
  if (quantized) return quantized_bones(m->quantized.len, rotations_only);
  return m->n_rotations % 4 == 0 ? (int)(m->n_rotations / 4) : 0;
}

/* Floats a decoded pose needs: positions (3n, or 3), rotations 4n, global 3n. */
static size_t pose_floats(int n, int rotations_only, int global) {
  return (size_t)(rotations_only ? 3 : 3 * n) + 4 * (size_t)n + (global ? 3 * (size_t)n : 0);
}

static int decode_pose(const Animserver__CharacterPose *m, int quantized, int rotations_only, int n, float *floats,
                       anim_character_pose_t *out) {
  size_t npos = (size_t)(rotations_only ? 3 : 3 * n);
  out->character = m->character;
  out->frame = m->frame;
  out->nbones = n;
  out->contacts = m->contacts;
  out->transition = m->transition;
  out->depth = 0;
  for (size_t l = 0; l < m->n_state_path && l < 8; l++) {
    out->state_path[l] = m->state_path[l];
    out->state_times[l] = l < m->n_state_times ? m->state_times[l] : 0.0f;
    out->depth = (int)l + 1;
  }
  out->state_changed = m->state_changed;
  float *positions = floats, *rotations = floats + npos, *global = rotations + 4 * (size_t)n;
  if (quantized) {
    /* Decode into vec3/quat arrays laid out as plain floats. */
    if (anim_pose_dequantize(m->quantized.data, m->quantized.len, n, rotations_only, (vec3 *)positions,
                             (quat *)rotations) != 0)
      return ANIM_EPROTO;
  } else {
    if (m->n_positions != npos) return ANIM_EPROTO;
    memcpy(positions, m->positions, npos * sizeof *positions);
    memcpy(rotations, m->rotations, 4 * (size_t)n * sizeof *rotations);
  }
  out->positions = positions;
  out->rotations = rotations;
  out->global_positions = NULL;
  if (m->n_global_positions) {
    if (m->n_global_positions != 3 * (size_t)n) return ANIM_EPROTO;
    memcpy(global, m->global_positions, 3 * (size_t)n * sizeof *global);
    out->global_positions = global;
  }
  return 0;
}

/* One allocation for the whole frame, so the caller frees it with one call. */
static anim_stream_frame_t *decode_frame(const Animserver__StreamMessage *m, int rotations_only, size_t wire_bytes) {
  int quantized = m->encoding == ANIMSERVER__POSE_ENCODING__ENCODING_QUANTIZED;
  size_t floats = 0;
  for (size_t i = 0; i < m->n_poses; i++) {
    int n = pose_bones(m->poses[i], quantized, rotations_only);
    if (n <= 0) return NULL;
    floats += pose_floats(n, rotations_only, m->poses[i]->n_global_positions > 0);
  }
  size_t size = align8(sizeof(anim_stream_frame_t)) + align8(m->n_poses * sizeof(anim_character_pose_t)) +
                align8(m->n_gone * sizeof(uint64_t)) + floats * sizeof(float);
  uint8_t *block = malloc(size);
  if (!block) return NULL;
  anim_stream_frame_t *f = (anim_stream_frame_t *)block;
  memset(f, 0, sizeof *f);
  f->poses = (anim_character_pose_t *)(block + align8(sizeof *f));
  uint64_t *gone = (uint64_t *)((uint8_t *)f->poses + align8(m->n_poses * sizeof *f->poses));
  float *cursor = (float *)((uint8_t *)gone + align8(m->n_gone * sizeof *gone));
  f->subscription = m->subscription_id;
  f->tick = m->tick;
  f->server_time_us = m->server_time_us;
  f->received_us = anim__monotonic_us();
  f->dropped_frames = m->dropped_frames;
  f->encoding = quantized ? ANIM_POSE_QUANTIZED : ANIM_POSE_FLOAT;
  f->dt = m->dt;
  f->wire_bytes = wire_bytes;
  for (size_t i = 0; i < m->n_poses; i++) {
    int n = pose_bones(m->poses[i], quantized, rotations_only);
    if (decode_pose(m->poses[i], quantized, rotations_only, n, cursor, &f->poses[i]) != 0) {
      free(block);
      return NULL;
    }
    cursor += pose_floats(n, rotations_only, m->poses[i]->n_global_positions > 0);
  }
  f->nposes = (int)m->n_poses;
  if (m->n_gone) memcpy(gone, m->gone, m->n_gone * sizeof *gone);
  f->gone = gone;
  f->ngone = (int)m->n_gone;
  return f;
}

static void enqueue(anim_client_t *client, struct client_streams *st, anim_stream_frame_t *frame) {
  queued_frame_t *q = malloc(sizeof *q);
  if (!q) {
    anim_stream_frame_free(frame);
    st->dropped++;
    return;
  }
  if (st->nqueued == FRAME_QUEUE_MAX) { /* the oldest goes */
    queued_frame_t *old = st->head;
    st->head = old->next;
    if (!st->head) st->tail = NULL;
    anim_stream_frame_free(old->frame);
    free(old);
    st->nqueued--;
    st->dropped++;
  }
  q->frame = frame;
  q->next = NULL;
  if (st->tail) st->tail->next = q;
  else st->head = q;
  st->tail = q;
  st->nqueued++;
}

void anim__client_stream(anim_client_t *client, const Animserver__StreamMessage *m, size_t wire_bytes) {
  struct client_streams *st = client->streams;
  if (!st) return;
  client_subscription_t *s = st->subscriptions;
  while (s && s->id != m->subscription_id) s = s->next;
  if (!s) return; /* a frame already on its way when we unsubscribed */
  anim_stream_frame_t *frame = decode_frame(m, s->rotations_only, wire_bytes);
  if (!frame) {
    anim__client_set_error(client, ANIM_EPROTO, "a stream frame's poses do not match its encoding");
    st->dropped++;
    return;
  }
  frame->client_dropped = st->dropped;
  if (s->cb) {
    s->cb(client, frame, s->data);
    anim_stream_frame_free(frame);
  } else {
    enqueue(client, st, frame);
  }
}

int anim_client_next_frame(anim_client_t *client, anim_stream_frame_t **out_frame, int timeout_ms) {
  *out_frame = NULL;
  uint64_t deadline = anim__monotonic_us() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0) * 1000u;
  for (;;) {
    struct client_streams *st = client->streams;
    if (st && st->head) {
      queued_frame_t *q = st->head;
      st->head = q->next;
      if (!st->head) st->tail = NULL;
      st->nqueued--;
      *out_frame = q->frame;
      free(q);
      return 0;
    }
    uint64_t now = anim__monotonic_us();
    if (now >= deadline) return ANIM_ETIMEDOUT;
    int rc = anim_client_poll(client, (int)((deadline - now + 999) / 1000));
    if (rc != 0 && rc != ANIM_ETIMEDOUT) return rc;
  }
}

/* ---- requests ---------------------------------------------------------------------- */

/* What a blocking call waits for; the completion fills it. */
typedef struct {
  int done, status;
  void *out;
  int n;
  uint64_t value;
  float rate;
  const anim_subscribe_options_t *subscribe;
  anim_stream_cb cb;
  void *data;
} call_t;

static int call(anim_client_t *client, Animserver__Request *request, Animserver__Response__BodyCase expect,
                complete_fn complete, call_t *c, int timeout_ms) {
  uint64_t id;
  int rc = anim__client_await(client, &timeout_ms);
  if (rc == 0) rc = anim__client_send(client, request, expect, complete, NULL, c, &id);
  if (rc) return rc;
  rc = anim__client_wait(client, &c->done, id, timeout_ms);
  return rc ? rc : c->status;
}

static int finish(pending_t *p, int status) {
  call_t *c = p->data;
  c->done = 1;
  c->status = status;
  return status;
}

static void fill_params(Animserver__ControllerParams *m, const anim_character_params_t *p) {
  m->search_interval = p->search_interval > 0 ? (uint32_t)p->search_interval : 0;
  m->inertialize_halflife = p->inertialize_halflife;
  m->velocity_halflife = p->velocity_halflife, m->rotation_halflife = p->rotation_halflife;
  m->forward_speed = p->forward_speed, m->side_speed = p->side_speed, m->back_speed = p->back_speed;
  m->ignore_surrounding = p->ignore_surrounding > 0 ? (uint32_t)p->ignore_surrounding : 0;
  m->ignore_range_end = p->ignore_range_end > 0 ? (uint32_t)p->ignore_range_end : 0;
  m->transition_cost = p->transition_cost, m->replan_threshold = p->replan_threshold;
  m->input_f = p->input_f, m->input_zeta = p->input_zeta, m->input_r = p->input_r;
}

void anim_character_params_init(anim_character_params_t *params) { memset(params, 0, sizeof *params); }

void anim_character_input_stick(anim_character_input_t *out, float x, float z, float camera_azimuth, int strafe) {
  memset(out, 0, sizeof *out);
  out->kind = ANIM_INPUT_KIND_STICK;
  out->stick_x = x, out->stick_z = z, out->camera_azimuth = camera_azimuth, out->strafe = strafe;
}

void anim_character_input_velocity(anim_character_input_t *out, float vx, float vz, float facing) {
  memset(out, 0, sizeof *out);
  out->kind = ANIM_INPUT_KIND_VELOCITY;
  out->velocity_x = vx, out->velocity_z = vz, out->facing = facing;
}

void anim_character_input_goal(anim_character_input_t *out, float x, float z, float speed) {
  memset(out, 0, sizeof *out);
  out->kind = ANIM_INPUT_KIND_GOAL;
  out->goal_x = x, out->goal_z = z, out->goal_speed = speed;
}

static void complete_create(anim_client_t *client, pending_t *p, int status, const Animserver__Response *r) {
  call_t *c = p->data;
  if (!status && r && (int)r->create_characters->n_characters != c->n)
    status = anim__client_set_error(client, ANIM_EPROTO, "the server created another number of characters");
  if (!status && r) memcpy(c->out, r->create_characters->characters, (size_t)c->n * sizeof(uint64_t));
  finish(p, status);
}

int anim_client_characters_create(anim_client_t *client, const char *database, const anim_character_params_t *params,
                                  const anim_character_placement_t *placements, int n, uint64_t *out_ids,
                                  int timeout_ms) {
  return anim_client_characters_create_mode(client, database, NULL, params, placements, n, out_ids, timeout_ms);
}

/* The mode's part of a create request, in wire structs the caller owns. */
typedef struct {
  Animserver__PathOptions path;
  Animserver__TrackerSetup tracker;
  Animserver__TrackedBone bones[8], *list[8];
  Animserver__Vec3 offsets[8];
} mode_wire_t;

static int mode_to_wire(const anim_character_mode_t *mode, mode_wire_t *w, Animserver__CreateCharactersRequest *create) {
  if (!mode) return 0;
  if (mode->mode < ANIM_MODE_MOTION_MATCHING || mode->mode > ANIM_MODE_LEARNED) return ANIM_EINVAL;
  create->mode = (Animserver__CharacterMode)mode->mode;
  if (mode->mode == ANIM_MODE_MACHINE) {
    if (!mode->machine) return ANIM_EINVAL;
    create->machine = (char *)mode->machine;
  }
  if (mode->mode == ANIM_MODE_GRAPH) {
    Animserver__PathOptions init = ANIMSERVER__PATH_OPTIONS__INIT;
    w->path = init;
    w->path.horizon = mode->path_horizon, w->path.keep = mode->path_keep;
    w->path.max_expansions = mode->path_max_expansions > 0 ? (uint32_t)mode->path_max_expansions : 0;
    create->path = &w->path;
  }
  if (mode->mode == ANIM_MODE_TRACKER) {
    if (!mode->trackers || mode->ntrackers < 1 || mode->ntrackers > 8) return ANIM_EINVAL;
    Animserver__TrackerSetup init = ANIMSERVER__TRACKER_SETUP__INIT;
    w->tracker = init;
    for (int i = 0; i < mode->ntrackers; i++) {
      Animserver__TrackedBone bone = ANIMSERVER__TRACKED_BONE__INIT;
      Animserver__Vec3 offset = ANIMSERVER__VEC3__INIT;
      w->bones[i] = bone, w->offsets[i] = offset;
      w->offsets[i].x = mode->trackers[i].offset[0], w->offsets[i].y = mode->trackers[i].offset[1];
      w->offsets[i].z = mode->trackers[i].offset[2];
      w->bones[i].bone = (char *)(mode->trackers[i].bone ? mode->trackers[i].bone : "");
      w->bones[i].offset = &w->offsets[i];
      w->list[i] = &w->bones[i];
    }
    w->tracker.n_trackers = (size_t)mode->ntrackers, w->tracker.trackers = w->list;
    w->tracker.hold_seconds = mode->hold_seconds;
    create->tracker = &w->tracker;
  }
  return 0;
}

int anim_client_characters_create_mode(anim_client_t *client, const char *database, const anim_character_mode_t *mode,
                                       const anim_character_params_t *params,
                                       const anim_character_placement_t *placements, int n, uint64_t *out_ids,
                                       int timeout_ms) {
  if (!client || !database || n < 1 || !out_ids) return ANIM_EINVAL;
  mode_wire_t mode_wire;
  Animserver__CreateCharactersRequest create = ANIMSERVER__CREATE_CHARACTERS_REQUEST__INIT;
  if (mode_to_wire(mode, &mode_wire, &create)) return ANIM_EINVAL;
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__ControllerParams wire_params = ANIMSERVER__CONTROLLER_PARAMS__INIT;
  Animserver__Placement *items = calloc((size_t)n, sizeof *items);
  Animserver__Placement **pointers = calloc((size_t)n, sizeof *pointers);
  Animserver__FrameIndex *frames = calloc((size_t)n, sizeof *frames);
  if (!items || !pointers || !frames) {
    free(items), free(pointers), free(frames);
    return ANIM_ENOMEM;
  }
  for (int i = 0; i < n; i++) {
    Animserver__Placement init = ANIMSERVER__PLACEMENT__INIT;
    Animserver__FrameIndex frame_init = ANIMSERVER__FRAME_INDEX__INIT;
    items[i] = init;
    frames[i] = frame_init;
    if (placements) {
      items[i].x = placements[i].x, items[i].z = placements[i].z, items[i].facing = placements[i].facing;
      if (placements[i].start_frame >= 0) {
        frames[i].frame = (uint32_t)placements[i].start_frame;
        items[i].start_frame = &frames[i];
      }
    }
    pointers[i] = &items[i];
  }
  create.database = (char *)database;
  if (params) fill_params(&wire_params, params), create.params = &wire_params;
  create.n_placements = (size_t)n;
  create.placements = pointers;
  request.body_case = ANIMSERVER__REQUEST__BODY_CREATE_CHARACTERS;
  request.create_characters = &create;
  call_t c = {0};
  c.out = out_ids;
  c.n = n;
  int rc = call(client, &request, ANIMSERVER__RESPONSE__BODY_CREATE_CHARACTERS, complete_create, &c, timeout_ms);
  free(items), free(pointers), free(frames);
  return rc;
}

static void complete_status(anim_client_t *client, pending_t *p, int status, const Animserver__Response *r) {
  call_t *c = p->data;
  if (!status && r) {
    if (r->body_case == ANIMSERVER__RESPONSE__BODY_DESTROY_CHARACTERS) c->value = r->destroy_characters->destroyed;
    if (r->body_case == ANIMSERVER__RESPONSE__BODY_SET_INPUTS) c->value = r->set_inputs->tick;
  }
  finish(p, status);
}

int anim_client_characters_destroy(anim_client_t *client, const uint64_t *ids, int n, int timeout_ms) {
  if (!client || n < 0 || (n && !ids)) return ANIM_EINVAL;
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__DestroyCharactersRequest destroy = ANIMSERVER__DESTROY_CHARACTERS_REQUEST__INIT;
  destroy.n_characters = (size_t)n;
  destroy.characters = (uint64_t *)ids;
  request.body_case = ANIMSERVER__REQUEST__BODY_DESTROY_CHARACTERS;
  request.destroy_characters = &destroy;
  call_t c = {0};
  return call(client, &request, ANIMSERVER__RESPONSE__BODY_DESTROY_CHARACTERS, complete_status, &c, timeout_ms);
}

/* Builds the SetInputs request in caller-freed arrays (*out_block). */
static int build_inputs(const uint64_t *ids, const anim_character_input_t *inputs, int n, Animserver__Request *request,
                        Animserver__SetInputsRequest *set, void **out_block) {
  if (n < 0 || (n && (!ids || !inputs))) return ANIM_EINVAL;
  size_t count = (size_t)n + 1;
  struct input_wire {
    Animserver__CharacterInput input;
    Animserver__StickInput stick;
    Animserver__VelocityInput velocity;
    Animserver__GoalInput goal;
  } *wire = calloc(count, sizeof *wire);
  Animserver__CharacterInput **pointers = calloc(count, sizeof *pointers);
  if (!wire || !pointers) {
    free(wire), free(pointers);
    return ANIM_ENOMEM;
  }
  for (int i = 0; i < n; i++) {
    const anim_character_input_t *in = &inputs[i];
    struct input_wire *w = &wire[i];
    Animserver__CharacterInput ci = ANIMSERVER__CHARACTER_INPUT__INIT;
    Animserver__StickInput stick = ANIMSERVER__STICK_INPUT__INIT;
    Animserver__VelocityInput velocity = ANIMSERVER__VELOCITY_INPUT__INIT;
    Animserver__GoalInput goal = ANIMSERVER__GOAL_INPUT__INIT;
    w->input = ci, w->stick = stick, w->velocity = velocity, w->goal = goal;
    w->input.character = ids[i];
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
      free(wire), free(pointers);
      return ANIM_EINVAL;
    }
    pointers[i] = &w->input;
  }
  set->n_inputs = (size_t)n;
  set->inputs = pointers;
  request->body_case = ANIMSERVER__REQUEST__BODY_SET_INPUTS;
  request->set_inputs = set;
  /* wire first, pointers after: one free() each via the block pair */
  void **block = malloc(2 * sizeof *block);
  if (!block) {
    free(wire), free(pointers);
    return ANIM_ENOMEM;
  }
  block[0] = wire, block[1] = pointers;
  *out_block = block;
  return 0;
}

static void free_inputs(void *block) {
  void **b = block;
  if (!b) return;
  free(b[0]), free(b[1]), free(b);
}

int anim_client_characters_set_input(anim_client_t *client, const uint64_t *ids, const anim_character_input_t *inputs,
                                     int n, uint64_t *out_tick, int timeout_ms) {
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__SetInputsRequest set = ANIMSERVER__SET_INPUTS_REQUEST__INIT;
  void *block = NULL;
  int rc = build_inputs(ids, inputs, n, &request, &set, &block);
  if (rc) return rc;
  call_t c = {0};
  rc = call(client, &request, ANIMSERVER__RESPONSE__BODY_SET_INPUTS, complete_status, &c, timeout_ms);
  free_inputs(block);
  if (rc == 0 && out_tick) *out_tick = c.value;
  return rc;
}

int anim_client_characters_set_input_send(anim_client_t *client, const uint64_t *ids,
                                          const anim_character_input_t *inputs, int n, anim_status_cb cb, void *data,
                                          uint64_t *out_id) {
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__SetInputsRequest set = ANIMSERVER__SET_INPUTS_REQUEST__INIT;
  void *block = NULL;
  int rc = build_inputs(ids, inputs, n, &request, &set, &block);
  if (rc) return rc;
  rc = anim__client_send_status(client, &request, ANIMSERVER__RESPONSE__BODY_SET_INPUTS, cb, data, out_id);
  free_inputs(block);
  return rc;
}

static void complete_state(anim_client_t *client, pending_t *p, int status, const Animserver__Response *r) {
  call_t *c = p->data;
  if (!status && r) {
    const Animserver__CharacterStateResponse *m = r->character_state;
    anim_character_state_t *s = calloc(1, sizeof *s);
    anim_inertializer_state_t *in = anim__state_from(m->inertializer);
    if (!s || !in) {
      free(s), anim_inertializer_state_free(in);
      finish(p, anim__client_set_error(client, ANIM_ENOMEM, "out of memory or a malformed inertializer state"));
      return;
    }
    s->database_version = m->database_version, s->tick = m->tick;
    anim__copy_vec3(s->position, m->position), anim__copy_vec3(s->velocity, m->velocity), anim__copy_quat(s->rotation, m->rotation);
    anim__copy_vec3(s->angular_velocity, m->angular_velocity), anim__copy_vec3(s->desired_velocity, m->desired_velocity);
    anim__copy_quat(s->desired_rotation, m->desired_rotation);
    for (size_t i = 0; i < m->n_trajectory && i < 8; i++) anim__copy_vec3(s->trajectory[s->ntrajectory++], m->trajectory[i]);
    s->frame = m->frame, s->range = m->range;
    snprintf(s->range_name, sizeof s->range_name, "%s", m->range_name ? m->range_name : "");
    s->time_since_transition = m->time_since_transition;
    s->searches = m->searches, s->transitions = m->transitions;
    s->inertialize_halflife = m->inertialize_halflife;
    s->inertializer = *in;
    free(in); /* the arrays now belong to s */
    s->mode = (int)m->mode;
    snprintf(s->machine, sizeof s->machine, "%s", m->machine ? m->machine : "");
    for (size_t l = 0; l < m->n_state_path && l < 8; l++) {
      snprintf(s->state_path[l], sizeof s->state_path[l], "%s", m->state_path[l]);
      s->state_times[l] = l < m->n_state_times ? m->state_times[l] : 0.0f;
      s->depth = (int)l + 1;
    }
    s->events_dropped = m->events_dropped;
    snprintf(s->follow, sizeof s->follow, "%s", m->follow ? m->follow : "");
    s->path_arc = m->path_arc, s->plans = m->plans, s->expansions = m->expansions;
    s->scale = m->scale;
    for (size_t k = 0; k < m->n_tracker_residuals && k < 8; k++)
      s->tracker_residuals[s->ntracker_residuals++] = m->tracker_residuals[k];
    *(anim_character_state_t **)c->out = s;
  }
  finish(p, status);
}

int anim_client_character_state(anim_client_t *client, uint64_t id, int offsets, anim_character_state_t **out_state,
                                int timeout_ms) {
  if (!client || !out_state) return ANIM_EINVAL;
  *out_state = NULL;
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__CharacterStateRequest state = ANIMSERVER__CHARACTER_STATE_REQUEST__INIT;
  state.character = id;
  state.offsets = offsets ? 1 : 0;
  request.body_case = ANIMSERVER__REQUEST__BODY_CHARACTER_STATE;
  request.character_state = &state;
  call_t c = {0};
  c.out = out_state;
  return call(client, &request, ANIMSERVER__RESPONSE__BODY_CHARACTER_STATE, complete_state, &c, timeout_ms);
}

void anim_character_state_free(anim_character_state_t *state) {
  if (!state) return;
  free(state->inertializer.offset_positions); /* one block holds the four offset arrays */
  free(state);
}

/* The subscription is registered when its answer arrives, before any of its frames. */
static void complete_subscribe(anim_client_t *client, pending_t *p, int status, const Animserver__Response *r) {
  call_t *c = p->data;
  if (!status && r) {
    struct client_streams *st = streams_of(client);
    client_subscription_t *s = st ? calloc(1, sizeof *s) : NULL;
    if (!s) {
      finish(p, anim__client_set_error(client, ANIM_ENOMEM, "out of memory"));
      return;
    }
    s->id = r->subscribe->subscription;
    s->rotations_only = c->subscribe->rotations_only;
    s->cb = c->cb;
    s->data = c->data;
    s->next = st->subscriptions;
    st->subscriptions = s;
    c->value = s->id;
    c->rate = r->subscribe->tick_rate;
  }
  finish(p, status);
}

int anim_client_subscribe(anim_client_t *client, const anim_subscribe_options_t *options, anim_stream_cb cb,
                          void *data, uint64_t *out_subscription, float *out_tick_rate, int timeout_ms) {
  if (!client || !options || options->ncharacters < 0 || (options->ncharacters && !options->characters) ||
      options->rate_divisor < 0 || (options->encoding != ANIM_POSE_FLOAT && options->encoding != ANIM_POSE_QUANTIZED))
    return ANIM_EINVAL;
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__SubscribeRequest sub = ANIMSERVER__SUBSCRIBE_REQUEST__INIT;
  sub.n_characters = (size_t)options->ncharacters;
  sub.characters = (uint64_t *)options->characters;
  sub.owned = options->owned ? 1 : 0;
  sub.rate_divisor = (uint32_t)options->rate_divisor;
  sub.encoding = (Animserver__PoseEncoding)options->encoding;
  sub.global_positions = options->global_positions ? 1 : 0;
  sub.rotations_only = options->rotations_only ? 1 : 0;
  request.body_case = ANIMSERVER__REQUEST__BODY_SUBSCRIBE;
  request.subscribe = &sub;
  call_t c = {0};
  c.subscribe = options, c.cb = cb, c.data = data;
  int rc = call(client, &request, ANIMSERVER__RESPONSE__BODY_SUBSCRIBE, complete_subscribe, &c, timeout_ms);
  if (rc == 0) {
    if (out_subscription) *out_subscription = c.value;
    if (out_tick_rate) *out_tick_rate = c.rate;
  }
  return rc;
}

static void complete_changed(anim_client_t *client, pending_t *p, int status, const Animserver__Response *r) {
  finish(p, status);
}

int anim_client_subscription_update(anim_client_t *client, uint64_t subscription, int rate_divisor, int encoding,
                                    int paused, int timeout_ms) {
  if (!client || rate_divisor < 0) return ANIM_EINVAL;
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__UpdateSubscriptionRequest update = ANIMSERVER__UPDATE_SUBSCRIPTION_REQUEST__INIT;
  update.subscription = subscription;
  update.rate_divisor = (uint32_t)rate_divisor;
  update.encoding = (Animserver__PoseEncoding)encoding;
  update.paused = paused ? 1 : 0;
  request.body_case = ANIMSERVER__REQUEST__BODY_UPDATE_SUBSCRIPTION;
  request.update_subscription = &update;
  call_t c = {0};
  return call(client, &request, ANIMSERVER__RESPONSE__BODY_SUBSCRIPTION_CHANGED, complete_changed, &c, timeout_ms);
}

int anim_client_unsubscribe(anim_client_t *client, uint64_t subscription, int timeout_ms) {
  if (!client) return ANIM_EINVAL;
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__UnsubscribeRequest unsub = ANIMSERVER__UNSUBSCRIBE_REQUEST__INIT;
  unsub.subscription = subscription;
  request.body_case = ANIMSERVER__REQUEST__BODY_UNSUBSCRIBE;
  request.unsubscribe = &unsub;
  call_t c = {0};
  int rc = call(client, &request, ANIMSERVER__RESPONSE__BODY_SUBSCRIPTION_CHANGED, complete_changed, &c, timeout_ms);
  /* Forget it either way: frames still in flight are then ignored. */
  struct client_streams *st = client->streams;
  for (client_subscription_t **s = st ? &st->subscriptions : NULL; s && *s; s = &(*s)->next) {
    if ((*s)->id != subscription) continue;
    client_subscription_t *gone = *s;
    *s = gone->next;
    free(gone);
    break;
  }
  return rc;
}

static void complete_stats(anim_client_t *client, pending_t *p, int status, const Animserver__Response *r) {
  call_t *c = p->data;
  if (!status && r) {
    const Animserver__ServerStatsResponse *m = r->server_stats;
    anim_server_stats_t *s = c->out;
    s->uptime_us = m->uptime_us, s->connections = m->connections, s->characters = m->characters;
    s->requests = m->requests, s->errors = m->errors, s->tick_rate = m->tick_rate;
    s->ticks = m->ticks, s->ticks_late = m->ticks_late, s->ticks_skipped = m->ticks_skipped;
    s->lateness_p50_us = m->lateness_p50_us, s->lateness_p99_us = m->lateness_p99_us;
    s->lateness_max_us = m->lateness_max_us, s->tick_work_p50_us = m->tick_work_p50_us;
    s->tick_work_p99_us = m->tick_work_p99_us, s->frames_sent = m->frames_sent;
    s->frames_dropped = m->frames_dropped, s->stream_bytes = m->stream_bytes, s->poses_sent = m->poses_sent;
    s->slow_subscribers_closed = m->slow_subscribers_closed, s->cpu_user_s = m->cpu_user_s;
    s->cpu_system_s = m->cpu_system_s, s->rss_bytes = m->rss_bytes, s->character_bytes = m->character_bytes;
    s->pose_buffer_bytes = m->pose_buffer_bytes;
  }
  finish(p, status);
}

int anim_client_shutdown(anim_client_t *client, int timeout_ms) {
  if (!client) return ANIM_EINVAL;
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__ShutdownRequest shutdown = ANIMSERVER__SHUTDOWN_REQUEST__INIT;
  request.body_case = ANIMSERVER__REQUEST__BODY_SHUTDOWN;
  request.shutdown = &shutdown;
  call_t c = {0};
  return call(client, &request, ANIMSERVER__RESPONSE__BODY_SHUTDOWN, complete_changed, &c, timeout_ms);
}

int anim_client_server_stats(anim_client_t *client, anim_server_stats_t *out_stats, int timeout_ms) {
  if (!client || !out_stats) return ANIM_EINVAL;
  memset(out_stats, 0, sizeof *out_stats);
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__ServerStatsRequest stats = ANIMSERVER__SERVER_STATS_REQUEST__INIT;
  request.body_case = ANIMSERVER__REQUEST__BODY_SERVER_STATS;
  request.server_stats = &stats;
  call_t c = {0};
  c.out = out_stats;
  return call(client, &request, ANIMSERVER__RESPONSE__BODY_SERVER_STATS, complete_stats, &c, timeout_ms);
}
