/*
 * test_client_areas.c: the client library's state-machine, motion-graph
 * and pose-fitting functions against the real server on its embedded
 * default database: every answer converted into C structs, errors with
 * the server's message, characters of each mode streamed; then the _send
 * forms of the same requests pipelined, each answered once through its
 * typed callback (callbacks sending more, one making blocking calls).
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
#include <cmocka.h>
#include "anim_client.h"
#include "anim_error.h"
#include "fixture.h"
#include "follow_limits.h"

#define TIMEOUT_MS 20000
/* build_graph answers once the build is done: seconds under the sanitizers on a loaded machine. */
#define BUILD_TIMEOUT_MS 120000
/* align: float round trip of a rotation and translation of points a metre apart. */
#define ALIGN_TOLERANCE 1e-4f
/* fit_pose of a database frame's own tracked points: each tracker within 3 cm
 * (the fit gives the trackers sigma 5 mm of give and keeps joints in range). */
#define FIT_RESIDUAL_MAX 0.03f
/* A graph walk along a straight 12 m line: its root within 0.25 m of the path
 * on average (the server's own figure on Bandai Namco is 1-4 cm, docs/benchmarks.md),
 * and progress along it as follow_limits.h bounds it at the default
 * database's expected speed: from its idle node, the line's end within
 * FOLLOW_START_SECONDS + 12 m / (FOLLOW_MIN_PACE * 1.5 m/s) = 18 s
 * (measured 4.8 s; 2.4 m in 20 s when the planner stood on the idle loop).
 * query_graph ends a walk on an open path within 0.05 m of its end, or
 * when the character arrived there (within ANIM_PATH_ARRIVE_DISTANCE, 0.3 m:
 * it stops short where its stopping clip ends; core/graph/graph_path.h,
 * "The end"). */
#define PATH_ERROR_MEAN_MAX 0.25f
#define PATH_END_MARGIN 0.3f
/* Ticks a MODE_GRAPH character on that line is watched for (3 s at the
 * server's 60 Hz): its plans' arc is then bounded the same way. */
#define GRAPH_WATCH_TICKS 180
#define TICK_RATE 60.0f

static anim_test_fixture_t fx;

static const char nested_text[] = "idle   { clip idle loop  GO moving }\n"
                                  "moving { machine loco  STOP idle }\n"
                                  "machine loco {\n"
                                  "  walk     { clip walk [0 1] loop  FAST run }\n"
                                  "  run      { clip run [0 1] loop   SLOW walk }\n"
                                  "}\n";

static int setup(void **state) { return anim_test_fixture_start(&fx, "client_areas", NULL, 1); }
static int teardown(void **state) { return anim_test_fixture_stop(&fx); }

static int bone_index(const char *name) {
  for (int b = 0; b < fx.defaults->nbones; b++)
    if (!strcmp(fx.defaults->bone_names[b], name)) return b;
  fail_msg("the default database has no bone %s", name);
  return -1;
}

static int state_index(const anim_machine_summary_t *s, const char *name) {
  for (int i = 0; i < s->nstates; i++)
    if (!strcmp(s->states[i].name, name)) return i;
  return -1;
}

/* ---- state machines ---- */

static void test_machine_check_load_list_unload(void **state) {
  anim_machine_check_t *check = NULL;
  const char broken[] = "stand { JUMP nowhere }\n";
  assert_int_equal(anim_client_machine_check(fx.client, "broken", broken, sizeof broken - 1, NULL, &check, TIMEOUT_MS),
                   0);
  assert_false(check->ok);
  assert_true(check->ndiagnostics >= 1);
  assert_string_equal(check->diagnostics[0].problem, "UNKNOWN_TARGET");
  assert_int_equal(check->diagnostics[0].line, 1);
  assert_null(check->machine);
  anim_machine_check_free(check);

  assert_int_equal(anim_client_machine_load(fx.client, "broken", broken, sizeof broken - 1, 0, NULL, TIMEOUT_MS),
                   ANIM_EFORMAT);
  assert_non_null(strstr(anim_client_last_error(fx.client), "nowhere"));

  anim_machine_summary_t *s = NULL;
  assert_int_equal(
      anim_client_machine_load(fx.client, "nested", nested_text, sizeof nested_text - 1, 0, &s, TIMEOUT_MS), 0);
  assert_string_equal(s->name, "nested");
  assert_true(state_index(s, "idle") >= 0 && state_index(s, "walk") >= 0 && state_index(s, "run") >= 0);
  assert_true(s->nevents >= 2);
  assert_string_equal(s->events[0], "END");
  anim_machine_summary_free(s);
  assert_int_equal(
      anim_client_machine_load(fx.client, "nested", nested_text, sizeof nested_text - 1, 0, NULL, TIMEOUT_MS),
      ANIM_EEXIST);

  anim_machine_summary_t **list = NULL;
  int n = 0, found = 0;
  assert_int_equal(anim_client_machine_list(fx.client, &list, &n, TIMEOUT_MS), 0);
  for (int i = 0; i < n; i++) found += !strcmp(list[i]->name, "nested"), anim_machine_summary_free(list[i]);
  free(list);
  assert_int_equal(found, 1);
  assert_int_equal(anim_client_machine_unload(fx.client, "nested", TIMEOUT_MS), 0);
  assert_int_equal(anim_client_machine_unload(fx.client, "nested", TIMEOUT_MS), ANIM_ENOTFOUND);
}

