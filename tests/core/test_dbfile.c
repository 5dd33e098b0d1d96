/*
 * test_dbfile.c: the database file. Invalid arguments and damaged files first
 * (truncated at many offsets, a flipped byte in every section, bad
 * magic/version, a section table pointing outside the file or misaligned or
 * overlapping, nonzero padding, well-sealed files with inconsistent
 * contents or with a value that is not finite, fuzz_dbfile's input of that
 * kind), then the round trip: every array and the version come back bit
 * for bit; the write is atomic (no temporary file left, an existing file
 * replaced whole, a failed write leaves the old file untouched, a database
 * with a value that is not finite is refused before anything is written); a
 * 1M-frame file round-trips mapped (its load time is printed, not
 * asserted); a file truncated or rewritten in place under a loaded database
 * never reaches a copied one, and makes a mapped one's check fail.
 */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "anim_error.h"
#include "offline/dbfile_write.h"
#include "base/hash.h"
#include "offline/procgen.h"

static anim_database_t db;
static uint8_t *bytes;
static size_t nbytes;
static char dir[64] = "/tmp/animdb-test-XXXXXX", path[128];

static int setup(void **state) {
  char err[256];
  if (!mkdtemp(dir)) return -1;
  snprintf(path, sizeof path, "%s/default.animdb", dir);
  if (anim_procgen_database(&db, NULL, err, sizeof err) || anim_dbfile_write(&db, path, err, sizeof err)) return -1;
  FILE *f = fopen(path, "rb");
  fseek(f, 0, SEEK_END);
  nbytes = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  bytes = malloc(nbytes);
  size_t got = fread(bytes, 1, nbytes, f);
  fclose(f);
  return got == nbytes ? 0 : -1;
}

static int teardown(void **state) {
  anim_database_free(&db);
  free(bytes);
  unlink(path);
  rmdir(dir);
  return 0;
}

static int parse(const uint8_t *data, size_t len, char *err, int errlen) {
  anim_database_t out;
  int rc = anim_dbfile_parse(&out, data, len, "mem", err, errlen);
  if (rc == 0) anim_database_free(&out);
  return rc;
}

/* Header and table fields, as laid out in dbfile.h. */
#define NSECTIONS_AT 16
#define DB_VERSION_AT 40
#define CHECKSUM_AT 32
#define TABLE_AT 64
#define ENTRY_SIZE 32

static uint32_t nsections_of(const uint8_t *file) {
  uint32_t n;
  memcpy(&n, file + NSECTIONS_AT, 4);
  return n;
}

static uint64_t entry_field(const uint8_t *file, uint32_t s, int at) {
  uint64_t v;
  memcpy(&v, file + TABLE_AT + ENTRY_SIZE * s + at, 8);
  return v;
}

static void set_entry_field(uint8_t *file, uint32_t s, int at, uint64_t v) {
  memcpy(file + TABLE_AT + ENTRY_SIZE * s + at, &v, 8);
}

static uint32_t section_index(const uint8_t *file, const char *tag) {
  for (uint32_t s = 0; s < nsections_of(file); s++)
    if (memcmp(file + TABLE_AT + ENTRY_SIZE * s, tag, 4) == 0) return s;
  fail_msg("no section %s", tag);
  return 0;
}

/* Recomputes every section checksum and the header checksum, as a writer
 * would: what is left for the loader to catch is the content itself. */
static void reseal_len(uint8_t *file, size_t len) {
  uint32_t n = nsections_of(file);
  for (uint32_t s = 0; s < n; s++) {
    uint64_t offset = entry_field(file, s, 8), size = entry_field(file, s, 16);
    if (offset <= len && size <= len - offset) /* sections left outside keep their checksum */
      set_entry_field(file, s, 24, anim_hash64(file + offset, size, 0));
  }
  uint64_t version;
  memcpy(&version, file + DB_VERSION_AT, 8);
  uint64_t sum = anim_hash64(file + TABLE_AT, (size_t)n * ENTRY_SIZE, version);
  memcpy(file + CHECKSUM_AT, &sum, 8);
}

static void reseal(uint8_t *file) { reseal_len(file, nbytes); }

static uint8_t *copy_of_file(void) {
  uint8_t *copy = malloc(nbytes);
  assert_non_null(copy);
  memcpy(copy, bytes, nbytes);
  return copy;
}

static void test_invalid_arguments(void **state) {
  char err[256];
  anim_database_t out;
  assert_int_equal(anim_dbfile_parse(&out, NULL, 0, "mem", err, sizeof err), ANIM_EINVAL);
  /* The arrays are used in place, so a misaligned buffer is refused. */
  assert_int_equal(anim_dbfile_parse(&out, bytes + 4, nbytes - 4, "mem", err, sizeof err), ANIM_EINVAL);
  assert_non_null(strstr(err, "aligned"));
  assert_int_equal(anim_dbfile_load(&out, "/nonexistent/x.animdb", err, sizeof err), ANIM_ENOTFOUND);
  assert_int_equal(anim_dbfile_load(&out, dir, err, sizeof err), ANIM_EIO); /* a folder */
  assert_null(out.storage);
  assert_null(out.release);
  assert_int_equal(anim_dbfile_write(&db, "/nonexistent-dir/x.animdb", err, sizeof err), ANIM_EIO);
  assert_non_null(strstr(err, "/nonexistent-dir/x.animdb"));
  anim_database_t invalid = db;
  invalid.nranges = 0;
  assert_int_equal(anim_dbfile_write(&invalid, path, err, sizeof err), ANIM_EFORMAT);
}

