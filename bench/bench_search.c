/*
 * bench_search.c: `animbench search`, motion-matching search latency.
 *
 *   animbench search [--shared DIR] [--sizes 6k,30k,300k,3m] [--queries N] [--k K] [--json FILE]
 *
 * The database is the real one (all Bandai Namco clips at 60 Hz, mirrored,
 * the default 27-dim schema), and larger ones tiled from its features with
 * Gaussian noise of 0.05 (normalized units) per tile. Queries: N real rows
 * plus Gaussian noise of 0.3, the same set at every size. Every method runs
 * in the same process on the same features: brute force, the seed's boxes,
 * this project's k-d tree, FAISS IndexFlatL2 (one thread) and nanoflann.
 * Reports median and p99 microseconds per query, queries per second, build
 * time, index memory and mismatches against brute force (ours: frame and
 * cost; the peers: frame, since they compute distances another way).
 * Without the shared data it falls back to the procedural database and says so.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "bench_util.h"
#include "anim_error.h"
#include "import.h"
#include "feature.h"
#include "peers.h"
#include "procgen.h"
#include "search.h"

#define MAX_SIZES 8

typedef struct {
  float *x;
  int rows, cols;
  anim_range_t *ranges;
  int nranges;
} matrix_t;

static unsigned rng = 2463534242u;
static float gaussian(void) { return sqrtf(-2.0f * logf(bench_uniform(&rng))) * cosf(2.0f * ANIM_PI * bench_uniform(&rng)); }

/* The real database's features, or the procedural one's when shared data is missing. */
static int base_features(const char *shared, matrix_t *out, char *source, size_t size) {
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
    if (!rc && !(rc = anim_feature_schema_default(&schema, &db))) rc = anim_features_build(&db, &schema, err, sizeof err);
    snprintf(source, size, "Bandai Namco locomotion (%d clips, 60 Hz, mirrored; CC BY-NC 4.0)", clips.count);
  } else {
    fprintf(stderr, "animbench: %s: shared mocap not found, using the procedural database instead\n", dir);
    rc = anim_procgen_database(&db, NULL, err, sizeof err);
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
  double median_us, p99_us, qps, build_ms;
  size_t index_bytes;
  int mismatches;
} result_t;

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void summarize(result_t *r, double *times, int n) {
  qsort(times, (size_t)n, sizeof *times, cmp_double);
  double total = 0;
  for (int i = 0; i < n; i++) total += times[i];
  r->median_us = times[n / 2] * 1e6;
  r->p99_us = times[(int)ceil(0.99 * n) - 1] * 1e6;
  r->qps = n / total;
}

static void print_row(const result_t *r, const result_t *brute, const result_t *boxes) {
  printf("%-10s %9d %5d %8.1f %9.1f %10.0f %8.1f x %6.1f x %9.1f %9.1f %10d\n", r->method, r->frames, r->dims,
         r->median_us, r->p99_us, r->qps, brute->median_us / r->median_us, boxes->median_us / r->median_us,
         r->build_ms, (double)r->index_bytes / (1024.0 * 1024.0), r->mismatches);
}

static void write_json(FILE *f, const result_t *r) {
  if (!f) return;
  fprintf(f,
          "{\"method\":\"%s\",\"frames\":%d,\"dims\":%d,\"queries\":%d,\"median_us\":%.2f,\"p99_us\":%.2f,"
          "\"qps\":%.1f,\"build_ms\":%.1f,\"index_bytes\":%zu,\"mismatches\":%d}\n",
          r->method, r->frames, r->dims, r->queries, r->median_us, r->p99_us, r->qps, r->build_ms, r->index_bytes,
          r->mismatches);
}

