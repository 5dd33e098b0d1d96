/*
 * fuzz_request.c: libFuzzer target for request decoding and the services.
 *
 * The input is one frame's payload (a protobuf Request, without its length
 * prefix). It is decoded with srv_codec_decode_request under the server's
 * default limits (and peeked with srv_codec_peek_search: a frame peeked as
 * a search of a database must decode, if at all, as a search of it; and
 * with srv_codec_peek_ping: a frame read as a ping must decode as the same
 * ping, id and payload); a
 * request that decodes is dispatched through the real service table
 * exactly as connection.c's dispatch does on the loop path (prepare,
 * handle, finish on the calling thread, each skipped once the
 * response has failed), and every response, failed or not, is encoded with
 * srv_codec_encode_response. Then everything is released, so leaks show.
 *
 * The server is a minimal srv_server_t with no listener: its config,
 * registry and crowd (on a loop that never runs: no tick happens) are what
 * services use, and one connection struct, id 1, owns what the character and
 * stream requests create. Each input starts with one character of that
 * connection, id 4294967297 (slot 0, generation 1: the harness sets the
 * crowd's first generation, random in a real run), so requests naming it reach
 * the real paths; every character and subscription is gone again after the
 * input. No request
 * type is skipped: none of the steps needs a live loop (load and reload do
 * their file work in the handle step, which the real server runs on the thread
 * pool; here it runs inline, which the steps allow). Loads and reloads read
 * from a temporary data directory made in LLVMFuzzerInitialize, holding
 * tiny.animdb and spare.animdb (a small database of two procedural clips):
 *   default   the procedural default database (as main.c builds it), loaded;
 *   tiny      loaded from the data directory;
 *   spare     only on disk, so a load can succeed.
 * The registry is put back to exactly that after every input (the harness
 * holds its own reference to each entry), so inputs do not depend on each
 * other. Limits: the defaults, except max_batch 64 and max_pose_frames 256 to
 * keep each execution in milliseconds (both still above the 16-query and
 * 64-frame thresholds where the real server moves work to the pool); for
 * the same reason graph queries simulate at most QUERY_SECONDS and graphs
 * are built on tiny only (a build of default takes seconds under ASan).
 * State machines: "walker" is loaded (a machine on tiny's ranges) and tiny
 * has a motion graph, both put back after every input as they were, so the
 * machine and graph requests reach their real paths.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "anim_error.h"
#include "codec.h"
#include "connection.h"
#include "crowd.h"
#include "codec.h"
#include "crowd.h"
#include "database/dbfile.h"
#include "offline/dbfile_write.h"
#include "graphs.h"
#include "machines.h"
#include "log.h"
#include "offline/procgen.h"
#include "registry.h"
#include "service.h"
#include "stream.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uv_loop_t loop;
static srv_config_t config;
static srv_counters_t counters;
static srv_registry_t registry;
static srv_crowd_t crowd;
static srv_streams_t streams;
static srv_connection_t connection;
static srv_subscriber_t subscriber;
static srv_service_env_t env;
static srv_machines_t machines;
static srv_graph_t *tiny_graph;
#define QUERY_SECONDS 5.0f
static const char walker_text[] = "turning { clip walk_turn_left loop  STOP stopping }\n"
                                  "stopping { clip walk_stop  END turning  GO turning }\n";
static srv_db_entry_t *baseline[2];
static int nbaseline;
static char data_dir[64];

static void reset_machines(void);
static void nothing_close(srv_connection_t *c, const char *reason) {}
static void nothing_free(srv_connection_t *c) {}
static const srv_connection_callbacks_t callbacks = {.on_close = nothing_close, .on_free = nothing_free};
static void no_hook(srv_crowd_t *c, void *data) {}

static void die(const char *what, const char *err) {
  fprintf(stderr, "fuzz_request: %s: %s\n", what, err);
  exit(1);
}

static void remove_data_dir(void) {
  char path[128];
  snprintf(path, sizeof path, "%s/tiny.animdb", data_dir);
  unlink(path);
  snprintf(path, sizeof path, "%s/spare.animdb", data_dir);
  unlink(path);
  rmdir(data_dir);
}

/* Two short procedural clips at 15 Hz: a few hundred KB, loads in a millisecond. */
static void write_small_database(const char *name) {
  int n;
  const anim_procgen_clip_spec_t *specs = anim_procgen_specs(&n);
  const anim_procgen_clip_spec_t chosen[2] = {specs[6], specs[13]}; /* walk_turn_left, walk_stop */
  anim_clip_t clips[2];
  anim_database_t db;
  anim_build_options_t options;
  char err[256], path[128];
  anim_build_options_default(&options);
  options.frame_rate = 15.0f;
  for (int i = 0; i < 2; i++)
    if (anim_procgen_clip(&clips[i], &chosen[i], options.frame_rate)) die("procgen clip", "failed");
  if (anim_database_build(&db, name, clips, 2, &options, err, sizeof err)) die("build", err);
  for (int i = 0; i < 2; i++) anim_clip_free(&clips[i]);
  anim_database_tag_range(&db, 0, "turn");
  anim_database_tag_range(&db, 1, "stop");
  anim_feature_schema_t schema;
  if (anim_feature_schema_default(&schema, &db)) die("schema", "none");
  if (anim_features_build(&db, &schema, err, sizeof err)) die("features", err);
  snprintf(path, sizeof path, "%s/%s.animdb", data_dir, name);
  if (anim_dbfile_write(&db, path, err, sizeof err)) die("write", err);
  anim_database_free(&db);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  char err[512];
  srv_log_set_level(SRV_LOG_ERROR);
  const char *tmp = getenv("TMPDIR");
  snprintf(data_dir, sizeof data_dir, "%.40s/fuzz_request.XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(data_dir)) die("mkdtemp", data_dir);
  atexit(remove_data_dir);
  write_small_database("tiny");
  write_small_database("spare");

  if (uv_loop_init(&loop)) die("uv_loop_init", "");
  srv_config_default(&config);
  config.max_batch = 64;
  config.max_pose_frames = 256;
  snprintf(config.data_dir, sizeof config.data_dir, "%s", data_dir);

  /* As main.c's load_startup_databases: the procedural default, then --db tiny. */
  anim_database_t db;
  if (anim_procgen_database(&db, NULL, err, sizeof err)) die("procgen", err);
  srv_db_entry_t *entry = srv_db_entry_create(&db, "", err, sizeof err);
  if (!entry) die("default entry", err);
  baseline[nbaseline++] = entry;
  if (srv_database_open(&config, "tiny", &entry, err, sizeof err)) die("open tiny", err);
  baseline[nbaseline++] = entry;
  for (int i = 0; i < nbaseline; i++) {
    baseline[i]->refs++; /* the harness keeps one reference of its own */
    srv_registry_put(&registry, baseline[i]);
  }
  srv_crowd_hooks_t hooks = {.prepare = no_hook, .simulated = no_hook, .ended = no_hook};
  if (srv_crowd_init(&crowd, &loop, &config, &hooks)) die("crowd", "timerfd");
  /* Generation 1, not the run's random one: the corpus names 4294967297. */
  srv_crowd_set_first_generation(&crowd, 1);
  srv_streams_init(&streams, &loop, &config, &counters, &crowd);
  srv_connection_init(&connection, &loop, 1, &config, &counters, &callbacks);
  srv_subscriber_init(&subscriber, &streams, &connection, 1);
  env = (srv_service_env_t){&config, &registry, &crowd, &streams, &counters, 0, &machines};
  /* tiny's graph, built as build_graph does, kept by the harness. */
  srv_graph_options_t go;
  memset(&go, 0, sizeof go);
  anim_graph_options_default(&go.core);
  srv_graph_build_t *job = srv_graph_build_begin(srv_graph_slot_of(baseline[1]), &baseline[1]->db, &go);
  if (!job || srv_graph_build_run(job)) die("tiny graph", job ? job->err : "out of memory");
  srv_graph_build_end(job);
  tiny_graph = srv_graph_retain(baseline[1]->graph->ready);
  reset_machines();
  return 0;
}

/* One character of connection 1 at slot 0, generation 1. */
static void add_character(void) {
  uint64_t id;
  static srv_create_characters_request_t request;
  anim_controller_params_default(&request.params);
  srv_actor_setup_t setup = {&request, vec3_zero(), 0.0f, 0, 0, NULL};
  char err[128];
  if (srv_crowd_create(&crowd, 1, baseline[0], &srv_actor_matching, &setup, &id, err, sizeof err) || id != 4294967297u)
    die("character", "not created at slot 0, generation 1");
}

/* Only "walker" loaded, as text. */
static void reset_machines(void) {
  srv_machines_clear(&machines);
  int rc;
  char err[256];
  srv_machine_def_t *def =
      srv_machine_def_create("walker", 0, walker_text, sizeof walker_text - 1, NULL, &rc, err, sizeof err);
  if (!def || srv_machines_put(&machines, def, 0)) die("walker", err);
}

/* tiny's graph as built at the start; no other database has one. */
static void reset_graphs(void) {
  for (int i = 0; i < nbaseline; i++) {
    srv_graph_slot_t *slot = baseline[i]->graph;
    if (!slot) continue;
    srv_graph_release(slot->ready);
    memset(slot, 0, sizeof *slot);
    /* The slot goes with its entry (graphs.h): a build's end writes the
     * entry's graph_memory_bytes through it. */
    slot->entry = baseline[i];
    slot->ready = i == 1 ? srv_graph_retain(tiny_graph) : NULL;
    baseline[i]->graph_memory_bytes = srv_graph_memory(slot->ready);
  }
}

/* No characters, no subscriptions, and ids starting again at slot 0. */
static void reset_crowd(void) {
  srv_crowd_destroy_owned(&crowd, 1);
  srv_subscriber_close(&subscriber);
  srv_subscriber_init(&subscriber, &streams, &connection, 1);
  crowd.nslots = crowd.nfree = 0;
  srv_scheduler_stop(&crowd.scheduler);
}

/* The registry as it was after LLVMFuzzerInitialize. */
static void reset_registry(void) {
  srv_registry_clear(&registry);
  for (int i = 0; i < nbaseline; i++) srv_registry_put(&registry, srv_db_entry_retain(baseline[i]));
}

static void encode(const srv_response_t *response) {
  srv_buffer_t *buffer = NULL;
  if (srv_codec_encode_response(response, &buffer) == 0) srv_buffer_release(buffer);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  srv_codec_limits_t limits = {config.decode_budget_bytes, config.max_batch, ANIM_SEARCH_MAX_K, config.max_pose_frames,
                               config.max_ids_per_request};
  srv_request_t request;
  char err[SRV_ERROR_MESSAGE_MAX];
  srv_response_t response;
  memset(&response, 0, sizeof response);
  int rc = srv_codec_decode_request(data, size, &limits, &request, err, sizeof err);
  /* What the dispatcher's peek says of the frame, the decoder must agree with. */
  const uint8_t *peeked_name;
  size_t peeked_len;
  if (rc == 0 && srv_codec_peek_search(data, size, &peeked_name, &peeked_len) &&
      (request.type != SRV_REQ_SEARCH || !request.database || strlen(request.database) != peeked_len ||
       memcmp(request.database, peeked_name, peeked_len) != 0))
    abort();
  srv_request_t ping;
  if (srv_codec_peek_ping(data, size, &limits, &ping) &&
      (rc != 0 || request.type != SRV_REQ_PING || request.id != ping.id ||
       request.body.ping.payload_len != ping.body.ping.payload_len ||
       (ping.body.ping.payload_len &&
        memcmp(request.body.ping.payload, ping.body.ping.payload, ping.body.ping.payload_len) != 0)))
    abort();
  if (rc != 0) {
    /* dispatch.c's answer_error: the error answered under the id peeked. */
    response.id = request.id;
    srv_response_fail(&response, rc, "%s", err);
    encode(&response);
    if (getenv("FUZZ_REQUEST_VERBOSE")) fprintf(stderr, "not decoded: %s\n", err);
    srv_request_release(&request);
    return 0;
  }
  const srv_service_t *service = srv_service_for(request.type);
  if (!service) abort(); /* the codec produced a type with no service */
  if (request.type == SRV_REQ_QUERY_GRAPH && request.body.query_graph.seconds > QUERY_SECONDS)
    request.body.query_graph.seconds = QUERY_SECONDS, request.body.query_graph.settle = 0.0f;
  if (request.type == SRV_REQ_BUILD_GRAPH && request.database && strcmp(request.database, "tiny") != 0)
    request.database = "tiny";
  add_character();
  srv_service_ctx_t ctx = {&env, 1, 1, &subscriber};
  response.id = request.id;
  response.type = request.type;
  srv_service_run_step(service->prepare, &ctx, &request, &response);
  if (!response.error && service->off_loop) service->off_loop(&request, &response);
  srv_service_run_step(service->handle, &ctx, &request, &response);
  srv_service_run_step(service->finish, &ctx, &request, &response);
  encode(&response);
  /* FUZZ_REQUEST_VERBOSE=1: what each input got (for checking seeds). */
  if (getenv("FUZZ_REQUEST_VERBOSE"))
    fprintf(stderr, "%s: %s\n", srv_request_name(request.type), response.error ? response.message : "ok");
  srv_response_release(&response);
  srv_request_release(&request);
  reset_crowd();
  reset_machines();
  reset_registry();
  reset_graphs();
  return 0;
}
