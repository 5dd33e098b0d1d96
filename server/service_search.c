/*
 * service_search.c: motion-matching search (single and batch) and pose fetches.
 *
 * A query vector comes from the request's feature vector (normalized, or raw
 * and normalized here with the database's offsets and scales) or from a
 * database frame's features with the trajectory part optionally replaced.
 * Everything a query names is checked against the database first (dimension,
 * frames, tags), so the search itself cannot fail on input.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "registry.h"
#include "service.h"

/* "search.query" or "batch_search.queries[2]": how errors name a query. */
typedef struct {
  char text[48];
} field_t;

static field_t query_field(const srv_request_t *request, int index) {
  field_t f;
  /* No formatted print: this runs for every query, error or not. */
  if (request->type != SRV_REQ_BATCH_SEARCH) {
    memcpy(f.text, "search.query", sizeof "search.query");
    return f;
  }
  static const char prefix[] = "batch_search.queries[";
  char digits[12];
  int n = 0;
  unsigned v = (unsigned)index;
  do digits[n++] = (char)('0' + v % 10), v /= 10;
  while (v);
  memcpy(f.text, prefix, sizeof prefix - 1);
  size_t at = sizeof prefix - 1;
  while (n) f.text[at++] = digits[--n];
  f.text[at++] = ']';
  f.text[at] = '\0';
  return f;
}

/* Replaces the trajectory columns of a normalized row with raw values. */
static int override_trajectory(const anim_features_t *f, const srv_query_t *q, float *row,
                               srv_response_t *out, const char *field) {
  for (int t = 0; t < f->schema.nterms; t++) {
    const anim_feature_term_t *term = &f->schema.terms[t];
    const float *values;
    int count;
    if (term->kind == ANIM_FEATURE_TRAJECTORY_POSITION)
      values = q->trajectory_positions, count = q->ntrajectory_positions;
    else if (term->kind == ANIM_FEATURE_TRAJECTORY_DIRECTION)
      values = q->trajectory_directions, count = q->ntrajectory_directions;
    else continue;
    if (count == 0) continue;
    if (count != term->nsamples)
      return srv_response_fail(out, ANIM_EDIMENSION, "%s.trajectory_%s has %d samples: the schema has %d", field,
                               term->kind == ANIM_FEATURE_TRAJECTORY_POSITION ? "positions" : "directions", count,
                               term->nsamples);
    for (int d = 0; d < 2 * count; d++) {
      int col = f->group_start[t] + d;
      row[col] = (values[d] - f->offset[col]) / f->scale[col];
    }
  }
  return 0;
}

static const float *find_bone(const char *const *names, const float (*values)[3], int n, const char *bone) {
  for (int i = 0; i < n; i++)
    if (strcmp(names[i], bone) == 0) return values[i];
  return NULL;
}

/* Every named bone must be a skeleton bone some term uses. */
static int check_bone_names(const anim_database_t *db, const char *const *names, int n, const char *field,
                            const char *list, srv_response_t *out) {
  for (int i = 0; i < n; i++) {
    if (anim_skeleton_find(&db->skeleton, names[i]) < 0)
      return srv_response_fail(out, ANIM_ENOTFOUND, "%s.%s[%d].bone = \"%s\": database %s has no such bone", field,
                               list, i, names[i], db->name);
    int used = 0;
    for (int t = 0; t < db->features.schema.nterms; t++)
      used |= strcmp(db->features.schema.terms[t].bone, names[i]) == 0;
    if (!used)
      return srv_response_fail(out, ANIM_EINVAL, "%s.%s[%d].bone = \"%s\": not in database %s's feature schema", field,
                               list, i, names[i], db->name);
  }
  return 0;
}

/* The raw feature vector from bone inputs and a trajectory (core's
 * anim_features_compute_inputs); the wire lists positions and velocities
 * separately, so they are merged by bone name, and a term whose input is
 * missing is named in the error. */
