/*
 * bench_search.c: `animbench search`, motion-matching search latency.
 *
 *   animbench search [--shared DIR] [--sizes 6k,30k,300k,3m] [--queries N] [--k K] [--json FILE]
 *                    [--schema default|wide] [--methods brute,boxes,kdtree,faiss-flat,nanoflann]
 *                    [--build-threads N]
 *
 * The database is the real one (all Bandai Namco clips at 60 Hz, mirrored,
 * the default 27-dim schema, or the 48-dim wide one: feet and hips positions
 * and velocities, the feet's inertialization term of 000_*, the trajectory
 * every 10 frames over the next second), and larger ones tiled from its features with
 * Gaussian noise of 0.05 (normalized units) per tile. Queries: N real rows
 * plus Gaussian noise of 0.3, the same set at every size. Every method runs
 * in the same process on the same features: brute force, the seed's boxes,
 * this project's k-d tree, FAISS IndexFlatL2 (one thread) and nanoflann.
 * Reports median and p99 microseconds per query, queries per second, build
 * time, index memory and mismatches against brute force (ours: frame and
 * cost; the peers: frame, since they compute distances another way).
 * Without the shared data it falls back to the procedural database and says so.
 * The k-d tree is built twice: on one thread ("build ms") and on
 * --build-threads pthreads (default 2, "build par"; the same tree).
 * --methods runs a subset (brute force always runs when another method's
 * mismatches are to be counted; without it they print as -1).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "bench_util.h"
#include "anim_error.h"
#include "offline/import.h"
#include "database/feature.h"
#include "peers.h"
#include "offline/procgen.h"
#include "search/search.h"
#include "task_threads.h"

#define MAX_SIZES 8

typedef struct {
  float *x;
  int rows, cols;
  anim_range_t *ranges;
  int nranges;
} matrix_t;

static unsigned rng = 2463534242u;
static float gaussian(void) {
  return sqrtf(-2.0f * logf(bench_uniform(&rng))) * cosf(2.0f * ANIM_PI * bench_uniform(&rng));
}

/* The wide schema: the default's three bones (feet, hips) with positions and
 * velocities each, the feet's inertialization term (000_*: 2 pos / y + vel /
 * y^2 at the controller's 0.1 s halflife), and the trajectory's positions and
 * directions every 10 frames over the next second: 18 + 6 + 24 = 48 dims. */
static void schema_wide(anim_feature_schema_t *s) {
  anim_feature_schema_t d = *s;
  const char *bones[3] = {d.terms[0].bone, d.terms[1].bone, d.terms[4].bone}; /* the default's order */
  memset(s, 0, sizeof *s);
  for (int kind = 0; kind < 3; kind++)
    for (int b = 0; b < (kind == 2 ? 2 : 3); b++) {
      anim_feature_term_t *t = &s->terms[s->nterms++];
      t->kind = kind == 0 ? ANIM_FEATURE_BONE_POSITION
                          : kind == 1 ? ANIM_FEATURE_BONE_VELOCITY : ANIM_FEATURE_INERTIALIZE;
      snprintf(t->bone, sizeof t->bone, "%s", bones[b]);
      t->weight = kind == 0 ? 0.75f : 1.0f;
      t->halflife = 0.1f;
    }
  for (int kind = 0; kind < 2; kind++) {
    anim_feature_term_t *t = &s->terms[s->nterms++];
    t->kind = kind ? ANIM_FEATURE_TRAJECTORY_DIRECTION : ANIM_FEATURE_TRAJECTORY_POSITION;
    t->weight = kind ? 1.5f : 1.0f;
    t->nsamples = 6;
    for (int k = 0; k < 6; k++) t->frame_offsets[k] = 10 * (k + 1);
  }
}

