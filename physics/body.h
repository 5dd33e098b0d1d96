/*
 * body.h: a physically simulated body for a database's skeleton, on MuJoCo
 * (Debian libmujoco-dev 2.2.2), behind this one small interface. It sits
 * outside the core, which stays libc + libm: libanimphysics.a and -lmujoco
 * are linked only by what simulates (the server, its tests).
 *
 * Two objects, as MuJoCo intends (a const mjModel shared by every thread,
 * one mjData per simulated thing):
 *  - anim_physics_model_t: built once per database, read-only afterwards,
 *    shared by every character of that database without locks.
 *  - anim_physics_body_t: one per character: the simulation state, the
 *    drives' settings and the step's scratch. Stepping it allocates nothing.
 *
 * The model (docs/physics.md has the figures):
 *  - Bodies: one per skeleton bone but bone 0 (the database's simulation
 *    bone, the ground projection, which stays kinematic); the bone under it
 *    (the hips) is the free root, every other bone a ball joint at its
 *    joint, rest orientation = the skeleton's rest (identity local rotation),
 *    so a ball joint's quaternion IS the database's local rotation.
 *    Except the leaves (options.weld_leaves, default on): a bone without
 *    children (head, hands, toe tips, finger ends) is welded into its
 *    parent's body: its sphere, centred on its joint, rides on the parent,
 *    which places it exactly where a joint would; its local rotation (which
 *    moves nothing) is the target's. That drops 3 of the engine's degrees
 *    of freedom per leaf (66 to 51 on the default skeleton). Its drive can
 *    be set, and is kept, but moves nothing; a force on it acts on the
 *    parent's body. And the still joints (options.fix_still, default on):
 *    a bone whose local rotation never moves more than ANIM_PHYSICS_STILL
 *    from its first frame's over the database (CMU's zero-length
 *    LHipJoint, LeftCollar, lhand: 6 of its 32 bones) keeps its body but
 *    no joint, fixed at its first frame's rotation; its local rotation
 *    out is the target's; its drive is kept and moves nothing.
 *  - Geometry: one capsule per bone (parent joint -> child joint, its length
 *    the bone's length, the offset), in the parent's body; a bone without
 *    children gets a sphere. Radii: legs from their girths, others 0.3 x
 *    the length within [3, 6] cm (x height / 1.7 m), and none thicker
 *    than the lowest its joints come to the ground over the database's
 *    frames (at least 1 cm), so that the data's feet fit the floor.
 *    Capsules collide only with the ground plane
 *    (y = 0), not with each other nor with other characters: one explicit
 *    MuJoCo contact pair per capsule with the plane, no broad phase.
 *  - Masses: de Leva (1996), "Adjustments to Zatsiorsky-Seluyanov's segment
 *    inertia parameters", J. Biomech. 29(9):1223-1230, male table: thigh
 *    14.16 %, shank 4.33 %, foot 1.37 % of the total mass per leg (the thigh
 *    bone's body; the bodies from the thigh's child down to the foot's
 *    parent; the foot's body and everything below it). The rest (head, trunk
 *    and arms: 6.94 + 43.46 + 2 x (2.71 + 1.62 + 0.61) = 60.28 %) is spread
 *    over the remaining bodies by capsule volume (skeletons do not name
 *    their arms and spine consistently; core/offline/bone_roles.h finds the
 *    legs). Each capsule gets its body's mass by volume share.
 *  - Mass: total_mass (default ANIM_PHYSICS_REFERENCE_MASS, 70 kg). Everything with a unit
 *    of mass scales with it by s = total_mass / 70: the segments (the
 *    table above), the joint armature, and through the joints' inertias
 *    the drives' gains and the model's damping; the root stabiliser's
 *    force limit (3 x body weight) and the default torque limits
 *    (ANIM_PHYSICS_DEFAULT_MAX_TORQUE x s, joints and root). MuJoCo's
 *    contacts and limits are soft constraints defined as accelerations,
 *    so their forces scale too: with no push, a body of any mass moves
 *    as the 70 kg one does (tracking the same, test_body's
 *    test_mass_scaling), and a push of J N s moves it as J x 70 / mass
 *    moves the 70 kg one. A caller that sets max_torque itself sets N m.
 *  - Joint limits: a ball joint's cone (MuJoCo's ball range: the rotation
 *    angle from rest) is the largest angle observed over the database's
 *    frames plus a margin (ANIM_PHYSICS_LIMIT_MARGIN), at least
 *    ANIM_PHYSICS_LIMIT_MIN; a joint whose cone would pass 175 degrees
 *    (a rest pose far from the data) gets none (limit reported as pi).
 *  - Time: the model steps at tick / substeps (options.substeps, default 4
 *    at 60 Hz: 240 Hz), Euler with joint armature (rotor inertia added on
 *    each joint axis): 0.01 kg m^2 on the legs and the root, options.
 *    upper_armature (default 0.3) on the trunk, arms and head, whose light
 *    distal bodies otherwise swing off their targets (tracking 2.1-3.4 cm
 *    instead of 3.0-5.3 over the datasets; it also makes them that much
 *    slower to answer a push); MuJoCo's
 *    PGS solver, 20 iterations (a handful of contact and limit rows: 16 %
 *    fewer instructions per tick than Newton, the same tracking).
 *
 * The drives (anim_physics_step): per bone a mode:
 *  - KINEMATIC: the joint is set to the target (angle and its velocity)
 *    before every substep: it moves the bodies below it, it feels nothing.
 *  - POWERED: a PD torque toward the target local rotation, with gains from
 *    the project's spring tuning: stiffness k = I y^2, damping c = 2 zeta I y
 *    with y = 2 ln2 / halflife (anim_spring_critical_gains, spring.h) on
 *    each joint axis' inertia I (the diagonal of the joint-space mass
 *    matrix in the rest pose: everything below the joint, the rest held),
 *    plus MuJoCo's bias force at the joint (gravity and Coriolis of what
 *    hangs below) and the target's angular acceleration times I, fed
 *    forward; the sum clamped to max_torque (N m, norm). The proportional
 *    term looks one substep ahead (stable PD, Tan et al. 2011). The default
 *    drive's damping is the model's joint damping, which MuJoCo's Euler step
 *    integrates implicitly (explicit damping on a light body between two
 *    stiff joints diverges); other damping adds the difference explicitly.
 *  - LIMP: no torque (the model's damping, the limits and gravity only).
 * The root (hips) has its own mode: POWERED is the seed's "hand of God", a
 * force and a torque toward the target root position and rotation (spring
 * tuned the same way on the total mass and the root's inertia), each
 * clamped to its limit (N, N m): within it a character stands; beyond it
 * it falls. KINEMATIC root: placed at the target; LIMP: free.
 *
 * Poses in and out are the database's: local positions and rotations for
 * all nbones (bone 0 included, as anim_database_frame_pose gives them).
 */
