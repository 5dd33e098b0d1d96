/* foot_lock.c: contact locking and two-bone IK (see foot_lock.h). */
#include <math.h>
#include <string.h>
#include "anim_error.h"
#include "character/foot_lock.h"
#include "pose/kinematics.h"
#include "motion/spring.h"

/* How much further down (m) than it is the pelvis may go in the tick a foot plants. */
#define DROP_STEP 0.003f
/* How far above the data's planted height a displayed foot may plant, m. */
#define PLANT_MARGIN 0.01f
/* How far below that height a landing foot aims, m, so that it gets there. */
#define LAND_BELOW 0.01f
/* How far above its planting height the animation may hold a foot the data
 * says is down and still have it land, m: higher, it is still in the air. */
#define LAND_RANGE 0.08f
/* The half-life of a landing, s: a foot comes down faster than a release blends. */
#define LAND_HALFLIFE 0.05f
/* Heights binned for the percentile, m: 2 mm bins up to 0.5 m. */
#define HEIGHT_BIN 0.002f
#define HEIGHT_BINS 250

/* The 95th percentile of contact s's bone height (world y; the ground is
 * y = 0) over the frames the data flags, by a histogram (no allocation). */
static float contact_height(const anim_database_t *db, int s) {
  int bins[HEIGHT_BINS] = {0}, n = 0;
  int bone = db->contact_bones[s];
  for (int frame = 0; frame < db->nframes; frame++) {
    if (!db->contacts[(size_t)frame * (size_t)db->ncontacts + (size_t)s]) continue;
    float y = db->global_positions[(size_t)frame * (size_t)db->nbones + (size_t)bone].y;
    int b = (int)(y / HEIGHT_BIN);
    bins[b < 0 ? 0 : b >= HEIGHT_BINS ? HEIGHT_BINS - 1 : b]++;
    n++;
  }
  if (n == 0) return 0.0f;
  int want = (int)(0.95f * (float)n), seen = 0;
  for (int b = 0; b < HEIGHT_BINS; b++)
    if ((seen += bins[b]) > want) return (float)(b + 1) * HEIGHT_BIN;
  return (float)HEIGHT_BINS * HEIGHT_BIN;
}

/* The pelvis: the deepest bone every leg's chain passes through, below the
 * root (bone 0, which stays where the simulation has it); -1 when the legs
 * part at the root. */
static void find_pelvis(anim_foot_locks_t *locks) {
  locks->pelvis = -1;
  if (locks->nfeet == 0) return;
  const anim_foot_lock_t *f0 = &locks->feet[0];
  for (int i = 1; i < f0->nchain - 4; i++) { /* never the hip itself */
    int shared = 1;
    for (int s = 1; s < locks->nfeet; s++)
      shared = shared && i < locks->feet[s].nchain - 4 && locks->feet[s].chain[i] == f0->chain[i];
    if (!shared) break;
    locks->pelvis = f0->chain[i];
    for (int s = 0; s < locks->nfeet; s++) locks->feet[s].pelvis_at = i;
  }
}

int anim_foot_lock_params_validate(const anim_foot_lock_params_t *p) {
  return p->enabled && (!(p->unlock_radius > 0.0f) || !(p->release_halflife > 0.0f)) ? ANIM_EINVAL : 0;
}

