/*
 * anim_client.h: the animserver client library.
 *
 * Thin by design: libc sockets and protobuf-c, no libuv, no threads. Two ways
 * to use one connection, freely mixed:
 *
 *  - blocking: anim_client_hello / anim_client_ping send a request and wait
 *    (up to timeout_ms) for its response; responses to other requests and
 *    stream messages that arrive meanwhile go to their callbacks;
 *  - non-blocking: the *_send functions queue a request and return its id at
 *    once; the caller's own loop polls anim_client_fd() (POLLIN, plus POLLOUT
 *    while anim_client_wants_write()) and calls anim_client_process(), which
 *    reads, parses frames and calls the callbacks.
 *
 * Requests may be pipelined: responses are matched by id. Every function
 * returns 0 or a negative ANIM_E* code (anim_strerror explains it); when the
 * server answered with an error, that code is returned and its message is in
 * anim_client_last_error(). A callback never runs for a request whose send
 * returned an error. A client is not thread-safe: use it from one thread.
 *
 * Ownership: anim_client_connect allocates; anim_client_close frees. Result
 * structs passed to callbacks are valid only during the callback.
 */
#ifndef ANIM_CLIENT_H
#define ANIM_CLIENT_H

#include <stddef.h>
#include <stdint.h>
#include "anim_error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct anim_client anim_client_t;

#define ANIM_MAX_CAPABILITIES 32

typedef struct {
  uint32_t protocol_version;
  char server_version[64];
  int ncapabilities;
  char capabilities[ANIM_MAX_CAPABILITIES][32]; /* the first ANIM_MAX_CAPABILITIES the server lists */
  uint32_t max_frame_bytes, max_in_flight, max_batch, max_k;
  uint64_t output_soft_limit, output_hard_limit;
  uint64_t connection_id;
  uint32_t max_characters;   /* per connection */
  float tick_rate;           /* Hz */
  int admin;                 /* this connection may load, reload and unload */
} anim_hello_info_t;

typedef struct {
  const uint8_t *payload;
  size_t payload_len;
  uint64_t server_time_us;
} anim_ping_result_t;

/* status is 0 or the server's error code (message: anim_client_last_error). */
typedef void (*anim_hello_cb)(anim_client_t *client, uint64_t id, int status, const anim_hello_info_t *info,
                              void *data);
typedef void (*anim_ping_cb)(anim_client_t *client, uint64_t id, int status, const anim_ping_result_t *result,
                             void *data);

/* Connection events (see reconnection below). */
enum {
  ANIM_CONNECTION_LOST = 1,           /* status: why (ANIM_ECLOSED, ANIM_EPROTO, the server's code, ...) */
  ANIM_CONNECTION_ATTEMPT_FAILED = 2, /* a reconnection attempt failed (ANIM_ECONNECT, ANIM_ETIMEDOUT) */
  ANIM_CONNECTION_RESTORED = 3,       /* connected again (status 0): re-create characters, subscriptions */
  ANIM_CONNECTION_GAVE_UP = 4         /* reconnect_max_attempts failed (status: the last one's reason) */
};

/* Called from anim_client_process / anim_client_poll or a blocking call. In
 * RESTORED the caller may use the whole API (blocking calls included) to
 * re-create what the lost server held; in the other events requests fail
 * with ANIM_ECLOSED. Never anim_client_close the client inside it. */
typedef void (*anim_connection_cb)(anim_client_t *client, int event, int status, void *data);

typedef struct {
  int timeout_ms;            /* connect timeout; <= 0: 5000 */
  uint32_t max_frame_bytes;  /* largest response accepted; 0: 64 MiB */
  const char *auth_token;    /* sent in every hello (copied); NULL: none */
  /* Reconnection (0 everywhere: off, as before). */
  int reconnect;             /* non-zero: reconnect after a lost connection */
  int reconnect_initial_ms;  /* first delay; <= 0: 100 */
  int reconnect_max_ms;      /* the delay doubles up to this; <= 0: 5000 */
  int reconnect_max_attempts; /* failed attempts before giving up; 0: unlimited */
  anim_connection_cb on_connection; /* may be NULL */
  void *connection_data;     /* passed to on_connection */
} anim_client_options_t;

