/*
 * stream.h: pose subscriptions of a connection, their frames, and the
 * backpressure that keeps a slow reader from costing the server memory.
 *
 * A subscription names characters (any owner's) and/or "every character this
 * connection owns", a rate divisor (a frame every N ticks), an encoding
 * (floats, or quantized: see PoseEncoding in the proto) and options (global
 * positions, rotations only). Each firing tick it produces one
 * StreamMessage with all its characters' poses.
 *
 * Backpressure, as Redis does for pub/sub clients: while the connection's
 * queued output is above the stream soft limit, a new frame does not queue
 * behind the old ones: it replaces the subscription's frame still waiting
 * (latest wins; the replaced one is counted in dropped_frames, which every
 * frame reports). Waiting frames go out when the socket drains. A connection
 * that stays above the soft limit for stream_soft_seconds, or goes above the
 * output hard limit, is closed. The tick never waits on a socket: frames are
 * handed to libuv, or parked, and the tick moves on.
 */
#ifndef SRV_STREAM_H
#define SRV_STREAM_H

#include <stddef.h>
#include <stdint.h>
#include "request.h"

struct srv_connection;
struct srv_crowd;

typedef struct srv_subscription {
  uint64_t id;
  uint64_t *ids;              /* named characters still alive */
  int nids;
  int owned;
  uint32_t rate_divisor;
  srv_encoding_t encoding;
  int global_positions, rotations_only, paused;
  uint64_t dropped;           /* frames replaced before they were sent */
  uint64_t *gone;             /* named characters found gone, reported in the next frame */
  int ngone;
  int fires;                  /* this tick */
  struct srv_actor **resolved; /* this tick: the named characters, resolved on the loop */
  int nresolved;
  uint8_t *encoded;           /* this tick's frame, from the encoding job */
  size_t encoded_len;
  int encoded_poses;
  uint8_t *waiting;           /* the newest frame the socket could not take yet */
  size_t waiting_len;
  struct srv_subscription *next;
} srv_subscription_t;

/* A connection's streams (embedded in the connection). */
typedef struct {
  srv_subscription_t *subscriptions;
  int count;
  uint32_t owned_want;        /* this tick: SRV_WANT_* of the firing owned subscriptions */
  int firing;                 /* this tick: subscriptions that fire */
  uint64_t over_soft_since_ns; /* queued output above the stream soft limit since; 0 when below */
} srv_streams_t;

/* Requests (loop thread, between ticks). subscribe: ANIM_ENOTFOUND names an
 * unknown character, ANIM_ELIMIT too many subscriptions or names. */
int srv_stream_subscribe(struct srv_connection *connection, const srv_subscribe_request_t *request,
                          srv_response_t *response);
int srv_stream_update(struct srv_connection *connection, const srv_subscription_request_t *request,
                       srv_response_t *response);
int srv_stream_unsubscribe(struct srv_connection *connection, const srv_subscription_request_t *request,
                            srv_response_t *response);
/* 1 when a subscription is receiving frames (not paused). */
int srv_streams_active(const srv_streams_t *streams);
/* Frees every subscription and waiting frame of a closing connection. */
void srv_streams_free(srv_streams_t *streams);

/* The tick, loop thread: marks what each actor's pose record must hold this
 * tick and which subscriptions fire; returns how many connections have
 * frames to encode. */
int srv_streams_prepare_tick(struct srv_crowd *crowd, uint64_t tick);
/* Pool thread: encodes the connection's firing subscriptions' frames. */
void srv_streams_encode(struct srv_connection *connection, const struct srv_crowd *crowd, uint64_t tick,
                         double dt);
/* Loop thread: hands the encoded frames to the socket, latest wins. */
void srv_streams_deliver(struct srv_connection *connection);
/* Loop thread: the socket drained; sends waiting frames if there is room. */
void srv_streams_on_drain(struct srv_connection *connection);

#endif
