/* graph_character.c: a character walking a motion graph (see graph_character.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anim_error.h"
#include "graph/graph_character.h"
#include "pose/kinematics.h"

void anim_graph_character_free(anim_graph_character_t *c) {
  anim_path_planner_free(&c->planner);
  free(c->memory);
  memset(c, 0, sizeof *c);
}

int anim_graph_character_init(anim_graph_character_t *c, const anim_motion_graph_t *graph, const anim_database_t *db,
                              const anim_path_options_t *options, float halflife, vec3 position, float facing,
                              int start) {
  memset(c, 0, sizeof *c);
  if (!isfinite(position.x + position.z + facing + halflife)) return ANIM_ENONFINITE;
  if (!graph || !db || !(halflife > 0.0f) || start < 0 || start >= graph->nnodes) return ANIM_EINVAL;
  int rc = anim_path_planner_init(&c->planner, graph, db, options);
  if (rc) return rc;
  size_t n = (size_t)db->nbones;
  c->memory = calloc(1, n * (7 * sizeof(vec3) + 3 * sizeof(quat)));
  if (!c->memory) {
    anim_graph_character_free(c);
    return ANIM_ENOMEM;
  }
  vec3 *v = c->memory;
  c->offset_positions = v, c->offset_velocities = v + n, c->offset_angular_velocities = v + 2 * n;
  c->pose_positions = v + 3 * n, c->pose_velocities = v + 4 * n, c->pose_angular_velocities = v + 5 * n;
  c->global_positions = v + 6 * n;
  quat *q = (quat *)(v + 7 * n);
  c->offset_rotations = q, c->pose_rotations = q + n, c->global_rotations = q + 2 * n;
  c->graph = graph, c->db = db, c->halflife = halflife;
  anim_warp_params_default(&c->warp);
  c->warp.rate = c->warp.stand = c->warp.orient = c->warp.stride = 0; /* root steering alone */
  /* The controller's foot locking, on the ground; a skeleton without legs
   * above its contact bones goes unlocked. */
  if (anim_foot_locks_init(&c->feet, db, 0.2f, 0.1f) != 0 || anim_foot_locks_ground(&c->feet, ANIM_FOOT_MAX_DROP) != 0)
    c->feet.nfeet = 0;
  c->feet_free = 1; /* wandering: the data's feet until a path or goal */
  c->node = start, c->edge = -1, c->frame = graph->nodes[start].frame, c->seed = 1;
  anim_inertializer_init(&c->inertializer, n, c->offset_positions, c->offset_velocities, c->offset_rotations,
                         c->offset_angular_velocities);
  size_t base = (size_t)c->frame * n;
  anim_inertializer_place(&c->inertializer, db->local_positions[base], db->local_rotations[base],
                          vec3_make(position.x, 0.0f, position.z), quat_from_angle_axis(facing, vec3_make(0, 1, 0)));
  anim_pose_view_t view = anim_database_frame_pose(db, c->frame);
  anim_pose_buffer_t out = {n, c->pose_positions, c->pose_velocities, c->pose_rotations, c->pose_angular_velocities};
  anim_inertializer_update(&c->inertializer, &out, &view, halflife, 0.0f);
  return 0;
}

anim_ground_map_t anim_graph_character_map(const anim_graph_character_t *c) {
  const anim_inertializer_t *in = &c->inertializer;
  anim_ground_map_t map;
  map.angle = quat_yaw_angle(in->anchor_world_rotation) - quat_yaw_angle(in->anchor_anim_rotation);
  float cs = cosf(map.angle), sn = sinf(map.angle);
  vec3 a = in->anchor_anim_position, w = in->anchor_world_position;
  map.x = w.x - (cs * a.x + sn * a.z), map.z = w.z - (-sn * a.x + cs * a.z);
  return map;
}

int anim_graph_character_set_path(anim_graph_character_t *c, const anim_path_t *path) {
  int rc = anim_path_planner_set_path(&c->planner, path);
  if (rc) return rc;
  c->follow = ANIM_GRAPH_FOLLOW_PATH;
  c->s = anim_path_planner_project(&c->planner, c->pose_positions[0].x, c->pose_positions[0].z, 0.0f, -1.0f, NULL);
  c->plan_index = c->planner.nplan = 0; /* plan at the next node */
  c->arrived = 0;
  return 0;
}

int anim_graph_character_set_goal(anim_graph_character_t *c, float x, float z) {
  if (!isfinite(x + z)) return ANIM_ENONFINITE;
  c->follow = ANIM_GRAPH_FOLLOW_GOAL, c->goal_x = x, c->goal_z = z;
  c->plan_index = c->planner.nplan = 0, c->arrived = 0;
  c->planner.carry = 0; /* a new goal: no lag carried */
  return 0;
}

