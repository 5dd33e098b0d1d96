/*
 * sm_report.c: diagnostics of state-machine text and binding (sm_report.h),
 * and the problems' names.
 */
#include <stdarg.h>
#include <stdio.h>

#include "machine/sm_report.h"

static const char *const problem_names[] = {
#define ANIM_SM_PROBLEM_NAME(name, description) #name,
    ANIM_SM_PROBLEM_MAP(ANIM_SM_PROBLEM_NAME)
#undef ANIM_SM_PROBLEM_NAME
};

const char *anim_sm_problem_name(anim_sm_problem_t problem) {
  return (unsigned)problem < ANIM_SM_PROBLEM_COUNT ? problem_names[problem] : "UNKNOWN";
}

void anim__sm_report(anim__sm_report_t *r, anim_sm_problem_t problem, anim_sm_location_t at, const char *fmt, ...) {
  char what[160];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  char line[192];
  snprintf(line, sizeof line, "%s:%d:%d: %s", r->file, at.line, at.column, what);
  if (r->total == 0 && r->err && r->errlen > 0) snprintf(r->err, (size_t)r->errlen, "%s", line);
  if (r->out) {
    if (r->out->count < ANIM_SM_MAX_DIAGNOSTICS) {
      anim_sm_diagnostic_t *d = &r->out->items[r->out->count++];
      d->problem = problem, d->line = at.line, d->column = at.column;
      snprintf(d->message, sizeof d->message, "%s", line);
    }
    r->out->total++;
  }
  r->total++;
}
