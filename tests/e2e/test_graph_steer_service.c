/*
 * test_graph_steer_service.c: root steering of graph characters (issue
 * 34; core/graph/graph_character.h, "Root steering") through the real
 * server: the warp fields set_character_params takes for a MODE_GRAPH
 * character and those it refuses, by name, nothing applied; what
 * character_state shows; and the path followed closer with steering than
 * without, two characters side by side on the same server.
 *
 * The server on an ephemeral loopback port with its default database
 * (idle, walks, walk_stop: a graph that can start and stop), the graph
 * built with build_graph's defaults, the real client library. The figures
 * on Bandai Namco are `animbench graph-steer`'s.
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
#include "fixture.h"
#include "server_proc.h"

#define TIMEOUT_MS 60000
/* build_graph answers once the build is done: seconds under the sanitizers on a loaded machine. */
#define BUILD_TIMEOUT_MS 120000
/* A 10 m line straight ahead from the idle: the walk reaches its end in
 * about 5.5 s (animbench graph-steer: 5.40 s steered, 5.85 without). */
#define LINE_LENGTH 10.0f
#define RUN_SECONDS 8.0
/* animbench graph-steer on this line: 0.027 m mean from it steered, 0.146
 * without. */
#define MAX_STEERED_MEAN 0.08f
#define MAX_STEERED_SHARE 0.5f /* of the unsteered mean */

static anim_test_fixture_t fx;

static int setup(void **state) {
  (void)state;
  if (anim_test_fixture_start(&fx, "graph_steer_service", NULL, 0)) return -1;
  anim_graph_description_t *g = NULL;
  int rc = anim_client_graph_build(fx.client, "default", NULL, &g, BUILD_TIMEOUT_MS);
  anim_graph_description_free(g);
  return rc;
}

static int teardown(void **state) {
  (void)state;
  return anim_test_fixture_stop(&fx);
}

/* A graph character at (x, 0) on the idle (frame 0), facing +Z; params NULL: defaults. */
static uint64_t create(float x, const anim_character_params_t *params) {
  anim_character_mode_t mode = {.mode = ANIM_MODE_GRAPH};
  anim_character_placement_t at = {x, 0.0f, 0.0f, 0};
  uint64_t id = 0;
  assert_int_equal(anim_client_characters_create_mode(fx.client, "default", &mode, params, &at, 1, &id, TIMEOUT_MS),
                   0);
  return id;
}

static anim_character_state_t *state_of(uint64_t id) {
  anim_character_state_t *s = NULL;
  assert_int_equal(anim_client_character_state(fx.client, id, 0, &s, TIMEOUT_MS), 0);
  return s;
}

static void refused(uint64_t id, const anim_character_params_t *p, int code, const char *field) {
  assert_int_equal(anim_client_character_params_set(fx.client, id, p, NULL, TIMEOUT_MS), code);
  const char *message = anim_client_last_error(fx.client);
  if (!strstr(message, field)) fail_msg("error \"%s\" does not name %s", message, field);
}

static void test_invalid_params(void **state) {
  (void)state;
  uint64_t id = create(0.0f, NULL);
  anim_character_params_t p;
  /* A field a graph character does not use, another warp turned on, a bound out of range. */
  anim_character_params_init(&p);
  p.transition_cost = 0.05f, p.no_root_steering = 1;
  refused(id, &p, ANIM_EUNSUPPORTED, "transition_cost");
  anim_character_params_init(&p);
  p.no_play_rate = ANIM_PARAM_ON;
  refused(id, &p, ANIM_EUNSUPPORTED, "no_play_rate");
  anim_character_params_init(&p);
  p.no_stride_warp = ANIM_PARAM_ON;
  refused(id, &p, ANIM_EUNSUPPORTED, "no_stride_warp");
  anim_character_params_init(&p);
  p.root_steering_max = 1.5f, p.no_root_steering = 1;
  refused(id, &p, ANIM_EINVAL, "root_steering_max");
  /* Nothing applied in part: steering still on at its default bound. */
  anim_character_state_t *s = state_of(id);
  assert_int_equal(s->params.no_root_steering, 0);
  assert_float_equal(s->params.root_steering_max, 0.15f, 1e-6f);
  /* The warps it does not apply show off. */
  assert_int_equal(s->params.no_play_rate, 1);
  assert_int_equal(s->params.no_stand_warp, 1);
  assert_int_equal(s->params.no_orientation_warp, 1);
  assert_int_equal(s->params.no_stride_warp, 1);
  anim_character_state_free(s);
  /* What it takes: steering off and its bound, the jumps' half-life; answered with them. */
  anim_character_params_init(&p);
  p.no_root_steering = 1, p.root_steering_max = 0.1f, p.inertialize_halflife = 0.15f, p.no_play_rate = 1;
  anim_character_params_t now;
  assert_int_equal(anim_client_character_params_set(fx.client, id, &p, &now, TIMEOUT_MS), 0);
  assert_int_equal(now.no_root_steering, 1);
  assert_float_equal(now.root_steering_max, 0.1f, 1e-6f);
  assert_float_equal(now.inertialize_halflife, 0.15f, 1e-6f);
  s = state_of(id);
  assert_int_equal(s->params.no_root_steering, 1);
  assert_float_equal(s->params.inertialize_halflife, 0.15f, 1e-6f);
  anim_character_state_free(s);
  /* no_root_steering given false turns it back on. */
  anim_character_params_init(&p);
  p.no_root_steering = ANIM_PARAM_ON;
  assert_int_equal(anim_client_character_params_set(fx.client, id, &p, &now, TIMEOUT_MS), 0);
  assert_int_equal(now.no_root_steering, 0);
  assert_int_equal(anim_client_characters_destroy(fx.client, &id, 1, TIMEOUT_MS), 0);
}

