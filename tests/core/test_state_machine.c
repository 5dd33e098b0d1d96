/*
 * test_state_machine.c: action state machines and their text format
 * (state_machine.h): parsing, diagnostics and binding.
 *
 * Every problem the parser and the binding report, each at its file, line
 * and column; messages and names in UTF-8; the seed's text parsed as the
 * seed writes it. On the procedural default database (no data needed). The
 * character that runs a machine: test_machine_character.c.
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
#include "machine/state_machine.h"
#include "machine_fixture.h"
#include "procgen_db.h"

static anim_database_t procgen_db;

static int setup(void **state) { return anim_test_procgen_load(&procgen_db); }

static int teardown(void **state) {
  anim_database_free(&procgen_db);
  return 0;
}

/* ---- parse errors --------------------------------------------------------------------- */

typedef struct {
  const char *text;
  anim_sm_problem_t problem;
  int line, column;
} parse_case_t;

static const parse_case_t parse_cases[] = {
    /* syntax */
    {"stand { JUMP crouch } crouch { @ }", ANIM_SM_SYNTAX, 1, 32},
    {"stand { JUMP crouch\n", ANIM_SM_SYNTAX, 2, 1},
    {"stand JUMP crouch }", ANIM_SM_SYNTAX, 1, 7},
    {"stand { clip \"never closed }", ANIM_SM_SYNTAX, 1, 14},
    {"stand { clip walk loop exit idle }", ANIM_SM_SYNTAX, 1, 24},
    {"stand { JUMP }", ANIM_SM_SYNTAX, 1, 14},
    {"stand { JUMP crouch halflife fast }", ANIM_SM_SYNTAX, 1, 30},
    {"stand { clip walk [1] }", ANIM_SM_SYNTAX, 1, 21},
    {"stand { match () }", ANIM_SM_SYNTAX, 1, 16},
    {"stand { blend speed ( ) }", ANIM_SM_SYNTAX, 1, 23},
    {"loop { }", ANIM_SM_SYNTAX, 1, 1},
    {"machine m { }", ANIM_SM_SYNTAX, 1, 13},
    {"", ANIM_SM_SYNTAX, 1, 1},
    {"# only a comment\n", ANIM_SM_SYNTAX, 1, 1},
    {"machine m { a { clip walk } }", ANIM_SM_SYNTAX, 1, 1},
    {"averyveryveryveryveryveryveryveryveryveryveryveryveryveryverylongname { }", ANIM_SM_SYNTAX, 1, 1},
    /* limits */
    {"max_transitions 0\na { clip walk }", ANIM_SM_LIMIT, 1, 1},
    {"max_transitions 2.5\na { clip walk }", ANIM_SM_LIMIT, 1, 1},
    {"halflife -1\na { clip walk }", ANIM_SM_LIMIT, 1, 1},
    {"a { clip walk GO a halflife 0 }", ANIM_SM_LIMIT, 1, 20},
    {"a { clip walk GO a exit -1 }", ANIM_SM_LIMIT, 1, 20},
    {"a { match (t1 t2 t3 t4 t5 t6 t7 t8 t9) }", ANIM_SM_LIMIT, 1, 36},
    {"param p0 0 param p1 0 param p2 0 param p3 0 param p4 0 param p5 0 param p6 0 param p7 0\n"
     "param p8 0 param p9 0 param pa 0 param pb 0 param pc 0 param pd 0 param pe 0 param pf 0\n"
     "param pg 0\na { clip walk }",
     ANIM_SM_LIMIT, 3, 7},
    /* names defined twice */
    {"a { clip walk GO b }\nb { clip run }\nb { clip idle }", ANIM_SM_DUPLICATE, 3, 1},
    {"a { clip walk tag run }", ANIM_SM_DUPLICATE, 1, 15},
    {"param speed 0\nparam speed 1\na { clip walk }", ANIM_SM_DUPLICATE, 2, 7},
    {"a { machine m }\nmachine m { x { clip walk } }\nmachine m { y { clip run } }", ANIM_SM_DUPLICATE, 3, 9},
    {"halflife 0.1 halflife 0.2\na { clip walk }", ANIM_SM_DUPLICATE, 1, 14},
    /* unknown names */
    {"stand { JUMP_PRESS crouch }", ANIM_SM_UNKNOWN_TARGET, 1, 20},
    {"a { machine m GO b }\nb { clip walk }\nmachine m { c { clip walk GO b } }", ANIM_SM_UNKNOWN_TARGET, 3, 30},
    /* ... pointing at the name, not at the keyword before it (column 5 once) */
    {"a { machine nowhere }", ANIM_SM_UNKNOWN_MACHINE, 1, 13},
    {"a { blend speed ( 0 walk 1 run ) }", ANIM_SM_UNKNOWN_PARAM, 1, 11},
    /* blends */
    {"param v 0\na { blend v ( 0 walk 1 run 1 jog ) }", ANIM_SM_BLEND_ORDER, 2, 28},
    /* nesting */
    {"a { machine m }\nmachine m { b { machine m } }", ANIM_SM_RECURSIVE, 2, 25},
    {"a { clip walk }\nmachine m { b { clip walk } }", ANIM_SM_UNUSED_MACHINE, 2, 9},
    /* reachability */
    {"stand { clip idle GO walk }\nwalk { clip walk GO stand }\nrun { clip run GO stand }", ANIM_SM_UNREACHABLE, 3, 1},
    {"a { clip walk AUTO b }\nb { clip run AUTO a }", ANIM_SM_IMMEDIATE_CYCLE, 2, 14},
    {"a { clip walk AUTO a }", ANIM_SM_IMMEDIATE_CYCLE, 1, 15},
    {"a { match (walk) END a }", ANIM_SM_NEVER_ENDS, 1, 18},
    /* END on a state running a machine nothing stops in (a cycle's END stays with its state) */
    {"a { machine m END a }\nmachine m { w { clip walk loop } }", ANIM_SM_NEVER_ENDS, 1, 15},
    {"a { machine m END a }\nmachine m { w { clip walk END x }  x { tag t loop } }", ANIM_SM_NEVER_ENDS, 1, 15},
    {"a { machine m END a }\nmachine m { w { machine n } }\nmachine n { x { blend s (0 walk) } }\nparam s 0",
     ANIM_SM_NEVER_ENDS, 1, 15},
    {"a { clip walk [2 1] }", ANIM_SM_SPAN, 1, 15},
};

