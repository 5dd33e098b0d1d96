/*
 * task.h: how the core runs independent pieces of work on several threads
 * without knowing about threads: the caller hands it a runner, a hook that
 * runs n tasks and returns once every one has returned (the server runs them
 * on libuv's pool, the tests and benchmarks on plain pthreads).
 *
 * What it does not: create threads, queue work or wait; with no runner the
 * tasks run one after another on the calling thread, and a result never
 * depends on how they were run (a task writes only what its index owns).
 *
 * Validity rules (a runner handed to the core):
 *  1. threads >= 1 (how many tasks it can run at once; the caller sizes its
 *     split of the work by it);
 *  2. run is non-NULL, runs fn(arg, i) exactly once for every i in [0, n),
 *     in any order on any threads, and returns after all have returned.
 */
#ifndef ANIM_TASK_H
#define ANIM_TASK_H

typedef void (*anim_task_fn)(void *arg, int index);

typedef struct anim_task_runner {
  int threads;
  void (*run)(void *ctx, anim_task_fn fn, void *arg, int n);
  void *ctx;
} anim_task_runner_t;

/* Threads runner stands for: 1 when runner is NULL or breaks rule 1 or 2. */
int anim_task_runner_threads(const anim_task_runner_t *runner);

/* Runs fn(arg, i) for i in [0, n): through runner when it has two threads
 * or more, else in order on the calling thread. Returns when all are done. */
void anim_task_run(const anim_task_runner_t *runner, anim_task_fn fn, void *arg, int n);

#endif
