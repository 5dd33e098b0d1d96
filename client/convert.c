/*
 * convert.c: answers -> the client's plain C results (see convert.h), and
 * the public functions that free those results.
 *
 * Pure: a protobuf message in, a C struct out, 0 or a code; nothing here
 * knows of sockets, ids or callbacks. Every array a result exposes next to a
 * count is checked against that count (a pose's arrays all describe the same
 * bones), so a caller indexing by the count never reads past an array,
 * whatever the server sent. Here: the session, databases, search, poses,
 * inertialization, characters and the server's counters, and the helpers
 * the area converters share. Stream frames are convert_stream.c's;
 * machines, graphs and fitting convert_machine.c's, convert_graph.c's and
 * convert_fit.c's; the other requests are built in convert_request.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "convert.h"

static void copy_string(char *out, size_t size, const char *in) { snprintf(out, size, "%s", in ? in : ""); }

int anim__name_from(char *out, size_t size, const char *s) {
  size_t n = s ? strlen(s) : 0;
  if (n >= size) return ANIM_EPROTO;
  memcpy(out, s ? s : "", n + 1);
  return 0;
}

void anim__vec3_from(float *out, const Animserver__Vec3 *v) {
  out[0] = v ? v->x : 0.0f, out[1] = v ? v->y : 0.0f, out[2] = v ? v->z : 0.0f;
}

void anim__quat_from(float *out, const Animserver__Quat *q) {
  out[0] = q ? q->w : 1.0f, out[1] = q ? q->x : 0.0f, out[2] = q ? q->y : 0.0f, out[3] = q ? q->z : 0.0f;
}

float *anim__floats_copy(const float *src, size_t n, size_t want, int *rc) {
  if (*rc) return NULL;
  if (n != want) {
    *rc = ANIM_EPROTO;
    return NULL;
  }
  float *out = malloc((n + 1) * sizeof *out);
  if (!out) *rc = ANIM_ENOMEM;
  else if (n) memcpy(out, src, n * sizeof *out);
  return out;
}

int anim__error_code(const Animserver__Error *m) {
  /* Codes cross the wire as the positive value of an ANIM_E*; a newer
   * server's unknown code still passes (anim_strerror names it unknown). */
  if (!m || (int)m->code <= 0 || (int)m->code > 1000) return ANIM_EPROTO;
  return -(int)m->code;
}

/* ---- session ----------------------------------------------------------------------- */

int anim__hello_info_from(const Animserver__HelloResponse *m, anim_hello_info_t *out) {
  memset(out, 0, sizeof *out);
  if (!m) return ANIM_EPROTO;
  out->protocol_version = m->protocol_version;
  copy_string(out->server_version, sizeof out->server_version, m->server_version);
  for (size_t i = 0; i < m->n_capabilities && out->ncapabilities < ANIM_MAX_CAPABILITIES; i++)
    copy_string(out->capabilities[out->ncapabilities++], sizeof out->capabilities[0], m->capabilities[i]);
  const Animserver__Limits *l = m->limits;
  if (l) {
    out->max_frame_bytes = l->max_frame_bytes, out->max_in_flight = l->max_in_flight;
    out->max_batch = l->max_batch, out->max_k = l->max_k;
    out->output_soft_limit = l->output_soft_limit_bytes, out->output_hard_limit = l->output_hard_limit_bytes;
    out->max_characters = l->max_characters, out->tick_rate = l->tick_rate;
    out->max_pose_frames = l->max_pose_frames, out->decode_budget_bytes = l->decode_budget_bytes;
    out->stream_soft_limit_bytes = l->stream_soft_limit_bytes;
    out->max_characters_total = l->max_characters_total, out->max_subscriptions = l->max_subscriptions;
    out->max_ids = l->max_ids, out->max_string_bytes = l->max_string_bytes;
    out->world_limit = l->world_limit;
    out->max_trackers_ahead = l->max_trackers_ahead, out->max_trackers_waiting = l->max_trackers_waiting;
    out->max_push_ahead = l->max_push_ahead;
    out->max_machines = l->max_machines, out->max_machine_bytes = l->max_machine_bytes;
    out->max_events_waiting = l->max_events_waiting, out->max_path_points = l->max_path_points;
    out->max_query_seconds = l->max_query_seconds, out->max_graph_builds = l->max_graph_builds;
    out->max_path_expansions = l->max_path_expansions, out->max_align_points = l->max_align_points;
    out->max_trackers = l->max_trackers, out->fit_models_per_database = l->fit_models_per_database;
    out->max_pushes_pending = l->max_pushes_pending;
  }
  out->connection_id = m->connection_id;
  out->admin = m->admin;
  return 0;
}

