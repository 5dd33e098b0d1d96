/* codec_search.c: search, batch_search and pose on the wire (see codec.h). */
#include <math.h>
#include <string.h>
#include "anim_error.h"
#include "codec_internal.h"
#include "database/database.h"
#include "registry.h"

/* Copies n Vec2 into a fresh x, z float array. */
static int decode_vec2s(srv_decoder_t *d, const char *field, Animserver__Vec2 **in, size_t n, const float **out) {
  int rc = srv_check_max(d, field, n, ANIM_MAX_TRAJECTORY_SAMPLES, ANIM_EDIMENSION);
  float *values = rc ? NULL : srv_decode_alloc(d, n * 2 * sizeof(float) + 1);
  if (!values) return rc ? rc : ANIM_ELIMIT;
  for (size_t i = 0; i < n; i++) {
    values[2 * i] = in[i]->x;
    values[2 * i + 1] = in[i]->z;
  }
  *out = values;
  return srv_check_finite(d, field, values, 2 * n);
}

/* Named character-space vectors: at most one per schema term, finite, names bounded. */
static int decode_bones(srv_decoder_t *d, const char *field, Animserver__BoneVector **in, size_t n, const char **names,
                        float (*values)[3], int *out_count) {
  size_t mark = srv_path_field(d, field);
  int rc = srv_check_max(d, NULL, n, ANIM_MAX_FEATURE_TERMS, ANIM_ELIMIT);
  for (size_t i = 0; i < n && rc == 0; i++) {
    size_t item = srv_path_index(d, i);
    const char *bone = in[i]->bone ? in[i]->bone : "";
    if (!*bone || strlen(bone) >= ANIM_NAME_MAX)
      return srv_decode_fail(d, ANIM_EBADNAME, ".bone is %s: 1-%d bytes", *bone ? "too long" : "empty",
                             ANIM_NAME_MAX - 1);
    float v[3] = {in[i]->x, in[i]->y, in[i]->z};
    static const char *const axis[3] = {"x", "y", "z"};
    for (int a = 0; a < 3 && rc == 0; a++) rc = srv_check_finite_value(d, axis[a], v[a]);
    names[i] = bone;
    memcpy(values[i], v, sizeof v);
    srv_path_restore(d, item);
  }
  if (rc) return rc;
  *out_count = (int)n;
  srv_path_restore(d, mark);
  return 0;
}

static int decode_method(srv_decoder_t *d, int method, int *out) {
  switch (method) {
  case ANIMSERVER__SEARCH_METHOD__SEARCH_DEFAULT:
  case ANIMSERVER__SEARCH_METHOD__SEARCH_FAST: *out = ANIM_SEARCH_FAST; return 0;
  case ANIMSERVER__SEARCH_METHOD__SEARCH_BRUTE: *out = ANIM_SEARCH_BRUTE; return 0;
  case ANIMSERVER__SEARCH_METHOD__SEARCH_BOXES: *out = ANIM_SEARCH_BOXES; return 0;
  default: return srv_decode_fail(d, ANIM_EINVAL, ".method = %d: not a SearchMethod", method);
  }
}

static int decode_query_source(srv_decoder_t *d, const Animserver__SearchQuery *in, srv_query_t *out) {
  int bones = in->n_bone_positions > 0 || in->n_bone_velocities > 0, rc;
  if ((in->n_features > 0) + (in->from_frame != NULL) + bones != 1)
    return srv_decode_fail(d, ANIM_EINVAL,
                           ": give exactly one of features, from_frame, or bone_positions/bone_velocities");
  if ((rc = decode_bones(d, "bone_positions", in->bone_positions, in->n_bone_positions, out->bone_position_names,
                         out->bone_positions, &out->nbone_positions)) ||
      (rc = decode_bones(d, "bone_velocities", in->bone_velocities, in->n_bone_velocities, out->bone_velocity_names,
                         out->bone_velocities, &out->nbone_velocities)) ||
      (rc = srv_check_max(d, "features", in->n_features, ANIM_MAX_FEATURE_DIMS, ANIM_EDIMENSION)) ||
      (rc = srv_check_finite(d, "features", in->features, in->n_features)))
    return rc;
  out->features = in->n_features ? in->features : NULL;
  out->nfeatures = (int)in->n_features;
  out->raw_features = in->raw_features;
  if (in->from_frame && (rc = srv_check_frame(d, "from_frame.frame", in->from_frame->frame, &out->from_frame)))
    return rc;
  if ((in->n_trajectory_positions || in->n_trajectory_directions) && in->n_features > 0)
    return srv_decode_fail(d, ANIM_EINVAL,
                           ": trajectory_positions/directions go with from_frame or bone inputs, not features");
  if ((rc = decode_vec2s(d, "trajectory_positions", in->trajectory_positions, in->n_trajectory_positions,
                         &out->trajectory_positions)) ||
      (rc = decode_vec2s(d, "trajectory_directions", in->trajectory_directions, in->n_trajectory_directions,
                         &out->trajectory_directions)))
    return rc;
  out->ntrajectory_positions = (int)in->n_trajectory_positions;
  out->ntrajectory_directions = (int)in->n_trajectory_directions;
  return 0;
}

