/* test_fit_service.c: poses from tracked points over the wire, against the
 * real server, with protobuf frames on a raw socket (the client library
 * does not wrap these requests yet). Invalid requests first: align's and
 * fit_pose's field checks and degenerate point sets, tracker characters'
 * creation and set_trackers checks. Then behaviour: align recovers known
 * transforms; fit_pose answers from a cached model, evicts within its
 * bound; and on real motion capture (Bandai Namco clips held out of the
 * database the server fits with), one-shot fits of held-out frames and a
 * tracker character fed a held-out clip's head, hands and pelvis over the
 * wire, a hand dropped for a second, and trackers sent only every other
 * tick, each measured against the true pose. */
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
#include "anim_error.h"
#include "database/database.h"
#include "fit_eval.h"
#include "heldout.h"
#include "fit/pose_fit.h"
#include "raw_client.h"
#include "server_proc.h"
#include "shared_data.h"
#include "tracker_feed.h"

/* ---- thresholds, all in one place ---------------------------------------------------
 * The core's figures on these clips (animbench fit): mean per-joint error
 * 3.55 cm from head, hands and pelvis with 5 mm noise, 3.45 cm with a hand
 * dropped for 1 s (the hand 7.3 cm while dropped). Over the wire the
 * character gets the same trackers tick by tick, so the bounds are the
 * core test's (the 5 cm target), plus a margin for what the wire
 * adds. The feed runs in step with the server: each frame is sent 30
 * ticks ahead named for its tick (set_trackers.tick), so a client the busy
 * machine lets read late still has it applied at its tick (before, it
 * followed the clip in real time: 196 of 883 inputs a tick late under 8
 * busy loops, the worst joint 100.9 cm). The server runs with --fixed-step
 * (every tick one period: the clip's frames map to ticks one to one,
 * however late the server is). One-shot fits
 * have no history: measured 4.0 cm with the clip's velocities given. */
#define MAX_STREAM_MEAN_ERROR 0.05      /* m: head + hands + pelvis, 5 mm noise, every tick */
#define MAX_STREAM_TRACKED_ERROR 0.025  /* m: the tracked joints (core: 1 cm) */
#define MAX_STREAM_WORST_ERROR 1.0      /* m: a foot a stride off at worst; beyond is a broken pose */
#define MAX_DROPPED_MEAN_ERROR 0.055    /* m: whole body, left hand lost for 1 s */
#define MAX_DROPPED_HAND_ERROR 0.13     /* m: the lost hand falls back to the prior's */
#define MAX_SPARSE_MEAN_ERROR 0.055     /* m: trackers every other tick, predicted between */
#define MAX_LATE_SHARE 0.5              /* inputs applied after their tick (the client over 30 ticks behind):
                                         * above this the run measures the machine (the real-time feed had
                                         * 13-25% late under 4 busy loops on 2 cores; sent ahead, 0) */
#define MAX_ONESHOT_MEAN_ERROR 0.05     /* m: one-shot fits with velocities (measured 4.0 cm) */
#define MAX_ONESHOT_RESIDUAL 0.02       /* m: mean of the trackers to their fitted points (measured 0.5 cm; the
                                         * worst, 6.5 cm, a hand beyond the database's range of motion) */
#define ALIGN_EXACT 1e-4                /* exact data: rotation entries, metres, scale */
#define SCALE_TOLERANCE 0.03            /* the character's scale on a user of the database's size */

#define TIMEOUT_MS 20000

typedef struct {
  anim_test_server_t server;
  anim_test_raw_t c, other;
  int real;                   /* the held-out database is on the server */
  anim_database_t db, truth;  /* the server's database (as built) and the held-out clips */
  char dir[128];
  const char *bones[4];       /* the held-out skeleton's head, hands and pelvis (the core's default trackers) */
} fixture_t;

static fixture_t fx;

static int setup(void **state) {
  (void)state;
  char mocap[1024], err[256];
  snprintf(mocap, sizeof mocap, "%s/data/mocap/bandai-namco", anim_test_shared_dir());
  /* --fixed-step: the feed maps tick T to clip frame base + (T - base_tick);
   * a loaded server folding late ticks into one would skip frames (fewer
   * compared) and apply one frame's trackers over several frames' time. */
  const char *args[] = {"--data-dir", fx.dir, "--fixed-step", NULL}, *quiet_args[] = {"--fixed-step", NULL};
  if (access(mocap, R_OK) == 0) {
    if (anim_heldout_build(mocap, anim_heldout_bandai_clips, anim_heldout_bandai_count, &fx.db, &fx.truth, err,
                           sizeof err) != 0 ||
        tracker_feed_write_database(&fx.db, fx.dir, sizeof fx.dir) != 0) {
      fprintf(stderr, "held-out database: %s\n", err);
      return -1;
    }
    anim_pose_fit_model_options_t defaults;
    if (anim_pose_fit_model_options_default(&defaults, &fx.truth) != 0) return -1;
    for (int k = 0; k < 4; k++) fx.bones[k] = defaults.tracker_bones[k];
    fx.real = 1;
  }
  if (anim_test_server_start(&fx.server, "fit_service", fx.real ? args : quiet_args) != 0) return -1;
  if (anim_test_raw_open(&fx.c, &fx.server) != 0 || anim_test_raw_open(&fx.other, &fx.server) != 0) return -1;
  if (fx.real && tracker_feed_load(&fx.c, fx.db.name) != 0) return -1;
  return 0;
}

static int teardown(void **state) {
  (void)state;
  anim_test_raw_close(&fx.c), anim_test_raw_close(&fx.other);
  int rc = anim_test_server_stop(&fx.server);
  if (fx.real) {
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf %s", fx.dir);
    if (system(cmd) != 0) rc = -1;
    anim_database_free(&fx.db), anim_database_free(&fx.truth);
  }
  return rc == 0 ? 0 : -1;
}

/* ---- requests --------------------------------------------------------------------------- */

