/*
 * state_machine.h: action state machines, their text format, the checks
 * made on them, and their binding to a database.
 *
 * A machine is a set of states, one of them current; each state plays a
 * motion and lists transitions, each fired by a named event. The seed's
 * text (003_*) is valid as is:
 *
 *   stand        { JUMP_PRESS stand2crouch }
 *   stand2crouch { JUMP_RELEASE hop  END crouch }
 *
 * What this file does: parse the text (anim_state_machine_parse), check it
 * (unknown targets, unreachable states, cycles of immediate transitions...,
 * every problem named by file, line and column), and resolve its names in a
 * database (anim_state_machine_bind). It does not run a machine: that is
 * machine_character.h. A parsed machine is read-only and may be shared.
 *
 * ---- Grammar ----------------------------------------------------------------
 * Words are separated by white space; '#' starts a comment to the end of the
 * line. A word is a run of letters, digits and _ . + - (a number when the
 * whole word reads as a finite number, else a name), a quoted "name" (no
 * newline or quote inside), or one of { } ( ) [ ]. Names are at most
 * ANIM_NAME_MAX - 1 bytes. Where a name is expected a number-like word is
 * taken as a name; quote it where a number would be read.
 *
 *   file       = { setting | param | machine | state } ;
 *   setting    = "max_transitions" INTEGER     -- 1..64 transitions one tick may
 *                                                take (default 4); the rest wait
 *              | "halflife" NUMBER             -- default inertialization
 *                                                half-life, s, > 0 (default 0.1)
 *   param      = "param" NAME NUMBER           -- a named parameter, its initial value
 *   machine    = "machine" NAME "{" state { state } "}"   -- a nested machine
 *   state      = NAME "{" { motion | transition } "}"
 *   motion     = "clip" clip [ "loop" ]        -- a database range (or a span of it)
 *              | "tag" NAME [ "loop" ]         -- ranges with this tag, in turn
 *              | "match" "(" NAME { NAME } ")" -- motion matching over these tags
 *              | "blend" NAME "(" entry { entry } ")"  -- 1-D blend by parameter NAME
 *              | "machine" NAME                -- this state runs machine NAME
 *   clip       = NAME [ "[" NUMBER NUMBER "]" ]  -- range name, span from..to seconds
 *   entry      = NUMBER clip                   -- the parameter value where clip plays alone
 *   transition = EVENT NAME { "halflife" NUMBER | "exit" NUMBER }
 *
 * Top-level states form the root machine; the first state of a machine is
 * its initial state. A state has at most one motion; a state without one
 * plays the range of its own name (as "clip NAME"), which is how the seed's
 * states are clips. EVENT is any name
 * but the keywords (clip tag match blend machine loop halflife exit param
 * max_transitions); two are special: END fires when the state's motion ends,
 * AUTO as soon as the state is entered. A transition targets a state of the
 * same machine. "halflife" is that transition's inertialization half-life
 * (s, > 0); "exit" its exit time: the transition is taken no earlier than
 * that many seconds into the state (an event that comes sooner is held and
 * the transition taken then, unless the state is left first).
 *
 * Meaning of the motions (played by machine_character.h):
 *  - clip: frames of the range from `from` to `to` seconds (whole range by
 *    default); END fires when its last frame is reached. With "loop" it
 *    restarts (inertialized) when no END transition is taken.
 *  - tag: each entry plays the next range carrying the tag (database order,
 *    round robin), whole, like clip.
 *  - match: motion matching (controller.h) restricted to ranges with any of
 *    the tags, driven by the character's controller input; never ends.
 *  - blend: entries by increasing parameter value; the two entries around the
 *    parameter's value are blended by it (clamped at the ends), their clips
 *    cycles played in phase: phase 0 of each is its first frame where the
 *    first contact bone comes down (its first frame when it has none), and
 *    the phase advances at the rate of the blended cycle duration. END fires
 *    at each cycle's end.
 *  - machine: the nested machine's states play; it starts in its initial
 *    state each time the state is entered. Events go to the innermost
 *    active machine first, then up to the machines around it. So does the
 *    END of a motion that stops; the END of a cycle (a looping clip or tag,
 *    a blend) goes only to the state playing it, so a loop nested inside
 *    keeps the states around it.
 *
 * Checks (each a diagnostic with file:line:column): syntax; limits; names
 * defined twice (a state's second motion too); unknown target states,
 * machines and parameters; blend values not increasing; a machine nested in
 * itself; a machine defined but never used; states unreachable from their
 * machine's initial state; cycles of immediate transitions (AUTO with exit
 * 0, which would fire forever in one tick); END on a state whose motion
 * never ends (match, or a nested machine from which no END comes up: every
 * motion in it cycles or takes its own END). Binding adds: unknown ranges and tags, spans outside
 * their range.
 */
