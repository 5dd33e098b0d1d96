/*
 * procgen.c: the procedural locomotion generator (see procgen.h).
 *
 * Per clip: integrate the ground path from the speed and turn-rate profile;
 * advance a gait phase whose cadence and stance fraction depend on speed;
 * fix a footprint for every stance (under the body at mid-stance) and swing
 * the foot between footprints on an arc; solve each leg with two-bone IK;
 * add hip bob and sway, chest counter-twist and arm swing. The phase stops
 * only in double support, so standing still means both feet planted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "pose/kinematics.h"
#include "offline/procgen.h"

enum {
  HIPS, SPINE, CHEST, NECK, HEAD,
  L_UPLEG, L_LEG, L_FOOT, L_TOE,
  R_UPLEG, R_LEG, R_FOOT, R_TOE,
  L_SHOULDER, L_ARM, L_FOREARM, L_HAND,
  R_SHOULDER, R_ARM, R_FOREARM, R_HAND,
  NBONES
};

#define THIGH 0.43f
#define SHIN 0.42f
#define ANKLE_HEIGHT 0.07f
#define FOOT_SPREAD 0.1f

static const struct {
  const char *name;
  int parent;
  float x, y, z;
} bones[NBONES] = {
    {"Hips", -1, 0, 0.93f, 0},        {"Spine", HIPS, 0, 0.10f, 0},       {"Chest", SPINE, 0, 0.20f, 0},
    {"Neck", CHEST, 0, 0.22f, 0},      {"Head", NECK, 0, 0.10f, 0},        {"LeftUpLeg", HIPS, 0.09f, -0.05f, 0},
    {"LeftLeg", L_UPLEG, 0, -THIGH, 0}, {"LeftFoot", L_LEG, 0, -SHIN, 0},   {"LeftToe", L_FOOT, 0, -0.05f, 0.13f},
    {"RightUpLeg", HIPS, -0.09f, -0.05f, 0}, {"RightLeg", R_UPLEG, 0, -THIGH, 0}, {"RightFoot", R_LEG, 0, -SHIN, 0},
    {"RightToe", R_FOOT, 0, -0.05f, 0.13f}, {"LeftShoulder", CHEST, 0.05f, 0.15f, 0},
    {"LeftArm", L_SHOULDER, 0.13f, 0.02f, 0}, {"LeftForeArm", L_ARM, 0, -0.28f, 0},
    {"LeftHand", L_FOREARM, 0, -0.26f, 0}, {"RightShoulder", CHEST, -0.05f, 0.15f, 0},
    {"RightArm", R_SHOULDER, -0.13f, 0.02f, 0}, {"RightForeArm", R_ARM, 0, -0.28f, 0},
    {"RightHand", R_FOREARM, 0, -0.26f, 0},
};

#define DEG (ANIM_PI / 180.0f)

static const anim_procgen_clip_spec_t specs[] = {
    {"idle", "idle", 4.0f, 1, {0}, {0}, 0},
    {"walk_slow", "walk", 5.0f, 1, {0}, {1.0f}, 0},
    {"walk", "walk", 5.0f, 1, {0}, {1.5f}, 0},
    {"jog", "jog", 4.0f, 1, {0}, {2.5f}, 0},
    {"run", "run", 4.0f, 1, {0}, {3.5f}, 0},
    {"sprint", "run", 3.0f, 1, {0}, {5.0f}, 0},
    {"walk_turn_left", "walk turn", 5.0f, 1, {0}, {1.5f}, 45 * DEG},
    {"walk_turn_right", "walk turn", 5.0f, 1, {0}, {1.5f}, -45 * DEG},
    {"walk_sharp_left", "walk turn", 4.0f, 1, {0}, {1.2f}, 90 * DEG},
    {"walk_sharp_right", "walk turn", 4.0f, 1, {0}, {1.2f}, -90 * DEG},
    {"run_turn_left", "run turn", 4.0f, 1, {0}, {3.5f}, 60 * DEG},
    {"run_turn_right", "run turn", 4.0f, 1, {0}, {3.5f}, -60 * DEG},
    {"walk_start", "walk start", 4.0f, 3, {0, 1.0f, 2.0f}, {0, 0, 1.5f}, 0},
    {"walk_stop", "walk stop", 4.0f, 3, {0, 2.0f, 2.8f}, {1.5f, 1.5f, 0}, 0},
    {"run_start", "run start", 4.0f, 3, {0, 1.0f, 2.2f}, {0, 0, 3.5f}, 0},
    {"run_stop", "run stop", 4.0f, 3, {0, 2.0f, 3.2f}, {3.5f, 3.5f, 0}, 0},
    {"walk_to_run", "walk run", 6.0f, 4, {0, 1.5f, 3.5f, 4.5f}, {1.0f, 1.0f, 3.5f, 3.5f}, 0},
    {"run_to_walk", "walk run", 6.0f, 4, {0, 1.5f, 3.5f, 4.5f}, {3.5f, 3.5f, 1.0f, 1.0f}, 0},
};

const anim_procgen_clip_spec_t *anim_procgen_specs(int *out_count) {
  *out_count = (int)(sizeof specs / sizeof specs[0]);
  return specs;
}

void anim_procgen_skeleton(anim_skeleton_t *s) {
  memset(s, 0, sizeof *s);
  s->nbones = NBONES;
  for (int b = 0; b < NBONES; b++) {
    snprintf(s->names[b], ANIM_NAME_MAX, "%s", bones[b].name);
    s->parents[b] = bones[b].parent;
    s->offsets[b] = vec3_make(bones[b].x, bones[b].y, bones[b].z);
  }
}

/* ---- gait ------------------------------------------------------------------------ */

