/*
 * test_motion_graph.c: building motion graphs on real mocap (Bandai Namco)
 * and the procedural database.
 *
 * Invalid options and inputs first (the planner's and the character's
 * too). Then the distance: zero on the diagonal, and invariant to a yaw and
 * a ground translation applied to one clip, the recovered angle and
 * translation being the applied ones; a clip joined to a rotated copy of
 * itself gets transitions exactly at the matching frames; strips of any
 * height give the same transitions, whatever order they run in, in memory
 * linear in the frames; every row the build reports agrees with the
 * one-pair distance. Then the graph: after pruning every node reaches every
 * other (checked by searches forward and backward, independent of the
 * pruning's Tarjan), edges play the frames they say; random walks never
 * stop; slide's automatic choice. Path synthesis: test_graph_path.c; the
 * character following a path: test_graph_character.c.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "anim_error.h"
#include "graph/graph_character.h"
#include "graph/graph_path.h"
#include "offline/import.h"
#include "graph/motion_graph.h"
#include "offline/procgen.h"
#include "graph_fixture.h"
#include "shared_data.h"
#include "procgen_db.h"

/* Distances of a window with itself, and with its rotated copy, m RMS: the
 * sums are in double, what remains is float rounding of the database's
 * positions (measured 1.9e-7 and 3.7e-7 m; angle 2.4e-7 rad, translation
 * 1.4e-6 m). */
#define MAX_SELF_DISTANCE 1e-4f
#define MAX_COPY_DISTANCE 1e-3f
/* Recovered yaw (rad) and translation (m) of the copy. */
#define MAX_ANGLE_ERROR 1e-3f
#define MAX_TRANSLATION_ERROR 2e-3f

/* The Bandai Namco graph, built by the first test that needs it (graph_fixture.h). */
static anim_database_t *bandai;
static anim_motion_graph_t *graph;
static int bandai_graph(void) { return anim_test_bandai_graph(&bandai, &graph); }

/* ---- invalid input ----------------------------------------------------------------------- */

