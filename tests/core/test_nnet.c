/*
 * test_nnet.c: the network files and their evaluation (nnet.h, gemm.h).
 *
 * Damaged files first, on a small network written here: every truncation,
 * a trailing byte, a NaN and an infinity in every array and layer, a zero
 * input std, negative counts and widths, shapes that do not chain, a layer
 * count out of range, sizes that would overflow; each refused with its code
 * and a message naming the part. Then the kernels: every available kernel
 * against a double-precision reference on odd shapes (one row, fewer rows
 * than a block, many rows; zeros in the input for the one-row path), batch
 * rows equal to single rows; the real networks of ../shared/data/lmm: their
 * shapes, every kernel against the reference, and PyTorch's outputs on the
 * same weights and inputs (bench/lmm_torch.py under /usr/bin/python3; under
 * CI=true a missing torch is a failure).
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
#include "anim_error.h"
#include "learned/nnet.h"
#include "shared_data.h"

/* Agreement with the double-precision reference: float32 sums of up to 512
 * products differ from the exact sum by a few ulps of the sum of |terms|
 * (bounded by k * eps * sum|terms| in the worst case; 1e-5 relative to the
 * magnitude is ~100 ulps, far above what different summation orders and
 * FMA give, far below any indexing mistake). */
#define REL_TOL 1e-5
/* Agreement with PyTorch, relative to each output's scale (|value| + std):
 * both are float32 with different summation orders and normalization steps. */
#define TORCH_TOL 1e-4

/* ---- a small network written in memory -------------------------------------------------------- */

typedef struct {
  unsigned char *bytes;
  size_t len, cap;
  /* Offsets of each count and of the first value of each array. */
  size_t array_count[4], array_values[4], layer_count;
  size_t rows[ANIM_NNET_MAX_LAYERS], cols[ANIM_NNET_MAX_LAYERS], weights[ANIM_NNET_MAX_LAYERS];
  size_t bias_count[ANIM_NNET_MAX_LAYERS], bias_values[ANIM_NNET_MAX_LAYERS];
} file_t;

static void put(file_t *f, const void *p, size_t n) {
  if (f->len + n > f->cap) {
    f->cap = (f->len + n) * 2;
    f->bytes = realloc(f->bytes, f->cap);
    assert_non_null(f->bytes);
  }
  memcpy(f->bytes + f->len, p, n);
  f->len += n;
}
static void put_i32(file_t *f, int32_t v) { put(f, &v, 4); }
static void put_f32(file_t *f, float v) { put(f, &v, 4); }

static unsigned rng_state = 12345u;
static float uniform(void) { /* (-1, 1) */
  rng_state ^= rng_state << 13, rng_state ^= rng_state >> 17, rng_state ^= rng_state << 5;
  return ((float)(rng_state >> 8) + 0.5f) / 8388608.0f - 1.0f;
}

/* A network widths[0] -> widths[1] -> ... -> widths[nlayers] with random weights. */
static file_t write_network(const int *widths, int nlayers) {
  file_t f;
  memset(&f, 0, sizeof f);
  int nin = widths[0], nout = widths[nlayers];
  for (int a = 0; a < 4; a++) {
    int n = a < 2 ? nin : nout;
    f.array_count[a] = f.len;
    put_i32(&f, n);
    f.array_values[a] = f.len;
    for (int i = 0; i < n; i++) put_f32(&f, a % 2 ? 0.5f + 0.25f * (uniform() + 1.0f) : 0.3f * uniform());
  }
  f.layer_count = f.len;
  put_i32(&f, nlayers);
  for (int l = 0; l < nlayers; l++) {
    f.rows[l] = f.len;
    put_i32(&f, widths[l]);
    f.cols[l] = f.len;
    put_i32(&f, widths[l + 1]);
    f.weights[l] = f.len;
    for (int i = 0; i < widths[l] * widths[l + 1]; i++) put_f32(&f, uniform() / sqrtf((float)widths[l]));
    f.bias_count[l] = f.len;
    put_i32(&f, widths[l + 1]);
    f.bias_values[l] = f.len;
    for (int i = 0; i < widths[l + 1]; i++) put_f32(&f, 0.1f * uniform());
  }
  return f;
}

static const int small_widths[] = {3, 5, 7, 4};
#define SMALL_LAYERS 3

