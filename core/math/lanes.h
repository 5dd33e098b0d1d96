/*
 * lanes.h: ANIM_LANES floats at once, one per lane, with GCC's vector
 * extensions (SSE on x86-64, two registers a vector), for per-bone work that
 * is the same for every bone. Code written on lanes does the scalar code's
 * operations in the same order, so that both give the same bits (this
 * build's target has no fused multiply-add to change them) and a tail of
 * bones can go the scalar way.
 *
 * Why eight lanes where SSE holds four: the per-bone work is chains of
 * dependent multiply-adds (series, products of rotations), and two
 * independent chains fill each other's waits (core/motion/spring.c measures it).
 *
 * What it does not: choose instructions at run time (core/search/leaf_codes.c does,
 * for AVX2), or do what the extensions lack (a square root: per lane).
 */
#ifndef ANIM_LANES_H
#define ANIM_LANES_H

#include <stdint.h>

#define ANIM_LANES 8
typedef float anim_lanes_f __attribute__((vector_size(4 * ANIM_LANES)));
typedef int32_t anim_lanes_i __attribute__((vector_size(4 * ANIM_LANES))); /* comparisons: -1 true, 0 false */
#define ANIM_LANES_SPLAT(x) ((anim_lanes_f){0} + (x))

#endif
