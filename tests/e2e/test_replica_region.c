/*
 * test_replica_region.c: a region subscription in the replicated encoding
 * (ENCODING_REPLICATED with SubscribeRequest.region) against the real
 * server, rebuilt by the client library's replica part on real mocap.
 *
 * The Bandai Namco database (mirrored, 60 Hz) is served from a data
 * directory and loaded by the replica from the same file. Characters on a
 * line through a circle of 10 m wander (warping on, the server's default)
 * in and out of it and between its three bands (3 m every tick, 6 m every
 * 4th, 10 m every 15th), the level of detail on (members of the slower
 * bands search less and skip foot locking), while one connection holds
 * three subscriptions to the same region and bands: float poses (what the
 * server shows, exact; a subscription to the characters by id at full
 * rate would turn their level of detail off), replicated state and
 * quantized poses. Each character a replicated frame carries must be, in
 * the replica, bit for bit the float region's pose of the same tick, and
 * within the quantized encoding's error of the quantized region's: a
 * character of a band that skips ticks is stepped through every tick it
 * skipped by its next record, so a replica that dropped those ticks (or a
 * server that did not send them) fails at once. Arrivals and departures
 * must come, characters must change bands, a pause must be made up for by
 * keyframes, and a destroyed character must be forgotten by the replica.
 * The replicated region's bytes beside the quantized region's are printed.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <cmocka.h>
#include "anim_client.h"
#include "anim_client_replica.h"
#include "data_dir.h"
#include "database/database.h"
#include "fixture.h"
#include "input_program.h"
#include "quality_wire.h"
#include "served_mocap.h"
#include "shared_data.h"

#define TIMEOUT_MS 20000
#define CHARS 10
#define RUN_SECONDS 8.0
#define MAX_BONES 128

static anim_test_served_bandai_t bandai;

static int setup(void **state) {
  /* The level of detail on: members no band streams every tick search less and skip foot locking. */
  const char *extra[] = {"--lod-search-scale", "4", NULL};
  return anim_test_served_bandai_start(&bandai, "replica_region", extra, TIMEOUT_MS);
}

static int teardown(void **state) { return anim_test_served_bandai_stop(&bandai); }

typedef struct {
  anim_replica_t *replica;
  /* The float stream's last frame, copied. */
  uint64_t float_tick;
  int nposes;
  uint64_t ids[CHARS];
  int nbones[CHARS];
  float positions[CHARS][3 * MAX_BONES], rotations[CHARS][4 * MAX_BONES];
  uint64_t replica_tick;
  int apply_failed;
  /* Per character: the tick of its last record, and the gaps seen (1: every tick; more: a band that skips). */
  uint64_t last_tick[CHARS];
  int gap_one[CHARS], gap_more[CHARS];
  long poses_compared, mismatched, entered, left, frames, fresh_frames;
  double worst_error;
  char worst[160];
  /* The quantized region's last frame, copied, and its comparison with the replica. */
  uint64_t quantized_tick;
  int nquantized;
  uint64_t quantized_ids[CHARS];
  float quantized_positions[CHARS][3 * MAX_BONES], quantized_rotations[CHARS][4 * MAX_BONES];
  long quantized_compared;
  double quantized_position_error, quantized_rotation_error;
  size_t bytes[2]; /* replicated, quantized region */
  uint64_t first_tick[2], last_frame_tick[2];
} compare_t;

