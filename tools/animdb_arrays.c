/*
 * animdb_arrays.c: `animdb arrays`, a database's arrays as NumPy files, for
 * tools that train on a database (tools/lmm_train) without a second reader
 * of the .animdb format: the file is read by the core's own loader
 * (dbfile.h, every check included), or the embedded default database is
 * built by the same procgen the server uses, and what the runtime sees is
 * written out as it is.
 *
 *   animdb arrays (FILE | --procgen) -o DIR
 *
 * DIR gets one .npy per array (NumPy format 1.0, little-endian, C order):
 *   local_positions, local_velocities, local_angular_velocities  float32 [frames, bones, 3]
 *   local_rotations, global_rotations                            float32 [frames, bones, 4] (w, x, y, z)
 *   global_positions, global_velocities                          float32 [frames, bones, 3]
 *   contacts                                                     uint8   [frames, contacts]
 *   features                                                     float32 [frames, dims] (normalized)
 *   feature_offset, feature_scale                                float32 [dims]
 *   ranges                                                       int32   [ranges, 2] (start, stop)
 * and meta.json: name, version, frame_rate, frames, bone names, parents and
 * rest offsets, contact bones, and the feature terms (kind, bone, weight,
 * first column, dims, frame offsets).
 * What it does not: judge whether a trainer can use the database (the
 * trainer says why not).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "animdb_arrays.h"
#include "anim_error.h"
#include "database/dbfile.h"
#include "offline/procgen.h"

static int fail(const char *fmt, const char *a, const char *b) {
  fprintf(stderr, "animdb: ");
  fprintf(stderr, fmt, a, b);
  fputc('\n', stderr);
  return 1;
}

/* One .npy file: header padded so the data starts at a multiple of 64. */
static int write_npy(const char *dir, const char *name, const char *descr, const int *shape, int ndim,
                     const void *data, size_t item) {
  char path[4200], header[256], dims[128] = "";
  size_t count = 1;
  for (int i = 0; i < ndim; i++) {
    size_t len = strlen(dims);
    snprintf(dims + len, sizeof dims - len, "%d,%s", shape[i], i + 1 < ndim || ndim == 1 ? " " : "");
    count *= (size_t)shape[i];
  }
  int n = snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, dims);
  int total = 10 + n + 1;
  int pad = (64 - total % 64) % 64;
  memset(header + n, ' ', (size_t)pad);
  header[n + pad] = '\n';
  uint16_t hlen = (uint16_t)(n + pad + 1);
  snprintf(path, sizeof path, "%s/%s.npy", dir, name);
  FILE *f = fopen(path, "wb");
  if (!f) return fail("%s: %s", path, strerror(errno));
  unsigned char magic[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hlen & 0xff),
                             (unsigned char)(hlen >> 8)};
  int ok = fwrite(magic, 1, 10, f) == 10 && fwrite(header, 1, hlen, f) == hlen &&
           (count == 0 || fwrite(data, item, count, f) == count);
  if (fclose(f) != 0) ok = 0;
  return ok ? 0 : fail("%s: write failed%s", path, "");
}

static void json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
    else if (c < 0x20) fprintf(f, "\\u%04x", c);
    else fputc(c, f);
  }
  fputc('"', f);
}

static const char *kind_name(anim_feature_kind_t kind) {
  switch (kind) {
  case ANIM_FEATURE_BONE_POSITION: return "position";
  case ANIM_FEATURE_BONE_VELOCITY: return "velocity";
  case ANIM_FEATURE_TRAJECTORY_POSITION: return "trajectory-position";
  case ANIM_FEATURE_TRAJECTORY_DIRECTION: return "trajectory-direction";
  case ANIM_FEATURE_INERTIALIZE: return "inertialize";
  }
  return "unknown";
}

static int write_meta(const char *dir, const anim_database_t *db) {
  char path[4200];
  snprintf(path, sizeof path, "%s/meta.json", dir);
  FILE *f = fopen(path, "w");
  if (!f) return fail("%s: %s", path, strerror(errno));
  const anim_skeleton_t *sk = &db->skeleton;
  fprintf(f, "{\n  \"name\": ");
  json_string(f, db->name);
  fprintf(f, ",\n  \"version\": \"%016llx\",\n  \"frame_rate\": %.9g,\n  \"frames\": %d,\n  \"bones\": [",
          (unsigned long long)db->version, (double)db->frame_rate, db->nframes);
  for (int b = 0; b < db->nbones; b++) {
    fprintf(f, "%s\n    {\"name\": ", b ? "," : "");
    json_string(f, sk->names[b]);
    fprintf(f, ", \"parent\": %d, \"offset\": [%.9g, %.9g, %.9g]}", sk->parents[b], (double)sk->offsets[b].x,
            (double)sk->offsets[b].y, (double)sk->offsets[b].z);
  }
  fprintf(f, "\n  ],\n  \"contact_bones\": [");
  for (int c = 0; c < db->ncontacts; c++) fprintf(f, "%s%d", c ? ", " : "", db->contact_bones[c]);
  fprintf(f, "],\n  \"features\": [");
  const anim_features_t *ft = &db->features;
  for (int t = 0; ft->values && t < ft->schema.nterms; t++) {
    const anim_feature_term_t *term = &ft->schema.terms[t];
    fprintf(f, "%s\n    {\"kind\": \"%s\", \"bone\": ", t ? "," : "", kind_name(term->kind));
    json_string(f, anim_feature_term_is_bone(term) ? term->bone : "");
    fprintf(f, ", \"weight\": %.9g, \"first\": %d, \"dims\": %d, \"halflife\": %.9g, \"frame_offsets\": [",
            (double)term->weight, ft->group_start[t], ft->group_dims[t], (double)term->halflife);
    for (int i = 0; i < term->nsamples; i++) fprintf(f, "%s%d", i ? ", " : "", term->frame_offsets[i]);
    fprintf(f, "]}");
  }
  fprintf(f, "\n  ]\n}\n");
  return fclose(f) == 0 ? 0 : fail("%s: write failed%s", path, "");
}