static void test_invalid(void **state) {
  anim_database_t db;
  char err[256];
  anim_test_procgen(&db);
  anim_graph_options_t o;
  anim_graph_options_default(&o);
  assert_int_equal(anim_graph_options_validate(&o, &db), 0);
  o.window = 0.0f;
  assert_int_equal(anim_graph_options_validate(&o, &db), ANIM_EINVAL);
  o.window = 0.01f; /* less than a frame either side */
  assert_int_equal(anim_graph_options_validate(&o, &db), ANIM_EINVAL);
  o.window = NAN;
  assert_int_equal(anim_graph_options_validate(&o, &db), ANIM_ENONFINITE);
  anim_graph_options_default(&o);
  o.threshold = 0.0f;
  assert_int_equal(anim_graph_options_validate(&o, &db), ANIM_EINVAL);
  anim_graph_options_default(&o);
  o.spacing = 100;
  assert_int_equal(anim_graph_options_validate(&o, &db), ANIM_EINVAL);
  anim_graph_options_default(&o);
  o.min_gap = -1;
  assert_int_equal(anim_graph_options_validate(&o, &db), ANIM_EINVAL);
  anim_graph_options_default(&o);
  o.slide = 2;
  assert_int_equal(anim_graph_options_validate(&o, &db), ANIM_EINVAL);
  float weights[ANIM_MAX_BONES] = {0};
  anim_graph_options_default(&o);
  o.bone_weights = weights; /* all zero */
  assert_int_equal(anim_graph_options_validate(&o, &db), ANIM_EINVAL);
  weights[3] = -1.0f;
  assert_int_equal(anim_graph_options_validate(&o, &db), ANIM_EINVAL);
  weights[3] = NAN;
  assert_int_equal(anim_graph_options_validate(&o, &db), ANIM_ENONFINITE);
  /* A tag no range has: nothing to compare. */
  anim_graph_options_default(&o);
  o.tag_mask = 1u << 31;
  assert_null(anim_graph_builder_create(&db, &o, err, sizeof err));
  assert_non_null(strstr(err, "fewer than two frames"));
  /* Strips out of range; finishing before every strip ran. */
  anim_graph_options_default(&o);
  o.tag_mask = 1u << anim_database_find_tag(&db, "idle");
  anim_graph_builder_t *b = anim_graph_builder_create(&db, &o, err, sizeof err);
  assert_non_null(b);
  assert_int_equal(anim_graph_builder_run(b, -1), ANIM_ERANGE);
  assert_int_equal(anim_graph_builder_run(b, anim_graph_builder_strips(b)), ANIM_ERANGE);
  assert_null(anim_graph_builder_finish(b, err, sizeof err));
  assert_non_null(strstr(err, "not been run"));
  anim_graph_builder_free(b);
  /* One pair: frames without a whole window, or outside the database. */
  float d;
  assert_int_equal(anim_graph_distance(&db, NULL, 0, 100, &d, NULL, NULL, NULL), ANIM_ERANGE);
  assert_int_equal(anim_graph_distance(&db, NULL, 100, db.nframes, &d, NULL, NULL, NULL), ANIM_EINVAL);
  anim_database_free(&db);
  /* Planner and character. */
  if (!bandai_graph()) return;
  anim_path_planner_t p;
  anim_path_options_t po;
  anim_path_options_default(&po);
  po.keep = 3.0f; /* more than the horizon */
  assert_int_equal(anim_path_planner_init(&p, graph, bandai, &po), ANIM_EINVAL);
  anim_path_options_default(&po);
  po.horizon = INFINITY;
  assert_int_equal(anim_path_planner_init(&p, graph, bandai, &po), ANIM_ENONFINITE);
  anim_path_options_default(&po);
  po.speed = NAN;
  assert_int_equal(anim_path_planner_init(&p, graph, bandai, &po), ANIM_ENONFINITE);
  po.speed = -1.0f;
  assert_int_equal(anim_path_planner_init(&p, graph, bandai, &po), ANIM_EINVAL);
  anim_path_options_default(&po);
  po.progress = -1.0f;
  assert_int_equal(anim_path_planner_init(&p, graph, bandai, &po), ANIM_EINVAL);
  anim_path_options_default(&po);
  po.warm = 2;
  assert_int_equal(anim_path_planner_init(&p, graph, bandai, &po), ANIM_EINVAL);
  anim_path_options_default(&po);
  po.bound = -1;
  assert_int_equal(anim_path_planner_init(&p, graph, bandai, &po), ANIM_EINVAL);
  anim_path_options_default(&po);
  po.togo = 2;
  assert_int_equal(anim_path_planner_init(&p, graph, bandai, &po), ANIM_EINVAL);
  anim_path_options_default(&po);
  po.memory = -1.0f;
  assert_int_equal(anim_path_planner_init(&p, graph, bandai, &po), ANIM_EINVAL);
  po.memory = NAN;
  assert_int_equal(anim_path_planner_init(&p, graph, bandai, &po), ANIM_ENONFINITE);
  /* A given speed is taken as it is. */
  anim_path_options_default(&po);
  po.speed = 0.7f;
  assert_int_equal(anim_path_planner_init(&p, graph, bandai, &po), 0);
  assert_float_equal(p.speed, 0.7f, 0.0f);
  anim_path_planner_free(&p);
  anim_database_t other = *bandai;
  other.version ^= 1;
  assert_int_equal(anim_path_planner_init(&p, graph, &other, NULL), ANIM_EINVAL);
  assert_int_equal(anim_path_planner_init(&p, graph, bandai, NULL), 0);
  anim_ground_map_t map = {0.0f, 0.0f, 0.0f};
  assert_int_equal(anim_path_planner_plan(&p, 0, map, 0.0f), ANIM_EINVAL); /* no path yet */
  float one[] = {0.0f, 0.0f}, same[] = {1.0f, 1.0f, 1.0f, 1.0f}, bad[] = {0.0f, 0.0f, NAN, 1.0f};
  anim_path_t path = {one, 1, 0};
  assert_int_equal(anim_path_planner_set_path(&p, &path), ANIM_EINVAL);
  path = (anim_path_t){same, 2, 0};
  assert_int_equal(anim_path_planner_set_path(&p, &path), ANIM_EINVAL);
  path = (anim_path_t){bad, 2, 0};
  assert_int_equal(anim_path_planner_set_path(&p, &path), ANIM_ENONFINITE);
  float line[] = {0.0f, 0.0f, 0.0f, 10.0f};
  path = (anim_path_t){line, 2, 0};
  assert_int_equal(anim_path_planner_set_path(&p, &path), 0);
  assert_int_equal(anim_path_planner_plan(&p, graph->nnodes, map, 0.0f), ANIM_EINVAL);
  map.x = NAN;
  assert_int_equal(anim_path_planner_plan(&p, 0, map, 0.0f), ANIM_EINVAL);
  anim_path_planner_free(&p);
  anim_graph_character_t c;
  assert_int_equal(anim_graph_character_init(&c, graph, bandai, NULL, 0.0f, vec3_zero(), 0.0f, 0), ANIM_EINVAL);
  assert_int_equal(anim_graph_character_init(&c, graph, bandai, NULL, 0.1f, vec3_zero(), 0.0f, -1), ANIM_EINVAL);
  assert_int_equal(anim_graph_character_init(&c, graph, bandai, NULL, 0.1f, vec3_zero(), NAN, 0), ANIM_ENONFINITE);
  assert_int_equal(anim_graph_character_init(&c, graph, bandai, NULL, 0.1f, vec3_zero(), 0.0f, 0), 0);
  assert_int_equal(anim_graph_character_tick(&c, 0.0f), ANIM_EINVAL);
  assert_int_equal(anim_graph_character_set_goal(&c, NAN, 0.0f), ANIM_ENONFINITE);
  anim_graph_character_free(&c);
}

