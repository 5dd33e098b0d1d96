/*
 * service_inertialize.c: inertialization state over the wire: transitions,
 * evaluation at any time, transition costs and spring tuning.
 *
 * The maths is core's (inertialize.h, transition_cost.h, spring.h); this file
 * turns requests into pose views (database frames point straight into the
 * database, explicit poses are checked by the codec and normalized here) and
 * fills responses whose arrays the response owns.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "motion/inertialize.h"
#include "registry.h"
#include "service.h"
#include "motion/spring.h"
#include "motion/transition_cost.h"

/* The quaternion at q, renormalized only when it is not unit already: a
 * client's unit rotations reach the maths bit for bit. */
static quat unit(const float *q) {
  quat r = quat_make(q[0], q[1], q[2], q[3]);
  return fabsf(quat_dot(r, r) - 1.0f) > 1e-6f ? quat_normalize(r) : r;
}

/* Views of a pose ref; explicit rotations are copied normalized into rotations_scratch. */
static int view_pose(const srv_db_entry_t *entry, const srv_pose_ref_t *ref, const char *field, quat *rotations_scratch,
                     anim_pose_view_t *out_view, srv_response_t *out) {
  if (ref->frame >= 0) {
    const anim_database_t *db = &entry->db;
    if (ref->frame >= db->nframes)
      return srv_response_fail(out, ANIM_ERANGE, "%s.frame = %d: database %s has frames 0..%d", field, ref->frame,
                               db->name, db->nframes - 1);
    size_t base = (size_t)ref->frame * (size_t)db->nbones;
    out_view->count = (size_t)db->nbones;
    out_view->positions = db->local_positions + base;
    out_view->velocities = db->local_velocities + base;
    out_view->rotations = db->local_rotations + base;
    out_view->angular_velocities = db->local_angular_velocities + base;
    return 0;
  }
  for (int b = 0; b < ref->nbones; b++) rotations_scratch[b] = unit(ref->rotations + 4 * b);
  out_view->count = (size_t)ref->nbones;
  out_view->positions = (const vec3 *)ref->positions;
  out_view->velocities = (const vec3 *)ref->velocities;
  out_view->rotations = rotations_scratch;
  out_view->angular_velocities = (const vec3 *)ref->angular_velocities;
  return 0;
}

/* Offsets (and, when with_pose, an output pose) of n bones, response-owned. */
static int alloc_inertialize(srv_inertializer_t *r, int n, int with_pose, srv_response_t *out) {
  float *block = srv_response_alloc(out, (size_t)n * (with_pose ? 26 : 13) * sizeof *block);
  if (!block) return ANIM_ENOMEM;
  r->nbones = n;
  r->offset_positions = block, block += 3 * n;
  r->offset_velocities = block, block += 3 * n;
  r->offset_rotations = block, block += 4 * n;
  r->offset_angular_velocities = block, block += 3 * n;
  if (with_pose) {
    r->positions = block, block += 3 * n;
    r->velocities = block, block += 3 * n;
    r->rotations = block, block += 4 * n;
    r->angular_velocities = block;
  }
  return 0;
}

/* An inertializer over the response's offset arrays, starting from state. */
static int load_state(anim_inertializer_t *s, srv_inertializer_t *r, const srv_state_ref_t *state) {
  int n = r->nbones;
  int rc = anim_inertializer_init(s, (size_t)n, (vec3 *)r->offset_positions, (vec3 *)r->offset_velocities,
                                  (quat *)r->offset_rotations, (vec3 *)r->offset_angular_velocities);
  if (rc || !state->present) return rc;
  memcpy(r->offset_positions, state->offset_positions, 3 * (size_t)n * sizeof(float));
  memcpy(r->offset_velocities, state->offset_velocities, 3 * (size_t)n * sizeof(float));
  memcpy(r->offset_angular_velocities, state->offset_angular_velocities, 3 * (size_t)n * sizeof(float));
  for (int b = 0; b < n; b++) ((quat *)r->offset_rotations)[b] = unit(state->offset_rotations + 4 * b);
  if (state->anchor) {
    const float *a = state->anchor;
    s->anchor_anim_position = vec3_make(a[0], a[1], a[2]);
    s->anchor_anim_rotation = unit(a + 3);
    s->anchor_world_position = vec3_make(a[7], a[8], a[9]);
    s->anchor_world_rotation = unit(a + 10);
  }
  return 0;
}

static void store_anchor(const anim_inertializer_t *s, float *anchor) {
  const vec3 ap = s->anchor_anim_position, wp = s->anchor_world_position;
  const quat ar = s->anchor_anim_rotation, wr = s->anchor_world_rotation;
  const float values[14] = {ap.x, ap.y, ap.z, ar.w, ar.x, ar.y, ar.z, wp.x, wp.y, wp.z, wr.w, wr.x, wr.y, wr.z};
  memcpy(anchor, values, sizeof values);
}

