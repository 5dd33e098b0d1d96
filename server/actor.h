/*
 * actor.h: a server-side character, whatever animates it.
 *
 * An actor is the crowd's handle on a character: its id, owner, the
 * database entry it holds a reference to, its pose record for streams. What
 * moves it is a kind (srv_actor_kind_t): motion matching (actor_matching.c)
 * and the other character modes each implement the same few operations
 * over their own core character, which the actor carries inline after
 * itself. The crowd groups actors by kind and database into chunks and
 * calls the kind's simulate for each chunk on the thread pool, so a kind
 * can batch work across its characters (one search batch, one matrix
 * product); the streams read only the displayed pose the kind reports.
 *
 * A kind carries its own set-up: what its characters share (a bound
 * machine, a graph, a fit model) it resolves from the registry itself
 * (prepare, build, setup below), so creating characters picks the kind by
 * mode from the table and never branches on the mode, and no service asks
 * another area's service for it.
 *
 * Adding a character mode: its core character type, one file
 * actor_<mode>.c defining `const srv_actor_kind_t srv_actor_<mode>`, one row
 * in SRV_ACTOR_KINDS below, and its value in the proto's CharacterMode.
 */
#ifndef SRV_ACTOR_H
#define SRV_ACTOR_H

#include <stddef.h>
#include <stdint.h>
#include "character/controller.h"
#include "registry.h"
#include "request.h"
#include "machine/state_machine.h"

/* X(MODE, name): the proto's CharacterMode value MODE_<MODE>, and srv_actor_<name>. */
#define SRV_ACTOR_KINDS(X) X(MOTION_MATCHING, matching) X(MACHINE, machine) X(GRAPH, graph) X(TRACKER, tracker) \
  X(LEARNED, learned) X(PHYSICAL, physical)

/* What a tick must leave in an actor's pose record for its readers. */
enum { SRV_WANT_QUANTIZED = 1, SRV_WANT_GLOBAL = 2 };

/* The displayed pose after a tick: views into the kind's character. */
typedef struct {
  int nbones;
  /* MODE_PHYSICAL: simulations that diverged in its ticks since the crowd
   * last counted them (set on the pool, summed and cleared by the crowd
   * after the tick; here, beside nbones, where the struct had padding). */
  uint32_t physics_resets;
  const vec3 *positions;        /* local, bone 0 (the root) in the world */
  const quat *rotations;
  const vec3 *global_positions; /* world; set when the tick wanted them */
  int frame;                    /* the database frame shown, or -1 */
  uint32_t contacts;            /* bit i: contact bone i planted */
  int transitioned;             /* a transition started this tick */
  /* Machine characters: the active state path, root first (indices into
   * their machine's states), seconds in each, whether it changed this tick
   * and its state names. depth 0 for every other kind. */
  int depth;
  const uint32_t *state_path;
  const float *state_times;
  int state_changed;
  int physics;                  /* MODE_PHYSICAL: the proto's PhysicsState; 0 for every other kind */
  char *const *state_names;
} srv_actor_pose_t;

/* What create_characters asks of one character. */
typedef struct {
  const srv_create_characters_request_t *request; /* params and the mode's options */
  vec3 position;  /* y ignored */
  float facing;   /* radians about +Y */
  int start_frame;
  uint32_t slot;  /* the actor's slot: kinds with periodic work spread it over ticks by it */
  void *shared;   /* what the kind's characters share, from its setup hook: a
                     bound machine (machines.h), a graph (graphs.h), the fit model
                     of the tracked bones (fit_models.h); init takes its own
                     reference */
} srv_actor_setup_t;

typedef struct srv_actor srv_actor_t;

/* What kinds read of the server to set their characters up (loop thread). */
typedef struct srv_actor_env {
  struct srv_machines *machines; /* the loaded state machines (machines.h) */
} srv_actor_env_t;

