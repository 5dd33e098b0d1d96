/*
 * test_history_service.c: a character's history (set_history, character_history)
 * and its live parameters (set_character_params), end to end through the
 * real server and the real client library.
 *
 * Invalid requests first (each with its code and the field it names; what
 * was refused applied nothing). Then: the history of a walking character
 * equals what its stream showed, tick by tick; a searched tick's
 * candidates equal a `search` of its recorded query with its recorded
 * settings, order and costs to the bit; parameters changed live show in
 * character_state; the histories' memory is counted in the characters'
 * bytes and held to the per-connection limit, and given back when off.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "anim_client.h"
#include "fixture.h"
#include "server_proc.h"

#define TIMEOUT_MS 10000
#define MAX_SECONDS 10      /* --max-history-seconds here */
#define CONNECTION_LIMIT 2000000 /* --max-history-memory-per-connection here: three 10 s histories, not four */

static anim_test_fixture_t fx;

static int setup(void **state) {
  const char *args[] = {"--max-history-seconds", "10", "--max-history-memory-per-connection", "2000000", NULL};
  return anim_test_fixture_start(&fx, "history", args, 1);
}

static int teardown(void **state) { return anim_test_fixture_stop(&fx); }

static void drain_frames(anim_client_t *c) {
  anim_stream_frame_t *f;
  while (anim_client_next_frame(c, &f, 0) == 0) anim_stream_frame_free(f);
}

static void assert_error_names(const char *field) {
  const char *message = anim_client_last_error(fx.client);
  if (!strstr(message, field)) fail_msg("the error \"%s\" does not name %s", message, field);
}

static anim_character_state_t *state_of(uint64_t id) {
  anim_character_state_t *st = NULL;
  assert_int_equal(anim_client_character_state(fx.client, id, 0, &st, TIMEOUT_MS), 0);
  return st;
}

/* ---- invalid requests ------------------------------------------------------------------------ */

