/* graph_turn.c: a motion graph's turn rate, facing and time to walk,
 * measured from its clips (see graph_turn.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anim_error.h"
#include "graph/graph_turn.h"

static float root_yaw(const anim_database_t *db, int frame) {
  return quat_yaw_angle(db->local_rotations[(size_t)frame * (size_t)db->nbones]);
}

/* The root's ground step into `frame` from the frame before (m). */
static void root_step(const anim_database_t *db, int frame, float *out_dx, float *out_dz) {
  vec3 a = db->local_positions[(size_t)(frame - 1) * (size_t)db->nbones],
       b = db->local_positions[(size_t)frame * (size_t)db->nbones];
  *out_dx = b.x - a.x, *out_dz = b.z - a.z;
}

static float wrap_angle(float a) {
  a = fmodf(a + (float)M_PI, 2.0f * (float)M_PI);
  if (a < 0.0f) a += 2.0f * (float)M_PI;
  return a - (float)M_PI;
}

void anim_graph_turn_free(anim_graph_turn_t *t) {
  free(t->to_walk);
  memset(t, 0, sizeof *t);
}

/* The fastest turn sustained over a window ending on one of e's frames,
 * every step of the window walking; and the facing offsets of e's walking
 * frames summed as unit vectors. */
static float edge_turn_rate(const anim_motion_graph_t *g, const anim_database_t *db, const anim_graph_edge_t *e,
                            int window, float min_step, double *io_sin, double *io_cos) {
  int last = g->nodes[e->target].frame;
  int start = db->ranges[anim_database_range_of(db, last)].start;
  int lo = e->first_frame - window;
  if (lo < start) lo = start;
  float most = 0.0f, yaw = 0.0f, prev = root_yaw(db, lo);
  /* unwrapped yaw and walking at frames lo..last, kept for the window */
  float ring_yaw[256];
  int walking_run = 0; /* consecutive walking steps ending at f */
  if (window >= 256) window = 255;
  ring_yaw[lo & 255] = 0.0f;
  for (int f = lo + 1; f <= last; f++) {
    float y = root_yaw(db, f), dx, dz;
    yaw += wrap_angle(y - prev), prev = y;
    ring_yaw[f & 255] = yaw;
    root_step(db, f, &dx, &dz);
    int walks = dx * dx + dz * dz >= min_step * min_step;
    walking_run = walks ? walking_run + 1 : 0;
    if (f < e->first_frame) continue;
    if (walks) {
      float off = wrap_angle(y - atan2f(dx, dz));
      *io_sin += sinf(off), *io_cos += cosf(off);
    }
    if (walking_run >= window) most = fmaxf(most, fabsf(yaw - ring_yaw[(f - window) & 255]));
  }
  return most;
}

int anim_graph_turn_measure(anim_graph_turn_t *t, const anim_motion_graph_t *g, const anim_database_t *db,
                            float walk_speed) {
  memset(t, 0, sizeof *t);
  if (!g || !db || g->db_version != db->version || !(walk_speed > 0.0f)) return ANIM_EINVAL;
  float rate = db->frame_rate, min_step = walk_speed / rate;
  int window = (int)lroundf(ANIM_TURN_WINDOW * rate);
  if (window < 1) window = 1;
  t->walk_speed = walk_speed, t->nnodes = g->nnodes;
  t->to_walk = malloc((size_t)(g->nnodes > 0 ? g->nnodes : 1) * sizeof(float));
  int *walk_in = malloc((size_t)(g->nedges > 0 ? g->nedges : 1) * sizeof(int));
  if (!t->to_walk || !walk_in) {
    free(walk_in);
    anim_graph_turn_free(t);
    return ANIM_ENOMEM;
  }
  double sin_sum = 0.0, cos_sum = 0.0;
  float most = 0.0f;
  for (int e = 0; e < g->nedges; e++) {
    const anim_graph_edge_t *edge = &g->edges[e];
    most = fmaxf(most, edge_turn_rate(g, db, edge, window, min_step, &sin_sum, &cos_sum));
    /* Frames played on e until one walks (0: none does). */
    walk_in[e] = 0;
    for (int f = edge->first_frame; f <= g->nodes[edge->target].frame && !walk_in[e]; f++) {
      float dx, dz;
      root_step(db, f, &dx, &dz);
      if (dx * dx + dz * dz >= min_step * min_step) walk_in[e] = f - edge->first_frame + 1;
    }
  }
  t->turn_rate = most / ((float)window / rate);
  t->facing = sin_sum != 0.0 || cos_sum != 0.0 ? (float)atan2(sin_sum, cos_sum) : 0.0f;
  /* Shortest frames to a walking frame, by relaxation over the edges
   * (Bellman-Ford: at most nnodes passes, usually a few). */
  for (int u = 0; u < g->nnodes; u++) t->to_walk[u] = INFINITY;
  for (int pass = 0, changed = 1; changed && pass < g->nnodes; pass++) {
    changed = 0;
    for (int u = 0; u < g->nnodes; u++)
      for (int i = 0; i < g->nodes[u].nedges; i++) {
        int e = g->nodes[u].first_edge + i;
        float frames = walk_in[e] ? (float)walk_in[e]
                                  : (float)anim_graph_edge_frames(g, &g->edges[e]) + t->to_walk[g->edges[e].target];
        if (frames < t->to_walk[u]) t->to_walk[u] = frames, changed = 1;
      }
  }
  for (int u = 0; u < g->nnodes; u++) t->to_walk[u] = isfinite(t->to_walk[u]) ? t->to_walk[u] / rate : 0.0f;
  free(walk_in);
  return 0;
}

float anim_graph_turn_heading(const anim_graph_turn_t *t, const anim_database_t *db, float map_angle, int frame) {
  return map_angle + root_yaw(db, frame) - t->facing;
}

float anim_graph_turn_time(const anim_graph_turn_t *t, const anim_motion_graph_t *g, const anim_database_t *db,
                           float map_angle, int frame, int node, float direction) {
  float dx, dz, time = 0.0f;
  root_step(db, frame, &dx, &dz);
  if (dx * dx + dz * dz < squaref(t->walk_speed / db->frame_rate))
    time = (float)(g->nodes[node].frame - frame) / db->frame_rate + t->to_walk[node];
  if (t->turn_rate > 0.0f)
    time += fabsf(wrap_angle(direction - anim_graph_turn_heading(t, db, map_angle, frame))) / t->turn_rate;
  return time;
}

double anim_lag_ramp_integral(double a, double v, double cap, double T) {
  if (!(T > 0.0) || !(cap > 0.0)) return 0.0;
  if (!(v > 0.0)) {
    double l = a < 0.0 ? 0.0 : a > cap ? cap : a;
    return l * l * T;
  }
  /* Grows over [t0, t1], capped from t1 on. */
  double t0 = a < 0.0 ? -a / v : 0.0, t1 = (cap - a) / v;
  if (t1 < 0.0) t1 = 0.0;
  double sum = 0.0, hi = t1 < T ? t1 : T;
  if (hi > t0) {
    double x0 = a + v * t0, x1 = a + v * hi;
    sum += (x1 * x1 * x1 - x0 * x0 * x0) / (3.0 * v);
  }
  if (T > t1) sum += cap * cap * (T - t1);
  return sum;
}
