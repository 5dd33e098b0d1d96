/*
 * test_graph_path.c: path synthesis on motion graphs (graph_path.h), on the
 * procedural database and real mocap (Bandai Namco).
 *
 * The path's own geometry first: arc length, wrapping, projection with a
 * hint (the planner's invalid inputs are in test_motion_graph.c). Then the
 * branch and bound finds the walk of least error (against every walk,
 * enumerated), progress term and carried lag included, seeded or not; cut
 * short by its budget it answers no worse than the greedy walk or the
 * previous plan's walk.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "anim_error.h"
#include "graph/graph_character.h"
#include "graph/graph_path.h"
#include "graph/motion_graph.h"
#include "graph_fixture.h"

/* The Bandai Namco graph, built by the first test that needs it (graph_fixture.h). */
static anim_database_t *bandai;
static anim_motion_graph_t *graph;
static int bandai_graph(void) { return anim_test_bandai_graph(&bandai, &graph); }

/* A node of the plain forward walk, to start from. */
static int walk_node(void) { return anim_test_walk_node(graph, bandai); }

/* The path's own geometry: arc length, wrapping, projection with a hint. */
static void test_path_geometry(void **state) {
  if (!bandai_graph()) return;
  anim_path_planner_t p;
  assert_int_equal(anim_path_planner_init(&p, graph, bandai, NULL), 0);
  float square[] = {0, 0, 2, 0, 2, 2, 0, 2};
  anim_path_t path = {square, 4, 1};
  assert_int_equal(anim_path_planner_set_path(&p, &path), 0);
  assert_float_equal(p.length, 8.0f, 1e-6f);
  float x, z;
  anim_path_planner_point(&p, 3.0f, &x, &z);
  assert_float_equal(x, 2.0f, 1e-6f), assert_float_equal(z, 1.0f, 1e-6f);
  anim_path_planner_point(&p, 8.5f, &x, &z); /* wraps */
  assert_float_equal(x, 0.5f, 1e-6f), assert_float_equal(z, 0.0f, 1e-6f);
  float d;
  assert_float_equal(anim_path_planner_project(&p, 1.0f, -0.5f, 0.0f, -1.0f, &d), 1.0f, 1e-5f);
  assert_float_equal(d, 0.5f, 1e-6f);
  /* The centre is as near to every side: the hint picks the one followed. */
  assert_float_equal(anim_path_planner_project(&p, 1.0f, 1.0f, 5.0f, 0.5f, &d), 5.0f, 1e-5f);
  assert_float_equal(anim_path_planner_project(&p, 1.0f, 1.0f, 7.9f, 0.5f, &d), 7.4f, 1e-5f);
  path.closed = 0;
  assert_int_equal(anim_path_planner_set_path(&p, &path), 0);
  assert_float_equal(p.length, 6.0f, 1e-6f);
  anim_path_planner_point(&p, 9.0f, &x, &z); /* clamps */
  assert_float_equal(x, 0.0f, 1e-6f), assert_float_equal(z, 2.0f, 1e-6f);
  anim_path_planner_free(&p);
}

/* A walk being scored as graph_path.h says, frame by frame, independently
 * of the planner's search (only its geometry and settings are read). */
typedef struct {
  int node;
  anim_ground_map_t map;
  float s, error, x, z;
  int frames, done;
} scored_t;

/* The walk `from` after edge e (its frames to the horizon or the path's
 * end). s0: the plan's start on the path; rest: what is left of an open
 * path after it (INFINITY when closed). */
