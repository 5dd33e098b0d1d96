/*
 * fuzz_dbfile.c: libFuzzer target for the database file loader
 * (anim_dbfile_parse), and for what the server does with a loaded database.
 *
 * anim_dbfile_parse needs an 8-byte aligned buffer (dbfile.h): the input is
 * copied into a fresh malloc'd block of exactly its size (so ASan sees any
 * read past the end). Every input is parsed twice:
 *  1. as it is, which exercises the header, table, bounds and checksum checks;
 *  2. with every checksum recomputed (each in-bounds section's, then the
 *     header's over the table), so that mutated files get past the integrity
 *     checks and reach the semantic checks (META counts, feature schema,
 *     skeleton, ranges); without this, nearly every mutation would stop at a
 *     checksum mismatch.
 * A database that parses is then used the way the server uses one: names read
 * as C strings, search indexes of every method built and queried from a
 * frame's features and from bone and trajectory inputs (feature.h), hits
 * mapped back to their ranges, and the database freed.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "database/database.h"
#include "database/dbfile.h"
#include "database/feature.h"
#include "base/hash.h"
#include "search/search.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Offsets in the 64-byte header and the 32-byte section entries (dbfile.c). */
#define HEADER_SIZE 64
#define HEADER_NSECTIONS 16
#define HEADER_CHECKSUM 32
#define HEADER_DB_VERSION 40
#define SECTION_SIZE 32
#define MAX_SECTIONS 24

static uint32_t get32(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, sizeof v);
  return v;
}
static uint64_t get64(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, sizeof v);
  return v;
}
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, sizeof v); }

/* Recomputes the section checksums and the header checksum in place; 0 when
 * the table does not fit (then the buffer is left alone). */
static int fix_checksums(uint8_t *bytes, size_t len) {
  if (len < HEADER_SIZE) return 0;
  uint32_t count = get32(bytes + HEADER_NSECTIONS);
  if (count == 0 || count > MAX_SECTIONS || HEADER_SIZE + (size_t)count * SECTION_SIZE > len) return 0;
  uint8_t *table = bytes + HEADER_SIZE;
  for (uint32_t i = 0; i < count; i++) {
    uint8_t *s = table + (size_t)i * SECTION_SIZE;
    uint64_t offset = get64(s + 8), size = get64(s + 16);
    if (offset <= len && size <= len - offset) put64(s + 24, anim_hash64(bytes + offset, (size_t)size, 0));
  }
  put64(bytes + HEADER_CHECKSUM, anim_hash64(table, (size_t)count * SECTION_SIZE, get64(bytes + HEADER_DB_VERSION)));
  return 1;
}

static void check_name(const char *name) {
  if (!memchr(name, 0, ANIM_NAME_MAX)) {
    fprintf(stderr, "a loaded database has an unterminated name\n");
    abort();
  }
}

/* A query from bone inputs and a trajectory, as the server's search service builds one. */
static void query_from_inputs(const anim_database_t *db, float *out_normalized) {
  const anim_features_t *f = &db->features;
  const char *names[ANIM_MAX_FEATURE_TERMS];
  vec3 values[ANIM_MAX_FEATURE_TERMS];
  float trajectory[2 * ANIM_MAX_TRAJECTORY_SAMPLES];
  int nsamples[2] = {0, 0};
  for (int t = 0; t < f->schema.nterms; t++) {
    const anim_feature_term_t *term = &f->schema.terms[t];
    names[t] = term->bone;
    values[t] = vec3_make(0.1f * (float)t, 0.2f, -0.3f);
    if (term->kind == ANIM_FEATURE_TRAJECTORY_POSITION) nsamples[0] = term->nsamples;
    if (term->kind == ANIM_FEATURE_TRAJECTORY_DIRECTION) nsamples[1] = term->nsamples;
  }
  for (int i = 0; i < 2 * ANIM_MAX_TRAJECTORY_SAMPLES; i++) trajectory[i] = i % 2 ? 0.0f : 1.0f;
  anim_feature_inputs_t inputs = {names, values, values, f->schema.nterms, trajectory, nsamples[0], trajectory,
                                  nsamples[1]};
  float raw[ANIM_MAX_FEATURE_DIMS];
  char err[160];
  if (anim_features_compute_inputs(&f->schema, &inputs, raw, err, sizeof err) == 0)
    anim_features_normalize(f, raw, out_normalized);
}

