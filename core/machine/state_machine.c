/*
 * state_machine.c: the text format of action state machines, its checks and
 * the checks on the whole file (see state_machine.h for the grammar).
 *
 * One pass of a hand-written tokenizer and recursive-descent parser that
 * stops at the first syntax error (later errors would mostly be echoes of
 * it), then the checks on the whole file, which report every problem they
 * find. Names are resolved after the parse, so states, machines and
 * parameters may be used before they are defined.
 *
 * What it does not: bind a machine to a database (state_machine_bind.c) or
 * run one (machine_character.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anim_error.h"
#include "machine/sm_check.h"
#include "machine/sm_report.h"
#include "machine/state_machine.h"
#include "base/utf8.h"

#define MAX_TEXT (1u << 20)
#define DEFAULT_HALFLIFE 0.1f
#define DEFAULT_MAX_TRANSITIONS 4


/* ---- tokens ------------------------------------------------------------------------ */

typedef enum { TOK_EOF, TOK_WORD, TOK_STRING, TOK_PUNCT } tok_kind_t;

typedef struct {
  tok_kind_t kind;
  const char *start;
  size_t len;
  anim_sm_location_t at;
  int is_number;
  double number;
} token_t;

static int is_word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
         c == '+' || c == '-';
}

/* ---- parser state ---------------------------------------------------------------- */

typedef struct {
  const char *text;
  size_t len, pos;
  int line, column;
  token_t tok;
  int failed;                 /* a syntax error stopped the parse */
  int oom;
  anim__sm_report_t *r;
  anim_state_machine_t *sm;
  /* Names resolved after the parse, index-aligned with their owners. */
  char (*target_names)[ANIM_NAME_MAX]; /* per transition */
  anim_sm_location_t *target_at;
  char (*nested_names)[ANIM_NAME_MAX]; /* per state (MACHINE) */
  char (*param_names)[ANIM_NAME_MAX];  /* per state (BLEND) */
  /* Per state: where its motion's name is (a nested machine's, a blend's
   * parameter; the motion's keyword until then), which the diagnostics
   * about that name point at. */
  anim_sm_location_t *name_at;
  int cap_states, cap_transitions, cap_clips, cap_machines, cap_events;
  int halflife_set, max_set;
} parser_t;

static void syntax(parser_t *p, anim_sm_location_t at, const char *fmt, const char *word, size_t wlen) {
  if (p->failed) return;
  /* The text is bytes; the message goes out as a protobuf string, which
   * must be UTF-8: what is not printable text is written \xNN. */
  char quoted[4 * 40 + 4];
  anim_utf8_quote(quoted, sizeof quoted, word ? word : "", word ? wlen : 0, 40);
  anim__sm_report(p->r, ANIM_SM_SYNTAX, at, fmt, quoted);
  p->failed = 1;
}

static void advance_char(parser_t *p) {
  if (p->text[p->pos] == '\n') p->line++, p->column = 1;
  else p->column++;
  p->pos++;
}

/* Reads the next token into p->tok (EOF once the text is used up or the
 * parse has failed). */
