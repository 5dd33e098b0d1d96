/*
 * anim_client_markers.h: marker fitting through the body over the wire
 * (part of the client library; include anim_client.h).
 *
 * anim_client_marker_fit sends marker positions over frames, each marker on
 * a bone with its offset in the bone's frame (or none: found from the first
 * frame), and gets back the poses the database's body model takes when the
 * markers drag it in MuJoCo (docs/physics.md) and each marker's residual. It
 * runs on the server's thread pool. A blocking form and a _send form with a
 * typed callback (the result valid during the callback only, NULL when
 * status != 0).
 */
#ifndef ANIM_CLIENT_MARKERS_H
#define ANIM_CLIENT_MARKERS_H

#include <stdint.h>
#include "anim_client_session.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A marker: a bone (the hips or below) and its offset (m, bone frame). */
typedef struct {
  const char *bone;
  float offset[3];
  int has_offset; /* 0: found from the first frame */
} anim_marker_desc_t;

/* Options; a field left 0 takes the server default (in brackets). */
typedef struct {
  float frame_time;       /* s between frames [1 / the database's rate] */
  float marker_halflife;  /* s, the marker spring [0.01] */
  float prior_halflife;   /* s, the joints' pull toward the nearest database frame [0.05] */
  float outlier_distance; /* m, where a marker lets go [0.3] */
  float far_ratio;        /* impedance far / near [0.02] */
  float settle_time;      /* s held on the first frame [0.5] */
  float scale;            /* markers / body size [1] */
  int estimate_scale;     /* 1: estimate it (retargeting; leave scale 0) */
  float total_mass;       /* kg [70] */
} anim_client_marker_fit_options_t;

/* The answer; free with anim_marker_fit_result_free. Arrays frame-major:
 * positions [nframes][nbones][3] and rotations [nframes][nbones][4] (w x y
 * z): local poses, the bones above the hips at the origin so the hips' are
 * world; residuals [nframes][nmarkers] (m, NaN where missing); offsets
 * [nmarkers][3] (m, the ones used, found ones included). */
typedef struct {
  uint64_t database_version;
  int nframes, nbones, nmarkers;
  char **bones;
  float *positions, *rotations, *residuals, *offsets;
  float scale, mean_residual, max_residual;
  int worst_frame, worst_marker;
} anim_marker_fit_result_t;

void anim_marker_fit_result_free(anim_marker_fit_result_t *result);

typedef void (*anim_marker_fit_cb)(anim_client_t *client, uint64_t id, int status, const anim_marker_fit_result_t *result,
                                   void *data);

/* positions: [nframes][nmarkers][3] m, world, y up; missing: [nframes][nmarkers]
 * (1: not seen) or NULL; options may be NULL. Errors: ANIM_EINVAL (NULL
 * database, markers or positions, counts < 1, a negative option), the
 * server's (ANIM_ENOTFOUND: no such database or bone; ANIM_EINVAL /
 * ANIM_ENONFINITE / ANIM_ERANGE / ANIM_ELIMIT: a field out of its rule),
 * with the message naming the field. */
int anim_client_marker_fit(anim_client_t *client, const char *database, const anim_marker_desc_t *markers, int nmarkers,
                           const float *positions, const uint8_t *missing, int nframes,
                           const anim_client_marker_fit_options_t *options, anim_marker_fit_result_t **out_result,
                           int timeout_ms);
int anim_client_marker_fit_send(anim_client_t *client, const char *database, const anim_marker_desc_t *markers,
                                int nmarkers, const float *positions, const uint8_t *missing, int nframes,
                                const anim_client_marker_fit_options_t *options, anim_marker_fit_cb cb, void *data,
                                uint64_t *out_id);

#ifdef __cplusplus
}
#endif

#endif
