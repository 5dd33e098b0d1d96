/*
 * fuzz_client_convert.c: libFuzzer target for the client's pure side: the
 * reader (client/reader.c) and every answer converter (client/convert*.c).
 *
 * Input layout: byte 0 flags (bit 0: decode stream frames as rotations_only;
 * bits 1-7: where the framed message is cut in two feeds), the rest one
 * ServerMessage payload. The payload is framed and fed to the reader in two
 * pieces; each message it hands out goes through the converter of its body
 * case, or the stream frame decoder (a converter must refuse an
 * inconsistent message with a code and nothing handed out; a message the
 * client does not convert is passed over). Oracles beyond the sanitizers: the
 * reader hands out the message exactly when protobuf-c alone can unpack the
 * payload, once, and refuses it (ANIM_EPROTO) otherwise; every converted
 * result is walked through the counts it advertises (a count that overstates
 * an array is an out-of-bounds read for ASan); every error code is negative.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "client/convert.h"
#include "client/reader.h"
#include "frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile float sink; /* keeps the walks' reads */

static void check_code(int rc) {
  if (rc > 0) abort();
}

static void walk_floats(const float *values, size_t n) {
  float sum = 0.0f;
  for (size_t i = 0; values && i < n; i++) sum += values[i];
  sink = sum;
}

static void walk_pose(const anim_pose_t *p) {
  if (p->nbones < 0 || p->ncontacts < 0) abort();
  size_t n = (size_t)p->nbones;
  walk_floats(p->local_positions, 3 * n), walk_floats(p->local_rotations, 4 * n);
  walk_floats(p->local_velocities, 3 * n), walk_floats(p->local_angular_velocities, 3 * n);
  walk_floats(p->global_positions, 3 * n), walk_floats(p->global_rotations, 4 * n);
  walk_floats(p->global_velocities, 3 * n), walk_floats(p->global_angular_velocities, 3 * n);
  for (int i = 0; i < p->ncontacts; i++)
    if (p->contacts[i] > 1) abort();
}

static void walk_search(const anim_search_reply_t *s) {
  for (int i = 0; i < s->nresults; i++) {
    const anim_result_t *r = &s->results[i];
    for (int j = 0; j < r->nmatches; j++)
      if (r->matches[j].pose) walk_pose(r->matches[j].pose);
    for (int j = 0; j < r->nexplain; j++)
      if (memchr(r->explain_names[j], 0, sizeof r->explain_names[j]) == NULL) abort();
    walk_floats(r->explain_costs, (size_t)r->nexplain);
  }
}

static void walk_machine(const anim_machine_summary_t *m) {
  for (int i = 0; i < m->nstates; i++) sink = (float)strlen(m->states[i].name) + (float)strlen(m->states[i].motion);
  for (int i = 0; i < m->nevents; i++) sink = (float)strlen(m->events[i]);
  for (int i = 0; i < m->nparams; i++) sink = (float)strlen(m->params[i]);
}

static void walk_state(const anim_inertializer_state_t *s) {
  size_t n = (size_t)s->nbones;
  walk_floats(s->offset_positions, 3 * n), walk_floats(s->offset_velocities, 3 * n);
  walk_floats(s->offset_rotations, 4 * n), walk_floats(s->offset_angular_velocities, 3 * n);
}

