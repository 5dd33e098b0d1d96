/*
 * test_stream_chunks.c: a subscriber's frames are encoded as soon as the
 * simulation chunks holding its characters are ticked, while other chunks
 * still run (stream.h). This checks, through the real server and client
 * library, that such early frames hold this tick's poses and only this
 * tick's: two connections of 700 characters each (six chunks, one of them
 * shared), one subscribing to its own characters, the other to its own plus
 * 50 named characters of the first, taken from its first and last chunks.
 *
 * A frame encoded before its chunk was ticked would repeat the previous
 * tick's pose: every walking character must move between two consecutive
 * frames, and a character in both subscriptions must have the same bits in
 * both frames of one tick.
 *
 * Owned subscriptions get their characters from one pass over the crowd a
 * tick that hands each to its owner's subscriber: several connections whose
 * characters are interleaved in the crowd each receive exactly their own,
 * while one destroys some of its characters, another closes, and another
 * adds a second owned subscription mid-stream.
 *
 * A subscription is a set: a character named twice, or named and owned by
 * the subscriber of an owned subscription, is in each frame once, and a
 * destroyed one is reported gone once.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "anim_client.h"
#include "fixture.h"

#define TIMEOUT_MS 10000
#define PER_CONNECTION 700 /* with 256 characters a chunk: chunks 0-2 are the first connection's, 2-5 the second's */
#define NAMED_EACH_END 25
#define WANT_PAIRS 45 /* consecutive frames checked per subscriber */
#define MAX_FRAMES 600
#define MAX_BONES 64
/* The root's least step in one tick while walking (about 1.2 m/s, 2 cm a
 * tick); a repeated pose moves 0. */
#define MIN_ROOT_STEP 0.002f

static anim_test_fixture_t fx;

/* --fixed-step: the checks want consecutive ticks, which a server behind
 * its rate (a loaded machine) would fold into longer ones. */
static int setup(void **state) {
  const char *args[] = {"--max-characters-per-connection", "1000", "--fixed-step", NULL};
  return anim_test_fixture_start(&fx, "stream_chunks", args, 0);
}

static int teardown(void **state) { return anim_test_fixture_stop(&fx); }