static Animserver__Response *call(anim_test_raw_t *c, Animserver__Request *request) {
  request->id = 0;
  Animserver__Response *r = anim_test_raw_call(c, request, TIMEOUT_MS);
  if (!r) fail_msg("no answer within %d ms", TIMEOUT_MS);
  return r;
}

/* Expects an error of code with exactly message. */
static void expect_error(Animserver__Request *request, int code, const char *message) {
  Animserver__Response *r = call(&fx.c, request);
  if (!r->error) fail_msg("expected \"%s\", got an answer", message);
  if (-(int)r->error->code != code || strcmp(r->error->message, message) != 0)
    fail_msg("expected %s \"%s\"\n          got %s \"%s\"", anim_err_name(code), message,
             anim_err_name(-(int)r->error->code), r->error->message);
  animserver__response__free_unpacked(r, NULL);
}

/* An answer without error (fails the test otherwise). */
static Animserver__Response *expect_ok(anim_test_raw_t *c, Animserver__Request *request) {
  Animserver__Response *r = call(c, request);
  if (r->error) fail_msg("unexpected error %s: %s", anim_err_name(-(int)r->error->code), r->error->message);
  return r;
}

/* The server's hello limits (on fx.c). */
static Animserver__Response *hello_limits(void) {
  Animserver__Request hello = ANIMSERVER__REQUEST__INIT;
  Animserver__HelloRequest h = ANIMSERVER__HELLO_REQUEST__INIT;
  hello.body_case = ANIMSERVER__REQUEST__BODY_HELLO, hello.hello = &h;
  Animserver__Response *r = expect_ok(&fx.c, &hello);
  if (!r->hello->limits) fail_msg("hello without limits");
  return r;
}

/* Sends set for tick: 0 when accepted (answered with that tick), else the
 * server's next tick, as its ERANGE refusal names it (the message checked
 * whole: "set_trackers.tick = T: more than A ticks ahead of the next (N)"). */
static uint64_t refused_next(Animserver__Request *set, Animserver__SetTrackersRequest *st, uint64_t tick,
                             uint32_t ahead) {
  st->tick = tick;
  Animserver__Response *r = call(&fx.c, set);
  unsigned long long next = 0;
  if (!r->error) {
    if (r->set_trackers->tick != tick) fail_msg("a set for tick %llu answered %llu", (unsigned long long)tick,
                                                (unsigned long long)r->set_trackers->tick);
  } else {
    char want[200];
    if (-(int)r->error->code != ANIM_ERANGE ||
        sscanf(r->error->message, "set_trackers.tick = %*u: more than %*u ticks ahead of the next (%llu)", &next) != 1)
      fail_msg("expected ERANGE naming set_trackers.tick, got %s", r->error->message);
    snprintf(want, sizeof want, "set_trackers.tick = %llu: more than %u ticks ahead of the next (%llu)",
             (unsigned long long)tick, ahead, next);
    if (strcmp(r->error->message, want) != 0)
      fail_msg("expected \"%s\"\n          got \"%s\"", want, r->error->message);
  }
  animserver__response__free_unpacked(r, NULL);
  return next;
}

/* set_trackers.tick: at most Limits.max_trackers_ahead (31) ticks after the
 * next, at most Limits.max_trackers_waiting (32) sets waiting a character;
 * the bounds the hello states are the ones enforced: one tick past is
 * refused, the tick at it accepted, one set too many refused. A tick ahead
 * is answered as the tick that applies them, one already past as the next.
 * `next`: a recent answer's tick. */
static void check_tracker_ticks(Animserver__Request *set, Animserver__SetTrackersRequest *st, uint64_t next) {
  Animserver__Response *r = hello_limits();
  uint32_t ahead = r->hello->limits->max_trackers_ahead, waiting = r->hello->limits->max_trackers_waiting;
  animserver__response__free_unpacked(r, NULL);
  printf("  Limits.max_trackers_ahead %u, max_trackers_waiting %u\n", ahead, waiting);
  assert_int_equal(ahead, 31), assert_int_equal(waiting, 32);
  if (refused_next(set, st, UINT64_MAX, ahead) == 0) fail_msg("a set for tick 2^64-1 was accepted");
  /* Past: the next tick (once the crowd has ticked past tick 1: a bounded wait, 10 s). */
  for (int k = 0; k < 200 && next < 3; k++) {
    usleep(50000);
    st->tick = 0;
    r = expect_ok(&fx.c, set);
    next = r->set_trackers->tick;
    animserver__response__free_unpacked(r, NULL);
  }
  st->tick = 1;
  r = expect_ok(&fx.c, set);
  if (r->set_trackers->tick < next) fail_msg("a set for past tick 1 answered %llu, not the next (%llu or later)",
                                             (unsigned long long)r->set_trackers->tick, (unsigned long long)next);
  animserver__response__free_unpacked(r, NULL);
  /* Just past the bound: next + ahead + 1, the next as a refusal names it.
   * Refused, it names that same next (the crowd had not ticked: exactly one
   * tick past). Accepted only when a tick passed between the two requests;
   * then that set is waited out (it counts against the sets waiting) and
   * the pair asked again. */
  for (int attempt = 0;; attempt++) {
    if (attempt == 20)
      fail_msg("set_trackers.tick = next + %u + 1 accepted 20 times: not the bound, or a tick passed each time", ahead);
    next = refused_next(set, st, UINT64_MAX, ahead);
    uint64_t named = refused_next(set, st, next + ahead + 1, ahead);
    if (named == next) break;
    if (named) fail_msg("tick %llu refused naming the next %llu, before %llu", (unsigned long long)(next + ahead + 1),
                        (unsigned long long)named, (unsigned long long)next);
    for (int k = 0; k < 400 && refused_next(set, st, UINT64_MAX, ahead) <= next + ahead + 1; k++) usleep(25000);
  }
  printf("  refused: set_trackers.tick = next %llu + %u + 1\n", (unsigned long long)next, ahead);
  /* At the bound, waiting + 1 requests for tick next + ahead, pipelined, the
   * last accepted listing the character twice (its second set takes the
   * place of its first): `waiting` wait, the last is refused whole (the
   * loop reads them in one go; the tick is half a second off). */
  enum { MAX_SETS = 64 };
  assert_true(waiting + 1 <= MAX_SETS);
  int sets = (int)waiting + 1;
  char full[160];
  snprintf(full, sizeof full, "set_trackers.characters[0]: the character already holds %u sets for ticks ahead, at "
           "most %u", waiting, waiting);
  st->tick = next + ahead;
  uint64_t ids[MAX_SETS];
  Animserver__CharacterTrackers *twice[2] = {st->characters[0], st->characters[0]}, **once = st->characters;
  for (int k = 0; k < sets; k++) {
    st->n_characters = k == sets - 2 ? 2 : 1, st->characters = k == sets - 2 ? twice : once;
    set->id = 0, assert_int_equal(anim_test_raw_send(&fx.c, set), 0), ids[k] = set->id;
  }
  st->n_characters = 1, st->characters = once;
  int accepted = 0, limited = -1;
  for (int k = 0; k < sets;) {
    Animserver__ServerMessage *m = anim_test_raw_next(&fx.c, TIMEOUT_MS);
    if (!m) fail_msg("no answer within %d ms", TIMEOUT_MS);
    if (m->kind_case == ANIMSERVER__SERVER_MESSAGE__KIND_RESPONSE && m->response->id == ids[k]) {
      const Animserver__Response *a = m->response;
      if (!a->error) accepted++, assert_int_equal(a->set_trackers->tick, st->tick);
      else if (-(int)a->error->code == ANIM_ELIMIT && strcmp(a->error->message, full) == 0)
        limited = k, printf("  refused: %s\n", a->error->message);
      else fail_msg("set %d: %s", k, a->error->message);
      k++;
    }
    animserver__server_message__free_unpacked(m, NULL);
  }
  if (accepted != (int)waiting || limited != (int)waiting)
    fail_msg("%d of %d sets ahead accepted, the refused one %d (%u, %u expected)", accepted, sets, limited, waiting,
             waiting);
  st->tick = 0;
}

