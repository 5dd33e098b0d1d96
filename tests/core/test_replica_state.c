/*
 * test_replica_state.c: a motion-matching character's keyframe and replay
 * (character/replica.h, anim_controller_replay) on the default database.
 *
 * Invalid keyframes first (magic, length, another database, bone count, a
 * frame out of range, a NaN), each refused with the replica unchanged. Then
 * a character steered through walk, turn, run and stand is followed by a
 * replica given one keyframe and then only each tick's record: after every
 * tick the replica's displayed pose equals the original's bit for bit
 * (held frames, transitions and foot locks included), and a translate
 * shows in the record as moved (the stream sends a keyframe there). Last,
 * the same with warping on (the default): the play rate between gaits,
 * sideways travel's upper-body turn and stops replayed from the record's
 * rate and angle, and a replica keyed mid-run (inside a stretch of
 * ticks skipping foot locking, the level of detail, which the record
 * carries too).
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
#include "character/controller.h"
#include "character/replica.h"
#include "procgen_db.h"

static anim_database_t db;
static anim_search_index_t *index_fast;

static int setup(void **state) { return anim_test_procgen_indexed(&db, &index_fast); }

static int teardown(void **state) {
  anim_test_procgen_indexed_free(&db, index_fast);
  return 0;
}

static void stick(anim_controller_t *c, float x, float z) {
  anim_controller_input_t in;
  memset(&in, 0, sizeof in);
  in.kind = ANIM_INPUT_STICK, in.stick_x = x, in.stick_z = z;
  assert_int_equal(anim_controller_set_input(c, &in), 0);
}

static void set_float(uint8_t *bytes, size_t at, float v) { memcpy(bytes + at, &v, 4); }

static void test_invalid_keyframes(void **state) {
  anim_controller_t original, replica;
  assert_int_equal(anim_controller_init(&original, &db, index_fast, NULL, vec3_make(1, 0, 2), 0.5f, 10), 0);
  for (int t = 0; t < 30; t++) assert_int_equal(anim_controller_tick(&original, 1.0f / 60.0f), 0);
  size_t size = anim_controller_replica_size(&original);
  uint8_t *key = malloc(size), *bad = malloc(size);
  assert_int_equal(anim_controller_replica_save(&original, key), size);
  anim_controller_params_t params;
  uint64_t version;
  int nbones;
  assert_int_equal(anim_controller_replica_params(key, 8, &params, &version, &nbones), ANIM_ETRUNCATED);
  assert_int_equal(anim_controller_replica_params(key, size, &params, &version, &nbones), 0);
  assert_true(version == db.version);
  assert_int_equal(nbones, db.nbones);
  assert_int_equal(anim_controller_init(&replica, &db, NULL, &params, vec3_zero(), 0.0f, 0), 0);
  /* A replica never ticks by itself. */
  assert_int_equal(anim_controller_tick(&replica, 1.0f / 60.0f), ANIM_EINVAL);
  vec3 root = replica.pose_positions[0];

  memcpy(bad, key, size), bad[0] = 'X';
  assert_int_equal(anim_controller_replica_load(&replica, bad, size), ANIM_EFORMAT);
  assert_int_equal(anim_controller_replica_load(&replica, key, size - 4), ANIM_ETRUNCATED);
  memcpy(bad, key, size), bad[12] ^= 1; /* the database's version */
  assert_int_equal(anim_controller_replica_load(&replica, bad, size), ANIM_EFORMAT);
  memcpy(bad, key, size), bad[4] ^= 1; /* the bone count */
  assert_int_equal(anim_controller_replica_load(&replica, bad, size), ANIM_EFORMAT);
  memcpy(bad, key, size);
  int32_t frame = db.nframes;
  memcpy(bad + 20, &frame, 4);
  assert_int_equal(anim_controller_replica_load(&replica, bad, size), ANIM_EFORMAT);
  memcpy(bad, key, size), set_float(bad, size - 4, NAN); /* the pelvis drop's velocity */
  assert_int_equal(anim_controller_replica_load(&replica, bad, size), ANIM_ENONFINITE);
  memcpy(bad, key, size), set_float(bad, 20 + 4 * 40, INFINITY); /* a bone's offset */
  assert_int_equal(anim_controller_replica_load(&replica, bad, size), ANIM_ENONFINITE);
  /* The warp: another warp on than the replica was made with, a rate or an angle out of bounds. */
  memcpy(bad, key, size), bad[20 + 4 * 10] ^= 1; /* the play rate warp */
  assert_int_equal(anim_controller_replica_load(&replica, bad, size), ANIM_EFORMAT);
  memcpy(bad, key, size), set_float(bad, 20 + 4 * 13, 9.0f); /* the shown rate */
  assert_int_equal(anim_controller_replica_load(&replica, bad, size), ANIM_EFORMAT);
  memcpy(bad, key, size), set_float(bad, 20 + 4 * 13, NAN);
  assert_int_equal(anim_controller_replica_load(&replica, bad, size), ANIM_ENONFINITE);
  memcpy(bad, key, size), set_float(bad, 20 + 4 * 14, 4.0f); /* the angle, past pi */
  assert_int_equal(anim_controller_replica_load(&replica, bad, size), ANIM_EFORMAT);
  assert_memory_equal(&replica.pose_positions[0], &root, sizeof root); /* nothing taken */
  assert_int_equal(anim_controller_replica_load(&replica, key, size), 0);
  assert_memory_equal(replica.pose_positions, original.pose_positions, sizeof(vec3) * (size_t)db.nbones);
  anim_controller_record_t record = {db.nframes, 0, 0, 0, 0, 0, 1.0f, 0.0f, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f};
  assert_int_equal(anim_controller_replay(&replica, 1.0f / 60.0f, &record), ANIM_EINVAL);
  record.transition_frame = -1;
  assert_int_equal(anim_controller_replay(&replica, 0.0f, &record), ANIM_EINVAL);
  record.play_rate = 4.5f, record.warp_angle = 0.0f; /* past the warp's bounds */
  assert_int_equal(anim_controller_replay(&replica, 1.0f / 60.0f, &record), ANIM_EINVAL);
  record.play_rate = -0.1f;
  assert_int_equal(anim_controller_replay(&replica, 1.0f / 60.0f, &record), ANIM_EINVAL);
  record.play_rate = 1.0f, record.warp_angle = NAN;
  assert_int_equal(anim_controller_replay(&replica, 1.0f / 60.0f, &record), ANIM_EINVAL);
  record.warp_angle = 3.5f;
  assert_int_equal(anim_controller_replay(&replica, 1.0f / 60.0f, &record), ANIM_EINVAL);
  assert_memory_equal(&replica.pose_positions[0], &original.pose_positions[0], sizeof root); /* nothing replayed */
  free(key), free(bad);
  anim_controller_free(&original), anim_controller_free(&replica);
}

