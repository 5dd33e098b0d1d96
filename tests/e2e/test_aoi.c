/*
 * test_aoi.c: region (area-of-interest) subscriptions against the real
 * server and client library (stream.h, aoi.h).
 *
 * Bad regions first, each refused naming its field. Then: characters of one
 * connection walk across a circle another connection watches; every tick,
 * the members the viewer was told of (entered minus left, summed) must be
 * exactly the characters whose roots, as a full subscription to all of them
 * streamed them the tick before, lie inside the circle (membership is
 * decided from the previous tick's roots), each entering and leaving once.
 * A region following one of the viewer's characters holds only characters
 * near that character's root, and the character destroyed leaves once.
 * Bands: standing characters near, mid and far get 60, 15 and 4 poses a
 * second (within one frame). A cap keeps the N nearest, and a destroyed
 * member is said to leave once.
 *
 * Each test works in its own patch of ground (a region sees every
 * character on the server) and destroys its characters at the end.
 *
 * On a loaded machine: the server runs with --fixed-step, so every tick
 * index is served with one period's dt (a late server runs slower than wall
 * time rather than folding missed ticks into one, which would leave holes
 * in the tick-by-tick comparisons and the band counts), and the tests wait
 * for a number of ticks the server produced, not for wall time.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "anim_client.h"
#include "fixture.h"
#include "raw_client.h"

#define TIMEOUT_MS 10000
#define MAX_TICKS 2048
#define MAX_CHARS 64

static anim_test_fixture_t fx;

static int setup(void **state) {
  static const char *const args[] = {"--fixed-step", NULL}; /* every tick counted (see the top) */
  return anim_test_fixture_start(&fx, "aoi", args, 0);
}
static int teardown(void **state) { return anim_test_fixture_stop(&fx); }

static uint64_t now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000u + (uint64_t)t.tv_nsec / 1000u;
}

/* Lets both clients take their frames for ms milliseconds. */
static void pump(anim_client_t *a, anim_client_t *b, int ms) {
  uint64_t end = now_us() + (uint64_t)ms * 1000u;
  while (now_us() < end) {
    int rc = anim_client_poll(a, 1);
    assert_true(rc == 0 || rc == ANIM_ETIMEDOUT);
    if (b) {
      rc = anim_client_poll(b, 1);
      assert_true(rc == 0 || rc == ANIM_ETIMEDOUT);
    }
  }
}

/* Pumps both clients until done(arg) holds, for at most WAIT_MS (a loaded
 * machine's server ticks late, not never): 1 when it held. */
#define WAIT_MS 60000
static int pump_until(anim_client_t *a, anim_client_t *b, int (*done)(const void *arg), const void *arg) {
  uint64_t end = now_us() + (uint64_t)WAIT_MS * 1000u;
  while (!done(arg)) {
    if (now_us() > end) return 0;
    pump(a, b, 5);
  }
  return 1;
}

static int index_of(const uint64_t *ids, int n, uint64_t id) {
  for (int i = 0; i < n; i++)
    if (ids[i] == id) return i;
  return -1;
}

/* ---- bad input ----------------------------------------------------------------------------------- */

static void refused(anim_client_t *c, const anim_subscribe_options_t *options, const anim_region_t *region, int code,
                    const char *field) {
  uint64_t subscription = 0;
  int rc = anim_client_subscribe_region(c, options, region, NULL, NULL, &subscription, NULL, TIMEOUT_MS);
  const char *err = anim_client_last_error(c);
  if (rc != code || !strstr(err, field))
    fail_msg("expected %d naming \"%s\", got %d: %s", code, field, rc, err);
}