#ifndef ANIM_PHYSICS_BODY_H
#define ANIM_PHYSICS_BODY_H

#include "database/database.h"

#define ANIM_PHYSICS_LIMIT_MARGIN 0.17453292f /* 10 degrees */
#define ANIM_PHYSICS_LIMIT_MIN 0.34906585f    /* 20 degrees */
#define ANIM_PHYSICS_DEFAULT_HALFLIFE 0.05f   /* s, a joint drive's default strength */
#define ANIM_PHYSICS_STILL 0.017453292f       /* 1 degree: a joint turning less over the frames is fixed */
#define ANIM_PHYSICS_REFERENCE_MASS 70.0f     /* kg: the default total mass, the one the constants below are for */
#define ANIM_PHYSICS_DEFAULT_MAX_TORQUE 300.0f /* N m, a joint's and the root's at 70 kg (x total_mass / 70) */

typedef struct anim_physics_model anim_physics_model_t;
typedef struct anim_physics_body anim_physics_body_t;

typedef struct {
  float total_mass;  /* kg, in (0, 1e5) (default 70; see the top) */
  float tick;        /* seconds per anim_physics_step (default 1/60) */
  int substeps;      /* engine steps per tick, 1..64 (default 4) */
  float friction;    /* ground friction coefficient (default 1) */
  int weld_leaves;   /* 1 (default): a bone without children has no joint of its own (see the top); 0: every bone a body */
  int fix_still;     /* 1 (default): a joint the frames never turn (ANIM_PHYSICS_STILL) is fixed (see the top); 0: none */
  float upper_armature; /* kg m^2 per axis of the trunk's, arms' and head's joints at 70 kg (x total_mass / 70), [0, 10] (default 0.3; see the top) */
} anim_physics_model_options_t;

