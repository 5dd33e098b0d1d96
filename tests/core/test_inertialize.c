/* test_inertialize.c: per-bone and whole-pose inertialization: continuity at
 * transitions (also repeated ones and the root), exact decay against
 * numerical integration, decay to the destination, quaternion double cover. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <string.h>
#include <cmocka.h>
#include "anim_error.h"
#include "motion/inertialize.h"

#define NB 4

static void assert_vec3_near(vec3 a, vec3 b, float tol) {
  if (!(vec3_length(vec3_sub(a, b)) <= tol))
    fail_msg("(%g %g %g) != (%g %g %g) within %g", a.x, a.y, a.z, b.x, b.y, b.z, tol);
}
static void assert_quat_near(quat a, quat b, float tol) {
  /* the same rotation: q or -q */
  if (!(1.0f - fabsf(quat_dot(a, b)) <= tol))
    fail_msg("(%g %g %g %g) !~ (%g %g %g %g)", a.w, a.x, a.y, a.z, b.w, b.x, b.y, b.z);
}

/* ---- a synthetic clip: analytic pose, velocities and angular velocities ---------- */

typedef struct {
  vec3 root_origin, root_velocity; /* anim-space root moves linearly */
  float root_yaw0, root_yaw_rate;  /* and turns about Y */
  float phase, amp;                /* bones swing about their own axes */
} clip_t;

typedef struct {
  vec3 x[NB], v[NB], w[NB];
  quat q[NB];
} pose_t;

static vec3 bone_axis(int i) { return vec3_normalize(vec3_make(0.3f * i, 1.0f, -0.5f * i + 0.2f)); }

static void clip_sample(pose_t *p, const clip_t *c, float t) {
  vec3 up = vec3_make(0, 1, 0);
  p->x[0] = vec3_add(c->root_origin, vec3_scale(c->root_velocity, t));
  p->v[0] = c->root_velocity;
  p->q[0] = quat_from_angle_axis(c->root_yaw0 + c->root_yaw_rate * t, up);
  p->w[0] = vec3_scale(up, c->root_yaw_rate);
  for (int i = 1; i < NB; i++) {
    float s = c->phase + 2.0f * t + i;
    p->x[i] = vec3_make(0.1f * i + c->amp * sinf(s), 0.2f * cosf(s), c->amp * i);
    p->v[i] = vec3_make(2.0f * c->amp * cosf(s), -0.4f * sinf(s), 0.0f);
    float theta = c->amp * 3.0f * sinf(s), dtheta = c->amp * 6.0f * cosf(s);
    p->q[i] = quat_from_angle_axis(theta, bone_axis(i));
    p->w[i] = vec3_scale(bone_axis(i), dtheta);
  }
}

static anim_pose_view_t view_of(const pose_t *p) {
  anim_pose_view_t v = {NB, p->x, p->v, p->q, p->w};
  return v;
}
static anim_pose_buffer_t buffer_of(pose_t *p) {
  anim_pose_buffer_t b = {NB, p->x, p->v, p->q, p->w};
  return b;
}

typedef struct {
  vec3 x[NB], v[NB], w[NB];
  quat q[NB];
  anim_inertializer_t s;
} inert_t;

static void inert_init(inert_t *in) {
  assert_int_equal(anim_inertializer_init(&in->s, NB, in->x, in->v, in->q, in->w), 0);
}

static void assert_pose_near(const pose_t *a, const pose_t *b, float tol) {
  for (int i = 0; i < NB; i++) {
    assert_vec3_near(a->x[i], b->x[i], tol);
    assert_vec3_near(a->v[i], b->v[i], tol * 10.0f);
    assert_quat_near(a->q[i], b->q[i], tol);
    assert_vec3_near(a->w[i], b->w[i], tol * 10.0f);
  }
}

/* ---- invalid inputs --------------------------------------------------------------- */

