/*
 * animgraph: pictures of motion graphs and state machines, from the core
 * (no server): so a person can look at what the graph chose and at what the
 * characters do.
 *
 *   animgraph matrix [--shared DIR] [--size N] [-o matrix.png]
 *       The distance matrix of the Bandai Namco database (as the tests build
 *       it), N x N pixels (each the least distance of its block of frames):
 *       bright where two windows are alike (0 m white, 0.3 m and more
 *       black), blue where not compared (no window, or one range's
 *       near-diagonal); grey lines between ranges; transitions of the
 *       pruned graph red, those pruning dropped yellow.
 *   animgraph follow [--shared DIR] [--seconds S] [--radius R] [-o circle.svg]
 *       A graph character following a circle on the Bandai graph: top view
 *       of the asked circle (dashed) and of the root's path (blue, red dots
 *       at the jumps), with a stick figure every second; under it a side
 *       view of the first frames, one figure every 6 ticks.
 *   animgraph jump [--shared DIR] [-o jump.svg]
 *       A character running the seed's jump machine (the spans of
 *       test_state_machine.c) under the script "JUMP_PRESS at 0.5 s,
 *       JUMP_RELEASE at 1.6 s, NEAR_GROUND at 2.9 s": side view, a figure
 *       every 6 ticks, each labelled with its state and coloured by it.
 *
 * Build: make build/animgraph (needs libpng, tools/debian-packages.txt).
 */
#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "database.h"
#include "graph_character.h"
#include "import.h"
#include "kinematics.h"
#include "machine_character.h"
#include "motion_graph.h"
#include "state_machine.h"

typedef struct {
  const char *shared, *out;
  int size;
  float seconds, radius;
} options_t;

static int bandai(anim_database_t *out, const char *shared) {
  char dir[1024], err[512];
  snprintf(dir, sizeof dir, "%s/data/mocap/bandai-namco", shared);
  anim_clip_list_t clips = {NULL, 0, 0};
  anim_bvh_options_t bo = {0.01f};
  anim_build_options_t o;
  anim_build_options_default(&o);
  o.mirror = 1;
  int rc = anim_import_path(&clips, dir, &bo, err, sizeof err);
  if (!rc) rc = anim_database_build(out, "bandai", clips.clips, clips.count, &o, err, sizeof err);
  anim_clip_list_free(&clips);
  if (rc) fprintf(stderr, "animgraph: %s\n", err);
  return rc;
}

/* ---- the distance matrix ----------------------------------------------------------------- */

typedef struct {
  float *pixels; /* size x size least distances */
  int size, frames;
} matrix_t;

static void take_row(int row, const float *d, int first, int count, void *data) {
  matrix_t *m = data;
  int u = (int)((long)row * m->size / m->frames);
  for (int c = first; c < count; c++) {
    int v = (int)((long)c * m->size / m->frames);
    float *a = &m->pixels[(size_t)u * (size_t)m->size + (size_t)v], *b = &m->pixels[(size_t)v * (size_t)m->size + (size_t)u];
    if (d[c] < *a) *a = d[c];
    if (d[c] < *b) *b = d[c];
  }
}

static void dot(unsigned char *rgb, int size, int u, int v, const unsigned char colour[3]) {
  for (int du = -2; du <= 2; du++)
    for (int dv = -2; dv <= 2; dv++) {
      int x = u + du, y = v + dv;
      if (x < 0 || y < 0 || x >= size || y >= size || abs(du) + abs(dv) > 3) continue;
      memcpy(rgb + 3 * ((size_t)x * (size_t)size + (size_t)y), colour, 3);
    }
}

