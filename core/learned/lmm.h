/*
 * lmm.h: learned motion matching: a character driven by three small networks
 * instead of a database (the projector replaces the search, the stepper
 * playing the next frame, the decompressor the pose lookup).
 *
 * What the networks are (learnt from the public reference implementation,
 * orangeduck/Motion-Matching: lmm.h, nnet.h, controller.cpp, database.h,
 * character.h, resources/generate_database.py, train_decompressor.py,
 * train_stepper.py, train_projector.py; read, not copied):
 *
 * Skeleton: 23 bones, LaFAN1's 22 (subject 5's walk, run and a short idle,
 * each also mirrored left/right, resampled to 60 Hz and sped up by 10%)
 * below an added root, the "simulation bone": the Spine2 position projected
 * on the ground and smoothed (Savitzky-Golay, 31 frames), facing the Hips'
 * local +Y axis projected on the ground and smoothed (61 frames). Order and
 * parents:
 *   0 Simulation(-1)  1 Hips(0)  2 LeftUpLeg(1)  3 LeftLeg(2)  4 LeftFoot(3)
 *   5 LeftToe(4)  6 RightUpLeg(1)  7 RightLeg(6)  8 RightFoot(7)  9 RightToe(8)
 *   10 Spine(1)  11 Spine1(10)  12 Spine2(11)  13 Neck(12)  14 Head(13)
 *   15 LeftShoulder(12)  16 LeftArm(15)  17 LeftForeArm(16)  18 LeftHand(17)
 *   19 RightShoulder(12)  20 RightArm(19)  21 RightForeArm(20)  22 RightHand(21)
 * Metres, seconds, radians, Y up, character facing +Z; quaternions (w,x,y,z).
 * Local velocities are central differences at 60 Hz; local angular
 * velocities are those of the local rotations, about the parent's axes.
 * Contacts: LeftToe and RightToe, on when the toe's world speed was under
 * 0.15 m/s (median filtered over 6 frames).
 *
 * Features x (27 floats, each group normalized as (raw - offset) / scale,
 * offset the per-dimension mean over the database, scale the group's mean
 * per-dimension standard deviation divided by the group's weight):
 *   0-2   LeftFoot position   in the root's frame (m)    weight 0.75
 *   3-5   RightFoot position  in the root's frame (m)    weight 0.75
 *   6-8   LeftFoot velocity   in the root's frame (m/s)  weight 1
 *   9-11  RightFoot velocity  in the root's frame (m/s)  weight 1
 *   12-14 Hips velocity       in the root's frame (m/s)  weight 1
 *   15-20 root position 20, 40, 60 frames ahead, (x, z) in the root's frame now (m)  weight 1
 *   21-26 root facing (+Z) 20, 40, 60 frames ahead, (x, z) in the root's frame now    weight 1.5
 * ("in the root's frame": rotated by the inverse root rotation; velocities
 * are world velocities of the bone, root motion included, so rotated.) The
 * offsets and scales were not published with the networks:
 * anim_lmm_normalization_recovered holds what tools/lmm_recover.c recovers
 * from the networks themselves.
 * A consequence of the weights, visible in the files: the projector's output
 * std over each group's dimensions averages exactly the group's weight.
 *
 * Latent z: 32 floats from the compressor (not shipped), roughly zero-mean.
 *
 * Networks (file format: nnet.h; each file carries its own input and output
 * normalization, applied inside the evaluation):
 *   projector    27 -> 512 x4 -> 59: a normalized query x^ -> (x, z), the
 *                nearest database frame's features and latent;
 *   stepper      59 -> 512 x2 -> 59: (x, z) -> (dx/dt, dz/dt); one frame is
 *                (x, z) += dt * output, dt = 1/60 s;
 *   decompressor 59 -> 512 -> 338: (x, z) -> the pose, laid out as
 *     [0, 66)    local positions of bones 1..22 (m; bones 2..22 have output
 *                std 0: constant bone offsets, the output mean);
 *     [66, 198)  local rotations of bones 1..22 as the first two columns of
 *                the rotation matrix, six floats per bone in row-major
 *                order of the 3x2 block: m00 m01 m10 m11 m20 m21 (column
 *                x = (m00, m10, m20), column y = (m01, m11, m21)); the
 *                rotation is rebuilt by Gram-Schmidt (x normalized, z = x
 *                cross y normalized, y = z cross x);
 *     [198, 264) local velocities of bones 1..22 (m/s);
 *     [264, 330) local angular velocities of bones 1..22 (rad/s);
 *     [330, 333) root velocity in the root's own frame (m/s);
 *     [333, 336) root angular velocity in the root's own frame (rad/s);
 *     [336, 338) contacts, LeftToe and RightToe, on above 0.5.
 *   The decompressor's input normalization is the identity: it takes the
 *   normalized features and the latent as they are.
 *
 * How the reference controller uses them, per 60 Hz frame: the query is the
 * current features' foot and hip groups (already normalized) with the
 * trajectory groups computed from the predicted trajectory (springs, as in
 * motion matching) relative to the displayed root and normalized; every
 * search interval or when the input changes quickly, the projector maps it
 * to (x, z); if (x, z) differs from the current state the pose decompressed
 * from it becomes the destination of an inertialized transition and (x, z)
 * the current state; then every frame the stepper advances the state, the
 * decompressor gives the pose, and the root integrates the decompressed root
 * velocities: position += dt * R v, rotation = exp(dt R w) R, with R the
 * root rotation before the step.
 *
 * What this module does with them: the same, for a character of this
 * project. A learned character takes the inputs of controller.h (stick,
 * velocity, goal; the same smoothing) and predicts its trajectory with the
 * same springs (steering.h); it projects every params.search_interval frames
 * and when the smoothed desired velocity has moved more than
 * params.replan_threshold since the last projection; it steps every tick
 * (in 1/60 s substeps when a tick is longer), decompresses, integrates its
 * root (yaw only, on the ground: the simulation bone never tilts or leaves
 * the ground) and hides each projection's jump with the inertializer of
 * inertialize.h, its root anchored where it is shown. The simulation
 * follows the shown root, as the database controller's does. Characters of
 * one tick run as a batch: one projector product (the characters that
 * project), one stepper product per substep, and one decompressor product
 * (every character's new state plus the projected states that start a
 * transition) per tick.
 *
 * Feet (issue 30): the decompressor's contact outputs are read with
 * hysteresis (a contact comes on above ANIM_LMM_CONTACT_ON, goes off below
 * ANIM_LMM_CONTACT_OFF: the outputs regress 0/1 flags and hover around 0.5
 * for a frame or two at each change). With anim_lmm_character_feet, those
 * flags drive the foot locking of motion matching (foot_lock.h, on the
 * ground): a toe flagged in contact plants where it is shown once it is
 * down, is held there by two-bone IK and is released smoothly when the
 * flag goes off, or steps to re-plant when the pose moves on more than
 * params.foot_lock.unlock_radius without it. The legs, knee hinges and planting
 * heights come from the learned skeleton's database
 * (offline/lmm_database.h), as for a database character.
 *
 * Not here: the server's requests and streams.
 *
 * Ownership: anim_lmm_networks_t is built once, immutable, shared read-only
 * by every character and thread. A character is a plain struct with fixed
 * arrays (no allocation at all); ticks use caller-owned scratch.
 */