/* The server indexes feature columns by schema term (group_start + d for the
 * term's dims): a loaded schema must be valid for the skeleton and each group
 * exactly as wide as its term. */
static void check_schema(const anim_database_t *db) {
  const anim_features_t *f = &db->features;
  char err[160];
  if (anim_feature_schema_validate(&f->schema, &db->skeleton, err, sizeof err) != 0) {
    fprintf(stderr, "a loaded database has an invalid feature schema: %s\n", err);
    abort();
  }
  int col = 0;
  for (int t = 0; t < f->schema.nterms; t++) {
    const anim_feature_term_t *term = &f->schema.terms[t];
    int trajectory = term->kind == ANIM_FEATURE_TRAJECTORY_POSITION || term->kind == ANIM_FEATURE_TRAJECTORY_DIRECTION;
    int dims = trajectory ? 2 * term->nsamples : 3;
    if (f->group_start[t] != col || f->group_dims[t] != dims) {
      fprintf(stderr, "a loaded database's feature group %d has %d columns, its term %d\n", t, f->group_dims[t], dims);
      abort();
    }
    col += dims;
  }
  if (col != f->cols) abort();
}

static void use_database(const anim_database_t *db) {
  check_name(db->name);
  for (int b = 0; b < db->nbones; b++) check_name(db->skeleton.names[b]);
  for (int r = 0; r < db->nranges; r++) check_name(db->ranges[r].name);
  for (int t = 0; t < db->ntags; t++) check_name(db->tag_names[t]);
  const anim_features_t *f = &db->features;
  if (!f->values || f->cols < 1) return;
  check_schema(db);
  /* The loader refuses what is not finite (dbfile.h): the search never sees it. */
  for (size_t i = 0; i < (size_t)f->rows * (size_t)f->cols; i++)
    if (!isfinite(f->values[i])) {
      fprintf(stderr, "a loaded database has a feature that is not finite (value %zu)\n", i);
      abort();
    }
  anim_search_data_t data = {f->values, f->rows, f->cols, db->ranges, db->nranges};
  float vector[ANIM_MAX_FEATURE_DIMS];
  for (int m = 0; m < ANIM_SEARCH_METHOD_COUNT; m++) {
    char err[160];
    anim_search_index_t *index = anim_search_index_build((anim_search_method_t)m, &data, err, sizeof err);
    if (!index) continue;
    for (int pass = 0; pass < 2; pass++) {
      if (pass == 0) memcpy(vector, f->values, (size_t)f->cols * sizeof *vector);
      else query_from_inputs(db, vector);
      anim_search_query_t q = {vector, 4, 0, 0.5f, 2, 3, 0};
      anim_search_hit_t hits[4];
      int count = 0;
      if (anim_search_run(index, &q, hits, &count, NULL) != 0) continue;
      for (int i = 0; i < count; i++)
        if (hits[i].frame < 0 || hits[i].frame >= db->nframes || anim_database_range_of(db, hits[i].frame) < 0) abort();
    }
    anim_search_index_free(index);
  }
}

static void parse_and_use(const uint8_t *bytes, size_t len) {
  anim_database_t db;
  char err[256];
  if (anim_dbfile_parse(&db, bytes, len, "fuzz.animdb", err, sizeof err) != 0) return;
  use_database(&db);
  anim_database_free(&db);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t *bytes = malloc(size ? size : 1); /* malloc: 16-byte aligned */
  if (!bytes) return 0;
  memcpy(bytes, data, size);
  parse_and_use(bytes, size);
  if (fix_checksums(bytes, size)) parse_and_use(bytes, size);
  free(bytes);
  return 0;
}
