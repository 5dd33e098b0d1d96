/*
 * test_warp_service.c: animation warping's parameters through the real
 * server (issue 34): the ControllerParams fields checked by name before
 * anything is created, each warp on by default and off when asked, and
 * what each does visible in character_state (play_rate, warp_angle).
 *
 * The server on an ephemeral loopback port with its default database
 * (walks at 1.0 and 1.5 m/s, runs at 2.5 and 3.5), the real client
 * library. The maths and the targets on real mocap are tests/core/
 * test_warp.c's.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "anim_client.h"
#include "fixture.h"
#include "server_proc.h"

#define TIMEOUT_MS 10000
/* Seconds of server ticks (60 Hz) before the state is read: the walk
 * found and its rate settled (a 0.1 s half-life), the root turned. */
#define SETTLE_SECONDS 3.0f

static anim_test_fixture_t fx;

static int setup(void **state) {
  (void)state;
  return anim_test_fixture_start(&fx, "warp_service", NULL, 0);
}

static int teardown(void **state) {
  (void)state;
  return anim_test_fixture_stop(&fx);
}

static void test_invalid_params(void **state) {
  (void)state;
  anim_character_params_t p;
  uint64_t id = 0;
  const struct {
    float rate_min, rate_max, orient_max;
    const char *field;
  } bad[] = {
      {1.5f, 0.0f, 0.0f, "play_rate_min"}, {-0.5f, 0.0f, 0.0f, "play_rate_min"},
      {0.0f, 0.9f, 0.0f, "play_rate_max"}, {0.0f, 5.0f, 0.0f, "play_rate_max"},
      {0.0f, 0.0f, -1.0f, "orientation_warp_max"}, {0.0f, 0.0f, 4.0f, "orientation_warp_max"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    anim_character_params_init(&p);
    p.play_rate_min = bad[i].rate_min, p.play_rate_max = bad[i].rate_max, p.orientation_warp_max = bad[i].orient_max;
    assert_int_equal(anim_client_characters_create(fx.client, "default", &p, NULL, 1, &id, TIMEOUT_MS), ANIM_EINVAL);
    const char *message = anim_client_last_error(fx.client);
    if (!strstr(message, bad[i].field)) fail_msg("error \"%s\" does not name %s", message, bad[i].field);
  }
  anim_character_params_init(&p);
  p.play_rate_max = NAN;
  assert_int_equal(anim_client_characters_create(fx.client, "default", &p, NULL, 1, &id, TIMEOUT_MS), ANIM_ENONFINITE);
}

/* Two characters side by side, one with params a and one with b, both
 * asked for velocity (vx, vz) facing +Z; their states after SETTLE_SECONDS. */
static void run_pair(const anim_character_params_t *a, const anim_character_params_t *b, float vx, float vz,
                     anim_character_state_t **out_a, anim_character_state_t **out_b) {
  uint64_t ids[2];
  anim_character_placement_t place[2] = {{-3.0f, 0.0f, 0.0f, -1}, {3.0f, 0.0f, 0.0f, -1}};
  assert_int_equal(anim_client_characters_create(fx.client, "default", a, &place[0], 1, &ids[0], TIMEOUT_MS), 0);
  assert_int_equal(anim_client_characters_create(fx.client, "default", b, &place[1], 1, &ids[1], TIMEOUT_MS), 0);
  anim_character_input_t in[2];
  anim_character_input_velocity(&in[0], vx, vz, 0.0f);
  in[1] = in[0];
  assert_int_equal(anim_client_characters_set_input(fx.client, ids, in, 2, NULL, TIMEOUT_MS), 0);
  usleep((useconds_t)(SETTLE_SECONDS * 1e6f));
  assert_int_equal(anim_client_character_state(fx.client, ids[0], 0, out_a, TIMEOUT_MS), 0);
  assert_int_equal(anim_client_character_state(fx.client, ids[1], 0, out_b, TIMEOUT_MS), 0);
  assert_int_equal(anim_client_characters_destroy(fx.client, ids, 2, TIMEOUT_MS), 0);
}

/* A walk asked at 1.25 m/s, between the database's walks: played at a
 * rate off 1 by default, at 1 with no_play_rate. */
static void test_play_rate(void **state) {
  (void)state;
  anim_character_params_t on, off;
  anim_character_params_init(&on);
  off = on, off.no_play_rate = 1;
  anim_character_state_t *a, *b;
  run_pair(&on, &off, 0.0f, 1.25f, &a, &b);
  printf("asked 1.25 m/s: play rate %.3f (%.3f with no_play_rate)\n", (double)a->play_rate, (double)b->play_rate);
  assert_true(fabsf(a->play_rate - 1.0f) > 0.05f && a->play_rate >= 0.6f - 1e-4f && a->play_rate <= 1.15f + 1e-4f);
  assert_float_equal(b->play_rate, 1.0f, 1e-6f);
  assert_int_equal(a->warp_held, 0);
  /* character_state's params say which warps are on, and their bounds. */
  assert_int_equal(a->params.no_play_rate, 0), assert_int_equal(b->params.no_play_rate, 1);
  assert_float_equal(a->params.play_rate_min, 0.6f, 1e-6f);
  assert_float_equal(a->params.play_rate_max, 1.15f, 1e-6f);
  anim_character_state_free(a), anim_character_state_free(b);
}

/* A walk asked at 0.45 m/s, slower than the database's slowest walk (1.0
 * m/s) at the slowest rate (0.6): the stride shortened by default, the
 * data's with no_stride_warp; a bad stride bound named. */
static void test_stride(void **state) {
  (void)state;
  anim_character_params_t on, off;
  anim_character_params_init(&on);
  off = on, off.no_stride_warp = 1;
  anim_character_state_t *a, *b;
  run_pair(&on, &off, 0.0f, 0.45f, &a, &b);
  printf("asked 0.45 m/s: stride %.3f at rate %.3f (%.3f with no_stride_warp)\n", (double)a->stride_scale,
         (double)a->play_rate, (double)b->stride_scale);
  assert_true(a->stride_scale < 0.95f && a->stride_scale >= 0.65f - 1e-4f);
  assert_float_equal(b->stride_scale, 1.0f, 1e-6f);
  assert_int_equal(a->params.no_stride_warp, 0), assert_int_equal(b->params.no_stride_warp, 1);
  assert_float_equal(a->params.stride_scale_min, 0.65f, 1e-6f);
  assert_float_equal(a->params.stride_scale_max, 1.2f, 1e-6f);
  /* Root steering is on by default and reported, off when asked. */
  assert_int_equal(a->params.no_root_steering, 0);
  assert_float_equal(a->params.root_steering_max, 0.15f, 1e-6f);
  assert_true(a->root_steering >= 0.0f && a->root_steering <= 0.15f * 0.6f + 1e-3f);
  anim_character_state_free(a), anim_character_state_free(b);
  uint64_t id;
  anim_character_params_init(&on);
  on.root_steering_max = 1.5f;
  assert_int_equal(anim_client_characters_create(fx.client, "default", &on, NULL, 1, &id, TIMEOUT_MS), ANIM_EINVAL);
  if (!strstr(anim_client_last_error(fx.client), "root_steering_max"))
    fail_msg("error \"%s\" does not name root_steering_max", anim_client_last_error(fx.client));
  anim_character_params_init(&on);
  on.stride_scale_max = 2.5f;
  assert_int_equal(anim_client_characters_create(fx.client, "default", &on, NULL, 1, &id, TIMEOUT_MS), ANIM_EINVAL);
  if (!strstr(anim_client_last_error(fx.client), "stride_scale_max"))
    fail_msg("error \"%s\" does not name stride_scale_max", anim_client_last_error(fx.client));
}

/* Sideways while facing +Z: the upper body turned back by about the right
 * angle by default, not at all with no_orientation_warp. */
static void test_orientation_warp(void **state) {
  (void)state;
  anim_character_params_t on, off;
  anim_character_params_init(&on);
  off = on, off.no_orientation_warp = 1;
  anim_character_state_t *a, *b;
  run_pair(&on, &off, 1.2f, 0.0f, &a, &b);
  printf("sideways: warp angle %.2f rad (%.2f with no_orientation_warp)\n", (double)a->warp_angle,
         (double)b->warp_angle);
  assert_true(fabsf(a->warp_angle) > 1.0f && fabsf(a->warp_angle) < 1.7f);
  assert_float_equal(b->warp_angle, 0.0f, 1e-6f);
  anim_character_state_free(a), anim_character_state_free(b);
}

/* set_character_params: a warp flag given changes it; a call that leaves
 * the flags out (here one changing the transition cost) keeps them; a
 * flag given false (ANIM_PARAM_ON) turns the warp back on; a bad bound
 * among good flags applies nothing. Before the flags were optional a call
 * that left them out could not be told from one turning every warp on,
 * and set_character_params dropped them: no_play_rate never reached the
 * character. */
static void test_set_params_keeps_warps(void **state) {
  (void)state;
  anim_character_params_t p, now;
  uint64_t id = 0;
  anim_character_params_init(&p);
  assert_int_equal(anim_client_characters_create(fx.client, "default", &p, NULL, 1, &id, TIMEOUT_MS), 0);
  anim_character_input_t in;
  anim_character_input_velocity(&in, 0.0f, 1.25f, 0.0f);
  assert_int_equal(anim_client_characters_set_input(fx.client, &id, &in, 1, NULL, TIMEOUT_MS), 0);
  /* Off: the flags given. */
  anim_character_params_init(&p);
  p.no_play_rate = 1, p.no_orientation_warp = 1;
  assert_int_equal(anim_client_character_params_set(fx.client, id, &p, &now, TIMEOUT_MS), 0);
  assert_int_equal(now.no_play_rate, 1), assert_int_equal(now.no_orientation_warp, 1);
  assert_int_equal(now.no_stand_warp, 0);
  /* Left out: kept, while another field changes. */
  anim_character_params_init(&p);
  p.transition_cost = 0.02f;
  assert_int_equal(anim_client_character_params_set(fx.client, id, &p, &now, TIMEOUT_MS), 0);
  assert_float_equal(now.transition_cost, 0.02f, 1e-6f);
  assert_int_equal(now.no_play_rate, 1), assert_int_equal(now.no_orientation_warp, 1);
  usleep((useconds_t)(SETTLE_SECONDS * 1e6f));
  anim_character_state_t *st;
  assert_int_equal(anim_client_character_state(fx.client, id, 0, &st, TIMEOUT_MS), 0);
  printf("play rate off by set_character_params: %.3f at 1.25 m/s\n", (double)st->play_rate);
  assert_int_equal(st->params.no_play_rate, 1);
  assert_float_equal(st->play_rate, 1.0f, 1e-6f); /* the character itself plays unwarped */
  anim_character_state_free(st);
  /* All or nothing: a bad bound beside a flag applies neither. */
  anim_character_params_init(&p);
  p.no_play_rate = ANIM_PARAM_ON, p.play_rate_max = 9.0f;
  assert_int_equal(anim_client_character_params_set(fx.client, id, &p, &now, TIMEOUT_MS), ANIM_EINVAL);
  if (!strstr(anim_client_last_error(fx.client), "play_rate_max"))
    fail_msg("error \"%s\" does not name play_rate_max", anim_client_last_error(fx.client));
  assert_int_equal(anim_client_character_state(fx.client, id, 0, &st, TIMEOUT_MS), 0);
  assert_int_equal(st->params.no_play_rate, 1);
  anim_character_state_free(st);
  /* Given false: on again, the play rate off 1 again at 1.25 m/s. */
  anim_character_params_init(&p);
  p.no_play_rate = ANIM_PARAM_ON;
  assert_int_equal(anim_client_character_params_set(fx.client, id, &p, &now, TIMEOUT_MS), 0);
  assert_int_equal(now.no_play_rate, 0), assert_int_equal(now.no_orientation_warp, 1);
  usleep((useconds_t)(SETTLE_SECONDS * 1e6f));
  assert_int_equal(anim_client_character_state(fx.client, id, 0, &st, TIMEOUT_MS), 0);
  printf("play rate on again: %.3f\n", (double)st->play_rate);
  assert_true(fabsf(st->play_rate - 1.0f) > 0.05f);
  anim_character_state_free(st);
  assert_int_equal(anim_client_characters_destroy(fx.client, &id, 1, TIMEOUT_MS), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_invalid_params),
      cmocka_unit_test(test_play_rate),
      cmocka_unit_test(test_orientation_warp),
      cmocka_unit_test(test_stride),
      cmocka_unit_test(test_set_params_keeps_warps),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
