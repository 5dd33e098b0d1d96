/*
 * inertialize.c: offset-based transitions, per bone and for a whole pose.
 *
 * Two departures from the seed's (Learned Motion Matching) code, both for
 * exact continuity:
 *  - the seed re-bases the angular-velocity offset as off_w + src_w - dst_w,
 *    but the displayed angular velocity is off_w + off_q (in_w), so with a
 *    rotation offset active that jumps; here the new offset is the displayed
 *    angular velocity minus off_q_new (dst_w);
 *  - for the root the seed passes the already-offset displayed root as the
 *    "source" and still adds the old offset to it, so the old root offset is
 *    counted twice (the root jumps by it on every transition after the
 *    first); here the source root is the raw input mapped through the old
 *    anchor, which with the offset gives the displayed root exactly.
 */
#include <math.h>

#include "anim_error.h"
#include "motion/inertialize.h"
#include "motion/spring.h"

/* ---- one bone ------------------------------------------------------------------ */

void anim_inertialize_transition_vec3(vec3 *io_off_x, vec3 *io_off_v, vec3 src_x, vec3 src_v, vec3 dst_x,
                                      vec3 dst_v) {
  *io_off_x = vec3_sub(vec3_add(src_x, *io_off_x), dst_x);
  *io_off_v = vec3_sub(vec3_add(src_v, *io_off_v), dst_v);
}

void anim_inertialize_transition_quat(quat *io_off_q, vec3 *io_off_w, quat src_q, vec3 src_w, quat dst_q,
                                      vec3 dst_w) {
  /* What is displayed now ... */
  quat shown_q = quat_mul(*io_off_q, src_q);
  vec3 shown_w = vec3_add(*io_off_w, quat_mul_vec3(*io_off_q, src_w));
  /* ... minus the destination, the short way round. */
  *io_off_q = quat_abs(quat_normalize(quat_mul_inv(shown_q, dst_q)));
  *io_off_w = vec3_sub(shown_w, quat_mul_vec3(*io_off_q, dst_w));
}

static void apply_vec3(vec3 *out_x, vec3 *out_v, vec3 off_x, vec3 off_v, vec3 in_x, vec3 in_v) {
  *out_x = vec3_add(in_x, off_x);
  *out_v = vec3_add(in_v, off_v);
}

static quat apply_rotation(quat off_q, quat in_q) { return quat_normalize(quat_mul(off_q, in_q)); }

static void apply_quat(quat *out_q, vec3 *out_w, quat off_q, vec3 off_w, quat in_q, vec3 in_w) {
  *out_q = apply_rotation(off_q, in_q);
  *out_w = vec3_add(off_w, quat_mul_vec3(off_q, in_w));
}

void anim_inertialize_update_vec3(vec3 *out_x, vec3 *out_v, vec3 *io_off_x, vec3 *io_off_v, vec3 in_x, vec3 in_v,
                                  float halflife, float dt) {
  anim_spring_decay_vec3(io_off_x, io_off_v, halflife, dt);
  apply_vec3(out_x, out_v, *io_off_x, *io_off_v, in_x, in_v);
}

void anim_inertialize_update_quat(quat *out_q, vec3 *out_w, quat *io_off_q, vec3 *io_off_w, quat in_q, vec3 in_w,
                                  float halflife, float dt) {
  anim_spring_decay_quat(io_off_q, io_off_w, halflife, dt);
  apply_quat(out_q, out_w, *io_off_q, *io_off_w, in_q, in_w);
}

void anim_inertialize_evaluate_vec3(vec3 *out_x, vec3 *out_v, vec3 off_x, vec3 off_v, vec3 in_x, vec3 in_v,
                                    float halflife, float t) {
  anim_inertialize_update_vec3(out_x, out_v, &off_x, &off_v, in_x, in_v, halflife, t);
}

void anim_inertialize_evaluate_quat(quat *out_q, vec3 *out_w, quat off_q, vec3 off_w, quat in_q, vec3 in_w,
                                    float halflife, float t) {
  anim_inertialize_update_quat(out_q, out_w, &off_q, &off_w, in_q, in_w, halflife, t);
}

/* ---- whole pose ----------------------------------------------------------------- */

