/* leaf_codes.c: the code distances of a leaf's rows, portable and AVX2 (see leaf_codes.h). */
#include "search/leaf_codes.h"

void anim_code_distances(const int16_t *a, const uint8_t *c, int stride, int n, int32_t *out) {
#if defined(__SSE2__)
  __m128i zero = _mm_setzero_si128();
  for (int i = 0; i < n; i++, c += stride) {
    __m128i sum = _mm_setzero_si128();
    int j = 0;
    for (; j + 16 <= stride; j += 16) {
      __m128i bytes = _mm_loadu_si128((const __m128i *)(c + j));
      __m128i d0 = _mm_sub_epi16(_mm_loadu_si128((const __m128i *)(a + j)), _mm_unpacklo_epi8(bytes, zero));
      __m128i d1 = _mm_sub_epi16(_mm_loadu_si128((const __m128i *)(a + j + 8)), _mm_unpackhi_epi8(bytes, zero));
      sum = _mm_add_epi32(sum, _mm_add_epi32(_mm_madd_epi16(d0, d0), _mm_madd_epi16(d1, d1)));
    }
    if (j < stride) {
      __m128i d = _mm_sub_epi16(_mm_loadu_si128((const __m128i *)(a + j)),
                                _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)(c + j)), zero));
      sum = _mm_add_epi32(sum, _mm_madd_epi16(d, d));
    }
    sum = _mm_add_epi32(sum, _mm_shuffle_epi32(sum, 0x4e));
    sum = _mm_add_epi32(sum, _mm_shuffle_epi32(sum, 0xb1));
    out[i] = _mm_cvtsi128_si32(sum);
  }
#else
  for (int i = 0; i < n; i++, c += stride) {
    int32_t sum = 0;
    for (int j = 0; j < stride; j++) {
      int32_t d = (int32_t)a[j] - (int32_t)c[j];
      sum += d * d;
    }
    out[i] = sum;
  }
#endif
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HAVE_AVX2_PATH 1
/* code_distances with AVX2 (16 dimensions a step), chosen at run time when
 * the CPU has it; the same integers. */
__attribute__((target("avx2"))) static void code_distances_avx2(const int16_t *a, const uint8_t *c, int stride, int n,
                                                                 int32_t *out) {
  for (int i = 0; i < n; i++, c += stride) {
    __m256i sum = _mm256_setzero_si256();
    int j = 0;
    for (; j + 16 <= stride; j += 16) {
      __m256i d = _mm256_sub_epi16(_mm256_loadu_si256((const __m256i *)(a + j)),
                                   _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(c + j))));
      sum = _mm256_add_epi32(sum, _mm256_madd_epi16(d, d));
    }
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(sum), _mm256_extracti128_si256(sum, 1));
    if (j < stride) {
      __m128i d = _mm_sub_epi16(_mm_loadu_si128((const __m128i *)(a + j)),
                                _mm_cvtepu8_epi16(_mm_loadl_epi64((const __m128i *)(c + j))));
      s = _mm_add_epi32(s, _mm_madd_epi16(d, d));
    }
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
    out[i] = _mm_cvtsi128_si32(s);
  }
}
#endif


anim_code_distances_fn anim_code_distances_for(int avx2) {
#if defined(HAVE_AVX2_PATH)
  if (avx2) return code_distances_avx2;
#endif
  (void)avx2;
  return anim_code_distances;
}
