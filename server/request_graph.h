/*
 * request_graph.h: bodies of the motion graph requests: build_graph,
 * describe_graph, query_graph, set_paths (see request.h). The database a
 * request names is srv_request_t.database.
 *
 * What it does not: check or run them (codec_graph.c, service_graph.c).
 */
#ifndef SRV_REQUEST_GRAPH_H
#define SRV_REQUEST_GRAPH_H

#include <stddef.h>
#include <stdint.h>
#include "graph/graph_path.h"
#include "graph/motion_graph.h"

#define SRV_GRAPH_MAX_TAGS 32
#define SRV_QUERY_MAX_SECONDS 600.0f
#define SRV_QUERY_DEFAULT_SECONDS 120.0f
#define SRV_PATH_MAX_EXPANSIONS 1000000

/* GraphOptions as given: 0 / empty fields take the defaults (the service
 * resolves tags and checks the rest against the database). */
typedef struct {
  float window, threshold;
  int min_gap, spacing, node_spacing;
  const char *tags[SRV_GRAPH_MAX_TAGS];
  int ntags;
  const float *bone_weights;
  int nweights;
  int keep_all;
  int matrix_size;
  int slide;           /* the core's: ANIM_GRAPH_SLIDE_AUTO, 1 or 0 */
} srv_graph_request_options_t;

typedef struct {
  srv_graph_request_options_t options;
} srv_build_graph_request_t;

typedef struct {
  int transitions, matrix;
} srv_describe_graph_request_t;

/* PathOptions: defaults with the given non-zero fields on top (checked). */
typedef struct {
  const float *points; /* x z pairs */
  int npoints;
  int closed;
  float x, z, facing;
  int start_frame;     /* -1: the first node */
  anim_path_options_t options;
  float seconds, settle;
  int roots;
} srv_query_graph_request_t;

typedef struct {
  uint64_t character;
  const float *points; /* x z pairs; NULL (npoints 0): wander */
  int npoints;
  int closed;
} srv_path_item_t;

typedef struct {
  const srv_path_item_t *items;
  int n;
} srv_set_paths_request_t;

/* What describe and build answer: a snapshot taken on the loop. */
struct srv_graph;
typedef struct {
  int status;              /* GraphStatus */
  int rows_done, rows_total;
  char error[256];
  struct srv_graph *graph; /* the graph that serves, a reference (see srv_response_t.held), or NULL */
  uint32_t characters;
  int transitions, matrix; /* asked */
} srv_graph_description_t;

typedef struct {
  srv_graph_description_t description;
} srv_build_graph_response_t;
typedef srv_build_graph_response_t srv_describe_graph_response_t;

typedef struct {
  int edge, first_frame, last_frame, jump;
  float time;
} srv_graph_step_t;

typedef struct {
  srv_graph_step_t *steps; /* response-owned */
  int nsteps;
  float error_mean, error_max, error_max_time, seconds, arc;
  uint32_t plans, exhausted;
  uint64_t expansions;
  float plan_ms_mean, plan_ms_max;
  float *roots;            /* response-owned x z pairs, or NULL */
  int nroots;
} srv_query_graph_response_t;

typedef struct {
  uint64_t tick;
} srv_set_paths_response_t;

#endif
