/*
 * graph_path.h: path synthesis on a motion graph (Kovar, Gleicher and
 * Pighin 2002, sections 4 and 5): the graph walk whose root path best
 * follows a 2-D polyline, by branch and bound with a horizon.
 *
 * A walk's root path: from the start node's frame, placed in the world by a
 * ground transform (angle about +Y and translation), each frame's root
 * (database bone 0, projected on the ground) is mapped by that transform;
 * an edge that jumps from frame i to frame j re-places the clip so that j's
 * root lands on i's, position and facing (what the inertializer's anchor
 * does when the character takes it). Its error is the paper's path error,
 * the sum over its frames of |root(f) - P(s0 + s(f))|^2, where s(f) is the
 * arc length the root has travelled since the start and P(s) the point of
 * the polyline at arc length s from its start (wrapping round when closed),
 * plus a progress term (below). The search ends a walk at the horizon
 * (frames beyond it are not counted); on an open path P(s) stays at the
 * path's end once s0 + s passes it (below, "The end").
 *
 * Progress. The paper's error compares the walk with the path at the arc
 * length the walk itself has travelled, so a walk that does not travel is
 * never wrong: on a graph with an idle loop the best walk stands at the
 * path's start. Measured on the procedural default database (its graph
 * keeps the idle clip), 20 s on a 10 m line from the idle node: 2.4 m
 * covered (0 m along +x), 0.008 m from the line. So frame f of a walk
 * (f = 1..N over the horizon, t_f = f / rate) also adds
 *     w lag_f^2,  lag_f = max(0, min(v t_f, rest) - s(f)),
 * how far the walk is behind a pacer going along the path at the expected
 * speed v from where the plan starts (rest: what is left of an open path
 * after s0; a closed path has no end). Only lagging counts: a faster walk
 * pays nothing and the path error alone judges where it goes. v is the
 * median root speed of the graph's edges (options.speed overrides it):
 * 1.50 m/s on the default database (its walk), 1.15 m/s on Bandai Namco.
 *
 * The weight, w = 1 / sum_{f=1..K} (f/K)^2 = 6K / ((K+1)(2K+1)) (about
 * 3/K), K the frames of the part of a plan that is played (keep): the
 * character plays only that part, and the next plan starts a new pacer
 * from where it then is, so what a walk loses to the pacer while it is
 * played is lost for good (no later plan charges it), while the rest of
 * the horizon only judges where that part leads. So a steady lag that
 * reaches D by the end of the played part (lag_f = D f/K) costs D^2: one
 * frame of path error at the distance lost. Over the horizon (N frames, T
 * seconds) a steady shortfall D_T costs about (N/K) D_T^2, where the path
 * error charges a walk e off the path on every frame N e^2: a shortfall
 * weighs like an offset of D_T / sqrt(K) on every frame. With the default
 * keep (K = 30): standing still on the default database (D_T = v T = 3
 * m) is as bad as following 0.55 m off the path all along, so any walk
 * that follows closer beats it; walking 20% slower than the median on
 * Bandai Namco (D_T = 0.46 m) weighs like 8 cm, and lines and circles on
 * Bandai are followed as closely as before (test_graph_character.c).
 * Normalising on the horizon instead (N/K = 4 times lighter) is not
 * enough: a start-up clip stands still for a second of its own, so within
 * one horizon starting saves little over standing, and on the default
 * database a character that had stopped off a circle stayed standing
 * there, 0.26 m from it.
 *
 * Carried lag. A fresh pacer each plan forgives standing still: where no
 * walk can join the path within one horizon (the default database's idle
 * node facing +Z, a line along +X on its left: the start clip stands a
 * second and every walk has to leave the line to turn onto it), standing
 * is the best plan every time and the character never starts. So a plan
 * made from where the last one's kept part ends, on the same path, starts
 * its pacer ahead by lag0: the lag the plans before left, L' = max(0, L +
 * v dt - ds) e^(-dt / memory) (dt: the kept part's seconds, ds: the arc
 * covered; options.memory 10 s), less a slack of ANIM_PATH_LAG_SLACK = 2 s
 * at v, so lag_f = max(0, min(lag0 + v t_f, max(rest, lag0)) - s(f)): the
 * pacer stops at the path's end, or where the lag carried puts it when
 * that is further. Following that keeps near the pace (lines, circles,
 * L's) never builds up the slack and plans as before; a character standing
 * still builds up to v memory and starts (the line along +X: 10 m in 13.3
 * s, 0.25 m mean, 1.02 m worst from it, where it stood the whole 20 s
 * before). Why the pacer may stop past the end: capped at rest, standing
 * cost at most the path's length however long the character stood, and a
 * 5 m line along +X was never started (over the wire: 0 m in 120 s); now
 * standing costs the lag carried, which grows, and the 5 m line is
 * followed to its end in 16.8 s, 0.12 m mean, 1.02 m worst from it (the
 * 10 m line's opening turn), though late: the lag has to grow past the
 * path's length first (13 s on the spot; follow_limits.h's pace would have
 * the end by 8.7 s). Tried and left: the lag carried added on top of the
 * fresh pacer, which alone stops at the end (lag0 + min(v t_f, rest)),
 * starts it when the 10 m line starts (the end in 10.4 s) but rushes the
 * end across the line (2.05 m worst from it) and moved other cases (an L
 * on the graph built without slide: 0.085 m mean where 0.031); this form
 * changes nothing where the lag carried is less than the path left
 * (`animbench graph --plans 1`: every other case the same). A new path
 * (set_path) starts with no lag. Without the slack the carried lag made
 * Bandai's circles worse (memory 10 s: 0.17 m mean where 0.026).
 *
 * Cost-to-go (options.togo). Within one horizon the graph cannot always
 * come round: from the default database's idle node facing more than about
 * 100 degrees away from a new path, every walk that starts turning scored
 * worse than standing (the equal-arc error charges a walk heading away at
 * twice its arc), and the character stood for ever (docs/graph-start.md).
 * So a walk complete at the horizon adds what it still has to spend before
 * it can follow the path: the time the graph needs to head along the
 * path's direction at its path point P(s0 + s),
 *     T = t_walk + |wrap(theta - heading)| / omega,
 * (t_walk: 0 when the last frame moves at least v/2, else the edge's frames
 * left and its target node's least time to a frame that does; omega: the
 * largest turn rate the graph's clips sustain over 0.5 s while walking;
 * both measured once at init, graph_turn.h: 98.8 deg/s, 0.72 s from the
 * idle node on the default database; 97.0 deg/s on Bandai Namco), over
 * which the walk is taken to make no progress while the pacer goes on: the
 * lag a at the horizon (lag_behind, may be < 0) grows at v up to the
 * pacer's stop (cap = stop - s), each frame charged w lag^2 as the progress
 * term's frames are, summed as the integral
 *     w rate int_0^T clamp(a + v t, 0, cap)^2 dt
 *   = w rate [((a + v t1)^3 - (a + v t0)^3) / (3 v) + cap^2 max(0, T - tc)],
 * t0 = max(0, -a/v), tc = max(0, (cap - a)/v), t1 = min(T, tc) (the
 * per-frame sum is its right Riemann sum: 2533.5 where 2520 m^2 for 3 m
 * growing at 1.5 m/s for 2 s; test_graph_turn.c checks the closed form
 * against a fine sum). Nothing at an open path's end (within
 * ANIM_PATH_ARRIVE_DISTANCE: a place to stand, facing any way) nor with
 * progress 0. Why the time is charged as standing: the planner's lag counts
 * the arc travelled, so a U-turn's arc would count as progress though it
 * brings the walk no nearer the path. With the lag carried, which grows
 * while the character stands, it starts every case of docs/graph-start.md
 * (standing facing 135 and 180 degrees away: the end of a 10 m line in
 * 11.0 to 14.3 s, where never; 90 degrees off in 8.1 and 8.6 s where 17.0
 * and 13.6); without the lag carried, only up to 90 degrees off. The
 * search stays exact: the cost-to-go is >= 0 and added only to complete
 * walks, so a walk's floor (its error plus future_bound's least for its
 * frames within the horizon) is still a lower bound of every completion's
 * error (test_plan_is_least_error scores its enumerated walks with the same
 * anim_path_planner_cost_to_go). It costs search: the leaves differ more, a
 * best walk's error is higher and the floors prune less (`animbench graph
 * --plans 1`: 25% more CPU a plan summed over its cases, plans cut short
 * 59 where 45 of about 385, all on the Bandai graph built with slide, which
 * its automatic choice leaves off; on both databases' default graphs none).
 * Not charged: the path error the turn itself will add (its arc moves the
 * path point on while the root comes round), so a path that starts 2.8 m
 * or more behind a character facing away is still not started.
 *
 * The end. An open path ends at a place to stand: past it a frame counts
 * its distance from the end's point (P(s) is clamped there) to the horizon,
 * so the best walk stops at the end as closely as the graph's motion allows
 * (on the default database walk_stop into the idle; on a graph without a
 * way to stop, it keeps walking near the end), and no lag is carried within
 * ANIM_PATH_ARRIVE_DISTANCE of the end (a carried lag would walk it off the
 * end it stands at). Standing short of the end costs the path error
 * nothing (P(s0 + s) stays where the walk stopped), so once the pacer
 * stands at the end, in a plan that carries no lag, the progress term
 * weighs the shortfall as a distance (weight options.progress, not w):
 * without that a 12 m line on the default database stopped 0.45 m short and
 * crept, reaching 0.3 m of the end in 12.4 s; with it 6.5 s (5.6 s when
 * the character walked on past the end). Before (issue 30) a walk ended when it reached the end,
 * so every plan from there on was one edge judged by its first frame and
 * the character walked on (64 m past an L's end in 54 s). Measured: an L of
 * 3 + 3 m from the default database's idle node, arrived 5.5 s after the
 * path was set, then 0.062 m from the end at worst and 0.009 m of drift over
 * 4 s standing (test_graph_service.c). A plan from the end whose seed keeps
 * within ANIM_PATH_STAND_DISTANCE of it (root mean square over the
 * horizon) is the seed, without a search. Standing, plans try a few edges
 * (5 plans, 20 edges in 3 s there; before the shortfall at the end was
 * weighed as a distance, 181, and 198 with every plan searching: a seed
 * that stands bounds the search tightly), where following tries about
 * 2000. graph_character.h says when a character has arrived.
 *
 * Turns. The term cannot give a graph a motion it lacks. The default
 * database's graph, built with options.slide (motion_graph.h: the
 * automatic default slides on a database that repeats motion exactly, as
 * this one does), turns both ways: from its idle node facing +Z, an L of 3 + 3 m
 * turning left (0.065 m mean, 0.28 m worst from it) or right (0.072, 0.23),
 * a line along +X (above), circles of radius 3 m either way (0.024 and 0.025
 * m mean). Built without slide it keeps only its right walk turns: the L's
 * stop at the corner (3 m of 6), the line along +X is not started, a circle
 * turning left is lost. Why (motion_graph.c's sparsify): the procedural
 * straight walk recurs exactly in many clips, its zero-distance pairs are
 * kept first and put nodes every 7-10 frames along it, and most pairs
 * joining a turn back to a walk then have an end 1-5 frames from one of
 * those nodes and are refused for node spacing; the left turns, the run
 * turns and the sprint can be entered but not left, and pruning to the
 * largest component drops them; slide moves such a pair along its diagonal
 * onto a node. Real mocap, which never repeats exactly, turns both ways
 * without it (Bandai Namco's lines and circles), and the automatic choice
 * leaves it off there: with slide the Bandai graph grows (below, "Warm
 * start") and a line that turns sharply away at once is lost.
 *
 * The search is a depth-first branch and bound: at each depth the edges are
 * tried best first (least error per frame of the edge, progress term
 * included), so the first walk down is the greedy one; every walk is
 * extended edge by edge and dropped as soon as its error, plus a lower
 * bound of what its future frames add (below), reaches the best complete
 * walk's. That is safe because errors only grow: each frame adds two
 * squares, and both are fixed once the frame is played (lag_f depends on f
 * and on the arc travelled up to f, never on later frames), so a walk's
 * error is a lower bound of the error of every walk that extends it. (A
 * shortfall charged once at the horizon would keep that too, but could
 * prune nothing before a walk is complete, and the best-first order would
 * not see it.) A budget of edge expansions bounds the work of one plan;
 * when it runs out the best walk so far is the answer. Of the best walk
 * only the first `keep` seconds (whole edges, at least one) are returned:
 * the caller plays them and plans again from where they end, so the plan
 * follows a path as the character advances along it. When the search ends
 * within its budget its answer is the least error of all walks, whatever
 * the seed and the bound (test_graph_path.c enumerates them).
 *
 * Bound (options.bound). In one frame the root moves at most step_max (the
 * largest ground step of any frame of the graph's edges: 1.71 m/s on
 * Bandai, 3.5 on the default database), so the arc s grows by at most that,
 * the path point P(s0 + s) (1-Lipschitz in the arc) moves at most as much,
 * and the distance between them falls by at most 2 step_max a frame; the
 * lag falls by at most step_max less the pacer's step. So the k-th frame
 * after a walk's last adds at least max(0, e - 2 k step_max)^2 + w max(0,
 * lag - k (step_max - v / rate))^2 (lag: the pacer's lead, capped at the
 * path's end or the lag carried), summed in closed form to the horizon or, on an open path,
 * to the frames the arc needs at least to reach its end. Alone it prunes
 * little (the Bandai line: 1538 edges tried a plan where 1544); under a
 * seed's bound it mostly trims another 5 to 20%.
 *
 * Repeats (options.merge). A walk that reaches a node within
 * ANIM_PATH_MERGE_FRAMES (4) frames of the horizon after one the search saw
 * there before, placed within options.merge (0.05 m and rad: map and arc)
 * of it, later and with no less error, is taken for the same state and
 * dropped (a table of ANIM_PATH_SEEN_SLOTS such walks per planner, 8 kB).
 * With merge 0 only the same state is dropped (the same frame, within
 * ANIM_PATH_SAME = 1e-4 m), and the answer is the least error
 * (test_graph_path.c enumerates). Merging is not exact: the walk kept and
 * the one dropped differ by up to 5 cm and 4 frames, so their futures'
 * errors differ a little; on test_graph_path.c's 1 s plans the answers
 * are at most 0.002% above the least error (checked under 0.1%), with 18%
 * fewer edges tried. The default database repeats its walk exactly in many
 * clips, and many more walks come near each other by other edges: a crowd
 * following paths on it tries 1440 edges a plan where 2360 exactly and
 * 2940 with no table at all (`animbench graph --crowd 300`), its path
 * errors the same (circles 0.583 m mean where 0.602, zigzags 0.027 where
 * 0.026, L's 0.358 where 0.361). Tried: merging within 0.15 m, 1180 edges
 * a plan, errors the same; a table of 2048 slots at merge 0 (2% fewer
 * edges); a tighter bound, the most arc any walk from the node covers in
 * the frames left (a table per node, by dynamic programming over frames),
 * 3.5% fewer edges, not kept for its 17 kB a character.
 *
 * Warm start (options.warm). The search starts from a seed, a complete
 * walk whose error is the first bound and which is the answer when the
 * budget runs out before anything better: the previous plan's walk beyond
 * its kept part, when this plan starts where that part ends (it usually
 * still leads well, and its error, recomputed from where the character
 * is, bounds the search tightly at once); for a first plan, the best walk
 * of half the horizon, searched with a quarter of the budget. A seed that
 * ends before the horizon is completed greedily. So a plan cut short is
 * never worse than going on with the old one (test_graph_path.c checks
 * it, and that it is never worse than the greedy walk). Why: on a graph
 * built with slide the Bandai graph has 1098 edges (782 without) and,
 * started cold, a circle's searches tried 23800 edges a plan to finish; cut
 * at 20000 every plan returned little better than the greedy walk and the
 * circle was lost (16.6 m mean from it). Seeded and bounded, the same
 * searches finish in 4000 edges a plan (7400 turning left), and under the
 * 20000 budget the circle is followed 0.018 m mean, 0.050 m worst from it
 * (no plan cut short), the one turning left 0.022 and 0.096 (7 plans of 51
 * cut short), the line 0.006 and 0.013, in 0.2 to 0.75 times the planning
 * time a plan of the unseeded search on the same graph (`animbench graph
 * --plans 1`). Not solved: on that graph a line along +X from a walk
 * facing +Z (a sharp left at once) is lost (9.3 m mean from it; 0.56 m on
 * the graph built without slide, 1.5 m seeded by the previous plan only):
 * the plans that finish keep walking straight, into clips with no way to
 * turn within a horizon, and the rest are cut short; so slide's automatic
 * choice leaves it off on captured motion. On Bandai's default graph
 * (without slide) the seeds and the bound change no answer measured and
 * take 0.3 to 0.8 times the planning time.
 *
 * The horizon matters (measured on the Bandai graph without slide, a
 * circle of radius 3 m, before the seeds and the bound): 1.5 s is too
 * short, the plans walk into stretches of clip without a transition that
 * turns and lose the circle; 2 s (default) follows it within 0.15 m with
 * searches that finish (~3300 edges tried a plan, ~2800 before the
 * progress term); 3 s needed more than 20000 edges a plan.
 *
 * A planner owns its scratch (allocated by anim_path_planner_init and when a
 * longer path is set), so planning allocates nothing. The graph and
 * database are shared and read-only.
 */
