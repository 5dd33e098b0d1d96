/*
 * test_server.c: end to end. Starts the real animserver on an ephemeral
 * loopback port and talks to it with the real client library (and, for
 * byte-level abuse, a raw socket).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>
#include "anim_client.h"
#include "animserver.pb-c.h"
#include "frame.h"
#include "fixture.h"
#include "server_proc.h"

#define TIMEOUT_MS 5000

static void assert_server_serves(const anim_test_server_t *server) {
  anim_client_t *client = anim_test_connect(server);
  assert_int_equal(anim_client_ping(client, "still here", 10, NULL, TIMEOUT_MS), 0);
  anim_client_close(client);
}

/* Reads one framed ServerMessage from a blocking raw socket; NULL on EOF. */
static Animserver__ServerMessage *raw_read_message(int fd) {
  uint8_t header[ANIM_VARINT_MAX];
  size_t n = 0;
  uint64_t len = 0;
  for (;;) {
    if (n == sizeof header || recv(fd, header + n, 1, MSG_WAITALL) != 1) return NULL;
    n++;
    int used = anim_varint_decode(header, n, &len);
    if (used > 0) break;
    if (used < 0) return NULL;
  }
  uint8_t *body = malloc(len ? len : 1);
  if (len && recv(fd, body, len, MSG_WAITALL) != (ssize_t)len) {
    free(body);
    return NULL;
  }
  Animserver__ServerMessage *m = animserver__server_message__unpack(NULL, len, body);
  free(body);
  return m;
}

/* Waits for the server to close fd (recv returns 0 or an error). */
static int raw_wait_closed(int fd) {
  struct pollfd p = {fd, POLLIN, 0};
  char buf[256];
  for (int i = 0; i < 100; i++) {
    if (poll(&p, 1, 100) > 0) {
      ssize_t n = recv(fd, buf, sizeof buf, 0);
      if (n <= 0) return 1;
    }
  }
  return 0;
}

static int raw_send_request(int fd, Animserver__Request *request) {
  uint8_t buf[4096];
  size_t size = animserver__request__get_packed_size(request);
  size_t n = anim_varint_encode(size, buf);
  animserver__request__pack(request, buf + n);
  return send(fd, buf, n + size, 0) == (ssize_t)(n + size) ? 0 : -1;
}

/* ---- invalid input first ------------------------------------------------------------ */

static void test_oversize_frame_closes_only_that_connection(void **state) {
  anim_test_server_t server;
  const char *args[] = {"--max-frame-bytes", "1024", NULL};
  assert_int_equal(anim_test_server_start(&server, "oversize", args), 0);
  anim_client_t *bystander = anim_test_connect(&server);

  int fd = anim_test_server_raw_connect(&server);
  assert_true(fd >= 0);
  uint8_t header[ANIM_VARINT_MAX];
  size_t n = anim_varint_encode(1u << 30, header); /* claims 1 GiB */
  assert_int_equal(send(fd, header, n, 0), (ssize_t)n);
  Animserver__ServerMessage *m = raw_read_message(fd);
  assert_non_null(m);
  assert_non_null(m->response);
  assert_non_null(m->response->error);
  assert_int_equal(m->response->error->code, ANIMSERVER__ERROR_CODE__ERROR_TOO_LARGE);
  animserver__server_message__free_unpacked(m, NULL);
  assert_true(raw_wait_closed(fd));
  close(fd);

  assert_int_equal(anim_client_ping(bystander, "x", 1, NULL, TIMEOUT_MS), 0);
  anim_client_close(bystander);
  assert_int_equal(anim_test_server_stop(&server), 0);
}

static void test_garbage_length_closes_connection(void **state) {
  anim_test_server_t server;
  assert_int_equal(anim_test_server_start(&server, "garbage", NULL), 0);
  int fd = anim_test_server_raw_connect(&server);
  uint8_t garbage[12];
  memset(garbage, 0xff, sizeof garbage);
  assert_int_equal(send(fd, garbage, sizeof garbage, 0), (ssize_t)sizeof garbage);
  Animserver__ServerMessage *m = raw_read_message(fd);
  assert_non_null(m);
  assert_int_equal(m->response->error->code, ANIMSERVER__ERROR_CODE__ERROR_PROTOCOL);
  animserver__server_message__free_unpacked(m, NULL);
  assert_true(raw_wait_closed(fd));
  close(fd);
  assert_server_serves(&server);
  assert_int_equal(anim_test_server_stop(&server), 0);
}

