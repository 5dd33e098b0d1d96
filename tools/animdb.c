/*
 * animdb: builds, inspects and searches database files, on the core library.
 *
 *   animdb build -o OUT.animdb [--name N] [--rate HZ] [--scale M] [--mirror] [--tag PATTERN=TAG]...
 *                [--weights SPEC] [--bone ROLE=NAME]... (BVH, FBX, glTF files or folders)...
 *   animdb build -o OUT.animdb --procgen [--name N] [--rate HZ] [--tag ...] [--weights SPEC]
 *   animdb info FILE [--json]
 *   animdb arrays (FILE | --procgen) -o DIR   (NumPy arrays for trainers: animdb_arrays.c)
 *   animdb search FILE (--frame N | --query v1,v2,...) [--k K] [--method M]
 *                [--current F] [--transition-cost C] [--ignore-surrounding N]
 *                [--ignore-range-end N] [--tag T]...
 *   animdb help [COMMAND]          (or COMMAND --help)
 *
 * Exit status: 0 ok, 1 failure (message on stderr), 2 usage error. Every
 * message on stderr is one line "animdb: ...", ended by a newline, also when
 * a progress bar was being drawn (say() ends the bar's line first).
 * What it does not: anything the core library and the importers do not
 * already do; this file only parses arguments, reports progress and prints.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "anim_error.h"
#include "animdb_arrays.h"
#include "assimp_import.h"
#include "offline/dbfile_write.h"
#include "offline/import.h"
#include "offline/procgen.h"
#include "search/search.h"

#define MAX_TAG_RULES 64
#define EXIT_USAGE 2

/* ---- help --------------------------------------------------------------------------- */

static const char build_help[] =
    "usage: animdb build -o OUT [options] PATH...     files or folders of them (name order):\n"
    "                                                  BVH (.bvh), FBX (.fbx), glTF (.gltf, .glb)\n"
    "       animdb build -o OUT --procgen [options]   the embedded procedural locomotion database\n"
    "\n"
    "  -o FILE                output database file (written atomically)\n"
    "  --name N               database name (default: \"database\", or \"default\" with --procgen)\n"
    "  --rate HZ              database frame rate (default 60)\n"
    "  --scale M              metres per file unit (default: the file's own: BVH 0.01 (centimetres),\n"
    "                         FBX its UnitScaleFactor (centimetres without one), glTF 1)\n"
    "  --mirror               also add left/right mirrored copies of every clip\n"
    "  --tag PATTERN=TAG      tag every range whose name contains PATTERN (repeatable)\n"
    "  --weights SPEC         feature weights of the default schema, either one number per term\n"
    "                         in schema order (\"0.75,0.75,1,1,1,1,1.5\") or KIND[:BONE]=W items\n"
    "                         (\"position=1,velocity:Hips=2,trajectory-direction=1\"); kinds: position,\n"
    "                         velocity, trajectory-position, trajectory-direction, inertialize\n"
    "  --bone ROLE=NAME       the bone that plays ROLE, when the names do not tell (repeatable); roles:\n"
    "                         hips, thigh-left, thigh-right (facing), foot-left, foot-right (features),\n"
    "                         toe-left, toe-right (contacts). Found by name otherwise: Mixamo, CMU,\n"
    "                         Bandai Namco, LaFAN1, GAMES-105, Unreal, Blender and Biped names.\n"
    "Clips must share one skeleton (bones matched by name, joint order free). A feature group that\n"
    "hardly varies (one straight walk) builds with a warning. A progress bar is drawn on stderr when\n"
    "it is a terminal.\n";

static const char info_help[] =
    "usage: animdb info FILE [--json]\n"
    "\n"
    "Prints the database: name, version, frames and rate, skeleton (names, parents), contact\n"
    "bones, ranges with tags, the feature schema with its per-group offsets and scales, and\n"
    "the memory the arrays take. --json prints one JSON object instead.\n";