#ifndef ANIM_LMM_H
#define ANIM_LMM_H

#include <stddef.h>
#include <stdint.h>
#include "math/anim_math.h"
#include "pose/clip.h"
#include "character/controller.h"
#include "character/foot_lock.h"
#include "motion/dynamics.h"
#include "motion/inertialize.h"
#include "learned/nnet.h"
#include "database/database.h"

typedef struct anim_lmm_networks anim_lmm_networks_t;

#define ANIM_LMM_BONES 23
#define ANIM_LMM_FEATURES 27
#define ANIM_LMM_MAX_STATE 64      /* features + latent (27 + 32 for the shipped networks and tools/lmm_train's default) */
#define ANIM_LMM_MAX_BONES 64      /* bones of a database's networks (lmm_train.md) */
#define ANIM_LMM_MAX_FEATURES ANIM_MAX_FEATURE_DIMS
#define ANIM_LMM_CONTACTS 2
#define ANIM_LMM_POSE_OUTPUTS (15 * (ANIM_LMM_BONES - 1) + 6 + ANIM_LMM_CONTACTS) /* 338 */
#define ANIM_LMM_TRAJECTORY 3      /* samples 20, 40, 60 frames ahead */
#define ANIM_LMM_FRAME_RATE 60.0f  /* the networks' frame rate (Hz) */

