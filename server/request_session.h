/*
 * request_session.h: bodies of the session requests: hello, ping,
 * server_stats, shutdown (see request.h).
 *
 * What it does not: check or run them (codec_session.c, service_session.c).
 */
#ifndef SRV_REQUEST_SESSION_H
#define SRV_REQUEST_SESSION_H

#include <stddef.h>
#include <stdint.h>

#define SRV_MAX_CAPABILITIES 32

typedef struct {
  uint32_t protocol_version; /* 0: unspecified */
  const char *client_name;   /* <= 256 bytes */
  const char *auth_token;    /* <= 127 bytes; "" when none */
} srv_hello_request_t;

typedef struct {
  const uint8_t *payload;
  size_t payload_len;
} srv_ping_request_t;

typedef srv_no_body_t srv_server_stats_request_t;
typedef srv_no_body_t srv_shutdown_request_t;

/* Every limit a client can hit, as Hello reports them. */
typedef struct {
  uint32_t max_frame_bytes, max_in_flight, max_batch, max_k, max_pose_frames;
  uint64_t decode_budget_bytes;
  uint64_t output_soft_limit, output_hard_limit, stream_soft_limit;
  uint32_t max_characters;        /* per connection */
  uint32_t max_characters_total;  /* on the server */
  uint32_t max_subscriptions;     /* per connection */
  uint32_t max_ids;               /* characters, placements or inputs per request */
  float tick_rate;
} srv_limits_t;

typedef struct {
  uint32_t protocol_version;
  const char *server_version;
  const char *capabilities[SRV_MAX_CAPABILITIES];
  int ncapabilities;
  srv_limits_t limits;
  uint64_t connection_id;
  int admin;
} srv_hello_response_t;

typedef struct {
  const uint8_t *payload; /* points into the request */
  size_t payload_len;
  uint64_t server_time_us;
} srv_ping_response_t;

typedef struct {
  uint64_t uptime_us;
  uint32_t connections, characters;
  uint64_t requests, errors;
  float tick_rate;
  uint64_t ticks, ticks_late, ticks_skipped;
  uint64_t lateness_p50_us, lateness_p99_us, lateness_max_us, work_p50_us, work_p99_us;
  uint64_t frames_sent, frames_dropped, stream_bytes, poses_sent, slow_subscribers_closed;
  uint64_t physics_resets; /* MODE_PHYSICAL simulations that diverged and were reset */
  double cpu_user_s, cpu_system_s;
  uint64_t rss_bytes, character_bytes, pose_buffer_bytes;
} srv_server_stats_response_t;

typedef srv_no_body_t srv_shutdown_response_t;

#endif
