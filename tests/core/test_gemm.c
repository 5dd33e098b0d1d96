/*
 * test_gemm.c: the dense-layer products of gemm.h against a naive
 * double-precision reference, and the batch paths against each other.
 *
 * Argument checks first (what gemm.h promises for an unknown or unavailable
 * kernel), then, for every available kernel, randomized layers of the real
 * networks' sizes (the reference networks' 27/59 -> 512 -> 512 -> 59/338 and
 * the trained ones' 224) with inputs as a ReLU leaves them: from all nonzero
 * (a first layer) to 10% nonzero, some inputs zero in every row, some in
 * none; batches of 2, a block's worth, a tile of the sparse path and one
 * more, and 1,000 rows. Each output is compared with the reference within a
 * stated bound; the sparse path (chosen by density) with the register-blocked
 * path (masks NULL) for exact equality, since both add the same products in
 * the same order; and the scratch is sized exactly by anim_gemm_mask_words,
 * so an overrun shows under the sanitizers.
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
#include "learned/gemm.h"

/* Float summation in another order (blocked, sparse, fused or separate
 * multiply-adds) differs from the exact sum by at most gamma_n times the sum
 * of the terms' magnitudes, gamma_n = n u / (1 - n u), u = 2^-24, for n
 * terms (the bias and k products): Higham's bound for recursive summation,
 * which holds for any order. An indexing mistake misses it by orders of
 * magnitude. */
static double bound(int k, double magnitude) {
  double nu = (double)(k + 1) * ldexp(1.0, -24);
  return nu / (1.0 - nu) * magnitude + 1e-30;
}

static uint32_t rng_state = 12345u;
static float uniform(void) {
  rng_state = rng_state * 1664525u + 1013904223u;
  return (float)(rng_state >> 8) / 16777216.0f;
}

typedef struct {
  int m, k, n;
  float *a, *b, *bias, *packed;
} layer_t;

/* A layer with weights in [-0.5, 0.5) and inputs nonzero with probability
 * density; one input in 16 is zero in every row and one in 16 in none
 * (after a ReLU some units are dead, some always on). */
static layer_t make_layer(int m, int k, int n, double density) {
  layer_t l = {m, k, n, NULL, NULL, NULL, NULL};
  int np = anim_gemm_padded(n);
  l.a = malloc(sizeof(float) * (size_t)m * (size_t)k);
  l.b = malloc(sizeof(float) * (size_t)k * (size_t)n);
  l.bias = calloc((size_t)np, sizeof(float));
  l.packed = malloc(sizeof(float) * anim_gemm_packed_floats(k, n));
  assert_true(l.a && l.b && l.bias && l.packed);
  for (size_t i = 0; i < (size_t)k * (size_t)n; i++) l.b[i] = uniform() - 0.5f;
  for (int j = 0; j < n; j++) l.bias[j] = uniform() - 0.5f;
  for (int i = 0; i < m; i++)
    for (int r = 0; r < k; r++) {
      int dead = r % 16 == 3, live = r % 16 == 7;
      int on = !dead && (live || uniform() < density);
      l.a[(size_t)i * (size_t)k + (size_t)r] = on ? 2.0f * uniform() + 0.01f : 0.0f;
    }
  anim_gemm_pack(l.packed, l.b, k, n);
  return l;
}

static void free_layer(layer_t *l) { free(l->a), free(l->b), free(l->bias), free(l->packed); }

/* Runs the layer with kernel (masks: scratch of anim_gemm_mask_words, or
 * NULL for the blocked path); returns c (m x padded(n), caller frees). */
static float *run(const layer_t *l, anim_gemm_kernel_t kernel, int relu, int with_masks) {
  int np = anim_gemm_padded(l->n);
  float *c = malloc(sizeof(float) * (size_t)l->m * (size_t)np);
  uint32_t *masks = with_masks ? malloc(sizeof(uint32_t) * anim_gemm_mask_words(l->m, l->k)) : NULL;
  assert_non_null(c);
  assert_true(!with_masks || masks);
  anim_gemm_run(kernel, c, np, l->a, l->k, l->m, l->k, l->packed, l->bias, l->n, relu, masks);
  free(masks);
  return c;
}