/* An align request over n points of caller storage. */
typedef struct {
  Animserver__Request request;
  Animserver__AlignRequest align;
  Animserver__Vec3 source[64], target[64], *sources[64], *targets[64];
  float weights[64];
} align_t;

static void align_init(align_t *a, int n, Animserver__AlignMode mode) {
  memset(a, 0, sizeof *a);
  animserver__request__init(&a->request);
  animserver__align_request__init(&a->align);
  for (int i = 0; i < 64; i++) {
    animserver__vec3__init(&a->source[i]), animserver__vec3__init(&a->target[i]);
    a->sources[i] = &a->source[i], a->targets[i] = &a->target[i];
  }
  a->align.n_source = a->align.n_target = (size_t)n;
  a->align.source = a->sources, a->align.target = a->targets;
  a->align.mode = mode;
  a->request.body_case = ANIMSERVER__REQUEST__BODY_ALIGN, a->request.align = &a->align;
}

static void set_point(Animserver__Vec3 *v, vec3 p) { v->x = p.x, v->y = p.y, v->z = p.z; }

/* A fit_pose request over the tracked bones of caller storage. */
typedef struct {
  Animserver__Request request;
  Animserver__FitPoseRequest fit;
  Animserver__TrackerInput input[10], *inputs[10];
  Animserver__Vec3 position[10], velocity[10];
  Animserver__Quat orientation[10];
  Animserver__FitParams params;
} fit_t;

static void fit_init(fit_t *f, const char *database, const char *const *bones, int n) {
  memset(f, 0, sizeof *f);
  animserver__request__init(&f->request);
  animserver__fit_pose_request__init(&f->fit);
  animserver__fit_params__init(&f->params);
  for (int i = 0; i < 10; i++) {
    animserver__tracker_input__init(&f->input[i]);
    animserver__vec3__init(&f->position[i]), animserver__vec3__init(&f->velocity[i]);
    animserver__quat__init(&f->orientation[i]);
    f->inputs[i] = &f->input[i];
    f->input[i].bone = i < n ? (char *)bones[i] : "Spine";
    f->input[i].position = &f->position[i];
    f->position[i].y = 1.0f;
  }
  f->fit.database = (char *)database;
  f->fit.n_trackers = (size_t)n, f->fit.trackers = f->inputs;
  f->request.body_case = ANIMSERVER__REQUEST__BODY_FIT_POSE, f->request.fit_pose = &f->fit;
}

static const char *const four[] = {"Head", "LeftHand", "RightHand", "Hips"};

/* One character of mode on "default" for connection c (tracker: the four bones). */
static uint64_t create_character(anim_test_raw_t *c, int tracker) {
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__CreateCharactersRequest create = ANIMSERVER__CREATE_CHARACTERS_REQUEST__INIT;
  Animserver__TrackerSetup setup = ANIMSERVER__TRACKER_SETUP__INIT;
  Animserver__TrackedBone bones[4], *list[4];
  for (int k = 0; k < 4; k++)
    animserver__tracked_bone__init(&bones[k]), bones[k].bone = (char *)four[k], list[k] = &bones[k];
  setup.n_trackers = 4, setup.trackers = list;
  create.database = "default";
  if (tracker) create.mode = ANIMSERVER__CHARACTER_MODE__MODE_TRACKER, create.tracker = &setup;
  request.body_case = ANIMSERVER__REQUEST__BODY_CREATE_CHARACTERS, request.create_characters = &create;
  Animserver__Response *r = expect_ok(c, &request);
  uint64_t id = r->create_characters->characters[0];
  animserver__response__free_unpacked(r, NULL);
  return id;
}

/* ---- invalid inputs ----------------------------------------------------------------------- */

