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
