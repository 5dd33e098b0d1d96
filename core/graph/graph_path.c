/*
 * graph_path.c: branch-and-bound path synthesis on a motion graph (see
 * graph_path.h). The error of a walk is the paper's path error (Kovar et
 * al. 2002, section 5: squared distance between the motion's root path and
 * the desired path at equal arc length), summed per frame, plus the
 * progress term (graph_path.h: how far the walk lags a pacer at the
 * expected speed, with the lag carried from the plans before), also summed
 * per frame. The search is seeded (the previous plan's walk, or a search of
 * half the horizon) and drops a walk by its error plus a lower bound of its
 * future frames' (graph_path.h, "Bound", "Warm start"). It does not know
 * characters or time: graph_character.c calls it at each node.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anim_error.h"
#include "graph/graph_path.h"
#include "graph/graph_turn.h"

void anim_path_options_default(anim_path_options_t *o) {
  o->horizon = 2.0f;
  o->keep = 0.5f;
  o->max_expansions = 20000;
  o->speed = 0.0f;
  o->progress = 1.0f;
  o->warm = 1;
  o->bound = 1;
  o->memory = 10.0f;
  o->merge = 0.05f;
  o->togo = 1;
}

int anim_path_options_validate(const anim_path_options_t *o) {
  if (!o) return ANIM_EINVAL;
  if (!isfinite(o->horizon) || !isfinite(o->keep) || !isfinite(o->speed) || !isfinite(o->progress) ||
      !isfinite(o->memory) || !isfinite(o->merge))
    return ANIM_ENONFINITE;
  if (!(o->horizon > 0.0f) || o->horizon > 60.0f || !(o->keep > 0.0f) || o->keep > o->horizon || o->max_expansions < 1)
    return ANIM_EINVAL;
  if (o->speed < 0.0f || o->progress < 0.0f || o->memory < 0.0f || o->merge < 0.0f || o->merge > 1.0f)
    return ANIM_EINVAL;
  if ((o->warm != 0 && o->warm != 1) || (o->bound != 0 && o->bound != 1) || (o->togo != 0 && o->togo != 1))
    return ANIM_EINVAL;
  return 0;
}

/* ---- ground maps ---------------------------------------------------------------------- */

/* A rotation about +Y by its cosine and sine: worked out once where many
 * points turn by the same angle (every frame of an edge). */
typedef struct {
  float c, s;
} turn_t;

static turn_t turn_of(float angle) { return (turn_t){cosf(angle), sinf(angle)}; }

static void turn_apply(turn_t t, float x, float z, float *out_x, float *out_z) {
  *out_x = t.c * x + t.s * z, *out_z = -t.s * x + t.c * z;
}

static void rotate(float angle, float x, float z, float *out_x, float *out_z) {
  turn_apply(turn_of(angle), x, z, out_x, out_z);
}

/* anim_ground_map_apply with the map's rotation given. */
static void map_root(const anim_ground_map_t *map, turn_t t, const anim_database_t *db, int frame, float *out_x,
                     float *out_z) {
  vec3 p = db->local_positions[(size_t)frame * (size_t)db->nbones];
  turn_apply(t, p.x, p.z, out_x, out_z);
  *out_x += map->x, *out_z += map->z;
}

void anim_ground_map_apply(const anim_ground_map_t *map, const anim_database_t *db, int frame, float *out_x,
                           float *out_z) {
  map_root(map, turn_of(map->angle), db, frame, out_x, out_z);
}

/* The root's yaw (rad) at a frame. */
static float root_yaw(const anim_database_t *db, int frame) {
  return quat_yaw_angle(db->local_rotations[(size_t)frame * (size_t)db->nbones]);
}

/* The jump from frame i to frame j, their roots' yaws given. */
static anim_ground_map_t jump_with_yaws(const anim_ground_map_t *map, const anim_database_t *db, int i, float yaw_i,
                                        int j, float yaw_j) {
  float xi, zi, xj, zj;
  anim_ground_map_apply(map, db, i, &xi, &zi);
  anim_ground_map_t out = {map->angle + yaw_i - yaw_j, 0.0f, 0.0f};
  vec3 pj = db->local_positions[(size_t)j * (size_t)db->nbones];
  rotate(out.angle, pj.x, pj.z, &xj, &zj);
  out.x = xi - xj, out.z = zi - zj;
  return out;
}

anim_ground_map_t anim_ground_map_jump(const anim_ground_map_t *map, const anim_path_planner_t *p, int i, int j) {
  return jump_with_yaws(map, p->db, i, root_yaw(p->db, i), j, root_yaw(p->db, j));
}

/* ---- expected speed -------------------------------------------------------------------------- */

