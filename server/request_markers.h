/*
 * request_markers.h: body of marker_fit (see request.h).
 *
 * What it does not: check or run it (codec_markers.c, service_markers.c).
 */
#ifndef SRV_REQUEST_MARKERS_H
#define SRV_REQUEST_MARKERS_H

#include <stdint.h>

#include "math/anim_math.h"

#define SRV_MARKER_FIT_MAX_MARKERS 128 /* physics/marker_fit.h's ANIM_MARKER_FIT_MAX_MARKERS */

/* Checked by the decoder but the bones (names; the service knows the
 * database). Views into the decoded message, or the request's arena. */
typedef struct {
  int nmarkers, nframes;
  const char *bones[SRV_MARKER_FIT_MAX_MARKERS];
  vec3 offsets[SRV_MARKER_FIT_MAX_MARKERS];
  uint8_t has_offset[SRV_MARKER_FIT_MAX_MARKERS];
  const vec3 *positions;   /* nframes x nmarkers */
  const uint8_t *present;  /* nframes x nmarkers, or NULL (all present) */
  float frame_time;        /* s; 0: the database's */
  float marker_halflife, prior_halflife, outlier_distance, far_ratio, settle_time, scale, total_mass; /* 0: default */
  int estimate_scale;
} srv_marker_fit_request_t;

/* Response-owned arrays, frame-major. */
typedef struct {
  int nframes, nbones, nmarkers;
  float *positions;  /* nframes x nbones x 3 */
  float *rotations;  /* nframes x nbones x 4, w x y z */
  float *residuals;  /* nframes x nmarkers (NaN: missing) */
  float *offsets;    /* nmarkers x 3 */
  float scale, mean_residual, max_residual;
  int worst_frame, worst_marker;
  struct anim_physics_model *model; /* prepare: the database's body model (70 kg), NULL when not built yet */
  int prior_built;                  /* handle built the prior's pose-fit model (out->fit_model): finish caches it */
} srv_marker_fit_response_t;

#endif
