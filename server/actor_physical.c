/*
 * actor_physical.c: the physical character kind (MODE_PHYSICAL): motion
 * matching with a body (physics/body.h) that takes pushes, staggers, falls
 * and recovers.
 *
 * The character is a motion-matching controller (first in its struct, so
 * the matching kind's hooks and its chunk tick, actor_matching.h, run it
 * unchanged) plus a body on its database's physics model. Its states (the
 * proto's PhysicsState):
 *  - KINEMATIC: the controller's pose is shown as it is, nothing simulated
 *    (it costs what a motion-matching character costs, and its stream is
 *    that character's);
 *  - POWERED: a push reset the body to the shown pose and pushed it; every
 *    joint is powered toward the matched pose, the root held by the
 *    stabiliser. Back within RECOVER_ERROR of the matched root for
 *    RECOVER_STILL seconds it recovers; past FALL_ERROR / FALL_TILT it falls;
 *    STAGGER_MAX seconds after its last push it recovers anyway (a push
 *    while powered starts a new stagger: a character shoved all along
 *    keeps reacting, and a force is never cut short by the stagger's end,
 *    its duration being at most 2 s);
 *  - FALLEN: every part limp, the body falls and lies; still for
 *    LIE_SECONDS (or on a recover request) it recovers;
 *  - LIMP: a set_body_modes request set the root limp; it lies until a
 *    recover request (or the root powered again: POWERED);
 *  - RECOVERING: the shown pose is the matched pose plus an inertialized
 *    offset from the simulated pose (core/motion/inertialize.h, half-life
 *    RECOVER_HALFLIFE), decayed over RECOVER_SECONDS, then KINEMATIC.
 * A simulation that diverges (ANIM_ENONFINITE, or a MuJoCo error) resets
 * the character to KINEMATIC and counts in actor->pose.physics_resets (the crowd sums them into server_stats).
 *
 * Pushes name the tick they apply at; the character counts its own ticks
 * as the crowd numbers them (a late tick that folds skipped deadlines into
 * its dt counts them all), so a push applies at the tick it names (or the
 * first after it, when that deadline was skipped) however late its request
 * arrived: with no deadline skipped the stream is the same from run to run
 * and from one pool size to another. The body steps one model tick per
 * server tick: a server so late that it skips deadlines shows the
 * simulation slower than wall time rather than stepping more.
 *
 * Allocation: one block of per-bone arrays at creation, the body (MuJoCo's
 * mjData) at the first push (or limp root) on the loop, kept until the
 * character goes; a tick allocates nothing.
 */
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "actor.h"
#include "actor_matching.h"
#include "anim_error.h"
#include "animserver.pb-c.h"
#include "body.h"
#include "body_models.h"
#include "log.h"
#include "motion/inertialize.h"
#include "physics_models.h"
#include "pose/kinematics.h"

#define FALL_ERROR 0.35f        /* m: the root this far from the matched root has lost its balance */
#define FALL_TILT 0.87266463f   /* rad (50 degrees) */
#define RECOVER_ERROR 0.06f     /* m */
#define RECOVER_TILT 0.17453292f /* rad (10 degrees) */
#define RECOVER_STILL 0.25f     /* s within RECOVER_ERROR before it recovers */
#define STAGGER_MAX 4.0f        /* s powered after the last push at most before it recovers anyway */
#define LIE_SPEED 0.15f         /* m/s of the root: lying still */
#define LIE_SECONDS 2.0f        /* s lying still before it gets up */
#define RECOVER_HALFLIFE 0.1f   /* s */
#define RECOVER_SECONDS 0.6f    /* s: 6 half-lives, the offset down to 1.6 % */

enum {
  KINEMATIC = ANIMSERVER__PHYSICS_STATE__PHYSICS_KINEMATIC,
  POWERED = ANIMSERVER__PHYSICS_STATE__PHYSICS_POWERED,
  LIMP = ANIMSERVER__PHYSICS_STATE__PHYSICS_LIMP,
  RECOVERING = ANIMSERVER__PHYSICS_STATE__PHYSICS_RECOVERING,
  FALLEN = ANIMSERVER__PHYSICS_STATE__PHYSICS_FALLEN,
};

