/*
 * bvh.c: BVH import (see bvh.h).
 *
 * A tokenizer over the buffer that counts lines (any of LF, CRLF, CR), a
 * recursive-descent reader of the hierarchy, then the motion block. Each
 * joint's rotation is the product of its rotation channels in the order they
 * are listed (channels "Zrotation Xrotation Yrotation" give Rz Rx Ry, applied
 * to column vectors), its translation the position channels where it has
 * them and its OFFSET otherwise. End sites are read and dropped.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "bvh.h"

#define MAX_CHANNELS 6
/* A file can claim anything; this is far beyond any real clip and keeps
 * allocations bounded before the data is seen. */
#define MAX_FRAMES 10000000

typedef enum { CH_XPOS, CH_YPOS, CH_ZPOS, CH_XROT, CH_YROT, CH_ZROT } channel_t;

typedef struct {
  const char *p, *end, *name;
  int line;
  char *err;
  int errlen;
  char token[128];
} reader_t;

typedef struct {
  int nchannels;
  channel_t channels[MAX_CHANNELS];
} joint_channels_t;

void anim_bvh_options_default(anim_bvh_options_t *o) { o->scale = 0.01f; }

static int error_at(reader_t *r, int code, const char *what) {
  if (r->err && r->errlen > 0) snprintf(r->err, (size_t)r->errlen, "%s:%d: %s", r->name, r->line, what);
  return code;
}

/* The next whitespace-separated token into r->token; 0, or ANIM_ETRUNCATED at the end. */
static int next_token(reader_t *r) {
  for (;;) {
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\r' || *r->p == '\n' || *r->p == '\f' || *r->p == '\v')) {
      if (*r->p == '\n' || (*r->p == '\r' && (r->p + 1 == r->end || r->p[1] != '\n'))) r->line++;
      r->p++;
    }
    if (r->p == r->end) return ANIM_ETRUNCATED;
    size_t n = 0;
    while (r->p < r->end && !(*r->p == ' ' || *r->p == '\t' || *r->p == '\r' || *r->p == '\n' || *r->p == '\f' || *r->p == '\v')) {
      if (n + 1 < sizeof r->token) r->token[n++] = *r->p;
      r->p++;
    }
    r->token[n] = 0;
    return 0;
  }
}

static int expect(reader_t *r, const char *word) {
  if (next_token(r)) {
    char what[96];
    snprintf(what, sizeof what, "file ends where \"%s\" was expected", word);
    return error_at(r, ANIM_ETRUNCATED, what);
  }
  if (strcmp(r->token, word) != 0) {
    char what[200];
    snprintf(what, sizeof what, "expected \"%s\", found \"%.64s\"", word, r->token);
    return error_at(r, ANIM_EFORMAT, what);
  }
  return 0;
}

static int read_float(reader_t *r, float *out) {
  if (next_token(r)) return error_at(r, ANIM_ETRUNCATED, "file ends where a number was expected");
  char *end;
  errno = 0;
  float v = strtof(r->token, &end);
  if (end == r->token || *end || !isfinite(v)) {
    char what[160];
    snprintf(what, sizeof what, "\"%.64s\" is not a finite number", r->token);
    return error_at(r, ANIM_EFORMAT, what);
  }
  *out = v;
  return 0;
}

static int read_int(reader_t *r, long max, int *out) {
  if (next_token(r)) return error_at(r, ANIM_ETRUNCATED, "file ends where a count was expected");
  char *end;
  long v = strtol(r->token, &end, 10);
  if (end == r->token || *end || v < 0 || v > max) {
    char what[160];
    snprintf(what, sizeof what, "\"%.64s\" is not a count in 0..%ld", r->token, max);
    return error_at(r, ANIM_EFORMAT, what);
  }
  *out = (int)v;
  return 0;
}

static int read_offset(reader_t *r, vec3 *out) {
  int rc = expect(r, "OFFSET");
  if (!rc) rc = read_float(r, &out->x);
  if (!rc) rc = read_float(r, &out->y);
  if (!rc) rc = read_float(r, &out->z);
  return rc;
}

