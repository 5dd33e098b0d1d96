/*
 * test_decode_budget.c: a request whose decode would pass the per-request
 * budget (--decode-budget-bytes) is refused with ERROR_LIMIT, and the
 * refusal names the field to send less of: the field whose occurrences
 * weigh most (followed into a single message down to the repeated field
 * inside it), how many there are and their bytes on the wire. Decoded with
 * srv_codec_decode_request under a small budget, as the server does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "anim_error.h"
#include "animserver.pb-c.h"
#include "server/codec.h"

#define BUDGET 16384

static uint8_t *pack(const Animserver__Request *r, size_t *out_len) {
  *out_len = animserver__request__get_packed_size(r);
  uint8_t *bytes = malloc(*out_len);
  assert_non_null(bytes);
  animserver__request__pack(r, bytes);
  return bytes;
}

/* An align request of n copies of one point (x, 2, 3) on each side, packed. */
static uint8_t *pack_align(uint64_t id, int n, float x, size_t *out_len) {
  Animserver__Vec3 p = ANIMSERVER__VEC3__INIT, *pointers[8] = {&p, &p, &p, &p, &p, &p, &p, &p};
  p.x = x, p.y = 2.0f, p.z = 3.0f;
  Animserver__AlignRequest a = ANIMSERVER__ALIGN_REQUEST__INIT;
  a.source = pointers, a.n_source = (size_t)n, a.target = pointers, a.n_target = (size_t)n;
  Animserver__Request r = ANIMSERVER__REQUEST__INIT;
  r.id = id, r.body_case = ANIMSERVER__REQUEST__BODY_ALIGN, r.align = &a;
  return pack(&r, out_len);
}

/* Decodes bytes under BUDGET; expects ELIMIT with a message that starts with prefix. */
static void expect_refusal(const uint8_t *bytes, size_t len, const char *prefix) {
  srv_codec_limits_t limits = {BUDGET, 4096, 1024, 10000, 100000};
  srv_request_t request;
  char err[256];
  int rc = srv_codec_decode_request(bytes, len, &limits, &request, err, sizeof err);
  srv_request_release(&request);
  if (rc != ANIM_ELIMIT) fail_msg("expected ELIMIT (%s...), got %d: %s", prefix, rc, rc ? err : "decoded");
  if (strncmp(err, prefix, strlen(prefix)) != 0) fail_msg("expected \"%s...\"\n     got \"%s\"", prefix, err);
  if (!strstr(err, "--decode-budget-bytes")) fail_msg("the flag is not named: %s", err);
}

/* align with n source points and 2 target points. */
static void test_a_repeated_field_is_named(void **state) {
  enum { N = 2000 };
  static Animserver__Vec3 points[N], *pointers[N];
  for (int i = 0; i < N; i++) {
    animserver__vec3__init(&points[i]);
    points[i].x = (float)i, points[i].y = 1.0f, points[i].z = 2.0f;
    pointers[i] = &points[i];
  }
  Animserver__AlignRequest a = ANIMSERVER__ALIGN_REQUEST__INIT;
  a.source = pointers, a.n_source = N, a.target = pointers, a.n_target = 2;
  Animserver__Request r = ANIMSERVER__REQUEST__INIT;
  r.id = 1, r.body_case = ANIMSERVER__REQUEST__BODY_ALIGN, r.align = &a;
  size_t len;
  uint8_t *bytes = pack(&r, &len);
  char prefix[96];
  size_t wire = 0;
  for (int i = 0; i < N; i++) wire += animserver__vec3__get_packed_size(&points[i]);
  snprintf(prefix, sizeof prefix, "align.source: 2000 of them (%zu bytes on the wire) weigh most", wire);
  expect_refusal(bytes, len, prefix);
  free(bytes);
}

/* A single message is followed down: search.query holds the weight, its
 * trajectory_positions are named. */
