/* fixture.c: shared set-ups of the end-to-end tests (see fixture.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "data_dir.h"
#include "fixture.h"
#include "shared_data.h"

#define DESCRIBE_TIMEOUT_MS 20000

anim_client_t *anim_test_connect(const anim_test_server_t *server) {
  int err;
  anim_client_t *client = anim_client_connect(server->host, server->port, NULL, &err);
  if (!client)
    fail_msg("cannot connect to the test server on %s:%d: %s", server->host, server->port, anim_strerror(err));
  return client;
}

int anim_test_fixture_start(anim_test_fixture_t *f, const char *log_name, const char *const *args, int describe) {
  f->client = NULL;
  f->defaults = NULL;
  f->data_dir[0] = '\0';
  if (anim_test_server_start(&f->server, log_name, args) != 0) return -1;
  int err;
  if (!(f->client = anim_client_connect(f->server.host, f->server.port, NULL, &err))) return -1;
  if (describe && anim_client_db_describe(f->client, "default", &f->defaults, DESCRIBE_TIMEOUT_MS) != 0) return -1;
  return 0;
}

int anim_test_fixture_start_lmm(anim_test_fixture_t *f, const char *log_name, int describe, int *out_have_networks) {
  static char dir[1024]; /* the server's arguments point into it */
  char probe[1100];
  snprintf(dir, sizeof dir, "%s/data/lmm", anim_test_shared_dir());
  snprintf(probe, sizeof probe, "%s/projector.bin", dir);
  FILE *file = fopen(probe, "rb");
  if (file) fclose(file);
  if (out_have_networks) *out_have_networks = file != NULL;
  /* --fixed-step: the learned tests measure speeds over the server's ticks;
   * a loaded server that folded missed deadlines into longer ticks showed
   * 1.5 m/s as 0.39 (ticks x the last dt overcounted the time). */
  const char *args[] = {"--lmm", dir, "--fixed-step", NULL}, *quiet_args[] = {"--fixed-step", NULL};
  return anim_test_fixture_start(f, log_name, file ? args : quiet_args, describe);
}

int anim_test_fixture_start_data_dir(anim_test_fixture_t *f, const char *log_name, const char *tag,
                                     const char *const *args) {
  char dir[sizeof f->data_dir];
  anim_test_data_dir_make(dir, sizeof dir, tag);
  const char *all[64] = {"--data-dir", dir};
  int n = 2;
  for (int i = 0; args && args[i]; i++) {
    if (n + 1 >= 64) fail_msg("%s: too many server arguments", log_name);
    all[n++] = args[i];
  }
  all[n] = NULL;
  int rc = anim_test_fixture_start(f, log_name, all, 0);
  memcpy(f->data_dir, dir, sizeof dir); /* after the start, which clears it */
  return rc;
}

int anim_test_fixture_stop(anim_test_fixture_t *f) {
  anim_db_description_free(f->defaults);
  anim_client_close(f->client);
  f->defaults = NULL;
  f->client = NULL;
  int rc = anim_test_server_stop(&f->server) == 0 ? 0 : -1;
  if (f->data_dir[0] && anim_test_data_dir_remove(f->data_dir) != 0) rc = -1;
  f->data_dir[0] = '\0';
  return rc;
}
