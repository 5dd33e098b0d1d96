/*
 * bench_lmm.c: `make bench-lmm`: the learned-motion-matching networks and the
 * whole learned-character frame, ours against PyTorch, one thread each,
 * measured in the same run.
 *
 *   bench_lmm [--shared DIR] [--json FILE] [--batches 1,64,1000] [--seconds S] [--rounds N] [--no-torch]
 *             [--frame-only] [--lmm DIR --db FILE.animdb]
 *
 * The networks: the reference's (SHARED/data/lmm, LaFAN1's skeleton), or
 * with --lmm and --db networks tools/lmm_train trained on that database
 * (NAME.lmm beside NAME.animdb), loaded as the server loads them
 * (anim_lmm_networks_load_for), their feet locked on that database.
 *
 * Rows {"impl", "net", "batch", "us_per_item"} (one JSON object per line,
 * written to --json and echoed), for net in projector, stepper,
 * decompressor (one evaluation of the network on `batch` rows, normalization
 * included), networks (ours: stepper + decompressor + projector / 6 from
 * those rows: PyTorch's frame formula, like for like) and frame (one
 * character's tick):
 *   impl "ours": anim_nnet_run with the kernel chosen at load ("kernel" says
 *     which); "ours-<kernel>" the other available kernels; "openblas": the
 *     same layers through OpenBLAS (cblas_sgemm, cblas_sgemv for one row,
 *     one thread), to show why the core has its own kernels;
 *   impl "pytorch": bench/lmm_torch.py (torch.nn.Linear layers, torch.set_num_threads(1)),
 *     in wall time and in its CPU time (net "NAME-cpu"; every thread of the process,
 *     OpenBLAS held to one thread: lmm_torch.py).
 * The frame: ours is anim_lmm_tick_batch on `batch` characters (walking and
 * running at assorted velocities, projections every 6 frames, staggered:
 * the projector on a sixth of them, the stepper on all, the decompressor on
 * all plus the sixth that transition; then decoding, root,
 * inertialization, springs, and the feet locked as the server locks them:
 * anim_lmm_character_feet on the learned skeleton's database); PyTorch's is its networks alone (stepper +
 * decompressor + projector / 6), to be read against our "networks" row.
 * "frame-cpu" is the same frame in this thread's CPU time
 * (CLOCK_THREAD_CPUTIME_ID, best of three), not wall time: what a
 * character-tick costs whatever else the machine runs. "frame-bare" and
 * "frame-bare-cpu": the same without the feet locked, right after, so the
 * difference is what the feet cost; "feet-cpu": the feet's locking alone
 * (anim_foot_locks_apply on copies of each character's pose and locks),
 * which that difference is too small to show on a loaded machine. --frame-only: the
 * frame rows alone (no network rows, no PyTorch), to compare builds.
 * Each figure is the best of three timings of at least --seconds / 3 each,
 * and the best over --rounds rounds (default 3) of ours then PyTorch, so
 * other load on the machine inflates neither side much. Progress goes to
 * stderr; the rows and a Markdown table to stdout at the end.
 *
 * The verdict, every round: at each batch, our whole frame in CPU time
 * ("frame-cpu") against PyTorch's networks alone in CPU time ("frame-cpu":
 * stepper + decompressor + projector / 6), both of that round (not the
 * best of the rounds): one line "round R batch B: ours X us, PyTorch Y us,
 * Y/X" and a JSON row {"round", "batch", "ours_frame_cpu_us",
 * "pytorch_networks_cpu_us", "ratio"}. CPU time because the machine this
 * runs on is shared: wall time there measures the other work as much as
 * ours (on a loaded 2-core machine our wall-time frame was 3x its CPU
 * time). Then memory: a learned character, the shared networks,
 * and a database character on the data the networks were trained on.
 */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench_util.h"
#include "character/controller.h"
#include "database/dbfile.h"
#include "learned/lmm.h"
#include "offline/lmm_database.h"

static FILE *json;

