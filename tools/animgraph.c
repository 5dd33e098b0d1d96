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
 *       test_machine_character.c) under the script "JUMP_PRESS at 0.5 s,
 *       JUMP_RELEASE at 1.6 s, NEAR_GROUND at 2.9 s": side view, a figure
 *       every 6 ticks, each labelled with its state and coloured by it.
 *   animgraph strip --stream FILE [--radius R] [-o strip.svg]
 *       The same pictures from what a server streamed: a stream record
 *       (tests/support/stream_record.h; test_machine_service and
 *       test_graph_service write build/tests/jump.stream and circle.stream).
 *       Frames labelled with states draw as the jump picture; unlabelled
 *       ones as the circle picture (with --radius, the circle asked).
 *
 * Build: make build/animgraph (needs libpng, tools/debian-packages.txt).
 */
#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "offline/build.h"
#include "database/database.h"
#include "graph/graph_character.h"
#include "graph/graph_matrix.h"
#include "offline/import.h"
#include "pose/kinematics.h"
#include "machine/machine_character.h"
#include "graph/motion_graph.h"
#include "machine/state_machine.h"

typedef struct {
  const char *shared, *out, *stream;
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
  anim_graph_matrix_t m;
  if (anim_graph_matrix_init(&m, o->size, db.nframes)) {
    fprintf(stderr, "animgraph: --size %d: %d..%d\n", o->size, ANIM_GRAPH_MATRIX_MIN, ANIM_GRAPH_MATRIX_MAX);
    return 1;
  }
  int size = m.size;
  char err[256];
  anim_graph_options_t go;
  anim_graph_options_default(&go);
  go.row = anim_graph_matrix_row, go.data = &m, go.prune = 0;
  anim_motion_graph_t *all = anim_motion_graph_build(&db, &go, err, sizeof err);
  anim_graph_options_default(&go);
  anim_motion_graph_t *kept = all ? anim_motion_graph_build(&db, &go, err, sizeof err) : NULL;
  if (!all || !kept) {
    fprintf(stderr, "animgraph: %s\n", err);
    return 1;
  }
  unsigned char *rgb = malloc((size_t)size * (size_t)size * 3);
  for (size_t i = 0; i < (size_t)size * (size_t)size; i++) {
    float d = m.cells[i];
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
      unsigned char *a = rgb + 3 * ((size_t)p * (size_t)size + (size_t)q),
                    *b = rgb + 3 * ((size_t)q * (size_t)size + (size_t)p);
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
    dot(rgb, size, (int)((long)tr->from * size / db.nframes), (int)((long)tr->to * size / db.nframes),
        in_kept ? red : yellow);
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
  free(rgb);
  anim_graph_matrix_free(&m);
  anim_motion_graph_free(all), anim_motion_graph_free(kept);
  anim_database_free(&db);
  return ok ? 0 : 1;
}

/* ---- stick figures --------------------------------------------------------------------------- */

/* A run of poses to draw: per frame its time, label (a state, or ""),
 * whether a jump or transition started, the root's rotation and every
 * bone's world position. */
typedef struct {
  int nbones;
  int parents[ANIM_MAX_BONES];
  int count, capacity;
  float *times;
  char (*labels)[ANIM_NAME_MAX];
  int *jumped;
  quat *roots;
  vec3 *positions; /* count x nbones */
} film_t;

static int film_add(film_t *film, float time, const char *label, int jumped, quat root, const vec3 *positions) {
  if (film->count == film->capacity) {
    int capacity = film->capacity ? 2 * film->capacity : 256;
    void *t = realloc(film->times, (size_t)capacity * sizeof *film->times);
    if (t) film->times = t;
    void *l = realloc(film->labels, (size_t)capacity * sizeof *film->labels);
    if (l) film->labels = l;
    void *j = realloc(film->jumped, (size_t)capacity * sizeof *film->jumped);
    if (j) film->jumped = j;
    void *r = realloc(film->roots, (size_t)capacity * sizeof *film->roots);
    if (r) film->roots = r;
    void *p = realloc(film->positions, (size_t)capacity * (size_t)film->nbones * sizeof *film->positions);
    if (p) film->positions = p;
    if (!t || !l || !j || !r || !p) return 1;
    film->capacity = capacity;
  }
  int i = film->count++;
  film->times[i] = time;
  snprintf(film->labels[i], sizeof film->labels[i], "%s", label ? label : "");
  film->jumped[i] = jumped;
  film->roots[i] = root;
  memcpy(film->positions + (size_t)i * (size_t)film->nbones, positions, (size_t)film->nbones * sizeof(vec3));
  return 0;
}

static void film_free(film_t *film) {
  free(film->times), free(film->labels), free(film->jumped), free(film->roots), free(film->positions);
}

static void film_skeleton(film_t *film, const anim_database_t *db) {
  memset(film, 0, sizeof *film);
  film->nbones = db->nbones;
  for (int b = 0; b < db->nbones; b++) film->parents[b] = db->skeleton.parents[b];
}

/* One figure: bones as lines from parent to child in the picture's plane
 * (u right, v up), at an offset and scale (pixels per metre). */
static void figure(FILE *f, const film_t *film, const vec3 *global, int top, float ou, float ov, float scale,
                   const char *colour, float width) {
  for (int b = 1; b < film->nbones; b++) {
    int p = film->parents[b];
    if (p <= 0) continue;
    vec3 a = global[p], z = global[b];
    if (vec3_length(vec3_sub(a, z)) > 1.5f) continue; /* a ground-level source root */
    float au = top ? a.x : a.z, av = top ? a.z : a.y, zu = top ? z.x : z.z, zv = top ? z.z : z.y;
    fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='%s' stroke-width='%.1f'/>\n", ou + au * scale,
            ov - av * scale, ou + zu * scale, ov - zv * scale, colour, width);
  }
}

