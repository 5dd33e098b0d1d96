/*
 * machine_character.c: a character run by an action state machine (see
 * machine_character.h for what a tick does and when transitions happen).
 *
 * Times inside a tick: a state entered at an instant `o` seconds into the
 * tick starts with time -o (and so has played dt - o when the tick ends);
 * its motion is sampled at max(0, time). Every "is it due in this tick"
 * test is offset < dt - DUE_EPS, so an instant that falls exactly on the end
 * of a tick belongs to the next one (float sums of dt land a hair either
 * side of it).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anim_error.h"
#include "pose/kinematics.h"
#include "machine/machine_character.h"

#define DUE_EPS 1e-5f
/* Steps of one tick's settling: transitions are bounded by max_transitions,
 * loop restarts and ENDs nobody takes by this. */
#define MAX_STEPS (2 * ANIM_SM_MAX_TRANSITIONS_PER_TICK + 16)

static const vec3 up = {0.0f, 1.0f, 0.0f};

static anim_pose_view_t view_of(const anim_machine_pose_t *p) {
  anim_pose_view_t v = {p->count, p->positions, p->velocities, p->rotations, p->angular_velocities};
  return v;
}

static anim_pose_buffer_t buffer_of(const anim_machine_pose_t *p) {
  anim_pose_buffer_t b = {p->count, p->positions, p->velocities, p->rotations, p->angular_velocities};
  return b;
}

static const anim_sm_state_t *innermost(const anim_machine_character_t *c) {
  return &c->machine->states[c->levels[c->depth - 1].state];
}

/* ---- sampling the database -------------------------------------------------------- */

/* The pose at fractional frame `frame`, clamped to [first, last]; bone 0 in
 * the clip's space. */
static void sample_frame(const anim_database_t *db, float frame, int first, int last, anim_machine_pose_t *out) {
  float f = clampf(frame, (float)first, (float)last);
  int i0 = (int)floorf(f);
  if (i0 > last) i0 = last;
  int i1 = i0 < last ? i0 + 1 : last;
  float a = f - (float)i0;
  size_t n = (size_t)db->nbones, b0 = (size_t)i0 * n, b1 = (size_t)i1 * n;
  for (size_t b = 0; b < n; b++) {
    out->positions[b] = vec3_lerp(db->local_positions[b0 + b], db->local_positions[b1 + b], a);
    out->velocities[b] = vec3_lerp(db->local_velocities[b0 + b], db->local_velocities[b1 + b], a);
    out->angular_velocities[b] =
        vec3_lerp(db->local_angular_velocities[b0 + b], db->local_angular_velocities[b1 + b], a);
    out->rotations[b] = quat_slerp_shortest(db->local_rotations[b0 + b], db->local_rotations[b1 + b], a);
  }
}

static void copy_pose(anim_machine_pose_t *dst, const anim_machine_pose_t *src) {
  size_t n = src->count;
  memcpy(dst->positions, src->positions, n * sizeof(vec3)), memcpy(dst->velocities, src->velocities, n * sizeof(vec3));
  memcpy(dst->angular_velocities, src->angular_velocities, n * sizeof(vec3));
  memcpy(dst->rotations, src->rotations, n * sizeof(quat));
}

/* ---- blends --------------------------------------------------------------------------- */

/* The two entries around the parameter's value and the weight of the second. */
static void blend_pick(const anim_machine_character_t *c, const anim_sm_state_t *st, int *out_a, int *out_b,
                       float *out_w) {
  const anim_sm_clip_t *e = &c->machine->clips[st->clip];
  float v = c->params[st->param];
  int k = 0;
  while (k + 1 < st->nclips - 1 && v > e[k + 1].value) k++;
  if (st->nclips == 1 || v <= e[0].value) *out_a = *out_b = st->clip, *out_w = 0.0f;
  else if (v >= e[st->nclips - 1].value) *out_a = *out_b = st->clip + st->nclips - 1, *out_w = 0.0f;
  else *out_a = st->clip + k, *out_b = st->clip + k + 1, *out_w = (v - e[k].value) / (e[k + 1].value - e[k].value);
}