static void test_undecodable_frame_is_answered_and_connection_lives(void **state) {
  anim_test_server_t server;
  assert_int_equal(anim_test_server_start(&server, "undecodable", NULL), 0);
  int fd = anim_test_server_raw_connect(&server);
  /* id = 77 (field 1), then a length-delimited field 5 claiming 100 bytes. */
  const uint8_t frame[] = {5, 0x08, 77, 0x2a, 100, 1};
  assert_int_equal(send(fd, frame, sizeof frame, 0), (ssize_t)sizeof frame);
  Animserver__ServerMessage *m = raw_read_message(fd);
  assert_non_null(m);
  assert_int_equal(m->response->id, 77);
  assert_int_equal(m->response->error->code, ANIMSERVER__ERROR_CODE__ERROR_PROTOCOL);
  animserver__server_message__free_unpacked(m, NULL);

  /* Same connection, valid request: still answered. */
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__PingRequest ping = ANIMSERVER__PING_REQUEST__INIT;
  request.id = 78;
  request.body_case = ANIMSERVER__REQUEST__BODY_PING;
  request.ping = &ping;
  assert_int_equal(raw_send_request(fd, &request), 0);
  m = raw_read_message(fd);
  assert_non_null(m);
  assert_int_equal(m->response->id, 78);
  assert_null(m->response->error);
  assert_int_equal(m->response->body_case, ANIMSERVER__RESPONSE__BODY_PING);
  animserver__server_message__free_unpacked(m, NULL);
  close(fd);
  assert_int_equal(anim_test_server_stop(&server), 0);
}

static void test_request_without_body_is_unsupported(void **state) {
  anim_test_server_t server;
  assert_int_equal(anim_test_server_start(&server, "nobody", NULL), 0);
  int fd = anim_test_server_raw_connect(&server);
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  request.id = 5;
  assert_int_equal(raw_send_request(fd, &request), 0);
  Animserver__ServerMessage *m = raw_read_message(fd);
  assert_non_null(m);
  assert_int_equal(m->response->id, 5);
  assert_int_equal(m->response->error->code, ANIMSERVER__ERROR_CODE__ERROR_UNSUPPORTED);
  animserver__server_message__free_unpacked(m, NULL);
  close(fd);
  assert_int_equal(anim_test_server_stop(&server), 0);
}

/* Many tiny unknown fields expand ~30x when protobuf-c decodes them: the
 * per-request budget must refuse that, and the server must carry on. */
static void test_decode_budget_refuses_expansion(void **state) {
  anim_test_server_t server;
  const char *args[] = {"--max-frame-bytes", "200000", "--decode-budget-bytes", "200000", NULL};
  assert_int_equal(anim_test_server_start(&server, "budget", args), 0);
  int fd = anim_test_server_raw_connect(&server);
  size_t body = 150000;
  uint8_t *frame = malloc(body + ANIM_VARINT_MAX);
  size_t n = anim_varint_encode(body, frame);
  frame[n] = 0x08; /* id = 9 */
  frame[n + 1] = 9;
  for (size_t i = 2; i + 1 < body; i += 2) {
    frame[n + i] = 0x78;     /* key of field 15, varint: unknown to Request */
    frame[n + i + 1] = 0x00; /* value 0 */
  }
  assert_int_equal(send(fd, frame, n + body, 0), (ssize_t)(n + body));
  free(frame);
  Animserver__ServerMessage *m = raw_read_message(fd);
  assert_non_null(m);
  assert_int_equal(m->response->id, 9);
  assert_non_null(m->response->error);
  assert_int_equal(m->response->error->code, ANIMSERVER__ERROR_CODE__ERROR_LIMIT);
  /* What to send less of, and the flag that sets the budget. */
  assert_non_null(strstr(m->response->error->message, "(unknown fields): 74999 of them"));
  assert_non_null(strstr(m->response->error->message, "--decode-budget-bytes"));
  animserver__server_message__free_unpacked(m, NULL);
  close(fd);
  assert_server_serves(&server);
  assert_int_equal(anim_test_server_stop(&server), 0);
}

