/*
 * test_procgen.c: the embedded default database. Invalid specs first, then
 * determinism (clips and database hash the same on every build), plausible
 * motion (stance feet exactly still in the generated clips, contact feet of
 * the database nearly still, speeds and turn rates as specified, idle and
 * stops standing still, everything finite and unit), and features with no
 * zero-variance group. The build time is printed, not asserted.
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
#include "base/hash.h"
#include "pose/kinematics.h"
#include "offline/procgen.h"
#include "procgen_db.h"

/* Horizontal speed of feet in the middle of each contact (two frames in from
 * either end), m/s, 95th percentile. Footprints are fixed through each
 * stance, so these must be nearly still; the ends of a contact are left out
 * because the detector itself admits up to 0.35 m/s at touch-down and
 * lift-off. Measured: 0.007 m/s (worst single frame 0.06). */
#define MAX_CONTACT_FOOT_SPEED_P95 0.05f
/* Mean measured root speed within this fraction of the specified speed
 * (the path integrates the speed exactly; the smoothing of the simulation
 * bone rounds the turns). */
#define SPEED_TOLERANCE 0.05f
/* Stance ankles in the generated clips: the IK target is one fixed footprint
 * per stance and always within reach, so the ankle moves only by float
 * rounding through the FK chain (~1e-6 m per frame). 1 mm leaves room for
 * that and catches any real slide. */
#define MAX_STANCE_ANKLE_DRIFT 1e-3f
/* Measured yaw rate of the simulation bone in the middle of a turn clip,
 * relative to the specified rate (the bone's facing is smoothed). */
#define TURN_RATE_TOLERANCE 0.05f
/* Root speed of the idle clip and of the last half second of a stop, m/s. */
#define MAX_STANDING_SPEED 0.02f

static anim_database_t db;

static int setup(void **state) { return anim_test_procgen_load(&db); }
static int teardown(void **state) {
  anim_database_free(&db);
  return 0;
}

static void test_invalid_specs(void **state) {
  anim_clip_t clip;
  int n;
  const anim_procgen_clip_spec_t *specs = anim_procgen_specs(&n);
  assert_true(n >= 18);
  assert_int_equal(anim_procgen_clip(&clip, NULL, 60.0f), ANIM_EINVAL);
  assert_int_equal(anim_procgen_clip(&clip, &specs[1], 0.0f), ANIM_EINVAL);
  assert_int_equal(anim_procgen_clip(&clip, &specs[1], NAN), ANIM_EINVAL);
  assert_null(clip.local_positions);
  anim_procgen_clip_spec_t bad = specs[12]; /* a start: three keys */
  bad.key_time[2] = bad.key_time[1];
  assert_int_equal(anim_procgen_clip(&clip, &bad, 60.0f), ANIM_EINVAL);
  bad = specs[1];
  bad.key_speed[0] = -1.0f;
  assert_int_equal(anim_procgen_clip(&clip, &bad, 60.0f), ANIM_EINVAL);
  bad = specs[1];
  bad.duration = 0.0f;
  assert_int_equal(anim_procgen_clip(&clip, &bad, 60.0f), ANIM_EINVAL);
  bad = specs[1];
  bad.nkeys = 5;
  assert_int_equal(anim_procgen_clip(&clip, &bad, 60.0f), ANIM_EINVAL);
  anim_clip_t *clips;
  assert_int_equal(anim_procgen_clips(&clips, &n, -60.0f), ANIM_EINVAL);
  assert_null(clips);
  assert_int_equal(anim_procgen_database(NULL, NULL, NULL, 0), ANIM_EINVAL);
}