/* Every figure, the best over the rounds, printed at the end. */
#define MAX_ROWS 128
static struct {
  char impl[24], net[16], kernel[16];
  int batch;
  double us;   /* the best of the rounds */
  double last; /* this round's */
} results[MAX_ROWS];
static int nresults;

static int find(const char *impl, const char *net, int batch) {
  for (int i = 0; i < nresults; i++)
    if (strcmp(results[i].impl, impl) == 0 && strcmp(results[i].net, net) == 0 && results[i].batch == batch) return i;
  return -1;
}

/* Records a figure (keeping the lowest of the rounds) and shows progress on stderr. */
static void row(const char *impl, const char *net, int batch, double us, const char *kernel) {
  fprintf(stderr, "  %-14s %-13s batch %4d: %9.3f us/item\n", impl, net, batch, us);
  int i = find(impl, net, batch);
  if (i < 0) {
    if (nresults == MAX_ROWS) return;
    i = nresults++;
    snprintf(results[i].impl, sizeof results[i].impl, "%s", impl);
    snprintf(results[i].net, sizeof results[i].net, "%s", net);
    snprintf(results[i].kernel, sizeof results[i].kernel, "%s", kernel ? kernel : "");
    results[i].batch = batch, results[i].us = us;
  } else if (us < results[i].us) {
    results[i].us = us;
  }
  results[i].last = us;
}

static void print_results(void) {
  for (int i = 0; i < nresults; i++) {
    char line[256];
    if (results[i].kernel[0])
      snprintf(line, sizeof line,
               "{\"impl\": \"%s\", \"net\": \"%s\", \"batch\": %d, \"us_per_item\": %.3f, \"kernel\": \"%s\"}",
               results[i].impl, results[i].net, results[i].batch, results[i].us, results[i].kernel);
    else
      snprintf(line, sizeof line, "{\"impl\": \"%s\", \"net\": \"%s\", \"batch\": %d, \"us_per_item\": %.3f}",
               results[i].impl, results[i].net, results[i].batch, results[i].us);
    printf("%s\n", line);
    if (json) fprintf(json, "%s\n", line);
  }
  printf("\n| net | batch | ours us/item | PyTorch us/item | PyTorch / ours | OpenBLAS us/item |\n"
         "|---|---|---|---|---|---|\n");
  for (int i = 0; i < nresults; i++) {
    if (strcmp(results[i].impl, "ours") != 0) continue;
    /* Our "networks" row is PyTorch's "frame" formula: compare those two;
     * our frame against PyTorch's networks alone, in wall or CPU time. */
    const char *peer = results[i].net;
    if (strcmp(peer, "networks") == 0 || strcmp(peer, "frame") == 0) peer = "frame";
    int t = find("pytorch", peer, results[i].batch);
    int o = find("openblas", results[i].net, results[i].batch);
    double torch = t >= 0 ? results[t].us : 0.0;
    char blas[32] = "-";
    if (o >= 0) snprintf(blas, sizeof blas, "%.2f", results[o].us);
    printf("| %s | %d | %.2f | %.2f | %.2fx | %s |\n", results[i].net, results[i].batch, results[i].us, torch,
           torch > 0.0 ? torch / results[i].us : 0.0, blas);
  }
}

/* Best of three timings, each of at least seconds/3, of fn(arg): seconds per call. */
static double best_time(void (*fn)(void *), void *arg, double seconds) {
  fn(arg);
  double best = 1e30;
  for (int round = 0; round < 3; round++) {
    long reps = 1;
    for (;;) {
      double start = bench_now_s();
      for (long r = 0; r < reps; r++) fn(arg);
      double elapsed = bench_now_s() - start;
      if (elapsed >= seconds / 3.0) {
        if (elapsed / (double)reps < best) best = elapsed / (double)reps;
        break;
      }
      reps *= 2;
    }
  }
  return best;
}

