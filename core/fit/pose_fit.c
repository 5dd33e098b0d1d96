/*
 * pose_fit.c: full-body poses from tracked points (see pose_fit.h for the
 * method): the fitter's memory, and a step (search, root and scale, the
 * soft-constraint solve), touching only the fitter's own block of memory.
 *
 * What it does not: build the model (pose_fit_model.c, once, shared).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anim_error.h"
#include "pose/kinematics.h"
#include "offline/feature_build.h"
#include "fit/pose_fit.h"
#include "motion/spring.h"
#include "math/umeyama.h"

static const vec3 up = {0.0f, 1.0f, 0.0f};

#define ROOT_HYPOTHESES 8     /* yaws tried when a fit starts without a root */

static quat yaw_rotation(float angle) { return quat_from_angle_axis(angle, up); }

/* ---- fitter memory ------------------------------------------------------------------- */

typedef struct {
  size_t vec3s, quats, doubles, search; /* counts, then byte offsets below */
} layout_t;

static int rows_max(const anim_pose_fit_model_t *m) { return 6 * m->ntrackers; }
static int dofs(const anim_pose_fit_model_t *m) { return 3 + 3 * m->njoints; }

#define VEC3_ARRAYS 15
#define QUAT_ARRAYS 9

static size_t align16(size_t n) { return (n + 15u) & ~(size_t)15u; }

static void layout_of(const anim_pose_fit_model_t *m, size_t offsets[4], size_t *out_total) {
  size_t nb = (size_t)m->db->nbones, rows = (size_t)rows_max(m), n = (size_t)dofs(m);
  size_t doubles = 2 * rows * n + rows * rows + 2 * rows + 2 * n + 9 * (size_t)m->njoints + 9;
  size_t sizes[4] = {VEC3_ARRAYS * nb * sizeof(vec3), (QUAT_ARRAYS * nb + (size_t)m->njoints) * sizeof(quat),
                     doubles * sizeof(double), anim_search_scratch_size(m->index, 1)};
  size_t at = 0;
  for (int i = 0; i < 4; i++) offsets[i] = at, at += align16(sizes[i]);
  *out_total = at;
}

size_t anim_pose_fitter_memory_size(const anim_pose_fit_model_t *model) {
  size_t offsets[4], total;
  layout_of(model, offsets, &total);
  return total;
}

void anim_pose_fitter_free(anim_pose_fitter_t *f) {
  if (f->owns_memory) free(f->memory);
  memset(f, 0, sizeof *f);
}

void anim_pose_fitter_reset(anim_pose_fitter_t *f) {
  f->started = 0;
  f->frame_time_accum = 0.0f;
  f->frames_since_search = 0;
  for (int k = 0; k < ANIM_POSE_FIT_MAX_TRACKERS; k++) f->present[k] = 0, f->nhistory[k] = 0, f->residuals[k] = -1.0f;
  anim_foot_locks_reset(&f->feet);
}

int anim_pose_fitter_init(anim_pose_fitter_t *out, const anim_pose_fit_model_t *model,
                          const anim_pose_fit_params_t *params, void *memory, size_t size) {
  memset(out, 0, sizeof *out);
  anim_pose_fit_params_t defaults;
  if (!params) anim_pose_fit_params_default(&defaults), params = &defaults;
  int rc = anim_pose_fit_params_validate(params);
  if (rc) return rc;
  if (!model || !model->db || !model->index) return ANIM_EINVAL;
  size_t offsets[4], total;
  layout_of(model, offsets, &total);
  if (memory && (size < total || ((uintptr_t)memory & 7u))) return ANIM_EINVAL;
  if (!memory) {
    memory = malloc(total);
    if (!memory) return ANIM_ENOMEM;
    out->owns_memory = 1;
  }
  out->memory = memory;
  out->model = model;
  out->params = *params;
  int nb = out->nbones = model->db->nbones;
  char *base = memory;
  vec3 *v = (vec3 *)(base + offsets[0]);
  vec3 **vec3s[VEC3_ARRAYS] = {&out->prior_offset_positions, &out->prior_offset_velocities, &out->prior_offset_angular,
                               &out->prior_positions, &out->prior_velocities, &out->prior_angular,
                               &out->work_positions, &out->work_globals, &out->fit_positions,
                               &out->out_offset_positions, &out->out_offset_velocities, &out->out_offset_angular,
                               &out->pose_positions, &out->global_positions, &out->fit_previous_positions};
  for (int i = 0; i < VEC3_ARRAYS; i++) *vec3s[i] = v + (size_t)i * (size_t)nb;
  quat *q = (quat *)(base + offsets[1]);
  quat **quats[QUAT_ARRAYS] = {&out->prior_offset_rotations, &out->prior_rotations, &out->work_rotations,
                               &out->work_global_rotations, &out->fit_rotations, &out->out_offset_rotations,
                               &out->pose_rotations, &out->global_rotations, &out->fit_previous_rotations};
  for (int i = 0; i < QUAT_ARRAYS; i++) *quats[i] = q + (size_t)i * (size_t)nb;
  out->joint_offsets = q + (size_t)QUAT_ARRAYS * (size_t)nb;
  size_t rows = (size_t)rows_max(model), n = (size_t)dofs(model);
  double *d = (double *)(base + offsets[2]);
  out->jacobian = d;                 /* rows x n, then J M^-1 (rows x n) */
  out->system = d + 2 * rows * n;    /* rows x rows */
  out->rhs = out->system + rows * rows; /* b (rows), lambda (rows), d (n), dq (n) */
  out->minv = out->rhs + 2 * rows + 2 * n; /* 3x3 blocks: translation, then each joint */
  out->search_scratch = base + offsets[3];
  rc = anim_spring_halflife_reaching(&out->tracker_halflife, params->tracker_alpha, params->tracker_time);
  if (!rc)
    rc = anim_inertializer_init(&out->prior_inertializer, (size_t)nb, out->prior_offset_positions,
                                out->prior_offset_velocities, out->prior_offset_rotations, out->prior_offset_angular);
  if (rc) {
    anim_pose_fitter_free(out);
    return rc;
  }
  const anim_foot_lock_params_t *lock = &params->foot_lock;
  if (!lock->enabled || anim_foot_locks_init(&out->feet, model->db, lock->unlock_radius, lock->release_halflife) != 0)
    out->feet.nfeet = 0; /* a skeleton without legs under its contact bones goes unlocked */
  anim_pose_fitter_reset(out);
  return 0;
}

