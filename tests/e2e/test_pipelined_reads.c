/*
 * test_pipelined_reads.c: requests that arrive together, against the real
 * server over a raw socket. The server handles every frame of one read
 * before writing, times the read's answers with one clock read, answers
 * pings of one read with one wall-clock read, runs the searches of one read
 * as one batch (on the thread pool when there are enough of them) and writes
 * the answers straight to the socket (uv_try_write); these tests pin what must not change with
 * that: answers in request order with errors (undecodable frames, failing
 * requests, decode limits) mixed among them, frames split across reads
 * answered the same way, searches of a database too large for the batches'
 * own decoding answered as a lockstep reader gets them, and the metrics
 * still counting every answer. One server serves them all (with a data
 * directory, where the large database is written), each test on its own
 * raw connections: a test also shows that what came before (clients gone
 * with searches pending) left the server serving.
 */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "animserver.pb-c.h"
#include "data_dir.h"
#include "fixture.h"
#include "frame.h"
#include "offline/procgen.h"
#include "raw_client.h"
#include "server/request_search.h"

#define NREQUESTS 9
#define ANIM_TEST_MAX_DIMS 256

static anim_test_fixture_t fx;
static char dir[96]; /* the server's data directory: a database over SRV_SEARCH_LIGHT_ROWS frames goes there */

static int setup(void **state) {
  anim_test_data_dir_make(dir, sizeof dir, "pipelined");
  const char *args[] = {"--data-dir", dir, NULL};
  return anim_test_fixture_start(&fx, "pipelined_reads", args, 0);
}

static int teardown(void **state) {
  int rc = anim_test_fixture_stop(&fx);
  if (anim_test_data_dir_remove(dir) != 0) rc = -1;
  return rc;
}

/* A raw connection to the group's server. */
static void open_raw(anim_test_raw_t *c) { assert_int_equal(anim_test_raw_open(c, &fx.server), 0); }

static size_t append_ping(uint8_t *buf, size_t at, uint64_t id) {
  Animserver__Request r = ANIMSERVER__REQUEST__INIT;
  Animserver__PingRequest ping = ANIMSERVER__PING_REQUEST__INIT;
  ping.payload.data = (uint8_t *)"order";
  ping.payload.len = 5;
  r.id = id;
  r.body_case = ANIMSERVER__REQUEST__BODY_PING;
  r.ping = &ping;
  return anim_test_raw_append(buf, at, &r);
}

typedef struct {
  uint64_t id;
  int body;         /* expected Response body case, or 0 for an error */
  int error_code;   /* expected ErrorCode when body is 0 */
  size_t matches;   /* a search's expected matches */
} expected_t;

/* Nine requests, errors among them, and what each must be answered with, in order. */
static size_t build_mixed(uint8_t *buf, expected_t *expect) {
  size_t at = 0;
  at = append_ping(buf, at, 1);
  expect[0] = (expected_t){1, ANIMSERVER__RESPONSE__BODY_PING, 0, 0};
  at = anim_test_raw_append_search(buf, at, 2, "default", 10, 1);
  expect[1] = (expected_t){2, ANIMSERVER__RESPONSE__BODY_SEARCH, 0, 1};
  /* id 3, then a length-delimited field claiming more bytes than the frame has. */
  const uint8_t undecodable[] = {5, 0x08, 3, 0x2a, 100, 1};
  memcpy(buf + at, undecodable, sizeof undecodable);
  at += sizeof undecodable;
  expect[2] = (expected_t){3, 0, ANIMSERVER__ERROR_CODE__ERROR_PROTOCOL, 0};
  at = anim_test_raw_append_search(buf, at, 4, "no_such_db", 0, 1);
  expect[3] = (expected_t){4, 0, ANIMSERVER__ERROR_CODE__ERROR_NOT_FOUND, 0};
  at = append_ping(buf, at, 5);
  expect[4] = (expected_t){5, ANIMSERVER__RESPONSE__BODY_PING, 0, 0};
  at = anim_test_raw_append_search(buf, at, 6, "default", 0, 5000); /* k over the maximum: refused while decoding */
  expect[5] = (expected_t){6, 0, ANIMSERVER__ERROR_CODE__ERROR_LIMIT, 0};
  /* The most matches an answer has (packed in one pass too). */
  at = anim_test_raw_append_search(buf, at, 7, "default", 5, 1024);
  expect[6] = (expected_t){7, ANIMSERVER__RESPONSE__BODY_SEARCH, 0, 1024};
  at = anim_test_raw_append_search(buf, at, 8, "default", 1u << 30, 1); /* past the database's frames */
  expect[7] = (expected_t){8, 0, ANIMSERVER__ERROR_CODE__ERROR_OUT_OF_RANGE, 0};
  at = append_ping(buf, at, 9);
  expect[8] = (expected_t){9, ANIMSERVER__RESPONSE__BODY_PING, 0, 0};
  return at;
}