static void test_bad_regions_refused(void **state) {
  anim_client_t *c = fx.client, *other = anim_test_connect(&fx.server);
  uint64_t mine, theirs;
  anim_character_placement_t at = {-300.0f, -300.0f, 0.0f, -1};
  assert_int_equal(anim_client_characters_create(c, "default", NULL, &at, 1, &mine, TIMEOUT_MS), 0);
  assert_int_equal(anim_client_characters_create(other, "default", NULL, &at, 1, &theirs, TIMEOUT_MS), 0);
  anim_region_t r;
  anim_subscribe_options_t o = {NULL, 0, 0, 1, ANIM_POSE_FLOAT, 0, 0};
#define RESET() (memset(&r, 0, sizeof r), r.radius = 5.0f, o.rate_divisor = 1, o.ncharacters = 0, o.owned = 0)
  RESET(), r.radius = NAN;
  refused(c, &o, &r, ANIM_ENONFINITE, "subscribe.region.radius");
  RESET(), r.radius = -2.0f;
  refused(c, &o, &r, ANIM_EINVAL, "subscribe.region.radius");
  RESET(), r.radius = 1e9f;
  refused(c, &o, &r, ANIM_EINVAL, "subscribe.region.radius = 1e+09: at most 30000");
  RESET(), r.radius = 0.0f, r.half_x = 4.0f, r.half_z = INFINITY;
  refused(c, &o, &r, ANIM_ENONFINITE, "subscribe.region.half_z");
  RESET(), r.half_x = 3.0f;
  refused(c, &o, &r, ANIM_EINVAL, "subscribe.region: radius (a circle) or half_x and half_z (a box), not both");
  RESET(), r.radius = 0.0f;
  refused(c, &o, &r, ANIM_EINVAL, "subscribe.region: set radius");
  RESET(), r.x = 2e6f;
  refused(c, &o, &r, ANIM_EINVAL, "subscribe.region.centre.x");
  RESET(), r.z = NAN;
  refused(c, &o, &r, ANIM_ENONFINITE, "subscribe.region.centre.z");
  anim_region_band_t out_of_order[] = {{10.0f, 1}, {5.0f, 4}};
  RESET(), r.bands = out_of_order, r.nbands = 2;
  refused(c, &o, &r, ANIM_EINVAL, "subscribe.region.bands[1].radius = 5: bands must be in order");
  anim_region_band_t nan_band[] = {{NAN, 1}};
  RESET(), r.bands = nan_band, r.nbands = 1;
  refused(c, &o, &r, ANIM_ENONFINITE, "subscribe.region.bands[0].radius");
  anim_region_band_t slow[] = {{10.0f, 4000}};
  RESET(), r.bands = slow, r.nbands = 1;
  refused(c, &o, &r, ANIM_EINVAL, "subscribe.region.bands[0].rate_divisor");
  anim_region_band_t ok[] = {{10.0f, 2}};
  RESET(), r.bands = ok, r.nbands = 1, o.rate_divisor = 3;
  refused(c, &o, &r, ANIM_EINVAL, "subscribe.rate_divisor = 3: with region.bands");
  RESET(), o.characters = &mine, o.ncharacters = 1;
  refused(c, &o, &r, ANIM_EINVAL, "subscribe.region: not with characters or owned");
  o.characters = NULL;
  RESET(), r.follow = 4242;
  refused(c, &o, &r, ANIM_ENOTFOUND, "subscribe.region.follow = 4242: no such character");
  RESET(), r.follow = theirs;
  refused(c, &o, &r, ANIM_EPERM, "subscribe.region.follow");
  /* A good one: an update may not give it a rate of its own. */
  RESET(), r.follow = mine;
  uint64_t subscription;
  assert_int_equal(anim_client_subscribe_region(c, &o, &r, NULL, NULL, &subscription, NULL, TIMEOUT_MS), 0);
  assert_int_equal(anim_client_subscription_update(c, subscription, 2, ANIM_POSE_FLOAT, 0, TIMEOUT_MS), ANIM_EINVAL);
  assert_non_null(strstr(anim_client_last_error(c), "update_subscription.rate_divisor = 2"));
  assert_int_equal(anim_client_unsubscribe(c, subscription, TIMEOUT_MS), 0);
#undef RESET
  assert_int_equal(anim_client_characters_destroy(c, &mine, 1, TIMEOUT_MS), 0);
  anim_client_close(other);
}

/* More bands than the server takes: the client library refuses them itself,
 * so the request goes raw. */