static int features_from_inputs(const anim_database_t *db, const srv_query_t *q, const char *field, float *raw,
                                srv_response_t *out) {
  const anim_features_t *f = &db->features;
  int rc = check_bone_names(db, q->bone_position_names, q->nbone_positions, field, "bone_positions", out);
  if (!rc) rc = check_bone_names(db, q->bone_velocity_names, q->nbone_velocities, field, "bone_velocities", out);
  if (rc) return rc;
  const char *names[2 * ANIM_MAX_FEATURE_TERMS];
  vec3 positions[2 * ANIM_MAX_FEATURE_TERMS], velocities[2 * ANIM_MAX_FEATURE_TERMS];
  int n = 0;
  for (int t = 0; t < f->schema.nterms; t++) {
    const anim_feature_term_t *term = &f->schema.terms[t];
    if (term->kind == ANIM_FEATURE_TRAJECTORY_POSITION || term->kind == ANIM_FEATURE_TRAJECTORY_DIRECTION) continue;
    const float *p =
        find_bone(q->bone_position_names, (const float (*)[3])q->bone_positions, q->nbone_positions, term->bone);
    const float *v =
        find_bone(q->bone_velocity_names, (const float (*)[3])q->bone_velocities, q->nbone_velocities, term->bone);
    int need_p = term->kind != ANIM_FEATURE_BONE_VELOCITY, need_v = term->kind != ANIM_FEATURE_BONE_POSITION;
    if ((need_p && !p) || (need_v && !v))
      return srv_response_fail(out, ANIM_EINVAL, "%s: feature term %d needs %s%s%s of bone %s", field, t,
                                need_p ? "bone_positions" : "", need_p && need_v ? " and " : "",
                                need_v ? "bone_velocities" : "", term->bone);
    names[n] = term->bone;
    positions[n] = p ? vec3_make(p[0], p[1], p[2]) : vec3_zero();
    velocities[n] = v ? vec3_make(v[0], v[1], v[2]) : vec3_zero();
    n++;
  }
  anim_feature_inputs_t inputs = {names, positions, velocities, n, q->trajectory_positions, q->ntrajectory_positions,
                                  q->trajectory_directions, q->ntrajectory_directions};
  char err[160];
  rc = anim_features_compute_inputs(&f->schema, &inputs, raw, err, sizeof err);
  return rc ? srv_response_fail(out, rc, "%s: %s", field, err) : 0;
}

/* Builds the normalized query vector and the core query of request query q. */
static int build_query(const anim_database_t *db, const srv_query_t *q, const char *field, float *vector,
                       anim_search_query_t *out_query, srv_response_t *out) {
  const anim_features_t *f = &db->features;
  if (q->nfeatures > 0) {
    if (q->nfeatures != f->cols)
      return srv_response_fail(out, ANIM_EDIMENSION, "%s.features has %d values: database %s has %d dimensions", field,
                               q->nfeatures, db->name, f->cols);
    if (q->raw_features) anim_features_normalize(f, q->features, vector);
    else memcpy(vector, q->features, (size_t)f->cols * sizeof *vector);
  } else if (q->from_frame < 0) {
    float raw[ANIM_MAX_FEATURE_DIMS];
    int rc = features_from_inputs(db, q, field, raw, out);
    if (rc) return rc;
    anim_features_normalize(f, raw, vector);
  } else {
    if (q->from_frame >= db->nframes)
      return srv_response_fail(out, ANIM_ERANGE, "%s.from_frame.frame = %d: database %s has frames 0..%d", field,
                               q->from_frame, db->name, db->nframes - 1);
    memcpy(vector, f->values + (size_t)q->from_frame * (size_t)f->cols, (size_t)f->cols * sizeof *vector);
    int rc = override_trajectory(f, q, vector, out, field);
    if (rc) return rc;
  }
  if (q->current_frame >= db->nframes)
    return srv_response_fail(out, ANIM_ERANGE, "%s.current_frame.frame = %d: database %s has frames 0..%d", field,
                             q->current_frame, db->name, db->nframes - 1);
  uint32_t mask = 0;
  for (int t = 0; t < q->ntags; t++) {
    int bit = anim_database_find_tag(db, q->tags[t]);
    if (bit < 0)
      return srv_response_fail(out, ANIM_ENOTFOUND, "%s.tags[%d] = \"%s\": database %s has no such tag", field, t,
                               q->tags[t], db->name);
    mask |= 1u << bit;
  }
  memset(out_query, 0, sizeof *out_query);
  out_query->query = vector;
  /* One more than asked when explaining: the runner-up gives the margin. */
  out_query->k = q->explain && q->k < 2 ? 2 : q->k;
  out_query->current_frame = q->current_frame;
  out_query->transition_cost = q->transition_cost;
  out_query->ignore_range_end = q->ignore_range_end;
  out_query->ignore_surrounding = q->ignore_surrounding;
  out_query->tag_mask = mask;
  return 0;
}

/* Cost of the best match split by schema term, and the margin to the runner-up. */
static void explain(const anim_database_t *db, const float *vector, srv_search_result_t *r) {
  const anim_features_t *f = &db->features;
  r->explained = 1;
  if (r->count == 0) return;
  const float *row = f->values + (size_t)r->hits[0].frame * (size_t)f->cols;
  for (int t = 0; t < f->schema.nterms; t++)
    r->group_costs[t] = anim_search_distance(vector + f->group_start[t], row + f->group_start[t], f->group_dims[t]);
  r->margin = r->count > 1 ? r->hits[1].cost - r->hits[0].cost : 0.0f;
}

