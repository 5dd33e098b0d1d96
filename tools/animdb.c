/*
 * animdb: builds, inspects and searches database files, on the core library.
 *
 *   animdb build -o OUT.animdb [--name N] [--rate HZ] [--scale M] [--mirror]
 *                [--tag PATTERN=TAG]... (BVH files or folders)... | --procgen
 *   animdb info FILE [--json]
 *   animdb search FILE (--frame N | --query v1,v2,...) [--k K] [--method M]
 *                [--current F] [--transition-cost C] [--ignore-surrounding N]
 *                [--ignore-range-end N] [--tag T]
 *
 * Exit status: 0 ok, 1 failure (message on stderr), 2 usage error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "anim_error.h"
#include "import.h"
#include "dbfile.h"
#include "feature.h"
#include "procgen.h"
#include "search.h"

#define MAX_TAG_RULES 64

static int usage(void) {
  fprintf(stderr,
          "usage: animdb build -o OUT [--name N] [--rate HZ] [--scale M] [--mirror] [--tag PATTERN=TAG]... PATH...\n"
          "       animdb build -o OUT --procgen\n"
          "       animdb info FILE [--json]\n"
          "       animdb search FILE (--frame N | --query v1,v2,...) [--k K] [--method brute|boxes|fast]\n"
          "                     [--current F] [--transition-cost C] [--ignore-surrounding N] [--ignore-range-end N] [--tag T]\n");
  return 2;
}

/* ---- build --------------------------------------------------------------------------- */

static void progress(const char *what, int done, int total) {
  if (!isatty(STDERR_FILENO)) return;
  int width = 40, filled = total ? done * width / total : width;
  fprintf(stderr, "\r%-10s [%.*s%*s] %d/%d", what, filled, "########################################", width - filled, "",
          done, total);
  if (done == total) fputc('\n', stderr);
}

static int build_from_bvh(anim_database_t *db, const char *name, char **paths, int npaths, float rate, float scale,
                          int mirror, char rules[][2][64], int nrules) {
  char err[512];
  anim_bvh_options_t bo = {scale};
  anim_clip_list_t clips = {NULL, 0, 0};
  int rc = 0;
  for (int i = 0; i < npaths && !rc; i++) {
    rc = anim_import_path(&clips, paths[i], &bo, err, sizeof err);
    progress("reading", i + 1, npaths);
  }
  anim_build_options_t o;
  anim_build_options_default(&o);
  o.frame_rate = rate;
  o.mirror = mirror;
  if (!rc) rc = anim_database_build(db, name, clips.clips, clips.count, &o, err, sizeof err);
  anim_clip_list_free(&clips);
  if (rc) {
    fprintf(stderr, "\nanimdb: %s\n", err);
    return rc;
  }
  progress("building", 1, 2);
  for (int r = 0; r < db->nranges; r++)
    for (int k = 0; k < nrules; k++)
      if (strstr(db->ranges[r].name, rules[k][0]) && anim_database_tag_range(db, r, rules[k][1])) {
        fprintf(stderr, "animdb: too many tags (at most %d)\n", ANIM_MAX_TAGS);
        anim_database_free(db);
        return ANIM_ELIMIT;
      }
  anim_feature_schema_t schema;
  if ((rc = anim_feature_schema_default(&schema, db))) {
    fprintf(stderr, "animdb: cannot find feet and hips in the skeleton for the default feature schema\n");
  } else if ((rc = anim_features_build(db, &schema, err, sizeof err))) {
    fprintf(stderr, "animdb: %s\n", err);
  }
  if (rc) anim_database_free(db);
  progress("building", 2, 2);
  return rc;
}

