/*
 * bvh_write.h: a clip written as a Biovision Hierarchy file, the inverse of
 * bvh.h's reader (assimp, the project's model library, reads BVH but does
 * not write it: `assimp listexport` has no bvh).
 *
 * What it writes:
 *  - HIERARCHY: the clip's bones with their names and parents; OFFSET is the
 *    skeleton's rest offset (metres x units_per_metre). A leaf joint gets an
 *    End Site half its own offset further on (a few units up when that is
 *    zero), so importers that give each joint a bone (Blender) see a bone
 *    of non-zero length.
 *  - Channels: the root "Xposition Yposition Zposition Zrotation Xrotation
 *    Yrotation"; any other joint whose local position leaves its offset by
 *    more than 1e-5 m in some frame gets the same six, the rest three
 *    rotation channels. Rotations are Euler angles in degrees in ZXY order
 *    (R = Rz Rx Ry on column vectors, as the reader composes them).
 *  - MOTION: every frame, "Frame Time" the clip's.
 * Units: positions times units_per_metre (100 for centimetres, the usual
 * BVH unit; 1 for metres). Axes as in the clip: Y up, no change.
 * What it does not: scale channels, other rotation orders.
 */
#ifndef ANIM_BVH_WRITE_H
#define ANIM_BVH_WRITE_H

#include <stdio.h>
#include "pose/clip.h"

/* Euler angles (degrees, out_z, out_x, out_y) of q in ZXY order: q's matrix
 * equals Rz(z) Rx(x) Ry(y). At x = +-90 degrees (gimbal lock) y is 0 and z
 * carries the whole turn about the remaining axis. */
void anim_quat_to_euler_zxy(quat q, float *out_z, float *out_x, float *out_y);

/* Writes clip to out. 0; ANIM_EINVAL (clip invalid, units_per_metre not
 * positive and finite: err says which); ANIM_EIO (a write failed). */
int anim_bvh_write(FILE *out, const anim_clip_t *clip, float units_per_metre, char *err, int errlen);

/* Writes clip to the file at path (replaced); ANIM_EIO names the path. */
int anim_bvh_save(const char *path, const anim_clip_t *clip, float units_per_metre, char *err, int errlen);

#endif