static void test_invalid_requests(void **state) {
  uint64_t mine, theirs, gone;
  assert_int_equal(anim_client_characters_create(fx.client, "default", NULL, NULL, 1, &mine, TIMEOUT_MS), 0);
  anim_client_t *other = anim_test_connect(&fx.server);
  assert_int_equal(anim_client_characters_create(other, "default", NULL, NULL, 1, &theirs, TIMEOUT_MS), 0);
  assert_int_equal(anim_client_characters_create(fx.client, "default", NULL, NULL, 1, &gone, TIMEOUT_MS), 0);
  assert_int_equal(anim_client_characters_destroy(fx.client, &gone, 1, TIMEOUT_MS), 0);

  /* set_history */
  assert_int_equal(anim_client_history_set(fx.client, gone, 5.0f, 0, NULL, TIMEOUT_MS), ANIM_ENOTFOUND);
  assert_error_names("set_history.character");
  assert_int_equal(anim_client_history_set(fx.client, theirs, 5.0f, 0, NULL, TIMEOUT_MS), ANIM_EPERM);
  assert_int_equal(anim_client_history_set(fx.client, mine, MAX_SECONDS + 1.0f, 0, NULL, TIMEOUT_MS), ANIM_ERANGE);
  assert_error_names("--max-history-seconds");
  assert_int_equal(anim_client_history_set(fx.client, mine, 5.0f, 65, NULL, TIMEOUT_MS), ANIM_EINVAL);
  assert_error_names("candidates");
  assert_int_equal(anim_client_history_set(fx.client, mine, NAN, 0, NULL, TIMEOUT_MS), ANIM_EINVAL); /* client */

  /* character_history: off, gone, a bad span */
  anim_character_history_t *h = NULL;
  anim_history_span_t last = {0, 0, 1.0f, 0, 0};
  assert_int_equal(anim_client_history_get(fx.client, mine, &last, &h, TIMEOUT_MS), ANIM_ENOTFOUND);
  assert_error_names("history is off");
  assert_int_equal(anim_client_history_get(fx.client, gone, &last, &h, TIMEOUT_MS), ANIM_ENOTFOUND);
  assert_error_names("no such character");
  anim_history_span_t both = {1, 2, 1.0f, 0, 0}, backwards = {5, 2, 0.0f, 0, 0};
  assert_int_equal(anim_client_history_get(fx.client, mine, &both, &h, TIMEOUT_MS), ANIM_EINVAL);
  assert_int_equal(anim_client_history_get(fx.client, mine, &backwards, &h, TIMEOUT_MS), ANIM_EINVAL);
  assert_error_names("from_tick");

  /* set_character_params: every field checked, nothing applied in part */
  anim_character_params_t p;
  anim_character_params_init(&p);
  p.forward_speed = 3.0f, p.inertialize_halflife = -0.2f;
  assert_int_equal(anim_client_character_params_set(fx.client, mine, &p, NULL, TIMEOUT_MS), ANIM_EINVAL);
  assert_error_names("inertialize_halflife");
  anim_character_params_init(&p);
  p.forward_speed = 3.0f, p.back_speed = 1000.0f;
  assert_int_equal(anim_client_character_params_set(fx.client, mine, &p, NULL, TIMEOUT_MS), ANIM_EINVAL);
  assert_error_names("back_speed");
  anim_character_params_init(&p);
  p.input_f = INFINITY;
  assert_int_equal(anim_client_character_params_set(fx.client, mine, &p, NULL, TIMEOUT_MS), ANIM_ENONFINITE);
  anim_character_params_init(&p);
  p.search_interval = 601;
  assert_int_equal(anim_client_character_params_set(fx.client, mine, &p, NULL, TIMEOUT_MS), ANIM_EINVAL);
  assert_error_names("search_interval");
  anim_character_state_t *st = state_of(mine);
  assert_true(st->params.forward_speed == 1.75f); /* the default: no refused request applied any field */
  assert_true(st->params.inertialize_halflife == 0.1f);
  assert_int_equal(st->params.search_interval, 10);
  anim_character_state_free(st);
  anim_character_params_init(&p);
  p.forward_speed = 3.0f;
  assert_int_equal(anim_client_character_params_set(fx.client, theirs, &p, NULL, TIMEOUT_MS), ANIM_EPERM);
  assert_int_equal(anim_client_character_params_set(fx.client, gone, &p, NULL, TIMEOUT_MS), ANIM_ENOTFOUND);
  st = NULL;
  assert_int_equal(anim_client_character_state(other, theirs, 0, &st, TIMEOUT_MS), 0);
  assert_true(st->params.forward_speed == 1.75f);
  anim_character_state_free(st);

  /* Another connection may read a history it did not turn on; not turn it off. */
  assert_int_equal(anim_client_history_set(other, theirs, 1.0f, 0, NULL, TIMEOUT_MS), 0);
  assert_int_equal(anim_client_history_set(fx.client, theirs, 0.0f, 0, NULL, TIMEOUT_MS), ANIM_EPERM);
  for (int i = 0; i < 200; i++) { /* the first tick records */
    int rc = anim_client_history_get(fx.client, theirs, &last, &h, TIMEOUT_MS);
    if (rc == 0) break;
    assert_int_equal(rc, ANIM_ERANGE); /* nothing held yet */
    usleep(5000);
  }
  assert_non_null(h);
  assert_true(h->nticks >= 1);
  anim_character_history_free(h);
  /* ... and a destroyed character's history is gone with it. */
  assert_int_equal(anim_client_characters_destroy(other, &theirs, 1, TIMEOUT_MS), 0);
  h = NULL;
  assert_int_equal(anim_client_history_get(fx.client, theirs, &last, &h, TIMEOUT_MS), ANIM_ENOTFOUND);
  anim_client_close(other);
  assert_int_equal(anim_client_characters_destroy(fx.client, &mine, 1, TIMEOUT_MS), 0);
}

/* ---- the history equals the stream ---------------------------------------------------------- */

#define STREAM_TICKS 150

