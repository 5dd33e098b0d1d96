/*
 * test_graph_service.c: motion graphs served over the wire: a graph built
 * on request on the thread pool, its progress seen by describe_graph while
 * it builds; path queries; MODE_GRAPH characters following a straight line
 * and a circle, measured from the poses the stream carries.
 *
 * Invalid requests first (each error names its field, the value and the
 * rule), then behaviour on real Bandai Namco mocap (the graph at its
 * default options, the path limits of follow_limits.h, as the core's
 * test_graph_character). The characters run FOLLOW_SECONDS at the server's 60
 * Hz (a graph character shows whole database frames: at a faster tick its
 * poses step, and the velocity check would see the steps); the circle run is
 * recorded (build/tests/circle.stream) for docs' filmstrip (make seq-filmstrips).
 *
 * Requests are built with protobuf-c from the proto and sent raw
 * (wire_client.h), as a client written from the proto alone would send
 * them; test_graph_wire_options goes through the client library.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>
#include "anim_error.h"
#include "data_dir.h"
#include "database/database.h"
#include "follow_limits.h"
#include "server_proc.h"
#include "shared_data.h"
#include "stream_record.h"
#include "wire_client.h"

#define TIMEOUT_MS 60000
/* build_graph answers once the build is done: long under the sanitizers on a loaded machine. */
#define BUILD_TIMEOUT_MS 120000
#define FOLLOW_SECONDS 25.0
#define CIRCLE_RADIUS 3.0f
#define CIRCLE_SIDES 64

static anim_test_server_t server;
static char dir[96];
static anim_wire_t wire;
static anim_database_t bandai;
static int have_bandai, bandai_loaded;
static int walk_start; /* a frame of the plain forward walk, 2 s in */

static int setup(void **state) {
  anim_test_data_dir_make(dir, sizeof dir, "graphs");
  const char *args[] = {"--data-dir", dir, NULL};
  if (anim_test_server_start(&server, "graph_service", args) != 0) return -1;
  anim_wire_open(&wire, &server);
  return 0;
}

static int teardown(void **state) {
  anim_wire_close(&wire);
  int rc = anim_test_server_stop(&server);
  anim_test_data_dir_remove(dir);
  if (have_bandai) anim_database_free(&bandai);
  return rc == 0 ? 0 : -1;
}

/* The Bandai database loaded on the server as "bandai"; 0 after a skip. */
static int load_bandai(void) {
  if (bandai_loaded) return 1;
  if (!have_bandai && !(have_bandai = anim_test_bandai_database(&bandai))) return 0;
  anim_test_data_dir_put_database(dir, &bandai, "bandai");
  Animserver__LoadDatabaseRequest body = ANIMSERVER__LOAD_DATABASE_REQUEST__INIT;
  body.name = "bandai";
  Animserver__Request r = ANIMSERVER__REQUEST__INIT;
  r.body_case = ANIMSERVER__REQUEST__BODY_LOAD_DATABASE, r.load_database = &body;
  anim_wire_free(anim_wire_ok(&wire, &r, TIMEOUT_MS));
  for (int i = 0; i < bandai.nranges; i++)
    if (strcmp(bandai.ranges[i].name, "dataset-2_walk_normal_001") == 0) walk_start = bandai.ranges[i].start + 121;
  assert_true(walk_start > 0);
  bandai_loaded = 1;
  return 1;
}

/* ---- requests ---- */

static Animserver__Request build_request(Animserver__BuildGraphRequest *body, Animserver__GraphOptions *options,
                                         const char *database) {
  *body = (Animserver__BuildGraphRequest)ANIMSERVER__BUILD_GRAPH_REQUEST__INIT;
  body->database = (char *)database;
  body->options = options;
  Animserver__Request r = ANIMSERVER__REQUEST__INIT;
  r.body_case = ANIMSERVER__REQUEST__BODY_BUILD_GRAPH, r.build_graph = body;
  return r;
}

static void build_fails(Animserver__GraphOptions *options, int code, const char *contains) {
  Animserver__BuildGraphRequest body;
  Animserver__Request r = build_request(&body, options, "default");
  anim_wire_expect_error(&wire, &r, code, contains);
}

static Animserver__ServerMessage *describe(const char *database, int transitions, int matrix) {
  Animserver__DescribeGraphRequest body = ANIMSERVER__DESCRIBE_GRAPH_REQUEST__INIT;
  body.database = (char *)database, body.transitions = transitions, body.matrix = matrix;
  Animserver__Request r = ANIMSERVER__REQUEST__INIT;
  r.body_case = ANIMSERVER__REQUEST__BODY_DESCRIBE_GRAPH, r.describe_graph = &body;
  return anim_wire_ok(&wire, &r, TIMEOUT_MS);
}

typedef struct {
  Animserver__QueryGraphRequest body;
  Animserver__Vec2 points[CIRCLE_SIDES], *pointers[CIRCLE_SIDES];
  Animserver__Placement start;
  Animserver__FrameIndex start_frame;
  Animserver__PathOptions options;
  Animserver__Request request;
} query_t;

