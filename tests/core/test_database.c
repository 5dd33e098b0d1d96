/*
 * test_database.c: databases built from real motion capture (all 14 Bandai
 * Namco clips, 60 Hz, mirrored). Invalid builds first; then ranges, the
 * simulation bone on the ground facing the travel, velocities against finite
 * differences of forward kinematics, foot contacts, mirroring. Then clips
 * matched by bone name (joint order free, the first difference of other
 * skeletons named, GAMES-105's two orders in one database, Mixamo names),
 * and bones named explicitly. Failures name the worst bone and frame.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>
#include "anim_error.h"
#include "clip_reorder.h"
#include "offline/bvh.h"
#include "offline/import.h"
#include "pose/kinematics.h"
#include "offline/procgen.h"
#include "shared_data.h"

/* Thresholds in one place, with their reasons. */
/* Facing vs travel on straight forward clips: the smoothed facing follows the
 * hips' left-right axis, which sways a little within a stride (measured worst
 * mean 9 degrees, walk-left); a wrong axis would be 90 or 180. */
#define MAX_MEAN_FACING_ERROR_DEG 12.0f
/* FK velocity vs central differences of FK positions, m/s. The two differ by
 * the curvature of the path over two frames: measured worst 0.34 m/s (a foot
 * of the dash clips); a wrong sign or frame would be metres per second. */
#define MAX_VELOCITY_ERROR 0.5f
/* Horizontal distance of the hips from the simulation bone, m: the smoothed
 * path misses the hips' sway (measured worst 0.032, dash); clamped instead of
 * reflected ends gave 0.17, and a joint_Root left at the origin metres. */
#define MAX_HIPS_FROM_SIMULATION 0.08f

static anim_database_t db;
static int have_db;

static int load_bandai(void **state) {
  char path[1024];
  struct stat st;
  /* Without shared data the tests that need it say skipped (or fail under CI). */
  snprintf(path, sizeof path, "%s/data/mocap/bandai-namco", anim_test_shared_dir());
  if (stat(path, &st) != 0) return 0;
  have_db = anim_test_bandai_database(&db);
  return have_db ? 0 : -1;
}

static int free_db(void **state) {
  if (have_db) anim_database_free(&db);
  return 0;
}

static int need_db(void) {
  char path[1024];
  return anim_test_shared_path(path, sizeof path, "data/mocap/bandai-namco") && have_db;
}

/* ---- invalid builds ----------------------------------------------------------------- */

static void test_invalid_builds(void **state) {
  anim_database_t out;
  char err[256];
  anim_clip_t a, b;
  int n;
  const anim_procgen_clip_spec_t *specs = anim_procgen_specs(&n);
  assert_int_equal(anim_procgen_clip(&a, &specs[0], 60.0f), 0);
  assert_int_equal(anim_procgen_clip(&b, &specs[1], 60.0f), 0);
  assert_int_equal(anim_database_build(&out, "x", NULL, 0, NULL, err, sizeof err), ANIM_EINVAL);
  anim_build_options_t o;
  anim_build_options_default(&o);
  o.frame_rate = 0.0f;
  assert_int_equal(anim_database_build(&out, "x", &a, 1, &o, err, sizeof err), ANIM_EINVAL);
  /* Clips with different skeletons do not mix. */
  snprintf(b.skeleton.names[3], ANIM_NAME_MAX, "Renamed");
  anim_clip_t both[2] = {a, b};
  assert_int_equal(anim_database_build(&out, "x", both, 2, NULL, err, sizeof err), ANIM_EINVAL);
  assert_non_null(strstr(err, "skeleton"));
  /* Contact options: a bone the skeleton lacks, a NaN threshold. */
  anim_build_options_default(&o);
  o.contact_bone_names[0] = "NoSuchFoot";
  assert_int_equal(anim_database_build(&out, "x", &a, 1, &o, err, sizeof err), ANIM_ENOTFOUND);
  assert_non_null(strstr(err, "contact bone"));
  anim_build_options_default(&o);
  o.contact_height = NAN;
  assert_int_equal(anim_database_build(&out, "x", &a, 1, &o, err, sizeof err), ANIM_EINVAL);
  /* A skeleton with no room for the simulation bone. */
  anim_clip_t big = a;
  big.skeleton.nbones = ANIM_MAX_BONES;
  assert_int_equal(anim_database_build(&out, "x", &big, 1, NULL, err, sizeof err), ANIM_EINVAL);
  /* A non-unit rotation is caught by clip validation. */
  a.local_rotations[5].w = 3.0f;
  assert_int_equal(anim_database_build(&out, "x", &a, 1, NULL, err, sizeof err), ANIM_EFORMAT);
  anim_clip_free(&a);
  anim_clip_free(&b);
}

