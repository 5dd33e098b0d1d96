/*
 * test_lmm_for.c: networks trained on a database (anim_lmm_networks_create_for,
 * issue 37) fitted to the embedded default database: 22 bones, 2 contacts,
 * 27 features, so a decompressor of 15 * 21 + 6 + 2 = 323 outputs.
 *
 * Invalid inputs first: each size that does not fit refused with ANIM_EFORMAT
 * naming the file and the sizes, a database without features or contacts
 * refused with ANIM_EINVAL, the networks left to the caller. Then the layout
 * taken from the database (skeleton, contact bones, trajectory terms and
 * times, normalization, frame rate), and a character of small random
 * networks ticking on it: bone lengths exactly the skeleton's (every bone
 * below the Hips is constant in the decompressor's output std), positions
 * finite, a batch equal to single ticks. The trained networks' pipeline is
 * tests/interop/test_lmm_train.py.
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
#include "random_nnet.h"
#include "anim_error.h"
#include "learned/lmm.h"
#include "offline/procgen.h"

static anim_database_t db;
static uint32_t rng_state = 12345u;

static float uniform(void) {
  rng_state ^= rng_state << 13, rng_state ^= rng_state >> 17, rng_state ^= rng_state << 5;
  return ((float)(rng_state >> 8) + 0.5f) / 8388608.0f - 1.0f;
}

/* A random network nin -> 16 -> nout; output std 0 on [zero_from, zero_to)
 * (constant outputs: the decompressor's bone offsets), output mean out_mean
 * there (NULL: 0). */
static anim_nnet_t *network(int nin, int nout, int zero_from, int zero_to, const float *out_mean) {
  anim_test_nnet_shape_t shape = {16, 0.05f, zero_from, zero_to, out_mean, uniform};
  return anim_test_random_nnet(nin, nout, &shape);
}

/* Decompressor outputs of the default database: the skeleton's offsets as
 * the position means (bones 2.., constant), identity rotations. */
static anim_nnet_t *decompressor(int nin, int nout) {
  float mean[512] = {0};
  int nb = db.nbones - 1;
  for (int b = 1; b <= nb && 3 * nb <= nout; b++) {
    mean[3 * (b - 1)] = db.skeleton.offsets[b].x, mean[3 * (b - 1) + 1] = db.skeleton.offsets[b].y;
    mean[3 * (b - 1) + 2] = db.skeleton.offsets[b].z;
    if (nout >= 9 * nb) mean[3 * nb + 6 * (b - 1)] = 1.0f, mean[3 * nb + 6 * (b - 1) + 3] = 1.0f;
  }
  return network(nin, nout, 3, 3 * nb, mean);
}

static void expect_refused(int p_in, int p_out, int s_in, int s_out, int d_in, int d_out, const char *part) {
  anim_nnet_t *p = network(p_in, p_out, 0, 0, NULL), *s = network(s_in, s_out, 0, 0, NULL);
  anim_nnet_t *d = decompressor(d_in, d_out);
  char err[256] = "";
  int code = 0;
  assert_null(anim_lmm_networks_create_for(p, s, d, &db, &code, err, sizeof err));
  assert_int_equal(code, ANIM_EFORMAT);
  if (!strstr(err, part)) fail_msg("\"%s\" does not name \"%s\"", err, part);
  anim_nnet_free(p), anim_nnet_free(s), anim_nnet_free(d); /* still the caller's */
}

static void test_networks_that_do_not_fit(void **state) {
  (void)state;
  expect_refused(26, 59, 59, 59, 59, 323, "projector.bin takes 26 inputs, database default has 27 features");
  expect_refused(27, 27, 27, 27, 27, 323, "projector.bin gives 27 outputs");
  expect_refused(27, 65, 65, 65, 65, 323, "projector.bin gives 65 outputs");
  expect_refused(27, 59, 58, 59, 59, 323, "stepper.bin maps 58 to 59");
  expect_refused(27, 59, 59, 59, 58, 323, "decompressor.bin takes 58 inputs");
  expect_refused(27, 59, 59, 59, 59, 338,
                 "decompressor.bin gives 338 outputs, database default's 22 bones and 2 contacts need 323");
  /* A database without contacts or features. */
  anim_database_t bare = db;
  anim_nnet_t *p = network(27, 59, 0, 0, NULL), *s = network(59, 59, 0, 0, NULL), *d = decompressor(59, 323);
  char err[256];
  int code = 0;
  bare.ncontacts = 0;
  assert_null(anim_lmm_networks_create_for(p, s, d, &bare, &code, err, sizeof err));
  assert_int_equal(code, ANIM_EINVAL);
  assert_non_null(strstr(err, "no contact bones"));
  bare = db, bare.features.values = NULL;
  assert_null(anim_lmm_networks_create_for(p, s, d, &bare, &code, err, sizeof err));
  assert_int_equal(code, ANIM_EINVAL);
  assert_non_null(strstr(err, "no matching features"));
  assert_null(anim_lmm_networks_create_for(p, s, d, NULL, &code, err, sizeof err));
  assert_int_equal(code, ANIM_EINVAL);
  anim_nnet_free(p), anim_nnet_free(s), anim_nnet_free(d);
  /* A folder without the files. */
  assert_null(anim_lmm_networks_load_for("/nonexistent", &db, &code, err, sizeof err));
  assert_int_equal(code, ANIM_EIO);
  assert_non_null(strstr(err, "projector.bin"));
}