/* ---- databases ------------------------------------------------------------------------ */

int anim__summary_from(const Animserver__DatabaseSummary *m, anim_db_summary_t *out) {
  memset(out, 0, sizeof *out);
  if (!m) return 0;
  copy_string(out->name, sizeof out->name, m->name);
  out->version = m->version;
  out->frames = m->frames;
  out->bones = m->bones;
  out->frame_rate = m->frame_rate;
  out->feature_dims = m->feature_dims;
  out->ranges = m->ranges;
  out->memory_bytes = m->memory_bytes;
  out->graph_memory_bytes = m->graph_memory_bytes;
  return 0;
}

int anim__summaries_from(const Animserver__ListDatabasesResponse *m, anim_db_summary_t **out_summaries,
                         int *out_count) {
  *out_summaries = NULL;
  *out_count = 0;
  if (!m) return ANIM_EPROTO;
  if (m->n_databases == 0) return 0;
  anim_db_summary_t *s = calloc(m->n_databases, sizeof *s);
  if (!s) return ANIM_ENOMEM;
  for (size_t i = 0; i < m->n_databases; i++) anim__summary_from(m->databases[i], &s[i]);
  *out_summaries = s;
  *out_count = (int)m->n_databases;
  return 0;
}

void anim_db_description_free(anim_db_description_t *d) {
  if (!d) return;
  free(d->bone_names);
  free(d->bone_parents);
  free(d->ranges);
  free(d->groups);
  free(d->feature_offset);
  free(d->feature_scale);
  free(d->contact_bones);
  free(d);
}

static void group_from(anim_feature_group_info_t *out, const Animserver__FeatureGroup *g, anim_db_description_t *d) {
  size_t dims = d->summary.feature_dims;
  out->kind = (int)g->kind;
  copy_string(out->bone, sizeof out->bone, g->bone);
  out->weight = g->weight;
  out->halflife = g->halflife;
  for (size_t s = 0; s < g->n_frame_offsets && out->nsamples < 8; s++)
    out->frame_offsets[out->nsamples++] = g->frame_offsets[s];
  out->first_column = g->first_column;
  out->dims = g->dims;
  /* Columns outside the summary's dims are ignored, not written. */
  for (size_t c = 0; c < g->n_offset && c < g->n_scale && (size_t)g->first_column + c < dims; c++) {
    d->feature_offset[g->first_column + c] = g->offset[c];
    d->feature_scale[g->first_column + c] = g->scale[c];
  }
}