static void next(parser_t *p) {
  token_t *t = &p->tok;
  memset(t, 0, sizeof *t);
  for (;;) {
    while (p->pos < p->len && (p->text[p->pos] == ' ' || p->text[p->pos] == '\t' || p->text[p->pos] == '\r' ||
                               p->text[p->pos] == '\n'))
      advance_char(p);
    if (p->pos < p->len && p->text[p->pos] == '#') {
      while (p->pos < p->len && p->text[p->pos] != '\n') advance_char(p);
      continue;
    }
    break;
  }
  t->at.line = p->line, t->at.column = p->column;
  if (p->failed || p->pos >= p->len) {
    t->kind = TOK_EOF;
    return;
  }
  char c = p->text[p->pos];
  t->start = p->text + p->pos;
  if (c == '{' || c == '}' || c == '(' || c == ')' || c == '[' || c == ']') {
    t->kind = TOK_PUNCT, t->len = 1;
    advance_char(p);
    return;
  }
  if (c == '"') {
    advance_char(p);
    size_t begin = p->pos;
    while (p->pos < p->len && p->text[p->pos] != '"' && p->text[p->pos] != '\n') advance_char(p);
    if (p->pos >= p->len || p->text[p->pos] != '"') {
      syntax(p, t->at, "unterminated quoted name %s", t->start, p->pos - begin + 1);
      t->kind = TOK_EOF;
      return;
    }
    t->kind = TOK_STRING, t->start = p->text + begin, t->len = p->pos - begin;
    /* A name leaves in protobuf strings (summaries, stream frames): UTF-8
     * text only, no control characters (a NUL would cut it short). */
    for (size_t i = 0; i < t->len;) {
      const unsigned char *u = (const unsigned char *)t->start + i;
      size_t len = anim_utf8_sequence(u, t->len - i);
      if (len == 0 || (len == 1 && (*u < 0x20 || *u == 0x7f))) {
        syntax(p, t->at, "quoted name \"%s\" is not UTF-8 text", t->start, t->len);
        t->kind = TOK_EOF;
        return;
      }
      i += len;
    }
    advance_char(p);
    return;
  }
  if (!is_word_char(c)) {
    size_t len = anim_utf8_sequence((const unsigned char *)t->start, p->len - p->pos);
    syntax(p, t->at, "unexpected character '%s'", t->start, len ? len : 1);
    t->kind = TOK_EOF;
    return;
  }
  while (p->pos < p->len && is_word_char(p->text[p->pos])) advance_char(p);
  t->kind = TOK_WORD, t->len = (size_t)(p->text + p->pos - t->start);
  char buf[64];
  if (t->len < sizeof buf) {
    memcpy(buf, t->start, t->len);
    buf[t->len] = '\0';
    char *end;
    double v = strtod(buf, &end);
    if (end == buf + t->len && isfinite(v)) t->is_number = 1, t->number = v;
  }
}

static int is_punct(const parser_t *p, char c) { return p->tok.kind == TOK_PUNCT && p->tok.start[0] == c; }
static int is_keyword(const parser_t *p, const char *kw) {
  return p->tok.kind == TOK_WORD && p->tok.len == strlen(kw) && memcmp(p->tok.start, kw, p->tok.len) == 0;
}
static int is_name(const parser_t *p) { return p->tok.kind == TOK_WORD || p->tok.kind == TOK_STRING; }

static const char *const keywords[] = {"clip", "tag", "match", "blend", "machine", "loop", "halflife", "exit",
                                       "param", "max_transitions"};
static int at_keyword(const parser_t *p) {
  for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++)
    if (is_keyword(p, keywords[i])) return 1;
  return 0;
}

static void expect_punct(parser_t *p, char c) {
  if (is_punct(p, c)) {
    next(p);
    return;
  }
  char what[40];
  snprintf(what, sizeof what, "expected '%c' but found '%%s'", c);
  syntax(p, p->tok.at, what, p->tok.start, p->tok.kind == TOK_EOF ? 0 : p->tok.len);
}

/* Takes a name into out (ANIM_NAME_MAX); 0 after a syntax error. */
static int take_name(parser_t *p, char *out, anim_sm_location_t *out_at, const char *what) {
  if (p->failed) return 0;
  if (!is_name(p)) {
    char fmt[64];
    snprintf(fmt, sizeof fmt, "expected %s but found '%%s'", what);
    syntax(p, p->tok.at, fmt, p->tok.start, p->tok.kind == TOK_EOF ? 0 : p->tok.len);
    return 0;
  }
  if (p->tok.len == 0 || p->tok.len >= ANIM_NAME_MAX) {
    syntax(p, p->tok.at, p->tok.len ? "name too long: %s" : "empty name%s", p->tok.start, p->tok.len);
    return 0;
  }
  memcpy(out, p->tok.start, p->tok.len);
  out[p->tok.len] = '\0';
  if (out_at) *out_at = p->tok.at;
  next(p);
  return 1;
}

static int take_number(parser_t *p, double *out, const char *what) {
  if (p->failed) return 0;
  if (p->tok.kind != TOK_WORD || !p->tok.is_number) {
    char fmt[64];
    snprintf(fmt, sizeof fmt, "expected %s but found '%%s'", what);
    syntax(p, p->tok.at, fmt, p->tok.start, p->tok.kind == TOK_EOF ? 0 : p->tok.len);
    return 0;
  }
  *out = p->tok.number;
  next(p);
  return 1;
}