/* names: what a and b are ("source", "destination") for the message. */
static int check_counts(const char *request, const char *a_name, size_t a, const char *b_name, size_t b,
                        int state_bones, srv_response_t *out) {
  if (a != b)
    return srv_response_fail(out, ANIM_EDIMENSION, "%s: %s has %zu bones, %s %zu: they must match", request, a_name, a,
                             b_name, b);
  if (state_bones && (size_t)state_bones != a)
    return srv_response_fail(out, ANIM_EDIMENSION, "%s.state has %d bones, the poses %zu: they must match", request,
                             state_bones, a);
  return 0;
}

static int transition(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  const srv_inertialize_transition_request_t *req = &request->body.inertialize_transition;
  quat src_rot[ANIM_MAX_BONES], dst_rot[ANIM_MAX_BONES];
  anim_pose_view_t src, dst;
  anim_inertializer_t s;
  int rc;
  srv_inertializer_t *r = &out->body.inertialize_transition;
  if ((rc = view_pose(out->entry, &req->source, "inertialize_transition.source", src_rot, &src, out)) ||
      (rc = view_pose(out->entry, &req->destination, "inertialize_transition.destination", dst_rot, &dst, out)) ||
      (rc = check_counts("inertialize_transition", "source", src.count, "destination", dst.count, req->state.nbones,
                         out)) ||
      (rc = alloc_inertialize(r, (int)src.count, 0, out)))
    return rc;
  if ((rc = load_state(&s, r, &req->state)))
    return srv_response_fail(out, rc, "inertialize_transition.state: %s", anim_strerror(rc));
  if ((rc = anim_inertializer_transition(&s, &src, &dst)))
    return srv_response_fail(out, rc, "inertialize_transition: %s", anim_strerror(rc));
  store_anchor(&s, r->anchor);
  return 0;
}

static int evaluate(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  const srv_inertialize_evaluate_request_t *req = &request->body.inertialize_evaluate;
  quat in_rot[ANIM_MAX_BONES];
  anim_pose_view_t input;
  anim_inertializer_t s;
  srv_inertializer_t *r = &out->body.inertialize_evaluate;
  int rc;
  if ((rc = view_pose(out->entry, &req->input, "inertialize_evaluate.input", in_rot, &input, out)) ||
      (rc = check_counts("inertialize_evaluate", "input", input.count, "state", (size_t)req->state.nbones, 0, out)) ||
      (rc = alloc_inertialize(r, (int)input.count, 1, out)))
    return rc;
  if ((rc = load_state(&s, r, &req->state)))
    return srv_response_fail(out, rc, "inertialize_evaluate.state: %s", anim_strerror(rc));
  anim_pose_buffer_t pose = {input.count, (vec3 *)r->positions, (vec3 *)r->velocities, (quat *)r->rotations,
                             (vec3 *)r->angular_velocities};
  if ((rc = anim_inertializer_evaluate(&s, &pose, &input, req->halflife, req->t)))
    return srv_response_fail(out, rc, "inertialize_evaluate: %s", anim_strerror(rc));
  /* The offsets themselves, t seconds on (exact decay). */
  for (size_t b = 0; b < input.count; b++) {
    anim_spring_decay_vec3((vec3 *)r->offset_positions + b, (vec3 *)r->offset_velocities + b, req->halflife, req->t);
    anim_spring_decay_quat((quat *)r->offset_rotations + b, (vec3 *)r->offset_angular_velocities + b, req->halflife,
                           req->t);
  }
  store_anchor(&s, r->anchor);
  return 0;
}

/* Character-space position and velocity of bone b at frame (relative to bone 0). */
static void character_space(const anim_database_t *db, int frame, int b, vec3 *out_x, vec3 *out_v) {
  size_t base = (size_t)frame * (size_t)db->nbones;
  vec3 root_x = db->global_positions[base];
  quat root_q = db->global_rotations[base];
  *out_x = quat_inv_mul_vec3(root_q, vec3_sub(db->global_positions[base + (size_t)b], root_x));
  *out_v = quat_inv_mul_vec3(root_q, db->global_velocities[base + (size_t)b]);
}

static void bone_state(const srv_db_entry_t *entry, const srv_pose_ref_t *ref, int b, vec3 *out_x, vec3 *out_v) {
  if (ref->frame >= 0) {
    character_space(&entry->db, ref->frame, b, out_x, out_v);
  } else {
    *out_x = ((const vec3 *)ref->positions)[b];
    *out_v = ((const vec3 *)ref->velocities)[b];
  }
}

