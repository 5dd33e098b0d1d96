/*
 * body_model.c: the physics model of a database's skeleton (body.h says
 * what it is made of): capsules, de Leva masses, limits from the frames,
 * written as MJCF and loaded by MuJoCo from memory (a VFS), then the
 * joints' effective inertias read from MuJoCo's mass matrix.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anim_error.h"
#include "body_internal.h"
#include "motion/spring.h"
#include "offline/bone_roles.h"

/* de Leva (1996), Table 4, males: segment mass, share of body mass. */
#define DE_LEVA_THIGH 0.1416f
#define DE_LEVA_SHANK 0.0433f
#define DE_LEVA_FOOT 0.0137f
/* Capsule radii for a 1.7 m skeleton (scaled by height / 1.7): the legs'
 * from the segments' girths (thigh ~ 0.065, calf ~ 0.05 m), the foot's to
 * put the ankle at its height; other bones 0.3 x their length within
 * [0.03, 0.06]; a leaf 0.04, the highest leaf (the head) 0.1. */
#define R_THIGH 0.065f
#define R_SHANK 0.05f
#define R_FOOT 0.035f
#define R_MIN 0.03f
#define R_MAX 0.06f
#define R_LEAF 0.04f
#define R_HEAD 0.1f
#define R_FLOOR 0.01f   /* the thinnest capsule, m */
#define LIMIT_MAX 3.0543262f /* 175 degrees */
#define ARMATURE 0.01        /* kg m^2 per joint axis of the legs and the root, for ANIM_PHYSICS_REFERENCE_MASS */

enum { G_OTHER, G_THIGH, G_SHANK, G_FOOT };

void body_errorf(char *err, int errlen, const char *fmt, ...) {
  if (!err || errlen <= 0) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, (size_t)errlen, fmt, ap);
  va_end(ap);
}

void anim_physics_model_options_default(anim_physics_model_options_t *out_options) {
  out_options->total_mass = 70.0f;
  out_options->tick = 1.0f / 60.0f;
  out_options->substeps = 4;
  out_options->friction = 1.0f;
  out_options->weld_leaves = 1;
  out_options->fix_still = 1;
  out_options->upper_armature = 0.3f;
}

/* A growing text buffer for the MJCF. */
typedef struct {
  char *s;
  size_t len, cap;
  int failed;
} text_t;

static void put(text_t *t, const char *fmt, ...) {
  if (t->failed) return;
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    if (n < 0) { t->failed = 1; return; }
    if (t->len + (size_t)n < t->cap) { t->len += (size_t)n; return; }
    size_t cap = t->cap * 2 + (size_t)n + 1;
    char *s = realloc(t->s, cap);
    if (!s) { t->failed = 1; return; }
    t->s = s, t->cap = cap;
  }
}

static int is_descendant(const int *parents, int bone, int ancestor) {
  for (int b = bone; b >= 0; b = parents[b])
    if (b == ancestor) return 1;
  return 0;
}

static float capsule_volume(float length, float radius) {
  return (float)M_PI * radius * radius * length + 4.0f / 3.0f * (float)M_PI * radius * radius * radius;
}

/* Groups (thigh, shank, foot, other) per bone from the leg roles. */
static void leg_groups(const anim_skeleton_t *sk, int *group) {
  int roles[ANIM_BONE_ROLE_COUNT];
  for (int b = 0; b < sk->nbones; b++) group[b] = G_OTHER;
  if (anim_bone_roles_find(sk, NULL, roles, NULL, 0)) return;
  for (int side = 0; side < 2; side++) {
    int thigh = roles[ANIM_BONE_THIGH_LEFT + side], foot = roles[ANIM_BONE_FOOT_LEFT + side];
    if (thigh <= 0 || foot <= 0 || foot == thigh || !is_descendant(sk->parents, foot, thigh)) continue;
    group[thigh] = G_THIGH;
    for (int b = sk->parents[foot]; b != thigh; b = sk->parents[b]) group[b] = G_SHANK;
    for (int b = foot; b < sk->nbones; b++)
      if (is_descendant(sk->parents, b, foot)) group[b] = G_FOOT;
  }
}

