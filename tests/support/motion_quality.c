/* motion_quality.c: the motion-quality meter (see motion_quality.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "motion_quality.h"

/* Frames left out at each end of a contact (issue 16's definition). */
#define CONTACT_END_FRAMES 2
/* Responsiveness: the share of the desired speed that counts as reached. */
#define REACHED_SHARE 0.9f

static int cmp_float(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return x < y ? -1 : x > y;
}

/* The q-quantile of n values (sorted in place). */
static float quantile(float *values, long n, float q) {
  if (n <= 0) return 0.0f;
  qsort(values, (size_t)n, sizeof *values, cmp_float);
  long i = (long)(q * (float)(n - 1) + 0.5f);
  return values[i < n ? i : n - 1];
}

void anim_quality_source_speeds(const anim_database_t *db, float *out_max) {
  int nb = db->nbones;
  for (int b = 0; b < nb; b++) out_max[b] = 0.0f;
  for (int r = 0; r < db->nranges; r++)
    for (int f = db->ranges[r].start + 1; f < db->ranges[r].stop; f++) {
      const vec3 *a = db->global_positions + (size_t)(f - 1) * (size_t)nb, *b = a + nb;
      for (int k = 0; k < nb; k++) {
        float speed = vec3_length(vec3_sub(b[k], a[k])) * db->frame_rate;
        if (speed > out_max[k]) out_max[k] = speed;
      }
    }
}

/* The data's contact bones' heights over its flagged frames, 95th percentile. */
static float data_contact_height_p95(const anim_database_t *db) {
  long n = 0;
  float *h = malloc(sizeof *h * (size_t)(db->nframes * (db->ncontacts ? db->ncontacts : 1)));
  if (!h) return 0.0f;
  for (int f = 0; f < db->nframes; f++)
    for (int c = 0; c < db->ncontacts; c++)
      if (db->contacts[(size_t)f * (size_t)db->ncontacts + (size_t)c])
        h[n++] = db->global_positions[(size_t)f * (size_t)db->nbones + (size_t)db->contact_bones[c]].y;
  float p95 = quantile(h, n, 0.95f);
  free(h);
  return p95;
}

int anim_quality_meter_init(anim_quality_meter_t *m, const anim_database_t *db) {
  memset(m, 0, sizeof *m);
  m->nbones = db->nbones;
  m->nfeet = db->ncontacts;
  memcpy(m->feet, db->contact_bones, sizeof m->feet);
  m->source_max = malloc(sizeof *m->source_max * (size_t)m->nbones);
  m->previous = calloc((size_t)m->nbones, sizeof *m->previous);
  m->run_capacity = 64;
  int ok = m->source_max && m->previous;
  for (int s = 0; s < m->nfeet; s++) {
    m->run_speeds[s] = malloc(sizeof(float) * (size_t)m->run_capacity);
    m->run_heights[s] = malloc(sizeof(float) * (size_t)m->run_capacity);
    ok = ok && m->run_speeds[s] && m->run_heights[s];
  }
  if (!ok) return anim_quality_meter_free(m), -1;
  anim_quality_source_speeds(db, m->source_max);
  m->data_height_p95 = data_contact_height_p95(db);
  m->pop_bone = -1;
  return 0;
}

void anim_quality_meter_free(anim_quality_meter_t *m) {
  free(m->source_max), free(m->previous);
  for (int s = 0; s < ANIM_MAX_CONTACTS; s++) free(m->run_speeds[s]), free(m->run_heights[s]);
  free(m->slides), free(m->heights), free(m->all_heights);
  memset(m, 0, sizeof *m);
}

void anim_quality_meter_command(anim_quality_meter_t *m, vec3 desired) {
  m->commands++;
  m->command_active = vec3_length(desired) > 0.1f;
  if (!m->command_active) m->commands--; /* a stop is not timed */
  m->command = desired;
  m->command_time = m->time;
}

