/* reload.c: settings and databases again on SIGHUP (see reload.h). */
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "log.h"
#include "options.h"
#include "registry.h"
#include "reload.h"
#include "server.h"
#include "service.h"

typedef struct {
  uv_work_t work;
  srv_server_t *server;
  srv_config_t config;         /* a copy: the pool must not read the live one */
  int count;
  char names[SRV_REGISTRY_MAX][64];
  srv_db_entry_t *built[SRV_REGISTRY_MAX];
  char errors[SRV_REGISTRY_MAX][256];
} reload_job_t;

/* What a running server cannot change (options.h's RESTART rows): reported
 * by name, and left as it is. */
static void warn_restart_only(const srv_config_t *next, const srv_config_t *now) {
  for (int i = 0; i < srv_noptions; i++) {
    const srv_option_t *o = &srv_options[i];
    if (!o->name || o->reload != SRV_OPTION_RESTART) continue;
    if (memcmp((const char *)next + o->offset, (const char *)now + o->offset, o->size) != 0)
      srv_log(SRV_LOG_WARN, "reload: --%s changed in the configuration: it takes a restart", o->name);
  }
}

/* Field by field, the settings a running server can change (options.h's
 * LIVE rows): jobs on the pool may be reading the others (the data
 * directory) meanwhile. */
static void apply_live(srv_config_t *c, const srv_config_t *n) {
  for (int i = 0; i < srv_noptions; i++) {
    const srv_option_t *o = &srv_options[i];
    if (o->name && o->reload == SRV_OPTION_LIVE)
      memcpy((char *)c + o->offset, (const char *)n + o->offset, o->size);
  }
}

static void reload_settings(srv_server_t *server) {
  if (!server->argv) return;
  srv_config_t next;
  char err[512];
  srv_config_default(&next);
  int rc = srv_config_parse_args(&next, server->argc, server->argv, err, sizeof err);
  if (rc != 0) {
    srv_log(SRV_LOG_WARN, "reload: configuration unchanged: %s", rc == 1 ? "--help/--version given" : err);
    return;
  }
  warn_restart_only(&next, &server->config);
  apply_live(&server->config, &next);
  srv_log_set_level(next.log_level);
  srv_log(SRV_LOG_INFO, "reload: configuration applied%s%s", next.config_path[0] ? " from " : "", next.config_path);
}

static void open_all(uv_work_t *work) {
  reload_job_t *job = work->data;
  for (int i = 0; i < job->count; i++)
    if (srv_database_open(&job->config, job->names[i], &job->built[i], job->errors[i], sizeof job->errors[i]) != 0)
      job->built[i] = NULL;
}

static void install_all(uv_work_t *work, int status) {
  reload_job_t *job = work->data;
  srv_server_t *server = job->server;
  for (int i = 0; i < job->count; i++) {
    if (!job->built[i]) {
      srv_log(SRV_LOG_WARN, "reload: database %s keeps its last good version: %s", job->names[i],
               status < 0 ? "cancelled" : job->errors[i]);
      continue;
    }
    /* Unloaded meanwhile: do not resurrect it. */
    srv_db_entry_t *current = srv_registry_acquire(&server->registry, job->names[i]);
    char err[256] = "";
    if (!current || srv_registry_fits(&server->registry, job->built[i], server->config.max_databases,
                                       server->config.max_database_memory, err, sizeof err) != 0 ||
        srv_registry_put(&server->registry, job->built[i]) != 0) {
      if (err[0]) srv_log(SRV_LOG_WARN, "reload: database %s keeps its last good version: %s", job->names[i], err);
      srv_db_entry_release(job->built[i]);
    } else {
      srv_log(SRV_LOG_INFO, "reload: database %s version %016llx", job->names[i],
               (unsigned long long)job->built[i]->db.version);
    }
    srv_db_entry_release(current);
  }
  server->reloading = 0;
  free(job);
}

void srv_server_reload(srv_server_t *server) {
  reload_settings(server);
  if (server->reloading) {
    srv_log(SRV_LOG_INFO, "reload: databases already being reloaded");
    return;
  }
  reload_job_t *job = calloc(1, sizeof *job);
  if (!job) return;
  job->work.data = job;
  job->server = server;
  job->config = server->config;
  for (int i = 0; i < server->registry.count; i++) {
    const srv_db_entry_t *e = server->registry.entries[i];
    if (!e->source[0]) continue; /* built in memory (the procedural default) */
    snprintf(job->names[job->count++], sizeof job->names[0], "%s", e->db.name);
  }
  if (job->count == 0 || uv_queue_work(server->loop, &job->work, open_all, install_all) != 0) {
    free(job);
    return;
  }
  server->reloading = 1;
}
