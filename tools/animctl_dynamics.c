/*
 * animctl_dynamics.c: animctl inverse-dynamics, the joint torques and ground
 * forces of a database range or of a character's recent motion
 * (InverseDynamicsRequest; docs/physics.md).
 *
 *   animctl inverse-dynamics DB RANGE|START:STOP [--svg FILE] [--bones A,B,...]
 *       [--max-root-torque NM] [--max-root-force N] [--contact-height M]
 *       [--contact-speed MS] [--mass KG] [--step K]
 *   animctl inverse-dynamics (--character ID | --create [--database DB]
 *       [--input SPEC] [--walk S]) (--seconds S | --ticks A:B) [the same options]
 *
 * A character's span is its owner's to ask for (its history on): --character
 * ID from animctl's own connection answers "belongs to another connection"
 * unless animctl made it; --create makes one here on DB (default "default"),
 * turns its history on, steers it by SPEC (stick:X,Z or velocity:VX,VZ;
 * default stick:0,0.7, a walk) for --walk seconds (default --seconds + 1),
 * asks for its last --seconds, and destroys it.
 *
 * Prints the summary (or one JSON object); --svg draws two panels over
 * time, as the seed's figure 4: the vertical ground force under each foot
 * with the root's residual force (and body weight dashed), then the joint
 * torque curves (|torque| of the bones named, default the six with the
 * largest mean).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "animctl.h"

#define PLOT_W 960
#define PANEL_H 260
#define MARGIN_L 70
#define MARGIN_R 170
#define MARGIN_T 30
#define MAX_CURVES 8

static const char *const curve_colors[MAX_CURVES] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd",
                                                     "#8c564b", "#e377c2", "#17becf", "#7f7f7f"};

/* One panel: ncurves series of n values over t (s), a y axis from 0 to ymax. */
typedef struct {
  const char *title, *unit;
  int ncurves;
  const float *values[MAX_CURVES + 1];
  const char *names[MAX_CURVES + 1];
  const char *colors[MAX_CURVES + 1];
  float reference; /* a dashed line (body weight), 0 for none */
  const char *reference_name;
} panel_t;

static float nice_step(float range) {
  float raw = range / 5.0f, p = powf(10.0f, floorf(log10f(raw))), m = raw / p;
  return (m < 1.5f ? 1.0f : m < 3.5f ? 2.0f : m < 7.5f ? 5.0f : 10.0f) * p;
}

static void draw_panel(FILE *f, const panel_t *p, int n, float dt, float t0, int y0) {
  float ymax = p->reference * 1.3f;
  for (int c = 0; c < p->ncurves; c++)
    for (int i = 0; i < n; i++) ymax = fmaxf(ymax, p->values[c][i]);
  if (!(ymax > 0)) ymax = 1;
  float step = nice_step(ymax);
  ymax = ceilf(ymax / step) * step;
  float T = n > 1 ? (n - 1) * dt : dt, tstep = nice_step(T);
  int w = PLOT_W - MARGIN_L - MARGIN_R, h = PANEL_H - 60;
#define X(t) (MARGIN_L + (t) / T * w)
#define Y(v) (y0 + h - (v) / ymax * h)
  fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"14\" font-weight=\"bold\">%s</text>\n", MARGIN_L, y0 - 8, p->title);
  for (float v = 0; v <= ymax * 1.0001f; v += step) {
    fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", MARGIN_L, MARGIN_L + w, Y(v), Y(v));
    fprintf(f, "<text x=\"%d\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%g</text>\n", MARGIN_L - 6, Y(v) + 4, v);
  }
  for (float t = 0; t <= T * 1.0001f; t += tstep) {
    fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"#eee\"/>\n", X(t), X(t), y0, y0 + h);
    fprintf(f, "<text x=\"%.1f\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\">%.3g</text>\n", X(t), y0 + h + 16,
            t + t0);
  }
  fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\">time (s)</text>\n", MARGIN_L + w / 2,
          y0 + h + 32);
  fprintf(f, "<text transform=\"translate(16 %d) rotate(-90)\" font-size=\"11\" text-anchor=\"middle\">%s</text>\n",
          y0 + h / 2, p->unit);
  fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#444\"/>\n", MARGIN_L, y0, w, h);
  int legend = 0;
  if (p->reference > 0) {
    fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#000\" stroke-dasharray=\"6 4\"/>\n", MARGIN_L,
            MARGIN_L + w, Y(p->reference), Y(p->reference));
    fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"#000\" stroke-dasharray=\"6 4\"/>"
               "<text x=\"%d\" y=\"%d\" font-size=\"11\">%s</text>\n",
            MARGIN_L + w + 10, MARGIN_L + w + 34, y0 + 10, y0 + 10, MARGIN_L + w + 40, y0 + 14, p->reference_name);
    legend++;
  }
  for (int c = 0; c < p->ncurves; c++) {
    fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.6\" points=\"", p->colors[c]);
    for (int i = 0; i < n; i++) fprintf(f, "%.1f,%.1f ", X(i * dt), Y(p->values[c][i]));
    fprintf(f, "\"/>\n");
    int ly = y0 + 10 + 18 * legend++;
    fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2\"/>"
               "<text x=\"%d\" y=\"%d\" font-size=\"11\">%s</text>\n",
            MARGIN_L + w + 10, MARGIN_L + w + 34, ly, ly, p->colors[c], MARGIN_L + w + 40, ly + 4, p->names[c]);
  }
