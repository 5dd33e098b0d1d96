/* input_program.c: the scripted inputs of the quality runs (see input_program.h). */
#include <math.h>
#include <string.h>
#include "input_program.h"

static const char *const names[ANIM_PROGRAM_KINDS] = {"tour", "wander", "reversals", "steered"};

const char *anim_input_program_name(anim_program_kind_t kind) {
  return (unsigned)kind < ANIM_PROGRAM_KINDS ? names[kind] : "unknown";
}

void anim_input_program_init(anim_input_program_t *out, anim_program_kind_t kind, uint32_t seed) {
  memset(out, 0, sizeof *out);
  out->kind = kind;
  out->rng = seed ? seed : 2463534242u;
  out->next_change = 0.0f;
}

/* xorshift32, then a float in [lo, hi). */
static float uniform(anim_input_program_t *p, float lo, float hi) {
  uint32_t x = p->rng;
  x ^= x << 13, x ^= x >> 17, x ^= x << 5;
  p->rng = x;
  return lo + (hi - lo) * (float)(x >> 8) / 16777216.0f;
}

static void set_stick(anim_controller_input_t *in, float x, float z, float azimuth) {
  memset(in, 0, sizeof *in);
  in->kind = ANIM_INPUT_STICK;
  in->stick_x = x, in->stick_z = z, in->camera_azimuth = azimuth;
}

static void set_velocity(anim_controller_input_t *in, vec3 velocity) {
  memset(in, 0, sizeof *in);
  in->kind = ANIM_INPUT_VELOCITY;
  in->velocity = velocity;
  in->facing = atan2f(velocity.x, velocity.z);
}

/* The tour's phase at t: 0 walk, 1 walk right, 2 run, 3 stop; the round's azimuth. */
static void tour(anim_input_program_t *p, float t) {
  int round = (int)floorf(t / 12.0f);
  float in_round = t - 12.0f * (float)round, azimuth = 0.9f * (float)round;
  int phase = (int)(in_round / 3.0f);
  if (phase == 0) set_stick(&p->input, 0.0f, 0.85f, azimuth);
  else if (phase == 1) set_stick(&p->input, 0.85f, 0.0f, azimuth);
  else if (phase == 2) set_velocity(&p->input, vec3_make(2.5f * cosf(azimuth), 0.0f, -2.5f * sinf(azimuth)));
  else set_stick(&p->input, 0.0f, 0.0f, azimuth);
  p->next_change = 12.0f * (float)round + 3.0f * (float)(phase + 1);
}

static void wander(anim_input_program_t *p, float t) {
  float angle = uniform(p, 0.0f, 2.0f * ANIM_PI), strength = uniform(p, 0.5f, 1.0f);
  set_stick(&p->input, strength * sinf(angle), strength * cosf(angle), 0.0f);
  p->next_change = t + uniform(p, 0.3f, 1.0f);
}

static void reversals(anim_input_program_t *p, float t) {
  if (p->changes % 3 == 0) {
    float angle = uniform(p, 0.0f, 2.0f * ANIM_PI), speed = uniform(p, 1.0f, 2.5f);
    set_velocity(&p->input, vec3_make(speed * sinf(angle), 0.0f, speed * cosf(angle)));
  } else {
    set_velocity(&p->input, vec3_neg(p->input.velocity));
  }
  p->next_change = t + uniform(p, 2.5f, 4.0f);
}

static void steered(anim_input_program_t *p, float t) {
  float angle = uniform(p, 0.0f, 2.0f * ANIM_PI), speed = uniform(p, 0.5f, 3.0f);
  set_velocity(&p->input, vec3_make(speed * sinf(angle), 0.0f, speed * cosf(angle)));
  p->next_change = t + 0.5f;
}

int anim_input_program_at(anim_input_program_t *p, float t, anim_controller_input_t *out_input, vec3 *out_command,
                          int *out_commanded) {
  int changed = p->changes == 0 || t >= p->next_change;
  if (changed) {
    if (p->kind == ANIM_PROGRAM_TOUR) tour(p, t);
    else if (p->kind == ANIM_PROGRAM_WANDER) wander(p, t);
    else if (p->kind == ANIM_PROGRAM_STEERED) steered(p, t);
    else reversals(p, t);
    p->changes++;
  }
  *out_input = p->input;
  if (out_commanded) *out_commanded = changed && p->input.kind == ANIM_INPUT_VELOCITY;
  if (out_command && changed && p->input.kind == ANIM_INPUT_VELOCITY) *out_command = p->input.velocity;
  return changed;
}
