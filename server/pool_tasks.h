/*
 * pool_tasks.h: a task runner (core/base/task.h) on libuv's thread pool, callable
 * from any thread: the loop thread (before or while the loop runs) or a pool
 * job, such as a database load that builds its search indexes.
 *
 * How: the caller queues helper jobs on the pool (directly on the loop
 * thread; from another thread through an async handle the loop thread
 * answers, since uv_queue_work is loop-thread only), then works through the
 * tasks itself. Every worker takes the next task index from one shared
 * counter, so the caller never waits for a task nobody has started: it waits
 * only for the last tasks helpers are running. With every pool thread busy
 * (or the loop not running yet) helpers start late or never and the caller
 * does all the work; nothing deadlocks.
 *
 * What it does not: decide what the tasks are, or hold a helper past its
 * batch: a helper that starts after the last task was taken ends at once.
 */
#ifndef SRV_POOL_TASKS_H
#define SRV_POOL_TASKS_H

#include <uv.h>
#include "base/task.h"

typedef struct srv_pool_tasks {
  uv_loop_t *loop;
  uv_thread_t loop_thread;
  uv_async_t wake;              /* another thread's batches are waiting in pending */
  uv_mutex_t lock;
  struct srv_task_batch *pending; /* batches whose helpers the loop thread queues next */
  anim_task_runner_t runner;
  int helpers;                  /* pool jobs per batch */
  int closed;
} srv_pool_tasks_t;

/* On the loop thread. threads: how many run a batch at once (the caller plus
 * threads - 1 pool jobs); below 2, batches run on the caller alone. The
 * async handle is unreferenced: it keeps no loop alive. 0 or a libuv error. */
int srv_pool_tasks_init(srv_pool_tasks_t *pool, uv_loop_t *loop, int threads);

/* The runner to hand the core (valid until close). */
const anim_task_runner_t *srv_pool_tasks_runner(srv_pool_tasks_t *pool);

/* On the loop thread, once no batch can start any more: closes the async
 * handle (run the loop once more for its close callback). */
void srv_pool_tasks_close(srv_pool_tasks_t *pool);

#endif
