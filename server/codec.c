/* codec.c: framed protobuf <-> srv_request_t / srv_response_t (see codec.h). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"
#include "animserver.pb-c.h"
#include "codec.h"
#include "frame.h"
#include "registry.h"

#define CLIENT_NAME_MAX 256

/* ---- budgeted allocator ---------------------------------------------------- */

typedef struct {
  size_t used, limit;
  int exceeded;
} budget_t;

/* Each block carries its size in front so frees give the budget back. */
typedef union {
  size_t size;
  max_align_t align;
} block_header_t;

static void *budget_alloc(void *data, size_t size) {
  budget_t *budget = data;
  if (size > budget->limit - budget->used) {
    budget->exceeded = 1;
    return NULL;
  }
  block_header_t *block = malloc(sizeof *block + size);
  if (!block) return NULL;
  block->size = size;
  budget->used += size;
  return block + 1;
}

static void budget_free(void *data, void *pointer) {
  if (!pointer) return;
  budget_t *budget = data;
  block_header_t *block = (block_header_t *)pointer - 1;
  budget->used -= block->size;
  free(block);
}

/* ---- decoding ------------------------------------------------------------------ */

/* Reads field 1 (the id) of a Request without a full decode, so that even a
 * request that fails to decode can be answered by id. 0 when absent. */
static uint64_t peek_request_id(const uint8_t *frame, size_t len) {
  size_t pos = 0;
  while (pos < len) {
    uint64_t key, value;
    int n = anim_varint_decode(frame + pos, len - pos, &key);
    if (n <= 0) return 0;
    pos += (size_t)n;
    switch (key & 7) {
    case 0:
      n = anim_varint_decode(frame + pos, len - pos, &value);
      if (n <= 0) return 0;
      if (key >> 3 == 1) return value;
      pos += (size_t)n;
      break;
    case 1: pos += 8; break;
    case 2:
      n = anim_varint_decode(frame + pos, len - pos, &value);
      if (n <= 0 || value > len) return 0;
      pos += (size_t)n + (size_t)value;
      break;
    case 5: pos += 4; break;
    default: return 0;
    }
  }
  return 0;
}

static int fail(char *err, int errlen, int code, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int fail(char *err, int errlen, int code, const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  vsnprintf(err, (size_t)errlen, fmt, args);
  va_end(args);
  return code;
}

/* ---- request arena: converted arrays, charged to the same budget ------------ */

typedef struct arena_block {
  struct arena_block *next;
  max_align_t data[];
} arena_block_t;

static void *arena_alloc(srv_request_t *request, size_t size) {
  budget_t *budget = request->budget;
  if (size > budget->limit - budget->used) {
    budget->exceeded = 1;
    return NULL;
  }
  arena_block_t *block = malloc(sizeof *block + size);
  if (!block) return NULL;
  budget->used += size;
  block->next = request->arena;
  request->arena = block;
  return block->data;
}

static void arena_free(srv_request_t *request) {
  for (arena_block_t *b = request->arena, *next; b; b = next) {
    next = b->next;
    free(b);
  }
  request->arena = NULL;
}

/* ---- field checks --------------------------------------------------------------- */

typedef struct {
  srv_request_t *request;
  const srv_codec_limits_t *limits;
  char *err;
  int errlen;
} convert_t;

static int check_finite(convert_t *cv, const char *field, const float *values, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!isfinite(values[i]))
      return fail(cv->err, cv->errlen, ANIM_ENONFINITE, "%s[%zu] is %s", field, i, isnan(values[i]) ? "NaN" : "infinite");
  return 0;
}

static int check_name(convert_t *cv, const char *field, const char *name) {
  if (!name || !*name) return fail(cv->err, cv->errlen, ANIM_EBADNAME, "%s is empty", field);
  if (srv_db_name_validate(name) != 0)
    return fail(cv->err, cv->errlen, ANIM_EBADNAME,
                "%s \"%.64s\" is not a plain name (1-63 of A-Z a-z 0-9 _ - ., not starting with '.')", field, name);
  return 0;
}

static int check_count(convert_t *cv, const char *field, uint64_t value, uint64_t max) {
  if (value > max) return fail(cv->err, cv->errlen, ANIM_EINVAL, "%s = %llu: at most %llu", field,
                               (unsigned long long)value, (unsigned long long)max);
  return 0;
}

/* Copies n Vec2 into a fresh x, z float array. */
static int convert_vec2s(convert_t *cv, const char *field, Animserver__Vec2 **in, size_t n, const float **out) {
  if (n > ANIM_MAX_TRAJECTORY_SAMPLES)
    return fail(cv->err, cv->errlen, ANIM_EDIMENSION, "%s: %zu samples, at most %d", field, n,
                ANIM_MAX_TRAJECTORY_SAMPLES);
  float *values = arena_alloc(cv->request, n * 2 * sizeof(float) + 1);
  if (!values) return fail(cv->err, cv->errlen, ANIM_ELIMIT, "%s: over the request memory budget", field);
  for (size_t i = 0; i < n; i++) {
    values[2 * i] = in[i]->x;
    values[2 * i + 1] = in[i]->z;
  }
  *out = values;
  return check_finite(cv, field, values, 2 * n);
}

/* ---- conversions ---------------------------------------------------------------- */

static int convert_hello(convert_t *cv, const Animserver__HelloRequest *in, srv_hello_request_t *out) {
  const char *name = in->client_name ? in->client_name : "";
  if (strlen(name) > CLIENT_NAME_MAX)
    return fail(cv->err, cv->errlen, ANIM_EINVAL, "hello.client_name: longer than %d bytes", CLIENT_NAME_MAX);
  const char *token = in->auth_token ? in->auth_token : "";
  if (strlen(token) > 127) return fail(cv->err, cv->errlen, ANIM_EINVAL, "hello.auth_token: longer than 127 bytes");
  out->protocol_version = in->protocol_version;
  out->client_name = name;
  out->auth_token = token;
  return 0;
}

/* Named character-space vectors: at most one per schema term, finite, names bounded. */
static int convert_bones(convert_t *cv, const char *field, Animserver__BoneVector **in, size_t n, const char **names,
                         float (*values)[3], int *out_count) {
  if (n > ANIM_MAX_FEATURE_TERMS)
    return fail(cv->err, cv->errlen, ANIM_ELIMIT, "%s: %zu bones, at most %d", field, n, ANIM_MAX_FEATURE_TERMS);
  for (size_t i = 0; i < n; i++) {
    if (!in[i]->bone || !*in[i]->bone || strlen(in[i]->bone) >= ANIM_NAME_MAX)
      return fail(cv->err, cv->errlen, ANIM_EBADNAME, "%s[%zu].bone is empty or too long", field, i);
    float v[3] = {in[i]->x, in[i]->y, in[i]->z};
    int rc = check_finite(cv, field, v, 3);
    if (rc) return rc;
    names[i] = in[i]->bone;
    memcpy(values[i], v, sizeof v);
  }
  *out_count = (int)n;
  return 0;
}