/* A cycle's frames: stop - start - 1 frames per cycle (its last frame is its
 * first again), phase 0 at phase_frame. */
static float cycle_frames(const anim_sm_clip_t *clip) { return (float)(clip->stop - clip->start - 1); }
static float cycle_frame(const anim_sm_clip_t *clip, float phase) {
  float n = cycle_frames(clip);
  float u = fmodf((float)(clip->phase_frame - clip->start) + phase * n, n);
  if (u < 0.0f) u += n;
  return (float)clip->start + u;
}

static float blend_period(const anim_machine_character_t *c, const anim_sm_state_t *st) {
  int a, b;
  float w;
  blend_pick(c, st, &a, &b, &w);
  const anim_sm_clip_t *clips = c->machine->clips;
  return ((1.0f - w) * cycle_frames(&clips[a]) + w * cycle_frames(&clips[b])) / c->db->frame_rate;
}

/* The root's velocity in its own axes and its turning rate (rad/s about up)
 * at frame f. */
static void root_motion(const anim_database_t *db, float f, vec3 *out_local_velocity, float *out_turn) {
  size_t i = (size_t)lroundf(f) * (size_t)db->nbones;
  *out_local_velocity = quat_inv_mul_vec3(db->local_rotations[i], db->local_velocities[i]);
  *out_turn = db->local_angular_velocities[i].y;
}

/* The blended root motion at the current phase. */
static void blend_root_motion(const anim_machine_character_t *c, const anim_sm_state_t *st, vec3 *out_v,
                              float *out_turn) {
  int a, b;
  float w, ta, tb;
  vec3 va, vb;
  blend_pick(c, st, &a, &b, &w);
  float phase = fmaxf(c->motion_time, 0.0f);
  root_motion(c->db, cycle_frame(&c->machine->clips[a], phase), &va, &ta);
  root_motion(c->db, cycle_frame(&c->machine->clips[b], phase), &vb, &tb);
  *out_v = vec3_lerp(va, vb, w), *out_turn = ta + (tb - ta) * w;
}

/* The blended pose at the current phase into out (scratch holds the second
 * clip); bone 0 is the integrated root. */
static void blend_sample(anim_machine_character_t *c, const anim_sm_state_t *st, anim_machine_pose_t *out,
                         anim_machine_pose_t *scratch) {
  int a, b;
  float w;
  blend_pick(c, st, &a, &b, &w);
  const anim_sm_clip_t *ca = &c->machine->clips[a], *cb = &c->machine->clips[b];
  float phase = fmaxf(c->motion_time, 0.0f);
  sample_frame(c->db, cycle_frame(ca, phase), ca->start, ca->stop - 1, out);
  if (w > 0.0f) {
    sample_frame(c->db, cycle_frame(cb, phase), cb->start, cb->stop - 1, scratch);
    for (size_t i = 1; i < out->count; i++) {
      out->positions[i] = vec3_lerp(out->positions[i], scratch->positions[i], w);
      out->velocities[i] = vec3_lerp(out->velocities[i], scratch->velocities[i], w);
      out->angular_velocities[i] = vec3_lerp(out->angular_velocities[i], scratch->angular_velocities[i], w);
      out->rotations[i] = quat_slerp_shortest(out->rotations[i], scratch->rotations[i], w);
    }
  }
  vec3 v;
  float turn;
  blend_root_motion(c, st, &v, &turn);
  out->positions[0] = c->blend_root_position, out->rotations[0] = c->blend_root_rotation;
  out->velocities[0] = quat_mul_vec3(c->blend_root_rotation, v);
  out->angular_velocities[0] = vec3_make(0.0f, turn, 0.0f);
}

/* ---- the playing motion ------------------------------------------------------------- */

static float clip_length(const anim_machine_character_t *c) {
  return (float)(c->stop - c->start - 1) / c->db->frame_rate;
}