typedef struct {
  int bone;
  vec3 point, force; /* N */
  int ticks;         /* ticks it acts */
  uint64_t at;       /* the character's tick it starts at */
} push_t;

typedef struct {
  anim_controller_t mm; /* first: the matching kind's hooks take the character as its controller */
  srv_physics_model_t *shared;          /* another mass than 70 kg: its model, a reference (physics_models.h) */
  const anim_physics_model_t *model;     /* shared->model, or at 70 kg the entry's (body_models.h) */
  anim_physics_body_t *body;
  const int *parents;
  int nbones, root;
  float tick_seconds;    /* the model's tick (one anim_physics_step) */
  int state;
  uint64_t ticks;        /* this character's ticks so far */
  push_t pending[SRV_PUSHES_MAX_PENDING];
  int npending;
  push_t active[SRV_PUSHES_MAX_PENDING]; /* forces acting (ticks left in .ticks) */
  int nactive;
  uint64_t pushes;
  anim_physics_drive_t drives[ANIM_MAX_BONES]; /* the drives set without a duration (the parts' defaults) */
  float drive_left[ANIM_MAX_BONES];            /* s a timed drive has left (0: none) */
  anim_physics_root_t root_drive, root_default;
  float root_left;
  float state_time, still_time, root_error;
  int recover_asked;
  /* One block (per bone): the shown pose, the simulated one, the last
   * shown (for velocities), global positions and rotations, and the
   * recovery's offsets. */
  vec3 *positions, *sim_positions, *last_positions, *globals, *off_x, *off_v, *off_w;
  quat *rotations, *sim_rotations, *last_rotations, *global_rotations, *off_q;
  const vec3 *shown_positions; /* what report shows: the controller's pose or positions */
  const quat *shown_rotations;
} character_t;

/* ---- drives ---- */

static void apply_drives(character_t *c, int all_limp) {
  for (int b = 1; b < c->nbones; b++) {
    if (b == c->root || !anim_physics_model_has_body(c->model, b)) continue;
    anim_physics_drive_t d = c->drives[b];
    if (all_limp) d.mode = ANIM_PHYSICS_LIMP;
    anim_physics_body_set_drive(c->body, b, &d, NULL, 0); /* checked when set */
  }
  anim_physics_root_t r = c->root_drive;
  if (all_limp) r.mode = ANIM_PHYSICS_LIMP;
  anim_physics_body_set_root(c->body, &r, NULL, 0);
}

/* Timed drives back to the default once their time is up. */
static int expire_drives(character_t *c, float dt) {
  int changed = 0;
  anim_physics_drive_t def;
  anim_physics_drive_default(c->model, &def);
  for (int b = 1; b < c->nbones; b++)
    if (c->drive_left[b] > 0.0f && (c->drive_left[b] -= dt) <= 0.0f) c->drive_left[b] = 0.0f, c->drives[b] = def, changed = 1;
  if (c->root_left > 0.0f && (c->root_left -= dt) <= 0.0f) c->root_left = 0.0f, c->root_drive = c->root_default, changed = 1;
  return changed;
}

/* ---- states ---- */

static void show_target(character_t *c) {
  c->shown_positions = c->mm.pose_positions, c->shown_rotations = c->mm.pose_rotations;
}

static void show_own(character_t *c) { c->shown_positions = c->positions, c->shown_rotations = c->rotations; }

static void enter(character_t *c, int state) {
  c->state = state, c->state_time = 0.0f, c->still_time = 0.0f;
}

/* Starts the simulation from the pose shown last. */
static int start_simulation(character_t *c, int state) {
  int rc = anim_physics_body_reset(c->body, c->shown_positions, c->shown_rotations);
  if (rc) return rc;
  anim_physics_body_push_clear(c->body);
  c->nactive = 0;
  apply_drives(c, state == FALLEN);
  enter(c, state);
  return 0;
}

static void to_kinematic(character_t *c) {
  anim_physics_body_push_clear(c->body);
  c->nactive = 0;
  c->recover_asked = 0;
  enter(c, KINEMATIC);
  show_target(c);
}