#ifndef ANIM_GRAPH_PATH_H
#define ANIM_GRAPH_PATH_H

#include <stdint.h>
#include "database/database.h"
#include "graph/motion_graph.h"
#include "graph/graph_turn.h"

/* A rigid map of the ground: world = R(angle) p + (x, z), R(a) turning +Z
 * toward +X by a radians (a rotation about +Y). */
typedef struct {
  float angle;
  float x, z;
} anim_ground_map_t;

/* A polyline in the world's ground plane. Validity (set_path): 2 to
 * ANIM_PATH_MAX_POINTS finite points, total length > 0. */
#define ANIM_PATH_MAX_POINTS 4096
typedef struct {
  const float *points;   /* x0 z0 x1 z1 ... (m) */
  int count;
  int closed;            /* the last point joins the first; P(s) wraps */
} anim_path_t;

/* Seconds at the expected speed of lag the plans before may leave without
 * it being carried into the next plan (above, "Carried lag"). */
#define ANIM_PATH_LAG_SLACK 2.0f

/* m: an open path's end is reached (above, "The end") when the walk is
 * within this of it, along the path and from its last point. */
#define ANIM_PATH_ARRIVE_DISTANCE 0.3f
/* m: standing at the end, a walk that keeps this close to it (root mean
 * square over the horizon) is played without a search (above, "The end"). */
