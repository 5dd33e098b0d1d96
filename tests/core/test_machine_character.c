/*
 * test_machine_character.c: the character that runs an action state
 * machine (machine_character.h).
 *
 * Invalid input first: the runtime's refusals. Then behaviour: the seed's
 * jump machine on Bandai Namco mocap visits the seed's states in order
 * under scripted events, without popping; END and exit times fall on their
 * instant whatever the tick; the bound on transitions per tick; nested
 * machines (innermost first, then up; END bubbling); a 1-D blend of walk,
 * run and dash cycles, phase-aligned; a match state running motion matching
 * restricted to tags. Timing, nesting and errors run on the procedural
 * default database (no data needed); the rest on real mocap. Parsing and
 * binding: test_state_machine.c.
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
#include "machine/machine_character.h"
#include "machine/state_machine.h"
#include "machine_fixture.h"
#include "procgen_db.h"

/* Largest change of any joint's velocity from one tick to the next, m/s,
 * over the jump machine's run (transitions included). Inertialization keeps
 * velocity continuous; what remains is the clips' own acceleration (a foot
 * planting in a run changes speed by ~3 m/s in a tick). Measured 3.3 on the
 * jump machine; with half-lives of 1 ms (no inertialization to speak of)
 * the same script jumps by 37 (tested: more than twice the bound). */
#define MAX_VELOCITY_JUMP 5.0f
/* Timing: instants computed from float sums of dt. */
#define TIME_TOLERANCE 1e-4f
/* A blend's root speed against the clip it plays alone, relative. */
#define BLEND_SPEED_TOLERANCE 0.1f

static anim_database_t procgen_db;
/* The tagged Bandai Namco database, built by the first test that needs it. */
static anim_test_machine_bandai_t fixture;
static anim_database_t *bandai_db;
static anim_search_index_t *bandai_index;

static int setup(void **state) { return anim_test_procgen_load(&procgen_db); }

static int teardown(void **state) {
  anim_test_machine_bandai_free(&fixture);
  anim_database_free(&procgen_db);
  return 0;
}

static int bandai(void) {
  if (!anim_test_machine_bandai(&fixture)) return 0;
  bandai_db = &fixture.db, bandai_index = fixture.index;
  return 1;
}

/* ---- invalid input -------------------------------------------------------------------- */

static void test_runtime_invalid(void **state) {
  anim_machine_character_t c;
  anim_state_machine_t *sm = anim_test_sm_parse("param speed 0.5\na { clip walk GO b }\nb { clip run }");
  /* Not bound yet. */
  assert_int_equal(anim_machine_character_init(&c, sm, &procgen_db, NULL, NULL, vec3_zero(), 0.0f), ANIM_EINVAL);
  char err[256];
  assert_int_equal(anim_state_machine_bind(sm, &procgen_db, NULL, err, sizeof err), 0);
  assert_int_equal(anim_machine_character_init(&c, sm, &procgen_db, NULL, NULL, vec3_make(NAN, 0, 0), 0.0f),
                   ANIM_ENONFINITE);
  assert_int_equal(anim_machine_character_init(&c, sm, &procgen_db, NULL, NULL, vec3_zero(), 0.0f), 0);
  assert_int_equal(anim_machine_character_send(&c, sm->nevents), ANIM_ERANGE);
  assert_int_equal(anim_machine_character_send(&c, -1), ANIM_ERANGE);
  assert_int_equal(anim_machine_character_send_name(&c, "JUMP"), ANIM_ENOTFOUND);
  for (int i = 0; i < ANIM_MACHINE_QUEUE; i++) assert_int_equal(anim_machine_character_send_name(&c, "GO"), 0);
  assert_int_equal(anim_machine_character_send_name(&c, "GO"), ANIM_ELIMIT);
  assert_int_equal(anim_machine_character_set_param(&c, 1, 0.0f), ANIM_ERANGE);
  assert_int_equal(anim_machine_character_set_param(&c, 0, INFINITY), ANIM_ENONFINITE);
  assert_int_equal(anim_machine_character_set_param(&c, 0, 1.0f), 0);
  anim_controller_input_t in;
  memset(&in, 0, sizeof in);
  in.stick_x = NAN;
  assert_int_equal(anim_machine_character_set_input(&c, &in), ANIM_ENONFINITE);
  assert_int_equal(anim_machine_character_tick(&c, 0.0f), ANIM_EINVAL);
  assert_int_equal(anim_machine_character_tick(&c, NAN), ANIM_EINVAL);
  anim_machine_character_free(&c);
  anim_state_machine_free(sm);
  /* A match state needs an index (and trajectory features). */
  sm = anim_test_sm_bound("a { match (walk) }", &procgen_db);
  assert_int_equal(anim_machine_character_init(&c, sm, &procgen_db, NULL, NULL, vec3_zero(), 0.0f), ANIM_EINVAL);
  anim_state_machine_free(sm);
  /* A database changed after binding is refused. */
  sm = anim_test_sm_bound("a { clip walk }", &procgen_db);
  sm->bound_version ^= 1;
  assert_int_equal(anim_machine_character_init(&c, sm, &procgen_db, NULL, NULL, vec3_zero(), 0.0f), ANIM_EINVAL);
  anim_state_machine_free(sm);
}
/* ---- behaviour -------------------------------------------------------------------------- */

