/* actor.c: the kinds of character by mode, and the pose record (see actor.h). */
#include "actor.h"
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
