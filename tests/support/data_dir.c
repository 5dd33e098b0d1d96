/* data_dir.c: temporary data directories for test servers (see data_dir.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>
#include "data_dir.h"
#include "database/database.h"
#include "offline/dbfile_write.h"

void anim_test_data_dir_make(char *out_dir, size_t len, const char *tag) {
  snprintf(out_dir, len, "/tmp/animserver-%.20s-XXXXXX", tag);
  if (!mkdtemp(out_dir)) fail_msg("mkdtemp %s failed", out_dir);
}

int anim_test_data_dir_remove(const char *dir) {
  char cmd[256];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  return system(cmd) == 0 ? 0 : -1;
}

void anim_test_data_dir_put_database(const char *dir, const anim_database_t *db, const char *name) {
  char path[512], err[256];
  snprintf(path, sizeof path, "%s/%s.animdb", dir, name);
  if (anim_dbfile_write(db, path, err, sizeof err)) fail_msg("writing %s: %s", path, err);
}

void anim_test_data_dir_put_file(const char *dir, const char *file, const char *text, size_t len) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(text, 1, len, f) != len) fail_msg("writing %s failed", path);
  fclose(f);
}

void anim_test_data_dir_copy(const char *dir, const char *file, const char *from) {
  FILE *f = fopen(from, "rb");
  if (!f) fail_msg("cannot open %s (tests run from the source tree's root)", from);
  char text[1 << 16];
  size_t len = fread(text, 1, sizeof text, f);
  fclose(f);
  anim_test_data_dir_put_file(dir, file, text, len);
}
