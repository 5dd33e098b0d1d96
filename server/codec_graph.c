/*
 * codec_graph.c: the motion graph requests on the wire: build_graph,
 * describe_graph, query_graph, set_paths (see codec.h), and the PathOptions
 * create_characters shares. What needs the database (tags, bone count,
 * the window's frames) is checked by the service.
 */
#include <math.h>
#include <string.h>
#include "anim_error.h"
#include "codec_internal.h"
#include "graph/graph_matrix.h"
#include "graphs.h"
#include "registry.h"

#define GRAPH_MAX_FRAMES 100000 /* min_gap, spacing, node_spacing */

/* A float option: finite, and > 0 when given (0 takes the default). */
static int positive_or_default(srv_decoder_t *d, const char *field, float value, const char *unit) {
  int rc = srv_check_finite_value(d, field, value);
  if (!rc && value < 0.0f)
    rc = srv_decode_fail(d, ANIM_EINVAL, ".%s = %g: must be > 0 %s (or 0 for the default)", field, value, unit);
  return rc;
}

static int decode_graph_options(srv_decoder_t *d, const Animserver__GraphOptions *in,
                                srv_graph_request_options_t *out) {
  memset(out, 0, sizeof *out);
  out->slide = ANIM_GRAPH_SLIDE_AUTO;
  if (!in) return 0;
  size_t mark = srv_path_field(d, "options");
  int rc;
  if ((rc = positive_or_default(d, "window", in->window, "s")) ||
      (rc = positive_or_default(d, "threshold", in->threshold, "m")) ||
      (rc = srv_check_max(d, "min_gap", in->min_gap, GRAPH_MAX_FRAMES, ANIM_EINVAL)) ||
      (rc = srv_check_max(d, "spacing", in->spacing, GRAPH_MAX_FRAMES, ANIM_EINVAL)) ||
      (rc = srv_check_max(d, "node_spacing", in->node_spacing, GRAPH_MAX_FRAMES, ANIM_EINVAL)) ||
      (rc = srv_check_max(d, "tags", in->n_tags, SRV_GRAPH_MAX_TAGS, ANIM_ELIMIT)) ||
      (rc = srv_check_max(d, "bone_weights", in->n_bone_weights, ANIM_MAX_BONES, ANIM_EDIMENSION)) ||
      (rc = srv_check_finite(d, "bone_weights", in->bone_weights, in->n_bone_weights)) ||
      (rc = srv_check_max(d, "matrix_size", in->matrix_size, ANIM_GRAPH_MATRIX_MAX, ANIM_EINVAL)))
    return rc;
  if (in->window > 2.0f) return srv_decode_fail(d, ANIM_EINVAL, ".window = %g: at most 2 s", in->window);
  if ((unsigned)in->slide > ANIMSERVER__GRAPH_SLIDE__GRAPH_SLIDE_OFF)
    return srv_decode_fail(d, ANIM_EINVAL,
                           ".slide = %d: GRAPH_SLIDE_AUTO (0), GRAPH_SLIDE_ON (1) or GRAPH_SLIDE_OFF (2)",
                           (int)in->slide);
  if (in->matrix_size && in->matrix_size < ANIM_GRAPH_MATRIX_MIN)
    return srv_decode_fail(d, ANIM_EINVAL, ".matrix_size = %u: 0 (none) or %d..%d", in->matrix_size,
                           ANIM_GRAPH_MATRIX_MIN, ANIM_GRAPH_MATRIX_MAX);
  size_t field = srv_path_field(d, "bone_weights");
  for (size_t i = 0; i < in->n_bone_weights; i++)
    if (in->bone_weights[i] < 0.0f) {
      srv_path_index(d, i);
      return srv_decode_fail(d, ANIM_EINVAL, " = %g: weights are >= 0", in->bone_weights[i]);
    }
  srv_path_restore(d, field);
  field = srv_path_field(d, "tags");
  for (size_t i = 0; i < in->n_tags; i++) {
    size_t item = srv_path_index(d, i);
    if ((rc = srv_check_name(d, NULL, in->tags[i]))) return rc;
    out->tags[i] = in->tags[i];
    srv_path_restore(d, item);
  }
  srv_path_restore(d, field);
  out->ntags = (int)in->n_tags;
  out->window = in->window, out->threshold = in->threshold;
  out->min_gap = (int)in->min_gap, out->spacing = (int)in->spacing, out->node_spacing = (int)in->node_spacing;
  out->bone_weights = in->bone_weights, out->nweights = (int)in->n_bone_weights;
  out->keep_all = in->keep_all;
  out->matrix_size = (int)in->matrix_size;
  out->slide = in->slide == ANIMSERVER__GRAPH_SLIDE__GRAPH_SLIDE_ON    ? 1
               : in->slide == ANIMSERVER__GRAPH_SLIDE__GRAPH_SLIDE_OFF ? 0
                                                                        : ANIM_GRAPH_SLIDE_AUTO;
  srv_path_restore(d, mark);
  return 0;
}

