/*
 * body_step.c: one character's body on a shared model: its drives (PD
 * torques per joint, the root's limited stabiliser) and the step toward a
 * target pose (body.h). MuJoCo state is double; poses in and out are the
 * database's floats. Nothing here allocates after anim_physics_body_create.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anim_error.h"
#include "body_internal.h"
#include "motion/spring.h"
#include "pose/kinematics.h"

typedef struct {
  double w, x, y, z;
} dquat;

static dquat dq_from(quat q) { return (dquat){q.w, q.x, q.y, q.z}; }
static dquat dq_load(const mjtNum *p) { return (dquat){p[0], p[1], p[2], p[3]}; }
static void dq_store(mjtNum *p, dquat q) { p[0] = q.w, p[1] = q.x, p[2] = q.y, p[3] = q.z; }
static dquat dq_mul(dquat a, dquat b) {
  return (dquat){a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z, a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
                 a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x, a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w};
}
static dquat dq_conj(dquat q) { return (dquat){q.w, -q.x, -q.y, -q.z}; }
static dquat dq_normalize(dquat q) {
  double n = sqrt(q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z);
  return (dquat){q.w / n, q.x / n, q.y / n, q.z / n};
}
/* The rotation vector (axis x angle) of q, the short way round. */
static void dq_rotvec(double *out, dquat q) {
  if (q.w < 0) q = (dquat){-q.w, -q.x, -q.y, -q.z};
  double s = sqrt(q.x * q.x + q.y * q.y + q.z * q.z);
  double k = s < 1e-12 ? 2.0 : 2.0 * atan2(s, q.w) / s;
  out[0] = k * q.x, out[1] = k * q.y, out[2] = k * q.z;
}
static dquat dq_exp_half(const double *v) { /* the rotation by the rotation vector v */
  double a = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
  if (a < 1e-12) return (dquat){1.0, 0.5 * v[0], 0.5 * v[1], 0.5 * v[2]};
  double s = sin(0.5 * a) / a;
  return (dquat){cos(0.5 * a), s * v[0], s * v[1], s * v[2]};
}
static dquat dq_nlerp(dquat a, dquat b, double t) {
  if (a.w * b.w + a.x * b.x + a.y * b.y + a.z * b.z < 0) b = (dquat){-b.w, -b.x, -b.y, -b.z};
  return dq_normalize((dquat){a.w + (b.w - a.w) * t, a.x + (b.x - a.x) * t, a.y + (b.y - a.y) * t, a.z + (b.z - a.z) * t});
}
static void dq_rotate(double *out, dquat q, const double *v) {
  dquat p = dq_mul(dq_mul(q, (dquat){0, v[0], v[1], v[2]}), dq_conj(q));
  out[0] = p.x, out[1] = p.y, out[2] = p.z;
}

static int drive_check(const anim_physics_drive_t *d, char *err, int errlen) {
  if (d->mode < ANIM_PHYSICS_KINEMATIC || d->mode > ANIM_PHYSICS_LIMP) return body_errorf(err, errlen, "mode: must be kinematic, powered or limp"), ANIM_EINVAL;
  if (!(d->halflife >= 0.005f && d->halflife <= 10.0f)) return body_errorf(err, errlen, "halflife: must be in [0.005, 10] s"), ANIM_EINVAL;
  if (!(d->damping_ratio >= 0.0f && d->damping_ratio <= 10.0f)) return body_errorf(err, errlen, "damping_ratio: must be in [0, 10]"), ANIM_EINVAL;
  if (!(d->max_torque >= 0.0f && d->max_torque <= 1e5f)) return body_errorf(err, errlen, "max_torque: must be in [0, 1e5] N m"), ANIM_EINVAL;
  return 0;
}

/* The torque limits scale with the mass as every other force does (body.h:
 * a body of mass M then follows its target as the 70 kg one does). */
void anim_physics_drive_default(const anim_physics_model_t *model, anim_physics_drive_t *out_drive) {
  float scale = model ? model->mass_scale : 1.0f;
  *out_drive = (anim_physics_drive_t){ANIM_PHYSICS_POWERED, ANIM_PHYSICS_DEFAULT_HALFLIFE, 1.0f,
                                      ANIM_PHYSICS_DEFAULT_MAX_TORQUE * scale};
}

