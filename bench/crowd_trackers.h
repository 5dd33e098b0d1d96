/*
 * crowd_trackers.h: `animbench crowd --trackers`: tracker-driven characters
 * (MODE_TRACKER) for the crowd benchmark, fed from held-out real motion
 * capture. The server's database is the Bandai Namco set without its
 * held-out clips (tests/support/heldout.h), written to a temporary data
 * directory; each character tracks head, hands and pelvis and is fed the
 * held-out clips' points at its own phase and place, over raw protobuf
 * frames (the client library does not wrap set_trackers yet). The baseline
 * is the same fit in this process on one thread, no server.
 */
#ifndef BENCH_CROWD_TRACKERS_H
#define BENCH_CROWD_TRACKERS_H

#include <stdint.h>
#include "raw_client.h"

typedef struct crowd_trackers crowd_trackers_t;

/* Fit parameters of the characters (0: the server's default). */
typedef struct {
  int search_interval, iterations;
} crowd_trackers_fit_t;

/* Builds the held-out split from shared/data/mocap/bandai-namco and writes
 * the database; NULL with a message on stderr. */
crowd_trackers_t *crowd_trackers_open(const char *shared);
void crowd_trackers_close(crowd_trackers_t *t);

/* The data directory to give the server (--data-dir) and the database name to load. */
const char *crowd_trackers_dir(const crowd_trackers_t *t);
const char *crowd_trackers_database(const crowd_trackers_t *t);

/* Character-ticks per second of the fit on one core, in this process. */
double crowd_trackers_baseline(const crowd_trackers_t *t, const crowd_trackers_fit_t *fit);

/* Creates n tracker characters for connection c (ids into out_ids) and
 * subscribes it to them in encoding (PoseEncoding). 0, or an error code. */
int crowd_trackers_setup(const crowd_trackers_t *t, anim_test_raw_t *c, int n, int encoding,
                         const crowd_trackers_fit_t *fit, uint64_t *out_ids);

/* Sends one set_trackers for characters ids[0..n) (without waiting for its
 * answer): character i shows clip frame (step + phase_i) of the held-out
 * frames, moved to its own place. 0 or -1. */
int crowd_trackers_send(const crowd_trackers_t *t, anim_test_raw_t *c, const uint64_t *ids, int n, long step);

#endif
