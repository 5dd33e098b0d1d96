/*
 * test_reconnect.c: the client library's reconnection, end to end: the real
 * server is killed (SIGKILL) under a live client and a new one started on the
 * same port, as when an instance behind a load balancer dies and another
 * takes its place.
 *
 * Options first (off by default: a lost connection stays lost, as before).
 * Then: LOST with the pending request failed once; RESTORED within a bounded
 * wait, characters and a subscription re-created inside the event, frames
 * from the new server; a blocking call made during the outage waits for the
 * connection; the same through the caller's own poll loop; the delay between attempts grows; GAVE_UP after the attempts
 * allowed; an auth-token server gets the token again, one with another
 * token makes the client give up. Waits are bounded and
 * say what they waited for; no wall-clock performance bound.
 */
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>
#include "anim_client.h"
#include "server_proc.h"

#define TIMEOUT_MS 10000
/* Longest wait for an event that only needs the loopback and a server start. */
#define EVENT_WAIT_MS 15000
#define MAX_EVENTS 256

typedef struct {
  int lost, restored, attempts_failed, gave_up;
  int lost_status, gave_up_status;
  uint64_t lost_us, attempt_us[MAX_EVENTS];
  /* RESTORED re-creates characters and a subscription when asked. */
  int recreate, create_rc, subscribe_rc;
  uint64_t ids[2], subscription;
  /* Frames seen after RESTORED, and whether any showed another character. */
  int frames, stray_poses;
} events_t;

typedef struct {
  int calls, status;
} ping_seen_t;

static uint64_t now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000u + (uint64_t)t.tv_nsec / 1000u;
}

static void on_frame(anim_client_t *client, const anim_stream_frame_t *frame, void *data) {
  events_t *ev = data;
  if (!ev->restored) return;
  ev->frames++;
  for (int i = 0; i < frame->nposes; i++)
    if (frame->poses[i].character != ev->ids[0] && frame->poses[i].character != ev->ids[1]) ev->stray_poses++;
}

static void on_connection(anim_client_t *client, int event, int status, void *data) {
  events_t *ev = data;
  switch (event) {
  case ANIM_CONNECTION_LOST:
    ev->lost++, ev->lost_status = status, ev->lost_us = now_us();
    break;
  case ANIM_CONNECTION_ATTEMPT_FAILED:
    if (ev->attempts_failed < MAX_EVENTS) ev->attempt_us[ev->attempts_failed] = now_us();
    ev->attempts_failed++;
    break;
  case ANIM_CONNECTION_GAVE_UP:
    ev->gave_up++, ev->gave_up_status = status;
    break;
  case ANIM_CONNECTION_RESTORED:
    ev->restored++;
    if (!ev->recreate) break;
    /* What docs/client-c.md shows: the new server knows nothing, so build it again. */
    anim_character_placement_t place[2] = {{0.0f, 0.0f, 0.0f, -1}, {3.0f, 0.0f, 0.0f, -1}};
    ev->create_rc = anim_client_characters_create(client, "default", NULL, place, 2, ev->ids, TIMEOUT_MS);
    anim_subscribe_options_t sub = {NULL, 0, 1, 1, ANIM_POSE_QUANTIZED, 0, 0};
    ev->subscribe_rc = anim_client_subscribe(client, &sub, on_frame, ev, &ev->subscription, NULL, TIMEOUT_MS);
    break;
  default:
    fail_msg("unknown connection event %d", event);
  }
}

static void on_pong(anim_client_t *client, uint64_t id, int status, const anim_ping_result_t *result, void *data) {
  ping_seen_t *seen = data;
  seen->calls++;
  seen->status = status;
}

/* Polls until *flag >= want; fails naming what it waited for. */
static void poll_until(anim_client_t *client, const int *flag, int want, const char *what) {
  uint64_t deadline = now_us() + (uint64_t)EVENT_WAIT_MS * 1000u;
  while (*flag < want) {
    if (now_us() > deadline) fail_msg("no %s within %d ms (have %d, want %d)", what, EVENT_WAIT_MS, *flag, want);
    anim_client_poll(client, 20);
  }
}