/* The next n answers on c are expect's, in order. */
static void expect_answers(anim_test_raw_t *c, const expected_t *expect, int n) {
  for (int i = 0; i < n; i++) {
    Animserver__ServerMessage *m = anim_test_raw_next(c, 5000);
    assert_non_null(m);
    assert_int_equal(m->kind_case, ANIMSERVER__SERVER_MESSAGE__KIND_RESPONSE);
    assert_int_equal(m->response->id, expect[i].id);
    if (expect[i].body) {
      assert_null(m->response->error);
      assert_int_equal(m->response->body_case, expect[i].body);
      if (expect[i].body == ANIMSERVER__RESPONSE__BODY_PING) {
        assert_int_equal(m->response->ping->payload.len, 5);
        assert_memory_equal(m->response->ping->payload.data, "order", 5);
        assert_true(m->response->ping->server_time_us > 0);
      } else {
        assert_int_equal(m->response->search->result->n_matches, expect[i].matches);
      }
    } else {
      assert_non_null(m->response->error);
      assert_int_equal(m->response->error->code, expect[i].error_code);
    }
    animserver__server_message__free_unpacked(m, NULL);
  }
}

/* A raw connection to the group's server, and the mixed requests in buf
 * (4 KiB) with their answers in expect (NREQUESTS): the requests' length. */
static size_t open_with_mixed(anim_test_raw_t *c, uint8_t *buf, expected_t *expect) {
  open_raw(c);
  return build_mixed(buf, expect);
}

static void test_one_read_answers_in_order_with_errors_mixed_in(void **state) {
  anim_test_raw_t c;
  uint8_t buf[4096];
  expected_t expect[NREQUESTS];
  size_t len = open_with_mixed(&c, buf, expect);
  for (int round = 0; round < 3; round++) { /* the connection's buffers are reused: again, same answers */
    assert_int_equal(send(c.fd, buf, len, 0), (ssize_t)len);
    expect_answers(&c, expect, NREQUESTS);
  }
  anim_test_raw_close(&c);
}

static void test_frames_split_across_reads(void **state) {
  anim_test_raw_t c;
  uint8_t buf[4096];
  expected_t expect[NREQUESTS];
  size_t len = open_with_mixed(&c, buf, expect);
  /* Pieces of 1, 2, ... 7 bytes, each its own segment (TCP_NODELAY on the
   * server; a pause so the server reads them apart): frames cut anywhere,
   * length prefixes included. */
  struct timespec pause = {0, 2000000};
  for (size_t at = 0, piece = 1; at < len; at += piece, piece = piece % 7 + 1) {
    size_t n = at + piece <= len ? piece : len - at;
    assert_int_equal(send(c.fd, buf + at, n, 0), (ssize_t)n);
    nanosleep(&pause, NULL);
  }
  expect_answers(&c, expect, NREQUESTS);
  anim_test_raw_close(&c);
}

/* Enough searches in one read for a batch on the thread pool (more than
 * one batch, even), pings and failing searches between them, and a second
 * read sent before the first is answered: every answer in request order. */
static void test_search_batches_keep_request_order(void **state) {
  anim_test_raw_t c;
  open_raw(&c);
  enum { N = 120 };
  static uint8_t buf[N * 64];
  static expected_t expect[N];
  size_t at = 0;
  for (int i = 0; i < N; i++) {
    uint64_t id = (uint64_t)i + 1;
    if (i % 7 == 3) {
      at = append_ping(buf, at, id);
      expect[i] = (expected_t){id, ANIMSERVER__RESPONSE__BODY_PING, 0, 0};
    } else if (i % 11 == 5) {
      at = anim_test_raw_append_search(buf, at, id, "default", 1u << 30, 1);
      expect[i] = (expected_t){id, 0, ANIMSERVER__ERROR_CODE__ERROR_OUT_OF_RANGE, 0};
    } else {
      uint32_t k = i % 5 == 0 ? 3 : 1;
      at = anim_test_raw_append_search(buf, at, id, "default", (uint32_t)(i * 37 % 500), k);
      expect[i] = (expected_t){id, ANIMSERVER__RESPONSE__BODY_SEARCH, 0, k};
    }
  }
  size_t half = 0; /* the end of the frame in the middle: two sends, two reads */
  for (size_t p = 0; p < at;) {
    uint64_t len = 0;
    int used = anim_varint_decode(buf + p, at - p, &len);
    assert_true(used > 0);
    p += (size_t)used + len;
    if (p >= at / 2 && !half) half = p;
  }
  assert_int_equal(send(c.fd, buf, half, 0), (ssize_t)half);
  assert_int_equal(send(c.fd, buf + half, at - half, 0), (ssize_t)(at - half));
  expect_answers(&c, expect, N);
  anim_test_raw_close(&c);
}

