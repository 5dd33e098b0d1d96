/* pool_tasks.c: a task runner on libuv's pool (see pool_tasks.h). */
#include <stdatomic.h>
#include <stdlib.h>
#include "pool_tasks.h"

#define MAX_HELPERS 16

/* One run: shared by its caller and its helpers; freed by whoever drops the
 * last reference (the caller after its wait, or a helper's after-callback). */
typedef struct srv_task_batch {
  anim_task_fn fn;
  void *arg;
  int n;
  atomic_int next, done, refs;
  uv_mutex_t lock;
  uv_cond_t finished;
  int helpers;
  uv_work_t work[MAX_HELPERS];
  struct srv_task_batch *next_pending;
} srv_task_batch_t;

static void batch_release(srv_task_batch_t *b) {
  if (atomic_fetch_sub(&b->refs, 1) != 1) return;
  uv_cond_destroy(&b->finished);
  uv_mutex_destroy(&b->lock);
  free(b);
}

/* Takes tasks until none is left; signals when it ran the last one. */
static void batch_work(srv_task_batch_t *b) {
  int i;
  while ((i = atomic_fetch_add(&b->next, 1)) < b->n) {
    b->fn(b->arg, i);
    if (atomic_fetch_add(&b->done, 1) + 1 == b->n) {
      uv_mutex_lock(&b->lock);
      uv_cond_signal(&b->finished);
      uv_mutex_unlock(&b->lock);
    }
  }
}

static void helper_run(uv_work_t *work) { batch_work(work->data); }
static void helper_done(uv_work_t *work, int status) { batch_release(work->data); }

/* Loop thread: the batch's helper jobs (each holding a reference). */
static void queue_helpers(uv_loop_t *loop, srv_task_batch_t *b) {
  for (int h = 0; h < b->helpers; h++) {
    b->work[h].data = b;
    atomic_fetch_add(&b->refs, 1);
    if (uv_queue_work(loop, &b->work[h], helper_run, helper_done) != 0) atomic_fetch_sub(&b->refs, 1);
  }
  batch_release(b); /* the reference pending held */
}

/* The pending list, emptied; closing marks the pool so no batch joins it later. */
static srv_task_batch_t *take_pending(srv_pool_tasks_t *pool, int closing) {
  uv_mutex_lock(&pool->lock);
  srv_task_batch_t *list = pool->pending;
  pool->pending = NULL;
  if (closing) pool->closed = 1;
  uv_mutex_unlock(&pool->lock);
  return list;
}

static void on_wake(uv_async_t *handle) {
  srv_pool_tasks_t *pool = handle->data;
  srv_task_batch_t *list = take_pending(pool, 0);
  while (list) {
    srv_task_batch_t *b = list;
    list = b->next_pending;
    queue_helpers(pool->loop, b);
  }
}

static void run(void *ctx, anim_task_fn fn, void *arg, int n) {
  srv_pool_tasks_t *pool = ctx;
  srv_task_batch_t *b = calloc(1, sizeof *b);
  if (!b) {
    for (int i = 0; i < n; i++) fn(arg, i); /* no memory for a batch: the caller alone */
    return;
  }
  b->fn = fn, b->arg = arg, b->n = n;
  b->helpers = pool->helpers < n - 1 ? pool->helpers : n - 1;
  atomic_init(&b->next, 0), atomic_init(&b->done, 0), atomic_init(&b->refs, 2); /* the caller's and pending's */
  uv_mutex_init(&b->lock);
  uv_cond_init(&b->finished);
  uv_thread_t self = uv_thread_self();
  if (uv_thread_equal(&self, &pool->loop_thread)) {
    queue_helpers(pool->loop, b);
  } else {
    /* Sent under the lock: close cannot come between the check and the send. */
    uv_mutex_lock(&pool->lock);
    int closed = pool->closed;
    if (!closed) {
      b->next_pending = pool->pending, pool->pending = b;
      uv_async_send(&pool->wake);
    }
    uv_mutex_unlock(&pool->lock);
    if (closed) atomic_fetch_sub(&b->refs, 1);
  }
  batch_work(b);
  uv_mutex_lock(&b->lock);
  while (atomic_load(&b->done) < n) uv_cond_wait(&b->finished, &b->lock);
  uv_mutex_unlock(&b->lock);
  batch_release(b);
}

int srv_pool_tasks_init(srv_pool_tasks_t *pool, uv_loop_t *loop, int threads) {
  pool->loop = loop;
  pool->loop_thread = uv_thread_self();
  pool->pending = NULL;
  pool->closed = 0;
  pool->helpers = threads < 2 ? 0 : (threads - 1 > MAX_HELPERS ? MAX_HELPERS : threads - 1);
  pool->runner = (anim_task_runner_t){pool->helpers + 1, run, pool};
  int rc = uv_mutex_init(&pool->lock);
  if (rc) return rc;
  if ((rc = uv_async_init(loop, &pool->wake, on_wake))) {
    uv_mutex_destroy(&pool->lock);
    return rc;
  }
  pool->wake.data = pool;
  uv_unref((uv_handle_t *)&pool->wake);
  return 0;
}

const anim_task_runner_t *srv_pool_tasks_runner(srv_pool_tasks_t *pool) { return &pool->runner; }

static void on_closed(uv_handle_t *handle) {
  srv_pool_tasks_t *pool = handle->data;
  uv_mutex_destroy(&pool->lock);
}

void srv_pool_tasks_close(srv_pool_tasks_t *pool) {
  srv_task_batch_t *list = take_pending(pool, 1);
  /* Batches nobody queued helpers for: their callers did the work alone. */
  while (list) {
    srv_task_batch_t *b = list;
    list = b->next_pending;
    batch_release(b);
  }
  uv_close((uv_handle_t *)&pool->wake, on_closed);
}
