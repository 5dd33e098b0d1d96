/*
 * gemm.h: the dense layer product of the learned networks, C = A B + bias
 * (optionally followed by ReLU), over weights packed once in advance.
 *
 * A holds one row per item (a character) and k columns; B is the layer's
 * k x n weight matrix (rows = inputs, as the network files store it). B is
 * packed once, when a network is loaded, into panels of ANIM_GEMM_NR
 * columns: panel p holds, for every input row r, the ANIM_GEMM_NR floats
 * B[r][p NR .. p NR + NR - 1] contiguously (zero past column n), so a kernel
 * streams one panel from start to end. C is written ANIM_GEMM_NR columns at
 * a time: its row stride must leave room for anim_gemm_padded(n) columns
 * (the padding columns receive bias 0, i.e. 0 after ReLU).
 *
 * Kernels: a portable one (GCC vector extensions, SSE2 on x86-64), and on
 * x86-64 AVX2+FMA and AVX-512F ones compiled with target attributes and
 * chosen at run time from what the CPU reports, so the default build stays
 * portable (no -march=native). One row (a single character) takes a
 * matrix-vector path; several rows take a register-blocked matrix product
 * over blocks of rows (12 for AVX-512, 6 for AVX2, 2 portable). Both skip
 * the inputs that are zero (in every row of the block): after ReLU, 45-90%
 * of a hidden layer's values are zero, a third to a half of them in all 12
 * rows of a block.
 *
 * Sparse batches (AVX2 and portable kernels, masks given): a block's union
 * of nonzero inputs is much denser than each row (the reference stepper's
 * hidden layer: 38% of a row's inputs nonzero, 84% of a 6-row block's), so
 * when at most 60% of a batch's first 64 rows' inputs are nonzero, each row
 * is multiplied by its own nonzero inputs only: listed (offset, value) once
 * per tile of 64 rows, then taken chunk by chunk of 64 inputs, three
 * panels at a time, the chunk's 24 KiB of weights staying in L1 while the
 * tile's rows pass over it. Denser layers (a network's first, whose inputs are not
 * a ReLU's) keep the blocked path.
 *
 * Every kernel and path computes each output as the bias plus the products
 * over the used inputs in ascending order (an input zero in this row but
 * used by another adds an exact zero), so the one-row, blocked and sparse
 * paths of a kernel give identical results (up to the sign of a zero);
 * fused multiply-adds on AVX2/AVX-512 and separate ones in the portable
 * kernel make kernels agree to rounding, not bit for bit.
 *
 * Nothing here allocates or fails; arguments are the caller's contract.
 */
#ifndef ANIM_GEMM_H
#define ANIM_GEMM_H

#include <stddef.h>
#include <stdint.h>

#define ANIM_GEMM_NR 32      /* columns per packed panel */
#define ANIM_GEMM_MAX_K 4096 /* inputs per layer a kernel accepts (the one-row path keeps k indices on the stack) */

typedef enum {
  ANIM_GEMM_GENERIC = 0, /* portable C (vector extensions) */
  ANIM_GEMM_AVX2 = 1,    /* x86-64 AVX2 + FMA */
  ANIM_GEMM_AVX512 = 2,  /* x86-64 AVX-512F */
  ANIM_GEMM_KERNEL_COUNT
} anim_gemm_kernel_t;

/* n rounded up to a multiple of ANIM_GEMM_NR. */
static inline int anim_gemm_padded(int n) { return (n + ANIM_GEMM_NR - 1) / ANIM_GEMM_NR * ANIM_GEMM_NR; }

/* Floats a packed k x n matrix takes: k * anim_gemm_padded(n). */
size_t anim_gemm_packed_floats(int k, int n);

/* Packs b (k x n, row-major) into out (anim_gemm_packed_floats floats). */
void anim_gemm_pack(float *out, const float *b, int k, int n);

/* Element (r, c) of a packed matrix of n columns (for checks, not hot paths). */
float anim_gemm_packed_at(const float *packed, int k, int n, int r, int c);

/* 1 when this CPU (and build) can run kernel. ANIM_GEMM_GENERIC always can. */
int anim_gemm_kernel_available(anim_gemm_kernel_t kernel);
/* The fastest available kernel (AVX-512, then AVX2, then portable), unless
 * the environment variable ANIM_GEMM_KERNEL names an available one
 * ("generic", "avx2", "avx512"): a documented override for measurements. */
anim_gemm_kernel_t anim_gemm_kernel_best(void);
const char *anim_gemm_kernel_name(anim_gemm_kernel_t kernel);

/* Words of scratch anim_gemm_run may use for m rows of k inputs: the
 * blocked path's masks or the sparse path's lists for a tile of rows
 * (at most 64 x (2 k + k / 64 + 2) words, 265 KB for k = 512). */
size_t anim_gemm_mask_words(int m, int k);

/* C = A B + bias, then ReLU when relu != 0.
 *  c: m rows with stride ldc >= anim_gemm_padded(n); columns [0, padded(n)) written;
 *  a: m rows with stride lda >= k; read-only, must not overlap c;
 *  packed_b: anim_gemm_pack of the k x n weights; bias: padded(n) floats (zeros past n);
 *  masks: anim_gemm_mask_words(m, k) words of scratch (which inputs each block
 *  of rows uses, found once and kept across the panel groups; or the sparse
 *  path's lists), or NULL to find them again for each group (and never take
 *  the sparse path);
 *  1 <= k <= ANIM_GEMM_MAX_K, n >= 1, m >= 0. An unavailable kernel runs the portable one. */
void anim_gemm_run(anim_gemm_kernel_t kernel, float *c, int ldc, const float *a, int lda, int m, int k,
                   const float *packed_b, const float *bias, int n, int relu, uint32_t *masks);

#endif
