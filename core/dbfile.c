/* dbfile.c: the binary database file (see dbfile.h). */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "anim_error.h"
#include "dbfile.h"
#include "hash.h"

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

static int host_is_little_endian(void) {
  const uint32_t x = 1;
  return *(const uint8_t *)&x == 1;
}

static int fail(char *err, int errlen, int code, const char *path, const char *what) {
  if (err && errlen > 0) snprintf(err, (size_t)errlen, "%s: %s", path, what);
  return code;
}

/* ---- writing ------------------------------------------------------------------------- */

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

static size_t align_up(size_t x) { return (x + ALIGN - 1) & ~(size_t)(ALIGN - 1); }

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
  size_t offset = align_up(HEADER_SIZE + (size_t)count * sizeof(section_t));
  memset(table, 0, sizeof table);
  for (int i = 0; i < count; i++) {
    memcpy(table[i].tag, s[i].tag, 4);
    table[i].offset = offset;
    table[i].size = s[i].size;
    table[i].checksum = anim_hash64(s[i].data, s[i].size, 0);
    offset = align_up(offset + s[i].size);
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
  if (!host_is_little_endian()) return fail(err, errlen, ANIM_EVERSION, path, "big-endian hosts are not supported");
  int rc = anim_database_validate(db, err, errlen);
  if (rc) return rc;
  meta_t meta;
  bone_record_t *skel = calloc((size_t)db->nbones, sizeof *skel);
  if (!skel) return fail(err, errlen, ANIM_ENOMEM, path, "out of memory");
  out_section_t sections[MAX_SECTIONS];
  int count = collect(db, &meta, skel, sections);
  size_t len = strlen(path);
  char *tmp = malloc(len + 16), *dir_copy = strdup(path);
  if (!tmp || !dir_copy) {
    free(skel), free(tmp), free(dir_copy);
    return fail(err, errlen, ANIM_ENOMEM, path, "out of memory");
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
    return fail(err, errlen, ANIM_EIO, path, what);
  }
  return 0;
}

/* ---- reading ------------------------------------------------------------------------- */

typedef struct {
  const uint8_t *base;
  const section_t *table;
  uint32_t count;
} view_t;

static const section_t *find_section(const view_t *v, const char *tag) {
  for (uint32_t i = 0; i < v->count; i++)
    if (memcmp(v->table[i].tag, tag, 4) == 0) return &v->table[i];
  return NULL;
}

/* The section's bytes when its size is exactly expect, else NULL. */
static const void *section_data(const view_t *v, const char *tag, size_t expect) {
  const section_t *s = find_section(v, tag);
  return s && s->size == expect ? v->base + s->offset : NULL;
}

static int all_zero(const uint8_t *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i]) return 0;
  return 1;
}

static int check_layout(const uint8_t *bytes, size_t len, view_t *v, const char *name, char *err, int errlen) {
  if (len < HEADER_SIZE) return fail(err, errlen, ANIM_ETRUNCATED, name, "shorter than the 64-byte header");
  header_t h;
  memcpy(&h, bytes, sizeof h);
  if (memcmp(h.magic, MAGIC, 8) != 0) return fail(err, errlen, ANIM_EFORMAT, name, "not an animserver database (bad magic)");
  if (h.endian != ENDIAN_TAG) return fail(err, errlen, ANIM_EVERSION, name, "written with another byte order");
  if (h.version != ANIM_DBFILE_VERSION) return fail(err, errlen, ANIM_EVERSION, name, "unsupported format version");
  if (h.header_size != HEADER_SIZE || h.nsections == 0 || h.nsections > MAX_SECTIONS)
    return fail(err, errlen, ANIM_EFORMAT, name, "bad header size or section count");
  for (size_t i = 0; i < sizeof h.reserved; i++)
    if (h.reserved[i]) return fail(err, errlen, ANIM_EFORMAT, name, "reserved header bytes are not zero");
  if (h.file_size > len) return fail(err, errlen, ANIM_ETRUNCATED, name, "file is shorter than its header says");
  if (h.file_size < len) return fail(err, errlen, ANIM_EFORMAT, name, "file is longer than its header says");
  size_t table_end = HEADER_SIZE + (size_t)h.nsections * sizeof(section_t);
  if (table_end > len) return fail(err, errlen, ANIM_ETRUNCATED, name, "section table runs past the end");
  v->base = bytes;
  v->table = (const section_t *)(bytes + HEADER_SIZE);
  v->count = h.nsections;
  if (anim_hash64(v->table, (size_t)h.nsections * sizeof(section_t), h.db_version) != h.checksum)
    return fail(err, errlen, ANIM_ECHECKSUM, name, "header checksum mismatch");
  /* Bounds first, for every section, so a damaged table is reported as such
   * before any section is read. Sections come in file order. */
  uint64_t previous_end = table_end;
  for (uint32_t i = 0; i < v->count; i++) {
    const section_t *s = &v->table[i];
    char what[96];
    if (s->offset % ALIGN || s->offset < previous_end || s->offset > len || s->size > len - s->offset) {
      snprintf(what, sizeof what, "section %u (%.4s) is misaligned, overlaps another or leaves the file", i, s->tag);
      return fail(err, errlen, ANIM_EFORMAT, name, what);
    }
    previous_end = s->offset + s->size;
  }
  if (align_up(previous_end) != len)
    return fail(err, errlen, ANIM_EFORMAT, name, "the file does not end after its last section");
  /* Every byte is now accounted for: header fields by value, the table by the
   * header checksum, sections by theirs, and the alignment padding by being
   * zero (so nothing in the file goes unchecked). */
  uint64_t at = table_end;
  for (uint32_t i = 0; i <= v->count; i++) {
    uint64_t end = i < v->count ? v->table[i].offset : len;
    if (!all_zero(bytes + at, (size_t)(end - at)))
      return fail(err, errlen, ANIM_EFORMAT, name, "padding between sections is not zero");
    if (i < v->count) at = v->table[i].offset + v->table[i].size;
  }
  for (uint32_t i = 0; i < v->count; i++) {
    const section_t *s = &v->table[i];
    if (anim_hash64(bytes + s->offset, s->size, 0) != s->checksum) {
      char what[64];
      snprintf(what, sizeof what, "section %.4s checksum mismatch", s->tag);
      return fail(err, errlen, ANIM_ECHECKSUM, name, what);
    }
  }
  return 0;
}