void anim_physics_model_options_default(anim_physics_model_options_t *out_options);

/* Builds the model of db's skeleton, limits from db's frames (see the top).
 * options may be NULL (defaults). Returns NULL with a message in err naming
 * the field or the cause: db invalid, bone 0 without exactly one child,
 * options out of range, or MuJoCo refusing the model. Free with
 * anim_physics_model_free. The model keeps no pointer into db. */
anim_physics_model_t *anim_physics_model_create(const anim_database_t *db, const anim_physics_model_options_t *options,
                                                char *err, int errlen);
void anim_physics_model_free(anim_physics_model_t *model);

/* What the model is made of, for tests and tools (read-only views). */
typedef struct {
  int bone;          /* the bone whose body holds it */
  int child;         /* the bone it reaches, -1 for a leaf's sphere */
  float length;      /* m, between the two joints (0 for a sphere) */
  float radius;      /* m */
  float mass;        /* kg */
} anim_physics_capsule_t;

typedef struct {
  int nbones;
  int root;                      /* the free body's bone (bone 0's child) */
  int ncapsules;
  const anim_physics_capsule_t *capsules;
  const float *body_mass;        /* [nbones] kg, 0 for bone 0 */
  const float *limit;            /* [nbones] ball cone half-angle, rad (0: no ball joint) */
  const float *inertia;          /* [nbones] mean of the joint axes' inertia (M_ii, armature included), kg m^2 (root: total mass; 0: no ball joint) */
  float total_mass;              /* kg */
  float rest_root_height;        /* m: the root's height with the rest pose on the ground */
  float tick;
  int substeps;
  const char *mjcf;              /* the MJCF text MuJoCo loaded */
} anim_physics_model_info_t;

void anim_physics_model_info(const anim_physics_model_t *model, anim_physics_model_info_t *out_info);

/* Bytes the model holds (its struct, MuJoCo's mjModel and buffer, the MJCF
 * text); 0 for NULL. */
size_t anim_physics_model_bytes(const anim_physics_model_t *model);

typedef enum { ANIM_PHYSICS_KINEMATIC = 0, ANIM_PHYSICS_POWERED = 1, ANIM_PHYSICS_LIMP = 2 } anim_physics_mode_t;

/* A joint's drive (UE Physics Control's names: strength as a half-life,
 * damping ratio, max torque). Rules: mode one of the three; halflife in
 * [0.005, 10] s; damping_ratio in [0, 10]; max_torque in [0, 1e5] N m. */
typedef struct {
  int mode;
  float halflife;
  float damping_ratio;
  float max_torque;
} anim_physics_drive_t;

/* The root stabiliser (hand of God). Rules: mode; halflife in [0.005, 10] s;
 * damping_ratio in [0, 10]; max_force in [0, 1e6] N; max_torque in
 * [0, 1e5] N m. */
typedef struct {
  int mode;
  float halflife;
  float damping_ratio;
  float max_force;
  float max_torque;
} anim_physics_root_t;

/* Defaults: powered, half-life ANIM_PHYSICS_DEFAULT_HALFLIFE (0.05 s),
 * damping ratio 1, max torque 300 N m x total_mass / 70 (the root: powered,
 * half-life 0.03 s, ratio 1, 3 x body weight, 300 N m x total_mass / 70:
 * at 1.5 x the force limit bound in a walk and the root lagged 1.5-4.6
 * cm). model NULL: the 70 kg body's. */
void anim_physics_drive_default(const anim_physics_model_t *model, anim_physics_drive_t *out_drive);
void anim_physics_root_default(const anim_physics_model_t *model, anim_physics_root_t *out_root);

/* One character's simulation state on model (which must outlive it), every
 * drive at its default, placed at the model's rest pose. NULL on ENOMEM. */
anim_physics_body_t *anim_physics_body_create(const anim_physics_model_t *model, char *err, int errlen);
void anim_physics_body_free(anim_physics_body_t *body);

/* Places the body at a pose (local positions and rotations of all nbones),
 * at rest (zero velocities), and takes it as the previous target.
 * 0, ANIM_EINVAL (NULL), ANIM_ENONFINITE. */
