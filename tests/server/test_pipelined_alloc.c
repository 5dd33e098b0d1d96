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
 * thread.) So must searches whose matches carry their poses, whose
 * encoding outgrows the encoder's inline scratch. The other side of that
 * reuse: a batch's answers buffer over 64 KiB is not kept, so rounds of
 * larger answers allocate it on every batch.
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
/* The searches' k and whether their matches carry their feature rows:
 * answers of bytes, or of kilobytes. */
static uint32_t search_k;
static int search_features, search_pose;
static size_t smallest_round; /* the fewest bytes of answers a round brought on one connection */

/* Request i of a round is a ping when this holds (the others search):
 * answers of other requests wait in a batch among its searches'. A
 * quarter of them pings, or half (rounds of searches with poses, whose
 * answers then stay under the 64 KiB a search set keeps). */
static int ping_every = 4;
static int is_ping(int i) { return i % ping_every == ping_every - 1; }

static size_t append_ping(uint8_t *buf, size_t at, uint64_t id) {
  Animserver__Request r = ANIMSERVER__REQUEST__INIT;
  Animserver__PingRequest ping = ANIMSERVER__PING_REQUEST__INIT;
  ping.payload.data = (uint8_t *)"round", ping.payload.len = 5;
  r.id = id, r.body_case = ANIMSERVER__REQUEST__BODY_PING, r.ping = &ping;
  return anim_test_raw_append(buf, at, &r);
}

static size_t append_search(uint8_t *buf, size_t at, uint64_t id, uint32_t frame) {
  Animserver__FrameIndex from = ANIMSERVER__FRAME_INDEX__INIT;
  Animserver__SearchQuery q = ANIMSERVER__SEARCH_QUERY__INIT;
  Animserver__SearchRequest sr = ANIMSERVER__SEARCH_REQUEST__INIT;
  Animserver__Request r = ANIMSERVER__REQUEST__INIT;
  from.frame = frame;
  q.from_frame = &from, q.k = search_k, q.include_features = search_features, q.include_pose = search_pose;
  sr.database = "default", sr.query = &q;
  r.id = id, r.body_case = ANIMSERVER__REQUEST__BODY_SEARCH, r.search = &sr;
  return anim_test_raw_append(buf, at, &r);
}

static int answers(const Animserver__Response *r, uint64_t id, int i) {
  if (!r || r->id != id || r->error) return 0;
  if (is_ping(i)) return r->ping && r->ping->payload.len == 5;
  return r->search && r->search->result && r->search->result->n_matches == search_k &&
         (!search_features || r->search->result->matches[0]->n_features > 0) &&
         (!search_pose || (r->search->result->matches[search_k - 1]->pose &&
                           r->search->result->matches[search_k - 1]->pose->n_local_rotations > 0));
}

/* One round on one connection: PIPELINE requests in one write, then every
 * answer, in order. 0, or -1 with a message. */