static int grow(void **array, long *capacity, long need, size_t size) {
  if (need <= *capacity) return 0;
  long cap = *capacity ? *capacity * 2 : 1024;
  while (cap < need) cap *= 2;
  void *p = realloc(*array, (size_t)cap * size);
  if (!p) return -1;
  *array = p, *capacity = cap;
  return 0;
}

/* Keeps a finished contact's samples, its ends left out. Frames 0..k-1 of
 * the contact; run_speeds[j] is the step into frame j+1. */
static void end_contact(anim_quality_meter_t *m, int s) {
  int k = m->run_frames[s];
  m->run_frames[s] = 0;
  for (int frame = CONTACT_END_FRAMES; frame <= k - 1 - CONTACT_END_FRAMES; frame++) {
    if (grow((void **)&m->heights, &m->height_capacity, m->nheights + 1, sizeof *m->heights)) return;
    m->heights[m->nheights++] = m->run_heights[s][frame];
    /* The step from frame-1 into frame, both kept. */
    if (frame - 1 < CONTACT_END_FRAMES) continue;
    if (grow((void **)&m->slides, &m->slide_capacity, m->nslides + 1, sizeof *m->slides)) return;
    anim_quality_slide_t sample = {m->run_speeds[s][frame - 1], m->run_start[s] + frame, s};
    m->slides[m->nslides++] = sample;
  }
}

static void run_push(anim_quality_meter_t *m, int s, float speed, float height) {
  if (m->run_frames[s] >= m->run_capacity) {
    int cap = m->run_capacity * 2;
    for (int f = 0; f < m->nfeet; f++) {
      float *a = realloc(m->run_speeds[f], sizeof(float) * (size_t)cap);
      if (a) m->run_speeds[f] = a;
      float *b = realloc(m->run_heights[f], sizeof(float) * (size_t)cap);
      if (b) m->run_heights[f] = b;
      if (!a || !b) return;
    }
    m->run_capacity = cap;
  }
  int k = m->run_frames[s]++;
  m->run_heights[s][k] = height;
  if (k > 0) m->run_speeds[s][k - 1] = speed;
}

void anim_quality_meter_gap(anim_quality_meter_t *m) {
  for (int s = 0; s < m->nfeet; s++) end_contact(m, s);
  m->have_previous = 0;
  m->command_active = 0;
}

void anim_quality_meter_frame(anim_quality_meter_t *m, const vec3 *p, uint32_t flags, long data_flags, float dt) {
  m->time += dt;
  for (int s = 0; s < m->nfeet; s++) {
    int on = (flags >> s) & 1u;
    m->foot_frames++;
    m->flagged += on;
    if (data_flags >= 0) m->data_frames++, m->data_flagged += (data_flags >> s) & 1;
    if (!on) {
      end_contact(m, s);
      continue;
    }
    vec3 step = m->have_previous ? vec3_sub(p[m->feet[s]], m->previous[m->feet[s]]) : vec3_zero();
    float speed = sqrtf(step.x * step.x + step.z * step.z) / dt;
    if (m->run_frames[s] == 0) m->run_start[s] = m->frame;
    run_push(m, s, speed, p[m->feet[s]].y);
    if (!grow((void **)&m->all_heights, &m->all_height_capacity, m->nall_heights + 1, sizeof *m->all_heights))
      m->all_heights[m->nall_heights++] = p[m->feet[s]].y;
  }
  if (m->have_previous) {
    for (int b = 0; b < m->nbones; b++) {
      float speed = vec3_length(vec3_sub(p[b], m->previous[b])) / dt;
      float ratio = m->source_max[b] > 1e-3f ? speed / m->source_max[b] : 0.0f;
      if (ratio > m->pop_ratio)
        m->pop_ratio = ratio, m->pop_bone = b, m->pop_frame = m->frame, m->pop_speed = speed,
        m->pop_source = m->source_max[b];
    }
    if (m->command_active) {
      vec3 v = vec3_scale(vec3_sub(p[0], m->previous[0]), 1.0f / dt);
      float desired = vec3_length(m->command);
      if (vec3_dot(v, m->command) / desired >= REACHED_SHARE * desired) {
        float t = m->time - m->command_time;
        m->reached++, m->response_sum += t;
        if (t > m->response_max) m->response_max = t;
        m->command_active = 0;
      }
    }
  }
  memcpy(m->previous, p, sizeof *p * (size_t)m->nbones);
  m->have_previous = 1;
  m->previous_flags = flags;
  m->frame++;
}

