/*
 * motion_graph.c: the distance matrix in strips, its local minima, the
 * graph over the transitions kept (graph_transitions.c chooses them) and
 * its pruning (see motion_graph.h).
 *
 * The distance of windows i and j needs, besides sums over each window
 * alone, three sums over the pairs of corresponding points:
 *   M1 = sum w (x x' + z z'),  M2 = sum w (x z' - z x'),  M3 = sum w y y'.
 * Each is a sum over the window's frame pairs (i+t, j+t) of the same sum
 * over one pair of frames, so a strip computes the per-frame-pair sums
 * M(a, b) once, row by row (vectorized over b), keeps the last window-many
 * rows in a ring, and adds W of them along a diagonal for each (i, j). Sums
 * are in double: a window's raw sums are ~1e4 m^2 where the distances of
 * interest are ~1 m^2. Coordinates are taken relative to the first root
 * position of each range, which changes no distance and keeps them small.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anim_error.h"
#include "graph/graph_transitions.h"
#include "graph/motion_graph.h"
#include "math/umeyama.h"

/* ---- options ------------------------------------------------------------------------ */

void anim_graph_options_default(anim_graph_options_t *o) {
  memset(o, 0, sizeof *o);
  o->window = 1.0f / 3.0f;
  o->threshold = 0.05f;
  o->min_gap = 0; /* the window's frame count */
  o->strip_rows = 256;
  o->prune = 1;
  o->slide = ANIM_GRAPH_SLIDE_AUTO;
}

static int half_window(const anim_graph_options_t *o, const anim_database_t *db) {
  return (int)lroundf(o->window * db->frame_rate * 0.5f);
}

int anim_graph_options_validate(const anim_graph_options_t *o, const anim_database_t *db) {
  if (!o || !db || db->nbones < 2) return ANIM_EINVAL;
  if (!isfinite(o->window) || !isfinite(o->threshold)) return ANIM_ENONFINITE;
  if (!(o->window > 0.0f) || o->window > 2.0f || half_window(o, db) < 1) return ANIM_EINVAL;
  if (!(o->threshold > 0.0f) || o->min_gap < 0 || o->strip_rows < 1 || o->spacing < 0 ||
      o->spacing > half_window(o, db) || o->node_spacing < 0 ||
      (o->slide != 0 && o->slide != 1 && o->slide != ANIM_GRAPH_SLIDE_AUTO))
    return ANIM_EINVAL;
  if (o->bone_weights) {
    float total = 0.0f;
    for (int b = 0; b < db->nbones; b++) {
      if (!isfinite(o->bone_weights[b])) return ANIM_ENONFINITE;
      if (o->bone_weights[b] < 0.0f) return ANIM_EINVAL;
      total += o->bone_weights[b];
    }
    if (!(total > 0.0f)) return ANIM_EINVAL;
  }
  return 0;
}

/* Rows of per-frame-pair sums computed together (see compute_m_rows). */
#define M_BLOCK 4

/* ---- the builder ---------------------------------------------------------------------- */

typedef struct {
  anim_graph_transition_t *items;
  int count, cap;
  int done;
} strip_result_t;

struct anim_graph_builder {
  const anim_database_t *db;
  anim_graph_options_t o;
  int h, w;            /* half window, window frames (2h + 1) */
  int min_gap;
  int spacing;         /* neighbourhood of a local minimum, frames */
  int node_spacing;    /* frames between nodes of a range */
  int k;               /* frames compared (compact index) */
  int *frames;         /* compact -> database frame */
  int *ranges;         /* compact -> range */
  unsigned char *valid;/* the frame has a whole window in its range */
  int nb;              /* weighted bones */
  double *bone_w;      /* their weights */
  /* Bone-major coordinates: X[bone * k + a]. */
  double *x, *y, *z;
  /* Per frame (valid ones): window sums sum w x, sum w z and
   * G = sum w |p|^2 - (sx^2 + sz^2) / wsum. */
  double *sx, *sz, *g;
  double wsum;         /* sum of weights over a window */
  double max_e;        /* E below this is under the threshold */
  int nstrips;
  strip_result_t *strips;
};

void anim_graph_builder_free(anim_graph_builder_t *b) {
  if (!b) return;
  free(b->frames), free(b->ranges), free(b->valid), free(b->bone_w), free(b->x), free(b->y), free(b->z);
  free(b->sx), free(b->sz), free(b->g);
  if (b->strips)
    for (int s = 0; s < b->nstrips; s++) free(b->strips[s].items);
  free(b->strips);
  free(b);
}

static void set_err(char *err, int errlen, const char *msg) {
  if (err && errlen > 0) {
    strncpy(err, msg, (size_t)errlen - 1);
    err[errlen - 1] = '\0';
  }
}

