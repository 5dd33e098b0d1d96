/*
 * animctl_history.c: the debugger's subcommands of animctl.
 *
 *   animctl history --id ID [--last S | --ticks A:B] [--all] [--tick T|last]
 *   animctl history --create [--database DB] [--input SPEC] [--seconds S] [--keep S] [--candidates N]
 *                   [--last S | --ticks A:B] [--all] [--tick T|last]
 *   animctl set-params [--database DB] [--input SPEC] [--seconds S] NAME=VALUE...
 *
 * history prints a span of a character's history (character_history) as a
 * table: a row per searched tick (every tick with --all): tick, frame
 * shown, why it searched, the frame chosen, whether it transitioned, and
 * the best candidates with their costs; --tick T prints that tick's whole
 * candidate list with each candidate's cost by feature group (--tick last:
 * the span's newest searched tick). --id reads
 * any character's history (its owner turned it on); --create makes a
 * character here (characters belong to their connection), turns its
 * history on (--keep S seconds, default 5; --candidates N per search,
 * default 8), steers it by SPEC (stick:X,Z or velocity:VX,VZ; default
 * stick:0,0.7, a walk) for --seconds S (default 3), then prints.
 *
 * set-params makes a character (as history --create), runs it --seconds S
 * (default 2) with the defaults, changes the named parameters
 * (set_character_params: ControllerParams' names, e.g.
 * transition_cost=0.05 inertialize_halflife=0.2), runs it S more, and
 * prints each parameter before and after, and searches and transitions a
 * second in each half: how a parameter changes what the character does.
 * --json: one object instead of the table, for either.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "anim_error.h"
#include "animctl.h"

typedef struct {
  const char *database;
  anim_character_input_t input;
  float seconds, keep, last;
  int candidates, all, create;
  uint64_t id, from, to, tick;
  int has_ticks, has_tick;
} history_options_t;

int animctl_parse_input(const char *spec, anim_character_input_t *out) {
  float a, b;
  char tail;
  if (sscanf(spec, "stick:%f,%f%c", &a, &b, &tail) == 2 && isfinite(a) && isfinite(b)) {
    anim_character_input_stick(out, a, b, 0.0f, 0);
    return 0;
  }
  if (sscanf(spec, "velocity:%f,%f%c", &a, &b, &tail) == 2 && isfinite(a) && isfinite(b)) {
    anim_character_input_velocity(out, a, b, atan2f(a, b));
    return 0;
  }
  return -1;
}

static int parse_number(const char *flag, const char *text, float min, float *out) {
  char *end;
  float v = strtof(text, &end);
  if (*text == '\0' || *end || !isfinite(v) || v < min) return animctl_fail("%s %s: not a number >= %g", flag, text, min);
  *out = v;
  return 0;
}

static void sleep_seconds(float seconds) {
  struct timespec t = {(time_t)seconds, (long)((seconds - floorf(seconds)) * 1e9f)};
  nanosleep(&t, NULL);
}

/* A character of this connection's, steered by o->input: 0 or 1 (reported). */
static int make_character(anim_client_t *client, const history_options_t *o, int timeout_ms, uint64_t *out_id) {
  int rc = anim_client_characters_create(client, o->database, NULL, NULL, 1, out_id, timeout_ms);
  if (rc) return report_error("create_characters", rc, client);
  rc = anim_client_characters_set_input(client, out_id, &o->input, 1, NULL, timeout_ms);
  return rc ? report_error("set_inputs", rc, client) : 0;
}

static void reasons_text(unsigned reasons, char *out, size_t size) {
  snprintf(out, size, "%s%s%s%s", reasons & ANIM_SEARCH_REASON_PERIODIC ? "periodic " : "",
           reasons & ANIM_SEARCH_REASON_REPLAN ? "replan " : "", reasons & ANIM_SEARCH_REASON_RANGE_END ? "range-end " : "",
           reasons ? "" : "-");
  size_t n = strlen(out);
  if (n > 1 && out[n - 1] == ' ') out[n - 1] = '\0';
}

