/* test_steering.c (measuring harness, first cut): goal input arrivals. */
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
#include "controller.h"
#include "procgen_db.h"
#include "quality_run.h"
#include "search.h"
#include "shared_data.h"
#include "steering.h"

#define DT (1.0f / 60.0f)
#define RUN_SECONDS 20.0f
#define MEASURE_RADIUS 0.3f

typedef struct {
  float final_sim, final_root; /* m from the goal at the end */
  float still_root, still_sim; /* largest speed over the last 2 s, m/s */
  int flips;                   /* heading changes > 90 degrees after first arrival */
  float overshoot;             /* m past the goal along the approach */
  float arrive_time;           /* s until first within MEASURE_RADIUS, -1 never */
  float full_speed_time;       /* s until the root moves at 90% of the goal speed, -1 never */
  float max_after;             /* largest distance after first arrival */
} arrival_t;

static float heading_of(quat q) {
  vec3 f = quat_mul_vec3(q, vec3_make(0.0f, 0.0f, 1.0f));
  return atan2f(f.x, f.z);
}

static float wrap(float a) { return remainderf(a, 2.0f * (float)M_PI); }

static float flat_length(vec3 v) { return sqrtf(v.x * v.x + v.z * v.z); }

static arrival_t run_goal(const anim_database_t *db, const anim_search_index_t *index, float distance, float angle,
                          float speed) {
  anim_controller_t c;
  assert_int_equal(anim_controller_init(&c, db, index, NULL, vec3_zero(), 0.0f, 0), 0);
  /* Settle standing for a second first, so that every run starts alike. */
  anim_controller_input_t in;
  memset(&in, 0, sizeof in);
  in.kind = ANIM_INPUT_STICK;
  assert_int_equal(anim_controller_set_input(&c, &in), 0);
  for (int t = 0; t < 60; t++) assert_int_equal(anim_controller_tick(&c, DT), 0);
  vec3 start = vec3_make(c.pose_positions[0].x, 0.0f, c.pose_positions[0].z);
  vec3 dir = vec3_make(sinf(angle), 0.0f, cosf(angle));
  vec3 goal = vec3_add(start, vec3_scale(dir, distance));
  in.kind = ANIM_INPUT_GOAL, in.goal = goal, in.goal_speed = speed;
  assert_int_equal(anim_controller_set_input(&c, &in), 0);
  arrival_t a = {0, 0, 0, 0, 0, 0, -1, -1, 0};
  vec3 prev = start;
  float ref = 0.0f;
  int ticks = (int)(RUN_SECONDS / DT);
  for (int t = 0; t < ticks; t++) {
    assert_int_equal(anim_controller_tick(&c, DT), 0);
    float time = (float)(t + 1) * DT;
    vec3 root = vec3_make(c.pose_positions[0].x, 0.0f, c.pose_positions[0].z);
    float d = flat_length(vec3_sub(root, goal));
    float root_speed = flat_length(vec3_sub(root, prev)) / DT;
    prev = root;
    float past = vec3_dot(vec3_sub(root, goal), dir);
    if (past > a.overshoot) a.overshoot = past;
    if (a.full_speed_time < 0 && vec3_dot(c.pose_velocities[0], dir) >= 0.9f * speed) a.full_speed_time = time;
    float heading = heading_of(c.pose_rotations[0]);
    if (a.arrive_time < 0 && d < MEASURE_RADIUS) a.arrive_time = time, ref = heading;
    if (a.arrive_time >= 0) {
      if (fabsf(wrap(heading - ref)) > (float)M_PI / 2) a.flips++, ref = heading;
      if (d > a.max_after) a.max_after = d;
    }
    if (time > RUN_SECONDS - 2.0f) {
      if (root_speed > a.still_root) a.still_root = root_speed;
      if (flat_length(c.sim_velocity) > a.still_sim) a.still_sim = flat_length(c.sim_velocity);
    }
    a.final_root = d;
    a.final_sim = flat_length(vec3_sub(c.sim_position, goal));
  }
  anim_controller_free(&c);
  return a;
}

