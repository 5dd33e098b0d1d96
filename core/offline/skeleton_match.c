/* skeleton_match.c: bones matched by name between two skeletons (see skeleton_match.h). */
#include <stdio.h>
#include "anim_error.h"
#include "offline/skeleton_match.h"

static const char *parent_name(const anim_skeleton_t *s, int b) {
  return s->parents[b] >= 0 ? s->names[s->parents[b]] : "(none: the root)";
}

int anim_skeleton_match(const anim_skeleton_t *ref, const anim_skeleton_t *other, int *out_map, char *err,
                        int errlen) {
  for (int b = 0; b < ref->nbones; b++) {
    int o = anim_skeleton_find(other, ref->names[b]);
    if (o < 0) {
      if (err && errlen > 0) snprintf(err, (size_t)errlen, "has no bone \"%s\"", ref->names[b]);
      return ANIM_EINVAL;
    }
    int ref_parent = ref->parents[b], other_parent = other->parents[o];
    int same = ref_parent < 0 ? other_parent < 0
                              : other_parent >= 0 && anim_skeleton_find(ref, other->names[other_parent]) == ref_parent;
    if (!same) {
      if (err && errlen > 0)
        snprintf(err, (size_t)errlen, "bone \"%s\" hangs from \"%s\" here, from \"%s\" in the first clip",
                 ref->names[b], parent_name(other, o), parent_name(ref, b));
      return ANIM_EINVAL;
    }
    out_map[b] = o;
  }
  for (int o = 0; o < other->nbones; o++)
    if (anim_skeleton_find(ref, other->names[o]) < 0) {
      if (err && errlen > 0) snprintf(err, (size_t)errlen, "has a bone \"%s\" the first clip lacks", other->names[o]);
      return ANIM_EINVAL;
    }
  return 0;
}