static int cancel_at_half(int done, int total, void *data) {
  (*(int *)data)++;
  return done * 2 >= total;
}

static void test_cancel(void **state) {
  anim_database_t db;
  char err[256];
  anim_test_procgen(&db);
  anim_graph_options_t o;
  anim_graph_options_default(&o);
  int calls = 0;
  o.strip_rows = 512, o.progress = cancel_at_half, o.data = &calls;
  assert_null(anim_motion_graph_build(&db, &o, err, sizeof err));
  assert_string_equal(err, "cancelled");
  assert_true(calls >= 2);
  anim_database_free(&db);
}

/* ---- distance -------------------------------------------------------------------------------- */

/* A Bandai clip and a copy of it turned by angle about +Y and moved by
 * (tx, tz): its top bone (joint_Root, above everything) carries the map. */
static int rotated_copy_database(anim_database_t *out_db, float angle, float tx, float tz) {
  char path[1024], err[256];
  if (!anim_test_shared_path(path, sizeof path, "data/mocap/bandai-namco/dataset-1_walk-left_normal_001.bvh")) return 0;
  anim_clip_list_t list = {NULL, 0, 0};
  anim_bvh_options_t bo = {0.01f};
  assert_int_equal(anim_import_path(&list, path, &bo, err, sizeof err), 0);
  anim_clip_t clips[2];
  clips[0] = list.clips[0];
  const anim_clip_t *a = &clips[0];
  assert_int_equal(anim_clip_alloc(&clips[1], &a->skeleton, a->nframes, a->frame_time), 0);
  snprintf(clips[1].name, sizeof clips[1].name, "%.50s_turned", a->name);
  size_t n = (size_t)a->nframes * (size_t)a->skeleton.nbones;
  memcpy(clips[1].local_positions, a->local_positions, n * sizeof(vec3));
  memcpy(clips[1].local_rotations, a->local_rotations, n * sizeof(quat));
  quat yaw = quat_from_angle_axis(angle, vec3_make(0.0f, 1.0f, 0.0f));
  for (int f = 0; f < a->nframes; f++) {
    size_t root = (size_t)f * (size_t)a->skeleton.nbones;
    vec3 p = quat_mul_vec3(yaw, clips[1].local_positions[root]);
    clips[1].local_positions[root] = vec3_make(p.x + tx, p.y, p.z + tz);
    clips[1].local_rotations[root] = quat_mul(yaw, clips[1].local_rotations[root]);
  }
  anim_build_options_t o;
  anim_build_options_default(&o);
  assert_int_equal(anim_database_build(out_db, "turned", clips, 2, &o, err, sizeof err), 0);
  anim_clip_free(&clips[1]);
  anim_clip_list_free(&list);
  return 1;
}