/* Connects to host:port (numeric address or name). Returns NULL on failure
 * with the code in *out_err (ANIM_ECONNECT, ANIM_ETIMEDOUT, ANIM_EINVAL,
 * ANIM_ENOMEM). options may be NULL. */
anim_client_t *anim_client_connect(const char *host, int port, const anim_client_options_t *options, int *out_err);

/* ---- reconnection ------------------------------------------------------------------
 *
 * Off by default: a lost connection stays lost (every call then returns its
 * error). With options.reconnect, when the connection breaks (read or write
 * error, end of stream, a server that closed it):
 *  - pending requests fail with the break's code, once, as without reconnect;
 *  - subscriptions and queued stream frames are dropped: the next server
 *    knows nothing of this connection's characters or subscriptions;
 *  - on_connection(LOST, why) runs; then the next anim_client_process /
 *    anim_client_poll or blocking call reconnects to the same host and port
 *    (every address resolved at connect time, in order), after a delay that
 *    doubles from reconnect_initial_ms to reconnect_max_ms, each drawn
 *    uniformly from [delay / 2, delay] so clients of a lost server do not
 *    return in step. Each failed attempt calls on_connection(ATTEMPT_FAILED);
 *    a new connection lost before it answered any request (a server refusing
 *    the auth token) counts as a failed attempt too (reported by its LOST);
 *    the count starts over once a connection answers. After
 *    reconnect_max_attempts failures, on_connection(GAVE_UP) and the client
 *    stays closed;
 *  - once connected, a hello carrying options.auth_token goes out first (when
 *    a token is set, so what follows is authenticated), then
 *    on_connection(RESTORED): re-create characters and subscriptions there.
 * Meanwhile requests are refused with ANIM_ECLOSED (their callbacks never
 * run), anim_client_process returns ANIM_ECLOSED, anim_client_poll waits up
 * to its timeout for the next attempt and returns 0 once connected again (or
 * ANIM_ECLOSED), and blocking calls wait up to their timeout for the
 * connection before sending (ANIM_ECLOSED if it is not back by then). The
 * descriptor changes: take anim_client_fd() again after each call; it is -1
 * between attempts, when anim_client_next_timeout() says when to call
 * anim_client_process. The first connection (anim_client_connect) is not
 * retried. */

/* 1 while connected (as far as the client knows), 0 otherwise. */
int anim_client_connected(const anim_client_t *client);

/* Milliseconds a caller's poll() may wait before calling
 * anim_client_process although anim_client_fd() shows nothing: the next
 * reconnection attempt or a connect attempt's time limit. -1: nothing timed
 * (connected, reconnection off, or given up). */
int anim_client_next_timeout(const anim_client_t *client);

/* Closes the socket and frees the client. Pending callbacks are called with
 * ANIM_ECLOSED first. NULL is ignored. */
void anim_client_close(anim_client_t *client);

/* The server's message for the last error response, or a local reason. */
const char *anim_client_last_error(const anim_client_t *client);

/* ---- databases, search, poses: plain C results ----------------------------------------- */

typedef struct {
  char name[64];
  uint64_t version;       /* content hash of the data that answered */
  uint32_t frames, bones;
  float frame_rate;       /* Hz */
  uint32_t feature_dims, ranges;
  uint64_t memory_bytes;
} anim_db_summary_t;

typedef struct {
  char name[64];
  uint32_t start, stop;   /* frames [start, stop) */
  int ntags;
  char tags[8][64];
} anim_range_info_t;

typedef struct {
  int kind;               /* 0 bone position, 1 bone velocity, 2 trajectory position, 3 trajectory direction, 4 inertialize */
  char bone[64];
  float weight, halflife;
  int nsamples;
  int frame_offsets[8];
  uint32_t first_column, dims;
} anim_feature_group_info_t;

