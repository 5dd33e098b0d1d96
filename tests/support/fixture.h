/*
 * fixture.h: the set-ups end-to-end tests share: a client connected to a
 * test server, and a server with one client and the default database's
 * description (the group set-up of most service tests).
 */
#ifndef ANIM_TEST_FIXTURE_H
#define ANIM_TEST_FIXTURE_H

#include "anim_client.h"
#include "server_proc.h"

/* A client connected to server (no options); fails the running test when
 * it cannot connect. */
anim_client_t *anim_test_connect(const anim_test_server_t *server);

typedef struct {
  anim_test_server_t server;
  anim_client_t *client;
  anim_db_description_t *defaults; /* the "default" database, when asked for */
  char data_dir[96];               /* the server's --data-dir, when it has one ("" else) */
} anim_test_fixture_t;

/* Starts a server (log_name, extra arguments as anim_test_server_start),
 * connects a client, and with describe reads the default database's
 * description. 0, or -1 (a cmocka group set-up returns it). */
int anim_test_fixture_start(anim_test_fixture_t *fixture, const char *log_name, const char *const *args, int describe);
/* As anim_test_fixture_start, with the shared LMM networks
 * (../shared/data/lmm) served as learned characters (--lmm) when they are
 * there, and without when not (the tests needing them skip or fail through
 * anim_test_shared_path). out_have_networks (may be NULL): 1 when they are. */
int anim_test_fixture_start_lmm(anim_test_fixture_t *fixture, const char *log_name, int describe,
                                int *out_have_networks);
/* As anim_test_fixture_start (no description), the server given a new
 * temporary data directory (data_dir.h, tagged tag) before args:
 * fixture->data_dir, where tests put databases (served_mocap.h); removed
 * by anim_test_fixture_stop. */
int anim_test_fixture_start_data_dir(anim_test_fixture_t *fixture, const char *log_name, const char *tag,
                                     const char *const *args);
/* Frees the description, closes the client, stops the server, removes its
 * data directory if it had one: 0 when it exited 0. */
int anim_test_fixture_stop(anim_test_fixture_t *fixture);

#endif