/* Ground distance the root covers playing an edge: from first_frame - 1
 * (the frame a jump lands on the source's, or the source node's own frame)
 * to the target's frame. A ground map is rigid, so the clip's own frames
 * measure it. */
static float edge_arc(const anim_motion_graph_t *g, const anim_database_t *db, const anim_graph_edge_t *e) {
  float arc = 0.0f;
  for (int f = e->first_frame; f <= g->nodes[e->target].frame; f++) {
    vec3 a = db->local_positions[(size_t)(f - 1) * (size_t)db->nbones],
         b = db->local_positions[(size_t)f * (size_t)db->nbones];
    arc += hypotf(b.x - a.x, b.z - a.z);
  }
  return arc;
}

/* The most the root moves on the ground in one frame of any edge (m): a
 * jump lands the root where it was, so every frame's step is its clip's,
 * from the frame before. Never 0 (the bound divides by it). */
static float step_max(const anim_motion_graph_t *g, const anim_database_t *db) {
  float most = 1e-6f;
  for (int e = 0; e < g->nedges; e++)
    for (int f = g->edges[e].first_frame; f <= g->nodes[g->edges[e].target].frame; f++) {
      vec3 a = db->local_positions[(size_t)(f - 1) * (size_t)db->nbones],
           b = db->local_positions[(size_t)f * (size_t)db->nbones];
      most = fmaxf(most, hypotf(b.x - a.x, b.z - a.z));
    }
  return most;
}

static int compare_floats(const void *pa, const void *pb) {
  float a = *(const float *)pa, b = *(const float *)pb;
  return (a > b) - (a < b);
}

int anim_path_expected_speed(const anim_motion_graph_t *g, const anim_database_t *db, float *out_speed) {
  if (!g || !db || g->db_version != db->version || g->nedges < 1) return ANIM_EINVAL;
  float *speeds = malloc((size_t)g->nedges * sizeof *speeds);
  if (!speeds) return ANIM_ENOMEM;
  for (int e = 0; e < g->nedges; e++)
    speeds[e] = edge_arc(g, db, &g->edges[e]) * db->frame_rate / (float)anim_graph_edge_frames(g, &g->edges[e]);
  qsort(speeds, (size_t)g->nedges, sizeof *speeds, compare_floats);
  int n = g->nedges;
  *out_speed = n % 2 ? speeds[n / 2] : 0.5f * (speeds[n / 2 - 1] + speeds[n / 2]);
  free(speeds);
  return 0;
}

/* ---- lifetime ------------------------------------------------------------------------------ */

void anim_path_planner_free(anim_path_planner_t *p) {
  free(p->node_yaw), free(p->landing_yaw), free(p->points), free(p->cumulative), free(p->children);
  free(p->best_walk), free(p->walk), free(p->plan), free(p->warm), free(p->seed);
  free(p->count_per_depth), free(p->cursor), free(p->seen);
  anim_graph_turn_free(&p->turn);
  memset(p, 0, sizeof *p);
}

