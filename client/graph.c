/*
 * graph.c: motion-graph requests (anim_client_graph.h): requests built
 * from C arguments, answers copied into library-owned descriptions and
 * walks. Not here: graph characters' creation (character.c).
 */
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "client_internal.h"

void anim_graph_description_free(anim_graph_description_t *d) {
  if (!d) return;
  free(d->transition_list), free(d->matrix);
  free(d);
}

void anim_graph_walk_free(anim_graph_walk_t *w) {
  if (!w) return;
  free(w->steps), free(w->roots);
  free(w);
}

static int convert_description(anim_client_t *client, const Animserver__Response *r, void *out) {
  (void)client;
  const Animserver__GraphDescription *m =
      r->body_case == ANIMSERVER__RESPONSE__BODY_BUILD_GRAPH ? r->build_graph->graph : r->describe_graph->graph;
  if (!m) return ANIM_EPROTO;
  anim_graph_description_t *d = calloc(1, sizeof *d);
  if (!d) return ANIM_ENOMEM;
  d->database_version = m->database_version, d->status = (int)m->status, d->progress = m->progress;
  d->ready = m->ready, d->frames = m->frames, d->candidates = m->candidates;
  d->nodes_built = m->nodes_built, d->edges_built = m->edges_built, d->components = m->components;
  d->nodes = m->nodes, d->edges = m->edges, d->transitions = m->transitions, d->characters = m->characters;
  d->build_seconds = m->build_seconds, d->memory_bytes = m->memory_bytes, d->strip_memory_bytes = m->strip_memory_bytes;
  int rc = anim__copy_name(d->error, sizeof d->error, m->error);
  if (!rc && m->n_transition_list && !(d->transition_list = calloc(m->n_transition_list, sizeof *d->transition_list)))
    rc = ANIM_ENOMEM;
  for (size_t i = 0; !rc && i < m->n_transition_list; i++) {
    const Animserver__GraphTransition *t = m->transition_list[i];
    d->transition_list[i] = (anim_graph_transition_info_t){t->from_frame, t->to_frame, t->distance, t->angle};
  }
  if (!rc) d->ntransitions = (int)m->n_transition_list;
  if (!rc && m->n_matrix) {
    if (m->n_matrix != (size_t)m->matrix_size * m->matrix_size) rc = ANIM_EPROTO;
    else if (!(d->matrix = malloc(m->n_matrix * sizeof *d->matrix))) rc = ANIM_ENOMEM;
    else memcpy(d->matrix, m->matrix, m->n_matrix * sizeof *d->matrix), d->matrix_size = (int)m->matrix_size;
  }
  if (rc) anim_graph_description_free(d), d = NULL;
  *(anim_graph_description_t **)out = d;
  return rc;
}

int anim_client_graph_build(anim_client_t *client, const char *database, const anim_graph_build_options_t *options,
                            anim_graph_description_t **out_description, int timeout_ms) {
  if (out_description) *out_description = NULL;
  if (!client || !database || !out_description) return ANIM_EINVAL;
  if (options && (options->min_gap < 0 || options->spacing < 0 || options->node_spacing < 0 || options->matrix_size < 0))
    return ANIM_EINVAL;
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__BuildGraphRequest build = ANIMSERVER__BUILD_GRAPH_REQUEST__INIT;
  Animserver__GraphOptions o = ANIMSERVER__GRAPH_OPTIONS__INIT;
  build.database = (char *)database;
  if (options) {
    o.window = options->window, o.threshold = options->threshold;
    o.min_gap = (uint32_t)options->min_gap, o.spacing = (uint32_t)options->spacing;
    o.node_spacing = (uint32_t)options->node_spacing, o.keep_all = options->keep_all != 0;
    o.matrix_size = (uint32_t)options->matrix_size;
    build.options = &o;
  }
  request.body_case = ANIMSERVER__REQUEST__BODY_BUILD_GRAPH, request.build_graph = &build;
  return anim__client_call(client, &request, ANIMSERVER__RESPONSE__BODY_BUILD_GRAPH, convert_description,
                           out_description, timeout_ms);
}

int anim_client_graph_describe(anim_client_t *client, const char *database, int transitions, int matrix,
                               anim_graph_description_t **out_description, int timeout_ms) {
  if (out_description) *out_description = NULL;
  if (!client || !database || !out_description) return ANIM_EINVAL;
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__DescribeGraphRequest describe = ANIMSERVER__DESCRIBE_GRAPH_REQUEST__INIT;
  describe.database = (char *)database, describe.transitions = transitions != 0, describe.matrix = matrix != 0;
  request.body_case = ANIMSERVER__REQUEST__BODY_DESCRIBE_GRAPH, request.describe_graph = &describe;
  return anim__client_call(client, &request, ANIMSERVER__RESPONSE__BODY_DESCRIBE_GRAPH, convert_description,
                           out_description, timeout_ms);
}

/* points: n (x, z) pairs as wire Vec2s in caller-freed arrays. */
static int build_points(const float *points, int n, Animserver__Vec2 **out_items, Animserver__Vec2 ***out_pointers) {
  *out_items = calloc((size_t)n + 1, sizeof **out_items);
  *out_pointers = calloc((size_t)n + 1, sizeof **out_pointers);
  if (!*out_items || !*out_pointers) return ANIM_ENOMEM;
  for (int i = 0; i < n; i++) {
    Animserver__Vec2 init = ANIMSERVER__VEC2__INIT;
    (*out_items)[i] = init;
    (*out_items)[i].x = points[2 * i], (*out_items)[i].z = points[2 * i + 1];
    (*out_pointers)[i] = &(*out_items)[i];
  }
  return 0;
}