/* Capsules per body, their radii and masses, the body masses (see body.h). */
static void make_capsules(anim_physics_model_t *pm, const anim_skeleton_t *sk, const vec3 *rest, const float *lowest,
                          float total_mass) {
  int group[ANIM_MAX_BONES], nchildren[ANIM_MAX_BONES] = {0};
  leg_groups(sk, group);
  for (int b = 0; b < sk->nbones; b++) pm->leg[b] = group[b] != G_OTHER;
  float ymin = INFINITY, ymax = -INFINITY;
  int head = -1;
  for (int b = 1; b < sk->nbones; b++) {
    if (!pm->sim[b]) continue;
    if (sk->parents[b] >= 0) nchildren[sk->parents[b]]++;
    if (rest[b].y < ymin) ymin = rest[b].y;
    if (rest[b].y > ymax) ymax = rest[b].y;
  }
  float scale = (ymax - ymin) / 1.7f;
  if (!(scale > 0.2f)) scale = 0.2f;
  for (int b = 1; b < sk->nbones; b++)
    if (pm->sim[b] && !nchildren[b] && (head < 0 || rest[b].y > rest[head].y)) head = b;

  pm->ncapsules = 0;
  for (int b = 1; b < sk->nbones; b++) {
    if (!pm->sim[b]) continue;
    for (int c = b + 1; c < sk->nbones; c++) {
      if (sk->parents[c] != b) continue;
      float len = vec3_length(sk->offsets[c]), r;
      switch (group[b]) {
        case G_THIGH: r = R_THIGH; break;
        case G_SHANK: r = R_SHANK; break;
        case G_FOOT: r = R_FOOT; break;
        default: r = fminf(fmaxf(0.3f * len / scale, R_MIN), R_MAX);
      }
      /* No thicker than the lowest its joints come to the ground in the
       * data: the feet of the kinematic pose must fit the floor. */
      float fit = fmaxf(fminf(lowest[b], lowest[c]), R_FLOOR);
      pm->capsules[pm->ncapsules++] = (anim_physics_capsule_t){b, c, len, fminf(r * scale, fit), 0.0f};
    }
    if (!nchildren[b]) {
      float r = (b == head && group[b] == G_OTHER) ? R_HEAD : R_LEAF;
      pm->capsules[pm->ncapsules++] = (anim_physics_capsule_t){b, -1, 0.0f, fminf(r * scale, fmaxf(lowest[b], R_FLOOR)), 0.0f};
    }
  }

  /* Group shares: per leg segment from the table, the rest to G_OTHER. A
   * group with no capsule (a leg not found) gives its share to G_OTHER. */
  float share[4] = {0, 0, 0, 0}, volume[4] = {0, 0, 0, 0};
  int legs[4] = {0, 0, 0, 0};
  for (int b = 1; b < sk->nbones; b++)
    if (group[b] == G_THIGH) legs[G_THIGH]++;
  for (int i = 0; i < pm->ncapsules; i++)
    volume[group[pm->capsules[i].bone]] += capsule_volume(pm->capsules[i].length, pm->capsules[i].radius);
  share[G_THIGH] = volume[G_THIGH] > 0 ? DE_LEVA_THIGH * legs[G_THIGH] : 0;
  share[G_SHANK] = volume[G_SHANK] > 0 ? DE_LEVA_SHANK * legs[G_THIGH] : 0;
  share[G_FOOT] = volume[G_FOOT] > 0 ? DE_LEVA_FOOT * legs[G_THIGH] : 0;
  share[G_OTHER] = 1.0f - share[G_THIGH] - share[G_SHANK] - share[G_FOOT];
  memset(pm->body_mass, 0, sizeof pm->body_mass);
  for (int i = 0; i < pm->ncapsules; i++) {
    anim_physics_capsule_t *c = &pm->capsules[i];
    int g = group[c->bone];
    c->mass = total_mass * share[g] * capsule_volume(c->length, c->radius) / volume[g];
    pm->body_mass[c->bone] += c->mass;
  }
}

/* The still joints: a bone whose local rotation stays within
 * ANIM_PHYSICS_STILL of its first frame's over every frame gets no joint
 * (body.h). */