static int bad(char *err, int errlen, const char *name, const char *what) {
  return fail(err, errlen, ANIM_EFORMAT, name, what);
}

static int fill_meta(anim_database_t *db, const view_t *v, const char *name, char *err, int errlen) {
  const meta_t *m = section_data(v, "META", sizeof(meta_t));
  if (!m) return bad(err, errlen, name, "META section missing or of the wrong size");
  if (m->nbones < 1 || m->nbones > ANIM_MAX_BONES || m->nframes < 1 || m->nranges < 1 || m->ntags < 0 ||
      m->ntags > ANIM_MAX_TAGS || m->ncontacts < 0 || m->ncontacts > ANIM_MAX_CONTACTS || m->nterms < 0 ||
      m->nterms > ANIM_MAX_FEATURE_TERMS || m->cols < 0 || m->cols > ANIM_MAX_FEATURE_DIMS ||
      (m->cols > 0 && m->rows != m->nframes) || m->name[63] != 0)
    return bad(err, errlen, name, "META counts out of range");
  memcpy(db->name, m->name, sizeof db->name);
  db->frame_rate = m->frame_rate;
  db->nframes = m->nframes, db->nbones = m->nbones, db->nranges = m->nranges, db->ntags = m->ntags;
  db->ncontacts = m->ncontacts;
  memcpy(db->contact_bones, m->contact_bones, sizeof db->contact_bones);
  anim_features_t *f = &db->features;
  f->rows = m->cols > 0 ? m->rows : 0, f->cols = m->cols;
  f->schema.nterms = m->nterms;
  int col = 0;
  for (int t = 0; t < m->nterms; t++) {
    anim_feature_term_t *term = &f->schema.terms[t];
    if (m->terms[t].kind < 0 || m->terms[t].kind > ANIM_FEATURE_INERTIALIZE || m->terms[t].nsamples < 0 ||
        m->terms[t].nsamples > ANIM_MAX_TRAJECTORY_SAMPLES || m->terms[t].bone[63] != 0 ||
        m->group_start[t] != col || m->group_dims[t] < 1 || m->group_dims[t] > m->cols - col)
      return bad(err, errlen, name, "feature schema is inconsistent");
    term->kind = (anim_feature_kind_t)m->terms[t].kind;
    memcpy(term->bone, m->terms[t].bone, sizeof term->bone);
    term->weight = m->terms[t].weight, term->halflife = m->terms[t].halflife, term->nsamples = m->terms[t].nsamples;
    memcpy(term->frame_offsets, m->terms[t].frame_offsets, sizeof term->frame_offsets);
    f->group_start[t] = m->group_start[t], f->group_dims[t] = m->group_dims[t];
    col += m->group_dims[t];
  }
  if (col != m->cols) return bad(err, errlen, name, "feature groups do not add up to the columns");
  return 0;
}

