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

/* Bandai Namco's real-mocap database (anim_test_bandai_database) put in a
 * fresh data directory (out_dir, named after name) as mocap.animdb, a
 * server started on it with --data-dir DIR --log-level warn and extra
 * (NULL-terminated, at most 8; or NULL), and *out_client connected with
 * "mocap" loaded. Returns 1 served; 0 when ../shared has no Bandai Namco
 * folder (nothing started: the caller's tests skip, or fail under CI, by
 * their own check); -1 on an error. */
int anim_test_serve_bandai(anim_test_server_t *server, const char *name, const char *const *extra, char *out_dir,
                           size_t dirlen, anim_client_t **out_client, int timeout_ms);

#endif
