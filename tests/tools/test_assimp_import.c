/*
 * test_assimp_import.c: FBX and glTF animations through assimp
 * (import/assimp_import.c), on real mocap converted by a real tool.
 *
 * Set-up: shared BVH clips of four datasets (GAMES-105 in metres, Bandai
 * Namco in centimetres with a ground-level root and 6-channel joints, CMU
 * 3ds Max with mixed Euler orders, CMU MotionBuilder) are converted by
 * assimp's own BVH reader and exporter (tests/support/assimp_convert.cpp)
 * to ASCII FBX, glTF and GLB in a scratch folder. Invalid inputs first
 * (missing file, a file assimp cannot read, a file without animation), then
 * the round trip: each converted clip has the BVH's bones (same names, same
 * parents), frame time and frames, and every bone's global position in
 * every frame within ROUND_TRIP_TOLERANCE_M of the BVH's (failures name the
 * worst bone and frame); units and up axis from the file (FBX edited to
 * say metres, or Z up); then clips of all three formats and the BVH build
 * one database (bones matched by name), and `animdb build` takes the files
 * with --mirror and --tag like BVH files.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "anim_error.h"
#include "assimp_convert.h"
#include "assimp_import.h"
#include "database/dbfile.h"
#include "offline/feature_build.h"
#include "offline/import.h"
#include "pose/kinematics.h"
#include "shared_data.h"

/* How far a converted clip's joints may be from the BVH's: the files store
 * 32-bit floats or (ASCII FBX) 6 significant digits of values up to a few
 * metres, which the measured worst, 1.2e-5 m (CMU 02_01 as glTF), reflects;
 * a tenth of a millimetre leaves room for that and catches any wrong
 * transform, which moves joints by centimetres. */
#define ROUND_TRIP_TOLERANCE_M 1e-4f

typedef struct {
  const char *file; /* under data/mocap */
  float scale;      /* metres per BVH unit */
} source_clip_t;

static const source_clip_t sources[] = {
    {"games105/walkF.bvh", 1.0f},
    {"bandai-namco/dataset-1_walk_normal_002.bvh", 0.01f},
    {"cmu-3dsmax/102_01.bvh", 0.056444f},
    {"cmu-motionbuilder/02_01.bvh", 0.056444f},
};
#define NSOURCES (int)(sizeof sources / sizeof sources[0])

static const struct {
  const char *format, *extension;
} formats[] = {{"fbxa", "fbx"}, {"gltf2", "gltf"}, {"glb2", "glb"}};
#define NFORMATS 3

static char dir[64] = "/tmp/animdb-assimp-XXXXXX";

static int setup(void **state) { return mkdtemp(dir) ? 0 : -1; }

static int teardown(void **state) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  return system(cmd) == 0 ? 0 : -1;
}

/* dir/<stem>.<extension> for source s. */
static void converted_path(char *out, size_t size, int s, const char *extension) {
  const char *base = strrchr(sources[s].file, '/') + 1;
  snprintf(out, size, "%s/%.*s.%s", dir, (int)(strlen(base) - 4), base, extension);
}

/* Converts source s to every format (once); 0 when the shared folder is missing (test skipped). */
static int convert(int s, char *bvh, size_t size) {
  if (!anim_test_shared_path(bvh, (int)size, "data/mocap") ) return 0;
  snprintf(bvh + strlen(bvh), size - strlen(bvh), "/%s", sources[s].file);
  for (int f = 0; f < NFORMATS; f++) {
    char out[256], err[512];
    converted_path(out, sizeof out, s, formats[f].extension);
    if (access(out, R_OK) == 0) continue;
    if (anim_test_assimp_convert(bvh, out, formats[f].format, 0, err, sizeof err)) fail_msg("set-up: %s", err);
  }
  return 1;
}

/* ---- invalid inputs ------------------------------------------------------------------------ */

