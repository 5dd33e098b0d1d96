/*
 * test_machine_service.c: action state machines served over the wire: load
 * (text or a file of the data directory), check (every problem with its
 * line and column), list, unload; characters in MODE_MACHINE driven by
 * events and parameters; their state paths in the stream, in both
 * encodings.
 *
 * Invalid requests first (each error names its field, the value and the
 * rule), then behaviour: nested machines on the procedural database (events
 * to the innermost machine first, then up, seen in the stream), and the
 * seed's jump machine (docs/machines/jump.machine) on real Bandai Namco
 * mocap, its events sent as the stream shows each state: the states come in
 * the seed's order, each showing frames of its own span. The jump run is
 * recorded (build/tests/jump.stream) for docs' filmstrip (make seq-filmstrips).
 *
 * Requests are built with protobuf-c from the proto and sent raw
 * (wire_client.h): the client library does not have these requests yet.
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
#include "anim_error.h"
#include "data_dir.h"
#include "database/database.h"
#include "server_proc.h"
#include "shared_data.h"
#include "stream_record.h"
#include "wire_client.h"

#define TIMEOUT_MS 20000
/* A state's frames may lie one frame outside its span (rounding of the
 * span's seconds, and the first tick after a transition). */
#define SPAN_SLACK_FRAMES 1

static anim_test_server_t server;
static char dir[96];
static anim_wire_t wire;

static const char nested_text[] = "idle   { clip idle loop  GO moving }\n"
                                  "moving { machine loco  STOP idle  END idle }\n"
                                  "machine loco {\n"
                                  "  walk     { clip walk [0 1] loop  FAST run  HALT stopping }\n"
                                  "  run      { clip run [0 1] loop   SLOW walk  STOP walk }\n"
                                  "  stopping { clip walk_stop [2 2.5] }\n"
                                  "}\n";

static int setup(void **state) {
  anim_test_data_dir_make(dir, sizeof dir, "machines");
  anim_test_data_dir_copy(dir, "jump.machine", "docs/machines/jump.machine");
  anim_test_data_dir_put_file(dir, "nested.machine", nested_text, sizeof nested_text - 1);
  anim_test_data_dir_put_file(dir, "broken.machine", "stand { JUMP nowhere }\n", 23);
  const char *args[] = {"--data-dir", dir, NULL};
  if (anim_test_server_start(&server, "machine_service", args) != 0) return -1;
  anim_wire_open(&wire, &server);
  return 0;
}

static int teardown(void **state) {
  anim_wire_close(&wire);
  int rc = anim_test_server_stop(&server);
  anim_test_data_dir_remove(dir);
  return rc == 0 ? 0 : -1;
}

/* ---- requests ---- */

static Animserver__ServerMessage *load(const char *name, const char *text, int replace, int code,
                                       const char *contains) {
  Animserver__LoadMachineRequest body = ANIMSERVER__LOAD_MACHINE_REQUEST__INIT;
  body.name = (char *)name;
  body.text.data = (uint8_t *)text, body.text.len = text ? strlen(text) : 0;
  body.replace = replace;
  Animserver__Request r = ANIMSERVER__REQUEST__INIT;
  r.body_case = ANIMSERVER__REQUEST__BODY_LOAD_MACHINE, r.load_machine = &body;
  if (code) return anim_wire_expect_error(&wire, &r, code, contains), NULL;
  return anim_wire_ok(&wire, &r, TIMEOUT_MS);
}

static Animserver__ServerMessage *check(const char *name, const char *text, const char *database) {
  Animserver__CheckMachineRequest body = ANIMSERVER__CHECK_MACHINE_REQUEST__INIT;
  body.name = (char *)name;
  body.text.data = (uint8_t *)text, body.text.len = text ? strlen(text) : 0;
  body.database = (char *)database;
  Animserver__Request r = ANIMSERVER__REQUEST__INIT;
  r.body_case = ANIMSERVER__REQUEST__BODY_CHECK_MACHINE, r.check_machine = &body;
  return anim_wire_call(&wire, &r, TIMEOUT_MS);
}