static void test_history_equals_stream(void **state) {
  uint64_t id, sub;
  assert_int_equal(anim_client_characters_create(fx.client, "default", NULL, NULL, 1, &id, TIMEOUT_MS), 0);
  anim_history_info_t info;
  assert_int_equal(anim_client_history_set(fx.client, id, 5.0f, 8, &info, TIMEOUT_MS), 0);
  assert_true(info.capacity >= 5 * 60 - 1 && info.capacity <= 5 * 60 + 1); /* 60 Hz */
  assert_true(info.bytes > 0);
  drain_frames(fx.client);
  anim_subscribe_options_t o = {&id, 1, 0, 1, ANIM_POSE_FLOAT, 0, 0};
  assert_int_equal(anim_client_subscribe(fx.client, &o, NULL, NULL, &sub, NULL, TIMEOUT_MS), 0);
  /* Walk, then turn: periodic searches, replans and transitions. */
  uint64_t ticks[STREAM_TICKS];
  uint32_t frames[STREAM_TICKS];
  int transition[STREAM_TICKS], n = 0;
  anim_character_input_t in;
  anim_character_input_stick(&in, 0.0f, 0.8f, 0.0f, 0);
  assert_int_equal(anim_client_characters_set_input(fx.client, &id, &in, 1, NULL, TIMEOUT_MS), 0);
  while (n < STREAM_TICKS) {
    anim_stream_frame_t *f = NULL;
    assert_int_equal(anim_client_next_frame(fx.client, &f, TIMEOUT_MS), 0);
    if (f->subscription == sub && f->nposes == 1) {
      ticks[n] = f->tick, frames[n] = f->poses[0].frame, transition[n] = f->poses[0].transition, n++;
      if (n == STREAM_TICKS / 2) {
        anim_character_input_stick(&in, 0.9f, 0.0f, 0.0f, 0);
        assert_int_equal(anim_client_characters_set_input(fx.client, &id, &in, 1, NULL, TIMEOUT_MS), 0);
      }
    }
    anim_stream_frame_free(f);
  }
  assert_int_equal(anim_client_unsubscribe(fx.client, sub, TIMEOUT_MS), 0);
  /* Every tick the stream showed, by tick range. */
  anim_character_history_t *h = NULL;
  anim_history_span_t span = {ticks[0], ticks[n - 1], 0.0f, 0, 0};
  assert_int_equal(anim_client_history_get(fx.client, id, &span, &h, TIMEOUT_MS), 0);
  assert_true(h->nticks >= n);
  int matched = 0, searched = 0, transitions = 0, reasons = 0;
  for (int i = 0, j = 0; i < n; i++) {
    while (j < h->nticks && h->ticks[j].tick < ticks[i]) j++;
    assert_true(j < h->nticks);
    const anim_history_tick_t *t = &h->ticks[j];
    assert_true(t->tick == ticks[i]); /* every streamed tick is in the history */
    if (t->frame != frames[i])
      fail_msg("tick %llu: history frame %u, stream frame %u", (unsigned long long)t->tick, t->frame, frames[i]);
    assert_int_equal(t->transitioned, transition[i]);
    if (t->searched) {
      searched++;
      reasons |= (int)t->reasons;
      assert_true(t->reasons != 0);
      assert_true(t->ncandidates >= 1 && t->ncandidates <= 8);
      assert_int_equal(t->chosen, (int)t->candidates[0].frame); /* the tick's own search chose candidate 0 */
      for (int c = 1; c < t->ncandidates; c++) assert_true(t->candidates[c - 1].cost <= t->candidates[c].cost);
    } else {
      assert_int_equal(t->ncandidates, 0);
      assert_int_equal(t->chosen, -1);
    }
    transitions += t->transitioned;
    matched++;
  }
  assert_int_equal(matched, n);
  assert_true(searched >= STREAM_TICKS / 10 - 1); /* every 10 frames at least */
  assert_true(transitions >= 1);
  assert_true(reasons & ANIM_SEARCH_REASON_PERIODIC);
  assert_true(reasons & ANIM_SEARCH_REASON_REPLAN); /* the turn */
  assert_true(h->ngroups >= 2);
  printf("%d ticks matched the stream, %d searched, %d transitions\n", matched, searched, transitions);
  uint64_t first = h->first_tick, last_tick = h->last_tick;
  anim_character_history_free(h);

  /* Spans outside what is held are refused, naming the ticks held. */
  h = NULL;
  anim_history_span_t before = {first - 1, last_tick, 0.0f, 0, 0};
  if (first > 0) {
    assert_int_equal(anim_client_history_get(fx.client, id, &before, &h, TIMEOUT_MS), ANIM_ERANGE);
    assert_error_names("from_tick");
  }
  anim_history_span_t after = {first, last_tick + 100000, 0.0f, 0, 0};
  assert_int_equal(anim_client_history_get(fx.client, id, &after, &h, TIMEOUT_MS), ANIM_ERANGE);
  assert_error_names("to_tick");
  anim_history_span_t longer = {0, 0, 5.5f, 0, 0};
  assert_int_equal(anim_client_history_get(fx.client, id, &longer, &h, TIMEOUT_MS), ANIM_ERANGE);
  assert_error_names("last_seconds");
  /* The last second with poses: 60 ticks (or what the clock ran), each with every bone. */
  anim_history_span_t second = {0, 0, 1.0f, 1, 0};
  assert_int_equal(anim_client_history_get(fx.client, id, &second, &h, TIMEOUT_MS), 0);
  assert_true(h->nticks >= 30 && h->nticks <= 60);
  assert_int_equal(h->ticks[0].nbones, fx.defaults->nbones);
  assert_true(fabsf(h->ticks[0].rotations[0] * h->ticks[0].rotations[0] + h->ticks[0].rotations[1] *
                    h->ticks[0].rotations[1] + h->ticks[0].rotations[2] * h->ticks[0].rotations[2] +
                    h->ticks[0].rotations[3] * h->ticks[0].rotations[3] - 1.0f) < 1e-3f);
  anim_character_history_free(h);
  assert_int_equal(anim_client_characters_destroy(fx.client, &id, 1, TIMEOUT_MS), 0);
  drain_frames(fx.client);
}

