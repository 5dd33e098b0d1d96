/*
 * test_search_service.c: databases, search and poses end to end, through the
 * real server (on its embedded default database) and the real client library.
 * Invalid input first: a table of bad requests, each with the specific error
 * code it must get, after which the server still answers.
 */
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "anim_client.h"
#include "math/anim_math.h"
#include "animserver.pb-c.h"
#include "frame.h"
#include "fixture.h"
#include "server_proc.h"

#define TIMEOUT_MS 10000

static anim_test_fixture_t fx; /* the server, a client, the default database's description */

static int setup(void **state) {
  const char *args[] = {"--max-batch", "8192", NULL};
  return anim_test_fixture_start(&fx, "search_service", args, 1);
}

static int teardown(void **state) { return anim_test_fixture_stop(&fx); }

static int search_status(const char *db, const anim_query_t *q) {
  anim_search_reply_t *reply = NULL;
  int rc = anim_client_search(fx.client, db, q, &reply, TIMEOUT_MS);
  anim_search_reply_free(reply);
  return rc;
}

/* ---- the bad-input table ---------------------------------------------------------- */

typedef enum { BAD_SEARCH, BAD_POSE, BAD_DESCRIBE, BAD_LOAD, BAD_RELOAD, BAD_UNLOAD } bad_kind_t;

typedef struct {
  const char *what;
  bad_kind_t kind;
  const char *database;
  int expect;
  void (*tweak)(anim_query_t *q, int nframes, int dims);
  int pose_frame, pose_count;
} bad_case_t;

static float bad_features[200];
static float bad_trajectory[6];
static const char *bad_tags[2];

static void from_frame_0(anim_query_t *q, int n, int d) { q->from_frame = 0; }
static void frame_past_end(anim_query_t *q, int n, int d) { q->from_frame = n; }
static void current_past_end(anim_query_t *q, int n, int d) { q->from_frame = 0, q->current_frame = n; }
static void features_short(anim_query_t *q, int n, int d) { q->features = bad_features, q->nfeatures = 5; }
static void features_huge(anim_query_t *q, int n, int d) { q->features = bad_features, q->nfeatures = 200; }
static void features_nan(anim_query_t *q, int n, int d) {
  memset(bad_features, 0, sizeof bad_features);
  bad_features[3] = NAN;
  q->features = bad_features, q->nfeatures = d;
}
static void features_inf(anim_query_t *q, int n, int d) {
  memset(bad_features, 0, sizeof bad_features);
  bad_features[d - 1] = INFINITY;
  q->features = bad_features, q->nfeatures = d;
}
static void raw_features_neg_inf(anim_query_t *q, int n, int d) {
  features_inf(q, n, d);
  bad_features[d - 1] = -INFINITY;
  q->raw_features = 1;
}
static void features_and_frame(anim_query_t *q, int n, int d) {
  memset(bad_features, 0, sizeof bad_features);
  q->features = bad_features, q->nfeatures = d, q->from_frame = 0;
}
static void neither_source(anim_query_t *q, int n, int d) {}
static void k_huge(anim_query_t *q, int n, int d) { q->from_frame = 0, q->k = 5000; }
static void transition_nan(anim_query_t *q, int n, int d) { q->from_frame = 0, q->transition_cost = NAN; }
static void transition_negative(anim_query_t *q, int n, int d) { q->from_frame = 0, q->transition_cost = -1.0f; }
static void unknown_tag(anim_query_t *q, int n, int d) {
  bad_tags[0] = "no-such-tag";
  q->from_frame = 0, q->tags = bad_tags, q->ntags = 1;
}
static void malformed_tag(anim_query_t *q, int n, int d) {
  bad_tags[0] = "two words";
  q->from_frame = 0, q->tags = bad_tags, q->ntags = 1;
}
static void trajectory_without_frame(anim_query_t *q, int n, int d) {
  memset(bad_features, 0, sizeof bad_features);
  q->features = bad_features, q->nfeatures = d;
  q->trajectory_positions = bad_trajectory, q->ntrajectory_positions = 3;
}
static void trajectory_wrong_count(anim_query_t *q, int n, int d) {
  memset(bad_trajectory, 0, sizeof bad_trajectory);
  q->from_frame = 0, q->trajectory_positions = bad_trajectory, q->ntrajectory_positions = 2;
}
static void trajectory_nan(anim_query_t *q, int n, int d) {
  memset(bad_trajectory, 0, sizeof bad_trajectory);
  bad_trajectory[4] = NAN;
  q->from_frame = 0, q->trajectory_directions = bad_trajectory, q->ntrajectory_directions = 3;
}
static void method_unknown(anim_query_t *q, int n, int d) { q->from_frame = 0, q->method = 99; }

