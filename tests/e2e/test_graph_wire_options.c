/*
 * test_graph_wire_options.c: the motion graph's core options carried over
 * the wire by the real client library to the real server on its embedded
 * default database: the build's slide (GraphOptions.slide) and the
 * planner's refinements (PathOptions.disable_warm, disable_bound,
 * disable_memory).
 *
 * The graphs built over the wire are compared with the core's own builds of
 * the same procedural database in this process (node, edge and transition
 * counts; the slide the automatic choice resolved to); the planner's
 * switches by what the walks report (edges tried, path covered), and by
 * what graph characters created with them (anim_character_mode_t) report
 * in character_state as they follow a path. Invalid
 * options first: refused by the client library before sending (the
 * server's refusals of the raw fields are test_graph_service's).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>
#include "anim_client.h"
#include "anim_error.h"
#include "fixture.h"
#include "graph/motion_graph.h"
#include "procgen_db.h"

#define TIMEOUT_MS 60000
/* build_graph answers once the build is done: seconds under the sanitizers on a loaded machine. */
#define BUILD_TIMEOUT_MS 120000
/* The line along +X from the idle node facing +Z (graph_path.h, "Carried
 * lag"): its end is reached (measured 13.3 s; 8.6 s since the cost-to-go,
 * which alone starts it). The line behind, along -Z (docs/graph-start.md):
 * reached with the lag carried and the cost-to-go together; without the lag
 * carried the character stands (0 m in 20 s). */
#define SIDE_LENGTH 10.0f
#define SIDE_SECONDS 20.0f
/* query_graph ends an open path on arrival, within 0.3 m of its end
 * (ANIM_PATH_ARRIVE_DISTANCE): root-steered (issue 34) this line arrives at
 * 9.82 m of arc, 0.05 m from its end point, where unsteered it went past
 * 9.9 m and stood 0.23 m from it (animbench graph-steer). */
#define END_MARGIN 0.3f
#define NOT_STARTED 1.0f

static anim_test_fixture_t fx;
static anim_database_t db;

static int setup(void **state) {
  if (anim_test_procgen_load(&db)) return -1;
  return anim_test_fixture_start(&fx, "graph_wire_options", NULL, 0);
}

static int teardown(void **state) {
  anim_database_free(&db);
  return anim_test_fixture_stop(&fx);
}

/* Builds the default database's graph over the wire and waits for it. */
static anim_graph_description_t *build(int slide) {
  anim_graph_description_t *d = NULL;
  anim_graph_build_options_t o = {.slide = slide};
  assert_int_equal(anim_client_graph_build(fx.client, "default", &o, &d, BUILD_TIMEOUT_MS), 0);
  for (int i = 0; i < 600 && (d->status == ANIM_GRAPH_BUILDING || !d->ready); i++) {
    assert_int_not_equal(d->status, ANIM_GRAPH_FAILED);
    anim_graph_description_free(d);
    uint64_t rtt;
    anim_client_ping(fx.client, NULL, 0, &rtt, TIMEOUT_MS); /* a short pause */
    assert_int_equal(anim_client_graph_describe(fx.client, "default", 0, 0, &d, TIMEOUT_MS), 0);
  }
  if (d->status != ANIM_GRAPH_READY) fail_msg("the graph did not finish building: %s", d->error);
  return d;
}

/* ---- invalid options ---- */

static void test_invalid(void **state) {
  anim_graph_description_t *d = NULL;
  anim_graph_build_options_t o = {.slide = 3};
  assert_int_equal(anim_client_graph_build(fx.client, "default", &o, &d, TIMEOUT_MS), ANIM_EINVAL);
  assert_null(d);
  assert_non_null(strstr(anim_client_last_error(fx.client), "anim_client_graph_build"));
  o.slide = -1;
  assert_int_equal(anim_client_graph_build(fx.client, "default", &o, &d, TIMEOUT_MS), ANIM_EINVAL);
}

/* ---- slide: the graph the core builds with that option ---- */

