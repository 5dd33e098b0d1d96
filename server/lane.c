/* lane.c: one pool job at a time running queued items in order (see lane.h). */
#include "lane.h"

static void append(srv_lane_item_t **head, srv_lane_item_t **tail, srv_lane_item_t *item) {
  item->next = NULL;
  if (*tail) (*tail)->next = item;
  else *head = item;
  *tail = item;
}

/* The oldest queued item, taken out of the queue (any thread), or NULL. */
static srv_lane_item_t *take(srv_lane_t *lane) {
  uv_mutex_lock(&lane->lock);
  srv_lane_item_t *item = lane->queued_head;
  if (item) {
    if (!(lane->queued_head = item->next)) lane->queued_tail = NULL;
    lane->queued--;
  }
  uv_mutex_unlock(&lane->lock);
  return item;
}

/* Pool thread: runs items until the queue is empty. The job's end is seen
 * by the loop thread in job_ended, which starts it again for items pushed
 * after this returned. */
static void job_run(uv_work_t *work) {
  srv_lane_t *lane = work->data;
  srv_lane_item_t *item;
  while ((item = take(lane))) {
    item->run(item);
    uv_mutex_lock(&lane->lock);
    append(&lane->ran_head, &lane->ran_tail, item);
    uv_mutex_unlock(&lane->lock);
    uv_async_send(&lane->ended);
  }
}

/* Loop thread: done for every item the pool thread ran, in order. */
static void deliver(srv_lane_t *lane) {
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

/* Loop thread: runs the oldest queued item here; 0 when none was left. */
static int run_here(srv_lane_t *lane) {
  srv_lane_item_t *item = take(lane);
  if (!item) return 0;
  item->run(item);
  lane->pending--;
  lane->run_by_loop++;
  item->done(item);
  return 1;
}

static void on_ended(uv_async_t *async) { deliver(async->data); }

/* The loop is about to wait for I/O: rather than sleep while items wait for
 * a pool thread that may have no core, it runs them (and what they end). */
static void on_prepare(uv_prepare_t *prepare) {
  srv_lane_t *lane = prepare->data;
  if (lane->pending == 0) return; /* the common case, without the lock */
  while (run_here(lane)) {
  }
  deliver(lane);
}

static void job_ended(uv_work_t *work, int status);

static int job_start(srv_lane_t *lane) {
  int rc = uv_queue_work(lane->loop, &lane->job, job_run, job_ended);
  if (rc == 0) lane->job_running = 1;
  return rc;
}

static void job_ended(uv_work_t *work, int status) {
  srv_lane_t *lane = work->data;
  (void)status; /* never cancelled: the lane does not call uv_cancel */
  lane->job_running = 0;
  deliver(lane);
  uv_mutex_lock(&lane->lock);
  int more = lane->queued > 0;
  uv_mutex_unlock(&lane->lock);
  /* Items pushed after the job found its queue empty (a done above may
   * have started it already). uv_queue_work fails only on bad arguments. */
  if (more && !lane->job_running) job_start(lane);
}

int srv_lane_init(srv_lane_t *lane, uv_loop_t *loop, size_t max_queued) {
  lane->loop = loop;
  lane->job.data = lane;
  lane->queued_head = lane->queued_tail = lane->ran_head = lane->ran_tail = NULL;
  lane->queued = 0;
  lane->max_queued = max_queued;
  lane->job_running = 0;
  lane->pending = 0;
  lane->run_by_loop = lane->run_by_pool = 0;
  int rc = uv_mutex_init(&lane->lock);
  if (rc != 0) return rc;
  if ((rc = uv_async_init(loop, &lane->ended, on_ended)) != 0) {
    uv_mutex_destroy(&lane->lock);
    return rc;
  }
  uv_prepare_init(loop, &lane->helping); /* cannot fail */
  lane->ended.data = lane->helping.data = lane;
  uv_prepare_start(&lane->helping, on_prepare);
  uv_unref((uv_handle_t *)&lane->ended);
  uv_unref((uv_handle_t *)&lane->helping);
  return 0;
}

int srv_lane_push(srv_lane_t *lane, srv_lane_item_t *item) {
  uv_mutex_lock(&lane->lock);
  append(&lane->queued_head, &lane->queued_tail, item);
  size_t queued = ++lane->queued;
  uv_mutex_unlock(&lane->lock);
  int rc;
  if (!lane->job_running && (rc = job_start(lane)) != 0) { /* no job was running: the queue held only this item */
    uv_mutex_lock(&lane->lock);
    lane->queued_head = lane->queued_tail = NULL;
    lane->queued = 0;
    uv_mutex_unlock(&lane->lock);
    return rc;
  }
  lane->pending++;
  if (queued > lane->max_queued) run_here(lane);
  return 0;
}

void srv_lane_close(srv_lane_t *lane) {
  uv_close((uv_handle_t *)&lane->ended, NULL);
  uv_close((uv_handle_t *)&lane->helping, NULL);
  uv_mutex_destroy(&lane->lock);
}
