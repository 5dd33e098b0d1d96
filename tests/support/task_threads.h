/*
 * task_threads.h: a task runner (core/base/task.h) on plain pthreads for the
 * tests and the benchmarks: each run starts threads - 1 helpers, the calling
 * thread works too, and all take task indices from one shared counter.
 *
 * What it does not: keep threads between runs (a build runs a handful of
 * times; the server's runner uses libuv's pool instead).
 */
#ifndef ANIM_TEST_TASK_THREADS_H
#define ANIM_TEST_TASK_THREADS_H

#include "base/task.h"

/* A runner of threads threads (>= 1); nothing to free. */
anim_task_runner_t anim_test_task_runner(int threads);

#endif
