/*
 * search.h: exact k-nearest motion-matching search in normalized feature space.
 *
 * One interface, several methods (brute force is the reference; all return
 * exactly what it returns). An index is built once over a read-only view of
 * the feature matrix and the ranges, then queried from any number of threads
 * at once: queries write only to caller-provided outputs and scratch.
 *
 * What a query means (every method implements exactly this):
 *  - candidates: frames i of ranges whose tag_mask intersects the query's
 *    tag_mask (all ranges when the query's mask is 0), with
 *    i < range.stop - ignore_range_end, and, when current_frame >= 0,
 *    |i - current_frame| >= ignore_surrounding and i != current_frame;
 *  - a candidate's cost is transition_cost + |q - x_i|^2 (squared Euclidean);
 *  - when current_frame >= 0 it competes too, with cost |q - x_current|^2
 *    (no transition cost): the bound the others must beat;
 *  - the result is the k lowest-cost entries, by ascending cost, ties broken
 *    by lower frame index; fewer than k when there are fewer candidates.
 * Costs are computed by anim_search_distance (one summation order), so every
 * method reports bit-identical costs for the same frame.
 */
#ifndef ANIM_SEARCH_H
#define ANIM_SEARCH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "database/database.h"
#include "base/task.h"

#define ANIM_SEARCH_MAX_K 1024

typedef enum {
  ANIM_SEARCH_BRUTE = 0, /* reference: every candidate */
  ANIM_SEARCH_BOXES = 1, /* the seed's two-level bounding boxes */
  ANIM_SEARCH_FAST = 2,  /* this project's accelerated exact method */
  ANIM_SEARCH_METHOD_COUNT
} anim_search_method_t;

/* Read-only view of what is searched; not owned by the index. */
typedef struct {
  const float *features; /* rows x cols, row-major, normalized */
  int rows, cols;
  const anim_range_t *ranges;
  int nranges;
} anim_search_data_t;

/* The view an index searches of a database's own features and ranges. */
static inline anim_search_data_t anim_search_data_of(const anim_database_t *db) {
  anim_search_data_t data = {db->features.values, db->features.rows, db->features.cols, db->ranges, db->nranges};
  return data;
}

typedef struct {
  const float *query;      /* cols normalized values */
  int k;                   /* 1..ANIM_SEARCH_MAX_K */
  int current_frame;       /* -1: none */
  float transition_cost;   /* >= 0, added to every frame but the current */
  int ignore_range_end;    /* >= 0 frames */
  int ignore_surrounding;  /* >= 0 frames */
  uint32_t tag_mask;       /* 0: all ranges */
} anim_search_query_t;

typedef struct {
  int frame;
  float cost;
} anim_search_hit_t;

typedef struct anim_search_index anim_search_index_t;

/* Builds an index over data (which must outlive it). NULL on failure with a
 * message in err (invalid data, out of memory). Free with anim_search_index_free.
 * The fast method uses AVX2 when the CPU has it, unless the environment sets
 * ANIM_SEARCH_NO_AVX2 (to anything but 0) when the index is built; the
 * results are the same either way. */
anim_search_index_t *anim_search_index_build(anim_search_method_t method, const anim_search_data_t *data,
                                             char *err, int errlen);
/* The same, the build's work spread over runner's threads (task.h; NULL: the
 * calling thread, as anim_search_index_build). The index is the same however
 * it was built. Returns once it is built; runner is not kept. */
anim_search_index_t *anim_search_index_build_parallel(anim_search_method_t method, const anim_search_data_t *data,
                                                      const anim_task_runner_t *runner, char *err, int errlen);
void anim_search_index_free(anim_search_index_t *index);
anim_search_method_t anim_search_index_method(const anim_search_index_t *index);
/* Bytes the index holds beyond the feature matrix itself. */
size_t anim_search_index_memory(const anim_search_index_t *index);
const char *anim_search_method_name(anim_search_method_t method);
/* ANIM_EINVAL for an unknown name. */
int anim_search_method_parse(const char *name, anim_search_method_t *out_method);

