/*
 * main.c: the animserver program: parse flags, start the server on the
 * default loop, serve until SIGINT/SIGTERM, exit 0 after a clean drain.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>
#include <uv.h>
#include "anim_error.h"
#include "config.h"
#include "learned/lmm.h"
#include "offline/lmm_database.h"
#include "log.h"
#include "pool_tasks.h"
#include "offline/procgen.h"
#include "registry.h"
#include "server.h"
#include "service.h"

/* --lmm: the three networks, shared read-only by every learned character for
 * the life of the process, and the database "lmm" of their skeleton, which
 * learned characters are created on (entry->lmm says so). */
static anim_lmm_networks_t *lmm_networks;

static int load_learned(srv_registry_t *registry, const srv_config_t *config, char *err, int errlen) {
  int rc;
  char message[400];
  if (!(lmm_networks = anim_lmm_networks_load(config->lmm_dir, NULL, &rc, message, sizeof message))) {
    snprintf(err, (size_t)errlen, "--lmm %.100s: %.300s", config->lmm_dir, message);
    return rc;
  }
  anim_database_t db;
  srv_db_entry_t *entry;
  if ((rc = anim_lmm_database(&db, "lmm", lmm_networks, message, sizeof message))) {
    snprintf(err, (size_t)errlen, "--lmm: the learned skeleton's database: %.300s", message);
    return rc;
  }
  /* The play rate's bounds from the networks' own walk (the reference
   * networks come without their database). */
  lmm_networks->slowest_gait = anim_warp_gaits(&db, &lmm_networks->fastest);
  if (!(entry = srv_db_entry_create(&db, "", err, errlen))) return ANIM_EFORMAT;
  entry->lmm = lmm_networks;
  if ((rc = srv_registry_put(registry, entry))) {
    srv_db_entry_release(entry);
    snprintf(err, (size_t)errlen, "--lmm: too many databases");
    return rc;
  }
  srv_log(SRV_LOG_INFO, "learned networks from %s: %d bones, state %d, %.1f MiB shared; database lmm: %d frames",
          config->lmm_dir, ANIM_LMM_BONES, lmm_networks->nstate,
          (double)anim_lmm_networks_memory(lmm_networks) / (1024.0 * 1024.0), entry->db.nframes);
  return 0;
}

/* The embedded default database and the --db files, before the port is
 * bound: a server that cannot serve what it was asked to exits instead, and
 * one that accepts connections (a load balancer's TCP check) can answer. */
static int load_startup_databases(srv_registry_t *registry, const srv_config_t *config, char *err, int errlen) {
  srv_db_entry_t *entry;
  int rc;
  if (config->default_database) {
    anim_database_t db;
    if ((rc = anim_procgen_database(&db, NULL, err, errlen))) return rc;
    if (!(entry = srv_db_entry_create(&db, "", err, errlen))) return ANIM_EFORMAT;
    if (config->lmm_default_dir[0]) {
      char message[400];
      anim_lmm_networks_t *nets = anim_lmm_networks_load_for(config->lmm_default_dir, &entry->db, &rc, message,
                                                             sizeof message);
      if (!nets) {
        snprintf(err, (size_t)errlen, "--lmm-default %.100s: %.300s", config->lmm_default_dir, message);
        srv_db_entry_release(entry);
        return rc;
      }
      srv_db_entry_set_networks(entry, nets);
    }
    srv_registry_put(registry, entry);
    srv_log(SRV_LOG_INFO, "database default: %d frames, %d bones, %d ranges (procedural)%s", entry->db.nframes,
             entry->db.nbones, entry->db.nranges, entry->lmm ? ", learned networks" : "");
  }
  if (config->lmm_dir[0] && (rc = load_learned(registry, config, err, errlen))) return rc;
  for (int i = 0; i < config->npreload; i++) {
    char message[400];
    if ((rc = srv_database_open(config, config->preload[i], &entry, message, sizeof message))) {
      snprintf(err, errlen, "--db %.63s: %s", config->preload[i], message);
      return rc;
    }
    if ((rc = srv_registry_put(registry, entry))) {
      srv_db_entry_release(entry);
      snprintf(err, errlen, "--db %s: too many databases", config->preload[i]);
      return rc;
    }
    srv_log(SRV_LOG_INFO, "database %s: %d frames from %s", entry->db.name, entry->db.nframes, entry->source);
  }
  return 0;
}

static void nothing(uv_work_t *work) {}
static void nothing_after(uv_work_t *work, int status) {}

/* SIGINT, SIGTERM and SIGHUP blocked or unblocked in the calling thread. */
static void mask_signals(int how) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(how, &set, NULL);
}

