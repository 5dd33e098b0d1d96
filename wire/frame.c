/* frame.c: varint-delimited frame reader and varint helpers (see frame.h). */
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "frame.h"

size_t anim_varint_size(uint64_t value) {
  size_t n = 1;
  while (value >= 0x80) {
    value >>= 7;
    n++;
  }
  return n;
}

size_t anim_varint_encode(uint64_t value, uint8_t *out) {
  size_t n = 0;
  while (value >= 0x80) {
    out[n++] = (uint8_t)(value | 0x80);
    value >>= 7;
  }
  out[n++] = (uint8_t)value;
  return n;
}

int anim_varint_decode(const uint8_t *data, size_t len, uint64_t *out_value) {
  uint64_t value = 0;
  for (size_t i = 0; i < ANIM_VARINT_MAX; i++) {
    if (i == len) return 0;
    uint64_t byte = data[i];
    /* The tenth byte may carry only the top bit of a 64-bit value. */
    if (i == ANIM_VARINT_MAX - 1 && byte > 1) return ANIM_EPROTO;
    value |= (byte & 0x7f) << (7 * i);
    if (!(byte & 0x80)) {
      *out_value = value;
      return (int)(i + 1);
    }
  }
  return ANIM_EPROTO;
}

void anim_frame_reader_init(anim_frame_reader_t *reader, size_t max_frame) {
  memset(reader, 0, sizeof *reader);
  reader->max_frame = max_frame;
}

void anim_frame_reader_free(anim_frame_reader_t *reader) {
  free(reader->partial);
  reader->partial = NULL;
  reader->partial_len = reader->partial_cap = 0;
}

size_t anim_frame_reader_buffered(const anim_frame_reader_t *reader) {
  return reader->header_len + reader->partial_len;
}

static int fail(anim_frame_reader_t *reader, int code) {
  reader->failed = code;
  anim_frame_reader_free(reader);
  return code;
}

/* Completes the length header from data; returns bytes consumed or an error. */
static int read_header(anim_frame_reader_t *reader, const uint8_t *data, size_t len) {
  size_t used = 0;
  while (used < len) {
    reader->header[reader->header_len++] = data[used++];
    uint64_t length;
    int n = anim_varint_decode(reader->header, reader->header_len, &length);
    if (n < 0) return fail(reader, n);
    if (n == 0) continue;
    if (length > reader->max_frame) return fail(reader, ANIM_ETOOBIG);
    reader->expected = (size_t)length;
    reader->have_header = 1;
    reader->header_len = 0;
    return (int)used;
  }
  return (int)used;
}

/* Copies what data offers of the current split frame; returns bytes used. */
static int append_partial(anim_frame_reader_t *reader, const uint8_t *data, size_t len) {
  if (reader->partial_cap < reader->expected) {
    uint8_t *grown = realloc(reader->partial, reader->expected);
    if (!grown) return fail(reader, ANIM_ENOMEM);
    reader->partial = grown;
    reader->partial_cap = reader->expected;
  }
  size_t want = reader->expected - reader->partial_len;
  size_t take = len < want ? len : want;
  memcpy(reader->partial + reader->partial_len, data, take);
  reader->partial_len += take;
  return (int)take;
}

static void frame_done(anim_frame_reader_t *reader) {
  reader->have_header = 0;
  reader->partial_len = 0;
  /* A big split frame should not pin its buffer for the connection's life. */
  if (reader->partial_cap > 64 * 1024) {
    free(reader->partial);
    reader->partial = NULL;
    reader->partial_cap = 0;
  }
}

int anim_frame_reader_feed(anim_frame_reader_t *reader, const uint8_t *data, size_t len,
                           anim_frame_cb cb, void *ctx) {
  if (reader->failed) return reader->failed;
  size_t pos = 0;
  while (pos < len || (reader->have_header && reader->expected == 0)) {
    if (!reader->have_header) {
      int n = read_header(reader, data + pos, len - pos);
      if (n < 0) return n;
      pos += (size_t)n;
      if (!reader->have_header) break;
    }
    const uint8_t *frame;
    if (reader->partial_len == 0 && len - pos >= reader->expected) {
      frame = data + pos; /* whole frame in this buffer: hand it out in place */
      pos += reader->expected;
    } else {
      int n = append_partial(reader, data + pos, len - pos);
      if (n < 0) return n;
      pos += (size_t)n;
      if (reader->partial_len < reader->expected) break;
      frame = reader->partial;
    }
    int rc = cb(ctx, frame, reader->expected);
    frame_done(reader); /* after the callback: frame may point into partial */
    if (rc != 0) return rc;
  }
  return 0;
}
