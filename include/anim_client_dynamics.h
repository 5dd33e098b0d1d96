/*
 * anim_client_dynamics.h: inverse dynamics over the wire (part of the client
 * library; include anim_client.h).
 *
 * anim_client_inverse_dynamics asks the server for the joint torques, the
 * feet's ground reaction forces and the root's residual ("hand of God")
 * along frames [start, stop) of a database range (docs/physics.md says how
 * they are computed and what they can and cannot tell);
 * anim_client_inverse_dynamics_character the same along a character's
 * recent ticks, the poses it showed as its history recorded them
 * (anim_client_history_set must be on). It runs on the
 * server's thread pool. A blocking form and a _send form with a typed
 * callback (the result valid during the callback only, NULL when
 * status != 0).
 */
#ifndef ANIM_CLIENT_DYNAMICS_H
#define ANIM_CLIENT_DYNAMICS_H

#include <stdint.h>
#include "anim_client_session.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Options; a field left 0 takes the server default (in brackets). */
typedef struct {
  float max_root_torque; /* N m, the residual torque's limit [30] */
  float max_root_force;  /* N, the residual force's limit [0.1 x body weight] */
  float contact_height;  /* m: a foot point lower than this may push [0.06] */
  float contact_speed;   /* m/s: ... and slower than this [0.8] */
  float total_mass;      /* kg [70] */
  int step;              /* frames of the central differences, 1..8 [frame_rate / 30] */
} anim_inverse_dynamics_options_t;

/* The answer; free with anim_inverse_dynamics_free. Arrays frame-major:
 * torques [nframes][nbones][3] (N m, each bone's joint torque in its own
 * axes; 0 for bone 0, the bones above the hips and the root), foot_forces
 * and foot_cops [nframes][2][3] (left, right; N and m, world, y up),
 * residual_forces, residual_torques and com [nframes][3] (N, N m about the
 * root joint, m), power [nframes] (W), over_limit [nframes] (0/1). */
typedef struct {
  uint64_t database_version;
  int start, nframes, nbones, step;
  float frame_rate, total_mass;
  char **bones;            /* nbones names */
  float *torques, *foot_forces, *foot_cops, *residual_forces, *residual_torques, *power, *com;
  uint8_t *over_limit;
  int frames_over_limit, worst_frame;
  float mean_residual_force, max_residual_force, mean_residual_torque, max_residual_torque;
  char *left_foot, *right_foot;
  /* A character's span: frame i is its tick first_tick + i (frame_rate is
   * the tick rate, start 0, worst_frame an index into the span);
   * ticks_filled: ticks the server's clock passed over (it ran late),
   * interpolated between their neighbours. 0 for a database range. */
  uint64_t character, first_tick;
  int ticks_filled;
} anim_inverse_dynamics_t;

void anim_inverse_dynamics_free(anim_inverse_dynamics_t *result);

typedef void (*anim_inverse_dynamics_cb)(anim_client_t *client, uint64_t id, int status,
                                         const anim_inverse_dynamics_t *result, void *data);

/* Frames [start, stop) of database (one range, >= 3 frames, at most the
 * server's max_pose_frames); options may be NULL. Errors: ANIM_EINVAL (NULL
 * database, a negative option), the server's (ANIM_ENOTFOUND: no such
 * database; ANIM_ERANGE: frames out of bounds or across ranges;
 * ANIM_ELIMIT: too many frames), with the message naming the field. */
int anim_client_inverse_dynamics(anim_client_t *client, const char *database, int start, int stop,
                                 const anim_inverse_dynamics_options_t *options, anim_inverse_dynamics_t **out_result,
                                 int timeout_ms);
int anim_client_inverse_dynamics_send(anim_client_t *client, const char *database, int start, int stop,
                                      const anim_inverse_dynamics_options_t *options, anim_inverse_dynamics_cb cb,
                                      void *data, uint64_t *out_id);

/* A character's recent ticks: its last seconds (> 0), or (seconds 0) the
 * ticks [from_tick, to_tick] of the server's clock (character_history and
 * character_state give ticks). */
typedef struct {
  uint64_t character;
  float seconds;
  uint64_t from_tick, to_tick;
} anim_inverse_dynamics_span_t;

/* Inverse dynamics of one of this connection's characters over span, at
 * the server's tick rate; options as above. Errors: ANIM_EINVAL (NULL
 * span, character 0, a negative or non-finite seconds, both seconds and
 * ticks, neither), the server's, the message naming the field:
 * ANIM_ENOTFOUND (no such character, its history off), ANIM_EPERM
 * (another connection's character), ANIM_ERANGE (ticks not yet shown or no
 * longer held, reversed, seconds longer than the history or than it holds
 * so far, fewer than 3 ticks), ANIM_ELIMIT (more ticks than max_pose_frames). */
int anim_client_inverse_dynamics_character(anim_client_t *client, const anim_inverse_dynamics_span_t *span,
                                           const anim_inverse_dynamics_options_t *options,
                                           anim_inverse_dynamics_t **out_result, int timeout_ms);
int anim_client_inverse_dynamics_character_send(anim_client_t *client, const anim_inverse_dynamics_span_t *span,
                                                const anim_inverse_dynamics_options_t *options,
                                                anim_inverse_dynamics_cb cb, void *data, uint64_t *out_id);

#ifdef __cplusplus
}
#endif
#endif
