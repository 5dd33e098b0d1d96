/*
 * fuzz_frame.c: libFuzzer target for the varint-delimited frame reader.
 *
 * Input layout: byte 0-1 the reader's max_frame (little-endian, so small
 * limits and ETOOBIG are reached), byte 2-3 the seed of the chunking, byte 4
 * the frame after which the callback asks to stop (0: never), the rest the
 * byte stream. The stream is fed in chunks of 1..64 bytes chosen by the seed,
 * and the result is checked against feeding the whole stream at once: the
 * same frames, byte for byte, and the same final status (a differential
 * oracle; any difference aborts). Each delivered frame is also checked to be
 * exactly the stream's bytes after its length header.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_RECORDED 4096

typedef struct {
  int count, stop_after;
  uint64_t hash[MAX_RECORDED]; /* FNV-1a of each frame */
  size_t len[MAX_RECORDED];
  const uint8_t *stream; /* the stream fed, to check frames against */
  size_t stream_len, expect_at; /* where the next frame's header starts */
} record_t;

static uint64_t fnv1a(const uint8_t *p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

static int on_frame(void *ctx, const uint8_t *frame, size_t len) {
  record_t *r = ctx;
  /* The frame must be the stream's next varint + len bytes; the varint is
   * decoded here independently of frame.c (non-minimal encodings are valid). */
  size_t n = 0;
  uint64_t value = 0;
  for (;; n++) {
    if (n == ANIM_VARINT_MAX || r->expect_at + n >= r->stream_len) abort();
    uint8_t byte = r->stream[r->expect_at + n];
    value |= (uint64_t)(byte & 0x7f) << (7 * n);
    if (!(byte & 0x80)) break;
  }
  n++;
  if (value != len || r->expect_at + n + len > r->stream_len) abort();
  if (len && memcmp(r->stream + r->expect_at + n, frame, len) != 0) abort();
  r->expect_at += n + len;
  if (r->count < MAX_RECORDED) {
    r->hash[r->count] = fnv1a(frame, len);
    r->len[r->count] = len;
  }
  r->count++;
  return r->stop_after && r->count >= r->stop_after ? 99 : 0;
}

/* Feeds the stream in chunks (chunk_seed 0: all at once); returns the reader's final status. */
static int run(const uint8_t *stream, size_t len, size_t max_frame, uint32_t chunk_seed, record_t *r) {
  anim_frame_reader_t reader;
  anim_frame_reader_init(&reader, max_frame);
  int rc = 0;
  size_t pos = 0;
  uint32_t x = chunk_seed | 1;
  while (pos < len) {
    size_t chunk = len - pos;
    if (chunk_seed) {
      x ^= x << 13, x ^= x >> 17, x ^= x << 5; /* xorshift32 */
      size_t want = 1 + x % 64;
      if (want < chunk) chunk = want;
    }
    rc = anim_frame_reader_feed(&reader, stream + pos, chunk, on_frame, r);
    pos += chunk;
    if (rc) break;
  }
  /* Whatever the reader holds must be within the frame limit. */
  if (anim_frame_reader_buffered(&reader) > max_frame + ANIM_VARINT_MAX) abort();
  if (rc && rc != 99 && anim_frame_reader_feed(&reader, stream, len, on_frame, r) != rc) abort(); /* sticky */
  anim_frame_reader_free(&reader);
  return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 5) return 0;
  size_t max_frame = (size_t)data[0] | (size_t)data[1] << 8;
  uint32_t seed = (uint32_t)data[2] | (uint32_t)data[3] << 8;
  int stop_after = data[4];
  const uint8_t *stream = data + 5;
  size_t len = size - 5;

  static record_t whole, chunked;
  memset(&whole, 0, sizeof whole);
  memset(&chunked, 0, sizeof chunked);
  whole.stop_after = chunked.stop_after = stop_after;
  whole.stream = chunked.stream = stream;
  whole.stream_len = chunked.stream_len = len;
  int rc_whole = run(stream, len, max_frame, 0, &whole);
  int rc_chunked = run(stream, len, max_frame, seed ? seed : 1, &chunked);

  if (rc_whole != rc_chunked || whole.count != chunked.count) abort();
  int n = whole.count < MAX_RECORDED ? whole.count : MAX_RECORDED;
  for (int i = 0; i < n; i++)
    if (whole.len[i] != chunked.len[i] || whole.hash[i] != chunked.hash[i]) abort();
  return 0;
}
