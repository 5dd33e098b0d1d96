/*
 * test_kinematics.c: forward kinematics on a real skeleton. Global -> local ->
 * global round trips; the FK of one bone equals the whole-pose FK; FK
 * velocities equal the derivative of FK positions along a smooth motion.
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
#include "kinematics.h"
#include "procgen.h"

static void test_round_trip_and_single_bone(void **state) {
  anim_database_t db;
  char err[256];
  assert_int_equal(anim_procgen_database(&db, NULL, err, sizeof err), 0);
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
      anim_fk_bone(&one, &one_r, db.local_positions + (size_t)f * (size_t)nb, db.local_rotations + (size_t)f * (size_t)nb,
                   db.skeleton.parents, b);
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trip_and_single_bone),
      cmocka_unit_test(test_velocity_is_derivative_of_position),
  };
  return cmocka_run_group_tests_name("kinematics", tests, NULL, NULL);
}
