/*
 * search_kdtree.c: this project's fast exact method: a k-d tree over the
 * normalized features, rows reordered so every node is a contiguous block,
 * each node split in halves across about its rows' principal direction
 * (node_split) and bounded twice (a tight axis-aligned box and a sphere
 * around the box's centre), and a depth-first search that visits the child
 * on the query's side of the split first and skips any node whose bound
 * already costs more than the k-th best. In a
 * leaf, each row is first bounded from one byte per dimension (leaf codes,
 * below), groups of a quarter of the leaf at once by the box of their codes;
 * only the rows that bound cannot rule out have their exact cost computed, on
 * the original row, the groups and rows nearest in codes first. It does not
 * keep a copy of the features.
 *
 * Why it beats the seed's boxes: those bound runs of consecutive frames, which
 * sweep a whole gait cycle and are loose in every dimension; the tree groups
 * frames that are near in feature space, so its boxes are tight and most of
 * the database is skipped.
 *
 * Why spheres too: in 27 or 50 dimensions a query is typically a little off
 * in every dimension at once, by less than a node's width, so the box bound
 * (which sums only the parts outside the box) keeps a small fraction of the
 * true distance and far nodes survive; |q - c| - r keeps most of it. The two
 * are both lower bounds, so their maximum is one; which is larger varies from
 * node to node (boxes near the root, spheres near the leaves and around
 * clusters such as the tiled copies of the benchmark), and it is the hard
 * queries, far from every frame, that the spheres cut short.
 *
 * Exactness: box bounds are summed like distances (never above them), the
 * sphere bound is shrunk by more than the rounding of a distance (see
 * sphere_bound), the code bound carries margins far above its rounding (see
 * anim_codes_limit in leaf_codes.h), pruning is strict (a tie may still win on frame index),
 * and costs are computed on the original rows by the one kernel, so results
 * equal brute force's. The AVX2 paths (chosen at build time when the CPU has
 * them) give the same bits as the portable ones.
 *
 * Why oblique splits: the real features are correlated (a motion's frames
 * lie along diagonal curves), and halving across the widest axis left cells
 * wider than they need be; at 3M frames the leaves' radius (median) fell
 * from 0.43 to 0.35 and a query opens half the leaves. What stays is the
 * benchmark's noise: a leaf of noisy copies of a few frames has a radius of
 * at least its noise (0.05 per dimension: 0.26 in 27), so a query 1.4 away
 * (noise 0.3 per dimension) cannot rule out the leaves whose nearest row is
 * up to about 40% over the answer, and a query with many frames near its
 * answer opens several times the leaves of the median one.
 *
 * Layout: a node's two children are adjacent, their bounds one block, so
 * opening a node reads one run of memory, fetched ahead (a query at 3M
 * frames spends much of its time waiting for node bounds).
 *
 * Building: the nodes' ids (subtree_nodes) and their count below a node
 * depend only on its row count, so the subtrees under the top levels are
 * independent tasks (rows, nodes and bounds each in their own slice) run
 * through the caller's task runner (task.h); the tree is the same whether
 * one thread builds it or several.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "search/leaf_codes.h"
#include "search/search_internal.h"
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_AVX2_PATH 1 /* node_bound_avx2, chosen at run time (avx2_enabled) */
#endif

#define LEAF_ROWS 96
/* A leaf's rows are split further into groups of at most this many (halving
 * at the median of the widest side, as the tree does), each with the box of
 * its codes: a group whose box rules out every row is skipped whole. */
#define GROUP_ROWS 24
#define MAX_GROUPS (LEAF_ROWS / GROUP_ROWS)
/* Rows a split's direction is found from, at most (a sample, every
 * count / SPLIT_SAMPLE-th row, of larger nodes): the direction needs no more,
 * and the build's extra passes stay short. */
#define SPLIT_SAMPLE 256
/* Subtree tasks per runner thread: enough to even out unequal subtrees. */
#define TASKS_PER_THREAD 8
/* Below this many rows a build is a few milliseconds: threads cost more than they save. */
#define PARALLEL_MIN_ROWS 65536
/* Nodes this near the root cover a sixteenth of the rows or more: their
 * spheres are far wider than their boxes and never prune, so they get none
 * (radius infinity), which spares the build full passes over the rows. */
#define SPHERE_MIN_DEPTH 4
/* The sphere bound's shrink: far above the relative rounding of a distance
 * over ANIM_MAX_FEATURE_DIMS terms, (128 + 3) 2^-24 = 7.8e-6 (sphere_bound). */
#define SPHERE_SHRINK 1e-4f

typedef struct {
  int first, count; /* rows [first, first + count) in tree order (codes, meta) */
  int child;        /* the left child (the right one is child + 1); -1 for a leaf */
  int min_frame;    /* lowest original frame below: a tie there cannot win if it is higher */
  float radius;     /* every row below is within radius of the centre (rounded up) */
  float step;       /* a leaf's code step (leaf codes below); 0: its rows are all equal */
  float cut;        /* an inner node's split: rows x with x . u < cut went left (u: kdtree's split) */
  uint8_t ngroups;  /* a leaf's groups of rows: group g ends at row first + group_end[g] */
  uint8_t group_end[MAX_GROUPS];
} node_t;