/* A machine character goes idle -> moving/walk on GO, then run on FAST, as
 * both its state and its stream say. */
static void test_machine_character_events_in_the_stream(void **state) {
  anim_machine_summary_t *s = NULL;
  assert_int_equal(
      anim_client_machine_load(fx.client, "nested2", nested_text, sizeof nested_text - 1, 0, &s, TIMEOUT_MS), 0);
  anim_character_mode_t mode = {.mode = ANIM_MODE_MACHINE, .machine = "nested2"};
  uint64_t id;
  assert_int_equal(anim_client_characters_create_mode(fx.client, "default", &mode, NULL, NULL, 1, &id, TIMEOUT_MS), 0);
  uint64_t ids[1] = {id}, sub;
  anim_subscribe_options_t o = {ids, 1, 0, 1, ANIM_POSE_QUANTIZED, 0, 0};
  assert_int_equal(anim_client_subscribe(fx.client, &o, NULL, NULL, &sub, NULL, TIMEOUT_MS), 0);

  const char *script[] = {"GO", "FAST"};
  const char *expect[] = {"walk", "run"};
  for (int k = 0; k < 2; k++) {
    uint64_t tick = 0;
    assert_int_equal(anim_client_machine_events(fx.client, ids, &script[k], 1, &tick, TIMEOUT_MS), 0);
    assert_true(tick > 0);
    int seen = 0;
    for (int f = 0; f < 120 && !seen; f++) {
      anim_stream_frame_t *frame;
      assert_int_equal(anim_client_next_frame(fx.client, &frame, TIMEOUT_MS), 0);
      const anim_character_pose_t *p = &frame->poses[0];
      if (frame->tick >= tick && p->depth >= 1 && p->state_path[p->depth - 1] == (uint32_t)state_index(s, expect[k]))
        seen = 1;
      anim_stream_frame_free(frame);
    }
    if (!seen) fail_msg("the stream never showed state %s after %s", expect[k], script[k]);
  }
  anim_character_state_t *cs;
  assert_int_equal(anim_client_character_state(fx.client, id, 0, &cs, TIMEOUT_MS), 0);
  assert_int_equal(cs->mode, ANIM_MODE_MACHINE);
  assert_string_equal(cs->database, "default"); /* the name of its database, beside its version */
  assert_string_equal(cs->machine, "nested2");
  assert_int_equal(cs->depth, 2);
  assert_string_equal(cs->state_path[0], "moving");
  assert_string_equal(cs->state_path[1], "run");
  anim_character_state_free(cs);

  const char *unknown[] = {"FLY"};
  assert_int_equal(anim_client_machine_events(fx.client, ids, unknown, 1, NULL, TIMEOUT_MS), ANIM_ENOTFOUND);
  const char *names[] = {"speed"};
  float values[] = {1.0f};
  assert_int_not_equal(anim_client_machine_params(fx.client, ids, names, values, 1, NULL, TIMEOUT_MS), 0);
  assert_non_null(strstr(anim_client_last_error(fx.client), "speed"));
  assert_int_equal(anim_client_unsubscribe(fx.client, sub, TIMEOUT_MS), 0);
  assert_int_equal(anim_client_characters_destroy(fx.client, ids, 1, TIMEOUT_MS), 0);
  anim_machine_summary_free(s);
}

