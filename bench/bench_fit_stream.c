/*
 * bench_fit_stream.c: `animbench fit-stream`: the end-to-end version of
 * `animbench fit`. It starts the real server on the Bandai Namco database
 * without its held-out clips (written to a temporary data directory),
 * creates a tracker character (MODE_TRACKER: head, hands, pelvis) and
 * drives it over the wire from the held-out clips, tick by tick, with 5 mm
 * noise (tests/support/tracker_feed.h): the streamed pose against the true
 * one, for trackers every tick, a hand lost for a second, and trackers
 * every other tick (the ticks between predicted); beside them the same fit
 * in process (fit_eval.h), so what the wire adds is visible.
 *
 *   animbench fit-stream [--shared DIR] [--json FILE] [--svg FILE]
 *
 * --svg draws the streamed character on the held-out turn, every 1/4 s,
 * next to the true pose.
 *
 * The server runs with --fixed-step, as the tests that compare tick by tick
 * do (tracker_feed.h): a late tick that folded the deadlines it missed
 * into one longer dt would skip clip frames, and the error would measure
 * the machine's load rather than the fitter. For the same reason the feed
 * runs in step with the server (tracker_feed.h's default): each frame sent
 * 30 ticks ahead, named for its tick (set_trackers.tick).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "anim_error.h"
#include "bench_util.h"
#include "database/database.h"
#include "fit_eval.h"
#include "fit_strip.h"
#include "heldout.h"
#include "fit/pose_fit.h"
#include "server_proc.h"
#include "tracker_feed.h"

static void strip_frame(void *user, int range, int frame, const vec3 *fit, const vec3 *truth, const vec3 *sent,
                        int nsent) {
  fit_strip_add(user, range, frame, fit, truth, sent, nsent);
}

/* One fit_pose of truth frame `frame` from the bones (5 mm noise, velocities from the clip); the
 * round trip in *out_seconds, the mean per-joint error at or below the pelvis in *out_error. */
