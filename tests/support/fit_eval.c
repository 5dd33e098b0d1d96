/* fit_eval.c: pose fitting measured against held-out truth (fit_eval.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "anim_error.h"
#include "database/database.h"
#include "fit_eval.h"
#include "pose/kinematics.h"

void fit_eval_options_default(fit_eval_options_t *o) {
  memset(o, 0, sizeof *o);
  o->noise = 0.005f;
  o->drop_tracker = -1;
  o->tracker_scale = 1.0f;
  o->seed = 0x9e3779b9u;
}

float fit_eval_gaussian(unsigned *s) { /* Box-Muller on xorshift32 */
  float u[2];
  for (int i = 0; i < 2; i++) {
    *s ^= *s << 13, *s ^= *s >> 17, *s ^= *s << 5;
    u[i] = ((float)(*s >> 8) + 0.5f) / 16777216.0f;
  }
  return sqrtf(-2.0f * logf(u[0])) * cosf(2.0f * ANIM_PI * u[1]);
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static vec3 horizontal(vec3 v) { return vec3_make(v.x, 0.0f, v.z); }
static vec3 jerk(const vec3 *h) { /* h[0] newest .. h[3] oldest */
  return vec3_sub(vec3_add(h[0], vec3_scale(h[2], 3.0f)), vec3_add(vec3_scale(h[1], 3.0f), h[3]));
}

