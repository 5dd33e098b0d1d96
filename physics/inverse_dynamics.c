/*
 * inverse_dynamics.c: joint torques, ground reaction forces and the root's
 * residual along a database range (inverse_dynamics.h says how). MuJoCo
 * computes the kinematics and the generalized forces (mj_inverse); this
 * file assembles the configurations, differentiates them, and shares the
 * root's wrench among the feet's contact points (a small NNLS per frame).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "anim_error.h"
#include "body_internal.h"
#include "inverse_dynamics.h"
#include "offline/bone_roles.h"

/* A residual torque of 1 N m weighs as much as a residual force of
 * 1 / lever N in the contact fit. On the walks (docs/physics.md) the data's
 * motion cannot be met by any centre of pressure inside the feet, and the
 * lever trades one residual for the other: 0.2 m left 13 % of body weight
 * as force and 5 N m of torque on average, 1 m 4-6 % and 34-47 N m, 3 m
 * 1 % and 58-79 N m. 1 m: a residual the COM's path needs stays small. */
#define IDYN_TORQUE_LEVER 1.0
/* The ridge on the contact forces (in body weights squared): spreads the
 * load between points that give the same wrench, small enough to leave the
 * residual unchanged to 1e-6 of body weight. */
#define IDYN_RIDGE 1e-6
#define IDYN_EDGES 4 /* friction pyramid edges per point */
#define IDYN_MAX_COLS (2 * ANIM_IDYN_MAX_POINTS * IDYN_EDGES)
#define IDYN_MAX_KEYS (2 * (ANIM_IDYN_MAX_POINTS / 2) * 2 * 2) /* feet x capsules x ends x sides */

struct anim_idyn {
  const anim_physics_model_t *pm;
  double mass; /* kg: the model's, or options.total_mass (the copy's bodies scaled to it) */
  mjModel *m;  /* the copy: no constraints, no passive forces, no armature */
  mjData *d;
  anim_idyn_options_t o;
  int foot_bone[2];
  /* Per foot: the capsules (geom ids) whose ends may touch the ground. */
  int ngeoms[2], geoms[2][ANIM_IDYN_MAX_POINTS / 2];
  double friction;
  /* The pyramid edges the last frame loaded, by point key (contacts_t)
   * and edge: the next frame's fit starts from them (cleared per run). */
  unsigned char warm[IDYN_MAX_KEYS * IDYN_EDGES];
};

void anim_idyn_options_default(const anim_physics_model_t *model, anim_idyn_options_t *out_options) {
  *out_options = (anim_idyn_options_t){30.0f, 0.1f * 9.81f * (model ? model->total_mass : 70.0f), 0.06f, 0.8f, 0, 0, 0.0f};
}

static int options_check(const anim_idyn_options_t *o, char *err, int errlen) {
  if (!(o->max_root_torque >= 0.0f && o->max_root_torque <= 1e6f))
    return body_errorf(err, errlen, "max_root_torque: must be in [0, 1e6] N m"), ANIM_EINVAL;
  if (!(o->max_root_force >= 0.0f && o->max_root_force <= 1e7f))
    return body_errorf(err, errlen, "max_root_force: must be in [0, 1e7] N"), ANIM_EINVAL;
  if (!(o->contact_height >= 0.0f && o->contact_height <= 1.0f))
    return body_errorf(err, errlen, "contact_height: must be in [0, 1] m"), ANIM_EINVAL;
  if (!(o->contact_speed >= 0.0f && o->contact_speed <= 100.0f))
    return body_errorf(err, errlen, "contact_speed: must be in [0, 100] m/s"), ANIM_EINVAL;
  if (o->step < 0 || o->step > 8) return body_errorf(err, errlen, "step: must be in 0..8 frames"), ANIM_EINVAL;
  if (!(o->total_mass == 0.0f || (o->total_mass >= 1e-3f && o->total_mass <= 1000.0f)))
    return body_errorf(err, errlen, "total_mass: must be 0 (the model's) or in [0.001, 1000] kg"), ANIM_EINVAL;
  return 0;
}

static int is_below(const int *parents, int bone, int ancestor) {
  for (int b = bone; b >= 0; b = parents[b])
    if (b == ancestor) return 1;
  return 0;
}

static int same_skeleton(const anim_physics_model_t *pm, const anim_database_t *db) {
  if (db->nbones != pm->nbones) return 0;
  for (int b = 0; b < pm->nbones; b++)
    if (db->skeleton.parents[b] != pm->parents[b]) return 0;
  return 1;
}

