/*
 * test_physical.c: physical characters (MODE_PHYSICAL) on the real server
 * with real mocap (the Bandai Namco clips, as anim_test_bandai_database
 * builds them), through the real client library.
 *
 *  - bad input: every malformed push, body-mode setting and recover is
 *    refused with an error naming its field, and nothing is applied; a
 *    push one tick past Limits.max_push_ahead is refused, one at it taken;
 *    Limits.max_pushes_pending pushes ahead are held, one more refused;
 *  - with no push a physical character stays kinematic and its stream is
 *    the motion-matching character's, float for float, standing and
 *    walking;
 *  - a moderate push (PHYS_MODERATE_PUSH N s at the chest, from behind) makes it
 *    stagger and it recovers within 2 s without falling; a hard one
 *    (PHYS_HARD_PUSH) makes it fall and lie (the hips low), and it gets up on a
 *    recover request;
 *  - determinism: the same pushes at the same ticks give byte-identical
 *    streams from two runs, with the pool at 1 and at 2 threads (every
 *    server here runs with --fixed-step: no tick folds missed deadlines);
 *  - cost: CPU seconds per character tick of motion-matching, kinematic
 *    physical and reacting physical characters, measured in one server
 *    (printed, not asserted: the machine is shared).
 * Zero allocations per tick with physical characters:
 * tests/server/test_tick_alloc.c; a body's mass: test_physical_mass.c; a
 * simulation that diverges: test_physical_divergence.c.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>
#include "fixture.h"
#include "physical_fixture.h"

/* ---- bad input ---------------------------------------------------------------------------- */

/* Pushes p at tick: 0 when accepted (answered with that tick), else the
 * server's next tick as its ERANGE refusal names it (the message checked
 * whole: "push.tick = T: more than A ticks ahead of the next (N)"). */
static uint64_t push_refused_next(anim_client_t *c, uint64_t phys, anim_push_t p, uint64_t tick, uint32_t ahead) {
  uint64_t at = 0;
  p.tick = tick;
  int rc = anim_client_push(c, phys, &p, &at, PHYS_TIMEOUT_MS);
  if (rc == 0) {
    if (at != tick) fail_msg("a push at tick %llu answered %llu", (unsigned long long)tick, (unsigned long long)at);
    return 0;
  }
  const char *msg = anim_client_last_error(c);
  unsigned long long next = 0;
  char want[200];
  if (rc != ANIM_ERANGE || sscanf(msg, "push.tick = %*u: more than %*u ticks ahead of the next (%llu)", &next) != 1)
    fail_msg("expected ERANGE naming push.tick, got %d: %s", rc, msg);
  snprintf(want, sizeof want, "push.tick = %llu: more than %u ticks ahead of the next (%llu)", (unsigned long long)tick,
           ahead, next);
  if (strcmp(msg, want) != 0) fail_msg("expected \"%s\"\n          got \"%s\"", want, msg);
  return next;
}

/* push.tick at most Limits.max_push_ahead (36000) ticks after the next: the
 * bound the hello states is the one enforced. Next + ahead + 1 is refused
 * naming the same next (so no tick passed between the two requests: one
 * tick past the bound); accepted only when a tick passed (then it waits 10
 * minutes, one of the 8 pushes a character holds: asked again at most 4
 * times). Next + ahead is accepted. */
static void check_push_ahead(anim_client_t *c, uint64_t phys, const anim_push_t *p) {
  anim_hello_info_t info;
  assert_int_equal(anim_client_hello(c, "physical", &info, PHYS_TIMEOUT_MS), 0);
  uint32_t ahead = info.max_push_ahead;
  printf("  Limits.max_push_ahead %u\n", ahead);
  assert_int_equal(ahead, 36000);
  uint64_t next = 0;
  for (int attempt = 0;; attempt++) {
    if (attempt == 5)
      fail_msg("push.tick = next + %u + 1 accepted 5 times: not the bound, or a tick passed each time", ahead);
    if (!(next = push_refused_next(c, phys, *p, UINT64_MAX, ahead))) fail_msg("a push at tick 2^64-1 was accepted");
    uint64_t named = push_refused_next(c, phys, *p, next + ahead + 1, ahead);
    if (named == next) break;
    if (named) fail_msg("tick %llu refused naming the next %llu, before %llu", (unsigned long long)(next + ahead + 1),
                        (unsigned long long)named, (unsigned long long)next);
  }
  printf("  refused: push.tick = next %llu + %u + 1\n", (unsigned long long)next, ahead);
  /* The next only grows: next + ahead is at most the bound. */
  if (push_refused_next(c, phys, *p, next + ahead, ahead) != 0) fail_msg("push.tick = next + %u refused", ahead);
}