/* Every output within bound() of the double-precision reference; the
 * padding columns 0. Fails naming the kernel, shape, row and column. */
static void check_reference(const layer_t *l, const float *c, int relu, const char *what) {
  int np = anim_gemm_padded(l->n);
  double worst = 0.0;
  for (int i = 0; i < l->m; i++) {
    const float *a = l->a + (size_t)i * (size_t)l->k;
    for (int j = 0; j < np; j++) {
      double got = c[(size_t)i * (size_t)np + (size_t)j];
      if (j >= l->n) {
        if (got != 0.0) fail_msg("%s: row %d padding column %d is %g, not 0", what, i, j, got);
        continue;
      }
      double sum = l->bias[j], mag = fabs(l->bias[j]);
      for (int r = 0; r < l->k; r++) {
        double t = (double)a[r] * (double)l->b[(size_t)r * (size_t)l->n + (size_t)j];
        sum += t, mag += fabs(t);
      }
      /* ReLU cannot widen the error: max(x, 0) is 1-Lipschitz. */
      double want = relu && sum < 0.0 ? 0.0 : sum;
      double err = fabs(got - want);
      if (err > bound(l->k, mag))
        fail_msg("%s: row %d column %d is %.9g, reference %.9g (error %.3g over the bound %.3g)", what, i, j, got, want,
                 err, bound(l->k, mag));
      if (err / (mag + 1e-30) > worst) worst = err / (mag + 1e-30);
    }
  }
  (void)worst;
}

/* ---- arguments --------------------------------------------------------------------------- */

static void test_kernel_names_and_fallback(void **state) {
  (void)state;
  assert_string_equal(anim_gemm_kernel_name((anim_gemm_kernel_t)99), "unknown");
  assert_string_equal(anim_gemm_kernel_name(ANIM_GEMM_GENERIC), "generic");
  assert_int_equal(anim_gemm_kernel_available(ANIM_GEMM_GENERIC), 1);
  assert_int_equal(anim_gemm_kernel_available((anim_gemm_kernel_t)99), 0);
  /* An unknown kernel runs the portable one: the same outputs bit for bit. */
  layer_t l = make_layer(7, 59, 70, 0.5);
  float *want = run(&l, ANIM_GEMM_GENERIC, 1, 1), *got = run(&l, (anim_gemm_kernel_t)99, 1, 1);
  assert_memory_equal(want, got, sizeof(float) * 7 * (size_t)anim_gemm_padded(70));
  free(want), free(got), free_layer(&l);
}

static void test_pack_layout(void **state) {
  (void)state;
  layer_t l = make_layer(1, 37, 45, 1.0);
  for (int r = 0; r < 37; r++)
    for (int c = 0; c < 45; c++)
      assert_true(anim_gemm_packed_at(l.packed, 37, 45, r, c) == l.b[(size_t)r * 45 + (size_t)c]);
  free_layer(&l);
}

/* ---- products ------------------------------------------------------------------------------ */

/* The real networks' layer shapes (inputs, outputs, ReLU after). */
static const struct {
  int k, n, relu;
} shapes[] = {
    {27, 512, 1},  /* the projector's first layer (reference widths) */
    {59, 512, 1},  /* stepper's and decompressor's first */
    {512, 512, 1}, /* a hidden layer */
    {512, 59, 0},  /* the stepper's and projector's last */
    {512, 338, 0}, /* the decompressor's last */
    {224, 224, 1}, /* the trained networks' hidden layer */
    {224, 59, 0},
};
static const double densities[] = {1.0, 0.55, 0.35, 0.1};
static const int batches[] = {2, 6, 13, 64, 65, 1000};