static int matrix(const options_t *o) {
  anim_database_t db;
  if (bandai(&db, o->shared)) return 1;
  int size = o->size < db.nframes ? o->size : db.nframes;
  matrix_t m = {malloc((size_t)size * (size_t)size * sizeof(float)), size, db.nframes};
  for (size_t i = 0; i < (size_t)size * (size_t)size; i++) m.pixels[i] = INFINITY;
  char err[256];
  anim_graph_options_t go;
  anim_graph_options_default(&go);
  go.row = take_row, go.data = &m, go.prune = 0;
  anim_motion_graph_t *all = anim_motion_graph_build(&db, &go, err, sizeof err);
  anim_graph_options_default(&go);
  anim_motion_graph_t *kept = all ? anim_motion_graph_build(&db, &go, err, sizeof err) : NULL;
  if (!all || !kept) {
    fprintf(stderr, "animgraph: %s\n", err);
    return 1;
  }
  unsigned char *rgb = malloc((size_t)size * (size_t)size * 3);
  for (size_t i = 0; i < (size_t)size * (size_t)size; i++) {
    float d = m.pixels[i];
    if (!isfinite(d)) {
      rgb[3 * i] = 20, rgb[3 * i + 1] = 30, rgb[3 * i + 2] = 70;
    } else {
      unsigned char g = (unsigned char)lroundf(255.0f * (1.0f - fminf(d / 0.3f, 1.0f)));
      rgb[3 * i] = rgb[3 * i + 1] = rgb[3 * i + 2] = g;
    }
  }
  for (int r = 1; r < db.nranges; r++) {
    int p = (int)((long)db.ranges[r].start * size / db.nframes);
    for (int q = 0; q < size; q++) {
      unsigned char *a = rgb + 3 * ((size_t)p * (size_t)size + (size_t)q), *b = rgb + 3 * ((size_t)q * (size_t)size + (size_t)p);
      a[0] = a[1] = a[2] = b[0] = b[1] = b[2] = 128;
    }
  }
  static const unsigned char red[3] = {230, 30, 30}, yellow[3] = {240, 200, 0};
  int dropped = 0;
  for (int t = 0; t < all->ntransitions; t++) {
    const anim_graph_transition_t *tr = &all->transitions[t];
    int in_kept = 0;
    for (int k = 0; k < kept->ntransitions && !in_kept; k++)
      in_kept = kept->transitions[k].from == tr->from && kept->transitions[k].to == tr->to;
    dropped += !in_kept;
    dot(rgb, size, (int)((long)tr->from * size / db.nframes), (int)((long)tr->to * size / db.nframes), in_kept ? red : yellow);
  }
  png_image image;
  memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION, image.width = (png_uint_32)size, image.height = (png_uint_32)size;
  image.format = PNG_FORMAT_RGB;
  int ok = png_image_write_to_file(&image, o->out, 0, rgb, 0, NULL);
  printf("%s: %d x %d frames in %d x %d pixels; %d ranges; %d transitions kept (red), %d dropped by pruning (yellow)\n",
         o->out, db.nframes, db.nframes, size, size, db.nranges, kept->ntransitions, dropped);
  for (int r = 0; r < db.nranges; r++)
    printf("  pixels %4d..%4d  %s\n", (int)((long)db.ranges[r].start * size / db.nframes),
           (int)((long)db.ranges[r].stop * size / db.nframes) - 1, db.ranges[r].name);
  free(rgb), free(m.pixels);
  anim_motion_graph_free(all), anim_motion_graph_free(kept);
  anim_database_free(&db);
  return ok ? 0 : 1;
}

/* ---- stick figures --------------------------------------------------------------------------- */

/* One figure: bones as lines from parent to child in the picture's plane
 * (u right, v up), at an offset and scale (pixels per metre). */
static void figure(FILE *f, const anim_database_t *db, const vec3 *global, int top, float ou, float ov, float scale,
                   const char *colour, float width) {
  for (int b = 1; b < db->nbones; b++) {
    int p = db->skeleton.parents[b];
    if (p <= 0) continue;
    vec3 a = global[p], z = global[b];
    if (vec3_length(vec3_sub(a, z)) > 1.5f) continue; /* a ground-level source root */
    float au = top ? a.x : a.z, av = top ? a.z : a.y, zu = top ? z.x : z.z, zv = top ? z.z : z.y;
    fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='%s' stroke-width='%.1f'/>\n", ou + au * scale,
            ov - av * scale, ou + zu * scale, ov - zv * scale, colour, width);
  }
}