static const char *state_name(const anim_machine_character_t *c, int level) {
  return c->machine->states[c->levels[level].state].name;
}

/* Per-tick velocity of every joint, and the largest change of it. */
typedef struct {
  vec3 previous[2][128];
  int have;
  float worst;
  int worst_bone;
  uint64_t worst_tick;
} pop_meter_t;

static void pop_measure(pop_meter_t *m, anim_machine_character_t *c, float dt) {
  anim_machine_character_global_pose(c);
  int n = c->db->nbones;
  for (int b = 1; b < n; b++) {
    vec3 x = c->global_positions[b];
    if (m->have >= 2) {
      vec3 v0 = vec3_scale(vec3_sub(m->previous[0][b], m->previous[1][b]), 1.0f / dt);
      vec3 v1 = vec3_scale(vec3_sub(x, m->previous[0][b]), 1.0f / dt);
      float jump = vec3_length(vec3_sub(v1, v0));
      if (jump > m->worst) m->worst = jump, m->worst_bone = b, m->worst_tick = c->ticks;
    }
  }
  for (int b = 0; b < n; b++) m->previous[1][b] = m->previous[0][b], m->previous[0][b] = c->global_positions[b];
  m->have++;
}

/* The seed's jump machine on spans of Bandai Namco clips. The subset holds
 * locomotion only, no jump: each span is a stand-in for the phase it plays,
 * chosen by what the data does there (SOURCE.md, hips height and speed):
 * stand = the first half second of a walk that starts from standing (root
 * speed ~0.1 m/s), stand2crouch = the weight shift and first step after it,
 * crouch = the start of a straight run (hips 0.82 m, the lowest), takeoff
 * and hop = run strides, float = an "active" run stride through its flight
 * (hips 0.99 m, the highest), land = the end of a run cycle. */
static const char jump_text[] =
    "# The seed's jump machine (003_*), bound to Bandai Namco spans.\n"
    "halflife 0.1\n"
    "stand        { clip dataset-2_walk_normal_001 [0 0.5] loop   JUMP_PRESS stand2crouch }\n"
    "stand2crouch { clip dataset-2_walk_normal_001 [0.5 1.2]\n"
    "               JUMP_RELEASE hop   END crouch }\n"
    "crouch       { clip dataset-2_run_normal_001 [0 0.3] loop    JUMP_RELEASE takeoff halflife 0.15 }\n"
    "takeoff      { clip dataset-2_run_normal_001 [0.3 0.8]       END float }\n"
    "hop          { clip dataset-1_run_normal_001 [0 0.4]         END float }\n"
    "float        { clip dataset-1_run_active_001 [0.15 0.45] loop NEAR_GROUND land exit 0.2 }\n"
    "land         { clip dataset-1_run_normal_001 [0.4 0.76]      END stand }\n";

