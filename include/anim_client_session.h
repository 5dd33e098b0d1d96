/*
 * anim_client_session.h: the client and its connection (part of the client
 * library; include anim_client.h).
 *
 * Connecting, closing, reconnection, the handshake (hello), ping, and the
 * non-blocking plumbing every area shares: the descriptor to poll,
 * anim_client_process / anim_client_poll, the count of requests in flight.
 * What requests exist and what they return is in the area headers
 * (anim_client_database.h, anim_client_inertialize.h,
 * anim_client_character.h, anim_client_stream.h, anim_client_admin.h).
 */
#ifndef ANIM_CLIENT_SESSION_H
#define ANIM_CLIENT_SESSION_H

#include <stddef.h>
#include <stdint.h>
#include "anim_error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct anim_client anim_client_t;

#define ANIM_MAX_CAPABILITIES 32

/* What the server said of itself and its limits in its hello answer. */
typedef struct {
  uint32_t protocol_version;
  char server_version[64];
  int ncapabilities;
  char capabilities[ANIM_MAX_CAPABILITIES][32]; /* the first ANIM_MAX_CAPABILITIES the server lists */
  uint32_t max_frame_bytes, max_in_flight, max_batch, max_k;
  uint64_t output_soft_limit, output_hard_limit;
  uint64_t connection_id;
  uint32_t max_characters;   /* per connection */
  float tick_rate;           /* Hz */
  int admin;                 /* this connection may load, reload and unload */
  uint32_t max_pose_frames;  /* frames in one pose request */
  uint64_t decode_budget_bytes;     /* memory one request may take to decode */
  uint64_t stream_soft_limit_bytes; /* queued output above which stream frames are replaced */
  uint32_t max_characters_total;    /* characters on the server */
  uint32_t max_subscriptions;       /* per connection */
  uint32_t max_ids;          /* characters, placements or inputs in one request */
  uint32_t max_string_bytes; /* any string field */
  float world_limit;         /* m: |x|, |y|, |z| of any world position taken; characters stop at it */
  uint32_t max_trackers_ahead;   /* set_trackers' tick at most this many after the next (ANIM_ERANGE) */
  uint32_t max_trackers_waiting; /* sets for ticks ahead held per tracker character (ANIM_ELIMIT) */
  uint32_t max_push_ahead;       /* anim_push_t.tick at most this many after the next (ANIM_ERANGE) */
  uint32_t max_machines;         /* state machines loaded at once (ANIM_ELIMIT) */
  uint32_t max_machine_bytes;    /* text of one machine (ANIM_ELIMIT) */
  uint32_t max_events_waiting;   /* events queued for one character's next tick (ANIM_ELIMIT) */
  uint32_t max_path_points;      /* points of one path (ANIM_ELIMIT) */
  float max_query_seconds;       /* s simulated by one anim_client_graph_query (ANIM_ELIMIT) */
  uint32_t max_graph_builds;     /* graph builds at once on the server (ANIM_EBUSY) */
  uint32_t max_path_expansions;  /* edges tried per plan: max_expansions at most this (ANIM_EINVAL) */
  uint32_t max_align_points;     /* point pairs in one align (ANIM_ELIMIT) */
  uint32_t max_trackers;         /* tracked points of one fit or tracker character (ANIM_ELIMIT) */
  uint32_t fit_models_per_database; /* pose-fit models cached per database, least recently used dropped */
  uint32_t max_pushes_pending;   /* pushes held per physical character before they apply (ANIM_ELIMIT) */
} anim_hello_info_t;

typedef struct {
  const uint8_t *payload;    /* valid during the callback only */
  size_t payload_len;
  uint64_t server_time_us;
  uint64_t rtt_us;           /* from the send to the answer's arrival */
} anim_ping_result_t;

/* status is 0 or the server's error code (message: anim_client_last_error). */
typedef void (*anim_status_cb)(anim_client_t *client, uint64_t id, int status, void *data);
typedef void (*anim_hello_cb)(anim_client_t *client, uint64_t id, int status, const anim_hello_info_t *info,
                              void *data);
typedef void (*anim_ping_cb)(anim_client_t *client, uint64_t id, int status, const anim_ping_result_t *result,
                             void *data);

/* Connection events (see reconnection below). */
enum {
  ANIM_CONNECTION_LOST = 1,           /* status: why (ANIM_ECLOSED, ANIM_EPROTO, the server's code, ...) */
  ANIM_CONNECTION_ATTEMPT_FAILED = 2, /* a reconnection attempt failed (ANIM_ECONNECT, ANIM_ETIMEDOUT) */
  ANIM_CONNECTION_RESTORED = 3,       /* connected again (status 0): re-create characters, subscriptions */
  ANIM_CONNECTION_GAVE_UP = 4         /* reconnect_max_attempts failed (status: the last one's reason) */
};

/* Called from anim_client_process / anim_client_poll or a blocking call. In
 * RESTORED the caller may use the whole API (blocking calls included) to
 * re-create what the lost server held; in the other events requests fail
 * with ANIM_ECLOSED. Never anim_client_close the client inside it. */
typedef void (*anim_connection_cb)(anim_client_t *client, int event, int status, void *data);

typedef struct {
  int timeout_ms;            /* connect timeout; <= 0: 5000 */
  uint32_t max_frame_bytes;  /* largest response accepted; 0: 64 MiB */
  const char *auth_token;    /* sent in every hello (copied); NULL: none */
  /* Reconnection (0 everywhere: off, as before). */
  int reconnect;             /* non-zero: reconnect after a lost connection */
  int reconnect_initial_ms;  /* first delay; <= 0: 100 */
  int reconnect_max_ms;      /* the delay doubles up to this; <= 0: 5000 */
  int reconnect_max_attempts; /* failed attempts before giving up; 0: unlimited */
  anim_connection_cb on_connection; /* may be NULL */
  void *connection_data;     /* passed to on_connection */
} anim_client_options_t;

