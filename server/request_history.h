/*
 * request_history.h: bodies of set_history, character_history and
 * set_character_params, the debugger's requests (see request.h).
 *
 * What it does not: check or run them (codec_history.c, service_history.c).
 */
#ifndef SRV_REQUEST_HISTORY_H
#define SRV_REQUEST_HISTORY_H

#include <stddef.h>
#include <stdint.h>
#include "character/controller.h"
#include "character/history.h"

#define SRV_HISTORY_DEFAULT_CANDIDATES 8

typedef struct {
  uint64_t character;
  float seconds;  /* 0: off; the codec checked it finite and >= 0, the service against the server's bound */
  int candidates; /* 1..ANIM_HISTORY_MAX_CANDIDATES (the default filled in) */
} srv_set_history_request_t;

typedef struct {
  uint32_t capacity; /* 0: off */
  uint64_t bytes, tick;
} srv_set_history_response_t;

typedef struct {
  uint64_t character;
  uint64_t from_tick, to_tick; /* both 0 with last_seconds */
  float last_seconds;          /* > 0: the last seconds instead of a tick range */
  int poses, queries;
} srv_character_history_request_t;

/* The span, read in place from the character's history (the service runs
 * and the encoder reads between ticks, before the next tick records). */
typedef struct {
  const anim_history_t *history;
  uint64_t first_held, last_held; /* ticks held */
  uint64_t first, count;          /* the span: records [first, first + count) in anim_history_at's order */
  int poses, queries;
  float tick_rate;
} srv_character_history_response_t;

/* params: the fields the client gave (non-zero), the others 0 (kept); the
 * warp's on/off flags (warp.rate, .stand, .orient) -1 when not given. */
typedef struct {
  uint64_t character;
  anim_controller_params_t params;
} srv_set_character_params_request_t;

typedef struct {
  uint64_t tick;
  anim_controller_params_t params; /* in effect now */
} srv_set_character_params_response_t;

#endif