static void test_rejects_invalid(void **state) {
  inert_t in;
  vec3 a[NB];
  quat q[NB];
  assert_int_equal(anim_inertializer_init(NULL, NB, a, a, q, a), ANIM_EINVAL);
  assert_int_equal(anim_inertializer_init(&in.s, 0, a, a, q, a), ANIM_EINVAL);
  assert_int_equal(anim_inertializer_init(&in.s, NB, a, NULL, q, a), ANIM_EINVAL);
  inert_init(&in);
  assert_int_equal(anim_inertializer_validate(&in.s), 0);

  clip_t c = {{0}, {1, 0, 0}, 0, 0, 0, 0.1f};
  pose_t p, o;
  clip_sample(&p, &c, 0.0f);
  anim_pose_view_t v = view_of(&p), short_view = v;
  anim_pose_buffer_t b = buffer_of(&o);
  short_view.count = NB - 1;
  assert_int_equal(anim_inertializer_transition(&in.s, &short_view, &v), ANIM_EINVAL);
  assert_int_equal(anim_inertializer_transition(&in.s, &v, NULL), ANIM_EINVAL);
  assert_int_equal(anim_inertializer_update(&in.s, &b, &v, 0.0f, 0.016f), ANIM_EINVAL);
  assert_int_equal(anim_inertializer_update(&in.s, &b, &v, 0.1f, -0.016f), ANIM_EINVAL);
  assert_int_equal(anim_inertializer_update(&in.s, &b, &v, 0.1f, NAN), ANIM_EINVAL);
  assert_int_equal(anim_inertializer_evaluate(&in.s, &b, &short_view, 0.1f, 0.0f), ANIM_EINVAL);
  assert_int_equal(anim_inertializer_place(&in.s, vec3_zero(), quat_make(2, 0, 0, 0), vec3_zero(), quat_identity()),
                   ANIM_EINVAL);
  assert_int_equal(anim_inertializer_place(&in.s, vec3_make(NAN, 0, 0), quat_identity(), vec3_zero(), quat_identity()),
                   ANIM_ENONFINITE);

  /* a non-finite destination is refused and leaves the state untouched */
  pose_t bad = p;
  bad.v[2].y = INFINITY;
  anim_pose_view_t bv = view_of(&bad);
  inert_t before = in;
  assert_int_equal(anim_inertializer_transition(&in.s, &v, &bv), ANIM_ENONFINITE);
  assert_true(memcmp(in.x, before.x, sizeof in.x) == 0 && memcmp(in.q, before.q, sizeof in.q) == 0);
  assert_true(memcmp(&in.s.anchor_world_position, &before.s.anchor_world_position, sizeof(vec3)) == 0);
  in.s.anchor_anim_rotation = quat_make(0, 0, 0, 0);
  assert_int_equal(anim_inertializer_validate(&in.s), ANIM_EINVAL);
}

/* ---- one bone ------------------------------------------------------------------- */

static void test_bone_transition_is_continuous(void **state) {
  vec3 off_x = vec3_make(0.3f, -0.1f, 0.2f), off_v = vec3_make(1.0f, 0.0f, -2.0f);
  quat off_q = quat_from_angle_axis(0.7f, vec3_normalize(vec3_make(1, 1, 0)));
  vec3 off_w = vec3_make(0.0f, 3.0f, 1.0f);
  vec3 src_x = vec3_make(1, 2, 3), src_v = vec3_make(0.5f, 0, 0), dst_x = vec3_make(-1, 0, 4),
       dst_v = vec3_make(0, 0, 9);
  quat src_q = quat_from_angle_axis(1.0f, vec3_make(0, 0, 1)), dst_q = quat_from_angle_axis(-2.0f, vec3_make(0, 1, 0));
  vec3 src_w = vec3_make(1, 2, 0), dst_w = vec3_make(-4, 0, 1);

  vec3 bx, bv, ax, av, bw, aw;
  quat bq, aq;
  anim_inertialize_evaluate_vec3(&bx, &bv, off_x, off_v, src_x, src_v, 0.2f, 0.0f);
  anim_inertialize_evaluate_quat(&bq, &bw, off_q, off_w, src_q, src_w, 0.2f, 0.0f);
  anim_inertialize_transition_vec3(&off_x, &off_v, src_x, src_v, dst_x, dst_v);
  anim_inertialize_transition_quat(&off_q, &off_w, src_q, src_w, dst_q, dst_w);
  anim_inertialize_evaluate_vec3(&ax, &av, off_x, off_v, dst_x, dst_v, 0.2f, 0.0f);
  anim_inertialize_evaluate_quat(&aq, &aw, off_q, off_w, dst_q, dst_w, 0.2f, 0.0f);
  assert_vec3_near(ax, bx, 1e-6f);
  assert_vec3_near(av, bv, 1e-5f);
  assert_quat_near(aq, bq, 1e-6f);
  assert_vec3_near(aw, bw, 1e-5f); /* the seed's off_w + src_w - dst_w would miss this */
  assert_true(off_q.w >= 0.0f);

  /* large t: the destination alone */
  anim_inertialize_evaluate_vec3(&ax, &av, off_x, off_v, dst_x, dst_v, 0.2f, 30.0f);
  anim_inertialize_evaluate_quat(&aq, &aw, off_q, off_w, dst_q, dst_w, 0.2f, 30.0f);
  assert_vec3_near(ax, dst_x, 1e-6f);
  assert_vec3_near(av, dst_v, 1e-6f);
  assert_quat_near(aq, dst_q, 1e-6f);
  assert_vec3_near(aw, dst_w, 1e-6f);
}

