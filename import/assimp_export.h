/*
 * assimp_export.h: a clip (a recording, or any clip) written as glTF 2.0
 * through the Open Asset Import Library's exporter (assimp, Debian
 * libassimp-dev, already animdb's importer), for `animctl record`.
 *
 * What the file holds (glTF is Y-up and in metres, as clips are: no
 * conversion):
 *  - One node per bone, named as the clip's bones, under a "Scene" node,
 *    parented as the clip's; each node's transform is the rest pose: the
 *    skeleton's offset, no rotation.
 *  - A skin over every bone (inverse bind matrices from that rest pose)
 *    with a small mesh "Skin": one triangle per bone at its rest position,
 *    weighted to it alone. glTF importers build an armature from skins only
 *    (Blender turns an unskinned node hierarchy into empties), so the mesh
 *    is there to carry the skin.
 *  - One animation "recording": per bone a translation and a rotation
 *    channel, a key per frame at frame * frame_time seconds (linear).
 * Formats: "glb2" (binary .glb) or "gltf2" (.gltf with a .bin beside it).
 * Valgrind reports uninitialised bytes written by assimp 5.2's glb writer
 * (padding); `assimp export X.bvh X.glb` shows the same, without this code.
 * Errors: ANIM_EINVAL (a clip that fails anim_clip_validate, an unknown
 * format: err says which), ANIM_EIO (assimp could not write: its message),
 * ANIM_ENOMEM.
 */
#ifndef ANIM_ASSIMP_EXPORT_H
#define ANIM_ASSIMP_EXPORT_H

#include "pose/clip.h"

/* Writes clip to path in format ("glb2" or "gltf2"); see the top. */
int anim_assimp_export(const anim_clip_t *clip, const char *path, const char *format, char *err, int errlen);

#endif
