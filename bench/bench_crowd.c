/*
 * bench_crowd.c: `animbench crowd`: how large a crowd the server ticks at its
 * rate while streaming it, on this machine.
 *
 * It starts the real server (build/animserver, loopback, ephemeral port), opens
 * C connections, each creating N/C characters on the default database with
 * a search every --search-interval frames, steering them (a new stick
 * direction for a fifth of them every second) and subscribing to all it owns
 * in one encoding. For each crowd size it reports, over the measured seconds:
 * achieved tick rate, lateness p50/p99 (start of a tick after its deadline),
 * deadlines skipped, the server's CPU (a share of one core; the machine has
 * two), stream bytes per character per second, frames dropped, and memory
 * per character, and the round-trip time of pings from another connection
 * meanwhile (the loop stays responsive while the pool ticks). A crowd keeps
 * up when no deadline was skipped and the tick rate is within 1% of the
 * target.
 *
 * The baseline, measured in the same run: the same controllers ticked in this
 * process on one thread with no server, no threads and no streams
 * (character-ticks per second of one core), so the server's figures read as a
 * fraction of what the bare algorithm allows. 500 characters by default,
 * whose state stays in cache; --baseline-characters 10000 ticks a crowd as
 * large as the server's, whose state (about 5 kB each) does not.
 *
 * --trackers: tracker-driven characters (MODE_TRACKER) instead, on the
 * Bandai Namco database without its held-out clips, each fed head, hands
 * and pelvis points of a held-out clip every --tracker-every ticks by a
 * sender thread (bench/crowd_trackers.h); the baseline is then the fit in
 * process on one core.
 *
 * --regions R: each size is run twice in the same invocation, first with
 * every connection subscribed to all it owns, then with each connection a
 * viewer of a circle of R m around the middle of its own block of
 * characters (SubscribeRequest.region), in bands of R/4 m at 60 Hz, R/2 at
 * 15 Hz and R at 4 Hz: the second row is the cost of area-of-interest
 * streaming beside the first's full one.
 *
 * --lod N: the server's level of detail (--lod-search-scale N): characters
 * no subscription streams at full rate search N times less often and skip
 * foot locking (a region's far bands).
 *
 * The baseline is measured in this thread's CPU time, again before each
 * run, so each row's ratio ("x base") is of two CPU figures taken in turn.
 *
 * --region-cap N: each region keeps only its N nearest characters.
 *
 * --encodings replicated: the subscriptions send motion state instead of
 * poses (ENCODING_REPLICATED), regions too (a band that skips ticks sends
 * them in its next record); its bytes per
 * character-second beside the quantized encoding's are issue 35's target
 * (at most 1/8).
 *
 * Readers are raw by default: they count frames with the wire framing only,
 * so the benchmark's own clients take little of the two cores the server
 * needs (--readers lib decodes every pose through the client library, as a
 * real client would).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "bench_util.h"
#include "anim_client.h"
#include "character/controller.h"
#include "learned/lmm.h"
#include "offline/lmm_database.h"
#include "crowd_trackers.h"
#include "offline/procgen.h"
#include "search/search.h"
#include "server_proc.h"

#define TIMEOUT_MS 30000
#define MAX_CONNECTIONS 64

typedef struct {
  int characters, connections, seconds, search_interval, encoding, rotations_only, lib_readers, warmup_s;
  double rate;
  crowd_trackers_t *trackers; /* --trackers: tracker characters, fed every tracker_every ticks */
  int tracker_every;
  crowd_trackers_fit_t fit;   /* --fit-search-interval, --fit-iterations */
  const char *lmm_dir;        /* --learned: learned characters (MODE_LEARNED) on the networks in this folder */
  float region_radius;        /* --regions: m */
  int regions;                /* this run: region viewers instead of owned subscriptions */
  int lod;                    /* --lod N: the server's --lod-search-scale (1: off) */
  int region_cap;             /* --region-cap N: each region's max_characters (0: none) */
} options_t;

typedef struct {
  anim_client_t *client;
  anim_test_raw_t raw; /* --trackers: the connection, raw frames */
  uint64_t *ids;
  int n;
  volatile int stop;
  uint64_t frames, bytes;
  int lib;
  pthread_t thread;
} connection_t;

static unsigned rng = 2463534242u;

