/*
 * test_request_checks.c: what the server says about bad requests, over the
 * wire, as a client written from the proto alone would see it: every string
 * checked whole (embedded NUL, UTF-8, length), errors that name the field as
 * the proto spells it with its indices, the value and the rule; the same
 * code for every out-of-range frame index; the protocol's contract (hello
 * versions, every limit reported, id 0 reserved).
 *
 * Requests are built with protobuf-c (or by hand where a C string cannot
 * carry the bytes) and sent on a raw socket; answers are parsed as
 * ServerMessage.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>
#include "anim_error.h"
#include "animserver.pb-c.h"
#include "frame.h"
#include "server_proc.h"

static anim_test_server_t server;
static int fd = -1;

static int setup(void **state) {
  if (anim_test_server_start(&server, "request_checks", NULL) != 0) return -1;
  fd = anim_test_server_raw_connect(&server);
  return fd >= 0 ? 0 : -1;
}

static int teardown(void **state) {
  close(fd);
  return anim_test_server_stop(&server) == 0 ? 0 : -1;
}

static void send_bytes(const uint8_t *payload, size_t len) {
  uint8_t prefix[ANIM_VARINT_MAX];
  size_t n = anim_varint_encode(len, prefix);
  assert_true(send(fd, prefix, n, 0) == (ssize_t)n);
  assert_true(send(fd, payload, len, 0) == (ssize_t)len);
}

static void send_request(Animserver__Request *request) {
  size_t size = animserver__request__get_packed_size(request);
  uint8_t *buffer = malloc(size + 1);
  animserver__request__pack(request, buffer);
  send_bytes(buffer, size);
  free(buffer);
}

/* The next answer (a Response; stream frames are not subscribed here). */
static Animserver__Response *receive(void) {
  static uint8_t buffer[1 << 20];
  size_t have = 0;
  for (;;) {
    uint64_t len;
    int n = anim_varint_decode(buffer, have, &len);
    if (n > 0 && have >= (size_t)n + len) {
      Animserver__ServerMessage *m = animserver__server_message__unpack(NULL, (size_t)len, buffer + n);
      assert_non_null(m);
      assert_int_equal(m->kind_case, ANIMSERVER__SERVER_MESSAGE__KIND_RESPONSE);
      Animserver__Response *r = m->response;
      m->response = NULL;
      animserver__server_message__free_unpacked(m, NULL);
      return r;
    }
    ssize_t got = recv(fd, buffer + have, sizeof buffer - have, 0);
    if (got <= 0) fail_msg("the server closed the connection");
    have += (size_t)got;
  }
}

/* Sends request, expects an error of code whose message is exactly message. */
static void expect_error(Animserver__Request *request, int code, const char *message) {
  send_request(request);
  Animserver__Response *r = receive();
  if (!r->error) fail_msg("expected \"%s\", got an answer", message);
  if (-(int)r->error->code != code || strcmp(r->error->message, message) != 0)
    fail_msg("expected %s \"%s\"\n          got %s \"%s\"", anim_err_name(code), message,
             anim_err_name(-(int)r->error->code), r->error->message);
  assert_int_equal(r->id, request->id);
  animserver__response__free_unpacked(r, NULL);
}

/* ---- strings checked whole ---------------------------------------------------------------------- */

/* describe_database { name: bytes } written by hand: C strings cannot hold a NUL. */
static void send_describe_raw(uint64_t id, const char *name, size_t len) {
  uint8_t frame[512];
  size_t n = 0;
  frame[n++] = 0x08; /* id */
  n += anim_varint_encode(id, frame + n);
  frame[n++] = 0xaa, frame[n++] = 0x01; /* field 21, length-delimited */
  n += anim_varint_encode(len + 2 + (len > 127), frame + n);
  frame[n++] = 0x0a; /* name */
  n += anim_varint_encode(len, frame + n);
  memcpy(frame + n, name, len);
  send_bytes(frame, n + len);
}

