/*
 * codec_machine.c: the state machine requests on the wire: load_machine,
 * check_machine, list_machines, unload_machine, send_events, set_params
 * (see codec.h). Machine text travels as bytes (a string field is at most
 * SRV_MAX_STRING bytes; a machine may be SRV_MACHINE_MAX_TEXT); the parser
 * reads it as it is, so nothing more is checked here than its size.
 */
#include <stdio.h>
#include <string.h>
#include "anim_error.h"
#include "codec_internal.h"
#include "machines.h"

/* An event or parameter name: 1..ANIM_NAME_MAX-1 bytes (what the machine's
 * grammar allows; the service looks it up). */
static int check_word(srv_decoder_t *d, const char *field, const char *word) {
  size_t mark = srv_path_field(d, field), len = strlen(word);
  if (len == 0) return srv_decode_fail(d, ANIM_EBADNAME, " is empty");
  if (len >= ANIM_NAME_MAX) return srv_decode_fail(d, ANIM_EBADNAME, ": %zu bytes, at most %d", len, ANIM_NAME_MAX - 1);
  srv_path_restore(d, mark);
  return 0;
}

static int check_text(srv_decoder_t *d, const ProtobufCBinaryData *text) {
  return srv_check_max(d, "text", text->len, SRV_MACHINE_MAX_TEXT, ANIM_ELIMIT);
}

int srv_decode_load_machine(srv_decoder_t *d, const Animserver__LoadMachineRequest *in, srv_request_t *out) {
  srv_load_machine_request_t *r = &out->body.load_machine;
  int rc = srv_check_name(d, "name", in->name);
  if (!rc) rc = check_text(d, &in->text);
  r->name = in->name, r->text = (const char *)in->text.data, r->len = in->text.len, r->replace = in->replace;
  return rc;
}

int srv_decode_check_machine(srv_decoder_t *d, const Animserver__CheckMachineRequest *in, srv_request_t *out) {
  srv_check_machine_request_t *r = &out->body.check_machine;
  int rc = check_text(d, &in->text);
  /* A file needs its name; text may go without one. */
  if (!rc && (in->text.len == 0 || in->name[0])) rc = srv_check_name(d, "name", in->name);
  if (!rc && in->database[0]) rc = srv_decode_database(d, "database", in->database);
  r->name = in->name, r->text = (const char *)in->text.data, r->len = in->text.len;
  return rc;
}

int srv_decode_list_machines(srv_decoder_t *d, const Animserver__ListMachinesRequest *in, srv_request_t *out) {
  return 0;
}

int srv_decode_unload_machine(srv_decoder_t *d, const Animserver__UnloadMachineRequest *in, srv_request_t *out) {
  out->body.unload_machine.name = in->name;
  return srv_check_name(d, "name", in->name);
}

int srv_decode_send_events(srv_decoder_t *d, const Animserver__SendEventsRequest *in, srv_request_t *out) {
  srv_send_events_request_t *r = &out->body.send_events;
  int rc = srv_check_max(d, "events", in->n_events, d->limits->max_ids, ANIM_ELIMIT);
  srv_event_item_t *items = rc ? NULL : srv_decode_alloc(d, (in->n_events + 1) * sizeof *items);
  if (!items) return rc ? rc : ANIM_ELIMIT;
  size_t mark = srv_path_field(d, "events");
  for (size_t i = 0; i < in->n_events; i++) {
    size_t item = srv_path_index(d, i);
    if ((rc = check_word(d, "event", in->events[i]->event))) return rc;
    items[i] = (srv_event_item_t){in->events[i]->character, in->events[i]->event};
    srv_path_restore(d, item);
  }
  srv_path_restore(d, mark);
  r->items = items, r->n = (int)in->n_events;
  return 0;
}