static int convert_query(convert_t *cv, const Animserver__SearchQuery *in, srv_query_request_t *out) {
  int rc;
  memset(out, 0, sizeof *out);
  out->from_frame = out->current_frame = -1;
  if (!in) return fail(cv->err, cv->errlen, ANIM_EINVAL, "query is missing");
  int bones = in->n_bone_positions > 0 || in->n_bone_velocities > 0;
  if ((in->n_features > 0) + (in->from_frame != NULL) + bones != 1)
    return fail(cv->err, cv->errlen, ANIM_EINVAL,
                "query needs exactly one of features, from_frame, or bone_positions/bone_velocities");
  if ((rc = convert_bones(cv, "query.bone_positions", in->bone_positions, in->n_bone_positions,
                          out->bone_position_names, out->bone_positions, &out->nbone_positions)) ||
      (rc = convert_bones(cv, "query.bone_velocities", in->bone_velocities, in->n_bone_velocities,
                          out->bone_velocity_names, out->bone_velocities, &out->nbone_velocities)))
    return rc;
  if (in->n_features > ANIM_MAX_FEATURE_DIMS)
    return fail(cv->err, cv->errlen, ANIM_EDIMENSION, "query.features: %zu values, at most %d", in->n_features,
                ANIM_MAX_FEATURE_DIMS);
  if ((rc = check_finite(cv, "query.features", in->features, in->n_features))) return rc;
  out->features = in->n_features ? in->features : NULL;
  out->nfeatures = (int)in->n_features;
  out->raw_features = in->raw_features;
  if (in->from_frame) {
    if ((rc = check_count(cv, "query.from_frame", in->from_frame->frame, INT32_MAX))) return rc;
    out->from_frame = (int)in->from_frame->frame;
  }
  if ((in->n_trajectory_positions || in->n_trajectory_directions) && in->n_features > 0)
    return fail(cv->err, cv->errlen, ANIM_EINVAL, "query.trajectory_* goes with from_frame or bone inputs, not features");
  if ((rc = convert_vec2s(cv, "query.trajectory_positions", in->trajectory_positions, in->n_trajectory_positions,
                          &out->trajectory_positions)))
    return rc;
  out->ntrajectory_positions = (int)in->n_trajectory_positions;
  if ((rc = convert_vec2s(cv, "query.trajectory_directions", in->trajectory_directions, in->n_trajectory_directions,
                          &out->trajectory_directions)))
    return rc;
  out->ntrajectory_directions = (int)in->n_trajectory_directions;
  if (in->k > cv->limits->max_k)
    return fail(cv->err, cv->errlen, ANIM_ELIMIT, "query.k = %u: at most %u", in->k, cv->limits->max_k);
  out->k = in->k ? (int)in->k : 1;
  if (in->current_frame) {
    if ((rc = check_count(cv, "query.current_frame", in->current_frame->frame, INT32_MAX))) return rc;
    out->current_frame = (int)in->current_frame->frame;
  }
  if (!isfinite(in->transition_cost) || in->transition_cost < 0.0f)
    return fail(cv->err, cv->errlen, isfinite(in->transition_cost) ? ANIM_EINVAL : ANIM_ENONFINITE,
                "query.transition_cost must be finite and >= 0");
  out->transition_cost = in->transition_cost;
  if ((rc = check_count(cv, "query.ignore_range_end", in->ignore_range_end, INT32_MAX))) return rc;
  if ((rc = check_count(cv, "query.ignore_surrounding", in->ignore_surrounding, INT32_MAX))) return rc;
  out->ignore_range_end = (int)in->ignore_range_end;
  out->ignore_surrounding = (int)in->ignore_surrounding;
  if (in->n_tags > SRV_MAX_QUERY_TAGS)
    return fail(cv->err, cv->errlen, ANIM_ELIMIT, "query.tags: %zu tags, at most %d", in->n_tags, SRV_MAX_QUERY_TAGS);
  for (size_t i = 0; i < in->n_tags; i++) {
    if ((rc = check_name(cv, "query.tags[]", in->tags[i]))) return rc;
    out->tags[i] = in->tags[i];
  }
  out->ntags = (int)in->n_tags;
  out->include_pose = in->include_pose;
  out->explain = in->explain;
  switch (in->method) {
  case ANIMSERVER__SEARCH_METHOD__SEARCH_DEFAULT:
  case ANIMSERVER__SEARCH_METHOD__SEARCH_FAST: out->method = ANIM_SEARCH_FAST; break;
  case ANIMSERVER__SEARCH_METHOD__SEARCH_BRUTE: out->method = ANIM_SEARCH_BRUTE; break;
  case ANIMSERVER__SEARCH_METHOD__SEARCH_BOXES: out->method = ANIM_SEARCH_BOXES; break;
  default: return fail(cv->err, cv->errlen, ANIM_EINVAL, "query.method %d is unknown", (int)in->method);
  }
  return 0;
}

static int convert_queries(convert_t *cv, const char *database, Animserver__SearchQuery **queries, size_t n,
                           srv_search_request_t *out) {
  int rc;
  if ((rc = check_name(cv, "database", database))) return rc;
  if (n == 0) return fail(cv->err, cv->errlen, ANIM_EINVAL, "batch_search.queries is empty");
  if (n > cv->limits->max_batch)
    return fail(cv->err, cv->errlen, ANIM_ELIMIT, "batch_search: %zu queries, at most %u", n, cv->limits->max_batch);
  out->database = database;
  out->queries = arena_alloc(cv->request, n * sizeof *out->queries);
  if (!out->queries) return fail(cv->err, cv->errlen, ANIM_ELIMIT, "queries: over the request memory budget");
  for (size_t i = 0; i < n; i++)
    if ((rc = convert_query(cv, queries[i], &out->queries[i]))) return rc;
  out->nqueries = (int)n;
  return 0;
}

static int convert_pose(convert_t *cv, const Animserver__PoseRequest *in, srv_pose_request_t *out) {
  int rc;
  if ((rc = check_name(cv, "pose.database", in->database))) return rc;
  if ((rc = check_count(cv, "pose.frame", in->frame, INT32_MAX))) return rc;
  if (in->count > cv->limits->max_pose_frames)
    return fail(cv->err, cv->errlen, ANIM_ELIMIT, "pose.count = %u: at most %u", in->count,
                cv->limits->max_pose_frames);
  out->database = in->database;
  out->frame = (int)in->frame;
  out->count = in->count ? (int)in->count : 1;
  if (in->options) {
    out->options.local = in->options->local;
    out->options.global = in->options->global;
    out->options.velocities = in->options->velocities;
  }
  if (!out->options.local && !out->options.global) out->options.local = 1;
  return 0;
}

static int convert_db(convert_t *cv, const char *name, srv_db_request_t *out) {
  out->name = name;
  return check_name(cv, "name", name);
}

/* ---- inertialization requests ---------------------------------------------------- */

static int check_unit_quats(convert_t *cv, const char *field, const float *q, size_t n) {
  for (size_t i = 0; i < n; i++) {
    const float *r = q + 4 * i;
    float norm = sqrtf(r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + r[3] * r[3]);
    if (fabsf(norm - 1.0f) > 1e-2f)
      return fail(cv->err, cv->errlen, ANIM_EINVAL, "%s[%zu] is not a unit quaternion (norm %g)", field, i, norm);
  }
  return 0;
}

/* A pose's four arrays: all present, of one bone count, finite, unit rotations. */
static int convert_pose_state(convert_t *cv, const char *field, const Animserver__PoseState *in, srv_pose_ref_t *out) {
  size_t n = in->n_positions / 3;
  if (n == 0 || n > ANIM_MAX_BONES || in->n_positions != 3 * n || in->n_velocities != 3 * n ||
      in->n_rotations != 4 * n || in->n_angular_velocities != 3 * n)
    return fail(cv->err, cv->errlen, ANIM_EDIMENSION,
                "%s: need 3 positions, 3 velocities, 4 rotation and 3 angular velocity floats per bone, 1..%d bones "
                "(got %zu, %zu, %zu, %zu)", field, ANIM_MAX_BONES, in->n_positions, in->n_velocities,
                in->n_rotations, in->n_angular_velocities);
  int rc;
  if ((rc = check_finite(cv, field, in->positions, 3 * n)) || (rc = check_finite(cv, field, in->velocities, 3 * n)) ||
      (rc = check_finite(cv, field, in->rotations, 4 * n)) ||
      (rc = check_finite(cv, field, in->angular_velocities, 3 * n)) ||
      (rc = check_unit_quats(cv, field, in->rotations, n)))
    return rc;
  out->frame = -1;
  out->nbones = (int)n;
  out->positions = in->positions;
  out->velocities = in->velocities;
  out->rotations = in->rotations;
  out->angular_velocities = in->angular_velocities;
  return 0;
}

static int convert_pose_ref(convert_t *cv, const char *field, const Animserver__PoseRef *in, srv_pose_ref_t *out,
                            int *uses_frame) {
  memset(out, 0, sizeof *out);
  if (!in) return fail(cv->err, cv->errlen, ANIM_EINVAL, "%s is missing", field);
  if (in->source_case == ANIMSERVER__POSE_REF__SOURCE_FRAME) {
    int rc = check_count(cv, field, in->frame, INT32_MAX);
    if (rc) return rc;
    out->frame = (int)in->frame;
    *uses_frame = 1;
    return 0;
  }
  if (in->source_case == ANIMSERVER__POSE_REF__SOURCE_POSE) return convert_pose_state(cv, field, in->pose, out);
  return fail(cv->err, cv->errlen, ANIM_EINVAL, "%s needs a frame or a pose", field);
}

static int convert_state(convert_t *cv, const char *field, const Animserver__InertializerState *in, srv_state_ref_t *out) {
  memset(out, 0, sizeof *out);
  if (!in) return 0;
  size_t n = in->n_offset_positions / 3;
  if (n == 0 || n > ANIM_MAX_BONES || in->n_offset_positions != 3 * n || in->n_offset_velocities != 3 * n ||
      in->n_offset_rotations != 4 * n || in->n_offset_angular_velocities != 3 * n ||
      (in->n_anchor != 0 && in->n_anchor != 14))
    return fail(cv->err, cv->errlen, ANIM_EDIMENSION,
                "%s: need 3/3/4/3 offset floats per bone (1..%d bones) and 0 or 14 anchor floats", field,
                ANIM_MAX_BONES);
  int rc;
  if ((rc = check_finite(cv, field, in->offset_positions, 3 * n)) ||
      (rc = check_finite(cv, field, in->offset_velocities, 3 * n)) ||
      (rc = check_finite(cv, field, in->offset_rotations, 4 * n)) ||
      (rc = check_finite(cv, field, in->offset_angular_velocities, 3 * n)) ||
      (rc = check_finite(cv, field, in->anchor, in->n_anchor)) ||
      (rc = check_unit_quats(cv, field, in->offset_rotations, n)) ||
      (in->n_anchor && ((rc = check_unit_quats(cv, field, in->anchor + 3, 1)) ||
                        (rc = check_unit_quats(cv, field, in->anchor + 10, 1)))))
    return rc;
  out->present = 1;
  out->nbones = (int)n;
  out->offset_positions = in->offset_positions;
  out->offset_velocities = in->offset_velocities;
  out->offset_rotations = in->offset_rotations;
  out->offset_angular_velocities = in->offset_angular_velocities;
  out->anchor = in->n_anchor ? in->anchor : NULL;
  return 0;
}