/* Characters of mode on database (machine for MODE_MACHINE); 0 after an expected error. */
static uint64_t create(anim_wire_t *w, const char *database, int mode, const char *machine, int code,
                       const char *contains) {
  Animserver__CreateCharactersRequest body = ANIMSERVER__CREATE_CHARACTERS_REQUEST__INIT;
  body.database = (char *)database;
  body.mode = (Animserver__CharacterMode)mode;
  body.machine = (char *)machine;
  Animserver__Request r = ANIMSERVER__REQUEST__INIT;
  r.body_case = ANIMSERVER__REQUEST__BODY_CREATE_CHARACTERS, r.create_characters = &body;
  if (code) return anim_wire_expect_error(w, &r, code, contains), 0;
  Animserver__ServerMessage *m = anim_wire_ok(w, &r, TIMEOUT_MS);
  uint64_t id = m->response->create_characters->characters[0];
  anim_wire_free(m);
  return id;
}

static void destroy(uint64_t id) {
  Animserver__DestroyCharactersRequest body = ANIMSERVER__DESTROY_CHARACTERS_REQUEST__INIT;
  body.n_characters = 1, body.characters = &id;
  Animserver__Request r = ANIMSERVER__REQUEST__INIT;
  r.body_case = ANIMSERVER__REQUEST__BODY_DESTROY_CHARACTERS, r.destroy_characters = &body;
  anim_wire_free(anim_wire_ok(&wire, &r, TIMEOUT_MS));
}

/* Events (n of them, all to id) on w: with wait, the answer is checked (an
 * error of code naming `contains`, or none when code is 0); without, it is
 * left to come later. */
static void events_to(anim_wire_t *w, uint64_t id, const char *const *events, int n, int wait, int code,
                      const char *contains) {
  Animserver__CharacterEvent items[40], *pointers[40];
  for (int i = 0; i < n; i++) {
    items[i] = (Animserver__CharacterEvent)ANIMSERVER__CHARACTER_EVENT__INIT;
    items[i].character = id, items[i].event = (char *)events[i];
    pointers[i] = &items[i];
  }
  Animserver__SendEventsRequest body = ANIMSERVER__SEND_EVENTS_REQUEST__INIT;
  body.n_events = (size_t)n, body.events = pointers;
  Animserver__Request r = ANIMSERVER__REQUEST__INIT;
  r.body_case = ANIMSERVER__REQUEST__BODY_SEND_EVENTS, r.send_events = &body;
  if (!wait) anim_wire_send(w, &r);
  else if (code) anim_wire_expect_error(w, &r, code, contains);
  else anim_wire_free(anim_wire_ok(w, &r, TIMEOUT_MS));
}

static void post_events(uint64_t id, const char *const *events, int n) { events_to(&wire, id, events, n, 0, 0, NULL); }

static void send_events(anim_wire_t *w, uint64_t id, const char *const *events, int n, int code, const char *contains) {
  events_to(w, id, events, n, 1, code, contains);
}

static void set_param(uint64_t id, const char *name, float value, int code, const char *contains) {
  Animserver__CharacterParam item = ANIMSERVER__CHARACTER_PARAM__INIT, *pointer = &item;
  item.character = id, item.name = (char *)name, item.value = value;
  Animserver__SetParamsRequest body = ANIMSERVER__SET_PARAMS_REQUEST__INIT;
  body.n_params = 1, body.params = &pointer;
  Animserver__Request r = ANIMSERVER__REQUEST__INIT;
  r.body_case = ANIMSERVER__REQUEST__BODY_SET_PARAMS, r.set_params = &body;
  if (code) anim_wire_expect_error(&wire, &r, code, contains);
  else anim_wire_free(anim_wire_ok(&wire, &r, TIMEOUT_MS));
}

/* Subscribes to id: its subscription id. */
static uint64_t subscribe(uint64_t id, int quantized, int global) {
  Animserver__SubscribeRequest body = ANIMSERVER__SUBSCRIBE_REQUEST__INIT;
  body.n_characters = 1, body.characters = &id;
  body.encoding = quantized ? ANIMSERVER__POSE_ENCODING__ENCODING_QUANTIZED : ANIMSERVER__POSE_ENCODING__ENCODING_FLOAT;
  body.global_positions = global;
  Animserver__Request r = ANIMSERVER__REQUEST__INIT;
  r.body_case = ANIMSERVER__REQUEST__BODY_SUBSCRIBE, r.subscribe = &body;
  Animserver__ServerMessage *m = anim_wire_ok(&wire, &r, TIMEOUT_MS);
  uint64_t s = m->response->subscribe->subscription;
  anim_wire_free(m);
  return s;
}

