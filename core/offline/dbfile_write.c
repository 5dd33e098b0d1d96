/*
 * dbfile_write.c: writing a database file (see dbfile_write.h; the layout is
 * in dbfile.h and dbfile_format.h). What it does not: read files (dbfile.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "anim_error.h"
#include "database/dbfile_format.h"
#include "offline/dbfile_write.h"
#include "base/hash.h"

typedef struct {
  const char *tag;
  const void *data;
  size_t size;
} out_section_t;

static int collect(const anim_database_t *db, meta_t *meta, bone_record_t *skel, out_section_t *s) {
  size_t n = (size_t)db->nframes * (size_t)db->nbones;
  const anim_features_t *f = &db->features;
  memset(meta, 0, sizeof *meta);
  memcpy(meta->name, db->name, sizeof meta->name);
  meta->frame_rate = db->frame_rate;
  meta->nframes = db->nframes, meta->nbones = db->nbones, meta->nranges = db->nranges;
  meta->ntags = db->ntags, meta->ncontacts = db->ncontacts;
  memcpy(meta->contact_bones, db->contact_bones, sizeof meta->contact_bones);
  meta->rows = f->rows, meta->cols = f->cols, meta->nterms = f->schema.nterms;
  memcpy(meta->group_start, f->group_start, sizeof meta->group_start);
  memcpy(meta->group_dims, f->group_dims, sizeof meta->group_dims);
  for (int t = 0; t < f->schema.nterms; t++) {
    const anim_feature_term_t *term = &f->schema.terms[t];
    meta->terms[t].kind = (int32_t)term->kind;
    memcpy(meta->terms[t].bone, term->bone, sizeof meta->terms[t].bone);
    meta->terms[t].weight = term->weight, meta->terms[t].halflife = term->halflife;
    meta->terms[t].nsamples = term->nsamples;
    memcpy(meta->terms[t].frame_offsets, term->frame_offsets, sizeof meta->terms[t].frame_offsets);
  }
  for (int b = 0; b < db->nbones; b++) {
    memset(&skel[b], 0, sizeof skel[b]);
    memcpy(skel[b].name, db->skeleton.names[b], sizeof skel[b].name);
    skel[b].parent = db->skeleton.parents[b];
    memcpy(skel[b].offset, &db->skeleton.offsets[b], sizeof skel[b].offset);
  }
  size_t fcount = (size_t)f->rows * (size_t)f->cols;
  out_section_t list[] = {
      {"META", meta, sizeof *meta},
      {"SKEL", skel, (size_t)db->nbones * sizeof *skel},
      {"RANG", db->ranges, (size_t)db->nranges * sizeof *db->ranges},
      {"TAGS", db->tag_names, (size_t)db->ntags * ANIM_NAME_MAX},
      {"LPOS", db->local_positions, n * sizeof(vec3)},
      {"LVEL", db->local_velocities, n * sizeof(vec3)},
      {"LROT", db->local_rotations, n * sizeof(quat)},
      {"LANG", db->local_angular_velocities, n * sizeof(vec3)},
      {"GPOS", db->global_positions, n * sizeof(vec3)},
      {"GVEL", db->global_velocities, n * sizeof(vec3)},
      {"GROT", db->global_rotations, n * sizeof(quat)},
      {"GANG", db->global_angular_velocities, n * sizeof(vec3)},
      {"CONT", db->contacts, (size_t)db->nframes * (size_t)db->ncontacts},
      {"FEAT", f->values, fcount * sizeof(float)},
      {"FOFF", f->offset, (size_t)f->cols * sizeof(float)},
      {"FSCL", f->scale, (size_t)f->cols * sizeof(float)},
  };
  memcpy(s, list, sizeof list);
  return (int)(sizeof list / sizeof list[0]);
}

static int write_all(int fd, const void *data, size_t len) {
  const uint8_t *p = data;
  while (len > 0) {
    ssize_t n = write(fd, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    p += n, len -= (size_t)n;
  }
  return 0;
}

static int write_file(int fd, const anim_database_t *db, out_section_t *s, int count) {
  section_t table[MAX_SECTIONS];
  size_t offset = anim_dbfile_align_up(HEADER_SIZE + (size_t)count * sizeof(section_t));
  memset(table, 0, sizeof table);
  for (int i = 0; i < count; i++) {
    memcpy(table[i].tag, s[i].tag, 4);
    table[i].offset = offset;
    table[i].size = s[i].size;
    table[i].checksum = anim_hash64(s[i].data, s[i].size, 0);
    offset = anim_dbfile_align_up(offset + s[i].size);
  }
  header_t h;
  memset(&h, 0, sizeof h);
  memcpy(h.magic, MAGIC, 8);
  h.version = ANIM_DBFILE_VERSION, h.endian = ENDIAN_TAG, h.nsections = (uint32_t)count;
  h.header_size = HEADER_SIZE, h.file_size = offset, h.db_version = db->version;
  /* The file checksum covers the table, whose entries carry each section's checksum. */
  h.checksum = anim_hash64(table, (size_t)count * sizeof(section_t), db->version);
  static const uint8_t zeros[ALIGN];
  if (write_all(fd, &h, sizeof h) || write_all(fd, table, (size_t)count * sizeof(section_t))) return -1;
  size_t at = HEADER_SIZE + (size_t)count * sizeof(section_t);
  for (int i = 0; i < count; i++) {
    if (write_all(fd, zeros, table[i].offset - at) || write_all(fd, s[i].data, s[i].size)) return -1;
    at = table[i].offset + s[i].size;
  }
  return write_all(fd, zeros, offset - at);
}

