/*
 * request_machine.h: bodies of the state machine requests: load_machine,
 * check_machine, list_machines, unload_machine, send_events, set_params
 * (see request.h).
 */
#ifndef SRV_REQUEST_MACHINE_H
#define SRV_REQUEST_MACHINE_H

#include <stddef.h>
#include <stdint.h>
#include "machine/state_machine.h"

/* load_machine and check_machine: text, or (len 0) the file NAME.machine. */
typedef struct {
  const char *name;     /* a plain name; check_machine: "" when text names no file */
  const char *text;     /* len bytes, not NUL-terminated */
  size_t len;
  int replace;
} srv_load_machine_request_t;

typedef struct {
  const char *name;
  const char *text;
  size_t len;
  /* the database to bind to: srv_request_t.database, or NULL */
} srv_check_machine_request_t;

typedef srv_no_body_t srv_list_machines_request_t;

typedef struct {
  const char *name;
} srv_unload_machine_request_t;

typedef struct {
  uint64_t character;
  const char *event;
} srv_event_item_t;

typedef struct {
  const srv_event_item_t *items;
  int n;
} srv_send_events_request_t;

typedef struct {
  uint64_t character;
  const char *name;
  float value;
} srv_param_item_t;

typedef struct {
  const srv_param_item_t *items;
  int n;
} srv_set_params_request_t;

/* A machine as the summaries report it: copies of what the encoder reads
 * (the machine may be replaced before the answer is encoded). */
typedef struct {
  char name[64];
  char source[80];
  uint64_t version;
  uint32_t text_bytes, characters;
  const anim_state_machine_t *machine; /* response-held parse (see srv_response_t.held) or NULL */
} srv_machine_summary_t;

typedef struct {
  srv_machine_summary_t summary;
} srv_load_machine_response_t;

typedef struct {
  int ok;
  anim_sm_diagnostics_t diagnostics;
  srv_machine_summary_t summary; /* when ok */
} srv_check_machine_response_t;

typedef struct {
  srv_machine_summary_t *summaries; /* response-owned */
  int count;
} srv_list_machines_response_t;

typedef srv_no_body_t srv_unload_machine_response_t;

typedef struct {
  uint64_t tick; /* the tick that takes them */
} srv_send_events_response_t;
typedef srv_send_events_response_t srv_set_params_response_t;

#endif
