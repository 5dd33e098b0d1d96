/*
 * test_codec_arena.c: a connection's decode arena (server/codec.h). Invalid
 * use first (a frame that is not a Request, from the arena, released);
 * then requests decoded and released one after another reuse one block;
 * requests kept alive pin theirs and the next ones move to a new block,
 * released in any order, some after the arena itself is freed; a request
 * larger than a block takes the rest from malloc; the decoded views read
 * the same values as without an arena. Leaks and stale reads show under
 * make sanitize.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "anim_error.h"
#include "animserver.pb-c.h"
#include "server/codec.h"

static const srv_codec_limits_t limits = {16u << 20, 4096, 1024, 10000, 100000};

/* A framed-less Request: id, a search (nqueries 0) or a batch search of nqueries, dims features each. */
static uint8_t *pack_search(uint64_t id, int nqueries, int dims, size_t *out_len) {
  static float features[128];
  for (int j = 0; j < dims; j++) features[j] = 0.25f * (float)j + (float)id;
  Animserver__SearchQuery *queries = calloc((size_t)(nqueries ? nqueries : 1), sizeof *queries);
  Animserver__SearchQuery **pointers = calloc((size_t)(nqueries ? nqueries : 1), sizeof *pointers);
  for (int i = 0; i < (nqueries ? nqueries : 1); i++) {
    Animserver__SearchQuery q = ANIMSERVER__SEARCH_QUERY__INIT;
    q.n_features = (size_t)dims, q.features = features, q.k = 1;
    queries[i] = q, pointers[i] = &queries[i];
  }
  Animserver__Request r = ANIMSERVER__REQUEST__INIT;
  Animserver__SearchRequest one = ANIMSERVER__SEARCH_REQUEST__INIT;
  Animserver__BatchSearchRequest batch = ANIMSERVER__BATCH_SEARCH_REQUEST__INIT;
  r.id = id;
  if (nqueries) {
    batch.database = "default", batch.n_queries = (size_t)nqueries, batch.queries = pointers;
    r.body_case = ANIMSERVER__REQUEST__BODY_BATCH_SEARCH, r.batch_search = &batch;
  } else {
    one.database = "default", one.query = &queries[0];
    r.body_case = ANIMSERVER__REQUEST__BODY_SEARCH, r.search = &one;
  }
  *out_len = animserver__request__get_packed_size(&r);
  uint8_t *bytes = malloc(*out_len);
  animserver__request__pack(&r, bytes);
  free(queries), free(pointers);
  return bytes;
}

static void decode_ok(srv_decode_arena_t *arena, const uint8_t *frame, size_t len, srv_request_t *out) {
  char err[256];
  int rc = srv_codec_decode_request_in(frame, len, &limits, arena, out, err, sizeof err);
  if (rc) fail_msg("decode: %s (%s)", anim_strerror(rc), err);
}

static void test_bad_frame_from_arena(void **state) {
  srv_decode_arena_t *arena = srv_decode_arena_new();
  assert_non_null(arena);
  static const uint8_t junk[] = {0xff, 0xff, 0xff, 0x01, 0x02};
  srv_request_t r;
  char err[256];
  assert_int_equal(srv_codec_decode_request_in(junk, sizeof junk, &limits, arena, &r, err, sizeof err), ANIM_EPROTO);
  srv_request_release(&r);
  srv_decode_arena_free(arena);
}

/* Released before the next decode: every request lands at the same place. */
static void test_sequential_requests_reuse_the_block(void **state) {
  srv_decode_arena_t *arena = srv_decode_arena_new();
  void *first = NULL;
  for (uint64_t id = 1; id <= 50; id++) {
    size_t len;
    uint8_t *frame = pack_search(id, 0, 27, &len);
    srv_request_t r;
    decode_ok(arena, frame, len, &r);
    assert_int_equal(r.type, SRV_REQ_SEARCH);
    assert_int_equal(r.id, id);
    assert_int_equal(r.body.search.nqueries, 1);
    assert_true(r.body.search.queries[0].features[26] == 0.25f * 26.0f + (float)id);
    if (!first) first = r.budget;
    assert_ptr_equal(r.budget, first); /* the block started over */
    srv_request_release(&r);
    free(frame);
  }
  srv_decode_arena_free(arena);
}

/* Kept requests pin their blocks: later ones move on, every value stays
 * right, and releases in any order (after the arena is gone too) free all. */
static void test_kept_requests_pin_their_blocks(void **state) {
  enum { KEPT = 300 };
  srv_decode_arena_t *arena = srv_decode_arena_new();
  static srv_request_t kept[KEPT];
  for (int i = 0; i < KEPT; i++) {
    size_t len;
    uint8_t *frame = pack_search((uint64_t)i + 1, i % 3, 48, &len); /* some batches of 1-2 */
    decode_ok(arena, frame, len, &kept[i]);
    free(frame);
  }
  for (int i = 0; i < KEPT; i++) {
    const srv_search_request_t *s =
        kept[i].type == SRV_REQ_BATCH_SEARCH ? &kept[i].body.batch_search : &kept[i].body.search;
    assert_int_equal(kept[i].id, (uint64_t)i + 1);
    for (int q = 0; q < s->nqueries; q++)
      if (s->queries[q].features[47] != 0.25f * 47.0f + (float)(i + 1)) fail_msg("request %d query %d changed", i, q);
  }
  for (int i = 0; i < KEPT; i += 2) srv_request_release(&kept[i]);
  srv_decode_arena_free(arena); /* the odd ones still hold their blocks */
  for (int i = KEPT - 1; i > 0; i -= 2) srv_request_release(&kept[i]);
}

/* Bigger than a block: the rest from malloc, freed at the release. */
static void test_large_request_spills_to_malloc(void **state) {
  srv_decode_arena_t *arena = srv_decode_arena_new();
  size_t len;
  uint8_t *frame = pack_search(7, 2000, 64, &len); /* 2,000 x 64 floats: 512 kB converted */
  srv_request_t r;
  decode_ok(arena, frame, len, &r);
  assert_int_equal(r.body.batch_search.nqueries, 2000);
  assert_true(r.body.batch_search.queries[1999].features[63] == 0.25f * 63.0f + 7.0f);
  srv_request_release(&r);
  free(frame);
  frame = pack_search(8, 0, 27, &len); /* and the block is still good for the next one */
  decode_ok(arena, frame, len, &r);
  assert_int_equal(r.id, 8);
  srv_request_release(&r);
  free(frame);
  srv_decode_arena_free(arena);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bad_frame_from_arena),
      cmocka_unit_test(test_sequential_requests_reuse_the_block),
      cmocka_unit_test(test_kept_requests_pin_their_blocks),
      cmocka_unit_test(test_large_request_spills_to_malloc),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
