/*
 * test_export.c: the recording exporters, BVH (core/offline/bvh_write.h) and
 * glTF through assimp (import/assimp_export.h). Invalid inputs first (each
 * refused with an error naming what, nothing written), then the Euler
 * conversion (gimbal lock included), then real mocap written and read back
 * by the project's own readers (bvh.c, assimp_import.c): every bone's local
 * rotation and position of every frame comes back. Blender's reading of the
 * same files is tests/interop/test_export_blender.py.
 */
#include <math.h>
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
#include "assimp_export.h"
#include "assimp_import.h"
#include "offline/bvh.h"
#include "offline/bvh_write.h"
#include "offline/import.h"
#include "shared_data.h"

/* Metres: BVH text at 9 digits comes back to 1e-5; the glb reader resamples its keys at
 * the frame time it infers (float seconds), 1e-4 (0.1 mm, a tenth of Blender's bound). */
#define POSITION_TOLERANCE_M 1e-4f
#define ROTATION_TOLERANCE 1e-5f   /* 1 - |dot| of unit quaternions: about 0.5 degree / 1000 */

static char tmp_dir[64];

static int setup(void **state) {
  (void)state;
  snprintf(tmp_dir, sizeof tmp_dir, "/tmp/anim-export-XXXXXX");
  return mkdtemp(tmp_dir) ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", tmp_dir);
  return system(cmd) == 0 ? 0 : -1;
}

static void tmp_path(char *out, size_t size, const char *name) { snprintf(out, size, "%s/%s", tmp_dir, name); }

/* A two-bone clip of two frames (valid). */
static void small_clip(anim_clip_t *clip) {
  anim_skeleton_t sk = {.nbones = 2, .names = {"Hips", "Leg"}, .parents = {-1, 0}};
  sk.offsets[0] = vec3_make(0, 0.9f, 0);
  sk.offsets[1] = vec3_make(0, -0.45f, 0);
  memset(clip, 0, sizeof *clip);
  snprintf(clip->name, sizeof clip->name, "small");
  assert_int_equal(anim_clip_alloc(clip, &sk, 2, 1.0f / 60.0f), 0);
  for (int k = 0; k < 4; k++) clip->local_positions[k] = sk.offsets[k % 2];
}

static void test_invalid_inputs(void **state) {
  (void)state;
  char err[256], path[128];
  anim_clip_t clip;
  small_clip(&clip);
  tmp_path(path, sizeof path, "never.bvh");
  assert_int_equal(anim_bvh_save(path, &clip, 0.0f, err, sizeof err), ANIM_EINVAL);
  assert_non_null(strstr(err, "units_per_metre"));
  assert_int_equal(anim_bvh_save(path, &clip, NAN, err, sizeof err), ANIM_EINVAL);
  assert_int_equal(anim_bvh_write(NULL, &clip, 100.0f, err, sizeof err), ANIM_EINVAL);
  assert_int_equal(anim_bvh_save("/nonexistent-dir/x.bvh", &clip, 100.0f, err, sizeof err), ANIM_EIO);
  assert_non_null(strstr(err, "/nonexistent-dir/x.bvh"));
  tmp_path(path, sizeof path, "never.glb");
  assert_int_equal(anim_assimp_export(&clip, path, "fbx", err, sizeof err), ANIM_EINVAL);
  assert_non_null(strstr(err, "fbx"));
  assert_int_equal(anim_assimp_export(NULL, path, "glb2", err, sizeof err), ANIM_EINVAL);
  assert_int_equal(anim_assimp_export(&clip, "/nonexistent-dir/x.glb", "glb2", err, sizeof err), ANIM_EIO);
  /* An invalid clip (a rotation not of unit length): refused by both, named by anim_clip_validate. */
  clip.local_rotations[3] = quat_make(2, 0, 0, 0);
  assert_int_equal(anim_assimp_export(&clip, path, "glb2", err, sizeof err), ANIM_EINVAL);
  tmp_path(path, sizeof path, "never.bvh");
  assert_int_equal(anim_bvh_save(path, &clip, 100.0f, err, sizeof err), ANIM_EINVAL);
  clip.local_rotations[3] = quat_identity();
  clip.skeleton.parents[1] = 1; /* its own parent */
  assert_int_equal(anim_bvh_save(path, &clip, 100.0f, err, sizeof err), ANIM_EINVAL);
  anim_clip_free(&clip);
  tmp_path(path, sizeof path, "never.glb");
  assert_int_equal(access(path, F_OK), -1);
  tmp_path(path, sizeof path, "never.bvh");
  assert_int_equal(access(path, F_OK), -1);
}

/* Rz Rx Ry of the angles (degrees) as bvh.c composes them. */
static quat from_zxy(float z, float x, float y) {
  const float r = ANIM_PI / 180.0f;
  return quat_mul(quat_mul(quat_from_angle_axis(z * r, vec3_make(0, 0, 1)),
                           quat_from_angle_axis(x * r, vec3_make(1, 0, 0))),
                  quat_from_angle_axis(y * r, vec3_make(0, 1, 0)));
}

