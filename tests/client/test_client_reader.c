/*
 * test_client_reader.c: the client's pure parts without a server: the
 * reader (frames in, one message out per dispatch) and the pending table.
 *
 * Invalid input first: a length over the limit refused on its header, a
 * bad varint, a payload that is not a ServerMessage, each failure sticking
 * until a reset. Then behaviour: a message split anywhere comes out once
 * whole; messages fed together come out one per dispatch; a handler that
 * feeds and dispatches again (what a blocking call inside a callback does)
 * sees the next message in order, and the outer dispatch goes on after it
 * with nothing lost or repeated. The pending table: FIFO order, lookups by
 * id, and the delivery to a blocking caller.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "client/pending.h"
#include "client/reader.h"
#include "anim_error.h"
#include "frame.h"

#define MAX_FRAME 4096

/* A framed ServerMessage answering request id with a ping; *out_len bytes at out. */
static void framed_response(uint64_t id, uint8_t *out, size_t cap, size_t *out_len) {
  Animserver__ServerMessage m = ANIMSERVER__SERVER_MESSAGE__INIT;
  Animserver__Response r = ANIMSERVER__RESPONSE__INIT;
  Animserver__PingResponse ping = ANIMSERVER__PING_RESPONSE__INIT;
  ping.server_time_us = 1000 + id;
  r.id = id;
  r.body_case = ANIMSERVER__RESPONSE__BODY_PING;
  r.ping = &ping;
  m.kind_case = ANIMSERVER__SERVER_MESSAGE__KIND_RESPONSE;
  m.response = &r;
  size_t size = animserver__server_message__get_packed_size(&m);
  assert_true(size + ANIM_VARINT_MAX <= cap);
  size_t header = anim_varint_encode(size, out);
  animserver__server_message__pack(&m, out + header);
  *out_len = header + size;
}

/* What handlers saw, in order. */
typedef struct {
  anim__reader_t *reader;
  anim__reader_handlers_t *handlers;
  uint64_t ids[16];
  int n;
  const uint8_t *more; /* fed by the handler of the first message, then dispatched (nested) */
  size_t more_len;
  int nested_rc;
} seen_t;

static void on_response(void *ctx, const Animserver__Response *r, size_t wire_bytes) {
  seen_t *seen = ctx;
  assert_true(seen->n < 16);
  assert_non_null(r->ping);
  assert_int_equal(r->ping->server_time_us, 1000 + r->id); /* the message is whole */
  seen->ids[seen->n++] = r->id;
  if (seen->more) {
    const uint8_t *more = seen->more;
    seen->more = NULL;
    /* What a blocking call in a callback does: read more, dispatch the next. */
    assert_int_equal(anim__reader_feed(seen->reader, more, seen->more_len), 0);
    seen->nested_rc = anim__reader_dispatch(seen->reader, seen->handlers);
  }
}

static void reader_setup(anim__reader_t *reader, anim__reader_handlers_t *handlers, seen_t *seen) {
  anim__reader_init(reader, MAX_FRAME);
  memset(handlers, 0, sizeof *handlers);
  memset(seen, 0, sizeof *seen);
  handlers->response = on_response;
  handlers->response_ctx = seen;
  seen->reader = reader;
  seen->handlers = handlers;
}

/* ---- invalid input ------------------------------------------------------------------------ */

static void test_oversize_length_refused_on_its_header(void **state) {
  anim__reader_t reader;
  anim__reader_handlers_t handlers;
  seen_t seen;
  reader_setup(&reader, &handlers, &seen);
  uint8_t header[ANIM_VARINT_MAX];
  size_t n = anim_varint_encode(MAX_FRAME + 1, header);
  assert_int_equal(anim__reader_feed(&reader, header, n), 0);
  /* Not one byte of the payload was needed to refuse it. */
  assert_int_equal(anim__reader_dispatch(&reader, &handlers), ANIM_ETOOBIG);
  uint8_t good[64];
  size_t len;
  framed_response(1, good, sizeof good, &len);
  assert_int_equal(anim__reader_feed(&reader, good, len), 0);
  assert_int_equal(anim__reader_dispatch(&reader, &handlers), ANIM_ETOOBIG); /* sticks */
  assert_int_equal(seen.n, 0);
  anim__reader_reset(&reader);
  assert_int_equal(anim__reader_feed(&reader, good, len), 0);
  assert_int_equal(anim__reader_dispatch(&reader, &handlers), 1);
  assert_int_equal(seen.n, 1);
  anim__reader_free(&reader);
}