/* A client that goes away with searches pending: the server lets go of them and serves on. */
static void test_close_with_batches_pending(void **state) {
  static uint8_t buf[64 * 64];
  size_t at = 0;
  for (uint64_t id = 1; id <= 64; id++) at = anim_test_raw_append_search(buf, at, id, "default", (uint32_t)id, 4);
  for (int round = 0; round < 20; round++) {
    anim_test_raw_t c;
    open_raw(&c);
    assert_int_equal(send(c.fd, buf, at, 0), (ssize_t)at);
    anim_test_raw_close(&c);
  }
  anim_test_raw_t c;
  open_raw(&c);
  at = append_ping(buf, 0, 1);
  assert_int_equal(send(c.fd, buf, at, 0), (ssize_t)at);
  Animserver__ServerMessage *m = anim_test_raw_next(&c, 5000);
  assert_non_null(m);
  assert_int_equal(m->response->body_case, ANIMSERVER__RESPONSE__BODY_PING);
  animserver__server_message__free_unpacked(m, NULL);
  anim_test_raw_close(&c);
}

/* Sends request with field 1000 = 1 after it: the decoder skips it, the
 * dispatcher's peeks do not take the frame. */
static void send_with_unknown_field(anim_test_raw_t *c, const Animserver__Request *r) {
  size_t len = animserver__request__get_packed_size(r);
  uint8_t *frame = malloc(len + 3 + ANIM_VARINT_MAX);
  assert_non_null(frame);
  size_t at = (size_t)anim_varint_encode(len + 3, frame);
  animserver__request__pack(r, frame + at);
  const uint8_t field_1000[] = {0xc0, 0x3e, 1};
  memcpy(frame + at + len, field_1000, sizeof field_1000);
  at += len + sizeof field_1000;
  assert_int_equal(send(c->fd, frame, at, 0), (ssize_t)at);
  free(frame);
}

/* Pings are packed in one pass into room for a bound of their size: every
 * payload size whose answer's length prefix is one, two or three bytes, on
 * either side of the bound's own prefix, echoed intact. Each is sent as
 * clients send it (read from its bytes by the dispatcher's peek) and with
 * a field the decoder skips (decoded): both answered alike. */
static void test_ping_payload_sizes_echoed(void **state) {
  anim_test_raw_t c;
  open_raw(&c);
  static const size_t sizes[] = {0, 1, 60, 61, 62, 63, 64, 65, 100, 105, 110, 127, 128, 200, 16300, 16330, 16340, 16383,
                                 16384, 70000};
  enum { NSIZES = sizeof sizes / sizeof sizes[0] };
  uint8_t *payload = malloc(70000);
  assert_non_null(payload);
  for (size_t i = 0; i < 70000; i++) payload[i] = (uint8_t)(i * 131 + 7);
  for (size_t i = 0; i < NSIZES; i++) {
    Animserver__Request r = ANIMSERVER__REQUEST__INIT;
    Animserver__PingRequest ping = ANIMSERVER__PING_REQUEST__INIT;
    ping.payload.data = payload;
    ping.payload.len = sizes[i];
    r.id = UINT64_MAX - i; /* the longest id */
    r.body_case = ANIMSERVER__REQUEST__BODY_PING;
    r.ping = &ping;
    assert_int_equal(anim_test_raw_send(&c, &r), 0);
    send_with_unknown_field(&c, &r);
  }
  for (size_t i = 0; i < 2 * NSIZES; i++) {
    Animserver__ServerMessage *m = anim_test_raw_next(&c, 5000);
    assert_non_null(m);
    assert_int_equal(m->response->id, UINT64_MAX - i / 2);
    assert_int_equal(m->response->body_case, ANIMSERVER__RESPONSE__BODY_PING);
    assert_int_equal(m->response->ping->payload.len, sizes[i / 2]);
    if (sizes[i / 2]) assert_memory_equal(m->response->ping->payload.data, payload, sizes[i / 2]);
    assert_true(m->response->ping->server_time_us > 0);
    animserver__server_message__free_unpacked(m, NULL);
  }
  free(payload);
  anim_test_raw_close(&c);
}

