/*
 * marker_gate.h: which marker samples the body may follow (marker_fit.h),
 * decided from each marker's own recent history and the database's motion,
 * not from a distance picked by hand.
 *
 * The bound: a marker's point (its bone's joint plus its offset turned by
 * the bone) never accelerates faster in the database than a_max, the
 * largest second difference of that point over the database's frames
 * (within each range) times the rate squared. A real marker moving with a
 * constant velocity v from its last accepted sample a, k frames of dt ago,
 * and accelerating at most a_max, lies within a_max (k dt)^2 of the
 * prediction x_a + v k dt (at k = 1 exactly the second difference's bound).
 * A sample further away is no motion the database knows: a glitch, a
 * swapped label. It is rejected, and its goal is put where the marker's
 * accepted samples say it was: on the straight line between the last
 * accepted sample and the next one (the clip is known in advance), or on
 * the prediction when none follows. The bound grows with k, so a marker
 * that really moved (a shifted marker staying put) is taken again after a
 * few frames (0.5 m at a_max 100 m/s^2: 0.07 s).
 *
 * The velocity is the last two accepted samples' slope; the first two
 * samples of a marker are accepted as they come (no velocity yet), and so
 * is the sample after one taken again past rejected ones (the marker may
 * have moved for good: the slope over the gap would be no speed of it).
 * Missing samples count in k. Not here: noise (the database's own
 * jitter is in a_max), the body (marker_fit.c follows the goals).
 */
#ifndef ANIM_PHYSICS_MARKER_GATE_H
#define ANIM_PHYSICS_MARKER_GATE_H

#include "database/database.h"
#include "marker_fit.h"

/* out_accel[nmarkers]: a_max of each marker's point over db's frames,
 * m/s^2 (a marker without an offset: its bone's joint). */
void anim_marker_gate_bounds(const anim_database_t *db, const anim_marker_t *markers, int nmarkers, float *out_accel);

/* Gates positions[f * nmarkers + i] (present as in anim_marker_fit_run,
 * NULL: all; at the body's size) taken frame_time apart, accel from
 * anim_marker_gate_bounds on the body's database. out_goals: the positions, rejected samples replaced as
 * above (missing ones copied); out_rejected (may be NULL): 1 where
 * rejected. Returns the number rejected. Allocates nothing. */
long anim_marker_gate_run(const float *accel, int nmarkers, const vec3 *positions, const unsigned char *present,
                          int nframes, float frame_time, vec3 *out_goals, unsigned char *out_rejected);

#endif