static int parse_code(const void *bytes, size_t len, char *err, int errlen) {
  int code = 1;
  anim_nnet_t *nn = anim_nnet_parse(bytes, len, "small.bin", &code, err, errlen);
  if (nn) {
    assert_int_equal(code, 0);
    anim_nnet_free(nn);
    return 0;
  }
  assert_true(code < 0);
  return code;
}

/* A copy of f with the int32 at offset replaced. */
static int parse_with_i32(const file_t *f, size_t offset, int32_t v, char *err, int errlen) {
  unsigned char *copy = malloc(f->len);
  memcpy(copy, f->bytes, f->len);
  memcpy(copy + offset, &v, 4);
  int code = parse_code(copy, f->len, err, errlen);
  free(copy);
  return code;
}
static int parse_with_f32(const file_t *f, size_t offset, float v, char *err, int errlen) {
  int32_t bits;
  memcpy(&bits, &v, 4);
  return parse_with_i32(f, offset, bits, err, errlen);
}

static void assert_message(const char *err, const char *part) {
  if (!strstr(err, part)) fail_msg("message \"%s\" does not name \"%s\"", err, part);
}

/* ---- damaged files ---------------------------------------------------------------------------- */

static void test_valid_small_file(void **state) {
  (void)state;
  file_t f = write_network(small_widths, SMALL_LAYERS);
  char err[256];
  int code = 1;
  anim_nnet_t *nn = anim_nnet_parse(f.bytes, f.len, "small.bin", &code, err, sizeof err);
  assert_non_null(nn);
  assert_int_equal(code, 0);
  assert_int_equal(nn->ninputs, 3);
  assert_int_equal(nn->noutputs, 4);
  assert_int_equal(nn->nlayers, 3);
  assert_int_equal(nn->layers[1].rows, 5);
  assert_int_equal(nn->layers[1].cols, 7);
  /* The packed weights are the file's, element by element. */
  for (int l = 0; l < SMALL_LAYERS; l++)
    for (int r = 0; r < small_widths[l]; r++)
      for (int c = 0; c < small_widths[l + 1]; c++) {
        float v;
        memcpy(&v, f.bytes + f.weights[l] + 4 * ((size_t)r * (size_t)small_widths[l + 1] + (size_t)c), 4);
        assert_true(anim_nnet_weight(nn, l, r, c) == v);
      }
  anim_nnet_free(nn);
  free(f.bytes);
}

static void test_truncated_everywhere(void **state) {
  (void)state;
  file_t f = write_network(small_widths, SMALL_LAYERS);
  char err[256];
  for (size_t len = 0; len < f.len; len++) {
    unsigned char *prefix = malloc(len ? len : 1); /* exact size: ASan sees any read past it */
    memcpy(prefix, f.bytes, len);
    int code = parse_code(prefix, len, err, sizeof err);
    free(prefix);
    if (code != ANIM_ETRUNCATED) fail_msg("prefix of %zu/%zu bytes: code %d (%s)", len, f.len, code, err);
    assert_message(err, "small.bin");
  }
  free(f.bytes);
}

static void test_trailing_bytes(void **state) {
  (void)state;
  file_t f = write_network(small_widths, SMALL_LAYERS);
  char err[256];
  put_i32(&f, 0);
  assert_int_equal(parse_code(f.bytes, f.len, err, sizeof err), ANIM_EFORMAT);
  assert_message(err, "after the last layer");
  free(f.bytes);
}

static void test_nonfinite_values(void **state) {
  (void)state;
  file_t f = write_network(small_widths, SMALL_LAYERS);
  char err[256];
  const char *arrays[4] = {"input mean", "input std", "output mean", "output std"};
  float bad[2] = {NAN, INFINITY};
  for (int b = 0; b < 2; b++) {
    for (int a = 0; a < 4; a++) {
      assert_int_equal(parse_with_f32(&f, f.array_values[a] + 4, bad[b], err, sizeof err), ANIM_ENONFINITE);
      assert_message(err, arrays[a]);
    }
    for (int l = 0; l < SMALL_LAYERS; l++) {
      char what[32];
      /* The last weight and the last bias of each layer. */
      size_t last = f.weights[l] + 4 * ((size_t)small_widths[l] * (size_t)small_widths[l + 1] - 1);
      assert_int_equal(parse_with_f32(&f, last, bad[b], err, sizeof err), ANIM_ENONFINITE);
      snprintf(what, sizeof what, "layer %d weights", l);
      assert_message(err, what);
      assert_int_equal(parse_with_f32(&f, f.bias_values[l], -bad[b], err, sizeof err), ANIM_ENONFINITE);
      snprintf(what, sizeof what, "layer %d biases", l);
      assert_message(err, what);
    }
  }
  free(f.bytes);
}