/* search and batch_search: one result per query, in order. */
static int search(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  const srv_search_request_t *req = &request->body.search;
  srv_search_response_t *res = &out->body.search;
  const srv_db_entry_t *entry = out->entry;
  const anim_database_t *db = &entry->db;
  float vector[ANIM_MAX_FEATURE_DIMS];
  /* One scratch for every query of the request (on the stack for small k),
   * and one block for the results and all their hits: a pipelined search
   * allocates once. */
  anim_search_hit_t stack_scratch[64];
  size_t nhits = 0;
  int max_k = 2;
  for (int i = 0; i < req->nqueries; i++) {
    const srv_query_t *q = &req->queries[i];
    int k = q->explain && q->k < 2 ? 2 : q->k; /* as build_query asks */
    max_k = k > max_k ? k : max_k;
    nhits += (size_t)k;
  }
  size_t scratch_bytes = anim_search_scratch_size(entry->indexes[0], max_k);
  void *scratch = scratch_bytes <= sizeof stack_scratch ? stack_scratch : srv_response_alloc(out, scratch_bytes);
  size_t results_bytes = (size_t)req->nqueries * sizeof *res->results;
  if (!scratch || !(res->results = srv_response_alloc(out, results_bytes + nhits * sizeof(anim_search_hit_t))))
    return ANIM_ENOMEM;
  anim_search_hit_t *hits = (anim_search_hit_t *)((char *)res->results + results_bytes);
  res->nresults = req->nqueries;
  for (int i = 0; i < req->nqueries; i++) {
    const srv_query_t *q = &req->queries[i];
    srv_search_result_t *r = &res->results[i];
    field_t field = query_field(request, i);
    anim_search_query_t query;
    int rc = build_query(db, q, field.text, vector, &query, out);
    if (!rc) r->hits = hits, hits += query.k;
    if (!rc && (rc = anim_search_run(entry->indexes[q->method], &query, r->hits, &r->count, scratch)))
      srv_response_fail(out, rc, "%s: search failed: %s", field.text, anim_strerror(rc));
    if (rc) return rc;
    if (q->explain) explain(db, vector, r);
    if (q->include_features) {
      if (!(r->query = srv_response_alloc(out, (size_t)db->features.cols * sizeof *r->query))) return ANIM_ENOMEM;
      memcpy(r->query, vector, (size_t)db->features.cols * sizeof *r->query);
    }
    if (r->count > q->k) r->count = q->k;
    r->include_pose = q->include_pose;
  }
  return 0;
}

/* A handful of indexed queries is microseconds; big batches and the slow
 * reference methods on big databases go to the pool. */
static int search_off_loop(const srv_request_t *request, const srv_response_t *prepared) {
  const srv_search_request_t *req = &request->body.search;
  if (req->nqueries > 16) return 1;
  size_t rows = prepared->entry ? (size_t)prepared->entry->db.nframes : 0;
  for (int i = 0; i < req->nqueries; i++)
    if (req->queries[i].method != ANIM_SEARCH_FAST && rows > SRV_SEARCH_LIGHT_ROWS) return 1;
  return 0;
}

static int pose(const srv_service_ctx_t *ctx, const srv_request_t *request, srv_response_t *out) {
  const srv_pose_request_t *p = &request->body.pose;
  const anim_database_t *db = &out->entry->db;
  if (p->frame >= db->nframes || p->count > db->nframes - p->frame)
    return srv_response_fail(out, ANIM_ERANGE, /* the end in 64 bits below: frame may be INT_MAX */
                             "pose.frame = %d, pose.count = %d: frames [%d, %lld) are outside database %s's "
                             "frames 0..%d", p->frame, p->count, p->frame, (long long)p->frame + p->count, db->name,
                             db->nframes - 1);
  out->body.pose.frame = p->frame;
  out->body.pose.count = p->count;
  out->body.pose.options = p->options;
  return 0;
}

/* Encoding many frames is the cost: spans go to the pool (encoded there). */
static int pose_off_loop(const srv_request_t *request, const srv_response_t *prepared) {
  return request->body.pose.count > 64;
}

const srv_service_t srv_service_search = {
    .prepare = srv_service_acquire_database, .handle = search, .off_loop = search_off_loop};
const srv_service_t srv_service_batch_search = {
    .prepare = srv_service_acquire_database, .handle = search, .off_loop = search_off_loop};
const srv_service_t srv_service_pose = {
    .prepare = srv_service_acquire_database, .handle = pose, .off_loop = pose_off_loop};
