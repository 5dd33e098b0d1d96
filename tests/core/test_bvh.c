/*
 * test_bvh.c: BVH import. Malformed input first (each error names file and
 * line), then every clip of ../shared/data/mocap, checked against what the
 * file itself claims (Frames:, joints) and against forward kinematics.
 */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "anim_error.h"
#include "offline/bvh.h"
#include "pose/kinematics.h"
#include "shared_data.h"

#define GOOD_HEADER                                                                 \
  "HIERARCHY\nROOT Hips\n{\n  OFFSET 0 90 0\n  CHANNELS 6 Xposition Yposition "      \
  "Zposition Zrotation Xrotation Yrotation\n  JOINT Leg\n  {\n    OFFSET 0 -45 0\n" \
  "    CHANNELS 3 Zrotation Xrotation Yrotation\n    End Site\n    {\n      OFFSET 0 -45 0\n    }\n  }\n}\n"

static int parse(const char *text, char *err, int errlen) {
  anim_clip_t clip;
  int rc = anim_bvh_parse(&clip, text, strlen(text), "t.bvh", NULL, err, errlen);
  if (rc == 0) anim_clip_free(&clip);
  return rc;
}

typedef struct {
  const char *what, *text;
  int code, line;
} bad_bvh_t;

static void test_malformed_files(void **state) {
  static const bad_bvh_t cases[] = {
      {"empty file", "", ANIM_ETRUNCATED, 1},
      {"not a BVH", "hello world", ANIM_EFORMAT, 1},
      {"missing ROOT", "HIERARCHY\nJOINT x", ANIM_EFORMAT, 2},
      {"missing brace", "HIERARCHY\nROOT Hips\nOFFSET 0 0 0", ANIM_EFORMAT, 3},
      {"short OFFSET", "HIERARCHY\nROOT Hips\n{\nOFFSET 0 0\nCHANNELS 0\n}", ANIM_EFORMAT, 5},
      {"NaN OFFSET", "HIERARCHY\nROOT Hips\n{\nOFFSET 0 nan 0\n", ANIM_EFORMAT, 4},
      {"unknown channel", "HIERARCHY\nROOT Hips\n{\nOFFSET 0 0 0\nCHANNELS 1 Wrotation\n}", ANIM_EFORMAT, 5},
      {"too many channels", "HIERARCHY\nROOT Hips\n{\nOFFSET 0 0 0\nCHANNELS 9 Xposition\n}", ANIM_EFORMAT, 5},
      {"unclosed joint", "HIERARCHY\nROOT Hips\n{\nOFFSET 0 0 0\nCHANNELS 0\n", ANIM_ETRUNCATED, 6},
      {"no MOTION", GOOD_HEADER, ANIM_ETRUNCATED, 16},
      {"frames not a count", GOOD_HEADER "MOTION\nFrames: many\nFrame Time: 0.1\n", ANIM_EFORMAT, 17},
      {"zero frame time", GOOD_HEADER "MOTION\nFrames: 1\nFrame Time: 0\n0 0 0 0 0 0 0 0 0\n", ANIM_EFORMAT, 18},
      {"fewer numbers than frames",
       GOOD_HEADER "MOTION\nFrames: 2\nFrame Time: 0.1\n0 0 0 0 0 0 0 0 0\n0.00000 0.00000 0.00000\n",
       ANIM_ETRUNCATED, 21},
      {"huge frame count", GOOD_HEADER "MOTION\nFrames: 9999999\nFrame Time: 0.1\n0 0 0\n", ANIM_ETRUNCATED, 20},
      {"huge frame count, no channels",
       "HIERARCHY\nROOT A\n{\nOFFSET 0 0 0\nCHANNELS 0\n}\nMOTION\nFrames: 9999999\nFrame Time: 0.1\n",
       ANIM_EFORMAT, 9},
      {"negative frame count", GOOD_HEADER "MOTION\nFrames: -3\nFrame Time: 0.1\n", ANIM_EFORMAT, 17},
      {"negative frame time", GOOD_HEADER "MOTION\nFrames: 1\nFrame Time: -0.1\n0 0 0 0 0 0 0 0 0\n", ANIM_EFORMAT, 18},
      {"misspelt Frame Time", GOOD_HEADER "MOTION\nFrames: 1\nFrame Tme: 0.1\n0 0 0 0 0 0 0 0 0\n", ANIM_EFORMAT, 18},
      {"infinite number", GOOD_HEADER "MOTION\nFrames: 1\nFrame Time: 0.1\n0 0 0 0 0 0 0 inf 0\n", ANIM_EFORMAT, 19},
      {"NaN in motion, 2nd frame",
       GOOD_HEADER "MOTION\nFrames: 2\nFrame Time: 0.1\n0 0 0 0 0 0 0 0 0\n0 0 0\r\n0 NaN 0 0 0 0\n", ANIM_EFORMAT, 21},
      {"overlong number",
       "HIERARCHY\nROOT A\n{\nOFFSET 0 0 0."
       "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
       "0000000000000000000000000000000000000000000000000000000000001\n",
       ANIM_EFORMAT, 4},
      {"End Site without brace",
       "HIERARCHY\nROOT A\n{\nOFFSET 0 0 0\nCHANNELS 1 Xrotation\nEnd Site\nOFFSET 0 1 0\n}\n}", ANIM_EFORMAT, 7},
      {"MOTION inside a joint (missing })",
       "HIERARCHY\nROOT A\n{\nOFFSET 0 0 0\nCHANNELS 1 Xrotation\nMOTION\nFrames: 1\n", ANIM_EFORMAT, 6},
      {"CR-only line ends", "HIERARCHY\rROOT Hips\rOFFSET 0 0 0\r", ANIM_EFORMAT, 3},
      {"CRLF line ends", "HIERARCHY\r\nROOT Hips\r\n{\r\nOFFSET 0 0 x\r\n", ANIM_EFORMAT, 4},
      {"long joint name",
       "HIERARCHY\nROOT A\n{\nOFFSET 0 0 0\nCHANNELS 1 Xrotation\n"
       "JOINT Joint_with_a_name_far_too_long_to_fit_in_sixty_three_bytes_of_storage\n",
       ANIM_EFORMAT, 6},
      {"garbage number", GOOD_HEADER "MOTION\nFrames: 1\nFrame Time: 0.1\n0 0 0 0 x 0 0 0 0\n", ANIM_EFORMAT, 19},
      {"extra numbers", GOOD_HEADER "MOTION\nFrames: 1\nFrame Time: 0.1\n0 0 0 0 0 0 0 0 0 7\n", ANIM_EFORMAT, 19},
      {"duplicate joint", "HIERARCHY\nROOT A\n{\nOFFSET 0 0 0\nCHANNELS 0\nJOINT A\n{\nOFFSET 0 0 0\nCHANNELS 0\n}\n}",
       ANIM_EFORMAT, 6},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char err[256] = "";
    int rc = parse(cases[i].text, err, sizeof err);
    char expect[32];
    snprintf(expect, sizeof expect, "t.bvh:%d:", cases[i].line);
    if (rc != cases[i].code || strncmp(err, expect, strlen(expect)) != 0)
      fail_msg("%s: got %s \"%s\", want %s at %s", cases[i].what, anim_err_name(rc), err, anim_err_name(cases[i].code),
               expect);
  }
  /* A good file parses, CRLF and tabs included, and a too-deep hierarchy does not crash. */
  char err[256];
  assert_int_equal(
      parse(GOOD_HEADER "MOTION\r\nFrames:\t1\r\nFrame Time:\t.1\r\n0 0 0 0 0 0\t0 0 0\r\n", err, sizeof err), 0);
  size_t cap = 200 * 64 + 256;
  char *deep = malloc(cap), *p = deep;
  p += sprintf(p, "HIERARCHY\nROOT j0\n{\nOFFSET 0 0 0\nCHANNELS 0\n");
  for (int i = 1; i < 200; i++) p += sprintf(p, "JOINT j%d\n{\nOFFSET 0 1 0\nCHANNELS 0\n", i);
  assert_int_equal(parse(deep, err, sizeof err), ANIM_EFORMAT);
  assert_non_null(strstr(err, "128"));
  free(deep);
}

