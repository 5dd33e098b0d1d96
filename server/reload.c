/* reload.c: settings and databases again on SIGHUP (see reload.h). */
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "log.h"
#include "registry.h"
#include "reload.h"
#include "server.h"
#include "services.h"

typedef struct {
  uv_work_t work;
  anim_server_t *server;
  anim_config_t config;         /* a copy: the pool must not read the live one */
  int count;
  char names[ANIM_REGISTRY_MAX][64];
  anim_db_entry_t *built[ANIM_REGISTRY_MAX];
  char errors[ANIM_REGISTRY_MAX][256];
} reload_job_t;

/* What a running server cannot change: kept, with a warning. */
static void keep_restart_only(anim_config_t *next, const anim_config_t *now) {
  const char *changed = NULL;
  if (strcmp(next->host, now->host) || next->port != now->port) changed = "host/port";
  else if (strcmp(next->metrics_host, now->metrics_host) || next->metrics_port != now->metrics_port) changed = "metrics address";
  else if (next->tick_rate != now->tick_rate) changed = "tick-rate";
  else if (strcmp(next->data_dir, now->data_dir)) changed = "data-dir";
  else if (next->reuseport != now->reuseport) changed = "reuseport";
  if (changed) anim_log(ANIM_LOG_WARN, "reload: %s changed in the configuration: it takes a restart", changed);
  memcpy(next->host, now->host, sizeof next->host);
  next->port = now->port;
  memcpy(next->metrics_host, now->metrics_host, sizeof next->metrics_host);
  next->metrics_port = now->metrics_port;
  next->tick_rate = now->tick_rate;
  memcpy(next->data_dir, now->data_dir, sizeof next->data_dir);
  next->reuseport = now->reuseport;
  next->default_database = now->default_database;
  next->npreload = now->npreload;
  memcpy(next->preload, now->preload, sizeof next->preload);
}

static void reload_settings(anim_server_t *server) {
  if (!server->argv) return;
  anim_config_t next;
  char err[512];
  anim_config_default(&next);
  int rc = anim_config_parse_args(&next, server->argc, server->argv, err, sizeof err);
  if (rc != 0) {
    anim_log(ANIM_LOG_WARN, "reload: configuration unchanged: %s", rc == 1 ? "--help/--version given" : err);
    return;
  }
  keep_restart_only(&next, &server->config);
  server->config = next;
  anim_log_set_level(next.log_level);
  anim_log(ANIM_LOG_INFO, "reload: configuration applied%s%s", next.config_path[0] ? " from " : "", next.config_path);
}

static void open_all(uv_work_t *work) {
  reload_job_t *job = work->data;
  for (int i = 0; i < job->count; i++)
    if (anim_database_open(&job->config, job->names[i], &job->built[i], job->errors[i], sizeof job->errors[i]) != 0)
      job->built[i] = NULL;
}

static void install_all(uv_work_t *work, int status) {
  reload_job_t *job = work->data;
  anim_server_t *server = job->server;
  for (int i = 0; i < job->count; i++) {
    if (!job->built[i]) {
      anim_log(ANIM_LOG_WARN, "reload: database %s keeps its last good version: %s", job->names[i],
               status < 0 ? "cancelled" : job->errors[i]);
      continue;
    }
    /* Unloaded meanwhile: do not resurrect it. */
    anim_db_entry_t *current = anim_registry_acquire(&server->registry, job->names[i]);
    char err[256] = "";
    if (!current || anim_registry_fits(&server->registry, job->built[i], server->config.max_databases,
                                       server->config.max_database_memory, err, sizeof err) != 0 ||
        anim_registry_put(&server->registry, job->built[i]) != 0) {
      if (err[0]) anim_log(ANIM_LOG_WARN, "reload: database %s keeps its last good version: %s", job->names[i], err);
      anim_db_entry_release(job->built[i]);
    } else {
      anim_log(ANIM_LOG_INFO, "reload: database %s version %016llx", job->names[i],
               (unsigned long long)job->built[i]->db.version);
    }
    anim_db_entry_release(current);
  }
  server->reloading = 0;
  free(job);
}

void anim_server_reload(anim_server_t *server) {
  reload_settings(server);
  if (server->reloading) {
    anim_log(ANIM_LOG_INFO, "reload: databases already being reloaded");
    return;
  }
  reload_job_t *job = calloc(1, sizeof *job);
  if (!job) return;
  job->work.data = job;
  job->server = server;
  job->config = server->config;
  for (int i = 0; i < server->registry.count; i++) {
    const anim_db_entry_t *e = server->registry.entries[i];
    if (!e->source[0]) continue; /* built in memory (the procedural default) */
    snprintf(job->names[job->count++], sizeof job->names[0], "%s", e->db.name);
  }
  if (job->count == 0 || uv_queue_work(server->loop, &job->work, open_all, install_all) != 0) {
    free(job);
    return;
  }
  server->reloading = 1;
}
