/*
 * test_metrics.c: end to end for the metrics endpoint (server/metrics.h).
 * Starts the real animserver with --metrics-port 0 on loopback, makes
 * traffic with the real client library, and reads the endpoint with a plain
 * blocking socket: HTTP refusals first, then readiness, then the values the
 * scrape reports against the traffic that was sent.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <poll.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "anim_client.h"
#include "frame.h"
#include "fixture.h"
#include "raw_client.h"
#include "server_proc.h"

#define TIMEOUT_MS 5000

static const char *const metrics_args[] = {"--metrics-host", "127.0.0.1", "--metrics-port", "0", NULL};

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int connect_port(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in addr = {0};
  addr.sin_family = AF_INET;
  addr.sin_port = htons((uint16_t)port);
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  if (connect(fd, (struct sockaddr *)&addr, sizeof addr) < 0) {
    close(fd);
    return -1;
  }
  return fd;
}

/* Reads until the server closes (or timeout_ms passes); a malloc'd, NUL-terminated buffer. */
static char *read_all(int fd, int timeout_ms, size_t *out_len) {
  size_t cap = 65536, len = 0;
  char *buf = malloc(cap + 1);
  double deadline = now_s() + timeout_ms * 1e-3;
  struct pollfd p = {fd, POLLIN, 0};
  while (now_s() < deadline) {
    if (poll(&p, 1, 50) <= 0) continue;
    if (len == cap) buf = realloc(buf, (cap *= 2) + 1);
    ssize_t n = recv(fd, buf + len, cap - len, 0);
    if (n <= 0) break;
    len += (size_t)n;
  }
  buf[len] = '\0';
  if (out_len) *out_len = len;
  return buf;
}

/* Sends raw bytes as a request; returns the status code and, when out_body
 * is not NULL, the body (malloc'd). -1 when nothing parseable came back. */
static int http_raw(int port, const char *request, size_t request_len, char **out_body) {
  int fd = connect_port(port);
  assert_true(fd >= 0);
  assert_int_equal(send(fd, request, request_len, 0), (ssize_t)request_len);
  char *reply = read_all(fd, TIMEOUT_MS, NULL);
  close(fd);
  int status = -1;
  if (sscanf(reply, "HTTP/1.1 %d ", &status) != 1) status = -1;
  char *body = strstr(reply, "\r\n\r\n");
  if (out_body) *out_body = strdup(body ? body + 4 : "");
  free(reply);
  return status;
}

static int http(int port, const char *method, const char *path, char **out_body) {
  char request[512];
  int n = snprintf(request, sizeof request, "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: test\r\n\r\n", method,
                   path);
  return http_raw(port, request, (size_t)n, out_body);
}

static char *scrape(int port) {
  char *body = NULL;
  assert_int_equal(http(port, "GET", "/metrics", &body), 200);
  return body;
}

/* The value of the sample whose name and labels are exactly series, or NAN. */
static double sample(const char *text, const char *series) {
  size_t n = strlen(series);
  for (const char *line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL)
    if (strncmp(line, series, n) == 0 && line[n] == ' ') return strtod(line + n + 1, NULL);
  return NAN;
}

static double scrape_one(int port, const char *series) {
  char *text = scrape(port);
  double v = sample(text, series);
  free(text);
  return v;
}

static anim_client_t *connect_client(const anim_test_server_t *server) {
  anim_client_t *client = anim_test_connect(server);
  return client;
}

/* Subscribes client to every character it owns, a frame every tick, and
 * reads n frames. */
static void subscribe_and_read(anim_client_t *client, int n) {
  anim_subscribe_options_t sub = {NULL, 0, 1, 1, ANIM_POSE_QUANTIZED, 0, 0};
  assert_int_equal(anim_client_subscribe(client, &sub, NULL, NULL, NULL, NULL, TIMEOUT_MS), 0);
  for (int i = 0; i < n; i++) {
    anim_stream_frame_t *frame = NULL;
    assert_int_equal(anim_client_next_frame(client, &frame, TIMEOUT_MS), 0);
    anim_stream_frame_free(frame);
  }
}

/* Histogram series of name with label (`type="ping"`, or "" for none):
 * buckets never decrease, +Inf equals _count, and _count is returned. */