/* Contact hysteresis on the decompressor's contact outputs (see above). */
#define ANIM_LMM_CONTACT_ON 0.6f
#define ANIM_LMM_CONTACT_OFF 0.4f

/* Bones named in the features and contacts. */
enum {
  ANIM_LMM_HIPS = 1,
  ANIM_LMM_LEFT_FOOT = 4,
  ANIM_LMM_LEFT_TOE = 5,
  ANIM_LMM_RIGHT_FOOT = 8,
  ANIM_LMM_RIGHT_TOE = 9
};

/* Feature groups (first column, width, weight), in feature order. */
#define ANIM_LMM_GROUPS 7
typedef struct {
  const char *name;
  int first, count;
  float weight;
} anim_lmm_group_t;
extern const anim_lmm_group_t anim_lmm_groups[ANIM_LMM_GROUPS];

/* The features' normalization: normalized = (raw - offset) / scale.
 * networks_hash: anim_lmm_networks_hash of the networks it belongs to; 0
 * means "any" (a tool measuring raw features passes such a placeholder). */
typedef struct {
  float offset[ANIM_LMM_MAX_FEATURES]; /* the shipped networks use the first ANIM_LMM_FEATURES */
  float scale[ANIM_LMM_MAX_FEATURES];
  uint64_t networks_hash;
} anim_lmm_normalization_t;

/* One trajectory term of the features: columns first .. first + 2 nsamples,
 * (x, z) per sample, `times` seconds ahead; position (m) or facing (+Z). */
typedef struct {
  int first, nsamples, direction;
  float times[ANIM_MAX_TRAJECTORY_SAMPLES];
} anim_lmm_trajectory_term_t;

/* What tools/lmm_recover recovered from the shipped networks
 * (core/learned/lmm_normalization.c, generated; README "Learned motion matching"). */
extern const anim_lmm_normalization_t anim_lmm_normalization_recovered;

/* The three networks, checked to fit together, with the skeleton and the
 * normalization. Two kinds: the shipped reference networks (the fixed
 * 23-bone skeleton and 27 features above: anim_lmm_networks_create), and
 * networks trained on a database by tools/lmm_train (docs/lmm_train.md:
 * anim_lmm_networks_create_for), whose skeleton, contact bones, features
 * (the database's schema and normalization) and frame rate are the
 * database's; the pose layout is the one above for nbones bones and
 * ncontacts contacts. Validity rules for the reference (anim_lmm_networks_check):
 *  1. projector: 27 inputs (the features), S outputs, 27 < S <= ANIM_LMM_MAX_STATE
 *     (features then latent);
 *  2. stepper: S inputs and S outputs;
 *  3. decompressor: S inputs, ANIM_LMM_POSE_OUTPUTS outputs (23 bones, 2 contacts);
 *  4. the normalization's scales are finite and > 0, offsets finite, and its
 *     networks_hash is 0 or these networks' hash. */
struct anim_lmm_networks {
  anim_nnet_t *projector, *stepper; /* owned */
  /* The full decompressor: NULL once the networks are created. Characters
   * run pose_network, its trimmed copy; keeping both made the server hold
   * 10.9% of Bandai Namco's memory instead of 8.5% (docs/lmm_train.md), and
   * what else reads the file (bench_lmm, tests) loads it itself. */
  anim_nnet_t *decompressor;
  /* Layout: ANIM_LMM_BONES, ANIM_LMM_FEATURES, ANIM_LMM_CONTACTS, 60 Hz and
   * the two trajectory terms of columns 15..26 for the reference. */
  int nbones, nfeatures, ncontacts, npose; /* npose: decompressor outputs, 15 (nbones - 1) + 6 + ncontacts */
  int contact_bones[ANIM_MAX_CONTACTS];
  float frame_rate;                        /* Hz: the stepper's frame */
  int ntrajectory;                         /* trajectory terms (the query's columns from the steering) */
  anim_lmm_trajectory_term_t trajectory[ANIM_MAX_FEATURE_TERMS];
  char database[ANIM_NAME_MAX];            /* the database trained on; "" for the reference */
  /* The decompressor without the outputs decoding replaces by constants
   * (positions and velocities of the constant bones: 126 of 338 columns,
   * a third of its work): what characters run (owned). */
  anim_nnet_t *pose_network;
  int16_t pose_column[15 * (ANIM_LMM_MAX_BONES - 1) + 6 + ANIM_MAX_CONTACTS]; /* decompressor output -> pose_network column, -1: not computed */
  int nstate;                                       /* S */
  anim_lmm_normalization_t normalization;
  anim_skeleton_t skeleton; /* names, parents; offsets: the decompressor's mean bone positions */
  uint64_t constant_bones;  /* bit b: bone b's position output has std < ANIM_LMM_CONSTANT_BONE_STD */
  uint64_t hash;            /* anim_lmm_networks_hash */
  /* The data's gaits for the play rate (anim_warp_gaits of the database
   * trained on, m/s; 0 for the reference networks, which then only play
   * slower than their data, never faster). */
  float fastest, slowest_gait;
};

