/*
 * graph_character.h: a character that walks a motion graph, following a
 * path or going to a goal (graph_path.h), its transitions inertialized.
 *
 * It plays database frames along graph edges at the database's rate (a
 * tick takes the whole frames its dt brings, the remainder kept). At each
 * node it takes the next edge of its plan; an edge that starts with a jump
 * (a transition i -> j) is an inertialized transition from frame i to frame
 * j (inertialize.h: the displayed pose and its velocities stay continuous,
 * j's root lands on i's, the offsets decay with `halflife`), then j + 1 and
 * on play. When the plan's kept part is used up the planner plans again
 * from that node, where the character is (the inertializer's anchor places
 * the node's frame in the world), so a long path is followed by plans of
 * `horizon` seconds re-made every `keep` seconds:
 *  - path: the arc length reached is the nearest path point to the
 *    character, searched within ANIM_GRAPH_TRACK_WINDOW of the last one so
 *    a closed or crossing path is followed in order. On an open path the
 *    character has arrived (arrived = 1, until a new path, goal or wander)
 *    at a node where that arc is within ANIM_PATH_ARRIVE_DISTANCE of the
 *    path's length and its root within that of the last point; the plans
 *    go on and stand there as closely as the graph allows (graph_path.h,
 *    "The end"). A closed path loops;
 *  - goal: the path is the segment from the character to the goal, made
 *    anew at each plan; the lag carried from plan to plan (graph_path.h)
 *    goes on across the segments, the progress being how much nearer the
 *    goal the character came, so a goal behind it is reached as a path
 *    behind it is (docs/graph-start.md). A graph has no motion that stops unless its
 *    database has one, so a character at its goal walks around it;
 *  - neither: a random walk.
 * Planning happens inside the tick that reaches the node (its cost is the
 * planner's, bounded by max_expansions); other ticks only play frames.
 *
 * Cost (`animbench graph --crowd 1000 --seconds 10`: the default database's
 * graph, a third each closed circles, 70 m zigzags and 3 + 3 m L's, one
 * thread, CPU time, three runs alternating the builds on a shared
 * machine): a character following a path costs 7 to 10 times one
 * wandering (11.4-15.3 us a tick where 1.1-2.3 us; callgrind on 50
 * characters for 10 s: 67k instructions a tick where 9.9k),
 * nearly all of it the search, a plan every 0.5 s of about 1400 edges
 * (first plans 2100). Before issue 30 it was 25-30 us, though an L's
 * character walked on past its end on one-edge plans; before near states
 * were merged (graph_path.h, "Repeats") 16.8-22.3 us (104k instructions),
 * 2330 edges a plan
 * (path errors: circles 0.647 m mean then, 0.623 now; zigzags 0.026 and
 * 0.027; L's 0.355 and 0.359). What brought it down: the search's path
 * point found by a cursor along the walk, not a binary search a frame;
 * walks near one seen dropped ("Repeats"); no search while standing at an
 * open path's end ("The end"); the map's rotation worked out at jumps only.
 * Tried and left: taking the previous plan's
 * walk without a search while its error stayed near the last search's
 * (at most 3 plans in a row): 39% of plans skipped, but circles 0.91 m
 * from the path where 0.65 and zigzags 0.074 where 0.026, as its greedy
 * tails drift; a kept part of 1 s (half the plans: circles 0.71, zigzags
 * 0.033; with merging, 0.624 where 0.583 and L's 0.374 where 0.358, 300
 * characters), or 0.75 s (circles 0.687); a budget of 1000 or 500 edges
 * (0.89 and 1.18 on circles); a relative tolerance on the bound (10%: 18%
 * fewer edges, circles 0.84); a bound from the most arc a walk from each
 * node covers (3.5% fewer edges). The target, at most twice the
 * wandering cost, is not met.
 *
 * Root steering (warp.h, anim_warp_steer, the controller's own): while
 * following a path or a goal, each tick after the pose is made the root's
 * velocity is moved toward the path: toward v + e / ANIM_GRAPH_STEER_TIME,
 * v its own velocity and e the offset from the root to the nearest path
 * point (searched within ANIM_GRAPH_TRACK_WINDOW of the arc reached), by
 * at most steer_max times the root's speed and 0.25 m/s, only while it
 * travels faster than 0.3 m/s; the inertializer's anchor moves with it,
 * so the next plan starts where the character is. An open path's end (a
 * goal) is never braked for while it lies ahead. While steering is on
 * and the character follows a path or a goal, planted feet are held by
 * foot locking (foot_lock.h, on the ground, the
 * controller's defaults: unlock radius 0.2 m, release half-life 0.1 s),
 * which takes the correction up through the legs as it does for a
 * motion-matching character; without it a planted foot slid by the
 * correction (`animbench graph-steer`: Bandai's worst slide 0.42 -> 0.57
 * m/s). Steering turned off, or wandering, lets the locks go gently (as
 * the data lifting every foot) and then shows the data's feet, as before
 * (a wanderer costs what it did: the locks cost about 0.6 us a tick). The play rate, standing,
 * orientation and stride warps are not applied: the planner predicts
 * every frame's place from the clips as the data plays them, at the
 * database's rate, and a clip played faster, slower, turned or stretched
 * would leave its plans.
 *
 * The graph and database are shared and read-only; a character allocates
 * everything in anim_graph_character_init (and, for a path longer than any
 * before, in set_path), nothing per tick.
 */