static double check_histogram(const char *text, const char *name, const char *label) {
  static const char *const les[] = {"5e-05", "0.0001", "0.00025", "0.0005", "0.001", "0.0025", "0.005", "0.01",
                                    "0.025", "0.05",   "0.1",     "0.25",   "0.5",   "1",      "2",     "2.5",
                                    "+Inf"};
  char series[256];
  const char *sep = label[0] ? "," : "";
  double previous = 0;
  for (size_t i = 0; i < sizeof les / sizeof les[0]; i++) {
    snprintf(series, sizeof series, "animserver_%s_bucket{%s%sle=\"%s\"}", name, label, sep, les[i]);
    double v = sample(text, series);
    if (isnan(v)) fail_msg("missing %s", series);
    if (v < previous) fail_msg("%s = %g below the previous bucket's %g", series, v, previous);
    previous = v;
  }
  if (label[0]) snprintf(series, sizeof series, "animserver_%s_count{%s}", name, label);
  else snprintf(series, sizeof series, "animserver_%s_count", name);
  double count = sample(text, series);
  assert_true(count == previous);
  return count;
}

/* ---- invalid input first ------------------------------------------------------------ */

static void test_http_refusals(void **state) {
  anim_test_server_t server;
  int port;
  assert_int_equal(anim_test_server_start_metrics(&server, "metrics_http", metrics_args, &port), 0);
  assert_int_equal(http(port, "GET", "/nosuch", NULL), 404);
  assert_int_equal(http(port, "GET", "/", NULL), 404);
  assert_int_equal(http(port, "POST", "/metrics", NULL), 405);
  assert_int_equal(http(port, "DELETE", "/ready", NULL), 405);
  const char bad_line[] = "GET\r\n\r\n";
  assert_int_equal(http_raw(port, bad_line, strlen(bad_line), NULL), 400);
  const char bad_version[] = "GET /metrics SPDY/9\r\n\r\n";
  assert_int_equal(http_raw(port, bad_version, strlen(bad_version), NULL), 400);
  const char bad_header[] = "GET /metrics HTTP/1.1\r\nno colon here\r\n\r\n";
  assert_int_equal(http_raw(port, bad_header, strlen(bad_header), NULL), 400);
  const char nul[] = "GET /metrics HTTP/1.1\r\nX: a\0b\r\n\r\n";
  assert_int_equal(http_raw(port, nul, sizeof nul - 1, NULL), 400);

  /* A head over 4 KiB is refused (431) without waiting for its end... */
  size_t big = 16384;
  char *oversize = malloc(big);
  memset(oversize, 'a', big);
  memcpy(oversize, "GET /metrics HTTP/1.1\r\nX-Filler: ", 33);
  assert_int_equal(http_raw(port, oversize, big, NULL), 431);
  free(oversize);
  /* ... and the endpoint and the protocol port keep serving. */
  assert_int_equal(http(port, "GET", "/live", NULL), 200);
  anim_client_t *client = connect_client(&server);
  assert_int_equal(anim_client_ping(client, "x", 1, NULL, TIMEOUT_MS), 0);
  anim_client_close(client);

  /* A connection that sends nothing is closed after 5 s; others are served meanwhile. */
  int idle = connect_port(port);
  assert_true(idle >= 0);
  assert_int_equal(http(port, "GET", "/live", NULL), 200);
  double start = now_s();
  size_t len;
  char *nothing = read_all(idle, 8000, &len);
  double waited = now_s() - start;
  close(idle);
  free(nothing);
  assert_int_equal(len, 0);
  assert_true(waited > 4.0 && waited < 7.5);
  assert_int_equal(anim_test_server_stop(&server), 0);
}

/* A metrics port that cannot be bound stops the server at startup (exit 1, no "listening on"). */
static void test_metrics_port_in_use_fails_start(void **state) {
  anim_test_server_t first, second;
  int port;
  assert_int_equal(anim_test_server_start_metrics(&first, "metrics_first", metrics_args, &port), 0);
  char taken[16];
  snprintf(taken, sizeof taken, "%d", port);
  const char *const args[] = {"--metrics-port", taken, NULL};
  assert_int_equal(anim_test_server_start(&second, "metrics_second", args), -1);
  assert_int_equal(http(port, "GET", "/live", NULL), 200);
  assert_int_equal(anim_test_server_stop(&first), 0);
}