/* The real database's features, or the procedural one's when shared data is missing. */
static int base_features(const char *shared, int wide, matrix_t *out, char *source, size_t size) {
  char dir[1024], err[512];
  snprintf(dir, sizeof dir, "%s/data/mocap/bandai-namco", shared);
  anim_clip_list_t clips = {NULL, 0, 0};
  anim_bvh_options_t bo = {0.01f};
  anim_database_t db;
  int rc = anim_import_path(&clips, dir, &bo, err, sizeof err);
  if (rc == 0) {
    anim_build_options_t o;
    anim_feature_schema_t schema;
    anim_build_options_default(&o);
    o.mirror = 1;
    rc = anim_database_build(&db, "bandai", clips.clips, clips.count, &o, err, sizeof err);
    if (!rc && !(rc = anim_feature_schema_default(&schema, &db))) {
      if (wide) schema_wide(&schema);
      rc = anim_features_build(&db, &schema, err, sizeof err);
    }
    snprintf(source, size, "Bandai Namco locomotion (%d clips, 60 Hz, mirrored; CC BY-NC 4.0)", clips.count);
  } else {
    fprintf(stderr, "animbench: %s: shared mocap not found, using the procedural database instead\n", dir);
    rc = wide ? ANIM_ENOTFOUND : anim_procgen_database(&db, NULL, err, sizeof err);
    if (wide) snprintf(err, sizeof err, "the wide schema needs the shared mocap");
    snprintf(source, size, "procedural default database (shared mocap not found)");
  }
  anim_clip_list_free(&clips);
  if (rc) {
    fprintf(stderr, "animbench: %s\n", err);
    return rc;
  }
  out->rows = db.features.rows, out->cols = db.features.cols, out->nranges = db.nranges;
  out->x = malloc((size_t)out->rows * (size_t)out->cols * sizeof(float));
  out->ranges = malloc((size_t)db.nranges * sizeof *out->ranges);
  memcpy(out->x, db.features.values, (size_t)out->rows * (size_t)out->cols * sizeof(float));
  memcpy(out->ranges, db.ranges, (size_t)db.nranges * sizeof *out->ranges);
  anim_database_free(&db);
  return 0;
}

/* Tiles base to at least rows rows; every tile after the first gets noise 0.05. */
static matrix_t tile(const matrix_t *base, int rows) {
  int tiles = (rows + base->rows - 1) / base->rows;
  matrix_t m = {NULL, tiles * base->rows, base->cols, NULL, tiles * base->nranges};
  m.x = malloc((size_t)m.rows * (size_t)m.cols * sizeof(float));
  m.ranges = malloc((size_t)m.nranges * sizeof *m.ranges);
  for (int t = 0; t < tiles; t++) {
    size_t off = (size_t)t * (size_t)base->rows * (size_t)base->cols;
    for (size_t i = 0; i < (size_t)base->rows * (size_t)base->cols; i++)
      m.x[off + i] = base->x[i] + (t ? 0.05f * gaussian() : 0.0f);
    for (int r = 0; r < base->nranges; r++) {
      anim_range_t range = base->ranges[r];
      range.start += t * base->rows, range.stop += t * base->rows;
      m.ranges[t * base->nranges + r] = range;
    }
  }
  return m;
}

typedef struct {
  const char *method;
  int frames, dims, queries;
  double median_us, p99_us, qps, build_ms, build_parallel_ms; /* the latter 0 when not measured */
  size_t index_bytes;
  int mismatches;
  /* Ours: what a query did (anim_search_work_t), median and p99 over the queries. */
  int have_work;
  long work_median[4], work_p99[4];
} result_t;

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static int cmp_long(const void *a, const void *b) {
  long x = *(const long *)a, y = *(const long *)b;
  return x < y ? -1 : x > y;
}

/* Median and p99 of each work counter over n queries (work: n rows of 4). */
static void summarize_work(result_t *r, long *work, int n) {
  long *column = malloc((size_t)n * sizeof *column);
  for (int c = 0; c < 4; c++) {
    for (int i = 0; i < n; i++) column[i] = work[(size_t)i * 4 + (size_t)c];
    qsort(column, (size_t)n, sizeof *column, cmp_long);
    r->work_median[c] = column[n / 2], r->work_p99[c] = column[(int)ceil(0.99 * n) - 1];
  }
  r->have_work = 1;
  free(column);
}