#define ANIM_PATH_STAND_DISTANCE 0.1f

/* Validity rules (anim_path_options_validate):
 *  1. horizon in (0, 60] s, keep in (0, horizon];
 *  2. max_expansions >= 1;
 *  3. speed >= 0 m/s, progress >= 0, memory >= 0 s, merge in [0, 1] m/rad;
 *  4. warm, bound and togo 0 or 1;
 *  5. every float finite. */
typedef struct {
  float horizon;         /* s searched ahead (default 2) */
  float keep;            /* s of each plan returned (default 0.5) */
  int max_expansions;    /* edges tried per plan (default 20000) */
  float speed;           /* m/s of the progress term's pacer (default 0: the
                            median root speed of the graph's edges) */
  float progress;        /* scales the progress term's weight w (default 1;
                            0: the paper's error alone) */
  int warm;              /* 1 (default): start from the previous plan's
                            walk beyond its kept part (above, "Warm start") */
  int bound;             /* 1 (default): drop a walk when its error plus a
                            lower bound of what its future frames add
                            reaches the best (above, "Bound") */
  float memory;          /* s: time constant of the lag carried from plan to
                            plan (default 10; 0: none; above, "Carried lag") */
  int togo;              /* 1 (default): a walk complete at the horizon adds
                            its cost-to-go (above, "Cost-to-go"); 0: none */
  float merge;           /* m and rad: walks placed within this of one seen
                            at the same node within ANIM_PATH_MERGE_FRAMES
                            are one state (default 0.05; 0: only the same
                            state, ANIM_PATH_SAME; above, "Repeats") */
} anim_path_options_t;