static float speed_at(const anim_procgen_clip_spec_t *s, float t) {
  if (t <= s->key_time[0] || s->nkeys == 1) return s->key_speed[0];
  for (int k = 1; k < s->nkeys; k++)
    if (t < s->key_time[k]) {
      float a = (t - s->key_time[k - 1]) / (s->key_time[k] - s->key_time[k - 1]);
      return s->key_speed[k - 1] + a * (s->key_speed[k] - s->key_speed[k - 1]);
    }
  return s->key_speed[s->nkeys - 1];
}

static float cadence(float v) { return 1.8f + 0.45f * v; } /* steps per second */
static float duty(float v) { return clampf(0.62f - 0.08f * v, 0.32f, 0.62f); }

static int in_stance(float phase, float d, int right) {
  float p = phase + (right ? 0.5f : 0.0f);
  p -= floorf(p);
  return p < d;
}

/* The ground path, facing and gait phase of every frame. */
typedef struct {
  int n;
  vec3 *path;
  float *heading, *speed, *phase, *turn;
} gait_t;

static void gait_free(gait_t *g) { free(g->path), free(g->heading), free(g->speed), free(g->phase), free(g->turn); }

static int gait_simulate(gait_t *g, const anim_procgen_clip_spec_t *spec, float rate) {
  g->n = (int)floorf(spec->duration * rate) + 1;
  g->path = malloc((size_t)g->n * sizeof *g->path);
  g->heading = malloc((size_t)g->n * sizeof(float));
  g->speed = malloc((size_t)g->n * sizeof(float));
  g->phase = malloc((size_t)g->n * sizeof(float));
  g->turn = malloc((size_t)g->n * sizeof(float));
  if (!g->path || !g->heading || !g->speed || !g->phase || !g->turn) return ANIM_ENOMEM;
  float dt = 1.0f / rate, heading = 0.0f, phase = 0.05f;
  vec3 p = vec3_zero();
  for (int f = 0; f < g->n; f++) {
    float t = (float)f * dt, v = speed_at(spec, t);
    /* Turns ease in over half a second, and need forward speed. */
    float turn = spec->turn_rate * clampf(t / 0.5f, 0.0f, 1.0f) * clampf(v / 0.5f, 0.0f, 1.0f);
    g->path[f] = p;
    g->heading[f] = heading;
    g->speed[f] = v;
    g->phase[f] = phase;
    g->turn[f] = turn;
    heading += turn * dt;
    p = vec3_add(p, vec3_make(sinf(heading) * v * dt, 0.0f, cosf(heading) * v * dt));
    /* Standing still stops the cycle, but only once both feet are down. */
    float d = duty(v);
    int both_down = in_stance(phase, d, 0) && in_stance(phase, d, 1);
    if (v > 0.05f || !both_down) phase += 0.5f * cadence(v > 0.3f ? v : 0.3f) * dt;
  }
  return 0;
}

