/*
 * lane.h: short work the loop thread hands to the thread pool, queued
 * behind a few long-lived pool jobs, with ends that never make the loop
 * spin.
 *
 * Why not uv_queue_work per item: each costs a lock, a condition-variable
 * wake-up of a sleeping pool thread and an async send back; for items of
 * microseconds (a batch of searches, a chunk of characters) that hand-off
 * costs as much as the work. Worse, with the libuv this project builds on
 * (Debian 12's 1.44), the loop thread spins, yielding, while a pool thread
 * is inside uv_async_send: a pool thread preempted there (it runs nicer than
 * the loop, --pool-nice) keeps the loop spinning until it gets a core back
 * (measured: a fifth of the loop thread's time under a crowd on a busy
 * 2-core machine; fixed upstream in libuv 1.45, libuv PR #3879).
 *
 * How: items wait in a queue; up to `workers` pool jobs take them, oldest
 * first, while there are any, so a push while a job runs is an append under
 * a lock, and a pool job's own end (libuv's async send) comes once per busy
 * spell instead of once per item. A pool thread that ran an item writes an
 * eventfd the loop watches, once until the loop has read it; the loop then
 * calls the done callback of everything that ran. Nothing waits on anything
 * but the lock around the two lists.
 *
 * With loop_helps, the loop never waits for the lane either: it runs the
 * oldest waiting item itself when more than max_queued wait (the pool is
 * slower, or its thread has no core: on a busy machine a pool thread at a
 * higher nice value may get none for milliseconds), and runs what still
 * waits before it would sleep for I/O when the pool has ended nothing since
 * its last turn. An item runs once, on whichever thread takes it first. Without it (long items the loop must not take),
 * items wait for the pool.
 *
 * Items end on the loop thread (done) in the order they finished: a caller
 * that needs another order keeps it itself. Linux only (eventfd), as the
 * server is (timerfd).
 *
 * What it does not: cancel (an item pushed runs, even at shutdown: the loop
 * runs until the jobs end).
 */
#ifndef SRV_LANE_H
#define SRV_LANE_H

#include <stdatomic.h>
#include <stddef.h>
#include <uv.h>

#define SRV_LANE_MAX_WORKERS 8

typedef struct srv_lane_item srv_lane_item_t;
struct srv_lane_item {
  void (*run)(srv_lane_item_t *item);  /* on a pool thread (or the loop's, with loop_helps) */
  void (*done)(srv_lane_item_t *item); /* on the loop thread, after run */
  srv_lane_item_t *next;               /* the lane's */
};

typedef struct srv_lane_options {
  int workers;       /* pool jobs running items at once, 1..SRV_LANE_MAX_WORKERS */
  int loop_helps;    /* the loop runs waiting items itself (above) */
  size_t max_queued; /* with loop_helps: past this many waiting, a push runs the oldest on the loop */
} srv_lane_options_t;

typedef struct srv_lane {
  uv_loop_t *loop;
  srv_lane_options_t options;
  uv_work_t jobs[SRV_LANE_MAX_WORKERS];
  int job_running[SRV_LANE_MAX_WORKERS]; /* loop thread only */
  int running;                           /* jobs running (loop thread only) */
  uv_poll_t ran_poll;     /* the eventfd: items ran, the loop calls their done */
  int ran_fd;
  atomic_int ran_signaled; /* the eventfd was written and not yet read */
  uv_prepare_t helping;    /* with loop_helps: before the loop sleeps, it runs what waits */
  uv_mutex_t lock;         /* guards the two lists and queued */
  srv_lane_item_t *queued_head, *queued_tail;
  srv_lane_item_t *ran_head, *ran_tail;
  size_t queued;  /* items in the queue, not yet taken */
  int busy;       /* pool jobs running an item */
  size_t pending; /* pushed, done not yet called (loop thread only) */
  unsigned long long run_by_loop, run_by_pool; /* items, loop thread's figures */
  unsigned long long pool_runs_seen; /* run_by_pool at the loop's last turn */
} srv_lane_t;

/* On the loop thread. The handles are unreferenced: the jobs keep the loop
 * alive while items run. 0, ANIM_EINVAL for options out of range, or a
 * libuv error. */
int srv_lane_init(srv_lane_t *lane, uv_loop_t *loop, const srv_lane_options_t *options);

/* On the loop thread: queues item (its run and done set); the lane owns
 * item->next until done is called. 0, or a libuv error when no pool job
 * could start (then done is never called and the item is the caller's). */
int srv_lane_push(srv_lane_t *lane, srv_lane_item_t *item);

/* Items pushed whose done has not run yet (loop thread). */
static inline size_t srv_lane_pending(const srv_lane_t *lane) { return lane->pending; }

/* On the loop thread, with nothing pending: closes the handles (run the
 * loop once more for their close callbacks; the eventfd closes in the
 * last). */
void srv_lane_close(srv_lane_t *lane);

#endif