/* A stick held at `magnitude` in a random direction: how every crowd here is steered. */
static anim_controller_input_t random_stick(float magnitude) {
  anim_controller_input_t in = {0};
  float a = 6.2831853f * bench_uniform(&rng);
  in.kind = ANIM_INPUT_STICK, in.stick_x = magnitude * sinf(a), in.stick_z = magnitude * cosf(a);
  return in;
}

/* ---- in-process baseline --------------------------------------------------------------- */

/* --learned: the same networks ticked in this process on one thread, in
 * batches of the server's chunk size (256), steered like the server's, feet
 * locked as the server locks them (on the learned skeleton's database). */
static double baseline_learned_ticks_per_second(const char *dir, int search_interval) {
  enum { N = 512, BATCH = 256, TICKS = 240 };
  char err[256];
  int code;
  anim_lmm_networks_t *nets = anim_lmm_networks_load(dir, NULL, &code, err, sizeof err);
  if (!nets) return fprintf(stderr, "animbench crowd --learned: %s\n", err), 0.0;
  anim_database_t walk;
  if (anim_lmm_database(&walk, "lmm", nets, err, sizeof err)) {
    fprintf(stderr, "animbench crowd --learned: the learned walk: %s\n", err);
    anim_lmm_networks_free(nets);
    return 0.0;
  }
  anim_lmm_character_t *c = calloc(N, sizeof *c), *list[N];
  float *scratch = malloc(anim_lmm_scratch_floats(nets, BATCH) * sizeof *scratch);
  anim_controller_params_t p;
  anim_lmm_params_default(&p);
  p.search_interval = search_interval;
  for (int i = 0; i < N; i++) {
    anim_lmm_character_init(&c[i], nets, &p, vec3_make((float)i, 0, 0), 0, scratch);
    anim_lmm_character_feet(&c[i], &walk);
    anim_lmm_stagger(&c[i], i % search_interval);
    anim_controller_input_t in = {0};
    in.kind = ANIM_INPUT_STICK, in.stick_z = 0.8f;
    anim_lmm_set_input(&c[i], &in);
    list[i] = &c[i];
  }
  double start = bench_now_s();
  for (int t = 0; t < TICKS; t++) {
    if (t % 60 == 0)
      for (int i = 0; i < N; i += 5) {
        anim_controller_input_t in = random_stick(0.9f);
        anim_lmm_set_input(&c[i], &in);
      }
    for (int i = 0; i < N; i += BATCH) anim_lmm_tick_batch(list + i, BATCH, 1.0f / 60.0f, scratch);
  }
  double elapsed = bench_now_s() - start;
  free(c), free(scratch);
  anim_database_free(&walk);
  anim_lmm_networks_free(nets);
  return (double)N * TICKS / elapsed;
}

/* N characters: 500 (the default) stay in cache; a crowd's size shows what
 * its memory traffic costs on one core. */
static double baseline_ticks_at(int search_interval, int N, float dt);
static double baseline_ticks_per_second(int search_interval, int N) { return baseline_ticks_at(search_interval, N, 1.0f / 60.0f); }

/* The same, ticks of dt seconds: a server that falls behind ticks with
 * the periods it skipped (server/scheduler.c), so each of its ticks plays
 * more frames and, past the search interval, searches every tick: its
 * CPU per tick is comparable with ticks of the same dt only. */
