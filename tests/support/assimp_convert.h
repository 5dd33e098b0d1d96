/*
 * assimp_convert.h: test set-up that turns a BVH file into FBX or glTF with
 * assimp's own importer and exporter (the real tool, not our code), for the
 * round-trip tests of import/assimp_import.c.
 *
 * Two faults of the exporter of assimp 5.2.5 (Debian bookworm) are worked
 * around so the files carry the BVH's motion: the FBX exporter writes the
 * scene's root node as the FBX root, dropping its transform and animation
 * (the BVH's root joint would be lost), so the root joint is put under a
 * new static node "Scene" first; and it writes key times in ticks as if
 * they were seconds (assimp issue #3545, fixed upstream in 2025), so for
 * FBX the key times are given in seconds with 1 tick per second (it still
 * cuts the take's length to whole seconds, issue #6105: up to a second of
 * frames at the end is lost, which the tests allow for). Binary FBX
 * from that exporter cannot be read back by the same assimp (assimp issue
 * #4686), so FBX is written as ASCII FBX ("fbxa"); the reader's FBX code
 * after the tokenizer is the same for both.
 */
#ifndef ANIM_TEST_ASSIMP_CONVERT_H
#define ANIM_TEST_ASSIMP_CONVERT_H

#ifdef __cplusplus
extern "C" {
#endif

/* Reads the BVH at bvh_path with assimp and writes it to out_path in
 * format ("fbxa", "gltf2" or "glb2", assimp's exporter ids); with
 * drop_animations, the skeleton alone (no animation). 0, or -1 with
 * assimp's message in err. */
int anim_test_assimp_convert(const char *bvh_path, const char *out_path, const char *format, int drop_animations,
                             char *err, int errlen);

#ifdef __cplusplus
}
#endif

#endif
