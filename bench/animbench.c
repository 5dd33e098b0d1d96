/*
 * animbench: the benchmark tool. `make bench` runs `animbench search`.
 *
 *   animbench search [options]   search latency of every method (bench_search.c)
 *   animbench crowd [options]    characters ticked and streamed by the server (bench_crowd.c)
 *   animbench fit [options]      pose fitting from tracked points on held-out mocap (bench_fit.c)
 *
 * Timings are reported beside baselines measured in the same run (brute
 * force, the seed's boxes), so the figures mean something on any machine.
 */
#include <stdio.h>
#include <string.h>

int bench_search(int argc, char **argv);
int bench_crowd(int argc, char **argv);
int bench_fit(int argc, char **argv);

int main(int argc, char **argv) {
  if (argc >= 2 && strcmp(argv[1], "search") == 0) return bench_search(argc - 1, argv + 1);
  if (argc >= 2 && strcmp(argv[1], "crowd") == 0) return bench_crowd(argc - 1, argv + 1);
  if (argc >= 2 && strcmp(argv[1], "fit") == 0) return bench_fit(argc - 1, argv + 1);
  fprintf(stderr, "usage: animbench search [--shared DIR] [--sizes 6k,30k,300k,3m] [--queries N] [--k K] [--json FILE]\n"
                  "       animbench crowd [--sizes 1000,2000,10k] [--connections 10] [--seconds 5] ...\n"
                  "       animbench fit [--shared DIR] [--noise M] [--repeat N] [--json FILE] [--svg FILE]\n");
  return 2;
}
