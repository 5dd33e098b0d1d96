/*
 * motion_quality.h: how well a displayed character moves, measured from
 * what is displayed only (world positions of every bone and the contact
 * flags, frame by frame), so the same meter reads a controller ticked in
 * process and a stream received over the wire.
 *
 * Measures (issue 16):
 *  - contact-foot slide: the horizontal speed (m/s) of a contact bone
 *    between two consecutive frames that both flag its contact, leaving out
 *    the first and last two frames of each contact (a foot landing or
 *    taking off); p50, p95 and the worst, with its foot and frame;
 *  - pops: each bone's largest per-frame speed against the largest it has
 *    in the source data (consecutive frames of one clip); the worst ratio,
 *    with its bone and frame;
 *  - responsiveness: from each desired velocity commanded (the caller says
 *    when), the time until the root's velocity along it first reaches 90% of
 *    the desired speed; mean and worst over the commands that reached it
 *    before the next one, and how many did;
 *  - contact share: the share of foot-frames flagged, and (when the caller
 *    passes them) the share the data flags for the frames played;
 *  - the height of flagged contact bones (frames as for slide), p95, and
 *    the data's own p95 for its flagged frames; and over every flagged
 *    frame, the ends of contacts included (a foot flagged while it is still
 *    coming down or already lifting), p99 and the highest.
 *
 * What it does not: drive a character or decide what a contact is; a
 * frame's flags are what the caller displays (or streams). Allocates (test
 * support); no cmocka, so benchmarks link it.
 */
#ifndef ANIM_TEST_MOTION_QUALITY_H
#define ANIM_TEST_MOTION_QUALITY_H

#include <stdint.h>
#include "database/database.h"

typedef struct {
  long frames;
  long slide_samples;
  float slide_p50, slide_p95, slide_max;  /* m/s */
  int slide_worst_foot;                   /* contact index, -1 without samples */
  long slide_worst_frame;                 /* frame count since the start of the run */
  float pop_ratio;                        /* worst displayed speed / source maximum */
  int pop_bone;
  long pop_frame;
  float pop_speed, pop_source;            /* m/s */
  int commands, reached;
  float response_mean, response_max;      /* s */
  float flagged_share, data_share;        /* of foot-frames; data_share -1 when not given */
  float flagged_height_p95, data_height_p95; /* m above the ground */
  float contact_height_p99, contact_height_max; /* m above the ground, every flagged frame */
} anim_quality_t;

typedef struct {
  float speed; /* m/s */
  long frame;
  int foot;
} anim_quality_slide_t;

typedef struct {
  int nbones, nfeet;
  int feet[ANIM_MAX_CONTACTS];
  float *source_max;        /* nbones, m/s */
  float data_height_p95;
  vec3 *previous;           /* nbones, last frame's positions */
  int have_previous;
  uint32_t previous_flags;
  long frame;
  /* The contact running on each foot: its frames so far, its step speeds and heights. */
  int run_frames[ANIM_MAX_CONTACTS];
  float *run_speeds[ANIM_MAX_CONTACTS], *run_heights[ANIM_MAX_CONTACTS];
  long run_start[ANIM_MAX_CONTACTS];
  int run_capacity;
  /* Kept samples. */
  anim_quality_slide_t *slides;
  float *heights, *all_heights;
  long nslides, nheights, slide_capacity, height_capacity, nall_heights, all_height_capacity;
  float pop_ratio, pop_speed, pop_source;
  int pop_bone;
  long pop_frame;
  /* Responsiveness. */
  int command_active, commands, reached;
  vec3 command;
  float command_time, time, response_sum, response_max;
  long flagged, data_flagged, data_frames, foot_frames;
} anim_quality_meter_t;

/* Each bone's largest speed in db (m/s) over consecutive frames of one
 * range, into out_max (nbones). */
void anim_quality_source_speeds(const anim_database_t *db, float *out_max);

/* A meter for characters on db (its skeleton, contact bones, source speeds
 * and contact heights). 0, or -1 (out of memory). Free with _free. */
int anim_quality_meter_init(anim_quality_meter_t *out, const anim_database_t *db);
void anim_quality_meter_free(anim_quality_meter_t *m);

/* A desired velocity (m/s, world) starts now (before the frame it applies to). */
void anim_quality_meter_command(anim_quality_meter_t *m, vec3 desired);

/* One displayed frame dt seconds after the last: every bone's world
 * position (nbones), the displayed contact flags (bit i: contact i), and the
 * flags the data has for the frame played (data_flags < 0: not known). */
void anim_quality_meter_frame(anim_quality_meter_t *m, const vec3 *positions, uint32_t flags, long data_flags,
                              float dt);

/* Frames were lost: the next frame starts afresh (contacts end here). */
void anim_quality_meter_gap(anim_quality_meter_t *m);

/* The figures so far (ends open contacts; the meter can go on). */
void anim_quality_meter_result(anim_quality_meter_t *m, anim_quality_t *out);

/* One line: "slide p50 .. p95 .. max .. (foot F, frame N) pop .. (bone, frame) ...". */
void anim_quality_format(const anim_quality_t *q, const anim_skeleton_t *skeleton, char *out, int len);

#endif