static anim_lmm_networks_t *fitting(void) {
  anim_nnet_t *p = network(27, 59, 0, 0, NULL), *s = network(59, 59, 0, 0, NULL), *d = decompressor(59, 323);
  char err[256];
  int code = -1;
  anim_lmm_networks_t *nets = anim_lmm_networks_create_for(p, s, d, &db, &code, err, sizeof err);
  if (!nets) fail_msg("%s", err);
  assert_int_equal(code, 0);
  return nets;
}

static void test_layout_from_the_database(void **state) {
  (void)state;
  anim_lmm_networks_t *nets = fitting();
  assert_int_equal(nets->nbones, 22);
  assert_int_equal(nets->nfeatures, 27);
  assert_int_equal(nets->ncontacts, 2);
  assert_int_equal(nets->npose, 323);
  assert_int_equal(nets->nstate, 59);
  assert_string_equal(nets->database, "default");
  assert_true(nets->frame_rate == db.frame_rate);
  for (int c = 0; c < 2; c++) assert_int_equal(nets->contact_bones[c], db.contact_bones[c]);
  for (int b = 0; b < db.nbones; b++) {
    assert_string_equal(nets->skeleton.names[b], db.skeleton.names[b]);
    assert_int_equal(nets->skeleton.parents[b], db.skeleton.parents[b]);
  }
  /* Bones 2.. constant (output std 0); the Hips not. */
  assert_true(nets->constant_bones == (((1ull << 22) - 1ull) & ~3ull));
  assert_int_equal(nets->ntrajectory, 2);
  assert_int_equal(nets->trajectory[0].first, 15);
  assert_int_equal(nets->trajectory[0].direction, 0);
  assert_int_equal(nets->trajectory[1].first, 21);
  assert_int_equal(nets->trajectory[1].direction, 1);
  for (int i = 0; i < 3; i++) assert_true(fabsf(nets->trajectory[0].times[i] - (i + 1) / 3.0f) < 1e-6f);
  for (int j = 0; j < 27; j++)
    assert_true(nets->normalization.offset[j] == db.features.offset[j] &&
                nets->normalization.scale[j] == db.features.scale[j]);
  anim_lmm_networks_free(nets);
}

static void test_characters_tick(void **state) {
  (void)state;
  anim_lmm_networks_t *nets = fitting();
  enum { N = 3 };
  anim_lmm_character_t *cs = calloc(N + 1, sizeof *cs);
  float *scratch = malloc(anim_lmm_scratch_floats(nets, N) * sizeof *scratch);
  for (int i = 0; i <= N; i++) {
    assert_int_equal(anim_lmm_character_init(&cs[i], nets, NULL, vec3_make(2.0f * (float)(i % N), 0, 0), 0.0f, scratch), 0);
    assert_int_equal(anim_lmm_character_feet(&cs[i], &db), 0);
    anim_controller_input_t in = {.kind = ANIM_INPUT_STICK};
    in.stick_z = 0.5f + 0.25f * (float)(i % N);
    assert_int_equal(anim_lmm_set_input(&cs[i], &in), 0);
  }
  anim_lmm_character_t *batch[N] = {&cs[0], &cs[1], &cs[2]};
  double worst = 0.0;
  for (int t = 0; t < 120; t++) {
    assert_int_equal(anim_lmm_tick_batch(batch, N, 1.0f / 60.0f, scratch), 0);
    assert_int_equal(anim_lmm_tick(&cs[N], 1.0f / 60.0f, scratch), 0); /* cs[N] is cs[0] ticked alone */
    for (int i = 0; i < N; i++) {
      anim_lmm_global_pose(&cs[i]);
      for (int b = 2; b < nets->nbones; b++) {
        int p = nets->skeleton.parents[b];
        float len = vec3_length(vec3_sub(cs[i].global_positions[b], cs[i].global_positions[p]));
        assert_true(isfinite(len));
        double d = fabs((double)len - (double)vec3_length(db.skeleton.offsets[b]));
        if (d > worst) worst = d;
      }
    }
  }
  printf("3 characters on random networks of the default database, 120 ticks: bone lengths within %.2g m\n", worst);
  assert_true(worst < 1e-4);
  for (int b = 0; b < nets->nbones; b++)
    assert_true(vec3_length(vec3_sub(cs[0].pose.positions[b], cs[N].pose.positions[b])) < 1e-5f);
  free(scratch);
  free(cs);
  anim_lmm_networks_free(nets);
}

static int setup(void **state) {
  (void)state;
  char err[256];
  return anim_procgen_database(&db, NULL, err, sizeof err);
}

static int teardown(void **state) {
  (void)state;
  anim_database_free(&db);
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_networks_that_do_not_fit),
      cmocka_unit_test(test_layout_from_the_database),
      cmocka_unit_test(test_characters_tick),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