static int write_all(const char *dir, const anim_database_t *db) {
  int F = db->nframes, B = db->nbones, C = db->ncontacts, D = db->features.values ? db->features.cols : 0;
  int s3[3] = {F, B, 3}, s4[3] = {F, B, 4}, sc[2] = {F, C}, sf[2] = {F, D}, sd[1] = {D}, sr[2] = {db->nranges, 2};
  int32_t *ranges = malloc(sizeof(int32_t) * 2 * (size_t)(db->nranges ? db->nranges : 1));
  if (!ranges) return fail("out of memory%s%s", "", "");
  for (int r = 0; r < db->nranges; r++) ranges[2 * r] = db->ranges[r].start, ranges[2 * r + 1] = db->ranges[r].stop;
  /* vec3 and quat are packed floats (anim_math.h): arrays of them are float arrays. */
  _Static_assert(sizeof(vec3) == 3 * sizeof(float) && sizeof(quat) == 4 * sizeof(float), "packed vectors");
  int rc = write_npy(dir, "local_positions", "<f4", s3, 3, db->local_positions, sizeof(float)) ||
           write_npy(dir, "local_velocities", "<f4", s3, 3, db->local_velocities, sizeof(float)) ||
           write_npy(dir, "local_angular_velocities", "<f4", s3, 3, db->local_angular_velocities, sizeof(float)) ||
           write_npy(dir, "local_rotations", "<f4", s4, 3, db->local_rotations, sizeof(float)) ||
           write_npy(dir, "global_positions", "<f4", s3, 3, db->global_positions, sizeof(float)) ||
           write_npy(dir, "global_velocities", "<f4", s3, 3, db->global_velocities, sizeof(float)) ||
           write_npy(dir, "global_rotations", "<f4", s4, 3, db->global_rotations, sizeof(float)) ||
           write_npy(dir, "contacts", "|u1", sc, 2, db->contacts, 1) ||
           write_npy(dir, "features", "<f4", sf, 2, db->features.values, sizeof(float)) ||
           write_npy(dir, "feature_offset", "<f4", sd, 1, db->features.offset, sizeof(float)) ||
           write_npy(dir, "feature_scale", "<f4", sd, 1, db->features.scale, sizeof(float)) ||
           write_npy(dir, "ranges", "<i4", sr, 2, ranges, sizeof(int32_t)) || write_meta(dir, db);
  free(ranges);
  return rc;
}

int animdb_arrays(int argc, char **argv) {
  const char *file = NULL, *out = NULL;
  int procgen = 0;
  for (int i = 2; i < argc; i++) {
    if (!strcmp(argv[i], "-o") && i + 1 < argc) out = argv[++i];
    else if (!strcmp(argv[i], "--procgen")) procgen = 1;
    else if (argv[i][0] == '-') return fail("arrays: unknown option %s%s", argv[i], ""), 2;
    else if (!file) file = argv[i];
    else return fail("arrays: one database at a time (%s and %s)", file, argv[i]), 2;
  }
  if (!out || (!file) == !procgen) {
    fputs("usage: animdb arrays (FILE | --procgen) -o DIR\n", stderr);
    return 2;
  }
  if (mkdir(out, 0777) != 0 && errno != EEXIST) return fail("%s: %s", out, strerror(errno));
  anim_database_t db;
  memset(&db, 0, sizeof db);
  char err[512];
  int rc = procgen ? anim_procgen_database(&db, NULL, err, sizeof err) : anim_dbfile_load(&db, file, err, sizeof err);
  if (rc) return fail("%s: %s", procgen ? "--procgen" : file, err);
  rc = write_all(out, &db);
  if (!rc) printf("%s: %d frames, %d bones, %d contacts, %d feature dims -> %s\n", db.name, db.nframes, db.nbones,
                  db.ncontacts, db.features.values ? db.features.cols : 0, out);
  anim_database_free(&db);
  return rc;
}
