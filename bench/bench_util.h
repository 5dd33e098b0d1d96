/* bench_util.h: what the benchmarks share: a monotonic clock and a small
 * deterministic random generator (xorshift32), so runs are repeatable. */
#ifndef ANIM_BENCH_UTIL_H
#define ANIM_BENCH_UTIL_H

#include <time.h>

static inline double bench_now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Uniform in (0, 1), never 0 (safe for a log). */
static inline float bench_uniform(unsigned *state) {
  *state ^= *state << 13, *state ^= *state >> 17, *state ^= *state << 5;
  return ((float)(*state >> 8) + 0.5f) / 16777216.0f;
}

#endif
