/* bench_util.h: what the benchmarks share: a monotonic and a CPU clock, a small
 * deterministic random generator (xorshift32), so runs are repeatable, and
 * the folder the servers they start log to. */
#ifndef ANIM_BENCH_UTIL_H
#define ANIM_BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

static inline double bench_now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* CPU seconds this process has used: the figure benchmarks compare on a
 * shared, noisy machine. */
static inline double bench_cpu_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* CPU seconds the calling thread has used: an in-process figure that the
 * other work of a shared machine does not lengthen (it only takes turns). */
static inline double bench_thread_cpu_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Uniform in (0, 1), never 0 (safe for a log). */
static inline float bench_uniform(unsigned *state) {
  *state ^= *state << 13, *state ^= *state >> 17, *state ^= *state << 5;
  return ((float)(*state >> 8) + 0.5f) / 16777216.0f;
}

/* Makes $ANIM_BUILD_DIR/tests (default build/tests), where a started
 * server's log goes (tests/support/server_proc.h). */
static inline void bench_make_log_dir(void) {
  const char *build = getenv("ANIM_BUILD_DIR");
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/tests", build && *build ? build : "build");
  mkdir(dir, 0755);
}

#endif
