/*
 * test_client_convert.c: the client's pure protobuf <-> C conversion
 * (client/convert.h), without a server.
 *
 * Invalid input first: every answer converter refuses a missing message
 * (ANIM_EPROTO), arrays whose lengths disagree with each other or with
 * their count are refused with nothing allocated (the sanitizers' leak
 * check sees to that), error codes outside the list map to ANIM_EPROTO,
 * and the request builders refuse arguments against the public types'
 * rules (ANIM_EINVAL). Then behaviour: what a well-formed answer carries
 * arrives in the C result (a pose, a description's contact bones, a stream
 * frame of floats, an inertializer state with and without offsets).
 * tests/fuzz/fuzz_client_convert.c feeds the same functions arbitrary bytes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "client/convert.h"

/* ---- invalid answers ---------------------------------------------------------------------- */

static void test_missing_messages_are_protocol_errors(void **state) {
  anim_hello_info_t hello;
  anim_db_summary_t *summaries = (anim_db_summary_t *)1;
  int count = -1;
  anim_db_description_t *description = (anim_db_description_t *)1;
  anim_search_reply_t *search = (anim_search_reply_t *)1;
  anim_pose_reply_t *poses = (anim_pose_reply_t *)1;
  anim_inertializer_state_t *inertializer = (anim_inertializer_state_t *)1;
  anim_pose_t *pose = (anim_pose_t *)1;
  anim_transition_cost_t *cost = (anim_transition_cost_t *)1;
  anim_spring_tuning_t tuning;
  anim_character_state_t *character = (anim_character_state_t *)1;
  anim_server_stats_t stats;
  anim_stream_frame_t *frame = (anim_stream_frame_t *)1;
  assert_int_equal(anim__hello_info_from(NULL, &hello), ANIM_EPROTO);
  assert_int_equal(anim__summaries_from(NULL, &summaries, &count), ANIM_EPROTO);
  assert_null(summaries);
  assert_int_equal(count, 0);
  assert_int_equal(anim__description_from(NULL, &description), ANIM_EPROTO);
  assert_null(description);
  assert_int_equal(anim__search_from(NULL, &search), ANIM_EPROTO);
  assert_null(search);
  assert_int_equal(anim__batch_search_from(NULL, &search), ANIM_EPROTO);
  assert_int_equal(anim__pose_reply_from(NULL, &poses), ANIM_EPROTO);
  assert_null(poses);
  assert_int_equal(anim__inertializer_state_from(NULL, &inertializer), ANIM_EPROTO);
  assert_null(inertializer);
  assert_int_equal(anim__transition_from(NULL, &inertializer), ANIM_EPROTO);
  assert_int_equal(anim__evaluate_from(NULL, &inertializer, &pose), ANIM_EPROTO);
  assert_null(pose);
  assert_int_equal(anim__transition_cost_from(NULL, &cost), ANIM_EPROTO);
  assert_null(cost);
  assert_int_equal(anim__spring_tuning_from(NULL, &tuning), ANIM_EPROTO);
  assert_int_equal(anim__character_state_from(NULL, &character), ANIM_EPROTO);
  assert_null(character);
  assert_int_equal(anim__server_stats_from(NULL, &stats), ANIM_EPROTO);
  assert_int_equal(anim__stream_frame_from(NULL, 0, 0, &frame), ANIM_EPROTO);
  assert_null(frame);
}

static void test_error_codes(void **state) {
  Animserver__Error e = ANIMSERVER__ERROR__INIT;
  assert_int_equal(anim__error_code(NULL), ANIM_EPROTO);
  e.code = 0; /* not an error */
  assert_int_equal(anim__error_code(&e), ANIM_EPROTO);
  e.code = (Animserver__ErrorCode)(-ANIM_ENOTFOUND);
  assert_int_equal(anim__error_code(&e), ANIM_ENOTFOUND);
  e.code = (Animserver__ErrorCode)5000;
  assert_int_equal(anim__error_code(&e), ANIM_EPROTO);
}