int srv_decode_set_params(srv_decoder_t *d, const Animserver__SetParamsRequest *in, srv_request_t *out) {
  srv_set_params_request_t *r = &out->body.set_params;
  int rc = srv_check_max(d, "params", in->n_params, d->limits->max_ids, ANIM_ELIMIT);
  srv_param_item_t *items = rc ? NULL : srv_decode_alloc(d, (in->n_params + 1) * sizeof *items);
  if (!items) return rc ? rc : ANIM_ELIMIT;
  size_t mark = srv_path_field(d, "params");
  for (size_t i = 0; i < in->n_params; i++) {
    const Animserver__CharacterParam *p = in->params[i];
    size_t item = srv_path_index(d, i);
    if ((rc = check_word(d, "name", p->name)) || (rc = srv_check_finite_value(d, "value", p->value))) return rc;
    items[i] = (srv_param_item_t){p->character, p->name, p->value};
    srv_path_restore(d, item);
  }
  srv_path_restore(d, mark);
  r->items = items, r->n = (int)in->n_params;
  return 0;
}

/* ---- encoding ---- */

static const char *const motion_names[] = {"none", "clip", "tag", "match", "blend", "machine"};

static Animserver__MachineState *encode_state(srv_encoder_t *e, const anim_state_machine_t *sm,
                                              const anim_sm_state_t *st) {
  Animserver__MachineState *m = SRV_ENCODER_NEW(e, Animserver__MachineState, ANIMSERVER__MACHINE_STATE__INIT);
  if (!m) return NULL;
  m->name = (char *)st->name;
  m->machine = (char *)sm->machines[st->machine].name;
  m->motion = (char *)motion_names[st->kind <= ANIM_SM_MOTION_MACHINE ? st->kind : 0];
  if (st->kind == ANIM_SM_MOTION_MACHINE) m->nested = (char *)sm->machines[st->nested].name;
  return m;
}

static Animserver__MachineSummary *encode_summary(srv_encoder_t *e, const srv_machine_summary_t *s) {
  Animserver__MachineSummary *m = SRV_ENCODER_NEW(e, Animserver__MachineSummary, ANIMSERVER__MACHINE_SUMMARY__INIT);
  const anim_state_machine_t *sm = s->machine;
  if (!m || !sm) return m;
  m->name = (char *)s->name, m->source = (char *)s->source, m->version = s->version;
  m->text_bytes = s->text_bytes, m->characters = s->characters;
  if (!(m->states = srv_encoder_alloc(e, (size_t)(sm->nstates + 1) * sizeof *m->states)) ||
      !(m->machines = srv_encoder_alloc(e, (size_t)(sm->nmachines + 1) * sizeof *m->machines)) ||
      !(m->events = srv_encoder_alloc(e, (size_t)(sm->nevents + 1) * sizeof *m->events)) ||
      !(m->params = srv_encoder_alloc(e, (size_t)(sm->nparams + 1) * sizeof *m->params)))
    return m;
  for (int i = 0; i < sm->nstates; i++) m->states[m->n_states++] = encode_state(e, sm, &sm->states[i]);
  for (int i = 0; i < sm->nmachines; i++) m->machines[m->n_machines++] = (char *)sm->machines[i].name;
  for (int i = 0; i < sm->nevents; i++) m->events[m->n_events++] = (char *)sm->events[i];
  for (int i = 0; i < sm->nparams; i++) {
    Animserver__MachineParam *p = SRV_ENCODER_NEW(e, Animserver__MachineParam, ANIMSERVER__MACHINE_PARAM__INIT);
    if (!p) return m;
    p->name = (char *)sm->params[i].name, p->initial = sm->params[i].initial;
    m->params[m->n_params++] = p;
  }
  m->max_transitions = (uint32_t)sm->max_transitions;
  m->halflife = sm->halflife;
  m->depth = (uint32_t)sm->depth;
  m->uses_matching = sm->has_match;
  return m;
}

void srv_encode_load_machine(srv_encoder_t *e, const srv_response_t *in, Animserver__Response *out) {
  Animserver__LoadMachineResponse *m =
      SRV_ENCODER_NEW(e, Animserver__LoadMachineResponse, ANIMSERVER__LOAD_MACHINE_RESPONSE__INIT);
  if (!m) return;
  m->machine = encode_summary(e, &in->body.load_machine.summary);
  out->body_case = ANIMSERVER__RESPONSE__BODY_LOAD_MACHINE, out->load_machine = m;
}

