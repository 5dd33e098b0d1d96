/* tuning.c: a running character's parameters replaced (see tuning.h). */
#include "anim_error.h"
#include "character/tuning.h"

int anim_controller_set_params(anim_controller_t *c, const anim_controller_params_t *params) {
  anim_controller_params_t next = *params;
  next.foot_lock = c->params.foot_lock; /* set up at init, kept */
  int rc = anim_controller_params_validate(&next);
  if (rc) return rc;
  c->params = next;
  anim_dynamics_params_make(&c->sim.smoothing, next.input_f, next.input_zeta, next.input_r);
  /* The warp reads its own copy each tick (warp.h): a warp turned off
   * there stands aside from the next tick on. */
  c->warp.params = next.warp;
  return 0;
}