int anim__description_from(const Animserver__DescribeDatabaseResponse *m, anim_db_description_t **out) {
  *out = NULL;
  if (!m) return ANIM_EPROTO;
  anim_db_description_t *d = calloc(1, sizeof *d);
  if (!d) return ANIM_ENOMEM;
  anim__summary_from(m->summary, &d->summary);
  size_t dims = d->summary.feature_dims, carried = 0;
  /* Every column's offset and scale come in the groups: a summary claiming
   * more columns than they carry is inconsistent (and would size the arrays
   * by the peer's word alone: the fuzzer found 2^32 columns). */
  for (size_t i = 0; i < m->n_features; i++) carried += m->features[i]->n_offset;
  if (dims > carried) {
    free(d);
    return ANIM_EPROTO;
  }
  d->bone_names = calloc(m->n_bones + 1, sizeof *d->bone_names);
  d->bone_parents = calloc(m->n_bones + 1, sizeof *d->bone_parents);
  d->ranges = calloc(m->n_ranges + 1, sizeof *d->ranges);
  d->groups = calloc(m->n_features + 1, sizeof *d->groups);
  d->feature_offset = calloc(dims + 1, sizeof *d->feature_offset);
  d->feature_scale = calloc(dims + 1, sizeof *d->feature_scale);
  d->contact_bones = calloc(m->n_contact_bones + 1, sizeof *d->contact_bones);
  if (!d->bone_names || !d->bone_parents || !d->ranges || !d->groups || !d->feature_offset || !d->feature_scale ||
      !d->contact_bones) {
    anim_db_description_free(d);
    return ANIM_ENOMEM;
  }
  for (size_t i = 0; i < m->n_bones; i++) {
    copy_string(d->bone_names[i], sizeof d->bone_names[i], m->bones[i]->name);
    d->bone_parents[i] = m->bones[i]->parent;
  }
  d->nbones = (int)m->n_bones;
  for (size_t i = 0; i < m->n_ranges; i++) {
    anim_range_info_t *r = &d->ranges[i];
    copy_string(r->name, sizeof r->name, m->ranges[i]->name);
    r->start = m->ranges[i]->start;
    r->stop = m->ranges[i]->stop;
    for (size_t t = 0; t < m->ranges[i]->n_tags && r->ntags < 8; t++)
      copy_string(r->tags[r->ntags++], sizeof r->tags[0], m->ranges[i]->tags[t]);
  }
  d->nranges = (int)m->n_ranges;
  for (size_t i = 0; i < m->n_features; i++) group_from(&d->groups[i], m->features[i], d);
  d->ngroups = (int)m->n_features;
  /* Contact bones as bone indices (bit i of a stream pose's contacts); -1: not a bone. */
  for (size_t i = 0; i < m->n_contact_bones; i++) {
    d->contact_bones[i] = -1;
    for (int b = 0; b < d->nbones; b++)
      if (strcmp(d->bone_names[b], m->contact_bones[i] ? m->contact_bones[i] : "") == 0) d->contact_bones[i] = b;
  }
  d->ncontact_bones = (int)m->n_contact_bones;
  *out = d;
  return 0;
}

/* ---- poses ---------------------------------------------------------------------------- */

/* One float array of a pose: the wire's values and count, floats per bone,
 * and where the copy goes. */
typedef struct {
  const float *values;
  size_t count;
  size_t width;
  const float **out;
} pose_field_t;

/* Copies every non-empty field, all of which must describe the same bones.
 * *out_nbones: their number (0 when every field is empty). */
static int pose_fields_copy(const pose_field_t *fields, int n, int *out_nbones) {
  size_t bones = 0;
  int have = 0;
  for (int i = 0; i < n; i++) {
    if (!fields[i].count) continue;
    if (fields[i].count % fields[i].width) return ANIM_EPROTO;
    size_t b = fields[i].count / fields[i].width;
    if (have && b != bones) return ANIM_EPROTO;
    bones = b, have = 1;
  }
  for (int i = 0; i < n; i++) {
    *fields[i].out = NULL;
    if (!fields[i].count) continue;
    float *copy = malloc(fields[i].count * sizeof *copy);
    if (!copy) {
      for (int j = 0; j < i; j++) free((void *)*fields[j].out), *fields[j].out = NULL;
      return ANIM_ENOMEM;
    }
    memcpy(copy, fields[i].values, fields[i].count * sizeof *copy);
    *fields[i].out = copy;
  }
  *out_nbones = (int)bones;
  return 0;
}

static void pose_free_arrays(anim_pose_t *pose) {
  free((void *)pose->local_positions);
  free((void *)pose->local_rotations);
  free((void *)pose->local_velocities);
  free((void *)pose->local_angular_velocities);
  free((void *)pose->global_positions);
  free((void *)pose->global_rotations);
  free((void *)pose->global_velocities);
  free((void *)pose->global_angular_velocities);
  free((void *)pose->contacts);
}

