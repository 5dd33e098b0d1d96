/*
 * bench_feet.c: `animbench feet`: motion quality of motion-matching
 * characters on real mocap under three input programs (issue 16), and what
 * it costs.
 *
 * In process (always): for each dataset (Bandai Namco, GAMES-105, built as
 * `animdb build --mirror` builds them) and each input program (the tour, a
 * wander, velocity reversals; tests/support/input_program.h) a controller is
 * driven for --seconds with --seeds seeds and measured on what it displays
 * with the flags the server streams (tests/support/motion_quality.h):
 * contact-foot slide p50/p95/worst, the worst bone speed against its source
 * maximum, the time to reach a commanded speed, contact shares and heights.
 *
 * --wire: the same programs over the wire: the real server (build/animserver,
 * loopback, ephemeral port) with both databases in a temporary data folder,
 * one character per dataset, program and seed created by one connection,
 * steered by set_input as the program changes, and measured from the stream
 * (float poses with global positions and the contact bits) in real time.
 *
 * --search-scale N: the in-process runs with periodic searches N times
 * rarer, as the server's level of detail (lod-search-scale) runs characters
 * it does not stream at full rate: the quality that costs.
 *
 * --skip-feet always|toggle: the in-process runs with foot locking skipped
 * every tick, or on and off every 1.5 s (a character crossing a band's
 * edge), as the server's level of detail skips it for characters it does
 * not stream at full rate (controller.h's skip_feet): the quality of what
 * a viewer at a far band's rate sees, and the pops at the switches.
 *
 * --svg FILE: a filmstrip of a character wandering on Bandai Namco, top view
 * with footprints (bench/feet_strip.h).
 *
 * Tick cost: the in-process controller's time per character tick on each
 * dataset (the wander program, --cost-characters characters ticked in turn),
 * beside the same characters without foot locking, measured in the same run
 * (a ratio, so it means something on any machine).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench_util.h"
#include "anim_client.h"
#include "character/controller.h"
#include "offline/dbfile_write.h"
#include "feet_strip.h"
#include "quality_run.h"
#include "quality_wire.h"
#include "search/search.h"
#include "wander_cost.h"
#include "server_proc.h"

typedef struct {
  const char *shared;
  float seconds;
  int seeds, wire, cost_characters;
  float wire_seconds;
  const char *json, *svg;
  int search_scale; /* --search-scale: the crowd's level of detail (lod-search-scale) applied in process */
  int skip_feet;    /* --skip-feet: 0 never, 1 every tick, 2 on and off every SKIP_TOGGLE_SECONDS */
} options_t;

/* --skip-feet toggle: the level of detail on and off this often, as a
 * character crossing a band's edge back and forth would have it. */
#define SKIP_TOGGLE_SECONDS 1.5f

/* Sets the next tick's foot-locking level of detail (the quality run's
 * callback sees the character after each tick; skip_feet is read by the
 * next, as the server sets it before a tick). */
typedef struct {
  int mode;
  long ticks;
} skip_t;

static void set_skip(void *ctx, const anim_controller_t *character, uint32_t contacts) {
  skip_t *k = ctx;
  (void)contacts;
  k->ticks++;
  int on = k->mode == 1 || (k->mode == 2 && (int)((float)k->ticks / (60.0f * SKIP_TOGGLE_SECONDS)) % 2 == 1);
  ((anim_controller_t *)character)->skip_feet = on; /* the controller the run owns */
}

typedef struct {
  anim_database_t db;
  anim_search_index_t *index;
  int ok;
} dataset_t;

static void print_row(FILE *out, const char *where, const char *dataset, const char *program, const anim_quality_t *q,
                      const anim_skeleton_t *skeleton) {
  char reached[32];
  snprintf(reached, sizeof reached, "%d/%d", q->reached, q->commands);
  fprintf(out, "%-8s %-13s %-10s %6.3f %6.3f %6.3f  %5.2f %-16s %5.2f %5.2f %7s  %4.2f/%4.2f  %5.3f/%5.3f\n", where,
          dataset, program, (double)q->slide_p50, (double)q->slide_p95, (double)q->slide_max, (double)q->pop_ratio,
          q->pop_bone >= 0 ? skeleton->names[q->pop_bone] : "-", (double)q->response_mean, (double)q->response_max,
          reached, (double)q->flagged_share, (double)q->data_share, (double)q->flagged_height_p95,
          (double)q->data_height_p95);
}