/* A query of database along n points (x z pairs). */
static void query_init(query_t *q, const char *database, const float *xz, int n, int closed) {
  memset(q, 0, sizeof *q);
  q->body = (Animserver__QueryGraphRequest)ANIMSERVER__QUERY_GRAPH_REQUEST__INIT;
  q->body.database = (char *)database;
  for (int i = 0; i < n; i++) {
    q->points[i] = (Animserver__Vec2)ANIMSERVER__VEC2__INIT;
    q->points[i].x = xz[2 * i], q->points[i].z = xz[2 * i + 1];
    q->pointers[i] = &q->points[i];
  }
  q->body.n_points = (size_t)n, q->body.points = q->pointers, q->body.closed = closed;
  q->request = (Animserver__Request)ANIMSERVER__REQUEST__INIT;
  q->request.body_case = ANIMSERVER__REQUEST__BODY_QUERY_GRAPH, q->request.query_graph = &q->body;
}

/* Starts a query's walk at (0, 0) facing `facing`, at the walk's node. */
static void query_start(query_t *q, float facing) {
  q->start = (Animserver__Placement)ANIMSERVER__PLACEMENT__INIT;
  q->start_frame = (Animserver__FrameIndex)ANIMSERVER__FRAME_INDEX__INIT;
  q->start_frame.frame = (uint32_t)walk_start;
  q->start.start_frame = &q->start_frame, q->start.facing = facing;
  q->body.start = &q->start;
}

static uint64_t create_graph_character(float facing) {
  Animserver__FrameIndex frame = ANIMSERVER__FRAME_INDEX__INIT;
  frame.frame = (uint32_t)walk_start;
  Animserver__Placement placement = ANIMSERVER__PLACEMENT__INIT, *pp = &placement;
  placement.facing = facing, placement.start_frame = &frame;
  Animserver__CreateCharactersRequest body = ANIMSERVER__CREATE_CHARACTERS_REQUEST__INIT;
  body.database = "bandai", body.mode = ANIMSERVER__CHARACTER_MODE__MODE_GRAPH;
  body.n_placements = 1, body.placements = &pp;
  Animserver__Request r = ANIMSERVER__REQUEST__INIT;
  r.body_case = ANIMSERVER__REQUEST__BODY_CREATE_CHARACTERS, r.create_characters = &body;
  Animserver__ServerMessage *m = anim_wire_ok(&wire, &r, TIMEOUT_MS);
  uint64_t id = m->response->create_characters->characters[0];
  anim_wire_free(m);
  return id;
}

static void set_path(uint64_t id, const float *xz, int n, int closed, int code, const char *contains) {
  Animserver__Vec2 points[CIRCLE_SIDES], *pointers[CIRCLE_SIDES];
  for (int i = 0; i < n; i++) {
    points[i] = (Animserver__Vec2)ANIMSERVER__VEC2__INIT;
    points[i].x = xz[2 * i], points[i].z = xz[2 * i + 1];
    pointers[i] = &points[i];
  }
  Animserver__CharacterPath item = ANIMSERVER__CHARACTER_PATH__INIT, *pi = &item;
  item.character = id, item.n_points = (size_t)n, item.points = pointers, item.closed = closed;
  Animserver__SetPathsRequest body = ANIMSERVER__SET_PATHS_REQUEST__INIT;
  body.n_paths = 1, body.paths = &pi;
  Animserver__Request r = ANIMSERVER__REQUEST__INIT;
  r.body_case = ANIMSERVER__REQUEST__BODY_SET_PATHS, r.set_paths = &body;
  if (code) anim_wire_expect_error(&wire, &r, code, contains);
  else anim_wire_free(anim_wire_ok(&wire, &r, TIMEOUT_MS));
}

static void circle(float *xz) {
  for (int i = 0; i < CIRCLE_SIDES; i++) {
    float a = 2.0f * (float)M_PI * (float)i / CIRCLE_SIDES;
    xz[2 * i] = CIRCLE_RADIUS * sinf(a), xz[2 * i + 1] = CIRCLE_RADIUS - CIRCLE_RADIUS * cosf(a);
  }
}

/* Distance from (x, z) to the polyline (closed: the last point joins the first). */
static float polyline_distance(const float *xz, int n, int closed, float x, float z) {
  float best = INFINITY;
  for (int k = 0; k + 1 < n + (closed ? 1 : 0); k++) {
    float ax = xz[2 * k], az = xz[2 * k + 1], bx = xz[2 * ((k + 1) % n)], bz = xz[2 * ((k + 1) % n) + 1];
    float dx = bx - ax, dz = bz - az, l2 = dx * dx + dz * dz;
    float u = l2 > 0.0f ? fmaxf(0.0f, fminf(1.0f, ((x - ax) * dx + (z - az) * dz) / l2)) : 0.0f;
    best = fminf(best, hypotf(ax + u * dx - x, az + u * dz - z));
  }
  return best;
}

