/*
 * animctl_physics.c: the physical-character subcommand of animctl.
 *
 *   animctl push DB [--seconds S] [--walk X,Z] [--mass KG] EVENT...
 *
 * A physical character (MODE_PHYSICAL) is created on database DB (a
 * character is pushed only by the connection that made it), of KG kg
 * (the server checks it: [20, 300], default 70), standing, or walking
 * with the stick at X,Z; the events are applied at their times T
 * (seconds after its first tick):
 *   T:impulse:BONE:x,y,z[@px,py,pz]   an impulse (N s, world) at a point (m, the bone's frame)
 *   T:force:BONE:x,y,z:SECONDS        a force (N) for a while
 *   T:limp:BONE[:SECONDS]             the bone and those below it limp (for a while)
 *   T:weaken:BONE:HALFLIFE[:SECONDS]  the bone and those below it weaker (a longer half-life, s)
 *   T:drop                            the root stabiliser off: the character drops
 *   T:recover                         back to motion matching now
 * Pushes name their tick (the same run twice gives the same motion);
 * the other events are sent when the stream reaches their time. It prints
 * each change of the character's state with the height of its joints'
 * mean (m) and the lowest it came to in the state before.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "animctl.h"

enum { MAX_EVENTS = 64 };

typedef struct {
  float time;
  enum { IMPULSE, FORCE, LIMP, WEAKEN, DROP, RECOVER } kind;
  char bone[64];
  float v[3], point[3], seconds, halflife;
  int sent;
} event_t;

static const char *const state_names[] = {"none", "kinematic", "powered", "limp", "recovering", "fallen"};

static int parse_floats(const char *text, float *out, int n, const char **rest) {
  char *end;
  for (int k = 0; k < n; k++) {
    out[k] = strtof(text, &end);
    if (end == text || (k + 1 < n && *end != ',')) return 2;
    text = k + 1 < n ? end + 1 : end;
  }
  *rest = text;
  return 0;
}

/* "T:KIND[:BONE[:...]]" into *e; 0 or 2. */
static int parse_event(const char *spec, event_t *e) {
  memset(e, 0, sizeof *e);
  char *end;
  e->time = strtof(spec, &end);
  if (end == spec || *end != ':' || e->time < 0.0f) return 2;
  const char *kind = end + 1, *colon = strchr(kind, ':');
  size_t klen = colon ? (size_t)(colon - kind) : strlen(kind);
  const char *rest = colon ? colon + 1 : "";
  if (klen == 4 && !strncmp(kind, "drop", 4)) return e->kind = DROP, *rest ? 2 : 0;
  if (klen == 7 && !strncmp(kind, "recover", 7)) return e->kind = RECOVER, *rest ? 2 : 0;
  const char *bone_end = strchr(rest, ':');
  size_t blen = bone_end ? (size_t)(bone_end - rest) : strlen(rest);
  if (!blen || blen >= sizeof e->bone) return 2;
  snprintf(e->bone, sizeof e->bone, "%.*s", (int)blen, rest);
  const char *args = bone_end ? bone_end + 1 : "", *tail;
  if (klen == 7 && !strncmp(kind, "impulse", 7)) {
    e->kind = IMPULSE;
    if (parse_floats(args, e->v, 3, &tail)) return 2;
    if (*tail == '@' && parse_floats(tail + 1, e->point, 3, &tail)) return 2;
    return *tail ? 2 : 0;
  }
  if (klen == 5 && !strncmp(kind, "force", 5)) {
    e->kind = FORCE;
    if (parse_floats(args, e->v, 3, &tail) || *tail != ':') return 2;
    return parse_floats(tail + 1, &e->seconds, 1, &tail) || *tail ? 2 : 0;
  }
  if (klen == 4 && !strncmp(kind, "limp", 4)) {
    e->kind = LIMP;
    return *args && (parse_floats(args, &e->seconds, 1, &tail) || *tail) ? 2 : 0;
  }
  if (klen == 6 && !strncmp(kind, "weaken", 6)) {
    e->kind = WEAKEN;
    if (parse_floats(args, &e->halflife, 1, &tail)) return 2;
    if (*tail == ':' && parse_floats(tail + 1, &e->seconds, 1, &tail)) return 2;
    return *tail ? 2 : 0;
  }
  return 2;
}

static int send_event(anim_client_t *client, uint64_t id, event_t *e, uint64_t tick, int timeout_ms) {
  if (e->kind == IMPULSE || e->kind == FORCE) {
    anim_push_t p;
    anim_push_init(&p);
    p.bone = e->bone, p.tick = tick, p.is_force = e->kind == FORCE;
    memcpy(p.is_force ? p.force : p.impulse, e->v, sizeof e->v);
    memcpy(p.point, e->point, sizeof e->point);
    p.duration = e->seconds;
    return anim_client_push(client, id, &p, NULL, timeout_ms);
  }
  if (e->kind == RECOVER) return anim_client_recover(client, id, NULL, timeout_ms);
  if (e->kind == DROP) {
    anim_root_stabiliser_t root;
    anim_root_stabiliser_init(&root);
    root.mode = ANIM_BODY_LIMP;
    return anim_client_set_body_modes(client, id, NULL, 0, &root, 0, NULL, timeout_ms);
  }
  anim_body_part_t part;
  anim_body_part_init(&part);
  part.bone = e->bone, part.descendants = 1, part.duration = e->seconds;
  if (e->kind == LIMP) part.mode = ANIM_BODY_LIMP;
  else part.has_strength = 1, part.halflife = e->halflife, part.damping_ratio = 1.0f, part.max_torque = 300.0f;
  return anim_client_set_body_modes(client, id, &part, 1, NULL, 0, NULL, timeout_ms);
}

