/*
 * search.c: the search interface of search.h: index lifetime, query
 * validation, the top-k heap, and the run/batch entry points shared by every
 * method. A method only scans (search_brute.c, search_boxes.c,
 * search_kdtree.c); the current frame, ordering and ties are handled here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "search/search_internal.h"

static const char *const method_names[ANIM_SEARCH_METHOD_COUNT] = {"brute", "boxes", "fast"};

const char *anim_search_method_name(anim_search_method_t method) {
  return (unsigned)method < ANIM_SEARCH_METHOD_COUNT ? method_names[method] : "unknown";
}

int anim_search_method_parse(const char *name, anim_search_method_t *out_method) {
  for (int m = 0; m < ANIM_SEARCH_METHOD_COUNT; m++)
    if (strcmp(name, method_names[m]) == 0) {
      *out_method = (anim_search_method_t)m;
      return 0;
    }
  return ANIM_EINVAL;
}

/* ---- top-k heap --------------------------------------------------------------------- */

static void sift_down(anim_topk_t *t, int i) {
  for (;;) {
    int l = 2 * i + 1, r = l + 1, worst = i;
    if (l < t->count && anim_hit_less(t->heap[worst].cost, t->heap[worst].frame, t->heap[l].cost, t->heap[l].frame))
      worst = l;
    if (r < t->count && anim_hit_less(t->heap[worst].cost, t->heap[worst].frame, t->heap[r].cost, t->heap[r].frame))
      worst = r;
    if (worst == i) return;
    anim_search_hit_t tmp = t->heap[i];
    t->heap[i] = t->heap[worst];
    t->heap[worst] = tmp;
    i = worst;
  }
}

void anim_topk_push(anim_topk_t *t, int frame, float cost) {
  if (t->count < t->k) {
    int i = t->count++;
    t->heap[i].frame = frame;
    t->heap[i].cost = cost;
    while (i > 0) {
      int p = (i - 1) / 2;
      if (!anim_hit_less(t->heap[p].cost, t->heap[p].frame, t->heap[i].cost, t->heap[i].frame)) break;
      anim_search_hit_t tmp = t->heap[p];
      t->heap[p] = t->heap[i];
      t->heap[i] = tmp;
      i = p;
    }
    return;
  }
  if (!anim_hit_less(cost, frame, t->heap[0].cost, t->heap[0].frame)) return;
  t->heap[0].frame = frame;
  t->heap[0].cost = cost;
  sift_down(t, 0);
}

static int compare_hits(const void *a, const void *b) {
  const anim_search_hit_t *x = a, *y = b;
  if (anim_hit_less(x->cost, x->frame, y->cost, y->frame)) return -1;
  return anim_hit_less(y->cost, y->frame, x->cost, x->frame) ? 1 : 0;
}

int anim_topk_sort(anim_topk_t *t) {
  qsort(t->heap, (size_t)t->count, sizeof *t->heap, compare_hits);
  return t->count;
}

/* ---- index ----------------------------------------------------------------------------- */

static int fail(char *err, int errlen, const char *what) {
  if (err && errlen > 0) snprintf(err, (size_t)errlen, "search index: %s", what);
  return ANIM_EINVAL;
}

static int validate_data(const anim_search_data_t *d, char *err, int errlen) {
  if (!d || !d->features || d->rows < 1 || d->cols < 1 || d->cols > ANIM_MAX_FEATURE_DIMS)
    return fail(err, errlen, "needs a feature matrix with rows >= 1 and 1..128 columns");
  if (!d->ranges || d->nranges < 1) return fail(err, errlen, "needs at least one range");
  for (int r = 0; r < d->nranges; r++)
    if (d->ranges[r].start < 0 || d->ranges[r].stop > d->rows || d->ranges[r].start >= d->ranges[r].stop ||
        (r > 0 && d->ranges[r].start < d->ranges[r - 1].stop))
      return fail(err, errlen, "ranges must be sorted, disjoint and inside the matrix");
  return 0;
}

anim_search_index_t *anim_search_index_build(anim_search_method_t method, const anim_search_data_t *data, char *err,
                                             int errlen) {
  return anim_search_index_build_parallel(method, data, NULL, err, errlen);
}