typedef struct {
  const char *name;
  size_t size; /* bytes of the kind's character, allocated zeroed after the actor */
  /* A create_characters request's set-up, each step optional (NULL: nothing
   * to do), each 0 or an error set in out naming the request's field.
   * prepare (loop, before the work; out->entry is the database): finds what
   * is cached for the characters to share (out->fit_model), or asks for
   * build by setting out->body.create_characters.build. build (the pool,
   * when asked): makes it; built (loop, first thing after a build, as
   * uv_queue_work's after_cb, even when the request then fails): keeps it
   * (caches it for the next requests). setup (loop, once the request's checks passed,
   * before any character is made): the reference the characters share, in
   * *out_shared, released with *out_release once they took their own (NULL:
   * the response holds it). */
  int (*prepare)(const srv_create_characters_request_t *request, srv_response_t *out);
  int (*build)(const srv_create_characters_request_t *request, srv_response_t *out);
  void (*built)(const srv_create_characters_request_t *request, srv_response_t *out);
  int (*setup)(const srv_actor_env_t *env, const srv_create_characters_request_t *request, srv_response_t *out,
               void **out_shared, void (**out_release)(void *shared));
  /* Loop: sets up the character on entry. 0, or an ANIM_E* code with a message in err. */
  int (*init)(void *character, srv_db_entry_t *entry, const srv_actor_setup_t *setup, char *err, int errlen);
  void (*free)(void *character); /* NULL: nothing to free */
  /* Loop: bytes the character allocated for itself beyond `size` (pose
   * buffers, planners, fitters: their malloc_usable_size, or, for a kind
   * with many blocks, the sizes it asked for, since usable sizes vary with
   * the heap's state and equal characters would count differently: the
   * graph kind), not what it shares with other characters
   * (database, machine, graph, networks, fit model). NULL: nothing. The
   * crowd measures it at creation and keeps the figure: what reallocates a
   * character's memory later tells it (srv_crowd_remeasure), and a tick
   * never does. */
  size_t (*heap_bytes)(const void *character);
  /* Loop: bytes of scratch simulate needs for n characters on entry (kept across ticks). */
  size_t (*scratch_bytes)(const srv_db_entry_t *entry, int n);
  /* Pool: advances actors[0..n) (this kind, one entry) by dt seconds, calls
   * srv_actor_report for each one after its tick, and sets an actor's error
   * when its tick failed. */
  void (*simulate)(srv_actor_t *const *actors, int n, float dt, void *scratch);
  /* Sets actor->pose from the character (global positions when its want
   * asks): after each tick, and once at creation (the loop). */
  void (*report)(srv_actor_t *actor);
  /* Pool, from srv_actor_report: moves the character by step (m, world) as
   * if it had always been there; the world's boundary (core/pose/world.h)
   * holds a character that walks onto it this way. NULL for a kind that
   * cannot walk away from its inputs (MODE_TRACKER follows its tracked
   * points, which are within the world). */
  void (*translate)(void *character, vec3 step);
  /* Loop: steering input of a kind in `inputs`; NULL for a kind steered otherwise. */
  int (*set_input)(void *character, const anim_controller_input_t *input);
  uint32_t inputs; /* bit k: takes input kind k (ANIM_INPUT_*) */
  /* Loop: tracked points (MODE_TRACKER; NULL for kinds steered otherwise).
   * With apply 0 only checks them against the character (and makes room
   * for them when they wait): 0, or a code with err naming the subfield
   * ("trackers[1].bone ..."); with apply 1 takes them. ahead: seconds of
   * ticks after the next one at which they apply (0: the next). */
  int (*set_trackers)(void *character, const srv_character_trackers_t *trackers, double ahead, int apply, char *err,
                      int errlen);
  /* Loop: MODE_PHYSICAL's requests (NULL for every other kind). With apply
   * 0 only checks the request against the character (bones of its
   * skeleton, room for a pending push): 0, or a code with err naming the
   * field ("push.bone = ..."); with apply 1 takes it. delay: ticks after
   * the next one at which a push applies. */
  int (*push)(void *character, const srv_push_request_t *push, uint64_t delay, int apply, char *err, int errlen);
  int (*set_body_modes)(void *character, const srv_set_body_modes_request_t *modes, int apply, char *err, int errlen);
  void (*recover)(void *character);
  /* Loop: character_state (with offsets when asked); 0 or a code. */
  int (*state)(const void *character, int offsets, srv_response_t *out);
  /* Pool, after the tick: the motion-matching controller whose record and
   * keyframe the replicated encoding sends (stream_replica.h); NULL (the
   * hook or its answer): the character goes as quantized poses. */
  const anim_controller_t *(*replica)(const void *character);
  /* Loop: the motion-matching controller the character is, for the
   * debugger's history and parameter requests (service_history.c); NULL
   * for kinds that are not one. */
  anim_controller_t *(*controller)(void *character);
  /* Loop: set_character_params and character_state for a kind that is not
   * a controller but takes some of its parameters (graph: the warps;
   * learned: the play rate, projections, springs; NULL: neither).
   * get_params: its parameters as a controller's read (those it uses, the
   * defaults elsewhere). set_params: takes next (the request's fields
   * merged over get_params' by the service), or refuses a field it does
   * not take that next changes: a code with err naming it ("no_play_rate:
   * ..."), nothing applied. */
  void (*get_params)(const void *character, anim_controller_params_t *out_params);
  int (*set_params)(void *character, const anim_controller_params_t *next, char *err, int errlen);
} srv_actor_kind_t;