static int follow(const options_t *o) {
  anim_database_t db;
  if (bandai(&db, o->shared)) return 1;
  char err[256];
  anim_motion_graph_t *g = anim_motion_graph_build(&db, NULL, err, sizeof err);
  if (!g) {
    fprintf(stderr, "animgraph: %s\n", err);
    return 1;
  }
  int start = 0;
  for (int u = 0; u < g->nnodes; u++)
    if (!strcmp(db.ranges[g->nodes[u].range].name, "dataset-2_walk_normal_001") &&
        g->nodes[u].frame > db.ranges[g->nodes[u].range].start + 120) {
      start = u;
      break;
    }
  float r = o->radius, circle[128];
  for (int i = 0; i < 64; i++) {
    float a = 2.0f * (float)M_PI * (float)i / 64.0f;
    circle[2 * i] = r * sinf(a), circle[2 * i + 1] = r - r * cosf(a);
  }
  anim_graph_character_t c;
  anim_path_t path = {circle, 64, 1};
  if (anim_graph_character_init(&c, g, &db, NULL, 0.1f, vec3_zero(), (float)M_PI / 2, start) ||
      anim_graph_character_set_path(&c, &path))
    return 1;
  int ticks = (int)(o->seconds * 60.0f), nb = db.nbones;
  vec3 *poses = malloc((size_t)ticks * (size_t)nb * sizeof(vec3));
  int *jumped = calloc((size_t)ticks, sizeof(int));
  quat *facings = malloc((size_t)ticks * sizeof(quat));
  for (int t = 0; t < ticks; t++) {
    uint64_t jumps = c.jumps;
    anim_graph_character_tick(&c, 1.0f / 60.0f);
    anim_graph_character_global_pose(&c);
    memcpy(poses + (size_t)t * (size_t)nb, c.global_positions, (size_t)nb * sizeof(vec3));
    facings[t] = c.global_rotations[0];
    jumped[t] = c.jumps != jumps;
  }
  FILE *f = fopen(o->out, "w");
  if (!f) return 1;
  float scale = 60.0f, width = 2.0f * r * scale + 200.0f, side = 220.0f;
  float ou = width / 2.0f, ov = 2.0f * r * scale + 100.0f; /* top view: x right, z up */
  fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='%.0f' height='%.0f' font-family='sans-serif' font-size='12'>\n",
          fmaxf(width, 1200.0f), ov + 60.0f + side);
  fprintf(f, "<rect width='100%%' height='100%%' fill='white'/>\n");
  fprintf(f, "<text x='10' y='20'>graph character following a circle of radius %.1f m on the Bandai Namco graph (%d nodes, "
             "%d edges), %.0f s, top view; blue: root path, red: jumps (inertialized), dashed: the circle asked</text>\n",
          r, g->nnodes, g->nedges, o->seconds);
  fprintf(f, "<polygon fill='none' stroke='#999' stroke-dasharray='6 4' points='");
  for (int i = 0; i < 64; i++) fprintf(f, "%.1f,%.1f ", ou + circle[2 * i] * scale, ov - circle[2 * i + 1] * scale);
  fprintf(f, "'/>\n<polyline fill='none' stroke='#2060c0' stroke-width='1.5' points='");
  for (int t = 0; t < ticks; t++) fprintf(f, "%.1f,%.1f ", ou + poses[(size_t)t * nb].x * scale, ov - poses[(size_t)t * nb].z * scale);
  fprintf(f, "'/>\n");
  for (int t = 0; t < ticks; t++)
    if (jumped[t])
      fprintf(f, "<circle cx='%.1f' cy='%.1f' r='2.5' fill='#d02020'/>\n", ou + poses[(size_t)t * nb].x * scale,
              ov - poses[(size_t)t * nb].z * scale);
  for (int t = 0; t < ticks; t += 60) figure(f, &db, poses + (size_t)t * nb, 1, ou, ov, scale, "#303030", 1.2f);
  /* Side view: the first frames, spread along u. */
  float sv = ov + 40.0f + side - 20.0f, sscale = 100.0f;
  fprintf(f, "<text x='10' y='%.0f'>side view (height against time), a figure every 6 ticks (0.1 s)</text>\n", ov + 50.0f);
  fprintf(f, "<line x1='0' y1='%.1f' x2='%.0f' y2='%.1f' stroke='#bbb'/>\n", sv, fmaxf(width, 1200.0f), sv);
  for (int k = 0; k < 20 && k * 6 < ticks; k++) {
    /* In the root's own axes (facing +Z), so every figure is seen from its side. */
    vec3 local[ANIM_MAX_BONES];
    const vec3 *pose = poses + (size_t)(k * 6) * nb;
    for (int b = 0; b < nb; b++) {
      vec3 rel = quat_inv_mul_vec3(facings[k * 6], vec3_sub(pose[b], pose[0]));
      local[b] = vec3_make(0.0f, pose[b].y, rel.z);
    }
    figure(f, &db, local, 0, 60.0f + (float)k * 55.0f, sv, sscale, k % 2 ? "#404040" : "#2060c0", 1.5f);
  }
  fprintf(f, "</svg>\n");
  fclose(f);
  printf("%s: %d ticks, %llu plans, %llu jumps, root ended at (%.2f, %.2f)\n", o->out, ticks,
         (unsigned long long)c.plans, (unsigned long long)c.jumps, c.pose_positions[0].x, c.pose_positions[0].z);
  free(poses), free(jumped), free(facings);
  anim_graph_character_free(&c);
  anim_motion_graph_free(g);
  anim_database_free(&db);
  return 0;
}

