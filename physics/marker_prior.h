/*
 * marker_prior.h: the pose the marker fitter's joint springs hold
 * (marker_fit.h), chosen as the kinematic fitter chooses its own: the
 * database frame nearest to the markers (core/fit/pose_fit.h, step 2).
 * This is no second search: it runs fit_pose's fitter on the markers and
 * takes its prior pose (the nearest frame by the pose-fit model's features,
 * searched every search_interval frames, played on between searches, each
 * switch inertialized), so the prior is continuous and moves with the clip.
 *
 * Which markers the search sees: fit_pose takes at most
 * ANIM_POSE_FIT_MAX_TRACKERS, each bone once. The first marker of each bone
 * is a candidate; with more candidates than that, the rule is farthest
 * first on the database's first frame: the marker on the root-most bone,
 * then each time the candidate whose bone is farthest from the bones
 * already chosen (the extremities: head, hands, feet), so the search sees
 * the limbs whatever the marker set. A marker without an offset is searched
 * at its bone's joint.
 *
 * Update rule (marker_fit.c): one fitter step every other frame of the
 * clip (dt two frames; on the held-out clips the same error as every frame,
 * 1.57 cm, for half the cost: a step is 0.03-0.05 ms, a sixth of a frame's
 * physics), searching at each step, given the frame's gated goals
 * (marker_gate.h) of the markers the fitter has not let go. The springs'
 * rest is set after every step.
 *
 * Not here: the physics (marker_fit.c), the springs (their strength).
 */
#ifndef ANIM_PHYSICS_MARKER_PRIOR_H
#define ANIM_PHYSICS_MARKER_PRIOR_H

#include "database/database.h"
#include "fit/pose_fit.h"
#include "marker_fit.h"

typedef struct anim_marker_prior anim_marker_prior_t;

/* The markers the search sees (the rule above): their indices into
 * markers, in out_markers (ANIM_POSE_FIT_MAX_TRACKERS room); their count. */
int anim_marker_prior_choose(const anim_database_t *db, int root, const anim_marker_t *markers, int nmarkers,
                             int *out_markers);

/* A prior for this marker set on db (read-only; must outlive the prior),
 * whose pelvis is bone root. shared NULL: builds its own pose-fit model
 * (one pass over db: 8 ms on GAMES-105's 1,872 frames, 20 ms on Bandai
 * Namco's 6,044). Else searches with shared (must outlive the prior),
 * built for the chosen markers' bones and offsets (a marker without one:
 * zero), its tracker tracker_of[k] being the k-th chosen marker. NULL with
 * a message in err. */
anim_marker_prior_t *anim_marker_prior_create(const anim_database_t *db, int root, const anim_marker_t *markers,
                                              int nmarkers, const anim_pose_fit_model_t *shared,
                                              const int *tracker_of, char *err, int errlen);
void anim_marker_prior_free(anim_marker_prior_t *prior);

/* One frame: positions[nmarkers] (world, m, at the body's size), use[i] 0
 * for a marker not seen or let go; restart 1 forgets the past (the first
 * frame). 0, or ANIM_ENOTFOUND when none of the searched markers is in use
 * on a restart (the prior is then unchanged), or fit_pose's error. */
int anim_marker_prior_step(anim_marker_prior_t *prior, const vec3 *positions, const unsigned char *use, float dt,
                           int restart);

/* The prior pose's local rotations (db->nbones, valid after a step) and
 * the database frame it plays. */
const quat *anim_marker_prior_rotations(const anim_marker_prior_t *prior);
int anim_marker_prior_frame(const anim_marker_prior_t *prior);

/* The markers the search sees (indices into the marker set). */
int anim_marker_prior_searched(const anim_marker_prior_t *prior, int *out_markers);

#endif
