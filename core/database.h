/*
 * database.h: a motion database, built once from clips and read-only after.
 *
 * Per frame and per bone: local and global positions, rotations, velocities
 * and angular velocities at one rate (60 Hz default); ranges (one per clip)
 * with names and tags; foot contacts; the normalized matching features
 * (feature.h). All sessions read it without locks; a reload builds a new
 * one aside and swaps the pointer.
 *
 * Arrays are frame-major: value(frame, bone) = array[frame * nbones + bone].
 * The root (bone 0) carries the character's world motion ("simulation bone"
 * style: projected on the ground, facing its direction of travel) so that
 * character-space features are relative to it.
 *
 * Validity rules (anim_database_validate):
 *  1. the skeleton is valid (clip.h) and nframes >= 1, frame_rate > 0;
 *  2. ranges are sorted, disjoint, non-empty and cover [0, nframes);
 *  3. every range's tags are < ntags (tag_mask bits);
 *  4. contact bones are valid bone indices;
 *  5. features (when present) have rows == nframes.
 */
#ifndef ANIM_DATABASE_H
#define ANIM_DATABASE_H

#include <stdint.h>
#include "clip.h"
#include "feature.h"

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

  void *mapping; size_t mapping_size;   /* set when loaded by mmap (dbfile.c) */
} anim_database_t;

/* How clips become a database. */
typedef struct {
  float frame_rate;          /* target rate, Hz; 60 by default */
  int mirror;                /* also add left/right mirrored copies */
  const char *mirror_left;   /* name pattern for left bones, e.g. "Left" or "_L" */
  const char *mirror_right;  /* e.g. "Right" or "_R" */
  float contact_height;      /* metres: a foot lower than this ... */
  float contact_speed;       /* ... and slower than this (m/s) is in contact */
  const char *contact_bone_names[ANIM_MAX_CONTACTS]; /* NULL-terminated; defaults found by name */
} anim_build_options_t;

void anim_build_options_default(anim_build_options_t *options);

/* Builds out_db from nclips clips sharing one skeleton (resampled, optionally
 * mirrored, FK, velocities, contacts, one range per clip named after it).
 * Does not build features (anim_features_build). Caller frees out_db with
 * anim_database_free. Errors: ANIM_EINVAL (no clips, skeleton mismatch),
 * ANIM_ENOMEM; message in err. */
int anim_database_build(anim_database_t *out_db, const char *name, const anim_clip_t *clips,
                        int nclips, const anim_build_options_t *options, char *err, int errlen);

/* Adds tag to range r (creating the tag name if new). ANIM_ELIMIT past ANIM_MAX_TAGS. */
int anim_database_tag_range(anim_database_t *db, int r, const char *tag);
/* Bit of tag, or -1. */
int anim_database_find_tag(const anim_database_t *db, const char *tag);

void anim_database_free(anim_database_t *db);
int anim_database_validate(const anim_database_t *db, char *err, int errlen);
/* Recomputes db->version from the content (skeleton, poses, ranges, features). */
void anim_database_update_version(anim_database_t *db);

/* Unmaps a database loaded by anim_dbfile_load (dbfile.c); anim_database_free
 * calls it when db->mapping is set. */
void anim_dbfile_release(anim_database_t *db);

/* Range holding frame, or -1. */
int anim_database_range_of(const anim_database_t *db, int frame);

#endif
