/* gemm.c: packed dense-layer products with run-time kernel choice (see gemm.h).
 *
 * Each kernel has two parts: a tile (MR rows of A times one packed panel,
 * accumulated in registers over all k, then written to a small MR x NR
 * buffer) and a one-row path (the nonzero inputs of a single row times every
 * panel, two panels at a time so that four independent accumulator chains
 * hide the latency of the fused multiply-adds). Both skip the inputs that
 * are zero (in every row of the block, for a tile): after ReLU most are. The driver adds the bias,
 * applies ReLU and copies the tile's valid rows into C.
 *
 * The sparse path (AVX2 and portable kernels) replaces the tiles when a
 * batch's inputs are mostly zero: a tile's union of nonzero inputs wastes
 * most of its multiply-adds on zeros there (the reference stepper's hidden
 * layer: 38% nonzero per row, 84% per 6-row block), and one row with three
 * panels (12 accumulators) keeps the FMA units nearly as busy as the tile
 * when the weights it reads are in L1: they are, chunk by chunk of
 * SPARSE_KC inputs.
 * AVX-512 keeps its tiles: unmeasured there (this machine has no AVX-512). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "learned/gemm.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define GEMM_X86 1
#include <immintrin.h>
#else
#define GEMM_X86 0
#endif

#define NR ANIM_GEMM_NR
#define MR_MAX 12
#define KS_PAD 16 /* entries past the used inputs a kernel may read ahead (prefetches) */
#define GROUP_BYTES (384u << 10) /* weights kept in L2 while a batch passes over them */
/* The sparse path: inputs per chunk (a multiple of 32; 3 panels x 64 x 128 B
 * = 24 KiB of weights kept in L1), rows whose nonzero inputs are listed at a
 * time, and the largest fraction of nonzero inputs it takes. */
#define SPARSE_KC 64
#define SPARSE_ROWS 64
#define SPARSE_DENSITY 0.6

size_t anim_gemm_packed_floats(int k, int n) { return (size_t)k * (size_t)anim_gemm_padded(n); }

void anim_gemm_pack(float *out, const float *b, int k, int n) {
  int panels = anim_gemm_padded(n) / NR;
  for (int p = 0; p < panels; p++) {
    float *panel = out + (size_t)p * (size_t)k * NR;
    for (int r = 0; r < k; r++)
      for (int j = 0; j < NR; j++) {
        int col = p * NR + j;
        panel[(size_t)r * NR + (size_t)j] = col < n ? b[(size_t)r * (size_t)n + (size_t)col] : 0.0f;
      }
  }
}

float anim_gemm_packed_at(const float *packed, int k, int n, int r, int c) {
  (void)n;
  return packed[(size_t)(c / NR) * (size_t)k * NR + (size_t)r * NR + (size_t)(c % NR)];
}

/* ---- portable kernel: GCC vector extensions (SSE2 on x86-64, NEON on arm64) -------- */

typedef float v4f __attribute__((vector_size(16)));
#define GENERIC_MR 2

static inline v4f v4f_load(const float *p) {
  v4f v;
  memcpy(&v, p, sizeof v);
  return v;
}
static inline void v4f_store(float *p, v4f v) { memcpy(p, &v, sizeof v); }
typedef int v4i __attribute__((vector_size(16)));
/* max(v, 0) per lane: the comparison's all-ones lanes keep v's bits. */
static inline v4f v4f_relu(v4f v) {
  const v4f zero = {0};
  return (v4f)((v4i)v & (v > zero));
}

/* Two rows times a panel, in two halves of 16 columns (8 accumulators + 4
 * weights fit the 16 SSE registers). */
static void tile_generic(float *c, int ldc, int count, const float *const *a, const int *ks, int nk,
                         const float *panel, const float *bias, int relu) {
  for (int h = 0; h < 2; h++) {
    const float *bh = bias + 16 * h;
    v4f c00 = v4f_load(bh), c01 = v4f_load(bh + 4), c02 = v4f_load(bh + 8), c03 = v4f_load(bh + 12);
    v4f c10 = c00, c11 = c01, c12 = c02, c13 = c03;
    const float *a0 = a[0], *a1 = a[1];
    for (int t = 0; t < nk; t++) {
      int r = ks[t];
      const float *b = panel + (size_t)r * NR + 16 * h;
      v4f b0 = v4f_load(b), b1 = v4f_load(b + 4), b2 = v4f_load(b + 8), b3 = v4f_load(b + 12);
      v4f s0 = {a0[r], a0[r], a0[r], a0[r]}, s1 = {a1[r], a1[r], a1[r], a1[r]};
      c00 += s0 * b0, c01 += s0 * b1, c02 += s0 * b2, c03 += s0 * b3;
      c10 += s1 * b0, c11 += s1 * b1, c12 += s1 * b2, c13 += s1 * b3;
    }
    if (relu) {
      c00 = v4f_relu(c00), c01 = v4f_relu(c01), c02 = v4f_relu(c02), c03 = v4f_relu(c03);
      c10 = v4f_relu(c10), c11 = v4f_relu(c11), c12 = v4f_relu(c12), c13 = v4f_relu(c13);
    }
    float *t0 = c + 16 * h, *t1 = t0 + ldc;
    v4f_store(t0, c00), v4f_store(t0 + 4, c01), v4f_store(t0 + 8, c02), v4f_store(t0 + 12, c03);
    if (count > 1) v4f_store(t1, c10), v4f_store(t1 + 4, c11), v4f_store(t1 + 8, c12), v4f_store(t1 + 12, c13);
  }
}