#undef X
#undef Y
}

static int write_svg(const char *path, const char *db, const char *what, const anim_inverse_dynamics_t *r,
                     const int *bones, int nbones) {
  int n = r->nframes;
  float *series = calloc((size_t)n * (3 + MAX_CURVES), sizeof *series);
  if (!series) return animctl_fail("out of memory");
  float *left = series, *right = series + n, *residual = series + 2 * n;
  for (int i = 0; i < n; i++) {
    left[i] = r->foot_forces[6 * i + 1], right[i] = r->foot_forces[6 * i + 4];
    const float *rf = r->residual_forces + 3 * i;
    residual[i] = sqrtf(rf[0] * rf[0] + rf[1] * rf[1] + rf[2] * rf[2]);
  }
  panel_t forces = {"Vertical ground reaction force and the root's residual", "N", 3,
                    {left, right, residual}, {NULL, NULL, "residual |F|"}, {"#1f77b4", "#ff7f0e", "#d62728"},
                    9.81f * r->total_mass, "body weight"};
  char lname[80], rname[80];
  snprintf(lname, sizeof lname, "left (%s)", r->left_foot);
  snprintf(rname, sizeof rname, "right (%s)", r->right_foot);
  forces.names[0] = lname, forces.names[1] = rname;
  panel_t torques = {"Joint torques", "|torque| (N m)", nbones, {0}, {0}, {0}, 0, NULL};
  for (int k = 0; k < nbones; k++) {
    float *v = series + (size_t)(3 + k) * n;
    for (int i = 0; i < n; i++) {
      const float *t = r->torques + ((size_t)i * r->nbones + bones[k]) * 3;
      v[i] = sqrtf(t[0] * t[0] + t[1] * t[1] + t[2] * t[2]);
    }
    torques.values[k] = v, torques.names[k] = r->bones[bones[k]], torques.colors[k] = curve_colors[k];
  }
  FILE *f = fopen(path, "w");
  if (!f) {
    free(series);
    return animctl_fail("%s: cannot write", path);
  }
  int height = MARGIN_T + 2 * PANEL_H + 20;
  fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\">\n"
             "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
             "<text x=\"%d\" y=\"18\" font-size=\"12\" fill=\"#555\">inverse dynamics: %s %s, %d frames at %g Hz, "
             "%.0f kg; residual mean %.0f N / %.0f N m, %d frames over its limits</text>\n",
          PLOT_W, height, MARGIN_L, db, what, n, r->frame_rate, r->total_mass, r->mean_residual_force,
          r->mean_residual_torque, r->frames_over_limit);
  float dt = 1.0f / r->frame_rate;
  draw_panel(f, &forces, n, dt, 0.0f, MARGIN_T + 30);
  draw_panel(f, &torques, n, dt, 0.0f, MARGIN_T + PANEL_H + 30);
  fprintf(f, "</svg>\n");
  free(series);
  if (fclose(f) != 0) return animctl_fail("%s: cannot write", path);
  return 0;
}

/* The bones to draw: named ones, else the MAX_CURVES - 2 with the largest mean |torque|. */
static int pick_bones(const anim_inverse_dynamics_t *r, const char *names, int *out) {
  int k = 0;
  if (names) {
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", names);
    for (char *s = strtok(buf, ","); s && k < MAX_CURVES; s = strtok(NULL, ",")) {
      int found = -1;
      for (int b = 0; b < r->nbones; b++)
        if (!strcmp(r->bones[b], s)) found = b;
      if (found < 0) return animctl_fail("inverse-dynamics --bones: no bone %s in the database", s), -1;
      out[k++] = found;
    }
    return k;
  }
  double mean[512] = {0};
  for (int b = 0; b < r->nbones && b < 512; b++)
    for (int i = 0; i < r->nframes; i++) {
      const float *t = r->torques + ((size_t)i * r->nbones + b) * 3;
      mean[b] += sqrt(t[0] * t[0] + t[1] * t[1] + t[2] * t[2]);
    }
  for (; k < MAX_CURVES - 2; k++) {
    int best = -1;
    for (int b = 0; b < r->nbones && b < 512; b++) {
      int used = 0;
      for (int j = 0; j < k; j++) used |= out[j] == b;
      if (!used && mean[b] > 0 && (best < 0 || mean[b] > mean[best])) best = b;
    }
    if (best < 0) break;
    out[k] = best;
  }
  return k;
}