static void test_align_checks(void **state) {
  (void)state;
  align_t a;
  align_init(&a, 4, ANIMSERVER__ALIGN_MODE__ALIGN_RIGID);
  a.align.n_target = 3;
  expect_error(&a.request, ANIM_EDIMENSION, "align.target has 3 points: as many as source (4)");
  align_init(&a, 4, ANIMSERVER__ALIGN_MODE__ALIGN_RIGID);
  a.align.n_weights = 2, a.align.weights = a.weights;
  expect_error(&a.request, ANIM_EDIMENSION, "align.weights has 2 values: none, or one per point (4)");
  a.align.n_weights = 4, a.weights[2] = -1.0f;
  expect_error(&a.request, ANIM_EINVAL, "align.weights[2] = -1: must be >= 0");
  a.weights[2] = NAN;
  expect_error(&a.request, ANIM_ENONFINITE, "align.weights[2] is NaN: values must be finite");
  align_init(&a, 4, 7);
  expect_error(&a.request, ANIM_EINVAL, "align.mode = 7: ALIGN_RIGID (0), ALIGN_SIMILARITY (1) or ALIGN_YAW (2)");
  align_init(&a, 4, ANIMSERVER__ALIGN_MODE__ALIGN_RIGID);
  a.target[3].y = INFINITY;
  expect_error(&a.request, ANIM_ENONFINITE, "align.target[3].y is +Inf: must be finite");

  /* Degenerate point sets: an error, never an arbitrary transform. */
  align_init(&a, 2, ANIMSERVER__ALIGN_MODE__ALIGN_RIGID);
  a.source[1].x = a.target[1].x = 1.0f;
  expect_error(&a.request, ANIM_EINVAL, "align: 2 points of weight > 0: ALIGN_RIGID needs at least 3");
  align_init(&a, 4, ANIMSERVER__ALIGN_MODE__ALIGN_SIMILARITY);
  a.align.n_weights = 4, a.align.weights = a.weights, a.weights[0] = 1.0f; /* three of four weigh nothing */
  expect_error(&a.request, ANIM_EINVAL, "align: 1 point of weight > 0: ALIGN_SIMILARITY needs at least 3");
  align_init(&a, 5, ANIMSERVER__ALIGN_MODE__ALIGN_SIMILARITY);
  for (int i = 0; i < 5; i++) a.source[i].x = (float)i, a.target[i].z = (float)i; /* collinear */
  expect_error(&a.request, ANIM_EINVAL,
               "align: degenerate points: source or target is collinear or all equal (the rotation is not "
               "determined; ALIGN_SIMILARITY needs 3 points spanning a plane)");
  align_init(&a, 5, ANIMSERVER__ALIGN_MODE__ALIGN_RIGID);
  for (int i = 0; i < 5; i++)
    a.source[i].x = 1.0f, a.target[i].x = (float)i, a.target[i].y = (float)(i * i); /* all equal */
  expect_error(&a.request, ANIM_EINVAL,
               "align: degenerate points: source or target is collinear or all equal (the rotation is not "
               "determined; ALIGN_RIGID needs 3 points spanning a plane)");
  align_init(&a, 4, ANIMSERVER__ALIGN_MODE__ALIGN_YAW);
  for (int i = 0; i < 4; i++) a.source[i].y = a.target[i].y = (float)i; /* a vertical line: no yaw */
  expect_error(&a.request, ANIM_EINVAL,
               "align: degenerate points: source or target has no horizontal extent, or they do not correlate "
               "(ALIGN_YAW needs 2 points apart on the ground)");
}

static void test_fit_pose_checks(void **state) {
  (void)state;
  fit_t f;
  fit_init(&f, "default", four, 0);
  expect_error(&f.request, ANIM_EINVAL, "fit_pose.trackers is empty: give 1 to 8 trackers");
  static const char *const nine[] = {"Head", "LeftHand", "RightHand", "Hips", "Spine",
                                     "Chest", "Neck", "LeftFoot", "RightFoot"};
  fit_init(&f, "default", nine, 9);
  expect_error(&f.request, ANIM_ELIMIT, "fit_pose.trackers = 9: at most 8");
  fit_init(&f, "default", four, 4);
  f.input[2].bone = "";
  expect_error(&f.request, ANIM_EINVAL, "fit_pose.trackers[2].bone is empty: name the tracked bone");
  f.input[2].bone = "Head";
  expect_error(&f.request, ANIM_EINVAL, "fit_pose.trackers[2].bone = \"Head\": given twice (also [0])");
  f.input[2].bone = "Tail";
  expect_error(&f.request, ANIM_ENOTFOUND, "fit_pose.trackers[2].bone = \"Tail\": database default has no such bone");
  fit_init(&f, "default", four, 4);
  f.input[1].position = NULL;
  expect_error(&f.request, ANIM_EINVAL, "fit_pose.trackers[1].position is missing: required unless lost");
  fit_init(&f, "default", four, 4);
  f.position[1].z = NAN;
  expect_error(&f.request, ANIM_ENONFINITE, "fit_pose.trackers[1].position.z is NaN: must be finite");
  fit_init(&f, "default", four, 4);
  f.position[0].x = 2e5f;
  expect_error(&f.request, ANIM_EINVAL,
               "fit_pose.trackers[0].position.x = 200000: outside the world (every coordinate within +-10000 m, "
               "Limits.world_limit)");
  fit_init(&f, "default", four, 4);
  f.input[0].orientation = &f.orientation[0], f.orientation[0].w = 0.5f;
  expect_error(&f.request, ANIM_EINVAL,
               "fit_pose.trackers[0].orientation has norm 0.5: a rotation is a unit quaternion (w, x, y, z)");
  fit_init(&f, "default", four, 4);
  f.input[3].weight = -2.0f;
  expect_error(&f.request, ANIM_EINVAL, "fit_pose.trackers[3].weight = -2: in (0, 1e+06] (or 0 for 1)");
  fit_init(&f, "default", four, 4);
  f.input[3].lost = 1;
  expect_error(&f.request, ANIM_EINVAL,
               "fit_pose.trackers[3].lost: a one-shot fit takes the trackers it has (leave it out)");
  fit_init(&f, "default", four, 4);
  f.fit.params = &f.params, f.params.tracker_alpha = 1.5f;
  expect_error(&f.request, ANIM_EINVAL,
               "fit_pose.params.tracker_alpha = 1.5: must be > 0 and < 1 (or 0 for the default)");
  f.params.tracker_alpha = 0.0f, f.params.iterations = 9;
  expect_error(&f.request, ANIM_EINVAL, "fit_pose.params.iterations = 9: at most 8");
  f.params.iterations = 0, f.params.tracker_sigma = -1.0f;
  expect_error(&f.request, ANIM_EINVAL, "fit_pose.params.tracker_sigma = -1: must be > 0 m (or 0 for the default)");
  fit_init(&f, "nothere", four, 4);
  expect_error(&f.request, ANIM_ENOTFOUND, "fit_pose.database = \"nothere\": no database of that name is loaded");
  /* A bone above the pelvis (the ground-level simulation bone) cannot be fitted. */
  static const char *const root[] = {"Simulation"};
  fit_init(&f, "default", root, 1);
  Animserver__Response *r = call(&fx.c, &f.request);
  assert_non_null(r->error);
  assert_int_equal(-(int)r->error->code, ANIM_EINVAL);
  assert_non_null(strstr(r->error->message, "fit_pose.trackers: "));
  assert_non_null(strstr(r->error->message, "not at or below the pelvis"));
  animserver__response__free_unpacked(r, NULL);
}