static uint64_t hash_clips(const anim_clip_t *clips, int n) {
  uint64_t h = 0;
  for (int i = 0; i < n; i++) {
    size_t count = (size_t)clips[i].nframes * (size_t)clips[i].skeleton.nbones;
    h = anim_hash64(clips[i].local_positions, count * sizeof(vec3), h);
    h = anim_hash64(clips[i].local_rotations, count * sizeof(quat), h);
  }
  return h;
}

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void test_deterministic(void **state) {
  anim_clip_t *a, *b;
  int na, nb;
  assert_int_equal(anim_procgen_clips(&a, &na, 60.0f), 0);
  assert_int_equal(anim_procgen_clips(&b, &nb, 60.0f), 0);
  assert_int_equal(na, nb);
  assert_true(hash_clips(a, na) == hash_clips(b, nb));
  anim_procgen_clips_free(a, na);
  anim_procgen_clips_free(b, nb);
  double t0 = seconds();
  anim_database_t again;
  anim_test_procgen(&again);
  printf("  default database: %d frames, %d bones, built in %.3f s\n", again.nframes, again.nbones, seconds() - t0);
  assert_true(again.version == db.version);
  assert_memory_equal(again.features.values, db.features.values,
                      (size_t)db.features.rows * (size_t)db.features.cols * sizeof(float));
  anim_database_free(&again);
}

static int finite3(vec3 v) { return isfinite(v.x) && isfinite(v.y) && isfinite(v.z); }

static void test_valid_and_finite(void **state) {
  char err[256];
  assert_int_equal(anim_database_validate(&db, err, sizeof err), 0);
  size_t n = (size_t)db.nframes * (size_t)db.nbones;
  for (size_t i = 0; i < n; i++) {
    quat q = db.local_rotations[i], g = db.global_rotations[i];
    int ok = fabsf(sqrtf(quat_dot(q, q)) - 1.0f) < 1e-4f && fabsf(sqrtf(quat_dot(g, g)) - 1.0f) < 1e-4f &&
             finite3(db.local_positions[i]) && finite3(db.global_positions[i]) && finite3(db.local_velocities[i]) &&
             finite3(db.global_velocities[i]) && finite3(db.local_angular_velocities[i]) &&
             finite3(db.global_angular_velocities[i]);
    if (!ok)
      fail_msg("frame %zu bone %s: non-finite or non-unit", i / (size_t)db.nbones,
               db.skeleton.names[i % (size_t)db.nbones]);
  }
  for (size_t i = 0; i < (size_t)db.features.rows * (size_t)db.features.cols; i++)
    if (!isfinite(db.features.values[i]))
      fail_msg("feature %zu of frame %zu is not finite", i % (size_t)db.features.cols, i / (size_t)db.features.cols);
  const char *names[] = {"Hips", "LeftUpLeg", "LeftFoot", "RightFoot", "LeftToe",
                         "RightToe", "LeftShoulder", "RightHand", "Head"};
  for (size_t b = 0; b < sizeof names / sizeof names[0]; b++)
    if (anim_skeleton_find(&db.skeleton, names[b]) < 0) fail_msg("no bone %s", names[b]);
  int tags[] = {anim_database_find_tag(&db, "idle"), anim_database_find_tag(&db, "walk"),
                anim_database_find_tag(&db, "run"),  anim_database_find_tag(&db, "jog"),
                anim_database_find_tag(&db, "turn"), anim_database_find_tag(&db, "start"),
                anim_database_find_tag(&db, "stop")};
  for (size_t t = 0; t < sizeof tags / sizeof tags[0]; t++) assert_true(tags[t] >= 0);
  /* No zero-variance group: every column of every group varies. */
  for (int g = 0; g < db.features.schema.nterms; g++) {
    assert_true(db.features.scale[db.features.group_start[g]] > 0.0f);
    for (int j = db.features.group_start[g]; j < db.features.group_start[g] + db.features.group_dims[g]; j++) {
      float lo = INFINITY, hi = -INFINITY;
      for (int f = 0; f < db.features.rows; f++) {
        float v = db.features.values[(size_t)f * (size_t)db.features.cols + (size_t)j];
        lo = fminf(lo, v), hi = fmaxf(hi, v);
      }
      if (!(hi - lo > 1e-3f)) fail_msg("feature column %d (group %d) does not vary", j, g);
    }
  }
}

/* In the generated clips (before any resampling or contact detection): while
 * an ankle is at ankle height it is in stance, and then it must not move. */