struct srv_actor {
  const srv_actor_kind_t *kind;
  void *character;        /* the kind's character (after this struct) */
  uint64_t id;
  uint64_t owner;         /* connection id */
  srv_db_entry_t *entry;  /* a reference */
  uint32_t want;          /* SRV_WANT_* for this tick, set in the crowd's prepare hook */
  int chunk;              /* the chunk (simulation job) ticking it this tick; -1 until its first tick */
  /* This tick's level of detail (crowd.c sets lod-search-scale, the streams
   * 1 for a character streamed at full rate): its kind searches
   * periodically this many times less often, and over 1 a motion-matching
   * character skips foot locking (actor_matching.c). Global positions are
   * computed only in a tick a subscription that asks for them fires
   * (SRV_WANT_GLOBAL), whatever the level. */
  uint32_t lod_scale;
  srv_actor_pose_t pose;  /* after the last tick */
  uint8_t *quantized;     /* pose record, ENCODING_QUANTIZED (full layout; rotations_only is its prefix) */
  size_t bytes;           /* srv_crowd_actor_bytes when the crowd last measured it (its share of crowd->bytes) */
  int doomed;             /* destroyed during a tick: freed after it */
  int error;              /* the last tick failed for this actor (logged once) */
  /* The replica records of its last SRV_ACTOR_RECORDS ticks, a ring by the
   * controller's tick count (stream_replica.h: a replicated region sends a
   * character of a band that skips ticks all the ticks since its last
   * record). NULL until a replicated region subscription is made while
   * the character lives, or first sees it (allocated then on the loop,
   * kept for its life: 960 bytes). */
  struct srv_actor_tick_record *records;
};

/* One tick's replica record in an actor's ring. */
typedef struct srv_actor_tick_record {
  uint32_t ticks;                  /* the controller's tick count after it, its low 32 bits (0: an empty slot) */
  float dt;                        /* s, the tick's */
  anim_controller_record_t record;
} srv_actor_tick_record_t;
/* 20: a region's 4 Hz band at 60 Hz skips 14 ticks, and a character moving
 * from a band of divisor 4 to one of 15 waits at most 18 (a longer gap is
 * sent as a keyframe). */
#define SRV_ACTOR_RECORDS 20

#define SRV_ACTOR_DECLARE(MODE, name) extern const srv_actor_kind_t srv_actor_##name;
SRV_ACTOR_KINDS(SRV_ACTOR_DECLARE)
#undef SRV_ACTOR_DECLARE

/* The kind of a proto CharacterMode value, or NULL. */
const srv_actor_kind_t *srv_actor_kind_for(int mode);
/* The proto CharacterMode value of a kind (-1: not a kind of the table). */
int srv_actor_kind_mode(const srv_actor_kind_t *kind);

/* character_state's simulation (position, velocity, rotation, angular
 * velocity, desired velocity and rotation) from a kind's steering. */
void srv_actor_state_sim(const anim_steering_sim_t *sim, srv_response_t *out);

/* character_state's feet (toe bone, planted or stepping, where it is held)
 * from a kind's foot locks. */
void srv_actor_state_feet(const anim_foot_locks_t *feet, srv_response_t *out);

/* character_state's inertializer from a kind's: the anchor, and with
 * offsets the per-bone offsets (copied into the response). 0 or ANIM_ENOMEM. */
int srv_actor_state_inertializer(const anim_inertializer_t *inertializer, int offsets, srv_response_t *out);

/* After an actor's tick (pool): its kind's report, a root past the world's
 * limit brought back onto it (the kind's translate), then the pose record
 * the streams read (quantized bytes, when wanted), made at once while the
 * pose is still in cache. Kinds call it from simulate for each actor. */
void srv_actor_report(srv_actor_t *actor);

/* After an actor's tick of dt seconds (pool, once its kind's simulate
 * returned): its replica record into its ring, when it has one. */
void srv_actor_keep_record(srv_actor_t *actor, float dt);

#endif