/* ---- growing arrays -------------------------------------------------------------- */

static int grow(void **items, int *cap, int need, size_t size) {
  if (need <= *cap) return 0;
  int n = *cap ? *cap * 2 : 16;
  while (n < need) n *= 2;
  void *q = realloc(*items, (size_t)n * size);
  if (!q) return ANIM_ENOMEM;
  memset((char *)q + (size_t)*cap * size, 0, (size_t)(n - *cap) * size);
  *items = q, *cap = n;
  return 0;
}

static int add_machine(parser_t *p, const char *name, anim_sm_location_t at) {
  anim_state_machine_t *sm = p->sm;
  if (sm->nmachines >= ANIM_SM_MAX_MACHINES) {
    anim__sm_report(p->r, ANIM_SM_LIMIT, at, "more than %d machines", ANIM_SM_MAX_MACHINES);
    p->failed = 1;
    return -1;
  }
  if (grow((void **)&sm->machines, &p->cap_machines, sm->nmachines + 1, sizeof *sm->machines)) return p->oom = 1, -1;
  anim_sm_machine_t *m = &sm->machines[sm->nmachines];
  snprintf(m->name, sizeof m->name, "%s", name);
  m->where = at;
  return sm->nmachines++;
}

static int add_event(parser_t *p, const char *name, anim_sm_location_t at) {
  anim_state_machine_t *sm = p->sm;
  int found = anim_state_machine_find_event(sm, name);
  if (found >= 0) return found;
  if (sm->nevents >= ANIM_SM_MAX_EVENTS) {
    anim__sm_report(p->r, ANIM_SM_LIMIT, at, "more than %d events", ANIM_SM_MAX_EVENTS);
    p->failed = 1;
    return -1;
  }
  if (grow((void **)&sm->events, &p->cap_events, sm->nevents + 1, sizeof *sm->events)) return p->oom = 1, -1;
  snprintf(sm->events[sm->nevents], ANIM_NAME_MAX, "%s", name);
  return sm->nevents++;
}

/* ---- grammar ----------------------------------------------------------------------- */

/* clip = NAME [ "[" NUMBER NUMBER "]" ]; returns its index or -1. */
static int parse_clip(parser_t *p, float value) {
  anim_state_machine_t *sm = p->sm;
  if (grow((void **)&sm->clips, &p->cap_clips, sm->nclips + 1, sizeof *sm->clips)) return p->oom = 1, -1;
  anim_sm_clip_t *c = &sm->clips[sm->nclips];
  memset(c, 0, sizeof *c);
  c->from = 0.0f, c->to = -1.0f, c->value = value;
  if (!take_name(p, c->range_name, &c->where, "a range name")) return -1;
  if (is_punct(p, '[')) {
    anim_sm_location_t at = p->tok.at;
    double from = 0, to = 0;
    next(p);
    if (!take_number(p, &from, "the span's start (s)") || !take_number(p, &to, "the span's end (s)")) return -1;
    expect_punct(p, ']');
    if (p->failed) return -1;
    if (!(from >= 0.0) || !(to > from) || to > 1e6) {
      anim__sm_report(p->r, ANIM_SM_SPAN, at, "span [%g %g] must have 0 <= from < to", from, to);
    }
    c->from = (float)from, c->to = (float)to;
  }
  return sm->nclips++;
}

static void set_motion(parser_t *p, anim_sm_state_t *s, anim_sm_motion_kind_t kind, anim_sm_location_t at) {
  if (s->kind != ANIM_SM_MOTION_NONE)
    anim__sm_report(p->r, ANIM_SM_DUPLICATE, at, "state '%s' has a second motion", s->name);
  s->kind = kind;
  p->name_at[s - p->sm->states] = at;
}

