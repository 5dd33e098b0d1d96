/*
 * test_learned_service.c: learned characters (MODE_LEARNED, --lmm) served by
 * the real server and read back through the client library: the learned
 * skeleton described as the database "lmm", each input kind steering a
 * character, and the streamed poses passing the quality checks of the core
 * (tests/test_lmm.c) as a subscriber sees them; then (issue 30) planted
 * feet under an input that changes every 0.5 s, measured on the stream by
 * the motion-quality meter of the motion-matching characters
 * (tests/support/motion_quality.h, quality_wire.h). Needs the shared networks
 * (../shared/data/lmm): skipped without them, except under CI.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "anim_client.h"
#include "anim_error.h"
#include "fixture.h"
#include "learned/lmm.h"
#include "offline/lmm_database.h"
#include "quality_wire.h"
#include "shared_data.h"

#define TIMEOUT_MS 20000
#define SECONDS 6
#define RATE 60
/* Bone lengths from the streamed world positions (floats): the networks'
 * constant bones are exact (core/learned/lmm.h); world coordinates of a few metres
 * carry ~1e-6 m of rounding through the server's FK. */
#define BONE_LENGTH_M 1e-4
/* Toe height while the stream's contact bit is on (test_lmm.c's bound:
 * LaFAN1's planted toe joint sits 1-2 cm up; 8 cm is a lifted foot). */
#define CONTACT_TOE_HEIGHT_M 0.08
/* Speed over the last 3 s within 10% of the asked speed (the issue's
 * target); idle under 0.15 m/s (the standing clip drifts a few cm/s). */
#define SPEED_RELATIVE 0.10
#define IDLE_SPEED_MS 0.15
/* Heading of the motion over the last 3 s within 15 degrees of the asked one. */
#define HEADING_RAD (15.0 * 3.14159265 / 180.0)
/* A goal 4 m away: stopped within 30 cm of it (test_lmm.c's bound). */
#define GOAL_M 0.3

/* Issue 30: learned characters steered with a new velocity every 0.5 s
 * (input_program.h's STEERED), WIRE_SECONDS of server ticks, one character
 * per seed, measured on the stream as test_foot_quality.c measures
 * motion-matching characters (frames at the ends of a contact left out).
 * Before the feet were locked (the decoded contact flags streamed as they
 * were): slide median 0.41-0.53 m/s, p95 1.5-1.6, worst 2.6-3.1; flagged
 * toes up to 5.0-6.4 cm (p99 3.4-4.2 cm); the issue saw 11.9 cm (p99 4.3)
 * and a median of 0.48. With them: median 0.000, p95 0.001-0.002, worst
 * 0.003-0.010 m/s; toes up to 2.7-3.6 cm (p99 2.5-2.8). Slide: the same
 * bounds as motion matching's (test_foot_quality.c). */
#define STEERED_SECONDS 20.0f
#define STEERED_SEEDS 2
#define MAX_SLIDE_P95 0.1f
#define MAX_SLIDE_WORST 0.3f
/* Contacts at the ground: a flagged toe no higher than the learned walk's
 * own planted toes (the lmm database's p95, LaFAN1's toe joint sits 1-2 cm
 * up) plus 1.5 cm at the 99th percentile (test_foot_quality.c's margin, at
 * p95 there), plus 3 cm at worst (a planted toe rolling with the foot). */
#define MAX_HEIGHT_P99_ABOVE_DATA 0.015f
#define MAX_HEIGHT_ABOVE_DATA 0.03f
/* Feet are still shown planted: a share of the foot-frames flagged (the
 * decoded flags were on 0.45-0.5 of the time before). */
#define MIN_FLAGGED_SHARE 0.25f

static anim_test_fixture_t fx;

/* With the networks, the server loads them (--lmm); without, the tests say
 * why they skip (or fail under CI) through networks(). */
static int setup(void **state) { return anim_test_fixture_start_lmm(&fx, "learned_service", 0, NULL); }
static int teardown(void **state) { return anim_test_fixture_stop(&fx); }

/* Stops the test (skipped, or failed under CI) without the networks. */
static int networks(void) {
  char path[1024];
  return anim_test_shared_path(path, sizeof path, "data/lmm/projector.bin");
}