anim_graph_builder_t *anim_graph_builder_create(const anim_database_t *db, const anim_graph_options_t *options,
                                                char *err, int errlen) {
  anim_graph_options_t defaults;
  if (!options) anim_graph_options_default(&defaults), options = &defaults;
  if (anim_graph_options_validate(options, db)) {
    set_err(err, errlen, "invalid motion graph options");
    return NULL;
  }
  anim_graph_builder_t *b = calloc(1, sizeof *b);
  if (!b) goto oom;
  b->db = db, b->o = *options;
  b->h = half_window(options, db), b->w = 2 * b->h + 1;
  b->min_gap = options->min_gap > 0 ? options->min_gap : b->w;
  b->spacing = options->spacing > 0 ? options->spacing : b->h;
  b->node_spacing = options->node_spacing > 0 ? options->node_spacing : (int)lroundf(0.1f * db->frame_rate);
  if (b->node_spacing < 1) b->node_spacing = 1;
  for (int r = 0; r < db->nranges; r++)
    if (!options->tag_mask || (db->ranges[r].tag_mask & options->tag_mask))
      b->k += db->ranges[r].stop - db->ranges[r].start;
  int k = b->k;
  b->frames = malloc((size_t)(k + 1) * sizeof *b->frames), b->ranges = malloc((size_t)(k + 1) * sizeof *b->ranges);
  b->valid = calloc((size_t)k + 1, 1);
  b->bone_w = malloc((size_t)db->nbones * sizeof *b->bone_w);
  if (!b->frames || !b->ranges || !b->valid || !b->bone_w) goto oom;
  int *bones = malloc((size_t)db->nbones * sizeof *bones);
  if (!bones) goto oom;
  for (int bone = 0; bone < db->nbones; bone++) {
    double wb = options->bone_weights ? options->bone_weights[bone] : (bone == 0 ? 0.0 : 1.0);
    if (wb > 0.0) bones[b->nb] = bone, b->bone_w[b->nb++] = wb;
  }
  b->x = malloc((size_t)b->nb * (size_t)(k + 1) * sizeof(double));
  b->y = malloc((size_t)b->nb * (size_t)(k + 1) * sizeof(double));
  b->z = malloc((size_t)b->nb * (size_t)(k + 1) * sizeof(double));
  b->sx = calloc((size_t)k + 1, sizeof(double)), b->sz = calloc((size_t)k + 1, sizeof(double));
  b->g = calloc((size_t)k + 1, sizeof(double));
  if (!b->x || !b->y || !b->z || !b->sx || !b->sz || !b->g) {
    free(bones);
    goto oom;
  }
  /* Compact frames, coordinates relative to each range's first root. */
  int a = 0, nvalid = 0;
  for (int r = 0; r < db->nranges; r++) {
    const anim_range_t *range = &db->ranges[r];
    if (options->tag_mask && !(range->tag_mask & options->tag_mask)) continue;
    vec3 origin = db->global_positions[(size_t)range->start * (size_t)db->nbones];
    for (int f = range->start; f < range->stop; f++, a++) {
      b->frames[a] = f, b->ranges[a] = r;
      b->valid[a] = f - range->start >= b->h && range->stop - 1 - f >= b->h;
      nvalid += b->valid[a];
      for (int i = 0; i < b->nb; i++) {
        vec3 p = db->global_positions[(size_t)f * (size_t)db->nbones + (size_t)bones[i]];
        b->x[(size_t)i * (size_t)k + (size_t)a] = (double)p.x - origin.x;
        b->y[(size_t)i * (size_t)k + (size_t)a] = p.y;
        b->z[(size_t)i * (size_t)k + (size_t)a] = (double)p.z - origin.z;
      }
    }
  }
  free(bones);
  if (nvalid < 2) {
    set_err(err, errlen, "fewer than two frames with a whole window in the selected ranges");
    anim_graph_builder_free(b);
    return NULL;
  }
  /* Window sums. */
  double bone_total = 0.0;
  for (int i = 0; i < b->nb; i++) bone_total += b->bone_w[i];
  b->wsum = bone_total * b->w;
  for (int c = 0; c < k; c++) {
    if (!b->valid[c]) continue;
    double sx = 0.0, sz = 0.0, q = 0.0;
    for (int t = -b->h; t <= b->h; t++)
      for (int i = 0; i < b->nb; i++) {
        size_t at = (size_t)i * (size_t)k + (size_t)(c + t);
        double wb = b->bone_w[i];
        sx += wb * b->x[at], sz += wb * b->z[at];
        q += wb * (b->x[at] * b->x[at] + b->y[at] * b->y[at] + b->z[at] * b->z[at]);
      }
    b->sx[c] = sx, b->sz[c] = sz, b->g[c] = q - (sx * sx + sz * sz) / b->wsum;
  }
  b->max_e = (double)options->threshold * options->threshold * b->wsum;
  b->nstrips = (k + options->strip_rows - 1) / options->strip_rows;
  b->strips = calloc((size_t)b->nstrips, sizeof *b->strips);
  if (!b->strips) goto oom;
  return b;
oom:
  anim_graph_builder_free(b);
  set_err(err, errlen, "out of memory");
  return NULL;
}

