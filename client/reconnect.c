/*
 * reconnect.c: bringing a lost connection back (see "reconnection" in
 * include/anim_client_session.h).
 *
 * A small state machine driven from the caller's own calls, never from a
 * thread or a timer: CONNECTED; WAITING for the next attempt (no socket);
 * CONNECTING (a non-blocking connect in progress, polled for POLLOUT);
 * GAVE_UP. It acts only at safe points: not inside a message's dispatch
 * (a callback of the old connection is running) and not inside a
 * connection event, where the caller may be making blocking calls. A break
 * seen there is torn down when the outer call gets back here. Sockets are
 * net.c's; this file only decides when to open one. It reaches the API
 * layer above only through the callback that layer registered
 * (anim__reconnect_on_restored), as libuv's after_cb.
 *
 * What the old server held (characters, subscriptions) is not replayed: the
 * caller re-creates what it still wants in the RESTORED event.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "client_internal.h"

#define DEFAULT_INITIAL_MS 100
#define DEFAULT_MAX_MS 5000
#define DEFAULT_CONNECT_TIMEOUT_MS 5000

void anim__reconnect_init(anim_client_t *client, const anim_client_options_t *options) {
  anim__reconnect_t *r = &client->reconnect;
  memset(r, 0, sizeof *r);
  r->state = ANIM__CONN_CONNECTED;
  r->proven = 1; /* the first connection is not retried, whatever it does */
  if (!options || !options->reconnect) return;
  r->enabled = 1;
  r->initial_ms = options->reconnect_initial_ms > 0 ? options->reconnect_initial_ms : DEFAULT_INITIAL_MS;
  r->max_ms = options->reconnect_max_ms > 0 ? options->reconnect_max_ms : DEFAULT_MAX_MS;
  if (r->max_ms < r->initial_ms) r->max_ms = r->initial_ms;
  r->max_attempts = options->reconnect_max_attempts > 0 ? options->reconnect_max_attempts : 0;
  r->connect_timeout_ms = options->timeout_ms > 0 ? options->timeout_ms : DEFAULT_CONNECT_TIMEOUT_MS;
  r->cb = options->on_connection;
  r->data = options->connection_data;
  /* Jitter differs between clients and runs: the clock and this client's address. */
  r->rng = anim__monotonic_us() ^ ((uint64_t)(uintptr_t)client << 16) ^ 0x9e3779b97f4a7c15ull;
}

int anim_client_connected(const anim_client_t *client) {
  return client && !client->broken && client->reconnect.state == ANIM__CONN_CONNECTED;
}

int anim_client_next_timeout(const anim_client_t *client) {
  const anim__reconnect_t *r = &client->reconnect;
  if (!r->enabled) return -1;
  if (r->state == ANIM__CONN_CONNECTED) return client->broken ? 0 : -1; /* a break to report */
  if (r->state == ANIM__CONN_GAVE_UP) return -1;
  uint64_t now = anim__monotonic_us();
  return r->due_us <= now ? 0 : (int)((r->due_us - now + 999) / 1000);
}

/* ---- backoff ------------------------------------------------------------------------ */

static uint64_t next_random(anim__reconnect_t *r) { /* xorshift64* */
  r->rng ^= r->rng >> 12;
  r->rng ^= r->rng << 25;
  r->rng ^= r->rng >> 27;
  return r->rng * 0x2545f4914f6cdd1dull;
}

/* The delay before attempt number `failed` (0 first): initial doubled per
 * failure up to max, drawn uniformly from [delay / 2, delay]. */
static uint64_t backoff_us(anim__reconnect_t *r, int failed) {
  uint64_t delay_ms = (uint64_t)r->initial_ms;
  for (int i = 0; i < failed && delay_ms < (uint64_t)r->max_ms; i++) delay_ms *= 2;
  if (delay_ms > (uint64_t)r->max_ms) delay_ms = (uint64_t)r->max_ms;
  uint64_t full = delay_ms * 1000u, half = full / 2;
  return half + next_random(r) % (full - half + 1);
}

static void event(anim_client_t *client, int what, int status) {
  if (client->reconnect.cb) client->reconnect.cb(client, what, status, client->reconnect.data);
}