static int read_channels(reader_t *r, joint_channels_t *out) {
  static const char *const names[] = {"Xposition", "Yposition", "Zposition", "Xrotation", "Yrotation", "Zrotation"};
  int rc = expect(r, "CHANNELS");
  if (!rc) rc = read_int(r, MAX_CHANNELS, &out->nchannels);
  for (int c = 0; !rc && c < out->nchannels; c++) {
    if (next_token(r)) return error_at(r, ANIM_ETRUNCATED, "file ends inside a CHANNELS list");
    int found = -1;
    for (int k = 0; k < 6; k++)
      if (strcmp(r->token, names[k]) == 0) found = k;
    if (found < 0) {
      char what[160];
      snprintf(what, sizeof what, "unknown channel \"%.64s\"", r->token);
      return error_at(r, ANIM_EFORMAT, what);
    }
    out->channels[c] = (channel_t)found;
  }
  return rc;
}

/* Reads "name { OFFSET CHANNELS (JOINT|End Site)* }" after ROOT or JOINT. */
static int read_joint(reader_t *r, anim_skeleton_t *s, joint_channels_t *ch, int parent, int depth) {
  if (depth > ANIM_MAX_BONES) return error_at(r, ANIM_EFORMAT, "hierarchy nested too deeply");
  if (s->nbones == ANIM_MAX_BONES) return error_at(r, ANIM_EFORMAT, "more joints than the 128 supported");
  if (next_token(r)) return error_at(r, ANIM_ETRUNCATED, "file ends where a joint name was expected");
  if (strlen(r->token) >= ANIM_NAME_MAX) return error_at(r, ANIM_EFORMAT, "joint name longer than 63 bytes");
  int id = s->nbones++;
  memcpy(s->names[id], r->token, strlen(r->token) + 1);
  for (int b = 0; b < id; b++)
    if (strcmp(s->names[b], s->names[id]) == 0) return error_at(r, ANIM_EFORMAT, "joint name used twice");
  s->parents[id] = parent;
  int rc = expect(r, "{");
  if (!rc) rc = read_offset(r, &s->offsets[id]);
  if (!rc) rc = read_channels(r, &ch[id]);
  while (!rc) {
    if (next_token(r)) return error_at(r, ANIM_ETRUNCATED, "file ends inside a joint (missing \"}\")");
    if (strcmp(r->token, "}") == 0) return 0;
    if (strcmp(r->token, "JOINT") == 0) {
      rc = read_joint(r, s, ch, id, depth + 1);
    } else if (strcmp(r->token, "End") == 0) {
      vec3 ignored;
      rc = expect(r, "Site");
      if (!rc) rc = expect(r, "{");
      if (!rc) rc = read_offset(r, &ignored);
      if (!rc) rc = expect(r, "}");
    } else {
      char what[160];
      snprintf(what, sizeof what, "expected JOINT, End Site or \"}\", found \"%.64s\"", r->token);
      return error_at(r, ANIM_EFORMAT, what);
    }
  }
  return rc;
}

static quat axis_rotation(channel_t c, float degrees) {
  vec3 axis = c == CH_XROT ? vec3_make(1, 0, 0) : (c == CH_YROT ? vec3_make(0, 1, 0) : vec3_make(0, 0, 1));
  return quat_from_angle_axis(degrees * (ANIM_PI / 180.0f), axis);
}

