/*
 * test_client_callbacks.c: callbacks that call the library back, against
 * the real server.
 *
 * The library promises that a callback may call any of its functions,
 * blocking ones included: the reader hands out one message at a time, so a
 * blocking call inside a callback goes on with the next message in order
 * and the outer dispatch finds what is left. Checked here with pipelined
 * requests whose callbacks each make blocking calls (the answers to the
 * later requests then arrive inside the earlier callbacks, nested), with a
 * stream callback making blocking calls at every frame and finally
 * unsubscribing itself, and with a blocking call given up on a timeout
 * whose late answer must not reach it. Invalid uses first.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "anim_client.h"
#include "fixture.h"

#define TIMEOUT_MS 10000
#define PIPELINED 8
#define FRAMES 30

static anim_test_fixture_t fx;

static int setup(void **state) { return anim_test_fixture_start(&fx, "client_callbacks", NULL, 0); }
static int teardown(void **state) { return anim_test_fixture_stop(&fx); }

/* Polls until *count reaches want (fails the test after TIMEOUT_MS of nothing). */
static void poll_until(anim_client_t *c, const int *count, int want) {
  while (*count < want) {
    int rc = anim_client_poll(c, TIMEOUT_MS);
    assert_true(rc == 0 || rc == ANIM_ETIMEDOUT);
    assert_int_not_equal(rc, ANIM_ETIMEDOUT);
  }
}

/* ---- invalid uses ---------------------------------------------------------------------------- */

static void test_invalid_arguments_run_no_callback(void **state) {
  int calls = 0;
  uint64_t id = 0;
  assert_int_equal(anim_client_ping_send(fx.client, NULL, 4, NULL, &calls, &id), ANIM_EINVAL);
  assert_int_equal(anim_client_db_describe_send(fx.client, NULL, NULL, &calls, &id), ANIM_EINVAL);
  assert_int_equal(anim_client_search_send(fx.client, "default", NULL, 1, NULL, &calls, &id), ANIM_EINVAL);
  assert_int_equal(anim_client_characters_create_send(fx.client, "default", NULL, NULL, NULL, 0, NULL, &calls, &id),
                   ANIM_EINVAL);
  assert_int_equal(anim_client_pending(fx.client), 0);
  assert_int_equal(id, 0);
}

/* ---- pipelined answers, blocking calls in their callbacks ----------------------------------------- */

typedef struct {
  uint64_t ids[PIPELINED]; /* as sent */
  uint64_t order[PIPELINED]; /* as their callbacks ran */
  int ncalled;
  int depth, max_depth;    /* callbacks running inside callbacks */
  int nested_failures;
} pipeline_t;

static void ping_cb(anim_client_t *c, uint64_t id, int status, const anim_ping_result_t *result, void *data) {
  pipeline_t *p = data;
  assert_int_equal(status, 0);
  assert_int_equal(result->payload_len, sizeof id);
  uint64_t echoed;
  memcpy(&echoed, result->payload, sizeof echoed);
  assert_int_equal(echoed, id); /* this request's own answer, whole */
  assert_true(p->ncalled < PIPELINED);
  p->order[p->ncalled++] = id;
  p->depth++;
  if (p->depth > p->max_depth) p->max_depth = p->depth;
  /* Blocking calls: the later answers are dispatched in here, nested. */
  anim_db_summary_t summaries[4];
  int count = 0;
  anim_db_description_t *d = NULL;
  if (anim_client_ping(c, "nested", 6, NULL, TIMEOUT_MS) != 0) p->nested_failures++;
  if (anim_client_db_list(c, summaries, 4, &count, TIMEOUT_MS) != 0 || count < 1) p->nested_failures++;
  if (anim_client_db_describe(c, "no_such_database", &d, TIMEOUT_MS) != ANIM_ENOTFOUND || d) p->nested_failures++;
  p->depth--;
}

