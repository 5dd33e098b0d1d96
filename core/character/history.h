/*
 * history.h: a bounded ring of a motion-matching character's recent ticks,
 * for a debugger ("why did it pick that frame two seconds ago?").
 *
 * Each tick the controller (controller.h) leaves one record: the tick, the
 * frame shown after it, the displayed pose (every bone's local position
 * and rotation, bone 0's in the world), the inertialization state
 * (time since the transition, the half-life in effect, the root's position
 * offset and the largest rotation offset of any bone), and, when the tick
 * searched, why (ANIM_CONTROLLER_SEARCH_* bits, at rest, held), the
 * normalized query with the search's settings (current frame, transition
 * cost, exclusions), the top ncandidates frames by cost, each with its cost
 * split by feature group (schema term), and the frame the search chose.
 *
 * The candidates come from a second search on the character's own index
 * with the same query and k = ncandidates: exact search ranks the same
 * way whatever k is, so candidate 0 is the frame the tick's own search
 * (k = 1) found, and the list equals a `search` of the same query. Only a
 * character with a history pays for it; one without pays a pointer test.
 *
 * Memory: one block, allocated by anim_history_init (capacity records of a
 * fixed stride, and the search's scratch); recording allocates nothing.
 * Not thread-safe: recorded by whoever ticks the character, read between
 * ticks.
 *
 * Validity rules (anim_history_init):
 *  1. 1 <= capacity <= ANIM_HISTORY_MAX_TICKS;
 *  2. 1 <= ncandidates <= ANIM_HISTORY_MAX_CANDIDATES;
 *  3. the database has features (a schema of at least one term).
 */
#ifndef ANIM_HISTORY_H
#define ANIM_HISTORY_H

#include <stddef.h>
#include <stdint.h>
#include "character/controller.h"
#include "database/database.h"
#include "math/anim_math.h"
#include "search/search.h"

#define ANIM_HISTORY_MAX_TICKS 600000   /* 10,000 s at 60 Hz: the server bounds it far lower */
#define ANIM_HISTORY_MAX_CANDIDATES 64

/* Flags of a record. */
enum {
  ANIM_HISTORY_SEARCHED = 1,     /* the tick searched: query, settings and candidates are set */
  ANIM_HISTORY_TRANSITIONED = 2, /* the tick started a transition */
  ANIM_HISTORY_AT_REST = 4,      /* its search was made at rest (controller.h) */
  ANIM_HISTORY_HOLDING = 8       /* the frame is held (a still frame its clip would walk off from) */
};

/* One tick. The arrays of a record follow it in the ring (anim_history_*
 * accessors below). */
typedef struct {
  uint64_t tick;               /* the clock's tick (anim_history_init) */
  int32_t frame;               /* database frame shown after the tick */
  int32_t chosen;              /* the frame the search chose (its best hit); -1: no search or no hit */
  uint32_t flags;              /* ANIM_HISTORY_* */
  uint32_t reasons;            /* ANIM_CONTROLLER_SEARCH_* bits of the search (0: none) */
  int32_t ncandidates;         /* candidates recorded (0 without a search) */
  /* The search's settings (anim_search_query_t), when it searched. */
  int32_t current_frame;       /* -1: the current frame did not compete (the clip was ending) */
  float transition_cost;
  int32_t ignore_range_end, ignore_surrounding;
  uint32_t tag_mask;
  /* Inertialization. */
  float time_since_transition; /* s */
  float halflife;              /* s, the legs' half-life in effect */
  vec3 offset_position;        /* m, the root's position offset */
  float offset_angle;          /* radians, the largest rotation offset of any bone */
  /* The displayed pose: the root's world position (its local rotations follow the record). */
  vec3 root_position;
} anim_history_record_t;

struct anim_history {
  void *block;        /* everything: records, then search scratch */
  size_t bytes;       /* the block's size as asked of the allocator */
  size_t stride;      /* bytes of one record with its arrays */
  int capacity;       /* records in the ring */
  int ncandidates;    /* top candidates recorded per search */
  int cols, nterms, nbones; /* the database's feature columns, schema terms, bones */
  uint64_t count;     /* records written since init (the newest is count - 1, in ring order) */
  const volatile uint64_t *clock; /* the tick number to stamp records with; NULL: count itself */
  uint64_t next_tick; /* without a clock: the next record's tick */
  anim_search_hit_t *scratch; /* the candidates search's scratch (ncandidates hits) */
};

/* Bytes a history of capacity records with ncandidates on db allocates (one
 * block); 0 when the rules above do not hold. */
size_t anim_history_bytes(const anim_database_t *db, int capacity, int ncandidates);

/* Allocates an empty history on db. clock: where the owner keeps the tick
 * number to stamp each record with (read when recording: the server's crowd
 * tick), or NULL to number the records first_tick, first_tick + 1, ...
 * 0, ANIM_EINVAL (rules), ANIM_ENOMEM. Free with anim_history_free. */
int anim_history_init(anim_history_t *out, const anim_database_t *db, int capacity, int ncandidates,
                      const volatile uint64_t *clock, uint64_t first_tick);
void anim_history_free(anim_history_t *history);

/* Records the tick a controller just ended:
 * search is the query it searched with this tick (NULL: it did not) and
 * best its best hit (NULL: none). Runs the candidates search when it
 * searched. Allocates nothing. Called by anim_controller_tick_end when the
 * controller has a history. */
void anim_history_record(anim_history_t *history, const anim_controller_t *character, const anim_search_query_t *search,
                         const anim_search_hit_t *best);

/* Records held: the ticks from *out_first to *out_last (the oldest and the
 * newest kept). 0, or ANIM_ENOTFOUND when nothing is recorded yet. */
int anim_history_span(const anim_history_t *history, uint64_t *out_first, uint64_t *out_last);
/* The record of tick, or NULL when it is not held (too old, not yet, or a
 * tick the clock passed over). Valid until the next record. */
const anim_history_record_t *anim_history_find(const anim_history_t *history, uint64_t tick);
/* The i-th record held, oldest first (0 <= i < held), or NULL. */
const anim_history_record_t *anim_history_at(const anim_history_t *history, uint64_t i);
/* Records held (at most capacity). */
uint64_t anim_history_held(const anim_history_t *history);

/* A record's arrays: the query (cols normalized floats, when it searched),
 * the candidates (ncandidates hits, by ascending cost), their costs split
 * by schema term (ncandidates x nterms floats, row per candidate), the
 * displayed pose's local rotations (nbones; bone 0's in the world) and its
 * local positions (nbones; bone 0's is root_position). The positions are
 * the inertialized ones the character showed, not the database frame's:
 * the hips' offset from bone 0 bobs every tick of a walk and blends
 * between clips after a transition; inverse dynamics of a character's
 * recent motion differentiates it twice. 12 bytes a bone a tick. */
const float *anim_history_query(const anim_history_t *history, const anim_history_record_t *record);
const anim_search_hit_t *anim_history_candidates(const anim_history_t *history, const anim_history_record_t *record);
const float *anim_history_group_costs(const anim_history_t *history, const anim_history_record_t *record);
const quat *anim_history_rotations(const anim_history_t *history, const anim_history_record_t *record);
const vec3 *anim_history_positions(const anim_history_t *history, const anim_history_record_t *record);

#endif