/* A server on a fixed port, so a successor can take the same address. */
static void start_on(anim_test_server_t *server, int port, const char *token) {
  char port_arg[16];
  snprintf(port_arg, sizeof port_arg, "%d", port);
  const char *plain[] = {"--port", port_arg, NULL};
  const char *with_token[] = {"--port", port_arg, "--auth-token", token, NULL};
  assert_int_equal(anim_test_server_start(server, "reconnect", token ? with_token : plain), 0);
  assert_int_equal(server->port, port);
}

static anim_client_t *connect_to(int port, events_t *ev, int max_attempts, int initial_ms, int max_ms,
                                 const char *token) {
  anim_client_options_t options = {0};
  options.auth_token = token;
  options.reconnect = 1;
  options.reconnect_initial_ms = initial_ms;
  options.reconnect_max_ms = max_ms;
  options.reconnect_max_attempts = max_attempts;
  options.on_connection = on_connection;
  options.connection_data = ev;
  int err;
  anim_client_t *client = anim_client_connect("127.0.0.1", port, &options, &err);
  if (!client) fail_msg("connect: %s", anim_strerror(err));
  return client;
}

static int free_port(void) {
  int port = anim_test_free_port();
  if (port <= 0) fail_msg("no free loopback port");
  return port;
}

/* ---- off by default ---------------------------------------------------------------- */

static void test_without_reconnect_stays_closed(void **state) {
  int port = free_port();
  anim_test_server_t server;
  start_on(&server, port, NULL);
  int err;
  anim_client_t *client = anim_client_connect("127.0.0.1", port, NULL, &err);
  assert_non_null(client);
  assert_int_equal(anim_client_ping(client, "a", 1, NULL, TIMEOUT_MS), 0);
  assert_int_equal(anim_client_next_timeout(client), -1);
  assert_int_equal(anim_test_server_kill(&server), 0);
  uint64_t deadline = now_us() + (uint64_t)EVENT_WAIT_MS * 1000u;
  int rc;
  while ((rc = anim_client_poll(client, 20)) == 0 || rc == ANIM_ETIMEDOUT)
    if (now_us() > deadline) fail_msg("the client did not see the server die");
  assert_int_equal(rc, ANIM_ECLOSED);
  assert_int_equal(anim_client_connected(client), 0);
  /* A successor on the same port changes nothing: the client stays closed. */
  start_on(&server, port, NULL);
  assert_int_equal(anim_client_ping(client, "a", 1, NULL, 200), ANIM_ECLOSED);
  assert_int_equal(anim_client_process(client), ANIM_ECLOSED);
  assert_int_equal(anim_client_connected(client), 0);
  anim_client_close(client);
  assert_int_equal(anim_test_server_stop(&server), 0);
}

/* ---- kill, restart, re-create ------------------------------------------------------------ */

