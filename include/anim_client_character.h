/*
 * anim_client_character.h: characters the server ticks (part of the client
 * library; include anim_client.h).
 *
 * A character is a controller the server ticks (60 Hz by default) in a
 * mode: motion matching, a state machine, a motion graph, trackers, a
 * learned model. The client steers it (input, events, paths, trackers, each
 * in its area's header) and subscribes to its poses.
 * Characters belong to the connection that created them (only it steers or
 * destroys them) and are destroyed when it closes; any connection may
 * subscribe to any character (anim_client_stream.h).
 *
 * This header: creating characters (in a mode),
 * steering them with input, reading their state, destroying them. Their
 * poses arrive through subscriptions (anim_client_stream.h). Every request
 * has a blocking form and a _send form with a typed callback (results valid
 * during the callback only).
 */
#ifndef ANIM_CLIENT_CHARACTER_H
#define ANIM_CLIENT_CHARACTER_H

#include "anim_client_inertialize.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How the server animates a character (CharacterMode on the wire).
 * MACHINE: an action state machine (anim_client_machine.h); GRAPH: walks a
 * motion graph (anim_client_graph.h); TRACKER: follows tracked points
 * (anim_client_fit.h); LEARNED: learned motion matching (a server started
 * with --lmm), on the database "lmm". */
enum {
  ANIM_MODE_MOTION_MATCHING = 0,
  ANIM_MODE_MACHINE = 1,
  ANIM_MODE_GRAPH = 2,
  ANIM_MODE_TRACKER = 3,
  ANIM_MODE_LEARNED = 4,
  ANIM_MODE_PHYSICAL = 5 /* motion matching with a body that takes pushes (anim_client_physics.h) */
};

/* A tracked bone of a tracker character: its name, and the tracked point in its frame. */
typedef struct {
  const char *bone;
  float offset[3];
} anim_tracked_bone_t;

/* A character's mode and what that mode needs (anim_client_characters_create_mode);
 * new modes add their fields here. */
typedef struct {
  int mode;                        /* ANIM_MODE_* */
  const char *machine;             /* MACHINE: a loaded machine's name */
  float path_horizon, path_keep;   /* GRAPH: its planner (0: defaults) */
  int path_max_expansions;
  int path_disable_warm, path_disable_bound, path_disable_memory; /* GRAPH: as anim_walk_options_t's */
  const anim_tracked_bone_t *trackers; /* TRACKER: 1..8 bones, the order anim_client_trackers_set lists them */
  int ntrackers;
  float hold_seconds;              /* TRACKER: without an update a tracker counts as lost after this [0.5] */
  float total_mass;                /* PHYSICAL: the body's mass, kg in [20, 300] (0: 70); characters of one
                                      mass share a model, at most 8 masses besides 70 in use per database */
} anim_character_mode_t;

#define ANIM_PARAM_ON (-1) /* a no_* flag of anim_character_params_t given as false: the warp on */

/* Controller parameters; a field left 0 takes the server default (a negative
 * count of frames is refused, ANIM_EINVAL, not taken as the default). */
typedef struct {
  int search_interval;          /* frames between searches [10] */
  float inertialize_halflife;   /* s [0.1] */
  float velocity_halflife, rotation_halflife; /* s [0.27, 0.27] */
  float forward_speed, side_speed, back_speed; /* m/s [1.75, 1.5, 1.25] */
  int ignore_surrounding, ignore_range_end;   /* frames [20, 20] */
  float transition_cost;        /* added to every frame but the current one [0.01; 1e-9 for none] */
  float replan_threshold;       /* m/s change of desired velocity forcing a search [0.5] */
  float input_f, input_zeta, input_r; /* second-order smoothing of the desired velocity [4 Hz, 1, 0] */
  /* Animation warping (docs/characters.md), each on unless turned off. A
   * no_* flag: 1 turns the warp off, ANIM_PARAM_ON (-1) turns it on, 0
   * leaves it out (on at create, unchanged by anim_client_character_params_set).
   * What the server reports (a state's params, the set's answer) is 1 or 0 (on). */
  int no_play_rate;             /* clips play at their own speed only */
  float play_rate_min, play_rate_max; /* the rates a clip may play at, (0, 1] and [1, 4] [0.6, 1.15] */
  int no_stand_warp;            /* do not slow a travelling clip to a stance when asked to stand */
  int no_orientation_warp;      /* do not serve travel off the facing with a forward clip */
  float orientation_warp_max;   /* rad, the largest travel angle off the facing served, (0, pi] [1.66] */
  int no_stride_warp;           /* clips travel by their own stride only (no legs stretched) */
  float stride_scale_min, stride_scale_max; /* the stride scales allowed, (0, 1] and [1, 2] [0.65, 1.2] */
  int no_root_steering;         /* the root moves by the clip alone */
  float root_steering_max;      /* the largest correction toward the asked velocity, times the root's speed,
                                   (0, 1] [0.15] */
} anim_character_params_t;

typedef struct {
  float x, z;        /* metres, |x| and |z| at most the world limit (anim_hello_info_t.world_limit) */
  float facing;      /* radians about +Y, 0 faces +Z */
  int start_frame;   /* -1: the database's first frame (below -1: ANIM_EINVAL) */
} anim_character_placement_t;