static void test_output_velocity_is_derivative_of_output(void **state) {
  /* destination moving linearly; d/dt of output position = output velocity */
  vec3 off_x = vec3_make(0.5f, -0.2f, 0.1f), off_v = vec3_make(-3.0f, 1.0f, 0.0f);
  vec3 x0 = vec3_make(1, 0, 0), v = vec3_make(0.3f, 0.1f, -0.2f);
  const float h = 1e-3f;
  for (int k = 0; k < 20; k++) {
    float t = 0.02f * k + 0.002f;
    vec3 xm, mv, xb, xa, tmp;
    anim_inertialize_evaluate_vec3(&xm, &mv, off_x, off_v, vec3_add(x0, vec3_scale(v, t)), v, 0.15f, t);
    anim_inertialize_evaluate_vec3(&xb, &tmp, off_x, off_v, vec3_add(x0, vec3_scale(v, t + h)), v, 0.15f, t + h);
    anim_inertialize_evaluate_vec3(&xa, &tmp, off_x, off_v, vec3_add(x0, vec3_scale(v, t - h)), v, 0.15f, t - h);
    assert_vec3_near(vec3_scale(vec3_sub(xb, xa), 0.5f / h), mv, 5e-3f);
  }
}

/* RK4 of the critically damped ODE x'' = -2y x' - y^2 x, n steps over t. */
static void rk4_offset(double *x, double *v, double y, double t, int n) {
  double h = t / n;
  for (int i = 0; i < n; i++) {
#define ACC(X, V) (-2.0 * y * (V) - y * y * (X))
    double k1x = *v, k1v = ACC(*x, *v);
    double k2x = *v + 0.5 * h * k1v, k2v = ACC(*x + 0.5 * h * k1x, k2x);
    double k3x = *v + 0.5 * h * k2v, k3v = ACC(*x + 0.5 * h * k2x, k3x);
    double k4x = *v + h * k3v, k4v = ACC(*x + h * k3x, k4x);
#undef ACC
    *x += h / 6.0 * (k1x + 2 * k2x + 2 * k3x + k4x);
    *v += h / 6.0 * (k1v + 2 * k2v + 2 * k3v + k4v);
  }
}

static void test_decay_matches_ode_at_many_t_and_dt(void **state) {
  const float dts[] = {1.0f / 120, 1.0f / 60, 1.0f / 30, 0.1f, 0.5f};
  const float hs[] = {0.05f, 0.15f, 0.5f};
  double worst = 0.0;
  for (int d = 0; d < 5; d++)
    for (int h = 0; h < 3; h++) {
      vec3 off_x = vec3_make(0.4f, -1.0f, 0.0f), off_v = vec3_make(-2.0f, 0.5f, 3.0f), out_x, out_v;
      double rx[3] = {0.4, -1.0, 0.0}, rv[3] = {-2.0, 0.5, 3.0};
      double y = halflife_to_damping(hs[h]) / 2.0;
      for (int step = 1; step <= 40; step++) {
        anim_inertialize_update_vec3(&out_x, &out_v, &off_x, &off_v, vec3_zero(), vec3_zero(), hs[h], dts[d]);
        for (int k = 0; k < 3; k++) rk4_offset(&rx[k], &rv[k], y, dts[d], 400);
        float got[3] = {out_x.x, out_x.y, out_x.z}, gotv[3] = {out_v.x, out_v.y, out_v.z};
        for (int k = 0; k < 3; k++) {
          double e = fmax(fabs(got[k] - rx[k]), fabs(gotv[k] - rv[k]) * hs[h]);
          if (e > worst) worst = e;
        }
      }
    }
  print_message("update vs RK4 over 40 steps: worst error %.3g\n", worst);
  assert_true(worst < 2e-5);
}