static void expect_raw_error(uint64_t id, int code, const char *message) {
  Animserver__Response *r = receive();
  assert_non_null(r->error);
  if (-(int)r->error->code != code || strcmp(r->error->message, message) != 0)
    fail_msg("expected %s \"%s\", got %s \"%s\"", anim_err_name(code), message, anim_err_name(-(int)r->error->code),
             r->error->message);
  assert_int_equal(r->id, id);
  animserver__response__free_unpacked(r, NULL);
}

static void test_strings_checked_whole(void **state) {
  send_describe_raw(1, "default\0junk", 12);
  expect_raw_error(1, ANIM_EBADNAME, "describe_database.name: byte 7 is NUL (strings must not contain NUL)");
  send_describe_raw(2, "def\xc3\x28ult", 8);
  expect_raw_error(2, ANIM_EBADNAME, "describe_database.name: byte 3 is not valid UTF-8");
  send_describe_raw(3, "de\xed\xa0\x80", 5); /* a UTF-16 surrogate */
  expect_raw_error(3, ANIM_EBADNAME, "describe_database.name: byte 2 is not valid UTF-8");
  send_describe_raw(4, "d\xc0\xafx", 4); /* an overlong '/' */
  expect_raw_error(4, ANIM_EBADNAME, "describe_database.name: byte 1 is not valid UTF-8");
  send_describe_raw(5, "default", 7); /* the same bytes whole: answered */
  Animserver__Response *r = receive();
  assert_null(r->error);
  animserver__response__free_unpacked(r, NULL);

  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__DescribeDatabaseRequest describe = ANIMSERVER__DESCRIBE_DATABASE_REQUEST__INIT;
  request.id = 6, request.body_case = ANIMSERVER__REQUEST__BODY_DESCRIBE_DATABASE,
      request.describe_database = &describe;
  describe.name = "";
  expect_error(&request, ANIM_EBADNAME, "describe_database.name is empty: a name is 1-63 characters");
  describe.name = "../etc";
  expect_error(&request, ANIM_EBADNAME,
               "describe_database.name = \"../etc\": not a plain name "
               "(1-63 of A-Z a-z 0-9 _ - ., not starting with '.')");
  describe.name = "nothere";
  expect_error(&request, ANIM_ENOTFOUND, "describe_database.name = \"nothere\": no database of that name is loaded");

  /* A string nested in a repeated message: its path has the index. */
  Animserver__BatchSearchRequest batch = ANIMSERVER__BATCH_SEARCH_REQUEST__INIT;
  Animserver__SearchQuery q0 = ANIMSERVER__SEARCH_QUERY__INIT, q1 = ANIMSERVER__SEARCH_QUERY__INIT;
  Animserver__SearchQuery *queries[2] = {&q0, &q1};
  char *tags[1] = {"w\xfflk"};
  q1.n_tags = 1, q1.tags = tags;
  batch.database = "default", batch.n_queries = 2, batch.queries = queries;
  request.id = 7, request.body_case = ANIMSERVER__REQUEST__BODY_BATCH_SEARCH, request.batch_search = &batch;
  expect_error(&request, ANIM_EBADNAME, "batch_search.queries[1].tags[0]: byte 1 is not valid UTF-8");

  /* The server walks a request's bytes for strings only when its body can
   * hold one (server/codec.c: a ping's is not walked): that holds while
   * Request's fields outside the body are no string and no message. */
  for (unsigned i = 0; i < animserver__request__descriptor.n_fields; i++) {
    const ProtobufCFieldDescriptor *f = &animserver__request__descriptor.fields[i];
    if (!(f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
        (f->type == PROTOBUF_C_TYPE_STRING || f->type == PROTOBUF_C_TYPE_MESSAGE))
      fail_msg("Request.%s is outside the body and can hold a string: server/codec.c must walk every request", f->name);
  }
}

/* ---- errors name the field -------------------------------------------------------------------- */

static void test_errors_name_the_field(void **state) {
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  float features[27] = {0}, bad[27] = {0};
  bad[3] = NAN;
  Animserver__SearchQuery q[3] = {ANIMSERVER__SEARCH_QUERY__INIT, ANIMSERVER__SEARCH_QUERY__INIT,
                                  ANIMSERVER__SEARCH_QUERY__INIT};
  Animserver__SearchQuery *queries[3] = {&q[0], &q[1], &q[2]};
  for (int i = 0; i < 3; i++) q[i].n_features = 27, q[i].features = i == 2 ? bad : features;
  Animserver__BatchSearchRequest batch = ANIMSERVER__BATCH_SEARCH_REQUEST__INIT;
  batch.database = "default", batch.n_queries = 3, batch.queries = queries;
  request.id = 10, request.body_case = ANIMSERVER__REQUEST__BODY_BATCH_SEARCH, request.batch_search = &batch;
  expect_error(&request, ANIM_ENONFINITE, "batch_search.queries[2].features[3] is NaN: values must be finite");

  Animserver__SearchRequest search = ANIMSERVER__SEARCH_REQUEST__INIT;
  search.database = "default", search.query = &q[2];
  request.id = 11, request.body_case = ANIMSERVER__REQUEST__BODY_SEARCH, request.search = &search;
  expect_error(&request, ANIM_ENONFINITE, "search.query.features[3] is NaN: values must be finite");
  q[2].n_features = 5, q[2].features = features;
  expect_error(&request, ANIM_EDIMENSION, "search.query.features has 5 values: database default has 27 dimensions");

  Animserver__CreateCharactersRequest create = ANIMSERVER__CREATE_CHARACTERS_REQUEST__INIT;
  Animserver__ControllerParams params = ANIMSERVER__CONTROLLER_PARAMS__INIT;
  params.forward_speed = INFINITY;
  create.database = "default", create.params = &params;
  request.id = 12, request.body_case = ANIMSERVER__REQUEST__BODY_CREATE_CHARACTERS, request.create_characters = &create;
  expect_error(&request, ANIM_ENONFINITE, "create_characters.params.forward_speed is +Inf: must be finite");
  params.forward_speed = 0, params.inertialize_halflife = -0.2f;
  expect_error(&request, ANIM_EINVAL,
               "create_characters.params.inertialize_halflife = -0.2: must be > 0 s (or 0 for the default)");

  Animserver__SetInputsRequest inputs = ANIMSERVER__SET_INPUTS_REQUEST__INIT;
  Animserver__CharacterInput input = ANIMSERVER__CHARACTER_INPUT__INIT;
  Animserver__StickInput stick = ANIMSERVER__STICK_INPUT__INIT;
  Animserver__CharacterInput *items[1] = {&input};
  stick.x = 1.2f, stick.z = 0.9f;
  input.character = 1, input.input_case = ANIMSERVER__CHARACTER_INPUT__INPUT_STICK, input.stick = &stick;
  inputs.n_inputs = 1, inputs.inputs = items;
  request.id = 13, request.body_case = ANIMSERVER__REQUEST__BODY_SET_INPUTS, request.set_inputs = &inputs;
  expect_error(&request, ANIM_EINVAL, "set_inputs.inputs[0].stick (1.2, 0.9) has length 1.5: at most 1");

  /* Speeds far past any motion (3e38 overflows the springs' squares and the
   * character would silently stand) are refused, not followed. */
  params.inertialize_halflife = 0, params.forward_speed = 1e9f;
  request.id = 14, request.body_case = ANIMSERVER__REQUEST__BODY_CREATE_CHARACTERS, request.create_characters = &create;
  expect_error(&request, ANIM_EINVAL, "create_characters.params.forward_speed = 1e+09: at most 100 m/s");
  Animserver__VelocityInput velocity = ANIMSERVER__VELOCITY_INPUT__INIT;
  velocity.x = 3e38f, velocity.z = 1.0f;
  input.input_case = ANIMSERVER__CHARACTER_INPUT__INPUT_VELOCITY, input.velocity = &velocity;
  request.id = 15, request.body_case = ANIMSERVER__REQUEST__BODY_SET_INPUTS, request.set_inputs = &inputs;
  expect_error(&request, ANIM_EINVAL, "set_inputs.inputs[0].velocity (3e+38, 1) is inf m/s: at most 100 m/s");
  Animserver__GoalInput goal = ANIMSERVER__GOAL_INPUT__INIT;
  goal.x = 5.0f, goal.speed = 100.5f;
  input.input_case = ANIMSERVER__CHARACTER_INPUT__INPUT_GOAL, input.goal = &goal;
  expect_error(&request, ANIM_EINVAL, "set_inputs.inputs[0].goal.speed = 100.5: must be in [0, 100] m/s");
}

/* An index past the end and one that is negative as the client wrote it
 * (a uint32 field: -1 arrives as 4294967295) get the same code. */
static void test_frame_indices_one_code(void **state) {
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__PoseRequest pose = ANIMSERVER__POSE_REQUEST__INIT;
  pose.database = "default";
  request.body_case = ANIMSERVER__REQUEST__BODY_POSE, request.pose = &pose;
  request.id = 20, pose.frame = UINT32_MAX;
  expect_error(&request, ANIM_ERANGE, "pose.frame = 4294967295: at most 2147483647");
  request.id = 21, pose.frame = 4758;
  expect_error(&request, ANIM_ERANGE,
               "pose.frame = 4758, pose.count = 1: frames [4758, 4759) are outside database default's frames 0..4757");
}

/* ---- the protocol's contract -------------------------------------------------------------------- */

static void test_protocol_contract(void **state) {
  Animserver__Request request = ANIMSERVER__REQUEST__INIT;
  Animserver__HelloRequest hello = ANIMSERVER__HELLO_REQUEST__INIT;
  request.body_case = ANIMSERVER__REQUEST__BODY_HELLO, request.hello = &hello;
  request.id = 30, hello.protocol_version = 99;
  expect_error(&request, ANIM_EVERSION,
               "hello.protocol_version = 99: this server speaks versions 1 to 1 (0: unspecified)");
  for (uint32_t version = 0; version <= 1; version++) {
    request.id = 31 + version, hello.protocol_version = version;
    send_request(&request);
    Animserver__Response *r = receive();
    assert_null(r->error);
    const Animserver__Limits *l = r->hello->limits;
    /* Every limit a client can hit is there (the defaults of server/config.c). */
    assert_int_equal(l->max_frame_bytes, 4u << 20);
    assert_int_equal(l->max_in_flight, 256);
    assert_int_equal(l->max_batch, 4096);
    assert_int_equal(l->max_k, 1024);
    assert_int_equal(l->max_pose_frames, 10000);
    assert_int_equal(l->decode_budget_bytes, 16u << 20);
    assert_int_equal(l->output_soft_limit_bytes, 8u << 20);
    assert_int_equal(l->output_hard_limit_bytes, 64u << 20);
    assert_int_equal(l->stream_soft_limit_bytes, 1u << 20);
    assert_int_equal(l->max_characters, 20000);
    assert_int_equal(l->max_characters_total, 100000);
    assert_int_equal(l->max_subscriptions, 64);
    assert_int_equal(l->max_ids, 100000);
    assert_int_equal(l->max_string_bytes, 4096);
    animserver__response__free_unpacked(r, NULL);
  }
  /* Id 0 is the server's, for errors about the connection: refused, not run. */
  Animserver__PingRequest ping = ANIMSERVER__PING_REQUEST__INIT;
  request.id = 0, request.body_case = ANIMSERVER__REQUEST__BODY_PING, request.ping = &ping;
  expect_error(&request, ANIM_EINVAL, "id 0 is reserved for errors about the connection: number requests from 1");
  request.id = 40;
  send_request(&request);
  Animserver__Response *r = receive();
  assert_null(r->error);
  assert_int_equal(r->id, 40);
  animserver__response__free_unpacked(r, NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_strings_checked_whole),
      cmocka_unit_test(test_errors_name_the_field),
      cmocka_unit_test(test_frame_indices_one_code),
      cmocka_unit_test(test_protocol_contract),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
