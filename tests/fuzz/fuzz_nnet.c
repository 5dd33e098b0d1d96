/*
 * fuzz_nnet.c: libFuzzer target for the network file loader (anim_nnet_parse)
 * and for evaluating what it accepts.
 *
 * The input is copied into a malloc'd block of exactly its size (ASan sees
 * any read past the end) and parsed. A network that parses must obey the
 * rules of nnet.h: its shapes chain from the input normalization to the
 * output normalization; every weight reads back as the float at its place in
 * the file (row-major after the layer's rows and cols); input stds are > 0.
 * It is then evaluated on one row and on three rows (the one-row and the
 * blocked kernels) with every available kernel; when the outputs are finite
 * and moderate, row 0 of the three-row run equals the one-row run.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "learned/nnet.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static float file_float(const uint8_t *p) {
  float v;
  memcpy(&v, p, sizeof v);
  return v;
}

static void check_shapes_and_weights(const anim_nnet_t *nn, const uint8_t *bytes) {
  if (nn->nlayers < 1 || nn->nlayers > ANIM_NNET_MAX_LAYERS) abort();
  if (nn->layers[0].rows != nn->ninputs || nn->layers[nn->nlayers - 1].cols != nn->noutputs) abort();
  for (int j = 0; j < nn->ninputs; j++)
    if (!(nn->input_std[j] > 0.0f) || !isfinite(nn->input_scale[j])) abort();
  /* Layer l's weights start after the four arrays, the layer count and, per
   * earlier layer, rows/cols, weights and the bias array. */
  size_t pos = 4 * 4 + 4 * (2 * (size_t)nn->ninputs + 2 * (size_t)nn->noutputs) + 4;
  for (int l = 0; l < nn->nlayers; l++) {
    const anim_nnet_layer_t *layer = &nn->layers[l];
    if (l > 0 && layer->rows != nn->layers[l - 1].cols) abort();
    pos += 8;
    int corners[4][2] = {{0, 0}, {layer->rows - 1, 0}, {0, layer->cols - 1}, {layer->rows - 1, layer->cols - 1}};
    for (int c = 0; c < 4; c++) {
      size_t at = pos + 4 * ((size_t)corners[c][0] * (size_t)layer->cols + (size_t)corners[c][1]);
      float want = file_float(bytes + at), got = anim_nnet_weight(nn, l, corners[c][0], corners[c][1]);
      if (memcmp(&want, &got, sizeof want) != 0) {
        fprintf(stderr, "layer %d weight (%d, %d) is %g, the file says %g\n", l, corners[c][0], corners[c][1],
                (double)got, (double)want);
        abort();
      }
    }
    pos += 4 * (size_t)layer->rows * (size_t)layer->cols + 4 + 4 * (size_t)layer->cols;
  }
}

static void evaluate(const anim_nnet_t *nn) {
  float *in = malloc(sizeof(float) * 3 * (size_t)nn->ninputs);
  float *one = malloc(sizeof(float) * (size_t)nn->noutputs);
  float *three = malloc(sizeof(float) * 3 * (size_t)nn->noutputs);
  float *scratch = malloc(sizeof(float) * anim_nnet_scratch_floats(nn, 3));
  if (!in || !one || !three || !scratch) abort();
  for (int i = 0; i < 3 * nn->ninputs; i++) in[i] = nn->input_mean[i % nn->ninputs] + (float)(i % 7) * 0.25f - 0.5f;
  for (int k = 0; k < ANIM_GEMM_KERNEL_COUNT; k++) {
    if (!anim_gemm_kernel_available((anim_gemm_kernel_t)k)) continue;
    anim_nnet_run_kernel(nn, (anim_gemm_kernel_t)k, in, nn->ninputs, one, nn->noutputs, 1, scratch);
    anim_nnet_run_kernel(nn, (anim_gemm_kernel_t)k, in, nn->ninputs, three, nn->noutputs, 3, scratch);
    for (int j = 0; j < nn->noutputs; j++) {
      double a = one[j], b = three[j];
      if (!isfinite(a) || !isfinite(b) || fabs(a) > 1e6 || fabs(b) > 1e6) continue;
      if (fabs(a - b) > 1e-3 * (1.0 + fabs(a)) + 1e-2) {
        fprintf(stderr, "kernel %s output %d: one row %g, three rows %g\n",
                anim_gemm_kernel_name((anim_gemm_kernel_t)k), j, a, b);
        abort();
      }
    }
  }
  free(in), free(one), free(three), free(scratch);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t *bytes = malloc(size ? size : 1);
  if (!bytes) return 0;
  memcpy(bytes, data, size);
  char err[256];
  int code = 0;
  anim_nnet_t *nn = anim_nnet_parse(bytes, size, "fuzz.bin", &code, err, sizeof err);
  if (nn) {
    if (code != 0) abort();
    check_shapes_and_weights(nn, bytes);
    evaluate(nn);
    anim_nnet_free(nn);
  } else if (code >= 0 || !memchr(err, 0, sizeof err) || !err[0]) {
    abort(); /* a refusal has a negative code and a message */
  }
  free(bytes);
  return 0;
}
