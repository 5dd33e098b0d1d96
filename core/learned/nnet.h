/*
 * nnet.h: a small feed-forward network (dense layers, ReLU on every layer
 * but the last) loaded from the learned-motion-matching network files, and
 * its evaluation on a batch of rows.
 *
 * File format (little-endian, as the reference implementation's
 * train_common.py save_network writes it):
 *   four arrays: input mean, input std, output mean, output std, each an
 *   int32 count then count float32;
 *   int32 layer count; per layer the weights (int32 rows, int32 cols, then
 *   rows x cols float32 row-major, rows = inputs) and the biases (an array
 *   as above, cols values).
 * Evaluation: y = (last(relu(... relu(((x - in_mean) / in_std) W0 + b0) ...)))
 *   * out_std + out_mean.
 *
 * Validity rules (checked by anim_nnet_parse, which refuses anything else):
 *  1. every count and size is read only after checking the bytes are there,
 *     and the file ends exactly after the last layer (no trailing bytes);
 *  2. 1 <= layers <= ANIM_NNET_MAX_LAYERS; every width (array count, rows,
 *     cols) in 1 .. ANIM_NNET_MAX_WIDTH;
 *  3. shapes chain: len(in mean) = len(in std) = rows of layer 0; rows of
 *     layer i = cols of layer i-1; bias count = cols; cols of the last layer
 *     = len(out mean) = len(out std);
 *  4. every value finite (else ANIM_ENONFINITE); input std > 0 with a
 *     finite reciprocal (it divides) and output std >= 0 (else ANIM_EFORMAT).
 *
 * A loaded network is immutable and shared read-only by any number of
 * threads and characters. Its weights are packed for the kernels of gemm.h
 * (the kernel is chosen at load, from the CPU). Evaluation allocates
 * nothing: the caller gives scratch of anim_nnet_scratch_floats floats.
 */
#ifndef ANIM_NNET_H
#define ANIM_NNET_H

#include <stddef.h>
#include <stdint.h>
#include "learned/gemm.h"

#define ANIM_NNET_MAX_LAYERS 16
#define ANIM_NNET_MAX_WIDTH ANIM_GEMM_MAX_K
#define ANIM_NNET_NAME_MAX 64

typedef struct {
  int rows, cols;      /* inputs, outputs */
  const float *packed; /* anim_gemm_pack of the rows x cols weights */
  const float *bias;   /* anim_gemm_padded(cols) floats, zero past cols */
} anim_nnet_layer_t;

typedef struct {
  char name[ANIM_NNET_NAME_MAX];
  int ninputs, noutputs, nlayers;
  const float *input_mean, *input_std;   /* ninputs each */
  const float *output_mean, *output_std; /* noutputs each */
  const float *input_scale;              /* 1 / input_std, ninputs (a multiply per input instead of a divide) */
  anim_nnet_layer_t layers[ANIM_NNET_MAX_LAYERS];
  anim_gemm_kernel_t kernel; /* anim_gemm_kernel_best() at load */
  uint64_t hash;             /* anim_hash64 of the file's bytes: which weights these are */
  size_t bytes;              /* memory held */
  int widest;                /* largest anim_gemm_padded width of any layer's output or input */
  void *storage;             /* the one aligned block every array above lives in (owned) */
} anim_nnet_t;

/* Parses a network file held in memory (len bytes at bytes, any alignment).
 * name (may be NULL) labels messages. Returns the network, or NULL with a
 * message in err: ANIM_ETRUNCATED (the file ends inside an array or layer),
 * ANIM_EFORMAT (a count, shape, std or trailing bytes against the rules
 * above), ANIM_ENONFINITE (a NaN or infinite value), ANIM_ENOMEM.
 * The code goes to *out_code when out_code is not NULL. Free with anim_nnet_free. */
anim_nnet_t *anim_nnet_parse(const void *bytes, size_t len, const char *name, int *out_code, char *err, int errlen);

/* Reads the file at path (refusing one over 256 MiB before reading it) and
 * parses it. Errors as anim_nnet_parse plus ANIM_EIO (cannot open or read). */
anim_nnet_t *anim_nnet_load(const char *path, int *out_code, char *err, int errlen);

void anim_nnet_free(anim_nnet_t *nn);

/* A network computing only some of nn's outputs: output j of the result is
 * output outputs[j] of nn (0 <= outputs[j] < nn->noutputs, count >= 1), the
 * hidden layers copied, the last layer's weight and bias columns and the
 * output normalization selected. Evaluates to exactly nn's values in those
 * columns (same kernels, same sums), for less work when a caller never reads
 * the others. Its hash is nn's. NULL on bad arguments (ANIM_EINVAL) or
 * ANIM_ENOMEM, with a message. Free with anim_nnet_free. */
anim_nnet_t *anim_nnet_select_outputs(const anim_nnet_t *nn, const int *outputs, int count, int *out_code, char *err,
                                      int errlen);

/* Weight (r, c) of layer l, for checks (not hot paths). */
float anim_nnet_weight(const anim_nnet_t *nn, int layer, int r, int c);

/* Floats of scratch anim_nnet_run needs for up to rows rows. */
size_t anim_nnet_scratch_floats(const anim_nnet_t *nn, int rows);

/* Evaluates rows inputs at once (rows = characters): out row i (noutputs
 * floats, stride out_stride) = network(in row i (ninputs floats, stride
 * in_stride)). scratch: anim_nnet_scratch_floats(nn, rows) floats, not
 * overlapping in or out. in and out may be the same buffer. rows >= 0. */
void anim_nnet_run(const anim_nnet_t *nn, const float *in, int in_stride, float *out, int out_stride, int rows,
                   float *scratch);
/* The same with a given kernel (tests and benchmarks compare them). */
void anim_nnet_run_kernel(const anim_nnet_t *nn, anim_gemm_kernel_t kernel, const float *in, int in_stride, float *out,
                          int out_stride, int rows, float *scratch);

#endif
