/*
 * graph_turn.h: how fast a motion graph can come round to a new heading,
 * measured once from the graph's own clips, for the path planner's
 * cost-to-go (graph_path.h, "Cost-to-go"): what a walk that ends its
 * horizon facing away from the path, or standing, still has to spend before
 * it can follow the path.
 *
 * Three measures, none picked by hand:
 *  - turn_rate: the largest turn rate (rad/s) the graph's edges sustain
 *    while walking: over every window of ANIM_TURN_WINDOW seconds of clip
 *    that ends on a frame of an edge, stays in one range and moves the root
 *    at least walk_speed every frame, the root's yaw change over the
 *    window's time. The default database: 98.8 deg/s (its sharp walk
 *    turns, 90 deg/s, with the gait's sway); Bandai Namco: 97.0 deg/s.
 *  - facing: the root's facing (its +Z on the ground) less the direction it
 *    travels, the median over the edges' walking frames (0 on the default
 *    database; a captured skeleton's root may face elsewhere), so that the
 *    heading of a standing frame is the way it will walk.
 *  - to_walk[node]: the least time (s) from the node's frame, along any
 *    walk of the graph, to a frame that moves at least walk_speed (the
 *    default database's idle node: 0.72 s, into the walk start part way
 *    through its standing second; every node of Bandai Namco's graph walks
 *    within a frame), by shortest paths over the edges (0 where a node walks at
 *    once; 0 too where no walk ever walks: there is nothing to charge).
 * walk_speed is half the planner's expected speed (graph_path.h,
 * "Progress"): a frame at least that fast is walking.
 *
 * What it does not: know paths or the planner's weights (graph_path.c
 * charges the time as lag); it allocates one float per node.
 */
#ifndef ANIM_GRAPH_TURN_H
#define ANIM_GRAPH_TURN_H

#include "database/database.h"
#include "graph/motion_graph.h"

/* s: the window over which a turn must be sustained to count. */
#define ANIM_TURN_WINDOW 0.5f

typedef struct {
  float turn_rate;  /* rad/s, >= 0 */
  float facing;     /* rad: the root's facing less its travel direction */
  float walk_speed; /* m/s */
  float *to_walk;   /* [graph->nnodes] s */
  int nnodes;
} anim_graph_turn_t;

/* Measures graph (built on db) with walking at walk_speed (> 0) or more.
 * 0, ANIM_EINVAL (graph of another database, walk_speed not > 0),
 * ANIM_ENOMEM. Free with anim_graph_turn_free. */
int anim_graph_turn_measure(anim_graph_turn_t *out_turn, const anim_motion_graph_t *graph, const anim_database_t *db,
                            float walk_speed);
void anim_graph_turn_free(anim_graph_turn_t *turn);

/* The root's heading (rad, world: the map's angle plus the frame's own)
 * that frame walks along, placed by a map of angle map_angle. */
float anim_graph_turn_heading(const anim_graph_turn_t *turn, const anim_database_t *db, float map_angle, int frame);

/* Seconds the graph needs, from `frame` (played on an edge toward node),
 * to head off along `direction` (rad): the time to walk (0 when the frame
 * already walks, else the edge's frames left to its target node and that
 * node's to_walk) plus the heading's error over turn_rate (0 when the graph
 * cannot turn: nothing to choose between). */
float anim_graph_turn_time(const anim_graph_turn_t *turn, const anim_motion_graph_t *graph,
                           const anim_database_t *db, float map_angle, int frame, int node, float direction);

/* The integral over t in [0, T] of clamp(a + v t, 0, cap)^2 (m^2 s): a lag
 * that starts at a (m, negative: ahead), grows at v (m/s, >= 0) and stops at
 * cap (m), squared; 0 when T <= 0 or cap <= 0. Closed form, piecewise: 0
 * while a + v t < 0, ((a + v t1)^3 - (a + v t0)^3) / (3 v) while it grows,
 * cap^2 per second once capped. */
double anim_lag_ramp_integral(double a, double v, double cap, double T);

#endif
