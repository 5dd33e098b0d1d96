/* crowd.c: characters, their ids, their memory and counts per owner (running
 * totals), and the simulation half of the tick (see crowd.h). */
#include <assert.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include "anim_error.h"
#include "crowd.h"
#include "log.h"
#include "pose/quantize.h"

/* Actors per simulation job: enough to amortize a job's overhead, small
 * enough that a crowd spreads over every pool thread. */
#define CHUNK_MAX 256
/* Pool jobs simulating chunks at once: libuv's pool has 4 threads (the
 * others are left for encoding and requests). */
#define CROWD_WORKERS_MAX 4

/* One simulation job and its scratch, kept and grown between ticks. */
struct srv_chunk {
  srv_lane_item_t item; /* first: the lane's callbacks find the chunk from it */
  srv_crowd_t *crowd;
  srv_actor_t **actors; /* a run of crowd->tick_actors of one kind on one database */
  int n;
  void *scratch;        /* the kind's, kept across ticks */
  size_t scratch_bytes;
};

static void end_tick(srv_crowd_t *crowd);

/* ---- ids ------------------------------------------------------------------------- */

/* id = generation << 32 | (slot + 1): never 0, never reused (crowd.h). */
static uint64_t make_id(uint32_t slot, uint32_t generation) {
  return (uint64_t)generation << 32 | (uint64_t)(slot + 1);
}

srv_actor_t *srv_crowd_find(const srv_crowd_t *crowd, uint64_t id) {
  uint64_t slot1 = id & 0xffffffffu;
  if (slot1 == 0 || slot1 > crowd->nslots) return NULL;
  srv_actor_t *a = crowd->slots[slot1 - 1];
  return a && a->id == id && !a->doomed ? a : NULL;
}

srv_actor_t *srv_crowd_next(const srv_crowd_t *crowd, uint32_t *cursor) {
  while (*cursor < crowd->nslots) {
    srv_actor_t *a = crowd->slots[(*cursor)++];
    if (a && !a->doomed) return a;
  }
  return NULL;
}

srv_actor_t *srv_crowd_first(const srv_crowd_t *crowd, uint32_t *cursor) {
  *cursor = 0;
  return srv_crowd_next(crowd, cursor);
}

static int grow(void **array, size_t count, size_t size) {
  void *grown = realloc(*array, count * size);
  if (!grown) return ANIM_ENOMEM;
  *array = grown;
  return 0;
}

static int grow_slots(srv_crowd_t *crowd) {
  uint32_t capacity = crowd->capacity ? crowd->capacity * 2 : 256;
  if (grow((void **)&crowd->slots, capacity, sizeof *crowd->slots) ||
      grow((void **)&crowd->generations, capacity, sizeof *crowd->generations) ||
      grow((void **)&crowd->free_slots, capacity, sizeof *crowd->free_slots))
    return ANIM_ENOMEM;
  crowd->capacity = capacity;
  return 0;
}

static int take_slot(srv_crowd_t *crowd, uint32_t *out_slot) {
  if (crowd->nfree) {
    *out_slot = crowd->free_slots[--crowd->nfree];
    return 0;
  }
  if (crowd->nslots == crowd->capacity && grow_slots(crowd) != 0) return ANIM_ENOMEM;
  /* The create that takes it adds one: the run's first generation. */
  crowd->generations[crowd->nslots] = crowd->first_generation - 1;
  crowd->slots[crowd->nslots] = NULL;
  *out_slot = crowd->nslots++;
  return 0;
}

/* ---- lifetime -------------------------------------------------------------------- */

/* What the allocator holds (malloc_usable_size, so the figures add up as
 * the process's memory does): the actor's block (the actor and its kind's
 * character), its stream record, and what the character allocated itself.
 * The record, a few hundred bytes, counts the size asked for: a block that
 * small is often served from a larger free chunk, so its usable size
 * depends on the heap's history (one of ten equal characters counted 312
 * bytes for the others' 296 once the server had three more request types). */
size_t srv_crowd_actor_bytes(const srv_actor_t *a) {
  return malloc_usable_size((void *)a) + anim_pose_quantized_size(a->pose.nbones, 0) +
         (a->records ? SRV_ACTOR_RECORDS * sizeof *a->records : 0) +
         (a->kind->heap_bytes ? a->kind->heap_bytes(a->character) : 0);
}