/* Two bones of local positions, one of rotations: the pose is refused whole. */
static void test_pose_arrays_must_agree(void **state) {
  float positions[6] = {0}, rotations[4] = {1, 0, 0, 0};
  Animserver__Pose pose = ANIMSERVER__POSE__INIT;
  pose.n_local_positions = 6, pose.local_positions = positions;
  pose.n_local_rotations = 4, pose.local_rotations = rotations;
  Animserver__Pose *list[] = {&pose};
  Animserver__PoseResponse m = ANIMSERVER__POSE_RESPONSE__INIT;
  m.n_poses = 1, m.poses = list;
  anim_pose_reply_t *reply = (anim_pose_reply_t *)1;
  assert_int_equal(anim__pose_reply_from(&m, &reply), ANIM_EPROTO);
  assert_null(reply);
  pose.n_local_rotations = 3; /* not whole quaternions */
  assert_int_equal(anim__pose_reply_from(&m, &reply), ANIM_EPROTO);
  /* A search match's pose goes through the same check. */
  pose.n_local_rotations = 4;
  Animserver__Match match = ANIMSERVER__MATCH__INIT;
  match.pose = &pose;
  Animserver__Match *matches[] = {&match};
  Animserver__SearchResult result = ANIMSERVER__SEARCH_RESULT__INIT;
  result.n_matches = 1, result.matches = matches;
  Animserver__SearchResponse search = ANIMSERVER__SEARCH_RESPONSE__INIT;
  search.result = &result;
  anim_search_reply_t *found = (anim_search_reply_t *)1;
  assert_int_equal(anim__search_from(&search, &found), ANIM_EPROTO);
  assert_null(found);
}

static void test_inertializer_state_lengths(void **state) {
  float values[14] = {0};
  Animserver__InertializerState m = ANIMSERVER__INERTIALIZER_STATE__INIT;
  m.n_offset_positions = 3, m.offset_positions = values;
  m.n_offset_velocities = 3, m.offset_velocities = values;
  m.n_offset_rotations = 4, m.offset_rotations = values;
  m.n_offset_angular_velocities = 6, m.offset_angular_velocities = values; /* two bones */
  anim_inertializer_state_t *s = (anim_inertializer_state_t *)1;
  assert_int_equal(anim__inertializer_state_from(&m, &s), ANIM_EPROTO);
  assert_null(s);
  m.n_offset_angular_velocities = 3;
  m.n_anchor = 5, m.anchor = values; /* an anchor is 14 floats or none */
  assert_int_equal(anim__inertializer_state_from(&m, &s), ANIM_EPROTO);
  /* The evaluation's state is fine, its pose is not: neither is returned. */
  m.n_anchor = 0;
  Animserver__PoseState output = ANIMSERVER__POSE_STATE__INIT;
  output.n_positions = 6, output.positions = values;
  output.n_rotations = 4, output.rotations = values;
  Animserver__InertializeEvaluateResponse e = ANIMSERVER__INERTIALIZE_EVALUATE_RESPONSE__INIT;
  e.state = &m;
  e.output = &output;
  anim_pose_t *pose = (anim_pose_t *)1;
  assert_int_equal(anim__evaluate_from(&e, &s, &pose), ANIM_EPROTO);
  assert_null(s);
  assert_null(pose);
}