static void test_invalid_files(void **state) {
  anim_clip_list_t list = {NULL, 0, 0};
  anim_import_options_t o = {0.0f};
  char err[512], path[256], bvh[512];
  assert_int_equal(anim_assimp_import(&list, "/nonexistent/walk.fbx", &o, err, sizeof err), ANIM_EFORMAT);
  assert_non_null(strstr(err, "/nonexistent/walk.fbx"));
  /* Bytes assimp cannot read as FBX. */
  snprintf(path, sizeof path, "%s/garbage.fbx", dir);
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  fputs("Kaydara FBX Binary  \0 this is not an FBX file at all", f);
  fclose(f);
  assert_int_equal(anim_assimp_import(&list, path, &o, err, sizeof err), ANIM_EFORMAT);
  assert_non_null(strstr(err, "garbage.fbx"));
  /* A skeleton without animation. */
  if (!anim_test_shared_path(bvh, sizeof bvh, "data/mocap/games105/walkF.bvh")) return;
  snprintf(path, sizeof path, "%s/still.gltf", dir);
  if (anim_test_assimp_convert(bvh, path, "gltf2", 1, err, sizeof err)) fail_msg("set-up: %s", err);
  assert_int_equal(anim_assimp_import(&list, path, &o, err, sizeof err), ANIM_EFORMAT);
  assert_non_null(strstr(err, "no animation"));
  assert_int_equal(list.count, 0);
  /* The importer table refuses an extension nobody reads. */
  anim_importer_t table[8];
  table[0] = anim_importer_bvh;
  for (int i = 0; i < anim_assimp_importer_count; i++) table[i + 1] = anim_assimp_importers[i];
  assert_int_equal(anim_import_file(&list, "/tmp/walk.obj", table, 1 + anim_assimp_importer_count, &o, err, sizeof err),
                   ANIM_EFORMAT);
  anim_clip_list_free(&list);
}

/* ---- the round trip ------------------------------------------------------------------------- */

/* got's bones are ref's: the same names, each under the parent of the same name. */
static void check_same_skeleton(const anim_clip_t *ref, const anim_clip_t *got, const char *what) {
  if (got->skeleton.nbones != ref->skeleton.nbones)
    fail_msg("%s: %d bones, the BVH has %d", what, got->skeleton.nbones, ref->skeleton.nbones);
  for (int b = 0; b < ref->skeleton.nbones; b++) {
    int g = anim_skeleton_find(&got->skeleton, ref->skeleton.names[b]);
    if (g < 0) fail_msg("%s: no bone %s", what, ref->skeleton.names[b]);
    int rp = ref->skeleton.parents[b], gp = got->skeleton.parents[g];
    if ((rp < 0) != (gp < 0) || (rp >= 0 && strcmp(ref->skeleton.names[rp], got->skeleton.names[gp]) != 0))
      fail_msg("%s: bone %s hangs from another parent", what, ref->skeleton.names[b]);
  }
}

/* The largest distance between a bone's global position in ref and in got (m), over the first nframes. */
static float worst_distance(const anim_clip_t *ref, const anim_clip_t *got, int nframes, int *out_bone,
                            int *out_frame) {
  int nb = ref->skeleton.nbones, map[ANIM_MAX_BONES];
  for (int b = 0; b < nb; b++) map[b] = anim_skeleton_find(&got->skeleton, ref->skeleton.names[b]);
  vec3 rp[ANIM_MAX_BONES], gp[ANIM_MAX_BONES];
  quat rr[ANIM_MAX_BONES], gr[ANIM_MAX_BONES];
  float worst = 0.0f;
  *out_bone = *out_frame = 0;
  for (int f = 0; f < nframes; f++) {
    size_t k = (size_t)f * (size_t)nb;
    anim_fk(rp, rr, ref->local_positions + k, ref->local_rotations + k, ref->skeleton.parents, nb);
    anim_fk(gp, gr, got->local_positions + k, got->local_rotations + k, got->skeleton.parents, nb);
    for (int b = 0; b < nb; b++) {
      float d = vec3_length(vec3_sub(rp[b], gp[map[b]]));
      if (d > worst) worst = d, *out_bone = b, *out_frame = f;
    }
  }
  return worst;
}

