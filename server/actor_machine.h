/*
 * actor_machine.h: what the state machine requests reach in a MODE_MACHINE
 * actor (actor_machine.c): its core character and its machine. Loop thread,
 * between ticks.
 *
 * What it does not: run the machine (core/machine/machine_character.h) or parse it (machines.h).
 */
#ifndef SRV_ACTOR_MACHINE_H
#define SRV_ACTOR_MACHINE_H

#include "actor.h"
#include "machine/machine_character.h"

/* The actor's machine character, or NULL when it is of another kind. */
anim_machine_character_t *srv_actor_machine_character(srv_actor_t *actor);

#endif