static const bad_case_t bad_cases[] = {
    {"unknown database", BAD_SEARCH, "nope", ANIM_ENOTFOUND, from_frame_0, 0, 0},
    {"path-like name", BAD_SEARCH, "../etc/passwd", ANIM_EBADNAME, from_frame_0, 0, 0},
    {"name with a slash", BAD_SEARCH, "a/b", ANIM_EBADNAME, from_frame_0, 0, 0},
    {"hidden name", BAD_SEARCH, ".default", ANIM_EBADNAME, from_frame_0, 0, 0},
    {"empty name", BAD_SEARCH, "", ANIM_EBADNAME, from_frame_0, 0, 0},
    {"overlong name", BAD_SEARCH, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
     ANIM_EBADNAME, from_frame_0, 0, 0},
    {"from_frame past the end", BAD_SEARCH, "default", ANIM_ERANGE, frame_past_end, 0, 0},
    {"current_frame past the end", BAD_SEARCH, "default", ANIM_ERANGE, current_past_end, 0, 0},
    {"feature vector too short", BAD_SEARCH, "default", ANIM_EDIMENSION, features_short, 0, 0},
    {"feature vector over the protocol bound", BAD_SEARCH, "default", ANIM_EDIMENSION, features_huge, 0, 0},
    {"NaN feature", BAD_SEARCH, "default", ANIM_ENONFINITE, features_nan, 0, 0},
    {"infinite feature", BAD_SEARCH, "default", ANIM_ENONFINITE, features_inf, 0, 0},
    {"-infinite raw feature", BAD_SEARCH, "default", ANIM_ENONFINITE, raw_features_neg_inf, 0, 0},
    {"features and from_frame", BAD_SEARCH, "default", ANIM_EINVAL, features_and_frame, 0, 0},
    {"no query source", BAD_SEARCH, "default", ANIM_EINVAL, neither_source, 0, 0},
    {"k over max_k", BAD_SEARCH, "default", ANIM_ELIMIT, k_huge, 0, 0},
    {"NaN transition cost", BAD_SEARCH, "default", ANIM_ENONFINITE, transition_nan, 0, 0},
    {"negative transition cost", BAD_SEARCH, "default", ANIM_EINVAL, transition_negative, 0, 0},
    {"unknown tag", BAD_SEARCH, "default", ANIM_ENOTFOUND, unknown_tag, 0, 0},
    {"malformed tag", BAD_SEARCH, "default", ANIM_EBADNAME, malformed_tag, 0, 0},
    {"trajectory without from_frame", BAD_SEARCH, "default", ANIM_EINVAL, trajectory_without_frame, 0, 0},
    {"trajectory sample count", BAD_SEARCH, "default", ANIM_EDIMENSION, trajectory_wrong_count, 0, 0},
    {"NaN trajectory", BAD_SEARCH, "default", ANIM_ENONFINITE, trajectory_nan, 0, 0},
    {"unknown method", BAD_SEARCH, "default", ANIM_EINVAL, method_unknown, 0, 0},
    {"pose of an unknown database", BAD_POSE, "nope", ANIM_ENOTFOUND, NULL, 0, 1},
    {"pose frame past the end", BAD_POSE, "default", ANIM_ERANGE, NULL, -1, 1},
    {"pose span past the end", BAD_POSE, "default", ANIM_ERANGE, NULL, -2, 5},
    {"pose frame INT_MAX (its end overflows an int)", BAD_POSE, "default", ANIM_ERANGE, NULL, INT_MAX, 26},
    {"pose span over the limit", BAD_POSE, "default", ANIM_ELIMIT, NULL, 0, 20000},
    {"pose with a path-like name", BAD_POSE, "../default", ANIM_EBADNAME, NULL, 0, 1},
    {"describe an unknown database", BAD_DESCRIBE, "nope", ANIM_ENOTFOUND, NULL, 0, 0},
    {"load a path", BAD_LOAD, "../../etc/passwd", ANIM_EBADNAME, NULL, 0, 0},
    {"load a missing file", BAD_LOAD, "missing", ANIM_ENOTFOUND, NULL, 0, 0},
    {"load a loaded name", BAD_LOAD, "default", ANIM_EEXIST, NULL, 0, 0},
    {"reload an unknown database", BAD_RELOAD, "nope", ANIM_ENOTFOUND, NULL, 0, 0},
    {"unload an unknown database", BAD_UNLOAD, "nope", ANIM_ENOTFOUND, NULL, 0, 0},
};

