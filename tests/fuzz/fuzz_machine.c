/*
 * fuzz_machine.c: libFuzzer target for the state machine text format
 * (state_machine.h), and for running what parses.
 *
 * The input is the text (not NUL-terminated: the parser must never read
 * past len). Whatever it is, the diagnostics are consistent (count <= total,
 * messages terminated, positions >= 1). A machine that parses satisfies
 * what the checks promise: every transition targets a state of its own
 * machine, every nested machine exists, nesting is no deeper than
 * ANIM_SM_MAX_DEPTH, the special events are 0 END and 1 AUTO. One that also
 * binds to the procedural default database (its ranges idle, walk, run...
 * and tags) is run for 40 ticks with events taken from the text's bytes;
 * no tick may take more than the machine's max_transitions, and the active
 * path is a chain of nested machines' states. Match states are skipped (no
 * search index here: their refusal is checked instead).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "machine/machine_character.h"
#include "offline/procgen.h"
#include "machine/state_machine.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static anim_database_t db;
static int have_db;

static void check_machine(const anim_state_machine_t *sm) {
  if (sm->nevents < 2 || strcmp(sm->events[0], "END") || strcmp(sm->events[1], "AUTO")) abort();
  if (sm->depth < 1 || sm->depth > ANIM_SM_MAX_DEPTH || sm->nmachines < 1 || sm->machines[0].nstates < 1) abort();
  for (int m = 0; m < sm->nmachines; m++) {
    const anim_sm_machine_t *mm = &sm->machines[m];
    if (mm->nstates < 1 || mm->first_state < 0 || mm->first_state + mm->nstates > sm->nstates) abort();
    for (int s = mm->first_state; s < mm->first_state + mm->nstates; s++) {
      const anim_sm_state_t *st = &sm->states[s];
      if (st->machine != m || st->first_transition < 0 || st->first_transition + st->ntransitions > sm->ntransitions)
        abort();
      for (int i = 0; i < st->ntransitions; i++) {
        const anim_sm_transition_t *t = &sm->transitions[st->first_transition + i];
        if (t->target < 0 || t->target >= sm->nstates || sm->states[t->target].machine != m) abort();
        if (t->event < 0 || t->event >= sm->nevents || !(t->halflife > 0.0f) || !(t->exit_time >= 0.0f)) abort();
      }
      if (st->kind == ANIM_SM_MOTION_MACHINE && (st->nested < 1 || st->nested >= sm->nmachines)) abort();
      if ((st->kind == ANIM_SM_MOTION_CLIP || st->kind == ANIM_SM_MOTION_BLEND) &&
          (st->clip < 0 || st->nclips < 1 || st->clip + st->nclips > sm->nclips))
        abort();
      if (st->kind == ANIM_SM_MOTION_BLEND && (st->param < 0 || st->param >= sm->nparams)) abort();
      if (st->kind == ANIM_SM_MOTION_NONE) abort();
    }
  }
}

static void run_machine(const anim_state_machine_t *sm, const uint8_t *data, size_t size) {
  anim_machine_character_t c;
  int rc = anim_machine_character_init(&c, sm, &db, NULL, NULL, vec3_zero(), 0.0f);
  if (sm->has_match) {
    if (rc != ANIM_EINVAL) abort();
    return;
  }
  if (rc) abort();
  for (int tick = 0; tick < 40; tick++) {
    uint8_t b = size ? data[(size_t)tick * 7 % size] : 0;
    anim_machine_character_send(&c, b % sm->nevents);
    if (sm->nparams) anim_machine_character_set_param(&c, b % sm->nparams, (float)(b % 9) * 0.25f - 0.5f);
    uint64_t before = c.transitions;
    float dt = (float)(1 + b % 5) / 60.0f;
    if (anim_machine_character_tick(&c, dt) != 0) abort();
    if (c.transitions - before > (uint64_t)sm->max_transitions) abort();
    int states[ANIM_SM_MAX_DEPTH];
    int depth = anim_machine_character_path(&c, states, NULL, ANIM_SM_MAX_DEPTH);
    if (depth < 1 || depth > sm->depth || sm->states[states[0]].machine != 0) abort();
    for (int l = 1; l < depth; l++)
      if (sm->states[states[l - 1]].kind != ANIM_SM_MOTION_MACHINE ||
          sm->states[states[l]].machine != sm->states[states[l - 1]].nested)
        abort();
  }
  anim_machine_character_free(&c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!have_db) {
    char err[256];
    if (anim_procgen_database(&db, NULL, err, sizeof err)) abort();
    have_db = 1;
  }
  /* An exact-size copy, so reading one byte past len is caught by ASan. */
  char *text = malloc(size ? size : 1);
  if (!text) return 0;
  memcpy(text, data, size);
  anim_sm_diagnostics_t d;
  char err[256];
  anim_state_machine_t *sm = anim_state_machine_parse(text, size, "fuzz.sm", &d, err, sizeof err);
  if (d.count > d.total || d.count > ANIM_SM_MAX_DIAGNOSTICS || (!sm && d.total == 0) || (sm && d.total)) abort();
  for (int i = 0; i < d.count; i++)
    if (!memchr(d.items[i].message, 0, sizeof d.items[i].message) || d.items[i].line < 1 || d.items[i].column < 1)
      abort();
  if (sm) {
    check_machine(sm);
    if (anim_state_machine_bind(sm, &db, &d, err, sizeof err) == 0) run_machine(sm, data, size);
    anim_state_machine_free(sm);
  }
  free(text);
  return 0;
}
