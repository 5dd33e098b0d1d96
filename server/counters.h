/*
 * counters.h: the server's running totals, counted on the loop thread by
 * whoever sees the event (connections, the dispatcher, streams) and read by
 * server_stats and the metrics endpoint. Plain integers: pool threads never
 * touch them.
 */
#ifndef SRV_COUNTERS_H
#define SRV_COUNTERS_H

#include <stdint.h>

typedef struct {
  uint64_t connections_accepted, connections_refused;
  uint32_t connections;            /* open now */
  uint64_t requests, errors, frames_rejected;
  uint64_t frames_sent, frames_dropped, stream_bytes, poses_sent, slow_subscribers_closed;
  uint64_t auth_failures, idle_closed, output_limit_closed;
  uint64_t output_bytes;           /* queued and held for every connection now */
  uint64_t output_bytes_peak;
  /* Batches of the searches pipelined in one read (dispatch.c): handed to
   * the read_batches lane, or searched on the loop at once; the searches
   * they answered, and of those the ones the batch decoded itself. */
  uint64_t read_batches_lane, read_batches_loop, read_batch_searches, read_batch_decoded;
} srv_counters_t;

#endif
