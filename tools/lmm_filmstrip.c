/*
 * lmm_filmstrip: an SVG filmstrip of a learned character (lmm.h), ticked at
 * 60 Hz by the core controller itself (no server): walking and running seen
 * from the side, then turning seen from above.
 *
 *   lmm_filmstrip [--shared DIR] [--out FILE]
 *
 * Each strip overlays the pose every few frames (left limbs blue, right
 * red), and marks the toe of every frame whose contact output is on with a
 * dot: a planted foot leaves one tight cluster of dots, a sliding one a
 * smear. The sliding is also measured and printed (toe speed while in
 * contact). `make lmm-filmstrip` writes docs/lmm_filmstrip.svg.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "learned/lmm.h"

#define SCALE 80.0f /* pixels per metre */
#define WIDTH 1000

typedef struct {
  const char *title;
  int top_view;        /* 0: side view along the walking direction (+Z); 1: from above */
  int frames, every;   /* frames simulated after the warm-up; a pose drawn every `every` */
  float origin_x, origin_y, height; /* strip placement, pixels */
} strip_t;

typedef struct {
  FILE *svg;
  const strip_t *strip;
  vec3 start; /* world point at the strip's origin */
} canvas_t;

/* World -> pixels for the strip: side view maps z to x and y up; top view x to x and z up. */
static void project(const canvas_t *cv, vec3 p, float *out_x, float *out_y) {
  vec3 d = vec3_sub(p, cv->start);
  if (cv->strip->top_view) {
    *out_x = cv->strip->origin_x + SCALE * 0.6f * d.x;
    *out_y = cv->strip->origin_y + cv->strip->height * 0.72f - SCALE * 0.6f * d.z;
  } else {
    *out_x = cv->strip->origin_x + SCALE * d.z;
    *out_y = cv->strip->origin_y + cv->strip->height - SCALE * d.y;
  }
}

static const char *bone_colour(const char *name) {
  if (strncmp(name, "Left", 4) == 0) return "#2060c0";
  if (strncmp(name, "Right", 5) == 0) return "#c03020";
  return "#404040";
}

static void draw_pose(const canvas_t *cv, const anim_lmm_character_t *c, float opacity) {
  const anim_skeleton_t *sk = &c->nets->skeleton;
  fprintf(cv->svg, "<g stroke-width=\"2\" stroke-linecap=\"round\" opacity=\"%.2f\">", (double)opacity);
  for (int b = 2; b < ANIM_LMM_BONES; b++) {
    float x0, y0, x1, y1;
    project(cv, c->global_positions[sk->parents[b]], &x0, &y0);
    project(cv, c->global_positions[b], &x1, &y1);
    fprintf(cv->svg, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>", (double)x0, (double)y0,
            (double)x1, (double)y1, bone_colour(sk->names[b]));
  }
  float hx, hy;
  project(cv, c->global_positions[14], &hx, &hy); /* Head */
  fprintf(cv->svg, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" fill=\"none\" stroke=\"#404040\"/></g>\n", (double)hx,
          (double)hy, cv->strip->top_view ? 3.0 : 6.0);
}

static void set_velocity(anim_lmm_character_t *c, float speed, float angle) {
  anim_controller_input_t in;
  memset(&in, 0, sizeof in);
  in.kind = ANIM_INPUT_VELOCITY;
  in.velocity = vec3_make(speed * sinf(angle), 0.0f, speed * cosf(angle));
  in.facing = angle;
  anim_lmm_set_input(c, &in);
}

/* The turning strip's input at frame f: east, north, east, south, then a run east. */
static void turning_input(anim_lmm_character_t *c, int f) {
  static const float east = ANIM_PI / 2.0f, north = 0.0f, south = ANIM_PI; /* +X east, +Z north (up in the picture) */
  float t = (float)f / 60.0f;
  if (t < 2.0f) set_velocity(c, 1.5f, east);
  else if (t < 4.0f) set_velocity(c, 1.5f, north);
  else if (t < 6.0f) set_velocity(c, 1.5f, east);
  else if (t < 8.0f) set_velocity(c, 1.5f, south);
  else set_velocity(c, 3.5f, east);
}

