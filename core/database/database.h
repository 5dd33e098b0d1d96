/*
 * database.h: a motion database as the runtime reads it: immutable arrays of
 * poses, ranges, contacts and normalized matching features.
 *
 * What it does: the type, its validity rules, lookups (the range of a frame,
 * the bit of a tag), a check that its storage is still sound, and release
 * through the hook set by whoever made it. What it does not: build, change,
 * load or write a database. The offline builder (core/offline/build.h:
 * resampling, mirroring, the simulation bone, contacts, features) makes one
 * from clips; dbfile.h loads one from a file. Nothing changes a database once
 * it is made: every session reads it without locks, and a reload builds a
 * new one aside and swaps the pointer.
 *
 * Per frame and per bone: local and global positions, rotations, velocities
 * and angular velocities at one rate (60 Hz by default); ranges (one per
 * source clip) with names and tags; foot contacts; the normalized matching
 * features (feature.h). Bone 0 is the simulation bone (the character's
 * ground-projected root, core/offline/build.h says how it is made).
 *
 * Arrays are frame-major: value(frame, bone) = array[frame * nbones + bone].
 *
 * Ownership: the arrays belong to whoever made the database, which sets
 * `release` (the builder: free its allocations; the file loader: free its
 * copy of the file or unmap it). anim_database_free calls that hook, so the
 * runtime never needs to know where a database came from.
 *
 * Validity rules (anim_database_validate):
 *  1. the skeleton is valid (clip.h) and nframes >= 1, frame_rate > 0;
 *  2. ranges are sorted, disjoint, non-empty and cover [0, nframes); their
 *     names are NUL-terminated within ANIM_NAME_MAX;
 *  3. every range's tags are < ntags (tag_mask bits);
 *  4. contact bones are valid bone indices;
 *  5. features (when present) have rows == nframes;
 *  6. features (when present) follow their schema: the schema is valid for
 *     the skeleton (anim_feature_schema_validate), and term t's group starts
 *     where term t-1's ends and is exactly anim_feature_term_dims wide, the
 *     groups making up the cols (readers index a term's columns from its
 *     group_start by the term's width).
 */
#ifndef ANIM_DATABASE_H
#define ANIM_DATABASE_H

#include <stddef.h>
#include <stdint.h>
#include "pose/clip.h"
#include "database/feature.h"
#include "pose/pose.h"

#define ANIM_MAX_TAGS 32
#define ANIM_MAX_CONTACTS 4

typedef struct {
  int start, stop;   /* frames [start, stop) */
  uint32_t tag_mask; /* bit t set: has tag tag_names[t] */
  char name[ANIM_NAME_MAX];
} anim_range_t;

typedef struct anim_database {
  char name[ANIM_NAME_MAX];
  anim_skeleton_t skeleton;
  float frame_rate; /* frames per second */
  int nframes;
  int nbones;

  vec3 *local_positions, *local_velocities;
  quat *local_rotations;
  vec3 *local_angular_velocities;
  vec3 *global_positions, *global_velocities;
  quat *global_rotations;
  vec3 *global_angular_velocities;

  int ncontacts;                        /* contact bones (feet) */
  int contact_bones[ANIM_MAX_CONTACTS];
  uint8_t *contacts;                    /* [frame * ncontacts + c], 0/1 */

  int nranges;
  anim_range_t *ranges;
  int ntags;
  char tag_names[ANIM_MAX_TAGS][ANIM_NAME_MAX];

  anim_features_t features;             /* normalized matching features */
  uint64_t version;                     /* content hash */

  /* Set by whoever made the database (see "Ownership" above); readers never
   * touch them. release frees or unmaps the arrays (NULL: nothing to free);
   * check, when set, says whether the storage is still sound (a mapped file
   * that was truncated is not); storage is the block the arrays live in (a
   * loaded file's bytes), storage_size its length, NULL/0 when the arrays are
   * separate allocations. */
  void (*release)(struct anim_database *db);
  int (*check)(const struct anim_database *db, char *err, int errlen);
  void *storage;
  size_t storage_size;
} anim_database_t;

/* Releases db's arrays through its release hook and zeroes *db. NULL or a
 * zeroed database is fine. */
void anim_database_free(anim_database_t *db);

/* 0 when the rules above hold; else ANIM_EFORMAT with a message in err. */
int anim_database_validate(const anim_database_t *db, char *err, int errlen);

/* 0 while db's storage can be read: always for a database in memory; for one
 * mapped from a file, while the file keeps the size and modification time it
 * had when loaded (dbfile.h). Else ANIM_EIO with a message: callers must not
 * read the arrays and should answer an error (a reload fixes it). One fstat
 * for a mapped database, nothing otherwise. */
int anim_database_check(const anim_database_t *db, char *err, int errlen);

/* Bit of tag, or -1. */
int anim_database_find_tag(const anim_database_t *db, const char *tag);

/* Frame frame's contact flags as bits: bit s set when contact bone s is
 * in contact (at most ANIM_MAX_CONTACTS bits). */
uint32_t anim_database_contacts(const anim_database_t *db, int frame);

/* Range holding frame, or -1. */
int anim_database_range_of(const anim_database_t *db, int frame);
/* The end (exclusive) of the range holding frame; nframes outside any. */
int anim_database_range_stop(const anim_database_t *db, int frame);
/* Frame frame's local pose (bone 0 in its clip's animation space): views into the database. */
anim_pose_view_t anim_database_frame_pose(const anim_database_t *db, int frame);

#endif