static void test_stance_ankles_fixed(void **state) {
  anim_clip_t *clips;
  int n;
  assert_int_equal(anim_procgen_clips(&clips, &n, 60.0f), 0);
  float worst = 0.0f;
  int stances = 0;
  for (int c = 0; c < n; c++) {
    const anim_clip_t *clip = &clips[c];
    int nb = clip->skeleton.nbones;
    int ankles[2] = {anim_skeleton_find(&clip->skeleton, "LeftFoot"), anim_skeleton_find(&clip->skeleton, "RightFoot")};
    vec3 gp[ANIM_MAX_BONES], anchor[2];
    quat gr[ANIM_MAX_BONES];
    float ground[2] = {INFINITY, INFINITY};
    /* The stance height: each ankle's lowest height in the clip. */
    for (int f = 0; f < clip->nframes; f++) {
      anim_fk(gp, gr, clip->local_positions + (size_t)f * (size_t)nb, clip->local_rotations + (size_t)f * (size_t)nb,
              clip->skeleton.parents, nb);
      for (int s = 0; s < 2; s++) ground[s] = fminf(ground[s], gp[ankles[s]].y);
    }
    int planted[2] = {0, 0};
    for (int f = 0; f < clip->nframes; f++) {
      anim_fk(gp, gr, clip->local_positions + (size_t)f * (size_t)nb, clip->local_rotations + (size_t)f * (size_t)nb,
              clip->skeleton.parents, nb);
      for (int s = 0; s < 2; s++) {
        vec3 p = gp[ankles[s]];
        if (p.y > ground[s] + 1e-4f) {
          planted[s] = 0;
          continue;
        }
        if (!planted[s]) anchor[s] = p, planted[s] = 1, stances++;
        float drift = sqrtf((p.x - anchor[s].x) * (p.x - anchor[s].x) + (p.z - anchor[s].z) * (p.z - anchor[s].z));
        if (drift > worst) worst = drift;
        if (drift > MAX_STANCE_ANKLE_DRIFT)
          fail_msg("clip %s frame %d: %s slid %.4f m during its stance", clip->name, f,
                   clip->skeleton.names[ankles[s]], drift);
      }
    }
  }
  printf("  %d stances, worst ankle drift %.2e m\n", stances, worst);
  assert_true(stances > 200);
  anim_procgen_clips_free(clips, n);
}

static int cmp_float(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return x < y ? -1 : x > y;
}

static void test_planted_feet_do_not_slide(void **state) {
  float *speeds = malloc((size_t)db.nframes * (size_t)db.ncontacts * sizeof *speeds), worst = 0.0f;
  int n = 0, worst_frame = -1, worst_foot = -1;
  for (int f = 2; f + 2 < db.nframes; f++)
    for (int c = 0; c < db.ncontacts; c++) {
      int inside = 1;
      for (int d = -2; d <= 2; d++) inside &= db.contacts[(size_t)(f + d) * (size_t)db.ncontacts + (size_t)c];
      if (!inside) continue;
      vec3 v = db.global_velocities[(size_t)f * (size_t)db.nbones + (size_t)db.contact_bones[c]];
      speeds[n] = sqrtf(v.x * v.x + v.z * v.z);
      if (speeds[n] > worst) worst = speeds[n], worst_frame = f, worst_foot = c;
      n++;
    }
  assert_true(n > db.nframes / 3);
  qsort(speeds, (size_t)n, sizeof *speeds, cmp_float);
  float p95 = speeds[(int)(0.95 * n)];
  free(speeds);
  printf("  contact feet: 95th percentile %.4f m/s, worst %.4f m/s over %d foot-frames\n", p95, worst, n);
  if (p95 > MAX_CONTACT_FOOT_SPEED_P95)
    fail_msg("feet in contact slide: 95th percentile %.3f m/s (worst %.3f, foot %s, frame %d)", p95, worst,
             db.skeleton.names[db.contact_bones[worst_foot]], worst_frame);
}