anim_search_index_t *anim_search_index_build_parallel(anim_search_method_t method, const anim_search_data_t *data,
                                                      const anim_task_runner_t *runner, char *err, int errlen) {
  if ((unsigned)method >= ANIM_SEARCH_METHOD_COUNT) {
    fail(err, errlen, "unknown method");
    return NULL;
  }
  if (validate_data(data, err, errlen)) return NULL;
  anim_search_index_t *index = calloc(1, sizeof *index);
  int32_t *row_range = malloc((size_t)data->rows * sizeof *row_range);
  if (!index || !row_range) {
    free(index), free(row_range);
    if (err && errlen > 0) snprintf(err, (size_t)errlen, "search index: out of memory");
    return NULL;
  }
  for (int i = 0; i < data->rows; i++) row_range[i] = -1;
  for (int r = 0; r < data->nranges; r++)
    for (int i = data->ranges[r].start; i < data->ranges[r].stop; i++) row_range[i] = r;
  index->method = method;
  index->data = *data;
  index->row_range = row_range;
  index->memory = (size_t)data->rows * sizeof *row_range;
  int rc = method == ANIM_SEARCH_BRUTE   ? anim_search_brute_init(index, err, errlen)
           : method == ANIM_SEARCH_BOXES ? anim_search_boxes_init(index, err, errlen)
                                         : anim_search_kdtree_init(index, runner, err, errlen);
  if (rc) {
    anim_search_index_free(index);
    return NULL;
  }
  return index;
}

void anim_search_index_free(anim_search_index_t *index) {
  if (!index) return;
  if (index->free_impl) index->free_impl(index->impl);
  free(index->row_range);
  free(index);
}

anim_search_method_t anim_search_index_method(const anim_search_index_t *index) { return index->method; }
size_t anim_search_index_memory(const anim_search_index_t *index) { return index->memory; }

/* ---- queries ----------------------------------------------------------------------------- */

int anim_search_query_validate(const anim_search_index_t *index, const anim_search_query_t *q) {
  if (!index || !q || !q->query) return ANIM_EINVAL;
  if (q->k < 1 || q->k > ANIM_SEARCH_MAX_K) return ANIM_EINVAL;
  if (q->current_frame < -1 || q->current_frame >= index->data.rows) return ANIM_ERANGE;
  if (q->ignore_range_end < 0 || q->ignore_surrounding < 0) return ANIM_EINVAL;
  if (!isfinite(q->transition_cost)) return ANIM_ENONFINITE;
  if (q->transition_cost < 0.0f) return ANIM_EINVAL;
  for (int j = 0; j < index->data.cols; j++)
    if (!isfinite(q->query[j])) return ANIM_ENONFINITE;
  return 0;
}

size_t anim_search_scratch_size(const anim_search_index_t *index, int k) {
  return (size_t)(k > 0 ? k : 1) * sizeof(anim_search_hit_t);
}

int anim_search_run(const anim_search_index_t *index, const anim_search_query_t *q, anim_search_hit_t *out_hits,
                    int *out_count, void *scratch) {
  return anim_search_run_work(index, q, out_hits, out_count, scratch, NULL);
}

int anim_search_run_work(const anim_search_index_t *index, const anim_search_query_t *q, anim_search_hit_t *out_hits,
                         int *out_count, void *scratch, anim_search_work_t *out_work) {
  int rc = anim_search_query_validate(index, q);
  if (rc) return rc;
  void *owned = NULL;
  if (!scratch) {
    scratch = owned = malloc(anim_search_scratch_size(index, q->k));
    if (!scratch) return ANIM_ENOMEM;
  }
  anim_topk_t topk = {scratch, 0, q->k, {0, 0, 0, 0}};
  if (q->current_frame >= 0) {
    const float *row = index->data.features + (size_t)q->current_frame * (size_t)index->data.cols;
    anim_topk_push(&topk, q->current_frame, anim_search_distance(q->query, row, index->data.cols));
  }
  index->scan(index, q, &topk);
  int n = anim_topk_sort(&topk);
  memcpy(out_hits, topk.heap, (size_t)n * sizeof *out_hits);
  *out_count = n;
  if (out_work) *out_work = topk.work;
  free(owned);
  return 0;
}

int anim_search_batch(const anim_search_index_t *index, const anim_search_query_t *queries, int n, int max_k,
                      anim_search_hit_t *out_hits, int *out_counts, void *scratch) {
  if (n < 0 || max_k < 1) return ANIM_EINVAL;
  void *owned = NULL;
  if (!scratch && !(scratch = owned = malloc(anim_search_scratch_size(index, max_k)))) return ANIM_ENOMEM;
  int first_error = 0;
  for (int i = 0; i < n; i++) {
    int rc = queries[i].k > max_k ? ANIM_EINVAL
                                  : anim_search_run(index, &queries[i], out_hits + (size_t)i * (size_t)max_k,
                                                    &out_counts[i], scratch);
    if (rc) {
      out_counts[i] = 0;
      if (!first_error) first_error = rc;
    }
  }
  free(owned);
  return first_error;
}
