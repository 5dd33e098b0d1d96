/*
 * reader.c: the client's pure message reader (see reader.h).
 *
 * Pop, then dispatch: the consumed bytes are gone from the buffer before the
 * handler runs, and the decoded message is the handler's own, so nothing the
 * handler does to the reader (feeding, dispatching again) can disturb the
 * message in hand. The framing is wire/frame.h's (varint length, then the
 * payload); this reader differs from wire's in handing frames out one per
 * call instead of all of a feed through a callback, which is what makes a
 * nested dispatch safe. It does no I/O and knows nothing of requests.
 */
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "frame.h"
#include "reader.h"

void anim__reader_init(anim__reader_t *reader, size_t max_frame) {
  memset(reader, 0, sizeof *reader);
  reader->max_frame = max_frame;
}

void anim__reader_free(anim__reader_t *reader) {
  free(reader->buf);
  reader->buf = NULL;
  reader->start = reader->end = reader->cap = 0;
}

void anim__reader_reset(anim__reader_t *reader) {
  reader->start = reader->end = 0;
  reader->failed = 0;
}

size_t anim__reader_buffered(const anim__reader_t *reader) { return reader->end - reader->start; }

int anim__reader_space(anim__reader_t *reader, size_t min, uint8_t **out_space, size_t *out_len) {
  /* Move what is left to the front before growing: the buffer then holds at
   * most one partial frame plus one read. */
  if (reader->start > 0) {
    memmove(reader->buf, reader->buf + reader->start, reader->end - reader->start);
    reader->end -= reader->start;
    reader->start = 0;
  }
  if (!reader->buf || reader->cap - reader->end < min) {
    size_t cap = reader->cap ? reader->cap : 16384;
    while (cap - reader->end < min) cap *= 2;
    uint8_t *grown = realloc(reader->buf, cap);
    if (!grown) return ANIM_ENOMEM;
    reader->buf = grown;
    reader->cap = cap;
  }
  *out_space = reader->buf + reader->end;
  *out_len = reader->cap - reader->end;
  return 0;
}

void anim__reader_commit(anim__reader_t *reader, size_t n) { reader->end += n; }

int anim__reader_feed(anim__reader_t *reader, const uint8_t *data, size_t len) {
  if (len == 0) return 0;
  uint8_t *space;
  size_t room;
  int rc = anim__reader_space(reader, len, &space, &room);
  if (rc) return rc;
  memcpy(space, data, len);
  anim__reader_commit(reader, len);
  return 0;
}

/* The next frame's payload in place: 1 (found), 0 (incomplete) or an error. */
static int next_frame(anim__reader_t *reader, const uint8_t **out_payload, size_t *out_len) {
  size_t avail = reader->end - reader->start;
  if (avail == 0) return 0; /* also before the first feed, with no buffer yet */
  const uint8_t *data = reader->buf + reader->start;
  uint64_t len;
  int header = anim_varint_decode(data, avail, &len);
  if (header < 0) return ANIM_EPROTO;
  if (header == 0) return 0;
  /* Refused on its header, before a byte of it is waited for. */
  if (len > reader->max_frame) return ANIM_ETOOBIG;
  if (avail - (size_t)header < len) return 0;
  *out_payload = data + header;
  *out_len = (size_t)len;
  reader->start += (size_t)header + (size_t)len;
  return 1;
}

int anim__reader_dispatch(anim__reader_t *reader, const anim__reader_handlers_t *handlers) {
  if (reader->failed) return reader->failed;
  const uint8_t *payload;
  size_t len;
  int rc = next_frame(reader, &payload, &len);
  if (rc <= 0) {
    if (rc < 0) reader->failed = rc;
    return rc;
  }
  Animserver__ServerMessage *message = animserver__server_message__unpack(NULL, len, payload);
  if (!message) return reader->failed = ANIM_EPROTO;
  /* The frame's bytes are consumed: the handler may feed and dispatch again. */
  if (message->kind_case == ANIMSERVER__SERVER_MESSAGE__KIND_RESPONSE && message->response && handlers->response)
    handlers->response(handlers->response_ctx, message->response, len);
  else if (message->kind_case == ANIMSERVER__SERVER_MESSAGE__KIND_STREAM && message->stream && handlers->stream)
    handlers->stream(handlers->stream_ctx, message->stream, len);
  animserver__server_message__free_unpacked(message, NULL);
  return 1;
}