/* Owned by the library; free with anim_db_description_free. */
typedef struct {
  anim_db_summary_t summary;
  int nbones;
  char (*bone_names)[64];
  int *bone_parents;
  int nranges;
  anim_range_info_t *ranges;
  int ngroups;
  anim_feature_group_info_t *groups;
  float *feature_offset, *feature_scale; /* feature_dims each: raw = normalized * scale + offset */
  int ncontact_bones;
  int *contact_bones;                    /* bone index of each contact bone (foot contacts, in order) */
} anim_db_description_t;

/* A pose: arrays of 3 floats (vectors) or 4 floats (w, x, y, z) per bone, NULL when not requested. */
typedef struct {
  uint32_t frame;
  int nbones;
  const float *local_positions, *local_rotations, *local_velocities, *local_angular_velocities;
  const float *global_positions, *global_rotations, *global_velocities, *global_angular_velocities;
  int ncontacts;
  const uint8_t *contacts;
} anim_pose_t;

typedef struct {
  int local, global, velocities; /* neither local nor global: local */
} anim_pose_options_t;

enum { ANIM_METHOD_DEFAULT = 0, ANIM_METHOD_BRUTE = 1, ANIM_METHOD_BOXES = 2, ANIM_METHOD_FAST = 3 };

/* A search query. Start from anim_query_init. The query vector is one of:
 *  - features (nfeatures == the database's dims; normalized unless raw_features);
 *  - the features of database frame from_frame, whose trajectory part may be
 *    replaced by trajectory_positions/directions (x, z pairs in character
 *    space, one per trajectory sample);
 *  - the inputs features are made of: bone positions and velocities in
 *    character space (position_bones[i] at positions[3i..3i+2], likewise
 *    velocities, at most 16 each) plus the trajectory; every term of the
 *    database's schema must be covered. */
typedef struct {
  const float *features;
  int nfeatures;
  int raw_features;
  int from_frame;              /* -1: not used */
  const float *trajectory_positions;
  int ntrajectory_positions;   /* pairs */
  const float *trajectory_directions;
  int ntrajectory_directions;
  int k;                       /* results wanted, 1..max_k */
  int current_frame;           /* -1: none; else it competes without transition cost */
  float transition_cost;
  int ignore_range_end, ignore_surrounding;
  const char *const *tags;     /* only ranges with any of these tags */
  int ntags;
  int include_pose, explain;
  int method;                  /* ANIM_METHOD_* */
  const char *const *position_bones;
  const float *positions;
  int npositions;
  const char *const *velocity_bones;
  const float *velocities;
  int nvelocities;
} anim_query_t;

void anim_query_init(anim_query_t *query);

typedef struct {
  uint32_t frame, range;
  char range_name[64];
  float cost;
  anim_pose_t *pose;           /* when include_pose, else NULL */
} anim_match_t;

typedef struct {
  int nmatches;
  anim_match_t *matches;       /* ascending cost */
  int nexplain;                /* when explain: cost of the best match per feature group */
  char (*explain_names)[64];
  float *explain_costs;
  float margin;                /* runner-up cost - best cost */
} anim_result_t;

/* Owned by the library; free with anim_search_reply_free. */
typedef struct {
  uint64_t database_version;
  int nresults;
  anim_result_t *results;      /* one per query, in order */
} anim_search_reply_t;

/* Owned by the library; free with anim_pose_reply_free. */
typedef struct {
  uint64_t database_version;
  int nposes;
  anim_pose_t *poses;
} anim_pose_reply_t;

void anim_db_description_free(anim_db_description_t *description);
void anim_search_reply_free(anim_search_reply_t *reply);
void anim_pose_reply_free(anim_pose_reply_t *reply);

/* ---- blocking calls --------------------------------------------------------- */

/* Handshake: client_name is free text for the server's logs. A server with
 * an auth token refuses every other request (ANIM_EPERM) until a hello
 * carries it (anim_client_options_t.auth_token); a wrong one closes the
 * connection. */
int anim_client_hello(anim_client_t *client, const char *client_name, anim_hello_info_t *out_info, int timeout_ms);

