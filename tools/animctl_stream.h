/* animctl_stream.h: a stream session (create and steer characters, or name
 * existing ones; subscribe; hand every frame to a callback), shared by
 * `animctl stream` and `animctl render --stream`. */
#ifndef ANIMCTL_STREAM_H
#define ANIMCTL_STREAM_H

#include <stdio.h>
#include "anim_client.h"

enum { SCRIPT_NONE = 0, SCRIPT_TOUR, SCRIPT_WANDER };

struct stream_session;
/* Returns nonzero to stop the session. */
typedef int (*stream_frame_fn)(struct stream_session *session, const anim_stream_frame_t *frame, void *data);

typedef struct stream_session {
  const char *database;
  int database_given;         /* --database (or --mode learned); else --id alone streams the first id's */
  char database_found[64];    /* that database's name, looked up by the run */
  int mode; /* --mode: ANIM_MODE_MOTION_MATCHING or ANIM_MODE_LEARNED (database "lmm") */
  int create;                 /* characters to create and steer */
  anim_character_input_t input;
  int script;                 /* SCRIPT_*: overrides input */
  uint64_t *ids;              /* existing characters to stream; the session ends once all are gone */
  unsigned char *gone;        /* per ids[i]: reported gone (or a repeat) */
  int nids;
  int rate_divisor, encoding, global, rotations_only;
  /* --region: the characters inside a circle or box instead of --id/owned
   * (any connection's; --create ones too, wherever they walk). */
  int region_given;
  anim_region_t region;
  anim_region_band_t bands[8];  /* --band, region.bands points here */
  int follow_created;           /* follow=@K: the K-th --create character (1-based), resolved once created */
  int frames;                 /* stop after this many frames ... */
  double seconds;             /* ... or this much stream time, when > 0 */
  const char *output;
  /* A caller's own options: returns 1 when it took (flag, value). */
  int (*extra)(struct stream_session *session, const char *flag, const char *value);
  void *extra_data;
  /* Filled while running. */
  uint64_t *created;
  uint64_t subscription;
  float tick_rate;
  anim_db_description_t *description;
  int header_written;
} stream_session_t;

typedef int (*stream_extra_fn)(struct stream_session *session, const char *flag, const char *value);

/* Parses argv[first..] into s with defaults; options it does not know go to
 * extra (may be NULL) with extra_data in s->extra_data. 0, or -1 after
 * printing the problem. */
int stream_session_parse(stream_session_t *s, int argc, char **argv, int first, const char *command,
                         stream_extra_fn extra, void *extra_data);
int stream_session_run(anim_client_t *client, stream_session_t *s, int timeout_ms, stream_frame_fn on_frame,
                       void *data);
void stream_session_free(stream_session_t *s);

/* A stream_frame_fn writing frames as JSON lines to data (a FILE *), the
 * header line before the first: the format of `animctl stream` (and of the
 * recording file `animctl record` writes). */
int stream_print_frame(stream_session_t *s, const anim_stream_frame_t *f, void *data);

#endif
