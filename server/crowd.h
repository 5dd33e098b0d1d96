/*
 * crowd.h: the server's characters and the tick that moves them.
 *
 * A character (an actor, actor.h) is a core character of some kind (motion
 * matching, ...) on a database entry it holds a reference to, owned by the
 * connection id that created it. Ids are a slot and a generation,
 * generation << 32 | (slot + 1): lookups are an array index, and
 *   1. an id is never 0 (the low half is slot + 1), so 0 can mean "none";
 *   2. within a run an id is never issued twice: a slot's generation goes up
 *      by one with each character it holds, and a slot whose generation
 *      would come round (2^32 characters later) to the run's first is
 *      retired, never reused; so the id of a destroyed character is never
 *      valid again;
 *   3. across runs ids very likely differ: every slot's first generation is
 *      the run's, drawn at random (getrandom(2)) when the crowd starts, not
 *      1, so a client reconnecting to a restarted server with an old id gets
 *      NOT_FOUND rather than someone else's new character (two runs share
 *      an id only when their generation ranges on that slot overlap: about
 *      (n1 + n2) / 2^32 for a slot that held n1 and n2 characters).
 * Nothing else is promised: ids are not ordered by creation across slots
 * and their generation half is not small.
 *
 * The tick (scheduler.h, 60 Hz by default) simulates on the thread pool
 * while the loop stays free: the actors, grouped by kind and database into
 * chunks, each chunk one job (the kind's simulate, which batches what it
 * can across the chunk, then the pose records readers asked for). The
 * crowd knows nothing of connections or streams: it tells whoever set its
 * hooks what happens, on the loop thread:
 *   prepare    a tick starts: mark what each actor's record must hold (want);
 *              each actor's chunk this tick is known (srv_actor_t.chunk);
 *   chunk_simulated  one chunk's actors are ticked: their records may be read
 *              while the other chunks still run;
 *   simulated  every actor is ticked: read them, then srv_crowd_tick_release;
 *   ended      the tick is over: characters may change again.
 * Between prepare and ended the pool and the readers own the actors, so a
 * caller that changes characters waits for `ended` (srv_crowd_ticking).
 * The crowd stops ticking when it is empty, unless wants_ticks says a reader
 * still needs a tick (a subscriber owed a "gone").
 *
 * Nothing is allocated per tick in steady state: the snapshot and each
 * chunk's scratch grow between ticks and are kept.
 */
#ifndef SRV_CROWD_H
#define SRV_CROWD_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>
#include "actor.h"
#include "config.h"
#include "lane.h"
#include "owner_counts.h"
#include "registry.h"
#include "scheduler.h"

struct srv_crowd;

typedef struct {
  void *data;
  void (*prepare)(struct srv_crowd *crowd, void *data);
  void (*chunk_simulated)(struct srv_crowd *crowd, int chunk, void *data); /* may be NULL */
  void (*simulated)(struct srv_crowd *crowd, void *data);
  void (*ended)(struct srv_crowd *crowd, void *data);
  int (*wants_ticks)(struct srv_crowd *crowd, void *data); /* may be NULL */
  /* every tick, idle or not, once the scheduler has counted it: its
   * lateness and work in ns (metrics histograms); may be NULL */
  void (*counted)(struct srv_crowd *crowd, uint64_t lateness_ns, uint64_t work_ns, void *data);
} srv_crowd_hooks_t;

typedef struct {
  uint64_t created, destroyed, tick_errors;
  uint64_t physics_resets; /* MODE_PHYSICAL simulations that diverged and were reset */
  uint64_t freed_bytes; /* actors' memory given back to the allocator, in total */
} srv_crowd_stats_t;

typedef struct srv_chunk srv_chunk_t;

typedef struct srv_crowd {
  uv_loop_t *loop;
  const srv_config_t *config;  /* max_characters (live: SIGHUP may change it) */
  srv_crowd_hooks_t hooks;
  srv_scheduler_t scheduler;
  srv_actor_t **slots;         /* by slot index; NULL when free */
  uint32_t *generations;       /* by slot: the generation of its last character */
  uint32_t first_generation;   /* every slot's first character's (the run's; see ids above) */
  uint32_t nslots, capacity;
  uint32_t *free_slots;
  uint32_t nfree;
  uint32_t count;              /* live actors */
  uint64_t bytes;              /* srv_crowd_actor_bytes summed over the live actors (each one's srv_actor_t.bytes) */
  srv_owner_counts_t owners;   /* live actors per owner */
  /* The tick in flight. */
  int ticking;
  uint64_t tick;               /* the last tick started (monotonic for the server's life) */
  double tick_dt;
  srv_actor_t **tick_actors;   /* snapshot, grouped by kind and database */
  uint32_t ntick_actors, tick_actors_capacity;
  srv_actor_t **grouping;      /* the snapshot before grouping (tick_actors_capacity) */
  struct srv_chunk_key *keys;  /* the (kind, database) pairs of a snapshot, with counts */
  int nkeys, keys_capacity;
  srv_chunk_t *chunks;         /* simulation jobs, kept across ticks */
  int nchunks, chunks_capacity;
  int jobs_pending;
  srv_lane_t lane;             /* runs the chunks, and the streams' encodings, on the pool (lane.h) */
  int lane_open;
  srv_crowd_stats_t stats;
} srv_crowd_t;

