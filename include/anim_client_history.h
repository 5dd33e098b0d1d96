/*
 * anim_client_history.h: a motion-matching character's recent ticks and its
 * parameters changed live, for a debugger (part of the client library;
 * include anim_client.h).
 *
 * A character's history is off until its owner turns it on with a length in
 * seconds (anim_client_history_set): the server then keeps a ring of its
 * last ticks: the frame shown, the pose, the inertialization state, and for
 * each tick that searched, why, the query and its settings, and the top
 * candidates with their costs by feature group (the list a search of that
 * query with those settings returns: anim_client_search). Any connection
 * may read a span of it (anim_client_history_get), by tick range or the
 * last seconds; a span outside what is held is refused (ANIM_ERANGE, the
 * message naming the ticks held). The history's memory is counted against
 * the server's limits (ANIM_ELIMIT when it would pass one).
 *
 * anim_client_character_params_set changes the owner's character's
 * controller parameters from the next tick on; character_state shows them
 * (anim_character_state_t.params). Every request has a blocking form and a
 * _send form with a typed callback (results valid during the callback only).
 */
#ifndef ANIM_CLIENT_HISTORY_H
#define ANIM_CLIENT_HISTORY_H

#include "anim_client_character.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Why a tick searched: bits of anim_history_tick_t.reasons. */
enum {
  ANIM_SEARCH_REASON_PERIODIC = 1,  /* search_interval frames since the last search */
  ANIM_SEARCH_REASON_REPLAN = 2,    /* the desired velocity moved by more than replan_threshold */
  ANIM_SEARCH_REASON_RANGE_END = 4  /* the clip was ending */
};

/* What anim_client_history_set did. */
typedef struct {
  uint32_t capacity; /* ticks the ring holds (0: off) */
  uint64_t bytes;    /* its memory as the server counts it */
  uint64_t tick;     /* the first tick it records */
} anim_history_info_t;

/* A span: ticks [from_tick, to_tick], or (last_seconds > 0, ticks 0) the last seconds. */
typedef struct {
  uint64_t from_tick, to_tick;
  float last_seconds;
  int poses;   /* each tick's pose (root position, local rotations) */
  int queries; /* each search's normalized query */
} anim_history_span_t;

typedef struct {
  uint32_t frame, range;
  char range_name[64];
  float cost;               /* transition cost included, as a search reports it */
  const float *group_costs; /* ngroups, anim_character_history_t.groups' order */
} anim_history_candidate_t;

typedef struct {
  uint64_t tick;
  uint32_t frame;           /* shown after the tick (what the stream showed) */
  int searched;
  int chosen;               /* the search's best frame; -1 without a search */
  unsigned reasons;         /* ANIM_SEARCH_REASON_* bits */
  int transitioned, at_rest, holding;
  /* The search's settings (when searched); current_frame -1 when it did not compete. */
  int current_frame;
  float transition_cost;
  int ignore_range_end, ignore_surrounding;
  int ncandidates;
  const anim_history_candidate_t *candidates; /* ascending cost */
  int nquery;               /* when asked: the normalized query */
  const float *query;
  float time_since_transition, inertialize_halflife; /* s */
  float offset_position[3]; /* m, the root's inertialization offset */
  float offset_angle;       /* radians, the largest bone rotation offset */
  float root_position[3];   /* when poses were asked: the root in the world */
  int nbones;
  const float *rotations;   /* 4 x nbones (w, x, y, z), bone 0's in the world */
} anim_history_tick_t;

/* Owned by the library: anim_character_history_free. */
typedef struct {
  uint64_t database_version;
  uint64_t first_tick, last_tick; /* held now */
  uint32_t capacity;
  float tick_rate;                /* Hz */
  int ngroups;
  const char *const *groups;      /* feature group names ("LeftFoot position", "trajectory direction") */
  int nticks;
  const anim_history_tick_t *ticks; /* oldest first; a tick the server skipped is absent */
} anim_character_history_t;

/* NULL is ignored. */
void anim_character_history_free(anim_character_history_t *history);

typedef void (*anim_history_set_cb)(anim_client_t *client, uint64_t id, int status, const anim_history_info_t *info,
                                    void *data);
typedef void (*anim_character_history_cb)(anim_client_t *client, uint64_t id, int status,
                                          const anim_character_history_t *history, void *data);
typedef void (*anim_character_params_cb)(anim_client_t *client, uint64_t id, int status,
                                         const anim_character_params_t *params, void *data);

/* Turns the history of the caller's motion-matching character on for the
 * last `seconds` (a new, empty ring; at most the server's
 * --max-history-seconds) keeping `candidates` per search (0: 8; at most
 * 64), or off (seconds 0). out_info may be NULL. ANIM_ENOTFOUND,
 * ANIM_EPERM (another connection's), ANIM_EUNSUPPORTED (another mode),
 * ANIM_ERANGE (seconds), ANIM_ELIMIT (memory). */
int anim_client_history_set(anim_client_t *client, uint64_t character, float seconds, int candidates,
                            anim_history_info_t *out_info, int timeout_ms);
int anim_client_history_set_send(anim_client_t *client, uint64_t character, float seconds, int candidates,
                                 anim_history_set_cb cb, void *data, uint64_t *out_id);

/* A span of any character's history into *out_history (free with
 * anim_character_history_free). ANIM_ENOTFOUND (no such character, or its
 * history is off), ANIM_ERANGE (the span reaches outside what is held),
 * ANIM_EINVAL (both a tick range and last_seconds, from after to). */
int anim_client_history_get(anim_client_t *client, uint64_t character, const anim_history_span_t *span,
                            anim_character_history_t **out_history, int timeout_ms);
int anim_client_history_get_send(anim_client_t *client, uint64_t character, const anim_history_span_t *span,
                                 anim_character_history_cb cb, void *data, uint64_t *out_id);

/* Changes the caller's motion-matching character's parameters from the
 * next tick on: the non-zero fields of params, the others kept. Each field
 * is checked (the error names it) before any is applied; nothing is applied
 * in part. out_params (may be NULL): every parameter now in effect. */
int anim_client_character_params_set(anim_client_t *client, uint64_t character, const anim_character_params_t *params,
                                     anim_character_params_t *out_params, int timeout_ms);
int anim_client_character_params_set_send(anim_client_t *client, uint64_t character,
                                          const anim_character_params_t *params, anim_character_params_cb cb,
                                          void *data, uint64_t *out_id);

#ifdef __cplusplus
}
#endif
#endif
