/*
 * test_kinematics.c: forward kinematics. Global -> local -> global round
 * trips (procedural database, real CMU clip); the FK of one bone equals the
 * whole-pose FK; FK velocities equal the exact derivative of FK positions
 * along a smooth synthetic motion, and agree with finite differences of FK
 * positions on real 120 Hz mocap within a bound (failures name bone, frame).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "offline/bvh.h"
#include "pose/kinematics.h"
#include "offline/procgen.h"
#include "shared_data.h"
#include "procgen_db.h"

/* FK velocity (from differenced local transforms) vs the central difference
 * of FK positions on 120 Hz mocap, m/s: both approximate the true velocity
 * to second order, so they differ by the motion's curvature over two frames
 * (measured worst 0.10 walking, 0.25 at a running ankle; mean 0.002-0.005);
 * a wrong term (no w x arm, a local-axes angular velocity) is off by metres
 * per second. */
#define MAX_FK_VELOCITY_ERROR 0.4f
/* Same for angular velocity, rad/s (measured worst 0.41 walking, 1.8 running). */
#define MAX_FK_ANGULAR_ERROR 2.5f

static void test_round_trip_and_single_bone(void **state) {
  anim_database_t db;
  anim_test_procgen(&db);
  int nb = db.nbones;
  vec3 lp[ANIM_MAX_BONES], gp[ANIM_MAX_BONES];
  quat lr[ANIM_MAX_BONES], gr[ANIM_MAX_BONES];
  for (int f = 0; f < db.nframes; f += 131) {
    const vec3 *p = db.global_positions + (size_t)f * (size_t)nb;
    const quat *r = db.global_rotations + (size_t)f * (size_t)nb;
    anim_ik_local(lp, lr, p, r, db.skeleton.parents, nb);
    anim_fk(gp, gr, lp, lr, db.skeleton.parents, nb);
    for (int b = 0; b < nb; b++) {
      float dp = vec3_length(vec3_sub(gp[b], p[b])), dq = 1.0f - fabsf(quat_dot(gr[b], r[b]));
      if (dp > 1e-5f || dq > 1e-5f)
        fail_msg("frame %d bone %s: round trip off by %g m, 1 - |dot| = %g", f, db.skeleton.names[b], dp, dq);
      vec3 one;
      quat one_r;
      anim_fk_bone(&one, &one_r, db.local_positions + (size_t)f * (size_t)nb,
                   db.local_rotations + (size_t)f * (size_t)nb, db.skeleton.parents, b);
      assert_true(vec3_length(vec3_sub(one, p[b])) < 1e-5f);
    }
  }
  anim_database_free(&db);
}

/* A chain spinning and translating at known rates: FK velocity vs the
 * derivative of FK positions (central difference, tiny step). */
static void test_velocity_is_derivative_of_position(void **state) {
  enum { N = 4 };
  int parents[N] = {-1, 0, 1, 2};
  vec3 lv[N], lw[N];
  for (int b = 0; b < N; b++) {
    lv[b] = vec3_make(0.1f * (float)b, 0.0f, -0.2f);
    lw[b] = vec3_make(0.3f, 1.0f - 0.2f * (float)b, 0.5f);
  }
  float t = 0.7f, h = 1e-3f;
  vec3 p[3][N], gv[N], gw[N];
  quat r[3][N];
  for (int s = 0; s < 3; s++) {
    float tt = t + (float)(s - 1) * h;
    vec3 lp[N];
    quat lr[N];
    for (int b = 0; b < N; b++) {
      lp[b] = vec3_add(vec3_make(0.0f, 0.3f, 0.1f), vec3_scale(lv[b], tt));
      lr[b] = quat_from_scaled_angle_axis(vec3_scale(lw[b], tt));
    }
    if (s == 1) anim_fk_velocity(p[s], r[s], gv, gw, lp, lr, lv, lw, parents, N);
    else anim_fk(p[s], r[s], lp, lr, parents, N);
  }
  for (int b = 0; b < N; b++) {
    vec3 fd = vec3_scale(vec3_sub(p[2][b], p[0][b]), 1.0f / (2.0f * h));
    float e = vec3_length(vec3_sub(fd, gv[b]));
    if (e > 2e-3f) fail_msg("bone %d: FK velocity off the derivative by %g m/s", b, e);
    vec3 w = quat_angular_velocity(r[0][b], r[2][b], 2.0f * h);
    assert_true(vec3_length(vec3_sub(w, gw[b])) < 2e-2f);
  }
}

