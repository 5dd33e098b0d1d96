/*
 * test_crowd_totals.c: the crowd's running totals (crowd.h) stay equal to
 * a recount. srv_crowd_bytes is a running sum of srv_crowd_actor_bytes and
 * srv_crowd_owned_count a table of counts per owner, both kept where
 * characters are created, destroyed and re-measured; here they are checked
 * against a fresh walk of the live characters after every tick.
 *
 * The real server runs in this process (its loop on this thread, as in
 * test_tick_alloc.c); its crowd's ended hook recounts, between ticks where
 * nothing changes characters: the bytes of every live character summed
 * again, each owner's characters counted again, and the table holding
 * exactly the owners that have characters (an owner at zero is forgotten).
 * A client thread on several connections makes the changes: motion
 * matching, graph and machine characters created and destroyed, paths
 * longer than a graph character's planner had room for (its memory grows
 * after creation: set_paths must re-measure it; the test checks that the
 * total did grow), the per-connection limit reached and freed, and
 * connections closed with their characters. After each change it waits
 * for two more recounts. One character owned by no connection (owner 0)
 * keeps the ticks, and so the recounts, going throughout.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>
#include "anim_client.h"
#include "anim_error.h"
#include "inprocess_server.h"
#include "offline/procgen.h"
#include "server/graphs.h"
#include "server/server.h"

#define TIMEOUT_MS 20000
#define PER_CONNECTION 12 /* --max-characters-per-connection */
#define MAX_OWNERS 16

static srv_server_t server;
static uv_loop_t loop;
static srv_crowd_hooks_t original;
/* Written by the loop thread, read by the client between its requests. */
static _Atomic long recounts, mismatches;
static _Atomic int client_done;
static char first_mismatch[256];
static char client_error[256];

/* ---- the server side: a recount after every tick ------------------------------------------ */

static void mismatch(const char *fmt, ...) {
  if (mismatches++ > 0) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(first_mismatch, sizeof first_mismatch, fmt, ap);
  va_end(ap);
}

/* The O(n) figures, from the public iteration, against the running ones. */
static void recount(const srv_crowd_t *crowd) {
  uint64_t bytes = 0, owners[MAX_OWNERS];
  uint32_t counts[MAX_OWNERS], nowners = 0, cursor, live = 0;
  for (const srv_actor_t *a = srv_crowd_first(crowd, &cursor); a; a = srv_crowd_next(crowd, &cursor)) {
    bytes += srv_crowd_actor_bytes(a), live++;
    uint32_t k = 0;
    while (k < nowners && owners[k] != a->owner) k++;
    if (k == nowners) {
      if (nowners == MAX_OWNERS) return mismatch("more than %d owners", MAX_OWNERS);
      owners[nowners] = a->owner, counts[nowners++] = 0;
    }
    counts[k]++;
  }
  if (live != crowd->count)
    mismatch("tick %llu: %u live characters, count %u", (unsigned long long)crowd->tick, live, crowd->count);
  if (bytes != srv_crowd_bytes(crowd))
    mismatch("tick %llu: srv_crowd_bytes %llu, the characters hold %llu", (unsigned long long)crowd->tick,
             (unsigned long long)srv_crowd_bytes(crowd), (unsigned long long)bytes);
  for (uint32_t k = 0; k < nowners; k++)
    if (srv_crowd_owned_count(crowd, owners[k]) != counts[k])
      mismatch("tick %llu: owner %llu: srv_crowd_owned_count %u, it has %u", (unsigned long long)crowd->tick,
               (unsigned long long)owners[k], srv_crowd_owned_count(crowd, owners[k]), counts[k]);
  if (crowd->owners.owners != nowners)
    mismatch("tick %llu: the owner table holds %u owners, %u have characters", (unsigned long long)crowd->tick,
             crowd->owners.owners, nowners);
  recounts++;
}

static void on_ended(srv_crowd_t *crowd, void *data) {
  original.ended(crowd, data);
  recount(crowd);
  static int shut;
  if (client_done && !shut) shut = 1, srv_server_shutdown(&server);
}

/* ---- the client ----------------------------------------------------------------------------- */

#define EXPECT(cond, ...)                                                                                             \
  do {                                                                                                                \
    if (!(cond)) {                                                                                                    \
      snprintf(client_error, sizeof client_error, __VA_ARGS__);                                                       \
      return -1;                                                                                                      \
    }                                                                                                                 \
  } while (0)

static double seconds_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Two recounts after the last change (a change answered before the first
 * of them started is in both). Pings keep the client's side turning until
 * then: a count of pings is no bound (on a loaded machine 2,000 of them
 * came and went in fewer than two ticks), TIMEOUT_MS is. */