/* A character holds Limits.max_pushes_pending (8) pushes before they
 * apply: that many pushes 600 ticks (10 s) ahead of the next are taken
 * (none applies in between), one more is refused with ELIMIT naming
 * push.character and the bound; the bound is per character (other, with
 * at most 6 pending, takes one more). fresh has no push yet. */
static void check_pushes_pending(anim_client_t *c, uint64_t fresh, uint64_t other, const anim_push_t *p) {
  anim_hello_info_t info;
  assert_int_equal(anim_client_hello(c, "physical", &info, PHYS_TIMEOUT_MS), 0);
  uint32_t pending = info.max_pushes_pending;
  printf("  Limits.max_pushes_pending %u\n", pending);
  assert_int_equal(pending, 8);
  uint64_t next = push_refused_next(c, fresh, *p, UINT64_MAX, info.max_push_ahead);
  assert_true(next > 0);
  for (uint32_t i = 0; i < pending; i++)
    if (push_refused_next(c, fresh, *p, next + 600 + i, info.max_push_ahead) != 0)
      fail_msg("push %u of %u (tick %llu) refused", i + 1, pending, (unsigned long long)(next + 600 + i));
  anim_push_t one_more = *p;
  one_more.tick = next + 600 + pending;
  char field[64];
  snprintf(field, sizeof field, "push.character = %llu", (unsigned long long)fresh);
  phys_expect_refused(c, anim_client_push(c, fresh, &one_more, NULL, PHYS_TIMEOUT_MS), ANIM_ELIMIT, field);
  char count[64];
  snprintf(count, sizeof count, "at most %u", pending);
  if (!strstr(anim_client_last_error(c), count)) fail_msg("the refusal does not say %s", count);
  /* The bound is per character. */
  one_more.tick = 0;
  assert_int_equal(anim_client_push(c, other, &one_more, NULL, PHYS_TIMEOUT_MS), 0);
}