static void test_bad_varint_and_bad_message(void **state) {
  anim__reader_t reader;
  anim__reader_handlers_t handlers;
  seen_t seen;
  reader_setup(&reader, &handlers, &seen);
  uint8_t varint[ANIM_VARINT_MAX + 1];
  memset(varint, 0xff, sizeof varint); /* never ends */
  assert_int_equal(anim__reader_feed(&reader, varint, sizeof varint), 0);
  assert_int_equal(anim__reader_dispatch(&reader, &handlers), ANIM_EPROTO);
  anim__reader_reset(&reader);
  /* A frame whose payload is not a ServerMessage (field 1 as a truncated varint). */
  const uint8_t junk[] = {3, 0x08, 0xff, 0xff};
  assert_int_equal(anim__reader_feed(&reader, junk, sizeof junk), 0);
  assert_int_equal(anim__reader_dispatch(&reader, &handlers), ANIM_EPROTO);
  assert_int_equal(anim__reader_dispatch(&reader, &handlers), ANIM_EPROTO);
  assert_int_equal(seen.n, 0);
  anim__reader_free(&reader);
}

/* ---- behaviour ------------------------------------------------------------------------------- */

static void test_split_anywhere_comes_out_once(void **state) {
  uint8_t bytes[64];
  size_t len;
  framed_response(7, bytes, sizeof bytes, &len);
  for (size_t cut = 0; cut <= len; cut++) {
    anim__reader_t reader;
    anim__reader_handlers_t handlers;
    seen_t seen;
    reader_setup(&reader, &handlers, &seen);
    assert_int_equal(anim__reader_feed(&reader, bytes, cut), 0);
    assert_int_equal(anim__reader_dispatch(&reader, &handlers), cut == len ? 1 : 0);
    assert_int_equal(anim__reader_feed(&reader, bytes + cut, len - cut), 0);
    if (cut < len) assert_int_equal(anim__reader_dispatch(&reader, &handlers), 1);
    assert_int_equal(anim__reader_dispatch(&reader, &handlers), 0);
    assert_int_equal(seen.n, 1);
    assert_int_equal(seen.ids[0], 7);
    assert_int_equal(anim__reader_buffered(&reader), 0);
    anim__reader_free(&reader);
  }
}

static void test_one_message_per_dispatch(void **state) {
  anim__reader_t reader;
  anim__reader_handlers_t handlers;
  seen_t seen;
  reader_setup(&reader, &handlers, &seen);
  uint8_t bytes[256];
  size_t len = 0, n;
  for (uint64_t id = 1; id <= 3; id++) {
    framed_response(id, bytes + len, sizeof bytes - len, &n);
    len += n;
  }
  assert_int_equal(anim__reader_feed(&reader, bytes, len), 0);
  for (int i = 1; i <= 3; i++) {
    assert_int_equal(anim__reader_dispatch(&reader, &handlers), 1);
    assert_int_equal(seen.n, i);
  }
  assert_int_equal(anim__reader_dispatch(&reader, &handlers), 0);
  anim__reader_free(&reader);
}

/* Messages 1 and 2 fed; 1's handler feeds 3 and 4 and dispatches once
 * (nested): it must get 2, and the outer dispatches then 3 and 4. */