/* The database name is required exactly when a frame is named. */
static int convert_optional_db(convert_t *cv, const char *name, int uses_frame, const char **out) {
  *out = NULL;
  if (!uses_frame) return 0;
  int rc = check_name(cv, "database", name);
  if (rc == 0) *out = name;
  return rc;
}

static int check_halflife(convert_t *cv, float halflife) {
  if (!isfinite(halflife)) return fail(cv->err, cv->errlen, ANIM_ENONFINITE, "halflife is not finite");
  if (!(halflife > 0.0f)) return fail(cv->err, cv->errlen, ANIM_EINVAL, "halflife must be > 0 seconds");
  return 0;
}

static int convert_transition(convert_t *cv, const Animserver__InertializeTransitionRequest *in,
                              srv_transition_request_t *out) {
  int uses_frame = 0, rc;
  if ((rc = convert_pose_ref(cv, "source", in->source, &out->source, &uses_frame)) ||
      (rc = convert_pose_ref(cv, "destination", in->destination, &out->destination, &uses_frame)) ||
      (rc = convert_state(cv, "state", in->state, &out->state)))
    return rc;
  return convert_optional_db(cv, in->database, uses_frame, &out->database);
}

static int convert_evaluate(convert_t *cv, const Animserver__InertializeEvaluateRequest *in,
                            srv_evaluate_request_t *out) {
  int uses_frame = 0, rc;
  if (!in->state) return fail(cv->err, cv->errlen, ANIM_EINVAL, "state is missing");
  if ((rc = convert_state(cv, "state", in->state, &out->state)) ||
      (rc = convert_pose_ref(cv, "input", in->input, &out->input, &uses_frame)) || (rc = check_halflife(cv, in->halflife)))
    return rc;
  if (!isfinite(in->t)) return fail(cv->err, cv->errlen, ANIM_ENONFINITE, "t is not finite");
  if (in->t < 0.0f) return fail(cv->err, cv->errlen, ANIM_EINVAL, "t must be >= 0 seconds");
  out->halflife = in->halflife;
  out->t = in->t;
  return convert_optional_db(cv, in->database, uses_frame, &out->database);
}

static int convert_cost(convert_t *cv, const Animserver__TransitionCostRequest *in, srv_cost_request_t *out) {
  int uses_frame = 0, rc;
  if ((rc = convert_pose_ref(cv, "source", in->source, &out->source, &uses_frame)) ||
      (rc = convert_pose_ref(cv, "destination", in->destination, &out->destination, &uses_frame)) ||
      (rc = check_halflife(cv, in->halflife)))
    return rc;
  if (in->n_bones > ANIM_MAX_BONES)
    return fail(cv->err, cv->errlen, ANIM_ELIMIT, "bones: %zu names, at most %d", in->n_bones, ANIM_MAX_BONES);
  if (in->n_bones > 0 && !uses_frame)
    return fail(cv->err, cv->errlen, ANIM_EINVAL, "bones can be named only with database frames");
  out->halflife = in->halflife;
  out->bones = (const char *const *)in->bones;
  out->nbones_named = (int)in->n_bones;
  return convert_optional_db(cv, in->database, uses_frame, &out->database);
}

static int finite_positive(convert_t *cv, const char *field, double value, int allow_zero) {
  if (!isfinite(value)) return fail(cv->err, cv->errlen, ANIM_ENONFINITE, "%s is not finite", field);
  if (value < 0.0 || (!allow_zero && value == 0.0))
    return fail(cv->err, cv->errlen, ANIM_EINVAL, "%s must be %s 0", field, allow_zero ? ">=" : ">");
  return 0;
}

static int convert_tune(convert_t *cv, const Animserver__SpringTuneRequest *in, srv_tune_request_t *out) {
  int rc;
  memset(out, 0, sizeof *out);
  switch (in->problem_case) {
  case ANIMSERVER__SPRING_TUNE_REQUEST__PROBLEM_FRACTION: {
    const Animserver__SpringFraction *f = in->fraction;
    out->problem = SRV_TUNE_FRACTION;
    if (!isfinite(f->alpha) || !isfinite(f->t) || !isfinite(f->x0) || !isfinite(f->v0) || !isfinite(f->mass))
      return fail(cv->err, cv->errlen, ANIM_ENONFINITE, "fraction: every field must be finite");
    if (!(f->alpha > 0.0 && f->alpha < 1.0)) return fail(cv->err, cv->errlen, ANIM_EINVAL, "fraction.alpha must be in (0, 1)");
    if ((rc = finite_positive(cv, "fraction.t", f->t, 0)) || (rc = finite_positive(cv, "fraction.mass", f->mass, 1))) return rc;
    out->alpha = f->alpha, out->t = f->t, out->x0 = f->x0 != 0.0 ? f->x0 : 1.0, out->v0 = f->v0;
    out->mass = f->mass > 0.0 ? f->mass : 1.0;
    return 0;
  }
  case ANIMSERVER__SPRING_TUNE_REQUEST__PROBLEM_TO_CONSTRAINT: {
    const Animserver__SpringGains *g = in->to_constraint;
    out->problem = SRV_TUNE_TO_CONSTRAINT;
    if ((rc = finite_positive(cv, "to_constraint.stiffness", g->stiffness, 1)) ||
        (rc = finite_positive(cv, "to_constraint.damping", g->damping, 1)) ||
        (rc = finite_positive(cv, "to_constraint.dt", g->dt, 0)))
      return rc;
    out->stiffness = g->stiffness, out->damping = g->damping, out->dt = g->dt;
    return 0;
  }
  case ANIMSERVER__SPRING_TUNE_REQUEST__PROBLEM_FROM_CONSTRAINT: {
    const Animserver__SpringConstraint *c = in->from_constraint;
    out->problem = SRV_TUNE_FROM_CONSTRAINT;
    if ((rc = finite_positive(cv, "from_constraint.erp", c->erp, 1)) ||
        (rc = finite_positive(cv, "from_constraint.cfm", c->cfm, 0)) ||
        (rc = finite_positive(cv, "from_constraint.dt", c->dt, 0)))
      return rc;
    if (c->erp > 1.0) return fail(cv->err, cv->errlen, ANIM_EINVAL, "from_constraint.erp must be <= 1");
    out->erp = c->erp, out->cfm = c->cfm, out->dt = c->dt;
    return 0;
  }
  default:
    return fail(cv->err, cv->errlen, ANIM_EINVAL, "spring_tune needs fraction, to_constraint or from_constraint");
  }
}

/* ---- characters and streams ---------------------------------------------------------- */

#define MAX_IDS_PER_REQUEST 100000

static int check_finite1(convert_t *cv, const char *field, int index, float value) {
  if (isfinite(value)) return 0;
  return fail(cv->err, cv->errlen, ANIM_ENONFINITE, "%s[%d] has a %s value", field, index, isnan(value) ? "NaN" : "infinite");
}

/* Server defaults with the client's non-zero fields on top. */
static int convert_params(convert_t *cv, const Animserver__ControllerParams *in, anim_controller_params_t *out) {
  anim_controller_params_default(out);
  if (!in) return 0;
  const float given[] = {in->inertialize_halflife, in->velocity_halflife, in->rotation_halflife, in->forward_speed,
                         in->side_speed, in->back_speed, in->transition_cost, in->replan_threshold, in->input_f,
                         in->input_zeta, in->input_r};
  for (size_t i = 0; i < sizeof given / sizeof given[0]; i++)
    if (check_finite1(cv, "params", (int)i, given[i])) return ANIM_ENONFINITE;
  if (in->search_interval > 600 || in->ignore_surrounding > 100000 || in->ignore_range_end > 100000)
    return fail(cv->err, cv->errlen, ANIM_EINVAL, "params: search_interval <= 600, ignore_* <= 100000 frames");
  if (in->search_interval) out->search_interval = (int)in->search_interval;
  if (in->inertialize_halflife != 0) out->inertialize_halflife = in->inertialize_halflife;
  if (in->velocity_halflife != 0) out->velocity_halflife = in->velocity_halflife;
  if (in->rotation_halflife != 0) out->rotation_halflife = in->rotation_halflife;
  if (in->forward_speed != 0) out->forward_speed = in->forward_speed;
  if (in->side_speed != 0) out->side_speed = in->side_speed;
  if (in->back_speed != 0) out->back_speed = in->back_speed;
  if (in->ignore_surrounding) out->ignore_surrounding = (int)in->ignore_surrounding;
  if (in->ignore_range_end) out->ignore_range_end = (int)in->ignore_range_end;
  if (in->transition_cost != 0) out->transition_cost = in->transition_cost;
  if (in->replan_threshold != 0) out->replan_threshold = in->replan_threshold;
  if (in->input_f != 0) out->input_f = in->input_f;
  if (in->input_zeta != 0) out->input_zeta = in->input_zeta;
  if (in->input_r != 0) out->input_r = in->input_r;
  int rc = anim_controller_params_validate(out);
  if (rc) return fail(cv->err, cv->errlen, rc, "params: halflives > 0 s, speeds >= 0 m/s, input_f > 0 Hz, input_zeta >= 0, "
                      "transition_cost and replan_threshold >= 0");
  return 0;
}

