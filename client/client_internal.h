/*
 * client_internal.h: what the client library's files share (not installed).
 *
 * client.c owns the connection: output buffer, frame reader, pending
 * requests matched by id, blocking waits. character.c adds characters and
 * pose streams on top through the few functions below.
 */
#ifndef ANIM_CLIENT_INTERNAL_H
#define ANIM_CLIENT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include "anim_client.h"
#include "animserver.pb-c.h"
#include "frame.h"

struct pending;

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

#endif