typedef struct {
  float time;
  const char *event;
} scripted_event_t;

/* Runs the script at dt for seconds, recording the root state at each
 * change into visited (names); returns how many were visited. */
static int run_jump(const anim_state_machine_t *sm, const scripted_event_t *script, int nscript, float dt,
                    float seconds, const char **visited, int max_visited, pop_meter_t *pops) {
  anim_machine_character_t c;
  assert_int_equal(anim_machine_character_init(&c, sm, bandai_db, NULL, NULL, vec3_zero(), 0.0f), 0);
  int n = 0, next = 0;
  visited[n++] = state_name(&c, 0);
  for (float t = 0.0f; t < seconds; t += dt) {
    while (next < nscript && script[next].time <= t)
      assert_int_equal(anim_machine_character_send_name(&c, script[next++].event), 0);
    assert_int_equal(anim_machine_character_tick(&c, dt), 0);
    if (c.changed && n < max_visited) visited[n++] = state_name(&c, 0);
    if (pops) pop_measure(pops, &c, dt);
  }
  assert_int_equal(c.events_dropped, 0);
  anim_machine_character_free(&c);
  return n;
}

static void test_jump_machine(void **state) {
  if (!bandai()) return;
  anim_state_machine_t *sm = anim_test_sm_bound(jump_text, bandai_db);
  /* Hold the button through the crouch: the long jump of the seed. */
  const scripted_event_t held[] = {{0.5f, "JUMP_PRESS"}, {1.6f, "JUMP_RELEASE"}, {2.9f, "NEAR_GROUND"}};
  const char *expected[] = {"stand", "stand2crouch", "crouch", "takeoff", "float", "land", "stand"};
  const char *visited[16];
  pop_meter_t pops;
  memset(&pops, 0, sizeof pops);
  int n = run_jump(sm, held, 3, 1.0f / 60.0f, 5.0f, visited, 16, &pops);
  assert_int_equal(n, 7);
  for (int i = 0; i < 7; i++) assert_string_equal(visited[i], expected[i]);
  if (pops.worst > MAX_VELOCITY_JUMP)
    fail_msg("a joint's velocity jumps by %.2f m/s (bone %s, tick %llu), more than %.1f", pops.worst,
             bandai_db->skeleton.names[pops.worst_bone], (unsigned long long)pops.worst_tick, MAX_VELOCITY_JUMP);
  /* A tap (released during stand2crouch): the hop of the seed. */
  const scripted_event_t tap[] = {{0.5f, "JUMP_PRESS"}, {0.7f, "JUMP_RELEASE"}, {1.5f, "NEAR_GROUND"}};
  const char *hop[] = {"stand", "stand2crouch", "hop", "float", "land", "stand"};
  n = run_jump(sm, tap, 3, 1.0f / 60.0f, 4.0f, visited, 16, NULL);
  assert_int_equal(n, 6);
  for (int i = 0; i < 6; i++) assert_string_equal(visited[i], hop[i]);
  /* The same at 30 Hz ticks: the same states. */
  n = run_jump(sm, held, 3, 1.0f / 30.0f, 5.0f, visited, 16, NULL);
  assert_int_equal(n, 7);
  for (int i = 0; i < 7; i++) assert_string_equal(visited[i], expected[i]);
  /* Without inertialization (1 ms half-lives) the same run pops. */
  anim_state_machine_t *raw = anim_test_sm_parse(jump_text);
  raw->halflife = 0.001f;
  for (int t = 0; t < raw->ntransitions; t++) raw->transitions[t].halflife = 0.001f;
  char err[256];
  assert_int_equal(anim_state_machine_bind(raw, bandai_db, NULL, err, sizeof err), 0);
  pop_meter_t raw_pops;
  memset(&raw_pops, 0, sizeof raw_pops);
  run_jump(raw, held, 3, 1.0f / 60.0f, 5.0f, visited, 16, &raw_pops);
  assert_true(raw_pops.worst > 2.0f * MAX_VELOCITY_JUMP);
  printf("jump machine: largest joint velocity change %.2f m/s (%.2f without inertialization)\n", pops.worst,
         raw_pops.worst);
  anim_state_machine_free(raw);
  anim_state_machine_free(sm);
}