/* From the simulated pose (shown last) to the matched one, by inertialization. */
static void begin_recovery(character_t *c, float dt) {
  const vec3 *tp = c->mm.pose_positions;
  const quat *tq = c->mm.pose_rotations;
  for (int b = 0; b < c->nbones; b++) {
    vec3 v = vec3_scale(vec3_sub(c->positions[b], c->last_positions[b]), 1.0f / dt);
    vec3 w = quat_angular_velocity(c->last_rotations[b], c->rotations[b], dt);
    c->off_x[b] = vec3_zero(), c->off_v[b] = vec3_zero(), c->off_q[b] = quat_identity(), c->off_w[b] = vec3_zero();
    anim_inertialize_transition_vec3(&c->off_x[b], &c->off_v[b], c->positions[b], v, tp[b], vec3_zero());
    anim_inertialize_transition_quat(&c->off_q[b], &c->off_w[b], c->rotations[b], w, tq[b], vec3_zero());
  }
  anim_physics_body_push_clear(c->body);
  c->nactive = 0, c->recover_asked = 0;
  enter(c, RECOVERING);
}

static float quat_angle_between(quat a, quat b) {
  quat d = quat_abs(quat_mul_inv(a, b));
  return 2.0f * acosf(fminf(1.0f, d.w));
}

/* ---- the tick (pool), after the controller's ---- */

static void start_pushes(character_t *c, float dt) {
  int due = 0;
  for (int i = 0; i < c->npending; i++) due |= c->pending[i].at <= c->ticks;
  if (!due) return;
  /* Already staggering: the push starts a new stagger (STAGGER_MAX counts from it). */
  if (c->state == POWERED) c->state_time = 0.0f, c->still_time = 0.0f;
  if ((c->state == KINEMATIC || c->state == RECOVERING) && start_simulation(c, POWERED)) return;
  (void)dt;
  int kept = 0;
  for (int i = 0; i < c->npending; i++) {
    push_t *p = &c->pending[i];
    if (p->at > c->ticks) {
      c->pending[kept++] = *p;
      continue;
    }
    if (anim_physics_body_push(c->body, p->bone, p->point, p->force) == 0 && c->nactive < SRV_PUSHES_MAX_PENDING)
      c->active[c->nactive++] = *p;
    c->pushes++;
  }
  c->npending = kept;
}

/* Forces whose time is up stop: all cleared, the others applied again. */
static void end_pushes(character_t *c) {
  int kept = 0, ended = 0;
  for (int i = 0; i < c->nactive; i++)
    if (--c->active[i].ticks > 0) c->active[kept++] = c->active[i];
    else ended = 1;
  c->nactive = kept;
  if (!ended) return;
  anim_physics_body_push_clear(c->body);
  for (int i = 0; i < c->nactive; i++) anim_physics_body_push(c->body, c->active[i].bone, c->active[i].point, c->active[i].force);
}

static void simulate_body(srv_actor_t *a, character_t *c, float dt) {
  if (expire_drives(c, dt)) apply_drives(c, c->state == FALLEN);
  vec3 before = c->positions[c->root];
  int rc = anim_physics_step_guarded(c->body, c->mm.pose_positions, c->mm.pose_rotations, c->sim_positions,
                                     c->sim_rotations);
  if (rc) {
    /* Diverged (or MuJoCo failed): back to the kinematic pose, counted. */
    a->pose.physics_resets++;
    to_kinematic(c);
    c->npending = 0;
    return;
  }
  end_pushes(c);
  memcpy(c->positions, c->sim_positions, (size_t)c->nbones * sizeof *c->positions);
  memcpy(c->rotations, c->sim_rotations, (size_t)c->nbones * sizeof *c->rotations);
  show_own(c);
  int r = c->root;
  c->root_error = vec3_length(vec3_sub(c->positions[r], c->mm.pose_positions[r]));
  float tilt = quat_angle_between(c->rotations[r], c->mm.pose_rotations[r]);
  c->state_time += dt;
  if (c->state == POWERED) {
    if (c->root_error > FALL_ERROR || tilt > FALL_TILT) {
      enter(c, FALLEN);
      apply_drives(c, 1);
    } else if (c->nactive == 0 && c->root_error < RECOVER_ERROR && tilt < RECOVER_TILT) {
      if ((c->still_time += dt) >= RECOVER_STILL) begin_recovery(c, dt);
    } else {
      c->still_time = 0.0f;
    }
    if (c->state == POWERED && c->state_time > STAGGER_MAX) begin_recovery(c, dt);
  } else if (c->state == FALLEN) {
    float speed = vec3_length(vec3_sub(c->positions[r], before)) / dt;
    c->still_time = speed < LIE_SPEED ? c->still_time + dt : 0.0f;
    if (c->still_time >= LIE_SECONDS) begin_recovery(c, dt);
  }
  if (c->recover_asked && c->state != RECOVERING) begin_recovery(c, dt);
}