void anim_path_options_default(anim_path_options_t *out_options);
int anim_path_options_validate(const anim_path_options_t *options);

typedef struct {
  int node;
  int segment;           /* of the path, where the last frame's path point is (a cursor) */
  anim_ground_map_t map; /* places the node's frame */
  float turn_c, turn_s;  /* cos and sin of map.angle */
  float s;               /* arc length travelled (m) */
  float error;           /* m^2, progress term included */
  float progress;        /* m^2, the progress term's part of error */
  float floor;           /* m^2, error plus the least its future frames add */
  int frames;
  float x, z;            /* last root (world) */
} anim_path_step_t;

typedef struct {
  anim_path_step_t step; /* the walk after the edge */
  int edge;
  int done;              /* complete (horizon or path end) */
  float key;             /* error per frame of the edge: the order tried */
} anim_path_child_t;

/* Walks seen in a search, for dominance (above, "Repeats"). */
#define ANIM_PATH_SEEN_SLOTS 256
#define ANIM_PATH_SAME 1e-4f /* m, rad: the same state, options.merge 0 */
#define ANIM_PATH_MERGE_FRAMES 4 /* frames of a bucket of states merged (options.merge > 0) */
typedef struct {
  uint32_t stamp;
  int node, frames;
  float angle, x, z, s, error;
} anim_path_seen_t;

