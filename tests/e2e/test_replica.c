/*
 * test_replica.c: the replicated encoding (ENCODING_REPLICATED) against the
 * real server, rebuilt by the client library's replica part
 * (anim_client_replica.h) on real mocap.
 *
 * Refusals first: a replicated subscription with a rate divisor (a region
 * is accepted); a replica of no database; a frame of poses fed to a replica; a
 * record cut short. Then the Bandai Namco database (mirrored, 60 Hz) is
 * served from a data directory and loaded by the replica from the same
 * file; characters on it (warping, the default, but one) follow the
 * wander input program, one a script of sideways and diagonal travel
 * facing ahead and stops, while one connection holds three subscriptions
 * to them: float poses (what the
 * server shows, exact), quantized poses and replicated state. Every tick
 * the replica's rebuilt pose must equal the float stream's bit for bit
 * (the same build: the replay is the server's own code; across builds,
 * ANIM_REPLICA_CROSS_BUILD=1, within the quantized error), transitions
 * happening meanwhile; a pause of the replicated subscription is made up
 * for by keyframes, and a destroyed character is forgotten. The replicated
 * frames must take at most 1/8 of the quantized frames' bytes per
 * character-second (issue 35's target), printed with the figures.
 * Last, what it cannot carry: a graph character comes as quantized poses
 * in the same frames, and a motion-matching character on another database
 * than the replica's is skipped.
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
/* build_graph answers once the build is done: seconds under the sanitizers on a loaded machine. */
#define BUILD_TIMEOUT_MS 120000
#define CHARS 6
#define RUN_SECONDS 6.0
#define MAX_BONES 128
/* Issue 35: replicated bytes per character-second at most this share of the quantized ones. */
#define MAX_BYTES_SHARE (1.0 / 8.0)
/* Across builds (ANIM_REPLICA_CROSS_BUILD=1: this test built otherwise
 * than the server, e.g. `make BUILD=build/o3n OPT="-O3 -march=native"
 * build/o3n/tests/test_replica` run with ANIM_BUILD_DIR=build): the
 * quantized encoding's error instead of bit identity, a rotation
 * component within 1e-4 and a position within 6.1e-5 m (docs/protocol.md;
 * measured 5.6e-6 and 1.5e-5 in two runs at -O3 -march=native against
 * -O2; bit-identical at -O1 against -O2). */
#define CROSS_ROTATION_ERROR 1e-4
#define CROSS_POSITION_ERROR 6.1e-5

static anim_test_served_bandai_t bandai;

static int setup(void **state) {
  return anim_test_served_bandai_start(&bandai, "replica", NULL, TIMEOUT_MS);
}

static int teardown(void **state) { return anim_test_served_bandai_stop(&bandai); }

/* Warping off (the others warp: the server's defaults). */
static const anim_character_params_t *unwarped(void) {
  static anim_character_params_t params;
  anim_character_params_init(&params);
  params.no_play_rate = params.no_stand_warp = params.no_orientation_warp = 1;
  params.no_stride_warp = params.no_root_steering = 1;
  return &params;
}

/* The last of the run's characters is unwarped, the one before it follows
 * SCRIPT (sideways, diagonal, stops), the rest wander. */
#define UNWARPED (CHARS - 1)
#define SCRIPTED (CHARS - 2)

static void make_characters(uint64_t *ids, int n) {
  anim_character_placement_t place[CHARS];
  for (int i = 0; i < n; i++) place[i] = (anim_character_placement_t){(float)i * 4.0f, 0.0f, 0.3f * (float)i, 97 * i};
  int warped = n > UNWARPED ? UNWARPED : n;
  assert_int_equal(anim_client_characters_create(bandai.client, "mocap", NULL, place, warped, ids, TIMEOUT_MS), 0);
  if (n > warped)
    assert_int_equal(anim_client_characters_create(bandai.client, "mocap", unwarped(), place + warped, n - warped,
                                                   ids + warped, TIMEOUT_MS),
                     0);
}

/* SCRIPTED's velocity (m/s, world) and facing (rad) at t s: facing +Z, ahead
 * between the data's gaits, sideways, diagonal back, stopped, ahead again
 * (each warp at work: the play rate, the upper body's turn, the settle). */
static const struct {
  float until, vx, vz, facing;
} script[] = {{0.8f, 0.0f, 1.6f, 0.0f}, {1.6f, 1.3f, 0.0f, 0.0f}, {2.2f, 0.0f, 0.0f, 0.0f},
              {3.0f, -0.9f, -0.9f, 0.0f}, {3.6f, 0.0f, 0.0f, 0.0f}, {4.4f, 0.0f, 2.2f, 0.0f},
              {5.2f, -1.2f, 0.3f, 0.0f}, {1e9f, 0.0f, 0.0f, 0.0f}};