static int decode_query_options(srv_decoder_t *d, const Animserver__SearchQuery *in, srv_query_t *out) {
  int rc;
  if ((rc = srv_check_max(d, "k", in->k, d->limits->max_k, ANIM_ELIMIT))) return rc;
  out->k = in->k ? (int)in->k : 1;
  if (in->current_frame &&
      (rc = srv_check_frame(d, "current_frame.frame", in->current_frame->frame, &out->current_frame)))
    return rc;
  if ((rc = srv_check_finite_value(d, "transition_cost", in->transition_cost))) return rc;
  if (in->transition_cost < 0.0f)
    return srv_decode_fail(d, ANIM_EINVAL, ".transition_cost = %g: must be >= 0", in->transition_cost);
  out->transition_cost = in->transition_cost;
  if ((rc = srv_check_max(d, "ignore_range_end", in->ignore_range_end, INT32_MAX, ANIM_ERANGE)) ||
      (rc = srv_check_max(d, "ignore_surrounding", in->ignore_surrounding, INT32_MAX, ANIM_ERANGE)) ||
      (rc = srv_check_max(d, "tags", in->n_tags, SRV_MAX_QUERY_TAGS, ANIM_ELIMIT)))
    return rc;
  out->ignore_range_end = (int)in->ignore_range_end;
  out->ignore_surrounding = (int)in->ignore_surrounding;
  for (size_t i = 0; i < in->n_tags; i++) {
    size_t mark = srv_path_field(d, "tags");
    srv_path_index(d, i);
    if ((rc = srv_check_name(d, NULL, in->tags[i]))) return rc;
    srv_path_restore(d, mark);
    out->tags[i] = in->tags[i];
  }
  out->ntags = (int)in->n_tags;
  out->include_pose = in->include_pose;
  out->explain = in->explain;
  out->include_features = in->include_features;
  return decode_method(d, (int)in->method, &out->method);
}

/* The query at the current path. */
static int decode_query(srv_decoder_t *d, const Animserver__SearchQuery *in, srv_query_t *out) {
  memset(out, 0, sizeof *out);
  out->from_frame = out->current_frame = -1;
  if (!in) return srv_decode_fail(d, ANIM_EINVAL, " is missing");
  int rc = decode_query_source(d, in, out);
  return rc ? rc : decode_query_options(d, in, out);
}

static int decode_queries(srv_decoder_t *d, const char *field, Animserver__SearchQuery **queries, size_t n, int batch,
                          srv_request_t *out) {
  srv_search_request_t *search = &out->body.search;
  size_t mark = srv_path_field(d, field);
  if (n == 0) return srv_decode_fail(d, ANIM_EINVAL, " is empty: give at least one query");
  int rc = srv_check_max(d, NULL, n, d->limits->max_batch, ANIM_ELIMIT);
  if (rc || !(search->queries = srv_decode_alloc(d, n * sizeof *search->queries))) return rc ? rc : ANIM_ELIMIT;
  for (size_t i = 0; i < n; i++) {
    size_t item = batch ? srv_path_index(d, i) : d->len;
    if ((rc = decode_query(d, queries[i], &search->queries[i]))) return rc;
    srv_path_restore(d, item);
  }
  search->nqueries = (int)n;
  srv_path_restore(d, mark);
  return 0;
}