static void test_std_out_of_range(void **state) {
  (void)state;
  file_t f = write_network(small_widths, SMALL_LAYERS);
  char err[256];
  /* An input std of 0 would divide by zero. */
  assert_int_equal(parse_with_f32(&f, f.array_values[1], 0.0f, err, sizeof err), ANIM_EFORMAT);
  assert_message(err, "input std");
  assert_int_equal(parse_with_f32(&f, f.array_values[1], 1e-39f, err, sizeof err), ANIM_EFORMAT); /* 1/std overflows */
  assert_message(err, "input std");
  assert_int_equal(parse_with_f32(&f, f.array_values[3], -1.0f, err, sizeof err), ANIM_EFORMAT);
  assert_message(err, "output std");
  /* An output std of 0 is a constant output (the decompressor has them). */
  assert_int_equal(parse_with_f32(&f, f.array_values[3], 0.0f, err, sizeof err), 0);
  free(f.bytes);
}

static void test_bad_counts_and_shapes(void **state) {
  (void)state;
  file_t f = write_network(small_widths, SMALL_LAYERS);
  char err[256];
  /* Counts out of 1..ANIM_NNET_MAX_WIDTH. */
  int32_t bad_counts[] = {0, -1, -2147483647 - 1, ANIM_NNET_MAX_WIDTH + 1, 2147483647};
  for (size_t i = 0; i < sizeof bad_counts / sizeof *bad_counts; i++) {
    assert_int_equal(parse_with_i32(&f, f.array_count[0], bad_counts[i], err, sizeof err), ANIM_EFORMAT);
    assert_message(err, "input mean");
    assert_int_equal(parse_with_i32(&f, f.rows[1], bad_counts[i], err, sizeof err), ANIM_EFORMAT);
    assert_message(err, "layer 1 rows");
    assert_int_equal(parse_with_i32(&f, f.cols[2], bad_counts[i], err, sizeof err), ANIM_EFORMAT);
    assert_message(err, "layer 2 cols");
  }
  /* Layer counts out of 1..ANIM_NNET_MAX_LAYERS. */
  assert_int_equal(parse_with_i32(&f, f.layer_count, 0, err, sizeof err), ANIM_EFORMAT);
  assert_message(err, "layer count");
  assert_int_equal(parse_with_i32(&f, f.layer_count, ANIM_NNET_MAX_LAYERS + 1, err, sizeof err), ANIM_EFORMAT);
  assert_int_equal(parse_with_i32(&f, f.layer_count, -3, err, sizeof err), ANIM_EFORMAT);
  /* More layers than the file holds: the fourth layer's rows are missing. */
  assert_int_equal(parse_with_i32(&f, f.layer_count, 4, err, sizeof err), ANIM_ETRUNCATED);
  assert_message(err, "layer 3 rows");
  /* Shapes that do not chain. The std count differs from the mean's. */
  assert_int_equal(parse_with_i32(&f, f.array_count[1], 2, err, sizeof err), ANIM_EFORMAT);
  assert_message(err, "input std");
  assert_int_equal(parse_with_i32(&f, f.array_count[3], 3, err, sizeof err), ANIM_EFORMAT);
  assert_message(err, "output std");
  /* Layer 0's rows differ from the inputs, layer 1's from layer 0's cols. */
  assert_int_equal(parse_with_i32(&f, f.rows[0], 4, err, sizeof err), ANIM_EFORMAT);
  assert_message(err, "layer 0");
  assert_int_equal(parse_with_i32(&f, f.rows[1], 4, err, sizeof err), ANIM_EFORMAT);
  assert_message(err, "layer 1");
  /* A bias count that is not the layer's cols. */
  assert_int_equal(parse_with_i32(&f, f.bias_count[1], 6, err, sizeof err), ANIM_EFORMAT);
  assert_message(err, "layer 1 biases");
  /* The last layer's outputs (3) differ from the output normalization's (4). */
  {
    int w[] = {3, 5, 7, 3};
    file_t g = write_network(w, SMALL_LAYERS);
    file_t h; /* g with output arrays of 4 values */
    memset(&h, 0, sizeof h);
    put(&h, g.bytes, g.array_count[2]);
    for (int a = 2; a < 4; a++) {
      put_i32(&h, 4);
      for (int i = 0; i < 4; i++) put_f32(&h, 0.5f);
    }
    put(&h, g.bytes + g.layer_count, g.len - g.layer_count);
    assert_int_equal(parse_code(h.bytes, h.len, err, sizeof err), ANIM_EFORMAT);
    assert_message(err, "last layer");
    free(g.bytes);
    free(h.bytes);
  }
  /* Huge but in-range shapes in a tiny file: refused as truncated before any
   * allocation (rows * cols floats cannot be there). */
  assert_int_equal(parse_with_i32(&f, f.cols[0], ANIM_NNET_MAX_WIDTH, err, sizeof err), ANIM_ETRUNCATED);
  assert_message(err, "layer 0 weights");
  free(f.bytes);
}

