/*
 * physical_fixture.c: the physical characters' end-to-end tests' shared
 * set-up and watching (physical_fixture.h).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "data_dir.h"
#include "fixture.h"
#include "physical_fixture.h"
#include "shared_data.h"

static anim_database_t db;
static char dir[128];
static int have_db;
int phys_irregular;

int phys_database(void) {
  if (have_db) return 1;
  if (!anim_test_bandai_database(&db)) return 0;
  anim_test_data_dir_make(dir, sizeof dir, "physical");
  anim_test_data_dir_put_database(dir, &db, "bandai");
  have_db = 1;
  return 1;
}

const anim_database_t *phys_db(void) { return &db; }

int phys_teardown(void **state) {
  (void)state;
  if (have_db) anim_test_data_dir_remove(dir), anim_database_free(&db), have_db = 0;
  return 0;
}

void phys_start(anim_test_server_t *server, const char *threads) {
  setenv("UV_THREADPOOL_SIZE", threads, 1);
  const char *args[] = {"--data-dir", dir, "--db", "bandai", "--fixed-step", NULL};
  assert_int_equal(anim_test_server_start(server, "physical", args), 0);
  unsetenv("UV_THREADPOOL_SIZE");
}

uint64_t phys_create(anim_client_t *c, int mode, float total_mass, float x, int n, uint64_t *out_ids) {
  anim_character_mode_t m = {0};
  m.mode = mode, m.total_mass = total_mass;
  anim_character_params_t params;
  anim_character_params_init(&params);
  params.search_interval = 1; /* no stagger by slot: two characters in different slots search alike */
  anim_character_placement_t placements[8];
  assert_true(n >= 1 && n <= 8);
  for (int i = 0; i < n; i++) placements[i] = (anim_character_placement_t){x + 3.0f * (float)i, 0.0f, 0.0f, 0};
  int rc = anim_client_characters_create_mode(c, "bandai", &m, &params, placements, n, out_ids, PHYS_TIMEOUT_MS);
  if (rc) fail_msg("create mode %d: %s", mode, anim_client_last_error(c));
  return out_ids[0];
}

const anim_character_pose_t *phys_pose_of(const anim_stream_frame_t *f, uint64_t id) {
  for (int i = 0; i < f->nposes; i++)
    if (f->poses[i].character == id) return &f->poses[i];
  return NULL;
}

int phys_bone(const char *name) {
  for (int b = 0; b < db.nbones; b++)
    if (!strcmp(db.skeleton.names[b], name)) return b;
  fail_msg("no bone %s", name);
  return -1;
}

void phys_expect_refused(anim_client_t *c, int rc, int code, const char *field) {
  const char *msg = anim_client_last_error(c);
  if (rc != code) fail_msg("expected %s (%d) naming %s, got %d: %s", anim_strerror(code), code, field, rc, msg);
  if (!strstr(msg, field)) fail_msg("the error does not name %s: %s", field, msg);
  printf("  refused: %s\n", msg);
}

void phys_subscribe_owned(anim_client_t *c) {
  anim_subscribe_options_t o = {NULL, 0, 1, 1, ANIM_POSE_FLOAT, 1, 0};
  assert_int_equal(anim_client_subscribe(c, &o, NULL, NULL, NULL, NULL, PHYS_TIMEOUT_MS), 0);
}

/* Reads frames until `ticks` of them held id (any frame when id is 0), or
 * through tick `until` when it is set. */
static void record(anim_client_t *c, uint64_t id, int ticks, uint64_t until, phys_track_t *out, float **bytes,
                   size_t *nbytes) {
  int hips = phys_bone("Hips");
  for (int got = 0, done = 0; !done;) {
    anim_stream_frame_t *f = NULL;
    int rc = anim_client_next_frame(c, &f, PHYS_TIMEOUT_MS);
    if (rc) fail_msg("next_frame: %s", anim_strerror(rc));
    const anim_character_pose_t *p = phys_pose_of(f, id);
    if (fabsf(f->dt - 1.0f / 60.0f) > 1e-5f) phys_irregular++;
    if (p && out && out->n < PHYS_MAX_TICKS) {
      out->tick[out->n] = f->tick, out->physics[out->n] = p->physics;
      out->hips_y[out->n] = p->global_positions ? p->global_positions[3 * hips + 1] : 0.0f;
      out->hips_x[out->n] = p->global_positions ? p->global_positions[3 * hips] : 0.0f;
      out->hips_z[out->n] = p->global_positions ? p->global_positions[3 * hips + 2] : 0.0f;
      out->n++;
    }
    if (bytes && f->nposes) {
      for (int i = 0; i < f->nposes; i++) {
        const anim_character_pose_t *q = &f->poses[i];
        size_t add = 3 * (size_t)q->nbones + 4 * (size_t)q->nbones + 2;
        *bytes = realloc(*bytes, (*nbytes + add) * sizeof **bytes);
        float *w = *bytes + *nbytes;
        memcpy(w, q->positions, 3 * (size_t)q->nbones * sizeof *w);
        memcpy(w + 3 * q->nbones, q->rotations, 4 * (size_t)q->nbones * sizeof *w);
        w[add - 2] = (float)q->physics, w[add - 1] = (float)q->frame;
        *nbytes += add;
      }
    }
    if (p || !id) got++;
    done = until ? f->tick >= until : got >= ticks;
    anim_stream_frame_free(f);
  }
}

