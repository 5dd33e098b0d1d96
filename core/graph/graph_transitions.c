/*
 * graph_transitions.c: which of the distance matrix's local minima a motion
 * graph keeps, and the alignment of two frames' windows that measures a
 * pair (see graph_transitions.h).
 */
#include <math.h>
#include <stdlib.h>

#include "anim_error.h"
#include "graph/graph_transitions.h"

/* What the choice reads of the build. */
typedef struct {
  const anim_database_t *db;
  const anim_graph_options_t *o;
  int h, w; /* half window, window (frames) */
} selection_t;

int anim_graph_align_windows(const anim_database_t *db, const anim_graph_options_t *o, int h, int i, int j,
                             vec3 *points, float *weights, anim_umeyama_t *out_fit) {
  int n = 0;
  vec3 *targets = points + (size_t)(2 * h + 1) * (size_t)db->nbones; /* i's */
  for (int t = -h; t <= h; t++)
    for (int bone = 0; bone < db->nbones; bone++) {
      float wb = o->bone_weights ? o->bone_weights[bone] : (bone == 0 ? 0.0f : 1.0f);
      if (!(wb > 0.0f)) continue;
      points[n] = db->global_positions[(size_t)(j + t) * (size_t)db->nbones + (size_t)bone];
      targets[n] = db->global_positions[(size_t)(i + t) * (size_t)db->nbones + (size_t)bone];
      weights[n++] = wb;
    }
  return anim_umeyama_fit(out_fit, ANIM_UMEYAMA_YAW, points, targets, weights, n);
}


int anim_graph_transition_compare(const void *pa, const void *pb) {
  const anim_graph_transition_t *a = pa, *b = pb;
  if (a->from != b->from) return a->from < b->from ? -1 : 1;
  return (a->to > b->to) - (a->to < b->to);
}

static int compare_distances(const void *pa, const void *pb) {
  const anim_graph_transition_t *a = pa, *b = pb;
  if (a->distance != b->distance) return a->distance < b->distance ? -1 : 1;
  return anim_graph_transition_compare(pa, pb);
}

/* Whether frame f (of range r) may end a kept transition: a node already,
 * or at least `spacing` frames from every node of its range. */
static int end_allowed(const unsigned char *node, const anim_range_t *r, int f, int spacing) {
  if (node[f]) return 1;
  for (int d = f - spacing + 1; d < f + spacing; d++)
    if (d >= r->start && d < r->stop && node[d]) return 0;
  return 1;
}

/* A pair refused by end_allowed, slid along its diagonal: (from + s, to +
 * s), 0 < |s| < spacing, s taking one end onto a node within `spacing` of
 * it, kept when both ends are then allowed, both keep a whole window in
 * their range, and the distance, measured again, is under the threshold;
 * the least such distance wins. Along a diagonal both motions advance
 * together, so the slid pair compares the same phases of two gaits (the
 * valleys of the matrix run along diagonals), a few frames from the local
 * minimum. Without it, motions repeated exactly in many ranges (the same
 * straight walk at the start of every procedural walk clip) put nodes
 * every node_spacing + 1 frames or so at phases of their own, and every
 * pair joining another motion to them lands between two nodes and is
 * refused: the default database's turns had no way back to its walks, and
 * the pruned graph could not turn. Writes *io_tr and returns 1 when slid. */
static int slide_pair(const selection_t *c, const unsigned char *node, int spacing, vec3 *points,
                      float *weights, anim_graph_transition_t *io_tr) {
  const anim_database_t *db = c->db;
  const anim_range_t *rf = &db->ranges[anim_database_range_of(db, io_tr->from)];
  const anim_range_t *rt = &db->ranges[anim_database_range_of(db, io_tr->to)];
  anim_graph_transition_t best = *io_tr;
  int found = 0;
  for (int end = 0; end < 2; end++) {
    int f = end ? io_tr->to : io_tr->from;
    const anim_range_t *r = end ? rt : rf;
    for (int s = 1 - spacing; s < spacing; s++) {
      int from = io_tr->from + s, to = io_tr->to + s;
      if (s == 0 || f + s < r->start || f + s >= r->stop || !node[f + s]) continue;
      if (from - rf->start < c->h || rf->stop - 1 - from < c->h || to - rt->start < c->h || rt->stop - 1 - to < c->h)
        continue;
      if (!end_allowed(node, rf, from, spacing) || !end_allowed(node, rt, to, spacing)) continue;
      anim_umeyama_t fit;
      if (anim_graph_align_windows(db, c->o, c->h, from, to, points, weights, &fit)) continue;
      /* Measured alone, the distance can come out a few ulps below the
       * strips' value for the same pair (they sum in another order: 3.7e-9 m
       * on Bandai), so it is rounded up by a part in a million to stay an
       * upper bound of the matrix (the server's picture of it). */
      float rms = (float)fit.rms * (1.0f + 1e-6f);
      if (!(rms < c->o->threshold) || (found && !(rms < best.distance))) continue;
      best = (anim_graph_transition_t){from, to, rms, fit.yaw, fit.translation.x, fit.translation.z};
      found = 1;
    }
  }
  if (found) *io_tr = best;
  return found;
}

