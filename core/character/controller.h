/*
 * controller.h: a motion-matching character, ticked at a fixed step.
 *
 * Each tick: the input (a stick with camera azimuth, a desired world velocity
 * and facing, or a goal to walk to) becomes a desired velocity and facing;
 * critically damped springs move the simulation toward them and predict its
 * trajectory 20/40/60 frames ahead; every search_interval frames, or at once
 * when the desired velocity changes markedly or the clip runs out, the
 * current frame's features with that trajectory are searched (the current
 * frame competing); a better frame starts an inertialized transition; the
 * frame advances and the displayed pose is the database pose plus the
 * decaying offsets, its root moving in the world by the animation's own root
 * motion, and planted feet held where they landed (foot_lock.h, on the
 * ground). Offsets decay at three speeds: the legs' and the root's turn
 * with inertialize_halflife, the root's position faster (root_halflife_scale
 * times it: the character takes up the new clip's speed at once) and the
 * rest of the body's slower (body_halflife_scale times it: the torso and
 * arms do not lurch; on the GAMES-105 clips one half-life for all moved the
 * head and wrists 25% faster than anywhere in the data). The root's turn
 * goes with the legs, not the body: at the body's pace the character kept
 * walking the old way and took 20% longer to reach a commanded speed on the
 * CMU clips (tests/test_foot_quality.c). The
 * simulation's position follows the displayed root, so the trajectory always
 * starts where the character is.
 *
 * Every frame but the current one costs transition_cost more (0.01 by
 * default): without it a periodic search left the current frame for one a
 * hundredth of that better, a transition every few ticks for nothing (2.6 a
 * second standing on the default database, 4.8 walking). At rest (asked to
 * stand, the simulation neither moving nor turning, facing as asked) the
 * query is the same at every search, so two more rules keep a standing
 * character still: a search forced by the clip's end lands only a
 * trajectory horizon (the schema's furthest sample) or more before a range's
 * end, so an idle loops a second or more at a time rather than its last
 * ignore_range_end frames; and a still frame (every contact on, its root
 * under 0.1 m/s) whose clip would walk off (search_interval frames on it
 * matches worse by more than transition_cost) is held, its velocities zero,
 * until the character leaves rest or a search finds a better frame
 * (data whose only standing poses start clips that walk off; with a
 * transition cost of 0 any worsening holds, an idle included).
 *
 * The database and index are shared and read-only; a character owns its
 * arrays (allocated by anim_controller_init, nothing allocated per tick).
 *
 * Validity rules (anim_controller_params_validate):
 *  1. search_interval >= 1 frames;
 *  2. halflives > 0 seconds; speeds >= 0 m/s; all finite;
 *  3. ignore_surrounding, ignore_range_end >= 0; transition_cost >= 0;
 *  4. input_f > 0, input_zeta >= 0 (second-order input smoothing, 001_*);
 *  5. foot_lock.unlock_radius > 0 and .release_halflife > 0 (when enabled);
 *  6. body_halflife_scale > 0 and root_halflife_scale > 0, finite;
 *  7. warp's rules (warp.h; stride warping needs foot locking's legs).
 *
 * Animation warping (warp.h) bends what the search found: the clip plays at
 * a rate that meets the asked speed (the query scaled to the speed the clip
 * has in the data), a clip still travelling when asked to stand is slowed
 * to a held stance, and travel at an angle to the asked facing is searched
 * as travel ahead with the upper body turned back to the facing; where the
 * rate cannot meet the speed the root travels further or less than the
 * clip and the legs' stride follows (stride.h); and the root's velocity is
 * steered toward the simulation's within bounds. Hooks here: the seconds a
 * tick plays, the query's trajectory samples, the pose shown (between two
 * frames), and after blending the upper body's turn, the stride (root and
 * legs) and the steering, before foot locking.
 */
#ifndef ANIM_CONTROLLER_H
#define ANIM_CONTROLLER_H

#include <math.h>
#include <stdint.h>
#include "database/database.h"
#include "motion/dynamics.h"
#include "character/foot_lock.h"
#include "character/warp.h"
#include "motion/inertialize.h"
#include "search/search.h"

typedef struct {
  int search_interval;            /* frames between searches */
  float inertialize_halflife;     /* s, transitions blend the legs over this */
  float body_halflife_scale;      /* the rest of the body blends over this times inertialize_halflife */
  float root_halflife_scale;      /* the root's velocity over this times inertialize_halflife */
  float velocity_halflife;        /* s, simulation velocity spring */
  float rotation_halflife;        /* s, simulation facing spring */
  float forward_speed, side_speed, back_speed; /* m/s at full stick */
  int ignore_surrounding;         /* frames around the current one not searched */
  int ignore_range_end;           /* frames at the end of each range not searched */
  float transition_cost;          /* added to every frame but the current one */
  float replan_threshold;         /* m/s change of desired velocity that forces a search */
  float input_f, input_zeta, input_r; /* second-order smoothing of the desired velocity */
  anim_foot_lock_params_t foot_lock; /* planted feet held with two-bone IK (foot_lock.h) */
  anim_warp_params_t warp;        /* play rate, standing, orientation (warp.h) */
} anim_controller_params_t;