static void still_joints(anim_physics_model_t *pm, const anim_database_t *db) {
  for (int b = 1; b < db->nbones; b++) {
    if (!pm->joint[b]) continue;
    quat q0 = quat_normalize(db->local_rotations[b]);
    int still = 1;
    for (int f = 1; f < db->nframes && still; f++) {
      quat q = db->local_rotations[(size_t)f * db->nbones + b];
      float dot = fminf(fabsf(q.w * q0.w + q.x * q0.x + q.y * q0.y + q.z * q0.z), 1.0f);
      still = 2.0f * acosf(dot) < ANIM_PHYSICS_STILL;
    }
    if (still) pm->fixed[b] = 1, pm->joint[b] = 0, pm->fixed_rotation[b] = q0;
  }
}

/* The largest rotation from rest of each bone's local rotation over db's frames. */
static void observed_limits(anim_physics_model_t *pm, const anim_database_t *db) {
  for (int b = 0; b < db->nbones; b++) pm->limit[b] = 0.0f;
  for (int f = 0; f < db->nframes; f++)
    for (int b = 1; b < db->nbones; b++) {
      if (!pm->joint[b]) continue;
      float w = fminf(fabsf(db->local_rotations[(size_t)f * db->nbones + b].w), 1.0f);
      float angle = 2.0f * acosf(w);
      if (angle > pm->limit[b]) pm->limit[b] = angle;
    }
  for (int b = 1; b < db->nbones; b++) {
    if (!pm->joint[b]) continue;
    /* A joint seen turning past LIMIT_MAX from rest (a rest pose far from
     * the data: Bandai Namco's legs reach 180 degrees) gets no limit: a
     * cone that wide would only bind where the data goes. */
    float limit = fmaxf(pm->limit[b] + ANIM_PHYSICS_LIMIT_MARGIN, ANIM_PHYSICS_LIMIT_MIN);
    pm->limit[b] = limit > LIMIT_MAX ? (float)M_PI : limit;
  }
}

static void write_body(text_t *t, const anim_physics_model_t *pm, int b, int depth) {
  vec3 o = pm->offsets[b];
  if (b == pm->root)
    put(t, "%*s<body name=\"b%d\" pos=\"0 %.6g 0\">\n%*s<freejoint name=\"j%d\"/>\n", depth, "", b,
        pm->rest_root_height, depth + 1, "", b);
  else if (pm->fixed[b]) {
    quat r = pm->fixed_rotation[b];
    put(t, "%*s<body name=\"b%d\" pos=\"%.6g %.6g %.6g\" quat=\"%.9g %.9g %.9g %.9g\">\n", depth, "", b, o.x, o.y, o.z, r.w,
        r.x, r.y, r.z);
  } else
    put(t, "%*s<body name=\"b%d\" pos=\"%.6g %.6g %.6g\">\n%*s<joint name=\"j%d\" type=\"ball\" limited=\"%s\" range=\"0 %.6g\" damping=\"%.6g\" armature=\"%g\"/>\n",
        depth, "", b, o.x, o.y, o.z, depth + 1, "", b, pm->limit[b] < (float)M_PI ? "true" : "false",
        pm->limit[b] < (float)M_PI ? pm->limit[b] : 1.0f, pm->joint_damping[b],
        pm->mass_scale * (pm->leg[b] ? ARMATURE : pm->upper_armature));
  for (int i = 0; i < pm->ncapsules; i++) {
    const anim_physics_capsule_t *c = &pm->capsules[i];
    int welded = c->bone != b && pm->welded[c->bone] && pm->parents[c->bone] == b;
    if (c->bone != b && !welded) continue;
    if (welded) { /* a welded leaf's sphere, on its joint in this body */
      vec3 p = pm->offsets[c->bone];
      put(t, "%*s<geom name=\"g%d\" type=\"sphere\" pos=\"%.6g %.6g %.6g\" size=\"%.6g\" mass=\"%.6g\"/>\n", depth + 1, "", i,
          p.x, p.y, p.z, c->radius, c->mass);
    } else if (c->child < 0 || c->length < 1e-4f) {
      put(t, "%*s<geom name=\"g%d\" type=\"sphere\" size=\"%.6g\" mass=\"%.6g\"/>\n", depth + 1, "", i, c->radius, c->mass);
    } else {
      vec3 e = pm->offsets[c->child];
      put(t, "%*s<geom name=\"g%d\" type=\"capsule\" fromto=\"0 0 0 %.6g %.6g %.6g\" size=\"%.6g\" mass=\"%.6g\"/>\n", depth + 1,
          "", i, e.x, e.y, e.z, c->radius, c->mass);
    }
  }
  for (int c = b + 1; c < pm->nbones; c++)
    if (pm->parents[c] == b && !pm->welded[c]) write_body(t, pm, c, depth + 1);
  put(t, "%*s</body>\n", depth, "");
}