int anim_path_planner_init(anim_path_planner_t *p, const anim_motion_graph_t *graph, const anim_database_t *db,
                           const anim_path_options_t *options) {
  memset(p, 0, sizeof *p);
  anim_path_options_t defaults;
  if (!options) anim_path_options_default(&defaults), options = &defaults;
  int rc = anim_path_options_validate(options);
  if (rc) return rc;
  if (!graph || !db || graph->db_version != db->version || graph->nnodes < 1) return ANIM_EINVAL;
  p->graph = graph, p->db = db, p->options = *options;
  p->horizon_frames = (int)ceilf(options->horizon * db->frame_rate);
  p->keep_frames = (int)ceilf(options->keep * db->frame_rate);
  /* w = 1 / sum_{f=1..K} (f/K)^2 = 6K / ((K+1)(2K+1)), K the kept frames:
   * a steady lag that reaches D by the end of the part played costs D^2
   * there (graph_path.h, "Progress"). */
  double k = (double)p->keep_frames;
  p->weight = options->progress * (float)(6.0 * k / ((k + 1.0) * (2.0 * k + 1.0)));
  p->speed = options->speed;
  /* Repeats (graph_path.h): exact at merge 0, else within merge and a few frames. */
  p->same = options->merge > 0.0f ? options->merge : ANIM_PATH_SAME;
  p->same_frames = options->merge > 0.0f ? ANIM_PATH_MERGE_FRAMES : 1;
  if (!(p->speed > 0.0f) && (rc = anim_path_expected_speed(graph, db, &p->speed))) return rc;
  size_t depth = (size_t)p->horizon_frames + 2;
  for (int u = 0; u < graph->nnodes; u++)
    if (graph->nodes[u].nedges > p->max_degree) p->max_degree = graph->nodes[u].nedges;
  p->depth_capacity = (int)depth;
  p->node_yaw = malloc((size_t)graph->nnodes * sizeof(float));
  p->landing_yaw = malloc((size_t)graph->nedges * sizeof(float));
  p->children = malloc(depth * (size_t)(p->max_degree + 1) * sizeof *p->children);
  p->count_per_depth = malloc(depth * sizeof(int)), p->cursor = malloc(depth * sizeof(int));
  p->best_walk = malloc(depth * sizeof(int)), p->walk = malloc(depth * sizeof(int));
  p->plan = malloc(depth * sizeof(int)), p->warm = malloc(depth * sizeof(int));
  p->seed = malloc(depth * sizeof(int));
  p->seen = calloc(ANIM_PATH_SEEN_SLOTS, sizeof *p->seen);
  /* Room for a two-point path (a goal's segment) from the start. */
  p->points = malloc(4 * sizeof(float)), p->cumulative = malloc(3 * sizeof(float)), p->capacity = 2;
  if (!p->node_yaw || !p->landing_yaw || !p->children || !p->count_per_depth || !p->cursor || !p->best_walk ||
      !p->walk || !p->plan || !p->warm || !p->seed || !p->seen || !p->points || !p->cumulative) {
    anim_path_planner_free(p);
    return ANIM_ENOMEM;
  }
  /* The yaws a jump needs, once: its source node's and its landing frame's
   * (a float per node and per edge, where a table per database frame took
   * 4 MB a character on a 1M-frame database). */
  for (int u = 0; u < graph->nnodes; u++) p->node_yaw[u] = root_yaw(db, graph->nodes[u].frame);
  for (int e = 0; e < graph->nedges; e++)
    p->landing_yaw[e] = graph->edges[e].transition >= 0 ? root_yaw(db, graph->edges[e].first_frame - 1) : 0.0f;
  p->step_max = step_max(graph, db);
  /* The graph's turns, for the cost-to-go (graph_path.h): walking is half
   * the expected speed or more. */
  if ((rc = anim_graph_turn_measure(&p->turn, graph, db, fmaxf(0.5f * p->speed, 1e-3f)))) {
    anim_path_planner_free(p);
    return rc;
  }
  return 0;
}

size_t anim_path_planner_heap_bytes(const anim_path_planner_t *p) {
  size_t depth = (size_t)p->depth_capacity;
  return (size_t)p->graph->nnodes * sizeof(float) + (size_t)p->graph->nedges * sizeof(float) +
         depth * (size_t)(p->max_degree + 1) * sizeof *p->children + 7 * depth * sizeof(int) +
         ANIM_PATH_SEEN_SLOTS * sizeof *p->seen + 2 * (size_t)p->capacity * sizeof(float) +
         ((size_t)p->capacity + 1) * sizeof(float) + (size_t)p->graph->nnodes * sizeof(float);
}

int anim_path_planner_set_path(anim_path_planner_t *p, const anim_path_t *path) {
  if (!path || !path->points || path->count < 2 || path->count > ANIM_PATH_MAX_POINTS) return ANIM_EINVAL;
  for (int i = 0; i < 2 * path->count; i++)
    if (!isfinite(path->points[i])) return ANIM_ENONFINITE;
  if (path->count > p->capacity) {
    float *points = realloc(p->points, 2 * (size_t)path->count * sizeof(float));
    if (!points) return ANIM_ENOMEM;
    p->points = points;
    float *cumulative = realloc(p->cumulative, ((size_t)path->count + 1) * sizeof(float));
    if (!cumulative) return ANIM_ENOMEM;
    p->cumulative = cumulative, p->capacity = path->count;
  }
  memcpy(p->points, path->points, 2 * (size_t)path->count * sizeof(float));
  p->carry = 0; /* a new path: no lag carried */
  p->count = path->count, p->closed = path->closed != 0;
  int segments = p->closed ? p->count : p->count - 1;
  p->cumulative[0] = 0.0f;
  for (int k = 0; k < segments; k++) {
    int next = (k + 1) % p->count;
    p->cumulative[k + 1] = p->cumulative[k] + hypotf(p->points[2 * next] - p->points[2 * k],
                                                      p->points[2 * next + 1] - p->points[2 * k + 1]);
  }
  p->length = p->cumulative[segments];
  if (!(p->length > 0.0f)) {
    p->count = 0;
    return ANIM_EINVAL;
  }
  return 0;
}

/* ---- the path ----------------------------------------------------------------------------- */

static int segments_of(const anim_path_planner_t *p) { return p->closed ? p->count : p->count - 1; }