/* ---- refusals ------------------------------------------------------------------------------- */

static void test_refusals(void **state) {
  if (!anim_test_served_bandai_need(&bandai)) return;
  uint64_t ids[1];
  make_characters(ids, 1);
  anim_subscribe_options_t o = {ids, 1, 0, 2, ANIM_POSE_REPLICATED, 0, 0};
  assert_int_equal(anim_client_subscribe(bandai.client, &o, NULL, NULL, NULL, NULL, TIMEOUT_MS), ANIM_EINVAL);
  assert_non_null(strstr(anim_client_last_error(bandai.client), "rate_divisor"));
  /* A region is replicated (its bands' records carry the ticks they skip: test_replica_region.c). */
  anim_subscribe_options_t r = {NULL, 0, 0, 0, ANIM_POSE_REPLICATED, 0, 0};
  anim_region_t region = {0.0f, 0.0f, 10.0f, 0.0f, 0.0f, 0, NULL, 0, 0};
  uint64_t regional;
  assert_int_equal(anim_client_subscribe_region(bandai.client, &r, &region, NULL, NULL, &regional, NULL, TIMEOUT_MS),
                   0);
  assert_int_equal(anim_client_unsubscribe(bandai.client, regional, TIMEOUT_MS), 0);
  /* An update to replicated keeps the rate rule. */
  uint64_t sub;
  o.rate_divisor = 1, o.encoding = ANIM_POSE_FLOAT;
  assert_int_equal(anim_client_subscribe(bandai.client, &o, NULL, NULL, &sub, NULL, TIMEOUT_MS), 0);
  assert_int_equal(anim_client_subscription_update(bandai.client, sub, 3, ANIM_POSE_REPLICATED, 0, TIMEOUT_MS),
                   ANIM_EINVAL);
  assert_int_equal(anim_client_unsubscribe(bandai.client, sub, TIMEOUT_MS), 0);

  int err = 0;
  char message[256];
  assert_null(anim_replica_create(NULL, &err, message, sizeof message));
  assert_int_equal(err, ANIM_EINVAL);
  assert_null(anim_replica_create("/nonexistent/x.animdb", &err, message, sizeof message));
  assert_true(err < 0);
  assert_non_null(strstr(message, "x.animdb"));

  anim_replica_t *replica = anim_replica_create(bandai.db_path, &err, message, sizeof message);
  assert_non_null(replica);
  anim_stream_frame_t frame;
  memset(&frame, 0, sizeof frame);
  frame.encoding = ANIM_POSE_QUANTIZED, frame.dt = 1.0f / 60.0f;
  assert_int_equal(anim_replica_apply(replica, &frame), ANIM_EINVAL);
  assert_int_equal(anim_replica_apply(replica, NULL), ANIM_EINVAL);
  /* No frame flags, a record cut short, a keyframe longer than the frame, a tick of an unknown character. */
  const uint8_t cut[] = {0x01, 0x02}, long_key[] = {0x01, 0x02, 0x01, 0x7f}, unknown[] = {0x01, 0x02, 0x00};
  frame.encoding = ANIM_POSE_REPLICATED;
  assert_int_equal(anim_replica_apply(replica, &frame), ANIM_EPROTO);
  frame.replica = cut, frame.replica_len = sizeof cut;
  assert_int_equal(anim_replica_apply(replica, &frame), ANIM_EPROTO);
  frame.replica = long_key, frame.replica_len = sizeof long_key;
  assert_int_equal(anim_replica_apply(replica, &frame), ANIM_EPROTO);
  frame.replica = unknown, frame.replica_len = sizeof unknown;
  assert_int_equal(anim_replica_apply(replica, &frame), ANIM_EPROTO);
  anim_replica_pose_t pose;
  assert_int_equal(anim_replica_pose(replica, 1, &pose), ANIM_ENOTFOUND);
  anim_replica_free(replica);
  assert_int_equal(anim_client_characters_destroy(bandai.client, ids, 1, TIMEOUT_MS), 0);
}

/* ---- the rebuild against the stream --------------------------------------------------------- */

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
  /* Results. */
  long ticks_compared, poses_compared, mismatched, transitions;
  double worst_error, worst_position, worst_rotation;
  char worst[128];
  uint64_t first_tick, last_tick;
  size_t bytes[3]; /* float, quantized, replicated: this run's frames */
  long frames[3];
} compare_t;