static int fill_arrays(anim_database_t *db, const view_t *v, const char *name, char *err, int errlen) {
  const bone_record_t *skel = section_data(v, "SKEL", (size_t)db->nbones * sizeof(bone_record_t));
  if (!skel) return bad(err, errlen, name, "SKEL section missing or of the wrong size");
  db->skeleton.nbones = db->nbones;
  for (int b = 0; b < db->nbones; b++) {
    if (skel[b].name[63] != 0) return bad(err, errlen, name, "unterminated bone name");
    memcpy(db->skeleton.names[b], skel[b].name, ANIM_NAME_MAX);
    db->skeleton.parents[b] = skel[b].parent;
    memcpy(&db->skeleton.offsets[b], skel[b].offset, sizeof(vec3));
  }
  const char *tags = section_data(v, "TAGS", (size_t)db->ntags * ANIM_NAME_MAX);
  if (!tags) return bad(err, errlen, name, "TAGS section missing or of the wrong size");
  for (int t = 0; t < db->ntags; t++) {
    if (tags[t * ANIM_NAME_MAX + ANIM_NAME_MAX - 1] != 0) return bad(err, errlen, name, "unterminated tag");
    memcpy(db->tag_names[t], tags + t * ANIM_NAME_MAX, ANIM_NAME_MAX);
  }
  size_t n = (size_t)db->nframes * (size_t)db->nbones, cols = (size_t)db->features.cols;
  struct {
    const char *tag;
    void **target;
    size_t size;
  } arrays[] = {
      {"RANG", (void **)&db->ranges, (size_t)db->nranges * sizeof(anim_range_t)},
      {"LPOS", (void **)&db->local_positions, n * sizeof(vec3)},
      {"LVEL", (void **)&db->local_velocities, n * sizeof(vec3)},
      {"LROT", (void **)&db->local_rotations, n * sizeof(quat)},
      {"LANG", (void **)&db->local_angular_velocities, n * sizeof(vec3)},
      {"GPOS", (void **)&db->global_positions, n * sizeof(vec3)},
      {"GVEL", (void **)&db->global_velocities, n * sizeof(vec3)},
      {"GROT", (void **)&db->global_rotations, n * sizeof(quat)},
      {"GANG", (void **)&db->global_angular_velocities, n * sizeof(vec3)},
      {"CONT", (void **)&db->contacts, (size_t)db->nframes * (size_t)db->ncontacts},
      {"FEAT", (void **)&db->features.values, (size_t)db->features.rows * cols * sizeof(float)},
      {"FOFF", (void **)&db->features.offset, cols * sizeof(float)},
      {"FSCL", (void **)&db->features.scale, cols * sizeof(float)},
  };
  for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++) {
    const void *data = section_data(v, arrays[i].tag, arrays[i].size);
    if (!data) {
      char what[64];
      snprintf(what, sizeof what, "%s section missing or of the wrong size", arrays[i].tag);
      return bad(err, errlen, name, what);
    }
    *arrays[i].target = (void *)data; /* read-only mapping: the database is never written */
  }
  return 0;
}

int anim_dbfile_parse(anim_database_t *out, const void *bytes, size_t len, const char *name, char *err, int errlen) {
  memset(out, 0, sizeof *out);
  if (!host_is_little_endian()) return fail(err, errlen, ANIM_EVERSION, name, "big-endian hosts are not supported");
  /* Arrays are used in place, and sections sit at multiples of 64 from the
   * start: a base aligned to 8 (as malloc's is) aligns every field. */
  if (!bytes || (uintptr_t)bytes % 8)
    return fail(err, errlen, ANIM_EINVAL, name, "the buffer must be 8-byte aligned (as from malloc or mmap)");
  view_t v;
  int rc = check_layout(bytes, len, &v, name, err, errlen);
  if (!rc) rc = fill_meta(out, &v, name, err, errlen);
  if (!rc) rc = fill_arrays(out, &v, name, err, errlen);
  if (!rc) rc = anim_database_validate(out, err, errlen);
  if (!rc) memcpy(&out->version, bytes + offsetof(header_t, db_version), sizeof out->version);
  /* Borrowed bytes: mapping set, size 0, so free touches neither. */
  out->mapping = (void *)bytes;
  out->mapping_size = 0;
  if (rc) memset(out, 0, sizeof *out);
  return rc;
}

int anim_dbfile_load(anim_database_t *out, const char *path, char *err, int errlen) {
  memset(out, 0, sizeof *out);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(err, errlen, errno == ENOENT ? ANIM_ENOTFOUND : ANIM_EIO, path, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return fail(err, errlen, ANIM_EIO, path, "not a regular file");
  }
  size_t len = (size_t)st.st_size;
  if (len < HEADER_SIZE) {
    close(fd);
    return fail(err, errlen, ANIM_ETRUNCATED, path, "shorter than the 64-byte header");
  }
  /* Every byte is read for its checksum: populate the mapping in one go
   * rather than one page fault per 4 KiB. */
  void *map = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  close(fd);
  if (map == MAP_FAILED) return fail(err, errlen, ANIM_EIO, path, strerror(errno));
  int rc = anim_dbfile_parse(out, map, len, path, err, errlen);
  if (rc) {
    munmap(map, len);
    return rc;
  }
  out->mapping = map;
  out->mapping_size = len;
  return 0;
}

void anim_dbfile_release(anim_database_t *db) {
  if (db->mapping && db->mapping_size) munmap(db->mapping, db->mapping_size);
  db->mapping = NULL;
  db->mapping_size = 0;
}
