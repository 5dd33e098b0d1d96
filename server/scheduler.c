/* scheduler.c: drift-free fixed-rate ticks on a timerfd (see scheduler.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include "anim_error.h"
#include "scheduler.h"

uint64_t srv_scheduler_now_ns(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

/* In double: 1e9 / 60 is not a whole number of nanoseconds, and rounding the
 * period would drift by a third of a nanosecond a tick. */
/* Deadline index is start_ns + (index - base) periods: after a restart the
 * indices go on from where they stopped, so tick numbers never go back. */
static uint64_t deadline_of(const srv_scheduler_t *s, uint64_t index) {
  return s->start_ns + (uint64_t)llround((double)(index - s->base) * s->period_exact_ns);
}

/* The newest deadline at or before now. */
static uint64_t due_at(const srv_scheduler_t *s, uint64_t now) {
  uint64_t due = s->base + (uint64_t)((double)(now - s->start_ns) / s->period_exact_ns);
  while (deadline_of(s, due + 1) <= now) due++;
  while (due > s->base && deadline_of(s, due) > now) due--;
  return due;
}

static void arm(srv_scheduler_t *s, uint64_t at_ns) {
  struct itimerspec spec;
  memset(&spec, 0, sizeof spec);
  /* 0 would disarm: a deadline at the clock's origin is "now" anyway. */
  if (at_ns == 0) at_ns = 1;
  spec.it_value.tv_sec = (time_t)(at_ns / 1000000000u);
  spec.it_value.tv_nsec = (long)(at_ns % 1000000000u);
  timerfd_settime(s->fd, TFD_TIMER_ABSTIME, &spec, NULL);
}

static void disarm(srv_scheduler_t *s) {
  struct itimerspec spec;
  memset(&spec, 0, sizeof spec);
  timerfd_settime(s->fd, 0, &spec, NULL);
}

static void record(uint32_t *window, uint64_t index, uint64_t ns) {
  uint64_t us = ns / 1000u;
  window[index % SRV_SCHEDULER_WINDOW] = us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
}

static void start_tick(srv_scheduler_t *s, uint64_t now) {
  if (now < deadline_of(s, s->next)) { /* woken early (or re-armed): wait for the deadline */
    arm(s, deadline_of(s, s->next));
    return;
  }
  /* Fixed step: the earliest deadline not served, whatever has passed since. */
  uint64_t due = s->fixed_step ? s->next : due_at(s, now);
  uint64_t periods = due - s->current;               /* since the last tick's deadline */
  s->skipped += due - s->next;
  /* Late against the earliest deadline not yet served: a stall shows. */
  uint64_t lateness = now - deadline_of(s, s->next);
  if (lateness > s->period_ns / 10) s->late++;
  if (lateness > s->lateness_max_ns) s->lateness_max_ns = lateness;
  record(s->lateness_us, s->ticks, lateness);
  s->last_lateness_ns = lateness;
  s->current = due;
  s->next = due + 1;
  s->busy = 1;
  double dt = (double)periods * s->period_exact_ns * 1e-9;
  if (dt > s->max_dt) dt = s->max_dt;
  s->cb(s, due, dt);
}

static void on_timer(uv_poll_t *handle, int status, int events) {
  srv_scheduler_t *s = handle->data;
  uint64_t expirations;
  while (read(s->fd, &expirations, sizeof expirations) < 0 && errno == EINTR) {
  }
  if (!s->running || s->busy) return; /* tick_done arms again */
  start_tick(s, srv_scheduler_now_ns());
}

int srv_scheduler_init(srv_scheduler_t *s, uv_loop_t *loop, double rate, srv_tick_cb cb, void *data) {
  memset(s, 0, sizeof *s);
  s->fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  if (s->fd < 0) return ANIM_EIO;
  int rc = uv_poll_init(loop, &s->poll, s->fd);
  if (rc < 0) {
    close(s->fd);
    return ANIM_EIO;
  }
  s->poll.data = s;
  s->period_exact_ns = 1e9 / rate;
  s->period_ns = (uint64_t)(s->period_exact_ns + 0.5);
  s->max_dt = 0.25;
  s->cb = cb;
  s->data = data;
  return 0;
}

void srv_scheduler_start(srv_scheduler_t *s) {
  if (s->running || s->closed) return;
  s->running = 1;
  s->start_ns = srv_scheduler_now_ns();
  s->base = s->current; /* the last index served (0 before the first start) */
  s->next = s->current + 1;
  if (!s->busy) arm(s, deadline_of(s, s->next));
  uv_poll_start(&s->poll, UV_READABLE, on_timer);
}

void srv_scheduler_stop(srv_scheduler_t *s) {
  if (!s->running) return;
  s->running = 0;
  disarm(s);
  uv_poll_stop(&s->poll);
}

void srv_scheduler_tick_done(srv_scheduler_t *s) {
  if (!s->busy) return;
  s->busy = 0;
  uint64_t now = srv_scheduler_now_ns();
  s->last_work_ns = now - deadline_of(s, s->current);
  record(s->work_us, s->ticks, s->last_work_ns);
  s->ticks++;
  if (!s->running || s->closed) return;
  /* A deadline already past fires at once: the timerfd reports it on the next poll. */
  arm(s, deadline_of(s, s->next));
}

static void on_close(uv_handle_t *handle) {
  srv_scheduler_t *s = handle->data;
  close(s->fd);
  s->fd = -1;
}

void srv_scheduler_close(srv_scheduler_t *s) {
  if (s->closed) return;
  srv_scheduler_stop(s);
  s->closed = 1;
  uv_close((uv_handle_t *)&s->poll, on_close);
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

static void percentiles(const uint32_t *window, uint64_t n, uint64_t *out_p50_ns, uint64_t *out_p99_ns) {
  *out_p50_ns = *out_p99_ns = 0;
  if (n == 0) return;
  if (n > SRV_SCHEDULER_WINDOW) n = SRV_SCHEDULER_WINDOW;
  uint32_t *sorted = malloc(n * sizeof *sorted);
  if (!sorted) return;
  memcpy(sorted, window, n * sizeof *sorted);
  qsort(sorted, n, sizeof *sorted, cmp_u32);
  *out_p50_ns = (uint64_t)sorted[(n - 1) / 2] * 1000u;
  *out_p99_ns = (uint64_t)sorted[(n - 1) * 99 / 100] * 1000u;
  free(sorted);
}

void srv_scheduler_stats(const srv_scheduler_t *s, srv_scheduler_stats_t *out) {
  memset(out, 0, sizeof *out);
  out->ticks = s->ticks;
  out->late = s->late;
  out->skipped = s->skipped;
  out->lateness_max_ns = s->lateness_max_ns;
  percentiles(s->lateness_us, s->ticks + (uint64_t)s->busy, &out->lateness_p50_ns, &out->lateness_p99_ns);
  percentiles(s->work_us, s->ticks, &out->work_p50_ns, &out->work_p99_ns);
}
