/*
 * convert_graph.c: motion graphs between protobuf and the client's C types
 * (see convert.h): a graph's description and a planned walk from the
 * server's answers; build options, walk queries and character paths to
 * requests.
 *
 * Pure, like convert.c: nothing allocated on failure, every array checked
 * against the count it comes with (the distance matrix is size^2). No
 * socket, no client: api_graph.c sends and completes the requests.
 */
#include <stdlib.h>
#include <string.h>
#include "convert.h"

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

int anim__graph_description_from(const Animserver__GraphDescription *m, anim_graph_description_t **out) {
  *out = NULL;
  if (!m) return ANIM_EPROTO;
  anim_graph_description_t *d = calloc(1, sizeof *d);
  if (!d) return ANIM_ENOMEM;
  d->database_version = m->database_version, d->status = (int)m->status, d->progress = m->progress;
  d->ready = m->ready, d->frames = m->frames, d->candidates = m->candidates;
  d->slide = m->ready && m->options ? (int)m->options->slide : ANIM_SLIDE_AUTO;
  d->nodes_built = m->nodes_built, d->edges_built = m->edges_built, d->components = m->components;
  d->nodes = m->nodes, d->edges = m->edges, d->transitions = m->transitions, d->characters = m->characters;
  d->build_seconds = m->build_seconds, d->memory_bytes = m->memory_bytes, d->strip_memory_bytes = m->strip_memory_bytes;
  int rc = anim__name_from(d->error, sizeof d->error, m->error);
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
  if (rc) {
    anim_graph_description_free(d);
    return rc;
  }
  *out = d;
  return 0;
}

int anim__graph_walk_from(const Animserver__QueryGraphResponse *m, anim_graph_walk_t **out) {
  *out = NULL;
  if (!m) return ANIM_EPROTO;
  anim_graph_walk_t *w = calloc(1, sizeof *w);
  if (!w) return ANIM_ENOMEM;
  w->database_version = m->database_version, w->error_mean = m->error_mean, w->error_max = m->error_max;
  w->error_max_time = m->error_max_time, w->seconds = m->seconds, w->arc = m->arc, w->plans = m->plans;
  w->plans_exhausted = m->plans_exhausted, w->expansions = m->expansions;
  w->plan_ms_mean = m->plan_ms_mean, w->plan_ms_max = m->plan_ms_max;
  int rc = 0;
  if (m->n_steps && !(w->steps = calloc(m->n_steps, sizeof *w->steps))) rc = ANIM_ENOMEM;
  for (size_t i = 0; !rc && i < m->n_steps; i++) {
    const Animserver__GraphStep *s = m->steps[i];
    w->steps[i] = (anim_graph_step_t){s->edge, s->first_frame, s->last_frame, s->jump, s->time};
  }
  if (!rc) w->nsteps = (int)m->n_steps;
  if (!rc && m->n_roots && !(w->roots = malloc(2 * m->n_roots * sizeof *w->roots))) rc = ANIM_ENOMEM;
  for (size_t i = 0; !rc && i < m->n_roots; i++) w->roots[2 * i] = m->roots[i]->x, w->roots[2 * i + 1] = m->roots[i]->z;
  if (!rc) w->nroots = (int)m->n_roots;
  if (rc) {
    anim_graph_walk_free(w);
    return rc;
  }
  *out = w;
  return 0;
}

/* ---- requests ------------------------------------------------------------------------------- */

int anim__graph_options_to_proto(const anim_graph_build_options_t *in, Animserver__GraphOptions *out) {
  Animserver__GraphOptions init = ANIMSERVER__GRAPH_OPTIONS__INIT;
  *out = init;
  if (in->min_gap < 0 || in->spacing < 0 || in->node_spacing < 0 || in->matrix_size < 0 ||
      in->slide < ANIM_SLIDE_AUTO || in->slide > ANIM_SLIDE_OFF)
    return ANIM_EINVAL;
  out->window = in->window, out->threshold = in->threshold;
  out->min_gap = (uint32_t)in->min_gap, out->spacing = (uint32_t)in->spacing;
  out->node_spacing = (uint32_t)in->node_spacing, out->keep_all = in->keep_all != 0;
  out->matrix_size = (uint32_t)in->matrix_size;
  out->slide = (Animserver__GraphSlide)in->slide;
  return 0;
}