/* The circle picture: top view of the circle asked (dashed, when radius >
 * 0) and of the root's path (blue, red dots at the jumps), a figure every
 * second; under it a side view of the first frames, one every 0.1 s. */
static int draw_top(const film_t *film, float radius, const char *title, const char *out) {
  FILE *f = fopen(out, "w");
  if (!f) return 1;
  int nb = film->nbones;
  float r = radius > 0.0f ? radius : 3.0f, scale = 60.0f, width = 2.0f * r * scale + 200.0f, side = 220.0f;
  float ou = width / 2.0f, ov = 2.0f * r * scale + 100.0f; /* top view: x right, z up */
  fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='%.0f' height='%.0f' "
             "font-family='sans-serif' font-size='12'>\n", fmaxf(width, 1200.0f), ov + 60.0f + side);
  fprintf(f, "<rect width='100%%' height='100%%' fill='white'/>\n<text x='10' y='20'>%s</text>\n", title);
  if (radius > 0.0f) {
    fprintf(f, "<polygon fill='none' stroke='#999' stroke-dasharray='6 4' points='");
    for (int i = 0; i < 64; i++) {
      float a = 2.0f * (float)M_PI * (float)i / 64.0f;
      fprintf(f, "%.1f,%.1f ", ou + r * sinf(a) * scale, ov - (r - r * cosf(a)) * scale);
    }
    fprintf(f, "'/>\n");
  }
  fprintf(f, "<polyline fill='none' stroke='#2060c0' stroke-width='1.5' points='");
  for (int t = 0; t < film->count; t++)
    fprintf(f, "%.1f,%.1f ", ou + film->positions[(size_t)t * nb].x * scale,
            ov - film->positions[(size_t)t * nb].z * scale);
  fprintf(f, "'/>\n");
  for (int t = 0; t < film->count; t++)
    if (film->jumped[t])
      fprintf(f, "<circle cx='%.1f' cy='%.1f' r='2.5' fill='#d02020'/>\n",
              ou + film->positions[(size_t)t * nb].x * scale, ov - film->positions[(size_t)t * nb].z * scale);
  for (int t = 0, next = 0; t < film->count; t++)
    if (film->times[t] >= (float)next - 1e-4f) {
      figure(f, film, film->positions + (size_t)t * nb, 1, ou, ov, scale, "#303030", 1.2f);
      next++;
    }
  /* Side view: the first frames, spread along u, each in its root's own axes (facing +Z). */
  float sv = ov + 40.0f + side - 20.0f, sscale = 100.0f;
  fprintf(f, "<text x='10' y='%.0f'>side view (height against time), a figure every 0.1 s</text>\n", ov + 50.0f);
  fprintf(f, "<line x1='0' y1='%.1f' x2='%.0f' y2='%.1f' stroke='#bbb'/>\n", sv, fmaxf(width, 1200.0f), sv);
  for (int t = 0, k = 0; t < film->count && k < 20; t++) {
    if (film->times[t] < 0.1f * (float)k - 1e-4f) continue;
    vec3 local[ANIM_MAX_BONES];
    const vec3 *pose = film->positions + (size_t)t * nb;
    for (int b = 0; b < nb; b++) {
      vec3 rel = quat_inv_mul_vec3(film->roots[t], vec3_sub(pose[b], pose[0]));
      local[b] = vec3_make(0.0f, pose[b].y, rel.z);
    }
    figure(f, film, local, 0, 60.0f + (float)k * 55.0f, sv, sscale, k % 2 ? "#404040" : "#2060c0", 1.5f);
    k++;
  }
  fprintf(f, "</svg>\n");
  fclose(f);
  return 0;
}