int anim_graph_builder_strips(const anim_graph_builder_t *b) { return b->nstrips; }
int anim_graph_builder_rows(const anim_graph_builder_t *b) { return b->k; }

size_t anim_graph_builder_strip_memory(const anim_graph_builder_t *b) {
  return (size_t)(b->w + M_BLOCK + 2) * 3 * (size_t)b->k * sizeof(double) +
         (size_t)(2 * b->spacing + 2) * (size_t)b->k * sizeof(float);
}

size_t anim_graph_build_memory(const anim_database_t *db, const anim_graph_options_t *options) {
  anim_graph_options_t defaults;
  if (!options) anim_graph_options_default(&defaults), options = &defaults;
  if (anim_graph_options_validate(options, db)) return 0;
  /* The sizes anim_graph_builder_create and anim_graph_builder_run allocate by. */
  size_t k = 0, nb = 0;
  for (int r = 0; r < db->nranges; r++)
    if (!options->tag_mask || (db->ranges[r].tag_mask & options->tag_mask))
      k += (size_t)(db->ranges[r].stop - db->ranges[r].start);
  for (int bone = 0; bone < db->nbones; bone++)
    nb += (options->bone_weights ? options->bone_weights[bone] : (bone == 0 ? 0.0f : 1.0f)) > 0.0f;
  size_t h = (size_t)half_window(options, db), w = 2 * h + 1;
  size_t spacing = options->spacing > 0 ? (size_t)options->spacing : h;
  size_t strips = (k + (size_t)options->strip_rows - 1) / (size_t)options->strip_rows;
  size_t builder = sizeof(anim_graph_builder_t) + (k + 1) * (2 * sizeof(int) + 1 + 3 * nb * sizeof(double) +
                                                             3 * sizeof(double)) +
                   (size_t)db->nbones * (sizeof(double) + sizeof(int)) + strips * sizeof(strip_result_t);
  size_t window_points = w * (size_t)db->nbones;
  size_t strip = (w + M_BLOCK + 2) * 3 * k * sizeof(double) + (2 * spacing + 2) * k * sizeof(float) +
                 window_points * (2 * sizeof(vec3) + sizeof(float));
  return builder + strip;
}

/* ---- one strip -------------------------------------------------------------------------- */

typedef struct {
  const anim_graph_builder_t *b;
  int slots;           /* rows in the ring of M */
  double *m;           /* [slot][3][k] */
  int drows;           /* rows in the ring of E: 2 * spacing + 1 */
  float *d;            /* [drows][k]: E of rows, by row % drows */
  float *report;       /* [k]: a row as RMS distances, for the row callback */
  double *w;           /* [2][3][k]: window sums of the last two rows */
  vec3 *points;        /* two windows' points, for anim_umeyama_fit */
  float *weights;
  int next_m;          /* next M row to compute */
} strip_t;

static double *m_row(const strip_t *s, int a, int which) {
  return s->m + ((size_t)(a % s->slots) * 3 + (size_t)which) * (size_t)s->b->k;
}

/* M(a, b) for rows a0 .. a0 + count - 1 (count <= M_BLOCK) and every b >=
 * a0 - 1: the per-frame-pair sums, bone by bone so the loop over b
 * vectorizes, several rows at once so each frame's coordinates are read
 * once for all of them (on 30k frames the coordinates are 16 MB, and
 * reading them per row made the build memory-bound). */
static void compute_m_rows(strip_t *s, int a0, int count) {
  const anim_graph_builder_t *b = s->b;
  int k = b->k, first = a0 > 0 ? a0 - 1 : 0;
  double *m[M_BLOCK][3];
  for (int q = 0; q < count; q++) {
    for (int j = 0; j < 3; j++) {
      m[q][j] = m_row(s, a0 + q, j);
      memset(m[q][j] + first, 0, (size_t)(k - first) * sizeof(double));
    }
  }
  for (int i = 0; i < b->nb; i++) {
    const double *x = b->x + (size_t)i * (size_t)k, *y = b->y + (size_t)i * (size_t)k,
                 *z = b->z + (size_t)i * (size_t)k;
    double wb = b->bone_w[i], ax[M_BLOCK], ay[M_BLOCK], az[M_BLOCK];
    for (int q = 0; q < count; q++) ax[q] = wb * x[a0 + q], ay[q] = wb * y[a0 + q], az[q] = wb * z[a0 + q];
    if (count == M_BLOCK) {
      for (int c = first; c < k; c++) {
        double xc = x[c], yc = y[c], zc = z[c];
        for (int q = 0; q < M_BLOCK; q++) {
          m[q][0][c] += ax[q] * xc + az[q] * zc;
          m[q][1][c] += ax[q] * zc - az[q] * xc;
          m[q][2][c] += ay[q] * yc;
        }
      }
    } else {
      for (int q = 0; q < count; q++)
        for (int c = first; c < k; c++) {
          m[q][0][c] += ax[q] * x[c] + az[q] * z[c];
          m[q][1][c] += ax[q] * z[c] - az[q] * x[c];
          m[q][2][c] += ay[q] * y[c];
        }
    }
  }
}

