/*
 * api_graph.c: motion graphs (see include/anim_client_graph.h).
 *
 * Build a database's graph, describe it (progress, then the graph), plan a
 * walk along a path on it, and give graph characters their paths: each a
 * _send with its typed completion (answers converted by convert_graph.c),
 * the blocking form that send plus a wait for its id. Creating graph
 * characters is api_character.c's.
 */
#include "client_internal.h"
#include "convert.h"

/* ---- build, describe: both answer a description ------------------------------------------------ */

static void description_complete(anim_client_t *client, anim__pending_t *p, int status,
                                 const Animserver__Response *r) {
  anim_graph_description_t *d = NULL;
  if (status == 0) {
    const Animserver__GraphDescription *m = p->expect == ANIMSERVER__RESPONSE__BODY_BUILD_GRAPH
                                                ? (r->build_graph ? r->build_graph->graph : NULL)
                                                : (r->describe_graph ? r->describe_graph->graph : NULL);
    status = anim__client_check_answer(client, anim__graph_description_from(m, &d));
  }
  if (anim__pending_deliver(p, status, &d, sizeof d)) return;
  anim_graph_description_cb cb = (anim_graph_description_cb)p->cb;
  if (cb) cb(client, p->id, status, d, p->data);
  anim_graph_description_free(d);
}

int anim_client_graph_build_send(anim_client_t *client, const char *database, const anim_graph_build_options_t *options,
                                 anim_graph_description_cb cb, void *data, uint64_t *out_id) {
  if (!client || !database) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__BuildGraphRequest build = ANIMSERVER__BUILD_GRAPH_REQUEST__INIT;
  Animserver__GraphOptions o;
  build.database = (char *)database;
  if (options) {
    if (anim__graph_options_to_proto(options, &o)) return anim__client_refuse(client, ANIM_EINVAL, __func__);
    build.options = &o;
  }
  request.body_case = ANIMSERVER__REQUEST__BODY_BUILD_GRAPH, request.build_graph = &build;
  return anim__client_send(client, &request, ANIMSERVER__RESPONSE__BODY_BUILD_GRAPH, description_complete,
                           (anim__cb_fn)cb, data, out_id);
}

int anim_client_graph_build(anim_client_t *client, const char *database, const anim_graph_build_options_t *options,
                            anim_graph_description_t **out_description, int timeout_ms) {
  if (out_description) *out_description = NULL;
  if (!client || !out_description) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  int rc;
  ANIM__CLIENT_RUN(rc, client, timeout_ms, out_description, sizeof *out_description,
                   anim_client_graph_build_send(client, database, options, NULL, NULL, &id_));
  return rc;
}

int anim_client_graph_describe_send(anim_client_t *client, const char *database, int transitions, int matrix,
                                    anim_graph_description_cb cb, void *data, uint64_t *out_id) {
  if (!client || !database) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__DescribeGraphRequest describe = ANIMSERVER__DESCRIBE_GRAPH_REQUEST__INIT;
  describe.database = (char *)database, describe.transitions = transitions != 0, describe.matrix = matrix != 0;
  request.body_case = ANIMSERVER__REQUEST__BODY_DESCRIBE_GRAPH, request.describe_graph = &describe;
  return anim__client_send(client, &request, ANIMSERVER__RESPONSE__BODY_DESCRIBE_GRAPH, description_complete,
                           (anim__cb_fn)cb, data, out_id);
}

int anim_client_graph_describe(anim_client_t *client, const char *database, int transitions, int matrix,
                               anim_graph_description_t **out_description, int timeout_ms) {
  if (out_description) *out_description = NULL;
  if (!client || !out_description) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  int rc;
  ANIM__CLIENT_RUN(rc, client, timeout_ms, out_description, sizeof *out_description,
                   anim_client_graph_describe_send(client, database, transitions, matrix, NULL, NULL, &id_));
  return rc;
}

/* ---- query ------------------------------------------------------------------------------------- */

static void walk_complete(anim_client_t *client, anim__pending_t *p, int status, const Animserver__Response *r) {
  anim_graph_walk_t *w = NULL;
  if (status == 0) status = anim__client_check_answer(client, anim__graph_walk_from(r->query_graph, &w));
  if (anim__pending_deliver(p, status, &w, sizeof w)) return;
  anim_graph_walk_cb cb = (anim_graph_walk_cb)p->cb;
  if (cb) cb(client, p->id, status, w, p->data);
  anim_graph_walk_free(w);
}

int anim_client_graph_query_send(anim_client_t *client, const char *database, const anim_graph_query_t *query,
                                 anim_graph_walk_cb cb, void *data, uint64_t *out_id) {
  if (!client) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  anim__graph_query_views_t v;
  int rc = anim__graph_query_to_proto(database, query, &v);
  if (rc) return anim__client_refuse(client, rc, __func__);
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  request.body_case = ANIMSERVER__REQUEST__BODY_QUERY_GRAPH, request.query_graph = &v.query;
  rc = anim__client_send(client, &request, ANIMSERVER__RESPONSE__BODY_QUERY_GRAPH, walk_complete, (anim__cb_fn)cb, data,
                         out_id);
  anim__graph_query_views_free(&v);
  return rc;
}

int anim_client_graph_query(anim_client_t *client, const char *database, const anim_graph_query_t *query,
                            anim_graph_walk_t **out_walk, int timeout_ms) {
  if (out_walk) *out_walk = NULL;
  if (!client || !out_walk) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  int rc;
  ANIM__CLIENT_RUN(rc, client, timeout_ms, out_walk, sizeof *out_walk,
                   anim_client_graph_query_send(client, database, query, NULL, NULL, &id_));
  return rc;
}

/* ---- paths ------------------------------------------------------------------------------------- */

static void paths_complete(anim_client_t *client, anim__pending_t *p, int status, const Animserver__Response *r) {
  anim__client_complete_status(client, p, status, status == 0 && r->set_paths ? r->set_paths->tick : 0);
}

int anim_client_graph_paths_send(anim_client_t *client, const uint64_t *characters, const float *const *points,
                                 const int *npoints, const int *closed, int n, anim_status_cb cb, void *data,
                                 uint64_t *out_id) {
  if (!client) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  anim__paths_views_t v;
  int rc = anim__paths_to_proto(characters, points, npoints, closed, n, &v);
  if (rc) return anim__client_refuse(client, rc, __func__);
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  request.body_case = ANIMSERVER__REQUEST__BODY_SET_PATHS, request.set_paths = &v.set;
  rc = anim__client_send(client, &request, ANIMSERVER__RESPONSE__BODY_SET_PATHS, paths_complete, (anim__cb_fn)cb, data,
                         out_id);
  anim__paths_views_free(&v);
  return rc;
}

int anim_client_graph_paths(anim_client_t *client, const uint64_t *characters, const float *const *points,
                            const int *npoints, const int *closed, int n, uint64_t *out_tick, int timeout_ms) {
  if (!client) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  uint64_t tick = 0;
  int rc;
  ANIM__CLIENT_RUN(rc, client, timeout_ms, &tick, sizeof tick,
                   anim_client_graph_paths_send(client, characters, points, npoints, closed, n, NULL, NULL, &id_));
  if (rc == 0 && out_tick) *out_tick = tick;
  return rc;
}