static int cost_bones(const srv_db_entry_t *entry, const srv_transition_cost_request_t *req, int *out_bones,
                      int *out_count, srv_response_t *out) {
  int n = req->source.frame >= 0 ? entry->db.nbones : req->source.nbones;
  int m = req->destination.frame >= 0 ? entry->db.nbones : req->destination.nbones;
  int rc = check_counts("transition_cost", "source", (size_t)n, "destination", (size_t)m, 0, out);
  if (rc) return rc;
  if (req->nbones_named == 0) {
    for (int b = 0; b < n; b++) out_bones[b] = b;
    *out_count = n;
    return 0;
  }
  for (int i = 0; i < req->nbones_named; i++) {
    out_bones[i] = anim_skeleton_find(&entry->db.skeleton, req->bones[i]);
    if (out_bones[i] < 0)
      return srv_response_fail(out, ANIM_ENOTFOUND,
                               "transition_cost.bones[%d] = \"%.64s\": database %s has no such bone", i, req->bones[i],
                               entry->db.name);
  }
  *out_count = req->nbones_named;
  return 0;
}

static int transition_cost(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  const srv_transition_cost_request_t *req = &request->body.transition_cost;
  srv_transition_cost_response_t *c = &out->body.transition_cost;
  int bones[ANIM_MAX_BONES], count = 0, rc;
  if ((rc = cost_bones(out->entry, req, bones, &count, out))) return rc;
  const srv_pose_ref_t *refs[2] = {&req->source, &req->destination};
  for (int i = 0; i < 2; i++)
    if (refs[i]->frame >= 0 && refs[i]->frame >= out->entry->db.nframes)
      return srv_response_fail(out, ANIM_ERANGE, "transition_cost.%s.frame = %d: database %s has frames 0..%d",
                               i ? "destination" : "source", refs[i]->frame, out->entry->db.name,
                               out->entry->db.nframes - 1);
  /* names (pointers + 16-byte fallback labels) and two float arrays in one block */
  size_t size = (size_t)count * (sizeof(char *) + 16 + 2 * sizeof(float));
  char *block = srv_response_alloc(out, size + 1);
  if (!block) return ANIM_ENOMEM;
  c->names = (const char **)block;
  c->bone_exact = (float *)(block + (size_t)count * sizeof(char *));
  c->bone_approximate = c->bone_exact + count;
  char *labels = (char *)(c->bone_approximate + count);
  c->nbones = count;
  for (int i = 0; i < count; i++) {
    vec3 sx, sv, dx, dv;
    bone_state(out->entry, &req->source, bones[i], &sx, &sv);
    bone_state(out->entry, &req->destination, bones[i], &dx, &dv);
    vec3 x = vec3_sub(sx, dx), v = vec3_sub(sv, dv);
    c->bone_exact[i] = anim_transition_cost_exact_vec3(x, v, req->halflife);
    c->bone_approximate[i] = anim_transition_cost_approx_vec3(x, v, req->halflife);
    c->exact += c->bone_exact[i];
    c->approximate += c->bone_approximate[i];
    if (out->entry) {
      c->names[i] = out->entry->db.skeleton.names[bones[i]];
    } else {
      snprintf(labels + 16 * i, 16, "bone %d", bones[i]);
      c->names[i] = labels + 16 * i;
    }
  }
  return 0;
}

static int spring_tune(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  const srv_spring_tune_request_t *t = &request->body.spring_tune;
  srv_spring_tune_response_t *r = &out->body.spring_tune;
  int rc = 0;
  switch (t->problem) {
  case SRV_TUNE_FRACTION:
    rc = anim_spring_halflife_reaching_with_velocity(&r->halflife, t->x0, t->v0, t->alpha, t->t);
    if (rc == 0) rc = anim_spring_critical_gains(&r->stiffness, &r->damping, r->halflife, t->mass);
    break;
  case SRV_TUNE_TO_CONSTRAINT:
    r->stiffness = t->stiffness, r->damping = t->damping;
    rc = anim_spring_implicit_to_erp_cfm(&r->erp, &r->cfm, t->stiffness, t->damping, t->dt);
    break;
  case SRV_TUNE_FROM_CONSTRAINT:
    r->erp = t->erp, r->cfm = t->cfm;
    rc = anim_spring_erp_cfm_to_implicit(&r->stiffness, &r->damping, t->erp, t->cfm, t->dt);
    break;
  }
  if (rc == ANIM_ERANGE)
    return srv_response_fail(out, rc, "spring_tune.fraction: no critically damped spring reaches alpha = %g of x0 = %g "
                             "with v0 = %g at t = %g s", t->alpha, t->x0, t->v0, t->t);
  return rc ? srv_response_fail(out, rc, "spring_tune: %s", anim_strerror(rc)) : 0;
}

const srv_service_t srv_service_inertialize_transition = {.prepare = srv_service_acquire_database,
                                                          .handle = transition};
const srv_service_t srv_service_inertialize_evaluate = {.prepare = srv_service_acquire_database, .handle = evaluate};
const srv_service_t srv_service_transition_cost = {.prepare = srv_service_acquire_database, .handle = transition_cost};
const srv_service_t srv_service_spring_tune = {.handle = spring_tune};