static void test_round_trip_every_format(void **state) {
  for (int s = 0; s < NSOURCES; s++) {
    char bvh[512], err[512];
    if (!convert(s, bvh, sizeof bvh)) return;
    anim_clip_t ref;
    anim_bvh_options_t bo = {sources[s].scale};
    if (anim_bvh_load(&ref, bvh, &bo, err, sizeof err)) fail_msg("%s", err);
    for (int f = 0; f < NFORMATS; f++) {
      char path[256];
      converted_path(path, sizeof path, s, formats[f].extension);
      anim_clip_list_t list = {NULL, 0, 0};
      anim_import_options_t o = {sources[s].scale};
      if (anim_assimp_import(&list, path, &o, err, sizeof err)) fail_msg("%s", err);
      assert_int_equal(list.count, 1);
      const anim_clip_t *got = &list.clips[0];
      assert_string_equal(got->name, ref.name);
      check_same_skeleton(&ref, got, path);
      if (fabsf(got->frame_time - ref.frame_time) > 1e-3f * ref.frame_time)
        fail_msg("%s: frame time %g s, the BVH's %g s", path, (double)got->frame_time, (double)ref.frame_time);
      /* assimp's FBX writer cuts the take's length to whole seconds (assimp
       * issues #4698, #6105), so the reader drops up to a second of frames. */
      int slack = strcmp(formats[f].extension, "fbx") == 0 ? (int)ceilf(1.0f / ref.frame_time) + 1 : 0;
      if (got->nframes > ref.nframes || got->nframes < ref.nframes - slack)
        fail_msg("%s: %d frames, the BVH %d", path, got->nframes, ref.nframes);
      int bone, frame;
      float worst = worst_distance(&ref, got, got->nframes, &bone, &frame);
      printf("  %-40s worst %.2e m (%s, frame %d)\n", strrchr(path, '/') + 1, (double)worst,
             ref.skeleton.names[bone], frame);
      if (!(worst <= ROUND_TRIP_TOLERANCE_M))
        fail_msg("%s: bone %s is %.4f m from the BVH's at frame %d", path, ref.skeleton.names[bone], (double)worst,
                 frame);
      anim_clip_list_free(&list);
    }
    anim_clip_free(&ref);
  }
}

/* A copy of the text file from with the first `find` replaced by `replace`. */
static void edit_copy(const char *from, const char *to, const char *find, const char *replace) {
  FILE *in = fopen(from, "rb");
  assert_non_null(in);
  fseek(in, 0, SEEK_END);
  long len = ftell(in);
  fseek(in, 0, SEEK_SET);
  char *text = malloc((size_t)len + 1);
  assert_non_null(text);
  assert_int_equal(fread(text, 1, (size_t)len, in), (size_t)len);
  text[len] = '\0';
  fclose(in);
  char *hit = strstr(text, find);
  if (!hit) fail_msg("set-up: no \"%s\" in %s", find, from);
  FILE *out = fopen(to, "wb");
  assert_non_null(out);
  fwrite(text, 1, (size_t)(hit - text), out);
  fputs(replace, out);
  fputs(hit + strlen(find), out);
  fclose(out);
  free(text);
}

static vec3 root_position(const char *path, float scale) {
  anim_clip_list_t list = {NULL, 0, 0};
  anim_import_options_t o = {scale};
  char err[512];
  if (anim_assimp_import(&list, path, &o, err, sizeof err)) fail_msg("%s", err);
  vec3 p = list.clips[0].local_positions[0];
  anim_clip_list_free(&list);
  return p;
}

/* Without --scale the file's own units: glTF metres; FBX the centimetres
 * per unit of its UnitScaleFactor (assimp writes 1; edited here to 100,
 * metres). An FBX that says it is Z-up is turned to Y-up. */