/* ---- the jump machine ---------------------------------------------------------------------- */

static const char jump_text[] =
    "halflife 0.1\n"
    "stand        { clip dataset-2_walk_normal_001 [0 0.5] loop   JUMP_PRESS stand2crouch }\n"
    "stand2crouch { clip dataset-2_walk_normal_001 [0.5 1.2]  JUMP_RELEASE hop   END crouch }\n"
    "crouch       { clip dataset-2_run_normal_001 [0 0.3] loop    JUMP_RELEASE takeoff halflife 0.15 }\n"
    "takeoff      { clip dataset-2_run_normal_001 [0.3 0.8]       END float }\n"
    "hop          { clip dataset-1_run_normal_001 [0 0.4]         END float }\n"
    "float        { clip dataset-1_run_active_001 [0.15 0.45] loop NEAR_GROUND land exit 0.2 }\n"
    "land         { clip dataset-1_run_normal_001 [0.4 0.76]      END stand }\n";

static int jump(const options_t *o) {
  anim_database_t db;
  if (bandai(&db, o->shared)) return 1;
  char err[256];
  anim_state_machine_t *sm = anim_state_machine_parse(jump_text, strlen(jump_text), "jump", NULL, err, sizeof err);
  if (!sm || anim_state_machine_bind(sm, &db, NULL, err, sizeof err)) {
    fprintf(stderr, "animgraph: %s\n", err);
    return 1;
  }
  anim_machine_character_t c;
  if (anim_machine_character_init(&c, sm, &db, NULL, NULL, vec3_zero(), 0.0f)) return 1;
  static const char *colours[] = {"#303030", "#2060c0", "#20a040", "#d07000", "#a020a0", "#d02020", "#008080"};
  const struct {
    float time;
    const char *event;
  } script[] = {{0.5f, "JUMP_PRESS"}, {1.6f, "JUMP_RELEASE"}, {2.9f, "NEAR_GROUND"}};
  int ticks = 4 * 60, step = 6, next = 0, nb = db.nbones;
  FILE *f = fopen(o->out, "w");
  if (!f) return 1;
  float scale = 90.0f, ground = 230.0f, spacing = 40.0f;
  int figures = ticks / step;
  fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='%.0f' height='300' font-family='sans-serif' font-size='11'>\n",
          80.0f + (float)figures * spacing);
  fprintf(f, "<rect width='100%%' height='100%%' fill='white'/>\n");
  fprintf(f, "<text x='10' y='18'>the seed's jump machine on Bandai Namco spans: JUMP_PRESS at 0.5 s, JUMP_RELEASE at 1.6 "
             "s, NEAR_GROUND at 2.9 s; side view, a figure every 0.1 s, coloured and labelled by state, in the root's "
             "own axes (its travel removed)</text>\n");
  fprintf(f, "<line x1='0' y1='%.0f' x2='%.0f' y2='%.0f' stroke='#bbb'/>\n", ground, 80.0f + figures * spacing, ground);
  int last_state = -1;
  for (int t = 0; t < ticks; t++) {
    while (next < 3 && script[next].time <= (float)t / 60.0f) anim_machine_character_send_name(&c, script[next++].event);
    anim_machine_character_tick(&c, 1.0f / 60.0f);
    if (t % step) continue;
    anim_machine_character_global_pose(&c);
    int state = c.levels[0].state;
    vec3 pose[ANIM_MAX_BONES];
    for (int b = 0; b < nb; b++) { /* the root's own axes: seen from its side */
      vec3 rel = quat_inv_mul_vec3(c.global_rotations[0], vec3_sub(c.global_positions[b], c.global_positions[0]));
      pose[b] = vec3_make(0.0f, c.global_positions[b].y, rel.z);
    }
    float u = 40.0f + (float)(t / step) * spacing;
    figure(f, &db, pose, 0, u, ground, scale, colours[state % 7], 1.5f);
    if (state != last_state)
      fprintf(f, "<text x='%.0f' y='%.0f' fill='%s'>%s</text>\n", u - 10.0f, ground + 18.0f + (float)(state % 2) * 14.0f,
              colours[state % 7], sm->states[state].name);
    last_state = state;
  }
  fprintf(f, "</svg>\n");
  fclose(f);
  printf("%s: %d ticks, %llu transitions\n", o->out, ticks, (unsigned long long)c.transitions);
  anim_machine_character_free(&c);
  anim_state_machine_free(sm);
  anim_database_free(&db);
  return 0;
}