static char *write_mjcf(const anim_physics_model_t *pm, float friction) {
  text_t t = {malloc(4096), 0, 4096, 0};
  if (!t.s) return NULL;
  /* Y up as the database: gravity along -y, the plane's normal (its z) turned onto +y. */
  put(&t, "<mujoco model=\"animserver body\">\n"
          " <compiler angle=\"radian\" inertiafromgeom=\"true\"/>\n"
          " <option timestep=\"%.9g\" gravity=\"0 -9.81 0\" integrator=\"Euler\" solver=\"PGS\" iterations=\"20\"/>\n"
          " <size njmax=\"600\" nconmax=\"150\"/>\n"
          " <default>\n"
          "  <joint armature=\"%g\" damping=\"0\"/>\n"
          "  <geom contype=\"0\" conaffinity=\"0\" condim=\"3\" friction=\"%g 0.005 0.0001\"/>\n"
          " </default>\n"
          " <worldbody>\n"
          "  <geom name=\"ground\" type=\"plane\" size=\"0 0 1\" quat=\"0.70710678 -0.70710678 0 0\" contype=\"0\" conaffinity=\"0\"/>\n",
      pm->tick / pm->substeps, pm->mass_scale * ARMATURE, friction);
  write_body(&t, pm, pm->root, 2);
  put(&t, " </worldbody>\n");
  /* Each capsule against the ground as an explicit pair, every geom's
   * contype 0: MuJoCo then skips its broad phase (a sort of every geom's
   * bounds each step, 7 % of a tick's instructions) and tests just these. */
  put(&t, " <contact>\n");
  for (int i = 0; i < pm->ncapsules; i++)
    put(&t, "  <pair geom1=\"ground\" geom2=\"g%d\" condim=\"3\" friction=\"%g %g 0.005 0.0001 0.0001\"/>\n", i, friction, friction);
  put(&t, " </contact>\n");
  put(&t, "</mujoco>\n");
  if (t.failed) {
    free(t.s);
    return NULL;
  }
  return t.s;
}

static mjModel *load_mjcf(const char *xml, char *err, int errlen) {
  mjVFS *vfs = malloc(sizeof *vfs); /* about 2 MB in 2.2.2: not on the stack */
  if (!vfs) return NULL;
  mj_defaultVFS(vfs);
  int len = (int)strlen(xml);
  mjModel *m = NULL;
  if (mj_makeEmptyFileVFS(vfs, "body.xml", len) == 0) {
    memcpy(vfs->filedata[mj_findFileVFS(vfs, "body.xml")], xml, (size_t)len);
    char merr[512] = "";
    m = mj_loadXML("body.xml", vfs, merr, sizeof merr);
    if (!m) body_errorf(err, errlen, "MuJoCo refused the body model: %s", merr);
  } else {
    body_errorf(err, errlen, "MuJoCo's virtual file system refused the model");
  }
  mj_deleteVFS(vfs);
  free(vfs);
  return m;
}

/* Inertia of each joint axis in the rest pose: the diagonal of the joint
 * space mass matrix, M_ii, the inertia of everything below the joint about
 * that axis with the rest of the body held (the composite rigid body
 * inertia). Not 1 / (M^-1)_ii, the inertia felt with the rest of the body
 * free: with a free root that is the reduced inertia of two halves turning
 * against each other (0.05 kg m^2 at the spine of a 70 kg body), gains too
 * weak to hold the trunk once the stabiliser holds the hips. */
static int effective_inertias(anim_physics_model_t *pm) {
  mjData *d = mj_makeData(pm->m);
  if (!d) return ANIM_ENOMEM;
  /* Inertias in the rest pose, the root standing. */
  mj_forward(pm->m, d);
  for (int b = 1; b < pm->nbones; b++) {
    if (!pm->joint[b] && b != pm->root) continue;
    int base = pm->dofadr[b] + (b == pm->root ? 3 : 0);
    double mean = 0;
    for (int k = 0; k < 3; k++) {
      pm->dof_inertia[b][k] = d->qM[pm->m->dof_Madr[base + k]];
      mean += pm->dof_inertia[b][k];
    }
    pm->inertia[b] = (float)(mean / 3);
  }
  mj_deleteData(d);
  return 0;
}

