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

#endif
