/* steering.c: input -> desired velocity and facing; the simulation springs (see steering.h). */
#include "motion/spring.h"
#include "character/steering.h"

static const vec3 up = {0.0f, 1.0f, 0.0f};

static quat yaw_rotation(float angle) { return quat_from_angle_axis(angle, up); }
/* yaw_rotation(atan2f(x, z)) without trigonometry: with c = cos t = z / r
 * and s = sin t = x / r, the half angle's cosine is sqrt((1 + c) / 2) and
 * its sine s / (2 cos(t/2)); facing backwards (z < 0) 1 + c cancels, so
 * there the sine comes first, sign(x) sqrt((1 - c) / 2), and the cosine from
 * it. Both within a few float roundings of the trigonometric form
 * (test_steering); a zero direction keeps atan2f's answer for its signs. */
static quat facing_of(vec3 direction) {
  float x = direction.x, z = direction.z, r = sqrtf(x * x + z * z);
  if (!(r > 0.0f) || !isfinite(r)) return yaw_rotation(atan2f(x, z));
  if (z >= 0.0f) {
    float w = sqrtf(0.5f + 0.5f * (z / r));
    return quat_make(w, 0.0f, x / (2.0f * r * w), 0.0f);
  }
  float y = copysignf(sqrtf(0.5f - 0.5f * (z / r)), x);
  return quat_make(x / (2.0f * r * y), 0.0f, y, 0.0f);
}

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

/* The goal input (steering.h): forget the last goal's flags when the goal
 * is moved; arrive; leave when carried out of the leave radius; otherwise
 * brake on the rest point. */
static void desired_from_goal(vec3 *out_velocity, quat *io_rotation, anim_goal_arrival_t *io_arrival,
                              const anim_controller_input_t *in, const anim_steering_state_t *st) {
  vec3 to = vec3_sub(in->goal, st->position), moved = vec3_sub(in->goal, io_arrival->goal);
  vec3 root_velocity = st->root_velocity;
  to.y = moved.y = root_velocity.y = 0.0f;
  if (vec3_length(moved) > ANIM_STEERING_ARRIVE_RADIUS)
    io_arrival->goal = in->goal, io_arrival->set_off = io_arrival->arrived = 0;
  float distance = vec3_length(to), root_speed = vec3_length(root_velocity);
  vec3 direction = distance > 0.0f ? vec3_scale(to, 1.0f / distance) : vec3_zero();
  float closing = vec3_dot(root_velocity, direction); /* m/s toward the goal */
  if (root_speed > ANIM_STEERING_SET_OFF_SPEED) io_arrival->set_off = 1;
  if (io_arrival->arrived && distance > ANIM_STEERING_LEAVE_RADIUS) io_arrival->arrived = io_arrival->set_off = 0;
  /* Near, after setting off, and no longer closing in (stopped short, or
   * going round it: more than 60 degrees off): as close as it gets. */
  int stalled = io_arrival->set_off && distance <= ANIM_STEERING_NEAR_RADIUS &&
                closing < fmaxf(0.5f * root_speed, ANIM_STEERING_STILL_SPEED);
  if (!io_arrival->arrived && (distance <= ANIM_STEERING_ARRIVE_RADIUS || stalled)) io_arrival->arrived = 1;
  if (io_arrival->arrived) {
    *out_velocity = vec3_zero(); /* and the facing stays: no spinning on the spot */
    return;
  }
  /* The gap left beyond where the springs, and the animation after them,
   * come to rest; it decays over the brake time. */
  float gap = distance - vec3_dot(st->stop_offset, direction) - ANIM_STEERING_ANIMATION_LAG * fmaxf(closing, 0.0f);
  float speed = fminf(fmaxf(gap / ANIM_STEERING_BRAKE_TIME, 0.0f), in->goal_speed);
  *out_velocity = vec3_scale(direction, speed);
  if (speed > 0.05f) *io_rotation = facing_of(to);
}

vec3 anim_steering_stop_offset(vec3 velocity, vec3 acceleration, const anim_dynamics_vec3_t *smoothed,
                               const anim_dynamics_params_t *smoothing, float velocity_halflife) {
  float y = 0.5f * halflife_to_damping(velocity_halflife);
  vec3 spring = vec3_add(vec3_scale(velocity, 2.0f / y), vec3_scale(acceleration, 1.0f / (y * y)));
  vec3 input = vec3_add(vec3_scale(smoothed->y, (float)smoothing->k1), vec3_scale(smoothed->v, (float)smoothing->k2));
  input = vec3_sub(input, vec3_scale(smoothed->x_prev, (float)smoothing->k3));
  vec3 offset = vec3_add(spring, input);
  offset.y = 0.0f;
  return offset;
}

