/* feet_strip.c: the footprint filmstrip (see feet_strip.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "feet_strip.h"

void feet_strip_init(feet_strip_t *s, const anim_database_t *db, float dt) {
  memset(s, 0, sizeof *s);
  s->db = db, s->dt = dt;
}

void feet_strip_free(feet_strip_t *s) {
  free(s->positions), free(s->shown), free(s->data), free(s->stepping);
  memset(s, 0, sizeof *s);
}

void feet_strip_record(void *ctx, const anim_controller_t *c, uint32_t contacts) {
  feet_strip_t *s = ctx;
  int nb = s->db->nbones;
  if (s->nframes == s->capacity) {
    int cap = s->capacity ? 2 * s->capacity : 1024;
    vec3 *p = realloc(s->positions, sizeof *p * (size_t)cap * (size_t)nb);
    if (p) s->positions = p;
    uint32_t *a = realloc(s->shown, sizeof *a * (size_t)cap);
    if (a) s->shown = a;
    uint32_t *b = realloc(s->data, sizeof *b * (size_t)cap);
    if (b) s->data = b;
    uint32_t *d = realloc(s->stepping, sizeof *d * (size_t)cap);
    if (d) s->stepping = d;
    if (!p || !a || !b || !d) return;
    s->capacity = cap;
  }
  int f = s->nframes++;
  memcpy(s->positions + (size_t)f * (size_t)nb, c->global_positions, sizeof(vec3) * (size_t)nb);
  s->shown[f] = contacts, s->data[f] = anim_database_contacts(s->db, c->frame), s->stepping[f] = 0;
  for (int k = 0; k < s->db->ncontacts; k++)
    if (k < c->feet.nfeet && c->feet.feet[k].state == ANIM_FOOT_STEPPING) s->stepping[f] |= 1u << k;
}

/* ---- drawing ------------------------------------------------------------------------- */

static const char *const foot_colour[] = {"#1f6fd6", "#e07b00", "#2a9d3f", "#9b3fb5"};

typedef struct {
  float ox, oy, ppm;  /* pixel of the world point (cx, cz), pixels per metre */
  float cx, cz;
} view_t;

/* Top view: x to the right, z up the page. */
static float px(const view_t *v, vec3 p) { return v->ox + v->ppm * (p.x - v->cx); }
static float py(const view_t *v, vec3 p) { return v->oy - v->ppm * (p.z - v->cz); }

static const vec3 *frame_positions(const feet_strip_t *s, int f) {
  return s->positions + (size_t)f * (size_t)s->db->nbones;
}

/* A footprint: an ellipse from the ankle's ground point through the contact bone's. */
static void footprint(FILE *out, const view_t *v, vec3 ankle, vec3 toe, const char *colour) {
  vec3 mid = vec3_scale(vec3_add(ankle, toe), 0.5f);
  float dx = toe.x - ankle.x, dz = toe.z - ankle.z, length = sqrtf(dx * dx + dz * dz);
  float angle = atan2f(-dz, dx) * 180.0f / ANIM_PI; /* page y points down the z axis */
  float rx = v->ppm * fmaxf(0.5f * length + 0.04f, 0.06f), ry = v->ppm * 0.035f;
  fprintf(out, "<ellipse cx='%.1f' cy='%.1f' rx='%.1f' ry='%.1f' transform='rotate(%.1f %.1f %.1f)' fill='%s' "
               "fill-opacity='0.55' stroke='%s'/>\n",
          px(v, mid), py(v, mid), rx, ry, angle, px(v, mid), py(v, mid), colour, colour);
}

static void skeleton(FILE *out, const view_t *v, const vec3 *g, const int *parents, int nb, float opacity) {
  for (int b = 2; b < nb; b++) {
    int a = parents[b];
    if (a <= 0) continue;
    fprintf(out, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#555' stroke-opacity='%.2f' "
                 "stroke-width='1.2' stroke-linecap='round'/>\n",
            px(v, g[a]), py(v, g[a]), px(v, g[b]), py(v, g[b]), opacity);
  }
}