anim_idyn_t *anim_idyn_create(const anim_physics_model_t *model, const anim_database_t *db,
                              const anim_idyn_options_t *options, char *err, int errlen) {
  if (!model) return body_errorf(err, errlen, "model: NULL"), NULL;
  if (!db || !same_skeleton(model, db)) return body_errorf(err, errlen, "db: not the model's skeleton"), NULL;
  anim_idyn_options_t o;
  if (options) o = *options;
  else anim_idyn_options_default(model, &o);
  if (options_check(&o, err, errlen)) return NULL;
  int roles[ANIM_BONE_ROLE_COUNT];
  if (anim_bone_roles_find(&db->skeleton, NULL, roles, err, errlen)) return NULL;
  int left = roles[ANIM_BONE_FOOT_LEFT], right = roles[ANIM_BONE_FOOT_RIGHT];
  if (left <= 0 || right <= 0 || left == right || !model->sim[left] || !model->sim[right])
    return body_errorf(err, errlen, "skeleton: no left and right foot below the hips (bone_roles.h)"), NULL;
  anim_idyn_t *id = calloc(1, sizeof *id);
  if (!id) return body_errorf(err, errlen, "out of memory"), NULL;
  id->pm = model, id->o = o;
  id->foot_bone[0] = left, id->foot_bone[1] = right;
  id->m = mj_copyModel(NULL, model->m);
  if (!id->m || !(id->d = mj_makeData(id->m))) {
    if (id->m) mj_deleteModel(id->m);
    free(id);
    return body_errorf(err, errlen, "out of memory"), NULL;
  }
  /* Inverse dynamics of the rigid bodies alone: the joints' limits and the
   * drives' damping and armature are the simulation's, not the body's. */
  id->m->opt.disableflags |= mjDSBL_CONSTRAINT | mjDSBL_PASSIVE;
  for (int i = 0; i < id->m->nv; i++) id->m->dof_armature[i] = 0;
  /* Another body mass on the same model: every body's mass and inertia
   * scaled alike. Without constraints, passive forces or armature the
   * generalized forces are linear in them (M(q) qacc + c(q, qvel) with
   * gravity), and the contact fit works in body weights, so the answer is
   * the model built at that mass, scaled (the tests check it against one):
   * one model per database serves every mass a request asks for. */
  id->mass = model->total_mass;
  if (o.total_mass > 0.0f && o.total_mass != model->total_mass) {
    double s = o.total_mass / model->total_mass;
    for (int b = 0; b < id->m->nbody; b++) {
      id->m->body_mass[b] *= s, id->m->body_subtreemass[b] *= s;
      for (int k = 0; k < 3; k++) id->m->body_inertia[3 * b + k] *= s;
    }
    id->mass = o.total_mass;
  }
  for (int s = 0; s < 2; s++) {
    for (int g = 0; g < id->m->ngeom; g++) {
      int body = id->m->geom_bodyid[g];
      if (body <= 0) continue; /* the ground plane */
      int bone = -1;
      for (int b = 1; b < model->nbones; b++)
        if (model->body_id[b] == body) bone = b;
      if (bone < 0 || !is_below(model->parents, bone, id->foot_bone[s])) continue;
      if (id->ngeoms[s] < ANIM_IDYN_MAX_POINTS / 2) id->geoms[s][id->ngeoms[s]++] = g;
      id->friction = id->m->geom_friction[3 * g];
    }
  }
  return id;
}

void anim_idyn_free(anim_idyn_t *idyn) {
  if (!idyn) return;
  mj_deleteData(idyn->d);
  mj_deleteModel(idyn->m);
  free(idyn);
}

void anim_idyn_feet(const anim_idyn_t *idyn, int out_feet[2]) {
  out_feet[0] = idyn->foot_bone[0], out_feet[1] = idyn->foot_bone[1];
}

/* ---- configurations --------------------------------------------------------- */

/* qpos of one pose (the skeleton's local positions and rotations, bone 0
 * in the world): the root's free joint from the hips' world transform
 * (through the kinematic bones above them), every ball joint the bone's
 * local rotation. 0 or ANIM_ENONFINITE. */