static int is_unit(quat q) { return isfinite(q.w) && fabsf(quat_dot(q, q) - 1.0f) < 1e-3f; }
static int quat_finite(quat q) { return isfinite(q.w) && isfinite(q.x) && isfinite(q.y) && isfinite(q.z); }

int anim_inertializer_init(anim_inertializer_t *out, size_t count, vec3 *offset_positions,
                           vec3 *offset_velocities, quat *offset_rotations, vec3 *offset_angular_velocities) {
  if (!out || count < 1 || !offset_positions || !offset_velocities || !offset_rotations ||
      !offset_angular_velocities)
    return ANIM_EINVAL;
  out->count = count;
  out->offset_positions = offset_positions;
  out->offset_velocities = offset_velocities;
  out->offset_rotations = offset_rotations;
  out->offset_angular_velocities = offset_angular_velocities;
  for (size_t i = 0; i < count; i++) {
    offset_positions[i] = offset_velocities[i] = offset_angular_velocities[i] = vec3_zero();
    offset_rotations[i] = quat_identity();
  }
  out->anchor_anim_position = out->anchor_world_position = vec3_zero();
  out->anchor_anim_rotation = out->anchor_world_rotation = quat_identity();
  return 0;
}

int anim_inertializer_validate(const anim_inertializer_t *s) {
  if (!s || s->count < 1 || !s->offset_positions || !s->offset_velocities || !s->offset_rotations ||
      !s->offset_angular_velocities)
    return ANIM_EINVAL;
  if (!is_unit(s->anchor_anim_rotation) || !is_unit(s->anchor_world_rotation)) return ANIM_EINVAL;
  if (!vec3_finite(s->anchor_anim_position) || !vec3_finite(s->anchor_world_position)) return ANIM_EINVAL;
  return 0;
}

static int view_ok(const anim_pose_view_t *p, size_t count) {
  return p && p->count == count && p->positions && p->velocities && p->rotations && p->angular_velocities;
}

static int buffer_ok(const anim_pose_buffer_t *p, size_t count) {
  return p && p->count == count && p->positions && p->velocities && p->rotations && p->angular_velocities;
}

static int view_finite(const anim_pose_view_t *p) {
  for (size_t i = 0; i < p->count; i++)
    if (!vec3_finite(p->positions[i]) || !vec3_finite(p->velocities[i]) || !quat_finite(p->rotations[i]) ||
        !vec3_finite(p->angular_velocities[i]))
      return 0;
  return 1;
}

/* The anchor's rotation R = world_rotation * anim_rotation^-1. */
static quat anchor_rotation(const anim_inertializer_t *s) {
  return quat_normalize(quat_mul_inv(s->anchor_world_rotation, s->anchor_anim_rotation));
}

/* A root pose (animation space) mapped into the world through the anchor. */
typedef struct {
  vec3 x, v, w;
  quat q;
} root_state_t;

static root_state_t root_to_world(const anim_inertializer_t *s, const anim_pose_view_t *p) {
  quat r = anchor_rotation(s);
  root_state_t out;
  out.x = vec3_add(s->anchor_world_position, quat_mul_vec3(r, vec3_sub(p->positions[0], s->anchor_anim_position)));
  out.v = quat_mul_vec3(r, p->velocities[0]);
  out.q = quat_normalize(quat_mul(r, p->rotations[0]));
  out.w = quat_mul_vec3(r, p->angular_velocities[0]);
  return out;
}

int anim_inertializer_place(anim_inertializer_t *s, vec3 anim_root_position, quat anim_root_rotation,
                            vec3 world_root_position, quat world_root_rotation) {
  if (anim_inertializer_validate(s) < 0) return ANIM_EINVAL;
  if (!vec3_finite(anim_root_position) || !vec3_finite(world_root_position) || !quat_finite(anim_root_rotation) ||
      !quat_finite(world_root_rotation))
    return ANIM_ENONFINITE;
  if (!is_unit(anim_root_rotation) || !is_unit(world_root_rotation)) return ANIM_EINVAL;
  s->anchor_anim_position = anim_root_position;
  s->anchor_anim_rotation = anim_root_rotation;
  s->anchor_world_position = world_root_position;
  s->anchor_world_rotation = world_root_rotation;
  return 0;
}

