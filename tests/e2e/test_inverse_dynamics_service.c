/*
 * test_inverse_dynamics_service.c: inverse_dynamics over the wire, through
 * the client library, against the real server on an ephemeral port.
 *
 * Invalid requests first (each error names its field; the server carries
 * on), then on GAMES-105's walk: the answer is the physics layer's own
 * (physics/inverse_dynamics.h run in this process on the same database,
 * equal to float precision), its arrays the documented sizes, and the
 * ground carries the body's weight on average. Then a character's recent
 * motion: a motion-matching character walks on GAMES-105 for some seconds
 * with its history on; its last seconds' ground forces carry its weight
 * (the walk's tolerance), frames align with the history's ticks (the
 * centre of mass over the root the history recorded at that tick, not at
 * one a quarter second off), and bad spans (ticks not yet shown or no
 * longer held, reversed, too long, history off, another connection's
 * character) are refused naming the field.
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
#include "offline/feature_build.h"
#include "fixture.h"
#include "inverse_dynamics.h"
#include "served_mocap.h"
#include "shared_data.h"

#define TIMEOUT_MS 60000
#define MAX_FRAMES 400 /* the server's --max-pose-frames here */
#define WALK "walk_forward"

static anim_test_fixture_t fx; /* the server with its data directory, the client */
static anim_client_t *client;  /* fx.client */
static anim_database_t db;
static int have_db;
static const anim_range_t *walk;

static int setup(void **state) {
  (void)state;
  const char *args[] = {"--max-pose-frames", "400", NULL};
  if (anim_test_fixture_start_data_dir(&fx, "inverse_dynamics_service", "idyn", args) != 0) return -1;
  client = fx.client;
  return 0;
}

static int teardown(void **state) {
  (void)state;
  int rc = anim_test_fixture_stop(&fx);
  if (have_db) anim_database_free(&db);
  return rc == 0 ? 0 : -1;
}

/* GAMES-105 on the server as "games105"; 0 after a skip. */
static int load(void) {
  if (have_db) return 1;
  if (!anim_test_serve_mocap(client, fx.data_dir, "games105", &db, TIMEOUT_MS)) return 0;
  have_db = 1;
  walk = anim_test_range_find(&db, WALK);
  return 1;
}

static void expect_error(const char *database, int start, int stop, const anim_inverse_dynamics_options_t *o, int code,
                         const char *contains) {
  anim_inverse_dynamics_t *r = NULL;
  int rc = anim_client_inverse_dynamics(client, database, start, stop, o, &r, TIMEOUT_MS);
  if (rc != code) fail_msg("[%d, %d): %s, want %s (%s)", start, stop, anim_strerror(rc), anim_strerror(code),
                           anim_client_last_error(client));
  assert_null(r);
  printf("  [%d, %d): %s\n", start, stop, anim_client_last_error(client));
  if (!strstr(anim_client_last_error(client), contains))
    fail_msg("error \"%s\" does not name %s", anim_client_last_error(client), contains);
}

static void test_invalid(void **state) {
  (void)state;
  if (!load()) return;
  expect_error("nosuch", 0, 10, NULL, ANIM_ENOTFOUND, "nosuch");
  expect_error("games105", 10, 10, NULL, ANIM_ERANGE, "stop");
  expect_error("games105", db.nframes - 5, db.nframes + 5, NULL, ANIM_ERANGE, "stop");
  expect_error("games105", walk->stop - 5, walk->stop + 5, NULL, ANIM_ERANGE, "stop");
  expect_error("games105", 0, MAX_FRAMES + 1, NULL, ANIM_ELIMIT, "stop");
  anim_inverse_dynamics_options_t o = {.contact_height = 5.0f};
  expect_error("games105", walk->start, walk->stop, &o, ANIM_EINVAL, "contact_height");
  o = (anim_inverse_dynamics_options_t){.step = 9};
  expect_error("games105", walk->start, walk->stop, &o, ANIM_EINVAL, "step");
  o = (anim_inverse_dynamics_options_t){.total_mass = NAN};
  expect_error("games105", walk->start, walk->stop, &o, ANIM_EINVAL, "anim_client_inverse_dynamics");
  /* The server carries on. */
  uint64_t rtt;
  assert_int_equal(anim_client_ping(client, NULL, 0, &rtt, TIMEOUT_MS), 0);
}

