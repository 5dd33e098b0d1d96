/*
 * request_dynamics.h: body of inverse_dynamics (see request.h).
 *
 * What it does not: check or run it (codec_dynamics.c, service_dynamics.c).
 */
#ifndef SRV_REQUEST_DYNAMICS_H
#define SRV_REQUEST_DYNAMICS_H

#include <stdint.h>
#include "math/anim_math.h"

struct anim_physics_model;

/* Frames [start, stop) of the request's database, or (character != 0) the
 * character's recent ticks: its last seconds, or ticks [from_tick,
 * to_tick]; the options as physics/inverse_dynamics.h's, 0 for the
 * default. */
typedef struct {
  int start, stop;
  uint64_t character, from_tick, to_tick;
  float seconds;
  float max_root_torque, max_root_force, contact_height, contact_speed, total_mass;
  int step;
} srv_inverse_dynamics_request_t;

/* Response-owned arrays, frame-major (inverse_dynamics.h's layout). */
typedef struct {
  int start, nframes, nbones, step;
  float frame_rate, total_mass;
  float *torques;          /* nframes x nbones x 3 */
  float *foot_forces;      /* nframes x 2 x 3 */
  float *foot_cops;        /* nframes x 2 x 3 */
  float *residual_forces;  /* nframes x 3 */
  float *residual_torques; /* nframes x 3 */
  float *power;            /* nframes */
  float *com;              /* nframes x 3 */
  uint8_t *over_limit;     /* nframes */
  int frames_over_limit, worst_frame, left_foot, right_foot;
  float mean_residual_force, max_residual_force, mean_residual_torque, max_residual_torque;
  /* Set on the loop by prepare: the entry's body model (NULL: the handle
   * builds one, the finish installs it), and a character's span, its poses
   * copied out of the history (response-owned, nposes x nbones). */
  struct anim_physics_model *model;
  uint64_t character, first_tick;
  int nposes, ticks_filled;
  float tick_rate;
  vec3 *positions;
  quat *rotations;
} srv_inverse_dynamics_response_t;

#endif