uint64_t srv_crowd_bytes(const srv_crowd_t *crowd) { return crowd->bytes; }

void srv_crowd_remeasure(srv_crowd_t *crowd, srv_actor_t *a) {
  assert(!crowd->ticking);
  size_t bytes = srv_crowd_actor_bytes(a);
  crowd->bytes = crowd->bytes - a->bytes + bytes;
  a->bytes = bytes;
}

size_t srv_crowd_pose_buffer_bytes(const anim_database_t *db) {
  /* the controller's block and the quantized stream record */
  return anim_controller_bone_bytes(db->nbones) + anim_pose_quantized_size(db->nbones, 0);
}

static void actor_free(srv_crowd_t *crowd, srv_actor_t *a) {
  crowd->stats.freed_bytes += srv_crowd_actor_bytes(a);
  if (a->kind->free) a->kind->free(a->character); /* NULL: a kind with nothing of its own to free */
  srv_db_entry_release(a->entry);
  free(a->quantized), free(a->records);
  free(a);
}

uint32_t srv_crowd_owned_count(const srv_crowd_t *crowd, uint64_t owner) {
  return srv_owner_counts_get(&crowd->owners, owner);
}

void srv_crowd_wake(srv_crowd_t *crowd) {
  if (!crowd->scheduler.running && !crowd->scheduler.closed) srv_scheduler_start(&crowd->scheduler);
}

int srv_crowd_create(srv_crowd_t *crowd, uint64_t owner, srv_db_entry_t *entry, const srv_actor_kind_t *kind,
                     srv_actor_setup_t *setup, uint64_t *out_id, char *err, int errlen) {
  if (crowd->count >= crowd->config->max_characters) return ANIM_ELIMIT;
  uint32_t slot;
  if (take_slot(crowd, &slot) != 0) return ANIM_ENOMEM;
  /* The kind's character right after the actor: one allocation, one place in memory. */
  size_t head = (sizeof(srv_actor_t) + 63) & ~(size_t)63;
  srv_actor_t *a = calloc(1, head + kind->size);
  if (!a) {
    crowd->free_slots[crowd->nfree++] = slot;
    return ANIM_ENOMEM;
  }
  a->kind = kind;
  a->character = (char *)a + head;
  setup->slot = slot;
  int rc = kind->init(a->character, entry, setup, err, errlen);
  if (rc) {
    free(a);
    crowd->free_slots[crowd->nfree++] = slot;
    return rc;
  }
  a->entry = srv_db_entry_retain(entry);
  /* The record's size comes from the skeleton the kind animates. */
  kind->report(a);
  if (!(a->quantized = malloc(anim_pose_quantized_size(a->pose.nbones, 0))) ||
      srv_owner_counts_add(&crowd->owners, owner) != 0) {
    actor_free(crowd, a);
    crowd->free_slots[crowd->nfree++] = slot;
    return ANIM_ENOMEM;
  }
  a->owner = owner;
  a->chunk = -1;
  a->id = make_id(slot, ++crowd->generations[slot]);
  a->bytes = srv_crowd_actor_bytes(a);
  crowd->bytes += a->bytes;
  crowd->slots[slot] = a;
  crowd->count++;
  crowd->stats.created++;
  *out_id = a->id;
  srv_crowd_wake(crowd);
  return 0;
}

void srv_crowd_destroy(srv_crowd_t *crowd, srv_actor_t *a) {
  uint32_t slot = (uint32_t)(a->id & 0xffffffffu) - 1;
  crowd->slots[slot] = NULL;
  /* Its next generation would be the run's first again, an id this run has
   * issued: the slot retires (its few bytes kept, once per 2^32 characters). */
  if (crowd->generations[slot] + 1 != crowd->first_generation) crowd->free_slots[crowd->nfree++] = slot;
  crowd->count--;
  crowd->bytes -= a->bytes;
  srv_owner_counts_remove(&crowd->owners, a->owner);
  crowd->stats.destroyed++;
  /* The tick in flight may still hold it in its snapshot. */
  if (crowd->ticking) a->doomed = 1;
  else actor_free(crowd, a);
}

void srv_crowd_destroy_owned(srv_crowd_t *crowd, uint64_t owner) {
  /* Most connections own nothing: their close walks nothing; the walk stops at the owner's last. */
  uint32_t left = srv_crowd_owned_count(crowd, owner), cursor;
  for (srv_actor_t *a = srv_crowd_first(crowd, &cursor); a && left; a = srv_crowd_next(crowd, &cursor))
    if (a->owner == owner) srv_crowd_destroy(crowd, a), left--;
}

