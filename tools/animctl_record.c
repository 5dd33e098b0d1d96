/*
 * animctl_record.c: `animctl record`, what one character did, written as
 * glTF 2.0 and BVH (and as the stream's JSON lines, the recording file).
 *
 *   animctl record (--create 1 [--database DB] [--input SPEC] | --id ID)
 *                  [--rate-divisor K] [--frames N | --seconds S]
 *                  [--gltf FILE.glb|.gltf] [--bvh FILE.bvh] [-o FILE.jsonl]
 *
 * It runs a stream session (animctl_stream.h: the same --create/--input/--id
 * options) with world positions on, keeps the first created character's (or
 * the first --id's) local positions and rotations of every frame, and at the
 * end writes:
 *  - -o: every frame as `animctl stream` writes it (JSON lines, global
 *    positions included), the recording file;
 *  - --gltf: glTF 2.0 through assimp (import/assimp_export.h): the
 *    database's bone names and parents, the rest pose (offsets from the
 *    first frame's local positions, no rotations), one animation, a key per
 *    recorded frame; metres, Y up;
 *  - --bvh: core/offline/bvh_write.h: the same skeleton and frames, in
 *    centimetres, Y up, Euler ZXY.
 * What it does not: replay a recording into the previewer (not yet); record
 * more than one character (the others of --create N are only streamed).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "animctl.h"
#include "animctl_stream.h"
#include "assimp_export.h"
#include "offline/bvh_write.h"

#define BVH_UNITS_PER_METRE 100.0f /* centimetres, the usual BVH unit */

typedef struct {
  const char *gltf, *bvh;
  FILE *jsonl;
  uint64_t character;   /* the one recorded (known once the session has created it) */
  int nbones, nframes, capacity;
  vec3 *positions;      /* [frame * nbones + bone] */
  quat *rotations;
  uint64_t last_tick, gaps;
  int gone, failed;
} recorder_t;

static int record_option(stream_session_t *s, const char *flag, const char *value) {
  recorder_t *r = s->extra_data;
  if (!strcmp(flag, "--gltf")) r->gltf = value;
  else if (!strcmp(flag, "--bvh")) r->bvh = value;
  else return 0;
  return 1;
}

static int grow(recorder_t *r) {
  int cap = r->capacity ? 2 * r->capacity : 256;
  vec3 *p = realloc(r->positions, (size_t)cap * (size_t)r->nbones * sizeof *p);
  if (p) r->positions = p;
  quat *q = realloc(r->rotations, (size_t)cap * (size_t)r->nbones * sizeof *q);
  if (q) r->rotations = q;
  if (!p || !q) return ANIM_ENOMEM;
  r->capacity = cap;
  return 0;
}

static int on_frame(stream_session_t *s, const anim_stream_frame_t *f, void *data) {
  recorder_t *r = data;
  if (r->jsonl && stream_print_frame(s, f, r->jsonl) != 0) return r->failed = 1;
  if (!r->character) r->character = s->create ? s->created[0] : s->ids[0];
  for (int g = 0; g < f->ngone; g++)
    if (f->gone[g] == r->character) return r->gone = 1;
  const anim_character_pose_t *p = NULL;
  for (int i = 0; i < f->nposes && !p; i++)
    if (f->poses[i].character == r->character) p = &f->poses[i];
  if (!p) return 0;
  if (r->nbones == 0) r->nbones = p->nbones;
  if (p->nbones != r->nbones || p->nbones != s->description->nbones) {
    animctl_fail("record: a pose of %d bones, the database has %d", p->nbones, s->description->nbones);
    return r->failed = 1;
  }
  if (r->nframes == r->capacity && grow(r) != 0) {
    animctl_fail("record: out of memory after %d frames", r->nframes);
    return r->failed = 1;
  }
  if (r->last_tick && f->tick != r->last_tick + (uint64_t)s->rate_divisor) r->gaps++;
  r->last_tick = f->tick;
  size_t base = (size_t)r->nframes * (size_t)r->nbones;
  for (int b = 0; b < r->nbones; b++) {
    const float *v = p->positions + 3 * b, *q = p->rotations + 4 * b;
    r->positions[base + b] = vec3_make(v[0], v[1], v[2]);
    r->rotations[base + b] = quat_normalize(quat_make(q[0], q[1], q[2], q[3]));
  }
  r->nframes++;
  return 0;
}