enum { ANIM_INPUT_KIND_STICK = 0, ANIM_INPUT_KIND_VELOCITY = 1, ANIM_INPUT_KIND_GOAL = 2 };

/* One of: a stick (x right, z forward, |stick| <= 1) relative to the camera
 * azimuth, strafe keeping the camera's facing; a desired world velocity
 * (m/s) and facing (radians); a goal position to walk to at goal_speed
 * (within the world limit, as every world position). */
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
  char database[64];                /* the name of the database it runs on */
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
  int arrived;                      /* GRAPH: at an open path's end (within 0.3 m), standing there */
  int nfeet;                        /* MOTION_MATCHING and LEARNED with foot locking, GRAPH steered along a
                                       path or to a goal: each contact bone's lock */
  struct {
    char bone[64];                  /* the contact bone's name */
    int locked;                     /* planted: held where it touched down */
    int stepping;                   /* let go (the animation left it behind), stepping to plant again */
    float position[3];              /* world, where it is held (when locked) */
  } feet[4];
  float play_rate;                  /* MOTION_MATCHING: the rate the clip plays at (0 held at rest; 1 other modes) */
  float warp_angle;                 /* MOTION_MATCHING: the upper body's turn back to the asked facing (rad) */
  int warp_held;                    /* MOTION_MATCHING: held at rest as a stance (no clip to stand in) */
  int physics;                      /* PHYSICAL: ANIM_PHYSICS_STATE_* (anim_client_physics.h) */
  float physics_root_error;         /* PHYSICAL: the simulated root's distance from the matched one, m */
  uint64_t pushes;                  /* PHYSICAL: pushes applied so far */
  anim_character_params_t params;   /* MOTION_MATCHING: the controller parameters in effect, every one set
                                       (anim_client_character_params_set changes them); GRAPH: its half-life
                                       and warps (root steering its one warp), defaults elsewhere; zero for
                                       other modes */
  float physics_total_mass;         /* PHYSICAL: its body's mass, kg (anim_character_mode_t.total_mass) */
  float stride_scale;               /* MOTION_MATCHING: the stride warp's scale now (1: the data's; 1 other modes) */
  float root_steering;              /* MOTION_MATCHING, GRAPH: m/s, root steering's correction of the last tick */
  /* New fields go last: the fields before keep their places. */
} anim_character_state_t;

void anim_character_params_init(anim_character_params_t *params);   /* all 0: server defaults */
void anim_character_input_stick(anim_character_input_t *out, float x, float z, float camera_azimuth, int strafe);
void anim_character_input_velocity(anim_character_input_t *out, float vx, float vz, float facing);
void anim_character_input_goal(anim_character_input_t *out, float x, float z, float speed);
/* NULL is ignored. */
void anim_character_state_free(anim_character_state_t *state);

/* characters: the ids created, in the order of the placements. */
typedef void (*anim_characters_created_cb)(anim_client_t *client, uint64_t id, int status, const uint64_t *characters,
                                           int n, void *data);
typedef void (*anim_character_state_cb)(anim_client_t *client, uint64_t id, int status,
                                        const anim_character_state_t *state, void *data);

/* Creates n >= 1 characters on database (placements NULL: n at the
 * origin; params NULL: the server's defaults) driven as mode says (NULL:
 * motion matching); out_ids receives n ids, in the order of the
 * placements. All or nothing. */
int anim_client_characters_create_mode(anim_client_t *client, const char *database, const anim_character_mode_t *mode,
                                       const anim_character_params_t *params,
                                       const anim_character_placement_t *placements, int n, uint64_t *out_ids,
                                       int timeout_ms);
int anim_client_characters_create_send(anim_client_t *client, const char *database, const anim_character_mode_t *mode,
                                       const anim_character_params_t *params,
                                       const anim_character_placement_t *placements, int n,
                                       anim_characters_created_cb cb, void *data, uint64_t *out_id);
/* The same in motion-matching mode. */
int anim_client_characters_create(anim_client_t *client, const char *database, const anim_character_params_t *params,
                                  const anim_character_placement_t *placements, int n, uint64_t *out_ids,
                                  int timeout_ms);
int anim_client_characters_destroy(anim_client_t *client, const uint64_t *ids, int n, int timeout_ms);
int anim_client_characters_destroy_send(anim_client_t *client, const uint64_t *ids, int n, anim_status_cb cb,
                                        void *data, uint64_t *out_id);
/* Input for n characters, all checked before any is applied; it holds until
 * changed. out_tick (may be NULL): the tick that applies it. */
int anim_client_characters_set_input(anim_client_t *client, const uint64_t *ids, const anim_character_input_t *inputs,
                                     int n, uint64_t *out_tick, int timeout_ms);
int anim_client_characters_set_input_send(anim_client_t *client, const uint64_t *ids,
                                          const anim_character_input_t *inputs, int n, anim_status_cb cb, void *data,
                                          uint64_t *out_id);
/* offsets: include the inertializer's per-bone offsets. */
int anim_client_character_state(anim_client_t *client, uint64_t id, int offsets, anim_character_state_t **out_state,
                                int timeout_ms);
int anim_client_character_state_send(anim_client_t *client, uint64_t id, int offsets, anim_character_state_cb cb,
                                     void *data, uint64_t *out_id);

#ifdef __cplusplus
}
#endif
#endif