int anim_foot_locks_init(anim_foot_locks_t *out, const anim_database_t *db, float unlock_radius,
                         float release_halflife) {
  memset(out, 0, sizeof *out);
  if (!(unlock_radius > 0.0f) || !(release_halflife > 0.0f)) return ANIM_EINVAL;
  const int *parents = db->skeleton.parents;
  for (int s = 0; s < db->ncontacts; s++) {
    anim_foot_lock_t *f = &out->feet[s];
    f->toe = db->contact_bones[s];
    f->ankle = f->toe > 0 ? parents[f->toe] : -1;
    f->knee = f->ankle > 0 ? parents[f->ankle] : -1;
    f->hip = f->knee > 0 ? parents[f->knee] : -1;
    if (f->hip <= 0) return ANIM_EINVAL; /* the hip must hang below the root */
    int reversed[ANIM_MAX_BONES], depth = 0;
    for (int b = f->toe; b >= 0 && depth < ANIM_MAX_BONES; b = parents[b]) reversed[depth++] = b;
    if (depth > ANIM_FOOT_CHAIN_MAX) return ANIM_EINVAL;
    for (int i = 0; i < depth; i++) f->chain[i] = reversed[depth - 1 - i];
    f->nchain = depth;
    /* The bend axis, weighted by how bent the knee is in each frame. */
    vec3 sum = vec3_zero();
    for (int frame = 0; frame < db->nframes; frame += 4) {
      size_t base = (size_t)frame * (size_t)db->nbones;
      const vec3 *g = db->global_positions + base;
      vec3 n = vec3_cross(vec3_sub(g[f->hip], g[f->knee]), vec3_sub(g[f->ankle], g[f->knee]));
      sum = vec3_add(sum, quat_inv_mul_vec3(db->global_rotations[base + (size_t)f->hip], n));
    }
    f->hinge = vec3_dot(sum, sum) > 1e-12f ? vec3_normalize(sum) : vec3_make(1.0f, 0.0f, 0.0f);
    f->plant_height = contact_height(db, s) + PLANT_MARGIN;
  }
  out->nfeet = db->ncontacts;
  find_pelvis(out);
  out->unlock_radius = unlock_radius;
  out->release_halflife = release_halflife;
  out->step_seconds = ANIM_FOOT_STEP_SECONDS;
  out->step_height = ANIM_FOOT_STEP_HEIGHT;
  out->on_ground = 0;
  out->max_drop = 0.0f;
  return 0;
}

int anim_foot_locks_ground(anim_foot_locks_t *locks, float max_drop) {
  if (!(max_drop >= 0.0f) || !isfinite(max_drop)) return ANIM_EINVAL;
  locks->on_ground = 1;
  locks->max_drop = max_drop;
  return 0;
}

void anim_foot_locks_translate(anim_foot_locks_t *locks, vec3 step) {
  for (int f = 0; f < locks->nfeet; f++) {
    anim_foot_lock_t *foot = &locks->feet[f];
    foot->lock_position = vec3_add(foot->lock_position, step), foot->step_from = vec3_add(foot->step_from, step);
    foot->previous_toe = vec3_add(foot->previous_toe, step);
    foot->previous_target = vec3_add(foot->previous_target, step);
  }
}

void anim_foot_locks_reset(anim_foot_locks_t *locks) {
  locks->drop = locks->drop_velocity = 0.0f;
  for (int s = 0; s < locks->nfeet; s++) {
    anim_foot_lock_t *f = &locks->feet[s];
    f->state = ANIM_FOOT_FREE;
    f->have_previous = 0;
    f->offset = f->offset_velocity = vec3_zero();
  }
}

/* The shortest rotation taking direction u to direction v (both non-zero):
 * (|u||v| + u.v, u x v) is |u||v| (1 + cos t, sin t n), which normalized is
 * (cos t/2, sin t/2 n), so one square root of |u|^2 |v|^2 stands for the two
 * normalizations of u and v. */
static quat rotation_between(vec3 u, vec3 v) {
  float norms = sqrtf(vec3_dot(u, u) * vec3_dot(v, v)), d = vec3_dot(u, v);
  if (d < -0.999999f * norms) { /* opposite: half a turn about any perpendicular */
    vec3 axis = vec3_cross(u, vec3_make(1.0f, 0.0f, 0.0f));
    if (vec3_dot(axis, axis) < 1e-6f * vec3_dot(u, u)) axis = vec3_cross(u, vec3_make(0.0f, 1.0f, 0.0f));
    return quat_from_angle_axis(ANIM_PI, vec3_normalize(axis));
  }
  vec3 c = vec3_cross(u, v);
  return quat_normalize(quat_make(norms + d, c.x, c.y, c.z));
}