/* The jump picture: side view, a figure every 0.1 s in the root's own axes
 * (its travel removed), coloured by its label and labelled where it
 * changes. */
static int draw_side(const film_t *film, const char *title, const char *out) {
  static const char *colours[] = {"#303030", "#2060c0", "#20a040", "#d07000", "#a020a0", "#d02020", "#008080"};
  char seen[16][ANIM_NAME_MAX];
  int nseen = 0, nb = film->nbones, figures = 0;
  for (int t = 0, k = 0; t < film->count; t++)
    if (film->times[t] >= 0.1f * (float)k - 1e-4f) figures++, k++;
  FILE *f = fopen(out, "w");
  if (!f) return 1;
  float scale = 90.0f, ground = 230.0f, spacing = 40.0f;
  fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='%.0f' height='300' "
             "font-family='sans-serif' font-size='11'>\n", 80.0f + (float)figures * spacing);
  fprintf(f, "<rect width='100%%' height='100%%' fill='white'/>\n<text x='10' y='18'>%s</text>\n", title);
  fprintf(f, "<line x1='0' y1='%.0f' x2='%.0f' y2='%.0f' stroke='#bbb'/>\n", ground, 80.0f + figures * spacing, ground);
  const char *last = "";
  for (int t = 0, k = 0; t < film->count; t++) {
    if (film->times[t] < 0.1f * (float)k - 1e-4f) continue;
    int state = 0;
    while (state < nseen && strcmp(seen[state], film->labels[t]) != 0) state++;
    if (state == nseen && nseen < 16) snprintf(seen[nseen++], ANIM_NAME_MAX, "%s", film->labels[t]);
    vec3 pose[ANIM_MAX_BONES];
    const vec3 *global = film->positions + (size_t)t * nb;
    for (int b = 0; b < nb; b++) { /* the root's own axes: seen from its side */
      vec3 rel = quat_inv_mul_vec3(film->roots[t], vec3_sub(global[b], global[0]));
      pose[b] = vec3_make(0.0f, global[b].y, rel.z);
    }
    float u = 40.0f + (float)k * spacing;
    figure(f, film, pose, 0, u, ground, scale, colours[state % 7], 1.5f);
    if (strcmp(film->labels[t], last) != 0)
      fprintf(f, "<text x='%.0f' y='%.0f' fill='%s'>%s</text>\n", u - 10.0f,
              ground + 18.0f + (float)(state % 2) * 14.0f, colours[state % 7], film->labels[t]);
    last = film->labels[t];
    k++;
  }
  fprintf(f, "</svg>\n");
  fclose(f);
  return 0;
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
  film_t film;
  film_skeleton(&film, &db);
  int ticks = (int)(o->seconds * 60.0f);
  for (int t = 0; t < ticks; t++) {
    uint64_t jumps = c.jumps;
    anim_graph_character_tick(&c, 1.0f / 60.0f);
    anim_graph_character_global_pose(&c);
    film_add(&film, (float)t / 60.0f, "", c.jumps != jumps, c.global_rotations[0], c.global_positions);
  }
  char title[320];
  snprintf(title, sizeof title,
           "graph character following a circle of radius %.1f m on the Bandai Namco graph (%d nodes, "
           "%d edges), %.0f s, top view; blue: root path, red: jumps (inertialized), dashed: the circle asked",
           r, g->nnodes, g->nedges, o->seconds);
  int rc = draw_top(&film, r, title, o->out);
  printf("%s: %d ticks, %llu plans, %llu jumps, root ended at (%.2f, %.2f)\n", o->out, ticks,
         (unsigned long long)c.plans, (unsigned long long)c.jumps, c.pose_positions[0].x, c.pose_positions[0].z);
  film_free(&film);
  anim_graph_character_free(&c);
  anim_motion_graph_free(g);
  anim_database_free(&db);
  return rc;
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
  const struct {
    float time;
    const char *event;
  } script[] = {{0.5f, "JUMP_PRESS"}, {1.6f, "JUMP_RELEASE"}, {2.9f, "NEAR_GROUND"}};
  film_t film;
  film_skeleton(&film, &db);
  for (int t = 0, next = 0; t < 4 * 60; t++) {
    while (next < 3 && script[next].time <= (float)t / 60.0f)
      anim_machine_character_send_name(&c, script[next++].event);
    anim_machine_character_tick(&c, 1.0f / 60.0f);
    anim_machine_character_global_pose(&c);
    film_add(&film, (float)t / 60.0f, sm->states[c.levels[0].state].name, c.changed, c.global_rotations[0],
             c.global_positions);
  }
  int rc = draw_side(&film,
                     "the seed's jump machine on Bandai Namco spans: JUMP_PRESS at 0.5 s, JUMP_RELEASE at 1.6 s, "
                     "NEAR_GROUND at 2.9 s; side view, a figure every 0.1 s, coloured and labelled by state, in "
                     "the root's own axes (its travel removed)",
                     o->out);
  printf("%s: %d ticks, %llu transitions\n", o->out, film.count, (unsigned long long)c.transitions);
  film_free(&film);
  anim_machine_character_free(&c);
  anim_state_machine_free(sm);
  anim_database_free(&db);
  return rc;
}

