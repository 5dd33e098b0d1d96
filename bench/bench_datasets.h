/*
 * bench_datasets.h: the datasets `animbench transitions` and `animbench
 * warp` run on, built the same way: the default (procedural) database and
 * each shared mocap dataset (tests/support/quality_run.h, as `animdb build
 * --mirror` builds them), each with a fast search index. A dataset that
 * does not build is reported on stderr and skipped (ok 0), so a machine
 * without the shared data still runs the default one.
 */
#ifndef ANIM_BENCH_DATASETS_H
#define ANIM_BENCH_DATASETS_H

#include "database/database.h"
#include "quality_run.h"
#include "search/search.h"

#define BENCH_DATASETS (1 + ANIM_QUALITY_DATASETS) /* the default database first */

typedef struct {
  anim_database_t db;
  anim_search_index_t *index;
  const char *name; /* "default", then anim_quality_datasets' names */
  int ok;           /* built, with its index */
} bench_dataset_t;

/* Builds into sets[BENCH_DATASETS] those whose name contains `only` (NULL:
 * all) from the shared folder; tool prefixes the messages. Free with
 * bench_datasets_free. */
void bench_datasets_load(bench_dataset_t *sets, const char *shared, const char *only, const char *tool);
void bench_datasets_free(bench_dataset_t *sets);

#endif
