/*
 * test_pipelined_alloc.c: pipelined searches (and the pings among them)
 * are answered without an allocation per request in steady state.
 *
 * The real server runs in this process (srv_server_start on an ephemeral
 * loopback port, its loop on this thread, its thread pool and lane as
 * usual) on the procedural default database. A client thread opens a few
 * connections and, round after round, writes 16 requests on each in one
 * write (as `animctl load --pipeline 16` does: 12 searches and 4 pings)
 * and reads every answer, checking each is its request's. After a warm-up, every
 * allocation the server makes on any thread is counted over the counted
 * rounds (tests/support/alloc_counter.h): decoding (the read batches'
 * arenas), searching (the responses' lent memory), encoding and writing
 * must reuse what earlier rounds grew: none is allowed. (Before, each
 * search allocated its results, and each batch its answers buffer, grown
 * once: 28,000 allocations in this window, each freed on another
 * thread.)
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <cmocka.h>
#include "alloc_counter.h"
#include "frame.h"
#include "inprocess_server.h"
#include "raw_client.h"

#define CONNECTIONS 4
#define PIPELINE 16
#define WARMUP_ROUNDS 200
#define COUNTED_ROUNDS 500
#define TIMEOUT_MS 20000

static srv_server_t server;
static uv_loop_t loop;
static srv_crowd_hooks_t original;
static uv_async_t client_done; /* the client thread's last word: the loop stops the server */
static _Atomic int client_failed;
static long counted, answered;
static uint32_t frames; /* of the default database */

/* Request i of a round is a ping when this holds (the others search):
 * answers of other requests wait in a batch among its searches'. */
static int is_ping(int i) { return i % 4 == 3; }

static size_t append_ping(uint8_t *buf, size_t at, uint64_t id) {
  Animserver__Request r = ANIMSERVER__REQUEST__INIT;
  Animserver__PingRequest ping = ANIMSERVER__PING_REQUEST__INIT;
  ping.payload.data = (uint8_t *)"round", ping.payload.len = 5;
  r.id = id, r.body_case = ANIMSERVER__REQUEST__BODY_PING, r.ping = &ping;
  return anim_test_raw_append(buf, at, &r);
}

static int answers(const Animserver__Response *r, uint64_t id, int i) {
  if (!r || r->id != id || r->error) return 0;
  if (is_ping(i)) return r->ping && r->ping->payload.len == 5;
  return r->search && r->search->result && r->search->result->n_matches == 1;
}

/* One round on one connection: PIPELINE requests in one write, then every
 * answer, in order. 0, or -1 with a message. */
static int round_trip(anim_test_raw_t *c, uint64_t *next_id) {
  static uint8_t buf[PIPELINE * 256];
  size_t len = 0;
  uint64_t first = *next_id;
  for (int i = 0; i < PIPELINE; i++, (*next_id)++)
    len = is_ping(i) ? append_ping(buf, len, *next_id)
                     : anim_test_raw_append_search(buf, len, *next_id, "default", (uint32_t)(*next_id * 7919u % frames), 1);
  if (send(c->fd, buf, len, MSG_NOSIGNAL) != (ssize_t)len) return -1;
  for (int i = 0; i < PIPELINE; i++) {
    Animserver__ServerMessage *m = anim_test_raw_next(c, TIMEOUT_MS);
    int ok = m && answers(m->response, first + (uint64_t)i, i);
    if (m) animserver__server_message__free_unpacked(m, NULL);
    if (!ok) {
      fprintf(stderr, "answer %d of a round: missing, out of order, failed or not its request's\n", i);
      return -1;
    }
    answered++;
  }
  return 0;
}

static void *client_main(void *arg) {
  (void)arg;
  anim_alloc_not_counted = 1;
  anim_test_server_t address = {.port = server.bound_port};
  strcpy(address.host, "127.0.0.1");
  anim_test_raw_t c[CONNECTIONS];
  uint64_t next_id[CONNECTIONS];
  for (int i = 0; i < CONNECTIONS; i++) {
    next_id[i] = 1;
    if (anim_test_raw_open(&c[i], &address) != 0) client_failed = 1;
  }
  for (int r = 0; r < WARMUP_ROUNDS + COUNTED_ROUNDS && !client_failed; r++) {
    if (r == WARMUP_ROUNDS) anim_alloc_counter_open();
    for (int i = 0; i < CONNECTIONS && !client_failed; i++)
      if (round_trip(&c[i], &next_id[i]) != 0) client_failed = 1;
  }
  counted = anim_alloc_counter_close();
  for (int i = 0; i < CONNECTIONS; i++) anim_test_raw_close(&c[i]);
  uv_async_send(&client_done);
  return NULL;
}

static void on_client_done(uv_async_t *async) {
  uv_close((uv_handle_t *)async, NULL);
  srv_server_shutdown(&server);
}

static void test_no_allocation_per_pipelined_search(void **state) {
  (void)state;
  char err[256];
  srv_config_t config;
  anim_test_inprocess_setup(&config, &loop);
  anim_alloc_counter_install();
  srv_registry_t registry = {0};
  frames = (uint32_t)anim_test_register_procgen(&registry)->db.nframes;
  assert_int_equal(srv_server_start(&server, &loop, &config, &registry, err, sizeof err), 0);
  assert_int_equal(uv_async_init(&loop, &client_done, on_client_done), 0);
  anim_test_run_with_client(&server, &loop, &original, server.crowd.hooks.ended, client_main); /* hooks as they are */
  srv_counters_t counters = server.counters;
  srv_server_close(&server);
  assert_int_equal(uv_loop_close(&loop), 0);
  printf("%ld pipelined requests (%d connections, %d a write, a quarter of them pings) after a %d-round warm-up: "
         "%ld allocations by the server (%s); %llu searches decoded by their read batch\n",
         (long)CONNECTIONS * COUNTED_ROUNDS * PIPELINE, CONNECTIONS, PIPELINE, WARMUP_ROUNDS, counted, ANIM_ALLOC_COUNTER,
         (unsigned long long)counters.read_batch_decoded);
  assert_false(client_failed);
  assert_int_equal(answered, (long)CONNECTIONS * (WARMUP_ROUNDS + COUNTED_ROUNDS) * PIPELINE);
  assert_true(counters.read_batch_decoded > 0); /* the batch's own decoding was what ran */
  assert_int_equal(counted, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_no_allocation_per_pipelined_search)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
