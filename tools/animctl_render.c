/*
 * animctl_render.c: `animctl render`, poses drawn as a stick-figure filmstrip
 * (SVG), so a person can see that the character walks, runs and turns, and
 * where its feet are planted.
 *
 *   animctl render DB FRAME [--count N] [--step S] [--view side|top] [-o FILE]
 *   animctl render --stream [stream options] [--character K] [--step S]
 *                  [--view side|top] [-o FILE]
 *
 * The first form draws every S-th frame of a database span; the second runs
 * a stream session (see animctl_stream.c: --create N --input ... or --id ID)
 * and draws every S-th frame of its K-th character as the server animated
 * it. Bones are lines from parent to child (later frames darker), feet in
 * contact red dots. side: horizontal = world Z, vertical = Y; top: X against Z.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "animctl.h"
#include "animctl_stream.h"

typedef struct {
  float *global;     /* nbones x 3, world space */
  uint32_t contacts; /* bit c: contact bone c planted */
} figure_t;

static void project(const float *p, int top, float *u, float *v) {
  *u = p[2];
  *v = top ? p[0] : p[1];
}

/* Bone b is drawn as a line from its parent: not the ground-level simulation
 * bone, and not a source root left at the origin (Bandai's joint_Root): no
 * real bone is longer than a metre and a half. */
static int drawable(const float *global, const anim_db_description_t *d, int b) {
  int parent = d->bone_parents[b];
  if (parent <= 0) return 0;
  const float *a = global + 3 * parent, *z = global + 3 * b;
  float dx = a[0] - z[0], dy = a[1] - z[1], dz = a[2] - z[2];
  return dx * dx + dy * dy + dz * dz <= 1.5f * 1.5f;
}

static int draw_filmstrip(FILE *out, const char *title, const anim_db_description_t *d, const figure_t *figs, int n,
                          int top) {
  float lo_u = 1e30f, hi_u = -1e30f, lo_v = 1e30f, hi_v = -1e30f;
  for (int i = 0; i < n; i++)
    for (int b = 0; b < d->nbones; b++) {
      if (!drawable(figs[i].global, d, b)) continue;
      for (int end = 0; end < 2; end++) {
        float u, v;
        project(figs[i].global + 3 * (end ? b : d->bone_parents[b]), top, &u, &v);
        lo_u = u < lo_u ? u : lo_u, hi_u = u > hi_u ? u : hi_u;
        lo_v = v < lo_v ? v : lo_v, hi_v = v > hi_v ? v : hi_v;
      }
    }
  if (lo_u > hi_u) lo_u = hi_u = lo_v = hi_v = 0.0f; /* nothing drawable */
  if (!top && lo_v > 0.0f) lo_v = 0.0f;               /* keep the ground in view */
  float margin = 0.2f, scale = 200.0f;                /* pixels per metre */
  float width = (hi_u - lo_u + 2 * margin) * scale, height = (hi_v - lo_v + 2 * margin) * scale + 24.0f;
  if (width < 640.0f) { /* room for the title */
    lo_u -= (640.0f - width) / (2 * scale);
    width = 640.0f;
  }
  fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\">\n",
          width, height, width, height);
  fprintf(out, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
  fprintf(out, "<text x=\"8\" y=\"18\" font-family=\"sans-serif\" font-size=\"14\">%s (%s view)</text>\n", title,
          top ? "top" : "side");
#define U(x) (((x) - lo_u + margin) * scale)
#define V(y) (height - ((y) - lo_v + margin) * scale)
  if (!top)
    fprintf(out, "<line x1=\"0\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"#888\"/>\n", V(0.0f), width, V(0.0f));
  for (int i = 0; i < n; i++) {
    const float *g = figs[i].global;
    int shade = 200 - (150 * i) / (n > 1 ? n - 1 : 1);
    for (int b = 1; b < d->nbones; b++) {
      if (!drawable(g, d, b)) continue;
      float u0, v0, u1, v1;
      project(g + 3 * d->bone_parents[b], top, &u0, &v0);
      project(g + 3 * b, top, &u1, &v1);
      fprintf(out,
              "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"rgb(%d,%d,%d)\" stroke-width=\"2\"/>\n",
              U(u0), V(v0), U(u1), V(v1), shade, shade, shade + 40 > 255 ? 255 : shade + 40);
    }
    for (int c = 0; c < d->ncontact_bones && c < 32; c++) {
      int b = d->contact_bones[c];
      if (b < 0 || !((figs[i].contacts >> c) & 1)) continue;
      float u, v;
      project(g + 3 * b, top, &u, &v);
      fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"red\"/>\n", U(u), V(v));
    }
  }
#undef U
#undef V
  fprintf(out, "</svg>\n");
  return ferror(out) ? -1 : 0;
}

static int write_filmstrip(const char *path, const char *title, const anim_db_description_t *d, const figure_t *figs,
                           int n, int top, int json) {
  FILE *out = path ? fopen(path, "w") : stdout;
  if (!out) {
    animctl_fail("render: cannot write %s", path);
    return 1;
  }
  int rc = draw_filmstrip(out, title, d, figs, n, top);
  if (path) rc |= fclose(out);
  if (rc) {
    animctl_fail("render: writing %s failed", path ? path : "stdout");
    return 1;
  }
  if (path && json) {
    printf("{\"file\":\"");
    for (const char *c = path; *c; c++) printf(*c == '"' || *c == '\\' ? "\\%c" : "%c", *c);
    printf("\",\"poses\":%d}\n", n);
  } else if (path) {
    printf("wrote %s: %d poses\n", path, n);
  }
  return 0;
}

