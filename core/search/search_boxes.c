/*
 * search_boxes.c: the seed's acceleration (002_*): axis-aligned bounding
 * boxes over runs of consecutive frames, 64 frames large and 16 small. A box
 * whose lower bound already costs more than the k-th best is skipped whole.
 * Consecutive frames of mocap sweep through a gait cycle, so the boxes are
 * loose; that is what search_kdtree.c improves on.
 */
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "search/search_internal.h"

#define SMALL 16
#define LARGE 64

typedef struct {
  int nsmall, nlarge;
  float *small_lo, *small_hi; /* nsmall x cols */
  float *large_lo, *large_hi; /* nlarge x cols */
} boxes_t;

static void boxes_free(void *impl) {
  boxes_t *b = impl;
  if (!b) return;
  free(b->small_lo), free(b->small_hi), free(b->large_lo), free(b->large_hi);
  free(b);
}

static void bound_rows(const anim_search_data_t *d, int first, int last, float *lo, float *hi) {
  for (int j = 0; j < d->cols; j++) lo[j] = INFINITY, hi[j] = -INFINITY;
  for (int i = first; i < last; i++) {
    const float *x = d->features + (size_t)i * (size_t)d->cols;
    for (int j = 0; j < d->cols; j++) {
      if (x[j] < lo[j]) lo[j] = x[j];
      if (x[j] > hi[j]) hi[j] = x[j];
    }
  }
}

static void scan(const anim_search_index_t *index, const anim_search_query_t *q, anim_topk_t *topk) {
  const boxes_t *b = index->impl;
  const anim_search_data_t *d = &index->data;
  int cols = d->cols;
  for (int l = 0; l < b->nlarge; l++) {
    size_t lb = (size_t)l * (size_t)cols;
    if (q->transition_cost + anim_box_distance(q->query, b->large_lo + lb, b->large_hi + lb, cols) >
        anim_topk_threshold(topk))
      continue;
    int s_end = (l + 1) * (LARGE / SMALL) < b->nsmall ? (l + 1) * (LARGE / SMALL) : b->nsmall;
    for (int s = l * (LARGE / SMALL); s < s_end; s++) {
      size_t sb = (size_t)s * (size_t)cols;
      if (q->transition_cost + anim_box_distance(q->query, b->small_lo + sb, b->small_hi + sb, cols) >
          anim_topk_threshold(topk))
        continue;
      topk->work.leaves++;
      int end = (s + 1) * SMALL < d->rows ? (s + 1) * SMALL : d->rows;
      for (int i = s * SMALL; i < end; i++)
        anim_search_offer(index, q, topk, i, d->features + (size_t)i * (size_t)cols);
    }
  }
}

int anim_search_boxes_init(anim_search_index_t *index, char *err, int errlen) {
  const anim_search_data_t *d = &index->data;
  boxes_t *b = calloc(1, sizeof *b);
  if (!b) return ANIM_ENOMEM;
  b->nsmall = (d->rows + SMALL - 1) / SMALL;
  b->nlarge = (d->rows + LARGE - 1) / LARGE;
  size_t cols = (size_t)d->cols;
  b->small_lo = malloc((size_t)b->nsmall * cols * sizeof(float));
  b->small_hi = malloc((size_t)b->nsmall * cols * sizeof(float));
  b->large_lo = malloc((size_t)b->nlarge * cols * sizeof(float));
  b->large_hi = malloc((size_t)b->nlarge * cols * sizeof(float));
  if (!b->small_lo || !b->small_hi || !b->large_lo || !b->large_hi) {
    boxes_free(b);
    return ANIM_ENOMEM;
  }
  for (int s = 0; s < b->nsmall; s++)
    bound_rows(d, s * SMALL, (s + 1) * SMALL < d->rows ? (s + 1) * SMALL : d->rows, b->small_lo + (size_t)s * cols,
               b->small_hi + (size_t)s * cols);
  for (int l = 0; l < b->nlarge; l++)
    bound_rows(d, l * LARGE, (l + 1) * LARGE < d->rows ? (l + 1) * LARGE : d->rows, b->large_lo + (size_t)l * cols,
               b->large_hi + (size_t)l * cols);
  index->impl = b;
  index->free_impl = boxes_free;
  index->scan = scan;
  index->memory += 2 * ((size_t)b->nsmall + (size_t)b->nlarge) * cols * sizeof(float);
  return 0;
}
