/*
 * fit_strip.h: an SVG filmstrip of a fitted pose next to the true one, for
 * the pose-fitting benchmarks (`animbench fit --svg`, `animbench
 * fit-stream --svg`): every step-th frame of one range of the truth, two
 * rows of panels, side view (forward against up) and front view (right
 * against up), both in the true pose's facing frame and centred on its
 * pelvis: the truth in grey, the fit in blue, the trackers in red.
 */
#ifndef BENCH_FIT_STRIP_H
#define BENCH_FIT_STRIP_H

#include "math/anim_math.h"
#include "database/database.h"

#define FIT_STRIP_MAX 24
#define FIT_STRIP_TRACKERS 8

typedef struct {
  const anim_database_t *truth; /* its ranges, skeleton and facing */
  int pelvis;                   /* drawn: the pelvis and what hangs from it */
  int range, step, count;
  vec3 fit[FIT_STRIP_MAX][ANIM_MAX_BONES], true_pose[FIT_STRIP_MAX][ANIM_MAX_BONES];
  vec3 trackers[FIT_STRIP_MAX][FIT_STRIP_TRACKERS];
  int ntrackers[FIT_STRIP_MAX];
  float yaw[FIT_STRIP_MAX];
  int frame[FIT_STRIP_MAX];
  double error[FIT_STRIP_MAX];
} fit_strip_t;

/* Keeps truth frame `frame` of range when it is one of the strip's (every
 * step-th frame of s->range, at most FIT_STRIP_MAX): the fit's and the
 * truth's global positions and the trackers' points. */
void fit_strip_add(fit_strip_t *s, int range, int frame, const vec3 *fit, const vec3 *truth, const vec3 *trackers,
                   int ntrackers);

/* Writes the strip to path, titled title, the fit named fit_name ("fit", "streamed pose"). */
void fit_strip_write(const fit_strip_t *s, const char *path, const char *title, const char *fit_name);

#endif