static void test_walk(void **state) {
  (void)state;
  if (!load()) return;
  anim_inverse_dynamics_t *r = NULL;
  anim_inverse_dynamics_options_t o = {.max_root_torque = 50.0f};
  assert_int_equal(anim_client_inverse_dynamics(client, "games105", walk->start, walk->stop, &o, &r, TIMEOUT_MS), 0);
  int n = walk->stop - walk->start;
  assert_int_equal(r->nframes, n);
  assert_int_equal(r->nbones, db.nbones);
  assert_int_equal(r->start, walk->start);
  assert_int_equal(r->step, 2);
  assert_true(r->database_version == db.version);
  assert_string_equal(r->bones[1], db.skeleton.names[1]);

  /* The same computation in this process. */
  char err[256];
  anim_physics_model_t *model = anim_physics_model_create(&db, NULL, err, sizeof err);
  assert_non_null(model);
  anim_idyn_options_t io;
  anim_idyn_options_default(model, &io);
  io.max_root_torque = 50.0f;
  anim_idyn_t *id = anim_idyn_create(model, &db, &io, err, sizeof err);
  assert_non_null(id);
  anim_idyn_frame_t *frames = calloc((size_t)n, sizeof *frames);
  vec3 *torques = calloc((size_t)n * db.nbones, sizeof *torques);
  anim_idyn_summary_t sum;
  assert_int_equal(anim_idyn_run(id, &db, walk->start, walk->stop, frames, torques, &sum, err, sizeof err), 0);
  double worst = 0, fy = 0;
  for (int i = 0; i < n; i++) {
    for (int s = 0; s < 2; s++) {
      vec3 f = frames[i].foot_force[s];
      worst = fmax(worst, fabs(f.x - r->foot_forces[6 * i + 3 * s]) + fabs(f.y - r->foot_forces[6 * i + 3 * s + 1]) +
                              fabs(f.z - r->foot_forces[6 * i + 3 * s + 2]));
      fy += r->foot_forces[6 * i + 3 * s + 1];
    }
    worst = fmax(worst, fabs(frames[i].residual_force.y - r->residual_forces[3 * i + 1]));
    worst = fmax(worst, fabs(frames[i].power - r->power[i]));
    for (int b = 0; b < db.nbones; b++)
      worst = fmax(worst, fabs(torques[(size_t)i * db.nbones + b].x - r->torques[((size_t)i * db.nbones + b) * 3]));
    assert_int_equal(r->over_limit[i], frames[i].over_limit != 0);
  }
  fy /= n * 70.0 * 9.81;
  printf("  games105 %s over the wire: %d frames, mean vertical ground force %.3f of weight, residual mean %.1f N / "
         "%.1f N m, %d frames over 50 N m; largest difference from the in-process run %.2g\n",
         WALK, n, fy, r->mean_residual_force, r->mean_residual_torque, r->frames_over_limit, worst);
  assert_true(worst < 1e-3);
  assert_int_equal(r->frames_over_limit, sum.frames_over_limit);
  assert_true(fabs(fy - 1) < 0.05);
  free(frames);
  free(torques);
  anim_idyn_free(id);
  anim_physics_model_free(model);
  anim_inverse_dynamics_free(r);
}

/* ---- a character's recent motion ------------------------------------------------------- */

#define WALK_SECONDS 5.5   /* the character walks this long before the question */
#define SPAN_SECONDS 4.0f  /* the span asked: its last seconds */
#define HISTORY_SECONDS 4.5f /* shorter than the walk: the oldest ticks are gone */