/* ---- small helpers ------------------------------------------------------------------------ */

/* Whole database frames dt brings, the remainder kept. */
static int take_frames(anim_pose_fitter_t *f, float dt) {
  f->frame_time_accum += dt;
  int frames = (int)floorf(f->frame_time_accum * f->model->db->frame_rate);
  f->frame_time_accum -= (float)frames / f->model->db->frame_rate;
  return frames;
}

/* Least-squares slope of the last positions (oldest first), per second. */
static vec3 history_slope(const vec3 *h, int n, float dt) {
  if (n < 2) return vec3_zero();
  float mean_i = 0.5f * (float)(n - 1), sxx = 0.0f;
  vec3 mean = vec3_zero(), sxy = vec3_zero();
  for (int i = 0; i < n; i++) mean = vec3_add(mean, h[i]);
  mean = vec3_scale(mean, 1.0f / (float)n);
  for (int i = 0; i < n; i++) {
    float di = (float)i - mean_i;
    sxx += di * di;
    sxy = vec3_add(sxy, vec3_scale(vec3_sub(h[i], mean), di));
  }
  return vec3_scale(sxy, 1.0f / (sxx * dt));
}

static vec3 tracked_point(const anim_pose_fit_model_t *m, int k, const vec3 *globals, const quat *rotations,
                          float scale) {
  int b = m->tracker_bones[k];
  return vec3_add(globals[b], quat_mul_vec3(rotations[b], vec3_scale(m->tracker_offsets[k], scale)));
}

/* Locals of the prior pose placed at the root (position, yaw), bone
 * lengths times scale. */
static void place_pose(vec3 *out_positions, quat *out_rotations, const vec3 *positions, const quat *rotations,
                       int nbones, vec3 root, float yaw, float scale) {
  out_positions[0] = root;
  out_rotations[0] = yaw_rotation(yaw);
  for (int b = 1; b < nbones; b++) out_positions[b] = vec3_scale(positions[b], scale), out_rotations[b] = rotations[b];
}

/* ---- search ----------------------------------------------------------------------------- */

typedef struct {
  vec3 goals[ANIM_POSE_FIT_MAX_TRACKERS];       /* world */
  quat goal_rotations[ANIM_POSE_FIT_MAX_TRACKERS];
  vec3 velocities[ANIM_POSE_FIT_MAX_TRACKERS];  /* world, m/s */
  float weights[ANIM_POSE_FIT_MAX_TRACKERS];
  int present[ANIM_POSE_FIT_MAX_TRACKERS], oriented[ANIM_POSE_FIT_MAX_TRACKERS];
  int npresent;
} goals_t;

/* The normalized query for a root (position, yaw) and scale: each present
 * tracker's bone position and velocity in character space, in database
 * metres. A lost tracker's terms take the shown pose's bone and its
 * velocity once there is one (a velocity of zero instead makes the search
 * look for a standing pose: 15.5 cm instead of 10.9 cm error on a hand
 * dropped for a second, 5.9 cm instead of 4.2 cm on the whole body), else
 * the database mean (normalized 0). */
static void build_query(const anim_pose_fitter_t *f, const goals_t *g, vec3 root, float yaw, float scale,
                        float *out_query) {
  const anim_pose_fit_model_t *m = f->model;
  const anim_features_t *ft = &m->features;
  quat inv = quat_inv(yaw_rotation(yaw));
  float raw[ANIM_MAX_FEATURE_DIMS];
  for (int k = 0; k < m->ntrackers; k++) {
    int b = m->tracker_bones[k];
    vec3 p, v;
    if (g->present[k]) {
      /* the bone, not the tracked point: take the offset off in the shown pose's frame */
      vec3 off = f->started ? quat_mul_vec3(f->global_rotations[b], vec3_scale(m->tracker_offsets[k], scale))
                            : vec3_zero();
      p = vec3_sub(g->goals[k], off), v = g->velocities[k];
    } else if (f->started) { /* the shown bone, falling back to the prior: consistent with it */
      p = f->global_positions[b], v = f->shown_velocities[k];
    } else {
      for (int c = 0; c < 6; c++) raw[6 * k + c] = ft->offset[6 * k + c]; /* normalizes to 0 */
      continue;
    }
    vec3 pc = vec3_scale(quat_mul_vec3(inv, vec3_sub(p, root)), 1.0f / scale);
    vec3 vc = vec3_scale(quat_mul_vec3(inv, v), 1.0f / scale);
    raw[6 * k + 0] = pc.x, raw[6 * k + 1] = pc.y, raw[6 * k + 2] = pc.z;
    raw[6 * k + 3] = vc.x, raw[6 * k + 4] = vc.y, raw[6 * k + 5] = vc.z;
  }
  anim_features_normalize(ft, raw, out_query);
}