/* out[p NR ..] = bias + the sum over the nonzero inputs r of x[r] * panel row r. */
static void row_generic(float *out, const float *x, const int *nz, int nnz, int k, const float *packed, int panels,
                        const float *bias, int relu) {
  for (int p = 0; p < panels; p++) {
    const float *panel = packed + (size_t)p * (size_t)k * NR;
    for (int h = 0; h < 2; h++) {
      const float *bh = bias + (size_t)p * NR + 16 * h;
      v4f c0 = v4f_load(bh), c1 = v4f_load(bh + 4), c2 = v4f_load(bh + 8), c3 = v4f_load(bh + 12);
      for (int t = 0; t < nnz; t++) {
        const float *b = panel + (size_t)nz[t] * NR + 16 * h;
        float v = x[nz[t]];
        v4f s = {v, v, v, v};
        c0 += s * v4f_load(b), c1 += s * v4f_load(b + 4), c2 += s * v4f_load(b + 8), c3 += s * v4f_load(b + 12);
      }
      if (relu) c0 = v4f_relu(c0), c1 = v4f_relu(c1), c2 = v4f_relu(c2), c3 = v4f_relu(c3);
      float *o = out + (size_t)p * NR + 16 * h;
      v4f_store(o, c0), v4f_store(o + 4, c1), v4f_store(o + 8, c2), v4f_store(o + 12, c3);
    }
  }
}

/* out bit r (of words[r / 32]) = some of the count rows has a nonzero input r. */
static void used_generic(uint32_t *words, const float *const *rows, int count, int k) {
  memset(words, 0, sizeof(uint32_t) * (size_t)((k + 31) / 32));
  for (int r = 0; r < k; r++) {
    int used = 0;
    for (int j = 0; j < count; j++) used |= rows[j][r] != 0.0f;
    words[r / 32] |= (uint32_t)used << (r % 32);
  }
}


/* One entry of a row's nonzero inputs (see the sparse path in anim_gemm_run):
 * the input's row offset in a panel (r NR) and its value. */
typedef struct {
  int32_t off;
  float v;
} nz_t;

/* One row times one or two panels (b1 NULL: one) over n entries of one
 * chunk of inputs: c[0 .. NR panels) = (first ? bias : itself) + the sum of
 * e.v * panel row e.off, then ReLU when last && relu. */
static inline void sparse_row_generic(float *c, const nz_t *e, int n, const float *b0, const float *b1, int first,
                                      int last, const float *bias, int relu) {
  for (int q = 0; q < (b1 ? 2 : 1); q++) {
    const float *b = q ? b1 : b0, *init = first ? bias + q * NR : c + q * NR;
    v4f c0 = v4f_load(init), c1 = v4f_load(init + 4), c2 = v4f_load(init + 8), c3 = v4f_load(init + 12);
    v4f c4 = v4f_load(init + 16), c5 = v4f_load(init + 20), c6 = v4f_load(init + 24), c7 = v4f_load(init + 28);
    for (int t = 0; t < n; t++) {
      const float *w = b + e[t].off;
      v4f s = {e[t].v, e[t].v, e[t].v, e[t].v};
      c0 += s * v4f_load(w), c1 += s * v4f_load(w + 4), c2 += s * v4f_load(w + 8), c3 += s * v4f_load(w + 12);
      c4 += s * v4f_load(w + 16), c5 += s * v4f_load(w + 20), c6 += s * v4f_load(w + 24), c7 += s * v4f_load(w + 28);
    }
    if (last && relu) {
      c0 = v4f_relu(c0), c1 = v4f_relu(c1), c2 = v4f_relu(c2), c3 = v4f_relu(c3);
      c4 = v4f_relu(c4), c5 = v4f_relu(c5), c6 = v4f_relu(c6), c7 = v4f_relu(c7);
    }
    float *o = c + q * NR;
    v4f_store(o, c0), v4f_store(o + 4, c1), v4f_store(o + 8, c2), v4f_store(o + 12, c3);
    v4f_store(o + 16, c4), v4f_store(o + 20, c5), v4f_store(o + 24, c6), v4f_store(o + 28, c7);
  }
}

/* Rows times np (1 to 3) consecutive panels (b0, b1 = b0 + one panel)
 * over chunk q of their inputs: row j (its output at c + j ldc) takes its
 * entries e[starts[j sstride + q] .. starts[j sstride + q + 1]). */
static void sparse_generic(float *c, int ldc, int rows, const nz_t *e, const int *starts, int sstride, int q,
                           const float *b0, const float *b1, int first, int last, const float *bias, int relu, int np) {
  for (int j = 0; j < rows; j++, c += ldc) {
    const int *st = starts + (size_t)j * (size_t)sstride;
    sparse_row_generic(c, e + st[q], st[q + 1] - st[q], b0, b1, first, last, bias, relu);
    if (np == 3)
      sparse_row_generic(c + 2 * NR, e + st[q], st[q + 1] - st[q], b1 + (b1 - b0), NULL, first, last, bias + 2 * NR,
                         relu);
  }
}

/* Appends the entries of x's nonzero inputs r0 <= r < r1 at e; returns
 * how many. May write up to 8 entries past them (scratch has the room). */
static int list_generic(nz_t *e, const float *x, int r0, int r1) {
  int n = 0;
  for (int r = r0; r < r1; r++) {
    /* Written unconditionally, kept only when nonzero: no branch to mispredict. */
    e[n].off = r * NR, e[n].v = x[r];
    n += x[r] != 0.0f;
  }
  return n;
}

/* ---- x86-64 AVX2 + FMA ----------------------------------------------------------------- */
#if GEMM_X86
#define AVX2_MR 6
#define PREFETCH_AHEAD 8

/* Six rows times a panel, in two halves of 16 columns: 12 accumulators, two
 * weight vectors and a broadcast in the 16 YMM registers. */