int srv_decode_path_options(srv_decoder_t *d, const char *field, const Animserver__PathOptions *in,
                            anim_path_options_t *out) {
  anim_path_options_default(out);
  if (!in) return 0;
  size_t mark = srv_path_field(d, field);
  int rc;
  if ((rc = positive_or_default(d, "horizon", in->horizon, "s")) ||
      (rc = positive_or_default(d, "keep", in->keep, "s")) ||
      (rc = srv_check_max(d, "max_expansions", in->max_expansions, SRV_PATH_MAX_EXPANSIONS, ANIM_EINVAL)))
    return rc;
  if (in->horizon > 60.0f) return srv_decode_fail(d, ANIM_EINVAL, ".horizon = %g: at most 60 s", in->horizon);
  if (in->horizon) out->horizon = in->horizon;
  if (in->keep) out->keep = in->keep;
  if (in->max_expansions) out->max_expansions = (int)in->max_expansions;
  /* The refinements are on unless disabled (a field's default, false, keeps them). */
  if (in->disable_warm) out->warm = 0;
  if (in->disable_bound) out->bound = 0;
  if (in->disable_memory) out->memory = 0.0f;
  if (out->keep > out->horizon)
    return srv_decode_fail(d, ANIM_EINVAL, ".keep = %g: at most the horizon (%g s)", out->keep, out->horizon);
  srv_path_restore(d, mark);
  return 0;
}

/* A polyline: 2..ANIM_PATH_MAX_POINTS finite points within the world limit,
 * of some length; copied into the request's arena as x z pairs. */
static int decode_points(srv_decoder_t *d, Animserver__Vec2 **points, size_t n, const float **out, int *out_n) {
  size_t mark = srv_path_field(d, "points");
  if (n < 2 || n > ANIM_PATH_MAX_POINTS)
    return srv_decode_fail(d, n < 2 ? ANIM_EINVAL : ANIM_ELIMIT, ": %zu points, a path has 2 to %d", n,
                           ANIM_PATH_MAX_POINTS);
  float *xz = srv_decode_alloc(d, 2 * n * sizeof *xz);
  if (!xz) return ANIM_ELIMIT;
  double length = 0.0;
  for (size_t i = 0; i < n; i++) {
    size_t item = srv_path_index(d, i);
    int rc;
    if ((rc = srv_check_world(d, "x", points[i]->x)) || (rc = srv_check_world(d, "z", points[i]->z))) return rc;
    xz[2 * i] = points[i]->x, xz[2 * i + 1] = points[i]->z;
    if (i) length += hypot((double)xz[2 * i] - xz[2 * i - 2], (double)xz[2 * i + 1] - xz[2 * i - 1]);
    srv_path_restore(d, item);
  }
  if (!(length > 0.0)) return srv_decode_fail(d, ANIM_EINVAL, ": every point is the same: the path has no length");
  srv_path_restore(d, mark);
  *out = xz, *out_n = (int)n;
  return 0;
}

int srv_decode_build_graph(srv_decoder_t *d, const Animserver__BuildGraphRequest *in, srv_request_t *out) {
  int rc = srv_decode_database(d, "database", in->database);
  return rc ? rc : decode_graph_options(d, in->options, &out->body.build_graph.options);
}

int srv_decode_describe_graph(srv_decoder_t *d, const Animserver__DescribeGraphRequest *in, srv_request_t *out) {
  out->body.describe_graph.transitions = in->transitions;
  out->body.describe_graph.matrix = in->matrix;
  return srv_decode_database(d, "database", in->database);
}

int srv_decode_query_graph(srv_decoder_t *d, const Animserver__QueryGraphRequest *in, srv_request_t *out) {
  srv_query_graph_request_t *r = &out->body.query_graph;
  int rc;
  srv_placement_t start = {0.0f, 0.0f, 0.0f, -1};
  if ((rc = srv_decode_database(d, "database", in->database)) ||
      (rc = decode_points(d, in->points, in->n_points, &r->points, &r->npoints)) ||
      (rc = srv_decode_path_options(d, "options", in->options, &r->options)) ||
      (rc = positive_or_default(d, "seconds", in->seconds, "s")) ||
      (rc = srv_check_finite_value(d, "settle", in->settle)))
    return rc;
  if (in->start) {
    size_t mark = srv_path_field(d, "start");
    if ((rc = srv_decode_placement(d, in->start, &start))) return rc;
    srv_path_restore(d, mark);
  }
  r->seconds = in->seconds ? in->seconds : SRV_QUERY_DEFAULT_SECONDS;
  if (r->seconds > SRV_QUERY_MAX_SECONDS)
    return srv_decode_fail(d, ANIM_ELIMIT, ".seconds = %g: at most %g s", in->seconds, (double)SRV_QUERY_MAX_SECONDS);
  if (in->settle < 0.0f || in->settle >= r->seconds)
    return srv_decode_fail(d, ANIM_EINVAL, ".settle = %g: must be in [0, seconds) (%g s)", in->settle, r->seconds);
  r->closed = in->closed;
  r->x = start.x, r->z = start.z, r->facing = start.facing, r->start_frame = start.start_frame;
  r->settle = in->settle;
  r->roots = in->roots;
  return 0;
}