/* A database's feature dimensions (and, when out_frames is not NULL, its frames), asked on c. */
static int feature_dims(anim_test_raw_t *c, const char *database, uint32_t *out_frames) {
  Animserver__Request r = ANIMSERVER__REQUEST__INIT;
  Animserver__DescribeDatabaseRequest d = ANIMSERVER__DESCRIBE_DATABASE_REQUEST__INIT;
  d.name = (char *)database;
  r.id = 999, r.body_case = ANIMSERVER__REQUEST__BODY_DESCRIBE_DATABASE, r.describe_database = &d;
  assert_int_equal(anim_test_raw_send(c, &r), 0);
  Animserver__ServerMessage *m = anim_test_raw_next(c, 5000);
  assert_non_null(m);
  assert_int_equal(m->response->body_case, ANIMSERVER__RESPONSE__BODY_DESCRIBE_DATABASE);
  int dims = (int)m->response->describe_database->summary->feature_dims;
  if (out_frames) *out_frames = m->response->describe_database->summary->frames;
  animserver__server_message__free_unpacked(m, NULL);
  return dims;
}

enum { NVARIANTS = 20 };

/* Search variant v of database as request id, its query frame moved by
 * shift: answers of every kind (matches, poses, explanations, features) and
 * refusals by the decoder and by the service. */
static size_t append_search_variant(uint8_t *buf, size_t at, uint64_t id, const char *database, int v, uint32_t shift,
                                    int dims, int unknown_field) {
  static float features[ANIM_TEST_MAX_DIMS];
  static char *walk[] = {"walk"}, *nope[] = {"no_such_tag"};
  for (int j = 0; j < dims; j++) features[j] = 0.1f * (float)((j * 7 + v) % 11) - 0.5f;
  Animserver__Vec2 points[3] = {ANIMSERVER__VEC2__INIT, ANIMSERVER__VEC2__INIT, ANIMSERVER__VEC2__INIT};
  Animserver__Vec2 *trajectory[3] = {&points[0], &points[1], &points[2]};
  for (int i = 0; i < 3; i++) points[i].x = 0.3f * (float)i, points[i].z = 0.8f * (float)(i + 1);
  Animserver__FrameIndex from = ANIMSERVER__FRAME_INDEX__INIT, current = ANIMSERVER__FRAME_INDEX__INIT;
  Animserver__SearchQuery q = ANIMSERVER__SEARCH_QUERY__INIT;
  Animserver__SearchRequest sr = ANIMSERVER__SEARCH_REQUEST__INIT;
  from.frame = (uint32_t)(37 * v + 5) + shift;
  q.from_frame = &from, q.k = (uint32_t)(v % 6 + 1);
  switch (v) {
  case 1: q.include_pose = 1; break;
  case 2: q.explain = 1; break;
  case 3: q.include_features = 1; break;
  case 4: q.from_frame = NULL, q.features = features, q.n_features = (size_t)dims; break;
  case 5: q.from_frame = NULL, q.features = features, q.n_features = (size_t)dims, q.raw_features = 1; break;
  case 6: q.trajectory_positions = trajectory, q.n_trajectory_positions = 3; break;
  case 7: q.tags = walk, q.n_tags = 1; break;
  case 8: q.tags = nope, q.n_tags = 1; break;                       /* refused by the service */
  case 9: q.method = ANIMSERVER__SEARCH_METHOD__SEARCH_BRUTE; break;
  case 10: q.method = ANIMSERVER__SEARCH_METHOD__SEARCH_BOXES; break;
  case 11: q.k = 0; break;                                           /* 0 means 1 */
  case 12: q.k = 5000; break;                                        /* refused while decoding */
  case 13: q.from_frame = NULL, q.features = features, q.n_features = (size_t)dims, features[2] = NAN; break;
  case 14: from.frame = 1u << 30; break;                             /* past the database's frames */
  case 15: current.frame = 40, q.current_frame = &current, q.transition_cost = 0.5f, q.ignore_surrounding = 10; break;
  case 16: q.from_frame = NULL, q.features = features, q.n_features = (size_t)dims - 1; break; /* wrong size */
  case 17: q.ignore_range_end = 20, q.explain = 1, q.include_pose = 1; break;
  /* Past a batch slot's 1 KiB lent to its response (dispatch.c): the
   * results fit and the features spill; the results alone spill. */
  case 18: q.k = 115, q.include_features = 1; break; /* results: 96 + 115 * 8 bytes */
  case 19: q.k = 300, q.explain = 1, q.include_features = 1; break;
  default: break;
  }
  sr.database = (char *)database, sr.query = &q;
  Animserver__Request r = ANIMSERVER__REQUEST__INIT;
  r.id = id, r.body_case = ANIMSERVER__REQUEST__BODY_SEARCH, r.search = &sr;
  uint8_t payload[2048];
  size_t len = animserver__request__get_packed_size(&r);
  assert_true(len + 3 <= sizeof payload);
  animserver__request__pack(&r, payload);
  if (unknown_field) { /* field 1000 = 1: the decoder skips it, the dispatcher's peek does not take the frame */
    const uint8_t field_1000[] = {0xc0, 0x3e, 1};
    memcpy(payload + len, field_1000, sizeof field_1000);
    len += sizeof field_1000;
  }
  at += (size_t)anim_varint_encode(len, buf + at);
  memcpy(buf + at, payload, len);
  return at + len;
}