void anim_physics_root_default(const anim_physics_model_t *model, anim_physics_root_t *out_root) {
  *out_root = (anim_physics_root_t){ANIM_PHYSICS_POWERED, 0.03f, 1.0f, 3.0f * 9.81f * model->total_mass,
                                    ANIM_PHYSICS_DEFAULT_MAX_TORQUE * model->mass_scale};
}

anim_physics_body_t *anim_physics_body_create(const anim_physics_model_t *model, char *err, int errlen) {
  anim_physics_body_t *body = calloc(1, sizeof *body);
  if (!body || !(body->d = mj_makeData(model->m))) {
    free(body);
    body_errorf(err, errlen, "out of memory");
    return NULL;
  }
  body->model = model;
  for (int b = 0; b < model->nbones; b++) anim_physics_drive_default(model, &body->drives[b]);
  anim_physics_root_default(model, &body->root);
  /* The rest pose: identity rotations, the root standing at its rest height. */
  vec3 pos[ANIM_MAX_BONES];
  quat rot[ANIM_MAX_BONES];
  for (int b = 0; b < model->nbones; b++) pos[b] = model->offsets[b], rot[b] = quat_identity();
  pos[0] = vec3_zero();
  pos[model->root] = vec3_make(0.0f, model->rest_root_height, 0.0f);
  anim_physics_body_reset(body, pos, rot);
  return body;
}

void anim_physics_body_free(anim_physics_body_t *body) {
  if (!body) return;
  mj_deleteData(body->d);
  free(body);
}

static int pose_finite(int n, const vec3 *p, const quat *q) {
  for (int b = 0; b < n; b++)
    if (!vec3_finite(p[b]) || !isfinite(q[b].w) || !isfinite(q[b].x) || !isfinite(q[b].y) || !isfinite(q[b].z)) return 0;
  return 1;
}

/* The target's world root (the hips) and the world frame of its parent,
 * through the chain of kinematic bones above it. */
static void target_root(const anim_physics_model_t *pm, const vec3 *p, const quat *q, vec3 *out_pos, quat *out_rot,
                        vec3 *out_parent_pos, quat *out_parent_rot) {
  int chain[ANIM_MAX_BONES], n = 0;
  for (int b = pm->parents[pm->root]; b >= 0; b = pm->parents[b]) chain[n++] = b;
  vec3 gp = vec3_zero();
  quat gq = quat_identity();
  for (int i = n - 1; i >= 0; i--) {
    gp = vec3_add(gp, quat_mul_vec3(gq, p[chain[i]]));
    gq = quat_normalize(quat_mul(gq, q[chain[i]]));
  }
  *out_parent_pos = gp, *out_parent_rot = gq;
  *out_pos = vec3_add(gp, quat_mul_vec3(gq, p[pm->root]));
  *out_rot = quat_normalize(quat_mul(gq, q[pm->root]));
}

int anim_physics_body_reset(anim_physics_body_t *body, const vec3 *local_positions, const quat *local_rotations) {
  if (!body || !local_positions || !local_rotations) return ANIM_EINVAL;
  const anim_physics_model_t *pm = body->model;
  if (!pose_finite(pm->nbones, local_positions, local_rotations)) return ANIM_ENONFINITE;
  mjData *d = body->d;
  mj_resetData(pm->m, d);
  vec3 rp;
  quat rq;
  target_root(pm, local_positions, local_rotations, &rp, &rq, &body->bone0_position, &body->bone0_rotation);
  mjtNum *q = d->qpos + pm->qposadr[pm->root];
  q[0] = rp.x, q[1] = rp.y, q[2] = rp.z;
  dq_store(q + 3, dq_from(rq));
  for (int b = 1; b < pm->nbones; b++) {
    body->prev_target[b] = quat_normalize(local_rotations[b]);
    if (pm->joint[b]) dq_store(d->qpos + pm->qposadr[b], dq_from(body->prev_target[b]));
  }
  body->prev_root_position = rp, body->prev_root_rotation = rq;
  body->has_prev_velocity = 0;
  mj_forward(pm->m, d);
  return 0;
}

