/*
 * request.h: requests and responses as plain C structs.
 *
 * The codec (codec.c) turns a protobuf Request into an srv_request_t,
 * checking everything that needs no server state (sizes, finiteness, name
 * syntax), and turns an srv_response_t into framed protobuf bytes; services
 * never see protobuf-c types. Strings, arrays and byte views in a request
 * point into the decoded message or the request's arena and live until
 * srv_request_release. A response may hold a database reference and arrays
 * of results: srv_response_release drops them (on the loop thread).
 */
#ifndef SRV_REQUEST_H
#define SRV_REQUEST_H

#include <stddef.h>
#include <stdint.h>
#include "controller.h"
#include "feature.h"
#include "search.h"

#define SRV_ERROR_MESSAGE_MAX 256
#define SRV_MAX_CAPABILITIES 16
#define SRV_MAX_QUERY_TAGS 32

typedef enum {
  SRV_REQ_HELLO = 0,
  SRV_REQ_PING,
  SRV_REQ_LIST_DATABASES,
  SRV_REQ_DESCRIBE_DATABASE,
  SRV_REQ_LOAD_DATABASE,
  SRV_REQ_RELOAD_DATABASE,
  SRV_REQ_UNLOAD_DATABASE,
  SRV_REQ_SEARCH,
  SRV_REQ_BATCH_SEARCH,
  SRV_REQ_POSE,
  SRV_REQ_INERTIALIZE_TRANSITION,
  SRV_REQ_INERTIALIZE_EVALUATE,
  SRV_REQ_TRANSITION_COST,
  SRV_REQ_SPRING_TUNE,
  SRV_REQ_CREATE_CHARACTERS,
  SRV_REQ_DESTROY_CHARACTERS,
  SRV_REQ_SET_INPUTS,
  SRV_REQ_CHARACTER_STATE,
  SRV_REQ_SUBSCRIBE,
  SRV_REQ_UPDATE_SUBSCRIPTION,
  SRV_REQ_UNSUBSCRIBE,
  SRV_REQ_SERVER_STATS,
  SRV_REQ_SHUTDOWN,
  SRV_REQ_COUNT
} srv_request_type_t;

typedef struct {
  uint32_t protocol_version;
  const char *client_name; /* NUL-terminated, <= 256 bytes */
  const char *auth_token;  /* NUL-terminated, <= 127 bytes; "" when none */
} srv_hello_request_t;

typedef struct {
  const uint8_t *payload;
  size_t payload_len;
} srv_ping_request_t;

/* describe, load, reload, unload: a syntactically valid database name. */
typedef struct {
  const char *name;
} srv_db_request_t;

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
  const char *tags[SRV_MAX_QUERY_TAGS];
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
} srv_query_request_t;

/* search (nqueries == 1) and batch_search. */
typedef struct {
  const char *database;
  srv_query_request_t *queries;
  int nqueries;
} srv_search_request_t;

typedef struct {
  int local, global, velocities;
} srv_pose_options_t;

typedef struct {
  const char *database;
  int frame, count;
  srv_pose_options_t options;
} srv_pose_request_t;

/* A database frame (frame >= 0) or an explicit pose (frame -1): nbones
 * bones, 3 floats per vector and 4 per rotation, finite, rotations unit. */
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
  const char *database; /* NULL when no frame is named */
  srv_pose_ref_t source, destination;
  srv_state_ref_t state;
} srv_transition_request_t;

typedef struct {
  const char *database;
  srv_state_ref_t state;
  srv_pose_ref_t input;
  float halflife, t;
} srv_evaluate_request_t;

typedef struct {
  const char *database;
  srv_pose_ref_t source, destination;
  float halflife;
  const char *const *bones; /* names, nbones_named of them; none: all */
  int nbones_named;
} srv_cost_request_t;

typedef enum { SRV_TUNE_FRACTION = 0, SRV_TUNE_TO_CONSTRAINT, SRV_TUNE_FROM_CONSTRAINT } srv_tune_problem_t;

typedef struct {
  srv_tune_problem_t problem;
  double alpha, t, x0, v0, mass; /* fraction */
  double stiffness, damping;     /* to_constraint */
  double erp, cfm;               /* from_constraint */
  double dt;
} srv_tune_request_t;

/* ---- characters and streams ---- */

typedef struct {
  float x, z, facing; /* metres, radians */
  int start_frame;    /* -1: the database's first frame */
} srv_placement_t;

/* params: server defaults with the client's non-zero fields applied. */
typedef struct {
  const char *database;
  anim_controller_params_t params;
  const srv_placement_t *placements;
  int nplacements;
} srv_create_request_t;

typedef struct {
  const uint64_t *ids;
  int n;
} srv_ids_request_t;

typedef struct {
  uint64_t character;
  anim_controller_input_t input;
} srv_input_item_t;

typedef struct {
  const srv_input_item_t *items;
  int n;
} srv_inputs_request_t;

typedef struct {
  uint64_t character;
  int offsets;
} srv_state_request_t;

typedef enum { SRV_ENCODING_FLOAT = 0, SRV_ENCODING_QUANTIZED = 1 } srv_encoding_t;