static void test_slide(void **state) {
  static const char *const names[] = {"auto", "on", "off"};
  const int core_slide[] = {ANIM_GRAPH_SLIDE_AUTO, 1, 0};
  uint32_t nodes[3];
  for (int s = ANIM_SLIDE_AUTO; s <= ANIM_SLIDE_OFF; s++) {
    anim_graph_options_t go;
    anim_graph_options_default(&go);
    go.slide = core_slide[s];
    char err[256];
    anim_motion_graph_t *g = anim_motion_graph_build(&db, &go, err, sizeof err);
    if (!g) fail_msg("core build, slide %s: %s", names[s], err);
    anim_graph_description_t *d = build(s);
    printf("slide %s: over the wire %u nodes, %u edges, %u transitions, built with slide %s; the core %d, %d, %d, "
           "slide %d\n",
           names[s], d->nodes, d->edges, d->transitions, names[d->slide], g->nnodes, g->nedges, g->ntransitions,
           g->slide);
    assert_int_equal(d->nodes, g->nnodes);
    assert_int_equal(d->edges, g->nedges);
    assert_int_equal(d->transitions, g->ntransitions);
    /* As resolved: on or off, never automatic. */
    assert_int_equal(d->slide, g->slide ? ANIM_SLIDE_ON : ANIM_SLIDE_OFF);
    nodes[s] = d->nodes;
    anim_graph_description_free(d);
    anim_motion_graph_free(g);
  }
  /* The option made a difference (the procedural database slides by default). */
  assert_int_not_equal(nodes[ANIM_SLIDE_ON], nodes[ANIM_SLIDE_OFF]);
  assert_int_equal(nodes[ANIM_SLIDE_AUTO], nodes[ANIM_SLIDE_ON]);
}

/* ---- the planner's switches ---- */

static anim_graph_walk_t *walk_line(const anim_walk_options_t *options, float x, float z) {
  const float line[] = {0.0f, 0.0f, x, z};
  anim_graph_query_t q = {.points = line, .npoints = 2, .seconds = SIDE_SECONDS, .options = options};
  anim_graph_walk_t *w = NULL;
  assert_int_equal(anim_client_graph_query(fx.client, "default", &q, &w, TIMEOUT_MS), 0);
  return w;
}

static anim_graph_walk_t *walk_side(const anim_walk_options_t *options) {
  return walk_line(options, SIDE_LENGTH, 0.0f);
}

static void test_planner_switches(void **state) {
  anim_graph_description_free(build(ANIM_SLIDE_AUTO));
  const char *names[] = {"defaults", "disable_warm", "disable_bound", "disable_memory"};
  anim_walk_options_t options[4] = {{0}};
  options[1].disable_warm = 1, options[2].disable_bound = 1, options[3].disable_memory = 1;
  anim_graph_walk_t *w[4];
  for (int k = 0; k < 4; k++) {
    w[k] = walk_side(&options[k]);
    printf("%s: %.2f m of the %.0f m line in %.1f s, mean %.3f m from it; %u plans, %llu edges tried (%.0f a plan), "
           "%u cut short\n",
           names[k], w[k]->arc, SIDE_LENGTH, w[k]->seconds, w[k]->error_mean, w[k]->plans,
           (unsigned long long)w[k]->expansions, (double)w[k]->expansions / w[k]->plans, w[k]->plans_exhausted);
  }
  /* NULL options are the defaults. */
  anim_graph_walk_t *same = walk_side(NULL);
  assert_int_equal(same->expansions, w[0]->expansions);
  assert_int_equal(same->nsteps, w[0]->nsteps);
  anim_graph_walk_free(same);
  /* With every refinement the line is followed to its end, and without
   * the lag carried too (the cost-to-go starts it). */
  assert_true(w[0]->arc > SIDE_LENGTH - END_MARGIN);
  assert_true(w[3]->arc > SIDE_LENGTH - END_MARGIN);
  /* The line behind: followed to its end with the lag carried, never
   * started without. */
  anim_graph_walk_t *behind[2] = {walk_line(&options[0], 0.0f, -SIDE_LENGTH), walk_line(&options[3], 0.0f, -SIDE_LENGTH)};
  for (int k = 0; k < 2; k++)
    printf("line behind, %s: %.2f m of the %.0f m line in %.1f s, mean %.3f m from it; %u plans, %u cut short\n",
           names[3 * k], behind[k]->arc, SIDE_LENGTH, behind[k]->seconds, behind[k]->error_mean, behind[k]->plans,
           behind[k]->plans_exhausted);
  assert_true(behind[0]->arc > SIDE_LENGTH - END_MARGIN);
  assert_true(behind[1]->arc < NOT_STARTED);
  anim_graph_walk_free(behind[0]), anim_graph_walk_free(behind[1]);
  /* The seeds and the bound each save edges a plan (without the bound
   * some plans are cut short by the budget). */
  for (int k = 1; k <= 2; k++)
    if ((double)w[k]->expansions / w[k]->plans <= (double)w[0]->expansions / w[0]->plans)
      fail_msg("%s: %llu edges tried in %u plans, no more than with it (%llu in %u)", names[k],
               (unsigned long long)w[k]->expansions, w[k]->plans, (unsigned long long)w[0]->expansions,
               w[0]->plans);
  for (int k = 0; k < 4; k++) anim_graph_walk_free(w[k]);
}

