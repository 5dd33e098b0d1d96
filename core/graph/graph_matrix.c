/* graph_matrix.c: the least distance of each block of the matrix (see graph_matrix.h). */
#include <math.h>
#include <stdlib.h>
#include "anim_error.h"
#include "graph/graph_matrix.h"

int anim_graph_matrix_init(anim_graph_matrix_t *m, int size, int rows) {
  m->cells = NULL, m->size = 0, m->rows = 0;
  if (rows < 1 || size < ANIM_GRAPH_MATRIX_MIN || size > ANIM_GRAPH_MATRIX_MAX) return ANIM_EINVAL;
  if (size > rows) size = rows;
  size_t n = (size_t)size * (size_t)size;
  if (!(m->cells = malloc(n * sizeof *m->cells))) return ANIM_ENOMEM;
  for (size_t i = 0; i < n; i++) m->cells[i] = INFINITY;
  m->size = size, m->rows = rows;
  return 0;
}

void anim_graph_matrix_free(anim_graph_matrix_t *m) {
  free(m->cells);
  m->cells = NULL, m->size = m->rows = 0;
}

static int cell_of(const anim_graph_matrix_t *m, int row) {
  int c = (int)((long long)row * m->size / m->rows);
  return c < m->size ? c : m->size - 1;
}

void anim_graph_matrix_row(int row, const float *d, int first, int count, void *data) {
  anim_graph_matrix_t *m = data;
  size_t size = (size_t)m->size;
  size_t u = (size_t)cell_of(m, row);
  for (int c = first; c < count; c++) {
    size_t v = (size_t)cell_of(m, c);
    float *a = &m->cells[u * size + v], *b = &m->cells[v * size + u];
    if (d[c] < *a) *a = d[c];
    if (d[c] < *b) *b = d[c];
  }
}