/* Best frame for the query (the frame playing competing when >= 0), or -1;
 * its cost in *out_cost when not NULL. */
static int search(anim_pose_fitter_t *f, const float *query, int current, float *out_cost) {
  anim_search_query_t q = {query, 1, current, f->params.transition_cost, f->params.ignore_range_end, 0, 0};
  if (current < 0) q.transition_cost = 0.0f;
  anim_search_hit_t hit;
  int count = 0;
  f->searches++;
  if (anim_search_run(f->model->index, &q, &hit, &count, f->search_scratch) != 0 || count < 1) return -1;
  if (out_cost) *out_cost = hit.cost;
  return hit.frame;
}

/* ---- root and scale -------------------------------------------------------------------- */

/* The prior's tracked points in its character space (root at the origin,
 * facing +Z), scaled; uses the work arrays as scratch. */
static void prior_points(anim_pose_fitter_t *f, const vec3 *positions, const quat *rotations, float scale,
                         vec3 *out_points) {
  const anim_pose_fit_model_t *m = f->model;
  place_pose(f->work_positions, f->work_rotations, positions, rotations, f->nbones, vec3_zero(), 0.0f, scale);
  anim_fk(f->work_globals, f->work_global_rotations, f->work_positions, f->work_rotations,
          m->db->skeleton.parents, f->nbones);
  for (int k = 0; k < m->ntrackers; k++)
    out_points[k] = tracked_point(m, k, f->work_globals, f->work_global_rotations, scale);
}

static void root_fit_weights(const anim_pose_fit_model_t *m, const goals_t *g, float *out_w) {
  for (int k = 0; k < m->ntrackers; k++) out_w[k] = g->present[k] ? g->weights[k] * m->root_weights[k] : 0.0f;
}

/* Root yaw aligning the prior's points to the goals (weighted YAW fit);
 * ANIM_EINVAL when the present trackers cannot fix a yaw. */
static int fit_root(const anim_pose_fit_model_t *m, const goals_t *g, const vec3 *points, float *out_yaw) {
  float w[ANIM_POSE_FIT_MAX_TRACKERS];
  root_fit_weights(m, g, w);
  anim_umeyama_t fit;
  int rc = anim_umeyama_fit(&fit, ANIM_UMEYAMA_YAW, points, g->goals, w, m->ntrackers);
  if (rc) return rc;
  *out_yaw = fit.yaw;
  return 0;
}

/* The ground translation that puts the points' weighted centroid, turned
 * by yaw, under the goals' (the YAW fit's translation for a given yaw).
 * Unchanged without any weight. */
static void place_root(const anim_pose_fit_model_t *m, const goals_t *g, const vec3 *points, float yaw,
                       vec3 *io_root) {
  float w[ANIM_POSE_FIT_MAX_TRACKERS], sw = 0.0f;
  root_fit_weights(m, g, w);
  vec3 cp = vec3_zero(), cg = vec3_zero();
  for (int k = 0; k < m->ntrackers; k++)
    sw += w[k], cp = vec3_add(cp, vec3_scale(points[k], w[k])), cg = vec3_add(cg, vec3_scale(g->goals[k], w[k]));
  if (!(sw > 0.0f)) return;
  vec3 t = vec3_sub(vec3_scale(cg, 1.0f / sw), quat_mul_vec3(yaw_rotation(yaw), vec3_scale(cp, 1.0f / sw)));
  *io_root = vec3_make(t.x, 0.0f, t.z);
}

/* ---- the soft-constraint solve --------------------------------------------------------------- */

/* In-place Cholesky solve of the symmetric positive definite n x n system
 * a x = b (b overwritten by x). ANIM_EINVAL if a is not positive definite. */
static int cholesky_solve(double *a, double *b, int n) {
  for (int j = 0; j < n; j++) {
    double s = a[j * n + j];
    for (int k = 0; k < j; k++) s -= a[j * n + k] * a[j * n + k];
    if (!(s > 0.0)) return ANIM_EINVAL;
    double l = sqrt(s);
    a[j * n + j] = l;
    for (int i = j + 1; i < n; i++) {
      double t = a[i * n + j];
      for (int k = 0; k < j; k++) t -= a[i * n + k] * a[j * n + k];
      a[i * n + j] = t / l;
    }
  }
  for (int i = 0; i < n; i++) {
    double t = b[i];
    for (int k = 0; k < i; k++) t -= a[i * n + k] * b[k];
    b[i] = t / a[i * n + i];
  }
  for (int i = n - 1; i >= 0; i--) {
    double t = b[i];
    for (int k = i + 1; k < n; k++) t -= a[k * n + i] * b[k];
    b[i] = t / a[i * n + i];
  }
  return 0;
}

static void quat_to_matrix(quat q, double m[3][3]) {
  double w = q.w, x = q.x, y = q.y, z = q.z;
  m[0][0] = 1 - 2 * (y * y + z * z), m[0][1] = 2 * (x * y - w * z), m[0][2] = 2 * (x * z + w * y);
  m[1][0] = 2 * (x * y + w * z), m[1][1] = 1 - 2 * (x * x + z * z), m[1][2] = 2 * (y * z - w * x);
  m[2][0] = 2 * (x * z - w * y), m[2][1] = 2 * (y * z + w * x), m[2][2] = 1 - 2 * (x * x + y * y);
}