static void test_tracker_character_checks(void **state) {
  (void)state;
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__CreateCharactersRequest create = ANIMSERVER__CREATE_CHARACTERS_REQUEST__INIT;
  Animserver__TrackerSetup setup = ANIMSERVER__TRACKER_SETUP__INIT;
  Animserver__TrackedBone bones[3], *list[3];
  for (int k = 0; k < 3; k++)
    animserver__tracked_bone__init(&bones[k]), bones[k].bone = (char *)four[k], list[k] = &bones[k];
  request.body_case = ANIMSERVER__REQUEST__BODY_CREATE_CHARACTERS, request.create_characters = &create;
  create.database = "default";
  create.mode = ANIMSERVER__CHARACTER_MODE__MODE_TRACKER;
  expect_error(&request, ANIM_EINVAL, "create_characters.tracker is missing: MODE_TRACKER needs its tracked bones");
  create.mode = ANIMSERVER__CHARACTER_MODE__MODE_MOTION_MATCHING, create.tracker = &setup;
  expect_error(&request, ANIM_EINVAL, "create_characters.tracker: only for MODE_TRACKER");
  create.mode = ANIMSERVER__CHARACTER_MODE__MODE_TRACKER;
  expect_error(&request, ANIM_EINVAL, "create_characters.tracker.trackers is empty: give 1 to 8 tracked bones");
  setup.n_trackers = 3, setup.trackers = list;
  bones[1].bone = "Wing";
  expect_error(&request, ANIM_ENOTFOUND,
               "create_characters.tracker.trackers[1].bone = \"Wing\": database default has no such bone");
  bones[1].bone = "Head";
  expect_error(&request, ANIM_EINVAL, "create_characters.tracker.trackers[1].bone = \"Head\": given twice (also [0])");
  bones[1].bone = "LeftHand";
  setup.hold_seconds = -1.0f;
  expect_error(&request, ANIM_EINVAL, "create_characters.tracker.hold_seconds = -1: in (0, 60] s (or 0 for 0.5)");

  /* set_trackers: the character's own trackers, in its order, from its owner. */
  uint64_t tracker = create_character(&fx.c, 1), matching = create_character(&fx.c, 0);
  Animserver__Request set = ANIMSERVER__REQUEST__INIT;
  Animserver__SetTrackersRequest st = ANIMSERVER__SET_TRACKERS_REQUEST__INIT;
  Animserver__CharacterTrackers ct = ANIMSERVER__CHARACTER_TRACKERS__INIT, *cts = &ct;
  Animserver__TrackerInput in[4], *ins[4];
  Animserver__Vec3 pos = ANIMSERVER__VEC3__INIT;
  for (int k = 0; k < 4; k++) animserver__tracker_input__init(&in[k]), in[k].position = &pos, ins[k] = &in[k];
  set.body_case = ANIMSERVER__REQUEST__BODY_SET_TRACKERS, set.set_trackers = &st;
  st.n_characters = 1, st.characters = &cts;
  ct.character = tracker, ct.n_trackers = 3, ct.trackers = ins;
  expect_error(&set, ANIM_EDIMENSION,
               "set_trackers.characters[0].trackers has 3 trackers: the character tracks 4 (its creation order)");
  ct.n_trackers = 4;
  in[2].bone = "LeftHand";
  expect_error(&set, ANIM_EINVAL,
               "set_trackers.characters[0].trackers[2].bone = \"LeftHand\": the character's tracker 2 "
               "is RightHand");
  in[2].bone = "RightHand", in[2].offset = &pos;
  expect_error(&set, ANIM_EINVAL,
               "set_trackers.characters[0].trackers[2].offset: set at the character's creation (tracker.trackers)");
  in[2].offset = NULL, in[1].position = NULL;
  expect_error(&set, ANIM_EINVAL, "set_trackers.characters[0].trackers[1].position is missing: required unless lost");
  in[1].lost = 1; /* lost: no position needed */
  Animserver__Response *r = expect_ok(&fx.c, &set);
  assert_true(r->set_trackers->tick > 0);
  uint64_t next = r->set_trackers->tick;
  animserver__response__free_unpacked(r, NULL);
  check_tracker_ticks(&set, &st, next);
  ct.character = matching;
  char message[200];
  snprintf(message, sizeof message,
           "set_trackers.characters[0]: character %llu (motion_matching) is not driven by trackers (MODE_TRACKER)",
           (unsigned long long)matching);
  expect_error(&set, ANIM_EUNSUPPORTED, message);
  ct.character = tracker;
  Animserver__Response *other = call(&fx.other, &set);
  assert_non_null(other->error);
  assert_int_equal(-(int)other->error->code, ANIM_EPERM);
  animserver__response__free_unpacked(other, NULL);
  /* A tracker character is not steered by set_inputs. */
  Animserver__Request inputs = ANIMSERVER__REQUEST__INIT;
  Animserver__SetInputsRequest si = ANIMSERVER__SET_INPUTS_REQUEST__INIT;
  Animserver__CharacterInput ci = ANIMSERVER__CHARACTER_INPUT__INIT, *cis = &ci;
  Animserver__StickInput stick = ANIMSERVER__STICK_INPUT__INIT;
  ci.character = tracker, ci.input_case = ANIMSERVER__CHARACTER_INPUT__INPUT_STICK, ci.stick = &stick;
  si.n_inputs = 1, si.inputs = &cis;
  inputs.body_case = ANIMSERVER__REQUEST__BODY_SET_INPUTS, inputs.set_inputs = &si;
  snprintf(message, sizeof message, "set_inputs.inputs[0]: character %llu (tracker) is not steered by input",
           (unsigned long long)tracker);
  expect_error(&inputs, ANIM_EUNSUPPORTED, message);
}