static float mean_height(const anim_character_pose_t *p) {
  if (!p->global_positions || p->nbones < 1) return 0.0f;
  double sum = 0.0;
  for (int b = 0; b < p->nbones; b++) sum += p->global_positions[3 * b + 1];
  return (float)(sum / p->nbones);
}

int animctl_physics(const options_t *o, int argc, char **argv) {
  if (argc < 2) return animctl_fail("push DB [--seconds S] [--walk X,Z] [--mass KG] EVENT... (animctl help push)");
  static event_t events[MAX_EVENTS];
  int nevents = 0;
  float seconds = 4.0f, walk[2] = {0.0f, 0.0f}, mass = 0.0f;
  const char *database = argv[1];
  for (int i = 2; i < argc; i++) {
    const char *tail;
    if (!strcmp(argv[i], "--seconds") && i + 1 < argc) {
      seconds = strtof(argv[++i], NULL);
      if (!(seconds > 0.0f && seconds <= 600.0f)) return animctl_fail("push: --seconds %s: in (0, 600]", argv[i]);
    } else if (!strcmp(argv[i], "--walk") && i + 1 < argc) {
      if (parse_floats(argv[++i], walk, 2, &tail) || *tail) return animctl_fail("push: --walk %s: expected X,Z", argv[i]);
    } else if (!strcmp(argv[i], "--mass") && i + 1 < argc) {
      char *end;
      mass = strtof(argv[++i], &end); /* its range is the server's to check (it names the field) */
      if (end == argv[i] || *end) return animctl_fail("push: --mass %s: expected kilograms", argv[i]);
    } else if (nevents < MAX_EVENTS && parse_event(argv[i], &events[nevents]) == 0) {
      nevents++;
    } else {
      return animctl_fail("push: %s: expected T:impulse:BONE:x,y,z[@px,py,pz], T:force:BONE:x,y,z:S, "
                          "T:limp:BONE[:S], T:weaken:BONE:HALFLIFE[:S], T:drop or T:recover (at most %d)",
                          argv[i], MAX_EVENTS);
    }
  }
  anim_client_t *client;
  int rc = animctl_connect(o, &client);
  if (rc) return rc;
  anim_character_mode_t mode = {0};
  mode.mode = ANIM_MODE_PHYSICAL, mode.total_mass = mass;
  anim_character_placement_t at = {0.0f, 0.0f, 0.0f, -1};
  uint64_t id = 0;
  anim_subscribe_options_t sub = {NULL, 0, 1, 1, ANIM_POSE_FLOAT, 1, 0};
  if ((rc = anim_client_subscribe(client, &sub, NULL, NULL, NULL, NULL, o->timeout_ms)) ||
      (rc = anim_client_characters_create_mode(client, database, &mode, NULL, &at, 1, &id, o->timeout_ms)))
    return report_error("push", rc, client);
  if (walk[0] != 0.0f || walk[1] != 0.0f) {
    anim_character_input_t in;
    anim_character_input_stick(&in, walk[0], walk[1], 0.0f, 0);
    if ((rc = anim_client_characters_set_input(client, &id, &in, 1, NULL, o->timeout_ms)))
      return report_error("push", rc, client);
  }
  uint64_t first = 0;
  int state = -1;
  float lowest = 1e9f;
  for (;;) {
    anim_stream_frame_t *f = NULL;
    if ((rc = anim_client_next_frame(client, &f, o->timeout_ms))) return report_error("push", rc, client);
    const anim_character_pose_t *p = NULL;
    for (int i = 0; i < f->nposes && !p; i++)
      if (f->poses[i].character == id) p = &f->poses[i];
    if (!p) {
      anim_stream_frame_free(f);
      continue;
    }
    if (!first) {
      first = f->tick;
      /* Pushes name their ticks now; the rest go when their time comes. */
      for (int k = 0; k < nevents && !rc; k++)
        if (events[k].kind == IMPULSE || events[k].kind == FORCE)
          rc = send_event(client, id, &events[k], first + (uint64_t)(events[k].time * 60.0f + 0.5f), o->timeout_ms),
          events[k].sent = 1;
    }
    float t = (float)(f->tick - first) / 60.0f, h = mean_height(p);
    for (int k = 0; k < nevents && !rc; k++)
      if (!events[k].sent && events[k].time <= t) rc = send_event(client, id, &events[k], 0, o->timeout_ms), events[k].sent = 1;
    if (rc) {
      anim_stream_frame_free(f);
      return report_error("push", rc, client);
    }
    if (p->physics != state) {
      const char *name = p->physics >= 0 && p->physics < 6 ? state_names[p->physics] : "?";
      if (o->json)
        printf("{\"time\": %.3f, \"tick\": %llu, \"state\": \"%s\", \"height\": %.3f, \"lowest_before\": %.3f}\n",
               (double)t, (unsigned long long)f->tick, name, (double)h, state < 0 ? (double)h : (double)lowest);
      else if (state < 0)
        printf("%6.2f s  %-10s  joints' mean height %.2f m\n", (double)t, name, (double)h);
      else
        printf("%6.2f s  %-10s  joints' mean height %.2f m (lowest %.2f m before)\n", (double)t, name, (double)h,
               (double)lowest);
      state = p->physics, lowest = h;
    }
    if (h < lowest) lowest = h;
    anim_stream_frame_free(f);
    if (t >= seconds) break;
  }
  anim_client_characters_destroy(client, &id, 1, o->timeout_ms);
  return 0;
}