static int pose_qpos(const anim_physics_model_t *pm, const vec3 *positions, const quat *rotations, mjtNum *out_q) {
  int chain[ANIM_MAX_BONES], n = 0;
  for (int b = pm->root; b >= 0; b = pm->parents[b]) chain[n++] = b;
  vec3 gp = vec3_zero();
  quat gq = quat_identity();
  for (int i = n - 1; i >= 0; i--) {
    gp = vec3_add(gp, quat_mul_vec3(gq, positions[chain[i]]));
    gq = quat_normalize(quat_mul(gq, rotations[chain[i]]));
  }
  mjtNum *r = out_q + pm->qposadr[pm->root];
  r[0] = gp.x, r[1] = gp.y, r[2] = gp.z, r[3] = gq.w, r[4] = gq.x, r[5] = gq.y, r[6] = gq.z;
  for (int b = 1; b < pm->nbones; b++) {
    if (b == pm->root || !pm->joint[b]) continue; /* welded and fixed bones have no joint */
    quat q = quat_normalize(rotations[b]);
    mjtNum *j = out_q + pm->qposadr[b];
    j[0] = q.w, j[1] = q.x, j[2] = q.y, j[3] = q.z;
  }
  for (int i = 0; i < pm->m->nq; i++)
    if (!isfinite(out_q[i])) return ANIM_ENONFINITE;
  return 0;
}

/* ---- contacts: NNLS ----------------------------------------------------------- */

/* Solves (A_P' A_P + ridge I) z = A_P' w for the k columns idx of A (6
 * rows of stride IDYN_MAX_COLS); z written at idx. Through the 6 x 6
 * dual, z = A_P' (A_P A_P' + ridge I)^-1 w (the push-through identity),
 * not the k x k normal equations: standing, both feet flat, k reaches a
 * hundred edges and the k x k Cholesky made a frame 15x MuJoCo's
 * mj_inverse (animbench dynamics, GAMES-105 idle). 0, or -1 when the
 * system is not positive (it always is with the ridge). */
static int solve_subset(const double (*A)[IDYN_MAX_COLS], const double *w, const int *idx, int k, double *out_z) {
  double M[6][6], L[6][6], y[6];
  for (int r = 0; r < 6; r++)
    for (int c = 0; c <= r; c++) {
      double s = r == c ? IDYN_RIDGE : 0.0;
      for (int i = 0; i < k; i++) s += A[r][idx[i]] * A[c][idx[i]];
      M[r][c] = s;
    }
  for (int r = 0; r < 6; r++)
    for (int c = 0; c <= r; c++) {
      double s = M[r][c];
      for (int t = 0; t < c; t++) s -= L[r][t] * L[c][t];
      if (r == c) {
        if (!(s > 0)) return -1;
        L[r][r] = sqrt(s);
      } else {
        L[r][c] = s / L[c][c];
      }
    }
  for (int r = 0; r < 6; r++) {
    double s = w[r];
    for (int t = 0; t < r; t++) s -= L[r][t] * y[t];
    y[r] = s / L[r][r];
  }
  for (int r = 5; r >= 0; r--) {
    double s = y[r];
    for (int t = r + 1; t < 6; t++) s -= L[t][r] * y[t];
    y[r] = s / L[r][r];
  }
  for (int i = 0; i < k; i++) {
    double z = 0;
    for (int r = 0; r < 6; r++) z += A[r][idx[i]] * y[r];
    out_z[idx[i]] = z;
  }
  return 0;
}

/* min |A x - w|^2 + ridge |x|^2 subject to x >= 0, A 6 x n (Lawson and
 * Hanson's active set; each step's least squares on the passive columns
 * through its 6 x 6 dual, so that a step costs O(36 k) plus a 6 x 6
 * Cholesky, k the loaded edges). */