static int by_id(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* Index of id in the sorted ids (fails the test when absent). */
static int index_of(const uint64_t *sorted, int n, uint64_t id) {
  const uint64_t *hit = bsearch(&id, sorted, (size_t)n, sizeof *sorted, by_id);
  assert_non_null(hit);
  return (int)(hit - sorted);
}

static void walk(anim_client_t *c, uint64_t *ids, int n) {
  anim_character_input_t *in = malloc((size_t)n * sizeof *in);
  for (int i = 0; i < n; i++) anim_character_input_stick(&in[i], 0.0f, 0.85f, 0.1f * (float)i, 0);
  assert_int_equal(anim_client_characters_set_input(c, ids, in, n, NULL, TIMEOUT_MS), 0);
  free(in);
}

/* Reads c's frames up to the first of tick `until` or later (0: `ticks`
 * after its first) and returns that frame's tick: warming up by simulated
 * time, not wall time, since a server at a fixed step runs slower than the
 * clock on a busy machine. */
static uint64_t skip_to_tick(anim_client_t *c, uint64_t until, uint64_t ticks) {
  for (;;) {
    anim_stream_frame_t *frame;
    assert_int_equal(anim_client_next_frame(c, &frame, TIMEOUT_MS), 0);
    uint64_t tick = frame->tick;
    anim_stream_frame_free(frame);
    if (!until) until = tick + ticks;
    if (tick >= until) return tick;
  }
}

static const anim_character_pose_t *pose_in(const anim_stream_frame_t *frame, uint64_t id) {
  for (int p = 0; p < frame->nposes; p++)
    if (frame->poses[p].character == id) return &frame->poses[p];
  return NULL;
}

/* One subscriber's frames, checked as they come: every character of a frame
 * that follows the previous one's tick moved since it, and the named
 * characters' poses kept by tick for the comparison across subscribers. A
 * loaded machine drops frames for a reader behind (latest wins), so frames
 * are read until enough consecutive pairs were checked, not a fixed count. */
typedef struct {
  const uint64_t *sorted;      /* every walking character, sorted: index into last */
  int nsorted, nposes;
  float *last;                 /* root position per character in the previous frame */
  uint64_t last_tick;
  int frames, pairs;
  uint64_t ticks[MAX_FRAMES];  /* per frame read: its tick, and the named characters' */
  uint32_t *named_frame;       /* database frames, */
  float *named_pose;           /* and root position then every rotation */
} watch_t;

static size_t named_floats(int nbones) { return 3 + 4 * (size_t)nbones; }

static void watch_init(watch_t *w, const uint64_t *sorted, int nsorted, int nposes) {
  memset(w, 0, sizeof *w);
  w->sorted = sorted, w->nsorted = nsorted, w->nposes = nposes;
  w->last = calloc((size_t)nsorted * 3, sizeof *w->last);
  w->named_frame = calloc((size_t)MAX_FRAMES * 2 * NAMED_EACH_END, sizeof *w->named_frame);
  w->named_pose = calloc((size_t)MAX_FRAMES * 2 * NAMED_EACH_END * named_floats(MAX_BONES), sizeof *w->named_pose);
}

static void watch_free(watch_t *w) { free(w->last), free(w->named_frame), free(w->named_pose); }

static int watch_done(const watch_t *w) { return w->pairs >= WANT_PAIRS; }

static float *named_slot(watch_t *w, int f, int i) {
  return w->named_pose + ((size_t)f * 2 * NAMED_EACH_END + (size_t)i) * named_floats(MAX_BONES);
}

static void watch_next(anim_client_t *c, watch_t *w, const uint64_t *named) {
  if (w->frames == MAX_FRAMES)
    fail_msg("%d consecutive pairs in %d frames: the stream skipped nearly every tick", w->pairs, w->frames);
  anim_stream_frame_t *frame;
  assert_int_equal(anim_client_next_frame(c, &frame, TIMEOUT_MS), 0);
  assert_int_equal(frame->nposes, w->nposes);
  int consecutive = w->frames > 0 && frame->tick == w->last_tick + 1;
  for (int p = 0; p < frame->nposes; p++) {
    const anim_character_pose_t *pose = &frame->poses[p];
    int i = index_of(w->sorted, w->nsorted, pose->character);
    float dx = pose->positions[0] - w->last[3 * i], dz = pose->positions[2] - w->last[3 * i + 2];
    if (consecutive && dx * dx + dz * dz < MIN_ROOT_STEP * MIN_ROOT_STEP)
      fail_msg("character %llu did not move between ticks %llu and %llu (%.5f m): a repeated pose",
               (unsigned long long)pose->character, (unsigned long long)w->last_tick,
               (unsigned long long)frame->tick, (double)sqrtf(dx * dx + dz * dz));
    memcpy(&w->last[3 * i], pose->positions, 3 * sizeof *w->last);
  }
  for (int i = 0; i < 2 * NAMED_EACH_END; i++) {
    const anim_character_pose_t *pose = pose_in(frame, named[i]);
    assert_non_null(pose);
    assert_true(pose->nbones <= MAX_BONES);
    float *slot = named_slot(w, w->frames, i);
    w->named_frame[(size_t)w->frames * 2 * NAMED_EACH_END + (size_t)i] = pose->frame;
    memcpy(slot, pose->positions, 3 * sizeof(float));
    memcpy(slot + 3, pose->rotations, 4 * (size_t)pose->nbones * sizeof(float));
  }
  w->ticks[w->frames++] = frame->tick;
  w->pairs += consecutive;
  w->last_tick = frame->tick;
  anim_stream_frame_free(frame);
}

static void test_early_frames_hold_this_ticks_poses(void **state) {
  anim_client_t *a = fx.client, *b = anim_test_connect(&fx.server);
  static uint64_t ids_a[PER_CONNECTION], ids_b[PER_CONNECTION], named[2 * NAMED_EACH_END];
  static uint64_t all[2 * PER_CONNECTION];
  assert_int_equal(anim_client_characters_create(a, "default", NULL, NULL, PER_CONNECTION, ids_a, TIMEOUT_MS), 0);
  assert_int_equal(anim_client_characters_create(b, "default", NULL, NULL, PER_CONNECTION, ids_b, TIMEOUT_MS), 0);
  walk(a, ids_a, PER_CONNECTION);
  walk(b, ids_b, PER_CONNECTION);
  for (int i = 0; i < NAMED_EACH_END; i++)
    named[i] = ids_a[i], named[NAMED_EACH_END + i] = ids_a[PER_CONNECTION - 1 - i];
  anim_subscribe_options_t own = {NULL, 0, 1, 1, ANIM_POSE_FLOAT, 0, 1};
  anim_subscribe_options_t own_and_named = {named, 2 * NAMED_EACH_END, 1, 1, ANIM_POSE_FLOAT, 0, 1};
  assert_int_equal(anim_client_subscribe(a, &own, NULL, NULL, NULL, NULL, TIMEOUT_MS), 0);
  assert_int_equal(anim_client_subscribe(b, &own_and_named, NULL, NULL, NULL, NULL, TIMEOUT_MS), 0);
  skip_to_tick(b, skip_to_tick(a, 0, 90), 0); /* 1.5 s into the walk */

  memcpy(all, ids_a, sizeof ids_a);
  memcpy(all + PER_CONNECTION, ids_b, sizeof ids_b);
  qsort(all, 2 * PER_CONNECTION, sizeof *all, by_id);
  /* Both subscribers read in turn, so that neither falls behind while the other is read. */
  static watch_t wa, wb;
  watch_init(&wa, all, 2 * PER_CONNECTION, PER_CONNECTION);
  watch_init(&wb, all, 2 * PER_CONNECTION, PER_CONNECTION + 2 * NAMED_EACH_END);
  while (!watch_done(&wa) || !watch_done(&wb)) {
    if (!watch_done(&wa)) watch_next(a, &wa, named);
    if (!watch_done(&wb)) watch_next(b, &wb, named);
  }
  printf("  %d and %d frames read for %d consecutive pairs each\n", wa.frames, wb.frames, WANT_PAIRS);

  /* The named characters: the same bits in both subscriptions' frames of a tick. */
  int compared = 0;
  for (int fa = 0; fa < wa.frames; fa++)
    for (int fb = 0; fb < wb.frames; fb++) {
      if (wa.ticks[fa] != wb.ticks[fb]) continue;
      for (int i = 0; i < 2 * NAMED_EACH_END; i++) {
        assert_int_equal(wa.named_frame[(size_t)fa * 2 * NAMED_EACH_END + (size_t)i],
                         wb.named_frame[(size_t)fb * 2 * NAMED_EACH_END + (size_t)i]);
        assert_memory_equal(named_slot(&wa, fa, i), named_slot(&wb, fb, i), named_floats(MAX_BONES) * sizeof(float));
        compared++;
      }
    }
  assert_true(compared > 0); /* the two connections' frames overlapped in ticks */
  watch_free(&wa), watch_free(&wb);
  anim_client_close(b);
}

#define OWNERS 4
#define OWNED_EACH 300
#define OWNED_ROUNDS 4 /* characters created in turns: owners interleave in the crowd and its chunks */
#define OWNED_FRAMES 20

/* 1 when frame holds exactly the characters sorted[0..n), each once. */
static int frame_holds_exactly(const anim_stream_frame_t *frame, const uint64_t *sorted, int n) {
  if (frame->nposes != n) return 0;
  char *seen = calloc((size_t)n, 1);
  int ok = 1;
  for (int p = 0; p < frame->nposes && ok; p++) {
    const uint64_t *hit = bsearch(&frame->poses[p].character, sorted, (size_t)n, sizeof *sorted, by_id);
    ok = hit && !seen[hit - sorted];
    if (ok) seen[hit - sorted] = 1;
  }
  free(seen);
  return ok;
}

/* The next frames of c (owner o's connection, all its subscriptions): each exactly
 * before[0..nbefore) until the first that is exactly after[0..nafter), then
 * only that; the last `frames` of them are after's. */
static void expect_owned_frames(anim_client_t *c, int o, const uint64_t *before, int nbefore, const uint64_t *after,
                                int nafter, int frames) {
  int seen_after = 0, read = 0;
  while (seen_after < frames) {
    anim_stream_frame_t *frame;
    assert_int_equal(anim_client_next_frame(c, &frame, TIMEOUT_MS), 0);
    read++;
    if (frame_holds_exactly(frame, after, nafter)) seen_after++;
    else if (seen_after || !frame_holds_exactly(frame, before, nbefore))
      fail_msg("owner %d, tick %llu: a frame of %d poses is not exactly its %d (then %d) characters", o,
               (unsigned long long)frame->tick, frame->nposes, nbefore, nafter);
    anim_stream_frame_free(frame);
    if (read > 300 + frames) fail_msg("owner %d: no frame of its %d characters in %d frames", o, nafter, read);
  }
}

static void test_owned_frames_hold_exactly_ones_own(void **state) {
  anim_client_t *c[OWNERS];
  static uint64_t ids[OWNERS][OWNED_EACH];
  int n[OWNERS];
  for (int o = 0; o < OWNERS; o++) c[o] = anim_test_connect(&fx.server), n[o] = OWNED_EACH;
  for (int round = 0; round < OWNED_ROUNDS; round++)
    for (int o = 0; o < OWNERS; o++) {
      int each = OWNED_EACH / OWNED_ROUNDS;
      assert_int_equal(
          anim_client_characters_create(c[o], "default", NULL, NULL, each, ids[o] + round * each, TIMEOUT_MS), 0);
    }
  for (int o = 0; o < OWNERS; o++) qsort(ids[o], OWNED_EACH, sizeof ids[o][0], by_id);
  anim_subscribe_options_t own = {NULL, 0, 1, 1, ANIM_POSE_QUANTIZED, 0, 1};
  for (int o = 0; o < OWNERS; o++)
    assert_int_equal(anim_client_subscribe(c[o], &own, NULL, NULL, NULL, NULL, TIMEOUT_MS), 0);
  for (int o = 0; o < OWNERS; o++) expect_owned_frames(c[o], o, ids[o], n[o], ids[o], n[o], OWNED_FRAMES);

  /* Owner 0 destroys every third of its characters while its stream runs. */
  static uint64_t doomed[OWNED_EACH], kept[OWNED_EACH];
  int ndoomed = 0, nkept = 0;
  for (int i = 0; i < OWNED_EACH; i++) {
    if (i % 3 == 1) doomed[ndoomed++] = ids[0][i];
    else kept[nkept++] = ids[0][i];
  }
  assert_int_equal(anim_client_characters_destroy(c[0], doomed, ndoomed, TIMEOUT_MS), 0);
  expect_owned_frames(c[0], 0, ids[0], n[0], kept, nkept, OWNED_FRAMES);
  /* Owner 3 goes (its characters with it); owner 2 adds a second owned
   * subscription: its frames come in pairs, both exactly its characters. */
  anim_client_close(c[3]);
  assert_int_equal(anim_client_subscribe(c[2], &own, NULL, NULL, NULL, NULL, TIMEOUT_MS), 0);
  expect_owned_frames(c[0], 0, kept, nkept, kept, nkept, OWNED_FRAMES);
  expect_owned_frames(c[1], 1, ids[1], n[1], ids[1], n[1], OWNED_FRAMES);
  expect_owned_frames(c[2], 2, ids[2], n[2], ids[2], n[2], 2 * OWNED_FRAMES);
  for (int o = 0; o < OWNERS - 1; o++) anim_client_close(c[o]);
}


/* How many times id is among the frame's poses, and among its gone. */
static int poses_of(const anim_stream_frame_t *frame, uint64_t id) {
  int n = 0;
  for (int i = 0; i < frame->nposes; i++) n += frame->poses[i].character == id;
  return n;
}

static int gone_of(const anim_stream_frame_t *frame, uint64_t id) {
  int n = 0;
  for (int i = 0; i < frame->ngone; i++) n += frame->gone[i] == id;
  return n;
}

/* 1 when the frame holds every id of want once and nothing else. */
static int holds_once_each(const anim_stream_frame_t *frame, const uint64_t *want, int nwant) {
  int ok = frame->nposes == nwant;
  for (int i = 0; i < nwant; i++) ok &= poses_of(frame, want[i]) == 1;
  return ok;
}

/* Reads frames until one reports the expected gone (or, gone 0, one
 * frame); each must hold every id of want once and nothing else. Before
 * the gone is reported, frames of ticks encoded before the destroy (still
 * queued when it returned) may hold `before` instead. */
static void expect_set_frames(anim_client_t *c, const uint64_t *before, int nbefore, const uint64_t *want, int nwant,
                              uint64_t gone) {
  for (int read = 0; read < 120; read++) {
    anim_stream_frame_t *frame;
    assert_int_equal(anim_client_next_frame(c, &frame, TIMEOUT_MS), 0);
    int reported = gone && gone_of(frame, gone) == 1;
    int ok = holds_once_each(frame, want, nwant);
    int earlier = !ok && gone && !reported && frame->ngone == 0 && holds_once_each(frame, before, nbefore);
    int nposes = frame->nposes, stray_gone = gone && frame->ngone > 0 && !reported;
    unsigned long long tick = (unsigned long long)frame->tick;
    int times = nwant ? poses_of(frame, want[0]) : 0;
    anim_stream_frame_free(frame);
    if (!ok && !earlier)
      fail_msg("tick %llu: %d poses, not %d characters once each (the first %d times)", tick, nposes, nwant, times);
    if (stray_gone) fail_msg("tick %llu: a gone that is not character %llu", tick, (unsigned long long)gone);
    if (!gone || reported) return;
  }
  fail_msg("no frame reported character %llu gone", (unsigned long long)gone);
}

static void test_a_character_is_in_a_frame_once(void **state) {
  anim_client_t *a = anim_test_connect(&fx.server), *b = anim_test_connect(&fx.server);
  uint64_t theirs[3], mine[2];
  assert_int_equal(anim_client_characters_create(a, "default", NULL, NULL, 3, theirs, TIMEOUT_MS), 0);
  assert_int_equal(anim_client_characters_create(b, "default", NULL, NULL, 2, mine, TIMEOUT_MS), 0);
  /* Another's character twice, one of mine named, and all I own. */
  uint64_t named[4] = {theirs[0], theirs[0], mine[0], theirs[1]};
  anim_subscribe_options_t sub = {named, 4, 1, 1, ANIM_POSE_QUANTIZED, 0, 0};
  assert_int_equal(anim_client_subscribe(b, &sub, NULL, NULL, NULL, NULL, TIMEOUT_MS), 0);
  uint64_t all[4] = {theirs[0], theirs[1], mine[0], mine[1]};
  expect_set_frames(b, NULL, 0, all, 4, 0);
  expect_set_frames(b, NULL, 0, all, 4, 0);
  /* The one named twice is destroyed: gone once, then absent. */
  assert_int_equal(anim_client_characters_destroy(a, theirs, 1, TIMEOUT_MS), 0);
  expect_set_frames(b, all, 4, all + 1, 3, theirs[0]);
  expect_set_frames(b, NULL, 0, all + 1, 3, 0);
  /* Mine, named and owned, is destroyed: gone once (it was named). */
  assert_int_equal(anim_client_characters_destroy(b, mine, 1, TIMEOUT_MS), 0);
  uint64_t left[2] = {theirs[1], mine[1]};
  expect_set_frames(b, all + 1, 3, left, 2, mine[0]);
  expect_set_frames(b, NULL, 0, left, 2, 0);
  anim_client_close(b);
  anim_client_close(a);
}

/* A subscription whose named characters are all gone (and not `owned`)
 * reports them once, then sends nothing, while the crowd still ticks: a
 * second subscription's frames go on, none of the first's among them. */
static void test_a_spent_subscription_falls_silent(void **state) {
  anim_client_t *a = anim_test_connect(&fx.server), *b = anim_test_connect(&fx.server);
  uint64_t ids[2], spent = 0, live = 0;
  assert_int_equal(anim_client_characters_create(a, "default", NULL, NULL, 2, ids, TIMEOUT_MS), 0);
  anim_subscribe_options_t one = {&ids[0], 1, 0, 1, ANIM_POSE_QUANTIZED, 0, 0};
  anim_subscribe_options_t other = {&ids[1], 1, 0, 1, ANIM_POSE_QUANTIZED, 0, 0};
  assert_int_equal(anim_client_subscribe(b, &one, NULL, NULL, &spent, NULL, TIMEOUT_MS), 0);
  assert_int_equal(anim_client_characters_destroy(a, ids, 1, TIMEOUT_MS), 0);
  int reported = 0, after = 0, live_frames = 0;
  for (int read = 0; read < 600 && !reported; read++) {
    anim_stream_frame_t *frame;
    assert_int_equal(anim_client_next_frame(b, &frame, TIMEOUT_MS), 0);
    assert_int_equal(frame->subscription, spent);
    reported = gone_of(frame, ids[0]) == 1;
    anim_stream_frame_free(frame);
  }
  assert_true(reported);
  assert_int_equal(anim_client_subscribe(b, &other, NULL, NULL, &live, NULL, TIMEOUT_MS), 0);
  while (live_frames < 30) {
    anim_stream_frame_t *frame;
    assert_int_equal(anim_client_next_frame(b, &frame, TIMEOUT_MS), 0);
    if (frame->subscription == live) live_frames++;
    else after++;
    anim_stream_frame_free(frame);
  }
  if (after) fail_msg("%d frames of the spent subscription during 30 ticks of another", after);
  anim_client_close(b);
  anim_client_close(a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_early_frames_hold_this_ticks_poses),
      cmocka_unit_test(test_owned_frames_hold_exactly_ones_own),
      cmocka_unit_test(test_a_character_is_in_a_frame_once),
      cmocka_unit_test(test_a_spent_subscription_falls_silent),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
