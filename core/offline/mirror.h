/*
 * mirror.h: left/right mirrored copies of clips, for databases that should
 * turn and step both ways as well as their data does one way.
 *
 * What it does: every bone takes its partner's motion reflected in the
 * X = 0 plane. Partners go by name: the caller's left/right marks if given,
 * then Left/Right, left/right, _L/_R, _l/_r, .L/.R anywhere in the name,
 * then a one-letter prefix (LHipJoint, lHip, lhand); a bone without a
 * partner of that name is its own. World positions reflect, (x, y, z) ->
 * (-x, y, z); a bone's world rotation becomes its partner's reflected one,
 * M R_p M = (w, x, -y, -z), followed by the half turn about one of its own
 * axes that restores its axis convention where the skeleton's joint frames
 * are not mirror images of each other (Bandai's hips, thighs, shoulders);
 * which half turn is decided once per skeleton from the evidence of every
 * clip. Local transforms are recomputed from the world ones, so every world
 * position of the copy is exactly the reflected one.
 * What it does not: rename the copies' ranges beyond "_mirror", tag them, or
 * resample (build.c does).
 */
#ifndef ANIM_MIRROR_H
#define ANIM_MIRROR_H

#include "offline/bone_roles.h"
#include "pose/clip.h"

/* Mirrors copies[c] (a copy of originals[c], same frames) in place, for c <
 * nclips, all clips on one skeleton; appends "_mirror" to each copy's name.
 * roles: the skeleton's bones per role (the hips and thighs give the
 * actor's facing, which the evidence is taken relative to). left and right:
 * the caller's side marks, or NULL. Nothing fails. */
void anim_mirror_clips(anim_clip_t *const *originals, anim_clip_t *const *copies, int nclips, const int *roles,
                       const char *left, const char *right);

#endif
