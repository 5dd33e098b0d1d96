/*
 * animctl_machine.c: the state-machine subcommands of animctl.
 *
 *   animctl machine check FILE [--name N] [--database DB]
 *   animctl machine load FILE [--name N] [--replace]
 *   animctl machine list | animctl machine unload NAME
 *   animctl machine attach NAME [--database DB] [--seconds S]
 *                          [--event T:EVENT]... [--set T:PARAM=VALUE]...
 *
 * A character belongs to the connection that created it, so events and
 * parameters are sent by `attach` (at their times T in seconds) to the
 * character it creates, which it follows until --seconds, printing each
 * state change seen in the stream.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "animctl.h"

/* The file's bytes (*out_len), or NULL with a message. */
static char *read_file(const char *path, size_t *out_len) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    animctl_fail("%s: cannot open", path);
    return NULL;
  }
  size_t cap = 4096, len = 0;
  char *text = malloc(cap);
  for (size_t got; text && (got = fread(text + len, 1, cap - len, f)) > 0;) {
    len += got;
    if (len == cap) {
      char *grown = realloc(text, cap *= 2);
      if (!grown) free(text);
      text = grown;
    }
  }
  fclose(f);
  if (!text) animctl_fail("%s: out of memory", path);
  *out_len = len;
  return text;
}

/* "dir/jump.machine" -> "jump" into out. */
static void name_from_path(const char *path, char *out, size_t size) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  size_t n = strcspn(base, ".");
  snprintf(out, size, "%.*s", (int)(n < size ? n : size - 1), base);
}

static void print_summary(const anim_machine_summary_t *s, int json) {
  if (json) {
    printf("{\"name\": \"%s\", \"version\": \"%016llx\", \"source\": \"%s\", \"states\": [", s->name,
           (unsigned long long)s->version, s->source);
    for (int i = 0; i < s->nstates; i++)
      printf("%s{\"name\": \"%s\", \"machine\": \"%s\", \"motion\": \"%s\"}", i ? ", " : "", s->states[i].name,
             s->states[i].machine, s->states[i].motion);
    printf("], \"events\": [");
    for (int i = 0; i < s->nevents; i++) printf("%s\"%s\"", i ? ", " : "", s->events[i]);
    printf("], \"params\": [");
    for (int i = 0; i < s->nparams; i++) printf("%s\"%s\"", i ? ", " : "", s->params[i]);
    printf("], \"depth\": %u, \"characters\": %u}\n", s->depth, s->characters);
    return;
  }
  printf("%s (%s, %u bytes, version %016llx): %d states, %d events, %d parameters, depth %u, %u characters\n",
         s->name, s->source, s->text_bytes, (unsigned long long)s->version, s->nstates, s->nevents, s->nparams,
         s->depth, s->characters);
  for (int i = 0; i < s->nstates; i++)
    printf("  state %-3d %-20s %-8s%s%s\n", i, s->states[i].name, s->states[i].motion,
           s->states[i].machine[0] ? " in " : "", s->states[i].machine);
}

static int machine_file(const options_t *o, int argc, char **argv, int load) {
  if (argc < 3) return animctl_fail("machine %s FILE [--name N] ...", argv[1]);
  char name[64];
  name_from_path(argv[2], name, sizeof name);
  const char *database = NULL;
  int replace = 0;
  for (int i = 3; i < argc; i++) {
    if (!strcmp(argv[i], "--name") && i + 1 < argc) snprintf(name, sizeof name, "%s", argv[++i]);
    else if (!strcmp(argv[i], "--database") && i + 1 < argc && !load) database = argv[++i];
    else if (!strcmp(argv[i], "--replace") && load) replace = 1;
    else return animctl_fail("machine %s: unknown option %s", argv[1], argv[i]);
  }
  size_t len;
  char *text = read_file(argv[2], &len);
  if (!text) return 1;
  anim_client_t *client;
  int rc = animctl_connect(o, &client);
  if (rc) {
    free(text);
    return rc;
  }
  if (load) {
    anim_machine_summary_t *s = NULL;
    rc = anim_client_machine_load(client, name, text, len, replace, &s, o->timeout_ms);
    if (!rc) print_summary(s, o->json);
    anim_machine_summary_free(s);
  } else {
    anim_machine_check_t *c = NULL;
    rc = anim_client_machine_check(client, name, text, len, database, &c, o->timeout_ms);
    if (!rc) {
      for (int i = 0; i < c->ndiagnostics; i++) {
        const anim_machine_diagnostic_t *d = &c->diagnostics[i];
        if (o->json)
          printf("{\"problem\": \"%s\", \"line\": %u, \"column\": %u, \"message\": \"%s\"}\n", d->problem, d->line,
                 d->column, d->message);
        else
          printf("%s (%s)\n", d->message, d->problem);
      }
      if (c->ok) print_summary(c->machine, o->json);
      else if (!o->json) printf("%u problem%s\n", c->total, c->total == 1 ? "" : "s");
      rc = c->ok ? 0 : 1;
      anim_machine_check_free(c);
      free(text);
      return rc;
    }
  }
  free(text);
  return rc ? report_error(load ? "machine load" : "machine check", rc, client) : 0;
}

typedef struct {
  float time;
  int is_param;
  char name[64];
  float value;
} scripted_t;

static int parse_scripted(const char *spec, int is_param, scripted_t *out) {
  char *end;
  out->time = strtof(spec, &end);
  out->is_param = is_param;
  if (end == spec || *end != ':') return 2;
  const char *name = end + 1, *eq = strchr(name, '=');
  if (is_param) {
    if (!eq) return 2;
    out->value = strtof(eq + 1, &end);
    if (*end || end == eq + 1) return 2;
    snprintf(out->name, sizeof out->name, "%.*s", (int)(eq - name), name);
  } else {
    snprintf(out->name, sizeof out->name, "%s", name);
  }
  return out->name[0] ? 0 : 2;
}

