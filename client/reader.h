/*
 * reader.h: bytes in, server messages out, one at a time (client library
 * internals, not installed).
 *
 * The reader buffers what the socket gave and hands out the next complete
 * frame, decoded as a ServerMessage, to a table of handlers: responses to
 * one, stream messages to another. It pops one message, and only then calls
 * its handler, so a handler may feed the reader and dispatch again (a
 * blocking call inside a callback): the nested dispatch goes on with the
 * next message in order, and the outer one finds what is left. No I/O, no
 * client state: the caller reads the socket and feeds it.
 *
 * Memory is bounded by what was fed: a frame's length over max_frame is
 * refused as soon as its varint is read; once failed, the reader stays
 * failed until reset.
 */
#ifndef ANIM_CLIENT_READER_H
#define ANIM_CLIENT_READER_H

#include <stddef.h>
#include <stdint.h>
#include "animserver.pb-c.h"

/* wire_bytes: the size of the message's frame on the wire (its payload). */
typedef void (*anim__response_fn)(void *ctx, const Animserver__Response *response, size_t wire_bytes);
typedef void (*anim__stream_fn)(void *ctx, const Animserver__StreamMessage *stream, size_t wire_bytes);

/* One entry per kind of ServerMessage; a NULL entry drops that kind. */
typedef struct {
  anim__response_fn response;
  void *response_ctx;
  anim__stream_fn stream;
  void *stream_ctx;
} anim__reader_handlers_t;

typedef struct {
  size_t max_frame;   /* largest accepted payload, bytes */
  uint8_t *buf;       /* bytes fed and not yet handed out: buf[start, end) */
  size_t start, end, cap;
  int failed;         /* sticky error */
} anim__reader_t;

void anim__reader_init(anim__reader_t *reader, size_t max_frame);
void anim__reader_free(anim__reader_t *reader);
/* Drops every byte buffered and a failure (a new connection). */
void anim__reader_reset(anim__reader_t *reader);

/* Room for at least min more bytes at *out_space (*out_len bytes); the
 * caller writes there and calls anim__reader_commit with how many it wrote.
 * 0 or ANIM_ENOMEM. */
int anim__reader_space(anim__reader_t *reader, size_t min, uint8_t **out_space, size_t *out_len);
void anim__reader_commit(anim__reader_t *reader, size_t n);
/* Copies len bytes in (the fuzzer's and tests' way in). 0 or ANIM_ENOMEM. */
int anim__reader_feed(anim__reader_t *reader, const uint8_t *data, size_t len);

/* Pops the next complete message and calls its handler. 1 when one was
 * handed out (or dropped: no handler), 0 when no complete frame is
 * buffered, ANIM_ETOOBIG (length over max_frame), ANIM_EPROTO (bad varint,
 * not a ServerMessage) or ANIM_ENOMEM; an error sticks. */
int anim__reader_dispatch(anim__reader_t *reader, const anim__reader_handlers_t *handlers);

/* Bytes buffered (for tests and accounting). */
size_t anim__reader_buffered(const anim__reader_t *reader);

#endif