void srv_encode_check_machine(srv_encoder_t *e, const srv_response_t *in, Animserver__Response *out) {
  const srv_check_machine_response_t *r = &in->body.check_machine;
  Animserver__CheckMachineResponse *m =
      SRV_ENCODER_NEW(e, Animserver__CheckMachineResponse, ANIMSERVER__CHECK_MACHINE_RESPONSE__INIT);
  if (!m || !(m->diagnostics = srv_encoder_alloc(e, (size_t)(r->diagnostics.count + 1) * sizeof *m->diagnostics)))
    return;
  m->ok = r->ok;
  m->total = (uint32_t)r->diagnostics.total;
  for (int i = 0; i < r->diagnostics.count; i++) {
    const anim_sm_diagnostic_t *g = &r->diagnostics.items[i];
    Animserver__MachineDiagnostic *dm =
        SRV_ENCODER_NEW(e, Animserver__MachineDiagnostic, ANIMSERVER__MACHINE_DIAGNOSTIC__INIT);
    if (!dm) return;
    dm->problem = (char *)anim_sm_problem_name(g->problem);
    dm->line = (uint32_t)g->line, dm->column = (uint32_t)g->column;
    dm->message = (char *)g->message;
    m->diagnostics[m->n_diagnostics++] = dm;
  }
  if (r->ok) m->machine = encode_summary(e, &r->summary);
  out->body_case = ANIMSERVER__RESPONSE__BODY_CHECK_MACHINE, out->check_machine = m;
}

void srv_encode_list_machines(srv_encoder_t *e, const srv_response_t *in, Animserver__Response *out) {
  const srv_list_machines_response_t *r = &in->body.list_machines;
  Animserver__ListMachinesResponse *m =
      SRV_ENCODER_NEW(e, Animserver__ListMachinesResponse, ANIMSERVER__LIST_MACHINES_RESPONSE__INIT);
  if (!m || !(m->machines = srv_encoder_alloc(e, (size_t)(r->count + 1) * sizeof *m->machines))) return;
  for (int i = 0; i < r->count; i++) m->machines[m->n_machines++] = encode_summary(e, &r->summaries[i]);
  out->body_case = ANIMSERVER__RESPONSE__BODY_LIST_MACHINES, out->list_machines = m;
}

void srv_encode_unload_machine(srv_encoder_t *e, const srv_response_t *in, Animserver__Response *out) {
  Animserver__UnloadMachineResponse *m =
      SRV_ENCODER_NEW(e, Animserver__UnloadMachineResponse, ANIMSERVER__UNLOAD_MACHINE_RESPONSE__INIT);
  if (m) out->body_case = ANIMSERVER__RESPONSE__BODY_UNLOAD_MACHINE, out->unload_machine = m;
}

void srv_encode_send_events(srv_encoder_t *e, const srv_response_t *in, Animserver__Response *out) {
  Animserver__SendEventsResponse *m =
      SRV_ENCODER_NEW(e, Animserver__SendEventsResponse, ANIMSERVER__SEND_EVENTS_RESPONSE__INIT);
  if (!m) return;
  m->tick = in->body.send_events.tick;
  out->body_case = ANIMSERVER__RESPONSE__BODY_SEND_EVENTS, out->send_events = m;
}

void srv_encode_set_params(srv_encoder_t *e, const srv_response_t *in, Animserver__Response *out) {
  Animserver__SetParamsResponse *m =
      SRV_ENCODER_NEW(e, Animserver__SetParamsResponse, ANIMSERVER__SET_PARAMS_RESPONSE__INIT);
  if (!m) return;
  m->tick = in->body.set_params.tick;
  out->body_case = ANIMSERVER__RESPONSE__BODY_SET_PARAMS, out->set_params = m;
}