static void clamp_to_limits(const anim_pose_fit_model_t *m, int j, float margin, quat *io_local) {
  quat mean = m->joint_mean[j];
  vec3 v = quat_to_scaled_angle_axis(quat_abs(quat_inv_mul(mean, *io_local)));
  vec3 lo = m->joint_low[j], hi = m->joint_high[j];
  vec3 c = vec3_make(clampf(v.x, lo.x - margin, hi.x + margin), clampf(v.y, lo.y - margin, hi.y + margin),
                     clampf(v.z, lo.z - margin, hi.z + margin));
  if (c.x != v.x || c.y != v.y || c.z != v.z)
    *io_local = quat_normalize(quat_mul(mean, quat_from_scaled_angle_axis(c)));
}

/* One Gauss-Newton step of the soft-constraint problem (pose_fit.h, step 4)
 * on the work pose, whose FK it computes first. */
static int solve_step(anim_pose_fitter_t *f, const goals_t *g, float scale) {
  const anim_pose_fit_model_t *m = f->model;
  const anim_pose_fit_params_t *p = &f->params;
  const int *parents = m->db->skeleton.parents;
  anim_fk(f->work_globals, f->work_global_rotations, f->work_positions, f->work_rotations, parents, f->nbones);
  int n = dofs(m), rows = 0;
  double *jac = f->jacobian, *jm = f->jacobian + (size_t)rows_max(m) * (size_t)n;
  double *a = f->system, *b = f->rhs, *lambda = b + rows_max(m), *d = lambda + rows_max(m), *dq = d + n;
  double cfm[6 * ANIM_POSE_FIT_MAX_TRACKERS];
  double (*minv)[3][3] = (double (*)[3][3])f->minv;

  /* M^-1 blocks, world axes, and d (the way back to the prior). */
  int pel = m->pelvis;
  quat pel_parent = f->work_global_rotations[parents[pel]];
  memset(minv, 0, sizeof(double[3][3]) * (size_t)(m->njoints + 1));
  for (int a3 = 0; a3 < 3; a3++) minv[0][a3][a3] = (double)p->translation_sigma * p->translation_sigma;
  vec3 dt = quat_mul_vec3(pel_parent, vec3_sub(vec3_scale(f->prior_positions[pel], scale), f->work_positions[pel]));
  d[0] = dt.x, d[1] = dt.y, d[2] = dt.z;
  for (int j = 0; j < m->njoints; j++) {
    int bone = m->joints[j];
    quat parent = f->work_global_rotations[parents[bone]];
    double r[3][3];
    quat_to_matrix(quat_mul(parent, m->joint_mean[j]), r);
    vec3 sg = vec3_scale(m->joint_sigma[j], p->prior_sigma_scale);
    double s2[3] = {(double)sg.x * sg.x, (double)sg.y * sg.y, (double)sg.z * sg.z};
    for (int r1 = 0; r1 < 3; r1++)
      for (int r2 = 0; r2 < 3; r2++)
        minv[j + 1][r1][r2] = r[r1][0] * s2[0] * r[r2][0] + r[r1][1] * s2[1] * r[r2][1] + r[r1][2] * s2[2] * r[r2][2];
    vec3 back = quat_mul_vec3(parent, quat_to_scaled_angle_axis(quat_abs(
                                          quat_mul_inv(f->prior_rotations[bone], f->work_rotations[bone]))));
    d[3 + 3 * j] = back.x, d[4 + 3 * j] = back.y, d[5 + 3 * j] = back.z;
  }

  /* Rows: goal errors and their Jacobian. */
  for (int k = 0; k < m->ntrackers; k++) {
    if (!g->present[k]) continue;
    int tb = m->tracker_bones[k];
    vec3 x = tracked_point(m, k, f->work_globals, f->work_global_rotations, scale);
    vec3 e = vec3_sub(g->goals[k], x);
    double cfm_p = (double)p->tracker_sigma * p->tracker_sigma / g->weights[k];
    double cfm_o = (double)p->orientation_sigma * p->orientation_sigma / g->weights[k];
    int kinds = g->oriented[k] ? 2 : 1;
    for (int kind = 0; kind < kinds; kind++) {
      if (kind == 1)
        e = quat_to_scaled_angle_axis(quat_abs(quat_mul_inv(g->goal_rotations[k], f->work_global_rotations[tb])));
      float ev[3] = {e.x, e.y, e.z};
      for (int r = 0; r < 3; r++) {
        double *row = jac + (size_t)(rows + r) * (size_t)n;
        memset(row, 0, sizeof(double) * (size_t)n);
        if (kind == 0) row[r] = 1.0; /* pelvis translation */
        b[rows + r] = ev[r];
        cfm[rows + r] = kind ? cfm_o : cfm_p;
      }
      for (int j = 0; j < m->njoints; j++) {
        if (!(m->tracker_joint_mask[k][j >> 5] & (1u << (j & 31)))) continue;
        vec3 lever = vec3_sub(x, f->work_globals[m->joints[j]]);
        for (int axis = 0; axis < 3; axis++) {
          vec3 u = vec3_make(axis == 0, axis == 1, axis == 2);
          vec3 col = kind ? u : vec3_cross(u, lever); /* d x / d theta_axis = axis x (x - joint) */
          jac[(size_t)(rows + 0) * (size_t)n + (size_t)(3 + 3 * j + axis)] = col.x;
          jac[(size_t)(rows + 1) * (size_t)n + (size_t)(3 + 3 * j + axis)] = col.y;
          jac[(size_t)(rows + 2) * (size_t)n + (size_t)(3 + 3 * j + axis)] = col.z;
        }
      }
      rows += 3;
    }
  }

  /* J M^-1 (block diagonal M^-1), then A = J M^-1 J^T + CFM, b = r - J d. */
  for (int r = 0; r < rows; r++) {
    const double *row = jac + (size_t)r * (size_t)n;
    double *out = jm + (size_t)r * (size_t)n;
    for (int blk = 0; blk <= m->njoints; blk++)
      for (int c = 0; c < 3; c++)
        out[3 * blk + c] = row[3 * blk] * minv[blk][0][c] + row[3 * blk + 1] * minv[blk][1][c] +
                           row[3 * blk + 2] * minv[blk][2][c];
    double jd = 0.0;
    for (int c = 0; c < n; c++) jd += row[c] * d[c];
    b[r] -= jd;
  }
  for (int r1 = 0; r1 < rows; r1++)
    for (int r2 = 0; r2 <= r1; r2++) {
      const double *x1 = jm + (size_t)r1 * (size_t)n, *x2 = jac + (size_t)r2 * (size_t)n;
      double s = 0.0;
      for (int c = 0; c < n; c++) s += x1[c] * x2[c];
      a[r1 * rows + r2] = a[r2 * rows + r1] = s + (r1 == r2 ? cfm[r1] : 0.0);
    }
  memcpy(lambda, b, sizeof(double) * (size_t)rows);
  int rc = rows ? cholesky_solve(a, lambda, rows) : 0; /* no rows: straight back to the prior */
  if (rc) return rc;
  for (int c = 0; c < n; c++) {
    double s = d[c];
    for (int r = 0; r < rows; r++) s += jm[(size_t)r * (size_t)n + (size_t)c] * lambda[r];
    dq[c] = s;
  }

  /* Apply: the pelvis moves in its parent's frame, each joint turns about a
   * world axis (expressed in its parent's frame), then the limits. */
  vec3 move = quat_inv_mul_vec3(pel_parent, vec3_make((float)dq[0], (float)dq[1], (float)dq[2]));
  f->work_positions[pel] = vec3_add(f->work_positions[pel], move);
  for (int j = 0; j < m->njoints; j++) {
    int bone = m->joints[j];
    vec3 turn = vec3_make((float)dq[3 + 3 * j], (float)dq[4 + 3 * j], (float)dq[5 + 3 * j]);
    vec3 local = quat_inv_mul_vec3(f->work_global_rotations[parents[bone]], turn);
    f->work_rotations[bone] = quat_normalize(quat_mul(quat_from_scaled_angle_axis(local), f->work_rotations[bone]));
    if (p->limit_joints) clamp_to_limits(m, j, p->limit_margin, &f->work_rotations[bone]);
  }
  return 0;
}

