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
 *    tick step (a tick the server skipped is interpolated:
 *    recording_frames_append); metres, Y up;
 *  - --bvh: core/offline/bvh_write.h: the same skeleton and frames, in
 *    centimetres, Y up, Euler ZXY.
 * `record --from FILE.jsonl [--id ID] [--gltf F] [--bvh F]` exports a
 * recording file (this command's -o, or `animctl stream -o`) instead, with
 * no server (animctl_recording.h reads it).
 * What it does not: replay a recording into the previewer (not yet); record
 * more than one character at once.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "animctl.h"
#include "animctl_recording.h"
#include "animctl_stream.h"
#include "assimp_export.h"
#include "offline/bvh_write.h"

#define BVH_UNITS_PER_METRE 100.0f /* centimetres, the usual BVH unit */

typedef struct {
  const char *gltf, *bvh;
  FILE *jsonl;
  uint64_t character;   /* the one recorded (known once the session has created it) */
  recording_frames_t frames;
  int gone, failed;
} recorder_t;

static int record_option(stream_session_t *s, const char *flag, const char *value) {
  recorder_t *r = s->extra_data;
  if (!strcmp(flag, "--gltf")) r->gltf = value;
  else if (!strcmp(flag, "--bvh")) r->bvh = value;
  else return 0;
  return 1;
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
  if (p->nbones != s->description->nbones || p->nbones > ANIM_MAX_BONES) {
    animctl_fail("record: a pose of %d bones, the database has %d", p->nbones, s->description->nbones);
    return r->failed = 1;
  }
  vec3 pos[ANIM_MAX_BONES];
  quat rot[ANIM_MAX_BONES];
  for (int b = 0; b < p->nbones; b++) {
    const float *v = p->positions + 3 * b, *q = p->rotations + 4 * b;
    pos[b] = vec3_make(v[0], v[1], v[2]);
    rot[b] = quat_normalize(quat_make(q[0], q[1], q[2], q[3]));
  }
  int rc = recording_frames_append(&r->frames, f->tick, (uint64_t)s->rate_divisor, p->nbones, pos, rot);
  if (rc) {
    animctl_fail("record: frame of tick %llu: %s", (unsigned long long)f->tick, anim_strerror(rc));
    return r->failed = 1;
  }
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
  }
  int rc = recording_frames_clip(&r->frames, sk, (float)s->rate_divisor / s->tick_rate, out);
  free(sk);
  return rc;
}

/* Writes clip to the files asked for and prints the summary; 0 or 1 (reported). */
static int export_clip(const options_t *o, const anim_clip_t *clip, const char *gltf, const char *bvh,
                       uint64_t character, const char *database, uint64_t filled, const char *recording) {
  /* database NULL: not known (--from) */
  char err[512] = "";
  int rc;
  if (gltf) {
    size_t n = strlen(gltf);
    const char *format = n > 5 && !strcmp(gltf + n - 5, ".gltf") ? "gltf2" : "glb2";
    if ((rc = anim_assimp_export(clip, gltf, format, err, sizeof err)) != 0)
      return animctl_fail("record: --gltf %s", err), 1;
  }
  if (bvh && (rc = anim_bvh_save(bvh, clip, BVH_UNITS_PER_METRE, err, sizeof err)) != 0)
    return animctl_fail("record: --bvh %s", err), 1;
  int nbones = clip->skeleton.nbones;
  if (o->json) {
    printf("{\"character\":%llu,\"frames\":%d,\"bones\":%d,\"frame_time\":%.9g,\"filled\":%llu",
           (unsigned long long)character, clip->nframes, nbones, (double)clip->frame_time, (unsigned long long)filled);
    if (database) printf(",\"database\":\"%s\"", database);
    if (gltf) printf(",\"gltf\":\"%s\"", gltf);
    if (bvh) printf(",\"bvh\":\"%s\"", bvh);
    if (recording) printf(",\"recording\":\"%s\"", recording);
    printf("}\n");
  } else {
    printf("recorded character %llu: %d frames of %d bones at %.4g s%s%s%s%s%s%s\n", (unsigned long long)character,
           clip->nframes, nbones, (double)clip->frame_time, gltf ? ", glTF " : "", gltf ? gltf : "",
           bvh ? ", BVH " : "", bvh ? bvh : "", recording ? ", recording " : "", recording ? recording : "");
  }
  /* Not an error: the server skips a tick when late, the frame between is interpolated. */
  if (filled && !o->json)
    printf("%llu frames filled in over skipped ticks\n", (unsigned long long)filled);
  return 0;
}

static int export_all(const options_t *o, const recorder_t *r, const stream_session_t *s) {
  anim_clip_t clip;
  int rc = to_clip(r, s, &clip);
  if (rc) return animctl_fail("record: the recording as a clip: %s", anim_strerror(rc)), 1;
  rc = export_clip(o, &clip, r->gltf, r->bvh, r->character, s->database, r->frames.filled, s->output);
  anim_clip_free(&clip);
  return rc;
}

/* record --from FILE.jsonl [--id ID] --gltf/--bvh: a recording file exported, no server. */
static int record_from_file(const options_t *o, int argc, char **argv) {
  const char *from = NULL, *gltf = NULL, *bvh = NULL;
  uint64_t character = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!v) return animctl_fail("record: %s needs a value", a);
    if (!strcmp(a, "--from")) from = v;
    else if (!strcmp(a, "--gltf")) gltf = v;
    else if (!strcmp(a, "--bvh")) bvh = v;
    else if (!strcmp(a, "--id")) {
      char *end;
      character = strtoull(v, &end, 10);
      if (*end || !character) return animctl_fail("record: --id %s is not a character id", v);
    } else return animctl_fail("record: with --from, only --id, --gltf and --bvh (not %s)", a);
    i++;
  }
  if (!gltf && !bvh) return animctl_fail("record: --from: nothing to write: --gltf and/or --bvh");
  anim_clip_t clip;
  char err[512] = "";
  uint64_t filled = 0;
  int rc = recording_read(from, character, &clip, &character, &filled, err, sizeof err);
  if (rc) return animctl_fail("record: --from %s", err), 1;
  rc = export_clip(o, &clip, gltf, bvh, character, NULL, filled, from);
  anim_clip_free(&clip);
  return rc;
}

int animctl_record(const options_t *o, int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--from")) return record_from_file(o, argc, argv);
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
    else if (!rc && r.frames.nframes == 0)
      rc = (animctl_fail("record: character %llu is gone: no frame recorded", (unsigned long long)r.character), 1);
    else if (!rc) rc = export_all(o, &r, &s);
  }
  recording_frames_free(&r.frames);
  stream_session_free(&s);
  return rc;
}