int srv_decode_set_paths(srv_decoder_t *d, const Animserver__SetPathsRequest *in, srv_request_t *out) {
  srv_set_paths_request_t *r = &out->body.set_paths;
  int rc = srv_check_max(d, "paths", in->n_paths, d->limits->max_ids, ANIM_ELIMIT);
  srv_path_item_t *items = rc ? NULL : srv_decode_alloc(d, (in->n_paths + 1) * sizeof *items);
  if (!items) return rc ? rc : ANIM_ELIMIT;
  size_t mark = srv_path_field(d, "paths");
  for (size_t i = 0; i < in->n_paths; i++) {
    const Animserver__CharacterPath *p = in->paths[i];
    size_t item = srv_path_index(d, i);
    items[i] = (srv_path_item_t){p->character, NULL, 0, p->closed};
    if (p->n_points && (rc = decode_points(d, p->points, p->n_points, &items[i].points, &items[i].npoints))) return rc;
    srv_path_restore(d, item);
  }
  srv_path_restore(d, mark);
  r->items = items, r->n = (int)in->n_paths;
  return 0;
}

/* ---- encoding ---- */

/* The options a graph was built with; slide as the build resolved it. */
static Animserver__GraphOptions *encode_options(srv_encoder_t *e, const srv_graph_options_t *o, int slide,
                                                const anim_database_t *db) {
  Animserver__GraphOptions *m = SRV_ENCODER_NEW(e, Animserver__GraphOptions, ANIMSERVER__GRAPH_OPTIONS__INIT);
  if (!m || !(m->tags = srv_encoder_alloc(e, (size_t)(db->ntags + 1) * sizeof *m->tags))) return m;
  const anim_graph_options_t *c = &o->core;
  m->window = c->window, m->threshold = c->threshold;
  m->min_gap = (uint32_t)c->min_gap, m->spacing = (uint32_t)c->spacing, m->node_spacing = (uint32_t)c->node_spacing;
  for (int t = 0; t < db->ntags; t++)
    if (c->tag_mask & (1u << t)) m->tags[m->n_tags++] = (char *)db->tag_names[t];
  m->n_bone_weights = (size_t)o->nweights, m->bone_weights = (float *)o->weights;
  m->keep_all = !c->prune;
  m->matrix_size = (uint32_t)o->matrix_size;
  m->slide = slide ? ANIMSERVER__GRAPH_SLIDE__GRAPH_SLIDE_ON : ANIMSERVER__GRAPH_SLIDE__GRAPH_SLIDE_OFF;
  return m;
}

static Animserver__GraphDescription *encode_description(srv_encoder_t *e, const srv_graph_description_t *s,
                                                        const anim_database_t *db) {
  Animserver__GraphDescription *m =
      SRV_ENCODER_NEW(e, Animserver__GraphDescription, ANIMSERVER__GRAPH_DESCRIPTION__INIT);
  if (!m) return NULL;
  m->database_version = db->version;
  m->status = (Animserver__GraphStatus)s->status;
  m->rows_done = (uint32_t)s->rows_done, m->rows_total = (uint32_t)s->rows_total;
  m->progress = s->rows_total > 0 ? (float)s->rows_done / (float)s->rows_total : 0.0f;
  m->error = (char *)s->error;
  m->characters = s->characters;
  const srv_graph_t *graph = s->graph;
  if (!graph) return m;
  const anim_motion_graph_t *g = graph->graph;
  m->ready = 1;
  m->options = encode_options(e, &graph->options, g->slide, db);
  m->frames = (uint32_t)g->nframes, m->candidates = (uint32_t)g->candidates;
  m->nodes_built = (uint32_t)g->nodes_built, m->edges_built = (uint32_t)g->edges_built;
  m->components = (uint32_t)g->components;
  m->nodes = (uint32_t)g->nnodes, m->edges = (uint32_t)g->nedges, m->transitions = (uint32_t)g->ntransitions;
  m->build_seconds = graph->build_seconds;
  m->memory_bytes = graph->memory_bytes, m->strip_memory_bytes = graph->strip_memory_bytes;
  if (s->transitions &&
      (m->transition_list = srv_encoder_alloc(e, (size_t)(g->ntransitions + 1) * sizeof *m->transition_list)))
    for (int i = 0; i < g->ntransitions; i++) {
      Animserver__GraphTransition *t =
          SRV_ENCODER_NEW(e, Animserver__GraphTransition, ANIMSERVER__GRAPH_TRANSITION__INIT);
      if (!t) return m;
      t->from_frame = (uint32_t)g->transitions[i].from, t->to_frame = (uint32_t)g->transitions[i].to;
      t->distance = g->transitions[i].distance, t->angle = g->transitions[i].angle;
      m->transition_list[m->n_transition_list++] = t;
    }
  if (s->matrix && graph->matrix.cells) {
    m->matrix_size = (uint32_t)graph->matrix.size;
    m->n_matrix = (size_t)graph->matrix.size * (size_t)graph->matrix.size, m->matrix = graph->matrix.cells;
  }
  return m;
}

