/*
 * test_search.c: exact k-nearest search. Invalid input first; then each rule
 * of search.h on hand-made data; then every method against brute force on
 * random data (with heavy ties), on clustered data like the benchmark's
 * tiles (the k-d tree's sphere bounds), at widths with and without padding to
 * the distance kernel's 8 lanes, with indexes built on one thread and on
 * several and with the portable paths instead of AVX2, on leaves of equal
 * rows and of rows one float apart (the k-d tree's leaf codes), on data
 * where the tree's split direction overflows or its sample sees only equal
 * rows, and on real
 * databases, alone and tiled with noise as the benchmark's 3M frames are,
 * with random k, current frame, exclusions and tags; and the order a leaf
 * costs its rows in (nearest in codes first).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "anim_error.h"
#include "offline/procgen.h"
#include "search/search.h"
#include "shared_data.h"
#include "procgen_db.h"
#include "task_threads.h"

/* Threads the fast method's builds use (check_exact builds it both ways). */
static int build_threads = 1;

static anim_search_index_t *build(anim_search_method_t m, const float *x, int rows, int cols, const anim_range_t *r,
                                  int nr) {
  anim_search_data_t d = {x, rows, cols, r, nr};
  char err[128];
  anim_task_runner_t runner = anim_test_task_runner(build_threads);
  anim_search_index_t *index = anim_search_index_build_parallel(m, &d, &runner, err, sizeof err);
  if (!index) fail_msg("build %s: %s", anim_search_method_name(m), err);
  return index;
}

static anim_search_query_t query(const float *q, int k) {
  anim_search_query_t s = {q, k, -1, 0.0f, 0, 0, 0};
  return s;
}

/* ---- invalid input --------------------------------------------------------------------- */

static void test_invalid_data_and_queries(void **state) {
  float x[8] = {0, 0, 1, 1, 2, 2, 3, 3};
  anim_range_t r = {0, 4, 0, "r"};
  char err[128];
  anim_search_data_t none = {NULL, 4, 2, &r, 1}, empty = {x, 0, 2, &r, 1}, wide = {x, 4, 200, &r, 1};
  anim_range_t outside = {0, 5, 0, "r"};
  anim_search_data_t bad_range = {x, 4, 2, &outside, 1};
  assert_null(anim_search_index_build(ANIM_SEARCH_BRUTE, &none, err, sizeof err));
  assert_null(anim_search_index_build(ANIM_SEARCH_BRUTE, &empty, err, sizeof err));
  assert_null(anim_search_index_build(ANIM_SEARCH_FAST, &wide, err, sizeof err));
  assert_null(anim_search_index_build(ANIM_SEARCH_BOXES, &bad_range, err, sizeof err));
  assert_null(anim_search_index_build((anim_search_method_t)7, &bad_range, err, sizeof err));
  for (int m = 0; m < ANIM_SEARCH_METHOD_COUNT; m++) {
    anim_search_index_t *index = build((anim_search_method_t)m, x, 4, 2, &r, 1);
    float q[2] = {0.5f, 0.5f}, nan_q[2] = {NAN, 0};
    anim_search_hit_t hits[4];
    int n;
    anim_search_query_t s = query(q, 0);
    assert_int_equal(anim_search_run(index, &s, hits, &n, NULL), ANIM_EINVAL);
    s.k = ANIM_SEARCH_MAX_K + 1;
    assert_int_equal(anim_search_run(index, &s, hits, &n, NULL), ANIM_EINVAL);
    s = query(nan_q, 1);
    assert_int_equal(anim_search_run(index, &s, hits, &n, NULL), ANIM_ENONFINITE);
    s = query(q, 1);
    s.current_frame = 4;
    assert_int_equal(anim_search_run(index, &s, hits, &n, NULL), ANIM_ERANGE);
    s.current_frame = -1;
    s.ignore_surrounding = -1;
    assert_int_equal(anim_search_run(index, &s, hits, &n, NULL), ANIM_EINVAL);
    s.ignore_surrounding = 0;
    s.transition_cost = -1.0f;
    assert_int_equal(anim_search_run(index, &s, hits, &n, NULL), ANIM_EINVAL);
    s.transition_cost = INFINITY;
    assert_int_equal(anim_search_run(index, &s, hits, &n, NULL), ANIM_ENONFINITE);
    anim_search_index_free(index);
  }
}

/* ---- the rules, on a line of points --------------------------------------------------- */

