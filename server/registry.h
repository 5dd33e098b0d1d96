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
#ifndef ANIM_REGISTRY_H
#define ANIM_REGISTRY_H

#include <stddef.h>
#include "database.h"
#include "search.h"

#define ANIM_REGISTRY_MAX 64

typedef struct anim_db_entry {
  anim_database_t db;
  anim_search_index_t *indexes[ANIM_SEARCH_METHOD_COUNT];
  size_t memory_bytes;   /* poses + features + indexes */
  char source[1024];     /* file it came from; "" when built in memory */
  int refs;              /* the registry's own + one per request using it */
} anim_db_entry_t;

typedef struct anim_registry {
  anim_db_entry_t *entries[ANIM_REGISTRY_MAX];
  int count;
} anim_registry_t;

/* Takes ownership of *db (moved into the entry; *db is zeroed) and builds
 * every search index. NULL with a message in err on failure (db freed). */
anim_db_entry_t *anim_db_entry_create(anim_database_t *db, const char *source, char *err, int errlen);

/* A reference for the caller (release it), or NULL when name is unknown. */
anim_db_entry_t *anim_registry_acquire(anim_registry_t *registry, const char *name);
void anim_db_entry_release(anim_db_entry_t *entry);

/* Adds entry under its db.name, replacing (and releasing) any entry of that
 * name. The registry keeps the reference entry came with.
 * ANIM_ELIMIT when full. */
int anim_registry_put(anim_registry_t *registry, anim_db_entry_t *entry);
/* 0 when entry may join (or replace its namesake in) the registry within
 * max_count databases and max_bytes of database memory (0: no memory limit);
 * ANIM_ELIMIT with the reason in err otherwise. */
int anim_registry_fits(const anim_registry_t *registry, const anim_db_entry_t *entry, int max_count, size_t max_bytes,
                       char *err, int errlen);
/* ANIM_ENOTFOUND when name is unknown. */
int anim_registry_remove(anim_registry_t *registry, const char *name);
void anim_registry_clear(anim_registry_t *registry);

/* 0 when name is a plain database name: 1..63 of [A-Za-z0-9_.-], not
 * starting with '.', so NAME.animdb can never leave the data directory. */
int anim_db_name_validate(const char *name);

#endif