/* ---- invalid requests ---- */

static void test_invalid(void **state) {
  Animserver__ServerMessage *m = describe("default", 0, 0);
  assert_int_equal(m->response->describe_graph->graph->status, ANIMSERVER__GRAPH_STATUS__GRAPH_NONE);
  assert_false(m->response->describe_graph->graph->ready);
  anim_wire_free(m);
  float line[] = {0.0f, 0.0f, 0.0f, 10.0f};
  query_t q;
  query_init(&q, "default", line, 2, 0);
  anim_wire_expect_error(&wire, &q.request, ANIM_ENOTFOUND,
                         "query_graph.database = \"default\": no graph: build_graph first");
  Animserver__CreateCharactersRequest cb = ANIMSERVER__CREATE_CHARACTERS_REQUEST__INIT;
  cb.database = "default", cb.mode = ANIMSERVER__CHARACTER_MODE__MODE_GRAPH;
  Animserver__Request r = ANIMSERVER__REQUEST__INIT;
  r.body_case = ANIMSERVER__REQUEST__BODY_CREATE_CHARACTERS, r.create_characters = &cb;
  anim_wire_expect_error(&wire, &r, ANIM_ENOTFOUND,
                         "create_characters.database = \"default\": no graph: build_graph first");

  /* Build options. */
  Animserver__GraphOptions o = ANIMSERVER__GRAPH_OPTIONS__INIT;
  o.window = 3.0f;
  build_fails(&o, ANIM_EINVAL, "build_graph.options.window = 3: at most 2 s");
  o = (Animserver__GraphOptions)ANIMSERVER__GRAPH_OPTIONS__INIT;
  o.threshold = NAN;
  build_fails(&o, ANIM_ENONFINITE, "build_graph.options.threshold is NaN");
  o = (Animserver__GraphOptions)ANIMSERVER__GRAPH_OPTIONS__INIT;
  o.matrix_size = 8;
  build_fails(&o, ANIM_EINVAL, "build_graph.options.matrix_size = 8: 0 (none) or 16..1024");
  o = (Animserver__GraphOptions)ANIMSERVER__GRAPH_OPTIONS__INIT;
  o.slide = (Animserver__GraphSlide)3; /* a value this server does not know */
  build_fails(&o, ANIM_EINVAL,
              "build_graph.options.slide = 3: GRAPH_SLIDE_AUTO (0), GRAPH_SLIDE_ON (1) or GRAPH_SLIDE_OFF (2)");
  o.slide = (Animserver__GraphSlide)-1;
  build_fails(&o, ANIM_EINVAL, "build_graph.options.slide = -1: GRAPH_SLIDE_AUTO (0)");
  o = (Animserver__GraphOptions)ANIMSERVER__GRAPH_OPTIONS__INIT;
  o.spacing = 500;
  build_fails(&o, ANIM_EINVAL, "build_graph.options.spacing = 500: at most half the window");
  o = (Animserver__GraphOptions)ANIMSERVER__GRAPH_OPTIONS__INIT;
  char *tags[] = {"walk", "nosuch"};
  o.n_tags = 2, o.tags = tags;
  build_fails(&o, ANIM_ENOTFOUND, "build_graph.options.tags[1] = \"nosuch\": database default has no such tag");
  o = (Animserver__GraphOptions)ANIMSERVER__GRAPH_OPTIONS__INIT;
  float weights[] = {1.0f, -1.0f};
  o.n_bone_weights = 2, o.bone_weights = weights;
  build_fails(&o, ANIM_EINVAL, "build_graph.options.bone_weights[1] = -1: weights are >= 0");
  weights[1] = 1.0f;
  build_fails(&o, ANIM_EDIMENSION, "build_graph.options.bone_weights: 2 weights, database default has");

  /* Query paths and options (checked before the graph is looked for). */
  float one[] = {1.0f, 1.0f}, same[] = {1.0f, 1.0f, 1.0f, 1.0f}, bad[] = {0.0f, 0.0f, NAN, 1.0f};
  query_init(&q, "default", one, 1, 0);
  anim_wire_expect_error(&wire, &q.request, ANIM_EINVAL, "query_graph.points: 1 points, a path has 2 to 4096");
  query_init(&q, "default", same, 2, 0);
  anim_wire_expect_error(&wire, &q.request, ANIM_EINVAL, "query_graph.points: every point is the same");
  query_init(&q, "default", bad, 2, 0);
  anim_wire_expect_error(&wire, &q.request, ANIM_ENONFINITE, "query_graph.points[1].x is NaN");
  query_init(&q, "default", line, 2, 0);
  q.options = (Animserver__PathOptions)ANIMSERVER__PATH_OPTIONS__INIT;
  q.options.horizon = 1.0f, q.options.keep = 2.0f;
  q.body.options = &q.options;
  anim_wire_expect_error(&wire, &q.request, ANIM_EINVAL, "query_graph.options.keep = 2: at most the horizon (1 s)");
  q.options.keep = 0.0f, q.options.max_expansions = 2000000;
  anim_wire_expect_error(&wire, &q.request, ANIM_EINVAL,
                         "query_graph.options.max_expansions = 2000000: at most 1000000");
  q.body.options = NULL, q.body.seconds = 1000.0f;
  anim_wire_expect_error(&wire, &q.request, ANIM_ELIMIT, "query_graph.seconds = 1000: at most 600 s");
  q.body.seconds = 10.0f, q.body.settle = 10.0f;
  anim_wire_expect_error(&wire, &q.request, ANIM_EINVAL, "query_graph.settle = 10: must be in [0, seconds)");

  /* Paths for characters: MODE_GRAPH only. */
  cb.mode = ANIMSERVER__CHARACTER_MODE__MODE_MOTION_MATCHING;
  m = anim_wire_ok(&wire, &r, TIMEOUT_MS);
  uint64_t mm = m->response->create_characters->characters[0];
  anim_wire_free(m);
  set_path(mm, line, 2, 0, ANIM_EUNSUPPORTED, "set_paths.paths[0].character = ");
  set_path(777, line, 2, 0, ANIM_ENOTFOUND, "set_paths.paths[0] = 777: no such character");
  set_path(mm, one, 1, 0, ANIM_EINVAL, "set_paths.paths[0].points: 1 points");
  Animserver__DestroyCharactersRequest db = ANIMSERVER__DESTROY_CHARACTERS_REQUEST__INIT;
  db.n_characters = 1, db.characters = &mm;
  r.body_case = ANIMSERVER__REQUEST__BODY_DESTROY_CHARACTERS, r.destroy_characters = &db;
  anim_wire_free(anim_wire_ok(&wire, &r, TIMEOUT_MS));
}