static void test_stream_frame_checks_its_poses(void **state) {
  float positions[6] = {0}, rotations[8] = {1, 0, 0, 0, 1, 0, 0, 0};
  Animserver__CharacterPose pose = ANIMSERVER__CHARACTER_POSE__INIT;
  pose.n_positions = 3, pose.positions = positions; /* one bone's, for two bones of rotations */
  pose.n_rotations = 8, pose.rotations = rotations;
  Animserver__CharacterPose *poses[] = {&pose};
  Animserver__StreamMessage m = ANIMSERVER__STREAM_MESSAGE__INIT;
  m.n_poses = 1, m.poses = poses;
  anim_stream_frame_t *frame = (anim_stream_frame_t *)1;
  assert_int_equal(anim__stream_frame_from(&m, 0, 10, &frame), ANIM_EPROTO);
  assert_null(frame);
  /* With rotations_only the root's 3 floats are right. */
  assert_int_equal(anim__stream_frame_from(&m, 1, 10, &frame), 0);
  anim_stream_frame_free(frame);
  pose.n_global_positions = 5, pose.global_positions = positions;
  assert_int_equal(anim__stream_frame_from(&m, 1, 10, &frame), ANIM_EPROTO);
  /* A quantized pose of no possible bone count. */
  uint8_t bytes[20] = {0};
  Animserver__CharacterPose q = ANIMSERVER__CHARACTER_POSE__INIT;
  q.quantized.data = bytes, q.quantized.len = sizeof bytes;
  poses[0] = &q;
  m.encoding = ANIMSERVER__POSE_ENCODING__ENCODING_QUANTIZED;
  assert_int_equal(anim__stream_frame_from(&m, 0, 10, &frame), ANIM_EPROTO);
  assert_null(frame);
}

/* ---- invalid requests ---------------------------------------------------------------------------- */

static void test_builders_refuse_invalid_arguments(void **state) {
  anim_query_t q;
  anim__query_views_t views;
  anim_query_init(&q);
  q.ntrajectory_positions = 9; /* at most 8 */
  assert_int_equal(anim__query_to_proto(&q, &views), ANIM_EINVAL);
  anim_query_init(&q);
  q.nfeatures = 4; /* without the features */
  assert_int_equal(anim__query_to_proto(&q, &views), ANIM_EINVAL);
  anim_query_init(&q);
  q.npositions = 1; /* without bone names */
  assert_int_equal(anim__query_to_proto(&q, &views), ANIM_EINVAL);
  assert_int_equal(anim__query_to_proto(NULL, &views), ANIM_EINVAL);

  anim__pose_source_views_t source;
  anim_pose_source_t explicit_pose = {-1, 0, NULL, NULL, NULL, NULL};
  assert_int_equal(anim__pose_source_to_proto(&explicit_pose, &source), ANIM_EINVAL);

  anim__create_views_t create;
  anim_character_mode_t mode = {.mode = 99};
  assert_int_equal(anim__create_to_proto("default", NULL, NULL, NULL, 0, &create), ANIM_EINVAL);
  assert_int_equal(anim__create_to_proto(NULL, NULL, NULL, NULL, 1, &create), ANIM_EINVAL);
  assert_int_equal(anim__create_to_proto("default", &mode, NULL, NULL, 1, &create), ANIM_EINVAL);

  uint64_t ids[2] = {1, 2};
  anim_character_input_t inputs[2];
  anim_character_input_stick(&inputs[0], 0.0f, 1.0f, 0.0f, 0);
  anim_character_input_stick(&inputs[1], 0.0f, 1.0f, 0.0f, 0);
  inputs[1].kind = 7; /* the second is refused: nothing is left allocated */
  anim__input_views_t input_views;
  assert_int_equal(anim__inputs_to_proto(ids, inputs, 2, &input_views), ANIM_EINVAL);
  assert_null(input_views.wire);
  assert_int_equal(anim__inputs_to_proto(NULL, inputs, 1, &input_views), ANIM_EINVAL);
}

/* ---- behaviour ---------------------------------------------------------------------------------- */

static void test_pose_reply(void **state) {
  float positions[6] = {1, 2, 3, 4, 5, 6}, rotations[8] = {1, 0, 0, 0, 0, 1, 0, 0};
  protobuf_c_boolean contacts[2] = {1, 0};
  Animserver__Pose pose = ANIMSERVER__POSE__INIT;
  pose.frame = 42;
  pose.n_local_positions = 6, pose.local_positions = positions;
  pose.n_local_rotations = 8, pose.local_rotations = rotations;
  pose.n_contacts = 2, pose.contacts = contacts;
  Animserver__Pose *list[] = {&pose};
  Animserver__PoseResponse m = ANIMSERVER__POSE_RESPONSE__INIT;
  m.database_version = 77;
  m.n_poses = 1, m.poses = list;
  anim_pose_reply_t *reply;
  assert_int_equal(anim__pose_reply_from(&m, &reply), 0);
  assert_int_equal(reply->database_version, 77);
  assert_int_equal(reply->nposes, 1);
  const anim_pose_t *p = &reply->poses[0];
  assert_int_equal(p->frame, 42);
  assert_int_equal(p->nbones, 2);
  assert_true(p->local_positions[5] == 6.0f);
  assert_true(p->local_rotations[5] == 1.0f);
  assert_null(p->global_positions);
  assert_int_equal(p->ncontacts, 2);
  assert_int_equal(p->contacts[0], 1);
  anim_pose_reply_free(reply);
}