typedef struct {
  vec3 lp[ANIM_MAX_BONES], lv[ANIM_MAX_BONES], lw[ANIM_MAX_BONES], gp[ANIM_MAX_BONES], gv[ANIM_MAX_BONES];
  vec3 gw[ANIM_MAX_BONES], before[ANIM_MAX_BONES], after[ANIM_MAX_BONES];
  quat lr[ANIM_MAX_BONES], gr[ANIM_MAX_BONES], rb[ANIM_MAX_BONES], ra[ANIM_MAX_BONES];
} frame_work_t;

/* Local velocities of frame f of clip by central differences (f-s, f+s). */
static void local_velocities(frame_work_t *w, const anim_clip_t *clip, int f, int s) {
  int nb = clip->skeleton.nbones;
  float span = 2.0f * (float)s * clip->frame_time;
  for (int b = 0; b < nb; b++) {
    size_t k = (size_t)f * (size_t)nb + (size_t)b, k0 = k - (size_t)(s * nb), k1 = k + (size_t)(s * nb);
    w->lp[b] = clip->local_positions[k];
    w->lr[b] = clip->local_rotations[k];
    w->lv[b] = vec3_scale(vec3_sub(clip->local_positions[k1], clip->local_positions[k0]), 1.0f / span);
    w->lw[b] = quat_angular_velocity(clip->local_rotations[k0], clip->local_rotations[k1], span);
  }
}

typedef struct {
  float worst, worst_angular, mean;
  int frame, bone;
} velocity_error_t;

/* Real motion capture, differences over s frames each side: at every frame
 * and bone, FK velocities from differenced local transforms against
 * differences of FK positions and rotations; every 37th frame the
 * single-bone form against the whole-pose form. */
static velocity_error_t clip_velocity_error(const anim_clip_t *clip, int s) {
  int nb = clip->skeleton.nbones;
  const int *parents = clip->skeleton.parents;
  frame_work_t *w = malloc(sizeof *w);
  float worst = 0.0f, worst_w = 0.0f, sum = 0.0f, span = 2.0f * (float)s * clip->frame_time;
  int wf = -1, wb = -1, n = 0;
  for (int f = 2; f + 2 < clip->nframes; f++) {
    local_velocities(w, clip, f, s);
    anim_fk_velocity(w->gp, w->gr, w->gv, w->gw, w->lp, w->lr, w->lv, w->lw, parents, nb);
    anim_fk(w->before, w->rb, clip->local_positions + (size_t)(f - s) * (size_t)nb,
            clip->local_rotations + (size_t)(f - s) * (size_t)nb, parents, nb);
    anim_fk(w->after, w->ra, clip->local_positions + (size_t)(f + s) * (size_t)nb,
            clip->local_rotations + (size_t)(f + s) * (size_t)nb, parents, nb);
    for (int b = 0; b < nb; b++) {
      float e = vec3_length(vec3_sub(vec3_scale(vec3_sub(w->after[b], w->before[b]), 1.0f / span), w->gv[b]));
      float ew = vec3_length(vec3_sub(quat_angular_velocity(w->rb[b], w->ra[b], span), w->gw[b]));
      sum += e, n++;
      if (e > worst) worst = e, wf = f, wb = b;
      worst_w = fmaxf(worst_w, ew);
      if (f % 37 == 0) {
        vec3 p, v, av;
        quat r;
        anim_fk_bone_velocity(&p, &r, &v, &av, w->lp, w->lr, w->lv, w->lw, parents, b);
        assert_true(vec3_length(vec3_sub(v, w->gv[b])) < 1e-4f && vec3_length(vec3_sub(av, w->gw[b])) < 1e-4f);
        assert_true(vec3_length(vec3_sub(p, w->gp[b])) < 1e-5f);
      }
    }
  }
  free(w);
  velocity_error_t e = {worst, worst_w, sum / (float)n, wf, wb};
  return e;
}