static void test_nested_dispatch_keeps_order(void **state) {
  anim__reader_t reader;
  anim__reader_handlers_t handlers;
  seen_t seen;
  reader_setup(&reader, &handlers, &seen);
  uint8_t first[128], more[128];
  size_t first_len = 0, more_len = 0, n;
  for (uint64_t id = 1; id <= 2; id++) {
    framed_response(id, first + first_len, sizeof first - first_len, &n);
    first_len += n;
  }
  for (uint64_t id = 3; id <= 4; id++) {
    framed_response(id, more + more_len, sizeof more - more_len, &n);
    more_len += n;
  }
  /* Half of message 4 only: the rest arrives after the nested dispatch. */
  seen.more = more;
  seen.more_len = more_len - n / 2;
  assert_int_equal(anim__reader_feed(&reader, first, first_len), 0);
  assert_int_equal(anim__reader_dispatch(&reader, &handlers), 1);
  assert_int_equal(seen.nested_rc, 1);
  assert_int_equal(seen.n, 2);
  assert_int_equal(anim__reader_dispatch(&reader, &handlers), 1);
  assert_int_equal(anim__reader_dispatch(&reader, &handlers), 0);
  assert_int_equal(anim__reader_feed(&reader, more + more_len - n / 2, n / 2), 0);
  assert_int_equal(anim__reader_dispatch(&reader, &handlers), 1);
  assert_int_equal(anim__reader_dispatch(&reader, &handlers), 0);
  assert_int_equal(seen.n, 4);
  for (int i = 0; i < 4; i++) assert_int_equal(seen.ids[i], (uint64_t)i + 1);
  anim__reader_free(&reader);
}

/* ---- the pending table --------------------------------------------------------------------------- */

static void complete_nothing(anim_client_t *client, anim__pending_t *p, int status, const Animserver__Response *r) {}

static void test_pending_table(void **state) {
  anim__pending_table_t table = {0};
  for (uint64_t id = 1; id <= 4; id++) {
    anim__pending_t *p = anim__pending_new(ANIMSERVER__RESPONSE__BODY_PING, complete_nothing, NULL, NULL, NULL);
    assert_non_null(p);
    p->id = id;
    anim__pending_add(&table, p);
  }
  assert_int_equal(table.count, 4);
  assert_null(anim__pending_take(&table, 9));
  anim__pending_t *p = anim__pending_take(&table, 4); /* the tail */
  assert_int_equal(p->id, 4);
  anim__pending_free(p);
  p = anim__pending_take(&table, 2); /* the middle */
  assert_int_equal(p->id, 2);
  anim__pending_free(p);
  p = anim__pending_new(ANIMSERVER__RESPONSE__BODY_PING, complete_nothing, NULL, NULL, malloc(8));
  p->id = 5;
  anim__pending_add(&table, p); /* after a tail was taken: still last */
  assert_non_null(anim__pending_find(&table, 5));
  assert_int_equal(table.count, 3);
  const uint64_t order[] = {1, 3, 5};
  for (int i = 0; i < 3; i++) {
    p = anim__pending_pop(&table);
    assert_int_equal(p->id, order[i]);
    anim__pending_free(p); /* and its extra */
  }
  assert_null(anim__pending_pop(&table));
  assert_int_equal(table.count, 0);
  assert_null(table.head);
  assert_null(table.tail);
}

static void test_pending_deliver(void **state) {
  anim__pending_t *p = anim__pending_new(ANIMSERVER__RESPONSE__BODY_PING, complete_nothing, NULL, NULL, NULL);
  uint64_t result[2] = {11, 22};
  assert_int_equal(anim__pending_deliver(p, 0, result, sizeof result), 0); /* nobody waits: the callback's */
  uint64_t out = 0;
  anim__waiter_t w = {0};
  w.out = &out;
  w.out_size = sizeof out;
  p->waiter = &w;
  assert_int_equal(anim__pending_deliver(p, 0, result, sizeof result), 1);
  assert_true(w.done);
  assert_int_equal(out, 11); /* truncated to what the caller has room for */
  assert_int_equal(w.size, sizeof result);
  anim__waiter_t failed = {0};
  failed.out = &out;
  failed.out_size = sizeof out;
  p->waiter = &failed;
  out = 0;
  assert_int_equal(anim__pending_deliver(p, ANIM_ECLOSED, result, sizeof result), 1);
  assert_int_equal(failed.status, ANIM_ECLOSED);
  assert_int_equal(out, 0); /* nothing copied on failure */
  anim__pending_free(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_oversize_length_refused_on_its_header),
      cmocka_unit_test(test_bad_varint_and_bad_message),
      cmocka_unit_test(test_split_anywhere_comes_out_once),
      cmocka_unit_test(test_one_message_per_dispatch),
      cmocka_unit_test(test_nested_dispatch_keeps_order),
      cmocka_unit_test(test_pending_table),
      cmocka_unit_test(test_pending_deliver),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
