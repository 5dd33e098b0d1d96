/*
 * lmm_recover.h: the features' normalization (offset per column, scale per
 * group) recovered from the three networks alone, without the motion data
 * they were trained on.
 *
 * Why it is recoverable: the networks work on normalized features x, but the
 * decompressor turns (x, z) into a pose in metres, from which the raw
 * features can be measured again (forward kinematics for the foot and hip
 * groups; the stepper's rollout, with the decompressed root velocities
 * integrated, for the trajectory groups, which look 20, 40 and 60 frames
 * ahead). Since x = (raw - offset) / scale, raw = offset + scale * x: per
 * group, a linear regression of the measured raw values on the state's
 * normalized values, one slope (the scale) shared by the group's columns and
 * one intercept (the offset) per column.
 *
 * Method (anim_lmm_recover): rollouts start from the projections of random
 * queries (each normalized feature drawn from a normal distribution with the
 * projector's own output std for that feature, scaled per rollout by a
 * factor uniform in [scale_min, scale_max], so both calm and extreme
 * queries land on the data's manifold); each runs the stepper for `frames`
 * frames of 1/60 s, decompressing every frame. Every `reproject` frames
 * (default 20, the window the stepper was trained on) each state is
 * projected again with its own features as the query, which puts it back
 * on the data: the stepper alone drifts, and over 180 frames the fit of the
 * trajectory directions falls to R^2 0.85 (rollouts of only 60 frames after
 * one projection give R^2 0.96 and scales within 3% of these). The root
 * integrates the decompressed velocities with the trapezoid rule (the
 * data's velocities are central differences); frames after `warmup` with 60
 * frames of future are samples. Sums are accumulated per column in double
 * precision, so the memory is that of one batch of rollouts.
 *
 * Fit quality, per group: R^2 = 1 - SS_residual / SS_total (SS_total about
 * each column's mean), and the spread of per-column slopes around the
 * shared one (how well "one scale per group" holds).
 *
 * It allocates (rollout buffers); it is a tool, run offline or by tests.
 */
#ifndef ANIM_LMM_RECOVER_H
#define ANIM_LMM_RECOVER_H

#include "learned/lmm.h"

typedef struct {
  int rollouts;     /* number of rollouts (>= 1) */
  int frames;       /* frames per rollout (> warmup + 60) */
  int warmup;       /* frames before the first sample (>= 0) */
  int batch;        /* rollouts evaluated together (>= 1) */
  unsigned seed;    /* random queries */
  float scale_min, scale_max; /* range of the per-rollout query scale (0 < min <= max) */
  int reproject;    /* every this many frames, project each state's own features (0: never) */
} anim_lmm_recover_options_t;

void anim_lmm_recover_options_default(anim_lmm_recover_options_t *out_options);

typedef struct {
  anim_lmm_normalization_t normalization; /* networks_hash set to the networks' */
  double r2[ANIM_LMM_GROUPS];
  double slope_spread[ANIM_LMM_GROUPS];   /* max over columns of |column slope / group slope - 1| */
  long samples;                           /* frames regressed */
} anim_lmm_recovery_t;

/* Runs the method above on nets (their own normalization is not used).
 * 0, ANIM_EINVAL (options), ANIM_ENOMEM, ANIM_ERANGE (a group with no
 * spread in its normalized values or a non-positive slope: not these
 * networks' features), with a message. */
int anim_lmm_recover(const anim_lmm_networks_t *nets, const anim_lmm_recover_options_t *options,
                     anim_lmm_recovery_t *out, char *err, int errlen);

#endif
