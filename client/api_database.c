/*
 * api_database.c: databases, search and poses (see
 * include/anim_client_database.h).
 *
 * list, describe, load, reload, unload, search (one query or a batch) and
 * database poses: each a _send with its typed completion, which turns the
 * answer into plain C (convert.c) and hands it to a blocking caller waiting
 * on the id or to the caller's callback; the blocking form is the send plus
 * anim__client_wait. Building queries is convert_request.c's.
 */
#include <stdlib.h>
#include <string.h>
#include "client_internal.h"
#include "convert.h"

/* ---- list --------------------------------------------------------------------------------- */

typedef struct {
  anim_db_summary_t *summaries; /* the blocking caller's once delivered */
  int count;
} summaries_t;

static void list_complete(anim_client_t *client, anim__pending_t *p, int status, const Animserver__Response *r) {
  summaries_t s = {NULL, 0};
  if (status == 0)
    status = anim__client_check_answer(client, anim__summaries_from(r->list_databases, &s.summaries, &s.count));
  if (anim__pending_deliver(p, status, &s, sizeof s)) return;
  anim_db_list_cb cb = (anim_db_list_cb)p->cb;
  if (cb) cb(client, p->id, status, status ? NULL : s.summaries, s.count, p->data);
  free(s.summaries);
}

int anim_client_db_list_send(anim_client_t *client, anim_db_list_cb cb, void *data, uint64_t *out_id) {
  if (!client) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__ListDatabasesRequest list = ANIMSERVER__LIST_DATABASES_REQUEST__INIT;
  request.body_case = ANIMSERVER__REQUEST__BODY_LIST_DATABASES;
  request.list_databases = &list;
  return anim__client_send(client, &request, ANIMSERVER__RESPONSE__BODY_LIST_DATABASES, list_complete,
                           (anim__cb_fn)cb, data, out_id);
}

int anim_client_db_list(anim_client_t *client, anim_db_summary_t *out_summaries, int max, int *out_count,
                        int timeout_ms) {
  if (!client || max < 0 || (max > 0 && !out_summaries) || !out_count)
    return anim__client_refuse(client, ANIM_EINVAL, __func__);
  summaries_t s = {NULL, 0};
  int rc;
  ANIM__CLIENT_RUN(rc, client, timeout_ms, &s, sizeof s, anim_client_db_list_send(client, NULL, NULL, &id_));
  if (rc == 0) {
    size_t n = (size_t)(s.count < max ? s.count : max);
    if (n) memcpy(out_summaries, s.summaries, n * sizeof *s.summaries); /* no databases: s.summaries is NULL */
    *out_count = s.count;
  }
  free(s.summaries);
  return rc;
}

/* ---- describe ------------------------------------------------------------------------------- */

static void describe_complete(anim_client_t *client, anim__pending_t *p, int status, const Animserver__Response *r) {
  anim_db_description_t *d = NULL;
  if (status == 0) status = anim__client_check_answer(client, anim__description_from(r->describe_database, &d));
  if (anim__pending_deliver(p, status, &d, sizeof d)) return;
  anim_db_describe_cb cb = (anim_db_describe_cb)p->cb;
  if (cb) cb(client, p->id, status, d, p->data);
  anim_db_description_free(d);
}

int anim_client_db_describe_send(anim_client_t *client, const char *name, anim_db_describe_cb cb, void *data,
                                 uint64_t *out_id) {
  if (!client || !name) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__DescribeDatabaseRequest describe = ANIMSERVER__DESCRIBE_DATABASE_REQUEST__INIT;
  describe.name = (char *)name;
  request.body_case = ANIMSERVER__REQUEST__BODY_DESCRIBE_DATABASE;
  request.describe_database = &describe;
  return anim__client_send(client, &request, ANIMSERVER__RESPONSE__BODY_DESCRIBE_DATABASE, describe_complete,
                           (anim__cb_fn)cb, data, out_id);
}

int anim_client_db_describe(anim_client_t *client, const char *name, anim_db_description_t **out_description,
                            int timeout_ms) {
  if (!client || !out_description) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  *out_description = NULL;
  int rc;
  ANIM__CLIENT_RUN(rc, client, timeout_ms, out_description, sizeof *out_description,
                   anim_client_db_describe_send(client, name, NULL, NULL, &id_));
  return rc;
}

/* ---- load, reload, unload: one request shape, a different body field each ---------------------- */

