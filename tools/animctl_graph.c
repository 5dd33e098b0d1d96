/*
 * animctl_graph.c: the motion-graph subcommands of animctl.
 *
 *   animctl graph build DB [--threshold M] [--window S] [--keep-all] [--matrix N] [--slide auto|on|off]
 *       starts a build on the server's pool and follows its progress
 *   animctl graph info DB [--transitions] [--svg FILE]
 *       the graph; --svg draws the distance matrix the build kept (--matrix
 *       N at build time), darker is closer, the transitions in red
 *   animctl graph path DB X,Z X,Z ... [--closed] [--seconds S] [--settle S]
 *                      [--no-warm] [--no-bound] [--no-memory]
 *       a walk planned along the polyline, its error from it; the flags
 *       turn the planner's refinements off (PathOptions.disable_*)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "animctl.h"

static const char *const slide_names[] = {"auto", "on", "off"}; /* ANIM_SLIDE_* */

static void print_description(const anim_graph_description_t *d, int json) {
  static const char *const status[] = {"none", "building", "ready", "failed"};
  const char *st = d->status >= 0 && d->status <= 3 ? status[d->status] : "?";
  const char *slide = d->slide >= ANIM_SLIDE_AUTO && d->slide <= ANIM_SLIDE_OFF ? slide_names[d->slide] : "?";
  if (json) {
    printf("{\"status\": \"%s\", \"progress\": %.3f, \"ready\": %s, \"frames\": %u, \"candidates\": %u, "
           "\"components\": %u, \"nodes\": %u, \"edges\": %u, \"transitions\": %u, \"slide\": \"%s\", "
           "\"build_seconds\": %.3f, \"memory_bytes\": %llu, \"characters\": %u, \"error\": \"%s\"}\n",
           st, d->progress, d->ready ? "true" : "false", d->frames, d->candidates, d->components, d->nodes, d->edges,
           d->transitions, slide, d->build_seconds, (unsigned long long)d->memory_bytes, d->characters, d->error);
    return;
  }
  printf("graph %s", st);
  if (d->status == ANIM_GRAPH_BUILDING) printf(" (%.0f%%)", 100.0f * d->progress);
  if (d->error[0]) printf(": %s", d->error);
  printf("\n");
  if (d->ready)
    printf("  %u frames compared, %u candidate transitions, %u components before pruning; slide %s\n"
           "  %u nodes, %u edges, %u transitions; built in %.2f s, %.1f KiB, %u characters on it\n",
           d->frames, d->candidates, d->components, slide, d->nodes, d->edges, d->transitions, d->build_seconds,
           d->memory_bytes / 1024.0, d->characters);
}

static int graph_build(const options_t *o, int argc, char **argv) {
  anim_graph_build_options_t go = {0};
  for (int i = 3; i < argc; i++) {
    if (!strcmp(argv[i], "--keep-all")) go.keep_all = 1;
    else if (i + 1 < argc && !strcmp(argv[i], "--threshold")) go.threshold = strtof(argv[++i], NULL);
    else if (i + 1 < argc && !strcmp(argv[i], "--window")) go.window = strtof(argv[++i], NULL);
    else if (i + 1 < argc && !strcmp(argv[i], "--matrix")) go.matrix_size = atoi(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--slide")) {
      const char *v = argv[++i];
      go.slide = -1;
      for (int k = ANIM_SLIDE_AUTO; k <= ANIM_SLIDE_OFF; k++)
        if (!strcmp(v, slide_names[k])) go.slide = k;
      if (go.slide < 0) return animctl_fail("graph build: --slide %s: auto, on or off", v);
    } else return animctl_fail("graph build: unknown option %s", argv[i]);
  }
  anim_graph_description_t *d = NULL;
  anim_client_t *client;
  int rc = animctl_connect(o, &client);
  if (rc) return rc;
  rc = anim_client_graph_build(client, argv[2], &go, &d, o->timeout_ms);
  while (!rc && d->status == ANIM_GRAPH_BUILDING) {
    if (!o->json) fprintf(stderr, "\rbuilding: %3.0f%%", 100.0f * d->progress);
    uint64_t rtt;
    anim_client_ping(client, NULL, 0, &rtt, o->timeout_ms); /* a short pause that keeps the connection alive */
    anim_graph_description_free(d);
    rc = anim_client_graph_describe(client, argv[2], 0, 0, &d, o->timeout_ms);
  }
  if (!o->json) fprintf(stderr, "\r");
  if (!rc) print_description(d, o->json);
  int failed = !rc && d->status == ANIM_GRAPH_FAILED;
  anim_graph_description_free(d);
  return rc ? report_error("graph build", rc, client) : failed;
}

/* The distance picture: a cell per block of frames, grey by distance (darker is
 * closer), the transitions as red dots. */
static int write_svg(const char *path, const anim_graph_description_t *d) {
  FILE *f = fopen(path, "w");
  if (!f) return animctl_fail("%s: cannot write", path), 1;
  int n = d->matrix_size;
  float top = 0.0f;
  for (int i = 0; i < n * n; i++)
    if (isfinite(d->matrix[i]) && d->matrix[i] > top) top = d->matrix[i];
  const float cell = 512.0f / (float)n;
  fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"512\" height=\"512\" shape-rendering=\"crispEdges\">\n"
             "<rect width=\"512\" height=\"512\" fill=\"#ffffff\"/>\n");
  for (int r = 0; r < n; r++)
    for (int c = 0; c < n; c++) {
      float v = d->matrix[r * n + c];
      if (!isfinite(v)) continue;
      int g = (int)(255.0f * (top > 0.0f ? sqrtf(v / top) : 0.0f));
      fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"rgb(%d,%d,%d)\"/>\n", c * cell,
              r * cell, cell + 0.05f, cell + 0.05f, g, g, g);
    }
  for (int t = 0; t < d->ntransitions; t++) {
    float x = 512.0f * (float)d->transition_list[t].to_frame / (float)d->frames;
    float y = 512.0f * (float)d->transition_list[t].from_frame / (float)d->frames;
    fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"1.5\" fill=\"#e0301e\"/>\n", x, y);
  }
  fprintf(f, "</svg>\n");
  return fclose(f) == 0 ? 0 : 1;
}

