/*
 * bvh_write.c: a clip as BVH text (see bvh_write.h). Angles are found in
 * double precision from the rotation matrix, so a file read back by bvh.c
 * gives each rotation to float precision.
 */
#include "offline/bvh_write.h"
#include <math.h>
#include <string.h>
#include "anim_error.h"

#define MOVES_EPS 1e-5f /* metres: a joint whose position leaves its offset by more gets position channels */

void anim_quat_to_euler_zxy(quat q, float *out_z, float *out_x, float *out_y) {
  double n = sqrt((double)q.w * q.w + (double)q.x * q.x + (double)q.y * q.y + (double)q.z * q.z);
  double w = q.w / n, x = q.x / n, y = q.y / n, z = q.z / n;
  /* Rz Rx Ry = [[. , -sz cx, .], [., cz cx, .], [-cx sy, sx, cx cy]] */
  double m01 = 2.0 * (x * y - w * z), m11 = 1.0 - 2.0 * (x * x + z * z);
  double m21 = 2.0 * (y * z + w * x);
  double m20 = 2.0 * (x * z - w * y), m22 = 1.0 - 2.0 * (x * x + y * y);
  double m00 = 1.0 - 2.0 * (y * y + z * z), m10 = 2.0 * (x * y + w * z);
  double ax = asin(m21 > 1.0 ? 1.0 : m21 < -1.0 ? -1.0 : m21), az, ay;
  if (fabs(m21) < 0.9999999) {
    az = atan2(-m01, m11);
    ay = atan2(-m20, m22);
  } else {
    /* cos x = 0: only z + y (x = 90) or z - y (x = -90) is defined; y = 0. */
    ay = 0.0;
    az = atan2(m10, m00);
  }
  const double deg = 180.0 / 3.14159265358979323846;
  *out_z = (float)(az * deg);
  *out_x = (float)(ax * deg);
  *out_y = (float)(ay * deg);
}

/* Whether bone b's local position leaves its rest offset in some frame. */
static int bone_moves(const anim_clip_t *clip, int b) {
  if (b == 0) return 1;
  int n = clip->skeleton.nbones;
  vec3 o = clip->skeleton.offsets[b];
  for (int f = 0; f < clip->nframes; f++) {
    vec3 p = clip->local_positions[(size_t)f * n + b];
    if (fabsf(p.x - o.x) > MOVES_EPS || fabsf(p.y - o.y) > MOVES_EPS || fabsf(p.z - o.z) > MOVES_EPS) return 1;
  }
  return 0;
}

static int has_children(const anim_skeleton_t *s, int b) {
  for (int c = b + 1; c < s->nbones; c++)
    if (s->parents[c] == b) return 1;
  return 0;
}

static void indent(FILE *out, int depth) {
  for (int i = 0; i < depth; i++) fputc('\t', out);
}

/* Joint b and its subtree (parents come first, so children follow b). */
static void write_joint(FILE *out, const anim_clip_t *clip, const unsigned char *moves, int b, int depth,
                        float unit) {
  const anim_skeleton_t *s = &clip->skeleton;
  vec3 o = s->offsets[b];
  indent(out, depth);
  fprintf(out, "%s %s\n", b == 0 ? "ROOT" : "JOINT", s->names[b]);
  indent(out, depth);
  fprintf(out, "{\n");
  indent(out, depth + 1);
  fprintf(out, "OFFSET %.9g %.9g %.9g\n", o.x * unit, o.y * unit, o.z * unit);
  indent(out, depth + 1);
  fprintf(out, moves[b] ? "CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n"
                        : "CHANNELS 3 Zrotation Xrotation Yrotation\n");
  if (has_children(s, b)) {
    for (int c = b + 1; c < s->nbones; c++)
      if (s->parents[c] == b) write_joint(out, clip, moves, c, depth + 1, unit);
  } else {
    /* An end site carries the leaf's bone length: half its own offset on. */
    float len = sqrtf(o.x * o.x + o.y * o.y + o.z * o.z);
    vec3 e = len > 1e-4f ? vec3_make(o.x * 0.5f, o.y * 0.5f, o.z * 0.5f) : vec3_make(0.0f, 0.05f, 0.0f);
    indent(out, depth + 1);
    fprintf(out, "End Site\n");
    indent(out, depth + 1);
    fprintf(out, "{\n");
    indent(out, depth + 2);
    fprintf(out, "OFFSET %.9g %.9g %.9g\n", e.x * unit, e.y * unit, e.z * unit);
    indent(out, depth + 1);
    fprintf(out, "}\n");
  }
  indent(out, depth);
  fprintf(out, "}\n");
}