static void test_description_contact_bones(void **state) {
  Animserver__Bone hips = ANIMSERVER__BONE__INIT, foot = ANIMSERVER__BONE__INIT;
  hips.name = "Hips", hips.parent = -1;
  foot.name = "LeftFoot", foot.parent = 0;
  Animserver__Bone *bones[] = {&hips, &foot};
  char *contacts[] = {"LeftFoot", "Tail"};
  Animserver__DatabaseSummary summary = ANIMSERVER__DATABASE_SUMMARY__INIT;
  summary.name = "test", summary.feature_dims = 2;
  float offset[3] = {1, 2, 3}, scale[3] = {4, 5, 6};
  Animserver__FeatureGroup group = ANIMSERVER__FEATURE_GROUP__INIT;
  group.first_column = 1, group.dims = 3; /* runs past the summary's 2 columns */
  group.n_offset = 3, group.offset = offset, group.n_scale = 3, group.scale = scale;
  Animserver__FeatureGroup *groups[] = {&group};
  Animserver__DescribeDatabaseResponse m = ANIMSERVER__DESCRIBE_DATABASE_RESPONSE__INIT;
  m.summary = &summary;
  m.n_bones = 2, m.bones = bones;
  m.n_contact_bones = 2, m.contact_bones = contacts;
  m.n_features = 1, m.features = groups;
  anim_db_description_t *d;
  assert_int_equal(anim__description_from(&m, &d), 0);
  assert_string_equal(d->summary.name, "test");
  assert_int_equal(d->nbones, 2);
  assert_int_equal(d->bone_parents[1], 0);
  assert_int_equal(d->ncontact_bones, 2);
  assert_int_equal(d->contact_bones[0], 1);
  assert_int_equal(d->contact_bones[1], -1); /* not a bone */
  assert_true(d->feature_offset[1] == 1.0f && d->feature_scale[1] == 4.0f); /* column 2 is not written */
  anim_db_description_free(d);
  /* A summary claiming more columns than the groups carry is refused, not
   * allocated (the fuzzer's 2^32 columns), nothing handed out. */
  summary.feature_dims = 4;
  d = (anim_db_description_t *)1;
  assert_int_equal(anim__description_from(&m, &d), ANIM_EPROTO);
  assert_null(d);
  summary.feature_dims = UINT32_MAX;
  assert_int_equal(anim__description_from(&m, &d), ANIM_EPROTO);
}

static void test_stream_frame_floats(void **state) {
  float positions[6] = {1, 2, 3, 4, 5, 6}, rotations[8] = {1, 0, 0, 0, 0, 0, 1, 0};
  Animserver__CharacterPose pose = ANIMSERVER__CHARACTER_POSE__INIT;
  pose.character = 9, pose.frame = 3, pose.contacts = 2, pose.transition = 1;
  pose.n_positions = 6, pose.positions = positions;
  pose.n_rotations = 8, pose.rotations = rotations;
  Animserver__CharacterPose *poses[] = {&pose};
  uint64_t gone[] = {5, 6};
  Animserver__StreamMessage m = ANIMSERVER__STREAM_MESSAGE__INIT;
  m.subscription_id = 4, m.tick = 100, m.dt = 1.0f / 60.0f;
  m.n_poses = 1, m.poses = poses;
  m.n_gone = 2, m.gone = gone;
  anim_stream_frame_t *f;
  assert_int_equal(anim__stream_frame_from(&m, 0, 123, &f), 0);
  assert_int_equal(f->subscription, 4);
  assert_int_equal(f->tick, 100);
  assert_int_equal(f->wire_bytes, 123);
  assert_int_equal(f->encoding, ANIM_POSE_FLOAT);
  assert_int_equal(f->nposes, 1);
  assert_int_equal(f->poses[0].character, 9);
  assert_int_equal(f->poses[0].nbones, 2);
  assert_true(f->poses[0].positions[4] == 5.0f);
  assert_true(f->poses[0].rotations[6] == 1.0f);
  assert_int_equal(f->poses[0].contacts, 2);
  assert_int_equal(f->ngone, 2);
  assert_int_equal(f->gone[1], 6);
  anim_stream_frame_free(f);
}

