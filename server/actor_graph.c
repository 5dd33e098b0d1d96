/*
 * actor_graph.c: the MODE_GRAPH character kind: a walk on the database's
 * motion graph (core/graph/graph_character.h), holding a reference to the graph
 * it started on (graphs.h), so a rebuild never pulls it away.
 *
 * It wanders until set_paths gives it a path or set_inputs a goal (the
 * goal's speed is not used: the graph's clips set the pace); its jumps are
 * inertialized with params.inertialize_halflife. Planning happens inside
 * the tick that reaches a node, bounded by the planner's max_expansions.
 * Of the warps (params' no_* switches and bounds) it applies root steering
 * alone (graph_character.h), set at creation or by set_character_params,
 * which refuses the other warps on and every field it does not use.
 * Nothing here runs for characters of other kinds.
 */
#include <math.h>
#include <stdio.h>
#include "actor_graph.h"
#include "anim_error.h"
#include "graphs.h"

typedef struct {
  anim_graph_character_t c; /* first: srv_actor_graph_character */
  srv_graph_t *graph;
} graph_actor_t;

anim_graph_character_t *srv_actor_graph_character(srv_actor_t *a) {
  return a->kind == &srv_actor_graph ? &((graph_actor_t *)a->character)->c : NULL;
}

const srv_graph_t *srv_actor_graph_of(const srv_actor_t *a) {
  return a->kind == &srv_actor_graph ? ((const graph_actor_t *)a->character)->graph : NULL;
}

int srv_graph_node_from(const anim_motion_graph_t *g, int frame) {
  int lo = 0, hi = g->nnodes; /* nodes are sorted by frame */
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (g->nodes[mid].frame < frame) lo = mid + 1;
    else hi = mid;
  }
  return lo < g->nnodes ? lo : 0;
}

static void translate(void *character, vec3 step) {
  anim_graph_character_translate(&((graph_actor_t *)character)->c, step);
}

static void report(srv_actor_t *a) {
  anim_graph_character_t *c = &((graph_actor_t *)a->character)->c;
  const anim_database_t *db = c->db;
  srv_actor_pose_t *p = &a->pose;
  p->nbones = db->nbones;
  p->positions = c->pose_positions;
  p->rotations = c->pose_rotations;
  p->frame = c->frame;
  p->transitioned = 0;
  p->contacts = anim_graph_character_contacts(c); /* foot locking's while it holds the feet */
  if (a->want & SRV_WANT_GLOBAL) anim_graph_character_global_pose(c);
  p->global_positions = c->global_positions;
}

static void simulate(srv_actor_t *const *actors, int n, float dt, void *scratch) {
  for (int i = 0; i < n; i++) {
    anim_graph_character_t *c = &((graph_actor_t *)actors[i]->character)->c;
    uint64_t jumps = c->jumps;
    int rc = anim_graph_character_tick(c, dt);
    if (rc) actors[i]->error = rc;
    srv_actor_report(actors[i]);
    actors[i]->pose.transitioned = c->jumps != jumps;
  }
}

static int init(void *character, srv_db_entry_t *entry, const srv_actor_setup_t *setup, char *err, int errlen) {
  graph_actor_t *g = character;
  srv_graph_t *graph = setup->shared;
  int start = srv_graph_node_from(graph->graph, setup->start_frame);
  int rc =
      anim_graph_character_init(&g->c, graph->graph, &entry->db, &setup->request->path,
                                setup->request->params.inertialize_halflife, setup->position, setup->facing, start);
  if (rc) {
    snprintf(err, (size_t)errlen, "graph character: %s", anim_strerror(rc));
    return rc;
  }
  anim_graph_character_set_warp(&g->c, &setup->request->params.warp); /* checked with the request */
  /* Wanderers spread over the graph: each its own draws. */
  anim_graph_character_wander(&g->c, setup->slot * 2654435761u + 1u);
  g->graph = srv_graph_retain(graph);
  return 0;
}

static void character_free(void *character) {
  graph_actor_t *g = character;
  anim_graph_character_free(&g->c);
  srv_graph_release(g->graph);
}

/* Its pose block and its path planner's arrays, as asked for (the
 * allocator's usable sizes vary with the heap's state, so equal characters
 * would count differently). The path's arrays grow when set_paths gives a
 * longer path than they hold (service_graph.c re-measures the character
 * then); a goal's two-point path always fits. */
static size_t heap_bytes(const void *character) {
  const anim_graph_character_t *c = &((const graph_actor_t *)character)->c;
  size_t pose = (size_t)c->db->nbones * (7 * sizeof(vec3) + 3 * sizeof(quat));
  return pose + anim_path_planner_heap_bytes(&c->planner);
}

/* A goal only: the graph has no stick or velocity to follow. */
static int set_input(void *character, const anim_controller_input_t *input) {
  if (input->kind != ANIM_INPUT_GOAL) return ANIM_EUNSUPPORTED;
  return anim_graph_character_set_goal(&((graph_actor_t *)character)->c, input->goal.x, input->goal.z);
}

/* Its parameters as a controller's: the jumps' half-life and the warps
 * (root steering alone on), the server's defaults elsewhere. */