static vec3 under_body(const gait_t *g, int f, int right) {
  float h = g->heading[f];
  vec3 side = vec3_make(cosf(h), 0.0f, -sinf(h)); /* the character's left */
  return vec3_add(g->path[f], vec3_scale(side, right ? -FOOT_SPREAD : FOOT_SPREAD));
}

/* World ankle target and yaw of one foot for every frame: fixed footprints
 * through each stance (placed at mid-stance), arcs between them. */
static void place_foot(const gait_t *g, int right, vec3 *out_ankle, float *out_yaw) {
  int f = 0;
  while (f < g->n) {
    int stance = in_stance(g->phase[f], duty(g->speed[f]), right);
    int end = f;
    while (end < g->n && in_stance(g->phase[end], duty(g->speed[end]), right) == stance) end++;
    if (stance) {
      int mid = (f + end - 1) / 2;
      vec3 print = under_body(g, mid, right);
      for (int k = f; k < end; k++) {
        out_ankle[k] = vec3_make(print.x, ANKLE_HEIGHT, print.z);
        out_yaw[k] = g->heading[mid];
      }
    }
    f = end;
  }
  /* Swings: from the previous footprint to the next (or under the body at the ends). */
  for (f = 0; f < g->n;) {
    if (in_stance(g->phase[f], duty(g->speed[f]), right)) {
      f++;
      continue;
    }
    int end = f;
    while (end < g->n && !in_stance(g->phase[end], duty(g->speed[end]), right)) end++;
    vec3 from = f > 0 ? out_ankle[f - 1] : vec3_add(under_body(g, f, right), vec3_make(0, ANKLE_HEIGHT, 0));
    vec3 to = end < g->n ? out_ankle[end] : vec3_add(under_body(g, g->n - 1, right), vec3_make(0, ANKLE_HEIGHT, 0));
    float yaw_from = f > 0 ? out_yaw[f - 1] : g->heading[f], yaw_to = end < g->n ? out_yaw[end] : g->heading[g->n - 1];
    float lift = 0.05f + 0.03f * clampf(g->speed[f] / 4.0f, 0.0f, 1.0f);
    for (int k = f; k < end; k++) {
      float s = (float)(k - f + 1) / (float)(end - f + 1);
      float eased = s * s * (3.0f - 2.0f * s);
      out_ankle[k] = vec3_lerp(from, to, eased);
      out_ankle[k].y += lift * sinf(ANIM_PI * s);
      out_yaw[k] = yaw_from + (yaw_to - yaw_from) * eased;
    }
    f = end;
  }
}

/* ---- posing ----------------------------------------------------------------------- */

/* The rotation whose -Y axis points along dir and whose +Z is as close to forward as possible. */
static quat aim_down(vec3 dir, vec3 forward) {
  vec3 y = vec3_neg(vec3_normalize(dir));
  vec3 z = vec3_normalize(vec3_sub(forward, vec3_scale(y, vec3_dot(forward, y))));
  vec3 x = vec3_cross(y, z);
  /* Rotation matrix columns x, y, z to a quaternion. */
  float trace = x.x + y.y + z.z;
  quat q;
  if (trace > 0.0f) {
    float s = 0.5f / sqrtf(trace + 1.0f);
    q = quat_make(0.25f / s, (y.z - z.y) * s, (z.x - x.z) * s, (x.y - y.x) * s);
  } else if (x.x > y.y && x.x > z.z) {
    float s = 2.0f * sqrtf(1.0f + x.x - y.y - z.z);
    q = quat_make((y.z - z.y) / s, 0.25f * s, (y.x + x.y) / s, (z.x + x.z) / s);
  } else if (y.y > z.z) {
    float s = 2.0f * sqrtf(1.0f + y.y - x.x - z.z);
    q = quat_make((z.x - x.z) / s, (y.x + x.y) / s, 0.25f * s, (z.y + y.z) / s);
  } else {
    float s = 2.0f * sqrtf(1.0f + z.z - x.x - y.y);
    q = quat_make((x.y - y.x) / s, (z.x + x.z) / s, (z.y + y.z) / s, 0.25f * s);
  }
  return quat_normalize(q);
}

