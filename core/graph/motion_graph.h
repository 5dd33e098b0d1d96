/*
 * motion_graph.h: motion graphs (Kovar, Gleicher and Pighin, "Motion
 * Graphs", SIGGRAPH 2002) built over a database's frames.
 *
 * Distance. Frames i and j are compared by their windows, frames i-h..i+h
 * and j-h..j+h (h = round(window * rate / 2), both inside one range), each
 * a point cloud: the global position of every weighted bone at every frame
 * of the window, weight w_bone (uniform along the window). The distance is
 * the weighted sum of squared distances between corresponding points,
 * minimized over a rotation about the vertical axis and a translation in
 * the ground plane applied to j's cloud (the paper's eq. 1; closed form in
 * motion_graph.c). It is reported as the root-mean-square point distance in
 * metres, sqrt(E / sum of weights), and with it the minimizing angle (rad
 * about +Y) and translation: they map j's window onto i's.
 *
 * Transitions. Pairs (i, j) whose distance is a local minimum of the
 * distance matrix (no larger than any pair within `spacing` frames of it in
 * both frames; ties go to the first in row-major order) and below the
 * threshold become two transitions, i -> j and j -> i (the distance is
 * symmetric). Kovar et al. take the minima of the 8 neighbours; on the
 * shallow valleys of real mocap that gives many minima close together, so
 * the neighbourhood is as wide as half a window by default. Then, best
 * first, a pair is kept only when each of its frames is a node already or
 * at least node_spacing frames from the nodes of its range: on the Bandai
 * Namco database (5.5k frames) the minima put a node every 2.7 frames,
 * which makes walks of two seconds 45 edges deep and path search hopeless
 * (its budget runs out on every plan, and a circle is lost); with 0.1 s
 * between nodes they are ~15 deep and a plan takes 0.1 to 0.7 ms on average
 * (`animbench graph`). At the default threshold the Bandai graph's largest
 * component is its walks: runs and dashes are too far from them and are
 * pruned. A pair refused for node spacing that joins two ranges not
 * joined near it yet is slid along its diagonal onto a node when it can
 * (options.slide; slide_pair; by default where two ranges repeat a motion
 * exactly, a pair of distance 0 between them): on the default database the
 * exact repeats of the procedural walk put nodes every 7-10 frames, every
 * pair from a turn back to a walk was refused, and the pruned graph kept
 * only its right walk turns (232 nodes, 523 edges; with slide 291 and 765,
 * and it turns both ways: graph_path.h, "Turns"). Captured motion never
 * repeats exactly and its pairs are refused far less: on Bandai slide
 * would grow the graph from 372 nodes and 782 edges to 434 and 1098, and a
 * line that turns sharply away at once is lost on it (graph_path.h, "Warm
 * start"), so the default leaves it off there.
 * Pairs of one range closer than
 * min_gap frames are not compared (a frame is always like its neighbours).
 * A transition i -> j means: after showing frame i, go on from frame j + 1
 * as if j had been shown (the character, inertialized, lands j's root on
 * i's).
 *
 * The matrix is computed in strips of rows (symmetric: the upper triangle),
 * each strip holding a ring of window-many rows of per-frame-pair products
 * and 2 spacing + 1 rows of distances: memory is O(window * frames), never O(frames
 * squared). Strips are independent, so a caller may run them on several
 * threads (anim_graph_builder_*); anim_motion_graph_build runs them in turn
 * on the caller's thread with a progress callback.
 *
 * Graph. Nodes are the frames that begin or end a transition; node u's
 * edges play frames: "on" to the next node of its range (frames u+1 .. v),
 * and, for each transition u -> j, "jump" to the node after j (frames j+1 ..
 * v). Every edge plays at least one frame. Pruning keeps the largest
 * strongly connected component (Tarjan's algorithm, iterative), so a walk
 * never reaches a dead end and every node reaches every other.
 *
 * The graph refers to its database by version; it is read-only once built
 * and may be shared by any number of characters and planners.
 */