/* ---- a step --------------------------------------------------------------------------------- */

static int validate_inputs(const anim_pose_fit_model_t *m, const anim_tracker_input_t *in) {
  for (int k = 0; k < m->ntrackers; k++) {
    const anim_tracker_input_t *t = &in[k];
    if (!t->present) continue;
    if (!vec3_finite(t->position) || !isfinite(t->weight)) return ANIM_ENONFINITE;
    if (!(t->weight > 0.0f)) return ANIM_EINVAL;
    if (t->has_velocity && !vec3_finite(t->velocity)) return ANIM_ENONFINITE;
    if (t->has_orientation) {
      quat q = t->orientation;
      if (!isfinite(q.w) || !isfinite(q.x) || !isfinite(q.y) || !isfinite(q.z)) return ANIM_ENONFINITE;
      if (fabsf(quat_dot(q, q) - 1.0f) > 1e-3f) return ANIM_EINVAL;
    }
  }
  return 0;
}

/* Goals from the measurements (pose_fit.h, step 1); notes lost trackers.
 * A position goal is a critically damped spring tracking the measurement
 * moving at its velocity (spring.h, exact for any dt: no lag at constant
 * velocity); it starts where the shown pose has the point. An orientation
 * goal is the measurement times an offset that starts at (shown /
 * measured) and decays with the same spring. */
