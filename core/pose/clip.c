/* clip.c: allocation and validation of skeletons and clips (see clip.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "pose/clip.h"

int anim_skeleton_find(const anim_skeleton_t *skeleton, const char *name) {
  for (int i = 0; i < skeleton->nbones; i++)
    if (strcmp(skeleton->names[i], name) == 0) return i;
  return -1;
}

int anim_clip_alloc(anim_clip_t *clip, const anim_skeleton_t *skeleton, int nframes, float frame_time) {
  if (!clip || !skeleton || nframes < 1 || skeleton->nbones < 1 || skeleton->nbones > ANIM_MAX_BONES ||
      !(frame_time > 0.0f))
    return ANIM_EINVAL;
  size_t count = (size_t)nframes * (size_t)skeleton->nbones;
  vec3 *positions = calloc(count, sizeof *positions);
  quat *rotations = malloc(count * sizeof *rotations);
  if (!positions || !rotations) {
    free(positions);
    free(rotations);
    return ANIM_ENOMEM;
  }
  for (size_t i = 0; i < count; i++) rotations[i] = quat_identity();
  if (&clip->skeleton != skeleton) clip->skeleton = *skeleton;
  clip->nframes = nframes;
  clip->frame_time = frame_time;
  clip->local_positions = positions;
  clip->local_rotations = rotations;
  return 0;
}

void anim_clip_free(anim_clip_t *clip) {
  if (!clip) return;
  free(clip->local_positions);
  free(clip->local_rotations);
  clip->local_positions = NULL;
  clip->local_rotations = NULL;
  clip->nframes = 0;
}

static int finite3(vec3 v) { return isfinite(v.x) && isfinite(v.y) && isfinite(v.z); }

int anim_clip_validate(const anim_clip_t *clip, char *err, int errlen) {
  const anim_skeleton_t *s = &clip->skeleton;
  if (s->nbones < 1 || s->nbones > ANIM_MAX_BONES) {
    snprintf(err, errlen, "%s: %d bones (1..%d allowed)", clip->name, s->nbones, ANIM_MAX_BONES);
    return ANIM_EFORMAT;
  }
  if (s->parents[0] != -1) {
    snprintf(err, errlen, "%s: bone 0 is not a root", clip->name);
    return ANIM_EFORMAT;
  }
  for (int i = 0; i < s->nbones; i++) {
    size_t len = strnlen(s->names[i], ANIM_NAME_MAX);
    if (len == 0 || len == ANIM_NAME_MAX) {
      snprintf(err, errlen, "%s: bone %d has an empty or unterminated name", clip->name, i);
      return ANIM_EFORMAT;
    }
    if (i > 0 && (s->parents[i] < 0 || s->parents[i] >= i)) {
      snprintf(err, errlen, "%s: bone %s has parent %d (must come before it)", clip->name, s->names[i], s->parents[i]);
      return ANIM_EFORMAT;
    }
    for (int j = 0; j < i; j++)
      if (strcmp(s->names[i], s->names[j]) == 0) {
        snprintf(err, errlen, "%s: bone name %s appears twice", clip->name, s->names[i]);
        return ANIM_EFORMAT;
      }
  }
  if (clip->nframes < 1 || !(clip->frame_time > 0.0f) || !isfinite(clip->frame_time)) {
    snprintf(err, errlen, "%s: %d frames with frame time %g", clip->name, clip->nframes, clip->frame_time);
    return ANIM_EFORMAT;
  }
  size_t count = (size_t)clip->nframes * (size_t)s->nbones;
  for (size_t i = 0; i < count; i++) {
    quat q = clip->local_rotations[i];
    float norm = sqrtf(quat_dot(q, q));
    if (!finite3(clip->local_positions[i]) || !isfinite(norm) || fabsf(norm - 1.0f) > 1e-3f) {
      snprintf(err, errlen, "%s: frame %zu bone %s has a non-finite or non-unit transform", clip->name,
               i / (size_t)s->nbones, s->names[i % (size_t)s->nbones]);
      return ANIM_EFORMAT;
    }
  }
  return 0;
}