typedef struct anim_path_planner {
  const anim_motion_graph_t *graph;
  const anim_database_t *db;
  anim_path_options_t options;
  int horizon_frames, keep_frames;
  float speed;           /* m/s: the pacer's (options.speed, or the graph's median) */
  float weight;          /* w of the progress term, options.progress included */
  float rest;            /* m of an open path left after the plan's s0 (INFINITY when closed) */
  float lag0;            /* m: the pacer's lead at the plan's start (carried) */
  float stop;            /* m: where the pacer stops: rest, or lag0 when further */
  float behind;          /* m: the lag accumulated over the plans before */
  int carry, carry_frames; /* the last plan's: kept, its kept frames, ... */
  float carry_lag, carry_s0; /* ... its behind and s0 */
  int pacer_free;        /* the pacer does not reach rest within the horizon */
  float step_max;        /* m: the most the root moves in one frame of an edge */
  float *node_yaw;       /* per graph node: its frame's root yaw (rad) */
  float *landing_yaw;    /* per graph edge taken by a jump: the root yaw of the frame it lands on */
  anim_graph_turn_t turn; /* the graph's turn rate and time to walk (above, "Cost-to-go") */

  /* The path: points and cumulative arc lengths. */
  float *points, *cumulative;
  int count, capacity, closed;
  float length;

  /* Search scratch: per depth (every edge plays >= 1 frame, so at most
   * horizon + 1), the children of the walk so far, best first. */
  anim_path_child_t *children; /* [depth][max_degree] */
  int *count_per_depth, *cursor;
  int max_degree, depth_capacity;
  int *best_walk, *walk;
  int best_length;

  /* The last plan: edges (indices in graph->edges) to play. */
  int *plan;
  int nplan;
  int plan_frames;
  float plan_error;      /* m^2, of the whole best walk */
  float plan_progress;   /* m^2, the progress term's part of plan_error */
  float warm_error;      /* m^2, of the seed (INFINITY: none) */
  int *warm;             /* the best walk's edges beyond the kept part ... */
  int nwarm, warm_node;  /* ... starting at this node */
  int *seed;             /* the best walk of half the horizon */
  int limit;             /* expansions allowed to the running search */
  int expansions;        /* edges tried */
  int exhausted;         /* the budget ran out before the search ended */
  anim_path_seen_t *seen; /* [ANIM_PATH_SEEN_SLOTS]: walks seen by the running search */
  float same;            /* m, rad: placements within this are one state (options.merge, or ANIM_PATH_SAME) */
  int same_frames;       /* frames of a bucket of states compared (ANIM_PATH_MERGE_FRAMES, or 1) */
  uint32_t stamp;        /* of the running search */
  int searched;          /* the last plan searched (0: standing at the end, it took the seed) */
} anim_path_planner_t;

