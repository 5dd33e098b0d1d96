/*
 * test_operations.c: what operators rely on, through the real server.
 *  - idle timeout: a silent connection (a half-open client) is closed; one
 *    that keeps talking, or is subscribed to a stream, is not;
 *  - SIGHUP: the config file and the databases again; a changed limit takes
 *    effect, a restart-only setting is kept, a replaced database file is
 *    swapped in, a damaged one is refused while the last good version serves;
 *  - kill -9 in the middle of database writes: the file is always a whole
 *    old or new version, and a restarted server serves it.
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "anim_client.h"
#include "offline/dbfile_write.h"
#include "offline/procgen.h"
#include "fixture.h"
#include "server_proc.h"

#define TIMEOUT_MS 20000

static char dir[64] = "/tmp/animserver-ops-XXXXXX";

/* The procgen database, tagged `variant` times over, written as NAME.animdb:
 * each variant has another version. */
static uint64_t write_db(const char *name, int variant) {
  anim_database_t db;
  char path[256], err[256], tag[ANIM_NAME_MAX]; /* the longest tag a database holds ("variant" and any int fit) */
  assert_int_equal(anim_procgen_database(&db, NULL, err, sizeof err), 0);
  for (int i = 0; i < variant; i++) {
    snprintf(tag, sizeof tag, "variant%d", i);
    assert_true(anim_database_tag_range(&db, 0, tag) >= 0);
  }
  anim_database_update_version(&db);
  snprintf(path, sizeof path, "%s/%s.animdb", dir, name);
  assert_int_equal(anim_dbfile_write(&db, path, err, sizeof err), 0);
  uint64_t version = db.version;
  anim_database_free(&db);
  return version;
}

static int setup(void **state) { return mkdtemp(dir) ? 0 : -1; }

static int teardown(void **state) {
  char command[128];
  snprintf(command, sizeof command, "rm -rf %s", dir);
  return system(command) == 0 ? 0 : -1;
}

/* Waits until the peer closes fd (read returns 0 or an error); 1 if it did within ms. */
static int closed_within(int fd, int ms) {
  struct pollfd p = {fd, POLLIN, 0};
  char byte;
  for (int waited = 0; waited < ms; waited += 50) {
    if (poll(&p, 1, 50) > 0) return recv(fd, &byte, 1, MSG_DONTWAIT) <= 0;
  }
  return 0;
}

static void test_idle_timeout(void **state) {
  anim_test_server_t server;
  const char *args[] = {"--idle-timeout", "0.5", NULL};
  assert_int_equal(anim_test_server_start(&server, "operations_idle", args), 0);
  int err;
  /* A half-open client: connected, a partial frame sent, then silence. */
  int silent = anim_test_server_raw_connect(&server);
  assert_true(silent >= 0);
  assert_int_equal(send(silent, "\x05\x08", 2, 0), 2);
  anim_client_t *talker = anim_client_connect(server.host, server.port, NULL, &err);
  anim_client_t *watcher = anim_client_connect(server.host, server.port, NULL, &err);
  assert_non_null(talker);
  assert_non_null(watcher);
  uint64_t id;
  assert_int_equal(anim_client_characters_create(watcher, "default", NULL, NULL, 1, &id, TIMEOUT_MS), 0);
  anim_subscribe_options_t o = {&id, 1, 0, 6, ANIM_POSE_QUANTIZED, 0, 0};
  assert_int_equal(anim_client_subscribe(watcher, &o, NULL, NULL, NULL, NULL, TIMEOUT_MS), 0);
  /* 1.5 s: three timeouts. The talker pings every 100 ms; the watcher only reads frames. */
  int frames = 0;
  for (int i = 0; i < 15; i++) {
    assert_int_equal(anim_client_ping(talker, "p", 1, NULL, TIMEOUT_MS), 0);
    anim_stream_frame_t *f;
    while (anim_client_next_frame(watcher, &f, 1) == 0) anim_stream_frame_free(f), frames++;
    usleep(100000);
  }
  assert_true(closed_within(silent, 5000));
  assert_int_equal(anim_client_ping(talker, "p", 1, NULL, TIMEOUT_MS), 0);
  anim_stream_frame_t *f;
  assert_int_equal(anim_client_next_frame(watcher, &f, TIMEOUT_MS), 0);
  anim_stream_frame_free(f);
  printf("idle timeout: the silent client was closed; the talker and the subscriber (%d frames) were not\n", frames);
  assert_true(frames > 5);
  close(silent);
  anim_client_close(talker);
  anim_client_close(watcher);
  assert_int_equal(anim_test_server_stop(&server), 0);
}

static uint64_t listed_version(anim_client_t *client, const char *name) {
  anim_db_summary_t dbs[8];
  int count = 0;
  assert_int_equal(anim_client_db_list(client, dbs, 8, &count, TIMEOUT_MS), 0);
  for (int i = 0; i < count && i < 8; i++)
    if (!strcmp(dbs[i].name, name)) return dbs[i].version;
  return 0;
}

