/*
 * service_machine.c: load, check, list and unload state machines, and send
 * events and set parameters to the characters running them.
 *
 * Loads and checks read NAME.machine from the data directory (when no text
 * is given) and parse on the thread pool; a load is installed on the loop
 * by its finish step. Events and parameters are checked whole (ownership,
 * kind, names, queue room) before any is applied, between ticks.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "actor_machine.h"
#include "anim_error.h"
#include "machines.h"
#include "service.h"

/* ---- text: the request's, or a file of the data directory ---- */

/* data_dir/NAME.machine, at most SRV_MACHINE_MAX_TEXT bytes, into *out (malloc). */
static int read_machine_file(const srv_config_t *config, const char *name, char **out, size_t *out_len, char *err,
                             int errlen) {
  char path[PATH_MAX];
  int rc = srv_data_file_path(config, name, ".machine", path, err, errlen);
  if (rc) return rc;
  FILE *f = fopen(path, "rb");
  if (!f) return snprintf(err, (size_t)errlen, "cannot open %s.machine", name), ANIM_EIO;
  char *text = malloc(SRV_MACHINE_MAX_TEXT + 1);
  size_t len = text ? fread(text, 1, SRV_MACHINE_MAX_TEXT + 1, f) : 0;
  int failed = text ? ferror(f) : 1;
  fclose(f);
  if (failed || len > SRV_MACHINE_MAX_TEXT) {
    free(text);
    if (!text) return snprintf(err, (size_t)errlen, "out of memory"), ANIM_ENOMEM;
    snprintf(err, (size_t)errlen, failed ? "cannot read %s.machine" : "%s.machine is over %u bytes", name,
             SRV_MACHINE_MAX_TEXT);
    return failed ? ANIM_EIO : ANIM_ELIMIT;
  }
  *out = text, *out_len = len;
  return 0;
}

typedef struct {
  const char *text;
  size_t len;
  char *owned;     /* a file's text */
  char source[80]; /* what messages call it: NAME.machine, NAME or "request" */
} machine_text_t;

/* The request's text, or its file's; fails the response. */
static int get_text(const srv_service_ctx_t *ctx, const srv_request_t *request, const char *name, const char *text,
                    size_t len, machine_text_t *out, srv_response_t *response) {
  memset(out, 0, sizeof *out);
  if (len) {
    out->text = text, out->len = len;
    snprintf(out->source, sizeof out->source, "%s", name[0] ? name : "request");
    return 0;
  }
  char err[200];
  int rc = read_machine_file(ctx->env->config, name, &out->owned, &out->len, err, sizeof err);
  if (rc) return srv_response_fail(response, rc, "%s.name: %s", srv_request_name(request->type), err);
  out->text = out->owned;
  snprintf(out->source, sizeof out->source, "%s.machine", name);
  return 0;
}

static void summarize(const srv_machine_def_t *def, uint32_t characters, srv_machine_summary_t *out) {
  snprintf(out->name, sizeof out->name, "%s", def->name);
  snprintf(out->source, sizeof out->source, "%s", def->source);
  out->version = def->version;
  out->text_bytes = (uint32_t)def->len;
  out->characters = characters;
  out->machine = def->parsed;
}

static void def_free(void *def) { srv_machine_def_free(def); }
static void machine_free(void *machine) { anim_state_machine_free(machine); }

/* ---- load ---- */

static int check_new(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  const srv_load_machine_request_t *req = &request->body.load_machine;
  if (!req->replace && srv_machines_find(ctx->env->machines, req->name))
    return srv_response_fail(out, ANIM_EEXIST, "load_machine.name = \"%s\": already loaded (set replace)", req->name);
  return 0;
}

/* Pool: read and parse. */
static int parse(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  const srv_load_machine_request_t *req = &request->body.load_machine;
  machine_text_t t;
  if (get_text(ctx, request, req->name, req->text, req->len, &t, out)) return out->error;
  anim_sm_diagnostics_t diagnostics;
  char err[200];
  int rc;
  srv_machine_def_t *def =
      srv_machine_def_create(req->name, req->len == 0, t.text, t.len, &diagnostics, &rc, err, sizeof err);
  free(t.owned);
  if (!def)
    return srv_response_fail(out, rc, "load_machine.%s: %s%s", req->len ? "text" : "name", err,
                             diagnostics.total > 1 ? " (and more problems: check_machine lists them)" : "");
  out->held = def, out->release_held = def_free;
  return 0;
}

/* Loop: install. */
static int install(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  srv_machine_def_t *def = out->held;
  int rc = check_new(ctx, request, out);
  if (!rc && (rc = srv_machines_put(ctx->env->machines, def, request->body.load_machine.replace)))
    return srv_response_fail(out, rc, "load_machine.name = \"%s\": %d machines are loaded, at most %d", def->name,
                             ctx->env->machines->count, SRV_MACHINES_MAX);
  if (rc) return rc;
  out->held = NULL; /* the registry has it */
  summarize(def, 0, &out->body.load_machine.summary);
  return 0;
}

/* ---- check ---- */