static void expect_span_error(anim_client_t *c, const anim_inverse_dynamics_span_t *span, int code,
                              const char *contains) {
  anim_inverse_dynamics_t *r = NULL;
  int rc = anim_client_inverse_dynamics_character(c, span, NULL, &r, TIMEOUT_MS);
  if (rc != code)
    fail_msg("character %llu, seconds %g, ticks %llu..%llu: %s, want %s (%s)", (unsigned long long)span->character,
             span->seconds, (unsigned long long)span->from_tick, (unsigned long long)span->to_tick,
             anim_strerror(rc), anim_strerror(code), anim_client_last_error(c));
  assert_null(r);
  printf("  %s\n", anim_client_last_error(c));
  if (!strstr(anim_client_last_error(c), contains))
    fail_msg("error \"%s\" does not name %s", anim_client_last_error(c), contains);
}

static void test_character(void **state) {
  (void)state;
  if (!load()) return;
  uint64_t id, quiet;
  assert_int_equal(anim_client_characters_create(client, "games105", NULL, NULL, 1, &id, TIMEOUT_MS), 0);
  assert_int_equal(anim_client_characters_create(client, "games105", NULL, NULL, 1, &quiet, TIMEOUT_MS), 0);
  /* History off, and a span before anything is recorded. */
  anim_inverse_dynamics_span_t span = {id, 1.0f, 0, 0};
  expect_span_error(client, &span, ANIM_ENOTFOUND, "history is off");
  anim_history_info_t info;
  assert_int_equal(anim_client_history_set(client, id, HISTORY_SECONDS, 1, &info, TIMEOUT_MS), 0);
  anim_character_input_t in;
  anim_character_input_stick(&in, 0.0f, 0.8f, 0.0f, 0);
  assert_int_equal(anim_client_characters_set_input(client, &id, &in, 1, NULL, TIMEOUT_MS), 0);
  span.seconds = 3.0f; /* more than it holds yet */
  expect_span_error(client, &span, ANIM_ERANGE, "seconds");
  usleep((useconds_t)(WALK_SECONDS * 1e6));

  /* Bad spans, each naming its field; nothing answered. */
  anim_character_history_t *h = NULL;
  anim_history_span_t last = {0, 0, 0.5f, 0, 0};
  assert_int_equal(anim_client_history_get(client, id, &last, &h, TIMEOUT_MS), 0);
  uint64_t newest = h->last_tick, oldest = h->first_tick;
  anim_character_history_free(h);
  span = (anim_inverse_dynamics_span_t){id, 0.0f, newest - 10, newest + 100};
  expect_span_error(client, &span, ANIM_ERANGE, "to_tick"); /* not yet shown */
  assert_true(oldest > 0);
  span = (anim_inverse_dynamics_span_t){id, 0.0f, oldest - 1, newest};
  expect_span_error(client, &span, ANIM_ERANGE, "from_tick"); /* no longer held */
  span = (anim_inverse_dynamics_span_t){id, 0.0f, newest, newest - 30};
  expect_span_error(client, &span, ANIM_ERANGE, "from_tick"); /* reversed */
  span = (anim_inverse_dynamics_span_t){id, 0.0f, newest, newest + MAX_FRAMES};
  expect_span_error(client, &span, ANIM_ELIMIT, "to_tick"); /* MAX_FRAMES + 1 ticks */
  span = (anim_inverse_dynamics_span_t){id, 0.0f, newest - 1, newest};
  expect_span_error(client, &span, ANIM_ERANGE, "to_tick"); /* 2 ticks */
  span = (anim_inverse_dynamics_span_t){id, HISTORY_SECONDS + 1.0f, 0, 0};
  expect_span_error(client, &span, ANIM_ERANGE, "seconds"); /* longer than the history */
  span = (anim_inverse_dynamics_span_t){quiet, 1.0f, 0, 0};
  expect_span_error(client, &span, ANIM_ENOTFOUND, "history is off");
  span = (anim_inverse_dynamics_span_t){987654321, 1.0f, 0, 0};
  expect_span_error(client, &span, ANIM_ENOTFOUND, "character");
  anim_client_t *other = anim_test_connect(&fx.server);
  assert_non_null(other);
  span = (anim_inverse_dynamics_span_t){id, 1.0f, 0, 0};
  expect_span_error(other, &span, ANIM_EPERM, "character");
  anim_client_close(other);

  /* The last seconds. */
  span = (anim_inverse_dynamics_span_t){id, SPAN_SECONDS, 0, 0};
  anim_inverse_dynamics_t *r = NULL;
  int rc = anim_client_inverse_dynamics_character(client, &span, NULL, &r, TIMEOUT_MS);
  if (rc) fail_msg("%s: %s", anim_strerror(rc), anim_client_last_error(client));
  int n = r->nframes;
  assert_int_equal(n, (int)lroundf(SPAN_SECONDS * 60.0f));
  assert_true(r->character == id);
  assert_true(r->frame_rate == 60.0f);
  assert_int_equal(r->start, 0);
  assert_int_equal(r->nbones, db.nbones);
  assert_int_equal(r->step, 2);
  /* The history over the same ticks: every tick it holds is a frame of the answer. */
  anim_history_span_t ticks = {r->first_tick, r->first_tick + (uint64_t)n - 1, 0.0f, 1, 0};
  assert_int_equal(anim_client_history_get(client, id, &ticks, &h, TIMEOUT_MS), 0);
  assert_int_equal(h->nticks + r->ticks_filled, n);
  double here = 0, off = 0, fy = 0, walked;
  int count = 0;
  const int lag = 15; /* ticks: a quarter second, 0.3 m of walking */
  for (int j = 0; j < h->nticks; j++) {
    int i = (int)(h->ticks[j].tick - r->first_tick);
    assert_true(i >= 0 && i < n);
    if (i + lag >= n) continue;
    const float *com = r->com + 3 * i, *root = h->ticks[j].root_position;
    here += hypot(com[0] - root[0], com[2] - root[2]);
    off += hypot(r->com[3 * (i + lag)] - root[0], r->com[3 * (i + lag) + 2] - root[2]);
    count++;
  }
  walked = hypot(h->ticks[h->nticks - 1].root_position[0] - h->ticks[0].root_position[0],
                 h->ticks[h->nticks - 1].root_position[2] - h->ticks[0].root_position[2]);
  for (int i = 0; i < n; i++) fy += r->foot_forces[6 * i + 1] + r->foot_forces[6 * i + 4];
  fy /= n * 70.0 * 9.81;
  printf("  character %llu walking: ticks %llu..%llu (%d filled), walked %.2f m; mean vertical ground force %.3f of "
         "weight, residual mean %.1f N / %.1f N m, %d frames over the limits; COM to the root of the same tick %.3f m, "
         "of %d ticks later %.3f m\n", (unsigned long long)id, (unsigned long long)r->first_tick,
         (unsigned long long)(r->first_tick + n - 1), r->ticks_filled, walked, fy, r->mean_residual_force,
         r->mean_residual_torque, r->frames_over_limit, here / count, lag, off / count);
  assert_true(count > n / 2);
  assert_true(walked > 2.0); /* it walked */
  assert_true(fabs(fy - 1) < 0.05);
  assert_true(here / count < 0.15 && here / count < 0.5 * off / count);
  anim_character_history_free(h);
  anim_inverse_dynamics_free(r);
  /* The server carries on. */
  uint64_t rtt;
  assert_int_equal(anim_client_ping(client, NULL, 0, &rtt, TIMEOUT_MS), 0);
  uint64_t ids[2] = {id, quiet};
  assert_int_equal(anim_client_characters_destroy(client, ids, 2, TIMEOUT_MS), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_invalid),
      cmocka_unit_test(test_walk),
      cmocka_unit_test(test_character),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
