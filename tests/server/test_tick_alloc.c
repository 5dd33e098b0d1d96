/*
 * test_tick_alloc.c: the server allocates nothing per tick in steady state.
 *
 * The real server runs in this process (srv_server_start on an ephemeral
 * loopback port, its loop on this thread, its thread pool as usual); a
 * client thread creates 1,000 characters on the default database, sends
 * them walking, subscribes to them (all of them quantized every third tick,
 * 50 of them as floats with global positions every tick, 50 others
 * replicated (warping: the records carry the play rate and angle), so
 * every record and every encoder is used; the level of detail on, so the
 * rest search less and skip foot locking) and reads every frame: a reader that keeps
 * up, which is what steady state means (one that falls behind by more than
 * a subscription's three buffers makes the server allocate a new one). Beside them run 50
 * characters of an action state machine changing state every second
 * (their state paths streamed) and 50 on a motion graph, each following a
 * circle (planning as it goes), made on the server before the client
 * starts and streamed as floats, and (with the shared networks; under CI
 * always) 50 learned characters walking in circles, ticked as one batch;
 * and 20 physical characters (MODE_PHYSICAL) walking, pushed at ticks
 * named inside the counted window (moderate impulses, forces for 0.3 s,
 * hard impulses that make them fall, lie and get up, one arm weakened for
 * 0.3 s), so their bodies step, fall, recover by inertialization and go
 * kinematic again within it (their bodies are made by the first push,
 * before the window). Two
 * region subscriptions watch the walkers fan out (a circle with three bands
 * and a cap of 300, and a box following one walker), so the grid is built,
 * queried, capped, banded and members enter and leave every tick; the circle is watched a second time
 * replicated, so its bands' records carry the ticks they skipped (each character's ring of records is
 * made when that subscription is, not per tick). HISTORIES of the walkers keep a history
 * (set_history: 5 s, 16 candidates a search, so the ring wraps in the window and each search runs again for its
 * candidates), the others none: a history allocates when turned on, never per tick, and one off costs
 * nothing. After a warm-up, every allocation the server
 * makes on any of its threads is counted over 600 ticks: simulation, searches, plans, records, encoding, delivery and
 * writes must reuse what earlier ticks grew.
 *
 * Counting: tests/support/alloc_counter.h (libuv's and protobuf-c's
 * allocations count too). The client thread marks itself and is not
 * counted.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "alloc_counter.h"
#include "anim_client.h"
#include "inprocess_server.h"
#include "learned/lmm.h"
#include "offline/lmm_database.h"
#include "offline/procgen.h"
#include "shared_data.h"
#include "server/actor_graph.h"
#include "server/graphs.h"
#include "server/server.h"

#define CHARACTERS 1000
#define PHYSICAL 20
#define OTHERS 50 /* machine characters, and graph characters */
#define HISTORIES 20 /* walkers with a history on */
#define WARMUP_TICKS 120
#define COUNTED_TICKS 600
#define TIMEOUT_MS 20000

static srv_server_t server;
static uv_loop_t loop;
static _Atomic int client_ready, client_stop, client_failed;
static const char *_Atomic client_failed_at; /* the client's step that failed */
static _Atomic long frames_read;
static uint64_t other_ids[2 * OTHERS];
static uint64_t window_start_tick;
static long counted;
static srv_crowd_hooks_t original;

/* ---- the client ------------------------------------------------------------------------- */

static void on_frame(anim_client_t *client, const anim_stream_frame_t *frame, void *data) { frames_read++; }

/* The physical characters' states seen (by ANIM_PHYSICS_STATE_*), to show they reacted. */
static _Atomic long physical_states[6];
static void on_physical(anim_client_t *client, const anim_stream_frame_t *frame, void *data) {
  frames_read++;
  for (int i = 0; i < frame->nposes; i++)
    if (frame->poses[i].physics >= 0 && frame->poses[i].physics < 6) physical_states[frame->poses[i].physics]++;
}

/* The physical characters: walking, each pushed twice at ticks inside the
 * counted window (it opens WARMUP_TICKS after the client is ready), with
 * each pushed character's first push (which makes its body) now. 0 or -1. */
