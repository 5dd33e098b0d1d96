/*
 * test_inertialize_service.c: inertialization state, transition costs and
 * spring tuning over the wire, checked against the core maths run locally
 * (same functions, so the wire must not change a bit of it) and against
 * closed forms.
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
#include "anim_client.h"
#include "motion/inertialize.h"
#include "server_proc.h"
#include "motion/spring.h"
#include "motion/transition_cost.h"

#define TIMEOUT_MS 10000
#define NB 3

static anim_test_server_t server;
static anim_client_t *client;

static void normalize_rotations(float *q, int n);
static float src_rot[4 * NB], dst_rot[4 * NB];

static int setup(void **state) {
  normalize_rotations(src_rot, NB);
  normalize_rotations(dst_rot, NB);
  if (anim_test_server_start(&server, "inertialize_service", NULL) != 0) return -1;
  int err;
  client = anim_client_connect(server.host, server.port, NULL, &err);
  return client ? 0 : -1;
}

static int teardown(void **state) {
  anim_client_close(client);
  return anim_test_server_stop(&server) == 0 ? 0 : -1;
}

/* Two explicit three-bone poses with velocities. */
static float src_pos[3 * NB] = {0, 0, 0, 0, 1, 0, 0.1f, 0.4f, 0};
static float src_vel[3 * NB] = {1, 0, 0, 0, 0, 0, 0.5f, 0, 0};
static float src_rot[4 * NB] = {1, 0, 0, 0, 0.9238795f, 0, 0.3826834f, 0, 1, 0, 0, 0};
static float src_ang[3 * NB] = {0, 0.5f, 0, 0, 0, 0, 1, 0, 0};
static float dst_pos[3 * NB] = {0.2f, 0, 0, 0, 1, 0, 0.1f, 0.4f, 0.1f};
static float dst_vel[3 * NB] = {1.2f, 0, 0, 0, 0, 0, -0.5f, 0, 0};
static float dst_rot[4 * NB] = {0.9659258f, 0, 0.2588190f, 0, 1, 0, 0, 0, 0.9238795f, 0.3826834f, 0, 0};
static float dst_ang[3 * NB] = {0, 0, 0, 0, 1, 0, 0, 0, 0};

static const anim_pose_source_t src = {-1, NB, src_pos, src_vel, src_rot, src_ang};

/* The test rotations are written to 7 digits: make them unit exactly as the
 * core sees them, so local and remote runs start from the same bits. */
static void normalize_rotations(float *q, int n) {
  for (int b = 0; b < n; b++) {
    quat r = quat_normalize(quat_make(q[4 * b], q[4 * b + 1], q[4 * b + 2], q[4 * b + 3]));
    q[4 * b] = r.w, q[4 * b + 1] = r.x, q[4 * b + 2] = r.y, q[4 * b + 3] = r.z;
  }
}
static const anim_pose_source_t dst = {-1, NB, dst_pos, dst_vel, dst_rot, dst_ang};

/* ---- invalid input first ------------------------------------------------------------- */

