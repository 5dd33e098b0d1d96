/*
 * marker_fit.c: poses from markers by dragging the body model in MuJoCo
 * (marker_fit.h says how and why). Its own MuJoCo model: the body model's
 * MJCF plus one mocap body and one connect constraint per marker; the
 * softness and the prior are set on that model after loading, from the
 * spring tuning (spring.h), per run (the engine step follows the frames).
 * Does not: stream frame by frame (a clip per call), fit bone lengths.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "anim_error.h"
#include "body_internal.h"
#include "marker_fit.h"
#include "marker_gate.h"
#include "marker_prior.h"
#include "math/umeyama.h"
#include "motion/spring.h"
#include "pose/kinematics.h"

#define SCALE_ROUNDS 12 /* settles at most when the scale is estimated: each refines the similarity fit */
#define SCALE_TOLERANCE 1e-3 /* ... until it changes by less */
#define SOLIMP_MID 0.5  /* MuJoCo's impedance curve between near and far: its midpoint and power */
#define SOLIMP_POWER 2.0
#define PRIOR_EVERY 2 /* frames between the prior's search steps (marker_prior.h) */

struct anim_marker_fit {
  const anim_physics_model_t *pm; /* addresses only (the bones' qpos/dof/body ids are the same in m) */
  mjModel *m;
  mjData *d;
  int nmarkers, nbones;
  anim_marker_t markers[ANIM_MARKER_FIT_MAX_MARKERS];
  int body[ANIM_MARKER_FIT_MAX_MARKERS]; /* MuJoCo body each marker's point rides on */
  int mocap[ANIM_MARKER_FIT_MAX_MARKERS]; /* mocap index of each marker's body */
  quat prior[ANIM_MAX_BONES];            /* the database's mean pose: welded leaves' rotations, their anchors */
  quat held[ANIM_MAX_BONES];             /* the pose the joint springs hold now (marker_prior.h) */
  anim_marker_prior_t *search;           /* the nearest database frame to the markers */
  float accel[ANIM_MARKER_FIT_MAX_MARKERS]; /* m/s^2: each marker's largest acceleration in db (marker_gate.h) */
  long rejected;                         /* samples the gate rejected in the last run */
  anim_marker_fit_options_t o;
  anim_marker_fit_tuning_t tuning;
  long steps; /* mj_step calls of the last run */
};

void anim_marker_fit_options_default(anim_marker_fit_options_t *out_options) {
  out_options->marker_halflife = 0.01f;
  out_options->prior_halflife = ANIM_PHYSICS_DEFAULT_HALFLIFE;
  out_options->outlier_distance = 0.3f;
  out_options->far_ratio = 0.02f;
  out_options->settle_time = 0.5f;
  out_options->scale = 1.0f;
}

static mjModel *load_xml(const char *xml, char *err, int errlen) {
  mjVFS *vfs = malloc(sizeof *vfs); /* about 2 MB in 2.2.2: not on the stack */
  if (!vfs) return NULL;
  mj_defaultVFS(vfs);
  int len = (int)strlen(xml);
  mjModel *m = NULL;
  if (mj_makeEmptyFileVFS(vfs, "markers.xml", len) == 0) {
    memcpy(vfs->filedata[mj_findFileVFS(vfs, "markers.xml")], xml, (size_t)len);
    char merr[512] = "";
    m = mj_loadXML("markers.xml", vfs, merr, sizeof merr);
    if (!m) body_errorf(err, errlen, "MuJoCo refused the marker model: %s", merr);
  } else {
    body_errorf(err, errlen, "MuJoCo's virtual file system refused the marker model");
  }
  mj_deleteVFS(vfs);
  free(vfs);
  return m;
}

/* The body model's MJCF with the markers' mocap bodies before </worldbody>,
 * their connect constraints before </mujoco>, room for their rows. */
