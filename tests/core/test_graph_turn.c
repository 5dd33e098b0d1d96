/*
 * test_graph_turn.c: the graph's turn rate, facing and time to walk
 * (graph_turn.h), and the closed form the planner's cost-to-go integrates
 * (graph_path.h, "Cost-to-go").
 *
 * Invalid inputs first; then the closed form against a fine numerical sum
 * (a lag that starts ahead, behind, past its cap; a cap that is infinite),
 * and against the per-frame sum the planner's frames would add; then the
 * measures on the procedural database, whose clips say what they must be
 * (procgen.c: the sharp walk turns at 90 deg/s, the walk start stands a
 * second and reaches half the walk's speed at 1.5 s of its clip), and on Bandai Namco
 * (printed: what the planner charges on captured motion).
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
#include "graph/graph_path.h"
#include "graph/graph_turn.h"
#include "graph/motion_graph.h"
#include "graph_fixture.h"

static anim_database_t *bandai;
static anim_motion_graph_t *graph;

static void test_invalid(void **state) {
  anim_database_t db;
  anim_motion_graph_t *g = anim_test_procgen_graph(&db);
  anim_graph_turn_t t;
  assert_int_equal(anim_graph_turn_measure(&t, NULL, &db, 1.0f), ANIM_EINVAL);
  assert_int_equal(anim_graph_turn_measure(&t, g, NULL, 1.0f), ANIM_EINVAL);
  assert_int_equal(anim_graph_turn_measure(&t, g, &db, 0.0f), ANIM_EINVAL);
  assert_int_equal(anim_graph_turn_measure(&t, g, &db, NAN), ANIM_EINVAL);
  anim_database_t other = db;
  other.version ^= 1;
  assert_int_equal(anim_graph_turn_measure(&t, g, &other, 1.0f), ANIM_EINVAL);
  assert_null(t.to_walk);
  anim_graph_turn_free(&t); /* after a failure: harmless */
  anim_motion_graph_free(g);
  anim_database_free(&db);
}

/* The integral by the midpoint rule, n steps. */
static double ramp_numeric(double a, double v, double cap, double T, int n) {
  double sum = 0.0, h = T / n;
  for (int i = 0; i < n; i++) {
    double l = a + v * (i + 0.5) * h;
    l = l < 0.0 ? 0.0 : l > cap ? cap : l;
    sum += l * l * h;
  }
  return sum;
}

static void test_ramp_closed_form(void **state) {
  /* a, v, cap, T: behind and growing, ahead first, capped within T, capped
   * from the start, no cap (a closed path), no pace, nothing to charge. */
  const double cases[][4] = {{3.0, 1.5, INFINITY, 2.0}, {-1.0, 1.5, INFINITY, 3.0}, {1.0, 1.5, 2.5, 3.0},
                             {4.0, 1.5, 2.5, 1.0},      {-4.0, 1.5, 10.0, 2.0},     {2.0, 0.0, 5.0, 1.5},
                             {2.0, 1.5, 0.0, 1.5},      {2.0, 1.5, 5.0, 0.0},       {0.3, 1.15, 12.0, 3.7}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    double a = cases[k][0], v = cases[k][1], cap = cases[k][2], T = cases[k][3];
    double closed = anim_lag_ramp_integral(a, v, cap, T), numeric = ramp_numeric(a, v, cap, T, 200000);
    if (fabs(closed - numeric) > 1e-6 * fmax(1.0, numeric))
      fail_msg("a %g, v %g, cap %g, T %g: closed form %.9f, numerically %.9f", a, v, cap, T, closed, numeric);
    assert_true(closed >= 0.0);
  }
  /* Times the frame rate it is what frames t = k / rate, k = 1..T rate,
   * would add one by one (within a frame's worth: the sum is the integral's
   * right Riemann sum). */
  double a = 3.0, v = 1.5, T = 2.0, rate = 60.0, frames = 0.0;
  for (int k = 1; k <= (int)(T * rate); k++) frames += (a + v * k / rate) * (a + v * k / rate);
  double closed = rate * anim_lag_ramp_integral(a, v, INFINITY, T);
  printf("lag 3 m growing at 1.5 m/s for 2 s: %.1f m^2 frame by frame, %.1f m^2 in closed form\n", frames, closed);
  assert_true(fabs(frames - closed) <= (a + v * T) * (a + v * T) * 1.0);
}

/* The procedural database: its clips (procgen.c) fix the measures. */
static void test_measure_procgen(void **state) {
  anim_database_t db;
  anim_motion_graph_t *g = anim_test_procgen_graph(&db);
  anim_path_planner_t p;
  assert_int_equal(anim_path_planner_init(&p, g, &db, NULL), 0);
  const anim_graph_turn_t *t = &p.turn;
  int idle = anim_test_node_in_range(g, &db, "idle"), walk = anim_test_node_in_range(g, &db, "walk");
  assert_true(idle >= 0 && walk >= 0);
  printf("procedural database: turn rate %.1f deg/s, facing %+.3f rad, walking from %.2f m/s, to walk from the idle "
         "%.2f s, from the walk %.2f s\n",
         t->turn_rate * 180.0 / M_PI, t->facing, t->walk_speed, t->to_walk[idle], t->to_walk[walk]);
  /* The sharp walk turns: 90 deg/s, and the root's yaw sways with the
   * gait (measured 98.8 deg/s). */
  assert_true(t->turn_rate > (float)M_PI / 2 && t->turn_rate < 1.15f * (float)M_PI / 2);
  assert_float_equal(t->facing, 0.0f, 0.02f);
  assert_float_equal(t->walk_speed, 0.5f * p.speed, 1e-6f);
  /* From the idle loop: into the walk start, which stands 1 s and reaches
   * half of 1.5 m/s at 1.5 s of its clip; the graph enters it part way
   * through its standing (measured 0.72 s from the idle node). */
  assert_true(t->to_walk[idle] > 0.3f && t->to_walk[idle] < 1.5f);
  assert_true(t->to_walk[walk] < 0.1f);
  anim_path_planner_free(&p);
  anim_motion_graph_free(g);
  anim_database_free(&db);
}

static void test_measure_bandai(void **state) {
  if (!anim_test_bandai_graph(&bandai, &graph)) return;
  anim_path_planner_t p;
  assert_int_equal(anim_path_planner_init(&p, graph, bandai, NULL), 0);
  const anim_graph_turn_t *t = &p.turn;
  float most = 0.0f, sum = 0.0f;
  for (int u = 0; u < graph->nnodes; u++) most = fmaxf(most, t->to_walk[u]), sum += t->to_walk[u];
  printf("Bandai Namco: turn rate %.1f deg/s, facing %+.3f rad, walking from %.2f m/s, to walk %.2f s at most, "
         "%.2f s mean over %d nodes\n",
         t->turn_rate * 180.0 / M_PI, t->facing, t->walk_speed, most, sum / (float)graph->nnodes, graph->nnodes);
  assert_true(t->turn_rate > 0.0f && isfinite(t->turn_rate));
  anim_path_planner_free(&p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_invalid),
      cmocka_unit_test(test_ramp_closed_form),
      cmocka_unit_test(test_measure_procgen),
      cmocka_unit_test(test_measure_bandai),
  };
  return cmocka_run_group_tests(tests, NULL, anim_test_bandai_graph_teardown);
}
