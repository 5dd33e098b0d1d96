/*
 * convert.h: protobuf <-> the client's plain C types (client library
 * internals, not installed).
 *
 * Pure functions: no socket, no client, no error strings. Answers to C
 * (convert.c, convert_stream.c): each checks what it reads (a missing
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

/* ---- C -> requests: views over the caller's data --------------------------------------- */

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
} anim__create_views_t;

typedef struct {
  Animserver__SetInputsRequest set;
  struct anim__input_wire *wire;
  Animserver__CharacterInput **pointers;
} anim__input_views_t;

int anim__query_to_proto(const anim_query_t *in, anim__query_views_t *out);
int anim__pose_source_to_proto(const anim_pose_source_t *in, anim__pose_source_views_t *out);
void anim__inertializer_state_to_proto(const anim_inertializer_state_t *in, Animserver__InertializerState *out);
/* Checks the creation's arguments (database, 1 <= n, a known mode) and
 * builds its request. */
int anim__create_to_proto(const char *database, const anim_character_mode_t *mode,
                          const anim_character_params_t *params, const anim_character_placement_t *placements, int n,
                          anim__create_views_t *out);
void anim__create_views_free(anim__create_views_t *views);
int anim__inputs_to_proto(const uint64_t *ids, const anim_character_input_t *inputs, int n, anim__input_views_t *out);
void anim__input_views_free(anim__input_views_t *views);

#endif
