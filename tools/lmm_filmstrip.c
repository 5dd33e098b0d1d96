/*
 * lmm_filmstrip: an SVG filmstrip of a learned character (lmm.h), ticked at
 * 60 Hz by the core controller itself (no server): walking and running seen
 * from the side, then turning seen from above.
 *
 *   lmm_filmstrip [--shared DIR] [--out FILE] [--lmm DIR --db FILE.animdb]
 *
 * The reference networks (SHARED/data/lmm), or with --lmm and --db networks
 * tools/lmm_train trained on that database, loaded and set up as the server
 * does (anim_lmm_networks_load_for; the feet locked on the database's legs,
 * the dots then the contacts shown, anim_lmm_contacts). The skeleton, its
 * head (the bone named Head) and toes (the contact bones) come from the
 * networks; left limbs are the bones named Left* or *_L.
 *
 * Each strip overlays the pose every few frames (left limbs blue, right
 * red), and marks the toe of every frame whose contact output is on with a
 * dot: a planted foot leaves one tight cluster of dots, a sliding one a
 * smear. The sliding is also measured and printed (toe speed while in
 * contact). `make lmm-filmstrip` writes docs/lmm_filmstrip.svg, `make
 * lmm-bandai-filmstrip` docs/lmm_bandai_filmstrip.svg (the networks of
 * `make lmm-bandai`).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "database/dbfile.h"
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

static int ends_with(const char *name, const char *tail) {
  size_t n = strlen(name), t = strlen(tail);
  return n >= t && strcmp(name + n - t, tail) == 0;
}

static const char *bone_colour(const char *name) {
  if (strncmp(name, "Left", 4) == 0 || ends_with(name, "_L") || ends_with(name, "_l")) return "#2060c0";
  if (strncmp(name, "Right", 5) == 0 || ends_with(name, "_R") || ends_with(name, "_r")) return "#c03020";
  return "#404040";
}

/* A segment is drawn from each bone to its parent, but not from the root
 * (bone 0, on the ground), nor from a second root: bone 1 when it has one
 * child (Bandai Namco's joint_Root under the hips). */
static int drawn(const anim_skeleton_t *sk, int nbones, int b) {
  int parent = sk->parents[b];
  if (b == 0 || parent == 0) return 0;
  if (parent != 1) return 1;
  int children = 0;
  for (int i = 1; i < nbones; i++) children += sk->parents[i] == 1;
  return children > 1;
}

static int head_bone(const anim_lmm_networks_t *nets) {
  for (int b = 0; b < nets->nbones; b++)
    if (strcmp(nets->skeleton.names[b], "Head") == 0) return b;
  return -1;
}

