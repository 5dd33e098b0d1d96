/*
 * build.c: the builder's main line (see build.h): check the clips and match
 * their skeletons, find the bones' roles, resample (reordering joints to the
 * first clip's), mirror, write every frame under the simulation bone, then
 * forward kinematics, finite-difference velocities and contacts. Also the
 * built database's ownership (its release hook), tags and content hash.
 * What it does not: the steps' details (mirror.c, simulation_bone.c,
 * contact.c, bone_roles.c, skeleton_match.c) or features (feature_build.c).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "offline/build.h"
#include "offline/contact.h"
#include "base/hash.h"
#include "pose/kinematics.h"
#include "offline/mirror.h"
#include "offline/simulation_bone.h"
#include "offline/skeleton_match.h"

#define SIMULATION_BONE "Simulation"

void anim_build_options_default(anim_build_options_t *o) {
  memset(o, 0, sizeof *o);
  o->frame_rate = 60.0f;
  o->contact_height = 0.06f;
  o->contact_speed = 0.35f;
}

static int fail(char *err, int errlen, int code, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int fail(char *err, int errlen, int code, const char *fmt, ...) {
  if (err && errlen > 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, (size_t)errlen, fmt, ap);
    va_end(ap);
  }
  return code;
}

void anim_build_warn(anim_build_warn_cb warn, void *ctx, const char *fmt, ...) {
  if (!warn) return;
  char message[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(message, sizeof message, fmt, ap);
  va_end(ap);
  warn(ctx, message);
}

/* ---- ownership ------------------------------------------------------------------------ */

/* The release hook of a built database: every array is its own allocation. */
static void release_built(anim_database_t *db) {
  free(db->local_positions), free(db->local_velocities), free(db->local_rotations);
  free(db->local_angular_velocities), free(db->global_positions), free(db->global_velocities);
  free(db->global_rotations), free(db->global_angular_velocities), free(db->contacts), free(db->ranges);
  free(db->features.values), free(db->features.offset), free(db->features.scale);
}

int anim_database_is_built(const anim_database_t *db) { return db && db->release == release_built; }

/* ---- inputs ------------------------------------------------------------------------- */

/* Options and clips fit to build from: 0, or the error with its message.
 * maps[c * ANIM_MAX_BONES + b]: clip c's bone playing the first clip's bone b. */
static int check_inputs(const char *name, const anim_clip_t *clips, int nclips, const anim_build_options_t *o,
                        int *maps, char *err, int errlen) {
  if (!clips || nclips < 1) return fail(err, errlen, ANIM_EINVAL, "%s: no clips", name);
  if (!(o->frame_rate > 0.0f) || o->frame_rate > 1000.0f)
    return fail(err, errlen, ANIM_EINVAL, "%s: frame rate must be in (0, 1000] Hz", name);
  if (!(o->contact_height >= 0.0f) || !(o->contact_speed >= 0.0f) || !isfinite(o->contact_height) ||
      !isfinite(o->contact_speed))
    return fail(err, errlen, ANIM_EINVAL, "%s: contact height and speed must be finite and >= 0", name);
  if (clips[0].skeleton.nbones + 1 > ANIM_MAX_BONES)
    return fail(err, errlen, ANIM_EINVAL, "%s: no room for the simulation bone (128 bones at most)", clips[0].name);
  for (int c = 0; c < nclips; c++) {
    int rc = anim_clip_validate(&clips[c], err, errlen);
    if (rc) return rc;
  }
  const anim_skeleton_t *ref = &clips[0].skeleton;
  for (int c = 0; c < nclips; c++) {
    char why[256];
    int *map = maps + (size_t)c * ANIM_MAX_BONES, reordered = 0;
    if (anim_skeleton_match(ref, &clips[c].skeleton, map, why, sizeof why))
      return fail(err, errlen, ANIM_EINVAL, "%s: skeleton differs from the first clip's (%s): %s", clips[c].name,
                  clips[0].name, why);
    for (int b = 0; b < ref->nbones; b++) reordered |= map[b] != b;
    if (reordered)
      anim_build_warn(o->warn, o->warn_ctx,
                      "%s: joints listed in another order than in the first clip (%s); matched by name", clips[c].name,
                      clips[0].name);
  }
  return 0;
}

/* The database skeleton: the simulation bone, then the clips' bones shifted by one. */
static void make_skeleton(anim_database_t *db, const anim_skeleton_t *src) {
  anim_skeleton_t *s = &db->skeleton;
  s->nbones = src->nbones + 1;
  snprintf(s->names[0], ANIM_NAME_MAX, "%s", SIMULATION_BONE);
  s->parents[0] = -1;
  for (int b = 0; b < src->nbones; b++) {
    snprintf(s->names[b + 1], ANIM_NAME_MAX, "%s", src->names[b]);
    s->parents[b + 1] = src->parents[b] + 1;
    s->offsets[b + 1] = src->offsets[b];
  }
  db->nbones = s->nbones;
}

