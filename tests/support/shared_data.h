/*
 * shared_data.h: where tests and benchmarks find ../shared (real mocap, LMM
 * networks), and what they do when it is absent.
 *
 * The folder comes from $ANIM_SHARED_DIR (the Makefile sets it), else
 * ../shared beside the source tree. Without it a test skips with the reason,
 * except under CI (CI=true), where missing data is a failure.
 */
#ifndef ANIM_TEST_SHARED_DATA_H
#define ANIM_TEST_SHARED_DATA_H

#include "offline/build.h"

/* Absolute or relative path of the shared folder; never NULL. */
const char *anim_test_shared_dir(void);

/* Fills out_path (size len) with shared_dir/relative. Returns 1 when it
 * exists. When it does not: under CI fails the current cmocka test, else
 * prints "skipped: <reason>" and calls cmocka's skip(); either way the
 * calling test stops. Use as: if (!anim_test_shared_path(...)) return; */
int anim_test_shared_path(char *out_path, int len, const char *relative);

struct anim_database;
/* Builds the real-mocap test database: every Bandai Namco clip, 60 Hz,
 * mirrored, default features. Returns 1, or 0 after skip/fail like
 * anim_test_shared_path. Free with anim_database_free. */
int anim_test_bandai_database(struct anim_database *out_db);

/* The shared mocap folders (../shared/data/mocap/<folder>), as the tests
 * that go through every one of them build them. */
typedef struct {
  const char *folder;
  float scale;      /* metres per file unit (SOURCE.md) */
  int clips;        /* BVH files in the folder */
  const char *walk; /* a walking clip's range name */
} anim_test_mocap_set_t;
#define ANIM_TEST_MOCAP_SETS 4
extern const anim_test_mocap_set_t anim_test_mocap_sets[ANIM_TEST_MOCAP_SETS];

/* Builds set's database (named after its folder, no features) from every
 * clip of its folder, with options (NULL: the defaults, mirrored), after
 * checking the folder holds the set's clips. Returns 1, or 0 after
 * skip/fail like anim_test_shared_path; fails the test on an error. */
int anim_test_mocap_database(int set, const anim_build_options_t *options, anim_database_t *out_db);
/* The same, the clips imported at size times the set's scale (a body that
 * much larger; 1: as anim_test_mocap_database). */
int anim_test_mocap_database_sized(int set, float size, const anim_build_options_t *options, anim_database_t *out_db);

/* The index of the set in that folder ("bandai-namco", ...); fails the
 * test when there is none. */
int anim_test_mocap_set_find(const char *folder);

/* db's range named name; fails the test when there is none. */
const anim_range_t *anim_test_range_find(const anim_database_t *db, const char *name);

#endif
