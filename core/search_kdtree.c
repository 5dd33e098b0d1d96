/*
 * search_kdtree.c: this project's fast exact method: a k-d tree over the
 * normalized features with tight per-node bounding boxes, rows reordered so
 * every leaf is a contiguous block, and a depth-first search that visits the
 * nearer child first and skips any node whose box already costs more than the
 * k-th best.
 *
 * Why it beats the seed's boxes: those bound runs of consecutive frames, which
 * sweep a whole gait cycle and are loose in every dimension; the tree groups
 * frames that are near in feature space, so its boxes are tight and most of
 * the database is skipped. Exactness: box bounds are summed like distances
 * (never above them), pruning is strict (a tie may still win on frame index)
 * and costs are computed on the original rows, so results equal brute force's.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "search_internal.h"

#define LEAF_ROWS 24

typedef struct {
  int first, count;    /* rows [first, first + count) of the reordered copy */
  int left, right;     /* children, -1 for a leaf */
  int min_frame;       /* lowest original frame below: a tie there cannot win if it is higher */
} node_t;

typedef struct {
  int nnodes, cap;
  node_t *nodes;
  float *lo, *hi;      /* per node, cols each */
  float *rows;         /* features reordered leaf by leaf */
  int *frame;          /* original frame of each reordered row */
  int cols;
} kdtree_t;

static void kdtree_free(void *impl) {
  kdtree_t *t = impl;
  if (!t) return;
  free(t->nodes), free(t->lo), free(t->hi), free(t->rows), free(t->frame);
  free(t);
}

/* Partitions order[0..n) so the rows at order[0..mid) have dim values <= the
 * rest (quickselect). */
static void select_median(const float *x, int cols, int dim, int *order, int n, int mid) {
  int lo = 0, hi = n - 1;
  while (lo < hi) {
    float pivot = x[(size_t)order[(lo + hi) / 2] * (size_t)cols + (size_t)dim];
    int i = lo, j = hi;
    while (i <= j) {
      while (x[(size_t)order[i] * (size_t)cols + (size_t)dim] < pivot) i++;
      while (x[(size_t)order[j] * (size_t)cols + (size_t)dim] > pivot) j--;
      if (i <= j) {
        int tmp = order[i];
        order[i++] = order[j];
        order[j--] = tmp;
      }
    }
    if (mid <= j) hi = j;
    else if (mid >= i) lo = i;
    else return;
  }
}

static int build(kdtree_t *t, const float *x, int *order, int first, int count) {
  int id = t->nnodes++;
  node_t *node = &t->nodes[id];
  node->first = first, node->count = count, node->left = node->right = -1;
  float *lo = t->lo + (size_t)id * (size_t)t->cols, *hi = t->hi + (size_t)id * (size_t)t->cols;
  for (int j = 0; j < t->cols; j++) lo[j] = INFINITY, hi[j] = -INFINITY;
  for (int i = first; i < first + count; i++) {
    const float *row = x + (size_t)order[i] * (size_t)t->cols;
    for (int j = 0; j < t->cols; j++) {
      if (row[j] < lo[j]) lo[j] = row[j];
      if (row[j] > hi[j]) hi[j] = row[j];
    }
  }
  node->min_frame = INT32_MAX;
  for (int i = first; i < first + count; i++)
    if (order[i] < node->min_frame) node->min_frame = order[i];
  if (count <= LEAF_ROWS) return id;
  int dim = 0;
  for (int j = 1; j < t->cols; j++)
    if (hi[j] - lo[j] > hi[dim] - lo[dim]) dim = j;
  if (!(hi[dim] > lo[dim])) return id; /* all rows equal: keep as a leaf */
  int mid = count / 2;
  select_median(x, t->cols, dim, order + first, count, mid);
  int left = build(t, x, order, first, mid);
  int right = build(t, x, order, first + mid, count - mid);
  t->nodes[id].left = left;
  t->nodes[id].right = right;
  return id;
}

/* The box bound, summed in distance order; it may stop early once the cost is
 * over limit (the partial sum is then over too, and the node is skipped). */
static float node_bound(const kdtree_t *t, const float *q, int id, float transition_cost, float limit) {
  const float *lo = t->lo + (size_t)id * (size_t)t->cols, *hi = t->hi + (size_t)id * (size_t)t->cols;
  float sum = 0.0f;
  for (int j = 0; j < t->cols; j++) {
    float c = q[j] < lo[j] ? lo[j] : (q[j] > hi[j] ? hi[j] : q[j]);
    float d = q[j] - c;
    sum += d * d;
    if ((j & 3) == 3 && transition_cost + sum > limit) return sum;
  }
  return sum;
}