/* The answer of m packed with id 0: two answers to the same question compare byte for byte. */
static uint8_t *packed_without_id(Animserver__ServerMessage *m, size_t *out_len) {
  m->response->id = 0;
  *out_len = animserver__server_message__get_packed_size(m);
  uint8_t *bytes = malloc(*out_len);
  assert_non_null(bytes);
  animserver__server_message__pack(m, bytes);
  return bytes;
}

/* Pipelined searches are decoded in their read's batch, off the loop, when
 * the dispatcher's peek recognizes them; the others (here: the same frames
 * with a field the decoder skips) are decoded on the loop as before. Both
 * ways must answer alike, successes and refusals: the same searches sent
 * both ways, in blocks and interleaved, compared byte for byte. */
static void test_searches_decoded_off_the_loop_answer_as_on_it(void **state) {
  anim_test_raw_t c;
  open_raw(&c);
  int dims = feature_dims(&c, "default", NULL);
  assert_true(dims > 1 && dims <= ANIM_TEST_MAX_DIMS);
  enum { N = 4 * NVARIANTS };
  static uint8_t buf[N * 400];
  size_t at = 0;
  /* Ids 1..N: the variants peeked, then not, then interleaved both ways. */
  for (int i = 0; i < NVARIANTS; i++) at = append_search_variant(buf, at, (uint64_t)i + 1, "default", i, 0, dims, 0);
  for (int i = 0; i < NVARIANTS; i++) at = append_search_variant(buf, at, (uint64_t)(NVARIANTS + i) + 1, "default", i, 0, dims, 1);
  for (int i = 0; i < 2 * NVARIANTS; i++)
    at = append_search_variant(buf, at, (uint64_t)(2 * NVARIANTS + i) + 1, "default", i / 2, 0, dims, i % 2);
  assert_true(at <= sizeof buf);
  assert_int_equal(send(c.fd, buf, at, 0), (ssize_t)at);
  static uint8_t *answers[N];
  static size_t lens[N];
  int errors = 0;
  for (int i = 0; i < N; i++) {
    Animserver__ServerMessage *m = anim_test_raw_next(&c, 5000);
    assert_non_null(m);
    assert_int_equal(m->response->id, (uint64_t)i + 1);
    errors += m->response->error != NULL;
    answers[i] = packed_without_id(m, &lens[i]);
    animserver__server_message__free_unpacked(m, NULL);
  }
  for (int v = 0; v < NVARIANTS; v++) {
    const int same[] = {v, NVARIANTS + v, 2 * NVARIANTS + 2 * v, 2 * NVARIANTS + 2 * v + 1};
    for (int j = 1; j < 4; j++) {
      if (lens[same[j]] != lens[same[0]] || memcmp(answers[same[j]], answers[same[0]], lens[same[0]]) != 0)
        fail_msg("search variant %d: answer %d differs from answer %d", v, same[j] + 1, same[0] + 1);
    }
  }
  assert_int_equal(errors, 4 * 5); /* variants 8, 12, 13, 14, 16, each way */
  for (int i = 0; i < N; i++) free(answers[i]);
  anim_test_raw_close(&c);
}

/* The default database resampled at this rate has more frames than
 * SRV_SEARCH_LIGHT_ROWS (50,578 of 50,000 at 640 Hz). */