/* The database frame nearest to what plays now (-1: nothing yet). */
static int playing_frame(const anim_machine_character_t *c) {
  if (c->depth == 0) return -1;
  const anim_sm_state_t *st = innermost(c);
  switch (st->kind) {
  case ANIM_SM_MOTION_CLIP:
  case ANIM_SM_MOTION_TAG:
    return c->start + (int)lroundf(clampf(c->motion_time, 0.0f, clip_length(c)) * c->db->frame_rate);
  case ANIM_SM_MOTION_BLEND: {
    int a, b;
    float w;
    blend_pick(c, st, &a, &b, &w);
    const anim_sm_clip_t *clip = &c->machine->clips[w < 0.5f ? a : b];
    int f = (int)lroundf(cycle_frame(clip, fmaxf(c->motion_time, 0.0f)));
    return f < clip->stop ? f : clip->stop - 1;
  }
  case ANIM_SM_MOTION_MATCH: return c->matcher.frame;
  default: return -1;
  }
}

/* Where a match state starts: the tagged frame nearest in feature space to
 * `from` (the first tagged frame when from < 0). */
static int match_start(const anim_machine_character_t *c, const anim_sm_state_t *st, int from) {
  const anim_database_t *db = c->db;
  if (from >= 0) {
    anim_search_query_t q = {db->features.values + (size_t)from * (size_t)db->features.cols, 1, -1, 0.0f, 0, 0,
                             st->tag_mask};
    anim_search_hit_t hit;
    int count = 0;
    if (anim_search_run(c->index, &q, &hit, &count, c->search_scratch) == 0 && count > 0) return hit.frame;
  }
  for (int r = 0; r < db->nranges; r++)
    if (db->ranges[r].tag_mask & st->tag_mask) return db->ranges[r].start;
  return 0;
}

/* The next range a TAG state plays (round robin in database order). */
static void tag_pick(anim_machine_character_t *c, int state) {
  const anim_database_t *db = c->db;
  uint32_t mask = c->machine->states[state].tag_mask;
  for (int i = 0; i < db->nranges; i++) {
    int r = (c->tag_cursor[state] + i) % db->nranges;
    if ((db->ranges[r].tag_mask & mask) && db->ranges[r].stop - db->ranges[r].start >= 2) {
      c->start = db->ranges[r].start, c->stop = db->ranges[r].stop;
      c->tag_cursor[state] = (r + 1) % db->nranges;
      return;
    }
  }
  c->start = db->ranges[0].start, c->stop = db->ranges[0].stop; /* bind guarantees a tagged range */
}

/* Starts the motion of state `state` (innermost) at time t0 (<= 0 inside a
 * tick). `from`: the frame playing before, for a match state's start. */
static void start_motion(anim_machine_character_t *c, int state, float t0, int from) {
  const anim_sm_state_t *st = &c->machine->states[state];
  c->ended = 0, c->loop = st->loop, c->motion_time = t0;
  switch (st->kind) {
  case ANIM_SM_MOTION_CLIP:
    c->start = c->machine->clips[st->clip].start, c->stop = c->machine->clips[st->clip].stop;
    break;
  case ANIM_SM_MOTION_TAG: tag_pick(c, state); break;
  case ANIM_SM_MOTION_BLEND:
    c->blend_period = blend_period(c, st);
    c->motion_time = t0 / c->blend_period;
    c->blend_root_position = vec3_zero(), c->blend_root_rotation = quat_identity();
    break;
  case ANIM_SM_MOTION_MATCH: {
    int frame = match_start(c, st, from);
    anim_controller_reset(&c->matcher, c->pose.positions[0], quat_yaw_angle(c->pose.rotations[0]),
                          c->pose.velocities[0], frame);
    anim_controller_set_input(&c->matcher, &c->input);
    break;
  }
  default: break;
  }
}

/* Writes the motion's pose at its current time into out. */
static void sample_motion(anim_machine_character_t *c, anim_machine_pose_t *out, anim_machine_pose_t *scratch) {
  const anim_sm_state_t *st = innermost(c);
  switch (st->kind) {
  case ANIM_SM_MOTION_BLEND: blend_sample(c, st, out, scratch); break;
  case ANIM_SM_MOTION_MATCH: {
    anim_machine_pose_t m = {out->count, c->matcher.pose_positions, c->matcher.pose_velocities,
                             c->matcher.pose_angular_velocities, c->matcher.pose_rotations};
    copy_pose(out, &m);
    break;
  }
  default:
    sample_frame(c->db, (float)c->start + clampf(c->motion_time, 0.0f, clip_length(c)) * c->db->frame_rate, c->start,
                 c->stop - 1, out);
  }
}

