/*
 * physics_models.c: a database's physics models, one per body mass, shared
 * and cached (physics_models.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include "anim_error.h"
#include "physics_models.h"

int srv_physics_model_build(const anim_database_t *db, float total_mass, srv_physics_model_t **out, char *err,
                            int errlen) {
  *out = NULL;
  srv_physics_model_t *pm = calloc(1, sizeof *pm);
  if (!pm) return snprintf(err, (size_t)errlen, "%s", anim_strerror(ANIM_ENOMEM)), ANIM_ENOMEM;
  anim_physics_model_options_t o;
  anim_physics_model_options_default(&o);
  o.total_mass = total_mass;
  if (!(pm->model = anim_physics_model_create(db, &o, err, errlen))) {
    free(pm);
    return ANIM_EUNSUPPORTED;
  }
  /* Bodies for a crowd: 2.3 MB and 0.3-0.6 ms each instead of 23 MB and
   * 4 ms (a body falling and lying peaked at 91 rows, 22 contacts and
   * 23,143 stack values: physics/body.h). */
  anim_physics_model_set_sizes(pm->model, 131072, 250, 64);
  pm->total_mass = total_mass;
  pm->refs = 1;
  pm->memory_bytes = sizeof *pm + anim_physics_model_bytes(pm->model);
  *out = pm;
  return 0;
}

srv_physics_model_t *srv_physics_model_retain(srv_physics_model_t *model) {
  if (model) model->refs++;
  return model;
}

void srv_physics_model_release(srv_physics_model_t *model) {
  if (!model || --model->refs > 0) return;
  anim_physics_model_free(model->model);
  free(model);
}

srv_physics_cache_t *srv_physics_cache_create(void) { return calloc(1, sizeof(srv_physics_cache_t)); }

void srv_physics_cache_free(srv_physics_cache_t *cache) {
  if (!cache) return;
  for (int i = 0; i < cache->count; i++) cache->models[i]->cached = 0, srv_physics_model_release(cache->models[i]);
  free(cache);
}

srv_physics_model_t *srv_physics_cache_find(srv_physics_cache_t *cache, float total_mass) {
  for (int i = 0; i < cache->count; i++)
    if (cache->models[i]->total_mass == total_mass) {
      cache->models[i]->last_used = ++cache->clock;
      cache->hits++;
      return srv_physics_model_retain(cache->models[i]);
    }
  return NULL;
}

/* The least recently used model only the cache holds, or -1. */
static int evictable(const srv_physics_cache_t *cache) {
  int best = -1;
  for (int i = 0; i < cache->count; i++)
    if (cache->models[i]->refs == 1 && (best < 0 || cache->models[i]->last_used < cache->models[best]->last_used))
      best = i;
  return best;
}

int srv_physics_cache_has_room(const srv_physics_cache_t *cache) {
  return cache->count < SRV_PHYSICS_MODELS_PER_DATABASE || evictable(cache) >= 0;
}

srv_physics_model_t *srv_physics_cache_put(srv_physics_cache_t *cache, srv_physics_model_t *model) {
  for (int i = 0; i < cache->count; i++)
    if (cache->models[i]->total_mass == model->total_mass) {
      srv_physics_model_release(model);
      cache->models[i]->last_used = ++cache->clock;
      return srv_physics_model_retain(cache->models[i]);
    }
  cache->builds++;
  if (cache->count == SRV_PHYSICS_MODELS_PER_DATABASE) {
    int drop = evictable(cache);
    if (drop < 0) return model; /* every model in use: this one serves its request uncached */
    srv_physics_model_t *old = cache->models[drop];
    cache->memory_bytes -= old->memory_bytes;
    old->cached = 0;
    srv_physics_model_release(old);
    cache->models[drop] = cache->models[--cache->count];
    cache->evictions++;
  }
  cache->models[cache->count++] = srv_physics_model_retain(model);
  model->cached = 1;
  model->last_used = ++cache->clock;
  cache->memory_bytes += model->memory_bytes;
  return model;
}

void srv_physics_cache_masses(const srv_physics_cache_t *cache, char *out, size_t size) {
  size_t len = 0;
  out[0] = '\0';
  for (int i = 0; i < cache->count && len < size; i++) {
    int n = snprintf(out + len, size - len, "%s%g", i ? ", " : "", (double)cache->models[i]->total_mass);
    if (n < 0) break;
    len += (size_t)n;
  }
  if (len < size) snprintf(out + len, size - len, " kg");
}