/* ---- motion graphs ---- */

static anim_graph_description_t *graph_ready(void) {
  anim_graph_description_t *d = NULL;
  anim_graph_build_options_t o = {.matrix_size = 64};
  int rc = anim_client_graph_build(fx.client, "default", &o, &d, BUILD_TIMEOUT_MS);
  if (rc != 0 && rc != ANIM_EBUSY) fail_msg("build_graph: %s: %s", anim_strerror(rc), anim_client_last_error(fx.client));
  for (int i = 0; i < 600; i++) {
    anim_graph_description_free(d);
    assert_int_equal(anim_client_graph_describe(fx.client, "default", 1, 1, &d, TIMEOUT_MS), 0);
    if (d->status != ANIM_GRAPH_BUILDING && d->ready) return d;
    assert_int_not_equal(d->status, ANIM_GRAPH_FAILED);
    uint64_t rtt;
    anim_client_ping(fx.client, NULL, 0, &rtt, TIMEOUT_MS);
  }
  fail_msg("the graph did not finish building");
  return NULL;
}

static void test_graph_build_describe_query(void **state) {
  anim_graph_description_t *d = graph_ready();
  assert_true(d->nodes > 0 && d->edges >= d->nodes && d->transitions > 0);
  assert_int_equal(d->ntransitions, (int)d->transitions);
  assert_int_equal(d->matrix_size, 64);
  assert_non_null(d->matrix);
  anim_graph_description_free(d);

  const float line[] = {0.0f, 0.0f, 0.0f, 12.0f}, length = 12.0f, pace = FOLLOW_MIN_PACE * DEFAULT_DB_EXPECTED_SPEED;
  anim_graph_query_t q = {.points = line, .npoints = 2, .seconds = 20.0f, .settle = 2.0f, .roots = 1};
  anim_graph_walk_t *w = NULL;
  assert_int_equal(anim_client_graph_query(fx.client, "default", &q, &w, TIMEOUT_MS), 0);
  assert_true(w->nsteps > 0 && w->plans > 0);
  assert_true(w->nroots > 60);
  printf("graph walk on a 12 m line: error mean %.3f m, max %.3f m, %.1f m of it in %.1f s, %d steps, %u plans\n",
         w->error_mean, w->error_max, w->arc, w->seconds, w->nsteps, w->plans);
  assert_int_equal(w->nroots, (int)lroundf(w->seconds * 60.0f));
  assert_true(w->error_mean < PATH_ERROR_MEAN_MAX);
  /* Progress: the line's end reached, in time. */
  if (w->arc < length - PATH_END_MARGIN - 1e-3f || w->seconds > FOLLOW_START_SECONDS + length / pace)
    fail_msg("graph walk: %.2f m of the %.0f m line in %.2f s, its end due in %.1f s", w->arc, length, w->seconds,
             FOLLOW_START_SECONDS + length / pace);
  anim_graph_walk_free(w);
  q.npoints = 1;
  assert_int_equal(anim_client_graph_query(fx.client, "default", &q, &w, TIMEOUT_MS), ANIM_EINVAL);

  anim_character_mode_t mode = {.mode = ANIM_MODE_GRAPH};
  uint64_t id;
  assert_int_equal(anim_client_characters_create_mode(fx.client, "default", &mode, NULL, NULL, 1, &id, TIMEOUT_MS), 0);
  const float *points[] = {line};
  int npoints[] = {2};
  uint64_t tick = 0;
  assert_int_equal(anim_client_graph_paths(fx.client, &id, points, npoints, NULL, 1, &tick, TIMEOUT_MS), 0);
  assert_true(tick > 0);
  /* The character walks the line: watched for GRAPH_WATCH_TICKS ticks. */
  anim_character_state_t *cs = NULL;
  for (;;) {
    assert_int_equal(anim_client_character_state(fx.client, id, 0, &cs, TIMEOUT_MS), 0);
    if (cs->tick >= tick + GRAPH_WATCH_TICKS) break;
    anim_character_state_free(cs);
    nanosleep(&(struct timespec){0, 20000000}, NULL); /* a tick and a bit between looks */
  }
  assert_int_equal(cs->mode, ANIM_MODE_GRAPH);
  assert_string_equal(cs->follow, "path");
  float seconds = (float)(cs->tick - tick) / TICK_RATE, due = pace * (seconds - FOLLOW_START_SECONDS);
  printf("graph character on the line: %.2f m of it after %.2f s, at (%.2f, %.2f)\n", cs->path_arc, seconds,
         cs->position[0], cs->position[2]);
  if (cs->path_arc < due)
    fail_msg("graph character: %.2f m of the line after %.2f s, %.2f m due", cs->path_arc, seconds, due);
  anim_character_state_free(cs);
  assert_int_equal(anim_client_characters_destroy(fx.client, &id, 1, TIMEOUT_MS), 0);
}