static int pose_from(anim_pose_t *out, const Animserver__Pose *m) {
  memset(out, 0, sizeof *out);
  out->frame = m->frame;
  const pose_field_t fields[] = {
      {m->local_positions, m->n_local_positions, 3, &out->local_positions},
      {m->local_rotations, m->n_local_rotations, 4, &out->local_rotations},
      {m->local_velocities, m->n_local_velocities, 3, &out->local_velocities},
      {m->local_angular_velocities, m->n_local_angular_velocities, 3, &out->local_angular_velocities},
      {m->global_positions, m->n_global_positions, 3, &out->global_positions},
      {m->global_rotations, m->n_global_rotations, 4, &out->global_rotations},
      {m->global_velocities, m->n_global_velocities, 3, &out->global_velocities},
      {m->global_angular_velocities, m->n_global_angular_velocities, 3, &out->global_angular_velocities},
  };
  int rc = pose_fields_copy(fields, (int)(sizeof fields / sizeof fields[0]), &out->nbones);
  if (rc) return rc;
  if (m->n_contacts) {
    uint8_t *contacts = malloc(m->n_contacts);
    if (!contacts) {
      pose_free_arrays(out);
      return ANIM_ENOMEM;
    }
    for (size_t i = 0; i < m->n_contacts; i++) contacts[i] = m->contacts[i] ? 1 : 0;
    out->contacts = contacts;
    out->ncontacts = (int)m->n_contacts;
  }
  return 0;
}

void anim_pose_free(anim_pose_t *pose) {
  if (!pose) return;
  pose_free_arrays(pose);
  free(pose);
}

void anim_pose_reply_free(anim_pose_reply_t *reply) {
  if (!reply) return;
  for (int i = 0; i < reply->nposes; i++) pose_free_arrays(&reply->poses[i]);
  free(reply->poses);
  free(reply);
}

int anim__pose_reply_from(const Animserver__PoseResponse *m, anim_pose_reply_t **out) {
  *out = NULL;
  if (!m) return ANIM_EPROTO;
  anim_pose_reply_t *reply = calloc(1, sizeof *reply);
  if (!reply) return ANIM_ENOMEM;
  reply->database_version = m->database_version;
  reply->poses = calloc(m->n_poses + 1, sizeof *reply->poses);
  int rc = reply->poses ? 0 : ANIM_ENOMEM;
  for (size_t i = 0; rc == 0 && i < m->n_poses; i++) {
    rc = pose_from(&reply->poses[i], m->poses[i]);
    if (rc == 0) reply->nposes++;
  }
  if (rc) {
    anim_pose_reply_free(reply);
    return rc;
  }
  *out = reply;
  return 0;
}

/* ---- search ------------------------------------------------------------------------------ */

void anim_search_reply_free(anim_search_reply_t *reply) {
  if (!reply) return;
  for (int i = 0; i < reply->nresults; i++) {
    anim_result_t *r = &reply->results[i];
    for (int j = 0; j < r->nmatches; j++) anim_pose_free(r->matches[j].pose);
    free(r->matches);
    free(r->explain_names);
    free(r->explain_costs);
  }
  free(reply->results);
  free(reply);
}

/* Fills out (zeroed by the caller); what it allocated is freed with the reply. */
static int result_from(anim_result_t *out, const Animserver__SearchResult *m) {
  if (!m) return 0;
  out->matches = calloc(m->n_matches + 1, sizeof *out->matches);
  out->explain_names = calloc(m->n_explanation + 1, sizeof *out->explain_names);
  out->explain_costs = calloc(m->n_explanation + 1, sizeof *out->explain_costs);
  if (!out->matches || !out->explain_names || !out->explain_costs) return ANIM_ENOMEM;
  for (size_t i = 0; i < m->n_matches; i++) {
    const Animserver__Match *in = m->matches[i];
    anim_match_t *match = &out->matches[out->nmatches++];
    match->frame = in->frame;
    match->range = in->range;
    copy_string(match->range_name, sizeof match->range_name, in->range_name);
    match->cost = in->cost;
    if (in->pose) {
      anim_pose_t *pose = malloc(sizeof *pose);
      if (!pose) return ANIM_ENOMEM;
      int rc = pose_from(pose, in->pose);
      if (rc) {
        free(pose);
        return rc;
      }
      match->pose = pose;
    }
  }
  for (size_t i = 0; i < m->n_explanation; i++) {
    copy_string(out->explain_names[i], sizeof out->explain_names[i], m->explanation[i]->name);
    out->explain_costs[i] = m->explanation[i]->cost;
  }
  out->nexplain = (int)m->n_explanation;
  out->margin = m->margin;
  return 0;
}

