/*
 * graph_fixture.h: what the motion graph's tests share (test_motion_graph,
 * test_graph_path, test_graph_character): the Bandai Namco graph built once
 * per test program, the procedural database's graph, a circle path and the
 * nodes the tests start from.
 */
#ifndef ANIM_TEST_GRAPH_FIXTURE_H
#define ANIM_TEST_GRAPH_FIXTURE_H

#include "graph/graph_path.h"
#include "graph/motion_graph.h"

/* The Bandai Namco database and its graph (default options), one per test
 * program: built by the first call, which sets *out_db and *out_graph
 * (later calls set them at once). 1, or 0 after the skip (or, under CI,
 * failure) of anim_test_bandai_database; a build that fails fails the
 * running test. The program's group teardown frees them:
 * cmocka_run_group_tests(tests, NULL, anim_test_bandai_graph_teardown). */
int anim_test_bandai_graph(anim_database_t **out_db, anim_motion_graph_t **out_graph);
int anim_test_bandai_graph_teardown(void **state);

/* The procedural database into *out_db and its graph (default options);
 * fails the running test when either cannot be built. The caller frees
 * both. */
anim_motion_graph_t *anim_test_procgen_graph(anim_database_t *out_db);

/* The first node of g in the range named `range`, or -1. */
int anim_test_node_in_range(const anim_motion_graph_t *g, const anim_database_t *db, const char *range);

/* A node of the Bandai graph's plain forward walk (2 s into
 * dataset-2_walk_normal_001), to start from; 0 when there is none. */
int anim_test_walk_node(const anim_motion_graph_t *g, const anim_database_t *db);

/* A closed circle through the origin, centre (0, radius): it sets off
 * along +X and turns right (toward +Z). out_points holds
 * 2 * ANIM_TEST_CIRCLE_SIDES floats, which the path points into. */
enum { ANIM_TEST_CIRCLE_SIDES = 64 };
anim_path_t anim_test_circle_path(float *out_points, float radius);

#endif