static void update_goals(anim_pose_fitter_t *f, const anim_tracker_input_t *in, float dt, goals_t *g,
                         unsigned *out_lost, unsigned *out_appeared) {
  const anim_pose_fit_model_t *m = f->model;
  float halflife = (float)f->tracker_halflife;
  memset(g, 0, sizeof *g);
  *out_lost = *out_appeared = 0;
  for (int k = 0; k < m->ntrackers; k++) {
    const anim_tracker_input_t *t = &in[k];
    if (!t->present) {
      if (f->present[k]) *out_lost |= 1u << k;
      f->present[k] = 0, f->nhistory[k] = 0;
      continue;
    }
    if (f->nhistory[k] == ANIM_POSE_FIT_HISTORY) {
      memmove(f->history[k], f->history[k] + 1, sizeof(vec3) * (ANIM_POSE_FIT_HISTORY - 1));
      f->nhistory[k]--;
    }
    f->history[k][f->nhistory[k]++] = t->position;
    vec3 velocity = t->has_velocity ? t->velocity : history_slope(f->history[k], f->nhistory[k], dt);
    if (!f->present[k]) { /* appears */
      *out_appeared |= 1u << k;
      int b = m->tracker_bones[k];
      f->goal_position[k] = f->started ? tracked_point(m, k, f->global_positions, f->global_rotations, f->scale)
                                       : t->position;
      f->goal_velocity[k] = velocity;
      f->goal_offset_rotation[k] = f->started && t->has_orientation
                                       ? quat_abs(quat_mul_inv(f->global_rotations[b], t->orientation))
                                       : quat_identity();
      f->goal_offset_angular[k] = vec3_zero();
    } else {
      /* the measurement was at position - velocity dt when the step began */
      anim_spring_track_vec3(&f->goal_position[k], &f->goal_velocity[k],
                             vec3_sub(t->position, vec3_scale(velocity, dt)), velocity, halflife, dt);
      anim_spring_decay_quat(&f->goal_offset_rotation[k], &f->goal_offset_angular[k], halflife, dt);
    }
    f->present[k] = 1;
    g->present[k] = 1;
    g->npresent++;
    g->weights[k] = t->weight;
    g->goals[k] = f->goal_position[k];
    g->velocities[k] = f->goal_velocity[k];
    g->oriented[k] = t->has_orientation;
    if (t->has_orientation) g->goal_rotations[k] = quat_normalize(quat_mul(f->goal_offset_rotation[k], t->orientation));
  }
}

/* The tracker whose travel moves the predicted root: the pelvis' if
 * tracked and present, else the first present one; -1 without any. */
static int travel_tracker(const anim_pose_fit_model_t *m, const goals_t *g) {
  for (int k = 0; k < m->ntrackers; k++)
    if (g->present[k] && m->tracker_bones[k] == m->pelvis) return k;
  for (int k = 0; k < m->ntrackers; k++)
    if (g->present[k]) return k;
  return -1;
}

/* First step: the scale from heights, the root from the yaw that explains
 * the trackers best among ROOT_HYPOTHESES, each with its own search. */
static void start(anim_pose_fitter_t *f, const goals_t *g) {
  const anim_pose_fit_model_t *m = f->model;
  const anim_database_t *db = m->db;
  double height = 0.0, mean = 0.0;
  vec3 centre = vec3_zero();
  for (int k = 0; k < m->ntrackers; k++)
    if (g->present[k]) height += g->goals[k].y, mean += m->mean_heights[k], centre = vec3_add(centre, g->goals[k]);
  float scale = f->params.scale > 0.0f ? f->params.scale : (height > 0.0 && mean > 0.0 ? (float)(height / mean) : 1.0f);
  f->scale = scale, f->scale_log_mean = logf(scale);
  int travel = travel_tracker(m, g);
  vec3 root = travel >= 0 ? g->goals[travel] : vec3_scale(centre, 1.0f / (float)g->npresent);
  root.y = 0.0f;
  float query[ANIM_MAX_FEATURE_DIMS];
  vec3 points[ANIM_POSE_FIT_MAX_TRACKERS];
  /* Each yaw's query is put in its own frame; the nearest frame's cost says
   * how well a pose facing that way explains positions and velocities. */
  float best_cost = INFINITY, best_yaw = 0.0f;
  int best_frame = 0;
  for (int h = 0; h < ROOT_HYPOTHESES; h++) {
    float yaw = 2.0f * ANIM_PI * (float)h / ROOT_HYPOTHESES, cost;
    build_query(f, g, root, yaw, scale, query);
    int frame = search(f, query, -1, &cost);
    if (frame >= 0 && cost < best_cost) best_cost = cost, best_frame = frame, best_yaw = yaw;
  }
  size_t best = (size_t)best_frame * (size_t)db->nbones;
  prior_points(f, db->local_positions + best, db->local_rotations + best, scale, points);
  (void)fit_root(m, g, points, &best_yaw); /* refined when the trackers fix a yaw */
  place_root(m, g, points, best_yaw, &root);
  f->prior_frame = best_frame;
  f->root_position = root, f->root_yaw = best_yaw, f->root_yaw_velocity = 0.0f;
  size_t base = (size_t)best_frame * (size_t)db->nbones;
  anim_inertializer_init(&f->prior_inertializer, (size_t)f->nbones, f->prior_offset_positions,
                         f->prior_offset_velocities, f->prior_offset_rotations, f->prior_offset_angular);
  anim_inertializer_place(&f->prior_inertializer, db->local_positions[base], db->local_rotations[base], vec3_zero(),
                          quat_identity());
  for (int j = 0; j < m->njoints; j++) f->joint_offsets[j] = quat_identity();
  f->pelvis_offset = vec3_zero();
  for (int b = 0; b < f->nbones; b++) {
    f->out_offset_positions[b] = f->out_offset_velocities[b] = f->out_offset_angular[b] = vec3_zero();
    f->out_offset_rotations[b] = quat_identity();
  }
  f->frame_time_accum = 0.0f;
  f->frames_since_search = 0;
  anim_foot_locks_reset(&f->feet);
}

/* Advances the prior: the predicted root, a search when due, the frame
 * played on (pose_fit.h, step 2). */