void anim_path_planner_point(const anim_path_planner_t *p, float s, float *out_x, float *out_z) {
  if (p->closed) {
    s = fmodf(s, p->length);
    if (s < 0.0f) s += p->length;
  } else {
    s = clampf(s, 0.0f, p->length);
  }
  int lo = 0, hi = segments_of(p) - 1;
  while (lo < hi) { /* the last segment whose start is <= s */
    int mid = (lo + hi + 1) / 2;
    if (p->cumulative[mid] <= s) lo = mid;
    else hi = mid - 1;
  }
  int next = (lo + 1) % p->count;
  float span = p->cumulative[lo + 1] - p->cumulative[lo];
  float u = span > 0.0f ? clampf((s - p->cumulative[lo]) / span, 0.0f, 1.0f) : 0.0f;
  *out_x = p->points[2 * lo] + u * (p->points[2 * next] - p->points[2 * lo]);
  *out_z = p->points[2 * lo + 1] + u * (p->points[2 * next + 1] - p->points[2 * lo + 1]);
}

/* anim_path_planner_point for an arc that only grows along a walk: the
 * segment is found from *io_segment on (back to 0 when a closed path wraps),
 * the same segment the binary search finds (the last whose start <= s),
 * without searching from scratch each frame. */
static void point_from(const anim_path_planner_t *p, float s, int *io_segment, float *out_x, float *out_z) {
  if (p->closed) {
    if (s >= p->length || s < 0.0f) s = fmodf(s, p->length);
    if (s < 0.0f) s += p->length;
  } else {
    s = clampf(s, 0.0f, p->length);
  }
  int k = *io_segment, last = segments_of(p) - 1;
  if (k < 0 || k > last || p->cumulative[k] > s) k = 0;
  while (k < last && p->cumulative[k + 1] <= s) k++;
  *io_segment = k;
  int next = (k + 1) % p->count;
  float span = p->cumulative[k + 1] - p->cumulative[k];
  float u = span > 0.0f ? clampf((s - p->cumulative[k]) / span, 0.0f, 1.0f) : 0.0f;
  *out_x = p->points[2 * k] + u * (p->points[2 * next] - p->points[2 * k]);
  *out_z = p->points[2 * k + 1] + u * (p->points[2 * next + 1] - p->points[2 * k + 1]);
}

/* The parameter in [u_lo, u_hi] of segment a->b nearest (x, z). */
static float nearest_on_segment(float ax, float az, float bx, float bz, float x, float z, float u_lo, float u_hi) {
  float dx = bx - ax, dz = bz - az, len2 = dx * dx + dz * dz;
  float u = len2 > 0.0f ? ((x - ax) * dx + (z - az) * dz) / len2 : 0.0f;
  return clampf(u, u_lo, u_hi);
}

float anim_path_planner_project(const anim_path_planner_t *p, float x, float z, float s_hint, float window,
                                float *out_distance) {
  float best = INFINITY, best_s = 0.0f;
  for (int pass = 0; pass < 2 && !isfinite(best); pass++) {
    int windowed = pass == 0 && window >= 0.0f;
    for (int k = 0; k < segments_of(p); k++) {
      float a0 = p->cumulative[k], a1 = p->cumulative[k + 1], span = a1 - a0;
      int next = (k + 1) % p->count;
      /* Where the allowed arc interval meets this segment (closed paths: the
       * interval shifted by a lap either way too). */
      for (int lap = -1; lap <= 1; lap++) {
        float u_lo = 0.0f, u_hi = 1.0f;
        if (windowed) {
          if (lap != 0 && !p->closed) continue;
          float lo = s_hint - window + (float)lap * p->length, hi = s_hint + window + (float)lap * p->length;
          if (hi < a0 || lo > a1 || !(span > 0.0f)) continue;
          u_lo = fmaxf(0.0f, (lo - a0) / span), u_hi = fminf(1.0f, (hi - a0) / span);
        } else if (lap != 0) {
          continue;
        }
        float u = nearest_on_segment(p->points[2 * k], p->points[2 * k + 1], p->points[2 * next],
                                     p->points[2 * next + 1], x, z, u_lo, u_hi);
        float px = p->points[2 * k] + u * (p->points[2 * next] - p->points[2 * k]);
        float pz = p->points[2 * k + 1] + u * (p->points[2 * next + 1] - p->points[2 * k + 1]);
        float d = hypotf(px - x, pz - z);
        if (d < best) best = d, best_s = a0 + u * span;
      }
    }
  }
  if (out_distance) *out_distance = best;
  return best_s;
}

/* ---- search --------------------------------------------------------------------------------- */