static char *marker_mjcf(const anim_physics_model_t *pm, int nmarkers) {
  const char *src = pm->mjcf;
  const char *wb = strstr(src, " </worldbody>"), *end = strstr(src, "</mujoco>"), *size = strstr(src, "<size ");
  if (!wb || !end || !size || !(size < wb)) return NULL;
  const char *size_end = strstr(size, "/>");
  size_t cap = strlen(src) + (size_t)nmarkers * 160 + 256;
  char *out = malloc(cap);
  if (!out) return NULL;
  size_t n = 0;
  memcpy(out + n, src, (size_t)(size - src)), n += (size_t)(size - src);
  n += (size_t)snprintf(out + n, cap - n, "<size njmax=\"%d\" nconmax=\"150\"", 600 + 3 * nmarkers);
  memcpy(out + n, size_end, (size_t)(wb - size_end)), n += (size_t)(wb - size_end);
  for (int i = 0; i < nmarkers; i++) n += (size_t)snprintf(out + n, cap - n, "  <body name=\"mk%d\" mocap=\"true\"/>\n", i);
  memcpy(out + n, wb, (size_t)(end - wb)), n += (size_t)(end - wb);
  n += (size_t)snprintf(out + n, cap - n, " <equality>\n");
  for (int i = 0; i < nmarkers; i++)
    n += (size_t)snprintf(out + n, cap - n, "  <connect name=\"c%d\" body1=\"b%d\" body2=\"mk%d\" anchor=\"0 0 0\"/>\n", i, pm->root, i);
  n += (size_t)snprintf(out + n, cap - n, " </equality>\n%s", end);
  return out;
}

/* The prior pose: per bone the normalised mean of its local rotations over
 * db's frames, each sign-aligned with the first. */
static void mean_pose(const anim_database_t *db, quat *out) {
  for (int b = 0; b < db->nbones; b++) {
    quat q0 = db->local_rotations[b];
    double s[4] = {0, 0, 0, 0};
    for (int f = 0; f < db->nframes; f++) {
      quat q = db->local_rotations[(size_t)f * db->nbones + b];
      double sign = quat_dot(q, q0) < 0 ? -1.0 : 1.0;
      s[0] += sign * q.w, s[1] += sign * q.x, s[2] += sign * q.y, s[3] += sign * q.z;
    }
    double len = sqrt(s[0] * s[0] + s[1] * s[1] + s[2] * s[2] + s[3] * s[3]);
    out[b] = len > 0 ? quat_make((float)(s[0] / len), (float)(s[1] / len), (float)(s[2] / len), (float)(s[3] / len))
                     : quat_identity();
  }
}

anim_marker_fit_t *anim_marker_fit_create(const anim_physics_model_t *model, const anim_database_t *db,
                                          const anim_marker_t *markers, int nmarkers,
                                          const anim_marker_fit_options_t *options, char *err, int errlen) {
  return anim_marker_fit_create_shared(model, db, markers, nmarkers, options, NULL, NULL, err, errlen);
}