/* Two-bone IK: world rotations of thigh and shin reaching ankle from hip, knee forward. */
static void solve_leg(vec3 hip, vec3 ankle, vec3 forward, quat *out_thigh, quat *out_shin) {
  vec3 to = vec3_sub(ankle, hip);
  float d = clampf(vec3_length(to), 0.05f, THIGH + SHIN - 1e-3f);
  vec3 u = vec3_normalize(to);
  vec3 w = vec3_normalize(vec3_sub(forward, vec3_scale(u, vec3_dot(forward, u))));
  float cos_a = clampf((THIGH * THIGH + d * d - SHIN * SHIN) / (2.0f * THIGH * d), -1.0f, 1.0f);
  float sin_a = sqrtf(1.0f - cos_a * cos_a);
  vec3 knee = vec3_add(hip, vec3_scale(vec3_add(vec3_scale(u, cos_a), vec3_scale(w, sin_a)), THIGH));
  vec3 reach = vec3_add(hip, vec3_scale(u, d));
  *out_thigh = aim_down(vec3_sub(knee, hip), forward);
  *out_shin = aim_down(vec3_sub(reach, knee), forward);
}

static quat yaw(float angle) { return quat_from_angle_axis(angle, vec3_make(0.0f, 1.0f, 0.0f)); }
static quat pitch(float angle) { return quat_from_angle_axis(angle, vec3_make(1.0f, 0.0f, 0.0f)); }
static quat roll(float angle) { return quat_from_angle_axis(angle, vec3_make(0.0f, 0.0f, 1.0f)); }