static void test_bad_input(void **state) {
  (void)state;
  if (!phys_database()) return;
  anim_test_server_t server;
  phys_start(&server, "2");
  anim_client_t *c = anim_test_connect(&server), *other = anim_test_connect(&server);
  uint64_t phys, mm, theirs;
  phys_create(c, ANIM_MODE_PHYSICAL, 0.0f, 0.0f, 1, &phys);
  phys_create(c, ANIM_MODE_MOTION_MATCHING, 0.0f, 3.0f, 1, &mm);
  phys_create(other, ANIM_MODE_PHYSICAL, 0.0f, 6.0f, 1, &theirs);
  anim_push_t p;
  anim_push_init(&p);
  p.bone = PHYS_CHEST, p.impulse[2] = 40.0f;
  anim_push_t bad = p;
  bad.impulse[0] = NAN;
  phys_expect_refused(c, anim_client_push(c, phys, &bad, NULL, PHYS_TIMEOUT_MS), ANIM_ENONFINITE, "push.impulse");
  bad = p, bad.impulse[1] = INFINITY;
  phys_expect_refused(c, anim_client_push(c, phys, &bad, NULL, PHYS_TIMEOUT_MS), ANIM_ENONFINITE, "push.impulse");
  bad = p, bad.impulse[2] = 2500.0f;
  phys_expect_refused(c, anim_client_push(c, phys, &bad, NULL, PHYS_TIMEOUT_MS), ANIM_EINVAL, "push.impulse");
  bad = p, bad.is_force = 1, bad.force[0] = 3e4f, bad.duration = 0.1f;
  phys_expect_refused(c, anim_client_push(c, phys, &bad, NULL, PHYS_TIMEOUT_MS), ANIM_EINVAL, "push.force");
  bad = p, bad.is_force = 1, bad.force[0] = 300.0f, bad.duration = 0.0f;
  phys_expect_refused(c, anim_client_push(c, phys, &bad, NULL, PHYS_TIMEOUT_MS), ANIM_EINVAL, "push.duration");
  bad = p, bad.is_force = 1, bad.force[0] = 300.0f, bad.duration = 5.0f;
  phys_expect_refused(c, anim_client_push(c, phys, &bad, NULL, PHYS_TIMEOUT_MS), ANIM_EINVAL, "push.duration");
  bad = p, bad.point[1] = 3.0f;
  phys_expect_refused(c, anim_client_push(c, phys, &bad, NULL, PHYS_TIMEOUT_MS), ANIM_EINVAL, "push.point");
  bad = p, bad.bone = "Tail";
  phys_expect_refused(c, anim_client_push(c, phys, &bad, NULL, PHYS_TIMEOUT_MS), ANIM_ENOTFOUND, "push.bone");
  bad = p, bad.bone = NULL, bad.bone_index = 500;
  phys_expect_refused(c, anim_client_push(c, phys, &bad, NULL, PHYS_TIMEOUT_MS), ANIM_ERANGE, "push.bone_index");
  bad = p, bad.bone = NULL, bad.bone_index = 0;
  phys_expect_refused(c, anim_client_push(c, phys, &bad, NULL, PHYS_TIMEOUT_MS), ANIM_EINVAL, "push.bone");
  bad = p, bad.bone = "joint_Root"; /* kinematic, above the hips: no body */
  phys_expect_refused(c, anim_client_push(c, phys, &bad, NULL, PHYS_TIMEOUT_MS), ANIM_ERANGE, "push.bone");
  anim_client_poll(c, 200); /* tick 1 is past */
  bad = p, bad.tick = 1;
  phys_expect_refused(c, anim_client_push(c, phys, &bad, NULL, PHYS_TIMEOUT_MS), ANIM_ERANGE, "push.tick");
  phys_expect_refused(c, anim_client_push(c, mm, &p, NULL, PHYS_TIMEOUT_MS), ANIM_EUNSUPPORTED, "push.character");
  phys_expect_refused(c, anim_client_push(c, theirs, &p, NULL, PHYS_TIMEOUT_MS), ANIM_EPERM, "push.character");
  phys_expect_refused(c, anim_client_push(c, 999999, &p, NULL, PHYS_TIMEOUT_MS), ANIM_ENOTFOUND, "push.character");

  anim_body_part_t parts[2];
  anim_body_part_init(&parts[0]), anim_body_part_init(&parts[1]);
  parts[0].bone = "UpperArm_L", parts[0].descendants = 1, parts[0].mode = ANIM_BODY_LIMP, parts[0].duration = 0.3f;
  parts[1].bone = "UpperArm_R", parts[1].has_strength = 1;
  parts[1].halflife = 0.001f, parts[1].damping_ratio = 1.0f, parts[1].max_torque = 100.0f;
  phys_expect_refused(c, anim_client_set_body_modes(c, phys, parts, 2, NULL, 0, NULL, PHYS_TIMEOUT_MS), ANIM_EINVAL,
                 "set_body_modes.parts[1].strength.halflife");
  parts[1].halflife = 0.1f, parts[1].damping_ratio = 11.0f;
  phys_expect_refused(c, anim_client_set_body_modes(c, phys, parts, 2, NULL, 0, NULL, PHYS_TIMEOUT_MS), ANIM_EINVAL,
                 "set_body_modes.parts[1].strength.damping_ratio");
  parts[1].damping_ratio = 1.0f, parts[1].max_torque = NAN;
  phys_expect_refused(c, anim_client_set_body_modes(c, phys, parts, 2, NULL, 0, NULL, PHYS_TIMEOUT_MS), ANIM_ENONFINITE,
                 "set_body_modes.parts[1].strength.max_torque");
  parts[1].max_torque = 100.0f, parts[1].mode = 7;
  phys_expect_refused(c, anim_client_set_body_modes(c, phys, parts, 2, NULL, 0, NULL, PHYS_TIMEOUT_MS), ANIM_EINVAL,
                 "set_body_modes.parts[1].mode");
  parts[1].mode = ANIM_BODY_POWERED, parts[1].bone = "Hips"; /* the root: the stabiliser's, not a part */
  phys_expect_refused(c, anim_client_set_body_modes(c, phys, parts, 2, NULL, 0, NULL, PHYS_TIMEOUT_MS), ANIM_ERANGE,
                 "set_body_modes.parts[1].bone");
  parts[1].bone = "UpperArm_R";
  anim_root_stabiliser_t root;
  anim_root_stabiliser_init(&root);
  root.max_force = -1.0f;
  root.mode = ANIM_BODY_LIMP;
  phys_expect_refused(c, anim_client_set_body_modes(c, phys, parts, 2, &root, 0, NULL, PHYS_TIMEOUT_MS), ANIM_EINVAL,
                 "set_body_modes.root.max_force");
  phys_expect_refused(c, anim_client_set_body_modes(c, mm, parts, 2, NULL, 0, NULL, PHYS_TIMEOUT_MS), ANIM_EUNSUPPORTED,
                 "set_body_modes.character");
  phys_expect_refused(c, anim_client_recover(c, theirs, NULL, PHYS_TIMEOUT_MS), ANIM_EPERM, "recover.character");

  /* Nothing applied: no push, still kinematic (the refused limp root did not drop it). */
  anim_character_state_t *st = NULL;
  for (int k = 0; k < 10; k++) anim_client_poll(c, 20);
  assert_int_equal(anim_client_character_state(c, phys, 0, &st, PHYS_TIMEOUT_MS), 0);
  assert_int_equal(st->mode, ANIM_MODE_PHYSICAL);
  assert_int_equal(st->physics, ANIM_PHYSICS_STATE_KINEMATIC);
  assert_int_equal((int)st->pushes, 0);
  anim_character_state_free(st);
  /* The valid ones are taken. */
  uint64_t tick = 0;
  assert_int_equal(anim_client_set_body_modes(c, phys, parts, 2, NULL, 0, &tick, PHYS_TIMEOUT_MS), 0);
  assert_true(tick > 0);
  assert_int_equal(anim_client_push(c, phys, &p, &tick, PHYS_TIMEOUT_MS), 0);
  assert_true(tick > 0);
  check_push_ahead(c, phys, &p);
  uint64_t fresh;
  phys_create(c, ANIM_MODE_PHYSICAL, 0.0f, 9.0f, 1, &fresh);
  check_pushes_pending(c, fresh, phys, &p);
  anim_server_stats_t stats;
  assert_int_equal(anim_client_server_stats(c, &stats, PHYS_TIMEOUT_MS), 0);
  assert_int_equal((int)stats.physics_resets, 0);
  anim_client_close(other);
  anim_client_close(c);
  assert_int_equal(anim_test_server_stop(&server), 0);
}