/* Distance from (x, z) to the segment x = x0, z in [0, LINE_LENGTH]. */
static float line_distance(float x0, float x, float z) {
  float dz = z < 0.0f ? -z : z > LINE_LENGTH ? z - LINE_LENGTH : 0.0f;
  return hypotf(x - x0, dz);
}

static void test_steered_closer(void **state) {
  (void)state;
  anim_character_params_t off;
  anim_character_params_init(&off);
  off.no_root_steering = 1;
  /* Side by side, 5 m apart: each follows its own line straight ahead. */
  const float x0[2] = {0.0f, 5.0f};
  uint64_t ids[2] = {create(x0[0], NULL), create(x0[1], &off)};
  float line0[4] = {x0[0], 0.0f, x0[0], LINE_LENGTH}, line1[4] = {x0[1], 0.0f, x0[1], LINE_LENGTH};
  const float *points[2] = {line0, line1};
  int npoints[2] = {2, 2}, closed[2] = {0, 0};
  assert_int_equal(anim_client_graph_paths(fx.client, ids, points, npoints, closed, 2, NULL, TIMEOUT_MS), 0);
  double mean[2] = {0, 0}, worst[2] = {0, 0}, steer_seen[2] = {0, 0};
  float end[2] = {0, 0};
  int samples = 0, feet_seen = 0;
  const struct timespec tenth = {0, 100000000};
  for (double t = 0.0; t < RUN_SECONDS; t += 0.1) {
    nanosleep(&tenth, NULL);
    for (int k = 0; k < 2; k++) {
      anim_character_state_t *s = state_of(ids[k]);
      float d = line_distance(x0[k], s->position[0], s->position[2]);
      mean[k] += d, worst[k] = fmax(worst[k], d);
      steer_seen[k] = fmax(steer_seen[k], s->root_steering);
      end[k] = hypotf(s->position[0] - x0[k], s->position[2] - LINE_LENGTH);
      if (k == 1) assert_int_equal(s->params.no_root_steering, 1);
      if (k == 0 && s->nfeet > 0) feet_seen = 1; /* foot locking holds the steered one's feet */
      if (k == 1) assert_int_equal(s->nfeet, 0);
      anim_character_state_free(s);
    }
    samples++;
  }
  for (int k = 0; k < 2; k++) {
    mean[k] /= samples;
    printf("graph character on a %.0f m line, steering %s: %.3f m mean, %.3f m worst from it, %.3f m from its end "
           "after %.0f s; largest correction %.3f m/s\n",
           (double)LINE_LENGTH, k ? "off" : "on", mean[k], worst[k], (double)end[k], RUN_SECONDS, steer_seen[k]);
  }
  if (!(mean[0] < MAX_STEERED_MEAN && mean[0] < MAX_STEERED_SHARE * mean[1]))
    fail_msg("steered %.3f m from the line on average, unsteered %.3f m: want under %.2f m and %.0f%% of it", mean[0],
             mean[1], (double)MAX_STEERED_MEAN, 100.0 * MAX_STEERED_SHARE);
  /* Steering off corrects nothing; on, within its bound (15% of a walk, at most 0.25 m/s). */
  assert_true(steer_seen[1] == 0.0);
  assert_true(steer_seen[0] > 0.0 && steer_seen[0] <= 0.25 + 1e-4);
  assert_true(end[0] <= end[1] + 0.05f); /* and ends no further from the end */
  assert_true(feet_seen);
  assert_int_equal(anim_client_characters_destroy(fx.client, ids, 2, TIMEOUT_MS), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_invalid_params),
      cmocka_unit_test(test_steered_closer),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
