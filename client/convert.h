/*
 * convert.h: protobuf <-> the client's plain C types (client library
 * internals, not installed).
 *
 * Pure functions: no socket, no client, no error strings. Answers to C
 * (convert.c, convert_stream.c, and per area convert_machine.c,
 * convert_graph.c, convert_fit.c, which also build their area's requests):
 * each checks what it reads (a missing
 * message, arrays whose lengths disagree) and returns 0 or ANIM_EPROTO /
 * ANIM_ENOMEM, with nothing allocated on failure, so tests/fuzz/
 * fuzz_client_convert.c can feed any ServerMessage through all of them.
 * C to requests (convert_request.c): protobuf views over the caller's
 * arrays (nothing copied), checked against the public types' rules
 * (ANIM_EINVAL).
 *
 * Adding a request: its answer's converter here (`anim__foo_from`), its
 * request's builder when it has more than a few scalar fields.
 */
#ifndef ANIM_CLIENT_CONVERT_H
#define ANIM_CLIENT_CONVERT_H

#include <stddef.h>
#include <stdint.h>
#include "anim_client.h"
#include "animserver.pb-c.h"

/* ---- helpers shared by the converters ------------------------------------------------ */

/* A NUL-terminated copy of s (NULL: "") into out[size]; ANIM_EPROTO when it does not fit. */
int anim__name_from(char *out, size_t size, const char *s);
/* Wire vectors to floats (absent: zero, the identity). */
void anim__vec3_from(float *out, const Animserver__Vec3 *v);
void anim__quat_from(float *out, const Animserver__Quat *q);
/* A malloc'd copy of a wire array of n floats that must hold want (one
 * more float allocated, so an empty array is not NULL); NULL with *rc set
 * (ANIM_EPROTO on a length that disagrees, ANIM_ENOMEM), and nothing done
 * when *rc is already set, so a result's arrays chain through one rc. */
float *anim__floats_copy(const float *src, size_t n, size_t want, int *rc);

/* ControllerParams <-> anim_character_params_t (a negative count goes as 0;
 * NULL m: all zero). */
void anim__controller_params_to_proto(Animserver__ControllerParams *m, const anim_character_params_t *p);
void anim__controller_params_from(const Animserver__ControllerParams *m, anim_character_params_t *out);

/* ---- answers -> C (owned results: the public *_free functions) --------------------- */

int anim__hello_info_from(const Animserver__HelloResponse *m, anim_hello_info_t *out);
/* NULL m: a zero summary. */
int anim__summary_from(const Animserver__DatabaseSummary *m, anim_db_summary_t *out);
/* *out_summaries: *out_count summaries, free() (NULL when none). */
int anim__summaries_from(const Animserver__ListDatabasesResponse *m, anim_db_summary_t **out_summaries,
                         int *out_count);
int anim__description_from(const Animserver__DescribeDatabaseResponse *m, anim_db_description_t **out);
int anim__search_from(const Animserver__SearchResponse *m, anim_search_reply_t **out);
int anim__batch_search_from(const Animserver__BatchSearchResponse *m, anim_search_reply_t **out);
int anim__pose_reply_from(const Animserver__PoseResponse *m, anim_pose_reply_t **out);
int anim__inertializer_state_from(const Animserver__InertializerState *m, anim_inertializer_state_t **out);
int anim__transition_from(const Animserver__InertializeTransitionResponse *m, anim_inertializer_state_t **out);
/* Both outputs owned; *out_pose NULL when the answer has none. */
int anim__evaluate_from(const Animserver__InertializeEvaluateResponse *m, anim_inertializer_state_t **out_state,
                        anim_pose_t **out_pose);
int anim__transition_cost_from(const Animserver__TransitionCostResponse *m, anim_transition_cost_t **out);
int anim__spring_tuning_from(const Animserver__SpringTuneResponse *m, anim_spring_tuning_t *out);
int anim__character_state_from(const Animserver__CharacterStateResponse *m, anim_character_state_t **out);
int anim__server_stats_from(const Animserver__ServerStatsResponse *m, anim_server_stats_t *out);
/* A stream frame decoded to floats (quantized poses expanded), in one block
 * (anim_stream_frame_free). rotations_only: how the subscription was made
 * (the wire does not say). received_us and client_dropped are left 0. */
int anim__stream_frame_from(const Animserver__StreamMessage *m, int rotations_only, size_t wire_bytes,
                            anim_stream_frame_t **out);
/* The code of an error answer: the server's code as a negative ANIM_E*,
 * ANIM_EPROTO for one that is not a code. */
int anim__error_code(const Animserver__Error *m);

/* State machines (convert_machine.c). A list: *out_count summaries in an
 * array freed with anim__machine_list_free. */
int anim__machine_summary_from(const Animserver__MachineSummary *m, anim_machine_summary_t **out);
int anim__machine_load_from(const Animserver__LoadMachineResponse *m, anim_machine_summary_t **out);
int anim__machine_check_from(const Animserver__CheckMachineResponse *m, anim_machine_check_t **out);
int anim__machine_list_from(const Animserver__ListMachinesResponse *m, anim_machine_summary_t ***out_machines,
                            int *out_count);
void anim__machine_list_free(anim_machine_summary_t **machines, int count);
/* Motion graphs (convert_graph.c). */
int anim__graph_description_from(const Animserver__GraphDescription *m, anim_graph_description_t **out);
int anim__graph_walk_from(const Animserver__QueryGraphResponse *m, anim_graph_walk_t **out);
/* Pose fitting (convert_fit.c). */
int anim__align_from(const Animserver__AlignResponse *m, anim_align_result_t *out);
int anim__fit_from(const Animserver__FitPoseResponse *m, anim_fit_result_t **out);