static void test_replay_follows_the_original(void **state) {
  anim_controller_t original, replica;
  anim_controller_params_t params;
  anim_controller_params_default(&params);
  params.search_interval = 6;
  /* Warping off here: the frames are the data's own (test_replay_follows_warping has it on). */
  params.warp.rate = params.warp.stand = params.warp.orient = params.warp.stride = params.warp.steer = 0;
  assert_int_equal(anim_controller_init(&original, &db, index_fast, &params, vec3_make(3, 0, -2), 1.0f, 0), 0);
  original.pose_bone_rates = 0; /* as the server's */
  assert_int_equal(anim_controller_init(&replica, &db, NULL, &params, vec3_zero(), 0.0f, 0), 0);
  replica.pose_bone_rates = 0;
  uint8_t *key = malloc(anim_controller_replica_size(&original));
  anim_controller_replica_save(&original, key);
  assert_int_equal(anim_controller_replica_load(&replica, key, anim_controller_replica_size(&original)), 0);
  int transitions = 0, held = 0, planted = 0;
  size_t n = (size_t)db.nbones;
  for (int t = 0; t < 1200; t++) {
    if (t == 0) stick(&original, 0.0f, 0.85f);
    if (t == 240) stick(&original, 0.9f, 0.0f);
    if (t == 480) stick(&original, 0.0f, 1.0f);
    if (t == 720) stick(&original, 0.0f, 0.0f);
    float dt = t % 97 == 0 ? 2.5f / 60.0f : 1.0f / 60.0f; /* a late tick now and then */
    assert_int_equal(anim_controller_tick(&original, dt), 0);
    assert_int_equal(original.record.moved, t == 0); /* made (a reset) before its first tick */
    transitions += original.record.transition_frame >= 0, held += original.record.hold_end;
    planted += anim_controller_contacts(&original) != 0;
    assert_int_equal(anim_controller_replay(&replica, dt, &original.record), 0);
    if (memcmp(replica.pose_positions, original.pose_positions, n * sizeof(vec3)) ||
        memcmp(replica.pose_rotations, original.pose_rotations, n * sizeof(quat)))
      fail_msg("tick %d: the replica's pose differs (frame %d, the original's %d)", t, replica.frame, original.frame);
    assert_int_equal(replica.frame, original.frame);
    assert_int_equal(anim_controller_contacts(&replica), anim_controller_contacts(&original));
  }
  assert_true(transitions > 20);
  assert_true(held > 0);   /* standing from tick 720: the hold was replayed */
  assert_true(planted > 600);
  /* Moved outside a tick: the record says so until the next tick begins. */
  anim_controller_translate(&original, vec3_make(1.0f, 0.0f, 0.0f));
  assert_int_equal(original.record.moved, 1);
  assert_int_equal(anim_controller_tick(&original, 1.0f / 60.0f), 0);
  assert_int_equal(original.record.moved, 0);
  assert_int_equal(anim_controller_reset(&original, vec3_zero(), 0.0f, vec3_zero(), 5), 0);
  assert_int_equal(anim_controller_tick(&original, 1.0f / 60.0f), 0);
  assert_int_equal(original.record.moved, 1); /* reset between ticks: that tick's record */
  free(key);
  anim_controller_free(&original), anim_controller_free(&replica);
}