static void recover_step(character_t *c, float dt) {
  const vec3 *tp = c->mm.pose_positions;
  const quat *tq = c->mm.pose_rotations;
  vec3 v;
  for (int b = 0; b < c->nbones; b++) {
    anim_inertialize_update_vec3(&c->positions[b], &v, &c->off_x[b], &c->off_v[b], tp[b], vec3_zero(),
                                 RECOVER_HALFLIFE, dt);
    anim_inertialize_update_quat(&c->rotations[b], &v, &c->off_q[b], &c->off_w[b], tq[b], vec3_zero(),
                                 RECOVER_HALFLIFE, dt);
  }
  show_own(c);
  c->state_time += dt;
  c->root_error = vec3_length(vec3_sub(c->positions[c->root], tp[c->root]));
  if (c->state_time >= RECOVER_SECONDS) to_kinematic(c);
}

static void after_tick(srv_actor_t *a, float dt) {
  character_t *c = a->character;
  /* The crowd's tick index advances by the deadlines a late tick folded
   * into its dt; so does the count pushes are due by. */
  long steps = lrintf(dt / c->tick_seconds);
  c->ticks += (uint64_t)(steps < 1 ? 1 : steps);
  /* The pose shown last, for velocities when a recovery starts. */
  if (c->state != KINEMATIC) {
    memcpy(c->last_positions, c->positions, (size_t)c->nbones * sizeof *c->positions);
    memcpy(c->last_rotations, c->rotations, (size_t)c->nbones * sizeof *c->rotations);
  }
  if (c->state == KINEMATIC) show_target(c);
  if (c->npending) start_pushes(c, dt);
  if (c->state == KINEMATIC) {
    c->root_error = 0.0f;
    return;
  }
  if (c->state == RECOVERING) recover_step(c, dt);
  else simulate_body(a, c, dt);
}

static void simulate(srv_actor_t *const *actors, int n, float dt, void *scratch) {
  srv_matching_simulate(actors, n, dt, scratch, after_tick);
}

static void report(srv_actor_t *a) {
  character_t *c = a->character;
  srv_actor_pose_t *p = &a->pose;
  p->nbones = c->nbones;
  p->frame = c->mm.frame;
  p->transitioned = c->mm.transitioned;
  p->physics = c->state;
  if (c->state == KINEMATIC) {
    /* Exactly the motion-matching character's. */
    p->positions = c->mm.pose_positions, p->rotations = c->mm.pose_rotations;
    p->contacts = anim_controller_contacts(&c->mm);
    if (a->want & SRV_WANT_GLOBAL) anim_controller_global_pose(&c->mm);
    p->global_positions = c->mm.global_positions;
    return;
  }
  p->positions = c->shown_positions, p->rotations = c->shown_rotations;
  p->contacts = 0; /* no foot locks while simulated */
  if (a->want & SRV_WANT_GLOBAL)
    anim_fk(c->globals, c->global_rotations, c->shown_positions, c->shown_rotations, c->parents, c->nbones);
  p->global_positions = c->globals;
}

/* Moved by the world's boundary: the controller, and a simulated body with
 * it (by a reset at the moved pose: rare, at the world's edge). */
static void translate(void *character, vec3 step) {
  character_t *c = character;
  anim_controller_translate(&c->mm, step);
  if (c->state != KINEMATIC) {
    c->positions[0] = vec3_add(c->positions[0], step);
    c->sim_positions[0] = vec3_add(c->sim_positions[0], step);
  }
}

static size_t scratch_bytes(const srv_db_entry_t *entry, int n) { return srv_actor_matching.scratch_bytes(entry, n); }