static void test_connection_limit(void **state) {
  anim_test_server_t server;
  const char *args[] = {"--max-connections", "2", NULL};
  assert_int_equal(anim_test_server_start(&server, "maxconn", args), 0);
  anim_client_t *a = anim_test_connect(&server), *b = anim_test_connect(&server), *c = anim_test_connect(&server);
  assert_int_equal(anim_client_ping(a, "a", 1, NULL, TIMEOUT_MS), 0);
  assert_int_equal(anim_client_ping(b, "b", 1, NULL, TIMEOUT_MS), 0);
  int rc = anim_client_ping(c, "c", 1, NULL, TIMEOUT_MS);
  assert_int_equal(rc, ANIM_ELIMIT);
  anim_client_close(c);
  anim_client_close(a);
  /* A slot is free again once a client leaves. */
  anim_client_t *d = NULL;
  for (int i = 0; i < 50 && !d; i++) {
    d = anim_test_connect(&server);
    if (anim_client_ping(d, "d", 1, NULL, TIMEOUT_MS) != 0) {
      anim_client_close(d);
      d = NULL;
      usleep(20000);
    }
  }
  assert_non_null(d);
  anim_client_close(d);
  anim_client_close(b);
  assert_int_equal(anim_test_server_stop(&server), 0);
}

typedef struct {
  int done, status;
} wait_t;

static void on_search_done(anim_client_t *c, uint64_t id, int status, const anim_search_reply_t *reply, void *data) {
  wait_t *w = data;
  w->done = 1, w->status = status;
}

/* Requests on the thread pool count against --max-in-flight; one more is refused. */
static void test_in_flight_limit(void **state) {
  anim_test_server_t server;
  const char *args[] = {"--max-in-flight", "1", NULL};
  assert_int_equal(anim_test_server_start(&server, "inflight", args), 0);
  anim_client_t *client = anim_test_connect(&server);
  enum { N = 4096 };
  anim_query_t *q = calloc(N, sizeof *q);
  for (int i = 0; i < N; i++) {
    anim_query_init(&q[i]);
    q[i].from_frame = i % 4000, q[i].k = 8, q[i].method = ANIM_METHOD_BRUTE;
  }
  wait_t first = {0, 0}, second = {0, 0};
  assert_int_equal(anim_client_search_send(client, "default", q, N, on_search_done, &first, NULL), 0);
  assert_int_equal(anim_client_search_send(client, "default", q, N, on_search_done, &second, NULL), 0);
  free(q);
  /* 4,096 brute-force searches: seconds under the sanitizers on a loaded machine. */
  while (!first.done || !second.done) assert_int_equal(anim_client_poll(client, 60000), 0);
  assert_int_equal(first.status, 0);
  assert_int_equal(second.status, ANIM_ELIMIT);
  anim_client_close(client);
  assert_int_equal(anim_test_server_stop(&server), 0);
}

/* Answers far bigger than requests, to a client that does not read: past the
 * hard limit the server closes that connection, and serves the others. */