static void test_quat_double_cover(void **state) {
  quat src = quat_from_angle_axis(2.9f, vec3_make(0, 1, 0)), dst = quat_from_angle_axis(-2.9f, vec3_make(0, 1, 0));
  /* src and dst are 0.48 rad apart through the +-pi seam */
  vec3 w = vec3_zero();
  for (int sign = 0; sign < 4; sign++) {
    quat s = sign & 1 ? quat_neg(src) : src, d = sign & 2 ? quat_neg(dst) : dst;
    quat off_q = quat_identity();
    vec3 off_w = vec3_zero(), ow;
    quat out;
    anim_inertialize_transition_quat(&off_q, &off_w, s, w, d, w);
    float angle = vec3_length(quat_to_scaled_angle_axis(off_q));
    assert_float_equal(angle, 2.0f * ANIM_PI - 5.8f, 1e-4f); /* the short way */
    anim_inertialize_evaluate_quat(&out, &ow, off_q, off_w, d, w, 0.2f, 0.05f);
    /* halfway-ish between src and dst, never the long way round */
    float yaw = 2.0f * atan2f(out.y, out.w);
    yaw = remainderf(yaw, 2.0f * ANIM_PI);
    assert_true(fabsf(yaw) > 2.9f - 1e-3f);
  }
}

/* ---- whole pose ----------------------------------------------------------------- */

/* Plays clip a from time ta, transitions to clip b at time tb, checks the
 * displayed pose is continuous; returns the pose after. */
static void transition_and_check(inert_t *in, const clip_t *a, float ta, const clip_t *b, float tb) {
  pose_t src, dst, before, after;
  clip_sample(&src, a, ta);
  clip_sample(&dst, b, tb);
  anim_pose_view_t sv = view_of(&src), dv = view_of(&dst);
  anim_pose_buffer_t bb = buffer_of(&before), ab = buffer_of(&after);
  assert_int_equal(anim_inertializer_evaluate(&in->s, &bb, &sv, 0.2f, 0.0f), 0);
  assert_int_equal(anim_inertializer_transition(&in->s, &sv, &dv), 0);
  assert_int_equal(anim_inertializer_evaluate(&in->s, &ab, &dv, 0.2f, 0.0f), 0);
  assert_pose_near(&after, &before, 2e-5f);
}

static void test_pose_repeated_transitions_stay_continuous(void **state) {
  inert_t in;
  inert_init(&in);
  clip_t clips[3] = {
      {{0, 0, 0}, {0, 0, 1.5f}, 0.0f, 0.3f, 0.0f, 0.2f},
      {{10, 0, -4}, {1.0f, 0, 0}, 2.0f, -1.0f, 1.0f, 0.4f},
      {{-3, 0, 7}, {-0.5f, 0, 2.0f}, -2.5f, 2.0f, 2.0f, 0.1f},
  };
  const float dt = 1.0f / 60.0f;
  int cur = 0;
  float t = 0.0f;
  pose_t in_pose, out, prev = {0};
  anim_pose_buffer_t ob = buffer_of(&out);
  assert_int_equal(anim_inertializer_place(&in.s, clips[0].root_origin, quat_from_angle_axis(0.0f, vec3_make(0, 1, 0)),
                                           vec3_make(100, 0, 0), quat_identity()),
                   0);
  float worst_jump = 0.0f;
  for (int frame = 0; frame < 600; frame++) {
    /* transition every 7 frames: offsets never finish decaying */
    if (frame > 0 && frame % 7 == 0) {
      int next = (cur + 1) % 3;
      float tn = 0.37f * frame;
      transition_and_check(&in, &clips[cur], t, &clips[next], tn);
      cur = next, t = tn;
    }
    t += dt;
    clip_sample(&in_pose, &clips[cur], t);
    anim_pose_view_t iv = view_of(&in_pose);
    assert_int_equal(anim_inertializer_update(&in.s, &ob, &iv, 0.2f, dt), 0);
    if (frame > 0) {
      /* frame-to-frame root motion is bounded by what the velocities allow */
      float jump = vec3_length(vec3_sub(out.x[0], prev.x[0]));
      if (jump > worst_jump) worst_jump = jump;
    }
    prev = out;
  }
  print_message("largest root step per frame over 85 transitions: %.4f m\n", worst_jump);
  assert_true(worst_jump < 0.15f); /* clip speeds <= 2.1 m/s plus decaying offsets */
}