static void test_too_many_bands_refused(void **state) {
  anim_test_raw_t raw;
  assert_int_equal(anim_test_raw_open(&raw, &fx.server), 0);
  Animserver__AoiBand bands[9], *pointers[9];
  for (int i = 0; i < 9; i++) {
    animserver__aoi_band__init(&bands[i]);
    bands[i].radius = 1.0f + (float)i;
    pointers[i] = &bands[i];
  }
  Animserver__AoiRegion region = ANIMSERVER__AOI_REGION__INIT;
  region.radius = 20.0f, region.n_bands = 9, region.bands = pointers;
  Animserver__SubscribeRequest subscribe = ANIMSERVER__SUBSCRIBE_REQUEST__INIT;
  subscribe.region = &region;
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  request.body_case = ANIMSERVER__REQUEST__BODY_SUBSCRIBE, request.subscribe = &subscribe;
  Animserver__Response *r = anim_test_raw_call(&raw, &request, TIMEOUT_MS);
  assert_non_null(r);
  assert_non_null(r->error);
  assert_int_equal(-(int)r->error->code, ANIM_ELIMIT);
  assert_string_equal(r->error->message, "subscribe.region.bands = 9: at most 8");
  animserver__response__free_unpacked(r, NULL);
  anim_test_raw_close(&raw);
}

/* ---- entering and leaving ---------------------------------------------------------------------- */

#define WALKERS 24
#define RING 7.0f   /* m: where they start, around the origin */
#define CIRCLE 4.0f /* m: the region's radius */

typedef struct {
  uint64_t ids[MAX_CHARS];
  int n;
  uint64_t first_tick, last_tick;
  float x[MAX_TICKS][MAX_CHARS], z[MAX_TICKS][MAX_CHARS];
  unsigned char seen[MAX_TICKS];
} positions_t;

static void on_full(anim_client_t *client, const anim_stream_frame_t *f, void *data) {
  positions_t *p = data;
  if (!p->first_tick) p->first_tick = f->tick;
  p->last_tick = f->tick;
  uint64_t t = f->tick - p->first_tick;
  if (t >= MAX_TICKS) return;
  for (int i = 0; i < f->nposes; i++) {
    int k = index_of(p->ids, p->n, f->poses[i].character);
    if (k < 0) continue;
    p->x[t][k] = f->poses[i].positions[0], p->z[t][k] = f->poses[i].positions[2];
  }
  p->seen[t] = 1;
}

typedef struct {
  const positions_t *full;
  const uint64_t *ids;
  int n;
  unsigned char member[MAX_CHARS];
  unsigned char told[MAX_TICKS][MAX_CHARS]; /* members after each tick's frame (by full-tick index) */
  unsigned char framed[MAX_TICKS];
  int entered[MAX_CHARS], left[MAX_CHARS];
  int posed[MAX_TICKS][MAX_CHARS];
  int frames, errors;
  uint64_t first_tick, last_tick;
  float cx[MAX_TICKS], cz[MAX_TICKS]; /* a followed character's root, by tick */
  uint64_t follow;
} view_t;

static void on_view(anim_client_t *client, const anim_stream_frame_t *f, void *data) {
  view_t *v = data;
  if (!v->first_tick) v->first_tick = f->tick;
  v->last_tick = f->tick;
  v->frames++;
  for (int i = 0; i < f->nentered; i++) {
    int k = index_of(v->ids, v->n, f->entered[i].character);
    if (k < 0) continue; /* another test's character: there should be none here */
    if (v->member[k] || strcmp(f->entered[i].database, "default") != 0 || f->entered[i].bones < 2 ||
        !f->entered[i].database_version)
      v->errors++;
    v->member[k] = 1, v->entered[k]++;
  }
  for (int i = 0; i < f->nleft; i++) {
    int k = index_of(v->ids, v->n, f->left[i]);
    if (k < 0) continue;
    if (!v->member[k]) v->errors++;
    v->member[k] = 0, v->left[k]++;
  }
  uint64_t base = v->full ? v->full->first_tick : v->first_tick;
  if (f->tick < base || f->tick - base >= MAX_TICKS) return;
  uint64_t t = f->tick - base;
  v->framed[t] = 1;
  for (int i = 0; i < f->nposes; i++) {
    int k = index_of(v->ids, v->n, f->poses[i].character);
    if (k >= 0) v->posed[t][k]++;
    if (v->follow && f->poses[i].character == v->follow)
      v->cx[t] = f->poses[i].positions[0], v->cz[t] = f->poses[i].positions[2];
  }
  memcpy(v->told[t], v->member, sizeof v->member);
}