/* 1-D points at 0, 1, 2, ..., 19 in two ranges [0, 10) and [10, 20), the second tagged. */
static float line[20];
static anim_range_t line_ranges[2] = {{0, 10, 0, "a"}, {10, 20, 1, "b"}};

static void run_all(anim_search_query_t *s, anim_search_hit_t out[][8], int *counts) {
  for (int m = 0; m < ANIM_SEARCH_METHOD_COUNT; m++) {
    anim_search_index_t *index = build((anim_search_method_t)m, line, 20, 1, line_ranges, 2);
    assert_int_equal(anim_search_run(index, s, out[m], &counts[m], NULL), 0);
    anim_search_index_free(index);
  }
}

static void test_rules(void **state) {
  for (int i = 0; i < 20; i++) line[i] = (float)i;
  anim_search_hit_t hits[ANIM_SEARCH_METHOD_COUNT][8];
  int counts[ANIM_SEARCH_METHOD_COUNT];
  float q = 4.2f;
  for (int m = 0; m < ANIM_SEARCH_METHOD_COUNT; m++) {
    anim_search_query_t s = query(&q, 3);
    run_all(&s, hits, counts);
    assert_int_equal(counts[m], 3);
    assert_int_equal(hits[m][0].frame, 4);
    assert_int_equal(hits[m][1].frame, 5);
    assert_int_equal(hits[m][2].frame, 3);
    /* The current frame competes without the transition cost. */
    s.k = 1, s.current_frame = 7, s.transition_cost = 10.0f;
    run_all(&s, hits, counts);
    assert_int_equal(hits[m][0].frame, 7);
    assert_true(fabsf(hits[m][0].cost - 2.8f * 2.8f) < 1e-5f);
    /* Without it the nearest wins, and pays the transition cost. */
    s.transition_cost = 0.5f;
    run_all(&s, hits, counts);
    assert_int_equal(hits[m][0].frame, 4);
    assert_true(fabsf(hits[m][0].cost - (0.5f + 0.2f * 0.2f)) < 1e-5f);
    /* ignore_surrounding hides frames near the current one (but not the current one). */
    s = query(&q, 2);
    s.current_frame = 5, s.ignore_surrounding = 3, s.transition_cost = 0.0f;
    run_all(&s, hits, counts);
    assert_int_equal(hits[m][0].frame, 5);
    assert_int_equal(hits[m][1].frame, 2);
    /* ignore_range_end: the last 6 frames of each range are out. */
    s = query(&q, 1);
    s.ignore_range_end = 6;
    run_all(&s, hits, counts);
    assert_int_equal(hits[m][0].frame, 3);
    /* Tags restrict to ranges carrying them. */
    s = query(&q, 1);
    s.tag_mask = 1;
    run_all(&s, hits, counts);
    assert_int_equal(hits[m][0].frame, 10);
    /* Fewer candidates than k. */
    s = query(&q, 8);
    s.tag_mask = 1, s.ignore_range_end = 5;
    run_all(&s, hits, counts);
    assert_int_equal(counts[m], 5);
  }
  /* Ties: equal costs come by lower frame index. */
  float tie = 5.0f;
  for (int m = 0; m < ANIM_SEARCH_METHOD_COUNT; m++) {
    anim_search_query_t s = query(&tie, 3);
    run_all(&s, hits, counts);
    assert_int_equal(hits[m][0].frame, 5);
    assert_int_equal(hits[m][1].frame, 4);
    assert_int_equal(hits[m][2].frame, 6);
  }
}

/* ---- randomized exactness ------------------------------------------------------------------ */

static float uniform(unsigned *seed) { return (float)rand_r(seed) / (float)RAND_MAX; }
static float gaussian(unsigned *seed) {
  float u = uniform(seed) * 0.999f + 0.0005f, v = uniform(seed);
  return sqrtf(-2.0f * logf(u)) * cosf(2.0f * ANIM_PI * v);
}

