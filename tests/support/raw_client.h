/*
 * raw_client.h: a connection to a test server speaking the protocol with
 * protobuf-c directly, as a client written from the proto alone would:
 * framed Requests out, ServerMessages (responses and stream frames) in.
 * For end-to-end tests and benchmarks of requests the client library does
 * not wrap (yet). No cmocka here; every call is blocking with a timeout.
 */
#ifndef ANIM_TEST_RAW_CLIENT_H
#define ANIM_TEST_RAW_CLIENT_H

#include <stddef.h>
#include <stdint.h>
#include "animserver.pb-c.h"
#include "server_proc.h"

typedef struct {
  int fd;
  uint8_t *buffer; /* bytes read and not yet parsed */
  size_t have, capacity;
  uint64_t next_id;
  /* Called with each stream frame read while waiting for a response (NULL: dropped). */
  void (*on_stream)(const Animserver__StreamMessage *stream, void *user);
  void *user;
} anim_test_raw_t;

/* 0, or -1 when the connection failed. */
int anim_test_raw_open(anim_test_raw_t *c, const anim_test_server_t *server);
void anim_test_raw_close(anim_test_raw_t *c);

/* Appends request to buf at `at` as one frame (its length, then its bytes)
 * and returns where the frame ends; buf has room for ANIM_VARINT_MAX (frame.h)
 * plus its packed size. For tests that send many frames in one write. */
size_t anim_test_raw_append(uint8_t *buf, size_t at, const Animserver__Request *request);
/* The same for a search of k matches from frame in database, with id. */
size_t anim_test_raw_append_search(uint8_t *buf, size_t at, uint64_t id, const char *database, uint32_t frame,
                                   uint32_t k);

/* Sends request as one frame (its id set to the next one when 0). 0 or -1. */
int anim_test_raw_send(anim_test_raw_t *c, Animserver__Request *request);
/* The next ServerMessage within timeout_ms, or NULL (timeout, closed,
 * unparsable). Free with animserver__server_message__free_unpacked. */
Animserver__ServerMessage *anim_test_raw_next(anim_test_raw_t *c, int timeout_ms);
/* Sends request and waits for the Response with its id (stream frames
 * meanwhile go to on_stream). NULL on timeout or a closed connection. Free
 * with animserver__response__free_unpacked. */
Animserver__Response *anim_test_raw_call(anim_test_raw_t *c, Animserver__Request *request, int timeout_ms);

#endif