/* A bone whose position varies less than this (m, the decompressor's output
 * std) is a constant offset: every bone but the root and the Hips. */
#define ANIM_LMM_CONSTANT_BONE_STD 1e-3f

/* The identity of three networks: a hash of their files' hashes. */
uint64_t anim_lmm_networks_hash(const anim_nnet_t *projector, const anim_nnet_t *stepper,
                                const anim_nnet_t *decompressor);

/* 0 when rules 1-3 hold (and 4 when normalization is not NULL), else
 * ANIM_EFORMAT with a message naming the mismatch. */
int anim_lmm_networks_check(const anim_nnet_t *projector, const anim_nnet_t *stepper, const anim_nnet_t *decompressor,
                            const anim_lmm_normalization_t *normalization, char *err, int errlen);

/* Builds the shared form from three loaded networks, taking ownership of
 * them on success only (the decompressor is freed then, once its trimmed
 * copy pose_network is made: nets->decompressor is NULL). normalization NULL: anim_lmm_normalization_recovered.
 * NULL on failure (code in *out_code: ANIM_EFORMAT, ANIM_EINVAL, ANIM_ENOMEM)
 * with a message. Free with anim_lmm_networks_free. */
anim_lmm_networks_t *anim_lmm_networks_create(anim_nnet_t *projector, anim_nnet_t *stepper, anim_nnet_t *decompressor,
                                              const anim_lmm_normalization_t *normalization, int *out_code, char *err,
                                              int errlen);
/* Loads dir/projector.bin, dir/stepper.bin, dir/decompressor.bin and creates. */
anim_lmm_networks_t *anim_lmm_networks_load(const char *dir, const anim_lmm_normalization_t *normalization,
                                            int *out_code, char *err, int errlen);

/* Networks trained on db (tools/lmm_train): the layout comes from db (its
 * skeleton of at most ANIM_LMM_MAX_BONES bones, contact bones, feature
 * schema, offsets and scales, frame rate). Refused with ANIM_EFORMAT and a
 * message naming the mismatch when the projector does not take db's
 * feature count, the three do not share one state size, or the
 * decompressor's outputs are not db's bones and contacts; ANIM_EINVAL when
 * db has no features or contacts, or too many bones. Takes ownership of the
 * networks on success only (the decompressor freed as above); db may be freed afterwards (what is kept is
 * copied). Free with anim_lmm_networks_free. */
anim_lmm_networks_t *anim_lmm_networks_create_for(anim_nnet_t *projector, anim_nnet_t *stepper,
                                                  anim_nnet_t *decompressor, const anim_database_t *db,
                                                  int *out_code, char *err, int errlen);
/* Loads dir's three files and anim_lmm_networks_create_for(db): all three or none. */
anim_lmm_networks_t *anim_lmm_networks_load_for(const char *dir, const anim_database_t *db, int *out_code, char *err,
                                                int errlen);
void anim_lmm_networks_free(anim_lmm_networks_t *nets);
/* Bytes the shared networks hold (weights, normalizations, skeleton): the
 * projector, the stepper and the trimmed decompressor. */
size_t anim_lmm_networks_memory(const anim_lmm_networks_t *nets);

/* ---- poses and features ------------------------------------------------------------------ */

/* A pose of the learned skeleton: bone 0 the root (animation space or world,
 * as the owner says), the others local to their parent. */
typedef struct {
  vec3 positions[ANIM_LMM_MAX_BONES];
  quat rotations[ANIM_LMM_MAX_BONES];
  vec3 velocities[ANIM_LMM_MAX_BONES];
  vec3 angular_velocities[ANIM_LMM_MAX_BONES];
} anim_lmm_pose_t;