static void test_a_single_message_is_followed_down(void **state) {
  enum { N = 3000 };
  static Animserver__Vec2 points[N], *pointers[N];
  for (int i = 0; i < N; i++) {
    animserver__vec2__init(&points[i]);
    points[i].x = 1.0f, points[i].z = (float)i;
    pointers[i] = &points[i];
  }
  Animserver__SearchQuery q = ANIMSERVER__SEARCH_QUERY__INIT;
  q.trajectory_positions = pointers, q.n_trajectory_positions = N;
  Animserver__SearchRequest s = ANIMSERVER__SEARCH_REQUEST__INIT;
  s.database = "default", s.query = &q;
  Animserver__Request r = ANIMSERVER__REQUEST__INIT;
  r.id = 2, r.body_case = ANIMSERVER__REQUEST__BODY_SEARCH, r.search = &s;
  size_t len;
  uint8_t *bytes = pack(&r, &len);
  expect_refusal(bytes, len, "search.query.trajectory_positions: 3000 of them");
  free(bytes);
}

/* Tiny unknown fields expand most of all (protobuf-c keeps each one). */
static void test_unknown_fields_are_named(void **state) {
  enum { N = 1000 };
  uint8_t bytes[2 + 2 * N];
  bytes[0] = 0x08, bytes[1] = 3; /* id 3 */
  for (int i = 0; i < N; i++) bytes[2 + 2 * i] = 0x78, bytes[3 + 2 * i] = 0; /* field 15, varint 0 */
  expect_refusal(bytes, sizeof bytes, "(unknown fields): 1000 of them");
}

/* Under the budget, the same shapes decode. */
static void test_small_requests_decode(void **state) {
  size_t len;
  uint8_t *bytes = pack_align(4, 3, 1.0f, &len);
  srv_codec_limits_t limits = {BUDGET, 4096, 1024, 10000, 100000};
  srv_request_t request;
  char err[256];
  assert_int_equal(srv_codec_decode_request(bytes, len, &limits, &request, err, sizeof err), 0);
  srv_request_release(&request);
  free(bytes);
}

/* Mutated frames under a tiny budget: every refusal for the budget names a
 * field, whatever the bytes (the walk reads wire bytes the decoder gave up
 * on; leaks and stray reads show under make sanitize). */
static void test_mutated_frames_refused_with_a_name(void **state) {
  size_t len;
  uint8_t *seed = pack_align(5, 8, 1.0f, &len);
  srv_codec_limits_t limits = {256, 4096, 1024, 10000, 100000};
  uint32_t rng = 77;
  int refused = 0;
  for (int round = 0; round < 20000; round++) {
    uint8_t f[512];
    size_t n = len;
    memcpy(f, seed, len);
    for (int e = 0; e < 3; e++) {
      rng = rng * 1664525u + 1013904223u;
      size_t at = (rng >> 8) % n;
      unsigned kind = (rng >> 4) % 10; /* a flip, an inserted byte, or (rarely) the frame cut short */
      if (kind < 5) f[at] ^= (uint8_t)(1u << ((rng >> 20) % 8));
      else if (kind < 9 && n + 1 < sizeof f) memmove(f + at + 1, f + at, n - at), f[at] = (uint8_t)(rng >> 24), n++;
      else if (at) n = at;
    }
    srv_request_t request;
    char err[256];
    int rc = srv_codec_decode_request(f, n, &limits, &request, err, sizeof err);
    srv_request_release(&request);
    if (rc == ANIM_ELIMIT && strstr(err, "--decode-budget-bytes")) {
      refused++;
      if (err[0] == ':' || !strstr(err, " of them (")) fail_msg("a refusal without a field: %s", err);
    }
  }
  free(seed);
  printf("%d of 20000 mutated frames refused for the budget, each naming a field\n", refused);
  assert_true(refused > 1000);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_a_repeated_field_is_named),
      cmocka_unit_test(test_a_single_message_is_followed_down),
      cmocka_unit_test(test_unknown_fields_are_named),
      cmocka_unit_test(test_small_requests_decode),
      cmocka_unit_test(test_mutated_frames_refused_with_a_name),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