static void test_skeleton_and_errors(void **state) {
  if (!networks()) return;
  anim_hello_info_t info;
  assert_int_equal(anim_client_hello(fx.client, "test", &info, TIMEOUT_MS), 0);
  int learned = 0;
  for (int i = 0; i < info.ncapabilities; i++) learned |= !strcmp(info.capabilities[i], "learned");
  assert_true(learned);
  anim_db_description_t *d;
  assert_int_equal(anim_client_db_describe(fx.client, "lmm", &d, TIMEOUT_MS), 0);
  assert_int_equal(d->nbones, 23);
  assert_string_equal(d->bone_names[0], "Simulation");
  assert_string_equal(d->bone_names[1], "Hips");
  assert_string_equal(d->bone_names[5], "LeftToe");
  assert_string_equal(d->bone_names[22], "RightHand");
  anim_db_description_free(d);

  anim_character_mode_t mode = {.mode = ANIM_MODE_LEARNED};
  uint64_t id;
  assert_int_equal(anim_client_characters_create_mode(fx.client, "default", &mode, NULL, NULL, 1, &id, TIMEOUT_MS),
                   ANIM_EUNSUPPORTED);
  assert_non_null(strstr(anim_client_last_error(fx.client), "database lmm"));
  anim_character_params_t bad = {.search_interval = 601};
  assert_int_equal(anim_client_characters_create_mode(fx.client, "lmm", &mode, &bad, NULL, 1, &id, TIMEOUT_MS),
                   ANIM_EINVAL);
}

typedef struct {
  const char *what;
  anim_character_input_t input;
  float speed, heading; /* asked: m/s and radians of the motion (speed 0: idle); heading < -9: goal */
  float goal_x, goal_z;
} program_t;

static double distance(const float *a, const float *b) {
  double x = a[0] - b[0], y = a[1] - b[1], z = a[2] - b[2];
  return sqrt(x * x + y * y + z * z);
}