/* Decodes one output row: bones 1..22 of out_pose (bone 0 left as it was),
 * the root's velocity and angular velocity in its own frame, and the two
 * contact outputs (on above 0.5). Without nets, row holds the
 * decompressor's 338 outputs. With nets, row holds nets->pose_network's
 * outputs, and the bones whose position the decompressor holds constant
 * (nets->constant_bones) take the skeleton's offset and zero velocity (the
 * decompressor's output varies around them by a fraction of a millimetre,
 * the mirrored training data's rounding): bone lengths are then exactly
 * constant. Any out_ may be NULL but out_pose. */
void anim_lmm_decode(const float *row, const anim_lmm_networks_t *nets, anim_lmm_pose_t *out_pose,
                     vec3 *out_root_velocity, vec3 *out_root_angular_velocity, float *out_contacts);

/* Raw (metres, m/s) features 0..14 of a decoded pose: bones 1..22 of pose,
 * the root at the origin facing +Z moving at root_velocity with
 * root_angular_velocity (its own frame, as decoded). */
void anim_lmm_pose_features(float *out_raw, const anim_lmm_pose_t *pose, vec3 root_velocity,
                            vec3 root_angular_velocity);

/* Raw trajectory features 15..26 (out_raw[0..12)): the root's positions and
 * facings at the three samples ahead, relative to the root now. */
void anim_lmm_trajectory_features(float *out_raw, vec3 root_position, quat root_rotation, const vec3 *positions,
                                  const quat *rotations);

/* out[j] = (raw[j] - offset[first + j]) / scale[first + j] for count columns. */
void anim_lmm_normalize(const anim_lmm_normalization_t *normalization, const float *raw, float *out, int first,
                        int count);

/* ---- the learned character ----------------------------------------------------------------- */

/* anim_controller_params_default with the learned defaults: a projection
 * every 6 frames (the reference's 0.1 s); foot locking on (it takes effect
 * once anim_lmm_character_feet gave the character its legs). */
void anim_lmm_params_default(anim_controller_params_t *out_params);

typedef struct {
  const anim_lmm_networks_t *nets;
  /* search_interval: frames between projections; transition_cost: the
   * feature distance a projection must exceed to be taken; foot_lock,
   * foot_unlock_radius, foot_release_halflife: the feet's locking (with
   * anim_lmm_character_feet); warp.rate, warp.rate_min, warp.rate_max:
   * the play rate, as a motion-matching character's; ignore_* and the
   * other warps (standing, orientation, stride, steering: they bend a
   * database's frames) are not used. */
  anim_controller_params_t params;
  anim_controller_input_t input;

  anim_steering_sim_t sim; /* as controller.h's */
  vec3 velocity_at_last_projection;

  /* Learned state: normalized features then latent (nets->nstate floats). */
  float state[ANIM_LMM_MAX_STATE];
  float time_since_projection; /* s */
  int tick_row;                /* during a batch tick: row of this character's query, -1 none */
  int tick_destination;        /* during a batch tick: decompressor row of its transition's destination, -1 none */
  float contact_values[ANIM_MAX_CONTACTS]; /* the decompressor's contact outputs, last tick (nets->ncontacts) */
  uint8_t contacts[ANIM_MAX_CONTACTS];     /* those outputs through the hysteresis: the data's flags */
  uint8_t transitioned;        /* the last tick started a transition */
  uint8_t globals_fresh;
  uint32_t ticks, projections, transitions;

  /* Predicted trajectory at the last projection (world), at the times of
   * the networks' first trajectory term (ntrajectory samples). */
  int ntrajectory;
  vec3 trajectory_positions[ANIM_MAX_TRAJECTORY_SAMPLES];

  /* Inertialization: anchored root; its offsets per bone are with the pose buffers. */
  anim_inertializer_t inertializer;

  /* Foot locking: nfeet 0 until anim_lmm_character_feet; foot_contact[s]
   * is the contact output of feet.feet[s]. */
  anim_foot_locks_t feet;
  uint8_t foot_contact[ANIM_MAX_CONTACTS];

  /* Play rate (animation warping's, warp.h; params.warp.rate, rate_min,
   * rate_max): the state and root advance rate * dt a tick, so that the
   * clip's speed (root_speed: m/s, the decoded root's, last tick, before
   * the rate) times the rate is the asked speed. rate: shown; query_rate:
   * the projection query's trajectory positions are scaled by 1 / query_rate
   * (to the speed the data has, so that the clip playing keeps matching). */
  float rate, rate_target, query_rate, root_speed;

  /* Pose buffers (everything from here on): the inertializer's offsets, the poses. */
  vec3 offset_positions[ANIM_LMM_MAX_BONES], offset_velocities[ANIM_LMM_MAX_BONES];
  vec3 offset_angular_velocities[ANIM_LMM_MAX_BONES];
  quat offset_rotations[ANIM_LMM_MAX_BONES];
  anim_lmm_pose_t decoded; /* the decompressed pose, root in animation space (the inertializer's input) */
  anim_lmm_pose_t pose;  /* the displayed pose, root in world space */
  vec3 global_positions[ANIM_LMM_MAX_BONES];
  quat global_rotations[ANIM_LMM_MAX_BONES];
} anim_lmm_character_t;