/* The version is a function of the content: the same clips give the same
 * version; a tag, a moved sample or a mirror changes it. */
static void test_version_tracks_content(void **state) {
  anim_clip_t a;
  anim_database_t one, two;
  char err[256];
  int n;
  const anim_procgen_clip_spec_t *specs = anim_procgen_specs(&n);
  assert_int_equal(anim_procgen_clip(&a, &specs[0], 60.0f), 0);
  assert_int_equal(anim_database_build(&one, "x", &a, 1, NULL, err, sizeof err), 0);
  assert_int_equal(anim_database_build(&two, "x", &a, 1, NULL, err, sizeof err), 0);
  assert_true(one.version != 0 && one.version == two.version);
  assert_int_equal(anim_database_tag_range(&two, 0, "idle"), 0);
  anim_database_update_version(&two);
  uint64_t tagged = two.version;
  assert_true(tagged != one.version);
  two.local_positions[7].y += 1e-6f;
  anim_database_update_version(&two);
  assert_true(two.version != tagged);
  anim_database_free(&two);
  anim_build_options_t o;
  anim_build_options_default(&o);
  o.mirror = 1;
  assert_int_equal(anim_database_build(&two, "x", &a, 1, &o, err, sizeof err), 0);
  assert_true(two.version != one.version);
  anim_database_free(&one);
  anim_database_free(&two);
  anim_clip_free(&a);
}

/* ---- real data ---------------------------------------------------------------------- */

static void test_ranges_frames_and_tags(void **state) {
  if (!need_db()) return;
  char err[256];
  assert_int_equal(anim_database_validate(&db, err, sizeof err), 0);
  assert_int_equal(db.nranges, 28);
  /* 30 Hz clips resampled to 60 Hz: about twice the frames, twice again mirrored. */
  assert_true(db.nframes > 5800 && db.nframes < 6300);
  int mirror = anim_database_find_tag(&db, "mirror");
  assert_true(mirror >= 0);
  for (int r = 0; r < db.nranges; r++) {
    assert_int_equal((db.ranges[r].tag_mask >> mirror) & 1, r % 2);
    assert_int_equal(anim_database_range_of(&db, db.ranges[r].start), r);
    assert_int_equal(anim_database_range_of(&db, db.ranges[r].stop - 1), r);
  }
  assert_int_equal(anim_database_range_of(&db, db.nframes), -1);
  assert_true(db.version != 0);
}

static void test_simulation_bone_on_ground_facing_travel(void **state) {
  if (!need_db()) return;
  for (int f = 0; f < db.nframes; f++) {
    vec3 p = db.global_positions[(size_t)f * (size_t)db.nbones];
    if (fabsf(p.y) > 1e-6f) fail_msg("frame %d: simulation bone at height %g", f, p.y);
  }
  /* Straight forward walks and runs: facing within a few degrees of travel. */
  for (int r = 0; r < db.nranges; r++) {
    const char *name = db.ranges[r].name;
    if (!strstr(name, "walk_normal_001") && !strstr(name, "run_normal") && !strstr(name, "walk-left")) continue;
    if (strstr(name, "dataset-1_run_normal")) continue; /* one cycle: too short to judge */
    float sum = 0.0f;
    int n = 0;
    for (int f = db.ranges[r].start + 30; f < db.ranges[r].stop - 30; f++) {
      size_t k = (size_t)f * (size_t)db.nbones;
      vec3 v = db.global_velocities[k];
      if (sqrtf(v.x * v.x + v.z * v.z) < 0.5f) continue;
      vec3 facing = quat_mul_vec3(db.global_rotations[k], vec3_make(0, 0, 1));
      float angle = acosf(clampf((facing.x * v.x + facing.z * v.z) / sqrtf(v.x * v.x + v.z * v.z), -1.0f, 1.0f));
      sum += angle * 180.0f / ANIM_PI, n++;
    }
    assert_true(n > 20);
    if (sum / (float)n > MAX_MEAN_FACING_ERROR_DEG)
      fail_msg("range %s: facing is %.1f degrees off the travel on average", name, sum / (float)n);
  }
}

