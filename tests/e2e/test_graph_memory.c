/*
 * test_graph_memory.c: motion-graph memory, counted and bounded (issue 30,
 * point 6), against the real server and the real client library:
 *  - a build_graph that would pass --max-graph-memory is refused with
 *    ERROR_LIMIT naming the flag and the figures, before anything is built
 *    (describe_graph: no build started, nothing kept);
 *  - the limit is a LIVE option: raised in the config file and SIGHUP, the
 *    same build runs;
 *  - the graph kept is reported beside its database: list_databases'
 *    graph_memory_bytes and the metrics' graph_memory_bytes{database};
 *  - the graphs kept count against the limit: a second build that would fit
 *    alone is refused beside the first graph.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
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
#include <unistd.h>
#include <cmocka.h>
#include "anim_client.h"
#include "fixture.h"
#include "server_proc.h"

#define TIMEOUT_MS 20000
/* build_graph answers when its build ends: a minute, as test_graph_service
 * allows (seconds under the sanitizers on a loaded machine). */
#define BUILD_TIMEOUT_MS 60000

static char dir[64];

static int setup(void **state) {
  snprintf(dir, sizeof dir, "/tmp/animgraphmem-XXXXXX");
  return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state) {
  char path[128];
  snprintf(path, sizeof path, "%s/animserver.conf", dir);
  unlink(path);
  return rmdir(dir);
}

static void write_config(const char *path, unsigned long long limit) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fprintf(f, "max-graph-memory %llu\n", limit);
  fclose(f);
}

/* GET /metrics: the value of the sample named exactly series, or -1. */
static double metric(int port, const char *series) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in addr = {0};
  addr.sin_family = AF_INET;
  addr.sin_port = htons((uint16_t)port);
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  assert_int_equal(connect(fd, (struct sockaddr *)&addr, sizeof addr), 0);
  const char *request = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  assert_int_equal(send(fd, request, strlen(request), 0), (ssize_t)strlen(request));
  static char reply[1 << 17];
  size_t len = 0;
  struct pollfd p = {fd, POLLIN, 0};
  while (len < sizeof reply - 1 && poll(&p, 1, TIMEOUT_MS) > 0) {
    ssize_t n = recv(fd, reply + len, sizeof reply - 1 - len, 0);
    if (n <= 0) break;
    len += (size_t)n;
  }
  close(fd);
  reply[len] = '\0';
  size_t n = strlen(series);
  for (const char *line = reply; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL)
    if (!strncmp(line, series, n) && line[n] == ' ') return strtod(line + n + 1, NULL);
  return -1;
}

static uint64_t listed_graph_memory(anim_client_t *client, const char *name) {
  anim_db_summary_t summaries[8];
  int count = 0;
  assert_int_equal(anim_client_db_list(client, summaries, 8, &count, TIMEOUT_MS), 0);
  for (int i = 0; i < count && i < 8; i++)
    if (!strcmp(summaries[i].name, name)) return summaries[i].graph_memory_bytes;
  fail_msg("list_databases has no %s", name);
  return 0;
}

/* A build of the default database with a distance picture (its cells count too). */
static int build(anim_client_t *client, anim_graph_description_t **out) {
  anim_graph_build_options_t o = {.matrix_size = 256};
  return anim_client_graph_build(client, "default", &o, out, BUILD_TIMEOUT_MS);
}

static void test_graph_memory_bounded_and_reported(void **state) {
  char config[128];
  snprintf(config, sizeof config, "%s/animserver.conf", dir);
  write_config(config, 65536);
  anim_test_server_t server;
  int metrics_port;
  const char *args[] = {"--config", config, "--metrics-port", "0", NULL};
  assert_int_equal(anim_test_server_start_metrics(&server, "graph_memory", args, &metrics_port), 0);
  anim_client_t *client = anim_test_connect(&server);

  /* 64 KiB: refused before the build starts, naming the flag and what it needs. */
  anim_graph_description_t *d = NULL;
  assert_int_equal(build(client, &d), ANIM_ELIMIT);
  const char *message = anim_client_last_error(client);
  assert_non_null(strstr(message, "build_graph.database = \"default\""));
  assert_non_null(strstr(message, "over --max-graph-memory 65536"));
  const char *about = strstr(message, "needs about ");
  assert_non_null(about);
  unsigned long long need = strtoull(about + strlen("needs about "), NULL, 10);
  assert_true(need > 65536);
  assert_int_equal(anim_client_graph_describe(client, "default", 0, 0, &d, TIMEOUT_MS), 0);
  assert_int_equal(d->status, ANIM_GRAPH_NONE); /* nothing started, nothing failed */
  anim_graph_description_free(d);
  assert_int_equal(listed_graph_memory(client, "default"), 0);
  assert_true(metric(metrics_port, "animserver_graph_memory_bytes{database=\"default\"}") == 0.0);

  /* Exactly what it needs, by SIGHUP: the build runs. The reload is applied
   * when the loop takes the signal: retried until then. */
  write_config(config, need);
  assert_int_equal(kill(server.pid, SIGHUP), 0);
  int rc = ANIM_ELIMIT;
  for (int i = 0; i < 200 && rc == ANIM_ELIMIT; i++) {
    if ((rc = build(client, &d)) == ANIM_ELIMIT) usleep(25000);
  }
  assert_int_equal(rc, 0);
  for (int i = 0; i < 2000 && (d->status == ANIM_GRAPH_BUILDING || !d->ready); i++) {
    assert_int_not_equal(d->status, ANIM_GRAPH_FAILED);
    anim_graph_description_free(d);
    usleep(10000);
    assert_int_equal(anim_client_graph_describe(client, "default", 0, 0, &d, TIMEOUT_MS), 0);
  }
  if (d->status != ANIM_GRAPH_READY) fail_msg("the graph did not finish building: %s", d->error);
  uint64_t arrays = d->memory_bytes, strip = d->strip_memory_bytes;
  anim_graph_description_free(d);

  /* Reported beside the database: the graph's arrays and its 256 x 256 picture. */
  uint64_t kept = listed_graph_memory(client, "default");
  assert_true(kept >= arrays + 256u * 256u * sizeof(float));
  assert_true(kept < arrays + 256u * 256u * sizeof(float) + 4096);
  assert_true(metric(metrics_port, "animserver_graph_memory_bytes{database=\"default\"}") == (double)kept);
  /* The estimate holds the strip's scratch the build reported, and the picture. */
  assert_true(need >= strip + 256u * 256u * sizeof(float));
  printf("graph memory: the build was estimated at %llu bytes (a strip's scratch %llu); the graph kept takes %llu "
         "(its arrays %llu)\n",
         need, (unsigned long long)strip, (unsigned long long)kept, (unsigned long long)arrays);

  /* A second build alone fits, but not beside the graph kept (it serves until the new one is ready). */
  assert_int_equal(build(client, &d), ANIM_ELIMIT);
  message = anim_client_last_error(client);
  char beside[96];
  snprintf(beside, sizeof beside, "beside %llu bytes of graphs kept", (unsigned long long)kept);
  if (!strstr(message, beside)) fail_msg("\"%s\" does not say \"%s\"", message, beside);
  /* The graph that serves is untouched. */
  assert_int_equal(anim_client_graph_describe(client, "default", 0, 0, &d, TIMEOUT_MS), 0);
  assert_int_equal(d->status, ANIM_GRAPH_READY);
  anim_graph_description_free(d);

  anim_client_close(client);
  assert_int_equal(anim_test_server_stop(&server), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_graph_memory_bounded_and_reported),
  };
  return cmocka_run_group_tests_name("graph_memory", tests, setup, teardown);
}