static void summarize(result_t *r, double *times, int n) {
  qsort(times, (size_t)n, sizeof *times, cmp_double);
  double total = 0;
  for (int i = 0; i < n; i++) total += times[i];
  r->median_us = times[n / 2] * 1e6;
  r->p99_us = times[(int)ceil(0.99 * n) - 1] * 1e6;
  r->qps = n / total;
}

/* brute, boxes: NULL when not run (their ratio prints as 0). */
static void print_row(const result_t *r, const result_t *brute, const result_t *boxes) {
  printf("%-10s %9d %5d %8.1f %9.1f %10.0f %8.1f x %6.1f x %9.1f %9.1f %9.1f %10d\n", r->method, r->frames, r->dims,
         r->median_us, r->p99_us, r->qps, brute ? brute->median_us / r->median_us : 0.0,
         boxes ? boxes->median_us / r->median_us : 0.0, r->build_ms, r->build_parallel_ms,
         (double)r->index_bytes / (1024.0 * 1024.0), r->mismatches);
}

static const char *const work_names[4] = {"nodes", "leaves", "rows", "exact_rows"};

/* What a query did, median / p99 (ours only). */
static void print_work(const result_t *r) {
  if (!r->have_work) return;
  printf("%-10s %9d   work per query, median / p99:", r->method, r->frames);
  for (int c = 0; c < 4; c++)
    printf(" %s %ld / %ld%s", work_names[c], r->work_median[c], r->work_p99[c], c < 3 ? "," : "\n");
}

static void write_json(FILE *f, const result_t *r) {
  if (!f) return;
  fprintf(f,
          "{\"method\":\"%s\",\"frames\":%d,\"dims\":%d,\"queries\":%d,\"median_us\":%.2f,\"p99_us\":%.2f,"
          "\"qps\":%.1f,\"build_ms\":%.1f,\"build_parallel_ms\":%.1f,\"index_bytes\":%zu,\"mismatches\":%d",
          r->method, r->frames, r->dims, r->queries, r->median_us, r->p99_us, r->qps, r->build_ms, r->build_parallel_ms,
          r->index_bytes, r->mismatches);
  for (int c = 0; r->have_work && c < 4; c++)
    fprintf(f, ",\"%s_median\":%ld,\"%s_p99\":%ld", work_names[c], r->work_median[c], work_names[c], r->work_p99[c]);
  fprintf(f, "}\n");
}

#define NMETHODS 5
static const char *const method_names[NMETHODS] = {"brute", "boxes", "kdtree", "faiss-flat", "nanoflann"};

/* Threads the k-d tree is also built with (its build_parallel_ms); 1: not. */
static int build_threads = 2;

/* One of ours over the queries; ref holds brute force's hits once it ran.
 * The fast method is built twice, on one thread and on build_threads; the
 * queries run on the latter. */
static void bench_ours(const matrix_t *m, anim_search_method_t method, const float *queries, int nq, int k,
                       anim_search_hit_t *ref, int have_ref, double *times, long *work, result_t *r) {
  anim_search_data_t data = {m->x, m->rows, m->cols, m->ranges, m->nranges};
  anim_search_hit_t hits[64];
  char err[256];
  double t0 = bench_now_s();
  anim_search_index_t *index = anim_search_index_build(method, &data, err, sizeof err);
  r->build_ms = (bench_now_s() - t0) * 1e3;
  if (index && method == ANIM_SEARCH_FAST && build_threads > 1) {
    anim_search_index_free(index);
    anim_task_runner_t runner = anim_test_task_runner(build_threads);
    t0 = bench_now_s();
    index = anim_search_index_build_parallel(method, &data, &runner, err, sizeof err);
    r->build_parallel_ms = (bench_now_s() - t0) * 1e3;
  }
  if (!index) {
    fprintf(stderr, "animbench: %s\n", err);
    exit(1);
  }
  r->index_bytes = anim_search_index_memory(index);
  r->mismatches = have_ref || method == ANIM_SEARCH_BRUTE ? 0 : -1;
  for (int i = 0; i < nq; i++) {
    anim_search_query_t q = {queries + (size_t)i * (size_t)m->cols, k, -1, 0.0f, 0, 0, 0};
    int n;
    anim_search_work_t w;
    double s = bench_now_s();
    anim_search_run_work(index, &q, hits, &n, NULL, &w);
    times[i] = bench_now_s() - s;
    long *wi = work + (size_t)i * 4;
    wi[0] = w.nodes, wi[1] = w.leaves, wi[2] = w.rows, wi[3] = w.exact_rows;
    if (method == ANIM_SEARCH_BRUTE) memcpy(ref + (size_t)i * (size_t)k, hits, (size_t)k * sizeof *hits);
    else if (have_ref)
      for (int h = 0; h < k; h++)
        if (hits[h].frame != ref[(size_t)i * (size_t)k + (size_t)h].frame ||
            hits[h].cost != ref[(size_t)i * (size_t)k + (size_t)h].cost) {
          r->mismatches++;
          break;
        }
  }
  summarize(r, times, nq);
  summarize_work(r, work, nq);
  anim_search_index_free(index);
}