static void compare(compare_t *c) {
  for (int i = 0; i < c->nposes; i++) {
    anim_replica_pose_t p;
    if (anim_replica_pose(c->replica, c->ids[i], &p) != 0 || !p.current) continue; /* not in this frame */
    c->poses_compared++;
    int n = p.nbones;
    if (n != c->nbones[i] || memcmp(p.positions, c->positions[i], 12 * (size_t)n) ||
        memcmp(p.rotations, c->rotations[i], 16 * (size_t)n)) {
      c->mismatched++;
      for (int k = 0; k < 3 * n; k++) {
        double e = fabs((double)p.positions[k] - (double)c->positions[i][k]);
        if (e > c->worst_error)
          c->worst_error = e, snprintf(c->worst, sizeof c->worst, "character %d bone %d position at tick %llu", i,
                                       k / 3, (unsigned long long)c->float_tick);
      }
      for (int k = 0; k < 4 * n; k++) {
        double e = fabs((double)p.rotations[k] - (double)c->rotations[i][k]);
        if (e > c->worst_error)
          c->worst_error = e, snprintf(c->worst, sizeof c->worst, "character %d bone %d rotation at tick %llu", i,
                                       k / 4, (unsigned long long)c->float_tick);
      }
    }
    /* Band changes: the gaps between its records. */
    if (c->last_tick[i]) {
      if (c->float_tick - c->last_tick[i] == 1) c->gap_one[i] = 1;
      else c->gap_more[i] = 1;
    }
    c->last_tick[i] = c->float_tick;
  }
}

static void compare_quantized(compare_t *c);

static void on_float(anim_client_t *cl, const anim_stream_frame_t *f, void *data) {
  compare_t *c = data;
  c->float_tick = f->tick;
  c->nposes = f->nposes < CHARS ? f->nposes : CHARS;
  for (int i = 0; i < c->nposes; i++) {
    const anim_character_pose_t *p = &f->poses[i];
    int n = p->nbones < MAX_BONES ? p->nbones : MAX_BONES;
    c->ids[i] = p->character, c->nbones[i] = n;
    memcpy(c->positions[i], p->positions, 12 * (size_t)n);
    memcpy(c->rotations[i], p->rotations, 16 * (size_t)n);
  }
  if (c->replica_tick == c->float_tick) compare(c);
}

static void on_replicated(anim_client_t *cl, const anim_stream_frame_t *f, void *data) {
  compare_t *c = data;
  c->bytes[0] += f->wire_bytes, c->frames++;
  c->entered += f->nentered, c->left += f->nleft;
  if (f->replica_len && (f->replica[0] & 1)) c->fresh_frames++;
  if (!c->first_tick[0]) c->first_tick[0] = f->tick;
  c->last_frame_tick[0] = f->tick;
  int rc = anim_replica_apply(c->replica, f);
  if (rc) {
    c->apply_failed = rc;
    return;
  }
  c->replica_tick = f->tick;
  if (c->float_tick == c->replica_tick) compare(c);
  if (c->quantized_tick == c->replica_tick) compare_quantized(c);
}

/* The quantized region's poses of the replica's tick against the replica's. */
static void compare_quantized(compare_t *c) {
  for (int i = 0; i < c->nquantized; i++) {
    anim_replica_pose_t p;
    if (anim_replica_pose(c->replica, c->quantized_ids[i], &p) != 0 || !p.current) continue;
    c->quantized_compared++;
    for (int k = 0; k < 3 * p.nbones && p.nbones <= MAX_BONES; k++) {
      double e = fabs((double)p.positions[k] - (double)c->quantized_positions[i][k]);
      if (e > c->quantized_position_error) c->quantized_position_error = e;
    }
    for (int b = 0; b < p.nbones && p.nbones <= MAX_BONES; b++) { /* q and -q are one rotation */
      double same = 0.0, flipped = 0.0;
      for (int k = 4 * b; k < 4 * b + 4; k++) {
        double e = fabs((double)p.rotations[k] - (double)c->quantized_rotations[i][k]);
        double f = fabs((double)p.rotations[k] + (double)c->quantized_rotations[i][k]);
        if (e > same) same = e;
        if (f > flipped) flipped = f;
      }
      double e = same < flipped ? same : flipped;
      if (e > c->quantized_rotation_error) c->quantized_rotation_error = e;
    }
  }
}

