/*
 * anim_client.h: the animserver client library.
 *
 * Thin by design: libc sockets and protobuf-c, no libuv, no threads. Two ways
 * to use one connection, freely mixed:
 *
 *  - blocking: anim_client_hello / anim_client_ping send a request and wait
 *    (up to timeout_ms) for its response; responses to other requests and
 *    stream messages that arrive meanwhile go to their callbacks;
 *  - non-blocking: the *_send functions queue a request and return its id at
 *    once; the caller's own loop polls anim_client_fd() (POLLIN, plus POLLOUT
 *    while anim_client_wants_write()) and calls anim_client_process(), which
 *    reads, parses frames and calls the callbacks.
 *
 * Requests may be pipelined: responses are matched by id. Every function
 * returns 0 or a negative ANIM_E* code (anim_strerror explains it); when the
 * server answered with an error, that code is returned and its message is in
 * anim_client_last_error(). A callback never runs for a request whose send
 * returned an error. A client is not thread-safe: use it from one thread.
 *
 * Ownership: anim_client_connect allocates; anim_client_close frees. Result
 * structs passed to callbacks are valid only during the callback.
 */
#ifndef ANIM_CLIENT_H
#define ANIM_CLIENT_H

#include <stddef.h>
#include <stdint.h>
#include "anim_error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct anim_client anim_client_t;

typedef struct {
  uint32_t protocol_version;
  char server_version[64];
  int ncapabilities;
  char capabilities[16][32];
  uint32_t max_frame_bytes, max_in_flight, max_batch, max_k;
  uint64_t output_soft_limit, output_hard_limit;
  uint64_t connection_id;
} anim_hello_info_t;

typedef struct {
  const uint8_t *payload;
  size_t payload_len;
  uint64_t server_time_us;
} anim_ping_result_t;

/* status is 0 or the server's error code (message: anim_client_last_error). */
typedef void (*anim_hello_cb)(anim_client_t *client, uint64_t id, int status, const anim_hello_info_t *info,
                              void *data);
typedef void (*anim_ping_cb)(anim_client_t *client, uint64_t id, int status, const anim_ping_result_t *result,
                             void *data);

typedef struct {
  int timeout_ms;            /* connect timeout; <= 0: 5000 */
  uint32_t max_frame_bytes;  /* largest response accepted; 0: 64 MiB */
} anim_client_options_t;

/* Connects to host:port (numeric address or name). Returns NULL on failure
 * with the code in *out_err (ANIM_ECONNECT, ANIM_ETIMEDOUT, ANIM_EINVAL,
 * ANIM_ENOMEM). options may be NULL. */
anim_client_t *anim_client_connect(const char *host, int port, const anim_client_options_t *options, int *out_err);

/* Closes the socket and frees the client. Pending callbacks are called with
 * ANIM_ECLOSED first. NULL is ignored. */
void anim_client_close(anim_client_t *client);

/* The server's message for the last error response, or a local reason. */
const char *anim_client_last_error(const anim_client_t *client);

/* ---- blocking calls --------------------------------------------------------- */

/* Handshake: client_name is free text for the server's logs. */
int anim_client_hello(anim_client_t *client, const char *client_name, anim_hello_info_t *out_info, int timeout_ms);

/* Round trip; out_rtt_us (may be NULL) receives the measured round-trip time. */
int anim_client_ping(anim_client_t *client, const void *payload, size_t len, uint64_t *out_rtt_us, int timeout_ms);

/* ---- non-blocking path --------------------------------------------------------- */

int anim_client_fd(const anim_client_t *client);

/* Queue requests; out_id (may be NULL) receives the id the callback will see. */
int anim_client_hello_send(anim_client_t *client, const char *client_name, anim_hello_cb cb, void *data,
                           uint64_t *out_id);
int anim_client_ping_send(anim_client_t *client, const void *payload, size_t len, anim_ping_cb cb, void *data,
                          uint64_t *out_id);

/* Reads what the socket has, calls callbacks for complete messages, writes
 * queued output. Never blocks. 0, or ANIM_ECLOSED / ANIM_EPROTO /
 * ANIM_ETOOBIG when the connection is no longer usable. */
int anim_client_process(anim_client_t *client);

/* 1 while queued output waits for the socket (poll for POLLOUT too). */
int anim_client_wants_write(const anim_client_t *client);

/* Requests sent and not yet answered. */
int anim_client_pending(const anim_client_t *client);

/* Waits up to timeout_ms for the socket and processes it once. 0, or
 * ANIM_ETIMEDOUT when nothing happened, or anim_client_process's errors. */
int anim_client_poll(anim_client_t *client, int timeout_ms);

#ifdef __cplusplus
}
#endif
#endif
