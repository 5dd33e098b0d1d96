/*
 * request_character.h: bodies of the character and stream requests:
 * create, destroy, set_inputs, character_state, subscribe,
 * update_subscription, unsubscribe (see request.h).
 *
 * What it does not: check or run them (codec_character.c, service_character.c).
 */
#ifndef SRV_REQUEST_CHARACTER_H
#define SRV_REQUEST_CHARACTER_H

#include <stddef.h>
#include <stdint.h>
#include "character/controller.h"
#include "graph/graph_path.h"
#include "request_fit.h"
#include "request_inertialize.h"

typedef struct {
  float x, z, facing; /* metres, radians */
  int start_frame;    /* -1: the database's first frame */
} srv_placement_t;

/* params: server defaults with the client's non-zero fields applied. */
typedef struct {
  int mode; /* the proto's CharacterMode */
  const char *machine;      /* MODE_MACHINE: the machine's name (checked plain) */
  anim_path_options_t path; /* MODE_GRAPH: the planner's options */
  anim_controller_params_t params;
  int search_interval_given; /* params.search_interval came with the request (learned characters default to 6) */
  const srv_placement_t *placements;
  int nplacements;
  srv_tracker_setup_t tracker; /* MODE_TRACKER */
  float physics_total_mass;    /* MODE_PHYSICAL: kg, in [SRV_PHYSICS_MIN_MASS, SRV_PHYSICS_MAX_MASS] (70 when not given) */
} srv_create_characters_request_t;

#define SRV_PHYSICS_MIN_MASS 20.0f  /* kg: a physical character's total mass (a small child to a heavy adult) */
#define SRV_PHYSICS_MAX_MASS 300.0f
#define SRV_PHYSICS_DEFAULT_MASS 70.0f

typedef struct {
  const uint64_t *ids;
  int n;
} srv_destroy_characters_request_t;

typedef struct {
  uint64_t character;
  anim_controller_input_t input;
} srv_input_item_t;

typedef struct {
  const srv_input_item_t *items;
  int n;
} srv_set_inputs_request_t;

typedef struct {
  uint64_t character;
  int offsets;
  int query; /* MODE_MOTION_MATCHING: the query it would search with now */
} srv_character_state_request_t;

typedef enum { SRV_ENCODING_FLOAT = 0, SRV_ENCODING_QUANTIZED = 1, SRV_ENCODING_REPLICATED = 2 } srv_encoding_t;

/* A region subscription's area (the proto's AoiRegion; rules there). */
#define SRV_AOI_MAX_BANDS 8
typedef struct {
  float radius;          /* m, the band's outer edge */
  uint32_t rate_divisor; /* >= 1 */
} srv_aoi_band_t;

typedef struct {
  int box;               /* 0: circle of radius; 1: box of half_x, half_z */
  float x, z;            /* centre (ignored with follow) */
  float radius, half_x, half_z;
  uint64_t follow;       /* 0: a fixed centre */
  srv_aoi_band_t bands[SRV_AOI_MAX_BANDS]; /* radii increasing */
  int nbands;            /* >= 1 (the decoder makes one from rate_divisor when none is given) */
  uint32_t max_characters; /* 0: no cap */
} srv_aoi_region_t;

typedef struct {
  const uint64_t *ids;
  int nids;
  int owned;
  uint32_t rate_divisor; /* >= 1 */
  srv_encoding_t encoding;
  int global_positions, rotations_only;
  int has_region;        /* then ids and owned are empty */
  srv_aoi_region_t region;
} srv_subscribe_request_t;

/* update_subscription and unsubscribe (which reads subscription only). */
typedef struct {
  uint64_t subscription;
  uint32_t rate_divisor;
  srv_encoding_t encoding;
  int paused;
} srv_update_subscription_request_t;
typedef srv_update_subscription_request_t srv_unsubscribe_request_t;

typedef struct {
  uint64_t *ids; /* response-owned */
  int n;
  int build;       /* the kind's prepare asked for its build step (off the loop; actor.h) */
} srv_create_characters_response_t;

typedef struct {
  uint32_t destroyed;
} srv_destroy_characters_response_t;

typedef struct {
  uint64_t tick; /* the tick that applies them */
} srv_set_inputs_response_t;

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
  srv_inertializer_t inertializer; /* offsets when asked, anchor always */
  int mode;                        /* the proto's CharacterMode */
  /* MODE_MACHINE: response-owned copies. */
  char machine[64];
  char (*state_path)[64];
  float *state_times;
  int depth;
  uint64_t events_dropped;
  /* MODE_GRAPH */
  const char *follow;              /* a static string */
  float path_arc;
  int arrived;                     /* MODE_GRAPH: at an open path's end */
  uint64_t plans, expansions;
  float scale;                     /* MODE_TRACKER: the user's size, and each tracker's residual (m, -1: lost) */
  float tracker_residuals[SRV_MAX_TRACKERS];
  int ntracker_residuals;
  /* MODE_MOTION_MATCHING. query: when asked, a response-owned buffer of the
   * database's feature columns the service provides; the kind fills nquery.
   * feet: each contact bone's foot lock. */
  float *query;
  int nquery;
  struct {
    int bone; /* index into the skeleton */
    int locked, stepping; /* planted; stepping to plant again */
    vec3 position;
  } feet[ANIM_MAX_CONTACTS];
  int nfeet;
  float play_rate, warp_angle; /* MODE_MOTION_MATCHING's warping, MODE_LEARNED's play rate (1 and 0 without) */
  int warp_held;
  float stride_scale;          /* MODE_MOTION_MATCHING's stride warp (1 without) */
  float root_steering;         /* m/s, MODE_MOTION_MATCHING's root steering (0 without) */
  /* MODE_PHYSICAL: the proto's PhysicsState, the root's distance from the matched pose's (m), pushes applied. */
  int physics;
  float physics_root_error;
  uint64_t pushes;
  float physics_total_mass;        /* kg */
  int has_params;                  /* MODE_MOTION_MATCHING: params are the controller's in effect */
  anim_controller_params_t params;
} srv_character_state_response_t;

typedef struct {
  uint64_t subscription;
  float tick_rate;
  uint32_t bones;
} srv_subscribe_response_t;

typedef struct {
  uint64_t subscription;
} srv_update_subscription_response_t;
typedef srv_update_subscription_response_t srv_unsubscribe_response_t;

#endif