/* How far a walk that travelled s in `frames` frames is behind the pacer,
 * which started lag0 ahead and stops at an open path's end, or at lag0
 * when that is further: the lag carried is never capped below itself, else
 * standing at the start of a path shorter than it costs no more the longer
 * it stands (graph_path.h, "Carried lag"). Negative: ahead of it. */
static float lag_behind(const anim_path_planner_t *p, int frames, float s) {
  return fminf(p->lag0 + p->speed * (float)frames / p->db->frame_rate, p->stop) - s;
}

/* The progress term's weight at frame `frames`: w, or 1 once the pacer
 * stands at an open path's end, in a plan that carries no lag (one that
 * does is still starting a character that stood: the carried lag is its
 * push, and weighing the end as well threw the 5 m line along +X off its
 * line, 0.31 m mean where 0.12, never arriving): a walk short
 * of the end is then that far from where it should stand, weighed as the
 * path error weighs a distance (times options.progress: 0 leaves the
 * paper's error alone; graph_path.h, "The end"). Never below w, so
 * future_bound's w keeps it a lower bound. */
static float end_weight(const anim_path_planner_t *p, int frames) {
  if (p->closed || p->lag0 > 0.0f || p->speed * (float)frames / p->db->frame_rate < p->rest)
    return p->weight;
  return fmaxf(p->weight, p->options.progress);
}

/* sum_{k=1..n} max(0, a - b k)^2, b > 0: the least error of n frames
 * whose term starts below a and falls by at most b a frame. */
static float falling_squares(float a, float b, int n) {
  if (!(a > 0.0f) || n < 1) return 0.0f;
  double m = floor((double)a / (double)b);
  if (m > (double)n) m = (double)n;
  if (m < 1.0) return 0.0f;
  double ad = a, bd = b;
  return (float)(m * ad * ad - ad * bd * m * (m + 1.0) + bd * bd * m * (m + 1.0) * (2.0 * m + 1.0) / 6.0);
}

/* A lower bound of what the frames after `st` add to its error (m^2), so a
 * walk is dropped when error + bound reaches the best complete walk's
 * (graph_path.h, "Bound"). off: the last frame's distance from its path
 * point. Every frame the root moves at most step_max, so its arc s grows by
 * at most that, its path point (1-Lipschitz in the arc) moves as much, and
 * the distance between them falls by at most 2 step_max; the lag falls by at
 * most step_max less what the pacer gains. Frames are counted to the
 * horizon (past an open path's end too: there the path point stays at the
 * end, and the distance falls by at most step_max, less than assumed). */
static float future_bound(const anim_path_planner_t *p, const anim_path_step_t *st, float off) {
  int n = p->horizon_frames - st->frames;
  if (n < 1) return 0.0f;
  float dmax = p->step_max;
  float bound = falling_squares(off, 2.0f * dmax, n);
  if (p->weight > 0.0f) {
    /* While the pacer never reaches an open path's end in the horizon, it
     * gains on the walk every frame; else it may stop. */
    float fall = p->pacer_free ? fmaxf(dmax - p->speed / p->db->frame_rate, 1e-6f) : dmax;
    bound += p->weight * falling_squares(lag_behind(p, st->frames, st->s), fall, n);
  }
  /* A margin for float rounding: the bound must stay below the error the
   * frames will add as extend sums it. */
  return 0.999f * bound;
}

/* The direction (rad, graph_path.h's angles: 0 along +Z, pi/2 along +X)
 * of the path's segment at arc s (wrapping when closed, clamped when open). */
static float direction_at(const anim_path_planner_t *p, float s) {
  float x, z;
  int k = 0;
  point_from(p, s, &k, &x, &z);
  int next = (k + 1) % p->count;
  return atan2f(p->points[2 * next] - p->points[2 * k], p->points[2 * next + 1] - p->points[2 * k + 1]);
}

/* graph_path.h, "Cost-to-go": the graph's time to walk along the path from
 * the walk's last frame (graph_turn.h), over which the pacer goes on and
 * the walk is taken to make no progress: the lag a at the horizon grows at
 * v, up to the pacer's stop, charged w per frame, as the progress term's
 * frames are (integrated in closed form, times the frame rate). */
float anim_path_planner_cost_to_go(const anim_path_planner_t *p, const anim_ground_map_t *map, int frame, int node,
                                   float s0, float s) {
  /* No progress term, or at an open path's end (a place to stand, facing
   * any way): nothing to charge. */
  if (!p->options.togo || !(p->weight > 0.0f) || (!p->closed && s0 + s >= p->length - ANIM_PATH_ARRIVE_DISTANCE)) return 0.0f;
  float cap = p->stop - s;
  if (!(cap > 0.0f)) return 0.0f;
  float time = anim_graph_turn_time(&p->turn, p->graph, p->db, map->angle, frame, node, direction_at(p, s0 + s));
  double a = lag_behind(p, p->horizon_frames, s);
  return p->weight * p->db->frame_rate * (float)anim_lag_ramp_integral(a, p->speed, cap, time);
}