void phys_record(anim_client_t *c, uint64_t id, int ticks, phys_track_t *out, float **bytes, size_t *nbytes) {
  if (ticks > 0) record(c, id, ticks, 0, out, bytes, nbytes);
}

void phys_record_until(anim_client_t *c, uint64_t id, uint64_t last, phys_track_t *out) {
  record(c, id, 0, last, out, NULL, NULL);
}

/* The first tick of a stream frame holding id (its first tick: the subscription covers every owned character). */
uint64_t phys_first_tick(anim_client_t *c, uint64_t id) {
  for (;;) {
    anim_stream_frame_t *f = NULL;
    if (anim_client_next_frame(c, &f, PHYS_TIMEOUT_MS)) fail_msg("no frame with character %llu", (unsigned long long)id);
    uint64_t tick = phys_pose_of(f, id) ? f->tick : 0;
    if (tick && fabsf(f->dt - 1.0f / 60.0f) > 1e-5f) phys_irregular++, printf("  first tick %llu: dt %.4f s\n", (unsigned long long)tick, (double)f->dt);
    anim_stream_frame_free(f);
    if (tick) return tick;
  }
}

void phys_print_track(const char *what, const phys_track_t *t, uint64_t push_tick) {
  printf("  %s: hips height (m) every 0.1 s from the push, [state]:", what);
  for (int i = 0; i < t->n; i++)
    if (t->tick[i] >= push_tick && (t->tick[i] - push_tick) % 6 == 0)
      printf(" %.2f[%d]", (double)t->hips_y[i], t->physics[i]);
  printf("\n");
}

phys_watch_t phys_watch(const phys_track_t *t, uint64_t from) {
  phys_watch_t w = {0, 0, 0, -1, -1, 0.0f, 10.0f, 0.0f, 0.0f};
  int start = -1;
  for (int i = 0; i < t->n; i++) {
    if (t->tick[i] < from) {
      w.standing = t->hips_y[i];
      continue;
    }
    if (start < 0) start = i;
    int ticks = (int)(t->tick[i] - from);
    w.powered += t->physics[i] == ANIM_PHYSICS_STATE_POWERED;
    w.fallen += t->physics[i] == ANIM_PHYSICS_STATE_FALLEN;
    w.recovering += t->physics[i] == ANIM_PHYSICS_STATE_RECOVERING;
    if (w.back < 0 && ticks > 0 && t->physics[i] == ANIM_PHYSICS_STATE_KINEMATIC) w.back = ticks;
    if (w.fell < 0 && t->physics[i] == ANIM_PHYSICS_STATE_FALLEN) w.fell = ticks;
    w.lowest = fminf(w.lowest, t->hips_y[i]);
    w.furthest = fmaxf(w.furthest, hypotf(t->hips_x[i] - t->hips_x[start], t->hips_z[i] - t->hips_z[start]));
  }
  if (t->n) w.last = t->hips_y[t->n - 1];
  return w;
}

phys_pushed_t phys_push_and_watch(anim_client_t *c, float mass, float x, anim_push_t *p, int delay, int ticks) {
  phys_pushed_t r = {0, 0, calloc(1, sizeof(phys_track_t))};
  phys_create(c, ANIM_MODE_PHYSICAL, mass, x, 1, &r.id);
  uint64_t created = phys_first_tick(c, r.id);
  phys_record(c, r.id, 60, r.t, NULL, NULL); /* standing 1 s */
  /* The client reads the stream behind the server, by more than the
   * delay's 0.5 s when a loaded machine starves it: a push.tick already
   * past is refused, and then asked again 30 ticks on (the character only
   * stands longer first). */
  p->tick = created + (uint64_t)delay;
  int rc;
  for (int again = 0; (rc = anim_client_push(c, r.id, p, &r.at, PHYS_TIMEOUT_MS)) == ANIM_ERANGE && again < 20; again++) {
    if (!strstr(anim_client_last_error(c), "already past")) break;
    printf("  %s: the push 30 ticks later\n", anim_client_last_error(c));
    p->tick += 30;
  }
  if (rc) fail_msg("push: %s", anim_client_last_error(c));
  assert_true(r.at == p->tick);
  phys_record_until(c, r.id, r.at + (uint64_t)ticks, r.t);
  return r;
}