static void test_inputs_and_stream_quality(void **state) {
  if (!networks()) return;
  enum { N = 5 };
  program_t p[N];
  memset(p, 0, sizeof p);
  p[0].what = "idle", anim_character_input_velocity(&p[0].input, 0.0f, 0.0f, 0.0f);
  p[1].what = "walk by velocity", p[1].speed = 1.5f, p[1].heading = 0.0f;
  anim_character_input_velocity(&p[1].input, 0.0f, 1.5f, 0.0f);
  p[2].what = "run by velocity, turned", p[2].speed = 3.5f, p[2].heading = 1.5708f;
  anim_character_input_velocity(&p[2].input, 3.5f, 0.0f, 1.5708f);
  p[3].what = "stick forward", p[3].speed = 1.75f, p[3].heading = 0.0f; /* forward_speed's default */
  anim_character_input_stick(&p[3].input, 0.0f, 1.0f, 0.0f, 0);
  p[4].what = "goal", p[4].heading = -10.0f, p[4].goal_x = 40.0f, p[4].goal_z = 4.0f;
  anim_character_input_goal(&p[4].input, 40.0f, 4.0f, 1.5f);
  anim_character_placement_t place[N];
  for (int i = 0; i < N; i++) place[i] = (anim_character_placement_t){10.0f * (float)i, 0.0f, 0.0f, -1};
  anim_character_mode_t mode = {.mode = ANIM_MODE_LEARNED};
  uint64_t ids[N];
  assert_int_equal(anim_client_characters_create_mode(fx.client, "lmm", &mode, NULL, place, N, ids, TIMEOUT_MS), 0);
  anim_character_input_t inputs[N];
  for (int i = 0; i < N; i++) inputs[i] = p[i].input;
  assert_int_equal(anim_client_characters_set_input(fx.client, ids, inputs, N, NULL, TIMEOUT_MS), 0);
  uint64_t sub, subq;
  anim_subscribe_options_t o = {ids, N, 0, 1, ANIM_POSE_FLOAT, 1, 0};
  assert_int_equal(anim_client_subscribe(fx.client, &o, NULL, NULL, &sub, NULL, TIMEOUT_MS), 0);
  anim_subscribe_options_t oq = {ids, N, 0, 1, ANIM_POSE_QUANTIZED, 0, 0};
  assert_int_equal(anim_client_subscribe(fx.client, &oq, NULL, NULL, &subq, NULL, TIMEOUT_MS), 0);

  anim_db_description_t *d;
  assert_int_equal(anim_client_db_describe(fx.client, "lmm", &d, TIMEOUT_MS), 0);
  static float roots[N][SECONDS * RATE][3];
  /* Each frame's tick: a frame the server replaced by a newer one (a slow
   * reader, as under sanitizers on a loaded machine) is not received, so
   * frames counted are not time simulated. */
  static uint64_t ticks[SECONDS * RATE];
  float dt = 0.0f;
  float rest[N][23];
  double worst_length = 0.0, worst_toe = 0.0;
  int frames = 0, quantized = 0, contact_frames = 0;
  while (frames < SECONDS * RATE) {
    anim_stream_frame_t *f;
    assert_int_equal(anim_client_next_frame(fx.client, &f, TIMEOUT_MS), 0);
    if (f->subscription == subq) {
      quantized += f->nposes == N && f->poses[0].nbones == 23;
      anim_stream_frame_free(f);
      continue;
    }
    assert_int_equal(f->nposes, N);
    ticks[frames] = f->tick, dt = f->dt;
    for (int i = 0; i < N; i++) {
      const anim_character_pose_t *q = &f->poses[i];
      assert_int_equal(q->character, ids[i]);
      assert_int_equal(q->nbones, 23);
      assert_non_null(q->global_positions);
      const float *g = q->global_positions;
      memcpy(roots[i][frames], g, 3 * sizeof(float));
      for (int b = 2; b < 23; b++) { /* bone 1 (Hips) moves against the simulation bone */
        float len = (float)distance(g + 3 * b, g + 3 * d->bone_parents[b]);
        if (!frames) rest[i][b] = len;
        double e = fabs(len - rest[i][b]);
        if (e > worst_length) worst_length = e;
      }
      for (int s = 0; s < 2; s++)
        if (q->contacts & (1u << s)) {
          double h = g[3 * (s ? 9 : 5) + 1];
          contact_frames++;
          if (h > worst_toe) worst_toe = h;
        }
    }
    anim_stream_frame_free(f);
    frames++;
  }
  anim_db_description_free(d);
  printf("learned, streamed %d ticks of %d characters: bone lengths within %.2g m, toes in contact at most %.3f m up "
         "(%d contact frames), %d quantized frames\n", frames, N, worst_length, worst_toe, contact_frames, quantized);
  if (!(worst_length <= BONE_LENGTH_M)) fail_msg("a bone length changed by %g m", worst_length);
  if (!(worst_toe <= CONTACT_TOE_HEIGHT_M)) fail_msg("a toe in contact %g m above the ground", worst_toe);
  assert_true(contact_frames > 100);
  assert_true(quantized > SECONDS * RATE / 2);
  float seconds = (float)(ticks[SECONDS * RATE - 1] - ticks[3 * RATE]) * dt; /* the last 3 s, or more ticks */
  assert_true(seconds > 0.0f);
  for (int i = 0; i < N; i++) {
    const float *a = roots[i][3 * RATE], *b = roots[i][SECONDS * RATE - 1];
    float dx = b[0] - a[0], dz = b[2] - a[2];
    float speed = sqrtf(dx * dx + dz * dz) / seconds, heading = atan2f(dx, dz);
    printf("  %-24s %.3f m/s toward %.2f rad over %.2f s\n", p[i].what, speed, heading, seconds);
    if (p[i].heading < -9.0f) { /* placed at x = 40: the goal is 4 m ahead */
      float left = sqrtf((b[0] - p[i].goal_x) * (b[0] - p[i].goal_x) + (b[2] - p[i].goal_z) * (b[2] - p[i].goal_z));
      if (!(left <= GOAL_M)) fail_msg("%s: stopped %.2f m from the goal", p[i].what, left);
    } else if (p[i].speed == 0.0f) {
      if (!(speed <= IDLE_SPEED_MS)) fail_msg("%s: moves at %.3f m/s", p[i].what, speed);
    } else {
      if (!(fabsf(speed / p[i].speed - 1.0f) <= SPEED_RELATIVE))
        fail_msg("%s: asked %.2f m/s, moves at %.3f m/s", p[i].what, p[i].speed, speed);
      if (!(fabsf(heading - p[i].heading) <= HEADING_RAD))
        fail_msg("%s: asked heading %.2f rad, moves toward %.2f", p[i].what, p[i].heading, heading);
    }
  }
  anim_character_state_t *cs;
  assert_int_equal(anim_client_character_state(fx.client, ids[1], 1, &cs, TIMEOUT_MS), 0);
  assert_int_equal(cs->mode, ANIM_MODE_LEARNED);
  assert_true(cs->searches > 0); /* projections */
  assert_int_equal(cs->inertializer.nbones, 23);
  anim_character_state_free(cs);
  /* The idle one's foot locks, as motion matching reports them: both toes,
   * a planted one held on the ground. */
  assert_int_equal(anim_client_character_state(fx.client, ids[0], 0, &cs, TIMEOUT_MS), 0);
  assert_int_equal(cs->nfeet, 2);
  int planted = 0;
  for (int f = 0; f < cs->nfeet; f++) {
    assert_non_null(strstr(cs->feet[f].bone, "Toe"));
    if (cs->feet[f].locked) planted++, assert_true(fabsf(cs->feet[f].position[1]) < 0.05f);
  }
  assert_true(planted >= 1);
  anim_character_state_free(cs);
  assert_int_equal(anim_client_unsubscribe(fx.client, sub, TIMEOUT_MS), 0);
  assert_int_equal(anim_client_unsubscribe(fx.client, subq, TIMEOUT_MS), 0);
  assert_int_equal(anim_client_characters_destroy(fx.client, ids, N, TIMEOUT_MS), 0);
}