static void pose_frame(const gait_t *g, int f, float t, const vec3 *ankle[2], const float *foot_yaw[2], vec3 *lp,
                       quat *lr) {
  float v = g->speed[f], cycle = 2.0f * ANIM_PI * g->phase[f], moving = clampf(v, 0.0f, 1.0f);
  float h = g->heading[f];
  for (int b = 0; b < NBONES; b++) lp[b] = vec3_make(bones[b].x, bones[b].y, bones[b].z), lr[b] = quat_identity();
  /* Hips: lower when faster, bob twice per cycle, sway toward the stance foot, lean into speed and turns. */
  float height = 0.93f - 0.03f * clampf(v / 5.0f, 0.0f, 1.0f) - 0.02f * moving * (0.5f + 0.5f * cosf(2.0f * cycle));
  float sway = 0.025f * moving * sinf(cycle) + 0.008f * (1.0f - moving) * sinf(2.0f * ANIM_PI * 0.2f * t);
  vec3 side = vec3_make(cosf(h), 0.0f, -sinf(h));
  lp[HIPS] = vec3_add(vec3_add(g->path[f], vec3_scale(side, sway)), vec3_make(0.0f, height, 0.0f));
  /* Long strides: drop the hips until both legs reach their footprints, so
   * IK never clamps and planted feet stay planted. */
  for (int s = 0; s < 2; s++) {
    vec3 joint = vec3_add(lp[HIPS], vec3_scale(side, s ? -0.09f : 0.09f));
    vec3 to = vec3_sub(ankle[s][f], joint);
    float reach = THIGH + SHIN - 0.01f, across = to.x * to.x + to.z * to.z;
    float top = ankle[s][f].y + sqrtf(fmaxf(reach * reach - across, 0.0f)) + 0.05f;
    if (lp[HIPS].y > top) lp[HIPS].y = top;
  }
  quat hips = quat_mul(yaw(h), quat_mul(pitch(0.04f * v), roll(-0.04f * g->turn[f] * v)));
  hips = quat_mul(hips, yaw(0.08f * moving * sinf(cycle)));
  lr[HIPS] = hips;
  /* Upper body: counter-twist, breathing. */
  lr[SPINE] = yaw(-0.08f * moving * sinf(cycle));
  lr[CHEST] = quat_mul(yaw(-0.1f * moving * sinf(cycle)), pitch(0.015f * sinf(2.0f * ANIM_PI * 0.25f * t)));
  lr[NECK] = yaw(0.1f * moving * sinf(cycle));
  lr[HEAD] = quat_mul(yaw(0.08f * moving * sinf(cycle)), pitch(-0.04f * v));
  /* Arms swing against the legs; elbows bend more when running. */
  float swing = (0.25f + 0.1f * clampf(v - 1.5f, 0.0f, 2.0f)) * moving * sinf(cycle);
  float elbow = -(0.25f + 0.35f * clampf((v - 1.5f) / 2.0f, 0.0f, 1.0f));
  /* Shoulders rise a little with each breath and with the arm swing. */
  float breath = 0.5f + 0.5f * sinf(2.0f * ANIM_PI * 0.25f * t);
  lr[L_SHOULDER] = roll(0.03f * breath + 0.04f * moving * fmaxf(sinf(cycle), 0.0f));
  lr[R_SHOULDER] = roll(-0.03f * breath - 0.04f * moving * fmaxf(-sinf(cycle), 0.0f));
  lr[L_ARM] = quat_mul(roll(0.12f), pitch(swing));
  lr[R_ARM] = quat_mul(roll(-0.12f), pitch(-swing));
  lr[L_FOREARM] = lr[R_FOREARM] = pitch(elbow);
  /* Legs: IK in world space, then back into local rotations. */
  vec3 gp[NBONES];
  quat gr[NBONES];
  int parents[NBONES];
  for (int b = 0; b < NBONES; b++) parents[b] = bones[b].parent;
  anim_fk(gp, gr, lp, lr, parents, NBONES);
  const int upleg[2] = {L_UPLEG, R_UPLEG}, leg[2] = {L_LEG, R_LEG}, foot[2] = {L_FOOT, R_FOOT};
  for (int s = 0; s < 2; s++) {
    vec3 forward = vec3_make(sinf(foot_yaw[s][f]), 0.0f, cosf(foot_yaw[s][f]));
    quat thigh, shin;
    solve_leg(gp[upleg[s]], ankle[s][f], forward, &thigh, &shin);
    lr[upleg[s]] = quat_inv_mul(hips, thigh);
    lr[leg[s]] = quat_inv_mul(thigh, shin);
    lr[foot[s]] = quat_inv_mul(shin, yaw(foot_yaw[s][f]));
  }
}

/* 0 when spec can be generated at rate: a positive duration, 1..4 speed keys
 * at increasing times with finite speeds >= 0, a finite turn rate. */
static int spec_validate(const anim_procgen_clip_spec_t *spec, float rate) {
  if (!spec || !(rate > 0.0f) || rate > 1000.0f || !(spec->duration > 0.0f) || spec->duration > 600.0f ||
      spec->nkeys < 1 || spec->nkeys > 4 || !isfinite(spec->turn_rate) || !spec->name)
    return ANIM_EINVAL;
  for (int k = 0; k < spec->nkeys; k++) {
    if (!isfinite(spec->key_time[k]) || !isfinite(spec->key_speed[k]) || spec->key_speed[k] < 0.0f ||
        spec->key_speed[k] > 12.0f)
      return ANIM_EINVAL;
    if (k > 0 && !(spec->key_time[k] > spec->key_time[k - 1])) return ANIM_EINVAL;
  }
  return 0;
}