static void print_header(FILE *out) {
  fprintf(out, "%-8s %-13s %-10s %6s %6s %6s  %5s %-16s %5s %5s %7s  %9s  %11s\n", "where", "dataset", "program",
          "p50", "p95", "worst", "pop", "(bone)", "resp", "worst", "reached", "contact", "height p95");
  fprintf(out, "%-8s %-13s %-10s %20s  %22s %19s  %9s  %11s\n", "", "", "", "contact slide, m/s", "speed / source max",
          "response, s", "shown/data", "shown/data m");
}

static void print_json(FILE *json, const char *where, const char *dataset, const char *program, const anim_quality_t *q,
                       int first) {
  fprintf(json, "%s    {\"where\": \"%s\", \"dataset\": \"%s\", \"program\": \"%s\", \"slide_p50\": %.4f, "
                "\"slide_p95\": %.4f, \"slide_max\": %.4f, \"pop_ratio\": %.3f, \"response_mean_s\": %.3f, "
                "\"response_max_s\": %.3f, \"reached\": %d, \"commands\": %d, \"contact_share\": %.3f, "
                "\"data_contact_share\": %.3f, \"contact_height_p95\": %.4f}",
          first ? "" : ",\n", where, dataset, program, (double)q->slide_p50, (double)q->slide_p95, (double)q->slide_max,
          (double)q->pop_ratio, (double)q->response_mean, (double)q->response_max, q->reached, q->commands,
          (double)q->flagged_share, (double)q->data_share, (double)q->flagged_height_p95);
}

/* Merges per-seed results: sample-weighted p50/p95 would need the samples, so the
 * worst seed's p95 and p50 are kept (the bound is on every run). */
static void merge(anim_quality_t *into, const anim_quality_t *q, int first) {
  if (first) {
    *into = *q;
    return;
  }
  if (q->slide_p95 > into->slide_p95) into->slide_p95 = q->slide_p95;
  if (q->slide_p50 > into->slide_p50) into->slide_p50 = q->slide_p50;
  if (q->slide_max > into->slide_max)
    into->slide_max = q->slide_max, into->slide_worst_foot = q->slide_worst_foot,
        into->slide_worst_frame = q->slide_worst_frame;
  if (q->pop_ratio > into->pop_ratio)
    into->pop_ratio = q->pop_ratio, into->pop_bone = q->pop_bone, into->pop_frame = q->pop_frame,
    into->pop_speed = q->pop_speed, into->pop_source = q->pop_source;
  float sum = into->response_mean * (float)into->reached + q->response_mean * (float)q->reached;
  into->reached += q->reached, into->commands += q->commands;
  into->response_mean = into->reached ? sum / (float)into->reached : 0.0f;
  if (q->response_max > into->response_max) into->response_max = q->response_max;
  into->flagged_share = 0.5f * (into->flagged_share + q->flagged_share);
  into->data_share = 0.5f * (into->data_share + q->data_share);
  if (q->flagged_height_p95 > into->flagged_height_p95) into->flagged_height_p95 = q->flagged_height_p95;
  into->slide_samples += q->slide_samples, into->frames += q->frames;
}

static int run_in_process(const options_t *o, dataset_t *sets, FILE *json) {
  /* --search-scale N: periodic searches every search_interval x N frames,
   * as the server's level of detail makes them for characters it does not
   * stream at full rate (the controller's search_scale). */
  anim_controller_params_t params;
  anim_controller_params_default(&params);
  params.search_interval *= o->search_scale;
  if (o->search_scale > 1) printf("level of detail: periodic searches every %d frames\n", params.search_interval);
  if (o->skip_feet)
    printf("level of detail: foot locking skipped %s\n", o->skip_feet == 1 ? "every tick" : "on and off every 1.5 s");
  print_header(stdout);
  int first_json = 1;
  for (int d = 0; d < ANIM_QUALITY_DATASETS; d++) {
    if (!sets[d].ok) continue;
    for (int k = 0; k < ANIM_PROGRAM_COUNT; k++) {
      anim_quality_t all;
      for (int s = 0; s < o->seeds; s++) {
        anim_quality_t q;
        skip_t skip = {o->skip_feet, 0};
        int rc = anim_quality_run_controller(&sets[d].db, sets[d].index, &params, (anim_program_kind_t)k, 1u + (uint32_t)s,
                                             o->seconds, &q, o->skip_feet ? set_skip : NULL, &skip);
        if (rc) return fprintf(stderr, "animbench feet: run failed (%d)\n", rc), 1;
        merge(&all, &q, s == 0);
      }
      print_row(stdout, "process", anim_quality_datasets[d].name, anim_input_program_name((anim_program_kind_t)k), &all,
                &sets[d].db.skeleton);
      if (json)
        print_json(json, "process", anim_quality_datasets[d].name, anim_input_program_name((anim_program_kind_t)k),
                   &all, first_json);
      first_json = 0;
    }
  }
  return 0;
}