/* ---- simulation (pool threads) ------------------------------------------------------ */

static void simulate_run(srv_lane_item_t *item) {
  srv_chunk_t *chunk = (srv_chunk_t *)item;
  float dt = (float)chunk->crowd->tick_dt;
  chunk->actors[0]->kind->simulate(chunk->actors, chunk->n, dt, chunk->scratch);
  for (int i = 0; i < chunk->n; i++)
    if (chunk->actors[i]->records) srv_actor_keep_record(chunk->actors[i], dt);
}

static void simulate_done(srv_lane_item_t *item) {
  srv_chunk_t *chunk = (srv_chunk_t *)item;
  srv_crowd_t *crowd = chunk->crowd;
  if (crowd->hooks.chunk_simulated)
    crowd->hooks.chunk_simulated(crowd, (int)(chunk - crowd->chunks), crowd->hooks.data);
  if (--crowd->jobs_pending == 0) crowd->hooks.simulated(crowd, crowd->hooks.data);
}

/* ---- chunks: grown on the loop between ticks, reused after ------------------------------ */

static srv_chunk_t *next_chunk(srv_crowd_t *crowd) {
  if (crowd->nchunks == crowd->chunks_capacity) {
    int capacity = crowd->chunks_capacity ? 2 * crowd->chunks_capacity : 16;
    if (grow((void **)&crowd->chunks, (size_t)capacity, sizeof *crowd->chunks)) return NULL;
    memset(crowd->chunks + crowd->chunks_capacity, 0,
           (size_t)(capacity - crowd->chunks_capacity) * sizeof *crowd->chunks);
    crowd->chunks_capacity = capacity;
  }
  return &crowd->chunks[crowd->nchunks++];
}

static int same_chunk(const srv_actor_t *a, const srv_actor_t *b) { return a->entry == b->entry && a->kind == b->kind; }

/* Splits the snapshot into runs of one kind on one database, at most CHUNK_MAX long. */
static int plan_chunks(srv_crowd_t *crowd) {
  crowd->nchunks = 0;
  for (uint32_t i = 0, end; i < crowd->ntick_actors; i = end) {
    const srv_actor_t *first = crowd->tick_actors[i];
    for (end = i + 1; end < crowd->ntick_actors && end - i < CHUNK_MAX && same_chunk(crowd->tick_actors[end], first);)
      end++;
    srv_chunk_t *chunk = next_chunk(crowd);
    if (!chunk) return ANIM_ENOMEM;
    size_t bytes = first->kind->scratch_bytes ? first->kind->scratch_bytes(first->entry, (int)(end - i)) : 0;
    if (bytes > chunk->scratch_bytes) {
      if (grow(&chunk->scratch, bytes, 1)) return ANIM_ENOMEM;
      chunk->scratch_bytes = bytes;
    }
    chunk->crowd = crowd;
    chunk->actors = crowd->tick_actors + i;
    chunk->n = (int)(end - i);
    for (uint32_t j = i; j < end; j++) crowd->tick_actors[j]->chunk = crowd->nchunks - 1;
  }
  return 0;
}

/* ---- the tick ------------------------------------------------------------------------ */

/* A (kind, database) pair of the snapshot: how many actors, where they go. */
struct srv_chunk_key {
  const srv_actor_kind_t *kind;
  const srv_db_entry_t *entry;
  uint32_t count, at;
};

static int key_of(srv_crowd_t *crowd, const srv_actor_t *a, int hint) {
  if (hint < crowd->nkeys && crowd->keys[hint].kind == a->kind && crowd->keys[hint].entry == a->entry) return hint;
  for (int k = 0; k < crowd->nkeys; k++)
    if (crowd->keys[k].kind == a->kind && crowd->keys[k].entry == a->entry) return k;
  if (crowd->nkeys == crowd->keys_capacity) {
    int capacity = crowd->keys_capacity ? 2 * crowd->keys_capacity : 8;
    if (grow((void **)&crowd->keys, (size_t)capacity, sizeof *crowd->keys)) return -1;
    crowd->keys_capacity = capacity;
  }
  crowd->keys[crowd->nkeys] = (struct srv_chunk_key){a->kind, a->entry, 0, 0};
  return crowd->nkeys++;
}