/* A NUL byte inside a token used to end the C string early: "\0ps" became an
 * empty joint name (a clip failing anim_clip_validate), "Hi\0ps" the name
 * "Hi", "1\0x" the number 1. Found by fuzz_bvh. */
static void test_nul_bytes_refused(void **state) {
  static const char empty_name[] = "HIERARCHY\nROOT \0ps\n{\nOFFSET 0 0 0\nCHANNELS 1 Xrotation\n}\n"
                                   "MOTION\nFrames: 1\nFrame Time: 0.1\n0\n";
  static const char cut_name[] = "HIERARCHY\nROOT Hi\0ps\n{\nOFFSET 0 0 0\nCHANNELS 1 Xrotation\n}\n"
                                 "MOTION\nFrames: 1\nFrame Time: 0.1\n0\n";
  static const char cut_number[] = "HIERARCHY\nROOT Hips\n{\nOFFSET 0 0 0\nCHANNELS 1 Xrotation\n}\n"
                                   "MOTION\nFrames: 1\nFrame Time: 0.1\n1\0x\n";
  const struct {
    const char *text;
    size_t len;
    const char *where;
  } cases[] = {{empty_name, sizeof empty_name - 1, "t.bvh:2:"},
               {cut_name, sizeof cut_name - 1, "t.bvh:2:"},
               {cut_number, sizeof cut_number - 1, "t.bvh:10:"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    anim_clip_t clip;
    char err[256] = "";
    assert_int_equal(anim_bvh_parse(&clip, cases[i].text, cases[i].len, "t.bvh", NULL, err, sizeof err), ANIM_EFORMAT);
    assert_non_null(strstr(err, cases[i].where));
    assert_non_null(strstr(err, "NUL"));
  }
}

/* 129 sibling joints: the error names the line of the 129th. */
static void test_too_many_joints(void **state) {
  size_t cap = 130 * 64 + 256;
  char *text = malloc(cap), *p = text, err[256];
  p += sprintf(p, "HIERARCHY\nROOT j0\n{\nOFFSET 0 0 0\nCHANNELS 1 Xrotation\n");
  /* Joint i's name is on line 5 i + 1. */
  for (int i = 1; i <= 128; i++) p += sprintf(p, "JOINT j%d\n{\nOFFSET 0 1 0\nCHANNELS 0\n}\n", i);
  sprintf(p, "}\nMOTION\nFrames: 1\nFrame Time: 1\n0\n");
  assert_int_equal(parse(text, err, sizeof err), ANIM_EFORMAT);
  if (strncmp(err, "t.bvh:641:", 10) != 0) fail_msg("got \"%s\", want line 641", err);
  /* One fewer fits exactly. */
  p = strstr(text, "JOINT j128");
  sprintf(p, "}\nMOTION\nFrames: 1\nFrame Time: 1\n0\n");
  anim_clip_t clip;
  assert_int_equal(anim_bvh_parse(&clip, text, strlen(text), "t.bvh", NULL, err, sizeof err), 0);
  assert_int_equal(clip.skeleton.nbones, 128);
  anim_clip_free(&clip);
  free(text);
}

/* Reads a whole file into a buffer of exactly its size (so that ASan sees
 * any read past the end: the parser must not need a terminator). */
static char *read_exact(const char *path, size_t *out_len) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *text = malloc((size_t)n);
  assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
  fclose(f);
  *out_len = (size_t)n;
  return text;
}

