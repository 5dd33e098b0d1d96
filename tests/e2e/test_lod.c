/*
 * test_lod.c: the crowd's level of detail (--lod-search-scale) against the
 * real server: a motion-matching character no subscription streams at full
 * rate searches periodically that many times less often; one streamed at
 * full rate (named at rate_divisor 1, or owned) keeps its search interval;
 * one streamed at a rate divisor of 4 counts as not watched closely. Off
 * (scale 1) every character searches alike. The same rule skips foot
 * locking: the characters not watched closely never have a foot locked,
 * the one at full rate (and every one with the level of detail off) do. Characters walk straight on
 * with a constant stick, so periodic searches and clip ends make nearly all
 * of them (replans need an input change). The option's bounds (1..16) are
 * the options table's, checked with every option by test_config.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>
#include "anim_client.h"
#include "server_proc.h"

#define TIMEOUT_MS 10000

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Whether any of the character's feet is locked now (its state). */
static int feet_locked(anim_client_t *c, uint64_t id) {
  anim_character_state_t *s;
  assert_int_equal(anim_client_character_state(c, id, 0, &s, TIMEOUT_MS), 0);
  int locked = 0;
  for (int f = 0; f < s->nfeet; f++) locked |= s->feet[f].locked;
  anim_character_state_free(s);
  return locked;
}

/* Searches of three characters over `seconds`: [0] streamed at full rate,
 * [1] at a rate divisor of 4, [2] not at all; and how many of the samples
 * of their state (every 0.1 s) found a foot locked. */
static void run(const char *scale, double seconds, uint64_t out_searches[3], int out_locked[3], int *out_samples) {
  anim_test_server_t server;
  const char *args[] = {"--lod-search-scale", scale, "--log-level", "warn", NULL};
  assert_int_equal(anim_test_server_start(&server, "lod", args), 0);
  int err;
  anim_client_t *c = anim_client_connect(server.host, server.port, NULL, &err);
  assert_non_null(c);
  anim_character_placement_t place[3] = {{0, 0, 0, 0}, {5, 0, 0, 0}, {10, 0, 0, 0}};
  anim_character_params_t params;
  anim_character_params_init(&params);
  params.search_interval = 6;
  uint64_t ids[3], before[3];
  assert_int_equal(anim_client_characters_create(c, "default", &params, place, 3, ids, TIMEOUT_MS), 0);
  anim_character_input_t in[3];
  for (int i = 0; i < 3; i++) anim_character_input_stick(&in[i], 0.0f, 0.8f, 0.0f, 0);
  assert_int_equal(anim_client_characters_set_input(c, ids, in, 3, NULL, TIMEOUT_MS), 0);
  anim_subscribe_options_t full = {ids, 1, 0, 1, ANIM_POSE_QUANTIZED, 0, 0};
  anim_subscribe_options_t slow = {ids + 1, 1, 0, 4, ANIM_POSE_QUANTIZED, 0, 0};
  assert_int_equal(anim_client_subscribe(c, &full, NULL, NULL, NULL, NULL, TIMEOUT_MS), 0);
  assert_int_equal(anim_client_subscribe(c, &slow, NULL, NULL, NULL, NULL, TIMEOUT_MS), 0);
  *out_samples = 0;
  for (int i = 0; i < 3; i++) out_locked[i] = 0;
  for (int phase = 0; phase < 2; phase++) {
    double end = now_s() + (phase ? seconds : 0.5), sample = now_s() + 0.1; /* the first half second: setting off */
    while (now_s() < end) {
      anim_stream_frame_t *f;
      int rc = anim_client_poll(c, 5);
      assert_true(rc == 0 || rc == ANIM_ETIMEDOUT);
      while (anim_client_next_frame(c, &f, 0) == 0) anim_stream_frame_free(f);
      if (phase && now_s() >= sample) {
        sample += 0.1, (*out_samples)++;
        for (int i = 0; i < 3; i++) out_locked[i] += feet_locked(c, ids[i]);
      }
    }
    for (int i = 0; i < 3; i++) {
      anim_character_state_t *s;
      assert_int_equal(anim_client_character_state(c, ids[i], 0, &s, TIMEOUT_MS), 0);
      if (phase) out_searches[i] = s->searches - before[i];
      else before[i] = s->searches;
      anim_character_state_free(s);
    }
  }
  anim_client_close(c);
  assert_int_equal(anim_test_server_stop(&server), 0);
}

static void test_far_characters_search_less(void **state) {
  uint64_t on[3], off[3];
  int locked_on[3], locked_off[3], samples_on, samples_off;
  run("4", 3.0, on, locked_on, &samples_on);
  run("1", 3.0, off, locked_off, &samples_off);
  printf("  searches in 3 s (full rate, divisor 4, unwatched): scale 4: %llu %llu %llu; off: %llu %llu %llu\n",
         (unsigned long long)on[0], (unsigned long long)on[1], (unsigned long long)on[2], (unsigned long long)off[0],
         (unsigned long long)off[1], (unsigned long long)off[2]);
  /* Periodic searches every 6 frames played: 30 in 3 s at a play rate of
   * 1, fewer where the warps slow the clip (20-27 at this stick), and a few at
   * clips' ends. */
  assert_true(on[0] >= 15 && off[0] >= 15 && off[1] >= 15 && off[2] >= 15);
  assert_true(2 * on[1] < on[0]);
  assert_true(2 * on[2] < on[0]);
  /* Foot locking: kept at full rate, skipped for the others (their feet
   * never locked), kept for all with the level of detail off. */
  printf("  samples with a foot locked (of %d, %d): scale 4: %d %d %d; off: %d %d %d\n", samples_on, samples_off,
         locked_on[0], locked_on[1], locked_on[2], locked_off[0], locked_off[1], locked_off[2]);
  assert_true(samples_on >= 20 && samples_off >= 20);
  assert_true(2 * locked_on[0] > samples_on);
  assert_int_equal(locked_on[1], 0);
  assert_int_equal(locked_on[2], 0);
  for (int i = 0; i < 3; i++) assert_true(2 * locked_off[i] > samples_off);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_far_characters_search_less),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