int main(int argc, char **argv) {
  options_t o = {"../shared", NULL, 1024, 20.0f, 3.0f};
  if (argc < 2) goto usage;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--shared")) o.shared = argv[i + 1];
    else if (!strcmp(argv[i], "-o")) o.out = argv[i + 1];
    else if (!strcmp(argv[i], "--size")) o.size = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--seconds")) o.seconds = (float)atof(argv[i + 1]);
    else if (!strcmp(argv[i], "--radius")) o.radius = (float)atof(argv[i + 1]);
    else goto usage;
  }
  if (o.size < 16 || !(o.seconds > 0.0f) || !(o.radius > 0.0f)) goto usage;
  if (!strcmp(argv[1], "matrix")) return o.out = o.out ? o.out : "matrix.png", matrix(&o);
  if (!strcmp(argv[1], "follow")) return o.out = o.out ? o.out : "circle.svg", follow(&o);
  if (!strcmp(argv[1], "jump")) return o.out = o.out ? o.out : "jump.svg", jump(&o);
usage:
  fprintf(stderr, "usage: animgraph matrix [--shared DIR] [--size N] [-o matrix.png]\n"
                  "       animgraph follow [--shared DIR] [--seconds S] [--radius R] [-o circle.svg]\n"
                  "       animgraph jump [--shared DIR] [-o jump.svg]\n");
  return 2;
}
