/*
 * test_marker_fit_service.c: marker_fit over the wire, through the client
 * library, against the real server on an ephemeral port.
 *
 * Invalid requests first (each error names its field; nothing is answered
 * in part; the server carries on), then on GAMES-105's walk with markers on
 * its bones (one without an offset: found from the first frame): the
 * answer is the physics layer's own (physics/marker_fit.h run in this
 * process on the same database and markers, equal to float precision), its
 * arrays the documented sizes, the markers followed within 2 cm on average.
 */
#include <math.h>
#include <time.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "anim_client.h"
#include "anim_error.h"
#include "fixture.h"
#include "marker_fit.h"
#include "offline/feature_build.h"
#include "served_mocap.h"
#include "shared_data.h"

#define TIMEOUT_MS 60000
#define MAX_FRAMES 400 /* the server's --max-pose-frames here */
#define WALK "walk_forward"
#define MAX_MEAN_RESIDUAL 0.02 /* m */
#define NM 7
#define COST_FRAMES 10 /* a short clip: what the body model's build weighs on */
#define COST_REPEATS 8

static anim_test_fixture_t fx; /* the server with its data directory, the client */
static anim_client_t *client;  /* fx.client */
static anim_database_t db;
static int have_db;
static const anim_range_t *walk;
static anim_marker_desc_t markers[NM];
static anim_marker_t core_markers[NM];
static float *positions; /* the walk's markers, frames x NM x 3 */
static int nframes;

static int setup(void **state) {
  (void)state;
  const char *args[] = {"--max-pose-frames", "400", NULL};
  if (anim_test_fixture_start_data_dir(&fx, "marker_fit_service", "markers", args) != 0) return -1;
  client = fx.client;
  return 0;
}

static int teardown(void **state) {
  (void)state;
  int rc = anim_test_fixture_stop(&fx);
  if (have_db) anim_database_free(&db);
  free(positions);
  return rc == 0 ? 0 : -1;
}

/* GAMES-105 on the server as "games105", the markers of its walk; 0 after a skip. */
static int load(void) {
  if (have_db) return 1;
  if (!anim_test_serve_mocap(client, fx.data_dir, "games105", &db, TIMEOUT_MS)) return 0;
  have_db = 1;
  walk = anim_test_range_find(&db, WALK);
  /* Markers on bones spread over the body: every third below bone 1, each
   * 4 cm off its joint, the last one's offset left to be found. */
  int k = 0;
  for (int b = 2; b < db.nbones && k < NM; b += 3, k++) {
    markers[k] = (anim_marker_desc_t){db.skeleton.names[b], {0.04f, 0.02f, 0.0f}, k != NM - 1};
    core_markers[k] = (anim_marker_t){b, vec3_make(0.04f, 0.02f, 0.0f), k != NM - 1};
  }
  assert_int_equal(k, NM);
  nframes = walk->stop - walk->start;
  positions = malloc(sizeof(float) * 3 * (size_t)nframes * NM);
  for (int f = 0; f < nframes; f++)
    for (int i = 0; i < NM; i++) {
      size_t g = (size_t)(walk->start + f) * db.nbones + core_markers[i].bone;
      vec3 p = vec3_add(db.global_positions[g], quat_mul_vec3(db.global_rotations[g], core_markers[i].offset));
      memcpy(positions + 3 * ((size_t)f * NM + i), &p, sizeof p);
    }
  return 1;
}

static void expect_error(const anim_marker_desc_t *mk, int nm, const float *pos, const uint8_t *missing, int nf,
                         const anim_client_marker_fit_options_t *o, const char *database, int code, const char *contains) {
  anim_marker_fit_result_t *r = NULL;
  int rc = anim_client_marker_fit(client, database, mk, nm, pos, missing, nf, o, &r, TIMEOUT_MS);
  if (rc != code)
    fail_msg("%s: %s, want %s (%s)", contains, anim_strerror(rc), anim_strerror(code), anim_client_last_error(client));
  assert_null(r);
  printf("  %s\n", anim_client_last_error(client));
  if (!strstr(anim_client_last_error(client), contains))
    fail_msg("error \"%s\" does not name %s", anim_client_last_error(client), contains);
}