static int comparable(const anim_graph_builder_t *b, int i, int j) {
  if (!b->valid[i] || !b->valid[j]) return 0;
  return b->ranges[i] != b->ranges[j] || abs(i - j) >= b->min_gap;
}

/* M(a, b), zero outside the matrix (rows are computed for b >= a - 1). */
static void m_at(const strip_t *s, int a, int c, double *io_m1, double *io_m2, double *io_m3, double sign) {
  if (a < 0 || c < 0 || a >= s->b->k || c >= s->b->k) return;
  *io_m1 += sign * m_row(s, a, 0)[c], *io_m2 += sign * m_row(s, a, 1)[c], *io_m3 += sign * m_row(s, a, 2)[c];
}

/* The window sums of (i, j) added up from the ring: sum over t in [-h, h]
 * of M(i + t, j + t). */
static void window_sums(const strip_t *s, int i, int j, double *out) {
  out[0] = out[1] = out[2] = 0.0;
  for (int t = -s->b->h; t <= s->b->h; t++) m_at(s, i + t, j + t, &out[0], &out[1], &out[2], 1.0);
}

/* The window sums of row r for every column c >= r - 1: along each
 * diagonal, W(r, c) = W(r - 1, c - 1) + M(r + h, c + h) - M(r - h - 1,
 * c - h - 1) (M zero outside the matrix, so this holds everywhere), added
 * up afresh at the strip's first row and the first column. */
static void compute_w_row(strip_t *s, int r, int first_row) {
  const anim_graph_builder_t *b = s->b;
  size_t k = (size_t)b->k;
  double *cur = s->w + (size_t)(r & 1) * 3 * k, *prev = s->w + (size_t)((r - 1) & 1) * 3 * k;
  int first = r > 0 ? r - 1 : 0, h = b->h;
  for (int c = first; c < b->k; c++) {
    double sums[3];
    if (r == first_row || c == 0) {
      window_sums(s, r, c, sums);
    } else {
      sums[0] = prev[c - 1], sums[1] = prev[k + (size_t)c - 1], sums[2] = prev[2 * k + (size_t)c - 1];
      m_at(s, r + h, c + h, &sums[0], &sums[1], &sums[2], 1.0);
      m_at(s, r - h - 1, c - h - 1, &sums[0], &sums[1], &sums[2], -1.0);
    }
    cur[c] = sums[0], cur[k + (size_t)c] = sums[1], cur[2 * k + (size_t)c] = sums[2];
  }
}

/* The least weighted sum of squared distances between windows i and j over
 * a yaw and a ground translation (the cost anim_umeyama_fit's YAW mode
 * reaches). With centred horizontal sums A = sum w (x x' + z z') and B =
 * sum w (x z' - z x') (x, z of i's window, x', z' of j's, each about its
 * weighted centroid), the cost after the best translation is
 *   sum w (y - y')^2 + sum w |p~|^2 + sum w |p~'|^2 - 2 (A cos t + B sin t),
 * largest at tan t = B / A (umeyama.h, after Kovar et al. eq. 1), where
 * A cos t + B sin t = hypot(A, B). With G = sum w |p|^2 - |sum w p_xz|^2 / W
 * per window and M1..M3 the pair sums, A = M1 - (sx sx' + sz sz') / W,
 * B = M2 - (sx sz' - sz sx') / W and the y terms give -2 M3. */
static double pair_cost(const anim_graph_builder_t *b, int i, int j, double m1, double m2, double m3) {
  double a = m1 - (b->sx[i] * b->sx[j] + b->sz[i] * b->sz[j]) / b->wsum;
  double c = m2 - (b->sx[i] * b->sz[j] - b->sz[i] * b->sx[j]) / b->wsum;
  double e = b->g[i] + b->g[j] - 2.0 * m3 - 2.0 * sqrt(a * a + c * c);
  return e > 0.0 ? e : 0.0;
}