static void test_bad_inertialization_requests(void **state) {
  anim_inertializer_state_t *out = NULL;
  float bad_rot[4 * NB];
  memcpy(bad_rot, src_rot, sizeof bad_rot);
  bad_rot[0] = 3.0f; /* not unit */
  anim_pose_source_t not_unit = src;
  not_unit.rotations = bad_rot;
  assert_int_equal(anim_client_inertialize_transition(client, NULL, &not_unit, &dst, NULL, &out, TIMEOUT_MS),
                   ANIM_EINVAL);
  float nan_pos[3 * NB];
  memcpy(nan_pos, src_pos, sizeof nan_pos);
  nan_pos[4] = NAN;
  anim_pose_source_t with_nan = src;
  with_nan.positions = nan_pos;
  assert_int_equal(anim_client_inertialize_transition(client, NULL, &with_nan, &dst, NULL, &out, TIMEOUT_MS),
                   ANIM_ENONFINITE);
  anim_pose_source_t two_bones = dst;
  two_bones.nbones = 2;
  assert_int_equal(anim_client_inertialize_transition(client, NULL, &src, &two_bones, NULL, &out, TIMEOUT_MS),
                   ANIM_EDIMENSION);
  anim_pose_source_t frame = {0, 0, NULL, NULL, NULL, NULL};
  assert_int_equal(anim_client_inertialize_transition(client, "nope", &frame, &dst, NULL, &out, TIMEOUT_MS),
                   ANIM_ENOTFOUND);
  assert_int_equal(anim_client_inertialize_transition(client, "", &frame, &dst, NULL, &out, TIMEOUT_MS), ANIM_EBADNAME);
  anim_pose_source_t far = {100000000, 0, NULL, NULL, NULL, NULL};
  assert_int_equal(anim_client_inertialize_transition(client, "default", &far, &frame, NULL, &out, TIMEOUT_MS),
                   ANIM_ERANGE);
  anim_transition_cost_t *cost = NULL;
  assert_int_equal(anim_client_transition_cost(client, NULL, &src, &dst, 0.0f, NULL, 0, &cost, TIMEOUT_MS),
                   ANIM_EINVAL);
  assert_int_equal(anim_client_transition_cost(client, NULL, &src, &dst, NAN, NULL, 0, &cost, TIMEOUT_MS),
                   ANIM_ENONFINITE);
  const char *bone = "NoSuchBone";
  assert_int_equal(anim_client_transition_cost(client, "default", &frame, &frame, 0.1f, &bone, 1, &cost, TIMEOUT_MS),
                   ANIM_ENOTFOUND);
  anim_spring_tuning_t t;
  assert_int_equal(anim_client_spring_halflife(client, 1.5, 1.0, 1.0, 0.0, 1.0, &t, TIMEOUT_MS), ANIM_EINVAL);
  assert_int_equal(anim_client_spring_halflife(client, 0.5, -1.0, 1.0, 0.0, 1.0, &t, TIMEOUT_MS), ANIM_EINVAL);
  assert_int_equal(anim_client_spring_halflife(client, 0.5, INFINITY, 1.0, 0.0, 1.0, &t, TIMEOUT_MS), ANIM_ENONFINITE);
  /* A fast start toward zero (v0 t / x0 = -5): every critically damped spring
   * is past alpha x0 by then (x(t) <= x0 e^(v0 t / x0)), so none fits. */
  assert_int_equal(anim_client_spring_halflife(client, 0.5, 1.0, 1.0, -5.0, 1.0, &t, TIMEOUT_MS), ANIM_ERANGE);
  assert_int_equal(anim_client_spring_from_constraint(client, 1.5, 0.1, 1.0 / 60, &t, TIMEOUT_MS), ANIM_EINVAL);
  assert_int_equal(anim_client_spring_to_constraint(client, 10.0, 1.0, 0.0, &t, TIMEOUT_MS), ANIM_EINVAL);
  assert_int_equal(anim_client_ping(client, "ok", 2, NULL, TIMEOUT_MS), 0);
}

/* ---- behaviour --------------------------------------------------------------------------- */

static void local_transition(anim_inertializer_t *s, vec3 *op, vec3 *ov, quat *oq, vec3 *ow) {
  assert_int_equal(anim_inertializer_init(s, NB, op, ov, oq, ow), 0);
  anim_pose_view_t a = {NB, (const vec3 *)src_pos, (const vec3 *)src_vel, (const quat *)src_rot, (const vec3 *)src_ang};
  anim_pose_view_t b = {NB, (const vec3 *)dst_pos, (const vec3 *)dst_vel, (const quat *)dst_rot, (const vec3 *)dst_ang};
  assert_int_equal(anim_inertializer_transition(s, &a, &b), 0);
}

