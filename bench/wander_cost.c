/* wander_cost.c: see wander_cost.h. */
#include <stdlib.h>
#include "bench_util.h"
#include "input_program.h"
#include "wander_cost.h"

double bench_wander_tick_cost(const anim_database_t *db, const anim_search_index_t *index,
                              const anim_controller_params_t *params, int n) {
  anim_controller_t *c = calloc((size_t)n, sizeof *c);
  anim_input_program_t *programs = calloc((size_t)n, sizeof *programs);
  if (!c || !programs) {
    free(c), free(programs);
    return -1.0;
  }
  const float dt = 1.0f / 60.0f;
  enum { TICKS = 600 };
  for (int i = 0; i < n; i++) {
    anim_controller_init(&c[i], db, index, params, vec3_make(3.0f * (float)i, 0, 0), 0, 0);
    anim_controller_stagger(&c[i], i % params->search_interval);
    anim_input_program_init(&programs[i], ANIM_PROGRAM_WANDER, 7u + (uint32_t)i);
  }
  double start = bench_cpu_s();
  for (int t = 0; t < TICKS; t++)
    for (int i = 0; i < n; i++) {
      anim_controller_input_t in;
      if (anim_input_program_at(&programs[i], (float)t * dt, &in, NULL, NULL)) anim_controller_set_input(&c[i], &in);
      anim_controller_tick(&c[i], dt);
    }
  double elapsed = bench_cpu_s() - start;
  for (int i = 0; i < n; i++) anim_controller_free(&c[i]);
  free(c), free(programs);
  return elapsed / ((double)n * TICKS);
}