/* Random queries (near rows, with noise) against every method; 0 mismatches or fail naming the first. */
static void check_exact(const float *x, int rows, int cols, const anim_range_t *ranges, int nranges, int ntags,
                        int queries, unsigned seed) {
  /* The fast method three times: built on one thread, on three (more tasks
   * than threads, so tasks queue), and with the portable paths
   * (ANIM_SEARCH_NO_AVX2, search.h), in the last two slots. */
  enum { EXTRA = 2, SLOTS = ANIM_SEARCH_METHOD_COUNT + EXTRA };
  static const char *const extra_names[EXTRA] = {"fast (built on 3 threads)", "fast (portable paths)"};
  anim_search_index_t *index[SLOTS];
  for (int m = 0; m < ANIM_SEARCH_METHOD_COUNT; m++)
    index[m] = build((anim_search_method_t)m, x, rows, cols, ranges, nranges);
  build_threads = 3;
  index[ANIM_SEARCH_METHOD_COUNT] = build(ANIM_SEARCH_FAST, x, rows, cols, ranges, nranges);
  build_threads = 1;
  setenv("ANIM_SEARCH_NO_AVX2", "1", 1);
  index[ANIM_SEARCH_METHOD_COUNT + 1] = build(ANIM_SEARCH_FAST, x, rows, cols, ranges, nranges);
  unsetenv("ANIM_SEARCH_NO_AVX2");
  float *q = malloc((size_t)cols * sizeof *q);
  anim_search_hit_t ref[64], got[64];
  for (int i = 0; i < queries; i++) {
    int base = rand_r(&seed) % rows;
    float noise = i % 4 == 0 ? 0.0f : (i % 4 == 1 ? 0.05f : 0.3f);
    for (int j = 0; j < cols; j++) q[j] = x[(size_t)base * (size_t)cols + (size_t)j] + noise * gaussian(&seed);
    anim_search_query_t s = query(q, 1 + rand_r(&seed) % 16);
    if (i % 3 == 0) s.current_frame = rand_r(&seed) % rows;
    if (i % 5 == 0) s.transition_cost = uniform(&seed);
    if (i % 7 == 0) s.ignore_range_end = rand_r(&seed) % 30;
    if (i % 2 == 0) s.ignore_surrounding = rand_r(&seed) % 40;
    if (ntags && i % 6 == 0) s.tag_mask = 1u << (rand_r(&seed) % ntags);
    int nref, n;
    assert_int_equal(anim_search_run(index[0], &s, ref, &nref, NULL), 0);
    for (int m = 1; m < SLOTS; m++) {
      const char *name =
          m < ANIM_SEARCH_METHOD_COUNT ? anim_search_method_name(m) : extra_names[m - ANIM_SEARCH_METHOD_COUNT];
      assert_int_equal(anim_search_run(index[m], &s, got, &n, NULL), 0);
      if (n != nref) fail_msg("query %d (%d cols): %s found %d, brute force %d", i, cols, name, n, nref);
      for (int h = 0; h < n; h++)
        if (got[h].frame != ref[h].frame || got[h].cost != ref[h].cost)
          fail_msg("query %d hit %d (%d cols): %s says frame %d cost %.9g, brute force frame %d cost %.9g", i, h, cols,
                   name, got[h].frame, got[h].cost, ref[h].frame, ref[h].cost);
    }
  }
  free(q);
  for (int m = 0; m < SLOTS; m++) anim_search_index_free(index[m]);
}

static void test_random_data_with_ties(void **state) {
  unsigned seed = 42;
  int rows = 5000, cols = 9;
  float *x = malloc((size_t)rows * (size_t)cols * sizeof *x);
  for (int i = 0; i < rows * cols; i++) x[i] = gaussian(&seed);
  /* Duplicated rows and a coarse grid force exact ties. */
  for (int i = 0; i < rows; i += 10)
    memcpy(x + (size_t)(i + 1) * (size_t)cols, x + (size_t)i * (size_t)cols, (size_t)cols * sizeof *x);
  for (int i = rows / 2; i < rows; i++)
    for (int j = 0; j < cols; j++)
      x[(size_t)i * (size_t)cols + (size_t)j] = roundf(x[(size_t)i * (size_t)cols + (size_t)j] * 2.0f) / 2.0f;
  anim_range_t ranges[5];
  for (int r = 0; r < 5; r++) {
    ranges[r].start = r * 1000, ranges[r].stop = (r + 1) * 1000, ranges[r].tag_mask = 1u << (r % 3);
    snprintf(ranges[r].name, sizeof ranges[r].name, "r%d", r);
  }
  check_exact(x, rows, cols, ranges, 5, 3, 3000, 7);
  free(x);
}

/* The kernel's order (search.h): term j in lane j % 8, lanes added pairwise;
 * zero padding changes no bit; the bounded form is exact under its limit. */