static void unsubscribe(uint64_t subscription) {
  Animserver__UnsubscribeRequest body = ANIMSERVER__UNSUBSCRIBE_REQUEST__INIT;
  body.subscription = subscription;
  Animserver__Request r = ANIMSERVER__REQUEST__INIT;
  r.body_case = ANIMSERVER__REQUEST__BODY_UNSUBSCRIBE, r.unsubscribe = &body;
  anim_wire_free(anim_wire_ok(&wire, &r, TIMEOUT_MS));
}

/* The next stream frame of subscription (answers in between are checked and dropped). */
static Animserver__ServerMessage *next_frame(uint64_t subscription) {
  for (;;) {
    Animserver__ServerMessage *m = anim_wire_next(&wire, TIMEOUT_MS);
    if (m->kind_case == ANIMSERVER__SERVER_MESSAGE__KIND_STREAM && m->stream->subscription_id == subscription &&
        m->stream->n_poses == 1)
      return m;
    if (m->kind_case == ANIMSERVER__SERVER_MESSAGE__KIND_RESPONSE && m->response->error)
      fail_msg("an answer failed: %s", m->response->error->message);
    anim_wire_free(m);
  }
}

/* "outer/inner" of a streamed path, with names from summary. */
static void path_of(const Animserver__CharacterPose *p, const Animserver__MachineSummary *summary, char *out,
                    size_t len) {
  out[0] = '\0';
  for (size_t l = 0; l < p->n_state_path; l++) {
    assert_true(p->state_path[l] < summary->n_states);
    size_t at = strlen(out);
    snprintf(out + at, len - at, "%s%s", l ? "/" : "", summary->states[p->state_path[l]]->name);
  }
}

/* ---- invalid requests ---- */