/* best_time in this thread's CPU time. */
static double thread_cpu_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double best_cpu_time(void (*fn)(void *), void *arg, double seconds) {
  fn(arg);
  double best = 1e30;
  for (int round = 0; round < 3; round++) {
    long reps = 1;
    for (;;) {
      double start = thread_cpu_s();
      for (long r = 0; r < reps; r++) fn(arg);
      double elapsed = thread_cpu_s() - start;
      if (elapsed >= seconds / 3.0) {
        if (elapsed / (double)reps < best) best = elapsed / (double)reps;
        break;
      }
      reps *= 2;
    }
  }
  return best;
}

/* ---- one network, ours -------------------------------------------------------------------- */

typedef struct {
  const anim_nnet_t *nn;
  anim_gemm_kernel_t kernel;
  int rows;
  float *in, *out, *scratch;
  /* OpenBLAS: the weights unpacked, row-major (rows = inputs). */
  float *weights[ANIM_NNET_MAX_LAYERS];
  float *a, *b;
} net_job_t;

static void run_ours(void *arg) {
  net_job_t *j = arg;
  anim_nnet_run_kernel(j->nn, j->kernel, j->in, j->nn->ninputs, j->out, j->nn->noutputs, j->rows, j->scratch);
}

static void run_openblas(void *arg) {
  net_job_t *j = arg;
  const anim_nnet_t *nn = j->nn;
  float *x = j->a, *y = j->b;
  for (int i = 0; i < j->rows; i++)
    for (int c = 0; c < nn->ninputs; c++)
      x[(size_t)i * nn->ninputs + c] = (j->in[(size_t)i * nn->ninputs + c] - nn->input_mean[c]) / nn->input_std[c];
  for (int l = 0; l < nn->nlayers; l++) {
    const anim_nnet_layer_t *layer = &nn->layers[l];
    int k = layer->rows, n = layer->cols;
    if (j->rows == 1)
      cblas_sgemv(CblasRowMajor, CblasTrans, k, n, 1.0f, j->weights[l], n, x, 1, 0.0f, y, 1);
    else
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, j->rows, n, k, 1.0f, x, k, j->weights[l], n, 0.0f, y, n);
    int relu = l + 1 < nn->nlayers;
    for (size_t e = 0; e < (size_t)j->rows * (size_t)n; e++) {
      float v = y[e] + layer->bias[e % (size_t)n];
      y[e] = relu && v < 0.0f ? 0.0f : v;
    }
    float *t = x;
    x = y, y = t;
  }
  for (size_t e = 0; e < (size_t)j->rows * (size_t)nn->noutputs; e++) {
    size_t c = e % (size_t)nn->noutputs;
    j->out[e] = x[e] * nn->output_std[c] + nn->output_mean[c];
  }
}

/* Returns ours (the load-time kernel) in microseconds per row. */
static double bench_network(const anim_nnet_t *nn, const char *name, int rows, double seconds) {
  net_job_t j;
  memset(&j, 0, sizeof j);
  j.nn = nn, j.rows = rows;
  j.in = malloc(sizeof(float) * (size_t)rows * (size_t)nn->ninputs);
  j.out = malloc(sizeof(float) * (size_t)rows * (size_t)nn->noutputs);
  j.scratch = malloc(sizeof(float) * anim_nnet_scratch_floats(nn, rows));
  unsigned seed = 99u;
  for (int i = 0; i < rows * nn->ninputs; i++) {
    int c = i % nn->ninputs;
    j.in[i] = nn->input_mean[c] + nn->input_std[c] * (2.0f * bench_uniform(&seed) - 1.0f);
  }
  j.kernel = nn->kernel;
  double ours = best_time(run_ours, &j, seconds) / rows * 1e6;
  row("ours", name, rows, ours, anim_gemm_kernel_name(nn->kernel));
  for (int k = 0; k < ANIM_GEMM_KERNEL_COUNT; k++) {
    if (k == (int)nn->kernel || !anim_gemm_kernel_available((anim_gemm_kernel_t)k)) continue;
    char impl[32];
    snprintf(impl, sizeof impl, "ours-%s", anim_gemm_kernel_name((anim_gemm_kernel_t)k));
    j.kernel = (anim_gemm_kernel_t)k;
    row(impl, name, rows, best_time(run_ours, &j, seconds) / rows * 1e6, NULL);
  }
  for (int l = 0; l < nn->nlayers; l++) {
    const anim_nnet_layer_t *layer = &nn->layers[l];
    j.weights[l] = malloc(sizeof(float) * (size_t)layer->rows * (size_t)layer->cols);
    for (int r = 0; r < layer->rows; r++)
      for (int c = 0; c < layer->cols; c++) j.weights[l][(size_t)r * layer->cols + c] = anim_nnet_weight(nn, l, r, c);
  }
  j.a = malloc(sizeof(float) * (size_t)rows * (size_t)nn->widest);
  j.b = malloc(sizeof(float) * (size_t)rows * (size_t)nn->widest);
  row("openblas", name, rows, best_time(run_openblas, &j, seconds) / rows * 1e6, NULL);
  for (int l = 0; l < nn->nlayers; l++) free(j.weights[l]);
  free(j.in), free(j.out), free(j.scratch), free(j.a), free(j.b);
  return ours;
}