static void test_distance_kernel(void **state) {
  unsigned seed = 5;
  float a[128], b[128], pa[136] = {0}, pb[136] = {0};
  for (int n = 1; n <= 128; n++) {
    for (int j = 0; j < n; j++) a[j] = pa[j] = gaussian(&seed) * 10.0f, b[j] = pb[j] = gaussian(&seed);
    float lane[8] = {0};
    for (int j = 0; j < n; j++) lane[j % 8] += (a[j] - b[j]) * (a[j] - b[j]);
    float expect = ((lane[0] + lane[4]) + (lane[2] + lane[6])) + ((lane[1] + lane[5]) + (lane[3] + lane[7]));
    float got = anim_search_distance(a, b, n);
    if (got != expect) fail_msg("%d dims: kernel %.9g, lanes %.9g", n, got, expect);
    int padded = (n + 7) & ~7;
    assert_true(anim_search_distance(pa, pb, padded) == got);
    for (int j = n; j < padded; j++) pa[j] = pb[j] = 0.0f;
  }
}

/* Clusters of near-copies far from each other, as the benchmark tiles the
 * real features: the sphere bounds prune here, and (at 72,000 rows) several
 * subtree tasks build the tree. Widths 8 (no padding), 27 (the default schema), 48 (the
 * wide one) and 128 (the most), far from the origin too. */
static void test_clustered_data(void **state) {
  static const int widths[4] = {8, 27, 48, 128};
  for (int w = 0; w < 4; w++) {
    unsigned seed = 100u + (unsigned)w;
    /* 72,000 rows at the narrow widths: past the size the tree builds in parallel from. */
    int cols = widths[w], centres = 60, copies = cols <= 27 ? 1200 : 150, rows = centres * copies;
    float *x = malloc((size_t)rows * (size_t)cols * sizeof *x), *c = malloc((size_t)centres * (size_t)cols * sizeof *c);
    float offset = w == 3 ? 1000.0f : 0.0f; /* large values, small differences */
    for (int i = 0; i < centres * cols; i++) c[i] = offset + gaussian(&seed);
    for (int i = 0; i < rows; i++)
      for (int j = 0; j < cols; j++)
        x[(size_t)i * (size_t)cols + (size_t)j] = c[(size_t)(i % centres) * (size_t)cols + (size_t)j] +
                                                  (i < centres ? 0.0f : 0.05f * gaussian(&seed));
    anim_range_t ranges[3];
    for (int r = 0; r < 3; r++) {
      ranges[r].start = r * (rows / 3), ranges[r].stop = (r + 1) * (rows / 3), ranges[r].tag_mask = 1u << r;
      snprintf(ranges[r].name, sizeof ranges[r].name, "r%d", r);
    }
    check_exact(x, rows, cols, ranges, 3, 3, 600, 17u + (unsigned)w);
    free(x), free(c);
  }
}

/* Leaves whose rows are all equal (more than a leaf's worth: no codes), rows
 * one float apart (codes over the narrowest boxes, queries far outside them
 * in code units), and ordinary rows, at 27 dims. */
static void test_equal_and_adjacent_rows(void **state) {
  unsigned seed = 77;
  int cols = 27, rows = 3000;
  float *x = malloc((size_t)rows * (size_t)cols * sizeof *x);
  for (int i = 0; i < rows; i++)
    for (int j = 0; j < cols; j++) {
      float v = 0.5f + 0.01f * (float)j;
      float *out = &x[(size_t)i * (size_t)cols + (size_t)j];
      if (i < 1000) *out = v;                                                            /* equal */
      else if (i < 2000) *out = rand_r(&seed) % 2 ? nextafterf(v, 2.0f) : nextafterf(v, 0.0f); /* one float apart */
      else *out = gaussian(&seed);
    }
  anim_range_t ranges[3];
  for (int r = 0; r < 3; r++) {
    ranges[r].start = r * 1000, ranges[r].stop = (r + 1) * 1000, ranges[r].tag_mask = 1u << r;
    snprintf(ranges[r].name, sizeof ranges[r].name, "r%d", r);
  }
  check_exact(x, rows, cols, ranges, 3, 3, 1500, 23);
  free(x);
}

/* Rows that are not finite (a database file may hold them: fuzz_dbfile
 * found one): the fast method keeps no leaf codes for their leaves and still
 * answers as brute force does. */
