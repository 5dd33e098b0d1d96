/*
 * scheduler.h: a fixed-rate tick on the event loop, without drift.
 *
 * Deadline n is start + (n - base) * period on the monotonic clock, in
 * nanoseconds (base: the last index served before this start, so indices,
 * the tick numbers clients see, only grow for the life of the scheduler),
 * armed as an absolute time on a timerfd that a uv_poll_t watches: a
 * repeating millisecond timer would round 16.667 ms to whole milliseconds
 * and add each wake-up's lateness to the next, so it drifts; absolute
 * deadlines do not.
 *
 * The tick's work runs elsewhere (the thread pool): the owner calls
 * srv_scheduler_tick_done when it is finished, and no tick starts while one
 * is in flight. Catch-up policy: a tick whose deadline has passed starts at
 * once. When a tick starts after later deadlines have also passed (work that
 * took longer than a period, a stalled loop), those deadlines are not
 * replayed one by one: they are counted as skipped and this one tick
 * advances the simulation by the whole time since the last (dt = n periods,
 * at most max_dt), so simulated time keeps up with wall time and the crowd
 * degrades to a lower tick rate instead of falling ever further behind.
 * With fixed_step set (--fixed-step) every deadline is served in turn
 * instead, each tick one period's dt, back to back while behind: nothing
 * is skipped or folded, so the same requests at the same ticks give the
 * same simulation whatever the machine's load, and a server that stays
 * behind runs slower than wall time.
 * Lateness (start minus the earliest deadline not yet served) and work time
 * (the served deadline to done) of the last SRV_SCHEDULER_WINDOW ticks are
 * kept for percentiles.
 */
#ifndef SRV_SCHEDULER_H
#define SRV_SCHEDULER_H

#include <stdint.h>
#include <uv.h>

#define SRV_SCHEDULER_WINDOW 4096

struct srv_scheduler;

/* tick: the index of the deadline being served; dt: seconds to simulate. */
typedef void (*srv_tick_cb)(struct srv_scheduler *scheduler, uint64_t tick, double dt);

typedef struct {
  uint64_t ticks, late, skipped;
  uint64_t lateness_p50_ns, lateness_p99_ns, lateness_max_ns;
  uint64_t work_p50_ns, work_p99_ns;
} srv_scheduler_stats_t;

typedef struct srv_scheduler {
  uv_poll_t poll;
  int fd;             /* timerfd, CLOCK_MONOTONIC */
  uint64_t period_ns;       /* rounded, for thresholds */
  double period_exact_ns;
  double max_dt;      /* seconds */
  int fixed_step;     /* 1: serve every deadline in turn, dt one period (set after init) */
  uint64_t start_ns;  /* deadline 0 */
  uint64_t base;      /* the index deadline start_ns has (indices continue across restarts) */
  uint64_t next;      /* the next deadline's index */
  uint64_t current;   /* the index of the tick in flight */
  int running, busy, closed;
  srv_tick_cb cb;
  void *data;
  uint64_t ticks, late, skipped, lateness_max_ns;
  uint64_t last_lateness_ns, last_work_ns; /* of the last tick done, for histograms */
  uint32_t lateness_us[SRV_SCHEDULER_WINDOW], work_us[SRV_SCHEDULER_WINDOW];
} srv_scheduler_t;

/* The monotonic clock in nanoseconds (the one deadlines are on). */
uint64_t srv_scheduler_now_ns(void);

/* Sets up a stopped scheduler at rate Hz. 0 or a negative code (timerfd). */
int srv_scheduler_init(srv_scheduler_t *scheduler, uv_loop_t *loop, double rate, srv_tick_cb cb, void *data);
/* Starts ticking: deadline 1 is one period from now. No-op when running. */
void srv_scheduler_start(srv_scheduler_t *scheduler);
/* Stops after the tick in flight, if any (an idle server does not wake up). */
void srv_scheduler_stop(srv_scheduler_t *scheduler);
/* The tick in flight is finished: records its work time, arms the next deadline. */
void srv_scheduler_tick_done(srv_scheduler_t *scheduler);
/* Closes the handle (the loop can then end) and the timerfd. */
void srv_scheduler_close(srv_scheduler_t *scheduler);
void srv_scheduler_stats(const srv_scheduler_t *scheduler, srv_scheduler_stats_t *out_stats);

#endif
