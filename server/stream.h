/*
 * stream.h: pose subscriptions, their frames, and the backpressure that
 * keeps a slow reader from costing the server memory or work.
 *
 * A subscriber is one connection's set of subscriptions. A subscription
 * names characters (any owner's) and/or "every character this connection
 * owns", a rate divisor (a frame every N ticks), an encoding (floats, or
 * quantized: see PoseEncoding in the proto) and options (global positions,
 * rotations only). Its characters are a set: each is in a frame once,
 * whether named twice or named and owned. Each firing tick it produces one
 * StreamMessage with all its characters' poses, encoded on the pool straight into a buffer the
 * subscription keeps and reuses once the socket has taken it.
 *
 * The crowd's hooks drive it (the server routes them here): prepare marks
 * what each actor's record must hold, which subscriptions fire, and which
 * simulation chunks each firing subscriber waits for; a subscriber's frames
 * are encoded (one pool job per subscriber) as soon as its last chunk is
 * ticked, while other chunks still run, so the second core is not idle
 * between simulating and encoding; they are delivered on the loop, and the
 * crowd's tick is released once the simulation and every job are done. A named character found gone is reported once in
 * the next frame's `gone`, and the crowd keeps ticking until it has been (wants_ticks); a subscription left with no
 * named character and not `owned` then sends nothing more (it stays until unsubscribed).
 *
 * A region subscription (aoi.h) names no characters: each tick the grid of
 * every character's root is built once (in prepare, when a region
 * subscription is active) and each region's view picks its members, the
 * poses due by band and who entered and left; its frame goes out only when
 * it carries something. It sees every character on the server, whoever
 * owns it, as a subscription to ids does (a viewer watches other
 * connections' crowds). A region subscription with a frame still waiting
 * is not encoded at all (not even replaced under backpressure), so a frame
 * telling of arrivals and departures is never dropped once made; its news
 * become the members told only when it is delivered. Replicated, a region
 * sends each due motion-matching member's record with every tick since
 * its subscriber last had its state (stream_replica.h; the ticks from the
 * character's ring, actor.h), so a tick with nothing due is not a tick
 * the client missed; a tick it does miss (paused, not encoded, dropped)
 * makes the next frame fresh, every member due with a keyframe.
 *
 * Backpressure, as Redis does for pub/sub clients: while the connection's
 * output is above the stream soft limit, a new frame does not queue behind
 * the old ones: it replaces the subscription's frame still waiting (latest
 * wins; the replaced one is counted in dropped_frames, which every frame
 * reports), and a subscription that already has a frame waiting is not
 * encoded at all that tick (counted the same way). Everything held for a
 * connection (waiting frames, encode buffers) counts against its output
 * limits (connection.h): a subscriber whose one tick of frames would pass
 * the output hard limit, that stays above the stream soft limit for
 * stream_soft_seconds, or that is above the soft limit while the whole
 * server's output is over max_output_memory, is closed. The tick never
 * waits on a socket.
 */
#ifndef SRV_STREAM_H
#define SRV_STREAM_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>
#include "aoi.h"
#include "buffer.h"
#include "codec.h"
#include "connection.h"
#include "counters.h"
#include "crowd.h"
#include "request.h"
#include "stream_replica.h"

#define SRV_MAX_SUBSCRIPTIONS 64
#define SRV_SUBSCRIPTION_BUFFERS 3 /* one on the wire, one waiting, one being encoded */

typedef struct srv_subscription {
  uint64_t id;
  uint64_t *ids;              /* named characters still alive */
  int nids;
  int owned;
  uint32_t rate_divisor;
  srv_encoding_t encoding;
  srv_encoding_t tick_encoding; /* this tick's frame's, set when it fires (an update may come while it is encoded) */
  int global_positions, rotations_only, paused;
  uint64_t dropped;           /* frames replaced or skipped before they were sent */
  uint64_t *gone;             /* named characters found gone, reported in the next frame */
  int ngone;
  int fires;                  /* this tick */
  srv_actor_t **resolved;     /* this tick's named characters (resolved on the loop); nids long */
  int nresolved;
  srv_stream_pose_t *poses;   /* this tick's frame, kept across ticks */
  size_t poses_capacity;
  srv_stream_scratch_t scratch;
  srv_buffer_t *buffers[SRV_SUBSCRIPTION_BUFFERS]; /* reused once the socket has taken them */
  srv_buffer_t *target;       /* this tick's frame: buffers[target_slot], or NULL (the job makes one) */
  int target_slot;            /* -1: the job makes a new buffer */
  int encoded_poses, encode_failed;
  srv_buffer_t *waiting;      /* the newest frame the socket could not take yet (one of buffers[]) */
  srv_aoi_view_t *view;       /* a region subscription's area and members (aoi.h); NULL for the others */
  /* ENCODING_REPLICATED (stream_replica.h): this tick's records; whether
   * the next frame must carry every character's keyframe (a tick the
   * client did not get: the first, a pause, a drop), and whether this
   * tick's does. */
  srv_replica_records_t replica;
  int replica_resync, replica_keys;
  struct srv_subscription *next;
} srv_subscription_t;

