/*
 * dbfile.c: loading database files (see dbfile.h): the checks, a private
 * copy or a checked mapping, and the release and check hooks of a loaded
 * database. What it does not: write files (core/offline/dbfile_write.c) or
 * build databases; it depends on database.h only.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "anim_error.h"
#include "database/dbfile.h"
#include "database/dbfile_format.h"
#include "base/hash.h"

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
  if (len < HEADER_SIZE) return anim_dbfile_fail(err, errlen, ANIM_ETRUNCATED, name, "shorter than the 64-byte header");
  header_t h;
  memcpy(&h, bytes, sizeof h);
  if (memcmp(h.magic, MAGIC, 8) != 0)
    return anim_dbfile_fail(err, errlen, ANIM_EFORMAT, name, "not an animserver database (bad magic)");
  if (h.endian != ENDIAN_TAG)
    return anim_dbfile_fail(err, errlen, ANIM_EVERSION, name, "written with another byte order");
  if (h.version != ANIM_DBFILE_VERSION)
    return anim_dbfile_fail(err, errlen, ANIM_EVERSION, name, "unsupported format version");
  if (h.header_size != HEADER_SIZE || h.nsections == 0 || h.nsections > MAX_SECTIONS)
    return anim_dbfile_fail(err, errlen, ANIM_EFORMAT, name, "bad header size or section count");
  for (size_t i = 0; i < sizeof h.reserved; i++)
    if (h.reserved[i]) return anim_dbfile_fail(err, errlen, ANIM_EFORMAT, name, "reserved header bytes are not zero");
  if (h.file_size > len)
    return anim_dbfile_fail(err, errlen, ANIM_ETRUNCATED, name, "file is shorter than its header says");
  if (h.file_size < len)
    return anim_dbfile_fail(err, errlen, ANIM_EFORMAT, name, "file is longer than its header says");
  size_t table_end = HEADER_SIZE + (size_t)h.nsections * sizeof(section_t);
  if (table_end > len) return anim_dbfile_fail(err, errlen, ANIM_ETRUNCATED, name, "section table runs past the end");
  v->base = bytes;
  v->table = (const section_t *)(bytes + HEADER_SIZE);
  v->count = h.nsections;
  if (anim_hash64(v->table, (size_t)h.nsections * sizeof(section_t), h.db_version) != h.checksum)
    return anim_dbfile_fail(err, errlen, ANIM_ECHECKSUM, name, "header checksum mismatch");
  /* Bounds first, for every section, so a damaged table is reported as such
   * before any section is read. Sections come in file order. */
  uint64_t previous_end = table_end;
  for (uint32_t i = 0; i < v->count; i++) {
    const section_t *s = &v->table[i];
    char what[96];
    if (s->offset % ALIGN || s->offset < previous_end || s->offset > len || s->size > len - s->offset) {
      snprintf(what, sizeof what, "section %u (%.4s) is misaligned, overlaps another or leaves the file", i, s->tag);
      return anim_dbfile_fail(err, errlen, ANIM_EFORMAT, name, what);
    }
    previous_end = s->offset + s->size;
  }
  if (anim_dbfile_align_up(previous_end) != len)
    return anim_dbfile_fail(err, errlen, ANIM_EFORMAT, name, "the file does not end after its last section");
  /* Every byte is now accounted for: header fields by value, the table by the
   * header checksum, sections by theirs, and the alignment padding by being
   * zero (so nothing in the file goes unchecked). */
  uint64_t at = table_end;
  for (uint32_t i = 0; i <= v->count; i++) {
    uint64_t end = i < v->count ? v->table[i].offset : len;
    if (!all_zero(bytes + at, (size_t)(end - at)))
      return anim_dbfile_fail(err, errlen, ANIM_EFORMAT, name, "padding between sections is not zero");
    if (i < v->count) at = v->table[i].offset + v->table[i].size;
  }
  for (uint32_t i = 0; i < v->count; i++) {
    const section_t *s = &v->table[i];
    if (anim_hash64(bytes + s->offset, s->size, 0) != s->checksum) {
      char what[64];
      snprintf(what, sizeof what, "section %.4s checksum mismatch", s->tag);
      return anim_dbfile_fail(err, errlen, ANIM_ECHECKSUM, name, what);
    }
  }
  return 0;
}

