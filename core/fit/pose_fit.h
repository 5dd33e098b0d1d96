/*
 * pose_fit.h: a full-body pose from a few tracked points (a headset, two
 * controllers, a pelvis tracker...), on a motion database's skeleton, scaled
 * to the user, per frame and without allocation.
 *
 * A model (anim_pose_fit_model_t) is built once per database and tracker
 * set, read-only afterwards and shared: a small feature schema (each tracked
 * bone's position and velocity in character space), its normalized matrix
 * and search index, the joints the fit moves, and each joint's range of
 * motion in the database. A fitter (anim_pose_fitter_t) is one user's state.
 * Each step (dt seconds, the trackers' positions, optional orientations and
 * weights, any of them possibly lost):
 *
 *  1. Goals. Each tracker pulls through a spring: its goal is a critically
 *     damped spring (spring.h) tracking the measurement as it moves at its
 *     velocity (given, or the slope of the last ANIM_POSE_FIT_HISTORY
 *     positions), whose stiffness leaves the fraction tracker_alpha of an
 *     error after tracker_time seconds (anim_spring_halflife_reaching:
 *     (1 + u) e^-u = alpha, u = -1 - W-1(-alpha / e); the seed's k_p and
 *     k_d formulas are corrected in spring.c). Tracking with the velocity
 *     leaves no lag at constant velocity and filters the measurement's
 *     noise; a tracker that appears starts its goal where the pose has that
 *     point, so a tracker found again pulls the skeleton over with the tuned
 *     stiffness instead of snapping it. Orientations: the measurement times
 *     an offset that starts at (shown / measured) and decays the same way.
 *  2. Prior. Every search_interval frames (or when the clip ends) the goals
 *     and their velocities are put in character space (the last root, moved
 *     by the pelvis' travel and the yaw spring's turn) and divided by the
 *     user's scale; the database frame nearest in the model's features is
 *     the prior, the frame playing competing with no transition cost.
 *     Switches are inertialized (inertialize.h), so the prior pose is
 *     continuous. (Adding the shown pose's feet to the query, as motion
 *     matching does, was tried: it locks the legs into their own mistakes,
 *     4.7 cm instead of 3.8 cm mean error at equal weight.)
 *  3. Root and scale. The root (on the ground, yaw only) follows, through a
 *     critically damped spring on the yaw (root_halflife: the fit wobbles
 *     with the prior's arm swing), the Umeyama YAW fit (umeyama.h) of the
 *     prior's tracked points, scaled, to the goals, each point weighted by
 *     the inverse of its variance about the root in the database (the
 *     pelvis rides on the root, a hand swings); the ground position puts
 *     the weighted centroids over each other. The user's scale is the
 *     running (exponential, scale_halflife) mean of the SIMILARITY fit's
 *     scale, started from the ratio of the trackers' heights to the
 *     database's mean heights, or fixed by params.scale. The first step has
 *     no root: it tries 8 yaws, each with its own search, and keeps the one
 *     whose nearest frame is nearest.
 *  4. Soft constraints. Starting from the prior plus the last step's offsets,
 *     `iterations` Gauss-Newton steps minimise
 *        sum_k |x_k(q) - g_k|^2 / cfm_k  +  |q - q_prior|^2_M
 *     over the pelvis translation and the rotations of the joints between
 *     the pelvis and the tracked bones, x_k the tracked points (positions,
 *     and orientations where given). Each step is the damped least-squares
 *     update in the form of a soft-constraint solver (ODE's, 004_*):
 *        (J M^-1 J^T + CFM) lambda = r - J d,   dq = d + M^-1 J^T lambda,
 *     r the goal errors, d the way back to the prior. CFM = tracker_sigma^2
 *     / weight lets a tracker give (noise, conflicts); M^-1 is each joint's
 *     covariance about its mean in the database (per axis of the joint's
 *     mean frame, times prior_sigma_scale^2): the pull toward the prior pose
 *     is what keeps the system solvable, the role CFM plays in a constraint
 *     solver, and it decides which joints give first (a shoulder before the
 *     spine). After each step every moved joint is clamped to its range of
 *     motion in the database (rotation vector about its mean, per axis,
 *     widened by limit_margin: a locomotion database's arms barely rise,
 *     so a margin of 0.1 rad left a raised hand 8 cm short, 0.3 rad
 *     within 3 cm). Two steps a frame: on the held-out clips (searching every
 *     frame) one step gives a mean error of 3.84 cm, two 3.61 cm, three
 *     3.61 cm and more jitter (the prior and the last offsets start the
 *     solve close). Searching every other frame costs nothing in quality
 *     (3.55 cm) and saves a fifth of the time.
 *  5. Lost trackers. When a tracker is lost its rows leave the solve and
 *     the joints only it held return to the prior; that jump is
 *     inertialized on the shown pose (inertialize.h, lost_halflife), from
 *     the last fit moved on by its own velocity to the new fit, whose freed
 *     joints take the prior's velocity. Meanwhile the query takes the lost
 *     bone from the shown pose. When the tracker is back its goal spring
 *     starts at the shown point, and the offsets of its joints are dropped
 *     (the solve now puts the point there).
 *  6. Feet. Planted feet (the prior frame's contacts) are held by the foot
 *     locks of foot_lock.h.
 *
 * Output: the pose as local transforms (bone 0 the root in world space,
 * bone lengths times the scale), its global positions and rotations, the
 * scale, and each tracker's residual (metres from its tracked point).
 *
 * Validity rules (anim_pose_fit_params_validate):
 *  1. tracker_alpha in (0, 1), tracker_time > 0 s;
 *  2. tracker_sigma > 0 m, orientation_sigma > 0 rad, translation_sigma > 0 m,
 *     prior_sigma_scale > 0, limit_margin >= 0 rad;
 *  3. 1 <= iterations <= ANIM_POSE_FIT_MAX_ITERATIONS;
 *  4. search_interval >= 1 frames, transition_cost >= 0, ignore_range_end >= 0;
 *  5. root_halflife, inertialize_halflife, lost_halflife, scale_halflife > 0 s;
 *  6. scale == 0 (estimate) or > 0 (fixed);
 *  7. foot_lock.unlock_radius > 0 m and .release_halflife > 0 s when enabled;
 *  8. every value finite.
 * Tracker inputs (checked by anim_pose_fitter_step): for each present tracker
 * a finite position, a unit orientation when has_orientation, a finite
 * velocity when has_velocity, a finite weight > 0.
 */
