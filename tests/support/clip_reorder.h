/*
 * clip_reorder.h: a clip's skeleton listed in another joint order, for the
 * tests (and the fuzzer) that check a database does not depend on the order
 * its clips list their joints in. Plain C (no cmocka): the fuzz targets
 * link it too.
 */
#ifndef ANIM_TEST_CLIP_REORDER_H
#define ANIM_TEST_CLIP_REORDER_H

#include "pose/clip.h"

/* out (allocated; free with anim_clip_free): in with every bone's children
 * listed in reverse order, parents still before their children: the same
 * skeleton and motion in another joint order, under in's name. 0, or the
 * error of anim_clip_alloc. */
int anim_test_reverse_children(const anim_clip_t *in, anim_clip_t *out);

#endif