static void compute_d_row(strip_t *s, int r, int first_row) {
  const anim_graph_builder_t *b = s->b;
  size_t k = (size_t)b->k;
  compute_w_row(s, r, first_row);
  const double *w = s->w + (size_t)(r & 1) * 3 * k;
  float *d = s->d + (size_t)(r % s->drows) * k;
  int first = r > 0 ? r - 1 : 0;
  for (int c = first; c < b->k; c++)
    d[c] = comparable(b, r, c) ? (float)pair_cost(b, r, c, w[c], w[k + (size_t)c], w[2 * k + (size_t)c]) : INFINITY;
}

static float d_at(const strip_t *s, int r, int c, int r_lo, int r_hi) {
  if (r < r_lo || r > r_hi || c < 0 || c >= s->b->k || c < r - 1) return INFINITY;
  return s->d[(size_t)(r % s->drows) * (size_t)s->b->k + (size_t)c];
}

static int push_transition(strip_result_t *out, anim_graph_transition_t t) {
  if (out->count == out->cap) {
    int cap = out->cap ? out->cap * 2 : 64;
    anim_graph_transition_t *q = realloc(out->items, (size_t)cap * sizeof *q);
    if (!q) return ANIM_ENOMEM;
    out->items = q, out->cap = cap;
  }
  out->items[out->count++] = t;
  return 0;
}

/* Whether E at (r, c) is the least of its neighbourhood, the cells within
 * `spacing` rows and columns (rows outside [r_lo, r_hi] do not exist). Ties
 * go to the first in row-major order: strict against the cells before it,
 * not after. */
static int is_minimum(const strip_t *s, int r, int c, float e, int r_lo, int r_hi) {
  int n = s->b->spacing;
  for (int rr = r - n; rr <= r + n; rr++)
    for (int cc = c - n; cc <= c + n; cc++) {
      if (rr == r && cc == c) continue;
      float other = d_at(s, rr, cc, r_lo, r_hi);
      int before = rr < r || (rr == r && cc < c);
      if (before ? !(e < other) : !(e <= other)) return 0;
    }
  return 1;
}

/* Local minima of row r under the threshold, as transitions both ways. */
static int find_minima(strip_t *s, int r, int r_lo, int r_hi, strip_result_t *out) {
  const anim_graph_builder_t *b = s->b;
  for (int c = r + 1; c < b->k; c++) {
    float e = d_at(s, r, c, r_lo, r_hi);
    if (!(e < b->max_e) || !is_minimum(s, r, c, e, r_lo, r_hi)) continue;
    anim_umeyama_t fit;
    if (anim_graph_align_windows(b->db, &b->o, b->h, b->frames[r], b->frames[c], s->points, s->weights, &fit)) continue;
    float distance = sqrtf(fmaxf(e, 0.0f) / (float)b->wsum);
    /* r -> c: c's window mapped onto r's; c -> r: the inverse map. */
    float ca = cosf(fit.yaw), sa = sinf(fit.yaw), dx = fit.translation.x, dz = fit.translation.z;
    anim_graph_transition_t there = {b->frames[r], b->frames[c], distance, fit.yaw, dx, dz};
    anim_graph_transition_t back = {b->frames[c], b->frames[r], distance, -fit.yaw, -(ca * dx - sa * dz),
                                    -(sa * dx + ca * dz)};
    if (push_transition(out, there) || push_transition(out, back)) return ANIM_ENOMEM;
  }
  return 0;
}

static void report_row(const strip_t *s, int r) {
  const anim_graph_builder_t *b = s->b;
  if (!b->o.row) return;
  const float *d = s->d + (size_t)(r % s->drows) * (size_t)b->k;
  int first = r > 0 ? r - 1 : 0;
  for (int c = first; c < b->k; c++) s->report[c] = isfinite(d[c]) ? sqrtf(d[c] / (float)b->wsum) : d[c];
  b->o.row(r, s->report, first, b->k, b->o.data);
}