static void nnls(const double (*A)[IDYN_MAX_COLS], const double *w, int n, const unsigned char *warm,
                 double *out_x) {
  int passive[IDYN_MAX_COLS], in[IDYN_MAX_COLS], k = 0;
  double z[IDYN_MAX_COLS];
  for (int i = 0; i < n; i++) out_x[i] = 0, in[i] = 0, z[i] = 0;
  /* A warm start: the columns warm names, the negative ones dropped until
   * the least squares on the rest is positive, is a feasible state of the
   * method (x the passive set's solution, x > 0 on it). The objective is
   * strictly convex (the ridge), so the answer is the cold start's; the
   * last frame's loaded edges cut the outer steps from one per loaded
   * edge to a few (animbench dynamics: GAMES-105 idle, both feet flat,
   * 50 -> 19 us a frame, 3.7x -> 1.35x mj_inverse; the walks 1.36-1.63x ->
   * 1.29-1.32x; test_inverse_dynamics' figures unchanged). */
  for (int i = 0; warm && i < n; i++)
    if (warm[i]) passive[k++] = i, in[i] = 1;
  while (k > 0) {
    if (solve_subset(A, w, passive, k, z)) break;
    int kk = 0;
    for (int i = 0; i < k; i++)
      if (z[passive[i]] > 1e-12) passive[kk++] = passive[i];
      else in[passive[i]] = 0;
    if (kk == k) {
      for (int i = 0; i < k; i++) out_x[passive[i]] = z[passive[i]];
      break;
    }
    k = kk;
  }
  for (int outer = 0; outer < 3 * n + 3; outer++) {
    double r[6];
    for (int row = 0; row < 6; row++) {
      r[row] = w[row];
      for (int i = 0; i < k; i++) r[row] -= A[row][passive[i]] * out_x[passive[i]];
    }
    int best = -1;
    double gbest = 1e-12;
    for (int j = 0; j < n; j++) {
      if (in[j]) continue;
      double g = 0;
      for (int row = 0; row < 6; row++) g += A[row][j] * r[row];
      if (g > gbest) gbest = g, best = j;
    }
    if (best < 0) return;
    passive[k++] = best, in[best] = 1;
    for (int inner = 0; inner < 3 * n + 3; inner++) {
      if (solve_subset(A, w, passive, k, z)) return;
      double alpha = 2.0;
      for (int i = 0; i < k; i++) {
        int j = passive[i];
        if (z[j] <= 0) {
          double a = out_x[j] / (out_x[j] - z[j]);
          if (a < alpha) alpha = a;
        }
      }
      if (alpha > 1.0) {
        for (int i = 0; i < k; i++) out_x[passive[i]] = z[passive[i]];
        break;
      }
      for (int i = 0; i < k; i++) out_x[passive[i]] += alpha * (z[passive[i]] - out_x[passive[i]]);
      int kk = 0;
      for (int i = 0; i < k; i++) {
        int j = passive[i];
        if (out_x[j] > 1e-12) passive[kk++] = j;
        else out_x[j] = 0, in[j] = 0;
      }
      k = kk;
      if (!k) break;
    }
  }
}

typedef struct {
  int npoints;
  int side[2 * ANIM_IDYN_MAX_POINTS], body[2 * ANIM_IDYN_MAX_POINTS];
  int key[2 * ANIM_IDYN_MAX_POINTS]; /* the point's place (foot, capsule, end, side): the same from frame to frame */
  mjtNum p[2 * ANIM_IDYN_MAX_POINTS][3];
  double lowest[2][3]; /* per foot: its lowest point (the unloaded centre of pressure) */
} contacts_t;

/* The feet's candidate points: at each end of every foot capsule (a
 * sphere's centre), its lowest point (the end minus the radius along y) and
 * one radius to either side of it across the foot (horizontal, square to the
 * capsule's axis): the sole as wide as the capsule, so that the centre of
 * pressure can move across the foot as well as along it. Points low and slow
 * enough may push. */
static void find_contacts(const anim_idyn_t *id, contacts_t *out) {
  const mjModel *m = id->m;
  const mjData *d = id->d;
  out->npoints = 0;
  for (int s = 0; s < 2; s++) {
    out->lowest[s][1] = INFINITY;
    mjtNum side[3] = {1, 0, 0};
    for (int i = 0; i < id->ngeoms[s]; i++) {
      int g = id->geoms[s][i], body = m->geom_bodyid[g];
      const mjtNum *c = d->geom_xpos + 3 * g, *R = d->geom_xmat + 9 * g;
      double half = m->geom_type[g] == mjGEOM_CAPSULE ? m->geom_size[3 * g + 1] : 0.0, r = m->geom_size[3 * g];
      if (half > 0) {
        /* across the foot: the axis turned a quarter about the vertical (a sphere keeps the last capsule's) */
        double ax = R[2], az = R[8], len = sqrt(ax * ax + az * az);
        if (len > 1e-6) side[0] = -az / len, side[1] = 0, side[2] = ax / len;
      }
      mjtNum vel[6];
      int have_vel = 0;
      const mjtNum *com = d->xipos + 3 * body;
      for (int e = half > 0 ? -1 : 1; e <= 1; e += 2) {
        mjtNum p[3];
        for (int k = 0; k < 3; k++) p[k] = c[k] + e * half * R[3 * k + 2];
        p[1] -= r;
        if (p[1] < out->lowest[s][1]) memcpy(out->lowest[s], p, sizeof out->lowest[s]);
        if (p[1] > id->o.contact_height) continue;
        if (!have_vel) /* [angular; linear at the body's COM], world axes: only for a foot that is low */
          mj_objectVelocity(m, d, mjOBJ_BODY, body, vel, 0), have_vel = 1;
        mjtNum rel[3] = {p[0] - com[0], p[1] - com[1], p[2] - com[2]}, v[3];
        mju_cross(v, vel, rel);
        for (int k = 0; k < 3; k++) v[k] += vel[3 + k];
        if (mju_norm3(v) > id->o.contact_speed) continue;
        for (int w = -1; w <= 1; w += 2) {
          if (out->npoints >= 2 * ANIM_IDYN_MAX_POINTS) break;
          int n = out->npoints++;
          out->side[n] = s, out->body[n] = body;
          out->key[n] = ((s * (ANIM_IDYN_MAX_POINTS / 2) + i) * 2 + (e > 0)) * 2 + (w > 0); /* < IDYN_MAX_KEYS */
          for (int k = 0; k < 3; k++) out->p[n][k] = p[k] + w * r * side[k];
        }
      }
    }
  }
}