int anim_procgen_clip(anim_clip_t *out, const anim_procgen_clip_spec_t *spec, float rate) {
  if (!out) return ANIM_EINVAL;
  memset(out, 0, sizeof *out);
  if (spec_validate(spec, rate)) return ANIM_EINVAL;
  anim_skeleton_t skeleton;
  anim_procgen_skeleton(&skeleton);
  memset(out, 0, sizeof *out);
  gait_t g;
  memset(&g, 0, sizeof g);
  vec3 *ankles[2] = {NULL, NULL};
  float *yaws[2] = {NULL, NULL};
  int rc = gait_simulate(&g, spec, rate);
  for (int s = 0; s < 2 && !rc; s++) {
    ankles[s] = malloc((size_t)g.n * sizeof(vec3));
    yaws[s] = malloc((size_t)g.n * sizeof(float));
    if (!ankles[s] || !yaws[s]) rc = ANIM_ENOMEM;
    else place_foot(&g, s, ankles[s], yaws[s]);
  }
  if (!rc) rc = anim_clip_alloc(out, &skeleton, g.n, 1.0f / rate);
  if (!rc) {
    snprintf(out->name, sizeof out->name, "%s", spec->name);
    const vec3 *a[2] = {ankles[0], ankles[1]};
    const float *y[2] = {yaws[0], yaws[1]};
    for (int f = 0; f < g.n; f++)
      pose_frame(&g, f, (float)f / rate, a, y, out->local_positions + (size_t)f * NBONES,
                 out->local_rotations + (size_t)f * NBONES);
  }
  for (int s = 0; s < 2; s++) free(ankles[s]), free(yaws[s]);
  gait_free(&g);
  return rc;
}

static int tag_ranges(anim_database_t *db, const anim_procgen_clip_spec_t *list, int n) {
  for (int r = 0; r < n; r++) {
    char tags[128];
    snprintf(tags, sizeof tags, "%s", list[r].tags);
    for (char *save = NULL, *tag = strtok_r(tags, " ", &save); tag; tag = strtok_r(NULL, " ", &save)) {
      int rc = anim_database_tag_range(db, r, tag);
      if (rc) return rc;
    }
  }
  return 0;
}

int anim_procgen_clips(anim_clip_t **out_clips, int *out_count, float rate) {
  if (!out_clips || !out_count) return ANIM_EINVAL;
  *out_clips = NULL;
  *out_count = 0;
  int n;
  const anim_procgen_clip_spec_t *list = anim_procgen_specs(&n);
  anim_clip_t *clips = calloc((size_t)n, sizeof *clips);
  if (!clips) return ANIM_ENOMEM;
  int rc = 0;
  for (int i = 0; i < n && !rc; i++) rc = anim_procgen_clip(&clips[i], &list[i], rate);
  if (rc) {
    anim_procgen_clips_free(clips, n);
    return rc;
  }
  *out_clips = clips;
  *out_count = n;
  return 0;
}

void anim_procgen_clips_free(anim_clip_t *clips, int count) {
  for (int i = 0; clips && i < count; i++) anim_clip_free(&clips[i]);
  free(clips);
}

int anim_procgen_database(anim_database_t *out, const anim_build_options_t *options, char *err, int errlen) {
  if (!out) return ANIM_EINVAL;
  memset(out, 0, sizeof *out);
  anim_build_options_t o;
  if (options) o = *options;
  else anim_build_options_default(&o);
  o.mirror = 0; /* the list already has both turn directions */
  anim_clip_t *clips;
  int n, rc = anim_procgen_clips(&clips, &n, o.frame_rate);
  if (rc) {
    if (err && errlen > 0) snprintf(err, (size_t)errlen, "procedural clips: %s", anim_strerror(rc));
    return rc;
  }
  const anim_procgen_clip_spec_t *list = anim_procgen_specs(&n);
  rc = anim_database_build(out, "default", clips, n, &o, err, errlen);
  anim_procgen_clips_free(clips, n);
  if (rc) return rc;
  anim_feature_schema_t schema;
  rc = tag_ranges(out, list, n);
  if (rc && err && errlen > 0) snprintf(err, (size_t)errlen, "tagging the procedural ranges: %s", anim_strerror(rc));
  if (!rc && (rc = anim_feature_schema_default(&schema, out)) && err && errlen > 0)
    snprintf(err, (size_t)errlen, "no default feature schema for the procedural skeleton");
  if (!rc) rc = anim_features_build(out, &schema, err, errlen);
  if (rc) anim_database_free(out);
  return rc;
}
