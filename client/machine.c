/*
 * machine.c: state-machine requests (anim_client_machine.h): protobuf
 * requests built from C arguments, answers copied into library-owned
 * summaries. Not here: the characters that run machines (character.c) and
 * the connection (client.c).
 */
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "client_internal.h"

void anim_machine_summary_free(anim_machine_summary_t *s) {
  if (!s) return;
  free(s->states), free(s->events), free(s->params);
  free(s);
}

void anim_machine_check_free(anim_machine_check_t *c) {
  if (!c) return;
  free(c->diagnostics);
  anim_machine_summary_free(c->machine);
  free(c);
}

static int copy_names(char (**out)[64], int *out_n, char **names, size_t n) {
  *out_n = 0;
  if (!n) return 0;
  if (!(*out = calloc(n, sizeof **out))) return ANIM_ENOMEM;
  for (size_t i = 0; i < n; i++)
    if (anim__copy_name((*out)[i], sizeof **out, names[i])) return ANIM_EPROTO;
  *out_n = (int)n;
  return 0;
}

static anim_machine_summary_t *summary_from(const Animserver__MachineSummary *m, int *out_rc) {
  anim_machine_summary_t *s = calloc(1, sizeof *s);
  int rc = s ? 0 : ANIM_ENOMEM;
  if (!rc && !m) rc = ANIM_EPROTO;
  if (!rc) {
    s->version = m->version, s->text_bytes = m->text_bytes;
    s->max_transitions = m->max_transitions, s->depth = m->depth, s->characters = m->characters;
    s->halflife = m->halflife, s->uses_matching = m->uses_matching;
    rc = anim__copy_name(s->name, sizeof s->name, m->name);
    if (!rc) rc = anim__copy_name(s->source, sizeof s->source, m->source);
  }
  if (!rc && m->n_states && !(s->states = calloc(m->n_states, sizeof *s->states))) rc = ANIM_ENOMEM;
  for (size_t i = 0; !rc && i < m->n_states; i++) {
    anim_machine_state_t *st = &s->states[i];
    rc = anim__copy_name(st->name, sizeof st->name, m->states[i]->name);
    if (!rc) rc = anim__copy_name(st->machine, sizeof st->machine, m->states[i]->machine);
    if (!rc) rc = anim__copy_name(st->motion, sizeof st->motion, m->states[i]->motion);
    s->nstates = (int)i + 1;
  }
  if (!rc) rc = copy_names(&s->events, &s->nevents, m->events, m->n_events);
  if (!rc && m->n_params) {
    if (!(s->params = calloc(m->n_params, sizeof *s->params))) rc = ANIM_ENOMEM;
    for (size_t i = 0; !rc && i < m->n_params; i++) rc = anim__copy_name(s->params[i], sizeof *s->params, m->params[i]->name);
    if (!rc) s->nparams = (int)m->n_params;
  }
  if (rc) anim_machine_summary_free(s), s = NULL;
  *out_rc = rc;
  return s;
}

static int convert_summary(anim_client_t *client, const Animserver__Response *r, void *out) {
  (void)client;
  const Animserver__MachineSummary *m = r->load_machine ? r->load_machine->machine : NULL;
  int rc;
  anim_machine_summary_t *s = summary_from(m, &rc);
  if (out) *(anim_machine_summary_t **)out = s;
  else anim_machine_summary_free(s);
  return rc;
}

int anim_client_machine_load(anim_client_t *client, const char *name, const char *text, size_t len, int replace,
                             anim_machine_summary_t **out_summary, int timeout_ms) {
  if (out_summary) *out_summary = NULL;
  if (!client || !name || (!text && len)) return ANIM_EINVAL;
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__LoadMachineRequest load = ANIMSERVER__LOAD_MACHINE_REQUEST__INIT;
  load.name = (char *)name, load.replace = replace != 0;
  load.text.data = (uint8_t *)text, load.text.len = len;
  request.body_case = ANIMSERVER__REQUEST__BODY_LOAD_MACHINE, request.load_machine = &load;
  return anim__client_call(client, &request, ANIMSERVER__RESPONSE__BODY_LOAD_MACHINE, convert_summary, out_summary,
                           timeout_ms);
}