static int cmd_build(int argc, char **argv) {
  const char *out = NULL, *name = NULL;
  float rate = 60.0f, scale = 0.01f;
  int mirror = 0, procgen = 0, nrules = 0;
  static char rules[MAX_TAG_RULES][2][64];
  char **paths = calloc((size_t)argc, sizeof *paths);
  int npaths = 0, rc = 0;
  for (int i = 2; i < argc && !rc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--mirror")) mirror = 1;
    else if (!strcmp(a, "--procgen")) procgen = 1;
    else if (!strcmp(a, "-o") && v) out = v, i++;
    else if (!strcmp(a, "--name") && v) name = v, i++;
    else if (!strcmp(a, "--rate") && v) rate = strtof(v, NULL), i++;
    else if (!strcmp(a, "--scale") && v) scale = strtof(v, NULL), i++;
    else if (!strcmp(a, "--tag") && v && strchr(v, '=') && nrules < MAX_TAG_RULES) {
      snprintf(rules[nrules][0], 64, "%.*s", (int)(strchr(v, '=') - v), v);
      snprintf(rules[nrules][1], 64, "%s", strchr(v, '=') + 1);
      nrules++, i++;
    } else if (a[0] == '-') rc = 2;
    else paths[npaths++] = (char *)a;
  }
  if (rc == 2 || !out || (!procgen && npaths == 0) || !(rate > 0.0f) || !(scale > 0.0f)) {
    rc = usage();
  } else {
    anim_database_t db;
    char err[512];
    clock_t start = clock();
    rc = procgen ? anim_procgen_database(&db, NULL, err, sizeof err)
                 : build_from_bvh(&db, name ? name : "database", paths, npaths, rate, scale, mirror, rules, nrules);
    if (procgen && rc) fprintf(stderr, "animdb: %s\n", err);
    int built = rc == 0; /* a failed build has freed what it made */
    if (!rc && name) snprintf(db.name, sizeof db.name, "%s", name);
    if (!rc && (rc = anim_dbfile_write(&db, out, err, sizeof err))) fprintf(stderr, "animdb: %s\n", err);
    if (!rc)
      printf("%s: %d frames, %d bones, %d ranges, %d feature dims, version %016llx (%.2f s)\n", out, db.nframes,
             db.nbones, db.nranges, db.features.cols, (unsigned long long)db.version,
             (double)(clock() - start) / CLOCKS_PER_SEC);
    if (built) anim_database_free(&db);
    rc = rc ? 1 : 0;
  }
  free(paths);
  return rc;
}

/* ---- info and search ---------------------------------------------------------------------- */

static int open_db(anim_database_t *db, const char *path) {
  char err[512];
  int rc = anim_dbfile_load(db, path, err, sizeof err);
  if (rc) fprintf(stderr, "animdb: %s (%s)\n", err, anim_err_name(rc));
  return rc;
}

static const char *const kind_names[] = {"position", "velocity", "trajectory-position", "trajectory-direction",
                                         "inertialize"};

