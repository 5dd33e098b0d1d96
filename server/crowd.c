/* crowd.c: characters, their ids, and the two-phase tick (see crowd.h). */
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "connection.h"
#include "crowd.h"
#include "log.h"
#include "quantize.h"
#include "server.h"
#include "stream.h"

/* Actors per simulation job: enough to amortize a job's overhead, small
 * enough that a crowd spreads over every pool thread. */
#define CHUNK_MAX 256

struct deferred {
  srv_connection_t *connection;
  srv_request_t request;
  struct deferred *next;
};

struct tick_job {
  uv_work_t work;
  srv_crowd_t *crowd;
  srv_actor_t **actors;      /* a run of crowd->tick_actors on one database */
  int n;
  srv_connection_t *connection; /* phase 2 */
};

static void finish_tick(srv_crowd_t *crowd);

/* ---- ids ------------------------------------------------------------------------- */

/* id = generation << 32 | (slot + 1): never 0, never reused. */
static uint64_t make_id(uint32_t slot, uint32_t generation) { return (uint64_t)generation << 32 | (uint64_t)(slot + 1); }

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

static int grow_slots(srv_crowd_t *crowd) {
  uint32_t capacity = crowd->capacity ? crowd->capacity * 2 : 256;
  srv_actor_t **slots = realloc(crowd->slots, capacity * sizeof *slots);
  if (!slots) return ANIM_ENOMEM;
  crowd->slots = slots;
  uint32_t *generations = realloc(crowd->generations, capacity * sizeof *generations);
  if (!generations) return ANIM_ENOMEM;
  crowd->generations = generations;
  uint32_t *free_slots = realloc(crowd->free_slots, capacity * sizeof *free_slots);
  if (!free_slots) return ANIM_ENOMEM;
  crowd->free_slots = free_slots;
  crowd->capacity = capacity;
  return 0;
}

static int take_slot(srv_crowd_t *crowd, uint32_t *out_slot) {
  if (crowd->nfree) {
    *out_slot = crowd->free_slots[--crowd->nfree];
    return 0;
  }
  if (crowd->nslots == crowd->capacity && grow_slots(crowd) != 0) return ANIM_ENOMEM;
  crowd->generations[crowd->nslots] = 0;
  crowd->slots[crowd->nslots] = NULL;
  *out_slot = crowd->nslots++;
  return 0;
}

/* ---- lifetime -------------------------------------------------------------------- */

size_t srv_crowd_actor_bytes(void) { return sizeof(srv_actor_t) + 2 * sizeof(void *); }

size_t srv_crowd_pose_buffer_bytes(const anim_database_t *db) {
  size_t n = (size_t)db->nbones;
  /* offsets (3 vec3 + quat), pose (3 vec3 + quat), global (vec3 + quat), quantized record */
  return n * (6 * sizeof(vec3) + 2 * sizeof(quat)) + n * (sizeof(vec3) + sizeof(quat)) +
         anim_pose_quantized_size(db->nbones, 0);
}

static void actor_free(srv_actor_t *a) {
  anim_controller_free(&a->character);
  srv_db_entry_release(a->entry);
  free(a->quantized);
  free(a);
}

uint32_t srv_crowd_owned_count(const srv_crowd_t *crowd, uint64_t owner) {
  uint32_t n = 0, cursor;
  for (srv_actor_t *a = srv_crowd_first(crowd, &cursor); a; a = srv_crowd_next(crowd, &cursor)) n += a->owner == owner;
  return n;
}