static void test_velocities_match_fk_differences(void **state) {
  if (!need_db()) return;
  float worst = 0.0f;
  int worst_frame = -1, worst_bone = -1;
  for (int r = 0; r < db.nranges; r++)
    for (int f = db.ranges[r].start + 1; f + 1 < db.ranges[r].stop; f++)
      for (int b = 0; b < db.nbones; b++) {
        size_t k0 = (size_t)(f - 1) * (size_t)db.nbones + (size_t)b,
               k1 = (size_t)(f + 1) * (size_t)db.nbones + (size_t)b;
        vec3 fd = vec3_scale(vec3_sub(db.global_positions[k1], db.global_positions[k0]), db.frame_rate / 2.0f);
        float e = vec3_length(vec3_sub(fd, db.global_velocities[(size_t)f * (size_t)db.nbones + (size_t)b]));
        if (e > worst) worst = e, worst_frame = f, worst_bone = b;
      }
  if (worst > MAX_VELOCITY_ERROR)
    fail_msg("velocity error %.3f m/s at bone %s frame %d", worst, db.skeleton.names[worst_bone], worst_frame);
}

static void test_foot_contacts_alternate(void **state) {
  if (!need_db()) return;
  assert_int_equal(db.ncontacts, 2);
  /* Every walk, mirrored ones included (measured 49-56% per foot, toes). */
  for (int r = 0; r < db.nranges; r++) {
    if (!strstr(db.ranges[r].name, "walk")) continue;
    int counts[2] = {0, 0}, changes = 0, n = db.ranges[r].stop - db.ranges[r].start;
    for (int f = db.ranges[r].start; f < db.ranges[r].stop; f++)
      for (int c = 0; c < 2; c++) {
        counts[c] += db.contacts[(size_t)f * 2 + (size_t)c];
        if (f > db.ranges[r].start &&
            db.contacts[(size_t)f * 2 + (size_t)c] != db.contacts[(size_t)(f - 1) * 2 + (size_t)c])
          changes++;
      }
    /* Walking: each foot down 30-80% of the time, and many steps. */
    for (int c = 0; c < 2; c++)
      if (counts[c] < n * 3 / 10 || counts[c] > n * 8 / 10)
        fail_msg("range %s: foot %d in contact %d of %d frames", db.ranges[r].name, c, counts[c], n);
    /* Even the one-cycle clips (61 frames) lift and plant each foot. */
    if (changes < 4) fail_msg("range %s: contacts change only %d times", db.ranges[r].name, changes);
  }
}

/* anim_database_contacts: a frame's flags as bits, bit c for contact bone c;
 * both feet's bits are seen across the walks (so a lost bit would fail). */
static void test_contact_bits(void **state) {
  if (!need_db()) return;
  uint32_t seen = 0;
  for (int f = 0; f < db.nframes; f++) {
    uint32_t bits = anim_database_contacts(&db, f), want = 0;
    for (int c = 0; c < db.ncontacts; c++)
      if (db.contacts[(size_t)f * (size_t)db.ncontacts + (size_t)c]) want |= 1u << c;
    if (bits != want) fail_msg("frame %d: bits %#x, flags %#x", f, bits, want);
    seen |= bits;
  }
  assert_int_equal(seen, 3u);
}

static void test_mirror_reflects(void **state) {
  if (!need_db()) return;
  /* Range 2r+1 is range 2r mirrored: the hips' local x (relative to the
   * simulation bone) flips sign, up stays. */
  int hips = anim_skeleton_find(&db.skeleton, "Hips");
  for (int r = 0; r < db.nranges; r += 2) {
    const anim_range_t *a = &db.ranges[r], *b = &db.ranges[r + 1];
    assert_int_equal(a->stop - a->start, b->stop - b->start);
    float worst = 0.0f;
    for (int f = 0; f < a->stop - a->start; f++) {
      size_t ka = (size_t)(a->start + f) * (size_t)db.nbones, kb = (size_t)(b->start + f) * (size_t)db.nbones;
      vec3 pa = quat_inv_mul_vec3(db.global_rotations[ka],
                                  vec3_sub(db.global_positions[ka + (size_t)hips], db.global_positions[ka]));
      vec3 pb = quat_inv_mul_vec3(db.global_rotations[kb],
                                  vec3_sub(db.global_positions[kb + (size_t)hips], db.global_positions[kb]));
      worst = fmaxf(worst, fmaxf(fabsf(pa.x + pb.x), fabsf(pa.y - pb.y)));
    }
    if (worst > 0.02f) fail_msg("range %s: mirrored hips differ by %.3f m", a->name, worst);
  }
}