/* ---- no push: the motion-matching character, exactly ------------------------------------------- */

static void test_kinematic_is_matching(void **state) {
  (void)state;
  if (!phys_database()) return;
  anim_test_server_t server;
  phys_start(&server, "2");
  anim_client_t *c = anim_test_connect(&server);
  uint64_t warm;
  phys_create(c, ANIM_MODE_PHYSICAL, 0.0f, 0.0f, 1, &warm); /* the model built (off the loop) before the pair */
  phys_subscribe_owned(c);
  int same = 0;
  for (int attempt = 0; attempt < 4 && !same; attempt++) {
    /* Both creates pipelined, to be made between the same two ticks. */
    anim_character_mode_t mm = {0}, phys = {0};
    mm.mode = ANIM_MODE_MOTION_MATCHING, phys.mode = ANIM_MODE_PHYSICAL;
    anim_character_params_t params;
    anim_character_params_init(&params);
    params.search_interval = 1;
    anim_character_placement_t at = {10.0f, 5.0f, 0.5f, 0};
    uint64_t r1, r2, ids[2] = {0, 0};
    assert_int_equal(anim_client_characters_create_send(c, "bandai", &mm, &params, &at, 1, NULL, NULL, &r1), 0);
    assert_int_equal(anim_client_characters_create_send(c, "bandai", &phys, &params, &at, 1, NULL, NULL, &r2), 0);
    /* Their ids: the state of each as it comes (create's blocking form would reorder nothing). */
    for (int k = 0; k < 200 && (!ids[0] || !ids[1]); k++) {
      anim_stream_frame_t *f = NULL;
      assert_int_equal(anim_client_next_frame(c, &f, PHYS_TIMEOUT_MS), 0);
      for (int i = 0; i < f->nposes; i++) {
        uint64_t id = f->poses[i].character;
        if (id == warm || id == ids[0] || id == ids[1]) continue;
        anim_character_state_t *st = NULL;
        assert_int_equal(anim_client_character_state(c, id, 0, &st, PHYS_TIMEOUT_MS), 0);
        ids[st->mode == ANIM_MODE_PHYSICAL ? 1 : 0] = id;
        anim_character_state_free(st);
      }
      anim_stream_frame_free(f);
    }
    assert_true(ids[0] && ids[1]);
    /* Walk both from the same tick, then compare 4 s (standing, then walking). */
    anim_character_input_t in[2];
    anim_character_input_stick(&in[0], 0.3f, 0.8f, 0.0f, 0), in[1] = in[0];
    uint64_t standing_until = 0;
    float *a = NULL, *b = NULL;
    size_t na = 0, nb = 0, mismatches = 0, compared = 0;
    uint64_t first[2] = {0, 0};
    for (int t = 0; t < 240; t++) {
      if (t == 60) assert_int_equal(anim_client_characters_set_input(c, ids, in, 2, &standing_until, PHYS_TIMEOUT_MS), 0);
      anim_stream_frame_t *f = NULL;
      assert_int_equal(anim_client_next_frame(c, &f, PHYS_TIMEOUT_MS), 0);
      const anim_character_pose_t *p = phys_pose_of(f, ids[0]), *q = phys_pose_of(f, ids[1]);
      if (p && !first[0]) first[0] = f->tick;
      if (q && !first[1]) first[1] = f->tick;
      if (p && q) {
        compared++;
        if (q->physics != ANIM_PHYSICS_STATE_KINEMATIC) fail_msg("tick %llu: state %d without a push",
                                                                 (unsigned long long)f->tick, q->physics);
        if (memcmp(p->positions, q->positions, 3 * (size_t)p->nbones * sizeof(float)) ||
            memcmp(p->rotations, q->rotations, 4 * (size_t)p->nbones * sizeof(float)) ||
            memcmp(p->global_positions, q->global_positions, 3 * (size_t)p->nbones * sizeof(float)) ||
            p->frame != q->frame || p->contacts != q->contacts)
          mismatches++;
      }
      anim_stream_frame_free(f);
    }
    (void)a, (void)b, (void)na, (void)nb;
    printf("  attempt %d: created at ticks %llu and %llu, %zu frames compared (walking from tick %llu), %zu differ\n",
           attempt, (unsigned long long)first[0], (unsigned long long)first[1], compared,
           (unsigned long long)standing_until, mismatches);
    if (first[0] == first[1]) {
      same = 1;
      assert_true(compared >= 200);
      assert_int_equal(mismatches, 0);
    }
    anim_client_characters_destroy(c, ids, 2, PHYS_TIMEOUT_MS);
  }
  if (!same) fail_msg("the two creates never landed between the same ticks");
  anim_client_close(c);
  assert_int_equal(anim_test_server_stop(&server), 0);
}