static int run_bad_case(const bad_case_t *c) {
  int nframes = (int)fx.defaults->summary.frames, dims = (int)fx.defaults->summary.feature_dims;
  switch (c->kind) {
  case BAD_SEARCH: {
    anim_query_t q;
    anim_query_init(&q);
    c->tweak(&q, nframes, dims);
    return search_status(c->database, &q);
  }
  case BAD_POSE: {
    /* Negative frames in the table count from the end. */
    int frame = c->pose_frame >= 0 ? c->pose_frame : nframes + 1 + c->pose_frame;
    anim_pose_reply_t *reply = NULL;
    int rc = anim_client_pose(fx.client, c->database, frame, c->pose_count, NULL, &reply, TIMEOUT_MS);
    anim_pose_reply_free(reply);
    return rc;
  }
  case BAD_DESCRIBE: {
    anim_db_description_t *d = NULL;
    int rc = anim_client_db_describe(fx.client, c->database, &d, TIMEOUT_MS);
    anim_db_description_free(d);
    return rc;
  }
  case BAD_LOAD: return anim_client_db_load(fx.client, c->database, NULL, TIMEOUT_MS);
  case BAD_RELOAD: return anim_client_db_reload(fx.client, c->database, NULL, TIMEOUT_MS);
  case BAD_UNLOAD: return anim_client_db_unload(fx.client, c->database, TIMEOUT_MS);
  }
  return 0;
}

static void test_bad_input_table(void **state) {
  int failures = 0;
  size_t n = sizeof bad_cases / sizeof bad_cases[0];
  assert_true(n >= 30);
  for (size_t i = 0; i < n; i++) {
    int rc = run_bad_case(&bad_cases[i]);
    if (rc != bad_cases[i].expect) {
      printf("bad input \"%s\": got %s (%s), want %s\n", bad_cases[i].what, anim_err_name(rc),
             anim_client_last_error(fx.client), anim_err_name(bad_cases[i].expect));
      failures++;
    }
  }
  assert_int_equal(failures, 0);
  /* The server carries on. */
  assert_int_equal(anim_client_ping(fx.client, "ok", 2, NULL, TIMEOUT_MS), 0);
  anim_query_t q;
  anim_query_init(&q);
  q.from_frame = 0;
  assert_int_equal(search_status("default", &q), 0);
}