static int find_addresses(anim_physics_model_t *pm, char *err, int errlen) {
  for (int b = 0; b < pm->nbones; b++) pm->body_id[b] = pm->qposadr[b] = pm->dofadr[b] = -1;
  for (int b = 1; b < pm->nbones; b++) {
    if (!pm->sim[b] || pm->welded[b]) continue;
    char name[32];
    snprintf(name, sizeof name, "b%d", b);
    pm->body_id[b] = mj_name2id(pm->m, mjOBJ_BODY, name);
    if (pm->body_id[b] < 0) return body_errorf(err, errlen, "MuJoCo model lost bone %d", b), ANIM_EINTERNAL;
    if (pm->fixed[b]) continue;
    snprintf(name, sizeof name, "j%d", b);
    int j = mj_name2id(pm->m, mjOBJ_JOINT, name);
    if (pm->body_id[b] < 0 || j < 0) return body_errorf(err, errlen, "MuJoCo model lost bone %d", b), ANIM_EINTERNAL;
    pm->qposadr[b] = pm->m->jnt_qposadr[j];
    pm->dofadr[b] = pm->m->jnt_dofadr[j];
  }
  /* A welded bone is its parent's body (a force on it acts there). */
  for (int b = 1; b < pm->nbones; b++)
    if (pm->welded[b]) pm->body_id[b] = pm->body_id[pm->parents[b]];
  return 0;
}