static int set_input(void *character, const anim_controller_input_t *input) {
  return srv_actor_matching.set_input(character, input);
}

/* ---- set-up: the body model of the character's (database, mass), built off the loop ----
 *
 * 70 kg (the default): the database's own model (body_models.h, shared with
 * inverse dynamics, freed with the entry). Any other mass: a model of the
 * entry's per-mass cache (physics_models.h), which the characters hold
 * references to. */

static void cache_free(struct srv_physics_cache *cache) { srv_physics_cache_free(cache); }
static void held_release(void *held) { srv_physics_model_release(held); }

static int default_mass(const srv_create_characters_request_t *request) {
  return request->physics_total_mass == SRV_PHYSICS_DEFAULT_MASS;
}

/* Loop: the entry's cache, made at the first create of another mass. */
static srv_physics_cache_t *cache_of(srv_db_entry_t *entry) {
  if (!entry->physics_models && (entry->physics_models = srv_physics_cache_create()))
    entry->physics_models_free = cache_free;
  return entry->physics_models;
}

static int no_room(const srv_create_characters_request_t *request, srv_response_t *out) {
  char masses[200];
  srv_physics_cache_masses(out->entry->physics_models, masses, sizeof masses);
  return srv_response_fail(out, ANIM_ELIMIT, "create_characters.physics.total_mass = %g: database %s has %d body "
                           "models of other masses than %g kg in use (%s), at most %d: use one of these masses",
                           (double)request->physics_total_mass, out->entry->db.name, SRV_PHYSICS_MODELS_PER_DATABASE,
                           (double)SRV_PHYSICS_DEFAULT_MASS, masses, SRV_PHYSICS_MODELS_PER_DATABASE);
}

/* Loop: 70 kg: a build when the entry has no model yet. Another mass: the
 * cached model held for the request, or a build (refused when the cache
 * has no room for another mass). */
static int prepare(const srv_create_characters_request_t *request, srv_response_t *out) {
  if (default_mass(request)) {
    out->body.create_characters.build = out->entry->physics == NULL;
    return 0;
  }
  srv_physics_cache_t *cache = cache_of(out->entry);
  if (!cache) return srv_response_fail(out, ANIM_ENOMEM, "create_characters: %s", anim_strerror(ANIM_ENOMEM));
  srv_physics_model_t *model = srv_physics_cache_find(cache, request->physics_total_mass);
  if (model) {
    out->held = model, out->release_held = held_release;
    return 0;
  }
  if (!srv_physics_cache_has_room(cache)) return no_room(request, out);
  out->body.create_characters.build = 1;
  return 0;
}

/* Pool: 26-28 ms of CPU for the default database (the MJCF, MuJoCo's
 * compile and the joint-space inertias), too long for the loop. */
static int build(const srv_create_characters_request_t *request, srv_response_t *out) {
  if (default_mass(request))
    return srv_body_model_build(out, "create_characters.mode = MODE_PHYSICAL") ? 0 : out->error;
  char err[200] = "";
  srv_physics_model_t *model = NULL;
  int rc = srv_physics_model_build(&out->entry->db, request->physics_total_mass, &model, err, sizeof err);
  if (rc)
    return srv_response_fail(out, rc, "create_characters.mode = MODE_PHYSICAL: database %s has no body: %s",
                             out->entry->db.name, err);
  out->held = model, out->release_held = held_release;
  return 0;
}

/* Loop: the build installed (70 kg: on the entry; else cached); a race's
 * second build of a mass gives way to the first's. */
static void built(const srv_create_characters_request_t *request, srv_response_t *out) {
  if (default_mass(request)) {
    srv_body_model_install(out);
    return;
  }
  srv_physics_cache_t *cache = cache_of(out->entry);
  if (!out->held || !cache) return;
  out->held = srv_physics_cache_put(cache, out->held);
  out->entry->physics_models_bytes = cache->memory_bytes;
}

/* Loop: another mass's model, shared by the characters (they take their
 * own references); 70 kg: none (init takes the entry's). */