/* Waiting for ticks: *last (a stream's last tick) reaching until. */
typedef struct {
  const uint64_t *last;
  uint64_t until;
} tick_wait_t;

static int tick_reached(const void *arg) {
  const tick_wait_t *w = arg;
  return *w->last && *w->last >= w->until;
}

/* Pumps until the stream whose last tick is *last has reached tick until. */
static void pump_to_tick(anim_client_t *a, anim_client_t *b, const uint64_t *last, uint64_t until) {
  tick_wait_t w = {last, until};
  if (!pump_until(a, b, tick_reached, &w))
    fail_msg("the stream reached tick %llu, not %llu, in %d s", (unsigned long long)*last, (unsigned long long)until,
             WAIT_MS / 1000);
}

/* n more ticks of a view whose frames come every tick (a member due each tick). */
static void pump_view_ticks(anim_client_t *a, anim_client_t *b, const view_t *v, int n) {
  pump_to_tick(a, b, &v->last_tick, v->last_tick + (uint64_t)n);
}

static void test_enter_and_leave_once(void **state) {
  anim_client_t *a = fx.client, *viewer = anim_test_connect(&fx.server);
  static positions_t full;
  static view_t view;
  memset(&full, 0, sizeof full), memset(&view, 0, sizeof view);
  anim_character_placement_t at[WALKERS];
  anim_character_input_t in[WALKERS];
  for (int i = 0; i < WALKERS; i++) {
    float angle = 6.2831853f * (float)i / WALKERS;
    at[i] = (anim_character_placement_t){RING * sinf(angle), RING * cosf(angle), angle + 3.14159f, -1};
    /* across, a little off the centre so they do not all meet there */
    anim_character_input_goal(&in[i], -RING * sinf(angle + 0.3f), -RING * cosf(angle + 0.3f), 2.0f);
  }
  assert_int_equal(anim_client_characters_create(a, "default", NULL, at, WALKERS, full.ids, TIMEOUT_MS), 0);
  full.n = WALKERS;
  view.full = &full, view.ids = full.ids, view.n = WALKERS;
  anim_subscribe_options_t all = {full.ids, WALKERS, 0, 1, ANIM_POSE_FLOAT, 0, 0};
  assert_int_equal(anim_client_subscribe(a, &all, on_full, &full, NULL, NULL, TIMEOUT_MS), 0);
  anim_region_t circle = {0.0f, 0.0f, CIRCLE, 0.0f, 0.0f, 0, NULL, 0, 0};
  anim_subscribe_options_t region = {NULL, 0, 0, 1, ANIM_POSE_FLOAT, 0, 0};
  assert_int_equal(anim_client_subscribe_region(viewer, &region, &circle, on_view, &view, NULL, NULL, TIMEOUT_MS), 0);
  pump_to_tick(a, viewer, &full.first_tick, 1);
  pump_to_tick(a, viewer, &full.last_tick, full.first_tick + 18); /* 0.3 s standing */
  uint64_t walking = 0;
  assert_int_equal(anim_client_characters_set_input(a, full.ids, in, WALKERS, &walking, TIMEOUT_MS), 0);
  pump_to_tick(a, viewer, &full.last_tick, walking + 540); /* 9 s of ticks: across at 2 m/s and out */
  assert_int_equal(view.errors, 0);
  assert_true(full.first_tick > 0);
  /* Every tick both saw: the told members are those the tick before left inside. */
  int compared = 0, edge = 0;
  unsigned char told[MAX_CHARS] = {0};
  for (int t = 1; t < MAX_TICKS; t++) {
    if (view.framed[t]) memcpy(told, view.told[t], sizeof told);
    if (!full.seen[t - 1] || !full.seen[t] || full.first_tick + (uint64_t)t > view.last_tick) continue;
    for (int k = 0; k < WALKERS; k++) {
      float dx = full.x[t - 1][k], dz = full.z[t - 1][k];
      float d2 = dx * dx + dz * dz;
      int inside = d2 <= CIRCLE * CIRCLE;
      if (inside != told[k]) {
        if (fabsf(sqrtf(d2) - CIRCLE) < 1e-4f) {
          edge++;
          continue;
        }
        fail_msg("tick %llu: character %d at %.4f m from the centre (tick before) is %s the region, told %s",
                 (unsigned long long)(full.first_tick + (uint64_t)t), k, (double)sqrtf(d2),
                 inside ? "inside" : "outside", told[k] ? "in" : "out");
      }
      if (told[k] && view.framed[t] && view.posed[t][k] != 1)
        fail_msg("tick %d: member %d has %d poses in the frame, not 1", t, k, view.posed[t][k]);
      compared++;
    }
  }
  assert_true(compared > WALKERS * 300);
  int crossed = 0;
  for (int k = 0; k < WALKERS; k++) {
    if (view.entered[k] != view.left[k] && !(view.entered[k] == view.left[k] + 1 && view.member[k]))
      fail_msg("character %d entered %d times, left %d", k, view.entered[k], view.left[k]);
    if (view.entered[k] > 1) fail_msg("character %d entered %d times (it crosses once)", k, view.entered[k]);
    crossed += view.entered[k] == 1 && view.left[k] == 1;
  }
  print_message("%d of %d walkers entered and left once; %d ticks x characters compared, %d on the edge\n", crossed,
                WALKERS, compared, edge);
  assert_true(crossed >= WALKERS * 3 / 4);
  /* Destroyed members leave (none is inside now: nothing to check but the count of frames after). */
  assert_int_equal(anim_client_characters_destroy(a, full.ids, WALKERS, TIMEOUT_MS), 0);
  anim_client_close(viewer);
  pump(a, NULL, 100);
}

