/*
 * client_internal.h: what the client library's files share (not installed).
 *
 * client.c owns the connection: output buffer, frame reader, pending
 * requests matched by id, blocking waits. character.c adds characters and
 * pose streams on top through the few functions below; reconnect.c brings a
 * lost connection back when the caller asked for it.
 */
#ifndef ANIM_CLIENT_INTERNAL_H
#define ANIM_CLIENT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include "anim_client.h"
#include "animserver.pb-c.h"
#include "frame.h"

struct pending;
struct sockaddr;

/* Where the connection stands (reconnect.c). */
enum { CONN_CONNECTED = 0, CONN_WAITING, CONN_CONNECTING, CONN_GAVE_UP };

typedef struct {
  int family, socktype, protocol;
  unsigned len;
  unsigned char addr[128]; /* a struct sockaddr_storage */
} client_address_t;

typedef struct {
  int enabled;
  int initial_ms, max_ms, max_attempts, connect_timeout_ms;
  anim_connection_cb cb;
  void *data;
  client_address_t *addresses; /* what getaddrinfo gave at connect time */
  int naddresses;
  int state;       /* CONN_* */
  int attempts;    /* failed attempts since the last connection that answered */
  int proven;      /* this connection has answered a request (a refused token never does) */
  int address;     /* CONN_CONNECTING: the address being tried */
  int last_status; /* the last attempt's failure */
  uint64_t due_us; /* CONN_WAITING: next attempt; CONN_CONNECTING: its time limit */
  int busy;        /* in a connection event or tearing down: no nested driving */
  int hello_status; /* failure of the automatic hello (reported as LOST's reason) */
  uint64_t rng;    /* jitter */
} client_reconnect_t;

/* Turns the response (NULL on failure, with status) into the caller's
 * C structs and calls the caller's callback. */
typedef void (*complete_fn)(anim_client_t *client, struct pending *p, int status, const Animserver__Response *r);

typedef struct pending {
  uint64_t id;
  Animserver__Response__BodyCase expect;
  complete_fn complete;
  void (*cb)(void); /* the caller's callback, cast back by complete */
  void *data;
  uint64_t sent_us;
  struct pending *next;
} pending_t;

struct anim_client {
  int fd;
  uint64_t next_id;
  anim_frame_reader_t reader;
  uint8_t *out;
  size_t out_len, out_pos, out_cap;
  pending_t *pending;
  int npending;
  int broken; /* sticky error once the stream is unusable */
  int server_error; /* code of an error the server sent about the stream (id 0) */
  void *kept;       /* a reply a blocking caller keeps: not freed after its callback */
  struct async_call *async; /* set while a blocking function builds an asynchronous request */
  uint64_t async_id;
  char last_error[256];
  struct client_streams *streams; /* character.c: subscriptions and queued frames */
  char auth_token[128];
  int feeding;      /* inside the frame reader's callbacks: the connection may not be torn down */
  client_reconnect_t reconnect;
};


uint64_t anim__monotonic_us(void);
int anim__client_set_error(anim_client_t *client, int code, const char *message);
/* Queues request (its id is assigned) with a pending entry: complete(client,
 * pending, status, response) runs when the answer (of body case expect) or a
 * failure arrives; cb and data are kept in the entry for it. */
int anim__client_send(anim_client_t *client, Animserver__Request *request, Animserver__Response__BodyCase expect,
                      complete_fn complete, void (*cb)(void), void *data, uint64_t *out_id);
/* Polls until *done (set by a completion) or the timeout. 0 or a code. */
int anim__client_wait(anim_client_t *client, const int *done, uint64_t id, int timeout_ms);
/* A library-owned copy of a wire inertializer state (NULL: malformed or out of memory). */
anim_inertializer_state_t *anim__state_from(const Animserver__InertializerState *m);
/* character.c: a stream message arrived (wire_bytes: its frame's size). */
void anim__client_stream(anim_client_t *client, const Animserver__StreamMessage *message, size_t wire_bytes);
void anim__client_streams_free(anim_client_t *client);

/* client.c, for reconnect.c: fails pending requests with status, drops
 * streams, closes the socket (fd -1) and resets the reader and output. */
void anim__client_drop_connection(anim_client_t *client, int status);
/* Takes a connected socket as the client's connection. */
void anim__client_attach(anim_client_t *client, int fd);
/* Sends the automatic hello carrying the auth token (no caller callback). */
int anim__client_hello_again(anim_client_t *client);

/* reconnect.c. Copies the options and addresses (list: a struct addrinfo *). */
int anim__reconnect_init(anim_client_t *client, const anim_client_options_t *options, const void *list);
void anim__reconnect_free(anim_client_t *client);
/* At a safe point (not inside the reader's callbacks nor a connection
 * event): tears a broken connection down (LOST), makes the attempt that is
 * due, finishes one in progress (RESTORED). 0 when connected, else the
 * connection's error (ANIM_ECLOSED while reconnecting). */
int anim__reconnect_drive(anim_client_t *client);
/* A response without error arrived: the connection serves us. */
void anim__reconnect_answered(anim_client_t *client);
/* anim_client_poll while not connected. */
int anim__reconnect_poll(anim_client_t *client, int timeout_ms);
/* Blocking calls, before sending: waits for the connection within
 * *timeout_ms (reduced by the time spent). 0 or ANIM_ECLOSED. */
int anim__client_await(anim_client_t *client, int *timeout_ms);

/* call.c: the two shapes most requests take. A blocking request whose
 * answer convert turns into the caller's out (0 or a code; it may allocate
 * what out points to): send, wait for its id, convert. */
typedef int (*anim__convert_fn)(anim_client_t *client, const Animserver__Response *response, void *out);
int anim__client_call(anim_client_t *client, Animserver__Request *request, Animserver__Response__BodyCase expect,
                      anim__convert_fn convert, void *out, int timeout_ms);
/* A request whose answer is only its status (and a tick): queued, cb runs
 * when it is answered. */
int anim__client_send_status(anim_client_t *client, Animserver__Request *request,
                             Animserver__Response__BodyCase expect, anim_status_cb cb, void *data, uint64_t *out_id);
/* Copies of wire vectors (absent: zero, identity). */
void anim__copy_vec3(float *out, const Animserver__Vec3 *v);
void anim__copy_quat(float *out, const Animserver__Quat *q);
/* A NUL-terminated copy into out[size] (size >= 1); ANIM_EPROTO when it does not fit. */
int anim__copy_name(char *out, size_t size, const char *s);

#endif