static void test_transition_and_evaluate_match_the_core(void **state) {
  anim_inertializer_state_t *st, *later;
  anim_pose_t *pose;
  assert_int_equal(anim_client_inertialize_transition(client, NULL, &src, &dst, NULL, &st, TIMEOUT_MS), 0);
  assert_int_equal(st->nbones, NB);
  vec3 op[NB], ov[NB], ow[NB];
  quat oq[NB];
  anim_inertializer_t s;
  local_transition(&s, op, ov, oq, ow);
  assert_memory_equal(st->offset_positions, op, sizeof op);
  assert_memory_equal(st->offset_velocities, ov, sizeof ov);
  assert_memory_equal(st->offset_rotations, oq, sizeof oq);

  for (float t = 0.0f; t < 2.0f; t += 0.37f) {
    assert_int_equal(anim_client_inertialize_evaluate(client, NULL, st, &dst, 0.2f, t, &later, &pose, TIMEOUT_MS), 0);
    vec3 out_p[NB], out_v[NB], out_w[NB];
    quat out_q[NB];
    anim_pose_buffer_t buf = {NB, out_p, out_v, out_q, out_w};
    anim_pose_view_t in = {NB, (const vec3 *)dst_pos, (const vec3 *)dst_vel, (const quat *)dst_rot,
                           (const vec3 *)dst_ang};
    assert_int_equal(anim_inertializer_evaluate(&s, &buf, &in, 0.2f, t), 0);
    assert_memory_equal(pose->local_positions, out_p, sizeof out_p);
    assert_memory_equal(pose->local_rotations, out_q, sizeof out_q);
    /* Decayed offsets: the closed form of a critically damped offset. */
    float y = halflife_to_damping(0.2f) / 2.0f;
    for (int b = 1; b < NB; b++)
      for (int d = 0; d < 3; d++) {
        float x0 = st->offset_positions[3 * b + d], v0 = st->offset_velocities[3 * b + d];
        float expect = expf(-y * t) * (x0 + (v0 + x0 * y) * t);
        assert_true(fabsf(later->offset_positions[3 * b + d] - expect) < 1e-5f);
      }
    anim_inertializer_state_free(later);
    anim_pose_free(pose);
  }
  /* At t = 0 the display is the source pose: the transition is invisible. */
  assert_int_equal(anim_client_inertialize_evaluate(client, NULL, st, &dst, 0.2f, 0.0f, NULL, &pose, TIMEOUT_MS), 0);
  for (int i = 3; i < 3 * NB; i++) assert_true(fabsf(pose->local_positions[i] - src_pos[i]) < 1e-5f);
  anim_pose_free(pose);
  anim_inertializer_state_free(st);
}

static void test_transition_cost_matches_the_core(void **state) {
  anim_transition_cost_t *cost;
  assert_int_equal(anim_client_transition_cost(client, NULL, &src, &dst, 0.15f, NULL, 0, &cost, TIMEOUT_MS), 0);
  assert_int_equal(cost->nbones, NB);
  float total = 0.0f;
  for (int b = 0; b < NB; b++) {
    vec3 x = vec3_sub(((const vec3 *)src_pos)[b], ((const vec3 *)dst_pos)[b]);
    vec3 v = vec3_sub(((const vec3 *)src_vel)[b], ((const vec3 *)dst_vel)[b]);
    assert_true(cost->exact_per_bone[b] == anim_transition_cost_exact_vec3(x, v, 0.15f));
    assert_true(cost->approximate_per_bone[b] <= cost->exact_per_bone[b] + 1e-6f);
    total += cost->exact_per_bone[b];
  }
  assert_true(fabsf(total - cost->exact) < 1e-6f);
  anim_transition_cost_free(cost);

  /* Frames of the default database, named bones. */
  const char *bones[] = {"LeftFoot", "RightFoot"};
  anim_pose_source_t a = {10, 0, NULL, NULL, NULL, NULL}, b = {500, 0, NULL, NULL, NULL, NULL};
  int rc = anim_client_transition_cost(client, "default", &a, &b, 0.15f, bones, 2, &cost, TIMEOUT_MS);
  assert_int_equal(rc, 0);
  assert_int_equal(cost->nbones, 2);
  assert_string_equal(cost->names[0], "LeftFoot");
  assert_true(cost->exact > 0.0f);
  anim_transition_cost_free(cost);
  /* A frame to itself costs nothing. */
  assert_int_equal(anim_client_transition_cost(client, "default", &a, &a, 0.15f, NULL, 0, &cost, TIMEOUT_MS), 0);
  assert_true(cost->exact == 0.0f);
  anim_transition_cost_free(cost);
}

