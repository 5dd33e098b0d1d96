/* registry.c: named databases with reference-counted entries (see registry.h). */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "learned/lmm.h"
#include "registry.h"

static size_t database_memory(const anim_database_t *db) {
  size_t per_bone = (size_t)db->nframes * (size_t)db->nbones;
  size_t poses = per_bone * (6 * sizeof(vec3) + 2 * sizeof(quat));
  size_t features = (size_t)db->features.rows * (size_t)db->features.cols * sizeof(float);
  return poses + features + (size_t)db->nframes * (size_t)db->ncontacts + (size_t)db->nranges * sizeof(anim_range_t);
}

/* Read by builds on any thread, written only while none runs. */
static _Atomic(const anim_task_runner_t *) build_runner;

void srv_db_entry_set_build_runner(const anim_task_runner_t *runner) { atomic_store(&build_runner, runner); }

srv_db_entry_t *srv_db_entry_create(anim_database_t *db, const char *source, char *err, int errlen) {
  srv_db_entry_t *entry = calloc(1, sizeof *entry);
  if (!entry) {
    snprintf(err, errlen, "out of memory");
    anim_database_free(db);
    return NULL;
  }
  entry->db = *db;
  memset(db, 0, sizeof *db);
  snprintf(entry->source, sizeof entry->source, "%s", source ? source : "");
  entry->refs = 1;
  anim_search_data_t data = anim_search_data_of(&entry->db);
  entry->memory_bytes = database_memory(&entry->db);
  for (int m = 0; m < ANIM_SEARCH_METHOD_COUNT; m++) {
    entry->indexes[m] =
        anim_search_index_build_parallel((anim_search_method_t)m, &data, atomic_load(&build_runner), err, errlen);
    if (!entry->indexes[m]) {
      srv_db_entry_release(entry);
      return NULL;
    }
    entry->memory_bytes += anim_search_index_memory(entry->indexes[m]);
  }
  return entry;
}

void srv_db_entry_set_networks(srv_db_entry_t *entry, struct anim_lmm_networks *nets) {
  entry->lmm = entry->lmm_owned = nets;
  entry->memory_bytes += anim_lmm_networks_memory(nets);
}

srv_db_entry_t *srv_db_entry_retain(srv_db_entry_t *entry) {
  if (entry) entry->refs++;
  return entry;
}

void srv_db_entry_summary(const srv_db_entry_t *entry, srv_db_summary_t *out) {
  const anim_database_t *db = &entry->db;
  memset(out, 0, sizeof *out);
  snprintf(out->name, sizeof out->name, "%s", db->name);
  out->version = db->version;
  out->frames = (uint32_t)db->nframes;
  out->bones = (uint32_t)db->nbones;
  out->frame_rate = db->frame_rate;
  out->feature_dims = (uint32_t)db->features.cols;
  out->ranges = (uint32_t)db->nranges;
  out->memory_bytes = entry->memory_bytes;
  out->graph_memory_bytes = entry->graph_memory_bytes;
}

void srv_db_entry_release(srv_db_entry_t *entry) {
  if (!entry || --entry->refs > 0) return;
  if (entry->graph) entry->graph_free(entry->graph);
  if (entry->physics) entry->physics_free(entry->physics);
  if (entry->physics_models) entry->physics_models_free(entry->physics_models);
  srv_fit_cache_clear(&entry->fit_models); /* its models read the database */
  for (int m = 0; m < ANIM_SEARCH_METHOD_COUNT; m++) anim_search_index_free(entry->indexes[m]);
  anim_database_free(&entry->db);
  anim_lmm_networks_free(entry->lmm_owned); /* after the database: characters on it are gone (they hold references) */
  free(entry);
}

static int find(const srv_registry_t *registry, const char *name) {
  for (int i = 0; i < registry->count; i++)
    if (strcmp(registry->entries[i]->db.name, name) == 0) return i;
  return -1;
}

srv_db_entry_t *srv_registry_acquire(srv_registry_t *registry, const char *name) {
  int i = find(registry, name);
  return i < 0 ? NULL : srv_db_entry_retain(registry->entries[i]);
}

int srv_registry_put(srv_registry_t *registry, srv_db_entry_t *entry) {
  int i = find(registry, entry->db.name);
  if (i >= 0) {
    srv_db_entry_release(registry->entries[i]);
    registry->entries[i] = entry;
    return 0;
  }
  if (registry->count == SRV_REGISTRY_MAX) return ANIM_ELIMIT;
  registry->entries[registry->count++] = entry;
  return 0;
}

int srv_registry_fits(const srv_registry_t *registry, const srv_db_entry_t *entry, int max_count, size_t max_bytes,
                       char *err, int errlen) {
  int replaces = find((srv_registry_t *)registry, entry->db.name) >= 0;
  size_t bytes = entry->memory_bytes;
  for (int i = 0; i < registry->count; i++)
    if (strcmp(registry->entries[i]->db.name, entry->db.name) != 0) bytes += registry->entries[i]->memory_bytes;
  if (!replaces && registry->count >= max_count) {
    snprintf(err, errlen, "the server holds %d databases, at most %d (--max-databases)", registry->count, max_count);
    return ANIM_ELIMIT;
  }
  if (max_bytes && bytes > max_bytes) {
    snprintf(err, errlen, "databases would take %zu bytes, at most %zu (--max-database-memory)", bytes, max_bytes);
    return ANIM_ELIMIT;
  }
  return 0;
}

int srv_registry_remove(srv_registry_t *registry, const char *name) {
  int i = find(registry, name);
  if (i < 0) return ANIM_ENOTFOUND;
  srv_db_entry_release(registry->entries[i]);
  /* Keep the remaining order: listings stay stable across unloads. */
  memmove(&registry->entries[i], &registry->entries[i + 1],
          (size_t)(registry->count - i - 1) * sizeof registry->entries[0]);
  registry->count--;
  return 0;
}

void srv_registry_clear(srv_registry_t *registry) {
  while (registry->count > 0) srv_db_entry_release(registry->entries[--registry->count]);
}

int srv_db_name_validate(const char *name) {
  size_t len = strlen(name);
  if (len == 0 || len >= ANIM_NAME_MAX || name[0] == '.') return ANIM_EBADNAME;
  for (size_t i = 0; i < len; i++) {
    char c = name[i];
    int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
             c == '.';
    if (!ok) return ANIM_EBADNAME;
  }
  return 0;
}