/* Bytes of a character's state besides its pose buffers. */
#define ANIM_LMM_STATE_BYTES offsetof(anim_lmm_character_t, offset_positions)

/* Floats of scratch a batch tick (or init) of up to n characters needs. */
size_t anim_lmm_scratch_floats(const anim_lmm_networks_t *nets, int n);

/* Sets up a character at world position (y ignored) facing `facing`
 * radians (about +Y, 0 faces +Z), standing: its state is the projection of
 * a query at rest. params NULL: anim_lmm_params_default. scratch:
 * anim_lmm_scratch_floats(nets, 1). 0, ANIM_EINVAL (params, NULL nets,
 * non-finite position). nets must outlive it; nothing to free. */
int anim_lmm_character_init(anim_lmm_character_t *out_character, const anim_lmm_networks_t *nets,
                            const anim_controller_params_t *params, vec3 position, float facing, float *scratch);

/* Gives a character (set up by anim_lmm_character_init) its feet's
 * locking, when its params.foot_lock.enabled is on: the legs of db's contact bones
 * (db: the learned skeleton's database, anim_lmm_database), their knee
 * hinges and planting heights, planted on the ground (the pelvis coming
 * down at most ANIM_FOOT_MAX_DROP). 0 (also when foot_lock is off: nothing
 * changes), or ANIM_EINVAL (NULL arguments; db not of the learned skeleton:
 * other parents, or contact bones other than the two toes). Nothing to free. */
int anim_lmm_character_feet(anim_lmm_character_t *character, const anim_database_t *db);

/* The contacts shown (bit k: contact k of the networks; for the reference bit 0 LeftToe, bit 1 RightToe): with locked feet the
 * feet shown planted (anim_foot_locks_contacts), else the data's flags. */
uint32_t anim_lmm_contacts(const anim_lmm_character_t *character);

/* Live parameters (set_character_params): validated
 * (anim_controller_params_validate), then taken whole from the next tick,
 * foot_lock kept as init set it. 0 or the validation's code; nothing
 * changed then. */
int anim_lmm_set_params(anim_lmm_character_t *character, const anim_controller_params_t *params);

/* Validates (anim_controller_input_validate), then sets the input. */
int anim_lmm_set_input(anim_lmm_character_t *character, const anim_controller_input_t *input);

/* Advances n characters (all on the same networks) by dt seconds (0 < dt
 * <= 1 s): projections, steps, decompression, root, inertialization,
 * simulation. scratch: anim_lmm_scratch_floats(nets, n). 0, ANIM_EINVAL
 * (dt, n < 0, characters on different networks); characters unchanged then. */
int anim_lmm_tick_batch(anim_lmm_character_t *const *characters, int n, float dt, float *scratch);
/* One character: anim_lmm_tick_batch of one. */
int anim_lmm_tick(anim_lmm_character_t *character, float dt, float *scratch);

/* Delays the periodic projection by `frames` (spreads a crowd's projections
 * over the frames of an interval). */
void anim_lmm_stagger(anim_lmm_character_t *character, int frames);

/* Moves the character by step (m, world) as if it had always been there
 * (anim_controller_translate's rule): simulation and trajectory on the
 * ground, anchor and displayed root; a goal stays. */
void anim_lmm_translate(anim_lmm_character_t *character, vec3 step);

/* Fills global_positions/global_rotations from the displayed pose (once a
 * tick: later calls find them there). */
void anim_lmm_global_pose(anim_lmm_character_t *character);

#endif
