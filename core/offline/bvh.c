/*
 * bvh.c: BVH import (see bvh.h).
 *
 * A tokenizer over the buffer that counts lines (any of LF, CRLF, CR), a
 * recursive-descent reader of the hierarchy, then the motion block. Each
 * joint's rotation is the product of its rotation channels in the order they
 * are listed (channels "Zrotation Xrotation Yrotation" give Rz Rx Ry, applied
 * to column vectors), its translation the position channels where it has
 * them and its OFFSET otherwise. End sites are read and dropped.
 * Before the frame arrays are allocated the remaining numbers are counted, so
 * a "Frames:" header larger than its data is ANIM_ETRUNCATED, not a huge
 * allocation; tokens are bounded (127 bytes) and never cut silently.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "offline/bvh.h"

#define MAX_CHANNELS 6
/* A file can claim anything; this is far beyond any real clip and keeps
 * allocations bounded before the data is seen. */
#define MAX_FRAMES 10000000
/* Frames x joints bound on one clip's arrays (about 900 MB): a long real clip
 * (10 minutes at 120 Hz, 128 joints) is under a third of it. */
#define MAX_FRAME_BONES ((size_t)1 << 25)

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

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'; }

/* The next whitespace-separated token into r->token: 0; ANIM_ETRUNCATED at the
 * end of the buffer (no message); ANIM_EFORMAT, with the message, for a token
 * too long to be a name or a number (it would otherwise be cut silently). */
static int next_token(reader_t *r) {
  while (r->p < r->end && is_space(*r->p)) {
    /* A line ends at LF, at CRLF (counted once, at the LF) or at a lone CR. */
    if (*r->p == '\n' || (*r->p == '\r' && (r->p + 1 == r->end || r->p[1] != '\n'))) r->line++;
    r->p++;
  }
  if (r->p == r->end) return ANIM_ETRUNCATED;
  size_t n = 0;
  while (r->p < r->end && !is_space(*r->p)) {
    if (n + 1 >= sizeof r->token) return error_at(r, ANIM_EFORMAT, "token longer than 127 bytes");
    /* Tokens become C strings: a NUL would cut a name or a number short unseen. */
    if (*r->p == '\0') return error_at(r, ANIM_EFORMAT, "NUL byte in the text");
    r->token[n++] = *r->p++;
  }
  r->token[n] = 0;
  return 0;
}

/* Like next_token, but the end of the buffer is an error saying what was expected. */
static int need_token(reader_t *r, const char *expected) {
  int rc = next_token(r);
  if (rc != ANIM_ETRUNCATED) return rc;
  char what[128];
  snprintf(what, sizeof what, "file ends where %s was expected", expected);
  return error_at(r, ANIM_ETRUNCATED, what);
}

static int expect(reader_t *r, const char *word) {
  char quoted[64];
  snprintf(quoted, sizeof quoted, "\"%s\"", word);
  int rc = need_token(r, quoted);
  if (rc) return rc;
  if (strcmp(r->token, word) != 0) {
    char what[200];
    snprintf(what, sizeof what, "expected \"%s\", found \"%.64s\"", word, r->token);
    return error_at(r, ANIM_EFORMAT, what);
  }
  return 0;
}