static void test_empty_and_oversized_batch(void **state) {
  anim_query_t q[2];
  anim_query_init(&q[0]);
  q[0].from_frame = 0;
  /* An empty batch cannot be built with the client API: send it raw. */
  int fd = anim_test_server_raw_connect(&fx.server);
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__BatchSearchRequest batch = ANIMSERVER__BATCH_SEARCH_REQUEST__INIT;
  batch.database = "default";
  request.id = 3;
  request.body_case = ANIMSERVER__REQUEST__BODY_BATCH_SEARCH;
  request.batch_search = &batch;
  uint8_t buf[256];
  size_t size = animserver__request__get_packed_size(&request);
  size_t n = anim_varint_encode(size, buf);
  animserver__request__pack(&request, buf + n);
  assert_int_equal(write(fd, buf, n + size), (ssize_t)(n + size));
  uint8_t in[512];
  ssize_t got = read(fd, in, sizeof in);
  assert_true(got > 1);
  uint64_t len;
  int used = anim_varint_decode(in, (size_t)got, &len);
  assert_true(used > 0);
  Animserver__ServerMessage *m = animserver__server_message__unpack(NULL, len, in + used);
  assert_non_null(m);
  assert_int_equal(m->response->id, 3);
  assert_int_equal(m->response->error->code, ANIMSERVER__ERROR_CODE__ERROR_INVALID_ARGUMENT);
  animserver__server_message__free_unpacked(m, NULL);
  close(fd);

  int count = 8193;
  anim_query_t *many = calloc((size_t)count, sizeof *many);
  for (int i = 0; i < count; i++) {
    anim_query_init(&many[i]);
    many[i].from_frame = i % (int)fx.defaults->summary.frames;
  }
  anim_search_reply_t *reply = NULL;
  assert_int_equal(anim_client_search_batch(fx.client, "default", many, count, &reply, TIMEOUT_MS), ANIM_ELIMIT);
  free(many);
}

/* ---- behaviour ------------------------------------------------------------------------ */

static void test_list_and_describe_default(void **state) {
  anim_db_summary_t list[8];
  int count = 0;
  assert_int_equal(anim_client_db_list(fx.client, list, 8, &count, TIMEOUT_MS), 0);
  assert_true(count >= 1);
  int found = -1;
  for (int i = 0; i < count && i < 8; i++)
    if (strcmp(list[i].name, "default") == 0) found = i;
  assert_true(found >= 0);
  assert_true(list[found].frames > 1000);
  assert_int_equal(list[found].feature_dims, 27);
  assert_true(list[found].version != 0);
  assert_true(list[found].version == fx.defaults->summary.version);
  assert_true(fx.defaults->nbones > 10);
  assert_int_equal(fx.defaults->bone_parents[0], -1);
  for (int b = 1; b < fx.defaults->nbones; b++) assert_true(fx.defaults->bone_parents[b] < b);
  assert_true(fx.defaults->nranges > 5);
  uint32_t covered = 0;
  for (int r = 0; r < fx.defaults->nranges; r++) covered += fx.defaults->ranges[r].stop - fx.defaults->ranges[r].start;
  assert_int_equal(covered, fx.defaults->summary.frames);
  int dims = 0;
  for (int g = 0; g < fx.defaults->ngroups; g++) dims += (int)fx.defaults->groups[g].dims;
  assert_int_equal(dims, 27);
  for (int c = 0; c < dims; c++) assert_true(fx.defaults->feature_scale[c] > 0.0f);
}

/* A frame's own features find that frame at cost 0, with every method. */
static void test_search_finds_the_query_frame(void **state) {
  int methods[] = {ANIM_METHOD_BRUTE, ANIM_METHOD_BOXES, ANIM_METHOD_FAST, ANIM_METHOD_DEFAULT};
  for (int frame = 0; frame < (int)fx.defaults->summary.frames; frame += 997) {
    for (int m = 0; m < 4; m++) {
      anim_query_t q;
      anim_query_init(&q);
      q.from_frame = frame;
      q.k = 4;
      q.method = methods[m];
      anim_search_reply_t *reply;
      assert_int_equal(anim_client_search(fx.client, "default", &q, &reply, TIMEOUT_MS), 0);
      assert_int_equal(reply->nresults, 1);
      const anim_result_t *r = &reply->results[0];
      assert_int_equal(r->nmatches, 4);
      assert_true(r->matches[0].cost == 0.0f);
      /* Costs ascend; the exact frame may tie with a duplicate, but has cost 0. */
      for (int i = 1; i < 4; i++) assert_true(r->matches[i].cost >= r->matches[i - 1].cost);
      int has_frame = 0;
      for (int i = 0; i < 4; i++) has_frame |= r->matches[i].frame == (uint32_t)frame && r->matches[i].cost == 0.0f;
      assert_true(has_frame);
      assert_true(reply->database_version == fx.defaults->summary.version);
      anim_search_reply_free(reply);
    }
  }
}

