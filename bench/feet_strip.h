/*
 * feet_strip.h: a filmstrip of a character's feet, drawn as SVG from the
 * frames a quality run displays (tests/support/quality_run.h's tick
 * callback): panels of a few seconds each, top view, with the root's path,
 * a footprint wherever the character shows a foot planted (the contacts a
 * stream reports), the contact bone's path while it steps to re-plant, and
 * the skeleton every half second; under them a timeline of each foot's
 * contacts, shown against the data's.
 *
 * What it does not: run the character or judge it (motion_quality.h does).
 * Allocates while recording (a benchmark tool).
 */
#ifndef ANIM_BENCH_FEET_STRIP_H
#define ANIM_BENCH_FEET_STRIP_H

#include <stdint.h>
#include "character/controller.h"

typedef struct {
  const anim_database_t *db;
  float dt;                 /* s per frame */
  int nframes, capacity;
  vec3 *positions;          /* nframes x nbones, world */
  uint32_t *shown, *data;   /* contacts shown (streamed) and in the data, per frame */
  uint32_t *stepping;       /* bit i: foot i stepping to re-plant */
} feet_strip_t;

/* An empty strip for characters on db ticked every dt seconds. */
void feet_strip_init(feet_strip_t *strip, const anim_database_t *db, float dt);
void feet_strip_free(feet_strip_t *strip);

/* A quality run's tick callback (ctx: the strip): records the displayed frame. */
void feet_strip_record(void *ctx, const anim_controller_t *character, uint32_t contacts);

/* Writes the strip to path, panels of panel_seconds, title on top. 0, or -1. */
int feet_strip_write(const feet_strip_t *strip, const char *path, float panel_seconds, const char *title);

#endif