/* One peer (FAISS, nanoflann) over the queries; frames compared with ref. */
static void bench_peer(const matrix_t *m, int p, const float *queries, int nq, int k, const anim_search_hit_t *ref,
                       int have_ref, double *times, result_t *r) {
  static const struct {
    void *(*build)(const float *, int, int);
    void (*search)(void *, const float *, int, float *, long *);
    void (*destroy)(void *);
  } peers[2] = {{peer_faiss_build, peer_faiss_search, peer_faiss_free},
                {peer_nanoflann_build, peer_nanoflann_search, peer_nanoflann_free}};
  double t0 = bench_now_s();
  void *handle = peers[p].build(m->x, m->rows, m->cols);
  r->build_ms = (bench_now_s() - t0) * 1e3;
  r->mismatches = have_ref ? 0 : -1;
  float dist[64];
  long index[64];
  for (int i = 0; i < nq; i++) {
    double s = bench_now_s();
    peers[p].search(handle, queries + (size_t)i * (size_t)m->cols, k, dist, index);
    times[i] = bench_now_s() - s;
    for (int h = 0; have_ref && h < k; h++)
      if (index[h] != ref[(size_t)i * (size_t)k + (size_t)h].frame) {
        r->mismatches++;
        break;
      }
  }
  summarize(r, times, nq);
  peers[p].destroy(handle);
}

/* One size: every selected method (bit i of mask: method_names[i]) over the same queries. */
static void bench_size(const matrix_t *m, const float *queries, int nq, int k, unsigned mask, FILE *json) {
  double *times = malloc((size_t)nq * sizeof *times);
  long *work = malloc((size_t)nq * 4 * sizeof *work);
  anim_search_hit_t *ref = malloc((size_t)nq * (size_t)k * sizeof *ref);
  result_t results[NMETHODS];
  int have_ref = (mask & 1u) != 0;
  for (int i = 0; i < NMETHODS; i++) {
    result_t *r = &results[i];
    memset(r, 0, sizeof *r);
    r->method = method_names[i], r->frames = m->rows, r->dims = m->cols, r->queries = nq;
    if (!(mask & (1u << i))) continue;
    if (i < ANIM_SEARCH_METHOD_COUNT)
      bench_ours(m, (anim_search_method_t)i, queries, nq, k, ref, have_ref, times, work, r);
    else
      bench_peer(m, i - ANIM_SEARCH_METHOD_COUNT, queries, nq, k, ref, have_ref, times, r);
  }
  for (int i = 0; i < NMETHODS; i++) {
    if (!(mask & (1u << i))) continue;
    print_row(&results[i], (mask & 1u) ? &results[0] : NULL, (mask & 2u) ? &results[1] : NULL);
    write_json(json, &results[i]);
  }
  for (int i = 0; i < NMETHODS; i++)
    if (mask & (1u << i)) print_work(&results[i]);
  fflush(stdout);
  free(times);
  free(work);
  free(ref);
}