int anim_inertializer_transition(anim_inertializer_t *s, const anim_pose_view_t *src, const anim_pose_view_t *dst) {
  if (anim_inertializer_validate(s) < 0 || !view_ok(src, s->count) || !view_ok(dst, s->count)) return ANIM_EINVAL;
  if (!view_finite(src) || !view_finite(dst)) return ANIM_ENONFINITE;

  /* Root: the displayed root now is the source root through the old anchor
   * plus the root offset. */
  root_state_t from = root_to_world(s, src);
  vec3 shown_x = vec3_add(from.x, s->offset_positions[0]);
  quat shown_q = quat_normalize(quat_mul(s->offset_rotations[0], from.q));

  /* Re-anchor so the destination root lands on the displayed root; its
   * velocities are re-expressed in the world through the new anchor. */
  s->anchor_anim_position = dst->positions[0];
  s->anchor_anim_rotation = quat_normalize(dst->rotations[0]);
  s->anchor_world_position = shown_x;
  s->anchor_world_rotation = shown_q;
  root_state_t to = root_to_world(s, dst);

  /* Root offsets in world space: position and rotation come out (nearly)
   * zero by construction, velocities carry the difference. */
  anim_inertialize_transition_vec3(&s->offset_positions[0], &s->offset_velocities[0], from.x, from.v, to.x, to.v);
  anim_inertialize_transition_quat(&s->offset_rotations[0], &s->offset_angular_velocities[0], from.q, from.w, to.q,
                                   to.w);

  for (size_t i = 1; i < s->count; i++) {
    anim_inertialize_transition_vec3(&s->offset_positions[i], &s->offset_velocities[i], src->positions[i],
                                     src->velocities[i], dst->positions[i], dst->velocities[i]);
    anim_inertialize_transition_quat(&s->offset_rotations[i], &s->offset_angular_velocities[i], src->rotations[i],
                                     src->angular_velocities[i], dst->rotations[i], dst->angular_velocities[i]);
  }
  return 0;
}

/* Shared body of update (decay in place) and evaluate (decay copies). */
static void pose_apply(const anim_inertializer_t *s, vec3 *off_x, vec3 *off_v, quat *off_q, vec3 *off_w,
                       const anim_pose_buffer_t *out, const anim_pose_view_t *in, const anim_spring_decayer_t *decay,
                       size_t i) {
  vec3 in_x = in->positions[i], in_v = in->velocities[i], in_w = in->angular_velocities[i];
  quat in_q = in->rotations[i];
  if (i == 0) {
    root_state_t w = root_to_world(s, in);
    in_x = w.x, in_v = w.v, in_q = w.q, in_w = w.w;
  }
  /* One exp for the whole pose: every bone decays with the same half-life and dt. */
  anim_spring_decayer_vec3(decay, off_x, off_v);
  apply_vec3(&out->positions[i], &out->velocities[i], *off_x, *off_v, in_x, in_v);
  anim_spring_decayer_quat(decay, off_q, off_w);
  apply_quat(&out->rotations[i], &out->angular_velocities[i], *off_q, *off_w, in_q, in_w);
}

static int check_job(const anim_inertializer_t *s, const anim_pose_buffer_t *out, const anim_pose_view_t *in,
                     float halflife, float dt) {
  if (anim_inertializer_validate(s) < 0 || !buffer_ok(out, s->count) || !view_ok(in, s->count)) return ANIM_EINVAL;
  if (!(halflife > 0.0f) || !(dt >= 0.0f) || !isfinite(halflife) || !isfinite(dt)) return ANIM_EINVAL;
  return 0;
}

_Static_assert(sizeof(vec3) == 3 * sizeof(float), "vec3 arrays are read as flat floats");

static int speeds_ok(const anim_inertialize_speeds_t *p) {
  return p && p->root_halflife > 0.0f && isfinite(p->root_halflife) &&
         (!p->fast || (p->fast_halflife > 0.0f && isfinite(p->fast_halflife)));
}