/* ---- a graph built on request, with progress ---- */

static void test_build(void **state) {
  if (!load_bandai()) return;
  uint64_t rss0, peak0, rss1, peak1;
  assert_int_equal(anim_test_server_memory(&server, &rss0, &peak0), 0);
  Animserver__GraphOptions o = ANIMSERVER__GRAPH_OPTIONS__INIT;
  o.matrix_size = 256;
  Animserver__BuildGraphRequest body;
  Animserver__Request r = build_request(&body, &o, "bandai");
  uint64_t build_id = anim_wire_send(&wire, &r);
  /* A second build waits its turn; describe while it builds: the progress grows. */
  Animserver__BuildGraphRequest again;
  Animserver__Request ar = build_request(&again, NULL, "bandai");
  uint64_t again_id = anim_wire_send(&wire, &ar);
  Animserver__DescribeGraphRequest db = ANIMSERVER__DESCRIBE_GRAPH_REQUEST__INIT;
  db.database = "bandai";
  Animserver__Request dr = ANIMSERVER__REQUEST__INIT;
  dr.body_case = ANIMSERVER__REQUEST__BODY_DESCRIBE_GRAPH, dr.describe_graph = &db;
  int building = 0, last_done = -1, distinct = 0, busy = 0;
  Animserver__ServerMessage *built = NULL;
  uint64_t describe_id = anim_wire_send(&wire, &dr);
  while (!built) {
    Animserver__ServerMessage *m = anim_wire_next(&wire, TIMEOUT_MS);
    assert_int_equal(m->kind_case, ANIMSERVER__SERVER_MESSAGE__KIND_RESPONSE);
    const Animserver__Response *a = m->response;
    if (a->id == build_id) {
      built = m;
      continue;
    }
    if (a->id == again_id) {
      assert_non_null(a->error);
      assert_int_equal(-(int)a->error->code, ANIM_EBUSY);
      assert_non_null(strstr(a->error->message, "build_graph.database = \"bandai\": its graph is being built"));
      busy = 1;
    } else {
      assert_int_equal(a->id, describe_id);
      const Animserver__GraphDescription *g = a->describe_graph->graph;
      if (g->status == ANIMSERVER__GRAPH_STATUS__GRAPH_BUILDING) {
        building++;
        assert_true((int)g->rows_done >= last_done && g->rows_done <= g->rows_total);
        assert_true(g->progress >= 0.0f && g->progress <= 1.0f);
        distinct += (int)g->rows_done != last_done;
        last_done = (int)g->rows_done;
      }
      nanosleep(&(struct timespec){0, 5000000}, NULL); /* and again, 5 ms on */
      describe_id = anim_wire_send(&wire, &dr);
    }
    anim_wire_free(m);
  }
  assert_true(busy);
  if (built->response->error) fail_msg("build_graph: %s", built->response->error->message);
  const Animserver__GraphDescription *g = built->response->build_graph->graph;
  assert_int_equal(g->status, ANIMSERVER__GRAPH_STATUS__GRAPH_READY);
  assert_true(g->ready && g->nodes > 100 && g->edges > g->nodes && g->transitions > 0);
  assert_true(g->components >= 1 && g->nodes <= g->nodes_built && g->candidates >= g->transitions);
  assert_true(g->rows_done == g->rows_total && g->frames > 0 && g->frames <= g->rows_total);
  assert_float_equal(g->options->window, 1.0f / 3.0f, 1e-6f);
  assert_int_equal(g->options->matrix_size, 256);
  /* Slide as resolved: the automatic choice is off on captured motion. */
  assert_int_equal(g->options->slide, ANIMSERVER__GRAPH_SLIDE__GRAPH_SLIDE_OFF);
  assert_int_equal(anim_test_server_memory(&server, &rss1, &peak1), 0);
  printf("graph build over the wire: %u frames, %u nodes, %u edges, %u transitions (%u candidates, %u components); "
         "%.2f s, graph %.2f MiB, strip scratch %.2f MiB, server peak RSS +%.1f MiB; %d progress reports while "
         "building (%d distinct)\n",
         g->frames, g->nodes, g->edges, g->transitions, g->candidates, g->components, g->build_seconds,
         (double)g->memory_bytes / 1048576.0, (double)g->strip_memory_bytes / 1048576.0,
         (double)(peak1 - peak0) / 1048576.0, building, distinct);
  assert_true(building >= 2 && distinct >= 2);
  anim_wire_free(built);

  /* The transitions and the distance picture: every transition's cell is at most its distance. */
  Animserver__ServerMessage *m = describe("bandai", 1, 1);
  g = m->response->describe_graph->graph;
  assert_int_equal(g->n_transition_list, g->transitions);
  assert_int_equal(g->matrix_size, 256);
  assert_int_equal(g->n_matrix, 256 * 256);
  for (size_t t = 0; t < g->n_transition_list; t++) {
    const Animserver__GraphTransition *tr = g->transition_list[t];
    assert_true(tr->distance < g->options->threshold);
    size_t u = (size_t)tr->from_frame * 256 / (size_t)bandai.nframes,
           v = (size_t)tr->to_frame * 256 / (size_t)bandai.nframes;
    assert_true(g->matrix[u * 256 + v] <= tr->distance && g->matrix[v * 256 + u] <= tr->distance);
  }
  anim_wire_free(m);
}