static void print_json(const anim_character_history_t *h) {
  printf("{\"first_tick\":%llu,\"last_tick\":%llu,\"capacity\":%u,\"tick_rate\":%g,\"groups\":[",
         (unsigned long long)h->first_tick, (unsigned long long)h->last_tick, h->capacity, (double)h->tick_rate);
  for (int g = 0; g < h->ngroups; g++) printf("%s", g ? "," : ""), animctl_json_string(stdout, h->groups[g]);
  printf("],\"ticks\":[");
  for (int i = 0; i < h->nticks; i++) {
    const anim_history_tick_t *t = &h->ticks[i];
    char reasons[48];
    reasons_text(t->reasons, reasons, sizeof reasons);
    printf("%s{\"tick\":%llu,\"frame\":%u,\"searched\":%s,\"reasons\":\"%s\",\"chosen\":%d,\"transitioned\":%s,"
           "\"candidates\":[", i ? "," : "", (unsigned long long)t->tick, t->frame, t->searched ? "true" : "false",
           t->searched ? reasons : "", t->chosen, t->transitioned ? "true" : "false");
    for (int c = 0; c < t->ncandidates; c++) {
      printf("%s{\"frame\":%u,\"range\":", c ? "," : "", t->candidates[c].frame);
      animctl_json_string(stdout, t->candidates[c].range_name);
      printf(",\"cost\":%.9g,\"group_costs\":[", (double)t->candidates[c].cost);
      for (int g = 0; g < h->ngroups; g++) printf("%s%.9g", g ? "," : "", (double)t->candidates[c].group_costs[g]);
      printf("]}");
    }
    printf("]}");
  }
  printf("]}\n");
}

/* One tick's candidates with their cost by group. */
static void print_tick(const anim_character_history_t *h, const anim_history_tick_t *t) {
  char reasons[48];
  reasons_text(t->reasons, reasons, sizeof reasons);
  printf("tick %llu: frame %u shown; ", (unsigned long long)t->tick, t->frame);
  if (!t->searched) {
    printf("no search\n");
    return;
  }
  printf("searched (%s%s), chose %d%s\n", reasons, t->at_rest ? ", at rest" : "", t->chosen,
         t->transitioned ? ", transitioned" : "");
  printf("%4s %7s %-24s %9s", "rank", "frame", "range", "cost");
  for (int g = 0; g < h->ngroups; g++) printf(" %*.*s", 12, 12, h->groups[g]);
  printf("\n");
  for (int c = 0; c < t->ncandidates; c++) {
    const anim_history_candidate_t *k = &t->candidates[c];
    printf("%4d %7u %-24.24s %9.4f", c + 1, k->frame, k->range_name, (double)k->cost);
    for (int g = 0; g < h->ngroups; g++) printf(" %12.4f", (double)k->group_costs[g]);
    printf("%s\n", (int)k->frame == t->current_frame ? "  (current frame)" : "");
  }
}

static void print_table(const anim_character_history_t *h, int all) {
  printf("history ticks %llu..%llu held (%u at most, %g Hz); %d ticks in the span\n",
         (unsigned long long)h->first_tick, (unsigned long long)h->last_tick, h->capacity, (double)h->tick_rate,
         h->nticks);
  printf("%10s %7s %-24s %7s %5s  %s\n", "tick", "frame", "searched", "chosen", "trans", "best candidates (frame:cost)");
  for (int i = 0; i < h->nticks; i++) {
    const anim_history_tick_t *t = &h->ticks[i];
    if (!t->searched && !all) continue;
    char reasons[48];
    reasons_text(t->reasons, reasons, sizeof reasons);
    printf("%10llu %7u %-24s ", (unsigned long long)t->tick, t->frame, t->searched ? reasons : "-");
    if (t->searched) printf("%7d %5s ", t->chosen, t->transitioned ? "yes" : "-");
    else printf("%7s %5s ", "-", "-");
    for (int c = 0; c < t->ncandidates && c < 4; c++)
      printf(" %u:%.4f", t->candidates[c].frame, (double)t->candidates[c].cost);
    printf("\n");
  }
}

