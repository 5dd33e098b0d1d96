/*
 * request.h: requests and responses as plain C structs.
 *
 * The codec (codec.c) turns a protobuf Request into an anim_request_t,
 * checking everything that needs no server state (sizes, finiteness, name
 * syntax), and turns an anim_response_t into framed protobuf bytes; services
 * never see protobuf-c types. Strings, arrays and byte views in a request
 * point into the decoded message or the request's arena and live until
 * anim_request_release. A response may hold a database reference and arrays
 * of results: anim_response_release drops them (on the loop thread).
 */
#ifndef ANIM_REQUEST_H
#define ANIM_REQUEST_H

#include <stddef.h>
#include <stdint.h>
#include "controller.h"
#include "feature.h"
#include "search.h"

#define ANIM_ERROR_MESSAGE_MAX 256
#define ANIM_MAX_CAPABILITIES 16
#define ANIM_MAX_QUERY_TAGS 32

typedef enum {
  ANIM_REQUEST_HELLO = 0,
  ANIM_REQUEST_PING,
  ANIM_REQUEST_LIST_DATABASES,
  ANIM_REQUEST_DESCRIBE_DATABASE,
  ANIM_REQUEST_LOAD_DATABASE,
  ANIM_REQUEST_RELOAD_DATABASE,
  ANIM_REQUEST_UNLOAD_DATABASE,
  ANIM_REQUEST_SEARCH,
  ANIM_REQUEST_BATCH_SEARCH,
  ANIM_REQUEST_POSE,
  ANIM_REQUEST_INERTIALIZE_TRANSITION,
  ANIM_REQUEST_INERTIALIZE_EVALUATE,
  ANIM_REQUEST_TRANSITION_COST,
  ANIM_REQUEST_SPRING_TUNE,
  ANIM_REQUEST_CREATE_CHARACTERS,
  ANIM_REQUEST_DESTROY_CHARACTERS,
  ANIM_REQUEST_SET_INPUTS,
  ANIM_REQUEST_CHARACTER_STATE,
  ANIM_REQUEST_SUBSCRIBE,
  ANIM_REQUEST_UPDATE_SUBSCRIPTION,
  ANIM_REQUEST_UNSUBSCRIBE,
  ANIM_REQUEST_SERVER_STATS,
  ANIM_REQUEST_SHUTDOWN,
  ANIM_REQUEST_TYPE_COUNT
} anim_request_type_t;

typedef struct {
  uint32_t protocol_version;
  const char *client_name; /* NUL-terminated, <= 256 bytes */
  const char *auth_token;  /* NUL-terminated, <= 127 bytes; "" when none */
} anim_hello_request_t;

typedef struct {
  const uint8_t *payload;
  size_t payload_len;
} anim_ping_request_t;

/* describe, load, reload, unload: a syntactically valid database name. */
typedef struct {
  const char *name;
} anim_db_request_t;

/* One search query; the codec has checked every float is finite and every
 * count is within its protocol bound. Frame indices are checked against the
 * database by the service. -1 means "not given" for the frame fields. */
typedef struct {
  const float *features; /* nfeatures values, or NULL */
  int nfeatures;
  int raw_features;      /* features are unnormalized */
  int from_frame;
  const float *trajectory_positions; /* x, z pairs */
  int ntrajectory_positions;         /* pairs */
  const float *trajectory_directions;
  int ntrajectory_directions;
  int k;
  int current_frame;
  float transition_cost;
  int ignore_range_end, ignore_surrounding;
  const char *tags[ANIM_MAX_QUERY_TAGS];
  int ntags;
  int include_pose, explain;
  int method; /* anim_search_method_t */
  /* Bone inputs (character space): names and x, y, z triples. */
  const char *bone_position_names[ANIM_MAX_FEATURE_TERMS];
  float bone_positions[ANIM_MAX_FEATURE_TERMS][3];
  int nbone_positions;
  const char *bone_velocity_names[ANIM_MAX_FEATURE_TERMS];
  float bone_velocities[ANIM_MAX_FEATURE_TERMS][3];
  int nbone_velocities;
} anim_query_request_t;

/* search (nqueries == 1) and batch_search. */
typedef struct {
  const char *database;
  anim_query_request_t *queries;
  int nqueries;
} anim_search_request_t;

typedef struct {
  int local, global, velocities;
} anim_pose_options_t;

