/*
 * bvh.h: Biovision Hierarchy import into an anim_clip_t.
 *
 * Reads real files: any channel order per joint, 3- or 6-channel joints
 * (position channels on any joint are honoured), end sites (skipped as
 * bones), CRLF or LF, tabs, "Frame Time: .0083333" without a leading zero.
 * Positions are converted to metres with options->scale. Errors name the
 * file and the line, never crash, never read past the buffer.
 */
#ifndef ANIM_BVH_H
#define ANIM_BVH_H

#include <stddef.h>
#include "pose/clip.h"

typedef struct {
  float scale;          /* metres per file unit: 0.01 for centimetres, 1 for metres */
} anim_bvh_options_t;

void anim_bvh_options_default(anim_bvh_options_t *options); /* scale 0.01 */

/* Parses text[0..len) (need not be NUL-terminated) into out_clip, named name
 * (used in error messages too). 0, or ANIM_EFORMAT / ANIM_ETRUNCATED /
 * ANIM_ENOMEM with "name:line: what" in err. Caller frees with anim_clip_free. */
int anim_bvh_parse(anim_clip_t *out_clip, const char *text, size_t len, const char *name,
                   const anim_bvh_options_t *options, char *err, int errlen);

/* Reads path and parses it; the clip is named after the file's base name
 * without extension. Adds ANIM_EIO for unreadable files. */
int anim_bvh_load(anim_clip_t *out_clip, const char *path, const anim_bvh_options_t *options,
                  char *err, int errlen);

#endif