static int parse_common(history_options_t *o, const char *command, int argc, char **argv, int *i) {
  const char *a = argv[*i], *v = *i + 1 < argc ? argv[*i + 1] : NULL;
  if (!strcmp(a, "--create")) return o->create = 1, 1;
  if (!strcmp(a, "--all")) return o->all = 1, 1;
  if (!v) return 0;
  int rc = 0;
  if (!strcmp(a, "--database")) o->database = v;
  else if (!strcmp(a, "--input")) rc = animctl_parse_input(v, &o->input) ? animctl_fail("%s: bad --input %s", command, v) : 0;
  else if (!strcmp(a, "--seconds")) rc = parse_number(a, v, 0.0f, &o->seconds);
  else if (!strcmp(a, "--keep")) rc = parse_number(a, v, 0.0f, &o->keep);
  else if (!strcmp(a, "--last")) rc = parse_number(a, v, 0.0f, &o->last);
  else if (!strcmp(a, "--candidates")) {
    float n;
    rc = parse_number(a, v, 1.0f, &n);
    o->candidates = (int)n;
  } else if (!strcmp(a, "--id")) o->id = strtoull(v, NULL, 10);
  else if (!strcmp(a, "--tick")) o->has_tick = strcmp(v, "last") ? 1 : 2, o->tick = strtoull(v, NULL, 10);
  else if (!strcmp(a, "--ticks")) {
    unsigned long long from, to;
    char tail;
    if (sscanf(v, "%llu:%llu%c", &from, &to, &tail) != 2 || from > to)
      return animctl_fail("%s: --ticks %s: want A:B with A <= B", command, v), -1;
    o->from = from, o->to = to, o->has_ticks = 1;
  } else return 0;
  if (rc) return -1;
  (*i)++;
  return 1;
}

static void defaults(history_options_t *o) {
  memset(o, 0, sizeof *o);
  o->database = "default";
  anim_character_input_stick(&o->input, 0.0f, 0.7f, 0.0f, 0);
  o->seconds = 3.0f, o->keep = 5.0f, o->last = 0.0f, o->candidates = 8;
}

int animctl_history(const options_t *opts, int argc, char **argv) {
  history_options_t o;
  defaults(&o);
  for (int i = 1; i < argc; i++) {
    int taken = parse_common(&o, "history", argc, argv, &i);
    if (taken < 0) return 2;
    if (!taken) return animctl_fail("history: unknown argument %s", argv[i]);
  }
  if (o.create == (o.id != 0)) return animctl_fail("history: give --id ID or --create");
  if (o.has_ticks && o.last > 0.0f) return animctl_fail("history: --last and --ticks are one or the other");
  anim_client_t *client;
  if (animctl_connect(opts, &client)) return 1;
  int rc;
  if (o.create) {
    if (make_character(client, &o, opts->timeout_ms, &o.id)) return 1;
    if ((rc = anim_client_history_set(client, o.id, o.keep, o.candidates, NULL, opts->timeout_ms)))
      return report_error("set_history", rc, client);
    sleep_seconds(o.seconds);
  }
  anim_history_span_t span = {o.from, o.to, o.has_ticks ? 0.0f : (o.last > 0.0f ? o.last : 0.0f), 0, 0};
  if (!o.has_ticks && span.last_seconds == 0.0f) span.last_seconds = o.create ? fminf(o.seconds, o.keep) : 2.0f;
  if (span.last_seconds == 0.0f && !o.has_ticks) span.last_seconds = 1.0f / 60.0f;
  anim_character_history_t *h = NULL;
  if ((rc = anim_client_history_get(client, o.id, &span, &h, opts->timeout_ms)))
    return report_error("character_history", rc, client);
  if (opts->json) print_json(h);
  else if (o.has_tick) {
    const anim_history_tick_t *t = NULL;
    for (int i = 0; i < h->nticks; i++)
      if (o.has_tick == 2 ? h->ticks[i].searched : h->ticks[i].tick == o.tick) t = &h->ticks[i];
    if (t) print_tick(h, t);
    else if (o.has_tick == 2) fprintf(stderr, "animctl: history: no tick of the span searched\n");
    else fprintf(stderr, "animctl: history: tick %llu is not in the span (%llu..%llu held)\n",
                 (unsigned long long)o.tick, (unsigned long long)h->first_tick, (unsigned long long)h->last_tick);
    if (!t) rc = 1;
  } else print_table(h, o.all);
  anim_character_history_free(h);
  if (o.create) anim_client_characters_destroy(client, &o.id, 1, opts->timeout_ms);
  return rc ? 1 : 0;
}