/* A stopped crowd ticking at config->tick_rate. 0 or a negative code (timerfd, eventfd). */
int srv_crowd_init(srv_crowd_t *crowd, uv_loop_t *loop, const srv_config_t *config, const srv_crowd_hooks_t *hooks);
/* Sets the generation of every slot's first character, instead of the
 * random one srv_crowd_init drew: for tests and fuzz harnesses that want
 * the ids of a fresh crowd predictable (1: the first character is
 * 4294967297). Only on a crowd that never had a slot (asserted). */
void srv_crowd_set_first_generation(srv_crowd_t *crowd, uint32_t generation);
/* Stops the clock (a tick in flight still finishes); the loop can then end. */
void srv_crowd_stop(srv_crowd_t *crowd);
/* Frees every actor and the crowd's arrays and closes its handles (after
 * the loop has run dry; run it once more for their close callbacks). */
void srv_crowd_close(srv_crowd_t *crowd);

/* 1 between a tick's prepare and ended: the actors may not change. */
int srv_crowd_ticking(const srv_crowd_t *crowd);
/* The simulated hook's reader is done with the actors: the tick ends. */
void srv_crowd_tick_release(srv_crowd_t *crowd);

/* The actor with this id, or NULL (unknown, destroyed). Loop thread. */
srv_actor_t *srv_crowd_find(const srv_crowd_t *crowd, uint64_t id);

/* Creates an actor of kind on entry (takes its own reference); setup's
 * slot is filled here. 0, or ANIM_ELIMIT (the server's limit), the kind's
 * codes with a message in err, ANIM_ENOMEM. Not while ticking. */
int srv_crowd_create(srv_crowd_t *crowd, uint64_t owner, srv_db_entry_t *entry, const srv_actor_kind_t *kind,
                     srv_actor_setup_t *setup, uint64_t *out_id, char *err, int errlen);
/* Destroys the actor (caller checked ownership). */
void srv_crowd_destroy(srv_crowd_t *crowd, srv_actor_t *actor);
/* How many live actors owner has: O(1), a count kept per owner. */
uint32_t srv_crowd_owned_count(const srv_crowd_t *crowd, uint64_t owner);
/* Destroys every actor of owner (a connection that closed): nothing to walk
 * for an owner without characters. */
void srv_crowd_destroy_owned(srv_crowd_t *crowd, uint64_t owner);
/* Starts the clock if it is stopped (a reader now wants ticks). */
void srv_crowd_wake(srv_crowd_t *crowd);

/* Iterates live actors: for (a = first(crowd, &i); a; a = next(crowd, &i)). */
srv_actor_t *srv_crowd_first(const srv_crowd_t *crowd, uint32_t *cursor);
srv_actor_t *srv_crowd_next(const srv_crowd_t *crowd, uint32_t *cursor);

/* Memory actor holds, whatever its kind: its block (the actor and the
 * kind's character), its stream record and what the character allocated
 * for itself (srv_actor_kind_t.heap_bytes), as the allocator holds it; not
 * what characters share (databases, machines, graphs, networks, models). */
size_t srv_crowd_actor_bytes(const srv_actor_t *actor);
/* The same summed over the live actors: O(1), a running total kept as
 * actors are created and destroyed. A character's own memory changes after
 * its creation only where a loop-thread request reallocates it (set_paths
 * growing a graph character's path); whoever does that calls
 * srv_crowd_remeasure after. */
uint64_t srv_crowd_bytes(const srv_crowd_t *crowd);
/* Measures actor again and moves the running total by the difference:
 * after a change that may have (re)allocated the character's own memory.
 * Loop thread, not while ticking (the pool owns the characters then). */
void srv_crowd_remeasure(srv_crowd_t *crowd, srv_actor_t *actor);
/* A motion-matching actor's pose buffers on db (its controller's per-bone
 * block and its stream record, as requested from the allocator). */
size_t srv_crowd_pose_buffer_bytes(const anim_database_t *db);

#endif