/* ---- the whole frame ------------------------------------------------------------------------ */

typedef struct {
  anim_lmm_character_t *characters;
  anim_lmm_character_t **pointers;
  int n;
  float *scratch;
} frame_job_t;

static void run_frame(void *arg) {
  frame_job_t *f = arg;
  if (anim_lmm_tick_batch(f->pointers, f->n, 1.0f / 60.0f, f->scratch) != 0) abort();
}

/* The feet alone: each character's foot locks applied once more to a copy
 * of its pose and locks (the copies, 1.3 KB a character, are counted in). */
static void run_feet(void *arg) {
  frame_job_t *f = arg;
  for (int i = 0; i < f->n; i++) {
    const anim_lmm_character_t *c = f->pointers[i];
    anim_foot_locks_t feet = c->feet;
    vec3 positions[ANIM_LMM_BONES];
    quat rotations[ANIM_LMM_BONES];
    memcpy(positions, c->pose.positions, sizeof positions);
    memcpy(rotations, c->pose.rotations, sizeof rotations);
    uint8_t flags[ANIM_MAX_CONTACTS];
    for (int s = 0; s < feet.nfeet; s++) flags[s] = c->contacts[c->foot_contact[s]];
    anim_foot_locks_apply(&feet, flags, positions, rotations, 1.0f / 60.0f);
    if (!isfinite(positions[ANIM_LMM_HIPS].y)) abort(); /* keeps the work */
  }
}

/* walk NULL: the feet not locked, rows "frame-bare" and "frame-bare-cpu"
 * (what the feet cost, measured in the same round). */
static void bench_frame(const anim_lmm_networks_t *nets, const anim_database_t *walk, int n, double seconds) {
  frame_job_t f;
  f.n = n;
  f.characters = malloc(sizeof *f.characters * (size_t)n);
  f.pointers = malloc(sizeof *f.pointers * (size_t)n);
  f.scratch = malloc(sizeof(float) * anim_lmm_scratch_floats(nets, n));
  unsigned seed = 7u;
  for (int i = 0; i < n; i++) {
    anim_lmm_character_t *c = &f.characters[i];
    if (anim_lmm_character_init(c, nets, NULL, vec3_make((float)(i % 40), 0.0f, (float)(i / 40)), 0.0f, f.scratch))
      abort();
    if (walk && anim_lmm_character_feet(c, walk)) abort();
    anim_lmm_stagger(c, i % 6);
    float speed = 0.5f + 3.0f * bench_uniform(&seed), angle = 6.2831853f * bench_uniform(&seed);
    anim_controller_input_t in;
    memset(&in, 0, sizeof in);
    in.kind = ANIM_INPUT_VELOCITY, in.velocity = vec3_make(speed * sinf(angle), 0.0f, speed * cosf(angle));
    in.facing = angle;
    anim_lmm_set_input(c, &in);
    f.pointers[i] = c;
  }
  for (int t = 0; t < 60; t++) run_frame(&f); /* past the start-up projections */
  const char *kernel = anim_gemm_kernel_name(nets->projector->kernel);
  row("ours", walk ? "frame" : "frame-bare", n, best_time(run_frame, &f, seconds) / n * 1e6, kernel);
  row("ours", walk ? "frame-cpu" : "frame-bare-cpu", n, best_cpu_time(run_frame, &f, seconds) / n * 1e6, kernel);
  if (walk) row("ours", "feet-cpu", n, best_cpu_time(run_feet, &f, seconds) / n * 1e6, kernel);
  free(f.characters), free(f.pointers), free(f.scratch);
}