/* How far from the hip (a) the ankle may be placed, the thigh and shin
 * lab and lbc long and the ankle now lac away: never straighter than the
 * leg already is, or than 99% of its length. A straight leg's knee moves
 * fast for a small change of the target, and reaching past the animation's
 * own extension would straighten a knee the data bends. */
static float reach_of(float lab, float lbc, float lac) {
  return fminf(fmaxf(lac, 0.99f * (lab + lbc)), (lab + lbc) * 0.9999f);
}

static float leg_reach(vec3 a, vec3 b, vec3 c) {
  return reach_of(vec3_length(vec3_sub(b, a)), vec3_length(vec3_sub(c, b)), vec3_length(vec3_sub(c, a)));
}

/* The turn about the unit hinge from the knee's angle now, atan2(now_sin,
 * now_cos) (any scale), to the angle want, acos(want_cos), without the
 * trigonometry: the difference's cosine and sine from the two angles'
 * (angle-difference identities), then half of it as a quaternion:
 * (1 + cos t, sin t n) has length 2 cos(t/2), so normalized it is
 * (cos t/2, sin t/2 n). Only a half turn, where that length vanishes, takes
 * the angle itself. */
static quat knee_turn_about(vec3 hinge, float now_sin, float now_cos, float want_cos) {
  float r2 = now_sin * now_sin + now_cos * now_cos;
  float inv_r = r2 > 1e-38f ? 1.0f / sqrtf(r2) : 0.0f;
  float cn = r2 > 1e-38f ? now_cos * inv_r : 1.0f, sn = now_sin * inv_r; /* atan2(0, 0) = 0 */
  float want_sin = sqrtf(fmaxf(0.0f, 1.0f - want_cos * want_cos));  /* want in [0, pi] */
  float turn_cos = want_cos * cn + want_sin * sn, turn_sin = want_sin * cn - want_cos * sn;
  if (1.0f + turn_cos < 1e-6f) return quat_from_angle_axis(atan2f(turn_sin, turn_cos), hinge);
  return quat_normalize(quat_make(1.0f + turn_cos, turn_sin * hinge.x, turn_sin * hinge.y, turn_sin * hinge.z));
}

void anim_two_bone_ik(quat *io_hip_local, quat *io_knee_local, quat *io_ankle_local, quat hip_parent_global,
                      quat hip_global, quat knee_global, quat ankle_global, vec3 a, vec3 b, vec3 c, vec3 target,
                      vec3 hinge) {
  float lab = vec3_length(vec3_sub(b, a)), lbc = vec3_length(vec3_sub(c, b));
  if (lab < 1e-5f || lbc < 1e-5f) return;
  float reach = reach_of(lab, lbc, vec3_length(vec3_sub(c, a)));
  float lat = clampf(vec3_length(vec3_sub(target, a)), fabsf(lab - lbc) + 1e-4f, reach);
  /* Knee: from its current angle, signed about the hinge (a knee bent
   * backwards has a negative one), to the one the law of cosines asks. A
   * positive turn about the hinge moves c away from a, opening the knee. */
  vec3 u = vec3_sub(a, b), w = vec3_sub(c, b);
  float want_cos = clampf((lab * lab + lbc * lbc - lat * lat) / (2.0f * lab * lbc), -1.0f, 1.0f);
  quat knee_turn = knee_turn_about(hinge, vec3_dot(vec3_cross(u, w), hinge), vec3_dot(u, w), want_cos);
  vec3 c1 = vec3_add(b, quat_mul_vec3(knee_turn, w));
  /* Hip: swing the whole leg so the ankle points at the target. The
   * products of unit rotations are normalized once, in the locals: a scale
   * left in hip_new or knee_new changes no direction there. */
  quat hip_turn = rotation_between(vec3_sub(c1, a), vec3_sub(target, a));
  quat hip_new = quat_mul(hip_turn, hip_global);
  quat knee_new = quat_mul(hip_turn, quat_mul(knee_turn, knee_global));
  *io_hip_local = quat_normalize(quat_inv_mul(hip_parent_global, hip_new));
  *io_knee_local = quat_normalize(quat_inv_mul(hip_new, knee_new));
  *io_ankle_local = quat_normalize(quat_inv_mul(knee_new, ankle_global)); /* the foot keeps its world rotation */
}