void anim_controller_params_default(anim_controller_params_t *out_params);
int anim_controller_params_validate(const anim_controller_params_t *params);

/* Why a tick searched: bits of anim_controller_t.search_reasons. */
enum {
  ANIM_CONTROLLER_SEARCH_PERIODIC = 1,  /* search_interval frames since the last search */
  ANIM_CONTROLLER_SEARCH_REPLAN = 2,    /* the desired velocity moved by more than replan_threshold */
  ANIM_CONTROLLER_SEARCH_RANGE_END = 4  /* the clip is about to end: the current frame cannot go on */
};

typedef enum {
  ANIM_INPUT_STICK = 0,    /* stick (x right, z forward, |stick| <= 1) relative to the camera azimuth */
  ANIM_INPUT_VELOCITY = 1, /* desired world velocity and facing */
  ANIM_INPUT_GOAL = 2      /* walk to a goal position at a speed, stop there */
} anim_input_kind_t;

typedef struct {
  anim_input_kind_t kind;
  float stick_x, stick_z;  /* STICK */
  float camera_azimuth;    /* STICK: radians about +Y */
  int strafe;              /* STICK: keep facing the camera direction */
  vec3 velocity;           /* VELOCITY: m/s, world */
  float facing;            /* VELOCITY: radians about +Y (0 faces +Z) */
  vec3 goal;               /* GOAL: world position */
  float goal_speed;        /* GOAL: m/s */
} anim_controller_input_t;

/* What the goal input remembers between ticks (steering.h), about the goal
 * it was last given (world): whether the character has set off toward it,
 * and whether it has arrived. */
typedef struct {
  vec3 goal;
  int set_off;
  int arrived;
} anim_goal_arrival_t;

/* A character's simulation (world space, metres, seconds): the point its
 * input steers with springs (steering.h) and its root follows; the same in
 * the database controller and the learned one (lmm.h). */
typedef struct {
  vec3 position, velocity, acceleration;
  quat rotation;
  vec3 angular_velocity;
  vec3 desired_velocity; /* what the input asks for (anim_steering_desired) */
  quat desired_rotation;
  anim_goal_arrival_t arrival;
  anim_dynamics_vec3_t smoothed_velocity; /* desired_velocity through the input smoothing */
  anim_dynamics_params_t smoothing;
} anim_steering_sim_t;

/* What a tick decided that a replica (character/replica.h) cannot work out
 * for itself: everything else of the displayed pose follows, by the same
 * code, from the state before the tick and the tick's dt. */
typedef struct {
  int transition_frame; /* the frame a transition went to this tick, or -1 */
  uint8_t hold_begin;   /* holding once tick_begin let a held frame go (the transition's source) */
  uint8_t hold_end;     /* holding after tick_end (decided by this tick's search) */
  uint8_t moved;        /* moved other than by a tick (translate, reset) since the last tick began:
                           a replica must be sent the whole state */
  uint8_t feet_skipped;  /* skip_feet this tick (letting go or skipped): a replica does the same */
  /* Warping (warp.h) follows the input, which a record does not carry:
   * what the warp's begin decided instead. */
  uint8_t warp_changed; /* ANIM_RECORD_* bits: which of the two differ (bitwise) from the last tick's */
  float play_rate;      /* the rate shown (warp.shown): 1 unwarped, 0 held at rest */
  float warp_angle;     /* rad, the upper body's counter-turn (warp.angle) */
  /* Stride warping and root steering, decided from the input and the
   * simulation: the stride the tick played at (1: none) and the direction
   * it stretched along (world x, z, unit), and root steering's correction
   * (m/s, world x, z; 0: none). */
  float stride, travel_x, travel_z;
  float steer_x, steer_z;
} anim_controller_record_t;
enum { ANIM_RECORD_PLAY_RATE = 1, ANIM_RECORD_WARP_ANGLE = 2 };

/* The stride, its direction and root steering act every tick a character
 * stretches or is steered, so the replicated encoding sends them every such
 * tick: in 16 bits each, and the tick plays them rounded so (the replica
 * then plays the very same floats). Stride in (0, 2]: steps of 1/16384
 * (code 1..32768); the direction's components in [-1, 1]: steps of
 * 1/32767; steering's (m/s, |v| <= 1): steps of 1/32768, toward zero (never
 * past its bound). Each value is code times a constant: the same bits on
 * any build. */