static void changed_complete(anim_client_t *client, anim__pending_t *p, int status, const Animserver__Response *r) {
  anim_db_summary_t summary;
  memset(&summary, 0, sizeof summary);
  if (status == 0 && !r->database_changed) status = anim__client_check_answer(client, ANIM_EPROTO);
  if (status == 0) anim__summary_from(r->database_changed->summary, &summary);
  if (anim__pending_deliver(p, status, &summary, sizeof summary)) return;
  anim_db_changed_cb cb = (anim_db_changed_cb)p->cb;
  if (cb) cb(client, p->id, status, status ? NULL : &summary, p->data);
}

static int db_admin_send(anim_client_t *client, Animserver__Request__BodyCase which, const char *name,
                         anim_db_changed_cb cb, void *data, uint64_t *out_id) {
  if (!client || !name) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__LoadDatabaseRequest load = ANIMSERVER__LOAD_DATABASE_REQUEST__INIT;
  Animserver__ReloadDatabaseRequest reload = ANIMSERVER__RELOAD_DATABASE_REQUEST__INIT;
  Animserver__UnloadDatabaseRequest unload = ANIMSERVER__UNLOAD_DATABASE_REQUEST__INIT;
  load.name = reload.name = unload.name = (char *)name;
  request.body_case = which;
  if (which == ANIMSERVER__REQUEST__BODY_LOAD_DATABASE) request.load_database = &load;
  else if (which == ANIMSERVER__REQUEST__BODY_RELOAD_DATABASE) request.reload_database = &reload;
  else request.unload_database = &unload;
  return anim__client_send(client, &request, ANIMSERVER__RESPONSE__BODY_DATABASE_CHANGED, changed_complete,
                           (anim__cb_fn)cb, data, out_id);
}

static int db_admin(anim_client_t *client, Animserver__Request__BodyCase which, const char *name,
                    anim_db_summary_t *out_summary, int timeout_ms) {
  if (!client) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  anim_db_summary_t summary;
  int rc;
  ANIM__CLIENT_RUN(rc, client, timeout_ms, &summary, sizeof summary,
                   db_admin_send(client, which, name, NULL, NULL, &id_));
  if (rc == 0 && out_summary) *out_summary = summary;
  return rc;
}

int anim_client_db_load(anim_client_t *client, const char *name, anim_db_summary_t *out_summary, int timeout_ms) {
  return db_admin(client, ANIMSERVER__REQUEST__BODY_LOAD_DATABASE, name, out_summary, timeout_ms);
}
int anim_client_db_load_send(anim_client_t *client, const char *name, anim_db_changed_cb cb, void *data,
                             uint64_t *out_id) {
  return db_admin_send(client, ANIMSERVER__REQUEST__BODY_LOAD_DATABASE, name, cb, data, out_id);
}
int anim_client_db_reload(anim_client_t *client, const char *name, anim_db_summary_t *out_summary, int timeout_ms) {
  return db_admin(client, ANIMSERVER__REQUEST__BODY_RELOAD_DATABASE, name, out_summary, timeout_ms);
}
int anim_client_db_reload_send(anim_client_t *client, const char *name, anim_db_changed_cb cb, void *data,
                               uint64_t *out_id) {
  return db_admin_send(client, ANIMSERVER__REQUEST__BODY_RELOAD_DATABASE, name, cb, data, out_id);
}
int anim_client_db_unload(anim_client_t *client, const char *name, int timeout_ms) {
  return db_admin(client, ANIMSERVER__REQUEST__BODY_UNLOAD_DATABASE, name, NULL, timeout_ms);
}
int anim_client_db_unload_send(anim_client_t *client, const char *name, anim_db_changed_cb cb, void *data,
                               uint64_t *out_id) {
  return db_admin_send(client, ANIMSERVER__REQUEST__BODY_UNLOAD_DATABASE, name, cb, data, out_id);
}

/* ---- search --------------------------------------------------------------------------------- */

void anim_query_init(anim_query_t *q) {
  memset(q, 0, sizeof *q);
  q->from_frame = -1;
  q->current_frame = -1;
  q->k = 1;
}

static void search_complete(anim_client_t *client, anim__pending_t *p, int status, const Animserver__Response *r) {
  anim_search_reply_t *reply = NULL;
  if (status == 0) {
    int rc = p->expect == ANIMSERVER__RESPONSE__BODY_SEARCH ? anim__search_from(r->search, &reply)
                                                             : anim__batch_search_from(r->batch_search, &reply);
    status = anim__client_check_answer(client, rc);
  }
  if (anim__pending_deliver(p, status, &reply, sizeof reply)) return;
  anim_search_cb cb = (anim_search_cb)p->cb;
  if (cb) cb(client, p->id, status, reply, p->data);
  anim_search_reply_free(reply);
}