/* Seconds into the tick at which the motion ends (INFINITY: not this
 * motion, or END already given). */
static float motion_end(const anim_machine_character_t *c) {
  const anim_sm_state_t *st = innermost(c);
  if (c->ended) return INFINITY;
  if (st->kind == ANIM_SM_MOTION_CLIP || st->kind == ANIM_SM_MOTION_TAG)
    return fmaxf(0.0f, clip_length(c) - c->motion_time);
  if (st->kind == ANIM_SM_MOTION_BLEND) return fmaxf(0.0f, (1.0f - c->motion_time) * c->blend_period);
  return INFINITY;
}

/* ---- transitions -------------------------------------------------------------------- */

/* Enters `state` at level L at time t0, and the initial states of the
 * machines it nests. */
static void enter(anim_machine_character_t *c, int level, int state, float t0) {
  int from = playing_frame(c);
  const anim_state_machine_t *sm = c->machine;
  for (;;) {
    c->levels[level].state = state, c->levels[level].time = t0, c->levels[level].held = -1;
    c->depth = level + 1;
    const anim_sm_state_t *st = &sm->states[state];
    if (st->kind != ANIM_SM_MOTION_MACHINE) break;
    state = sm->machines[st->nested].first_state;
    level++;
  }
  start_motion(c, state, t0, from);
}

/* An inertialized jump from what is shown to the motion as it now is:
 * offsets re-based so the displayed pose does not change. */
static void jump(anim_machine_character_t *c, float halflife) {
  anim_machine_pose_t *src = &c->input_pose[c->current], *dst = &c->input_pose[!c->current];
  sample_motion(c, dst, &c->input_pose[2]);
  anim_pose_view_t s = view_of(src), d = view_of(dst);
  if (anim_inertializer_transition(&c->inertializer, &s, &d) == 0) c->current = !c->current;
  c->halflife = halflife;
}

static void take(anim_machine_character_t *c, int level, int transition, float offset) {
  const anim_sm_transition_t *t = &c->machine->transitions[transition];
  enter(c, level, t->target, -offset);
  jump(c, t->halflife);
  c->transitions++;
  c->changed = 1;
}

/* Offers event to the innermost state with a transition for it, then up to
 * level outermost. 1: taken or held; 0: no state has one; -1: one would be
 * taken but no transition is left for this tick. */
static int dispatch(anim_machine_character_t *c, int event, int outermost, float offset, float dt, int *budget) {
  const anim_state_machine_t *sm = c->machine;
  for (int level = c->depth - 1; level >= outermost; level--) {
    const anim_sm_state_t *st = &sm->states[c->levels[level].state];
    for (int i = 0; i < st->ntransitions; i++) {
      int ti = st->first_transition + i;
      const anim_sm_transition_t *t = &sm->transitions[ti];
      if (t->event != event) continue;
      float at = fmaxf(offset, t->exit_time - c->levels[level].time);
      if (at < dt - DUE_EPS) {
        if (*budget == 0) return -1;
        (*budget)--;
        take(c, level, ti, at);
      } else {
        c->levels[level].held = ti;
      }
      return 1;
    }
  }
  return 0;
}

/* The outermost level the motion's END goes to. A cycle's end (a looping
 * clip or tag, a blend) is its own state's to take: a machine around it
 * would otherwise leave after one cycle of a loop nested inside
 * (`moving { machine loco  END idle }` with loco walking). The end of a
 * motion that stops goes up until some state takes it. */
static int end_reaches(const anim_machine_character_t *c) {
  return c->loop || innermost(c)->kind == ANIM_SM_MOTION_BLEND ? c->depth - 1 : 0;
}

/* Takes, in time order, what falls due inside this tick: held transitions
 * and AUTO transitions at their exit times (outer machines first at equal
 * times), the motion's END. */