static inline int32_t anim_record_stride_code(float stride) {
  long code = lrintf(stride * 16384.0f);
  return (int32_t)(code < 1 ? 1 : code > 32768 ? 32768 : code);
}
static inline float anim_record_stride(int32_t code) { return (float)code * (1.0f / 16384.0f); }
static inline int32_t anim_record_unit_code(float v) {
  long code = lrintf(v * 32767.0f);
  return (int32_t)(code < -32767 ? -32767 : code > 32767 ? 32767 : code);
}
static inline float anim_record_unit(int32_t code) { return (float)code / 32767.0f; }
static inline int32_t anim_record_steer_code(float v) {
  float code = truncf(v * 32768.0f);
  return (int32_t)(code < -32767.0f ? -32767.0f : code > 32767.0f ? 32767.0f : code);
}
static inline float anim_record_steer(int32_t code) { return (float)code * (1.0f / 32768.0f); }
/* A bounded record of the character's recent ticks (history.h). */
typedef struct anim_history anim_history_t;

typedef struct {
  const anim_database_t *db;
  const anim_search_index_t *index; /* NULL: a replica, which never searches */
  anim_controller_params_t params;
  anim_controller_input_t input;

  anim_steering_sim_t sim;
  vec3 velocity_at_last_search;

  /* Animation. */
  int frame;
  int frames_since_search;
  /* Between anim_controller_tick_begin and _end. */
  float tick_dt;
  int tick_frames;
  int tick_searching;
  int search_reasons;       /* the last tick's search, ANIM_CONTROLLER_SEARCH_* bits (0: none) */
  int holding;              /* at rest on a still frame its clip would walk off from: the frame is held */
  int search_at_rest;       /* this tick's search was made at rest */
  const float *search_query; /* this tick's query (tick_begin's out_query), until tick_end */
  int transitioned;         /* the last tick started a transition */
  float frame_time_accum;   /* seconds not yet turned into frames */
  float time_since_transition;
  uint64_t ticks, transitions, searches;

  /* Predicted trajectory, world space, at the schema's trajectory offsets. */
  int ntrajectory;
  vec3 trajectory_positions[ANIM_MAX_TRAJECTORY_SAMPLES];
  quat trajectory_rotations[ANIM_MAX_TRAJECTORY_SAMPLES];

  /* Inertializer and displayed pose (nbones each; bone 0 in world space). */
  anim_inertializer_t inertializer;
  vec3 *offset_positions, *offset_velocities, *offset_angular_velocities;
  quat *offset_rotations;
  vec3 *pose_positions, *pose_velocities, *pose_angular_velocities;
  quat *pose_rotations;
  /* 1 (init's choice): every bone's velocity and angular velocity in pose_*
   * each tick; 0: the root's alone (the rest stay as they were), for a caller
   * that shows positions and rotations only (the server's crowd). */
  int pose_bone_rates;
  vec3 *global_positions; /* FK of the displayed pose, for callers that want it */
  quat *global_rotations;
  int globals_fresh;      /* global_* hold this tick's FK (computed on demand, once) */
  anim_foot_locks_t feet;
  uint8_t *fast_rotations; /* nbones flags: the legs' bones and the root's turn blend at the legs' speed */
  anim_warp_t warp;        /* animation warping's state (warp.h; its own allocation) */
  anim_controller_record_t record; /* the last tick's decisions, for replicas */
  /* Level of detail, set by the caller before a tick: periodic searches
   * every search_interval * search_scale frames (0 or 1: as the params say);
   * searches forced by the input or a clip's end are not delayed. */
  int search_scale;
  /* Level of detail, set by the caller before a tick: 1 skips foot locking
   * (nobody watches the feet closely). The locks are first let go gently,
   * as if the data lifted every foot (planted feet blend back to the
   * animation over a few release half-lives, none plants), then no longer
   * applied: the feet show the data's, and the contacts are the data's,
   * until a tick with skip_feet 0 locks again, planting them where they
   * are shown. */
  int skip_feet;
  int feet_skipped;       /* let go: foot locking no longer applied */
  int moved_between;      /* reset since the last tick: the next tick's record says moved */
  /* NULL (init's choice): no history. Else each tick_end records the tick
   * there (history.h); the caller owns it (anim_history_init/_free) and
   * sets or clears it between ticks. */
  anim_history_t *history;
  const anim_search_query_t *search_spec; /* this tick's search (tick_begin's out_search), NULL: none */
} anim_controller_t;

/* Sets up a character on db/index at world position (y ignored) facing
 * `facing` radians, playing `start_frame`. db and index must outlive it.
 * index NULL makes a replica (replica.h): it is only replayed
 * (anim_controller_replay), never ticked (a tick is ANIM_EINVAL).
 * 0, ANIM_EINVAL (bad params, no trajectory terms in the schema), ANIM_ERANGE
 * (start frame), ANIM_ENOMEM. Free with anim_controller_free. */