/* Round trip; out_rtt_us (may be NULL) receives the measured round-trip time. */
int anim_client_ping(anim_client_t *client, const void *payload, size_t len, uint64_t *out_rtt_us, int timeout_ms);

/* Databases. list fills up to max summaries and sets *out_count to how many
 * the server has. load/reload/unload are admin operations: load reads
 * NAME.animdb from the server's data directory; reload rebuilds it aside and
 * swaps it in. out_summary may be NULL. */
int anim_client_db_list(anim_client_t *client, anim_db_summary_t *out_summaries, int max, int *out_count,
                        int timeout_ms);
int anim_client_db_describe(anim_client_t *client, const char *name, anim_db_description_t **out_description,
                            int timeout_ms);
int anim_client_db_load(anim_client_t *client, const char *name, anim_db_summary_t *out_summary, int timeout_ms);
int anim_client_db_reload(anim_client_t *client, const char *name, anim_db_summary_t *out_summary, int timeout_ms);
int anim_client_db_unload(anim_client_t *client, const char *name, int timeout_ms);

/* One query, or n in one message (a crowd); *out_reply has one result per query. */
int anim_client_search(anim_client_t *client, const char *database, const anim_query_t *query,
                       anim_search_reply_t **out_reply, int timeout_ms);
int anim_client_search_batch(anim_client_t *client, const char *database, const anim_query_t *queries, int n,
                             anim_search_reply_t **out_reply, int timeout_ms);

/* count frames from frame (count 0 means 1). options may be NULL (local pose). */
int anim_client_pose(anim_client_t *client, const char *database, int frame, int count,
                     const anim_pose_options_t *options, anim_pose_reply_t **out_reply, int timeout_ms);

/* ---- inertialization state ------------------------------------------------------------ */

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

void anim_inertializer_state_free(anim_inertializer_state_t *state);
void anim_transition_cost_free(anim_transition_cost_t *cost);
/* Frees a pose allocated by the library (evaluate's output). */
void anim_pose_free(anim_pose_t *pose);

/* New offsets for a transition from source (playing now) to destination,
 * continuing from state (NULL: zero offsets, identity anchor). database may
 * be NULL when both poses are explicit. */
int anim_client_inertialize_transition(anim_client_t *client, const char *database, const anim_pose_source_t *source,
                                       const anim_pose_source_t *destination, const anim_inertializer_state_t *state,
                                       anim_inertializer_state_t **out_state, int timeout_ms);
/* The offsets t seconds after state's instant and the displayed pose for
 * input, as a local pose (local_* arrays) whose root, bone 0, is in world
 * space. Either output may be NULL. */
int anim_client_inertialize_evaluate(anim_client_t *client, const char *database, const anim_inertializer_state_t *state,
                                     const anim_pose_source_t *input, float halflife, float t,
                                     anim_inertializer_state_t **out_state, anim_pose_t **out_pose, int timeout_ms);
/* Exact displacement and its approximation for a transition; bones (names,
 * database frames only) may be NULL for all. */
int anim_client_transition_cost(anim_client_t *client, const char *database, const anim_pose_source_t *source,
                                const anim_pose_source_t *destination, float halflife, const char *const *bones,
                                int nbones, anim_transition_cost_t **out_cost, int timeout_ms);
/* Half-life and gains (for mass) of the critically damped spring that, from
 * (x0, v0), is at alpha * x0 after t seconds. */
int anim_client_spring_halflife(anim_client_t *client, double alpha, double t, double x0, double v0, double mass,
                                anim_spring_tuning_t *out_tuning, int timeout_ms);
/* Implicit-spring gains <-> constraint ERP/CFM for a time step dt. */
int anim_client_spring_to_constraint(anim_client_t *client, double stiffness, double damping, double dt,
                                     anim_spring_tuning_t *out_tuning, int timeout_ms);
int anim_client_spring_from_constraint(anim_client_t *client, double erp, double cfm, double dt,
                                       anim_spring_tuning_t *out_tuning, int timeout_ms);