static int settle(anim_client_t *c) {
  long from = recounts;
  for (double end = seconds_now() + TIMEOUT_MS / 1000.0; recounts < from + 2 && seconds_now() < end;) {
    uint64_t rtt;
    EXPECT(anim_client_ping(c, NULL, 0, &rtt, TIMEOUT_MS) == 0, "ping failed");
  }
  EXPECT(recounts >= from + 2, "no ticks in %d ms", TIMEOUT_MS);
  return 0;
}

static uint64_t bytes_now(anim_client_t *c) {
  anim_server_stats_t st;
  return anim_client_server_stats(c, &st, TIMEOUT_MS) == 0 ? st.character_bytes : 0;
}

/* A circle of n points around (x, z). */
static void circle(float *points, int n, float x, float z) {
  for (int k = 0; k < n; k++) {
    float angle = 6.2831853f * (float)k / (float)n;
    points[2 * k] = x + 4.0f * sinf(angle), points[2 * k + 1] = z - 4.0f * cosf(angle);
  }
}

static int changes(anim_client_t *a, anim_client_t *b, anim_client_t *c) {
  static const char machine[] = "a { clip walk [0 1] END b }\nb { clip run [0 1] END a }\n";
  uint64_t matching[PER_CONNECTION], graphs[4], machines[3], more[PER_CONNECTION];
  int rc;
  EXPECT(anim_client_characters_create(a, "default", NULL, NULL, 8, matching, TIMEOUT_MS) == 0, "create matching");
  if (settle(a)) return -1;

  /* Graph characters, then paths longer than their planners' room for two points. */
  anim_character_mode_t graph = {.mode = ANIM_MODE_GRAPH};
  EXPECT((rc = anim_client_characters_create_mode(b, "default", &graph, NULL, NULL, 4, graphs, TIMEOUT_MS)) == 0,
         "create graph characters: %s", anim_strerror(rc));
  if (settle(b)) return -1;
  uint64_t before = bytes_now(b);
  static float long_path[2 * 64], longer_path[2 * 200], short_path[2 * 3];
  circle(long_path, 64, 0.0f, 10.0f), circle(longer_path, 200, 5.0f, 10.0f), circle(short_path, 3, -5.0f, 10.0f);
  const float *points[3] = {long_path, long_path, short_path};
  int npoints[3] = {64, 64, 3}, closed[3] = {1, 1, 1};
  uint64_t tick;
  EXPECT((rc = anim_client_graph_paths(b, graphs, points, npoints, closed, 3, &tick, TIMEOUT_MS)) == 0, "set paths: %s",
         anim_strerror(rc));
  if (settle(b)) return -1;
  uint64_t grown = bytes_now(b);
  /* Otherwise this test would not notice set_paths forgetting to re-measure. */
  EXPECT(grown > before, "set_paths' longer paths did not grow character_bytes (%llu, %llu before)",
         (unsigned long long)grown, (unsigned long long)before);
  /* Longer still on one, back to wandering on another (its arrays stay), a shorter one on a third. */
  const float *again[3] = {longer_path, NULL, short_path};
  int nagain[3] = {200, 0, 3};
  EXPECT(anim_client_graph_paths(b, graphs, again, nagain, closed, 3, &tick, TIMEOUT_MS) == 0, "set paths again");
  if (settle(b)) return -1;
  EXPECT(bytes_now(b) > grown, "a 200-point path did not grow character_bytes");

  /* Machine characters on a third connection. */
  anim_machine_summary_t *summary = NULL;
  EXPECT(anim_client_machine_load(c, "loop", machine, sizeof machine - 1, 0, &summary, TIMEOUT_MS) == 0,
         "load machine");
  anim_machine_summary_free(summary);
  anim_character_mode_t mode = {.mode = ANIM_MODE_MACHINE, .machine = "loop"};
  EXPECT(anim_client_characters_create_mode(c, "default", &mode, NULL, NULL, 3, machines, TIMEOUT_MS) == 0,
         "create machine characters");
  if (settle(c)) return -1;

  /* Destroyed: matching and a graph character with a grown path. */
  EXPECT(anim_client_characters_destroy(a, matching, 3, TIMEOUT_MS) == 0, "destroy matching");
  EXPECT(anim_client_characters_destroy(b, graphs, 1, TIMEOUT_MS) == 0, "destroy a graph character");
  if (settle(a)) return -1;

  /* The per-connection limit: a holds 5, may reach 12, no more; freeing two makes room for two. */
  EXPECT(anim_client_characters_create(a, "default", NULL, NULL, 7, more, TIMEOUT_MS) == 0, "create up to the limit");
  EXPECT(anim_client_characters_create(a, "default", NULL, NULL, 1, more + 7, TIMEOUT_MS) == ANIM_ELIMIT,
         "a 13th character was allowed");
  EXPECT(anim_client_characters_destroy(a, more, 2, TIMEOUT_MS) == 0, "destroy 2");
  EXPECT(anim_client_characters_create(a, "default", NULL, NULL, 2, more, TIMEOUT_MS) == 0, "create 2 again");
  EXPECT(anim_client_characters_create(a, "default", NULL, NULL, 1, more + 7, TIMEOUT_MS) == ANIM_ELIMIT,
         "a 13th character was allowed after freeing 2");
  if (settle(a)) return -1;
  return 0;
}