struct kdtree;
/* A node's lower bound (node_bound below). */
typedef float (*node_bound_fn)(const struct kdtree *t, const float *q, int id, float transition_cost, float limit);

/* A reordered row's frame and its range's end and tags (stop -1: outside
 * every range), so a leaf's candidate checks read memory in order instead of
 * the index's per-frame table and the range list. */
typedef struct {
  int frame, stop;
  uint32_t tag_mask;
} row_meta_t;

typedef struct kdtree {
  int nnodes;
  node_t *nodes;
  float *bounds;    /* per node: lo, hi; stride each (the centre is node_centre of them) */
  float *rows;      /* while building: features reordered node by node, stride apart, zero-padded */
  float *keys;      /* while building: each row's position along its node's split direction */
  float *split;     /* per node, stride: an inner node's split direction u (the side a query is on orders the visit) */
  uint8_t *codes;   /* each reordered row's leaf codes, stride apart (leaf codes below) */
  uint8_t *groups;  /* per node, MAX_GROUPS slots: a leaf group's code box, lowest and highest codes, stride each */
  row_meta_t *meta; /* beside each reordered row: what its candidate check reads */
  int cols, stride; /* stride: cols rounded up to the kernel's 8 lanes */
  anim_code_distances_fn code_distances;
  node_bound_fn node_bound;
  int prefetch; /* node_prefetch_children: an index past PREFETCH_MIN_BYTES */
} kdtree_t;

static void kdtree_free(void *impl) {
  kdtree_t *t = impl;
  if (!t) return;
  free(t->nodes), free(t->bounds), free(t->rows), free(t->keys);
  free(t->split), free(t->codes), free(t->groups), free(t->meta);
  free(t);
}

static inline const float *node_lo(const kdtree_t *t, int id) { return t->bounds + (size_t)id * 2 * (size_t)t->stride; }

/* The centre of a box [lo, hi] in one dimension: computed where it is used
 * instead of stored (a third less memory per node for the search to read),
 * and by the same float operations everywhere, so the centre the search
 * measures from is the one the build measured the radius from. */
static inline float node_centre(float lo, float hi) { return 0.5f * lo + 0.5f * hi; }
static inline const float *row_at(const kdtree_t *t, int i) { return t->rows + (size_t)i * (size_t)t->stride; }

/* Nodes below (and including) a node of count rows: a leaf at LEAF_ROWS or
 * fewer, else two halves. Ids: a node's two children are adjacent (one
 * block of bounds for the search to read when it opens the node), then come
 * the left child's descendants and the right one's: the nodes under a node
 * of count rows are the node and a block of subtree_nodes(count) - 1 ids,
 * so every id follows from row counts alone (build_node). */
static int subtree_nodes(int count) {
  if (count <= LEAF_ROWS) return 1;
  int half = count / 2;
  /* Sizes at one depth differ by at most one: recurse on both only when they differ. */
  if (count % 2 == 0) return 1 + 2 * subtree_nodes(half);
  return 1 + subtree_nodes(half) + subtree_nodes(count - half);
}

/* ---- build --------------------------------------------------------------------------- */

static void swap_rows(kdtree_t *t, int a, int b) {
  float tmp[ANIM_MAX_FEATURE_DIMS];
  size_t bytes = (size_t)t->stride * sizeof(float);
  float *ra = t->rows + (size_t)a * (size_t)t->stride, *rb = t->rows + (size_t)b * (size_t)t->stride;
  memcpy(tmp, ra, bytes), memcpy(ra, rb, bytes), memcpy(rb, tmp, bytes);
  row_meta_t m = t->meta[a];
  t->meta[a] = t->meta[b], t->meta[b] = m;
}

static void select_by_keys(kdtree_t *t, float *x, size_t cols, int first, int n, int mid);

/* Partitions rows [first, first + n) so those before first + mid have dim
 * values <= the rest (quickselect, moving whole rows: every later pass over
 * a node reads its rows in order). */
static void select_median(kdtree_t *t, int dim, int first, int n, int mid) {
  select_by_keys(t, t->rows + dim, (size_t)t->stride, first, n, mid);
}

/* The same by keys x[i * xstride] (a dimension of the rows, which move with
 * them, or t->keys, moved here alongside). */
static void select_by_keys(kdtree_t *t, float *x, size_t cols, int first, int n, int mid) {
  int own = x == t->keys;
  int lo = first, hi = first + n - 1, target = first + mid;
  while (lo < hi) {
    float pivot = x[(size_t)((lo + hi) / 2) * cols];
    int i = lo, j = hi;
    while (i <= j) {
      while (x[(size_t)i * cols] < pivot) i++;
      while (x[(size_t)j * cols] > pivot) j--;
      if (i <= j) {
        if (own) {
          float k = x[i];
          x[i] = x[j], x[j] = k;
        }
        swap_rows(t, i++, j--);
      }
    }
    if (target <= j) hi = j;
    else if (target >= i) lo = i;
    else return;
  }
}