static int push_physical(anim_client_t *c) {
  static uint64_t ids[PHYSICAL];
  anim_character_mode_t mode = {0};
  mode.mode = ANIM_MODE_PHYSICAL;
  anim_character_placement_t at[PHYSICAL];
  anim_character_input_t in[PHYSICAL];
  for (int i = 0; i < PHYSICAL; i++) {
    at[i] = (anim_character_placement_t){-30.0f + 3.0f * (float)i, -30.0f, 0.0f, -1};
    anim_character_input_stick(&in[i], 0.2f, 0.6f, 0.0f, 0);
  }
  uint64_t now = 0;
  if (anim_client_characters_create_mode(c, "default", &mode, NULL, at, PHYSICAL, ids, TIMEOUT_MS) != 0 ||
      anim_client_characters_set_input(c, ids, in, PHYSICAL, &now, TIMEOUT_MS) != 0)
    return -1;
  anim_subscribe_options_t watch = {ids, PHYSICAL, 0, 1, ANIM_POSE_QUANTIZED, 0, 0};
  if (anim_client_subscribe(c, &watch, on_physical, NULL, NULL, NULL, TIMEOUT_MS) != 0) return -1;
  anim_body_part_t arm;
  anim_body_part_init(&arm);
  arm.bone = "LeftArm", arm.descendants = 1, arm.mode = ANIM_BODY_LIMP, arm.duration = 0.3f;
  for (int i = 0; i < PHYSICAL; i++) {
    anim_push_t p;
    anim_push_init(&p);
    p.bone = "Chest", p.point[1] = 0.05f;
    /* Twice each, inside the window: a moderate shove, then every fourth a hard one (fall, lie 2 s, get up). */
    for (int k = 0; k < 2; k++) {
      p.tick = now + WARMUP_TICKS + 60 + (uint64_t)(i * 7) + (uint64_t)k * 260;
      p.is_force = i % 3 == 1;
      p.impulse[0] = (i % 4 == 0 && k == 0) ? 300.0f : 40.0f;
      p.force[2] = 300.0f, p.duration = 0.3f;
      if (anim_client_push(c, ids[i], &p, NULL, TIMEOUT_MS) != 0) return -1;
    }
    if (i % 5 == 2 && anim_client_set_body_modes(c, ids[i], &arm, 1, NULL, 0, NULL, TIMEOUT_MS) != 0) return -1;
  }
  return 0;
}

static void *client_main(void *arg) {
  anim_alloc_not_counted = 1;
  int err;
  anim_client_t *c = anim_client_connect("127.0.0.1", server.bound_port, NULL, &err);
  static uint64_t ids[CHARACTERS];
  static anim_character_input_t inputs[CHARACTERS];
  anim_subscribe_options_t quantized = {NULL, 0, 1, 3, ANIM_POSE_QUANTIZED, 0, 0};
  anim_subscribe_options_t floats = {ids, 50, 0, 1, ANIM_POSE_FLOAT, 1, 0};
  anim_subscribe_options_t replicated = {ids + 50, 50, 0, 1, ANIM_POSE_REPLICATED, 0, 0};
  anim_subscribe_options_t others = {other_ids, 2 * OTHERS, 0, 1, ANIM_POSE_FLOAT, 1, 0};
  anim_region_band_t bands[] = {{4.0f, 1}, {8.0f, 4}, {12.0f, 15}};
  anim_region_t near = {0.0f, 10.0f, 12.0f, 0.0f, 0.0f, 0, bands, 3, 300};
  anim_region_t around = {0.0f, 0.0f, 0.0f, 6.0f, 4.0f, 0, NULL, 0, 0};
  anim_subscribe_options_t region_near = {NULL, 0, 0, 0, ANIM_POSE_QUANTIZED, 0, 0};
  anim_subscribe_options_t region_around = {NULL, 0, 0, 1, ANIM_POSE_FLOAT, 0, 0};
  anim_subscribe_options_t region_replicated = {NULL, 0, 0, 0, ANIM_POSE_REPLICATED, 0, 0};
  if (!c || anim_client_characters_create(c, "default", NULL, NULL, CHARACTERS, ids, TIMEOUT_MS) != 0) {
    client_failed_at = "connect or create_characters";
    client_failed = 1;
    return NULL;
  }
  for (int i = 0; i < CHARACTERS; i++)
    anim_character_input_goal(&inputs[i], (float)(i % 40) * 5.0f - 100.0f, 80.0f, 1.4f);
  for (int i = 0; i < HISTORIES; i++)
    if (anim_client_history_set(c, ids[i * (CHARACTERS / HISTORIES)], 5.0f, 16, NULL, TIMEOUT_MS) != 0) {
      client_failed_at = "set_history";
      client_failed = 1;
      anim_client_close(c);
      return NULL;
    }
  if (anim_client_characters_set_input(c, ids, inputs, CHARACTERS, NULL, TIMEOUT_MS) != 0 ||
      anim_client_subscribe(c, &quantized, on_frame, NULL, NULL, NULL, TIMEOUT_MS) != 0 ||
      anim_client_subscribe(c, &floats, on_frame, NULL, NULL, NULL, TIMEOUT_MS) != 0 ||
      anim_client_subscribe(c, &replicated, on_frame, NULL, NULL, NULL, TIMEOUT_MS) != 0 ||
      anim_client_subscribe(c, &others, on_frame, NULL, NULL, NULL, TIMEOUT_MS) != 0 ||
      anim_client_subscribe_region(c, &region_near, &near, on_frame, NULL, NULL, NULL, TIMEOUT_MS) != 0 ||
      anim_client_subscribe_region(c, &region_replicated, &near, on_frame, NULL, NULL, NULL, TIMEOUT_MS) != 0 ||
      (around.follow = ids[0],
       anim_client_subscribe_region(c, &region_around, &around, on_frame, NULL, NULL, NULL, TIMEOUT_MS)) != 0) {
    client_failed_at = "set_inputs or a subscription";
    client_failed = 1;
    anim_client_close(c);
    return NULL;
  }
  if (push_physical(c)) {
    client_failed_at = "the physical characters' set-up and pushes";
    client_failed = 1;
    anim_client_close(c);
    return NULL;
  }
  client_ready = 1;
  while (!client_stop) {
    int rc = anim_client_poll(c, 50);
    if (rc != 0 && rc != ANIM_ETIMEDOUT) {
      if (!client_stop) { client_failed_at = anim_strerror(rc); client_failed = 1; } /* the server closes it when it stops */
      break;
    }
  }
  anim_client_close(c);
  return NULL;
}