/* ---- one frame ------------------------------------------------------------------ */

/* Shares the root's wrench (generalized forces W at its six dofs) among
 * the contact points; writes the points' forces (world, N). */
static void share_wrench(anim_idyn_t *id, const contacts_t *c, const mjtNum *W, mjtNum (*out_force)[3]) {
  const mjData *d = id->d;
  int root_body = id->pm->body_id[id->pm->root], n = c->npoints * IDYN_EDGES;
  const mjtNum *r = d->xpos + 3 * root_body, *R = d->xmat + 9 * root_body;
  double mg = 9.81 * id->mass, mu = id->friction;
  /* Columns: each pyramid edge's generalized force on the root per unit
   * push (torque rows over the lever); the unknowns and the wrench in body
   * weights. */
  double A[6][IDYN_MAX_COLS], w[6];
  static const double dirs[IDYN_EDGES][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}};
  for (int i = 0; i < c->npoints; i++) {
    double rel[3] = {c->p[i][0] - r[0], c->p[i][1] - r[1], c->p[i][2] - r[2]};
    for (int e = 0; e < IDYN_EDGES; e++) {
      int col = i * IDYN_EDGES + e;
      double f[3] = {mu * dirs[e][0], 1.0, mu * dirs[e][1]}, t[3];
      mju_cross(t, rel, f);
      for (int k = 0; k < 3; k++) {
        A[k][col] = f[k];
        A[3 + k][col] = (R[k] * t[0] + R[3 + k] * t[1] + R[6 + k] * t[2]) / IDYN_TORQUE_LEVER;
      }
    }
  }
  for (int k = 0; k < 3; k++) w[k] = W[k] / mg, w[3 + k] = W[3 + k] / (mg * IDYN_TORQUE_LEVER);
  double x[IDYN_MAX_COLS];
  unsigned char warm[IDYN_MAX_COLS];
  for (int i = 0; i < c->npoints; i++)
    for (int e = 0; e < IDYN_EDGES; e++) warm[i * IDYN_EDGES + e] = id->warm[c->key[i] * IDYN_EDGES + e];
  nnls((const double(*)[IDYN_MAX_COLS])A, w, n, warm, x);
  memset(id->warm, 0, sizeof id->warm);
  for (int i = 0; i < c->npoints; i++)
    for (int e = 0; e < IDYN_EDGES; e++) id->warm[c->key[i] * IDYN_EDGES + e] = x[i * IDYN_EDGES + e] > 0;
  for (int i = 0; i < c->npoints; i++) {
    out_force[i][0] = out_force[i][1] = out_force[i][2] = 0;
    for (int e = 0; e < IDYN_EDGES; e++) {
      double l = x[i * IDYN_EDGES + e] * mg;
      out_force[i][0] += l * mu * dirs[e][0], out_force[i][1] += l, out_force[i][2] += l * mu * dirs[e][1];
    }
  }
}

static vec3 v3(const mjtNum *p) { return vec3_make((float)p[0], (float)p[1], (float)p[2]); }

/* The model's centre of mass acceleration from its bodies' accelerations
 * (forward kinematics of qacc: independent of the forces). */
static void com_acceleration(anim_idyn_t *id, mjtNum *out) {
  const mjModel *m = id->m;
  mj_rnePostConstraint(m, id->d);
  double total = 0;
  out[0] = out[1] = out[2] = 0;
  for (int b = 1; b < m->nbody; b++) {
    mjtNum acc[6];
    mj_objectAcceleration(m, id->d, mjOBJ_BODY, b, acc, 0);
    for (int k = 0; k < 3; k++) out[k] += m->body_mass[b] * acc[3 + k];
    total += m->body_mass[b];
  }
  /* MuJoCo's accelerations carry -gravity (an accelerometer's reading). */
  for (int k = 0; k < 3; k++) out[k] = out[k] / total + m->opt.gravity[k];
}

