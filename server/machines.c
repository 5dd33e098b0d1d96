/* machines.c: named state machines and their bindings (see machines.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "base/hash.h"
#include "machines.h"

uint64_t srv_machine_version(const char *text, size_t len) { return anim_hash64(text, len, 0); }

srv_machine_def_t *srv_machine_def_create(const char *name, int from_file, const char *text, size_t len,
                                          anim_sm_diagnostics_t *out_diagnostics, int *out_code, char *err,
                                          int errlen) {
  srv_machine_def_t *def = calloc(1, sizeof *def);
  if (def) def->text = malloc(len + 1);
  if (!def || !def->text) {
    free(def);
    snprintf(err, (size_t)errlen, "out of memory");
    *out_code = ANIM_ENOMEM;
    return NULL;
  }
  snprintf(def->name, sizeof def->name, "%s", name);
  if (from_file) snprintf(def->source, sizeof def->source, "%s.machine", name);
  else snprintf(def->source, sizeof def->source, "request");
  snprintf(def->label, sizeof def->label, from_file ? "%s.machine" : "%s", name);
  memcpy(def->text, text, len);
  def->text[len] = '\0';
  def->len = len;
  def->version = srv_machine_version(text, len);
  def->parsed = anim_state_machine_parse(def->text, len, def->label, out_diagnostics, err, errlen);
  if (!def->parsed) {
    *out_code = strcmp(err, "out of memory") == 0 ? ANIM_ENOMEM : ANIM_EFORMAT;
    srv_machine_def_free(def);
    return NULL;
  }
  *out_code = 0;
  return def;
}

void srv_machine_def_free(srv_machine_def_t *def) {
  if (!def) return;
  anim_state_machine_free(def->parsed);
  free(def->text);
  free(def);
}

static int find(const srv_machines_t *m, const char *name) {
  for (int i = 0; i < m->count; i++)
    if (strcmp(m->defs[i]->name, name) == 0) return i;
  return -1;
}

const srv_machine_def_t *srv_machines_find(const srv_machines_t *m, const char *name) {
  int i = find(m, name);
  return i >= 0 ? m->defs[i] : NULL;
}

int srv_machines_put(srv_machines_t *m, srv_machine_def_t *def, int replace) {
  int i = find(m, def->name);
  if (i >= 0 && !replace) return ANIM_EEXIST;
  if (i < 0 && m->count == SRV_MACHINES_MAX) return ANIM_ELIMIT;
  def->id = ++m->next_id;
  if (i >= 0) {
    srv_machine_def_free(m->defs[i]);
    m->defs[i] = def;
  } else {
    m->defs[m->count++] = def;
  }
  return 0;
}

int srv_machines_remove(srv_machines_t *m, const char *name) {
  int i = find(m, name);
  if (i < 0) return ANIM_ENOTFOUND;
  srv_machine_def_free(m->defs[i]);
  m->defs[i] = m->defs[--m->count];
  return 0;
}

int srv_machines_bind(srv_machines_t *m, const srv_machine_def_t *def, const srv_db_entry_t *entry,
                      srv_bound_machine_t **out_bound, anim_sm_diagnostics_t *out_diagnostics, char *err, int errlen) {
  *out_bound = NULL;
  for (srv_bound_machine_t *b = m->bound; b; b = b->next)
    if (b->def_id == def->id && b->entry == entry) return *out_bound = srv_bound_machine_retain(b), 0;
  srv_bound_machine_t *b = calloc(1, sizeof *b);
  /* A machine is bound in place (state_machine.h): each database gets its own parse. */
  if (b) b->machine = anim_state_machine_parse(def->text, def->len, def->label, out_diagnostics, err, errlen);
  if (!b || !b->machine) {
    free(b);
    snprintf(err, (size_t)errlen, "out of memory");
    return ANIM_ENOMEM; /* it parsed once: only memory can fail it now */
  }
  int rc = anim_state_machine_bind(b->machine, &entry->db, out_diagnostics, err, errlen);
  if (rc) {
    anim_state_machine_free(b->machine);
    free(b);
    return rc;
  }
  b->owner = m;
  b->def_id = def->id;
  b->entry = entry;
  snprintf(b->name, sizeof b->name, "%s", def->name);
  b->refs = 1;
  b->next = m->bound;
  if (m->bound) m->bound->prev = b;
  m->bound = b;
  *out_bound = b;
  return 0;
}

srv_bound_machine_t *srv_bound_machine_retain(srv_bound_machine_t *b) {
  if (b) b->refs++;
  return b;
}

static void unlink_free(srv_bound_machine_t *b) {
  if (b->prev) b->prev->next = b->next;
  else b->owner->bound = b->next;
  if (b->next) b->next->prev = b->prev;
  anim_state_machine_free(b->machine);
  free(b);
}

void srv_bound_machine_release(srv_bound_machine_t *b) {
  if (b && --b->refs == 0) unlink_free(b);
}

uint32_t srv_machines_users(const srv_machines_t *m, uint64_t def_id) {
  uint32_t n = 0;
  for (const srv_bound_machine_t *b = m->bound; b; b = b->next)
    if (b->def_id == def_id) n += (uint32_t)b->refs;
  return n;
}

void srv_machines_clear(srv_machines_t *m) {
  while (m->bound) unlink_free(m->bound);
  for (int i = 0; i < m->count; i++) srv_machine_def_free(m->defs[i]);
  m->count = 0;
}