/* END comes (N - 1) / rate after entry whatever dt, the next state carrying
 * the rest of the tick; exit times likewise. */
static void test_end_and_exit_timing(void **state) {
  anim_state_machine_t *sm = anim_test_sm_bound(
      "a { clip walk [0 0.5] END b }\nb { clip idle loop  GO c exit 0.3 }\n"
      "c { clip idle loop }",
      &procgen_db);
  const float dts[] = {1.0f / 60.0f, 1.0f / 45.0f, 1.0f / 7.0f, 0.3f, 0.013f};
  for (size_t k = 0; k < sizeof dts / sizeof dts[0]; k++) {
    float dt = dts[k];
    anim_machine_character_t c;
    assert_int_equal(anim_machine_character_init(&c, sm, &procgen_db, NULL, NULL, vec3_zero(), 0.0f), 0);
    float before = 0.0f;
    while (strcmp(state_name(&c, 0), "a") == 0) {
      before = c.levels[0].time;
      assert_int_equal(anim_machine_character_tick(&c, dt), 0);
      if (strcmp(state_name(&c, 0), "a") == 0) assert_true(c.levels[0].time <= 0.5f + TIME_TOLERANCE);
    }
    /* The tick that took END started before the end and would have passed it. */
    assert_true(before <= 0.5f + TIME_TOLERANCE && before + dt > 0.5f);
    assert_float_equal(c.levels[0].time, before + dt - 0.5f, TIME_TOLERANCE);
    /* GO at once: held until b has played 0.3 s. */
    assert_int_equal(anim_machine_character_send_name(&c, "GO"), 0);
    while (strcmp(state_name(&c, 0), "b") == 0) {
      before = c.levels[0].time;
      assert_int_equal(anim_machine_character_tick(&c, dt), 0);
    }
    assert_string_equal(state_name(&c, 0), "c");
    float expected = before + dt - fmaxf(0.3f, before);
    assert_float_equal(c.levels[0].time, expected, TIME_TOLERANCE);
    anim_machine_character_free(&c);
  }
  anim_state_machine_free(sm);
}

static void test_transitions_per_tick(void **state) {
  anim_state_machine_t *sm = anim_test_sm_bound(
      "max_transitions 2\na { clip idle loop AUTO b }\nb { clip idle loop AUTO c }\n"
      "c { clip idle loop AUTO d }\nd { clip idle loop X e }\ne { clip idle loop Y d }",
      &procgen_db);
  anim_machine_character_t c;
  assert_int_equal(anim_machine_character_init(&c, sm, &procgen_db, NULL, NULL, vec3_zero(), 0.0f), 0);
  assert_string_equal(state_name(&c, 0), "a");
  assert_int_equal(anim_machine_character_tick(&c, 1.0f / 60.0f), 0);
  assert_string_equal(state_name(&c, 0), "c");
  assert_int_equal(c.transitions, 2);
  assert_int_equal(anim_machine_character_tick(&c, 1.0f / 60.0f), 0);
  assert_string_equal(state_name(&c, 0), "d");
  /* Three events, two transitions a tick: the third waits. */
  assert_int_equal(anim_machine_character_send_name(&c, "X"), 0);
  assert_int_equal(anim_machine_character_send_name(&c, "Y"), 0);
  assert_int_equal(anim_machine_character_send_name(&c, "X"), 0);
  assert_int_equal(anim_machine_character_tick(&c, 1.0f / 60.0f), 0);
  assert_string_equal(state_name(&c, 0), "d");
  assert_int_equal(c.queue_count, 1);
  assert_int_equal(anim_machine_character_tick(&c, 1.0f / 60.0f), 0);
  assert_string_equal(state_name(&c, 0), "e");
  assert_int_equal(c.queue_count, 0);
  /* An event the current state has no transition for is dropped. */
  assert_int_equal(anim_machine_character_send_name(&c, "X"), 0);
  assert_int_equal(anim_machine_character_tick(&c, 1.0f / 60.0f), 0);
  assert_int_equal(c.events_dropped, 1);
  assert_int_equal(c.transitions, 6);
  anim_machine_character_free(&c);
  anim_state_machine_free(sm);
}

