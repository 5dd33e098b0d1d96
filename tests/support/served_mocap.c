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

int anim_test_serve_bandai(anim_test_server_t *server, const char *name, const char *const *extra, char *out_dir,
                           size_t dirlen, anim_client_t **out_client, int timeout_ms) {
  char mocap[1024];
  struct stat st;
  snprintf(mocap, sizeof mocap, "%s/data/mocap/bandai-namco", anim_test_shared_dir());
  if (stat(mocap, &st) != 0) return 0;
  anim_database_t db;
  if (!anim_test_bandai_database(&db)) return -1;
  anim_test_data_dir_make(out_dir, dirlen, name);
  anim_test_data_dir_put_database(out_dir, &db, "mocap");
  anim_database_free(&db);
  const char *args[16] = {"--data-dir", out_dir, "--log-level", "warn"};
  int n = 4;
  for (int i = 0; extra && extra[i] && n < 12; i++) args[n++] = extra[i];
  args[n] = NULL;
  if (anim_test_server_start(server, name, args) != 0) return -1;
  int err;
  *out_client = anim_client_connect(server->host, server->port, NULL, &err);
  return *out_client && anim_client_db_load(*out_client, "mocap", NULL, timeout_ms) == 0 ? 1 : -1;
}