static void compare(compare_t *c) {
  c->ticks_compared++;
  for (int i = 0; i < c->nposes; i++) {
    anim_replica_pose_t p;
    if (anim_replica_pose(c->replica, c->ids[i], &p) != 0 || p.nbones != c->nbones[i]) {
      c->mismatched++;
      snprintf(c->worst, sizeof c->worst, "character %llu missing from the replica at tick %llu",
               (unsigned long long)c->ids[i], (unsigned long long)c->float_tick);
      continue;
    }
    c->poses_compared++;
    int n = p.nbones, same = !memcmp(p.positions, c->positions[i], 12 * (size_t)n) &&
                             !memcmp(p.rotations, c->rotations[i], 16 * (size_t)n);
    if (!same) c->mismatched++;
    for (int k = 0; k < 3 * n; k++) {
      double e = fabs((double)p.positions[k] - (double)c->positions[i][k]);
      if (e > c->worst_position) c->worst_position = e;
      if (e > c->worst_error)
        c->worst_error = e, snprintf(c->worst, sizeof c->worst, "character %llu bone %d position at tick %llu",
                                     (unsigned long long)c->ids[i], k / 3, (unsigned long long)c->float_tick);
    }
    for (int k = 0; k < 4 * n; k++) {
      double e = fabs((double)p.rotations[k] - (double)c->rotations[i][k]);
      if (e > c->worst_rotation) c->worst_rotation = e;
      if (e > c->worst_error)
        c->worst_error = e, snprintf(c->worst, sizeof c->worst, "character %llu bone %d rotation at tick %llu",
                                     (unsigned long long)c->ids[i], k / 4, (unsigned long long)c->float_tick);
    }
  }
}

static void on_float(anim_client_t *cl, const anim_stream_frame_t *f, void *data) {
  compare_t *c = data;
  c->bytes[0] += f->wire_bytes, c->frames[0]++;
  c->float_tick = f->tick;
  c->nposes = f->nposes < CHARS ? f->nposes : CHARS;
  for (int i = 0; i < c->nposes; i++) {
    const anim_character_pose_t *p = &f->poses[i];
    int n = p->nbones < MAX_BONES ? p->nbones : MAX_BONES;
    c->ids[i] = p->character, c->nbones[i] = n;
    memcpy(c->positions[i], p->positions, 12 * (size_t)n);
    memcpy(c->rotations[i], p->rotations, 16 * (size_t)n);
    c->transitions += p->transition;
  }
  if (c->replica_tick == c->float_tick) compare(c);
}

static void on_quantized(anim_client_t *cl, const anim_stream_frame_t *f, void *data) {
  compare_t *c = data;
  c->bytes[1] += f->wire_bytes, c->frames[1]++;
}