/* ---- C -> requests: views over the caller's data --------------------------------------- */

void anim__vec3_to_proto(Animserver__Vec3 *out, const float *v);
void anim__quat_to_proto(Animserver__Quat *out, const float *q);

typedef struct {
  Animserver__SearchQuery query;
  Animserver__FrameIndex from, current;
  Animserver__Vec2 positions[8], directions[8];
  Animserver__Vec2 *position_ptrs[8], *direction_ptrs[8];
  Animserver__BoneVector bone_positions[16], bone_velocities[16];
  Animserver__BoneVector *bone_position_ptrs[16], *bone_velocity_ptrs[16];
} anim__query_views_t;

typedef struct {
  Animserver__PoseRef ref;
  Animserver__PoseState pose;
} anim__pose_source_views_t;

/* Character creation and input: arrays allocated for n entries
 * (anim__create_views_free / anim__input_views_free). */
typedef struct {
  Animserver__CreateCharactersRequest create;
  Animserver__ControllerParams params;
  Animserver__Placement *items, **pointers;
  Animserver__FrameIndex *frames;
  /* the mode's part */
  Animserver__PathOptions path;
  Animserver__TrackerSetup tracker;
  Animserver__PhysicsOptions physics;
  Animserver__TrackedBone bones[8], *bone_pointers[8];
  Animserver__Vec3 offsets[8];
} anim__create_views_t;

typedef struct {
  Animserver__SetInputsRequest set;
  struct anim__input_wire *wire;
  Animserver__CharacterInput **pointers;
} anim__input_views_t;

int anim__query_to_proto(const anim_query_t *in, anim__query_views_t *out);
int anim__pose_source_to_proto(const anim_pose_source_t *in, anim__pose_source_views_t *out);
void anim__inertializer_state_to_proto(const anim_inertializer_state_t *in, Animserver__InertializerState *out);
/* Checks the creation's arguments (database, 1 <= n, a known mode with
 * what it needs: a machine's name, 1..8 trackers) and builds its request. */
int anim__create_to_proto(const char *database, const anim_character_mode_t *mode,
                          const anim_character_params_t *params, const anim_character_placement_t *placements, int n,
                          anim__create_views_t *out);
void anim__create_views_free(anim__create_views_t *views);
int anim__inputs_to_proto(const uint64_t *ids, const anim_character_input_t *inputs, int n, anim__input_views_t *out);
void anim__input_views_free(anim__input_views_t *views);

/* Events or parameters, one per character (convert_machine.c; anim__machine_items_free). */
typedef struct {
  Animserver__SendEventsRequest events;
  Animserver__SetParamsRequest params;
  void *items;
  void **pointers;
} anim__machine_items_views_t;

int anim__events_to_proto(const uint64_t *characters, const char *const *events, int n,
                          anim__machine_items_views_t *out);
int anim__params_to_proto(const uint64_t *characters, const char *const *names, const float *values, int n,
                          anim__machine_items_views_t *out);
void anim__machine_items_free(anim__machine_items_views_t *views);

/* Graphs (convert_graph.c): build options (scalars only), a walk query and
 * character paths (anim__graph_query_views_free / anim__paths_views_free). */
typedef struct {
  Animserver__QueryGraphRequest query;
  Animserver__Placement start;
  Animserver__PathOptions options;
  Animserver__Vec2 *items, **pointers;
} anim__graph_query_views_t;

typedef struct {
  Animserver__SetPathsRequest set;
  Animserver__CharacterPath *paths, **list;
  Animserver__Vec2 **items, ***pointers; /* per path */
  int n;
} anim__paths_views_t;

int anim__graph_options_to_proto(const anim_graph_build_options_t *in, Animserver__GraphOptions *out);
/* The planner's options (PathOptions) of a query or a graph character. */
void anim__walk_options_to_proto(const anim_walk_options_t *in, Animserver__PathOptions *out);
int anim__graph_query_to_proto(const char *database, const anim_graph_query_t *in, anim__graph_query_views_t *out);
void anim__graph_query_views_free(anim__graph_query_views_t *views);
int anim__paths_to_proto(const uint64_t *characters, const float *const *points, const int *npoints, const int *closed,
                         int n, anim__paths_views_t *out);
void anim__paths_views_free(anim__paths_views_t *views);

/* Fitting (convert_fit.c): point sets, and trackers for fit_pose (with
 * their offsets) or set_trackers (counts[k] per character) (free with
 * anim__align_views_free / anim__trackers_views_free). */
typedef struct {
  Animserver__AlignRequest align;
  Animserver__Vec3 *points, **pointers;
} anim__align_views_t;

typedef struct {
  Animserver__FitPoseRequest fit;
  Animserver__SetTrackersRequest set;
  struct anim__wire_tracker *wire;
  Animserver__TrackerInput **inputs;
  Animserver__CharacterTrackers *items, **list;
} anim__trackers_views_t;

int anim__align_to_proto(const float *source, const float *target, const float *weights, int n, int mode,
                         anim__align_views_t *out);
void anim__align_views_free(anim__align_views_t *views);
int anim__fit_to_proto(const char *database, const anim_tracker_t *trackers, int n, anim__trackers_views_t *out);
int anim__set_trackers_to_proto(const uint64_t *characters, const anim_tracker_t *trackers, const int *counts, int n,
                                anim__trackers_views_t *out);
void anim__trackers_views_free(anim__trackers_views_t *views);

#endif