/* The result of parsing damaged text: a valid clip, or one of the documented
 * errors with a "name:line:" message. */
static void check_damaged(const char *text, size_t len, const char *what) {
  anim_clip_t clip;
  char err[256] = "";
  int rc = anim_bvh_parse(&clip, text, len, "d.bvh", NULL, err, sizeof err);
  if (rc == 0) {
    if (anim_clip_validate(&clip, err, sizeof err)) fail_msg("%s: parsed into an invalid clip: %s", what, err);
    anim_clip_free(&clip);
    return;
  }
  int line = 0;
  if ((rc != ANIM_EFORMAT && rc != ANIM_ETRUNCATED) || sscanf(err, "d.bvh:%d:", &line) != 1 || line < 1)
    fail_msg("%s: %s \"%s\"", what, anim_err_name(rc), err);
}

/* A real clip cut at many points and with bytes overwritten never crashes
 * and always answers with a documented code (run under ASan to see reads). */
static void test_damaged_real_file(void **state) {
  char path[1024];
  if (!anim_test_shared_path(path, sizeof path, "data/mocap/bandai-namco/dataset-1_dash_normal_001.bvh")) return;
  size_t len;
  char *text = read_exact(path, &len), what[64];
  for (size_t cut = 0; cut < len; cut += len / 97 + 1) {
    char *part = malloc(cut ? cut : 1);
    memcpy(part, text, cut);
    snprintf(what, sizeof what, "cut at %zu", cut);
    check_damaged(part, cut, what);
    free(part);
  }
  static const char garbage[] = {'{', '}', ' ', '\n', 'x', '-', '.', '9', 'e', '\0'};
  uint32_t seed = 12345;
  for (int i = 0; i < 300; i++) {
    seed = seed * 1664525u + 1013904223u;
    size_t at = (seed >> 8) % len;
    char saved = text[at];
    text[at] = garbage[(seed >> 4) % sizeof garbage];
    snprintf(what, sizeof what, "byte %zu set to 0x%02x", at, (unsigned char)text[at]);
    check_damaged(text, len, what);
    text[at] = saved;
  }
  free(text);
}

