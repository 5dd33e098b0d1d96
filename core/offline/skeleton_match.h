/*
 * skeleton_match.h: whether clips share one skeleton, whatever order their
 * files list the joints in.
 *
 * What it does: matches bones by name; two skeletons match when they have
 * the same bone names and every bone hangs from the bone of the same name,
 * so only the order of the joints (of children under a parent, as in two of
 * the GAMES-105 files) may differ. Rest offsets may differ (actors' bone
 * lengths). What it does not: retarget between skeletons with other names
 * or another hierarchy; those are reported, with the first difference.
 */
#ifndef ANIM_SKELETON_MATCH_H
#define ANIM_SKELETON_MATCH_H

#include "pose/clip.h"

/* out_map[b] = the index in other of ref's bone b (ref->nbones entries).
 * 0, or ANIM_EINVAL with the first difference in err, in ref's bone order:
 * a bone of ref missing from other, a bone hanging from another parent, or
 * a bone of other that ref lacks. */
int anim_skeleton_match(const anim_skeleton_t *ref, const anim_skeleton_t *other, int *out_map, char *err,
                        int errlen);

#endif
