/*
 * anim_client_stream.h: pose streams (part of the client library; include
 * anim_client.h).
 *
 * A subscription makes the server push a frame of poses every N ticks for
 * some characters (any connection's). Frames are decoded into floats
 * whatever their wire encoding and go to the subscription's callback, or,
 * with none, into a bounded queue read by anim_client_next_frame. Frames
 * arrive only while the caller is inside the library (anim_client_process,
 * anim_client_poll, a blocking call). Creating and steering characters is
 * anim_client_character.h's.
 */
#ifndef ANIM_CLIENT_STREAM_H
#define ANIM_CLIENT_STREAM_H

#include "anim_client_session.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ANIM_POSE_REPLICATED: not poses but motion state, rebuilt into poses by
 * the optional replica library (anim_client_replica.h); a frame's
 * `replica` holds its records, its poses only the characters of kinds it
 * cannot carry (every mode but motion matching; quantized on the wire). */
enum { ANIM_POSE_FLOAT = 0, ANIM_POSE_QUANTIZED = 1, ANIM_POSE_REPLICATED = 2 };

/* A region's distance band: characters up to radius metres from the
 * centre (and past the band before) get a pose every rate_divisor ticks. */
typedef struct {
  float radius;                /* m, > 0, increasing band to band */
  int rate_divisor;            /* 0 or 1: every tick */
} anim_region_band_t;

/* An area of interest on the ground plane (x, z): a circle (radius) or a
 * box (half_x, half_z), centred on (x, z) or on one of the caller's
 * characters (follow). Its frames carry the characters inside, any
 * connection's, with `entered` and `left` said once each as they come and
 * go; a character past the last band's radius takes the last band's rate.
 * No bands: every member at the subscription's rate_divisor. */
typedef struct {
  float x, z;                  /* centre, world metres (ignored with follow) */
  float radius;                /* a circle; or 0 and: */
  float half_x, half_z;        /* a box's half-extents */
  uint64_t follow;             /* 0, or a character of this connection's to centre on each tick */
  const anim_region_band_t *bands; /* nearest first; at most 8 */
  int nbands;
  int max_characters;          /* only the nearest N (0: every one inside) */
} anim_region_t;

typedef struct {
  const uint64_t *characters;  /* these characters (any owner's) */
  int ncharacters;
  int owned;                   /* and every character this connection owns, now or later */
  int rate_divisor;            /* a frame every N ticks; 0 or 1: every tick */
  int encoding;                /* ANIM_POSE_*: the library decodes both to floats */
  int global_positions;        /* add world positions of every bone */
  int rotations_only;          /* local positions of the root only */
} anim_subscribe_options_t;

/* A character that came into a region subscription's area: what drawing it needs. */
typedef struct {
  uint64_t character;
  char database[64];           /* the database it runs on */
  uint64_t database_version;   /* that database's content hash */
  int bones;                   /* its skeleton's bones */
} anim_character_entered_t;

/* One character in a frame: bone 0 is the root in world space, the others
 * local to their parent; floats whatever the wire encoding was. */
typedef struct {
  uint64_t character;
  uint32_t frame;              /* database frame playing */
  int nbones;
  const float *positions;      /* 3 per bone (3 floats only with rotations_only) */
  const float *rotations;      /* w, x, y, z per bone */
  const float *global_positions; /* 3 per bone, or NULL */
  uint32_t contacts;           /* bit i: contact bone i planted */
  int transition;              /* a transition started this tick */
  int depth;                   /* MACHINE characters: the active state path, root first, as */
  uint32_t state_path[8];      /* indices into the machine's states (anim_machine_summary_t), */
  float state_times[8];        /* seconds in each; */
  int state_changed;           /* a transition was taken this tick */
  int physics;                 /* PHYSICAL characters: ANIM_PHYSICS_STATE_* (anim_client_physics.h); 0 for others */
} anim_character_pose_t;

/* Owned by the library: valid during a callback, or until
 * anim_stream_frame_free for anim_client_next_frame's. */
