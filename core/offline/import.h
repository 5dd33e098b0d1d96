/*
 * import.h: clips from files and folders, for tools, tests and benchmarks,
 * through a table of importers (one per file extension).
 *
 * What it does: expands a path to files (a file is itself; a folder gives
 * its files whose extension an importer takes, not recursive, in name
 * order, so the same folder always gives the same clips in the same order)
 * and hands each file to the importer of its extension, which appends its
 * clip(s) to a list. The core's own importer reads BVH (bvh.h); importers
 * that need a library beyond libc (FBX and glTF through assimp:
 * import/assimp_import.h) live outside the core and plug into the same
 * table. What it does not: build databases (build.h).
 */
#ifndef ANIM_IMPORT_H
#define ANIM_IMPORT_H

#include "offline/bvh.h"
#include "pose/clip.h"

typedef struct {
  anim_clip_t *clips;
  int count, capacity;
} anim_clip_list_t;

/* What every importer is told. */
typedef struct {
  float scale; /* metres per file unit; 0: the format's own (BVH: centimetres, 0.01) */
} anim_import_options_t;

/* Appends the clip(s) of the file at path to list. 0, or a negative code
 * with a message naming the file in err. */
typedef int (*anim_import_file_cb)(anim_clip_list_t *list, const char *path, const anim_import_options_t *options,
                                   char *err, int errlen);

typedef struct {
  const char *extension; /* with the dot, matched without regard to case: ".bvh" */
  anim_import_file_cb import;
} anim_importer_t;

/* The BVH importer (bvh.c): one clip per file, named after the file. */
extern const anim_importer_t anim_importer_bvh;

/* The files path stands for (see the top): *out_files holds *out_count
 * paths (free with anim_import_files_free). 0, ANIM_EIO (no such path, a
 * folder that cannot be read) or ANIM_ENOMEM, with a message. */
int anim_import_list(const char *path, const anim_importer_t *importers, int nimporters, char ***out_files,
                     int *out_count, char *err, int errlen);
void anim_import_files_free(char **files, int count);

/* Appends the clips of one file through the importer of its extension.
 * ANIM_EFORMAT when no importer takes it; else the importer's result. */
int anim_import_file(anim_clip_list_t *list, const char *path, const anim_importer_t *importers, int nimporters,
                     const anim_import_options_t *options, char *err, int errlen);

/* Appends the clip of a BVH file, or every BVH clip of a folder, to list.
 * 0, or ANIM_EIO / ANIM_EFORMAT / ANIM_ETRUNCATED / ANIM_ENOMEM with
 * "file:line: what" in err. */
int anim_import_path(anim_clip_list_t *list, const char *path, const anim_bvh_options_t *options, char *err,
                     int errlen);

/* Moves *clip to the end of list (the list owns it; *clip is zeroed). 0 or ANIM_ENOMEM. */
int anim_clip_list_append(anim_clip_list_t *list, anim_clip_t *clip);
void anim_clip_list_free(anim_clip_list_t *list);

#endif
