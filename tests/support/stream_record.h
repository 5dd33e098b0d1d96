/*
 * stream_record.h: a record of stream frames a test received, written as
 * text for tools to draw (animgraph filmstrip): the skeleton's parents,
 * then one line per frame with its time (s of simulation since the first
 * frame recorded), a label (a state, or "-"),
 * whether a transition started, the root's rotation and every bone's world
 * position (the subscription's global_positions).
 *
 *   animstream 1
 *   bones N
 *   parents P0 P1 ... PN-1
 *   frame TIME LABEL TRANSITION QW QX QY QZ X0 Y0 Z0 ... XN-1 YN-1 ZN-1
 */
#ifndef ANIM_TEST_STREAM_RECORD_H
#define ANIM_TEST_STREAM_RECORD_H

#include <stdint.h>
#include <stdio.h>
#include "animserver.pb-c.h"

/* Opens $ANIM_BUILD_DIR/tests/<name> (build/tests without it) and writes
 * the header; NULL when it cannot (the test goes on without a record). */
FILE *anim_stream_record_open(const char *name, int nbones, const int32_t *parents);
/* One frame of a pose streamed with ENCODING_FLOAT and global_positions. */
void anim_stream_record_frame(FILE *f, double time, const char *label, const Animserver__CharacterPose *pose);
void anim_stream_record_close(FILE *f);

#endif
