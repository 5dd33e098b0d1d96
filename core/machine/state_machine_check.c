/* state_machine_check.c: the checks of a parsed machine that follow its
 * transitions (sm_check.h). */
#include <stdio.h>
#include <stdlib.h>
#include "machine/sm_check.h"

static int has_end_transition(const anim_state_machine_t *sm, const anim_sm_state_t *st) {
  for (int i = 0; i < st->ntransitions; i++)
    if (sm->transitions[st->first_transition + i].event == ANIM_SM_EVENT_END) return 1;
  return 0;
}

/* Whether an END can come up out of machine m: a state's motion stops (a
 * clip or tag without loop) and the state has no END of its own, or a
 * nested machine's END comes up so. Cycles and blends keep theirs (the END
 * of a cycle goes only to its own state), match never ends. memo: 0 not
 * seen, 1 being looked at (a machine nested in itself, reported already),
 * 2 no, 3 yes. */
static int end_rises(const anim_state_machine_t *sm, int m, int *memo) {
  if (memo[m]) return memo[m] == 3;
  memo[m] = 1;
  int rises = 0;
  const anim_sm_machine_t *mm = &sm->machines[m];
  for (int s = mm->first_state; s < mm->first_state + mm->nstates && !rises; s++) {
    const anim_sm_state_t *st = &sm->states[s];
    if (has_end_transition(sm, st)) continue;
    if (st->kind == ANIM_SM_MOTION_CLIP || st->kind == ANIM_SM_MOTION_TAG) rises = !st->loop;
    else if (st->kind == ANIM_SM_MOTION_MACHINE && st->nested >= 0) rises = end_rises(sm, st->nested, memo);
  }
  memo[m] = rises ? 3 : 2;
  return rises;
}

/* END on a state running a machine from which no END can come up. */
static int check_nested_ends(const anim_state_machine_t *sm, anim__sm_report_t *r) {
  int *memo = calloc((size_t)sm->nmachines, sizeof *memo);
  if (!memo) return -1;
  for (int s = 0; s < sm->nstates; s++) {
    const anim_sm_state_t *st = &sm->states[s];
    if (st->kind != ANIM_SM_MOTION_MACHINE || st->nested < 0 || end_rises(sm, st->nested, memo)) continue;
    for (int i = 0; i < st->ntransitions; i++)
      if (sm->transitions[st->first_transition + i].event == ANIM_SM_EVENT_END)
        anim__sm_report(r, ANIM_SM_NEVER_ENDS, sm->transitions[st->first_transition + i].where,
                        "END never fires in state '%s': every motion of machine '%s' loops or takes its own END",
                        st->name, sm->machines[st->nested].name);
  }
  free(memo);
  return 0;
}

/* States not reachable from their machine's initial state. */
static int check_reachable(const anim_state_machine_t *sm, anim__sm_report_t *r) {
  int *seen = calloc((size_t)sm->nstates + 1, sizeof *seen), *queue = malloc(((size_t)sm->nstates + 1) * sizeof *queue);
  if (!seen || !queue) {
    free(seen), free(queue);
    return -1;
  }
  for (int m = 0; m < sm->nmachines; m++) {
    const anim_sm_machine_t *mm = &sm->machines[m];
    if (mm->nstates == 0) continue;
    int head = 0, tail = 0;
    queue[tail++] = mm->first_state, seen[mm->first_state] = 1;
    while (head < tail) {
      const anim_sm_state_t *st = &sm->states[queue[head++]];
      for (int i = 0; i < st->ntransitions; i++) {
        int t = sm->transitions[st->first_transition + i].target;
        if (t >= 0 && !seen[t]) seen[t] = 1, queue[tail++] = t;
      }
    }
    for (int s = mm->first_state; s < mm->first_state + mm->nstates; s++)
      if (!seen[s])
        anim__sm_report(r, ANIM_SM_UNREACHABLE, sm->states[s].where, "state '%s' cannot be reached from '%s'",
               sm->states[s].name, sm->states[mm->first_state].name);
  }
  free(seen), free(queue);
  return 0;
}

static int is_immediate(const anim_sm_transition_t *t) {
  return t->event == ANIM_SM_EVENT_AUTO && t->exit_time == 0.0f && t->target >= 0;
}

/* Cycles among immediate transitions, by an iterative depth-first search
 * (colour 1 = on the current path); each back edge is one cycle, reported
 * with the states on it. */
static int check_immediate_cycles(const anim_state_machine_t *sm, anim__sm_report_t *r) {
  int n = sm->nstates;
  int *colour = calloc((size_t)n + 1, sizeof *colour), *stack = malloc(((size_t)n + 1) * sizeof *stack);
  int *edge = malloc(((size_t)n + 1) * sizeof *edge);
  if (!colour || !stack || !edge) {
    free(colour), free(stack), free(edge);
    return -1;
  }
  for (int root = 0; root < n; root++) {
    if (colour[root]) continue;
    int top = 0;
    stack[0] = root, edge[0] = 0, colour[root] = 1;
    while (top >= 0) {
      const anim_sm_state_t *st = &sm->states[stack[top]];
      if (edge[top] >= st->ntransitions) {
        colour[stack[top--]] = 2;
        continue;
      }
      const anim_sm_transition_t *t = &sm->transitions[st->first_transition + edge[top]++];
      if (!is_immediate(t)) continue;
      if (colour[t->target] == 0) {
        colour[t->target] = 1;
        stack[++top] = t->target, edge[top] = 0;
      } else if (colour[t->target] == 1) {
        char path[160] = "";
        size_t used = 0;
        int from = top;
        while (from > 0 && stack[from] != t->target) from--;
        for (int i = from; i <= top && used < sizeof path; i++)
          used += (size_t)snprintf(path + used, sizeof path - used, "%s -> ", sm->states[stack[i]].name);
        if (used < sizeof path) snprintf(path + used, sizeof path - used, "%s", sm->states[t->target].name);
        anim__sm_report(r, ANIM_SM_IMMEDIATE_CYCLE, t->where, "AUTO transitions with no exit time loop forever: %s",
                        path);
      }
    }
  }
  free(colour), free(stack), free(edge);
  return 0;
}

int anim__sm_check_paths(const anim_state_machine_t *sm, anim__sm_report_t *r) {
  if (check_nested_ends(sm, r) || check_reachable(sm, r) || check_immediate_cycles(sm, r)) return -1;
  return 0;
}