/* The box, its centre, the sphere around the centre (from SPHERE_MIN_DEPTH
 * down) and the lowest frame of node id, at depth, over rows [first, first +
 * count). Returns the row farthest from the centre (where the sphere's pass
 * found it; -1 above SPHERE_MIN_DEPTH), where node_split's direction starts. */
static int node_fill(kdtree_t *t, int id, int first, int count, int depth) {
  int cols = t->cols, stride = t->stride;
  node_t *node = &t->nodes[id];
  node->first = first, node->count = count, node->child = -1, node->cut = 0.0f;
  float *lo = t->bounds + (size_t)id * 2 * (size_t)stride, *hi = lo + stride, centre[ANIM_MAX_FEATURE_DIMS];
  for (int j = 0; j < stride; j++) lo[j] = j < cols ? INFINITY : 0.0f, hi[j] = j < cols ? -INFINITY : 0.0f;
  node->min_frame = INT32_MAX;
  for (int i = first; i < first + count; i++) {
    const float *row = row_at(t, i);
    for (int j = 0; j < cols; j++) {
      lo[j] = row[j] < lo[j] ? row[j] : lo[j];
      hi[j] = row[j] > hi[j] ? row[j] : hi[j];
    }
    if (t->meta[i].frame < node->min_frame) node->min_frame = t->meta[i].frame;
  }
  for (int j = 0; j < stride; j++) centre[j] = node_centre(lo[j], hi[j]); /* 0 in the padding */
  if (depth < SPHERE_MIN_DEPTH) {
    node->radius = INFINITY;
    return -1;
  }
  /* By the distance kernel, then rounded up: the float sum of cols squared
   * float differences is at least (1 - (cols + 2) 2^-24) of the exact
   * distance (each difference, square and addition rounds by 2^-24 of a
   * non-negative term), so 1e-4 more, and 1e-6 more for the float radius's own
   * rounding, leave no row outside. */
  float r2 = -1.0f;
  int far = first;
  for (int i = first; i < first + count; i++) {
    float s = anim_search_distance(row_at(t, i), centre, stride);
    if (s > r2) r2 = s, far = i;
  }
  node->radius = (float)(sqrt((double)r2 * (1.0 + 1e-4)) * (1.0 + 1e-6));
  return far;
}

/* Row of the sample (every step-th row of [first, first + count)) farthest from p, in doubles. */
static int row_farthest(const kdtree_t *t, const float *p, int first, int count, int step) {
  int best = first;
  double far = -1.0;
  for (int i = first; i < first + count; i += step) {
    const float *row = row_at(t, i);
    double s = 0.0;
    for (int j = 0; j < t->cols; j++) {
      double d = (double)row[j] - p[j];
      s += d * d;
    }
    if (s > far) far = s, best = i;
  }
  return best;
}

/* a . b over n dims (a multiple of 8), in the kernel's eight lanes: a
 * split's key, where only speed matters (any order would do). */
static inline float row_dot(const float *a, const float *b, int n) {
  anim_search_lanes_t s = {{0.0f, 0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 0.0f}};
  for (int j = 0; j < n; j += 8) {
    s.lo += anim_search_v4_load(a + j) * anim_search_v4_load(b + j);
    s.hi += anim_search_v4_load(a + j + 4) * anim_search_v4_load(b + j + 4);
  }
  return anim_search_lanes_sum(s);
}

/* One step of the power iteration for the sample's principal direction:
 * u <- C u / |C u| with C the sample's scatter about its mean (floats: a
 * direction needs no more). 0 when C u is zero or not finite (u is then left
 * as it was). Rows and u are padded with zeros to stride. */
static int direction_refine(const kdtree_t *t, float *u, int first, int count, int step) {
  float mean[ANIM_MAX_FEATURE_DIMS] = {0.0f}, v[ANIM_MAX_FEATURE_DIMS] = {0.0f};
  int n = 0, stride = t->stride;
  for (int i = first; i < first + count; i += step, n++) {
    const float *row = row_at(t, i);
    for (int j = 0; j < stride; j++) mean[j] += row[j];
  }
  for (int j = 0; j < stride; j++) mean[j] /= (float)n;
  float mu = row_dot(mean, u, stride); /* p = (x - mean) . u = x . u - mean . u */
  for (int i = first; i < first + count; i += step) {
    const float *row = row_at(t, i);
    float p = row_dot(row, u, stride) - mu;
    for (int j = 0; j < stride; j++) v[j] += p * (row[j] - mean[j]);
  }
  double norm = 0.0;
  for (int j = 0; j < t->cols; j++) norm += (double)v[j] * v[j];
  if (!(norm > 0.0 && norm < INFINITY)) return 0;
  for (int j = 0; j < t->cols; j++) u[j] = (float)(v[j] / sqrt(norm));
  return 1;
}

