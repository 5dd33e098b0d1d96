/* wander_cost.h: what one controller tick costs, measured the one way the
 * benchmarks share: n characters wandering (the WANDER input program) for
 * 600 ticks at 60 Hz, CPU time of the process per character-tick. */
#ifndef ANIM_BENCH_WANDER_COST_H
#define ANIM_BENCH_WANDER_COST_H

#include "character/controller.h"
#include "search/search.h"

double bench_wander_tick_cost(const anim_database_t *db, const anim_search_index_t *index,
                              const anim_controller_params_t *params, int n);

#endif