static void test_rows_not_finite(void **state) {
  unsigned seed = 91;
  int cols = 27, rows = 3000;
  float *x = malloc((size_t)rows * (size_t)cols * sizeof *x);
  for (int i = 0; i < rows * cols; i++) x[i] = gaussian(&seed);
  for (int i = 0; i < rows; i += 97) x[(size_t)i * (size_t)cols + (size_t)(i % cols)] = i % 2 ? INFINITY : -INFINITY;
  anim_range_t ranges[1] = {{0, 3000, 1, "all"}};
  anim_search_index_t *brute = build(ANIM_SEARCH_BRUTE, x, rows, cols, ranges, 1);
  anim_search_index_t *fast = build(ANIM_SEARCH_FAST, x, rows, cols, ranges, 1);
  float q[27];
  for (int i = 0; i < 500; i++) {
    int base = 1 + rand_r(&seed) % (rows - 1);
    if (base % 97 == 0) base++; /* queries stay finite */
    for (int j = 0; j < cols; j++) q[j] = x[(size_t)base * (size_t)cols + (size_t)j] + 0.3f * gaussian(&seed);
    anim_search_query_t s = query(q, 1 + rand_r(&seed) % 8);
    anim_search_hit_t ref[8], got[8];
    int nref, n;
    assert_int_equal(anim_search_run(brute, &s, ref, &nref, NULL), 0);
    assert_int_equal(anim_search_run(fast, &s, got, &n, NULL), 0);
    assert_int_equal(n, nref);
    for (int h = 0; h < n; h++) {
      assert_int_equal(got[h].frame, ref[h].frame);
      assert_memory_equal(&got[h].cost, &ref[h].cost, sizeof got[h].cost);
    }
  }
  anim_search_index_free(brute), anim_search_index_free(fast);
  free(x);
}

/* Where the k-d tree's split direction (two far rows, refined on a sample)
 * cannot be had: a root whose sampled rows (every fourth of 5,000) are all
 * equal while the others are not, and rows so large (1e37, both signs) that
 * their differences, directions and keys overflow to infinity or NaN. The
 * tree falls back to the widest dimension or partitions by whatever keys it
 * has; either way it answers as brute force does (costs overflow alike). */
static void test_split_degenerate(void **state) {
  unsigned seed = 53;
  int cols = 27, rows = 5000;
  float *x = malloc((size_t)rows * (size_t)cols * sizeof *x);
  anim_range_t ranges[2] = {{0, 2500, 1, "a"}, {2500, 5000, 2, "b"}};
  for (int i = 0; i < rows; i++)
    for (int j = 0; j < cols; j++) x[(size_t)i * (size_t)cols + (size_t)j] = i % 4 ? gaussian(&seed) : 0.25f;
  check_exact(x, rows, cols, ranges, 2, 2, 600, 59);
  for (int i = 0; i < rows * cols; i++) x[i] = (i % 3 ? 1e37f : -1e37f) * (1.0f + 0.5f * uniform(&seed));
  check_exact(x, rows, cols, ranges, 2, 2, 300, 61);
  free(x);
}

/* The benchmark's large databases: the real features tiled 11 times (66,484
 * rows, past the parallel build's threshold), each tile after the first with
 * N(0, 0.05) noise. */
static void test_tiled_bandai_features(void **state) {
  anim_database_t db;
  if (!anim_test_bandai_database(&db)) return;
  enum { TILES = 11 };
  int base = db.features.rows, cols = db.features.cols, rows = TILES * base, nranges = TILES * db.nranges;
  float *x = malloc((size_t)rows * (size_t)cols * sizeof *x);
  anim_range_t *ranges = malloc((size_t)nranges * sizeof *ranges);
  unsigned seed = 31;
  for (int t = 0; t < TILES; t++) {
    for (size_t i = 0; i < (size_t)base * (size_t)cols; i++)
      x[(size_t)t * (size_t)base * (size_t)cols + i] = db.features.values[i] + (t ? 0.05f * gaussian(&seed) : 0.0f);
    for (int r = 0; r < db.nranges; r++) {
      anim_range_t range = db.ranges[r];
      range.start += t * base, range.stop += t * base;
      ranges[t * db.nranges + r] = range;
    }
  }
  check_exact(x, rows, cols, ranges, nranges, db.ntags, 800, 29);
  free(x), free(ranges);
  anim_database_free(&db);
}

/* A runner with one thread, or none, builds on the calling thread. */
static void test_task_runner(void **state) {
  assert_int_equal(anim_task_runner_threads(NULL), 1);
  anim_task_runner_t one = anim_test_task_runner(1), four = anim_test_task_runner(4), broken = {4, NULL, NULL};
  assert_int_equal(anim_task_runner_threads(&one), 1);
  assert_int_equal(anim_task_runner_threads(&four), 4);
  assert_int_equal(anim_task_runner_threads(&broken), 1);
}