/* Contact bones: the named ones, else the toes, else the feet. roles are
 * source bones (database bone = source bone + 1). */
static int choose_contact_bones(anim_database_t *db, const int *roles, const anim_build_options_t *o, char *err,
                                int errlen) {
  db->ncontacts = 0;
  if (o->contact_bone_names[0]) {
    for (int i = 0; i < ANIM_MAX_CONTACTS && o->contact_bone_names[i]; i++) {
      int b = anim_skeleton_find(&db->skeleton, o->contact_bone_names[i]);
      if (b < 0)
        return fail(err, errlen, ANIM_ENOTFOUND, "%s: contact bone \"%s\" is not in the skeleton", db->name,
                    o->contact_bone_names[i]);
      db->contact_bones[db->ncontacts++] = b;
    }
    return 0;
  }
  static const anim_bone_role_t toes[2] = {ANIM_BONE_TOE_LEFT, ANIM_BONE_TOE_RIGHT};
  static const anim_bone_role_t feet[2] = {ANIM_BONE_FOOT_LEFT, ANIM_BONE_FOOT_RIGHT};
  for (int side = 0; side < 2; side++) {
    int b = roles[toes[side]] >= 0 ? roles[toes[side]] : roles[feet[side]];
    if (b >= 0) db->contact_bones[db->ncontacts++] = b + 1;
    else
      anim_build_warn(o->warn, o->warn_ctx,
                      "%s: no %s toe or foot found by name: no contacts for that side (name it with --bone %s=NAME)",
                      db->name, side ? "right" : "left", anim_bone_role_name(toes[side]));
  }
  return 0;
}

/* ---- frames -------------------------------------------------------------------------- */

/* Resamples clip to rate into out (allocated), its bones in ref's order
 * (out bone b = clip bone map[b]). */
static int resample(anim_clip_t *out, const anim_clip_t *clip, const anim_skeleton_t *ref, const int *map, float rate) {
  float duration = (float)(clip->nframes - 1) * clip->frame_time;
  int nframes = (int)floorf(duration * rate + 1e-3f) + 1;
  anim_skeleton_t skeleton = *ref;
  for (int b = 0; b < ref->nbones; b++) skeleton.offsets[b] = clip->skeleton.offsets[map[b]];
  int rc = anim_clip_alloc(out, &skeleton, nframes, 1.0f / rate);
  if (rc) return rc;
  snprintf(out->name, sizeof out->name, "%s", clip->name);
  int nb = clip->skeleton.nbones;
  for (int f = 0; f < nframes; f++) {
    float s = (float)f / rate / clip->frame_time;
    int i0 = (int)floorf(s);
    if (i0 > clip->nframes - 1) i0 = clip->nframes - 1;
    int i1 = i0 + 1 < clip->nframes ? i0 + 1 : i0;
    float a = s - (float)i0;
    for (int b = 0; b < nb; b++) {
      size_t k0 = (size_t)i0 * (size_t)nb + (size_t)map[b], k1 = (size_t)i1 * (size_t)nb + (size_t)map[b];
      size_t k = (size_t)f * (size_t)nb + (size_t)b;
      out->local_positions[k] = vec3_lerp(clip->local_positions[k0], clip->local_positions[k1], a);
      out->local_rotations[k] = quat_slerp_shortest(clip->local_rotations[k0], clip->local_rotations[k1], a);
    }
  }
  return 0;
}

/* Resampled (and mirrored) copies of the clips: out_copies[c * copies + m]. */
static int resample_all(anim_clip_t *out_copies, const anim_clip_t *clips, int nclips, const int *maps, int copies,
                        const int *roles, const anim_build_options_t *o, int *out_frames) {
  *out_frames = 0;
  for (int c = 0; c < nclips; c++)
    for (int m = 0; m < copies; m++) {
      anim_clip_t *copy = &out_copies[c * copies + m];
      int rc = resample(copy, &clips[c], &clips[0].skeleton, maps + (size_t)c * ANIM_MAX_BONES, o->frame_rate);
      if (rc) return rc;
      *out_frames += copy->nframes;
    }
  if (copies < 2) return 0;
  anim_clip_t **originals = malloc((size_t)nclips * sizeof *originals),
              **mirrored = malloc((size_t)nclips * sizeof *mirrored);
  if (!originals || !mirrored) {
    free(originals), free(mirrored);
    return ANIM_ENOMEM;
  }
  for (int c = 0; c < nclips; c++) originals[c] = &out_copies[c * copies], mirrored[c] = &out_copies[c * copies + 1];
  anim_mirror_clips(originals, mirrored, nclips, roles, o->mirror_left, o->mirror_right);
  free(originals), free(mirrored);
  return 0;
}

