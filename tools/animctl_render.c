/*
 * animctl_render.c: `animctl render`, a database span drawn as a stick
 * figure filmstrip (SVG), so a person can see that the character walks,
 * runs and turns, and where its feet are planted.
 *
 *   animctl render DB FRAME [--count N] [--step S] [--view side|top] [-o FILE]
 *
 * Every S-th frame of FRAME..FRAME+N-1 is drawn from the global pose: bones
 * as lines from parent to child (later frames darker), feet in contact as red
 * dots. side: horizontal = world Z, vertical = Y; top: X against Z.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "animctl.h"

typedef struct {
  float scale, min_u, min_v, height;
} canvas_t;

static void project(const float *p, int top, float *u, float *v) {
  *u = p[2];
  *v = top ? p[0] : p[1];
}

/* Bone b is drawn as a line from its parent: not the ground-level simulation
 * bone, and not a source root left at the origin (Bandai's joint_Root): no
 * real bone is longer than a metre and a half. */
static int drawable(const anim_pose_t *p, const anim_db_description_t *d, int b) {
  int parent = d->bone_parents[b];
  if (b >= p->nbones || parent <= 0) return 0;
  const float *a = p->global_positions + 3 * parent, *z = p->global_positions + 3 * b;
  float dx = a[0] - z[0], dy = a[1] - z[1], dz = a[2] - z[2];
  return dx * dx + dy * dy + dz * dz <= 1.5f * 1.5f;
}

int animctl_render(anim_client_t *client, const options_t *o, int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "animctl: render DB FRAME [--count N] [--step S] [--view side|top] [-o FILE]\n");
    return 2;
  }
  int frame = atoi(argv[2]), count = 120, step = 10, top = 0;
  const char *path = NULL;
  for (int i = 3; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--count")) count = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--step")) step = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--view")) top = !strcmp(argv[i + 1], "top");
    else if (!strcmp(argv[i], "-o")) path = argv[i + 1];
    else {
      fprintf(stderr, "animctl: render: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  if (frame < 0 || count < 1 || count > 10000 || step < 1) {
    fprintf(stderr, "animctl: render: FRAME >= 0, --count 1..10000, --step >= 1\n");
    return 2;
  }
  anim_db_description_t *d;
  int rc = anim_client_db_describe(client, argv[1], &d, o->timeout_ms);
  if (rc) return report_error("render", rc, client);
  anim_pose_options_t opts = {0, 1, 0};
  anim_pose_reply_t *poses;
  rc = anim_client_pose(client, argv[1], frame, count, &opts, &poses, o->timeout_ms);
  if (rc) {
    anim_db_description_free(d);
    return report_error("render", rc, client);
  }
  /* Extents of what is drawn. */
  float lo_u = 1e30f, hi_u = -1e30f, lo_v = 1e30f, hi_v = -1e30f;
  for (int i = 0; i < poses->nposes; i += step)
    for (int b = 0; b < d->nbones; b++) {
      if (!drawable(&poses->poses[i], d, b)) continue;
      for (int end = 0; end < 2; end++) {
        float u, v;
        project(poses->poses[i].global_positions + 3 * (end ? b : d->bone_parents[b]), top, &u, &v);
        lo_u = u < lo_u ? u : lo_u, hi_u = u > hi_u ? u : hi_u;
        lo_v = v < lo_v ? v : lo_v, hi_v = v > hi_v ? v : hi_v;
      }
    }
  if (!top && lo_v > 0.0f) lo_v = 0.0f; /* keep the ground in view */
  float margin = 0.2f, scale = 200.0f; /* pixels per metre */
  float width = (hi_u - lo_u + 2 * margin) * scale, height = (hi_v - lo_v + 2 * margin) * scale;
  FILE *out = path ? fopen(path, "w") : stdout;
  if (!out) {
    anim_pose_reply_free(poses);
    anim_db_description_free(d);
    fprintf(stderr, "animctl: render: cannot write %s\n", path);
    return 1;
  }
  fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\">\n",
          width, height, width, height);
  fprintf(out, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
  fprintf(out, "<text x=\"8\" y=\"18\" font-family=\"sans-serif\" font-size=\"14\">%s frames %d-%d every %d (%s view)</text>\n",
          argv[1], frame, frame + poses->nposes - 1, step, top ? "top" : "side");
#define U(x) (((x) - lo_u + margin) * scale)
#define V(y) (height - ((y) - lo_v + margin) * scale)
  if (!top) fprintf(out, "<line x1=\"0\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"#888\"/>\n", V(0.0f), width, V(0.0f));
  int drawn = 0, total = (poses->nposes + step - 1) / step;
  for (int i = 0; i < poses->nposes; i += step, drawn++) {
    const anim_pose_t *p = &poses->poses[i];
    int shade = 200 - (150 * drawn) / (total > 1 ? total - 1 : 1);
    for (int b = 1; b < d->nbones; b++) {
      if (!drawable(p, d, b)) continue;
      float u0, v0, u1, v1;
      project(p->global_positions + 3 * d->bone_parents[b], top, &u0, &v0);
      project(p->global_positions + 3 * b, top, &u1, &v1);
      fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"rgb(%d,%d,%d)\" stroke-width=\"2\"/>\n",
              U(u0), V(v0), U(u1), V(v1), shade, shade, shade + 40 > 255 ? 255 : shade + 40);
    }
    for (int c = 0; c < p->ncontacts; c++) {
      if (!p->contacts[c]) continue;
      /* Contact bones are the feet found by the database: look them up by name order (left, right). */
      for (int b = 0; b < d->nbones; b++) {
        const char *name = d->bone_names[b];
        int is_foot = strstr(name, "Toe") || strstr(name, "toe");
        int side = strstr(name, "Left") || strstr(name, "_L") || name[0] == 'l' || name[0] == 'L' ? 0 : 1;
        if (!is_foot || side != c) continue;
        float u, v;
        project(p->global_positions + 3 * b, top, &u, &v);
        fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"red\"/>\n", U(u), V(v));
        break;
      }
    }
  }
  fprintf(out, "</svg>\n");
  if (path) fclose(out);
  if (path && !o->json) printf("wrote %s: %d poses\n", path, drawn);
  anim_pose_reply_free(poses);
  anim_db_description_free(d);
  return 0;
}
