/*
 * machines.h: the server's named action state machines
 * (core/machine/state_machine.h) and their bindings to databases.
 *
 * A loaded machine (a def) keeps its text and a parse of it, which answers
 * summaries. Characters run a binding: the text parsed again and bound to
 * their database entry (ranges, tags, spans resolved), made when the first
 * character of that machine on that entry needs it and shared by every
 * later one; bindings are reference-counted on the loop thread and freed
 * with their last character. Replacing or unloading a machine leaves its
 * bindings alone: characters run on with what they started with.
 *
 * What this does not do: read files or run machines (service_machine.c,
 * actor_machine.c). Loop thread only, but srv_machine_def_create.
 */
#ifndef SRV_MACHINES_H
#define SRV_MACHINES_H

#include <stddef.h>
#include <stdint.h>
#include "registry.h"
#include "machine/state_machine.h"

#define SRV_MACHINES_MAX 64              /* loaded at once */
#define SRV_MACHINE_MAX_TEXT (1u << 20)  /* bytes of one machine's text (the parser's limit) */

typedef struct srv_machine_def {
  char name[64];
  char source[80];                  /* "NAME.machine" or "request" */
  char label[80];                   /* what messages call it: "NAME.machine", or NAME */
  uint64_t id;                      /* unique per load, set by srv_machines_put */
  uint64_t version;                 /* hash of the text */
  char *text;
  size_t len;
  anim_state_machine_t *parsed;     /* unbound: summaries */
} srv_machine_def_t;

typedef struct srv_bound_machine {
  struct srv_machines *owner;
  uint64_t def_id;
  const srv_db_entry_t *entry;      /* identity only: its characters hold the entry */
  char name[64];
  anim_state_machine_t *machine;    /* bound to entry->db */
  int refs;
  struct srv_bound_machine *prev, *next;
} srv_bound_machine_t;

typedef struct srv_machines {
  srv_machine_def_t *defs[SRV_MACHINES_MAX];
  int count;
  uint64_t next_id;
  srv_bound_machine_t *bound;
} srv_machines_t;

/* A machine's version: the hash of its text, as load, list, describe and
 * check report it (check_machine once said 0: it made its summary apart). */
uint64_t srv_machine_version(const char *text, size_t len);

/* Parses text (len bytes, copied) as machine `name`, from a file of the
 * data directory (NAME.machine, which messages name) or not (a request's
 * text: messages name it NAME). The def, or NULL with every problem in
 * out_diagnostics (optional) and the first in err (ANIM_EFORMAT then, or
 * ANIM_ENOMEM: *out_code). Any thread. */
srv_machine_def_t *srv_machine_def_create(const char *name, int from_file, const char *text, size_t len,
                                          anim_sm_diagnostics_t *out_diagnostics, int *out_code, char *err,
                                          int errlen);
void srv_machine_def_free(srv_machine_def_t *def);

const srv_machine_def_t *srv_machines_find(const srv_machines_t *machines, const char *name);
/* Adds def (taken over) under its name. ANIM_EEXIST (the name is loaded and
 * replace is 0) or ANIM_ELIMIT (SRV_MACHINES_MAX): def is not taken then. */
int srv_machines_put(srv_machines_t *machines, srv_machine_def_t *def, int replace);
/* ANIM_ENOTFOUND when name is not loaded. */
int srv_machines_remove(srv_machines_t *machines, const char *name);

/* def bound to entry's database in *out_bound, a new reference: the
 * existing binding or a new one. 0, or anim_state_machine_bind's code
 * (ANIM_ENOTFOUND, ANIM_ERANGE) or ANIM_ENOMEM with the binding's problems
 * in out_diagnostics (optional) and the first in err. */
int srv_machines_bind(srv_machines_t *machines, const srv_machine_def_t *def, const srv_db_entry_t *entry,
                      srv_bound_machine_t **out_bound, anim_sm_diagnostics_t *out_diagnostics, char *err, int errlen);
srv_bound_machine_t *srv_bound_machine_retain(srv_bound_machine_t *bound);
void srv_bound_machine_release(srv_bound_machine_t *bound);

/* References to def_id's bindings: the characters running it. */
uint32_t srv_machines_users(const srv_machines_t *machines, uint64_t def_id);

/* Frees every def and binding (the server's end, after its characters). */
void srv_machines_clear(srv_machines_t *machines);

#endif