/* ---- the server side: counting between ticks ------------------------------------------------ */

/* Wraps the crowd's ended hook: the window opens and closes between ticks. */
static void on_ended(srv_crowd_t *crowd, void *data) {
  original.ended(crowd, data);
  if (client_failed && !client_stop) { /* a client that gave up never opens the window: stop, not hang */
    client_stop = 1;
    srv_server_shutdown(&server);
    return;
  }
  uint64_t ticks = crowd->scheduler.ticks;
  if (!client_ready) return;
  if (!window_start_tick) window_start_tick = ticks + WARMUP_TICKS;
  if (ticks == window_start_tick) {
    anim_alloc_counter_open();
  } else if (ticks == window_start_tick + COUNTED_TICKS) {
    counted = anim_alloc_counter_close();
    client_stop = 1;
    srv_server_shutdown(&server);
  }
}

/* The machine and graph characters, owned by no connection (freed with the server). */
static void add_others(srv_db_entry_t *entry) {
  static const char text[] = "a { clip walk [0 1] END b }\nb { clip run [0 1] END a }\n";
  char err[256];
  int rc;
  srv_machine_def_t *def = srv_machine_def_create("loop", 0, text, sizeof text - 1, NULL, &rc, err, sizeof err);
  assert_non_null(def);
  assert_int_equal(srv_machines_put(&server.machines, def, 0), 0);
  srv_bound_machine_t *bound;
  assert_int_equal(srv_machines_bind(&server.machines, def, entry, &bound, NULL, err, sizeof err), 0);
  anim_test_build_graph(entry);
  static srv_create_characters_request_t request;
  anim_controller_params_default(&request.params);
  anim_path_options_default(&request.path);
  float circle[2 * 32];
  for (int i = 0; i < OTHERS; i++) {
    srv_actor_setup_t machine = {&request, vec3_make((float)i, 0.0f, -5.0f), 0.0f, 0, 0, bound};
    assert_int_equal(
        srv_crowd_create(&server.crowd, 0, entry, &srv_actor_machine, &machine, &other_ids[i], err, sizeof err), 0);
    srv_actor_setup_t walker = {&request, vec3_make((float)i * 8.0f, 0.0f, 10.0f), 0.0f, 0, 0, entry->graph->ready};
    assert_int_equal(srv_crowd_create(&server.crowd, 0, entry, &srv_actor_graph, &walker, &other_ids[OTHERS + i], err,
                                      sizeof err), 0);
    for (int k = 0; k < 32; k++) {
      float angle = 0.196f * (float)k;
      circle[2 * k] = (float)i * 8.0f + 3.0f * sinf(angle), circle[2 * k + 1] = 13.0f - 3.0f * cosf(angle);
    }
    anim_path_t path = {circle, 32, 1};
    srv_actor_t *actor = srv_crowd_find(&server.crowd, other_ids[OTHERS + i]);
    assert_int_equal(anim_graph_character_set_path(srv_actor_graph_character(actor), &path), 0);
    srv_crowd_remeasure(&server.crowd, actor); /* its planner may have grown (as service_graph.c does) */
  }
  srv_bound_machine_release(bound);
}