static int search_reply_from(uint64_t version, Animserver__SearchResult *const *results, size_t n,
                             anim_search_reply_t **out) {
  *out = NULL;
  anim_search_reply_t *reply = calloc(1, sizeof *reply);
  if (!reply) return ANIM_ENOMEM;
  reply->database_version = version;
  reply->results = calloc(n + 1, sizeof *reply->results);
  int rc = reply->results ? 0 : ANIM_ENOMEM;
  for (size_t i = 0; rc == 0 && i < n; i++) rc = result_from(&reply->results[reply->nresults++], results[i]);
  if (rc) {
    anim_search_reply_free(reply);
    return rc;
  }
  *out = reply;
  return 0;
}

int anim__search_from(const Animserver__SearchResponse *m, anim_search_reply_t **out) {
  *out = NULL;
  if (!m) return ANIM_EPROTO;
  return search_reply_from(m->database_version, &m->result, m->result ? 1 : 0, out);
}

int anim__batch_search_from(const Animserver__BatchSearchResponse *m, anim_search_reply_t **out) {
  *out = NULL;
  if (!m) return ANIM_EPROTO;
  return search_reply_from(m->database_version, m->results, m->n_results, out);
}

/* ---- inertialization ------------------------------------------------------------------ */

void anim_inertializer_state_free(anim_inertializer_state_t *state) {
  if (!state) return;
  free(state->offset_positions); /* one block holds all four arrays */
  free(state);
}

/* Fills out: its four offset arrays in one block (freed through offset_positions). */
static int state_fill(const Animserver__InertializerState *m, anim_inertializer_state_t *out) {
  memset(out, 0, sizeof *out);
  out->anchor[3] = out->anchor[10] = 1.0f; /* identity rotations when the answer has no anchor */
  if (!m) return 0;
  size_t n = m->n_offset_positions / 3;
  if (m->n_offset_positions != 3 * n || m->n_offset_velocities != 3 * n || m->n_offset_rotations != 4 * n ||
      m->n_offset_angular_velocities != 3 * n || (m->n_anchor != 14 && m->n_anchor != 0))
    return ANIM_EPROTO;
  float *block = calloc(13 * n + 1, sizeof *block);
  if (!block) return ANIM_ENOMEM;
  out->nbones = (int)n;
  out->offset_positions = block, out->offset_velocities = block + 3 * n;
  out->offset_rotations = block + 6 * n, out->offset_angular_velocities = block + 10 * n;
  if (n > 0) { /* a state asked without offsets has NULL wire arrays */
    memcpy(out->offset_positions, m->offset_positions, 3 * n * sizeof *block);
    memcpy(out->offset_velocities, m->offset_velocities, 3 * n * sizeof *block);
    memcpy(out->offset_rotations, m->offset_rotations, 4 * n * sizeof *block);
    memcpy(out->offset_angular_velocities, m->offset_angular_velocities, 3 * n * sizeof *block);
  }
  if (m->n_anchor == 14) memcpy(out->anchor, m->anchor, sizeof out->anchor);
  return 0;
}

int anim__inertializer_state_from(const Animserver__InertializerState *m, anim_inertializer_state_t **out) {
  *out = NULL;
  if (!m) return ANIM_EPROTO;
  anim_inertializer_state_t *s = malloc(sizeof *s);
  if (!s) return ANIM_ENOMEM;
  int rc = state_fill(m, s);
  if (rc) {
    free(s);
    return rc;
  }
  *out = s;
  return 0;
}

int anim__transition_from(const Animserver__InertializeTransitionResponse *m, anim_inertializer_state_t **out) {
  *out = NULL;
  return m ? anim__inertializer_state_from(m->state, out) : ANIM_EPROTO;
}

int anim__evaluate_from(const Animserver__InertializeEvaluateResponse *m, anim_inertializer_state_t **out_state,
                        anim_pose_t **out_pose) {
  *out_state = NULL;
  *out_pose = NULL;
  if (!m) return ANIM_EPROTO;
  int rc = anim__inertializer_state_from(m->state, out_state);
  if (rc || !m->output) return rc;
  anim_pose_t *pose = calloc(1, sizeof *pose);
  if (!pose) rc = ANIM_ENOMEM;
  if (rc == 0) {
    /* A local pose whose root (bone 0) is in world space. */
    const Animserver__PoseState *o = m->output;
    const pose_field_t fields[] = {
        {o->positions, o->n_positions, 3, &pose->local_positions},
        {o->velocities, o->n_velocities, 3, &pose->local_velocities},
        {o->rotations, o->n_rotations, 4, &pose->local_rotations},
        {o->angular_velocities, o->n_angular_velocities, 3, &pose->local_angular_velocities},
    };
    rc = pose_fields_copy(fields, 4, &pose->nbones);
  }
  if (rc) {
    free(pose);
    anim_inertializer_state_free(*out_state);
    *out_state = NULL;
    return rc;
  }
  *out_pose = pose;
  return 0;
}