/* Issue 30: steered with a new velocity every 0.5 s, the feet the stream
 * flags in contact stay where they are and on the ground. */
static void test_steered_feet(void **state) {
  if (!networks()) return;
  char dir[1024], err[512];
  snprintf(dir, sizeof dir, "%s/data/lmm", anim_test_shared_dir());
  int code = 0;
  anim_lmm_networks_t *nets = anim_lmm_networks_load(dir, NULL, &code, err, sizeof err);
  if (!nets) fail_msg("%s: %s", dir, err);
  /* The server's database "lmm", built the same way in process: skeleton,
   * contact bones, the learned walk's planted heights. */
  static anim_database_t db;
  if (anim_lmm_database(&db, "lmm", nets, err, sizeof err)) fail_msg("the learned walk: %s", err);
  anim_quality_wire_run_t runs[STEERED_SEEDS];
  memset(runs, 0, sizeof runs);
  for (int i = 0; i < STEERED_SEEDS; i++)
    runs[i].database = "lmm", runs[i].db = &db, runs[i].kind = ANIM_PROGRAM_STEERED, runs[i].seed = 1u + (uint32_t)i,
    runs[i].learned = 1;
  int rc = anim_quality_run_wire(fx.client, runs, STEERED_SEEDS, STEERED_SECONDS, err, sizeof err);
  if (rc) fail_msg("%s", err);
  for (int i = 0; i < STEERED_SEEDS; i++) {
    char line[768];
    anim_quality_format(&runs[i].result, &db.skeleton, line, sizeof line);
    printf("  learned steered every 0.5 s, seed %u: %s (%ld frames missed)\n", runs[i].seed, line, runs[i].gaps);
  }
  for (int i = 0; i < STEERED_SEEDS; i++) {
    const anim_quality_t *q = &runs[i].result;
    const char *foot = q->slide_worst_foot >= 0 ? db.skeleton.names[db.contact_bones[q->slide_worst_foot]] : "-";
    if (!(q->slide_samples > 100)) fail_msg("seed %u: only %ld slide samples", runs[i].seed, q->slide_samples);
    if (!(q->flagged_share >= MIN_FLAGGED_SHARE))
      fail_msg("seed %u: feet shown planted %.2f of the time", runs[i].seed, (double)q->flagged_share);
    if (!(q->slide_p95 < MAX_SLIDE_P95) || !(q->slide_max < MAX_SLIDE_WORST))
      fail_msg("seed %u: contact slide median %.3f, p95 %.3f, worst %.3f m/s (%s, frame %ld)", runs[i].seed,
               (double)q->slide_p50, (double)q->slide_p95, (double)q->slide_max, foot, q->slide_worst_frame);
    if (!(q->contact_height_p99 <= q->data_height_p95 + MAX_HEIGHT_P99_ABOVE_DATA) ||
        !(q->contact_height_max <= q->data_height_p95 + MAX_HEIGHT_ABOVE_DATA))
      fail_msg("seed %u: toes in contact %.3f m high at p99, %.3f at worst (the learned walk's p95 %.3f)",
               runs[i].seed, (double)q->contact_height_p99, (double)q->contact_height_max,
               (double)q->data_height_p95);
  }
  anim_database_free(&db);
  anim_lmm_networks_free(nets);
}

/* The play rate (motion matching's warp, on learned characters): asked
 * speeds the networks' walk and run do not have are reached, within
 * SPEED_RELATIVE over the last 3 s of 6; the shown rate is reported, and
 * set_character_params turns it off. Without the rate (measured in
 * process on the same networks): 1.0 m/s ran at 0.34 (the projector's
 * slowest walk does not travel that slowly: it shuffled), 1.25 m/s at
 * 1.37; with it 1.005 and 1.247. Faster than the data the rate does not
 * go past the served database's fastest travel (its scripted walk's 1.77
 * m/s over a second, anim_warp_gaits), as motion matching's does not. */
