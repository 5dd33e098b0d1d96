/* served_mocap.c: see served_mocap.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "anim_error.h"
#include "data_dir.h"
#include "offline/feature_build.h"
#include "served_mocap.h"

int anim_test_serve_mocap(anim_client_t *client, const char *dir, const char *folder, anim_database_t *out_db,
                          int timeout_ms) {
  int set = -1;
  for (int i = 0; i < ANIM_TEST_MOCAP_SETS; i++)
    if (!strcmp(anim_test_mocap_sets[i].folder, folder)) set = i;
  assert_true(set >= 0);
  if (!anim_test_mocap_database(set, NULL, out_db)) return 0;
  /* The server serves databases with their matching features. */
  anim_feature_schema_t schema;
  char err[256];
  assert_int_equal(anim_feature_schema_default(&schema, out_db), 0);
  if (anim_features_build(out_db, &schema, err, sizeof err)) fail_msg("features: %s", err);
  anim_test_data_dir_put_database(dir, out_db, folder);
  anim_db_summary_t summary;
  int rc = anim_client_db_load(client, folder, &summary, timeout_ms);
  if (rc) fail_msg("load %s: %s: %s", folder, anim_strerror(rc), anim_client_last_error(client));
  return 1;
}

int anim_test_served_bandai_start(anim_test_served_bandai_t *out, const char *name, const char *const *extra,
                                  int timeout_ms) {
  memset(out, 0, sizeof *out);
  char mocap[1024];
  struct stat st;
  snprintf(mocap, sizeof mocap, "%s/data/mocap/bandai-namco", anim_test_shared_dir());
  if (stat(mocap, &st) != 0) return 0; /* each test skips (or fails under CI) through _need */
  anim_database_t db;
  if (!anim_test_bandai_database(&db)) return -1;
  anim_test_data_dir_make(out->dir, sizeof out->dir, name);
  anim_test_data_dir_put_database(out->dir, &db, "mocap");
  anim_database_free(&db);
  snprintf(out->db_path, sizeof out->db_path, "%s/mocap.animdb", out->dir);
  const char *args[16] = {"--data-dir", out->dir, "--log-level", "warn"};
  int n = 4;
  for (int i = 0; extra && extra[i] && n < 12; i++) args[n++] = extra[i];
  args[n] = NULL;
  if (anim_test_server_start(&out->server, name, args) != 0) return -1;
  int err;
  out->client = anim_client_connect(out->server.host, out->server.port, NULL, &err);
  if (!out->client || anim_client_db_load(out->client, "mocap", NULL, timeout_ms) != 0) return -1;
  out->served = 1;
  return 0;
}

int anim_test_served_bandai_need(const anim_test_served_bandai_t *served) {
  char path[1024];
  return served->served || anim_test_shared_path(path, sizeof path, "data/mocap/bandai-namco");
}

int anim_test_served_bandai_stop(anim_test_served_bandai_t *served) {
  if (!served->served) return 0;
  anim_client_close(served->client);
  int rc = anim_test_server_stop(&served->server);
  anim_test_data_dir_remove(served->dir);
  served->served = 0;
  return rc;
}