static void test_kill_and_restore(void **state) {
  int port = free_port();
  anim_test_server_t server;
  start_on(&server, port, NULL);
  events_t ev = {0};
  anim_client_t *client = connect_to(port, &ev, 0, 20, 200, NULL);
  assert_int_equal(anim_client_connected(client), 1);
  uint64_t first[3];
  assert_int_equal(anim_client_characters_create(client, "default", NULL, NULL, 3, first, TIMEOUT_MS), 0);
  anim_subscribe_options_t sub = {NULL, 0, 1, 1, ANIM_POSE_FLOAT, 0, 0};
  assert_int_equal(anim_client_subscribe(client, &sub, NULL, NULL, NULL, NULL, TIMEOUT_MS), 0);
  anim_stream_frame_t *frame;
  assert_int_equal(anim_client_next_frame(client, &frame, TIMEOUT_MS), 0);
  anim_stream_frame_free(frame);

  /* The server dies with a request on its way. */
  assert_int_equal(anim_test_server_kill(&server), 0);
  ping_seen_t pending = {0};
  assert_int_equal(anim_client_ping_send(client, "p", 1, on_pong, &pending, NULL), 0);
  poll_until(client, &ev.lost, 1, "LOST event after the kill");
  assert_int_equal(ev.lost, 1);
  assert_int_equal(ev.lost_status, ANIM_ECLOSED);
  assert_int_equal(pending.calls, 1);
  assert_int_equal(pending.status, ANIM_ECLOSED);
  assert_int_equal(anim_client_connected(client), 0);
  assert_int_equal(anim_client_pending(client), 0);
  /* Queued frames of the lost subscription are gone with it. */
  assert_int_equal(anim_client_next_frame(client, &frame, 0), ANIM_ETIMEDOUT);
  assert_int_equal(anim_client_next_frame(client, &frame, 50), ANIM_ECLOSED);
  assert_null(frame);
  /* While reconnecting, requests are refused and their callbacks never run. */
  ping_seen_t refused = {0};
  assert_int_equal(anim_client_ping_send(client, "r", 1, on_pong, &refused, NULL), ANIM_ECLOSED);
  assert_int_equal(anim_client_process(client), ANIM_ECLOSED);
  int next = anim_client_next_timeout(client);
  assert_true(next >= 0 && next <= 200);
  /* Nobody listens: attempts fail until the successor starts. */
  poll_until(client, &ev.attempts_failed, 2, "failed reconnection attempts while no server listens");
  assert_int_equal(ev.restored, 0);

  ev.recreate = 1;
  start_on(&server, port, NULL);
  poll_until(client, &ev.restored, 1, "RESTORED event after the successor started");
  assert_int_equal(ev.restored, 1);
  assert_int_equal(ev.lost, 1);
  assert_int_equal(ev.create_rc, 0);
  assert_int_equal(ev.subscribe_rc, 0);
  assert_int_equal(anim_client_connected(client), 1);
  assert_int_equal(anim_client_next_timeout(client), -1);
  assert_int_equal(refused.calls, 0);
  assert_int_equal(pending.calls, 1);

  /* The new server streams the characters made in the event, and only them. */
  poll_until(client, &ev.frames, 5, "stream frames from the new server");
  assert_int_equal(ev.stray_poses, 0);
  anim_character_state_t *st = NULL;
  assert_int_equal(anim_client_character_state(client, ev.ids[1], 0, &st, TIMEOUT_MS), 0);
  anim_character_state_free(st);
  anim_server_stats_t stats;
  assert_int_equal(anim_client_server_stats(client, &stats, TIMEOUT_MS), 0);
  assert_int_equal(stats.characters, 2);

  anim_client_close(client);
  assert_int_equal(anim_test_server_stop(&server), 0);
}

/* A blocking call made while the server is away waits for the connection. */
static void test_blocking_call_waits_for_connection(void **state) {
  int port = free_port();
  anim_test_server_t server;
  start_on(&server, port, NULL);
  events_t ev = {0};
  anim_client_t *client = connect_to(port, &ev, 0, 20, 100, NULL);
  assert_int_equal(anim_test_server_kill(&server), 0);
  poll_until(client, &ev.lost, 1, "LOST event after the kill");
  /* No server: the call gives up at its own timeout, never sent. */
  assert_int_equal(anim_client_ping(client, "w", 1, NULL, 150), ANIM_ECLOSED);
  assert_true(ev.attempts_failed >= 1);
  start_on(&server, port, NULL);
  assert_int_equal(anim_client_ping(client, "w", 1, NULL, EVENT_WAIT_MS), 0);
  assert_int_equal(ev.restored, 1);
  anim_client_close(client);
  assert_int_equal(anim_test_server_stop(&server), 0);
}

/* The caller's own loop: poll() on anim_client_fd() (-1 between attempts, a
 * connecting socket wanting POLLOUT during one) no longer than
 * anim_client_next_timeout(), then anim_client_process(). */
static void own_loop_until(anim_client_t *client, const int *flag, int want, const char *what, int *saw_no_fd,
                           int *saw_connecting) {
  uint64_t deadline = now_us() + (uint64_t)EVENT_WAIT_MS * 1000u;
  while (*flag < want) {
    if (now_us() > deadline) fail_msg("no %s within %d ms (have %d, want %d)", what, EVENT_WAIT_MS, *flag, want);
    int fd = anim_client_fd(client);
    if (fd < 0) ++*saw_no_fd;
    else if (!anim_client_connected(client) && anim_client_wants_write(client)) ++*saw_connecting;
    struct pollfd p = {fd, (short)(POLLIN | (anim_client_wants_write(client) ? POLLOUT : 0)), 0};
    int wait = anim_client_next_timeout(client);
    if (wait < 0 || wait > 50) wait = 50;
    poll(&p, 1, wait);
    anim_client_process(client);
  }
}

