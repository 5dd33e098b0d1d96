/*
 * inverse_dynamics.h: the joint torques and ground reaction forces that
 * move a body model (body.h) along a database's motion, and what the model
 * cannot explain: the root's residual, the seed's "hand of God".
 *
 * Per frame f of a database range (docs/physics.md has the figures):
 *  1. qpos from the frame's pose (the root's free joint from the hips'
 *     world transform, each ball joint from the bone's local rotation);
 *  2. qvel and qacc by central differences over +-step frames of the data's
 *     frame rate, on the configuration manifold (mj_differentiatePos:
 *     quaternion differences, not component-wise):
 *       qvel = (q[f+k] - q[f-k]) / (2 k dt)
 *       qacc = ((q[f+k] - q[f]) / (k dt) - (q[f] - q[f-k]) / (k dt)) / (k dt)
 *     clamped to the frame's clip (one-sided at its ends: the stencil moves
 *     inside). step 0 picks k = round(frame_rate / 30): the databases are
 *     resampled to 60 Hz from 30 Hz captures by linear interpolation, whose
 *     second differences at k = 1 alternate between a spike and zero;
 *  3. MuJoCo's inverse dynamics (mj_inverse) without constraints or passive
 *     forces (on a private copy of the model: contacts, limits, damping
 *     and armature off): the generalized force each dof needs, the root's
 *     six included;
 *  4. ground contacts: at each end of every foot capsule (the foot's and
 *     the toes' geoms) the lowest point and one radius to either side of it
 *     across the foot; those lower than contact_height above the ground
 *     and slower than contact_speed may push, inside the friction cone
 *     (a 4-sided pyramid of the model's friction coefficient). The forces
 *     are the non-negative combination of the pyramids' edges that best
 *     gives the wrench the root needs (Lawson-Hanson NNLS on the 6 rows of
 *     the root's free joint, torque rows weighted by 1 / (1 m), a small
 *     ridge spreading the load between points). Not mj_inverse's own
 *     soft contacts: MuJoCo's contact force is a function of penetration
 *     and penetration velocity (its soft-constraint reference acceleration),
 *     which a motion capture does not carry consistently: the data's feet
 *     hover a few millimetres above the floor or sink into it, giving no
 *     force or a spring's;
 *  5. joint torques = mj_inverse's forces minus J^T of the contact forces
 *     (mj_applyFT per foot); the root's six rows that remain are the
 *     residual (force in world axes, torque about the root joint);
 *  6. power = the sum over ball joints of torque . angular velocity (W).
 *
 * Newton holds by construction on every frame: ground forces + residual +
 * weight = mass x the centre of mass's acceleration (the free joint's
 * translation row is the whole body's), the tests check it against the
 * model's own body accelerations. The residual is not clamped (that would
 * break the balance): frames whose residual passes max_root_torque or
 * max_root_force are flagged and counted.
 *
 * What it does not: muscles (a torque is a joint's net moment), foot
 * deformation (rigid capsules), forces on anything but the feet (a hand on
 * a wall shows up in the residual).
 */
#ifndef ANIM_PHYSICS_INVERSE_DYNAMICS_H
#define ANIM_PHYSICS_INVERSE_DYNAMICS_H

#include "body.h"

#define ANIM_IDYN_MAX_POINTS 16 /* candidate contact points per foot */

typedef struct {
  float max_root_torque; /* N m, the stabiliser's torque limit (default 30, the seed's), >= 0 */
  float max_root_force;  /* N, its force limit (default 0.1 x body weight), >= 0 */
  float contact_height;  /* m: a foot point lower than this may push (default 0.06: the foot capsule's
                          * ankle end sits ~5 cm up when the foot is flat), in [0, 1] */
  float contact_speed;   /* m/s: ... when slower than this (default 0.8), in [0, 100] */
  int step;              /* frames of the central differences, 0..8 (0: round(frame_rate / 30)) */
  int com_acceleration;  /* 1: fill anim_idyn_frame_t.com_acceleration (costs a MuJoCo pass, for checks) */
  float total_mass;      /* kg, the body's mass: 0 for the model's, else in [0.001, 1000]: the solver's copy of
                          * the model has every body's mass and inertia scaled to it (the answer is then the
                          * model built at that mass: inverse dynamics is linear in them), so one model per
                          * database serves any mass. max_root_force is not rescaled: set it for that weight */
} anim_idyn_options_t;