/* Frames [a, b) in one panel of size w x h at (x0, y0). */
static void panel(FILE *out, const feet_strip_t *s, int a, int b, float x0, float y0, float w, float h) {
  const anim_database_t *db = s->db;
  int nb = db->nbones;
  float lo_x = 1e30f, hi_x = -1e30f, lo_z = 1e30f, hi_z = -1e30f;
  for (int f = a; f < b; f++)
    for (int k = 0; k < nb; k++) {
      vec3 p = frame_positions(s, f)[k];
      lo_x = fminf(lo_x, p.x), hi_x = fmaxf(hi_x, p.x), lo_z = fminf(lo_z, p.z), hi_z = fmaxf(hi_z, p.z);
    }
  float span = fmaxf(fmaxf(hi_x - lo_x, hi_z - lo_z), 1.5f);
  view_t v = {x0 + 0.5f * w, y0 + 0.5f * h + 6.0f, (fminf(w, h) - 30.0f) / span, 0.5f * (lo_x + hi_x),
              0.5f * (lo_z + hi_z)};
  fprintf(out, "<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' fill='none' stroke='#ddd'/>\n", x0, y0, w, h);
  fprintf(out, "<text x='%.1f' y='%.1f' fill='#444'>%.1f-%.1f s</text>\n", x0 + 6, y0 + 15, (double)(a * s->dt),
          (double)(b * s->dt));
  /* A metre, for scale. */
  fprintf(out, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#444' stroke-width='2'/><text x='%.1f' y='%.1f' "
               "fill='#444'>1 m</text>\n",
          x0 + w - 16 - v.ppm, y0 + 12, x0 + w - 16, y0 + 12, x0 + w - 46, y0 + 26);
  for (int f = a; f < b; f += (int)lroundf(0.5f / s->dt))
    skeleton(out, &v, frame_positions(s, f), db->skeleton.parents, nb, 0.15f + 0.3f * (float)(f - a) / (float)(b - a));
  fprintf(out, "<polyline fill='none' stroke='#999' stroke-width='1.5' points='");
  for (int f = a; f < b; f++)
    fprintf(out, "%.1f,%.1f ", px(&v, frame_positions(s, f)[0]), py(&v, frame_positions(s, f)[0]));
  fprintf(out, "'/>\n");
  for (int k = 0; k < db->ncontacts && k < 4; k++) {
    int toe = db->contact_bones[k], ankle = db->skeleton.parents[toe];
    /* Steps that re-plant: the contact bone's path, dashed red. */
    for (int f = a; f < b; f++) {
      if (!((s->stepping[f] >> k) & 1u)) continue;
      int e = f;
      while (e < b && ((s->stepping[e] >> k) & 1u)) e++;
      fprintf(out, "<polyline fill='none' stroke='#d62728' stroke-width='2' stroke-dasharray='4 2' points='");
      for (int g = f > a ? f - 1 : f; g < e && g < b; g++)
        fprintf(out, "%.1f,%.1f ", px(&v, frame_positions(s, g)[toe]), py(&v, frame_positions(s, g)[toe]));
      fprintf(out, "'/>\n");
      f = e;
    }
    /* A footprint per contact shown, where the foot is when it plants. */
    for (int f = a; f < b; f++)
      if (((s->shown[f] >> k) & 1u) && (f == a || !((s->shown[f - 1] >> k) & 1u)))
        footprint(out, &v, frame_positions(s, f)[ankle], frame_positions(s, f)[toe], foot_colour[k]);
  }
}

/* Contacts over time: per foot, the data's (thin, grey) and the shown ones
 * (thick, the foot's colour), steps in red. */
static void timeline(FILE *out, const feet_strip_t *s, float x0, float y0, float w) {
  float per_frame = w / (float)s->nframes;
  for (int k = 0; k < s->db->ncontacts && k < 4; k++) {
    float y = y0 + 26.0f * (float)k;
    fprintf(out, "<text x='%.1f' y='%.1f' fill='#444' text-anchor='end'>%s</text>\n", x0 - 6, y + 13,
            s->db->skeleton.names[s->db->contact_bones[k]]);
    for (int pass = 0; pass < 3; pass++) {
      const uint32_t *bits = pass == 0 ? s->data : pass == 1 ? s->shown : s->stepping;
      const char *colour = pass == 0 ? "#bbb" : pass == 1 ? foot_colour[k] : "#d62728";
      float top = pass == 0 ? y + 13 : y + 2, height = pass == 0 ? 5 : 9;
      for (int f = 0; f < s->nframes; f++) {
        if (!((bits[f] >> k) & 1u)) continue;
        int e = f;
        while (e < s->nframes && ((bits[e] >> k) & 1u)) e++;
        fprintf(out, "<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' fill='%s'/>\n", x0 + per_frame * (float)f, top,
                per_frame * (float)(e - f), height, colour);
        f = e;
      }
    }
  }
  for (int second = 0; (float)second <= (float)s->nframes * s->dt; second++)
    fprintf(out, "<text x='%.1f' y='%.1f' fill='#888' font-size='10' text-anchor='middle'>%d</text>\n",
            x0 + (float)second / s->dt * per_frame, y0 + 26.0f * (float)s->db->ncontacts + 10, second);
}

int feet_strip_write(const feet_strip_t *s, const char *path, float panel_seconds, const char *title) {
  if (s->nframes < 2) return -1;
  FILE *out = fopen(path, "w");
  if (!out) return -1;
  int per_panel = (int)lroundf(panel_seconds / s->dt), npanels = (s->nframes + per_panel - 1) / per_panel;
  const float w = 300.0f, h = 300.0f, gap = 10.0f, top = 58.0f;
  float width = gap + (w + gap) * (float)npanels, lines = 26.0f * (float)s->db->ncontacts + 30;
  fprintf(out, "<svg xmlns='http://www.w3.org/2000/svg' width='%.0f' height='%.0f' font-family='sans-serif' "
               "font-size='12'>\n<rect width='100%%' height='100%%' fill='white'/>\n",
          width, top + h + gap + lines + 20);
  fprintf(out, "<text x='%.0f' y='18'>%s</text>\n", gap, title);
  fprintf(out, "<text x='%.0f' y='36' fill='#444'>top view: root path grey, skeleton every 0.5 s; a footprint where "
               "the stream reports a foot planted (%s left, %s right), held there until it lifts;</text>\n",
          gap, "blue", "orange");
  fprintf(out, "<text x='%.0f' y='52' fill='#444'>dashed red: a foot the animation left behind stepping to where it "
               "went, to plant again. Timeline: contacts in the data (grey), shown planted (colour), steps (red)"
               "</text>\n",
          gap);
  for (int p = 0; p < npanels; p++) {
    int a = p * per_panel, b = a + per_panel < s->nframes ? a + per_panel : s->nframes;
    panel(out, s, a, b, gap + (w + gap) * (float)p, top, w, h);
  }
  timeline(out, s, gap + 70, top + h + gap + 10, width - 2 * gap - 80);
  fprintf(out, "</svg>\n");
  return fclose(out) == 0 ? 0 : -1;
}