int anim_physics_body_reset(anim_physics_body_t *body, const vec3 *local_positions, const quat *local_rotations);

/* Sets bone's drive (a bone below the root: one with a ball joint) or the root's.
 * 0, ANIM_ERANGE (bone), ANIM_EINVAL (a field out of its rule: message in
 * err naming it); nothing changes on error. */
int anim_physics_body_set_drive(anim_physics_body_t *body, int bone, const anim_physics_drive_t *drive, char *err,
                                int errlen);
int anim_physics_body_set_root(anim_physics_body_t *body, const anim_physics_root_t *root, char *err, int errlen);

/* Advances the body by one tick toward the target pose (local positions and
 * rotations of all nbones), writes the simulated pose (same layout) to the
 * out_ arrays (may be NULL). Target velocities come from the previous
 * target (the first step after reset: zero). Allocates nothing.
 * 0, ANIM_EINVAL (NULL target), ANIM_ENONFINITE (a non-finite target: the
 * body is unchanged; or the simulation diverged: the caller resets it). */
int anim_physics_step(anim_physics_body_t *body, const vec3 *target_positions, const quat *target_rotations,
                      vec3 *out_positions, quat *out_rotations);

/* The simulated pose as global positions of all bones (bone 0: the
 * target's), without stepping. */
void anim_physics_body_global_positions(const anim_physics_body_t *body, vec3 *out_positions);

/* ---- pushes and MuJoCo's messages (body_push.c) ---- */

/* 1 when bone has a body of its own (the root and the bones below it), else 0. */
int anim_physics_model_has_body(const anim_physics_model_t *model, int bone);

/* Adds a force (N, world) at point (m, in bone's frame: its joint the
 * origin) to bone's body, held over every later step until
 * anim_physics_body_push_clear (an impulse J: J / tick for one step). The
 * point is placed with the body as the last step or reset left it.
 * 0, ANIM_EINVAL (NULL), ANIM_ERANGE (a bone without a body),
 * ANIM_ENONFINITE; nothing applied on error. No bound on the size: the
 * caller's. */
int anim_physics_body_push(anim_physics_body_t *body, int bone, vec3 point, vec3 force);
void anim_physics_body_push_clear(anim_physics_body_t *body);

/* Sizes the bodies created afterwards (mjModel.nstack in mjtNum values,
 * njmax constraint rows, nconmax contacts), for a server that keeps many:
 * the model's njmax 600 and nconmax 150 make mj_makeData's buffer 5.5 MB
 * (zeroed: 4 ms a body) and MuJoCo's stack 2.2 million values (17.8 MB of
 * address space), where a 70 kg body falling and lying peaked at 91
 * rows, 22 contacts and 23,143 stack values. Call before the model is
 * shared (they are model fields). Past njmax or nconmax MuJoCo drops
 * constraints with a warning; out of stack is a MuJoCo error
 * (anim_physics_step_guarded returns ANIM_EINTERNAL). 0, ANIM_EINVAL
 * (NULL, nstack outside [1000, 1e8], njmax [10, 1e5], nconmax [4, 1e4]). */
int anim_physics_model_set_sizes(anim_physics_model_t *model, int nstack, int njmax, int nconmax);

/* Bytes a body holds (its struct, MuJoCo's mjData, buffer and stack). */
size_t anim_physics_body_bytes(const anim_physics_body_t *body);

/* Sends MuJoCo's warnings (error 0) and errors (error 1) to cb (any
 * thread, so cb must be thread-safe) instead of MUJOCO_LOG.TXT and
 * stderr, and keeps MuJoCo's errors from exiting the process: in
 * anim_physics_step_guarded an error returns ANIM_EINTERNAL (reset the
 * body then); elsewhere it aborts. Process-wide (MuJoCo's handlers are);
 * call once before any model is built. */
void anim_physics_set_log(void (*cb)(int error, const char *message));

/* anim_physics_step, with a MuJoCo error returned as ANIM_EINTERNAL. */
int anim_physics_step_guarded(anim_physics_body_t *body, const vec3 *target_positions, const quat *target_rotations,
                              vec3 *out_positions, quat *out_rotations);

#endif
