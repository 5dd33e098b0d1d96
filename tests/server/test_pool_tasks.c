/*
 * test_pool_tasks.c: the task runner on libuv's pool. Invalid use first (a
 * runner of one thread runs on the caller alone); then batches run from the
 * loop thread before the loop runs, from pool jobs (through the async
 * handle, while the loop runs), several at once, each task exactly once;
 * a k-d tree built through it answers like brute force; the loop closes
 * cleanly afterwards (uv_loop_close == 0).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <uv.h>
#include "server/pool_tasks.h"
#include "search/search.h"

enum { TASKS = 200 };

typedef struct {
  atomic_int runs[TASKS];
  uv_thread_t thread[TASKS];
} tally_t;

static void count_task(void *arg, int i) {
  tally_t *t = arg;
  atomic_fetch_add(&t->runs[i], 1);
  t->thread[i] = uv_thread_self();
  /* A little work, so helpers get a share. */
  volatile double x = 0;
  for (int k = 0; k < 20000; k++) x += k * 0.5;
}

static void expect_each_once(tally_t *t, int n) {
  for (int i = 0; i < n; i++)
    if (atomic_load(&t->runs[i]) != 1) fail_msg("task %d ran %d times", i, atomic_load(&t->runs[i]));
}

static void close_pool(uv_loop_t *loop, srv_pool_tasks_t *pool) {
  srv_pool_tasks_close(pool);
  uv_run(loop, UV_RUN_DEFAULT);
  assert_int_equal(uv_loop_close(loop), 0);
}

static void test_one_thread_runs_on_caller(void **state) {
  uv_loop_t loop;
  uv_loop_init(&loop);
  srv_pool_tasks_t pool;
  assert_int_equal(srv_pool_tasks_init(&pool, &loop, 1), 0);
  const anim_task_runner_t *runner = srv_pool_tasks_runner(&pool);
  assert_int_equal(anim_task_runner_threads(runner), 1);
  static tally_t t;
  memset(&t, 0, sizeof t);
  anim_task_run(runner, count_task, &t, TASKS);
  expect_each_once(&t, TASKS);
  uv_thread_t self = uv_thread_self();
  for (int i = 0; i < TASKS; i++) assert_true(uv_thread_equal(&t.thread[i], &self));
  close_pool(&loop, &pool);
}

/* On the loop thread before the loop runs: helpers run on the pool all the
 * same (only their after-callbacks wait for the loop). */
static void test_loop_thread_before_run(void **state) {
  uv_loop_t loop;
  uv_loop_init(&loop);
  srv_pool_tasks_t pool;
  assert_int_equal(srv_pool_tasks_init(&pool, &loop, 2), 0);
  static tally_t t;
  memset(&t, 0, sizeof t);
  anim_task_run(srv_pool_tasks_runner(&pool), count_task, &t, TASKS);
  expect_each_once(&t, TASKS);
  uv_run(&loop, UV_RUN_DEFAULT); /* the helpers' after-callbacks free the batch */
  close_pool(&loop, &pool);
}

typedef struct {
  uv_work_t work;
  const anim_task_runner_t *runner;
  tally_t tally;
} job_t;

static void job_run(uv_work_t *w) {
  job_t *job = w->data;
  anim_task_run(job->runner, count_task, &job->tally, TASKS);
}
static void job_done(uv_work_t *w, int status) { assert_int_equal(status, 0); }

/* From pool jobs while the loop runs, three batches at once: helpers come
 * through the async handle; each batch's tasks run once. */
static void test_from_pool_jobs(void **state) {
  uv_loop_t loop;
  uv_loop_init(&loop);
  srv_pool_tasks_t pool;
  assert_int_equal(srv_pool_tasks_init(&pool, &loop, 3), 0);
  static job_t jobs[3];
  memset(jobs, 0, sizeof jobs);
  for (int j = 0; j < 3; j++) {
    jobs[j].work.data = &jobs[j];
    jobs[j].runner = srv_pool_tasks_runner(&pool);
    assert_int_equal(uv_queue_work(&loop, &jobs[j].work, job_run, job_done), 0);
  }
  uv_run(&loop, UV_RUN_DEFAULT);
  for (int j = 0; j < 3; j++) expect_each_once(&jobs[j].tally, TASKS);
  close_pool(&loop, &pool);
}

/* A k-d tree built through the pool answers bit for bit like brute force. */
static void test_index_built_on_pool(void **state) {
  uv_loop_t loop;
  uv_loop_init(&loop);
  srv_pool_tasks_t pool;
  assert_int_equal(srv_pool_tasks_init(&pool, &loop, 2), 0);
  enum { ROWS = 70000, COLS = 27 }; /* past the size the tree builds in parallel from */
  float *x = malloc((size_t)ROWS * COLS * sizeof *x);
  unsigned seed = 3;
  for (int i = 0; i < ROWS * COLS; i++) x[i] = (float)rand_r(&seed) / (float)RAND_MAX;
  anim_range_t range = {0, ROWS, 1, "all"};
  anim_search_data_t data = {x, ROWS, COLS, &range, 1};
  char err[128];
  anim_search_index_t *fast =
      anim_search_index_build_parallel(ANIM_SEARCH_FAST, &data, srv_pool_tasks_runner(&pool), err, sizeof err);
  anim_search_index_t *brute = anim_search_index_build(ANIM_SEARCH_BRUTE, &data, err, sizeof err);
  assert_non_null(fast);
  assert_non_null(brute);
  for (int i = 0; i < 300; i++) {
    anim_search_query_t q = {x + (size_t)(i * 61) * COLS, 3, i % 2 ? i * 61 : -1, 0.1f, 0, 10, 0};
    anim_search_hit_t a[3], b[3];
    int na, nb;
    assert_int_equal(anim_search_run(fast, &q, a, &na, NULL), 0);
    assert_int_equal(anim_search_run(brute, &q, b, &nb, NULL), 0);
    assert_int_equal(na, nb);
    for (int h = 0; h < na; h++)
      if (a[h].frame != b[h].frame || a[h].cost != b[h].cost)
        fail_msg("query %d hit %d: frame %d cost %.9g, brute force %d %.9g", i, h, a[h].frame, a[h].cost, b[h].frame,
                 b[h].cost);
  }
  anim_search_index_free(fast);
  anim_search_index_free(brute);
  free(x);
  uv_run(&loop, UV_RUN_DEFAULT);
  close_pool(&loop, &pool);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_one_thread_runs_on_caller),
      cmocka_unit_test(test_loop_thread_before_run),
      cmocka_unit_test(test_from_pool_jobs),
      cmocka_unit_test(test_index_built_on_pool),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
