/*
 * hash.h: a fast 64-bit checksum for database files: four independent lanes
 * of multiply-rotate over 8-byte words (memory-bandwidth bound), folded with
 * the length. Not cryptographic: it detects corruption, not tampering.
 *
 * Stable: its values are stored in database files (section and header
 * checksums) and make database versions, so changing it means a new file
 * format version. tests/test_dbfile.c pins known answers. Any alignment of
 * data is fine; words are read in host byte order (little-endian on every
 * host dbfile accepts, so values match across them).
 */
#ifndef ANIM_HASH_H
#define ANIM_HASH_H

#include <stddef.h>
#include <stdint.h>

uint64_t anim_hash64(const void *data, size_t len, uint64_t seed);

#endif