static int read_float(reader_t *r, float *out) {
  int rc = need_token(r, "a number");
  if (rc) return rc;
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
  int rc = need_token(r, "a count");
  if (rc) return rc;
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
    if ((rc = need_token(r, "a channel name"))) return rc;
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
  int rc = need_token(r, "a joint name");
  if (rc) return rc;
  if (strlen(r->token) >= ANIM_NAME_MAX) return error_at(r, ANIM_EFORMAT, "joint name longer than 63 bytes");
  int id = s->nbones++;
  memcpy(s->names[id], r->token, strlen(r->token) + 1);
  for (int b = 0; b < id; b++)
    if (strcmp(s->names[b], s->names[id]) == 0) return error_at(r, ANIM_EFORMAT, "joint name used twice");
  s->parents[id] = parent;
  rc = expect(r, "{");
  if (!rc) rc = read_offset(r, &s->offsets[id]);
  if (!rc) rc = read_channels(r, &ch[id]);
  while (!rc) {
    if ((rc = need_token(r, "\"}\" closing a joint"))) return rc;
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

/* Numbers left in the buffer (whitespace-separated tokens), counting stops past limit. */
static size_t count_tokens(const char *p, const char *end, size_t limit) {
  size_t n = 0;
  while (p < end && n <= limit) {
    while (p < end && is_space(*p)) p++;
    if (p == end) break;
    n++;
    while (p < end && !is_space(*p)) p++;
  }
  return n;
}

/* "MOTION Frames: n Frame Time: t", with n and t in range. */
static int read_motion_header(reader_t *r, int *out_frames, float *out_frame_time) {
  int rc;
  if ((rc = expect(r, "MOTION")) || (rc = expect(r, "Frames:")) || (rc = read_int(r, MAX_FRAMES, out_frames)) ||
      (rc = expect(r, "Frame")) || (rc = expect(r, "Time:")) || (rc = read_float(r, out_frame_time)))
    return rc;
  if (*out_frames < 1) return error_at(r, ANIM_EFORMAT, "Frames: must be at least 1");
  if (!(*out_frame_time > 0.0f) || *out_frame_time > 10.0f)
    return error_at(r, ANIM_EFORMAT, "Frame Time: must be in (0, 10] s");
  return 0;
}

/* Checks, before anything is allocated, that the buffer holds the numbers
 * Frames: claims: a header can claim anything, the data cannot. */
static int check_motion_size(reader_t *r, int nframes, int nbones, size_t channels) {
  if (channels == 0) return error_at(r, ANIM_EFORMAT, "no joint has channels: nothing to animate");
  if ((size_t)nframes * (size_t)nbones > MAX_FRAME_BONES)
    return error_at(r, ANIM_EFORMAT, "Frames: times joints exceeds the 2^25 poses supported");
  size_t need = (size_t)nframes * channels, have = count_tokens(r->p, r->end, need);
  if (have >= need) return 0;
  /* Report at the end of the file, where the missing numbers should be. */
  while (next_token(r) == 0) {
  }
  char what[160];
  snprintf(what, sizeof what, "file ends after %zu of the %zu numbers Frames: %d needs", have, need, nframes);
  return error_at(r, ANIM_ETRUNCATED, what);
}

/* One frame's channels of bone b into its local position and rotation. */
static int read_bone_channels(reader_t *r, const joint_channels_t *ch, float scale, vec3 *io_position,
                              quat *out_rotation) {
  quat rotation = quat_identity();
  for (int c = 0; c < ch->nchannels; c++) {
    float v;
    int rc = read_float(r, &v);
    if (rc) return rc;
    channel_t kind = ch->channels[c];
    if (kind == CH_XPOS) io_position->x = v * scale;
    else if (kind == CH_YPOS) io_position->y = v * scale;
    else if (kind == CH_ZPOS) io_position->z = v * scale;
    /* Listed order, right-multiplied: "Z X Y" gives Rz Rx Ry (column vectors). */
    else rotation = quat_mul(rotation, axis_rotation(kind, v));
  }
  *out_rotation = quat_normalize(rotation);
  return 0;
}

static int read_motion(reader_t *r, anim_clip_t *clip, const joint_channels_t *ch, float scale) {
  int rc, nframes;
  float frame_time;
  if ((rc = read_motion_header(r, &nframes, &frame_time))) return rc;
  const anim_skeleton_t *s = &clip->skeleton;
  size_t channels = 0;
  for (int b = 0; b < s->nbones; b++) channels += (size_t)ch[b].nchannels;
  if ((rc = check_motion_size(r, nframes, s->nbones, channels))) return rc;
  anim_skeleton_t skeleton = *s;
  for (int b = 0; b < s->nbones; b++) skeleton.offsets[b] = vec3_scale(s->offsets[b], scale);
  if ((rc = anim_clip_alloc(clip, &skeleton, nframes, frame_time))) return error_at(r, rc, "out of memory");
  for (int f = 0; f < nframes; f++)
    for (int b = 0; b < s->nbones; b++) {
      size_t k = (size_t)f * (size_t)s->nbones + (size_t)b;
      /* Joints without position channels keep their OFFSET. */
      clip->local_positions[k] = clip->skeleton.offsets[b];
      if ((rc = read_bone_channels(r, &ch[b], scale, &clip->local_positions[k], &clip->local_rotations[k])))
        return rc;
    }
  if ((rc = next_token(r)) != ANIM_ETRUNCATED)
    return rc ? rc : error_at(r, ANIM_EFORMAT, "more numbers than Frames: claims");
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
