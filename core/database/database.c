/*
 * database.c: the runtime side of a motion database (see database.h):
 * validation, lookups, the storage check and release through the maker's
 * hook. What it does not: build or load databases (core/offline/, dbfile.c);
 * it calls neither, so the runtime depends on no builder code.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "database/database.h"

static int fail(char *err, int errlen, int code, const char *fmt, const char *arg) {
  if (err && errlen > 0) snprintf(err, (size_t)errlen, fmt, arg);
  return code;
}

int anim_database_find_tag(const anim_database_t *db, const char *tag) {
  for (int t = 0; t < db->ntags; t++)
    if (strcmp(db->tag_names[t], tag) == 0) return t;
  return -1;
}

uint32_t anim_database_contacts(const anim_database_t *db, int frame) {
  uint32_t bits = 0;
  const uint8_t *flags = db->contacts + (size_t)frame * (size_t)db->ncontacts;
  for (int s = 0; s < db->ncontacts; s++)
    if (flags[s]) bits |= 1u << s;
  return bits;
}

int anim_database_range_of(const anim_database_t *db, int frame) {
  int lo = 0, hi = db->nranges - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    if (frame < db->ranges[mid].start) hi = mid - 1;
    else if (frame >= db->ranges[mid].stop) lo = mid + 1;
    else return mid;
  }
  return -1;
}

int anim_database_range_stop(const anim_database_t *db, int frame) {
  int r = anim_database_range_of(db, frame);
  return r >= 0 ? db->ranges[r].stop : db->nframes;
}

anim_pose_view_t anim_database_frame_pose(const anim_database_t *db, int frame) {
  size_t base = (size_t)frame * (size_t)db->nbones;
  anim_pose_view_t v = {(size_t)db->nbones, db->local_positions + base, db->local_velocities + base,
                        db->local_rotations + base, db->local_angular_velocities + base};
  return v;
}

void anim_database_free(anim_database_t *db) {
  if (!db) return;
  if (db->release) db->release(db);
  memset(db, 0, sizeof *db);
}

int anim_database_check(const anim_database_t *db, char *err, int errlen) {
  return db->check ? db->check(db, err, errlen) : 0;
}

/* Rule 6: the schema fits the skeleton, and the groups its columns. */
static int validate_feature_layout(const anim_database_t *db, char *err, int errlen) {
  const anim_features_t *f = &db->features;
  char why[160];
  if (anim_feature_schema_validate(&f->schema, &db->skeleton, why, sizeof why))
    return fail(err, errlen, ANIM_EFORMAT, "feature schema: %s", why);
  int col = 0;
  for (int t = 0; t < f->schema.nterms; t++) {
    if (f->group_start[t] != col || f->group_dims[t] != anim_feature_term_dims(&f->schema.terms[t]))
      return fail(err, errlen, ANIM_EFORMAT, "%s: a feature group's columns differ from its term's", db->name);
    col += f->group_dims[t];
  }
  if (col != f->cols) return fail(err, errlen, ANIM_EFORMAT, "%s: feature groups do not make up the columns", db->name);
  return 0;
}

int anim_database_validate(const anim_database_t *db, char *err, int errlen) {
  const anim_skeleton_t *s = &db->skeleton;
  if (s->nbones < 1 || s->nbones > ANIM_MAX_BONES || db->nbones != s->nbones || s->parents[0] != -1)
    return fail(err, errlen, ANIM_EFORMAT, "%s: bad skeleton", db->name);
  for (int b = 1; b < s->nbones; b++)
    if (s->parents[b] < 0 || s->parents[b] >= b)
      return fail(err, errlen, ANIM_EFORMAT, "%s: parents out of order", db->name);
  if (db->nframes < 1 || !(db->frame_rate > 0.0f)) return fail(err, errlen, ANIM_EFORMAT, "%s: no frames", db->name);
  int expect = 0;
  for (int r = 0; r < db->nranges; r++) {
    const anim_range_t *range = &db->ranges[r];
    if (range->start != expect || range->stop <= range->start || range->stop > db->nframes)
      return fail(err, errlen, ANIM_EFORMAT, "%s: ranges must be sorted, disjoint and cover every frame", db->name);
    if (!memchr(range->name, 0, sizeof range->name))
      return fail(err, errlen, ANIM_EFORMAT, "%s: a range name is not terminated", db->name);
    if (db->ntags < 32 && (range->tag_mask >> db->ntags) != 0)
      return fail(err, errlen, ANIM_EFORMAT, "%s: a range has an unknown tag", db->name);
    expect = range->stop;
  }
  if (expect != db->nframes || db->nranges < 1)
    return fail(err, errlen, ANIM_EFORMAT, "%s: ranges must cover every frame", db->name);
  if (db->ncontacts < 0 || db->ncontacts > ANIM_MAX_CONTACTS)
    return fail(err, errlen, ANIM_EFORMAT, "%s: bad contact count", db->name);
  for (int c = 0; c < db->ncontacts; c++)
    if (db->contact_bones[c] < 0 || db->contact_bones[c] >= db->nbones)
      return fail(err, errlen, ANIM_EFORMAT, "%s: contact bone out of range", db->name);
  if (db->features.values && db->features.rows != db->nframes)
    return fail(err, errlen, ANIM_EFORMAT, "%s: feature rows differ from frames", db->name);
  if (db->features.values) return validate_feature_layout(db, err, errlen);
  return 0;
}