int fit_eval_run(const anim_pose_fit_model_t *model, const anim_pose_fit_params_t *params, const anim_database_t *truth,
                 const fit_eval_options_t *o, fit_eval_result_t *out) {
  memset(out, 0, sizeof *out);
  out->worst_bone = out->worst_frame = -1;
  const anim_database_t *db = model->db;
  int nb = truth->nbones;
  if (nb != db->nbones) return ANIM_EINVAL;
  anim_pose_fitter_t fitter;
  int rc = anim_pose_fitter_init(&fitter, model, params, NULL, 0);
  if (rc) return rc;
  int *eval = calloc((size_t)nb, sizeof(int));
  vec3 *truth_scaled = calloc((size_t)nb, sizeof(vec3));
  vec3 *fit_hist = calloc((size_t)nb * 4, sizeof(vec3)), *true_hist = calloc((size_t)nb * 4, sizeof(vec3));
  if (!eval || !truth_scaled || !fit_hist || !true_hist) rc = ANIM_ENOMEM;
  /* Evaluated joints: the pelvis and everything below it. */
  for (int b = 0; b < nb && !rc; b++)
    for (int a = b; a >= 0; a = truth->skeleton.parents[a])
      if (a == model->pelvis) eval[b] = 1;
  int tracked[ANIM_MAX_BONES] = {0};
  for (int k = 0; k < model->ntrackers; k++) tracked[model->tracker_bones[k]] = 1;
  unsigned seed = o->seed;
  double sum = 0, sum_tracked = 0, sum_untracked = 0, sum_drop = 0;
  long n = 0, n_tracked = 0, n_untracked = 0, n_drop = 0, n_slide = 0, n_fit_slide = 0, n_jerk = 0;
  double fit_slide = 0, fit_slide_truth = 0, truth_slide = 0, fit_jerk = 0, truth_jerk = 0, scale_sum = 0;
  int was_planted[ANIM_MAX_CONTACTS] = {0};
  float dt = 1.0f / truth->frame_rate;
  for (int r = 0; r < truth->nranges && !rc; r++) {
    anim_pose_fitter_reset(&fitter);
    const anim_range_t *range = &truth->ranges[r];
    vec3 anchor = truth->global_positions[(size_t)range->start * (size_t)nb + (size_t)model->pelvis];
    anchor.y = 0.0f;
    memset(was_planted, 0, sizeof was_planted);
    for (int frame = range->start; frame < range->stop && !rc; frame++) {
      int i = frame - range->start;
      const vec3 *tg = truth->global_positions + (size_t)frame * (size_t)nb;
      const quat *tr = truth->global_rotations + (size_t)frame * (size_t)nb;
      for (int b = 0; b < nb; b++)
        truth_scaled[b] = vec3_add(anchor, vec3_scale(vec3_sub(tg[b], anchor), o->tracker_scale));
      anim_tracker_input_t in[ANIM_POSE_FIT_MAX_TRACKERS];
      memset(in, 0, sizeof in);
      float t = (float)i * dt;
      int dropping = o->drop_tracker >= 0 && t >= o->drop_start && t < o->drop_start + o->drop_seconds;
      for (int k = 0; k < model->ntrackers; k++) {
        int b = model->tracker_bones[k];
        vec3 point =
            vec3_add(truth_scaled[b], quat_mul_vec3(tr[b], vec3_scale(model->tracker_offsets[k], o->tracker_scale)));
        vec3 noise = vec3_make(fit_eval_gaussian(&seed), fit_eval_gaussian(&seed), fit_eval_gaussian(&seed));
        in[k].present = !(dropping && k == o->drop_tracker);
        in[k].position = vec3_add(point, vec3_scale(noise, o->noise));
        in[k].weight = 1.0f;
        in[k].has_orientation = (o->orientations >> k) & 1u;
        in[k].orientation = tr[b];
      }
      double t0 = now_s();
      rc = anim_pose_fitter_step(&fitter, in, dt);
      out->step_seconds += now_s() - t0;
      if (rc) break;
      scale_sum += fitter.scale;
      const vec3 *fg = fitter.global_positions;
      for (int b = 0; b < nb; b++) {
        if (!eval[b]) continue;
        double e = vec3_length(vec3_sub(fg[b], truth_scaled[b]));
        sum += e, n++;
        if (tracked[b]) sum_tracked += e, n_tracked++;
        else sum_untracked += e, n_untracked++;
        if (e > out->worst_error) out->worst_error = e, out->worst_bone = b, out->worst_frame = frame;
        if (dropping && b == model->tracker_bones[o->drop_tracker]) sum_drop += e, n_drop++;
        vec3 *fh = fit_hist + 4 * (size_t)b, *th = true_hist + 4 * (size_t)b;
        memmove(fh + 1, fh, 3 * sizeof(vec3)), memmove(th + 1, th, 3 * sizeof(vec3));
        fh[0] = fg[b], th[0] = truth_scaled[b];
        if (i >= 3) {
          fit_jerk += vec3_length(jerk(fh)) / ((double)dt * dt * dt);
          truth_jerk += vec3_length(jerk(th)) / ((double)dt * dt * dt);
          n_jerk++;
        }
      }
      /* contacts: the truth's, and the fit's prior frame's (same bones) */
      const uint8_t *planted = truth->contacts + (size_t)frame * (size_t)truth->ncontacts;
      const uint8_t *fit_planted = db->contacts + (size_t)fitter.prior_frame * (size_t)db->ncontacts;
      for (int c = 0; c < truth->ncontacts && i >= 1; c++) {
        int b = truth->contact_bones[c];
        double fit_speed = vec3_length(horizontal(vec3_sub(fit_hist[4 * (size_t)b], fit_hist[4 * (size_t)b + 1]))) / dt;
        if (planted[c] && planted[c - truth->ncontacts]) {
          truth_slide += vec3_length(horizontal(vec3_sub(true_hist[4 * (size_t)b], true_hist[4 * (size_t)b + 1]))) / dt;
          fit_slide_truth += fit_speed;
          n_slide++;
        }
        if (c < db->ncontacts && fit_planted[c] && was_planted[c]) fit_slide += fit_speed, n_fit_slide++;
        was_planted[c] = c < db->ncontacts && fit_planted[c];
      }
      if (o->frame_cb) o->frame_cb(o->user, r, frame, &fitter, truth_scaled);
      out->frames++;
    }
  }
  out->joints = 0;
  for (int b = 0; b < nb; b++) out->joints += eval ? eval[b] : 0;
  out->mean_error = n ? sum / n : 0;
  out->mean_tracked_error = n_tracked ? sum_tracked / n_tracked : 0;
  out->mean_untracked_error = n_untracked ? sum_untracked / n_untracked : 0;
  out->dropped_error = n_drop ? sum_drop / n_drop : 0;
  out->fit_slide = n_fit_slide ? fit_slide / n_fit_slide : 0;
  out->fit_slide_truth_planted = n_slide ? fit_slide_truth / n_slide : 0;
  out->truth_slide = n_slide ? truth_slide / n_slide : 0;
  out->fit_jerk = n_jerk ? fit_jerk / n_jerk : 0;
  out->truth_jerk = n_jerk ? truth_jerk / n_jerk : 0;
  out->mean_scale = out->frames ? scale_sum / out->frames : 0;
  out->final_scale = fitter.scale;
  free(eval), free(truth_scaled), free(fit_hist), free(true_hist);
  anim_pose_fitter_free(&fitter);
  return rc;
}