/* ---- characters and pose streams -------------------------------------------------------
 *
 * A character is a motion-matching controller the server ticks (60 Hz by
 * default): the client steers it with input and subscribes to its poses.
 * Characters belong to the connection that created them (only it steers or
 * destroys them) and are destroyed when it closes; any connection may
 * subscribe to any character. */

/* Controller parameters; a field left 0 takes the server default. */
typedef struct {
  int search_interval;          /* frames between searches [10] */
  float inertialize_halflife;   /* s [0.1] */
  float velocity_halflife, rotation_halflife; /* s [0.27, 0.27] */
  float forward_speed, side_speed, back_speed; /* m/s [1.75, 1.5, 1.25] */
  int ignore_surrounding, ignore_range_end;   /* frames [20, 20] */
  float transition_cost;        /* [0] */
  float replan_threshold;       /* m/s change of desired velocity forcing a search [0.5] */
  float input_f, input_zeta, input_r; /* second-order smoothing of the desired velocity [4 Hz, 1, 0] */
} anim_character_params_t;

typedef struct {
  float x, z;        /* metres */
  float facing;      /* radians about +Y, 0 faces +Z */
  int start_frame;   /* -1: the database's first frame */
} anim_character_placement_t;

enum { ANIM_INPUT_KIND_STICK = 0, ANIM_INPUT_KIND_VELOCITY = 1, ANIM_INPUT_KIND_GOAL = 2 };

/* One of: a stick (x right, z forward, |stick| <= 1) relative to the camera
 * azimuth, strafe keeping the camera's facing; a desired world velocity
 * (m/s) and facing (radians); a goal position to walk to at goal_speed. */
typedef struct {
  int kind;                         /* ANIM_INPUT_KIND_* */
  float stick_x, stick_z, camera_azimuth;
  int strafe;
  float velocity_x, velocity_z, facing;
  float goal_x, goal_z, goal_speed;
} anim_character_input_t;

/* A character's state between two ticks. Owned by the library:
 * anim_character_state_free. */
typedef struct {
  uint64_t database_version, tick;
  float position[3], velocity[3], rotation[4], angular_velocity[3]; /* simulation, world space */
  float desired_velocity[3], desired_rotation[4];
  int ntrajectory;
  float trajectory[8][3];           /* predicted positions */
  uint32_t frame, range;
  char range_name[64];
  float time_since_transition;      /* s */
  uint64_t searches, transitions;
  float inertialize_halflife;
  anim_inertializer_state_t inertializer; /* offsets (nbones 0 unless asked) and anchor */
  int mode;                         /* ANIM_MODE_* */
  char machine[64];                 /* MACHINE: its machine, the active states (root first) and seconds in each */
  int depth;
  char state_path[8][64];
  float state_times[8];
  uint64_t events_dropped;          /* events no state took */
  char follow[16];                  /* GRAPH: "wander", "path" or "goal"; m of path covered; plans and edges tried */
  float path_arc;
  uint64_t plans, expansions;
  float scale;                      /* TRACKER: the user's size, each tracker's residual (m, -1 lost) */
  int ntracker_residuals;
  float tracker_residuals[8];
} anim_character_state_t;

enum { ANIM_POSE_FLOAT = 0, ANIM_POSE_QUANTIZED = 1 };

typedef struct {
  const uint64_t *characters;  /* these characters (any owner's) */
  int ncharacters;
  int owned;                   /* and every character this connection owns, now or later */
  int rate_divisor;            /* a frame every N ticks; 0 or 1: every tick */
  int encoding;                /* ANIM_POSE_*: the library decodes both to floats */
  int global_positions;        /* add world positions of every bone */
  int rotations_only;          /* local positions of the root only */
} anim_subscribe_options_t;

/* One character in a frame: bone 0 is the root in world space, the others
 * local to their parent; floats whatever the wire encoding was. */
typedef struct {
  uint64_t character;
  uint32_t frame;              /* database frame playing */
  int nbones;
  const float *positions;      /* 3 per bone (3 floats only with rotations_only) */
  const float *rotations;      /* w, x, y, z per bone */
  const float *global_positions; /* 3 per bone, or NULL */
  uint32_t contacts;           /* bit i: contact bone i planted */
  int transition;              /* a transition started this tick */
  int depth;                   /* MACHINE characters: the active state path, root first, as */
  uint32_t state_path[8];      /* indices into the machine's states (anim_machine_summary_t), */
  float state_times[8];        /* seconds in each; */
  int state_changed;           /* a transition was taken this tick */
} anim_character_pose_t;

