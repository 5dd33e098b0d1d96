/*
 * test_dbfile_server.c: a database file truncated in place under the real
 * server (issue 11): it must not raise SIGBUS, and the server keeps serving.
 *
 * Two servers, each with a data directory of the test's own: one as
 * shipped, which reads files into memory (dbfile.h: up to 1 GiB), and one
 * told by ANIM_DBFILE_COPY_MAX=0 to map every file, which checks the file
 * before each request on it. After the loaded file is truncated in place:
 * the first keeps answering searches, poses and describes from its copy;
 * the second answers them with ANIM_EIO naming the truncation. Both keep
 * serving their other database and pings; a reload of the damaged file is
 * refused and the loaded database stays; a good file (written atomically)
 * reloads; and each server exits 0 on SIGTERM, not by a signal.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "anim_client.h"
#include "offline/dbfile_write.h"
#include "offline/procgen.h"
#include "server_proc.h"

#define TIMEOUT_MS 20000

static char dir[64] = "/tmp/animserver-trunc-XXXXXX";
static char victim[160];
static uint64_t victim_version;

static int setup(void **state) {
  if (!mkdtemp(dir)) return -1;
  snprintf(victim, sizeof victim, "%s/victim.animdb", dir);
  return 0;
}

static int teardown(void **state) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  return system(cmd) == 0 ? 0 : -1;
}

/* The procgen database at 30 Hz as victim.animdb (atomically, as animdb does). */
static void write_victim(void) {
  anim_database_t db;
  anim_build_options_t o;
  char err[256];
  anim_build_options_default(&o);
  o.frame_rate = 30.0f;
  assert_int_equal(anim_procgen_database(&db, &o, err, sizeof err), 0);
  assert_int_equal(anim_dbfile_write(&db, victim, err, sizeof err), 0);
  victim_version = db.version;
  anim_database_free(&db);
}

/* A search of database name from frame 10: 0, or the error code. */
static int search(anim_client_t *client, const char *name) {
  anim_query_t q;
  anim_query_init(&q);
  q.from_frame = 10;
  q.k = 3;
  anim_search_reply_t *reply = NULL;
  int rc = anim_client_search(client, name, &q, &reply, TIMEOUT_MS);
  if (rc == 0) {
    assert_int_equal(reply->nresults, 1);
    assert_true(reply->results[0].matches[0].cost == 0.0f);
  }
  anim_search_reply_free(reply);
  return rc;
}

static int pose(anim_client_t *client, const char *name) {
  anim_pose_reply_t *reply = NULL;
  int rc = anim_client_pose(client, name, 5, 3, NULL, &reply, TIMEOUT_MS);
  anim_pose_reply_free(reply);
  return rc;
}

static int describe(anim_client_t *client, const char *name) {
  anim_db_description_t *d = NULL;
  int rc = anim_client_db_describe(client, name, &d, TIMEOUT_MS);
  anim_db_description_free(d);
  return rc;
}

/* Truncates the loaded file in place and checks what the server does; mapped: it was told to map. */
static void truncate_under_server(int mapped) {
  write_victim();
  anim_test_server_t server;
  const char *args[] = {"--data-dir", dir, NULL};
  if (mapped) setenv("ANIM_DBFILE_COPY_MAX", "0", 1);
  int started = anim_test_server_start(&server, mapped ? "dbfile_server_mapped" : "dbfile_server_copied", args);
  unsetenv("ANIM_DBFILE_COPY_MAX");
  assert_int_equal(started, 0);
  int err;
  anim_client_t *client = anim_client_connect(server.host, server.port, NULL, &err);
  assert_non_null(client);
  anim_db_summary_t summary;
  assert_int_equal(anim_client_db_load(client, "victim", &summary, TIMEOUT_MS), 0);
  assert_true(summary.version == victim_version);
  assert_int_equal(search(client, "victim"), 0);

  assert_int_equal(truncate(victim, 200), 0);
  int expect = mapped ? ANIM_EIO : 0;
  for (int round = 0; round < 3; round++) {
    assert_int_equal(search(client, "victim"), expect);
    if (mapped) assert_non_null(strstr(anim_client_last_error(client), "truncated"));
    assert_int_equal(pose(client, "victim"), expect);
    assert_int_equal(describe(client, "victim"), expect);
    /* The rest of the server does not notice. */
    assert_int_equal(search(client, "default"), 0);
    assert_int_equal(anim_client_ping(client, "x", 1, NULL, TIMEOUT_MS), 0);
  }
  /* The damaged file does not replace the loaded database. */
  assert_int_not_equal(anim_client_db_reload(client, "victim", NULL, TIMEOUT_MS), 0);
  assert_int_equal(search(client, "victim"), expect);
  /* A good file (a new inode, renamed over the old) reloads; then all is well. */
  write_victim();
  assert_int_equal(anim_client_db_reload(client, "victim", &summary, TIMEOUT_MS), 0);
  assert_true(summary.version == victim_version);
  assert_int_equal(search(client, "victim"), 0);
  assert_int_equal(pose(client, "victim"), 0);
  anim_client_close(client);
  /* Alive all along, and a clean exit: not killed by SIGBUS. */
  assert_int_equal(anim_test_server_stop(&server), 0);
}

static void test_truncated_under_copying_server(void **state) { truncate_under_server(0); }
static void test_truncated_under_mapping_server(void **state) { truncate_under_server(1); }

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_truncated_under_copying_server),
      cmocka_unit_test(test_truncated_under_mapping_server),
  };
  return cmocka_run_group_tests_name("dbfile_server", tests, setup, teardown);
}