/* out = a + b over n floats, vectorized: element i reads only element i of
 * each array, so the loop carries no dependency even when out is a or b
 * (an update in place), which the compiler cannot see in a pose's vec3
 * arrays and so added them a float at a time. */
static void add_floats(float *out, const float *a, const float *b, size_t n) {
#if defined(__clang__)
#pragma clang loop vectorize(assume_safety)
#else
#pragma GCC ivdep
#endif
  for (size_t i = 0; i < n; i++) out[i] = a[i] + b[i];
}

/* The tick's path, in passes over the whole pose rather than bone by bone:
 * the position offsets as 3 n flat floats (vectorizable), the rotation
 * offsets (spring.c's series, ANIM_LANES at a time, each with its part's decayer),
 * then the outputs; the root maps through the anchor. The same values as
 * pose_apply bone by bone. */
int anim_inertializer_update_parts(anim_inertializer_t *s, const anim_pose_buffer_t *out, const anim_pose_view_t *in,
                                   const anim_inertialize_speeds_t *speeds, float dt) {
  int rc = speeds_ok(speeds) ? check_job(s, out, in, speeds->halflife, dt) : ANIM_EINVAL;
  if (rc < 0) return rc;
  anim_spring_decayer_t decay[2], root;
  anim_spring_decayer_make(&decay[0], speeds->halflife, dt);
  if (speeds->fast) anim_spring_decayer_make(&decay[1], speeds->fast_halflife, dt);
  if (speeds->root_halflife == speeds->halflife) root = decay[0];
  else anim_spring_decayer_make(&root, speeds->root_halflife, dt);
  size_t n = s->count;
  anim_spring_decayer_vec3(&root, &s->offset_positions[0], &s->offset_velocities[0]);
  anim_spring_decayer_floats(&decay[0], &s->offset_positions[1].x, &s->offset_velocities[1].x, 3 * (n - 1));
  quat *rotations = s->offset_rotations;
  vec3 *turns = s->offset_angular_velocities;
  if (speeds->fast) anim_spring_decayers_quats(decay, speeds->fast, rotations, turns, n);
  else anim_spring_decayer_quats(&decay[0], rotations, turns, n);
  root_state_t w = root_to_world(s, in);
  apply_vec3(&out->positions[0], &out->velocities[0], s->offset_positions[0], s->offset_velocities[0], w.x, w.v);
  apply_quat(&out->rotations[0], &out->angular_velocities[0], s->offset_rotations[0], s->offset_angular_velocities[0],
             w.q, w.w);
  add_floats(&out->positions[1].x, &in->positions[1].x, &s->offset_positions[1].x, 3 * (n - 1));
  if (speeds->root_rates_only) {
    for (size_t i = 1; i < n; i++) out->rotations[i] = apply_rotation(s->offset_rotations[i], in->rotations[i]);
    return 0;
  }
  add_floats(&out->velocities[1].x, &in->velocities[1].x, &s->offset_velocities[1].x, 3 * (n - 1));
  for (size_t i = 1; i < n; i++)
    apply_quat(&out->rotations[i], &out->angular_velocities[i], s->offset_rotations[i], s->offset_angular_velocities[i],
               in->rotations[i], in->angular_velocities[i]);
  return 0;
}

int anim_inertializer_update(anim_inertializer_t *s, const anim_pose_buffer_t *out, const anim_pose_view_t *in,
                             float halflife, float dt) {
  anim_inertialize_speeds_t speeds = {halflife, halflife, halflife, NULL, 0};
  return anim_inertializer_update_parts(s, out, in, &speeds, dt);
}

int anim_inertializer_evaluate(const anim_inertializer_t *s, const anim_pose_buffer_t *out,
                               const anim_pose_view_t *in, float halflife, float t) {
  int rc = check_job(s, out, in, halflife, t);
  if (rc < 0) return rc;
  anim_spring_decayer_t decay;
  anim_spring_decayer_make(&decay, halflife, t);
  for (size_t i = 0; i < s->count; i++) {
    vec3 x = s->offset_positions[i], v = s->offset_velocities[i], w = s->offset_angular_velocities[i];
    quat q = s->offset_rotations[i];
    pose_apply(s, &x, &v, &q, &w, out, in, &decay, i);
  }
  return 0;
}