static void on_replicated(anim_client_t *cl, const anim_stream_frame_t *f, void *data) {
  compare_t *c = data;
  c->bytes[2] += f->wire_bytes, c->frames[2]++;
  int rc = anim_replica_apply(c->replica, f);
  if (rc) {
    c->apply_failed = rc;
    return;
  }
  if (!c->first_tick) c->first_tick = f->tick;
  c->last_tick = f->tick;
  c->replica_tick = f->tick;
  if (c->float_tick == c->replica_tick) compare(c);
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The program slot SCRIPTED's script stands for: its input at t s. */
static const anim_input_program_t *scripted;

static int script_input(const anim_input_program_t *program, float t, anim_character_input_t *out) {
  if (program != scripted) return 0;
  int k = 0;
  while (t >= script[k].until) k++;
  anim_character_input_velocity(out, script[k].vx, script[k].vz, script[k].facing);
  return 1;
}

/* Polls for seconds, the characters steered by their wander programs (t: seconds since start). */
static void run(uint64_t *ids, int n, anim_input_program_t *programs, double start, double seconds) {
  assert_int_equal(anim_test_steer_for(bandai.client, ids, programs, n, start, seconds, script_input, TIMEOUT_MS), 0);
}

static void test_rebuild_matches_stream(void **state) {
  if (!anim_test_served_bandai_need(&bandai)) return;
  static compare_t c;
  memset(&c, 0, sizeof c);
  int err;
  char message[256];
  c.replica = anim_replica_create(bandai.db_path, &err, message, sizeof message);
  assert_non_null(c.replica);
  uint64_t ids[CHARS], subs[3];
  make_characters(ids, CHARS);
  anim_input_program_t programs[CHARS];
  for (int i = 0; i < CHARS; i++) anim_input_program_init(&programs[i], ANIM_PROGRAM_WANDER, 11u + (uint32_t)i);
  scripted = &programs[SCRIPTED];
  anim_stream_cb cbs[3] = {on_float, on_quantized, on_replicated};
  int encodings[3] = {ANIM_POSE_FLOAT, ANIM_POSE_QUANTIZED, ANIM_POSE_REPLICATED};
  for (int e = 0; e < 3; e++) {
    anim_subscribe_options_t o = {ids, CHARS, 0, 1, encodings[e], 0, 0};
    assert_int_equal(anim_client_subscribe(bandai.client, &o, cbs[e], &c, &subs[e], NULL, TIMEOUT_MS), 0);
  }
  double start = now_s();
  run(ids, CHARS, programs, start, RUN_SECONDS / 2);
  /* Paused, the client misses ticks: on resuming, keyframes make up for them. */
  anim_replica_stats_t before, after;
  anim_replica_stats(c.replica, &before);
  assert_int_equal(anim_client_subscription_update(bandai.client, subs[2], 1, ANIM_POSE_REPLICATED, 1, TIMEOUT_MS), 0);
  run(ids, CHARS, programs, start, 0.25);
  assert_int_equal(anim_client_subscription_update(bandai.client, subs[2], 1, ANIM_POSE_REPLICATED, 0, TIMEOUT_MS), 0);
  run(ids, CHARS, programs, start, RUN_SECONDS / 2);
  anim_replica_stats(c.replica, &after);
  assert_int_equal(c.apply_failed, 0);
  double seconds = (double)(c.last_tick - c.first_tick + 1) / 60.0;
  double per_char_s[3];
  for (int e = 0; e < 3; e++) per_char_s[e] = (double)c.bytes[e] / seconds / CHARS;
  printf("  %ld ticks compared (%ld poses), %ld differ, worst |error| %.3g (%s); %ld transitions; keyframes %llu, "
         "replays %llu\n", c.ticks_compared, c.poses_compared, c.mismatched, c.worst_error, c.worst[0] ? c.worst : "-",
         c.transitions, (unsigned long long)after.keyframes, (unsigned long long)after.replays);
  printf("  bytes per character-second: float %.0f, quantized %.0f, replicated %.0f (%.1f%% of quantized, 1/%.0f)\n",
         per_char_s[0], per_char_s[1], per_char_s[2], 100.0 * per_char_s[2] / per_char_s[1],
         per_char_s[1] / per_char_s[2]);
  assert_true(c.ticks_compared > 200);
  assert_true(c.transitions > 10); /* the replay carried transitions, not a still crowd */
  const char *cross = getenv("ANIM_REPLICA_CROSS_BUILD");
  if (cross && !strcmp(cross, "1")) {
    printf("  another build: worst position error %.3g m, rotation %.3g\n", c.worst_position, c.worst_rotation);
    if (!(c.worst_position <= CROSS_POSITION_ERROR && c.worst_rotation <= CROSS_ROTATION_ERROR))
      fail_msg("across builds: worst %.3g: %s", c.worst_error, c.worst);
  } else if (c.mismatched) {
    fail_msg("%ld of %ld poses differ from the float stream; worst %.3g: %s", c.mismatched, c.poses_compared,
             c.worst_error, c.worst);
  }
  assert_true(after.keyframes >= before.keyframes + CHARS); /* the pause's */
  assert_true(per_char_s[2] <= MAX_BYTES_SHARE * per_char_s[1]);

  /* A destroyed character leaves the frames, and the replica forgets it. */
  assert_int_equal(anim_client_characters_destroy(bandai.client, ids, 1, TIMEOUT_MS), 0);
  run(ids + 1, CHARS - 1, programs + 1, start, 0.2);
  anim_replica_stats(c.replica, &after);
  assert_int_equal(after.characters, CHARS - 1);
  anim_replica_pose_t pose;
  assert_int_equal(anim_replica_pose(c.replica, ids[0], &pose), ANIM_ENOTFOUND);
  assert_int_equal(anim_replica_pose(c.replica, ids[1], &pose), 0);
  for (int e = 0; e < 3; e++) assert_int_equal(anim_client_unsubscribe(bandai.client, subs[e], TIMEOUT_MS), 0);
  assert_int_equal(anim_client_characters_destroy(bandai.client, ids + 1, CHARS - 1, TIMEOUT_MS), 0);
  anim_replica_free(c.replica);
}

/* ---- what it cannot carry ---------------------------------------------------------------------- */

typedef struct {
  anim_replica_t *replica;
  long frames, graph_poses, other_poses;
  int apply_rc;
  uint64_t graph;
  int graph_bones;
} fallback_t;

static void on_fallback(anim_client_t *cl, const anim_stream_frame_t *f, void *data) {
  fallback_t *b = data;
  b->frames++;
  int rc = anim_replica_apply(b->replica, f);
  if (rc) b->apply_rc = rc;
  for (int i = 0; i < f->nposes; i++) {
    if (f->poses[i].character == b->graph && f->poses[i].positions && f->poses[i].rotations)
      b->graph_poses++, b->graph_bones = f->poses[i].nbones;
    else b->other_poses++;
  }
}

/* A graph character comes as quantized poses in the replicated frames; a
 * motion-matching one on another database than the replica's is skipped. */
static void test_other_kinds_fall_back_to_poses(void **state) {
  if (!anim_test_served_bandai_need(&bandai)) return;
  anim_graph_description_t *d = NULL;
  anim_graph_build_options_t go = {0};
  int rc = anim_client_graph_build(bandai.client, "default", &go, &d, BUILD_TIMEOUT_MS);
  assert_true(rc == 0 || rc == ANIM_EBUSY);
  for (int i = 0; i < 600; i++) {
    anim_graph_description_free(d);
    assert_int_equal(anim_client_graph_describe(bandai.client, "default", 0, 0, &d, TIMEOUT_MS), 0);
    assert_int_not_equal(d->status, ANIM_GRAPH_FAILED);
    if (d->status != ANIM_GRAPH_BUILDING && d->ready) break;
    struct timespec pause = {0, 50 * 1000 * 1000};
    nanosleep(&pause, NULL);
  }
  assert_true(d->ready);
  anim_graph_description_free(d);
  uint64_t ids[2];
  anim_character_mode_t graph = {.mode = ANIM_MODE_GRAPH};
  anim_character_placement_t place = {40.0f, 0.0f, 0.0f, 0};
  assert_int_equal(
      anim_client_characters_create_mode(bandai.client, "default", &graph, NULL, &place, 1, &ids[0], TIMEOUT_MS), 0);
  place.x = 44.0f;
  assert_int_equal(anim_client_characters_create(bandai.client, "default", unwarped(), &place, 1, &ids[1], TIMEOUT_MS),
                   0);
  int err;
  fallback_t b = {anim_replica_create(bandai.db_path, &err, NULL, 0), 0, 0, 0, 0, ids[0], 0};
  assert_non_null(b.replica);
  anim_subscribe_options_t o = {ids, 2, 0, 1, ANIM_POSE_REPLICATED, 0, 0};
  uint64_t sub;
  assert_int_equal(anim_client_subscribe(bandai.client, &o, on_fallback, &b, &sub, NULL, TIMEOUT_MS), 0);
  double end = now_s() + 1.0;
  while (now_s() < end) {
    rc = anim_client_poll(bandai.client, 5);
    assert_true(rc == 0 || rc == ANIM_ETIMEDOUT);
  }
  assert_int_equal(anim_client_unsubscribe(bandai.client, sub, TIMEOUT_MS), 0);
  anim_replica_stats_t st;
  anim_replica_stats(b.replica, &st);
  printf("  %ld frames: %ld graph poses (%d bones), %llu records of the default database's character skipped\n",
         b.frames, b.graph_poses, b.graph_bones, (unsigned long long)st.foreign);
  assert_int_equal(b.apply_rc, 0);
  assert_true(b.frames > 20);
  assert_int_equal(b.graph_poses, b.frames); /* every frame, as a pose */
  assert_int_equal(b.other_poses, 0);        /* the motion-matching one is a record */
  assert_true(b.graph_bones > 0);
  assert_true(st.foreign >= (uint64_t)b.frames);
  anim_replica_pose_t pose;
  assert_int_equal(anim_replica_pose(b.replica, ids[0], &pose), ANIM_ENOTFOUND);
  assert_int_equal(anim_replica_pose(b.replica, ids[1], &pose), ANIM_ENOTFOUND);
  anim_replica_free(b.replica);
  assert_int_equal(anim_client_characters_destroy(bandai.client, ids, 2, TIMEOUT_MS), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_refusals),
      cmocka_unit_test(test_rebuild_matches_stream),
      cmocka_unit_test(test_other_kinds_fall_back_to_poses),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