static float wrap_angle(float a) { return atan2f(sinf(a), cosf(a)); }

static void test_distance_invariance(void **state) {
  const float angle = 1.1f, tx = 3.0f, tz = -2.0f;
  anim_database_t db;
  if (!rotated_copy_database(&db, angle, tx, tz)) return;
  assert_int_equal(db.nranges, 2);
  int n = db.ranges[0].stop - db.ranges[0].start, copy = db.ranges[1].start;
  float worst_self = 0.0f, worst_copy = 0.0f, worst_angle = 0.0f, worst_move = 0.0f, worst_pair = 0.0f;
  int worst_frame = -1;
  for (int i = 20; i < n - 20; i += 7) {
    float d, a, dx, dz;
    assert_int_equal(anim_graph_distance(&db, NULL, i, i, &d, &a, &dx, &dz), 0);
    if (d > worst_self) worst_self = d, worst_frame = i;
    /* i against its copy: the copy's window maps back by the inverse turn. */
    assert_int_equal(anim_graph_distance(&db, NULL, i, copy + i, &d, &a, &dx, &dz), 0);
    worst_copy = fmaxf(worst_copy, d);
    worst_angle = fmaxf(worst_angle, fabsf(wrap_angle(a + angle)));
    /* q = R p + t, so p = R^-1 q - R^-1 t. */
    float c = cosf(-angle), s = sinf(-angle);
    float ex = -(c * tx + s * tz), ez = -(-s * tx + c * tz);
    worst_move = fmaxf(worst_move, hypotf(dx - ex, dz - ez));
    /* And the other way round: the applied turn itself. */
    assert_int_equal(anim_graph_distance(&db, NULL, copy + i, i, &d, &a, &dx, &dz), 0);
    worst_angle = fmaxf(worst_angle, fabsf(wrap_angle(a - angle)));
    worst_move = fmaxf(worst_move, hypotf(dx - tx, dz - tz));
    /* Any pair: the same distance with either clip. */
    int j = (i * 37 + 11) % (n - 40) + 20;
    float d1, d2;
    assert_int_equal(anim_graph_distance(&db, NULL, i, j, &d1, NULL, NULL, NULL), 0);
    assert_int_equal(anim_graph_distance(&db, NULL, i, copy + j, &d2, NULL, NULL, NULL), 0);
    worst_pair = fmaxf(worst_pair, fabsf(d1 - d2));
  }
  printf("self %.2g m (frame %d), copy %.2g m, angle %.2g rad, translation %.2g m, pairs %.2g m\n", worst_self,
         worst_frame, worst_copy, worst_angle, worst_move, worst_pair);
  assert_true(worst_self < MAX_SELF_DISTANCE);
  assert_true(worst_copy < MAX_COPY_DISTANCE);
  assert_true(worst_angle < MAX_ANGLE_ERROR);
  assert_true(worst_move < MAX_TRANSLATION_ERROR);
  assert_true(worst_pair < MAX_COPY_DISTANCE);
  /* A frame is far from a frame half a step away: the distance is not flat. */
  float d;
  assert_int_equal(anim_graph_distance(&db, NULL, n / 2, n / 2 + 15, &d, NULL, NULL, NULL), 0);
  assert_true(d > 0.05f);

  /* The graph of the clip and its copy: the valley of zeros between a
   * frame and its copy gives transitions at the matching frames, with the
   * copy's turn; any other transition between the two is a real one (the
   * clip's own similar poses), measurably apart. */
  char err[256];
  anim_graph_options_t o;
  anim_graph_options_default(&o);
  o.prune = 0;
  anim_motion_graph_t *g = anim_motion_graph_build(&db, &o, err, sizeof err);
  assert_non_null(g);
  int across = 0;
  for (int t = 0; t < g->ntransitions; t++) {
    const anim_graph_transition_t *tr = &g->transitions[t];
    int rf = anim_database_range_of(&db, tr->from), rt = anim_database_range_of(&db, tr->to);
    if (rf == rt) continue;
    int expected = rf == 0 ? tr->from + copy : tr->from - copy;
    if (tr->to != expected) {
      if (tr->distance < 10.0f * MAX_COPY_DISTANCE)
        fail_msg("transition %d -> %d at %.2g m, not the matching frame %d", tr->from, tr->to, tr->distance, expected);
      continue;
    }
    across++;
    assert_true(tr->distance < MAX_COPY_DISTANCE);
    if (fabsf(wrap_angle(tr->angle - (rf == 0 ? -angle : angle))) > MAX_ANGLE_ERROR)
      fail_msg("transition %d -> %d turns %.4f rad, the copy %.4f", tr->from, tr->to, tr->angle,
               rf == 0 ? -angle : angle);
  }
  assert_true(across >= 2);
  anim_motion_graph_free(g);
  anim_database_free(&db);
}