/* ---- poses from tracked points ---- */

static void test_align_recovers_a_transform(void **state) {
  enum { N = 5 };
  const float source[N * 3] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1};
  float target[N * 3];
  const float c = cosf(0.7f), s = sinf(0.7f); /* 0.7 rad about +Y, then (1, 2, 3) */
  for (int i = 0; i < N; i++) {
    const float *p = source + 3 * i;
    target[3 * i] = c * p[0] + s * p[2] + 1.0f, target[3 * i + 1] = p[1] + 2.0f,
        target[3 * i + 2] = -s * p[0] + c * p[2] + 3.0f;
  }
  anim_align_result_t a;
  assert_int_equal(anim_client_align(fx.client, source, target, NULL, N, ANIM_ALIGN_RIGID, &a, TIMEOUT_MS), 0);
  assert_float_equal(a.translation[0], 1.0f, ALIGN_TOLERANCE);
  assert_float_equal(a.translation[1], 2.0f, ALIGN_TOLERANCE);
  assert_float_equal(a.translation[2], 3.0f, ALIGN_TOLERANCE);
  assert_float_equal(fabsf(a.rotation[0]), cosf(0.35f), ALIGN_TOLERANCE);
  assert_float_equal(a.matrix[0], c, ALIGN_TOLERANCE);
  assert_true(a.rms < ALIGN_TOLERANCE);
  assert_int_equal(anim_client_align(fx.client, source, target, NULL, 2, ANIM_ALIGN_RIGID, &a, TIMEOUT_MS),
                   ANIM_EINVAL);
  assert_non_null(strstr(anim_client_last_error(fx.client), "at least 3"));
}

static const char *const tracked[] = {"Head", "LeftHand", "RightHand", "Hips"};

/* Trackers at a database frame's own head, hands and hips. */
static void trackers_of_frame(int frame, anim_tracker_t *out) {
  anim_pose_options_t po = {0, 1, 0};
  anim_pose_reply_t *reply;
  assert_int_equal(anim_client_pose(fx.client, "default", frame, 1, &po, &reply, TIMEOUT_MS), 0);
  for (int k = 0; k < 4; k++) {
    int b = bone_index(tracked[k]);
    memset(&out[k], 0, sizeof out[k]);
    out[k].bone = tracked[k];
    memcpy(out[k].position, reply->poses[0].global_positions + 3 * b, sizeof out[k].position);
  }
  anim_pose_reply_free(reply);
}