static void parse_motion(parser_t *p, anim_sm_state_t *s) {
  anim_state_machine_t *sm = p->sm;
  int si = (int)(s - sm->states);
  anim_sm_location_t at = p->tok.at;
  if (is_keyword(p, "clip")) {
    next(p);
    set_motion(p, s, ANIM_SM_MOTION_CLIP, at);
    int c = parse_clip(p, 0.0f);
    s = &sm->states[si]; /* clips do not move states, but keep the pattern */
    if (c >= 0) s->clip = c, s->nclips = 1;
    if (is_keyword(p, "loop")) s->loop = 1, next(p);
  } else if (is_keyword(p, "tag")) {
    next(p);
    set_motion(p, s, ANIM_SM_MOTION_TAG, at);
    if (take_name(p, s->tags[0], &s->tag_where[0], "a tag")) s->ntags = 1;
    if (is_keyword(p, "loop")) s->loop = 1, next(p);
  } else if (is_keyword(p, "match")) {
    next(p);
    set_motion(p, s, ANIM_SM_MOTION_MATCH, at);
    expect_punct(p, '(');
    s->ntags = 0;
    while (!p->failed && !is_punct(p, ')')) {
      if (s->ntags == ANIM_SM_MAX_TAGS) {
        anim__sm_report(p->r, ANIM_SM_LIMIT, p->tok.at, "more than %d tags", ANIM_SM_MAX_TAGS);
        p->failed = 1;
        return;
      }
      if (!take_name(p, s->tags[s->ntags], &s->tag_where[s->ntags], "a tag or ')'")) return;
      s->ntags++;
    }
    if (!p->failed && s->ntags == 0) syntax(p, p->tok.at, "match needs at least one tag before '%s'", ")", 1);
    expect_punct(p, ')');
  } else if (is_keyword(p, "blend")) {
    next(p);
    set_motion(p, s, ANIM_SM_MOTION_BLEND, at);
    if (!take_name(p, p->param_names[si], &p->name_at[si], "a parameter name")) return;
    expect_punct(p, '(');
    int first = -1, n = 0;
    float last = 0.0f;
    while (!p->failed && !is_punct(p, ')')) {
      anim_sm_location_t entry_at = p->tok.at;
      double value;
      if (!take_number(p, &value, "a parameter value or ')'")) return;
      if (n == ANIM_SM_MAX_BLEND) {
        anim__sm_report(p->r, ANIM_SM_LIMIT, entry_at, "more than %d blend entries", ANIM_SM_MAX_BLEND);
        p->failed = 1;
        return;
      }
      if (n > 0 && !((float)value > last))
        anim__sm_report(p->r, ANIM_SM_BLEND_ORDER, entry_at, "blend value %g does not follow %g", value, last);
      int c = parse_clip(p, (float)value);
      if (c < 0) return;
      if (first < 0) first = c;
      last = (float)value, n++;
    }
    if (!p->failed && n == 0) syntax(p, p->tok.at, "blend needs at least one entry before '%s'", ")", 1);
    expect_punct(p, ')');
    s = &sm->states[si];
    s->clip = first, s->nclips = n;
  } else { /* "machine" */
    next(p);
    set_motion(p, s, ANIM_SM_MOTION_MACHINE, at);
    take_name(p, p->nested_names[si], &p->name_at[si], "a machine name");
  }
}

static void parse_transition(parser_t *p, int si) {
  anim_state_machine_t *sm = p->sm;
  char event[ANIM_NAME_MAX];
  anim_sm_location_t at;
  if (!take_name(p, event, &at, "an event")) return;
  int e = add_event(p, event, at);
  if (e < 0) return;
  if (sm->ntransitions >= ANIM_SM_MAX_TRANSITIONS) {
    anim__sm_report(p->r, ANIM_SM_LIMIT, at, "more than %d transitions", ANIM_SM_MAX_TRANSITIONS);
    p->failed = 1;
    return;
  }
  int cap = p->cap_transitions;
  if (grow((void **)&sm->transitions, &cap, sm->ntransitions + 1, sizeof *sm->transitions)) return (void)(p->oom = 1);
  cap = p->cap_transitions;
  if (grow((void **)&p->target_names, &cap, sm->ntransitions + 1, sizeof *p->target_names)) return (void)(p->oom = 1);
  cap = p->cap_transitions;
  if (grow((void **)&p->target_at, &cap, sm->ntransitions + 1, sizeof *p->target_at)) return (void)(p->oom = 1);
  p->cap_transitions = cap;
  int ti = sm->ntransitions;
  anim_sm_transition_t *t = &sm->transitions[ti];
  t->event = e, t->target = -1, t->halflife = -1.0f, t->exit_time = 0.0f, t->where = at;
  if (!take_name(p, p->target_names[ti], &p->target_at[ti], "a target state")) return;
  sm->ntransitions++;
  sm->states[si].ntransitions++;
  for (;;) {
    int is_halflife = is_keyword(p, "halflife");
    if (!is_halflife && !is_keyword(p, "exit")) break;
    anim_sm_location_t kat = p->tok.at;
    double v;
    next(p);
    if (!take_number(p, &v, is_halflife ? "a half-life (s)" : "an exit time (s)")) return;
    if (is_halflife ? !(v > 0.0 && v < 1e3) : !(v >= 0.0 && v < 1e6)) {
      anim__sm_report(p->r, ANIM_SM_LIMIT, kat,
                      is_halflife ? "half-life %g must be in (0, 1000) s" : "exit time %g must be >= 0 s", v);
      continue;
    }
    if (is_halflife) sm->transitions[ti].halflife = (float)v;
    else sm->transitions[ti].exit_time = (float)v;
  }
}