int srv_decode_search(srv_decoder_t *d, const Animserver__SearchRequest *in, srv_request_t *out) {
  int rc = srv_decode_database(d, "database", in->database);
  if (!rc && !in->query) return srv_decode_fail(d, ANIM_EINVAL, ".query is missing");
  return rc ? rc : decode_queries(d, "query", (Animserver__SearchQuery **)&in->query, 1, 0, out);
}

int srv_decode_batch_search(srv_decoder_t *d, const Animserver__BatchSearchRequest *in, srv_request_t *out) {
  int rc = srv_decode_database(d, "database", in->database);
  return rc ? rc : decode_queries(d, "queries", in->queries, in->n_queries, 1, out);
}

int srv_decode_pose(srv_decoder_t *d, const Animserver__PoseRequest *in, srv_request_t *out) {
  srv_pose_request_t *p = &out->body.pose;
  int rc;
  if ((rc = srv_decode_database(d, "database", in->database)) ||
      (rc = srv_check_frame(d, "frame", in->frame, &p->frame)) ||
      (rc = srv_check_max(d, "count", in->count, d->limits->max_pose_frames, ANIM_ELIMIT)))
    return rc;
  p->count = in->count ? (int)in->count : 1;
  if (in->options) {
    p->options.local = in->options->local;
    p->options.global = in->options->global;
    p->options.velocities = in->options->velocities;
  }
  if (!p->options.local && !p->options.global) p->options.local = 1;
  return 0;
}

/* Pose arrays point straight into the database: vec3 and quat are packed floats. */
Animserver__Pose *srv_encode_frame_pose(srv_encoder_t *e, const anim_database_t *db, int frame, srv_pose_options_t o) {
  Animserver__Pose *p = SRV_ENCODER_NEW(e, Animserver__Pose, ANIMSERVER__POSE__INIT);
  if (!p) return NULL;
  size_t base = (size_t)frame * (size_t)db->nbones, n3 = 3 * (size_t)db->nbones, n4 = 4 * (size_t)db->nbones;
  p->frame = (uint32_t)frame;
  if (o.local) {
    p->n_local_positions = n3, p->local_positions = (float *)(db->local_positions + base);
    p->n_local_rotations = n4, p->local_rotations = (float *)(db->local_rotations + base);
    if (o.velocities) {
      p->n_local_velocities = n3, p->local_velocities = (float *)(db->local_velocities + base);
      p->n_local_angular_velocities = n3, p->local_angular_velocities = (float *)(db->local_angular_velocities + base);
    }
  }
  if (o.global) {
    p->n_global_positions = n3, p->global_positions = (float *)(db->global_positions + base);
    p->n_global_rotations = n4, p->global_rotations = (float *)(db->global_rotations + base);
    if (o.velocities) {
      p->n_global_velocities = n3, p->global_velocities = (float *)(db->global_velocities + base);
      p->n_global_angular_velocities = n3,
      p->global_angular_velocities = (float *)(db->global_angular_velocities + base);
    }
  }
  if (db->ncontacts > 0 && (p->contacts = srv_encoder_alloc(e, (size_t)db->ncontacts * sizeof *p->contacts)))
    for (int c = 0; c < db->ncontacts; c++)
      p->contacts[p->n_contacts++] = db->contacts[(size_t)frame * (size_t)db->ncontacts + (size_t)c] != 0;
  return p;
}

static void encode_explanation(srv_encoder_t *e, const anim_database_t *db, const srv_search_result_t *r,
                               Animserver__SearchResult *m) {
  const anim_feature_schema_t *schema = &db->features.schema;
  if (!(m->explanation = srv_encoder_alloc(e, (size_t)schema->nterms * sizeof *m->explanation + 1))) return;
  for (int t = 0; t < schema->nterms; t++) {
    Animserver__GroupCost *g = SRV_ENCODER_NEW(e, Animserver__GroupCost, ANIMSERVER__GROUP_COST__INIT);
    char *label = srv_encoder_alloc(e, 96);
    if (!g || !label) return;
    srv_feature_term_label(&schema->terms[t], label, 96);
    g->name = label;
    g->cost = r->group_costs[t];
    m->explanation[m->n_explanation++] = g;
  }
  m->margin = r->margin;
}