void anim_graph_character_wander(anim_graph_character_t *c, uint32_t seed) {
  c->follow = ANIM_GRAPH_WANDER, c->seed = seed ? seed : 1;
  c->plan_index = c->planner.nplan = 0, c->arrived = 0;
}

/* The next edge from the current node: the plan's, planning first when it
 * is used up; a random one when wandering (or when no plan came out). */
static int next_edge(anim_graph_character_t *c) {
  const anim_motion_graph_t *g = c->graph;
  if (c->follow != ANIM_GRAPH_WANDER && c->plan_index >= c->planner.nplan) {
    anim_ground_map_t map = anim_graph_character_map(c);
    float x, z;
    anim_ground_map_apply(&map, c->db, g->nodes[c->node].frame, &x, &z);
    int ok = 1;
    if (c->follow == ANIM_GRAPH_FOLLOW_GOAL) {
      float points[4] = {x, z, c->goal_x, c->goal_z};
      anim_path_t path = {points, 2, 0};
      /* At the goal the segment vanishes: aim a little beyond it, ahead. */
      if (hypotf(c->goal_x - x, c->goal_z - z) < 0.05f) points[2] += 0.1f;
      /* The lag carried from plan to plan goes on across the segments
       * (graph_path.h, "Carried lag"; without it a goal more than about 90
       * degrees off was never reached, docs/graph-start.md): each starts
       * at arc 0, so the progress since the last plan is how much nearer
       * the goal the character came, the last segment's length less this
       * one's. */
      anim_path_planner_t *p = &c->planner;
      int carry = p->carry && p->count == 2;
      float before = p->length;
      ok = anim_path_planner_set_path(p, &path) == 0;
      if (ok && carry) p->carry = 1, p->carry_s0 = p->length - before;
      c->s = 0.0f;
    } else {
      c->s = anim_path_planner_project(&c->planner, x, z, c->s, ANIM_GRAPH_TRACK_WINDOW, NULL);
      /* An open path's end: arrived once there (graph_path.h, "The end");
       * the plans go on, standing as near it as the graph allows. */
      const anim_path_planner_t *p = &c->planner;
      float ex = p->points[2 * p->count - 2], ez = p->points[2 * p->count - 1];
      if (!p->closed && c->s >= p->length - ANIM_PATH_ARRIVE_DISTANCE &&
          hypotf(ex - x, ez - z) <= ANIM_PATH_ARRIVE_DISTANCE)
        c->arrived = 1;
    }
    if (ok && anim_path_planner_plan(&c->planner, c->node, map, c->s) == 0) {
      c->plan_index = 0, c->plans++, c->replanned = 1;
      c->expansions += (uint64_t)c->planner.expansions;
      c->searches += (uint64_t)c->planner.searched;
    }
  }
  if (c->follow != ANIM_GRAPH_WANDER && c->plan_index < c->planner.nplan) return c->planner.plan[c->plan_index++];
  const anim_graph_node_t *node = &g->nodes[c->node];
  if (node->nedges == 0) return -1;
  c->seed ^= c->seed << 13, c->seed ^= c->seed >> 17, c->seed ^= c->seed << 5;
  return node->first_edge + (int)(c->seed % (uint32_t)node->nedges);
}

/* One frame on: the next frame of the edge, or at its end the next edge
 * (its jump inertialized). */
static void step_frame(anim_graph_character_t *c) {
  const anim_motion_graph_t *g = c->graph;
  if (c->edge >= 0 && c->frame < g->nodes[g->edges[c->edge].target].frame) {
    c->frame++;
    return;
  }
  if (c->edge >= 0) c->node = g->edges[c->edge].target;
  int e = next_edge(c);
  if (e < 0) return; /* a dead end of an unpruned graph: hold */
  const anim_graph_edge_t *edge = &g->edges[e];
  if (edge->transition >= 0) {
    anim_pose_view_t src = anim_database_frame_pose(c->db, c->frame),
                     dst = anim_database_frame_pose(c->db, edge->first_frame - 1);
    if (anim_inertializer_transition(&c->inertializer, &src, &dst) == 0) c->jumps++;
  }
  c->edge = e, c->frame = edge->first_frame;
}

int anim_graph_character_set_warp(anim_graph_character_t *c, const anim_warp_params_t *params) {
  int rc = anim_warp_params_validate(params);
  if (rc) return rc;
  c->warp = *params;
  c->warp.rate = c->warp.stand = c->warp.orient = c->warp.stride = 0; /* root steering alone */

  return 0;
}

