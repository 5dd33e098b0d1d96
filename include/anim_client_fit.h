/*
 * anim_client_fit.h: poses from tracked points (part of the client
 * library; include anim_client.h).
 *
 * align: the least-squares transform between two point sets (Umeyama).
 * fit_pose: a full-body pose of a database's skeleton from a few tracked
 * bones, once. Tracker characters (ANIM_MODE_TRACKER) do it every tick
 * from the trackers anim_client_trackers_set gives them. Every request has
 * a blocking form and a _send form with a typed callback (results valid
 * during the callback only, NULL when status != 0).
 */
#ifndef ANIM_CLIENT_FIT_H
#define ANIM_CLIENT_FIT_H

#include "anim_client_session.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { ANIM_ALIGN_RIGID = 0, ANIM_ALIGN_SIMILARITY = 1, ANIM_ALIGN_YAW = 2 };

/* target ~= scale * rotation(source) + translation. */
typedef struct {
  float rotation[4];    /* w, x, y, z */
  float matrix[9];      /* the same rotation, row-major */
  float translation[3];
  float scale, yaw;     /* yaw: ALIGN_YAW, radians */
  double cost, rms;     /* weighted squared residual (m^2), its RMS (m) */
} anim_align_result_t;

/* n points (x, y, z each) of source and target; weights NULL (all 1) or n
 * values >= 0. Fewer than 3 points (2 for yaw), collinear or equal points
 * are refused (ANIM_EINVAL with the reason). */
typedef void (*anim_align_cb)(anim_client_t *client, uint64_t id, int status, const anim_align_result_t *result,
                              void *data);

int anim_client_align(anim_client_t *client, const float *source, const float *target, const float *weights, int n,
                      int mode, anim_align_result_t *out_result, int timeout_ms);
int anim_client_align_send(anim_client_t *client, const float *source, const float *target, const float *weights,
                           int n, int mode, anim_align_cb cb, void *data, uint64_t *out_id);

/* One tracked point: a bone by name, its world position, optionally its
 * world orientation and velocity (has_* 0: not measured), a confidence. */
typedef struct {
  const char *bone;     /* fit_pose: required; trackers_set: NULL or the character's bone at this index */
  float offset[3];      /* fit_pose: the point in the bone's frame */
  float position[3];
  int has_orientation, has_velocity;
  float orientation[4]; /* w, x, y, z, unit */
  float velocity[3];    /* m/s */
  float weight;         /* > 0; 0: 1 */
  int lost;             /* trackers_set: not tracked now */
} anim_tracker_t;

/* fit_pose's answer; anim_fit_result_free. */
typedef struct {
  uint64_t database_version;
  uint32_t frame;       /* the prior frame */
  int nbones;
  float *local_positions, *local_rotations;   /* bone 0: the root in the world */
  float *global_positions, *global_rotations;
  int nresiduals;
  float *residuals;     /* m per tracker, request order */
  float scale;          /* the user's size found */
} anim_fit_result_t;

void anim_fit_result_free(anim_fit_result_t *result);

typedef void (*anim_fit_cb)(anim_client_t *client, uint64_t id, int status, const anim_fit_result_t *result,
                            void *data);

int anim_client_fit_pose(anim_client_t *client, const char *database, const anim_tracker_t *trackers, int n,
                         anim_fit_result_t **out_result, int timeout_ms);
int anim_client_fit_pose_send(anim_client_t *client, const char *database, const anim_tracker_t *trackers, int n,
                              anim_fit_cb cb, void *data, uint64_t *out_id);

/* Trackers for this connection's tracker characters: counts[k] trackers of
 * characters[k], laid one character after another in trackers (creation
 * order). All checked before any is applied; answered with the tick. */
int anim_client_trackers_set(anim_client_t *client, const uint64_t *characters, const anim_tracker_t *trackers,
                             const int *counts, int n, uint64_t *out_tick, int timeout_ms);
int anim_client_trackers_set_send(anim_client_t *client, const uint64_t *characters, const anim_tracker_t *trackers,
                                  const int *counts, int n, anim_status_cb cb, void *data, uint64_t *out_id);
/* The same, the measurements named for server tick `tick` (0: the next):
 * a tick ahead (at most 31 after the next: anim_hello_info_t
 * .max_trackers_ahead) waits in each character until it, at most 32 sets
 * a character (.max_trackers_waiting) (ANIM_ERANGE, ANIM_ELIMIT otherwise,
 * the message naming the field); a tick already past applies at the next.
 * *out_tick: the tick that applies them. For measurements known in
 * advance (a recorded take) sent ahead, so that a late client still has
 * them applied at their ticks. */
int anim_client_trackers_set_at(anim_client_t *client, uint64_t tick, const uint64_t *characters,
                                const anim_tracker_t *trackers, const int *counts, int n, uint64_t *out_tick,
                                int timeout_ms);
int anim_client_trackers_set_at_send(anim_client_t *client, uint64_t tick, const uint64_t *characters,
                                     const anim_tracker_t *trackers, const int *counts, int n, anim_status_cb cb,
                                     void *data, uint64_t *out_id);

#ifdef __cplusplus
}
#endif
#endif
