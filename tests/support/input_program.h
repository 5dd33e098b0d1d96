/*
 * input_program.h: scripted inputs for a character, the same for a
 * controller ticked in process and for a character steered over the wire,
 * so that motion quality is measured under the same input both ways.
 *
 * Three programs (issue 16):
 *  - TOUR: rounds of 12 s: walk forward (stick 0.85) 3 s, walk right 3 s,
 *    run (a desired velocity of 2.5 m/s) 3 s, stop 3 s; each round turned
 *    by 0.9 rad from the last;
 *  - WANDER: a stick in a random direction at a random strength (0.5-1),
 *    changed every 0.3-1 s;
 *  - REVERSALS: a desired velocity (1-2.5 m/s, facing along it) held for
 *    2.5-4 s, then reversed at once (facing turned half round); every third
 *    change a new random axis and speed instead.
 * And one more (issue 30), not among the three runs of every dataset:
 *  - STEERED: a desired velocity in a random direction at 0.5-3 m/s
 *    (walk to run; facing along it), a new one every 0.5 s.
 * Speeds stay within what both test datasets can reach (GAMES-105 runs at
 * 2.7 m/s), so the time to reach them measures the controller.
 * Random draws come from a seed (xorshift), so a program is reproducible.
 *
 * What it does not: tick anything or talk to a server; the caller applies
 * the input. No allocation, no cmocka (benchmarks link it).
 */
#ifndef ANIM_TEST_INPUT_PROGRAM_H
#define ANIM_TEST_INPUT_PROGRAM_H

#include <stdint.h>
#include "character/controller.h"

typedef enum {
  ANIM_PROGRAM_TOUR = 0,
  ANIM_PROGRAM_WANDER = 1,
  ANIM_PROGRAM_REVERSALS = 2,
  ANIM_PROGRAM_STEERED = 3
} anim_program_kind_t;
#define ANIM_PROGRAM_COUNT 3 /* the programs of issue 16, run on every dataset */
#define ANIM_PROGRAM_KINDS 4

typedef struct {
  anim_program_kind_t kind;
  uint32_t rng;
  float next_change;           /* s: when the input changes next */
  int changes;
  anim_controller_input_t input;
} anim_input_program_t;

/* "tour", "wander", "reversals", "steered". */
const char *anim_input_program_name(anim_program_kind_t kind);

/* Starts a program; seed 0 is replaced by a fixed non-zero one. */
void anim_input_program_init(anim_input_program_t *out, anim_program_kind_t kind, uint32_t seed);

/* The input at time t (s since the start; calls in increasing t). Returns 1
 * when the input changed at this call (always on the first), else 0. When a
 * desired velocity (VELOCITY input) starts, *out_command (may be NULL) is
 * set to it and *out_commanded to 1, so responsiveness can be timed from
 * there; else *out_commanded is 0. */
int anim_input_program_at(anim_input_program_t *p, float t, anim_controller_input_t *out_input, vec3 *out_command,
                          int *out_commanded);

#endif