/* Splits node id in two halves of its rows; 0 when it stays a leaf (few
 * rows, or all rows equal). The direction is about the rows' principal one
 * (the line between two far rows, refined by one power iteration; on a
 * sample of SPLIT_SAMPLE rows at most), not a coordinate axis: the real
 * features are correlated, and a motion's frames run along diagonal curves
 * that an axis cuts obliquely, leaving wider halves (larger spheres, more
 * leaves a query cannot rule out). Any split is exact: the bounds are taken
 * from the rows each half gets. The direction and the median's position
 * along it are kept: a query visits its own side first. With a row that is
 * not finite, the widest dimension as before. */
static int node_split(kdtree_t *t, int id, int far) {
  node_t *node = &t->nodes[id];
  if (node->count <= LEAF_ROWS) return 0;
  const float *lo = node_lo(t, id), *hi = lo + t->stride;
  int dim = 0, finite = 1, first = node->first, count = node->count;
  for (int j = 0; j < t->cols; j++) {
    if (hi[j] - lo[j] > hi[dim] - lo[dim]) dim = j;
    finite &= isfinite(hi[j] - lo[j]);
  }
  if (!(hi[dim] > lo[dim])) return 0;
  float centre[ANIM_MAX_FEATURE_DIMS], *u = t->split + (size_t)id * (size_t)t->stride;
  memset(u, 0, (size_t)t->stride * sizeof *u);
  for (int j = 0; j < t->cols; j++) centre[j] = node_centre(lo[j], hi[j]);
  int step = count > SPLIT_SAMPLE ? count / SPLIT_SAMPLE : 1;
  const float *a = !finite ? NULL : row_at(t, far >= 0 ? far : row_farthest(t, centre, first, count, step));
  const float *b = a ? row_at(t, row_farthest(t, a, first, count, step)) : NULL;
  double norm = 0.0;
  for (int j = 0; b && j < t->cols; j++) u[j] = b[j] - a[j], norm += (double)u[j] * u[j];
  if (!(norm > 0.0 && norm < INFINITY)) {
    u[dim] = 1.0f;
    select_median(t, dim, first, count, count / 2);
    node->cut = row_at(t, first + count / 2)[dim];
    return 1;
  }
  direction_refine(t, u, first, count, step);
  for (int i = first; i < first + count; i++) t->keys[i] = row_dot(row_at(t, i), u, t->stride);
  select_by_keys(t, t->keys, 1, first, count, count / 2);
  node->cut = t->keys[first + count / 2];
  return 1;
}

/* ---- leaf codes (the coding and its bounds: leaf_codes.h) -------------------------------- */

/* Splits rows [first, first + count) of leaf node into groups of at most
 * GROUP_ROWS (halves at the median of the widest side; rows all equal stay
 * one group), appending their ends. */
static void leaf_group(kdtree_t *t, node_t *node, int first, int count) {
  int dim = -1;
  if (count > GROUP_ROWS) {
    float width = 0.0f;
    for (int j = 0; j < t->cols; j++) {
      float lo = INFINITY, hi = -INFINITY;
      for (int i = first; i < first + count; i++) {
        float v = row_at(t, i)[j];
        lo = v < lo ? v : lo, hi = v > hi ? v : hi;
      }
      if (hi - lo > width) width = hi - lo, dim = j;
    }
  }
  /* Halving rows of at most LEAF_ROWS = MAX_GROUPS x GROUP_ROWS gives at most MAX_GROUPS groups. */
  if (dim < 0) {
    node->group_end[node->ngroups++] = (uint8_t)(first + count - node->first);
    return;
  }
  select_median(t, dim, first, count, count / 2);
  leaf_group(t, node, first, count / 2);
  leaf_group(t, node, first + count / 2, count - count / 2);
}

static int leaf_rows_finite(const kdtree_t *t, const node_t *node) {
  for (int i = node->first; i < node->first + node->count; i++)
    for (int j = 0; j < t->cols; j++)
      if (!isfinite(row_at(t, i)[j])) return 0;
  return 1;
}

/* Codes of the rows of leaf id (its box is filled); sets its step, its
 * groups and their code boxes. */
