/* lane.c: queued items run by a few pool jobs, ends through an eventfd (see lane.h). */
#include <errno.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include "anim_error.h"
#include "lane.h"

static void append(srv_lane_item_t **head, srv_lane_item_t **tail, srv_lane_item_t *item) {
  item->next = NULL;
  if (*tail) (*tail)->next = item;
  else *head = item;
  *tail = item;
}

/* The oldest queued item, taken out of the queue (any thread), or NULL;
 * by a pool job (busy set), counted as running until ran() says it ended. */
static srv_lane_item_t *take(srv_lane_t *lane, int busy) {
  uv_mutex_lock(&lane->lock);
  srv_lane_item_t *item = lane->queued_head;
  if (item) {
    if (!(lane->queued_head = item->next)) lane->queued_tail = NULL;
    lane->queued--;
    lane->busy += busy;
  }
  uv_mutex_unlock(&lane->lock);
  return item;
}

/* Pool thread: the item ran. The eventfd is written only when the loop has
 * read the last write: the loop clears the flag before it takes the list,
 * so an item appended after that sees it clear and writes again. */
static void ran(srv_lane_t *lane, srv_lane_item_t *item) {
  uv_mutex_lock(&lane->lock);
  append(&lane->ran_head, &lane->ran_tail, item);
  lane->busy--;
  uv_mutex_unlock(&lane->lock);
  if (!atomic_exchange(&lane->ran_signaled, 1)) {
    uint64_t one = 1;
    while (write(lane->ran_fd, &one, sizeof one) < 0 && errno == EINTR) {
    }
  }
}

/* Pool thread: runs items until the queue is empty. The job's end is seen
 * by the loop thread in job_ended, which starts it again for items pushed
 * after this returned. */
static void job_run(uv_work_t *work) {
  srv_lane_t *lane = work->data;
  srv_lane_item_t *item;
  while ((item = take(lane, 1))) {
    item->run(item);
    ran(lane, item);
  }
}

/* Loop thread: done for every item the pool ran, in the order they ended. */
static void deliver(srv_lane_t *lane) {
  atomic_store(&lane->ran_signaled, 0);
  uv_mutex_lock(&lane->lock);
  srv_lane_item_t *item = lane->ran_head;
  lane->ran_head = lane->ran_tail = NULL;
  uv_mutex_unlock(&lane->lock);
  while (item) {
    srv_lane_item_t *next = item->next;
    lane->pending--;
    lane->run_by_pool++;
    item->done(item); /* may push again */
    item = next;
  }
}

static void on_ran(uv_poll_t *poll, int status, int events) {
  srv_lane_t *lane = poll->data;
  uint64_t count;
  (void)status, (void)events;
  while (read(lane->ran_fd, &count, sizeof count) < 0 && errno == EINTR) {
  }
  deliver(lane);
}

/* Loop thread: runs the oldest queued item here; 0 when none was left. */
static int run_here(srv_lane_t *lane) {
  srv_lane_item_t *item = take(lane, 0);
  if (!item) return 0;
  item->run(item);
  lane->pending--;
  lane->run_by_loop++;
  item->done(item);
  return 1;
}

/* The loop is about to wait for I/O. While the pool has ended items since
 * the loop's last turn, it is keeping up: the loop leaves it the queue (and
 * reads what came in). When it ended none, its thread has no core or is on
 * a long item: rather than sleep while items wait, the loop runs them (and
 * what they end). Taking the queue every turn measured 25-35% slower under
 * pipelined searches on 2 cores: the loop searched what the pool thread
 * would have, and read less. */
static void on_prepare(uv_prepare_t *prepare) {
  srv_lane_t *lane = prepare->data;
  if (lane->pending == 0) return; /* the common case, without the lock */
  if (lane->run_by_pool != lane->pool_runs_seen) {
    lane->pool_runs_seen = lane->run_by_pool;
    return;
  }
  while (run_here(lane)) {
  }
}