/* Parts at their own speeds (update_parts): each part's offsets decay as a
 * whole-pose update with that part's half-life would decay them. Three
 * inertializers from the same transition: one updated by parts (root 0.05 s,
 * fast bones 1 and 3 at 0.1 s, the rest 0.4 s), two whole at 0.1 and 0.4 s. */
static void test_update_by_parts(void **state) {
  clip_t a = {{0, 0, 0}, {0, 0, 1.5f}, 0.0f, 0.3f, 0.0f, 0.2f},
         b = {{10, 0, -4}, {1.0f, 0, 0}, 2.0f, -1.0f, 1.0f, 0.4f};
  pose_t src, dst, out_parts, out_fast, out_slow;
  clip_sample(&src, &a, 0.5f);
  clip_sample(&dst, &b, 1.0f);
  anim_pose_view_t sv = view_of(&src), dv = view_of(&dst);
  inert_t parts, fast, slow, root;
  inert_t *all[4] = {&parts, &fast, &slow, &root};
  for (int i = 0; i < 4; i++)
    inert_init(all[i]), assert_int_equal(anim_inertializer_transition(&all[i]->s, &sv, &dv), 0);
  uint8_t flags[NB] = {0};
  flags[1] = flags[3] = 1;
  anim_inertialize_speeds_t speeds = {0.4f, 0.05f, 0.1f, flags, 0};
  anim_pose_buffer_t bp = buffer_of(&out_parts), bf = buffer_of(&out_fast), bs = buffer_of(&out_slow);
  pose_t out_root;
  anim_pose_buffer_t br = buffer_of(&out_root);
  /* invalid speeds first */
  anim_inertialize_speeds_t bad = speeds;
  assert_int_equal(anim_inertializer_update_parts(&parts.s, &bp, &dv, NULL, 0.016f), ANIM_EINVAL);
  bad.root_halflife = 0.0f;
  assert_int_equal(anim_inertializer_update_parts(&parts.s, &bp, &dv, &bad, 0.016f), ANIM_EINVAL);
  bad = speeds, bad.fast_halflife = NAN;
  assert_int_equal(anim_inertializer_update_parts(&parts.s, &bp, &dv, &bad, 0.016f), ANIM_EINVAL);
  for (int t = 0; t < 20; t++) {
    assert_int_equal(anim_inertializer_update_parts(&parts.s, &bp, &dv, &speeds, 0.016f), 0);
    assert_int_equal(anim_inertializer_update(&fast.s, &bf, &dv, 0.1f, 0.016f), 0);
    assert_int_equal(anim_inertializer_update(&slow.s, &bs, &dv, 0.4f, 0.016f), 0);
    assert_int_equal(anim_inertializer_update(&root.s, &br, &dv, 0.05f, 0.016f), 0);
  }
  assert_vec3_near(out_parts.x[0], out_root.x[0], 1e-5f);
  for (int i = 0; i < NB; i++) {
    const pose_t *want = flags[i] ? &out_fast : &out_slow;
    assert_quat_near(out_parts.q[i], want->q[i], 1e-5f);
    if (i > 0) assert_vec3_near(out_parts.x[i], out_slow.x[i], 1e-5f);
  }
  /* and the parts differ from one another: the flags took effect */
  assert_true(1.0f - fabsf(quat_dot(out_fast.q[1], out_slow.q[1])) > 1e-6f);
}

/* root_rates_only: the same positions and rotations, the root's rates, and
 * the offsets decayed the same (the next ticks agree too), while the other
 * bones' rates in the output are not written. */
