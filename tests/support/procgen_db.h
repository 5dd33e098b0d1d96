/*
 * procgen_db.h: the procedural database (core/offline/procgen.h) most core tests
 * run on, built in one place so that a change of its options or of how a
 * failure is reported is made once.
 */
#ifndef ANIM_TEST_PROCGEN_DB_H
#define ANIM_TEST_PROCGEN_DB_H

#include "database/database.h"
#include "search/search.h"

/* Builds the default procedural database into *out_db: 0, or -1 with the
 * builder's message on stderr (the form a cmocka group set-up returns). */
int anim_test_procgen_load(anim_database_t *out_db);

/* The procedural database and its fast search index, as a controller's
 * tests use them (a cmocka group set-up's form: 0, or -1 with the message
 * on stderr); freed by anim_test_procgen_indexed_free. */
int anim_test_procgen_indexed(anim_database_t *out_db, anim_search_index_t **out_index);
void anim_test_procgen_indexed_free(anim_database_t *db, anim_search_index_t *index);

/* The same inside a test: fails the running test with the message. */
void anim_test_procgen(anim_database_t *out_db);

#endif