static void test_channel_order_and_units(void **state) {
  /* Zrotation 90 then Xrotation 90 (Rz Rx): maps +Y to -X... check one vector numerically. */
  const char *text = "HIERARCHY\nROOT R\n{\nOFFSET 0 0 0\nCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation "
                     "Yrotation\n}\nMOTION\nFrames: 1\nFrame Time: 0.5\n100 200 300 90 90 0\n";
  anim_clip_t clip;
  char err[128];
  anim_bvh_options_t o = {0.01f};
  assert_int_equal(anim_bvh_parse(&clip, text, strlen(text), "t", &o, err, sizeof err), 0);
  assert_true(fabsf(clip.local_positions[0].x - 1.0f) < 1e-6f && fabsf(clip.local_positions[0].z - 3.0f) < 1e-6f);
  assert_true(clip.frame_time == 0.5f);
  /* Rz(90) Rx(90) applied to +Y: Rx takes +Y to +Z, Rz leaves +Z: expect +Z. */
  vec3 v = quat_mul_vec3(clip.local_rotations[0], vec3_make(0, 1, 0));
  assert_true(fabsf(v.z - 1.0f) < 1e-5f);
  /* Applied to +X: Rx keeps +X, Rz(90) takes +X to +Y. */
  v = quat_mul_vec3(clip.local_rotations[0], vec3_make(1, 0, 0));
  assert_true(fabsf(v.y - 1.0f) < 1e-5f);
  anim_clip_free(&clip);
}

/* "Frames:" as the file says it, and its joint count (ROOT + JOINT lines). */
static void file_claims(const char *path, int *out_frames, int *out_joints) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  char line[4096];
  *out_frames = -1, *out_joints = 0;
  while (fgets(line, sizeof line, f)) {
    char *s = line;
    while (*s == ' ' || *s == '\t') s++;
    if (!strncmp(s, "ROOT", 4) || !strncmp(s, "JOINT", 5)) (*out_joints)++;
    if (!strncmp(s, "Frames:", 7)) *out_frames = atoi(s + 7);
  }
  fclose(f);
}