static void leaf_encode(kdtree_t *t, int id) {
  node_t *node = &t->nodes[id];
  const float *lo = node_lo(t, id), *hi = lo + t->stride;
  double width = 0.0;
  for (int j = 0; j < t->cols; j++)
    if ((double)hi[j] - lo[j] > width) width = (double)hi[j] - lo[j];
  /* Rounded up: every (x - lo) / step stays at most 255. */
  node->step = (float)(width / 255.0 * (1.0 + 1e-6));
  /* A step near the bottom of the floats would overflow 1 / step, and a row
   * that is not finite (a database file may hold one) has no cell: no codes
   * then (the rows are all checked exactly, as brute force does). */
  if (!(node->step >= 1e-30f && node->step < INFINITY) || !leaf_rows_finite(t, node)) node->step = 0.0f;
  /* In doubles: a cell may be off by 1e-15 of a step, far inside CODE_SLACK. */
  double inv = node->step > 0.0f ? 1.0 / node->step : 0.0;
  for (int i = node->first; i < node->first + node->count; i++) {
    const float *row = row_at(t, i);
    uint8_t *code = t->codes + (size_t)i * (size_t)t->stride;
    for (int j = 0; j < t->stride; j++) {
      double c = j < t->cols && inv > 0.0 ? floor(((double)row[j] - lo[j]) * inv) : 0.0;
      code[j] = (uint8_t)(c < 0.0 ? 0 : c > 255.0 ? 255 : c);
    }
  }
  int first = node->first;
  for (int g = 0; g < node->ngroups; g++) {
    uint8_t *glo = t->groups + ((size_t)id * MAX_GROUPS + (size_t)g) * 2 * (size_t)t->stride, *ghi = glo + t->stride;
    memset(glo, 255, (size_t)t->stride), memset(ghi, 0, (size_t)t->stride);
    for (int i = first; i < node->first + node->group_end[g]; i++) {
      const uint8_t *code = t->codes + (size_t)i * (size_t)t->stride;
      for (int j = 0; j < t->stride; j++)
        glo[j] = code[j] < glo[j] ? code[j] : glo[j], ghi[j] = code[j] > ghi[j] ? code[j] : ghi[j];
    }
    first = node->first + node->group_end[g];
  }
}

/* 1 when the AVX2 paths may run: the CPU has AVX2 and ANIM_SEARCH_NO_AVX2
 * is unset (the tests set it to check the portable paths on this CPU). */
static int avx2_enabled(void) {
#if defined(HAVE_AVX2_PATH)
  const char *off = getenv("ANIM_SEARCH_NO_AVX2");
  if (off && *off && strcmp(off, "0")) return 0;
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") != 0;
#else
  return 0;
#endif
}

typedef struct {
  int id, desc, first, count, depth;
} subtree_task_t;

typedef struct {
  kdtree_t *t;
  subtree_task_t *tasks;
  int ntasks, depth; /* nodes at depth become tasks (cut on the calling thread) */
} builder_t;

/* Builds node id at depth and below (its descendants' ids from desc on); with cut, the nodes at b->depth are
 * left to tasks instead (the top levels, on the calling thread). */
static void build_node(builder_t *b, int id, int desc, int first, int count, int depth, int cut) {
  if (cut && depth == b->depth && count > LEAF_ROWS) {
    b->tasks[b->ntasks++] = (subtree_task_t){id, desc, first, count, depth};
    return;
  }
  kdtree_t *t = b->t;
  int far = node_fill(t, id, first, count, depth);
  if (!node_split(t, id, far)) {
    t->nodes[id].ngroups = 0;
    if (count <= LEAF_ROWS) leaf_group(t, &t->nodes[id], first, count); /* else its rows are all equal: no codes */
    leaf_encode(t, id);
    return;
  }
  /* The children at desc and desc + 1; their descendants' blocks after them (subtree_nodes). */
  int mid = count / 2;
  t->nodes[id].child = desc;
  build_node(b, desc, desc + 2, first, mid, depth + 1, cut);
  build_node(b, desc + 1, desc + 1 + subtree_nodes(mid), first + mid, count - mid, depth + 1, cut);
}

static void run_subtree(void *arg, int i) {
  builder_t *b = arg;
  const subtree_task_t *task = &b->tasks[i];
  build_node(b, task->id, task->desc, task->first, task->count, task->depth, 0);
}

/* ---- search -------------------------------------------------------------------------- */

/* The box bound (anim_box_distance); it may stop early once the cost is over
 * limit (the partial sum is then over too, and the node is skipped). n is a
 * multiple of 8. */
static float box_bound(const float *q, const float *lo, const float *hi, int n, float transition_cost, float limit) {
  anim_search_lanes_t s = {{0.0f, 0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 0.0f}};
  for (int j = 0; j < n; j += 8) {
    anim_box_lanes_add(&s, q, lo, hi, j);
    if ((j & 15) == 8 && j + 8 < n) {
      float partial = anim_search_lanes_sum(s);
      if (transition_cost + partial > limit) return partial;
    }
  }
  return anim_search_lanes_sum(s);
}

/* (|q - c| - r)^2 when q is outside the sphere, else 0: no row x within r of
 * c is nearer (triangle inequality). Against rounding: the float |q - c|^2
 * and the float |q - x|^2 the cost is made of are each within (cols + 3)
 * 2^-24 (relative) of their exact values (a sum of non-negative terms, in
 * any order), so shrinking |q - c|^2 and the result by SPHERE_SHRINK, far
 * more than that, keeps the bound at or below the cost computed for any row. */
static inline float sphere_bound_of(float dc, float radius) { /* dc: the float |q - c|^2, summed in any order */
  float s = sqrtf(dc * (1.0f - SPHERE_SHRINK)) - radius;
  return s > 0.0f ? s * s * (1.0f - SPHERE_SHRINK) : 0.0f;
}