static void test_speeds_as_specified(void **state) {
  int n;
  const anim_procgen_clip_spec_t *specs = anim_procgen_specs(&n);
  assert_int_equal(n, db.nranges);
  for (int r = 0; r < n; r++) {
    if (specs[r].nkeys != 1 || specs[r].key_speed[0] <= 0.0f) continue; /* constant-speed clips */
    const anim_range_t *range = &db.ranges[r];
    int a = range->start + 30, z = range->stop - 30;
    vec3 p0 = db.global_positions[(size_t)a * (size_t)db.nbones],
         p1 = db.global_positions[(size_t)z * (size_t)db.nbones];
    float path = 0.0f;
    for (int f = a + 1; f <= z; f++)
      path += vec3_length(vec3_sub(db.global_positions[(size_t)f * (size_t)db.nbones],
                                   db.global_positions[(size_t)(f - 1) * (size_t)db.nbones]));
    float speed = path * db.frame_rate / (float)(z - a);
    (void)p0, (void)p1;
    if (fabsf(speed - specs[r].key_speed[0]) > SPEED_TOLERANCE * specs[r].key_speed[0])
      fail_msg("clip %s: root speed %.3f m/s, specified %.3f", specs[r].name, speed, specs[r].key_speed[0]);
  }
}

static float root_speed(int a, int z) {
  float path = 0.0f;
  for (int f = a + 1; f <= z; f++)
    path += vec3_length(vec3_sub(db.global_positions[(size_t)f * (size_t)db.nbones],
                                 db.global_positions[(size_t)(f - 1) * (size_t)db.nbones]));
  return path * db.frame_rate / (float)(z - a);
}

static void test_standing_still(void **state) {
  int n;
  const anim_procgen_clip_spec_t *specs = anim_procgen_specs(&n);
  for (int r = 0; r < n; r++) {
    const anim_procgen_clip_spec_t *spec = &specs[r];
    float final_speed = spec->key_speed[spec->nkeys - 1];
    if (final_speed > 0.0f) continue;
    /* Idle throughout; stops from half a second after their last key. */
    int a = spec->nkeys == 1 ? db.ranges[r].start : db.ranges[r].stop - 30;
    float v = root_speed(a, db.ranges[r].stop - 1);
    if (v > MAX_STANDING_SPEED) fail_msg("clip %s: root moves at %.3f m/s where it should stand", spec->name, v);
  }
}

static void test_turn_rates_as_specified(void **state) {
  int n, turns = 0;
  const anim_procgen_clip_spec_t *specs = anim_procgen_specs(&n);
  for (int r = 0; r < n; r++) {
    if (specs[r].turn_rate == 0.0f) continue;
    /* Skip the ease-in and the smoothed ends; unwrap the yaw as it goes. */
    int a = db.ranges[r].start + 60, z = db.ranges[r].stop - 30;
    float turned = 0.0f;
    for (int f = a + 1; f <= z; f++) {
      quat q0 = db.global_rotations[(size_t)(f - 1) * (size_t)db.nbones],
           q1 = db.global_rotations[(size_t)f * (size_t)db.nbones];
      vec3 d0 = quat_mul_vec3(q0, vec3_make(0, 0, 1)), d1 = quat_mul_vec3(q1, vec3_make(0, 0, 1));
      turned += atan2f(d0.z * d1.x - d0.x * d1.z, d0.x * d1.x + d0.z * d1.z);
    }
    float rate = turned * db.frame_rate / (float)(z - a);
    if (fabsf(rate - specs[r].turn_rate) > TURN_RATE_TOLERANCE * fabsf(specs[r].turn_rate))
      fail_msg("clip %s: turns at %.3f rad/s, specified %.3f", specs[r].name, rate, specs[r].turn_rate);
    turns++;
  }
  assert_true(turns >= 6);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_invalid_specs),
      cmocka_unit_test(test_deterministic),
      cmocka_unit_test(test_stance_ankles_fixed),
      cmocka_unit_test(test_standing_still),
      cmocka_unit_test(test_turn_rates_as_specified),
      cmocka_unit_test(test_valid_and_finite),
      cmocka_unit_test(test_planted_feet_do_not_slide),
      cmocka_unit_test(test_speeds_as_specified),
  };
  return cmocka_run_group_tests_name("procgen", tests, setup, teardown);
}