static void test_own_poll_loop(void **state) {
  int port = free_port();
  anim_test_server_t server;
  start_on(&server, port, NULL);
  events_t ev = {0};
  anim_client_t *client = connect_to(port, &ev, 0, 20, 100, NULL);
  int saw_no_fd = 0, saw_connecting = 0;
  assert_int_equal(anim_test_server_kill(&server), 0);
  own_loop_until(client, &ev.lost, 1, "LOST event in the caller's loop", &saw_no_fd, &saw_connecting);
  own_loop_until(client, &ev.attempts_failed, 2, "failed attempts in the caller's loop", &saw_no_fd,
                 &saw_connecting);
  assert_true(saw_no_fd > 0); /* between attempts there is no socket to poll */
  ev.recreate = 1;
  start_on(&server, port, NULL);
  own_loop_until(client, &ev.restored, 1, "RESTORED event in the caller's loop", &saw_no_fd, &saw_connecting);
  assert_int_equal(ev.create_rc, 0);
  assert_int_equal(ev.subscribe_rc, 0);
  own_loop_until(client, &ev.frames, 3, "stream frames in the caller's loop", &saw_no_fd, &saw_connecting);
  assert_int_equal(ev.stray_poses, 0);
  assert_true(anim_client_fd(client) >= 0);
  anim_client_close(client);
  assert_int_equal(anim_test_server_stop(&server), 0);
}

/* ---- backoff and giving up -------------------------------------------------------------- */

#define BACKOFF_INITIAL_MS 10
#define BACKOFF_MAX_MS 160

static void test_backoff_grows(void **state) {
  int port = free_port();
  anim_test_server_t server;
  start_on(&server, port, NULL);
  events_t ev = {0};
  anim_client_t *client = connect_to(port, &ev, 0, BACKOFF_INITIAL_MS, BACKOFF_MAX_MS, NULL);
  assert_int_equal(anim_test_server_kill(&server), 0);
  poll_until(client, &ev.lost, 1, "LOST event after the kill");
  /* 1.5 s with no server: attempts never come sooner than the backoff's
   * lower bound (half the doubled delay), so they thin out. */
  uint64_t end = now_us() + 1500000u;
  while (now_us() < end) anim_client_poll(client, 50);
  assert_true(ev.attempts_failed >= 4); /* it kept trying */
  int n = ev.attempts_failed < MAX_EVENTS ? ev.attempts_failed : MAX_EVENTS;
  uint64_t previous = ev.lost_us;
  for (int k = 0; k < n; k++) {
    uint64_t delay_ms = BACKOFF_INITIAL_MS;
    for (int i = 0; i < k && delay_ms < BACKOFF_MAX_MS; i++) delay_ms *= 2;
    if (delay_ms > BACKOFF_MAX_MS) delay_ms = BACKOFF_MAX_MS;
    uint64_t gap = ev.attempt_us[k] - previous, floor_us = delay_ms * 1000u / 2 - 2000u; /* 2 ms slack */
    if (gap < floor_us)
      fail_msg("attempt %d came %llu us after the previous one, sooner than the backoff's %llu us", k + 1,
               (unsigned long long)gap, (unsigned long long)floor_us);
    previous = ev.attempt_us[k];
  }
  /* Bounded by those floors: 5, 10, 20, 40, then 80 ms apart (12 fit in 1.5 s with room). */
  assert_true(ev.attempts_failed <= 20);
  assert_int_equal(ev.gave_up, 0);
  anim_client_close(client);
}