/* ---- queries ---- */

static void check_steps(const Animserver__QueryGraphResponse *q) {
  assert_true(q->n_steps > 10);
  for (size_t i = 1; i < q->n_steps; i++) {
    const Animserver__GraphStep *a = q->steps[i - 1], *b = q->steps[i];
    assert_true(b->time > a->time && b->first_frame <= b->last_frame + 1);
    if (!b->jump) assert_int_equal(b->first_frame, a->last_frame + 1); /* plays on in its clip */
  }
}

static void test_query(void **state) {
  if (!load_bandai()) return;
  float line[] = {0.0f, 0.0f, 0.0f, 20.0f}, ring[2 * CIRCLE_SIDES];
  circle(ring);
  query_t q;
  query_init(&q, "bandai", line, 2, 0);
  query_start(&q, 0.0f);
  q.body.settle = SETTLE_SECONDS;
  Animserver__ServerMessage *m = anim_wire_ok(&wire, &q.request, TIMEOUT_MS);
  const Animserver__QueryGraphResponse *r = m->response->query_graph;
  printf("query, line of 20 m: %.1f s, %.1f m of path, error mean %.3f m, worst %.3f m at %.1f s; %u plans (%u cut "
         "short), %.2f ms mean, %.2f ms worst; %zu edges\n",
         r->seconds, r->arc, r->error_mean, r->error_max, r->error_max_time, r->plans, r->plans_exhausted,
         r->plan_ms_mean, r->plan_ms_max, r->n_steps);
  assert_true(r->arc > 19.0f && r->seconds < 30.0f); /* it reached the end */
  assert_true(r->error_mean < MAX_PATH_MEAN_ERROR && r->error_max < MAX_PATH_ERROR);
  assert_true(r->plans > 5);
  check_steps(r);
  assert_int_equal(r->n_roots, 0);
  anim_wire_free(m);

  query_init(&q, "bandai", ring, CIRCLE_SIDES, 1);
  query_start(&q, (float)M_PI / 2);
  q.body.settle = SETTLE_SECONDS, q.body.roots = 1;
  m = anim_wire_ok(&wire, &q.request, TIMEOUT_MS);
  r = m->response->query_graph;
  printf("query, circle of radius %.0f m: %.1f s, %.1f m of path, error mean %.3f m, worst %.3f m at %.1f s; "
         "%u plans (%u cut short), %.2f ms mean, %.2f ms worst; %zu edges\n",
         CIRCLE_RADIUS, r->seconds, r->arc, r->error_mean, r->error_max, r->error_max_time, r->plans,
         r->plans_exhausted, r->plan_ms_mean, r->plan_ms_max, r->n_steps);
  float lap = 2.0f * (float)M_PI * CIRCLE_RADIUS;
  assert_true(r->arc >= lap * 0.98f); /* one lap */
  assert_true(r->error_mean < MAX_PATH_MEAN_ERROR && r->error_max < MAX_PATH_ERROR);
  check_steps(r);
  /* The roots it reports are as far from the circle as it says. */
  assert_true(r->n_roots > 100);
  float worst = 0.0f;
  for (size_t i = (size_t)(SETTLE_SECONDS * bandai.frame_rate); i < r->n_roots; i++)
    worst = fmaxf(worst, polyline_distance(ring, CIRCLE_SIDES, 1, r->roots[i]->x, r->roots[i]->z));
  assert_float_equal(worst, r->error_max, 1e-3f);
  anim_wire_free(m);
}