static const char search_help[] =
    "usage: animdb search FILE (--frame N | --query v1,v2,...) [options]\n"
    "\n"
    "  --frame N              query with the stored (normalized) features of frame N\n"
    "  --query v1,v2,...      query with a normalized feature vector (one value per dim)\n"
    "  --k K                  how many matches (default 5, at most 1024)\n"
    "  --method M             brute | boxes | fast (default fast; all give the same answer)\n"
    "  --current F            the frame playing now: competes without transition cost\n"
    "  --transition-cost C    added to every candidate but the current frame (default 0)\n"
    "  --ignore-surrounding N skip candidates within N frames of --current\n"
    "  --ignore-range-end N   skip the last N frames of every range\n"
    "  --tag T                only ranges with tag T (repeatable: any of them)\n"
    "Prints rank, frame, cost and range per match.\n";

static void print_usage(FILE *to) {
  fprintf(to,
          "usage: animdb build -o OUT [--name N] [--rate HZ] [--scale M] [--mirror] [--tag PATTERN=TAG]...\n"
          "                    [--weights SPEC] [--bone ROLE=NAME]... (PATH... | --procgen)\n"
          "       animdb info FILE [--json]\n"
          "       animdb arrays (FILE | --procgen) -o DIR   its arrays as NumPy files (tools/lmm_train)\n"
          "       animdb search FILE (--frame N | --query v1,v2,...) [--k K] [--method brute|boxes|fast]\n"
          "                     [--current F] [--transition-cost C] [--ignore-surrounding N] [--ignore-range-end N]\n"
          "                     [--tag T]\n"
          "       animdb help [build|info|search]\n");
}

/* ---- messages and progress -------------------------------------------------------------------- */

/* 1 while a progress bar's line is on stderr without its newline. */
static int progress_open;