/* The converter of r's body case (a oneof: the other members alias it). */
static void convert_response(void *ctx, const Animserver__Response *r, size_t wire_bytes) {
  (void)ctx, (void)wire_bytes;
  if (r->error && anim__error_code(r->error) >= 0) abort();
  int rc = 0;
  switch (r->body_case) {
  case ANIMSERVER__RESPONSE__BODY_HELLO: {
    anim_hello_info_t hello;
    rc = anim__hello_info_from(r->hello, &hello);
    if (rc == 0 && hello.ncapabilities > ANIM_MAX_CAPABILITIES) abort();
    if (rc == 0 && !memchr(hello.server_version, 0, sizeof hello.server_version)) abort();
    break;
  }
  case ANIMSERVER__RESPONSE__BODY_LIST_DATABASES: {
    anim_db_summary_t *summaries;
    int count;
    if ((rc = anim__summaries_from(r->list_databases, &summaries, &count)) == 0) {
      for (int i = 0; i < count; i++)
        if (memchr(summaries[i].name, 0, sizeof summaries[i].name) == NULL) abort();
      free(summaries);
    }
    break;
  }
  case ANIMSERVER__RESPONSE__BODY_DESCRIBE_DATABASE: {
    anim_db_description_t *d;
    if ((rc = anim__description_from(r->describe_database, &d)) == 0) {
      for (int i = 0; i < d->nbones; i++) sink = (float)d->bone_parents[i] + (float)strlen(d->bone_names[i]);
      for (int i = 0; i < d->nranges; i++)
        if (d->ranges[i].ntags > 8) abort();
      for (int i = 0; i < d->ngroups; i++)
        if (d->groups[i].nsamples > 8) abort();
      walk_floats(d->feature_offset, d->summary.feature_dims), walk_floats(d->feature_scale, d->summary.feature_dims);
      for (int i = 0; i < d->ncontact_bones; i++)
        if (d->contact_bones[i] < -1 || d->contact_bones[i] >= d->nbones) abort();
      anim_db_description_free(d);
    }
    break;
  }
  case ANIMSERVER__RESPONSE__BODY_SEARCH:
  case ANIMSERVER__RESPONSE__BODY_BATCH_SEARCH: {
    anim_search_reply_t *search;
    rc = r->body_case == ANIMSERVER__RESPONSE__BODY_SEARCH ? anim__search_from(r->search, &search)
                                                          : anim__batch_search_from(r->batch_search, &search);
    if (rc == 0) walk_search(search), anim_search_reply_free(search);
    break;
  }
  case ANIMSERVER__RESPONSE__BODY_POSE: {
    anim_pose_reply_t *poses;
    if ((rc = anim__pose_reply_from(r->pose, &poses)) == 0) {
      for (int i = 0; i < poses->nposes; i++) walk_pose(&poses->poses[i]);
      anim_pose_reply_free(poses);
    }
    break;
  }
  case ANIMSERVER__RESPONSE__BODY_INERTIALIZE_TRANSITION: {
    anim_inertializer_state_t *state;
    if ((rc = anim__transition_from(r->inertialize_transition, &state)) == 0)
      walk_state(state), anim_inertializer_state_free(state);
    break;
  }
  case ANIMSERVER__RESPONSE__BODY_INERTIALIZE_EVALUATE: {
    anim_inertializer_state_t *state;
    anim_pose_t *pose;
    rc = anim__evaluate_from(r->inertialize_evaluate, &state, &pose);
    if (rc == 0) {
      walk_state(state);
      if (pose) walk_pose(pose);
      anim_inertializer_state_free(state);
      anim_pose_free(pose);
    } else if (state || pose) {
      abort(); /* nothing handed out on failure */
    }
    break;
  }
  case ANIMSERVER__RESPONSE__BODY_TRANSITION_COST: {
    anim_transition_cost_t *cost;
    if ((rc = anim__transition_cost_from(r->transition_cost, &cost)) == 0) {
      walk_floats(cost->exact_per_bone, (size_t)cost->nbones);
      walk_floats(cost->approximate_per_bone, (size_t)cost->nbones);
      anim_transition_cost_free(cost);
    }
    break;
  }
  case ANIMSERVER__RESPONSE__BODY_SPRING_TUNE: {
    anim_spring_tuning_t tuning;
    rc = anim__spring_tuning_from(r->spring_tune, &tuning);
    break;
  }
  case ANIMSERVER__RESPONSE__BODY_CHARACTER_STATE: {
    anim_character_state_t *character;
    if ((rc = anim__character_state_from(r->character_state, &character)) == 0) {
      if (character->ntrajectory > 8) abort();
      walk_state(&character->inertializer);
      anim_character_state_free(character);
    }
    break;
  }
  case ANIMSERVER__RESPONSE__BODY_SERVER_STATS: {
    anim_server_stats_t stats;
    rc = anim__server_stats_from(r->server_stats, &stats);
    break;
  }
  case ANIMSERVER__RESPONSE__BODY_LOAD_MACHINE: {
    anim_machine_summary_t *m;
    if ((rc = anim__machine_load_from(r->load_machine, &m)) == 0) walk_machine(m), anim_machine_summary_free(m);
    break;
  }
  case ANIMSERVER__RESPONSE__BODY_CHECK_MACHINE: {
    anim_machine_check_t *c;
    if ((rc = anim__machine_check_from(r->check_machine, &c)) == 0) {
      for (int i = 0; i < c->ndiagnostics; i++) sink = (float)strlen(c->diagnostics[i].message);
      if (c->machine) walk_machine(c->machine);
      anim_machine_check_free(c);
    }
    break;
  }
  case ANIMSERVER__RESPONSE__BODY_LIST_MACHINES: {
    anim_machine_summary_t **list;
    int count;
    if ((rc = anim__machine_list_from(r->list_machines, &list, &count)) == 0) {
      for (int i = 0; i < count; i++) walk_machine(list[i]);
      anim__machine_list_free(list, count);
    }
    break;
  }
  case ANIMSERVER__RESPONSE__BODY_BUILD_GRAPH:
  case ANIMSERVER__RESPONSE__BODY_DESCRIBE_GRAPH: {
    const Animserver__GraphDescription *g = r->body_case == ANIMSERVER__RESPONSE__BODY_BUILD_GRAPH
                                                ? r->build_graph->graph
                                                : r->describe_graph->graph;
    anim_graph_description_t *d;
    if ((rc = anim__graph_description_from(g, &d)) == 0) {
      for (int i = 0; i < d->ntransitions; i++) sink = d->transition_list[i].distance;
      walk_floats(d->matrix, (size_t)d->matrix_size * (size_t)d->matrix_size);
      anim_graph_description_free(d);
    }
    break;
  }
  case ANIMSERVER__RESPONSE__BODY_QUERY_GRAPH: {
    anim_graph_walk_t *w;
    if ((rc = anim__graph_walk_from(r->query_graph, &w)) == 0) {
      for (int i = 0; i < w->nsteps; i++) sink = w->steps[i].time;
      walk_floats(w->roots, 2 * (size_t)w->nroots);
      anim_graph_walk_free(w);
    }
    break;
  }
  case ANIMSERVER__RESPONSE__BODY_ALIGN: {
    anim_align_result_t a;
    rc = anim__align_from(r->align, &a);
    break;
  }
  case ANIMSERVER__RESPONSE__BODY_FIT_POSE: {
    anim_fit_result_t *f;
    if ((rc = anim__fit_from(r->fit_pose, &f)) == 0) {
      size_t n = (size_t)f->nbones;
      walk_floats(f->local_positions, 3 * n), walk_floats(f->local_rotations, 4 * n);
      walk_floats(f->global_positions, 3 * n), walk_floats(f->global_rotations, 4 * n);
      walk_floats(f->residuals, (size_t)f->nresiduals);
      anim_fit_result_free(f);
    }
    break;
  }
  default:
    break;
  }
  check_code(rc);
}