/* ---- pushes ---------------------------------------------------------------------------------- */

static void test_moderate_push_recovers(void **state) {
  (void)state;
  if (!phys_database()) return;
  anim_test_server_t server;
  phys_start(&server, "2");
  anim_client_t *c = anim_test_connect(&server);
  phys_subscribe_owned(c);
  anim_push_t p;
  anim_push_init(&p);
  p.bone = PHYS_CHEST, p.impulse[2] = PHYS_MODERATE_PUSH; /* from behind: it faces +Z */
  phys_pushed_t r = phys_push_and_watch(c, 0.0f, 0.0f, &p, 90, 210);
  phys_print_track("moderate push", r.t, r.at);
  phys_watch_t w = phys_watch(r.t, r.at);
  printf("  %.0f N s at the chest: %d ticks powered, kinematic again after %.2f s, hips lowest %.2f m (standing "
         "%.2f), furthest %.3f m\n",
         (double)PHYS_MODERATE_PUSH, w.powered, w.back / 60.0, (double)w.lowest, (double)w.standing, (double)w.furthest);
  assert_true(w.powered > 0); /* it reacted */
  assert_int_equal(w.fallen, 0);
  if (w.back < 0 || w.back > (int)(PHYS_RECOVER_SECONDS * 60.0f)) fail_msg("not kinematic again within %.1f s", (double)PHYS_RECOVER_SECONDS);
  assert_true(w.lowest > 0.75f * w.standing);
  anim_character_state_t *st = NULL;
  assert_int_equal(anim_client_character_state(c, r.id, 0, &st, PHYS_TIMEOUT_MS), 0);
  assert_int_equal((int)st->pushes, 1);
  assert_true(st->physics_total_mass == 70.0f); /* the default */
  anim_character_state_free(st);
  free(r.t);
  anim_client_close(c);
  assert_int_equal(anim_test_server_stop(&server), 0);
}

static void test_hard_push_falls_and_recovers(void **state) {
  (void)state;
  if (!phys_database()) return;
  anim_test_server_t server;
  phys_start(&server, "2");
  anim_client_t *c = anim_test_connect(&server);
  phys_subscribe_owned(c);
  anim_push_t p;
  anim_push_init(&p);
  p.bone = PHYS_CHEST, p.impulse[2] = PHYS_HARD_PUSH;
  /* To 1 s after the push: falling, lying (it would get up after 2 s still). */
  phys_pushed_t r = phys_push_and_watch(c, 0.0f, 0.0f, &p, 90, 60);
  phys_watch_t fall = phys_watch(r.t, r.at);
  uint64_t recover_at = 0;
  assert_int_equal(anim_client_recover(c, r.id, &recover_at, PHYS_TIMEOUT_MS), 0);
  phys_record_until(c, r.id, recover_at + 90, r.t);
  phys_print_track("hard push (recover asked 1 s after it)", r.t, r.at);
  phys_watch_t up = phys_watch(r.t, recover_at);
  printf("  %.0f N s at the chest: fallen %.2f s after the push, hips lowest %.2f m (standing %.2f); recover: %d "
         "ticks blending, kinematic after %.2f s, hips at %.2f m\n",
         (double)PHYS_HARD_PUSH, fall.fell / 60.0, (double)fall.lowest, (double)fall.standing, up.recovering,
         up.back / 60.0, (double)up.last);
  if (fall.fell < 0) fail_msg("%.0f N s did not make it fall", (double)PHYS_HARD_PUSH);
  assert_true(fall.lowest < 0.5f * fall.standing);
  assert_true(up.recovering > 0);
  assert_true(up.back > 0 && up.back <= 60);
  assert_true(fabsf(up.last - fall.standing) < 0.1f * fall.standing);
  free(r.t);
  anim_client_close(c);
  assert_int_equal(anim_test_server_stop(&server), 0);
}