/* ---- memory ------------------------------------------------------------------------------------- */

/* Trained networks (--db): the database they were trained on, as animdb
 * info counts it (tools/animdb.c sizes_of). */
static size_t database_bytes(const anim_database_t *db) {
  return (size_t)db->nframes * (size_t)db->nbones * (6 * sizeof(vec3) + 2 * sizeof(quat)) +
         ((size_t)db->features.rows + 2) * (size_t)db->features.cols * sizeof(float) +
         (size_t)db->nframes * (size_t)db->ncontacts + (size_t)db->nranges * sizeof(anim_range_t);
}

static void report_trained_memory(const anim_lmm_networks_t *nets, const anim_database_t *db) {
  size_t n = anim_lmm_networks_memory(nets), d = database_bytes(db);
  printf("\nmemory:\n  learned character: %zu bytes of state (%zu with its pose buffers)\n",
         (size_t)ANIM_LMM_STATE_BYTES, sizeof(anim_lmm_character_t));
  printf("  shared networks:   %.2f MB (projector %.2f, stepper %.2f, trimmed decompressor %.2f), %.1f%% of the "
         "database\n",
         (double)n / 1e6, (double)nets->projector->bytes / 1e6, (double)nets->stepper->bytes / 1e6,
         (double)nets->pose_network->bytes / 1e6, 100.0 * (double)n / (double)d);
  printf("  database %s: %.2f MB (%d frames x %d bones)\n", db->name, (double)d / 1e6, db->nframes, db->nbones);
  if (json)
    fprintf(json, "{\"memory\": {\"lmm_networks\": %zu, \"database\": %zu, \"fraction\": %.4f}}\n", n, d,
            (double)n / (double)d);
}

/* The verdict of one round (see the opening comment). */
static void round_verdict(int round, const char *batches) {
  char list[256];
  snprintf(list, sizeof list, "%s", batches);
  for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
    int b = atoi(tok), o = find("ours", "frame-cpu", b), t = find("pytorch", "frame-cpu", b);
    if (b < 1 || o < 0 || t < 0) continue;
    double ours = results[o].last, torch = results[t].last;
    fprintf(stderr, "round %d batch %4d: our frame %.2f us CPU, PyTorch's networks %.2f us CPU: %.2fx%s\n", round, b,
            ours, torch, torch / ours, torch > ours ? "" : "  (PyTorch ahead)");
    if (json)
      fprintf(json,
              "{\"round\": %d, \"batch\": %d, \"ours_frame_cpu_us\": %.3f, \"pytorch_networks_cpu_us\": %.3f, "
              "\"ratio\": %.3f}\n",
              round, b, ours, torch, torch / ours);
  }
}

