/*
 * build.h: the offline database builder: clips in, a database (database.h)
 * out, built once and read-only after.
 *
 * What it does, per clip (each clip is one range), in this order:
 *  - Skeletons: every clip must have the first clip's bones, matched by name
 *    (skeleton_match.h); joints listed in another order are reordered to the
 *    first clip's. Other skeletons are refused with the first difference.
 *  - Roles: the hips, thighs, feet and toes are found by name
 *    (bone_roles.h), or taken from options->bones.
 *  - Resampling: frame f of the database is source time f / frame_rate, for
 *    f = 0 .. floor(duration * frame_rate); positions lerped, rotations
 *    slerped (shortest way) between the two source frames around it.
 *  - Mirroring (options->mirror): after each clip its mirror image
 *    (mirror.h), range "<clip>_mirror" tagged "mirror".
 *  - The simulation bone (simulation_bone.h): a new bone 0 named
 *    "Simulation" above the clip's skeleton (nbones = source bones + 1,
 *    source bone b is bone b + 1), the hips' smoothed path on the ground and
 *    the hip line's smoothed facing.
 *  - Velocities: local velocities and angular velocities are central
 *    differences of local positions and rotations over frames f-1, f+1
 *    inside the range (one-sided at its first and last frame; a one-frame
 *    range has zero velocity); angular velocity is that of the local
 *    rotation, in the parent's axes, rad/s. Global positions, rotations,
 *    velocities and angular velocities are forward kinematics of those
 *    (kinematics.h: v = v_p + w_p x (R_p l) + R_p lv), so they agree with
 *    differences of global positions up to the path's curvature over a frame.
 *  - Contacts (contact.h) for options->contact_bone_names, else the toes,
 *    else the feet (bone_roles.h; defaults 0.06 m, 0.35 m/s).
 *  - version: anim_hash64 (hash.h) chained over the content: skeleton (names
 *    up to their terminators, parents, offsets), frame rate, local positions
 *    and rotations, ranges (bounds, tag masks, names), tag names, contact
 *    bones and contacts, features (values, offset, scale). Derived arrays
 *    (global transforms, velocities) are functions of those and not hashed.
 *    Never 0. The functions that change a built database (tags, features)
 *    update it (anim_features_build does; after tagging, call
 *    anim_database_update_version).
 * What it does not: features (feature_build.h), files (import.h reads clips,
 * dbfile_write.h writes databases), and anything at run time.
 *
 * A built database owns separate allocations and sets its release hook to
 * free them: anim_database_free releases it like any other.
 */
#ifndef ANIM_BUILD_H
#define ANIM_BUILD_H

#include "offline/bone_roles.h"
#include "database/database.h"

/* Told about what builds but deserves a look (a feature group that does not
 * vary, joints reordered, no contact bones): one line, no newline. */
typedef void (*anim_build_warn_cb)(void *ctx, const char *message);

/* Formats a warning and hands it to warn (nothing when warn is NULL). */
void anim_build_warn(anim_build_warn_cb warn, void *ctx, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* How clips become a database. */
typedef struct {
  float frame_rate;          /* target rate, Hz; 60 by default */
  int mirror;                /* also add left/right mirrored copies */
  const char *mirror_left;   /* name pattern for left bones, e.g. "Left" or "_L" */
  const char *mirror_right;  /* e.g. "Right" or "_R" */
  float contact_height;      /* metres: a foot lower than this ... */
  float contact_speed;       /* ... and slower than this (m/s) is in contact */
  const char *contact_bone_names[ANIM_MAX_CONTACTS]; /* NULL-terminated; default: the toes (or feet) by role */
  anim_bone_names_t bones;   /* explicit bones per role; the others are found by name */
  anim_build_warn_cb warn;   /* may be NULL */
  void *warn_ctx;
} anim_build_options_t;

void anim_build_options_default(anim_build_options_t *options);

/* Builds out_db from nclips clips sharing one skeleton (the same bone names
 * and parents in any order; at most 127 bones, the simulation bone makes
 * 128): see the top of this file. Does not build features
 * (anim_features_build). Caller frees out_db with anim_database_free.
 * Errors, with a message in err naming the clip: ANIM_EINVAL (no clips, bad
 * options, skeletons differ: the first difference, too many bones),
 * ANIM_EFORMAT (a clip fails anim_clip_validate), ANIM_ENOTFOUND (a contact
 * bone or role bone name not in the skeleton), ANIM_ENOMEM. */
int anim_database_build(anim_database_t *out_db, const char *name, const anim_clip_t *clips, int nclips,
                        const anim_build_options_t *options, char *err, int errlen);

/* 1 when db was made by anim_database_build (its arrays are its own and the
 * functions below may change them); 0 for a database loaded from a file,
 * which is read-only. */
int anim_database_is_built(const anim_database_t *db);

/* Adds tag to range r of a built database (creating the tag name if new).
 * ANIM_EINVAL (bad range or tag, or db not built here), ANIM_ELIMIT past
 * ANIM_MAX_TAGS. Does not update the version. */
int anim_database_tag_range(anim_database_t *db, int r, const char *tag);

/* Recomputes db->version from the content (skeleton, poses, ranges, tags,
 * contacts, features). */
void anim_database_update_version(anim_database_t *db);

#endif
