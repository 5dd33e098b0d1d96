/*
 * animctl_stream.c: `animctl stream`, a pose stream printed or recorded as
 * JSON lines, and the stream session `animctl render --stream` draws from.
 *
 *   animctl stream [--create N] [--database DB] [--input SPEC] [--id ID]...
 *                  [--rate-divisor K] [--encoding float|quantized] [--global]
 *                  [--rotations-only] [--frames N | --seconds S] [-o FILE]
 *                  [--region circle:X,Z,R[:follow=ID|@K] | box:X,Z,HX,HZ[:follow=...]]
 *                  [--band R:DIV]... [--max-characters N]
 *
 * --create N makes N characters owned by this connection (they live as long
 * as the command) and streams them, steered by --input (default stick:0,0.7,
 * a walk; stick:0,0 stands):
 *   stick:X,Z        a stick held (x right, z forward, |stick| <= 1)
 *   velocity:VX,VZ   a desired world velocity, facing along it
 *   goal:X,Z[,S]     walk to a point at S m/s (default 1.4)
 *   script:tour      walk 2.5 s, turn 2 s, run 2 s, stop (the tests' script)
 *   script:wander    a new stick direction every 2 s
 * --id ID streams existing characters of any connection instead (or too);
 * alone, the header describes the first one's database (--database names
 * another).
 * --region streams whoever is inside a circle or box of the ground plane,
 * any connection's, instead of --id (the server decides membership; frames
 * come only when they carry something); follow=@K centres it on the K-th
 * --create character. Frames then carry "entered" (id, database, its
 * version, bones) and "left" (ids), each said once.
 * The first line describes the skeleton ({"type":"header",...}); then one
 * line per frame ({"type":"frame","tick":...,"poses":[...]}).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "animctl.h"
#include "animctl_stream.h"

#define MAX_IDS 4096

static int parse_input(const char *spec, stream_session_t *s) {
  float a = 0, b = 0, c = 1.4f;
  if (sscanf(spec, "stick:%f,%f", &a, &b) == 2) {
    if (a * a + b * b > 1.0001f) return -1;
    anim_character_input_stick(&s->input, a, b, 0.0f, 0);
  } else if (sscanf(spec, "velocity:%f,%f", &a, &b) == 2) {
    anim_character_input_velocity(&s->input, a, b, atan2f(a, b));
  } else if (sscanf(spec, "goal:%f,%f,%f", &a, &b, &c) >= 2) {
    if (c < 0) return -1;
    anim_character_input_goal(&s->input, a, b, c);
  } else if (!strcmp(spec, "script:tour")) {
    s->script = SCRIPT_TOUR;
  } else if (!strcmp(spec, "script:wander")) {
    s->script = SCRIPT_WANDER;
  } else {
    return -1;
  }
  return 0;
}

/* circle:X,Z,R or box:X,Z,HX,HZ, then optionally :follow=ID or :follow=@K.
 * Only the shape is checked here; the server checks the values and names
 * the field it refuses. 0, or -1. */
static int parse_region(const char *spec, stream_session_t *s) {
  anim_region_t *r = &s->region;
  int used = 0;
  if (sscanf(spec, "circle:%f,%f,%f%n", &r->x, &r->z, &r->radius, &used) != 3 &&
      sscanf(spec, "box:%f,%f,%f,%f%n", &r->x, &r->z, &r->half_x, &r->half_z, &used) != 4)
    return -1;
  const char *rest = spec + used;
  if (!*rest) return 0;
  if (strncmp(rest, ":follow=", 8)) return -1;
  rest += 8;
  char *end = NULL;
  if (*rest == '@') {
    long k = strtol(rest + 1, &end, 10);
    if (end == rest + 1 || *end || k < 1) return -1;
    s->follow_created = (int)k;
  } else {
    if (*rest < '1' || *rest > '9') return -1;
    r->follow = strtoull(rest, &end, 10);
    if (*end) return -1;
  }
  return 0;
}