static void check_clip_velocities(const char *relative, float scale) {
  char path[1024], err[256];
  if (!anim_test_shared_path(path, sizeof path, relative)) return;
  anim_clip_t clip;
  anim_bvh_options_t o = {scale};
  assert_int_equal(anim_bvh_load(&clip, path, &o, err, sizeof err), 0);
  velocity_error_t e = clip_velocity_error(&clip, 1);
  const char *bone = clip.skeleton.names[e.bone];
  printf("%s: FK velocity vs differences: mean %.4f, worst %.4f m/s (bone %s, frame %d); angular worst %.3f rad/s\n",
         relative, e.mean, e.worst, bone, e.frame, e.worst_angular);
  if (e.worst > MAX_FK_VELOCITY_ERROR)
    fail_msg("%s: FK velocity %.3f m/s off at bone %s frame %d", relative, e.worst, bone, e.frame);
  if (e.worst_angular > MAX_FK_ANGULAR_ERROR)
    fail_msg("%s: FK angular velocity %.3f rad/s off", relative, e.worst_angular);
  anim_clip_free(&clip);
}

static void test_velocities_on_real_mocap(void **state) {
  check_clip_velocities("data/mocap/cmu-motionbuilder/02_01.bvh", 0.056444f);
  check_clip_velocities("data/mocap/cmu-3dsmax/102_01.bvh", 0.056444f);
}

/* Global -> local -> global on every frame of a real clip with mixed Euler
 * orders: positions and rotations come back. */
static void test_round_trip_on_real_mocap(void **state) {
  char path[1024], err[256];
  if (!anim_test_shared_path(path, sizeof path, "data/mocap/cmu-3dsmax/131_03.bvh")) return;
  anim_clip_t clip;
  anim_bvh_options_t o = {0.056444f};
  assert_int_equal(anim_bvh_load(&clip, path, &o, err, sizeof err), 0);
  int nb = clip.skeleton.nbones;
  frame_work_t *w = malloc(sizeof *w);
  float worst = 0.0f;
  int wf = -1, wb = -1;
  for (int f = 0; f < clip.nframes; f++) {
    const vec3 *lp = clip.local_positions + (size_t)f * (size_t)nb;
    const quat *lr = clip.local_rotations + (size_t)f * (size_t)nb;
    anim_fk(w->gp, w->gr, lp, lr, clip.skeleton.parents, nb);
    anim_ik_local(w->lp, w->lr, w->gp, w->gr, clip.skeleton.parents, nb);
    anim_fk(w->before, w->rb, w->lp, w->lr, clip.skeleton.parents, nb);
    for (int b = 0; b < nb; b++) {
      float e = fmaxf(vec3_length(vec3_sub(w->before[b], w->gp[b])), 1.0f - fabsf(quat_dot(w->rb[b], w->gr[b])));
      e = fmaxf(e, vec3_length(vec3_sub(w->lp[b], lp[b])));
      if (e > worst) worst = e, wf = f, wb = b;
    }
  }
  if (worst > 1e-4f) fail_msg("round trip off by %g at bone %s frame %d", worst, clip.skeleton.names[wb], wf);
  free(w);
  anim_clip_free(&clip);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trip_and_single_bone),
      cmocka_unit_test(test_velocity_is_derivative_of_position),
      cmocka_unit_test(test_velocities_on_real_mocap),
      cmocka_unit_test(test_round_trip_on_real_mocap),
  };
  return cmocka_run_group_tests_name("kinematics", tests, NULL, NULL);
}