/* Every method answers exactly what brute force answers, over the wire. */
static void test_methods_agree_over_the_wire(void **state) {
  srand(7);
  int dims = (int)fx.defaults->summary.feature_dims;
  for (int trial = 0; trial < 200; trial++) {
    float features[128];
    for (int j = 0; j < dims; j++) features[j] = ((float)rand() / (float)RAND_MAX - 0.5f) * 3.0f;
    anim_search_reply_t *replies[3];
    int current = trial % 3 == 0 ? rand() % (int)fx.defaults->summary.frames : -1;
    for (int m = 0; m < 3; m++) {
      anim_query_t q;
      anim_query_init(&q);
      q.features = features;
      q.nfeatures = dims;
      q.k = 1 + trial % 7;
      q.current_frame = current;
      q.transition_cost = (float)(trial % 4) * 0.1f;
      q.ignore_surrounding = trial % 5 == 0 ? 20 : 0;
      q.ignore_range_end = trial % 2 ? 10 : 0;
      q.method = m + 1;
      assert_int_equal(anim_client_search(fx.client, "default", &q, &replies[m], TIMEOUT_MS), 0);
    }
    for (int m = 1; m < 3; m++) {
      assert_int_equal(replies[m]->results[0].nmatches, replies[0]->results[0].nmatches);
      for (int i = 0; i < replies[0]->results[0].nmatches; i++) {
        assert_int_equal(replies[m]->results[0].matches[i].frame, replies[0]->results[0].matches[i].frame);
        assert_true(replies[m]->results[0].matches[i].cost == replies[0]->results[0].matches[i].cost);
      }
    }
    for (int m = 0; m < 3; m++) anim_search_reply_free(replies[m]);
  }
}

static void test_explain_and_pose(void **state) {
  anim_query_t q;
  anim_query_init(&q);
  q.from_frame = 100;
  q.current_frame = 100;
  q.ignore_surrounding = 30;
  q.transition_cost = 0.0f;
  q.explain = 1;
  q.include_pose = 1;
  anim_search_reply_t *reply;
  assert_int_equal(anim_client_search(fx.client, "default", &q, &reply, TIMEOUT_MS), 0);
  const anim_result_t *r = &reply->results[0];
  assert_int_equal(r->nmatches, 1);
  /* The current frame competes at cost 0 and wins. */
  assert_int_equal(r->matches[0].frame, 100);
  assert_int_equal(r->nexplain, fx.defaults->ngroups);
  float sum = 0.0f;
  for (int i = 0; i < r->nexplain; i++) {
    assert_true(r->explain_costs[i] >= 0.0f);
    sum += r->explain_costs[i];
  }
  assert_true(fabsf(sum - r->matches[0].cost) < 1e-4f);
  assert_true(r->margin > 0.0f);
  assert_non_null(r->matches[0].pose);
  assert_int_equal(r->matches[0].pose->nbones, fx.defaults->nbones);
  anim_search_reply_free(reply);

  anim_pose_options_t opts = {1, 1, 1};
  anim_pose_reply_t *poses;
  assert_int_equal(anim_client_pose(fx.client, "default", 10, 3, &opts, &poses, TIMEOUT_MS), 0);
  assert_int_equal(poses->nposes, 3);
  for (int i = 0; i < 3; i++) {
    const anim_pose_t *p = &poses->poses[i];
    assert_int_equal(p->frame, 10 + i);
    assert_non_null(p->global_positions);
    assert_non_null(p->global_velocities);
    for (int b = 0; b < p->nbones; b++) {
      const float *rot = p->local_rotations + 4 * b;
      float norm = rot[0] * rot[0] + rot[1] * rot[1] + rot[2] * rot[2] + rot[3] * rot[3];
      assert_true(fabsf(norm - 1.0f) < 1e-3f);
    }
  }
  anim_pose_reply_free(poses);
}