int stream_session_parse(stream_session_t *s, int argc, char **argv, int first, const char *command,
                         stream_extra_fn extra, void *extra_data) {
  memset(s, 0, sizeof *s);
  s->extra = extra;
  s->extra_data = extra_data;
  s->database = "default";
  s->rate_divisor = 1;
  s->frames = 300;
  anim_character_input_stick(&s->input, 0.0f, 0.7f, 0.0f, 0);
  s->ids = calloc(MAX_IDS, sizeof *s->ids);
  s->gone = calloc(MAX_IDS, 1);
  if (!s->ids || !s->gone) return animctl_fail("%s: out of memory", command), -1;
  for (int i = first; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--global")) s->global = 1;
    else if (!strcmp(a, "--rotations-only")) s->rotations_only = 1;
    else if (!v) return animctl_fail("%s: %s needs a value", command, a), -1;
    else if (!strcmp(a, "--create")) s->create = atoi(v), i++;
    else if (!strcmp(a, "--database")) s->database = v, s->database_given = 1, i++;
    else if (!strcmp(a, "--mode")) {
      if (strcmp(v, "learned") && strcmp(v, "matching"))
        return animctl_fail("%s: --mode matching|learned", command), -1;
      s->mode = strcmp(v, "learned") ? ANIM_MODE_MOTION_MATCHING : ANIM_MODE_LEARNED;
      if (s->mode == ANIM_MODE_LEARNED) s->database = "lmm", s->database_given = 1; /* the learned skeleton's */
      i++;
    }
    else if (!strcmp(a, "--input")) {
      if (parse_input(v, s) != 0) return animctl_fail("%s: bad --input %s", command, v), -1;
      i++;
    } else if (!strcmp(a, "--id")) {
      if (s->nids == MAX_IDS) return animctl_fail("%s: at most %d --id", command, MAX_IDS), -1;
      s->ids[s->nids++] = strtoull(v, NULL, 10), i++;
    } else if (!strcmp(a, "--region")) {
      if (parse_region(v, s) != 0)
        return animctl_fail("%s: bad --region %s (circle:X,Z,R or box:X,Z,HX,HZ, then :follow=ID or :follow=@K)",
                            command, v), -1;
      s->region_given = 1, i++;
    } else if (!strcmp(a, "--band")) {
      anim_region_band_t *b = &s->bands[s->region.nbands];
      char *end = NULL;
      if (s->region.nbands == 8) return animctl_fail("%s: at most 8 --band", command), -1;
      b->radius = strtof(v, &end);
      if (end == v || *end != ':') return animctl_fail("%s: bad --band %s (R:DIV)", command, v), -1;
      const char *div = end + 1;
      b->rate_divisor = (int)strtol(div, &end, 10);
      if (end == div || *end || b->rate_divisor < 0)
        return animctl_fail("%s: bad --band %s (R:DIV, DIV >= 0)", command, v), -1;
      s->region.bands = s->bands, s->region.nbands++, i++;
    } else if (!strcmp(a, "--max-characters")) {
      char *end = NULL;
      long n = strtol(v, &end, 10);
      if (end == v || *end || n < 0 || n > 1000000)
        return animctl_fail("%s: bad --max-characters %s (0..1000000; 0: all)", command, v), -1;
      s->region.max_characters = (int)n, i++;
    } else if (!strcmp(a, "--rate-divisor")) s->rate_divisor = atoi(v), i++;
    else if (!strcmp(a, "--encoding")) {
      if (strcmp(v, "float") && strcmp(v, "quantized"))
        return animctl_fail("%s: --encoding float|quantized", command), -1;
      s->encoding = !strcmp(v, "quantized") ? ANIM_POSE_QUANTIZED : ANIM_POSE_FLOAT, i++;
    } else if (!strcmp(a, "--frames")) s->frames = atoi(v), i++;
    else if (!strcmp(a, "--seconds")) s->seconds = atof(v), i++;
    else if (!strcmp(a, "-o")) s->output = v, i++;
    else if (s->extra && s->extra(s, a, v)) i++;
    else return animctl_fail("%s: unknown option %s", command, a), -1;
  }
  if (!s->region_given && (s->region.nbands || s->region.max_characters))
    return animctl_fail("%s: --band and --max-characters need --region", command), -1;
  if (s->create < 0 || s->create > 100000 || s->rate_divisor < 1 || s->frames < 1 || s->seconds < 0 ||
      (s->create == 0 && s->nids == 0 && !s->region_given))
    return animctl_fail("%s: --create 1..100000 and/or --id ID (or --region); --rate-divisor, --frames >= 1",
                   command), -1;
  if (s->region_given && s->nids)
    return animctl_fail("%s: --region picks the characters: not with --id", command), -1;
  if (s->follow_created > s->create)
    return animctl_fail("%s: --region ...:follow=@%d, but --create %d", command, s->follow_created, s->create), -1;
  return 0;
}