/* Groups the snapshot by (kind, database), in id order within a group: one
 * counting pass over the few distinct pairs and a scatter, in O(n) with
 * nothing allocated once the arrays have grown (a sort would allocate, and
 * cost every character for the presence of another kind). */
static int group(srv_crowd_t *crowd) {
  uint32_t n = crowd->ntick_actors;
  srv_actor_t **in = crowd->grouping;
  memcpy(in, crowd->tick_actors, n * sizeof *in);
  crowd->nkeys = 0;
  for (uint32_t i = 0, k = 0; i < n; i++) {
    int key = key_of(crowd, in[i], (int)k);
    if (key < 0) return ANIM_ENOMEM;
    crowd->keys[key].count++;
    k = (uint32_t)key;
  }
  for (int k = 1; k < crowd->nkeys; k++) crowd->keys[k].at = crowd->keys[k - 1].at + crowd->keys[k - 1].count;
  for (uint32_t i = 0, k = 0; i < n; i++) {
    k = (uint32_t)key_of(crowd, in[i], (int)k);
    crowd->tick_actors[crowd->keys[k].at++] = in[i];
  }
  return 0;
}

static int snapshot(srv_crowd_t *crowd) {
  if (crowd->tick_actors_capacity < crowd->count) {
    if (grow((void **)&crowd->tick_actors, crowd->count, sizeof *crowd->tick_actors) ||
        grow((void **)&crowd->grouping, crowd->count, sizeof *crowd->grouping))
      return ANIM_ENOMEM;
    crowd->tick_actors_capacity = crowd->count;
  }
  uint32_t cursor, n = 0;
  for (srv_actor_t *a = srv_crowd_first(crowd, &cursor); a; a = srv_crowd_next(crowd, &cursor))
    crowd->tick_actors[n++] = a;
  crowd->ntick_actors = n;
  /* Slots are in id order already; only actors of several kinds or databases need grouping. */
  int mixed = 0;
  for (uint32_t i = 1; i < n && !mixed; i++) mixed = !same_chunk(crowd->tick_actors[i], crowd->tick_actors[0]);
  if (mixed && group(crowd)) return ANIM_ENOMEM;
  return plan_chunks(crowd);
}

/* Every tick, idle or not, ends here: the scheduler's counters and the
 * metrics' histograms then agree on how many ticks there were. */
static void tick_done(srv_crowd_t *crowd) {
  srv_scheduler_t *s = &crowd->scheduler;
  uint64_t ticks = s->ticks;
  srv_scheduler_tick_done(s);
  if (s->ticks != ticks && crowd->hooks.counted)
    crowd->hooks.counted(crowd, s->last_lateness_ns, s->last_work_ns, crowd->hooks.data);
}

static int wants_ticks(srv_crowd_t *crowd) {
  return crowd->count > 0 || (crowd->hooks.wants_ticks && crowd->hooks.wants_ticks(crowd, crowd->hooks.data));
}

static void on_tick(srv_scheduler_t *scheduler, uint64_t tick, double dt) {
  srv_crowd_t *crowd = scheduler->data;
  if (!wants_ticks(crowd)) { /* idle: stop waking up */
    srv_scheduler_stop(scheduler);
    tick_done(crowd);
    return;
  }
  if (snapshot(crowd) != 0) {
    srv_log(SRV_LOG_WARN, "tick %llu skipped: out of memory", (unsigned long long)tick);
    tick_done(crowd);
    return;
  }
  crowd->ticking = 1;
  crowd->tick = tick;
  crowd->tick_dt = dt;
  /* Level of detail: every character at lod-search-scale, brought back to
   * 1 by the streams' prepare for those streamed at full rate. */
  uint32_t lod = crowd->config->lod_search_scale;
  for (uint32_t i = 0; i < crowd->ntick_actors; i++) crowd->tick_actors[i]->want = 0, crowd->tick_actors[i]->lod_scale = lod;
  crowd->hooks.prepare(crowd, crowd->hooks.data);
  for (int i = 0; i < crowd->nchunks; i++) {
    crowd->chunks[i].item = (srv_lane_item_t){simulate_run, simulate_done, NULL};
    if (srv_lane_push(&crowd->lane, &crowd->chunks[i].item) == 0) crowd->jobs_pending++;
  }
  if (crowd->jobs_pending == 0) crowd->hooks.simulated(crowd, crowd->hooks.data);
}

