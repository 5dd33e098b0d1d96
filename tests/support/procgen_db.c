/* procgen_db.c: the core tests' procedural database (see procgen_db.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>
#include "offline/procgen.h"
#include "procgen_db.h"

int anim_test_procgen_load(anim_database_t *out_db) {
  char err[256];
  if (anim_procgen_database(out_db, NULL, err, sizeof err) == 0) return 0;
  fprintf(stderr, "procedural database: %s\n", err);
  return -1;
}

void anim_test_procgen(anim_database_t *out_db) {
  char err[256];
  if (anim_procgen_database(out_db, NULL, err, sizeof err) != 0) fail_msg("procedural database: %s", err);
}

int anim_test_procgen_indexed(anim_database_t *out_db, anim_search_index_t **out_index) {
  char err[256];
  *out_index = NULL;
  if (anim_test_procgen_load(out_db)) return -1;
  anim_search_data_t data = anim_search_data_of(out_db);
  *out_index = anim_search_index_build(ANIM_SEARCH_FAST, &data, err, sizeof err);
  if (*out_index) return 0;
  fprintf(stderr, "search index: %s\n", err);
  anim_database_free(out_db);
  return -1;
}

void anim_test_procgen_indexed_free(anim_database_t *db, anim_search_index_t *index) {
  anim_search_index_free(index);
  anim_database_free(db);
}