void anim_quality_meter_result(anim_quality_meter_t *m, anim_quality_t *out) {
  for (int s = 0; s < m->nfeet; s++) end_contact(m, s);
  memset(out, 0, sizeof *out);
  out->frames = m->frame;
  out->slide_samples = m->nslides;
  out->slide_worst_foot = -1;
  float *copy = malloc(sizeof *copy * (size_t)(m->nslides + 1));
  for (long i = 0; i < m->nslides; i++) {
    const anim_quality_slide_t *sample = &m->slides[i];
    if (out->slide_worst_foot < 0 || sample->speed > out->slide_max)
      out->slide_max = sample->speed, out->slide_worst_foot = sample->foot, out->slide_worst_frame = sample->frame;
    if (copy) copy[i] = sample->speed;
  }
  if (copy) {
    out->slide_p50 = quantile(copy, m->nslides, 0.5f);
    out->slide_p95 = quantile(copy, m->nslides, 0.95f);
    free(copy);
  }
  copy = malloc(sizeof *copy * (size_t)(m->nheights + 1));
  if (copy) {
    memcpy(copy, m->heights, sizeof *copy * (size_t)m->nheights);
    out->flagged_height_p95 = quantile(copy, m->nheights, 0.95f);
    free(copy);
  }
  copy = malloc(sizeof *copy * (size_t)(m->nall_heights + 1));
  if (copy) {
    memcpy(copy, m->all_heights, sizeof *copy * (size_t)m->nall_heights);
    out->contact_height_p99 = quantile(copy, m->nall_heights, 0.99f);
    out->contact_height_max = m->nall_heights ? copy[m->nall_heights - 1] : 0.0f; /* sorted */
    free(copy);
  }
  out->data_height_p95 = m->data_height_p95;
  out->pop_ratio = m->pop_ratio, out->pop_bone = m->pop_bone, out->pop_frame = m->pop_frame;
  out->pop_speed = m->pop_speed, out->pop_source = m->pop_source;
  out->commands = m->commands, out->reached = m->reached;
  out->response_mean = m->reached ? m->response_sum / (float)m->reached : 0.0f;
  out->response_max = m->response_max;
  out->flagged_share = m->foot_frames ? (float)m->flagged / (float)m->foot_frames : 0.0f;
  out->data_share = m->data_frames ? (float)m->data_flagged / (float)m->data_frames : -1.0f;
}

void anim_quality_format(const anim_quality_t *q, const anim_skeleton_t *skeleton, char *out, int len) {
  const char *pop = q->pop_bone >= 0 ? skeleton->names[q->pop_bone] : "-";
  snprintf(out, (size_t)len,
           "slide p50 %.3f p95 %.3f max %.3f m/s (foot %d, frame %ld; %ld samples), contact %.2f (data %.2f), "
           "height p95 %.3f m (data %.3f; every flagged frame p99 %.3f max %.3f), pop x%.2f (%s %.2f m/s vs %.2f, frame %ld), response %.2f s mean, %.2f "
           "worst (%d/%d reached)",
           (double)q->slide_p50, (double)q->slide_p95, (double)q->slide_max, q->slide_worst_foot, q->slide_worst_frame,
           q->slide_samples, (double)q->flagged_share, (double)q->data_share, (double)q->flagged_height_p95,
           (double)q->data_height_p95, (double)q->contact_height_p99, (double)q->contact_height_max, (double)q->pop_ratio, pop, (double)q->pop_speed, (double)q->pop_source,
           q->pop_frame, (double)q->response_mean, (double)q->response_max, q->reached, q->commands);
}