__attribute__((target("avx2,fma"))) static void tile_avx2(float *c, int ldc, int count, const float *const *a,
                                                          const int *ks, int nk, const float *panel, const float *bias,
                                                          int relu) {
  for (int h = 0; h < 2; h++) {
    __m256 c00 = _mm256_loadu_ps(bias + 16 * h), c01 = _mm256_loadu_ps(bias + 16 * h + 8);
    __m256 c10 = c00, c11 = c01, c20 = c00, c21 = c01, c30 = c00, c31 = c01, c40 = c00, c41 = c01, c50 = c00, c51 = c01;
    const float *a0 = a[0], *a1 = a[1], *a2 = a[2], *a3 = a[3], *a4 = a[4], *a5 = a[5];
    for (int t = 0; t < nk; t++) {
      int r = ks[t];
      const float *b = panel + (size_t)r * NR + 16 * h;
      /* The used inputs skip rows of the panel: the hardware prefetcher
       * does not follow them, so the row PREFETCH_AHEAD used inputs on is
       * asked for now (ks is padded past nk, see anim_gemm_run). */
      _mm_prefetch((const char *)(panel + (size_t)ks[t + PREFETCH_AHEAD] * NR + 16 * h), _MM_HINT_T0);
      __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8), s;
      s = _mm256_broadcast_ss(a0 + r), c00 = _mm256_fmadd_ps(s, b0, c00), c01 = _mm256_fmadd_ps(s, b1, c01);
      s = _mm256_broadcast_ss(a1 + r), c10 = _mm256_fmadd_ps(s, b0, c10), c11 = _mm256_fmadd_ps(s, b1, c11);
      s = _mm256_broadcast_ss(a2 + r), c20 = _mm256_fmadd_ps(s, b0, c20), c21 = _mm256_fmadd_ps(s, b1, c21);
      s = _mm256_broadcast_ss(a3 + r), c30 = _mm256_fmadd_ps(s, b0, c30), c31 = _mm256_fmadd_ps(s, b1, c31);
      s = _mm256_broadcast_ss(a4 + r), c40 = _mm256_fmadd_ps(s, b0, c40), c41 = _mm256_fmadd_ps(s, b1, c41);
      s = _mm256_broadcast_ss(a5 + r), c50 = _mm256_fmadd_ps(s, b0, c50), c51 = _mm256_fmadd_ps(s, b1, c51);
    }
    __m256 acc[AVX2_MR][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}, {c40, c41}, {c50, c51}};
    __m256 zero = _mm256_setzero_ps();
    for (int i = 0; i < count; i++) {
      __m256 v0 = acc[i][0], v1 = acc[i][1];
      if (relu) v0 = _mm256_max_ps(v0, zero), v1 = _mm256_max_ps(v1, zero);
      _mm256_storeu_ps(c + (size_t)i * (size_t)ldc + 16 * h, v0);
      _mm256_storeu_ps(c + (size_t)i * (size_t)ldc + 16 * h + 8, v1);
    }
  }
}

__attribute__((target("avx2,fma"))) static void row_avx2(float *out, const float *x, const int *nz, int nnz, int k,
                                                         const float *packed, int panels, const float *bias,
                                                         int relu) {
  __m256 zero = _mm256_setzero_ps();
  for (int p = 0; p < panels; p++) {
    const float *panel = packed + (size_t)p * (size_t)k * NR, *bp = bias + (size_t)p * NR;
    __m256 c0 = _mm256_loadu_ps(bp), c1 = _mm256_loadu_ps(bp + 8), c2 = _mm256_loadu_ps(bp + 16);
    __m256 c3 = _mm256_loadu_ps(bp + 24);
    for (int t = 0; t < nnz; t++) {
      const float *b = panel + (size_t)nz[t] * NR;
      __m256 s = _mm256_broadcast_ss(x + nz[t]);
      c0 = _mm256_fmadd_ps(s, _mm256_loadu_ps(b), c0), c1 = _mm256_fmadd_ps(s, _mm256_loadu_ps(b + 8), c1);
      c2 = _mm256_fmadd_ps(s, _mm256_loadu_ps(b + 16), c2), c3 = _mm256_fmadd_ps(s, _mm256_loadu_ps(b + 24), c3);
    }
    if (relu)
      c0 = _mm256_max_ps(c0, zero), c1 = _mm256_max_ps(c1, zero), c2 = _mm256_max_ps(c2, zero),
      c3 = _mm256_max_ps(c3, zero);
    float *o = out + (size_t)p * NR;
    _mm256_storeu_ps(o, c0), _mm256_storeu_ps(o + 8, c1), _mm256_storeu_ps(o + 16, c2), _mm256_storeu_ps(o + 24, c3);
  }
}

__attribute__((target("avx2,fma"))) static void used_avx2(uint32_t *words, const float *const *rows, int count,
                                                          int k) {
  __m256 zero = _mm256_setzero_ps();
  memset(words, 0, sizeof(uint32_t) * (size_t)((k + 31) / 32));
  int r = 0;
  for (; r + 8 <= k; r += 8) {
    int bits = 0;
    for (int j = 0; j < count; j++)
      bits |= _mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(rows[j] + r), zero, _CMP_NEQ_UQ));
    words[r / 32] |= (uint32_t)bits << (r % 32);
  }
  for (; r < k; r++) {
    int used = 0;
    for (int j = 0; j < count; j++) used |= rows[j][r] != 0.0f;
    words[r / 32] |= (uint32_t)used << (r % 32);
  }
}


/* One row times three panels (three: b0, b1 and the panel as far past b1
 * as b1 is past b0), two (b1) or one: 12 accumulators, independent chains
 * enough to hide the fused multiply-add's latency with one row, and one
 * entry's offset and value read for 12 multiply-adds; the weights come from
 * the chunk the driver keeps in L1. */
