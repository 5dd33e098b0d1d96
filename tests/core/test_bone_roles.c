/*
 * test_bone_roles.c: the hips, thighs, feet and toes found by name
 * (core/offline/bone_roles.c). Invalid inputs first (unknown role names,
 * explicit names the skeleton lacks), then every naming scheme the default
 * schema claims to read, on synthetic skeletons written as the rigs write
 * them and on the real shared BVH files; namesakes decided by depth; the
 * hips found where the legs hang whatever their name; explicit names win.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "anim_error.h"
#include "offline/bone_roles.h"
#include "offline/bvh.h"
#include "shared_data.h"

/* A skeleton from "name<parent" lines: parent given by name ("" for the root). */
static void skeleton_of(anim_skeleton_t *s, const char *const *bones) {
  memset(s, 0, sizeof *s);
  for (int b = 0; bones[b]; b++) {
    const char *lt = strchr(bones[b], '<');
    snprintf(s->names[b], ANIM_NAME_MAX, "%.*s", (int)(lt - bones[b]), bones[b]);
    s->parents[b] = lt[1] ? anim_skeleton_find(s, lt + 1) : -1;
    assert_true(b == 0 || s->parents[b] >= 0);
    s->nbones = b + 1;
  }
}

/* The expected bone name per role ("" = none) against what was found. */
static void expect_roles(const anim_skeleton_t *s, const anim_bone_names_t *named, const char *const *expected,
                         const char *scheme) {
  int roles[ANIM_BONE_ROLE_COUNT];
  char err[256];
  if (anim_bone_roles_find(s, named, roles, err, sizeof err)) fail_msg("%s: %s", scheme, err);
  for (int r = 0; r < ANIM_BONE_ROLE_COUNT; r++) {
    const char *got = roles[r] >= 0 ? s->names[roles[r]] : "";
    if (strcmp(got, expected[r]) != 0)
      fail_msg("%s: %s is \"%s\", expected \"%s\"", scheme, anim_bone_role_name((anim_bone_role_t)r), got, expected[r]);
  }
}

static void test_invalid(void **state) {
  assert_int_equal(anim_bone_role_parse("foot"), -1);
  assert_int_equal(anim_bone_role_parse(NULL), -1);
  assert_int_equal(anim_bone_role_parse("toe-right"), ANIM_BONE_TOE_RIGHT);
  assert_string_equal(anim_bone_role_name(ANIM_BONE_THIGH_LEFT), "thigh-left");
  static const char *const bones[] = {"Hips<", "LeftUpLeg<Hips", "LeftFoot<LeftUpLeg", NULL};
  anim_skeleton_t s;
  skeleton_of(&s, bones);
  anim_bone_names_t named = {{NULL}};
  named.names[ANIM_BONE_FOOT_RIGHT] = "RightFoot";
  int roles[ANIM_BONE_ROLE_COUNT];
  char err[256];
  assert_int_equal(anim_bone_roles_find(&s, &named, roles, err, sizeof err), ANIM_ENOTFOUND);
  assert_non_null(strstr(err, "foot-right"));
  assert_non_null(strstr(err, "RightFoot"));
}

