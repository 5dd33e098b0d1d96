/* lmm_recover.c: the normalization recovered from the networks (see lmm_recover.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "learned/lmm_recover.h"

#define AHEAD 60 /* the furthest trajectory sample, frames */

void anim_lmm_recover_options_default(anim_lmm_recover_options_t *o) {
  o->rollouts = 2048;
  o->frames = 200;
  o->warmup = 20;
  o->batch = 256;
  o->seed = 20200714u;
  o->scale_min = 0.3f;
  o->scale_max = 1.5f;
  o->reproject = 20;
}

typedef struct {
  double n, x, r, xx, xr, rr;
} sums_t;

static void accumulate(sums_t *s, double x, double r) {
  s->n += 1.0, s->x += x, s->r += r, s->xx += x * x, s->xr += x * r, s->rr += r * r;
}

static float uniform01(unsigned *state) { /* (0, 1) */
  *state ^= *state << 13, *state ^= *state >> 17, *state ^= *state << 5;
  return ((float)(*state >> 8) + 0.5f) / 16777216.0f;
}
static float normal(unsigned *state) { /* Box-Muller */
  float u = uniform01(state), v = uniform01(state);
  return sqrtf(-2.0f * logf(u)) * cosf(2.0f * ANIM_PI * v);
}

static quat yaw(float angle) { return quat_from_angle_axis(angle, vec3_make(0.0f, 1.0f, 0.0f)); }

/* One batch of rollouts: accumulate every sample's (normalized, raw) pairs. */
static void run_batch(const anim_lmm_networks_t *nets, const anim_lmm_recover_options_t *o, int rollouts,
                      unsigned *rng, sums_t *sums, float *buf, long *io_samples) {
  int nstate = nets->nstate, frames = o->frames;
  float dt = 1.0f / ANIM_LMM_FRAME_RATE;
  size_t nn_floats = anim_nnet_scratch_floats(nets->projector, rollouts);
  size_t t = anim_nnet_scratch_floats(nets->stepper, rollouts);
  if (t > nn_floats) nn_floats = t;
  t = anim_nnet_scratch_floats(nets->pose_network, rollouts);
  if (t > nn_floats) nn_floats = t;
  float *nn = buf, *queries = nn + nn_floats, *states = queries + (size_t)rollouts * ANIM_LMM_FEATURES;
  float *steps = states + (size_t)rollouts * nstate, *poses = steps + (size_t)rollouts * nstate;
  float *x = poses + (size_t)rollouts * ANIM_LMM_POSE_OUTPUTS;         /* [rollout][frame][27] */
  float *raw = x + (size_t)rollouts * frames * ANIM_LMM_FEATURES;      /* [rollout][frame][15] */
  float *root = raw + (size_t)rollouts * frames * 15;                  /* [rollout][frame]: vx, vz, wy */
  const anim_nnet_t *proj = nets->projector;
  for (int i = 0; i < rollouts; i++) {
    float g = o->scale_min + (o->scale_max - o->scale_min) * uniform01(rng);
    for (int j = 0; j < ANIM_LMM_FEATURES; j++)
      queries[(size_t)i * ANIM_LMM_FEATURES + j] = proj->output_mean[j] + g * proj->output_std[j] * normal(rng);
  }
  anim_nnet_run(proj, queries, ANIM_LMM_FEATURES, states, nstate, rollouts, nn);
  anim_lmm_pose_t pose;
  memset(&pose, 0, sizeof pose);
  for (int f = 0; f < frames; f++) {
    anim_nnet_run(nets->pose_network, states, nstate, poses, ANIM_LMM_POSE_OUTPUTS, rollouts, nn);
    for (int i = 0; i < rollouts; i++) {
      vec3 v, w;
      size_t at = (size_t)i * frames + (size_t)f;
      anim_lmm_decode(poses + (size_t)i * ANIM_LMM_POSE_OUTPUTS, nets, &pose, &v, &w, NULL);
      anim_lmm_pose_features(raw + at * 15, &pose, v, w);
      memcpy(x + at * ANIM_LMM_FEATURES, states + (size_t)i * nstate, ANIM_LMM_FEATURES * sizeof(float));
      root[at * 3] = v.x, root[at * 3 + 1] = v.z, root[at * 3 + 2] = w.y;
    }
    anim_nnet_run(nets->stepper, states, nstate, steps, nstate, rollouts, nn);
    for (size_t j = 0; j < (size_t)rollouts * (size_t)nstate; j++) states[j] += dt * steps[j];
    if (o->reproject > 0 && (f + 1) % o->reproject == 0) {
      /* Back onto the data: project each state's own features. */
      for (int i = 0; i < rollouts; i++)
        memcpy(queries + (size_t)i * ANIM_LMM_FEATURES, states + (size_t)i * nstate, ANIM_LMM_FEATURES * sizeof(float));
      anim_nnet_run(proj, queries, ANIM_LMM_FEATURES, states, nstate, rollouts, nn);
    }
  }
  /* Per rollout: the root's path (trapezoid rule on the decoded velocities),
   * then every sample's raw trajectory against its normalized one. */
  vec3 *positions = malloc(sizeof(vec3) * (size_t)frames);
  float *angles = malloc(sizeof(float) * (size_t)frames);
  if (!positions || !angles) {
    free(positions), free(angles);
    return;
  }
  for (int i = 0; i < rollouts; i++) {
    const float *r = root + (size_t)i * frames * 3;
    positions[0] = vec3_zero(), angles[0] = 0.0f;
    for (int f = 1; f < frames; f++) {
      angles[f] = angles[f - 1] + 0.5f * dt * (r[3 * (f - 1) + 2] + r[3 * f + 2]);
      vec3 v0 = quat_mul_vec3(yaw(angles[f - 1]), vec3_make(r[3 * (f - 1)], 0.0f, r[3 * (f - 1) + 1]));
      vec3 v1 = quat_mul_vec3(yaw(angles[f]), vec3_make(r[3 * f], 0.0f, r[3 * f + 1]));
      positions[f] = vec3_add(positions[f - 1], vec3_scale(vec3_add(v0, v1), 0.5f * dt));
    }
    for (int f = o->warmup; f + AHEAD < frames; f++) {
      size_t at = (size_t)i * frames + (size_t)f;
      const float *xs = x + at * ANIM_LMM_FEATURES;
      vec3 ahead[ANIM_LMM_TRAJECTORY];
      quat facing[ANIM_LMM_TRAJECTORY];
      for (int k = 0; k < ANIM_LMM_TRAJECTORY; k++) {
        int g = f + (k + 1) * AHEAD / ANIM_LMM_TRAJECTORY;
        ahead[k] = positions[g], facing[k] = yaw(angles[g]);
      }
      float trajectory[12];
      anim_lmm_trajectory_features(trajectory, positions[f], yaw(angles[f]), ahead, facing);
      for (int j = 0; j < 15; j++) accumulate(&sums[j], xs[j], raw[at * 15 + (size_t)j]);
      for (int j = 0; j < 12; j++) accumulate(&sums[15 + j], xs[15 + j], trajectory[j]);
      (*io_samples)++;
    }
  }
  free(positions), free(angles);
}

