/*
 * test_scheduler.c: the fixed-rate tick on a real libuv loop: every deadline
 * is either served or counted as skipped, simulated time equals the time
 * between deadlines (no drift), a stalled tick is caught up in one step with
 * the elapsed time as dt (or, with fixed_step, every deadline served in
 * turn with one period's dt), and a stopped scheduler stays quiet.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "server/scheduler.h"

typedef struct {
  srv_scheduler_t scheduler;
  uv_timer_t stop_timer;
  int ticks, stall_at, stall_ms;
  int fixed_step, gaps; /* gaps: ticks whose index is not the last + 1 */
  uint64_t first, last;
  uint64_t stop_due_ms, stop_late_ms; /* the loop's clock when the stop is due; how late its timer fired */
  double dt_sum, dt_after_stall;
  int stopped_ticks;
} run_t;

static void on_tick(srv_scheduler_t *s, uint64_t tick, double dt) {
  run_t *r = s->data;
  if (r->ticks == 0) r->first = tick;
  else assert_true(tick > r->last);
  if (r->ticks && tick != r->last + 1) r->gaps++;
  if (r->ticks == r->stall_at) r->dt_after_stall = dt; /* the tick after the stalled one */
  r->ticks++;
  r->last = tick;
  r->dt_sum += dt;
  if (r->ticks == r->stall_at) usleep((useconds_t)r->stall_ms * 1000u); /* a tick whose work overruns */
  srv_scheduler_tick_done(s);
}

static void on_stop(uv_timer_t *t) {
  run_t *r = t->data;
  uint64_t now = uv_now(t->loop);
  r->stop_late_ms = now > r->stop_due_ms ? now - r->stop_due_ms : 0;
  srv_scheduler_close(&r->scheduler);
  uv_close((uv_handle_t *)t, NULL);
}

static void run_for(run_t *r, double rate, int ms) {
  uv_loop_t loop;
  assert_int_equal(uv_loop_init(&loop), 0);
  assert_int_equal(srv_scheduler_init(&r->scheduler, &loop, rate, on_tick, r), 0);
  r->scheduler.fixed_step = r->fixed_step;
  uv_timer_init(&loop, &r->stop_timer);
  r->stop_timer.data = r;
  uv_update_time(&loop);
  r->stop_due_ms = uv_now(&loop) + (uint64_t)ms;
  uv_timer_start(&r->stop_timer, on_stop, (uint64_t)ms, 0);
  srv_scheduler_start(&r->scheduler);
  uv_run(&loop, UV_RUN_DEFAULT);
  assert_int_equal(uv_loop_close(&loop), 0); /* every handle closed */
}

static void test_every_deadline_accounted_for(void **state) {
  run_t r;
  memset(&r, 0, sizeof r);
  r.stall_at = -10;
  run_for(&r, 60.0, 1000);
  srv_scheduler_stats_t st;
  srv_scheduler_stats(&r.scheduler, &st);
  printf("60 Hz for 1 s: %d ticks, %llu skipped, lateness p50 %llu us p99 %llu us\n", r.ticks,
         (unsigned long long)st.skipped, (unsigned long long)(st.lateness_p50_ns / 1000),
         (unsigned long long)(st.lateness_p99_ns / 1000));
  /* The first deadline served is the first, unless a loaded machine ran
   * the loop after it had passed: then those before were skipped. Served
   * plus skipped is every deadline up to the last either way. */
  assert_true(r.first >= 1 && r.first - 1 <= st.skipped);
  assert_int_equal((uint64_t)r.ticks + st.skipped, r.last);
  /* Simulated time is exactly the time between deadlines: no drift. */
  assert_float_equal(r.dt_sum, (double)r.last / 60.0, 1e-9);
  /* One second holds 60 deadlines; the last may fall just after the stop,
   * or (the stop's timer late on a loaded machine) a few after it. */
  assert_in_range(r.last, 59, 60 + (uint64_t)(r.stop_late_ms * 60 / 1000) + 1);
}

