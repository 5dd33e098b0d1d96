/*
 * anim_client_admin.h: the server's counters and its shutdown (part of the
 * client library; include anim_client.h).
 *
 * Database administration (load, reload, unload) is in
 * anim_client_database.h; who may do what is the server's auth token's
 * business (anim_client_options_t.auth_token).
 */
#ifndef ANIM_CLIENT_ADMIN_H
#define ANIM_CLIENT_ADMIN_H

#include "anim_client_session.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  uint64_t uptime_us;
  uint32_t connections, characters;
  uint64_t requests, errors;
  float tick_rate;
  uint64_t ticks, ticks_late, ticks_skipped;
  uint64_t lateness_p50_us, lateness_p99_us, lateness_max_us, tick_work_p50_us, tick_work_p99_us;
  uint64_t frames_sent, frames_dropped, stream_bytes, poses_sent, slow_subscribers_closed;
  double cpu_user_s, cpu_system_s;
  uint64_t rss_bytes;
  uint64_t character_bytes;   /* held by all live characters, every kind (ServerStatsResponse) */
  uint64_t pose_buffer_bytes; /* one motion-matching character's pose buffers on the default database */
  uint64_t physics_resets;    /* PHYSICAL characters' simulations that diverged and were reset to kinematic */
} anim_server_stats_t;

typedef void (*anim_server_stats_cb)(anim_client_t *client, uint64_t id, int status, const anim_server_stats_t *stats,
                                     void *data);

int anim_client_server_stats(anim_client_t *client, anim_server_stats_t *out_stats, int timeout_ms);
int anim_client_server_stats_send(anim_client_t *client, anim_server_stats_cb cb, void *data, uint64_t *out_id);

/* Asks the server to shut down gracefully (an admin request: ANIM_EPERM
 * without the admin token). 0 once the server has acknowledged it. */
int anim_client_shutdown(anim_client_t *client, int timeout_ms);
int anim_client_shutdown_send(anim_client_t *client, anim_status_cb cb, void *data, uint64_t *out_id);

#ifdef __cplusplus
}
#endif
#endif