/* Pool threads run config.pool_nice nicer than the loop thread: with more
 * busy pool threads than cores (a crowd's tick), the loop thread, which
 * answers requests and writes streams, then gets a core as soon as it wakes
 * instead of waiting for a time slice behind the tick's jobs. They are
 * started from a short-lived thread and inherit its signal mask and nice
 * value (both per thread on Linux); raising a nice value needs no
 * privilege where lowering it back would. */
typedef struct {
  uv_loop_t *loop;
  int nice;
} pool_start_t;

static void *start_pool(void *arg) {
  pool_start_t *start = arg;
  if (start->nice && setpriority(PRIO_PROCESS, (id_t)gettid(), start->nice) != 0)
    srv_log(SRV_LOG_WARN, "pool threads at the loop's priority: setpriority failed");
  static uv_work_t work;
  uv_queue_work(start->loop, &work, nothing, nothing_after); /* starts the pool; the loop thread is waiting for us */
  return NULL;
}

/* The thread pool's threads inherit the mask of the thread that starts
 * them: started with the signals blocked, they never take one, so the loop
 * thread handles every signal, and blocking them there at the end means a
 * signal during the last steps of a shutdown waits, unhandled, instead of
 * killing a server that is about to exit 0. The loop is not running while
 * the starter thread touches it (joined before uv_run). */
static void start_pool_without_signals(uv_loop_t *loop, int nice) {
  pthread_t starter;
  pool_start_t start = {loop, nice};
  mask_signals(SIG_BLOCK);
  if (pthread_create(&starter, NULL, start_pool, &start) == 0) pthread_join(starter, NULL);
  uv_run(loop, UV_RUN_DEFAULT);
  mask_signals(SIG_UNBLOCK);
}

int main(int argc, char **argv) {
  srv_config_t config;
  char err[512];
  srv_config_default(&config);
  int rc = srv_config_parse_args(&config, argc, argv, err, sizeof err);
  if (rc == 1) return 0;
  if (rc != 0) {
    fprintf(stderr, "animserver: %s\n", err);
    return 2;
  }
  srv_log_set_level(config.log_level);
  /* A peer that vanishes mid-write must cost one connection, not the process. */
  signal(SIGPIPE, SIG_IGN);

  static srv_server_t server; /* large: not on the stack */
  static srv_registry_t startup;
  uv_loop_t *loop = uv_default_loop();
  start_pool_without_signals(loop, config.pool_nice);
  /* Search indexes build on the pool's threads, one per core (startup's too). */
  static srv_pool_tasks_t pool_tasks;
  unsigned cores = uv_available_parallelism();
  int pool_tasks_ok = srv_pool_tasks_init(&pool_tasks, loop, cores < 4 ? (int)cores : 4) == 0;
  if (pool_tasks_ok) srv_db_entry_set_build_runner(srv_pool_tasks_runner(&pool_tasks));
  if (load_startup_databases(&startup, &config, err, sizeof err) != 0 ||
      srv_server_start(&server, loop, &config, &startup, err, sizeof err) != 0) {
    fprintf(stderr, "animserver: %s\n", err);
    srv_registry_clear(&startup);
    return 1;
  }
  server.argc = argc, server.argv = argv; /* parsed again on SIGHUP */
  printf("listening on %s:%d\n", server.bound_host, server.bound_port);
  if (server.metrics.listening) printf("metrics on %s:%d\n", server.metrics.bound_host, server.metrics.bound_port);
  fflush(stdout);
  srv_log(SRV_LOG_INFO, "animserver %s listening on %s:%d (protocol %d)", ANIM_VERSION, server.bound_host,
           server.bound_port, ANIM_PROTOCOL_VERSION);

  uv_run(loop, UV_RUN_DEFAULT);
  mask_signals(SIG_BLOCK); /* from here the server exits 0 whatever arrives */
  srv_server_close(&server);
  srv_db_entry_set_build_runner(NULL);
  if (pool_tasks_ok) {
    srv_pool_tasks_close(&pool_tasks);
    uv_run(loop, UV_RUN_DEFAULT); /* its close callback */
  }
  rc = uv_loop_close(loop);
  anim_lmm_networks_free(lmm_networks); /* after every character and database is gone */
  srv_log(SRV_LOG_INFO, "stopped: %llu connections, %llu requests, %llu errors",
          (unsigned long long)server.counters.connections_accepted, (unsigned long long)server.counters.requests,
          (unsigned long long)server.counters.errors);
  return rc == 0 ? 0 : 1;
}