__attribute__((target("avx2,fma"))) static inline void sparse_row_avx2(float *c, const nz_t *e, int n,
                                                                       const float *b0, const float *b1, int first,
                                                                       int last, const float *bias, int relu,
                                                                       int three) {
  const float *i0 = first ? bias : c;
  __m256 zero = _mm256_setzero_ps();
  __m256 c0 = _mm256_loadu_ps(i0), c1 = _mm256_loadu_ps(i0 + 8), c2 = _mm256_loadu_ps(i0 + 16);
  __m256 c3 = _mm256_loadu_ps(i0 + 24);
  if (b1 && three) {
    const float *b2 = b1 + (b1 - b0);
    const float *i1 = first ? bias + NR : c + NR;
    __m256 c4 = _mm256_loadu_ps(i1), c5 = _mm256_loadu_ps(i1 + 8), c6 = _mm256_loadu_ps(i1 + 16);
    __m256 c7 = _mm256_loadu_ps(i1 + 24);
    __m256 c8 = _mm256_loadu_ps(i1 + 32), c9 = _mm256_loadu_ps(i1 + 40), ca = _mm256_loadu_ps(i1 + 48);
    __m256 cb = _mm256_loadu_ps(i1 + 56);
    for (int t = 0; t < n; t++) {
      const float *w0 = b0 + e[t].off, *w1 = b1 + e[t].off, *w2 = b2 + e[t].off;
      __m256 s = _mm256_broadcast_ss(&e[t].v);
      c0 = _mm256_fmadd_ps(s, _mm256_loadu_ps(w0), c0), c1 = _mm256_fmadd_ps(s, _mm256_loadu_ps(w0 + 8), c1);
      c2 = _mm256_fmadd_ps(s, _mm256_loadu_ps(w0 + 16), c2), c3 = _mm256_fmadd_ps(s, _mm256_loadu_ps(w0 + 24), c3);
      c4 = _mm256_fmadd_ps(s, _mm256_loadu_ps(w1), c4), c5 = _mm256_fmadd_ps(s, _mm256_loadu_ps(w1 + 8), c5);
      c6 = _mm256_fmadd_ps(s, _mm256_loadu_ps(w1 + 16), c6), c7 = _mm256_fmadd_ps(s, _mm256_loadu_ps(w1 + 24), c7);
      c8 = _mm256_fmadd_ps(s, _mm256_loadu_ps(w2), c8), c9 = _mm256_fmadd_ps(s, _mm256_loadu_ps(w2 + 8), c9);
      ca = _mm256_fmadd_ps(s, _mm256_loadu_ps(w2 + 16), ca), cb = _mm256_fmadd_ps(s, _mm256_loadu_ps(w2 + 24), cb);
    }
    if (last && relu) {
      c4 = _mm256_max_ps(c4, zero), c5 = _mm256_max_ps(c5, zero), c6 = _mm256_max_ps(c6, zero);
      c7 = _mm256_max_ps(c7, zero), c8 = _mm256_max_ps(c8, zero), c9 = _mm256_max_ps(c9, zero);
      ca = _mm256_max_ps(ca, zero), cb = _mm256_max_ps(cb, zero);
    }
    _mm256_storeu_ps(c + NR, c4), _mm256_storeu_ps(c + NR + 8, c5), _mm256_storeu_ps(c + NR + 16, c6);
    _mm256_storeu_ps(c + NR + 24, c7);
    _mm256_storeu_ps(c + NR + 32, c8), _mm256_storeu_ps(c + NR + 40, c9), _mm256_storeu_ps(c + NR + 48, ca);
    _mm256_storeu_ps(c + NR + 56, cb);
  } else if (b1) {
    const float *i1 = first ? bias + NR : c + NR;
    __m256 c4 = _mm256_loadu_ps(i1), c5 = _mm256_loadu_ps(i1 + 8), c6 = _mm256_loadu_ps(i1 + 16);
    __m256 c7 = _mm256_loadu_ps(i1 + 24);
    for (int t = 0; t < n; t++) {
      const float *w0 = b0 + e[t].off, *w1 = b1 + e[t].off;
      __m256 s = _mm256_broadcast_ss(&e[t].v);
      c0 = _mm256_fmadd_ps(s, _mm256_loadu_ps(w0), c0), c1 = _mm256_fmadd_ps(s, _mm256_loadu_ps(w0 + 8), c1);
      c2 = _mm256_fmadd_ps(s, _mm256_loadu_ps(w0 + 16), c2), c3 = _mm256_fmadd_ps(s, _mm256_loadu_ps(w0 + 24), c3);
      c4 = _mm256_fmadd_ps(s, _mm256_loadu_ps(w1), c4), c5 = _mm256_fmadd_ps(s, _mm256_loadu_ps(w1 + 8), c5);
      c6 = _mm256_fmadd_ps(s, _mm256_loadu_ps(w1 + 16), c6), c7 = _mm256_fmadd_ps(s, _mm256_loadu_ps(w1 + 24), c7);
    }
    if (last && relu)
      c4 = _mm256_max_ps(c4, zero), c5 = _mm256_max_ps(c5, zero), c6 = _mm256_max_ps(c6, zero),
      c7 = _mm256_max_ps(c7, zero);
    _mm256_storeu_ps(c + NR, c4), _mm256_storeu_ps(c + NR + 8, c5), _mm256_storeu_ps(c + NR + 16, c6);
    _mm256_storeu_ps(c + NR + 24, c7);
  } else {
    for (int t = 0; t < n; t++) {
      const float *w0 = b0 + e[t].off;
      __m256 s = _mm256_broadcast_ss(&e[t].v);
      c0 = _mm256_fmadd_ps(s, _mm256_loadu_ps(w0), c0), c1 = _mm256_fmadd_ps(s, _mm256_loadu_ps(w0 + 8), c1);
      c2 = _mm256_fmadd_ps(s, _mm256_loadu_ps(w0 + 16), c2), c3 = _mm256_fmadd_ps(s, _mm256_loadu_ps(w0 + 24), c3);
    }
  }
  if (last && relu)
    c0 = _mm256_max_ps(c0, zero), c1 = _mm256_max_ps(c1, zero), c2 = _mm256_max_ps(c2, zero),
    c3 = _mm256_max_ps(c3, zero);
  _mm256_storeu_ps(c, c0), _mm256_storeu_ps(c + 8, c1), _mm256_storeu_ps(c + 16, c2), _mm256_storeu_ps(c + 24, c3);
}

__attribute__((target("avx2,fma"))) static void sparse_avx2(float *c, int ldc, int rows, const nz_t *e,
                                                            const int *starts, int sstride, int q, const float *b0,
                                                            const float *b1, int first, int last, const float *bias,
                                                            int relu, int np) {
  for (int j = 0; j < rows; j++, c += ldc) {
    const int *st = starts + (size_t)j * (size_t)sstride;
    sparse_row_avx2(c, e + st[q], st[q + 1] - st[q], b0, b1, first, last, bias, relu, np == 3);
  }
}