static void test_output_hard_limit(void **state) {
  anim_test_server_t server;
  const char *args[] = {"--output-soft-limit", "65536", "--output-hard-limit", "1048576", NULL};
  assert_int_equal(anim_test_server_start(&server, "hardlimit", args), 0);
  int fd = anim_test_server_raw_connect(&server);
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__PoseRequest pose = ANIMSERVER__POSE_REQUEST__INIT;
  Animserver__PoseOptions options = ANIMSERVER__POSE_OPTIONS__INIT;
  options.local = options.global = options.velocities = 1;
  pose.database = "default", pose.frame = 0, pose.count = 2000, pose.options = &options;
  request.body_case = ANIMSERVER__REQUEST__BODY_POSE;
  request.pose = &pose;
  /* Each answer is about 4 MB; the client reads nothing for a while. */
  for (int i = 0; i < 8; i++) {
    request.id = (uint64_t)i + 1;
    assert_int_equal(raw_send_request(fd, &request), 0);
  }
  usleep(500000);
  /* Then it drains: the server must have closed long before 8 answers (32 MB). */
  size_t total = 0;
  char buf[65536];
  struct pollfd p = {fd, POLLIN, 0};
  int closed = 0;
  while (!closed && poll(&p, 1, 5000) > 0) {
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) closed = 1;
    else total += (size_t)n;
  }
  assert_true(closed);
  assert_true(total < 16u << 20);
  close(fd);
  assert_server_serves(&server);
  assert_int_equal(anim_test_server_stop(&server), 0);
}

/* ---- behaviour ----------------------------------------------------------------------- */

static void test_hello_and_ping(void **state) {
  anim_test_server_t server;
  assert_int_equal(anim_test_server_start(&server, "hello", NULL), 0);
  anim_client_t *client = anim_test_connect(&server);
  anim_hello_info_t info;
  assert_int_equal(anim_client_hello(client, "test_server", &info, TIMEOUT_MS), 0);
  assert_int_equal(info.protocol_version, 1);
  assert_string_equal(info.server_version, ANIM_VERSION);
  assert_true(info.max_frame_bytes >= 1024);
  assert_true(info.connection_id >= 1);
  int has_ping = 0;
  for (int i = 0; i < info.ncapabilities; i++) has_ping |= strcmp(info.capabilities[i], "ping") == 0;
  assert_true(has_ping);
  uint64_t rtt = 0;
  assert_int_equal(anim_client_ping(client, "payload", 7, &rtt, TIMEOUT_MS), 0);
  assert_true(rtt > 0);
  anim_client_close(client);
  assert_int_equal(anim_test_server_stop(&server), 0);
}

typedef struct {
  int answered;
  int wrong;
  uint64_t first_id;
} pipeline_t;

static void on_pipelined_ping(anim_client_t *client, uint64_t id, int status, const anim_ping_result_t *result,
                              void *data) {
  pipeline_t *p = data;
  p->answered++;
  /* Each payload is its request's index: the response must echo it. */
  char expect[32];
  snprintf(expect, sizeof expect, "req-%llu", (unsigned long long)(id - p->first_id));
  if (status != 0 || result->payload_len != strlen(expect) || memcmp(result->payload, expect, result->payload_len))
    p->wrong++;
}

static void test_pipelined_requests_matched_by_id(void **state) {
  anim_test_server_t server;
  assert_int_equal(anim_test_server_start(&server, "pipeline", NULL), 0);
  anim_client_t *client = anim_test_connect(&server);
  pipeline_t p = {0, 0, 0};
  for (int i = 0; i < 500; i++) {
    char payload[32];
    snprintf(payload, sizeof payload, "req-%d", i);
    uint64_t id;
    assert_int_equal(anim_client_ping_send(client, payload, strlen(payload), on_pipelined_ping, &p, &id), 0);
    if (i == 0) p.first_id = id;
  }
  assert_int_equal(anim_client_pending(client), 500);
  while (p.answered < 500) assert_int_equal(anim_client_poll(client, TIMEOUT_MS), 0);
  assert_int_equal(p.wrong, 0);
  assert_int_equal(anim_client_pending(client), 0);
  anim_client_close(client);
  assert_int_equal(anim_test_server_stop(&server), 0);
}

typedef struct {
  int answered, wrong;
} big_ping_t;

static void on_big_ping(anim_client_t *client, uint64_t id, int status, const anim_ping_result_t *result, void *data) {
  big_ping_t *p = data;
  p->answered++;
  if (status != 0 || result->payload_len != 32768 || result->payload[0] != result->payload[32767]) p->wrong++;
}

/* A client that sends far more than the soft limit without reading: the
 * server pauses reading it, and once it reads, every request is answered. */
