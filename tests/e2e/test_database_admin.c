/*
 * test_database_admin.c: load, reload and unload over the wire, with real
 * files in a data directory of the test's own. Damaged and escaping files
 * first; then the life cycle, including a reload while a long request runs on
 * the old database (it must finish there, and name the old version).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "anim_client.h"
#include "offline/dbfile_write.h"
#include "offline/procgen.h"
#include "fixture.h"
#include "server_proc.h"

#define TIMEOUT_MS 20000

static char dir[64] = "/tmp/animserver-data-XXXXXX";
static anim_test_server_t server;
static anim_client_t *client;
static uint64_t version_60, version_30;

static void write_db(const char *name, float rate, uint64_t *out_version) {
  anim_database_t db;
  anim_build_options_t o;
  char path[256], err[256];
  anim_build_options_default(&o);
  o.frame_rate = rate;
  assert_int_equal(anim_procgen_database(&db, &o, err, sizeof err), 0);
  snprintf(path, sizeof path, "%s/%s.animdb", dir, name);
  assert_int_equal(anim_dbfile_write(&db, path, err, sizeof err), 0);
  if (out_version) *out_version = db.version;
  anim_database_free(&db);
}

static int setup(void **state) {
  if (!mkdtemp(dir)) return -1;
  write_db("mini", 60.0f, &version_60);
  /* A corrupted copy, and a symlink that leaves the data directory. */
  char from[256], to[256], cmd[1024];
  snprintf(from, sizeof from, "%s/mini.animdb", dir);
  snprintf(to, sizeof to, "%s/broken.animdb", dir);
  snprintf(cmd, sizeof cmd, "cp %s %s && printf 'XXXX' | dd of=%s bs=1 seek=5000 conv=notrunc 2>/dev/null", from, to,
           to);
  if (system(cmd) != 0) return -1;
  snprintf(to, sizeof to, "%s/escape.animdb", dir);
  if (symlink("/etc/hostname", to) != 0) return -1;
  const char *args[] = {"--data-dir", dir, "--no-default-db", NULL};
  if (anim_test_server_start(&server, "database_admin", args) != 0) return -1;
  int err;
  client = anim_client_connect(server.host, server.port, NULL, &err);
  return client ? 0 : -1;
}

static int teardown(void **state) {
  anim_client_close(client);
  int rc = anim_test_server_stop(&server);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) return -1;
  return rc == 0 ? 0 : -1;
}

static void test_refused_files(void **state) {
  assert_int_equal(anim_client_db_load(client, "broken", NULL, TIMEOUT_MS), ANIM_ECHECKSUM);
  assert_non_null(strstr(anim_client_last_error(client), "checksum"));
  assert_int_equal(anim_client_db_load(client, "escape", NULL, TIMEOUT_MS), ANIM_EBADNAME);
  assert_int_equal(anim_client_db_load(client, "..", NULL, TIMEOUT_MS), ANIM_EBADNAME);
  int count = -1;
  anim_db_summary_t list[4];
  assert_int_equal(anim_client_db_list(client, list, 4, &count, TIMEOUT_MS), 0);
  assert_int_equal(count, 0);
}

typedef struct {
  int done, status;
  uint64_t version;
} batch_t;

static void on_batch(anim_client_t *c, uint64_t id, int status, const anim_search_reply_t *reply, void *data) {
  batch_t *b = data;
  b->done = 1, b->status = status;
  if (reply) b->version = reply->database_version;
}