static void test_against_reference(void **state) {
  (void)state;
  int checked = 0;
  for (int kern = 0; kern < ANIM_GEMM_KERNEL_COUNT; kern++) {
    if (!anim_gemm_kernel_available((anim_gemm_kernel_t)kern)) continue;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
      for (size_t d = 0; d < sizeof densities / sizeof densities[0]; d++)
        for (size_t bi = 0; bi < sizeof batches / sizeof batches[0]; bi++) {
          int m = batches[bi];
          /* 1,000 rows on the hidden shapes at a hidden layer's density only: the reference is slow. */
          if (m == 1000 && ((shapes[s].k != 512 && shapes[s].k != 224) || densities[d] != 0.35)) continue;
          layer_t l = make_layer(m, shapes[s].k, shapes[s].n, densities[d]);
          char what[128];
          snprintf(what, sizeof what, "%s, %d x %d -> %d, density %.2f",
                   anim_gemm_kernel_name((anim_gemm_kernel_t)kern), m, shapes[s].k, shapes[s].n, densities[d]);
          float *c = run(&l, (anim_gemm_kernel_t)kern, shapes[s].relu, 1);
          check_reference(&l, c, shapes[s].relu, what);
          free(c);
          free_layer(&l);
          checked++;
        }
  }
  assert_true(checked > 100);
}

/* The path a batch takes (sparse when its inputs are, else blocked) must
 * not change an output: both add the bias and the products of the nonzero
 * inputs in ascending order, so they agree exactly (== : a skipped zero
 * product may leave -0 where the blocked path has +0). */
static void test_sparse_equals_blocked(void **state) {
  (void)state;
  for (int kern = 0; kern < ANIM_GEMM_KERNEL_COUNT; kern++) {
    if (!anim_gemm_kernel_available((anim_gemm_kernel_t)kern)) continue;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
      for (size_t d = 1; d < sizeof densities / sizeof densities[0]; d++) {
        int m = 200;
        layer_t l = make_layer(m, shapes[s].k, shapes[s].n, densities[d]);
        float *with = run(&l, (anim_gemm_kernel_t)kern, shapes[s].relu, 1);
        float *blocked = run(&l, (anim_gemm_kernel_t)kern, shapes[s].relu, 0);
        int np = anim_gemm_padded(l.n);
        for (int i = 0; i < m; i++)
          for (int j = 0; j < np; j++) {
            float x = with[(size_t)i * (size_t)np + (size_t)j], y = blocked[(size_t)i * (size_t)np + (size_t)j];
            if (x != y)
              fail_msg("%s, %d -> %d, density %.2f: row %d column %d: %.9g with masks, %.9g blocked",
                       anim_gemm_kernel_name((anim_gemm_kernel_t)kern), shapes[s].k, shapes[s].n, densities[d], i,
                       j, (double)x, (double)y);
          }
        free(with), free(blocked), free_layer(&l);
      }
  }
}

/* A batch's rows equal the same rows run one at a time (the matrix-vector
 * path), exactly: a character's pose must not depend on its crowd. */
static void test_batch_rows_equal_single_rows(void **state) {
  (void)state;
  for (int kern = 0; kern < ANIM_GEMM_KERNEL_COUNT; kern++) {
    if (!anim_gemm_kernel_available((anim_gemm_kernel_t)kern)) continue;
    layer_t l = make_layer(130, 512, 338, 0.3);
    int np = anim_gemm_padded(l.n);
    float *batch = run(&l, (anim_gemm_kernel_t)kern, 1, 1);
    float *one = malloc(sizeof(float) * (size_t)np);
    for (int i = 0; i < l.m; i++) {
      anim_gemm_run((anim_gemm_kernel_t)kern, one, np, l.a + (size_t)i * (size_t)l.k, l.k, 1, l.k, l.packed, l.bias,
                    l.n, 1, NULL);
      for (int j = 0; j < np; j++)
        if (one[j] != batch[(size_t)i * (size_t)np + (size_t)j])
          fail_msg("%s: row %d column %d: %.9g alone, %.9g in the batch",
                   anim_gemm_kernel_name((anim_gemm_kernel_t)kern), i, j, (double)one[j],
                   (double)batch[(size_t)i * (size_t)np + (size_t)j]);
    }
    free(one), free(batch), free_layer(&l);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_kernel_names_and_fallback),
      cmocka_unit_test(test_pack_layout),
      cmocka_unit_test(test_against_reference),
      cmocka_unit_test(test_sparse_equals_blocked),
      cmocka_unit_test(test_batch_rows_equal_single_rows),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