void anim_idyn_options_default(const anim_physics_model_t *model, anim_idyn_options_t *out_options);

/* One frame's forces. Feet: [0] left, [1] right (bone_roles.h). */
typedef struct {
  vec3 foot_force[2];     /* N, world axes (y up): the ground's push on each foot */
  vec3 foot_cop[2];       /* m, world: centre of pressure (the foot's lowest point when unloaded) */
  vec3 residual_force;    /* N, world: what the root's free joint still needs */
  vec3 residual_torque;   /* N m, world axes, about the root joint */
  vec3 com;               /* m, world: the model's centre of mass */
  vec3 com_acceleration;  /* m/s^2, the model's (options.com_acceleration), else zero */
  float power;            /* W: sum over ball joints of torque . angular velocity */
  int over_limit;         /* bit 0: |residual_torque| > max_root_torque; bit 1: |residual_force| > max_root_force */
} anim_idyn_frame_t;

typedef struct {
  int nframes;
  int frames_over_limit;
  float mean_residual_force, max_residual_force;   /* N */
  float mean_residual_torque, max_residual_torque; /* N m */
  int worst_frame;                                 /* database frame of the largest residual torque */
} anim_idyn_summary_t;

typedef struct anim_idyn anim_idyn_t;

/* An inverse-dynamics solver on model (which must outlive it), built from
 * db (its skeleton names the feet; db need not outlive it): a private copy
 * of the mjModel (constraints and passive forces off, no armature) and one
 * mjData. options may be NULL (defaults). NULL with a message in err naming
 * the field: db not the model's skeleton, options out of range, a skeleton
 * without two feet (bone_roles.h), out of memory. */
anim_idyn_t *anim_idyn_create(const anim_physics_model_t *model, const anim_database_t *db,
                              const anim_idyn_options_t *options, char *err, int errlen);
void anim_idyn_free(anim_idyn_t *idyn);

/* The feet's bones: [0] left, [1] right. */
void anim_idyn_feet(const anim_idyn_t *idyn, int out_feet[2]);

/* Inverse dynamics of db's frames [start, stop), which must lie in one of
 * db's ranges (the clip the differences stay inside) of at least 3 frames;
 * db must be the database the model was built from (same skeleton).
 * out_frames: [stop - start]; out_torques: [(stop - start) * nbones] local
 * joint torques per bone in the bone's own axes (N m; zero for bone 0, the
 * bones above the hips and the root, whose share is the residual), may be
 * NULL; out_summary may be NULL. Allocates its scratch once per call.
 * 0; ANIM_EINVAL (NULL, a skeleton that is not the model's), ANIM_ERANGE
 * (start/stop out of bounds, across ranges or fewer than 3 frames in the
 * range), ANIM_ENONFINITE (a pose that is not finite), ANIM_ENOMEM; err
 * names the field. Nothing is written on error but out_frames' prefix. */
int anim_idyn_run(anim_idyn_t *idyn, const anim_database_t *db, int start, int stop, anim_idyn_frame_t *out_frames,
                  vec3 *out_torques, anim_idyn_summary_t *out_summary, char *err, int errlen);

/* The same on a clip of poses instead of a database range: positions and
 * rotations, nframes x nbones each, frame-major, the model's skeleton's local
 * ones (bone 0's in the world), sampled at frame_rate Hz (a character's
 * recent ticks: its history, core/character/history.h). Frames [start,
 * stop) of the clip are solved; the differences stay inside [0, nframes),
 * which needs 3 frames. The summary's worst_frame is a clip frame. Codes as
 * anim_idyn_run's (ANIM_EINVAL also for frame_rate outside (0, 10000] Hz). */
int anim_idyn_run_poses(anim_idyn_t *idyn, const vec3 *positions, const quat *rotations, int nframes,
                        float frame_rate, int start, int stop, anim_idyn_frame_t *out_frames, vec3 *out_torques,
                        anim_idyn_summary_t *out_summary, char *err, int errlen);

/* For benchmarks: the CPU time (seconds) of one MuJoCo mj_inverse call on
 * the model's original (contacts on) and on the solver's copy, the mean
 * on the solver's inputs (qpos, qvel, qacc) of db's frames [start, stop),
 * `repeat` times, the calls alone timed (NAN on a bad range). */
void anim_idyn_reference_cost(anim_idyn_t *idyn, const anim_database_t *db, int start, int stop, int repeat,
                              double *out_original, double *out_copy);

#endif