static void solve_frame(anim_idyn_t *id, mjtNum *qfrc_ext, anim_idyn_frame_t *out, vec3 *out_torques) {
  const anim_physics_model_t *pm = id->pm;
  const mjModel *m = id->m;
  mjData *d = id->d;
  mj_inverse(m, d);
  int rd = pm->dofadr[pm->root], root_body = pm->body_id[pm->root];
  contacts_t c;
  mjtNum force[2 * ANIM_IDYN_MAX_POINTS][3];
  find_contacts(id, &c);
  share_wrench(id, &c, d->qfrc_inverse + rd, force);
  mju_zero(qfrc_ext, m->nv);
  double fy[2] = {0, 0}, cop[2][3] = {{0, 0, 0}, {0, 0, 0}};
  out->foot_force[0] = out->foot_force[1] = vec3_zero();
  /* J^T f through one mj_applyFT per loaded body (its points' forces
   * summed, with their moment about the body's centre of mass). */
  for (int i = 0; i < c.npoints; i++) {
    if (force[i][1] <= 0 || c.body[i] < 0) continue;
    int body = c.body[i];
    mjtNum f[3] = {0, 0, 0}, t[3] = {0, 0, 0};
    const mjtNum *at = d->xipos + 3 * body;
    for (int j = i; j < c.npoints; j++) {
      if (c.body[j] != body || force[j][1] <= 0) continue;
      mjtNum rel[3] = {c.p[j][0] - at[0], c.p[j][1] - at[1], c.p[j][2] - at[2]}, tj[3];
      mju_cross(tj, rel, force[j]);
      for (int k = 0; k < 3; k++) f[k] += force[j][k], t[k] += tj[k];
      int s = c.side[j];
      out->foot_force[s] = vec3_add(out->foot_force[s], v3(force[j]));
      fy[s] += force[j][1];
      for (int k = 0; k < 3; k++) cop[s][k] += force[j][1] * c.p[j][k];
      if (j > i) c.body[j] = -1;
    }
    mj_applyFT(m, d, f, t, at, body, qfrc_ext);
  }
  for (int s = 0; s < 2; s++)
    out->foot_cop[s] = fy[s] > 0 ? vec3_make((float)(cop[s][0] / fy[s]), (float)(cop[s][1] / fy[s]), (float)(cop[s][2] / fy[s]))
                                 : v3(c.lowest[s]);
  /* What the free joint still needs: the residual (its torque rows are in
   * the root's axes: turned to the world's). */
  mjtNum res[6], tw[3];
  for (int k = 0; k < 6; k++) res[k] = d->qfrc_inverse[rd + k] - qfrc_ext[rd + k];
  mju_rotVecMat(tw, res + 3, d->xmat + 9 * root_body);
  out->residual_force = v3(res), out->residual_torque = v3(tw);
  out->com = v3(d->subtree_com + 3 * root_body);
  double power = 0;
  for (int b = 1; b < pm->nbones; b++) {
    vec3 t = vec3_zero();
    if (b != pm->root && pm->joint[b]) {
      const mjtNum *q = d->qfrc_inverse + pm->dofadr[b], *e = qfrc_ext + pm->dofadr[b], *w = d->qvel + pm->dofadr[b];
      t = vec3_make((float)(q[0] - e[0]), (float)(q[1] - e[1]), (float)(q[2] - e[2]));
      power += (q[0] - e[0]) * w[0] + (q[1] - e[1]) * w[1] + (q[2] - e[2]) * w[2];
    }
    if (out_torques) out_torques[b] = t;
  }
  if (out_torques) out_torques[0] = vec3_zero();
  out->power = (float)power;
  out->com_acceleration = vec3_zero();
  if (id->o.com_acceleration) {
    mjtNum a[3];
    com_acceleration(id, a);
    out->com_acceleration = v3(a);
  }
  out->over_limit = (vec3_length(out->residual_torque) > id->o.max_root_torque ? 1 : 0) |
                    (vec3_length(out->residual_force) > id->o.max_root_force ? 2 : 0);
}

/* The configurations of a clip's frames [first, last] (the differences'
 * reach), and how they are differenced; frames are the clip's, [lo, hi) = [0, nclip). */
typedef struct {
  mjtNum *q, *v1, *v2, *qfrc_ext; /* one block: (last - first + 1) x nq, then 3 x nv */
  int first, lo, hi, k;
  double dt;
} span_t;

/* A clip of poses: nframes x nbones local positions and rotations, frame-major. */
typedef struct {
  const vec3 *positions;
  const quat *rotations;
  int nframes;
  float frame_rate;
} clip_t;