static void job_ended(uv_work_t *work, int status);

/* Starts pool jobs while fewer than the workers run and more items wait
 * than running jobs are free to take (queued, busy: as counted under the
 * lock just before). */
static int jobs_start(srv_lane_t *lane, size_t queued, int busy) {
  int rc = 0;
  for (int i = 0; i < lane->options.workers && (size_t)(lane->running - busy) < queued; i++) {
    if (lane->job_running[i]) continue;
    if ((rc = uv_queue_work(lane->loop, &lane->jobs[i], job_run, job_ended)) != 0) break;
    lane->job_running[i] = 1;
    lane->running++;
  }
  return lane->running > 0 ? 0 : rc;
}

static void job_ended(uv_work_t *work, int status) {
  srv_lane_t *lane = work->data;
  (void)status; /* never cancelled: the lane does not call uv_cancel */
  lane->job_running[work - lane->jobs] = 0;
  lane->running--;
  deliver(lane);
  /* Items pushed after the job found its queue empty. */
  uv_mutex_lock(&lane->lock);
  size_t queued = lane->queued;
  int busy = lane->busy;
  uv_mutex_unlock(&lane->lock);
  jobs_start(lane, queued, busy);
}

int srv_lane_init(srv_lane_t *lane, uv_loop_t *loop, const srv_lane_options_t *options) {
  if (options->workers < 1 || options->workers > SRV_LANE_MAX_WORKERS) return ANIM_EINVAL;
  *lane = (srv_lane_t){.loop = loop, .options = *options, .ran_fd = -1};
  for (int i = 0; i < SRV_LANE_MAX_WORKERS; i++) lane->jobs[i].data = lane;
  atomic_init(&lane->ran_signaled, 0);
  int rc = uv_mutex_init(&lane->lock);
  if (rc != 0) return rc;
  if ((lane->ran_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0) {
    rc = uv_translate_sys_error(errno);
  } else if ((rc = uv_poll_init(loop, &lane->ran_poll, lane->ran_fd)) != 0) {
    close(lane->ran_fd);
  }
  if (rc != 0) {
    uv_mutex_destroy(&lane->lock);
    return rc;
  }
  lane->ran_poll.data = lane;
  uv_poll_start(&lane->ran_poll, UV_READABLE, on_ran);
  uv_unref((uv_handle_t *)&lane->ran_poll);
  uv_prepare_init(loop, &lane->helping); /* cannot fail */
  lane->helping.data = lane;
  if (options->loop_helps) uv_prepare_start(&lane->helping, on_prepare);
  uv_unref((uv_handle_t *)&lane->helping);
  return 0;
}

int srv_lane_push(srv_lane_t *lane, srv_lane_item_t *item) {
  uv_mutex_lock(&lane->lock);
  append(&lane->queued_head, &lane->queued_tail, item);
  size_t queued = ++lane->queued;
  int busy = lane->busy;
  uv_mutex_unlock(&lane->lock);
  int rc = jobs_start(lane, queued, busy);
  if (rc != 0) { /* no job is running: the queue held only this item */
    uv_mutex_lock(&lane->lock);
    lane->queued_head = lane->queued_tail = NULL;
    lane->queued = 0;
    uv_mutex_unlock(&lane->lock);
    return rc;
  }
  lane->pending++;
  if (lane->options.loop_helps && queued > lane->options.max_queued) run_here(lane);
  return 0;
}

static void on_poll_closed(uv_handle_t *handle) {
  srv_lane_t *lane = handle->data;
  close(lane->ran_fd);
  lane->ran_fd = -1;
}

void srv_lane_close(srv_lane_t *lane) {
  uv_close((uv_handle_t *)&lane->ran_poll, on_poll_closed);
  uv_close((uv_handle_t *)&lane->helping, NULL);
  uv_mutex_destroy(&lane->lock);
}