/* list_generic eight inputs at a time: the nonzero lanes packed to the
 * front by a permutation from a table, offsets and values interleaved. */
/* pack_table[mask] byte i: the lane of mask's i-th set bit (the lanes a
 * compression keeps, in order). */
static const uint64_t pack_table[256] = {
    0x0000000000000000u, 0x0000000000000000u, 0x0000000000000001u, 0x0000000000000100u,
    0x0000000000000002u, 0x0000000000000200u, 0x0000000000000201u, 0x0000000000020100u,
    0x0000000000000003u, 0x0000000000000300u, 0x0000000000000301u, 0x0000000000030100u,
    0x0000000000000302u, 0x0000000000030200u, 0x0000000000030201u, 0x0000000003020100u,
    0x0000000000000004u, 0x0000000000000400u, 0x0000000000000401u, 0x0000000000040100u,
    0x0000000000000402u, 0x0000000000040200u, 0x0000000000040201u, 0x0000000004020100u,
    0x0000000000000403u, 0x0000000000040300u, 0x0000000000040301u, 0x0000000004030100u,
    0x0000000000040302u, 0x0000000004030200u, 0x0000000004030201u, 0x0000000403020100u,
    0x0000000000000005u, 0x0000000000000500u, 0x0000000000000501u, 0x0000000000050100u,
    0x0000000000000502u, 0x0000000000050200u, 0x0000000000050201u, 0x0000000005020100u,
    0x0000000000000503u, 0x0000000000050300u, 0x0000000000050301u, 0x0000000005030100u,
    0x0000000000050302u, 0x0000000005030200u, 0x0000000005030201u, 0x0000000503020100u,
    0x0000000000000504u, 0x0000000000050400u, 0x0000000000050401u, 0x0000000005040100u,
    0x0000000000050402u, 0x0000000005040200u, 0x0000000005040201u, 0x0000000504020100u,
    0x0000000000050403u, 0x0000000005040300u, 0x0000000005040301u, 0x0000000504030100u,
    0x0000000005040302u, 0x0000000504030200u, 0x0000000504030201u, 0x0000050403020100u,
    0x0000000000000006u, 0x0000000000000600u, 0x0000000000000601u, 0x0000000000060100u,
    0x0000000000000602u, 0x0000000000060200u, 0x0000000000060201u, 0x0000000006020100u,
    0x0000000000000603u, 0x0000000000060300u, 0x0000000000060301u, 0x0000000006030100u,
    0x0000000000060302u, 0x0000000006030200u, 0x0000000006030201u, 0x0000000603020100u,
    0x0000000000000604u, 0x0000000000060400u, 0x0000000000060401u, 0x0000000006040100u,
    0x0000000000060402u, 0x0000000006040200u, 0x0000000006040201u, 0x0000000604020100u,
    0x0000000000060403u, 0x0000000006040300u, 0x0000000006040301u, 0x0000000604030100u,
    0x0000000006040302u, 0x0000000604030200u, 0x0000000604030201u, 0x0000060403020100u,
    0x0000000000000605u, 0x0000000000060500u, 0x0000000000060501u, 0x0000000006050100u,
    0x0000000000060502u, 0x0000000006050200u, 0x0000000006050201u, 0x0000000605020100u,
    0x0000000000060503u, 0x0000000006050300u, 0x0000000006050301u, 0x0000000605030100u,
    0x0000000006050302u, 0x0000000605030200u, 0x0000000605030201u, 0x0000060503020100u,
    0x0000000000060504u, 0x0000000006050400u, 0x0000000006050401u, 0x0000000605040100u,
    0x0000000006050402u, 0x0000000605040200u, 0x0000000605040201u, 0x0000060504020100u,
    0x0000000006050403u, 0x0000000605040300u, 0x0000000605040301u, 0x0000060504030100u,
    0x0000000605040302u, 0x0000060504030200u, 0x0000060504030201u, 0x0006050403020100u,
    0x0000000000000007u, 0x0000000000000700u, 0x0000000000000701u, 0x0000000000070100u,
    0x0000000000000702u, 0x0000000000070200u, 0x0000000000070201u, 0x0000000007020100u,
    0x0000000000000703u, 0x0000000000070300u, 0x0000000000070301u, 0x0000000007030100u,
    0x0000000000070302u, 0x0000000007030200u, 0x0000000007030201u, 0x0000000703020100u,
    0x0000000000000704u, 0x0000000000070400u, 0x0000000000070401u, 0x0000000007040100u,
    0x0000000000070402u, 0x0000000007040200u, 0x0000000007040201u, 0x0000000704020100u,
    0x0000000000070403u, 0x0000000007040300u, 0x0000000007040301u, 0x0000000704030100u,
    0x0000000007040302u, 0x0000000704030200u, 0x0000000704030201u, 0x0000070403020100u,
    0x0000000000000705u, 0x0000000000070500u, 0x0000000000070501u, 0x0000000007050100u,
    0x0000000000070502u, 0x0000000007050200u, 0x0000000007050201u, 0x0000000705020100u,
    0x0000000000070503u, 0x0000000007050300u, 0x0000000007050301u, 0x0000000705030100u,
    0x0000000007050302u, 0x0000000705030200u, 0x0000000705030201u, 0x0000070503020100u,
    0x0000000000070504u, 0x0000000007050400u, 0x0000000007050401u, 0x0000000705040100u,
    0x0000000007050402u, 0x0000000705040200u, 0x0000000705040201u, 0x0000070504020100u,
    0x0000000007050403u, 0x0000000705040300u, 0x0000000705040301u, 0x0000070504030100u,
    0x0000000705040302u, 0x0000070504030200u, 0x0000070504030201u, 0x0007050403020100u,
    0x0000000000000706u, 0x0000000000070600u, 0x0000000000070601u, 0x0000000007060100u,
    0x0000000000070602u, 0x0000000007060200u, 0x0000000007060201u, 0x0000000706020100u,
    0x0000000000070603u, 0x0000000007060300u, 0x0000000007060301u, 0x0000000706030100u,
    0x0000000007060302u, 0x0000000706030200u, 0x0000000706030201u, 0x0000070603020100u,
    0x0000000000070604u, 0x0000000007060400u, 0x0000000007060401u, 0x0000000706040100u,
    0x0000000007060402u, 0x0000000706040200u, 0x0000000706040201u, 0x0000070604020100u,
    0x0000000007060403u, 0x0000000706040300u, 0x0000000706040301u, 0x0000070604030100u,
    0x0000000706040302u, 0x0000070604030200u, 0x0000070604030201u, 0x0007060403020100u,
    0x0000000000070605u, 0x0000000007060500u, 0x0000000007060501u, 0x0000000706050100u,
    0x0000000007060502u, 0x0000000706050200u, 0x0000000706050201u, 0x0000070605020100u,
    0x0000000007060503u, 0x0000000706050300u, 0x0000000706050301u, 0x0000070605030100u,
    0x0000000706050302u, 0x0000070605030200u, 0x0000070605030201u, 0x0007060503020100u,
    0x0000000007060504u, 0x0000000706050400u, 0x0000000706050401u, 0x0000070605040100u,
    0x0000000706050402u, 0x0000070605040200u, 0x0000070605040201u, 0x0007060504020100u,
    0x0000000706050403u, 0x0000070605040300u, 0x0000070605040301u, 0x0007060504030100u,
    0x0000070605040302u, 0x0007060504030200u, 0x0007060504030201u, 0x0706050403020100u,
};