static void write_config(const char *path, int max_batch, int tick_rate) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fprintf(f, "data-dir %s\ndb walk\nmax-batch %d\ntick-rate %d\n", dir, max_batch, tick_rate);
  fclose(f);
}

/* Waits (bounded) for the listed version of NAME to become want. */
static int version_becomes(anim_client_t *client, const char *name, uint64_t want) {
  for (int i = 0; i < 200; i++) {
    if (listed_version(client, name) == want) return 1;
    usleep(25000);
  }
  return 0;
}

static void test_sighup_reloads_settings_and_databases(void **state) {
  uint64_t v1 = write_db("walk", 1);
  char config[256];
  snprintf(config, sizeof config, "%s/animserver.conf", dir);
  write_config(config, 100, 60);
  anim_test_server_t server;
  const char *args[] = {"--config", config, NULL};
  assert_int_equal(anim_test_server_start(&server, "operations_sighup", args), 0);
  int err;
  anim_client_t *client = anim_test_connect(&server);
  anim_hello_info_t info;
  assert_int_equal(anim_client_hello(client, "ops", &info, TIMEOUT_MS), 0);
  assert_int_equal(info.max_batch, 100);
  assert_true(listed_version(client, "walk") == v1);

  /* New settings and a new database file, then SIGHUP. */
  write_config(config, 7, 30);
  uint64_t v2 = write_db("walk", 2);
  assert_true(v2 != v1);
  assert_int_equal(kill(server.pid, SIGHUP), 0);
  assert_true(version_becomes(client, "walk", v2));
  anim_client_t *later = anim_client_connect(server.host, server.port, NULL, &err);
  assert_int_equal(anim_client_hello(later, "ops", &info, TIMEOUT_MS), 0);
  assert_int_equal(info.max_batch, 7);            /* a limit: applied */
  assert_float_equal(info.tick_rate, 60.0f, 1e-3f); /* restart-only: kept */
  anim_client_close(later);

  /* A damaged file is refused; the last good version keeps serving. The
   * damaged file replaces the good one as files should be replaced, by a
   * rename: the served version is mapped from the old file, which truncating
   * in place would pull from under it (SIGBUS). */
  char path[256], damaged[256], command[1100];
  snprintf(path, sizeof path, "%s/walk.animdb", dir);
  snprintf(damaged, sizeof damaged, "%s/walk.damaged", dir);
  snprintf(command, sizeof command, "head -c 4096 %s > %s && mv %s %s", path, damaged, damaged, path);
  assert_int_equal(system(command), 0);
  assert_int_equal(kill(server.pid, SIGHUP), 0);
  usleep(500000);
  assert_true(listed_version(client, "walk") == v2);
  anim_query_t q;
  anim_query_init(&q);
  q.from_frame = 10;
  anim_search_reply_t *reply = NULL;
  assert_int_equal(anim_client_search(client, "walk", &q, &reply, TIMEOUT_MS), 0);
  assert_true(reply->database_version == v2);
  anim_search_reply_free(reply);
  anim_client_close(client);
  assert_int_equal(anim_test_server_stop(&server), 0);
}

/* A writer killed at random moments of rewriting a database file: what is on
 * disk is always one whole version, and a server started on it serves it. */
static void test_kill_during_writes_keeps_a_whole_file(void **state) {
  uint64_t versions[2] = {write_db("crash", 1), 0};
  char path[256], err[256];
  snprintf(path, sizeof path, "%s/crash.animdb", dir);
  for (int round = 0; round < 8; round++) {
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) { /* the writer: alternate two versions until killed */
      for (int i = 0;; i++) write_db("crash", 1 + (i & 1));
    }
    usleep(20000 + (useconds_t)(round * 13000));
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    anim_database_t db;
    assert_int_equal(anim_dbfile_load(&db, path, err, sizeof err), 0);
    if (!versions[1] && db.version != versions[0]) versions[1] = db.version;
    assert_true(db.version == versions[0] || db.version == versions[1]);
    anim_database_free(&db);
  }
  /* A server restarted on it serves it. */
  anim_test_server_t server;
  char data_arg[128];
  snprintf(data_arg, sizeof data_arg, "%s", dir);
  const char *args[] = {"--data-dir", data_arg, "--db", "crash", NULL};
  assert_int_equal(anim_test_server_start(&server, "operations_crash", args), 0);
  int e;
  anim_client_t *client = anim_client_connect(server.host, server.port, NULL, &e);
  uint64_t v = listed_version(client, "crash");
  assert_true(v == versions[0] || v == versions[1]);
  anim_client_close(client);
  assert_int_equal(anim_test_server_stop(&server), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_idle_timeout),
      cmocka_unit_test(test_sighup_reloads_settings_and_databases),
      cmocka_unit_test(test_kill_during_writes_keeps_a_whole_file),
  };
  return cmocka_run_group_tests_name("operations", tests, setup, teardown);
}
