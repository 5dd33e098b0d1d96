/*
 * actor_graph.c: the MODE_GRAPH character kind: a walk on the database's
 * motion graph (core/graph/graph_character.h), holding a reference to the graph
 * it started on (graphs.h), so a rebuild never pulls it away.
 *
 * It wanders until set_paths gives it a path or set_inputs a goal (the
 * goal's speed is not used: the graph's clips set the pace); its jumps are
 * inertialized with params.inertialize_halflife. Planning happens inside
 * the tick that reaches a node, bounded by the planner's max_expansions.
 * Nothing here runs for characters of other kinds.
 */
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
  p->contacts = 0;
  for (int s = 0; s < db->ncontacts && s < 32; s++)
    if (db->contacts[(size_t)c->frame * (size_t)db->ncontacts + (size_t)s]) p->contacts |= 1u << s;
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
};