int anim_client_search_send(anim_client_t *client, const char *database, const anim_query_t *queries, int n,
                            anim_search_cb cb, void *data, uint64_t *out_id) {
  if (!client) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  if (!database || !queries || n < 1)
    return anim__client_set_error(client, ANIM_EINVAL, "search needs a database and queries");
  anim__query_views_t *views = calloc((size_t)n, sizeof *views);
  Animserver__SearchQuery **list = calloc((size_t)n, sizeof *list);
  int rc = views && list ? 0 : ANIM_ENOMEM;
  for (int i = 0; rc == 0 && i < n; i++) {
    rc = anim__query_to_proto(&queries[i], &views[i]);
    list[i] = &views[i].query;
  }
  if (rc == 0) {
    Animserver__Request request = ANIMSERVER__REQUEST__INIT;
    Animserver__SearchRequest single = ANIMSERVER__SEARCH_REQUEST__INIT;
    Animserver__BatchSearchRequest batch = ANIMSERVER__BATCH_SEARCH_REQUEST__INIT;
    Animserver__Response__BodyCase expect;
    if (n == 1) {
      single.database = (char *)database;
      single.query = list[0];
      request.body_case = ANIMSERVER__REQUEST__BODY_SEARCH;
      request.search = &single;
      expect = ANIMSERVER__RESPONSE__BODY_SEARCH;
    } else {
      batch.database = (char *)database;
      batch.n_queries = (size_t)n;
      batch.queries = list;
      request.body_case = ANIMSERVER__REQUEST__BODY_BATCH_SEARCH;
      request.batch_search = &batch;
      expect = ANIMSERVER__RESPONSE__BODY_BATCH_SEARCH;
    }
    rc = anim__client_send(client, &request, expect, search_complete, (anim__cb_fn)cb, data, out_id);
  } else {
    anim__client_refuse(client, rc, __func__); /* a query the library refuses, or out of memory */
  }
  free(views);
  free(list);
  return rc;
}

int anim_client_search_batch(anim_client_t *client, const char *database, const anim_query_t *queries, int n,
                             anim_search_reply_t **out_reply, int timeout_ms) {
  if (!client || !out_reply) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  *out_reply = NULL;
  int rc;
  ANIM__CLIENT_RUN(rc, client, timeout_ms, out_reply, sizeof *out_reply,
                   anim_client_search_send(client, database, queries, n, NULL, NULL, &id_));
  return rc;
}

int anim_client_search(anim_client_t *client, const char *database, const anim_query_t *query,
                       anim_search_reply_t **out_reply, int timeout_ms) {
  return anim_client_search_batch(client, database, query, 1, out_reply, timeout_ms);
}

/* ---- poses ---------------------------------------------------------------------------------- */

static void pose_complete(anim_client_t *client, anim__pending_t *p, int status, const Animserver__Response *r) {
  anim_pose_reply_t *reply = NULL;
  if (status == 0) status = anim__client_check_answer(client, anim__pose_reply_from(r->pose, &reply));
  if (anim__pending_deliver(p, status, &reply, sizeof reply)) return;
  anim_pose_cb cb = (anim_pose_cb)p->cb;
  if (cb) cb(client, p->id, status, reply, p->data);
  anim_pose_reply_free(reply);
}

int anim_client_pose_send(anim_client_t *client, const char *database, int frame, int count,
                          const anim_pose_options_t *options, anim_pose_cb cb, void *data, uint64_t *out_id) {
  if (!client || !database || frame < 0 || count < 0) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__PoseRequest pose = ANIMSERVER__POSE_REQUEST__INIT;
  Animserver__PoseOptions opts = ANIMSERVER__POSE_OPTIONS__INIT;
  pose.database = (char *)database;
  pose.frame = (uint32_t)frame;
  pose.count = (uint32_t)count;
  if (options) {
    opts.local = options->local;
    opts.global = options->global;
    opts.velocities = options->velocities;
    pose.options = &opts;
  }
  request.body_case = ANIMSERVER__REQUEST__BODY_POSE;
  request.pose = &pose;
  return anim__client_send(client, &request, ANIMSERVER__RESPONSE__BODY_POSE, pose_complete, (anim__cb_fn)cb, data,
                           out_id);
}

int anim_client_pose(anim_client_t *client, const char *database, int frame, int count,
                     const anim_pose_options_t *options, anim_pose_reply_t **out_reply, int timeout_ms) {
  if (!client || !out_reply) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  *out_reply = NULL;
  int rc;
  ANIM__CLIENT_RUN(rc, client, timeout_ms, out_reply, sizeof *out_reply,
                   anim_client_pose_send(client, database, frame, count, options, NULL, NULL, &id_));
  return rc;
}
