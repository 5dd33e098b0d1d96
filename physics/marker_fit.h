/*
 * marker_fit.h: a pose from motion-capture markers, found by the body model
 * (body.h) being dragged by them in MuJoCo: skeleton fitting by physics,
 * the seed's (004_*) first use of a constraint solver. The kinematic fitter
 * (core/fit/pose_fit.h) solves the same problem by Gauss-Newton; this one
 * lets the engine do it, so the body's joints, limits, masses and the
 * ground take part.
 *
 * How (docs/physics.md has the figures):
 *  - each marker is a mocap body (MuJoCo's kinematic body, placed by us
 *    every substep) joined to its point on a bone (the bone's joint plus
 *    the marker's offset in the bone's frame) by a soft connect equality
 *    constraint. The body's own joints are exact (reduced coordinates), so
 *    markers are always looser than the joints;
 *  - marker softness from the project's spring tuning, not hand-picked
 *    constants: the marker half-life h gives the critically damped spring
 *    per unit mass, y = 2 ln2 / h, k = y^2, c = 2y (spring.h); that
 *    implicit spring at the engine's step dt is ODE's ERP = dt k / (dt k +
 *    c), CFM m = 1 / (dt k + c) (anim_spring_implicit_to_erp_cfm); a soft
 *    constraint in MuJoCo solves (A + R) f = aref - a0 with a0 the
 *    unconstrained acceleration, and gives ODE's step exactly when
 *        R = CFM / dt        (impedance d = A / (A + R) = 1 / (1 + m CFM / dt)
 *                              = 1 - 1 / (1 + y dt)^2, mass-free),
 *        aref = -(1 / dt) v - (ERP / dt^2) x,
 *    i.e. a flat solimp (d, d) and the direct solref (-(ERP / dt^2) d,
 *    -d / dt) (MuJoCo's K = -solref[0] / dmax^2, B = -solref[1] / dmax,
 *    aref = -B v - K imp x, dmax = solimp[1]). test_tuning checks the
 *    figures against spring.h's conversions;
 *  - glitches: each marker sample is checked against the marker's own
 *    history (marker_gate.h): further from its constant-velocity prediction
 *    than the database's largest acceleration of that point allows, it is
 *    rejected and the body follows the line between the accepted samples
 *    around it (a hand marker 0.5 m off for one frame moves its arm 0.05
 *    cm). The bound is the data's, not a distance picked by hand;
 *  - what the gate lets through (a marker the body cannot reach): each
 *    frame a marker's impedance follows MuJoCo's solimp
 *    curve (midpoint 0.5, power 2) from d down to d_far = d * far_ratio at
 *    outlier_distance, evaluated on the error the constraint will see at
 *    the frame's end (the point moved on at its own velocity against the
 *    marker, plus the velocity lead below), with solref scaled to keep K
 *    and B: a marker off by that much pulls with far_ratio^2 of its
 *    stiffness, so a one-frame glitch does not kink the pose, while a fast
 *    marker, whose point moves with it, keeps its grip. The velocity is
 *    per axis the minmod of the backward and forward differences, so a
 *    glitch lends its neighbours no velocity; a marker let go starts the
 *    next frame's goal at that frame's position;
 *  - no lag from the damping: the mocap body is placed at the marker plus
 *    (dt / ERP) times the marker's velocity, which turns the damping term
 *    -v / dt into -(v - v_marker) / dt (MuJoCo's mocap bodies carry no
 *    velocity of their own);
 *  - a soft prior toward the nearest database frame: each ball joint a
 *    spring toward the prior pose, MuJoCo's passive joint stiffness and
 *    damping (qpos_spring, jnt_stiffness, dof_damping), critically damped
 *    with prior_halflife on each joint's inertia (anim_spring_critical_gains:
 *    k = I y^2, c = 2 I y), by default the physical characters' joint drive
 *    (ANIM_PHYSICS_DEFAULT_HALFLIFE, 0.05 s: five times the markers'). The
 *    prior pose is fit_pose's (marker_prior.h): the database frame nearest
 *    to the markers, searched every other frame on the markers not let
 *    go, switches inertialized; the springs' rest follows it. It
 *    holds what the markers do not see (a forearm's twist, a toe);
 *  - gravity and the ground contacts of the body model stay on: the body
 *    stands on the floor, it does not pass through it;
 *  - the first frame: the body starts in the prior pose placed by Umeyama's
 *    rigid fit (umeyama.h) of its marker points to the markers, and settles
 *    for settle_time seconds on the first frame's markers before the clip
 *    plays; markers without an offset take theirs from the settled pose
 *    (the offset that puts them where they are); retargeting: scale 0
 *    estimates the markers' size against the body's by Umeyama's
 *    similarity fit (the seed's first note) after each settle (up to 12,
 *    until it changes by less than 0.1 %; these settles hold the mean pose,
 *    as the search needs the body's size, then a quarter settle on the
 *    searched prior), and scales the markers by 1 / scale about the first
 *    frame's ground point, so a body 0.8x the size takes 0.8x strides with
 *    its feet on the ground; a scale > 0 is taken as given (1: the markers
 *    as they are).
 *
 * Output per frame: the pose in the database's layout (local positions and
 * rotations of all bones; the bones above the hips, bone 0 included, at the
 * world origin with identity rotations, so the hips' local transform is
 * their world one), and each marker's residual (metres between the marker,
 * scaled when a scale applies, and its point on the fitted body).
 *
 * Validity rules (anim_marker_fit_create):
 *  1. 1 <= nmarkers <= ANIM_MARKER_FIT_MAX_MARKERS; each marker's bone has
 *     a body (the hips or below: anim_physics_model_has_body, or a welded
 *     leaf); a given offset is finite and within 1 m;
 *  2. marker_halflife in [0.002, 1] s, prior_halflife in [0.01, 100] s and
 *     at least marker_halflife; outlier_distance in [0.01, 10] m; far_ratio
 *     in [1e-4, 1]; settle_time in [0, 10] s; scale 0 or in [0.1, 10];
 *  3. frames (anim_marker_fit_run): 1 <= nframes, frame_time in [1/1000,
 *     1] s, every present marker position finite and within 1e4 m; at
 *     least 3 markers present in the first frame.
 * Nothing is written to the outputs on a refused input; a simulation that
 * diverges leaves the frames before it written.
 */