static void test_parse_errors(void **state) {
  for (size_t i = 0; i < sizeof parse_cases / sizeof parse_cases[0]; i++) {
    const parse_case_t *pc = &parse_cases[i];
    anim_sm_diagnostics_t d;
    char err[256];
    anim_state_machine_t *sm = anim_state_machine_parse(pc->text, strlen(pc->text), "case.sm", &d, err, sizeof err);
    if (sm) fail_msg("case %zu parsed: %s", i, pc->text);
    if (d.count < 1 || d.items[0].problem != pc->problem || d.items[0].line != pc->line ||
        d.items[0].column != pc->column)
      fail_msg("case %zu (%s): expected %s at %d:%d, got %s at %d:%d: %s", i, pc->text,
               anim_sm_problem_name(pc->problem), pc->line, pc->column,
               d.count ? anim_sm_problem_name(d.items[0].problem) : "nothing", d.count ? d.items[0].line : 0,
               d.count ? d.items[0].column : 0, err);
    char where[32];
    snprintf(where, sizeof where, "case.sm:%d:%d: ", pc->line, pc->column);
    assert_true(strncmp(err, where, strlen(where)) == 0);
    assert_string_equal(d.items[0].message, err);
  }
  /* Several problems are all reported, in order. */
  const char *many = "a { clip walk GO x }\nb { clip run }\nc { clip run AUTO c }";
  anim_sm_diagnostics_t d;
  assert_null(anim_state_machine_parse(many, strlen(many), NULL, &d, NULL, 0));
  assert_int_equal(d.total, 4); /* unknown x, b and c unreachable, c's cycle */
  assert_int_equal(d.items[0].problem, ANIM_SM_UNKNOWN_TARGET);
  assert_int_equal(d.items[1].problem, ANIM_SM_UNREACHABLE);
  assert_int_equal(d.items[2].problem, ANIM_SM_UNREACHABLE);
  assert_int_equal(d.items[3].problem, ANIM_SM_IMMEDIATE_CYCLE);
  assert_non_null(strstr(d.items[3].message, "c -> c"));
  assert_true(strncmp(d.items[0].message, "<text>:1:18:", 12) == 0);
  /* END comes up out of a nested machine whose clip stops with no END of its own, however deep. */
  const char *rises[] = {"a { machine m END a }\nmachine m { w { clip walk } }",
                         "a { machine m END a }\nmachine m { w { clip walk loop GO x }  x { tag t } }",
                         "a { machine m END a }\nmachine m { w { machine n } }\nmachine n { x { clip walk } }"};
  for (size_t i = 0; i < sizeof rises / sizeof rises[0]; i++) anim_state_machine_free(anim_test_sm_parse(rises[i]));
  /* The parser reads no further than len. */
  const char *cut = "a { clip walk } b";
  anim_state_machine_t *sm = anim_state_machine_parse(cut, 15, "cut", &d, NULL, 0);
  assert_non_null(sm);
  anim_state_machine_free(sm);
  /* A name made of digits is a name where a name is expected. */
  sm = anim_test_sm_parse("\"02_01\" { clip 02_01 [0 1] }");
  assert_string_equal(sm->clips[0].range_name, "02_01");
  anim_state_machine_free(sm);
  assert_string_equal(anim_sm_problem_name(ANIM_SM_SPAN), "SPAN");
  assert_string_equal(anim_sm_problem_name((anim_sm_problem_t)99), "UNKNOWN");
}