static void test_invalid(void **state) {
  (void)state;
  if (!load()) return;
  int nf = 10;
  expect_error(markers, NM, positions, NULL, nf, NULL, "nosuch", ANIM_ENOTFOUND, "nosuch");
  anim_marker_desc_t bad[NM];
  memcpy(bad, markers, sizeof bad);
  bad[2].bone = "Tail";
  expect_error(bad, NM, positions, NULL, nf, NULL, "games105", ANIM_ENOTFOUND, "markers[2].bone");
  memcpy(bad, markers, sizeof bad);
  bad[1].bone = db.skeleton.names[0]; /* bone 0: no body */
  expect_error(bad, NM, positions, NULL, nf, NULL, "games105", ANIM_EINVAL, "markers[1].bone");
  memcpy(bad, markers, sizeof bad);
  bad[3].offset[1] = 2.0f;
  expect_error(bad, NM, positions, NULL, nf, NULL, "games105", ANIM_EINVAL, "markers[3].offset");
  bad[3].offset[1] = NAN;
  expect_error(bad, NM, positions, NULL, nf, NULL, "games105", ANIM_ENONFINITE, "markers[3].offset");
  float *pos = malloc(sizeof(float) * 3 * (size_t)nf * NM);
  memcpy(pos, positions, sizeof(float) * 3 * (size_t)nf * NM);
  pos[3 * (4 * NM + 5) + 1] = NAN;
  expect_error(markers, NM, pos, NULL, nf, NULL, "games105", ANIM_ENONFINITE, "positions[4][5]");
  pos[3 * (4 * NM + 5) + 1] = 1e9f;
  expect_error(markers, NM, pos, NULL, nf, NULL, "games105", ANIM_EINVAL, "positions[4][5]");
  free(pos);
  uint8_t missing[10 * NM] = {0};
  for (int i = 0; i < NM - 2; i++) missing[i] = 1;
  expect_error(markers, NM, positions, missing, nf, NULL, "games105", ANIM_EINVAL, "first frame");
  /* One frame over the server's limit, every frame given (the client
   * sends what it is told there is). */
  float *many = calloc(3 * (size_t)(MAX_FRAMES + 1) * NM, sizeof *many);
  for (int f = 0; f <= MAX_FRAMES; f++)
    memcpy(many + 3 * (size_t)f * NM, positions + 3 * (size_t)(f % nframes) * NM, 3 * NM * sizeof *many);
  expect_error(markers, NM, many, NULL, MAX_FRAMES + 1, NULL, "games105", ANIM_ELIMIT, "frames");
  free(many);
  anim_client_marker_fit_options_t o = {.marker_halflife = 5.0f};
  expect_error(markers, NM, positions, NULL, nf, &o, "games105", ANIM_EINVAL, "marker_halflife");
  o = (anim_client_marker_fit_options_t){.scale = 2.0f, .estimate_scale = 1};
  expect_error(markers, NM, positions, NULL, nf, &o, "games105", ANIM_EINVAL, "scale");
  o = (anim_client_marker_fit_options_t){.total_mass = NAN};
  expect_error(markers, NM, positions, NULL, nf, &o, "games105", ANIM_EINVAL, "anim_client_marker_fit");
  /* The server carries on. */
  uint64_t rtt;
  assert_int_equal(anim_client_ping(client, NULL, 0, &rtt, TIMEOUT_MS), 0);
}

