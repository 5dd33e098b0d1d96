/*
 * quality_wire.h: the motion-quality runs of issue 16 over the wire:
 * characters of the real server, each steered by an input program
 * (input_program.h) through set_input as the program changes, measured
 * from the stream (world positions of every bone and the contact bits,
 * float encoding) by the same meter as in process (motion_quality.h).
 *
 * The server runs in real time, so a run of S seconds takes S seconds; the
 * characters of one call run side by side. No cmocka (benchmarks link it).
 */
#ifndef ANIM_TEST_QUALITY_WIRE_H
#define ANIM_TEST_QUALITY_WIRE_H

#include "anim_client.h"
#include "input_program.h"
#include "motion_quality.h"

typedef struct {
  const char *database;       /* its name on the server */
  const anim_database_t *db;  /* the same database in process: skeleton, contacts, source speeds */
  anim_program_kind_t kind;
  uint32_t seed;
  int learned;                /* 1: a learned character (MODE_LEARNED, database lmm), else the default mode */
  anim_quality_t result;      /* out */
  long gaps;                  /* out: stream frames missed (the meter restarted there) */
} anim_quality_wire_run_t;

/* Creates one character per run (3 m apart, facing +Z, playing frame 0),
 * in the run's mode,
 * subscribes to them, and for `seconds` of server ticks steers and measures
 * them; destroys them at the end. 0, or a client error with a message in err. */
int anim_quality_run_wire(anim_client_t *client, anim_quality_wire_run_t *runs, int n, float seconds, char *err,
                          int errlen);

/* A program's controller input as set_input takes it. */
anim_character_input_t anim_test_wire_input(const anim_controller_input_t *in);

/* Replaces the input of the character `program` steers at t (s): 1 when it
 * set *out (then sent at every poll), 0 to let the program steer it. */
typedef int (*anim_test_input_override_fn)(const anim_input_program_t *program, float t, anim_character_input_t *out);

/* Polls client for `seconds`, character ids[i] steered by programs[i] at
 * t = seconds since `start` (CLOCK_MONOTONIC, s), set_input sent for those
 * whose input changed; override may be NULL. 0, or the client's error. */
int anim_test_steer_for(anim_client_t *client, const uint64_t *ids, anim_input_program_t *programs, int n,
                        double start, double seconds, anim_test_input_override_fn override, int timeout_ms);

#endif
