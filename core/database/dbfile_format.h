/*
 * dbfile_format.h: the on-disk layout of a database file, shared by its
 * loader (dbfile.c) and its writer (core/offline/dbfile_write.c); dbfile.h
 * describes it. Private to those two files.
 *
 * What it does not: read or write (dbfile.c, dbfile_write.c).
 */
#ifndef ANIM_DBFILE_FORMAT_H
#define ANIM_DBFILE_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "database/database.h"

#define MAGIC "ANIMDB\r\n"
#define ENDIAN_TAG 0x01020304u
#define HEADER_SIZE 64
#define ALIGN 64
#define MAX_SECTIONS 24

typedef struct {
  char magic[8];
  uint32_t version, endian, nsections, header_size;
  uint64_t file_size, checksum, db_version;
  uint8_t reserved[16];
} header_t;

typedef struct {
  char tag[4];
  uint32_t reserved;
  uint64_t offset, size, checksum;
} section_t;

typedef struct {
  int32_t kind;
  char bone[64];
  float weight, halflife;
  int32_t nsamples;
  int32_t frame_offsets[8];
} term_record_t;

/* Counts and small fields: only 4-byte members, so the layout has no padding. */
typedef struct {
  char name[64];
  float frame_rate;
  int32_t nframes, nbones, nranges, ntags, ncontacts;
  int32_t contact_bones[ANIM_MAX_CONTACTS];
  int32_t rows, cols, nterms;
  int32_t group_start[ANIM_MAX_FEATURE_TERMS], group_dims[ANIM_MAX_FEATURE_TERMS];
  term_record_t terms[ANIM_MAX_FEATURE_TERMS];
} meta_t;

typedef struct {
  char name[64];
  int32_t parent;
  float offset[3];
} bone_record_t;

_Static_assert(sizeof(header_t) == HEADER_SIZE, "header is 64 bytes");
_Static_assert(sizeof(section_t) == 32, "section entries are 32 bytes");
_Static_assert(sizeof(anim_range_t) == 76, "ranges are stored as they are in memory");

static inline int anim_dbfile_host_is_little_endian(void) {
  const uint32_t x = 1;
  return *(const uint8_t *)&x == 1;
}

/* "path: what" into err; returns code. */
static inline int anim_dbfile_fail(char *err, int errlen, int code, const char *path, const char *what) {
  if (err && errlen > 0) snprintf(err, (size_t)errlen, "%s: %s", path, what);
  return code;
}

/* ANIM_EFORMAT with "name: <section> row r column c ..." when a float the
 * runtime computes with is not finite, or a normalization scale is not > 0;
 * 0 otherwise (dbfile.c). db must be valid (anim_database_validate). */
int anim_dbfile_check_finite(const anim_database_t *db, const char *name, char *err, int errlen);

static inline size_t anim_dbfile_align_up(size_t x) { return (x + ALIGN - 1) & ~(size_t)(ALIGN - 1); }

#endif
