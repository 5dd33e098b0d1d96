/*
 * client_internal.h: what the client library's files share (not installed).
 *
 * The client struct and the few functions every API file uses: send a
 * request with its typed completion (anim__client_send), and, for the
 * blocking form, wait for that id (anim__client_ready before the send,
 * anim__client_wait after). client.c owns the connection (output, the
 * reader, the pending table); reconnect.c brings a lost connection back;
 * api_stream.c registers the handler for stream messages. Symbols shared
 * between files are anim__*; nothing here is public.
 *
 * Adding a request (client side): in the area's api_<area>.c, a completion
 * (`foo_complete`: convert with anim__foo_from, then anim__pending_deliver
 * to a blocking caller or the typed callback), `anim_client_foo_send`
 * (check, build, anim__client_send) and `anim_client_foo` (ready, send,
 * wait); the converter in convert*.c; the two prototypes and the callback
 * type in include/anim_client_<area>.h.
 */
#ifndef ANIM_CLIENT_INTERNAL_H
#define ANIM_CLIENT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include "anim_client.h"
#include "animserver.pb-c.h"
#include "net.h"
#include "pending.h"
#include "reader.h"

/* Where the connection stands (reconnect.c). */
enum { ANIM__CONN_CONNECTED = 0, ANIM__CONN_WAITING, ANIM__CONN_CONNECTING, ANIM__CONN_GAVE_UP };

typedef struct {
  int enabled;
  int initial_ms, max_ms, max_attempts, connect_timeout_ms;
  anim_connection_cb cb;
  void *data;
  int state;       /* ANIM__CONN_* */
  int attempts;    /* failed attempts since the last connection that answered */
  int proven;      /* this connection has answered a request (a refused token never does) */
  int address;     /* ANIM__CONN_CONNECTING: the address being tried */
  int last_status; /* the last attempt's failure */
  uint64_t due_us; /* WAITING: next attempt; CONNECTING: its time limit */
  int busy;        /* in a connection event or tearing down: no nested driving */
  int hello_status; /* failure of the automatic hello (reported as LOST's reason) */
  uint64_t rng;    /* jitter */
  /* What the layer above says first on a new connection, before RESTORED
   * (api_session.c: the hello with the auth token); registered with
   * anim__reconnect_on_restored, so this layer never calls up. */
  void (*restored_cb)(anim_client_t *client, void *data);
  void *restored_data;
} anim__reconnect_t;

/* api_stream.c's: forget every subscription and queued frame (the
 * connection is gone, or the client closing). */
typedef void (*anim__stream_drop_fn)(anim_client_t *client, void *ctx);

struct anim_client {
  int fd;
  uint64_t next_id;
  anim__reader_t reader;
  anim__reader_handlers_t handlers; /* responses: the pending table; streams: api_stream.c's */
  anim__stream_drop_fn stream_drop;
  uint8_t *out;
  size_t out_len, out_pos, out_cap;
  anim__pending_table_t pending;
  int broken;       /* sticky error once the stream is unusable */
  int server_error; /* code of an error the server sent about the stream (id 0) */
  int dispatching;  /* depth of message dispatch: the connection may not be torn down */
  char last_error[256];
  char auth_token[128];
  anim__address_t *addresses; /* what the host resolved to at connect time */
  int naddresses;
  anim__reconnect_t reconnect;
};

uint64_t anim__monotonic_us(void);
/* Sets last_error; returns code. */
int anim__client_set_error(anim_client_t *client, int code, const char *message);
/* For a call refused before anything is sent (a NULL pointer, a count or a
 * value out of range; out of memory): last_error names function and says
 * so, so it never shows an earlier request's error. NULL client: only the
 * code. Returns code. */
int anim__client_refuse(anim_client_t *client, int code, const char *function);
/* For completions: a converter's code (0 passes), with last_error saying why. */
int anim__client_check_answer(anim_client_t *client, int rc);

/* Queues request (its id assigned here) with a pending entry whose
 * completion runs once: with the answer (of body case expect), or with a
 * failure. cb and data are kept for the completion; extra (may be NULL) is
 * the request's own state, freed with the entry (also when the send fails).
 * 0, or the connection's error / ANIM_ENOMEM (then nothing runs). */
int anim__client_send(anim_client_t *client, Animserver__Request *request, Animserver__Response__BodyCase expect,
                      anim__complete_fn complete, anim__cb_fn cb, void *data, uint64_t *out_id);