/* Checks [start, stop) against the clip and fills the span's configurations. */
static int span_open(const anim_idyn_t *idyn, const clip_t *clip, int start, int stop, span_t *out, char *err,
                     int errlen) {
  const anim_physics_model_t *pm = idyn->pm;
  int lo = 0, hi = clip->nframes, nb = pm->nbones;
  if (start < lo || stop > hi || start >= stop)
    return body_errorf(err, errlen, "start, stop: [%d, %d) is not within frames [0, %d)", start, stop, hi), ANIM_ERANGE;
  if (hi - lo < 3) return body_errorf(err, errlen, "start: %d frames, the differences need 3", hi - lo), ANIM_ERANGE;
  if (!(clip->frame_rate > 0.0f && clip->frame_rate <= 10000.0f))
    return body_errorf(err, errlen, "frame_rate: %g Hz, must be in (0, 10000]", clip->frame_rate), ANIM_EINVAL;
  int k = idyn->o.step ? idyn->o.step : (int)lroundf(clip->frame_rate / 30.0f);
  if (k < 1) k = 1;
  if (2 * k + 1 > hi - lo) k = (hi - lo - 1) / 2;
  int first = start - 2 * k < lo ? lo : start - 2 * k, last = stop - 1 + 2 * k >= hi ? hi - 1 : stop - 1 + 2 * k;
  int nq = idyn->m->nq, nv = idyn->m->nv, span = last - first + 1;
  mjtNum *q = malloc(sizeof(mjtNum) * ((size_t)span * (size_t)nq + 3 * (size_t)nv));
  if (!q) return body_errorf(err, errlen, "out of memory"), ANIM_ENOMEM;
  for (int f = first; f <= last; f++)
    if (pose_qpos(pm, clip->positions + (size_t)f * nb, clip->rotations + (size_t)f * nb, q + (size_t)(f - first) * nq)) {
      free(q);
      return body_errorf(err, errlen, "poses: frame %d's pose is not finite", f), ANIM_ENONFINITE;
    }
  *out = (span_t){q, q + (size_t)span * nq, q + (size_t)span * nq + nv, q + (size_t)span * nq + 2 * nv, first, lo, hi,
                  k, 1.0 / clip->frame_rate};
  return 0;
}

/* The clip of db's range holding [start, stop), and the span's frames in
 * it; ANIM_ERANGE (err names the field) when they are in no one range. */
static int db_clip(const anim_idyn_t *idyn, const anim_database_t *db, int start, int stop, clip_t *out_clip,
                   int *out_lo, char *err, int errlen) {
  if (!same_skeleton(idyn->pm, db)) return body_errorf(err, errlen, "db: not the model's skeleton"), ANIM_EINVAL;
  if (start < 0 || stop > db->nframes || start >= stop)
    return body_errorf(err, errlen, "start, stop: [%d, %d) is not within frames [0, %d)", start, stop, db->nframes),
           ANIM_ERANGE;
  int r = anim_database_range_of(db, start);
  if (r < 0) return body_errorf(err, errlen, "start: frame %d is in no range", start), ANIM_ERANGE;
  int lo = db->ranges[r].start, hi = db->ranges[r].stop;
  if (stop > hi)
    return body_errorf(err, errlen, "stop: %d passes the end of range %s [%d, %d)", stop, db->ranges[r].name, lo, hi),
           ANIM_ERANGE;
  if (hi - lo < 3)
    return body_errorf(err, errlen, "start: range %s has %d frames, the differences need 3", db->ranges[r].name, hi - lo),
           ANIM_ERANGE;
  size_t base = (size_t)lo * (size_t)db->nbones;
  *out_clip = (clip_t){db->local_positions + base, db->local_rotations + base, hi - lo, db->frame_rate};
  *out_lo = lo;
  return 0;
}

/* Frame f's qpos, qvel and qacc into d (the differences of the top). */
static void span_state(const mjModel *m, mjData *d, const span_t *s, int f) {
  int nq = m->nq, nv = m->nv, k = s->k, lo = s->lo, hi = s->hi;
  double dt = s->dt;
#define QAT(f) (s->q + (size_t)((f) - s->first) * nq)
  int a = f - k < lo ? lo : f - k, b = f + k >= hi ? hi - 1 : f + k;
  int c = f < lo + k ? lo + k : f > hi - 1 - k ? hi - 1 - k : f;
  mju_copy(d->qpos, QAT(f), nq);
  mj_differentiatePos(m, s->v1, k * dt, QAT(c - k), QAT(c));
  mj_differentiatePos(m, s->v2, k * dt, QAT(c), QAT(c + k));
  for (int i = 0; i < nv; i++) d->qacc[i] = (s->v2[i] - s->v1[i]) / (k * dt);
  /* Inside the clip the velocity is the mean of the two one-sided ones
   * (the central difference, the quaternions' to second order). */
  if (c == f)
    for (int i = 0; i < nv; i++) d->qvel[i] = 0.5 * (s->v1[i] + s->v2[i]);
  else
    mj_differentiatePos(m, d->qvel, (b - a) * dt, QAT(a), QAT(b));
#undef QAT
}