static void advance_prior(anim_pose_fitter_t *f, const goals_t *g, int travel, float dt) {
  const anim_pose_fit_model_t *m = f->model;
  const anim_database_t *db = m->db;
  if (travel >= 0 && travel == f->reference_tracker) {
    vec3 move = vec3_sub(g->goals[travel], f->pelvis_reference);
    f->root_position = vec3_add(f->root_position, vec3_make(move.x, 0.0f, move.z));
  }
  int frames = take_frames(f, dt);
  f->frames_since_search += frames;
  int stop = anim_database_range_stop(db, f->prior_frame);
  int near_end = f->prior_frame + frames >= stop - 1;
  if (g->npresent > 0 && (f->frames_since_search >= f->params.search_interval || near_end)) {
    float query[ANIM_MAX_FEATURE_DIMS];
    build_query(f, g, f->root_position, f->root_yaw + f->root_yaw_velocity * dt, f->scale, query);
    int best = search(f, query, near_end ? -1 : f->prior_frame, NULL);
    f->frames_since_search = 0;
    if (best >= 0 && best != f->prior_frame) {
      anim_pose_view_t src = anim_database_frame_pose(db, f->prior_frame), dst = anim_database_frame_pose(db, best);
      if (anim_inertializer_transition(&f->prior_inertializer, &src, &dst) == 0)
        f->prior_frame = best, f->transitions++;
      stop = anim_database_range_stop(db, f->prior_frame);
    }
  }
  f->prior_frame = f->prior_frame + frames < stop ? f->prior_frame + frames : stop - 1;
}

/* Root and scale from the prior's points (pose_fit.h, step 3). */
static void fit_root_and_scale(anim_pose_fitter_t *f, const goals_t *g, float dt) {
  const anim_pose_fit_model_t *m = f->model;
  vec3 points[ANIM_POSE_FIT_MAX_TRACKERS];
  prior_points(f, f->prior_positions, f->prior_rotations, f->scale, points);
  /* The yaw follows its fit through a critically damped spring (the fit
   * wobbles with the prior's arm swing); the shortest way round. */
  float yaw;
  if (fit_root(m, g, points, &yaw) == 0) {
    float goal = f->root_yaw + remainderf(yaw - f->root_yaw, 2.0f * ANIM_PI);
    anim_spring_simple(&f->root_yaw, &f->root_yaw_velocity, goal, f->params.root_halflife, dt);
  } else {
    f->root_yaw += f->root_yaw_velocity * dt;
  }
  place_root(m, g, points, f->root_yaw, &f->root_position);
  if (f->params.scale > 0.0f || g->npresent < 3) return;
  float w[ANIM_POSE_FIT_MAX_TRACKERS];
  root_fit_weights(m, g, w);
  anim_umeyama_t sim;
  if (anim_umeyama_fit(&sim, ANIM_UMEYAMA_SIMILARITY, points, g->goals, w, m->ntrackers) != 0) return;
  float blend = 1.0f - exp2f(-dt / f->params.scale_halflife);
  f->scale_log_mean += blend * logf(sim.scale); /* points were already scaled by the current estimate */
  f->scale = expf(f->scale_log_mean);
}

/* Joints moved by a tracker of the set `which` (bit k: tracker k) and by no
 * present tracker outside it. */
static void exclusive_joints(const anim_pose_fit_model_t *m, unsigned which, const int *present, uint32_t out[4]) {
  memset(out, 0, 4 * sizeof(uint32_t));
  for (int k = 0; k < m->ntrackers; k++)
    for (int w = 0; w < 4; w++) out[w] |= (which >> k & 1u) ? m->tracker_joint_mask[k][w] : 0u;
  for (int k = 0; k < m->ntrackers; k++)
    for (int w = 0; w < 4; w++) out[w] &= present[k] && !(which >> k & 1u) ? ~m->tracker_joint_mask[k][w] : ~0u;
}