static scored_t play_edge(const anim_path_planner_t *p, float s0, float rest, scored_t from, int e) {
  const anim_motion_graph_t *g = p->graph;
  const anim_graph_edge_t *edge = &g->edges[e];
  scored_t w = from;
  if (edge->transition >= 0)
    w.map = anim_ground_map_jump(&from.map, p, g->nodes[from.node].frame, edge->first_frame - 1);
  w.node = edge->target;
  int played = edge->first_frame;
  for (int f = edge->first_frame; f <= g->nodes[edge->target].frame && !w.done; f++) {
    if (w.frames >= p->horizon_frames) {
      w.done = 1;
      break;
    }
    played = f;
    float rx, rz, tx, tz;
    anim_ground_map_apply(&w.map, p->db, f, &rx, &rz);
    w.s += hypotf(rx - w.x, rz - w.z), w.x = rx, w.z = rz;
    anim_path_planner_point(p, s0 + w.s, &tx, &tz);
    w.frames++;
    float behind = fminf(p->lag0 + p->speed * (float)w.frames / p->db->frame_rate, fmaxf(rest, p->lag0)) - w.s;
    /* Past an open path's end the path point stays at the end: the frames
     * count their distance from it (graph_path.h, "The end"). */
    /* Once the pacer stands at an open path's end, a walk short of it is
     * weighed as a distance (1, not w). */
    float pacer = p->lag0 + p->speed * (float)w.frames / p->db->frame_rate;
    float weight = !p->closed && p->lag0 <= 0.0f && pacer >= rest ? fmaxf(p->weight, p->options.progress) : p->weight;
    w.error += squaref(rx - tx) + squaref(rz - tz) + (behind > 0.0f ? weight * squaref(behind) : 0.0f);
  }
  w.done |= w.frames >= p->horizon_frames;
  /* Complete at the horizon: the planner's own cost-to-go (graph_path.h),
   * shared, not a copy. */
  if (w.done) w.error += anim_path_planner_cost_to_go(p, &w.map, played, w.node, s0, w.s);
  return w;
}

/* The walk from node placed by map at s0: edges[0..n) (while it is not
 * complete), then the greedy walk (each step the edge adding the least
 * error per frame it plays). Its error. */
static float walk_error(const anim_path_planner_t *p, int node, anim_ground_map_t map, float s0, const int *edges,
                        int n) {
  const anim_motion_graph_t *g = p->graph;
  float rest = p->closed ? INFINITY : p->length - s0;
  scored_t w = {node, map, 0.0f, 0.0f, 0.0f, 0.0f, 0, 0};
  anim_ground_map_apply(&map, p->db, g->nodes[node].frame, &w.x, &w.z);
  for (int i = 0; i < n && !w.done; i++) w = play_edge(p, s0, rest, w, edges[i]);
  while (!w.done) {
    scored_t best = w;
    float best_key = INFINITY;
    for (int i = 0; i < g->nodes[w.node].nedges; i++) {
      scored_t next = play_edge(p, s0, rest, w, g->nodes[w.node].first_edge + i);
      float key = (next.error - w.error) / (float)(next.frames > w.frames ? next.frames - w.frames : 1);
      if (key < best_key) best_key = key, best = next;
    }
    assert_true(isfinite(best_key));
    w = best;
  }
  return w.error;
}

/* Every walk from `node` to the horizon (or the path's end): the least error. */
typedef struct {
  const anim_path_planner_t *p;
  float s0, rest;
  float best;
  long walks;
} enumeration_t;

static void enumerate(enumeration_t *en, scored_t at) {
  const anim_motion_graph_t *g = en->p->graph;
  for (int i = 0; i < g->nodes[at.node].nedges; i++) {
    scored_t w = play_edge(en->p, en->s0, en->rest, at, g->nodes[at.node].first_edge + i);
    if (w.done) {
      en->walks++;
      if (w.error < en->best) en->best = w.error;
    } else {
      enumerate(en, w);
    }
  }
}

/* Plans made one after another from where each kept part ends, without
 * moving: the lag carried (graph_path.h, "Progress") grows by the pacer's
 * keep a plan, beyond ANIM_PATH_LAG_SLACK after 20 (at 0.1 s kept). */
#define CHAINED_PLANS 25
/* How much above the least error a plan merging near states may be (relative). */
#define MERGE_EXCESS 0.001f

/* Branch and bound with the progress term finds the least error of all
 * walks: its bound stays a lower bound (graph_path.h). A horizon of 1 s
 * keeps the enumeration small (14k walks); from every 9th node, on an open
 * line, a closed circle and a line shorter than the lag the chained plans
 * carry (the pacer then stops at the lag, not at the path's end; 0.5 m,
 * longer than ANIM_PATH_ARRIVE_DISTANCE, within which no lag is carried),
 * with and without the term. Past an open path's end every frame counts
 * its distance from the end, to the horizon (graph_path.h, "The end"). */