#ifndef ANIM_STATE_MACHINE_H
#define ANIM_STATE_MACHINE_H

#include <stddef.h>
#include <stdint.h>
#include "database/database.h"

#define ANIM_SM_MAX_DEPTH 8        /* active machines one inside another */
#define ANIM_SM_MAX_PARAMS 16
#define ANIM_SM_MAX_TAGS 8         /* tags of one match state */
#define ANIM_SM_MAX_BLEND 8        /* entries of one blend state */
#define ANIM_SM_MAX_STATES 4096
#define ANIM_SM_MAX_TRANSITIONS 65536
#define ANIM_SM_MAX_MACHINES 256
#define ANIM_SM_MAX_EVENTS 1024
#define ANIM_SM_MAX_TRANSITIONS_PER_TICK 64
#define ANIM_SM_MAX_DIAGNOSTICS 16
#define ANIM_SM_EVENT_END 0        /* event indices of the two special events */
#define ANIM_SM_EVENT_AUTO 1

typedef enum {
  ANIM_SM_MOTION_NONE = 0,
  ANIM_SM_MOTION_CLIP,
  ANIM_SM_MOTION_TAG,
  ANIM_SM_MOTION_MATCH,
  ANIM_SM_MOTION_BLEND,
  ANIM_SM_MOTION_MACHINE
} anim_sm_motion_kind_t;

/* XX(name, description): the problems a check reports. */
#define ANIM_SM_PROBLEM_MAP(XX)                                          \
  XX(SYNTAX, "syntax error")                                             \
  XX(LIMIT, "limit exceeded")                                            \
  XX(DUPLICATE, "defined twice")                                         \
  XX(UNKNOWN_TARGET, "unknown target state")                             \
  XX(UNKNOWN_MACHINE, "unknown machine")                                 \
  XX(UNKNOWN_PARAM, "unknown parameter")                                 \
  XX(BLEND_ORDER, "blend values not increasing")                         \
  XX(RECURSIVE, "machine nested in itself")                              \
  XX(UNUSED_MACHINE, "machine never used")                               \
  XX(UNREACHABLE, "unreachable state")                                   \
  XX(IMMEDIATE_CYCLE, "cycle of immediate transitions")                  \
  XX(NEVER_ENDS, "END on a motion that never ends")                      \
  XX(UNKNOWN_RANGE, "unknown range")                                     \
  XX(UNKNOWN_TAG, "unknown tag")                                         \
  XX(SPAN, "span outside its range")

typedef enum {
#define ANIM_SM_PROBLEM_ENUM(name, description) ANIM_SM_##name,
  ANIM_SM_PROBLEM_MAP(ANIM_SM_PROBLEM_ENUM)
#undef ANIM_SM_PROBLEM_ENUM
  ANIM_SM_PROBLEM_COUNT
} anim_sm_problem_t;

/* "SYNTAX", "UNREACHABLE", ...; "UNKNOWN" for a value out of the list. */
const char *anim_sm_problem_name(anim_sm_problem_t problem);

typedef struct {
  anim_sm_problem_t problem;
  int line, column;          /* 1-based, of the word at fault */
  char message[192];         /* "file:line:column: what" */
} anim_sm_diagnostic_t;

/* The first ANIM_SM_MAX_DIAGNOSTICS problems of a parse or bind, and how
 * many there were in all. */
typedef struct {
  int count;                 /* kept in items */
  int total;                 /* found */
  anim_sm_diagnostic_t items[ANIM_SM_MAX_DIAGNOSTICS];
} anim_sm_diagnostics_t;

typedef struct {
  int line, column;
} anim_sm_location_t;

/* A clip: a range, or a span of it. */
typedef struct {
  char range_name[ANIM_NAME_MAX];
  float from, to;            /* seconds into the range; to < 0: to its end */
  float value;               /* blend entries: the parameter value where it plays alone */
  anim_sm_location_t where;
  /* Set by anim_state_machine_bind: */
  int range;                 /* index in db->ranges */
  int start, stop;           /* frames [start, stop), stop - start >= 2 */
  int phase_frame;           /* blend: the frame of phase 0, in [start, stop) */
} anim_sm_clip_t;