int anim_dbfile_write(const anim_database_t *db, const char *path, char *err, int errlen) {
  if (!anim_dbfile_host_is_little_endian())
    return anim_dbfile_fail(err, errlen, ANIM_EVERSION, path, "big-endian hosts are not supported");
  int rc = anim_database_validate(db, err, errlen);
  /* The loader's own check, before anything is created: a file written is
   * one that loads, and a refused write leaves no file behind. */
  if (!rc) rc = anim_dbfile_check_finite(db, path, err, errlen);
  if (rc) return rc;
  meta_t meta;
  bone_record_t *skel = calloc((size_t)db->nbones, sizeof *skel);
  if (!skel) return anim_dbfile_fail(err, errlen, ANIM_ENOMEM, path, "out of memory");
  out_section_t sections[MAX_SECTIONS];
  int count = collect(db, &meta, skel, sections);
  size_t len = strlen(path);
  char *tmp = malloc(len + 16), *dir_copy = strdup(path);
  if (!tmp || !dir_copy) {
    free(skel), free(tmp), free(dir_copy);
    return anim_dbfile_fail(err, errlen, ANIM_ENOMEM, path, "out of memory");
  }
  snprintf(tmp, len + 16, "%s.tmp.XXXXXX", path);
  int fd = mkstemp(tmp);
  /* mkstemp creates 0600; a database file is meant to be read by the server's user and others. */
  if (fd >= 0) fchmod(fd, 0644);
  /* saved: the errno of the first failing step, for the message. */
  int saved = 0;
  rc = fd < 0 ? -1 : write_file(fd, db, sections, count);
  if (rc) saved = errno;
  if (rc == 0 && fsync(fd) != 0) rc = -1, saved = errno;
  if (fd >= 0 && close(fd) != 0 && rc == 0) rc = -1, saved = errno;
  if (rc == 0 && rename(tmp, path) != 0) rc = -1, saved = errno;
  if (rc == 0) {
    /* The rename itself is durable only once the directory is synced. */
    int dfd = open(dirname(dir_copy), O_RDONLY | O_DIRECTORY);
    if (dfd >= 0) fsync(dfd), close(dfd);
  } else if (fd >= 0) {
    unlink(tmp);
  }
  free(skel), free(tmp), free(dir_copy);
  if (rc) {
    char what[160];
    snprintf(what, sizeof what, "cannot write: %s", strerror(saved));
    return anim_dbfile_fail(err, errlen, ANIM_EIO, path, what);
  }
  return 0;
}

