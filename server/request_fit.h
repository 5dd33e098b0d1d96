/*
 * request_fit.h: bodies of the requests on poses from tracked points: align
 * (two point sets), fit_pose (a one-shot full-body fit) and set_trackers
 * (the input of tracker characters), and the tracker setup
 * create_characters takes for MODE_TRACKER (see request.h).
 *
 * The codec has checked everything that needs no database: counts within
 * their limits, every float finite, orientations unit, weights > 0, bone
 * names plain strings given at most once, fit parameters within the core's
 * rules (anim_pose_fit_params_validate). Bone names are resolved against
 * the database by the services.
 *
 * What it does not: fit (core/fit/pose_fit.h) or run the services (service_fit.c).
 */
#ifndef SRV_REQUEST_FIT_H
#define SRV_REQUEST_FIT_H

#include <stddef.h>
#include <stdint.h>
#include "fit_models.h"
#include "fit/pose_fit.h"
#include "math/umeyama.h"

#define SRV_ALIGN_MAX_POINTS 65536 /* point pairs in one align (Limits.max_align_points) */
#define SRV_MAX_TRACKERS ANIM_POSE_FIT_MAX_TRACKERS /* tracked points of one fit or character */
#define SRV_TRACKER_HOLD_SECONDS 0.5f /* TrackerSetup.hold_seconds default */
/* Gauss-Newton steps per tick of a tracker character by default (the
 * core's default, 2, stays fit_pose's): on the held-out clips one step
 * gives the same mean error (3.55 cm) with 12% more jerk, and costs a
 * third less, which lets 1,000 characters keep 60 Hz on 2 cores. */
#define SRV_TRACKER_ITERATIONS 1
#define SRV_TRACKER_HOLD_MAX_SECONDS 60.0f

typedef struct {
  anim_umeyama_mode_t mode;
  const vec3 *source, *target; /* npoints each (request arena) */
  const float *weights;        /* npoints, or NULL: all 1 */
  int npoints;
} srv_align_request_t;

typedef struct {
  anim_umeyama_t fit;
} srv_align_response_t;

/* One tracker of a fit_pose or set_trackers: the core's input (present
 * false when lost; velocity and orientation flagged when given) and, for
 * fit_pose, the tracked bone (srv_tracked_bone_t, fit_models.h; its first
 * member, so a list of items is a strided list of bones). bone is NULL
 * when not given. */
typedef struct {
  srv_tracked_bone_t tracked;
  anim_tracker_input_t input;
} srv_tracker_item_t;

typedef struct {
  const srv_tracker_item_t *trackers;
  int ntrackers;
  anim_pose_fit_params_t params; /* server defaults with the client's non-zero fields */
} srv_fit_pose_request_t;

typedef struct {
  int prior_frame;
  int nbones;
  const vec3 *local_positions, *global_positions; /* in memory of the response */
  const quat *local_rotations, *global_rotations;
  float residuals[SRV_MAX_TRACKERS]; /* request order */
  int nresiduals;
  float scale;
  int model_built; /* the model was built for this request: finish caches it */
} srv_fit_pose_response_t;

/* One character's trackers in set_trackers (creation order). */
typedef struct {
  uint64_t character;
  const srv_tracker_item_t *trackers;
  int ntrackers;
  int reset;
} srv_character_trackers_t;

typedef struct {
  const srv_character_trackers_t *characters;
  int n;
  uint64_t tick; /* the tick the measurements are for; 0: the next */
} srv_set_trackers_request_t;

/* set_trackers.tick: at most this many ticks after the next, and at most
 * this many sets held per character (one a tick). */
#define SRV_TRACKERS_MAX_AHEAD 31u
#define SRV_TRACKERS_MAX_PENDING 32

typedef struct {
  uint64_t tick;
} srv_set_trackers_response_t;

/* create_characters' MODE_TRACKER options; present 0 when not given. */
typedef struct {
  int present;
  srv_tracked_bone_t trackers[SRV_MAX_TRACKERS];
  int ntrackers;
  anim_pose_fit_params_t params;
  float hold_seconds;
} srv_tracker_setup_t;

#endif