/* How far the pelvis must come down (m, world -y) for the hip at `hip` to
 * reach an ankle target at distance at most `reach`: the smallest d with
 * |hip - d y - target| <= reach, 0 when already within reach, -1 when no
 * drop can (the target is farther than reach sideways). */
static float drop_needed(vec3 hip, vec3 target, float reach) {
  vec3 u = vec3_sub(hip, target);
  float side2 = u.x * u.x + u.z * u.z;
  if (side2 >= reach * reach) return -1.0f;
  return fmaxf(0.0f, u.y - sqrtf(reach * reach - side2));
}

/* A leg as the animation shows it this tick (world positions). */
typedef struct {
  vec3 hip, knee, ankle, toe;
} leg_t;

/* How far the pelvis must come down for this leg's contact bone to reach
 * target (drop_needed for the ankle carried along). */
static float leg_drop(const leg_t *leg, vec3 target) {
  vec3 ankle_target = vec3_add(leg->ankle, vec3_sub(target, leg->toe));
  return drop_needed(leg->hip, ankle_target, leg_reach(leg->hip, leg->knee, leg->ankle));
}

/* The quintic ease 6s^5 - 15s^4 + 10s^3: 0 to 1 with zero velocity and
 * acceleration at both ends, so a step leaves and lands softly. */
static float ease(float s) { return s * s * s * (s * (6.0f * s - 15.0f) + 10.0f); }

static float horizontal_distance(vec3 a, vec3 b) { return sqrtf(squaref(a.x - b.x) + squaref(a.z - b.z)); }

/* A re-planting step from where the foot is held now. Short steps lift
 * less: half their length, at most step_height. */
static void start_step(anim_foot_lock_t *f, vec3 from, vec3 toe, float step_height) {
  f->state = ANIM_FOOT_STEPPING;
  f->step_from = from;
  f->step_time = 0.0f;
  f->step_lift = fminf(step_height, 0.5f * horizontal_distance(from, toe));
  f->offset = f->offset_velocity = vec3_zero();
}

/* Where a stepping foot is dt further on: eased from step_from to the
 * animated toe, lifted by 16 s^2 (1-s)^2 (0 at both ends, step_lift at the
 * middle, zero vertical speed at lift-off and landing). A finished step
 * plants if the data says contact and the foot is down, else frees it. */
static vec3 step_target(anim_foot_lock_t *f, int contact, vec3 toe, int on_ground, float step_seconds, float dt) {
  f->step_time += dt;
  float s = fminf(f->step_time / step_seconds, 1.0f), w = ease(s);
  vec3 target = vec3_lerp(f->step_from, toe, w);
  target.y += 16.0f * f->step_lift * s * s * (1.0f - s) * (1.0f - s);
  if (s >= 1.0f) {
    int plant = contact && (!on_ground || toe.y <= f->plant_height);
    f->state = plant ? ANIM_FOOT_PLANTED : ANIM_FOOT_FREE;
    f->lock_position = toe;
  }
  return target;
}

/* Where the contact bone goes this tick (before the reach check). The
 * offset from the animated toe decays in every state (critically damped,
 * release_halflife): FREE it is the whole difference, PLANTED only the
 * height. While the data says contact its height does not decay to zero but
 * toward keeping the foot down: a foot an inertialization offset holds up
 * lands, and a planted toe stays on the ground while the animation rolls it. */