int anim__client_send_with(anim_client_t *client, Animserver__Request *request, Animserver__Response__BodyCase expect,
                           anim__complete_fn complete, anim__cb_fn cb, void *data, void *extra, uint64_t *out_id);

/* The completion of a request answered by its status and one number (a
 * tick, a count): value goes to a blocking caller (a uint64_t), else
 * p->cb, an anim_status_cb, runs. */
void anim__client_complete_status(anim_client_t *client, anim__pending_t *p, int status, uint64_t value);
/* The completion of a request answered by its status alone (an
 * anim__complete_fn: anim__client_complete_status with value 0). */
void anim__client_status_complete(anim_client_t *client, anim__pending_t *p, int status,
                                  const Animserver__Response *r);

/* Blocking calls, before sending: with reconnection, waits for the
 * connection within *timeout_ms (reduced by the time spent). 0 or
 * ANIM_ECLOSED. */
int anim__client_ready(anim_client_t *client, int *timeout_ms);
/* Blocking calls, after sending (rc: the send's code, returned as is when
 * not 0): waits up to timeout_ms for request id, whose completion copies
 * its result (out_size bytes) into out. The answer's status, ANIM_ETIMEDOUT
 * (the request is then forgotten: a late answer is ignored) or a
 * connection error. */
int anim__client_wait(anim_client_t *client, int rc, uint64_t id, void *out, size_t out_size, int timeout_ms);
/* Every blocking call is the same sequence after its argument checks, so it
 * is written once: anim__client_ready, then send (an expression naming the
 * request id `&id_`, e.g. anim_client_pose_send(client, ..., NULL, NULL,
 * &id_)), then anim__client_wait into out (size bytes); rc gets the status. */
#define ANIM__CLIENT_RUN(rc, client, timeout_ms, out, size, send)                \
  do {                                                                          \
    uint64_t id_ = 0;                                                           \
    (rc) = anim__client_ready((client), &(timeout_ms));                         \
    if ((rc) == 0) (rc) = (send);                                               \
    (rc) = anim__client_wait((client), (rc), id_, (out), (size), (timeout_ms)); \
  } while (0)

/* api_stream.c: stream messages go to fn(ctx, ...); drop(client, ctx) when
 * the connection is dropped or the client closed (the handler is then
 * unregistered). */
void anim__client_on_stream(anim_client_t *client, anim__stream_fn fn, void *ctx, anim__stream_drop_fn drop);

/* client.c, for reconnect.c: fails pending requests with status, drops
 * streams, closes the socket (fd -1) and resets the reader and output. */
void anim__client_drop_connection(anim_client_t *client, int status);
/* Takes a connected socket as the client's connection. */
void anim__client_attach(anim_client_t *client, int fd);
/* client.c, for anim_client_connect (api_session.c): resolves host, connects
 * (within options' timeout) and makes the client, as anim_client_connect
 * documents; NULL with *out_err set on failure. */
anim_client_t *anim__client_open(const char *host, int port, const anim_client_options_t *options, int *out_err);

/* reconnect.c. Copies the options. */
void anim__reconnect_init(anim_client_t *client, const anim_client_options_t *options);
/* cb(client, data) runs on each new connection before on_connection(RESTORED)
 * (not on the first), where the layer above sends what must go first;
 * NULL: nothing. */
void anim__reconnect_on_restored(anim_client_t *client, void (*cb)(anim_client_t *client, void *data), void *data);
/* The automatic hello of a new connection failed with status: the next
 * LOST gives it as its reason. */
void anim__reconnect_hello_failed(anim_client_t *client, int status);
/* At a safe point (not inside a dispatch nor a connection event): tears a
 * broken connection down (LOST), makes the attempt that is due, finishes
 * one in progress (RESTORED). 0 when connected, else the connection's error
 * (ANIM_ECLOSED while reconnecting). */
int anim__reconnect_drive(anim_client_t *client);
/* A response without error arrived: the connection serves us. */
void anim__reconnect_answered(anim_client_t *client);
/* anim_client_poll while not connected. */
int anim__reconnect_poll(anim_client_t *client, int timeout_ms);
/* anim__client_ready's work when reconnection is on. */
int anim__reconnect_await(anim_client_t *client, int *timeout_ms);

#endif