static int read_motion(reader_t *r, anim_clip_t *clip, const joint_channels_t *ch, float scale) {
  int rc, nframes;
  float frame_time;
  if ((rc = expect(r, "MOTION")) || (rc = expect(r, "Frames:")) || (rc = read_int(r, MAX_FRAMES, &nframes)) ||
      (rc = expect(r, "Frame")) || (rc = expect(r, "Time:")) || (rc = read_float(r, &frame_time)))
    return rc;
  if (nframes < 1) return error_at(r, ANIM_EFORMAT, "Frames: must be at least 1");
  if (!(frame_time > 0.0f) || frame_time > 10.0f) return error_at(r, ANIM_EFORMAT, "Frame Time: must be in (0, 10] s");
  const anim_skeleton_t *s = &clip->skeleton;
  /* Fail before allocating when the text cannot hold the claimed frames (2 bytes a number at least). */
  size_t channels = 0;
  for (int b = 0; b < s->nbones; b++) channels += (size_t)ch[b].nchannels;
  if ((size_t)nframes * channels > (size_t)(r->end - r->p) / 2 + 1)
    return error_at(r, ANIM_ETRUNCATED, "fewer numbers in the file than Frames: claims");
  anim_skeleton_t skeleton = *s;
  for (int b = 0; b < s->nbones; b++) skeleton.offsets[b] = vec3_scale(s->offsets[b], scale);
  if ((rc = anim_clip_alloc(clip, &skeleton, nframes, frame_time))) return error_at(r, rc, "out of memory");
  for (int f = 0; f < nframes; f++)
    for (int b = 0; b < s->nbones; b++) {
      vec3 position = clip->skeleton.offsets[b];
      quat rotation = quat_identity();
      for (int c = 0; c < ch[b].nchannels; c++) {
        float v;
        if ((rc = read_float(r, &v))) return rc;
        channel_t kind = ch[b].channels[c];
        if (kind == CH_XPOS) position.x = v * scale;
        else if (kind == CH_YPOS) position.y = v * scale;
        else if (kind == CH_ZPOS) position.z = v * scale;
        else rotation = quat_mul(rotation, axis_rotation(kind, v));
      }
      size_t k = (size_t)f * (size_t)s->nbones + (size_t)b;
      clip->local_positions[k] = position;
      clip->local_rotations[k] = quat_normalize(rotation);
    }
  if (next_token(r) == 0) return error_at(r, ANIM_EFORMAT, "more numbers than Frames: claims");
  return 0;
}

int anim_bvh_parse(anim_clip_t *out, const char *text, size_t len, const char *name, const anim_bvh_options_t *options,
                   char *err, int errlen) {
  anim_bvh_options_t defaults;
  if (!options) anim_bvh_options_default(&defaults), options = &defaults;
  memset(out, 0, sizeof *out);
  snprintf(out->name, sizeof out->name, "%s", name ? name : "bvh");
  reader_t r = {text, text + len, name ? name : "bvh", 1, err, errlen, {0}};
  if (!(options->scale > 0.0f) || !isfinite(options->scale)) return error_at(&r, ANIM_EINVAL, "scale must be > 0");
  joint_channels_t *ch = calloc(ANIM_MAX_BONES, sizeof *ch);
  if (!ch) return error_at(&r, ANIM_ENOMEM, "out of memory");
  int rc = expect(&r, "HIERARCHY");
  if (!rc) rc = expect(&r, "ROOT");
  if (!rc) rc = read_joint(&r, &out->skeleton, ch, -1, 0);
  if (!rc) rc = read_motion(&r, out, ch, options->scale);
  free(ch);
  if (rc) anim_clip_free(out);
  return rc;
}

int anim_bvh_load(anim_clip_t *out, const char *path, const anim_bvh_options_t *options, char *err, int errlen) {
  memset(out, 0, sizeof *out);
  FILE *file = fopen(path, "rb");
  if (!file) {
    if (err && errlen > 0) snprintf(err, (size_t)errlen, "%s: %s", path, strerror(errno));
    return ANIM_EIO;
  }
  char *text = NULL;
  long size = -1;
  if (fseek(file, 0, SEEK_END) == 0) size = ftell(file);
  if (size >= 0 && fseek(file, 0, SEEK_SET) == 0) text = malloc((size_t)size + 1);
  size_t got = text ? fread(text, 1, (size_t)size, file) : 0;
  fclose(file);
  if (!text || got != (size_t)size) {
    free(text);
    if (err && errlen > 0) snprintf(err, (size_t)errlen, "%s: cannot read", path);
    return ANIM_EIO;
  }
  /* The clip is named after the file: base name without extension. */
  const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
  char name[ANIM_NAME_MAX];
  snprintf(name, sizeof name, "%s", base);
  char *dot = strrchr(name, '.');
  if (dot && dot != name) *dot = 0;
  int rc = anim_bvh_parse(out, text, (size_t)size, path, options, err, errlen);
  if (!rc) snprintf(out->name, sizeof out->name, "%s", name);
  free(text);
  return rc;
}
