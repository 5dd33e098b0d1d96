/*
 * metrics.h: the server's metrics and the plain-HTTP endpoint that exposes
 * them to Prometheus, load balancers and Kubernetes probes.
 *
 * Counting: srv_metrics_t holds what the server's other counters
 * (counters.h, the crowd, the scheduler) do not already: requests
 * by type, errors by code, and latency and tick histograms. It is updated on
 * the loop thread only, so its fields are plain integers; pool threads never
 * touch it. A scrape reads these and the existing counters on the loop,
 * the lanes' item counts (lane.h) too: a lane counts an item when its done
 * runs, on the loop thread, whichever thread ran it.
 *
 * The endpoint: a small HTTP/1.1 listener on the server's loop, on its own
 * address (config metrics_host:metrics_port; port -1 turns it off, 0 takes
 * an ephemeral port). It reads at most SRV_METRICS_HEAD_MAX bytes of
 * request head, answers one GET and closes (Connection: close):
 *   GET /metrics  Prometheus text exposition format 0.0.4
 *   GET /ready    200 "ready" while the server accepts requests (listening,
 *                 not shutting down, at least one database), else 503
 *   GET /live     200 "live" while the loop runs
 * 404 for another path, 405 for another method, 400 for a malformed head,
 * 431 for a head over the limit. A connection that has not sent a whole head
 * within SRV_METRICS_TIMEOUT_MS is closed, and at most
 * SRV_METRICS_MAX_CONNECTIONS are open at once (more are closed at accept),
 * so the endpoint's memory is bounded. It is not the server's protocol and
 * carries no authentication: bind it to a private address.
 */
#ifndef SRV_METRICS_H
#define SRV_METRICS_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>
#include "anim_error.h"
#include "counters.h"
#include "crowd.h"
#include "lane.h"
#include "registry.h"
#include "request_types.h"

#define SRV_METRICS_HEAD_MAX 4096
#define SRV_METRICS_TIMEOUT_MS 5000
#define SRV_METRICS_MAX_CONNECTIONS 64
/* Upper bounds of the histogram buckets in seconds, 50 us to 2.5 s (+Inf implied). */
#define SRV_METRICS_BUCKETS 16

struct metrics_conn;

typedef struct {
  uint64_t buckets[SRV_METRICS_BUCKETS]; /* per bucket, not cumulative (made so when written) */
  uint64_t count;                         /* includes observations above the last bound */
  double sum;                             /* seconds */
} srv_histogram_t;

/* What a scrape reads besides the metrics' own counts (loop thread). */
typedef struct {
  const srv_counters_t *counters;
  const srv_crowd_t *crowd;
  const srv_registry_t *registry;
  const srv_lane_t *read_lane; /* the read batches' lane (read_batch.h); the crowd's is crowd->lane */
  uint64_t start_ns;
  int (*ready)(void *data); /* what GET /ready answers */
  void *data;
} srv_metrics_source_t;

typedef struct srv_metrics {
  /* By srv_request_type_t; index SRV_REQ_COUNT: frames that did not decode to a request. */
  uint64_t requests[SRV_REQ_COUNT + 1];
  srv_histogram_t latency[SRV_REQ_COUNT + 1];
  /* Index -code for ANIM_E* codes; index 0: a code outside the list. */
  uint64_t errors[1 - ANIM_ERRNO_MIN];
  srv_histogram_t tick_lateness, tick_work;
  /* The endpoint. */
  uv_loop_t *loop;
  srv_metrics_source_t source;
  int listening;
  uv_tcp_t listener;
  char bound_host[64];
  int bound_port;
  struct metrics_conn *conns; /* open HTTP connections, doubly linked */
  uint32_t nconns;
  uint64_t http_requests;
} srv_metrics_t;

/* Adds an observation of seconds to histogram h. */
void srv_histogram_observe(srv_histogram_t *h, double seconds);
/* The bucket bounds, SRV_METRICS_BUCKETS of them, in seconds. */
const double *srv_histogram_bounds(void);

/* A request was answered (its response handed to libuv) at now_ns,
 * received_ns after its frame arrived (srv_scheduler_now_ns clock): the
 * answers of one read, or of one batch, share one clock read. type may be
 * SRV_REQ_COUNT for a frame that did not decode. Loop thread. */
void srv_metrics_request_at(srv_metrics_t *metrics, int type, uint64_t received_ns, uint64_t now_ns);
/* An error response with code went out. Loop thread. */
void srv_metrics_error(srv_metrics_t *metrics, int code);
/* One tick: how late it started and how long from its deadline to done, in ns. */
void srv_metrics_tick(srv_metrics_t *metrics, uint64_t lateness_ns, uint64_t work_ns);

/* Appends the exposition text of every metric to a malloc'd, NUL-terminated
 * buffer (caller frees). NULL when out of memory. Loop thread. */
char *srv_metrics_render(const srv_metrics_t *metrics, size_t *out_len);

/* 1 when the server accepts requests (the source's ready). */
int srv_metrics_ready(const srv_metrics_t *metrics);

/* Keeps source, and listens on host:port when port >= 0 (a no-op
 * otherwise). 0, or ANIM_EINVAL (address) or ANIM_EIO (bind, listen) with a
 * message in err. */
int srv_metrics_start(srv_metrics_t *metrics, uv_loop_t *loop, const char *host, int port,
                      const srv_metrics_source_t *source, char *err, int errlen);

/* Closes the listener and every open HTTP connection; idempotent. */
void srv_metrics_close(srv_metrics_t *metrics);

/* The process's user and system CPU seconds and resident memory in bytes
 * (also reported by the server_stats request). */
void srv_process_usage(double *out_cpu_user_s, double *out_cpu_system_s, uint64_t *out_rss_bytes);

#endif