typedef struct {
  const char *database;
  int frame, count;
  anim_pose_options_t options;
} anim_pose_request_t;

/* A database frame (frame >= 0) or an explicit pose (frame -1): nbones
 * bones, 3 floats per vector and 4 per rotation, finite, rotations unit. */
typedef struct {
  int frame;
  int nbones;
  const float *positions, *velocities, *rotations, *angular_velocities;
} anim_pose_ref_t;

/* Inertializer offsets and anchor as sent by a client; present == 0 when absent. */
typedef struct {
  int present;
  int nbones;
  const float *offset_positions, *offset_velocities, *offset_rotations, *offset_angular_velocities;
  const float *anchor; /* 14 floats, or NULL: identity */
} anim_state_ref_t;

typedef struct {
  const char *database; /* NULL when no frame is named */
  anim_pose_ref_t source, destination;
  anim_state_ref_t state;
} anim_transition_request_t;

typedef struct {
  const char *database;
  anim_state_ref_t state;
  anim_pose_ref_t input;
  float halflife, t;
} anim_evaluate_request_t;

typedef struct {
  const char *database;
  anim_pose_ref_t source, destination;
  float halflife;
  const char *const *bones; /* names, nbones_named of them; none: all */
  int nbones_named;
} anim_cost_request_t;

typedef enum { ANIM_TUNE_FRACTION = 0, ANIM_TUNE_TO_CONSTRAINT, ANIM_TUNE_FROM_CONSTRAINT } anim_tune_problem_t;

typedef struct {
  anim_tune_problem_t problem;
  double alpha, t, x0, v0, mass; /* fraction */
  double stiffness, damping;     /* to_constraint */
  double erp, cfm;               /* from_constraint */
  double dt;
} anim_tune_request_t;

/* ---- characters and streams ---- */

typedef struct {
  float x, z, facing; /* metres, radians */
  int start_frame;    /* -1: the database's first frame */
} anim_placement_t;

/* params: server defaults with the client's non-zero fields applied. */
typedef struct {
  const char *database;
  anim_controller_params_t params;
  const anim_placement_t *placements;
  int nplacements;
} anim_create_request_t;

typedef struct {
  const uint64_t *ids;
  int n;
} anim_ids_request_t;

typedef struct {
  uint64_t character;
  anim_controller_input_t input;
} anim_input_item_t;

typedef struct {
  const anim_input_item_t *items;
  int n;
} anim_inputs_request_t;

typedef struct {
  uint64_t character;
  int offsets;
} anim_state_request_t;

typedef enum { ANIM_ENCODING_FLOAT = 0, ANIM_ENCODING_QUANTIZED = 1 } anim_encoding_t;

typedef struct {
  const uint64_t *ids;
  int nids;
  int owned;
  uint32_t rate_divisor; /* >= 1 */
  anim_encoding_t encoding;
  int global_positions, rotations_only;
} anim_subscribe_request_t;

/* update_subscription and unsubscribe (which reads subscription only). */
typedef struct {
  uint64_t subscription;
  uint32_t rate_divisor;
  anim_encoding_t encoding;
  int paused;
} anim_subscription_request_t;

typedef struct {
  uint64_t id;
  anim_request_type_t type;
  union {
    anim_hello_request_t hello;
    anim_ping_request_t ping;
    anim_db_request_t db;
    anim_search_request_t search;
    anim_pose_request_t pose;
    anim_transition_request_t transition;
    anim_evaluate_request_t evaluate;
    anim_cost_request_t cost;
    anim_tune_request_t tune;
    anim_create_request_t create;
    anim_ids_request_t destroy;
    anim_inputs_request_t inputs;
    anim_state_request_t state;
    anim_subscribe_request_t subscribe;
    anim_subscription_request_t subscription;
  } body;
  void *decoded; /* the codec's message; owns what the views point to */
  void *budget;  /* the allocator state that decoded it (charges the arena too) */
  void *arena;   /* converted arrays, freed with the request */
  uint64_t received_ns; /* set by the connection when the frame arrived, for latency metrics */
} anim_request_t;

typedef struct {
  uint32_t max_frame_bytes, max_in_flight, max_batch, max_k, max_characters;
  uint64_t output_soft_limit, output_hard_limit;
  float tick_rate;
} anim_limits_t;