static void expect_path(const anim_machine_character_t *c, const char *outer, const char *inner) {
  int states[ANIM_SM_MAX_DEPTH];
  float times[ANIM_SM_MAX_DEPTH];
  int depth = anim_machine_character_path(c, states, times, ANIM_SM_MAX_DEPTH);
  assert_int_equal(depth, inner ? 2 : 1);
  assert_string_equal(c->machine->states[states[0]].name, outer);
  if (inner) assert_string_equal(c->machine->states[states[1]].name, inner);
}

static void step(anim_machine_character_t *c, const char *event, int ticks) {
  if (event) assert_int_equal(anim_machine_character_send_name(c, event), 0);
  for (int i = 0; i < ticks; i++) assert_int_equal(anim_machine_character_tick(c, 1.0f / 60.0f), 0);
}

static void test_nested_machines(void **state) {
  anim_state_machine_t *sm = anim_test_sm_bound(
      "idle   { clip idle loop  GO moving }\n"
      "moving { machine loco  STOP idle  END idle }\n"
      "machine loco {\n"
      "  walk     { clip walk [0 1] loop  FAST run  HALT stopping }\n"
      "  run      { clip run [0 1] loop   SLOW walk  STOP walk }\n"
      "  stopping { clip walk_stop [2 2.5] }\n"
      "}\n",
      &procgen_db);
  assert_int_equal(sm->depth, 2);
  assert_int_equal(sm->nmachines, 2);
  anim_machine_character_t c;
  assert_int_equal(anim_machine_character_init(&c, sm, &procgen_db, NULL, NULL, vec3_zero(), 0.0f), 0);
  expect_path(&c, "idle", NULL);
  step(&c, "GO", 10);
  expect_path(&c, "moving", "walk");
  step(&c, "FAST", 10);
  expect_path(&c, "moving", "run");
  /* The outer state's clock runs on across the inner transition. */
  assert_float_equal(c.levels[0].time, 20.0f / 60.0f, TIME_TOLERANCE);
  assert_float_equal(c.levels[1].time, 10.0f / 60.0f, TIME_TOLERANCE);
  /* STOP: the inner run takes it first. */
  step(&c, "STOP", 1);
  expect_path(&c, "moving", "walk");
  /* STOP again: walk has none, the outer machine takes it. */
  step(&c, "STOP", 1);
  expect_path(&c, "idle", NULL);
  /* Entering again starts the nested machine at its initial state. */
  step(&c, "GO", 1);
  expect_path(&c, "moving", "walk");
  step(&c, "FAST", 1);
  step(&c, "SLOW", 1);
  expect_path(&c, "moving", "walk");
  /* END of a nested clip nobody inside takes goes up: stopping (0.5 s)
   * ends, moving's END leads to idle. */
  step(&c, "HALT", 1);
  expect_path(&c, "moving", "stopping");
  step(&c, NULL, 29);
  expect_path(&c, "moving", "stopping");
  step(&c, NULL, 1);
  expect_path(&c, "idle", NULL);
  /* SLOW in idle: nobody has it. */
  step(&c, "SLOW", 1);
  assert_int_equal(c.events_dropped, 1);
  anim_machine_character_free(&c);
  anim_state_machine_free(sm);
}

/* A cycle's END (a looping clip) is its own state's to take, never a machine
 * around it: moving's END would otherwise end the walk after one cycle. The
 * end of a clip that stops still goes up. */