void stream_session_free(stream_session_t *s) {
  free(s->ids);
  free(s->gone);
  free(s->created);
  anim_db_description_free(s->description);
  memset(s, 0, sizeof *s);
}

/* The scripted input of a character at time t (seconds since the start). */
static void script_input(const stream_session_t *s, int index, float t, anim_character_input_t *out) {
  float azimuth = 0.37f * (float)index;
  if (s->script == SCRIPT_TOUR) {
    if (t < 2.5f) anim_character_input_stick(out, 0.0f, 0.85f, azimuth, 0);
    else if (t < 4.5f) anim_character_input_stick(out, 0.85f, 0.0f, azimuth, 0);
    else if (t < 6.5f) anim_character_input_velocity(out, 3.5f * sinf(azimuth), 3.5f * cosf(azimuth), azimuth);
    else anim_character_input_stick(out, 0.0f, 0.0f, azimuth, 0);
  } else {
    /* wander: a direction per character and two-second period, from a hash */
    unsigned h = (unsigned)index * 2654435761u ^ (unsigned)(t / 2.0f) * 40503u;
    float angle = (float)(h % 6283u) / 1000.0f;
    anim_character_input_stick(out, 0.8f * sinf(angle), 0.8f * cosf(angle), 0.0f, 0);
  }
}

static int scripted_phase(const stream_session_t *s, float t) {
  if (s->script == SCRIPT_TOUR) return t < 2.5f ? 0 : t < 4.5f ? 1 : t < 6.5f ? 2 : 3;
  return (int)(t / 2.0f);
}

static int steer(anim_client_t *client, stream_session_t *s, float t, int timeout_ms) {
  anim_character_input_t *in = malloc((size_t)s->create * sizeof *in);
  if (!in) return ANIM_ENOMEM;
  for (int i = 0; i < s->create; i++) {
    if (s->script) script_input(s, i, t, &in[i]);
    else in[i] = s->input;
  }
  int rc = anim_client_characters_set_input(client, s->created, in, s->create, NULL, timeout_ms);
  free(in);
  return rc;
}

static double monotonic_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The name of the database character id runs on (its state says). 0, or a negative code. */
static int database_of(anim_client_t *client, uint64_t id, char *out, size_t size, int timeout_ms) {
  anim_character_state_t *state;
  int rc = anim_client_character_state(client, id, 0, &state, timeout_ms);
  if (rc) return rc;
  snprintf(out, size, "%s", state->database);
  anim_character_state_free(state);
  return 0;
}

/* How many different characters --id names (marks repeats as gone already). */
static int distinct_ids(stream_session_t *s) {
  int n = 0;
  for (int i = 0; i < s->nids; i++) {
    int first = 1;
    for (int j = 0; j < i && first; j++) first = s->ids[j] != s->ids[i];
    s->gone[i] = (unsigned char)!first;
    n += first;
  }
  return n;
}

/* Marks the named characters this frame reports gone; returns how many were not yet. */
static int newly_gone(stream_session_t *s, const anim_stream_frame_t *f) {
  int n = 0;
  for (int g = 0; g < f->ngone; g++)
    for (int i = 0; i < s->nids; i++)
      if (s->ids[i] == f->gone[g] && !s->gone[i]) s->gone[i] = 1, n++;
  return n;
}

