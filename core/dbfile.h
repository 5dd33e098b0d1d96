/*
 * dbfile.h: the binary database file: write atomically, load by mmap.
 *
 * Layout (all little-endian; big-endian hosts are refused with ANIM_EVERSION):
 *   header, 64 bytes: magic "ANIMDB\r\n", format version (u32), endianness
 *     tag 0x01020304 (u32), section count (u32), header size (u32), file size
 *     (u64), checksum of everything after the header (u64), database version
 *     (u64);
 *   section table: per section tag (4 chars), reserved (u32), offset (u64),
 *     size (u64), checksum of the section's bytes (u64);
 *   sections, each 64-byte aligned: META (counts, name, rate, schema), SKEL,
 *     RANG, TAGS, the eight pose arrays (LPOS LVEL LROT LANG GPOS GVEL GROT
 *     GANG), CONT (contacts), FEAT, FOFF, FSCL (features, offset, scale).
 *   Padding (after the table, between sections, at the end) is zero; the file
 *   ends at the first multiple of 64 after its last section.
 * Integrity: header fields are checked by value, the section table by the
 * header checksum (seeded with the database version), each section by its own
 * checksum, padding by being zero, so every byte of the file is covered.
 * The loader maps the file read-only and points the big arrays straight into
 * the mapping (no copy); it checks magic, version, sizes against the file,
 * section bounds, alignment and overlaps, every checksum, then the database's
 * own validity rules. Checksums use anim_hash64 (hash.h).
 *
 * A loaded database has db->mapping set; anim_database_free then calls
 * anim_dbfile_release (declared in database.h), which unmaps the file and
 * frees nothing else: every array of a loaded database lives in the mapping.
 */
#ifndef ANIM_DBFILE_H
#define ANIM_DBFILE_H

#include <stddef.h>
#include "database.h"

#define ANIM_DBFILE_VERSION 1

/* Writes db to path atomically (temporary file in the same directory, fsync,
 * rename, fsync of the directory): a crash leaves the old file or the new
 * one, never a half file. 0, ANIM_EIO or ANIM_EINVAL with a message. */
int anim_dbfile_write(const anim_database_t *db, const char *path, char *err, int errlen);

/* Loads path into out_db (arrays in a read-only mapping; free with
 * anim_database_free). 0, or ANIM_EIO, ANIM_EFORMAT, ANIM_EVERSION,
 * ANIM_ETRUNCATED, ANIM_ECHECKSUM with a message naming the file. */
int anim_dbfile_load(anim_database_t *out_db, const char *path, char *err, int errlen);

/* The same checks over a buffer (for tests and fuzzing). bytes must be 8-byte
 * aligned (ANIM_EINVAL otherwise; malloc's are). The database points into
 * bytes, which must outlive it; anim_database_free does not free them. */
int anim_dbfile_parse(anim_database_t *out_db, const void *bytes, size_t len, const char *name, char *err,
                      int errlen);

#endif