/* ---- determinism --------------------------------------------------------------------------- */

/* 4 s: the pushes at 1.67-2 s, the hard one's fall, the force's end. The
 * pushes are 100 ticks after the creation: the client asks for them after
 * reading the creation's frame, and a loaded machine may have it read the
 * stream more than the 40 ticks the first version left behind the server. */
#define DETERMINISM_TICKS 240
#define DETERMINISM_PUSH 100

/* Four physical characters, three pushed at named ticks (a moderate
 * impulse, a hard one, a force at a hand with that arm weakened): the
 * stream's poses from their creation for DETERMINISM_TICKS ticks. */
static float *deterministic_run(const char *threads, size_t *out_n) {
  anim_test_server_t server;
  phys_start(&server, threads);
  /* Another connection's character first: the model is built and the
   * ticks run before ours exist (a create that builds, or starts the
   * ticks, takes longer than a period: that first tick's dt is longer). */
  anim_client_t *warm = anim_test_connect(&server), *c = anim_test_connect(&server);
  uint64_t ids[4];
  phys_create(warm, ANIM_MODE_PHYSICAL, 0.0f, -20.0f, 1, ids);
  anim_client_poll(c, 300);
  phys_subscribe_owned(c);
  phys_create(c, ANIM_MODE_PHYSICAL, 0.0f, 0.0f, 4, ids);
  uint64_t created = phys_first_tick(c, ids[0]);
  anim_push_t p[3];
  for (int k = 0; k < 3; k++) anim_push_init(&p[k]), p[k].bone = PHYS_CHEST;
  p[0].impulse[2] = PHYS_MODERATE_PUSH, p[0].point[1] = 0.1f, p[0].tick = created + DETERMINISM_PUSH;
  p[1].impulse[0] = PHYS_HARD_PUSH, p[1].tick = created + DETERMINISM_PUSH + 1;
  p[2].bone = "Hand_L", p[2].is_force = 1, p[2].force[0] = -250.0f, p[2].duration = 0.5f;
  p[2].tick = created + DETERMINISM_PUSH + 20;
  for (int k = 0; k < 3; k++) assert_int_equal(anim_client_push(c, ids[k], &p[k], NULL, PHYS_TIMEOUT_MS), 0);
  float *bytes = NULL;
  size_t n = 0;
  phys_record(c, 0, DETERMINISM_TICKS, NULL, &bytes, &n);
  anim_client_close(c);
  anim_client_close(warm);
  assert_int_equal(anim_test_server_stop(&server), 0);
  *out_n = n;
  return bytes;
}

/* A run with --fixed-step: no tick folds skipped deadlines into a longer
 * dt (before the option, a loaded machine needed up to 10 tries to get a
 * run without one). */
static float *regular_run(const char *threads, size_t *out_n) {
  phys_irregular = 0;
  float *bytes = deterministic_run(threads, out_n);
  if (phys_irregular) fail_msg("a run with %s threads had %d ticks longer than a period under --fixed-step", threads, phys_irregular);
  return bytes;
}

static void test_deterministic(void **state) {
  (void)state;
  if (!phys_database()) return;
  size_t n[3];
  float *runs[3] = {regular_run("1", &n[0]), regular_run("1", &n[1]), regular_run("2", &n[2])};
  printf("  %zu floats of poses over %d ticks per run\n", n[0], DETERMINISM_TICKS);
  assert_true(n[0] > (size_t)DETERMINISM_TICKS * 4 * 7 * 20);
  for (int r = 1; r < 3; r++) {
    assert_int_equal(n[r], n[0]);
    for (size_t i = 0; i < n[0]; i++)
      if (memcmp(&runs[r][i], &runs[0][i], sizeof(float)))
        fail_msg("run %d (%s threads) differs from run 0 (1 thread) at float %zu of %zu: %.9g vs %.9g", r,
                 r == 2 ? "2" : "1", i, n[0], (double)runs[r][i], (double)runs[0][i]);
  }
  for (int r = 0; r < 3; r++) free(runs[r]);
}

/* ---- cost ---------------------------------------------------------------------------------- */

static double cpu_seconds(anim_client_t *c, uint64_t *out_ticks) {
  anim_server_stats_t s;
  assert_int_equal(anim_client_server_stats(c, &s, PHYS_TIMEOUT_MS), 0);
  *out_ticks = s.ticks;
  return s.cpu_user_s + s.cpu_system_s;
}

#define COST_CHARACTERS 100
#define COST_REACTING 20 /* a reacting tick costs ~200 motion-matching ones: 20 keep a loaded 2-core server near 60 Hz */
#define COST_SECONDS 4