static void print_path(const anim_machine_summary_t *s, const anim_character_pose_t *p, float t, int json) {
  printf(json ? "{\"time\": %.3f, \"state_path\": [" : "%7.3f s  ", t);
  for (int l = 0; l < p->depth; l++) {
    const char *name = p->state_path[l] < (uint32_t)s->nstates ? s->states[p->state_path[l]].name : "?";
    printf(json ? "%s\"%s\"" : "%s%s", l ? (json ? ", " : " / ") : "", name);
  }
  printf(json ? "]}\n" : "\n");
}

static int machine_attach(const options_t *o, int argc, char **argv) {
  if (argc < 3) return animctl_fail("machine attach NAME [--database DB] [--seconds S] ...");
  const char *database = "default";
  float seconds = 5.0f;
  scripted_t script[64];
  int n = 0;
  for (int i = 3; i < argc; i++) {
    int param = !strcmp(argv[i], "--set");
    if (i + 1 >= argc) return animctl_fail("machine attach: %s needs a value", argv[i]);
    if (!strcmp(argv[i], "--database")) database = argv[++i];
    else if (!strcmp(argv[i], "--seconds")) seconds = strtof(argv[++i], NULL);
    else if ((param || !strcmp(argv[i], "--event")) && n < 64) {
      if (parse_scripted(argv[++i], param, &script[n++]))
        return animctl_fail("%s %s: expected T:EVENT or T:PARAM=VALUE", argv[i - 1], argv[i]);
    } else return animctl_fail("machine attach: unknown option %s", argv[i]);
  }
  anim_client_t *client;
  int rc = animctl_connect(o, &client);
  if (rc) return rc;
  anim_machine_summary_t **list = NULL, *s = NULL;
  int count = 0;
  rc = anim_client_machine_list(client, &list, &count, o->timeout_ms);
  for (int i = 0; i < count; i++)
    if (!s && !strcmp(list[i]->name, argv[2])) s = list[i];
    else anim_machine_summary_free(list[i]);
  free(list);
  if (rc) return report_error("machine list", rc, client);
  if (!s) return animctl_fail("no machine %s is loaded (animctl machine list)", argv[2]), 1;
  anim_character_mode_t mode = {.mode = ANIM_MODE_MACHINE, .machine = argv[2]};
  uint64_t id, sub;
  float rate = 60.0f;
  rc = anim_client_characters_create_mode(client, database, &mode, NULL, NULL, 1, &id, o->timeout_ms);
  anim_subscribe_options_t so = {&id, 1, 0, 1, ANIM_POSE_QUANTIZED, 0, 1};
  if (!rc) rc = anim_client_subscribe(client, &so, NULL, NULL, &sub, &rate, o->timeout_ms);
  uint64_t first = 0;
  uint32_t last[8] = {0};
  int last_depth = -1, next = 0;
  for (float t = 0.0f; !rc && t < seconds;) {
    anim_stream_frame_t *f;
    if ((rc = anim_client_next_frame(client, &f, o->timeout_ms))) break;
    if (!first) first = f->tick;
    t = (float)(f->tick - first) / rate;
    for (const anim_character_pose_t *p = f->nposes ? &f->poses[0] : NULL; p; p = NULL)
      if (p->depth != last_depth || memcmp(last, p->state_path, sizeof(uint32_t) * (size_t)p->depth)) {
        print_path(s, p, t, o->json);
        last_depth = p->depth, memcpy(last, p->state_path, sizeof last);
      }
    anim_stream_frame_free(f);
    for (; !rc && next < n && script[next].time <= t; next++) {
      const char *name = script[next].name;
      rc = script[next].is_param
               ? anim_client_machine_params(client, &id, &name, &script[next].value, 1, NULL, o->timeout_ms)
               : anim_client_machine_events(client, &id, &name, 1, NULL, o->timeout_ms);
      if (!rc && !o->json) printf("%7.3f s  %s %s\n", t, script[next].is_param ? "set" : "event", name);
    }
  }
  anim_machine_summary_free(s);
  return rc ? report_error("machine attach", rc, client) : 0;
}

int animctl_machine(const options_t *o, int argc, char **argv) {
  const char *verb = argc > 1 ? argv[1] : "";
  if (!strcmp(verb, "check")) return machine_file(o, argc, argv, 0);
  if (!strcmp(verb, "load")) return machine_file(o, argc, argv, 1);
  if (!strcmp(verb, "attach")) return machine_attach(o, argc, argv);
  int unload = !strcmp(verb, "unload") && argc == 3, list_all = !strcmp(verb, "list") && argc == 2;
  if (!unload && !list_all) return animctl_fail("machine check|load|list|unload|attach (animctl --help)");
  anim_client_t *client;
  int rc = animctl_connect(o, &client);
  if (rc) return rc;
  if (unload) {
    rc = anim_client_machine_unload(client, argv[2], o->timeout_ms);
    return rc ? report_error("machine unload", rc, client) : 0;
  }
  anim_machine_summary_t **list = NULL;
  int n = 0;
  rc = anim_client_machine_list(client, &list, &n, o->timeout_ms);
  if (rc) return report_error("machine list", rc, client);
  for (int i = 0; i < n; i++) print_summary(list[i], o->json), anim_machine_summary_free(list[i]);
  free(list);
  return 0;
}