/* The recording as a clip: the database's skeleton, rest offsets from the first frame. */
static int to_clip(const recorder_t *r, const stream_session_t *s, anim_clip_t *out) {
  const anim_db_description_t *d = s->description;
  anim_skeleton_t *sk = calloc(1, sizeof *sk);
  if (!sk) return ANIM_ENOMEM;
  sk->nbones = d->nbones;
  for (int b = 0; b < d->nbones; b++) {
    snprintf(sk->names[b], sizeof sk->names[b], "%s", d->bone_names[b]);
    sk->parents[b] = d->bone_parents[b];
    sk->offsets[b] = r->positions[b];
  }
  memset(out, 0, sizeof *out);
  int rc = anim_clip_alloc(out, sk, r->nframes, (float)s->rate_divisor / s->tick_rate);
  free(sk);
  if (rc) return rc;
  snprintf(out->name, sizeof out->name, "recording");
  size_t n = (size_t)r->nframes * (size_t)r->nbones;
  memcpy(out->local_positions, r->positions, n * sizeof *r->positions);
  memcpy(out->local_rotations, r->rotations, n * sizeof *r->rotations);
  return 0;
}

static int export_all(const options_t *o, const recorder_t *r, const stream_session_t *s) {
  anim_clip_t clip;
  char err[512] = "";
  int rc = to_clip(r, s, &clip);
  if (rc) return animctl_fail("record: the recording as a clip: %s", anim_strerror(rc)), 1;
  if (r->gltf) {
    size_t n = strlen(r->gltf);
    const char *format = n > 5 && !strcmp(r->gltf + n - 5, ".gltf") ? "gltf2" : "glb2";
    if ((rc = anim_assimp_export(&clip, r->gltf, format, err, sizeof err)) != 0) {
      anim_clip_free(&clip);
      return animctl_fail("record: --gltf %s", err), 1;
    }
  }
  if (r->bvh && (rc = anim_bvh_save(r->bvh, &clip, BVH_UNITS_PER_METRE, err, sizeof err)) != 0) {
    anim_clip_free(&clip);
    return animctl_fail("record: --bvh %s", err), 1;
  }
  if (o->json) {
    printf("{\"character\":%llu,\"database\":\"%s\",\"frames\":%d,\"bones\":%d,\"frame_time\":%.9g,\"gaps\":%llu",
           (unsigned long long)r->character, s->database, r->nframes, r->nbones, (double)clip.frame_time,
           (unsigned long long)r->gaps);
    if (r->gltf) printf(",\"gltf\":\"%s\"", r->gltf);
    if (r->bvh) printf(",\"bvh\":\"%s\"", r->bvh);
    if (s->output) printf(",\"recording\":\"%s\"", s->output);
    printf("}\n");
  } else {
    printf("recorded character %llu: %d frames of %d bones at %.4g s%s%s%s%s%s%s\n",
           (unsigned long long)r->character, r->nframes, r->nbones, (double)clip.frame_time,
           r->gltf ? ", glTF " : "", r->gltf ? r->gltf : "", r->bvh ? ", BVH " : "", r->bvh ? r->bvh : "",
           s->output ? ", recording " : "", s->output ? s->output : "");
  }
  if (r->gaps) fprintf(stderr, "animctl: record: %llu gaps in the ticks (frames dropped): the export's timing "
                               "skips them\n", (unsigned long long)r->gaps);
  anim_clip_free(&clip);
  return 0;
}

int animctl_record(const options_t *o, int argc, char **argv) {
  recorder_t r = {0};
  stream_session_t s;
  int rc = stream_session_parse(&s, argc, argv, 1, "record", record_option, &r);
  if (!rc && s.rotations_only)
    rc = (animctl_fail("record: --rotations-only drops the bone positions a recording needs"), 2);
  if (!rc && !r.gltf && !r.bvh && !s.output)
    rc = (animctl_fail("record: nothing to write: --gltf, --bvh and/or -o"), 2);
  if (!rc && s.create > 1) rc = (animctl_fail("record: --create 1 (one character is recorded)"), 2);
  if (!rc && s.create && s.nids) rc = (animctl_fail("record: --create 1 or --id ID, not both"), 2);
  if (rc) {
    stream_session_free(&s);
    return 2;
  }
  s.global = 1; /* the recording file carries world positions to check an import against */
  anim_client_t *client;
  if ((rc = animctl_connect(o, &client)) != 0) {
    stream_session_free(&s);
    return rc;
  }
  if (s.output && !(r.jsonl = fopen(s.output, "w"))) {
    rc = (animctl_fail("record: -o %s: %s", s.output, strerror(errno)), 1);
  } else {
    rc = stream_session_run(client, &s, o->timeout_ms, on_frame, &r);
    if (r.jsonl && fclose(r.jsonl) != 0 && !rc) rc = (animctl_fail("record: -o %s: write failed", s.output), 1);
    if (!rc && r.failed) rc = 1;
    else if (!rc && r.nframes == 0)
      rc = (animctl_fail("record: character %llu is gone: no frame recorded", (unsigned long long)r.character), 1);
    else if (!rc) rc = export_all(o, &r, &s);
  }
  free(r.positions);
  free(r.rotations);
  stream_session_free(&s);
  return rc;
}
