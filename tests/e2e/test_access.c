/*
 * test_access.c: who may do what, through the real server and client.
 * Protected mode first (a non-loopback address without an auth token: the
 * server refuses to start); then, with an auth token and an admin token:
 * nothing but hello before authenticating, a wrong token closes the
 * connection, the auth token serves but cannot load databases, the admin
 * token can; the settings come from a config file.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "anim_client.h"
#include "server_proc.h"

#define TIMEOUT_MS 10000

static const char *build_dir(void) {
  const char *dir = getenv("ANIM_BUILD_DIR");
  return dir && *dir ? dir : "build";
}

static void test_protected_mode_refuses_to_start(void **state) {
  char command[1024];
  snprintf(command, sizeof command, "%s/animserver --host 0.0.0.0 --port 0 >/dev/null 2>%s/tests/access_refused.log",
           build_dir(), build_dir());
  int status = system(command);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 2); /* a usage error, before binding anything */
  snprintf(command, sizeof command, "grep -q 'protected mode' %s/tests/access_refused.log", build_dir());
  assert_int_equal(system(command), 0);
}

static anim_client_t *connect_with(const anim_test_server_t *s, const char *token) {
  int err;
  anim_client_options_t o = {.auth_token = token};
  anim_client_t *c = anim_client_connect(s->host, s->port, &o, &err);
  assert_non_null(c);
  return c;
}

static void test_tokens(void **state) {
  /* Settings from a config file: the tokens, and every address (the test
   * still talks over loopback). */
  char path[256];
  snprintf(path, sizeof path, "%s/tests/access.conf", build_dir());
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fprintf(f, "# access test\nhost 0.0.0.0\nauth-token user-token-1\nadmin-token admin-token-2\n");
  fclose(f);
  anim_test_server_t server;
  const char *args[] = {"--config", path, NULL};
  assert_int_equal(anim_test_server_start(&server, "access", args), 0);
  snprintf(server.host, sizeof server.host, "127.0.0.1");

  /* Before hello: refused, and the connection stays usable. */
  anim_client_t *anonymous = connect_with(&server, NULL);
  assert_int_equal(anim_client_ping(anonymous, "p", 1, NULL, TIMEOUT_MS), ANIM_EPERM);
  anim_db_summary_t dbs[4];
  int count = 0;
  assert_int_equal(anim_client_db_list(anonymous, dbs, 4, &count, TIMEOUT_MS), ANIM_EPERM);
  anim_hello_info_t info;
  assert_int_equal(anim_client_hello(anonymous, "anonymous", &info, TIMEOUT_MS), ANIM_EPERM); /* empty token */
  anim_client_close(anonymous);

  /* A wrong token: refused, then closed (one guess per connection). */
  anim_client_t *guess = connect_with(&server, "user-token-0");
  assert_int_equal(anim_client_hello(guess, "guess", &info, TIMEOUT_MS), ANIM_EPERM);
  int rc = anim_client_ping(guess, "p", 1, NULL, TIMEOUT_MS);
  assert_true(rc == ANIM_ECLOSED || rc == ANIM_EPERM);
  anim_client_close(guess);

  /* The auth token: served, but not administration. */
  anim_client_t *user = connect_with(&server, "user-token-1");
  assert_int_equal(anim_client_hello(user, "user", &info, TIMEOUT_MS), 0);
  assert_int_equal(info.admin, 0);
  assert_int_equal(anim_client_ping(user, "p", 1, NULL, TIMEOUT_MS), 0);
  assert_int_equal(anim_client_db_list(user, dbs, 4, &count, TIMEOUT_MS), 0);
  assert_int_equal(anim_client_db_unload(user, "default", TIMEOUT_MS), ANIM_EPERM);
  assert_int_equal(anim_client_db_load(user, "default", NULL, TIMEOUT_MS), ANIM_EPERM);
  uint64_t id;
  assert_int_equal(anim_client_characters_create(user, "default", NULL, NULL, 1, &id, TIMEOUT_MS), 0);

  /* The admin token: administration too. */
  anim_client_t *admin = connect_with(&server, "admin-token-2");
  assert_int_equal(anim_client_hello(admin, "admin", &info, TIMEOUT_MS), 0);
  assert_int_equal(info.admin, 1);
  /* past the permission check */
  assert_int_equal(anim_client_db_load(admin, "nosuch", NULL, TIMEOUT_MS), ANIM_ENOTFOUND);
  anim_server_stats_t st;
  assert_int_equal(anim_client_server_stats(admin, &st, TIMEOUT_MS), 0);
  assert_int_equal(st.characters, 1);

  /* Shutdown is administrative: refused with the auth token, done with the admin token. */
  assert_int_equal(anim_client_shutdown(user, TIMEOUT_MS), ANIM_EPERM);
  assert_int_equal(anim_client_ping(user, "p", 1, NULL, TIMEOUT_MS), 0);
  assert_int_equal(anim_client_shutdown(admin, TIMEOUT_MS), 0);
  anim_client_close(user);
  anim_client_close(admin);
  /* It exits 0 by itself; no signal is sent (one would race with its last steps). */
  assert_int_equal(anim_test_server_wait(&server, 20000), 0);
  unlink(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_protected_mode_refuses_to_start),
      cmocka_unit_test(test_tokens),
  };
  return cmocka_run_group_tests_name("access", tests, NULL, NULL);
}