static void draw_pose(const canvas_t *cv, const anim_lmm_character_t *c, float opacity) {
  const anim_skeleton_t *sk = &c->nets->skeleton;
  fprintf(cv->svg, "<g stroke-width=\"2\" stroke-linecap=\"round\" opacity=\"%.2f\">", (double)opacity);
  for (int b = 1; b < c->nets->nbones; b++) {
    if (!drawn(sk, c->nets->nbones, b)) continue;
    float x0, y0, x1, y1;
    project(cv, c->global_positions[sk->parents[b]], &x0, &y0);
    project(cv, c->global_positions[b], &x1, &y1);
    fprintf(cv->svg, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>", (double)x0, (double)y0,
            (double)x1, (double)y1, bone_colour(sk->names[b]));
  }
  int head = head_bone(c->nets);
  if (head >= 0) {
    float hx, hy;
    project(cv, c->global_positions[head], &hx, &hy);
    fprintf(cv->svg, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" fill=\"none\" stroke=\"#404040\"/>", (double)hx,
            (double)hy, cv->strip->top_view ? 3.0 : 6.0);
  }
  fprintf(cv->svg, "</g>\n");
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

/* Simulates and draws one strip; accumulates contact-toe speeds. db: lock
 * the feet on its legs (trained networks), or NULL. */
static void run_strip(FILE *svg, const anim_lmm_networks_t *nets, const anim_database_t *db, const strip_t *strip,
                      float speed, float *scratch, double *io_slide_sum, long *io_slide_count, int *io_slow) {
  anim_lmm_character_t c;
  float facing = strip->top_view ? ANIM_PI / 2.0f : 0.0f;
  anim_lmm_character_init(&c, nets, NULL, vec3_zero(), facing, scratch);
  if (db && anim_lmm_character_feet(&c, db)) fprintf(stderr, "lmm_filmstrip: the feet cannot be locked on %s\n", db->name);
  /* Warm-up: a second at the strip's speed, off the picture. */
  for (int f = 0; f < 60; f++) {
    if (strip->top_view) turning_input(&c, 0);
    else set_velocity(&c, speed, 0.0f);
    anim_lmm_tick(&c, 1.0f / 60.0f, scratch);
  }
  canvas_t cv = {svg, strip, c.pose.positions[0]};
  vec3 first = c.pose.positions[0];
  if (!strip->top_view)
    fprintf(svg, "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#b0b0b0\"/>\n",
            (double)strip->origin_x - 10, (double)(strip->origin_y + strip->height), WIDTH - 10,
            (double)(strip->origin_y + strip->height));
  vec3 previous[2] = {{0}};
  int nfeet = nets->ncontacts < 2 ? nets->ncontacts : 2, toes[2] = {nets->contact_bones[0], nets->contact_bones[1]};
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
    uint32_t shown = anim_lmm_contacts(&c);
    for (int k = 0; k < nfeet; k++) {
      vec3 toe = c.global_positions[toes[k]];
      if (f > 0 && (shown >> k & 1u)) {
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
  /* The title, with the speed the root moved at (what the input reached). */
  vec3 d = vec3_sub(c.pose.positions[0], first);
  float moved = sqrtf(d.x * d.x + d.z * d.z) * 60.0f / (float)strip->frames;
  fprintf(svg, "<text x=\"%.0f\" y=\"%.0f\" font-family=\"sans-serif\" font-size=\"14\">%s%s",
          (double)strip->origin_x, (double)strip->origin_y - 6.0, strip->title, strip->top_view ? "" : "; moving at ");
  if (!strip->top_view) fprintf(svg, "%.2f m/s", (double)moved);
  fprintf(svg, "</text>\n");
}

int main(int argc, char **argv) {
  const char *shared = "../shared", *out = "docs/lmm_filmstrip.svg", *lmm_dir = NULL, *db_path = NULL;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--shared") == 0) shared = argv[i + 1];
    else if (strcmp(argv[i], "--out") == 0) out = argv[i + 1];
    else if (strcmp(argv[i], "--lmm") == 0) lmm_dir = argv[i + 1];
    else if (strcmp(argv[i], "--db") == 0) db_path = argv[i + 1];
    else {
      fprintf(stderr, "usage: lmm_filmstrip [--shared DIR] [--out FILE] [--lmm DIR --db FILE.animdb]\n");
      return 2;
    }
  }
  if (!lmm_dir != !db_path) {
    fprintf(stderr, "lmm_filmstrip: --lmm DIR and --db FILE go together (networks trained on that database)\n");
    return 2;
  }
  char dir[4096], err[512];
  snprintf(dir, sizeof dir, "%s", lmm_dir ? lmm_dir : "");
  if (!lmm_dir) snprintf(dir, sizeof dir, "%s/data/lmm", shared);
  int code = 0;
  anim_database_t db;
  if (db_path && anim_dbfile_load(&db, db_path, err, sizeof err)) {
    fprintf(stderr, "lmm_filmstrip: %s\n", err);
    return 1;
  }
  anim_lmm_networks_t *nets = db_path ? anim_lmm_networks_load_for(dir, &db, &code, err, sizeof err)
                                      : anim_lmm_networks_load(dir, NULL, &code, err, sizeof err);
  if (!nets) {
    fprintf(stderr, "lmm_filmstrip: %s: %s\n", dir, err);
    return 1;
  }
  float *scratch = malloc(sizeof(float) * anim_lmm_scratch_floats(nets, 1));
  FILE *svg = fopen(out, "w");
  if (!svg || !scratch) {
    fprintf(stderr, "lmm_filmstrip: cannot write %s\n", out);
    return 1;
  }
  const strip_t strips[3] = {
      {"Walking, asked 1.5 m/s (side view; a pose every 12 frames, dots: toes while the contact output is on)", 0, 360, 12,
       20, 40, 150},
      {"Running, asked 3.5 m/s (side view; a pose every 6 frames)", 0, 150, 6, 20, 240, 150},
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
  for (int s = 0; s < 3; s++)
    run_strip(svg, nets, db_path ? &db : NULL, &strips[s], speeds[s], scratch, &slide, &count, &slow);
  fprintf(svg, "</svg>\n");
  fclose(svg);
  printf("lmm_filmstrip: wrote %s; %ld contact-toe frames, mean toe speed %.3f m/s, %.0f%% under 0.25 m/s\n", out,
         count, count ? slide / (double)count : 0.0, count ? 100.0 * slow / (double)count : 0.0);
  free(scratch);
  anim_lmm_networks_free(nets);
  if (db_path) anim_database_free(&db);
  return 0;
}