/* A mirrored clip keeps each bone's own axis convention: its local rotations
 * stay near the original clip's (left and right half a gait cycle apart: up
 * to 1.2 rad on average for a dash's swinging arms), never half a turn (3.1)
 * away. Bandai's hips have local x
 * pointing up, where a plain reflection of local rotations turned the hips,
 * shoulders and thighs of every mirrored frame by a half turn (3.1 rad), and
 * a transition between a clip and its mirror swung the body round. */
static void test_mirror_keeps_bone_frames(void **state) {
  if (!need_db()) return;
  float worst = 0.0f;
  int worst_bone = -1, worst_range = -1;
  for (int r = 0; r < db.nranges; r += 2) {
    const anim_range_t *a = &db.ranges[r], *b = &db.ranges[r + 1];
    for (int bone = 1; bone < db.nbones; bone++) {
      double sum = 0.0;
      int n = a->stop - a->start;
      for (int f = 0; f < n; f++) {
        quat qa = db.local_rotations[(size_t)(a->start + f) * (size_t)db.nbones + (size_t)bone];
        quat qb = db.local_rotations[(size_t)(b->start + f) * (size_t)db.nbones + (size_t)bone];
        sum += 2.0 * acos(fmin(1.0, fabs((double)quat_dot(qa, qb))));
      }
      float mean = (float)(sum / n);
      if (mean > worst) worst = mean, worst_bone = bone, worst_range = r;
    }
  }
  printf("mirrored local rotations: worst mean angle to the original %.2f rad (%s in %s)\n", worst,
         db.skeleton.names[worst_bone], db.ranges[worst_range].name);
  if (worst > 2.0f)
    fail_msg("%s in %s: mirrored local rotations %.2f rad from the original's on average",
             db.skeleton.names[worst_bone], db.ranges[worst_range].name, worst);
}

/* Bandai's ground-level joint_Root is folded into the simulation bone, and
 * the hips hang from it close by; a frame-for-frame comparison with the
 * source clip shows the global poses unchanged. */
static void test_source_root_folded_poses_kept(void **state) {
  if (!need_db()) return;
  int root = anim_skeleton_find(&db.skeleton, "joint_Root"), hips = anim_skeleton_find(&db.skeleton, "Hips");
  assert_int_equal(root, 1);
  assert_int_equal(db.skeleton.parents[hips], root);
  float worst = 0.0f;
  int worst_frame = -1;
  for (int f = 0; f < db.nframes; f++) {
    size_t k = (size_t)f * (size_t)db.nbones;
    vec3 lp = db.local_positions[k + (size_t)root], hp = db.local_positions[k + (size_t)hips];
    assert_true(vec3_length(lp) == 0.0f && db.local_rotations[k + (size_t)root].w == 1.0f);
    float off = sqrtf(hp.x * hp.x + hp.z * hp.z);
    if (off > worst) worst = off, worst_frame = f;
  }
  /* The smoothed path lags the hips' sway and a stride at most. */
  if (worst > MAX_HIPS_FROM_SIMULATION)
    fail_msg("hips %.3f m from the simulation bone at frame %d (%s)", worst, worst_frame,
             db.ranges[anim_database_range_of(&db, worst_frame)].name);
  /* Range 0 is the first clip in name order, resampled 30 -> 60 Hz: its even
   * frames are the source frames. */
  char path[1024], err[256];
  if (!anim_test_shared_path(path, sizeof path, "data/mocap/bandai-namco/dataset-1_dash_active_001.bvh")) return;
  anim_clip_t clip;
  anim_bvh_options_t o = {0.01f};
  assert_int_equal(anim_bvh_load(&clip, path, &o, err, sizeof err), 0);
  assert_string_equal(db.ranges[0].name, clip.name);
  int nb = clip.skeleton.nbones;
  vec3 gp[ANIM_MAX_BONES];
  quat gr[ANIM_MAX_BONES];
  float worst_pos = 0.0f;
  int wf = -1, wb = -1;
  for (int f = 0; f < clip.nframes && 2 * f < db.ranges[0].stop; f++) {
    anim_fk(gp, gr, clip.local_positions + (size_t)f * (size_t)nb, clip.local_rotations + (size_t)f * (size_t)nb,
            clip.skeleton.parents, nb);
    for (int b = 1; b < nb; b++) {
      float e = vec3_length(vec3_sub(gp[b], db.global_positions[(size_t)(2 * f) * (size_t)db.nbones + (size_t)b + 1]));
      if (e > worst_pos) worst_pos = e, wf = f, wb = b;
    }
  }
  if (worst_pos > 1e-3f)
    fail_msg("bone %s frame %d: %.4f m from the source pose", clip.skeleton.names[wb], wf, worst_pos);
  anim_clip_free(&clip);
}