/* ---- candidates equal a search --------------------------------------------------------------- */

static void test_candidates_equal_search(void **state) {
  uint64_t id;
  assert_int_equal(anim_client_characters_create(fx.client, "default", NULL, NULL, 1, &id, TIMEOUT_MS), 0);
  assert_int_equal(anim_client_history_set(fx.client, id, 2.0f, 16, NULL, TIMEOUT_MS), 0);
  anim_character_input_t in;
  anim_character_input_stick(&in, 0.3f, 0.9f, 0.0f, 0);
  assert_int_equal(anim_client_characters_set_input(fx.client, &id, &in, 1, NULL, TIMEOUT_MS), 0);
  usleep(1000000);
  anim_character_history_t *h = NULL;
  anim_history_span_t span = {0, 0, 1.0f, 0, 1};
  assert_int_equal(anim_client_history_get(fx.client, id, &span, &h, TIMEOUT_MS), 0);
  int compared = 0;
  for (int i = 0; i < h->nticks; i++) {
    const anim_history_tick_t *t = &h->ticks[i];
    if (!t->searched) continue;
    assert_int_equal(t->nquery, (int)fx.defaults->summary.feature_dims);
    anim_query_t q;
    anim_query_init(&q);
    q.features = t->query, q.nfeatures = t->nquery;
    q.k = t->ncandidates;
    q.current_frame = t->current_frame;
    q.transition_cost = t->transition_cost;
    q.ignore_range_end = t->ignore_range_end, q.ignore_surrounding = t->ignore_surrounding;
    q.explain = 1;
    anim_search_reply_t *r = NULL;
    assert_int_equal(anim_client_search(fx.client, "default", &q, &r, TIMEOUT_MS), 0);
    const anim_result_t *res = &r->results[0];
    assert_int_equal(res->nmatches, t->ncandidates);
    for (int c = 0; c < t->ncandidates; c++) {
      if (res->matches[c].frame != t->candidates[c].frame || res->matches[c].cost != t->candidates[c].cost)
        fail_msg("tick %llu candidate %d: history frame %u cost %.9g, search frame %u cost %.9g",
                 (unsigned long long)t->tick, c, t->candidates[c].frame, t->candidates[c].cost,
                 res->matches[c].frame, res->matches[c].cost);
      assert_string_equal(res->matches[c].range_name, t->candidates[c].range_name);
    }
    /* The best's cost by group, as search explains it. */
    assert_int_equal(res->nexplain, h->ngroups);
    for (int g = 0; g < h->ngroups; g++) {
      assert_string_equal(res->explain_names[g], h->groups[g]);
      assert_true(res->explain_costs[g] == t->candidates[0].group_costs[g]);
    }
    anim_search_reply_free(r);
    compared++;
  }
  assert_true(compared >= 4);
  printf("%d searched ticks: candidates equal a search of their query, to the bit\n", compared);
  anim_character_history_free(h);
  assert_int_equal(anim_client_characters_destroy(fx.client, &id, 1, TIMEOUT_MS), 0);
}

/* ---- parameters live ----------------------------------------------------------------------- */

