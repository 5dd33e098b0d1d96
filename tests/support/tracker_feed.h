/*
 * tracker_feed.h: a tracker character of a real server driven over the
 * wire by a held-out clip, as a VR client would: each tick it sends the
 * tracked bones' points of the clip's frame for that tick (with noise, one
 * tracker optionally dropped for a while, or only every Nth tick), reads
 * the streamed pose, and compares it with the clip's true pose at the same
 * time. Shared by test_fit_service.c and `animbench fit-stream`; no cmocka,
 * no wall-clock assertions.
 *
 * Time: within a range, tick T shows truth frame base + (T - base_tick),
 * base_tick the tick that applied the range's first trackers (sent with a
 * reset). By default (ahead > 0) the feed runs in step with the server:
 * the clip is recorded, so each frame is sent `ahead` ticks before its tick
 * and named for it (set_trackers.tick), and the server holds it until then;
 * a client the loaded machine lets read late still has every frame applied
 * at its tick, and the figures measure the fitter and the wire, not the
 * machine. With ahead 0 the clip is a real-time source, as a live VR
 * client's: the trackers for tick T + 1 are sent once tick T's pose has
 * arrived and no newer one is waiting (a client behind the server sends
 * the newest frame, not each stale one in turn), so a tick the client
 * misses shows as latency in the error. Either way `late` counts the
 * answers naming another tick than the one the send was meant for. The
 * server should run with --fixed-step: a tick that folded missed deadlines
 * would skip clip frames.
 *
 * Figures over the joints at or below the pelvis, as fit_eval.h's.
 */
#ifndef ANIM_TEST_TRACKER_FEED_H
#define ANIM_TEST_TRACKER_FEED_H

#include <stdint.h>
#include "math/anim_math.h"
#include "raw_client.h"

struct anim_database;

#define TRACKER_FEED_MAX 8
#define TRACKER_FEED_AHEAD 30 /* ticks: the server holds sets up to 31 after its next tick, 32 a character */

typedef struct {
  const struct anim_database *truth; /* held-out clips (the server's database has their skeleton) */
  int range;                /* the range played, or -1: every range, each after a reset */
  const char *bones[TRACKER_FEED_MAX]; /* tracked bones, the character's creation order */
  int ntrackers;
  const char *pelvis;       /* evaluated joints: this bone and all below it */
  float noise;              /* m, Gaussian sigma per coordinate */
  int drop_tracker;         /* index in bones dropped (sent lost) for a while, or -1 */
  float drop_start, drop_seconds; /* s into each range */
  int every;                /* trackers sent every N ticks (1: every tick); prediction between */
  int ahead;                /* ticks each frame is sent before its own, named for it; 0: as a real-time source */
  unsigned seed;
  /* Called for each compared tick: the streamed and the true global positions (nbones each). */
  void (*frame_cb)(void *user, int range, int frame, const vec3 *fit, const vec3 *truth, const vec3 *sent, int nsent);
  void *user;
} tracker_feed_options_t;

typedef struct {
  int frames, late;          /* ticks compared; inputs applied after the tick they were meant for */
  double mean_error, mean_tracked_error, mean_untracked_error, worst_error; /* m */
  int worst_bone, worst_frame;
  double dropped_error;      /* m, the dropped tracker's bone while dropped */
  float scale;               /* character_state's, at the end */
} tracker_feed_result_t;

void tracker_feed_options_default(tracker_feed_options_t *out_options);

/* Writes db as dir/NAME.animdb in a new temporary directory (dir: its path,
 * at least 64 bytes). 0, or -1. */
int tracker_feed_write_database(const struct anim_database *db, char *dir, size_t dir_size);

/* Asks c's server to load database name (from its data directory). 0, or the error code. */
int tracker_feed_load(anim_test_raw_t *c, const char *name);

/* Creates one MODE_TRACKER character on database tracking o->bones; *out_id.
 * 0, or the error code. */
int tracker_feed_create(anim_test_raw_t *c, const char *database, const tracker_feed_options_t *o, uint64_t *out_id);

/* Destroys character id (owned by c). 0, or the error code. */
int tracker_feed_destroy(anim_test_raw_t *c, uint64_t id);

/* Plays the clip into character id (owned by c; subscribed here, float
 * poses with global positions) and measures. 0, or -1 with a message in err. */
int tracker_feed_run(anim_test_raw_t *c, uint64_t id, const tracker_feed_options_t *o, tracker_feed_result_t *out,
                     char *err, int errlen);

#endif