/* ---- characters following a line and a circle ---- */

typedef struct {
  float mean, worst, velocity_jump, travelled;
  int frames, transitions;
} follow_t;

static void test_follow(void **state) {
  if (!load_bandai()) return;
  float line[] = {0.0f, 0.0f, 0.0f, 100.0f}, ring[2 * CIRCLE_SIDES];
  circle(ring);
  uint64_t ids[2] = {create_graph_character(0.0f), create_graph_character((float)M_PI / 2)};
  set_path(ids[0], line, 2, 0, 0, NULL);
  set_path(ids[1], ring, CIRCLE_SIDES, 1, 0, NULL);
  /* Goals through set_inputs; no stick. */
  Animserver__StickInput stick = ANIMSERVER__STICK_INPUT__INIT;
  Animserver__CharacterInput input = ANIMSERVER__CHARACTER_INPUT__INIT, *pi = &input;
  input.character = ids[0], input.input_case = ANIMSERVER__CHARACTER_INPUT__INPUT_STICK, input.stick = &stick;
  Animserver__SetInputsRequest ib = ANIMSERVER__SET_INPUTS_REQUEST__INIT;
  ib.n_inputs = 1, ib.inputs = &pi;
  Animserver__Request r = ANIMSERVER__REQUEST__INIT;
  r.body_case = ANIMSERVER__REQUEST__BODY_SET_INPUTS, r.set_inputs = &ib;
  anim_wire_expect_error(&wire, &r, ANIM_EUNSUPPORTED, "set_inputs.inputs[0]: character");

  Animserver__SubscribeRequest sb = ANIMSERVER__SUBSCRIBE_REQUEST__INIT;
  sb.n_characters = 2, sb.characters = ids, sb.global_positions = 1;
  r.body_case = ANIMSERVER__REQUEST__BODY_SUBSCRIBE, r.subscribe = &sb;
  Animserver__ServerMessage *m = anim_wire_ok(&wire, &r, TIMEOUT_MS);
  uint64_t subscription = m->response->subscribe->subscription;
  anim_wire_free(m);

  FILE *record = anim_stream_record_open("circle.stream", bandai.nbones, bandai.skeleton.parents);
  follow_t f[2];
  memset(f, 0, sizeof f);
  size_t nb = (size_t)bandai.nbones;
  float *previous = calloc(2 * nb * 3, sizeof(float)), *velocity = calloc(2 * nb * 3, sizeof(float));
  double time = 0.0;
  for (int frame = 0; time < FOLLOW_SECONDS;) {
    m = anim_wire_next(&wire, TIMEOUT_MS);
    if (m->kind_case != ANIMSERVER__SERVER_MESSAGE__KIND_STREAM || m->stream->subscription_id != subscription) {
      anim_wire_free(m);
      continue;
    }
    float dt = m->stream->dt;
    assert_int_equal(m->stream->n_poses, 2);
    for (int k = 0; k < 2; k++) {
      const Animserver__CharacterPose *p = m->stream->poses[k];
      assert_int_equal(p->character, ids[k]);
      assert_int_equal(p->n_state_path, 0);
      assert_int_equal(p->n_global_positions, 3 * nb);
      float x = p->positions[0], z = p->positions[2];
      float *prev = previous + (size_t)k * nb * 3, *vel = velocity + (size_t)k * nb * 3;
      if (frame > 0) f[k].travelled += hypotf(x - prev[0], z - prev[2]);
      /* Inertialized jumps: no joint's velocity jumps from one tick to the next. */
      for (size_t i = 3; i < 3 * nb; i += 3) {
        float v[3];
        for (int c = 0; c < 3; c++) v[c] = (p->global_positions[i + (size_t)c] - prev[i + (size_t)c]) / dt;
        if (frame >= 2) {
          float jump = sqrtf((v[0] - vel[i]) * (v[0] - vel[i]) + (v[1] - vel[i + 1]) * (v[1] - vel[i + 1]) +
                             (v[2] - vel[i + 2]) * (v[2] - vel[i + 2]));
          f[k].velocity_jump = fmaxf(f[k].velocity_jump, jump);
        }
        memcpy(vel + i, v, sizeof v);
      }
      memcpy(prev + 3, p->global_positions + 3, (3 * nb - 3) * sizeof(float));
      prev[0] = x, prev[2] = z;
      f[k].transitions += p->transition;
      if (time >= SETTLE_SECONDS) {
        float d = k == 0 ? polyline_distance(line, 2, 0, x, z) : polyline_distance(ring, CIRCLE_SIDES, 1, x, z);
        f[k].mean += d, f[k].worst = fmaxf(f[k].worst, d), f[k].frames++;
      }
    }
    anim_stream_record_frame(record, time, "-", m->stream->poses[1]);
    time += dt;
    frame++;
    anim_wire_free(m);
  }
  anim_stream_record_close(record);
  free(previous), free(velocity);
  const char *what[] = {"line", "circle"};
  for (int k = 0; k < 2; k++) {
    f[k].mean /= (float)(f[k].frames ? f[k].frames : 1);
    printf("graph character over the wire, %s: error mean %.3f m, worst %.3f m (after %.0f s) over %d frames; "
           "%.1f m travelled; %d inertialized jumps; largest joint velocity change %.2f m/s in a tick\n",
           what[k], f[k].mean, f[k].worst, SETTLE_SECONDS, f[k].frames, f[k].travelled, f[k].transitions,
           f[k].velocity_jump);
    if (f[k].mean > MAX_PATH_MEAN_ERROR || f[k].worst > MAX_PATH_ERROR)
      fail_msg("%s: %.3f m from the path on average, %.3f at worst", what[k], f[k].mean, f[k].worst);
    assert_true(f[k].velocity_jump < MAX_VELOCITY_JUMP);
    assert_true(f[k].transitions > 0 && f[k].travelled > 0.6 * FOLLOW_SECONDS);
  }
  /* character_state: what it follows, and a goal from set_inputs. */
  Animserver__GoalInput goal = ANIMSERVER__GOAL_INPUT__INIT;
  goal.x = 5.0f, goal.z = 5.0f;
  input.character = ids[1], input.input_case = ANIMSERVER__CHARACTER_INPUT__INPUT_GOAL, input.goal = &goal;
  r.body_case = ANIMSERVER__REQUEST__BODY_SET_INPUTS, r.set_inputs = &ib;
  anim_wire_free(anim_wire_ok(&wire, &r, TIMEOUT_MS));
  Animserver__CharacterStateRequest cs = ANIMSERVER__CHARACTER_STATE_REQUEST__INIT;
  r.body_case = ANIMSERVER__REQUEST__BODY_CHARACTER_STATE, r.character_state = &cs;
  for (int k = 0; k < 2; k++) {
    cs.character = ids[k];
    m = anim_wire_ok(&wire, &r, TIMEOUT_MS);
    const Animserver__CharacterStateResponse *st = m->response->character_state;
    assert_int_equal(st->mode, ANIMSERVER__CHARACTER_MODE__MODE_GRAPH);
    assert_string_equal(st->follow, k == 0 ? "path" : "goal");
    assert_true(st->plans > 10 && st->transitions > 0);
    anim_wire_free(m);
  }
  /* The graph counts its characters; a rebuild replaces it without pulling it from under them. */
  m = describe("bandai", 0, 0);
  assert_int_equal(m->response->describe_graph->graph->characters, 2);
  anim_wire_free(m);
  Animserver__GraphOptions o = ANIMSERVER__GRAPH_OPTIONS__INIT;
  o.threshold = 0.06f;
  Animserver__BuildGraphRequest body;
  Animserver__Request br = build_request(&body, &o, "bandai");
  m = anim_wire_ok(&wire, &br, BUILD_TIMEOUT_MS);
  assert_float_equal(m->response->build_graph->graph->options->threshold, 0.06f, 1e-6f);
  anim_wire_free(m);
  for (int i = 0; i < 30; i++) anim_wire_free(anim_wire_next(&wire, TIMEOUT_MS)); /* they still stream */
  /* Per build (issue 30): the two run on the old graph, so the new one has
   * none; a character created now runs on the new one and is counted. */
  m = describe("bandai", 0, 0);
  assert_int_equal(m->response->describe_graph->graph->characters, 0);
  anim_wire_free(m);
  uint64_t all[3] = {ids[0], ids[1], create_graph_character(0.0f)};
  m = describe("bandai", 0, 0);
  assert_int_equal(m->response->describe_graph->graph->characters, 1);
  anim_wire_free(m);
  Animserver__DestroyCharactersRequest db = ANIMSERVER__DESTROY_CHARACTERS_REQUEST__INIT;
  db.n_characters = 3, db.characters = all;
  r.body_case = ANIMSERVER__REQUEST__BODY_DESTROY_CHARACTERS, r.destroy_characters = &db;
  anim_wire_free(anim_wire_ok(&wire, &r, TIMEOUT_MS));
}