/* Whether a kept pair already joins the stretch of `near` frames about
 * one end of tr to the other end's range (either way round): a slide
 * would add edges, and planning time, for a way the graph has. */
static int linked(const anim_database_t *db, const anim_graph_transition_t *kept, int count,
                  anim_graph_transition_t tr, int near) {
  int rf = anim_database_range_of(db, tr.from), rt = anim_database_range_of(db, tr.to);
  for (int t = 0; t < count; t++) {
    int a = kept[t].from, c = kept[t].to;
    for (int turn = 0; turn < 2; turn++, a = kept[t].to, c = kept[t].from) {
      if (abs(a - tr.from) < near && anim_database_range_of(db, c) == rt) return 1;
      if (abs(a - tr.to) < near && anim_database_range_of(db, c) == rf) return 1;
    }
  }
  return 0;
}

/* Whether two ranges hold the same motion exactly (a pair of distance 0
 * between them; transitions sorted by distance): what makes nodes crowd
 * and pairs be refused, so slide's automatic choice. Captured motion never
 * repeats exactly; procedural clips that share a gait do. */
static int repeats_exactly(const anim_database_t *db, const anim_motion_graph_t *g) {
  for (int t = 0; t < g->ntransitions && g->transitions[t].distance == 0.0f; t++)
    if (anim_database_range_of(db, g->transitions[t].from) != anim_database_range_of(db, g->transitions[t].to))
      return 1;
  return 0;
}

/* graph_transitions.h. */
int anim_graph_transitions_sparsify(anim_motion_graph_t *g, const anim_database_t *db, const anim_graph_options_t *o,
                                    int h, int w, int spacing) {
  const selection_t selection = {db, o, h, w}, *c = &selection;
  size_t window_points = (size_t)c->w * (size_t)db->nbones;
  unsigned char *node = calloc((size_t)db->nframes, 1);
  vec3 *points = malloc(2 * window_points * sizeof *points);
  float *weights = malloc(window_points * sizeof *weights);
  if (!node || !points || !weights) {
    free(node), free(points), free(weights);
    return ANIM_ENOMEM;
  }
  qsort(g->transitions, (size_t)g->ntransitions, sizeof *g->transitions, compare_distances);
  int slide = c->o->slide == ANIM_GRAPH_SLIDE_AUTO ? repeats_exactly(db, g) : c->o->slide;
  g->slide = slide;
  int kept = 0;
  for (int t = 0; t < g->ntransitions; t++) {
    anim_graph_transition_t tr = g->transitions[t];
    if (tr.from > tr.to) continue; /* each pair once; its other half is rebuilt below */
    const anim_range_t *rf = &db->ranges[anim_database_range_of(db, tr.from)];
    const anim_range_t *rt = &db->ranges[anim_database_range_of(db, tr.to)];
    int allowed = end_allowed(node, rf, tr.from, spacing) && end_allowed(node, rt, tr.to, spacing);
    if (!allowed && (!slide || rf == rt || linked(db, g->transitions, kept, tr, c->w) ||
                     !slide_pair(c, node, spacing, points, weights, &tr)))
      continue;
    node[tr.from] = node[tr.to] = 1;
    g->transitions[kept++] = tr;
  }
  free(node), free(points), free(weights);
  int pairs = kept;
  anim_graph_transition_t *both = realloc(g->transitions, (size_t)(2 * pairs + 1) * sizeof *both);
  if (!both) return ANIM_ENOMEM;
  g->transitions = both;
  for (int t = 0; t < pairs; t++) {
    anim_graph_transition_t tr = both[t];
    float cs = cosf(tr.angle), sn = sinf(tr.angle);
    anim_graph_transition_t back = {tr.to, tr.from, tr.distance, -tr.angle, -(cs * tr.dx - sn * tr.dz),
                                    -(sn * tr.dx + cs * tr.dz)};
    both[pairs + t] = back;
  }
  qsort(both, (size_t)(2 * pairs), sizeof *both, anim_graph_transition_compare);
  /* A slid pair may land on one kept already. */
  int n = 0;
  for (int t = 0; t < 2 * pairs; t++)
    if (n == 0 || both[t].from != both[n - 1].from || both[t].to != both[n - 1].to) both[n++] = both[t];
  g->ntransitions = n;
  return 0;
}

