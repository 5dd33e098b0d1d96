/*
 * sm_check.h: the state-machine parser's checks of where a machine can go
 * (core internal), run once its names are resolved and its nesting checked
 * (no machine nested in itself is assumed, but tolerated):
 *  - END on a state running a nested machine from which no END comes up
 *    (every motion in it cycles or takes its own END): NEVER_ENDS;
 *  - states unreachable from their machine's initial state: UNREACHABLE;
 *  - cycles of immediate transitions (AUTO with exit 0): IMMEDIATE_CYCLE.
 * Each problem is reported through r.
 */
#ifndef ANIM_SM_CHECK_H
#define ANIM_SM_CHECK_H

#include "machine/sm_report.h"
#include "machine/state_machine.h"

/* 0, or -1 when out of memory. */
int anim__sm_check_paths(const anim_state_machine_t *sm, anim__sm_report_t *r);

#endif