/* 50 learned characters on the database lmm, walking in circles, when the
 * shared networks are at hand (under CI they must be). NULL without. */
static anim_lmm_networks_t *add_learned(srv_registry_t *registry) {
  char dir[1024], err[256];
  snprintf(dir, sizeof dir, "%s/data/lmm", anim_test_shared_dir());
  int code;
  anim_lmm_networks_t *nets = anim_lmm_networks_load(dir, NULL, &code, err, sizeof err);
  if (!nets) {
    if (getenv("CI") && !strcmp(getenv("CI"), "true")) fail_msg("learned networks under CI: %s", err);
    printf("learned characters left out: %s (set ANIM_SHARED_DIR)\n", err);
    return NULL;
  }
  anim_database_t db;
  assert_int_equal(anim_lmm_database(&db, "lmm", nets, err, sizeof err), 0);
  srv_db_entry_t *entry = srv_db_entry_create(&db, "", err, sizeof err);
  assert_non_null(entry);
  entry->lmm = nets;
  assert_int_equal(srv_registry_put(registry, entry), 0);
  return nets;
}

static void create_learned(srv_db_entry_t *entry) {
  static srv_create_characters_request_t request;
  anim_controller_params_default(&request.params);
  char err[160];
  for (int i = 0; i < OTHERS; i++) {
    srv_actor_setup_t setup = {&request, vec3_make((float)i * 3.0f, 0.0f, -20.0f), 0.0f, 0, (uint32_t)i, NULL};
    uint64_t id;
    assert_int_equal(srv_crowd_create(&server.crowd, 0, entry, &srv_actor_learned, &setup, &id, err, sizeof err), 0);
    anim_controller_input_t in = {
        .kind = ANIM_INPUT_STICK, .stick_x = 0.5f, .stick_z = 0.8f, .camera_azimuth = 0.1f * (float)i};
    assert_int_equal(srv_actor_learned.set_input(srv_crowd_find(&server.crowd, id)->character, &in), 0);
  }
}

static void test_no_allocation_per_tick(void **state) {
  char err[256];
  srv_config_t config;
  anim_test_inprocess_setup(&config, &loop);
  /* The level of detail on: the walkers no subscription streams at full
   * rate search less and skip foot locking, and the region's band edges
   * turn it on and off as they cross them. */
  config.lod_search_scale = 4;
  anim_alloc_counter_install();
  srv_registry_t registry = {0};
  srv_db_entry_t *entry = anim_test_register_procgen(&registry);
  anim_lmm_networks_t *nets = add_learned(&registry);
  assert_int_equal(srv_server_start(&server, &loop, &config, &registry, err, sizeof err), 0);
  add_others(entry);
  if (nets) {
    srv_db_entry_t *lmm = srv_registry_acquire(&server.registry, "lmm");
    create_learned(lmm);
    srv_db_entry_release(lmm);
  }
  anim_test_run_with_client(&server, &loop, &original, on_ended, client_main);
  srv_server_close(&server);
  assert_int_equal(uv_loop_close(&loop), 0);
  anim_lmm_networks_free(nets);
  srv_crowd_stats_t *crowd_stats = &server.crowd.stats;
  printf("physical characters: %llu simulations reset\n", (unsigned long long)crowd_stats->physics_resets);
  printf("%d characters, %d ticks after a %d-tick warm-up: %ld allocations by the server (%s), %ld frames read\n",
         CHARACTERS, COUNTED_TICKS, WARMUP_TICKS, counted, ANIM_ALLOC_COUNTER, (long)frames_read);
  if (client_failed) fail_msg("the client failed at: %s", client_failed_at ? client_failed_at : "?");
  assert_true(frames_read >= COUNTED_TICKS); /* the client was served throughout */
  printf("physical characters' poses by state: kinematic %ld, powered %ld, fallen %ld, recovering %ld\n",
         (long)physical_states[1], (long)physical_states[2], (long)physical_states[5], (long)physical_states[4]);
  assert_true(physical_states[2] > 0 && physical_states[5] > 0 && physical_states[4] > 0);
  assert_int_equal(counted, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_no_allocation_per_tick)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