static void test_procedural_database(void **state) {
  anim_database_t db;
  anim_test_procgen(&db);
  check_exact(db.features.values, db.features.rows, db.features.cols, db.ranges, db.nranges, db.ntags, 3000, 11);
  anim_database_free(&db);
}

/* The procedural database and the fast method's index over its features. */
static anim_search_index_t *procgen_fast_index(anim_database_t *out_db) {
  anim_test_procgen(out_db);
  return build(ANIM_SEARCH_FAST, out_db->features.values, out_db->features.rows, out_db->features.cols,
               out_db->ranges, out_db->nranges);
}

/* A batch answers exactly what its queries answer one by one; a bad query
 * fails alone. */
static void test_batch(void **state) {
  anim_database_t db;
  anim_search_index_t *index = procgen_fast_index(&db);
  enum { N = 50, K = 6 };
  anim_search_query_t queries[N];
  for (int i = 0; i < N; i++) {
    queries[i] = query(db.features.values + (size_t)(i * 37) * (size_t)db.features.cols, 1 + i % K);
    queries[i].current_frame = i * 37, queries[i].ignore_surrounding = 15;
  }
  queries[7].k = K + 1; /* over max_k: this one fails, the others still answer */
  anim_search_hit_t hits[N * K], one[K + 1];
  int counts[N], n;
  assert_int_equal(anim_search_batch(index, queries, N, K, hits, counts, NULL), ANIM_EINVAL);
  assert_int_equal(counts[7], 0);
  for (int i = 0; i < N; i++) {
    if (i == 7) continue;
    assert_int_equal(anim_search_run(index, &queries[i], one, &n, NULL), 0);
    assert_int_equal(counts[i], n);
    assert_memory_equal(hits + i * K, one, (size_t)n * sizeof *one);
  }
  anim_search_index_free(index);
  anim_database_free(&db);
}

/* A leaf's rows nearest in codes have their exact costs first: a query
 * equal to a row finds it (cost 0) before costing the leaf's other rows, and
 * the rest are ruled out by their codes. Visiting the rows in their stored
 * order costed about ten times the leaves opened here. */
static void test_nearest_codes_costed_first(void **state) {
  anim_database_t db;
  anim_search_index_t *index = procgen_fast_index(&db);
  long leaves = 0, exact_rows = 0;
  for (int row = 0; row < db.features.rows; row += 7) {
    anim_search_query_t q = query(db.features.values + (size_t)row * (size_t)db.features.cols, 1);
    anim_search_hit_t hit;
    anim_search_work_t work;
    int n;
    assert_int_equal(anim_search_run_work(index, &q, &hit, &n, NULL, &work), 0);
    assert_int_equal(n, 1);
    assert_true(hit.cost == 0.0f && hit.frame <= row);
    leaves += work.leaves, exact_rows += work.exact_rows;
  }
  if (exact_rows >= 2 * leaves) fail_msg("%ld exact costs for %ld leaves opened", exact_rows, leaves);
  anim_search_index_free(index);
  anim_database_free(&db);
}

/* Real motion capture: all 14 Bandai Namco clips, 60 Hz, mirrored. */
static void test_bandai_database(void **state) {
  anim_database_t db;
  if (!anim_test_bandai_database(&db)) return;
  check_exact(db.features.values, db.features.rows, db.features.cols, db.ranges, db.nranges, db.ntags, 5000, 13);
  anim_database_free(&db);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_invalid_data_and_queries),
      cmocka_unit_test(test_rules),
      cmocka_unit_test(test_distance_kernel),
      cmocka_unit_test(test_random_data_with_ties),
      cmocka_unit_test(test_clustered_data),
      cmocka_unit_test(test_equal_and_adjacent_rows),
      cmocka_unit_test(test_rows_not_finite),
      cmocka_unit_test(test_split_degenerate),
      cmocka_unit_test(test_task_runner),
      cmocka_unit_test(test_procedural_database),
      cmocka_unit_test(test_batch),
      cmocka_unit_test(test_nearest_codes_costed_first),
      cmocka_unit_test(test_bandai_database),
      cmocka_unit_test(test_tiled_bandai_features),
  };
  return cmocka_run_group_tests_name("search", tests, NULL, NULL);
}
