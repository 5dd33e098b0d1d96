/*
 * graph_matrix.h: a picture of a motion graph's distance matrix
 * (motion_graph.h), size x size cells, each the least distance of its block
 * of rows and columns, so a person can see a database of any length at a
 * glance (animgraph, the server's describe_graph).
 *
 * It is filled by the build's row callback, anim_graph_matrix_row: rows and
 * columns are the build's compared frames in database order, mapped to
 * cells by row * size / rows. The matrix is symmetric, each row callback
 * fills both halves. Not thread-safe: the strips feeding one picture run in
 * turn (anim_motion_graph_build does).
 */
#ifndef ANIM_GRAPH_MATRIX_H
#define ANIM_GRAPH_MATRIX_H

#include <stddef.h>

#define ANIM_GRAPH_MATRIX_MIN 16
#define ANIM_GRAPH_MATRIX_MAX 1024

typedef struct {
  float *cells; /* size x size, row-major; INFINITY where nothing was compared */
  int size;
  int rows;     /* rows of the matrix pictured (at least the build's) */
} anim_graph_matrix_t;

/* Allocates a picture of size cells (ANIM_GRAPH_MATRIX_MIN..MAX, and at
 * most rows) a side for a matrix of rows rows. 0, ANIM_EINVAL, ANIM_ENOMEM. */
int anim_graph_matrix_init(anim_graph_matrix_t *out_matrix, int size, int rows);
void anim_graph_matrix_free(anim_graph_matrix_t *matrix);

/* An anim_graph_row_cb: data is the anim_graph_matrix_t. */
void anim_graph_matrix_row(int row, const float *distances, int first, int count, void *data);

#endif
