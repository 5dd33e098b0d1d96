/*
 * warp.h: animation warping of a motion-matching character (issue 34):
 * what the search found, bent to meet the asked speed, direction and stop
 * where the data has no clip that does.
 *
 * Three warps, each on or off per character (anim_warp_params_t, inside
 * the controller's parameters):
 *
 *  - play rate: the clip plays at rate r in [rate_min, rate_max] (0.6-1.4
 *    by default) so that its root speed (its travel over the next second of
 *    the clip, anim_warp_data_speed) times r is the asked speed. Frames are
 *    played at fractional times, the pose interpolated between the two
 *    frames around it (velocities scaled by r), so a rate never stutters.
 *    The search knows the rate: while the clip playing can meet the asked
 *    speed within the bounds, the query's trajectory positions are scaled
 *    by 1/r (the speed the clip has in the data), so that clip keeps
 *    matching and a walk asked between two of the data's walks is one clip
 *    at the right rate, not the two alternating. Out of the bounds the
 *    query is unscaled and the search picks the nearest gait, whose rate
 *    then follows. Feet stay planted: foot locking (foot_lock.h) holds
 *    the displayed contacts whatever the rate, and the root moves by the
 *    clip's own motion, so a faster clip's stride is the data's stride.
 *  - standing: asked to stand while the data playing still travels (data
 *    with no still pose to find: Bandai Namco, the CMU sets), the play rate
 *    is brought down to zero (a settle factor with a half-life of
 *    SETTLE_HALFLIFE) once the simulation has slowed under SETTLE_SPEED,
 *    first waiting up to SETTLE_WAIT for both feet to be down in the data,
 *    and held only with both down (on one foot the clip goes on at
 *    SETTLE_FLOOR of its rate to the next double support): a stance, not
 *    a stride frozen on one leg; the pose is then held and no
 *    search runs until the character is asked to move. On data that has a
 *    still pose the search lands on it first and nothing changes.
 *  - orientation: asked to travel at an angle to the asked facing (a
 *    sideways or diagonal request) of at most orient_max (95 degrees by
 *    default), the query's facing samples are turned toward the direction
 *    of travel, so the search takes a forward walk that goes that way; the
 *    upper body (the spine above the hips, up to three bones, sharing the
 *    turn) is counter-rotated so the chest keeps facing as asked, by the
 *    displayed root's angle from the asked facing, clamped to the query's
 *    angle and smoothed (ANGLE_HALFLIFE).
 *
 *  - stride: where the play rate alone cannot meet the asked speed (the
 *    rate at a bound), the stride is scaled by s in [stride_min,
 *    stride_max] (0.65-1.2 by default) so that the clip's speed times the
 *    rate times s is the asked speed: the root travels s times the clip's
 *    own motion along the asked direction, and each leg's foot is placed s
 *    times as far from its hip along it (two-bone IK on the legs foot
 *    locking found, the pelvis lowered up to 6 cm when a longer stride
 *    needs it; stride.h). A planted foot then moves back under the body as
 *    fast as the body moves on, so foot locking holds it without a new
 *    slide. Only on a steady gait (the clip's speed now within 30% of its
 *    speed over the next second, the simulation within 15% of the asked
 *    speed, the asked direction within ~25 degrees of the one stretched
 *    along, which follows it with a 0.15 s half-life). Needs foot
 *    locking's legs (off without them). The search knows the stride too:
 *    on a steady gait the query is scaled while rate times stride can
 *    meet the speed (the rate first, the stride for the rest).
 *  - root steering: the root's velocity moved toward the simulation's
 *    (the asked trajectory's start) by at most steer_max times the root's
 *    own speed (0.15 by default) and 0.25 m/s, only while the root
 *    travels faster than 0.3 m/s (planted feet absorb it through foot
 *    locking; never slid while standing). Along the travel only into the
 *    range between the simulation's speed and the input's (the
 *    simulation lags the input), and toward a goal ahead never braking
 *    (the goal input brakes for the animation's lag itself). The facing is
 *    not steered: the orientation warp turns the body to the travel on
 *    purpose.
 *
 * Validity rules (anim_warp_params_validate):
 *  1. 0 < rate_min <= 1 <= rate_max <= 4, finite;
 *  2. 0 <= orient_max <= pi, finite;
 *  3. 0 < stride_min <= 1 <= stride_max <= 2, finite;
 *  4. 0 <= steer_max <= 1, finite.
 *
 * A character owns its warp (its scratch pose, allocated by
 * anim_warp_init); nothing is allocated per tick.
 */
#ifndef ANIM_WARP_H
#define ANIM_WARP_H

#include <stdint.h>
#include "database/database.h"
#include "math/anim_math.h"
#include "pose/pose.h"

typedef struct {
  int rate;                 /* play rate on */
  float rate_min, rate_max; /* bounds of the play rate */
  int stand;                /* settle to rest on data without a still pose */
  int orient;               /* orientation warping on */
  float orient_max;         /* rad: the largest travel angle off the facing it serves */
  int stride;               /* stride warping on */
  float stride_min, stride_max; /* bounds of the stride scale */
  int steer;                /* root steering on */
  float steer_max;          /* the largest correction, times the root's speed */
} anim_warp_params_t;

