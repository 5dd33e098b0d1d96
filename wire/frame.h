/*
 * frame.h: length-delimited framing, the layer below protobuf on the wire.
 *
 * Every message travels as varint(length) followed by length bytes: the
 * standard "delimited" protobuf stream. The reader is pure: it is fed bytes
 * as they arrive and hands out complete frames through a callback; it never
 * touches a socket, so the server, the client library and the fuzzer share it.
 *
 * Memory is bounded: a frame that arrives whole inside one fed buffer is
 * handed out in place (no copy); only a frame split across feeds is copied,
 * into a buffer that never exceeds the frame-size limit. A length over the
 * limit is refused as soon as its varint is read, before anything is allocated.
 */
#ifndef ANIM_FRAME_H
#define ANIM_FRAME_H

#include <stddef.h>
#include <stdint.h>

/* Longest varint of a 64-bit value. */
#define ANIM_VARINT_MAX 10

/* Called once per complete frame; the bytes are valid only during the call.
 * A non-zero return stops feeding and is returned by anim_frame_reader_feed. */
typedef int (*anim_frame_cb)(void *ctx, const uint8_t *frame, size_t len);

typedef struct {
  size_t max_frame;  /* largest accepted payload, bytes */
  uint8_t *partial;  /* bytes of a frame split across feeds */
  size_t partial_len, partial_cap;
  uint8_t header[ANIM_VARINT_MAX]; /* a varint split across feeds */
  size_t header_len;
  size_t expected;   /* payload length once the header is complete */
  int have_header;
  int failed;        /* sticky: a stream that failed stays failed */
} anim_frame_reader_t;

void anim_frame_reader_init(anim_frame_reader_t *reader, size_t max_frame);
void anim_frame_reader_free(anim_frame_reader_t *reader);

/* Feeds len bytes; calls cb for every frame they complete. Returns 0, the
 * callback's non-zero value, ANIM_ETOOBIG (length over max_frame),
 * ANIM_EPROTO (varint longer than 10 bytes or over 64 bits) or ANIM_ENOMEM.
 * After an error the reader refuses further input with the same error. */
int anim_frame_reader_feed(anim_frame_reader_t *reader, const uint8_t *data, size_t len,
                           anim_frame_cb cb, void *ctx);

/* Bytes buffered for an incomplete frame (for memory accounting). */
size_t anim_frame_reader_buffered(const anim_frame_reader_t *reader);

/* Writes value as a varint into out (room for ANIM_VARINT_MAX); returns its length. */
size_t anim_varint_encode(uint64_t value, uint8_t *out);
/* Bytes anim_varint_encode would write. */
size_t anim_varint_size(uint64_t value);
/* Decodes a varint from data[0..len): returns bytes used (> 0), 0 when more
 * bytes are needed, ANIM_EPROTO when malformed. */
int anim_varint_decode(const uint8_t *data, size_t len, uint64_t *out_value);

#endif