#define LARGE_RATE 640.0f

/* Builds the default database at LARGE_RATE, puts it in the server's data
 * directory as `name` and loads it (asked on c): its frames. */
static uint32_t load_large_database(anim_test_raw_t *c, const char *name) {
  anim_database_t db;
  anim_build_options_t o;
  char err[256];
  anim_build_options_default(&o);
  o.frame_rate = LARGE_RATE;
  if (anim_procgen_database(&db, &o, err, sizeof err) != 0) fail_msg("the default database at %.0f Hz: %s", LARGE_RATE, err);
  if (db.nframes <= SRV_SEARCH_LIGHT_ROWS)
    fail_msg("the default database at %.0f Hz has %d frames, not over %d: raise LARGE_RATE", LARGE_RATE, db.nframes,
             SRV_SEARCH_LIGHT_ROWS);
  anim_test_data_dir_put_database(dir, &db, name);
  anim_database_free(&db);
  Animserver__Request r = ANIMSERVER__REQUEST__INIT;
  Animserver__LoadDatabaseRequest load = ANIMSERVER__LOAD_DATABASE_REQUEST__INIT;
  load.name = (char *)name;
  r.id = 1, r.body_case = ANIMSERVER__REQUEST__BODY_LOAD_DATABASE, r.load_database = &load;
  assert_int_equal(anim_test_raw_send(c, &r), 0);
  Animserver__ServerMessage *m = anim_test_raw_next(c, 120000);
  assert_non_null(m);
  if (m->response->error) fail_msg("load_database %s: %s", name, m->response->error->message);
  uint32_t frames = m->response->database_changed->summary->frames;
  animserver__server_message__free_unpacked(m, NULL);
  return frames;
}

static void unload_database(anim_test_raw_t *c, const char *name) {
  Animserver__Request r = ANIMSERVER__REQUEST__INIT;
  Animserver__UnloadDatabaseRequest unload = ANIMSERVER__UNLOAD_DATABASE_REQUEST__INIT;
  unload.name = (char *)name;
  r.id = 2, r.body_case = ANIMSERVER__REQUEST__BODY_UNLOAD_DATABASE, r.unload_database = &unload;
  assert_int_equal(anim_test_raw_send(c, &r), 0);
  Animserver__ServerMessage *m = anim_test_raw_next(c, 60000);
  assert_non_null(m);
  assert_null(m->response->error);
  animserver__server_message__free_unpacked(m, NULL);
}

/* Pipelined searches of a database over SRV_SEARCH_LIGHT_ROWS frames are
 * not taken by the dispatcher's peek: they are decoded on the loop, the
 * index's searches then join the read's batch and brute force and boxes go
 * to the pool alone (answered when done: out of request order; the others
 * keep it). Every variant, at several query frames, sent in one write:
 * every answer must be what a reader in lockstep gets, byte for byte. */