anim_physics_model_t *anim_physics_model_create(const anim_database_t *db, const anim_physics_model_options_t *options,
                                                char *err, int errlen) {
  anim_physics_model_options_t o;
  if (options) o = *options;
  else anim_physics_model_options_default(&o);
  if (!db) { body_errorf(err, errlen, "db: NULL"); return NULL; }
  if (!(o.total_mass > 0.0f && o.total_mass < 1e5f)) { body_errorf(err, errlen, "total_mass: must be in (0, 1e5) kg"); return NULL; }
  if (!(o.tick > 0.0f && o.tick <= 1.0f)) { body_errorf(err, errlen, "tick: must be in (0, 1] s"); return NULL; }
  if (o.substeps < 1 || o.substeps > 64) { body_errorf(err, errlen, "substeps: must be in 1..64"); return NULL; }
  if (!(o.friction >= 0.0f && o.friction <= 10.0f)) { body_errorf(err, errlen, "friction: must be in [0, 10]"); return NULL; }
  if (o.weld_leaves != 0 && o.weld_leaves != 1) { body_errorf(err, errlen, "weld_leaves: must be 0 or 1"); return NULL; }
  if (o.fix_still != 0 && o.fix_still != 1) { body_errorf(err, errlen, "fix_still: must be 0 or 1"); return NULL; }
  if (!(o.upper_armature >= 0.0f && o.upper_armature <= 10.0f)) { body_errorf(err, errlen, "upper_armature: must be in [0, 10] kg m^2"); return NULL; }
  if (anim_database_validate(db, err, errlen)) return NULL;
  const anim_skeleton_t *sk = &db->skeleton;
  /* The free root is the hips (the thighs' common ancestor); bones between
   * bone 0 and the hips (a ground-level "Root" joint) stay kinematic, and
   * every other bone must hang below the hips. */
  int roles[ANIM_BONE_ROLE_COUNT], root;
  if (anim_bone_roles_find(sk, NULL, roles, err, errlen)) return NULL;
  root = roles[ANIM_BONE_HIPS];
  if (root <= 0) {
    for (int b = 1; b < sk->nbones && root <= 0; b++)
      if (sk->parents[b] == 0) root = b;
  }
  for (int b = 1; b < sk->nbones; b++)
    if (!is_descendant(sk->parents, b, root) && !is_descendant(sk->parents, root, b)) {
      body_errorf(err, errlen, "skeleton: bone %s hangs neither below the hips (%s) nor above them", sk->names[b], sk->names[root]);
      return NULL;
    }
  anim_physics_model_t *pm = calloc(1, sizeof *pm);
  if (!pm) { body_errorf(err, errlen, "out of memory"); return NULL; }
  pm->nbones = sk->nbones, pm->root = root;
  pm->total_mass = o.total_mass, pm->tick = o.tick, pm->substeps = o.substeps;
  pm->upper_armature = o.upper_armature;
  pm->mass_scale = o.total_mass / ANIM_PHYSICS_REFERENCE_MASS;
  memcpy(pm->parents, sk->parents, sizeof(int) * (size_t)sk->nbones);
  memcpy(pm->offsets, sk->offsets, sizeof(vec3) * (size_t)sk->nbones);
  for (int b = 0; b < sk->nbones; b++) pm->sim[b] = b > 0 && is_descendant(sk->parents, b, root);
  for (int b = 1; b < sk->nbones; b++) {
    int children = 0;
    for (int c = 1; c < sk->nbones; c++) children += sk->parents[c] == b;
    pm->welded[b] = o.weld_leaves && pm->sim[b] && b != root && !children;
    pm->joint[b] = pm->sim[b] && b != root && !pm->welded[b];
  }

  /* Rest pose: identity rotations, the root at the origin. */
  vec3 rest[ANIM_MAX_BONES];
  rest[0] = vec3_zero();
  for (int b = 1; b < sk->nbones; b++)
    rest[b] = b == root || !is_descendant(sk->parents, b, root) ? vec3_zero() : vec3_add(rest[sk->parents[b]], sk->offsets[b]);
  float lowest[ANIM_MAX_BONES];
  for (int b = 0; b < sk->nbones; b++) lowest[b] = INFINITY;
  for (int f = 0; f < db->nframes; f++)
    for (int b = 0; b < sk->nbones; b++) lowest[b] = fminf(lowest[b], db->global_positions[(size_t)f * db->nbones + b].y);
  make_capsules(pm, sk, rest, lowest, o.total_mass);
  float low = INFINITY;
  for (int i = 0; i < pm->ncapsules; i++) {
    const anim_physics_capsule_t *c = &pm->capsules[i];
    float y = rest[c->bone].y;
    if (c->child >= 0) y = fminf(y, rest[c->child].y);
    low = fminf(low, y - c->radius);
  }
  pm->rest_root_height = -low;
  if (o.fix_still) still_joints(pm, db);
  observed_limits(pm, db);

  /* Two passes: the first model gives the joints' inertias, the second
   * carries the default drives' damping, which MuJoCo's Euler step
   * integrates implicitly (an explicit damping torque on a light body
   * between two stiff joints diverges at any usable step). */
  for (int pass = 0; pass < 2; pass++) {
    if (pm->m) mj_deleteModel(pm->m), pm->m = NULL;
    free(pm->mjcf);
    pm->mjcf = write_mjcf(pm, o.friction);
    if (!pm->mjcf) { body_errorf(err, errlen, "out of memory"); anim_physics_model_free(pm); return NULL; }
    pm->m = load_mjcf(pm->mjcf, err, errlen);
    if (!pm->m) { anim_physics_model_free(pm); return NULL; }
    if (find_addresses(pm, err, errlen) || effective_inertias(pm)) { anim_physics_model_free(pm); return NULL; }
    for (int b = 1; b < pm->nbones; b++) {
      if (!pm->joint[b]) continue;
      double k, c;
      anim_spring_critical_gains(&k, &c, ANIM_PHYSICS_DEFAULT_HALFLIFE, pm->inertia[b]);
      pm->joint_damping[b] = (float)c;
    }
  }
  pm->inertia[root] = o.total_mass;
  return pm;
}

void anim_physics_model_free(anim_physics_model_t *model) {
  if (!model) return;
  if (model->m) mj_deleteModel(model->m);
  free(model->mjcf);
  free(model);
}

size_t anim_physics_model_bytes(const anim_physics_model_t *model) {
  if (!model) return 0;
  return sizeof *model + sizeof *model->m + (size_t)model->m->nbuffer + strlen(model->mjcf) + 1;
}

void anim_physics_model_info(const anim_physics_model_t *model, anim_physics_model_info_t *out_info) {
  out_info->nbones = model->nbones;
  out_info->root = model->root;
  out_info->ncapsules = model->ncapsules;
  out_info->capsules = model->capsules;
  out_info->body_mass = model->body_mass;
  out_info->limit = model->limit;
  out_info->inertia = model->inertia;
  out_info->total_mass = model->total_mass;
  out_info->rest_root_height = model->rest_root_height;
  out_info->tick = model->tick;
  out_info->substeps = model->substeps;
  out_info->mjcf = model->mjcf;
}