/* A region frame's arrivals and departures; a database name that cannot be
 * one (64 bytes or more) is a protocol error, not a truncated copy. */
static void test_stream_frame_entered_and_left(void **state) {
  float positions[6] = {1, 2, 3, 4, 5, 6}, rotations[8] = {1, 0, 0, 0, 0, 0, 1, 0};
  Animserver__CharacterPose pose = ANIMSERVER__CHARACTER_POSE__INIT;
  pose.character = 9;
  pose.n_positions = 6, pose.positions = positions;
  pose.n_rotations = 8, pose.rotations = rotations;
  Animserver__CharacterPose *poses[] = {&pose};
  Animserver__CharacterEntered entered = ANIMSERVER__CHARACTER_ENTERED__INIT;
  entered.character = 9, entered.database = "default", entered.database_version = 0x1234, entered.bones = 2;
  Animserver__CharacterEntered *entries[] = {&entered};
  uint64_t left[] = {7, 8, 11};
  Animserver__StreamMessage m = ANIMSERVER__STREAM_MESSAGE__INIT;
  m.n_poses = 1, m.poses = poses;
  m.n_entered = 1, m.entered = entries;
  m.n_left = 3, m.left = left;
  anim_stream_frame_t *f;
  assert_int_equal(anim__stream_frame_from(&m, 0, 10, &f), 0);
  assert_int_equal(f->nentered, 1);
  assert_int_equal(f->entered[0].character, 9);
  assert_string_equal(f->entered[0].database, "default");
  assert_int_equal(f->entered[0].database_version, 0x1234);
  assert_int_equal(f->entered[0].bones, 2);
  assert_int_equal(f->nleft, 3);
  assert_int_equal(f->left[2], 11);
  assert_true(f->poses[0].rotations[6] == 1.0f); /* the floats after them are intact */
  anim_stream_frame_free(f);
  char name[65];
  memset(name, 'a', 64), name[64] = 0;
  entered.database = name;
  assert_int_equal(anim__stream_frame_from(&m, 0, 10, &f), ANIM_EPROTO);
  assert_null(f);
}

static void test_inertializer_state_without_offsets(void **state) {
  float anchor[14];
  for (int i = 0; i < 14; i++) anchor[i] = (float)i;
  Animserver__InertializerState m = ANIMSERVER__INERTIALIZER_STATE__INIT;
  m.n_anchor = 14, m.anchor = anchor;
  anim_inertializer_state_t *s;
  assert_int_equal(anim__inertializer_state_from(&m, &s), 0);
  assert_int_equal(s->nbones, 0);
  assert_true(s->anchor[13] == 13.0f);
  anim_inertializer_state_free(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_missing_messages_are_protocol_errors),
      cmocka_unit_test(test_error_codes),
      cmocka_unit_test(test_pose_arrays_must_agree),
      cmocka_unit_test(test_inertializer_state_lengths),
      cmocka_unit_test(test_stream_frame_checks_its_poses),
      cmocka_unit_test(test_builders_refuse_invalid_arguments),
      cmocka_unit_test(test_pose_reply),
      cmocka_unit_test(test_description_contact_bones),
      cmocka_unit_test(test_stream_frame_floats),
      cmocka_unit_test(test_stream_frame_entered_and_left),
      cmocka_unit_test(test_inertializer_state_without_offsets),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