/* Owned by the library: valid during a callback, or until
 * anim_stream_frame_free for anim_client_next_frame's. */
typedef struct {
  uint64_t subscription, tick;
  uint64_t server_time_us;     /* server wall clock when encoded */
  uint64_t received_us;        /* client monotonic clock when decoded */
  uint64_t dropped_frames;     /* replaced by newer ones on the server (latest wins) */
  uint64_t client_dropped;     /* dropped from the library's queue (next_frame not called often enough) */
  int encoding;
  float dt;                    /* seconds this tick simulated */
  size_t wire_bytes;           /* size of this frame on the wire */
  int nposes;
  anim_character_pose_t *poses;
  int ngone;
  const uint64_t *gone;        /* subscribed characters that no longer exist */
} anim_stream_frame_t;

typedef struct {
  uint64_t uptime_us;
  uint32_t connections, characters;
  uint64_t requests, errors;
  float tick_rate;
  uint64_t ticks, ticks_late, ticks_skipped;
  uint64_t lateness_p50_us, lateness_p99_us, lateness_max_us, tick_work_p50_us, tick_work_p99_us;
  uint64_t frames_sent, frames_dropped, stream_bytes, poses_sent, slow_subscribers_closed;
  double cpu_user_s, cpu_system_s;
  uint64_t rss_bytes, character_bytes, pose_buffer_bytes;
} anim_server_stats_t;

typedef void (*anim_status_cb)(anim_client_t *client, uint64_t id, int status, void *data);
/* Called from anim_client_process (or any blocking call) for each frame of a
 * subscription made with a callback. */
typedef void (*anim_stream_cb)(anim_client_t *client, const anim_stream_frame_t *frame, void *data);

void anim_character_params_init(anim_character_params_t *params);   /* all 0: server defaults */
void anim_character_input_stick(anim_character_input_t *out, float x, float z, float camera_azimuth, int strafe);
void anim_character_input_velocity(anim_character_input_t *out, float vx, float vz, float facing);
void anim_character_input_goal(anim_character_input_t *out, float x, float z, float speed);

/* Creates n characters (n >= 1; placements may be NULL for n at the origin)
 * on database; out_ids receives n ids. All or nothing. params may be NULL. */
int anim_client_characters_create(anim_client_t *client, const char *database, const anim_character_params_t *params,
                                  const anim_character_placement_t *placements, int n, uint64_t *out_ids,
                                  int timeout_ms);

/* How a character is driven (anim_client_characters_create_mode). */
/* LEARNED: learned motion matching (a server started with --lmm), on the database "lmm". */
enum { ANIM_MODE_MOTION_MATCHING = 0, ANIM_MODE_MACHINE = 1, ANIM_MODE_GRAPH = 2, ANIM_MODE_TRACKER = 3, ANIM_MODE_LEARNED = 4 };

/* A tracked bone of a tracker character: its name, and the tracked point in its frame. */
typedef struct {
  const char *bone;
  float offset[3];
} anim_tracked_bone_t;

typedef struct {
  int mode;                        /* ANIM_MODE_* */
  const char *machine;             /* MACHINE: a loaded machine's name */
  float path_horizon, path_keep;   /* GRAPH: its planner (0: defaults) */
  int path_max_expansions;
  const anim_tracked_bone_t *trackers; /* TRACKER: 1..8 bones, the order anim_client_trackers_set lists them */
  int ntrackers;
  float hold_seconds;              /* TRACKER: without an update a tracker counts as lost after this [0.5] */
} anim_character_mode_t;

/* anim_client_characters_create for a mode (NULL: motion matching). */
int anim_client_characters_create_mode(anim_client_t *client, const char *database, const anim_character_mode_t *mode,
                                       const anim_character_params_t *params,
                                       const anim_character_placement_t *placements, int n, uint64_t *out_ids,
                                       int timeout_ms);