static int convert_check(anim_client_t *client, const Animserver__Response *r, void *out) {
  (void)client;
  const Animserver__CheckMachineResponse *m = r->check_machine;
  anim_machine_check_t *c = calloc(1, sizeof *c);
  int rc = c ? 0 : ANIM_ENOMEM;
  if (!rc) c->ok = m->ok, c->total = m->total;
  if (!rc && m->n_diagnostics && !(c->diagnostics = calloc(m->n_diagnostics, sizeof *c->diagnostics))) rc = ANIM_ENOMEM;
  for (size_t i = 0; !rc && i < m->n_diagnostics; i++) {
    anim_machine_diagnostic_t *d = &c->diagnostics[i];
    d->line = m->diagnostics[i]->line, d->column = m->diagnostics[i]->column;
    rc = anim__copy_name(d->problem, sizeof d->problem, m->diagnostics[i]->problem);
    if (!rc) rc = anim__copy_name(d->message, sizeof d->message, m->diagnostics[i]->message);
    c->ndiagnostics = (int)i + 1;
  }
  if (!rc && m->machine) c->machine = summary_from(m->machine, &rc);
  if (rc) anim_machine_check_free(c), c = NULL;
  *(anim_machine_check_t **)out = c;
  return rc;
}

int anim_client_machine_check(anim_client_t *client, const char *name, const char *text, size_t len,
                              const char *database, anim_machine_check_t **out_check, int timeout_ms) {
  if (out_check) *out_check = NULL;
  if (!client || !name || (!text && len) || !out_check) return ANIM_EINVAL;
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__CheckMachineRequest check = ANIMSERVER__CHECK_MACHINE_REQUEST__INIT;
  check.name = (char *)name, check.database = (char *)(database ? database : "");
  check.text.data = (uint8_t *)text, check.text.len = len;
  request.body_case = ANIMSERVER__REQUEST__BODY_CHECK_MACHINE, request.check_machine = &check;
  return anim__client_call(client, &request, ANIMSERVER__RESPONSE__BODY_CHECK_MACHINE, convert_check, out_check,
                           timeout_ms);
}

typedef struct {
  anim_machine_summary_t ***machines;
  int *count;
} list_out_t;

static int convert_list(anim_client_t *client, const Animserver__Response *r, void *out) {
  (void)client;
  list_out_t *o = out;
  const Animserver__ListMachinesResponse *m = r->list_machines;
  anim_machine_summary_t **list = calloc(m->n_machines + 1, sizeof *list);
  int rc = list ? 0 : ANIM_ENOMEM;
  size_t i = 0;
  for (; !rc && i < m->n_machines; i++) list[i] = summary_from(m->machines[i], &rc);
  if (rc) {
    for (size_t k = 0; k < i; k++) anim_machine_summary_free(list[k]);
    free(list);
    return rc;
  }
  *o->machines = list, *o->count = (int)m->n_machines;
  return 0;
}

int anim_client_machine_list(anim_client_t *client, anim_machine_summary_t ***out_machines, int *out_count,
                             int timeout_ms) {
  if (!client || !out_machines || !out_count) return ANIM_EINVAL;
  *out_machines = NULL, *out_count = 0;
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__ListMachinesRequest list = ANIMSERVER__LIST_MACHINES_REQUEST__INIT;
  request.body_case = ANIMSERVER__REQUEST__BODY_LIST_MACHINES, request.list_machines = &list;
  list_out_t o = {out_machines, out_count};
  return anim__client_call(client, &request, ANIMSERVER__RESPONSE__BODY_LIST_MACHINES, convert_list, &o, timeout_ms);
}

int anim_client_machine_unload(anim_client_t *client, const char *name, int timeout_ms) {
  if (!client || !name) return ANIM_EINVAL;
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__UnloadMachineRequest unload = ANIMSERVER__UNLOAD_MACHINE_REQUEST__INIT;
  unload.name = (char *)name;
  request.body_case = ANIMSERVER__REQUEST__BODY_UNLOAD_MACHINE, request.unload_machine = &unload;
  return anim__client_call(client, &request, ANIMSERVER__RESPONSE__BODY_UNLOAD_MACHINE, NULL, NULL, timeout_ms);
}

/* ---- events and parameters: one item per character, answered by a tick ---- */

typedef struct {
  Animserver__Request request;
  Animserver__SendEventsRequest events;
  Animserver__SetParamsRequest params;
  void *items, **pointers;
} items_request_t;

static void items_free(items_request_t *q) { free(q->items), free(q->pointers); }