static void parse_state(parser_t *p, int machine) {
  anim_state_machine_t *sm = p->sm;
  if (sm->nstates >= ANIM_SM_MAX_STATES) {
    anim__sm_report(p->r, ANIM_SM_LIMIT, p->tok.at, "more than %d states", ANIM_SM_MAX_STATES);
    p->failed = 1;
    return;
  }
  int need = sm->nstates + 1, cap = p->cap_states;
  if (grow((void **)&sm->states, &cap, need, sizeof *sm->states)) return (void)(p->oom = 1);
  cap = p->cap_states;
  if (grow((void **)&p->nested_names, &cap, need, sizeof *p->nested_names)) return (void)(p->oom = 1);
  cap = p->cap_states;
  if (grow((void **)&p->param_names, &cap, need, sizeof *p->param_names)) return (void)(p->oom = 1);
  cap = p->cap_states;
  if (grow((void **)&p->name_at, &cap, need, sizeof *p->name_at)) return (void)(p->oom = 1);
  p->cap_states = cap;
  int si = sm->nstates;
  anim_sm_state_t *s = &sm->states[si];
  memset(s, 0, sizeof *s);
  s->machine = machine, s->param = -1, s->nested = -1, s->clip = -1;
  if (!take_name(p, s->name, &s->where, "a state name")) return;
  for (int i = 0; i < si; i++)
    if (sm->states[i].machine == machine && strcmp(sm->states[i].name, s->name) == 0) {
      anim__sm_report(p->r, ANIM_SM_DUPLICATE, s->where, "state '%s' is defined twice (first at line %d)", s->name,
             sm->states[i].where.line);
      break;
    }
  sm->nstates++;
  s->first_transition = sm->ntransitions;
  expect_punct(p, '{');
  while (!p->failed && !p->oom && !is_punct(p, '}')) {
    if (p->tok.kind == TOK_EOF) {
      syntax(p, p->tok.at, "end of text inside state '%s'", sm->states[si].name, strlen(sm->states[si].name));
      return;
    }
    if (is_keyword(p, "clip") || is_keyword(p, "tag") || is_keyword(p, "match") || is_keyword(p, "blend") ||
        is_keyword(p, "machine"))
      parse_motion(p, &sm->states[si]);
    else if (at_keyword(p))
      syntax(p, p->tok.at, "'%s' is a keyword, not an event", p->tok.start, p->tok.len);
    else
      parse_transition(p, si);
  }
  expect_punct(p, '}');
}