static void test_units_and_up_axis_from_the_file(void **state) {
  char bvh[512], path[256], edited[256];
  if (!convert(0, bvh, sizeof bvh)) return; /* GAMES-105: metres */
  converted_path(path, sizeof path, 0, "gltf");
  vec3 m = root_position(path, 1.0f), own = root_position(path, 0.0f);
  assert_memory_equal(&m, &own, sizeof m);
  assert_true(m.y > 0.8f && m.y < 0.95f); /* the hips' height */
  converted_path(path, sizeof path, 0, "fbx");
  vec3 cm = root_position(path, 0.0f);
  assert_true(fabsf(cm.y - 0.01f * m.y) < 1e-5f);
  snprintf(edited, sizeof edited, "%s/metres.fbx", dir);
  edit_copy(path, edited, "\"UnitScaleFactor\", \"double\", \"Number\", \"\", 1",
            "\"UnitScaleFactor\", \"double\", \"Number\", \"\", 100");
  vec3 metres = root_position(edited, 0.0f);
  assert_true(vec3_length(vec3_sub(metres, m)) < 1e-5f);
  /* Z up: the file's z is our y, its y our -z. */
  snprintf(edited, sizeof edited, "%s/zup.fbx", dir);
  edit_copy(path, edited, "\"UpAxis\", \"int\", \"Integer\", \"\", 1", "\"UpAxis\", \"int\", \"Integer\", \"\", 2");
  vec3 z_up = root_position(edited, 1.0f);
  assert_true(fabsf(z_up.x - m.x) < 1e-5f && fabsf(z_up.y - m.z) < 1e-5f && fabsf(z_up.z + m.y) < 1e-5f);
}

/* One database from the BVH and its three conversions: bones by name. */
static void test_formats_build_one_database(void **state) {
  char bvh[512], err[512];
  if (!convert(0, bvh, sizeof bvh)) return;
  anim_clip_list_t list = {NULL, 0, 0};
  anim_bvh_options_t bo = {1.0f};
  anim_import_options_t o = {1.0f};
  assert_int_equal(anim_import_path(&list, bvh, &bo, err, sizeof err), 0);
  for (int f = 0; f < NFORMATS; f++) {
    char path[256];
    converted_path(path, sizeof path, 0, formats[f].extension);
    if (anim_assimp_import(&list, path, &o, err, sizeof err)) fail_msg("%s", err);
  }
  anim_build_options_t bopt;
  anim_build_options_default(&bopt);
  bopt.mirror = 1;
  anim_database_t db;
  if (anim_database_build(&db, "mixed", list.clips, list.count, &bopt, err, sizeof err)) fail_msg("%s", err);
  assert_int_equal(db.nranges, 2 * 4);
  anim_feature_schema_t schema;
  assert_int_equal(anim_feature_schema_default(&schema, &db), 0);
  assert_int_equal(anim_features_build(&db, &schema, err, sizeof err), 0);
  assert_int_equal(anim_database_validate(&db, err, sizeof err), 0);
  anim_database_free(&db);
  anim_clip_list_free(&list);
}

/* `animdb build` reads FBX and glTF like BVH: --scale, --mirror, --tag. */
static void test_animdb_builds_from_fbx_and_gltf(void **state) {
  char bvh[512], fbx[256], gltf[256], out[256], cmd[1400], err[256];
  if (!convert(1, bvh, sizeof bvh)) return; /* Bandai Namco: centimetres */
  converted_path(fbx, sizeof fbx, 1, "fbx");
  converted_path(gltf, sizeof gltf, 1, "gltf");
  snprintf(out, sizeof out, "%s/mixed.animdb", dir);
  const char *build = getenv("ANIM_BUILD_DIR") ? getenv("ANIM_BUILD_DIR") : "build";
  snprintf(cmd, sizeof cmd, "%s/animdb build -o %s --scale 0.01 --mirror --tag walk=walking %s %s 2>&1", build, out,
           fbx, gltf);
  int status = system(cmd);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  anim_database_t db;
  assert_int_equal(anim_dbfile_load(&db, out, err, sizeof err), 0);
  assert_int_equal(db.nranges, 4);
  int walking = anim_database_find_tag(&db, "walking"), mirror = anim_database_find_tag(&db, "mirror");
  assert_true(walking >= 0 && mirror >= 0);
  for (int r = 0; r < db.nranges; r++) assert_true(db.ranges[r].tag_mask & (1u << walking));
  assert_true(db.ranges[1].tag_mask & (1u << mirror));
  assert_int_equal(db.features.cols, 27);
  anim_database_free(&db);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_invalid_files),
      cmocka_unit_test(test_round_trip_every_format),
      cmocka_unit_test(test_units_and_up_axis_from_the_file),
      cmocka_unit_test(test_formats_build_one_database),
      cmocka_unit_test(test_animdb_builds_from_fbx_and_gltf),
  };
  return cmocka_run_group_tests_name("assimp_import", tests, setup, teardown);
}