/* Order of the expected names: hips, thigh l/r, foot l/r, toe l/r. */
static void test_naming_schemes(void **state) {
  static const char *const mixamo[] = {"mixamorig:Hips<", "mixamorig:Spine<mixamorig:Hips",
                                       "mixamorig:LeftUpLeg<mixamorig:Hips", "mixamorig:LeftLeg<mixamorig:LeftUpLeg",
                                       "mixamorig:LeftFoot<mixamorig:LeftLeg",
                                       "mixamorig:LeftToeBase<mixamorig:LeftFoot",
                                       "mixamorig:LeftToe_End<mixamorig:LeftToeBase",
                                       "mixamorig:RightUpLeg<mixamorig:Hips", "mixamorig:RightLeg<mixamorig:RightUpLeg",
                                       "mixamorig:RightFoot<mixamorig:RightLeg",
                                       "mixamorig:RightToeBase<mixamorig:RightFoot",
                                       "mixamorig:RightToe_End<mixamorig:RightToeBase", NULL};
  static const char *const mixamo_roles[] = {"mixamorig:Hips", "mixamorig:LeftUpLeg", "mixamorig:RightUpLeg",
                                             "mixamorig:LeftFoot", "mixamorig:RightFoot", "mixamorig:LeftToeBase",
                                             "mixamorig:RightToeBase"};
  /* LaFAN1 (Ubisoft): Hips, LeftUpLeg, LeftLeg, LeftFoot, LeftToe. */
  static const char *const lafan[] = {"Hips<", "LeftUpLeg<Hips", "LeftLeg<LeftUpLeg", "LeftFoot<LeftLeg",
                                      "LeftToe<LeftFoot", "RightUpLeg<Hips", "RightLeg<RightUpLeg",
                                      "RightFoot<RightLeg", "RightToe<RightFoot", "Spine<Hips", NULL};
  static const char *const lafan_roles[] = {"Hips", "LeftUpLeg", "RightUpLeg", "LeftFoot", "RightFoot",
                                            "LeftToe", "RightToe"};
  /* Unreal: pelvis, thigh_l, calf_l, foot_l, ball_l. */
  static const char *const unreal[] = {"root<", "pelvis<root", "thigh_l<pelvis", "calf_l<thigh_l", "foot_l<calf_l",
                                       "ball_l<foot_l", "thigh_r<pelvis", "calf_r<thigh_r", "foot_r<calf_r",
                                       "ball_r<foot_r", "spine_01<pelvis", "ik_foot_root<root",
                                       "ik_foot_l<ik_foot_root", "ik_foot_r<ik_foot_root", NULL};
  static const char *const unreal_roles[] = {"pelvis", "thigh_l", "thigh_r", "foot_l", "foot_r", "ball_l", "ball_r"};
  /* Blender (Rigify deform bones), dot sides. */
  static const char *const blender[] = {"DEF-spine<", "DEF-thigh.L<DEF-spine", "DEF-shin.L<DEF-thigh.L",
                                        "DEF-foot.L<DEF-shin.L", "DEF-toe.L<DEF-foot.L", "DEF-thigh.R<DEF-spine",
                                        "DEF-shin.R<DEF-thigh.R", "DEF-foot.R<DEF-shin.R", "DEF-toe.R<DEF-foot.R",
                                        NULL};
  static const char *const blender_roles[] = {"DEF-spine", "DEF-thigh.L", "DEF-thigh.R", "DEF-foot.L", "DEF-foot.R",
                                              "DEF-toe.L", "DEF-toe.R"};
  /* 3ds Max Biped: spaces, a side letter word, digits, Nub end bones. */
  static const char *const biped[] = {"Bip01<", "Bip01 Pelvis<Bip01", "Bip01 Spine<Bip01 Pelvis",
                                      "Bip01 L Thigh<Bip01 Spine", "Bip01 L Calf<Bip01 L Thigh",
                                      "Bip01 L Foot<Bip01 L Calf", "Bip01 L Toe0<Bip01 L Foot",
                                      "Bip01 L Toe0Nub<Bip01 L Toe0", "Bip01 R Thigh<Bip01 Spine",
                                      "Bip01 R Calf<Bip01 R Thigh", "Bip01 R Foot<Bip01 R Calf",
                                      "Bip01 R Toe0<Bip01 R Foot", "Bip01 R Toe0Nub<Bip01 R Toe0", NULL};
  static const char *const biped_roles[] = {"Bip01 Spine", "Bip01 L Thigh", "Bip01 R Thigh", "Bip01 L Foot",
                                            "Bip01 R Foot", "Bip01 L Toe0", "Bip01 R Toe0"};
  /* SMPL: L_Ankle is the ankle, L_Foot the ball: the shallower foot wins. */
  static const char *const smpl[] = {"Pelvis<", "L_Hip<Pelvis", "L_Knee<L_Hip", "L_Ankle<L_Knee", "L_Foot<L_Ankle",
                                     "R_Hip<Pelvis", "R_Knee<R_Hip", "R_Ankle<R_Knee", "R_Foot<R_Ankle", NULL};
  static const char *const smpl_roles[] = {"Pelvis", "L_Hip", "R_Hip", "L_Ankle", "R_Ankle", "", ""};
  /* All lower case with the side glued on; a lone hips name without legs. */
  static const char *const glued[] = {"hip<", "lthigh<hip", "lfoot<lthigh", "rthigh<hip", "rfoot<rthigh", NULL};
  static const char *const glued_roles[] = {"hip", "lthigh", "rthigh", "lfoot", "rfoot", "", ""};
  static const char *const legless[] = {"root<", "Pelvis<root", "Spine<Pelvis", NULL};
  static const char *const legless_roles[] = {"Pelvis", "", "", "", "", "", ""};
  const struct {
    const char *scheme;
    const char *const *bones, *const *roles;
  } cases[] = {{"Mixamo", mixamo, mixamo_roles},     {"LaFAN1", lafan, lafan_roles},   {"Unreal", unreal, unreal_roles},
               {"Blender", blender, blender_roles}, {"Biped", biped, biped_roles},   {"SMPL", smpl, smpl_roles},
               {"glued", glued, glued_roles},       {"legless", legless, legless_roles}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    anim_skeleton_t s;
    skeleton_of(&s, cases[i].bones);
    expect_roles(&s, NULL, cases[i].roles, cases[i].scheme);
  }
}

