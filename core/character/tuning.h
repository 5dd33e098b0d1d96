/*
 * tuning.h: changing a running motion-matching character's parameters
 * (controller.h), as a debugger's sliders do.
 *
 * What changes at once: the half-lives and their scales (the next update
 * of the inertializer and the springs), speeds, transition cost, search
 * interval and exclusions (the next search), the replan threshold, and the
 * input smoothing (its coefficients are remade; its state, the smoothed
 * velocity, is kept, so the character does not jump), and animation
 * warping's switches and bounds (warp.h; rate and angles carry on from
 * where they are, toward the new bounds). What does not:
 * foot locking (its bones and grounding are set up at init): params's
 * foot_lock is ignored and the character's kept.
 */
#ifndef ANIM_TUNING_H
#define ANIM_TUNING_H

#include "character/controller.h"

/* Validates params (anim_controller_params_validate), then replaces
 * character's (foot_lock aside). 0, or the validation's ANIM_EINVAL /
 * ANIM_ENONFINITE with nothing changed. Between ticks only. */
int anim_controller_set_params(anim_controller_t *character, const anim_controller_params_t *params);

#endif