/* The same around the centre of the box [lo, hi] (node_centre), over n dims. */
static float sphere_bound(const float *q, const float *lo, const float *hi, float radius, int n) {
  float dc = 0.0f;
  for (int j = 0; j < n; j++) {
    float d = q[j] - node_centre(lo[j], hi[j]);
    dc += d * d;
  }
  return sphere_bound_of(dc, radius);
}

/* The larger of the two bounds; the sphere is tried only when the box does
 * not already prune. q is padded to stride. */
static float node_bound(const kdtree_t *t, const float *q, int id, float transition_cost, float limit) {
  const float *lo = node_lo(t, id), *hi = lo + t->stride;
  float box = box_bound(q, lo, hi, t->stride, transition_cost, limit);
  if (transition_cost + box > limit) return box;
  float sphere = sphere_bound(q, lo, hi, t->nodes[id].radius, t->stride);
  return sphere > box ? sphere : box;
}

#if defined(HAVE_AVX2_PATH)
typedef float v8f_t __attribute__((vector_size(32)));
typedef int32_t v8i_t __attribute__((vector_size(32)));

/* anim_search_lanes_sum for eight lanes in one vector: the same additions. */
__attribute__((target("avx2"))) static inline float lanes8_sum(v8f_t s) {
  return ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]));
}

__attribute__((target("avx2"))) static inline v8f_t v8_load(const float *p) {
  v8f_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

/* node_bound with AVX2, both bounds in one pass over the box: the box
 * bound's terms in the same eight lanes and the same order (so the same
 * bits); the sphere's |q - c|^2 in any order (its margin covers any), the
 * centre by node_centre's operations (the same bits as the build's). */
__attribute__((target("avx2"))) static float node_bound_avx2(const kdtree_t *t, const float *q, int id,
                                                             float transition_cost, float limit) {
  int n = t->stride;
  const float *lo = node_lo(t, id), *hi = lo + n;
  v8f_t s = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f}, d2 = s;
  v8f_t half = {0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f};
  for (int j = 0; j < n; j += 8) {
    v8f_t x = v8_load(q + j), l = v8_load(lo + j), h = v8_load(hi + j);
    v8i_t below = (v8i_t)(l - x) & (x < l), above = (v8i_t)(x - h) & (x > h);
    v8f_t e = (v8f_t)(below | above), d = x - (half * l + half * h);
    s += e * e, d2 += d * d;
    if ((j & 15) == 8 && j + 8 < n) {
      float partial = lanes8_sum(s);
      if (transition_cost + partial > limit) return partial;
    }
  }
  float box = lanes8_sum(s), radius = t->nodes[id].radius;
  if (transition_cost + box > limit || !(radius < INFINITY)) return box;
  float sphere = sphere_bound_of(lanes8_sum(d2), radius);
  return sphere > box ? sphere : box;
}
#endif

/* The fastest paths this CPU runs. */
static void paths_pick(kdtree_t *t) {
  int avx2 = avx2_enabled();
  t->code_distances = anim_code_distances_for(avx2), t->node_bound = node_bound;
#if defined(HAVE_AVX2_PATH)
  if (avx2) t->node_bound = node_bound_avx2;
#endif
}

/* Skip a node whose bound beats nothing: over the k-th best, or tied with it
 * while every frame below is higher than the k-th best's (ties go to lower frames). */
static int node_skippable(const anim_topk_t *topk, const node_t *node, float cost_bound) {
  float limit = anim_topk_threshold(topk);
  if (cost_bound > limit) return 1;
  return cost_bound == limit && topk->count == topk->k && node->min_frame > topk->heap[0].frame;
}

/* Row i's exact cost offered to the top-k when it is a candidate; 1 when it
 * entered (*limit is then the new threshold). */
static int leaf_row(const kdtree_t *t, const anim_search_query_t *q, const float *features, anim_topk_t *topk, int i,
                    float *limit) {
  const row_meta_t *m = &t->meta[i];
  int frame = m->frame;
  if (!anim_search_candidate_in(q, frame, m->stop, m->tag_mask)) return 0;
  topk->work.exact_rows++;
  /* The original row, as brute force computes it: the same bits. */
  const float *x = features + (size_t)frame * (size_t)t->cols;
  float dist = anim_search_distance_bounded(q->query, x, t->cols, q->transition_cost, *limit);
  float cost = q->transition_cost + dist;
  if (cost > *limit) return 0;
  anim_topk_push(topk, frame, cost);
  *limit = anim_topk_threshold(topk);
  return 1;
}

/* Leaf id's groups in order of their code boxes' distance from a (order),
 * and those distances (dist, by group). Groups nearest in codes first, and
 * in each its row nearest in codes first (group_rows): that row is most often
 * the leaf's best, and the limit it sets rules out most of the others before
 * their exact costs are computed. */
static void groups_nearest_first(const kdtree_t *t, int id, const int16_t *a, int32_t *dist, int *order) {
  for (int g = 0; g < t->nodes[id].ngroups; g++) {
    const uint8_t *glo = t->groups + ((size_t)id * MAX_GROUPS + (size_t)g) * 2 * (size_t)t->stride;
    dist[g] = anim_codes_group_distance(a, glo, glo + t->stride, t->stride);
    int at = g;
    for (; at > 0 && dist[order[at - 1]] > dist[g]; at--) order[at] = order[at - 1];
    order[at] = g;
  }
}