static void test_cycle_end_stays_inside(void **state) {
  anim_state_machine_t *sm = anim_test_sm_bound(
      "idle   { clip idle loop  GO moving }\n"
      "moving { machine loco  END idle }\n"
      "machine loco {\n"
      "  walk     { clip walk [0 1] loop  ONCE once }\n"
      "  once     { clip walk [0 0.5] loop  END stopping }\n"
      "  stopping { clip walk_stop [2 2.5] }\n"
      "}\n",
      &procgen_db);
  anim_machine_character_t c;
  assert_int_equal(anim_machine_character_init(&c, sm, &procgen_db, NULL, NULL, vec3_zero(), 0.0f), 0);
  step(&c, "GO", 1);
  expect_path(&c, "moving", "walk");
  uint64_t entered = c.transitions;
  step(&c, NULL, 150); /* two and a half cycles of walk */
  expect_path(&c, "moving", "walk");
  assert_int_equal(c.transitions, entered); /* a wrap is inertialized, not counted as a transition */
  /* once's own END (a loop's) is taken there: stopping after 0.5 s. */
  step(&c, "ONCE", 1);
  expect_path(&c, "moving", "once");
  step(&c, NULL, 29);
  expect_path(&c, "moving", "once");
  step(&c, NULL, 1);
  expect_path(&c, "moving", "stopping");
  /* stopping ends and nobody inside takes it: moving's END leads to idle. */
  step(&c, NULL, 30);
  expect_path(&c, "idle", NULL);
  anim_machine_character_free(&c);
  anim_state_machine_free(sm);
}

/* A blend of walk, run and dash cycles by "speed". */
static const char blend_text[] = "param speed 0\n"
                                 "cycle { blend speed ( 0 dataset-1_walk_normal_002  0.5 dataset-1_run_normal_001\n"
                                 "                      1 dataset-1_dash_normal_001 ) }\n";

static float range_speed(const anim_database_t *db, const char *name) {
  for (int r = 0; r < db->nranges; r++)
    if (strcmp(db->ranges[r].name, name) == 0) {
      vec3 a = db->global_positions[(size_t)db->ranges[r].start * (size_t)db->nbones];
      vec3 b = db->global_positions[(size_t)(db->ranges[r].stop - 1) * (size_t)db->nbones];
      return vec3_length(vec3_make(b.x - a.x, 0.0f, b.z - a.z)) * db->frame_rate /
             (float)(db->ranges[r].stop - 1 - db->ranges[r].start);
    }
  fail_msg("no range %s", name);
  return 0.0f;
}

static void test_blend(void **state) {
  if (!bandai()) return;
  anim_state_machine_t *sm = anim_test_sm_bound(blend_text, bandai_db);
  const anim_state_machine_t *m = sm;
  /* Phase 0 of every cycle is where its left foot comes down. */
  size_t nc = (size_t)bandai_db->ncontacts;
  for (int i = 0; i < 3; i++) {
    const anim_sm_clip_t *clip = &m->clips[i];
    int f = clip->phase_frame, prev = f == clip->start ? clip->stop - 2 : f - 1;
    assert_true(bandai_db->contacts[(size_t)f * nc] && !bandai_db->contacts[(size_t)prev * nc]);
  }
  const char *alone[] = {"dataset-1_walk_normal_002", "dataset-1_run_normal_001", "dataset-1_dash_normal_001"};
  const float values[] = {0.0f, 0.5f, 1.0f};
  anim_machine_character_t c;
  for (int i = 0; i < 3; i++) {
    assert_int_equal(anim_machine_character_init(&c, sm, bandai_db, NULL, NULL, vec3_zero(), 0.0f), 0);
    assert_int_equal(anim_machine_character_set_param(&c, 0, values[i]), 0);
    step(&c, NULL, 60);
    vec3 from = c.pose.positions[0];
    step(&c, NULL, 120);
    vec3 to = c.pose.positions[0];
    float speed = vec3_length(vec3_make(to.x - from.x, 0.0f, to.z - from.z)) / 2.0f;
    float expected = range_speed(bandai_db, alone[i]);
    if (fabsf(speed - expected) > BLEND_SPEED_TOLERANCE * expected)
      fail_msg("speed %.2f: root speed %.2f m/s, %s alone %.2f", values[i], speed, alone[i], expected);
    anim_machine_character_free(&c);
  }
  /* Moving the parameter changes the rate, never the phase. */
  assert_int_equal(anim_machine_character_init(&c, sm, bandai_db, NULL, NULL, vec3_zero(), 0.0f), 0);
  step(&c, NULL, 20);
  float before = c.motion_time, walk_period = (float)(m->clips[0].stop - m->clips[0].start - 1) / bandai_db->frame_rate;
  assert_float_equal(before, 20.0f / 60.0f / walk_period, 1e-4f);
  assert_int_equal(anim_machine_character_set_param(&c, 0, 0.75f), 0);
  step(&c, NULL, 1);
  float run_frames = (float)(m->clips[1].stop - m->clips[1].start - 1),
        dash_frames = (float)(m->clips[2].stop - m->clips[2].start - 1);
  float period = 0.5f * (run_frames + dash_frames) / bandai_db->frame_rate;
  assert_float_equal(c.motion_time, before + 1.0f / 60.0f / period, 1e-4f);
  /* END fires at each cycle's end; nothing takes it here and the cycle goes on. */
  assert_int_equal(c.transitions, 0);
  anim_machine_character_free(&c);
  anim_state_machine_free(sm);
}