/* ---- skeletons matched by name ---------------------------------------------------------- */

/* Collects warnings: how many, and the last. */
typedef struct {
  int count;
  char last[512];
} warnings_t;

static void collect_warning(void *ctx, const char *message) {
  warnings_t *w = ctx;
  w->count++;
  snprintf(w->last, sizeof w->last, "%s", message);
}

/* Joints listed in another order join the first clip's database, reordered
 * to its order: the database is the one the first order would give (same
 * version), and a warning names the clip. */
static void test_joint_order_does_not_matter(void **state) {
  int n;
  const anim_procgen_clip_spec_t *specs = anim_procgen_specs(&n);
  anim_clip_t clips[2], reordered;
  assert_int_equal(anim_procgen_clip(&clips[0], &specs[2], 60.0f), 0); /* walk */
  assert_int_equal(anim_procgen_clip(&clips[1], &specs[6], 60.0f), 0); /* walk_turn_left */
  assert_int_equal(anim_test_reverse_children(&clips[1], &reordered), 0);
  assert_int_equal(reordered.skeleton.nbones, clips[1].skeleton.nbones);
  snprintf(reordered.name, sizeof reordered.name, "%.40s_reordered", clips[1].name);
  assert_string_not_equal(reordered.skeleton.names[1], clips[1].skeleton.names[1]);
  anim_database_t same, mixed;
  char err[256];
  warnings_t w = {0, ""};
  anim_build_options_t o;
  anim_build_options_default(&o);
  o.warn = collect_warning, o.warn_ctx = &w;
  assert_int_equal(anim_database_build(&same, "x", clips, 2, &o, err, sizeof err), 0);
  assert_int_equal(w.count, 0);
  anim_clip_t both[2] = {clips[0], reordered};
  snprintf(both[1].name, sizeof both[1].name, "%s", clips[1].name); /* the same range names */
  if (anim_database_build(&mixed, "x", both, 2, &o, err, sizeof err)) fail_msg("%s", err);
  assert_int_equal(w.count, 1);
  assert_non_null(strstr(w.last, "walk_turn_left"));
  assert_non_null(strstr(w.last, "matched by name"));
  assert_true(mixed.version == same.version);
  anim_database_free(&mixed);
  /* The other way round: the database takes the reordered clip's order. */
  anim_clip_t swapped[2] = {reordered, clips[0]};
  assert_int_equal(anim_database_build(&mixed, "x", swapped, 2, NULL, err, sizeof err), 0);
  int nb = same.nbones;
  for (int f = 0; f < same.nframes; f++)
    for (int b = 0; b < nb; b++) {
      int m = anim_skeleton_find(&mixed.skeleton, same.skeleton.names[b]);
      /* Range 1 of one is range 0 of the other: compare by range. */
      int fs = f, fm = f < same.ranges[1].start ? f + mixed.ranges[1].start : f - same.ranges[1].start;
      vec3 d = vec3_sub(same.global_positions[(size_t)fs * (size_t)nb + (size_t)b],
                        mixed.global_positions[(size_t)fm * (size_t)nb + (size_t)m]);
      if (vec3_length(d) > 1e-5f)
        fail_msg("bone %s frame %d: %.6f m apart", same.skeleton.names[b], f, (double)vec3_length(d));
    }
  anim_database_free(&mixed);
  anim_database_free(&same);
  anim_clip_free(&reordered);
  anim_clip_free(&clips[0]);
  anim_clip_free(&clips[1]);
}

