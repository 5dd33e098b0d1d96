/* nnet.c: loading and batch evaluation of the learned networks (see nnet.h).
 *
 * Parsing walks the file twice: first the structure alone (every count read
 * after a bounds check, shapes compared, sizes summed, nothing allocated),
 * then, into one aligned block, the values (each checked finite while it is
 * copied and packed). Evaluation ping-pongs between two scratch buffers of
 * rows x widest floats, one gemm per layer. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "anim_error.h"
#include "base/hash.h"
#include "learned/nnet.h"

#define ALIGN_FLOATS 16              /* 64 bytes */
#define MAX_FILE_BYTES (256u << 20)  /* refused before reading */

typedef struct {
  const unsigned char *bytes;
  size_t len, pos;
  const char *name;
  char *err;
  int errlen;
  int code;
} reader_t;

static int fail(reader_t *rd, int code, const char *fmt, ...) {
  if (rd->code == 0) {
    rd->code = code;
    if (rd->err && rd->errlen > 0) {
      int n = snprintf(rd->err, (size_t)rd->errlen, "%s: ", rd->name);
      va_list ap;
      va_start(ap, fmt);
      if (n >= 0 && n < rd->errlen) vsnprintf(rd->err + n, (size_t)(rd->errlen - n), fmt, ap);
      va_end(ap);
    }
  }
  return code;
}