/* ---- behaviour ------------------------------------------------------------------------------ */

/* Applies scale * R(q) p + t with q a unit quaternion (w, x, y, z). */
static vec3 transform(vec3 p, quat q, vec3 t, float scale) {
  return vec3_add(vec3_scale(quat_mul_vec3(q, p), scale), t);
}

static void check_align(const Animserver__AlignResponse *a, quat q, vec3 t, float scale) {
  double sign = a->rotation->w * q.w + a->rotation->x * q.x + a->rotation->y * q.y + a->rotation->z * q.z < 0 ? -1 : 1;
  assert_float_equal(sign * a->rotation->w, q.w, ALIGN_EXACT);
  assert_float_equal(sign * a->rotation->x, q.x, ALIGN_EXACT);
  assert_float_equal(sign * a->rotation->y, q.y, ALIGN_EXACT);
  assert_float_equal(sign * a->rotation->z, q.z, ALIGN_EXACT);
  assert_float_equal(a->translation->x, t.x, ALIGN_EXACT);
  assert_float_equal(a->translation->y, t.y, ALIGN_EXACT);
  assert_float_equal(a->translation->z, t.z, ALIGN_EXACT);
  assert_float_equal(a->scale, scale, ALIGN_EXACT);
  assert_true(a->rms < ALIGN_EXACT);
  /* The matrix is the same rotation: its first column is R x. */
  vec3 x = quat_mul_vec3(q, vec3_make(1, 0, 0));
  assert_int_equal(a->n_matrix, 9);
  assert_float_equal(a->matrix[0], x.x, ALIGN_EXACT);
  assert_float_equal(a->matrix[3], x.y, ALIGN_EXACT);
  assert_float_equal(a->matrix[6], x.z, ALIGN_EXACT);
}

static void test_align_recovers_transforms(void **state) {
  (void)state;
  unsigned seed = 7;
  align_t a;
  quat q = quat_normalize(quat_make(0.8f, 0.2f, -0.5f, 0.3f));
  vec3 t = vec3_make(1.5f, -0.25f, 3.0f);
  struct {
    Animserver__AlignMode mode;
    float scale;
  } cases[] = {{ANIMSERVER__ALIGN_MODE__ALIGN_RIGID, 1.0f}, {ANIMSERVER__ALIGN_MODE__ALIGN_SIMILARITY, 1.37f}};
  for (int c = 0; c < 2; c++) {
    align_init(&a, 20, cases[c].mode);
    for (int i = 0; i < 20; i++) {
      vec3 p = vec3_make(fit_eval_gaussian(&seed), fit_eval_gaussian(&seed), fit_eval_gaussian(&seed));
      set_point(&a.source[i], p), set_point(&a.target[i], transform(p, q, t, cases[c].scale));
    }
    Animserver__Response *r = expect_ok(&fx.c, &a.request);
    check_align(r->align, q, t, cases[c].scale);
    animserver__response__free_unpacked(r, NULL);
  }
  /* Weighted: an outlier of weight 0 changes nothing. */
  align_init(&a, 21, ANIMSERVER__ALIGN_MODE__ALIGN_RIGID);
  a.align.n_weights = 21, a.align.weights = a.weights;
  for (int i = 0; i < 21; i++) {
    vec3 p = vec3_make(fit_eval_gaussian(&seed), fit_eval_gaussian(&seed), fit_eval_gaussian(&seed));
    set_point(&a.source[i], p), set_point(&a.target[i], transform(p, q, t, 1.0f));
    a.weights[i] = i == 20 ? 0.0f : 0.5f + (float)(i % 3);
  }
  a.target[20].x += 10.0f;
  Animserver__Response *r = expect_ok(&fx.c, &a.request);
  check_align(r->align, q, t, 1.0f);
  animserver__response__free_unpacked(r, NULL);
  /* Yaw: a turn about +Y and a move on the ground, whatever the heights. */
  quat yaw = quat_from_angle_axis(-2.0f, vec3_make(0, 1, 0));
  vec3 ground = vec3_make(-3.0f, 0.0f, 0.5f);
  align_init(&a, 10, ANIMSERVER__ALIGN_MODE__ALIGN_YAW);
  for (int i = 0; i < 10; i++) {
    vec3 p = vec3_make(fit_eval_gaussian(&seed), fit_eval_gaussian(&seed), fit_eval_gaussian(&seed));
    set_point(&a.source[i], p), set_point(&a.target[i], transform(p, yaw, ground, 1.0f));
  }
  r = expect_ok(&fx.c, &a.request);
  check_align(r->align, yaw, ground, 1.0f);
  assert_float_equal(r->align->yaw, -2.0f, ALIGN_EXACT);
  animserver__response__free_unpacked(r, NULL);
}