/* ---- the switches carried to graph characters ---- */

/* Four graph characters on the default database, each created through the
 * client library with one of the planner's switches
 * (anim_character_mode_t.path_disable_*; the first with none), each given
 * a line in one set_paths and read by character_state. A switch the client
 * library did not send would leave its character planning as the first.
 *
 * Each wanders until its path comes, later on a loaded machine, so the
 * path's direction from the character's facing when it comes is not known.
 * Since the cost-to-go (graph_path.h) a character with the defaults starts
 * a path whatever its facing (docs/graph-start.md), so:
 *  1. the first three get the line on their left from where they stood
 *     when read (the design of the walks above) and each covers
 *     CHARACTER_ARC of it however late it came (set_paths held back 1, 2,
 *     3, 5, 8 and 12 s: each did). Their edges a plan are printed, not
 *     compared: the four wander with different seeds, so a path finds them
 *     in different states, and the order (measured at 2.6 m: 3525, 5013
 *     and 4102) was not kept when held back 1, 8 or 12 s, under ASan, or in
 *     make test-loaded (disable_bound 2348 against 2616). That the warm and
 *     bound switches do what they say over the wire is test_planner_switches'
 *     (query_graph, one state); here the memory switch shows the creation
 *     options reach a character;
 *  2. the fourth, without the lag carried, gets the line straight ahead of
 *     it (the cost-to-go alone starts a path up to 90 degrees off, not 135:
 *     it starts however it turned meanwhile, within a quarter turn) and
 *     covers CHARACTER_ARC too;
 *  3. once the first and the fourth have arrived at their lines' ends, and
 *     stand there facing along them, each gets its line reversed, behind
 *     it, whenever that comes: the first covers CHARACTER_ARC of it, the
 *     fourth never starts (as the walk on the line behind above). */
#define CHARACTER_ARC 2.0f
#define CHARACTER_WAIT_S 60

/* Reads the characters' states into st (freeing the old ones). */
static void read_states(const uint64_t *ids, anim_character_state_t **st, int n) {
  for (int k = 0; k < n; k++) {
    anim_character_state_free(st[k]);
    st[k] = NULL;
    assert_int_equal(anim_client_character_state(fx.client, ids[k], 0, &st[k], TIMEOUT_MS), 0);
  }
}

/* Waits (a bound on waiting, not a timing) until done(st) or
 * CHARACTER_WAIT_S; the seconds waited. */
static double wait_states(const uint64_t *ids, anim_character_state_t **st, int n,
                          int (*done)(anim_character_state_t *const *st)) {
  double waited = 0.0;
  do {
    struct timespec pause = {0, 250000000};
    nanosleep(&pause, NULL);
    waited += 0.25;
    read_states(ids, st, n);
  } while (!done(st) && waited < CHARACTER_WAIT_S);
  return waited;
}

static int all_covered(anim_character_state_t *const *st) {
  for (int k = 0; k < 4; k++)
    if (st[k]->path_arc < CHARACTER_ARC) return 0;
  return 1;
}
static int both_arrived(anim_character_state_t *const *st) { return st[0]->arrived && st[3]->arrived; }
static int first_covered(anim_character_state_t *const *st) { return st[0]->path_arc >= CHARACTER_ARC; }