static void test_ready_and_live(void **state) {
  anim_test_server_t server;
  int port;
  char *body = NULL;
  assert_int_equal(anim_test_server_start_metrics(&server, "metrics_ready", metrics_args, &port), 0);
  assert_int_equal(http(port, "GET", "/ready", &body), 200);
  assert_string_equal(body, "ready\n");
  free(body);
  assert_int_equal(http(port, "GET", "/live?probe=1", &body), 200);
  assert_string_equal(body, "live\n");
  free(body);
  assert_true(scrape_one(port, "animserver_ready") == 1);
  assert_int_equal(anim_test_server_stop(&server), 0);

  /* No database: alive but not ready. */
  const char *const empty_args[] = {"--no-default-db", "--metrics-port", "0", NULL};
  assert_int_equal(anim_test_server_start_metrics(&server, "metrics_notready", empty_args, &port), 0);
  assert_int_equal(http(port, "GET", "/ready", &body), 503);
  free(body);
  assert_int_equal(http(port, "GET", "/live", NULL), 200);
  assert_true(scrape_one(port, "animserver_ready") == 0);
  assert_true(scrape_one(port, "animserver_databases") == 0);
  assert_int_equal(anim_test_server_stop(&server), 0);
}

/* ---- behaviour --------------------------------------------------------------------------- */

static void test_request_and_error_counters(void **state) {
  anim_test_server_t server;
  int port;
  assert_int_equal(anim_test_server_start_metrics(&server, "metrics_requests", metrics_args, &port), 0);
  char *text = scrape(port);
  assert_true(strstr(text, "# TYPE animserver_requests_total counter\n") != NULL);
  assert_true(strstr(text, "# HELP animserver_requests_total ") != NULL);
  assert_true(sample(text, "animserver_requests_total{type=\"ping\"}") == 0);
  assert_true(sample(text, "animserver_errors_total{code=\"ENOTFOUND\"}") == 0);
  assert_true(sample(text, "animserver_database_memory_bytes{database=\"default\"}") > 1000);
  assert_true(sample(text, "animserver_process_resident_memory_bytes") > 0);
  free(text);

  anim_client_t *client = connect_client(&server);
  enum { PINGS = 17 };
  for (int i = 0; i < PINGS; i++) assert_int_equal(anim_client_ping(client, "m", 1, NULL, TIMEOUT_MS), 0);
  uint64_t id;
  assert_int_equal(anim_client_characters_create(client, "nosuch", NULL, NULL, 1, &id, TIMEOUT_MS), ANIM_ENOTFOUND);
  assert_true(scrape_one(port, "animserver_connections") == 1);

  /* A frame that is not a Request: counted as type unknown, answered with EPROTO. */
  int fd = anim_test_server_raw_connect(&server);
  assert_true(fd >= 0);
  uint8_t garbage[8] = {0};
  size_t n = anim_varint_encode(3, garbage);
  memset(garbage + n, 0xff, 3);
  assert_int_equal(send(fd, garbage, n + 3, 0), (ssize_t)(n + 3));
  char reply[256];
  struct pollfd p = {fd, POLLIN, 0};
  assert_true(poll(&p, 1, TIMEOUT_MS) == 1 && recv(fd, reply, sizeof reply, 0) > 0);
  close(fd);

  text = scrape(port);
  assert_true(sample(text, "animserver_requests_total{type=\"ping\"}") == PINGS);
  assert_true(sample(text, "animserver_requests_total{type=\"create_characters\"}") == 1);
  assert_true(sample(text, "animserver_requests_total{type=\"unknown\"}") == 1);
  assert_true(sample(text, "animserver_errors_total{code=\"ENOTFOUND\"}") == 1);
  assert_true(sample(text, "animserver_errors_total{code=\"EPROTO\"}") == 1);
  assert_true(check_histogram(text, "request_duration_seconds", "type=\"ping\"") == PINGS);
  assert_true(check_histogram(text, "request_duration_seconds", "type=\"create_characters\"") == 1);
  /* A loopback ping answers well under 2.5 s; its sum is positive and below count * 2.5 s. */
  double sum = sample(text, "animserver_request_duration_seconds_sum{type=\"ping\"}");
  assert_true(sum > 0 && sum < PINGS * 2.5);
  assert_true(sample(text, "animserver_connections_accepted_total") == 2);
  free(text);
  anim_client_close(client);
  assert_int_equal(anim_test_server_stop(&server), 0);
}

