/*
 * fit_eval.h: pose fitting measured against the truth. Each range of a
 * truth database (clips the fit's database does not hold) is played frame
 * by frame at its rate; the trackers are the truth's tracked points (plus
 * Gaussian noise, optionally one tracker dropped for a while); the fitted
 * pose is compared with the true one. Shared by test_pose_fit.c, the fit
 * benchmark and the filmstrip tool; no cmocka, no wall-clock assertions.
 *
 * Figures, over the joints at or below the pelvis (the synthetic simulation
 * bone and folded ground-level roots carry no pose of their own):
 *  - per-joint position error: mean, and the worst (bone, frame);
 *  - the dropped tracker's own error while it is dropped;
 *  - foot slide: mean horizontal speed (m/s) of each contact bone over the
 *    pairs of frames a pose says are planted: the fit's (its prior's
 *    contacts, which its foot locks hold) and the truth's (the mocap's own
 *    slide); and the fit's feet over the truth's planted frames (that one
 *    also counts steps the fit takes at another time: a phase error);
 *  - jitter: mean jerk magnitude |third difference| / dt^3 (m/s^3) of the
 *    joints, fit and truth (AvatarPoser's "jitter").
 */
#ifndef ANIM_TEST_FIT_EVAL_H
#define ANIM_TEST_FIT_EVAL_H

#include "math/anim_math.h"
#include "fit/pose_fit.h"

typedef struct {
  float noise;          /* m, Gaussian sigma per coordinate added to every tracker */
  int drop_tracker;     /* model tracker index dropped for a while, or -1 */
  float drop_start;     /* s into each range */
  float drop_seconds;   /* s */
  float tracker_scale;  /* the user's size: trackers scaled about the ground point under the first pelvis (1 = truth) */
  unsigned orientations; /* bit k: tracker k also gives its bone's true rotation (no noise) */
  unsigned seed;
  /* Called after each frame when not NULL: the fit's and the truth's global
   * positions (nbones each; truth scaled like the trackers). */
  void (*frame_cb)(void *user, int range, int frame, const anim_pose_fitter_t *fitter, const vec3 *truth);
  void *user;
} fit_eval_options_t;

typedef struct {
  int frames, joints;
  double mean_error, mean_tracked_error, mean_untracked_error; /* m */
  double worst_error;   /* m */
  int worst_bone, worst_frame; /* truth frame */
  double dropped_error; /* m, mean error of the dropped tracker's bone while dropped; 0 without a drop */
  double fit_slide, truth_slide; /* m/s, each over its own planted frames */
  double fit_slide_truth_planted; /* m/s, the fit's feet over the truth's planted frames */
  double fit_jerk, truth_jerk;   /* m/s^3 */
  double mean_scale, final_scale;
  double step_seconds;  /* wall time in anim_pose_fitter_step, all frames */
} fit_eval_result_t;

void fit_eval_options_default(fit_eval_options_t *out_options);

/* A standard normal sample from the xorshift32 state *seed (the trackers' noise). */
float fit_eval_gaussian(unsigned *seed);

/* Runs the fit over every range of truth (same skeleton as the model's
 * database). 0, or the first error of the fitter (init, step). */
int fit_eval_run(const anim_pose_fit_model_t *model, const anim_pose_fit_params_t *params,
                 const struct anim_database *truth, const fit_eval_options_t *options, fit_eval_result_t *out);

#endif