static int graph_info(const options_t *o, int argc, char **argv) {
  int transitions = 0;
  const char *svg = NULL;
  for (int i = 3; i < argc; i++) {
    if (!strcmp(argv[i], "--transitions")) transitions = 1;
    else if (i + 1 < argc && !strcmp(argv[i], "--svg")) svg = argv[++i];
    else return animctl_fail("graph info: unknown option %s", argv[i]);
  }
  anim_graph_description_t *d = NULL;
  anim_client_t *client;
  int rc = animctl_connect(o, &client);
  if (rc) return rc;
  rc = anim_client_graph_describe(client, argv[2], transitions || svg, svg != NULL, &d, o->timeout_ms);
  if (rc) return report_error("graph info", rc, client);
  print_description(d, o->json);
  for (int t = 0; transitions && t < d->ntransitions; t++)
    printf(o->json ? "{\"from\": %u, \"to\": %u, \"distance\": %.4f, \"angle\": %.4f}\n"
                   : "  transition %u -> %u  %.4f m  %.3f rad\n",
           d->transition_list[t].from_frame, d->transition_list[t].to_frame, d->transition_list[t].distance,
           d->transition_list[t].angle);
  if (svg && !d->matrix) {
    animctl_fail("the graph kept no distance picture (graph build --matrix N)");
    rc = 1;
  } else if (svg) {
    rc = write_svg(svg, d);
  }
  anim_graph_description_free(d);
  return rc;
}

static int graph_path(const options_t *o, int argc, char **argv) {
  float points[2 * 64];
  anim_walk_options_t wo = {0};
  anim_graph_query_t q = {.points = points, .options = &wo};
  for (int i = 3; i < argc; i++) {
    if (!strcmp(argv[i], "--closed")) q.closed = 1;
    else if (!strcmp(argv[i], "--no-warm")) wo.disable_warm = 1;
    else if (!strcmp(argv[i], "--no-bound")) wo.disable_bound = 1;
    else if (!strcmp(argv[i], "--no-memory")) wo.disable_memory = 1;
    else if (i + 1 < argc && !strcmp(argv[i], "--seconds")) q.seconds = strtof(argv[++i], NULL);
    else if (i + 1 < argc && !strcmp(argv[i], "--settle")) q.settle = strtof(argv[++i], NULL);
    else if (q.npoints < 64 && sscanf(argv[i], "%f,%f", &points[2 * q.npoints], &points[2 * q.npoints + 1]) == 2)
      q.npoints++;
    else return animctl_fail("graph path: %s: expected X,Z or an option", argv[i]);
  }
  if (q.npoints < 2) return animctl_fail("graph path DB X,Z X,Z ...: two points at least");
  anim_graph_walk_t *w = NULL;
  anim_client_t *client;
  int rc = animctl_connect(o, &client);
  if (rc) return rc;
  rc = anim_client_graph_query(client, argv[2], &q, &w, o->timeout_ms);
  if (rc) return report_error("graph path", rc, client);
  if (o->json)
    printf("{\"steps\": %d, \"seconds\": %.3f, \"arc\": %.3f, \"error_mean\": %.4f, \"error_max\": %.4f, "
           "\"plans\": %u, \"expansions\": %llu, \"plans_exhausted\": %u, \"plan_ms_mean\": %.3f, "
           "\"plan_ms_max\": %.3f}\n",
           w->nsteps, w->seconds, w->arc, w->error_mean, w->error_max, w->plans, (unsigned long long)w->expansions,
           w->plans_exhausted, w->plan_ms_mean, w->plan_ms_max);
  else {
    for (int s = 0; s < w->nsteps; s++)
      printf("  %7.3f s  frames %u..%u%s\n", w->steps[s].time, w->steps[s].first_frame, w->steps[s].last_frame,
             w->steps[s].jump ? "  (transition)" : "");
    printf("%d steps over %.1f s, %.1f m of the path; error from it mean %.3f m, worst %.3f m at %.1f s; "
           "%u plans, %.2f ms each (worst %.2f), %llu edges tried, %u plans cut short\n",
           w->nsteps, w->seconds, w->arc, w->error_mean, w->error_max, w->error_max_time, w->plans, w->plan_ms_mean,
           w->plan_ms_max, (unsigned long long)w->expansions, w->plans_exhausted);
  }
  anim_graph_walk_free(w);
  return 0;
}

int animctl_graph(const options_t *o, int argc, char **argv) {
  const char *verb = argc > 2 ? argv[1] : "";
  if (!strcmp(verb, "build")) return graph_build(o, argc, argv);
  if (!strcmp(verb, "info")) return graph_info(o, argc, argv);
  if (!strcmp(verb, "path")) return graph_path(o, argc, argv);
  return animctl_fail("graph build|info|path DB ... (animctl --help)");
}
