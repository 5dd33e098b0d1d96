/*
 * search_internal.h: what the search methods share: the index header, the
 * candidate rules of search.h in one place, and the bounded top-k heap.
 * Private to core/search*.c.
 */
#ifndef ANIM_SEARCH_INTERNAL_H
#define ANIM_SEARCH_INTERNAL_H

#include <math.h>
#include <stdint.h>
#include "search/search.h"
#include "base/task.h"

struct anim_topk;

struct anim_search_index {
  anim_search_method_t method;
  anim_search_data_t data;
  int32_t *row_range; /* range of each row, -1 when outside every range */
  size_t memory;      /* bytes held beyond the feature matrix */
  void *impl;         /* the method's own structure */
  void (*free_impl)(void *impl);
  /* Scans for candidates; the top-k already holds the current frame. */
  void (*scan)(const struct anim_search_index *index, const anim_search_query_t *query, struct anim_topk *topk);
};

/* The k lowest (cost, frame) pairs seen so far: a max-heap on (cost, frame). */
typedef struct anim_topk {
  anim_search_hit_t *heap;
  int count, k;
  anim_search_work_t work; /* what the scan did (anim_search_run_work) */
} anim_topk_t;

/* Lexicographic (cost, frame): the order of results. */
static inline int anim_hit_less(float ca, int fa, float cb, int fb) { return ca < cb || (ca == cb && fa < fb); }

/* Cost above which nothing can enter: the worst kept, or +inf while not full.
 * A candidate whose lower bound is strictly above it can be skipped; equal
 * may still win on frame index. */
static inline float anim_topk_threshold(const anim_topk_t *t) { return t->count < t->k ? INFINITY : t->heap[0].cost; }

void anim_topk_push(anim_topk_t *t, int frame, float cost);
/* Sorts the kept hits by (cost, frame) in place; returns how many. */
int anim_topk_sort(anim_topk_t *t);

/* 1 when row, of a range ending before stop with tags tag_mask (stop < 0:
 * outside every range), may be returned for query (the candidate rules of
 * search.h, in one place). */
static inline int anim_search_candidate_in(const anim_search_query_t *q, int row, int stop, uint32_t tag_mask) {
  if (stop < 0) return 0;
  if (q->tag_mask && !(tag_mask & q->tag_mask)) return 0;
  if (row >= stop - q->ignore_range_end) return 0;
  if (q->current_frame >= 0) {
    int d = row - q->current_frame;
    if (d == 0 || (d < 0 ? -d : d) < q->ignore_surrounding) return 0;
  }
  return 1;
}

/* anim_search_candidate_in with row's range looked up. */
static inline int anim_search_candidate(const struct anim_search_index *index, const anim_search_query_t *q, int row) {
  int r = index->row_range[row];
  if (r < 0) return 0;
  const anim_range_t *range = &index->data.ranges[r];
  return anim_search_candidate_in(q, row, range->stop, range->tag_mask);
}

/* Squared distance with early exit: the exact anim_search_distance when the
 * cost stays at or below limit, else some partial sum whose cost exceeds it
 * (lanes only grow as terms are added, so the partial sum never exceeds the
 * full one). */
static inline float anim_search_distance_bounded(const float *a, const float *b, int n, float transition_cost,
                                                 float limit) {
  anim_search_lanes_t s = {{0.0f, 0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 0.0f}};
  int j = 0;
  for (; j + 8 <= n; j += 8) {
    anim_search_lanes_add8(&s, a, b, j);
    if ((j & 15) == 8 && j + 8 < n) {
      float partial = anim_search_lanes_sum(s);
      if (transition_cost + partial > limit) return partial;
    }
  }
  anim_search_lanes_tail(&s, a, b, j, n);
  return anim_search_lanes_sum(s);
}

typedef int32_t anim_search_mask_t __attribute__((vector_size(16)));

/* Per lane, how far x lies outside [l, h] (l - x below, x - h above, else
 * 0): never more than x's distance to a point of the box, in floats too
 * (rounding is monotonic). */
static inline anim_search_v4_t anim_box_excess(anim_search_v4_t x, anim_search_v4_t l, anim_search_v4_t h) {
  anim_search_mask_t below = (anim_search_mask_t)(l - x) & (x < l), above = (anim_search_mask_t)(x - h) & (x > h);
  return (anim_search_v4_t)(below | above);
}

/* Adds the box terms of q over 8 dims at j to the lanes. */
static inline void anim_box_lanes_add(anim_search_lanes_t *s, const float *q, const float *lo, const float *hi, int j) {
  anim_search_v4_t d0 =
      anim_box_excess(anim_search_v4_load(q + j), anim_search_v4_load(lo + j), anim_search_v4_load(hi + j));
  anim_search_v4_t d1 =
      anim_box_excess(anim_search_v4_load(q + j + 4), anim_search_v4_load(lo + j + 4), anim_search_v4_load(hi + j + 4));
  s->lo += d0 * d0, s->hi += d1 * d1;
}

/* Lower bound of the distance from q to any point of the box [lo, hi]:
 * per term never above a point's, summed in the same lanes and order. */
static inline float anim_box_distance(const float *q, const float *lo, const float *hi, int n) {
  anim_search_lanes_t s = {{0.0f, 0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 0.0f}};
  int j = 0;
  for (; j + 8 <= n; j += 8) anim_box_lanes_add(&s, q, lo, hi, j);
  for (; j < n; j++) {
    float c = q[j] < lo[j] ? lo[j] : (q[j] > hi[j] ? hi[j] : q[j]);
    float d = q[j] - c;
    if (j & 4) s.hi[j & 3] += d * d;
    else s.lo[j & 3] += d * d;
  }
  return anim_search_lanes_sum(s);
}

/* Offers row to the top-k when it is a candidate and can beat the threshold. */
static inline void anim_search_offer(const struct anim_search_index *index, const anim_search_query_t *q,
                                     anim_topk_t *topk, int row, const float *x) {
  if (!anim_search_candidate(index, q, row)) return;
  topk->work.rows++, topk->work.exact_rows++;
  float limit = anim_topk_threshold(topk);
  float dist = anim_search_distance_bounded(q->query, x, index->data.cols, q->transition_cost, limit);
  float cost = q->transition_cost + dist;
  if (cost <= limit) anim_topk_push(topk, row, cost);
}

/* Method constructors: fill index->impl, free_impl, scan, memory. */
int anim_search_brute_init(struct anim_search_index *index, char *err, int errlen);
int anim_search_boxes_init(struct anim_search_index *index, char *err, int errlen);
/* runner: how the build may spread over threads (NULL: the calling thread). */
int anim_search_kdtree_init(struct anim_search_index *index, const anim_task_runner_t *runner, char *err, int errlen);

#endif