typedef struct {
  const uint64_t *ids;
  int nids;
  int owned;
  uint32_t rate_divisor; /* >= 1 */
  srv_encoding_t encoding;
  int global_positions, rotations_only;
} srv_subscribe_request_t;

/* update_subscription and unsubscribe (which reads subscription only). */
typedef struct {
  uint64_t subscription;
  uint32_t rate_divisor;
  srv_encoding_t encoding;
  int paused;
} srv_subscription_request_t;

typedef struct {
  uint64_t id;
  srv_request_type_t type;
  union {
    srv_hello_request_t hello;
    srv_ping_request_t ping;
    srv_db_request_t db;
    srv_search_request_t search;
    srv_pose_request_t pose;
    srv_transition_request_t transition;
    srv_evaluate_request_t evaluate;
    srv_cost_request_t cost;
    srv_tune_request_t tune;
    srv_create_request_t create;
    srv_ids_request_t destroy;
    srv_inputs_request_t inputs;
    srv_state_request_t state;
    srv_subscribe_request_t subscribe;
    srv_subscription_request_t subscription;
  } body;
  void *decoded; /* the codec's message; owns what the views point to */
  void *budget;  /* the allocator state that decoded it (charges the arena too) */
  void *arena;   /* converted arrays, freed with the request */
  uint64_t received_ns; /* set by the connection when the frame arrived, for latency metrics */
} srv_request_t;

typedef struct {
  uint32_t max_frame_bytes, max_in_flight, max_batch, max_k, max_characters;
  uint64_t output_soft_limit, output_hard_limit;
  float tick_rate;
} srv_limits_t;

typedef struct {
  uint32_t protocol_version;
  const char *server_version;
  const char *capabilities[SRV_MAX_CAPABILITIES];
  int ncapabilities;
  srv_limits_t limits;
  uint64_t connection_id;
  int admin;
} srv_hello_response_t;

typedef struct {
  const uint8_t *payload; /* may point into the request */
  size_t payload_len;
  uint64_t server_time_us;
} srv_ping_response_t;

struct srv_db_entry;
struct srv_registry;

/* One query's answer. hits is owned by the response. */
typedef struct {
  anim_search_hit_t *hits;
  int count;
  int include_pose;
  int explained;
  float group_costs[ANIM_MAX_FEATURE_TERMS]; /* best match, per schema term */
  float margin;                              /* runner-up cost - best cost */
} srv_search_result_t;

typedef struct {
  srv_search_result_t *results;
  int nresults;
} srv_search_response_t;

typedef struct {
  int frame, count;
  srv_pose_options_t options;
} srv_pose_response_t;

/* Inertializer state and/or a pose, in one allocation owned by the response. */
typedef struct {
  int nbones;
  float *offset_positions, *offset_velocities, *offset_rotations, *offset_angular_velocities;
  float anchor[14];
  float *positions, *velocities, *rotations, *angular_velocities; /* evaluate's output pose */
  void *block;
} srv_inertialize_response_t;

typedef struct {
  float exact, approximate;
  int nbones;
  const char **names;  /* owned by the response block; point into the database or the block */
  float *bone_exact, *bone_approximate;
  void *block;
} srv_cost_response_t;

typedef struct {
  double halflife, stiffness, damping, erp, cfm;
} srv_tune_response_t;

typedef struct {
  uint64_t *ids; /* owned by the response */
  int n;
} srv_create_response_t;

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
  srv_inertialize_response_t inertializer; /* offsets when asked (block owned), anchor always */
} srv_state_response_t;

typedef struct {
  uint64_t subscription;
  float tick_rate;
  uint32_t bones;
} srv_subscribe_response_t;

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
} srv_stats_response_t;

typedef struct {
  uint64_t id;
  srv_request_type_t type;
  int error; /* 0, or an ANIM_E* code: then only message is sent */
  char message[SRV_ERROR_MESSAGE_MAX];
  /* The database the answer comes from (a reference, released with the response). */
  struct srv_db_entry *entry;
  /* A database built off the loop, put in the registry on completion. */
  struct srv_db_entry *built;
  /* list_databases: the registry, read on the loop thread while encoding. */
  const struct srv_registry *registry;
  union {
    srv_hello_response_t hello;
    srv_ping_response_t ping;
    srv_search_response_t search;
    srv_pose_response_t pose;
    srv_inertialize_response_t inertialize;
    srv_cost_response_t cost;
    srv_tune_response_t tune;
    srv_create_response_t create;
    uint32_t destroyed;
    uint64_t tick;            /* set_inputs: the tick that applies them */
    srv_state_response_t state;
    srv_subscribe_response_t subscribe;
    uint64_t subscription;    /* update_subscription, unsubscribe */
    srv_stats_response_t stats;
  } body;
} srv_response_t;

/* Sets response->error and a formatted message; returns code (for `return`). */
int srv_response_fail(srv_response_t *response, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Drops the response's database references and result arrays. Loop thread. */
void srv_response_release(srv_response_t *response);

#endif
