/*
 * test_lane.c: the lane (server/lane.h) on a real loop and libuv's pool.
 * Workers out of range first; an idle lane (nothing pending, keeps no loop
 * alive); two workers run two items at once on the pool; every item runs exactly once and ends on the loop
 * thread, in push order while only the pool runs them; with the pool's
 * thread held by an item, a push past max_queued runs the oldest waiting
 * item on the loop at once, and the loop runs the rest rather than sleep;
 * the loop closes cleanly afterwards (uv_loop_close == 0).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <uv.h>
#include "anim_error.h"
#include "server/lane.h"

enum { ITEMS = 300 };

typedef struct {
  srv_lane_item_t item; /* first */
  int index;
  atomic_int runs;
  int ran_on_loop;
  int dones;
  int met; /* test_two_workers_run_at_once: the other item was running too */
} job_t;

static uv_thread_t loop_thread;
static int done_order[ITEMS + 1], ndone;
/* Held by the first item in the helping test until the loop has run the rest. */
static uv_sem_t release, started;
static atomic_int hold_first;

/* The item runs: counted, and on which thread. */
static job_t *note_run(srv_lane_item_t *item) {
  job_t *j = (job_t *)item;
  atomic_fetch_add(&j->runs, 1);
  uv_thread_t self = uv_thread_self();
  j->ran_on_loop = uv_thread_equal(&self, &loop_thread);
  return j;
}

static void work(srv_lane_item_t *item) {
  job_t *j = note_run(item);
  if (j->index == 0 && atomic_load(&hold_first) && !j->ran_on_loop) {
    uv_sem_post(&started);
    uv_sem_wait(&release);
  }
  volatile double x = 0; /* a little work, as a batch of searches is */
  for (int k = 0; k < 2000; k++) x += k * 0.5;
}

static void ended(srv_lane_item_t *item) {
  job_t *j = (job_t *)item;
  uv_thread_t self = uv_thread_self();
  assert_true(uv_thread_equal(&self, &loop_thread));
  j->dones++;
  done_order[ndone++] = j->index;
}

static job_t jobs[ITEMS];

static void jobs_reset(void) {
  memset(jobs, 0, sizeof jobs);
  for (int i = 0; i < ITEMS; i++) jobs[i].index = i, jobs[i].item.run = work, jobs[i].item.done = ended;
  ndone = 0;
  loop_thread = uv_thread_self();
}

/* A loop of its own and a lane on it with these options. */
static void open_lane(uv_loop_t *loop, srv_lane_t *lane, srv_lane_options_t options) {
  assert_int_equal(uv_loop_init(loop), 0);
  assert_int_equal(srv_lane_init(lane, loop, &options), 0);
}

static void close_lane(uv_loop_t *loop, srv_lane_t *lane) {
  srv_lane_close(lane);
  uv_run(loop, UV_RUN_DEFAULT);
  assert_int_equal(uv_loop_close(loop), 0);
}

static void expect_each_once(int n) {
  for (int i = 0; i < n; i++) {
    if (atomic_load(&jobs[i].runs) != 1) fail_msg("item %d ran %d times", i, atomic_load(&jobs[i].runs));
    if (jobs[i].dones != 1) fail_msg("item %d ended %d times", i, jobs[i].dones);
  }
  assert_int_equal(ndone, n);
}

static void test_workers_out_of_range(void **state) {
  (void)state;
  uv_loop_t loop;
  uv_loop_init(&loop);
  srv_lane_t lane;
  assert_int_equal(srv_lane_init(&lane, &loop, &(srv_lane_options_t){0, 0, 0}), ANIM_EINVAL);
  assert_int_equal(srv_lane_init(&lane, &loop, &(srv_lane_options_t){SRV_LANE_MAX_WORKERS + 1, 0, 0}), ANIM_EINVAL);
  assert_int_equal(uv_loop_close(&loop), 0); /* nothing was left open */
}

static void test_idle_lane_closes_cleanly(void **state) {
  (void)state;
  /* Nothing pushed: no job, nothing pending, and its handles keep no loop alive. */
  uv_loop_t loop;
  srv_lane_t lane;
  open_lane(&loop, &lane, (srv_lane_options_t){1, 1, 4});
  assert_int_equal(srv_lane_pending(&lane), 0);
  assert_int_equal(uv_run(&loop, UV_RUN_NOWAIT), 0);
  close_lane(&loop, &lane);
}