int anim_graph_builder_run(anim_graph_builder_t *b, int strip) {
  if (strip < 0 || strip >= b->nstrips) return ANIM_ERANGE;
  int n = b->spacing;
  int r0 = strip * b->o.strip_rows, r1 = r0 + b->o.strip_rows < b->k ? r0 + b->o.strip_rows : b->k;
  /* Rows computed: the strip's and `spacing` either side. */
  int lo = r0 - n > 0 ? r0 - n : 0, hi = r1 - 1 + n < b->k ? r1 - 1 + n : b->k - 1;
  /* The ring of M holds rows r - h - 1 .. r + h for the diagonal sums, and
   * the rest of a block computed ahead. */
  strip_t s = {.b = b, .slots = b->w + M_BLOCK, .drows = 2 * n + 1};
  s.m = malloc((size_t)s.slots * 3 * (size_t)b->k * sizeof(double));
  s.d = malloc((size_t)(s.drows + 1) * (size_t)b->k * sizeof(float));
  s.report = s.d ? s.d + (size_t)s.drows * (size_t)b->k : NULL;
  size_t window_points = (size_t)b->w * (size_t)b->db->nbones;
  s.points = malloc(2 * window_points * sizeof(vec3)), s.weights = malloc(window_points * sizeof(float));
  s.w = malloc(6 * (size_t)b->k * sizeof(double));
  strip_result_t *out = &b->strips[strip];
  out->count = 0;
  int rc = 0;
  if (!s.m || !s.d || !s.points || !s.weights || !s.w) {
    rc = ANIM_ENOMEM;
    goto done;
  }
  s.next_m = lo - b->h > 0 ? lo - b->h : 0;
  for (int r = lo; r <= hi; r++) {
    int need = r + b->h < b->k ? r + b->h : b->k - 1;
    while (s.next_m <= need) {
      int count = b->k - s.next_m < M_BLOCK ? b->k - s.next_m : M_BLOCK;
      compute_m_rows(&s, s.next_m, count);
      s.next_m += count;
    }
    compute_d_row(&s, r, lo);
    if (r >= r0 && r < r1) report_row(&s, r);
    /* Row r - spacing has its whole neighbourhood now. */
    int e = r - n;
    if (e >= r0 && e < r1 && (rc = find_minima(&s, e, lo, hi, out))) goto done;
  }
  /* The last rows of the matrix, whose neighbourhood stops at its end. */
  for (int e = hi - n + 1; e <= hi; e++)
    if (e >= r0 && e < r1 && e > hi - n && hi == b->k - 1 && (rc = find_minima(&s, e, lo, hi, out))) goto done;
  out->done = 1;
done:
  free(s.m), free(s.d), free(s.points), free(s.weights), free(s.w);
  return rc;
}

/* ---- the graph ------------------------------------------------------------------------------ */

static int compare_ints(const void *pa, const void *pb) {
  int a = *(const int *)pa, b = *(const int *)pb;
  return (a > b) - (a < b);
}

