/* steering.c: input -> desired velocity and facing; the simulation springs (see steering.h). */
#include "spring.h"
#include "steering.h"

static const vec3 up = {0.0f, 1.0f, 0.0f};

static quat yaw_rotation(float angle) { return quat_from_angle_axis(angle, up); }
static quat facing_of(vec3 direction) { return yaw_rotation(atan2f(direction.x, direction.z)); }

static void desired_from_stick(vec3 *out_velocity, quat *io_rotation, const anim_controller_input_t *in,
                               const anim_controller_params_t *p, quat sim_rotation) {
  quat camera = yaw_rotation(in->camera_azimuth);
  vec3 stick = quat_mul_vec3(camera, vec3_make(in->stick_x, 0.0f, in->stick_z));
  vec3 local = quat_inv_mul_vec3(sim_rotation, stick);
  local = vec3_make(local.x * p->side_speed, 0.0f, local.z * (local.z > 0.0f ? p->forward_speed : p->back_speed));
  *out_velocity = quat_mul_vec3(sim_rotation, local);
  if (in->strafe) *io_rotation = camera;
  else if (vec3_length(stick) > 0.01f) *io_rotation = facing_of(*out_velocity);
}

static void desired_from_goal(vec3 *out_velocity, quat *io_rotation, const anim_controller_input_t *in,
                              vec3 sim_position) {
  vec3 to = vec3_sub(in->goal, sim_position);
  to.y = 0.0f;
  float distance = vec3_length(to);
  /* Arrive: full speed far away, slowing over the last half second. */
  float speed = distance < 0.05f ? 0.0f : fminf(in->goal_speed, 2.0f * distance);
  *out_velocity = distance > 1e-4f ? vec3_scale(to, speed / distance) : vec3_zero();
  if (speed > 0.05f) *io_rotation = facing_of(to);
}

void anim_steering_desired(vec3 *out_velocity, quat *io_rotation, const anim_controller_input_t *in,
                           const anim_controller_params_t *params, vec3 sim_position, quat sim_rotation) {
  switch (in->kind) {
  case ANIM_INPUT_STICK: desired_from_stick(out_velocity, io_rotation, in, params, sim_rotation); break;
  case ANIM_INPUT_VELOCITY:
    *out_velocity = vec3_make(in->velocity.x, 0.0f, in->velocity.z);
    *io_rotation = yaw_rotation(in->facing);
    break;
  case ANIM_INPUT_GOAL: desired_from_goal(out_velocity, io_rotation, in, sim_position); break;
  }
}

void anim_steering_rotation_spring(quat *io_rotation, vec3 *io_angular_velocity, quat goal, float halflife, float dt) {
  quat offset = quat_abs(quat_inv_mul(goal, *io_rotation));
  anim_spring_decay_quat(&offset, io_angular_velocity, halflife, dt);
  *io_rotation = quat_normalize(quat_mul(goal, offset));
}

void anim_steering_predict(vec3 *out_positions, quat *out_rotations, vec3 position, vec3 velocity, vec3 acceleration,
                           quat rotation, vec3 angular_velocity, vec3 target_velocity, quat desired_rotation,
                           float velocity_halflife, float rotation_halflife, const float *times_s, int n) {
  float t = 0.0f;
  for (int i = 0; i < n; i++) {
    float dt = times_s[i] - t;
    anim_spring_character_vec3(&position, &velocity, &acceleration, target_velocity, velocity_halflife, dt);
    anim_steering_rotation_spring(&rotation, &angular_velocity, desired_rotation, rotation_halflife, dt);
    out_positions[i] = position, out_rotations[i] = rotation;
    t = times_s[i];
  }
}