/* Rows [first, end) of a coded leaf: their code distances at once, then the
 * exact cost of each the codes cannot rule out, the nearest in codes first
 * (one pass finds them: most often none, and then it is all there is). */
static void group_rows(const kdtree_t *t, const anim_search_query_t *q, const float *features, anim_topk_t *topk,
                       const node_t *node, int first, int end, const int16_t *a, float *limit, int32_t *code_limit) {
  int32_t dist[LEAF_ROWS]; /* a group of equal rows may fill the leaf (leaf_group) */
  int candidates[LEAF_ROWS], ncandidates = 0, nearest = 0;
  topk->work.rows += end - first;
  t->code_distances(a, t->codes + (size_t)first * (size_t)t->stride, t->stride, end - first, dist);
  for (int i = 0; i < end - first; i++) {
    if (dist[i] > *code_limit) continue;
    if (ncandidates == 0 || dist[i] < dist[candidates[nearest]]) nearest = ncandidates;
    candidates[ncandidates++] = i;
  }
  for (int c = ncandidates > 0 ? -1 : 0; c < ncandidates; c++) { /* c = -1: the nearest, then the others in order */
    int i = candidates[c < 0 ? nearest : c];
    if (c == nearest || dist[i] > *code_limit) continue;
    if (leaf_row(t, q, features, topk, first + i, limit))
      *code_limit = anim_codes_limit(*limit, q->transition_cost, node->step, t->cols);
  }
}

/* qp: the query padded with zeros to stride; features: the original rows. */
static void search_leaf(const kdtree_t *t, const anim_search_query_t *q, const float *qp, const float *features,
                        anim_topk_t *topk, int id) {
  const node_t *node = &t->nodes[id];
  /* Every line of the leaf's codes at once: the misses overlap instead of queueing. */
  const char *line = (const char *)(t->codes + (size_t)node->first * (size_t)t->stride),
             *last = (const char *)(t->codes + (size_t)(node->first + node->count) * (size_t)t->stride);
  for (; line < last; line += 64) __builtin_prefetch(line);
  topk->work.leaves++;
  int16_t a[ANIM_MAX_FEATURE_DIMS];
  if (node->step > 0.0f) anim_codes_query(node_lo(t, id), node->step, qp, t->cols, t->stride, a);
  float limit = anim_topk_threshold(topk);
  int32_t code_limit = anim_codes_limit(limit, q->transition_cost, node->step, t->cols);
  int coded = node->step > 0.0f;
  if (!coded) {
    /* A leaf of equal rows (any number): each row's exact cost. */
    topk->work.rows += node->count;
    for (int i = node->first; i < node->first + node->count; i++)
      leaf_row(t, q, features, topk, i, &limit);
    return;
  }
  int32_t group_dist[MAX_GROUPS];
  int order[MAX_GROUPS];
  groups_nearest_first(t, id, a, group_dist, order);
  for (int o = 0; o < node->ngroups && group_dist[order[o]] <= code_limit; o++) {
    int g = order[o];
    group_rows(t, q, features, topk, node, node->first + (g > 0 ? node->group_end[g - 1] : 0),
               node->first + node->group_end[g], a, &limit, &code_limit);
  }
}

/* Asking for nodes ahead pays only when they miss the caches: measured, an
 * index of 0.4 and 2 MiB (6,044 and 30,220 frames) 2-4% slower with it, 19
 * MiB (302,200) the same, 180 MiB (3M) 12% faster. The caches' own sizes
 * would be the measure, but glibc reports this VM's L3 as 384 MiB. */
#define PREFETCH_MIN_BYTES ((size_t)16 << 20)

/* Starts the misses of what opening node id reads first: its children's
 * bounds (one block) and records. Always inlined: as a function of its own,
 * GCC finds it has no effect (a prefetch has none it can see), and drops
 * every call to it. */
static inline __attribute__((always_inline)) void node_prefetch_children(const kdtree_t *t, int id) {
  int child = t->nodes[id].child;
  if (!t->prefetch || child < 0) return;
  const char *b = (const char *)node_lo(t, child);
  for (int j = 0; j < 4 * t->stride * (int)sizeof(float); j += 64) __builtin_prefetch(b + j);
  __builtin_prefetch(&t->nodes[child]), __builtin_prefetch(&t->nodes[child + 1]);
  for (int j = 0; j < 2; j++) {
    const char *u = (const char *)(t->split + (size_t)(child + j) * (size_t)t->stride);
    __builtin_prefetch(u), __builtin_prefetch(u + 64);
  }
}