/* ---- strips -------------------------------------------------------------------------------------- */

typedef struct {
  const anim_database_t *db;
  const int *frames;
  int checked;
  float worst;
} row_check_t;

static void check_row(int row, const float *distances, int first, int count, void *data) {
  row_check_t *rc = data;
  /* A few entries a row against the one-pair distance. */
  for (int col = first + (row % 97); col < count; col += 997) {
    if (!isfinite(distances[col])) continue;
    float d;
    if (anim_graph_distance(rc->db, NULL, rc->frames[row], rc->frames[col], &d, NULL, NULL, NULL) != 0) continue;
    rc->worst = fmaxf(rc->worst, fabsf(d - distances[col]));
    rc->checked++;
  }
}

static int same_transitions(const anim_motion_graph_t *a, const anim_motion_graph_t *b) {
  if (a->ntransitions != b->ntransitions || a->candidates != b->candidates) return 0;
  for (int t = 0; t < a->ntransitions; t++)
    if (a->transitions[t].from != b->transitions[t].from || a->transitions[t].to != b->transitions[t].to) return 0;
  return 1;
}

static void test_strips(void **state) {
  if (!bandai_graph()) return;
  char err[256];
  /* Frames compared, in the builder's order: every frame with a window. */
  anim_graph_options_t o;
  anim_graph_options_default(&o);
  int *frames = malloc((size_t)bandai->nframes * sizeof(int)), k = 0;
  for (int r = 0; r < bandai->nranges; r++)
    for (int f = bandai->ranges[r].start; f < bandai->ranges[r].stop; f++) frames[k++] = f;
  row_check_t rc = {bandai, frames, 0, 0.0f};
  o.strip_rows = 37, o.row = check_row, o.data = &rc;
  anim_motion_graph_t *small = anim_motion_graph_build(bandai, &o, err, sizeof err);
  assert_non_null(small);
  assert_true(same_transitions(small, graph));
  assert_true(rc.checked > 1000);
  printf("rows against one-pair distances: %d entries, worst difference %.2g m\n", rc.checked, rc.worst);
  assert_true(rc.worst < 1e-4f);
  /* One strip for everything, and strips run backwards (as threads may). */
  anim_graph_options_default(&o);
  o.strip_rows = 1 << 20;
  anim_motion_graph_t *one = anim_motion_graph_build(bandai, &o, err, sizeof err);
  assert_true(same_transitions(one, graph));
  anim_graph_options_default(&o);
  o.strip_rows = 100;
  anim_graph_builder_t *b = anim_graph_builder_create(bandai, &o, err, sizeof err);
  for (int s = anim_graph_builder_strips(b) - 1; s >= 0; s--) assert_int_equal(anim_graph_builder_run(b, s), 0);
  anim_motion_graph_t *backwards = anim_graph_builder_finish(b, err, sizeof err);
  assert_true(same_transitions(backwards, graph));
  /* A strip's memory grows with the frames, not their square: far below
   * the matrix's 4 bytes an entry. */
  size_t rows = (size_t)anim_graph_builder_rows(b);
  assert_true(anim_graph_builder_strip_memory(b) * 20 < rows * rows * sizeof(float));
  anim_graph_builder_free(b);
  anim_motion_graph_free(small), anim_motion_graph_free(one), anim_motion_graph_free(backwards);
  free(frames);
}