/* ---- following ------------------------------------------------------------------------------- */

enum { STANDING = 16 }; /* characters standing in a row; the walker is ids[STANDING] */

static int walker_left(const void *arg) { return ((const view_t *)arg)->left[STANDING] > 0; }

static void test_follow_keeps_the_character_at_the_centre(void **state) {
  anim_client_t *a = fx.client, *viewer = anim_test_connect(&fx.server);
  static view_t view;
  memset(&view, 0, sizeof view);
  uint64_t ids[STANDING + 1];
  anim_character_placement_t at[STANDING];
  for (int i = 0; i < STANDING; i++) at[i] = (anim_character_placement_t){100.0f + 1.5f * (float)i, 1.5f, 0.0f, -1};
  assert_int_equal(anim_client_characters_create(a, "default", NULL, at, STANDING, ids, TIMEOUT_MS), 0);
  anim_character_placement_t start = {98.0f, 0.0f, 1.5708f, -1};
  assert_int_equal(anim_client_characters_create(viewer, "default", NULL, &start, 1, &ids[STANDING], TIMEOUT_MS), 0);
  uint64_t walker = ids[STANDING];
  view.ids = ids, view.n = STANDING + 1, view.follow = walker;
  anim_region_t around = {0.0f, 0.0f, 3.0f, 0.0f, 0.0f, walker, NULL, 0, 0};
  anim_subscribe_options_t region = {NULL, 0, 0, 1, ANIM_POSE_FLOAT, 0, 0};
  assert_int_equal(anim_client_subscribe_region(viewer, &region, &around, on_view, &view, NULL, NULL, TIMEOUT_MS), 0);
  anim_character_input_t go;
  anim_character_input_goal(&go, 130.0f, 0.0f, 2.0f);
  uint64_t walking = 0;
  assert_int_equal(anim_client_characters_set_input(viewer, &walker, &go, 1, &walking, TIMEOUT_MS), 0);
  pump_to_tick(a, viewer, &view.last_tick, walking + 360); /* 6 s of ticks (a frame every tick: the walker) */
  assert_int_equal(view.errors, 0);
  /* The walker is always a member; every other pose lies within the radius of
   * the walker's root of the tick before (plus a tick's step). */
  int standing_seen = 0, frames = 0;
  assert_int_equal(view.entered[STANDING], 1);
  assert_int_equal(view.left[STANDING], 0);
  for (int t = 1; t < MAX_TICKS; t++) {
    if (!view.framed[t]) continue;
    frames++;
    assert_int_equal(view.posed[t][STANDING], 1);
    for (int k = 0; k < STANDING; k++) {
      if (!view.told[t][k]) continue;
      standing_seen++;
      float dx = at[k].x - view.cx[t], dz = at[k].z - view.cz[t];
      if (sqrtf(dx * dx + dz * dz) > 3.0f + 0.3f) /* standing characters sway a little; a tick's step is 4 cm */
        fail_msg("frame %d: character at x %.1f is %.2f m from the followed root", t, (double)at[k].x,
                 (double)sqrtf(dx * dx + dz * dz));
    }
  }
  int passed = 0;
  for (int k = 0; k < STANDING; k++) passed += view.entered[k] == 1 && view.left[k] == 1;
  print_message("follow: %d frames, %d standing passed (entered and left once), %d member-frames\n", frames, passed,
                standing_seen);
  assert_true(frames > 300);
  assert_true(passed >= 4); /* walked past several, 2 m/s for 6 s along a 24 m row */
  /* The followed character destroyed: it leaves once; the region stays where it was. */
  int frames_before = view.frames;
  assert_int_equal(anim_client_characters_destroy(viewer, &walker, 1, TIMEOUT_MS), 0);
  pump_until(a, viewer, walker_left, &view);
  assert_int_equal(view.errors, 0);
  assert_int_equal(view.left[STANDING], 1);
  assert_true(view.frames > frames_before);
  assert_int_equal(anim_client_characters_destroy(a, ids, STANDING, TIMEOUT_MS), 0);
  anim_client_close(viewer);
  pump(a, NULL, 100);
}