typedef struct {
  int answered, refused;
} answers_t;

static void push_answered(anim_client_t *client, uint64_t id, int status, void *data) {
  answers_t *a = data;
  (void)client, (void)id;
  a->answered++, a->refused += status != 0;
}

/* The shoving of the reacting phase: 2 s forces of 150 N at the chest
 * every 1.5 s of ticks, each asked for ahead at its tick, from 0.5 s after
 * the shoving starts (a loaded server runs fewer ticks than wall time:
 * pushes sent by the wall clock would come closer together in its time and
 * could topple the characters). Six a character (it holds at most 8
 * pending): they shove through 10 s of ticks, past the window's 4.5 s of
 * wall time however late the client reads. Each push restarts the stagger
 * (actor_physical.c), so the characters stay powered all along. */
#define COST_SHOVES 6
#define COST_SHOVE_FIRST 30
#define COST_SHOVE_EVERY 90

/* The followed character's state per tick, as its stream frames tell (a
 * callback: the library's queue keeps only the newest 256 frames). */
typedef struct {
  uint64_t id;
  phys_track_t t;
} followed_t;

static void follow_frame(anim_client_t *client, const anim_stream_frame_t *f, void *data) {
  followed_t *w = data;
  const anim_character_pose_t *p = phys_pose_of(f, w->id);
  (void)client;
  if (p && w->t.n < PHYS_MAX_TICKS) w->t.tick[w->t.n] = f->tick, w->t.physics[w->t.n++] = p->physics;
}

/* Every frame of the followed character's from tick `from` through `last` shows it powered. */
static void expect_powered(anim_client_t *c, followed_t *w, uint64_t from, uint64_t last) {
  for (int k = 0; k < 600 && (!w->t.n || w->t.tick[w->t.n - 1] < last) && w->t.n < PHYS_MAX_TICKS; k++)
    anim_client_poll(c, 100);
  int seen = 0;
  for (int i = 0; i < w->t.n; i++) {
    if (w->t.tick[i] < from || w->t.tick[i] > last) continue;
    seen++;
    if (w->t.physics[i] != ANIM_PHYSICS_STATE_POWERED)
      fail_msg("the shoved character is not reacting at tick %llu (%llu after the shoving began): state %d",
               (unsigned long long)w->t.tick[i], (unsigned long long)(w->t.tick[i] - from), w->t.physics[i]);
  }
  printf("  shoved character powered on all %d frames of ticks %llu-%llu (%llu ticks)\n", seen,
         (unsigned long long)from, (unsigned long long)last, (unsigned long long)(last - from));
  /* Every tick streamed: none of the window's went unchecked. */
  assert_int_equal(seen, (int)(last - from + 1));
}

/* Processes c's input for `ms` of wall time (anim_client_poll returns at
 * the first message: with a stream, every tick). */
static void poll_for(anim_client_t *c, int ms) {
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int left = ms; left > 0;) {
    anim_client_poll(c, left);
    clock_gettime(CLOCK_MONOTONIC, &t);
    left = ms - (int)((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000);
  }
}

/* CPU seconds per tick the server ran, with n characters of mode (-1: none);
 * react: shoved all the time (above), the first character's state followed
 * tick by tick from its stream (one character, root rotations only: its
 * encoding is noise beside 20 bodies' simulation). */