static void velocity(anim_controller_t *c, float x, float z, float facing) {
  anim_controller_input_t in;
  memset(&in, 0, sizeof in);
  in.kind = ANIM_INPUT_VELOCITY, in.velocity = vec3_make(x, 0.0f, z), in.facing = facing;
  assert_int_equal(anim_controller_set_input(c, &in), 0);
}

static void same_pose(const anim_controller_t *replica, const anim_controller_t *original, int tick, const char *which) {
  size_t n = (size_t)original->db->nbones;
  if (memcmp(replica->pose_positions, original->pose_positions, n * sizeof(vec3)) ||
      memcmp(replica->pose_rotations, original->pose_rotations, n * sizeof(quat)))
    fail_msg("tick %d: %s's pose differs (frame %d, the original's %d; rate %g, %g)", tick, which, replica->frame,
             original->frame, (double)replica->warp.shown, (double)original->warp.shown);
  assert_int_equal(replica->frame, original->frame);
  assert_int_equal(anim_controller_contacts(replica), anim_controller_contacts(original));
}

/* Warping on (the default): speeds between the data's gaits (a play rate),
 * sideways and diagonal travel facing ahead (the upper body's turn), stops
 * (the rate settling), each replayed from the record's rate and angle;
 * a second replica given a keyframe mid-run (the shown pose made again
 * from its phase) follows too. */
