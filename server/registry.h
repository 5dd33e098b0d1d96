/*
 * registry.h: the server's named motion databases.
 *
 * An entry is a database plus its search indexes, built once (off the loop
 * for loads and reloads) and read-only afterwards, so thread-pool jobs read it
 * without locks. Requests hold a reference from dispatch to completion;
 * replacing or removing a name detaches the old entry, which is freed when
 * its last request completes: a reload never shows anyone a half-built
 * database, and requests in flight finish on the data they started with.
 * References are taken and dropped on the loop thread only, so they are
 * plain integers.
 */
#ifndef SRV_REGISTRY_H
#define SRV_REGISTRY_H

#include <stddef.h>
#include "database/database.h"
#include "fit_models.h"
#include "search/search.h"

#define SRV_REGISTRY_MAX 64

typedef struct srv_db_entry {
  anim_database_t db;
  anim_search_index_t *indexes[ANIM_SEARCH_METHOD_COUNT];
  size_t memory_bytes;   /* poses + features + indexes */
  size_t graph_memory_bytes; /* its motion graph's, set by graphs.c when one is installed; 0 without */
  char source[1024];     /* file it came from; "" when built in memory */
  int refs;              /* the registry's own + one per request using it */
  /* Its motion graph, built on request (graphs.h, which sets graph_free
   * so the entry frees it without knowing it); NULL until then. */
  struct srv_graph_slot *graph;
  void (*graph_free)(struct srv_graph_slot *graph);
  srv_fit_cache_t fit_models; /* pose-fit models built for it (loop thread) */
  /* Its physics model (physics/body.h), 70 kg, built by the first
   * MODE_PHYSICAL create or inverse_dynamics request (body_models.h, which
   * sets physics_free); NULL until then. The characters and requests hold
   * the entry, so the model outlives them. */
  struct anim_physics_model *physics;
  void (*physics_free)(struct anim_physics_model *model);
  /* Its models of other masses (physics_models.h: one per body mass its
   * physical characters use, reference-counted), made by the first
   * MODE_PHYSICAL create of another mass (actor_physical.c, which sets
   * physics_models_free); NULL until then. */
  struct srv_physics_cache *physics_models;
  void (*physics_models_free)(struct srv_physics_cache *cache);
  size_t physics_models_bytes; /* the cache's (physics_models.h), set on the loop when it changes */
  /* The learned networks whose skeleton this database is (--lmm: the
   * database "lmm"; networks trained on this database: NAME.lmm/ beside
   * NAME.animdb, or --lmm-default for the embedded one); NULL otherwise. */
  const struct anim_lmm_networks *lmm;
  struct anim_lmm_networks *lmm_owned; /* lmm when the entry owns it (freed with the entry); else NULL */
} srv_db_entry_t;

typedef struct srv_registry {
  srv_db_entry_t *entries[SRV_REGISTRY_MAX];
  int count;
} srv_registry_t;

/* Takes ownership of *db (moved into the entry; *db is zeroed) and builds
 * every search index (through the build runner when one is set). NULL with
 * a message in err on failure (db freed). Any thread. */
srv_db_entry_t *srv_db_entry_create(anim_database_t *db, const char *source, char *err, int errlen);

/* Gives entry the learned networks trained on its database, which it then
 * owns (freed with it) and counts in memory_bytes. */
void srv_db_entry_set_networks(srv_db_entry_t *entry, struct anim_lmm_networks *nets);

/* The runner every later srv_db_entry_create builds its indexes through
 * (pool_tasks.h; NULL: the calling thread alone). Set on the loop thread
 * while no build runs: at startup, and back to NULL before the pool closes. */
void srv_db_entry_set_build_runner(const anim_task_runner_t *runner);

/* A reference for the caller (release it), or NULL when name is unknown. */
srv_db_entry_t *srv_registry_acquire(srv_registry_t *registry, const char *name);

/* The one pair that counts references (loop thread). retain returns entry;
 * release frees the entry at zero; NULL is ignored by both. */
srv_db_entry_t *srv_db_entry_retain(srv_db_entry_t *entry);
void srv_db_entry_release(srv_db_entry_t *entry);

/* A database as list_databases and the changed-database answers report it. */
typedef struct {
  char name[64];
  uint64_t version;
  uint32_t frames, bones, feature_dims, ranges;
  float frame_rate;
  uint64_t memory_bytes;
  uint64_t graph_memory_bytes; /* its motion graph (graphs.c), apart from memory_bytes */
} srv_db_summary_t;

void srv_db_entry_summary(const srv_db_entry_t *entry, srv_db_summary_t *out);

/* Adds entry under its db.name, replacing (and releasing) any entry of that
 * name. The registry keeps the reference entry came with.
 * ANIM_ELIMIT when full. */
int srv_registry_put(srv_registry_t *registry, srv_db_entry_t *entry);
/* 0 when entry may join (or replace its namesake in) the registry within
 * max_count databases and max_bytes of database memory (0: no memory limit);
 * ANIM_ELIMIT with the reason in err otherwise. */
int srv_registry_fits(const srv_registry_t *registry, const srv_db_entry_t *entry, int max_count, size_t max_bytes,
                       char *err, int errlen);
/* ANIM_ENOTFOUND when name is unknown. */
int srv_registry_remove(srv_registry_t *registry, const char *name);
void srv_registry_clear(srv_registry_t *registry);

/* 0 when name is a plain database name: 1..63 of [A-Za-z0-9_.-], not
 * starting with '.', so NAME.animdb can never leave the data directory. */
int srv_db_name_validate(const char *name);

#endif
