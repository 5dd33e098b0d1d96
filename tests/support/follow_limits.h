/*
 * follow_limits.h: how closely a motion-graph character must follow a path
 * (core/graph_character.h), the one place test_motion_graph (the core) and
 * test_graph_service (over the wire) take it from.
 */
#ifndef ANIM_TEST_FOLLOW_LIMITS_H
#define ANIM_TEST_FOLLOW_LIMITS_H

/* Following a path, distance of the displayed root from it (m) once the
 * first SETTLE_TICKS have passed: mean and worst. Measured on the Bandai graph
 * (defaults): line 0.011 / 0.036, circle of radius 3 m 0.028 / 0.116. */
#define MAX_PATH_MEAN_ERROR 0.1f
#define MAX_PATH_ERROR 0.3f
/* Ticks before the error counts: the character starts on a straight walk
 * and needs a turning clip to join a circle (the worst error, 0.43 m, is
 * 2 s in). */
#define SETTLE_TICKS (5 * 60)
#define SETTLE_SECONDS 5.0f
/* Largest change of a joint's velocity in a tick while following (m/s):
 * as test_state_machine.c; jumps are inertialized. */
#define MAX_VELOCITY_JUMP 5.0f

#endif