static void parse_file(parser_t *p) {
  anim_state_machine_t *sm = p->sm;
  next(p);
  while (!p->failed && !p->oom && p->tok.kind != TOK_EOF) {
    anim_sm_location_t at = p->tok.at;
    if (is_keyword(p, "param")) {
      next(p);
      char name[ANIM_NAME_MAX];
      double v;
      if (!take_name(p, name, &at, "a parameter name") || !take_number(p, &v, "the parameter's initial value")) return;
      if (anim_state_machine_find_param(sm, name) >= 0)
        anim__sm_report(p->r, ANIM_SM_DUPLICATE, at, "parameter '%s' is defined twice", name);
      else if (sm->nparams == ANIM_SM_MAX_PARAMS)
        anim__sm_report(p->r, ANIM_SM_LIMIT, at, "more than %d parameters", ANIM_SM_MAX_PARAMS);
      else
        snprintf(sm->params[sm->nparams].name, ANIM_NAME_MAX, "%s", name), sm->params[sm->nparams++].initial = (float)v;
    } else if (is_keyword(p, "max_transitions") || is_keyword(p, "halflife")) {
      int is_max = is_keyword(p, "max_transitions");
      next(p);
      double v;
      if (!take_number(p, &v, is_max ? "a count" : "a half-life (s)")) return;
      int *seen = is_max ? &p->max_set : &p->halflife_set;
      if ((*seen)++)
        anim__sm_report(p->r, ANIM_SM_DUPLICATE, at, "%s is set twice", is_max ? "max_transitions" : "halflife");
      if (is_max) {
        if (v != floor(v) || v < 1 || v > ANIM_SM_MAX_TRANSITIONS_PER_TICK)
          anim__sm_report(p->r, ANIM_SM_LIMIT, at, "max_transitions %g must be an integer in 1..%d", v,
                 ANIM_SM_MAX_TRANSITIONS_PER_TICK);
        else sm->max_transitions = (int)v;
      } else {
        if (!(v > 0.0 && v < 1e3)) anim__sm_report(p->r, ANIM_SM_LIMIT, at, "half-life %g must be in (0, 1000) s", v);
        else sm->halflife = (float)v;
      }
    } else if (is_keyword(p, "machine")) {
      next(p);
      char name[ANIM_NAME_MAX];
      anim_sm_location_t nat;
      if (!take_name(p, name, &nat, "a machine name")) return;
      for (int m = 1; m < sm->nmachines; m++)
        if (strcmp(sm->machines[m].name, name) == 0) {
          anim__sm_report(p->r, ANIM_SM_DUPLICATE, nat, "machine '%s' is defined twice", name);
          break;
        }
      int m = add_machine(p, name, nat);
      if (m < 0) return;
      expect_punct(p, '{');
      if (is_punct(p, '}')) syntax(p, p->tok.at, "machine '%s' has no state", name, strlen(name));
      while (!p->failed && !p->oom && p->tok.kind != TOK_EOF && !is_punct(p, '}')) parse_state(p, m);
      expect_punct(p, '}');
    } else if (at_keyword(p)) {
      syntax(p, at, "'%s' cannot start a declaration here", p->tok.start, p->tok.len);
    } else if (is_name(p)) {
      parse_state(p, 0);
    } else {
      syntax(p, at, "expected a state, machine, param or setting but found '%s'", p->tok.start, p->tok.len);
    }
  }
}

/* ---- checks ------------------------------------------------------------------------ */

/* States grouped by machine (stable), with the parse-time arrays permuted alike. */
static int group_states(parser_t *p) {
  anim_state_machine_t *sm = p->sm;
  int n = sm->nstates;
  anim_sm_state_t *states = malloc((size_t)(n ? n : 1) * sizeof *states);
  char(*nested)[ANIM_NAME_MAX] = malloc((size_t)(n ? n : 1) * sizeof *nested);
  char(*params)[ANIM_NAME_MAX] = malloc((size_t)(n ? n : 1) * sizeof *params);
  anim_sm_location_t *name_at = malloc((size_t)(n ? n : 1) * sizeof *name_at);
  if (!states || !nested || !params || !name_at) {
    free(states), free(nested), free(params), free(name_at);
    return ANIM_ENOMEM;
  }
  int k = 0;
  for (int m = 0; m < sm->nmachines; m++) {
    sm->machines[m].first_state = k;
    for (int i = 0; i < n; i++)
      if (sm->states[i].machine == m) {
        states[k] = sm->states[i];
        memcpy(nested[k], p->nested_names[i], ANIM_NAME_MAX);
        memcpy(params[k], p->param_names[i], ANIM_NAME_MAX);
        name_at[k] = p->name_at[i];
        k++;
      }
    sm->machines[m].nstates = k - sm->machines[m].first_state;
  }
  free(sm->states), free(p->nested_names), free(p->param_names), free(p->name_at);
  sm->states = states, p->nested_names = nested, p->param_names = params, p->name_at = name_at;
  p->cap_states = n;
  return 0;
}