/* Skip a node whose bound beats nothing: over the k-th best, or tied with it
 * while every frame below is higher than the k-th best's (ties go to lower frames). */
static int node_skippable(const anim_topk_t *topk, const node_t *node, float cost_bound) {
  float limit = anim_topk_threshold(topk);
  if (cost_bound > limit) return 1;
  return cost_bound == limit && topk->count == topk->k && node->min_frame > topk->heap[0].frame;
}

static void search_leaf(const anim_search_index_t *index, const kdtree_t *t, const anim_search_query_t *q,
                        anim_topk_t *topk, const node_t *node) {
  for (int i = node->first; i < node->first + node->count; i++) {
    int frame = t->frame[i];
    if (!anim_search_candidate(index, q, frame)) continue;
    float limit = anim_topk_threshold(topk);
    /* The reordered row is a bit-exact copy: its cost is the original row's. */
    float dist = anim_search_distance_bounded(q->query, t->rows + (size_t)i * (size_t)t->cols, t->cols,
                                              q->transition_cost, limit);
    float cost = q->transition_cost + dist;
    if (cost <= limit) anim_topk_push(topk, frame, cost);
  }
}

static void search_node(const anim_search_index_t *index, const kdtree_t *t, const anim_search_query_t *q,
                        anim_topk_t *topk, int id, float bound) {
  const node_t *node = &t->nodes[id];
  if (node_skippable(topk, node, q->transition_cost + bound)) return;
  if (node->left < 0) {
    search_leaf(index, t, q, topk, node);
    return;
  }
  float limit = anim_topk_threshold(topk);
  float bl = node_bound(t, q->query, node->left, q->transition_cost, limit);
  float br = node_bound(t, q->query, node->right, q->transition_cost, limit);
  if (bl <= br) {
    search_node(index, t, q, topk, node->left, bl);
    search_node(index, t, q, topk, node->right, br);
  } else {
    search_node(index, t, q, topk, node->right, br);
    search_node(index, t, q, topk, node->left, bl);
  }
}

static void scan(const anim_search_index_t *index, const anim_search_query_t *q, anim_topk_t *topk) {
  const kdtree_t *t = index->impl;
  search_node(index, t, q, topk, 0, node_bound(t, q->query, 0, q->transition_cost, anim_topk_threshold(topk)));
}

int anim_search_kdtree_init(anim_search_index_t *index, char *err, int errlen) {
  const anim_search_data_t *d = &index->data;
  kdtree_t *t = calloc(1, sizeof *t);
  int *order = malloc((size_t)d->rows * sizeof *order);
  if (!t || !order) {
    free(t), free(order);
    return ANIM_ENOMEM;
  }
  t->cols = d->cols;
  t->cap = 2 * (d->rows / (LEAF_ROWS / 2) + 1) + 1;
  t->nodes = malloc((size_t)t->cap * sizeof *t->nodes);
  t->lo = malloc((size_t)t->cap * (size_t)d->cols * sizeof(float));
  t->hi = malloc((size_t)t->cap * (size_t)d->cols * sizeof(float));
  t->rows = malloc((size_t)d->rows * (size_t)d->cols * sizeof(float));
  t->frame = malloc((size_t)d->rows * sizeof *t->frame);
  if (!t->nodes || !t->lo || !t->hi || !t->rows || !t->frame) {
    free(order);
    kdtree_free(t);
    return ANIM_ENOMEM;
  }
  for (int i = 0; i < d->rows; i++) order[i] = i;
  build(t, d->features, order, 0, d->rows);
  for (int i = 0; i < d->rows; i++) {
    t->frame[i] = order[i];
    memcpy(t->rows + (size_t)i * (size_t)d->cols, d->features + (size_t)order[i] * (size_t)d->cols,
           (size_t)d->cols * sizeof(float));
  }
  free(order);
  index->impl = t;
  index->free_impl = kdtree_free;
  index->scan = scan;
  index->memory += (size_t)t->nnodes * (sizeof(node_t) + 2 * (size_t)d->cols * sizeof(float)) +
                   (size_t)d->rows * ((size_t)d->cols * sizeof(float) + sizeof(int));
  return 0;
}
