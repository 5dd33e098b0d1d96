/*
 * quantize.h: compact pose encodings for streams.
 *
 * Rotations: "smallest three": drop the largest-magnitude component of the
 * unit quaternion (made positive, q and -q being one rotation), store its
 * index in 2 bits and the other three, which lie in [-1/sqrt 2, 1/sqrt 2],
 * in 16 bits each: 50 bits in a uint64. Error: each stored component within
 * (1/sqrt 2) / 32767 / 2 = 1.08e-5, so the decoded rotation is within
 * ANIM_QUAT_PACK_MAX_ANGLE radians of the original (tested on random and
 * edge-case rotations).
 * Positions: fixed point. Local bone positions in int16 steps of 1/8192 m
 * (range +-4 m, error <= 6.2e-5 m); root (world) positions in int32 steps of
 * 1e-4 m (range +-214.7 km, error <= 5e-5 m). Values beyond the range clamp:
 * the world (world.h) is bounded at a twentieth of it, so nothing the server
 * holds reaches the clamp (asserted in quantize.c).
 *
 * What it does not: frame or send the records (the server's stream module does).
 */
#ifndef ANIM_QUANTIZE_H
#define ANIM_QUANTIZE_H

#include <stddef.h>
#include <stdint.h>
#include "math/anim_math.h"

#define ANIM_QUAT_PACK_MAX_ANGLE 1e-4f   /* radians */
#define ANIM_LOCAL_POSITION_STEP (1.0f / 8192.0f)
#define ANIM_ROOT_POSITION_STEP 1e-4f
#define ANIM_ROOT_STEPS_PER_METRE 10000 /* 1 / ANIM_ROOT_POSITION_STEP, for integer checks */

uint64_t anim_quat_pack(quat q);
quat anim_quat_unpack(uint64_t packed);

int16_t anim_local_position_pack(float metres);
float anim_local_position_unpack(int16_t packed);
int32_t anim_root_position_pack(float metres);
float anim_root_position_unpack(int32_t packed);

/* A whole pose (bone 0 the root in world space, the others local), as the
 * wire's ENCODING_QUANTIZED lays it out, little-endian: the root position as
 * 3 int32; the rotation of every bone in 7 bytes (its 50-bit code); unless
 * rotations_only, the local positions of bones 1..n-1 as 3 int16 each. */
size_t anim_pose_quantized_size(int nbones, int rotations_only);
/* out has anim_pose_quantized_size bytes; positions and rotations nbones each
 * (with rotations_only only positions[0] is read). */
void anim_pose_quantize(uint8_t *out, const vec3 *positions, const quat *rotations, int nbones, int rotations_only);
/* Decodes into nbones rotations and nbones positions (1 with rotations_only).
 * 0, or ANIM_EFORMAT when len is not the size of such a pose. */
int anim_pose_dequantize(const uint8_t *in, size_t len, int nbones, int rotations_only, vec3 *out_positions,
                         quat *out_rotations);

#endif