static void test_load_errors(void **state) {
  (void)state;
  char err[256];
  int code = 0;
  assert_null(anim_nnet_load("/nonexistent/net.bin", &code, err, sizeof err));
  assert_int_equal(code, ANIM_EIO);
  assert_message(err, "/nonexistent/net.bin");
  assert_null(anim_nnet_load("/tmp", &code, err, sizeof err));
  assert_int_equal(code, ANIM_EIO);
  /* A file on disk round-trips through load. */
  char path[] = "/tmp/nnet-test-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  file_t f = write_network(small_widths, SMALL_LAYERS);
  assert_int_equal(write(fd, f.bytes, f.len), (ssize_t)f.len);
  close(fd);
  anim_nnet_t *nn = anim_nnet_load(path, &code, err, sizeof err);
  assert_non_null(nn);
  assert_string_equal(nn->name, path + 5);
  anim_nnet_free(nn);
  unlink(path);
  free(f.bytes);
}

/* ---- the kernels against a reference ----------------------------------------------------------- */

/* The network in double precision, straight from the definition. */
static void reference_run(const anim_nnet_t *nn, const float *in, double *out) {
  double a[ANIM_NNET_MAX_WIDTH], b[ANIM_NNET_MAX_WIDTH];
  for (int j = 0; j < nn->ninputs; j++) a[j] = ((double)in[j] - nn->input_mean[j]) / nn->input_std[j];
  for (int l = 0; l < nn->nlayers; l++) {
    const anim_nnet_layer_t *layer = &nn->layers[l];
    for (int c = 0; c < layer->cols; c++) {
      double s = layer->bias[c];
      for (int r = 0; r < layer->rows; r++) s += a[r] * anim_nnet_weight(nn, l, r, c);
      b[c] = l + 1 < nn->nlayers && s < 0.0 ? 0.0 : s;
    }
    memcpy(a, b, (size_t)layer->cols * sizeof *a);
  }
  for (int j = 0; j < nn->noutputs; j++) out[j] = a[j] * nn->output_std[j] + nn->output_mean[j];
}

/* The magnitude an output's rounding error scales with: the sum of |terms|
 * through the network, approximated by running it on |weights| and |x|. */
static void reference_magnitude(const anim_nnet_t *nn, const float *in, double *out) {
  double a[ANIM_NNET_MAX_WIDTH], b[ANIM_NNET_MAX_WIDTH];
  for (int j = 0; j < nn->ninputs; j++) a[j] = fabs(((double)in[j] - nn->input_mean[j]) / nn->input_std[j]);
  for (int l = 0; l < nn->nlayers; l++) {
    const anim_nnet_layer_t *layer = &nn->layers[l];
    for (int c = 0; c < layer->cols; c++) {
      double s = fabs(layer->bias[c]);
      for (int r = 0; r < layer->rows; r++) s += a[r] * fabs(anim_nnet_weight(nn, l, r, c));
      b[c] = s;
    }
    memcpy(a, b, (size_t)layer->cols * sizeof *a);
  }
  for (int j = 0; j < nn->noutputs; j++) out[j] = a[j] * nn->output_std[j] + fabs(nn->output_mean[j]) + 1e-30;
}

/* Runs rows random inputs (a third of them zero, for the one-row path) through
 * every available kernel; each output within REL_TOL of the reference. */
