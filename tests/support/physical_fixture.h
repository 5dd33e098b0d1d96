/*
 * physical_fixture.h: what the physical characters' end-to-end tests share
 * (test_physical, test_physical_mass, test_physical_divergence): the
 * Bandai Namco database in a data directory, a server on it with
 * --fixed-step, characters made and watched through the real client
 * library, and a track of one character's hips and state per frame.
 */
#ifndef ANIM_TEST_PHYSICAL_FIXTURE_H
#define ANIM_TEST_PHYSICAL_FIXTURE_H

#include <stdint.h>
#include "anim_client.h"
#include "database/database.h"
#include "server_proc.h"

#define PHYS_TIMEOUT_MS 20000
#define PHYS_MODERATE_PUSH 45.0f /* N s: a firm shove for 70 kg: it staggers and recovers */
#define PHYS_HARD_PUSH 300.0f    /* N s: past what the stabiliser holds: it falls */
#define PHYS_RECOVER_SECONDS 2.0f
#define PHYS_CHEST "Chest"

/* The Bandai Namco database (anim_test_bandai_database), built once per
 * program into a data directory as "bandai": 1, or 0 when it skips (fails
 * under CI). phys_teardown (the group teardown) frees it. */
int phys_database(void);
const anim_database_t *phys_db(void);
int phys_teardown(void **state);

/* A server on it with --fixed-step (every tick one period, none folded
 * into a longer one when the loaded machine makes it late) and the pool at
 * `threads` threads. */
void phys_start(anim_test_server_t *server, const char *threads);

/* n characters of mode (total_mass kg, 0: the default), at x + 3 i, z 0,
 * searching every frame; fails the test on error. Returns out_ids[0]. */
uint64_t phys_create(anim_client_t *c, int mode, float total_mass, float x, int n, uint64_t *out_ids);

const anim_character_pose_t *phys_pose_of(const anim_stream_frame_t *f, uint64_t id);
int phys_bone(const char *name);

/* rc must be code and the client's last error must name field. */
void phys_expect_refused(anim_client_t *c, int rc, int code, const char *field);

/* Subscribes c to every character it owns (float poses, global positions). */
void phys_subscribe_owned(anim_client_t *c);

#define PHYS_MAX_TICKS 1200
typedef struct {
  uint64_t tick[PHYS_MAX_TICKS];
  int physics[PHYS_MAX_TICKS];
  float hips_y[PHYS_MAX_TICKS], hips_x[PHYS_MAX_TICKS], hips_z[PHYS_MAX_TICKS];
  int n;
} phys_track_t;

/* Frames whose dt was not one period (a tick that folded missed deadlines). */
extern int phys_irregular;

/* Reads frames for ticks ticks (the subscription's queue), keeping id's
 * hips and state in *out (may be NULL), and, when bytes is set, every
 * pose's floats and state appended in frame order (realloc'd). */
void phys_record(anim_client_t *c, uint64_t id, int ticks, phys_track_t *out, float **bytes, size_t *nbytes);
/* The same through the frame of tick `last` (the client may read the stream
 * behind the server: a tick-stamped window, not a count from now). */
void phys_record_until(anim_client_t *c, uint64_t id, uint64_t last, phys_track_t *out);

/* The tick of the first stream frame holding id. */
uint64_t phys_first_tick(anim_client_t *c, uint64_t id);

void phys_print_track(const char *what, const phys_track_t *t, uint64_t push_tick);

/* What a character did from tick `from` on, as a track recorded it. */
typedef struct {
  int powered, fallen, recovering; /* frames in each state */
  int back;                        /* ticks from `from` to the first kinematic frame after it (-1: none) */
  int fell;                        /* ticks from `from` to the first fallen frame (-1: none) */
  float standing;                  /* hips height at the last frame before `from` */
  float lowest;                    /* hips height, lowest */
  float furthest;                  /* m, the hips' largest horizontal distance from where they were at `from` */
  float last;                      /* hips height at the last frame */
} phys_watch_t;

phys_watch_t phys_watch(const phys_track_t *t, uint64_t from);

/* A physical character of c's (total_mass kg, 0: 70) at x, standing 1 s,
 * pushed with *p at `delay` ticks after its first tick (p->tick set;
 * asserted to be the tick the server names; later by 30 ticks at a time
 * while the server has passed it), then watched through `ticks` ticks
 * after the push. c must be subscribed to what it owns. The caller frees .t. */
typedef struct {
  uint64_t id, at;
  phys_track_t *t;
} phys_pushed_t;

phys_pushed_t phys_push_and_watch(anim_client_t *c, float total_mass, float x, anim_push_t *p, int delay, int ticks);

#endif