static void resolve_names(parser_t *p) {
  anim_state_machine_t *sm = p->sm;
  for (int s = 0; s < sm->nstates; s++) {
    anim_sm_state_t *st = &sm->states[s];
    for (int i = 0; i < st->ntransitions; i++) {
      int ti = st->first_transition + i;
      anim_sm_transition_t *t = &sm->transitions[ti];
      t->target = anim_state_machine_find_state(sm, st->machine, p->target_names[ti]);
      if (t->target < 0)
        anim__sm_report(p->r, ANIM_SM_UNKNOWN_TARGET, p->target_at[ti], "state '%s' has no target '%s' in its machine",
                        st->name, p->target_names[ti]);
      if (t->halflife < 0.0f) t->halflife = sm->halflife;
    }
    if (st->kind == ANIM_SM_MOTION_NONE) {
      /* The seed's states are clips: a state without a motion plays the
       * range of its own name. */
      anim_state_machine_t *m = p->sm;
      if (grow((void **)&m->clips, &p->cap_clips, m->nclips + 1, sizeof *m->clips)) return (void)(p->oom = 1);
      anim_sm_clip_t *c = &m->clips[m->nclips];
      memset(c, 0, sizeof *c);
      snprintf(c->range_name, sizeof c->range_name, "%s", st->name);
      c->to = -1.0f, c->where = st->where;
      st->kind = ANIM_SM_MOTION_CLIP, st->clip = m->nclips++, st->nclips = 1;
    }
    if (st->kind == ANIM_SM_MOTION_MACHINE) {
      st->nested = -1;
      for (int m = 1; m < sm->nmachines; m++)
        if (strcmp(sm->machines[m].name, p->nested_names[s]) == 0) st->nested = m;
      if (st->nested < 0)
        anim__sm_report(p->r, ANIM_SM_UNKNOWN_MACHINE, p->name_at[s], "state '%s' runs unknown machine '%s'",
                        st->name, p->nested_names[s]);
    }
    if (st->kind == ANIM_SM_MOTION_BLEND) {
      st->param = anim_state_machine_find_param(sm, p->param_names[s]);
      if (st->param < 0)
        anim__sm_report(p->r, ANIM_SM_UNKNOWN_PARAM, p->name_at[s], "state '%s' blends by undeclared parameter '%s'",
                        st->name, p->param_names[s]);
    }
    if (st->kind == ANIM_SM_MOTION_MATCH) {
      for (int i = 0; i < st->ntransitions; i++)
        if (sm->transitions[st->first_transition + i].event == ANIM_SM_EVENT_END)
          anim__sm_report(p->r, ANIM_SM_NEVER_ENDS, sm->transitions[st->first_transition + i].where,
                 "END never fires in match state '%s'", st->name);
      sm->has_match = 1;
    }
  }
}

/* Depth of machine m (machines active at once from it down), or -1 when
 * it nests itself (each back edge reported once). colour: 0 new, 1 on the
 * current path, 2 done (depth memoized). Recursion is bounded by the number
 * of machines. */
static int machine_depth(parser_t *p, int m, int *colour, int *depth) {
  anim_state_machine_t *sm = p->sm;
  if (colour[m] == 2) return depth[m];
  colour[m] = 1;
  int best = 1;
  const anim_sm_machine_t *mm = &sm->machines[m];
  for (int s = mm->first_state; s < mm->first_state + mm->nstates; s++) {
    const anim_sm_state_t *st = &sm->states[s];
    if (st->kind != ANIM_SM_MOTION_MACHINE || st->nested < 0) continue;
    int d;
    if (colour[st->nested] == 1) {
      anim__sm_report(p->r, ANIM_SM_RECURSIVE, p->name_at[s], "state '%s' nests machine '%s' inside itself", st->name,
             sm->machines[st->nested].name);
      d = -1;
    } else {
      d = machine_depth(p, st->nested, colour, depth);
    }
    if (d < 0) best = -1;
    else if (best > 0 && d + 1 > best) best = d + 1;
  }
  colour[m] = 2, depth[m] = best;
  return best;
}