static void report_memory(const anim_lmm_networks_t *nets) {
  /* A database character on the motion the networks were trained on: the
   * reference's generate_database.py takes LaFAN1 frames 194-351 of
   * pushAndStumble1_subject5, 90-7086 of run1_subject5 and 80-7791 of
   * walk1_subject5 at 30 Hz, resamples each to int(0.9 (2n - 1)) frames at
   * 60 Hz and mirrors them: 2 (281 + 12591 + 13877) = 53498 frames of 23
   * bones. This project's database holds per frame and bone local and
   * global position, velocity, rotation and angular velocity (26 floats),
   * 27 feature floats per frame and 2 contact bytes; a character holds its
   * struct plus 10 per-bone arrays (offsets, pose, globals: 33 floats). */
  long frames = 2L * (281 + 12591 + 13877);
  double db_bytes = (double)frames * (23.0 * 26.0 * 4.0 + 27.0 * 4.0 + 2.0);
  double db_character = (double)sizeof(anim_controller_t) + 23.0 * 33.0 * 4.0;
  printf("\nmemory:\n");
  printf("  learned character: %zu bytes of state (%zu with its pose buffers)\n", (size_t)ANIM_LMM_STATE_BYTES,
         sizeof(anim_lmm_character_t));
  printf("  shared networks:   %.2f MB (projector %.2f, stepper %.2f, trimmed decompressor %.2f)\n",
         (double)anim_lmm_networks_memory(nets) / 1e6, (double)nets->projector->bytes / 1e6,
         (double)nets->stepper->bytes / 1e6, (double)nets->pose_network->bytes / 1e6);
  printf("  database character on the same motion: %.0f bytes per character, database %.1f MB (%ld frames x 23 "
         "bones; search index extra)\n",
         db_character, db_bytes / 1e6, frames);
  if (json)
    fprintf(json,
            "{\"memory\": {\"lmm_character_state\": %zu, \"lmm_character\": %zu, \"lmm_networks\": %zu, "
            "\"db_character\": %.0f, \"db_database\": %.0f, \"db_frames\": %ld}}\n",
            (size_t)ANIM_LMM_STATE_BYTES, sizeof(anim_lmm_character_t), anim_lmm_networks_memory(nets), db_character,
            db_bytes, frames);
}

/* ---- PyTorch, same run --------------------------------------------------------------------------- */

static void run_torch(const char *dir, const char *batches, double seconds) {
  char cmd[4096], line[512];
  snprintf(cmd, sizeof cmd, "/usr/bin/python3 bench/lmm_torch.py bench %.3900s --threads 1 --batches %s --seconds %g",
           dir, batches, seconds / 3.0);
  FILE *p = popen(cmd, "r");
  if (!p) {
    fprintf(stderr, "bench_lmm: cannot run %s\n", cmd);
    return;
  }
  while (fgets(line, sizeof line, p)) {
    char net[16];
    int batch;
    double us;
    if (sscanf(line, "{\"impl\": \"pytorch\", \"net\": \"%15[a-z-]\", \"batch\": %d, \"us_per_item\": %lf", net, &batch,
               &us) == 3)
      row("pytorch", net, batch, us, NULL);
  }
  if (pclose(p) != 0) fprintf(stderr, "bench_lmm: %s failed (is python3-torch installed?)\n", cmd);
}