int srv_crowd_create(srv_crowd_t *crowd, uint64_t owner, srv_db_entry_t *entry, const anim_controller_params_t *params,
                      vec3 position, float facing, int start_frame, uint64_t *out_id) {
  if (crowd->count >= crowd->server->config.max_characters) return ANIM_ELIMIT;
  srv_actor_t *a = calloc(1, sizeof *a);
  if (!a) return ANIM_ENOMEM;
  int rc = anim_controller_init(&a->character, &entry->db, entry->indexes[ANIM_SEARCH_FAST], params, position, facing,
                               start_frame);
  if (rc) {
    free(a);
    return rc;
  }
  a->quantized = malloc(anim_pose_quantized_size(entry->db.nbones, 0));
  uint32_t slot;
  if (!a->quantized || take_slot(crowd, &slot) != 0) {
    anim_controller_free(&a->character);
    free(a->quantized);
    free(a);
    return ANIM_ENOMEM;
  }
  a->entry = entry;
  entry->refs++;
  a->owner = owner;
  a->id = make_id(slot, ++crowd->generations[slot]);
  crowd->slots[slot] = a;
  crowd->count++;
  crowd->stats.created++;
  /* Spread periodic searches over the ticks of an interval. */
  anim_controller_stagger(&a->character, (int)(slot % (uint32_t)a->character.params.search_interval));
  *out_id = a->id;
  if (!crowd->scheduler.running) srv_scheduler_start(&crowd->scheduler);
  return 0;
}

void srv_crowd_destroy(srv_crowd_t *crowd, srv_actor_t *a) {
  uint32_t slot = (uint32_t)(a->id & 0xffffffffu) - 1;
  crowd->slots[slot] = NULL;
  crowd->free_slots[crowd->nfree++] = slot;
  crowd->count--;
  crowd->stats.destroyed++;
  /* The tick in flight may still hold it in its snapshot. */
  if (crowd->ticking) a->doomed = 1;
  else actor_free(a);
}

void srv_crowd_connection_closed(srv_crowd_t *crowd, uint64_t owner) {
  uint32_t cursor;
  for (srv_actor_t *a = srv_crowd_first(crowd, &cursor); a; a = srv_crowd_next(crowd, &cursor))
    if (a->owner == owner) srv_crowd_destroy(crowd, a);
}

/* ---- phase 1: simulate ------------------------------------------------------------- */

static void fill_record(srv_actor_t *a) {
  anim_controller_t *c = &a->character;
  const anim_database_t *db = c->db;
  a->contacts = 0;
  for (int s = 0; s < db->ncontacts && s < 32; s++)
    if (db->contacts[(size_t)c->frame * (size_t)db->ncontacts + (size_t)s]) a->contacts |= 1u << s;
  if (a->want & SRV_WANT_GLOBAL) anim_controller_global_pose(c);
  if (a->want & SRV_WANT_QUANTIZED) anim_pose_quantize(a->quantized, c->pose_positions, c->pose_rotations, db->nbones, 0);
}

/* Without scratch for a batch (out of memory), each actor searches alone. */
static void simulate_one_by_one(tick_job_t *job, float dt) {
  for (int i = 0; i < job->n; i++) {
    srv_actor_t *a = job->actors[i];
    int rc = anim_controller_tick(&a->character, dt);
    if (rc) a->error = rc;
    fill_record(a);
  }
}

static void simulate_run(uv_work_t *work) {
  tick_job_t *job = work->data;
  float dt = (float)job->crowd->tick_dt;
  const srv_db_entry_t *entry = job->actors[0]->entry;
  size_t cols = (size_t)entry->db.features.cols, n = (size_t)job->n;
  float *queries = malloc(n * cols * sizeof *queries);
  anim_search_query_t *search = malloc(n * sizeof *search);
  anim_search_hit_t *hits = malloc(n * sizeof *hits);
  int *counts = malloc(n * sizeof *counts), *searcher = malloc(n * sizeof *searcher);
  if (!queries || !search || !hits || !counts || !searcher) {
    simulate_one_by_one(job, dt);
  } else {
    int nsearch = 0;
    for (int i = 0; i < job->n; i++) {
      srv_actor_t *a = job->actors[i];
      int rc = anim_controller_tick_begin(&a->character, dt, queries + (size_t)nsearch * cols, &search[nsearch]);
      searcher[i] = rc == 1 ? nsearch++ : -1;
      if (rc < 0) a->error = rc;
    }
    /* One batch for the chunk: the same database and index for all. */
    if (nsearch && anim_search_batch(entry->indexes[ANIM_SEARCH_FAST], search, nsearch, 1, hits, counts) != 0)
      memset(counts, 0, (size_t)nsearch * sizeof *counts);
    for (int i = 0; i < job->n; i++) {
      srv_actor_t *a = job->actors[i];
      const anim_search_hit_t *best = searcher[i] >= 0 && counts[searcher[i]] > 0 ? &hits[searcher[i]] : NULL;
      int rc = anim_controller_tick_end(&a->character, best);
      if (rc) a->error = rc;
      fill_record(a);
    }
  }
  free(queries), free(search), free(hits), free(counts), free(searcher);
}