/* The one way a message reaches stderr: "animdb: " + message + one newline
 * (trailing newlines of the message folded), after ending an open progress line. */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...) {
  char message[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(message, sizeof message, fmt, ap);
  va_end(ap);
  size_t len = strlen(message);
  while (len > 0 && message[len - 1] == '\n') message[--len] = '\0';
  if (progress_open) fputc('\n', stderr), progress_open = 0;
  fprintf(stderr, "animdb: %s\n", message);
  fflush(stderr);
}

static void warn_cb(void *ctx, const char *message) { say("warning: %s", message); }

static void progress(const char *what, int done, int total, const char *item) {
  if (!isatty(STDERR_FILENO)) return;
  int width = 30, filled = total > 0 ? done * width / total : width;
  fprintf(stderr, "\r%-9s [%.*s%*s] %d/%d %-32.32s", what, filled, "##############################",
          width - filled, "", done, total, item ? item : "");
  progress_open = done != total;
  if (done == total) fputc('\n', stderr);
  fflush(stderr);
}

static int usage(void) {
  print_usage(stderr);
  return EXIT_USAGE;
}

static int usage_error(const char *fmt, const char *arg) __attribute__((format(printf, 1, 0)));
static int usage_error(const char *fmt, const char *arg) {
  char message[512];
  snprintf(message, sizeof message, fmt, arg);
  say("%s", message);
  return usage();
}

static int wants_help(int argc, char **argv) {
  for (int i = 2; i < argc; i++)
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return 1;
  return 0;
}

/* ---- strict number parsing ------------------------------------------------------------- */

static int parse_int(const char *text, long min, long max, int *out) {
  char *end;
  errno = 0;
  long v = strtol(text, &end, 10);
  if (errno || end == text || *end || v < min || v > max) return -1;
  *out = (int)v;
  return 0;
}

static int parse_float(const char *text, float min, float *out) {
  char *end;
  errno = 0;
  float v = strtof(text, &end);
  if (errno || end == text || *end || !isfinite(v) || v < min) return -1;
  *out = v;
  return 0;
}

/* ---- build ----------------------------------------------------------------------------- */

static const char *const kind_names[] = {"position", "velocity", "trajectory-position", "trajectory-direction",
                                         "inertialize"};

/* Applies SPEC (see build_help) to schema. 0, or -1 with a message printed. */
static int apply_weights(anim_feature_schema_t *schema, const char *spec) {
  char copy[1024];
  if (strlen(spec) >= sizeof copy) return say("--weights is too long"), -1;
  snprintf(copy, sizeof copy, "%s", spec);
  int positional = strchr(copy, '=') == NULL, index = 0;
  for (char *save = NULL, *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(item, '=');
    float w;
    if (positional) {
      if (parse_float(item, 0.0f, &w) || !(w > 0.0f)) return say("--weights: \"%s\" is not a weight > 0", item), -1;
      if (index < schema->nterms) schema->terms[index].weight = w;
      index++;
      continue;
    }
    if (!eq) return say("--weights: mix of plain numbers and KIND=W in \"%s\"", spec), -1;
    *eq = '\0';
    if (parse_float(eq + 1, 0.0f, &w) || !(w > 0.0f)) return say("--weights: \"%s\" is not a weight > 0", eq + 1), -1;
    char *bone = strchr(item, ':');
    if (bone) *bone++ = '\0';
    int matched = 0;
    for (int t = 0; t < schema->nterms; t++) {
      anim_feature_term_t *term = &schema->terms[t];
      if (strcmp(kind_names[term->kind], item) != 0 || (bone && strcmp(term->bone, bone) != 0)) continue;
      term->weight = w;
      matched++;
    }
    if (!matched)
      return say("--weights: no term %s%s%s in the schema (see animdb info)", item, bone ? ":" : "", bone ? bone : ""),
             -1;
  }
  if (positional && index != schema->nterms) {
    say("--weights: %d numbers for %d terms (see animdb info)", index, schema->nterms);
    return -1;
  }
  return 0;
}

/* Every importer animdb knows: BVH (the core's), then assimp's formats. */
static int importer_table(anim_importer_t *out, int max) {
  int n = 0;
  out[n++] = anim_importer_bvh;
  for (int i = 0; i < anim_assimp_importer_count && n < max; i++) out[n++] = anim_assimp_importers[i];
  return n;
}

/* What `animdb build` was asked for. */
typedef struct {
  const char *out, *name, *weights;
  float rate, scale; /* scale 0: each file's own */
  int mirror, procgen, nrules, npaths;
  char rules[MAX_TAG_RULES][2][64];
  anim_bone_names_t bones;
  char **paths;
} build_args_t;

/* The clips of every PATH, one file at a time (so progress is per file). 0 or 1 (message printed). */
static int read_clips(const build_args_t *a, anim_clip_list_t *clips) {
  anim_importer_t importers[16];
  int nimporters = importer_table(importers, 16), total = 0, done = 0, rc = 0;
  anim_import_options_t o = {a->scale};
  char err[512], **files[256];
  int counts[256];
  if (a->npaths > 256) return say("at most 256 input paths"), 1;
  for (int p = 0; p < a->npaths; p++) files[p] = NULL, counts[p] = 0;
  for (int p = 0; p < a->npaths && !rc; p++) {
    if ((rc = anim_import_list(a->paths[p], importers, nimporters, &files[p], &counts[p], err, sizeof err)))
      say("%s", err);
    total += counts[p];
  }
  if (!rc && total == 0) say("no BVH, FBX or glTF files in the given paths"), rc = 1;
  for (int p = 0; p < a->npaths && !rc; p++)
    for (int i = 0; i < counts[p] && !rc; i++) {
      const char *base = strrchr(files[p][i], '/') ? strrchr(files[p][i], '/') + 1 : files[p][i];
      progress("reading", done, total, base);
      if ((rc = anim_import_file(clips, files[p][i], importers, nimporters, &o, err, sizeof err))) say("%s", err);
      else progress("reading", ++done, total, base);
    }
  for (int p = 0; p < a->npaths; p++) anim_import_files_free(files[p], counts[p]);
  return rc ? 1 : 0;
}

static int build_from_files(anim_database_t *db, const build_args_t *a) {
  anim_clip_list_t clips = {NULL, 0, 0};
  char err[512];
  int rc = read_clips(a, &clips);
  anim_build_options_t o;
  anim_build_options_default(&o);
  o.frame_rate = a->rate;
  o.mirror = a->mirror;
  o.bones = a->bones;
  o.warn = warn_cb;
  if (!rc) {
    progress("building", 0, 1, "resampling, kinematics, contacts");
    if ((rc = anim_database_build(db, a->name ? a->name : "database", clips.clips, clips.count, &o, err, sizeof err)))
      say("%s", err);
    else
      progress("building", 1, 1, "resampling, kinematics, contacts");
  }
  anim_clip_list_free(&clips);
  return rc;
}

/* Tags, then the default schema with the requested weights and bones;
 * rebuilds the features (so also the version). Frees db on failure. */
static int finish_database(anim_database_t *db, const build_args_t *a, int rebuild) {
  char err[512];
  int rc = 0;
  for (int r = 0; r < db->nranges && !rc; r++)
    for (int k = 0; k < a->nrules && !rc; k++)
      if (strstr(db->ranges[r].name, a->rules[k][0]) && anim_database_tag_range(db, r, a->rules[k][1])) {
        say("cannot tag %s with %s (at most %d tags of < %d characters)", db->ranges[r].name, a->rules[k][1],
            ANIM_MAX_TAGS, ANIM_NAME_MAX);
        rc = ANIM_ELIMIT;
      }
  anim_feature_schema_t schema;
  if (!rc && (rebuild || a->weights)) {
    progress("features", 0, 1, "");
    if ((rc = anim_feature_schema_make(&schema, db, &a->bones, err, sizeof err)))
      say("default feature schema: %s; name it with --bone ROLE=NAME (animdb help build)", err);
    else if (a->weights && apply_weights(&schema, a->weights))
      rc = ANIM_EINVAL;
    if (!rc) {
      anim_feature_build_options_t fo = {.warn = warn_cb};
      if ((rc = anim_features_build_with(db, &schema, &fo, err, sizeof err))) say("%s", err);
    }
    if (!rc) progress("features", 1, 1, "");
  }
  if (!rc) anim_database_update_version(db); /* tags are part of the content */
  if (rc) anim_database_free(db);
  return rc;
}

/* ROLE=NAME into bones; 0 or a usage error. */
static int parse_bone(const char *v, anim_bone_names_t *bones) {
  const char *eq = strchr(v, '=');
  char role[32];
  if (!eq || eq == v || !eq[1] || (size_t)(eq - v) >= sizeof role || strlen(eq + 1) >= ANIM_NAME_MAX)
    return usage_error("--bone %s: expected ROLE=NAME", v);
  snprintf(role, sizeof role, "%.*s", (int)(eq - v), v);
  int r = anim_bone_role_parse(role);
  if (r < 0)
    return usage_error("--bone %s: roles are hips, thigh-left, thigh-right, foot-left, foot-right, toe-left, toe-right",
                       v);
  bones->names[r] = eq + 1;
  return 0;
}

static int parse_build_args(int argc, char **argv, build_args_t *a) {
  int rc = 0;
  for (int i = 2; i < argc && !rc; i++) {
    const char *arg = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    int takes_value = !strcmp(arg, "-o") || !strcmp(arg, "--name") || !strcmp(arg, "--rate") ||
                      !strcmp(arg, "--scale") || !strcmp(arg, "--tag") || !strcmp(arg, "--weights") ||
                      !strcmp(arg, "--bone");
    if (takes_value && !v) return usage_error("%s needs a value", arg);
    if (takes_value) i++;
    if (!strcmp(arg, "--mirror")) a->mirror = 1;
    else if (!strcmp(arg, "--procgen")) a->procgen = 1;
    else if (!strcmp(arg, "-o")) a->out = v;
    else if (!strcmp(arg, "--name")) a->name = v;
    else if (!strcmp(arg, "--weights")) a->weights = v;
    else if (!strcmp(arg, "--bone")) rc = parse_bone(v, &a->bones);
    else if (!strcmp(arg, "--rate"))
      rc = parse_float(v, 0.0f, &a->rate) || !(a->rate > 0.0f) || a->rate > 1000.0f
               ? usage_error("--rate %s: not in (0, 1000] Hz", v) : 0;
    else if (!strcmp(arg, "--scale"))
      rc = parse_float(v, 0.0f, &a->scale) || !(a->scale > 0.0f) ? usage_error("--scale %s: not a number > 0", v) : 0;
    else if (!strcmp(arg, "--tag")) {
      const char *eq = strchr(v, '=');
      if (!eq || eq == v || !eq[1] || strlen(eq + 1) >= 64 || eq - v >= 64)
        rc = usage_error("--tag %s: expected PATTERN=TAG", v);
      else if (a->nrules == MAX_TAG_RULES) rc = usage_error("too many --tag rules (at most %s)", "64");
      else {
        snprintf(a->rules[a->nrules][0], 64, "%.*s", (int)(eq - v), v);
        snprintf(a->rules[a->nrules][1], 64, "%s", eq + 1);
        a->nrules++;
      }
    } else if (arg[0] == '-' && arg[1]) rc = usage_error("unknown option %s", arg);
    else a->paths[a->npaths++] = (char *)arg;
  }
  if (!rc && !a->out) rc = usage_error("%s", "build needs -o OUT");
  if (!rc && a->procgen && a->npaths) rc = usage_error("%s", "--procgen takes no input paths");
  if (!rc && !a->procgen && !a->npaths) rc = usage_error("%s", "build needs files or folders (or --procgen)");
  if (!rc && a->name && (!*a->name || strlen(a->name) >= ANIM_NAME_MAX))
    rc = usage_error("--name %s: empty or too long", a->name);
  return rc;
}

static int cmd_build(int argc, char **argv) {
  if (wants_help(argc, argv)) return fputs(build_help, stdout), 0;
  static build_args_t a; /* 8 KiB of tag rules: not on the stack */
  memset(&a, 0, sizeof a);
  a.rate = 60.0f;
  if (!(a.paths = calloc((size_t)argc, sizeof *a.paths))) return say("out of memory"), 1;
  int rc = parse_build_args(argc, argv, &a);
  if (rc) {
    free(a.paths);
    return rc;
  }
  anim_database_t db;
  char err[512];
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  if (a.procgen) {
    anim_build_options_t o;
    anim_build_options_default(&o);
    o.frame_rate = a.rate;
    o.warn = warn_cb;
    progress("building", 0, 1, "procedural locomotion");
    if ((rc = anim_procgen_database(&db, &o, err, sizeof err))) say("%s", err);
    else progress("building", 1, 1, "procedural locomotion");
  } else {
    rc = build_from_files(&db, &a);
  }
  /* A failed build has freed what it made; so does a failed finish. */
  if (!rc) rc = finish_database(&db, &a, !a.procgen);
  free(a.paths);
  if (rc) return 1;
  if (a.name) snprintf(db.name, sizeof db.name, "%s", a.name);
  if ((rc = anim_dbfile_write(&db, a.out, err, sizeof err))) say("%s", err);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (!rc)
    printf("%s: %d frames, %d bones, %d ranges, %d feature dims, version %016llx (%.2f s)\n", a.out, db.nframes,
           db.nbones, db.nranges, db.features.cols, (unsigned long long)db.version,
           (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
  anim_database_free(&db);
  return rc ? 1 : 0;
}

/* ---- info ------------------------------------------------------------------------------- */

static int open_db(anim_database_t *db, const char *path) {
  char err[512];
  int rc = anim_dbfile_load(db, path, err, sizeof err);
  if (rc) say("%s (%s)", err, anim_err_name(rc));
  return rc;
}

typedef struct {
  size_t poses, contacts, ranges, features;
} sizes_t;

static sizes_t sizes_of(const anim_database_t *db) {
  size_t n = (size_t)db->nframes * (size_t)db->nbones;
  sizes_t s;
  s.poses = n * (6 * sizeof(vec3) + 2 * sizeof(quat));
  s.contacts = (size_t)db->nframes * (size_t)db->ncontacts;
  s.ranges = (size_t)db->nranges * sizeof(anim_range_t);
  s.features = ((size_t)db->features.rows + 2) * (size_t)db->features.cols * sizeof(float);
  return s;
}

static double mib(size_t bytes) { return (double)bytes / (1024.0 * 1024.0); }

static void print_info_text(const anim_database_t *db) {
  sizes_t s = sizes_of(db);
  printf("name       %s\nversion    %016llx\nframes     %d at %g Hz (%.1f s)\nbones      %d\nranges     %d\n"
         "tags       %d\nfeatures   %d dims\n",
         db->name, (unsigned long long)db->version, db->nframes, db->frame_rate, db->nframes / db->frame_rate,
         db->nbones, db->nranges, db->ntags, db->features.cols);
  const anim_dbfile_storage_t *storage = db->storage;
  printf("memory     poses %.2f MiB (8 arrays), features %.2f MiB, contacts %.2f MiB, ranges %.3f MiB;"
         " file %.2f MiB, %s\n",
         mib(s.poses), mib(s.features), mib(s.contacts), mib(s.ranges), mib(db->storage_size),
         storage && storage->mapped ? "mapped read-only" : "read into memory");
  printf("skeleton:\n");
  for (int b = 0; b < db->nbones; b++)
    printf("  %3d %-24s parent %s\n", b, db->skeleton.names[b], b ? db->skeleton.names[db->skeleton.parents[b]] : "-");
  printf("contact bones:");
  for (int c = 0; c < db->ncontacts; c++) printf(" %s", db->skeleton.names[db->contact_bones[c]]);
  printf("\nranges:\n");
  for (int r = 0; r < db->nranges; r++) {
    printf("  %3d %-44s [%6d, %6d)", r, db->ranges[r].name, db->ranges[r].start, db->ranges[r].stop);
    for (int t = 0; t < db->ntags; t++)
      if (db->ranges[r].tag_mask & (1u << t)) printf(" #%s", db->tag_names[t]);
    printf("\n");
  }
  printf("feature schema (normalized = (raw - offset) / scale):\n");
  const anim_features_t *f = &db->features;
  for (int t = 0; t < f->schema.nterms; t++) {
    const anim_feature_term_t *term = &f->schema.terms[t];
    printf("  cols %3d-%3d %-21s %-14s weight %-5g scale %-9.4g offsets", f->group_start[t],
           f->group_start[t] + f->group_dims[t] - 1, kind_names[term->kind], term->bone, term->weight,
           f->scale[f->group_start[t]]);
    for (int j = 0; j < f->group_dims[t]; j++) printf(" %.3g", f->offset[f->group_start[t] + j]);
    printf("\n");
  }
}

/* s as a JSON string (quotes, backslashes and control characters escaped). */
static void json_string(const char *s) {
  putchar('"');
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') printf("\\%c", c);
    else if (c < 0x20) printf("\\u%04x", c);
    else putchar(c);
  }
  putchar('"');
}

static void json_floats(const float *v, int n) {
  putchar('[');
  for (int i = 0; i < n; i++) printf("%s%.9g", i ? "," : "", v[i]);
  putchar(']');
}

static void print_info_json(const anim_database_t *db) {
  sizes_t s = sizes_of(db);
  printf("{\"name\":");
  json_string(db->name);
  printf(",\"version\":\"%016llx\",\"frames\":%d,\"frame_rate\":%g,\"bones\":[", (unsigned long long)db->version,
         db->nframes, db->frame_rate);
  for (int b = 0; b < db->nbones; b++) {
    printf("%s{\"name\":", b ? "," : "");
    json_string(db->skeleton.names[b]);
    printf(",\"parent\":%d}", db->skeleton.parents[b]);
  }
  printf("],\"contact_bones\":[");
  for (int c = 0; c < db->ncontacts; c++) printf("%s%d", c ? "," : "", db->contact_bones[c]);
  printf("],\"tags\":[");
  for (int t = 0; t < db->ntags; t++) printf("%s", t ? "," : ""), json_string(db->tag_names[t]);
  printf("],\"ranges\":[");
  for (int r = 0; r < db->nranges; r++) {
    printf("%s{\"name\":", r ? "," : "");
    json_string(db->ranges[r].name);
    printf(",\"start\":%d,\"stop\":%d,\"tags\":[", db->ranges[r].start, db->ranges[r].stop);
    int first = 1;
    for (int t = 0; t < db->ntags; t++)
      if (db->ranges[r].tag_mask & (1u << t)) printf("%s", first ? "" : ","), json_string(db->tag_names[t]), first = 0;
    printf("]}");
  }
  const anim_features_t *f = &db->features;
  printf("],\"features\":{\"dims\":%d,\"groups\":[", f->cols);
  for (int t = 0; t < f->schema.nterms; t++) {
    const anim_feature_term_t *term = &f->schema.terms[t];
    printf("%s{\"kind\":\"%s\",\"bone\":", t ? "," : "", kind_names[term->kind]);
    json_string(term->bone);
    printf(",\"weight\":%g,\"first_column\":%d,\"dims\":%d,\"offset\":", term->weight, f->group_start[t],
           f->group_dims[t]);
    json_floats(f->offset + f->group_start[t], f->group_dims[t]);
    printf(",\"scale\":");
    json_floats(f->scale + f->group_start[t], f->group_dims[t]);
    putchar('}');
  }
  printf("]},\"memory\":{\"poses\":%zu,\"features\":%zu,\"contacts\":%zu,\"ranges\":%zu},\"file_bytes\":%zu}\n",
         s.poses, s.features, s.contacts, s.ranges, db->storage_size);
}

static int cmd_info(int argc, char **argv) {
  if (wants_help(argc, argv)) return fputs(info_help, stdout), 0;
  const char *file = NULL;
  int json = 0;
  for (int i = 2; i < argc; i++) {
    if (!strcmp(argv[i], "--json")) json = 1;
    else if (argv[i][0] == '-' && argv[i][1]) return usage_error("unknown option %s", argv[i]);
    else if (file) return usage_error("info takes one file (got also %s)", argv[i]);
    else file = argv[i];
  }
  if (!file) return usage_error("%s", "info needs a FILE");
  anim_database_t db;
  if (open_db(&db, file)) return 1;
  if (json) print_info_json(&db);
  else print_info_text(&db);
  anim_database_free(&db);
  return 0;
}

/* ---- search ------------------------------------------------------------------------------ */

static int parse_query(const char *text, float *out, int max) {
  int n = 0;
  while (*text) {
    char *end;
    if (n == max) return -1;
    errno = 0;
    out[n++] = strtof(text, &end);
    if (end == text || errno || !isfinite(out[n - 1]) || (*end && *end != ',')) return -1;
    text = *end == ',' ? end + 1 : end;
  }
  return n;
}

static int cmd_search(int argc, char **argv) {
  if (wants_help(argc, argv)) return fputs(search_help, stdout), 0;
  if (argc < 3 || argv[2][0] == '-') return usage_error("%s", "search needs a FILE first");
  anim_search_query_t q = {NULL, 5, -1, 0.0f, 0, 0, 0};
  anim_search_method_t method = ANIM_SEARCH_FAST;
  float vector[ANIM_MAX_FEATURE_DIMS];
  const char *tags[ANIM_MAX_TAGS];
  int frame = -1, n = -1, ntags = 0, rc = 0;
  for (int i = 3; i < argc && !rc; i += 2) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!v) rc = usage_error("%s needs a value", a);
    else if (!strcmp(a, "--frame"))
      rc = parse_int(v, 0, INT_MAX, &frame) ? usage_error("--frame %s: not a frame", v) : 0;
    else if (!strcmp(a, "--query"))
      rc = (n = parse_query(v, vector, ANIM_MAX_FEATURE_DIMS)) < 0
               ? usage_error("--query %s: expected finite numbers separated by commas", v) : 0;
    else if (!strcmp(a, "--k"))
      rc = parse_int(v, 1, ANIM_SEARCH_MAX_K, &q.k) ? usage_error("--k %s: not in 1..1024", v) : 0;
    else if (!strcmp(a, "--current"))
      rc = parse_int(v, -1, INT_MAX, &q.current_frame) ? usage_error("--current %s: not a frame", v) : 0;
    else if (!strcmp(a, "--transition-cost"))
      rc = parse_float(v, 0.0f, &q.transition_cost) ? usage_error("--transition-cost %s: not a number >= 0", v) : 0;
    else if (!strcmp(a, "--ignore-surrounding"))
      rc = parse_int(v, 0, INT_MAX, &q.ignore_surrounding)
               ? usage_error("--ignore-surrounding %s: not a count >= 0", v) : 0;
    else if (!strcmp(a, "--ignore-range-end"))
      rc = parse_int(v, 0, INT_MAX, &q.ignore_range_end)
               ? usage_error("--ignore-range-end %s: not a count >= 0", v) : 0;
    else if (!strcmp(a, "--method"))
      rc = anim_search_method_parse(v, &method) ? usage_error("--method %s: expected brute, boxes or fast", v) : 0;
    else if (!strcmp(a, "--tag"))
      rc = ntags == ANIM_MAX_TAGS ? usage_error("too many --tag (at most %s)", "32") : (tags[ntags++] = v, 0);
    else rc = usage_error("unknown option %s", a);
  }
  if (!rc && frame >= 0 && n >= 0) rc = usage_error("%s", "give --frame or --query, not both");
  if (!rc && frame < 0 && n < 0) rc = usage_error("%s", "search needs --frame N or --query v1,v2,...");
  if (rc) return rc;
  anim_database_t db;
  if (open_db(&db, argv[2])) return 1;
  for (int t = 0; t < ntags && !rc; t++) {
    int bit = anim_database_find_tag(&db, tags[t]);
    if (bit < 0) say("no tag %s in %s", tags[t], argv[2]), rc = 1;
    else q.tag_mask |= 1u << bit;
  }
  /* Frame numbers and vector lengths depend on the file: still usage errors. */
  if (!rc && n < 0 && frame >= db.nframes) {
    say("--frame must be in [0, %d)", db.nframes);
    rc = EXIT_USAGE;
  }
  if (!rc && q.current_frame >= db.nframes) {
    say("--current must be in [-1, %d)", db.nframes);
    rc = EXIT_USAGE;
  }
  if (!rc && n >= 0 && n != db.features.cols) {
    say("--query has %d values, the database has %d dims", n, db.features.cols);
    rc = EXIT_USAGE;
  }
  if (!rc && db.features.cols == 0) say("%s has no features", argv[2]), rc = 1;
  if (!rc) {
    if (n < 0)
      memcpy(vector, db.features.values + (size_t)frame * (size_t)db.features.cols,
             (size_t)db.features.cols * sizeof(float));
    q.query = vector;
    anim_search_data_t data = anim_search_data_of(&db);
    char err[256];
    anim_search_index_t *index = anim_search_index_build(method, &data, err, sizeof err);
    anim_search_hit_t *hits = malloc((size_t)q.k * sizeof *hits);
    int count = 0;
    if (!index) say("%s", err), rc = 1;
    else if (!hits) say("out of memory"), rc = 1;
    else if ((rc = anim_search_run(index, &q, hits, &count, NULL))) {
      say("search: %s", anim_strerror(rc));
      rc = 1;
    }
    for (int i = 0; !rc && i < count; i++) {
      int r = anim_database_range_of(&db, hits[i].frame);
      printf("%2d  frame %7d  cost %10.5f  range %s\n", i + 1, hits[i].frame, hits[i].cost,
             r >= 0 ? db.ranges[r].name : "-");
    }
    free(hits);
    anim_search_index_free(index);
  }
  anim_database_free(&db);
  return rc;
}

int main(int argc, char **argv) {
  if (argc < 2) return usage();
  const char *cmd = argv[1];
  if (!strcmp(cmd, "build")) return cmd_build(argc, argv);
  if (!strcmp(cmd, "info")) return cmd_info(argc, argv);
  if (!strcmp(cmd, "search")) return cmd_search(argc, argv);
  if (!strcmp(cmd, "arrays")) return animdb_arrays(argc, argv);
  if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
    const char *topic = argc > 2 ? argv[2] : "";
    if (!strcmp(topic, "build")) fputs(build_help, stdout);
    else if (!strcmp(topic, "info")) fputs(info_help, stdout);
    else if (!strcmp(topic, "search")) fputs(search_help, stdout);
    else if (*topic) return usage_error("no help on %s", topic);
    else print_usage(stdout);
    return 0;
  }
  return usage_error("unknown command %s", cmd);
}