static void test_plan_is_least_error(void **state) {
  anim_database_t db;
  anim_motion_graph_t *g = anim_test_procgen_graph(&db);
  float line[] = {0.0f, 0.0f, 0.0f, 1.5f}, short_line[] = {0.0f, 0.0f, 0.5f, 0.0f};
  float circle[2 * ANIM_TEST_CIRCLE_SIDES];
  anim_path_t paths[3] = {{line, 2, 0}, anim_test_circle_path(circle, 2.0f), {short_line, 2, 0}};
  long walks = 0, merged_edges = 0, exact_edges = 0;
  int compared = 0, lagging = 0, carried = 0, beyond = 0;
  float worst_excess = 0.0f;
  for (int progress = 0; progress <= 1; progress++) {
    anim_path_options_t po;
    anim_path_options_default(&po);
    po.horizon = 1.0f, po.keep = 0.1f, po.max_expansions = 1000000, po.progress = (float)progress;
    /* p merges only the same states: exact; q merges near ones (the
     * default options.merge), its first plans compared with the least. */
    anim_path_options_t qo = po;
    po.merge = 0.0f;
    anim_path_planner_t p, q;
    assert_int_equal(anim_path_planner_init(&p, g, &db, &po), 0);
    assert_int_equal(anim_path_planner_init(&q, g, &db, &qo), 0);
    for (int k = 0; k < 3; k++) {
      assert_int_equal(anim_path_planner_set_path(&p, &paths[k]), 0);
      assert_int_equal(anim_path_planner_set_path(&q, &paths[k]), 0);
      for (int u = 0; u < g->nnodes; u += 9) {
        anim_ground_map_t map = {0.3f * (float)u, 0.0f, 0.0f};
        float s0 = paths[k].closed ? 0.5f : 0.0f;
        /* From u (a first plan, seeded by the walk of half the horizon),
         * then again and again from where each plan's kept part ends, on
         * the spot (seeded by the previous walk; the lag carried grows
         * past ANIM_PATH_LAG_SLACK): the first plan and the last compared. */
        for (int again = 0, node = u; again <= CHAINED_PLANS; again++) {
          assert_int_equal(anim_path_planner_plan(&p, node, map, s0), 0);
          assert_false(p.exhausted);
          if (again) assert_true(isfinite(p.warm_error));
          if (again && again < CHAINED_PLANS) {
            node = p.warm_node;
            continue;
          }
          enumeration_t en = {&p, s0, paths[k].closed ? INFINITY : p.length - s0, INFINITY, 0};
          scored_t at = {node, map, 0.0f, 0.0f, 0.0f, 0.0f, 0, 0};
          anim_ground_map_apply(&map, &db, g->nodes[node].frame, &at.x, &at.z);
          enumerate(&en, at);
          if (fabsf(p.plan_error - en.best) > 1e-5f * fmaxf(1.0f, en.best))
            fail_msg("node %d, %s, progress %d, plan %d: planned %.6f m^2, the least of %ld walks %.6f", node,
                     paths[k].closed ? "circle" : k ? "short line" : "line", progress, again, p.plan_error, en.walks,
                     en.best);
          assert_true(p.plan_progress >= 0.0f && p.plan_progress <= p.plan_error);
          if (!again) {
            assert_int_equal(anim_path_planner_plan(&q, node, map, s0), 0);
            float excess = (q.plan_error - en.best) / fmaxf(1e-3f, en.best);
            if (excess > MERGE_EXCESS)
              fail_msg("node %d, %s, progress %d, merged: planned %.6f m^2, the least %.6f", node,
                       paths[k].closed ? "circle" : k ? "short line" : "line", progress, q.plan_error, en.best);
            worst_excess = fmaxf(worst_excess, excess), merged_edges += q.expansions, exact_edges += p.expansions;
          }
          lagging += p.plan_progress > 0.0f, carried += p.lag0 > 0.0f, beyond += p.lag0 > en.rest;
          walks += en.walks, compared++;
          node = p.warm_node;
        }
      }
    }
    if (!progress) assert_int_equal(lagging, 0);
    anim_path_planner_free(&p), anim_path_planner_free(&q);
  }
  printf("%d plans, each the least error of its walks (%ld walks in all); %d with the walk behind the pacer, %d "
         "with a lag carried, %d of them past the path's end\n",
         compared, walks, lagging, carried, beyond);
  printf("first plans merging near states (options.merge %.2f): at worst %.3f%% above the least error, %ld edges "
         "tried where %ld exact\n",
         0.05, 100.0 * worst_excess, merged_edges, exact_edges);
  assert_true(lagging > 0 && carried > 0 && beyond > 0);
  anim_motion_graph_free(g);
  anim_database_free(&db);
}