/* 0, ANIM_EINVAL or ANIM_ENONFINITE (bad options; graph not built on db:
 * its version), ANIM_ENOMEM. Measures the graph's median edge speed when
 * options.speed is 0 (anim_path_expected_speed). Free with
 * anim_path_planner_free. */
int anim_path_planner_init(anim_path_planner_t *out_planner, const anim_motion_graph_t *graph,
                           const anim_database_t *db, const anim_path_options_t *options);
void anim_path_planner_free(anim_path_planner_t *planner);

/* Bytes the planner's arrays were asked for (not the allocator's rounding,
 * which depends on the heap's state): the same for every planner on one
 * graph holding paths of one capacity. */
size_t anim_path_planner_heap_bytes(const anim_path_planner_t *planner);

/* The progress term's default speed: the median over the graph's edges of
 * the root's ground speed along each (m/s: the distance covered from the
 * frame before the edge's first to its last, over the edge's duration),
 * how fast the graph's walks usually go. 0, ANIM_EINVAL (graph of another
 * database, no edge), ANIM_ENOMEM. */
int anim_path_expected_speed(const anim_motion_graph_t *graph, const anim_database_t *db, float *out_speed);

/* Copies the path (allocating only past the largest path set so far);
 * the next plan carries no lag. 0, ANIM_EINVAL, ANIM_ENONFINITE,
 * ANIM_ENOMEM. */