/* ---- a stream record ----------------------------------------------------------------------- */

static int strip(const options_t *o) {
  FILE *in = fopen(o->stream, "r");
  film_t film;
  memset(&film, 0, sizeof film);
  if (!in || fscanf(in, "animstream 1 bones %d parents", &film.nbones) != 1 || film.nbones < 1 ||
      film.nbones > ANIM_MAX_BONES) {
    fprintf(stderr, "animgraph: %s is not a stream record\n", o->stream);
    if (in) fclose(in);
    return 1;
  }
  for (int b = 0; b < film.nbones; b++)
    if (fscanf(in, "%d", &film.parents[b]) != 1 || film.parents[b] >= b) return fclose(in), 1;
  vec3 pose[ANIM_MAX_BONES];
  float time, q[4];
  char label[ANIM_NAME_MAX];
  int jumped, labelled = 0;
  while (fscanf(in, " frame %f %63s %d %f %f %f %f", &time, label, &jumped, &q[0], &q[1], &q[2], &q[3]) == 7) {
    for (int b = 0; b < film.nbones; b++)
      if (fscanf(in, "%f %f %f", &pose[b].x, &pose[b].y, &pose[b].z) != 3) return fclose(in), film_free(&film), 1;
    labelled |= strcmp(label, "-") != 0;
    if (film_add(&film, time, strcmp(label, "-") ? label : "", jumped, quat_make(q[0], q[1], q[2], q[3]), pose))
      return fclose(in), film_free(&film), 1;
  }
  fclose(in);
  char title[320];
  int rc;
  if (labelled) {
    snprintf(title, sizeof title,
             "a MODE_MACHINE character as the server streamed it (%d frames, %.1f s): side view, a "
             "figure every 0.1 s, coloured and labelled by its state, in the root's own axes",
             film.count, (double)time);
    rc = draw_side(&film, title, o->out);
  } else {
    snprintf(title, sizeof title,
             "a MODE_GRAPH character as the server streamed it (%d frames, %.1f s), top view; blue: "
             "root path, red: jumps (inertialized)%s",
             film.count, (double)time, o->radius > 0 ? ", dashed: the circle asked" : "");
    rc = draw_top(&film, o->radius, title, o->out);
  }
  printf("%s: %d frames from %s\n", o->out, film.count, o->stream);
  film_free(&film);
  return rc;
}

int main(int argc, char **argv) {
  options_t o = {"../shared", NULL, NULL, 1024, 20.0f, 3.0f};
  if (argc < 2) goto usage;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--shared")) o.shared = argv[i + 1];
    else if (!strcmp(argv[i], "-o")) o.out = argv[i + 1];
    else if (!strcmp(argv[i], "--size")) o.size = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--seconds")) o.seconds = (float)atof(argv[i + 1]);
    else if (!strcmp(argv[i], "--radius")) o.radius = (float)atof(argv[i + 1]);
    else if (!strcmp(argv[i], "--stream")) o.stream = argv[i + 1];
    else goto usage;
  }
  if (o.size < 16 || !(o.seconds > 0.0f) || !(o.radius >= 0.0f)) goto usage;
  if (!strcmp(argv[1], "matrix")) return o.out = o.out ? o.out : "matrix.png", matrix(&o);
  if (!strcmp(argv[1], "follow")) return o.out = o.out ? o.out : "circle.svg", follow(&o);
  if (!strcmp(argv[1], "jump")) return o.out = o.out ? o.out : "jump.svg", jump(&o);
  if (!strcmp(argv[1], "strip") && o.stream) return o.out = o.out ? o.out : "strip.svg", strip(&o);
usage:
  fprintf(stderr, "usage: animgraph matrix [--shared DIR] [--size N] [-o matrix.png]\n"
                  "       animgraph follow [--shared DIR] [--seconds S] [--radius R] [-o circle.svg]\n"
                  "       animgraph jump [--shared DIR] [-o jump.svg]\n"
                  "       animgraph strip --stream FILE [--radius R] [-o strip.svg]\n");
  return 2;
}
