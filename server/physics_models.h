/*
 * physics_models.h: the physics models (physics/body.h) of a database, one
 * per body mass other than 70 kg its physical characters asked for, built
 * on demand and cached with the database (the 70 kg model is the
 * database's own, body_models.h, shared with inverse dynamics).
 *
 * A model costs 26-28 ms of CPU to build (MuJoCo's compile of the MJCF and
 * the joint-space inertias) and is read-only afterwards, so every
 * character of one (database, mass) shares one, each with its own body
 * (mjData). A database entry holds a small cache of them
 * (srv_physics_cache_t, at most SRV_PHYSICS_MODELS_PER_DATABASE distinct
 * masses). A model is reference-counted: the cache holds one reference,
 * each character one, a create request one while it runs. A full cache
 * drops its least recently used model that nothing else holds; when every
 * model is in use the cache takes no other mass (the create is refused:
 * at most SRV_PHYSICS_MODELS_PER_DATABASE models per database, counted in
 * the entry's physics_models_bytes). Cache and counts are touched on the
 * loop thread only; a build runs on the pool and is installed on the loop.
 *
 * What is not here: which requests build (actor_physical.c), the body.
 */
#ifndef SRV_PHYSICS_MODELS_H
#define SRV_PHYSICS_MODELS_H

#include <stddef.h>
#include <stdint.h>
#include "body.h"

#define SRV_PHYSICS_MODELS_PER_DATABASE 8

typedef struct srv_physics_model {
  anim_physics_model_t *model;
  float total_mass;    /* kg: the cache's key */
  int refs;            /* loop thread */
  int cached;          /* held by a cache */
  uint64_t last_used;  /* the cache's clock at the last find or put */
  size_t memory_bytes; /* anim_physics_model_bytes */
} srv_physics_model_t;

typedef struct srv_physics_cache {
  srv_physics_model_t *models[SRV_PHYSICS_MODELS_PER_DATABASE];
  int count;
  uint64_t clock;
  size_t memory_bytes; /* of the cached models */
  uint64_t builds, hits, evictions;
} srv_physics_cache_t;

/* Builds the model of db's skeleton at total_mass (any thread; db
 * read-only) sized for a crowd of bodies. 0 and *out with one reference
 * (the caller's), or a code with its message in err. */
int srv_physics_model_build(const anim_database_t *db, float total_mass, srv_physics_model_t **out, char *err,
                            int errlen);

/* Reference counting (loop thread); both accept NULL. The last release frees. */
srv_physics_model_t *srv_physics_model_retain(srv_physics_model_t *model);
void srv_physics_model_release(srv_physics_model_t *model);

/* A new cache (loop), NULL on ENOMEM; srv_physics_cache_free drops every
 * model's cache reference and frees it (NULL: nothing). */
srv_physics_cache_t *srv_physics_cache_create(void);
void srv_physics_cache_free(srv_physics_cache_t *cache);

/* The cached model of total_mass with a reference for the caller, or NULL. Loop. */
srv_physics_model_t *srv_physics_cache_find(srv_physics_cache_t *cache, float total_mass);

/* 1 when a model of a new mass could join the cache now (a free place, or
 * a model only the cache holds to drop), else 0. Loop. */
int srv_physics_cache_has_room(const srv_physics_cache_t *cache);

/* Caches model (a new build; the caller keeps its reference). When the
 * cache already holds a model of that mass (a build finished first), the
 * caller's is released and the cached one returned with a reference in
 * its place; else model is returned, cached when there was room (a full
 * cache drops its least recently used model that only it holds), not
 * cached (model->cached 0) when every cached model is in use. Loop. */
srv_physics_model_t *srv_physics_cache_put(srv_physics_cache_t *cache, srv_physics_model_t *model);

/* The cached masses, "70, 90 kg", into out (size bytes). */
void srv_physics_cache_masses(const srv_physics_cache_t *cache, char *out, size_t size);

#endif