static int fit_one(anim_test_raw_t *c, const anim_database_t *truth, const char *database, const char *const *bones,
                   int nbones, int pelvis, int frame, int velocities, unsigned *seed, double *out_seconds,
                   double *out_error) {
  Animserver__TrackerInput in[4], *list[4];
  Animserver__Vec3 p[4], v[4];
  int nb = truth->nbones;
  const vec3 *g = truth->global_positions + (size_t)frame * (size_t)nb, *before = g - nb;
  for (int k = 0; k < nbones; k++) {
    int b = anim_skeleton_find(&truth->skeleton, bones[k]);
    animserver__tracker_input__init(&in[k]), animserver__vec3__init(&p[k]), animserver__vec3__init(&v[k]);
    vec3 noise = vec3_make(fit_eval_gaussian(seed), fit_eval_gaussian(seed), fit_eval_gaussian(seed));
    vec3 x = vec3_add(g[b], vec3_scale(noise, 0.005f)), u = vec3_scale(vec3_sub(g[b], before[b]), truth->frame_rate);
    p[k].x = x.x, p[k].y = x.y, p[k].z = x.z, v[k].x = u.x, v[k].y = u.y, v[k].z = u.z;
    in[k].bone = (char *)bones[k], in[k].position = &p[k], in[k].velocity = velocities ? &v[k] : NULL;
    list[k] = &in[k];
  }
  Animserver__FitPoseRequest fit = ANIMSERVER__FIT_POSE_REQUEST__INIT;
  fit.database = (char *)database, fit.n_trackers = (size_t)nbones, fit.trackers = list;
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  request.body_case = ANIMSERVER__REQUEST__BODY_FIT_POSE, request.fit_pose = &fit;
  double t0 = bench_now_s();
  Animserver__Response *r = anim_test_raw_call(c, &request, 20000);
  *out_seconds = bench_now_s() - t0;
  int rc = !r || r->error ? -1 : 0;
  double sum = 0.0;
  int n = 0;
  for (int b = 0; b < nb && !rc; b++) {
    int below = 0;
    for (int a = b; a >= 0; a = truth->skeleton.parents[a]) below |= a == pelvis;
    if (!below) continue;
    const float *q = r->fit_pose->pose->global_positions + 3 * b;
    sum += vec3_length(vec3_sub(vec3_make(q[0], q[1], q[2]), g[b])), n++;
  }
  *out_error = n ? sum / n : 0.0;
  if (r) animserver__response__free_unpacked(r, NULL);
  return rc;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* One-shot fits: the first with a tracker set the server has no model for
 * (built on the pool), then every 7th held-out frame from head, hands and
 * pelvis (the model cached); pings between them, for the round trip alone. */
static int one_shots(anim_test_raw_t *c, const anim_database_t *truth, const char *database, const char *const *bones,
                     int pelvis, FILE *json) {
  unsigned seed = 11;
  double first, error, sum = 0.0, still = 0.0, times[512], pings[512], unused;
  int n = 0;
  if (fit_one(c, truth, database, bones, 3, pelvis, 1, 1, &seed, &first, &error) != 0)
    return -1; /* head and hands: new model */
  for (int r = 0; r < truth->nranges; r++)
    for (int f = truth->ranges[r].start + 1; f < truth->ranges[r].stop && n < 512; f += 7, n++) {
      if (fit_one(c, truth, database, bones, 4, pelvis, f, 1, &seed, &times[n], &error) != 0) return -1;
      sum += error;
      if (fit_one(c, truth, database, bones, 4, pelvis, f, 0, &seed, &unused, &error) != 0) return -1;
      still += error;
      Animserver__PingRequest ping = ANIMSERVER__PING_REQUEST__INIT;
      Animserver__Request request = ANIMSERVER__REQUEST__INIT;
      request.body_case = ANIMSERVER__REQUEST__BODY_PING, request.ping = &ping;
      double t0 = bench_now_s();
      Animserver__Response *pr = anim_test_raw_call(c, &request, 20000);
      pings[n] = bench_now_s() - t0;
      if (pr) animserver__response__free_unpacked(pr, NULL);
    }
  qsort(times, (size_t)n, sizeof *times, cmp_double), qsort(pings, (size_t)n, sizeof *pings, cmp_double);
  printf("  %-28s %d held-out frames: mean %5.2f cm with velocities (%.2f cm without); round trip median %.0f us "
         "(ping %.0f us), first fit of a new tracker set %.1f ms (model built on the pool)\n",
         "one-shot fit_pose", n, 100 * sum / n, 100 * still / n, 1e6 * times[n / 2], 1e6 * pings[n / 2], 1e3 * first);
  if (json)
    fprintf(json, "  \"fit_pose\": {\"frames\": %d, \"mean_error_m\": %.5f, \"without_velocities_mean_error_m\": %.5f, "
                  "\"round_trip_us\": %.1f, \"ping_us\": %.1f, \"first_ms\": %.2f},\n",
            n, sum / n, still / n, 1e6 * times[n / 2], 1e6 * pings[n / 2], 1e3 * first);
  return 0;
}

static void print_run(FILE *json, const char *name, const tracker_feed_result_t *r, const fit_eval_result_t *core,
                      const anim_database_t *truth, int last) {
  printf("  %-28s mean %5.2f cm (tracked %4.2f, others %5.2f)  worst %5.1f cm (%s)  ", name, 100 * r->mean_error,
         100 * r->mean_tracked_error, 100 * r->mean_untracked_error, 100 * r->worst_error,
         r->worst_bone >= 0 ? truth->skeleton.names[r->worst_bone] : "-");
  if (r->dropped_error > 0) printf("lost hand %5.2f cm  ", 100 * r->dropped_error);
  printf("scale %.3f  %d/%d late", r->scale, r->late, r->frames);
  if (core) printf("  [in process: %.2f cm]", 100 * core->mean_error);
  printf("\n");
  if (json)
    fprintf(json,
            "    \"%s\": {\"ticks\": %d, \"late\": %d, \"mean_error_m\": %.5f, \"tracked_error_m\": %.5f, "
            "\"untracked_error_m\": %.5f, \"worst_error_m\": %.4f, \"dropped_error_m\": %.5f, \"scale\": %.4f, "
            "\"in_process_mean_error_m\": %.5f}%s\n",
            name, r->frames, r->late, r->mean_error, r->mean_tracked_error, r->mean_untracked_error, r->worst_error,
            r->dropped_error, r->scale, core ? core->mean_error : 0.0, last ? "" : ",");
}

int bench_fit_stream(int argc, char **argv);
int bench_fit_stream(int argc, char **argv) {
  const char *shared = getenv("ANIM_SHARED_DIR") ? getenv("ANIM_SHARED_DIR") : "../shared", *json_path = NULL,
             *svg = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--shared") == 0 && i + 1 < argc) shared = argv[++i];
    else if (strcmp(argv[i], "--json") == 0 && i + 1 < argc) json_path = argv[++i];
    else if (strcmp(argv[i], "--svg") == 0 && i + 1 < argc) svg = argv[++i];
    else {
      fprintf(stderr, "usage: animbench fit-stream [--shared DIR] [--json FILE] [--svg FILE]\n");
      return 2;
    }
  }
  char mocap[1024], err[512], dir[128];
  snprintf(mocap, sizeof mocap, "%s/data/mocap/bandai-namco", shared);
  anim_database_t db, truth;
  if (anim_heldout_build(mocap, anim_heldout_bandai_clips, anim_heldout_bandai_count, &db, &truth, err, sizeof err)) {
    fprintf(stderr, "animbench fit-stream: %s\n", err);
    return 1;
  }
  anim_pose_fit_model_t model;
  anim_pose_fit_model_options_t defaults;
  if (anim_pose_fit_model_options_default(&defaults, &truth) ||
      anim_pose_fit_model_build(&model, &db, NULL, err, sizeof err) ||
      tracker_feed_write_database(&db, dir, sizeof dir)) {
    fprintf(stderr, "animbench fit-stream: model or database file failed\n");
    return 1;
  }
  bench_make_log_dir();
  anim_test_server_t server;
  const char *args[] = {"--data-dir", dir, "--log-level", "warn", "--fixed-step", NULL};
  anim_test_raw_t c;
  int rc = anim_test_server_start(&server, "bench_fit_stream", args) != 0 || anim_test_raw_open(&c, &server) != 0 ||
           tracker_feed_load(&c, db.name) != 0;
  printf("fit-stream: server database %s (%d frames), %d held-out clips (%d frames at %.0f Hz) fed over the wire as "
         "head, hands and pelvis with 5 mm noise (server --fixed-step)\n",
         db.name, db.nframes, truth.nranges, truth.nframes, truth.frame_rate);
  struct {
    const char *name;
    int drop, every;
  } runs[] = {{"every tick", -1, 1}, {"left hand lost 1 s", 1, 1}, {"trackers every other tick", -1, 2}};
  enum { NRUNS = sizeof runs / sizeof *runs };
  FILE *json = json_path ? fopen(json_path, "w") : NULL;
  if (json) fprintf(json, "{\n");
  if (!rc && one_shots(&c, &truth, db.name, defaults.tracker_bones, model.pelvis, json) != 0) {
    fprintf(stderr, "animbench fit-stream: fit_pose failed\n");
    rc = 1;
  }
  if (json) fprintf(json, "  \"runs\": {\n");
  static fit_strip_t strip;
  memset(&strip, 0, sizeof strip);
  strip.truth = &truth, strip.pelvis = model.pelvis, strip.step = (int)(truth.frame_rate / 4);
  for (int r = 0; r < truth.nranges; r++)
    if (strstr(truth.ranges[r].name, "turn")) strip.range = r;
  for (int run = 0; run < NRUNS && !rc; run++) {
    tracker_feed_options_t o;
    tracker_feed_options_default(&o);
    o.truth = &truth;
    for (int k = 0; k < 4; k++) o.bones[k] = defaults.tracker_bones[k];
    o.pelvis = defaults.tracker_bones[3];
    o.drop_tracker = runs[run].drop, o.drop_start = 1.0f, o.drop_seconds = 1.0f;
    o.every = runs[run].every;
    if (run == 0 && svg) o.frame_cb = strip_frame, o.user = &strip;
    uint64_t id;
    tracker_feed_result_t result;
    if ((rc = tracker_feed_create(&c, db.name, &o, &id)) != 0) {
      fprintf(stderr, "animbench fit-stream: create_characters: %s\n", anim_strerror(rc));
      break;
    }
    if ((rc = tracker_feed_run(&c, id, &o, &result, err, sizeof err)) != 0 ||
        (rc = tracker_feed_destroy(&c, id)) != 0) {
      fprintf(stderr, "animbench fit-stream: %s\n", err);
      break;
    }
    /* The same trackers in process (every tick only: fit_eval feeds each frame). */
    fit_eval_result_t core;
    fit_eval_options_t e;
    fit_eval_options_default(&e);
    e.drop_tracker = o.drop_tracker, e.drop_start = o.drop_start, e.drop_seconds = o.drop_seconds;
    anim_pose_fit_params_t params;
    anim_pose_fit_params_default(&params);
    params.iterations = 1; /* a tracker character's default (server/request_fit.h) */
    int have_core = o.every == 1 && fit_eval_run(&model, &params, &truth, &e, &core) == 0;
    print_run(json, runs[run].name, &result, have_core ? &core : NULL, &truth, run == NRUNS - 1);
  }
  printf("  reference: AvatarPoser (2022), head and hands on AMASS: mean per-joint error ~4 cm\n");
  if (json) fprintf(json, "  }\n}\n"), fclose(json);
  if (!rc && svg) {
    char title[200];
    snprintf(title, sizeof title, "%s (held out), streamed tracker character, head + hands + pelvis, 5 mm noise",
             truth.ranges[strip.range].name);
    fit_strip_write(&strip, svg, title, "streamed pose");
    printf("  filmstrip: %s\n", svg);
  }
  anim_test_raw_close(&c);
  anim_test_server_stop(&server);
  char cmd[256];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "animbench fit-stream: could not remove %s\n", dir);
  anim_pose_fit_model_free(&model);
  anim_database_free(&db), anim_database_free(&truth);
  return rc ? 1 : 0;
}