static void get_params(const void *character, anim_controller_params_t *out) {
  const anim_graph_character_t *c = &((const graph_actor_t *)character)->c;
  anim_controller_params_default(out);
  out->inertialize_halflife = c->halflife;
  out->warp = c->warp;
}

/* set_character_params: the jumps' half-life and the warps' bounds and
 * switches, root steering's on or off; any other field changed, or
 * another warp turned on, is refused by name. */
static int set_params(void *character, const anim_controller_params_t *next, char *err, int errlen) {
  anim_graph_character_t *c = &((graph_actor_t *)character)->c;
  anim_controller_params_t now;
  get_params(character, &now);
  const struct {
    const char *name;
    int changed;
  } unused[] = {
      {"search_interval", next->search_interval != now.search_interval},
      {"velocity_halflife", next->velocity_halflife != now.velocity_halflife},
      {"rotation_halflife", next->rotation_halflife != now.rotation_halflife},
      {"forward_speed", next->forward_speed != now.forward_speed},
      {"side_speed", next->side_speed != now.side_speed},
      {"back_speed", next->back_speed != now.back_speed},
      {"ignore_surrounding", next->ignore_surrounding != now.ignore_surrounding},
      {"ignore_range_end", next->ignore_range_end != now.ignore_range_end},
      {"transition_cost", next->transition_cost != now.transition_cost},
      {"replan_threshold", next->replan_threshold != now.replan_threshold},
      {"input_f", next->input_f != now.input_f},
      {"input_zeta", next->input_zeta != now.input_zeta},
      {"input_r", next->input_r != now.input_r},
      {"no_play_rate", next->warp.rate != 0},
      {"no_stand_warp", next->warp.stand != 0},
      {"no_orientation_warp", next->warp.orient != 0},
      {"no_stride_warp", next->warp.stride != 0},
  };
  for (size_t i = 0; i < sizeof unused / sizeof unused[0]; i++)
    if (unused[i].changed) {
      snprintf(err, (size_t)errlen, "%s: a graph character does not take it (root steering is its one warp; "
               "inertialize_halflife and the warps' bounds it takes)", unused[i].name);
      return ANIM_EUNSUPPORTED;
    }
  if (!(next->inertialize_halflife > 0.0f) || !isfinite(next->inertialize_halflife)) {
    snprintf(err, (size_t)errlen, "inertialize_halflife = %g: must be > 0 s", (double)next->inertialize_halflife);
    return ANIM_EINVAL;
  }
  int rc = anim_warp_params_validate(&next->warp);
  if (rc) {
    snprintf(err, (size_t)errlen, "warp: %s", anim_strerror(rc));
    return rc;
  }
  anim_graph_character_set_warp(c, &next->warp);
  c->halflife = next->inertialize_halflife;
  return 0;
}

static int state(const void *character, int offsets, srv_response_t *out) {
  const anim_graph_character_t *c = &((const graph_actor_t *)character)->c;
  srv_character_state_response_t *s = &out->body.character_state;
  static const char *const follows[] = {"wander", "path", "goal"};
  s->position = c->pose_positions[0], s->rotation = c->pose_rotations[0];
  s->velocity = c->pose_velocities[0], s->angular_velocity = c->pose_angular_velocities[0];
  s->frame = c->frame;
  s->range = anim_database_range_of(c->db, c->frame);
  s->halflife = c->halflife;
  s->transitions = c->jumps;
  s->follow = follows[c->follow];
  s->path_arc = c->s;
  s->arrived = c->arrived;
  s->plans = c->plans, s->expansions = c->expansions;
  s->root_steering = c->steering;
  if (!c->feet_free) srv_actor_state_feet(&c->feet, out); /* held while steering along a path */
  s->has_params = 1;
  get_params(c, &s->params);
  return srv_actor_state_inertializer(&c->inertializer, offsets, out);
}

/* Set-up: the database's graph, once built (build_graph). */
static void graph_release(void *graph) { srv_graph_release(graph); }

static int setup(const srv_actor_env_t *env, const srv_create_characters_request_t *request, srv_response_t *out,
                 void **out_shared, void (**out_release)(void *shared)) {
  (void)env, (void)request;
  const srv_graph_slot_t *slot = out->entry->graph;
  if (!slot || !slot->ready) {
    int building = slot && slot->building;
    return srv_response_fail(out, building ? ANIM_EAGAIN : ANIM_ENOTFOUND, "create_characters.database = \"%s\": %s",
                             out->entry->db.name,
                             building ? "its graph is still being built" : "no graph: build_graph first");
  }
  *out_shared = srv_graph_retain(slot->ready), *out_release = graph_release;
  return 0;
}

const srv_actor_kind_t srv_actor_graph = {
    .name = "graph",
    .setup = setup,
    .size = sizeof(graph_actor_t),
    .init = init,
    .free = character_free,
    .heap_bytes = heap_bytes,
    .simulate = simulate,
    .report = report,
    .translate = translate,
    .set_input = set_input,
    .inputs = 1u << ANIM_INPUT_GOAL,
    .state = state,
    .get_params = get_params,
    .set_params = set_params,
};