static void test_invalid(void **state) {
  load("../escape", "a { clip idle }", 0, ANIM_EBADNAME, "load_machine.name = \"../escape\": not a plain name");
  load("missing", NULL, 0, ANIM_ENOTFOUND, "load_machine.name: no file missing.machine in the data directory");
  load("broken", NULL, 0, ANIM_EFORMAT,
       "load_machine.name: broken.machine:1:14: state 'stand' has no target 'nowhere'");
  load("bad", "stand { JUMP }", 0, ANIM_EFORMAT, "load_machine.text: bad:1:14:");
  char *big = malloc((1u << 20) + 2);
  memset(big, ' ', (1u << 20) + 1);
  big[(1u << 20) + 1] = '\0';
  load("big", big, 0, ANIM_ELIMIT, "load_machine.text = 1048577: at most 1048576");
  free(big);

  /* check: every problem, with its line and column, and the machine is not kept. */
  Animserver__ServerMessage *m = check("", "stand { JUMP crouch }\nlost { clip idle }\nstand { clip walk }\n", NULL);
  Animserver__CheckMachineResponse *c = m->response->check_machine;
  assert_non_null(c);
  assert_false(c->ok);
  assert_true(c->total >= 3 && c->n_diagnostics == c->total);
  struct {
    const char *problem;
    unsigned line, column;
  } expected[] = {{"DUPLICATE", 3, 1}, {"UNKNOWN_TARGET", 1, 14}, {"UNREACHABLE", 2, 1}};
  for (int i = 0; i < 3; i++) {
    int found = 0;
    for (size_t k = 0; k < c->n_diagnostics; k++)
      found |= strcmp(c->diagnostics[k]->problem, expected[i].problem) == 0 &&
               c->diagnostics[k]->line == expected[i].line && c->diagnostics[k]->column == expected[i].column;
    if (!found)
      fail_msg("check_machine did not report %s at %u:%u", expected[i].problem, expected[i].line, expected[i].column);
  }
  assert_non_null(strstr(c->diagnostics[0]->message, "request:"));
  anim_wire_free(m);
  /* Bound to a database: its unknown ranges, at their column. */
  m = check("", "a { clip idle GO b }\nb { clip nosuch [0 1] }\n", "default");
  c = m->response->check_machine;
  assert_false(c->ok);
  assert_int_equal(c->n_diagnostics, 1);
  int unknown_range = 0;
  for (size_t k = 0; k < c->n_diagnostics; k++)
    unknown_range |= strcmp(c->diagnostics[k]->problem, "UNKNOWN_RANGE") == 0 && c->diagnostics[k]->line == 2 &&
                     c->diagnostics[k]->column == 10;
  assert_true(unknown_range);
  anim_wire_free(m);
  /* An unknown tag at the tag's word, not the state's name (2:1 once). */
  m = check("", "a { clip idle GO b }\nb { tag nosuchtag GO a }\n", "default");
  c = m->response->check_machine;
  assert_false(c->ok);
  assert_int_equal(c->n_diagnostics, 1);
  assert_string_equal(c->diagnostics[0]->problem, "UNKNOWN_TAG");
  assert_int_equal(c->diagnostics[0]->line, 2), assert_int_equal(c->diagnostics[0]->column, 9);
  anim_wire_free(m);
  /* A good file checks without being loaded, with the version a load
   * gives it (check said 0 once). */
  m = check("nested", NULL, "default");
  assert_true(m->response->check_machine->ok);
  assert_int_equal(m->response->check_machine->machine->n_states, 5);
  assert_int_equal(m->response->check_machine->machine->depth, 2);
  uint64_t checked_version = m->response->check_machine->machine->version;
  assert_true(checked_version != 0);
  anim_wire_free(m);
  m = check("", "a { clip idle }", NULL); /* a request's text too */
  uint64_t text_version = m->response->check_machine->machine->version;
  anim_wire_free(m);
  m = load("versioned", "a { clip idle }", 0, 0, NULL);
  assert_true(m->response->load_machine->machine->version == text_version);
  anim_wire_free(m);
  Animserver__UnloadMachineRequest versioned = ANIMSERVER__UNLOAD_MACHINE_REQUEST__INIT;
  versioned.name = "versioned";
  Animserver__Request ur = ANIMSERVER__REQUEST__INIT;
  ur.body_case = ANIMSERVER__REQUEST__BODY_UNLOAD_MACHINE, ur.unload_machine = &versioned;
  anim_wire_free(anim_wire_ok(&wire, &ur, TIMEOUT_MS));
  Animserver__CheckMachineRequest body = ANIMSERVER__CHECK_MACHINE_REQUEST__INIT;
  Animserver__Request r = ANIMSERVER__REQUEST__INIT;
  r.body_case = ANIMSERVER__REQUEST__BODY_CHECK_MACHINE, r.check_machine = &body;
  anim_wire_expect_error(&wire, &r, ANIM_EBADNAME, "check_machine.name is empty");
  body.name = "nested", body.database = "nowhere";
  anim_wire_expect_error(&wire, &r, ANIM_ENOTFOUND, "check_machine.database = \"nowhere\": no database of that name");

  /* Names: loaded once unless replaced. */
  m = load("nested", NULL, 0, 0, NULL);
  assert_true(m->response->load_machine->machine->version == checked_version);
  anim_wire_free(m);
  load("nested", NULL, 0, ANIM_EEXIST, "load_machine.name = \"nested\": already loaded (set replace)");
  anim_wire_free(load("nested", nested_text, 1, 0, NULL));
  anim_wire_free(load("far", "a { clip nowhere }", 0, 0, NULL)); /* parses; binds nowhere */

  /* Characters. */
  create(&wire, "default", ANIMSERVER__CHARACTER_MODE__MODE_MACHINE, "", ANIM_EBADNAME,
         "create_characters.machine is empty");
  create(&wire, "default", ANIMSERVER__CHARACTER_MODE__MODE_MACHINE, "ghost", ANIM_ENOTFOUND,
         "create_characters.machine = \"ghost\": no machine of that name is loaded");
  create(&wire, "default", ANIMSERVER__CHARACTER_MODE__MODE_MOTION_MATCHING, "nested", ANIM_EINVAL,
         "create_characters.machine = \"nested\": only with mode MODE_MACHINE");
  create(&wire, "default", ANIMSERVER__CHARACTER_MODE__MODE_MACHINE, "far", ANIM_ENOTFOUND,
         "create_characters.machine = \"far\": on database default: "
         "far:1:10: database 'default' has no range 'nowhere'");
  uint64_t id = create(&wire, "default", ANIMSERVER__CHARACTER_MODE__MODE_MACHINE, "nested", 0, NULL);
  uint64_t mm = create(&wire, "default", ANIMSERVER__CHARACTER_MODE__MODE_MOTION_MATCHING, "", 0, NULL);
  const char *nope[] = {"NOPE"}, *empty[] = {""}, *go[] = {"GO"};
  send_events(&wire, id, nope, 1, ANIM_ENOTFOUND,
              "send_events.events[0].event = \"NOPE\": the machine has no such event");
  send_events(&wire, id, empty, 1, ANIM_EBADNAME, "send_events.events[0].event is empty");
  send_events(&wire, mm, go, 1, ANIM_EUNSUPPORTED, "send_events.events[0].character = ");
  send_events(&wire, 12345, go, 1, ANIM_ENOTFOUND, "send_events.events[0] = 12345: no such character");
  const char *many[33];
  for (int i = 0; i < 33; i++) many[i] = "SLOW";
  send_events(&wire, id, many, 33, ANIM_ELIMIT, "send_events.events[32]: character");
  anim_wire_t other;
  anim_wire_open(&other, &server);
  send_events(&other, id, go, 1, ANIM_EPERM, "send_events.events[0] = ");
  anim_wire_close(&other);
  set_param(id, "speed", 1.0f, ANIM_ENOTFOUND,
            "set_params.params[0].name = \"speed\": the machine has no such parameter");
  set_param(id, "speed", NAN, ANIM_ENONFINITE, "set_params.params[0].value is NaN");

  /* Listed with its characters; unloading leaves them running. */
  Animserver__ListMachinesRequest lb = ANIMSERVER__LIST_MACHINES_REQUEST__INIT;
  r = (Animserver__Request)ANIMSERVER__REQUEST__INIT;
  r.body_case = ANIMSERVER__REQUEST__BODY_LIST_MACHINES, r.list_machines = &lb;
  m = anim_wire_ok(&wire, &r, TIMEOUT_MS);
  int seen = 0;
  for (size_t i = 0; i < m->response->list_machines->n_machines; i++) {
    const Animserver__MachineSummary *s = m->response->list_machines->machines[i];
    if (strcmp(s->name, "nested") == 0) {
      seen = 1;
      assert_int_equal(s->characters, 1);
      assert_string_equal(s->source, "request");
      assert_string_equal(s->states[3]->name, "run");
      assert_string_equal(s->states[3]->machine, "loco");
      assert_string_equal(s->states[1]->motion, "machine");
      assert_string_equal(s->states[1]->nested, "loco");
    }
  }
  assert_true(seen);
  anim_wire_free(m);
  Animserver__UnloadMachineRequest ub = ANIMSERVER__UNLOAD_MACHINE_REQUEST__INIT;
  ub.name = "nested";
  r.body_case = ANIMSERVER__REQUEST__BODY_UNLOAD_MACHINE, r.unload_machine = &ub;
  anim_wire_free(anim_wire_ok(&wire, &r, TIMEOUT_MS));
  anim_wire_expect_error(&wire, &r, ANIM_ENOTFOUND,
                         "unload_machine.name = \"nested\": no machine of that name is loaded");
  send_events(&wire, id, go, 1, 0, NULL);
  destroy(id);
  destroy(mm);
}

