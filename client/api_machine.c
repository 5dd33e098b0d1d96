/*
 * api_machine.c: action state machines (see include/anim_client_machine.h).
 *
 * load, check, list and unload machines, and the events and parameters
 * that drive machine characters: each a _send with its typed completion
 * (answers converted by convert_machine.c), the blocking form that send
 * plus a wait for its id. Creating machine characters is api_character.c's.
 */
#include <stdlib.h>
#include "client_internal.h"
#include "convert.h"

/* ---- load ------------------------------------------------------------------------------------ */

static void load_complete(anim_client_t *client, anim__pending_t *p, int status, const Animserver__Response *r) {
  anim_machine_summary_t *s = NULL;
  if (status == 0) status = anim__client_check_answer(client, anim__machine_load_from(r->load_machine, &s));
  if (anim__pending_deliver(p, status, &s, sizeof s)) return;
  anim_machine_summary_cb cb = (anim_machine_summary_cb)p->cb;
  if (cb) cb(client, p->id, status, s, p->data);
  anim_machine_summary_free(s);
}

int anim_client_machine_load_send(anim_client_t *client, const char *name, const char *text, size_t len, int replace,
                                  anim_machine_summary_cb cb, void *data, uint64_t *out_id) {
  if (!client || !name || (!text && len)) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__LoadMachineRequest load = ANIMSERVER__LOAD_MACHINE_REQUEST__INIT;
  load.name = (char *)name, load.replace = replace != 0;
  load.text.data = (uint8_t *)text, load.text.len = len;
  request.body_case = ANIMSERVER__REQUEST__BODY_LOAD_MACHINE, request.load_machine = &load;
  return anim__client_send(client, &request, ANIMSERVER__RESPONSE__BODY_LOAD_MACHINE, load_complete, (anim__cb_fn)cb,
                           data, out_id);
}

int anim_client_machine_load(anim_client_t *client, const char *name, const char *text, size_t len, int replace,
                             anim_machine_summary_t **out_summary, int timeout_ms) {
  if (out_summary) *out_summary = NULL;
  if (!client) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  anim_machine_summary_t *s = NULL;
  int rc;
  ANIM__CLIENT_RUN(rc, client, timeout_ms, &s, sizeof s,
                   anim_client_machine_load_send(client, name, text, len, replace, NULL, NULL, &id_));
  if (out_summary) *out_summary = s;
  else anim_machine_summary_free(s);
  return rc;
}

/* ---- check ----------------------------------------------------------------------------------- */

static void check_complete(anim_client_t *client, anim__pending_t *p, int status, const Animserver__Response *r) {
  anim_machine_check_t *c = NULL;
  if (status == 0) status = anim__client_check_answer(client, anim__machine_check_from(r->check_machine, &c));
  if (anim__pending_deliver(p, status, &c, sizeof c)) return;
  anim_machine_check_cb cb = (anim_machine_check_cb)p->cb;
  if (cb) cb(client, p->id, status, c, p->data);
  anim_machine_check_free(c);
}

int anim_client_machine_check_send(anim_client_t *client, const char *name, const char *text, size_t len,
                                   const char *database, anim_machine_check_cb cb, void *data, uint64_t *out_id) {
  if (!client || !name || (!text && len)) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__CheckMachineRequest check = ANIMSERVER__CHECK_MACHINE_REQUEST__INIT;
  check.name = (char *)name, check.database = (char *)(database ? database : "");
  check.text.data = (uint8_t *)text, check.text.len = len;
  request.body_case = ANIMSERVER__REQUEST__BODY_CHECK_MACHINE, request.check_machine = &check;
  return anim__client_send(client, &request, ANIMSERVER__RESPONSE__BODY_CHECK_MACHINE, check_complete,
                           (anim__cb_fn)cb, data, out_id);
}

int anim_client_machine_check(anim_client_t *client, const char *name, const char *text, size_t len,
                              const char *database, anim_machine_check_t **out_check, int timeout_ms) {
  if (out_check) *out_check = NULL;
  if (!client || !out_check) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  int rc;
  ANIM__CLIENT_RUN(rc, client, timeout_ms, out_check, sizeof *out_check,
                   anim_client_machine_check_send(client, name, text, len, database, NULL, NULL, &id_));
  return rc;
}

/* ---- list ------------------------------------------------------------------------------------ */

typedef struct {
  anim_machine_summary_t **machines; /* the blocking caller's once delivered */
  int count;
} machines_t;

static void list_complete(anim_client_t *client, anim__pending_t *p, int status, const Animserver__Response *r) {
  machines_t m = {NULL, 0};
  if (status == 0)
    status = anim__client_check_answer(client, anim__machine_list_from(r->list_machines, &m.machines, &m.count));
  if (anim__pending_deliver(p, status, &m, sizeof m)) return;
  anim_machine_list_cb cb = (anim_machine_list_cb)p->cb;
  if (cb) cb(client, p->id, status, (const anim_machine_summary_t *const *)m.machines, m.count, p->data);
  anim__machine_list_free(m.machines, m.count);
}

