/*
 * animctl_markers.c: animctl marker-fit, a BVH clip's joints made into
 * markers and fitted back through the database's body model
 * (MarkerFitRequest; docs/physics.md).
 *
 *   animctl marker-fit DB CLIP.bvh [--markers BONE[:x,y,z],...] [--offset x,y,z]
 *       [--frames N] [--jump MARKER:FRAME:METRES] [--scale S | --estimate-scale]
 *       [--marker-halflife S] [--prior-halflife S] [--svg FILE]
 *
 * The clip (centimetres, --units to change) is read here; each marker is
 * its bone's joint plus the offset turned by the bone (default every bone
 * below the clip's hips, 3 cm off along x, y; a marker named without an
 * offset takes --offset). --jump moves one marker up by METRES for one
 * frame. Prints the mean and worst residuals and each marker's mean; --svg
 * draws each marker's residual over time (the eight worst).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "animctl.h"
#include "offline/bone_roles.h"
#include "offline/bvh.h"
#include "pose/kinematics.h"

#define MAX_MARKERS 128
#define MAX_CURVES 8
#define PLOT_W 960
#define PLOT_H 320
#define MARGIN_L 70
#define MARGIN_R 190

static int parse3(const char *s, float *out) { return sscanf(s, "%f,%f,%f", &out[0], &out[1], &out[2]) == 3 ? 0 : -1; }

static int write_svg(const char *path, const char *db, const char *clip, const anim_marker_fit_result_t *r,
                     const anim_marker_desc_t *markers, float dt) {
  static const char *const colors[MAX_CURVES] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                                 "#9467bd", "#8c564b", "#e377c2", "#17becf"};
  int n = r->nframes, nm = r->nmarkers, pick[MAX_CURVES], k = 0;
  double mean[MAX_MARKERS] = {0};
  float ymax = 0;
  for (int i = 0; i < nm; i++)
    for (int f = 0; f < n; f++) {
      float e = r->residuals[(size_t)f * nm + i];
      if (!isnan(e)) mean[i] += e, ymax = fmaxf(ymax, e);
    }
  for (; k < MAX_CURVES && k < nm; k++) {
    int best = -1;
    for (int i = 0; i < nm; i++) {
      int used = 0;
      for (int j = 0; j < k; j++) used |= pick[j] == i;
      if (!used && (best < 0 || mean[i] > mean[best])) best = i;
    }
    pick[k] = best;
  }
  ymax = ymax > 0 ? ymax * 100 * 1.1f : 1;
  FILE *f = fopen(path, "w");
  if (!f) return animctl_fail("%s: cannot write", path);
  int w = PLOT_W - MARGIN_L - MARGIN_R, h = PLOT_H - 90, y0 = 50;
  float T = n > 1 ? (n - 1) * dt : dt;
  fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\">\n"
             "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
             "<text x=\"%d\" y=\"18\" font-size=\"12\" fill=\"#555\">marker fit: %s on %s, %d frames, %d markers; "
             "residual mean %.2f cm, max %.2f cm (frame %d, %s); scale %.3f</text>\n"
             "<text x=\"%d\" y=\"40\" font-size=\"14\" font-weight=\"bold\">Marker residuals (the %d largest on "
             "average)</text>\n",
          PLOT_W, PLOT_H, MARGIN_L, clip, db, n, nm, 100 * r->mean_residual, 100 * r->max_residual, r->worst_frame,
          markers[r->worst_marker].bone, r->scale, MARGIN_L, k);
#define X(t) (MARGIN_L + (t) / T * w)
#define Y(v) (y0 + h - (v) / ymax * h)
  for (int g = 0; g <= 4; g++) {
    float v = ymax * g / 4;
    fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
               "<text x=\"%d\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%.2g</text>\n",
            MARGIN_L, MARGIN_L + w, Y(v), Y(v), MARGIN_L - 6, Y(v) + 4, v);
    float t = T * g / 4;
    fprintf(f, "<text x=\"%.1f\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\">%.2f</text>\n", X(t), y0 + h + 16, t);
  }
  fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\">time (s)</text>\n"
             "<text transform=\"translate(16 %d) rotate(-90)\" font-size=\"11\" text-anchor=\"middle\">residual (cm)</text>\n"
             "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#444\"/>\n",
          MARGIN_L + w / 2, y0 + h + 32, y0 + h / 2, MARGIN_L, y0, w, h);
  for (int c = 0; c < k; c++) {
    fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"", colors[c]);
    for (int i = 0; i < n; i++) {
      float e = r->residuals[(size_t)i * nm + pick[c]];
      if (!isnan(e)) fprintf(f, "%.1f,%.1f ", X(i * dt), Y(100 * e));
    }
    int ly = y0 + 10 + 18 * c;
    fprintf(f, "\"/>\n<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2\"/>"
               "<text x=\"%d\" y=\"%d\" font-size=\"11\">%s (%.2f cm)</text>\n",
            MARGIN_L + w + 10, MARGIN_L + w + 34, ly, ly, colors[c], MARGIN_L + w + 40, ly + 4, markers[pick[c]].bone,
            100 * mean[pick[c]] / n);
  }
#undef X
#undef Y
  fprintf(f, "</svg>\n");
  if (fclose(f) != 0) return animctl_fail("%s: cannot write", path);
  return 0;
}

int animctl_marker_fit(const options_t *o, int argc, char **argv) {
  if (argc < 3) return animctl_fail("marker-fit DB CLIP.bvh [--markers BONE[:x,y,z],...] [--svg FILE] ...");
  const char *db = argv[1], *path = argv[2], *svg = NULL, *names = NULL, *jump = NULL;
  float offset[3] = {0.03f, 0.03f, 0.0f}, units = 0.01f;
  int max_frames = 0;
  anim_client_marker_fit_options_t fo;
  memset(&fo, 0, sizeof fo);
  for (int i = 3; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--estimate-scale")) {
      fo.estimate_scale = 1;
      continue;
    }
    if (i + 1 >= argc) return animctl_fail("marker-fit: %s needs a value", a);
    const char *v = argv[++i];
    if (!strcmp(a, "--svg")) svg = v;
    else if (!strcmp(a, "--markers")) names = v;
    else if (!strcmp(a, "--jump")) jump = v;
    else if (!strcmp(a, "--offset")) {
      if (parse3(v, offset)) return animctl_fail("marker-fit: --offset wants x,y,z, not %s", v);
    } else if (!strcmp(a, "--frames")) max_frames = atoi(v);
    else if (!strcmp(a, "--units")) units = strtof(v, NULL);
    else if (!strcmp(a, "--scale")) fo.scale = strtof(v, NULL);
    else if (!strcmp(a, "--marker-halflife")) fo.marker_halflife = strtof(v, NULL);
    else if (!strcmp(a, "--prior-halflife")) fo.prior_halflife = strtof(v, NULL);
    else return animctl_fail("marker-fit: unknown option %s", a);
  }
  anim_clip_t clip;
  char err[512];
  anim_bvh_options_t bo = {units};
  if (anim_bvh_load(&clip, path, &bo, err, sizeof err)) return animctl_fail("marker-fit: %s", err);
  const anim_skeleton_t *sk = &clip.skeleton;
  /* The markers: named, or every bone below the clip's hips. */
  static anim_marker_desc_t markers[MAX_MARKERS];
  static char bone_names[MAX_MARKERS][ANIM_NAME_MAX];
  int bones[MAX_MARKERS], nm = 0, rc = 0;
  if (names) {
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", names);
    for (char *s = strtok(buf, ","); s && !rc; s = strtok(NULL, ",")) {
      char *colon = strchr(s, ':');
      float off[3] = {offset[0], offset[1], offset[2]};
      if (colon) {
        *colon = 0;
        /* x,y,z was split by the commas: take the next two tokens. */
        char *y = strtok(NULL, ","), *z = strtok(NULL, ",");
        if (!y || !z) rc = animctl_fail("marker-fit --markers: %s: offset wants x,y,z", s);
        else off[0] = strtof(colon + 1, NULL), off[1] = strtof(y, NULL), off[2] = strtof(z, NULL);
      }
      int b = anim_skeleton_find(sk, s);
      if (!rc && b < 0) rc = animctl_fail("marker-fit --markers: no bone %s in %s", s, path);
      if (!rc && nm >= MAX_MARKERS) rc = animctl_fail("marker-fit --markers: at most %d", MAX_MARKERS);
      if (rc) break;
      snprintf(bone_names[nm], ANIM_NAME_MAX, "%s", s);
      markers[nm] = (anim_marker_desc_t){bone_names[nm], {off[0], off[1], off[2]}, 1};
      bones[nm++] = b;
    }
  } else {
    int roles[ANIM_BONE_ROLE_COUNT];
    if (anim_bone_roles_find(sk, NULL, roles, err, sizeof err)) rc = animctl_fail("marker-fit: %s: %s", path, err);
    for (int b = 0; !rc && b < sk->nbones && nm < MAX_MARKERS; b++) {
      int below = 0;
      for (int a = b; a >= 0; a = sk->parents[a]) below |= a == roles[ANIM_BONE_HIPS];
      if (!below) continue;
      snprintf(bone_names[nm], ANIM_NAME_MAX, "%s", sk->names[b]);
      markers[nm] = (anim_marker_desc_t){bone_names[nm], {offset[0], offset[1], offset[2]}, 1};
      bones[nm++] = b;
    }
  }
  int n = clip.nframes;
  if (max_frames > 0 && max_frames < n) n = max_frames;
  int jm = -1, jf = -1;
  float jd = 0;
  if (!rc && jump) {
    char jn[ANIM_NAME_MAX];
    if (sscanf(jump, "%63[^:]:%d:%f", jn, &jf, &jd) != 3 || jf < 0 || jf >= n)
      rc = animctl_fail("marker-fit --jump: MARKER:FRAME:METRES with FRAME in 0..%d, not %s", n - 1, jump);
    for (int i = 0; !rc && i < nm; i++)
      if (!strcmp(markers[i].bone, jn)) jm = i;
    if (!rc && jm < 0) rc = animctl_fail("marker-fit --jump: no marker on %s", jn);
  }
  float *positions = rc ? NULL : malloc(sizeof(float) * 3 * (size_t)n * (size_t)(nm > 0 ? nm : 1));
  if (!rc && !positions) rc = animctl_fail("out of memory");
  if (!rc && nm < 3) rc = animctl_fail("marker-fit: %d markers, at least 3", nm);
  for (int f = 0; !rc && f < n; f++) {
    vec3 g[ANIM_MAX_BONES];
    quat gr[ANIM_MAX_BONES];
    anim_fk(g, gr, clip.local_positions + (size_t)f * sk->nbones, clip.local_rotations + (size_t)f * sk->nbones,
            sk->parents, sk->nbones);
    for (int i = 0; i < nm; i++) {
      vec3 p = vec3_add(g[bones[i]], quat_mul_vec3(gr[bones[i]], vec3_make(markers[i].offset[0], markers[i].offset[1],
                                                                             markers[i].offset[2])));
      if (i == jm && f == jf) p.y += jd;
      memcpy(positions + 3 * ((size_t)f * nm + i), &p, sizeof p);
    }
  }
  fo.frame_time = clip.frame_time;
  anim_client_t *client = NULL;
  if (!rc) rc = animctl_connect(o, &client);
  anim_marker_fit_result_t *r = NULL;
  if (!rc && (rc = anim_client_marker_fit(client, db, markers, nm, positions, NULL, n, &fo, &r, o->timeout_ms)))
    rc = report_error("marker-fit", rc, client);
  if (!rc) {
    if (o->json) {
      printf("{\"database\": ");
      animctl_json_string(stdout, db);
      printf(", \"clip\": ");
      animctl_json_string(stdout, clip.name);
      printf(", \"frames\": %d, \"markers\": %d, \"scale\": %.4f, \"mean_residual\": %.5f, \"max_residual\": %.5f, "
             "\"worst_frame\": %d, \"worst_marker\": ",
             n, nm, r->scale, r->mean_residual, r->max_residual, r->worst_frame);
      animctl_json_string(stdout, markers[r->worst_marker].bone);
      printf("}\n");
    } else {
      printf("%s on %s: %d frames at %g Hz, %d markers, scale %.3f\n", clip.name, db, n, 1.0 / clip.frame_time, nm,
             r->scale);
      printf("  residual: mean %.2f cm, max %.2f cm (frame %d, %s)\n", 100 * r->mean_residual, 100 * r->max_residual,
             r->worst_frame, markers[r->worst_marker].bone);
      for (int i = 0; i < nm; i++) {
        double s = 0;
        int c = 0;
        for (int f = 0; f < n; f++)
          if (!isnan(r->residuals[(size_t)f * nm + i])) s += r->residuals[(size_t)f * nm + i], c++;
        printf("    %-20s %6.2f cm\n", markers[i].bone, c ? 100 * s / c : 0.0);
      }
    }
    if (svg && (rc = write_svg(svg, db, clip.name, r, markers, clip.frame_time)) == 0 && !o->json)
      printf("  drawn to %s\n", svg);
  }
  anim_marker_fit_result_free(r);
  free(positions);
  anim_clip_free(&clip);
  return rc;
}