static int round_trip(anim_test_raw_t *c, uint64_t *next_id) {
  static uint8_t buf[PIPELINE * 256];
  size_t len = 0;
  uint64_t first = *next_id;
  for (int i = 0; i < PIPELINE; i++, (*next_id)++)
    len = is_ping(i) ? append_ping(buf, len, *next_id) : append_search(buf, len, *next_id, (uint32_t)(*next_id * 7919u % frames));
  if (send(c->fd, buf, len, MSG_NOSIGNAL) != (ssize_t)len) return -1;
  size_t bytes = 0;
  for (int i = 0; i < PIPELINE; i++) {
    Animserver__ServerMessage *m = anim_test_raw_next(c, TIMEOUT_MS);
    int ok = m && answers(m->response, first + (uint64_t)i, i);
    if (m) bytes += animserver__server_message__get_packed_size(m);
    if (m) animserver__server_message__free_unpacked(m, NULL);
    if (!ok) {
      fprintf(stderr, "answer %d of a round: missing, out of order, failed or not its request's\n", i);
      return -1;
    }
    answered++;
  }
  if (bytes < smallest_round) smallest_round = bytes;
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

/* The default database with a schema of ANIM_MAX_FEATURE_DIMS - 1
 * columns: the default one's bone terms, and its two trajectory terms and
 * five more (positions and directions at other frames) of 8 samples each.
 * A match's feature row is then half a kilobyte. Registered in registry. */
static srv_db_entry_t *register_wide(srv_registry_t *registry) {
  char err[256];
  anim_database_t db;
  anim_feature_schema_t schema;
  assert_int_equal(anim_procgen_database(&db, NULL, err, sizeof err), 0);
  assert_int_equal(anim_feature_schema_default(&schema, &db), 0);
  for (int t = 0; t < schema.nterms; t++) /* the two trajectory terms: 8 samples */
    if (!anim_feature_term_is_bone(&schema.terms[t])) {
      schema.terms[t].nsamples = ANIM_MAX_TRAJECTORY_SAMPLES;
      for (int k = 0; k < ANIM_MAX_TRAJECTORY_SAMPLES; k++) schema.terms[t].frame_offsets[k] = 10 * (k + 1);
    }
  for (int extra = 0; extra < 5; extra++) {
    anim_feature_term_t *term = &schema.terms[schema.nterms++];
    memset(term, 0, sizeof *term);
    term->kind = extra % 2 ? ANIM_FEATURE_TRAJECTORY_DIRECTION : ANIM_FEATURE_TRAJECTORY_POSITION;
    term->weight = 1.0f;
    term->nsamples = ANIM_MAX_TRAJECTORY_SAMPLES;
    for (int k = 0; k < ANIM_MAX_TRAJECTORY_SAMPLES; k++) term->frame_offsets[k] = 10 * k + 2 * extra + 1;
  }
  if (anim_features_build(&db, &schema, err, sizeof err) != 0) fail_msg("the wide schema: %s", err);
  assert_int_equal(db.features.cols, ANIM_MAX_FEATURE_DIMS - 1);
  srv_db_entry_t *entry = srv_db_entry_create(&db, "", err, sizeof err);
  assert_non_null(entry);
  assert_int_equal(srv_registry_put(registry, entry), 0);
  return entry;
}

/* Runs the server (on the default database, or with wide its wide-schema
 * twin) with the client thread: rounds of PIPELINE requests whose searches
 * ask for k matches, with their feature rows when features is set; the
 * allocations of the counted rounds in `counted`, the server's counters in
 * *out_counters. */
static void serve_rounds(int wide, uint32_t k, int features, int pose, srv_counters_t *out_counters) {
  char err[256];
  srv_config_t config;
  search_k = k, search_features = features, search_pose = pose, ping_every = pose ? 2 : 4;
  counted = answered = 0, smallest_round = SIZE_MAX;
  client_failed = 0;
  anim_test_inprocess_setup(&config, &loop);
  static int installed; /* once: AddressSanitizer's hooks would count twice */
  if (!installed) anim_alloc_counter_install(), installed = 1;
  srv_registry_t registry = {0};
  frames = (uint32_t)(wide ? register_wide(&registry) : anim_test_register_procgen(&registry))->db.nframes;
  assert_int_equal(srv_server_start(&server, &loop, &config, &registry, err, sizeof err), 0);
  assert_int_equal(uv_async_init(&loop, &client_done, on_client_done), 0);
  anim_test_run_with_client(&server, &loop, &original, server.crowd.hooks.ended, client_main); /* hooks as they are */
  *out_counters = server.counters;
  srv_server_close(&server);
  assert_int_equal(uv_loop_close(&loop), 0);
  assert_false(client_failed);
  assert_int_equal(answered, (long)CONNECTIONS * (WARMUP_ROUNDS + COUNTED_ROUNDS) * PIPELINE);
}

static void test_no_allocation_per_pipelined_search(void **state) {
  (void)state;
  srv_counters_t counters;
  serve_rounds(0, 1, 0, 0, &counters);
  printf("%ld pipelined requests (%d connections, %d a write, a quarter of them pings) after a %d-round warm-up: "
         "%ld allocations by the server (%s); %llu searches decoded by their read batch\n",
         (long)CONNECTIONS * COUNTED_ROUNDS * PIPELINE, CONNECTIONS, PIPELINE, WARMUP_ROUNDS, counted, ANIM_ALLOC_COUNTER,
         (unsigned long long)counters.read_batch_decoded);
  assert_true(counters.read_batch_decoded > 0); /* the batch's own decoding was what ran */
  assert_int_equal(counted, 0);
}

/* Matches with their poses: a response of POSE_K poses (each a Pose
 * message, its contacts, its match) is more than the encoder's inline
 * scratch (SRV_ENCODER_INLINE_BYTES), so its encoding takes heap blocks;
 * they are kept for the next responses, whichever thread encodes them (a
 * batch runs on any free pool thread: blocks kept per thread allocated
 * again when a new one took it, once under load in make sanitize). (Before, a
 * block a message past the inline bytes.) Rounds of 8 searches and 8 pings:
 * their answers stay under the 64 KiB a search set keeps. */
#define POSE_K 8

static void test_no_allocation_per_pipelined_pose_search(void **state) {
  (void)state;
  srv_counters_t counters;
  serve_rounds(0, POSE_K, 0, 1, &counters);
  printf("%ld pipelined requests, searches of %d matches with their poses (at least %zu bytes of answers a round): "
         "%ld allocations by the server (%s)\n",
         (long)CONNECTIONS * COUNTED_ROUNDS * PIPELINE, POSE_K, smallest_round, counted, ANIM_ALLOC_COUNTER);
  assert_true(smallest_round > 8 * POSE_K * 500); /* poses: hundreds of bytes each */
  assert_int_equal(counted, 0);
}

/* A search set keeps its last answers buffer only up to 64 KiB
 * (BATCH_OUT_KEPT_BYTES, server/dispatch.c: 8 sets keep at most 512 KiB).
 * Searches of WIDE_K matches with their feature rows on the wide database
 * answer over 64 KiB a round (12 searches), and nothing else of theirs is
 * allocated (their results, query and encoding fit what a batch slot and
 * the encoder hold): so, after the same warm-up, every batch allocates its
 * answers buffer anew, at least once a round on each connection, where
 * keeping it would allocate nothing. */
#define KEPT_BYTES ((size_t)64 * 1024)
#define WIDE_K 16

static void test_answers_over_64_kib_not_kept(void **state) {
  (void)state;
  srv_counters_t counters;
  serve_rounds(1, WIDE_K, 1, 0, &counters);
  long rounds = (long)CONNECTIONS * COUNTED_ROUNDS;
  printf("%ld pipelined rounds (%d connections, %d a write, searches of %d matches with their %d features; at least "
         "%zu bytes of answers a round): %ld allocations by the server (%s), %.2f a round; %llu read batches in all\n",
         rounds, CONNECTIONS, PIPELINE, WIDE_K, ANIM_MAX_FEATURE_DIMS - 1, smallest_round, counted, ANIM_ALLOC_COUNTER,
         (double)counted / rounds, (unsigned long long)(counters.read_batches_lane + counters.read_batches_loop));
  assert_true(smallest_round > KEPT_BYTES); /* every batch's answers: over the limit */
  assert_true(counted >= rounds);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_no_allocation_per_pipelined_search),
                                     cmocka_unit_test(test_no_allocation_per_pipelined_pose_search),
                                     cmocka_unit_test(test_answers_over_64_kib_not_kept)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
