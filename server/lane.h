/*
 * lane.h: work the loop thread hands to one pool thread at a time, in order.
 *
 * uv_queue_work costs a lock, a condition-variable wake-up of a sleeping
 * pool thread and an async send back per item; for items of a few
 * microseconds (a batch of searches) that hand-off costs as much as the
 * work. A lane queues items behind one pool job that runs them one after
 * the other while there are any: pushing onto a lane whose job is running
 * is an append under a lock, and each item's end is one uv_async_send,
 * which libuv coalesces while the loop is busy. Items end on the loop
 * thread (their done callback): those the pool thread ran in the order
 * they were pushed, one the loop runs itself (below) at once, so a caller
 * that needs an order keeps it itself.
 *
 * One job at a time keeps the lane's work on at most one core, so the loop
 * thread keeps the other for its own (reads, decoding, writes). The loop
 * never waits for the lane: it runs queued items itself, oldest first,
 * when more than max_queued wait (the pool thread is slower, or has no
 * core: on a busy machine a pool thread at a higher nice value may get
 * none for milliseconds) and before it would sleep waiting for I/O. An item
 * runs once, on whichever thread takes it first.
 *
 * What it does not: cancel (an item pushed runs, even at shutdown: the loop
 * runs until the job ends), or run items concurrently.
 */
#ifndef SRV_LANE_H
#define SRV_LANE_H

#include <stddef.h>
#include <uv.h>

typedef struct srv_lane_item srv_lane_item_t;
struct srv_lane_item {
  void (*run)(srv_lane_item_t *item);  /* on the lane's pool thread */
  void (*done)(srv_lane_item_t *item); /* on the loop thread, after run */
  srv_lane_item_t *next;               /* the lane's */
};

typedef struct srv_lane {
  uv_loop_t *loop;
  uv_work_t job;
  uv_async_t ended;      /* items ran: the loop thread calls their done */
  uv_prepare_t helping;  /* before the loop sleeps, it runs what still waits */
  uv_mutex_t lock;       /* guards the two lists and queued */
  srv_lane_item_t *queued_head, *queued_tail;
  srv_lane_item_t *ran_head, *ran_tail;
  size_t queued;         /* items in the queue, not yet taken */
  size_t max_queued;
  int job_running;       /* loop thread only */
  size_t pending;        /* pushed, done not yet called (loop thread only) */
  unsigned long long run_by_loop, run_by_pool; /* items, loop thread's figures */
} srv_lane_t;

/* On the loop thread. max_queued: past it, a push runs the oldest item on
 * the loop first. The handles are unreferenced: the job keeps the loop
 * alive while items run. 0 or a libuv error. */
int srv_lane_init(srv_lane_t *lane, uv_loop_t *loop, size_t max_queued);

/* On the loop thread: queues item (its run and done set); the lane owns
 * item->next until done is called. 0, or a libuv error (then done is never
 * called and the item is the caller's again). */
int srv_lane_push(srv_lane_t *lane, srv_lane_item_t *item);

/* Items pushed whose done has not run yet (loop thread). */
static inline size_t srv_lane_pending(const srv_lane_t *lane) { return lane->pending; }

/* On the loop thread, with nothing pending: closes the handles (run the
 * loop once more for their close callbacks). */
void srv_lane_close(srv_lane_t *lane);

#endif