static void convert_stream(void *ctx, const Animserver__StreamMessage *m, size_t wire_bytes) {
  int rotations_only = *(const int *)ctx;
  anim_stream_frame_t *f;
  int rc = anim__stream_frame_from(m, rotations_only, wire_bytes, &f);
  check_code(rc);
  if (rc) return;
  for (int i = 0; i < f->nposes; i++) {
    const anim_character_pose_t *p = &f->poses[i];
    if (p->nbones < 1) abort();
    walk_floats(p->positions, rotations_only ? 3 : 3 * (size_t)p->nbones);
    walk_floats(p->rotations, 4 * (size_t)p->nbones);
    walk_floats(p->global_positions, 3 * (size_t)p->nbones);
    if (p->depth < 0 || p->depth > 8) abort();
    walk_floats(p->state_times, (size_t)p->depth);
  }
  for (int i = 0; i < f->ngone; i++) sink = (float)f->gone[i];
  anim_stream_frame_free(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  int rotations_only = data[0] & 1;
  const uint8_t *payload = data + 1;
  size_t len = size - 1;
  Animserver__ServerMessage *alone = animserver__server_message__unpack(NULL, len, payload);
  int unpacks = alone != NULL;
  if (alone) animserver__server_message__free_unpacked(alone, NULL);

  uint8_t *framed = malloc(len + ANIM_VARINT_MAX);
  if (!framed) return 0;
  size_t header = anim_varint_encode(len, framed);
  if (len) memcpy(framed + header, payload, len);
  size_t total = header + len, cut = (size_t)(data[0] >> 1) % (total + 1);

  anim__reader_t reader;
  anim__reader_init(&reader, 1u << 20);
  anim__reader_handlers_t handlers = {convert_response, NULL, convert_stream, &rotations_only};
  int handed = 0, rc = 0;
  if (anim__reader_feed(&reader, framed, cut) != 0) abort();
  while ((rc = anim__reader_dispatch(&reader, &handlers)) == 1) handed++;
  if (rc == 0) {
    if (anim__reader_feed(&reader, framed + cut, total - cut) != 0) abort();
    while ((rc = anim__reader_dispatch(&reader, &handlers)) == 1) handed++;
  }
  /* The reader agrees with protobuf-c alone: one message, or a refusal. */
  if (unpacks ? (handed != 1 || rc != 0) : (handed != 0 || rc != ANIM_EPROTO)) abort();
  anim__reader_free(&reader);
  free(framed);
  return 0;
}