void anim_transition_cost_free(anim_transition_cost_t *cost) {
  if (!cost) return;
  free(cost->names);
  free(cost->exact_per_bone);
  free(cost->approximate_per_bone);
  free(cost);
}

int anim__transition_cost_from(const Animserver__TransitionCostResponse *m, anim_transition_cost_t **out) {
  *out = NULL;
  if (!m) return ANIM_EPROTO;
  anim_transition_cost_t *c = calloc(1, sizeof *c);
  if (c) {
    c->names = calloc(m->n_bones + 1, sizeof *c->names);
    c->exact_per_bone = calloc(m->n_bones + 1, sizeof *c->exact_per_bone);
    c->approximate_per_bone = calloc(m->n_bones + 1, sizeof *c->approximate_per_bone);
  }
  if (!c || !c->names || !c->exact_per_bone || !c->approximate_per_bone) {
    anim_transition_cost_free(c);
    return ANIM_ENOMEM;
  }
  c->exact = m->exact;
  c->approximate = m->approximate;
  for (size_t i = 0; i < m->n_bones; i++) {
    copy_string(c->names[i], sizeof c->names[i], m->bones[i]->bone);
    c->exact_per_bone[i] = m->bones[i]->exact;
    c->approximate_per_bone[i] = m->bones[i]->approximate;
  }
  c->nbones = (int)m->n_bones;
  *out = c;
  return 0;
}

int anim__spring_tuning_from(const Animserver__SpringTuneResponse *m, anim_spring_tuning_t *out) {
  memset(out, 0, sizeof *out);
  if (!m) return ANIM_EPROTO;
  out->halflife = m->halflife;
  out->stiffness = m->stiffness;
  out->damping = m->damping;
  out->erp = m->erp;
  out->cfm = m->cfm;
  return 0;
}

/* ---- characters and the server ------------------------------------------------------------ */

void anim__controller_params_from(const Animserver__ControllerParams *m, anim_character_params_t *p) {
  memset(p, 0, sizeof *p);
  if (!m) return;
  p->search_interval = (int)m->search_interval;
  p->inertialize_halflife = m->inertialize_halflife;
  p->velocity_halflife = m->velocity_halflife, p->rotation_halflife = m->rotation_halflife;
  p->forward_speed = m->forward_speed, p->side_speed = m->side_speed, p->back_speed = m->back_speed;
  p->ignore_surrounding = (int)m->ignore_surrounding, p->ignore_range_end = (int)m->ignore_range_end;
  p->transition_cost = m->transition_cost, p->replan_threshold = m->replan_threshold;
  p->input_f = m->input_f, p->input_zeta = m->input_zeta, p->input_r = m->input_r;
  p->no_play_rate = m->no_play_rate, p->no_stand_warp = m->no_stand_warp, p->no_orientation_warp = m->no_orientation_warp;
  p->play_rate_min = m->play_rate_min, p->play_rate_max = m->play_rate_max;
  p->orientation_warp_max = m->orientation_warp_max;
  p->no_stride_warp = m->no_stride_warp;
  p->stride_scale_min = m->stride_scale_min, p->stride_scale_max = m->stride_scale_max;
  p->no_root_steering = m->no_root_steering, p->root_steering_max = m->root_steering_max;
}

void anim_character_state_free(anim_character_state_t *state) {
  if (!state) return;
  free(state->inertializer.offset_positions); /* one block holds the four offset arrays */
  free(state);
}