static double baseline_ticks_at(int search_interval, int N, float dt) {
  anim_database_t db;
  char err[256];
  if (anim_procgen_database(&db, NULL, err, sizeof err)) return 0;
  anim_search_data_t data = anim_search_data_of(&db);
  anim_search_index_t *index = anim_search_index_build(ANIM_SEARCH_FAST, &data, err, sizeof err);
  enum { TICKS = 120, ROUNDS = 5 };
  anim_controller_t *c = calloc((size_t)N, sizeof *c);
  anim_controller_params_t p;
  anim_controller_params_default(&p);
  p.search_interval = search_interval;
  for (int i = 0; i < N; i++) {
    anim_controller_init(&c[i], &db, index, &p, vec3_make((float)i, 0, 0), 0, 0);
    anim_controller_stagger(&c[i], i % search_interval);
    c[i].pose_bone_rates = 0; /* as the server's characters (server/actor_matching.c) */
    anim_controller_input_t in = {0};
    in.kind = ANIM_INPUT_STICK;
    in.stick_z = 0.8f;
    anim_controller_set_input(&c[i], &in);
  }
  /* ROUNDS rounds of TICKS ticks after a first one (the first searches),
   * in this thread's CPU time, all of them: the server's figure is its
   * process's CPU time over every tick of its run. On a machine shared
   * with other work, wall time counted the turns other processes took
   * (the server then came out at 0.6x of this "one core", load average
   * 17), and the best round alone was the one whose caches the others
   * disturbed least. */
  double elapsed = 0.0;
  for (int round = 0; round <= ROUNDS; round++) {
    double start = bench_thread_cpu_s();
    for (int t = 0; t < TICKS; t++) {
      if (t % 60 == 0)
        for (int i = 0; i < N; i += 5) {
          anim_controller_input_t in = random_stick(0.8f);
          anim_controller_set_input(&c[i], &in);
        }
      for (int i = 0; i < N; i++) {
        if (i + 1 < N) anim_controller_prefetch(&c[i + 1]); /* as the server does (server/actor_matching.c) */
        anim_controller_tick(&c[i], dt);
      }
    }
    if (round > 0) elapsed += bench_thread_cpu_s() - start;
  }
  elapsed /= ROUNDS;
  for (int i = 0; i < N; i++) anim_controller_free(&c[i]);
  free(c);
  anim_search_index_free(index);
  anim_database_free(&db);
  return (double)N * TICKS / elapsed;
}

/* ---- readers ------------------------------------------------------------------------------ */

static void count_decoded(anim_client_t *client, const anim_stream_frame_t *frame, void *data) {
  connection_t *c = data;
  c->frames++;
  c->bytes += frame->wire_bytes;
}

static void *reader_main(void *arg) {
  connection_t *c = arg;
  if (c->lib) {
    while (!c->stop) anim_client_poll(c->client, 50);
    return NULL;
  }
  /* Raw: this thread drains the socket and counts bytes (the library may
   * have read part of a frame already, so frames are not parsed here). */
  int fd = c->client ? anim_client_fd(c->client) : c->raw.fd;
  static __thread uint8_t buffer[1 << 18];
  while (!c->stop) {
    struct pollfd p = {fd, POLLIN, 0};
    if (poll(&p, 1, 50) <= 0) continue;
    ssize_t n = recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
    if (n <= 0) {
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      break;
    }
    c->bytes += (uint64_t)n;
  }
  return NULL;
}

/* --trackers: every connection's characters get the next clip frame every
 * tracker_every ticks, on the server's clock as this process keeps it. */
typedef struct {
  const options_t *o;
  connection_t *conns;
  volatile int stop;
  long sent, failed;
} sender_t;

static void *sender_main(void *arg) {
  sender_t *s = arg;
  double period = s->o->tracker_every / s->o->rate, next = bench_now_s();
  for (long step = 0; !s->stop; step += s->o->tracker_every) {
    for (int i = 0; i < s->o->connections; i++)
      if (crowd_trackers_send(s->o->trackers, &s->conns[i].raw, s->conns[i].ids, s->conns[i].n, step) == 0) s->sent++;
      else s->failed++;
    next += period;
    double wait = next - bench_now_s();
    if (wait > 0) usleep((useconds_t)(wait * 1e6));
    else next = bench_now_s(); /* behind: no burst to catch up */
  }
  return NULL;
}

/* ---- the server's CPU, read from outside ------------------------------------------------- */

/* User + system CPU seconds of process pid, every thread (fields 14 and 15
 * of /proc/<pid>/stat, in clock ticks), or -1. Read by this process, not
 * reported by the server, so the figure needs nothing of the server's
 * own accounting. */
