/*
 * test_physical_divergence.c: a physical character whose simulation
 * diverges, on the real server with the Bandai Namco database, made to
 * diverge through the real push request (no hook in the server; the
 * physics layer's own poisoned-state test is tests/physics/test_body.c's
 * test_divergence).
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
#include "fixture.h"
#include "physical_fixture.h"

/* ---- divergence ---------------------------------------------------------------------------- */

#define DIVERGING 6
/* Pushes are asked for this many ticks after the characters' first: seven
 * round trips must arrive before it, also under ASan on a busy machine
 * (each is asserted to apply at the tick asked). */
#define PUSH_AHEAD 120
#define WATCHED_TICKS 150 /* from the push */

/* The largest pushes the server takes (2000 N s, 20000 N for 2 s, 1 m off
 * the joint) on the lightest body (20 kg) make MuJoCo's accelerations pass
 * its bound (1e10: "Nan, Inf or huge value in QACC" in the server log),
 * which MuJoCo answers by resetting the body to its model's rest pose at
 * the world's origin (on hands, feet and head in any phase of standing; a
 * chest impulse diverged only in some, and otherwise threw the body 8 m
 * and felled it). Each such character must instead be reset to its
 * kinematic pose and counted in physics_resets: kinematic, its pose finite
 * and where its motion matching is; the server serves on, and a character
 * pushed moderately beside them staggers and recovers as it would alone. */
static void test_divergence(void **state) {
  (void)state;
  if (!phys_database()) return;
  anim_test_server_t server;
  phys_start(&server, "2");
  anim_client_t *c = anim_test_connect(&server);
  phys_subscribe_owned(c);
  uint64_t ids[DIVERGING + 1];
  phys_create(c, ANIM_MODE_PHYSICAL, 20.0f, 0.0f, DIVERGING, ids);
  uint64_t bystander;
  phys_create(c, ANIM_MODE_PHYSICAL, 0.0f, 30.0f, 1, &bystander);
  ids[DIVERGING] = bystander;
  uint64_t created = phys_first_tick(c, bystander);
  static const char *bones[DIVERGING] = {"Hand_L", "Hand_L", "Foot_R", "Head", "Hand_R", "Hips"};
  for (int k = 0; k < DIVERGING; k++) {
    anim_push_t p;
    anim_push_init(&p);
    p.bone = bones[k], p.point[0] = 1.0f, p.tick = created + PUSH_AHEAD;
    if (k % 2 == 0) p.impulse[1] = 2000.0f;
    else p.is_force = 1, p.force[2] = 20000.0f, p.duration = 2.0f;
    uint64_t applied;
    assert_int_equal(anim_client_push(c, ids[k], &p, &applied, PHYS_TIMEOUT_MS), 0);
    assert_int_equal(applied, p.tick);
  }
  anim_push_t moderate;
  anim_push_init(&moderate);
  moderate.bone = PHYS_CHEST, moderate.impulse[2] = PHYS_MODERATE_PUSH, moderate.tick = created + PUSH_AHEAD;
  uint64_t at;
  assert_int_equal(anim_client_push(c, bystander, &moderate, &at, PHYS_TIMEOUT_MS), 0);
  assert_int_equal(at, moderate.tick);

  /* 2.5 s of frames after the push: every pose finite; each pushed one's
   * state and hips. */
  int hips = phys_bone("Hips"), simulated[DIVERGING] = {0}, last_state[DIVERGING] = {0};
  float last_x[DIVERGING] = {0};
  phys_track_t *t = calloc(1, sizeof *t);
  for (uint64_t tick = 0; tick < at + WATCHED_TICKS;) {
    anim_stream_frame_t *f = NULL;
    assert_int_equal(anim_client_next_frame(c, &f, PHYS_TIMEOUT_MS), 0);
    tick = f->tick;
    for (int i = 0; i < f->nposes; i++) {
      const anim_character_pose_t *q = &f->poses[i];
      for (int v = 0; v < 3 * q->nbones; v++)
        if (!isfinite(q->positions[v]) || !isfinite(q->global_positions[v]))
          fail_msg("tick %llu: character %llu's pose is not finite", (unsigned long long)f->tick,
                   (unsigned long long)q->character);
      for (int k = 0; k < DIVERGING; k++)
        if (q->character == ids[k]) {
          simulated[k] += q->physics != ANIM_PHYSICS_STATE_KINEMATIC;
          last_state[k] = q->physics, last_x[k] = q->global_positions[3 * hips];
        }
      if (q->character == bystander && t->n < PHYS_MAX_TICKS) {
        t->tick[t->n] = f->tick, t->physics[t->n] = q->physics;
        t->hips_x[t->n] = q->global_positions[3 * hips], t->hips_y[t->n] = q->global_positions[3 * hips + 1];
        t->hips_z[t->n] = q->global_positions[3 * hips + 2];
        t->n++;
      }
    }
    anim_stream_frame_free(f);
  }
  anim_server_stats_t stats;
  assert_int_equal(anim_client_server_stats(c, &stats, PHYS_TIMEOUT_MS), 0);
  phys_watch_t w = phys_watch(t, at);
  printf("  %d characters of 20 kg pushed to the bounds: physics_resets %llu; the 70 kg one beside them: %d ticks "
         "powered, kinematic after %.2f s, no fall %s\n",
         DIVERGING, (unsigned long long)stats.physics_resets, w.powered, w.back / 60.0, w.fallen ? "NO" : "yes");
  for (int k = 0; k < DIVERGING; k++) {
    printf("  %-6s %s: %d frames simulated, then state %d, hips at x %.2f m (placed at %.1f)\n", bones[k],
           k % 2 ? "20000 N for 2 s" : "2000 N s", simulated[k], last_state[k], (double)last_x[k], 3.0 * k);
    assert_int_equal(last_state[k], ANIM_PHYSICS_STATE_KINEMATIC);
    /* Where its motion matching stands, not at the model's origin. */
    if (fabsf(last_x[k] - 3.0f * (float)k) > 0.5f)
      fail_msg("%s: the hips at x %.2f m, the character stands at %.1f", bones[k], (double)last_x[k], 3.0 * k);
  }
  assert_int_equal((int)stats.physics_resets, DIVERGING);
  /* The bystander as test_moderate_push_recovers asks. */
  assert_true(w.powered > 0);
  assert_int_equal(w.fallen, 0);
  assert_true(w.back > 0 && w.back <= (int)(PHYS_RECOVER_SECONDS * 60.0f));
  /* The server serves on: a reset character takes a push again (10 N s on
   * 20 kg, 35 on 70) and is simulated without diverging. */
  anim_push_t again;
  anim_push_init(&again);
  again.bone = PHYS_CHEST, again.impulse[2] = 10.0f;
  assert_int_equal(anim_client_push(c, ids[0], &again, NULL, PHYS_TIMEOUT_MS), 0);
  phys_record(c, ids[0], 10, NULL, NULL, NULL);
  anim_character_state_t *st = NULL;
  assert_int_equal(anim_client_character_state(c, ids[0], 0, &st, PHYS_TIMEOUT_MS), 0);
  assert_int_equal((int)st->pushes, 2);
  assert_int_equal(st->physics, ANIM_PHYSICS_STATE_POWERED);
  anim_character_state_free(st);
  assert_int_equal(anim_client_server_stats(c, &stats, PHYS_TIMEOUT_MS), 0);
  assert_int_equal((int)stats.physics_resets, DIVERGING);
  free(t);
  anim_client_close(c);
  assert_int_equal(anim_test_server_stop(&server), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_divergence),
  };
  return cmocka_run_group_tests(tests, NULL, phys_teardown);
}