anim_marker_fit_t *anim_marker_fit_create_shared(const anim_physics_model_t *model, const anim_database_t *db,
                                                 const anim_marker_t *markers, int nmarkers,
                                                 const anim_marker_fit_options_t *options,
                                                 const anim_pose_fit_model_t *prior_model, const int *tracker_of,
                                                 char *err, int errlen) {
  anim_marker_fit_options_t o;
  if (options) o = *options;
  else anim_marker_fit_options_default(&o);
  if (!model) return body_errorf(err, errlen, "model: NULL"), NULL;
  if (!db) return body_errorf(err, errlen, "db: NULL"), NULL;
  if (db->nbones != model->nbones) return body_errorf(err, errlen, "db: %d bones, the model %d", db->nbones, model->nbones), NULL;
  if (nmarkers < 1 || nmarkers > ANIM_MARKER_FIT_MAX_MARKERS)
    return body_errorf(err, errlen, "nmarkers = %d: must be in 1..%d", nmarkers, ANIM_MARKER_FIT_MAX_MARKERS), NULL;
  if (!markers) return body_errorf(err, errlen, "markers: NULL"), NULL;
#define RULE(cond, ...) \
  if (!(cond)) return body_errorf(err, errlen, __VA_ARGS__), NULL
  RULE(o.marker_halflife >= 0.002f && o.marker_halflife <= 1.0f, "marker_halflife = %g: must be in [0.002, 1] s", o.marker_halflife);
  RULE(o.prior_halflife >= 0.01f && o.prior_halflife <= 100.0f && o.prior_halflife >= o.marker_halflife,
       "prior_halflife = %g: must be in [0.01, 100] s and at least marker_halflife", o.prior_halflife);
  RULE(o.outlier_distance >= 0.01f && o.outlier_distance <= 10.0f, "outlier_distance = %g: must be in [0.01, 10] m", o.outlier_distance);
  RULE(o.far_ratio >= 1e-4f && o.far_ratio <= 1.0f, "far_ratio = %g: must be in [1e-4, 1]", o.far_ratio);
  RULE(o.settle_time >= 0.0f && o.settle_time <= 10.0f, "settle_time = %g: must be in [0, 10] s", o.settle_time);
  RULE(o.scale == 0.0f || (o.scale >= 0.1f && o.scale <= 10.0f), "scale = %g: must be 0 (estimate) or in [0.1, 10]", o.scale);
  for (int i = 0; i < nmarkers; i++) {
    const anim_marker_t *mk = &markers[i];
    RULE(mk->bone >= 0 && mk->bone < model->nbones, "markers[%d].bone = %d: no such bone (%d bones)", i, mk->bone, model->nbones);
    RULE(model->sim[mk->bone], "markers[%d].bone = %s: above the hips, it has no body", i, db->skeleton.names[mk->bone]);
    RULE(mk->has_offset == 0 || mk->has_offset == 1, "markers[%d].has_offset = %d: must be 0 or 1", i, mk->has_offset);
    if (mk->has_offset) {
      RULE(vec3_finite(mk->offset), "markers[%d].offset is not finite", i);
      RULE(vec3_length(mk->offset) <= 1.0f, "markers[%d].offset: %.3g m from the joint, at most 1 m", i, vec3_length(mk->offset));
    }
  }
#undef RULE
  anim_marker_fit_t *fit = calloc(1, sizeof *fit);
  if (!fit) return body_errorf(err, errlen, "out of memory"), NULL;
  fit->pm = model, fit->nmarkers = nmarkers, fit->nbones = model->nbones, fit->o = o;
  memcpy(fit->markers, markers, sizeof *markers * (size_t)nmarkers);
  mean_pose(db, fit->prior);
  memcpy(fit->held, fit->prior, sizeof fit->prior);
  anim_marker_gate_bounds(db, markers, nmarkers, fit->accel);
  fit->search = anim_marker_prior_create(db, model->root, markers, nmarkers, prior_model, tracker_of, err, errlen);
  if (!fit->search) {
    free(fit);
    return NULL;
  }
  char *xml = marker_mjcf(model, nmarkers);
  if (!xml) {
    anim_marker_prior_free(fit->search);
    free(fit);
    return body_errorf(err, errlen, "out of memory (or a body model without </worldbody>)"), NULL;
  }
  fit->m = load_xml(xml, err, errlen);
  free(xml);
  if (!fit->m || fit->m->nq != model->m->nq || fit->m->neq != nmarkers || fit->m->nmocap != nmarkers) {
    if (fit->m) body_errorf(err, errlen, "the marker model does not match the body model");
    anim_marker_fit_free(fit);
    return NULL;
  }
  mjModel *m = fit->m;
  for (int i = 0; i < nmarkers; i++) {
    int b = markers[i].bone;
    fit->body[i] = model->body_id[b]; /* a welded leaf: its parent's body */
    char name[32];
    snprintf(name, sizeof name, "mk%d", i);
    int mb = mj_name2id(m, mjOBJ_BODY, name);
    if (mb < 0 || m->body_mocapid[mb] < 0) {
      anim_marker_fit_free(fit);
      return body_errorf(err, errlen, "MuJoCo lost marker %d", i), NULL;
    }
    fit->mocap[i] = m->body_mocapid[mb];
    m->eq_obj1id[i] = fit->body[i];
    m->eq_obj2id[i] = mb;
  }
  /* The prior: MuJoCo's passive ball-joint spring toward the mean pose and
   * its (implicit) damping, critically damped on each axis' inertia. */
  for (int b = 1; b < model->nbones; b++) {
    if (!model->joint[b]) continue;
    int j = m->dof_jntid[model->dofadr[b]];
    double k_mean = 0;
    for (int a = 0; a < 3; a++) {
      double k, c;
      anim_spring_critical_gains(&k, &c, o.prior_halflife, model->dof_inertia[b][a]);
      m->dof_damping[model->dofadr[b] + a] = c;
      k_mean += k / 3;
    }
    m->jnt_stiffness[j] = k_mean;
    quat q = fit->prior[b];
    mjtNum *s = m->qpos_spring + model->qposadr[b];
    s[0] = q.w, s[1] = q.x, s[2] = q.y, s[3] = q.z;
  }
  fit->d = mj_makeData(m);
  if (!fit->d) {
    anim_marker_fit_free(fit);
    return body_errorf(err, errlen, "out of memory"), NULL;
  }
  return fit;
}

void anim_marker_fit_free(anim_marker_fit_t *fit) {
  if (!fit) return;
  if (fit->d) mj_deleteData(fit->d);
  if (fit->m) mj_deleteModel(fit->m);
  anim_marker_prior_free(fit->search);
  free(fit);
}

void anim_marker_fit_offsets(const anim_marker_fit_t *fit, vec3 *out_offsets) {
  for (int i = 0; i < fit->nmarkers; i++) out_offsets[i] = fit->markers[i].offset;
}

long anim_marker_fit_steps(const anim_marker_fit_t *fit) { return fit->steps; }

