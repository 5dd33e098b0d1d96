/*
 * actor_matching.h: the motion-matching kind's tick, for kinds built on it.
 *
 * A kind whose character begins with an anim_controller_t (MODE_PHYSICAL)
 * reuses srv_actor_matching's hooks on it (init, free, scratch_bytes,
 * set_input, state) and ticks through srv_matching_simulate, which runs
 * the chunk's controllers and their one batch search as the matching kind
 * does and calls after(actor, dt) for each actor once its controller has
 * its pose, before srv_actor_report.
 */
#ifndef SRV_ACTOR_MATCHING_H
#define SRV_ACTOR_MATCHING_H

#include "actor.h"

/* Pool: actors' characters start with an anim_controller_t; scratch as
 * srv_actor_matching.scratch_bytes gives; after may be NULL. */
void srv_matching_simulate(srv_actor_t *const *actors, int n, float dt, void *scratch,
                           void (*after)(srv_actor_t *actor, float dt));

#endif
