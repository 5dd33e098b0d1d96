/* import.c: loading clips from files and folders (see import.h). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include "anim_error.h"
#include "import.h"

static int append(anim_clip_list_t *list, const char *file, const anim_bvh_options_t *o, char *err, int errlen) {
  if (list->count == list->capacity) {
    int capacity = list->capacity ? 2 * list->capacity : 16;
    anim_clip_t *grown = realloc(list->clips, (size_t)capacity * sizeof *grown);
    if (!grown) return ANIM_ENOMEM;
    list->clips = grown;
    list->capacity = capacity;
  }
  int rc = anim_bvh_load(&list->clips[list->count], file, o, err, errlen);
  if (rc == 0) list->count++;
  return rc;
}

static int compare_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int anim_import_path(anim_clip_list_t *list, const char *path, const anim_bvh_options_t *o, char *err, int errlen) {
  struct stat st;
  if (stat(path, &st) != 0) {
    snprintf(err, (size_t)errlen, "%s: no such file or folder", path);
    return ANIM_EIO;
  }
  if (!S_ISDIR(st.st_mode)) return append(list, path, o, err, errlen);
  DIR *d = opendir(path);
  if (!d) {
    snprintf(err, (size_t)errlen, "%s: cannot open the folder", path);
    return ANIM_EIO;
  }
  char **names = NULL;
  int n = 0, cap = 0, rc = 0;
  struct dirent *e;
  while ((e = readdir(d)) && !rc) {
    size_t len = strlen(e->d_name);
    if (len < 5 || strcasecmp(e->d_name + len - 4, ".bvh") != 0) continue;
    if (n == cap) {
      cap = cap ? 2 * cap : 32;
      char **grown = realloc(names, (size_t)cap * sizeof *grown);
      if (!grown) rc = ANIM_ENOMEM;
      else names = grown;
    }
    if (!rc && !(names[n++] = strdup(e->d_name))) rc = ANIM_ENOMEM;
  }
  closedir(d);
  if (!rc) qsort(names, (size_t)n, sizeof *names, compare_names);
  for (int i = 0; i < n && !rc; i++) {
    char file[4096];
    snprintf(file, sizeof file, "%s/%s", path, names[i]);
    rc = append(list, file, o, err, errlen);
  }
  for (int i = 0; i < n; i++) free(names[i]);
  free(names);
  if (rc == ANIM_ENOMEM) snprintf(err, (size_t)errlen, "%s: out of memory", path);
  return rc;
}

void anim_clip_list_free(anim_clip_list_t *list) {
  for (int i = 0; i < list->count; i++) anim_clip_free(&list->clips[i]);
  free(list->clips);
  list->clips = NULL;
  list->count = list->capacity = 0;
}