static void check_kernels(const anim_nnet_t *nn, int rows, double input_scale) {
  float *in = malloc(sizeof(float) * (size_t)rows * (size_t)nn->ninputs);
  float *out = malloc(sizeof(float) * (size_t)rows * (size_t)nn->noutputs);
  float *scratch = malloc(sizeof(float) * anim_nnet_scratch_floats(nn, rows));
  double *ref = malloc(sizeof(double) * (size_t)rows * (size_t)nn->noutputs);
  double *mag = malloc(sizeof(double) * (size_t)rows * (size_t)nn->noutputs);
  for (int i = 0; i < rows * nn->ninputs; i++) {
    int j = i % nn->ninputs;
    float u = uniform();
    in[i] = fabsf(u) < 0.33f ? nn->input_mean[j] : nn->input_mean[j] + (float)input_scale * nn->input_std[j] * u;
  }
  for (int i = 0; i < rows; i++) {
    reference_run(nn, in + (size_t)i * (size_t)nn->ninputs, ref + (size_t)i * (size_t)nn->noutputs);
    reference_magnitude(nn, in + (size_t)i * (size_t)nn->ninputs, mag + (size_t)i * (size_t)nn->noutputs);
  }
  for (int k = 0; k < ANIM_GEMM_KERNEL_COUNT; k++) {
    if (!anim_gemm_kernel_available((anim_gemm_kernel_t)k)) continue;
    memset(out, 0xff, sizeof(float) * (size_t)rows * (size_t)nn->noutputs); /* NaN: unwritten outputs show */
    anim_nnet_run_kernel(nn, (anim_gemm_kernel_t)k, in, nn->ninputs, out, nn->noutputs, rows, scratch);
    double worst = 0.0;
    int worst_i = 0;
    for (int i = 0; i < rows * nn->noutputs; i++) {
      double e = fabs(out[i] - ref[i]) / mag[i];
      if (!(e <= worst)) worst = isnan(e) ? INFINITY : e, worst_i = i;
    }
    if (!(worst <= REL_TOL))
      fail_msg("%s, kernel %s, %d rows: row %d output %d is %g, reference %g (error %g of magnitude %g)", nn->name,
               anim_gemm_kernel_name((anim_gemm_kernel_t)k), rows, worst_i / nn->noutputs, worst_i % nn->noutputs,
               (double)out[worst_i], ref[worst_i], worst, mag[worst_i]);
  }
  free(in), free(out), free(scratch), free(ref), free(mag);
}

static anim_nnet_t *parse_widths(const int *widths, int nlayers) {
  file_t f = write_network(widths, nlayers);
  char err[256];
  anim_nnet_t *nn = anim_nnet_parse(f.bytes, f.len, "random", NULL, err, sizeof err);
  free(f.bytes);
  if (!nn) fail_msg("%s", err);
  return nn;
}

static void test_kernels_against_reference(void **state) {
  (void)state;
  /* Widths below, at and above a panel (32) and odd ones; rows from one to
   * past several row blocks (12 for AVX-512, 6 for AVX2, 2 portable). */
  int shapes[][5] = {{1, 1, 1, 0, 0}, {3, 33, 5, 0, 0}, {59, 512, 338, 0, 0}, {27, 64, 31, 32, 59}, {7, 100, 0, 0, 0}};
  int rows[] = {1, 2, 5, 12, 13, 25, 100};
  for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
    int n = 0;
    while (n < 5 && shapes[s][n]) n++;
    anim_nnet_t *nn = parse_widths(shapes[s], n - 1);
    for (size_t r = 0; r < sizeof rows / sizeof *rows; r++) check_kernels(nn, rows[r], 1.5);
    anim_nnet_free(nn);
  }
}

/* A batch computes what each row alone computes (the one-row path and the
 * blocked path agree), and in and out may share a buffer. */