#ifndef ANIM_MOTION_GRAPH_H
#define ANIM_MOTION_GRAPH_H

#include <stddef.h>
#include <stdint.h>
#include "database/database.h"

/* Progress of anim_motion_graph_build: rows of the matrix done out of
 * total. Returning non-zero cancels the build. */
typedef int (*anim_graph_progress_cb)(int rows_done, int rows_total, void *data);
/* One row of the distance matrix (upper triangle): RMS distances (m) of
 * frame frames[row] to frames[col] for col in [first, count), INFINITY
 * where not compared. Called from the thread running the row's strip,
 * rows in order within a strip. */
typedef void (*anim_graph_row_cb)(int row, const float *distances, int first, int count, void *data);

/* Build options. Validity rules (anim_graph_options_validate):
 *  1. window in (0, 2] s, giving h >= 1 frame at the database's rate;
 *  2. threshold > 0 m; min_gap, node_spacing >= 0 frames (0: default);
 *     strip_rows >= 1; spacing in [0, h] frames (0: default h);
 *  3. bone_weights NULL (1 for every bone but the simulation bone 0) or
 *     nbones finite weights >= 0, not all zero;
 *  4. the selected ranges (tag_mask) hold at least two frames with a window;
 *  5. slide is 0, 1 or ANIM_GRAPH_SLIDE_AUTO. */
#define ANIM_GRAPH_SLIDE_AUTO (-1)
typedef struct {
  float window;          /* s (default 1/3) */
  float threshold;       /* m, RMS point distance (default 0.05) */
  int min_gap;           /* frames (default: the window's frame count) */
  int spacing;           /* frames (default: h, half the window) */
  int node_spacing;      /* frames (default: 0.1 s worth) */
  uint32_t tag_mask;     /* ranges taking part; 0: all */
  const float *bone_weights;
  int strip_rows;        /* rows per strip (default 256) */
  int prune;             /* keep the largest strongly connected component (default 1) */
  int slide;             /* slide pairs refused for node spacing onto a node
                            (motion_graph.c, slide_pair): 1, 0, or
                            ANIM_GRAPH_SLIDE_AUTO (default): when two ranges
                            repeat a motion exactly (above, "Transitions") */
  anim_graph_progress_cb progress;
  anim_graph_row_cb row;
  void *data;            /* passed to progress and row */
} anim_graph_options_t;

void anim_graph_options_default(anim_graph_options_t *out_options);
/* 0, ANIM_EINVAL, ANIM_ENONFINITE (rules 1-3; rule 4 is checked by the build). */
int anim_graph_options_validate(const anim_graph_options_t *options, const anim_database_t *db);

typedef struct {
  int from, to;          /* database frames: after `from`, play on from `to` + 1 */
  float distance;        /* m, RMS */
  float angle;           /* rad about +Y ... */
  float dx, dz;          /* ... and m: the map of to's window onto from's */
} anim_graph_transition_t;

typedef struct {
  int frame;             /* database frame */
  int range;
  int first_edge, nedges;
} anim_graph_node_t;

typedef struct {
  int target;            /* node */
  int first_frame;       /* plays first_frame .. nodes[target].frame */
  int transition;        /* -1: on; else the transition taken first (jump
                            from the source node's frame to first_frame - 1) */
} anim_graph_edge_t;

typedef struct anim_motion_graph {
  uint64_t db_version;
  float frame_rate;
  float window, threshold;
  int nframes;                          /* frames compared (with a window) */
  int ntransitions;                     /* in the graph's edges */
  anim_graph_transition_t *transitions; /* sorted by (from, to) */
  int nnodes;
  anim_graph_node_t *nodes;             /* sorted by frame */
  int nedges;
  anim_graph_edge_t *edges;             /* grouped by source node */
  int slide;                            /* 1 when the build slid pairs onto nodes (options.slide
                                           resolved: ANIM_GRAPH_SLIDE_AUTO became 0 or 1) */
  /* Before pruning. */
  int candidates;                       /* transitions found */
  int nodes_built, edges_built;
  int components;                       /* strongly connected components */
} anim_motion_graph_t;