int anim_physics_body_set_drive(anim_physics_body_t *body, int bone, const anim_physics_drive_t *drive, char *err,
                                int errlen) {
  if (!body || !drive) return body_errorf(err, errlen, "drive: NULL"), ANIM_EINVAL;
  if (bone < 1 || bone >= body->model->nbones || bone == body->model->root || !body->model->sim[bone])
    return body_errorf(err, errlen, "bone: %d is not a jointed bone (one below the root %d)", bone, body->model->root), ANIM_ERANGE;
  int rc = drive_check(drive, err, errlen);
  if (rc) return rc;
  body->drives[bone] = *drive;
  return 0;
}

int anim_physics_body_set_root(anim_physics_body_t *body, const anim_physics_root_t *root, char *err, int errlen) {
  if (!body || !root) return body_errorf(err, errlen, "root: NULL"), ANIM_EINVAL;
  anim_physics_drive_t as_drive = {root->mode, root->halflife, root->damping_ratio, root->max_torque};
  int rc = drive_check(&as_drive, err, errlen);
  if (rc) return rc;
  if (!(root->max_force >= 0.0f && root->max_force <= 1e6f)) return body_errorf(err, errlen, "max_force: must be in [0, 1e6] N"), ANIM_EINVAL;
  body->root = *root;
  return 0;
}

static void clamp_norm(double *v, double limit) {
  double n = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
  if (n > limit) {
    double s = limit / n;
    v[0] *= s, v[1] *= s, v[2] *= s;
  }
}

/* PD torque (body frame) toward target rotation qt moving at wt, the
 * proportional term at the rotation one substep ahead (stable PD). */
static void pd_torque(double *out, dquat q, const mjtNum *w, dquat qt, const double *wt, const double *feedforward,
                      const double *inertia, const mjtNum *model_damping, float halflife, float ratio, float max_torque,
                      double h) {
  double hw[3] = {h * w[0], h * w[1], h * w[2]}, e[3];
  dquat ahead = dq_mul(q, dq_exp_half(hw));
  dq_rotvec(e, dq_mul(dq_conj(ahead), qt));
  for (int k = 0; k < 3; k++) {
    double stiffness, damping;
    anim_spring_critical_gains(&stiffness, &damping, halflife, inertia[k]);
    /* The model already damps -c_m w implicitly: add what makes the total
     * c (wt - w), i.e. c wt - (c - c_m) w (0 extra for the default drive). */
    double cm = model_damping ? model_damping[k] : 0.0, c = ratio * damping;
    out[k] = feedforward[k] + stiffness * e[k] + c * wt[k] - (c - cm) * w[k];
  }
  clamp_norm(out, max_torque);
}

