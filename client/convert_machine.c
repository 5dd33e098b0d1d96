/*
 * convert_machine.c: state machines between protobuf and the client's C
 * types (see convert.h): the summaries, checks and lists the server
 * answers, and the events and parameters requests.
 *
 * Pure, like convert.c: a message in, an owned result out, 0 or a code,
 * nothing allocated on failure. A name that does not fit its C array is
 * refused (ANIM_EPROTO) rather than cut, since a cut state or event name
 * would name another. No socket, no client: api_machine.c sends and
 * completes the requests.
 */
#include <stdlib.h>
#include <string.h>
#include "convert.h"

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

void anim__machine_list_free(anim_machine_summary_t **machines, int count) {
  if (!machines) return;
  for (int i = 0; i < count; i++) anim_machine_summary_free(machines[i]);
  free(machines);
}

/* n names of a repeated string field. */
static int names_from(char (**out)[64], int *out_n, char *const *names, size_t n) {
  *out_n = 0;
  if (!n) return 0;
  if (!(*out = calloc(n, sizeof **out))) return ANIM_ENOMEM;
  for (size_t i = 0; i < n; i++)
    if (anim__name_from((*out)[i], sizeof **out, names[i])) return ANIM_EPROTO;
  *out_n = (int)n;
  return 0;
}

int anim__machine_summary_from(const Animserver__MachineSummary *m, anim_machine_summary_t **out) {
  *out = NULL;
  if (!m) return ANIM_EPROTO;
  anim_machine_summary_t *s = calloc(1, sizeof *s);
  if (!s) return ANIM_ENOMEM;
  s->version = m->version, s->text_bytes = m->text_bytes;
  s->max_transitions = m->max_transitions, s->depth = m->depth, s->characters = m->characters;
  s->halflife = m->halflife, s->uses_matching = m->uses_matching;
  int rc = anim__name_from(s->name, sizeof s->name, m->name);
  if (!rc) rc = anim__name_from(s->source, sizeof s->source, m->source);
  if (!rc && m->n_states && !(s->states = calloc(m->n_states, sizeof *s->states))) rc = ANIM_ENOMEM;
  for (size_t i = 0; !rc && i < m->n_states; i++) {
    anim_machine_state_t *st = &s->states[i];
    rc = anim__name_from(st->name, sizeof st->name, m->states[i]->name);
    if (!rc) rc = anim__name_from(st->machine, sizeof st->machine, m->states[i]->machine);
    if (!rc) rc = anim__name_from(st->motion, sizeof st->motion, m->states[i]->motion);
    s->nstates = (int)i + 1;
  }
  if (!rc) rc = names_from(&s->events, &s->nevents, m->events, m->n_events);
  if (!rc && m->n_params && !(s->params = calloc(m->n_params, sizeof *s->params))) rc = ANIM_ENOMEM;
  for (size_t i = 0; !rc && i < m->n_params; i++)
    rc = anim__name_from(s->params[i], sizeof *s->params, m->params[i]->name);
  if (!rc) s->nparams = (int)m->n_params;
  if (rc) {
    anim_machine_summary_free(s);
    return rc;
  }
  *out = s;
  return 0;
}

int anim__machine_load_from(const Animserver__LoadMachineResponse *m, anim_machine_summary_t **out) {
  *out = NULL;
  return m ? anim__machine_summary_from(m->machine, out) : ANIM_EPROTO;
}