static void on_quantized(anim_client_t *cl, const anim_stream_frame_t *f, void *data) {
  compare_t *c = data;
  c->bytes[1] += f->wire_bytes;
  if (!c->first_tick[1]) c->first_tick[1] = f->tick;
  c->last_frame_tick[1] = f->tick;
  c->quantized_tick = f->tick;
  c->nquantized = f->nposes < CHARS ? f->nposes : CHARS;
  for (int i = 0; i < c->nquantized; i++) {
    const anim_character_pose_t *p = &f->poses[i];
    int n = p->nbones < MAX_BONES ? p->nbones : MAX_BONES;
    c->quantized_ids[i] = p->character;
    memcpy(c->quantized_positions[i], p->positions, 12 * (size_t)n);
    memcpy(c->quantized_rotations[i], p->rotations, 16 * (size_t)n);
  }
  if (c->replica_tick == c->quantized_tick) compare_quantized(c);
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Polls for seconds, the characters steered by their wander programs. */
static void run(uint64_t *ids, int n, anim_input_program_t *programs, double start, double seconds) {
  assert_int_equal(anim_test_steer_for(bandai.client, ids, programs, n, start, seconds, NULL, TIMEOUT_MS), 0);
}

static void test_region_rebuild_matches_stream(void **state) {
  if (!anim_test_served_bandai_need(&bandai)) return;
  assert_true(bandai.served);
  int err;
  char message[256];
  compare_t *c = calloc(1, sizeof *c);
  assert_non_null(c);
  c->replica = anim_replica_create(bandai.db_path, &err, message, sizeof message);
  assert_non_null(c->replica);

  /* On a line through the circle, 2.5 m apart: some start in each band, some outside. */
  uint64_t ids[CHARS];
  anim_character_placement_t place[CHARS];
  for (int i = 0; i < CHARS; i++)
    place[i] = (anim_character_placement_t){(float)(i - CHARS / 2) * 2.5f, 1.0f, 0.7f * (float)i, 131 * i};
  int created = anim_client_characters_create(bandai.client, "mocap", NULL, place, CHARS, ids, TIMEOUT_MS);
  if (created) printf("create: %s\n", anim_client_last_error(bandai.client));
  assert_int_equal(created, 0);
  anim_input_program_t programs[CHARS];
  for (int i = 0; i < CHARS; i++) anim_input_program_init(&programs[i], ANIM_PROGRAM_WANDER, 7u + (uint32_t)i);

  anim_subscribe_options_t all = {NULL, 0, 0, 0, ANIM_POSE_FLOAT, 0, 0};
  anim_region_band_t bands[] = {{3.0f, 1}, {6.0f, 4}, {10.0f, 15}};
  anim_region_t region = {0.0f, 0.0f, 10.0f, 0.0f, 0.0f, 0, bands, 3, 0};
  anim_subscribe_options_t replicated = {NULL, 0, 0, 0, ANIM_POSE_REPLICATED, 0, 0};
  anim_subscribe_options_t quantized = {NULL, 0, 0, 0, ANIM_POSE_QUANTIZED, 0, 0};
  uint64_t sub_float, sub_replicated, sub_quantized;
  assert_int_equal(
      anim_client_subscribe_region(bandai.client, &all, &region, on_float, c, &sub_float, NULL, TIMEOUT_MS), 0);
  assert_int_equal(anim_client_subscribe_region(bandai.client, &replicated, &region, on_replicated, c, &sub_replicated,
                                                NULL, TIMEOUT_MS),
                   0);
  assert_int_equal(anim_client_subscribe_region(bandai.client, &quantized, &region, on_quantized, c, &sub_quantized,
                                                NULL, TIMEOUT_MS),
                   0);
  double start = now_s();
  run(ids, CHARS, programs, start, RUN_SECONDS / 2);
  /* A pause: the ticks it misses are made up for by a fresh frame of keyframes. */
  long fresh_before = c->fresh_frames;
  assert_int_equal(
      anim_client_subscription_update(bandai.client, sub_replicated, 0, ANIM_POSE_REPLICATED, 1, TIMEOUT_MS), 0);
  run(ids, CHARS, programs, start, 0.3);
  assert_int_equal(
      anim_client_subscription_update(bandai.client, sub_replicated, 0, ANIM_POSE_REPLICATED, 0, TIMEOUT_MS), 0);
  run(ids, CHARS, programs, start, RUN_SECONDS / 2);
  long fresh_after_pause = c->fresh_frames - fresh_before;

  /* A destroyed member is said to have left and the replica forgets it. */
  anim_replica_stats_t stats;
  anim_replica_stats(c->replica, &stats);
  uint64_t victim = 0;
  anim_replica_pose_t pose;
  for (int i = 0; i < CHARS && !victim; i++)
    if (anim_replica_pose(c->replica, ids[i], &pose) == 0) victim = ids[i];
  assert_true(victim != 0);
  assert_int_equal(anim_client_characters_destroy(bandai.client, &victim, 1, TIMEOUT_MS), 0);
  run(ids, 0, programs, start, 0.5);
  assert_int_equal(anim_replica_pose(c->replica, victim, &pose), ANIM_ENOTFOUND);
  anim_replica_stats(c->replica, &stats);

  int band_changes = 0;
  for (int i = 0; i < CHARS; i++) band_changes += c->gap_one[i] && c->gap_more[i];
  double seconds0 = (double)(c->last_frame_tick[0] - c->first_tick[0]) / 60.0;
  double seconds1 = (double)(c->last_frame_tick[1] - c->first_tick[1]) / 60.0;
  printf("replicated region: %ld frames, %ld poses compared, %ld mismatched (worst %.3g, %s); %ld entered, %ld left, "
         "%d characters changed bands; %llu ticks replayed, %llu of them from batches, %llu keyframes; "
         "%ld fresh frames after the pause\n",
         c->frames, c->poses_compared, c->mismatched, c->worst_error, c->worst, c->entered, c->left, band_changes,
         (unsigned long long)stats.replays, (unsigned long long)stats.batched, (unsigned long long)stats.keyframes,
         fresh_after_pause);
  printf("against the quantized region: %ld poses, worst position %.3g m, rotation %.3g\n", c->quantized_compared,
         c->quantized_position_error, c->quantized_rotation_error);
  printf("bytes per second: replicated region %.0f, quantized region %.0f (1/%.1f)\n",
         (double)c->bytes[0] / seconds0, (double)c->bytes[1] / seconds1,
         ((double)c->bytes[1] / seconds1) / ((double)c->bytes[0] / seconds0));
  assert_int_equal(c->apply_failed, 0);
  assert_int_equal(c->mismatched, 0);
  assert_true(c->poses_compared > 1000);
  assert_true(stats.batched > 100); /* the bands' skipped ticks came in later records */
  assert_true(c->entered > CHARS / 2);
  assert_true(c->left >= 2); /* walked out, and the one destroyed */
  assert_true(band_changes >= 1);
  assert_true(fresh_after_pause >= 1);
  /* The quantized encoding's bounds (docs/protocol.md: rotation components within 1e-4, positions half a
   * step of 1/8192 m, 6.1035e-5). */
  assert_true(c->quantized_compared > 1000);
  assert_true(c->quantized_position_error <= 6.11e-5);
  assert_true(c->quantized_rotation_error <= 1e-4);

  assert_int_equal(anim_client_unsubscribe(bandai.client, sub_float, TIMEOUT_MS), 0);
  assert_int_equal(anim_client_unsubscribe(bandai.client, sub_replicated, TIMEOUT_MS), 0);
  assert_int_equal(anim_client_unsubscribe(bandai.client, sub_quantized, TIMEOUT_MS), 0);
  anim_replica_free(c->replica);
  free(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_region_rebuild_matches_stream),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