static vec3 foot_target(const anim_foot_locks_t *locks, anim_foot_lock_t *f, int contact, const leg_t *leg, float dt) {
  vec3 toe = leg->toe;
  if (f->state == ANIM_FOOT_STEPPING) return step_target(f, contact, toe, locks->on_ground, locks->step_seconds, dt);
  float above = toe.y - f->plant_height;
  float ground = locks->on_ground && contact && above < LAND_RANGE ? fminf(0.0f, -LAND_BELOW - above) : 0.0f;
  float height = f->offset.y - ground, height_velocity = f->offset_velocity.y;
  anim_spring_decay_vec3(&f->offset, &f->offset_velocity, locks->release_halflife, dt);
  anim_spring_decay(&height, &height_velocity, contact ? LAND_HALFLIFE : locks->release_halflife, dt);
  f->offset.y = height + ground, f->offset_velocity.y = height_velocity;
  vec3 target = vec3_add(toe, f->offset);
  if (f->state == ANIM_FOOT_FREE) {
    /* Not yet where the pelvis would have to come down at once to hold it. */
    if (!contact) return target;
    if (locks->on_ground && (target.y > f->plant_height || !(leg_drop(leg, target) <= locks->drop + DROP_STEP)))
      return target;
    /* Plant where the foot is shown, and stop it there: a landing foot is
     * stopped by the ground too. */
    f->state = ANIM_FOOT_PLANTED;
    f->lock_position = target;
    f->offset.x = f->offset.z = f->offset_velocity.x = f->offset_velocity.z = 0.0f;
    return target;
  }
  target.x = f->lock_position.x, target.z = f->lock_position.z;
  if (!contact) {
    /* The data lifts the foot: back toward the animated foot, keeping the
     * target's position and velocity (an inertialized switch). */
    vec3 toe_velocity = vec3_zero(), target_velocity = vec3_zero();
    if (f->have_previous && dt > 0.0f) {
      toe_velocity = vec3_scale(vec3_sub(toe, f->previous_toe), 1.0f / dt);
      target_velocity = vec3_scale(vec3_sub(target, f->previous_target), 1.0f / dt);
    }
    f->state = ANIM_FOOT_FREE;
    f->offset = vec3_sub(target, toe);
    f->offset_velocity = vec3_sub(target_velocity, toe_velocity);
  } else if (vec3_length(vec3_sub(target, toe)) > locks->unlock_radius) {
    /* The animation has moved on without the foot: step after it. */
    start_step(f, target, toe, locks->step_height);
    return step_target(f, contact, toe, locks->on_ground, locks->step_seconds, dt);
  }
  return target;
}

/* World transforms along a foot's chain (root first); out index i is chain[i]. */
static void chain_fk(const anim_foot_lock_t *f, const vec3 *lp, const quat *lr, vec3 *out_p, quat *out_r) {
  out_p[0] = lp[f->chain[0]], out_r[0] = lr[f->chain[0]];
  for (int i = 1; i < f->nchain; i++) {
    int b = f->chain[i];
    out_p[i] = vec3_add(out_p[i - 1], quat_mul_vec3(out_r[i - 1], lp[b]));
    out_r[i] = quat_mul(out_r[i - 1], lr[b]);
  }
}