static double phase(anim_client_t *c, int mode, int n, int react) {
  uint64_t ids[COST_CHARACTERS];
  anim_character_mode_t m = {0};
  m.mode = mode;
  anim_character_placement_t at[COST_CHARACTERS];
  for (int i = 0; i < n; i++) at[i] = (anim_character_placement_t){(float)(i % 10) * 3.0f, (float)(i / 10) * 3.0f, 0.0f, 0};
  if (mode >= 0) assert_int_equal(anim_client_characters_create_mode(c, "bandai", &m, NULL, at, n, ids, PHYS_TIMEOUT_MS), 0);
  static followed_t followed;
  uint64_t subscription = 0;
  if (react) {
    followed.id = ids[0], followed.t.n = 0;
    anim_subscribe_options_t o = {ids, 1, 0, 1, ANIM_POSE_FLOAT, 0, 1};
    assert_int_equal(anim_client_subscribe(c, &o, follow_frame, &followed, &subscription, NULL, PHYS_TIMEOUT_MS), 0);
  }
  anim_push_t p;
  anim_push_init(&p);
  p.bone = PHYS_CHEST, p.is_force = 1, p.duration = 2.0f;
  uint64_t shoved = 0; /* the tick the shoving starts at */
  for (int k = 0; react && k < 2; k++) { /* the bodies made and the shoving started before the count */
    p.force[2] = k & 1 ? 150.0f : -150.0f;
    for (int i = 0; i < n; i++) assert_int_equal(anim_client_push(c, ids[i], &p, &shoved, PHYS_TIMEOUT_MS), 0);
  }
  answers_t answers = {0, 0};
  int asked = 0;
  for (int k = 0; react && k < COST_SHOVES; k++) {
    p.force[2] = -150.0f, p.force[0] = k & 1 ? 60.0f : -60.0f;
    p.tick = shoved + COST_SHOVE_FIRST + (uint64_t)k * COST_SHOVE_EVERY;
    for (int i = 0; i < n; i++, asked++)
      assert_int_equal(anim_client_push_send(c, ids[i], &p, push_answered, &answers, NULL), 0);
  }
  for (int k = 0; k < 200 && answers.answered < asked; k++) anim_client_poll(c, 100);
  assert_int_equal(answers.answered, asked);
  if (answers.refused) fail_msg("%d of %d pushes ahead refused: %s", answers.refused, asked, anim_client_last_error(c));
  if (n) poll_for(c, 500);
  uint64_t ticks0, ticks1;
  double before = cpu_seconds(c, &ticks0);
  /* Without characters one second shows whether the server ticks idle (it
   * does not: then there is nothing to subtract); the kinds COST_SECONDS. */
  poll_for(c, n ? 1000 * COST_SECONDS : 1000);
  double cpu = cpu_seconds(c, &ticks1) - before;
  if (n) printf("  %d characters of mode %d%s: %llu ticks in the window\n", n, mode, react ? ", shoved" : "",
                (unsigned long long)(ticks1 - ticks0));
  /* An idle server does not tick (its scheduler stops without characters): nothing to subtract then. */
  cpu = ticks1 > ticks0 ? cpu / (double)(ticks1 - ticks0) : 0.0;
  if (react) {
    uint64_t last = 0;
    for (int i = 0; i < n; i++) {
      anim_character_state_t *st = NULL;
      assert_int_equal(anim_client_character_state(c, ids[i], 0, &st, PHYS_TIMEOUT_MS), 0);
      if (st->physics != ANIM_PHYSICS_STATE_POWERED)
        fail_msg("shoved character %d of %d is not reacting at tick %llu (%llu after the shoving began): state %d", i,
                 n, (unsigned long long)st->tick, (unsigned long long)(st->tick - shoved), st->physics);
      if (i == 0) last = st->tick;
      anim_character_state_free(st);
    }
    expect_powered(c, &followed, shoved, last);
    assert_int_equal(anim_client_unsubscribe(c, subscription, PHYS_TIMEOUT_MS), 0);
  }
  if (mode >= 0) anim_client_characters_destroy(c, ids, n, PHYS_TIMEOUT_MS);
  return cpu;
}

static void test_cost(void **state) {
  (void)state;
  if (!phys_database()) return;
  anim_test_server_t server;
  phys_start(&server, "2");
  anim_client_t *c = anim_test_connect(&server);
  uint64_t warm;
  phys_create(c, ANIM_MODE_PHYSICAL, 0.0f, 0.0f, 1, &warm);
  anim_client_characters_destroy(c, &warm, 1, PHYS_TIMEOUT_MS);
  double idle = phase(c, -1, 0, 0);
  double mm = (phase(c, ANIM_MODE_MOTION_MATCHING, COST_CHARACTERS, 0) - idle) / COST_CHARACTERS;
  double kin = (phase(c, ANIM_MODE_PHYSICAL, COST_CHARACTERS, 0) - idle) / COST_CHARACTERS;
  double react = (phase(c, ANIM_MODE_PHYSICAL, COST_REACTING, 1) - idle) / COST_REACTING;
  printf("  CPU per character tick (%d s each; the idle server's %.1f us a tick subtracted): motion matching %.1f us "
         "(%d), physical kinematic %.1f us (%d, %.2fx), physical reacting %.1f us (%d, %.1fx)\n",
         COST_SECONDS, idle * 1e6, mm * 1e6, COST_CHARACTERS, kin * 1e6, COST_CHARACTERS, kin / mm, react * 1e6,
         COST_REACTING, react / mm);
  anim_client_close(c);
  assert_int_equal(anim_test_server_stop(&server), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bad_input),
      cmocka_unit_test(test_kinematic_is_matching),
      cmocka_unit_test(test_moderate_push_recovers),
      cmocka_unit_test(test_hard_push_falls_and_recovers),
      cmocka_unit_test(test_deterministic),
      cmocka_unit_test(test_cost),
  };
  if (getenv("ANIM_TEST_FILTER")) cmocka_set_test_filter(getenv("ANIM_TEST_FILTER")); /* one test while working on it */
  return cmocka_run_group_tests(tests, NULL, phys_teardown);
}