static void settle(anim_machine_character_t *c, float dt, int *budget) {
  const anim_state_machine_t *sm = c->machine;
  for (int step = 0; step < MAX_STEPS; step++) {
    float best = dt - DUE_EPS;
    int level = -1, transition = -1, end = 0;
    for (int l = 0; l < c->depth; l++) {
      const anim_machine_level_t *lv = &c->levels[l];
      if (lv->held >= 0) {
        float at = fmaxf(0.0f, sm->transitions[lv->held].exit_time - lv->time);
        if (at < best) best = at, level = l, transition = lv->held;
      }
      const anim_sm_state_t *st = &sm->states[lv->state];
      for (int i = 0; i < st->ntransitions; i++) {
        const anim_sm_transition_t *t = &sm->transitions[st->first_transition + i];
        if (t->event != ANIM_SM_EVENT_AUTO) continue;
        float at = fmaxf(0.0f, t->exit_time - lv->time);
        if (at < best) best = at, level = l, transition = st->first_transition + i;
        break; /* the first AUTO of a state is the one */
      }
    }
    float at_end = motion_end(c);
    if (at_end < best) best = at_end, end = 1;
    if (!end && transition < 0) return;
    if (!end) {
      if (*budget == 0) return;
      (*budget)--;
      take(c, level, transition, best);
      continue;
    }
    uint64_t before = c->transitions;
    int handled = dispatch(c, ANIM_SM_EVENT_END, end_reaches(c), best, dt, budget);
    if (handled < 0) return;
    if (handled > 0) {
      /* Held for an exit time: the motion waits at its end (a blend, until
       * its cycle wraps). */
      if (c->transitions == before) c->ended = 1;
      continue;
    }
    const anim_sm_state_t *st = innermost(c);
    if (st->kind == ANIM_SM_MOTION_BLEND) {
      c->ended = 1; /* until the cycle wraps */
    } else if (c->loop) {
      c->motion_time = -best;
      if (st->kind == ANIM_SM_MOTION_TAG) tag_pick(c, c->levels[c->depth - 1].state);
      jump(c, sm->halflife);
    } else {
      c->ended = 1;
    }
  }
}

/* The motion and every level's clock move on by dt. */
static void advance(anim_machine_character_t *c, float dt) {
  const anim_sm_state_t *st = innermost(c);
  for (int l = 0; l < c->depth; l++) c->levels[l].time += dt;
  if (st->kind == ANIM_SM_MOTION_BLEND) {
    float run = dt - fmaxf(0.0f, -c->motion_time * c->blend_period);
    if (run > 0.0f) {
      vec3 v;
      float turn;
      blend_root_motion(c, st, &v, &turn);
      c->blend_root_position =
          vec3_add(c->blend_root_position, vec3_scale(quat_mul_vec3(c->blend_root_rotation, v), run));
      c->blend_root_rotation = quat_normalize(quat_mul(quat_from_angle_axis(turn * run, up), c->blend_root_rotation));
    }
    c->motion_time += dt / c->blend_period;
    while (c->motion_time >= 1.0f) c->motion_time -= 1.0f, c->ended = 0;
    return;
  }
  float run = dt + fminf(0.0f, c->motion_time);
  c->motion_time += dt;
  if (st->kind != ANIM_SM_MOTION_MATCH || run <= 1e-6f) return;
  float query[ANIM_MAX_FEATURE_DIMS];
  anim_search_query_t q;
  anim_search_hit_t hit;
  int count = 0;
  int searching = anim_controller_tick_begin(&c->matcher, run, query, &q);
  if (searching > 0) {
    q.tag_mask = st->tag_mask;
    if (anim_search_run(c->index, &q, &hit, &count, c->search_scratch) != 0) count = 0;
  }
  if (searching >= 0) anim_controller_tick_end(&c->matcher, count > 0 ? &hit : NULL);
}

/* ---- public ------------------------------------------------------------------------- */

void anim_machine_character_free(anim_machine_character_t *c) {
  if (c->machine && c->machine->has_match) anim_controller_free(&c->matcher);
  free(c->search_scratch);
  free(c->memory);
  memset(c, 0, sizeof *c);
}