/* Fits on the default database: answered from the model cache the second
 * time (the same answer), and more tracker sets than the cache holds all
 * answer (the least recently used is dropped, and rebuilt when asked again). */
static void test_fit_pose_cache(void **state) {
  (void)state;
  static const char *const bones[] = {"Head",      "LeftHand",  "RightHand", "Hips",     "LeftFoot", "RightFoot",
                                      "LeftForeArm", "RightForeArm", "Spine",    "Chest",    "Neck",     "LeftUpLeg",
                                      "RightUpLeg",  "LeftLeg",      "RightLeg", "LeftToe",  "RightToe"};
  Animserver__Request hello = ANIMSERVER__REQUEST__INIT;
  Animserver__HelloRequest h = ANIMSERVER__HELLO_REQUEST__INIT;
  hello.body_case = ANIMSERVER__REQUEST__BODY_HELLO, hello.hello = &h;
  Animserver__Response *r = expect_ok(&fx.c, &hello);
  uint32_t cached = r->hello->limits->fit_models_per_database;
  assert_int_equal(r->hello->limits->max_trackers, 8);
  assert_int_equal(r->hello->limits->max_align_points, 65536);
  assert_true(cached >= 1 && cached + 4 <= sizeof bones / sizeof *bones);
  animserver__response__free_unpacked(r, NULL);
  fit_t f;
  float first[3];
  for (int set = 0; set <= (int)cached + 1; set++) { /* sets 0..cached+1: set 0 is evicted, then asked again */
    int which = set == (int)cached + 1 ? 0 : set;
    static const char *chosen[4];
    for (int k = 0; k < 3; k++) chosen[k] = bones[k];
    chosen[3] = bones[3 + which];
    fit_init(&f, "default", chosen, 4);
    vec3 points[4] = {{0, 1.6f, 0}, {0.3f, 1.0f, 0.1f}, {-0.3f, 1.0f, 0.1f}, {0, 0.9f, 0}};
    for (int k = 0; k < 4; k++) set_point(&f.position[k], points[k]);
    if (which != 0) set_point(&f.position[3], vec3_make(0.1f, 0.5f, 0.0f));
    for (int again = 0; again < (set == 0 ? 2 : 1); again++) {
      r = expect_ok(&fx.c, &f.request);
      const Animserver__FitPoseResponse *fp = r->fit_pose;
      assert_int_equal(fp->n_residuals, 4);
      assert_int_equal(fp->pose->n_global_positions, fp->pose->n_local_positions);
      assert_int_equal(fp->pose->n_local_rotations * 3, fp->pose->n_local_positions * 4);
      if (which == 0) {
        if (set == 0 && again == 0)
          memcpy(first, fp->pose->global_positions, sizeof first);
        else /* deterministic, cached or rebuilt */
          assert_memory_equal(first, fp->pose->global_positions, sizeof first);
      }
      animserver__response__free_unpacked(r, NULL);
    }
  }
}

/* ---- real motion capture ------------------------------------------------------------------ */

static int have_real(void) {
  char dir[1024];
  if (!anim_test_shared_path(dir, sizeof dir, "data/mocap/bandai-namco")) return 0;
  if (!fx.real) fail_msg("the held-out database was not set up");
  return 1;
}

/* One-shot fits of every 7th held-out frame from its head, hands and pelvis
 * (5 mm noise, the clip's velocities): within the core's bounds. */
static void test_fit_pose_heldout_frames(void **state) {
  (void)state;
  if (!have_real()) return;
  const anim_database_t *truth = &fx.truth;
  int nb = truth->nbones, bones[4], pelvis = anim_skeleton_find(&truth->skeleton, fx.bones[3]);
  for (int k = 0; k < 4; k++) assert_true((bones[k] = anim_skeleton_find(&truth->skeleton, fx.bones[k])) >= 0);
  fit_t f;
  unsigned seed = 11;
  double sum = 0.0, worst_residual = 0.0, residuals = 0.0;
  long n = 0;
  int frames = 0, worst_frame = -1, worst_tracker = -1;
  for (int r = 0; r < truth->nranges; r++)
    for (int frame = truth->ranges[r].start + 1; frame < truth->ranges[r].stop; frame += 7, frames++) {
      fit_init(&f, fx.db.name, fx.bones, 4);
      const vec3 *g = truth->global_positions + (size_t)frame * (size_t)nb, *before = g - nb;
      for (int k = 0; k < 4; k++) {
        vec3 noise = vec3_make(fit_eval_gaussian(&seed), fit_eval_gaussian(&seed), fit_eval_gaussian(&seed));
        set_point(&f.position[k], vec3_add(g[bones[k]], vec3_scale(noise, 0.005f)));
        set_point(&f.velocity[k], vec3_scale(vec3_sub(g[bones[k]], before[bones[k]]), truth->frame_rate));
        f.input[k].velocity = &f.velocity[k];
      }
      Animserver__Response *res = expect_ok(&fx.c, &f.request);
      const Animserver__FitPoseResponse *fp = res->fit_pose;
      assert_int_equal(fp->pose->n_global_positions, 3 * (size_t)nb);
      for (int b = 0; b < nb; b++) {
        int below = 0;
        for (int a = b; a >= 0; a = truth->skeleton.parents[a]) below |= a == pelvis;
        if (!below) continue;
        const float *p = fp->pose->global_positions + 3 * b;
        sum += vec3_length(vec3_sub(vec3_make(p[0], p[1], p[2]), g[b])), n++;
      }
      for (int k = 0; k < 4; k++) residuals += fp->residuals[k] / 4.0;
      for (int k = 0; k < 4; k++)
        if (fp->residuals[k] > worst_residual)
          worst_residual = fp->residuals[k], worst_frame = frame, worst_tracker = k;
      animserver__response__free_unpacked(res, NULL);
    }
  double mean = sum / (double)n, mean_residual = residuals / frames;
  printf("  one-shot fit_pose: %d held-out frames, mean per-joint error %.2f cm, residual mean %.2f cm, worst %.2f cm "
         "(%s, frame %d)\n",
         frames, 100 * mean, 100 * mean_residual, 100 * worst_residual,
         worst_tracker >= 0 ? fx.bones[worst_tracker] : "-", worst_frame);
  if (mean > MAX_ONESHOT_MEAN_ERROR)
    fail_msg("mean error %.2f cm over %.2f cm", 100 * mean, 100 * MAX_ONESHOT_MEAN_ERROR);
  if (mean_residual > MAX_ONESHOT_RESIDUAL)
    fail_msg("mean residual %.2f cm over %.2f cm (worst: %s, %.2f cm at frame %d)", 100 * mean_residual,
             100 * MAX_ONESHOT_RESIDUAL, fx.bones[worst_tracker], 100 * worst_residual, worst_frame);
}

