/*
 * marker_gate.c: each marker's samples checked against its prediction
 * within the database's largest acceleration (marker_gate.h says why).
 */
#include <math.h>
#include <string.h>

#include "marker_gate.h"

void anim_marker_gate_bounds(const anim_database_t *db, const anim_marker_t *markers, int nmarkers, float *out_accel) {
  int nb = db->nbones;
  float rate2 = db->frame_rate * db->frame_rate;
  for (int i = 0; i < nmarkers; i++) {
    int b = markers[i].bone;
    vec3 off = markers[i].has_offset ? markers[i].offset : vec3_zero();
    double worst = 0;
    for (int r = 0; r < db->nranges; r++) {
      const anim_range_t *range = &db->ranges[r];
      vec3 p[3] = {vec3_zero(), vec3_zero(), vec3_zero()};
      for (int f = range->start; f < range->stop; f++) {
        size_t k = (size_t)f * nb + b;
        vec3 x = vec3_add(db->global_positions[k], quat_mul_vec3(db->global_rotations[k], off));
        p[0] = p[1], p[1] = p[2], p[2] = x;
        if (f - range->start < 2) continue;
        vec3 a = vec3_add(vec3_sub(p[2], vec3_scale(p[1], 2.0f)), p[0]);
        worst = fmax(worst, vec3_length(a));
      }
    }
    out_accel[i] = (float)(worst * rate2);
  }
}

long anim_marker_gate_run(const float *accel, int nmarkers, const vec3 *positions, const unsigned char *present,
                          int nframes, float frame_time, vec3 *out_goals, unsigned char *out_rejected) {
  size_t total = (size_t)nframes * (size_t)nmarkers;
  memcpy(out_goals, positions, sizeof(vec3) * total);
  if (out_rejected) memset(out_rejected, 0, total);
  long rejected = 0;
  for (int i = 0; i < nmarkers; i++) {
    int last = -1, accepted = 0; /* last accepted frame; accepted samples so far */
    vec3 velocity = vec3_zero();
    int gap_start = -1; /* first rejected frame since last */
    for (int f = 0; f < nframes; f++) {
      size_t k = (size_t)f * nmarkers + i;
      if (present && !present[k]) continue;
      vec3 x = positions[k];
      int ok = accepted < 2;
      if (!ok) {
        float t = (float)(f - last) * frame_time;
        vec3 predicted = vec3_add(positions[(size_t)last * nmarkers + i], vec3_scale(velocity, t));
        ok = vec3_length(vec3_sub(x, predicted)) <= accel[i] * t * t;
      }
      if (!ok) {
        rejected++;
        if (out_rejected) out_rejected[k] = 1;
        if (gap_start < 0) gap_start = f;
        continue;
      }
      if (last >= 0) {
        vec3 from = positions[(size_t)last * nmarkers + i];
        float span = (float)(f - last);
        velocity = vec3_scale(vec3_sub(x, from), 1.0f / (span * frame_time));
        /* The rejected samples between: on the line from the last accepted to this one. */
        for (int g = gap_start >= 0 ? gap_start : f; g < f; g++) {
          size_t kg = (size_t)g * nmarkers + i;
          if (!present || present[kg]) out_goals[kg] = vec3_lerp(from, x, (float)(g - last) / span);
        }
      }
      /* Taken again after rejected samples: the marker may have moved for
       * good (a jump of position that the slope over the gap would turn
       * into speed), so its velocity starts over from the next sample. */
      if (gap_start >= 0) accepted = 0;
      gap_start = -1;
      last = f, accepted++;
    }
    /* Rejected to the end: the prediction. */
    if (gap_start >= 0)
      for (int g = gap_start; g < nframes; g++) {
        size_t kg = (size_t)g * nmarkers + i;
        if (present && !present[kg]) continue;
        out_goals[kg] = vec3_add(positions[(size_t)last * nmarkers + i], vec3_scale(velocity, (float)(g - last) * frame_time));
      }
  }
  return rejected;
}
