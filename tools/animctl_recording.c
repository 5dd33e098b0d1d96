/*
 * animctl_recording.c: a recording file read back (see animctl_recording.h).
 * The file is what print_header/stream_print_frame in animctl_stream.c write,
 * one object a line with a fixed key order and no escapes in bone names, so
 * it is read by keys, not by a general JSON parser; anything else is an
 * error naming the line.
 */
#include "animctl_recording.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"

typedef struct {
  const char *path;
  int line;
  char *err;
  int errlen;
} where_t;

static int fail(const where_t *w, const char *what) {
  if (w->err) snprintf(w->err, (size_t)w->errlen, "%s:%d: %s", w->path, w->line, what);
  return ANIM_EFORMAT;
}

/* The text after "key": in line (NULL when absent). */
static const char *after_key(const char *line, const char *key) {
  char pattern[64];
  snprintf(pattern, sizeof pattern, "\"%s\":", key);
  const char *p = strstr(line, pattern);
  return p ? p + strlen(pattern) : NULL;
}

/* n floats of the array "key":[...] at or after from into out; 0 or -1. */
static int read_floats(const char *from, const char *key, float *out, int n) {
  const char *p = after_key(from, key);
  if (!p || *p != '[') return -1;
  p++;
  for (int i = 0; i < n; i++) {
    char *end;
    out[i] = strtof(p, &end);
    if (end == p) return -1;
    p = end;
    if (*p != (i + 1 < n ? ',' : ']')) return -1;
    p++;
  }
  return 0;
}

static int read_header(const where_t *w, const char *line, anim_skeleton_t *sk, float *tick_rate) {
  const char *p = after_key(line, "tick_rate");
  if (!p || sscanf(p, "%f", tick_rate) != 1 || !(*tick_rate > 0)) return fail(w, "header: no tick_rate");
  if (!(p = after_key(line, "bones")) || *p++ != '[') return fail(w, "header: no bones");
  sk->nbones = 0;
  while (*p == '"') {
    const char *end = strchr(p + 1, '"');
    if (!end || end - p - 1 >= ANIM_NAME_MAX || sk->nbones == ANIM_MAX_BONES)
      return fail(w, "header: a bone name too long, or too many bones");
    memcpy(sk->names[sk->nbones], p + 1, (size_t)(end - p - 1));
    sk->names[sk->nbones++][end - p - 1] = '\0';
    p = end + 1;
    if (*p == ',') p++;
  }
  if (*p != ']' || sk->nbones == 0) return fail(w, "header: bones is not a list of names");
  if (!(p = after_key(line, "parents")) || *p++ != '[') return fail(w, "header: no parents");
  for (int b = 0; b < sk->nbones; b++) {
    char *end;
    long v = strtol(p, &end, 10);
    if (end == p || v < -1 || v >= b || (b == 0) != (v == -1)) return fail(w, "header: parents out of order");
    sk->parents[b] = (int)v;
    p = end + 1;
  }
  return 0;
}

int recording_frames_append(recording_frames_t *f, uint64_t tick, uint64_t step, int nbones, const vec3 *positions,
                            const quat *rotations) {
  if (f->nframes == 0) f->nbones = nbones;
  if (nbones != f->nbones || nbones < 1 || step == 0) return ANIM_EINVAL;
  uint64_t steps = 1;
  if (f->nframes > 0) {
    if (tick <= f->last_tick || (tick - f->last_tick) % step != 0) return ANIM_EINVAL;
    steps = (tick - f->last_tick) / step;
    if (steps > 100000) return ANIM_EINVAL;
  }
  while (f->nframes + (int)steps > f->capacity) {
    int cap = f->capacity ? 2 * f->capacity : 256;
    vec3 *p = realloc(f->positions, (size_t)cap * (size_t)nbones * sizeof *p);
    if (p) f->positions = p;
    quat *q = realloc(f->rotations, (size_t)cap * (size_t)nbones * sizeof *q);
    if (q) f->rotations = q;
    if (!p || !q) return ANIM_ENOMEM;
    f->capacity = cap;
  }
  /* Skipped steps: between the last frame and this pose. */
  for (uint64_t j = 1; j < steps; j++) {
    float t = (float)j / (float)steps;
    size_t prev = (size_t)(f->nframes - 1) * (size_t)nbones, k = (size_t)f->nframes * (size_t)nbones;
    /* prev stays the last real frame: offset by the frames filled so far. */
    prev -= (size_t)(j - 1) * (size_t)nbones;
    for (int b = 0; b < nbones; b++) {
      f->positions[k + b] = vec3_lerp(f->positions[prev + b], positions[b], t);
      f->rotations[k + b] = quat_slerp_shortest(f->rotations[prev + b], rotations[b], t);
    }
    f->nframes++;
    f->filled++;
  }
  size_t k = (size_t)f->nframes * (size_t)nbones;
  memcpy(f->positions + k, positions, (size_t)nbones * sizeof *positions);
  memcpy(f->rotations + k, rotations, (size_t)nbones * sizeof *rotations);
  f->nframes++;
  f->last_tick = tick;
  return 0;
}