int anim_pose_fitter_step(anim_pose_fitter_t *f, const anim_tracker_input_t *inputs, float dt) {
  if (!f || !f->model || !inputs || !(dt > 0.0f) || !isfinite(dt)) return ANIM_EINVAL;
  const anim_pose_fit_model_t *m = f->model;
  const anim_database_t *db = m->db;
  const anim_pose_fit_params_t *p = &f->params;
  int rc = validate_inputs(m, inputs);
  if (rc) return rc;
  if (!f->started) {
    int any = 0;
    for (int k = 0; k < m->ntrackers; k++) any |= inputs[k].present;
    if (!any) return ANIM_ENOTFOUND;
  }
  goals_t g;
  unsigned lost, appeared; /* bit k: tracker k lost / back this frame */
  update_goals(f, inputs, dt, &g, &lost, &appeared);
  int travel = travel_tracker(m, &g);

  if (!f->started) {
    start(f, &g);
    lost = 0;
  } else {
    advance_prior(f, &g, travel, dt);
  }
  f->reference_tracker = travel;
  if (travel >= 0) f->pelvis_reference = g.goals[travel];
  anim_pose_view_t view = anim_database_frame_pose(db, f->prior_frame);
  anim_pose_buffer_t prior = {(size_t)f->nbones, f->prior_positions, f->prior_velocities, f->prior_rotations,
                              f->prior_angular};
  rc = anim_inertializer_update(&f->prior_inertializer, &prior, &view, p->inertialize_halflife, f->started ? dt : 0.0f);
  if (rc) return rc;
  fit_root_and_scale(f, &g, dt);

  /* The work pose: the prior at the root, plus last step's offsets. */
  float scale = f->scale;
  place_pose(f->work_positions, f->work_rotations, f->prior_positions, f->prior_rotations, f->nbones,
             f->root_position, f->root_yaw, scale);
  for (int j = 0; j < m->njoints; j++) {
    int b = m->joints[j];
    f->work_rotations[b] = quat_normalize(quat_mul(f->joint_offsets[j], f->work_rotations[b]));
  }
  f->work_positions[m->pelvis] = vec3_add(f->work_positions[m->pelvis], vec3_scale(f->pelvis_offset, scale));
  for (int it = 0; it < (g.npresent > 0 ? p->iterations : 1); it++)
    if ((rc = solve_step(f, &g, scale)) != 0) return rc;
  for (int j = 0; j < m->njoints; j++) {
    int b = m->joints[j];
    f->joint_offsets[j] = quat_abs(quat_normalize(quat_mul_inv(f->work_rotations[b], f->prior_rotations[b])));
  }
  f->pelvis_offset = vec3_scale(
      vec3_sub(f->work_positions[m->pelvis], vec3_scale(f->prior_positions[m->pelvis], scale)), 1.0f / scale);

  /* Lost trackers: the jump of the fit is carried by decaying offsets on
   * the shown pose. The offsets decay first; a transition is taken at this
   * instant, from the last fit moved on by its own velocity (the source:
   * what the fit would show now had nothing been lost) to this fit, whose
   * velocity is the source's except on the joints only lost trackers held,
   * which now move with the prior. */
  uint32_t freed[4], taken[4]; /* joints only lost trackers held; joints only new trackers hold */
  exclusive_joints(m, lost, g.present, freed);
  exclusive_joints(m, appeared, g.present, taken);
  float decay_dt = f->started ? dt : 0.0f;
  for (int b = 0; b < f->nbones; b++) {
    anim_spring_decay_vec3(&f->out_offset_positions[b], &f->out_offset_velocities[b], p->lost_halflife, decay_dt);
    anim_spring_decay_quat(&f->out_offset_rotations[b], &f->out_offset_angular[b], p->lost_halflife, decay_dt);
    int j = m->joint_of_bone[b];
    if (j >= 0 && (taken[j >> 5] >> (j & 31) & 1u)) {
      /* A tracker back: its goal starts at the shown point and the solve
       * puts the point there, so the offsets of a loss would count twice. */
      f->out_offset_positions[b] = f->out_offset_velocities[b] = f->out_offset_angular[b] = vec3_zero();
      f->out_offset_rotations[b] = quat_identity();
    }
    if (lost) {
      vec3 v = vec3_scale(vec3_sub(f->fit_positions[b], f->fit_previous_positions[b]), 1.0f / dt);
      vec3 w = quat_angular_velocity(f->fit_previous_rotations[b], f->fit_rotations[b], dt);
      vec3 src_x = vec3_add(f->fit_positions[b], vec3_scale(v, dt));
      quat src_q = quat_normalize(quat_mul(quat_from_scaled_angle_axis(vec3_scale(w, dt)), f->fit_rotations[b]));
      int free_joint = j >= 0 && (freed[j >> 5] >> (j & 31) & 1u);
      vec3 dst_v = free_joint ? vec3_scale(f->prior_velocities[b], scale) : v;
      vec3 dst_w = free_joint ? f->prior_angular[b] : w;
      anim_inertialize_transition_vec3(&f->out_offset_positions[b], &f->out_offset_velocities[b], src_x, v,
                                       f->work_positions[b], dst_v);
      anim_inertialize_transition_quat(&f->out_offset_rotations[b], &f->out_offset_angular[b], src_q, w,
                                       f->work_rotations[b], dst_w);
    }
    f->fit_previous_positions[b] = f->started ? f->fit_positions[b] : f->work_positions[b];
    f->fit_previous_rotations[b] = f->started ? f->fit_rotations[b] : f->work_rotations[b];
    f->fit_positions[b] = f->work_positions[b], f->fit_rotations[b] = f->work_rotations[b];
    vec3 v, w;
    anim_inertialize_update_vec3(&f->pose_positions[b], &v, &f->out_offset_positions[b], &f->out_offset_velocities[b],
                                 f->work_positions[b], vec3_zero(), p->lost_halflife, 0.0f);
    anim_inertialize_update_quat(&f->pose_rotations[b], &w, &f->out_offset_rotations[b], &f->out_offset_angular[b],
                                 f->work_rotations[b], vec3_zero(), p->lost_halflife, 0.0f);
  }
  if (p->foot_lock.enabled && f->feet.nfeet)
    anim_foot_locks_apply(&f->feet, db->contacts + (size_t)f->prior_frame * (size_t)db->ncontacts, f->pose_positions,
                          f->pose_rotations, dt);
  vec3 before[ANIM_POSE_FIT_MAX_TRACKERS];
  for (int k = 0; k < m->ntrackers; k++) before[k] = f->global_positions[m->tracker_bones[k]];
  anim_fk(f->global_positions, f->global_rotations, f->pose_positions, f->pose_rotations, db->skeleton.parents,
          f->nbones);
  for (int k = 0; k < m->ntrackers; k++)
    f->shown_velocities[k] =
        f->started ? vec3_scale(vec3_sub(f->global_positions[m->tracker_bones[k]], before[k]), 1.0f / dt) : vec3_zero();
  for (int k = 0; k < m->ntrackers; k++)
    f->residuals[k] = inputs[k].present
                          ? vec3_length(vec3_sub(tracked_point(m, k, f->global_positions, f->global_rotations, scale),
                                                 inputs[k].position))
                          : -1.0f;
  f->started = 1;
  f->steps++;
  return 0;
}