static Animserver__SearchResult *encode_result(srv_encoder_t *e, const anim_database_t *db,
                                               const srv_search_result_t *r) {
  Animserver__SearchResult *m = SRV_ENCODER_NEW(e, Animserver__SearchResult, ANIMSERVER__SEARCH_RESULT__INIT);
  if (!m || !(m->matches = srv_encoder_alloc(e, (size_t)r->count * sizeof *m->matches + 1))) return m;
  for (int i = 0; i < r->count; i++) {
    Animserver__Match *match = SRV_ENCODER_NEW(e, Animserver__Match, ANIMSERVER__MATCH__INIT);
    if (!match) return m;
    int range = anim_database_range_of(db, r->hits[i].frame);
    match->frame = (uint32_t)r->hits[i].frame;
    match->range = (uint32_t)(range < 0 ? 0 : range);
    match->range_name = range < 0 ? "" : (char *)db->ranges[range].name;
    match->cost = r->hits[i].cost;
    srv_pose_options_t local = {1, 0, 0};
    if (r->include_pose) match->pose = srv_encode_frame_pose(e, db, r->hits[i].frame, local);
    if (r->query) { /* the row itself: the database outlives the encoding */
      match->n_features = (size_t)db->features.cols;
      match->features = (float *)(db->features.values + (size_t)r->hits[i].frame * (size_t)db->features.cols);
    }
    m->matches[m->n_matches++] = match;
  }
  if (r->explained) encode_explanation(e, db, r, m);
  if (r->query) m->n_query = (size_t)db->features.cols, m->query = r->query;
  return m;
}

void srv_encode_search(srv_encoder_t *e, const srv_response_t *in, Animserver__Response *out) {
  Animserver__SearchResponse *r = SRV_ENCODER_NEW(e, Animserver__SearchResponse, ANIMSERVER__SEARCH_RESPONSE__INIT);
  if (!r) return;
  const srv_search_result_t *result = &in->body.search.results[0];
  r->database_version = in->entry->db.version;
  r->result = encode_result(e, &in->entry->db, result);
  out->body_case = ANIMSERVER__RESPONSE__BODY_SEARCH;
  out->search = r;
  /* Plain matches (no pose, explanation or features): database_version
   * (tag, fixed64) 9 + result (tag, length) 6, and per match (tag, length)
   * 6 + frame 6 + range 6 + range_name (tag, length) 6 + name + cost 5. */
  if (!r->result || result->include_pose || result->explained || result->query ||
      animserver__search_response__descriptor.n_fields != 2 || animserver__search_result__descriptor.n_fields != 4)
    return;
  size_t variable = 0;
  for (size_t i = 0; i < r->result->n_matches; i++) variable += 29 + strlen(r->result->matches[i]->range_name);
  srv_encoder_bound(e, &animserver__match__descriptor, 6, SRV_RESPONSE_FRAMING_BOUND + 15, variable);
}

void srv_encode_batch_search(srv_encoder_t *e, const srv_response_t *in, Animserver__Response *out) {
  const srv_search_response_t *s = &in->body.batch_search;
  Animserver__BatchSearchResponse *r =
      SRV_ENCODER_NEW(e, Animserver__BatchSearchResponse, ANIMSERVER__BATCH_SEARCH_RESPONSE__INIT);
  if (!r || !(r->results = srv_encoder_alloc(e, (size_t)s->nresults * sizeof *r->results + 1))) return;
  r->database_version = in->entry->db.version;
  for (int i = 0; i < s->nresults; i++) r->results[r->n_results++] = encode_result(e, &in->entry->db, &s->results[i]);
  out->body_case = ANIMSERVER__RESPONSE__BODY_BATCH_SEARCH;
  out->batch_search = r;
}

void srv_encode_pose(srv_encoder_t *e, const srv_response_t *in, Animserver__Response *out) {
  const srv_pose_response_t *p = &in->body.pose;
  Animserver__PoseResponse *r = SRV_ENCODER_NEW(e, Animserver__PoseResponse, ANIMSERVER__POSE_RESPONSE__INIT);
  if (!r || !(r->poses = srv_encoder_alloc(e, (size_t)p->count * sizeof *r->poses + 1))) return;
  r->database_version = in->entry->db.version;
  for (int i = 0; i < p->count; i++)
    r->poses[r->n_poses++] = srv_encode_frame_pose(e, &in->entry->db, p->frame + i, p->options);
  out->body_case = ANIMSERVER__RESPONSE__BODY_POSE;
  out->pose = r;
}