static int run_clip(anim_idyn_t *idyn, const clip_t *clip, int start, int stop, anim_idyn_frame_t *out_frames,
                    vec3 *out_torques, anim_idyn_summary_t *out_summary, char *err, int errlen) {
  span_t span;
  int rc = span_open(idyn, clip, start, stop, &span, err, errlen);
  if (rc) return rc;
  anim_idyn_summary_t sum = {0};
  sum.nframes = stop - start, sum.worst_frame = start;
  memset(idyn->warm, 0, sizeof idyn->warm); /* a run does not depend on the last */
  for (int f = start; f < stop; f++) {
    span_state(idyn->m, idyn->d, &span, f);
    anim_idyn_frame_t *o = &out_frames[f - start];
    solve_frame(idyn, span.qfrc_ext, o, out_torques ? out_torques + (size_t)(f - start) * idyn->pm->nbones : NULL);
    float rf = vec3_length(o->residual_force), rt = vec3_length(o->residual_torque);
    sum.mean_residual_force += rf, sum.mean_residual_torque += rt;
    if (rf > sum.max_residual_force) sum.max_residual_force = rf;
    if (rt > sum.max_residual_torque) sum.max_residual_torque = rt, sum.worst_frame = f;
    if (o->over_limit) sum.frames_over_limit++;
  }
  free(span.q);
  sum.mean_residual_force /= (float)sum.nframes, sum.mean_residual_torque /= (float)sum.nframes;
  if (out_summary) *out_summary = sum;
  return 0;
}

int anim_idyn_run(anim_idyn_t *idyn, const anim_database_t *db, int start, int stop, anim_idyn_frame_t *out_frames,
                  vec3 *out_torques, anim_idyn_summary_t *out_summary, char *err, int errlen) {
  if (!idyn || !db || !out_frames) return body_errorf(err, errlen, "idyn, db, out_frames: NULL"), ANIM_EINVAL;
  clip_t clip;
  int lo, rc = db_clip(idyn, db, start, stop, &clip, &lo, err, errlen);
  if (rc) return rc;
  anim_idyn_summary_t sum;
  if ((rc = run_clip(idyn, &clip, start - lo, stop - lo, out_frames, out_torques, &sum, err, errlen))) return rc;
  sum.worst_frame += lo;
  if (out_summary) *out_summary = sum;
  return 0;
}

int anim_idyn_run_poses(anim_idyn_t *idyn, const vec3 *positions, const quat *rotations, int nframes,
                        float frame_rate, int start, int stop, anim_idyn_frame_t *out_frames, vec3 *out_torques,
                        anim_idyn_summary_t *out_summary, char *err, int errlen) {
  if (!idyn || !positions || !rotations || !out_frames)
    return body_errorf(err, errlen, "idyn, positions, rotations, out_frames: NULL"), ANIM_EINVAL;
  clip_t clip = {positions, rotations, nframes, frame_rate};
  return run_clip(idyn, &clip, start, stop, out_frames, out_torques, out_summary, err, errlen);
}

static double cpu_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void anim_idyn_reference_cost(anim_idyn_t *idyn, const anim_database_t *db, int start, int stop, int repeat,
                              double *out_original, double *out_copy) {
  const mjModel *models[2] = {idyn->pm->m, idyn->m};
  double *outs[2] = {out_original, out_copy};
  span_t span;
  clip_t clip;
  int lo;
  *out_original = *out_copy = NAN;
  if (db_clip(idyn, db, start, stop, &clip, &lo, NULL, 0) || span_open(idyn, &clip, start - lo, stop - lo, &span, NULL, 0))
    return;
  for (int i = 0; i < 2; i++) {
    mjData *d = mj_makeData(models[i]);
    if (!d) continue;
    double total = 0;
    int calls = 0;
    for (int r = 0; r < repeat; r++)
      for (int f = start - lo; f < stop - lo; f++) {
        span_state(models[i], d, &span, f); /* the solver's inputs; the call alone timed */
        double t0 = cpu_seconds();
        mj_inverse(models[i], d);
        total += cpu_seconds() - t0;
        calls++;
      }
    *outs[i] = total / calls;
    mj_deleteData(d);
  }
  free(span.q);
}
