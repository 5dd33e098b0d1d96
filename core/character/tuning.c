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
  return 0;
}