/* The checksum's values are part of the file format (and of database
 * versions): known answers pin them, so a change shows up here first. */
static void test_hash_known_answers(void **state) {
  uint8_t data[101];
  for (int i = 0; i < 101; i++) data[i] = (uint8_t)(i * 7 + 1);
  assert_true(anim_hash64("", 0, 0) == 0x9090306c6e91ed59ull);
  assert_true(anim_hash64("animserver", 10, 0) == 0x349c4579ccdaad98ull);
  assert_true(anim_hash64(data, 100, 0) == 0x6856df026bb3d628ull);
  assert_true(anim_hash64(data, 100, 42) == 0x46c343251d9d38dfull);
  /* Any alignment gives the same value; every length and every bit counts. */
  uint8_t shifted[101];
  memcpy(shifted + 1, data, 100);
  assert_true(anim_hash64(shifted + 1, 100, 0) == anim_hash64(data, 100, 0));
  for (size_t len = 0; len < 100; len++) assert_true(anim_hash64(data, len, 0) != anim_hash64(data, len + 1, 0));
  for (int bit = 0; bit < 8 * 100; bit++) {
    data[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    assert_true(anim_hash64(data, 100, 0) != 0x6856df026bb3d628ull);
    data[bit / 8] ^= (uint8_t)(1u << (bit % 8));
  }
}

static void test_truncated_files(void **state) {
  char err[256];
  /* Every length through the header, the table and the first sections, then
   * a prime stride through the rest, then the last bytes. */
  size_t checked = 0;
  for (size_t cut = 0; cut < nbytes; cut += cut < 8192 ? 1 : (cut + 4099 < nbytes - 256 ? 4099 : 1)) {
    int rc = parse(bytes, cut, err, sizeof err);
    if (rc != ANIM_ETRUNCATED) fail_msg("cut at %zu of %zu: %s (%s)", cut, nbytes, anim_err_name(rc), err);
    checked++;
  }
  assert_true(checked > 8192);
  /* A truncated file on disk says so too. */
  char cut_path[160];
  snprintf(cut_path, sizeof cut_path, "%s/cut.animdb", dir);
  FILE *f = fopen(cut_path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(bytes, 1, nbytes / 3, f), nbytes / 3);
  fclose(f);
  anim_database_t out;
  assert_int_equal(anim_dbfile_load(&out, cut_path, err, sizeof err), ANIM_ETRUNCATED);
  assert_non_null(strstr(err, cut_path));
  unlink(cut_path);
}

static void test_flipped_byte_in_every_section(void **state) {
  char err[256];
  uint32_t nsections;
  memcpy(&nsections, bytes + 16, 4);
  uint8_t *copy = malloc(nbytes);
  for (uint32_t s = 0; s < nsections; s++) {
    uint64_t offset, size;
    memcpy(&offset, bytes + 64 + 32 * s + 8, 8);
    memcpy(&size, bytes + 64 + 32 * s + 16, 8);
    if (size == 0) continue;
    memcpy(copy, bytes, nbytes);
    copy[offset + size / 2] ^= 0x40;
    int rc = parse(copy, nbytes, err, sizeof err);
    if (rc != ANIM_ECHECKSUM) fail_msg("section %u: %s (%s)", s, anim_err_name(rc), err);
    assert_non_null(strstr(err, "checksum"));
  }
  /* The table itself (a section's size) is covered by the header checksum. */
  memcpy(copy, bytes, nbytes);
  copy[64 + 16] ^= 1;
  assert_int_equal(parse(copy, nbytes, err, sizeof err), ANIM_ECHECKSUM);
  free(copy);
}

static void test_section_table_damage(void **state) {
  char err[256];
  uint32_t feat = section_index(bytes, "FEAT"), meta = section_index(bytes, "META");
  uint64_t feat_offset = entry_field(bytes, feat, 8), feat_size = entry_field(bytes, feat, 16);
  struct {
    const char *what;
    uint32_t section;
    int field; /* 8 offset, 16 size */
    uint64_t value;
  } cases[] = {
      {"offset past the end", feat, 8, nbytes + 64},
      {"offset near 2^64", feat, 8, UINT64_MAX - 63},
      {"size past the end", feat, 16, nbytes},
      {"size near 2^64", feat, 16, UINT64_MAX},
      {"misaligned offset", feat, 8, feat_offset + 8},
      {"overlapping the previous section", feat, 8, feat_offset - 64},
      {"inside the table", meta, 8, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    uint8_t *copy = copy_of_file();
    set_entry_field(copy, cases[i].section, cases[i].field, cases[i].value);
    reseal(copy);
    int rc = parse(copy, nbytes, err, sizeof err);
    if (rc != ANIM_EFORMAT) fail_msg("%s: %s (%s)", cases[i].what, anim_err_name(rc), err);
    free(copy);
  }
  /* A section shorter than its contents need: in bounds, checksums right,
   * but the size does not match the counts. */
  uint8_t *copy = copy_of_file();
  set_entry_field(copy, feat, 16, feat_size - 4);
  memset(copy + feat_offset + feat_size - 4, 0, 4); /* now padding, which must be zero */
  reseal(copy);
  assert_int_equal(parse(copy, nbytes, err, sizeof err), ANIM_EFORMAT);
  assert_non_null(strstr(err, "FEAT"));
  free(copy);
}

static void test_padding_and_reserved_bytes(void **state) {
  char err[256];
  uint32_t meta = section_index(bytes, "META");
  uint64_t end = entry_field(bytes, meta, 8) + entry_field(bytes, meta, 16);
  uint8_t *copy = copy_of_file();
  assert_true(end % 64 != 0); /* META is followed by padding */
  copy[end] = 1;
  assert_int_equal(parse(copy, nbytes, err, sizeof err), ANIM_EFORMAT);
  assert_non_null(strstr(err, "padding"));
  memcpy(copy, bytes, nbytes);
  copy[60] = 1; /* reserved header bytes */
  assert_int_equal(parse(copy, nbytes, err, sizeof err), ANIM_EFORMAT);
  free(copy);
}

/* Files a buggy writer could seal correctly: every checksum right, contents wrong. */
static void test_sealed_but_inconsistent(void **state) {
  char err[256];
  uint64_t meta_at = entry_field(bytes, section_index(bytes, "META"), 8);
  uint64_t skel_at = entry_field(bytes, section_index(bytes, "SKEL"), 8);
  uint64_t rang_at = entry_field(bytes, section_index(bytes, "RANG"), 8);
  /* META: name[64], frame_rate, nframes, nbones, nranges, ntags, ncontacts, contact_bones[4]. */
  struct {
    const char *what;
    uint64_t at;
    int32_t value;
  } cases[] = {
      {"zero frames", meta_at + 68, 0},
      {"more frames than the arrays hold", meta_at + 68, 1 << 30},
      {"negative bone count", meta_at + 72, -1},
      {"too many bones", meta_at + 72, 1000},
      {"too many tags", meta_at + 80, 33},
      {"contact bone out of range", meta_at + 88, 500},
      {"bone 1 parented to itself", skel_at + 1 * 80 + 64, 1},
      {"first range not at frame 0", rang_at, 5},
      {"range ends past the frames", rang_at + 4, 1 << 30},
      /* The feature schema (found by fuzz_dbfile): META's terms start at 244,
       * 112 bytes each (kind, bone[64], weight, halflife, nsamples at +76,
       * frame offsets); the default schema's term 0 is LeftFoot's position,
       * term 5 the trajectory positions (3 samples, 6 columns). */
      {"feature term naming no bone", meta_at + 244 + 4, 0x58585858 /* "XXXXFoot" */},
      {"trajectory term of 2 samples in a 6-column group", meta_at + 244 + 5 * 112 + 76, 2},
      {"feature term of an unknown kind", meta_at + 244 + 1 * 112, 9},
      /* group_dims[6] (group_dims[16] at 180): summing it overflowed an int (UBSan). */
      {"feature group of 2^31 - 2 columns", meta_at + 180 + 6 * 4, INT32_MAX - 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    uint8_t *copy = copy_of_file();
    memcpy(copy + cases[i].at, &cases[i].value, 4);
    reseal(copy);
    int rc = parse(copy, nbytes, err, sizeof err);
    if (rc != ANIM_EFORMAT) fail_msg("%s: %s (%s)", cases[i].what, anim_err_name(rc), err);
    free(copy);
  }
  /* An unterminated name. */
  uint8_t *copy = copy_of_file();
  memset(copy + meta_at, 'x', 64);
  reseal(copy);
  assert_int_equal(parse(copy, nbytes, err, sizeof err), ANIM_EFORMAT);
  /* An unterminated range name (start, stop, tag mask, then name[64]): it
   * used to load, and be read past its end as a C string. */
  memcpy(copy, bytes, nbytes);
  memset(copy + rang_at + 12, 'x', 64);
  reseal(copy);
  assert_int_equal(parse(copy, nbytes, err, sizeof err), ANIM_EFORMAT);
  assert_non_null(strstr(err, "range name"));
  /* A trajectory term of 8 samples (offsets > 0, a valid term) whose group
   * keeps 6 columns: readers would index 16 columns from its start. */
  memcpy(copy, bytes, nbytes);
  int32_t eight = 8, offsets[8] = {10, 20, 30, 40, 50, 60, 70, 80};
  memcpy(copy + meta_at + 244 + 6 * 112 + 76, &eight, 4);
  memcpy(copy + meta_at + 244 + 6 * 112 + 80, offsets, sizeof offsets);
  reseal(copy);
  assert_int_equal(parse(copy, nbytes, err, sizeof err), ANIM_EFORMAT);
  assert_non_null(strstr(err, "columns"));
  /* The unchanged bytes resealed are still a valid file (the helper is right). */
  memcpy(copy, bytes, nbytes);
  reseal(copy);
  assert_int_equal(parse(copy, nbytes, err, sizeof err), 0);
  free(copy);
}

/* A float of section tag at index (floats from the section's start), set
 * to value in a copy of the file and resealed: refused with ANIM_EFORMAT
 * and a message holding expect; through the loader too, the message then
 * naming the file. */
static void refuse_value(const char *tag, size_t index, float value, const char *expect) {
  char err[256];
  uint8_t *copy = copy_of_file();
  uint64_t at = entry_field(bytes, section_index(bytes, tag), 8);
  memcpy(copy + at + index * sizeof(float), &value, sizeof value);
  reseal(copy);
  int rc = parse(copy, nbytes, err, sizeof err);
  if (rc != ANIM_EFORMAT || !strstr(err, expect))
    fail_msg("%s[%zu] = %g: %s (%s), expected EFORMAT naming \"%s\"", tag, index, (double)value, anim_err_name(rc), err,
             expect);
  char bad_path[160];
  snprintf(bad_path, sizeof bad_path, "%s/not-finite.animdb", dir);
  FILE *f = fopen(bad_path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(copy, 1, nbytes, f), nbytes);
  fclose(f);
  anim_database_t out;
  assert_int_equal(anim_dbfile_load(&out, bad_path, err, sizeof err), ANIM_EFORMAT);
  assert_non_null(strstr(err, bad_path));
  assert_non_null(strstr(err, expect));
  assert_null(out.storage);
  unlink(bad_path);
  free(copy);
}

/* A sealed file with a feature, a normalization or a pose value that is not
 * finite is refused at load, naming the first bad row and column (it used
 * to load, and the k-d tree to skip the leaf holding the row). */
static void test_values_not_finite(void **state) {
  size_t cols = (size_t)db.features.cols, row = (size_t)db.nframes / 2, col = cols - 1;
  assert_true(cols > 1 && db.nbones > 2);
  char expect[192];
  snprintf(expect, sizeof expect, "FEAT row %zu column %zu is not finite", row, col);
  refuse_value("FEAT", row * cols + col, NAN, expect);
  refuse_value("FEAT", row * cols + col, INFINITY, expect);
  snprintf(expect, sizeof expect, "FEAT row 0 column 1 is not finite");
  refuse_value("FEAT", 1, -INFINITY, expect);
  /* Normalization: a query is (raw - offset) / scale. */
  refuse_value("FOFF", 3, NAN, "FOFF/FSCL column 3");
  refuse_value("FSCL", 4, INFINITY, "FOFF/FSCL column 4");
  refuse_value("FSCL", 5, 0.0f, "FOFF/FSCL column 5");
  /* Poses, by frame and bone: GROT holds 4 floats a bone, LPOS 3. */
  size_t frame = 7, bone = 2, nbones = (size_t)db.nbones;
  snprintf(expect, sizeof expect, "GROT frame %zu bone %zu (%.63s) is not finite", frame, bone,
           db.skeleton.names[bone]);
  refuse_value("GROT", 4 * (frame * nbones + bone) + 3, NAN, expect);
  snprintf(expect, sizeof expect, "LPOS frame %zu bone 0 (%.63s) is not finite", (size_t)db.nframes - 1,
           db.skeleton.names[0]);
  refuse_value("LPOS", 3 * ((size_t)db.nframes - 1) * nbones + 1, INFINITY, expect);
  /* The largest finite float is a value like any other; the file unchanged still loads. */
  uint8_t *copy = copy_of_file();
  uint64_t at = entry_field(bytes, section_index(bytes, "FEAT"), 8);
  float big = 3.4028235e38f;
  memcpy(copy + at + (row * cols + col) * sizeof(float), &big, sizeof big);
  reseal(copy);
  char err[256];
  assert_int_equal(parse(copy, nbytes, err, sizeof err), 0);
  free(copy);
  anim_database_t out;
  assert_int_equal(anim_dbfile_load(&out, path, err, sizeof err), 0);
  assert_int_equal(out.features.cols, db.features.cols);
  anim_database_free(&out);
}

/* The input fuzz_dbfile found (a NaN feature in a sealed file, which the
 * k-d tree then quantized), resealed as the harness does: now refused. */
static void test_fuzz_input_not_finite(void **state) {
  const char *src = getenv("ANIM_SOURCE_DIR");
  char input[512], err[256];
  snprintf(input, sizeof input, "%s/tests/fuzz/corpus/fuzz_dbfile/kdtree-nonfinite-row", src && *src ? src : ".");
  FILE *f = fopen(input, "rb");
  if (!f) fail_msg("%s: cannot open (run from the source folder or set ANIM_SOURCE_DIR)", input);
  uint8_t *file = malloc(1 << 20);
  assert_non_null(file);
  size_t len = fread(file, 1, 1 << 20, f);
  fclose(f);
  assert_true(len >= 64 + ENTRY_SIZE);
  reseal_len(file, len);
  assert_int_equal(parse(file, len, err, sizeof err), ANIM_EFORMAT);
  assert_non_null(strstr(err, "FEAT row 12 column 11 is not finite"));
  free(file);
}

static void test_bad_headers(void **state) {
  char err[256];
  uint8_t *copy = malloc(nbytes);
  memcpy(copy, bytes, nbytes);
  copy[0] = 'X';
  assert_int_equal(parse(copy, nbytes, err, sizeof err), ANIM_EFORMAT);
  assert_non_null(strstr(err, "magic"));
  memcpy(copy, bytes, nbytes);
  copy[8] = 99; /* format version */
  assert_int_equal(parse(copy, nbytes, err, sizeof err), ANIM_EVERSION);
  memcpy(copy, bytes, nbytes);
  copy[12] = 1, copy[13] = 2, copy[14] = 3, copy[15] = 4; /* byte-order tag of a big-endian writer */
  assert_int_equal(parse(copy, nbytes, err, sizeof err), ANIM_EVERSION);
  memcpy(copy, bytes, nbytes);
  copy[16] = 200; /* section count */
  assert_int_equal(parse(copy, nbytes, err, sizeof err), ANIM_EFORMAT);
  /* A longer file than the header says is refused too. */
  uint8_t *longer = calloc(1, nbytes + 64);
  memcpy(longer, bytes, nbytes);
  assert_int_equal(parse(longer, nbytes + 64, err, sizeof err), ANIM_EFORMAT);
  free(longer);
  /* A different database version breaks the header checksum it seeds. */
  memcpy(copy, bytes, nbytes);
  copy[DB_VERSION_AT] ^= 1;
  assert_int_equal(parse(copy, nbytes, err, sizeof err), ANIM_ECHECKSUM);
  free(copy);
}

static void test_round_trip(void **state) {
  anim_database_t back;
  char err[256];
  assert_int_equal(anim_dbfile_load(&back, path, err, sizeof err), 0);
  assert_true(back.version == db.version);
  assert_string_equal(back.name, db.name);
  assert_int_equal(back.nframes, db.nframes);
  assert_int_equal(back.nbones, db.nbones);
  assert_int_equal(back.nranges, db.nranges);
  assert_int_equal(back.ntags, db.ntags);
  size_t n = (size_t)db.nframes * (size_t)db.nbones;
  assert_memory_equal(back.local_positions, db.local_positions, n * sizeof(vec3));
  assert_memory_equal(back.local_rotations, db.local_rotations, n * sizeof(quat));
  assert_memory_equal(back.global_velocities, db.global_velocities, n * sizeof(vec3));
  assert_memory_equal(back.global_angular_velocities, db.global_angular_velocities, n * sizeof(vec3));
  assert_memory_equal(back.contacts, db.contacts, (size_t)db.nframes * (size_t)db.ncontacts);
  assert_memory_equal(back.ranges, db.ranges, (size_t)db.nranges * sizeof *db.ranges);
  assert_memory_equal(back.features.values, db.features.values,
                      (size_t)db.features.rows * (size_t)db.features.cols * sizeof(float));
  assert_memory_equal(back.features.scale, db.features.scale, (size_t)db.features.cols * sizeof(float));
  assert_int_equal(back.features.schema.nterms, db.features.schema.nterms);
  assert_string_equal(back.features.schema.terms[0].bone, db.features.schema.terms[0].bone);
  /* A small file is read into memory, and the arrays point into that one copy. */
  const anim_dbfile_storage_t *storage = back.storage;
  assert_non_null(storage);
  assert_false(storage->mapped);
  assert_int_equal(storage->size, nbytes);
  assert_true((const uint8_t *)back.local_positions > storage->bytes &&
              (const uint8_t *)back.local_positions < storage->bytes + storage->size);
  assert_int_equal(anim_database_check(&back, err, sizeof err), 0);
  anim_database_free(&back);
  assert_null(back.storage);
}

/* Files in the test's folder. */
static int count_files(void) {
  DIR *d = opendir(dir);
  int files = 0;
  struct dirent *e;
  while ((e = readdir(d)))
    if (e->d_name[0] != '.') files++;
  closedir(d);
  return files;
}

static void test_atomic_overwrite(void **state) {
  char err[256];
  /* Overwrite with another database: the file is whole, and nothing else is left. */
  anim_database_t other;
  assert_int_equal(anim_dbfile_load(&other, path, err, sizeof err), 0);
  anim_database_free(&other);
  snprintf(db.name, sizeof db.name, "renamed");
  assert_int_equal(anim_dbfile_write(&db, path, err, sizeof err), 0);
  assert_int_equal(anim_dbfile_load(&other, path, err, sizeof err), 0);
  assert_string_equal(other.name, "renamed");
  anim_database_free(&other);
  assert_int_equal(count_files(), 1);
  snprintf(db.name, sizeof db.name, "default");
}

static uint8_t *read_file(const char *file, size_t *out_len) {
  FILE *f = fopen(file, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  *out_len = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *data = malloc(*out_len ? *out_len : 1);
  if (fread(data, 1, *out_len, f) != *out_len) *out_len = 0;
  fclose(f);
  return data;
}

/* A write that fails half way (the file size limit stands in for a full
 * disk) reports ANIM_EIO, leaves the previous file byte for byte, and removes
 * its temporary file. */
static void test_failed_write_keeps_old_file(void **state) {
  char err[256];
  size_t before_len, after_len;
  assert_int_equal(anim_dbfile_write(&db, path, err, sizeof err), 0);
  uint8_t *before = read_file(path, &before_len);
  struct rlimit saved, limited;
  assert_int_equal(getrlimit(RLIMIT_FSIZE, &saved), 0);
  limited = saved;
  limited.rlim_cur = before_len / 2;
  void (*old_handler)(int) = signal(SIGXFSZ, SIG_IGN); /* else the process is killed */
  assert_int_equal(setrlimit(RLIMIT_FSIZE, &limited), 0);
  snprintf(db.name, sizeof db.name, "half");
  int rc = anim_dbfile_write(&db, path, err, sizeof err);
  setrlimit(RLIMIT_FSIZE, &saved);
  signal(SIGXFSZ, old_handler);
  snprintf(db.name, sizeof db.name, "default");
  assert_int_equal(rc, ANIM_EIO);
  assert_non_null(strstr(err, "cannot write"));
  uint8_t *after = read_file(path, &after_len);
  assert_int_equal(after_len, before_len);
  assert_memory_equal(after, before, before_len);
  assert_int_equal(count_files(), 1);
  free(before), free(after);
}

/* anim_dbfile_write(db, target) refuses db with ANIM_EFORMAT and a message
 * naming target and holding expect, before writing anything: the folder
 * holds the same files as before (no temporary one), and target, when it
 * existed, is byte for byte what it was. */
static void refuse_write(const char *target, const char *expect) {
  char err[256];
  size_t before_len = 0, after_len = 0;
  uint8_t *before = read_file(target, &before_len);
  int files = count_files();
  int rc = anim_dbfile_write(&db, target, err, sizeof err);
  if (rc != ANIM_EFORMAT || !strstr(err, expect) || !strstr(err, target))
    fail_msg("write %s: %s (%s), expected EFORMAT naming \"%s\"", target, anim_err_name(rc), err, expect);
  assert_int_equal(count_files(), files);
  uint8_t *after = read_file(target, &after_len);
  if (!before) {
    assert_null(after);
  } else {
    assert_non_null(after);
    assert_int_equal(after_len, before_len);
    assert_memory_equal(after, before, before_len);
  }
  free(before), free(after);
}

/* The writer refuses what the loader would (a value that is not finite, a
 * scale that is not > 0), with the loader's message: a new file is not
 * created, an existing one is not replaced. */
static void test_write_refuses_not_finite(void **state) {
  char fresh[160], expect[192];
  snprintf(fresh, sizeof fresh, "%s/fresh.animdb", dir);
  assert_int_equal(anim_dbfile_write(&db, path, expect, sizeof expect), 0);
  size_t cols = (size_t)db.features.cols, row = (size_t)db.nframes / 3, col = 2;
  assert_true(cols > col);
  float *feature = &db.features.values[row * cols + col], saved = *feature;
  *feature = NAN;
  snprintf(expect, sizeof expect, "FEAT row %zu column %zu is not finite", row, col);
  refuse_write(fresh, expect);
  refuse_write(path, expect);
  *feature = saved;
  saved = db.features.scale[col];
  db.features.scale[col] = 0.0f;
  snprintf(expect, sizeof expect, "FOFF/FSCL column %zu", col);
  refuse_write(fresh, expect);
  refuse_write(path, expect);
  db.features.scale[col] = saved;
  /* Poses name frame and bone; the skeleton names the bone. */
  size_t frame = 5, bone = 1;
  float *w = &db.global_rotations[frame * (size_t)db.nbones + bone].w;
  saved = *w;
  *w = INFINITY;
  snprintf(expect, sizeof expect, "GROT frame %zu bone %zu (%.63s) is not finite", frame, bone,
           db.skeleton.names[bone]);
  refuse_write(path, expect);
  *w = saved;
  saved = db.skeleton.offsets[bone].y;
  db.skeleton.offsets[bone].y = NAN;
  snprintf(expect, sizeof expect, "SKEL bone %zu (%.63s): offset is not finite", bone, db.skeleton.names[bone]);
  refuse_write(path, expect);
  db.skeleton.offsets[bone].y = saved;
  /* Restored, the database writes and loads again. */
  char err[256];
  anim_database_t back;
  assert_int_equal(anim_dbfile_write(&db, fresh, err, sizeof err), 0);
  assert_int_equal(anim_dbfile_load(&back, fresh, err, sizeof err), 0);
  anim_database_free(&back);
  unlink(fresh);
}

/* A synthetic database of `frames` frames: 2 bones, 10 ranges, 24 feature
 * columns; every value a function of its index, so a round trip is checkable
 * without a second copy. */
static int big_value(size_t i) { return (int)(i % 1000003u); }

/* The release hook of a database put together by hand. */
static void release_big(anim_database_t *big) {
  free(big->local_positions), free(big->local_velocities), free(big->local_rotations);
  free(big->local_angular_velocities), free(big->global_positions), free(big->global_velocities);
  free(big->global_rotations), free(big->global_angular_velocities), free(big->contacts), free(big->ranges);
  free(big->features.values), free(big->features.offset), free(big->features.scale);
}

static void make_big(anim_database_t *big, int frames, int nbones) {
  memset(big, 0, sizeof *big);
  big->release = release_big;
  snprintf(big->name, sizeof big->name, "big");
  big->frame_rate = 60.0f;
  big->nframes = frames, big->nbones = nbones;
  big->skeleton.nbones = nbones;
  for (int b = 0; b < nbones; b++) {
    snprintf(big->skeleton.names[b], ANIM_NAME_MAX, "bone%d", b);
    big->skeleton.parents[b] = b - 1;
  }
  size_t n = (size_t)frames * (size_t)nbones;
  vec3 **v3[] = {&big->local_positions, &big->local_velocities, &big->local_angular_velocities,
                 &big->global_positions, &big->global_velocities, &big->global_angular_velocities};
  for (size_t a = 0; a < sizeof v3 / sizeof v3[0]; a++) {
    *v3[a] = malloc(n * sizeof(vec3));
    assert_non_null(*v3[a]);
    for (size_t i = 0; i < n; i++) (*v3[a])[i] = vec3_make((float)big_value(i), (float)a, 0.5f);
  }
  big->local_rotations = malloc(n * sizeof(quat));
  big->global_rotations = malloc(n * sizeof(quat));
  assert_non_null(big->local_rotations);
  assert_non_null(big->global_rotations);
  for (size_t i = 0; i < n; i++) big->local_rotations[i] = big->global_rotations[i] = quat_identity();
  big->nranges = 10;
  big->ranges = calloc(10, sizeof *big->ranges);
  for (int r = 0; r < 10; r++) {
    big->ranges[r].start = (int)((long)frames * r / 10);
    big->ranges[r].stop = (int)((long)frames * (r + 1) / 10);
    snprintf(big->ranges[r].name, ANIM_NAME_MAX, "range%d", r);
  }
  big->ncontacts = 1;
  big->contact_bones[0] = nbones - 1;
  big->contacts = malloc((size_t)frames);
  for (int f = 0; f < frames; f++) big->contacts[f] = (uint8_t)(f & 1);
  anim_features_t *ft = &big->features;
  ft->schema.nterms = 4;
  const anim_feature_kind_t kinds[4] = {ANIM_FEATURE_BONE_POSITION, ANIM_FEATURE_BONE_VELOCITY,
                                        ANIM_FEATURE_TRAJECTORY_POSITION, ANIM_FEATURE_TRAJECTORY_DIRECTION};
  for (int t = 0; t < 4; t++) {
    ft->schema.terms[t].kind = kinds[t];
    ft->schema.terms[t].weight = 1.0f;
    if (t < 2) snprintf(ft->schema.terms[t].bone, ANIM_FEATURE_NAME_MAX, "bone%d", nbones - 1);
    ft->schema.terms[t].nsamples = t < 2 ? 0 : 3;
    for (int k = 0; t >= 2 && k < 3; k++) ft->schema.terms[t].frame_offsets[k] = 20 * (k + 1);
    ft->group_start[t] = t < 2 ? 3 * t : 6 + 6 * (t - 2);
    ft->group_dims[t] = t < 2 ? 3 : 6;
  }
  ft->rows = frames, ft->cols = 18;
  ft->values = malloc((size_t)frames * 18 * sizeof(float));
  ft->offset = calloc(18, sizeof(float));
  ft->scale = malloc(18 * sizeof(float));
  assert_non_null(ft->values);
  for (size_t i = 0; i < (size_t)frames * 18; i++) ft->values[i] = (float)big_value(i) * 1e-3f;
  for (int j = 0; j < 18; j++) ft->scale[j] = 1.0f;
  anim_database_update_version(big);
}

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The file of a million frames (ANIM_DBFILE_BIG_FRAMES and _BONES change the
 * size), loaded as a file above the copy threshold is (mapped): arrays point
 * into the mapping and hold what was written. Times are printed for the
 * record only. */
static void test_million_frames(void **state) {
  const char *frames_env = getenv("ANIM_DBFILE_BIG_FRAMES"), *bones_env = getenv("ANIM_DBFILE_BIG_BONES");
  int frames = frames_env ? atoi(frames_env) : 1000000, nbones = bones_env ? atoi(bones_env) : 2;
  assert_true(frames >= 10 && nbones >= 1 && nbones <= ANIM_MAX_BONES);
  anim_database_t big, back;
  char err[256], big_path[160];
  snprintf(big_path, sizeof big_path, "%s/big.animdb", dir);
  make_big(&big, frames, nbones);
  double t0 = seconds();
  assert_int_equal(anim_dbfile_write(&big, big_path, err, sizeof err), 0);
  double t1 = seconds();
  anim_dbfile_options_t map_always = {0};
  int rc = anim_dbfile_load_with(&back, big_path, &map_always, err, sizeof err);
  double t2 = seconds();
  if (rc) fail_msg("%s", err);
  printf("  %d frames x %d bones, %.1f MiB: write %.3f s, load (map + verify) %.3f s\n", frames, nbones,
         (double)back.storage_size / (1024.0 * 1024.0), t1 - t0, t2 - t1);
  assert_true(back.version == big.version);
  assert_int_equal(back.nframes, frames);
  const anim_dbfile_storage_t *storage = back.storage;
  assert_true(storage->mapped);
  assert_true((const uint8_t *)back.features.values >= storage->bytes &&
              (const uint8_t *)back.features.values < storage->bytes + storage->size);
  size_t n = (size_t)frames * (size_t)nbones;
  for (size_t i = 0; i < n; i += 997) {
    assert_true(back.global_velocities[i].x == (float)big_value(i));
    assert_true(back.local_angular_velocities[i].y == 2.0f);
  }
  for (size_t i = 0; i < (size_t)frames * 18; i += 1009)
    assert_true(back.features.values[i] == (float)big_value(i) * 1e-3f);
  assert_int_equal(back.ranges[9].stop, frames);
  assert_int_equal(back.contacts[frames - 1], (frames - 1) & 1);
  anim_database_free(&back);
  assert_null(back.storage);
  anim_database_free(&big);
  unlink(big_path);
}

/* Rewrites path's first bytes in place (same size) and moves its
 * modification time, as an editor or `cp` over it would. */
static void rewrite_in_place(const char *file) {
  int fd = open(file, O_WRONLY);
  assert_true(fd >= 0);
  assert_int_equal(pwrite(fd, "XXXX", 4, 0), 4);
  struct timespec times[2] = {{0, UTIME_OMIT}, {12345, 678}};
  assert_int_equal(futimens(fd, times), 0);
  close(fd);
}

/* Issue 11: a database file truncated in place under a loaded database. A
 * copied one never notices (every array is read here, which would raise
 * SIGBUS on a vanished mapped page); a mapped one's check reports it, and
 * the caller reads nothing. Rewritten in place: the same. */
static void test_file_changed_under_a_loaded_database(void **state) {
  char err[256], victim[160];
  snprintf(victim, sizeof victim, "%s/victim.animdb", dir);
  anim_dbfile_options_t map_always = {0};
  for (int mapped = 0; mapped < 2; mapped++)
    for (int truncate_it = 0; truncate_it < 2; truncate_it++) {
      anim_database_t back;
      assert_int_equal(anim_dbfile_write(&db, victim, err, sizeof err), 0);
      assert_int_equal(anim_dbfile_load_with(&back, victim, mapped ? &map_always : NULL, err, sizeof err), 0);
      assert_int_equal(((const anim_dbfile_storage_t *)back.storage)->mapped, mapped);
      assert_int_equal(anim_database_check(&back, err, sizeof err), 0);
      if (truncate_it) assert_int_equal(truncate(victim, 100), 0);
      else rewrite_in_place(victim);
      if (mapped) {
        assert_int_equal(anim_database_check(&back, err, sizeof err), ANIM_EIO);
        assert_non_null(strstr(err, truncate_it ? "truncated" : "rewritten"));
        assert_non_null(strstr(err, "victim.animdb"));
      } else {
        assert_int_equal(anim_database_check(&back, err, sizeof err), 0);
        size_t n = (size_t)back.nframes * (size_t)back.nbones;
        assert_memory_equal(back.global_positions, db.global_positions, n * sizeof(vec3));
        assert_memory_equal(back.features.values, db.features.values,
                            (size_t)db.features.rows * (size_t)db.features.cols * sizeof(float));
      }
      anim_database_free(&back);
      /* The damaged file itself is refused whole. */
      assert_int_not_equal(anim_dbfile_load(&back, victim, err, sizeof err), 0);
    }
  unlink(victim);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_hash_known_answers),
      cmocka_unit_test(test_invalid_arguments),
      cmocka_unit_test(test_truncated_files),
      cmocka_unit_test(test_flipped_byte_in_every_section),
      cmocka_unit_test(test_bad_headers),
      cmocka_unit_test(test_section_table_damage),
      cmocka_unit_test(test_padding_and_reserved_bytes),
      cmocka_unit_test(test_sealed_but_inconsistent),
      cmocka_unit_test(test_values_not_finite),
      cmocka_unit_test(test_fuzz_input_not_finite),
      cmocka_unit_test(test_round_trip),
      cmocka_unit_test(test_atomic_overwrite),
      cmocka_unit_test(test_failed_write_keeps_old_file),
      cmocka_unit_test(test_write_refuses_not_finite),
      cmocka_unit_test(test_file_changed_under_a_loaded_database),
      cmocka_unit_test(test_million_frames),
  };
  return cmocka_run_group_tests_name("dbfile", tests, setup, teardown);
}