static int has_trajectory(const anim_database_t *db) {
  for (int t = 0; t < db->features.schema.nterms; t++)
    if (db->features.schema.terms[t].kind == ANIM_FEATURE_TRAJECTORY_POSITION) return 1;
  return 0;
}

/* Carves n entries of each pose array out of *cursor. */
static void carve_pose(anim_machine_pose_t *p, char **cursor, size_t n) {
  p->count = n;
  p->positions = (vec3 *)*cursor, *cursor += n * sizeof(vec3);
  p->velocities = (vec3 *)*cursor, *cursor += n * sizeof(vec3);
  p->angular_velocities = (vec3 *)*cursor, *cursor += n * sizeof(vec3);
  p->rotations = (quat *)*cursor, *cursor += n * sizeof(quat);
}

int anim_machine_character_init(anim_machine_character_t *c, const anim_state_machine_t *sm, const anim_database_t *db,
                                const anim_search_index_t *index, const anim_controller_params_t *controller_params,
                                vec3 position, float facing) {
  memset(c, 0, sizeof *c);
  if (!sm || !db || sm->bound_version == 0 || sm->bound_version != db->version) return ANIM_EINVAL;
  if (!isfinite(position.x + position.z + facing)) return ANIM_ENONFINITE;
  if (sm->has_match && (!index || !db->features.values || !has_trajectory(db))) return ANIM_EINVAL;
  size_t n = (size_t)db->nbones, pose_bytes = n * (3 * sizeof(vec3) + sizeof(quat));
  size_t bytes = 5 * pose_bytes + n * (sizeof(vec3) + sizeof(quat)) + (size_t)sm->nstates * sizeof(int);
  c->memory = calloc(1, bytes);
  if (!c->memory) return ANIM_ENOMEM;
  char *cursor = c->memory;
  for (int i = 0; i < 3; i++) carve_pose(&c->input_pose[i], &cursor, n);
  carve_pose(&c->pose, &cursor, n);
  anim_machine_pose_t offsets;
  carve_pose(&offsets, &cursor, n);
  c->offset_positions = offsets.positions, c->offset_velocities = offsets.velocities;
  c->offset_angular_velocities = offsets.angular_velocities, c->offset_rotations = offsets.rotations;
  c->global_positions = (vec3 *)cursor, cursor += n * sizeof(vec3);
  c->global_rotations = (quat *)cursor, cursor += n * sizeof(quat);
  c->tag_cursor = (int *)cursor;
  c->machine = sm, c->db = db, c->index = index;
  for (int i = 0; i < sm->nparams; i++) c->params[i] = sm->params[i].initial;
  c->halflife = sm->halflife;
  c->input.kind = ANIM_INPUT_STICK;
  if (sm->has_match) {
    int rc = anim_controller_init(&c->matcher, db, index, controller_params, position, facing, 0);
    c->search_scratch = rc ? NULL : malloc(anim_search_scratch_size(index, 1) + 1);
    if (rc || !c->search_scratch) {
      if (!rc) anim_controller_free(&c->matcher);
      free(c->memory), free(c->search_scratch);
      memset(c, 0, sizeof *c);
      return rc ? rc : ANIM_ENOMEM;
    }
  }
  anim_inertializer_init(&c->inertializer, n, c->offset_positions, c->offset_velocities, c->offset_rotations,
                         c->offset_angular_velocities);
  /* Where a match state would start from before anything was shown. */
  quat rotation = quat_from_angle_axis(facing, up);
  c->pose.positions[0] = vec3_make(position.x, 0.0f, position.z), c->pose.rotations[0] = rotation;
  enter(c, 0, sm->machines[0].first_state, 0.0f);
  anim_machine_pose_t *in = &c->input_pose[c->current];
  sample_motion(c, in, &c->input_pose[2]);
  anim_inertializer_place(&c->inertializer, in->positions[0], in->rotations[0], c->pose.positions[0], rotation);
  anim_pose_view_t v = view_of(in);
  anim_pose_buffer_t out = buffer_of(&c->pose);
  anim_inertializer_update(&c->inertializer, &out, &v, c->halflife, 0.0f);
  return 0;
}