int anim_path_planner_set_path(anim_path_planner_t *planner, const anim_path_t *path);

/* The point at arc length s of the path (wrapping when closed, clamped when
 * open). */
void anim_path_planner_point(const anim_path_planner_t *planner, float s, float *out_x, float *out_z);
/* Arc length of the path point nearest (x, z): among all points when
 * window < 0, else within [s_hint - window, s_hint + window] (along a closed
 * path, or one that passes near itself, the hint keeps the answer on the
 * part of the path being followed). out_distance (optional): how far. */
float anim_path_planner_project(const anim_path_planner_t *planner, float x, float z, float s_hint, float window,
                                float *out_distance);

/* Plans from node `start`, its frame placed by map, the walk's arc length
 * starting at s0 on the path. Fills plan/nplan/plan_frames (the kept part)
 * and plan_error, warm_error, lag0, expansions, exhausted. When start is
 * where the last plan's kept part ends (warm_node) that plan's walk beyond
 * it seeds the search, and its lag is carried (on the same path); else a
 * walk of half the horizon seeds it. 0, ANIM_EINVAL (no path set, bad
 * node, non-finite map). */
int anim_path_planner_plan(anim_path_planner_t *planner, int start, anim_ground_map_t map, float s0);

/* The cost-to-go of a walk complete at the horizon (above, "Cost-to-go"),
 * m^2, >= 0: its last frame `frame` (played on an edge toward `node`),
 * placed by map, s the arc it travelled from s0; read from the planner's
 * last plan (its lag carried, pacer and path). The search adds it to every
 * walk that reaches the horizon; exposed so that a test scoring walks on
 * its own charges the same. */
float anim_path_planner_cost_to_go(const anim_path_planner_t *p, const anim_ground_map_t *map, int frame, int node,
                                   float s0, float s);

/* Where a frame's root is, and the map after a jump from frame i (placed by
 * map) to frame j. */
void anim_ground_map_apply(const anim_ground_map_t *map, const anim_database_t *db, int frame, float *out_x,
                           float *out_z);
anim_ground_map_t anim_ground_map_jump(const anim_ground_map_t *map, const anim_path_planner_t *planner, int i, int j);

#endif