long anim_marker_fit_rejected(const anim_marker_fit_t *fit) { return fit->rejected; }

void anim_marker_fit_bounds(const anim_marker_fit_t *fit, float *out_accel) {
  memcpy(out_accel, fit->accel, sizeof(float) * (size_t)fit->nmarkers);
}

double anim_marker_fit_reference_cost(anim_marker_fit_t *fit, long steps) {
  struct timespec a, b;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
  for (long s = 0; s < steps; s++) mj_step(fit->m, fit->d);
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
  return (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);
}

void anim_marker_fit_tuning(const anim_marker_fit_t *fit, anim_marker_fit_tuning_t *out_tuning) { *out_tuning = fit->tuning; }

/* Marker i's impedance imp, flat (MuJoCo's solimp with dmin = dmax), and
 * its direct solref keeping the near spring's K and B: MuJoCo's K =
 * -solref[0] / imp^2 and B = -solref[1] / imp stay ERP / (dt^2 d) and 1 /
 * dt, so aref = -B v - K imp x and the pull (imp aref) weakens as (imp /
 * d)^2 on the position, imp / d on the velocity. */
static void set_impedance(anim_marker_fit_t *fit, int i, double imp) {
  const anim_marker_fit_tuning_t *t = &fit->tuning;
  double d = t->impedance, K = t->erp / (t->dt * t->dt * d), B = 1.0 / t->dt;
  mjModel *m = fit->m;
  m->eq_solref[mjNREF * i] = -K * imp * imp, m->eq_solref[mjNREF * i + 1] = -B * imp;
  mjtNum *s = m->eq_solimp + mjNIMP * i;
  s[0] = imp, s[1] = imp, s[2] = 0.001, s[3] = 0.5, s[4] = 2;
}

/* MuJoCo's impedance curve (its getimpedance, midpoint 0.5, power 2) from
 * d at distance 0 to d_far at outlier_distance and beyond: evaluated here
 * on the marker's own distance from its point, not on the mocap body's
 * (which runs ahead by the velocity lead). */
static double impedance_at(const anim_marker_fit_t *fit, double distance) {
  double x = distance / fit->o.outlier_distance, y;
  if (x >= 1) y = 1;
  else if (x <= 0.5) y = 2 * x * x;
  else y = 1 - 2 * (1 - x) * (1 - x);
  return fit->tuning.impedance + y * (fit->tuning.impedance_far - fit->tuning.impedance);
}

/* The mapping of marker_fit.h: half-life -> spring -> ERP/CFM at dt ->
 * MuJoCo's impedance and direct solref, every marker near (flat). */
static void set_softness(anim_marker_fit_t *fit, double dt) {
  anim_marker_fit_tuning_t *t = &fit->tuning;
  double k, c;
  anim_spring_critical_gains(&k, &c, fit->o.marker_halflife, 1.0); /* per unit mass: y^2, 2y */
  double erp, cfm;
  anim_spring_implicit_to_erp_cfm(&erp, &cfm, k, c, dt);
  t->dt = dt, t->erp = erp, t->cfm_mass = cfm;
  t->impedance = 1.0 / (1.0 + cfm / dt);
  t->impedance_far = t->impedance * fit->o.far_ratio;
  t->solref[0] = -(erp / (dt * dt)) * t->impedance;
  t->solref[1] = -t->impedance / dt;
  t->substeps_per_60hz = (int)lround(1.0 / 60.0 / dt);
  for (int i = 0; i < fit->nmarkers; i++) set_impedance(fit, i, t->impedance);
}

/* Anchor of marker i in its MuJoCo body's frame: a welded leaf's point
 * rides on the parent at the leaf's joint, turned by the prior's rotation. */
static vec3 anchor_of(const anim_marker_fit_t *fit, int i, vec3 offset) {
  int b = fit->markers[i].bone;
  if (!fit->pm->welded[b]) return offset;
  return vec3_add(fit->pm->offsets[b], quat_mul_vec3(fit->prior[b], offset));
}

static void set_anchor(anim_marker_fit_t *fit, int i, vec3 offset) {
  vec3 a = anchor_of(fit, i, offset);
  mjtNum *e = fit->m->eq_data + mjNEQDATA * i;
  e[0] = a.x, e[1] = a.y, e[2] = a.z, e[3] = e[4] = e[5] = 0;
}