__attribute__((target("avx2,fma"))) static int list_avx2(nz_t *e, const float *x, int r0, int r1) {
  int n = 0, r = r0;
  __m256 zero = _mm256_setzero_ps();
  __m256i step = _mm256_setr_epi32(0, NR, 2 * NR, 3 * NR, 4 * NR, 5 * NR, 6 * NR, 7 * NR);
  for (; r + 8 <= r1; r += 8) {
    __m256 v = _mm256_loadu_ps(x + r);
    int mask = _mm256_movemask_ps(_mm256_cmp_ps(v, zero, _CMP_NEQ_UQ));
    if (!mask) continue;
    __m256i idx = _mm256_cvtepu8_epi32(_mm_cvtsi64_si128((long long)pack_table[mask]));
    __m256i off = _mm256_add_epi32(_mm256_set1_epi32(r * NR), step);
    __m256i oc = _mm256_permutevar8x32_epi32(off, idx);
    __m256i vc = _mm256_permutevar8x32_epi32(_mm256_castps_si256(v), idx);
    __m256i lo = _mm256_unpacklo_epi32(oc, vc), hi = _mm256_unpackhi_epi32(oc, vc);
    _mm256_storeu_si256((__m256i *)(void *)(e + n), _mm256_permute2x128_si256(lo, hi, 0x20));
    _mm256_storeu_si256((__m256i *)(void *)(e + n + 4), _mm256_permute2x128_si256(lo, hi, 0x31));
    n += __builtin_popcount((unsigned)mask);
  }
  return n + list_generic(e + n, x, r, r1);
}

/* ---- x86-64 AVX-512F ---------------------------------------------------------------- */
#define AVX512_MR 12

/* Twelve rows times a whole panel (two ZMM each): 24 accumulators and two
 * weight vectors; the broadcasts are memory operands. */
__attribute__((target("avx512f"))) static void tile_avx512(float *c, int ldc, int count, const float *const *a,
                                                           const int *ks, int nk, const float *panel, const float *bias,
                                                           int relu) {
  __m512 acc[AVX512_MR][2];
  __m512 bias0 = _mm512_loadu_ps(bias), bias1 = _mm512_loadu_ps(bias + 16);
#pragma GCC unroll 12
  for (int i = 0; i < AVX512_MR; i++) acc[i][0] = bias0, acc[i][1] = bias1;
  for (int t = 0; t < nk; t++) {
    int r = ks[t];
    const float *b = panel + (size_t)r * NR;
    __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16);
#pragma GCC unroll 12
    for (int i = 0; i < AVX512_MR; i++) {
      __m512 s = _mm512_set1_ps(a[i][r]);
      acc[i][0] = _mm512_fmadd_ps(s, b0, acc[i][0]);
      acc[i][1] = _mm512_fmadd_ps(s, b1, acc[i][1]);
    }
  }
  __m512 zero = _mm512_setzero_ps();
#pragma GCC unroll 12
  for (int i = 0; i < AVX512_MR; i++) {
    if (i >= count) break;
    __m512 v0 = acc[i][0], v1 = acc[i][1];
    if (relu) v0 = _mm512_max_ps(v0, zero), v1 = _mm512_max_ps(v1, zero);
    _mm512_storeu_ps(c + (size_t)i * (size_t)ldc, v0);
    _mm512_storeu_ps(c + (size_t)i * (size_t)ldc + 16, v1);
  }
}

__attribute__((target("avx512f"))) static void used_avx512(uint32_t *words, const float *const *rows, int count,
                                                           int k) {
  __m512 zero = _mm512_setzero_ps();
  memset(words, 0, sizeof(uint32_t) * (size_t)((k + 31) / 32));
  for (int r = 0; r < k; r += 16) {
    __mmask16 load = r + 16 <= k ? (__mmask16)0xffff : (__mmask16)((1u << (k - r)) - 1u);
    unsigned bits = 0;
    for (int j = 0; j < count; j++)
      bits |= _mm512_mask_cmp_ps_mask(load, _mm512_maskz_loadu_ps(load, rows[j] + r), zero, _CMP_NEQ_UQ);
    words[r / 32] |= (uint32_t)bits << (r % 32);
  }
}

