/* graph_paths.c: the paths the graph benches follow (see graph_paths.h). */
#include <math.h>
#include "graph_paths.h"

void bench_graph_paths_init(bench_graph_paths_t *out, float ahead_seconds, float circle_seconds) {
  static const float line_z[] = {0, 0, 0, 10}, line_x[] = {0, 0, 10, 0}, short_x[] = {0, 0, 5, 0};
  static const float l_left[] = {0, 0, 0, 3, 3, 3}, l_right[] = {0, 0, 0, 3, -3, 3};
  for (int i = 0; i < 64; i++) {
    float a = 2.0f * (float)M_PI * (float)i / 64.0f;
    out->right[2 * i] = 3.0f * sinf(a), out->right[2 * i + 1] = 3.0f - 3.0f * cosf(a);
    out->left[2 * i] = -out->right[2 * i], out->left[2 * i + 1] = out->right[2 * i + 1];
  }
  const bench_graph_path_t paths[BENCH_GRAPH_PATHS] = {
      {"line +Z 10 m", line_z, 2, 0, 0.0f, ahead_seconds, 0},
      {"line +X 10 m", line_x, 2, 0, 0.0f, 20.0f, 0},
      {"line +X 5 m", short_x, 2, 0, 0.0f, 20.0f, 0},
      {"L left", l_left, 3, 0, 0.0f, 12.0f, 0},
      {"L right", l_right, 3, 0, 0.0f, 12.0f, 0},
      {"circle right r=3", out->right, 64, 1, (float)M_PI / 2, circle_seconds, 300},
      {"circle left r=3", out->left, 64, 1, -(float)M_PI / 2, circle_seconds, 300},
  };
  for (int k = 0; k < BENCH_GRAPH_PATHS; k++) out->paths[k] = paths[k];
}