/* Skeletons that differ beyond their order: the error names the clip and the first difference. */
static void test_different_skeletons_named(void **state) {
  int n;
  const anim_procgen_clip_spec_t *specs = anim_procgen_specs(&n);
  anim_clip_t a, b;
  anim_database_t out;
  char err[256];
  assert_int_equal(anim_procgen_clip(&a, &specs[2], 60.0f), 0);
  assert_int_equal(anim_procgen_clip(&b, &specs[3], 60.0f), 0);
  int foot = anim_skeleton_find(&a.skeleton, "LeftFoot"), hips = anim_skeleton_find(&a.skeleton, "Hips");
  anim_clip_t pair[2] = {a, b};
  snprintf(pair[1].skeleton.names[foot], ANIM_NAME_MAX, "LeftAnkle");
  assert_int_equal(anim_database_build(&out, "x", pair, 2, NULL, err, sizeof err), ANIM_EINVAL);
  assert_non_null(strstr(err, "jog"));
  assert_non_null(strstr(err, "has no bone \"LeftFoot\""));
  pair[1] = b;
  pair[1].skeleton.parents[foot] = hips;
  assert_int_equal(anim_database_build(&out, "x", pair, 2, NULL, err, sizeof err), ANIM_EINVAL);
  assert_non_null(strstr(err, "bone \"LeftFoot\" hangs from \"Hips\" here, from \"LeftLeg\""));
  /* A bone the first clip lacks (the last bone is a leaf: dropping it keeps the rest valid). */
  pair[0] = a, pair[1] = b;
  pair[0].skeleton.nbones--;
  anim_clip_t shorter;
  assert_int_equal(anim_clip_alloc(&shorter, &pair[0].skeleton, 2, a.frame_time), 0);
  snprintf(shorter.name, sizeof shorter.name, "short");
  pair[0] = shorter;
  assert_int_equal(anim_database_build(&out, "x", pair, 2, NULL, err, sizeof err), ANIM_EINVAL);
  char expect[128];
  snprintf(expect, sizeof expect, "has a bone \"%s\" the first clip lacks", a.skeleton.names[a.skeleton.nbones - 1]);
  assert_non_null(strstr(err, expect));
  anim_clip_free(&shorter);
  anim_clip_free(&a);
  anim_clip_free(&b);
}

/* The GAMES-105 folder: four clips in one joint order, two in another. */
static void test_games105_orders_join(void **state) {
  char path[1024], err[512];
  if (!anim_test_shared_path(path, sizeof path, "data/mocap/games105")) return;
  anim_clip_list_t clips = {NULL, 0, 0};
  anim_bvh_options_t bo = {1.0f};
  assert_int_equal(anim_import_path(&clips, path, &bo, err, sizeof err), 0);
  warnings_t w = {0, ""};
  anim_build_options_t o;
  anim_build_options_default(&o);
  o.warn = collect_warning, o.warn_ctx = &w;
  anim_database_t g;
  if (anim_database_build(&g, "games105", clips.clips, clips.count, &o, err, sizeof err)) fail_msg("%s", err);
  assert_int_equal(g.nranges, 6);
  assert_int_equal(w.count, 2); /* run_forward, walkF */
  assert_int_equal(g.ncontacts, 2);
  assert_string_equal(g.skeleton.names[g.contact_bones[0]], "lToeJoint");
  anim_database_free(&g);
  anim_clip_list_free(&clips);
}

/* A Mixamo-rigged BVH (every joint "mixamorig:..."): CMU MotionBuilder's
 * 02_01 with its joints renamed as Mixamo names them builds with the
 * default schema and contacts. */
static void test_mixamo_names(void **state) {
  char path[1024], err[512];
  if (!anim_test_shared_path(path, sizeof path, "data/mocap/cmu-motionbuilder/02_01.bvh")) return;
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *text = malloc((size_t)len), *renamed = malloc((size_t)len * 2);
  assert_true(text && renamed && fread(text, 1, (size_t)len, f) == (size_t)len);
  fclose(f);
  size_t at = 0;
  for (long i = 0; i < len; i++) {
    renamed[at++] = text[i];
    int joint = i >= 5 && !memcmp(text + i - 5, "JOINT ", 6), root = i >= 4 && !memcmp(text + i - 4, "ROOT ", 5);
    if (joint || root) at += (size_t)sprintf(renamed + at, "mixamorig:");
  }
  anim_clip_t clip;
  anim_bvh_options_t bo = {0.056444f};
  if (anim_bvh_parse(&clip, renamed, at, "mixamo.bvh", &bo, err, sizeof err)) fail_msg("%s", err);
  assert_string_equal(clip.skeleton.names[0], "mixamorig:Hips");
  anim_database_t m;
  if (anim_database_build(&m, "mixamo", &clip, 1, NULL, err, sizeof err)) fail_msg("%s", err);
  assert_string_equal(m.skeleton.names[m.contact_bones[0]], "mixamorig:LeftToeBase");
  anim_feature_schema_t schema;
  assert_int_equal(anim_feature_schema_default(&schema, &m), 0);
  assert_string_equal(schema.terms[0].bone, "mixamorig:LeftFoot");
  assert_string_equal(schema.terms[4].bone, "mixamorig:Hips");
  assert_int_equal(anim_features_build(&m, &schema, err, sizeof err), 0);
  anim_database_free(&m);
  anim_clip_free(&clip);
  free(text), free(renamed);
}