static double process_cpu_s(pid_t pid) {
  char path[64], line[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  FILE *f = fopen(path, "r");
  if (!f) return -1.0;
  size_t n = fread(line, 1, sizeof line - 1, f);
  fclose(f);
  line[n] = 0;
  const char *after = strrchr(line, ')'); /* the command name may hold spaces */
  unsigned long utime = 0, stime = 0;
  if (!after || sscanf(after + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime, &stime) != 2)
    return -1.0;
  return (double)(utime + stime) / (double)sysconf(_SC_CLK_TCK);
}

/* ---- one crowd size ---------------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

typedef struct {
  int characters;
  double ping_p50_ms, ping_p99_ms; /* round trips of a control connection during the run: the loop's responsiveness */
  double tick_rate, lateness_p50_ms, lateness_p99_ms, work_p50_ms, work_p99_ms, cpu_share;
  double bytes_per_character_s, frames_dropped, skipped, rss_per_character;
  double cpu_per_character_tick_s; /* the server process's CPU (/proc/<pid>/stat) over the character-ticks it ran */
  uint64_t character_bytes, pose_buffer_bytes;
  int keeps_up;
} result_t;

static int setup_connection(connection_t *c, const anim_test_server_t *server, const options_t *o, int n, int index) {
  int err;
  memset(c, 0, sizeof *c);
  c->raw.fd = -1;
  if (o->trackers) {
    c->n = n;
    c->ids = malloc((size_t)n * sizeof *c->ids);
    if (anim_test_raw_open(&c->raw, server) != 0) return ANIM_ECONNECT;
    return crowd_trackers_setup(o->trackers, &c->raw, n, o->encoding == ANIM_POSE_FLOAT ? 0 : 1, &o->fit, c->ids);
  }
  c->client = anim_client_connect(server->host, server->port, NULL, &err);
  if (!c->client) return err;
  c->n = n;
  c->lib = o->lib_readers;
  c->ids = malloc((size_t)n * sizeof *c->ids);
  anim_character_placement_t *place = malloc((size_t)n * sizeof *place);
  for (int i = 0; i < n; i++)
    place[i] = (anim_character_placement_t){(float)(i % 100) * 2.0f, (float)(i / 100 + index * 60) * 2.0f,
                                            6.2831853f * bench_uniform(&rng),
                                            o->lmm_dir ? -1 : (int)(bench_uniform(&rng) * 4000)};
  anim_character_params_t params;
  anim_character_params_init(&params);
  params.search_interval = o->search_interval;
  anim_character_mode_t mode = {.mode = o->lmm_dir ? ANIM_MODE_LEARNED : ANIM_MODE_MOTION_MATCHING};
  int rc = anim_client_characters_create_mode(c->client, o->lmm_dir ? "lmm" : "default", &mode, &params, place, n,
                                              c->ids, TIMEOUT_MS);
  free(place);
  if (rc) return rc;
  anim_character_input_t *in = malloc((size_t)n * sizeof *in);
  for (int i = 0; i < n; i++) anim_character_input_stick(&in[i], 0.0f, 0.8f, 6.2831853f * bench_uniform(&rng), 0);
  rc = anim_client_characters_set_input(c->client, c->ids, in, n, NULL, TIMEOUT_MS);
  free(in);
  if (rc) return rc;
  anim_subscribe_options_t sub = {NULL, 0, 1, 1, o->encoding, 0, o->rotations_only};
  if (o->regions) { /* the middle of this connection's block (placements above) */
    float r = o->region_radius;
    anim_region_band_t bands[] = {{r / 4, 1}, {r / 2, 4}, {r, 15}};
    anim_region_t region = {99.0f, (float)(index * 60 + n / 200) * 2.0f, r, 0.0f, 0.0f, 0, bands, 3,
                            (uint32_t)o->region_cap};
    sub.owned = 0, sub.rate_divisor = 0;
    return anim_client_subscribe_region(c->client, &sub, &region, c->lib ? count_decoded : NULL, c, NULL, NULL,
                                        TIMEOUT_MS);
  }
  return anim_client_subscribe(c->client, &sub, c->lib ? count_decoded : NULL, c, NULL, NULL, TIMEOUT_MS);
}

/* Steering from a separate control connection would not own the characters,
 * so each connection's own client sends its inputs; with raw readers the
 * reader thread owns the socket's input, so inputs are sent without waiting
 * (their answers are read, and discarded, by the raw reader). */