/* ---- the end of an open path (issue 30) ---- */

static Animserver__ServerMessage *character_state(uint64_t id) {
  Animserver__CharacterStateRequest cs = ANIMSERVER__CHARACTER_STATE_REQUEST__INIT;
  cs.character = id;
  Animserver__Request r = ANIMSERVER__REQUEST__INIT;
  r.body_case = ANIMSERVER__REQUEST__BODY_CHARACTER_STATE, r.character_state = &cs;
  return anim_wire_ok(&wire, &r, TIMEOUT_MS);
}

/* An L of 3 + 3 m on the default database (it has idles and walk_stop),
 * from its idle node facing +Z: the character reaches the end, says
 * arrived and stands there (it walked on, 64 m past the end in 54 s,
 * before). */
static void test_arrive(void **state) {
  Animserver__BuildGraphRequest body;
  Animserver__Request br = build_request(&body, NULL, "default");
  anim_wire_free(anim_wire_ok(&wire, &br, BUILD_TIMEOUT_MS));
  Animserver__FrameIndex frame = ANIMSERVER__FRAME_INDEX__INIT; /* frame 0: the idle clip */
  Animserver__Placement placement = ANIMSERVER__PLACEMENT__INIT, *pp = &placement;
  placement.start_frame = &frame;
  Animserver__CreateCharactersRequest cb = ANIMSERVER__CREATE_CHARACTERS_REQUEST__INIT;
  cb.database = "default", cb.mode = ANIMSERVER__CHARACTER_MODE__MODE_GRAPH;
  cb.n_placements = 1, cb.placements = &pp;
  Animserver__Request r = ANIMSERVER__REQUEST__INIT;
  r.body_case = ANIMSERVER__REQUEST__BODY_CREATE_CHARACTERS, r.create_characters = &cb;
  Animserver__ServerMessage *m = anim_wire_ok(&wire, &r, TIMEOUT_MS);
  uint64_t id = m->response->create_characters->characters[0];
  anim_wire_free(m);
  const float l[] = {0.0f, 0.0f, 0.0f, 3.0f, 3.0f, 3.0f}, end_x = 3.0f, end_z = 3.0f;
  set_path(id, l, 3, 0, 0, NULL);
  /* The L takes about 6 s at the walk's pace from a standing start
   * (follow_limits.h); then 4 s standing. */
  const struct timespec tenth = {0, 100000000};
  double arrived_at = -1.0, waited = 0.0, worst = 0.0, x0 = 0.0, z0 = 0.0;
  uint64_t plans0 = 0, edges0 = 0; /* a second after arriving */
  for (; waited < 30.0 && (arrived_at < 0.0 || waited < arrived_at + 4.0); waited += 0.1) {
    nanosleep(&tenth, NULL);
    m = character_state(id);
    const Animserver__CharacterStateResponse *st = m->response->character_state;
    assert_string_equal(st->follow, "path");
    double x = st->position->x, z = st->position->z;
    if (st->arrived && arrived_at < 0.0) arrived_at = waited, x0 = x, z0 = z;
    if (arrived_at >= 0.0) {
      assert_true(st->arrived); /* it stays arrived */
      worst = fmax(worst, hypot(x - end_x, z - end_z));
      if (!plans0 && waited >= arrived_at + 1.0) plans0 = st->plans, edges0 = st->expansions;
    }
    if (waited + 0.1 >= arrived_at + 4.0 && arrived_at >= 0.0)
      printf("graph character at an L's end: arrived %.1f s after set_paths, then 4 s: %.3f m from the end at "
             "worst, %.3f m from where it arrived\n",
             arrived_at, worst, hypot(x - x0, z - z0));
    if (arrived_at >= 0.0 && waited + 0.1 >= arrived_at + 4.0) {
      /* It stands: hardly moved since it arrived. */
      assert_true(hypot(x - x0, z - z0) < 0.3);
      /* And standing costs little: its plans (fewer than two a second: the
       * idle's edges are long) keep the walk that stands (graph_path.h,
       * "The end"). */
      uint64_t plans = st->plans - plans0, edges = st->expansions - edges0;
      printf("standing: %llu plans, %llu edges tried\n", (unsigned long long)plans, (unsigned long long)edges);
      assert_true(plans >= 2 && edges <= 100 * plans); /* following: about 2000 a plan */
    }
    anim_wire_free(m);
  }
  if (arrived_at < 0.0) fail_msg("never arrived at the L's end in 30 s");
  assert_true(worst <= 0.3 + 0.3); /* ANIM_PATH_ARRIVE_DISTANCE at arrival, and the stop's drift */
  Animserver__DestroyCharactersRequest db = ANIMSERVER__DESTROY_CHARACTERS_REQUEST__INIT;
  db.n_characters = 1, db.characters = &id;
  r.body_case = ANIMSERVER__REQUEST__BODY_DESTROY_CHARACTERS, r.destroy_characters = &db;
  anim_wire_free(anim_wire_ok(&wire, &r, TIMEOUT_MS));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_invalid),
      cmocka_unit_test(test_build),
      cmocka_unit_test(test_query),
      cmocka_unit_test(test_follow),
      cmocka_unit_test(test_arrive),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