/* ---- the graph ---------------------------------------------------------------------------------- */

static int reach_all(const anim_motion_graph_t *g, int reverse) {
  int n = g->nnodes, *queue = malloc((size_t)n * sizeof(int)), head = 0, tail = 0, seen_count = 1;
  unsigned char *seen = calloc((size_t)n, 1);
  queue[tail++] = 0, seen[0] = 1;
  while (head < tail) {
    int v = queue[head++];
    if (!reverse) {
      for (int i = 0; i < g->nodes[v].nedges; i++) {
        int w = g->edges[g->nodes[v].first_edge + i].target;
        if (!seen[w]) seen[w] = 1, queue[tail++] = w, seen_count++;
      }
    } else {
      for (int u = 0; u < n; u++) /* who reaches v */
        for (int i = 0; i < g->nodes[u].nedges; i++)
          if (g->edges[g->nodes[u].first_edge + i].target == v && !seen[u])
            seen[u] = 1, queue[tail++] = u, seen_count++;
    }
  }
  free(queue), free(seen);
  return seen_count == n;
}

static void test_pruned_graph(void **state) {
  if (!bandai_graph()) return;
  const anim_motion_graph_t *g = graph;
  printf("graph: %d frames, %d candidate transitions, %d -> %d nodes, %d -> %d edges, %d components, %d transitions\n",
         g->nframes, g->candidates, g->nodes_built, g->nnodes, g->edges_built, g->nedges, g->components,
         g->ntransitions);
  assert_true(g->nnodes > 100);
  assert_true(g->components > 1 && g->nnodes < g->nodes_built);
  /* Strongly connected: node 0 reaches every node and every node reaches it. */
  assert_true(reach_all(g, 0));
  assert_true(reach_all(g, 1));
  /* Edges play what they say. */
  for (int u = 0; u < g->nnodes; u++) {
    const anim_graph_node_t *node = &g->nodes[u];
    assert_true(node->nedges >= 1);
    if (u > 0) assert_true(node->frame > g->nodes[u - 1].frame);
    for (int i = 0; i < node->nedges; i++) {
      const anim_graph_edge_t *e = &g->edges[node->first_edge + i];
      assert_true(anim_graph_edge_frames(g, e) >= 1);
      int last = g->nodes[e->target].frame;
      assert_int_equal(anim_database_range_of(bandai, e->first_frame), anim_database_range_of(bandai, last));
      if (e->transition < 0) {
        assert_int_equal(e->first_frame, node->frame + 1);
      } else {
        const anim_graph_transition_t *t = &g->transitions[e->transition];
        assert_int_equal(t->from, node->frame);
        assert_int_equal(t->to, e->first_frame - 1);
        assert_true(t->distance < g->threshold);
        /* The build's distance and alignment are the one-pair ones. */
        float d, a, dx, dz;
        assert_int_equal(anim_graph_distance(bandai, NULL, t->from, t->to, &d, &a, &dx, &dz), 0);
        if (fabsf(d - t->distance) > 1e-4f || fabsf(wrap_angle(a - t->angle)) > 1e-4f ||
            hypotf(dx - t->dx, dz - t->dz) > 1e-3f)
          fail_msg("transition %d -> %d: %.5f m %.5f rad (%.3f %.3f) built, %.5f m %.5f rad (%.3f %.3f) alone", t->from,
                   t->to, t->distance, t->angle, t->dx, t->dz, d, a, dx, dz);
      }
    }
  }
  /* Without pruning the same build keeps dead ends. */
  anim_graph_options_t o;
  anim_graph_options_default(&o);
  o.prune = 0;
  char err[256];
  anim_motion_graph_t *raw = anim_motion_graph_build(bandai, &o, err, sizeof err);
  assert_int_equal(raw->nnodes, g->nodes_built);
  assert_false(reach_all(raw, 0) && reach_all(raw, 1));
  anim_motion_graph_free(raw);
}