static void test_walk(void **state) {
  (void)state;
  if (!load()) return;
  anim_marker_fit_result_t *r = NULL;
  int rc = anim_client_marker_fit(client, "games105", markers, NM, positions, NULL, nframes, NULL, &r, TIMEOUT_MS);
  if (rc) fail_msg("%s: %s", anim_strerror(rc), anim_client_last_error(client));
  assert_int_equal(r->nframes, nframes);
  assert_int_equal(r->nbones, db.nbones);
  assert_int_equal(r->nmarkers, NM);
  assert_true(r->database_version == db.version);
  assert_string_equal(r->bones[1], db.skeleton.names[1]);
  assert_true(r->scale == 1.0f);

  /* The same fit in this process. */
  char err[256];
  anim_physics_model_t *model = anim_physics_model_create(&db, NULL, err, sizeof err);
  assert_non_null(model);
  anim_marker_fit_t *fit = anim_marker_fit_create(model, &db, core_markers, NM, NULL, err, sizeof err);
  if (!fit) fail_msg("%s", err);
  vec3 *lp = malloc(sizeof(vec3) * (size_t)nframes * db.nbones);
  quat *lq = malloc(sizeof(quat) * (size_t)nframes * db.nbones);
  float *res = malloc(sizeof(float) * (size_t)nframes * NM);
  assert_int_equal(anim_marker_fit_run(fit, (const vec3 *)positions, NULL, nframes, 1.0f / db.frame_rate, lp, lq, res, NULL,
                                       err, sizeof err),
                   0);
  double worst = 0, sum = 0;
  for (size_t k = 0; k < (size_t)nframes * db.nbones; k++) {
    worst = fmax(worst, fabs(lp[k].x - r->positions[3 * k]) + fabs(lp[k].y - r->positions[3 * k + 1]) +
                            fabs(lp[k].z - r->positions[3 * k + 2]));
    worst = fmax(worst, fabs(lq[k].w - r->rotations[4 * k]) + fabs(lq[k].x - r->rotations[4 * k + 1]));
  }
  for (size_t k = 0; k < (size_t)nframes * NM; k++) worst = fmax(worst, fabs(res[k] - r->residuals[k])), sum += res[k];
  vec3 offsets[NM];
  anim_marker_fit_offsets(fit, offsets);
  worst = fmax(worst, fabs(offsets[NM - 1].x - r->offsets[3 * (NM - 1)]));
  printf("  walk (%d frames, %d markers): mean residual %.2f cm (max %.2f cm at frame %d, marker %d), found offset "
         "(%.3f, %.3f, %.3f) m for (0.04, 0.02, 0); server vs in-process %.3g\n",
         nframes, NM, 100 * r->mean_residual, 100 * r->max_residual, r->worst_frame, r->worst_marker,
         (double)r->offsets[3 * (NM - 1)], (double)r->offsets[3 * (NM - 1) + 1], (double)r->offsets[3 * (NM - 1) + 2],
         worst);
  assert_true(worst < 1e-5);
  assert_true(fabs(sum / ((double)nframes * NM) - r->mean_residual) < 1e-4);
  assert_true(r->mean_residual < MAX_MEAN_RESIDUAL);
  free(lp), free(lq), free(res);
  anim_marker_fit_free(fit);
  anim_physics_model_free(model);
  anim_marker_fit_result_free(r);
}

/* The server's CPU time per request, mean over COST_REPEATS requests of a
 * short clip (COST_FRAMES). */
static double server_cpu_per_request(const anim_client_marker_fit_options_t *o) {
  double t0, t1;
  assert_int_equal(anim_test_server_cpu(&fx.server, &t0), 0);
  for (int k = 0; k < COST_REPEATS; k++) {
    anim_marker_fit_result_t *r = NULL;
    int rc = anim_client_marker_fit(client, "games105", markers, NM, positions, NULL, COST_FRAMES, o, &r, TIMEOUT_MS);
    if (rc) fail_msg("%s: %s", anim_strerror(rc), anim_client_last_error(client));
    anim_marker_fit_result_free(r);
  }
  assert_int_equal(anim_test_server_cpu(&fx.server, &t1), 0);
  return (t1 - t0) / COST_REPEATS;
}

/* A request at the database's own mass (70 kg) fits on the database's body
 * model (body_models.h), built once; one at another mass builds its own.
 * The difference is the build, measured here in-process. */
static void test_shared_model(void **state) {
  (void)state;
  if (!load()) return;
  double build = INFINITY;
  for (int k = 0; k < 3; k++) {
    struct timespec a, b;
    char err[256];
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
    anim_physics_model_t *model = anim_physics_model_create(&db, NULL, err, sizeof err);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
    assert_non_null(model);
    anim_physics_model_free(model);
    build = fmin(build, (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec));
  }
  anim_client_marker_fit_options_t heavy = {0};
  heavy.total_mass = 80;
  double own = server_cpu_per_request(&heavy), shared = server_cpu_per_request(NULL);
  printf("  server CPU per request (%d frames, %d markers, mean of %d): %.1f ms building its own 80 kg model, %.1f ms "
         "on the database's 70 kg one; a model build in this process %.1f ms\n",
         COST_FRAMES, NM, COST_REPEATS, 1e3 * own, 1e3 * shared, 1e3 * build);
  assert_true(own - shared > 0.5 * build);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_invalid),
      cmocka_unit_test(test_walk),
      cmocka_unit_test(test_shared_model),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
