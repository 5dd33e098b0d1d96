/*
 * anim_client_machine.h: action state machines over the wire (part of the
 * client library; include anim_client.h; the text format is in the README,
 * "The machine text format").
 *
 * A machine is loaded once by name (from text, or checked first without
 * loading); characters run it when created with ANIM_MODE_MACHINE
 * (anim_client_characters_create_mode) and are driven by events and named
 * parameters. Their stream poses carry the active state path as indices
 * into the summary's states (anim_character_pose_t.state_path). Every
 * request has a blocking form and a _send form with a typed callback
 * (results valid during the callback only, NULL when status != 0).
 */
#ifndef ANIM_CLIENT_MACHINE_H
#define ANIM_CLIENT_MACHINE_H

#include "anim_client_session.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  char name[64];
  char machine[64]; /* the machine it belongs to ("" the root) */
  char motion[16];  /* "clip", "tag", "match", "blend" or "machine" */
} anim_machine_state_t;

/* A loaded (or checked) machine. Owned by the library when returned by
 * pointer: anim_machine_summary_free. */
typedef struct {
  char name[64];
  uint64_t version;           /* hash of the text */
  char source[128];           /* "NAME.machine" (data directory) or "request" */
  uint32_t text_bytes;
  int nstates;
  anim_machine_state_t *states; /* state i is index i in stream state paths */
  int nevents;
  char (*events)[64];         /* "END", "AUTO", then in order of appearance */
  int nparams;
  char (*params)[64];
  uint32_t max_transitions, depth, characters;
  float halflife;             /* default inertialization half-life, s */
  int uses_matching;          /* a state runs motion matching */
} anim_machine_summary_t;

void anim_machine_summary_free(anim_machine_summary_t *summary);

typedef struct {
  char problem[32];  /* "SYNTAX", "UNKNOWN_TARGET", "UNREACHABLE", ... */
  uint32_t line, column;
  char message[256]; /* "file:line:column: what" */
} anim_machine_diagnostic_t;

/* check's answer; anim_machine_check_free. */
typedef struct {
  int ok;
  uint32_t total;                         /* problems found (the list may stop earlier) */
  int ndiagnostics;
  anim_machine_diagnostic_t *diagnostics;
  anim_machine_summary_t *machine;        /* when ok */
} anim_machine_check_t;

void anim_machine_check_free(anim_machine_check_t *check);

typedef void (*anim_machine_summary_cb)(anim_client_t *client, uint64_t id, int status,
                                        const anim_machine_summary_t *summary, void *data);
typedef void (*anim_machine_check_cb)(anim_client_t *client, uint64_t id, int status, const anim_machine_check_t *check,
                                      void *data);
/* machines: count summaries. */
typedef void (*anim_machine_list_cb)(anim_client_t *client, uint64_t id, int status,
                                     const anim_machine_summary_t *const *machines, int count, void *data);

/* Loads text (len bytes) as machine `name`; replace allows a new version
 * of a loaded name (running characters keep theirs). *out_summary (may be
 * NULL) gets the loaded machine. ANIM_EFORMAT with the problems in
 * anim_client_last_error when the text does not check. */
int anim_client_machine_load(anim_client_t *client, const char *name, const char *text, size_t len, int replace,
                             anim_machine_summary_t **out_summary, int timeout_ms);
int anim_client_machine_load_send(anim_client_t *client, const char *name, const char *text, size_t len, int replace,
                                  anim_machine_summary_cb cb, void *data, uint64_t *out_id);
/* Checks text without loading it; with a database also binds it there
 * (unknown ranges and tags). 0 whether or not the text is valid: see ok. */
int anim_client_machine_check(anim_client_t *client, const char *name, const char *text, size_t len,
                              const char *database, anim_machine_check_t **out_check, int timeout_ms);
int anim_client_machine_check_send(anim_client_t *client, const char *name, const char *text, size_t len,
                                   const char *database, anim_machine_check_cb cb, void *data, uint64_t *out_id);
/* The loaded machines (*out_count of them; anim_machine_summary_free each, then free the array). */
int anim_client_machine_list(anim_client_t *client, anim_machine_summary_t ***out_machines, int *out_count,
                             int timeout_ms);
int anim_client_machine_list_send(anim_client_t *client, anim_machine_list_cb cb, void *data, uint64_t *out_id);
int anim_client_machine_unload(anim_client_t *client, const char *name, int timeout_ms);
int anim_client_machine_unload_send(anim_client_t *client, const char *name, anim_status_cb cb, void *data,
                                    uint64_t *out_id);

/* Events for the next tick: events[i] to characters[i] (this connection's
 * machine characters). All checked before any is queued. */
int anim_client_machine_events(anim_client_t *client, const uint64_t *characters, const char *const *events, int n,
                               uint64_t *out_tick, int timeout_ms);
int anim_client_machine_events_send(anim_client_t *client, const uint64_t *characters, const char *const *events,
                                    int n, anim_status_cb cb, void *data, uint64_t *out_id);
/* Named parameters (e.g. a blend state's "speed") for the next tick. */
int anim_client_machine_params(anim_client_t *client, const uint64_t *characters, const char *const *names,
                               const float *values, int n, uint64_t *out_tick, int timeout_ms);
int anim_client_machine_params_send(anim_client_t *client, const uint64_t *characters, const char *const *names,
                                    const float *values, int n, anim_status_cb cb, void *data, uint64_t *out_id);

#ifdef __cplusplus
}
#endif
#endif