/* One size: every method over the same queries. */
static void bench_size(const matrix_t *m, const float *queries, int nq, int k, FILE *json) {
  anim_search_data_t data = {m->x, m->rows, m->cols, m->ranges, m->nranges};
  double *times = malloc((size_t)nq * sizeof *times);
  anim_search_hit_t *ref = malloc((size_t)nq * (size_t)k * sizeof *ref), hits[64];
  result_t results[5];
  char err[256];
  for (int method = 0; method < ANIM_SEARCH_METHOD_COUNT; method++) {
    result_t *r = &results[method];
    memset(r, 0, sizeof *r);
    r->method = method == ANIM_SEARCH_FAST ? "kdtree" : anim_search_method_name((anim_search_method_t)method);
    r->frames = m->rows, r->dims = m->cols, r->queries = nq;
    double t0 = bench_now_s();
    anim_search_index_t *index = anim_search_index_build((anim_search_method_t)method, &data, err, sizeof err);
    r->build_ms = (bench_now_s() - t0) * 1e3;
    if (!index) {
      fprintf(stderr, "animbench: %s\n", err);
      exit(1);
    }
    r->index_bytes = anim_search_index_memory(index);
    for (int i = 0; i < nq; i++) {
      anim_search_query_t q = {queries + (size_t)i * (size_t)m->cols, k, -1, 0.0f, 0, 0, 0};
      int n;
      double s = bench_now_s();
      anim_search_run(index, &q, hits, &n, NULL);
      times[i] = bench_now_s() - s;
      if (method == ANIM_SEARCH_BRUTE) memcpy(ref + (size_t)i * (size_t)k, hits, (size_t)k * sizeof *hits);
      else
        for (int h = 0; h < k; h++)
          if (hits[h].frame != ref[(size_t)i * (size_t)k + (size_t)h].frame ||
              hits[h].cost != ref[(size_t)i * (size_t)k + (size_t)h].cost) {
            r->mismatches++;
            break;
          }
    }
    summarize(r, times, nq);
    anim_search_index_free(index);
  }
  struct {
    const char *name;
    void *(*build)(const float *, int, int);
    void (*search)(void *, const float *, int, float *, long *);
    void (*destroy)(void *);
  } peers[2] = {{"faiss-flat", peer_faiss_build, peer_faiss_search, peer_faiss_free},
                {"nanoflann", peer_nanoflann_build, peer_nanoflann_search, peer_nanoflann_free}};
  for (int p = 0; p < 2; p++) {
    result_t *r = &results[3 + p];
    memset(r, 0, sizeof *r);
    r->method = peers[p].name, r->frames = m->rows, r->dims = m->cols, r->queries = nq;
    double t0 = bench_now_s();
    void *handle = peers[p].build(m->x, m->rows, m->cols);
    r->build_ms = (bench_now_s() - t0) * 1e3;
    float dist[64];
    long index[64];
    for (int i = 0; i < nq; i++) {
      double s = bench_now_s();
      peers[p].search(handle, queries + (size_t)i * (size_t)m->cols, k, dist, index);
      times[i] = bench_now_s() - s;
      for (int h = 0; h < k; h++)
        if (index[h] != ref[(size_t)i * (size_t)k + (size_t)h].frame) {
          r->mismatches++;
          break;
        }
    }
    summarize(r, times, nq);
    peers[p].destroy(handle);
  }
  for (int i = 0; i < 5; i++) {
    print_row(&results[i], &results[0], &results[1]);
    write_json(json, &results[i]);
  }
  fflush(stdout);
  free(times);
  free(ref);
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
  const char *shared = "../shared", *json_path = NULL, *size_text = "6k,30k,300k,3m";
  int nq = 1000, k = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--shared")) shared = argv[i + 1];
    else if (!strcmp(argv[i], "--json")) json_path = argv[i + 1];
    else if (!strcmp(argv[i], "--sizes")) size_text = argv[i + 1];
    else if (!strcmp(argv[i], "--queries")) nq = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--k")) k = atoi(argv[i + 1]);
    else {
      fprintf(stderr, "animbench search: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  int sizes[MAX_SIZES], nsizes = parse_sizes(size_text, sizes);
  if (nsizes < 1 || nq < 10 || k < 1 || k > 64) {
    fprintf(stderr, "animbench search: --sizes like 6k,30k,300k,3m; --queries >= 10; --k 1..64\n");
    return 2;
  }
  matrix_t base;
  char source[160];
  if (base_features(shared, &base, source, sizeof source)) return 1;
  /* The query set: real rows plus noise 0.3, fixed for every size. */
  float *queries = malloc((size_t)nq * (size_t)base.cols * sizeof(float));
  for (int i = 0; i < nq; i++) {
    int row = (int)(bench_uniform(&rng) * (float)base.rows) % base.rows;
    for (int j = 0; j < base.cols; j++)
      queries[(size_t)i * (size_t)base.cols + (size_t)j] = base.x[(size_t)row * (size_t)base.cols + (size_t)j] + 0.3f * gaussian();
  }
  FILE *json = json_path ? fopen(json_path, "w") : NULL;
  printf("features: %s, %d frames x %d dims; %d queries (real rows + N(0, 0.3)), k = %d, single thread\n", source,
         base.rows, base.cols, nq, k);
  printf("%-10s %9s %5s %8s %9s %10s %10s %8s %9s %9s %10s\n", "method", "frames", "dims", "med us", "p99 us", "qps",
         "vs brute", "vs boxes", "build ms", "index MiB", "mismatches");
  for (int s = 0; s < nsizes; s++) {
    matrix_t m = sizes[s] <= base.rows ? base : tile(&base, sizes[s]);
    bench_size(&m, queries, nq, k, json);
    if (m.x != base.x) free(m.x), free(m.ranges);
  }
  if (json) fclose(json);
  free(queries);
  free(base.x), free(base.ranges);
  return 0;
}