/* ---- a database span --------------------------------------------------------------- */

static int render_span(const options_t *o, int argc, char **argv) {
  if (argc < 3) {
    return animctl_fail("render DB FRAME [--count N] [--step S] [--view side|top] [-o FILE]");
  }
  int frame = atoi(argv[2]), count = 120, step = 10, top = 0;
  const char *path = NULL;
  for (int i = 3; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--count")) count = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--step")) step = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--view")) top = !strcmp(argv[i + 1], "top");
    else if (!strcmp(argv[i], "-o")) path = argv[i + 1];
    else {
      return animctl_fail("render: unknown option %s", argv[i]);
    }
  }
  if (frame < 0 || count < 1 || count > 10000 || step < 1) {
    return animctl_fail("render: FRAME >= 0, --count 1..10000, --step >= 1");
  }
  anim_client_t *client;
  int rc = animctl_connect(o, &client);
  if (rc) return rc;
  anim_db_description_t *d;
  rc = anim_client_db_describe(client, argv[1], &d, o->timeout_ms);
  if (rc) return report_error("render", rc, client);
  anim_pose_options_t opts = {0, 1, 0};
  anim_pose_reply_t *poses;
  rc = anim_client_pose(client, argv[1], frame, count, &opts, &poses, o->timeout_ms);
  if (rc) {
    anim_db_description_free(d);
    return report_error("render", rc, client);
  }
  figure_t *figs = calloc((size_t)poses->nposes, sizeof *figs);
  int n = 0;
  for (int i = 0; figs && i < poses->nposes; i += step, n++) {
    const anim_pose_t *p = &poses->poses[i];
    figs[n].global = (float *)p->global_positions;
    for (int c = 0; c < p->ncontacts && c < 32; c++) figs[n].contacts |= p->contacts[c] ? 1u << c : 0u;
  }
  char title[256];
  snprintf(title, sizeof title, "%s frames %d-%d every %d", argv[1], frame, frame + poses->nposes - 1, step);
  rc = figs ? write_filmstrip(path, title, d, figs, n, top, o->json) : 1;
  free(figs);
  anim_pose_reply_free(poses);
  anim_db_description_free(d);
  return rc;
}

/* ---- a stream ----------------------------------------------------------------------- */

typedef struct {
  int character, step, top;
  figure_t *figs;
  int n, cap, seen;
  uint64_t id;
} collect_t;

static int render_option(stream_session_t *s, const char *flag, const char *value) {
  collect_t *c = s->extra_data;
  if (!strcmp(flag, "--character")) c->character = atoi(value);
  else if (!strcmp(flag, "--step")) c->step = atoi(value);
  else if (!strcmp(flag, "--view")) c->top = !strcmp(value, "top");
  else return 0;
  return 1;
}

static int collect(stream_session_t *s, const anim_stream_frame_t *f, void *data) {
  collect_t *c = data;
  if (c->character >= f->nposes) return 0;
  const anim_character_pose_t *p = &f->poses[c->character];
  if (c->seen++ % c->step || !p->global_positions) return 0;
  if (c->n == c->cap) {
    figure_t *grown = realloc(c->figs, (size_t)(c->cap = c->cap * 2 + 16) * sizeof *grown);
    if (!grown) return -1;
    c->figs = grown;
  }
  float *g = malloc((size_t)p->nbones * 3 * sizeof *g);
  if (!g) return -1;
  memcpy(g, p->global_positions, (size_t)p->nbones * 3 * sizeof *g);
  c->figs[c->n].global = g;
  c->figs[c->n++].contacts = p->contacts;
  c->id = p->character;
  return 0;
}

static int render_stream(const options_t *o, int argc, char **argv) {
  collect_t c = {0, 10, 0, NULL, 0, 0, 0, 0};
  stream_session_t s;
  int rc = stream_session_parse(&s, argc, argv, 2, "render", render_option, &c);
  if (rc == 0 && (c.character < 0 || c.step < 1)) {
    animctl_fail("render: --character >= 0, --step >= 1");
    rc = -1;
  }
  if (rc) {
    stream_session_free(&s);
    return 2;
  }
  anim_client_t *client;
  if ((rc = animctl_connect(o, &client)) != 0) {
    stream_session_free(&s);
    return rc;
  }
  s.global = 1;
  rc = stream_session_run(client, &s, o->timeout_ms, collect, &c);
  if (rc == 0) {
    char title[256];
    snprintf(title, sizeof title, "character %llu on %s, every %d frames of the stream", (unsigned long long)c.id,
             s.database, c.step);
    rc = write_filmstrip(s.output, title, s.description, c.figs, c.n, c.top, o->json);
  }
  for (int i = 0; i < c.n; i++) free(c.figs[i].global);
  free(c.figs);
  stream_session_free(&s);
  return rc;
}

int animctl_render(const options_t *o, int argc, char **argv) {
  if (argc >= 2 && !strcmp(argv[1], "--stream")) return render_stream(o, argc, argv);
  return render_span(o, argc, argv);
}