static void standing(const char *name, const anim_database_t *db, const anim_search_index_t *index) {
  {
    int slow = 0, nb = db->nbones;
    float hist[8] = {0};
    for (int f = 0; f < db->nframes; f++) {
      float v = flat_length(db->local_velocities[(size_t)f * (size_t)nb]);
      if (v < 0.1f) slow++;
      int h = (int)(v / 0.5f); if (h > 7) h = 7; hist[h]++;
    }
    printf("%s: %d of %d frames with root speed < 0.1 m/s; histogram by 0.5 m/s:", name, slow, db->nframes);
    for (int h = 0; h < 8; h++) printf(" %.0f", hist[h]);
    printf("\n");
  }
  anim_controller_t c;
  assert_int_equal(anim_controller_init(&c, db, index, NULL, vec3_zero(), 0.0f, 0), 0);
  vec3 prev = c.pose_positions[0];
  float top = 0, total = 0;
  for (int t = 0; t < 20 * 60; t++) {
    assert_int_equal(anim_controller_tick(&c, DT), 0);
    float v = flat_length(vec3_sub(c.pose_positions[0], prev)) / DT;
    prev = c.pose_positions[0];
    if (t > 60 * 5) { if (v > top) top = v; total += v * DT; }
  }
  printf("%s standing (stick 0) after 5 s: top root speed %.3f m/s, path %.2f m in 15 s, frame %d\n", name, top, total, c.frame);
  anim_controller_free(&c);
}

static void report(const char *name, const anim_database_t *db, const anim_search_index_t *index) {
  const float distances[] = {2.0f, 5.0f, 10.0f}, speeds[] = {1.5f, 3.5f};
  const float angles[] = {0.0f, 90.0f, 180.0f, -135.0f};
  printf("%s: dist angle speed | final sim root | still root sim | flips | overshoot | arrive full | max_after\n",
         name);
  for (int s = 0; s < 2; s++)
    for (int i = 0; i < 3; i++)
      for (int k = 0; k < 4; k++) {
        arrival_t a = run_goal(db, index, distances[i], angles[k] * (float)M_PI / 180.0f, speeds[s]);
        printf("%5.0f %5.0f %4.1f | %5.2f %5.2f | %5.2f %5.2f | %2d | %5.2f | %5.2f %5.2f | %5.2f\n", distances[i],
               angles[k], speeds[s], a.final_sim, a.final_root, a.still_root, a.still_sim, a.flips, a.overshoot,
               a.arrive_time, a.full_speed_time, a.max_after);
      }
}

static anim_search_index_t *index_of(const anim_database_t *db) {
  char err[256];
  anim_search_data_t data = {db->features.values, db->features.rows, db->features.cols, db->ranges, db->nranges};
  anim_search_index_t *index = anim_search_index_build(ANIM_SEARCH_FAST, &data, err, sizeof err);
  assert_non_null(index);
  return index;
}

static void test_measure_procgen(void **state) {
  (void)state;
  anim_database_t db;
  anim_test_procgen(&db);
  anim_search_index_t *index = index_of(&db);
  standing("procgen", &db, index);
  report("procgen", &db, index);
  anim_search_index_free(index);
  anim_database_free(&db);
}

static void test_measure_bandai(void **state) {
  (void)state;
  anim_database_t db;
  if (!anim_test_bandai_database(&db)) return;
  anim_search_index_t *index = index_of(&db);
  standing("bandai", &db, index);
  report("bandai", &db, index);
  anim_search_index_free(index);
  anim_database_free(&db);
}

static void test_measure_games105(void **state) {
  (void)state;
  anim_database_t db;
  char path[1024], err[512];
  if (!anim_test_shared_path(path, sizeof path, "data/mocap/games105")) return;
  if (anim_quality_dataset_build(&db, anim_test_shared_dir(), 1, err, sizeof err)) fail_msg("%s", err);
  anim_search_index_t *index = index_of(&db);
  standing("games105", &db, index);
  report("games105", &db, index);
  anim_search_index_free(index);
  anim_database_free(&db);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_measure_procgen),
      cmocka_unit_test(test_measure_bandai),
      cmocka_unit_test(test_measure_games105),
  };
  return cmocka_run_group_tests_name("steering", tests, NULL, NULL);
}