#ifndef ANIM_GRAPH_CHARACTER_H
#define ANIM_GRAPH_CHARACTER_H

#include <stdint.h>
#include "database/database.h"
#include "graph/graph_path.h"
#include "character/foot_lock.h"
#include "character/warp.h"
#include "motion/inertialize.h"
#include "graph/motion_graph.h"

#define ANIM_GRAPH_TRACK_WINDOW 3.0f /* m of arc either side of the last position on the path */
#define ANIM_GRAPH_STEER_TIME 0.5f   /* s: root steering closes the offset to the path over this */

typedef enum { ANIM_GRAPH_WANDER = 0, ANIM_GRAPH_FOLLOW_PATH = 1, ANIM_GRAPH_FOLLOW_GOAL = 2 } anim_graph_follow_t;

typedef struct anim_graph_character {
  const anim_motion_graph_t *graph;
  const anim_database_t *db;
  anim_path_planner_t planner;
  float halflife;             /* s, of the inertialized jumps */

  anim_graph_follow_t follow;
  float goal_x, goal_z;
  float s;                    /* arc length reached on the path (m) */
  int arrived;                /* at an open path's end (graph_path.h, "The end"); 0 on a new path */
  uint32_t seed;              /* for wandering */

  int node;                   /* the node played last (at the end of edge) */
  int edge;                   /* edge being played, -1 at the start */
  int frame;                  /* database frame shown */
  int plan_index;             /* next edge of planner.plan */
  float frame_time_accum;

  anim_inertializer_t inertializer;
  vec3 *offset_positions, *offset_velocities, *offset_angular_velocities;
  quat *offset_rotations;
  vec3 *pose_positions, *pose_velocities, *pose_angular_velocities; /* displayed; bone 0 in the world */
  quat *pose_rotations;
  vec3 *global_positions;
  quat *global_rotations;
  int globals_fresh;

  /* Animation warping (warp.h): root steering alone (below, "Root
   * steering"); the other warps' switches are always off, their bounds
   * kept as given. */
  anim_warp_params_t warp;
  float steering;             /* m/s: root steering's correction of the last tick */
  anim_foot_locks_t feet;     /* planted feet held while steering (below); nfeet 0: no legs */
  int feet_free;              /* the locks let go (steering off, wandering): the data's feet shown */

  uint64_t ticks, jumps, plans, expansions;
  uint64_t searches;          /* plans that searched (the rest stood at an open path's end: graph_path.h, "The end") */
  int replanned;              /* the last tick planned */
  void *memory;
} anim_graph_character_t;

/* Sets up a character on graph (built on db) at node `start`, that node's
 * frame shown with its root at position (y ignored) facing `facing`
 * radians, wandering. halflife > 0 s. 0, ANIM_EINVAL (bad options or node,
 * graph of another database), ANIM_ENONFINITE, ANIM_ENOMEM. Free with
 * anim_graph_character_free; graph and db must outlive it. */
int anim_graph_character_init(anim_graph_character_t *out_character, const anim_motion_graph_t *graph,
                              const anim_database_t *db, const anim_path_options_t *options, float halflife,
                              vec3 position, float facing, int start);
void anim_graph_character_free(anim_graph_character_t *character);

/* Follows path from the point nearest the character (copied; plans again
 * at the next node). 0 or anim_path_planner_set_path's error. */
int anim_graph_character_set_path(anim_graph_character_t *character, const anim_path_t *path);
/* Goes to (x, z). 0, ANIM_ENONFINITE. */
int anim_graph_character_set_goal(anim_graph_character_t *character, float x, float z);
/* Back to a random walk. */
void anim_graph_character_wander(anim_graph_character_t *character, uint32_t seed);

/* The warps' switches and bounds (warp.h): root steering is the one a
 * graph character applies (on by default); the play rate, standing,
 * orientation and stride switches are taken as off whatever params says.
 * 0 or anim_warp_params_validate's error (nothing changed). */
int anim_graph_character_set_warp(anim_graph_character_t *character, const anim_warp_params_t *params);

/* The contact flags shown (bit i: contact i): foot locking's while it
 * holds the feet, else the data's for the frame shown. */
uint32_t anim_graph_character_contacts(const anim_graph_character_t *character);

/* Advances by dt seconds (> 0, finite). 0 or ANIM_EINVAL. */
int anim_graph_character_tick(anim_graph_character_t *character, float dt);

/* Moves the character by step (m, world) as if it had always been there:
 * its anchor (so the ground map) and displayed root; a path or goal stays.
 * For a caller that keeps characters in a bounded world (core/pose/world.h). */
void anim_graph_character_translate(anim_graph_character_t *character, vec3 step);

/* The ground map placing the playing clip's frames in the world now. */
anim_ground_map_t anim_graph_character_map(const anim_graph_character_t *character);

/* Fills global_positions/global_rotations from the displayed pose (once a tick). */
void anim_graph_character_global_pose(anim_graph_character_t *character);

#endif