static int convert_create(convert_t *cv, const Animserver__CreateCharactersRequest *in, srv_create_request_t *out) {
  int rc = check_name(cv, "database", in->database);
  if (rc) return rc;
  out->database = in->database;
  if ((rc = check_count(cv, "placements", in->n_placements, MAX_IDS_PER_REQUEST))) return rc;
  if ((rc = convert_params(cv, in->params, &out->params))) return rc;
  srv_placement_t *placements = arena_alloc(cv->request, (in->n_placements + 1) * sizeof *placements);
  if (!placements) return fail(cv->err, cv->errlen, ANIM_ELIMIT, "placements: over the request memory budget");
  for (size_t i = 0; i < in->n_placements; i++) {
    const Animserver__Placement *p = in->placements[i];
    if (check_finite1(cv, "placements", (int)i, p->x) || check_finite1(cv, "placements", (int)i, p->z) ||
        check_finite1(cv, "placements", (int)i, p->facing))
      return ANIM_ENONFINITE;
    if (fabsf(p->x) > 1e6f || fabsf(p->z) > 1e6f)
      return fail(cv->err, cv->errlen, ANIM_EINVAL, "placements[%zu]: |x|, |z| <= 1e6 m", i);
    srv_placement_t q = {p->x, p->z, p->facing, -1};
    if (p->start_frame) {
      if (p->start_frame->frame > INT32_MAX) return fail(cv->err, cv->errlen, ANIM_ERANGE, "placements[%zu].start_frame", i);
      q.start_frame = (int)p->start_frame->frame;
    }
    placements[i] = q;
  }
  out->placements = placements;
  out->nplacements = (int)in->n_placements;
  return 0;
}

static int convert_ids(convert_t *cv, const char *field, const uint64_t *ids, size_t n, const uint64_t **out, int *out_n) {
  int rc = check_count(cv, field, n, MAX_IDS_PER_REQUEST);
  if (rc) return rc;
  *out = ids;
  *out_n = (int)n;
  return 0;
}

static int convert_input(convert_t *cv, int index, const Animserver__CharacterInput *in, srv_input_item_t *out) {
  memset(out, 0, sizeof *out);
  out->character = in->character;
  anim_controller_input_t *c = &out->input;
  switch (in->input_case) {
  case ANIMSERVER__CHARACTER_INPUT__INPUT_STICK:
    c->kind = ANIM_INPUT_STICK;
    c->stick_x = in->stick->x, c->stick_z = in->stick->z;
    c->camera_azimuth = in->stick->camera_azimuth, c->strafe = in->stick->strafe;
    break;
  case ANIMSERVER__CHARACTER_INPUT__INPUT_VELOCITY:
    c->kind = ANIM_INPUT_VELOCITY;
    c->velocity = vec3_make(in->velocity->x, 0.0f, in->velocity->z);
    c->facing = in->velocity->facing;
    break;
  case ANIMSERVER__CHARACTER_INPUT__INPUT_GOAL:
    c->kind = ANIM_INPUT_GOAL;
    c->goal = vec3_make(in->goal->x, 0.0f, in->goal->z);
    c->goal_speed = in->goal->speed;
    break;
  default:
    return fail(cv->err, cv->errlen, ANIM_EINVAL, "inputs[%d]: needs stick, velocity or goal", index);
  }
  const float values[] = {c->stick_x, c->stick_z, c->camera_azimuth, c->velocity.x, c->velocity.z, c->facing,
                          c->goal.x, c->goal.z, c->goal_speed};
  for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
    if (check_finite1(cv, "inputs", index, values[i])) return ANIM_ENONFINITE;
  return 0;
}

static int convert_inputs(convert_t *cv, const Animserver__SetInputsRequest *in, srv_inputs_request_t *out) {
  int rc = check_count(cv, "inputs", in->n_inputs, MAX_IDS_PER_REQUEST);
  if (rc) return rc;
  srv_input_item_t *items = arena_alloc(cv->request, (in->n_inputs + 1) * sizeof *items);
  if (!items) return fail(cv->err, cv->errlen, ANIM_ELIMIT, "inputs: over the request memory budget");
  for (size_t i = 0; i < in->n_inputs; i++)
    if ((rc = convert_input(cv, (int)i, in->inputs[i], &items[i]))) return rc;
  out->items = items;
  out->n = (int)in->n_inputs;
  return 0;
}

static int convert_encoding(convert_t *cv, int value, srv_encoding_t *out) {
  if (value != SRV_ENCODING_FLOAT && value != SRV_ENCODING_QUANTIZED)
    return fail(cv->err, cv->errlen, ANIM_EINVAL, "encoding %d: ENCODING_FLOAT or ENCODING_QUANTIZED", value);
  *out = (srv_encoding_t)value;
  return 0;
}

static int convert_divisor(convert_t *cv, uint32_t value, uint32_t *out) {
  if (value > 3600) return fail(cv->err, cv->errlen, ANIM_EINVAL, "rate_divisor %u: at most 3600 ticks", value);
  *out = value ? value : 1;
  return 0;
}

static int convert_subscribe(convert_t *cv, const Animserver__SubscribeRequest *in, srv_subscribe_request_t *out) {
  int rc = convert_ids(cv, "characters", in->characters, in->n_characters, &out->ids, &out->nids);
  if (!rc) rc = convert_divisor(cv, in->rate_divisor, &out->rate_divisor);
  if (!rc) rc = convert_encoding(cv, (int)in->encoding, &out->encoding);
  out->owned = in->owned;
  out->global_positions = in->global_positions;
  out->rotations_only = in->rotations_only;
  return rc;
}

static int convert_update(convert_t *cv, const Animserver__UpdateSubscriptionRequest *in, srv_subscription_request_t *out) {
  out->subscription = in->subscription;
  out->paused = in->paused;
  int rc = convert_divisor(cv, in->rate_divisor, &out->rate_divisor);
  return rc ? rc : convert_encoding(cv, (int)in->encoding, &out->encoding);
}