/* ---- bands --------------------------------------------------------------------------------------- */

static void test_bands_deliver_at_their_rates(void **state) {
  anim_client_t *a = fx.client;
  static view_t view;
  memset(&view, 0, sizeof view);
  enum { EACH = 6, N = 3 * EACH };
  static const float distance[3] = {2.0f, 10.0f, 25.0f};
  static const int divisor[3] = {1, 4, 15};
  uint64_t ids[N];
  anim_character_placement_t at[N];
  for (int i = 0; i < N; i++) {
    float angle = 6.2831853f * (float)(i % EACH) / EACH;
    float d = distance[i / EACH];
    at[i] = (anim_character_placement_t){d * sinf(angle), 300.0f + d * cosf(angle), 0.0f, -1};
  }
  assert_int_equal(anim_client_characters_create(a, "default", NULL, at, N, ids, TIMEOUT_MS), 0);
  view.ids = ids, view.n = N;
  anim_region_band_t bands[] = {{5.0f, 1}, {15.0f, 4}, {40.0f, 15}};
  anim_region_t circle = {0.0f, 300.0f, 40.0f, 0.0f, 0.0f, 0, bands, 3, 0};
  anim_subscribe_options_t region = {NULL, 0, 0, 0, ANIM_POSE_QUANTIZED, 0, 0};
  assert_int_equal(anim_client_subscribe_region(a, &region, &circle, on_view, &view, NULL, NULL, TIMEOUT_MS), 0);
  pump_to_tick(a, NULL, &view.first_tick, 1);
  pump_to_tick(a, NULL, &view.last_tick, view.first_tick + 180); /* 3 s of ticks */
  assert_int_equal(view.errors, 0);
  assert_true(view.last_tick - view.first_tick > 170);
  /* 120 ticks (2 s at 60 Hz) after the first frame (whose arrivals all carry a pose). */
  for (int k = 0; k < N; k++) {
    int count = 0;
    for (int t = 10; t < 130; t++) count += view.posed[t][k];
    int expected = 120 / divisor[k / EACH];
    if (abs(count - expected) > 1)
      fail_msg("character %d at %.0f m: %d poses in 2 s, expected %d (%d Hz)", k, (double)distance[k / EACH], count,
               expected, 60 / divisor[k / EACH]);
    assert_int_equal(view.entered[k], 1);
  }
  /* Far characters spread over ticks: no frame carries all of them. */
  int most = 0;
  for (int t = 10; t < 130; t++) {
    int far = 0;
    for (int k = 2 * EACH; k < N; k++) far += view.posed[t][k];
    if (far > most) most = far;
  }
  print_message("bands: far characters in one frame at most %d of %d\n", most, EACH);
  assert_true(most < EACH);
  assert_int_equal(anim_client_characters_destroy(a, ids, N, TIMEOUT_MS), 0);
  pump(a, NULL, 100);
}