static void start_streams(srv_crowd_t *crowd);

static void simulate_done(uv_work_t *work, int status) {
  tick_job_t *job = work->data;
  srv_crowd_t *crowd = job->crowd;
  free(job);
  if (--crowd->jobs_pending == 0) start_streams(crowd);
}

/* ---- phase 2: streams ------------------------------------------------------------- */

static void encode_run(uv_work_t *work) {
  tick_job_t *job = work->data;
  srv_streams_encode(job->connection, job->crowd, job->crowd->tick, job->crowd->tick_dt);
}

static void encode_done(uv_work_t *work, int status) {
  tick_job_t *job = work->data;
  srv_crowd_t *crowd = job->crowd;
  srv_connection_t *c = job->connection;
  free(job);
  if (!c->closing) srv_streams_deliver(c);
  srv_connection_job_done(c);
  if (--crowd->jobs_pending == 0) finish_tick(crowd);
}

static void start_streams(srv_crowd_t *crowd) {
  for (srv_connection_t *c = crowd->server->connections; c; c = c->next) {
    if (!c->streams.firing || c->closing) continue;
    tick_job_t *job = calloc(1, sizeof *job);
    if (!job) continue; /* this tick's frames for c are lost; the next tick tries again */
    job->work.data = job;
    job->crowd = crowd;
    job->connection = c;
    if (uv_queue_work(crowd->server->loop, &job->work, encode_run, encode_done) != 0) {
      free(job);
      continue;
    }
    c->in_flight++;
    crowd->jobs_pending++;
  }
  if (crowd->jobs_pending == 0) finish_tick(crowd);
}

/* ---- the tick ------------------------------------------------------------------------ */

/* Every tick, idle or not, ends here: the scheduler's counters and the
 * metrics' histograms then agree on how many ticks there were. */
static void tick_done(srv_crowd_t *crowd) {
  srv_scheduler_t *s = &crowd->scheduler;
  uint64_t ticks = s->ticks;
  srv_scheduler_tick_done(s);
  if (s->ticks != ticks) srv_metrics_tick(&crowd->server->metrics, s->last_lateness_ns, s->last_work_ns);
}

static int by_database(const void *x, const void *y) {
  const srv_actor_t *a = *(srv_actor_t *const *)x, *b = *(srv_actor_t *const *)y;
  if (a->entry != b->entry) return a->entry < b->entry ? -1 : 1;
  return a->id < b->id ? -1 : a->id > b->id;
}

static int snapshot(srv_crowd_t *crowd) {
  if (crowd->tick_actors_capacity < crowd->count) {
    srv_actor_t **grown = realloc(crowd->tick_actors, crowd->count * sizeof *grown);
    if (!grown) return ANIM_ENOMEM;
    crowd->tick_actors = grown;
    crowd->tick_actors_capacity = crowd->count;
  }
  uint32_t cursor, n = 0;
  for (srv_actor_t *a = srv_crowd_first(crowd, &cursor); a; a = srv_crowd_next(crowd, &cursor))
    crowd->tick_actors[n++] = a;
  crowd->ntick_actors = n;
  qsort(crowd->tick_actors, n, sizeof *crowd->tick_actors, by_database);
  return 0;
}