/* A strict UTF-8 check, written apart from the parser's (the test's own oracle). */
static int valid_utf8(const char *text) {
  const unsigned char *s = (const unsigned char *)text;
  while (*s) {
    int len = *s < 0x80                          ? 1
              : (*s & 0xe0) == 0xc0 && *s >= 0xc2 ? 2
              : (*s & 0xf0) == 0xe0               ? 3
              : (*s & 0xf8) == 0xf0 && *s <= 0xf4 ? 4
                                                  : 0;
    if (!len) return 0;
    for (int i = 1; i < len; i++)
      if ((s[i] & 0xc0) != 0x80) return 0;
    s += len;
  }
  return 1;
}

/* Machine text travels as bytes; its diagnostics and names travel as
 * protobuf strings, which must be UTF-8 (a Python client refused the whole
 * answer to a check_machine of binary text). Bytes that are not text are
 * written \xNN in messages; a quoted name must be UTF-8 text; names in UTF-8
 * are kept whole. */
static void test_messages_and_names_are_utf8(void **state) {
  static const char *const refused[] = {
      "stand { clip walk }\n\xff",                   /* unexpected character */
      "stand { clip walk } \xc3",                    /* a sequence cut by the end */
      "\"a\xff" "b\" { clip walk }",                 /* a quoted name that is not UTF-8 */
      "\"a\x01" "b\" { clip walk }",                 /* nor a control character */
      /* too long: quoted in part */
      "stand { JUMP \"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3"
      "\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
      "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\" }",
      "stand { \xe2\x82\xac }",                      /* a valid character where none may be */
  };
  for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
    anim_sm_diagnostics_t d;
    char err[256];
    anim_state_machine_t *sm = anim_state_machine_parse(refused[i], strlen(refused[i]), "bytes", &d, err, sizeof err);
    if (sm) fail_msg("case %zu parsed", i);
    if (d.count < 1 || d.items[0].problem != ANIM_SM_SYNTAX) fail_msg("case %zu: not a syntax error: %s", i, err);
    if (!valid_utf8(err) || !valid_utf8(d.items[0].message))
      fail_msg("case %zu: a message that is not UTF-8: %s", i, err);
  }
  anim_sm_diagnostics_t d;
  char err[256];
  assert_null(anim_state_machine_parse(refused[0], strlen(refused[0]), "bytes", &d, err, sizeof err));
  assert_non_null(strstr(err, "\\xff"));
  const char *nul = "\"a\0b\" { clip walk }";
  assert_null(anim_state_machine_parse(nul, 20, "bytes", &d, err, sizeof err));
  assert_true(valid_utf8(err));
  anim_state_machine_t *sm = anim_test_sm_parse("\"caf\xc3\xa9\" { clip walk }");
  assert_string_equal(sm->states[0].name, "caf\xc3\xa9");
  anim_state_machine_free(sm);
}

/* The seed's text, as the seed writes it (tabs, a brace on its own line):
 * it parses, each state a clip named after it. */