/* ---- building ------------------------------------------------------------------------- */

typedef struct anim_graph_builder anim_graph_builder_t;

/* Prepares a build over db (which must outlive the builder): the frames
 * compared, their point clouds and window sums. NULL on failure with a
 * message in err (invalid options, nothing to compare, out of memory). */
anim_graph_builder_t *anim_graph_builder_create(const anim_database_t *db, const anim_graph_options_t *options,
                                                char *err, int errlen);
int anim_graph_builder_strips(const anim_graph_builder_t *builder);
/* Rows of the matrix (frames compared). */
int anim_graph_builder_rows(const anim_graph_builder_t *builder);
/* Computes strip s (0 <= s < strips): its transitions are kept in the
 * builder. Different strips may run at once on different threads; each
 * allocates its own scratch (bytes: anim_graph_builder_strip_memory). 0,
 * ANIM_ERANGE, ANIM_ENOMEM. */
int anim_graph_builder_run(anim_graph_builder_t *builder, int strip);
size_t anim_graph_builder_strip_memory(const anim_graph_builder_t *builder);
/* After every strip ran: the graph (pruned when asked). NULL with a message
 * (a strip not run, no transition, out of memory). The builder stays to be
 * freed. */
/* What a build over db with options allocates at its peak, strips run in
 * turn: the builder (the frames' point clouds and window sums) and one
 * strip's scratch, from the sizes alone (nothing is allocated; options as
 * anim_graph_builder_create takes them, NULL for the defaults). The
 * transitions found and the graph made of them are not in it: they depend
 * on the data and are small beside the rest (default options: 4758 frames
 * of the procedural database, 6.07 MB estimated, 6.16 MB measured at the
 * peak, 35 kB kept; Bandai's 6044 frames, 7.85 MB, 8.00 MB and 33 kB).
 * 0 when options are not valid for db. */
size_t anim_graph_build_memory(const anim_database_t *db, const anim_graph_options_t *options);
anim_motion_graph_t *anim_graph_builder_finish(anim_graph_builder_t *builder, char *err, int errlen);
void anim_graph_builder_free(anim_graph_builder_t *builder);

/* All of the above on the caller's thread, progress after each strip. NULL
 * with a message on failure or when progress cancels ("cancelled"). */
anim_motion_graph_t *anim_motion_graph_build(const anim_database_t *db, const anim_graph_options_t *options, char *err,
                                             int errlen);
void anim_motion_graph_free(anim_motion_graph_t *graph);

/* The distance between frames i and j of db as the build measures it (m,
 * RMS), with the angle and translation mapping j's window onto i's. 0,
 * ANIM_ERANGE (a frame without a window in its range), ANIM_EINVAL. */
int anim_graph_distance(const anim_database_t *db, const anim_graph_options_t *options, int i, int j,
                        float *out_distance, float *out_angle, float *out_dx, float *out_dz);

/* ---- using --------------------------------------------------------------------------------- */

/* The node at database frame `frame`, or -1. */
int anim_motion_graph_node_at(const anim_motion_graph_t *graph, int frame);

/* Frames an edge plays. */
static inline int anim_graph_edge_frames(const anim_motion_graph_t *g, const anim_graph_edge_t *e) {
  return g->nodes[e->target].frame - e->first_frame + 1;
}

/* A random walk from node `start`: up to max_edges edges (indices in
 * graph->edges) chosen uniformly among each node's edges, drawn from
 * *io_seed (xorshift32; a zero seed is taken as 1). Returns how many were
 * written (fewer only at a dead end of an unpruned graph). */
int anim_motion_graph_random_walk(const anim_motion_graph_t *graph, int start, uint32_t *io_seed, int *out_edges,
                                  int max_edges);

#endif