/* What each folder's SOURCE.md says about its files. */
static const struct {
  const char *file;
  int frames, joints;
  float fps;
} documented[] = {
    {"dataset-1_walk_normal_001.bvh", 195, 22, 30}, {"dataset-1_walk_normal_002.bvh", 31, 22, 30},
    {"dataset-1_run_normal_001.bvh", 24, 22, 30},   {"dataset-1_dash_normal_001.bvh", 20, 22, 30},
    {"dataset-1_walk-back_normal_001.bvh", 31, 22, 30}, {"dataset-1_walk-left_normal_001.bvh", 135, 22, 30},
    {"dataset-1_walk-right_normal_001.bvh", 135, 22, 30}, {"dataset-1_run_active_001.bvh", 72, 22, 30},
    {"dataset-1_dash_active_001.bvh", 85, 22, 30},  {"dataset-1_walk_tired_001.bvh", 247, 22, 30},
    {"dataset-2_walk_normal_001.bvh", 273, 22, 30}, {"dataset-2_run_normal_001.bvh", 68, 22, 30},
    {"dataset-2_walk-turn-left_normal_001.bvh", 102, 22, 30}, {"dataset-2_walk-turn-right_normal_001.bvh", 100, 22, 30},
    {"131_01.bvh", 994, 31, 120}, {"131_02.bvh", 1247, 31, 120}, {"131_03.bvh", 1102, 31, 120},
    {"102_01.bvh", 277, 31, 120}, {"02_01.bvh", 343, 31, 120},
    {"idle.bvh", 200, 20, 60}, {"walk_forward.bvh", 100, 20, 100}, {"run_forward.bvh", 45, 20, 60},
    {"walkF.bvh", 182, 20, 60}, {"walk_and_turn_left.bvh", 420, 20, 100}, {"walk_and_turn_right.bvh", 197, 20, 60},
};

static void check_documented(const char *file, const anim_clip_t *clip) {
  for (size_t i = 0; i < sizeof documented / sizeof documented[0]; i++) {
    if (strcmp(documented[i].file, file) != 0) continue;
    if (clip->nframes != documented[i].frames || clip->skeleton.nbones != documented[i].joints ||
        fabsf(1.0f / clip->frame_time - documented[i].fps) > 0.01f * documented[i].fps)
      fail_msg("%s: %d frames, %d joints, %.3f fps; SOURCE.md says %d, %d, %g", file, clip->nframes,
               clip->skeleton.nbones, 1.0f / clip->frame_time, documented[i].frames, documented[i].joints,
               documented[i].fps);
    return;
  }
  fail_msg("%s is not in any SOURCE.md table", file);
}

static const struct {
  const char *folder;
  float scale;
} sources[] = {
    {"bandai-namco", 0.01f}, {"cmu-3dsmax", 0.056444f}, {"cmu-motionbuilder", 0.056444f}, {"games105", 1.0f}};

static void test_every_shared_clip_loads(void **state) {
  char root[1024];
  if (!anim_test_shared_path(root, sizeof root, "data/mocap")) return;
  int loaded = 0;
  for (size_t s = 0; s < sizeof sources / sizeof sources[0]; s++) {
    char dir[1200];
    snprintf(dir, sizeof dir, "%s/%s", root, sources[s].folder);
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d))) {
      size_t n = strlen(e->d_name);
      if (n < 5 || strcmp(e->d_name + n - 4, ".bvh")) continue;
      char path[1500], err[256];
      snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
      anim_bvh_options_t o = {sources[s].scale};
      anim_clip_t clip;
      int rc = anim_bvh_load(&clip, path, &o, err, sizeof err);
      if (rc) fail_msg("%s: %s", path, err);
      int frames, joints;
      file_claims(path, &frames, &joints);
      assert_int_equal(clip.nframes, frames);
      assert_int_equal(clip.skeleton.nbones, joints);
      assert_int_equal(anim_clip_validate(&clip, err, sizeof err), 0);
      check_documented(e->d_name, &clip);
      /* Metres after scaling: the hips stand between 0.5 and 1.3 m up in frame 0. */
      int hips = anim_skeleton_find(&clip.skeleton, "Hips");
      if (hips < 0) hips = anim_skeleton_find(&clip.skeleton, "RootJoint"); /* games105 */
      assert_true(hips >= 0);
      vec3 p;
      quat q;
      anim_fk_bone(&p, &q, clip.local_positions, clip.local_rotations, clip.skeleton.parents, hips);
      if (p.y < 0.5f || p.y > 1.3f) fail_msg("%s: hips at %.3f m in frame 0", path, p.y);
      anim_clip_free(&clip);
      loaded++;
    }
    closedir(d);
  }
  assert_int_equal(loaded, 25);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_malformed_files),
      cmocka_unit_test(test_nul_bytes_refused),
      cmocka_unit_test(test_too_many_joints),
      cmocka_unit_test(test_damaged_real_file),
      cmocka_unit_test(test_channel_order_and_units),
      cmocka_unit_test(test_every_shared_clip_loads),
  };
  return cmocka_run_group_tests_name("bvh", tests, NULL, NULL);
}
