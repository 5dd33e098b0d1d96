/*
 * anim_client_inertialize.h: inertialization and springs computed by the
 * server (part of the client library; include anim_client.h).
 *
 * Stateless requests: the offsets of a transition, their evaluation t
 * seconds later, a transition's cost, and spring tunings. The caller keeps
 * the inertializer state between requests (the server keeps none). Each has
 * a blocking form and a _send form with a typed callback (results valid
 * during the callback only, NULL when status != 0).
 */
#ifndef ANIM_CLIENT_INERTIALIZE_H
#define ANIM_CLIENT_INERTIALIZE_H

#include "anim_client_database.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A pose for inertialization: database frame `frame` (>= 0), or, with frame
 * -1, an explicit pose of nbones bones (3 floats per vector, 4 per rotation
 * w, x, y, z; bone 0 the root, the others local to their parent). */
typedef struct {
  int frame;
  int nbones;
  const float *positions, *velocities, *rotations, *angular_velocities;
} anim_pose_source_t;

/* Offsets (3, 3, 4, 3 floats per bone) and root anchor (anim position 3,
 * anim rotation 4, world position 3, world rotation 4). Replies are owned by
 * the library (anim_inertializer_state_free); a caller may also fill one of
 * its own to send. */
typedef struct {
  int nbones;
  float *offset_positions, *offset_velocities, *offset_rotations, *offset_angular_velocities;
  float anchor[14];
} anim_inertializer_state_t;

typedef struct {
  float exact, approximate; /* summed over bones: metre-seconds for positions */
  int nbones;
  char (*names)[64];
  float *exact_per_bone, *approximate_per_bone;
} anim_transition_cost_t;

typedef struct {
  double halflife, stiffness, damping, erp, cfm;
} anim_spring_tuning_t;

/* NULL is ignored by each. */
void anim_inertializer_state_free(anim_inertializer_state_t *state);
void anim_transition_cost_free(anim_transition_cost_t *cost);

/* The callback's pose is NULL for a transition. */
typedef void (*anim_inertialize_cb)(anim_client_t *client, uint64_t id, int status,
                                    const anim_inertializer_state_t *state, const anim_pose_t *pose, void *data);
typedef void (*anim_transition_cost_cb)(anim_client_t *client, uint64_t id, int status,
                                        const anim_transition_cost_t *cost, void *data);
typedef void (*anim_spring_cb)(anim_client_t *client, uint64_t id, int status, const anim_spring_tuning_t *tuning,
                               void *data);

/* New offsets for a transition from source (playing now) to destination,
 * continuing from state (NULL: zero offsets, identity anchor). database may
 * be NULL when both poses are explicit. */
int anim_client_inertialize_transition(anim_client_t *client, const char *database, const anim_pose_source_t *source,
                                       const anim_pose_source_t *destination, const anim_inertializer_state_t *state,
                                       anim_inertializer_state_t **out_state, int timeout_ms);
int anim_client_inertialize_transition_send(anim_client_t *client, const char *database,
                                            const anim_pose_source_t *source, const anim_pose_source_t *destination,
                                            const anim_inertializer_state_t *state, anim_inertialize_cb cb, void *data,
                                            uint64_t *out_id);
/* The offsets t seconds after state's instant and the displayed pose for
 * input, as a local pose (local_* arrays) whose root, bone 0, is in world
 * space (free it with anim_pose_free). Either output may be NULL. */
int anim_client_inertialize_evaluate(anim_client_t *client, const char *database,
                                     const anim_inertializer_state_t *state, const anim_pose_source_t *input,
                                     float halflife, float t, anim_inertializer_state_t **out_state,
                                     anim_pose_t **out_pose, int timeout_ms);
int anim_client_inertialize_evaluate_send(anim_client_t *client, const char *database,
                                          const anim_inertializer_state_t *state, const anim_pose_source_t *input,
                                          float halflife, float t, anim_inertialize_cb cb, void *data,
                                          uint64_t *out_id);
/* Exact displacement and its approximation for a transition; bones (names,
 * database frames only) may be NULL for all. */
int anim_client_transition_cost(anim_client_t *client, const char *database, const anim_pose_source_t *source,
                                const anim_pose_source_t *destination, float halflife, const char *const *bones,
                                int nbones, anim_transition_cost_t **out_cost, int timeout_ms);
int anim_client_transition_cost_send(anim_client_t *client, const char *database, const anim_pose_source_t *source,
                                     const anim_pose_source_t *destination, float halflife, const char *const *bones,
                                     int nbones, anim_transition_cost_cb cb, void *data, uint64_t *out_id);
/* Half-life and gains (for mass) of the critically damped spring that, from
 * (x0, v0), is at alpha * x0 after t seconds. */
int anim_client_spring_halflife(anim_client_t *client, double alpha, double t, double x0, double v0, double mass,
                                anim_spring_tuning_t *out_tuning, int timeout_ms);
int anim_client_spring_halflife_send(anim_client_t *client, double alpha, double t, double x0, double v0, double mass,
                                     anim_spring_cb cb, void *data, uint64_t *out_id);
/* Implicit-spring gains <-> constraint ERP/CFM for a time step dt. */
int anim_client_spring_to_constraint(anim_client_t *client, double stiffness, double damping, double dt,
                                     anim_spring_tuning_t *out_tuning, int timeout_ms);
int anim_client_spring_to_constraint_send(anim_client_t *client, double stiffness, double damping, double dt,
                                          anim_spring_cb cb, void *data, uint64_t *out_id);
int anim_client_spring_from_constraint(anim_client_t *client, double erp, double cfm, double dt,
                                       anim_spring_tuning_t *out_tuning, int timeout_ms);
int anim_client_spring_from_constraint_send(anim_client_t *client, double erp, double cfm, double dt, anim_spring_cb cb,
                                            void *data, uint64_t *out_id);

#ifdef __cplusplus
}
#endif
#endif
