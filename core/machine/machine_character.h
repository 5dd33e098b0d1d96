/*
 * machine_character.h: a character driven by an action state machine
 * (state_machine.h), ticked at any step.
 *
 * Each tick: queued events are dispatched in the order they came (each to
 * the innermost active machine whose current state has a transition for it,
 * else up; an event nobody takes is dropped and counted); then transitions
 * that fall due inside the tick are taken in time order: END when the
 * playing motion reaches its end, held events at their exit time, AUTO
 * transitions; at most the machine's max_transitions in one tick (events
 * left over wait in the queue, due transitions for the next tick). Then the
 * motion advances by dt and the displayed pose is that motion's pose plus
 * the decaying inertialization offsets of the last transitions
 * (inertialize.h, each transition's own half-life), its root moving in the
 * world by the motion's own root motion.
 *
 * Timing is exact to the instant, not the tick: a transition that falls due
 * part-way through a tick starts the next state at that instant, so the new
 * state has played the rest of the tick (END after a clip of N frames at
 * rate r comes (N - 1) / r seconds after the state was entered, whatever dt).
 * The pose jumps from the one shown at the start of the tick, so what the
 * old motion would have shown in the part of the tick before the instant is
 * not shown. END fires at the instant the motion's time would pass its last
 * frame: the last frame is shown once, at its own time.
 *
 * Motions: clip and tag playback sample the database between frames (lerp
 * and shortest-way slerp), root in the clip's space; a looping clip that no
 * END transition leaves restarts, inertialized; an ended clip that nothing
 * leaves holds its last frame (END is not fired again). A blend integrates
 * its blended root velocity and turning rate in its own space. A match state
 * runs an embedded motion-matching controller (controller.h), whose searches
 * are restricted to the state's tags, placed where the character is when
 * the state is entered, starting at the tagged frame nearest in feature
 * space to what was playing; its displayed pose (root in the world) is this
 * character's input. Only characters whose machine has a match state carry
 * the controller (and need the search index).
 *
 * The machine, database and index are shared and read-only; a character
 * allocates its arrays in anim_machine_character_init and nothing per tick.
 *
 * Validity (anim_machine_character_init): the machine is bound to this
 * database (its version); the index is given when the machine has a match
 * state, and the database has a feature schema with trajectory terms.
 */
#ifndef ANIM_MACHINE_CHARACTER_H
#define ANIM_MACHINE_CHARACTER_H

#include <stdint.h>
#include "character/controller.h"
#include "database/database.h"
#include "motion/inertialize.h"
#include "search/search.h"
#include "machine/state_machine.h"

#define ANIM_MACHINE_QUEUE 32 /* events waiting for a tick */

typedef struct {
  int state;       /* index in machine->states */
  float time;      /* s in this state */
  int held;        /* transition held until its exit time, or -1 */
} anim_machine_level_t;

typedef struct {
  size_t count;
  vec3 *positions, *velocities, *angular_velocities;
  quat *rotations;
} anim_machine_pose_t;

typedef struct anim_machine_character {
  const anim_state_machine_t *machine;
  const anim_database_t *db;
  const anim_search_index_t *index;

  int depth;                              /* active machines, root first */
  anim_machine_level_t levels[ANIM_SM_MAX_DEPTH];
  float params[ANIM_SM_MAX_PARAMS];
  int queue[ANIM_MACHINE_QUEUE];
  int queue_head, queue_count;

  /* The playing motion (the innermost state's). */
  int start, stop;                        /* CLIP, TAG: frames played */
  int loop;
  float motion_time;                      /* s from the clip's start, or the blend's phase (0..1) */
  int ended;                              /* held its last frame: END will not fire again */
  float blend_period;                     /* s, this tick's blended cycle */
  vec3 blend_root_position;               /* BLEND: integrated root, its own space */
  quat blend_root_rotation;
  int *tag_cursor;                        /* per state: next range a TAG state plays */

  anim_controller_t matcher;               /* MATCH states (machine->has_match) */
  anim_controller_input_t input;
  void *search_scratch;

  /* Poses: the motion's input (buffers 0 and 1, swapped at each transition;
   * 2 is scratch for blends), the displayed one (bone 0 in the world) and its
   * inertialization offsets. */
  anim_machine_pose_t input_pose[3];
  int current;
  anim_machine_pose_t pose;
  vec3 *global_positions;
  quat *global_rotations;
  int globals_fresh;
  anim_inertializer_t inertializer;
  vec3 *offset_positions, *offset_velocities, *offset_angular_velocities;
  quat *offset_rotations;
  float halflife;                         /* of the last transition, s */

  uint64_t ticks, transitions, events_dropped;
  int changed;                            /* the state path changed in the last tick */
  void *memory;
} anim_machine_character_t;

/* Sets up a character running machine (bound to db) from its initial
 * states, its root at position (y ignored) facing `facing` radians.
 * controller_params: for match states (NULL: defaults). index: required
 * when machine->has_match. 0, ANIM_EINVAL (not bound to db, missing index or
 * trajectory features, bad params), ANIM_ENONFINITE, ANIM_ENOMEM. Free with
 * anim_machine_character_free. machine, db and index must outlive it. */
int anim_machine_character_init(anim_machine_character_t *out_character, const anim_state_machine_t *machine,
                                const anim_database_t *db, const anim_search_index_t *index,
                                const anim_controller_params_t *controller_params, vec3 position, float facing);
void anim_machine_character_free(anim_machine_character_t *character);

/* Queues event (an index in machine->events) for the next tick. 0,
 * ANIM_ERANGE (no such event), ANIM_ELIMIT (ANIM_MACHINE_QUEUE waiting). */
int anim_machine_character_send(anim_machine_character_t *character, int event);
/* The same by name; ANIM_ENOTFOUND for a name the machine does not use. */
int anim_machine_character_send_name(anim_machine_character_t *character, const char *event);

/* Sets parameter param (index in machine->params). 0, ANIM_ERANGE,
 * ANIM_ENONFINITE. Takes effect from the next tick. */
int anim_machine_character_set_param(anim_machine_character_t *character, int param, float value);

/* The input match states follow (controller.h); validated. It holds until
 * changed, whether a match state is active or not. */
int anim_machine_character_set_input(anim_machine_character_t *character, const anim_controller_input_t *input);

/* Moves the character by step (m, world) as if it had always been there:
 * the anchor and displayed root, and in a match state its controller
 * (anim_controller_translate) with the input it feeds. For a caller that
 * keeps characters in a bounded world (core/pose/world.h). */
void anim_machine_character_translate(anim_machine_character_t *character, vec3 step);

/* Advances by dt seconds (> 0, finite). 0 or ANIM_EINVAL. */
int anim_machine_character_tick(anim_machine_character_t *character, float dt);

/* The active state path, root first: writes up to max state indices (in
 * machine->states) and times in state (s) and returns the depth. */
int anim_machine_character_path(const anim_machine_character_t *character, int *out_states, float *out_times, int max);

/* The database frame nearest to what plays now (the innermost state's
 * motion; a blend's heavier clip), or -1 before the first tick. */
int anim_machine_character_frame(const anim_machine_character_t *character);

/* Fills global_positions/global_rotations from the displayed pose (once a
 * tick). */
void anim_machine_character_global_pose(anim_machine_character_t *character);

#endif