#ifndef ANIM_POSE_FIT_H
#define ANIM_POSE_FIT_H

#include <stddef.h>
#include "database/database.h"
#include "database/feature.h"
#include "character/foot_lock.h"
#include "motion/inertialize.h"
#include "search/search.h"

#define ANIM_POSE_FIT_MAX_TRACKERS 8
#define ANIM_POSE_FIT_MAX_ITERATIONS 8
#define ANIM_POSE_FIT_HISTORY 5 /* frames a velocity slope is taken over */

/* ---- model: built once per database and tracker set ---------------------------- */

typedef struct {
  int ntrackers;                                  /* 1..ANIM_POSE_FIT_MAX_TRACKERS */
  const char *tracker_bones[ANIM_POSE_FIT_MAX_TRACKERS]; /* bone names, each at most once */
  vec3 tracker_offsets[ANIM_POSE_FIT_MAX_TRACKERS];      /* tracked point in the bone's frame, database metres */
  const char *pelvis_bone;       /* NULL: found by name (Hips, Pelvis, ...) */
  float position_weight;         /* feature weight of the trackers' positions (> 0) */
  float velocity_weight;         /* ... and of their velocities (> 0) */
  anim_search_method_t search_method;
} anim_pose_fit_model_options_t;

/* Head, both hands and the pelvis, found by common names (Head, LeftHand /
 * Hand_L, RightHand / Hand_R, Hips / Pelvis). ANIM_ENOTFOUND when db's
 * skeleton lacks one of them. */
int anim_pose_fit_model_options_default(anim_pose_fit_model_options_t *out_options, const anim_database_t *db);

