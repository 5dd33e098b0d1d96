/*
 * machine_fixture.h: what the state machine's tests share
 * (test_state_machine, test_machine_character): parsing and binding that
 * fail the running test, and the tagged Bandai Namco database with its
 * search index that match states run on.
 */
#ifndef ANIM_TEST_MACHINE_FIXTURE_H
#define ANIM_TEST_MACHINE_FIXTURE_H

#include "machine/state_machine.h"
#include "search/search.h"

/* text parsed (file name "test.sm"); fails the running test with the
 * parser's message. The caller frees the machine. */
anim_state_machine_t *anim_test_sm_parse(const char *text);

/* text parsed and bound to db; fails the running test with the message. */
anim_state_machine_t *anim_test_sm_bound(const char *text, const anim_database_t *db);

/* The Bandai Namco database, tagged "walk" (forward walks) and "run" (runs
 * and dashes), with a search index; the caller owns it (a test program
 * keeps one, freed by its group teardown). */
typedef struct {
  anim_database_t db;
  anim_search_index_t *index;
  int loaded;
} anim_test_machine_bandai_t;

/* Builds f on the first call (later calls return at once): 1, or 0 after
 * the skip (or, under CI, failure) of anim_test_bandai_database. */
int anim_test_machine_bandai(anim_test_machine_bandai_t *f);

/* Frees what anim_test_machine_bandai built; f is zeroed. */
void anim_test_machine_bandai_free(anim_test_machine_bandai_t *f);

#endif