static void test_character_switches(void **state) {
  anim_graph_description_free(build(ANIM_SLIDE_AUTO));
  const char *names[] = {"defaults", "path_disable_warm", "path_disable_bound", "path_disable_memory"};
  anim_character_mode_t modes[4];
  for (int k = 0; k < 4; k++) modes[k] = (anim_character_mode_t){.mode = ANIM_MODE_GRAPH};
  modes[1].path_disable_warm = 1, modes[2].path_disable_bound = 1, modes[3].path_disable_memory = 1;
  uint64_t ids[4];
  for (int k = 0; k < 4; k++) /* NULL placements: at the origin facing +Z, on the database's first frame */
    assert_int_equal(anim_client_characters_create_mode(fx.client, "default", &modes[k], NULL, NULL, 1, &ids[k],
                                                        TIMEOUT_MS), 0);
  /* 1 and 2: from where each stood when read, on its left or ahead. */
  anim_character_state_t *st[4] = {NULL};
  float lines[4][4];
  const float *points[4];
  read_states(ids, st, 4);
  for (int k = 0; k < 4; k++) {
    const float *p = st[k]->position, *q = st[k]->rotation; /* w x y z */
    float fx_ = 2.0f * (q[1] * q[3] + q[0] * q[2]), fz = 1.0f - 2.0f * (q[1] * q[1] + q[2] * q[2]);
    float n = hypotf(fx_, fz);
    fx_ /= n, fz /= n;
    lines[k][0] = p[0], lines[k][1] = p[2];
    if (k < 3) lines[k][2] = p[0] + SIDE_LENGTH * fz, lines[k][3] = p[2] - SIDE_LENGTH * fx_; /* left */
    else lines[k][2] = p[0] + SIDE_LENGTH * fx_, lines[k][3] = p[2] + SIDE_LENGTH * fz;        /* ahead */
    points[k] = lines[k];
  }
  const int npoints[4] = {2, 2, 2, 2}, closed[4] = {0, 0, 0, 0};
  assert_int_equal(anim_client_graph_paths(fx.client, ids, points, npoints, closed, 4, NULL, TIMEOUT_MS), 0);
  double waited = wait_states(ids, st, 4, all_covered);
  double per_plan[4];
  for (int k = 0; k < 4; k++) {
    assert_int_equal(st[k]->mode, ANIM_MODE_GRAPH);
    assert_string_equal(st[k]->follow, "path");
    assert_true(st[k]->plans > 0);
    per_plan[k] = (double)st[k]->expansions / (double)st[k]->plans;
    printf("graph character, %s: %.2f m of the %.0f m line %s after %.2f s; %llu plans, %llu edges tried (%.0f a "
           "plan)\n",
           names[k], st[k]->path_arc, SIDE_LENGTH, k < 3 ? "on its left" : "ahead", waited,
           (unsigned long long)st[k]->plans, (unsigned long long)st[k]->expansions, per_plan[k]);
  }
  for (int k = 0; k < 4; k++)
    if (st[k]->path_arc < CHARACTER_ARC)
      fail_msg("%s: %.2f m of the line in %d s, want %.1f m", names[k], st[k]->path_arc, CHARACTER_WAIT_S,
               CHARACTER_ARC);
  /* 3: arrived, standing at the end facing along the line; then the line
   * reversed, behind it. */
  uint64_t pair[2] = {ids[0], ids[3]};
  waited = wait_states(ids, st, 4, both_arrived);
  if (!both_arrived(st)) fail_msg("%s, %s: not both at their lines' ends in %d s", names[0], names[3], CHARACTER_WAIT_S);
  float back[2][4];
  const float *back_points[2];
  for (int i = 0; i < 2; i++) {
    const float *l = lines[i ? 3 : 0];
    back[i][0] = l[2], back[i][1] = l[3], back[i][2] = l[0], back[i][3] = l[1];
    back_points[i] = back[i];
  }
  assert_int_equal(anim_client_graph_paths(fx.client, pair, back_points, npoints, closed, 2, NULL, TIMEOUT_MS), 0);
  waited = wait_states(ids, st, 4, first_covered);
  for (int k = 0; k < 4; k += 3)
    printf("graph character, %s: %.2f m of its line reversed (behind it) after %.2f s\n", names[k], st[k]->path_arc,
           waited);
  if (st[0]->path_arc < CHARACTER_ARC)
    fail_msg("%s: %.2f m of the line behind it in %d s, want %.1f m", names[0], st[0]->path_arc, CHARACTER_WAIT_S,
             CHARACTER_ARC);
  if (st[3]->path_arc >= NOT_STARTED)
    fail_msg("%s: %.2f m of the line behind it: it started, as with the lag carried", names[3], st[3]->path_arc);
  for (int k = 0; k < 4; k++) anim_character_state_free(st[k]);
  assert_int_equal(anim_client_characters_destroy(fx.client, ids, 4, TIMEOUT_MS), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_invalid),
      cmocka_unit_test(test_slide),
      cmocka_unit_test(test_planner_switches),
      cmocka_unit_test(test_character_switches),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
