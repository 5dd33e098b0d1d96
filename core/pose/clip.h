/*
 * clip.h: a skeleton and a source animation clip (local joint transforms per
 * frame at the clip's own rate), the common intermediate of every importer
 * (BVH files, the procedural locomotion generator) and the database builder.
 *
 * A clip owns its arrays; anim_clip_free releases them. Clips are built once
 * by an importer and only read afterwards.
 *
 * Validity rules (anim_clip_validate):
 *  1. 1 <= nbones <= ANIM_MAX_BONES, bone 0 is the root (parent -1);
 *  2. parents[i] < i for i > 0 (parents come first);
 *  3. bone names are non-empty, unique, shorter than ANIM_NAME_MAX;
 *  4. nframes >= 1 and frame_time > 0;
 *  5. every position finite, every rotation finite and unit length (1e-3).
 * Units: positions in metres (importers convert), Y up.
 */
#ifndef ANIM_CLIP_H
#define ANIM_CLIP_H

#include "math/anim_math.h"

#define ANIM_MAX_BONES 128
#define ANIM_NAME_MAX 64

typedef struct {
  int nbones;
  char names[ANIM_MAX_BONES][ANIM_NAME_MAX];
  int parents[ANIM_MAX_BONES];
  vec3 offsets[ANIM_MAX_BONES]; /* rest local translation, metres */
} anim_skeleton_t;

typedef struct {
  char name[ANIM_NAME_MAX];
  anim_skeleton_t skeleton;
  int nframes;
  float frame_time;      /* seconds per frame */
  vec3 *local_positions; /* [frame * nbones + bone], metres */
  quat *local_rotations; /* [frame * nbones + bone] */
} anim_clip_t;

/* Index of the bone called name, or -1. */
int anim_skeleton_find(const anim_skeleton_t *skeleton, const char *name);

/* Allocates the frame arrays of clip for nframes x skeleton->nbones (zeroed
 * positions, identity rotations). 0 or ANIM_ENOMEM/ANIM_EINVAL. */
int anim_clip_alloc(anim_clip_t *clip, const anim_skeleton_t *skeleton, int nframes, float frame_time);
void anim_clip_free(anim_clip_t *clip);
/* 0 when the rules above hold; else ANIM_EFORMAT with a message in err. */
int anim_clip_validate(const anim_clip_t *clip, char *err, int errlen);

#endif