static void test_characters_gauge_and_ticks(void **state) {
  anim_test_server_t server;
  int port;
  assert_int_equal(anim_test_server_start_metrics(&server, "metrics_characters", metrics_args, &port), 0);
  anim_client_t *client = connect_client(&server);
  uint64_t ids[5];
  assert_int_equal(anim_client_characters_create(client, "default", NULL, NULL, 5, ids, TIMEOUT_MS), 0);
  assert_true(scrape_one(port, "animserver_characters") == 5);
  assert_int_equal(anim_client_characters_destroy(client, ids, 2, TIMEOUT_MS), 0);
  assert_true(scrape_one(port, "animserver_characters") == 3);
  /* Subscribed for a while: frames and ticks are counted. */
  subscribe_and_read(client, 10);
  char *text = scrape(port);
  double ticks = sample(text, "animserver_ticks_total");
  assert_true(ticks >= 10);
  /* Every tick is in both histograms, and only those. */
  assert_true(check_histogram(text, "tick_lateness_seconds", "") == ticks);
  assert_true(check_histogram(text, "tick_work_seconds", "") == ticks);
  assert_true(sample(text, "animserver_stream_frames_sent_total") >= 10);
  assert_true(sample(text, "animserver_stream_bytes_total") > 0);
  assert_false(isnan(sample(text, "animserver_stream_frames_dropped_total")));
  assert_false(isnan(sample(text, "animserver_slow_subscribers_closed_total")));
  assert_false(isnan(sample(text, "animserver_ticks_late_total")));
  assert_false(isnan(sample(text, "animserver_ticks_skipped_total")));
  free(text);
  /* A connection's characters go with it (noticed on the server's next read). */
  anim_client_close(client);
  double characters = -1;
  for (int i = 0; i < 100 && characters != 0; i++) {
    characters = scrape_one(port, "animserver_characters");
    if (characters != 0) usleep(20000);
  }
  assert_true(characters == 0);
  assert_true(scrape_one(port, "animserver_connections") == 0);
  assert_int_equal(anim_test_server_stop(&server), 0);
}

static void test_scrape_during_crowd(void **state) {
  anim_test_server_t server;
  int port;
  assert_int_equal(anim_test_server_start_metrics(&server, "metrics_crowd", metrics_args, &port), 0);
  anim_client_t *client = connect_client(&server);
  enum { CROWD = 1000 };
  uint64_t *ids = malloc(CROWD * sizeof *ids);
  assert_int_equal(anim_client_characters_create(client, "default", NULL, NULL, CROWD, ids, TIMEOUT_MS), 0);
  double first_ticks = -1;
  for (int i = 0; i < 5; i++) {
    double start = now_s();
    char *text = scrape(port);
    double took = now_s() - start;
    assert_true(took < 1.0); /* the loop is not held up by the crowd */
    assert_true(sample(text, "animserver_characters") == CROWD);
    double ticks = sample(text, "animserver_ticks_total");
    if (i == 0) first_ticks = ticks;
    free(text);
    usleep(100000);
    if (i == 4) assert_true(ticks > first_ticks); /* ticking while scraped */
  }
  assert_int_equal(http(port, "GET", "/ready", NULL), 200);
  free(ids);
  anim_client_close(client);
  assert_int_equal(anim_test_server_stop(&server), 0);
}

static const char *const series[] = {
    "animserver_lane_items_total{lane=\"read_batches\",ran_on=\"loop\"}",
    "animserver_lane_items_total{lane=\"read_batches\",ran_on=\"pool\"}",
    "animserver_lane_items_total{lane=\"crowd\",ran_on=\"loop\"}",
    "animserver_lane_items_total{lane=\"crowd\",ran_on=\"pool\"}",
    "animserver_read_batches_total{sent_to=\"lane\"}",
    "animserver_read_batches_total{sent_to=\"loop\"}",
    "animserver_read_batch_searches_total",
    "animserver_read_batch_searches_decoded_total",
};
enum { SEARCHES = 16 };

/* Sends the SEARCHES searches of round r at once (cut_in >= 0: up to the
 * middle of search cut_in, a pause, then the rest) and reads their answers. */
