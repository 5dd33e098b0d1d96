/*
 * leaf_codes.h: a k-d tree leaf's rows kept as one byte per dimension, and
 * the integer bounds that rule rows out without reading them whole
 * (search_kdtree.c). Pure functions on plain arrays; the tree decides which
 * leaves, groups and rows to bound.
 *
 * A leaf's rows are kept as one byte per dimension: c_j = floor((x_j - lo_j) /
 * step), lo the leaf's box and step = its widest side / 255 (one step for
 * every dimension, so a distance in codes is a distance in features times
 * step). A query checks a row's codes (a quarter of the row's bytes, summed in
 * integers) and computes the exact distance, on the original row, only for
 * rows the codes cannot rule out: a noisy query opens hundreds of leaves whose
 * rows all lie at about the same distance, and reading them whole was most of
 * its time.
 *
 * The bound (in code units, per dimension j of the cols real ones): the query
 * t_j = (q_j - lo_j) / step is rounded down to an integer a_j (clamped to
 * [ANIM_CODE_LO, ANIM_CODE_HI], which holds every row's cell [c_j, c_j + 1] and only
 * brings it nearer), so (t_j - a_j) - (x_j - c_j) lies in (-1 - e, 1 + e)
 * with e the float rounding of t_j (at most 3.1 2^-24 |t_j| < 4.2e-4 inside
 * the clamp). By the triangle inequality |t - x| >= |a - c| - sqrt(cols)
 * (1 + 1e-3), and |q - x| = step |t - x|.
 *
 * What it does not: choose a leaf's box or step, or encode its rows (the
 * tree does, search_kdtree.c's leaf_encode), or compute any exact cost.
 */
#ifndef ANIM_LEAF_CODES_H
#define ANIM_LEAF_CODES_H

#include <math.h>
#include <stdint.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define ANIM_CODE_LO (-2000)
#define ANIM_CODE_HI 2255
#define ANIM_CODE_SLACK 1.001

/* out[i]: the code distance of each of n rows of codes (anim_code_distances). */
typedef void (*anim_code_distances_fn)(const int16_t *a, const uint8_t *c, int stride, int n, int32_t *out);

/* out[i] = sum_j (a_j - c_j)^2 over stride dims (a multiple of 8) for the n
 * rows of codes at c, stride apart: with a_j in [ANIM_CODE_LO, ANIM_CODE_HI]
 * and c_j in [0, 255], at most 128 x 2255^2 < 2^31, exact in 32-bit
 * integers, so every path gives the same values. */
void anim_code_distances(const int16_t *a, const uint8_t *c, int stride, int n, int32_t *out);

/* anim_code_distances with AVX2 when this build has that path and the CPU
 * runs it (avx2 non-zero: the caller's choice, e.g. ANIM_SEARCH_NO_AVX2),
 * else the portable one; the same integers either way. */
anim_code_distances_fn anim_code_distances_for(int avx2);

/* The least code distance from a to any code in the box [glo, ghi]: no row
 * of the group is nearer in codes. */
static inline int32_t anim_codes_group_distance(const int16_t *a, const uint8_t *glo, const uint8_t *ghi, int stride) {
#if defined(__SSE2__)
  __m128i zero = _mm_setzero_si128(), sum = _mm_setzero_si128();
  for (int j = 0; j < stride; j += 8) {
    __m128i v = _mm_loadu_si128((const __m128i *)(a + j));
    __m128i l = _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)(glo + j)), zero);
    __m128i h = _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)(ghi + j)), zero);
    __m128i d = _mm_sub_epi16(v, _mm_min_epi16(_mm_max_epi16(v, l), h));
    sum = _mm_add_epi32(sum, _mm_madd_epi16(d, d));
  }
  sum = _mm_add_epi32(sum, _mm_shuffle_epi32(sum, 0x4e));
  sum = _mm_add_epi32(sum, _mm_shuffle_epi32(sum, 0xb1));
  return _mm_cvtsi128_si32(sum);
#else
  int32_t sum = 0;
  for (int j = 0; j < stride; j++) {
    int32_t v = a[j], c = v < glo[j] ? glo[j] : v > ghi[j] ? ghi[j] : v;
    sum += (v - c) * (v - c);
  }
  return sum;
#endif
}

/* The largest code distance sum_j (a_j - c_j)^2 a row of a leaf with this
 * step may have and still cost limit or less: a row over it has |q - x| >
 * sqrt(bound), so the exact cost, within (cols + 3) 2^-24 of |q - x|^2, is
 * over limit - transition_cost + 1e-6 limit, which the float sum with the
 * transition cost cannot round down to limit (margins far above the
 * rounding). -1: no row can (limit below the transition cost); INT32_MAX:
 * any may (limit infinite, or a leaf of equal rows). */
static inline int32_t anim_codes_limit(float limit, float transition_cost, float step, int cols) {
  if (!(limit < INFINITY) || step == 0.0f) return INT32_MAX;
  double room = ((double)limit - transition_cost) * (1.0 + 1e-4) + (double)limit * 1e-6 + 1e-30;
  if (room < 0.0) return -1;
  double r = sqrt(room) / step + sqrt((double)cols) * ANIM_CODE_SLACK;
  r = r * r * (1.0 + 1e-9);
  return r >= (double)INT32_MAX ? INT32_MAX : (int32_t)r;
}

/* The query in code units of a leaf with box low corner lo and this step
 * (non-zero): a_j of the bound above, 0 in the padding up to stride. */
static inline void anim_codes_query(const float *lo, float step, const float *qp, int cols, int stride,
                                    int16_t *out_a) {
  float inv = 1.0f / step;
  for (int j = 0; j < stride; j++) {
    float x = (qp[j] - lo[j]) * inv;
    x = x < (float)ANIM_CODE_LO ? (float)ANIM_CODE_LO : x > (float)ANIM_CODE_HI ? (float)ANIM_CODE_HI : x;
    out_a[j] = j < cols ? (int16_t)floorf(x) : 0;
  }
}

#endif