int anim_physics_step(anim_physics_body_t *body, const vec3 *target_positions, const quat *target_rotations,
                      vec3 *out_positions, quat *out_rotations) {
  if (!body || !target_positions || !target_rotations) return ANIM_EINVAL;
  const anim_physics_model_t *pm = body->model;
  const mjModel *m = pm->m;
  mjData *d = body->d;
  int n = pm->nbones, root = pm->root;
  if (!pose_finite(n, target_positions, target_rotations)) return ANIM_ENONFINITE;
  double tick = pm->tick, h = m->opt.timestep;

  /* Targets and their velocities (finite differences from the last target). */
  dquat qt[ANIM_MAX_BONES];
  double wt[ANIM_MAX_BONES][3];
  for (int b = 1; b < n; b++) {
    if (!pm->joint[b]) continue;
    qt[b] = dq_from(quat_normalize(target_rotations[b]));
    dq_rotvec(wt[b], dq_mul(dq_conj(dq_from(body->prev_target[b])), qt[b]));
    for (int k = 0; k < 3; k++) wt[b][k] /= tick;
  }
  /* The target's angular acceleration per joint axis times the axis'
   * inertia: the torque the motion itself needs, fed forward so that the PD
   * corrects errors instead of lagging behind every swing. */
  double accel[ANIM_MAX_BONES][3];
  for (int b = 1; b < n; b++) {
    if (!pm->joint[b]) continue;
    for (int k = 0; k < 3; k++) {
      accel[b][k] = body->has_prev_velocity ? pm->dof_inertia[b][k] * (wt[b][k] - body->prev_velocity[b][k]) / tick : 0.0;
      body->prev_velocity[b][k] = wt[b][k];
    }
  }
  body->has_prev_velocity = 1;
  vec3 rp, parent_pos;
  quat rq, parent_rot;
  target_root(pm, target_positions, target_rotations, &rp, &rq, &parent_pos, &parent_rot);
  dquat rqt = dq_from(rq), rq0 = dq_from(body->prev_root_rotation);
  double rvt[3] = {(rp.x - body->prev_root_position.x) / tick, (rp.y - body->prev_root_position.y) / tick,
                   (rp.z - body->prev_root_position.z) / tick};
  double rwt[3];
  dq_rotvec(rwt, dq_mul(dq_conj(rq0), rqt)); /* body frame, as the free joint's angular velocity */
  for (int k = 0; k < 3; k++) rwt[k] /= tick;

  mjtNum *rqpos = d->qpos + pm->qposadr[root], *rqvel = d->qvel + pm->dofadr[root];
  /* MuJoCo answers a NaN or a value past 1e10 in qpos, qvel or qacc by
   * resetting the whole mjData to the model's rest pose (at the world's
   * origin) with a warning, and steps on: a finite state that is not the
   * body's motion. Its warning counts tell. */
  int bad = d->warning[mjWARN_BADQPOS].number + d->warning[mjWARN_BADQVEL].number + d->warning[mjWARN_BADQACC].number;
  for (int s = 0; s < pm->substeps; s++) {
    double t = (double)(s + 1) / pm->substeps;
    mju_zero(d->qfrc_applied, m->nv);
    for (int b = 1; b < n; b++) {
      if (!pm->joint[b]) continue;
      const anim_physics_drive_t *dr = &body->drives[b];
      mjtNum *q = d->qpos + pm->qposadr[b], *w = d->qvel + pm->dofadr[b];
      if (dr->mode == ANIM_PHYSICS_KINEMATIC) {
        dq_store(q, dq_nlerp(dq_from(body->prev_target[b]), qt[b], t));
        for (int k = 0; k < 3; k++) w[k] = wt[b][k];
      } else if (dr->mode == ANIM_PHYSICS_POWERED) {
        double tau[3];
        /* Gravity (and Coriolis) compensation: MuJoCo's bias force at the
         * joint from the last substep (the torque that holds what hangs
         * below it still), and the target's acceleration, added before the
         * torque limit. */
        double bias[3];
        for (int k = 0; k < 3; k++) bias[k] = d->qfrc_bias[pm->dofadr[b] + k] + accel[b][k];
        pd_torque(tau, dq_load(q), w, qt[b], wt[b], bias, pm->dof_inertia[b], m->dof_damping + pm->dofadr[b],
                  dr->halflife, dr->damping_ratio, dr->max_torque, h);
        for (int k = 0; k < 3; k++) d->qfrc_applied[pm->dofadr[b] + k] = tau[k];
      }
    }
    const anim_physics_root_t *ro = &body->root;
    if (ro->mode == ANIM_PHYSICS_KINEMATIC) {
      rqpos[0] = body->prev_root_position.x + (rp.x - body->prev_root_position.x) * t;
      rqpos[1] = body->prev_root_position.y + (rp.y - body->prev_root_position.y) * t;
      rqpos[2] = body->prev_root_position.z + (rp.z - body->prev_root_position.z) * t;
      dq_store(rqpos + 3, dq_nlerp(rq0, rqt, t));
      for (int k = 0; k < 3; k++) rqvel[k] = rvt[k], rqvel[3 + k] = rwt[k];
    } else if (ro->mode == ANIM_PHYSICS_POWERED) {
      /* The hand of God: a spring on the whole mass toward the target root,
       * evaluated one substep ahead, limited in force; and a torque on the
       * root's rotation, limited in torque. */
      double stiffness, damping, f[3], tau[3];
      anim_spring_critical_gains(&stiffness, &damping, ro->halflife, pm->total_mass);
      double target[3] = {rp.x, rp.y, rp.z};
      for (int k = 0; k < 3; k++)
        f[k] = stiffness * (target[k] - (rqpos[k] + h * rqvel[k])) + ro->damping_ratio * damping * (rvt[k] - rqvel[k]);
      clamp_norm(f, ro->max_force);
      static const double none[3] = {0, 0, 0};
      pd_torque(tau, dq_load(rqpos + 3), rqvel + 3, rqt, rwt, none, pm->dof_inertia[root], NULL, ro->halflife, ro->damping_ratio,
                ro->max_torque, h);
      for (int k = 0; k < 3; k++) d->qfrc_applied[pm->dofadr[root] + k] = f[k], d->qfrc_applied[pm->dofadr[root] + 3 + k] = tau[k];
    }
    mj_step(m, d);
  }
  /* Kinematic parts end the tick exactly on the target (the last substep
   * moved them on by their velocity). */
  for (int b = 1; b < n; b++)
    if (pm->joint[b] && body->drives[b].mode == ANIM_PHYSICS_KINEMATIC) dq_store(d->qpos + pm->qposadr[b], qt[b]);
  if (body->root.mode == ANIM_PHYSICS_KINEMATIC) {
    rqpos[0] = rp.x, rqpos[1] = rp.y, rqpos[2] = rp.z;
    dq_store(rqpos + 3, rqt);
  }
  for (int b = 1; b < n; b++) body->prev_target[b] = b == root ? target_rotations[b] : quat_normalize(target_rotations[b]);
  body->prev_root_position = rp, body->prev_root_rotation = rq;
  body->bone0_position = parent_pos, body->bone0_rotation = parent_rot;

  if (d->warning[mjWARN_BADQPOS].number + d->warning[mjWARN_BADQVEL].number + d->warning[mjWARN_BADQACC].number != bad)
    return ANIM_ENONFINITE;
  for (int i = 0; i < m->nq; i++)
    if (!isfinite(d->qpos[i])) return ANIM_ENONFINITE;
  for (int i = 0; i < m->nv; i++)
    if (!isfinite(d->qvel[i])) return ANIM_ENONFINITE;

  if (out_positions && out_rotations) {
    for (int b = 0; b < n; b++) out_positions[b] = target_positions[b], out_rotations[b] = target_rotations[b];
    for (int b = 1; b < n; b++) {
      if (!pm->joint[b]) continue;
      const mjtNum *q = d->qpos + pm->qposadr[b];
      out_rotations[b] = quat_make((float)q[0], (float)q[1], (float)q[2], (float)q[3]);
    }
    /* The root relative to its parent (bone 0 and any bone above the hips stay the target's). */
    dquat r0 = dq_from(body->bone0_rotation), r0i = dq_conj(r0);
    double rel[3] = {rqpos[0] - body->bone0_position.x, rqpos[1] - body->bone0_position.y, rqpos[2] - body->bone0_position.z}, lp[3];
    dq_rotate(lp, r0i, rel);
    dquat lq = dq_normalize(dq_mul(r0i, dq_load(rqpos + 3)));
    out_positions[root] = vec3_make((float)lp[0], (float)lp[1], (float)lp[2]);
    out_rotations[root] = quat_make((float)lq.w, (float)lq.x, (float)lq.y, (float)lq.z);
  }
  return 0;
}