static void test_batch_equals_rows(void **state) {
  (void)state;
  int widths[] = {59, 512, 512, 59};
  anim_nnet_t *nn = parse_widths(widths, 3);
  enum { ROWS = 37 };
  float in[ROWS * 59], batch[ROWS * 59], single[59];
  float *scratch = malloc(sizeof(float) * anim_nnet_scratch_floats(nn, ROWS));
  for (int i = 0; i < ROWS * 59; i++) in[i] = 2.0f * uniform();
  anim_nnet_run(nn, in, 59, batch, 59, ROWS, scratch);
  for (int i = 0; i < ROWS; i++) {
    anim_nnet_run(nn, in + i * 59, 59, single, 59, 1, scratch);
    for (int j = 0; j < 59; j++)
      if (!(fabsf(single[j] - batch[i * 59 + j]) <= 1e-4f * (1.0f + fabsf(single[j]))))
        fail_msg("row %d output %d: alone %g, in the batch %g", i, j, (double)single[j], (double)batch[i * 59 + j]);
  }
  /* In place. */
  memcpy(single, in, sizeof single);
  anim_nnet_run(nn, single, 59, single, 59, 1, scratch);
  for (int j = 0; j < 59; j++) assert_true(fabsf(single[j] - batch[j]) <= 1e-4f * (1.0f + fabsf(batch[j])));
  free(scratch);
  anim_nnet_free(nn);
}

/* A network of selected outputs computes exactly those outputs of the
 * original (same kernels, same sums); bad selections are refused. */
static void test_select_outputs(void **state) {
  (void)state;
  int widths[] = {59, 512, 338};
  anim_nnet_t *nn = parse_widths(widths, 2);
  int outputs[] = {337, 0, 5, 100, 33, 34, 200, 5};
  enum { N = sizeof outputs / sizeof *outputs, ROWS = 15 };
  char err[128];
  int code = 0;
  anim_nnet_t *sel = anim_nnet_select_outputs(nn, outputs, N, &code, err, sizeof err);
  assert_non_null(sel);
  assert_int_equal(sel->noutputs, N);
  assert_true(sel->hash == nn->hash);
  float in[ROWS * 59], full[ROWS * 338], part[ROWS * N];
  float *scratch = malloc(sizeof(float) * anim_nnet_scratch_floats(nn, ROWS));
  for (int i = 0; i < ROWS * 59; i++) in[i] = uniform();
  for (int rows = 1; rows <= ROWS; rows += ROWS - 1) {
    anim_nnet_run(nn, in, 59, full, 338, rows, scratch);
    anim_nnet_run(sel, in, 59, part, N, rows, scratch);
    for (int i = 0; i < rows; i++)
      for (int j = 0; j < N; j++)
        if (part[i * N + j] != full[i * 338 + outputs[j]])
          fail_msg("%d rows: row %d selected output %d (output %d) is %g, the full network's %g", rows, i, j,
                   outputs[j], (double)part[i * N + j], (double)full[i * 338 + outputs[j]]);
  }
  int bad[] = {338};
  assert_null(anim_nnet_select_outputs(nn, bad, 1, &code, err, sizeof err));
  assert_int_equal(code, ANIM_EINVAL);
  assert_null(anim_nnet_select_outputs(nn, outputs, 0, &code, err, sizeof err));
  assert_int_equal(code, ANIM_EINVAL);
  free(scratch);
  anim_nnet_free(sel);
  anim_nnet_free(nn);
}

/* ---- the real networks ------------------------------------------------------------------------- */

static anim_nnet_t *load_shared(const char *file) {
  char rel[128], path[1024], err[256];
  snprintf(rel, sizeof rel, "data/lmm/%s", file);
  if (!anim_test_shared_path(path, sizeof path, rel)) return NULL;
  anim_nnet_t *nn = anim_nnet_load(path, NULL, err, sizeof err);
  if (!nn) fail_msg("%s", err);
  return nn;
}

static void test_real_networks(void **state) {
  (void)state;
  const char *files[3] = {"projector.bin", "stepper.bin", "decompressor.bin"};
  int shapes[3][2] = {{27, 59}, {59, 59}, {59, 338}};
  int layers[3] = {5, 3, 2};
  for (int i = 0; i < 3; i++) {
    anim_nnet_t *nn = load_shared(files[i]);
    if (!nn) return;
    assert_int_equal(nn->ninputs, shapes[i][0]);
    assert_int_equal(nn->noutputs, shapes[i][1]);
    assert_int_equal(nn->nlayers, layers[i]);
    check_kernels(nn, 1, 1.0);
    check_kernels(nn, 29, 1.0);
    anim_nnet_free(nn);
  }
}

/* PyTorch on the same weights (torch.nn.Linear layers built from the file by
 * bench/lmm_torch.py) and the same inputs. */