static void test_large_database_pipelined_answers_as_in_lockstep(void **state) {
  enum { ROUNDS = 8, N = ROUNDS * NVARIANTS };
  anim_test_raw_t steady, pipelined;
  open_raw(&steady);
  uint32_t frames = load_large_database(&steady, "large");
  int dims = feature_dims(&steady, "large", NULL);
  assert_true(dims > 1 && dims <= ANIM_TEST_MAX_DIMS);
  static uint8_t requests[N * 400];
  static size_t ends[N];
  size_t len = 0;
  for (int i = 0; i < N; i++) /* round r asks from (37 v + 5) + r frames / ROUNDS: across the whole database */
    ends[i] = len = append_search_variant(requests, len, (uint64_t)i + 1, "large", i % NVARIANTS,
                                          (uint32_t)(i / NVARIANTS) * (frames / ROUNDS), dims, 0);
  assert_true(len <= sizeof requests);
  static uint8_t *expected[N];
  static size_t expected_len[N];
  for (int i = 0; i < N; i++) { /* one request, then its answer */
    size_t from = i ? ends[i - 1] : 0;
    assert_int_equal(send(steady.fd, requests + from, ends[i] - from, 0), (ssize_t)(ends[i] - from));
    Animserver__ServerMessage *m = anim_test_raw_next(&steady, 10000);
    assert_non_null(m);
    assert_int_equal(m->response->id, (uint64_t)i + 1);
    expected[i] = packed_without_id(m, &expected_len[i]);
    animserver__server_message__free_unpacked(m, NULL);
  }
  open_raw(&pipelined);
  assert_int_equal(send(pipelined.fd, requests, len, 0), (ssize_t)len);
  static int seen[N];
  memset(seen, 0, sizeof seen);
  int errors = 0, out_of_order = 0;
  uint64_t last = 0, last_in_order = 0;
  for (int i = 0; i < N; i++) {
    Animserver__ServerMessage *m = anim_test_raw_next(&pipelined, 10000);
    if (!m) fail_msg("answer %d of %d missing", i + 1, N);
    uint64_t id = m->response->id;
    if (id < 1 || id > N || seen[id - 1]++) fail_msg("answer %d: id %llu unknown or answered twice", i + 1, (unsigned long long)id);
    out_of_order += id < last;
    last = id;
    int variant = (int)((id - 1) % NVARIANTS);
    if (variant != 9 && variant != 10) { /* the others keep request order among themselves */
      if (id < last_in_order)
        fail_msg("request %llu (variant %d) answered after request %llu", (unsigned long long)id, variant,
                 (unsigned long long)last_in_order);
      last_in_order = id;
    }
    errors += m->response->error != NULL;
    size_t n;
    uint8_t *got = packed_without_id(m, &n);
    if (n != expected_len[id - 1] || memcmp(got, expected[id - 1], n) != 0)
      fail_msg("request %llu (variant %d): the pipelined answer differs from the lockstep reader's (%zu and %zu bytes)",
               (unsigned long long)id, variant, n, expected_len[id - 1]);
    free(got);
    animserver__server_message__free_unpacked(m, NULL);
  }
  for (int i = 0; i < N; i++) free(expected[i]);
  printf("a database of %u frames: %d pipelined searches (%d refused) answered as in lockstep, %d answers (brute "
         "force and boxes, on the pool) before an earlier request's\n",
         frames, N, errors, out_of_order);
  assert_true(errors >= 5 * ROUNDS); /* variants 8, 12, 13, 14 and 16 */
  anim_test_raw_close(&pipelined);
  unload_database(&steady, "large");
  anim_test_raw_close(&steady);
}

/* A search of k matches with their poses (answers of kilobytes) from frame. */
static size_t append_pose_search(uint8_t *buf, size_t at, uint64_t id, uint32_t frame, uint32_t k) {
  Animserver__FrameIndex from = ANIMSERVER__FRAME_INDEX__INIT;
  Animserver__SearchQuery q = ANIMSERVER__SEARCH_QUERY__INIT;
  Animserver__SearchRequest sr = ANIMSERVER__SEARCH_REQUEST__INIT;
  Animserver__Request r = ANIMSERVER__REQUEST__INIT;
  from.frame = frame;
  q.from_frame = &from, q.k = k, q.include_pose = 1;
  sr.database = "default", sr.query = &q;
  r.id = id, r.body_case = ANIMSERVER__REQUEST__BODY_SEARCH, r.search = &sr;
  return anim_test_raw_append(buf, at, &r);
}

typedef struct {
  int fd;
  const uint8_t *bytes;
  size_t len;
} sender_t;

static void *send_all(void *arg) {
  sender_t *s = arg;
  for (size_t sent = 0; sent < s->len;) {
    ssize_t w = send(s->fd, s->bytes + sent, s->len - sent, MSG_NOSIGNAL);
    if (w <= 0) break;
    sent += (size_t)w;
  }
  return NULL;
}

/* A reader slower than the server: its answers wait queued in the server
 * (the socket full) while later batches are answered, and a search set
 * keeps its last answers buffer to write into again (dispatch.c), which it
 * must not do while that buffer still waits to be written. Every answer
 * must be what a reader in lockstep gets, byte for byte. */