static void report(const char *name, const tracker_feed_result_t *r) {
  printf("  %s: %d ticks, mean %.2f cm (tracked %.2f, others %.2f), worst %.1f cm (%s, frame %d), dropped %.2f cm, "
         "scale %.3f, %d inputs late\n",
         name, r->frames, 100 * r->mean_error, 100 * r->mean_tracked_error, 100 * r->mean_untracked_error,
         100 * r->worst_error, r->worst_bone >= 0 ? fx.truth.skeleton.names[r->worst_bone] : "-", r->worst_frame,
         100 * r->dropped_error, r->scale, r->late);
}

/* The feed's defaults on the held-out clips and their skeleton's names. */
static void real_options(tracker_feed_options_t *o) {
  tracker_feed_options_default(o);
  o->truth = &fx.truth;
  for (int k = 0; k < 4; k++) o->bones[k] = fx.bones[k];
  o->pelvis = fx.bones[3];
}

/* Runs the feed on a new tracker character of the held-out database. */
static void feed(const tracker_feed_options_t *o, tracker_feed_result_t *out) {
  uint64_t id;
  assert_int_equal(tracker_feed_create(&fx.c, fx.db.name, o, &id), 0);
  char err[256];
  if (tracker_feed_run(&fx.c, id, o, out, err, sizeof err) != 0) fail_msg("feed: %s", err);
  assert_int_equal(tracker_feed_destroy(&fx.c, id), 0);
  if (out->late > MAX_LATE_SHARE * out->frames)
    fail_msg("%d of %d inputs arrived a tick late: the machine is too busy for this measurement", out->late,
             out->frames);
}

static void check_worst(const tracker_feed_result_t *r) {
  if (r->worst_error > MAX_STREAM_WORST_ERROR)
    fail_msg("worst error %.1f cm (%s, frame %d) over %.0f cm", 100 * r->worst_error,
             fx.truth.skeleton.names[r->worst_bone], r->worst_frame, 100 * MAX_STREAM_WORST_ERROR);
}

/* Every held-out clip, head + hands + pelvis with 5 mm noise each tick: the
 * streamed pose follows the true one. */
static void test_tracker_character_follows_clip(void **state) {
  (void)state;
  if (!have_real()) return;
  tracker_feed_options_t o;
  real_options(&o);
  tracker_feed_result_t r;
  feed(&o, &r);
  report("streamed, every tick", &r);
  assert_true(r.frames > fx.truth.nframes * 9 / 10);
  if (r.mean_error > MAX_STREAM_MEAN_ERROR)
    fail_msg("mean per-joint error %.2f cm over %.2f cm", 100 * r.mean_error, 100 * MAX_STREAM_MEAN_ERROR);
  if (r.mean_tracked_error > MAX_STREAM_TRACKED_ERROR)
    fail_msg("tracked joints' error %.2f cm over %.2f cm", 100 * r.mean_tracked_error, 100 * MAX_STREAM_TRACKED_ERROR);
  check_worst(&r);
  assert_float_equal(r.scale, 1.0f, SCALE_TOLERANCE);
}

/* The left hand lost for a second in each clip: the body stays, the hand falls back to the prior. */
static void test_tracker_character_dropped_hand(void **state) {
  (void)state;
  if (!have_real()) return;
  tracker_feed_options_t o;
  real_options(&o);
  o.drop_tracker = 1, o.drop_start = 1.0f, o.drop_seconds = 1.0f;
  tracker_feed_result_t r;
  feed(&o, &r);
  report("streamed, left hand lost 1 s", &r);
  assert_true(r.dropped_error > 0.0);
  if (r.mean_error > MAX_DROPPED_MEAN_ERROR)
    fail_msg("mean per-joint error %.2f cm over %.2f cm", 100 * r.mean_error, 100 * MAX_DROPPED_MEAN_ERROR);
  if (r.dropped_error > MAX_DROPPED_HAND_ERROR)
    fail_msg("the lost hand's error %.2f cm over %.2f cm", 100 * r.dropped_error, 100 * MAX_DROPPED_HAND_ERROR);
  check_worst(&r);
}

/* Trackers every other tick (30 Hz): the ticks between predict. */
static void test_tracker_character_sparse_inputs(void **state) {
  (void)state;
  if (!have_real()) return;
  tracker_feed_options_t o;
  real_options(&o);
  o.every = 2;
  tracker_feed_result_t r;
  feed(&o, &r);
  report("streamed, trackers every other tick", &r);
  if (r.mean_error > MAX_SPARSE_MEAN_ERROR)
    fail_msg("mean per-joint error %.2f cm over %.2f cm", 100 * r.mean_error, 100 * MAX_SPARSE_MEAN_ERROR);
  check_worst(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_align_checks),
      cmocka_unit_test(test_fit_pose_checks),
      cmocka_unit_test(test_tracker_character_checks),
      cmocka_unit_test(test_align_recovers_transforms),
      cmocka_unit_test(test_fit_pose_cache),
      cmocka_unit_test(test_fit_pose_heldout_frames),
      cmocka_unit_test(test_tracker_character_follows_clip),
      cmocka_unit_test(test_tracker_character_dropped_hand),
      cmocka_unit_test(test_tracker_character_sparse_inputs),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