static void steer(connection_t *c) {
  int n = c->n / 5;
  if (n < 1) return;
  anim_character_input_t *in = malloc((size_t)n * sizeof *in);
  uint64_t *ids = malloc((size_t)n * sizeof *ids);
  for (int i = 0; i < n; i++) {
    ids[i] = c->ids[(int)(bench_uniform(&rng) * (float)c->n) % c->n];
    float a = 6.2831853f * bench_uniform(&rng);
    anim_character_input_stick(&in[i], 0.9f * sinf(a), 0.9f * cosf(a), 0.0f, 0);
  }
  anim_client_characters_set_input_send(c->client, ids, in, n, NULL, NULL, NULL);
  free(in), free(ids);
}

static int run_size(const options_t *o, result_t *out) {
  anim_test_server_t server;
  char rate[32], interval[32], lod[16];
  snprintf(rate, sizeof rate, "%g", o->rate);
  snprintf(interval, sizeof interval, "%d", o->characters);
  snprintf(lod, sizeof lod, "%d", o->lod);
  const char *args[] = {"--tick-rate", rate, "--max-characters", "1000000", "--max-characters-per-connection", interval,
                        "--log-level", "warn", "--lod-search-scale", lod,
                        o->trackers ? "--data-dir" : o->lmm_dir ? "--lmm" : NULL,
                        o->trackers ? crowd_trackers_dir(o->trackers) : o->lmm_dir, NULL};
  if (anim_test_server_start(&server, "bench_crowd", args) != 0) return -1;
  int err;
  anim_client_t *control = anim_client_connect(server.host, server.port, NULL, &err);
  anim_server_stats_t before, after;
  anim_client_server_stats(control, &before, TIMEOUT_MS);
  uint64_t rss_empty = before.rss_bytes;
  connection_t *conns = calloc((size_t)o->connections, sizeof *conns);
  int rc = 0;
  if (o->trackers && (rc = anim_client_db_load(control, crowd_trackers_database(o->trackers), NULL, TIMEOUT_MS)))
    fprintf(stderr, "crowd: load_database: %s\n", anim_strerror(rc));
  sender_t sender = {o, conns, 0, 0, 0};
  pthread_t sender_thread = 0;
  for (int i = 0; i < o->connections && !rc; i++) {
    int n = o->characters / o->connections + (i < o->characters % o->connections);
    rc = setup_connection(&conns[i], &server, o, n, i);
  }
  if (rc) fprintf(stderr, "crowd: setup failed: %s\n", anim_strerror(rc));
  for (int i = 0; i < o->connections && !rc; i++) pthread_create(&conns[i].thread, NULL, reader_main, &conns[i]);
  if (!rc && o->trackers) pthread_create(&sender_thread, NULL, sender_main, &sender);
  if (!rc) {
    sleep((unsigned)o->warmup_s);
    anim_client_server_stats(control, &before, TIMEOUT_MS);
    double cpu0 = process_cpu_s(server.pid);
    double start = bench_now_s();
    uint64_t frames0 = 0, bytes0 = 0;
    for (int i = 0; i < o->connections; i++) frames0 += conns[i].frames, bytes0 += conns[i].bytes;
    /* Each second: steer, then ping the server every 20 ms from the control connection. */
    double *rtts = malloc((size_t)o->seconds * 50 * sizeof *rtts);
    int nrtt = 0;
    for (int s = 0; s < o->seconds; s++) {
      if (!o->lib_readers && !o->trackers)
        for (int i = 0; i < o->connections; i++) steer(&conns[i]);
      for (int k = 0; k < 50; k++) {
        uint64_t rtt_us;
        if (rtts && anim_client_ping(control, "p", 1, &rtt_us, TIMEOUT_MS) == 0) rtts[nrtt++] = (double)rtt_us / 1000.0;
        usleep(20000);
      }
    }
    double elapsed = bench_now_s() - start;
    anim_client_server_stats(control, &after, TIMEOUT_MS);
    double cpu1 = process_cpu_s(server.pid);
    uint64_t frames = 0, bytes = 0;
    for (int i = 0; i < o->connections; i++) frames += conns[i].frames, bytes += conns[i].bytes;
    memset(out, 0, sizeof *out);
    out->characters = o->characters;
    out->tick_rate = (double)(after.ticks - before.ticks) / elapsed;
    out->skipped = (double)(after.ticks_skipped - before.ticks_skipped);
    out->lateness_p50_ms = (double)after.lateness_p50_us / 1000.0;
    out->lateness_p99_ms = (double)after.lateness_p99_us / 1000.0;
    out->work_p50_ms = (double)after.tick_work_p50_us / 1000.0;
    out->work_p99_ms = (double)after.tick_work_p99_us / 1000.0;
    out->cpu_share = (after.cpu_user_s + after.cpu_system_s - before.cpu_user_s - before.cpu_system_s) / elapsed;
    out->bytes_per_character_s = (double)(bytes - bytes0) / elapsed / (double)o->characters;
    out->frames_dropped = (double)(after.frames_dropped - before.frames_dropped);
    out->rss_per_character = (double)(after.rss_bytes - rss_empty) / (double)o->characters;
    out->character_bytes = after.character_bytes / (uint64_t)o->characters; /* the server reports them all */
    out->pose_buffer_bytes = after.pose_buffer_bytes;
    uint64_t character_ticks = (after.ticks - before.ticks) * (uint64_t)o->characters;
    out->cpu_per_character_tick_s = cpu0 >= 0 && cpu1 >= 0 && character_ticks ? (cpu1 - cpu0) / (double)character_ticks : 0;
    out->keeps_up = out->skipped == 0 && out->tick_rate >= 0.99 * o->rate;
    if (nrtt) {
      qsort(rtts, (size_t)nrtt, sizeof *rtts, cmp_double);
      out->ping_p50_ms = rtts[(nrtt - 1) / 2];
      out->ping_p99_ms = rtts[(nrtt - 1) * 99 / 100];
    }
    free(rtts);
    (void)frames, (void)frames0;
  }
  sender.stop = 1;
  if (sender_thread) pthread_join(sender_thread, NULL);
  if (sender.failed)
    fprintf(stderr, "crowd: %ld of %ld set_trackers could not be sent\n", sender.failed, sender.sent + sender.failed);
  for (int i = 0; i < o->connections; i++) {
    conns[i].stop = 1;
    if (conns[i].thread) pthread_join(conns[i].thread, NULL);
    if (conns[i].client) anim_client_close(conns[i].client);
    if (o->trackers) anim_test_raw_close(&conns[i].raw);
    free(conns[i].ids);
  }
  free(conns);
  anim_client_close(control);
  anim_test_server_stop(&server);
  return rc;
}