static void search_node(const kdtree_t *t, const anim_search_query_t *q, const float *qp, const float *features,
                        anim_topk_t *topk, int id, float bound) {
  const node_t *node = &t->nodes[id];
  if (node_skippable(topk, node, q->transition_cost + bound)) return;
  if (node->child < 0) {
    search_leaf(t, q, qp, features, topk, id);
    return;
  }
  float limit = anim_topk_threshold(topk);
  int left = node->child, right = left + 1;
  float bl = t->node_bound(t, qp, left, q->transition_cost, limit);
  float br = t->node_bound(t, qp, right, q->transition_cost, limit);
  topk->work.nodes += 2;
  /* The children's own children, read next (the first's at once, the second's
   * once the first's subtree is done), unless the child is already ruled out. */
  if (q->transition_cost + bl <= limit) node_prefetch_children(t, left);
  if (q->transition_cost + br <= limit) node_prefetch_children(t, right);
  /* The query's side of the split first: a good k-th best early rules out more of the rest. */
  const float *u = t->split + (size_t)id * (size_t)t->stride;
  float side = -node->cut;
  for (int j = 0; j < t->cols; j++) side += qp[j] * u[j];
  if (side < 0.0f) {
    search_node(t, q, qp, features, topk, left, bl);
    search_node(t, q, qp, features, topk, right, br);
  } else {
    search_node(t, q, qp, features, topk, right, br);
    search_node(t, q, qp, features, topk, left, bl);
  }
}

static void scan(const anim_search_index_t *index, const anim_search_query_t *q, anim_topk_t *topk) {
  const kdtree_t *t = index->impl;
  float qp[ANIM_MAX_FEATURE_DIMS] = {0.0f};
  memcpy(qp, q->query, (size_t)t->cols * sizeof(float));
  topk->work.nodes++;
  node_prefetch_children(t, 0); /* below the root, each node's are asked for by its parent */
  search_node(t, q, qp, index->data.features, topk, 0,
              t->node_bound(t, qp, 0, q->transition_cost, anim_topk_threshold(topk)));
}

int anim_search_kdtree_init(anim_search_index_t *index, const anim_task_runner_t *runner, char *err, int errlen) {
  const anim_search_data_t *d = &index->data;
  kdtree_t *t = calloc(1, sizeof *t);
  if (!t) return ANIM_ENOMEM;
  t->cols = d->cols;
  paths_pick(t);
  t->stride = (d->cols + 7) & ~7;
  t->nnodes = subtree_nodes(d->rows);
  t->nodes = malloc((size_t)t->nnodes * sizeof *t->nodes);
  t->bounds = malloc((size_t)t->nnodes * 2 * (size_t)t->stride * sizeof(float));
  t->rows = calloc((size_t)d->rows * (size_t)t->stride, sizeof(float));
  t->keys = malloc((size_t)d->rows * sizeof(float));
  t->split = malloc((size_t)t->nnodes * (size_t)t->stride * sizeof(float));
  t->meta = malloc((size_t)d->rows * sizeof *t->meta);
  t->codes = malloc((size_t)d->rows * (size_t)t->stride);
  t->groups = malloc((size_t)t->nnodes * MAX_GROUPS * 2 * (size_t)t->stride);
  /* Depth whose 2^depth nodes give every thread TASKS_PER_THREAD subtrees. */
  builder_t b = {t, NULL, 0, 0};
  while ((1 << b.depth) < TASKS_PER_THREAD * anim_task_runner_threads(runner) && b.depth < 16) b.depth++;
  if (anim_task_runner_threads(runner) == 1 || d->rows < PARALLEL_MIN_ROWS) b.depth = 0; /* one task: the whole tree */
  b.tasks = malloc(((size_t)1 << b.depth) * sizeof *b.tasks);
  if (!t->nodes || !t->bounds || !t->rows || !t->keys || !t->split || !t->codes || !t->groups || !t->meta || !b.tasks) {
    free(b.tasks);
    kdtree_free(t);
    return ANIM_ENOMEM;
  }
  for (int i = 0; i < d->rows; i++) {
    memcpy(t->rows + (size_t)i * (size_t)t->stride, d->features + (size_t)i * (size_t)d->cols,
           (size_t)d->cols * sizeof(float));
    int r = index->row_range[i];
    t->meta[i] = (row_meta_t){i, r < 0 ? -1 : d->ranges[r].stop, r < 0 ? 0u : d->ranges[r].tag_mask};
  }
  build_node(&b, 0, 1, 0, d->rows, 0, 1);
  anim_task_run(runner, run_subtree, &b, b.ntasks);
  free(b.tasks);
  /* Queries read the codes, and the original rows for exact costs. */
  free(t->rows), free(t->keys);
  t->rows = NULL, t->keys = NULL;
  index->impl = t;
  index->free_impl = kdtree_free;
  index->scan = scan;
  size_t bytes = (size_t)t->nnodes * (sizeof(node_t) + 2 * (size_t)t->stride * sizeof(float)) +
                 (size_t)d->rows * ((size_t)t->stride + sizeof(row_meta_t)) +
                 (size_t)t->nnodes * MAX_GROUPS * 2 * (size_t)t->stride +
                 (size_t)t->nnodes * (size_t)t->stride * sizeof(float);
  index->memory += bytes;
  t->prefetch = bytes > PREFETCH_MIN_BYTES;
  return 0;
}
