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
#include "database/dbfile.h"
#include "learned/lmm.h"
#include "registry.h"
#include "service.h"

int srv_service_acquire_database(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  if (!request->database) return 0;
  out->entry = srv_registry_acquire(ctx->env->registry, request->database);
  if (!out->entry)
    return srv_response_fail(out, ANIM_ENOTFOUND, "%s.%s = \"%s\": no database of that name is loaded",
                             srv_request_name(request->type), request->database_field, request->database);
  /* A mapped file changed under it (dbfile.h): answer an error instead of reading it; reload and unload still go. */
  if (request->type == SRV_REQ_RELOAD_DATABASE || request->type == SRV_REQ_UNLOAD_DATABASE) return 0;
  char why[SRV_ERROR_MESSAGE_MAX];
  int rc = anim_database_check(&out->entry->db, why, sizeof why);
  return rc ? srv_response_fail(out, rc, "%s.%s = \"%s\": %s", srv_request_name(request->type),
                                request->database_field, request->database, why)
            : 0;
}

/* Copies the registry's summaries: the encoder reads no registry. */
static int list(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  const srv_registry_t *registry = ctx->env->registry;
  srv_list_databases_response_t *r = &out->body.list_databases;
  if (!(r->summaries = srv_response_alloc(out, (size_t)(registry->count + 1) * sizeof *r->summaries)))
    return ANIM_ENOMEM;
  for (int i = 0; i < registry->count; i++) srv_db_entry_summary(registry->entries[i], &r->summaries[r->count++]);
  return 0;
}

static int describe(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  return 0; /* the entry acquired in prepare is all the encoder needs */
}

static int check_absent(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  srv_db_entry_t *existing = srv_registry_acquire(ctx->env->registry, request->database);
  if (!existing) return 0;
  srv_db_entry_release(existing);
  return srv_response_fail(out, ANIM_EEXIST, "load_database.name = \"%s\": already loaded (use reload_database)",
                           request->database);
}

int srv_data_file_path(const srv_config_t *config, const char *name, const char *suffix, char *out_path, char *err,
                       int errlen) {
  char dir[PATH_MAX], candidate[PATH_MAX + 80];
  if (!realpath(config->data_dir, dir)) {
    snprintf(err, errlen, "data directory %s does not exist", config->data_dir);
    return ANIM_ENOTFOUND;
  }
  snprintf(candidate, sizeof candidate, "%s/%s%s", dir, name, suffix);
  if (!realpath(candidate, out_path)) {
    snprintf(err, errlen, "no file %s%s in the data directory", name, suffix);
    return ANIM_ENOTFOUND;
  }
  size_t len = strlen(dir);
  if (strncmp(out_path, dir, len) != 0 || out_path[len] != '/') {
    snprintf(err, errlen, "%s%s resolves outside the data directory", name, suffix);
    return ANIM_EBADNAME;
  }
  return 0;
}

int srv_database_open(const srv_config_t *config, const char *name, srv_db_entry_t **out_entry, char *err,
                       int errlen) {
  char path[PATH_MAX];
  *out_entry = NULL;
  int rc = srv_db_name_validate(name);
  if (rc) {
    snprintf(err, errlen, "\"%s\" is not a plain database name", name);
    return rc;
  }
  if ((rc = srv_data_file_path(config, name, ".animdb", path, err, errlen))) return rc;
  anim_database_t db;
  memset(&db, 0, sizeof db);
  if ((rc = anim_dbfile_load(&db, path, err, errlen))) return rc;
  snprintf(db.name, sizeof db.name, "%s", name);
  /* Learned networks trained on it live beside it, NAME.lmm/: all three
   * files fitting this database, or the load fails (never half a set). */
  anim_lmm_networks_t *nets = NULL;
  char dir[PATH_MAX], message[400];
  if ((rc = srv_data_file_path(config, name, ".lmm", dir, message, sizeof message)) == 0) {
    if (!(nets = anim_lmm_networks_load_for(dir, &db, &rc, message, sizeof message))) {
      snprintf(err, errlen, "%s.lmm: %s", name, message);
      anim_database_free(&db);
      return rc;
    }
  } else if (rc != ANIM_ENOTFOUND) {
    snprintf(err, errlen, "%s", message);
    anim_database_free(&db);
    return rc;
  }
  *out_entry = srv_db_entry_create(&db, path, err, errlen);
  if (!*out_entry) {
    anim_lmm_networks_free(nets);
    return ANIM_EFORMAT;
  }
  if (nets) srv_db_entry_set_networks(*out_entry, nets);
  return 0;
}

/* Thread pool: read, check and index the file. */
static int read_file(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  char err[SRV_ERROR_MESSAGE_MAX];
  int rc = srv_database_open(ctx->env->config, request->database, &out->built, err, sizeof err);
  return rc ? srv_response_fail(out, rc, "%s.name: %s", srv_request_name(request->type), err) : 0;
}

/* Loop thread: put the built entry in the registry. */
static int install(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  srv_registry_t *registry = ctx->env->registry;
  const srv_config_t *config = ctx->env->config;
  if (request->type == SRV_REQ_LOAD_DATABASE && check_absent(ctx, request, out)) return out->error;
  if (request->type == SRV_REQ_RELOAD_DATABASE) {
    /* Unloaded while we were rebuilding: do not resurrect it. */
    srv_db_entry_t *current = srv_registry_acquire(registry, request->database);
    if (!current)
      return srv_response_fail(out, ANIM_ENOTFOUND, "reload_database.name = \"%s\": unloaded meanwhile",
                               request->database);
    srv_db_entry_release(current);
  }
  char err[256];
  int rc = srv_registry_fits(registry, out->built, config->max_databases, config->max_database_memory, err, sizeof err);
  if (rc == 0) rc = srv_registry_put(registry, out->built);
  if (rc) return srv_response_fail(out, rc, "%s", rc == ANIM_ELIMIT && err[0] ? err : anim_strerror(rc));
  /* The registry took the built reference; the response keeps one to describe it. */
  srv_db_entry_release(out->entry);
  out->entry = srv_db_entry_retain(out->built);
  out->built = NULL;
  return 0;
}

static int unload(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  return srv_registry_remove(ctx->env->registry, request->database);
}

static int always(const srv_request_t *request, const srv_response_t *prepared) { return 1; }

const srv_service_t srv_service_list_databases = {.handle = list};
const srv_service_t srv_service_describe_database = {.prepare = srv_service_acquire_database, .handle = describe};
const srv_service_t srv_service_load_database = {
    .prepare = check_absent, .handle = read_file, .finish = install, .off_loop = always, .flags = SRV_SERVICE_ADMIN};
const srv_service_t srv_service_reload_database = {.prepare = srv_service_acquire_database, .handle = read_file,
                                                   .finish = install, .off_loop = always, .flags = SRV_SERVICE_ADMIN};
const srv_service_t srv_service_unload_database = {
    .prepare = srv_service_acquire_database, .handle = unload, .flags = SRV_SERVICE_ADMIN};