static int build_events(items_request_t *q, const uint64_t *characters, const char *const *events, int n) {
  if (n < 1 || !characters || !events) return ANIM_EINVAL;
  Animserver__CharacterEvent *items = calloc((size_t)n, sizeof *items);
  void **pointers = calloc((size_t)n, sizeof *pointers);
  q->items = items, q->pointers = pointers;
  if (!items || !pointers) return items_free(q), ANIM_ENOMEM;
  for (int i = 0; i < n; i++) {
    Animserver__CharacterEvent init = ANIMSERVER__CHARACTER_EVENT__INIT;
    items[i] = init;
    items[i].character = characters[i], items[i].event = (char *)(events[i] ? events[i] : "");
    pointers[i] = &items[i];
  }
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__SendEventsRequest send = ANIMSERVER__SEND_EVENTS_REQUEST__INIT;
  q->request = request, q->events = send;
  q->events.n_events = (size_t)n, q->events.events = (Animserver__CharacterEvent **)pointers;
  q->request.body_case = ANIMSERVER__REQUEST__BODY_SEND_EVENTS, q->request.send_events = &q->events;
  return 0;
}

static int build_params(items_request_t *q, const uint64_t *characters, const char *const *names, const float *values,
                        int n) {
  if (n < 1 || !characters || !names || !values) return ANIM_EINVAL;
  Animserver__CharacterParam *items = calloc((size_t)n, sizeof *items);
  void **pointers = calloc((size_t)n, sizeof *pointers);
  q->items = items, q->pointers = pointers;
  if (!items || !pointers) return items_free(q), ANIM_ENOMEM;
  for (int i = 0; i < n; i++) {
    Animserver__CharacterParam init = ANIMSERVER__CHARACTER_PARAM__INIT;
    items[i] = init;
    items[i].character = characters[i], items[i].name = (char *)(names[i] ? names[i] : "");
    items[i].value = values[i];
    pointers[i] = &items[i];
  }
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__SetParamsRequest set = ANIMSERVER__SET_PARAMS_REQUEST__INIT;
  q->request = request, q->params = set;
  q->params.n_params = (size_t)n, q->params.params = (Animserver__CharacterParam **)pointers;
  q->request.body_case = ANIMSERVER__REQUEST__BODY_SET_PARAMS, q->request.set_params = &q->params;
  return 0;
}

/* send_events and set_params answer the tick that takes them. */
static int convert_tick(anim_client_t *client, const Animserver__Response *r, void *out) {
  (void)client;
  uint64_t tick = r->body_case == ANIMSERVER__RESPONSE__BODY_SEND_EVENTS ? r->send_events->tick : r->set_params->tick;
  if (out) *(uint64_t *)out = tick;
  return 0;
}

int anim_client_machine_events(anim_client_t *client, const uint64_t *characters, const char *const *events, int n,
                               uint64_t *out_tick, int timeout_ms) {
  items_request_t q;
  int rc = client ? build_events(&q, characters, events, n) : ANIM_EINVAL;
  if (rc) return rc;
  rc = anim__client_call(client, &q.request, ANIMSERVER__RESPONSE__BODY_SEND_EVENTS, convert_tick, out_tick, timeout_ms);
  items_free(&q);
  return rc;
}

int anim_client_machine_events_send(anim_client_t *client, const uint64_t *characters, const char *const *events,
                                    int n, anim_status_cb cb, void *data, uint64_t *out_id) {
  items_request_t q;
  int rc = client ? build_events(&q, characters, events, n) : ANIM_EINVAL;
  if (rc) return rc;
  rc = anim__client_send_status(client, &q.request, ANIMSERVER__RESPONSE__BODY_SEND_EVENTS, cb, data, out_id);
  items_free(&q);
  return rc;
}

int anim_client_machine_params(anim_client_t *client, const uint64_t *characters, const char *const *names,
                               const float *values, int n, uint64_t *out_tick, int timeout_ms) {
  items_request_t q;
  int rc = client ? build_params(&q, characters, names, values, n) : ANIM_EINVAL;
  if (rc) return rc;
  rc = anim__client_call(client, &q.request, ANIMSERVER__RESPONSE__BODY_SET_PARAMS, convert_tick, out_tick, timeout_ms);
  items_free(&q);
  return rc;
}

int anim_client_machine_params_send(anim_client_t *client, const uint64_t *characters, const char *const *names,
                                    const float *values, int n, anim_status_cb cb, void *data, uint64_t *out_id) {
  items_request_t q;
  int rc = client ? build_params(&q, characters, names, values, n) : ANIM_EINVAL;
  if (rc) return rc;
  rc = anim__client_send_status(client, &q.request, ANIMSERVER__RESPONSE__BODY_SET_PARAMS, cb, data, out_id);
  items_free(&q);
  return rc;
}