static void print_header(void) {
  printf("%9s %8s %8s %8s %8s %8s %7s %6s %9s %7s %10s %8s %8s %9s %9s\n", "chars", "tick Hz", "late p50", "late p99",
         "work p50", "work p99", "skipped", "CPU", "us/ch-tk", "x base", "B/char/s", "dropped", "RSS/char", "ping p50",
         "ping p99");
}

/* base: the in-process character-ticks a second on one core; "x base" is
 * the server's CPU per streamed character-tick over the in-process one. */
static void print_row(const result_t *r, double base) {
  printf("%9d %8.2f %7.2fms %7.2fms %7.2fms %7.2fms %7.0f %5.0f%% %9.3f %6.2fx %10.0f %8.0f %7.0fB %7.2fms %7.2fms %s\n",
         r->characters, r->tick_rate, r->lateness_p50_ms, r->lateness_p99_ms, r->work_p50_ms, r->work_p99_ms,
         r->skipped, 100.0 * r->cpu_share, 1e6 * r->cpu_per_character_tick_s, r->cpu_per_character_tick_s * base,
         r->bytes_per_character_s, r->frames_dropped, r->rss_per_character, r->ping_p50_ms, r->ping_p99_ms,
         r->keeps_up ? "keeps up" : "behind");
  fflush(stdout);
}

static int parse_sizes(const char *text, int *sizes, int max) {
  int n = 0;
  while (*text && n < max) {
    char *end;
    long v = strtol(text, &end, 10);
    if (end == text || v < 1) return -1;
    if (*end == 'k') v *= 1000, end++;
    sizes[n++] = (int)v;
    text = *end == ',' ? end + 1 : end;
    if (*end && *end != ',') return -1;
  }
  return n;
}

