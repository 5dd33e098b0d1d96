/* fit_models.c: pose-fit models built on demand and cached per database (see fit_models.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "fit_models.h"

int srv_fit_key_make(srv_fit_key_t *out, const anim_database_t *db, const srv_tracked_bone_t *bones, size_t stride,
                     int n, int *out_order, char *err, int errlen) {
#define BONE(i) ((const srv_tracked_bone_t *)((const char *)bones + (size_t)(i) * stride))
  memset(out, 0, sizeof *out);
  if (n < 1 || n > ANIM_POSE_FIT_MAX_TRACKERS) {
    snprintf(err, (size_t)errlen, " has %d trackers: 1 to %d", n, ANIM_POSE_FIT_MAX_TRACKERS);
    return ANIM_EINVAL;
  }
  int index[ANIM_POSE_FIT_MAX_TRACKERS];
  for (int i = 0; i < n; i++) {
    index[i] = anim_skeleton_find(&db->skeleton, BONE(i)->bone);
    if (index[i] < 0) {
      snprintf(err, (size_t)errlen, "[%d].bone = \"%s\": database %s has no such bone", i, BONE(i)->bone, db->name);
      return ANIM_ENOTFOUND;
    }
    vec3 o = BONE(i)->offset;
    if (!isfinite(o.x) || !isfinite(o.y) || !isfinite(o.z)) {
      snprintf(err, (size_t)errlen, "[%d].offset: not finite", i);
      return ANIM_EINVAL;
    }
    for (int j = 0; j < i; j++)
      if (index[j] == index[i]) {
        snprintf(err, (size_t)errlen, "[%d].bone = \"%s\": given twice (also [%d])", i, BONE(i)->bone, j);
        return ANIM_EINVAL;
      }
  }
  /* Sorted by bone: the same set in another order shares the model. */
  out->ntrackers = n;
  for (int i = 0; i < n; i++) {
    int rank = 0;
    for (int j = 0; j < n; j++) rank += index[j] < index[i];
    out->bones[rank] = index[i];
    out->offsets[rank] = BONE(i)->offset;
    out_order[i] = rank;
  }
  return 0;
#undef BONE
}

int srv_fit_model_build(const anim_database_t *db, const srv_fit_key_t *key, srv_fit_model_t **out, char *err,
                        int errlen) {
  *out = NULL;
  srv_fit_model_t *m = calloc(1, sizeof *m);
  if (!m) {
    snprintf(err, (size_t)errlen, "out of memory");
    return ANIM_ENOMEM;
  }
  anim_pose_fit_model_options_t o;
  memset(&o, 0, sizeof o);
  o.ntrackers = key->ntrackers;
  for (int k = 0; k < key->ntrackers; k++) {
    o.tracker_bones[k] = db->skeleton.names[key->bones[k]];
    o.tracker_offsets[k] = key->offsets[k];
  }
  o.position_weight = o.velocity_weight = 1.0f; /* as anim_pose_fit_model_options_default */
  o.search_method = ANIM_SEARCH_FAST;
  int rc = anim_pose_fit_model_build(&m->model, db, &o, err, errlen);
  if (rc) {
    free(m);
    return rc;
  }
  m->key = *key;
  m->refs = 1;
  const anim_features_t *f = &m->model.features;
  m->memory_bytes = sizeof *m + (size_t)f->rows * (size_t)f->cols * sizeof(float) +
                    anim_search_index_memory(m->model.index) +
                    (size_t)m->model.njoints * (sizeof(int) + sizeof(quat) + 3 * sizeof(vec3)) +
                    (size_t)db->nbones * sizeof(int);
  *out = m;
  return 0;
}

srv_fit_model_t *srv_fit_model_retain(srv_fit_model_t *model) {
  if (model) model->refs++;
  return model;
}

void srv_fit_model_release(srv_fit_model_t *model) {
  if (!model || --model->refs > 0) return;
  anim_pose_fit_model_free(&model->model);
  free(model);
}

static int key_equal(const srv_fit_key_t *a, const srv_fit_key_t *b) {
  if (a->ntrackers != b->ntrackers) return 0;
  for (int k = 0; k < a->ntrackers; k++)
    if (a->bones[k] != b->bones[k] || a->offsets[k].x != b->offsets[k].x || a->offsets[k].y != b->offsets[k].y ||
        a->offsets[k].z != b->offsets[k].z)
      return 0;
  return 1;
}

static int find(const srv_fit_cache_t *cache, const srv_fit_key_t *key) {
  for (int i = 0; i < cache->count; i++)
    if (key_equal(&cache->models[i]->key, key)) return i;
  return -1;
}

srv_fit_model_t *srv_fit_cache_find(srv_fit_cache_t *cache, const srv_fit_key_t *key) {
  int i = find(cache, key);
  if (i < 0) return NULL;
  cache->models[i]->last_used = ++cache->clock;
  cache->hits++;
  return srv_fit_model_retain(cache->models[i]);
}

srv_fit_model_t *srv_fit_cache_put(srv_fit_cache_t *cache, srv_fit_model_t *model) {
  int i = find(cache, &model->key);
  if (i >= 0) {
    srv_fit_model_release(model);
    model = srv_fit_model_retain(cache->models[i]);
    model->last_used = ++cache->clock;
    return model;
  }
  if (cache->count == SRV_FIT_MODELS_PER_DATABASE) {
    int oldest = 0;
    for (int j = 1; j < cache->count; j++)
      if (cache->models[j]->last_used < cache->models[oldest]->last_used) oldest = j;
    srv_fit_model_release(cache->models[oldest]); /* users keep theirs */
    cache->models[oldest] = cache->models[--cache->count];
    cache->evictions++;
  }
  cache->models[cache->count++] = srv_fit_model_retain(model);
  model->last_used = ++cache->clock;
  cache->builds++;
  return model;
}

void srv_fit_cache_clear(srv_fit_cache_t *cache) {
  while (cache->count > 0) srv_fit_model_release(cache->models[--cache->count]);
}

size_t srv_fit_cache_bytes(const srv_fit_cache_t *cache) {
  size_t bytes = 0;
  for (int i = 0; i < cache->count; i++) bytes += cache->models[i]->memory_bytes;
  return bytes;
}