/* Simulates and draws one strip; accumulates contact-toe speeds. */
static void run_strip(FILE *svg, const anim_lmm_networks_t *nets, const strip_t *strip, float speed, float *scratch,
                      double *io_slide_sum, long *io_slide_count, int *io_slow) {
  anim_lmm_character_t c;
  float facing = strip->top_view ? ANIM_PI / 2.0f : 0.0f;
  anim_lmm_character_init(&c, nets, NULL, vec3_zero(), facing, scratch);
  /* Warm-up: a second at the strip's speed, off the picture. */
  for (int f = 0; f < 60; f++) {
    if (strip->top_view) turning_input(&c, 0);
    else set_velocity(&c, speed, 0.0f);
    anim_lmm_tick(&c, 1.0f / 60.0f, scratch);
  }
  canvas_t cv = {svg, strip, c.pose.positions[0]};
  fprintf(svg, "<text x=\"%.0f\" y=\"%.0f\" font-family=\"sans-serif\" font-size=\"14\">%s</text>\n",
          (double)strip->origin_x, (double)strip->origin_y - 6.0, strip->title);
  if (!strip->top_view)
    fprintf(svg, "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#b0b0b0\"/>\n",
            (double)strip->origin_x - 10, (double)(strip->origin_y + strip->height), WIDTH - 10,
            (double)(strip->origin_y + strip->height));
  vec3 previous[2] = {{0}};
  static const int toes[2] = {ANIM_LMM_LEFT_TOE, ANIM_LMM_RIGHT_TOE};
  if (strip->top_view) {
    /* The root's path, under the poses: the same inputs on a copy (the
     * simulation is deterministic, so it is the path drawn below). */
    anim_lmm_character_t dry = c;
    fprintf(svg, "<polyline fill=\"none\" stroke=\"#c8c8c8\" stroke-width=\"3\" points=\"");
    for (int f = 0; f < strip->frames; f++) {
      float x, y;
      turning_input(&dry, f);
      anim_lmm_tick(&dry, 1.0f / 60.0f, scratch);
      project(&cv, dry.pose.positions[0], &x, &y);
      fprintf(svg, "%.1f,%.1f ", (double)x, (double)y);
    }
    fprintf(svg, "\"/>\n");
  }
  for (int f = 0; f < strip->frames; f++) {
    if (strip->top_view) turning_input(&c, f);
    else set_velocity(&c, speed, 0.0f);
    anim_lmm_tick(&c, 1.0f / 60.0f, scratch);
    anim_lmm_global_pose(&c);
    if (f % strip->every == 0) draw_pose(&cv, &c, 0.75f);
    for (int k = 0; k < 2; k++) {
      vec3 toe = c.global_positions[toes[k]];
      if (f > 0 && c.contacts[k]) {
        float x, y, v = vec3_length(vec3_sub(toe, previous[k])) * 60.0f;
        project(&cv, toe, &x, &y);
        fprintf(svg, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"1.6\" fill=\"%s\"/>\n", (double)x, (double)y,
                k ? "#c03020" : "#2060c0");
        *io_slide_sum += v, (*io_slide_count)++;
        if (v < 0.25f) (*io_slow)++;
      }
      previous[k] = toe;
    }
  }
}

int main(int argc, char **argv) {
  const char *shared = "../shared", *out = "docs/lmm_filmstrip.svg";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--shared") == 0) shared = argv[i + 1];
    else if (strcmp(argv[i], "--out") == 0) out = argv[i + 1];
    else {
      fprintf(stderr, "usage: lmm_filmstrip [--shared DIR] [--out FILE]\n");
      return 2;
    }
  }
  char dir[4096], err[512];
  snprintf(dir, sizeof dir, "%s/data/lmm", shared);
  int code = 0;
  anim_lmm_networks_t *nets = anim_lmm_networks_load(dir, NULL, &code, err, sizeof err);
  if (!nets) {
    fprintf(stderr, "lmm_filmstrip: %s\n", err);
    return 1;
  }
  float *scratch = malloc(sizeof(float) * anim_lmm_scratch_floats(nets, 1));
  FILE *svg = fopen(out, "w");
  if (!svg || !scratch) {
    fprintf(stderr, "lmm_filmstrip: cannot write %s\n", out);
    return 1;
  }
  const strip_t strips[3] = {
      {"Walking, 1.5 m/s (side view; a pose every 12 frames, dots: toes while the contact output is on)", 0, 360, 12,
       20, 40, 150},
      {"Running, 3.5 m/s (side view; a pose every 6 frames)", 0, 150, 6, 20, 240, 150},
      {"Turning (from above): east, north, east, south at 1.5 m/s, then running east; a pose every 20 frames", 1, 630,
       20, 20, 440, 300},
  };
  float speeds[3] = {1.5f, 3.5f, 0.0f};
  fprintf(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"720\" viewBox=\"0 0 %d 720\">\n", WIDTH,
          WIDTH);
  fprintf(svg, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
  double slide = 0.0;
  long count = 0;
  int slow = 0;
  for (int s = 0; s < 3; s++) run_strip(svg, nets, &strips[s], speeds[s], scratch, &slide, &count, &slow);
  fprintf(svg, "</svg>\n");
  fclose(svg);
  printf("lmm_filmstrip: wrote %s; %ld contact-toe frames, mean toe speed %.3f m/s, %.0f%% under 0.25 m/s\n", out,
         count, count ? slide / (double)count : 0.0, count ? 100.0 * slow / (double)count : 0.0);
  free(scratch);
  anim_lmm_networks_free(nets);
  return 0;
}