static void test_params_change_state(void **state) {
  uint64_t id;
  assert_int_equal(anim_client_characters_create(fx.client, "default", NULL, NULL, 1, &id, TIMEOUT_MS), 0);
  anim_character_params_t p, applied;
  anim_character_params_init(&p);
  p.inertialize_halflife = 0.3f, p.forward_speed = 2.5f, p.search_interval = 4, p.transition_cost = 0.05f;
  assert_int_equal(anim_client_character_params_set(fx.client, id, &p, &applied, TIMEOUT_MS), 0);
  assert_true(applied.inertialize_halflife == 0.3f && applied.forward_speed == 2.5f);
  assert_true(applied.side_speed == 1.5f); /* kept */
  anim_character_state_t *st = state_of(id);
  assert_true(st->params.inertialize_halflife == 0.3f);
  assert_true(st->inertialize_halflife == 0.3f);
  assert_true(st->params.forward_speed == 2.5f);
  assert_int_equal(st->params.search_interval, 4);
  assert_true(st->params.transition_cost == 0.05f);
  assert_true(st->params.velocity_halflife == 0.27f && st->params.back_speed == 1.25f);
  anim_character_state_free(st);
  /* The history records the half-life in effect, and searches every 4 frames now. */
  assert_int_equal(anim_client_history_set(fx.client, id, 1.0f, 1, NULL, TIMEOUT_MS), 0);
  usleep(500000);
  anim_character_history_t *h = NULL;
  anim_history_span_t span = {0, 0, 0.4f, 0, 0};
  assert_int_equal(anim_client_history_get(fx.client, id, &span, &h, TIMEOUT_MS), 0);
  int searched = 0;
  for (int i = 0; i < h->nticks; i++) {
    assert_true(h->ticks[i].inertialize_halflife == 0.3f);
    if (h->ticks[i].searched) searched++, assert_true(h->ticks[i].transition_cost == 0.05f);
  }
  assert_true(searched >= h->nticks / 4 - 1);
  anim_character_history_free(h);
  assert_int_equal(anim_client_characters_destroy(fx.client, &id, 1, TIMEOUT_MS), 0);
}

/* ---- memory: counted, bounded, given back --------------------------------------------------- */

static uint64_t character_bytes(void) {
  anim_server_stats_t stats;
  assert_int_equal(anim_client_server_stats(fx.client, &stats, TIMEOUT_MS), 0);
  return stats.character_bytes;
}

static void test_memory_counted_and_bounded(void **state) {
  uint64_t ids[6];
  assert_int_equal(anim_client_characters_create(fx.client, "default", NULL, NULL, 6, ids, TIMEOUT_MS), 0);
  uint64_t base = character_bytes(), total = 0;
  int on = 0, rc = 0;
  for (; on < 6; on++) {
    anim_history_info_t info;
    uint64_t before = character_bytes();
    rc = anim_client_history_set(fx.client, ids[on], MAX_SECONDS, 8, &info, TIMEOUT_MS);
    if (rc) break;
    assert_int_equal(character_bytes() - before, info.bytes); /* counted as the character's */
    total += info.bytes;
  }
  assert_int_equal(rc, ANIM_ELIMIT);
  assert_error_names("--max-history-memory-per-connection");
  assert_true(on >= 1 && total <= CONNECTION_LIMIT);
  assert_true(total + total / (uint64_t)on > CONNECTION_LIMIT); /* one more would pass it */
  assert_int_equal(character_bytes(), base + total);           /* the refused one allocated nothing */
  printf("%d histories of %d s: %llu bytes (%llu each), limit %d\n", on, MAX_SECONDS, (unsigned long long)total,
         (unsigned long long)(total / (uint64_t)on), CONNECTION_LIMIT);
  /* Off gives it back; a shorter one fits again. */
  assert_int_equal(anim_client_history_set(fx.client, ids[0], 0.0f, 0, NULL, TIMEOUT_MS), 0);
  assert_int_equal(character_bytes(), base + total - total / (uint64_t)on);
  assert_int_equal(anim_client_history_set(fx.client, ids[on], 1.0f, 8, NULL, TIMEOUT_MS), 0);
  assert_int_equal(anim_client_characters_destroy(fx.client, ids, 6, TIMEOUT_MS), 0);
  assert_int_equal(character_bytes(), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_invalid_requests),
      cmocka_unit_test(test_history_equals_stream),
      cmocka_unit_test(test_candidates_equal_search),
      cmocka_unit_test(test_params_change_state),
      cmocka_unit_test(test_memory_counted_and_bounded),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