static void test_replay_follows_warping(void **state) {
  anim_controller_t original, replica, late;
  anim_controller_params_t params;
  anim_controller_params_default(&params);
  assert_true(params.warp.rate && params.warp.stand && params.warp.orient && params.warp.stride && params.warp.steer);
  assert_int_equal(anim_controller_init(&original, &db, index_fast, &params, vec3_make(-1, 0, 2), 0.3f, 0), 0);
  original.pose_bone_rates = 0;
  uint8_t *key = malloc(anim_controller_replica_size(&original));
  size_t size = anim_controller_replica_size(&original);
  anim_controller_params_t made;
  uint64_t version;
  int nbones;
  anim_controller_replica_save(&original, key);
  assert_int_equal(anim_controller_replica_params(key, size, &made, &version, &nbones), 0);
  assert_true(made.warp.rate && made.warp.stand && made.warp.orient); /* made warping, as the original */
  assert_int_equal(anim_controller_init(&replica, &db, NULL, &made, vec3_zero(), 0.0f, 0), 0);
  assert_int_equal(anim_controller_init(&late, &db, NULL, &made, vec3_zero(), 0.0f, 0), 0);
  replica.pose_bone_rates = late.pose_bone_rates = 0;
  assert_int_equal(anim_controller_replica_load(&replica, key, size), 0);
  int rated = 0, turned = 0, settled = 0, transitions = 0, rate_changes = 0, angle_changes = 0, late_from = 330;
  int planted = 0, letting_go = 0, skipped = 0, strided = 0, steered = 0;
  for (int t = 0; t < 1500; t++) {
    if (t == 0) velocity(&original, 0.0f, 0.9f, 0.0f);    /* slower than a walk */
    if (t == 150) velocity(&original, 0.0f, 1.6f, 0.0f);  /* between gaits */
    if (t == 300) velocity(&original, 1.3f, 0.0f, 0.0f);  /* sideways, facing +Z */
    if (t == 480) velocity(&original, -1.0f, 1.0f, 0.0f); /* diagonal */
    if (t == 660) velocity(&original, 0.0f, 0.0f, 0.0f);  /* a stop */
    if (t == 900) velocity(&original, 0.0f, 2.2f, 1.0f);
    if (t == 1100) velocity(&original, 0.0f, 0.0f, 1.0f);
    if (t == 1300) velocity(&original, 0.4f, -0.4f, 1.0f);
    float dt = t % 89 == 0 ? 2.5f / 60.0f : 1.0f / 60.0f;
    /* Level of detail: foot locking skipped now and then (the replica from the record). */
    original.skip_feet = (t >= 200 && t < 420) || (t >= 1000 && t < 1200);
    assert_int_equal(anim_controller_tick(&original, dt), 0);
    const anim_controller_record_t *r = &original.record;
    assert_int_equal(r->feet_skipped, original.skip_feet);
    if (original.skip_feet) { /* letting go (nothing planted), then skipped (the data's contacts) */
      uint32_t contacts = anim_controller_contacts(&original);
      if (original.feet_skipped) skipped++, assert_int_equal(contacts, anim_database_contacts(&db, original.frame));
      else letting_go++, assert_int_equal(contacts, 0);
    } else {
      planted += anim_controller_contacts(&original) != 0;
    }
    rated += r->play_rate != 1.0f, turned += r->warp_angle != 0.0f, settled += r->play_rate == 0.0f;
    transitions += r->transition_frame >= 0;
    strided += r->stride != 1.0f, steered += r->steer_x != 0.0f || r->steer_z != 0.0f;
    rate_changes += (r->warp_changed & ANIM_RECORD_PLAY_RATE) != 0;
    angle_changes += (r->warp_changed & ANIM_RECORD_WARP_ANGLE) != 0;
    assert_int_equal(anim_controller_replay(&replica, dt, r), 0);
    same_pose(&replica, &original, t, "the replica");
    if (t == late_from) {
      anim_controller_replica_save(&original, key);
      assert_int_equal(anim_controller_replica_load(&late, key, size), 0);
    } else if (t > late_from) {
      assert_int_equal(anim_controller_replay(&late, dt, r), 0);
      same_pose(&late, &original, t, "the late replica");
    }
  }
  printf("  1500 ticks: rate off 1 in %d, turned in %d, held at rest in %d, %d transitions; rate changed in %d, "
         "angle in %d\n", rated, turned, settled, transitions, rate_changes, angle_changes);
  assert_true(rated > 100);  /* the rate warp worked: there was something to replay */
  assert_true(turned > 100);
  assert_true(transitions > 10);
  printf("  stride warped in %d ticks, root steered in %d\n", strided, steered);
  assert_true(strided > 50 && steered > 50); /* the record's stride and steering were replayed */
  printf("  foot locking: letting go in %d ticks, skipped in %d\n", letting_go, skipped);
  assert_true(letting_go > 0 && skipped > 300);
  assert_true(planted > 300); /* locking resumed after each skip */
  free(key);
  anim_controller_free(&original), anim_controller_free(&replica), anim_controller_free(&late);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_invalid_keyframes),
      cmocka_unit_test(test_replay_follows_the_original),
      cmocka_unit_test(test_replay_follows_warping),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
