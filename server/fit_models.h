/*
 * fit_models.h: the pose-fit models of a database (core/fit/pose_fit.h), one
 * per set of tracked bones, built on demand and cached with the database.
 *
 * A model (the tracked bones' own feature schema, matrix and search index,
 * and the joints' statistics) costs a pass over the database to build (5 ms
 * for 4,300 frames) and is read-only afterwards, so one-shot fits and
 * tracker characters share it. A database entry holds a small cache of them
 * (srv_fit_cache_t, at most SRV_FIT_MODELS_PER_DATABASE, the least recently
 * used dropped first); a model is reference-counted like the entry itself,
 * so a dropped model lives on while a request or a character uses it. The
 * cache and the counts are touched on the loop thread only; a build runs on
 * any thread (it reads the read-only database) and is installed on the
 * loop. What is not here: which requests build (the services), the fit.
 *
 * Memory of a model: the feature matrix (frames x 6 floats per tracker),
 * its search index, and a few floats per joint; memory_bytes counts it.
 */
#ifndef SRV_FIT_MODELS_H
#define SRV_FIT_MODELS_H

#include <stddef.h>
#include <stdint.h>
#include "fit/pose_fit.h"

#define SRV_FIT_MODELS_PER_DATABASE 8

/* A tracked bone as a request names it, and the tracked point in its frame. */
typedef struct {
  const char *bone;
  vec3 offset;
} srv_tracked_bone_t;

/* What a model is built for: tracked bones (skeleton indices, increasing)
 * and the tracked points' offsets in their frames. Model tracker k is key
 * entry k. */
typedef struct {
  int ntrackers;
  int bones[ANIM_POSE_FIT_MAX_TRACKERS];
  vec3 offsets[ANIM_POSE_FIT_MAX_TRACKERS];
} srv_fit_key_t;

typedef struct srv_fit_model {
  anim_pose_fit_model_t model;
  srv_fit_key_t key;
  int refs;            /* loop thread */
  uint64_t last_used;  /* the cache's clock at the last find or put */
  size_t memory_bytes;
} srv_fit_model_t;

typedef struct srv_fit_cache {
  srv_fit_model_t *models[SRV_FIT_MODELS_PER_DATABASE];
  int count;
  uint64_t clock;
  uint64_t builds, hits, evictions;
} srv_fit_cache_t;

/* The key of n tracked bones (the i-th at bones + i * stride bytes, so
 * that a list of structs that start with one serves; names resolved in
 * db's skeleton), and out_order[i]: the model tracker of bone i. 0; ANIM_ENOTFOUND (a name not in the
 * skeleton), ANIM_EINVAL (a bone twice, none, more than ANIM_POSE_FIT_MAX_TRACKERS,
 * an offset not finite); err then starts with "[i].bone" / "[i].offset" for
 * the caller's field path. */
int srv_fit_key_make(srv_fit_key_t *out, const anim_database_t *db, const srv_tracked_bone_t *bones, size_t stride,
                     int n, int *out_order, char *err, int errlen);

/* Builds the model of key on db (any thread; db read-only and outliving
 * the model). 0 and *out with one reference (the caller's), or a core code
 * with its message in err. */
int srv_fit_model_build(const anim_database_t *db, const srv_fit_key_t *key, srv_fit_model_t **out, char *err,
                        int errlen);

/* Reference counting (loop thread); both accept NULL. The last release frees. */
srv_fit_model_t *srv_fit_model_retain(srv_fit_model_t *model);
void srv_fit_model_release(srv_fit_model_t *model);

/* The cached model of key with a reference for the caller, or NULL. Loop. */
srv_fit_model_t *srv_fit_cache_find(srv_fit_cache_t *cache, const srv_fit_key_t *key);

/* Caches model (a new build; the caller keeps its reference). When the
 * cache already holds a model of that key (a build finished first), the
 * caller's is released and the cached one returned with a reference in its
 * place; else model is returned. A full cache drops its least recently
 * used model first. Loop. */
srv_fit_model_t *srv_fit_cache_put(srv_fit_cache_t *cache, srv_fit_model_t *model);

/* Drops every model's cache reference (the database is going away: nothing
 * else may hold one). */
void srv_fit_cache_clear(srv_fit_cache_t *cache);

/* Bytes of the cached models. */
size_t srv_fit_cache_bytes(const srv_fit_cache_t *cache);

#endif
