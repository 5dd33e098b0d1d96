/*
 * assimp_import.h: FBX and glTF (.gltf, .glb) animations as clips, through
 * the Open Asset Import Library (assimp, Debian
 * libassimp-dev), for animdb and the tests. It sits outside the core, which
 * stays libc + libm: only animdb and the tests that need it link it (and
 * -lassimp); the server never does.
 *
 * What it does, per animation of the file (a file with several animations
 * gives one clip each, named FILE_ANIMATION; with one, FILE):
 *  - Skeleton: the nodes the animation moves, plus the nodes between them,
 *    under the nearest common ancestor of all of them (the root bone).
 *    Nodes that are neither animated nor above an animated one (meshes,
 *    cameras, end sites) are left out, as the BVH reader leaves end sites
 *    out. Everything above the root bone (an "Armature" node with its
 *    scale, a scene root with an axis change) is a fixed transform folded
 *    into the root bone; its scale (uniform) scales every bone.
 *  - Frames: the frame time is the most common spacing of the keys of the
 *    most-keyed channel; every channel is sampled at that rate from its
 *    first key to the animation's last (positions lerped, rotations
 *    slerped the short way between the keys around each frame; a node
 *    without keys of a kind keeps its rest value). Bone scale keys are
 *    ignored (locomotion rigs do not scale bones).
 *  - Units: positions times options->scale (metres per file unit); scale 0
 *    takes the file's own: FBX's UnitScaleFactor (centimetres per unit,
 *    x 0.01; 0.01 when absent, as Mixamo's centimetres), 1 for glTF (metres
 *    by its specification).
 *  - Up axis: glTF is Y-up; FBX states its up axis (UpAxis, UpAxisSign),
 *    and a Z-up or X-up file is turned so its up becomes +Y. The facing is
 *    not needed: the builder finds it from the hips.
 * FBX is read with assimp's pivots collapsed into plain node transforms
 * (AI_CONFIG_IMPORT_FBX_PRESERVE_PIVOTS off).
 * What it does not: meshes, skins' bind poses, blend shapes, retargeting.
 * Errors name the file: ANIM_EFORMAT (assimp cannot read it, no animation,
 * names too long or repeated, more than 128 bones, a non-uniform scale above
 * the skeleton), ANIM_ENOMEM.
 */
#ifndef ANIM_ASSIMP_IMPORT_H
#define ANIM_ASSIMP_IMPORT_H

#include "offline/import.h"

/* The importers for import.h's table: .fbx, .gltf, .glb. (Other formats
 * assimp reads would load the same way, but are not offered untested:
 * assimp 5.2.5 cannot read back its own Collada export.) */
extern const anim_importer_t anim_assimp_importers[];
extern const int anim_assimp_importer_count;

/* Appends one clip per animation of the file at path (see the top). */
int anim_assimp_import(anim_clip_list_t *list, const char *path, const anim_import_options_t *options, char *err,
                       int errlen);

#endif