int anim_foot_locks_apply(anim_foot_locks_t *locks, const uint8_t *contacts, vec3 *local_positions,
                          quat *local_rotations, float dt) {
  vec3 gp[ANIM_MAX_CONTACTS][ANIM_FOOT_CHAIN_MAX], targets[ANIM_MAX_CONTACTS];
  quat gr[ANIM_MAX_CONTACTS][ANIM_FOOT_CHAIN_MAX];
  float need = 0.0f;
  for (int s = 0; s < locks->nfeet; s++) {
    anim_foot_lock_t *f = &locks->feet[s];
    chain_fk(f, local_positions, local_rotations, gp[s], gr[s]);
    /* In the chain: ..., hip parent (n-5), hip (n-4), knee (n-3), ankle (n-2), toe (n-1). */
    int n = f->nchain;
    leg_t leg = {gp[s][n - 4], gp[s][n - 3], gp[s][n - 2], gp[s][n - 1]};
    vec3 toe = leg.toe;
    vec3 target = foot_target(locks, f, contacts[s], &leg, dt);
    float d = leg_drop(&leg, target);
    if (f->state == ANIM_FOOT_PLANTED && locks->on_ground && (d < 0.0f || d > locks->max_drop)) {
      /* A planted point the leg cannot reach, even with the pelvis down as
       * far as it may go, would drag the foot: step instead. */
      start_step(f, target, toe, locks->step_height);
      target = step_target(f, contacts[s], toe, locks->on_ground, locks->step_seconds, dt);
    } else if (f->state == ANIM_FOOT_PLANTED && d > need) {
      need = fminf(d, locks->max_drop);
    }
    f->previous_toe = toe;
    f->previous_target = target;
    f->have_previous = 1;
    targets[s] = target;
  }
  /* The pelvis goes down at once as far as a planted foot needs, and comes
   * back up critically damped (release_halflife), so a released foot does
   * not make the body pop up. */
  float drop = locks->drop, drop_velocity = locks->drop_velocity;
  anim_spring_decay(&drop, &drop_velocity, locks->release_halflife, dt);
  if (need > drop) drop = need, drop_velocity = 0.0f; /* at rest there: no overshoot below what is needed */
  locks->drop = drop, locks->drop_velocity = drop_velocity;
  if (locks->pelvis > 0 && drop > 1e-6f) {
    const anim_foot_lock_t *f0 = &locks->feet[0];
    int at = f0->pelvis_at; /* the pelvis's place in every chain */
    quat parent = gr[0][at - 1];
    local_positions[locks->pelvis] =
        vec3_add(local_positions[locks->pelvis], quat_inv_mul_vec3(parent, vec3_make(0.0f, -drop, 0.0f)));
    for (int s = 0; s < locks->nfeet; s++)
      for (int i = at; i < locks->feet[s].nchain; i++) gp[s][i].y -= drop;
  }
  int changed = drop > 1e-6f;
  for (int s = 0; s < locks->nfeet; s++) {
    anim_foot_lock_t *f = &locks->feet[s];
    int n = f->nchain, hp = n - 5, hip = n - 4, knee = n - 3, ankle = n - 2, toe = n - 1;
    vec3 delta = vec3_sub(targets[s], gp[s][toe]);
    /* The IK also bends forwards a knee the animation shows bent backwards
     * (an inertialization offset overshooting): skipping it there in the
     * ticks the foot is on its animated place would flip the knee. */
    vec3 hinge = quat_mul_vec3(gr[s][hip], f->hinge);
    vec3 bend = vec3_cross(vec3_sub(gp[s][hip], gp[s][knee]), vec3_sub(gp[s][ankle], gp[s][knee]));
    if (vec3_dot(delta, delta) < 1e-10f && vec3_dot(bend, hinge) >= 0.0f) continue;
    anim_two_bone_ik(&local_rotations[f->hip], &local_rotations[f->knee], &local_rotations[f->ankle], gr[s][hp],
                     gr[s][hip], gr[s][knee], gr[s][ankle], gp[s][hip], gp[s][knee], gp[s][ankle],
                     vec3_add(gp[s][ankle], delta), hinge);
    changed = 1;
  }
  return changed;
}

uint32_t anim_foot_locks_contacts(const anim_foot_locks_t *locks) {
  uint32_t bits = 0;
  for (int s = 0; s < locks->nfeet; s++)
    if (locks->feet[s].state == ANIM_FOOT_PLANTED) bits |= 1u << s;
  return bits;
}

int anim_foot_locks_let_go(const anim_foot_locks_t *locks) {
  const float near = ANIM_FOOT_SETTLED * ANIM_FOOT_SETTLED;
  if (locks->drop > ANIM_FOOT_SETTLED) return 0;
  for (int s = 0; s < locks->nfeet; s++) {
    const anim_foot_lock_t *f = &locks->feet[s];
    /* The offset's velocity too: a spring passing through zero is not still. */
    if (f->state != ANIM_FOOT_FREE || vec3_dot(f->offset, f->offset) > near ||
        vec3_dot(f->offset_velocity, f->offset_velocity) > 100.0f * near)
      return 0;
  }
  return 1;
}
