/*
 * dbfile.h: loading the binary database file (the runtime side; the offline
 * side writes it: core/offline/dbfile_write.h).
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
 * The loader checks magic, version, sizes against the file, section bounds,
 * alignment and overlaps, every checksum, then the database's own validity
 * rules, then that every float the runtime computes with is finite (poses,
 * features, their offsets and scales, scales > 0, skeleton offsets, frame
 * rate: a well-sealed file may still carry a NaN from its builder), and
 * points the big arrays straight into the file's bytes (no per-array copy).
 * Checksums use anim_hash64 (hash.h).
 *
 * Where the bytes live, and why (a file changed under a running server):
 *  - A file up to copy_max_bytes (1 GiB by default, the environment's
 *    ANIM_DBFILE_COPY_MAX when set) is read into private
 *    memory. Nothing done to the file afterwards (truncated in place,
 *    rewritten, deleted) can reach the loaded database: the checksums
 *    verified at load stay true for its whole life. Reading costs no extra
 *    I/O (every byte is read for its checksum anyway); the price is that the
 *    bytes count as the process's memory rather than as page cache.
 *  - A larger file is mapped read-only (MAP_PRIVATE), so gigabytes of data
 *    stay evictable page cache. A mapped file truncated in place would make
 *    the next read of a vanished page raise SIGBUS, and one rewritten in place
 *    would change the arrays under their readers; so the loader keeps the
 *    file open, and anim_database_check compares its size and modification
 *    time with those it had when loaded (one fstat): callers check before
 *    each use of the database (the server does before every request on it)
 *    and answer an error instead of reading. Replacing the file by rename (as
 *    anim_dbfile_write does) never disturbs a loaded database: the mapping
 *    keeps the old file alive. What the check cannot catch is a truncation
 *    during the few microseconds of one request after its check.
 * Either way anim_database_free releases what the loader took (its release
 * hook frees the copy, or unmaps and closes the file).
 */
#ifndef ANIM_DBFILE_H
#define ANIM_DBFILE_H

#include <stddef.h>
#include <stdint.h>
#include "database/database.h"

#define ANIM_DBFILE_VERSION 1
#define ANIM_DBFILE_COPY_MAX_DEFAULT ((size_t)1 << 30) /* 1 GiB */

/* How anim_dbfile_load_with holds a file. */
typedef struct {
  size_t copy_max_bytes; /* files up to this size are read into memory, larger ones mapped; 0: always map */
} anim_dbfile_options_t;

/* copy_max_bytes = ANIM_DBFILE_COPY_MAX_DEFAULT, or the environment's
 * ANIM_DBFILE_COPY_MAX (a byte count) when set: the operator's knob for a
 * server that loads through anim_dbfile_load (and the tests' way to make
 * the real server map its files). */
void anim_dbfile_options_default(anim_dbfile_options_t *options);

/* What db->storage points to for a database loaded from a file. */
typedef struct {
  const uint8_t *bytes; /* the file: a private copy or a read-only mapping */
  size_t size;
  int mapped;           /* 1: mapped (see the top), 0: copied into memory */
} anim_dbfile_storage_t;

/* Loads path into out_db (free with anim_database_free). options may be
 * NULL (defaults). 0, or ANIM_ENOTFOUND, ANIM_EIO, ANIM_EFORMAT,
 * ANIM_EVERSION, ANIM_ETRUNCATED, ANIM_ECHECKSUM, ANIM_ENOMEM with a message
 * naming the file (ANIM_EFORMAT for a value that is not finite names the
 * section and the first bad row and column, or frame and bone). */
int anim_dbfile_load_with(anim_database_t *out_db, const char *path, const anim_dbfile_options_t *options, char *err,
                          int errlen);
int anim_dbfile_load(anim_database_t *out_db, const char *path, char *err, int errlen);

/* The same checks over a buffer (for tests and fuzzing). bytes must be 8-byte
 * aligned (ANIM_EINVAL otherwise; malloc's are). The database points into
 * bytes, which must outlive it; anim_database_free does not free them. */
int anim_dbfile_parse(anim_database_t *out_db, const void *bytes, size_t len, const char *name, char *err,
                      int errlen);

#endif
