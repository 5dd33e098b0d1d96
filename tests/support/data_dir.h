/*
 * data_dir.h: a temporary data directory for a test server (--data-dir):
 * databases written as NAME.animdb, other files (NAME.machine) copied in,
 * everything removed at the end.
 */
#ifndef ANIM_TEST_DATA_DIR_H
#define ANIM_TEST_DATA_DIR_H

#include <stddef.h>

struct anim_database;

/* Makes /tmp/animserver-<tag>-XXXXXX into out_dir (len >= 64); fails the
 * running test when it cannot. */
void anim_test_data_dir_make(char *out_dir, size_t len, const char *tag);
/* Removes dir and what is in it. 0, or -1. */
int anim_test_data_dir_remove(const char *dir);
/* dir/NAME.animdb from db. */
void anim_test_data_dir_put_database(const char *dir, const struct anim_database *db, const char *name);
/* dir/file holding len bytes of text. */
void anim_test_data_dir_put_file(const char *dir, const char *file, const char *text, size_t len);
/* dir/file, a copy of the source tree's `from` (tests run from its root). */
void anim_test_data_dir_copy(const char *dir, const char *file, const char *from);

#endif
