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
 * Plain maths on caller-owned values: nothing allocates or fails.
 */
#ifndef ANIM_STEERING_H
#define ANIM_STEERING_H

#include <stddef.h> /* database.h, through controller.h, uses size_t */
#include "anim_math.h"
#include "controller.h"

/* The desired world velocity and facing for input in, given the simulation's
 * position and facing. Stick: the stick turned by the camera azimuth, scaled
 * per direction relative to the current facing by params' forward, side and
 * back speeds; faces the camera when strafing, else the velocity while the
 * stick is pushed, else keeps *io_rotation. Velocity: as given (y dropped).
 * Goal: toward it at goal_speed, slowing over the last half second
 * (2 m/s per metre of distance), stopping within 5 cm. *io_rotation holds
 * the previous desired facing and receives the new one. */
void anim_steering_desired(vec3 *out_velocity, quat *io_rotation, const anim_controller_input_t *in,
                           const anim_controller_params_t *params, vec3 sim_position, quat sim_rotation);

/* Critically damped facing: the offset of *io_rotation from goal decays
 * exactly over dt seconds with the given half-life (s); *io_angular_velocity
 * (rad/s) is its rate. */
void anim_steering_rotation_spring(quat *io_rotation, vec3 *io_angular_velocity, quat goal, float halflife, float dt);

/* Predicts the simulation n times ahead (times_s ascending, seconds from
 * now): positions and facings the springs reach from (position, velocity,
 * acceleration, rotation, angular_velocity) toward target_velocity and
 * desired_rotation, with the velocity and rotation half-lives. */
void anim_steering_predict(vec3 *out_positions, quat *out_rotations, vec3 position, vec3 velocity, vec3 acceleration,
                           quat rotation, vec3 angular_velocity, vec3 target_velocity, quat desired_rotation,
                           float velocity_halflife, float rotation_halflife, const float *times_s, int n);

#endif