void anim_physics_body_global_positions(const anim_physics_body_t *body, vec3 *out_positions) {
  const anim_physics_model_t *pm = body->model;
  const mjData *d = body->d;
  quat rot[ANIM_MAX_BONES];
  vec3 local[ANIM_MAX_BONES];
  for (int b = 0; b < pm->nbones; b++) local[b] = pm->offsets[b], rot[b] = quat_identity();
  /* World frame directly: the bones above the root at the origin, the root's world transform as its local one. */
  for (int b = 0; b < pm->nbones; b++)
    if (!pm->sim[b]) local[b] = vec3_zero();
  const mjtNum *rq = d->qpos + pm->qposadr[pm->root];
  local[pm->root] = vec3_make((float)rq[0], (float)rq[1], (float)rq[2]);
  rot[pm->root] = quat_make((float)rq[3], (float)rq[4], (float)rq[5], (float)rq[6]);
  for (int b = 1; b < pm->nbones; b++) {
    if (b == pm->root) continue;
    if (!pm->joint[b]) { /* welded, or above the root: the last target's */
      rot[b] = body->prev_target[b];
      continue;
    }
    const mjtNum *q = d->qpos + pm->qposadr[b];
    rot[b] = quat_make((float)q[0], (float)q[1], (float)q[2], (float)q[3]);
  }
  quat grot[ANIM_MAX_BONES];
  anim_fk(out_positions, grot, local, rot, pm->parents, pm->nbones);
  for (int b = 0; b < pm->nbones; b++)
    if (!pm->sim[b]) out_positions[b] = body->bone0_position;
}
