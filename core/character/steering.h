/*
 * steering.h: what a character's input asks for, and where its simulation
 * goes: the part shared by the database controller (controller.h) and the
 * learned one (lmm.h), so that both accept the same inputs and predict their
 * trajectories with the same springs.
 *
 * The input (a stick with camera azimuth, a desired world velocity and
 * facing, or a goal to walk to; anim_controller_input_t) becomes a desired
 * velocity (m/s, world, on the ground) and a desired facing (a rotation
 * about +Y). The simulation is a point with a velocity spring and a facing
 * spring, both critically damped with explicit half-lives (spring.h):
 * anim_spring_character_vec3 moves the velocity toward the (smoothed)
 * desired velocity and integrates the position exactly; the facing offset
 * from the desired facing decays exactly. Prediction runs the same springs
 * forward from the current state, so the trajectory in a query is where the
 * simulation itself will go if the input holds.
 *
 * A goal is walked to at goal_speed and braked for so that the character
 * comes to rest on it. anim_steering_stop_offset says where the springs (the
 * input smoothing and the velocity spring, from their present state) bring
 * the simulation to rest if the desired velocity drops to zero now; the
 * displayed root, which the simulation follows, runs on past that point
 * (motion matching keeps a walking clip until the query looks like
 * standing), by about its speed times ANIMATION_LAG. The desired speed is
 * the gap left beyond both, divided by BRAKE_TIME, at most goal_speed. So
 * far from the goal nothing changes: full speed toward it at once.
 *
 * Why not a speed profile of the distance alone: the desired velocity
 * reaches the position through two filters in series (the smoothing, then
 * the velocity spring), so a profile v(d) = k d closes a loop of fourth
 * order. With the spring alone it is s (s + y)^2 + y^2 k = 0 (y = 2 ln2 /
 * velocity_halflife), whose roots are all real, no overshoot, only for
 * k <= 4 y / 27 (0.76 1/s by default: a slow approach), and the smoothing
 * lowers that bound further. Integrated on the springs alone (0.27 s, 4 Hz smoothing)
 * the old min(goal_speed, 2 d) overshoots 0.27 m at 1.5 m/s and 0.63 m at
 * 3.5 m/s, and the speed from which the spring could still stop in the
 * distance left, y d / 2, overshoots more (0.32 and 0.74 m): it is a steeper
 * v(d). Braking on the rest point does not overshoot: with u the desired
 * speed and S the travel still to come, the gap e = d - S obeys e' = -u
 * exactly (the chain passes its input on with unit gain, so holding u adds
 * u dt to S while the simulation covers v dt of d), so e decays as e^(-t /
 * BRAKE_TIME) and never changes sign (tests/test_steering.c runs it).
 *
 * The character has arrived within ARRIVE_RADIUS of the goal, or within
 * NEAR_RADIUS once it has set off and no longer closes in (it stopped short,
 * or its animation cannot turn tightly enough and it would circle the goal:
 * the procedural database has no slow turns and no turns on the spot, and
 * its stops are straight). Arrived, it asks for no velocity and keeps its
 * facing, until the goal is moved (by more than the arrival radius) or the
 * character is carried out of LEAVE_RADIUS.
 *
 * Plain maths on caller-owned values: nothing allocates or fails.
 */
#ifndef ANIM_STEERING_H
#define ANIM_STEERING_H

#include <stddef.h> /* database.h, through controller.h, uses size_t */
#include "math/anim_math.h"
#include "character/controller.h"
#include "motion/dynamics.h"

/* The goal input (steering.h), metres and seconds. Measured on 24 goals
 * (2, 5, 10 m; four directions; 1.5 and 3.5 m/s) per character in
 * tests/test_steering.c, standing still at the end of every run with at most
 * one heading flip near the goal: on GAMES-105 (real mocap with an idle
 * clip) the root ends 0.05-0.75 m from the goal (0.32 on average), on the
 * procedural database 0.05-1.78 m (0.05-0.33 straight ahead; the rest
 * arrived in a turn, which it cannot stop in: see above), the learned
 * character 0.46-0.69 m (it stops at the arrival radius, then its idle
 * drifts). LEAVE_RADIUS is beyond where any of them runs on to after
 * arriving. ANIMATION_LAG brings GAMES-105 from 0.46 m on average (0.87
 * worst) to 0.32 (0.75) and its overshoot from 0.80 to 0.62 m, for up to
 * 0.1 s more to arrive at 1.5 m/s and 0.3 s at 3.5 m/s. */