/* A locomotion state runs motion matching over walk and run; a jump plays
 * a clip and comes back. */
static void test_match_state(void **state) {
  if (!bandai()) return;
  anim_state_machine_t *sm = anim_test_sm_bound(
      "locomotion { match (walk run)  JUMP jump }\n"
      "jump { clip dataset-1_run_active_001 [0.2 0.9]  END locomotion }\n",
      bandai_db);
  assert_int_equal(sm->has_match, 1);
  anim_machine_character_t c;
  assert_int_equal(anim_machine_character_init(&c, sm, bandai_db, bandai_index, NULL, vec3_zero(), 0.0f), 0);
  anim_controller_input_t in;
  memset(&in, 0, sizeof in);
  in.kind = ANIM_INPUT_STICK, in.stick_z = 1.0f;
  assert_int_equal(anim_machine_character_set_input(&c, &in), 0);
  uint32_t mask =
      (1u << anim_database_find_tag(bandai_db, "walk")) | (1u << anim_database_find_tag(bandai_db, "run"));
  pop_meter_t pops;
  memset(&pops, 0, sizeof pops);
  int jumped = 0, back = 0;
  for (int t = 0; t < 300; t++) {
    if (t == 120) assert_int_equal(anim_machine_character_send_name(&c, "JUMP"), 0);
    assert_int_equal(anim_machine_character_tick(&c, 1.0f / 60.0f), 0);
    pop_measure(&pops, &c, 1.0f / 60.0f);
    if (strcmp(state_name(&c, 0), "jump") == 0) jumped = 1;
    if (jumped && strcmp(state_name(&c, 0), "locomotion") == 0) back = 1;
    if (strcmp(state_name(&c, 0), "locomotion") == 0) {
      int r = anim_database_range_of(bandai_db, c.matcher.frame);
      if (!(bandai_db->ranges[r].tag_mask & mask)) fail_msg("tick %d plays %s, untagged", t, bandai_db->ranges[r].name);
    }
  }
  assert_true(jumped && back);
  assert_true(c.matcher.searches > 0);
  float travelled = vec3_length(vec3_make(c.pose.positions[0].x, 0.0f, c.pose.positions[0].z));
  assert_true(travelled > 4.0f); /* 5 s forward, walking at least */
  if (pops.worst > MAX_VELOCITY_JUMP)
    fail_msg("a joint's velocity jumps by %.2f m/s (bone %s, tick %llu)", pops.worst,
             bandai_db->skeleton.names[pops.worst_bone], (unsigned long long)pops.worst_tick);
  anim_machine_character_free(&c);
  anim_state_machine_free(sm);
}