static void test_play_rate(void **state) {
  (void)state;
  if (!networks()) return;
  enum { N = 2 };
  const float asked[N] = {1.0f, 1.25f};
  anim_character_placement_t place[N];
  anim_character_input_t inputs[N];
  for (int i = 0; i < N; i++) {
    place[i] = (anim_character_placement_t){10.0f * (float)i, 0.0f, 50.0f, -1};
    anim_character_input_velocity(&inputs[i], 0.0f, asked[i], 0.0f);
  }
  anim_character_mode_t mode = {.mode = ANIM_MODE_LEARNED};
  uint64_t ids[N];
  assert_int_equal(anim_client_characters_create_mode(fx.client, "lmm", &mode, NULL, place, N, ids, TIMEOUT_MS), 0);
  assert_int_equal(anim_client_characters_set_input(fx.client, ids, inputs, N, NULL, TIMEOUT_MS), 0);
  uint64_t sub;
  anim_subscribe_options_t o = {ids, N, 0, 1, ANIM_POSE_FLOAT, 1, 0};
  assert_int_equal(anim_client_subscribe(fx.client, &o, NULL, NULL, &sub, NULL, TIMEOUT_MS), 0);
  /* Roots at the first frame of the last 3 s and at the last, by tick. */
  float first[N][3], last[N][3];
  uint64_t start = 0, tick0 = 0, tick1 = 0;
  float dt = 0.0f;
  for (;;) {
    anim_stream_frame_t *f;
    assert_int_equal(anim_client_next_frame(fx.client, &f, TIMEOUT_MS), 0);
    if (f->subscription != sub || f->nposes != N) {
      anim_stream_frame_free(f);
      continue;
    }
    if (!start) start = f->tick;
    dt = f->dt;
    uint64_t at = f->tick - start;
    for (int i = 0; i < N; i++) {
      if (!tick0 && at >= 3 * RATE) memcpy(first[i], f->poses[i].global_positions, sizeof first[i]);
      memcpy(last[i], f->poses[i].global_positions, sizeof last[i]);
    }
    if (!tick0 && at >= 3 * RATE) tick0 = f->tick;
    tick1 = f->tick;
    anim_stream_frame_free(f);
    if (at >= SECONDS * RATE) break;
  }
  assert_int_equal(anim_client_unsubscribe(fx.client, sub, TIMEOUT_MS), 0);
  for (int i = 0; i < N; i++) {
    double dx = last[i][0] - first[i][0], dz = last[i][2] - first[i][2];
    double speed = sqrt(dx * dx + dz * dz) / ((double)(tick1 - tick0) * dt);
    anim_character_state_t *st;
    assert_int_equal(anim_client_character_state(fx.client, ids[i], 0, &st, TIMEOUT_MS), 0);
    printf("play rate: asked %.2f m/s, moves at %.3f m/s, rate shown %.3f\n", (double)asked[i], speed,
           (double)st->play_rate);
    if (!(fabs(speed / asked[i] - 1.0) <= SPEED_RELATIVE))
      fail_msg("asked %g m/s, moves at %g m/s (rate %g)", (double)asked[i], speed, (double)st->play_rate);
    if (i == 0 && !(st->play_rate < 0.9f)) fail_msg("a slow walk's rate shown %g", (double)st->play_rate);
    anim_character_state_free(st);
  }
  /* Off by set_character_params: all or nothing, then the rate back to 1. */
  anim_character_params_t p, now;
  anim_character_params_init(&p);
  p.no_play_rate = 1, p.play_rate_max = 9.0f;
  assert_int_equal(anim_client_character_params_set(fx.client, ids[0], &p, &now, TIMEOUT_MS), ANIM_EINVAL);
  if (!strstr(anim_client_last_error(fx.client), "play_rate_max"))
    fail_msg("error \"%s\" does not name play_rate_max", anim_client_last_error(fx.client));
  anim_character_params_init(&p);
  p.no_play_rate = 1;
  assert_int_equal(anim_client_character_params_set(fx.client, ids[0], &p, &now, TIMEOUT_MS), 0);
  assert_int_equal(now.no_play_rate, 1);
  anim_character_state_t *st = NULL;
  for (int tries = 0; tries < 200; tries++) { /* the rate eases back over a few tenths of a second */
    anim_character_state_free(st);
    assert_int_equal(anim_client_character_state(fx.client, ids[0], 0, &st, TIMEOUT_MS), 0);
    if (st->play_rate == 1.0f) break;
    usleep(10000);
  }
  assert_float_equal(st->play_rate, 1.0f, 0.0f);
  anim_character_state_free(st);
  assert_int_equal(anim_client_characters_destroy(fx.client, ids, N, TIMEOUT_MS), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_skeleton_and_errors),
      cmocka_unit_test(test_inputs_and_stream_quality),
      cmocka_unit_test(test_steered_feet),
      cmocka_unit_test(test_play_rate),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