static int convert_request(convert_t *cv, const Animserver__Request *in, srv_request_t *out) {
  switch (in->body_case) {
  case ANIMSERVER__REQUEST__BODY_HELLO:
    out->type = SRV_REQ_HELLO;
    return convert_hello(cv, in->hello, &out->body.hello);
  case ANIMSERVER__REQUEST__BODY_PING:
    out->type = SRV_REQ_PING;
    out->body.ping.payload = in->ping->payload.data;
    out->body.ping.payload_len = in->ping->payload.len;
    return 0;
  case ANIMSERVER__REQUEST__BODY_LIST_DATABASES:
    out->type = SRV_REQ_LIST_DATABASES;
    return 0;
  case ANIMSERVER__REQUEST__BODY_DESCRIBE_DATABASE:
    out->type = SRV_REQ_DESCRIBE_DATABASE;
    return convert_db(cv, in->describe_database->name, &out->body.db);
  case ANIMSERVER__REQUEST__BODY_LOAD_DATABASE:
    out->type = SRV_REQ_LOAD_DATABASE;
    return convert_db(cv, in->load_database->name, &out->body.db);
  case ANIMSERVER__REQUEST__BODY_RELOAD_DATABASE:
    out->type = SRV_REQ_RELOAD_DATABASE;
    return convert_db(cv, in->reload_database->name, &out->body.db);
  case ANIMSERVER__REQUEST__BODY_UNLOAD_DATABASE:
    out->type = SRV_REQ_UNLOAD_DATABASE;
    return convert_db(cv, in->unload_database->name, &out->body.db);
  case ANIMSERVER__REQUEST__BODY_SEARCH:
    out->type = SRV_REQ_SEARCH;
    return convert_queries(cv, in->search->database, &in->search->query, in->search->query ? 1 : 0,
                           &out->body.search);
  case ANIMSERVER__REQUEST__BODY_BATCH_SEARCH:
    out->type = SRV_REQ_BATCH_SEARCH;
    return convert_queries(cv, in->batch_search->database, in->batch_search->queries, in->batch_search->n_queries,
                           &out->body.search);
  case ANIMSERVER__REQUEST__BODY_POSE:
    out->type = SRV_REQ_POSE;
    return convert_pose(cv, in->pose, &out->body.pose);
  case ANIMSERVER__REQUEST__BODY_INERTIALIZE_TRANSITION:
    out->type = SRV_REQ_INERTIALIZE_TRANSITION;
    return convert_transition(cv, in->inertialize_transition, &out->body.transition);
  case ANIMSERVER__REQUEST__BODY_INERTIALIZE_EVALUATE:
    out->type = SRV_REQ_INERTIALIZE_EVALUATE;
    return convert_evaluate(cv, in->inertialize_evaluate, &out->body.evaluate);
  case ANIMSERVER__REQUEST__BODY_TRANSITION_COST:
    out->type = SRV_REQ_TRANSITION_COST;
    return convert_cost(cv, in->transition_cost, &out->body.cost);
  case ANIMSERVER__REQUEST__BODY_SPRING_TUNE:
    out->type = SRV_REQ_SPRING_TUNE;
    return convert_tune(cv, in->spring_tune, &out->body.tune);
  case ANIMSERVER__REQUEST__BODY_CREATE_CHARACTERS:
    out->type = SRV_REQ_CREATE_CHARACTERS;
    return convert_create(cv, in->create_characters, &out->body.create);
  case ANIMSERVER__REQUEST__BODY_DESTROY_CHARACTERS:
    out->type = SRV_REQ_DESTROY_CHARACTERS;
    return convert_ids(cv, "characters", in->destroy_characters->characters, in->destroy_characters->n_characters,
                       &out->body.destroy.ids, &out->body.destroy.n);
  case ANIMSERVER__REQUEST__BODY_SET_INPUTS:
    out->type = SRV_REQ_SET_INPUTS;
    return convert_inputs(cv, in->set_inputs, &out->body.inputs);
  case ANIMSERVER__REQUEST__BODY_CHARACTER_STATE:
    out->type = SRV_REQ_CHARACTER_STATE;
    out->body.state.character = in->character_state->character;
    out->body.state.offsets = in->character_state->offsets;
    return 0;
  case ANIMSERVER__REQUEST__BODY_SUBSCRIBE:
    out->type = SRV_REQ_SUBSCRIBE;
    return convert_subscribe(cv, in->subscribe, &out->body.subscribe);
  case ANIMSERVER__REQUEST__BODY_UPDATE_SUBSCRIPTION:
    out->type = SRV_REQ_UPDATE_SUBSCRIPTION;
    return convert_update(cv, in->update_subscription, &out->body.subscription);
  case ANIMSERVER__REQUEST__BODY_UNSUBSCRIBE:
    out->type = SRV_REQ_UNSUBSCRIBE;
    out->body.subscription.subscription = in->unsubscribe->subscription;
    return 0;
  case ANIMSERVER__REQUEST__BODY_SERVER_STATS:
    out->type = SRV_REQ_SERVER_STATS;
    return 0;
  case ANIMSERVER__REQUEST__BODY_SHUTDOWN:
    out->type = SRV_REQ_SHUTDOWN;
    return 0;
  default:
    return fail(cv->err, cv->errlen, ANIM_EUNSUPPORTED, "request has no body, or one this server does not know");
  }
}

int srv_codec_decode_request(const uint8_t *frame, size_t len, const srv_codec_limits_t *limits, srv_request_t *out,
                              char *err, int errlen) {
  memset(out, 0, sizeof *out);
  out->id = peek_request_id(frame, len);
  budget_t *budget = calloc(1, sizeof *budget);
  if (!budget) return fail(err, errlen, ANIM_ENOMEM, "out of memory");
  budget->limit = limits->budget_bytes;
  out->budget = budget;
  ProtobufCAllocator allocator = {budget_alloc, budget_free, budget};
  Animserver__Request *request = animserver__request__unpack(&allocator, len, frame);
  if (!request) {
    if (budget->exceeded)
      return fail(err, errlen, ANIM_ELIMIT, "request needs more than %zu bytes to decode", limits->budget_bytes);
    return fail(err, errlen, ANIM_EPROTO, "frame is not a valid Request message");
  }
  out->decoded = request;
  out->id = request->id;
  convert_t cv = {out, limits, err, errlen};
  return convert_request(&cv, request, out);
}

void srv_request_release(srv_request_t *request) {
  if (request->decoded) {
    ProtobufCAllocator allocator = {budget_alloc, budget_free, request->budget};
    animserver__request__free_unpacked(request->decoded, &allocator);
  }
  arena_free(request);
  free(request->budget);
  request->decoded = NULL;
  request->budget = NULL;
}

int srv_response_fail(srv_response_t *response, int code, const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  vsnprintf(response->message, sizeof response->message, fmt, args);
  va_end(args);
  response->error = code;
  return code;
}

/* ---- encoding ------------------------------------------------------------------ */

static const char *const request_type_names[SRV_REQ_COUNT] = {
    "hello", "ping", "list_databases", "describe_database", "load_database", "reload_database", "unload_database",
    "search", "batch_search", "pose", "inertialize_transition", "inertialize_evaluate", "transition_cost",
    "spring_tune", "create_characters", "destroy_characters", "set_inputs", "character_state", "subscribe",
    "update_subscription", "unsubscribe", "server_stats", "shutdown"};

const char *srv_request_type_name(srv_request_type_t type) {
  return (unsigned)type < SRV_REQ_COUNT ? request_type_names[type] : "unknown";
}

/* Scratch for the protobuf structs of one response: freed after packing. */
typedef struct {
  arena_block_t *blocks;
  int failed;
} scratch_t;

static void *scratch_alloc(scratch_t *s, size_t size) {
  arena_block_t *block = malloc(sizeof *block + size);
  if (!block) {
    s->failed = 1;
    return NULL;
  }
  memset(block->data, 0, size);
  block->next = s->blocks;
  s->blocks = block;
  return block->data;
}

static void scratch_free(scratch_t *s) {
  for (arena_block_t *b = s->blocks, *next; b; b = next) {
    next = b->next;
    free(b);
  }
}

static void *scratch_copy(scratch_t *s, const void *init, size_t size) {
  void *p = scratch_alloc(s, size);
  if (p) memcpy(p, init, size);
  return p;
}

/* A scratch copy of a protobuf-c INIT value (a compound literal). */
#define SCRATCH_NEW(s, type, init) ((type *)scratch_copy((s), &(type)init, sizeof(type)))

/* Encodes the protobuf message as varint(length) + bytes after headroom. */
static int encode_framed(const ProtobufCMessage *message, size_t headroom, uint8_t **out_buffer, size_t *out_len) {
  size_t size = protobuf_c_message_get_packed_size(message);
  size_t prefix = anim_varint_size(size);
  uint8_t *buffer = malloc(headroom + prefix + size);
  if (!buffer) return ANIM_ENOMEM;
  anim_varint_encode(size, buffer + headroom);
  protobuf_c_message_pack(message, buffer + headroom + prefix);
  *out_buffer = buffer;
  *out_len = prefix + size;
  return 0;
}

static Animserver__DatabaseSummary *encode_summary(scratch_t *s, const srv_db_entry_t *entry) {
  Animserver__DatabaseSummary *m = SCRATCH_NEW(s, Animserver__DatabaseSummary, ANIMSERVER__DATABASE_SUMMARY__INIT);
  if (!m) return NULL;
  const anim_database_t *db = &entry->db;
  m->name = (char *)db->name;
  m->version = db->version;
  m->frames = (uint32_t)db->nframes;
  m->bones = (uint32_t)db->nbones;
  m->frame_rate = db->frame_rate;
  m->feature_dims = (uint32_t)db->features.cols;
  m->ranges = (uint32_t)db->nranges;
  m->memory_bytes = entry->memory_bytes;
  return m;
}

static void encode_list(scratch_t *s, const srv_registry_t *registry, Animserver__ListDatabasesResponse *out) {
  out->databases = scratch_alloc(s, (size_t)(registry->count + 1) * sizeof *out->databases);
  if (!out->databases) return;
  for (int i = 0; i < registry->count; i++) out->databases[out->n_databases++] = encode_summary(s, registry->entries[i]);
}

static const char *const feature_kind_names[] = {"position", "velocity", "trajectory position",
                                                 "trajectory direction", "inertialize"};

/* "LeftFoot position", "trajectory direction": how explanations name a term. */
static void term_label(const anim_feature_term_t *term, char *out, size_t size) {
  const char *kind = (unsigned)term->kind < 5 ? feature_kind_names[term->kind] : "?";
  if (term->kind == ANIM_FEATURE_TRAJECTORY_POSITION || term->kind == ANIM_FEATURE_TRAJECTORY_DIRECTION)
    snprintf(out, size, "%s", kind);
  else
    snprintf(out, size, "%s %s", term->bone, kind);
}

