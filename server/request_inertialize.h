/*
 * request_inertialize.h: bodies of inertialize_transition,
 * inertialize_evaluate, transition_cost and spring_tune (see request.h).
 *
 * What it does not: check or run them (codec_inertialize.c, service_inertialize.c).
 */
#ifndef SRV_REQUEST_INERTIALIZE_H
#define SRV_REQUEST_INERTIALIZE_H

#include <stddef.h>
#include <stdint.h>

/* A database frame (frame >= 0; the database is srv_request_t.database) or
 * an explicit pose (frame -1): nbones bones, 3 floats per vector and 4 per
 * rotation, finite, rotations unit. */
typedef struct {
  int frame;
  int nbones;
  const float *positions, *velocities, *rotations, *angular_velocities;
} srv_pose_ref_t;

/* Inertializer offsets and anchor as sent by a client; present == 0 when absent. */
typedef struct {
  int present;
  int nbones;
  const float *offset_positions, *offset_velocities, *offset_rotations, *offset_angular_velocities;
  const float *anchor; /* 14 floats, or NULL: identity */
} srv_state_ref_t;

typedef struct {
  srv_pose_ref_t source, destination;
  srv_state_ref_t state;
} srv_inertialize_transition_request_t;

typedef struct {
  srv_state_ref_t state;
  srv_pose_ref_t input;
  float halflife, t;
} srv_inertialize_evaluate_request_t;

typedef struct {
  srv_pose_ref_t source, destination;
  float halflife;
  const char *const *bones; /* names, nbones_named of them; none: all */
  int nbones_named;
} srv_transition_cost_request_t;

typedef enum { SRV_TUNE_FRACTION = 0, SRV_TUNE_TO_CONSTRAINT, SRV_TUNE_FROM_CONSTRAINT } srv_tune_problem_t;

typedef struct {
  srv_tune_problem_t problem;
  double alpha, t, x0, v0, mass; /* fraction */
  double stiffness, damping;     /* to_constraint */
  double erp, cfm;               /* from_constraint */
  double dt;
} srv_spring_tune_request_t;

/* Inertializer state and/or a pose; the arrays are response-owned. */
typedef struct {
  int nbones;
  float *offset_positions, *offset_velocities, *offset_rotations, *offset_angular_velocities;
  float anchor[14];
  float *positions, *velocities, *rotations, *angular_velocities; /* evaluate's output pose */
} srv_inertializer_t;
typedef srv_inertializer_t srv_inertialize_transition_response_t;
typedef srv_inertializer_t srv_inertialize_evaluate_response_t;

typedef struct {
  float exact, approximate;
  int nbones;
  const char **names; /* response-owned array; names point into the held database or the response */
  float *bone_exact, *bone_approximate;
} srv_transition_cost_response_t;

typedef struct {
  double halflife, stiffness, damping, erp, cfm;
} srv_spring_tune_response_t;

#endif