void anim__walk_options_to_proto(const anim_walk_options_t *in, Animserver__PathOptions *out) {
  Animserver__PathOptions init = ANIMSERVER__PATH_OPTIONS__INIT;
  *out = init;
  out->horizon = in->horizon, out->keep = in->keep;
  out->max_expansions = in->max_expansions > 0 ? (uint32_t)in->max_expansions : 0;
  out->disable_warm = in->disable_warm != 0, out->disable_bound = in->disable_bound != 0;
  out->disable_memory = in->disable_memory != 0;
}

/* n (x, z) pairs as wire Vec2s in caller-freed arrays (n + 1 entries: never a NULL array). */
static int points_to_proto(const float *points, int n, Animserver__Vec2 **out_items, Animserver__Vec2 ***out_pointers) {
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

void anim__graph_query_views_free(anim__graph_query_views_t *v) {
  free(v->items), free(v->pointers);
  v->items = NULL, v->pointers = NULL;
}

int anim__graph_query_to_proto(const char *database, const anim_graph_query_t *in, anim__graph_query_views_t *v) {
  memset(v, 0, sizeof *v);
  if (!database || !in || in->npoints < 2 || !in->points) return ANIM_EINVAL;
  if (points_to_proto(in->points, in->npoints, &v->items, &v->pointers)) {
    anim__graph_query_views_free(v);
    return ANIM_ENOMEM;
  }
  Animserver__QueryGraphRequest q = ANIMSERVER__QUERY_GRAPH_REQUEST__INIT;
  Animserver__Placement start = ANIMSERVER__PLACEMENT__INIT;
  Animserver__PathOptions o = ANIMSERVER__PATH_OPTIONS__INIT;
  v->query = q, v->start = start, v->options = o;
  v->query.database = (char *)database, v->query.n_points = (size_t)in->npoints, v->query.points = v->pointers;
  v->query.closed = in->closed != 0, v->query.seconds = in->seconds, v->query.settle = in->settle;
  v->query.roots = in->roots != 0;
  v->start.x = in->start_x, v->start.z = in->start_z, v->start.facing = in->start_facing;
  v->query.start = &v->start;
  if (in->options) {
    anim__walk_options_to_proto(in->options, &v->options);
    v->query.options = &v->options;
  }
  return 0;
}

void anim__paths_views_free(anim__paths_views_t *v) {
  for (int i = 0; v->items && v->pointers && i < v->n; i++) free(v->items[i]), free(v->pointers[i]);
  free(v->paths), free(v->list), free(v->items), free(v->pointers);
  memset(v, 0, sizeof *v);
}

int anim__paths_to_proto(const uint64_t *characters, const float *const *points, const int *npoints, const int *closed,
                         int n, anim__paths_views_t *v) {
  memset(v, 0, sizeof *v);
  if (!characters || !points || !npoints || n < 1) return ANIM_EINVAL;
  for (int i = 0; i < n; i++)
    if (npoints[i] < 0 || (npoints[i] && !points[i])) return ANIM_EINVAL;
  v->n = n;
  v->paths = calloc((size_t)n, sizeof *v->paths);
  v->list = calloc((size_t)n, sizeof *v->list);
  v->items = calloc((size_t)n, sizeof *v->items);
  v->pointers = calloc((size_t)n, sizeof *v->pointers);
  int rc = v->paths && v->list && v->items && v->pointers ? 0 : ANIM_ENOMEM;
  for (int i = 0; !rc && i < n; i++) {
    Animserver__CharacterPath init = ANIMSERVER__CHARACTER_PATH__INIT;
    v->paths[i] = init;
    rc = points_to_proto(points[i], npoints[i], &v->items[i], &v->pointers[i]);
    v->paths[i].character = characters[i], v->paths[i].n_points = (size_t)npoints[i];
    v->paths[i].points = v->pointers[i], v->paths[i].closed = closed && closed[i];
    v->list[i] = &v->paths[i];
  }
  if (rc) {
    anim__paths_views_free(v);
    return rc;
  }
  Animserver__SetPathsRequest set = ANIMSERVER__SET_PATHS_REQUEST__INIT;
  v->set = set;
  v->set.n_paths = (size_t)n, v->set.paths = v->list;
  return 0;
}