static void encode_describe(scratch_t *s, const srv_db_entry_t *entry, Animserver__DescribeDatabaseResponse *out) {
  const anim_database_t *db = &entry->db;
  const anim_features_t *f = &db->features;
  out->summary = encode_summary(s, entry);
  out->bones = scratch_alloc(s, (size_t)db->nbones * sizeof *out->bones + 1);
  for (int i = 0; out->bones && i < db->nbones; i++) {
    Animserver__Bone *b = SCRATCH_NEW(s, Animserver__Bone, ANIMSERVER__BONE__INIT);
    if (!b) return;
    b->name = (char *)db->skeleton.names[i];
    b->parent = db->skeleton.parents[i];
    out->bones[out->n_bones++] = b;
  }
  out->ranges = scratch_alloc(s, (size_t)db->nranges * sizeof *out->ranges + 1);
  for (int r = 0; out->ranges && r < db->nranges; r++) {
    Animserver__Range *m = SCRATCH_NEW(s, Animserver__Range, ANIMSERVER__RANGE__INIT);
    if (!m) return;
    m->name = (char *)db->ranges[r].name;
    m->start = (uint32_t)db->ranges[r].start;
    m->stop = (uint32_t)db->ranges[r].stop;
    m->tags = scratch_alloc(s, ANIM_MAX_TAGS * sizeof *m->tags);
    for (int t = 0; m->tags && t < db->ntags; t++)
      if (db->ranges[r].tag_mask & (1u << t)) m->tags[m->n_tags++] = (char *)db->tag_names[t];
    out->ranges[out->n_ranges++] = m;
  }
  out->features = scratch_alloc(s, (size_t)f->schema.nterms * sizeof *out->features + 1);
  for (int t = 0; out->features && t < f->schema.nterms; t++) {
    const anim_feature_term_t *term = &f->schema.terms[t];
    Animserver__FeatureGroup *g = SCRATCH_NEW(s, Animserver__FeatureGroup, ANIMSERVER__FEATURE_GROUP__INIT);
    if (!g) return;
    g->kind = (Animserver__FeatureKind)term->kind;
    g->bone = (char *)term->bone;
    g->weight = term->weight;
    g->halflife = term->halflife;
    g->n_frame_offsets = (size_t)term->nsamples;
    g->frame_offsets = (int32_t *)term->frame_offsets;
    g->first_column = (uint32_t)f->group_start[t];
    g->dims = (uint32_t)f->group_dims[t];
    g->n_offset = g->n_scale = (size_t)f->group_dims[t];
    g->offset = f->offset + f->group_start[t];
    g->scale = f->scale + f->group_start[t];
    out->features[out->n_features++] = g;
  }
  out->contact_bones = scratch_alloc(s, ANIM_MAX_CONTACTS * sizeof *out->contact_bones);
  for (int c = 0; out->contact_bones && c < db->ncontacts; c++)
    out->contact_bones[out->n_contact_bones++] = (char *)db->skeleton.names[db->contact_bones[c]];
}

/* Pose arrays point straight into the database: vec3 and quat are packed floats. */
static Animserver__Pose *encode_pose(scratch_t *s, const anim_database_t *db, int frame, srv_pose_options_t o) {
  Animserver__Pose *p = SCRATCH_NEW(s, Animserver__Pose, ANIMSERVER__POSE__INIT);
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
  if (db->ncontacts > 0) {
    p->contacts = scratch_alloc(s, (size_t)db->ncontacts * sizeof *p->contacts);
    for (int c = 0; p->contacts && c < db->ncontacts; c++)
      p->contacts[p->n_contacts++] = db->contacts[(size_t)frame * (size_t)db->ncontacts + (size_t)c] != 0;
  }
  return p;
}

static Animserver__SearchResult *encode_result(scratch_t *s, const anim_database_t *db, const srv_search_result_t *r) {
  Animserver__SearchResult *m = SCRATCH_NEW(s, Animserver__SearchResult, ANIMSERVER__SEARCH_RESULT__INIT);
  if (!m) return NULL;
  m->matches = scratch_alloc(s, (size_t)r->count * sizeof *m->matches + 1);
  for (int i = 0; m->matches && i < r->count; i++) {
    Animserver__Match *match = SCRATCH_NEW(s, Animserver__Match, ANIMSERVER__MATCH__INIT);
    if (!match) return m;
    int range = anim_database_range_of(db, r->hits[i].frame);
    match->frame = (uint32_t)r->hits[i].frame;
    match->range = (uint32_t)(range < 0 ? 0 : range);
    match->range_name = range < 0 ? "" : (char *)db->ranges[range].name;
    match->cost = r->hits[i].cost;
    srv_pose_options_t local = {1, 0, 0};
    if (r->include_pose) match->pose = encode_pose(s, db, r->hits[i].frame, local);
    m->matches[m->n_matches++] = match;
  }
  if (r->explained) {
    const anim_feature_schema_t *schema = &db->features.schema;
    m->explanation = scratch_alloc(s, (size_t)schema->nterms * sizeof *m->explanation + 1);
    for (int t = 0; m->explanation && t < schema->nterms; t++) {
      Animserver__GroupCost *g = SCRATCH_NEW(s, Animserver__GroupCost, ANIMSERVER__GROUP_COST__INIT);
      char *label = scratch_alloc(s, 96);
      if (!g || !label) return m;
      term_label(&schema->terms[t], label, 96);
      g->name = label;
      g->cost = r->group_costs[t];
      m->explanation[m->n_explanation++] = g;
    }
    m->margin = r->margin;
  }
  return m;
}

static Animserver__InertializerState *encode_state(scratch_t *s, const srv_inertialize_response_t *r) {
  Animserver__InertializerState *m = SCRATCH_NEW(s, Animserver__InertializerState, ANIMSERVER__INERTIALIZER_STATE__INIT);
  if (!m) return NULL;
  size_t n = (size_t)r->nbones;
  m->n_offset_positions = 3 * n, m->offset_positions = r->offset_positions;
  m->n_offset_velocities = 3 * n, m->offset_velocities = r->offset_velocities;
  m->n_offset_rotations = 4 * n, m->offset_rotations = r->offset_rotations;
  m->n_offset_angular_velocities = 3 * n, m->offset_angular_velocities = r->offset_angular_velocities;
  m->n_anchor = 14, m->anchor = (float *)r->anchor;
  return m;
}

static Animserver__PoseState *encode_pose_state(scratch_t *s, const srv_inertialize_response_t *r) {
  Animserver__PoseState *m = SCRATCH_NEW(s, Animserver__PoseState, ANIMSERVER__POSE_STATE__INIT);
  if (!m) return NULL;
  size_t n = (size_t)r->nbones;
  m->n_positions = 3 * n, m->positions = r->positions;
  m->n_velocities = 3 * n, m->velocities = r->velocities;
  m->n_rotations = 4 * n, m->rotations = r->rotations;
  m->n_angular_velocities = 3 * n, m->angular_velocities = r->angular_velocities;
  return m;
}

static uint64_t version_of(const srv_response_t *in) { return in->entry ? in->entry->db.version : 0; }

static void encode_inertialization(scratch_t *s, const srv_response_t *in, Animserver__Response *response) {
  switch (in->type) {
  case SRV_REQ_INERTIALIZE_TRANSITION: {
    Animserver__InertializeTransitionResponse *r =
        SCRATCH_NEW(s, Animserver__InertializeTransitionResponse, ANIMSERVER__INERTIALIZE_TRANSITION_RESPONSE__INIT);
    if (!r) return;
    r->database_version = version_of(in);
    r->state = encode_state(s, &in->body.inertialize);
    response->body_case = ANIMSERVER__RESPONSE__BODY_INERTIALIZE_TRANSITION;
    response->inertialize_transition = r;
    break;
  }
  case SRV_REQ_INERTIALIZE_EVALUATE: {
    Animserver__InertializeEvaluateResponse *r =
        SCRATCH_NEW(s, Animserver__InertializeEvaluateResponse, ANIMSERVER__INERTIALIZE_EVALUATE_RESPONSE__INIT);
    if (!r) return;
    r->database_version = version_of(in);
    r->state = encode_state(s, &in->body.inertialize);
    r->output = encode_pose_state(s, &in->body.inertialize);
    response->body_case = ANIMSERVER__RESPONSE__BODY_INERTIALIZE_EVALUATE;
    response->inertialize_evaluate = r;
    break;
  }
  case SRV_REQ_TRANSITION_COST: {
    const srv_cost_response_t *c = &in->body.cost;
    Animserver__TransitionCostResponse *r =
        SCRATCH_NEW(s, Animserver__TransitionCostResponse, ANIMSERVER__TRANSITION_COST_RESPONSE__INIT);
    if (!r) return;
    r->database_version = version_of(in);
    r->exact = c->exact;
    r->approximate = c->approximate;
    r->bones = scratch_alloc(s, (size_t)c->nbones * sizeof *r->bones + 1);
    for (int b = 0; r->bones && b < c->nbones; b++) {
      Animserver__BoneCost *bc = SCRATCH_NEW(s, Animserver__BoneCost, ANIMSERVER__BONE_COST__INIT);
      if (!bc) return;
      bc->bone = (char *)c->names[b];
      bc->exact = c->bone_exact[b];
      bc->approximate = c->bone_approximate[b];
      r->bones[r->n_bones++] = bc;
    }
    response->body_case = ANIMSERVER__RESPONSE__BODY_TRANSITION_COST;
    response->transition_cost = r;
    break;
  }
  case SRV_REQ_SPRING_TUNE: {
    Animserver__SpringTuneResponse *r = SCRATCH_NEW(s, Animserver__SpringTuneResponse, ANIMSERVER__SPRING_TUNE_RESPONSE__INIT);
    if (!r) return;
    r->halflife = in->body.tune.halflife;
    r->stiffness = in->body.tune.stiffness;
    r->damping = in->body.tune.damping;
    r->erp = in->body.tune.erp;
    r->cfm = in->body.tune.cfm;
    response->body_case = ANIMSERVER__RESPONSE__BODY_SPRING_TUNE;
    response->spring_tune = r;
    break;
  }
  default:
    break;
  }
}