/* The arguments' checks, before anything is written (a refused clip leaves no file). */
static int check_input(const anim_clip_t *clip, float units_per_metre, char *err, int errlen) {
  if (!clip) {
    if (err) snprintf(err, (size_t)errlen, "bvh write: no clip");
    return ANIM_EINVAL;
  }
  if (!(units_per_metre > 0.0f) || !isfinite(units_per_metre)) {
    if (err) snprintf(err, (size_t)errlen, "bvh write: units_per_metre %g is not a positive number",
                      (double)units_per_metre);
    return ANIM_EINVAL;
  }
  return anim_clip_validate(clip, err, errlen) != 0 ? ANIM_EINVAL : 0;
}

int anim_bvh_write(FILE *out, const anim_clip_t *clip, float units_per_metre, char *err, int errlen) {
  if (!out) {
    if (err) snprintf(err, (size_t)errlen, "bvh write: no output");
    return ANIM_EINVAL;
  }
  int rc = check_input(clip, units_per_metre, err, errlen);
  if (rc) return rc;
  const anim_skeleton_t *s = &clip->skeleton;
  unsigned char moves[ANIM_MAX_BONES];
  for (int b = 0; b < s->nbones; b++) moves[b] = (unsigned char)bone_moves(clip, b);
  fprintf(out, "HIERARCHY\n");
  write_joint(out, clip, moves, 0, 0, units_per_metre);
  fprintf(out, "MOTION\nFrames: %d\nFrame Time: %.9g\n", clip->nframes, (double)clip->frame_time);
  /* Channel values in the order the hierarchy lists joints (depth first). */
  int order[ANIM_MAX_BONES], n = 0, stack[ANIM_MAX_BONES], top = 0;
  stack[top++] = 0;
  while (top > 0) {
    int b = stack[--top];
    order[n++] = b;
    for (int c = s->nbones - 1; c > b; c--)
      if (s->parents[c] == b) stack[top++] = c;
  }
  for (int f = 0; f < clip->nframes; f++) {
    for (int i = 0; i < n; i++) {
      int b = order[i];
      size_t k = (size_t)f * s->nbones + b;
      float z, x, y;
      anim_quat_to_euler_zxy(clip->local_rotations[k], &z, &x, &y);
      if (moves[b]) {
        vec3 p = clip->local_positions[k];
        fprintf(out, "%.9g %.9g %.9g ", p.x * units_per_metre, p.y * units_per_metre, p.z * units_per_metre);
      }
      fprintf(out, i + 1 < n ? "%.9g %.9g %.9g " : "%.9g %.9g %.9g", z, x, y);
    }
    fputc('\n', out);
  }
  if (ferror(out)) {
    if (err) snprintf(err, (size_t)errlen, "bvh write: write failed");
    return ANIM_EIO;
  }
  return 0;
}

int anim_bvh_save(const char *path, const anim_clip_t *clip, float units_per_metre, char *err, int errlen) {
  int rc = check_input(clip, units_per_metre, err, errlen);
  if (rc) return rc;
  FILE *out = path ? fopen(path, "w") : NULL;
  if (!out) {
    if (err) snprintf(err, (size_t)errlen, "%s: cannot write", path ? path : "(no path)");
    return ANIM_EIO;
  }
  rc = anim_bvh_write(out, clip, units_per_metre, err, errlen);
  if (fclose(out) != 0 && rc == 0) {
    if (err) snprintf(err, (size_t)errlen, "%s: write failed", path);
    rc = ANIM_EIO;
  }
  return rc;
}