int main(int argc, char **argv) {
  const char *shared = "../shared", *json_path = NULL, *batches = "1,64,1000", *lmm_dir = NULL, *db_path = NULL;
  double seconds = 1.5;
  int torch = 1, rounds = 3, frame_only = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--no-torch") == 0) torch = 0;
    else if (strcmp(argv[i], "--frame-only") == 0) frame_only = 1, torch = 0;
    else if (i + 1 < argc && strcmp(argv[i], "--shared") == 0) shared = argv[++i];
    else if (i + 1 < argc && strcmp(argv[i], "--json") == 0) json_path = argv[++i];
    else if (i + 1 < argc && strcmp(argv[i], "--batches") == 0) batches = argv[++i];
    else if (i + 1 < argc && strcmp(argv[i], "--seconds") == 0) seconds = atof(argv[++i]);
    else if (i + 1 < argc && strcmp(argv[i], "--rounds") == 0) rounds = atoi(argv[++i]);
    else if (i + 1 < argc && strcmp(argv[i], "--lmm") == 0) lmm_dir = argv[++i];
    else if (i + 1 < argc && strcmp(argv[i], "--db") == 0) db_path = argv[++i];
    else {
      fprintf(stderr, "usage: bench_lmm [--shared DIR] [--json FILE] [--batches 1,64,1000] [--seconds S] [--rounds N] "
                      "[--no-torch] [--frame-only] [--lmm DIR --db FILE.animdb]\n");
      return 2;
    }
  }
  if (!lmm_dir != !db_path) {
    fprintf(stderr, "bench_lmm: --lmm DIR and --db FILE go together (networks trained on that database)\n");
    return 2;
  }
  openblas_set_num_threads(1);
  char dir[4096], err[512];
  snprintf(dir, sizeof dir, "%s", lmm_dir ? lmm_dir : "");
  if (!lmm_dir) snprintf(dir, sizeof dir, "%s/data/lmm", shared);
  int code = 0;
  anim_database_t walk; /* the learned skeleton's database: the feet's legs */
  anim_lmm_networks_t *nets = NULL;
  if (db_path) {
    if (anim_dbfile_load(&walk, db_path, err, sizeof err)) {
      fprintf(stderr, "bench_lmm: %s\n", err);
      return 1;
    }
    nets = anim_lmm_networks_load_for(dir, &walk, &code, err, sizeof err);
  } else {
    nets = anim_lmm_networks_load(dir, NULL, &code, err, sizeof err);
  }
  /* The full decompressor, which the networks release once trimmed
   * (lmm.h): benched as PyTorch runs it, and its bytes reported. */
  char path[4200];
  snprintf(path, sizeof path, "%s/decompressor.bin", dir);
  anim_nnet_t *decompressor = nets ? anim_nnet_load(path, &code, err, sizeof err) : NULL;
  if (!nets || !decompressor) {
    fprintf(stderr, "bench_lmm: %s\n", err);
    return 1;
  }
  if (!db_path && anim_lmm_database(&walk, "lmm", nets, err, sizeof err)) {
    fprintf(stderr, "bench_lmm: the learned walk: %s\n", err);
    return 1;
  }
  fprintf(stderr, "bench_lmm: networks %s (widths: projector %d, stepper %d, decompressor %d)\n", dir,
          nets->projector->layers[0].cols, nets->stepper->layers[0].cols, decompressor->layers[0].cols);
  if (json_path && !(json = fopen(json_path, "w"))) {
    fprintf(stderr, "bench_lmm: cannot write %s\n", json_path);
    return 1;
  }
  const anim_nnet_t *nn[3] = {nets->projector, nets->stepper, decompressor};
  const char *names[3] = {"projector", "stepper", "decompressor"};
  /* Rounds of ours then PyTorch: load from other processes on the machine
   * comes and goes, and the best of the rounds is the figure. */
  for (int round = 0; round < rounds; round++) {
    fprintf(stderr, "round %d of %d\n", round + 1, rounds);
    char list[256];
    snprintf(list, sizeof list, "%s", batches);
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
      int b = atoi(tok);
      if (b < 1) continue;
      if (!frame_only) {
        double us[3];
        for (int i = 0; i < 3; i++) us[i] = bench_network(nn[i], names[i], b, seconds);
        /* The networks of a frame by PyTorch's formula, for a like-for-like figure. */
        row("ours", "networks", b, us[1] + us[2] + us[0] / 6.0, anim_gemm_kernel_name(nets->projector->kernel));
      }
      bench_frame(nets, &walk, b, seconds);
      bench_frame(nets, NULL, b, seconds);
    }
    if (torch) {
      run_torch(dir, batches, seconds);
      round_verdict(round + 1, batches);
    }
  }
  print_results();
  if (db_path) report_trained_memory(nets, &walk);
  else report_memory(nets);
  anim_nnet_free(decompressor);
  if (json) fclose(json);
  anim_database_free(&walk);
  anim_lmm_networks_free(nets);
  return 0;
}