static void queue_chunks(srv_crowd_t *crowd) {
  uint32_t i = 0;
  while (i < crowd->ntick_actors) {
    uint32_t end = i + 1;
    while (end < crowd->ntick_actors && end - i < CHUNK_MAX && crowd->tick_actors[end]->entry == crowd->tick_actors[i]->entry)
      end++;
    tick_job_t *job = calloc(1, sizeof *job);
    if (job) {
      job->work.data = job;
      job->crowd = crowd;
      job->actors = crowd->tick_actors + i;
      job->n = (int)(end - i);
      if (uv_queue_work(crowd->server->loop, &job->work, simulate_run, simulate_done) == 0) crowd->jobs_pending++;
      else free(job);
    }
    i = end;
  }
}

static void on_tick(srv_scheduler_t *scheduler, uint64_t tick, double dt) {
  srv_crowd_t *crowd = scheduler->data;
  if (crowd->count == 0) { /* idle: stop waking up */
    srv_scheduler_stop(scheduler);
    tick_done(crowd);
    return;
  }
  if (snapshot(crowd) != 0) {
    tick_done(crowd);
    return;
  }
  crowd->ticking = 1;
  crowd->tick = tick;
  crowd->tick_dt = dt;
  srv_streams_prepare_tick(crowd, tick);
  queue_chunks(crowd);
  if (crowd->jobs_pending == 0) start_streams(crowd);
}

static void run_deferred(srv_crowd_t *crowd) {
  /* Requests parked now (by a deferred one) wait for the next tick's end. */
  deferred_t *d = crowd->deferred_head;
  crowd->deferred_head = crowd->deferred_tail = NULL;
  while (d) {
    deferred_t *next = d->next;
    srv_connection_resume(d->connection, &d->request);
    free(d);
    d = next;
  }
}

static void finish_tick(srv_crowd_t *crowd) {
  for (uint32_t i = 0; i < crowd->ntick_actors; i++) {
    srv_actor_t *a = crowd->tick_actors[i];
    if (a->doomed) actor_free(a);
    else if (a->error) {
      if (a->error != 1) srv_log(SRV_LOG_WARN, "character %llu: tick failed: %s", (unsigned long long)a->id, anim_strerror(a->error));
      crowd->stats.tick_errors++;
      a->error = 1; /* logged once */
    }
  }
  crowd->ntick_actors = 0;
  crowd->ticking = 0;
  tick_done(crowd);
  run_deferred(crowd);
  if (crowd->count == 0) srv_scheduler_stop(&crowd->scheduler);
}

int srv_crowd_defer(srv_crowd_t *crowd, srv_connection_t *connection, void *request) {
  deferred_t *d = calloc(1, sizeof *d);
  if (!d) return ANIM_ENOMEM;
  d->connection = connection;
  d->request = *(srv_request_t *)request;
  if (crowd->deferred_tail) crowd->deferred_tail->next = d;
  else crowd->deferred_head = d;
  crowd->deferred_tail = d;
  connection->in_flight++;
  return 0;
}

int srv_crowd_init(srv_crowd_t *crowd, srv_server_t *server) {
  memset(crowd, 0, sizeof *crowd);
  crowd->server = server;
  return srv_scheduler_init(&crowd->scheduler, server->loop, server->config.tick_rate, on_tick, crowd);
}

void srv_crowd_close(srv_crowd_t *crowd) {
  srv_scheduler_close(&crowd->scheduler);
  for (uint32_t i = 0; i < crowd->nslots; i++)
    if (crowd->slots[i]) actor_free(crowd->slots[i]);
  free(crowd->slots), free(crowd->generations), free(crowd->free_slots), free(crowd->tick_actors);
  crowd->slots = NULL, crowd->generations = crowd->free_slots = NULL, crowd->tick_actors = NULL;
  crowd->nslots = crowd->count = 0;
}