int anim_client_machine_list_send(anim_client_t *client, anim_machine_list_cb cb, void *data, uint64_t *out_id) {
  if (!client) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__ListMachinesRequest list = ANIMSERVER__LIST_MACHINES_REQUEST__INIT;
  request.body_case = ANIMSERVER__REQUEST__BODY_LIST_MACHINES, request.list_machines = &list;
  return anim__client_send(client, &request, ANIMSERVER__RESPONSE__BODY_LIST_MACHINES, list_complete, (anim__cb_fn)cb,
                           data, out_id);
}

int anim_client_machine_list(anim_client_t *client, anim_machine_summary_t ***out_machines, int *out_count,
                             int timeout_ms) {
  if (!client || !out_machines || !out_count) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  *out_machines = NULL, *out_count = 0;
  machines_t m = {NULL, 0};
  int rc;
  ANIM__CLIENT_RUN(rc, client, timeout_ms, &m, sizeof m, anim_client_machine_list_send(client, NULL, NULL, &id_));
  *out_machines = m.machines, *out_count = m.count;
  return rc;
}

/* ---- unload ---------------------------------------------------------------------------------- */

int anim_client_machine_unload_send(anim_client_t *client, const char *name, anim_status_cb cb, void *data,
                                    uint64_t *out_id) {
  if (!client || !name) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__UnloadMachineRequest unload = ANIMSERVER__UNLOAD_MACHINE_REQUEST__INIT;
  unload.name = (char *)name;
  request.body_case = ANIMSERVER__REQUEST__BODY_UNLOAD_MACHINE, request.unload_machine = &unload;
  return anim__client_send(client, &request, ANIMSERVER__RESPONSE__BODY_UNLOAD_MACHINE, anim__client_status_complete,
                           (anim__cb_fn)cb, data, out_id);
}

int anim_client_machine_unload(anim_client_t *client, const char *name, int timeout_ms) {
  if (!client) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  uint64_t unused;
  int rc;
  ANIM__CLIENT_RUN(rc, client, timeout_ms, &unused, sizeof unused,
                   anim_client_machine_unload_send(client, name, NULL, NULL, &id_));
  return rc;
}

/* ---- events and parameters: answered by the tick that takes them ---------------------------------- */

static void tick_complete(anim_client_t *client, anim__pending_t *p, int status, const Animserver__Response *r) {
  uint64_t tick = 0;
  if (status == 0)
    tick = p->expect == ANIMSERVER__RESPONSE__BODY_SEND_EVENTS ? r->send_events->tick : r->set_params->tick;
  anim__client_complete_status(client, p, status, tick);
}

int anim_client_machine_events_send(anim_client_t *client, const uint64_t *characters, const char *const *events,
                                    int n, anim_status_cb cb, void *data, uint64_t *out_id) {
  if (!client) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  anim__machine_items_views_t v;
  int rc = anim__events_to_proto(characters, events, n, &v);
  if (rc) return anim__client_refuse(client, rc, __func__);
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  request.body_case = ANIMSERVER__REQUEST__BODY_SEND_EVENTS, request.send_events = &v.events;
  rc = anim__client_send(client, &request, ANIMSERVER__RESPONSE__BODY_SEND_EVENTS, tick_complete, (anim__cb_fn)cb, data,
                         out_id);
  anim__machine_items_free(&v);
  return rc;
}

int anim_client_machine_events(anim_client_t *client, const uint64_t *characters, const char *const *events, int n,
                               uint64_t *out_tick, int timeout_ms) {
  if (!client) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  uint64_t tick = 0;
  int rc;
  ANIM__CLIENT_RUN(rc, client, timeout_ms, &tick, sizeof tick,
                   anim_client_machine_events_send(client, characters, events, n, NULL, NULL, &id_));
  if (rc == 0 && out_tick) *out_tick = tick;
  return rc;
}

int anim_client_machine_params_send(anim_client_t *client, const uint64_t *characters, const char *const *names,
                                    const float *values, int n, anim_status_cb cb, void *data, uint64_t *out_id) {
  if (!client) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  anim__machine_items_views_t v;
  int rc = anim__params_to_proto(characters, names, values, n, &v);
  if (rc) return anim__client_refuse(client, rc, __func__);
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  request.body_case = ANIMSERVER__REQUEST__BODY_SET_PARAMS, request.set_params = &v.params;
  rc = anim__client_send(client, &request, ANIMSERVER__RESPONSE__BODY_SET_PARAMS, tick_complete, (anim__cb_fn)cb, data,
                         out_id);
  anim__machine_items_free(&v);
  return rc;
}

int anim_client_machine_params(anim_client_t *client, const uint64_t *characters, const char *const *names,
                               const float *values, int n, uint64_t *out_tick, int timeout_ms) {
  if (!client) return anim__client_refuse(client, ANIM_EINVAL, __func__);
  uint64_t tick = 0;
  int rc;
  ANIM__CLIENT_RUN(rc, client, timeout_ms, &tick, sizeof tick,
                   anim_client_machine_params_send(client, characters, names, values, n, NULL, NULL, &id_));
  if (rc == 0 && out_tick) *out_tick = tick;
  return rc;
}
