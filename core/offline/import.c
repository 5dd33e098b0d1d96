/* import.c: clips from files and folders through a table of importers (see import.h). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include "anim_error.h"
#include "offline/import.h"

static int say(char *err, int errlen, int code, const char *path, const char *what) {
  if (err && errlen > 0) snprintf(err, (size_t)errlen, "%s: %s", path, what);
  return code;
}

int anim_clip_list_append(anim_clip_list_t *list, anim_clip_t *clip) {
  if (list->count == list->capacity) {
    int capacity = list->capacity ? 2 * list->capacity : 16;
    anim_clip_t *grown = realloc(list->clips, (size_t)capacity * sizeof *grown);
    if (!grown) return ANIM_ENOMEM;
    list->clips = grown;
    list->capacity = capacity;
  }
  list->clips[list->count++] = *clip;
  memset(clip, 0, sizeof *clip);
  return 0;
}

void anim_clip_list_free(anim_clip_list_t *list) {
  for (int i = 0; i < list->count; i++) anim_clip_free(&list->clips[i]);
  free(list->clips);
  list->clips = NULL;
  list->count = list->capacity = 0;
}

static int import_bvh(anim_clip_list_t *list, const char *path, const anim_import_options_t *o, char *err, int errlen) {
  anim_bvh_options_t bo;
  anim_bvh_options_default(&bo);
  if (o && o->scale > 0.0f) bo.scale = o->scale;
  anim_clip_t clip;
  int rc = anim_bvh_load(&clip, path, &bo, err, errlen);
  if (rc) return rc;
  if ((rc = anim_clip_list_append(list, &clip))) {
    anim_clip_free(&clip);
    return say(err, errlen, rc, path, "out of memory");
  }
  return 0;
}

const anim_importer_t anim_importer_bvh = {".bvh", import_bvh};

static const anim_importer_t *importer_of(const char *path, const anim_importer_t *importers, int n) {
  size_t len = strlen(path);
  for (int i = 0; i < n; i++) {
    size_t elen = strlen(importers[i].extension);
    if (len > elen && strcasecmp(path + len - elen, importers[i].extension) == 0) return &importers[i];
  }
  return NULL;
}

static int compare_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

void anim_import_files_free(char **files, int count) {
  for (int i = 0; i < count; i++) free(files[i]);
  free(files);
}

int anim_import_list(const char *path, const anim_importer_t *importers, int n, char ***out_files, int *out_count,
                     char *err, int errlen) {
  *out_files = NULL, *out_count = 0;
  struct stat st;
  if (stat(path, &st) != 0) return say(err, errlen, ANIM_EIO, path, "no such file or folder");
  char **files = NULL;
  int count = 0, cap = 0, rc = 0;
  if (!S_ISDIR(st.st_mode)) {
    files = malloc(sizeof *files);
    if (!files || !(files[0] = strdup(path))) {
      free(files);
      return say(err, errlen, ANIM_ENOMEM, path, "out of memory");
    }
    *out_files = files, *out_count = 1;
    return 0;
  }
  DIR *d = opendir(path);
  if (!d) return say(err, errlen, ANIM_EIO, path, "cannot open the folder");
  struct dirent *e;
  while (!rc && (e = readdir(d))) {
    if (e->d_name[0] == '.' || !importer_of(e->d_name, importers, n)) continue;
    if (count == cap) {
      cap = cap ? 2 * cap : 32;
      char **grown = realloc(files, (size_t)cap * sizeof *grown);
      if (!grown) {
        rc = ANIM_ENOMEM;
        break;
      }
      files = grown;
    }
    size_t len = strlen(path) + strlen(e->d_name) + 2;
    if (!(files[count] = malloc(len))) rc = ANIM_ENOMEM;
    else snprintf(files[count++], len, "%s/%s", path, e->d_name);
  }
  closedir(d);
  if (rc) {
    anim_import_files_free(files, count);
    return say(err, errlen, rc, path, "out of memory");
  }
  qsort(files, (size_t)count, sizeof *files, compare_names);
  *out_files = files, *out_count = count;
  return 0;
}

int anim_import_file(anim_clip_list_t *list, const char *path, const anim_importer_t *importers, int n,
                     const anim_import_options_t *options, char *err, int errlen) {
  const anim_importer_t *importer = importer_of(path, importers, n);
  if (!importer) return say(err, errlen, ANIM_EFORMAT, path, "no importer for this file's extension");
  return importer->import(list, path, options, err, errlen);
}

int anim_import_path(anim_clip_list_t *list, const char *path, const anim_bvh_options_t *options, char *err,
                     int errlen) {
  anim_import_options_t o = {options ? options->scale : 0.0f};
  char **files;
  int count, rc = anim_import_list(path, &anim_importer_bvh, 1, &files, &count, err, errlen);
  for (int i = 0; i < count && !rc; i++) rc = anim_import_file(list, files[i], &anim_importer_bvh, 1, &o, err, errlen);
  anim_import_files_free(files, count);
  return rc;
}