/* The character's span: --character ID or --create (made, steered, its
 * history on, then walked). 0, or an exit status with the failure reported. */
typedef struct {
  uint64_t id;
  int create;
  const char *database;
  anim_character_input_t input;
  float walk;
  anim_inverse_dynamics_span_t span;
} character_args_t;

static void sleep_seconds(float seconds) {
  struct timespec t = {(time_t)seconds, (long)((seconds - floorf(seconds)) * 1e9f)};
  nanosleep(&t, NULL);
}

static int ask_character(const options_t *o, anim_client_t *client, character_args_t *c,
                         const anim_inverse_dynamics_options_t *io, anim_inverse_dynamics_t **out) {
  int rc;
  if (c->create) {
    float seconds = c->span.seconds > 0 ? c->span.seconds : 0.0f;
    if (!(c->walk > 0)) c->walk = seconds + 1.0f;
    if ((rc = anim_client_characters_create(client, c->database, NULL, NULL, 1, &c->id, o->timeout_ms)))
      return report_error("create_characters", rc, client);
    if ((rc = anim_client_history_set(client, c->id, fmaxf(seconds, c->walk) + 1.0f, 1, NULL, o->timeout_ms)) ||
        (rc = anim_client_characters_set_input(client, &c->id, &c->input, 1, NULL, o->timeout_ms))) {
      report_error("set_history", rc, client);
      anim_client_characters_destroy(client, &c->id, 1, o->timeout_ms);
      return 1;
    }
    sleep_seconds(c->walk);
  }
  c->span.character = c->id;
  rc = anim_client_inverse_dynamics_character(client, &c->span, io, out, o->timeout_ms);
  if (c->create) anim_client_characters_destroy(client, &c->id, 1, o->timeout_ms);
  return rc ? report_error("inverse-dynamics", rc, client) : 0;
}