/* World position of marker i's point on the body (kinematics current). */
static vec3 point_world(const anim_marker_fit_t *fit, int i) {
  const mjData *d = fit->d;
  const mjtNum *e = fit->m->eq_data + mjNEQDATA * i;
  mjtNum p[3];
  mju_rotVecMat(p, e, d->xmat + 9 * fit->body[i]);
  mju_addTo3(p, d->xpos + 3 * fit->body[i]);
  return vec3_make((float)p[0], (float)p[1], (float)p[2]);
}

/* Offset (bone frame) that puts marker i at world point w, kinematics current. */
static vec3 offset_at(const anim_marker_fit_t *fit, int i, vec3 w) {
  const mjData *d = fit->d;
  int body = fit->body[i];
  mjtNum rel[3] = {w.x - d->xpos[3 * body], w.y - d->xpos[3 * body + 1], w.z - d->xpos[3 * body + 2]}, loc[3];
  mju_mulMatTVec(loc, d->xmat + 9 * body, rel, 3, 3);
  vec3 a = vec3_make((float)loc[0], (float)loc[1], (float)loc[2]);
  int b = fit->markers[i].bone;
  if (!fit->pm->welded[b]) return a;
  return quat_mul_vec3(quat_inv(fit->prior[b]), vec3_sub(a, fit->pm->offsets[b]));
}

/* The body in the prior pose, its root at identity at the rest height. */
static void place_prior(anim_marker_fit_t *fit) {
  const anim_physics_model_t *pm = fit->pm;
  mjData *d = fit->d;
  mj_resetData(fit->m, d);
  for (int b = 1; b < pm->nbones; b++) {
    if (!pm->joint[b]) continue;
    quat q = fit->held[b];
    mjtNum *s = d->qpos + pm->qposadr[b];
    s[0] = q.w, s[1] = q.x, s[2] = q.y, s[3] = q.z;
  }
  /* The root's own rotation in the prior pose (the hips' mean local rotation
   * about an upright parent chain). */
  quat r = fit->held[pm->root];
  mjtNum *rq = d->qpos + pm->qposadr[pm->root];
  rq[0] = 0, rq[1] = pm->rest_root_height, rq[2] = 0;
  rq[3] = r.w, rq[4] = r.x, rq[5] = r.y, rq[6] = r.z;
  mj_kinematics(fit->m, d);
}

/* The joint springs' rest (MuJoCo's qpos_spring) to the prior's pose after
 * one step of the search on this frame's markers (use: seen, not let go);
 * kept as it was when the search has no marker to go on. */
static void follow_prior(anim_marker_fit_t *fit, const vec3 *targets, const unsigned char *use, float dt, int restart) {
  if (anim_marker_prior_step(fit->search, targets, use, dt, restart)) return;
  const quat *q = anim_marker_prior_rotations(fit->search);
  const anim_physics_model_t *pm = fit->pm;
  for (int b = 1; b < pm->nbones; b++) {
    if (!pm->sim[b] || pm->welded[b] || pm->fixed[b]) continue;
    fit->held[b] = q[b];
    if (!pm->joint[b]) continue;
    mjtNum *s = fit->m->qpos_spring + pm->qposadr[b];
    s[0] = q[b].w, s[1] = q[b].x, s[2] = q[b].y, s[3] = q[b].z;
  }
}

/* Moves the root by the transform fitted from the body's marker points to
 * targets (rigid, or similarity whose scale is returned, the root then
 * only moved rigidly). 0 or the Umeyama error. */
static int align_root(anim_marker_fit_t *fit, const vec3 *targets, const unsigned char *use, int similarity,
                      float *out_scale) {
  vec3 from[ANIM_MARKER_FIT_MAX_MARKERS], to[ANIM_MARKER_FIT_MAX_MARKERS];
  int n = 0;
  for (int i = 0; i < fit->nmarkers; i++)
    if (use[i]) from[n] = point_world(fit, i), to[n] = targets[i], n++;
  anim_umeyama_t u;
  int rc = anim_umeyama_fit(&u, similarity ? ANIM_UMEYAMA_SIMILARITY : ANIM_UMEYAMA_RIGID, from, to, NULL, n);
  if (rc) return rc;
  if (out_scale) *out_scale = u.scale;
  if (similarity) { /* the rigid part about the centroid: move the body's centroid onto the targets' */
    vec3 ca = vec3_zero(), cb = vec3_zero();
    for (int k = 0; k < n; k++) ca = vec3_add(ca, from[k]), cb = vec3_add(cb, to[k]);
    ca = vec3_scale(ca, 1.0f / (float)n), cb = vec3_scale(cb, 1.0f / (float)n);
    u.translation = vec3_sub(cb, quat_mul_vec3(u.rotation, ca));
  }
  mjtNum *rq = fit->d->qpos + fit->pm->qposadr[fit->pm->root];
  vec3 p = quat_mul_vec3(u.rotation, vec3_make((float)rq[0], (float)rq[1], (float)rq[2]));
  p = vec3_add(p, u.translation);
  quat q = quat_normalize(quat_mul(u.rotation, quat_make((float)rq[3], (float)rq[4], (float)rq[5], (float)rq[6])));
  rq[0] = p.x, rq[1] = p.y, rq[2] = p.z, rq[3] = q.w, rq[4] = q.x, rq[5] = q.y, rq[6] = q.z;
  mj_kinematics(fit->m, fit->d);
  return 0;
}