void srv_crowd_tick_release(srv_crowd_t *crowd) { end_tick(crowd); }

static void end_tick(srv_crowd_t *crowd) {
  for (uint32_t i = 0; i < crowd->ntick_actors; i++) {
    srv_actor_t *a = crowd->tick_actors[i];
    crowd->stats.physics_resets += a->pose.physics_resets, a->pose.physics_resets = 0;
    if (a->doomed) actor_free(crowd, a);
    else if (a->error) {
      if (a->error != 1)
        srv_log(SRV_LOG_WARN, "character %llu: tick failed: %s", (unsigned long long)a->id, anim_strerror(a->error));
      crowd->stats.tick_errors++;
      a->error = 1; /* logged once */
    }
  }
  crowd->ntick_actors = 0;
  crowd->ticking = 0;
  tick_done(crowd);
  crowd->hooks.ended(crowd, crowd->hooks.data);
  if (!wants_ticks(crowd)) srv_scheduler_stop(&crowd->scheduler);
}

int srv_crowd_ticking(const srv_crowd_t *crowd) { return crowd->ticking; }

/* A run's first generation: random, so that ids of different runs differ
 * (crowd.h). Without getrandom (a kernel older than 3.17, or no entropy
 * yet: GRND_NONBLOCK never waits), the time and the pid mixed, which still
 * differ from one run to the next. */
static uint32_t run_generation(void) {
  uint32_t g;
  if (getrandom(&g, sizeof g, GRND_NONBLOCK) == (ssize_t)sizeof g) return g;
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  uint64_t h = ((uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec) ^ ((uint64_t)getpid() << 40);
  h *= 0x9e3779b97f4a7c15u; /* Fibonacci hashing: the high half depends on every bit */
  return (uint32_t)(h >> 32);
}

void srv_crowd_set_first_generation(srv_crowd_t *crowd, uint32_t generation) {
  assert(crowd->nslots == 0);
  crowd->first_generation = generation;
}

int srv_crowd_init(srv_crowd_t *crowd, uv_loop_t *loop, const srv_config_t *config, const srv_crowd_hooks_t *hooks) {
  memset(crowd, 0, sizeof *crowd);
  crowd->first_generation = run_generation();
  crowd->loop = loop;
  crowd->config = config;
  crowd->hooks = *hooks;
  /* Chunks run on one pool thread per core (no more: they would only take
   * turns), never on the loop, which stays free for requests. */
  unsigned cores = uv_available_parallelism();
  srv_lane_options_t lane = {.workers = cores < CROWD_WORKERS_MAX ? (int)cores : CROWD_WORKERS_MAX};
  int rc = srv_lane_init(&crowd->lane, loop, &lane);
  if (rc != 0) return rc;
  if ((rc = srv_scheduler_init(&crowd->scheduler, loop, config->tick_rate, on_tick, crowd)) != 0) {
    srv_lane_close(&crowd->lane);
    return rc;
  }
  crowd->scheduler.fixed_step = config->fixed_step;
  crowd->lane_open = 1;
  return 0;
}

void srv_crowd_stop(srv_crowd_t *crowd) { srv_scheduler_close(&crowd->scheduler); }

void srv_crowd_close(srv_crowd_t *crowd) {
  srv_scheduler_close(&crowd->scheduler);
  if (crowd->lane_open) srv_lane_close(&crowd->lane);
  crowd->lane_open = 0;
  for (uint32_t i = 0; i < crowd->nslots; i++)
    if (crowd->slots[i]) actor_free(crowd, crowd->slots[i]);
  for (int i = 0; i < crowd->chunks_capacity; i++) free(crowd->chunks[i].scratch);
  free(crowd->slots), free(crowd->generations), free(crowd->free_slots), free(crowd->tick_actors), free(crowd->chunks);
  free(crowd->grouping), free(crowd->keys);
  crowd->grouping = NULL, crowd->keys = NULL, crowd->nkeys = crowd->keys_capacity = 0;
  crowd->slots = NULL, crowd->generations = crowd->free_slots = NULL, crowd->tick_actors = NULL, crowd->chunks = NULL;
  crowd->nslots = crowd->count = 0;
  crowd->bytes = 0;
  srv_owner_counts_free(&crowd->owners);
  crowd->chunks_capacity = crowd->nchunks = 0;
}