int anim__machine_check_from(const Animserver__CheckMachineResponse *m, anim_machine_check_t **out) {
  *out = NULL;
  if (!m) return ANIM_EPROTO;
  anim_machine_check_t *c = calloc(1, sizeof *c);
  if (!c) return ANIM_ENOMEM;
  c->ok = m->ok, c->total = m->total;
  int rc = 0;
  if (m->n_diagnostics && !(c->diagnostics = calloc(m->n_diagnostics, sizeof *c->diagnostics))) rc = ANIM_ENOMEM;
  for (size_t i = 0; !rc && i < m->n_diagnostics; i++) {
    anim_machine_diagnostic_t *d = &c->diagnostics[i];
    d->line = m->diagnostics[i]->line, d->column = m->diagnostics[i]->column;
    rc = anim__name_from(d->problem, sizeof d->problem, m->diagnostics[i]->problem);
    if (!rc) rc = anim__name_from(d->message, sizeof d->message, m->diagnostics[i]->message);
    c->ndiagnostics = (int)i + 1;
  }
  if (!rc && m->machine) rc = anim__machine_summary_from(m->machine, &c->machine);
  if (rc) {
    anim_machine_check_free(c);
    return rc;
  }
  *out = c;
  return 0;
}

int anim__machine_list_from(const Animserver__ListMachinesResponse *m, anim_machine_summary_t ***out_machines,
                            int *out_count) {
  *out_machines = NULL, *out_count = 0;
  if (!m) return ANIM_EPROTO;
  anim_machine_summary_t **list = calloc(m->n_machines + 1, sizeof *list);
  if (!list) return ANIM_ENOMEM;
  int rc = 0, n = 0;
  for (; !rc && (size_t)n < m->n_machines; n++) rc = anim__machine_summary_from(m->machines[n], &list[n]);
  if (rc) {
    anim__machine_list_free(list, n);
    return rc;
  }
  *out_machines = list, *out_count = n;
  return 0;
}

/* ---- events and parameters: one item per character ------------------------------------------- */

void anim__machine_items_free(anim__machine_items_views_t *v) {
  free(v->items), free(v->pointers);
  v->items = NULL, v->pointers = NULL;
}

static int items_new(anim__machine_items_views_t *v, size_t item_size, int n) {
  v->items = calloc((size_t)n, item_size);
  v->pointers = calloc((size_t)n, sizeof *v->pointers);
  if (v->items && v->pointers) return 0;
  anim__machine_items_free(v);
  return ANIM_ENOMEM;
}

int anim__events_to_proto(const uint64_t *characters, const char *const *events, int n,
                          anim__machine_items_views_t *out) {
  memset(out, 0, sizeof *out);
  if (n < 1 || !characters || !events) return ANIM_EINVAL;
  if (items_new(out, sizeof(Animserver__CharacterEvent), n)) return ANIM_ENOMEM;
  Animserver__CharacterEvent *items = out->items;
  for (int i = 0; i < n; i++) {
    Animserver__CharacterEvent init = ANIMSERVER__CHARACTER_EVENT__INIT;
    items[i] = init;
    items[i].character = characters[i], items[i].event = (char *)(events[i] ? events[i] : "");
    out->pointers[i] = &items[i];
  }
  Animserver__SendEventsRequest send = ANIMSERVER__SEND_EVENTS_REQUEST__INIT;
  out->events = send;
  out->events.n_events = (size_t)n, out->events.events = (Animserver__CharacterEvent **)out->pointers;
  return 0;
}

int anim__params_to_proto(const uint64_t *characters, const char *const *names, const float *values, int n,
                          anim__machine_items_views_t *out) {
  memset(out, 0, sizeof *out);
  if (n < 1 || !characters || !names || !values) return ANIM_EINVAL;
  if (items_new(out, sizeof(Animserver__CharacterParam), n)) return ANIM_ENOMEM;
  Animserver__CharacterParam *items = out->items;
  for (int i = 0; i < n; i++) {
    Animserver__CharacterParam init = ANIMSERVER__CHARACTER_PARAM__INIT;
    items[i] = init;
    items[i].character = characters[i], items[i].name = (char *)(names[i] ? names[i] : "");
    items[i].value = values[i];
    out->pointers[i] = &items[i];
  }
  Animserver__SetParamsRequest set = ANIMSERVER__SET_PARAMS_REQUEST__INIT;
  out->params = set;
  out->params.n_params = (size_t)n, out->params.params = (Animserver__CharacterParam **)out->pointers;
  return 0;
}