static float minmod(float a, float b) {
  if (a * b <= 0) return 0;
  return fabsf(a) < fabsf(b) ? a : b;
}

static int state_finite(const mjModel *m, const mjData *d) {
  for (int i = 0; i < m->nq; i++)
    if (!isfinite(d->qpos[i])) return 0;
  for (int i = 0; i < m->nv; i++)
    if (!isfinite(d->qvel[i])) return 0;
  return 1;
}

/* Steps n times with the mocap bodies at targets (fixed). */
static int hold(anim_marker_fit_t *fit, const vec3 *targets, int n) {
  for (int i = 0; i < fit->nmarkers; i++) {
    mjtNum *p = fit->d->mocap_pos + 3 * fit->mocap[i];
    p[0] = targets[i].x, p[1] = targets[i].y, p[2] = targets[i].z;
  }
  for (int s = 0; s < n; s++) mj_step(fit->m, fit->d);
  fit->steps += n;
  mj_kinematics(fit->m, fit->d);
  return state_finite(fit->m, fit->d) ? 0 : ANIM_ENONFINITE;
}

static void read_pose(const anim_marker_fit_t *fit, vec3 *out_p, quat *out_q) {
  const anim_physics_model_t *pm = fit->pm;
  const mjData *d = fit->d;
  for (int b = 0; b < pm->nbones; b++) {
    out_p[b] = pm->sim[b] ? pm->offsets[b] : vec3_zero();
    out_q[b] = pm->joint[b] ? quat_identity() : pm->fixed[b] ? pm->fixed_rotation[b] : pm->sim[b] ? fit->prior[b] : quat_identity();
  }
  const mjtNum *rq = d->qpos + pm->qposadr[pm->root];
  out_p[pm->root] = vec3_make((float)rq[0], (float)rq[1], (float)rq[2]);
  out_q[pm->root] = quat_make((float)rq[3], (float)rq[4], (float)rq[5], (float)rq[6]);
  for (int b = 1; b < pm->nbones; b++) {
    if (!pm->joint[b]) continue;
    const mjtNum *q = d->qpos + pm->qposadr[b];
    out_q[b] = quat_normalize(quat_make((float)q[0], (float)q[1], (float)q[2], (float)q[3]));
  }
}