static int setup(const srv_actor_env_t *env, const srv_create_characters_request_t *request, srv_response_t *out,
                 void **out_shared, void (**out_release)(void *shared)) {
  (void)env;
  if (default_mass(request)) return 0;
  srv_physics_model_t *model = out->held;
  if (!model) return srv_response_fail(out, ANIM_EINTERNAL, "create_characters: no physics model");
  /* Two creates of new masses raced past prepare into a cache full of
   * models in use: the bound holds, this one is refused. */
  if (!model->cached) return no_room(request, out);
  *out_shared = srv_physics_model_retain(model), *out_release = held_release;
  return 0;
}

static int init(void *character, srv_db_entry_t *entry, const srv_actor_setup_t *setup, char *err, int errlen) {
  character_t *c = character;
  if (!setup->shared && !entry->physics) {
    snprintf(err, (size_t)errlen, "database %s has no physics model", entry->db.name);
    return ANIM_EINTERNAL;
  }
  int rc = srv_actor_matching.init(&c->mm, entry, setup, err, errlen);
  if (rc) return rc;
  c->shared = srv_physics_model_retain(setup->shared); /* NULL at 70 kg */
  c->model = c->shared ? c->shared->model : entry->physics;
  anim_physics_model_info_t info;
  anim_physics_model_info(c->model, &info);
  c->nbones = entry->db.nbones, c->root = info.root, c->parents = entry->db.skeleton.parents;
  c->tick_seconds = info.tick;
  size_t n = (size_t)c->nbones;
  char *block = calloc(n, 7 * sizeof(vec3) + 5 * sizeof(quat));
  if (!block) {
    anim_controller_free(&c->mm);
    srv_physics_model_release(c->shared), c->shared = NULL;
    snprintf(err, (size_t)errlen, "%s", anim_strerror(ANIM_ENOMEM));
    return ANIM_ENOMEM;
  }
  quat *q = (quat *)block; /* quats first: 16-byte members before the 12-byte ones */
  c->rotations = q, c->sim_rotations = q + n, c->last_rotations = q + 2 * n, c->global_rotations = q + 3 * n;
  c->off_q = q + 4 * n;
  vec3 *v = (vec3 *)(q + 5 * n);
  c->positions = v, c->sim_positions = v + n, c->last_positions = v + 2 * n, c->globals = v + 3 * n;
  c->off_x = v + 4 * n, c->off_v = v + 5 * n, c->off_w = v + 6 * n;
  for (int b = 0; b < c->nbones; b++) anim_physics_drive_default(c->model, &c->drives[b]);
  anim_physics_root_default(c->model, &c->root_default);
  c->root_drive = c->root_default;
  memcpy(c->positions, c->mm.pose_positions, n * sizeof(vec3));
  memcpy(c->rotations, c->mm.pose_rotations, n * sizeof(quat));
  enter(c, KINEMATIC);
  show_target(c);
  return 0;
}

static void character_free(void *character) {
  character_t *c = character;
  anim_physics_body_free(c->body); /* before its model */
  srv_physics_model_release(c->shared);
  free(c->rotations); /* the block */
  anim_controller_free(&c->mm);
}

static size_t heap_bytes(const void *character) {
  const character_t *c = character;
  /* The body as asked of MuJoCo (its buffer and stack), once it has one. */
  return srv_actor_matching.heap_bytes(&c->mm) + malloc_usable_size(c->rotations) + anim_physics_body_bytes(c->body);
}

/* The body, made on the first request that needs it (loop): a character
 * never pushed holds none (2.3 MB of MuJoCo's buffer and stack, 0.3-0.6 ms
 * to make). 0 or ANIM_ENOMEM with err set. */
static int ensure_body(character_t *c, const char *field, char *err, int errlen) {
  if (c->body) return 0;
  char why[160] = "";
  if ((c->body = anim_physics_body_create(c->model, why, sizeof why))) return 0;
  snprintf(err, (size_t)errlen, "%s: no memory for the character's body (%s)", field, why);
  return ANIM_ENOMEM;
}

/* ---- requests (loop) ---- */

/* The bone a request names in this character's skeleton: 0 and *out, or a
 * code with err ("bone = ...", "bone_index = ..."). */