/* ---- the cap ------------------------------------------------------------------------------------- */

enum { CAP_N = 20, CAP = 5 };

/* The nearest (ids[CAP_N - 1]) has left and the sixth nearest come in. */
static int nearest_replaced(const void *arg) {
  const view_t *v = arg;
  return v->left[CAP_N - 1] > 0 && v->entered[CAP_N - 1 - CAP] > 0;
}

static int none_left(const void *arg) {
  const view_t *v = arg;
  for (int k = 0; k < CAP_N; k++)
    if (v->member[k]) return 0;
  return 1;
}

static void test_cap_keeps_the_nearest(void **state) {
  anim_client_t *a = fx.client, *viewer = anim_test_connect(&fx.server);
  static view_t view;
  memset(&view, 0, sizeof view);
  enum { N = CAP_N };
  uint64_t ids[N];
  anim_character_placement_t at[N];
  for (int i = 0; i < N; i++) at[i] = (anim_character_placement_t){-300.0f + 1.5f * (float)(N - i), 0.0f, 0.0f, -1};
  /* ids[i] stands 1.5 (N - i) m from the centre: the nearest are the last ones. */
  assert_int_equal(anim_client_characters_create(a, "default", NULL, at, N, ids, TIMEOUT_MS), 0);
  view.ids = ids, view.n = N;
  anim_region_t box = {-300.0f, 0.0f, 0.0f, 40.0f, 5.0f, 0, NULL, 0, CAP};
  anim_subscribe_options_t region = {NULL, 0, 0, 1, ANIM_POSE_FLOAT, 0, 0};
  assert_int_equal(anim_client_subscribe_region(viewer, &region, &box, on_view, &view, NULL, NULL, TIMEOUT_MS), 0);
  pump_to_tick(a, viewer, &view.first_tick, 1);
  pump_view_ticks(a, viewer, &view, 30); /* 0.5 s of ticks */
  assert_int_equal(view.errors, 0);
  for (int k = 0; k < N; k++) {
    assert_int_equal(view.member[k], k >= N - CAP);
    assert_int_equal(view.entered[k], k >= N - CAP);
  }
  for (int t = 0; t < MAX_TICKS; t++) {
    if (!view.framed[t]) continue;
    for (int k = 0; k < N; k++) assert_int_equal(view.posed[t][k], k >= N - CAP);
  }
  /* The nearest destroyed: it leaves once, the sixth nearest comes in. */
  assert_int_equal(anim_client_characters_destroy(a, &ids[N - 1], 1, TIMEOUT_MS), 0);
  pump_until(a, viewer, nearest_replaced, &view);
  pump_view_ticks(a, viewer, &view, 30); /* and 0.5 s more: nothing else changes */
  assert_int_equal(view.errors, 0);
  assert_int_equal(view.left[N - 1], 1);
  assert_int_equal(view.entered[N - 1 - CAP], 1);
  for (int k = 0; k < N - 1; k++) assert_int_equal(view.member[k], k >= N - 1 - CAP);
  assert_int_equal(anim_client_characters_destroy(a, ids, N - 1, TIMEOUT_MS), 0);
  pump_until(a, viewer, none_left, &view); /* then frames stop: nothing is in the box */
  pump(a, viewer, 100);
  for (int k = 0; k < N; k++) {
    assert_int_equal(view.member[k], 0);
    assert_true(view.left[k] == view.entered[k]);
  }
  anim_client_close(viewer);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bad_regions_refused),
      cmocka_unit_test(test_too_many_bands_refused),
      cmocka_unit_test(test_enter_and_leave_once),
      cmocka_unit_test(test_follow_keeps_the_character_at_the_centre),
      cmocka_unit_test(test_bands_deliver_at_their_rates),
      cmocka_unit_test(test_cap_keeps_the_nearest),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