static int alloc_arrays(anim_database_t *db) {
  size_t n = (size_t)db->nframes * (size_t)db->nbones;
  db->local_positions = calloc(n, sizeof(vec3));
  db->local_velocities = calloc(n, sizeof(vec3));
  db->local_rotations = calloc(n, sizeof(quat));
  db->local_angular_velocities = calloc(n, sizeof(vec3));
  db->global_positions = calloc(n, sizeof(vec3));
  db->global_velocities = calloc(n, sizeof(vec3));
  db->global_rotations = calloc(n, sizeof(quat));
  db->global_angular_velocities = calloc(n, sizeof(vec3));
  db->contacts = calloc((size_t)db->nframes * (size_t)(db->ncontacts ? db->ncontacts : 1), 1);
  return db->local_positions && db->local_velocities && db->local_rotations && db->local_angular_velocities &&
                 db->global_positions && db->global_velocities && db->global_rotations &&
                 db->global_angular_velocities && db->contacts
             ? 0
             : ANIM_ENOMEM;
}

/* Ranges and frames of the copies, under the simulation bone. */
static int fill_frames(anim_database_t *db, const anim_clip_t *copies, const int *roles) {
  int start = 0;
  for (int i = 0; i < db->nranges; i++) {
    db->ranges[i].start = start;
    db->ranges[i].stop = start + copies[i].nframes;
    snprintf(db->ranges[i].name, ANIM_NAME_MAX, "%s", copies[i].name);
    int rc = anim_simulation_bone_write(db, start, &copies[i], roles);
    if (rc) return rc;
    start += copies[i].nframes;
  }
  return 0;
}

/* Central differences inside each range, one-sided at its ends; then FK. */
static void compute_velocities(anim_database_t *db) {
  int nb = db->nbones;
  float dt = 1.0f / db->frame_rate;
  for (int r = 0; r < db->nranges; r++) {
    int a = db->ranges[r].start, z = db->ranges[r].stop;
    for (int f = a; f < z; f++) {
      int f0 = f > a ? f - 1 : f, f1 = f + 1 < z ? f + 1 : f;
      float span = (float)(f1 - f0) * dt;
      for (int b = 0; b < nb; b++) {
        size_t k0 = (size_t)f0 * (size_t)nb + (size_t)b, k1 = (size_t)f1 * (size_t)nb + (size_t)b;
        size_t k = (size_t)f * (size_t)nb + (size_t)b;
        if (f1 == f0) {
          db->local_velocities[k] = vec3_zero();
          db->local_angular_velocities[k] = vec3_zero();
          continue;
        }
        db->local_velocities[k] = vec3_scale(vec3_sub(db->local_positions[k1], db->local_positions[k0]), 1.0f / span);
        /* The angular velocity of a local rotation, in the parent's frame. */
        db->local_angular_velocities[k] = quat_angular_velocity(db->local_rotations[k0], db->local_rotations[k1], span);
      }
    }
  }
  for (int f = 0; f < db->nframes; f++) {
    size_t k = (size_t)f * (size_t)nb;
    anim_fk_velocity(db->global_positions + k, db->global_rotations + k, db->global_velocities + k,
                     db->global_angular_velocities + k, db->local_positions + k, db->local_rotations + k,
                     db->local_velocities + k, db->local_angular_velocities + k, db->skeleton.parents, nb);
  }
}

/* ---- the build ------------------------------------------------------------------------ */

/* Everything after the checks; out is set up (name, rate, skeleton, contact bones, release). */
static int build_frames(anim_database_t *out, const anim_clip_t *clips, int nclips, const int *maps, const int *roles,
                        const anim_build_options_t *o) {
  int copies = o->mirror ? 2 : 1;
  out->nranges = nclips * copies;
  anim_clip_t *resampled = calloc((size_t)out->nranges, sizeof *resampled);
  out->ranges = calloc((size_t)out->nranges, sizeof *out->ranges);
  int rc = resampled && out->ranges ? resample_all(resampled, clips, nclips, maps, copies, roles, o, &out->nframes)
                                    : ANIM_ENOMEM;
  if (!rc) rc = alloc_arrays(out);
  if (!rc) rc = fill_frames(out, resampled, roles);
  for (int i = 0; resampled && i < out->nranges; i++) anim_clip_free(&resampled[i]);
  free(resampled);
  if (rc) return rc;
  compute_velocities(out);
  anim_contacts_detect(out, o->contact_height, o->contact_speed);
  for (int i = 1; o->mirror && i < out->nranges; i += 2) anim_database_tag_range(out, i, "mirror");
  return 0;
}