static uint32_t le32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static float lefloat(const unsigned char *p) {
  uint32_t u = le32(p);
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* A width (count, rows or cols) at the cursor: 4 bytes there, in 1..MAX. */
static int read_width(reader_t *rd, const char *what, int *out) {
  if (rd->len - rd->pos < 4)
    return fail(rd, ANIM_ETRUNCATED, "%s at byte %zu needs 4 bytes, %zu left", what, rd->pos, rd->len - rd->pos);
  int32_t v = (int32_t)le32(rd->bytes + rd->pos);
  if (v < 1 || v > ANIM_NNET_MAX_WIDTH)
    return fail(rd, ANIM_EFORMAT, "%s at byte %zu is %d (must be 1..%d)", what, rd->pos, (int)v, ANIM_NNET_MAX_WIDTH);
  rd->pos += 4;
  *out = (int)v;
  return 0;
}

/* Skips count floats (pass 1): they must be there. */
static int skip_floats(reader_t *rd, const char *what, size_t count) {
  if ((rd->len - rd->pos) / 4 < count)
    return fail(rd, ANIM_ETRUNCATED, "%s: %zu floats at byte %zu, only %zu bytes left", what, count, rd->pos,
                rd->len - rd->pos);
  rd->pos += 4 * count;
  return 0;
}

/* An array (count, then floats) whose count must equal expect when expect > 0. */
static int skip_array(reader_t *rd, const char *what, int expect, int *out_count) {
  int count = 0; /* GCC -O3 cannot see read_width sets it whenever it returns 0 */
  if (read_width(rd, what, &count)) return rd->code;
  if (expect > 0 && count != expect)
    return fail(rd, ANIM_EFORMAT, "%s has %d values, expected %d", what, count, expect);
  *out_count = count;
  return skip_floats(rd, what, (size_t)count);
}

static size_t round_up(size_t floats) { return (floats + ALIGN_FLOATS - 1) / ALIGN_FLOATS * ALIGN_FLOATS; }

/* Pass 1: structure and shapes; fills the widths and returns the floats the block needs. */
static int scan(reader_t *rd, anim_nnet_t *nn, size_t *out_floats) {
  int n;
  size_t floats = 0;
  if (skip_array(rd, "input mean", 0, &nn->ninputs)) return rd->code;
  if (skip_array(rd, "input std", nn->ninputs, &n)) return rd->code;
  if (skip_array(rd, "output mean", 0, &nn->noutputs)) return rd->code;
  if (skip_array(rd, "output std", nn->noutputs, &n)) return rd->code;
  floats += 3 * round_up((size_t)nn->ninputs) + 2 * round_up((size_t)nn->noutputs);
  if (rd->len - rd->pos < 4)
    return fail(rd, ANIM_ETRUNCATED, "layer count at byte %zu needs 4 bytes, %zu left", rd->pos, rd->len - rd->pos);
  int32_t layers = (int32_t)le32(rd->bytes + rd->pos);
  if (layers < 1 || layers > ANIM_NNET_MAX_LAYERS)
    return fail(rd, ANIM_EFORMAT, "layer count %d (must be 1..%d)", (int)layers, ANIM_NNET_MAX_LAYERS);
  rd->pos += 4;
  nn->nlayers = (int)layers;
  int prev = nn->ninputs;
  nn->widest = anim_gemm_padded(nn->ninputs);
  for (int l = 0; l < nn->nlayers; l++) {
    char what[48];
    anim_nnet_layer_t *layer = &nn->layers[l];
    snprintf(what, sizeof what, "layer %d rows", l);
    if (read_width(rd, what, &layer->rows)) return rd->code;
    snprintf(what, sizeof what, "layer %d cols", l);
    if (read_width(rd, what, &layer->cols)) return rd->code;
    if (layer->rows != prev)
      return fail(rd, ANIM_EFORMAT, "layer %d has %d inputs but %s gives %d", l, layer->rows,
                  l ? "the layer before" : "the input normalization", prev);
    snprintf(what, sizeof what, "layer %d weights", l);
    if (skip_floats(rd, what, (size_t)layer->rows * (size_t)layer->cols)) return rd->code;
    snprintf(what, sizeof what, "layer %d biases", l);
    if (skip_array(rd, what, layer->cols, &n)) return rd->code;
    floats +=
        round_up(anim_gemm_packed_floats(layer->rows, layer->cols)) + round_up((size_t)anim_gemm_padded(layer->cols));
    if (anim_gemm_padded(layer->cols) > nn->widest) nn->widest = anim_gemm_padded(layer->cols);
    prev = layer->cols;
  }
  if (prev != nn->noutputs)
    return fail(rd, ANIM_EFORMAT, "the last layer has %d outputs but the output normalization %d", prev, nn->noutputs);
  if (rd->pos != rd->len)
    return fail(rd, ANIM_EFORMAT, "%zu bytes after the last layer (file of %zu bytes)", rd->len - rd->pos, rd->len);
  *out_floats = floats;
  return 0;
}

/* Pass 2 helpers: copy count floats at the cursor, each finite (and >= min_value when check_min). */
static int copy_floats(reader_t *rd, const char *what, float *out, size_t count, int check_min, float min_value,
                       int strict) {
  for (size_t i = 0; i < count; i++) {
    float v = lefloat(rd->bytes + rd->pos + 4 * i);
    if (!isfinite(v)) return fail(rd, ANIM_ENONFINITE, "%s value %zu is not finite", what, i);
    if (check_min && (strict ? !(v > min_value) : !(v >= min_value)))
      return fail(rd, ANIM_EFORMAT, "%s value %zu is %g (must be %s %g)", what, i, (double)v, strict ? ">" : ">=",
                  (double)min_value);
    out[i] = v;
  }
  rd->pos += 4 * count;
  return 0;
}

static int copy_array(reader_t *rd, const char *what, float *out, int check_min, int strict) {
  size_t count = le32(rd->bytes + rd->pos); /* validated by the scan */
  rd->pos += 4;
  return copy_floats(rd, what, out, count, check_min, 0.0f, strict);
}

/* Pass 2: values into the block laid out by the scan. */
static int fill(reader_t *rd, anim_nnet_t *nn, float *block, float *weights_tmp) {
  float *cursor = block;
  float *in_mean = cursor; cursor += round_up((size_t)nn->ninputs);
  float *in_std = cursor; cursor += round_up((size_t)nn->ninputs);
  float *out_mean = cursor; cursor += round_up((size_t)nn->noutputs);
  float *out_std = cursor; cursor += round_up((size_t)nn->noutputs);
  float *in_scale = cursor; cursor += round_up((size_t)nn->ninputs);
  if (copy_array(rd, "input mean", in_mean, 0, 0) || copy_array(rd, "input std", in_std, 1, 1) ||
      copy_array(rd, "output mean", out_mean, 0, 0) || copy_array(rd, "output std", out_std, 1, 0))
    return rd->code;
  for (int j = 0; j < nn->ninputs; j++) {
    in_scale[j] = 1.0f / in_std[j];
    if (!isfinite(in_scale[j]))
      return fail(rd, ANIM_EFORMAT, "input std value %d is %g, too small to divide by", j, (double)in_std[j]);
  }
  nn->input_mean = in_mean, nn->input_std = in_std, nn->output_mean = out_mean, nn->output_std = out_std;
  nn->input_scale = in_scale;
  rd->pos += 4; /* layer count */
  for (int l = 0; l < nn->nlayers; l++) {
    anim_nnet_layer_t *layer = &nn->layers[l];
    char what[48];
    rd->pos += 8; /* rows, cols */
    snprintf(what, sizeof what, "layer %d weights", l);
    size_t count = (size_t)layer->rows * (size_t)layer->cols;
    if (copy_floats(rd, what, weights_tmp, count, 0, 0.0f, 0)) return rd->code;
    float *packed = cursor;
    cursor += round_up(anim_gemm_packed_floats(layer->rows, layer->cols));
    anim_gemm_pack(packed, weights_tmp, layer->rows, layer->cols);
    float *bias = cursor;
    cursor += round_up((size_t)anim_gemm_padded(layer->cols));
    memset(bias, 0, (size_t)anim_gemm_padded(layer->cols) * sizeof *bias);
    snprintf(what, sizeof what, "layer %d biases", l);
    if (copy_array(rd, what, bias, 0, 0)) return rd->code;
    layer->packed = packed, layer->bias = bias;
  }
  return 0;
}

anim_nnet_t *anim_nnet_parse(const void *bytes, size_t len, const char *name, int *out_code, char *err, int errlen) {
  reader_t rd = {bytes, len, 0, name ? name : "network", err, errlen, 0};
  if (err && errlen > 0) err[0] = 0;
  anim_nnet_t shape;
  memset(&shape, 0, sizeof shape);
  size_t floats = 0;
  anim_nnet_t *nn = NULL;
  float *block = NULL, *tmp = NULL;
  if (!bytes && len) {
    fail(&rd, ANIM_EINVAL, "no bytes");
    goto done;
  }
  if (scan(&rd, &shape, &floats)) goto done;
  size_t largest = 0;
  for (int l = 0; l < shape.nlayers; l++) {
    size_t count = (size_t)shape.layers[l].rows * (size_t)shape.layers[l].cols;
    if (count > largest) largest = count;
  }
  nn = malloc(sizeof *nn);
  block = aligned_alloc(64, floats * sizeof(float));
  tmp = malloc(largest * sizeof(float));
  if (!nn || !block || !tmp) {
    fail(&rd, ANIM_ENOMEM, "out of memory for %zu floats", floats);
    goto done;
  }
  *nn = shape;
  rd.pos = 0;
  nn->storage = block;
  if (fill(&rd, nn, block, tmp)) goto done;
  snprintf(nn->name, sizeof nn->name, "%s", rd.name);
  nn->kernel = anim_gemm_kernel_best();
  nn->hash = anim_hash64(bytes, len, 0);
  nn->bytes = sizeof *nn + floats * sizeof(float);
done:
  free(tmp);
  if (rd.code) {
    free(block);
    free(nn);
    nn = NULL;
  }
  if (out_code) *out_code = rd.code;
  return nn;
}

void anim_nnet_free(anim_nnet_t *nn) {
  if (!nn) return;
  free(nn->storage);
  free(nn);
}

anim_nnet_t *anim_nnet_load(const char *path, int *out_code, char *err, int errlen) {
  int code = 0;
  anim_nnet_t *nn = NULL;
  unsigned char *bytes = NULL;
  FILE *f = fopen(path, "rb");
  struct stat st;
  if (!f || fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
    code = ANIM_EIO;
    if (err && errlen > 0)
      snprintf(err, (size_t)errlen, "%s: cannot open (%s)", path, f ? "not a file" : strerror(errno));
    goto done;
  }
  if ((uint64_t)st.st_size > MAX_FILE_BYTES) {
    code = ANIM_EFORMAT;
    if (err && errlen > 0)
      snprintf(err, (size_t)errlen, "%s: %lld bytes, over the %u limit", path, (long long)st.st_size, MAX_FILE_BYTES);
    goto done;
  }
  size_t len = (size_t)st.st_size;
  bytes = malloc(len ? len : 1);
  if (!bytes) {
    code = ANIM_ENOMEM;
    goto done;
  }
  if (fread(bytes, 1, len, f) != len) {
    code = ANIM_EIO;
    if (err && errlen > 0) snprintf(err, (size_t)errlen, "%s: short read", path);
    goto done;
  }
  const char *base = strrchr(path, '/');
  nn = anim_nnet_parse(bytes, len, base ? base + 1 : path, &code, err, errlen);
done:
  if (f) fclose(f);
  free(bytes);
  if (out_code) *out_code = code;
  return nn;
}

anim_nnet_t *anim_nnet_select_outputs(const anim_nnet_t *nn, const int *outputs, int count, int *out_code, char *err,
                                      int errlen) {
  int code = 0;
  anim_nnet_t *out = NULL;
  float *block = NULL, *column = NULL;
  if (!nn || !outputs || count < 1 || count > ANIM_NNET_MAX_WIDTH) code = ANIM_EINVAL;
  for (int j = 0; code == 0 && j < count; j++)
    if (outputs[j] < 0 || outputs[j] >= nn->noutputs) code = ANIM_EINVAL;
  if (code) {
    if (err && errlen > 0) snprintf(err, (size_t)errlen, "bad output selection");
    goto done;
  }
  /* The same layout as a parsed network's block, the last layer narrower. */
  const anim_nnet_layer_t *last = &nn->layers[nn->nlayers - 1];
  size_t floats = 3 * round_up((size_t)nn->ninputs) + 2 * round_up((size_t)count);
  for (int l = 0; l < nn->nlayers; l++) {
    int cols = l + 1 < nn->nlayers ? nn->layers[l].cols : count;
    floats += round_up(anim_gemm_packed_floats(nn->layers[l].rows, cols)) + round_up((size_t)anim_gemm_padded(cols));
  }
  out = malloc(sizeof *out);
  block = aligned_alloc(64, floats * sizeof(float));
  column = malloc(sizeof(float) * (size_t)last->rows * (size_t)count);
  if (!out || !block || !column) {
    code = ANIM_ENOMEM;
    if (err && errlen > 0) snprintf(err, (size_t)errlen, "out of memory");
    goto done;
  }
  *out = *nn;
  out->storage = block;
  out->noutputs = count;
  float *cursor = block;
  float *in_mean = cursor; cursor += round_up((size_t)nn->ninputs);
  float *in_std = cursor; cursor += round_up((size_t)nn->ninputs);
  float *out_mean = cursor; cursor += round_up((size_t)count);
  float *out_std = cursor; cursor += round_up((size_t)count);
  float *in_scale = cursor; cursor += round_up((size_t)nn->ninputs);
  memcpy(in_scale, nn->input_scale, sizeof(float) * (size_t)nn->ninputs);
  out->input_scale = in_scale;
  memcpy(in_mean, nn->input_mean, sizeof(float) * (size_t)nn->ninputs);
  memcpy(in_std, nn->input_std, sizeof(float) * (size_t)nn->ninputs);
  for (int j = 0; j < count; j++) out_mean[j] = nn->output_mean[outputs[j]], out_std[j] = nn->output_std[outputs[j]];
  out->input_mean = in_mean, out->input_std = in_std, out->output_mean = out_mean, out->output_std = out_std;
  out->widest = anim_gemm_padded(nn->ninputs);
  for (int l = 0; l < nn->nlayers; l++) {
    const anim_nnet_layer_t *from = &nn->layers[l];
    anim_nnet_layer_t *to = &out->layers[l];
    int cols = l + 1 < nn->nlayers ? from->cols : count;
    float *packed = cursor;
    cursor += round_up(anim_gemm_packed_floats(from->rows, cols));
    float *bias = cursor;
    cursor += round_up((size_t)anim_gemm_padded(cols));
    memset(bias, 0, sizeof(float) * (size_t)anim_gemm_padded(cols));
    if (l + 1 < nn->nlayers) {
      memcpy(packed, from->packed, sizeof(float) * anim_gemm_packed_floats(from->rows, cols));
      memcpy(bias, from->bias, sizeof(float) * (size_t)cols);
    } else {
      for (int r = 0; r < from->rows; r++)
        for (int j = 0; j < count; j++)
          column[(size_t)r * (size_t)count + (size_t)j] =
              anim_gemm_packed_at(from->packed, from->rows, from->cols, r, outputs[j]);
      anim_gemm_pack(packed, column, from->rows, count);
      for (int j = 0; j < count; j++) bias[j] = from->bias[outputs[j]];
    }
    to->rows = from->rows, to->cols = cols, to->packed = packed, to->bias = bias;
    if (anim_gemm_padded(cols) > out->widest) out->widest = anim_gemm_padded(cols);
  }
  out->bytes = sizeof *out + floats * sizeof(float);
done:
  free(column);
  if (code) {
    free(block);
    free(out);
    out = NULL;
  }
  if (out_code) *out_code = code;
  return out;
}

float anim_nnet_weight(const anim_nnet_t *nn, int layer, int r, int c) {
  const anim_nnet_layer_t *l = &nn->layers[layer];
  return anim_gemm_packed_at(l->packed, l->rows, l->cols, r, c);
}

size_t anim_nnet_scratch_floats(const anim_nnet_t *nn, int rows) {
  /* Two activation buffers, then the kernels' masks (one word per float). */
  size_t r = (size_t)(rows > 0 ? rows : 0);
  return 2 * r * (size_t)nn->widest + anim_gemm_mask_words((int)r, nn->widest);
}

void anim_nnet_run_kernel(const anim_nnet_t *nn, anim_gemm_kernel_t kernel, const float *in, int in_stride, float *out,
                          int out_stride, int rows, float *scratch) {
  if (rows <= 0) return;
  int ld = nn->widest;
  float *x = scratch, *y = scratch + (size_t)rows * (size_t)ld;
  uint32_t *masks = (uint32_t *)(scratch + 2 * (size_t)rows * (size_t)ld);
  const float *mean = nn->input_mean, *scale = nn->input_scale;
  for (int i = 0; i < rows; i++) {
    const float *src = in + (size_t)i * (size_t)in_stride;
    float *dst = x + (size_t)i * (size_t)ld;
    for (int j = 0; j < nn->ninputs; j++) dst[j] = (src[j] - mean[j]) * scale[j];
  }
  for (int l = 0; l < nn->nlayers; l++) {
    const anim_nnet_layer_t *layer = &nn->layers[l];
    anim_gemm_run(kernel, y, ld, x, ld, rows, layer->rows, layer->packed, layer->bias, layer->cols,
                  l + 1 < nn->nlayers, masks);
    float *t = x;
    x = y, y = t;
  }
  for (int i = 0; i < rows; i++) {
    const float *src = x + (size_t)i * (size_t)ld;
    float *dst = out + (size_t)i * (size_t)out_stride;
    for (int j = 0; j < nn->noutputs; j++) dst[j] = src[j] * nn->output_std[j] + nn->output_mean[j];
  }
}

void anim_nnet_run(const anim_nnet_t *nn, const float *in, int in_stride, float *out, int out_stride, int rows,
                   float *scratch) {
  anim_nnet_run_kernel(nn, nn->kernel, in, in_stride, out, out_stride, rows, scratch);
}