static void test_backpressure_pauses_and_resumes(void **state) {
  anim_test_server_t server;
  const char *args[] = {"--output-soft-limit", "262144", NULL};
  assert_int_equal(anim_test_server_start(&server, "backpressure", args), 0);
  anim_client_t *client = anim_test_connect(&server);
  big_ping_t p = {0, 0};
  enum { N = 300, SIZE = 32768 };
  char *payload = malloc(SIZE);
  for (int i = 0; i < N; i++) {
    memset(payload, 'a' + i % 26, SIZE);
    assert_int_equal(anim_client_ping_send(client, payload, SIZE, on_big_ping, &p, NULL), 0);
  }
  free(payload);
  /* ~10 MB queued against a 256 KiB soft limit; all must still be answered. */
  int loops = 0;
  while (anim_client_pending(client) > 0 && loops++ < 100000) {
    int rc = anim_client_poll(client, TIMEOUT_MS);
    assert_true(rc == 0);
  }
  assert_int_equal(anim_client_pending(client), 0);
  assert_int_equal(p.answered, N);
  assert_int_equal(p.wrong, 0);
  anim_client_close(client);
  assert_int_equal(anim_test_server_stop(&server), 0);
}

static void test_abrupt_disconnects(void **state) {
  anim_test_server_t server;
  assert_int_equal(anim_test_server_start(&server, "abrupt", NULL), 0);
  for (int i = 0; i < 20; i++) {
    /* Half a frame, then gone. */
    int fd = anim_test_server_raw_connect(&server);
    const uint8_t half[] = {50, 0x08, 1, 0x5a};
    send(fd, half, sizeof half, 0);
    close(fd);
    /* Requests in flight, then gone without reading. */
    anim_client_t *client = anim_test_connect(&server);
    for (int j = 0; j < 20; j++) anim_client_ping_send(client, "bye", 3, NULL, NULL, NULL);
    anim_client_close(client);
  }
  assert_server_serves(&server);
  assert_int_equal(anim_test_server_stop(&server), 0);
}

static void test_graceful_shutdown_with_clients(void **state) {
  anim_test_server_t server;
  assert_int_equal(anim_test_server_start(&server, "shutdown", NULL), 0);
  anim_client_t *client = anim_test_connect(&server);
  assert_int_equal(anim_client_ping(client, "x", 1, NULL, TIMEOUT_MS), 0);
  /* SIGTERM with a client connected: the server closes it and exits 0. */
  assert_int_equal(anim_test_server_stop(&server), 0);
  assert_int_equal(anim_client_ping(client, "x", 1, NULL, TIMEOUT_MS), ANIM_ECLOSED);
  anim_client_close(client);
}

static void test_connect_refused(void **state) {
  anim_test_server_t server;
  assert_int_equal(anim_test_server_start(&server, "refused", NULL), 0);
  int port = server.port;
  assert_int_equal(anim_test_server_stop(&server), 0);
  int err = 0;
  assert_null(anim_client_connect("127.0.0.1", port, NULL, &err));
  assert_int_equal(err, ANIM_ECONNECT);
  assert_null(anim_client_connect("127.0.0.1", 0, NULL, &err));
  assert_int_equal(err, ANIM_EINVAL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_oversize_frame_closes_only_that_connection),
      cmocka_unit_test(test_garbage_length_closes_connection),
      cmocka_unit_test(test_undecodable_frame_is_answered_and_connection_lives),
      cmocka_unit_test(test_request_without_body_is_unsupported),
      cmocka_unit_test(test_decode_budget_refuses_expansion),
      cmocka_unit_test(test_connection_limit),
      cmocka_unit_test(test_in_flight_limit),
      cmocka_unit_test(test_output_hard_limit),
      cmocka_unit_test(test_hello_and_ping),
      cmocka_unit_test(test_pipelined_requests_matched_by_id),
      cmocka_unit_test(test_backpressure_pauses_and_resumes),
      cmocka_unit_test(test_abrupt_disconnects),
      cmocka_unit_test(test_graceful_shutdown_with_clients),
      cmocka_unit_test(test_connect_refused),
  };
  return cmocka_run_group_tests_name("server", tests, NULL, NULL);
}