static int bad(char *err, int errlen, const char *name, const char *what) {
  return anim_dbfile_fail(err, errlen, ANIM_EFORMAT, name, what);
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

/* The index of the first value of v[0..n) that is NaN or infinite, or n.
 * Blocks are scanned without a branch per value (the loop vectorizes), and
 * only a block with a bad value is searched again: the check reads every
 * float of a file once more after its checksum, at about memory speed. A
 * float's exponent is all ones exactly when it is infinite or NaN; adding
 * one to that exponent field then carries into the sign bit. */
static size_t first_not_finite(const float *v, size_t n) {
  enum { BLOCK = 4096 };
  for (size_t at = 0; at < n; at += BLOCK) {
    size_t end = n - at < BLOCK ? n : at + BLOCK;
    uint32_t carries = 0;
    for (size_t i = at; i < end; i++) {
      uint32_t bits;
      memcpy(&bits, &v[i], sizeof bits);
      carries |= (bits & 0x7f800000u) + 0x00800000u;
    }
    if (carries & 0x80000000u)
      for (size_t i = at; i < end; i++)
        if (!isfinite(v[i])) return i;
  }
  return n;
}

/* Refuses a database with a float that is not finite where the runtime
 * computes with it: the features and what normalizes a query (the search,
 * whose k-d tree would otherwise quantize NaN; a query divides by the scale,
 * so it must be > 0 too), the poses (characters play, blend and predict their
 * trajectory from them, and the query takes the root from them), the
 * skeleton's offsets and the frame rate. The message names the array and
 * the first bad row and column (frame and bone for poses). The loader runs it
 * on a parsed file, the writer on the database it is about to write, so a
 * file the writer accepts is one the loader accepts. */
int anim_dbfile_check_finite(const anim_database_t *db, const char *name, char *err, int errlen) {
  char what[160];
  if (!isfinite(db->frame_rate)) return bad(err, errlen, name, "META frame rate is not finite");
  for (int b = 0; b < db->nbones; b++)
    if (first_not_finite(&db->skeleton.offsets[b].x, 3) != 3) {
      snprintf(what, sizeof what, "SKEL bone %d (%s): offset is not finite", b, db->skeleton.names[b]);
      return bad(err, errlen, name, what);
    }
  const anim_features_t *f = &db->features;
  size_t cols = (size_t)f->cols, at;
  if (cols) {
    if ((at = first_not_finite(f->values, (size_t)f->rows * cols)) != (size_t)f->rows * cols) {
      snprintf(what, sizeof what, "FEAT row %zu column %zu is not finite (%g)", at / cols, at % cols,
               (double)f->values[at]);
      return bad(err, errlen, name, what);
    }
    for (size_t j = 0; j < cols; j++)
      if (!isfinite(f->offset[j]) || !isfinite(f->scale[j]) || !(f->scale[j] > 0.0f)) {
        snprintf(what, sizeof what, "FOFF/FSCL column %zu: offset %g, scale %g (finite, scale > 0)", j,
                 (double)f->offset[j], (double)f->scale[j]);
        return bad(err, errlen, name, what);
      }
  }
  size_t nbones = (size_t)db->nbones, n = (size_t)db->nframes * nbones;
  struct {
    const char *tag;
    const float *values;
    size_t per_bone; /* floats */
  } poses[] = {
      {"LPOS", &db->local_positions->x, 3},           {"LVEL", &db->local_velocities->x, 3},
      {"LROT", &db->local_rotations->w, 4},           {"LANG", &db->local_angular_velocities->x, 3},
      {"GPOS", &db->global_positions->x, 3},          {"GVEL", &db->global_velocities->x, 3},
      {"GROT", &db->global_rotations->w, 4},          {"GANG", &db->global_angular_velocities->x, 3},
  };
  for (size_t i = 0; i < sizeof poses / sizeof poses[0]; i++) {
    size_t count = n * poses[i].per_bone;
    if ((at = first_not_finite(poses[i].values, count)) == count) continue;
    size_t value = at / poses[i].per_bone;
    snprintf(what, sizeof what, "%s frame %zu bone %zu (%s) is not finite", poses[i].tag, value / nbones,
             value % nbones, db->skeleton.names[value % nbones]);
    return bad(err, errlen, name, what);
  }
  return 0;
}

int anim_dbfile_parse(anim_database_t *out, const void *bytes, size_t len, const char *name, char *err, int errlen) {
  memset(out, 0, sizeof *out);
  if (!anim_dbfile_host_is_little_endian())
    return anim_dbfile_fail(err, errlen, ANIM_EVERSION, name, "big-endian hosts are not supported");
  /* Arrays are used in place, and sections sit at multiples of 64 from the
   * start: a base aligned to 8 (as malloc's is) aligns every field. */
  if (!bytes || (uintptr_t)bytes % 8)
    return anim_dbfile_fail(err, errlen, ANIM_EINVAL, name,
                            "the buffer must be 8-byte aligned (as from malloc or mmap)");
  view_t v;
  int rc = check_layout(bytes, len, &v, name, err, errlen);
  if (!rc) rc = fill_meta(out, &v, name, err, errlen);
  if (!rc) rc = fill_arrays(out, &v, name, err, errlen);
  if (!rc) rc = anim_database_validate(out, err, errlen);
  if (!rc) rc = anim_dbfile_check_finite(out, name, err, errlen);
  if (!rc) memcpy(&out->version, (const uint8_t *)bytes + offsetof(header_t, db_version), sizeof out->version);
  /* Borrowed bytes: no release hook, so free touches nothing. */
  if (rc) memset(out, 0, sizeof *out);
  return rc;
}


/* ---- where a loaded file lives ------------------------------------------------------- */

/* A loaded file: the public part first (db->storage points here), then what
 * the hooks need. A copied file's bytes follow the record in the same
 * allocation, at a multiple of 64 from its start. */
typedef struct {
  anim_dbfile_storage_t pub;
  int fd;                     /* mapped: the open file; -1 when copied */
  off_t size;                 /* mapped: size and modification time at load */
  struct timespec mtime;
  char path[];                /* for messages */
} loaded_t;

static void release_loaded(anim_database_t *db) {
  loaded_t *l = db->storage;
  if (!l) return;
  if (l->pub.mapped) {
    munmap((void *)l->pub.bytes, l->pub.size);
    close(l->fd);
  }
  free(l);
}

/* A mapped file is sound while it has the size and modification time it had when loaded. */
static int check_mapped(const anim_database_t *db, char *err, int errlen) {
  const loaded_t *l = db->storage;
  struct stat st;
  if (!l || !l->pub.mapped) return 0;
  if (fstat(l->fd, &st) != 0)
    return anim_dbfile_fail(err, errlen, ANIM_EIO, l->path, "cannot check the mapped file (fstat failed)");
  if (st.st_size != l->size || st.st_mtim.tv_sec != l->mtime.tv_sec || st.st_mtim.tv_nsec != l->mtime.tv_nsec)
    return anim_dbfile_fail(err, errlen, ANIM_EIO, l->path,
                st.st_size < l->size ? "the file was truncated since it was loaded: reload it"
                                     : "the file was rewritten in place since it was loaded: reload it");
  return 0;
}

/* A record for path with extra bytes after it, at a multiple of 64 from its start (*out_extra). */
static loaded_t *new_record(const char *path, size_t extra, uint8_t **out_extra) {
  size_t plen = strlen(path) + 1, head = anim_dbfile_align_up(sizeof(loaded_t) + plen);
  loaded_t *l = malloc(head + extra);
  if (!l) return NULL;
  memset(l, 0, sizeof *l);
  l->fd = -1;
  memcpy(l->path, path, plen);
  if (out_extra) *out_extra = (uint8_t *)l + head;
  return l;
}

/* Reads len bytes of fd into memory after a record. */
static loaded_t *copy_file(int fd, const char *path, size_t len, char *err, int errlen, int *out_rc) {
  uint8_t *bytes;
  loaded_t *l = new_record(path, len, &bytes);
  if (!l) {
    *out_rc = anim_dbfile_fail(err, errlen, ANIM_ENOMEM, path, "out of memory");
    return NULL;
  }
  size_t at = 0;
  while (at < len) {
    ssize_t n = read(fd, bytes + at, len - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *out_rc = n < 0 ? anim_dbfile_fail(err, errlen, ANIM_EIO, path, strerror(errno))
                      : anim_dbfile_fail(err, errlen, ANIM_ETRUNCATED, path, "the file shrank while it was read");
      free(l);
      return NULL;
    }
    at += (size_t)n;
  }
  l->pub.bytes = bytes;
  l->pub.size = len;
  return l;
}

/* Maps fd read-only and records what the check compares. */
static loaded_t *map_file(int fd, const char *path, const struct stat *st, char *err, int errlen, int *out_rc) {
  loaded_t *l = new_record(path, 0, NULL);
  if (!l) {
    *out_rc = anim_dbfile_fail(err, errlen, ANIM_ENOMEM, path, "out of memory");
    return NULL;
  }
  /* Every byte is read for its checksum: populate the mapping in one go
   * rather than one page fault per 4 KiB. */
  void *map = mmap(NULL, (size_t)st->st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  if (map == MAP_FAILED) {
    *out_rc = anim_dbfile_fail(err, errlen, ANIM_EIO, path, strerror(errno));
    free(l);
    return NULL;
  }
  l->pub.bytes = map;
  l->pub.size = (size_t)st->st_size;
  l->pub.mapped = 1;
  l->fd = fd;
  l->size = st->st_size;
  l->mtime = st->st_mtim;
  return l;
}

void anim_dbfile_options_default(anim_dbfile_options_t *o) {
  o->copy_max_bytes = ANIM_DBFILE_COPY_MAX_DEFAULT;
  const char *env = getenv("ANIM_DBFILE_COPY_MAX");
  if (env && *env >= '0' && *env <= '9') {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(env, &end, 10);
    if (!errno && !*end) o->copy_max_bytes = (size_t)v;
  }
}

int anim_dbfile_load_with(anim_database_t *out, const char *path, const anim_dbfile_options_t *options, char *err,
                          int errlen) {
  anim_dbfile_options_t defaults;
  if (!options) anim_dbfile_options_default(&defaults), options = &defaults;
  memset(out, 0, sizeof *out);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return anim_dbfile_fail(err, errlen, errno == ENOENT ? ANIM_ENOTFOUND : ANIM_EIO, path, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return anim_dbfile_fail(err, errlen, ANIM_EIO, path, "not a regular file");
  }
  size_t len = (size_t)st.st_size;
  if (len < HEADER_SIZE) {
    close(fd);
    return anim_dbfile_fail(err, errlen, ANIM_ETRUNCATED, path, "shorter than the 64-byte header");
  }
  int rc = 0, mapped = len > options->copy_max_bytes;
  loaded_t *l = mapped ? map_file(fd, path, &st, err, errlen, &rc) : copy_file(fd, path, len, err, errlen, &rc);
  if (!mapped || !l) close(fd);
  if (!l) return rc;
  rc = anim_dbfile_parse(out, l->pub.bytes, l->pub.size, path, err, errlen);
  out->storage = l;
  out->storage_size = l->pub.size;
  out->release = release_loaded;
  out->check = mapped ? check_mapped : NULL;
  if (rc) anim_database_free(out);
  return rc;
}

int anim_dbfile_load(anim_database_t *out, const char *path, char *err, int errlen) {
  return anim_dbfile_load_with(out, path, NULL, err, errlen);
}