int anim_controller_init(anim_controller_t *out_character, const anim_database_t *db, const anim_search_index_t *index,
                        const anim_controller_params_t *params, vec3 position, float facing, int start_frame);
void anim_controller_free(anim_controller_t *character);
/* Bytes a character on a skeleton of nbones allocates for its per-bone
 * state (offsets, displayed and global pose, blend flags): one block. */
size_t anim_controller_bone_bytes(int nbones);

/* Asks the caches for c's state and per-bone block, for a caller about to
 * tick c after another character: a crowd's characters are separate
 * allocations that no hardware prefetcher can guess, and ten thousand of
 * them do not stay in cache. Changes nothing. */
void anim_controller_prefetch(const anim_controller_t *c);

/* Starts the character over without allocating, as anim_controller_init
 * leaves it (no offsets, no foot locks, a search on the next tick) but at
 * position (y ignored) facing `facing` radians, playing start_frame, its
 * simulation already moving at velocity (m/s, world; y ignored). Keeps db,
 * index, params, input and counters. 0, ANIM_ENONFINITE, ANIM_ERANGE. */
int anim_controller_reset(anim_controller_t *character, vec3 position, float facing, vec3 velocity, int start_frame);

/* Moves the character by step (m, world) as if it had always been there:
 * its simulation and predicted trajectory (on the ground: step's x and z),
 * the inertializer's anchor, the displayed root and the held feet; the
 * input (a goal) stays where it is. For a caller that keeps characters in a
 * bounded world (core/pose/world.h). */
void anim_controller_translate(anim_controller_t *character, vec3 step);

/* 0, ANIM_EINVAL (unknown kind, |stick| > 1.001, negative speed),
 * ANIM_ENONFINITE. */
int anim_controller_input_validate(const anim_controller_input_t *input);
/* Validates, then sets the input; it holds until changed. */
int anim_controller_set_input(anim_controller_t *character, const anim_controller_input_t *input);

/* Advances by dt seconds (> 0; a long dt is applied exactly by the springs
 * and advances the animation by as many frames). 0 or ANIM_EINVAL.
 * Equivalent to tick_begin, anim_search_run when it asks, then tick_end. */
int anim_controller_tick(anim_controller_t *character, float dt);

/* A tick in two halves, so that many characters' searches can run as one
 * batch in between. tick_begin takes the input and decides whether this tick
 * searches: it returns 1 and fills out_query (cols normalized floats, which
 * out_search->query points to) when it does, 0 when it does not, or
 * ANIM_EINVAL (dt). tick_end takes the best hit (NULL: none, or no search)
 * and advances the animation and the simulation; it reads the query, so
 * out_query must stay as tick_begin left it until then. Calls must
 * alternate. */
int anim_controller_tick_begin(anim_controller_t *character, float dt, float *out_query,
                              anim_search_query_t *out_search);
int anim_controller_tick_end(anim_controller_t *character, const anim_search_hit_t *best);

/* Replays one tick of another character from its record (the record its
 * tick left, anim_controller_t.record) and dt: the same transition, hold,
 * warp (the play rate and upper-body turn its begin decided) and frame advance, the same inertializer update and foot locking, by the
 * same code as tick_end, without input, simulation or search. A character
 * holding the same state as the original before its tick holds the same
 * displayed pose after it, bit for bit (the same build, the same database).
 * 0, ANIM_EINVAL (dt, a transition frame out of the database, a play
 * rate outside [0, 4] or an angle outside [-pi, pi]). */
int anim_controller_replay(anim_controller_t *character, float dt, const anim_controller_record_t *record);

/* Delays the periodic search by `frames` (spreads a crowd's searches over
 * the ticks of a search interval). */
void anim_controller_stagger(anim_controller_t *character, int frames);

/* The query the character would search with if it searched now: its
 * playing frame's features with the trajectory predicted from the current
 * simulation and smoothed input, relative to the displayed root, normalized
 * (db->features.cols floats into out_query). Reads only: for inspection
 * between ticks (a previewer); a tick's own search builds the same way. */
void anim_controller_query(const anim_controller_t *character, float *out_query);

/* Fills global_positions/global_rotations from the displayed pose (once a
 * tick: later calls find them there). */
void anim_controller_global_pose(anim_controller_t *character);

/* The contacts of the displayed pose, bit i for contact bone i: the feet
 * shown planted (foot_lock.h), or without foot locking the contacts of the
 * frame playing. What a stream reports. */
uint32_t anim_controller_contacts(const anim_controller_t *character);

#endif
