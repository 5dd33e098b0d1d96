/*
 * hash.h: a fast 64-bit checksum for database files: four independent lanes
 * of multiply-rotate over 8-byte words (memory-bandwidth bound), folded with
 * the length. Not cryptographic: it detects corruption, not tampering.
 */
#ifndef ANIM_HASH_H
#define ANIM_HASH_H

#include <stddef.h>
#include <stdint.h>

uint64_t anim_hash64(const void *data, size_t len, uint64_t seed);

#endif
