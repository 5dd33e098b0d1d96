/* actor.c: the kinds of character by mode, and the pose record (see actor.h). */
#include <string.h>
#include "actor.h"
#include "anim_error.h"
#include "animserver.pb-c.h"
#include "pose/quantize.h"
#include "pose/world.h"

const srv_actor_kind_t *srv_actor_kind_for(int mode) {
  switch (mode) {
#define SRV_ACTOR_CASE(MODE, name) \
  case ANIMSERVER__CHARACTER_MODE__MODE_##MODE: return &srv_actor_##name;
    SRV_ACTOR_KINDS(SRV_ACTOR_CASE)
#undef SRV_ACTOR_CASE
  default: return NULL;
  }
}

int srv_actor_kind_mode(const srv_actor_kind_t *kind) {
#define SRV_ACTOR_MODE(MODE, name) \
  if (kind == &srv_actor_##name) return ANIMSERVER__CHARACTER_MODE__MODE_##MODE;
  SRV_ACTOR_KINDS(SRV_ACTOR_MODE)
#undef SRV_ACTOR_MODE
  return -1;
}

void srv_actor_report(srv_actor_t *a) {
  a->kind->report(a);
  /* A character that walked past the limit is put back on it, each tick
   * the walk would take it further: it stands at the boundary, slides along
   * it or turns back in, and its stream never leaves the world. */
  if (a->kind->translate && a->pose.nbones > 0 && !anim_world_contains(a->pose.positions[0])) {
    vec3 step = anim_world_confine(a->pose.positions[0]);
    if (step.x != 0.0f || step.y != 0.0f || step.z != 0.0f) {
      a->kind->translate(a->character, step);
      a->kind->report(a); /* its global positions again */
    }
  }
  if (a->want & SRV_WANT_QUANTIZED)
    anim_pose_quantize(a->quantized, a->pose.positions, a->pose.rotations, a->pose.nbones, 0);
}

void srv_actor_keep_record(srv_actor_t *a, float dt) {
  const anim_controller_t *c = a->records && a->kind->replica ? a->kind->replica(a->character) : NULL;
  if (!c || !c->ticks) return;
  srv_actor_tick_record_t *slot = &a->records[c->ticks % SRV_ACTOR_RECORDS];
  slot->ticks = (uint32_t)c->ticks, slot->dt = dt, slot->record = c->record;
}

void srv_actor_state_sim(const anim_steering_sim_t *sim, srv_response_t *out) {
  srv_character_state_response_t *s = &out->body.character_state;
  s->position = sim->position, s->velocity = sim->velocity, s->rotation = sim->rotation;
  s->angular_velocity = sim->angular_velocity, s->desired_velocity = sim->desired_velocity;
  s->desired_rotation = sim->desired_rotation;
}

void srv_actor_state_feet(const anim_foot_locks_t *feet, srv_response_t *out) {
  srv_character_state_response_t *s = &out->body.character_state;
  for (int i = 0; i < feet->nfeet && i < ANIM_MAX_CONTACTS; i++) {
    const anim_foot_lock_t *foot = &feet->feet[i];
    s->feet[i].bone = foot->toe;
    s->feet[i].locked = foot->state == ANIM_FOOT_PLANTED, s->feet[i].stepping = foot->state == ANIM_FOOT_STEPPING;
    s->feet[i].position = foot->lock_position;
    s->nfeet = i + 1;
  }
}

int srv_actor_state_inertializer(const anim_inertializer_t *in, int offsets, srv_response_t *out) {
  srv_inertializer_t *s = &out->body.character_state.inertializer;
  const float anchor[14] = {in->anchor_anim_position.x,  in->anchor_anim_position.y,  in->anchor_anim_position.z,
                            in->anchor_anim_rotation.w,  in->anchor_anim_rotation.x,  in->anchor_anim_rotation.y,
                            in->anchor_anim_rotation.z,  in->anchor_world_position.x, in->anchor_world_position.y,
                            in->anchor_world_position.z, in->anchor_world_rotation.w, in->anchor_world_rotation.x,
                            in->anchor_world_rotation.y, in->anchor_world_rotation.z};
  memcpy(s->anchor, anchor, sizeof anchor);
  if (!offsets) return 0;
  size_t n = in->count;
  float *block = srv_response_alloc(out, n * 13 * sizeof *block);
  if (!block) return ANIM_ENOMEM;
  s->nbones = (int)n;
  s->offset_positions = block, s->offset_velocities = block + 3 * n;
  s->offset_rotations = block + 6 * n, s->offset_angular_velocities = block + 10 * n;
  memcpy(s->offset_positions, in->offset_positions, n * sizeof(vec3));
  memcpy(s->offset_velocities, in->offset_velocities, n * sizeof(vec3));
  memcpy(s->offset_rotations, in->offset_rotations, n * sizeof(quat));
  memcpy(s->offset_angular_velocities, in->offset_angular_velocities, n * sizeof(vec3));
  return 0;
}
