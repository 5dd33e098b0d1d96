/*
 * warp_measure.h: what animation warping is for (issue 34), measured on a
 * motion-matching controller ticked in process at 60 Hz from the origin,
 * facing +Z, playing frame 0, with a VELOCITY input (facing kept at 0):
 *
 *  - speed: asked `speed` m/s straight ahead for `seconds`; over the second
 *    half, the displayed root's mean speed (its displacement over the
 *    window) and the transitions a second;
 *  - direction: asked `speed` m/s at `angle` radians off the facing (a
 *    sideways or diagonal request while facing forward); over the second
 *    half, the direction the root travels against the one asked (radians;
 *    pi/2 when it travels under a quarter of the asked speed);
 *  - stand: walking at `speed` m/s for 4 s, then asked to stop for 12 s:
 *    the time from the stop until the root's speed (over 0.1 s) is last
 *    above 0.1 m/s, and the root's path length from 2 s to 12 s after it
 *    (the drift of 10 s standing).
 * Each run also meters contact-foot slide and pops (motion_quality.h);
 * cb (may be NULL) sees every tick, as a quality run's does.
 *
 * The benchmark (bench/bench_warp.c) and the tests (tests/core/
 * test_warp_quality.c) measure with the same code. Allocates (test support);
 * no cmocka.
 */
#ifndef ANIM_TEST_WARP_MEASURE_H
#define ANIM_TEST_WARP_MEASURE_H

#include "character/controller.h"
#include "motion_quality.h"
#include "quality_run.h"

typedef struct {
  float achieved_speed;     /* m/s over the window */
  float transitions_per_s;  /* in the window */
  float direction_error;    /* radians, direction runs */
  float rest_time;          /* s, stand runs (seconds after the stop; 12 when never) */
  float drift;              /* m, stand runs */
  float rate_mean;          /* mean play rate in the window (1 without warping) */
  int forced;               /* transitions in the window forced by a clip's end */
  anim_quality_t q;         /* slide and pops over the whole run */
} anim_warp_result_t;

/* The fastest steady speed of db (m/s): the largest root speed averaged
 * over a second of one range, over frames whose second lies in the range. */
float anim_warp_data_fastest(const anim_database_t *db);

int anim_warp_measure_speed(const anim_database_t *db, const anim_search_index_t *index,
                            const anim_controller_params_t *params, float speed, float seconds,
                            anim_warp_result_t *out, anim_quality_tick_cb cb, void *ctx);
int anim_warp_measure_direction(const anim_database_t *db, const anim_search_index_t *index,
                                const anim_controller_params_t *params, float angle, float speed, float seconds,
                                anim_warp_result_t *out, anim_quality_tick_cb cb, void *ctx);
int anim_warp_measure_stand(const anim_database_t *db, const anim_search_index_t *index,
                            const anim_controller_params_t *params, float speed, anim_warp_result_t *out,
                            anim_quality_tick_cb cb, void *ctx);

#endif