/* Extends `from` by edge e into *out; stops counting at the horizon (past
 * an open path's end each frame counts its distance from the end: the walk
 * should stand there). Returns 1 when the walk is complete, 0 when it goes
 * on, -1 when its error (plus, with options.bound, the least its future
 * adds) reached bound (dropped). out->floor: error plus that least future. */
static int extend(const anim_path_planner_t *p, const anim_path_step_t *from, int e, float s0, float bound,
                  anim_path_step_t *out) {
  const anim_motion_graph_t *g = p->graph;
  const anim_graph_edge_t *edge = &g->edges[e];
  *out = *from;
  out->node = edge->target;
  /* The map's rotation: worked out at a jump only (sincosf was 5% of the
   * search's time when worked out at every edge). */
  if (edge->transition >= 0) {
    out->map = jump_with_yaws(&from->map, p->db, g->nodes[from->node].frame, p->node_yaw[from->node],
                              edge->first_frame - 1, p->landing_yaw[e]);
    turn_t t = turn_of(out->map.angle);
    out->turn_c = t.c, out->turn_s = t.s;
  }
  turn_t turn = {out->turn_c, out->turn_s};
  int last = g->nodes[edge->target].frame, future = p->options.bound;
  float off = 0.0f;
  int played = edge->first_frame;
  for (int f = edge->first_frame; f <= last; f++) {
    if (out->frames >= p->horizon_frames) break;
    played = f;
    float x, z, tx, tz;
    map_root(&out->map, turn, p->db, f, &x, &z);
    out->s += sqrtf((x - out->x) * (x - out->x) + (z - out->z) * (z - out->z));
    out->x = x, out->z = z;
    point_from(p, s0 + out->s, &out->segment, &tx, &tz);
    float d2 = (x - tx) * (x - tx) + (z - tz) * (z - tz);
    out->error += d2;
    out->frames++;
    /* Behind the pacer, which stops at an open path's end. */
    float lag = lag_behind(p, out->frames, out->s);
    if (lag > 0.0f) {
      float w = end_weight(p, out->frames);
      out->progress += w * lag * lag, out->error += w * lag * lag;
    }
    if (out->error >= bound) return -1;
    off = d2;
  }
  if (out->frames >= p->horizon_frames) {
    /* Complete: what it still has to spend to head along the path
     * (graph_path.h, "Cost-to-go"), >= 0, so a walk's floor stays below it. */
    float togo = anim_path_planner_cost_to_go(p, &out->map, played, out->node, s0, out->s);
    out->error += togo, out->progress += togo;
    out->floor = out->error;
    return out->error >= bound ? -1 : 1;
  }
  out->floor = out->error + (future ? future_bound(p, out, sqrtf(off)) : 0.0f);
  return out->floor >= bound ? -1 : 0;
}

/* Every edge out of `from` that keeps the walk's error under bound, as
 * children of depth d, best first: by the error per frame of the edge
 * itself, so that the first walk down is the greedy one and sets a bound
 * early. Returns 0, or 1 when the budget ran out. */
static int compare_children(const void *pa, const void *pb) {
  const anim_path_child_t *a = pa, *b = pb;
  return (a->key > b->key) - (a->key < b->key);
}

/* Dominance (graph_path.h, "Repeats"): a walk that reaches a node in the
 * same bucket of frames as one seen before in this search (p->same_frames:
 * 1 at options.merge 0), placed the same way within p->same (m, rad: map
 * and arc), has (nearly) the same futures; when it is no earlier and its
 * error no less, none of them can do (much) better, so it is dropped. A
 * table of the last walk seen per (node, bucket) hash slot, stamped per
 * search. */
static int dominated(anim_path_planner_t *p, const anim_path_step_t *st) {
  int bucket = st->frames / p->same_frames;
  uint32_t h = ((uint32_t)st->node * 2654435761u) ^ ((uint32_t)bucket * 40503u);
  anim_path_seen_t *e = &p->seen[h & (ANIM_PATH_SEEN_SLOTS - 1)];
  float same = p->same;
  if (e->stamp == p->stamp && e->node == st->node && e->frames / p->same_frames == bucket &&
      fabsf(e->angle - st->map.angle) < same && fabsf(e->x - st->map.x) < same && fabsf(e->z - st->map.z) < same &&
      fabsf(e->s - st->s) < same) {
    /* Later and no better: dropped. */
    if (st->frames >= e->frames && st->error >= e->error) return 1;
  }
  *e = (anim_path_seen_t){p->stamp, st->node, st->frames, st->map.angle, st->map.x, st->map.z, st->s, st->error};
  return 0;
}

