/*
 * animbench: the benchmark tool. `make bench` runs `animbench search`.
 *
 *   animbench search [options]   search latency of every method (bench_search.c)
 *   animbench crowd [options]    characters ticked and streamed by the server (bench_crowd.c)
 *   animbench graph [options]    motion graph build, path following, state machines (bench_graph.c)
 *   animbench fit [options]      pose fitting from tracked points on held-out mocap (bench_fit.c)
 *   animbench fit-stream [options] a tracker character of the server fed a held-out clip over the wire
 *                                (bench_fit_stream.c)
 *   animbench feet [options]     planted feet and motion quality on real mocap, in process and over the wire
 *                                (bench_feet.c)
 *   animbench transitions [options] how often characters transition and why, standing, walking, turning,
 *                                stopping and starting (bench_transitions.c)
 *   animbench warp [options]     asked speeds, directions and stops met by animation warping, per dataset
 *                                (bench_warp.c)
 *   animbench graph-steer [options]  graph characters' path error with root steering on and off
 *                                (bench_graph_steer.c)
 *   animbench history [options]  what a character's history costs a tick, off and on (bench_history.c)
 *   animbench dynamics [options] inverse dynamics per frame against MuJoCo's mj_inverse (bench_dynamics.c)
 *   animbench lmm-quality [options] learned characters on trained networks against motion matching on
 *                                the same database, by the feet meter (bench_lmm_quality.c)
 *
 * Timings are reported beside baselines measured in the same run (brute
 * force, the seed's boxes), so the figures mean something on any machine.
 * A mode is one row of the table below.
 */
#include <stdio.h>
#include <string.h>

int bench_search(int argc, char **argv);
int bench_crowd(int argc, char **argv);
int bench_graph(int argc, char **argv);
int bench_fit(int argc, char **argv);
int bench_fit_stream(int argc, char **argv);
int bench_feet(int argc, char **argv);
int bench_transitions(int argc, char **argv);
int bench_warp(int argc, char **argv);
int bench_graph_steer(int argc, char **argv);
int bench_history(int argc, char **argv);
int bench_dynamics(int argc, char **argv);
int bench_lmm_quality(int argc, char **argv);

static const struct {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *usage;
} modes[] = {
    {"search", bench_search,
     "[--shared DIR] [--sizes 6k,30k,300k,3m] [--queries N] [--k K] [--json FILE] [--schema default|wide] "
     "[--methods brute,kdtree,...]"},
    {"crowd", bench_crowd, "[--sizes 1000,2000,10k] [--connections 10] [--seconds 5] ..."},
    {"graph", bench_graph, "[--shared DIR] [--sizes 6k,30k] [--seconds 30] [--threads 2]"},
    {"fit", bench_fit, "[--shared DIR] [--noise M] [--repeat N] [--json FILE] [--svg FILE]"},
    {"fit-stream", bench_fit_stream, "[--shared DIR] [--json FILE] [--svg FILE]"},
    {"feet", bench_feet,
     "[--shared DIR] [--seconds 60] [--seeds 2] [--wire] [--wire-seconds 20] [--json FILE] [--svg FILE]"},
    {"dynamics", bench_dynamics, "[--shared DIR] [--rounds 7] [--repeat 5] [--json FILE]"},
    {"lmm-quality", bench_lmm_quality,
     "[--db build/lmm-bandai/bandai.animdb] [--lmm DIR] [--seconds 60] [--seeds 2] [--json FILE] "
     "[--projection-interval N] [--no-warp]"},
    {"history", bench_history, "[--characters 200] [--ticks 600] [--rounds 5] [--seconds 5] [--candidates 8]"},
    {"transitions", bench_transitions,
     "[--shared DIR] [--seconds 10] [--datasets default,games105,...] [--set transition_cost=X,...] "
     "[--trace DATASET/SCENARIO] [--response 1|2] [--spread N]"},
    {"graph-steer", bench_graph_steer, "[--shared DIR] [--datasets default,bandai-namco] [--seconds 20] [--verbose]"},
    {"warp", bench_warp,
     "[--shared DIR] [--seconds 8] [--program-seconds 30] [--datasets default,...] [--cost-characters 100] [--off] "
     "[--verbose] [--set rate=0,stand=0,orient=0,rate_min=X,...] [--svg PREFIX]"},
};

int main(int argc, char **argv) {
  for (size_t i = 0; argc >= 2 && i < sizeof modes / sizeof modes[0]; i++)
    if (strcmp(argv[1], modes[i].name) == 0) return modes[i].run(argc - 1, argv + 1);
  for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
    fprintf(stderr, "%s animbench %s %s\n", i ? "      " : "usage:", modes[i].name, modes[i].usage);
  return 2;
}