static void test_stall_is_caught_up_in_one_step(void **state) {
  run_t r;
  memset(&r, 0, sizeof r);
  r.stall_at = 5;
  r.stall_ms = 200; /* 12 periods at 60 Hz */
  run_for(&r, 60.0, 600);
  srv_scheduler_stats_t st;
  srv_scheduler_stats(&r.scheduler, &st);
  printf("a 200 ms stall: next dt %.4f s, %llu deadlines skipped\n", r.dt_after_stall, (unsigned long long)st.skipped);
  assert_true(st.skipped >= 11);
  assert_true(r.dt_after_stall >= 12.0 / 60.0 - 1e-9);
  assert_true(r.dt_after_stall <= 0.25 + 1e-9); /* max_dt */
  assert_int_equal((uint64_t)r.ticks + st.skipped, r.last);
  assert_true(st.late >= 1);
  assert_true(st.lateness_max_ns >= 150000000u);
}

/* --fixed-step: the same stall, and no deadline is skipped or folded:
 * every tick has the next index and one period's dt; the ones that passed
 * during the stall run back to back. */
static void test_fixed_step_serves_every_deadline(void **state) {
  run_t r;
  memset(&r, 0, sizeof r);
  r.stall_at = 5;
  r.stall_ms = 200;
  r.fixed_step = 1;
  run_for(&r, 60.0, 600);
  srv_scheduler_stats_t st;
  srv_scheduler_stats(&r.scheduler, &st);
  printf("a 200 ms stall with fixed_step: next dt %.4f s, %d ticks up to %llu, %llu skipped, %llu late\n",
         r.dt_after_stall, r.ticks, (unsigned long long)r.last, (unsigned long long)st.skipped,
         (unsigned long long)st.late);
  assert_int_equal(st.skipped, 0);
  assert_int_equal(r.gaps, 0);
  assert_int_equal((uint64_t)r.ticks, r.last - r.first + 1);
  assert_float_equal(r.dt_after_stall, 1.0 / 60.0, 1e-12);
  assert_float_equal(r.dt_sum, (double)r.ticks / 60.0, 1e-9);
  assert_true(st.late >= 11); /* the ones served late, back to back */
  assert_in_range(r.last, 20, 36); /* 36 deadlines in 600 ms; a loaded machine may lag */
}

/* A tick at a rate that is no whole number of milliseconds keeps its count. */
static void test_odd_rate(void **state) {
  run_t r;
  memset(&r, 0, sizeof r);
  r.stall_at = -10;
  run_for(&r, 144.0, 500);
  srv_scheduler_stats_t st;
  srv_scheduler_stats(&r.scheduler, &st);
  assert_int_equal((uint64_t)r.ticks + st.skipped, r.last);
  assert_in_range(r.last, 71, 72);
  assert_float_equal(r.dt_sum, (double)r.last / 144.0, 1e-9);
}

static void stop_now(uv_timer_t *t) {
  run_t *r = t->data;
  srv_scheduler_stop(&r->scheduler);
  r->stopped_ticks = r->ticks;
  uv_close((uv_handle_t *)t, NULL);
}

static void test_stopped_scheduler_is_quiet(void **state) {
  run_t r;
  memset(&r, 0, sizeof r);
  r.stall_at = -10;
  uv_loop_t loop;
  uv_timer_t stop;
  assert_int_equal(uv_loop_init(&loop), 0);
  assert_int_equal(srv_scheduler_init(&r.scheduler, &loop, 60.0, on_tick, &r), 0);
  uv_timer_init(&loop, &stop);
  stop.data = &r;
  uv_timer_start(&stop, stop_now, 100, 0);
  uv_timer_init(&loop, &r.stop_timer);
  r.stop_timer.data = &r;
  uv_timer_start(&r.stop_timer, on_stop, 300, 0);
  srv_scheduler_start(&r.scheduler);
  uv_run(&loop, UV_RUN_DEFAULT);
  assert_int_equal(uv_loop_close(&loop), 0);
  assert_true(r.stopped_ticks >= 4);
  assert_int_equal(r.ticks, r.stopped_ticks); /* nothing after the stop */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_deadline_accounted_for),
      cmocka_unit_test(test_stall_is_caught_up_in_one_step),
      cmocka_unit_test(test_fixed_step_serves_every_deadline),
      cmocka_unit_test(test_odd_rate),
      cmocka_unit_test(test_stopped_scheduler_is_quiet),
  };
  return cmocka_run_group_tests_name("scheduler", tests, NULL, NULL);
}