#define ANIM_STEERING_ARRIVE_RADIUS 0.25f
#define ANIM_STEERING_NEAR_RADIUS 0.75f
#define ANIM_STEERING_LEAVE_RADIUS 2.0f
#define ANIM_STEERING_BRAKE_TIME 0.1f
#define ANIM_STEERING_ANIMATION_LAG 0.2f
/* m/s of the displayed root: it has set off toward the goal; it is still. */
#define ANIM_STEERING_SET_OFF_SPEED 0.5f
#define ANIM_STEERING_STILL_SPEED 0.1f

/* Where the simulation comes to rest, relative to where it is (m, world),
 * if the desired velocity drops to zero now and stays there: the velocity
 * spring (velocity, acceleration; velocity_halflife) travels 2 v / y + a /
 * y^2 on its own (the integral of its decay, spring.h's x(t) with y = 2 ln2
 * / halflife), and the input smoothing's output still to come, which the
 * spring passes on with unit gain, integrates to k1 w + k2 w' - k3 x_prev
 * (dynamics.h: y + k1 y' + k2 y'' = x + k3 x' integrated from now on with
 * x = 0). Exact for the continuous springs; the ticked ones differ by a
 * fraction of a step's travel. */
vec3 anim_steering_stop_offset(vec3 velocity, vec3 acceleration, const anim_dynamics_vec3_t *smoothed,
                               const anim_dynamics_params_t *smoothing, float velocity_halflife);

/* Where a character is, as its desired velocity is worked out. */
typedef struct {
  vec3 position;      /* m, world: the simulation's (it follows the displayed root), on the ground */
  quat rotation;      /* the simulation's facing: the stick's frame */
  vec3 root_velocity; /* m/s, world: the displayed root's */
  vec3 stop_offset;   /* m: anim_steering_stop_offset of the simulation now */
} anim_steering_state_t;

/* The desired world velocity and facing for input in, from the character's
 * state. Stick: the stick turned by the camera azimuth, scaled per
 * direction relative to the simulation's facing by params' forward, side
 * and back speeds; faces the camera when strafing, else the velocity while
 * the stick is pushed, else keeps *io_rotation. Velocity: as given (y
 * dropped). Goal: toward it at up to goal_speed, braking so as to come to
 * rest on it and slowing for a turn it could not make at speed, facing where
 * it goes; arrived (*io_arrival, updated here), no velocity and the facing
 * kept. *io_rotation holds the previous desired facing and receives the new
 * one. */
void anim_steering_desired(vec3 *out_velocity, quat *io_rotation, anim_goal_arrival_t *io_arrival,
                           const anim_controller_input_t *in, const anim_controller_params_t *params,
                           const anim_steering_state_t *state);

/* Critically damped facing: the offset of *io_rotation from goal decays
 * exactly over dt seconds with the given half-life (s); *io_angular_velocity
 * (rad/s) is its rate. */
void anim_steering_rotation_spring(quat *io_rotation, vec3 *io_angular_velocity, quat goal, float halflife, float dt);

/* A tick's first half for a character's simulation: the desired velocity
 * and facing for input in (anim_steering_desired, from sim and the displayed
 * root's velocity root_velocity, m/s world), then the input smoothing over
 * dt seconds (sim->smoothed_velocity). */
void anim_steering_sim_desire(anim_steering_sim_t *sim, const anim_controller_input_t *in,
                              const anim_controller_params_t *params, vec3 root_velocity, float dt);

/* Its second half: the velocity spring toward the smoothed desired velocity
 * and the facing spring toward the desired facing, over dt seconds, with
 * params' half-lives. */
void anim_steering_sim_advance(anim_steering_sim_t *sim, const anim_controller_params_t *params, float dt);

/* Predicts the simulation n times ahead (times_s ascending, seconds from
 * now): positions and facings the springs reach from sim's state toward
 * target_velocity and sim's desired facing, with params' velocity and
 * rotation half-lives. sim is not changed. */
void anim_steering_predict(vec3 *out_positions, quat *out_rotations, const anim_steering_sim_t *sim,
                           vec3 target_velocity, const anim_controller_params_t *params, const float *times_s, int n);

#endif