typedef struct {
  uint32_t protocol_version;
  const char *server_version;
  const char *capabilities[ANIM_MAX_CAPABILITIES];
  int ncapabilities;
  anim_limits_t limits;
  uint64_t connection_id;
  int admin;
} anim_hello_response_t;

typedef struct {
  const uint8_t *payload; /* may point into the request */
  size_t payload_len;
  uint64_t server_time_us;
} anim_ping_response_t;

struct anim_db_entry;
struct anim_registry;

/* One query's answer. hits is owned by the response. */
typedef struct {
  anim_search_hit_t *hits;
  int count;
  int include_pose;
  int explained;
  float group_costs[ANIM_MAX_FEATURE_TERMS]; /* best match, per schema term */
  float margin;                              /* runner-up cost - best cost */
} anim_search_result_t;

typedef struct {
  anim_search_result_t *results;
  int nresults;
} anim_search_response_t;

typedef struct {
  int frame, count;
  anim_pose_options_t options;
} anim_pose_response_t;

/* Inertializer state and/or a pose, in one allocation owned by the response. */
typedef struct {
  int nbones;
  float *offset_positions, *offset_velocities, *offset_rotations, *offset_angular_velocities;
  float anchor[14];
  float *positions, *velocities, *rotations, *angular_velocities; /* evaluate's output pose */
  void *block;
} anim_inertialize_response_t;

typedef struct {
  float exact, approximate;
  int nbones;
  const char **names;  /* owned by the response block; point into the database or the block */
  float *bone_exact, *bone_approximate;
  void *block;
} anim_cost_response_t;

typedef struct {
  double halflife, stiffness, damping, erp, cfm;
} anim_tune_response_t;

typedef struct {
  uint64_t *ids; /* owned by the response */
  int n;
} anim_create_response_t;

/* A snapshot of a character, taken between ticks. */
typedef struct {
  uint64_t tick;
  vec3 position, velocity, angular_velocity, desired_velocity;
  quat rotation, desired_rotation;
  vec3 trajectory[ANIM_MAX_TRAJECTORY_SAMPLES];
  int ntrajectory;
  int frame, range;
  float time_since_transition, halflife;
  uint64_t searches, transitions;
  anim_inertialize_response_t inertializer; /* offsets when asked (block owned), anchor always */
} anim_state_response_t;

typedef struct {
  uint64_t subscription;
  float tick_rate;
  uint32_t bones;
} anim_subscribe_response_t;

typedef struct {
  uint64_t uptime_us;
  uint32_t connections, characters;
  uint64_t requests, errors;
  float tick_rate;
  uint64_t ticks, ticks_late, ticks_skipped;
  uint64_t lateness_p50_us, lateness_p99_us, lateness_max_us, work_p50_us, work_p99_us;
  uint64_t frames_sent, frames_dropped, stream_bytes, poses_sent, slow_subscribers_closed;
  double cpu_user_s, cpu_system_s;
  uint64_t rss_bytes, character_bytes, pose_buffer_bytes;
} anim_stats_response_t;

typedef struct {
  uint64_t id;
  anim_request_type_t type;
  int error; /* 0, or an ANIM_E* code: then only message is sent */
  char message[ANIM_ERROR_MESSAGE_MAX];
  /* The database the answer comes from (a reference, released with the response). */
  struct anim_db_entry *entry;
  /* A database built off the loop, put in the registry on completion. */
  struct anim_db_entry *built;
  /* list_databases: the registry, read on the loop thread while encoding. */
  const struct anim_registry *registry;
  union {
    anim_hello_response_t hello;
    anim_ping_response_t ping;
    anim_search_response_t search;
    anim_pose_response_t pose;
    anim_inertialize_response_t inertialize;
    anim_cost_response_t cost;
    anim_tune_response_t tune;
    anim_create_response_t create;
    uint32_t destroyed;
    uint64_t tick;            /* set_inputs: the tick that applies them */
    anim_state_response_t state;
    anim_subscribe_response_t subscribe;
    uint64_t subscription;    /* update_subscription, unsubscribe */
    anim_stats_response_t stats;
  } body;
} anim_response_t;

/* Sets response->error and a formatted message; returns code (for `return`). */
int anim_response_fail(anim_response_t *response, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Drops the response's database references and result arrays. Loop thread. */
void anim_response_release(anim_response_t *response);

#endif
