/*
 * actor_graph.h: what the motion graph requests reach in a MODE_GRAPH actor
 * (actor_graph.c). Loop thread, between ticks.
 *
 * What it does not: plan or tick (core/graph/graph_path.h, and the kind's simulate).
 */
#ifndef SRV_ACTOR_GRAPH_H
#define SRV_ACTOR_GRAPH_H

#include "actor.h"
#include "graph/graph_character.h"

/* The actor's graph character, or NULL when it is of another kind. */
anim_graph_character_t *srv_actor_graph_character(srv_actor_t *actor);
/* The graph (the build) it runs on, or NULL when it is of another kind: it
 * keeps the one it started on when a newer build serves. */
struct srv_graph;
const struct srv_graph *srv_actor_graph_of(const srv_actor_t *actor);

/* The first node of graph at or after database frame `frame` (node 0 when
 * none is). */
int srv_graph_node_from(const anim_motion_graph_t *graph, int frame);

#endif