/* Character-space vector of global vector v at frame f's root. */
static void to_character(const anim_pose_t *root_pose, const float *v, int is_point, float *out) {
  const float *q = root_pose->global_rotations, *p = root_pose->global_positions;
  float d[3] = {v[0] - (is_point ? p[0] : 0), v[1] - (is_point ? p[1] : 0), v[2] - (is_point ? p[2] : 0)};
  /* Rotate by the inverse of the root's rotation (w, x, y, z). */
  quat inv = quat_conj(quat_make(q[0], q[1], q[2], q[3]));
  vec3 r = quat_mul_vec3(inv, vec3_make(d[0], d[1], d[2]));
  out[0] = r.x, out[1] = r.y, out[2] = r.z;
}

/* The inputs features are made of, taken from a frame's pose and its future
 * root, make a query that finds that frame at (almost) zero cost. */
static void test_query_from_bone_inputs(void **state) {
  int frame = 600; /* the middle of the "walk" range: its future is in range */
  anim_pose_options_t opts = {0, 1, 1};
  anim_pose_reply_t *poses;
  assert_int_equal(anim_client_pose(fx.client, "default", frame, 61, &opts, &poses, TIMEOUT_MS), 0);
  const anim_pose_t *now = &poses->poses[0];
  int bone_index[3] = {-1, -1, -1};
  const char *names[3] = {"LeftFoot", "RightFoot", "Hips"};
  for (int b = 0; b < fx.defaults->nbones; b++)
    for (int i = 0; i < 3; i++)
      if (!strcmp(fx.defaults->bone_names[b], names[i])) bone_index[i] = b;
  float positions[6], velocities[9], traj_p[6], traj_d[6];
  for (int i = 0; i < 3; i++) {
    if (i < 2) to_character(now, now->global_positions + 3 * bone_index[i], 1, positions + 3 * i);
    to_character(now, now->global_velocities + 3 * bone_index[i], 0, velocities + 3 * i);
  }
  for (int s = 0; s < 3; s++) {
    const anim_pose_t *future = &poses->poses[20 * (s + 1)];
    float p[3], fwd[3];
    to_character(now, future->global_positions, 1, p);
    const float *q = future->global_rotations;
    vec3 dir = quat_mul_vec3(quat_make(q[0], q[1], q[2], q[3]), vec3_make(0, 0, 1));
    float d[3] = {dir.x, dir.y, dir.z};
    to_character(now, d, 0, fwd);
    traj_p[2 * s] = p[0], traj_p[2 * s + 1] = p[2];
    traj_d[2 * s] = fwd[0], traj_d[2 * s + 1] = fwd[2];
  }
  anim_query_t q;
  anim_query_init(&q);
  q.position_bones = names, q.positions = positions, q.npositions = 2;
  q.velocity_bones = names, q.velocities = velocities, q.nvelocities = 3;
  q.trajectory_positions = traj_p, q.ntrajectory_positions = 3;
  q.trajectory_directions = traj_d, q.ntrajectory_directions = 3;
  anim_search_reply_t *reply;
  assert_int_equal(anim_client_search(fx.client, "default", &q, &reply, TIMEOUT_MS), 0);
  assert_int_equal(reply->results[0].matches[0].frame, frame);
  assert_true(reply->results[0].matches[0].cost < 1e-6f);
  anim_search_reply_free(reply);
  /* A missing input names what is missing. */
  q.nvelocities = 2;
  assert_int_equal(anim_client_search(fx.client, "default", &q, &reply, TIMEOUT_MS), ANIM_EINVAL);
  assert_non_null(strstr(anim_client_last_error(fx.client), "Hips"));
  const char *unknown[3] = {"LeftFoot", "RightFoot", "Tail"};
  q.nvelocities = 3, q.velocity_bones = unknown;
  assert_int_equal(anim_client_search(fx.client, "default", &q, &reply, TIMEOUT_MS), ANIM_ENOTFOUND);
  anim_pose_reply_free(poses);
}

