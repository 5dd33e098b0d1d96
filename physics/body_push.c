/*
 * body_push.c: pushes on a simulated body (body.h): a force at a point of a
 * bone, held on MuJoCo's xfrc_applied (the Cartesian force and torque on a
 * body's centre of mass) until cleared, so that it acts on every substep of
 * the steps it spans. An impulse J is a force J / tick for one step.
 *
 * What it does not: decide when a push starts or ends (the caller clears
 * the forces after the steps they span), or check a push's size (the
 * server's bounds, server/actor_physical.c).
 */
#include <math.h>
#include <setjmp.h>
#include <stdlib.h>

#include "anim_error.h"
#include "body_internal.h"

int anim_physics_model_has_body(const anim_physics_model_t *model, int bone) {
  return model && bone >= 1 && bone < model->nbones && model->sim[bone] && model->body_id[bone] > 0;
}

int anim_physics_body_push(anim_physics_body_t *body, int bone, vec3 point, vec3 force) {
  if (!body) return ANIM_EINVAL;
  const anim_physics_model_t *pm = body->model;
  if (!anim_physics_model_has_body(pm, bone)) return ANIM_ERANGE;
  if (!isfinite(point.x) || !isfinite(point.y) || !isfinite(point.z) || !isfinite(force.x) || !isfinite(force.y) ||
      !isfinite(force.z))
    return ANIM_ENONFINITE;
  mjData *d = body->d;
  int id = pm->body_id[bone];
  /* The point in the world from the body's frame (the bone's: its joint the
   * origin, the skeleton's rest orientation), as the last step left it. */
  const mjtNum *x = d->xpos + 3 * id, *r = d->xmat + 9 * id, *com = d->xipos + 3 * id;
  mjtNum p[3], arm[3], f[3] = {force.x, force.y, force.z};
  for (int k = 0; k < 3; k++) p[k] = x[k] + r[3 * k] * point.x + r[3 * k + 1] * point.y + r[3 * k + 2] * point.z;
  for (int k = 0; k < 3; k++) arm[k] = p[k] - com[k];
  mjtNum *out = d->xfrc_applied + 6 * id;
  out[0] += f[0], out[1] += f[1], out[2] += f[2];
  /* The torque of a force off the centre of mass. */
  out[3] += arm[1] * f[2] - arm[2] * f[1];
  out[4] += arm[2] * f[0] - arm[0] * f[2];
  out[5] += arm[0] * f[1] - arm[1] * f[0];
  return 0;
}

int anim_physics_model_set_sizes(anim_physics_model_t *model, int nstack, int njmax, int nconmax) {
  if (!model || nstack < 1000 || nstack > 100000000 || njmax < 10 || njmax > 100000 || nconmax < 4 || nconmax > 10000)
    return ANIM_EINVAL;
  model->m->nstack = nstack, model->m->njmax = njmax, model->m->nconmax = nconmax;
  return 0;
}

size_t anim_physics_body_bytes(const anim_physics_body_t *body) {
  if (!body) return 0;
  return sizeof *body + (size_t)body->d->nbuffer + (size_t)body->d->nstack * sizeof(mjtNum) + sizeof *body->d;
}

void anim_physics_body_push_clear(anim_physics_body_t *body) {
  if (!body) return;
  mjData *d = body->d;
  for (int i = 0; i < 6 * body->model->m->nbody; i++) d->xfrc_applied[i] = 0.0;
}

/* MuJoCo's messages go to the caller's log, not to MUJOCO_LOG.TXT, and an
 * error never exits the process: MuJoCo's default error handler prints
 * and exits, and one that returns lets MuJoCo run on past the failed
 * check (2.2.2's stack allocator then writes past its block). So an error
 * inside a guarded step jumps back to the guard (the body is left for the
 * caller to reset: mj_resetData clears MuJoCo's stack); outside a guard
 * (a model build, whose XML errors MuJoCo reports itself) it is logged and
 * the calling thread stops in abort() rather than corrupt memory. */
static void (*log_cb)(int error, const char *message);
static _Thread_local jmp_buf *guard;

static void on_warning(const char *message) {
  if (log_cb) log_cb(0, message);
}

static void on_error(const char *message) {
  if (log_cb) log_cb(1, message);
  if (guard) longjmp(*guard, 1);
  abort();
}

void anim_physics_set_log(void (*cb)(int error, const char *message)) {
  log_cb = cb;
  mju_user_warning = on_warning;
  mju_user_error = on_error;
}

int anim_physics_step_guarded(anim_physics_body_t *body, const vec3 *target_positions, const quat *target_rotations,
                              vec3 *out_positions, quat *out_rotations) {
  jmp_buf here;
  volatile int rc = ANIM_EINTERNAL;
  if (setjmp(here) == 0) {
    guard = &here;
    rc = anim_physics_step(body, target_positions, target_rotations, out_positions, out_rotations);
  }
  guard = NULL;
  return rc;
}