/* 0 when query is valid for index: k in range, finite values, current_frame
 * in [-1, rows), non-negative exclusions; else ANIM_EINVAL / ANIM_ENONFINITE /
 * ANIM_ERANGE. anim_search_run checks it too. */
int anim_search_query_validate(const anim_search_index_t *index, const anim_search_query_t *query);

/* Bytes of scratch one anim_search_run needs for k (callers allocate once). */
size_t anim_search_scratch_size(const anim_search_index_t *index, int k);

/* Runs one query. out_hits has room for query->k; *out_count receives how
 * many were written. scratch: anim_search_scratch_size bytes, or NULL to let
 * the call allocate (not on hot paths). */
int anim_search_run(const anim_search_index_t *index, const anim_search_query_t *query,
                    anim_search_hit_t *out_hits, int *out_count, void *scratch);

/* What one query did, counted by the method that ran it: nodes whose bounds
 * were computed, leaves (or the seed's small boxes) opened, rows bounded
 * inside them, and rows whose exact distance was computed. Brute force counts
 * only rows. For benchmarks: the work behind a latency, free of timing noise. */
typedef struct {
  long nodes, leaves, rows, exact_rows;
} anim_search_work_t;

/* anim_search_run, and *out_work (when not NULL) receives what it did. */
int anim_search_run_work(const anim_search_index_t *index, const anim_search_query_t *query,
                         anim_search_hit_t *out_hits, int *out_count, void *scratch, anim_search_work_t *out_work);

/* Runs n queries; hits of query i at out_hits + i * max_k, its count at
 * out_counts[i]. max_k >= every query's k. scratch: anim_search_scratch_size
 * (index, max_k) bytes, or NULL to let the call allocate (not on hot paths).
 * Returns the first error. */
int anim_search_batch(const anim_search_index_t *index, const anim_search_query_t *queries, int n,
                      int max_k, anim_search_hit_t *out_hits, int *out_counts, void *scratch);

/* Squared distances are summed in eight lanes (term j into lane j % 8) added
 * pairwise at the end: the order a vector unit sums in, fixed here so every
 * method and every build reports the same bits, and fast without -ffast-math
 * (a plain running sum is one long chain of dependent adds). The lanes are
 * two SSE-sized vectors, lo (lanes 0-3) and hi (4-7). */
typedef float anim_search_v4_t __attribute__((vector_size(16)));
typedef struct {
  anim_search_v4_t lo, hi;
} anim_search_lanes_t;

static inline anim_search_v4_t anim_search_v4_load(const float *p) {
  anim_search_v4_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

static inline float anim_search_lanes_sum(anim_search_lanes_t s) {
  anim_search_v4_t a = s.lo + s.hi; /* lanes i + (i + 4) */
  return (a[0] + a[2]) + (a[1] + a[3]);
}

/* Adds the squared differences of a and b over [j, n) (n - j < 8) to their
 * lanes: the tail of a row whose length is not a multiple of 8. */
static inline void anim_search_lanes_tail(anim_search_lanes_t *s, const float *a, const float *b, int j, int n) {
  for (; j < n; j++) {
    float d = a[j] - b[j];
    if (j & 4) s->hi[j & 3] += d * d;
    else s->lo[j & 3] += d * d;
  }
}

/* Adds the squared differences of a and b over the 8 dims at j to their lanes. */
static inline void anim_search_lanes_add8(anim_search_lanes_t *s, const float *a, const float *b, int j) {
  anim_search_v4_t d0 = anim_search_v4_load(a + j) - anim_search_v4_load(b + j);
  anim_search_v4_t d1 = anim_search_v4_load(a + j + 4) - anim_search_v4_load(b + j + 4);
  s->lo += d0 * d0, s->hi += d1 * d1;
}

/* The one squared-distance kernel every method reports costs with. Rows
 * padded with zeros give the same bits (a zero term changes no lane). */
static inline float anim_search_distance(const float *a, const float *b, int n) {
  anim_search_lanes_t s = {{0.0f, 0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 0.0f}};
  int j = 0;
  for (; j + 8 <= n; j += 8) anim_search_lanes_add8(&s, a, b, j);
  anim_search_lanes_tail(&s, a, b, j, n);
  return anim_search_lanes_sum(s);
}

#endif