/* ---- the state machine ------------------------------------------------------------- */

static void give_up(anim_client_t *client, int status) {
  client->reconnect.state = ANIM__CONN_GAVE_UP;
  anim__client_set_error(client, ANIM_ECLOSED, "connection lost: gave up reconnecting");
  event(client, ANIM_CONNECTION_GAVE_UP, status);
}

static void lose(anim_client_t *client) {
  anim__reconnect_t *r = &client->reconnect;
  int why = r->hello_status ? r->hello_status : client->broken;
  r->hello_status = 0;
  r->state = ANIM__CONN_WAITING;
  /* A connection lost before it answered anything (a refused token, a server
   * that accepts and closes) counts as a failed attempt: the backoff keeps
   * growing instead of starting over. */
  if (!r->proven) r->attempts++, r->last_status = why;
  anim__client_drop_connection(client, client->broken);
  client->broken = ANIM_ECLOSED; /* until a new connection: requests refused */
  anim__client_set_error(client, ANIM_ECLOSED, "connection lost: reconnecting");
  r->due_us = anim__monotonic_us() + backoff_us(r, r->attempts);
  event(client, ANIM_CONNECTION_LOST, why);
  if (r->max_attempts && r->attempts >= r->max_attempts && r->state == ANIM__CONN_WAITING) give_up(client, why);
}

static void restored(anim_client_t *client, int fd) {
  anim__reconnect_t *r = &client->reconnect;
  anim__client_attach(client, fd);
  r->state = ANIM__CONN_CONNECTED;
  r->proven = 0; /* attempts start over once it answers (anim__reconnect_answered) */
  r->hello_status = 0;
  /* Pipelined before anything the caller sends in RESTORED: the server serves
   * nothing but hello until it has the token (api_session.c's callback). */
  if (r->restored_cb) r->restored_cb(client, r->restored_data);
  event(client, ANIM_CONNECTION_RESTORED, 0);
}

static void attempt_failed(anim_client_t *client, int status) {
  anim__reconnect_t *r = &client->reconnect;
  if (client->fd >= 0) close(client->fd);
  client->fd = -1;
  r->attempts++;
  r->last_status = status;
  r->state = ANIM__CONN_WAITING;
  r->due_us = anim__monotonic_us() + backoff_us(r, r->attempts);
  event(client, ANIM_CONNECTION_ATTEMPT_FAILED, status);
  if (r->max_attempts && r->attempts >= r->max_attempts && r->state == ANIM__CONN_WAITING) give_up(client, status);
}

void anim__reconnect_on_restored(anim_client_t *client, void (*cb)(anim_client_t *client, void *data), void *data) {
  client->reconnect.restored_cb = cb;
  client->reconnect.restored_data = data;
}

void anim__reconnect_hello_failed(anim_client_t *client, int status) { client->reconnect.hello_status = status; }

void anim__reconnect_answered(anim_client_t *client) {
  client->reconnect.proven = 1;
  client->reconnect.attempts = 0;
}

/* Starts connecting to addresses from index `from` on; the first that
 * connects at once or is in progress wins. 1 when connected, 0 when in
 * progress, a code when none could start. */
static int start_connect(anim_client_t *client, int from, int *out_fd) {
  anim__reconnect_t *r = &client->reconnect;
  for (int i = from; i < client->naddresses; i++) {
    int rc = anim__net_connect_start(&client->addresses[i], out_fd);
    if (rc == 0) {
      r->address = i;
      r->due_us = anim__monotonic_us() + (uint64_t)r->connect_timeout_ms * 1000u;
    }
    if (rc >= 0) return rc;
  }
  return ANIM_ECONNECT;
}

/* Moves a connect in progress (fd in client->fd) on to the next address. */
static void try_next(anim_client_t *client, int status) {
  anim__reconnect_t *r = &client->reconnect;
  close(client->fd);
  client->fd = -1;
  int fd = -1;
  int rc = start_connect(client, r->address + 1, &fd);
  if (rc == 1) restored(client, fd);
  else if (rc == 0) client->fd = fd;
  else attempt_failed(client, status);
}

