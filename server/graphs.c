/* graphs.c: motion graphs built on request, kept per database entry (see graphs.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "anim_error.h"
#include "graphs.h"

srv_graph_slot_t *srv_graph_slot_of(srv_db_entry_t *entry) {
  if (!entry->graph && (entry->graph = calloc(1, sizeof *entry->graph))) {
    entry->graph_free = srv_graph_slot_free;
    entry->graph->entry = entry;
  }
  return entry->graph;
}

srv_graph_t *srv_graph_retain(srv_graph_t *g) {
  if (g) g->refs++;
  return g;
}

static void graph_free(srv_graph_t *g) {
  anim_motion_graph_free(g->graph);
  anim_graph_matrix_free(&g->matrix);
  free(g);
}

void srv_graph_release(srv_graph_t *g) {
  if (g && --g->refs == 0) graph_free(g);
}

void srv_graph_slot_free(srv_graph_slot_t *slot) {
  if (!slot) return;
  srv_graph_release(slot->ready);
  free(slot);
}

srv_graph_t *srv_graph_ready(const srv_db_entry_t *entry) { return entry->graph ? entry->graph->ready : NULL; }

srv_graph_build_t *srv_graph_build_begin(srv_graph_slot_t *slot, const anim_database_t *db,
                                         const srv_graph_options_t *options) {
  srv_graph_build_t *b = calloc(1, sizeof *b);
  if (!b) return NULL;
  b->slot = slot, b->db = db, b->options = *options;
  if (b->options.nweights) b->options.core.bone_weights = b->options.weights;
  slot->building = 1;
  atomic_store(&slot->rows_done, 0);
  atomic_store(&slot->rows_total, 0);
  atomic_store(&slot->cancel, 0);
  snprintf(b->err, sizeof b->err, "cancelled");
  return b;
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

size_t srv_graph_memory(const srv_graph_t *g) {
  return g ? sizeof *g + g->memory_bytes + (size_t)g->matrix.size * (size_t)g->matrix.size * sizeof *g->matrix.cells
           : 0;
}

size_t srv_graph_build_memory(const anim_database_t *db, const srv_graph_options_t *options) {
  size_t cells = 0;
  if (options->matrix_size) { /* anim_graph_matrix_init's: at most one cell a frame each way */
    cells = (size_t)(options->matrix_size < db->nframes ? options->matrix_size : db->nframes);
    cells *= cells;
  }
  return sizeof(srv_graph_t) + anim_graph_build_memory(db, &options->core) + cells * sizeof(float);
}

size_t srv_graphs_memory(const srv_registry_t *registry) {
  size_t bytes = 0;
  for (int i = 0; i < registry->count; i++) bytes += registry->entries[i]->graph_memory_bytes;
  return bytes;
}

int srv_graph_build_fits(const srv_registry_t *registry, const anim_database_t *db, const srv_graph_options_t *options,
                         size_t limit, char *err, int errlen) {
  if (!limit) return 0;
  size_t need = srv_graph_build_memory(db, options), kept = srv_graphs_memory(registry);
  if (need <= limit && kept <= limit - need) return 0;
  snprintf(err, (size_t)errlen,
           "the build needs about %zu bytes (%d frames' point clouds, a strip's scratch%s) beside %zu bytes of "
           "graphs kept: over --max-graph-memory %zu",
           need, db->nframes, options->matrix_size ? ", the distance picture" : "", kept, limit);
  return ANIM_ELIMIT;
}

static size_t graph_memory(const anim_motion_graph_t *g) {
  return sizeof *g + (size_t)g->ntransitions * sizeof *g->transitions + (size_t)g->nnodes * sizeof *g->nodes +
         (size_t)g->nedges * sizeof *g->edges;
}

int srv_graph_build_run(srv_graph_build_t *b) {
  double start = now_s();
  srv_graph_slot_t *slot = b->slot;
  srv_graph_t *g = calloc(1, sizeof *g);
  if (!g) return snprintf(b->err, sizeof b->err, "out of memory"), ANIM_ENOMEM;
  g->options = b->options;
  int rc = 0;
  /* The picture maps database frames (a bound of the rows compared) to cells. */
  if (b->options.matrix_size && (rc = anim_graph_matrix_init(&g->matrix, b->options.matrix_size, b->db->nframes)))
    snprintf(b->err, sizeof b->err, "the distance picture: %s", anim_strerror(rc));
  /* Strips run in turn here, so one picture may take the rows of all. */
  if (g->matrix.cells) g->options.core.row = anim_graph_matrix_row, g->options.core.data = &g->matrix;
  anim_graph_builder_t *builder =
      rc ? NULL : anim_graph_builder_create(b->db, &g->options.core, b->err, (int)sizeof b->err);
  if (!rc && !builder) rc = ANIM_EINVAL;
  int rows = builder ? anim_graph_builder_rows(builder) : 0, strips = builder ? anim_graph_builder_strips(builder) : 0;
  atomic_store(&slot->rows_total, rows);
  for (int s = 0; s < strips && !rc; s++) {
    if (atomic_load(&slot->cancel))
      rc = ANIM_ESHUTDOWN, snprintf(b->err, sizeof b->err, "cancelled: the server is shutting down");
    else if ((rc = anim_graph_builder_run(builder, s)))
      snprintf(b->err, sizeof b->err, "strip %d: %s", s, anim_strerror(rc));
    else atomic_store(&slot->rows_done, (int)((long long)rows * (s + 1) / strips));
  }
  if (!rc && !(g->graph = anim_graph_builder_finish(builder, b->err, (int)sizeof b->err))) rc = ANIM_EINVAL;
  if (!rc) {
    g->strip_memory_bytes = anim_graph_builder_strip_memory(builder);
    g->memory_bytes = graph_memory(g->graph);
    g->build_seconds = now_s() - start;
    g->options.core.row = NULL, g->options.core.data = NULL;
    if (g->options.nweights) g->options.core.bone_weights = g->options.weights;
    g->refs = 1;
    b->result = g;
  } else {
    graph_free(g);
  }
  anim_graph_builder_free(builder);
  return rc;
}

void srv_graph_build_end(void *job) {
  srv_graph_build_t *b = job;
  srv_graph_slot_t *slot = b->slot;
  slot->building = 0;
  if (b->result) {
    srv_graph_release(slot->ready);
    slot->ready = b->result;
    slot->entry->graph_memory_bytes = srv_graph_memory(slot->ready);
    slot->failed = 0, slot->error[0] = '\0';
  } else {
    slot->failed = 1;
    snprintf(slot->error, sizeof slot->error, "%s", b->err);
  }
  free(b);
}

int srv_graphs_building(const srv_registry_t *registry) {
  int n = 0;
  for (int i = 0; i < registry->count; i++) n += registry->entries[i]->graph && registry->entries[i]->graph->building;
  return n;
}

void srv_graphs_cancel(srv_registry_t *registry) {
  for (int i = 0; i < registry->count; i++)
    if (registry->entries[i]->graph) atomic_store(&registry->entries[i]->graph->cancel, 1);
}