static int expand(anim_path_planner_t *p, int d, const anim_path_step_t *from, float s0, float bound) {
  const anim_graph_node_t *node = &p->graph->nodes[from->node];
  anim_path_child_t *children = p->children + (size_t)d * (size_t)p->max_degree;
  int n = 0;
  p->count_per_depth[d] = 0, p->cursor[d] = 0;
  for (int i = 0; i < node->nedges; i++) {
    if (p->expansions >= p->limit) return 1;
    p->expansions++;
    anim_path_child_t *c = &children[n];
    c->edge = node->first_edge + i;
    c->done = extend(p, from, c->edge, s0, bound, &c->step);
    if (c->done < 0 || (!c->done && p->seen && dominated(p, &c->step))) continue;
    int frames = c->step.frames - from->frames;
    c->key = (c->step.error - from->error) / (float)(frames > 0 ? frames : 1);
    n++;
  }
  qsort(children, (size_t)n, sizeof *children, compare_children);
  p->count_per_depth[d] = n;
  return 0;
}

/* A walk from root made of edges[0..n) (cut where it is complete) and, when
 * they end before it is, completed greedily (each step the child of least
 * key, as the search's first walk down), written to out_walk. Returns its
 * error, INFINITY when there is none (a dead end, the budget out). */
static float complete(anim_path_planner_t *p, const anim_path_step_t *root, float s0, const int *edges, int n,
                      int *out_walk, int *out_length, float *out_progress) {
  anim_path_step_t at = *root;
  int k = 0, done = 0;
  for (int i = 0; i < n && !done && k + 1 < p->depth_capacity; i++) {
    anim_path_step_t next;
    done = extend(p, &at, edges[i], s0, INFINITY, &next);
    out_walk[k++] = edges[i], at = next;
  }
  while (!done && k + 1 < p->depth_capacity) {
    /* Scratch of depth k: the search starts at depth 0 afterwards. */
    if (expand(p, k, &at, s0, INFINITY) || p->count_per_depth[k] < 1) return INFINITY;
    const anim_path_child_t *c = &p->children[(size_t)k * (size_t)p->max_degree];
    out_walk[k++] = c->edge, at = c->step, done = c->done;
  }
  *out_length = k, *out_progress = at.progress;
  return at.error;
}

/* Depth-first branch and bound from root under bound *io_best (whose walk
 * is out_walk[0..*io_length)), until the search ends or `limit` edges have
 * been tried in all (then *io_exhausted). */
static void search(anim_path_planner_t *p, const anim_path_step_t *root, float s0, int limit, float *io_best,
                   float *io_progress, int *out_walk, int *io_length, int *io_exhausted) {
  p->limit = limit;
  p->stamp++; /* a new table of walks seen */
  float best = *io_best;
  int exhausted = expand(p, 0, root, s0, best), depth = 0;
  while (depth >= 0 && !exhausted) {
    if (p->cursor[depth] >= p->count_per_depth[depth]) {
      depth--;
      continue;
    }
    const anim_path_child_t *c = &p->children[(size_t)depth * (size_t)p->max_degree + (size_t)p->cursor[depth]++];
    if (c->step.floor >= best) continue; /* the bound moved since it was made */
    p->walk[depth] = c->edge;
    if (c->done || depth + 1 >= p->depth_capacity) {
      best = c->step.error, *io_progress = c->step.progress;
      memcpy(out_walk, p->walk, (size_t)(depth + 1) * sizeof(int));
      *io_length = depth + 1;
      continue;
    }
    depth++;
    exhausted = expand(p, depth, &c->step, s0, best);
  }
  *io_best = best, *io_exhausted = exhausted;
}

/* The seed (options.warm, graph_path.h "Warm start"): a walk whose error
 * bounds the search from its start and is the answer when the budget runs
 * out before anything better: the previous plan's walk beyond its kept
 * part, when it starts here; else (a first plan, or one from elsewhere) the
 * best walk of half the horizon, searched with a quarter of the budget.
 * Either is completed greedily. Fills best_walk; returns its error
 * (INFINITY: none). */