int animctl_inverse_dynamics(const options_t *o, int argc, char **argv) {
  const char *db = NULL, *what = NULL, *svg = NULL, *bones = NULL;
  anim_inverse_dynamics_options_t io = {0};
  character_args_t ch = {0};
  ch.database = "default";
  anim_character_input_stick(&ch.input, 0.0f, 0.7f, 0.0f, 0);
  int positional = 0, character = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--create")) {
      ch.create = character = 1;
      continue;
    }
    if (strncmp(a, "--", 2)) {
      if (positional == 0) db = a;
      else if (positional == 1) what = a;
      else return animctl_fail("inverse-dynamics: unexpected argument %s", a);
      positional++;
      continue;
    }
    if (i + 1 >= argc) return animctl_fail("inverse-dynamics: %s needs a value", a);
    const char *v = argv[++i];
    if (!strcmp(a, "--svg")) svg = v;
    else if (!strcmp(a, "--bones")) bones = v;
    else if (!strcmp(a, "--max-root-torque")) io.max_root_torque = strtof(v, NULL);
    else if (!strcmp(a, "--max-root-force")) io.max_root_force = strtof(v, NULL);
    else if (!strcmp(a, "--contact-height")) io.contact_height = strtof(v, NULL);
    else if (!strcmp(a, "--contact-speed")) io.contact_speed = strtof(v, NULL);
    else if (!strcmp(a, "--mass")) io.total_mass = strtof(v, NULL);
    else if (!strcmp(a, "--step")) io.step = atoi(v);
    else if (!strcmp(a, "--character")) ch.id = strtoull(v, NULL, 10), character = 1;
    else if (!strcmp(a, "--database")) ch.database = v;
    else if (!strcmp(a, "--walk")) ch.walk = strtof(v, NULL);
    else if (!strcmp(a, "--seconds")) ch.span.seconds = strtof(v, NULL);
    else if (!strcmp(a, "--input")) {
      if (animctl_parse_input(v, &ch.input)) return animctl_fail("inverse-dynamics: bad --input %s", v);
    } else if (!strcmp(a, "--ticks")) {
      unsigned long long from, to;
      char tail;
      if (sscanf(v, "%llu:%llu%c", &from, &to, &tail) != 2)
        return animctl_fail("inverse-dynamics: --ticks %s: want A:B", v);
      ch.span.from_tick = from, ch.span.to_tick = to;
    } else return animctl_fail("inverse-dynamics: unknown option %s", a);
  }
  char label[96], span_text[96];
  if (character) {
    if (positional) return animctl_fail("inverse-dynamics: a database range or a character, not both");
    if (ch.create == (ch.id != 0)) return animctl_fail("inverse-dynamics: give --character ID or --create");
    if ((ch.span.seconds > 0) == (ch.span.to_tick != 0))
      return animctl_fail("inverse-dynamics: give a character's --seconds S or --ticks A:B");
    if (ch.create && ch.span.to_tick) return animctl_fail("inverse-dynamics: --create asks for --seconds");
  } else if (positional != 2) {
    return animctl_fail("inverse-dynamics DB RANGE|START:STOP [--svg FILE] ..., or --character ID --seconds S ...");
  }
  anim_client_t *client;
  int rc = animctl_connect(o, &client);
  if (rc) return rc;
  anim_inverse_dynamics_t *r = NULL;
  if (character) {
    if ((rc = ask_character(o, client, &ch, &io, &r))) return rc;
    snprintf(label, sizeof label, "a character's"); /* its id (20 digits) in the text, not the picture's title */
    snprintf(span_text, sizeof span_text, "ticks %llu..%llu", (unsigned long long)r->first_tick,
             (unsigned long long)(r->first_tick + (uint64_t)r->nframes - 1));
    db = label, what = span_text;
  } else {
    int start = -1, stop = -1;
    if (sscanf(what, "%d:%d", &start, &stop) != 2) {
      anim_db_description_t *d = NULL;
      if ((rc = anim_client_db_describe(client, db, &d, o->timeout_ms))) return report_error("inverse-dynamics", rc, client);
      for (int i = 0; i < d->nranges; i++)
        if (!strcmp(d->ranges[i].name, what)) start = (int)d->ranges[i].start, stop = (int)d->ranges[i].stop;
      anim_db_description_free(d);
      if (start < 0) return animctl_fail("inverse-dynamics: database %s has no range %s", db, what);
    }
    if ((rc = anim_client_inverse_dynamics(client, db, start, stop, &io, &r, o->timeout_ms)))
      return report_error("inverse-dynamics", rc, client);
  }
  double weight = 9.81 * r->total_mass, fy = 0, power = 0, peak = 0;
  for (int i = 0; i < r->nframes; i++) {
    fy += r->foot_forces[6 * i + 1] + r->foot_forces[6 * i + 4];
    power += r->power[i];
    peak = fmax(peak, fabs(r->power[i]));
  }
  fy /= r->nframes * weight, power /= r->nframes;
  if (o->json) {
    printf("{\"database\": ");
    animctl_json_string(stdout, character ? "" : db);
    if (character)
      printf(", \"character\": %llu, \"first_tick\": %llu, \"ticks_filled\": %d", (unsigned long long)r->character,
             (unsigned long long)r->first_tick, r->ticks_filled);
    printf(", \"start\": %d, \"frames\": %d, \"frame_rate\": %g, \"total_mass\": %g, \"step\": %d, "
           "\"mean_vertical_force_share\": %.4f, \"mean_residual_force\": %.2f, \"max_residual_force\": %.2f, "
           "\"mean_residual_torque\": %.2f, \"max_residual_torque\": %.2f, \"frames_over_limit\": %d, "
           "\"worst_frame\": %d, \"mean_power\": %.2f, \"peak_power\": %.2f}\n",
           r->start, r->nframes, r->frame_rate, r->total_mass, r->step, fy, r->mean_residual_force,
           r->max_residual_force, r->mean_residual_torque, r->max_residual_torque, r->frames_over_limit, r->worst_frame,
           power, peak);
  } else {
    if (character)
      printf("character %llu, %s (%d at %g Hz, %d the server skipped interpolated, differences over %d ticks), body "
             "%.0f kg\n", (unsigned long long)r->character, what, r->nframes, r->frame_rate, r->ticks_filled, r->step,
             r->total_mass);
    else
      printf("%s frames %d..%d (%d at %g Hz, differences over %d frames), body %.0f kg\n", db, r->start,
             r->start + r->nframes - 1, r->nframes, r->frame_rate, r->step, r->total_mass);
    printf("  mean vertical ground force %.3f of body weight (feet %s, %s)\n", fy, r->left_foot, r->right_foot);
    printf("  residual (hand of God): mean %.1f N, %.1f N m; max %.1f N, %.1f N m (frame %d); %d frames over the "
           "limits\n", r->mean_residual_force, r->mean_residual_torque, r->max_residual_force, r->max_residual_torque,
           r->worst_frame, r->frames_over_limit);
    printf("  joint power: mean %.1f W, peak |power| %.1f W\n", power, peak);
  }
  if (svg) {
    int picked[MAX_CURVES], k = pick_bones(r, bones, picked);
    if (k < 0 || (rc = write_svg(svg, db, what, r, picked, k))) {
      anim_inverse_dynamics_free(r);
      return k < 0 ? 2 : rc;
    }
    if (!o->json) printf("  drawn to %s\n", svg);
  }
  anim_inverse_dynamics_free(r);
  return 0;
}
