/* warp_measure.c: the runs of warp_measure.h. */
#include <math.h>
#include <string.h>
#include "anim_error.h"
#include "warp_measure.h"

#define DT (1.0f / 60.0f)

float anim_warp_data_fastest(const anim_database_t *db) {
  int window = (int)(db->frame_rate + 0.5f);
  float fastest = 0.0f;
  for (int r = 0; r < db->nranges; r++)
    for (int f = db->ranges[r].start; f + window < db->ranges[r].stop; f += 5) {
      vec3 a = db->global_positions[(size_t)f * (size_t)db->nbones];
      vec3 b = db->global_positions[(size_t)(f + window) * (size_t)db->nbones];
      float speed = sqrtf((b.x - a.x) * (b.x - a.x) + (b.z - a.z) * (b.z - a.z)) * db->frame_rate / (float)window;
      if (speed > fastest) fastest = speed;
    }
  return fastest;
}

typedef struct {
  anim_controller_t c;
  anim_quality_meter_t meter;
  anim_quality_tick_cb cb;
  void *ctx;
} run_t;

static int run_start(run_t *r, const anim_database_t *db, const anim_search_index_t *index,
                     const anim_controller_params_t *params, anim_quality_tick_cb cb, void *ctx) {
  r->cb = cb, r->ctx = ctx;
  int rc = anim_controller_init(&r->c, db, index, params, vec3_zero(), 0.0f, 0);
  if (rc) return rc;
  if (anim_quality_meter_init(&r->meter, db)) return anim_controller_free(&r->c), ANIM_ENOMEM;
  return 0;
}

/* Asks for velocity (m/s, world) facing +Z, ticks once and meters the frame. */
static int run_tick(run_t *r, vec3 velocity) {
  anim_controller_input_t in;
  memset(&in, 0, sizeof in);
  in.kind = ANIM_INPUT_VELOCITY, in.velocity = velocity, in.facing = 0.0f;
  int rc = anim_controller_set_input(&r->c, &in);
  if (!rc) rc = anim_controller_tick(&r->c, DT);
  if (rc) return rc;
  anim_controller_global_pose(&r->c);
  uint32_t contacts = anim_controller_contacts(&r->c);
  anim_quality_meter_frame(&r->meter, r->c.global_positions, contacts, (long)anim_database_contacts(r->c.db, r->c.frame),
                           DT);
  if (r->cb) r->cb(r->ctx, &r->c, contacts);
  return 0;
}

static void run_end(run_t *r, anim_warp_result_t *out) {
  anim_quality_meter_result(&r->meter, &out->q);
  anim_quality_meter_free(&r->meter);
  anim_controller_free(&r->c);
}

static vec3 root_of(const run_t *r) { return r->c.pose_positions[0]; }

/* The play rate of the frame shown (1 where the controller has none). */
static float rate_of(const run_t *r) {
  return (r->c.warp.params.rate ? r->c.warp.rate : 1.0f) * r->c.warp.settle;
}

/* Straight ahead or at an angle: the window's travel and transitions. */
static int travel_run(const anim_database_t *db, const anim_search_index_t *index,
                      const anim_controller_params_t *params, float angle, float speed, float seconds,
                      anim_warp_result_t *out, anim_quality_tick_cb cb, void *ctx) {
  memset(out, 0, sizeof *out);
  run_t r;
  int rc = run_start(&r, db, index, params, cb, ctx);
  if (rc) return rc;
  int ticks = (int)(seconds * 60.0f + 0.5f), half = ticks / 2;
  vec3 velocity = vec3_make(speed * sinf(angle), 0.0f, speed * cosf(angle)), from = vec3_zero();
  uint64_t transitions = 0;
  double rate_sum = 0.0;
  for (int t = 0; t < ticks && !rc; t++) {
    if (t == half) from = root_of(&r), transitions = r.c.transitions;
    rc = run_tick(&r, velocity);
    if (t >= half) rate_sum += rate_of(&r);
    if (t >= half && r.c.transitioned && (r.c.search_reasons & ANIM_CONTROLLER_SEARCH_RANGE_END)) out->forced++;
  }
  vec3 d = vec3_sub(root_of(&r), from);
  float window = (float)(ticks - half) * DT;
  out->achieved_speed = sqrtf(d.x * d.x + d.z * d.z) / window;
  out->transitions_per_s = (float)(r.c.transitions - transitions) / window;
  float error = atan2f(d.x, d.z) - angle;
  while (error > (float)M_PI) error -= 2.0f * (float)M_PI;
  while (error < -(float)M_PI) error += 2.0f * (float)M_PI;
  /* Standing still or crawling is no direction at all: counted as square off. */
  out->direction_error = out->achieved_speed < 0.25f * speed ? 0.5f * (float)M_PI : fabsf(error);
  out->rate_mean = (float)(rate_sum / (double)(ticks - half));
  run_end(&r, out);
  return rc;
}

int anim_warp_measure_speed(const anim_database_t *db, const anim_search_index_t *index,
                            const anim_controller_params_t *params, float speed, float seconds,
                            anim_warp_result_t *out, anim_quality_tick_cb cb, void *ctx) {
  return travel_run(db, index, params, 0.0f, speed, seconds, out, cb, ctx);
}

int anim_warp_measure_direction(const anim_database_t *db, const anim_search_index_t *index,
                                const anim_controller_params_t *params, float angle, float speed, float seconds,
                                anim_warp_result_t *out, anim_quality_tick_cb cb, void *ctx) {
  return travel_run(db, index, params, angle, speed, seconds, out, cb, ctx);
}

int anim_warp_measure_stand(const anim_database_t *db, const anim_search_index_t *index,
                            const anim_controller_params_t *params, float speed, anim_warp_result_t *out,
                            anim_quality_tick_cb cb, void *ctx) {
  memset(out, 0, sizeof *out);
  run_t r;
  int rc = run_start(&r, db, index, params, cb, ctx);
  if (rc) return rc;
  enum { WALK = 4 * 60, STAND = 12 * 60, WINDOW = 6 };
  vec3 trail[WINDOW];
  float last_moving = 0.0f;
  for (int t = 0; t < WALK + STAND && !rc; t++) {
    int standing = t >= WALK;
    rc = run_tick(&r, standing ? vec3_zero() : vec3_make(0.0f, 0.0f, speed));
    vec3 p = root_of(&r), old = trail[t % WINDOW];
    trail[t % WINDOW] = p;
    if (!standing || t < WINDOW) continue;
    float since = (float)(t + 1 - WALK) * DT;
    float moved = sqrtf((p.x - old.x) * (p.x - old.x) + (p.z - old.z) * (p.z - old.z));
    if (moved / ((float)WINDOW * DT) > 0.1f) last_moving = since;
    if (since > 2.0f) {
      vec3 q = trail[(t + WINDOW - 1) % WINDOW];
      out->drift += sqrtf((p.x - q.x) * (p.x - q.x) + (p.z - q.z) * (p.z - q.z));
    }
  }
  out->rest_time = last_moving;
  out->rate_mean = rate_of(&r);
  run_end(&r, out);
  return rc;
}