static Animserver__Vec3 *encode_vec3(scratch_t *s, vec3 v) {
  Animserver__Vec3 *m = SCRATCH_NEW(s, Animserver__Vec3, ANIMSERVER__VEC3__INIT);
  if (m) m->x = v.x, m->y = v.y, m->z = v.z;
  return m;
}

static Animserver__Quat *encode_quat(scratch_t *s, quat q) {
  Animserver__Quat *m = SCRATCH_NEW(s, Animserver__Quat, ANIMSERVER__QUAT__INIT);
  if (m) m->w = q.w, m->x = q.x, m->y = q.y, m->z = q.z;
  return m;
}

static void encode_character_state(scratch_t *s, const srv_response_t *in, Animserver__Response *response) {
  Animserver__CharacterStateResponse *m =
      SCRATCH_NEW(s, Animserver__CharacterStateResponse, ANIMSERVER__CHARACTER_STATE_RESPONSE__INIT);
  if (!m) return;
  const srv_state_response_t *st = &in->body.state;
  const anim_database_t *db = &in->entry->db;
  m->database_version = db->version;
  m->tick = st->tick;
  m->position = encode_vec3(s, st->position);
  m->velocity = encode_vec3(s, st->velocity);
  m->rotation = encode_quat(s, st->rotation);
  m->angular_velocity = encode_vec3(s, st->angular_velocity);
  m->desired_velocity = encode_vec3(s, st->desired_velocity);
  m->desired_rotation = encode_quat(s, st->desired_rotation);
  m->trajectory = scratch_alloc(s, (size_t)(st->ntrajectory + 1) * sizeof *m->trajectory);
  for (int i = 0; m->trajectory && i < st->ntrajectory; i++) m->trajectory[m->n_trajectory++] = encode_vec3(s, st->trajectory[i]);
  m->frame = (uint32_t)st->frame;
  m->range = st->range >= 0 ? (uint32_t)st->range : 0;
  m->range_name = st->range >= 0 ? (char *)db->ranges[st->range].name : "";
  m->time_since_transition = st->time_since_transition;
  m->searches = st->searches;
  m->transitions = st->transitions;
  m->inertializer = encode_state(s, &st->inertializer);
  m->inertialize_halflife = st->halflife;
  response->body_case = ANIMSERVER__RESPONSE__BODY_CHARACTER_STATE;
  response->character_state = m;
}

static void encode_stats(scratch_t *s, const srv_stats_response_t *st, Animserver__Response *response) {
  Animserver__ServerStatsResponse *m = SCRATCH_NEW(s, Animserver__ServerStatsResponse, ANIMSERVER__SERVER_STATS_RESPONSE__INIT);
  if (!m) return;
  m->uptime_us = st->uptime_us, m->connections = st->connections, m->requests = st->requests;
  m->errors = st->errors, m->characters = st->characters, m->tick_rate = st->tick_rate;
  m->ticks = st->ticks, m->ticks_late = st->ticks_late, m->ticks_skipped = st->ticks_skipped;
  m->lateness_p50_us = st->lateness_p50_us, m->lateness_p99_us = st->lateness_p99_us;
  m->lateness_max_us = st->lateness_max_us, m->tick_work_p50_us = st->work_p50_us, m->tick_work_p99_us = st->work_p99_us;
  m->frames_sent = st->frames_sent, m->frames_dropped = st->frames_dropped, m->stream_bytes = st->stream_bytes;
  m->poses_sent = st->poses_sent, m->cpu_user_s = st->cpu_user_s, m->cpu_system_s = st->cpu_system_s;
  m->rss_bytes = st->rss_bytes, m->slow_subscribers_closed = st->slow_subscribers_closed;
  m->character_bytes = st->character_bytes, m->pose_buffer_bytes = st->pose_buffer_bytes;
  response->body_case = ANIMSERVER__RESPONSE__BODY_SERVER_STATS;
  response->server_stats = m;
}

static void encode_character(scratch_t *s, const srv_response_t *in, Animserver__Response *response) {
  switch (in->type) {
  case SRV_REQ_CREATE_CHARACTERS: {
    Animserver__CreateCharactersResponse *m =
        SCRATCH_NEW(s, Animserver__CreateCharactersResponse, ANIMSERVER__CREATE_CHARACTERS_RESPONSE__INIT);
    if (!m) return;
    m->database_version = in->entry->db.version;
    m->n_characters = (size_t)in->body.create.n;
    m->characters = in->body.create.ids;
    response->body_case = ANIMSERVER__RESPONSE__BODY_CREATE_CHARACTERS;
    response->create_characters = m;
    break;
  }
  case SRV_REQ_DESTROY_CHARACTERS: {
    Animserver__DestroyCharactersResponse *m =
        SCRATCH_NEW(s, Animserver__DestroyCharactersResponse, ANIMSERVER__DESTROY_CHARACTERS_RESPONSE__INIT);
    if (!m) return;
    m->destroyed = in->body.destroyed;
    response->body_case = ANIMSERVER__RESPONSE__BODY_DESTROY_CHARACTERS;
    response->destroy_characters = m;
    break;
  }
  case SRV_REQ_SET_INPUTS: {
    Animserver__SetInputsResponse *m = SCRATCH_NEW(s, Animserver__SetInputsResponse, ANIMSERVER__SET_INPUTS_RESPONSE__INIT);
    if (!m) return;
    m->tick = in->body.tick;
    response->body_case = ANIMSERVER__RESPONSE__BODY_SET_INPUTS;
    response->set_inputs = m;
    break;
  }
  case SRV_REQ_CHARACTER_STATE: encode_character_state(s, in, response); break;
  case SRV_REQ_SUBSCRIBE: {
    Animserver__SubscribeResponse *m = SCRATCH_NEW(s, Animserver__SubscribeResponse, ANIMSERVER__SUBSCRIBE_RESPONSE__INIT);
    if (!m) return;
    m->subscription = in->body.subscribe.subscription;
    m->tick_rate = in->body.subscribe.tick_rate;
    m->bones = in->body.subscribe.bones;
    response->body_case = ANIMSERVER__RESPONSE__BODY_SUBSCRIBE;
    response->subscribe = m;
    break;
  }
  case SRV_REQ_UPDATE_SUBSCRIPTION:
  case SRV_REQ_UNSUBSCRIBE: {
    Animserver__SubscriptionChangedResponse *m =
        SCRATCH_NEW(s, Animserver__SubscriptionChangedResponse, ANIMSERVER__SUBSCRIPTION_CHANGED_RESPONSE__INIT);
    if (!m) return;
    m->subscription = in->body.subscription;
    response->body_case = ANIMSERVER__RESPONSE__BODY_SUBSCRIPTION_CHANGED;
    response->subscription_changed = m;
    break;
  }
  case SRV_REQ_SERVER_STATS: encode_stats(s, &in->body.stats, response); break;
  case SRV_REQ_SHUTDOWN: {
    Animserver__ShutdownResponse *m = SCRATCH_NEW(s, Animserver__ShutdownResponse, ANIMSERVER__SHUTDOWN_RESPONSE__INIT);
    if (!m) return;
    response->body_case = ANIMSERVER__RESPONSE__BODY_SHUTDOWN;
    response->shutdown = m;
    break;
  }
  default: break;
  }
}

