/* shared_data.c: locating ../shared for tests (see shared_data.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>
#include "shared_data.h"

const char *anim_test_shared_dir(void) {
  const char *dir = getenv("ANIM_SHARED_DIR");
  return dir && *dir ? dir : "../shared";
}

int anim_test_shared_path(char *out_path, int len, const char *relative) {
  struct stat st;
  snprintf(out_path, (size_t)len, "%s/%s", anim_test_shared_dir(), relative);
  if (stat(out_path, &st) == 0) return 1;
  const char *ci = getenv("CI");
  if (ci && strcmp(ci, "true") == 0) {
    fail_msg("shared data %s is missing, and CI=true forbids skipping", out_path);
  }
  printf("skipped: shared data %s not found (set ANIM_SHARED_DIR)\n", out_path);
  skip();
  return 0;
}