static int resolve_bone(const character_t *c, const srv_bone_ref_t *ref, int need_joint, int *out, char *err,
                        int errlen) {
  const anim_skeleton_t *sk = &c->mm.db->skeleton;
  int bone = -1;
  if (ref->name && ref->name[0]) {
    for (int b = 0; b < sk->nbones && bone < 0; b++)
      if (strcmp(sk->names[b], ref->name) == 0) bone = b;
    if (bone < 0) {
      snprintf(err, (size_t)errlen, "bone = \"%.64s\": no such bone in database %s", ref->name, c->mm.db->name);
      return ANIM_ENOTFOUND;
    }
  } else if (ref->index == 0) {
    snprintf(err, (size_t)errlen, "bone: neither a name nor a bone_index (0 is the simulation bone, never simulated)");
    return ANIM_EINVAL;
  } else if (ref->index >= (uint32_t)sk->nbones) {
    snprintf(err, (size_t)errlen, "bone_index = %u: database %s has bones 0..%d", ref->index, c->mm.db->name,
             sk->nbones - 1);
    return ANIM_ERANGE;
  } else {
    bone = (int)ref->index;
  }
  if (!anim_physics_model_has_body(c->model, bone) || (need_joint && bone == c->root)) {
    snprintf(err, (size_t)errlen, "bone = %s (%d): %s", sk->names[bone], bone,
             need_joint ? "not a jointed bone (those below the root, which the root stabiliser drives)"
                        : "has no body (the root and the bones below it have)");
    return ANIM_ERANGE;
  }
  *out = bone;
  return 0;
}

static int push(void *character, const srv_push_request_t *req, uint64_t delay, int apply, char *err, int errlen) {
  character_t *c = character;
  int bone;
  char why[200];
  int rc = resolve_bone(c, &req->bone, 0, &bone, why, sizeof why);
  if (rc) return snprintf(err, (size_t)errlen, "push.%s", why), rc;
  if ((rc = ensure_body(c, "push", err, errlen))) return rc;
  if (c->npending >= SRV_PUSHES_MAX_PENDING) {
    snprintf(err, (size_t)errlen, "push.character = %llu: already holds %d pushes pending, at most %d",
             (unsigned long long)req->character, c->npending, SRV_PUSHES_MAX_PENDING);
    return ANIM_ELIMIT;
  }
  if (!apply) return 0;
  anim_physics_model_info_t info;
  anim_physics_model_info(c->model, &info);
  float tick = info.tick;
  push_t p = {bone, req->point, req->force, 1, c->ticks + 1 + delay}; /* its next tick is the crowd's next */
  if (req->is_impulse) p.force = vec3_scale(req->impulse, 1.0f / tick);
  else p.ticks = (int)ceilf(req->duration / tick - 1e-3f), p.ticks = p.ticks < 1 ? 1 : p.ticks;
  c->pending[c->npending++] = p;
  return 0;
}

static int check_drive(const anim_physics_drive_t *d, char *err, int errlen) {
  if (!(d->halflife >= 0.005f && d->halflife <= 10.0f))
    return snprintf(err, (size_t)errlen, ".strength.halflife = %g: in [0.005, 10] s", d->halflife), ANIM_EINVAL;
  if (!(d->damping_ratio >= 0.0f && d->damping_ratio <= 10.0f))
    return snprintf(err, (size_t)errlen, ".strength.damping_ratio = %g: in [0, 10]", d->damping_ratio), ANIM_EINVAL;
  if (!(d->max_torque >= 0.0f && d->max_torque <= 1e5f))
    return snprintf(err, (size_t)errlen, ".strength.max_torque = %g: in [0, 1e5] N m", d->max_torque), ANIM_EINVAL;
  return 0;
}

