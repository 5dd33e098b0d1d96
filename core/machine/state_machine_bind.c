/*
 * state_machine_bind.c: a parsed machine bound to a database (clip spans to
 * frames and their first contact, tags to bits), and lookups by name.
 *
 * What it does not: parse or check the text (state_machine.c).
 */
#include <math.h>
#include <string.h>

#include "anim_error.h"
#include "machine/sm_report.h"
#include "machine/state_machine.h"

static int find_range(const anim_database_t *db, const char *name) {
  for (int r = 0; r < db->nranges; r++)
    if (strcmp(db->ranges[r].name, name) == 0) return r;
  return -1;
}

/* The first frame of the cycle [start, stop) (its last frame being its
 * first again) where the first contact bone comes down, the frame before
 * `start` being stop - 2; start when it never does. */
static int first_contact(const anim_database_t *db, int start, int stop) {
  if (db->ncontacts == 0 || !db->contacts || stop - start < 3) return start;
  size_t nc = (size_t)db->ncontacts;
  for (int f = start; f < stop - 1; f++) {
    int prev = f == start ? stop - 2 : f - 1;
    if (db->contacts[(size_t)f * nc] && !db->contacts[(size_t)prev * nc]) return f;
  }
  return start;
}

static int bind_clip(anim_sm_clip_t *c, const anim_database_t *db, anim__sm_report_t *r) {
  c->range = find_range(db, c->range_name);
  if (c->range < 0) {
    anim__sm_report(r, ANIM_SM_UNKNOWN_RANGE, c->where, "database '%s' has no range '%s'", db->name, c->range_name);
    return ANIM_ENOTFOUND;
  }
  const anim_range_t *range = &db->ranges[c->range];
  /* A span covers the frames whose times are within [from, to], to the
   * nearest frame; half a frame of slack at the end for rounding. */
  int from = (int)lroundf(c->from * db->frame_rate);
  int to = c->to < 0.0f ? range->stop - range->start - 1 : (int)lroundf(c->to * db->frame_rate);
  c->start = range->start + from, c->stop = range->start + to + 1;
  if (c->start < range->start || c->stop > range->stop || c->stop - c->start < 2) {
    anim__sm_report(r, ANIM_SM_SPAN, c->where, "span [%g %g] s is not two frames or more inside '%s' (%.3f s)", c->from,
           c->to, c->range_name, (range->stop - range->start - 1) / db->frame_rate);
    return ANIM_ERANGE;
  }
  c->phase_frame = first_contact(db, c->start, c->stop);
  return 0;
}

int anim_state_machine_bind(anim_state_machine_t *sm, const anim_database_t *db, anim_sm_diagnostics_t *out_diagnostics,
                            char *err, int errlen) {
  anim__sm_report_t r = {out_diagnostics, sm ? sm->filename : "<text>", err, errlen, 0};
  if (out_diagnostics) memset(out_diagnostics, 0, sizeof *out_diagnostics);
  if (err && errlen > 0) err[0] = '\0';
  if (!sm || !db) return ANIM_EINVAL;
  int rc = 0;
  sm->bound_version = 0;
  for (int c = 0; c < sm->nclips; c++) {
    int e = bind_clip(&sm->clips[c], db, &r);
    if (e && !rc) rc = e;
  }
  for (int s = 0; s < sm->nstates; s++) {
    anim_sm_state_t *st = &sm->states[s];
    if (st->kind != ANIM_SM_MOTION_TAG && st->kind != ANIM_SM_MOTION_MATCH) continue;
    st->tag_mask = 0;
    for (int i = 0; i < st->ntags; i++) {
      int bit = anim_database_find_tag(db, st->tags[i]);
      if (bit < 0) {
        anim__sm_report(&r, ANIM_SM_UNKNOWN_TAG, st->tag_where[i], "state '%s': database '%s' has no tag '%s'",
                        st->name, db->name, st->tags[i]);
        if (!rc) rc = ANIM_ENOTFOUND;
      } else {
        st->tag_mask |= 1u << bit;
      }
    }
  }
  if (!rc) sm->bound_version = db->version;
  return rc;
}

int anim_state_machine_find_event(const anim_state_machine_t *sm, const char *name) {
  for (int e = 0; e < sm->nevents; e++)
    if (strcmp(sm->events[e], name) == 0) return e;
  return -1;
}

int anim_state_machine_find_state(const anim_state_machine_t *sm, int m, const char *name) {
  int first = 0, count = sm->nstates;
  if (m >= 0 && m < sm->nmachines) first = sm->machines[m].first_state, count = sm->machines[m].nstates;
  for (int s = first; s < first + count; s++)
    if (strcmp(sm->states[s].name, name) == 0 && (m < 0 || sm->states[s].machine == m)) return s;
  return -1;
}

int anim_state_machine_find_param(const anim_state_machine_t *sm, const char *name) {
  for (int i = 0; i < sm->nparams; i++)
    if (strcmp(sm->params[i].name, name) == 0) return i;
  return -1;
}