int stream_session_run(anim_client_t *client, stream_session_t *s, int timeout_ms, stream_frame_fn on_frame,
                       void *data) {
  /* Characters named by --id alone: the header and the drawing need their
   * skeleton, not the default database's (a character of another database
   * was described, and drawn, with the wrong bones). */
  if (!s->database_given && !s->create && s->nids > 0) {
    int found = database_of(client, s->ids[0], s->database_found, sizeof s->database_found, timeout_ms);
    if (found) return report_error("the --id character's database", found, client);
    s->database = s->database_found;
  }
  int rc = anim_client_db_describe(client, s->database, &s->description, timeout_ms);
  if (rc) return report_error("describe", rc, client);
  if (s->create) {
    s->created = calloc((size_t)s->create, sizeof *s->created);
    anim_character_placement_t *place = calloc((size_t)s->create, sizeof *place);
    int side = (int)ceilf(sqrtf((float)s->create));
    for (int i = 0; i < s->create; i++)
      place[i] = (anim_character_placement_t){(float)(i % side) * 3.0f, (float)(i / side) * 3.0f, 0.0f, -1};
    anim_character_mode_t mode = {.mode = s->mode};
    rc = anim_client_characters_create_mode(client, s->database, &mode, NULL, place, s->create, s->created, timeout_ms);
    free(place);
    if (rc) return report_error("create", rc, client);
    if ((rc = steer(client, s, 0.0f, timeout_ms))) return report_error("input", rc, client);
  }
  if (s->region_given) {
    if (s->follow_created) s->region.follow = s->created[s->follow_created - 1];
    anim_subscribe_options_t o = {NULL, 0, 0, s->rate_divisor, s->encoding, s->global, s->rotations_only};
    rc = anim_client_subscribe_region(client, &o, &s->region, NULL, NULL, &s->subscription, &s->tick_rate,
                                      timeout_ms);
  } else {
    anim_subscribe_options_t o = {s->ids, s->nids, s->create > 0, s->rate_divisor, s->encoding, s->global,
                                  s->rotations_only};
    rc = anim_client_subscribe(client, &o, NULL, NULL, &s->subscription, &s->tick_rate, timeout_ms);
  }
  if (rc) return report_error("subscribe", rc, client);
  uint64_t first_tick = 0;
  /* -1: owned ones or a region's, never all gone */
  int phase = 0, watching = s->create > 0 || s->region_given ? -1 : distinct_ids(s);
  /* A region sends frames only when they carry something: none may come for
   * a while (nobody inside), so its --seconds run on the wall clock from the
   * subscription, not on the ticks of frames received, and a quiet end is
   * not a timeout. */
  double start = monotonic_s();
  int by_clock = s->region_given && s->seconds > 0;
  for (int n = 0;; n++) {
    anim_stream_frame_t *f = NULL;
    int wait_ms = timeout_ms;
    if (by_clock) {
      double remaining_ms = (s->seconds - (monotonic_s() - start)) * 1000.0;
      if (remaining_ms <= 0) break;
      if (remaining_ms < wait_ms) wait_ms = (int)remaining_ms + 1;
    }
    rc = anim_client_next_frame(client, &f, wait_ms);
    if (rc == ANIM_ETIMEDOUT && by_clock && monotonic_s() - start >= s->seconds) break;
    if (rc) return report_error("stream", rc, client);
    if (!first_tick) first_tick = f->tick;
    float t = by_clock ? (float)(monotonic_s() - start) : (float)(f->tick - first_tick) / s->tick_rate;
    /* Every --id character gone: the server sends nothing more (this waited
     * for a frame until the timeout and failed); the frame saying so is the last. */
    if (watching > 0) watching -= newly_gone(s, f);
    int stop = on_frame(s, f, data) != 0 || watching == 0 ||
               (s->seconds > 0 ? t >= s->seconds : n + 1 >= s->frames);
    anim_stream_frame_free(f);
    if (stop) break;
    if (s->create && s->script && scripted_phase(s, t) != phase) {
      phase = scripted_phase(s, t);
      if ((rc = steer(client, s, t, timeout_ms))) return report_error("input", rc, client);
    }
  }
  anim_client_unsubscribe(client, s->subscription, timeout_ms);
  return 0;
}

/* ---- JSON lines ------------------------------------------------------------------------ */

static void print_floats(FILE *out, const char *key, const float *v, int n) {
  fprintf(out, ",\"%s\":[", key);
  for (int i = 0; i < n; i++) fprintf(out, i ? ",%.6g" : "%.6g", v[i]);
  fputc(']', out);
}