typedef struct {
  uint64_t subscription, tick;
  uint64_t server_time_us;     /* server wall clock when encoded */
  uint64_t received_us;        /* client monotonic clock when decoded */
  uint64_t dropped_frames;     /* replaced by newer ones on the server (latest wins) */
  uint64_t client_dropped;     /* dropped from the library's queue (next_frame not called often enough) */
  int encoding;
  float dt;                    /* seconds this tick simulated */
  size_t wire_bytes;           /* size of this frame on the wire */
  int nposes;
  anim_character_pose_t *poses;
  int ngone;
  const uint64_t *gone;        /* subscribed characters that no longer exist */
  int nentered;                /* region subscriptions: arrivals (their poses are in this frame) */
  const anim_character_entered_t *entered;
  int nleft;                   /* and departures (walked out, past the cap, or destroyed) */
  const uint64_t *left;
  const uint8_t *replica;      /* ANIM_POSE_REPLICATED: the records (anim_client_replica.h reads them) */
  size_t replica_len;
} anim_stream_frame_t;

/* Called for each frame of a subscription made with a callback; the frame is
 * valid during the call only. */
typedef void (*anim_stream_cb)(anim_client_t *client, const anim_stream_frame_t *frame, void *data);
typedef void (*anim_subscribed_cb)(anim_client_t *client, uint64_t id, int status, uint64_t subscription,
                                   float tick_rate, void *data);

/* Subscribes; frames go to cb, or with cb NULL into a queue read by
 * anim_client_next_frame (at most 256 frames: the oldest are dropped and
 * counted in client_dropped). out_subscription and out_tick_rate may be
 * NULL. In the _send form, stream_cb and stream_data are the frames'
 * callback, and cb learns the subscription's id (it exists from then on,
 * before any of its frames). */
int anim_client_subscribe(anim_client_t *client, const anim_subscribe_options_t *options, anim_stream_cb cb,
                          void *data, uint64_t *out_subscription, float *out_tick_rate, int timeout_ms);
int anim_client_subscribe_send(anim_client_t *client, const anim_subscribe_options_t *options,
                               anim_stream_cb stream_cb, void *stream_data, anim_subscribed_cb cb, void *data,
                               uint64_t *out_id);
/* The same for the characters inside a region (any connection's):
 * options->characters and owned must be empty (the region picks them), its
 * rate_divisor 0 or 1 when the region has bands. Frames come only when they
 * carry something: poses due, arrivals (`entered`, with their poses), or
 * departures (`left`). The server checks the region's values (each refusal
 * names the field: "subscribe.region.bands[1].radius ..."); the library
 * only its shape (nbands 0-8, bands set when nbands is, divisors and the
 * cap not negative). A region subscription takes no rate_divisor in
 * anim_client_subscription_update (0 or 1 there). */
int anim_client_subscribe_region(anim_client_t *client, const anim_subscribe_options_t *options,
                                 const anim_region_t *region, anim_stream_cb cb, void *data,
                                 uint64_t *out_subscription, float *out_tick_rate, int timeout_ms);
int anim_client_subscribe_region_send(anim_client_t *client, const anim_subscribe_options_t *options,
                                      const anim_region_t *region, anim_stream_cb stream_cb, void *stream_data,
                                      anim_subscribed_cb cb, void *data, uint64_t *out_id);
int anim_client_subscription_update(anim_client_t *client, uint64_t subscription, int rate_divisor, int encoding,
                                    int paused, int timeout_ms);
int anim_client_subscription_update_send(anim_client_t *client, uint64_t subscription, int rate_divisor, int encoding,
                                         int paused, anim_status_cb cb, void *data, uint64_t *out_id);
/* The subscription is forgotten at once (frames still on their way are
 * ignored), whatever the server answers. */
int anim_client_unsubscribe(anim_client_t *client, uint64_t subscription, int timeout_ms);
int anim_client_unsubscribe_send(anim_client_t *client, uint64_t subscription, anim_status_cb cb, void *data,
                                 uint64_t *out_id);
/* The oldest queued frame, waiting up to timeout_ms for one. 0,
 * ANIM_ETIMEDOUT, or a connection error. Free with anim_stream_frame_free. */
int anim_client_next_frame(anim_client_t *client, anim_stream_frame_t **out_frame, int timeout_ms);
/* NULL is ignored. */
void anim_stream_frame_free(anim_stream_frame_t *frame);

#ifdef __cplusplus
}
#endif
#endif
