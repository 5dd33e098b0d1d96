/*
 * test_dbfile.c: the database file. Damaged files first (truncated at many
 * offsets, a flipped byte in every section, bad magic/version/table), then
 * the round trip: every array and the version come back bit for bit, and the
 * write is atomic (no temporary file left, an existing file replaced whole).
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "anim_error.h"
#include "dbfile.h"
#include "procgen.h"

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

static void test_truncated_files(void **state) {
  char err[256];
  const size_t cuts[] = {0, 10, 63, 64, 100, 500, 4096, nbytes / 2, nbytes - 64, nbytes - 1};
  for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
    int rc = parse(bytes, cuts[i], err, sizeof err);
    if (rc != ANIM_ETRUNCATED) fail_msg("cut at %zu: %s (%s)", cuts[i], anim_err_name(rc), err);
  }
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
  free(copy);
  anim_database_t out;
  assert_int_equal(anim_dbfile_load(&out, "/nonexistent/x.animdb", err, sizeof err), ANIM_ENOTFOUND);
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
  assert_memory_equal(back.features.values, db.features.values, (size_t)db.features.rows * (size_t)db.features.cols * sizeof(float));
  assert_memory_equal(back.features.scale, db.features.scale, (size_t)db.features.cols * sizeof(float));
  assert_int_equal(back.features.schema.nterms, db.features.schema.nterms);
  assert_string_equal(back.features.schema.terms[0].bone, db.features.schema.terms[0].bone);
  /* Loaded arrays live in the file mapping, not in copies. */
  assert_true((uint8_t *)back.local_positions > (uint8_t *)back.mapping &&
              (uint8_t *)back.local_positions < (uint8_t *)back.mapping + back.mapping_size);
  anim_database_free(&back);
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
  DIR *d = opendir(dir);
  int files = 0;
  struct dirent *e;
  while ((e = readdir(d)))
    if (e->d_name[0] != '.') files++;
  closedir(d);
  assert_int_equal(files, 1);
  /* A write that cannot happen leaves the old file alone. */
  assert_int_equal(anim_dbfile_write(&db, "/nonexistent-dir/x.animdb", err, sizeof err), ANIM_EIO);
  snprintf(db.name, sizeof db.name, "default");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_truncated_files),
      cmocka_unit_test(test_flipped_byte_in_every_section),
      cmocka_unit_test(test_bad_headers),
      cmocka_unit_test(test_round_trip),
      cmocka_unit_test(test_atomic_overwrite),
  };
  return cmocka_run_group_tests_name("dbfile", tests, setup, teardown);
}