/* anim_machine_character_translate, as the server's world boundary uses
 * it: a character moved in a match state and again in a clip state goes on
 * exactly as one never moved, shifted by the steps (its states, frames and
 * pose; the root within float rounding). */
static void test_translate(void **state) {
  if (!bandai()) return;
  anim_state_machine_t *sm = anim_test_sm_bound(
      "locomotion { match (walk run)  JUMP jump }\n"
      "jump { clip dataset-1_run_active_001 [0.2 0.9]  END locomotion }\n",
      bandai_db);
  anim_machine_character_t a, b;
  assert_int_equal(anim_machine_character_init(&a, sm, bandai_db, bandai_index, NULL, vec3_zero(), 0.0f), 0);
  assert_int_equal(anim_machine_character_init(&b, sm, bandai_db, bandai_index, NULL, vec3_zero(), 0.0f), 0);
  anim_controller_input_t in;
  memset(&in, 0, sizeof in);
  in.kind = ANIM_INPUT_STICK, in.stick_z = 0.9f, in.stick_x = 0.3f;
  assert_int_equal(anim_machine_character_set_input(&a, &in), 0);
  assert_int_equal(anim_machine_character_set_input(&b, &in), 0);
  vec3 moved = vec3_zero();
  int in_match = 0, in_clip = 0;
  for (int t = 0; t < 300; t++) {
    if (t == 120) {
      assert_int_equal(anim_machine_character_send_name(&a, "JUMP"), 0);
      assert_int_equal(anim_machine_character_send_name(&b, "JUMP"), 0);
    }
    if (t == 60 || t == 140) { /* in locomotion (match), then in jump (clip) */
      vec3 step = t == 60 ? vec3_make(3.0f, 0.0f, -2.0f) : vec3_make(-1.0f, 0.5f, 4.0f);
      in_match |= strcmp(state_name(&b, 0), "locomotion") == 0;
      in_clip |= strcmp(state_name(&b, 0), "jump") == 0;
      anim_machine_character_translate(&b, step);
      moved = vec3_add(moved, step);
    }
    assert_int_equal(anim_machine_character_tick(&a, 1.0f / 60.0f), 0);
    assert_int_equal(anim_machine_character_tick(&b, 1.0f / 60.0f), 0);
    assert_string_equal(state_name(&a, 0), state_name(&b, 0));
    assert_int_equal(a.matcher.frame, b.matcher.frame);
    vec3 d = vec3_sub(vec3_sub(b.pose.positions[0], a.pose.positions[0]), moved);
    if (vec3_length(d) > 1e-3f) fail_msg("tick %d: root %.5f m off the moved one", t, vec3_length(d));
    /* The match state's controller moved too (a goal, in the world, is
     * where it walks), not the shown pose alone; on the ground (it takes
     * no height when a match state starts). */
    if (strcmp(state_name(&b, 0), "locomotion") == 0) {
      vec3 m = vec3_sub(vec3_sub(b.matcher.pose_positions[0], a.matcher.pose_positions[0]), moved);
      m.y = 0.0f;
      if (vec3_length(m) > 1e-3f)
        fail_msg("tick %d: the controller's root %.5f m off the moved one", t, vec3_length(m));
    }
    float turn = 2.0f * acosf(fminf(1.0f, fabsf(quat_dot(a.pose.rotations[0], b.pose.rotations[0]))));
    if (turn > 1e-3f) fail_msg("tick %d: root turned %.5f rad apart", t, turn);
  }
  assert_true(in_match && in_clip);
  anim_machine_character_free(&a);
  anim_machine_character_free(&b);
  anim_state_machine_free(sm);
}
int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_runtime_invalid),
      cmocka_unit_test(test_jump_machine),
      cmocka_unit_test(test_end_and_exit_timing),
      cmocka_unit_test(test_transitions_per_tick),
      cmocka_unit_test(test_nested_machines),
      cmocka_unit_test(test_cycle_end_stays_inside),
      cmocka_unit_test(test_blend),
      cmocka_unit_test(test_match_state),
      cmocka_unit_test(test_translate),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