/* The real files: CMU's zero-length LHipJoint loses to LeftHip; Bandai's
 * ground-level joint_Root is not the hips; GAMES-105's hips are RootJoint
 * (where the legs hang), not pelvis_lowerback. */
static void test_shared_files(void **state) {
  static const struct {
    const char *file;
    const char *roles[ANIM_BONE_ROLE_COUNT];
  } cases[] = {
      {"cmu-3dsmax/131_01.bvh", {"Hips", "LeftHip", "RightHip", "LeftAnkle", "RightAnkle", "LeftToe", "RightToe"}},
      {"cmu-motionbuilder/02_01.bvh",
       {"Hips", "LeftUpLeg", "RightUpLeg", "LeftFoot", "RightFoot", "LeftToeBase", "RightToeBase"}},
      {"bandai-namco/dataset-1_walk_normal_002.bvh",
       {"Hips", "UpperLeg_L", "UpperLeg_R", "Foot_L", "Foot_R", "Toes_L", "Toes_R"}},
      {"games105/walkF.bvh", {"RootJoint", "lHip", "rHip", "lAnkle", "rAnkle", "lToeJoint", "rToeJoint"}},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char rel[256], path[1024], err[256];
    snprintf(rel, sizeof rel, "data/mocap/%s", cases[i].file);
    if (!anim_test_shared_path(path, sizeof path, rel)) return;
    anim_clip_t clip;
    anim_bvh_options_t o = {0.01f};
    if (anim_bvh_load(&clip, path, &o, err, sizeof err)) fail_msg("%s", err);
    expect_roles(&clip.skeleton, NULL, cases[i].roles, cases[i].file);
    anim_clip_free(&clip);
  }
}

/* Explicit names win over names, and the hips follow explicit thighs. */
static void test_explicit_names(void **state) {
  static const char *const odd[] = {"body<", "a<body", "b<a", "c<b", "d<body", "e<d", "f<e", NULL};
  anim_skeleton_t s;
  skeleton_of(&s, odd);
  static const char *const nothing[] = {"body", "", "", "", "", "", ""};
  expect_roles(&s, NULL, nothing, "unnamed");
  anim_bone_names_t named = {{NULL}};
  named.names[ANIM_BONE_THIGH_LEFT] = "a", named.names[ANIM_BONE_THIGH_RIGHT] = "d";
  named.names[ANIM_BONE_FOOT_LEFT] = "b", named.names[ANIM_BONE_FOOT_RIGHT] = "e";
  named.names[ANIM_BONE_TOE_LEFT] = "c", named.names[ANIM_BONE_TOE_RIGHT] = "";
  static const char *const given[] = {"body", "a", "d", "b", "e", "c", ""};
  expect_roles(&s, &named, given, "explicit");
  static const char *const lafan[] = {"Hips<", "LeftUpLeg<Hips", "LeftFoot<LeftUpLeg", "LeftToe<LeftFoot",
                                      "RightUpLeg<Hips", "RightFoot<RightUpLeg", "RightToe<RightFoot", NULL};
  skeleton_of(&s, lafan);
  anim_bone_names_t toes_as_feet = {{NULL}};
  toes_as_feet.names[ANIM_BONE_FOOT_LEFT] = "LeftToe";
  static const char *const mixed[] = {"Hips", "LeftUpLeg", "RightUpLeg", "LeftToe", "RightFoot", "LeftToe", "RightToe"};
  expect_roles(&s, &toes_as_feet, mixed, "one explicit");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_invalid),
      cmocka_unit_test(test_naming_schemes),
      cmocka_unit_test(test_shared_files),
      cmocka_unit_test(test_explicit_names),
  };
  return cmocka_run_group_tests_name("bone_roles", tests, NULL, NULL);
}