typedef struct {
  const anim_database_t *db;     /* not owned; must outlive the model */
  int ntrackers;
  int tracker_bones[ANIM_POSE_FIT_MAX_TRACKERS];
  vec3 tracker_offsets[ANIM_POSE_FIT_MAX_TRACKERS];
  float mean_heights[ANIM_POSE_FIT_MAX_TRACKERS]; /* database metres, tracked points' mean height */
  float root_weights[ANIM_POSE_FIT_MAX_TRACKERS]; /* 1 / variance (m^-2) of the tracked point about the root */
  int pelvis;                    /* bone with the translation degree of freedom */
  /* Joints the fit rotates: the pelvis and every bone between it and a
   * tracked bone (inclusive), parents first. */
  int njoints;
  int *joints;                   /* njoints bone indices */
  int *joint_of_bone;            /* nbones: index in joints, or -1 */
  uint32_t tracker_joint_mask[ANIM_POSE_FIT_MAX_TRACKERS][4]; /* bit j: joint j moves tracker k (njoints <= 128) */
  quat *joint_mean;              /* njoints: mean local rotation in the database */
  vec3 *joint_low, *joint_high;  /* njoints: range of the rotation vector about the mean (rad) */
  vec3 *joint_sigma;             /* njoints: its standard deviation per axis (rad) */
  anim_features_t features;      /* the model's own schema and matrix (not db->features) */
  anim_search_index_t *index;
} anim_pose_fit_model_t;

/* Builds *out for db (read-only, must outlive the model) and the trackers of
 * options (NULL: anim_pose_fit_model_options_default). 0; ANIM_EINVAL (bad
 * options, a tracker bone not at or below the pelvis), ANIM_ENOTFOUND (a
 * bone name not in the skeleton), ANIM_ENOMEM; message in err. Free with
 * anim_pose_fit_model_free. */
int anim_pose_fit_model_build(anim_pose_fit_model_t *out, const anim_database_t *db,
                              const anim_pose_fit_model_options_t *options, char *err, int errlen);
void anim_pose_fit_model_free(anim_pose_fit_model_t *model);

/* ---- parameters ------------------------------------------------------------------ */

typedef struct {
  float tracker_alpha, tracker_time; /* a goal offset decays to alpha of itself in time s */
  float tracker_sigma;               /* m: CFM = sigma^2 / weight of a position row */
  float orientation_sigma;           /* rad: the same for an orientation row */
  float prior_sigma_scale;           /* times each joint's spread in the database */
  float translation_sigma;           /* m: the pelvis' freedom to leave the prior */
  float limit_margin;                /* rad added to each side of a joint's range */
  int limit_joints;                  /* clamp to the range of motion */
  int iterations;                    /* Gauss-Newton steps per frame */
  int search_interval;               /* frames between searches */
  float transition_cost;             /* added to every frame but the one playing */
  int ignore_range_end;              /* frames at the end of each range not searched */
  float root_halflife;               /* s, the root's yaw follows its fit through a critical spring */
  float inertialize_halflife;        /* s, prior switches */
  float lost_halflife;               /* s, fall-back of a lost tracker */
  float scale;                       /* 0: estimate; else the user's scale */
  float scale_halflife;              /* s, running mean of the estimate */
  anim_foot_lock_params_t foot_lock; /* planted feet held (foot_lock.h) */
} anim_pose_fit_params_t;

void anim_pose_fit_params_default(anim_pose_fit_params_t *out_params);
/* 0 when the rules above hold, else ANIM_EINVAL (ANIM_ENONFINITE for NaN). */
int anim_pose_fit_params_validate(const anim_pose_fit_params_t *params);

/* ---- per frame --------------------------------------------------------------------- */

/* One tracker's measurement, world space, metres / radians / seconds. */
typedef struct {
  int present;           /* 0: lost this frame (the rest is ignored) */
  vec3 position;
  int has_orientation;
  quat orientation;      /* world rotation of the tracked bone */
  int has_velocity;
  vec3 velocity;         /* m/s; estimated from past positions when absent */
  float weight;          /* > 0: confidence, divides the tracker's CFM */
} anim_tracker_input_t;