static void test_euler_zxy(void **state) {
  (void)state;
  static const float cases[][3] = {{0, 0, 0},   {30, 0, 0},     {0, 45, 0},   {0, 0, -60},   {170, -80, 100},
                                   {10, 90, 0}, {-20, -90, 35}, {179, 1, -179}, {-45, 30, 120}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    quat q = from_zxy(cases[i][0], cases[i][1], cases[i][2]);
    float z, x, y;
    anim_quat_to_euler_zxy(q, &z, &x, &y);
    float dot = fabsf(quat_dot(q, from_zxy(z, x, y)));
    if (1.0f - dot > ROTATION_TOLERANCE)
      fail_msg("case %zu (%g %g %g): back as (%g %g %g), 1 - |dot| = %g", i, (double)cases[i][0],
               (double)cases[i][1], (double)cases[i][2], (double)z, (double)x, (double)y, (double)(1.0f - dot));
  }
}

/* Every bone of every frame of got equals want's (bones matched by name). */
static void assert_same_motion(const anim_clip_t *want, const anim_clip_t *got, const char *what) {
  assert_int_equal(got->nframes, want->nframes);
  assert_int_equal(got->skeleton.nbones, want->skeleton.nbones);
  assert_true(fabsf(got->frame_time - want->frame_time) < 1e-6f);
  float worst_p = 0, worst_r = 0;
  int worst_bone = 0, worst_frame = 0;
  for (int b = 0; b < want->skeleton.nbones; b++) {
    int g = anim_skeleton_find(&got->skeleton, want->skeleton.names[b]);
    if (g < 0) fail_msg("%s: bone %s missing", what, want->skeleton.names[b]);
    int pw = want->skeleton.parents[b], pg = got->skeleton.parents[g];
    assert_string_equal(pw < 0 ? "" : want->skeleton.names[pw], pg < 0 ? "" : got->skeleton.names[pg]);
    for (int f = 0; f < want->nframes; f++) {
      size_t kw = (size_t)f * want->skeleton.nbones + b, kg = (size_t)f * got->skeleton.nbones + g;
      vec3 d = vec3_sub(want->local_positions[kw], got->local_positions[kg]);
      float dp = sqrtf(vec3_dot(d, d));
      float dr = 1.0f - fabsf(quat_dot(want->local_rotations[kw], got->local_rotations[kg]));
      if (dp > worst_p || dr > worst_r) worst_bone = b, worst_frame = f;
      worst_p = fmaxf(worst_p, dp), worst_r = fmaxf(worst_r, dr);
    }
  }
  printf("%s: %d frames x %d bones, worst position %.3g m, rotation 1-|dot| %.3g (%s, frame %d)\n", what,
         want->nframes, want->skeleton.nbones, (double)worst_p, (double)worst_r, want->skeleton.names[worst_bone],
         worst_frame);
  if (worst_p > POSITION_TOLERANCE_M || worst_r > ROTATION_TOLERANCE)
    fail_msg("%s: %s at frame %d off by %g m / 1-|dot| %g", what, want->skeleton.names[worst_bone], worst_frame,
             (double)worst_p, (double)worst_r);
}

static void test_real_mocap_round_trip(void **state) {
  (void)state;
  char src[512], path[128], err[512];
  if (!anim_test_shared_path(src, sizeof src, "data/mocap/bandai-namco/dataset-1_walk_normal_001.bvh")) return;
  anim_clip_t clip, back;
  assert_int_equal(anim_bvh_load(&clip, src, NULL, err, sizeof err), 0);

  tmp_path(path, sizeof path, "walk.bvh");
  assert_int_equal(anim_bvh_save(path, &clip, 100.0f, err, sizeof err), 0);
  assert_int_equal(anim_bvh_load(&back, path, NULL, err, sizeof err), 0);
  assert_same_motion(&clip, &back, "bvh");
  anim_clip_free(&back);

  tmp_path(path, sizeof path, "walk.glb");
  int rc = anim_assimp_export(&clip, path, "glb2", err, sizeof err);
  if (rc) fail_msg("%s", err);
  anim_clip_list_t list = {0};
  anim_import_options_t options = {0};
  rc = anim_assimp_import(&list, path, &options, err, sizeof err);
  if (rc) fail_msg("%s", err);
  assert_int_equal(list.count, 1);
  assert_same_motion(&clip, &list.clips[0], "glb");
  anim_clip_list_free(&list);
  anim_clip_free(&clip);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_invalid_inputs),
      cmocka_unit_test(test_euler_zxy),
      cmocka_unit_test(test_real_mocap_round_trip),
  };
  return cmocka_run_group_tests_name("export", tests, setup, teardown);
}
