/*
 * graph_fixture.c: the motion graph tests' shared set-up (graph_fixture.h).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>
#include "graph_fixture.h"
#include "procgen_db.h"
#include "shared_data.h"

/* The program's Bandai graph (graph_fixture.h): a test program is one process. */
static struct {
  anim_database_t db;
  int have_db;
  anim_motion_graph_t *graph;
} bandai;

int anim_test_bandai_graph(anim_database_t **out_db, anim_motion_graph_t **out_graph) {
  if (!bandai.graph) {
    if (!bandai.have_db) {
      if (!anim_test_bandai_database(&bandai.db)) return 0;
      bandai.have_db = 1;
    }
    char err[256];
    bandai.graph = anim_motion_graph_build(&bandai.db, NULL, err, sizeof err);
    if (!bandai.graph) fail_msg("graph: %s", err);
  }
  *out_db = &bandai.db, *out_graph = bandai.graph;
  return 1;
}

int anim_test_bandai_graph_teardown(void **state) {
  anim_motion_graph_free(bandai.graph);
  if (bandai.have_db) anim_database_free(&bandai.db);
  memset(&bandai, 0, sizeof bandai);
  return 0;
}

anim_motion_graph_t *anim_test_procgen_graph(anim_database_t *out_db) {
  char err[256];
  anim_test_procgen(out_db);
  anim_motion_graph_t *g = anim_motion_graph_build(out_db, NULL, err, sizeof err);
  if (!g) fail_msg("graph of the procedural database: %s", err);
  return g;
}

int anim_test_node_in_range(const anim_motion_graph_t *g, const anim_database_t *db, const char *range) {
  for (int u = 0; u < g->nnodes; u++)
    if (strcmp(db->ranges[g->nodes[u].range].name, range) == 0) return u;
  return -1;
}

int anim_test_walk_node(const anim_motion_graph_t *g, const anim_database_t *db) {
  for (int u = 0; u < g->nnodes; u++)
    if (strcmp(db->ranges[g->nodes[u].range].name, "dataset-2_walk_normal_001") == 0 &&
        g->nodes[u].frame > db->ranges[g->nodes[u].range].start + 120)
      return u;
  return 0;
}

anim_path_t anim_test_circle_path(float *out_points, float radius) {
  for (int i = 0; i < ANIM_TEST_CIRCLE_SIDES; i++) {
    float a = 2.0f * (float)M_PI * (float)i / ANIM_TEST_CIRCLE_SIDES;
    out_points[2 * i] = radius * sinf(a), out_points[2 * i + 1] = radius - radius * cosf(a);
  }
  return (anim_path_t){out_points, ANIM_TEST_CIRCLE_SIDES, 1};
}