typedef struct {
  const anim_pose_fit_model_t *model;
  anim_pose_fit_params_t params;
  int nbones;
  /* Outputs, valid after a successful step. */
  vec3 *pose_positions;  /* nbones local (bone 0: world), metres */
  quat *pose_rotations;
  vec3 *global_positions;
  quat *global_rotations;
  float scale;
  float residuals[ANIM_POSE_FIT_MAX_TRACKERS]; /* m; -1 for a lost tracker */
  int prior_frame;
  uint64_t steps, searches, transitions;
  /* State (see pose_fit.c). */
  int started;
  vec3 root_position;    /* ground */
  float root_yaw;        /* rad about +Y */
  float root_yaw_velocity; /* rad/s, of the yaw spring */
  float frame_time_accum;
  float scale_log_mean;  /* log of the running scale estimate */
  int present[ANIM_POSE_FIT_MAX_TRACKERS];
  vec3 goal_position[ANIM_POSE_FIT_MAX_TRACKERS], goal_velocity[ANIM_POSE_FIT_MAX_TRACKERS]; /* the goal springs */
  quat goal_offset_rotation[ANIM_POSE_FIT_MAX_TRACKERS];
  vec3 goal_offset_angular[ANIM_POSE_FIT_MAX_TRACKERS];
  vec3 history[ANIM_POSE_FIT_MAX_TRACKERS][ANIM_POSE_FIT_HISTORY];
  int nhistory[ANIM_POSE_FIT_MAX_TRACKERS];
  vec3 pelvis_reference;  /* last frame's goal of the travel reference (pelvis, or first present tracker) */
  int reference_tracker;  /* which tracker that was, or -1 */
  vec3 shown_velocities[ANIM_POSE_FIT_MAX_TRACKERS]; /* tracked bones in the shown pose, m/s */
  int frames_since_search;
  double tracker_halflife;
  anim_inertializer_t prior_inertializer;
  void *memory;           /* one block: every array below */
  int owns_memory;
  vec3 *prior_offset_positions, *prior_offset_velocities, *prior_offset_angular;
  quat *prior_offset_rotations;
  vec3 *prior_positions, *prior_velocities, *prior_angular;
  quat *prior_rotations;
  vec3 *work_positions;   /* the pose being solved (locals, scaled) */
  quat *work_rotations;
  vec3 *work_globals;
  quat *work_global_rotations;
  quat *joint_offsets;    /* njoints: work = offset * prior, local */
  vec3 pelvis_offset;     /* work pelvis position - prior's, local */
  vec3 *fit_positions;    /* the solved pose, before the lost-tracker blend */
  quat *fit_rotations;
  vec3 *fit_previous_positions; /* ... and one step earlier (its velocity) */
  quat *fit_previous_rotations;
  vec3 *out_offset_positions, *out_offset_velocities, *out_offset_angular;
  quat *out_offset_rotations;
  double *jacobian, *system, *rhs, *minv; /* solver scratch */
  void *search_scratch;
  anim_foot_locks_t feet;
} anim_pose_fitter_t;

/* Bytes of memory a fitter on model needs (all its arrays and scratch). */
size_t anim_pose_fitter_memory_size(const anim_pose_fit_model_t *model);

/* Sets up *out on model (which must outlive it) with params (NULL:
 * defaults) over memory (anim_pose_fitter_memory_size bytes, caller-owned,
 * aligned for double; NULL: allocated here and freed by
 * anim_pose_fitter_free). 0, ANIM_EINVAL (params, size), ANIM_ENOMEM. */
int anim_pose_fitter_init(anim_pose_fitter_t *out, const anim_pose_fit_model_t *model,
                          const anim_pose_fit_params_t *params, void *memory, size_t size);
void anim_pose_fitter_free(anim_pose_fitter_t *fitter);
/* Forgets the user (root, scale, offsets, locks): the next step starts over. */
void anim_pose_fitter_reset(anim_pose_fitter_t *fitter);

/* Fits the pose for one frame of dt seconds (> 0) from the model's trackers'
 * inputs (model->ntrackers entries, in the model's order). Allocates
 * nothing. 0; ANIM_EINVAL (dt, an invalid input: the state is unchanged),
 * ANIM_ENONFINITE, ANIM_ENOTFOUND (no tracker present on a first step:
 * nothing to fit; the state is unchanged). Without any tracker present
 * after the start the pose is the prior played on, at the last root. */
int anim_pose_fitter_step(anim_pose_fitter_t *fitter, const anim_tracker_input_t *inputs, float dt);

#endif
