/*
 * service_database.c: list, describe, load, reload and unload databases.
 *
 * Loads and reloads read NAME.animdb from the data directory on the thread
 * pool (file checks, index builds), then install the result on the loop
 * thread: a reload swaps the entry in one step, requests in flight keep the
 * old one until they complete.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "dbfile.h"
#include "registry.h"
#include "server.h"
#include "services.h"

static const char *requested_name(const anim_request_t *request) {
  switch (request->type) {
  case ANIM_REQUEST_SEARCH:
  case ANIM_REQUEST_BATCH_SEARCH: return request->body.search.database;
  case ANIM_REQUEST_POSE: return request->body.pose.database;
  case ANIM_REQUEST_CREATE_CHARACTERS: return request->body.create.database;
  default: return request->body.db.name;
  }
}

int anim_database_list(const anim_service_ctx_t *ctx, const anim_request_t *request, anim_response_t *out) {
  out->registry = &ctx->server->registry;
  return 0;
}

int anim_database_acquire(const anim_service_ctx_t *ctx, const anim_request_t *request, anim_response_t *out) {
  const char *name = requested_name(request);
  out->entry = anim_registry_acquire(&ctx->server->registry, name);
  if (!out->entry) return anim_response_fail(out, ANIM_ENOTFOUND, "no database named \"%s\" is loaded", name);
  /* A mapped file changed under it (dbfile.h): answer an error instead of reading it; reload and unload still go. */
  char why[ANIM_ERROR_MESSAGE_MAX];
  int rc = request->type == ANIM_REQUEST_RELOAD_DATABASE || request->type == ANIM_REQUEST_UNLOAD_DATABASE
               ? 0
               : anim_database_check(&out->entry->db, why, sizeof why);
  return rc ? anim_response_fail(out, rc, "%s", why) : 0;
}

int anim_database_describe(const anim_service_ctx_t *ctx, const anim_request_t *request, anim_response_t *out) {
  return 0; /* the entry acquired in prepare is all the encoder needs */
}

int anim_database_check_absent(const anim_service_ctx_t *ctx, const anim_request_t *request, anim_response_t *out) {
  anim_db_entry_t *existing = anim_registry_acquire(&ctx->server->registry, request->body.db.name);
  if (!existing) return 0;
  anim_db_entry_release(existing);
  return anim_response_fail(out, ANIM_EEXIST, "database \"%s\" is already loaded (use reload)", request->body.db.name);
}

/* data_dir/NAME.animdb, refused when it resolves outside data_dir (symlinks). */
static int resolve_path(const anim_config_t *config, const char *name, char *out_path, char *err, int errlen) {
  char dir[PATH_MAX], candidate[PATH_MAX + 80];
  if (!realpath(config->data_dir, dir)) {
    snprintf(err, errlen, "data directory %s does not exist", config->data_dir);
    return ANIM_ENOTFOUND;
  }
  snprintf(candidate, sizeof candidate, "%s/%s.animdb", dir, name);
  if (!realpath(candidate, out_path)) {
    snprintf(err, errlen, "no file %s.animdb in the data directory", name);
    return ANIM_ENOTFOUND;
  }
  size_t len = strlen(dir);
  if (strncmp(out_path, dir, len) != 0 || out_path[len] != '/') {
    snprintf(err, errlen, "%s.animdb resolves outside the data directory", name);
    return ANIM_EBADNAME;
  }
  return 0;
}

int anim_database_open(const anim_config_t *config, const char *name, anim_db_entry_t **out_entry, char *err,
                       int errlen) {
  char path[PATH_MAX];
  *out_entry = NULL;
  int rc = anim_db_name_validate(name);
  if (rc) {
    snprintf(err, errlen, "\"%s\" is not a plain database name", name);
    return rc;
  }
  if ((rc = resolve_path(config, name, path, err, errlen))) return rc;
  anim_database_t db;
  memset(&db, 0, sizeof db);
  if ((rc = anim_dbfile_load(&db, path, err, errlen))) return rc;
  snprintf(db.name, sizeof db.name, "%s", name);
  *out_entry = anim_db_entry_create(&db, path, err, errlen);
  return *out_entry ? 0 : ANIM_EFORMAT;
}

/* Thread pool: read, check and index the file. */
int anim_database_read_file(const anim_service_ctx_t *ctx, const anim_request_t *request, anim_response_t *out) {
  char err[ANIM_ERROR_MESSAGE_MAX];
  int rc = anim_database_open(ctx->config, request->body.db.name, &out->built, err, sizeof err);
  return rc ? anim_response_fail(out, rc, "%s", err) : 0;
}

/* Loop thread: put the built entry in the registry. */
int anim_database_install(const anim_service_ctx_t *ctx, const anim_request_t *request, anim_response_t *out) {
  anim_registry_t *registry = &ctx->server->registry;
  if (request->type == ANIM_REQUEST_LOAD_DATABASE && anim_database_check_absent(ctx, request, out)) return out->error;
  if (request->type == ANIM_REQUEST_RELOAD_DATABASE) {
    /* Unloaded while we were rebuilding: do not resurrect it. */
    anim_db_entry_t *current = anim_registry_acquire(registry, request->body.db.name);
    if (!current) return anim_response_fail(out, ANIM_ENOTFOUND, "\"%s\" was unloaded meanwhile", request->body.db.name);
    anim_db_entry_release(current);
  }
  char err[256];
  int rc = anim_registry_fits(registry, out->built, ctx->config->max_databases, ctx->config->max_database_memory, err,
                              sizeof err);
  if (rc == 0) rc = anim_registry_put(registry, out->built);
  if (rc) return anim_response_fail(out, rc, "%s", rc == ANIM_ELIMIT && err[0] ? err : anim_strerror(rc));
  /* The registry took the built reference; the response keeps one to describe it. */
  anim_db_entry_release(out->entry);
  out->entry = out->built;
  out->built = NULL;
  out->entry->refs++;
  return 0;
}

int anim_database_unload(const anim_service_ctx_t *ctx, const anim_request_t *request, anim_response_t *out) {
  return anim_registry_remove(&ctx->server->registry, request->body.db.name);
}

int anim_database_always_off_loop(const anim_request_t *request, const anim_response_t *prepared) { return 1; }