static void test_load_reload_unload(void **state) {
  anim_db_summary_t summary;
  assert_int_equal(anim_client_db_load(client, "mini", &summary, TIMEOUT_MS), 0);
  assert_string_equal(summary.name, "mini");
  assert_true(summary.version == version_60);
  assert_int_equal(anim_client_db_load(client, "mini", NULL, TIMEOUT_MS), ANIM_EEXIST);

  /* A long brute-force batch on the old data, then a reload from a new file. */
  enum { N = 4096 };
  anim_query_t *q = calloc(N, sizeof *q);
  for (int i = 0; i < N; i++) {
    anim_query_init(&q[i]);
    q[i].from_frame = (i * 37) % (int)summary.frames;
    q[i].k = 8;
    q[i].method = ANIM_METHOD_BRUTE;
  }
  batch_t b = {0, 0, 0};
  assert_int_equal(anim_client_search_send(client, "mini", q, N, on_batch, &b, NULL), 0);
  free(q);
  write_db("mini", 30.0f, &version_30);
  assert_true(version_30 != version_60);
  anim_client_t *admin = NULL;
  int err;
  admin = anim_client_connect(server.host, server.port, NULL, &err);
  assert_int_equal(anim_client_db_reload(admin, "mini", &summary, TIMEOUT_MS), 0);
  assert_true(summary.version == version_30);
  while (!b.done) assert_int_equal(anim_client_poll(client, TIMEOUT_MS), 0);
  assert_int_equal(b.status, 0);
  /* The batch started on the old database and says so. */
  assert_true(b.version == version_60);

  anim_search_reply_t *reply;
  anim_query_t one;
  anim_query_init(&one);
  one.from_frame = 10;
  assert_int_equal(anim_client_search(admin, "mini", &one, &reply, TIMEOUT_MS), 0);
  assert_true(reply->database_version == version_30);
  anim_search_reply_free(reply);

  assert_int_equal(anim_client_db_unload(admin, "mini", TIMEOUT_MS), 0);
  assert_int_equal(anim_client_search(admin, "mini", &one, &reply, TIMEOUT_MS), ANIM_ENOTFOUND);
  assert_int_equal(anim_client_db_unload(admin, "mini", TIMEOUT_MS), ANIM_ENOTFOUND);
  anim_client_close(admin);
}

/* The database limits: how many at once, and how much memory in all; each
 * refusal says ERROR_LIMIT and leaves what was loaded serving. */
static void test_database_limits(void **state) {
  write_db("other", 30.0f, &version_30);
  anim_test_server_t limited;
  const char *args[] = {"--data-dir", dir, "--no-default-db", "--max-databases", "1", NULL};
  assert_int_equal(anim_test_server_start(&limited, "database_admin_limits", args), 0);
  int err;
  anim_client_t *c = anim_test_connect(&limited);
  anim_db_summary_t summary;
  assert_int_equal(anim_client_db_load(c, "mini", &summary, TIMEOUT_MS), 0);
  assert_int_equal(anim_client_db_load(c, "other", NULL, TIMEOUT_MS), ANIM_ELIMIT);
  assert_non_null(strstr(anim_client_last_error(c), "--max-databases"));
  assert_int_equal(anim_client_db_reload(c, "mini", NULL, TIMEOUT_MS), 0); /* replacing is not adding */
  anim_client_close(c);
  assert_int_equal(anim_test_server_stop(&limited), 0);

  /* Room for the first database's memory, not for a second. */
  char bytes[32];
  snprintf(bytes, sizeof bytes, "%llu", (unsigned long long)(summary.memory_bytes + 4096));
  const char *memory_args[] = {"--data-dir", dir, "--no-default-db", "--max-database-memory", bytes, NULL};
  assert_int_equal(anim_test_server_start(&limited, "database_admin_memory", memory_args), 0);
  c = anim_client_connect(limited.host, limited.port, NULL, &err);
  assert_int_equal(anim_client_db_load(c, "mini", NULL, TIMEOUT_MS), 0);
  assert_int_equal(anim_client_db_load(c, "other", NULL, TIMEOUT_MS), ANIM_ELIMIT);
  assert_non_null(strstr(anim_client_last_error(c), "--max-database-memory"));
  anim_db_summary_t dbs[4];
  int count = 0;
  assert_int_equal(anim_client_db_list(c, dbs, 4, &count, TIMEOUT_MS), 0);
  assert_int_equal(count, 1);
  anim_client_close(c);
  assert_int_equal(anim_test_server_stop(&limited), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_refused_files),
      cmocka_unit_test(test_load_reload_unload),
      cmocka_unit_test(test_database_limits),
  };
  return cmocka_run_group_tests_name("database_admin", tests, setup, teardown);
}