/* One step; 1 when something changed (another step may follow). */
static int step(anim_client_t *client) {
  anim__reconnect_t *r = &client->reconnect;
  uint64_t now = anim__monotonic_us();
  switch (r->state) {
  case ANIM__CONN_CONNECTED:
    if (!client->broken) return 0;
    lose(client);
    return 1;
  case ANIM__CONN_WAITING: {
    if (now < r->due_us) return 0;
    int fd = -1;
    r->state = ANIM__CONN_CONNECTING;
    int rc = start_connect(client, 0, &fd);
    if (rc == 1) restored(client, fd);
    else if (rc == 0) client->fd = fd;
    else r->state = ANIM__CONN_WAITING, attempt_failed(client, ANIM_ECONNECT);
    return 1;
  }
  case ANIM__CONN_CONNECTING: {
    int rc = anim__net_connect_check(client->fd, 0);
    if (rc == 0) {
      if (now < r->due_us) return 0;
      try_next(client, ANIM_ETIMEDOUT);
      return 1;
    }
    if (rc < 0) {
      try_next(client, ANIM_ECONNECT);
      return 1;
    }
    int fd = client->fd;
    client->fd = -1;
    restored(client, fd);
    return 1;
  }
  default:
    return 0;
  }
}

static int can_drive(const anim_client_t *client) {
  return client->reconnect.enabled && !client->reconnect.busy && client->dispatching == 0;
}

int anim__reconnect_drive(anim_client_t *client) {
  anim__reconnect_t *r = &client->reconnect;
  if (!can_drive(client)) return client->broken;
  r->busy = 1;
  /* Bounded: an attempt due now is made once; the next is scheduled later. */
  for (int i = 0; i < 8 && step(client); i++) {
  }
  r->busy = 0;
  if (r->state == ANIM__CONN_CONNECTED) return client->broken;
  return ANIM_ECLOSED;
}

int anim__reconnect_poll(anim_client_t *client, int timeout_ms) {
  anim__reconnect_t *r = &client->reconnect;
  if (!can_drive(client)) return client->broken ? client->broken : ANIM_ECLOSED;
  anim__reconnect_drive(client);
  if (r->state == ANIM__CONN_CONNECTED) return client->broken ? anim__reconnect_drive(client) : 0;
  if (r->state == ANIM__CONN_GAVE_UP) return ANIM_ECLOSED;
  /* Sleep until the attempt is due or the connect resolves, within the caller's timeout. */
  uint64_t now = anim__monotonic_us();
  int wait = r->due_us <= now ? 0 : (int)((r->due_us - now + 999) / 1000);
  if (timeout_ms >= 0 && wait > timeout_ms) wait = timeout_ms;
  if (r->state == ANIM__CONN_CONNECTING) anim__net_connect_check(client->fd, wait);
  else if (wait > 0) usleep((useconds_t)wait * 1000u);
  anim__reconnect_drive(client);
  return r->state == ANIM__CONN_CONNECTED && !client->broken ? 0 : ANIM_ECLOSED;
}

int anim__reconnect_await(anim_client_t *client, int *timeout_ms) {
  anim__reconnect_t *r = &client->reconnect;
  uint64_t start = anim__monotonic_us();
  uint64_t deadline = start + (uint64_t)(*timeout_ms > 0 ? *timeout_ms : 0) * 1000u;
  for (;;) {
    if (can_drive(client)) anim__reconnect_drive(client);
    if (r->state == ANIM__CONN_CONNECTED && !client->broken) break;
    if (!can_drive(client) || r->state == ANIM__CONN_GAVE_UP)
      return anim__client_set_error(client, ANIM_ECLOSED, "not connected");
    uint64_t now = anim__monotonic_us();
    if (now >= deadline) return anim__client_set_error(client, ANIM_ECLOSED, "not connected: reconnecting");
    anim__reconnect_poll(client, (int)((deadline - now + 999) / 1000));
  }
  uint64_t spent_ms = (anim__monotonic_us() - start) / 1000u;
  if (*timeout_ms > 0) *timeout_ms = spent_ms >= (uint64_t)*timeout_ms ? 0 : *timeout_ms - (int)spent_ms;
  return 0;
}