static void test_every_item_once_in_order(void **state) {
  (void)state;
  uv_loop_t loop;
  srv_lane_t lane;
  /* max_queued above ITEMS: no push runs an item on the loop; the loop runs
   * some only before it sleeps while the pool has ended none. */
  open_lane(&loop, &lane, (srv_lane_options_t){1, 1, ITEMS + 1});
  jobs_reset();
  for (int i = 0; i < ITEMS; i++) assert_int_equal(srv_lane_push(&lane, &jobs[i].item), 0);
  assert_int_equal(srv_lane_pending(&lane), ITEMS);
  uv_run(&loop, UV_RUN_DEFAULT);
  expect_each_once(ITEMS);
  assert_int_equal(srv_lane_pending(&lane), 0);
  /* Items the pool ran end in push order; the loop runs what waits when it
   * would sleep, so some may have run there: those end at once. */
  int last = -1;
  for (int k = 0; k < ndone; k++) {
    int i = done_order[k];
    if (jobs[i].ran_on_loop) continue;
    if (i < last) fail_msg("item %d ended after item %d though pushed before it", i, last);
    last = i;
  }
  assert_int_equal(lane.run_by_loop + lane.run_by_pool, ITEMS);
  close_lane(&loop, &lane);
}

/* Two workers, the loop not helping: items run on two pool threads at
 * once (each waits for the other to start before it ends), none on the loop. */
static atomic_int meeting;
static void meet(srv_lane_item_t *item) {
  job_t *j = note_run(item);
  atomic_fetch_add(&meeting, 1);
  uint64_t give_up = uv_hrtime() + 5000000000ull; /* one worker would wait here alone */
  while (atomic_load(&meeting) < 2 && uv_hrtime() < give_up) {
  }
  j->met = atomic_load(&meeting) >= 2;
}

static void test_two_workers_run_at_once(void **state) {
  (void)state;
  uv_loop_t loop;
  srv_lane_t lane;
  open_lane(&loop, &lane, (srv_lane_options_t){2, 0, 0});
  jobs_reset();
  atomic_store(&meeting, 0);
  for (int i = 0; i < 2; i++) jobs[i].item.run = meet;
  for (int i = 0; i < 2; i++) assert_int_equal(srv_lane_push(&lane, &jobs[i].item), 0);
  uv_run(&loop, UV_RUN_DEFAULT);
  expect_each_once(2);
  assert_int_equal(atomic_load(&meeting), 2);
  for (int i = 0; i < 2; i++) {
    assert_false(jobs[i].ran_on_loop);
    if (!jobs[i].met) fail_msg("item %d ran alone: the two workers did not run at once", i);
  }
  assert_int_equal(lane.run_by_pool, 2);
  close_lane(&loop, &lane);
}

static void on_timer(uv_timer_t *t) {
  if (atomic_exchange(&hold_first, 0)) uv_sem_post(&release);
  uv_close((uv_handle_t *)t, NULL);
}

static void test_loop_helps_when_pool_is_held(void **state) {
  (void)state;
  enum { MAX_QUEUED = 3, PUSHED = 10 };
  uv_loop_t loop;
  srv_lane_t lane;
  open_lane(&loop, &lane, (srv_lane_options_t){1, 1, MAX_QUEUED});
  jobs_reset();
  uv_sem_init(&release, 0);
  uv_sem_init(&started, 0);
  atomic_store(&hold_first, 1);
  assert_int_equal(srv_lane_push(&lane, &jobs[0].item), 0);
  uv_sem_wait(&started); /* the pool thread holds item 0 now */
  for (int i = 1; i < PUSHED; i++) {
    assert_int_equal(srv_lane_push(&lane, &jobs[i].item), 0);
    /* Past MAX_QUEUED waiting, each push ran the oldest waiting on the loop. */
    if (i > MAX_QUEUED) assert_int_equal(atomic_load(&jobs[i - MAX_QUEUED].runs), 1);
  }
  for (int i = 1; i <= PUSHED - 1 - MAX_QUEUED; i++) {
    assert_true(jobs[i].ran_on_loop);
    assert_int_equal(jobs[i].dones, 1); /* ended at once */
  }
  /* Item 0 is let go only after a while: by then the loop has run the rest
   * instead of sleeping on the held pool thread. */
  uv_timer_t timer;
  uv_timer_init(&loop, &timer);
  uv_timer_start(&timer, on_timer, 50, 0);
  uv_run(&loop, UV_RUN_DEFAULT);
  expect_each_once(PUSHED);
  assert_false(jobs[0].ran_on_loop);
  for (int i = 1; i < PUSHED; i++)
    if (!jobs[i].ran_on_loop) fail_msg("item %d waited for the held pool thread instead of running on the loop", i);
  assert_int_equal(done_order[PUSHED - 1], 0); /* the held one ends last */
  close_lane(&loop, &lane);
}

/* A failed check must not leave the pool thread held: exit would wait for it. */
static int let_go(void **state) {
  (void)state;
  if (atomic_exchange(&hold_first, 0)) uv_sem_post(&release);
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_workers_out_of_range),
      cmocka_unit_test(test_idle_lane_closes_cleanly),
      cmocka_unit_test(test_two_workers_run_at_once),
      cmocka_unit_test(test_every_item_once_in_order),
      cmocka_unit_test_teardown(test_loop_helps_when_pool_is_held, let_go),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