int anim_client_characters_destroy(anim_client_t *client, const uint64_t *ids, int n, int timeout_ms);
/* Input for n characters, all checked before any is applied; it holds until
 * changed. out_tick (may be NULL): the tick that applies it. */
int anim_client_characters_set_input(anim_client_t *client, const uint64_t *ids, const anim_character_input_t *inputs,
                                     int n, uint64_t *out_tick, int timeout_ms);
int anim_client_characters_set_input_send(anim_client_t *client, const uint64_t *ids,
                                          const anim_character_input_t *inputs, int n, anim_status_cb cb, void *data,
                                          uint64_t *out_id);
int anim_client_character_state(anim_client_t *client, uint64_t id, int offsets, anim_character_state_t **out_state,
                                int timeout_ms);
void anim_character_state_free(anim_character_state_t *state);

/* Subscribes; frames go to cb (non-blocking use: they arrive during
 * anim_client_process/poll), or with cb NULL into a queue read by
 * anim_client_next_frame (at most 256 frames: the oldest are dropped and
 * counted in client_dropped). out_tick_rate may be NULL. */
int anim_client_subscribe(anim_client_t *client, const anim_subscribe_options_t *options, anim_stream_cb cb,
                          void *data, uint64_t *out_subscription, float *out_tick_rate, int timeout_ms);
int anim_client_subscription_update(anim_client_t *client, uint64_t subscription, int rate_divisor, int encoding,
                                    int paused, int timeout_ms);
int anim_client_unsubscribe(anim_client_t *client, uint64_t subscription, int timeout_ms);
/* The oldest queued frame, waiting up to timeout_ms for one. 0,
 * ANIM_ETIMEDOUT, or a connection error. Free with anim_stream_frame_free. */
int anim_client_next_frame(anim_client_t *client, anim_stream_frame_t **out_frame, int timeout_ms);
void anim_stream_frame_free(anim_stream_frame_t *frame);

int anim_client_server_stats(anim_client_t *client, anim_server_stats_t *out_stats, int timeout_ms);

/* Asks the server to shut down gracefully (an admin request: ANIM_EPERM
 * without the admin token). 0 once the server has acknowledged it. */
int anim_client_shutdown(anim_client_t *client, int timeout_ms);

/* ---- non-blocking path --------------------------------------------------------- */

/* The socket to poll. With reconnection it changes after a loss, and is -1
 * between attempts (see anim_client_next_timeout). */
int anim_client_fd(const anim_client_t *client);

/* Queue requests; out_id (may be NULL) receives the id the callback will see. */
int anim_client_hello_send(anim_client_t *client, const char *client_name, anim_hello_cb cb, void *data,
                           uint64_t *out_id);
int anim_client_ping_send(anim_client_t *client, const void *payload, size_t len, anim_ping_cb cb, void *data,
                          uint64_t *out_id);

/* Non-blocking search: reply is valid during the callback only. */
typedef void (*anim_search_cb)(anim_client_t *client, uint64_t id, int status, const anim_search_reply_t *reply,
                               void *data);
int anim_client_search_send(anim_client_t *client, const char *database, const anim_query_t *queries, int n,
                            anim_search_cb cb, void *data, uint64_t *out_id);

/* Asynchronous forms of the other requests: the same arguments as the
 * blocking calls, a typed callback instead of outputs. Results are valid
 * during the callback only (NULL when status != 0). */
typedef void (*anim_db_list_cb)(anim_client_t *client, uint64_t id, int status, const anim_db_summary_t *summaries,
                                int count, void *data);
typedef void (*anim_db_describe_cb)(anim_client_t *client, uint64_t id, int status,
                                    const anim_db_description_t *description, void *data);
typedef void (*anim_db_changed_cb)(anim_client_t *client, uint64_t id, int status, const anim_db_summary_t *summary,
                                   void *data);