void srv_encode_build_graph(srv_encoder_t *e, const srv_response_t *in, Animserver__Response *out) {
  Animserver__BuildGraphResponse *m =
      SRV_ENCODER_NEW(e, Animserver__BuildGraphResponse, ANIMSERVER__BUILD_GRAPH_RESPONSE__INIT);
  if (!m) return;
  m->graph = encode_description(e, &in->body.build_graph.description, &in->entry->db);
  out->body_case = ANIMSERVER__RESPONSE__BODY_BUILD_GRAPH, out->build_graph = m;
}

void srv_encode_describe_graph(srv_encoder_t *e, const srv_response_t *in, Animserver__Response *out) {
  Animserver__DescribeGraphResponse *m =
      SRV_ENCODER_NEW(e, Animserver__DescribeGraphResponse, ANIMSERVER__DESCRIBE_GRAPH_RESPONSE__INIT);
  if (!m) return;
  m->graph = encode_description(e, &in->body.describe_graph.description, &in->entry->db);
  out->body_case = ANIMSERVER__RESPONSE__BODY_DESCRIBE_GRAPH, out->describe_graph = m;
}

void srv_encode_query_graph(srv_encoder_t *e, const srv_response_t *in, Animserver__Response *out) {
  const srv_query_graph_response_t *r = &in->body.query_graph;
  Animserver__QueryGraphResponse *m =
      SRV_ENCODER_NEW(e, Animserver__QueryGraphResponse, ANIMSERVER__QUERY_GRAPH_RESPONSE__INIT);
  if (!m || !(m->steps = srv_encoder_alloc(e, (size_t)(r->nsteps + 1) * sizeof *m->steps)) ||
      !(m->roots = srv_encoder_alloc(e, (size_t)(r->nroots + 1) * sizeof *m->roots)))
    return;
  m->database_version = in->entry->db.version;
  Animserver__GraphStep *steps = srv_encoder_alloc(e, (size_t)(r->nsteps + 1) * sizeof *steps);
  Animserver__Vec2 *roots = srv_encoder_alloc(e, (size_t)(r->nroots + 1) * sizeof *roots);
  if (!steps || !roots) return;
  for (int i = 0; i < r->nsteps; i++) {
    const srv_graph_step_t *s = &r->steps[i];
    steps[i] = (Animserver__GraphStep)ANIMSERVER__GRAPH_STEP__INIT;
    steps[i].edge = (uint32_t)s->edge, steps[i].first_frame = (uint32_t)s->first_frame;
    steps[i].last_frame = (uint32_t)s->last_frame, steps[i].jump = s->jump, steps[i].time = s->time;
    m->steps[m->n_steps++] = &steps[i];
  }
  for (int i = 0; i < r->nroots; i++) {
    roots[i] = (Animserver__Vec2)ANIMSERVER__VEC2__INIT;
    roots[i].x = r->roots[2 * i], roots[i].z = r->roots[2 * i + 1];
    m->roots[m->n_roots++] = &roots[i];
  }
  m->error_mean = r->error_mean, m->error_max = r->error_max, m->error_max_time = r->error_max_time;
  m->seconds = r->seconds, m->arc = r->arc;
  m->plans = r->plans, m->expansions = r->expansions, m->plans_exhausted = r->exhausted;
  m->plan_ms_mean = r->plan_ms_mean, m->plan_ms_max = r->plan_ms_max;
  out->body_case = ANIMSERVER__RESPONSE__BODY_QUERY_GRAPH, out->query_graph = m;
}

void srv_encode_set_paths(srv_encoder_t *e, const srv_response_t *in, Animserver__Response *out) {
  Animserver__SetPathsResponse *m =
      SRV_ENCODER_NEW(e, Animserver__SetPathsResponse, ANIMSERVER__SET_PATHS_RESPONSE__INIT);
  if (!m) return;
  m->tick = in->body.set_paths.tick;
  out->body_case = ANIMSERVER__RESPONSE__BODY_SET_PATHS, out->set_paths = m;
}