static void encode_body(scratch_t *s, const srv_response_t *in, Animserver__Response *response) {
  switch (in->type) {
  case SRV_REQ_HELLO: {
    const srv_hello_response_t *h = &in->body.hello;
    Animserver__HelloResponse *hello = SCRATCH_NEW(s, Animserver__HelloResponse, ANIMSERVER__HELLO_RESPONSE__INIT);
    Animserver__Limits *limits = SCRATCH_NEW(s, Animserver__Limits, ANIMSERVER__LIMITS__INIT);
    if (!hello || !limits) return;
    hello->protocol_version = h->protocol_version;
    hello->server_version = (char *)h->server_version;
    hello->n_capabilities = (size_t)h->ncapabilities;
    hello->capabilities = (char **)h->capabilities;
    limits->max_frame_bytes = h->limits.max_frame_bytes;
    limits->max_in_flight = h->limits.max_in_flight;
    limits->max_batch = h->limits.max_batch;
    limits->max_k = h->limits.max_k;
    limits->output_soft_limit_bytes = h->limits.output_soft_limit;
    limits->output_hard_limit_bytes = h->limits.output_hard_limit;
    limits->max_characters = h->limits.max_characters;
    limits->tick_rate = h->limits.tick_rate;
    hello->limits = limits;
    hello->connection_id = h->connection_id;
    hello->admin = h->admin;
    response->body_case = ANIMSERVER__RESPONSE__BODY_HELLO;
    response->hello = hello;
    break;
  }
  case SRV_REQ_PING: {
    Animserver__PingResponse *ping = SCRATCH_NEW(s, Animserver__PingResponse, ANIMSERVER__PING_RESPONSE__INIT);
    if (!ping) return;
    ping->payload.data = (uint8_t *)in->body.ping.payload;
    ping->payload.len = in->body.ping.payload_len;
    ping->server_time_us = in->body.ping.server_time_us;
    response->body_case = ANIMSERVER__RESPONSE__BODY_PING;
    response->ping = ping;
    break;
  }
  case SRV_REQ_LIST_DATABASES: {
    Animserver__ListDatabasesResponse *list =
        SCRATCH_NEW(s, Animserver__ListDatabasesResponse, ANIMSERVER__LIST_DATABASES_RESPONSE__INIT);
    if (!list) return;
    encode_list(s, in->registry, list);
    response->body_case = ANIMSERVER__RESPONSE__BODY_LIST_DATABASES;
    response->list_databases = list;
    break;
  }
  case SRV_REQ_DESCRIBE_DATABASE: {
    Animserver__DescribeDatabaseResponse *d =
        SCRATCH_NEW(s, Animserver__DescribeDatabaseResponse, ANIMSERVER__DESCRIBE_DATABASE_RESPONSE__INIT);
    if (!d) return;
    encode_describe(s, in->entry, d);
    response->body_case = ANIMSERVER__RESPONSE__BODY_DESCRIBE_DATABASE;
    response->describe_database = d;
    break;
  }
  case SRV_REQ_LOAD_DATABASE:
  case SRV_REQ_RELOAD_DATABASE:
  case SRV_REQ_UNLOAD_DATABASE: {
    Animserver__DatabaseChangedResponse *c =
        SCRATCH_NEW(s, Animserver__DatabaseChangedResponse, ANIMSERVER__DATABASE_CHANGED_RESPONSE__INIT);
    if (!c) return;
    c->summary = encode_summary(s, in->entry);
    response->body_case = ANIMSERVER__RESPONSE__BODY_DATABASE_CHANGED;
    response->database_changed = c;
    break;
  }
  case SRV_REQ_SEARCH: {
    Animserver__SearchResponse *r = SCRATCH_NEW(s, Animserver__SearchResponse, ANIMSERVER__SEARCH_RESPONSE__INIT);
    if (!r) return;
    r->database_version = in->entry->db.version;
    r->result = encode_result(s, &in->entry->db, &in->body.search.results[0]);
    response->body_case = ANIMSERVER__RESPONSE__BODY_SEARCH;
    response->search = r;
    break;
  }
  case SRV_REQ_BATCH_SEARCH: {
    Animserver__BatchSearchResponse *r =
        SCRATCH_NEW(s, Animserver__BatchSearchResponse, ANIMSERVER__BATCH_SEARCH_RESPONSE__INIT);
    if (!r) return;
    r->database_version = in->entry->db.version;
    r->results = scratch_alloc(s, (size_t)in->body.search.nresults * sizeof *r->results + 1);
    for (int i = 0; r->results && i < in->body.search.nresults; i++)
      r->results[r->n_results++] = encode_result(s, &in->entry->db, &in->body.search.results[i]);
    response->body_case = ANIMSERVER__RESPONSE__BODY_BATCH_SEARCH;
    response->batch_search = r;
    break;
  }
  case SRV_REQ_POSE: {
    Animserver__PoseResponse *r = SCRATCH_NEW(s, Animserver__PoseResponse, ANIMSERVER__POSE_RESPONSE__INIT);
    if (!r) return;
    const srv_pose_response_t *p = &in->body.pose;
    r->database_version = in->entry->db.version;
    r->poses = scratch_alloc(s, (size_t)p->count * sizeof *r->poses + 1);
    for (int i = 0; r->poses && i < p->count; i++) r->poses[r->n_poses++] = encode_pose(s, &in->entry->db, p->frame + i, p->options);
    response->body_case = ANIMSERVER__RESPONSE__BODY_POSE;
    response->pose = r;
    break;
  }
  case SRV_REQ_INERTIALIZE_TRANSITION:
  case SRV_REQ_INERTIALIZE_EVALUATE:
  case SRV_REQ_TRANSITION_COST:
  case SRV_REQ_SPRING_TUNE:
    encode_inertialization(s, in, response);
    break;
  case SRV_REQ_CREATE_CHARACTERS:
  case SRV_REQ_DESTROY_CHARACTERS:
  case SRV_REQ_SET_INPUTS:
  case SRV_REQ_CHARACTER_STATE:
  case SRV_REQ_SUBSCRIBE:
  case SRV_REQ_UPDATE_SUBSCRIPTION:
  case SRV_REQ_UNSUBSCRIBE:
  case SRV_REQ_SERVER_STATS:
  case SRV_REQ_SHUTDOWN:
    encode_character(s, in, response);
    break;
  case SRV_REQ_COUNT:
    break;
  }
}

int srv_codec_encode_response(const srv_response_t *in, size_t headroom, uint8_t **out_buffer, size_t *out_len) {
  Animserver__ServerMessage message = ANIMSERVER__SERVER_MESSAGE__INIT;
  Animserver__Response response = ANIMSERVER__RESPONSE__INIT;
  Animserver__Error error = ANIMSERVER__ERROR__INIT;
  scratch_t scratch = {NULL, 0};
  message.kind_case = ANIMSERVER__SERVER_MESSAGE__KIND_RESPONSE;
  message.response = &response;
  response.id = in->id;
  if (in->error) {
    error.code = (Animserver__ErrorCode)(-in->error);
    error.message = (char *)in->message;
    response.error = &error;
  } else {
    encode_body(&scratch, in, &response);
  }
  int rc = scratch.failed ? ANIM_ENOMEM : encode_framed(&message.base, headroom, out_buffer, out_len);
  scratch_free(&scratch);
  return rc;
}

/* ---- stream frames --------------------------------------------------------------------- */

int srv_codec_encode_stream(const srv_stream_frame_t *in, uint8_t **out_buffer, size_t *out_len) {
  Animserver__ServerMessage message = ANIMSERVER__SERVER_MESSAGE__INIT;
  Animserver__StreamMessage stream = ANIMSERVER__STREAM_MESSAGE__INIT;
  size_t n = (size_t)in->nposes;
  /* One block for the pose structs and their pointer array: no allocation per pose. */
  Animserver__CharacterPose *poses = malloc((n + 1) * sizeof *poses);
  Animserver__CharacterPose **pointers = malloc((n + 1) * sizeof *pointers);
  if (!poses || !pointers) {
    free(poses), free(pointers);
    return ANIM_ENOMEM;
  }
  for (size_t i = 0; i < n; i++) {
    const srv_stream_pose_t *p = &in->poses[i];
    Animserver__CharacterPose m = ANIMSERVER__CHARACTER_POSE__INIT;
    m.character = p->character;
    m.frame = p->frame;
    m.n_positions = p->npositions, m.positions = (float *)p->positions;
    m.n_rotations = p->nrotations, m.rotations = (float *)p->rotations;
    m.quantized.data = (uint8_t *)p->quantized, m.quantized.len = p->quantized_len;
    m.n_global_positions = p->nglobal, m.global_positions = (float *)p->global_positions;
    m.contacts = p->contacts;
    m.transition = p->transition;
    poses[i] = m;
    pointers[i] = &poses[i];
  }
  stream.subscription_id = in->subscription;
  stream.tick = in->tick;
  stream.server_time_us = in->server_time_us;
  stream.n_poses = n, stream.poses = pointers;
  stream.dropped_frames = in->dropped;
  stream.encoding = (Animserver__PoseEncoding)in->encoding;
  stream.n_gone = (size_t)in->ngone, stream.gone = (uint64_t *)in->gone;
  stream.dt = in->dt;
  message.kind_case = ANIMSERVER__SERVER_MESSAGE__KIND_STREAM;
  message.stream = &stream;
  int rc = encode_framed(&message.base, 0, out_buffer, out_len);
  free(poses), free(pointers);
  return rc;
}