static void test_gives_up(void **state) {
  int port = free_port();
  anim_test_server_t server;
  start_on(&server, port, NULL);
  events_t ev = {0};
  anim_client_t *client = connect_to(port, &ev, 3, 10, 40, NULL);
  assert_int_equal(anim_test_server_kill(&server), 0);
  poll_until(client, &ev.gave_up, 1, "GAVE_UP event after 3 failed attempts");
  assert_int_equal(ev.attempts_failed, 3);
  assert_int_equal(ev.gave_up_status, ANIM_ECONNECT);
  /* Given up: no more attempts, every call refused at once, nothing to wait for. */
  for (int i = 0; i < 5; i++) assert_int_equal(anim_client_poll(client, 20), ANIM_ECLOSED);
  assert_int_equal(anim_client_ping(client, "g", 1, NULL, 100), ANIM_ECLOSED);
  assert_int_equal(anim_client_process(client), ANIM_ECLOSED);
  assert_int_equal(anim_client_next_timeout(client), -1);
  assert_int_equal(ev.attempts_failed, 3);
  assert_int_equal(ev.gave_up, 1);
  assert_int_equal(ev.restored, 0);
  anim_client_close(client);
}

/* ---- authentication --------------------------------------------------------------------- */

static void test_auth_token_sent_again(void **state) {
  const char *token = "reconnect-token-7";
  int port = free_port();
  anim_test_server_t server;
  start_on(&server, port, token);
  events_t ev = {0};
  anim_client_t *client = connect_to(port, &ev, 0, 20, 200, token);
  assert_int_equal(anim_client_hello(client, "test", NULL, TIMEOUT_MS), 0);
  uint64_t id;
  assert_int_equal(anim_client_characters_create(client, "default", NULL, NULL, 1, &id, TIMEOUT_MS), 0);
  assert_int_equal(anim_test_server_kill(&server), 0);
  poll_until(client, &ev.lost, 1, "LOST event after the kill");
  start_on(&server, port, token);
  poll_until(client, &ev.restored, 1, "RESTORED event from the token server");
  /* No hello from the caller: the library sent the token first. */
  assert_int_equal(anim_client_characters_create(client, "default", NULL, NULL, 1, &id, TIMEOUT_MS), 0);
  assert_int_equal(anim_client_ping(client, "t", 1, NULL, TIMEOUT_MS), 0);
  assert_int_equal(ev.lost, 1);
  /* The control: a client that never said hello is refused by this server. */
  int err;
  anim_client_t *other = anim_client_connect("127.0.0.1", port, NULL, &err);
  assert_non_null(other);
  assert_int_equal(anim_client_characters_create(other, "default", NULL, NULL, 1, &id, TIMEOUT_MS), ANIM_EPERM);
  anim_client_close(other);
  anim_client_close(client);
  assert_int_equal(anim_test_server_stop(&server), 0);
}

/* A successor with another token refuses the library's hello: each such
 * connection counts as a failed attempt (no endless quick cycle), LOST says
 * why, and the attempts allowed run out. */
static void test_refused_token_gives_up(void **state) {
  int port = free_port();
  anim_test_server_t server;
  start_on(&server, port, "first-token");
  events_t ev = {0};
  anim_client_t *client = connect_to(port, &ev, 2, 10, 40, "first-token");
  assert_int_equal(anim_client_hello(client, "test", NULL, TIMEOUT_MS), 0);
  assert_int_equal(anim_test_server_kill(&server), 0);
  start_on(&server, port, "second-token");
  poll_until(client, &ev.gave_up, 1, "GAVE_UP event from a server refusing the token");
  assert_int_equal(ev.restored, 2);
  assert_int_equal(ev.lost, 3);
  assert_int_equal(ev.lost_status, ANIM_EPERM);
  assert_int_equal(ev.gave_up_status, ANIM_EPERM);
  assert_int_equal(ev.attempts_failed, 0);
  anim_client_close(client);
  assert_int_equal(anim_test_server_stop(&server), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_without_reconnect_stays_closed),
      cmocka_unit_test(test_kill_and_restore),
      cmocka_unit_test(test_blocking_call_waits_for_connection),
      cmocka_unit_test(test_own_poll_loop),
      cmocka_unit_test(test_backoff_grows),
      cmocka_unit_test(test_gives_up),
      cmocka_unit_test(test_auth_token_sent_again),
      cmocka_unit_test(test_refused_token_gives_up),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