/* ---- set-params ------------------------------------------------------------------------------- */

/* ControllerParams' names and where they go in anim_character_params_t.
 * kind: 0 a float, 1 an integer, 2 a warp's no_* switch (NAME=1 turns
 * the warp off, NAME=0 on: ANIM_PARAM_ON, since 0 in the struct means
 * left out). */
typedef struct {
  const char *name;
  size_t offset;
  int integer;
} param_name_t;

#define P(field, integer) {#field, offsetof(anim_character_params_t, field), integer}
static const param_name_t param_names[] = {
    P(search_interval, 1),   P(inertialize_halflife, 0), P(velocity_halflife, 0), P(rotation_halflife, 0),
    P(forward_speed, 0),     P(side_speed, 0),           P(back_speed, 0),        P(ignore_surrounding, 1),
    P(ignore_range_end, 1),  P(transition_cost, 0),      P(replan_threshold, 0),  P(input_f, 0),
    P(input_zeta, 0),        P(input_r, 0),
    /* Animation warping (docs/characters.md): each warp's switch and bounds. */
    P(no_play_rate, 2),      P(play_rate_min, 0),        P(play_rate_max, 0),     P(no_stand_warp, 2),
    P(no_orientation_warp, 2), P(orientation_warp_max, 0), P(no_stride_warp, 2),  P(stride_scale_min, 0),
    P(stride_scale_max, 0),  P(no_root_steering, 2),     P(root_steering_max, 0),
};
#undef P
#define NPARAMS (int)(sizeof param_names / sizeof param_names[0])

static double param_value(const anim_character_params_t *p, int i) {
  const char *at = (const char *)p + param_names[i].offset;
  return param_names[i].integer ? (double)*(const int *)at : (double)*(const float *)at;
}

static int set_param(anim_character_params_t *p, const char *assignment) {
  const char *eq = strchr(assignment, '=');
  if (!eq) return animctl_fail("set-params: %s: want NAME=VALUE", assignment);
  for (int i = 0; i < NPARAMS; i++)
    if (strlen(param_names[i].name) == (size_t)(eq - assignment) &&
        !strncmp(param_names[i].name, assignment, (size_t)(eq - assignment))) {
      char *end;
      char *at = (char *)p + param_names[i].offset;
      if (param_names[i].integer == 2) {
        /* A switch: 1 (true) turns the warp off, 0 (false) turns it on. */
        const char *v = eq + 1;
        int off = !strcmp(v, "1") || !strcmp(v, "true") ? 1 : !strcmp(v, "0") || !strcmp(v, "false") ? 0 : -1;
        if (off < 0) return animctl_fail("set-params: %s: want 1 (the warp off) or 0 (on)", assignment);
        *(int *)at = off ? 1 : ANIM_PARAM_ON;
        return 0;
      }
      double v = strtod(eq + 1, &end);
      if (eq[1] == '\0' || *end) return animctl_fail("set-params: %s: not a number", assignment);
      if (param_names[i].integer) *(int *)at = (int)v;
      else *(float *)at = (float)v;
      return 0;
    }
  return animctl_fail("set-params: %.*s: not a controller parameter (search_interval, inertialize_halflife, ...)",
                      (int)(eq - assignment), assignment);
}