/* Root steering (graph_character.h): the root's velocity toward the path
 * by anim_warp_steer's bounds, the anchor moved with it. */
static void steer(anim_graph_character_t *c, float dt) {
  c->steering = 0.0f;
  if (!c->warp.steer || c->follow == ANIM_GRAPH_WANDER || c->planner.count < 2) return;
  vec3 v = c->pose_velocities[0], root = c->pose_positions[0];
  if (v.x * v.x + v.z * v.z < ANIM_WARP_STEER_MIN_SPEED * ANIM_WARP_STEER_MIN_SPEED) return;
  const anim_path_planner_t *p = &c->planner;
  float s = anim_path_planner_project(p, root.x, root.z, c->s, ANIM_GRAPH_TRACK_WINDOW, NULL), x, z;
  anim_path_planner_point(p, s, &x, &z);
  vec3 target = vec3_make(v.x + (x - root.x) / ANIM_GRAPH_STEER_TIME, 0.0f, v.z + (z - root.z) / ANIM_GRAPH_STEER_TIME);
  /* An open path's end (a goal's) is not braked for while ahead. */
  vec3 end = vec3_make(p->points[2 * p->count - 2], 0.0f, p->points[2 * p->count - 1]);
  vec3 d = anim_warp_steer(&c->warp, v, target, target, p->closed ? NULL : &end, root);
  if (d.x == 0.0f && d.z == 0.0f) return;
  vec3 extra = vec3_scale(d, dt);
  c->inertializer.anchor_world_position = vec3_add(c->inertializer.anchor_world_position, extra);
  c->pose_positions[0] = vec3_add(root, extra);
  c->pose_velocities[0].x += d.x, c->pose_velocities[0].z += d.z;
  c->steering = sqrtf(d.x * d.x + d.z * d.z);
}

int anim_graph_character_tick(anim_graph_character_t *c, float dt) {
  if (!(dt > 0.0f) || !isfinite(dt)) return ANIM_EINVAL;
  c->replanned = 0, c->globals_fresh = 0;
  c->frame_time_accum += dt;
  int frames = (int)floorf(c->frame_time_accum * c->db->frame_rate);
  c->frame_time_accum -= (float)frames / c->db->frame_rate;
  for (int i = 0; i < frames; i++) step_frame(c);
  anim_pose_view_t view = anim_database_frame_pose(c->db, c->frame);
  anim_pose_buffer_t out = {(size_t)c->db->nbones, c->pose_positions, c->pose_velocities, c->pose_rotations,
                            c->pose_angular_velocities};
  int rc = anim_inertializer_update(&c->inertializer, &out, &view, c->halflife, dt);
  if (rc == 0) steer(c, dt);
  int hold = c->warp.steer && c->follow != ANIM_GRAPH_WANDER; /* steering may move the root */
  if (rc == 0 && c->feet.nfeet && !(c->feet_free && !hold)) {
    /* Held while steering; else let go as if the data lifted every foot,
     * then the data's feet (graph_character.h). */
    static const uint8_t lifted[ANIM_MAX_CONTACTS];
    const uint8_t *contacts = hold ? c->db->contacts + (size_t)c->frame * (size_t)c->db->ncontacts : lifted;
    c->feet_free = 0;
    anim_foot_locks_apply(&c->feet, contacts, c->pose_positions, c->pose_rotations, dt);
    if (!hold && anim_foot_locks_let_go(&c->feet)) anim_foot_locks_reset(&c->feet), c->feet_free = 1;
  }
  c->ticks++;
  return rc;
}

uint32_t anim_graph_character_contacts(const anim_graph_character_t *c) {
  if (c->feet.nfeet && !c->feet_free) return anim_foot_locks_contacts(&c->feet);
  return anim_database_contacts(c->db, c->frame);
}

void anim_graph_character_global_pose(anim_graph_character_t *c) {
  if (c->globals_fresh) return;
  c->globals_fresh = 1;
  anim_fk(c->global_positions, c->global_rotations, c->pose_positions, c->pose_rotations, c->db->skeleton.parents,
          c->db->nbones);
}

void anim_graph_character_translate(anim_graph_character_t *c, vec3 step) {
  c->inertializer.anchor_world_position = vec3_add(c->inertializer.anchor_world_position, step);
  c->pose_positions[0] = vec3_add(c->pose_positions[0], step);
  c->globals_fresh = 0;
  anim_foot_locks_translate(&c->feet, step);
}