static void send_searches(anim_test_raw_t *raw, int r, int cut_in) {
  uint8_t buf[SEARCHES * 64];
  size_t at = 0, cut = 0;
  for (int i = 0; i < SEARCHES; i++) {
    size_t start = at;
    at = anim_test_raw_append_search(buf, at, (uint64_t)(r * SEARCHES + i + 1), "default", (uint32_t)(r * 31 + i), 2);
    if (i == cut_in) cut = start + (at - start) / 2;
  }
  if (cut > 0) {
    assert_int_equal(send(raw->fd, buf, cut, 0), (ssize_t)cut);
    usleep(20000);
  }
  assert_int_equal(send(raw->fd, buf + cut, at - cut, 0), (ssize_t)(at - cut));
  for (int i = 0; i < SEARCHES; i++) {
    Animserver__ServerMessage *m = anim_test_raw_next(raw, TIMEOUT_MS);
    assert_non_null(m);
    assert_int_equal(m->response->body_case, ANIMSERVER__RESPONSE__BODY_SEARCH);
    animserver__server_message__free_unpacked(m, NULL);
  }
}

/* A search of a frame over the dispatcher's peek limit (4 KiB; a field
 * the decoder skips, inside the query, makes it 5 KB), answered. */
static void send_large_search(anim_test_raw_t *raw, uint64_t id) {
  static uint8_t filler[5000];
  /* protobuf-c keeps a length-delimited unknown field's length prefix in its data. */
  filler[0] = 0x80 | (sizeof filler - 2) % 128, filler[1] = (sizeof filler - 2) / 128;
  ProtobufCMessageUnknownField unknown = {.tag = 100, .wire_type = PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED,
                                          .len = sizeof filler, .data = filler};
  Animserver__FrameIndex from = ANIMSERVER__FRAME_INDEX__INIT;
  Animserver__SearchQuery q = ANIMSERVER__SEARCH_QUERY__INIT;
  Animserver__SearchRequest sr = ANIMSERVER__SEARCH_REQUEST__INIT;
  Animserver__Request r = ANIMSERVER__REQUEST__INIT;
  from.frame = 7;
  q.from_frame = &from, q.k = 2, q.base.n_unknown_fields = 1, q.base.unknown_fields = &unknown;
  sr.database = "default", sr.query = &q;
  r.id = id, r.body_case = ANIMSERVER__REQUEST__BODY_SEARCH, r.search = &sr;
  assert_true(animserver__request__get_packed_size(&r) > 4096);
  assert_int_equal(anim_test_raw_send(raw, &r), 0);
  Animserver__ServerMessage *m = anim_test_raw_next(raw, TIMEOUT_MS);
  assert_non_null(m);
  assert_int_equal(m->response->id, id);
  if (m->response->error) fail_msg("large search: %s", m->response->error->message);
  assert_int_equal(m->response->body_case, ANIMSERVER__RESPONSE__BODY_SEARCH);
  assert_int_equal(m->response->search->result->n_matches, 2);
  animserver__server_message__free_unpacked(m, NULL);
}

/* After `sends` sends of SEARCHES searches, each answered before the next:
 * every search answered in a read batch, the lane's items exactly the
 * batches sent to it, and with one read a send (no more batches than sends)
 * every batch, SEARCHES searches over the lane's minimum, sent to the lane.
 * Returns the batches sent to the lane. */
static double check_read_batches(int port, int sends) {
  char *text = scrape(port);
  double batches_loop = sample(text, series[0]), batches_pool = sample(text, series[1]);
  double to_lane = sample(text, series[4]), at_once = sample(text, series[5]), searches = sample(text, series[6]);
  double decoded = sample(text, series[7]);
  free(text);
  if (searches != sends * SEARCHES)
    fail_msg("%g searches answered in read batches, %d sent", searches, sends * SEARCHES);
  /* Plain searches of a small database are decoded by their batch, not on the loop. */
  if (decoded != searches) fail_msg("%g of %g searches in read batches decoded by their batch", decoded, searches);
  /* Every send arrives in at least one read, and a read with searches makes a batch. */
  if (to_lane + at_once < sends) fail_msg("%g + %g read batches for %d sends", to_lane, at_once, sends);
  if (batches_loop + batches_pool != to_lane)
    fail_msg("read batches: %g on the loop + %g on the pool, %g sent to the lane", batches_loop, batches_pool, to_lane);
  if (to_lane + at_once == sends && to_lane != sends)
    fail_msg("one read a send: %g batches sent to the lane and %g searched at once, expected %d and 0", to_lane,
             at_once, sends);
  print_message("  %d sends: %g read batches to the lane (%g run on the loop, %g on the pool), %g searched at once\n",
                sends, to_lane, batches_loop, batches_pool, at_once);
  return to_lane;
}