/* Two panels per pass over the nonzero inputs: four independent chains. */
__attribute__((target("avx512f"))) static void row_avx512(float *out, const float *x, const int *nz, int nnz, int k,
                                                          const float *packed, int panels, const float *bias,
                                                          int relu) {
  size_t stride = (size_t)k * NR;
  __m512 zero = _mm512_setzero_ps();
  int p = 0;
  for (; p + 1 < panels; p += 2) {
    const float *pa = packed + (size_t)p * stride, *pb = pa + stride, *bp = bias + (size_t)p * NR;
    __m512 c0 = _mm512_loadu_ps(bp), c1 = _mm512_loadu_ps(bp + 16), c2 = _mm512_loadu_ps(bp + 32);
    __m512 c3 = _mm512_loadu_ps(bp + 48);
    for (int t = 0; t < nnz; t++) {
      size_t off = (size_t)nz[t] * NR;
      __m512 s = _mm512_set1_ps(x[nz[t]]);
      c0 = _mm512_fmadd_ps(s, _mm512_loadu_ps(pa + off), c0);
      c1 = _mm512_fmadd_ps(s, _mm512_loadu_ps(pa + off + 16), c1);
      c2 = _mm512_fmadd_ps(s, _mm512_loadu_ps(pb + off), c2);
      c3 = _mm512_fmadd_ps(s, _mm512_loadu_ps(pb + off + 16), c3);
    }
    if (relu)
      c0 = _mm512_max_ps(c0, zero), c1 = _mm512_max_ps(c1, zero), c2 = _mm512_max_ps(c2, zero),
      c3 = _mm512_max_ps(c3, zero);
    float *o = out + (size_t)p * NR;
    _mm512_storeu_ps(o, c0), _mm512_storeu_ps(o + 16, c1), _mm512_storeu_ps(o + 32, c2), _mm512_storeu_ps(o + 48, c3);
  }
  for (; p < panels; p++) {
    const float *pa = packed + (size_t)p * stride, *bp = bias + (size_t)p * NR;
    __m512 c0 = _mm512_loadu_ps(bp), c1 = _mm512_loadu_ps(bp + 16);
    for (int t = 0; t < nnz; t++) {
      size_t off = (size_t)nz[t] * NR;
      __m512 s = _mm512_set1_ps(x[nz[t]]);
      c0 = _mm512_fmadd_ps(s, _mm512_loadu_ps(pa + off), c0);
      c1 = _mm512_fmadd_ps(s, _mm512_loadu_ps(pa + off + 16), c1);
    }
    if (relu) c0 = _mm512_max_ps(c0, zero), c1 = _mm512_max_ps(c1, zero);
    _mm512_storeu_ps(out + (size_t)p * NR, c0), _mm512_storeu_ps(out + (size_t)p * NR + 16, c1);
  }
}
#endif

/* ---- choice and driver ------------------------------------------------------------------ */

typedef void (*tile_fn)(float *c, int ldc, int count, const float *const *a, const int *ks, int nk,
                        const float *panel, const float *bias, int relu);
typedef void (*row_fn)(float *out, const float *x, const int *nz, int nnz, int k, const float *packed, int panels,
                       const float *bias, int relu);

typedef void (*used_fn)(uint32_t *words, const float *const *rows, int count, int k);
typedef void (*sparse_fn)(float *c, int ldc, int rows, const nz_t *e, const int *starts, int sstride, int q,
                          const float *b0, const float *b1, int first, int last, const float *bias, int relu, int np);

typedef struct {
  const char *name;
  int mr;
  tile_fn tile;
  row_fn row;
  used_fn used;
  sparse_fn sparse; /* NULL: the blocked path for every layer */
  int (*list)(nz_t *e, const float *x, int r0, int r1);
} kernel_t;

static const kernel_t kernels[ANIM_GEMM_KERNEL_COUNT] = {
    {"generic", GENERIC_MR, tile_generic, row_generic, used_generic, sparse_generic, list_generic},
#if GEMM_X86
    {"avx2", AVX2_MR, tile_avx2, row_avx2, used_avx2, sparse_avx2, list_avx2},
    {"avx512", AVX512_MR, tile_avx512, row_avx512, used_avx512, NULL, NULL},
#else
    {"avx2", 0, NULL, NULL, NULL, NULL, NULL},
    {"avx512", 0, NULL, NULL, NULL, NULL, NULL},
#endif
};

const char *anim_gemm_kernel_name(anim_gemm_kernel_t kernel) {
  return (unsigned)kernel < ANIM_GEMM_KERNEL_COUNT ? kernels[kernel].name : "unknown";
}

int anim_gemm_kernel_available(anim_gemm_kernel_t kernel) {
  switch (kernel) {
  case ANIM_GEMM_GENERIC: return 1;
#if GEMM_X86
  case ANIM_GEMM_AVX2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  case ANIM_GEMM_AVX512: return __builtin_cpu_supports("avx512f");
#endif
  default: return 0;
  }
}

anim_gemm_kernel_t anim_gemm_kernel_best(void) {
  const char *forced = getenv("ANIM_GEMM_KERNEL");
  if (forced)
    for (int k = 0; k < ANIM_GEMM_KERNEL_COUNT; k++)
      if (strcmp(forced, kernels[k].name) == 0 && anim_gemm_kernel_available((anim_gemm_kernel_t)k))
        return (anim_gemm_kernel_t)k;
  for (int k = ANIM_GEMM_KERNEL_COUNT - 1; k > 0; k--)
    if (anim_gemm_kernel_available((anim_gemm_kernel_t)k)) return (anim_gemm_kernel_t)k;
  return ANIM_GEMM_GENERIC;
}

/* The sparse path's scratch for a tile of rows rows of k inputs: every
 * input's entry (two words) and each row's chunk starts. */
static size_t sparse_words(int rows, int k) {
  return (size_t)rows * (2 * (size_t)k + (size_t)(k + SPARSE_KC - 1) / SPARSE_KC + 1) + 16;
}

size_t anim_gemm_mask_words(int m, int k) {
  /* One mask of k bits per block of rows (the smallest block is the
   * portable kernel's), or the sparse path's lists for one tile of rows. */
  size_t masks = (size_t)((m + GENERIC_MR - 1) / GENERIC_MR) * (size_t)((k + 31) / 32);
  size_t lists = m > 1 ? sparse_words(m < SPARSE_ROWS ? m : SPARSE_ROWS, k) : 0;
  return masks > lists ? masks : lists;
}