int anim_machine_character_send(anim_machine_character_t *c, int event) {
  if (event < 0 || event >= c->machine->nevents) return ANIM_ERANGE;
  if (c->queue_count == ANIM_MACHINE_QUEUE) return ANIM_ELIMIT;
  c->queue[(c->queue_head + c->queue_count++) % ANIM_MACHINE_QUEUE] = event;
  return 0;
}

int anim_machine_character_send_name(anim_machine_character_t *c, const char *event) {
  int e = event ? anim_state_machine_find_event(c->machine, event) : -1;
  return e < 0 ? ANIM_ENOTFOUND : anim_machine_character_send(c, e);
}

int anim_machine_character_set_param(anim_machine_character_t *c, int param, float value) {
  if (param < 0 || param >= c->machine->nparams) return ANIM_ERANGE;
  if (!isfinite(value)) return ANIM_ENONFINITE;
  c->params[param] = value;
  return 0;
}

void anim_machine_character_translate(anim_machine_character_t *c, vec3 step) {
  anim_inertializer_t *in = &c->inertializer;
  in->anchor_world_position = vec3_add(in->anchor_world_position, step);
  if (innermost(c)->kind == ANIM_SM_MOTION_MATCH) {
    /* The input is the controller's pose, its root in the world: it moves
     * too, and the anchor's animation side with it, so the shown pose
     * (world_position + R (p - anim_position)) moves by step alone. */
    anim_controller_translate(&c->matcher, step);
    in->anchor_anim_position = vec3_add(in->anchor_anim_position, step);
    vec3 *input_root = &c->input_pose[c->current].positions[0];
    *input_root = vec3_add(*input_root, step);
  }
  c->pose.positions[0] = vec3_add(c->pose.positions[0], step);
  c->globals_fresh = 0;
}

int anim_machine_character_set_input(anim_machine_character_t *c, const anim_controller_input_t *input) {
  int rc = anim_controller_input_validate(input);
  if (rc) return rc;
  c->input = *input;
  if (c->machine->has_match) anim_controller_set_input(&c->matcher, input);
  return 0;
}

int anim_machine_character_tick(anim_machine_character_t *c, float dt) {
  if (!(dt > 0.0f) || !isfinite(dt)) return ANIM_EINVAL;
  int budget = c->machine->max_transitions;
  c->changed = 0, c->globals_fresh = 0;
  if (innermost(c)->kind == ANIM_SM_MOTION_BLEND) {
    /* The parameter may have moved: keep the phase, change the rate. */
    c->blend_period = blend_period(c, innermost(c));
  }
  while (c->queue_count > 0) {
    int event = c->queue[c->queue_head];
    int handled = dispatch(c, event, 0, 0.0f, dt, &budget);
    if (handled < 0) break; /* waits for the next tick */
    if (handled == 0) c->events_dropped++;
    c->queue_head = (c->queue_head + 1) % ANIM_MACHINE_QUEUE, c->queue_count--;
  }
  settle(c, dt, &budget);
  advance(c, dt);
  anim_machine_pose_t *in = &c->input_pose[c->current];
  sample_motion(c, in, &c->input_pose[2]);
  anim_pose_view_t v = view_of(in);
  anim_pose_buffer_t out = buffer_of(&c->pose);
  int rc = anim_inertializer_update(&c->inertializer, &out, &v, c->halflife, dt);
  c->ticks++;
  return rc;
}

int anim_machine_character_path(const anim_machine_character_t *c, int *out_states, float *out_times, int max) {
  for (int l = 0; l < c->depth && l < max; l++) {
    if (out_states) out_states[l] = c->levels[l].state;
    if (out_times) out_times[l] = c->levels[l].time;
  }
  return c->depth;
}

int anim_machine_character_frame(const anim_machine_character_t *c) { return playing_frame(c); }

void anim_machine_character_global_pose(anim_machine_character_t *c) {
  if (c->globals_fresh) return;
  c->globals_fresh = 1;
  anim_fk(c->global_positions, c->global_rotations, c->pose.positions, c->pose.rotations, c->db->skeleton.parents,
          c->db->nbones);
}