int bench_crowd(int argc, char **argv);
int bench_crowd(int argc, char **argv) {
  options_t o = {0, 10, 5, 6, ANIM_POSE_QUANTIZED, 0, 0, 2, 60.0, NULL, 1, {0, 0}, NULL, 0.0f, 0, 1, 0};
  int trackers = 0, learned = 0, baseline_only = 0, baseline_characters = 500;
  static char lmm_dir[1024];
  const char *shared = getenv("ANIM_SHARED_DIR") ? getenv("ANIM_SHARED_DIR") : "../shared";
  int sizes[32], nsizes = parse_sizes("1000,2000,4000,6000,8000,10000", sizes, 32);
  const char *encodings = "quantized,float";
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--sizes") && v) nsizes = parse_sizes(v, sizes, 32), i++;
    else if (!strcmp(a, "--connections") && v) o.connections = atoi(v), i++;
    else if (!strcmp(a, "--seconds") && v) o.seconds = atoi(v), i++;
    else if (!strcmp(a, "--search-interval") && v) o.search_interval = atoi(v), i++;
    else if (!strcmp(a, "--rate") && v) o.rate = atof(v), i++;
    else if (!strcmp(a, "--encodings") && v) encodings = v, i++;
    else if (!strcmp(a, "--rotations-only")) o.rotations_only = 1;
    else if (!strcmp(a, "--readers") && v) o.lib_readers = !strcmp(v, "lib"), i++;
    else if (!strcmp(a, "--trackers")) trackers = 1;
    else if (!strcmp(a, "--learned")) learned = 1;
    else if (!strcmp(a, "--baseline-only")) baseline_only = 1; /* the in-process figure alone (profiling) */
    else if (!strcmp(a, "--baseline-characters") && v) baseline_characters = atoi(v), i++;
    else if (!strcmp(a, "--tracker-every") && v) o.tracker_every = atoi(v), i++;
    else if (!strcmp(a, "--fit-search-interval") && v) o.fit.search_interval = atoi(v), i++;
    else if (!strcmp(a, "--fit-iterations") && v) o.fit.iterations = atoi(v), i++;
    else if (!strcmp(a, "--shared") && v) shared = v, i++;
    else if (!strcmp(a, "--regions") && v) o.region_radius = (float)atof(v), i++;
    else if (!strcmp(a, "--lod") && v) o.lod = atoi(v), i++;
    else if (!strcmp(a, "--region-cap") && v) o.region_cap = atoi(v), i++;
    else {
      fprintf(stderr, "usage: animbench crowd [--sizes 1000,2000,10k] [--connections 10] [--seconds 5] "
                      "[--search-interval 6] [--rate 60] [--encodings quantized,float,replicated] [--rotations-only] "
                      "[--readers raw|lib] [--learned] [--baseline-only] [--baseline-characters 500] "
                      "[--trackers [--tracker-every N] [--fit-search-interval N] [--fit-iterations N]] "
                      "[--regions R [--region-cap N]] [--lod N] [--shared DIR]\n");
      return 2;
    }
  }
  if (nsizes < 1 || o.connections < 1 || o.connections > MAX_CONNECTIONS || o.seconds < 1 || o.search_interval < 1 ||
      o.tracker_every < 1 || baseline_characters < 1 || (trackers && (o.lib_readers || learned)) ||
      o.region_radius < 0 || (o.region_radius > 0 && trackers) || o.lod < 1 || o.lod > 16 || o.region_cap < 0) {
    fprintf(stderr, "animbench crowd: bad options\n");
    return 2;
  }
  bench_make_log_dir();
  if (trackers && !(o.trackers = crowd_trackers_open(shared))) return 1;
  if (learned) snprintf(lmm_dir, sizeof lmm_dir, "%s/data/lmm", shared), o.lmm_dir = lmm_dir;
  double base = o.trackers  ? crowd_trackers_baseline(o.trackers, &o.fit)
                : learned   ? baseline_learned_ticks_per_second(lmm_dir, o.search_interval)
                            : baseline_ticks_per_second(o.search_interval, baseline_characters);
  if (learned) printf("learned characters (MODE_LEARNED, networks from %s): the baseline is the networks in process, "
                      "batches of 256\n", lmm_dir);
  if (o.trackers)
    printf("baseline: %.0f tracker fits/s on one core in process (head, hands, pelvis), "
           "i.e. %.0f characters at %.0f Hz per core\n", base, base / o.rate, o.rate);
  else
    printf("baseline: %.0f character-ticks/s on one core in process (%d characters, search every %d frames), i.e. "
           "%.0f characters at %.0f Hz per core\n",
           base, baseline_characters, o.search_interval, base / o.rate, o.rate);
  if (baseline_only) return crowd_trackers_close(o.trackers), 0;
  if (o.trackers)
    printf("server: %d connections of tracker characters (database %s, fit: search every %d frames, %d iterations), "
           "trackers sent every %d tick(s), raw readers, %d s measured after %d s warm-up\n", o.connections,
           crowd_trackers_database(o.trackers), o.fit.search_interval ? o.fit.search_interval : 2,
           o.fit.iterations ? o.fit.iterations : 1, o.tracker_every, o.seconds, o.warmup_s);
  else
    printf("server: %d connections, search every %d frames, %s readers, %d s measured after %d s warm-up\n",
           o.connections, o.search_interval, o.lib_readers ? "decoding (client library)" : "raw", o.seconds,
           o.warmup_s);
  for (const char *e = encodings; *e;) {
    o.encoding = !strncmp(e, "float", 5) ? ANIM_POSE_FLOAT : !strncmp(e, "replicated", 10) ? ANIM_POSE_REPLICATED
                                                                                           : ANIM_POSE_QUANTIZED;
    printf("\nencoding %s%s\n", o.encoding == ANIM_POSE_FLOAT ? "float" : o.encoding == ANIM_POSE_REPLICATED ? "replicated" : "quantized",
           o.rotations_only ? " (rotations only)" : "");
    print_header();
    int largest = 0;
    result_t r = {0};
    for (int s = 0; s < nsizes; s++) {
      o.characters = sizes[s];
      /* The baseline again just before each run, alternating with them: the
       * ratio compares two CPU figures taken minutes apart at most. */
      if (!o.trackers && !learned && (s > 0 || e != encodings))
        base = baseline_ticks_per_second(o.search_interval, baseline_characters);
      if (run_size(&o, &r) != 0) return crowd_trackers_close(o.trackers), 1;
      print_row(&r, base);
      if (!o.trackers && !learned) {
        printf("  (baseline just before: %.3f us a character-tick", 1e6 / base);
        /* Behind its rate, the server's ticks were longer: the baseline again at their mean dt (at most 0.25 s). */
        if (r.tick_rate > 0 && r.tick_rate < 0.99 * o.rate) {
          double dt = 1.0 / r.tick_rate < 0.25 ? 1.0 / r.tick_rate : 0.25;
          double at = baseline_ticks_at(o.search_interval, baseline_characters, (float)dt);
          printf("; at the server's dt of %.1f ms, %.3f us: x%.2f", 1e3 * dt, 1e6 / at, r.cpu_per_character_tick_s * at);
        }
        printf(")\n");
      }
      if (o.region_radius > 0) {
        result_t v = {0};
        o.regions = 1;
        int rc = run_size(&o, &v);
        o.regions = 0;
        if (rc != 0) return crowd_trackers_close(o.trackers), 1;
        char cap[48] = "";
        if (o.region_cap) snprintf(cap, sizeof cap, ", at most %d characters", o.region_cap);
        printf("  regions of %.0f m (bands 60/15/4 Hz%s):\n", (double)o.region_radius, cap);
        print_row(&v, base);
        /* Issue 35's target is per viewer: each connection is one. */
        double viewer = v.bytes_per_character_s * (double)o.characters / (double)o.connections;
        /* Behind its rate, a server sends fewer frames: the bytes of a tick at the target rate too. */
        printf("  per viewer: %.0f bytes/s at %.1f Hz, %.0f bytes/s at %.0f Hz (%.0f bytes a tick)\n", viewer,
               v.tick_rate, v.tick_rate > 0 ? viewer / v.tick_rate * o.rate : 0.0, o.rate,
               v.tick_rate > 0 ? viewer / v.tick_rate : 0.0);
      }
      if (r.keeps_up && sizes[s] > largest) largest = sizes[s];
    }
    printf("largest crowd that keeps up at %.0f Hz: %d characters; per character: %llu bytes held (a motion-matching "
           "one's pose buffers: %llu)\n",
           o.rate, largest, (unsigned long long)r.character_bytes, (unsigned long long)r.pose_buffer_bytes);
    const char *comma = strchr(e, ',');
    e = comma ? comma + 1 : e + strlen(e);
  }
  crowd_trackers_close(o.trackers);
  return 0;
}