static void test_update_with_root_rates_only(void **state) {
  (void)state;
  clip_t a = {{0, 0, 0}, {0, 0, 1.5f}, 0.0f, 0.3f, 0.0f, 0.2f},
         b = {{10, 0, -4}, {1.0f, 0, 0}, 2.0f, -1.0f, 1.0f, 0.4f};
  pose_t src, dst, all_rates, root_rates;
  clip_sample(&src, &a, 0.5f);
  clip_sample(&dst, &b, 1.0f);
  anim_pose_view_t sv = view_of(&src), dv = view_of(&dst);
  inert_t full, lean;
  inert_init(&full), inert_init(&lean);
  assert_int_equal(anim_inertializer_transition(&full.s, &sv, &dv), 0);
  assert_int_equal(anim_inertializer_transition(&lean.s, &sv, &dv), 0);
  uint8_t flags[NB] = {0};
  flags[2] = 1;
  anim_inertialize_speeds_t speeds = {0.4f, 0.05f, 0.1f, flags, 0}, root_only = speeds;
  root_only.root_rates_only = 1;
  anim_pose_buffer_t bf = buffer_of(&all_rates), bl = buffer_of(&root_rates);
  for (int i = 0; i < NB; i++) root_rates.v[i] = root_rates.w[i] = vec3_make(NAN, NAN, NAN);
  for (int t = 0; t < 10; t++) {
    assert_int_equal(anim_inertializer_update_parts(&full.s, &bf, &dv, &speeds, 0.016f), 0);
    assert_int_equal(anim_inertializer_update_parts(&lean.s, &bl, &dv, &root_only, 0.016f), 0);
    for (int i = 0; i < NB; i++) {
      assert_memory_equal(&all_rates.x[i], &root_rates.x[i], sizeof(vec3));
      assert_memory_equal(&all_rates.q[i], &root_rates.q[i], sizeof(quat));
      if (i == 0) {
        assert_memory_equal(&all_rates.v[0], &root_rates.v[0], sizeof(vec3));
        assert_memory_equal(&all_rates.w[0], &root_rates.w[0], sizeof(vec3));
      } else {
        assert_true(isnan(root_rates.v[i].x) && isnan(root_rates.w[i].z)); /* not written */
      }
    }
  }
}

static void test_pose_root_follows_destination_in_world(void **state) {
  inert_t in;
  inert_init(&in);
  clip_t a = {{0, 0, 0}, {0, 0, 1.0f}, 0.0f, 0.0f, 0.0f, 0.2f};
  clip_t b = {{50, 0, 50}, {2.0f, 0, 0}, ANIM_PI / 2, 0.0f, 0.5f, 0.3f};
  pose_t p, out;
  anim_pose_buffer_t ob = buffer_of(&out);
  clip_sample(&p, &a, 1.0f);
  anim_pose_view_t pv = view_of(&p);
  assert_int_equal(anim_inertializer_update(&in.s, &ob, &pv, 0.1f, 0.0f), 0);
  vec3 root_at_transition = out.x[0];
  quat rot_at_transition = out.q[0];
  transition_and_check(&in, &a, 1.0f, &b, 0.0f);
  /* the root offsets in position and rotation are zero: only velocities decay */
  assert_vec3_near(in.x[0], vec3_zero(), 1e-5f);
  assert_quat_near(in.q[0], quat_identity(), 1e-6f);
  /* long after: b's root motion re-expressed in the world. b faces +X
   * (yaw pi/2) and moves along +X, i.e. forwards; in the world the character
   * faced +Z, so it keeps walking forwards along +Z at 2 m/s. */
  clip_sample(&p, &b, 10.0f);
  assert_int_equal(anim_inertializer_evaluate(&in.s, &ob, &pv, 0.1f, 10.0f), 0);
  assert_vec3_near(out.v[0], vec3_make(0, 0, 2.0f), 1e-4f);
  assert_quat_near(out.q[0], rot_at_transition, 1e-6f);
  /* the offset returns to zero, so the root is where b's motion took it */
  assert_vec3_near(out.x[0], vec3_add(root_at_transition, vec3_make(0, 0, 20.0f)), 1e-4f);
  /* non-root bones are local: they become b's exactly */
  for (int i = 1; i < NB; i++) {
    assert_vec3_near(out.x[i], p.x[i], 1e-5f);
    assert_quat_near(out.q[i], p.q[i], 1e-6f);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rejects_invalid),
      cmocka_unit_test(test_bone_transition_is_continuous),
      cmocka_unit_test(test_output_velocity_is_derivative_of_output),
      cmocka_unit_test(test_decay_matches_ode_at_many_t_and_dt),
      cmocka_unit_test(test_quat_double_cover),
      cmocka_unit_test(test_pose_repeated_transitions_stay_continuous),
      cmocka_unit_test(test_update_by_parts),
      cmocka_unit_test(test_update_with_root_rates_only),
      cmocka_unit_test(test_pose_root_follows_destination_in_world),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