static void print_header(FILE *out, const stream_session_t *s) {
  const anim_db_description_t *d = s->description;
  fprintf(out, "{\"type\":\"header\",\"database\":\"%s\",\"tick_rate\":%g,\"rate_divisor\":%d,\"subscription\":%llu,"
               "\"bones\":[", s->database, s->tick_rate, s->rate_divisor, (unsigned long long)s->subscription);
  for (int b = 0; b < d->nbones; b++) fprintf(out, b ? ",\"%s\"" : "\"%s\"", d->bone_names[b]);
  fprintf(out, "],\"parents\":[");
  for (int b = 0; b < d->nbones; b++) fprintf(out, b ? ",%d" : "%d", d->bone_parents[b]);
  fprintf(out, "],\"contact_bones\":[");
  for (int c = 0; c < d->ncontact_bones; c++) fprintf(out, c ? ",%d" : "%d", d->contact_bones[c]);
  fprintf(out, "]}\n");
}

int stream_print_frame(stream_session_t *s, const anim_stream_frame_t *f, void *data) {
  FILE *out = data;
  if (!s->header_written) print_header(out, s), s->header_written = 1;
  fprintf(out, "{\"type\":\"frame\",\"tick\":%llu,\"server_time_us\":%llu,\"dt\":%.6g,\"dropped\":%llu,"
               "\"encoding\":\"%s\",\"bytes\":%zu,\"poses\":[",
          (unsigned long long)f->tick, (unsigned long long)f->server_time_us, f->dt,
          (unsigned long long)f->dropped_frames, f->encoding == ANIM_POSE_QUANTIZED ? "quantized" : "float",
          f->wire_bytes);
  for (int i = 0; i < f->nposes; i++) {
    const anim_character_pose_t *p = &f->poses[i];
    fprintf(out, "%s{\"id\":%llu,\"frame\":%u,\"contacts\":%u,\"transition\":%s", i ? "," : "",
            (unsigned long long)p->character, p->frame, p->contacts, p->transition ? "true" : "false");
    print_floats(out, "positions", p->positions, s->rotations_only ? 3 : 3 * p->nbones);
    print_floats(out, "rotations", p->rotations, 4 * p->nbones);
    if (p->global_positions) print_floats(out, "global_positions", p->global_positions, 3 * p->nbones);
    fputc('}', out);
  }
  fprintf(out, "]");
  if (f->ngone) {
    fprintf(out, ",\"gone\":[");
    for (int i = 0; i < f->ngone; i++) fprintf(out, i ? ",%llu" : "%llu", (unsigned long long)f->gone[i]);
    fputc(']', out);
  }
  if (f->nentered) {
    fprintf(out, ",\"entered\":[");
    for (int i = 0; i < f->nentered; i++) {
      const anim_character_entered_t *e = &f->entered[i];
      fprintf(out, "%s{\"id\":%llu,\"database\":\"%s\",\"database_version\":\"%016llx\",\"bones\":%d}",
              i ? "," : "", (unsigned long long)e->character, e->database, (unsigned long long)e->database_version,
              e->bones);
    }
    fputc(']', out);
  }
  if (f->nleft) {
    fprintf(out, ",\"left\":[");
    for (int i = 0; i < f->nleft; i++) fprintf(out, i ? ",%llu" : "%llu", (unsigned long long)f->left[i]);
    fputc(']', out);
  }
  fprintf(out, "}\n");
  return ferror(out) ? -1 : 0;
}

int animctl_stream(const options_t *o, int argc, char **argv) {
  stream_session_t s;
  if (stream_session_parse(&s, argc, argv, 1, "stream", NULL, NULL) != 0) {
    stream_session_free(&s);
    return 2;
  }
  anim_client_t *client;
  int rc = animctl_connect(o, &client);
  if (rc) {
    stream_session_free(&s);
    return rc;
  }
  FILE *out = s.output ? fopen(s.output, "w") : stdout;
  if (!out) {
    animctl_fail("stream: cannot write %s", s.output);
    stream_session_free(&s);
    return 1;
  }
  rc = stream_session_run(client, &s, o->timeout_ms, stream_print_frame, out);
  if (s.output) fclose(out);
  stream_session_free(&s);
  return rc;
}