/* "brute,kdtree" -> a mask over method_names; 0 for an unknown name. */
static unsigned parse_methods(const char *text) {
  unsigned mask = 0;
  char buf[256];
  snprintf(buf, sizeof buf, "%s", text);
  for (char *save = NULL, *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
    int found = -1;
    for (int i = 0; i < NMETHODS; i++)
      if (!strcmp(item, method_names[i])) found = i;
    if (found < 0) return 0;
    mask |= 1u << found;
  }
  return mask;
}

static int parse_sizes(const char *text, int *sizes) {
  int n = 0;
  char buf[256];
  snprintf(buf, sizeof buf, "%s", text);
  for (char *save = NULL, *item = strtok_r(buf, ",", &save); item && n < MAX_SIZES; item = strtok_r(NULL, ",", &save)) {
    char *end;
    double v = strtod(item, &end);
    if (*end == 'k' || *end == 'K') v *= 1e3;
    else if (*end == 'm' || *end == 'M') v *= 1e6;
    if (v < 1 || v > 2e7) return -1;
    sizes[n++] = (int)v;
  }
  return n;
}

int bench_search(int argc, char **argv);
int bench_search(int argc, char **argv) {
  const char *shared = "../shared", *json_path = NULL, *size_text = "6k,30k,300k,3m", *schema = "default";
  unsigned mask = (1u << NMETHODS) - 1;
  int nq = 1000, k = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--shared")) shared = argv[i + 1];
    else if (!strcmp(argv[i], "--json")) json_path = argv[i + 1];
    else if (!strcmp(argv[i], "--sizes")) size_text = argv[i + 1];
    else if (!strcmp(argv[i], "--queries")) nq = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--k")) k = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--schema")) schema = argv[i + 1];
    else if (!strcmp(argv[i], "--build-threads")) build_threads = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--methods")) mask = parse_methods(argv[i + 1]);
    else {
      fprintf(stderr, "animbench search: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  int sizes[MAX_SIZES], nsizes = parse_sizes(size_text, sizes);
  int wide = !strcmp(schema, "wide");
  if (nsizes < 1 || nq < 10 || k < 1 || k > 64 || !mask || (!wide && strcmp(schema, "default"))) {
    fprintf(stderr, "animbench search: --sizes like 6k,30k,300k,3m; --queries >= 10; --k 1..64; --schema default|wide; "
                    "--methods from brute,boxes,kdtree,faiss-flat,nanoflann\n");
    return 2;
  }
  matrix_t base;
  char source[160];
  if (base_features(shared, wide, &base, source, sizeof source)) return 1;
  /* The query set: real rows plus noise 0.3, fixed for every size. */
  float *queries = malloc((size_t)nq * (size_t)base.cols * sizeof(float));
  for (int i = 0; i < nq; i++) {
    int row = (int)(bench_uniform(&rng) * (float)base.rows) % base.rows;
    for (int j = 0; j < base.cols; j++)
      queries[(size_t)i * (size_t)base.cols + (size_t)j] =
          base.x[(size_t)row * (size_t)base.cols + (size_t)j] + 0.3f * gaussian();
  }
  FILE *json = json_path ? fopen(json_path, "w") : NULL;
  printf("features: %s, %s schema, %d frames x %d dims; %d queries (real rows + N(0, 0.3)), k = %d, single thread\n",
         source, schema, base.rows, base.cols, nq, k);
  printf("%-10s %9s %5s %8s %9s %10s %10s %8s %9s %9s %9s %10s\n", "method", "frames", "dims", "med us", "p99 us",
         "qps", "vs brute", "vs boxes", "build ms", "build par", "index MiB", "mismatches");
  for (int s = 0; s < nsizes; s++) {
    matrix_t m = sizes[s] <= base.rows ? base : tile(&base, sizes[s]);
    bench_size(&m, queries, nq, k, mask, json);
    if (m.x != base.x) free(m.x), free(m.ranges);
  }
  if (json) fclose(json);
  free(queries);
  free(base.x), free(base.ranges);
  return 0;
}