static void test_spring_tuning(void **state) {
  anim_spring_tuning_t t;
  /* At rest: x(t)/x0 = e^-yt (1 + yt) must equal alpha at the returned half-life. */
  assert_int_equal(anim_client_spring_halflife(client, 0.1, 0.5, 1.0, 0.0, 2.0, &t, TIMEOUT_MS), 0);
  double y = 2.0 * log(2.0) / t.halflife;
  assert_true(fabs(exp(-y * 0.5) * (1.0 + y * 0.5) - 0.1) < 1e-9);
  assert_true(fabs(t.stiffness - 2.0 * y * y) < 1e-6 * t.stiffness);
  assert_true(fabs(t.damping - 2.0 * 2.0 * y) < 1e-6 * t.damping);
  /* With velocity: e^-yt (x0 + (v0 + y x0) t) = alpha x0. */
  assert_int_equal(anim_client_spring_halflife(client, 0.2, 0.4, 2.0, -1.0, 1.0, &t, TIMEOUT_MS), 0);
  y = 2.0 * log(2.0) / t.halflife;
  assert_true(fabs(exp(-y * 0.4) * (2.0 + (-1.0 + y * 2.0) * 0.4) - 0.4) < 1e-9);
  /* ERP/CFM round trip. */
  assert_int_equal(anim_client_spring_to_constraint(client, 500.0, 20.0, 1.0 / 60.0, &t, TIMEOUT_MS), 0);
  assert_true(fabs(t.erp - (500.0 / 60.0) / (500.0 / 60.0 + 20.0)) < 1e-12);
  assert_true(fabs(t.cfm - 1.0 / (500.0 / 60.0 + 20.0)) < 1e-12);
  anim_spring_tuning_t back;
  assert_int_equal(anim_client_spring_from_constraint(client, t.erp, t.cfm, 1.0 / 60.0, &back, TIMEOUT_MS), 0);
  assert_true(fabs(back.stiffness - 500.0) < 1e-9 && fabs(back.damping - 20.0) < 1e-9);
}

/* ---- the asynchronous forms, all pipelined at once ---------------------------------------- */

typedef struct {
  int done, failures;
  int list_count, pose_frames, inertialize_bones;
  char described[64];
  float cost, halflife;
} async_results_t;