int anim__character_state_from(const Animserver__CharacterStateResponse *m, anim_character_state_t **out) {
  *out = NULL;
  if (!m) return ANIM_EPROTO;
  anim_character_state_t *s = calloc(1, sizeof *s);
  if (!s) return ANIM_ENOMEM;
  int rc = state_fill(m->inertializer, &s->inertializer);
  if (rc) {
    free(s);
    return rc;
  }
  s->database_version = m->database_version, s->tick = m->tick;
  copy_string(s->database, sizeof s->database, m->database);
  anim__vec3_from(s->position, m->position), anim__vec3_from(s->velocity, m->velocity);
  anim__quat_from(s->rotation, m->rotation), anim__vec3_from(s->angular_velocity, m->angular_velocity);
  anim__vec3_from(s->desired_velocity, m->desired_velocity), anim__quat_from(s->desired_rotation, m->desired_rotation);
  for (size_t i = 0; i < m->n_trajectory && i < 8; i++)
    anim__vec3_from(s->trajectory[s->ntrajectory++], m->trajectory[i]);
  s->frame = m->frame, s->range = m->range;
  copy_string(s->range_name, sizeof s->range_name, m->range_name);
  s->time_since_transition = m->time_since_transition;
  s->searches = m->searches, s->transitions = m->transitions;
  s->inertialize_halflife = m->inertialize_halflife;
  /* What the character's mode reports (an empty part for the others). */
  s->mode = (int)m->mode;
  copy_string(s->machine, sizeof s->machine, m->machine);
  for (size_t l = 0; l < m->n_state_path && l < 8; l++) {
    copy_string(s->state_path[l], sizeof s->state_path[l], m->state_path[l]);
    s->state_times[l] = l < m->n_state_times ? m->state_times[l] : 0.0f;
    s->depth = (int)l + 1;
  }
  s->events_dropped = m->events_dropped;
  copy_string(s->follow, sizeof s->follow, m->follow);
  s->path_arc = m->path_arc, s->plans = m->plans, s->expansions = m->expansions;
  s->arrived = m->arrived;
  s->play_rate = m->play_rate, s->warp_angle = m->warp_angle, s->warp_held = m->warp_held;
  s->stride_scale = m->stride_scale, s->root_steering = m->root_steering;
  s->physics = (int)m->physics, s->physics_root_error = m->physics_root_error, s->pushes = m->pushes;
  s->physics_total_mass = m->physics_total_mass;
  s->scale = m->scale;
  anim__controller_params_from(m->params, &s->params);
  for (size_t k = 0; k < m->n_tracker_residuals && k < 8; k++)
    s->tracker_residuals[s->ntracker_residuals++] = m->tracker_residuals[k];
  for (size_t f = 0; f < m->n_feet && f < 4; f++, s->nfeet++) {
    if (!m->feet[f]) continue;
    copy_string(s->feet[f].bone, sizeof s->feet[f].bone, m->feet[f]->bone);
    s->feet[f].locked = m->feet[f]->locked, s->feet[f].stepping = m->feet[f]->released;
    anim__vec3_from(s->feet[f].position, m->feet[f]->position);
  }
  *out = s;
  return 0;
}

int anim__server_stats_from(const Animserver__ServerStatsResponse *m, anim_server_stats_t *s) {
  memset(s, 0, sizeof *s);
  if (!m) return ANIM_EPROTO;
  s->uptime_us = m->uptime_us, s->connections = m->connections, s->characters = m->characters;
  s->requests = m->requests, s->errors = m->errors, s->tick_rate = m->tick_rate;
  s->ticks = m->ticks, s->ticks_late = m->ticks_late, s->ticks_skipped = m->ticks_skipped;
  s->lateness_p50_us = m->lateness_p50_us, s->lateness_p99_us = m->lateness_p99_us;
  s->lateness_max_us = m->lateness_max_us, s->tick_work_p50_us = m->tick_work_p50_us;
  s->tick_work_p99_us = m->tick_work_p99_us, s->frames_sent = m->frames_sent;
  s->frames_dropped = m->frames_dropped, s->stream_bytes = m->stream_bytes, s->poses_sent = m->poses_sent;
  s->slow_subscribers_closed = m->slow_subscribers_closed, s->cpu_user_s = m->cpu_user_s;
  s->cpu_system_s = m->cpu_system_s, s->rss_bytes = m->rss_bytes, s->character_bytes = m->character_bytes;
  s->pose_buffer_bytes = m->pose_buffer_bytes;
  s->physics_resets = m->physics_resets;
  return 0;
}