int anim_lmm_recover(const anim_lmm_networks_t *nets, const anim_lmm_recover_options_t *o, anim_lmm_recovery_t *out,
                     char *err, int errlen) {
  memset(out, 0, sizeof *out);
  if (!nets || !o || o->rollouts < 1 || o->batch < 1 || o->warmup < 0 || o->frames <= o->warmup + AHEAD ||
      !(o->scale_min > 0.0f) || !(o->scale_max >= o->scale_min)) {
    if (err && errlen > 0) snprintf(err, (size_t)errlen, "bad recovery options");
    return ANIM_EINVAL;
  }
  int batch = o->batch < o->rollouts ? o->batch : o->rollouts;
  size_t nn_floats = anim_nnet_scratch_floats(nets->pose_network, batch) +
                     anim_nnet_scratch_floats(nets->projector, batch) + anim_nnet_scratch_floats(nets->stepper, batch);
  size_t floats = nn_floats + (size_t)batch * (ANIM_LMM_FEATURES + 2 * (size_t)nets->nstate + ANIM_LMM_POSE_OUTPUTS) +
                  (size_t)batch * (size_t)o->frames * (ANIM_LMM_FEATURES + 15 + 3);
  float *buf = malloc(floats * sizeof(float));
  if (!buf) {
    if (err && errlen > 0) snprintf(err, (size_t)errlen, "out of memory for %zu floats", floats);
    return ANIM_ENOMEM;
  }
  sums_t sums[ANIM_LMM_FEATURES];
  memset(sums, 0, sizeof sums);
  unsigned rng = o->seed ? o->seed : 1u;
  for (int done = 0; done < o->rollouts; done += batch) {
    int count = o->rollouts - done < batch ? o->rollouts - done : batch;
    run_batch(nets, o, count, &rng, sums, buf, &out->samples);
  }
  free(buf);
  out->normalization.networks_hash = nets->hash;
  for (int g = 0; g < ANIM_LMM_GROUPS; g++) {
    const anim_lmm_group_t *group = &anim_lmm_groups[g];
    double sxx = 0.0, sxr = 0.0, srr = 0.0;
    for (int j = group->first; j < group->first + group->count; j++) {
      const sums_t *s = &sums[j];
      sxx += s->xx - s->x * s->x / s->n, sxr += s->xr - s->x * s->r / s->n, srr += s->rr - s->r * s->r / s->n;
    }
    double slope = sxx > 0.0 ? sxr / sxx : 0.0;
    if (!(sxx > 0.0) || !(slope > 0.0) || !(srr > 0.0)) {
      if (err && errlen > 0) snprintf(err, (size_t)errlen, "group %s: no fit (slope %g)", group->name, slope);
      return ANIM_ERANGE;
    }
    double spread = 0.0;
    for (int j = group->first; j < group->first + group->count; j++) {
      const sums_t *s = &sums[j];
      double cxx = s->xx - s->x * s->x / s->n, cxr = s->xr - s->x * s->r / s->n;
      out->normalization.offset[j] = (float)((s->r - slope * s->x) / s->n);
      out->normalization.scale[j] = (float)slope;
      if (fabs(cxr / cxx / slope - 1.0) > spread) spread = fabs(cxr / cxx / slope - 1.0);
    }
    out->r2[g] = 1.0 - (srr - 2.0 * slope * sxr + slope * slope * sxx) / srr;
    out->slope_spread[g] = spread;
  }
  return 0;
}