static void on_list(anim_client_t *c, uint64_t id, int status, const anim_db_summary_t *s, int n, void *data) {
  async_results_t *r = data;
  r->done++, r->failures += status != 0, r->list_count = n;
}
static void on_describe(anim_client_t *c, uint64_t id, int status, const anim_db_description_t *d, void *data) {
  async_results_t *r = data;
  r->done++, r->failures += status != 0;
  if (d) snprintf(r->described, sizeof r->described, "%s", d->summary.name);
}
static void on_pose(anim_client_t *c, uint64_t id, int status, const anim_pose_reply_t *p, void *data) {
  async_results_t *r = data;
  r->done++, r->failures += status != 0;
  if (p) r->pose_frames = p->nposes;
}
static void on_inertialize(anim_client_t *c, uint64_t id, int status, const anim_inertializer_state_t *st,
                           const anim_pose_t *pose, void *data) {
  async_results_t *r = data;
  r->done++, r->failures += status != 0;
  if (st) r->inertialize_bones = st->nbones;
}
static void on_cost(anim_client_t *c, uint64_t id, int status, const anim_transition_cost_t *cost, void *data) {
  async_results_t *r = data;
  r->done++, r->failures += status != 0;
  if (cost) r->cost = cost->exact;
}
static void on_spring(anim_client_t *c, uint64_t id, int status, const anim_spring_tuning_t *t, void *data) {
  async_results_t *r = data;
  r->done++, r->failures += status != 0;
  if (t) r->halflife = (float)t->halflife;
}
static void on_refused(anim_client_t *c, uint64_t id, int status, const anim_db_description_t *d, void *data) {
  async_results_t *r = data;
  r->done++, r->failures += status == ANIM_ENOTFOUND ? 0 : 1;
}

static void test_asynchronous_forms(void **state) {
  async_results_t r;
  memset(&r, 0, sizeof r);
  anim_pose_source_t a = {10, 0, NULL, NULL, NULL, NULL}, b = {500, 0, NULL, NULL, NULL, NULL};
  anim_pose_options_t opts = {1, 0, 0};
  uint64_t id;
  assert_int_equal(anim_client_db_list_send(client, on_list, &r, &id), 0);
  assert_int_equal(anim_client_db_describe_send(client, "default", on_describe, &r, &id), 0);
  assert_int_equal(anim_client_db_describe_send(client, "nope", on_refused, &r, &id), 0);
  assert_int_equal(anim_client_pose_send(client, "default", 5, 3, &opts, on_pose, &r, &id), 0);
  assert_int_equal(anim_client_inertialize_transition_send(client, NULL, &src, &dst, NULL, on_inertialize, &r, &id), 0);
  assert_int_equal(anim_client_transition_cost_send(client, "default", &a, &b, 0.1f, NULL, 0, on_cost, &r, &id), 0);
  assert_int_equal(anim_client_spring_halflife_send(client, 0.1, 0.5, 1.0, 0.0, 1.0, on_spring, &r, &id), 0);
  async_results_t erp;
  memset(&erp, 0, sizeof erp);
  assert_int_equal(anim_client_spring_to_constraint_send(client, 500.0, 20.0, 1.0 / 60, on_spring, &erp, &id), 0);
  assert_int_equal(anim_client_spring_from_constraint_send(client, 0.2, 0.01, 1.0 / 60, on_spring, &erp, &id), 0);
  /* Refused before sending: no callback, an error at once. */
  assert_int_equal(anim_client_pose_send(client, "default", -1, 1, NULL, on_pose, &r, &id), ANIM_EINVAL);
  assert_int_equal(anim_client_pending(client), 9);
  while (r.done < 7 || erp.done < 2) assert_int_equal(anim_client_poll(client, TIMEOUT_MS), 0);
  assert_int_equal(erp.failures, 0);
  assert_int_equal(r.failures, 0);
  assert_true(r.list_count >= 1);
  assert_string_equal(r.described, "default");
  assert_int_equal(r.pose_frames, 3);
  assert_int_equal(r.inertialize_bones, NB);
  assert_true(r.cost > 0.0f);
  anim_spring_tuning_t t;
  assert_int_equal(anim_client_spring_halflife(client, 0.1, 0.5, 1.0, 0.0, 1.0, &t, TIMEOUT_MS), 0);
  assert_true(r.halflife == (float)t.halflife);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bad_inertialization_requests),
      cmocka_unit_test(test_transition_and_evaluate_match_the_core),
      cmocka_unit_test(test_transition_cost_matches_the_core),
      cmocka_unit_test(test_spring_tuning),
      cmocka_unit_test(test_asynchronous_forms),
  };
  return cmocka_run_group_tests_name("inertialize_service", tests, setup, teardown);
}
