/*
 * sm_report.h: the state-machine parser's and binder's diagnostics (core
 * internal): each problem written once as "file:line:column: what" into the
 * first-error string and, when the caller asked for them, the diagnostics
 * list (the first ANIM_SM_MAX_DIAGNOSTICS kept, all counted).
 *
 * What it does not: decide what is a problem (state_machine.c, state_machine_bind.c).
 */
#ifndef ANIM_SM_REPORT_H
#define ANIM_SM_REPORT_H

#include "machine/state_machine.h"

typedef struct {
  anim_sm_diagnostics_t *out;   /* may be NULL */
  const char *file;
  char *err;
  int errlen;
  int total;
} anim__sm_report_t;

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
void anim__sm_report(anim__sm_report_t *r, anim_sm_problem_t problem, anim_sm_location_t at, const char *fmt, ...);

#endif