/* The lanes' items by who ran them (server/lane.h): loop + pool is every
 * item run. The searches pipelined in one read make a read batch
 * (dispatch.c), sent to the read_batches lane when it holds more than a
 * few. READS sends of 16 searches, each answered before the next, are READS
 * reads on loopback as a rule, and then READS batches, all for the lane: the
 * lane's items are held to the server's own count of batches sent to it
 * (exactly, however the kernel splits a send into reads), and to READS when
 * every send came as one read. One more send is cut inside a frame with a
 * pause, to read a split send as such. Each tick of a small crowd runs one
 * simulation chunk, and a subscriber's frame one encoding (at most one a
 * tick); the tick in flight may have run both without being counted yet.
 * The crowd's lane never runs items on the loop. */
static void test_lane_items(void **state) {
  anim_test_server_t server;
  int port;
  assert_int_equal(anim_test_server_start_metrics(&server, "metrics_lanes", metrics_args, &port), 0);
  char *text = scrape(port);
  assert_non_null(strstr(text, "# TYPE animserver_lane_items_total counter\n"));
  assert_non_null(strstr(text, "# HELP animserver_lane_items_total "));
  assert_non_null(strstr(text, "# TYPE animserver_read_batches_total counter\n"));
  assert_non_null(strstr(text, "# TYPE animserver_read_batch_searches_total counter\n"));
  for (int i = 0; i < 8; i++)
    if (sample(text, series[i]) != 0)
      fail_msg("%s = %g on a server that ran nothing", series[i], sample(text, series[i]));
  free(text);

  enum { READS = 12 };
  anim_test_raw_t raw;
  assert_int_equal(anim_test_raw_open(&raw, &server), 0);
  for (int r = 0; r < READS; r++) send_searches(&raw, r, -1);
  check_read_batches(port, READS);
  send_searches(&raw, READS, 8);
  double to_lane = check_read_batches(port, READS + 1);
  /* One over the peek's frame limit is decoded on the loop as it arrives:
   * answered in a read batch all the same, not decoded by it. */
  send_large_search(&raw, 5000);
  text = scrape(port);
  double searches = sample(text, series[6]), decoded = sample(text, series[7]);
  free(text);
  if (searches != (READS + 1) * SEARCHES + 1 || decoded != (READS + 1) * SEARCHES)
    fail_msg("after a 5 KB search: %g searches in read batches, %g decoded by their batch", searches, decoded);
  anim_test_raw_close(&raw);

  anim_client_t *client = connect_client(&server);
  uint64_t ids[5];
  assert_int_equal(anim_client_characters_create(client, "default", NULL, NULL, 5, ids, TIMEOUT_MS), 0);
  enum { FRAMES = 10 };
  subscribe_and_read(client, FRAMES);
  text = scrape(port);
  double ticks = sample(text, "animserver_ticks_total");
  double crowd_loop = sample(text, series[2]), crowd_pool = sample(text, series[3]), items = crowd_loop + crowd_pool;
  if (crowd_loop != 0 || items < ticks + FRAMES || items > 2 * (ticks + 1))
    fail_msg("crowd: %g items on the loop + %g on the pool for %g ticks and at least %d frames", crowd_loop, crowd_pool,
             ticks, FRAMES);
  /* The crowd's items are its own. */
  assert_true(sample(text, series[0]) + sample(text, series[1]) == to_lane);
  assert_true(sample(text, series[4]) == to_lane);
  print_message("  crowd: %g on the pool, %g ticks\n", crowd_pool, ticks);
  free(text);
  anim_client_close(client);
  assert_int_equal(anim_test_server_stop(&server), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_http_refusals),
      cmocka_unit_test(test_metrics_port_in_use_fails_start),
      cmocka_unit_test(test_ready_and_live),
      cmocka_unit_test(test_request_and_error_counters),
      cmocka_unit_test(test_characters_gauge_and_ticks),
      cmocka_unit_test(test_scrape_during_crowd),
      cmocka_unit_test(test_lane_items),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
