/* clip_reorder.c: a clip in another joint order (see clip_reorder.h). */
#include <string.h>
#include "clip_reorder.h"

int anim_test_reverse_children(const anim_clip_t *in, anim_clip_t *out) {
  const anim_skeleton_t *s = &in->skeleton;
  int order[ANIM_MAX_BONES], stack[ANIM_MAX_BONES], where[ANIM_MAX_BONES], n = 0, top = 0;
  stack[top++] = 0;
  while (top) {
    int b = stack[--top];
    order[n++] = b;
    /* Pushed in index order, so popped (visited) in reverse. */
    for (int c = 1; c < s->nbones; c++)
      if (s->parents[c] == b) stack[top++] = c;
  }
  anim_skeleton_t r = *s;
  for (int i = 0; i < n; i++) where[order[i]] = i;
  for (int i = 0; i < n; i++) {
    memcpy(r.names[i], s->names[order[i]], ANIM_NAME_MAX);
    r.parents[i] = s->parents[order[i]] < 0 ? -1 : where[s->parents[order[i]]];
    r.offsets[i] = s->offsets[order[i]];
  }
  int rc = anim_clip_alloc(out, &r, in->nframes, in->frame_time);
  if (rc) return rc;
  memcpy(out->name, in->name, sizeof out->name);
  for (int f = 0; f < in->nframes; f++)
    for (int i = 0; i < n; i++) {
      size_t to = (size_t)f * (size_t)n + (size_t)i, from = (size_t)f * (size_t)n + (size_t)order[i];
      out->local_positions[to] = in->local_positions[from];
      out->local_rotations[to] = in->local_rotations[from];
    }
  return 0;
}
