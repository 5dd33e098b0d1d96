/*
 * machine_fixture.c: the state machine tests' shared set-up
 * (machine_fixture.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>
#include "machine_fixture.h"
#include "offline/build.h"
#include "shared_data.h"

anim_state_machine_t *anim_test_sm_parse(const char *text) {
  anim_sm_diagnostics_t d;
  char err[256];
  anim_state_machine_t *sm = anim_state_machine_parse(text, strlen(text), "test.sm", &d, err, sizeof err);
  if (!sm) fail_msg("parse: %s (%d problems)", err, d.total);
  return sm;
}

anim_state_machine_t *anim_test_sm_bound(const char *text, const anim_database_t *db) {
  anim_state_machine_t *sm = anim_test_sm_parse(text);
  char err[256];
  anim_sm_diagnostics_t d;
  if (anim_state_machine_bind(sm, db, &d, err, sizeof err)) fail_msg("bind: %s", err);
  return sm;
}

int anim_test_machine_bandai(anim_test_machine_bandai_t *f) {
  if (f->loaded) return 1;
  anim_database_t *db = &f->db;
  if (!anim_test_bandai_database(db)) return 0;
  for (int r = 0; r < db->nranges; r++) {
    const char *n = db->ranges[r].name;
    if (strstr(n, "_walk_") || strstr(n, "_walk-left") || strstr(n, "_walk-right") || strstr(n, "walk-turn"))
      assert_int_equal(anim_database_tag_range(db, r, "walk"), 0);
    if (strstr(n, "_run_") || strstr(n, "_dash_")) assert_int_equal(anim_database_tag_range(db, r, "run"), 0);
  }
  anim_database_update_version(db);
  char err[256];
  anim_search_data_t data = anim_search_data_of(db);
  f->index = anim_search_index_build(ANIM_SEARCH_FAST, &data, err, sizeof err);
  assert_non_null(f->index);
  f->loaded = 1;
  return 1;
}

void anim_test_machine_bandai_free(anim_test_machine_bandai_t *f) {
  anim_search_index_free(f->index);
  if (f->loaded) anim_database_free(&f->db);
  memset(f, 0, sizeof *f);
}