static int torch_available(void) {
  return system("/usr/bin/python3 -c 'import torch' > /dev/null 2>&1") == 0;
}

static void test_against_pytorch(void **state) {
  (void)state;
  char dir[1024];
  if (!anim_test_shared_path(dir, sizeof dir, "data/lmm")) return;
  if (!torch_available()) {
    const char *ci = getenv("CI");
    if (ci && strcmp(ci, "true") == 0) fail_msg("/usr/bin/python3 cannot import torch, and CI=true forbids skipping");
    printf("skipped: /usr/bin/python3 cannot import torch (Debian's python3-torch)\n");
    skip();
  }
  const char *files[3] = {"projector.bin", "stepper.bin", "decompressor.bin"};
  enum { ROWS = 50 };
  for (int n = 0; n < 3; n++) {
    anim_nnet_t *nn = load_shared(files[n]);
    float *in = malloc(sizeof(float) * ROWS * (size_t)nn->ninputs);
    float *ours = malloc(sizeof(float) * ROWS * (size_t)nn->noutputs);
    float *theirs = malloc(sizeof(float) * ROWS * (size_t)nn->noutputs);
    float *scratch = malloc(sizeof(float) * anim_nnet_scratch_floats(nn, ROWS));
    for (int i = 0; i < ROWS * nn->ninputs; i++) {
      int j = i % nn->ninputs;
      in[i] = nn->input_mean[j] + 1.5f * nn->input_std[j] * uniform();
    }
    char in_path[] = "/tmp/nnet-in-XXXXXX", out_path[] = "/tmp/nnet-out-XXXXXX", cmd[4096];
    int fi = mkstemp(in_path), fo = mkstemp(out_path);
    assert_true(fi >= 0 && fo >= 0);
    assert_int_equal(write(fi, in, sizeof(float) * ROWS * (size_t)nn->ninputs),
                     (ssize_t)(sizeof(float) * ROWS * (size_t)nn->ninputs));
    close(fi), close(fo);
    const char *src = getenv("ANIM_SOURCE_DIR");
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s/bench/lmm_torch.py eval %s/%s %s %s", src && *src ? src : ".", dir,
             files[n], in_path, out_path);
    assert_int_equal(system(cmd), 0);
    FILE *f = fopen(out_path, "rb");
    assert_non_null(f);
    assert_int_equal(fread(theirs, sizeof(float), ROWS * (size_t)nn->noutputs, f), ROWS * (size_t)nn->noutputs);
    fclose(f);
    unlink(in_path), unlink(out_path);
    for (int k = 0; k < ANIM_GEMM_KERNEL_COUNT; k++) {
      if (!anim_gemm_kernel_available((anim_gemm_kernel_t)k)) continue;
      for (int rows = 1; rows <= ROWS; rows += ROWS - 1) { /* the one-row path and the blocked path */
        anim_nnet_run_kernel(nn, (anim_gemm_kernel_t)k, in, nn->ninputs, ours, nn->noutputs, rows, scratch);
        for (int i = 0; i < rows * nn->noutputs; i++) {
          int j = i % nn->noutputs;
          double scale = fabs(theirs[i]) + nn->output_std[j] + 1e-6;
          if (!(fabs(ours[i] - theirs[i]) <= TORCH_TOL * scale))
            fail_msg("%s, kernel %s: row %d output %d is %g, PyTorch %g", files[n],
                     anim_gemm_kernel_name((anim_gemm_kernel_t)k), i / nn->noutputs, j, (double)ours[i],
                     (double)theirs[i]);
        }
      }
    }
    free(in), free(ours), free(theirs), free(scratch);
    anim_nnet_free(nn);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_valid_small_file),
      cmocka_unit_test(test_truncated_everywhere),
      cmocka_unit_test(test_trailing_bytes),
      cmocka_unit_test(test_nonfinite_values),
      cmocka_unit_test(test_std_out_of_range),
      cmocka_unit_test(test_bad_counts_and_shapes),
      cmocka_unit_test(test_load_errors),
      cmocka_unit_test(test_kernels_against_reference),
      cmocka_unit_test(test_batch_equals_rows),
      cmocka_unit_test(test_select_outputs),
      cmocka_unit_test(test_real_networks),
      cmocka_unit_test(test_against_pytorch),
  };
  return cmocka_run_group_tests_name("nnet", tests, NULL, NULL);
}