int recording_frames_clip(const recording_frames_t *f, const anim_skeleton_t *skeleton, float frame_time,
                          anim_clip_t *out_clip) {
  memset(out_clip, 0, sizeof *out_clip);
  if (f->nframes < 1 || skeleton->nbones != f->nbones) return ANIM_EINVAL;
  anim_skeleton_t *sk = malloc(sizeof *sk);
  if (!sk) return ANIM_ENOMEM;
  *sk = *skeleton;
  for (int b = 0; b < sk->nbones; b++) sk->offsets[b] = f->positions[b];
  int rc = anim_clip_alloc(out_clip, sk, f->nframes, frame_time);
  free(sk);
  if (rc) return rc;
  snprintf(out_clip->name, sizeof out_clip->name, "recording");
  size_t n = (size_t)f->nframes * (size_t)f->nbones;
  memcpy(out_clip->local_positions, f->positions, n * sizeof *f->positions);
  memcpy(out_clip->local_rotations, f->rotations, n * sizeof *f->rotations);
  return 0;
}

void recording_frames_free(recording_frames_t *f) {
  free(f->positions);
  free(f->rotations);
  memset(f, 0, sizeof *f);
}

int recording_read(const char *path, uint64_t character, anim_clip_t *out_clip, uint64_t *out_character,
                   uint64_t *out_filled, char *err, int errlen) {
  memset(out_clip, 0, sizeof *out_clip);
  where_t w = {path, 0, err, errlen};
  FILE *in = fopen(path, "r");
  if (!in) {
    if (err) snprintf(err, (size_t)errlen, "%s: cannot read", path);
    return ANIM_EIO;
  }
  anim_skeleton_t *sk = calloc(1, sizeof *sk);
  float *v = malloc(ANIM_MAX_BONES * 4 * sizeof *v);
  vec3 *pos = malloc(ANIM_MAX_BONES * sizeof *pos);
  quat *rot = malloc(ANIM_MAX_BONES * sizeof *rot);
  recording_frames_t frames = {0};
  char *line = NULL;
  size_t cap = 0;
  float tick_rate = 0;
  int rate_divisor = 1, rc = sk && v && pos && rot ? 0 : ANIM_ENOMEM;
  char needle[48];
  while (!rc && getline(&line, &cap, in) > 0) {
    w.line++;
    if (w.line == 1) {
      rc = strstr(line, "\"type\":\"header\"") ? read_header(&w, line, sk, &tick_rate)
                                               : fail(&w, "not a recording: no header line first");
      const char *p = after_key(line, "rate_divisor");
      if (!rc && p && (sscanf(p, "%d", &rate_divisor) != 1 || rate_divisor < 1))
        rc = fail(&w, "header: rate_divisor is not a count");
      continue;
    }
    if (!strstr(line, "\"type\":\"frame\"")) continue;
    const char *p = after_key(line, "tick");
    unsigned long long tick;
    if (!p || sscanf(p, "%llu", &tick) != 1) rc = fail(&w, "frame: no tick");
    if (!rc && !character && (p = after_key(line, "poses")) && !strncmp(p, "[{\"id\":", 7))
      character = strtoull(p + 7, NULL, 10);
    snprintf(needle, sizeof needle, "{\"id\":%llu,", (unsigned long long)character);
    const char *pose = rc ? NULL : strstr(line, needle);
    if (!pose) continue;
    int n = sk->nbones;
    if (read_floats(pose, "positions", v, 3 * n) != 0) {
      rc = fail(&w, "frame: positions wanted, 3 per bone (a stream of --rotations-only has the root's alone)");
      break;
    }
    for (int b = 0; b < n; b++) pos[b] = vec3_make(v[3 * b], v[3 * b + 1], v[3 * b + 2]);
    if (read_floats(pose, "rotations", v, 4 * n) != 0) {
      rc = fail(&w, "frame: rotations wanted, 4 per bone");
      break;
    }
    for (int b = 0; b < n; b++) rot[b] = quat_normalize(quat_make(v[4 * b], v[4 * b + 1], v[4 * b + 2], v[4 * b + 3]));
    rc = recording_frames_append(&frames, tick, (uint64_t)rate_divisor, n, pos, rot);
    if (rc == ANIM_EINVAL) rc = fail(&w, "frame: its tick is not after the last one's by whole steps");
  }
  if (!rc && w.line == 0) rc = fail(&w, "empty file");
  if (!rc && frames.nframes == 0) {
    char what[80];
    snprintf(what, sizeof what, "no frame of character %llu", (unsigned long long)character);
    rc = fail(&w, what);
  }
  if (!rc) rc = recording_frames_clip(&frames, sk, (float)rate_divisor / tick_rate, out_clip);
  if (!rc) {
    *out_character = character;
    *out_filled = frames.filled;
  }
  if (rc == ANIM_ENOMEM && err) snprintf(err, (size_t)errlen, "%s: out of memory", path);
  recording_frames_free(&frames);
  free(line);
  free(v);
  free(pos);
  free(rot);
  free(sk);
  fclose(in);
  return rc;
}