/* ---- nested machines in the stream ---- */

/* Sends event (NULL: none) and reads frames until the path reads `want`
 * (at most 30 frames); returns that frame's pose fields checked. */
static void expect_path(uint64_t id, uint64_t subscription, const Animserver__MachineSummary *summary,
                        const char *event, const char *want) {
  if (event) post_events(id, &event, 1);
  char path[256] = "";
  for (int i = 0; i < 30; i++) {
    Animserver__ServerMessage *m = next_frame(subscription);
    const Animserver__CharacterPose *p = m->stream->poses[0];
    path_of(p, summary, path, sizeof path);
    assert_int_equal(p->n_state_times, p->n_state_path);
    if (p->state_changed) { /* a changed frame names its path */
      assert_int_equal(p->n_state_names, p->n_state_path);
      for (size_t l = 0; l < p->n_state_path; l++)
        assert_string_equal(p->state_names[l], summary->states[p->state_path[l]]->name);
    } else {
      assert_int_equal(p->n_state_names, 0);
    }
    int done = strcmp(path, want) == 0;
    anim_wire_free(m);
    if (done) return;
  }
  fail_msg("after %s the path is %s, not %s", event ? event : "nothing", path, want);
}

static void test_nested(void **state) {
  Animserver__ServerMessage *loaded = load("nested", NULL, 1, 0, NULL);
  const Animserver__MachineSummary *summary = loaded->response->load_machine->machine;
  assert_string_equal(summary->source, "nested.machine");
  uint64_t id = create(&wire, "default", ANIMSERVER__CHARACTER_MODE__MODE_MACHINE, "nested", 0, NULL);
  uint64_t s = subscribe(id, 0, 0);
  expect_path(id, s, summary, NULL, "idle");
  expect_path(id, s, summary, "GO", "moving/walk");
  expect_path(id, s, summary, "FAST", "moving/run");
  expect_path(id, s, summary, "STOP", "moving/walk"); /* the inner machine takes it first */
  expect_path(id, s, summary, "STOP", "idle");        /* walk has none: up to the outer one */
  expect_path(id, s, summary, "GO", "moving/walk");   /* entered again at its initial state */
  /* The quantized encoding carries the same path. */
  uint64_t q = subscribe(id, 1, 0);
  unsubscribe(s);
  expect_path(id, q, summary, "FAST", "moving/run");
  /* character_state names the path. */
  Animserver__CharacterStateRequest body = ANIMSERVER__CHARACTER_STATE_REQUEST__INIT;
  body.character = id;
  Animserver__Request r = ANIMSERVER__REQUEST__INIT;
  r.body_case = ANIMSERVER__REQUEST__BODY_CHARACTER_STATE, r.character_state = &body;
  Animserver__ServerMessage *m = anim_wire_ok(&wire, &r, TIMEOUT_MS);
  const Animserver__CharacterStateResponse *st = m->response->character_state;
  assert_int_equal(st->mode, ANIMSERVER__CHARACTER_MODE__MODE_MACHINE);
  assert_string_equal(st->machine, "nested");
  assert_int_equal(st->n_state_path, 2);
  assert_string_equal(st->state_path[0], "moving");
  assert_string_equal(st->state_path[1], "run");
  assert_true(st->state_times[0] > st->state_times[1]); /* the outer state's clock ran on */
  anim_wire_free(m);
  unsubscribe(q);
  destroy(id);
  anim_wire_free(loaded);
}