/* CPU seconds per character tick of n characters wandering on a dataset. */
static double tick_cost(const dataset_t *set, int n, int foot_lock) {
  anim_controller_params_t p;
  anim_controller_params_default(&p);
  p.foot_lock.enabled = foot_lock;
  return bench_wander_tick_cost(&set->db, set->index, &p, n);
}

static void run_cost(const options_t *o, dataset_t *sets, FILE *json) {
  printf("\ntick cost in process (%d characters wandering, one thread):\n", o->cost_characters);
  for (int d = 0; d < ANIM_QUALITY_DATASETS; d++) {
    if (!sets[d].ok) continue;
    /* Interleaved repeats, the best of each: the machine is shared. */
    double with = 1e9, without = 1e9;
    for (int r = 0; r < 3; r++) {
      double a = tick_cost(&sets[d], o->cost_characters, 0), b = tick_cost(&sets[d], o->cost_characters, 1);
      without = a < without ? a : without, with = b < with ? b : with;
    }
    printf("  %-13s %6.2f us a tick with feet planted, %6.2f us without foot locking: x%.2f\n",
           anim_quality_datasets[d].name, with * 1e6, without * 1e6, with / without);
    if (json)
      fprintf(json, ",\n    {\"cost\": \"%s\", \"tick_us\": %.3f, \"tick_us_no_foot_lock\": %.3f}",
              anim_quality_datasets[d].name, with * 1e6, without * 1e6);
  }
}

static int bench_feet_wire(const options_t *o, dataset_t *sets, FILE *json);

/* The filmstrip: a character wandering on the first dataset (Bandai Namco) for 12 s. */
static int write_strip(dataset_t *set, const char *path) {
  feet_strip_t strip;
  const float dt = 1.0f / 60.0f, seconds = 12.0f;
  feet_strip_init(&strip, &set->db, dt);
  anim_quality_t q;
  int rc = anim_quality_run_controller(&set->db, set->index, NULL, ANIM_PROGRAM_WANDER, 3, seconds, &q,
                                       feet_strip_record, &strip);
  char title[512];
  snprintf(title, sizeof title,
           "a character wandering on Bandai Namco (a new stick direction every 0.3-1 s), %.0f s from the core "
           "controller: contact slide p95 %.3f m/s, worst %.3f; planted %.0f%% of frames (data %.0f%%)",
           (double)seconds, (double)q.slide_p95, (double)q.slide_max, 100.0 * q.flagged_share, 100.0 * q.data_share);
  if (!rc) rc = feet_strip_write(&strip, path, 3.0f, title);
  feet_strip_free(&strip);
  if (rc) fprintf(stderr, "animbench feet: could not write %s\n", path);
  else printf("\nfilmstrip: %s\n", path);
  return rc ? 1 : 0;
}

int bench_feet(int argc, char **argv);
int bench_feet(int argc, char **argv) {
  options_t o = {"../shared", 60.0f, 2, 0, 200, 20.0f, NULL, NULL, 1, 0};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--wire")) o.wire = 1;
    else if (!v) return fprintf(stderr, "animbench feet: %s needs a value\n", a), 2;
    else if (!strcmp(a, "--shared")) o.shared = v, i++;
    else if (!strcmp(a, "--seconds")) o.seconds = (float)atof(v), i++;
    else if (!strcmp(a, "--wire-seconds")) o.wire_seconds = (float)atof(v), i++;
    else if (!strcmp(a, "--seeds")) o.seeds = atoi(v), i++;
    else if (!strcmp(a, "--cost-characters")) o.cost_characters = atoi(v), i++;
    else if (!strcmp(a, "--json")) o.json = v, i++;
    else if (!strcmp(a, "--svg")) o.svg = v, i++;
    else if (!strcmp(a, "--search-scale")) o.search_scale = atoi(v), i++;
    else if (!strcmp(a, "--skip-feet")) {
      o.skip_feet = !strcmp(v, "never") ? 0 : !strcmp(v, "always") ? 1 : !strcmp(v, "toggle") ? 2 : -1, i++;
      if (o.skip_feet < 0) return fprintf(stderr, "animbench feet: --skip-feet never|always|toggle\n"), 2;
    }
    else return fprintf(stderr, "animbench feet: unknown option %s\n", a), 2;
  }
  if (o.seeds < 1 || !(o.seconds > 0) || o.cost_characters < 0 || o.search_scale < 1 || o.search_scale > 16)
    return fprintf(stderr, "animbench feet: --seeds >= 1, --seconds > 0\n"), 2;
  dataset_t sets[ANIM_QUALITY_DATASETS];
  memset(sets, 0, sizeof sets);
  for (int d = 0; d < ANIM_QUALITY_DATASETS; d++) {
    char err[512];
    if (anim_quality_dataset_build(&sets[d].db, o.shared, d, err, sizeof err)) {
      fprintf(stderr, "animbench feet: %s: %s\n", anim_quality_datasets[d].name, err);
      continue;
    }
    anim_search_data_t data = anim_search_data_of(&sets[d].db);
    sets[d].index = anim_search_index_build(ANIM_SEARCH_FAST, &data, err, sizeof err);
    sets[d].ok = sets[d].index != NULL;
  }
  FILE *json = o.json ? fopen(o.json, "w") : NULL;
  if (json) fprintf(json, "{\"seconds\": %g, \"seeds\": %d, \"rows\": [\n", (double)o.seconds, o.seeds);
  printf("%d s per run, %d seeds; p50/p95 of the worst seed, worst over all\n", (int)o.seconds, o.seeds);
  int rc = run_in_process(&o, sets, json);
  if (!rc && o.wire) rc = bench_feet_wire(&o, sets, json);
  if (!rc && o.svg && sets[0].ok) rc = write_strip(&sets[0], o.svg);
  if (!rc && o.cost_characters > 0) run_cost(&o, sets, json);
  if (json) fprintf(json, "\n]}\n"), fclose(json);
  for (int d = 0; d < ANIM_QUALITY_DATASETS; d++)
    anim_search_index_free(sets[d].index), anim_database_free(&sets[d].db);
  return rc;
}