static int node_search(const anim_graph_node_t *nodes, int n, int frame) {
  int lo = 0, hi = n - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    if (nodes[mid].frame == frame) return mid;
    if (nodes[mid].frame < frame) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

int anim_motion_graph_node_at(const anim_motion_graph_t *g, int frame) {
  return node_search(g->nodes, g->nnodes, frame);
}

/* Strongly connected components by Tarjan's algorithm with an explicit
 * stack (graphs of many thousand nodes would overflow a recursive one).
 * Writes each node's component into out_component; returns the count, or
 * ANIM_ENOMEM. */
static int strong_components(const anim_graph_node_t *nodes, int n, const anim_graph_edge_t *edges,
                             int *out_component) {
  int *index = malloc((size_t)n * sizeof(int)), *low = malloc((size_t)n * sizeof(int));
  int *stack = malloc((size_t)n * sizeof(int)), *call = malloc((size_t)n * sizeof(int));
  int *cursor = malloc((size_t)n * sizeof(int));
  unsigned char *on_stack = calloc((size_t)n, 1);
  int count = ANIM_ENOMEM;
  if (!index || !low || !stack || !call || !cursor || !on_stack) goto done;
  for (int v = 0; v < n; v++) index[v] = -1;
  int next_index = 0, top = 0, depth = 0;
  count = 0;
  for (int root = 0; root < n; root++) {
    if (index[root] >= 0) continue;
    index[root] = low[root] = next_index++, stack[top++] = root, on_stack[root] = 1;
    call[depth] = root, cursor[depth++] = 0;
    while (depth > 0) {
      int v = call[depth - 1];
      if (cursor[depth - 1] < nodes[v].nedges) {
        int w = edges[nodes[v].first_edge + cursor[depth - 1]++].target;
        if (index[w] < 0) {
          index[w] = low[w] = next_index++, stack[top++] = w, on_stack[w] = 1;
          call[depth] = w, cursor[depth++] = 0;
        } else if (on_stack[w] && index[w] < low[v]) {
          low[v] = index[w];
        }
        continue;
      }
      depth--;
      if (low[v] == index[v]) {
        int w;
        do {
          w = stack[--top];
          on_stack[w] = 0;
          out_component[w] = count;
        } while (w != v);
        count++;
      }
      if (depth > 0 && low[v] < low[call[depth - 1]]) low[call[depth - 1]] = low[v];
    }
  }
done:
  free(index), free(low), free(stack), free(call), free(cursor), free(on_stack);
  return count;
}

void anim_motion_graph_free(anim_motion_graph_t *g) {
  if (!g) return;
  free(g->transitions), free(g->nodes), free(g->edges);
  free(g);
}

/* Nodes at every transition's ends; per node, its "on" edge then a "jump"
 * edge per transition from it (transitions sorted by source). */
static int build_graph(anim_motion_graph_t *g, const anim_database_t *db) {
  int nt = g->ntransitions;
  int *frames = malloc((size_t)(2 * nt + 1) * sizeof(int));
  if (!frames) return ANIM_ENOMEM;
  for (int t = 0; t < nt; t++) frames[2 * t] = g->transitions[t].from, frames[2 * t + 1] = g->transitions[t].to;
  qsort(frames, (size_t)(2 * nt), sizeof(int), compare_ints);
  int n = 0;
  for (int i = 0; i < 2 * nt; i++)
    if (n == 0 || frames[i] != frames[n - 1]) frames[n++] = frames[i];
  g->nodes = calloc((size_t)n + 1, sizeof *g->nodes);
  g->edges = malloc((size_t)(n + nt + 1) * sizeof *g->edges);
  if (!g->nodes || !g->edges) {
    free(frames);
    return ANIM_ENOMEM;
  }
  g->nnodes = n;
  for (int u = 0; u < n; u++) g->nodes[u].frame = frames[u], g->nodes[u].range = anim_database_range_of(db, frames[u]);
  free(frames);
  int e = 0, t = 0;
  for (int u = 0; u < n; u++) {
    anim_graph_node_t *node = &g->nodes[u];
    node->first_edge = e;
    if (u + 1 < n && g->nodes[u + 1].range == node->range)
      g->edges[e++] = (anim_graph_edge_t){u + 1, node->frame + 1, -1};
    for (; t < nt && g->transitions[t].from == node->frame; t++) {
      int v = node_search(g->nodes, n, g->transitions[t].to);
      if (v + 1 < n && g->nodes[v + 1].range == g->nodes[v].range)
        g->edges[e++] = (anim_graph_edge_t){v + 1, g->nodes[v].frame + 1, t};
    }
    node->nedges = e - node->first_edge;
  }
  g->nedges = e;
  return 0;
}

/* Keeps the largest strongly connected component, and the transitions its
 * edges take. */
static int prune_graph(anim_motion_graph_t *g, int prune) {
  int n = g->nnodes;
  int *component = malloc((size_t)(n + 1) * sizeof(int));
  if (!component) return ANIM_ENOMEM;
  int count = strong_components(g->nodes, n, g->edges, component);
  if (count < 0) {
    free(component);
    return count;
  }
  g->components = count;
  if (!prune) {
    free(component);
    return 0;
  }
  int *size = calloc((size_t)count + 1, sizeof(int)), *remap = malloc((size_t)(n + 1) * sizeof(int));
  int *tmap = malloc((size_t)(g->ntransitions + 1) * sizeof(int));
  if (!size || !remap || !tmap) {
    free(component), free(size), free(remap), free(tmap);
    return ANIM_ENOMEM;
  }
  int largest = 0;
  for (int v = 0; v < n; v++) size[component[v]]++;
  for (int c = 1; c < count; c++)
    if (size[c] > size[largest]) largest = c;
  int kept = 0;
  for (int v = 0; v < n; v++) remap[v] = component[v] == largest ? kept++ : -1;
  for (int t = 0; t < g->ntransitions; t++) tmap[t] = -1;
  /* Edges of kept nodes into kept nodes, in place (kept nodes keep their order). */
  int e = 0;
  for (int v = 0; v < n; v++) {
    if (remap[v] < 0) continue;
    anim_graph_node_t node = g->nodes[v];
    int first = e;
    for (int i = 0; i < node.nedges; i++) {
      anim_graph_edge_t edge = g->edges[node.first_edge + i];
      if (remap[edge.target] < 0) continue;
      edge.target = remap[edge.target];
      if (edge.transition >= 0) tmap[edge.transition] = 0;
      g->edges[e++] = edge;
    }
    node.first_edge = first, node.nedges = e - first;
    g->nodes[remap[v]] = node;
  }
  int nt = 0;
  for (int t = 0; t < g->ntransitions; t++)
    if (tmap[t] == 0) tmap[t] = nt, g->transitions[nt++] = g->transitions[t];
  for (int i = 0; i < e; i++)
    if (g->edges[i].transition >= 0) g->edges[i].transition = tmap[g->edges[i].transition];
  g->nnodes = kept, g->nedges = e, g->ntransitions = nt;
  free(component), free(size), free(remap), free(tmap);
  return 0;
}

anim_motion_graph_t *anim_graph_builder_finish(anim_graph_builder_t *b, char *err, int errlen) {
  int total = 0;
  for (int s = 0; s < b->nstrips; s++) {
    if (!b->strips[s].done) {
      set_err(err, errlen, "a strip of the distance matrix has not been run");
      return NULL;
    }
    total += b->strips[s].count;
  }
  if (total == 0) {
    set_err(err, errlen, "no transition under the threshold");
    return NULL;
  }
  anim_motion_graph_t *g = calloc(1, sizeof *g);
  if (!g) goto oom;
  g->db_version = b->db->version, g->frame_rate = b->db->frame_rate;
  g->window = b->o.window, g->threshold = b->o.threshold;
  for (int a = 0; a < b->k; a++) g->nframes += b->valid[a];
  g->transitions = malloc((size_t)total * sizeof *g->transitions);
  if (!g->transitions) goto oom;
  for (int s = 0; s < b->nstrips; s++) {
    if (b->strips[s].count == 0) continue; /* its items may be NULL */
    memcpy(g->transitions + g->ntransitions, b->strips[s].items, (size_t)b->strips[s].count * sizeof *g->transitions);
    g->ntransitions += b->strips[s].count;
  }
  g->candidates = total;
  if (anim_graph_transitions_sparsify(g, b->db, &b->o, b->h, b->w, b->node_spacing)) goto oom;
  if (build_graph(g, b->db)) goto oom;
  g->nodes_built = g->nnodes, g->edges_built = g->nedges;
  if (prune_graph(g, b->o.prune)) goto oom;
  if (g->nnodes == 0 || g->nedges == 0) {
    set_err(err, errlen, "the graph has no edge");
    anim_motion_graph_free(g);
    return NULL;
  }
  return g;
oom:
  anim_motion_graph_free(g);
  set_err(err, errlen, "out of memory");
  return NULL;
}

anim_motion_graph_t *anim_motion_graph_build(const anim_database_t *db, const anim_graph_options_t *options, char *err,
                                             int errlen) {
  anim_graph_builder_t *b = anim_graph_builder_create(db, options, err, errlen);
  if (!b) return NULL;
  anim_motion_graph_t *g = NULL;
  for (int s = 0; s < b->nstrips; s++) {
    if (anim_graph_builder_run(b, s)) {
      set_err(err, errlen, "out of memory");
      goto done;
    }
    int rows = (s + 1) * b->o.strip_rows < b->k ? (s + 1) * b->o.strip_rows : b->k;
    if (b->o.progress && b->o.progress(rows, b->k, b->o.data)) {
      set_err(err, errlen, "cancelled");
      goto done;
    }
  }
  g = anim_graph_builder_finish(b, err, errlen);
done:
  anim_graph_builder_free(b);
  return g;
}

/* ---- one pair -------------------------------------------------------------------------------- */

int anim_graph_distance(const anim_database_t *db, const anim_graph_options_t *options, int i, int j,
                        float *out_distance, float *out_angle, float *out_dx, float *out_dz) {
  anim_graph_options_t o;
  if (options) o = *options;
  else anim_graph_options_default(&o);
  /* Both ranges, whatever the options' tags. */
  o.tag_mask = 0;
  if (anim_graph_options_validate(&o, db) || i < 0 || j < 0 || i >= db->nframes || j >= db->nframes) return ANIM_EINVAL;
  int h = half_window(&o, db);
  int ri = anim_database_range_of(db, i), rj = anim_database_range_of(db, j);
  if (i - db->ranges[ri].start < h || db->ranges[ri].stop - 1 - i < h || j - db->ranges[rj].start < h ||
      db->ranges[rj].stop - 1 - j < h)
    return ANIM_ERANGE;
  size_t window_points = (size_t)(2 * h + 1) * (size_t)db->nbones;
  vec3 *points = malloc(2 * window_points * sizeof(vec3));
  float *weights = malloc(window_points * sizeof(float));
  anim_umeyama_t fit;
  int rc = points && weights ? anim_graph_align_windows(db, &o, h, i, j, points, weights, &fit) : ANIM_ENOMEM;
  free(points), free(weights);
  if (rc) return rc;
  if (out_distance) *out_distance = (float)fit.rms;
  if (out_angle) *out_angle = fit.yaw;
  if (out_dx) *out_dx = fit.translation.x;
  if (out_dz) *out_dz = fit.translation.z;
  return 0;
}

/* ---- walks ----------------------------------------------------------------------------------- */

int anim_motion_graph_random_walk(const anim_motion_graph_t *g, int start, uint32_t *io_seed, int *out_edges,
                                  int max_edges) {
  uint32_t x = *io_seed ? *io_seed : 1u;
  int node = start, n = 0;
  if (start < 0 || start >= g->nnodes) return 0;
  while (n < max_edges && g->nodes[node].nedges > 0) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    int e = g->nodes[node].first_edge + (int)(x % (uint32_t)g->nodes[node].nedges);
    out_edges[n++] = e;
    node = g->edges[e].target;
  }
  *io_seed = x;
  return n;
}