static void test_fit_pose_and_tracker_character(void **state) {
  anim_tracker_t t[4];
  trackers_of_frame(300, t);
  anim_fit_result_t *fit = NULL;
  assert_int_equal(anim_client_fit_pose(fx.client, "default", t, 4, &fit, TIMEOUT_MS), 0);
  assert_int_equal(fit->nbones, fx.defaults->nbones);
  assert_int_equal(fit->nresiduals, 4);
  for (int k = 0; k < 4; k++)
    if (!(fit->residuals[k] < FIT_RESIDUAL_MAX)) fail_msg("%s: residual %.3f m", tracked[k], fit->residuals[k]);
  anim_fit_result_free(fit);
  t[0].bone = "Tail";
  assert_int_equal(anim_client_fit_pose(fx.client, "default", t, 4, &fit, TIMEOUT_MS), ANIM_ENOTFOUND);
  assert_non_null(strstr(anim_client_last_error(fx.client), "Tail"));
  t[0].bone = tracked[0];

  anim_tracked_bone_t bones[4];
  for (int k = 0; k < 4; k++) bones[k] = (anim_tracked_bone_t){tracked[k], {0, 0, 0}};
  anim_character_mode_t mode = {.mode = ANIM_MODE_TRACKER, .trackers = bones, .ntrackers = 4};
  uint64_t id;
  assert_int_equal(anim_client_characters_create_mode(fx.client, "default", &mode, NULL, NULL, 1, &id, TIMEOUT_MS), 0);
  int counts[1] = {4};
  uint64_t tick = 0, sub;
  anim_subscribe_options_t o = {&id, 1, 0, 1, ANIM_POSE_FLOAT, 0, 0};
  assert_int_equal(anim_client_subscribe(fx.client, &o, NULL, NULL, &sub, NULL, TIMEOUT_MS), 0);
  for (int f = 300; f < 330; f++) { /* a frame of the clip a tick */
    trackers_of_frame(f, t);
    for (int k = 0; k < 4; k++) t[k].bone = NULL; /* set_trackers: the creation order */
    assert_int_equal(anim_client_trackers_set(fx.client, &id, t, counts, 1, &tick, TIMEOUT_MS), 0);
    for (uint64_t seen = 0; seen < tick;) {
      anim_stream_frame_t *frame;
      assert_int_equal(anim_client_next_frame(fx.client, &frame, TIMEOUT_MS), 0);
      seen = frame->tick;
      anim_stream_frame_free(frame);
    }
  }
  assert_int_equal(anim_client_unsubscribe(fx.client, sub, TIMEOUT_MS), 0);
  anim_character_state_t *cs;
  assert_int_equal(anim_client_character_state(fx.client, id, 0, &cs, TIMEOUT_MS), 0);
  assert_int_equal(cs->mode, ANIM_MODE_TRACKER);
  assert_int_equal(cs->ntracker_residuals, 4);
  assert_true(cs->scale > 0.9f && cs->scale < 1.1f);
  for (int k = 0; k < 4; k++)
    if (!(cs->tracker_residuals[k] >= 0.0f && cs->tracker_residuals[k] < 0.1f))
      fail_msg("%s: residual %.3f m after 30 inputs", tracked[k], cs->tracker_residuals[k]);
  anim_character_state_free(cs);
  /* Named for a tick ahead: answered with that tick; too far ahead: refused naming the field. */
  uint64_t at = 0;
  assert_int_equal(anim_client_trackers_set(fx.client, &id, t, counts, 1, &tick, TIMEOUT_MS), 0); /* the next now */
  assert_int_equal(anim_client_trackers_set_at(fx.client, tick + 30, &id, t, counts, 1, &at, TIMEOUT_MS), 0);
  if (at != tick + 30) fail_msg("named for tick %llu, answered %llu", (unsigned long long)(tick + 30),
                                (unsigned long long)at);
  assert_int_equal(anim_client_trackers_set_at(fx.client, tick + 1000, &id, t, counts, 1, NULL, TIMEOUT_MS), ANIM_ERANGE);
  assert_non_null(strstr(anim_client_last_error(fx.client), "set_trackers.tick"));
  counts[0] = 3;
  assert_int_equal(anim_client_trackers_set(fx.client, &id, t, counts, 1, NULL, TIMEOUT_MS), ANIM_EDIMENSION);
  assert_non_null(strstr(anim_client_last_error(fx.client), "the character tracks 4"));
  assert_int_equal(anim_client_characters_destroy(fx.client, &id, 1, TIMEOUT_MS), 0);
}

/* ---- the _send forms, pipelined ---- */

typedef struct {
  int calls[8];          /* per request, in the order below */
  int failures;
  uint64_t ids[8];
  int ncalled;
} areas_t;

enum { SEND_CHECK, SEND_LOAD, SEND_LIST, SEND_UNLOAD, SEND_DESCRIBE, SEND_ALIGN, SEND_FIT, SEND_COUNT };

static void called(areas_t *a, int which, uint64_t id, int ok) {
  a->calls[which]++;
  if (id != a->ids[which] || !ok) a->failures++;
  a->ncalled++;
}

static void list_cb(anim_client_t *c, uint64_t id, int status, const anim_machine_summary_t *const *machines,
                    int count, void *data);
static void unload_cb(anim_client_t *c, uint64_t id, int status, void *data);

static void check_cb(anim_client_t *c, uint64_t id, int status, const anim_machine_check_t *check, void *data) {
  called(data, SEND_CHECK, id, status == 0 && check && check->ok && check->machine && check->machine->nstates >= 4);
}

