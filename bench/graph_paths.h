/*
 * graph_paths.h: the paths a graph character follows in `animbench graph`'s
 * plan comparison (bench_graph.c) and in `animbench graph-steer`
 * (bench_graph_steer.c), set up once so the two benches' figures are on
 * the same paths: a 10 m line ahead (+Z), a 10 m and a 5 m line along +X
 * (on the character's left), an L of 3 + 3 m either way (open: they end),
 * and circles of radius 3 m either way (closed), each from the origin.
 * Each bench names them and times the open ones as its report has them.
 */
#ifndef ANIM_BENCH_GRAPH_PATHS_H
#define ANIM_BENCH_GRAPH_PATHS_H

/* One path, followed from the start node at the origin facing `facing`
 * (rad; 0 faces +Z, whose left is +X). */
typedef struct {
  const char *name;
  const float *points; /* x, z pairs (m) */
  int count, closed;
  float facing, seconds; /* seconds: how long the character follows it */
  int settle;            /* ticks before the distance counts */
} bench_graph_path_t;

#define BENCH_GRAPH_PATHS 7

typedef struct {
  float right[128], left[128]; /* the circles' 64 points each */
  bench_graph_path_t paths[BENCH_GRAPH_PATHS];
} bench_graph_paths_t;

/* Fills out with the seven paths in the order above: the line ahead
 * followed for ahead_seconds, the lines along +X 20 s, the L's 12 s, the
 * circles circle_seconds, their distance counted after 300 ticks (5 s).
 * The lines along +X are named "line +X 10 m" and "line +X 5 m", the line
 * ahead "line +Z 10 m"; a bench may rename them (out->paths[k].name). out
 * points into itself: keep it where it was filled. */
void bench_graph_paths_init(bench_graph_paths_t *out, float ahead_seconds, float circle_seconds);

#endif
