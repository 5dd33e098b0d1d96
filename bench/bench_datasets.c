/* bench_datasets.c: the benchmarks' datasets (see bench_datasets.h). */
#include <stdio.h>
#include <string.h>
#include "bench_datasets.h"
#include "offline/procgen.h"

void bench_datasets_load(bench_dataset_t *sets, const char *shared, const char *only, const char *tool) {
  memset(sets, 0, BENCH_DATASETS * sizeof *sets);
  for (int d = 0; d < BENCH_DATASETS; d++) {
    char err[512];
    sets[d].name = d == 0 ? "default" : anim_quality_datasets[d - 1].name;
    if (only && !strstr(only, sets[d].name)) continue;
    int rc = d == 0 ? anim_procgen_database(&sets[d].db, NULL, err, sizeof err)
                    : anim_quality_dataset_build(&sets[d].db, shared, d - 1, err, sizeof err);
    if (rc) {
      fprintf(stderr, "%s: %s: %s\n", tool, sets[d].name, err);
      continue;
    }
    anim_search_data_t data = anim_search_data_of(&sets[d].db);
    sets[d].index = anim_search_index_build(ANIM_SEARCH_FAST, &data, err, sizeof err);
    if (!sets[d].index) fprintf(stderr, "%s: %s: %s\n", tool, sets[d].name, err);
    sets[d].ok = sets[d].index != NULL;
  }
}

void bench_datasets_free(bench_dataset_t *sets) {
  for (int d = 0; d < BENCH_DATASETS; d++)
    if (sets[d].ok) anim_search_index_free(sets[d].index), anim_database_free(&sets[d].db);
}