int animctl_set_params(const options_t *opts, int argc, char **argv) {
  history_options_t o;
  defaults(&o);
  o.seconds = 2.0f;
  anim_character_params_t given;
  anim_character_params_init(&given);
  int nassigned = 0;
  for (int i = 1; i < argc; i++) {
    int taken = parse_common(&o, "set-params", argc, argv, &i);
    if (taken < 0) return 2;
    if (taken) continue;
    if (argv[i][0] == '-' || set_param(&given, argv[i])) return argv[i][0] == '-' ? animctl_fail("set-params: unknown "
                                                                                    "argument %s", argv[i]) : 2;
    nassigned++;
  }
  if (!nassigned) return animctl_fail("set-params: give at least one NAME=VALUE");
  anim_client_t *client;
  if (animctl_connect(opts, &client)) return 1;
  uint64_t id;
  if (make_character(client, &o, opts->timeout_ms, &id)) return 1;
  anim_character_state_t *before = NULL, *middle = NULL, *after = NULL;
  sleep_seconds(o.seconds);
  int rc = anim_client_character_state(client, id, 0, &before, opts->timeout_ms);
  if (rc) return report_error("character_state", rc, client);
  if ((rc = anim_client_character_params_set(client, id, &given, NULL, opts->timeout_ms))) {
    anim_character_state_free(before);
    return report_error("set_character_params", rc, client);
  }
  if ((rc = anim_client_character_state(client, id, 0, &middle, opts->timeout_ms)) == 0) {
    sleep_seconds(o.seconds);
    rc = anim_client_character_state(client, id, 0, &after, opts->timeout_ms);
  }
  if (rc) {
    anim_character_state_free(before), anim_character_state_free(middle);
    return report_error("character_state", rc, client);
  }
  /* Rates over each half: the first from creation, the second from the change. */
  double s1 = o.seconds > 0 ? o.seconds : 1.0, s2 = s1;
  double searches[2] = {(double)before->searches / s1, (double)(after->searches - middle->searches) / s2};
  double transitions[2] = {(double)before->transitions / s1, (double)(after->transitions - middle->transitions) / s2};
  if (opts->json) {
    printf("{\"character\":%llu,\"seconds\":%g,\"before\":{", (unsigned long long)id, (double)o.seconds);
    for (int i = 0; i < NPARAMS; i++) printf("%s\"%s\":%.9g", i ? "," : "", param_names[i].name,
                                             param_value(&before->params, i));
    printf("},\"after\":{");
    for (int i = 0; i < NPARAMS; i++) printf("%s\"%s\":%.9g", i ? "," : "", param_names[i].name,
                                             param_value(&after->params, i));
    printf("},\"searches_per_second\":[%.3f,%.3f],\"transitions_per_second\":[%.3f,%.3f]}\n", searches[0],
           searches[1], transitions[0], transitions[1]);
  } else {
    printf("%-22s %12s %12s\n", "parameter", "before", "after");
    for (int i = 0; i < NPARAMS; i++) {
      double a = param_value(&before->params, i), b = param_value(&after->params, i);
      printf("%-22s %12g %12g%s\n", param_names[i].name, a, b, a != b ? "  *" : "");
    }
    printf("%-22s %12.2f %12.2f\n", "searches/s", searches[0], searches[1]);
    printf("%-22s %12.2f %12.2f\n", "transitions/s", transitions[0], transitions[1]);
  }
  anim_character_state_free(before), anim_character_state_free(middle), anim_character_state_free(after);
  anim_client_characters_destroy(client, &id, 1, opts->timeout_ms);
  return 0;
}