/* Connects to host:port (numeric address or name). Returns NULL on failure
 * with the code in *out_err (ANIM_ECONNECT, ANIM_ETIMEDOUT, ANIM_EINVAL,
 * ANIM_ENOMEM). options may be NULL. */
anim_client_t *anim_client_connect(const char *host, int port, const anim_client_options_t *options, int *out_err);

/* ---- reconnection ------------------------------------------------------------------
 *
 * Off by default: a lost connection stays lost (every call then returns its
 * error). With options.reconnect, when the connection breaks (read or write
 * error, end of stream, a server that closed it):
 *  - pending requests fail with the break's code, once, as without reconnect;
 *  - subscriptions and queued stream frames are dropped: the next server
 *    knows nothing of this connection's characters or subscriptions;
 *  - on_connection(LOST, why) runs; then the next anim_client_process /
 *    anim_client_poll or blocking call reconnects to the same host and port
 *    (every address resolved at connect time, in order), after a delay that
 *    doubles from reconnect_initial_ms to reconnect_max_ms, each drawn
 *    uniformly from [delay / 2, delay] so clients of a lost server do not
 *    return in step. Each failed attempt calls on_connection(ATTEMPT_FAILED);
 *    a new connection lost before it answered any request (a server refusing
 *    the auth token) counts as a failed attempt too (reported by its LOST);
 *    the count starts over once a connection answers. After
 *    reconnect_max_attempts failures, on_connection(GAVE_UP) and the client
 *    stays closed;
 *  - once connected, a hello carrying options.auth_token goes out first (when
 *    a token is set, so what follows is authenticated), then
 *    on_connection(RESTORED): re-create characters and subscriptions there.
 * Meanwhile requests are refused with ANIM_ECLOSED (their callbacks never
 * run), anim_client_process returns ANIM_ECLOSED, anim_client_poll waits up
 * to its timeout for the next attempt and returns 0 once connected again (or
 * ANIM_ECLOSED), and blocking calls wait up to their timeout for the
 * connection before sending (ANIM_ECLOSED if it is not back by then). The
 * descriptor changes: take anim_client_fd() again after each call; it is -1
 * between attempts, when anim_client_next_timeout() says when to call
 * anim_client_process. The first connection (anim_client_connect) is not
 * retried. */

/* 1 while connected (as far as the client knows), 0 otherwise. */
int anim_client_connected(const anim_client_t *client);

/* Milliseconds a caller's poll() may wait before calling
 * anim_client_process although anim_client_fd() shows nothing: the next
 * reconnection attempt or a connect attempt's time limit. -1: nothing timed
 * (connected, reconnection off, or given up). */
int anim_client_next_timeout(const anim_client_t *client);

/* Closes the socket and frees the client. Pending callbacks are called with
 * ANIM_ECLOSED first. NULL is ignored. Never inside one of the client's
 * callbacks. */
void anim_client_close(anim_client_t *client);

/* The server's message for the last error response, or a local reason. */
const char *anim_client_last_error(const anim_client_t *client);

/* ---- hello and ping ------------------------------------------------------------------ */

/* Handshake: client_name is free text for the server's logs. A server with
 * an auth token refuses every other request (ANIM_EPERM) until a hello
 * carries it (anim_client_options_t.auth_token); a wrong one closes the
 * connection. */
int anim_client_hello(anim_client_t *client, const char *client_name, anim_hello_info_t *out_info, int timeout_ms);
int anim_client_hello_send(anim_client_t *client, const char *client_name, anim_hello_cb cb, void *data,
                           uint64_t *out_id);

/* Round trip; out_rtt_us (may be NULL) receives the measured round-trip time. */
int anim_client_ping(anim_client_t *client, const void *payload, size_t len, uint64_t *out_rtt_us, int timeout_ms);
int anim_client_ping_send(anim_client_t *client, const void *payload, size_t len, anim_ping_cb cb, void *data,
                          uint64_t *out_id);

/* ---- the non-blocking path ------------------------------------------------------------ */

/* The socket to poll. With reconnection it changes after a loss, and is -1
 * between attempts (see anim_client_next_timeout). */
int anim_client_fd(const anim_client_t *client);

/* Reads what the socket has, calls callbacks for complete messages, writes
 * queued output. Never blocks. 0, or ANIM_ECLOSED / ANIM_EPROTO /
 * ANIM_ETOOBIG when the connection is no longer usable. With reconnection it
 * also tears a lost connection down and makes the attempt that is due (a
 * connect in progress is never waited for here); ANIM_ECLOSED until
 * connected again. */
int anim_client_process(anim_client_t *client);

/* 1 while queued output waits for the socket (poll for POLLOUT too). */
int anim_client_wants_write(const anim_client_t *client);

/* Requests sent and not yet answered. */
int anim_client_pending(const anim_client_t *client);

/* Waits up to timeout_ms for the socket and processes it once. 0, or
 * ANIM_ETIMEDOUT when nothing happened, or anim_client_process's errors.
 * While reconnecting: waits up to timeout_ms for the next attempt (or the
 * connect in progress), makes it, and returns 0 if connected again, else
 * ANIM_ECLOSED. */
int anim_client_poll(anim_client_t *client, int timeout_ms);

#ifdef __cplusplus
}
#endif
#endif