static void test_blocking_calls_inside_callbacks(void **state) {
  pipeline_t p;
  memset(&p, 0, sizeof p);
  /* Ids are consecutive: this one tells the next, so each payload can be its request's id. */
  uint64_t first;
  assert_int_equal(anim_client_ping_send(fx.client, NULL, 0, NULL, NULL, &first), 0);
  for (int i = 0; i < PIPELINED; i++) {
    uint64_t next = first + 1 + (uint64_t)i;
    assert_int_equal(anim_client_ping_send(fx.client, &next, sizeof next, ping_cb, &p, &p.ids[i]), 0);
    assert_int_equal(p.ids[i], next);
  }
  /* Let every answer reach the socket, so one read holds several. */
  usleep(100 * 1000);
  poll_until(fx.client, &p.ncalled, PIPELINED);
  assert_int_equal(p.nested_failures, 0);
  for (int i = 0; i < PIPELINED; i++) assert_int_equal(p.order[i], p.ids[i]); /* each once, in order */
  assert_int_equal(p.depth, 0);
  /* The answers come in request order, so callback i's nested ping is
   * answered after answers i+1.., which its wait must dispatch first:
   * every callback runs inside the one before it. */
  assert_int_equal(p.max_depth, PIPELINED);
  assert_int_equal(anim_client_pending(fx.client), 0);
  assert_int_equal(anim_client_ping(fx.client, "after", 5, NULL, TIMEOUT_MS), 0);
}

/* ---- a stream callback making blocking calls ------------------------------------------------------ */

typedef struct {
  uint64_t character, subscription;
  uint64_t last_tick;
  int frames, after_unsubscribe, failures;
  int unsubscribed;
} stream_t;

static void frame_cb(anim_client_t *c, const anim_stream_frame_t *f, void *data) {
  stream_t *s = data;
  if (s->unsubscribed) {
    s->after_unsubscribe++;
    return;
  }
  if (f->subscription != s->subscription || f->nposes != 1 || f->poses[0].character != s->character) s->failures++;
  if (s->frames > 0 && f->tick <= s->last_tick) s->failures++; /* in order, none twice, even nested */
  s->last_tick = f->tick;
  /* This frame's own number, taken before any blocking call: the later
   * frames those calls dispatch, nested, count on from s->frames. */
  int n = ++s->frames;
  if (n == FRAMES) {
    /* Its own subscription, from inside its callback, before this frame's
     * blocking calls, which would otherwise deliver the next frame first. */
    s->unsubscribed = 1;
    if (anim_client_unsubscribe(c, s->subscription, TIMEOUT_MS) != 0) s->failures++;
  }
  anim_character_state_t *st = NULL;
  if (anim_client_character_state(c, s->character, 0, &st, TIMEOUT_MS) != 0 || !st) s->failures++;
  anim_character_state_free(st);
  if (anim_client_ping(c, "frame", 5, NULL, TIMEOUT_MS) != 0) s->failures++;
}

static void test_stream_callback_makes_blocking_calls(void **state) {
  stream_t s;
  memset(&s, 0, sizeof s);
  assert_int_equal(anim_client_characters_create(fx.client, "default", NULL, NULL, 1, &s.character, TIMEOUT_MS), 0);
  anim_subscribe_options_t options;
  memset(&options, 0, sizeof options);
  options.characters = &s.character;
  options.ncharacters = 1;
  assert_int_equal(anim_client_subscribe(fx.client, &options, frame_cb, &s, &s.subscription, NULL, TIMEOUT_MS), 0);
  poll_until(fx.client, &s.frames, FRAMES);
  assert_int_equal(s.failures, 0);
  /* A few round trips more: frames still on their way are ignored. */
  for (int i = 0; i < 10; i++) assert_int_equal(anim_client_ping(fx.client, "x", 1, NULL, TIMEOUT_MS), 0);
  assert_int_equal(s.frames, FRAMES);
  assert_int_equal(s.after_unsubscribe, 0);
  assert_int_equal(anim_client_characters_destroy(fx.client, &s.character, 1, TIMEOUT_MS), 0);
}

/* ---- a blocking call given up ---------------------------------------------------------------------- */

static void test_timed_out_call_is_forgotten(void **state) {
  /* Timeout 0 gives up before any answer can arrive. */
  assert_int_equal(anim_client_ping(fx.client, "late", 4, NULL, 0), ANIM_ETIMEDOUT);
  assert_int_equal(anim_client_pending(fx.client), 0);
  /* Its late answer arrives during this call and must be dropped, not
   * delivered to the first call's (gone) waiter. */
  uint64_t rtt = 0;
  assert_int_equal(anim_client_ping(fx.client, "next", 4, &rtt, TIMEOUT_MS), 0);
  assert_true(rtt > 0);
  assert_int_equal(anim_client_pending(fx.client), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_invalid_arguments_run_no_callback),
      cmocka_unit_test(test_blocking_calls_inside_callbacks),
      cmocka_unit_test(test_stream_callback_makes_blocking_calls),
      cmocka_unit_test(test_timed_out_call_is_forgotten),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
