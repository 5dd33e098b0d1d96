/*
 * inprocess_server.h: what tests that run the real server in their own
 * process (to look at the crowd between ticks) set up the same way: the
 * procedural database registered as "default", and its motion graph built
 * synchronously rather than waited for, and the loop run with a client
 * thread and a hook between ticks. The test owns the server, the loop
 * and the registry; failures fail the test (cmocka asserts, so include
 * cmocka.h first).
 *
 * Header-only: every test binary links all of tests/support, and the tools
 * that link it too have no server library; these call into it.
 */
#ifndef ANIM_TEST_INPROCESS_SERVER_H
#define ANIM_TEST_INPROCESS_SERVER_H

#include <pthread.h>
#include <string.h>
#include "offline/procgen.h"
#include "server/graphs.h"
#include "server/registry.h"
#include "server/server.h"

/* A server's config as these tests run it (an ephemeral loopback port,
 * warnings and worse logged) and the loop initialized. */
static inline void anim_test_inprocess_setup(srv_config_t *config, uv_loop_t *loop) {
  srv_config_default(config);
  config->port = 0;
  srv_log_set_level(SRV_LOG_WARN);
  assert_int_equal(uv_loop_init(loop), 0);
}

/* The procedural database as an entry put in registry (the caller's, zeroed
 * or holding others); returns it, owned by the registry. */
static inline srv_db_entry_t *anim_test_register_procgen(srv_registry_t *registry) {
  char err[256];
  anim_database_t db;
  assert_int_equal(anim_procgen_database(&db, NULL, err, sizeof err), 0);
  srv_db_entry_t *entry = srv_db_entry_create(&db, "", err, sizeof err);
  assert_non_null(entry);
  assert_int_equal(srv_registry_put(registry, entry), 0);
  return entry;
}

/* Builds entry's motion graph with the default options, on this thread. */
static inline void anim_test_build_graph(srv_db_entry_t *entry) {
  srv_graph_options_t options;
  memset(&options, 0, sizeof options);
  anim_graph_options_default(&options.core);
  srv_graph_build_t *job = srv_graph_build_begin(srv_graph_slot_of(entry), &entry->db, &options);
  assert_int_equal(srv_graph_build_run(job), 0);
  srv_graph_build_end(job);
}

/* Runs the loop until the server stops, with the crowd's ended hook replaced
 * by ended (the server's own left in *out_original, for ended to call) and
 * client_main on a thread of its own, joined before returning. The server
 * and the loop stay open for the caller to read and close. */
static inline void anim_test_run_with_client(srv_server_t *server, uv_loop_t *loop, srv_crowd_hooks_t *out_original,
                                             void (*ended)(srv_crowd_t *crowd, void *data),
                                             void *(*client_main)(void *arg)) {
  *out_original = server->crowd.hooks;
  server->crowd.hooks.ended = ended;
  pthread_t client;
  assert_int_equal(pthread_create(&client, NULL, client_main, NULL), 0);
  uv_run(loop, UV_RUN_DEFAULT);
  pthread_join(client, NULL);
}

#endif