typedef struct {
  int event;                 /* index in events (ANIM_SM_EVENT_END, ANIM_SM_EVENT_AUTO, ...) */
  int target;                /* index in states, a state of the same machine */
  float halflife;            /* s, > 0 */
  float exit_time;           /* s, >= 0 */
  anim_sm_location_t where;
} anim_sm_transition_t;

typedef struct {
  char name[ANIM_NAME_MAX];
  int machine;               /* the machine this state belongs to */
  anim_sm_motion_kind_t kind;
  int loop;                  /* CLIP, TAG */
  int clip;                  /* CLIP: index in clips; BLEND: first entry */
  int nclips;                /* CLIP: 1; BLEND: entries (by increasing value) */
  int param;                 /* BLEND: index in params */
  int nested;                /* MACHINE: index in machines */
  int ntags;                 /* TAG: 1; MATCH: 1..ANIM_SM_MAX_TAGS */
  char tags[ANIM_SM_MAX_TAGS][ANIM_NAME_MAX];
  anim_sm_location_t tag_where[ANIM_SM_MAX_TAGS]; /* each tag's word, for binding's diagnostics */
  uint32_t tag_mask;         /* TAG, MATCH: set by anim_state_machine_bind */
  int first_transition, ntransitions; /* in transitions, in file order */
  anim_sm_location_t where;
} anim_sm_state_t;

typedef struct {
  char name[ANIM_NAME_MAX];  /* "" for the root */
  int first_state, nstates;  /* its states are contiguous; the first is initial */
  anim_sm_location_t where;
} anim_sm_machine_t;

typedef struct {
  char name[ANIM_NAME_MAX];
  float initial;
} anim_sm_param_t;

/* A parsed, checked machine. Read-only once parsed (bind writes the
 * database-dependent fields, before sharing). Machine 0 is the root. */
typedef struct anim_state_machine {
  char filename[ANIM_NAME_MAX];
  int nmachines;
  anim_sm_machine_t *machines;
  int nstates;
  anim_sm_state_t *states;   /* grouped by machine */
  int ntransitions;
  anim_sm_transition_t *transitions;
  int nclips;
  anim_sm_clip_t *clips;
  int nevents;
  char (*events)[ANIM_NAME_MAX]; /* 0 "END", 1 "AUTO", then in order of appearance */
  int nparams;
  anim_sm_param_t params[ANIM_SM_MAX_PARAMS];
  int max_transitions;       /* per tick */
  float halflife;            /* default per transition, s */
  int depth;                 /* machines active at most at once (1: nothing nested) */
  int has_match;             /* some state runs motion matching */
  uint64_t bound_version;    /* version of the database bound to; 0: not bound */
} anim_state_machine_t;

/* Parses and checks text (len bytes, not necessarily NUL-terminated; at
 * most 1 MiB). filename only names the source in messages (NULL:
 * "<text>"). Returns the machine, or NULL when there is any problem: then
 * out_diagnostics (optional) lists them and err (optional) holds the first
 * ("file:line:column: message", or "out of memory"). Free with
 * anim_state_machine_free. */
anim_state_machine_t *anim_state_machine_parse(const char *text, size_t len, const char *filename,
                                               anim_sm_diagnostics_t *out_diagnostics, char *err, int errlen);

/* Resolves range names, tags and spans in db, and each blend clip's phase
 * (see above). 0, or ANIM_ENOTFOUND (unknown range or tag) / ANIM_ERANGE (a
 * span outside its range or shorter than two frames) with every problem in
 * out_diagnostics and the first in err. Binding again to another database
 * replaces the previous binding. */
int anim_state_machine_bind(anim_state_machine_t *machine, const anim_database_t *db,
                            anim_sm_diagnostics_t *out_diagnostics, char *err, int errlen);

void anim_state_machine_free(anim_state_machine_t *machine);

/* Index of the event, state (in machine m, or any when m < 0) or parameter
 * named name, or -1. */
int anim_state_machine_find_event(const anim_state_machine_t *machine, const char *name);
int anim_state_machine_find_state(const anim_state_machine_t *machine, int m, const char *name);
int anim_state_machine_find_param(const anim_state_machine_t *machine, const char *name);

#endif