int anim_database_build(anim_database_t *out, const char *name, const anim_clip_t *clips, int nclips,
                        const anim_build_options_t *options, char *err, int errlen) {
  anim_build_options_t defaults;
  if (!options) anim_build_options_default(&defaults), options = &defaults;
  if (!name) name = "database";
  memset(out, 0, sizeof *out);
  int *maps = clips && nclips > 0 ? malloc((size_t)nclips * ANIM_MAX_BONES * sizeof *maps) : NULL;
  if (clips && nclips > 0 && !maps) return fail(err, errlen, ANIM_ENOMEM, "%s: out of memory", name);
  int roles[ANIM_BONE_ROLE_COUNT];
  char why[256];
  int rc = check_inputs(name, clips, nclips, options, maps, err, errlen);
  if (!rc && (rc = anim_bone_roles_find(&clips[0].skeleton, &options->bones, roles, why, sizeof why)))
    fail(err, errlen, rc, "%s: %s", name, why);
  if (rc) {
    free(maps);
    return rc;
  }
  snprintf(out->name, sizeof out->name, "%s", name);
  out->frame_rate = options->frame_rate;
  out->release = release_built;
  make_skeleton(out, &clips[0].skeleton);
  if (!(rc = choose_contact_bones(out, roles, options, err, errlen))) {
    rc = build_frames(out, clips, nclips, maps, roles, options);
    if (rc) fail(err, errlen, rc, "%s: out of memory", name);
  }
  free(maps);
  if (rc) {
    anim_database_free(out);
    return rc;
  }
  anim_database_update_version(out);
  return 0;
}

/* ---- tags and version ------------------------------------------------------------------- */

int anim_database_tag_range(anim_database_t *db, int r, const char *tag) {
  if (!anim_database_is_built(db) || r < 0 || r >= db->nranges || !tag || !*tag || strlen(tag) >= ANIM_NAME_MAX)
    return ANIM_EINVAL;
  int t = anim_database_find_tag(db, tag);
  if (t < 0) {
    if (db->ntags == ANIM_MAX_TAGS) return ANIM_ELIMIT;
    t = db->ntags++;
    snprintf(db->tag_names[t], ANIM_NAME_MAX, "%s", tag);
  }
  db->ranges[r].tag_mask |= 1u << t;
  return 0;
}

/* Chains anim_hash64 (hash.h) over one array: the previous hash seeds the next. */
static uint64_t mix(uint64_t h, const void *data, size_t len) { return data ? anim_hash64(data, len, h) : h; }

/* A name hashed up to its terminator: bytes after it are not content. */
static uint64_t mix_name(uint64_t h, const char *name) { return mix(h, name, strnlen(name, ANIM_NAME_MAX)) + 1; }

void anim_database_update_version(anim_database_t *db) {
  size_t n = (size_t)db->nframes * (size_t)db->nbones;
  uint64_t h = 0x616e696d64620001ull; /* "animdb", 1 */
  for (int b = 0; b < db->skeleton.nbones; b++) h = mix_name(h, db->skeleton.names[b]);
  h = mix(h, db->skeleton.parents, (size_t)db->skeleton.nbones * sizeof(int));
  h = mix(h, db->skeleton.offsets, (size_t)db->skeleton.nbones * sizeof(vec3));
  h = mix(h, &db->frame_rate, sizeof db->frame_rate);
  h = mix(h, db->local_positions, n * sizeof(vec3));
  h = mix(h, db->local_rotations, n * sizeof(quat));
  for (int r = 0; r < db->nranges; r++) {
    const anim_range_t *range = &db->ranges[r];
    int bounds[2] = {range->start, range->stop};
    h = mix(mix(h, bounds, sizeof bounds), &range->tag_mask, sizeof range->tag_mask);
    h = mix_name(h, range->name);
  }
  for (int t = 0; t < db->ntags; t++) h = mix_name(h, db->tag_names[t]);
  h = mix(h, db->contact_bones, (size_t)db->ncontacts * sizeof(int));
  h = mix(h, db->contacts, (size_t)db->nframes * (size_t)db->ncontacts);
  const anim_features_t *f = &db->features;
  if (f->values) {
    h = mix(h, f->values, (size_t)f->rows * (size_t)f->cols * sizeof(float));
    h = mix(h, f->offset, (size_t)f->cols * sizeof(float));
    h = mix(h, f->scale, (size_t)f->cols * sizeof(float));
  }
  /* 0 means "no database" to clients. */
  db->version = h ? h : 1;
}