static int check(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  const srv_check_machine_request_t *req = &request->body.check_machine;
  srv_check_machine_response_t *r = &out->body.check_machine;
  machine_text_t t;
  if (get_text(ctx, request, req->name, req->text, req->len, &t, out)) return out->error;
  char err[200];
  anim_state_machine_t *sm = anim_state_machine_parse(t.text, t.len, t.source, &r->diagnostics, err, sizeof err);
  if (sm && out->entry && anim_state_machine_bind(sm, &out->entry->db, &r->diagnostics, err, sizeof err) != 0) {
    anim_state_machine_free(sm);
    sm = NULL;
  }
  if (!sm && r->diagnostics.total == 0) {
    free(t.owned);
    return srv_response_fail(out, ANIM_ENOMEM, "check_machine: %s", err);
  }
  if (sm) {
    out->held = sm, out->release_held = machine_free;
    r->ok = 1;
    srv_machine_def_t def = {.len = t.len, .parsed = sm, .version = srv_machine_version(t.text, t.len)};
    snprintf(def.name, sizeof def.name, "%s", req->name);
    snprintf(def.source, sizeof def.source, "%s", req->len ? "request" : t.source);
    summarize(&def, 0, &r->summary);
  }
  free(t.owned);
  return 0;
}

/* ---- list, unload ---- */

/* The summaries point at the registry's parses: list is encoded on the loop
 * right after this step, before anything can unload them. */
static int list(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  const srv_machines_t *m = ctx->env->machines;
  srv_list_machines_response_t *r = &out->body.list_machines;
  if (!(r->summaries = srv_response_alloc(out, (size_t)(m->count + 1) * sizeof *r->summaries))) return ANIM_ENOMEM;
  for (int i = 0; i < m->count; i++)
    summarize(m->defs[i], srv_machines_users(m, m->defs[i]->id), &r->summaries[r->count++]);
  return 0;
}

static int unload(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  const char *name = request->body.unload_machine.name;
  if (srv_machines_remove(ctx->env->machines, name))
    return srv_response_fail(out, ANIM_ENOTFOUND, "unload_machine.name = \"%s\": no machine of that name is loaded",
                             name);
  return 0;
}

/* ---- events and parameters ---- */

/* The machine character field[index] names, owned by this connection; fails the response. */
static anim_machine_character_t *machine_of(const srv_service_ctx_t *ctx, uint64_t id, const char *field, int index,
                                            srv_response_t *out) {
  srv_actor_t *a = srv_service_owned_actor(ctx, id, field, index, out);
  if (!a) return NULL;
  anim_machine_character_t *c = srv_actor_machine_character(a);
  if (!c)
    srv_response_fail(out, ANIM_EUNSUPPORTED, "%s[%d].character = %llu: a %s character, not MODE_MACHINE", field, index,
                      (unsigned long long)id, a->kind->name);
  return c;
}

static int send_events(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  const srv_send_events_request_t *req = &request->body.send_events;
  int *events = srv_response_alloc(out, (size_t)(req->n + 1) * sizeof *events);
  if (!events) return ANIM_ENOMEM;
  for (int i = 0; i < req->n; i++) {
    const anim_machine_character_t *c = machine_of(ctx, req->items[i].character, "send_events.events", i, out);
    if (!c) return out->error;
    if ((events[i] = anim_state_machine_find_event(c->machine, req->items[i].event)) < 0)
      return srv_response_fail(out, ANIM_ENOTFOUND,
                               "send_events.events[%d].event = \"%s\": the machine has no such event", i,
                               req->items[i].event);
    /* Room in its queue for this and the request's earlier events to it. */
    int queued = c->queue_count + 1;
    for (int j = 0; j < i && queued <= ANIM_MACHINE_QUEUE; j++)
      queued += req->items[j].character == req->items[i].character;
    if (queued > ANIM_MACHINE_QUEUE)
      return srv_response_fail(out, ANIM_ELIMIT,
                               "send_events.events[%d]: character %llu would have more than %d events waiting "
                               "for a tick", i, (unsigned long long)req->items[i].character, ANIM_MACHINE_QUEUE);
  }
  for (int i = 0; i < req->n; i++)
    anim_machine_character_send(srv_actor_machine_character(srv_crowd_find(ctx->env->crowd, req->items[i].character)),
                                events[i]);
  out->body.send_events.tick = ctx->env->crowd->tick + 1;
  return 0;
}

static int set_params(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  const srv_set_params_request_t *req = &request->body.set_params;
  int *params = srv_response_alloc(out, (size_t)(req->n + 1) * sizeof *params);
  if (!params) return ANIM_ENOMEM;
  for (int i = 0; i < req->n; i++) {
    const anim_machine_character_t *c = machine_of(ctx, req->items[i].character, "set_params.params", i, out);
    if (!c) return out->error;
    if ((params[i] = anim_state_machine_find_param(c->machine, req->items[i].name)) < 0)
      return srv_response_fail(out, ANIM_ENOTFOUND,
                               "set_params.params[%d].name = \"%s\": the machine has no such parameter", i,
                               req->items[i].name);
  }
  for (int i = 0; i < req->n; i++)
    anim_machine_character_set_param(
        srv_actor_machine_character(srv_crowd_find(ctx->env->crowd, req->items[i].character)), params[i],
        req->items[i].value);
  out->body.set_params.tick = ctx->env->crowd->tick + 1;
  return 0;
}

static int always(const srv_request_t *request, const srv_response_t *prepared) { return 1; }

const srv_service_t srv_service_load_machine = {
    .prepare = check_new, .handle = parse, .finish = install, .off_loop = always, .flags = SRV_SERVICE_ADMIN};
const srv_service_t srv_service_check_machine = {
    .prepare = srv_service_acquire_database, .handle = check, .off_loop = always};
const srv_service_t srv_service_list_machines = {.handle = list};
const srv_service_t srv_service_unload_machine = {.handle = unload, .flags = SRV_SERVICE_ADMIN};
const srv_service_t srv_service_send_events = {.handle = send_events, .flags = SRV_SERVICE_CROWD};
const srv_service_t srv_service_set_params = {.handle = set_params, .flags = SRV_SERVICE_CROWD};
