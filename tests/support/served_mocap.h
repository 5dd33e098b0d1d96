/*
 * served_mocap.h: a shared mocap set's database put on a test server, as a
 * client would have it: built from the set's clips with the features the
 * server serves, written into the server's data directory and loaded there.
 */
#ifndef ANIM_TEST_SERVED_MOCAP_H
#define ANIM_TEST_SERVED_MOCAP_H

#include "anim_client.h"
#include "server_proc.h"
#include "shared_data.h"

/* The mocap set of that folder ("games105", ...) built into out_db with
 * the default feature schema, written to dir as NAME.animdb and loaded by
 * client as NAME (the folder's name). Returns 1, or 0 after a skip
 * (anim_test_mocap_database's); fails the test on any error. */
int anim_test_serve_mocap(anim_client_t *client, const char *dir, const char *folder, anim_database_t *out_db,
                          int timeout_ms);

/* Bandai Namco's real-mocap database (anim_test_bandai_database) served
 * from a fresh data directory, as the replica tests share it: what the
 * group set-up made, for the tests and the group teardown. */
typedef struct {
  anim_test_server_t server;
  anim_client_t *client; /* connected, "mocap" loaded */
  char dir[128];         /* the server's --data-dir, holding mocap.animdb */
  char db_path[256];     /* dir/mocap.animdb: the file a replica loads (the server's database) */
  int served;            /* 1 once all the above is made */
} anim_test_served_bandai_t;

/* Writes the database to a new data directory named after name as
 * mocap.animdb, starts a server on it with --data-dir DIR --log-level warn
 * and extra (NULL-terminated, at most 8; or NULL), connects out->client and
 * loads "mocap". 0 (a group set-up's return) served, or when ../shared has
 * no Bandai Namco folder: then nothing is started, out->served stays 0 and
 * each test stops at anim_test_served_bandai_need; -1 on an error. */
int anim_test_served_bandai_start(anim_test_served_bandai_t *out, const char *name, const char *const *extra,
                                  int timeout_ms);
/* A test's first check: 1 when served; without the data, skips the running
 * test with the reason, or fails it under CI=true (anim_test_shared_path),
 * and returns 0. Use as: if (!anim_test_served_bandai_need(&b)) return; */
int anim_test_served_bandai_need(const anim_test_served_bandai_t *served);
/* Closes the client, stops the server, removes the data directory; nothing
 * when it was not served. 0, or the server's non-zero exit status. */
int anim_test_served_bandai_stop(anim_test_served_bandai_t *served);

#endif