static void print_info_text(const anim_database_t *db, size_t file_size) {
  printf("name       %s\nversion    %016llx\nframes     %d at %g Hz (%.1f s)\nbones      %d\nranges     %d\n"
         "features   %d dims\nfile       %.2f MiB\n",
         db->name, (unsigned long long)db->version, db->nframes, db->frame_rate, db->nframes / db->frame_rate,
         db->nbones, db->nranges, db->features.cols, (double)file_size / (1024.0 * 1024.0));
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
  printf("feature schema:\n");
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

static void print_info_json(const anim_database_t *db, size_t file_size) {
  printf("{\"name\":\"%s\",\"version\":\"%016llx\",\"frames\":%d,\"frame_rate\":%g,\"bones\":[", db->name,
         (unsigned long long)db->version, db->nframes, db->frame_rate);
  for (int b = 0; b < db->nbones; b++)
    printf("%s{\"name\":\"%s\",\"parent\":%d}", b ? "," : "", db->skeleton.names[b], db->skeleton.parents[b]);
  printf("],\"ranges\":[");
  for (int r = 0; r < db->nranges; r++) {
    printf("%s{\"name\":\"%s\",\"start\":%d,\"stop\":%d,\"tags\":[", r ? "," : "", db->ranges[r].name,
           db->ranges[r].start, db->ranges[r].stop);
    int first = 1;
    for (int t = 0; t < db->ntags; t++)
      if (db->ranges[r].tag_mask & (1u << t)) printf("%s\"%s\"", first ? "" : ",", db->tag_names[t]), first = 0;
    printf("]}");
  }
  printf("],\"features\":{\"dims\":%d,\"groups\":[", db->features.cols);
  for (int t = 0; t < db->features.schema.nterms; t++)
    printf("%s{\"kind\":\"%s\",\"bone\":\"%s\",\"weight\":%g,\"first_column\":%d,\"dims\":%d}", t ? "," : "",
           kind_names[db->features.schema.terms[t].kind], db->features.schema.terms[t].bone,
           db->features.schema.terms[t].weight, db->features.group_start[t], db->features.group_dims[t]);
  printf("]},\"file_bytes\":%zu}\n", file_size);
}

static int cmd_info(int argc, char **argv) {
  if (argc < 3) return usage();
  int json = argc > 3 && !strcmp(argv[3], "--json");
  anim_database_t db;
  if (open_db(&db, argv[2])) return 1;
  if (json) print_info_json(&db, db.mapping_size);
  else print_info_text(&db, db.mapping_size);
  anim_database_free(&db);
  return 0;
}

static int parse_query(const char *text, float *out, int max) {
  int n = 0;
  while (*text && n < max) {
    char *end;
    out[n++] = strtof(text, &end);
    if (end == text) return -1;
    text = *end == ',' ? end + 1 : end;
  }
  return *text ? -1 : n;
}

static int cmd_search(int argc, char **argv) {
  if (argc < 3) return usage();
  anim_database_t db;
  if (open_db(&db, argv[2])) return 1;
  anim_search_query_t q = {NULL, 5, -1, 0.0f, 0, 0, 0};
  anim_search_method_t method = ANIM_SEARCH_FAST;
  float vector[ANIM_MAX_FEATURE_DIMS];
  int frame = -1, n = -1, rc = 0;
  for (int i = 3; i < argc && !rc; i += 2) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!v) rc = 2;
    else if (!strcmp(a, "--frame")) frame = atoi(v);
    else if (!strcmp(a, "--query")) n = parse_query(v, vector, ANIM_MAX_FEATURE_DIMS);
    else if (!strcmp(a, "--k")) q.k = atoi(v);
    else if (!strcmp(a, "--current")) q.current_frame = atoi(v);
    else if (!strcmp(a, "--transition-cost")) q.transition_cost = strtof(v, NULL);
    else if (!strcmp(a, "--ignore-surrounding")) q.ignore_surrounding = atoi(v);
    else if (!strcmp(a, "--ignore-range-end")) q.ignore_range_end = atoi(v);
    else if (!strcmp(a, "--method")) rc = anim_search_method_parse(v, &method) ? 2 : 0;
    else if (!strcmp(a, "--tag")) {
      int bit = anim_database_find_tag(&db, v);
      if (bit < 0) fprintf(stderr, "animdb: no tag %s in %s\n", v, argv[2]), rc = 1;
      else q.tag_mask |= 1u << bit;
    } else rc = 2;
  }
  if (!rc && n < 0 && (frame < 0 || frame >= db.nframes)) {
    fprintf(stderr, "animdb: --frame must be in [0, %d), or give --query\n", db.nframes);
    rc = 2;
  }
  if (!rc && n >= 0 && n != db.features.cols) {
    fprintf(stderr, "animdb: --query has %d values, the database has %d dims\n", n, db.features.cols);
    rc = 2;
  }
  if (!rc) {
    if (n < 0) memcpy(vector, db.features.values + (size_t)frame * (size_t)db.features.cols, (size_t)db.features.cols * sizeof(float));
    q.query = vector;
    anim_search_data_t data = {db.features.values, db.features.rows, db.features.cols, db.ranges, db.nranges};
    char err[256];
    anim_search_index_t *index = anim_search_index_build(method, &data, err, sizeof err);
    anim_search_hit_t hits[ANIM_SEARCH_MAX_K];
    int count = 0;
    if (!index) fprintf(stderr, "animdb: %s\n", err), rc = 1;
    else if ((rc = anim_search_run(index, &q, hits, &count, NULL))) {
      fprintf(stderr, "animdb: search: %s\n", anim_strerror(rc));
      rc = 1;
    }
    for (int i = 0; !rc && i < count; i++) {
      int r = anim_database_range_of(&db, hits[i].frame);
      printf("%2d  frame %7d  cost %10.5f  range %s\n", i + 1, hits[i].frame, hits[i].cost, r >= 0 ? db.ranges[r].name : "-");
    }
    anim_search_index_free(index);
  }
  anim_database_free(&db);
  return rc == 2 ? usage() : rc;
}

int main(int argc, char **argv) {
  if (argc < 2) return usage();
  if (!strcmp(argv[1], "build")) return cmd_build(argc, argv);
  if (!strcmp(argv[1], "info")) return cmd_info(argc, argv);
  if (!strcmp(argv[1], "search")) return cmd_search(argc, argv);
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
    usage();
    return 0;
  }
  return usage();
}
