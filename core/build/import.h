/*
 * import.h: clips from files and folders, for tools, tests and benchmarks.
 *
 * A folder contributes its *.bvh files (not recursive) in name order, so the
 * same folder always gives the same clips in the same order.
 */
#ifndef ANIM_IMPORT_H
#define ANIM_IMPORT_H

#include "bvh.h"
#include "clip.h"

typedef struct {
  anim_clip_t *clips;
  int count, capacity;
} anim_clip_list_t;

/* Appends the clip of a BVH file, or every BVH clip of a folder, to list.
 * 0, or ANIM_EIO / ANIM_EFORMAT / ANIM_ETRUNCATED / ANIM_ENOMEM with
 * "file:line: what" in err. */
int anim_import_path(anim_clip_list_t *list, const char *path, const anim_bvh_options_t *options, char *err, int errlen);

void anim_clip_list_free(anim_clip_list_t *list);

#endif