struct srv_streams;

typedef struct srv_subscriber {
  struct srv_streams *hub;
  srv_connection_t *connection;
  uint64_t owner;             /* the connection id, for owned subscriptions */
  srv_subscription_t *subscriptions;
  int count;
  uint32_t owned_want;        /* this tick: SRV_WANT_* of the firing owned subscriptions */
  int owned_firing;           /* this tick: an owned subscription fires */
  int owned_full_rate;        /* this tick: one of them streams every tick (its characters get full detail) */
  int owned_replicated;       /* this tick: a replicated one among them (quantized poses of what it cannot replicate) */
  int firing;                 /* this tick: subscriptions that fire */
  int encoding;               /* a pool job is encoding this subscriber's frames */
  int queued;                 /* this tick: its job was queued (or could not be) */
  uint64_t *chunks_needed;    /* this tick: a bit per simulation chunk holding one of its characters */
  int chunks_words;           /* capacity of chunks_needed, in words */
  int chunks_left;            /* this tick: chunks still simulating that it needs */
  int waits_all_chunks;       /* this tick: no room to say which chunks it needs, so it waits for them all */
  srv_actor_t **owned;        /* this tick: the characters it owns (for owned subscriptions) */
  size_t nowned, owned_capacity;
  int owned_failed;           /* this tick: no room for them (its owned subscriptions do not fire) */
  size_t frame_bytes;         /* this tick: an upper bound of its frames' bytes (named characters, then all) */
  size_t owned_bytes;         /* this tick: the part of it its owned characters add */
  int closed;                 /* the connection went: free after the job */
  uint64_t over_soft_since_ns; /* output above the stream soft limit since; 0 when below */
  srv_lane_item_t encode;     /* its frames' encoding, in the crowd's lane */
  struct srv_subscriber *prev, *next; /* the hub's list (subscribers with subscriptions) */
  int listed;
} srv_subscriber_t;

typedef struct srv_streams {
  uv_loop_t *loop;
  const srv_config_t *config;
  srv_counters_t *counters;
  srv_crowd_t *crowd;
  srv_subscriber_t *subscribers;
  srv_subscriber_t **owners;  /* this tick: subscribers with an owned subscription firing, by owner (stream.c) */
  uint32_t owners_capacity;   /* a power of two, or 0; freed when the last subscriber leaves the list */
  uint64_t next_subscription_id;
  srv_aoi_grid_t grid;        /* region subscriptions' index, rebuilt in prepare when one is active */
  int jobs_pending;
  int simulating;             /* between prepare and run: chunks still ticking */
} srv_streams_t;

void srv_streams_init(srv_streams_t *hub, uv_loop_t *loop, const srv_config_t *config, srv_counters_t *counters,
                      srv_crowd_t *crowd);

/* A connection's subscriber (embedded in its session). */
void srv_subscriber_init(srv_subscriber_t *subscriber, srv_streams_t *hub, srv_connection_t *connection,
                         uint64_t owner);
/* The connection is closing: subscriptions go (after a job encoding them). */
void srv_subscriber_close(srv_subscriber_t *subscriber);
/* 1 when a subscription is receiving frames (not paused). */
int srv_subscriber_active(const srv_subscriber_t *subscriber);
/* The connection wrote: waiting frames go out if there is room. */
void srv_subscriber_on_written(srv_subscriber_t *subscriber);

/* Requests (loop thread, between ticks). subscribe: ANIM_ENOTFOUND names an
 * unknown character (or follow target), ANIM_EPERM a follow target of another
 * connection's, ANIM_ELIMIT too many subscriptions. update: ANIM_EINVAL a
 * rate_divisor for a region subscription (its bands set its rates). */
int srv_stream_subscribe(srv_subscriber_t *subscriber, const srv_subscribe_request_t *request,
                         srv_response_t *response);
int srv_stream_update(srv_subscriber_t *subscriber, const srv_update_subscription_request_t *request,
                      srv_response_t *response);
int srv_stream_unsubscribe(srv_subscriber_t *subscriber, uint64_t subscription, srv_response_t *response);

/* The crowd's hooks, routed here by the server (loop thread). */
void srv_streams_prepare(srv_streams_t *hub);
void srv_streams_chunk_simulated(srv_streams_t *hub, int chunk);
void srv_streams_run(srv_streams_t *hub);
int srv_streams_want_ticks(const srv_streams_t *hub);

#endif