static const char seed_text[] = "stand\t{JUMP_PRESS\tstand2crouch }\n"
                                "stand2crouch\t\t\n{\t\t\n\tJUMP_RELEASE\thop\n\tEND\tcrouch\n}\t\t\n"
                                "crouch\t{JUMP_RELEASE\ttakeoff }\n"
                                "takeoff\t{END\tfloat }\n"
                                "hop\t{END\tfloat }\n"
                                "float\t{NEAR_GROUND\tland }\n"
                                "land\t{END\tstand }\n";

static void test_seed_text(void **state) {
  anim_state_machine_t *sm = anim_test_sm_parse(seed_text);
  assert_int_equal(sm->nmachines, 1);
  assert_int_equal(sm->nstates, 7);
  assert_int_equal(sm->ntransitions, 8);
  const char *events[] = {"END", "AUTO", "JUMP_PRESS", "JUMP_RELEASE", "NEAR_GROUND"};
  assert_int_equal(sm->nevents, 5);
  for (int e = 0; e < 5; e++) assert_string_equal(sm->events[e], events[e]);
  int s2c = anim_state_machine_find_state(sm, 0, "stand2crouch");
  assert_int_equal(sm->states[s2c].ntransitions, 2);
  const anim_sm_transition_t *t = &sm->transitions[sm->states[s2c].first_transition + 1];
  assert_int_equal(t->event, ANIM_SM_EVENT_END);
  assert_int_equal(t->target, anim_state_machine_find_state(sm, 0, "crouch"));
  assert_int_equal(sm->states[s2c].kind, ANIM_SM_MOTION_CLIP);
  assert_string_equal(sm->clips[sm->states[s2c].clip].range_name, "stand2crouch");
  assert_float_equal(t->halflife, 0.1f, 1e-6f);
  assert_int_equal(sm->max_transitions, 4);
  assert_int_equal(sm->depth, 1);
  /* Binding to a database without such ranges names each state. */
  anim_sm_diagnostics_t d;
  char err[256];
  assert_int_equal(anim_state_machine_bind(sm, &procgen_db, &d, err, sizeof err), ANIM_ENOTFOUND);
  assert_int_equal(d.total, 7);
  assert_int_equal(d.items[0].problem, ANIM_SM_UNKNOWN_RANGE);
  assert_int_equal(d.items[0].line, 1);
  assert_int_equal(d.items[0].column, 1);
  assert_non_null(strstr(err, "'stand'"));
  assert_int_equal(sm->bound_version, 0);
  anim_state_machine_free(sm);
}

static void test_bind_errors(void **state) {
  anim_sm_diagnostics_t d;
  char err[256];
  anim_state_machine_t *sm = anim_test_sm_parse(
      "a { clip nowhere GO b }\nb { match (walk flying) GO c }\nc { clip walk [0 99] GO d }\n"
      "d { tag swimming GO a }");
  assert_int_equal(anim_state_machine_bind(sm, &procgen_db, &d, err, sizeof err), ANIM_ENOTFOUND);
  assert_int_equal(d.total, 4);
  assert_int_equal(d.items[0].problem, ANIM_SM_UNKNOWN_RANGE);
  assert_int_equal(d.items[0].line, 1), assert_int_equal(d.items[0].column, 10);
  assert_int_equal(d.items[1].problem, ANIM_SM_SPAN);
  assert_int_equal(d.items[1].line, 3), assert_int_equal(d.items[1].column, 10);
  assert_int_equal(d.items[2].problem, ANIM_SM_UNKNOWN_TAG);
  /* Each unknown tag at its own word (the state's name once). */
  assert_int_equal(d.items[2].line, 2), assert_int_equal(d.items[2].column, 17);
  assert_non_null(strstr(d.items[2].message, "'flying'"));
  assert_int_equal(d.items[3].problem, ANIM_SM_UNKNOWN_TAG);
  assert_int_equal(d.items[3].line, 4), assert_int_equal(d.items[3].column, 9);
  anim_state_machine_free(sm);
  /* A span of one frame is too short. */
  sm = anim_test_sm_parse("a { clip walk [1 1.001] }");
  assert_int_equal(anim_state_machine_bind(sm, &procgen_db, &d, err, sizeof err), ANIM_ERANGE);
  assert_int_equal(d.items[0].problem, ANIM_SM_SPAN);
  anim_state_machine_free(sm);
}
int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parse_errors),
      cmocka_unit_test(test_messages_and_names_are_utf8),
      cmocka_unit_test(test_seed_text),
      cmocka_unit_test(test_bind_errors),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