/* Waits until the server holds n characters. */
static int wait_characters(anim_client_t *c, uint32_t n) {
  anim_server_stats_t st = {0};
  for (int i = 0; i < 2000; i++) {
    EXPECT(anim_client_server_stats(c, &st, TIMEOUT_MS) == 0, "server_stats failed");
    if (st.characters == n) return settle(c);
  }
  EXPECT(0, "%u characters, %u expected", st.characters, n);
  return -1;
}

static anim_client_t *connect_one(void) {
  int err;
  return anim_client_connect("127.0.0.1", server.bound_port, NULL, &err);
}

static int run_client(void) {
  anim_client_t *a = connect_one(), *b = connect_one(), *c = connect_one(), *d = connect_one();
  EXPECT(a && b && c && d, "connect");
  int rc = changes(a, b, c);
  /* Connections closed with their characters: c's machines, then d's grown graph characters. */
  if (!rc) {
    anim_client_close(c), c = NULL;
    rc = wait_characters(a, 1 + 12 + 3);
  }
  uint64_t graphs[2];
  static float path[2 * 100];
  circle(path, 100, 0.0f, -10.0f);
  const float *points[2] = {path, path};
  int npoints[2] = {100, 100}, closed[2] = {0, 0};
  anim_character_mode_t graph = {.mode = ANIM_MODE_GRAPH};
  uint64_t tick;
  if (!rc && (anim_client_characters_create_mode(d, "default", &graph, NULL, NULL, 2, graphs, TIMEOUT_MS) != 0 ||
              anim_client_graph_paths(d, graphs, points, npoints, closed, 2, &tick, TIMEOUT_MS) != 0)) {
    snprintf(client_error, sizeof client_error, "d's graph characters");
    rc = -1;
  }
  if (!rc) rc = settle(d);
  if (!rc) {
    anim_client_close(d), d = NULL;
    rc = wait_characters(a, 1 + 12 + 3);
  }
  if (!rc) {
    anim_client_close(b), b = NULL;
    rc = wait_characters(a, 1 + 12);
  }
  if (!rc) {
    anim_client_close(a), a = NULL;
    anim_client_t *e = connect_one();
    rc = e ? wait_characters(e, 1) : -1;
    if (e) anim_client_close(e);
  }
  if (a) anim_client_close(a);
  if (b) anim_client_close(b);
  if (c) anim_client_close(c);
  if (d) anim_client_close(d);
  return rc;
}

static void *client_main(void *arg) {
  if (run_client() != 0 && !client_error[0]) snprintf(client_error, sizeof client_error, "client failed");
  client_done = 1;
  return NULL;
}

/* ---- the test ------------------------------------------------------------------------------- */

static void test_totals_equal_a_recount(void **state) {
  char err[256];
  srv_config_t config;
  anim_test_inprocess_setup(&config, &loop);
  config.max_characters_per_connection = PER_CONNECTION;
  srv_registry_t registry = {0};
  srv_db_entry_t *entry = anim_test_register_procgen(&registry);
  assert_int_equal(srv_server_start(&server, &loop, &config, &registry, err, sizeof err), 0);
  anim_test_build_graph(entry);
  /* Owner 0's character: ticks (and recounts) never stop. */
  static srv_create_characters_request_t request;
  anim_controller_params_default(&request.params);
  srv_actor_setup_t setup = {&request, vec3_make(0.0f, 0.0f, -20.0f), 0.0f, 0, 0, NULL};
  uint64_t id;
  assert_int_equal(srv_crowd_create(&server.crowd, 0, entry, &srv_actor_matching, &setup, &id, err, sizeof err), 0);
  anim_test_run_with_client(&server, &loop, &original, on_ended, client_main);
  uint64_t bytes = srv_crowd_bytes(&server.crowd);
  srv_server_close(&server);
  assert_int_equal(uv_loop_close(&loop), 0);
  printf("%ld recounts, %ld mismatches; at the end %llu bytes (owner 0's character)\n", (long)recounts,
         (long)mismatches, (unsigned long long)bytes);
  if (client_error[0]) fail_msg("client: %s", client_error);
  if (mismatches) fail_msg("%ld recounts differ; the first: %s", (long)mismatches, first_mismatch);
  assert_true(recounts >= 20);
  assert_true(bytes > 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_totals_equal_a_recount)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