/* Every dataset and program at once on one server, one character each, measured from the stream. */
static int bench_feet_wire(const options_t *o, dataset_t *sets, FILE *json) {
  char dir[] = "/tmp/animbench-feet-XXXXXX", path[1024], err[512];
  if (!mkdtemp(dir)) return fprintf(stderr, "animbench feet: mkdtemp failed\n"), 1;
  const char *args[2 * ANIM_QUALITY_DATASETS + 5] = {"--data-dir", dir, "--log-level", "warn"};
  int nargs = 4, rc = 0;
  for (int d = 0; d < ANIM_QUALITY_DATASETS && !rc; d++) {
    if (!sets[d].ok) continue;
    snprintf(path, sizeof path, "%s/%s.animdb", dir, anim_quality_datasets[d].name);
    if ((rc = anim_dbfile_write(&sets[d].db, path, err, sizeof err))) fprintf(stderr, "animbench feet: %s\n", err);
    args[nargs++] = "--db", args[nargs++] = anim_quality_datasets[d].name;
  }
  args[nargs] = NULL;
  bench_make_log_dir();
  anim_test_server_t server;
  memset(&server, 0, sizeof server);
  anim_client_t *client = NULL;
  int cerr = 0;
  if (!rc && anim_test_server_start(&server, "bench_feet", args) != 0)
    rc = 1, fprintf(stderr, "animbench feet: no server\n");
  else if (!rc && !(client = anim_client_connect(server.host, server.port, NULL, &cerr)))
    rc = 1, fprintf(stderr, "animbench feet: connect: %s\n", anim_strerror(cerr));
  anim_quality_wire_run_t runs[ANIM_QUALITY_DATASETS * ANIM_PROGRAM_COUNT];
  int n = 0;
  for (int d = 0; d < ANIM_QUALITY_DATASETS; d++)
    for (int k = 0; k < ANIM_PROGRAM_COUNT && sets[d].ok; k++) {
      memset(&runs[n], 0, sizeof runs[n]);
      runs[n].database = anim_quality_datasets[d].name, runs[n].db = &sets[d].db;
      runs[n].kind = (anim_program_kind_t)k, runs[n].seed = 1;
      n++;
    }
  printf("\nover the wire (%d characters side by side on the real server, %.0f s, seed 1):\n", n,
         (double)o->wire_seconds);
  if (!rc && (rc = anim_quality_run_wire(client, runs, n, o->wire_seconds, err, sizeof err)))
    fprintf(stderr, "animbench feet: %s\n", err);
  for (int i = 0; i < n && !rc; i++) {
    print_row(stdout, "wire", runs[i].database, anim_input_program_name(runs[i].kind), &runs[i].result,
              &runs[i].db->skeleton);
    if (runs[i].gaps) printf("         (%ld frames missed)\n", runs[i].gaps);
    if (json) print_json(json, "wire", runs[i].database, anim_input_program_name(runs[i].kind), &runs[i].result, 0);
  }
  if (client) anim_client_close(client);
  if (server.pid > 0) anim_test_server_stop(&server);
  snprintf(path, sizeof path, "rm -rf '%s'", dir);
  if (system(path) != 0) fprintf(stderr, "animbench feet: could not remove %s\n", dir);
  return rc;
}