static int convert_walk(anim_client_t *client, const Animserver__Response *r, void *out) {
  (void)client;
  const Animserver__QueryGraphResponse *m = r->query_graph;
  anim_graph_walk_t *w = calloc(1, sizeof *w);
  int rc = w ? 0 : ANIM_ENOMEM;
  if (!rc) {
    w->database_version = m->database_version, w->error_mean = m->error_mean, w->error_max = m->error_max;
    w->error_max_time = m->error_max_time, w->seconds = m->seconds, w->arc = m->arc, w->plans = m->plans;
    w->plans_exhausted = m->plans_exhausted, w->expansions = m->expansions;
    w->plan_ms_mean = m->plan_ms_mean, w->plan_ms_max = m->plan_ms_max;
  }
  if (!rc && m->n_steps && !(w->steps = calloc(m->n_steps, sizeof *w->steps))) rc = ANIM_ENOMEM;
  for (size_t i = 0; !rc && i < m->n_steps; i++) {
    const Animserver__GraphStep *s = m->steps[i];
    w->steps[i] = (anim_graph_step_t){s->edge, s->first_frame, s->last_frame, s->jump, s->time};
  }
  if (!rc) w->nsteps = (int)m->n_steps;
  if (!rc && m->n_roots && !(w->roots = malloc(2 * m->n_roots * sizeof *w->roots))) rc = ANIM_ENOMEM;
  for (size_t i = 0; !rc && i < m->n_roots; i++) w->roots[2 * i] = m->roots[i]->x, w->roots[2 * i + 1] = m->roots[i]->z;
  if (!rc) w->nroots = (int)m->n_roots;
  if (rc) anim_graph_walk_free(w), w = NULL;
  *(anim_graph_walk_t **)out = w;
  return rc;
}

int anim_client_graph_query(anim_client_t *client, const char *database, const anim_graph_query_t *query,
                            anim_graph_walk_t **out_walk, int timeout_ms) {
  if (out_walk) *out_walk = NULL;
  if (!client || !database || !query || !out_walk || query->npoints < 2 || !query->points) return ANIM_EINVAL;
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__QueryGraphRequest q = ANIMSERVER__QUERY_GRAPH_REQUEST__INIT;
  Animserver__Placement start = ANIMSERVER__PLACEMENT__INIT;
  Animserver__PathOptions o = ANIMSERVER__PATH_OPTIONS__INIT;
  Animserver__Vec2 *items;
  Animserver__Vec2 **pointers;
  int rc = build_points(query->points, query->npoints, &items, &pointers);
  if (!rc) {
    q.database = (char *)database, q.n_points = (size_t)query->npoints, q.points = pointers;
    q.closed = query->closed != 0, q.seconds = query->seconds, q.settle = query->settle, q.roots = query->roots != 0;
    start.x = query->start_x, start.z = query->start_z, start.facing = query->start_facing, q.start = &start;
    if (query->options) {
      o.horizon = query->options->horizon, o.keep = query->options->keep;
      o.max_expansions = query->options->max_expansions > 0 ? (uint32_t)query->options->max_expansions : 0;
      q.options = &o;
    }
    request.body_case = ANIMSERVER__REQUEST__BODY_QUERY_GRAPH, request.query_graph = &q;
    rc = anim__client_call(client, &request, ANIMSERVER__RESPONSE__BODY_QUERY_GRAPH, convert_walk, out_walk, timeout_ms);
  }
  free(items), free(pointers);
  return rc;
}

static int convert_paths_tick(anim_client_t *client, const Animserver__Response *r, void *out) {
  (void)client;
  if (out) *(uint64_t *)out = r->set_paths->tick;
  return 0;
}

int anim_client_graph_paths(anim_client_t *client, const uint64_t *characters, const float *const *points,
                            const int *npoints, const int *closed, int n, uint64_t *out_tick, int timeout_ms) {
  if (!client || !characters || !points || !npoints || n < 1) return ANIM_EINVAL;
  Animserver__CharacterPath *paths = calloc((size_t)n, sizeof *paths);
  Animserver__CharacterPath **list = calloc((size_t)n, sizeof *list);
  Animserver__Vec2 **items = calloc((size_t)n, sizeof *items);
  Animserver__Vec2 ***pointers = calloc((size_t)n, sizeof *pointers);
  int rc = paths && list && items && pointers ? 0 : ANIM_ENOMEM;
  for (int i = 0; !rc && i < n; i++) {
    Animserver__CharacterPath init = ANIMSERVER__CHARACTER_PATH__INIT;
    paths[i] = init;
    if (npoints[i] < 0 || (npoints[i] && !points[i])) rc = ANIM_EINVAL;
    else rc = build_points(points[i], npoints[i], &items[i], &pointers[i]);
    paths[i].character = characters[i], paths[i].n_points = (size_t)npoints[i], paths[i].points = pointers[i];
    paths[i].closed = closed && closed[i];
    list[i] = &paths[i];
  }
  if (!rc) {
    Animserver__Request request = ANIMSERVER__REQUEST__INIT;
    Animserver__SetPathsRequest set = ANIMSERVER__SET_PATHS_REQUEST__INIT;
    set.n_paths = (size_t)n, set.paths = list;
    request.body_case = ANIMSERVER__REQUEST__BODY_SET_PATHS, request.set_paths = &set;
    rc = anim__client_call(client, &request, ANIMSERVER__RESPONSE__BODY_SET_PATHS, convert_paths_tick, out_tick,
                           timeout_ms);
  }
  for (int i = 0; items && pointers && i < n; i++) free(items[i]), free(pointers[i]);
  free(paths), free(list), free(items), free(pointers);
  return rc;
}
