/* task_threads.c: a pthread task runner (see task_threads.h). */
#include <pthread.h>
#include <stdatomic.h>
#include "task_threads.h"

#define MAX_HELPERS 63

typedef struct {
  anim_task_fn fn;
  void *arg;
  int n;
  atomic_int next;
} batch_t;

static void *work(void *p) {
  batch_t *b = p;
  for (int i; (i = atomic_fetch_add(&b->next, 1)) < b->n;) b->fn(b->arg, i);
  return NULL;
}

static void run(void *ctx, anim_task_fn fn, void *arg, int n) {
  int helpers = (int)(long)ctx - 1;
  if (helpers > MAX_HELPERS) helpers = MAX_HELPERS;
  batch_t b = {fn, arg, n, 0};
  pthread_t threads[MAX_HELPERS];
  int started = 0;
  for (; started < helpers && started < n - 1; started++)
    if (pthread_create(&threads[started], NULL, work, &b) != 0) break; /* fewer helpers: the caller does more */
  work(&b);
  for (int i = 0; i < started; i++) pthread_join(threads[i], NULL);
}

anim_task_runner_t anim_test_task_runner(int threads) {
  anim_task_runner_t r = {threads < 1 ? 1 : threads, run, (void *)(long)(threads < 1 ? 1 : threads)};
  return r;
}