static float seed(anim_path_planner_t *p, int start, const anim_path_step_t *root, float s0, float *out_progress) {
  float error = INFINITY;
  int length = 0;
  if (p->nwarm > 0 && p->warm_node == start) {
    error = complete(p, root, s0, p->warm, p->nwarm, p->best_walk, &length, out_progress);
  } else if (p->horizon_frames >= 2) {
    float short_best = INFINITY, short_progress = 0.0f;
    int horizon = p->horizon_frames, short_length = 0, exhausted = 0;
    p->horizon_frames = horizon / 2;
    search(p, root, s0, p->options.max_expansions / 4, &short_best, &short_progress, p->seed, &short_length,
           &exhausted);
    p->horizon_frames = horizon, p->limit = p->options.max_expansions;
    if (short_length > 0) error = complete(p, root, s0, p->seed, short_length, p->best_walk, &length, out_progress);
  }
  p->best_length = isfinite(error) ? length : 0;
  return error;
}

int anim_path_planner_plan(anim_path_planner_t *p, int start, anim_ground_map_t map, float s0) {
  const anim_motion_graph_t *g = p->graph;
  if (p->count < 2 || start < 0 || start >= g->nnodes || !isfinite(map.angle + map.x + map.z + s0))
    return ANIM_EINVAL;
  p->expansions = 0, p->exhausted = 0, p->best_length = 0, p->nplan = 0, p->plan_frames = 0;
  p->limit = p->options.max_expansions;
  anim_path_step_t root;
  root.node = start, root.map = map, root.s = 0.0f, root.error = 0.0f, root.progress = 0.0f, root.frames = 0;
  root.floor = 0.0f, root.segment = 0;
  turn_t root_turn = turn_of(map.angle);
  root.turn_c = root_turn.c, root.turn_s = root_turn.s;
  p->rest = p->closed ? INFINITY : fmaxf(0.0f, p->length - s0);
  /* The lag carried from the plans before, when this one goes on from where
   * the last one's kept part ends on the same path: the pacer went on at the
   * expected speed while that part was played, and the lag decays. */
  p->lag0 = 0.0f, p->behind = 0.0f;
  /* At an open path's end (arrived, graph_path.h "The end") nothing is
   * left to catch up: a lag carried there would walk the character off
   * the end it stands at. */
  if (p->options.memory > 0.0f && p->carry && p->warm_node == start && p->rest > ANIM_PATH_ARRIVE_DISTANCE) {
    float dt = (float)p->carry_frames / p->db->frame_rate, ds = s0 - p->carry_s0;
    if (p->closed) ds -= p->length * roundf(ds / p->length);
    p->behind = fmaxf(0.0f, p->carry_lag + p->speed * dt - ds) * expf(-dt / p->options.memory);
    p->lag0 = fmaxf(0.0f, p->behind - p->speed * ANIM_PATH_LAG_SLACK);
  }
  /* Free: the pacer does not stop within the horizon (with lag0 past rest
   * it is stopped from the start). */
  p->stop = fmaxf(p->rest, p->lag0);
  p->pacer_free = p->lag0 + p->speed * (float)p->horizon_frames / p->db->frame_rate <= p->stop;
  anim_ground_map_apply(&map, p->db, g->nodes[start].frame, &root.x, &root.z);
  /* Going on along the same path from where the last plan's kept part ends. */
  int continuing = p->carry && p->nwarm > 0 && p->warm_node == start;
  float best_progress = 0.0f, best = p->options.warm ? seed(p, start, &root, s0, &best_progress) : INFINITY;
  p->warm_error = best;
  /* Standing at an open path's end (graph_path.h, "The end"): a seed that
   * keeps within ANIM_PATH_STAND_DISTANCE of it (root mean square over the
   * horizon) is taken as it is; no search can do much better, and a crowd
   * of characters standing at their paths' ends costs little more than one
   * wandering. */
  p->searched = !(continuing && p->options.warm && p->rest <= ANIM_PATH_ARRIVE_DISTANCE && isfinite(best) &&
                  best <= (float)p->horizon_frames * ANIM_PATH_STAND_DISTANCE * ANIM_PATH_STAND_DISTANCE);
  if (p->searched)
    search(p, &root, s0, p->options.max_expansions, &best, &best_progress, p->best_walk, &p->best_length,
           &p->exhausted);
  p->plan_error = best, p->plan_progress = best_progress;
  int i = 0;
  for (; i < p->best_length && p->plan_frames < p->keep_frames; i++) {
    p->plan[p->nplan++] = p->best_walk[i];
    p->plan_frames += anim_graph_edge_frames(g, &g->edges[p->best_walk[i]]);
  }
  /* What the next plan, from where the kept part ends, starts from. */
  p->nwarm = 0;
  p->carry = p->nplan > 0, p->carry_lag = p->behind, p->carry_s0 = s0, p->carry_frames = p->plan_frames;
  if (p->nplan > 0) {
    p->warm_node = g->edges[p->plan[p->nplan - 1]].target;
    for (; i < p->best_length; i++) p->warm[p->nwarm++] = p->best_walk[i];
  }
  return 0;
}