/* options.bones names the bones a role plays: contacts, the default schema;
 * a name the skeleton lacks is an error naming the role. Without toes or
 * feet the database builds without contacts, with a warning. */
static void test_explicit_bones(void **state) {
  int n;
  const anim_procgen_clip_spec_t *specs = anim_procgen_specs(&n);
  anim_clip_t a;
  anim_database_t out;
  char err[256];
  assert_int_equal(anim_procgen_clip(&a, &specs[2], 60.0f), 0);
  anim_build_options_t o;
  anim_build_options_default(&o);
  o.bones.names[ANIM_BONE_TOE_LEFT] = "LeftFoot";
  assert_int_equal(anim_database_build(&out, "x", &a, 1, &o, err, sizeof err), 0);
  assert_string_equal(out.skeleton.names[out.contact_bones[0]], "LeftFoot");
  assert_string_equal(out.skeleton.names[out.contact_bones[1]], "RightToe");
  anim_feature_schema_t schema;
  anim_bone_names_t feet = {{NULL}};
  feet.names[ANIM_BONE_FOOT_RIGHT] = "RightToe";
  assert_int_equal(anim_feature_schema_make(&schema, &out, &feet, err, sizeof err), 0);
  assert_string_equal(schema.terms[1].bone, "RightToe");
  feet.names[ANIM_BONE_FOOT_RIGHT] = "RightPaw";
  assert_int_equal(anim_feature_schema_make(&schema, &out, &feet, err, sizeof err), ANIM_ENOTFOUND);
  assert_non_null(strstr(err, "foot-right"));
  anim_database_free(&out);
  o.bones.names[ANIM_BONE_TOE_LEFT] = "LeftPaw";
  assert_int_equal(anim_database_build(&out, "x", &a, 1, &o, err, sizeof err), ANIM_ENOTFOUND);
  assert_non_null(strstr(err, "toe-left"));
  /* No toes or feet by name: no contacts, a warning per side. */
  anim_clip_t odd = a;
  for (int b = 0; b < odd.skeleton.nbones; b++) snprintf(odd.skeleton.names[b], ANIM_NAME_MAX, "bone%d", b);
  warnings_t w = {0, ""};
  anim_build_options_default(&o);
  o.warn = collect_warning, o.warn_ctx = &w;
  assert_int_equal(anim_database_build(&out, "x", &odd, 1, &o, err, sizeof err), 0);
  assert_int_equal(out.ncontacts, 0);
  assert_int_equal(w.count, 2);
  assert_non_null(strstr(w.last, "--bone toe-right=NAME"));
  assert_int_equal(anim_feature_schema_make(&schema, &out, NULL, err, sizeof err), ANIM_ENOTFOUND);
  assert_non_null(strstr(err, "foot-left"));
  anim_database_free(&out);
  anim_clip_free(&a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_invalid_builds),
      cmocka_unit_test(test_version_tracks_content),
      cmocka_unit_test(test_ranges_frames_and_tags),
      cmocka_unit_test(test_simulation_bone_on_ground_facing_travel),
      cmocka_unit_test(test_velocities_match_fk_differences),
      cmocka_unit_test(test_foot_contacts_alternate),
      cmocka_unit_test(test_contact_bits),
      cmocka_unit_test(test_mirror_reflects),
      cmocka_unit_test(test_mirror_keeps_bone_frames),
      cmocka_unit_test(test_source_root_folded_poses_kept),
      cmocka_unit_test(test_joint_order_does_not_matter),
      cmocka_unit_test(test_different_skeletons_named),
      cmocka_unit_test(test_games105_orders_join),
      cmocka_unit_test(test_mixamo_names),
      cmocka_unit_test(test_explicit_bones),
  };
  return cmocka_run_group_tests_name("database", tests, load_bandai, free_db);
}
