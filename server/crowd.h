/*
 * crowd.h: the server's characters and the tick that moves them.
 *
 * A character (an actor) is a motion-matching controller (core/controller.h)
 * on a database entry it holds a reference to, owned by the connection that
 * created it. Ids are a slot and a generation: lookups are an array index, and
 * the id of a destroyed character is never valid again.
 *
 * The tick (scheduler.h, 60 Hz by default) runs in two phases on the thread
 * pool while the loop stays free:
 *   1. simulate: the actors, grouped by database into chunks, each chunk a
 *      job: every actor's tick_begin, the chunk's searches as one batch,
 *      every tick_end, then the pose records the subscriptions want (global
 *      positions, quantized bytes);
 *   2. streams (stream.h): one job per subscribed connection encodes its
 *      frames from those records.
 * Then, on the loop, frames are handed to connections, destroyed actors are
 * freed and the requests that waited for the tick run. While a tick is in
 * flight the pool owns every actor: requests that touch characters or
 * subscriptions wait for its end (srv_crowd_defer), so no state is shared
 * between threads without the tick barrier.
 */
#ifndef SRV_CROWD_H
#define SRV_CROWD_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>
#include "controller.h"
#include "registry.h"
#include "scheduler.h"

struct srv_server;
struct srv_connection;

/* What a tick must leave in an actor's pose record for its subscribers. */
enum { SRV_WANT_QUANTIZED = 1, SRV_WANT_GLOBAL = 2 };

typedef struct srv_actor {
  anim_controller_t character;
  uint64_t id;
  uint64_t owner;             /* connection id */
  srv_db_entry_t *entry;     /* a reference */
  uint32_t want;              /* SRV_WANT_* for this tick, set by the stream layer */
  uint8_t *quantized;         /* pose record, ENCODING_QUANTIZED (full layout; rotations_only is its prefix) */
  uint32_t contacts;          /* bit i: contact bone i planted in the displayed frame */
  int doomed;                 /* destroyed during a tick: freed after it */
  int error;                  /* the last tick failed for this actor (logged once) */
} srv_actor_t;

typedef struct {
  uint64_t created, destroyed, tick_errors;
} srv_crowd_stats_t;

typedef struct deferred deferred_t;
typedef struct tick_job tick_job_t;

typedef struct srv_crowd {
  struct srv_server *server;
  srv_scheduler_t scheduler;
  srv_actor_t **slots;       /* by slot index; NULL when free */
  uint32_t *generations;
  uint32_t nslots, capacity;
  uint32_t *free_slots;
  uint32_t nfree;
  uint32_t count;             /* live actors */
  /* The tick in flight. */
  int ticking;
  uint64_t tick;              /* the last tick started */
  double tick_dt;
  srv_actor_t **tick_actors; /* snapshot, grouped by database */
  uint32_t ntick_actors, tick_actors_capacity;
  int jobs_pending;
  deferred_t *deferred_head, *deferred_tail;
  srv_crowd_stats_t stats;
} srv_crowd_t;

int srv_crowd_init(srv_crowd_t *crowd, struct srv_server *server);
/* Frees every actor and closes the scheduler (shutdown). */
void srv_crowd_close(srv_crowd_t *crowd);

/* The actor with this id, or NULL (unknown, destroyed). Loop thread, not during a tick's phase 1. */
srv_actor_t *srv_crowd_find(const srv_crowd_t *crowd, uint64_t id);

/* Creates an actor on entry (takes its own reference). 0, or ANIM_ELIMIT
 * (server or connection limit), the controller's codes, ANIM_ENOMEM. */
int srv_crowd_create(srv_crowd_t *crowd, uint64_t owner, srv_db_entry_t *entry,
                      const anim_controller_params_t *params, vec3 position, float facing, int start_frame,
                      uint64_t *out_id);
/* Destroys the actor (caller checked ownership). */
void srv_crowd_destroy(srv_crowd_t *crowd, srv_actor_t *actor);
/* How many live actors owner has. */
uint32_t srv_crowd_owned_count(const srv_crowd_t *crowd, uint64_t owner);
/* Destroys every actor of a connection that closed. */
void srv_crowd_connection_closed(srv_crowd_t *crowd, uint64_t owner);

/* Parks a request until the tick in flight ends (the connection keeps it in
 * flight meanwhile). 0 or ANIM_ENOMEM. */
int srv_crowd_defer(srv_crowd_t *crowd, struct srv_connection *connection, void *request);

/* Iterates live actors: for (a = first(crowd, &i); a; a = next(crowd, &i)). */
srv_actor_t *srv_crowd_first(const srv_crowd_t *crowd, uint32_t *cursor);
srv_actor_t *srv_crowd_next(const srv_crowd_t *crowd, uint32_t *cursor);

/* Bytes one actor takes beyond its pose buffers, and its pose buffers on db. */
size_t srv_crowd_actor_bytes(void);
size_t srv_crowd_pose_buffer_bytes(const anim_database_t *db);

#endif