void anim_warp_params_default(anim_warp_params_t *out_params);
/* 0 or ANIM_EINVAL / ANIM_ENONFINITE (rules above). */
int anim_warp_params_validate(const anim_warp_params_t *params);

#define ANIM_WARP_MAX_SPINE 3
#define ANIM_WARP_MAX_MOVING 4

typedef struct {
  anim_warp_params_t params;
  const anim_database_t *db;
  /* Play rate: the one shown (rate * settle is what plays), its target. */
  float rate, rate_target;
  /* What plays per second of dt: rate (when on) times settle, as
   * anim_warp_begin left it; the pose's rates are scaled by it. With the
   * orientation's angle, all of the warp a replica needs from a tick
   * (anim_warp_replay). */
  float shown;
  float data_speed;   /* anim_warp_data_speed at speed_frame, read every few frames */
  float data_now;     /* m/s, the root's speed in the data at speed_frame */
  int speed_frame;
  float query_rate;   /* the rate (times the stride) the last query was scaled for (1: unscaled) */
  float stride, stride_target; /* stride scale shown (1: the data's), its target */
  vec3 travel;        /* world, unit: the asked direction of travel, which the stride stretches along */
  float steering;     /* m/s: root steering's correction of the last tick */
  float slowest_gait; /* m/s, the data's slowest travelling band (warp.c), 0 if none */
  float fastest;      /* m/s, the data's fastest travel over a second (of the frames sampled) */
  float settle;       /* 1 playing, 0 held at rest */
  float settle_wait;  /* s asked to stand with the data moving */
  int settled;        /* held at rest: no search */
  /* Orientation: the query's turn and the upper body's counter-turn (rad). */
  float query_angle, angle;
  int spine[ANIM_WARP_MAX_SPINE], nspine;
  int hips;
  int can_stride;     /* the caller has legs to warp (set after init: foot locking's) */
  int moving[ANIM_WARP_MAX_MOVING], nmoving; /* bones whose positions are interpolated: the root and its children */
  /* The pose last shown (buffers[0]), between two frames at view_phase, and
   * a transition's destination at the same phase (buffers[1]); nbones each. */
  anim_pose_view_t view;
  int have_view, view_held;
  float view_phase;
  struct anim_warp_buffer {
    vec3 *positions, *velocities, *angular_velocities;
    quat *rotations;
  } buffers[2];
} anim_warp_t;
typedef struct anim_warp_buffer anim_warp_buffer_t;

/* A warp for characters on db. 0, ANIM_EINVAL, ANIM_ENOMEM. Free with
 * anim_warp_free (also safe on a zeroed struct). */
int anim_warp_init(anim_warp_t *out_warp, const anim_database_t *db, const anim_warp_params_t *params);
void anim_warp_free(anim_warp_t *warp);
/* Back to rate 1, no turn, nothing held. */
void anim_warp_reset(anim_warp_t *warp);

/* The root's speed in the data at frame (m/s, horizontal): its travel to
 * the frame a second on, or the range's last frame if sooner. */
float anim_warp_data_speed(const anim_database_t *db, int frame);

/* Before a tick: from the asked velocity (desired: m/s, world, the
 * input's own, not the smoothed one), the asked facing, the displayed
 * root's rotation and the simulation's speed (m/s), updates the rates, the settling and the angles; at
 * rest says whether the pose is held (no search). Returns the animation
 * seconds this tick plays for dt (dt times the rate shown). */
float anim_warp_begin(anim_warp_t *warp, int frame, vec3 desired, quat desired_facing, quat root_rotation,
                      float sim_speed, float dt);

/* A replica's anim_warp_begin (character/replica.h): the tick's shown
 * rate and upper-body angle as the original's begin left them, nothing
 * worked out. Returns the animation seconds this tick plays for dt, the
 * same bits as the original's begin returned. */
float anim_warp_replay(anim_warp_t *warp, float shown, float angle, float dt);

/* A replica's warp as an original's keyframe says: the shown rate and
 * angle, and the pose last shown (have_view: frame at phase, held),
 * made again from the database (a transition starts from it). */
void anim_warp_restore(anim_warp_t *warp, float shown, float angle, int have_view, int frame, float phase, int held);

/* The stride scale this tick plays at (1 with the stride warp off or
 * without legs to warp: can_stride 0). */
float anim_warp_stride(const anim_warp_t *warp);

/* A query sample (root-local, on the ground) as the warps want it searched:
 * positions scaled to the data's speed, facings turned toward the travel.
 * position: 1 for a trajectory position, 0 for a facing direction. */
vec3 anim_warp_query_sample(const anim_warp_t *warp, vec3 local, int position);

/* The pose to show at frame plus phase (0..1 of a frame, toward the next
 * in its range); held: velocities zero. With the rate warp off, the
 * database frame itself (nothing interpolated). */
anim_pose_view_t anim_warp_pose(anim_warp_t *warp, int frame, float phase, int held);

/* A transition's destination: frame at the phase of the pose last shown,
 * so that the transition moves nothing and the next tick plays on from
 * there (valid until the next call; the last shown pose stays valid). */
anim_pose_view_t anim_warp_transition_pose(anim_warp_t *warp, int frame);

/* After the displayed pose is made: the upper body counter-rotated by the
 * orientation warp (local rotations, bone 0 in world). */
void anim_warp_apply(anim_warp_t *warp, quat *pose_rotations);

#endif
