/*
 * anim_client_graph.h: motion graphs over the wire (part of the client
 * library; include anim_client.h).
 *
 * A database's graph is built on the server's thread pool on request
 * (anim_client_graph_build answers at once with the build in flight;
 * anim_client_graph_describe reports its progress, then the graph);
 * anim_client_graph_query plans a walk along a path on it; characters
 * created with ANIM_MODE_GRAPH wander on it until given a path. Every
 * request has a blocking form and a _send form with a typed callback
 * (results valid during the callback only, NULL when status != 0).
 */
#ifndef ANIM_CLIENT_GRAPH_H
#define ANIM_CLIENT_GRAPH_H

#include "anim_client_session.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { ANIM_GRAPH_NONE = 0, ANIM_GRAPH_BUILDING = 1, ANIM_GRAPH_READY = 2, ANIM_GRAPH_FAILED = 3 };

/* Whether a build slides a pair of frames refused for node spacing onto a
 * node (GraphSlide; README "Motion graphs"). AUTO: on where two clips repeat
 * a motion exactly (procedural clips, the default database), off on
 * captured motion. */
enum { ANIM_SLIDE_AUTO = 0, ANIM_SLIDE_ON = 1, ANIM_SLIDE_OFF = 2 };

/* Build options; a field left 0 takes the server default (README). */
typedef struct {
  float window;        /* s compared around each frame [1/3] */
  float threshold;     /* m RMS below which a transition may be made [0.05] */
  int min_gap, spacing, node_spacing; /* frames */
  int keep_all;        /* do not prune to the largest strongly connected component */
  int matrix_size;     /* keep an N x N picture of the distance matrix (16..1024; 0 none) */
  int slide;           /* ANIM_SLIDE_* [AUTO]; another value: ANIM_EINVAL before sending */
} anim_graph_build_options_t;

typedef struct {
  uint32_t from_frame, to_frame; /* after from_frame, play on from to_frame + 1 */
  float distance, angle;         /* m RMS; rad about +Y */
} anim_graph_transition_info_t;

/* A graph's description; anim_graph_description_free. */
typedef struct {
  uint64_t database_version;
  int status;               /* ANIM_GRAPH_* */
  float progress;           /* 0..1 of a build in flight */
  char error[256];          /* why the last build failed */
  int ready;                /* a graph serves; the fields below describe it */
  int slide;                /* it was built with: ANIM_SLIDE_ON or ANIM_SLIDE_OFF (AUTO resolved) */
  uint32_t frames, candidates, nodes_built, edges_built, components, nodes, edges, transitions, characters;
  double build_seconds;
  uint64_t memory_bytes, strip_memory_bytes;
  int ntransitions;         /* when asked */
  anim_graph_transition_info_t *transition_list;
  int matrix_size;          /* when asked and kept: matrix_size^2 distances, row-major (+Inf: not compared) */
  float *matrix;
} anim_graph_description_t;

void anim_graph_description_free(anim_graph_description_t *description);

typedef void (*anim_graph_description_cb)(anim_client_t *client, uint64_t id, int status,
                                          const anim_graph_description_t *description, void *data);

/* Starts a build (one at a time on the server: ANIM_EBUSY). */
int anim_client_graph_build(anim_client_t *client, const char *database, const anim_graph_build_options_t *options,
                            anim_graph_description_t **out_description, int timeout_ms);
int anim_client_graph_build_send(anim_client_t *client, const char *database, const anim_graph_build_options_t *options,
                                 anim_graph_description_cb cb, void *data, uint64_t *out_id);
/* transitions, matrix: include the transition list, the distance matrix's picture (when the build kept one). */
int anim_client_graph_describe(anim_client_t *client, const char *database, int transitions, int matrix,
                               anim_graph_description_t **out_description, int timeout_ms);
int anim_client_graph_describe_send(anim_client_t *client, const char *database, int transitions, int matrix,
                                    anim_graph_description_cb cb, void *data, uint64_t *out_id);

/* The planner's options; a field left 0 takes the server default. Its
 * three refinements are on unless disabled (core/graph/graph_path.h): */
typedef struct {
  float horizon;        /* s searched ahead [2] */
  float keep;           /* s of each plan played before planning again [0.5] */
  int max_expansions;   /* edges tried per plan [20000] */
  int disable_warm;     /* each search starts cold, not seeded by the previous plan's walk */
  int disable_bound;    /* walks dropped on their error alone, without a bound of their future */
  int disable_memory;   /* no lag carried from plan to plan (a character no single plan can start stands) */
} anim_walk_options_t;

typedef struct {
  const float *points;  /* x, z pairs, m */
  int npoints;          /* 2..4096 */
  int closed;
  float start_x, start_z, start_facing;
  const anim_walk_options_t *options; /* NULL: defaults */
  float seconds;        /* simulated at most [120] */
  float settle;         /* s at the start left out of the error [0] */
  int roots;            /* return the root's path */
} anim_graph_query_t;

typedef struct {
  uint32_t edge, first_frame, last_frame;
  int jump;             /* starts with a transition */
  float time;           /* s from the start */
} anim_graph_step_t;

/* query's answer; anim_graph_walk_free. */
typedef struct {
  uint64_t database_version;
  int nsteps;
  anim_graph_step_t *steps;
  float error_mean, error_max, error_max_time; /* m from the path, s */
  float seconds, arc;
  uint32_t plans, plans_exhausted;
  uint64_t expansions;
  float plan_ms_mean, plan_ms_max;
  int nroots;
  float *roots;         /* x, z per frame, when asked */
} anim_graph_walk_t;

void anim_graph_walk_free(anim_graph_walk_t *walk);

typedef void (*anim_graph_walk_cb)(anim_client_t *client, uint64_t id, int status, const anim_graph_walk_t *walk,
                                   void *data);

int anim_client_graph_query(anim_client_t *client, const char *database, const anim_graph_query_t *query,
                            anim_graph_walk_t **out_walk, int timeout_ms);
int anim_client_graph_query_send(anim_client_t *client, const char *database, const anim_graph_query_t *query,
                                 anim_graph_walk_cb cb, void *data, uint64_t *out_id);

/* Paths for this connection's graph characters: points[i] (npoints[i]
 * x, z pairs; 0: wander) to characters[i]. */
int anim_client_graph_paths(anim_client_t *client, const uint64_t *characters, const float *const *points,
                            const int *npoints, const int *closed, int n, uint64_t *out_tick, int timeout_ms);
int anim_client_graph_paths_send(anim_client_t *client, const uint64_t *characters, const float *const *points,
                                 const int *npoints, const int *closed, int n, anim_status_cb cb, void *data,
                                 uint64_t *out_id);

#ifdef __cplusplus
}
#endif
#endif