/* Pipelined requests may run in any order on the server: list and unload
 * are sent once the load is answered, from its callback. */
static void load_cb(anim_client_t *c, uint64_t id, int status, const anim_machine_summary_t *s, void *data) {
  areas_t *a = data;
  called(a, SEND_LOAD, id, status == 0 && s && !strcmp(s->name, "piped"));
  if (anim_client_machine_list_send(c, list_cb, a, &a->ids[SEND_LIST]) != 0) a->failures++;
}

static void list_cb(anim_client_t *c, uint64_t id, int status, const anim_machine_summary_t *const *machines,
                    int count, void *data) {
  int found = 0;
  for (int i = 0; status == 0 && i < count; i++) found += !strcmp(machines[i]->name, "piped");
  areas_t *a = data;
  called(a, SEND_LIST, id, status == 0 && found == 1);
  if (anim_client_machine_unload_send(c, "piped", unload_cb, a, &a->ids[SEND_UNLOAD]) != 0) a->failures++;
}

static void unload_cb(anim_client_t *c, uint64_t id, int status, void *data) {
  called(data, SEND_UNLOAD, id, status == 0);
}

static void describe_cb(anim_client_t *c, uint64_t id, int status, const anim_graph_description_t *d, void *data) {
  called(data, SEND_DESCRIBE, id, status == 0 && d && d->ready && d->ntransitions == 0);
}

static void align_cb(anim_client_t *c, uint64_t id, int status, const anim_align_result_t *r, void *data) {
  called(data, SEND_ALIGN, id, status == 0 && r && r->rms < ALIGN_TOLERANCE);
  /* A blocking call in a callback: the later answers arrive in here. */
  anim_machine_summary_t **list = NULL;
  int n = 0;
  if (anim_client_machine_list(c, &list, &n, TIMEOUT_MS) != 0) ((areas_t *)data)->failures++;
  for (int i = 0; i < n; i++) anim_machine_summary_free(list[i]);
  free(list);
}

static void fit_cb(anim_client_t *c, uint64_t id, int status, const anim_fit_result_t *fit, void *data) {
  called(data, SEND_FIT, id, status == 0 && fit && fit->nresiduals == 4 && fit->residuals[0] < FIT_RESIDUAL_MAX);
}

static void test_send_forms_pipelined(void **state) {
  areas_t a;
  memset(&a, 0, sizeof a);
  /* Invalid arguments: refused at once, no callback ever. */
  assert_int_equal(anim_client_machine_load_send(fx.client, NULL, nested_text, 4, 0, load_cb, &a, NULL), ANIM_EINVAL);
  assert_int_equal(anim_client_align_send(fx.client, NULL, NULL, NULL, 3, ANIM_ALIGN_RIGID, align_cb, &a, NULL),
                   ANIM_EINVAL);
  assert_int_equal(anim_client_fit_pose_send(fx.client, "default", NULL, 4, fit_cb, &a, NULL), ANIM_EINVAL);
  anim_graph_query_t bad = {.npoints = 1};
  assert_int_equal(anim_client_graph_query_send(fx.client, "default", &bad, NULL, &a, NULL), ANIM_EINVAL);
  assert_int_equal(anim_client_pending(fx.client), 0);

  const float source[12] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
  float target[12];
  for (int i = 0; i < 12; i++) target[i] = source[i] + (i % 3 == 1 ? 0.5f : 0.0f);
  anim_tracker_t t[4];
  trackers_of_frame(300, t);
  const size_t len = sizeof nested_text - 1;
  assert_int_equal(anim_client_machine_check_send(fx.client, "piped", nested_text, len, "default", check_cb, &a,
                                                  &a.ids[SEND_CHECK]), 0);
  assert_int_equal(anim_client_align_send(fx.client, source, target, NULL, 4, ANIM_ALIGN_RIGID, align_cb, &a,
                                          &a.ids[SEND_ALIGN]), 0);
  assert_int_equal(anim_client_machine_load_send(fx.client, "piped", nested_text, len, 0, load_cb, &a,
                                                 &a.ids[SEND_LOAD]), 0);
  assert_int_equal(anim_client_graph_describe_send(fx.client, "default", 0, 0, describe_cb, &a, &a.ids[SEND_DESCRIBE]),
                   0);
  assert_int_equal(anim_client_fit_pose_send(fx.client, "default", t, 4, fit_cb, &a, &a.ids[SEND_FIT]), 0);
  while (a.ncalled < SEND_COUNT) assert_int_equal(anim_client_poll(fx.client, TIMEOUT_MS), 0);
  assert_int_equal(a.failures, 0);
  for (int k = 0; k < SEND_COUNT; k++) assert_int_equal(a.calls[k], 1);
  assert_int_equal(anim_client_pending(fx.client), 0);
}


