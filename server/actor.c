/* actor.c: the kinds of character by mode, and the pose record (see actor.h). */
#include <string.h>
#include "actor.h"
#include "anim_error.h"
#include "animserver.pb-c.h"
#include "quantize.h"

const srv_actor_kind_t *srv_actor_kind_for(int mode) {
  switch (mode) {
#define SRV_ACTOR_CASE(MODE, name) \
  case ANIMSERVER__CHARACTER_MODE__MODE_##MODE: return &srv_actor_##name;
    SRV_ACTOR_KINDS(SRV_ACTOR_CASE)
#undef SRV_ACTOR_CASE
  default: return NULL;
  }
}

void srv_actor_record(srv_actor_t *a) {
  if (a->want & SRV_WANT_QUANTIZED)
    anim_pose_quantize(a->quantized, a->pose.positions, a->pose.rotations, a->pose.nbones, 0);
}

int srv_actor_inertializer_state(const anim_inertializer_t *in, size_t n, int offsets, srv_inertializer_t *out,
                                 srv_response_t *response) {
  const float anchor[14] = {in->anchor_anim_position.x,  in->anchor_anim_position.y,  in->anchor_anim_position.z,
                            in->anchor_anim_rotation.w,  in->anchor_anim_rotation.x,  in->anchor_anim_rotation.y,
                            in->anchor_anim_rotation.z,  in->anchor_world_position.x, in->anchor_world_position.y,
                            in->anchor_world_position.z, in->anchor_world_rotation.w, in->anchor_world_rotation.x,
                            in->anchor_world_rotation.y, in->anchor_world_rotation.z};
  memcpy(out->anchor, anchor, sizeof anchor);
  if (!offsets) return 0;
  float *block = srv_response_alloc(response, n * 13 * sizeof *block);
  if (!block) return ANIM_ENOMEM;
  out->nbones = (int)n;
  out->offset_positions = block, out->offset_velocities = block + 3 * n;
  out->offset_rotations = block + 6 * n, out->offset_angular_velocities = block + 10 * n;
  memcpy(out->offset_positions, in->offset_positions, n * sizeof(vec3));
  memcpy(out->offset_velocities, in->offset_velocities, n * sizeof(vec3));
  memcpy(out->offset_rotations, in->offset_rotations, n * sizeof(quat));
  memcpy(out->offset_angular_velocities, in->offset_angular_velocities, n * sizeof(vec3));
  return 0;
}