static void test_a_slow_reader_gets_every_answer_intact(void **state) {
  /* Answers of a pose each (under a kilobyte): a batch's buffer is small
   * enough to be kept (64 KiB at most), and 16,000 of them (over 10 MB)
   * overflow what the sockets hold. */
  enum { N = 16000, K = 1, ROUND = 16 };
  static uint8_t requests[N * 64];
  static size_t ends[N];
  size_t len = 0;
  for (int i = 0; i < N; i++) ends[i] = len = append_pose_search(requests, len, (uint64_t)i + 1, (uint32_t)(i * 37 % 500), K);
  assert_true(len <= sizeof requests);
  static uint8_t *expected[N];
  static size_t expected_len[N];
  anim_test_raw_t steady, slow;
  open_raw(&steady);
  for (int i = 0; i < N; i += ROUND) { /* 16 in one write, then their answers */
    size_t from = i ? ends[i - 1] : 0, to = ends[i + ROUND - 1];
    assert_int_equal(send(steady.fd, requests + from, to - from, 0), (ssize_t)(to - from));
    for (int j = i; j < i + ROUND; j++) {
      Animserver__ServerMessage *m = anim_test_raw_next(&steady, 5000);
      assert_non_null(m);
      assert_int_equal(m->response->id, (uint64_t)j + 1);
      expected[j] = packed_without_id(m, &expected_len[j]);
      animserver__server_message__free_unpacked(m, NULL);
    }
  }
  anim_test_raw_close(&steady);
  open_raw(&slow);
  sender_t sender = {slow.fd, requests, len};
  pthread_t thread;
  assert_int_equal(pthread_create(&thread, NULL, send_all, &sender), 0);
  usleep(300000); /* the server answers into a socket nobody reads: its writes queue */
  size_t total = 0;
  for (int i = 0; i < N; i++) {
    Animserver__ServerMessage *m = anim_test_raw_next(&slow, 10000);
    if (!m) fail_msg("answer %d of %d missing", i + 1, N);
    assert_int_equal(m->response->id, (uint64_t)i + 1);
    size_t n;
    uint8_t *got = packed_without_id(m, &n);
    if (n != expected_len[i] || memcmp(got, expected[i], n) != 0)
      fail_msg("answer %d differs from the lockstep reader's (%zu and %zu bytes)", i + 1, n, expected_len[i]);
    total += n;
    free(got);
    free(expected[i]);
    animserver__server_message__free_unpacked(m, NULL);
  }
  pthread_join(thread, NULL);
  anim_test_raw_close(&slow);
  printf("a slow reader: %d answers, %zu bytes, each as a lockstep reader got it\n", N, total);
}

/* The server's request count, asked on c (request id). */
static uint64_t requests_counted(anim_test_raw_t *c, uint64_t id) {
  Animserver__Request r = ANIMSERVER__REQUEST__INIT;
  Animserver__ServerStatsRequest stats = ANIMSERVER__SERVER_STATS_REQUEST__INIT;
  r.id = id;
  r.body_case = ANIMSERVER__REQUEST__BODY_SERVER_STATS;
  r.server_stats = &stats;
  assert_int_equal(anim_test_raw_send(c, &r), 0);
  Animserver__ServerMessage *m = anim_test_raw_next(c, 5000);
  assert_non_null(m);
  assert_int_equal(m->response->id, id);
  assert_int_equal(m->response->body_case, ANIMSERVER__RESPONSE__BODY_SERVER_STATS);
  uint64_t requests = m->response->server_stats->requests;
  animserver__server_message__free_unpacked(m, NULL);
  return requests;
}

/* Latencies of a read's answers are recorded at its end: every answer is
 * counted (read on the same connection before and after; nothing else
 * talks to the server meanwhile). */
static void test_stats_count_every_pipelined_answer(void **state) {
  anim_test_raw_t c;
  open_raw(&c);
  uint64_t before = requests_counted(&c, 1000);
  uint8_t buf[8192];
  size_t at = 0;
  for (uint64_t id = 1; id <= 200; id++) at = append_ping(buf, at, id);
  assert_int_equal(send(c.fd, buf, at, 0), (ssize_t)at);
  for (uint64_t id = 1; id <= 200; id++) {
    Animserver__ServerMessage *m = anim_test_raw_next(&c, 5000);
    assert_non_null(m);
    assert_int_equal(m->response->id, id);
    animserver__server_message__free_unpacked(m, NULL);
  }
  assert_int_equal(requests_counted(&c, 1001) - before, 201); /* every ping, and this request */
  anim_test_raw_close(&c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_one_read_answers_in_order_with_errors_mixed_in),
      cmocka_unit_test(test_frames_split_across_reads),
      cmocka_unit_test(test_search_batches_keep_request_order),
      cmocka_unit_test(test_searches_decoded_off_the_loop_answer_as_on_it),
      cmocka_unit_test(test_close_with_batches_pending),
      cmocka_unit_test(test_ping_payload_sizes_echoed),
      cmocka_unit_test(test_stats_count_every_pipelined_answer),
      cmocka_unit_test(test_a_slow_reader_gets_every_answer_intact),
      cmocka_unit_test(test_large_database_pipelined_answers_as_in_lockstep),
  };
  return cmocka_run_group_tests_name("pipelined_reads", tests, setup, teardown);
}
