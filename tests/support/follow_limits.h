/*
 * follow_limits.h: how closely a motion-graph character must follow a path
 * (core/graph/graph_character.h), the one place test_graph_character (the core) and
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
 * as test_machine_character.c; jumps are inertialized. */
#define MAX_VELOCITY_JUMP 5.0f
/* Progress along a path (core/graph/graph_path.h, "Progress"): the arc of the
 * path covered, at least FOLLOW_MIN_PACE times the expected speed (the
 * graph's median edge speed) for every second after FOLLOW_START_SECONDS;
 * an open path's end reached within FOLLOW_START_SECONDS + length / (pace
 * speed). The start: the default database's walk_start clip stands 1 s
 * and reaches walking speed 2 s in (core/offline/procgen.c). The pace: the
 * planner may take walks slower than the median where they follow better
 * (Bandai's tenth percentile of edge speeds is 0.82 of its median, the
 * default database's slow walk 0.67), while standing still covers nothing.
 * Measured (20 s on a 10 m line, 30 s on a circle of radius 3 m): the
 * default database 10 m in 5.2 s from its idle node (2.4 m in 20 s without
 * the progress term), circle 1.4 m/s; Bandai 10 m in 8.0 s, circle 1.1 m/s. */
#define FOLLOW_START_SECONDS 2.0f
#define FOLLOW_MIN_PACE 0.5f
/* The default database's expected speed (its walk clip's, test_graph_character
 * checks anim_path_expected_speed gives it), for the tests over the wire,
 * which cannot ask for it. */
#define DEFAULT_DB_EXPECTED_SPEED 1.5f

#endif
