/* fit_strip.c: the pose-fitting filmstrip (see fit_strip.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "fit_strip.h"

void fit_strip_add(fit_strip_t *s, int range, int frame, const vec3 *fit, const vec3 *truth, const vec3 *trackers,
                   int ntrackers) {
  int i = frame - s->truth->ranges[range].start;
  if (range != s->range || i % s->step || s->count >= FIT_STRIP_MAX) return;
  int n = s->count++, nb = s->truth->nbones;
  memcpy(s->fit[n], fit, sizeof(vec3) * (size_t)nb);
  memcpy(s->true_pose[n], truth, sizeof(vec3) * (size_t)nb);
  s->ntrackers[n] = ntrackers < FIT_STRIP_TRACKERS ? ntrackers : FIT_STRIP_TRACKERS;
  memcpy(s->trackers[n], trackers, sizeof(vec3) * (size_t)s->ntrackers[n]);
  quat facing = s->truth->global_rotations[(size_t)frame * (size_t)nb]; /* the truth's simulation bone */
  vec3 fwd = quat_mul_vec3(facing, vec3_make(0, 0, 1));
  s->yaw[n] = atan2f(fwd.x, fwd.z);
  s->frame[n] = frame;
  double e = 0.0;
  int m = 0;
  for (int b = 0; b < nb; b++)
    for (int a = b; a >= 0; a = s->truth->skeleton.parents[a])
      if (a == s->pelvis) e += vec3_length(vec3_sub(fit[b], truth[b])), m++;
  s->error[n] = m ? e / m : 0.0;
}

void fit_strip_write(const fit_strip_t *s, const char *path, const char *title, const char *fit_name) {
  FILE *out = fopen(path, "w");
  if (!out) return;
  const float panel = 170.0f, height = 230.0f, ppm = 95.0f; /* pixels, pixels per metre */
  const int *parents = s->truth->skeleton.parents;
  float width = panel * (float)s->count;
  fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" font-family=\"sans-serif\" "
               "font-size=\"11\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
          width, 2 * height + 40);
  fprintf(out, "<text x=\"8\" y=\"16\">%s: truth grey, %s blue, trackers red; side view (top row), front view "
               "(bottom row)</text>\n", title, fit_name);
  for (int n = 0; n < s->count; n++) {
    quat inv = quat_inv(quat_from_angle_axis(s->yaw[n], vec3_make(0, 1, 0)));
    vec3 centre = s->true_pose[n][s->pelvis];
    centre.y = 0.0f;
    for (int row = 0; row < 2; row++) {
      float ox = panel * ((float)n + 0.5f), oy = 40 + height * (float)(row + 1) - 15;
#define U(p) (ox + ppm * (row ? -quat_mul_vec3(inv, vec3_sub(p, centre)).x : quat_mul_vec3(inv, vec3_sub(p, centre)).z))
#define V(p) (oy - ppm * (p).y)
      fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ccc\"/>\n", ox - panel / 2 + 6, oy,
              ox + panel / 2 - 6, oy);
      for (int pass = 0; pass < 2; pass++) {
        const vec3 *g = pass ? s->fit[n] : s->true_pose[n];
        for (int b = 1; b < s->truth->nbones; b++) {
          int a = parents[b];
          int below = 0; /* draw the pelvis and what hangs from it */
          for (int c = a; c >= 0; c = parents[c]) below |= c == s->pelvis;
          if (!below && a != s->pelvis) continue;
          fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"%s\" "
                       "stroke-linecap=\"round\"/>\n",
                  U(g[a]), V(g[a]), U(g[b]), V(g[b]), pass ? "#1f5fd6" : "#999", pass ? "2" : "5");
        }
      }
      for (int k = 0; k < s->ntrackers[n]; k++)
        fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"#d62020\"/>\n", U(s->trackers[n][k]),
                V(s->trackers[n][k]));
#undef U
#undef V
    }
    fprintf(out, "<text x=\"%.0f\" y=\"34\" text-anchor=\"middle\">%.2f s: %.1f cm</text>\n", panel * (n + 0.5f),
            (double)(s->frame[n] - s->truth->ranges[s->range].start) / s->truth->frame_rate, 100 * s->error[n]);
  }
  fprintf(out, "</svg>\n");
  fclose(out);
}
