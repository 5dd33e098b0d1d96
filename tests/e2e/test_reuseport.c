/*
 * test_reuseport.c: several instances on one port (--reuseport), through the
 * real server and client.
 *
 * Without --reuseport a second server on a port already served refuses to
 * start, with an error that names the address and the flag. With it, two
 * servers bind the same fixed loopback port, both start, and the kernel
 * spreads new connections over both: each server numbers its connections
 * from 1 (hello's connection_id), so among connections to the shared port
 * the id 1 shows up once per server that received any.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "anim_client.h"
#include "fixture.h"
#include "server_proc.h"

#define TIMEOUT_MS 10000
#define NCONNECTIONS 32

static const char *build_dir(void) {
  const char *dir = getenv("ANIM_BUILD_DIR");
  return dir && *dir ? dir : "build";
}

/* A loopback port free at the time of the call: the kernel's choice for an
 * ephemeral bind, released at once. */
static int free_port(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  assert_true(fd >= 0);
  struct sockaddr_in addr = {0};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  assert_int_equal(bind(fd, (struct sockaddr *)&addr, sizeof addr), 0);
  socklen_t len = sizeof addr;
  assert_int_equal(getsockname(fd, (struct sockaddr *)&addr, &len), 0);
  close(fd);
  return ntohs(addr.sin_port);
}

static void test_second_server_without_reuseport_refuses(void **state) {
  anim_test_server_t first;
  assert_int_equal(anim_test_server_start(&first, "reuseport_first", NULL), 0);
  char command[1024], log[512];
  snprintf(log, sizeof log, "%s/tests/reuseport_refused.log", build_dir());
  snprintf(command, sizeof command, "%s/animserver --host 127.0.0.1 --port %d >/dev/null 2>%s", build_dir(),
           first.port, log);
  int status = system(command);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 1);
  snprintf(command, sizeof command, "grep -q 'cannot listen on 127.0.0.1:%d: address already in use.*--reuseport' %s",
           first.port, log);
  assert_int_equal(system(command), 0);

  /* --reuseport on the newcomer alone is not enough: the first did not opt in. */
  snprintf(command, sizeof command, "%s/animserver --host 127.0.0.1 --port %d --reuseport >/dev/null 2>%s",
           build_dir(), first.port, log);
  status = system(command);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 1);

  /* The first server is unaffected. */
  anim_client_t *c = anim_test_connect(&first);
  assert_int_equal(anim_client_ping(c, "p", 1, NULL, TIMEOUT_MS), 0);
  anim_client_close(c);
  assert_int_equal(anim_test_server_stop(&first), 0);
}

static void test_two_servers_share_a_port(void **state) {
  char port[16];
  snprintf(port, sizeof port, "%d", free_port());
  const char *args[] = {"--port", port, "--reuseport", NULL};
  anim_test_server_t a, b;
  assert_int_equal(anim_test_server_start(&a, "reuseport_a", args), 0);
  assert_int_equal(anim_test_server_start(&b, "reuseport_b", args), 0);
  assert_int_equal(a.port, b.port);

  /* Connections held open, so each server's numbering only grows. */
  anim_client_t *clients[NCONNECTIONS];
  uint64_t ids[NCONNECTIONS];
  int firsts = 0;
  for (int i = 0; i < NCONNECTIONS; i++) {
    int err;
    clients[i] = anim_client_connect("127.0.0.1", a.port, NULL, &err);
    assert_non_null(clients[i]);
    anim_hello_info_t info;
    assert_int_equal(anim_client_hello(clients[i], "reuseport", &info, TIMEOUT_MS), 0);
    ids[i] = info.connection_id;
    firsts += ids[i] == 1;
    assert_int_equal(anim_client_ping(clients[i], "p", 1, NULL, TIMEOUT_MS), 0);
  }
  if (firsts != 2) {
    for (int i = 0; i < NCONNECTIONS; i++) fprintf(stderr, "%llu ", (unsigned long long)ids[i]);
    fprintf(stderr, "\nconnection ids above: expected connection 1 of each of the two servers\n");
  }
  assert_int_equal(firsts, 2);

  /* Each server counts its own share: the two shares add up to every connection. */
  uint32_t seen[2] = {0, 0};
  int nseen = 0;
  for (int i = 0; i < NCONNECTIONS && nseen < 2; i++) {
    if (ids[i] != 1) continue;
    anim_server_stats_t st;
    assert_int_equal(anim_client_server_stats(clients[i], &st, TIMEOUT_MS), 0);
    seen[nseen++] = st.connections;
  }
  assert_true(seen[0] >= 1 && seen[1] >= 1);
  assert_int_equal(seen[0] + seen[1], NCONNECTIONS);

  /* One instance drained: the port stays served by the other. */
  for (int i = 0; i < NCONNECTIONS; i++) anim_client_close(clients[i]);
  assert_int_equal(anim_test_server_stop(&a), 0);
  for (int i = 0; i < 8; i++) {
    int err;
    anim_client_t *c = anim_client_connect("127.0.0.1", b.port, NULL, &err);
    assert_non_null(c);
    assert_int_equal(anim_client_ping(c, "p", 1, NULL, TIMEOUT_MS), 0);
    anim_client_close(c);
  }
  assert_int_equal(anim_test_server_stop(&b), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_second_server_without_reuseport_refuses),
      cmocka_unit_test(test_two_servers_share_a_port),
  };
  return cmocka_run_group_tests_name("reuseport", tests, NULL, NULL);
}