#ifndef ANIM_PHYSICS_MARKER_FIT_H
#define ANIM_PHYSICS_MARKER_FIT_H

#include "body.h"
#include "fit/pose_fit.h"

#define ANIM_MARKER_FIT_MAX_MARKERS 128

typedef struct {
  int bone;      /* database bone the marker sits on */
  vec3 offset;   /* m, in the bone's frame (its joint the origin) */
  int has_offset; /* 0: found from the settled first frame */
} anim_marker_t;

typedef struct {
  float marker_halflife;  /* s: the marker spring (default 0.01) */
  float prior_halflife;   /* s: the joints' pull toward the prior pose (default ANIM_PHYSICS_DEFAULT_HALFLIFE, 0.05) */
  float outlier_distance; /* m: beyond it a marker pulls with far_ratio^2 of its stiffness (default 0.3) */
  float far_ratio;        /* impedance far / near (default 0.02) */
  float settle_time;      /* s held on the first frame before the clip (default 0.5) */
  float scale;            /* 0: estimated (retargeting); > 0: markers divided by it (default 1) */
} anim_marker_fit_options_t;

void anim_marker_fit_options_default(anim_marker_fit_options_t *out_options);

typedef struct anim_marker_fit anim_marker_fit_t;

/* A fitter for this marker set on model (built for db, whose frames give
 * the prior pose). Both must outlive the fitter (the prior searches db;
 * the model's addresses are read). Builds its own MuJoCo model: the body
 * model's plus the markers' mocap bodies and constraints, and the prior's
 * search (fit_pose's model, one pass over db). NULL with a message naming the field (markers[i].bone,
 * markers[i].offset, nmarkers, marker_halflife, ...) or the cause. */
anim_marker_fit_t *anim_marker_fit_create(const anim_physics_model_t *model, const anim_database_t *db,
                                          const anim_marker_t *markers, int nmarkers,
                                          const anim_marker_fit_options_t *options, char *err, int errlen);
/* The same, the prior searching with a pose-fit model built elsewhere (a
 * server's cache): see anim_marker_prior_create (marker_prior.h) for what
 * it must be; NULL: built here. */
anim_marker_fit_t *anim_marker_fit_create_shared(const anim_physics_model_t *model, const anim_database_t *db,
                                                 const anim_marker_t *markers, int nmarkers,
                                                 const anim_marker_fit_options_t *options,
                                                 const anim_pose_fit_model_t *prior_model, const int *tracker_of,
                                                 char *err, int errlen);
void anim_marker_fit_free(anim_marker_fit_t *fit);

/* Fits nframes frames of marker positions (positions[f * nmarkers + i],
 * metres, world, y up; present[f * nmarkers + i] 0 for a marker not seen in
 * that frame, NULL: all present) taken frame_time seconds apart. Writes
 * out_local_positions / out_local_rotations [nframes * nbones] and
 * out_residuals [nframes * nmarkers] (NaN for a marker not present; any
 * output may be NULL). out_scale (may be NULL): the scale used.
 * 0; ANIM_EINVAL / ANIM_ENONFINITE / ANIM_ERANGE with a message naming the
 * field (positions[f][i], frame_time, nframes); ANIM_ENONFINITE also when
 * the simulation diverges. Allocates its scratch per call. */
int anim_marker_fit_run(anim_marker_fit_t *fit, const vec3 *positions, const unsigned char *present, int nframes,
                        float frame_time, vec3 *out_local_positions, quat *out_local_rotations, float *out_residuals,
                        float *out_scale, char *err, int errlen);

/* The markers' offsets after the last run (found ones included). */
void anim_marker_fit_offsets(const anim_marker_fit_t *fit, vec3 *out_offsets);

/* Engine steps (mj_step calls) the last run took, settles included. */
long anim_marker_fit_steps(const anim_marker_fit_t *fit);

/* Marker samples the gate (marker_gate.h) rejected in the last run, and
 * each marker's acceleration bound (m/s^2, nmarkers) it used. */
long anim_marker_fit_rejected(const anim_marker_fit_t *fit);
void anim_marker_fit_bounds(const anim_marker_fit_t *fit, float *out_accel);

/* For benchmarks: CPU seconds (this thread's) of `steps` mj_step calls
 * alone on the fitter's own model and data, from where the last run left
 * them (the next run starts over). */
double anim_marker_fit_reference_cost(anim_marker_fit_t *fit, long steps);

/* Engine step and its ERP/CFM, impedance and solref for the options (for
 * the docs and the test of the mapping). */
typedef struct {
  double dt, erp, cfm_mass, impedance, impedance_far, solref[2];
  int substeps_per_60hz;
} anim_marker_fit_tuning_t;
void anim_marker_fit_tuning(const anim_marker_fit_t *fit, anim_marker_fit_tuning_t *out_tuning);

#endif
