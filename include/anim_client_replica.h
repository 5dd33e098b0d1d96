/*
 * anim_client_replica.h: rebuilding poses from a replicated stream
 * (ANIM_POSE_REPLICATED), an optional part of the C client library:
 * libanimclient_replica.a, linked after libanimclient.a. It carries the
 * animation core's own pose code (the motion-matching controller's
 * replay, the inertializer, foot locking, the database loader), not a
 * second implementation: on the same build as the server it rebuilds the
 * very pose the server shows, bit for bit.
 *
 * A replica holds one database, loaded from the same .animdb file the
 * server loaded (checked by content hash on every keyframe), and the state
 * of every character of a replicated subscription on it. Feed it each
 * frame of that subscription, in order, from its stream callback; then
 * read any character's pose. A frame missed by the client cannot be
 * noticed by the server: feed every one (the library's frame queue drops
 * the oldest when not read: read them with a callback, or often enough).
 * Frames the server did not send (a drop, a pause) it makes up for with
 * keyframes; a record that replays a tick for a character the replica
 * holds no state of (a keyframe that was not fed) is ANIM_EPROTO.
 *
 * What it does not carry: characters of other modes (machine, graph,
 * tracker, learned, and physics ones) come in the same frames as
 * ordinary quantized poses (frame->poses); characters on another database
 * than the replica's are skipped (counted in anim_replica_stats).
 *
 * Thread use: one thread at a time per replica; nothing global.
 */
#ifndef ANIM_CLIENT_REPLICA_H
#define ANIM_CLIENT_REPLICA_H

#include <stddef.h>
#include <stdint.h>
#include "anim_client_stream.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct anim_replica anim_replica_t;

/* One character's rebuilt pose: bone 0 the root in world space, the others
 * local to their parent (as a float stream's). Pointers into the replica,
 * valid until the next anim_replica_apply or anim_replica_free. */
typedef struct {
  uint64_t character;
  uint32_t frame;          /* database frame playing */
  int nbones;
  const float *positions;  /* 3 per bone */
  const float *rotations;  /* w, x, y, z per bone */
  uint32_t contacts;       /* bit i: contact bone i shown planted */
  int transition;          /* a transition started this tick */
  /* 1: the last frame applied carried it. A region's band that skips
   * ticks leaves a character out of most frames: its pose is then the one
   * of the last frame that carried it (the next brings the ticks between). */
  int current;
} anim_replica_pose_t;

typedef struct {
  uint64_t frames;         /* frames applied */
  uint64_t keyframes;      /* states taken whole */
  uint64_t replays;        /* ticks replayed */
  uint64_t foreign;        /* records of characters on another database, skipped */
  uint64_t batched;        /* of replays, ticks a region's band skipped, replayed from a later record */
  int characters;          /* held now */
} anim_replica_stats_t;

/* A replica on the database file at path (an .animdb, as the server loads
 * it). NULL on failure, with the code in *out_error (may be NULL) and a
 * message in err (may be NULL). Free with anim_replica_free. */
anim_replica_t *anim_replica_create(const char *database_path, int *out_error, char *err, size_t errlen);
void anim_replica_free(anim_replica_t *replica);

/* Applies one frame of a replicated subscription: keyframes are taken,
 * other records replay the tick (frame->dt); characters absent from the
 * frame are forgotten. 0; ANIM_EINVAL (NULL, or not an ANIM_POSE_REPLICATED
 * frame); ANIM_EPROTO (malformed records, or a tick of a character with no
 * state: a frame was missed); ANIM_EFORMAT (a keyframe that does not fit
 * its database); ANIM_ENOMEM. On an error the characters the frame had
 * reached are updated, the rest are not: wait for keyframes (unsubscribe
 * and subscribe again, or pause and resume). */
int anim_replica_apply(anim_replica_t *replica, const anim_stream_frame_t *frame);

/* The pose of character in the last frame applied. 0 or ANIM_ENOTFOUND. */
int anim_replica_pose(const anim_replica_t *replica, uint64_t character, anim_replica_pose_t *out_pose);

void anim_replica_stats(const anim_replica_t *replica, anim_replica_stats_t *out_stats);

#ifdef __cplusplus
}
#endif

#endif
