/*
 * bench_history.c: `animbench history`: what a character's history
 * (core/character/history.h) costs a tick, off and on.
 *
 * N characters (--characters, 200) on the default database walk with a
 * stick turning at 0.8 rad/s, each ticked by anim_controller_tick at 60 Hz
 * (one thread, in process: the work a crowd chunk does per character, a
 * k = 1 search on its tick's search, without the server's batching). A
 * round ticks them all --ticks times (600) with the history off, then the
 * same characters, reset, with the history on (--seconds of ring, 5;
 * --candidates per search, 8); --rounds rounds (5) alternate, and each
 * mode reports the median and the lowest CPU time (the thread's) per
 * character-tick, so a busy machine's noise shows as the spread.
 *
 * Built with -DBENCH_HISTORY_OFF_ONLY (and -DBENCH_HISTORY_MAIN for a
 * main of its own) it measures the off mode alone, against a core that has
 * no history at all: the same run on main's core, to see what the hook
 * costs a character without a history.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "character/controller.h"
#include "offline/procgen.h"
#ifndef BENCH_HISTORY_OFF_ONLY
#include "character/history.h"
#endif

int bench_history(int argc, char **argv);

static double thread_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int compare_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* One mode's run: ns of CPU per character-tick. */
__attribute__((noinline)) static double run(anim_controller_t *cs, int n, int ticks) {
  for (int i = 0; i < n; i++) anim_controller_reset(&cs[i], vec3_make((float)i, 0.0f, 0.0f), 0.0f, vec3_zero(), 0);
  double start = thread_seconds();
  for (int t = 0; t < ticks; t++)
    for (int i = 0; i < n; i++) {
      anim_controller_input_t in = {.kind = ANIM_INPUT_STICK, .stick_z = 0.85f, .camera_azimuth = 0.8f * (float)t / 60.0f};
      anim_controller_set_input(&cs[i], &in);
      anim_controller_tick(&cs[i], 1.0f / 60.0f);
    }
  return 1e9 * (thread_seconds() - start) / ((double)n * (double)ticks);
}

int bench_history(int argc, char **argv) {
  int n = 200, ticks = 600, rounds = 5, candidates = 8;
  float seconds = 5.0f;
  for (int i = 1; i < argc; i++) {
    if (i + 1 < argc && !strcmp(argv[i], "--characters")) n = atoi(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--ticks")) ticks = atoi(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--rounds")) rounds = atoi(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--candidates")) candidates = atoi(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--seconds")) seconds = (float)atof(argv[++i]);
    else {
      fprintf(stderr, "animbench history: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  if (n < 1 || ticks < 1 || rounds < 1 || rounds > 100) return fprintf(stderr, "animbench history: bad counts\n"), 2;
  char err[256];
  anim_database_t db;
  if (anim_procgen_database(&db, NULL, err, sizeof err)) return fprintf(stderr, "%s\n", err), 1;
  anim_search_data_t data = anim_search_data_of(&db);
  anim_search_index_t *index = anim_search_index_build(ANIM_SEARCH_FAST, &data, err, sizeof err);
  anim_controller_t *cs = calloc((size_t)n, sizeof *cs);
  if (!index || !cs) return fprintf(stderr, "animbench history: %s\n", index ? "out of memory" : err), 1;
  for (int i = 0; i < n; i++)
    if (anim_controller_init(&cs[i], &db, index, NULL, vec3_make((float)i, 0.0f, 0.0f), 0.0f, 0) != 0) return 1;
  double off[100], on[100];
  int modes = 1;
#ifndef BENCH_HISTORY_OFF_ONLY
  modes = 2;
  anim_history_t *hs = calloc((size_t)n, sizeof *hs);
  int capacity = (int)(seconds * 60.0f + 0.5f);
  size_t bytes = 0;
  for (int i = 0; hs && i < n; i++) {
    if (anim_history_init(&hs[i], &db, capacity, candidates, NULL, 0) != 0) return 1;
    bytes += hs[i].bytes;
  }
  if (!hs) return 1;
#endif
  for (int r = 0; r < rounds; r++) {
    off[r] = run(cs, n, ticks);
#ifndef BENCH_HISTORY_OFF_ONLY
    for (int i = 0; i < n; i++) cs[i].history = &hs[i];
    on[r] = run(cs, n, ticks);
    for (int i = 0; i < n; i++) cs[i].history = NULL;
#endif
  }
  qsort(off, (size_t)rounds, sizeof *off, compare_double);
  printf("history off: %.0f ns per character-tick (median of %d rounds; lowest %.0f)\n", off[rounds / 2], rounds,
         off[0]);
  if (modes == 2) {
    qsort(on, (size_t)rounds, sizeof *on, compare_double);
    printf("history on (%g s, %d candidates): %.0f ns per character-tick (median; lowest %.0f), %+.1f%%\n",
           (double)seconds, candidates, on[rounds / 2], on[0], 100.0 * (on[rounds / 2] / off[rounds / 2] - 1.0));
#ifndef BENCH_HISTORY_OFF_ONLY
    printf("history memory: %zu bytes per character\n", bytes / (size_t)n);
    for (int i = 0; i < n; i++) anim_history_free(&hs[i]);
    free(hs);
#endif
  }
  printf("%d characters, %d ticks a round, default database (%d frames)\n", n, ticks, db.nframes);
  for (int i = 0; i < n; i++) anim_controller_free(&cs[i]);
  free(cs);
  anim_search_index_free(index);
  anim_database_free(&db);
  return 0;
}

#ifdef BENCH_HISTORY_MAIN
int main(int argc, char **argv) { return bench_history(argc, argv); }
#endif
