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
 *
 * How anim_database_build makes one, per clip (each clip is one range):
 *  - Resampling: frame f of the database is source time f / frame_rate,
 *    for f = 0 .. floor(duration * frame_rate); positions lerped, rotations
 *    slerped (shortest way) between the two source frames around it.
 *  - Mirroring (options->mirror): after each clip its mirror image, range
 *    "<clip>_mirror" tagged "mirror". Left and right bones swap by name:
 *    mirror_left/mirror_right if given, then Left/Right, left/right, _L/_R,
 *    _l/_r, .L/.R anywhere in the name, then a one-letter prefix (LHipJoint,
 *    lHip, lhand); a bone without a partner of that name is its own. Every
 *    local transform is reflected in the X = 0 plane: position (x, y, z) ->
 *    (-x, y, z), rotation (w, x, y, z) -> (w, x, -y, -z). Conjugating every
 *    local transform by the reflection reflects every global one, so the
 *    mirrored poses are exact whatever the bones' rest axes.
 *  - The simulation bone: a new bone 0 named "Simulation" is put above the
 *    clip's skeleton (so nbones = source bones + 1, source bone b is bone
 *    b + 1). Its position is the hips (bone "Hips", "Pelvis", ... found by
 *    name, else the source root) projected on the ground (y = 0); its
 *    rotation is a yaw only, facing "forward" = (left hip - right hip) x up
 *    (the hip joints found by name: LeftUpLeg, UpperLeg_L, LeftHip, lHip...;
 *    without them the hips' +Z). Path and facing are each smoothed over the
 *    clip's frames with a Gaussian (sigma 6 and 10 frames at the database
 *    rate) whose window is extended past the clip's ends by point reflection,
 *    so straight or steadily turning motion is not bent at the ends.
 *  - Source bones above the hips (a ground-level root such as Bandai's
 *    joint_Root, which carries part of the travel in some clips) are folded
 *    into the simulation bone: their local transform becomes the identity.
 *    Bones hanging from the simulation bone or a folded one (the hips, or
 *    the source root when it is the hips) get their source global transform
 *    expressed relative to the simulation bone; all other bones keep their
 *    local transforms. Global poses are exactly the source's (resampled).
 *  - Velocities: local velocities and angular velocities are central
 *    differences of local positions and rotations over frames f-1, f+1
 *    inside the range (one-sided at its first and last frame; a one-frame
 *    range has zero velocity); angular velocity is that of the local
 *    rotation, in the parent's axes, rad/s. Global positions, rotations,
 *    velocities and angular velocities are forward kinematics of those
 *    (kinematics.h: v = v_p + w_p x (R_p l) + R_p lv), so they agree with
 *    differences of global positions up to the path's curvature over a frame.
 *  - Contacts: for each contact bone (options->contact_bone_names, else the
 *    left and right toe, falling back to the foot/ankle: LeftToe, LeftToeBase,
 *    Toes_L, lToeJoint, LeftFoot, Foot_L, LeftAnkle, lAnkle...), a frame is in
 *    contact when the bone is within contact_height of its lowest height in
 *    the range and its horizontal speed is below contact_speed (defaults
 *    0.06 m, 0.35 m/s); then single frames that differ from both neighbours
 *    are set to their neighbours' value.
 *  - version: anim_hash64 (hash.h) chained over the content: skeleton (names
 *    up to their terminators, parents, offsets), frame rate, local positions
 *    and rotations, ranges (bounds, tag masks, names), tag names, contact
 *    bones and contacts, features (values, offset, scale). Derived arrays
 *    (global transforms, velocities) are functions of those and not hashed.
 *    Never 0. Callers that change a built database (tags, features) call
 *    anim_database_update_version afterwards (anim_features_build does).
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

/* Builds out_db from nclips clips sharing one skeleton (same bone names and
 * parents; at most 127 bones, the simulation bone makes 128): resampled,
 * optionally mirrored, simulation bone, FK, velocities, contacts, one range
 * per clip named after it (see the top of this file). Does not build
 * features (anim_features_build). Caller frees out_db with
 * anim_database_free. Errors, with a message in err: ANIM_EINVAL (no clips,
 * bad options, skeletons differ, too many bones), ANIM_EFORMAT (a clip fails
 * anim_clip_validate), ANIM_ENOTFOUND (a contact bone name not in the
 * skeleton), ANIM_ENOMEM. */
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