int anim_marker_fit_run(anim_marker_fit_t *fit, const vec3 *positions, const unsigned char *present, int nframes,
                        float frame_time, vec3 *out_local_positions, quat *out_local_rotations, float *out_residuals,
                        float *out_scale, char *err, int errlen) {
  if (!fit || !positions) return body_errorf(err, errlen, "%s: NULL", fit ? "positions" : "fit"), ANIM_EINVAL;
  if (nframes < 1) return body_errorf(err, errlen, "nframes = %d: at least 1", nframes), ANIM_ERANGE;
  if (!(frame_time >= 0.001f && frame_time <= 1.0f))
    return body_errorf(err, errlen, "frame_time = %g: must be in [0.001, 1] s", frame_time), ANIM_EINVAL;
  int nm = fit->nmarkers;
  int first = 0;
  for (int f = 0; f < nframes; f++)
    for (int i = 0; i < nm; i++) {
      size_t k = (size_t)f * nm + i;
      if (present && !present[k]) continue;
      vec3 p = positions[k];
      if (!vec3_finite(p)) return body_errorf(err, errlen, "positions[%d][%d] is not finite", f, i), ANIM_ENONFINITE;
      if (fabsf(p.x) > 1e4f || fabsf(p.y) > 1e4f || fabsf(p.z) > 1e4f)
        return body_errorf(err, errlen, "positions[%d][%d]: beyond 1e4 m", f, i), ANIM_ERANGE;
      if (f == 0) first++;
    }
  if (first < 3) return body_errorf(err, errlen, "positions[0]: %d markers present, the first frame needs 3", first), ANIM_EINVAL;

  mjModel *m = fit->m;
  mjData *d = fit->d;
  int nsub = (int)lround(frame_time / (fit->pm->tick / fit->pm->substeps));
  if (nsub < 1) nsub = 1;
  double dt = (double)frame_time / nsub;
  m->opt.timestep = dt;
  int nb = fit->nbones;
  vec3 *target = malloc(2 * sizeof(vec3) * (size_t)nframes * nm);
  if (!target) return body_errorf(err, errlen, "out of memory"), ANIM_ENOMEM;
  vec3 *goal = target + (size_t)nframes * nm; /* target, gated: what the body follows */
  vec3 prev[ANIM_MARKER_FIT_MAX_MARKERS], now[ANIM_MARKER_FIT_MAX_MARKERS];
  unsigned char use[ANIM_MARKER_FIT_MAX_MARKERS];
  int rc = 0, known = 0;

  /* Markers without an offset leave the first settle when enough others hold the body. */
  for (int i = 0; i < nm; i++) {
    int seen = !present || present[i];
    known += seen && fit->markers[i].has_offset;
    set_anchor(fit, i, fit->markers[i].has_offset ? fit->markers[i].offset : vec3_zero());
  }
  for (int i = 0; i < nm; i++) {
    int seen = !present || present[i];
    use[i] = seen && (fit->markers[i].has_offset || known < 3);
  }
  float scale = fit->o.scale > 0 ? fit->o.scale : 1.0f;
  vec3 ground = vec3_zero(); /* the first frame's markers' centroid on the floor: the scale's fixed point */
  for (int i = 0; i < nm; i++)
    if (use[i]) ground = vec3_add(ground, positions[i]);
  ground = vec3_scale(ground, 1.0f / (float)(known >= 3 ? known : first));
  ground.y = 0;
#define SCALED(k) vec3_add(ground, vec3_scale(vec3_sub(positions[(k)], ground), 1.0f / scale))

  set_softness(fit, dt);
  fit->steps = 0;
  unsigned char seen0[ANIM_MARKER_FIT_MAX_MARKERS];
  for (int i = 0; i < nm; i++) seen0[i] = !present || present[i], now[i] = SCALED(i);
  /* The search needs the body's size: with the scale estimated the rounds
   * settle on the mean pose, the search starts once the scale is known. */
  if (fit->o.scale > 0) follow_prior(fit, now, seen0, frame_time, 1);
  place_prior(fit);
  for (int i = 0; i < nm; i++) m->eq_active[i] = use[i];
  int settle = (int)lround(fit->o.settle_time / dt);
  int rounds = fit->o.scale > 0 ? 1 : SCALE_ROUNDS;
  for (int r = 0; r < rounds && !rc; r++) {
    for (int i = 0; i < nm; i++) now[i] = SCALED(i);
    if (fit->o.scale > 0) {
      if (r == 0) rc = align_root(fit, now, use, 0, NULL);
    } else {
      float c = 1;
      rc = align_root(fit, now, use, 1, &c);
      scale *= c; /* the markers are c times the body's size: divide them by c more */
      if (fabsf(c - 1.0f) < SCALE_TOLERANCE && r > 0) rounds = r + 1;
      for (int i = 0; i < nm; i++) now[i] = SCALED(i);
    }
    if (!rc) rc = hold(fit, now, settle);
  }
  if (!rc && fit->o.scale == 0) {
    follow_prior(fit, now, seen0, frame_time, 1);
    rc = hold(fit, now, settle / 4 + 1);
  }
  if (rc) {
    if (rc != ANIM_ENONFINITE) body_errorf(err, errlen, "positions[0]: the markers present are degenerate (collinear or coincident)");
    else body_errorf(err, errlen, "the simulation diverged while settling on the first frame");
    free(target);
    return rc;
  }
  /* Offsets not given: where the settled body has the markers. */
  int found = 0;
  for (int i = 0; i < nm; i++) {
    if (fit->markers[i].has_offset && !(known < 3)) continue;
    if (present && !present[i]) continue;
    if (fit->markers[i].has_offset) continue; /* given: kept even when it joined the settle */
    fit->markers[i].offset = offset_at(fit, i, now[i]);
    set_anchor(fit, i, fit->markers[i].offset);
    found++;
  }
  if (found) {
    for (int i = 0; i < nm; i++) m->eq_active[i] = !present || present[i];
    rc = hold(fit, now, settle / 4 + 1);
  }

  for (size_t k = 0; k < (size_t)nframes * nm; k++) target[k] = SCALED(k);
  fit->rejected = anim_marker_gate_run(fit->accel, nm, target, present, nframes, frame_time, goal, NULL);
  double lead = dt / fit->tuning.erp; /* s: the mocap body runs ahead by lead x the marker's velocity */
  unsigned char let_go[ANIM_MARKER_FIT_MAX_MARKERS] = {0}; /* marker's impedance under half its near value last frame */
  vec3 last_point[ANIM_MARKER_FIT_MAX_MARKERS]; /* each point a frame ago (its velocity) */
  for (int i = 0; i < nm; i++) last_point[i] = point_world(fit, i);
  for (int f = 0; f < nframes && !rc; f++) {
    if (f > 0) {
      for (int i = 0; i < nm; i++) {
        size_t k = (size_t)f * nm + i, kp = (size_t)(f - 1) * nm + i;
        int here = !present || present[k], before = !present || present[kp];
        m->eq_active[i] = here;
        if (!here) continue;
        /* Velocity: per axis the smaller of the backward and forward
         * differences, 0 where they disagree in sign (the minmod slope
         * limiter): a one-frame glitch gives its neighbours no velocity
         * spike (a central difference would lend them half the jump). */
        int after = f + 1 < nframes && (!present || present[(size_t)(f + 1) * nm + i]);
        vec3 vb = before ? vec3_scale(vec3_sub(goal[k], goal[kp]), 1.0f / frame_time) : vec3_zero();
        vec3 vf = after ? vec3_scale(vec3_sub(goal[k + nm], goal[k]), 1.0f / frame_time) : vb;
        if (!before) vb = vf;
        vec3 v = vec3_make(minmod(vb.x, vf.x), minmod(vb.y, vf.y), minmod(vb.z, vf.z));
        /* The goal slides from the last frame's marker over the substeps,
         * unless that one was let go (a glitch: start from this frame's). */
        prev[i] = before && !let_go[i] ? goal[kp] : goal[k];
        now[i] = v;
      }
      /* Each marker's impedance for the frame, from the error the
       * constraint will see at its end in a frame moving with the point:
       * where the point goes at its own velocity minus the marker's place,
       * plus lead x the point's velocity minus the marker's. A marker
       * moving fast moves its point with it (small); a glitch does not
       * (large: the marker lets go for the frame). */
      for (int i = 0; i < nm; i++) {
        if (!m->eq_active[i]) continue;
        vec3 point = point_world(fit, i);
        vec3 pv = vec3_scale(vec3_sub(point, last_point[i]), 1.0f / frame_time);
        last_point[i] = point;
        vec3 ahead = vec3_add(point, vec3_scale(pv, frame_time));
        vec3 e = vec3_add(vec3_sub(ahead, goal[(size_t)f * nm + i]), vec3_scale(vec3_sub(pv, now[i]), (float)lead));
        double imp = impedance_at(fit, vec3_length(e));
        set_impedance(fit, i, imp);
        let_go[i] = imp < 0.5 * fit->tuning.impedance;
      }
      unsigned char use_now[ANIM_MARKER_FIT_MAX_MARKERS];
      for (int i = 0; i < nm; i++) use_now[i] = m->eq_active[i] && !let_go[i];
      /* Every other frame (marker_prior.h): the same error as every frame
       * (1.57 cm on the held-out clips) for half the searches. */
      if (f % PRIOR_EVERY == 0) follow_prior(fit, goal + (size_t)f * nm, use_now, PRIOR_EVERY * frame_time, 0);
      for (int s = 1; s <= nsub; s++) {
        float t = (float)s / (float)nsub;
        for (int i = 0; i < nm; i++) {
          if (!m->eq_active[i]) continue;
          vec3 g = vec3_lerp(prev[i], goal[(size_t)f * nm + i], t);
          vec3 p = vec3_add(g, vec3_scale(now[i], (float)lead));
          mjtNum *mp = d->mocap_pos + 3 * fit->mocap[i];
          mp[0] = p.x, mp[1] = p.y, mp[2] = p.z;
        }
        mj_step(m, d);
      }
      fit->steps += nsub;
      mj_kinematics(m, d);
      if (!state_finite(m, d)) {
        rc = ANIM_ENONFINITE;
        body_errorf(err, errlen, "the simulation diverged at frame %d", f);
        break;
      }
    }
    if (out_local_positions && out_local_rotations)
      read_pose(fit, out_local_positions + (size_t)f * nb, out_local_rotations + (size_t)f * nb);
    if (out_residuals)
      for (int i = 0; i < nm; i++) {
        size_t k = (size_t)f * nm + i;
        out_residuals[k] = (!present || present[k]) ? vec3_length(vec3_sub(point_world(fit, i), target[k])) : NAN;
      }
  }
#undef SCALED
  if (!rc && out_scale) *out_scale = scale;
  free(target);
  return rc;
}
