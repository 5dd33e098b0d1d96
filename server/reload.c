/* reload.c: settings and databases again on SIGHUP (see reload.h). */
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "log.h"
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

/* What a running server cannot change: reported, and left as it is. */
static void warn_restart_only(const srv_config_t *next, const srv_config_t *now) {
  const char *changed = NULL;
  if (strcmp(next->host, now->host) || next->port != now->port) changed = "host/port";
  else if (strcmp(next->metrics_host, now->metrics_host) || next->metrics_port != now->metrics_port)
    changed = "metrics address";
  else if (next->tick_rate != now->tick_rate) changed = "tick-rate";
  else if (strcmp(next->data_dir, now->data_dir)) changed = "data-dir";
  else if (next->reuseport != now->reuseport) changed = "reuseport";
  else if (next->pool_nice != now->pool_nice) changed = "pool-nice";
  if (changed) srv_log(SRV_LOG_WARN, "reload: %s changed in the configuration: it takes a restart", changed);
}

/* Field by field, the settings a running server can change: jobs on the
 * pool may be reading the others (the data directory) meanwhile. */
static void apply_live(srv_config_t *c, const srv_config_t *n) {
  c->max_frame_bytes = n->max_frame_bytes, c->decode_budget_bytes = n->decode_budget_bytes;
  c->max_connections = n->max_connections, c->max_in_flight = n->max_in_flight;
  c->max_batch = n->max_batch, c->max_pose_frames = n->max_pose_frames;
  c->max_ids_per_request = n->max_ids_per_request, c->max_output_memory = n->max_output_memory;
  c->output_soft_limit = n->output_soft_limit, c->output_hard_limit = n->output_hard_limit;
  c->max_characters = n->max_characters, c->max_characters_per_connection = n->max_characters_per_connection;
  c->stream_soft_limit = n->stream_soft_limit, c->stream_soft_seconds = n->stream_soft_seconds;
  c->idle_timeout = n->idle_timeout, c->log_level = n->log_level;
  c->max_databases = n->max_databases, c->max_database_memory = n->max_database_memory;
  memcpy(c->auth_token, n->auth_token, sizeof c->auth_token);
  memcpy(c->admin_token, n->admin_token, sizeof c->admin_token);
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