static int set_body_modes(void *character, const srv_set_body_modes_request_t *req, int apply, char *err,
                          int errlen) {
  character_t *c = character;
  char why[200];
  if (apply && req->reset) {
    for (int b = 0; b < c->nbones; b++) anim_physics_drive_default(c->model, &c->drives[b]), c->drive_left[b] = 0.0f;
    c->root_drive = c->root_default, c->root_left = 0.0f;
  }
  for (int i = 0; i < req->nparts; i++) {
    const srv_body_part_t *part = &req->parts[i];
    int bone, rc = resolve_bone(c, &part->bone, 1, &bone, why, sizeof why);
    if (rc) return snprintf(err, (size_t)errlen, "set_body_modes.parts[%d].%s", i, why), rc;
    anim_physics_drive_t d;
    anim_physics_drive_default(c->model, &d);
    d.mode = part->mode;
    if (part->strength.given)
      d.halflife = part->strength.halflife, d.damping_ratio = part->strength.damping_ratio,
      d.max_torque = part->strength.max_torque;
    if ((rc = check_drive(&d, why, sizeof why)))
      return snprintf(err, (size_t)errlen, "set_body_modes.parts[%d]%s", i, why), rc;
    if (!apply) continue;
    /* The bone, and with descendants every bone below it (parents come first). */
    unsigned char in[ANIM_MAX_BONES] = {0};
    in[bone] = 1;
    for (int b = bone + 1; b < c->nbones && part->descendants; b++) in[b] = c->parents[b] >= 0 && in[c->parents[b]];
    for (int b = bone; b < c->nbones; b++)
      if (in[b] && anim_physics_model_has_body(c->model, b) && b != c->root) {
        if (part->duration > 0.0f) c->drive_left[b] = part->duration;
        else c->drive_left[b] = 0.0f;
        c->drives[b] = d;
      }
  }
  if (req->root.given && req->root.mode == ANIM_PHYSICS_LIMP) {
    int rc = ensure_body(c, "set_body_modes.root", err, errlen);
    if (rc) return rc;
  }
  if (req->root.given) {
    const srv_root_setting_t *r = &req->root;
    anim_physics_drive_t as_drive = {r->mode, r->halflife, r->damping_ratio, r->max_torque};
    int rc = check_drive(&as_drive, why, sizeof why);
    if (rc) return snprintf(err, (size_t)errlen, "set_body_modes.root%s", why + strlen(".strength")), rc;
    if (!(r->max_force >= 0.0f && r->max_force <= 1e6f))
      return snprintf(err, (size_t)errlen, "set_body_modes.root.max_force = %g: in [0, 1e6] N", r->max_force),
             ANIM_EINVAL;
    if (apply) {
      anim_physics_root_t root = {r->mode, r->halflife, r->damping_ratio, r->max_force, r->max_torque};
      c->root_drive = root, c->root_left = r->duration;
    }
  }
  if (!apply) return 0;
  /* A limp root starts the simulation (the character drops); a powered one
   * ends a LIMP state. Otherwise the drives act from the next simulated tick. */
  if (c->root_drive.mode == ANIM_PHYSICS_LIMP && (c->state == KINEMATIC || c->state == RECOVERING)) {
    if (start_simulation(c, LIMP)) return 0;
  } else if (c->state == LIMP && c->root_drive.mode != ANIM_PHYSICS_LIMP) {
    enter(c, POWERED);
  }
  if (c->state == POWERED || c->state == LIMP) apply_drives(c, 0);
  return 0;
}

static void recover(void *character) {
  character_t *c = character;
  if (c->state == POWERED || c->state == LIMP || c->state == FALLEN) c->recover_asked = 1;
}

static int state(const void *character, int offsets, srv_response_t *out) {
  const character_t *c = character;
  int rc = srv_actor_matching.state(&c->mm, offsets, out);
  srv_character_state_response_t *s = &out->body.character_state;
  s->physics = c->state, s->physics_root_error = c->root_error, s->pushes = c->pushes;
  anim_physics_model_info_t info;
  anim_physics_model_info(c->model, &info);
  s->physics_total_mass = info.total_mass;
  return rc;
}

const srv_actor_kind_t srv_actor_physical = {
    .name = "physical",
    .size = sizeof(character_t),
    .prepare = prepare,
    .build = build,
    .built = built,
    .setup = setup,
    .init = init,
    .free = character_free,
    .heap_bytes = heap_bytes,
    .scratch_bytes = scratch_bytes,
    .simulate = simulate,
    .report = report,
    .translate = translate,
    .set_input = set_input,
    .inputs = 1u << ANIM_INPUT_STICK | 1u << ANIM_INPUT_VELOCITY | 1u << ANIM_INPUT_GOAL,
    .push = push,
    .set_body_modes = set_body_modes,
    .recover = recover,
    .state = state,
};