static void test_random_walk(void **state) {
  if (!bandai_graph()) return;
  enum { N = 5000 };
  static int walk[N], again[N];
  uint32_t seed = 7, seed2 = 7;
  assert_int_equal(anim_motion_graph_random_walk(graph, 3, &seed, walk, N), N);
  assert_int_equal(anim_motion_graph_random_walk(graph, 3, &seed2, again, N), N);
  assert_memory_equal(walk, again, sizeof walk);
  int node = 3, jumps = 0;
  for (int i = 0; i < N; i++) {
    const anim_graph_edge_t *e = &graph->edges[walk[i]];
    assert_true(walk[i] >= graph->nodes[node].first_edge &&
                walk[i] < graph->nodes[node].first_edge + graph->nodes[node].nedges);
    jumps += e->transition >= 0;
    node = e->target;
  }
  assert_true(jumps > N / 10);
  assert_int_equal(anim_motion_graph_random_walk(graph, -1, &seed, walk, N), 0);
}

/* Slide's automatic choice (the default): on where two ranges repeat a
 * motion exactly (the procedural database's walks), off on captured motion
 * (Bandai Namco), where it grows the graph and a line that turns away at
 * once is lost (graph_path.h, "Turns"): the default graphs are those built
 * with slide 1 and 0. */
static void test_slide_automatic(void **state) {
  anim_database_t db;
  char err[256];
  anim_test_procgen(&db);
  anim_graph_options_t go;
  anim_graph_options_default(&go);
  assert_int_equal(go.slide, ANIM_GRAPH_SLIDE_AUTO);
  anim_motion_graph_t *automatic = anim_motion_graph_build(&db, &go, err, sizeof err), *fixed;
  assert_non_null(automatic);
  for (int slide = 0; slide <= 1; slide++) {
    go.slide = slide;
    assert_non_null(fixed = anim_motion_graph_build(&db, &go, err, sizeof err));
    printf("procedural database, slide %d: %d nodes, %d edges (automatic: %d, %d)\n", slide, fixed->nnodes,
           fixed->nedges, automatic->nnodes, automatic->nedges);
    assert_int_equal(fixed->nedges == automatic->nedges && fixed->nnodes == automatic->nnodes, slide == 1);
    assert_int_equal(fixed->slide, slide);
    anim_motion_graph_free(fixed);
  }
  assert_int_equal(automatic->slide, 1); /* the choice made, as the graph reports it */
  anim_motion_graph_free(automatic);
  anim_database_free(&db);
  if (!bandai_graph()) return;
  for (int slide = 0; slide <= 1; slide++) {
    go.slide = slide;
    assert_non_null(fixed = anim_motion_graph_build(bandai, &go, err, sizeof err));
    printf("Bandai Namco, slide %d: %d nodes, %d edges (automatic: %d, %d)\n", slide, fixed->nnodes, fixed->nedges,
           graph->nnodes, graph->nedges);
    assert_int_equal(fixed->nedges == graph->nedges && fixed->nnodes == graph->nnodes, slide == 0);
    assert_int_equal(fixed->slide, slide);
    anim_motion_graph_free(fixed);
  }
  assert_int_equal(graph->slide, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_invalid),
      cmocka_unit_test(test_cancel),
      cmocka_unit_test(test_distance_invariance),
      cmocka_unit_test(test_strips),
      cmocka_unit_test(test_pruned_graph),
      cmocka_unit_test(test_random_walk),
      cmocka_unit_test(test_slide_automatic),
  };
  return cmocka_run_group_tests(tests, NULL, anim_test_bandai_graph_teardown);
}