static void check_nesting(parser_t *p) {
  anim_state_machine_t *sm = p->sm;
  int *colour = calloc((size_t)sm->nmachines, sizeof *colour), *depth = calloc((size_t)sm->nmachines, sizeof *depth);
  int *used = calloc((size_t)sm->nmachines, sizeof *used);
  if (!colour || !depth || !used) {
    p->oom = 1;
    free(colour), free(depth), free(used);
    return;
  }
  int d = machine_depth(p, 0, colour, depth);
  for (int m = 1; m < sm->nmachines; m++)
    if (!colour[m]) machine_depth(p, m, colour, depth);
  sm->depth = d > 0 ? d : 1;
  if (d > ANIM_SM_MAX_DEPTH)
    anim__sm_report(p->r, ANIM_SM_LIMIT, sm->machines[0].where, "machines nest %d deep, more than %d", d,
                    ANIM_SM_MAX_DEPTH);
  for (int s = 0; s < sm->nstates; s++)
    if (sm->states[s].kind == ANIM_SM_MOTION_MACHINE && sm->states[s].nested >= 0) used[sm->states[s].nested] = 1;
  for (int m = 1; m < sm->nmachines; m++)
    if (!used[m])
      anim__sm_report(p->r, ANIM_SM_UNUSED_MACHINE, sm->machines[m].where, "machine '%s' is never used",
                      sm->machines[m].name);
  free(colour), free(depth), free(used);
}

/* ---- public ---------------------------------------------------------------------- */

void anim_state_machine_free(anim_state_machine_t *sm) {
  if (!sm) return;
  free(sm->machines), free(sm->states), free(sm->transitions), free(sm->clips), free(sm->events);
  free(sm);
}

anim_state_machine_t *anim_state_machine_parse(const char *text, size_t len, const char *filename,
                                               anim_sm_diagnostics_t *out_diagnostics, char *err, int errlen) {
  anim__sm_report_t r = {out_diagnostics, filename ? filename : "<text>", err, errlen, 0};
  if (out_diagnostics) memset(out_diagnostics, 0, sizeof *out_diagnostics);
  if (err && errlen > 0) err[0] = '\0';
  anim_sm_location_t start = {1, 1};
  if (!text && len) {
    anim__sm_report(&r, ANIM_SM_SYNTAX, start, "no text");
    return NULL;
  }
  if (len > MAX_TEXT) {
    anim__sm_report(&r, ANIM_SM_LIMIT, start, "text of %zu bytes is longer than %u", len, MAX_TEXT);
    return NULL;
  }
  anim_state_machine_t *sm = calloc(1, sizeof *sm);
  parser_t p;
  memset(&p, 0, sizeof p);
  p.text = text, p.len = len, p.line = 1, p.column = 1, p.r = &r, p.sm = sm;
  if (!sm) goto oom;
  snprintf(sm->filename, sizeof sm->filename, "%s", r.file);
  sm->max_transitions = DEFAULT_MAX_TRANSITIONS, sm->halflife = DEFAULT_HALFLIFE;
  if (add_event(&p, "END", start) < 0 || add_event(&p, "AUTO", start) < 0 || add_machine(&p, "", start) < 0) goto oom;
  parse_file(&p);
  if (p.oom) goto oom;
  if (!p.failed) {
    int root_states = 0;
    for (int s = 0; s < sm->nstates; s++) root_states += sm->states[s].machine == 0;
    if (root_states == 0) anim__sm_report(&r, ANIM_SM_SYNTAX, start, "no state at the top level");
    if (group_states(&p)) goto oom;
    resolve_names(&p);
    check_nesting(&p);
    if (anim__sm_check_paths(sm, &r)) p.oom = 1;
    if (p.oom) goto oom;
  }
  free(p.target_names), free(p.target_at), free(p.nested_names), free(p.param_names), free(p.name_at);
  if (r.total) {
    anim_state_machine_free(sm);
    return NULL;
  }
  return sm;
oom:
  free(p.target_names), free(p.target_at), free(p.nested_names), free(p.param_names), free(p.name_at);
  anim_state_machine_free(sm);
  if (err && errlen > 0) snprintf(err, (size_t)errlen, "out of memory");
  if (out_diagnostics) out_diagnostics->total++;
  return NULL;
}