/* A call the library refuses before sending (ANIM_EINVAL) says so in
 * anim_client_last_error, naming the function; it once left the previous
 * server error there, so the documented pattern of printing both blamed an
 * unrelated request. */
static void expect_refused(int rc, const char *function) {
  assert_int_equal(rc, ANIM_EINVAL);
  const char *why = anim_client_last_error(fx.client);
  if (!strstr(why, function) || strstr(why, "no database"))
    fail_msg("%s refused, last error \"%s\"", function, why);
}

static void test_local_refusals_say_why(void **state) {
  uint64_t id, ids[1];
  assert_int_equal(anim_client_characters_create(fx.client, "nowhere", NULL, NULL, 1, &id, TIMEOUT_MS),
                   ANIM_ENOTFOUND);
  assert_non_null(strstr(anim_client_last_error(fx.client), "no database"));
  expect_refused(anim_client_characters_create(fx.client, "default", NULL, NULL, 0, &id, TIMEOUT_MS),
                 "anim_client_characters_create");
  assert_int_equal(anim_client_characters_create(fx.client, "nowhere", NULL, NULL, 1, &id, TIMEOUT_MS),
                   ANIM_ENOTFOUND);
  /* A negative count of frames, or a start frame below -1, was sent as "the default": refused now. */
  anim_character_params_t params;
  anim_character_params_init(&params);
  params.search_interval = -3;
  expect_refused(anim_client_characters_create(fx.client, "default", &params, NULL, 1, &id, TIMEOUT_MS),
                 "anim_client_characters_create");
  anim_character_params_init(&params);
  params.ignore_range_end = -1;
  expect_refused(anim_client_characters_create(fx.client, "default", &params, NULL, 1, &id, TIMEOUT_MS),
                 "anim_client_characters_create");
  anim_character_placement_t place = {0, 0, 0, -2};
  expect_refused(anim_client_characters_create(fx.client, "default", NULL, &place, 1, &id, TIMEOUT_MS),
                 "anim_client_characters_create");
  assert_int_equal(anim_client_characters_create(fx.client, "default", NULL, NULL, 1, ids, TIMEOUT_MS), 0);
  anim_character_input_t in;
  anim_character_input_stick(&in, 0, 1, 0, 0);
  in.kind = 7;
  expect_refused(anim_client_characters_set_input(fx.client, ids, &in, 1, NULL, TIMEOUT_MS),
                 "anim_client_characters_set_input");
  assert_int_equal(anim_client_characters_create(fx.client, "nowhere", NULL, NULL, 1, &id, TIMEOUT_MS),
                   ANIM_ENOTFOUND);
  anim_subscribe_options_t sub = {ids, 1, 0, -5, ANIM_POSE_FLOAT, 0, 0};
  expect_refused(anim_client_subscribe(fx.client, &sub, NULL, NULL, NULL, NULL, TIMEOUT_MS), "anim_client_subscribe");
  assert_int_equal(anim_client_characters_create(fx.client, "nowhere", NULL, NULL, 1, &id, TIMEOUT_MS),
                   ANIM_ENOTFOUND);
  expect_refused(anim_client_subscription_update(fx.client, 1, -1, 0, 0, TIMEOUT_MS),
                 "anim_client_subscription_update");
  assert_int_equal(anim_client_characters_destroy(fx.client, ids, 1, TIMEOUT_MS), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_machine_check_load_list_unload),
      cmocka_unit_test(test_machine_character_events_in_the_stream),
      cmocka_unit_test(test_graph_build_describe_query),
      cmocka_unit_test(test_align_recovers_a_transform),
      cmocka_unit_test(test_fit_pose_and_tracker_character),
      cmocka_unit_test(test_send_forms_pipelined),
      cmocka_unit_test(test_local_refusals_say_why),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