static void test_batch_matches_single(void **state) {
  enum { N = 40 };
  anim_query_t q[N];
  for (int i = 0; i < N; i++) {
    anim_query_init(&q[i]);
    q[i].from_frame = (i * 131) % (int)fx.defaults->summary.frames;
    q[i].k = 3;
    q[i].current_frame = q[i].from_frame;
    q[i].ignore_surrounding = 10;
    q[i].transition_cost = 0.01f;
  }
  anim_search_reply_t *batch;
  assert_int_equal(anim_client_search_batch(fx.client, "default", q, N, &batch, TIMEOUT_MS), 0);
  assert_int_equal(batch->nresults, N);
  for (int i = 0; i < N; i++) {
    anim_search_reply_t *single;
    assert_int_equal(anim_client_search(fx.client, "default", &q[i], &single, TIMEOUT_MS), 0);
    assert_int_equal(single->results[0].nmatches, batch->results[i].nmatches);
    for (int j = 0; j < single->results[0].nmatches; j++) {
      assert_int_equal(single->results[0].matches[j].frame, batch->results[i].matches[j].frame);
      assert_true(single->results[0].matches[j].cost == batch->results[i].matches[j].cost);
    }
    anim_search_reply_free(single);
  }
  anim_search_reply_free(batch);
}

typedef struct {
  int done, status;
} batch_wait_t;

static void on_batch(anim_client_t *c, uint64_t id, int status, const anim_search_reply_t *reply, void *data) {
  batch_wait_t *w = data;
  w->done = 1;
  w->status = status;
}

/* A long brute-force batch runs on the thread pool: the loop keeps
 * answering pings from another connection while it runs. */
static void test_long_batch_leaves_the_loop_responsive(void **state) {
  enum { N = 8192 };
  anim_query_t *q = calloc(N, sizeof *q);
  for (int i = 0; i < N; i++) {
    anim_query_init(&q[i]);
    q[i].from_frame = (i * 7919) % (int)fx.defaults->summary.frames;
    q[i].k = 16;
    q[i].method = ANIM_METHOD_BRUTE;
  }
  batch_wait_t w = {0, 0};
  assert_int_equal(anim_client_search_send(fx.client, "default", q, N, on_batch, &w, NULL), 0);
  free(q);
  anim_client_t *other = anim_test_connect(&fx.server);
  int pings_during_batch = 0;
  while (!w.done) {
    anim_client_poll(fx.client, 0);
    if (w.done) break;
    assert_int_equal(anim_client_ping(other, "x", 1, NULL, TIMEOUT_MS), 0);
    anim_client_poll(fx.client, 0);
    if (!w.done) pings_during_batch++;
  }
  assert_int_equal(w.status, 0);
  /* The batch takes well over the time of one ping round trip. */
  assert_true(pings_during_batch >= 3);
  anim_client_close(other);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bad_input_table),
      cmocka_unit_test(test_empty_and_oversized_batch),
      cmocka_unit_test(test_list_and_describe_default),
      cmocka_unit_test(test_search_finds_the_query_frame),
      cmocka_unit_test(test_methods_agree_over_the_wire),
      cmocka_unit_test(test_explain_and_pose),
      cmocka_unit_test(test_query_from_bone_inputs),
      cmocka_unit_test(test_batch_matches_single),
      cmocka_unit_test(test_long_batch_leaves_the_loop_responsive),
  };
  return cmocka_run_group_tests_name("search_service", tests, setup, teardown);
}
