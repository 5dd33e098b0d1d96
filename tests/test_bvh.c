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
#include "bvh.h"
#include "kinematics.h"
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
      {"fewer numbers than frames", GOOD_HEADER "MOTION\nFrames: 2\nFrame Time: 0.1\n0 0 0 0 0 0 0 0 0\n0.00000 0.00000 0.00000\n",
       ANIM_ETRUNCATED, 21},
      {"huge frame count", GOOD_HEADER "MOTION\nFrames: 9999999\nFrame Time: 0.1\n0 0 0\n", ANIM_ETRUNCATED, 18},
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
  assert_int_equal(parse(GOOD_HEADER "MOTION\r\nFrames:\t1\r\nFrame Time:\t.1\r\n0 0 0 0 0 0\t0 0 0\r\n", err, sizeof err), 0);
  size_t cap = 200 * 64 + 256;
  char *deep = malloc(cap), *p = deep;
  p += sprintf(p, "HIERARCHY\nROOT j0\n{\nOFFSET 0 0 0\nCHANNELS 0\n");
  for (int i = 1; i < 200; i++) p += sprintf(p, "JOINT j%d\n{\nOFFSET 0 1 0\nCHANNELS 0\n", i);
  assert_int_equal(parse(deep, err, sizeof err), ANIM_EFORMAT);
  assert_non_null(strstr(err, "128"));
  free(deep);
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

static const struct {
  const char *folder;
  float scale;
} sources[] = {{"bandai-namco", 0.01f}, {"cmu-3dsmax", 0.056444f}, {"cmu-motionbuilder", 0.056444f}, {"games105", 1.0f}};

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
      cmocka_unit_test(test_channel_order_and_units),
      cmocka_unit_test(test_every_shared_clip_loads),
  };
  return cmocka_run_group_tests_name("bvh", tests, NULL, NULL);
}