void anim_steering_desired(vec3 *out_velocity, quat *io_rotation, anim_goal_arrival_t *io_arrival,
                           const anim_controller_input_t *in, const anim_controller_params_t *params,
                           const anim_steering_state_t *state) {
  switch (in->kind) {
  case ANIM_INPUT_STICK: desired_from_stick(out_velocity, io_rotation, in, params, state->rotation); break;
  case ANIM_INPUT_VELOCITY:
    *out_velocity = vec3_make(in->velocity.x, 0.0f, in->velocity.z);
    *io_rotation = yaw_rotation(in->facing);
    break;
  case ANIM_INPUT_GOAL: desired_from_goal(out_velocity, io_rotation, io_arrival, in, state); break;
  }
}

/* Whether a facing, its goal and its turn are about +Y alone (as every input
 * makes them, and the spring keeps them). */
static int about_up(quat rotation, vec3 angular_velocity, quat goal) {
  return rotation.x == 0.0f && rotation.z == 0.0f && goal.x == 0.0f && goal.z == 0.0f && angular_velocity.x == 0.0f &&
         angular_velocity.z == 0.0f;
}

void anim_steering_rotation_spring(quat *io_rotation, vec3 *io_angular_velocity, quat goal, float halflife, float dt) {
  anim_spring_decayer_t decay;
  anim_spring_decayer_make(&decay, halflife, dt);
  quat r = *io_rotation;
  if (about_up(r, *io_angular_velocity, goal)) {
    /* The quaternion path's products with their zero terms left out (the
     * same bits): offset = goal^-1 r, then goal offset, normalized. */
    float c = goal.w * r.w + goal.y * r.y, s = goal.w * r.y - goal.y * r.w;
    if (anim_spring_decayer_yaw(&decay, &c, &s, &io_angular_velocity->y) == 0) {
      *io_rotation = quat_normalize(quat_make(goal.w * c - goal.y * s, 0.0f, goal.w * s + goal.y * c, 0.0f));
      return;
    }
  }
  quat offset = quat_abs(quat_inv_mul(goal, r));
  anim_spring_decayer_quat(&decay, &offset, io_angular_velocity);
  *io_rotation = quat_normalize(quat_mul(goal, offset));
}

void anim_steering_predict(vec3 *out_positions, quat *out_rotations, const anim_steering_sim_t *sim,
                           vec3 target_velocity, const anim_controller_params_t *params, const float *times_s, int n) {
  vec3 position = sim->position, velocity = sim->velocity, acceleration = sim->acceleration;
  quat rotation = sim->rotation;
  vec3 angular_velocity = sim->angular_velocity;
  float t = 0.0f;
  for (int i = 0; i < n; i++) {
    float dt = times_s[i] - t;
    anim_spring_character_vec3(&position, &velocity, &acceleration, target_velocity, params->velocity_halflife, dt);
    anim_steering_rotation_spring(&rotation, &angular_velocity, sim->desired_rotation, params->rotation_halflife, dt);
    out_positions[i] = position, out_rotations[i] = rotation;
    t = times_s[i];
  }
}

void anim_steering_sim_desire(anim_steering_sim_t *sim, const anim_controller_input_t *in,
                              const anim_controller_params_t *params, vec3 root_velocity, float dt) {
  anim_steering_state_t state = {sim->position, sim->rotation, root_velocity,
                                 anim_steering_stop_offset(sim->velocity, sim->acceleration, &sim->smoothed_velocity,
                                                           &sim->smoothing, params->velocity_halflife)};
  anim_steering_desired(&sim->desired_velocity, &sim->desired_rotation, &sim->arrival, in, params, &state);
  anim_dynamics_vec3_update(&sim->smoothed_velocity, &sim->smoothing, sim->desired_velocity, dt);
}

void anim_steering_sim_advance(anim_steering_sim_t *sim, const anim_controller_params_t *params, float dt) {
  anim_spring_character_vec3(&sim->position, &sim->velocity, &sim->acceleration, sim->smoothed_velocity.y,
                             params->velocity_halflife, dt);
  anim_steering_rotation_spring(&sim->rotation, &sim->angular_velocity, sim->desired_rotation,
                                params->rotation_halflife, dt);
}