/* ---- the seed's jump machine on real mocap ---- */

typedef struct {
  const char *state, *range;
  float from, to; /* s */
} span_t;

/* docs/machines/jump.machine's spans. */
static const span_t spans[] = {
    {"stand", "dataset-2_walk_normal_001", 0.0f, 0.5f},   {"stand2crouch", "dataset-2_walk_normal_001", 0.5f, 1.2f},
    {"crouch", "dataset-2_run_normal_001", 0.0f, 0.3f},   {"takeoff", "dataset-2_run_normal_001", 0.3f, 0.8f},
    {"hop", "dataset-1_run_normal_001", 0.0f, 0.4f},      {"float", "dataset-1_run_active_001", 0.15f, 0.45f},
    {"land", "dataset-1_run_normal_001", 0.4f, 0.76f},
};

static void test_jump_machine(void **state) {
  anim_database_t db;
  if (!anim_test_bandai_database(&db)) return;
  anim_test_data_dir_put_database(dir, &db, "bandai");
  Animserver__LoadDatabaseRequest lb = ANIMSERVER__LOAD_DATABASE_REQUEST__INIT;
  lb.name = "bandai";
  Animserver__Request r = ANIMSERVER__REQUEST__INIT;
  r.body_case = ANIMSERVER__REQUEST__BODY_LOAD_DATABASE, r.load_database = &lb;
  anim_wire_free(anim_wire_ok(&wire, &r, 60000));
  Animserver__ServerMessage *loaded = load("jump", NULL, 0, 0, NULL);
  const Animserver__MachineSummary *summary = loaded->response->load_machine->machine;
  assert_int_equal(summary->n_states, 7);
  uint64_t id = create(&wire, "bandai", ANIMSERVER__CHARACTER_MODE__MODE_MACHINE, "jump", 0, NULL);
  uint64_t s = subscribe(id, 0, 1);
  FILE *record = anim_stream_record_open("jump.stream", db.nbones, db.skeleton.parents);

  /* The seed's long jump: press while standing, release once crouched, near
   * the ground after a while in the air; each sent when the stream shows the
   * state it is meant for. */
  const char *expected[] = {"stand", "stand2crouch", "crouch", "takeoff", "float", "land", "stand"};
  const char *visited[16];
  int nvisited = 0, pressed = 0, released = 0, landed = 0, frames_in_state = 0;
  double time = 0.0;
  for (int f = 0; f < 60 * 6 && nvisited < 7; f++) {
    Animserver__ServerMessage *m = next_frame(s);
    const Animserver__CharacterPose *p = m->stream->poses[0];
    assert_int_equal(p->n_state_path, 1);
    const char *name = summary->states[p->state_path[0]]->name;
    if (nvisited == 0 || strcmp(visited[nvisited - 1], name) != 0) {
      visited[nvisited++] = name;
      frames_in_state = 0;
      if (nvisited > 1) assert_true(p->state_changed);
    }
    frames_in_state++;
    /* Real mocap: the frame shown is in the state's own span. */
    for (size_t k = 0; k < sizeof spans / sizeof spans[0]; k++) {
      if (strcmp(spans[k].state, name) != 0) continue;
      int range = 0;
      while (range < db.nranges && strcmp(db.ranges[range].name, spans[k].range) != 0) range++;
      assert_true(range < db.nranges);
      int lo = db.ranges[range].start + (int)lroundf(spans[k].from * db.frame_rate) - SPAN_SLACK_FRAMES;
      int hi = db.ranges[range].start + (int)lroundf(spans[k].to * db.frame_rate) + SPAN_SLACK_FRAMES;
      if ((int)p->frame < lo || (int)p->frame > hi)
        fail_msg("state %s shows frame %u, outside its span %d..%d of %s", name, p->frame, lo, hi, spans[k].range);
    }
    if (f > 0) assert_true(p->state_times[0] >= 0.0f && p->state_times[0] < 3.0f);
    anim_stream_record_frame(record, time, name, p);
    time += m->stream->dt;
    const char *event = NULL;
    if (!pressed && strcmp(name, "stand") == 0 && frames_in_state == 30) event = "JUMP_PRESS", pressed = 1;
    if (!released && strcmp(name, "crouch") == 0 && frames_in_state == 20) event = "JUMP_RELEASE", released = 1;
    if (!landed && strcmp(name, "float") == 0 && frames_in_state == 45) event = "NEAR_GROUND", landed = 1;
    if (event) post_events(id, &event, 1);
    anim_wire_free(m);
  }
  /* Half a second more of standing for the picture. */
  for (int f = 0; f < 30; f++) {
    Animserver__ServerMessage *m = next_frame(s);
    anim_stream_record_frame(record, time, summary->states[m->stream->poses[0]->state_path[0]]->name,
                             m->stream->poses[0]);
    time += m->stream->dt;
    anim_wire_free(m);
  }
  anim_stream_record_close(record);
  printf("jump machine over the wire:");
  for (int i = 0; i < nvisited; i++) printf(" %s", visited[i]);
  printf("\n");
  assert_int_equal(nvisited, 7);
  for (int i = 0; i < 7; i++) assert_string_equal(visited[i], expected[i]);
  unsubscribe(s);
  destroy(id);
  anim_wire_free(loaded);
  anim_database_free(&db);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_invalid),
      cmocka_unit_test(test_nested),
      cmocka_unit_test(test_jump_machine),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