/* A search cut short answers no worse than its seeds (graph_path.h, "Warm
 * start"): on the Bandai graph (its default) along a circle, with
 * a budget far too small to finish, plans made one after another from
 * where each kept part ends (the map carried along the kept edges, s0 the
 * nearest path point). Each plan's error is at most the previous plan's
 * walk beyond its kept part (greedily completed) and the greedy walk, both
 * scored independently (walk_error). */
#define SEED_BUDGET 400
#define SEED_PLANS 40
static void test_cut_short_is_no_worse(void **state) {
  if (!bandai_graph()) return;
  anim_path_options_t po;
  anim_path_options_default(&po);
  po.max_expansions = SEED_BUDGET;
  anim_path_planner_t p;
  assert_int_equal(anim_path_planner_init(&p, graph, bandai, &po), 0);
  float circle[2 * ANIM_TEST_CIRCLE_SIDES];
  anim_path_t path = anim_test_circle_path(circle, 3.0f);
  assert_int_equal(anim_path_planner_set_path(&p, &path), 0);
  int node = walk_node(), remainder[512], nremainder = 0, exhausted = 0, better = 0;
  anim_ground_map_t map = {(float)M_PI / 2, 0.0f, 0.0f};
  float x, z;
  anim_ground_map_apply(&map, bandai, graph->nodes[node].frame, &x, &z);
  map.x -= x, map.z -= z; /* the start node's root at the origin, facing along the circle */
  float s = 0.0f;
  for (int k = 0; k < SEED_PLANS; k++) {
    assert_int_equal(anim_path_planner_plan(&p, node, map, s), 0);
    assert_true(p.nplan > 0);
    exhausted += p.exhausted;
    float greedy = walk_error(&p, node, map, s, NULL, 0), tolerance = 1e-5f * fmaxf(1.0f, p.plan_error);
    if (p.plan_error > greedy + tolerance)
      fail_msg("plan %d: %.4f m^2, the greedy walk %.4f", k, p.plan_error, greedy);
    if (k > 0) {
      float old = walk_error(&p, node, map, s, remainder, nremainder);
      if (p.plan_error > old + tolerance)
        fail_msg("plan %d: %.4f m^2, the previous plan's walk beyond its kept part %.4f", k, p.plan_error, old);
      better += p.plan_error < fminf(old, greedy) - tolerance;
    }
    /* Play the kept part: the map after its jumps, where it ends. */
    for (int i = 0; i < p.nplan; i++) {
      const anim_graph_edge_t *e = &graph->edges[p.plan[i]];
      if (e->transition >= 0) map = anim_ground_map_jump(&map, &p, graph->nodes[node].frame, e->first_frame - 1);
      node = e->target;
    }
    assert_int_equal(node, p.warm_node);
    assert_true(p.nwarm <= (int)(sizeof remainder / sizeof remainder[0]));
    memcpy(remainder, p.warm, (size_t)p.nwarm * sizeof(int)), nremainder = p.nwarm;
    anim_ground_map_apply(&map, bandai, graph->nodes[node].frame, &x, &z);
    s = anim_path_planner_project(&p, x, z, s, ANIM_GRAPH_TRACK_WINDOW, NULL);
  }
  printf("%d plans of %d edges at most: %d cut short, %d better than both seeds\n", SEED_PLANS, SEED_BUDGET,
         exhausted, better);
  assert_true(exhausted > SEED_PLANS / 2); /* the budget is the point */
  anim_path_planner_free(&p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_path_geometry),
      cmocka_unit_test(test_plan_is_least_error),
      cmocka_unit_test(test_cut_short_is_no_worse),
  };
  return cmocka_run_group_tests(tests, NULL, anim_test_bandai_graph_teardown);
}