/* The nonzero inputs of rows [i0, i0 + rows) of a, as entries in ascending
 * order, and for each row where each chunk of SPARSE_KC inputs starts:
 * row j's entries of chunk q are e[starts[j (nq + 1) + q] .. starts[j (nq + 1) + q + 1]).
 * Returns the number of entries. */
static int sparse_lists(const kernel_t *kern, nz_t *e, int *starts, const float *a, int lda, int rows, int k, int nq) {
  int n = 0;
  for (int j = 0; j < rows; j++) {
    const float *x = a + (size_t)j * (size_t)lda;
    int *st = starts + (size_t)j * (size_t)(nq + 1);
    for (int q = 0; q < nq; q++) {
      st[q] = n;
      n += kern->list(e + n, x, q * SPARSE_KC, (q + 1) * SPARSE_KC < k ? (q + 1) * SPARSE_KC : k);
    }
    st[nq] = n;
  }
  return n;
}

/* The sparse path (see anim_gemm_run): returns 0 when the first tile's
 * inputs are too dense for it, having written nothing to c. */
static int run_sparse(const kernel_t *kern, float *c, int ldc, const float *a, int lda, int m, int k,
                      const float *packed_b, const float *bias, int panels, int relu, uint32_t *scratch) {
  int nq = (k + SPARSE_KC - 1) / SPARSE_KC;
  int tile = m < SPARSE_ROWS ? m : SPARSE_ROWS;
  nz_t *e = (nz_t *)scratch;
  int *starts = (int *)(scratch + 2 * (size_t)tile * (size_t)k + 16); /* past the lists' slack (8 entries) */
  size_t panel_floats = (size_t)k * NR;
  for (int i0 = 0; i0 < m; i0 += tile) {
    int rows = m - i0 < tile ? m - i0 : tile;
    int n = sparse_lists(kern, e, starts, a + (size_t)i0 * (size_t)lda, lda, rows, k, nq);
    if (i0 == 0 && (double)n > SPARSE_DENSITY * (double)rows * (double)k) return 0;
    for (int p = 0; p < panels;) {
      int step = p + 2 < panels ? 3 : p + 1 < panels ? 2 : 1;
      const float *b0 = packed_b + (size_t)p * panel_floats, *b1 = step > 1 ? b0 + panel_floats : NULL;
      /* One chunk of the panels' weights (3 x SPARSE_KC rows of NR floats)
       * stays in L1 while every row of the tile passes over it. */
      for (int q = 0; q < nq; q++)
        kern->sparse(c + (size_t)i0 * (size_t)ldc + (size_t)p * NR, ldc, rows, e, starts, nq + 1, q, b0, b1, q == 0,
                     q == nq - 1, bias + (size_t)p * NR, relu, step);
      p += step;
    }
  }
  return 1;
}

void anim_gemm_run(anim_gemm_kernel_t kernel, float *c, int ldc, const float *a, int lda, int m, int k,
                   const float *packed_b, const float *bias, int n, int relu, uint32_t *masks) {
  if ((unsigned)kernel >= ANIM_GEMM_KERNEL_COUNT || !anim_gemm_kernel_available(kernel)) kernel = ANIM_GEMM_GENERIC;
  const kernel_t *kern = &kernels[kernel];
  int padded = anim_gemm_padded(n), panels = padded / NR;
  if (m == 1) {
    /* One character: ReLU leaves many inputs at zero; skip their weight rows. */
    int nz[ANIM_GEMM_MAX_K], nnz = 0;
    for (int r = 0; r < k; r++)
      if (a[r] != 0.0f) nz[nnz++] = r;
    kern->row(c, a, nz, nnz, k, packed_b, panels, bias, relu);
    return;
  }
  /* Sparse inputs (after a ReLU): each row times only its own nonzero
   * inputs, with the weights blocked for L1. */
  if (masks && kern->sparse && run_sparse(kern, c, ldc, a, lda, m, k, packed_b, bias, panels, relu, masks)) return;
  const float *rows[MR_MAX];
  int ks[ANIM_GEMM_MAX_K + KS_PAD];
  uint32_t local[ANIM_GEMM_MAX_K / 32];
  int kw = (k + 31) / 32;
  /* A group of panels small enough to stay in the L2 cache (1 MiB per core
   * on current x86) while every row of A passes over it: without this, a
   * 512 x 512 layer (1 MiB of weights) is evicted by the rows of a large
   * batch and read from L3 for each block of rows, halving the throughput. */
  size_t panel_bytes = (size_t)k * NR * sizeof(float);
  int group = panel_bytes >= GROUP_BYTES ? 1 : (int)(GROUP_BYTES / panel_bytes);
  for (int p0 = 0; p0 < panels; p0 += group) {
    int p1 = p0 + group < panels ? p0 + group : panels;
    for (int i = 0; i < m; i += kern->mr) {
      int count = m - i < kern->mr ? m - i : kern->mr;
      /* Rows past the end repeat the last one: computed, never stored. */
      for (int r = 0; r < kern->mr; r++) rows[r] = a + (size_t)(i + (r < count ? r : count - 1)) * (size_t)lda;
      /* The inputs some row of the block uses: after a ReLU, a third to
       * half of them are zero in every row of a 12-row block. */
      uint32_t *words = masks ? masks + (size_t)(i / kern->mr) * (size_t)kw : local;
      if (!masks || p0 == 0) kern->used(words, rows, count, k);
      int nk = 0;
      for (int w = 0; w < kw; w++)
        for (uint32_t bits = words[w]; bits; bits &= bits - 1u) ks[nk++] = 32 * w + __builtin_ctz(bits);
      int last = nk ? ks[nk - 1] : 0;
      for (int t = 0; t < KS_PAD; t++) ks[nk + t] = last; /* prefetched, never used */
      for (int p = p0; p < p1; p++)
        kern->tile(c + (size_t)i * (size_t)ldc + (size_t)p * NR, ldc, count, rows, ks, nk,
                   packed_b + (size_t)p * (size_t)k * NR, bias + (size_t)p * NR, relu);
    }
  }
}
