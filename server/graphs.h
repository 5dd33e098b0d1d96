/*
 * graphs.h: the motion graphs of loaded databases (core/graph/motion_graph.h),
 * built on request on the thread pool and kept with their database entry.
 *
 * Each entry has a slot (made on its first build, freed with the entry):
 * the graph that serves (reference-counted: the slot holds one, each
 * MODE_GRAPH character and each query in flight another, so a newer build
 * replaces it without pulling it from under them), whether a build is in
 * flight and how far it got (rows of the distance matrix, written by the
 * building thread, read by describe_graph on the loop), and why the last
 * one failed. A build runs the builder's strips in turn on one pool thread,
 * at most SRV_GRAPH_MAX_BUILDS at once on the server (a long build takes a
 * pool thread the tick shares; one leaves the others free), and stops at
 * its next strip when the server shuts down.
 *
 * Loop thread, but srv_graph_build_run (the pool).
 *
 * What it does not: build or walk a graph itself (core/graph/motion_graph.h, core/graph/graph_path.h).
 */
#ifndef SRV_GRAPHS_H
#define SRV_GRAPHS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include "graph/graph_matrix.h"
#include "graph/motion_graph.h"
#include "registry.h"

#define SRV_GRAPH_MAX_BUILDS 1

/* A build's options: the core's (defaults filled, callbacks unset), the
 * bone weights they point to, and the distance picture asked for. */
typedef struct {
  anim_graph_options_t core;
  float weights[ANIM_MAX_BONES];
  int nweights;   /* 0: core.bone_weights NULL (the default weights) */
  int matrix_size; /* 0: no picture */
} srv_graph_options_t;

typedef struct srv_graph {
  anim_motion_graph_t *graph;
  srv_graph_options_t options;
  double build_seconds;
  size_t memory_bytes;       /* the graph's arrays */
  size_t strip_memory_bytes; /* one strip's scratch during the build */
  anim_graph_matrix_t matrix; /* cells NULL when not asked */
  int refs;
} srv_graph_t;

typedef struct srv_graph_slot {
  srv_db_entry_t *entry;     /* whose slot (it goes with the entry); its graph_memory_bytes follows ready */
  srv_graph_t *ready;        /* the graph that serves, or NULL */
  int building;
  atomic_int rows_done, rows_total;
  atomic_int cancel;
  int failed;                /* the last build failed: error says why */
  char error[256];
} srv_graph_slot_t;

/* A build in flight: made on the loop, run on the pool, ended on the loop. */
typedef struct srv_graph_build {
  srv_graph_slot_t *slot;
  const anim_database_t *db;
  srv_graph_options_t options;
  srv_graph_t *result;
  char err[224];
} srv_graph_build_t;

/* The entry's slot, made on first use; NULL when out of memory. */
srv_graph_slot_t *srv_graph_slot_of(srv_db_entry_t *entry);
/* The entry is freed (its graph_free). */
void srv_graph_slot_free(srv_graph_slot_t *slot);

srv_graph_t *srv_graph_retain(srv_graph_t *graph);
void srv_graph_release(srv_graph_t *graph);
/* The graph serving on entry (no reference taken), or NULL. */
srv_graph_t *srv_graph_ready(const srv_db_entry_t *entry);

/* Memory. A graph kept: its arrays and its distance picture
 * (srv_graph_memory; the entry's graph_memory_bytes, reported with the
 * database by list_databases and the metrics). A build at its peak: the
 * core's estimate from the sizes (anim_graph_build_memory: the frames'
 * point clouds and one strip's scratch, strips run in turn) and the
 * picture. */
size_t srv_graph_memory(const srv_graph_t *graph);
size_t srv_graph_build_memory(const anim_database_t *db, const srv_graph_options_t *options);
/* The graphs kept by the registry's databases. */
size_t srv_graphs_memory(const srv_registry_t *registry);
/* 0 when a build over db with options fits in limit bytes (0: no limit)
 * beside the graphs kept (the one it would replace included: it serves
 * until the build ends); else ANIM_ELIMIT with err naming the figures and
 * --max-graph-memory. Nothing is allocated. Builds in flight are not
 * counted: SRV_GRAPH_MAX_BUILDS is 1 (raise it, and they must be), and a
 * graph replaced while MODE_GRAPH characters still hold it is not either. */
int srv_graph_build_fits(const srv_registry_t *registry, const anim_database_t *db, const srv_graph_options_t *options,
                         size_t limit, char *err, int errlen);

/* Starts a build on slot (marks it building): the job, or NULL when out of
 * memory. options were validated against db. */
srv_graph_build_t *srv_graph_build_begin(srv_graph_slot_t *slot, const anim_database_t *db,
                                         const srv_graph_options_t *options);
/* Pool: the build. 0, or a code with the reason in build->err. */
int srv_graph_build_run(srv_graph_build_t *build);
/* Loop: installs the result (it replaces the graph that served) or records
 * the failure (a build that never ran: "cancelled"), and frees the job. */
void srv_graph_build_end(void *build);

/* Builds in flight on the registry's databases. */
int srv_graphs_building(const srv_registry_t *registry);
/* The server is shutting down: builds stop at their next strip. */
void srv_graphs_cancel(srv_registry_t *registry);

#endif