typedef void (*anim_pose_cb)(anim_client_t *client, uint64_t id, int status, const anim_pose_reply_t *reply, void *data);
typedef void (*anim_inertialize_cb)(anim_client_t *client, uint64_t id, int status,
                                    const anim_inertializer_state_t *state, const anim_pose_t *pose, void *data);
typedef void (*anim_transition_cost_cb)(anim_client_t *client, uint64_t id, int status,
                                        const anim_transition_cost_t *cost, void *data);
typedef void (*anim_spring_cb)(anim_client_t *client, uint64_t id, int status, const anim_spring_tuning_t *tuning,
                               void *data);

int anim_client_db_list_send(anim_client_t *client, anim_db_list_cb cb, void *data, uint64_t *out_id);
int anim_client_db_describe_send(anim_client_t *client, const char *name, anim_db_describe_cb cb, void *data,
                                 uint64_t *out_id);
int anim_client_db_load_send(anim_client_t *client, const char *name, anim_db_changed_cb cb, void *data,
                             uint64_t *out_id);
int anim_client_db_reload_send(anim_client_t *client, const char *name, anim_db_changed_cb cb, void *data,
                               uint64_t *out_id);
int anim_client_db_unload_send(anim_client_t *client, const char *name, anim_db_changed_cb cb, void *data,
                               uint64_t *out_id);
int anim_client_pose_send(anim_client_t *client, const char *database, int frame, int count,
                          const anim_pose_options_t *options, anim_pose_cb cb, void *data, uint64_t *out_id);
/* The callback's pose is NULL for a transition. */
int anim_client_inertialize_transition_send(anim_client_t *client, const char *database,
                                            const anim_pose_source_t *source, const anim_pose_source_t *destination,
                                            const anim_inertializer_state_t *state, anim_inertialize_cb cb, void *data,
                                            uint64_t *out_id);
int anim_client_inertialize_evaluate_send(anim_client_t *client, const char *database,
                                          const anim_inertializer_state_t *state, const anim_pose_source_t *input,
                                          float halflife, float t, anim_inertialize_cb cb, void *data, uint64_t *out_id);
int anim_client_transition_cost_send(anim_client_t *client, const char *database, const anim_pose_source_t *source,
                                     const anim_pose_source_t *destination, float halflife, const char *const *bones,
                                     int nbones, anim_transition_cost_cb cb, void *data, uint64_t *out_id);
int anim_client_spring_halflife_send(anim_client_t *client, double alpha, double t, double x0, double v0, double mass,
                                     anim_spring_cb cb, void *data, uint64_t *out_id);
int anim_client_spring_to_constraint_send(anim_client_t *client, double stiffness, double damping, double dt,
                                          anim_spring_cb cb, void *data, uint64_t *out_id);
int anim_client_spring_from_constraint_send(anim_client_t *client, double erp, double cfm, double dt, anim_spring_cb cb,
                                            void *data, uint64_t *out_id);

/* Reads what the socket has, calls callbacks for complete messages, writes
 * queued output. Never blocks. 0, or ANIM_ECLOSED / ANIM_EPROTO /
 * ANIM_ETOOBIG when the connection is no longer usable. With reconnection it
 * also tears a lost connection down and makes the attempt that is due (a
 * connect in progress is never waited for here); ANIM_ECLOSED until
 * connected again. */
int anim_client_process(anim_client_t *client);

/* 1 while queued output waits for the socket (poll for POLLOUT too). */
int anim_client_wants_write(const anim_client_t *client);

/* Requests sent and not yet answered. */
int anim_client_pending(const anim_client_t *client);

/* Waits up to timeout_ms for the socket and processes it once. 0, or
 * ANIM_ETIMEDOUT when nothing happened, or anim_client_process's errors.
 * While reconnecting: waits up to timeout_ms for the next attempt (or the
 * connect in progress), makes it, and returns 0 if connected again, else
 * ANIM_ECLOSED. */
int anim_client_poll(anim_client_t *client, int timeout_ms);

#include "anim_client_machine.h"
#include "anim_client_graph.h"
#include "anim_client_fit.h"

#ifdef __cplusplus
}
#endif
#endif
