/* assimp_import.c: FBX and glTF animations as clips through assimp (see assimp_import.h). */
#include <assimp/cimport.h>
#include <assimp/config.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "anim_error.h"
#include "assimp_import.h"

#define MAX_NODES 8192
/* Bounds on what a file can make us allocate, as in bvh.c. */
#define MAX_FRAMES 10000000
#define MAX_FRAME_BONES ((size_t)1 << 25)

const anim_importer_t anim_assimp_importers[] = {
    {".fbx", anim_assimp_import}, {".gltf", anim_assimp_import}, {".glb", anim_assimp_import}};
const int anim_assimp_importer_count = (int)(sizeof anim_assimp_importers / sizeof anim_assimp_importers[0]);

static int fail(char *err, int errlen, int code, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int fail(char *err, int errlen, int code, const char *path, const char *fmt, ...) {
  if (err && errlen > 0) {
    int n = snprintf(err, (size_t)errlen, "%s: ", path);
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && n < errlen) vsnprintf(err + n, (size_t)(errlen - n), fmt, ap);
    va_end(ap);
  }
  return code;
}

/* ---- the node tree --------------------------------------------------------------------- */

typedef struct {
  const struct aiNode *node[MAX_NODES];
  int parent[MAX_NODES];
  int count;
  const struct aiNodeAnim *channel[MAX_NODES]; /* of the animation being read, or NULL */
} nodes_t;

/* Every node, parents first (preorder). 0, or -1 when there are too many. */
static int collect_nodes(nodes_t *t, const struct aiNode *node, int parent) {
  if (t->count == MAX_NODES) return -1;
  int me = t->count++;
  t->node[me] = node;
  t->parent[me] = parent;
  for (unsigned i = 0; i < node->mNumChildren; i++)
    if (collect_nodes(t, node->mChildren[i], me)) return -1;
  return 0;
}

static int find_node(const nodes_t *t, const struct aiString *name) {
  for (int i = 0; i < t->count; i++)
    if (t->node[i]->mName.length == name->length && memcmp(t->node[i]->mName.data, name->data, name->length) == 0)
      return i;
  return -1;
}

static int common_ancestor(const nodes_t *t, int a, int b) {
  for (int p = a; p >= 0; p = t->parent[p])
    for (int q = b; q >= 0; q = t->parent[q])
      if (p == q) return p;
  return -1;
}

/* ---- transforms ------------------------------------------------------------------------- */

static vec3 from_ai_vec(struct aiVector3D v) { return vec3_make(v.x, v.y, v.z); }
static quat from_ai_quat(struct aiQuaternion q) { return quat_normalize(quat_make(q.w, q.x, q.y, q.z)); }

typedef struct {
  vec3 translation;
  quat rotation;
  vec3 scale;
} trs_t;

static trs_t decompose(const struct aiMatrix4x4 *m) {
  struct aiVector3D s, p;
  struct aiQuaternion r;
  aiDecomposeMatrix(m, &s, &r, &p);
  trs_t out = {from_ai_vec(p), from_ai_quat(r), from_ai_vec(s)};
  return out;
}

/* The fixed transform above node `root` (the product of its ancestors' transforms). */
static struct aiMatrix4x4 above(const nodes_t *t, int root) {
  int chain[MAX_NODES], n = 0;
  for (int p = t->parent[root]; p >= 0; p = t->parent[p]) chain[n++] = p;
  struct aiMatrix4x4 m;
  aiIdentityMatrix4(&m);
  for (int i = n - 1; i >= 0; i--) aiMultiplyMatrix4(&m, &t->node[chain[i]]->mTransformation);
  return m;
}

/* ---- file metadata ---------------------------------------------------------------------- */

static int metadata_number(const struct aiScene *scene, const char *key, double *out) {
  const struct aiMetadata *md = scene->mMetaData;
  for (unsigned i = 0; md && i < md->mNumProperties; i++) {
    if (strcmp(md->mKeys[i].data, key) != 0 || !md->mValues[i].mData) continue;
    const void *v = md->mValues[i].mData;
    switch (md->mValues[i].mType) {
    case AI_INT32: *out = *(const int32_t *)v; return 1;
    case AI_FLOAT: *out = *(const float *)v; return 1;
    case AI_DOUBLE: *out = *(const double *)v; return 1;
    default: return 0;
    }
  }
  return 0;
}

static int is_fbx(const char *path) {
  size_t len = strlen(path);
  return len > 4 && strcasecmp(path + len - 4, ".fbx") == 0;
}

/* Metres per file unit when the caller gives none (see the header). */
static float file_scale(const struct aiScene *scene, const char *path) {
  double cm_per_unit;
  if (!is_fbx(path)) return 1.0f;
  return metadata_number(scene, "UnitScaleFactor", &cm_per_unit) && cm_per_unit > 0.0 ? (float)(cm_per_unit * 0.01)
                                                                                       : 0.01f;
}

/* The rotation that turns the file's up axis into +Y (FBX states it; others are Y-up). */
static quat up_to_y(const struct aiScene *scene, const char *path) {
  double axis = 1, sign = 1;
  if (!is_fbx(path) || !metadata_number(scene, "UpAxis", &axis)) return quat_identity();
  metadata_number(scene, "UpAxisSign", &sign);
  vec3 up = vec3_make(axis == 0 ? 1.0f : 0.0f, axis == 1 ? 1.0f : 0.0f, axis == 2 ? 1.0f : 0.0f);
  if (sign < 0) up = vec3_scale(up, -1.0f);
  vec3 y = vec3_make(0.0f, 1.0f, 0.0f), axis_of_turn = vec3_cross(up, y);
  float c = vec3_dot(up, y);
  if (vec3_length(axis_of_turn) < 1e-6f) return c > 0 ? quat_identity() : quat_make(0.0f, 1.0f, 0.0f, 0.0f);
  return quat_from_angle_axis(acosf(c), vec3_normalize(axis_of_turn));
}

/* ---- sampling keys ---------------------------------------------------------------------- */

/* Where time t (s) falls among n keys whose times (ticks, tps per second)
 * lead each stride-byte record (assimp's vector and quaternion keys both
 * start with `double mTime`): the key at or before t (*out_k; 0 before the
 * first) and how far t is toward the next (*out_a in [0, 1]; 0 at the last). */
static void key_span(const void *keys, size_t stride, unsigned n, double t, double tps, unsigned *out_k, float *out_a) {
  const unsigned char *base = keys;
  unsigned lo = 0, hi = n - 1;
  while (lo < hi) {
    unsigned mid = (lo + hi + 1) / 2;
    if (*(const double *)(base + mid * stride) / tps <= t) lo = mid;
    else hi = mid - 1;
  }
  *out_k = lo, *out_a = 0.0f;
  if (lo + 1 >= n) return;
  double t0 = *(const double *)(base + lo * stride) / tps, t1 = *(const double *)(base + (lo + 1) * stride) / tps;
  if (t1 > t0 && t > t0) *out_a = (float)((t - t0) / (t1 - t0));
}

static vec3 sample_position(const struct aiNodeAnim *ch, double t, double tps, vec3 rest) {
  if (!ch || ch->mNumPositionKeys == 0) return rest;
  unsigned k;
  float a;
  key_span(ch->mPositionKeys, sizeof ch->mPositionKeys[0], ch->mNumPositionKeys, t, tps, &k, &a);
  vec3 p0 = from_ai_vec(ch->mPositionKeys[k].mValue);
  return a > 0.0f ? vec3_lerp(p0, from_ai_vec(ch->mPositionKeys[k + 1].mValue), a) : p0;
}

static quat sample_rotation(const struct aiNodeAnim *ch, double t, double tps, quat rest) {
  if (!ch || ch->mNumRotationKeys == 0) return rest;
  unsigned k;
  float a;
  key_span(ch->mRotationKeys, sizeof ch->mRotationKeys[0], ch->mNumRotationKeys, t, tps, &k, &a);
  quat q0 = from_ai_quat(ch->mRotationKeys[k].mValue);
  return a > 0.0f ? quat_slerp_shortest(q0, from_ai_quat(ch->mRotationKeys[k + 1].mValue), a) : q0;
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Frame time (s), first key time and frame count of an animation: the
 * median key spacing of its most-keyed channel. */
static int animation_timing(const struct aiAnimation *anim, double tps, double *out_dt, double *out_start,
                            int *out_frames) {
  const struct aiNodeAnim *most = NULL;
  double start = 1e300, end = -1e300;
  for (unsigned c = 0; c < anim->mNumChannels; c++) {
    const struct aiNodeAnim *ch = anim->mChannels[c];
    unsigned n = ch->mNumRotationKeys > ch->mNumPositionKeys ? ch->mNumRotationKeys : ch->mNumPositionKeys;
    if (!most || n > (most->mNumRotationKeys > most->mNumPositionKeys ? most->mNumRotationKeys : most->mNumPositionKeys))
      most = ch;
    if (ch->mNumRotationKeys) {
      start = fmin(start, ch->mRotationKeys[0].mTime / tps);
      end = fmax(end, ch->mRotationKeys[ch->mNumRotationKeys - 1].mTime / tps);
    }
    if (ch->mNumPositionKeys) {
      start = fmin(start, ch->mPositionKeys[0].mTime / tps);
      end = fmax(end, ch->mPositionKeys[ch->mNumPositionKeys - 1].mTime / tps);
    }
  }
  if (!most || start > end) return -1;
  int rot = most->mNumRotationKeys >= most->mNumPositionKeys;
  unsigned n = rot ? most->mNumRotationKeys : most->mNumPositionKeys;
  double dt = 1.0 / 30.0;
  if (n >= 2) {
    double *gaps = malloc((n - 1) * sizeof *gaps);
    if (!gaps) return -1;
    for (unsigned k = 0; k + 1 < n; k++)
      gaps[k] = (rot ? most->mRotationKeys[k + 1].mTime - most->mRotationKeys[k].mTime
                     : most->mPositionKeys[k + 1].mTime - most->mPositionKeys[k].mTime) /
                tps;
    qsort(gaps, n - 1, sizeof *gaps, compare_doubles);
    dt = gaps[(n - 1) / 2];
    free(gaps);
  }
  if (!(dt >= 1e-4) || !isfinite(end - start)) return -1;
  double frames = floor((end - start) / dt + 0.5) + 1.0;
  if (frames > MAX_FRAMES) return -1;
  *out_dt = dt, *out_start = start, *out_frames = (int)frames;
  return 0;
}

/* ---- one animation -------------------------------------------------------------------- */

typedef struct {
  const char *path;
  const struct aiScene *scene;
  nodes_t *nodes;
  float scale;  /* metres per file unit */
  quat up;      /* file up -> +Y */
} source_t;

/* The bones of anim: out_bone_node[b] = node index, parents first. Returns the count, or a negative code. */
static int choose_bones(const source_t *src, const struct aiAnimation *anim, const struct aiNodeAnim **out_channel,
                        int *out_bone_node, int *out_parent, char *err, int errlen) {
  nodes_t *t = src->nodes;
  const struct aiNodeAnim **channel_of = t->channel;
  unsigned char keep[MAX_NODES];
  memset(t->channel, 0, sizeof t->channel);
  memset(keep, 0, sizeof keep);
  int root = -1;
  for (unsigned c = 0; c < anim->mNumChannels; c++) {
    int n = find_node(t, &anim->mChannels[c]->mNodeName);
    if (n < 0)
      return fail(err, errlen, ANIM_EFORMAT, src->path, "animation channel \"%s\" moves no node of the file",
                  anim->mChannels[c]->mNodeName.data);
    channel_of[n] = anim->mChannels[c];
    root = root < 0 ? n : common_ancestor(t, root, n);
  }
  if (root < 0) return fail(err, errlen, ANIM_EFORMAT, src->path, "the animation moves no node");
  for (int n = 0; n < t->count; n++)
    if (channel_of[n])
      for (int p = n; p >= 0 && !keep[p]; p = p == root ? -1 : t->parent[p]) keep[p] = 1;
  int index[MAX_NODES], count = 0;
  for (int n = 0; n < t->count; n++) {
    if (!keep[n]) continue;
    if (count == ANIM_MAX_BONES)
      return fail(err, errlen, ANIM_EFORMAT, src->path, "more than %d animated bones", ANIM_MAX_BONES);
    index[n] = count;
    out_bone_node[count] = n;
    out_channel[count] = channel_of[n];
    out_parent[count] = n == root ? -1 : index[t->parent[n]];
    count++;
  }
  return count;
}

static int make_skeleton(const source_t *src, const int *bone_node, const int *parent, int nbones, anim_skeleton_t *s,
                         char *err, int errlen) {
  memset(s, 0, sizeof *s);
  s->nbones = nbones;
  for (int b = 0; b < nbones; b++) {
    const struct aiString *name = &src->nodes->node[bone_node[b]]->mName;
    if (name->length == 0 || name->length >= ANIM_NAME_MAX)
      return fail(err, errlen, ANIM_EFORMAT, src->path, "bone name \"%.40s\" is empty or longer than %d bytes",
                  name->data, ANIM_NAME_MAX - 1);
    memcpy(s->names[b], name->data, name->length);
    s->parents[b] = parent[b];
    s->offsets[b] = vec3_scale(decompose(&src->nodes->node[bone_node[b]]->mTransformation).translation, src->scale);
  }
  return 0;
}

static int import_animation(anim_clip_t *out, const source_t *src, const struct aiAnimation *anim, char *err,
                            int errlen) {
  const struct aiNodeAnim *channel[ANIM_MAX_BONES];
  int bone_node[ANIM_MAX_BONES], parent[ANIM_MAX_BONES];
  int nbones = choose_bones(src, anim, channel, bone_node, parent, err, errlen);
  if (nbones < 0) return nbones;
  double tps = anim->mTicksPerSecond > 0.0 ? anim->mTicksPerSecond : 25.0, dt, start;
  int nframes;
  if (animation_timing(anim, tps, &dt, &start, &nframes) || (size_t)nframes * (size_t)nbones > MAX_FRAME_BONES)
    return fail(err, errlen, ANIM_EFORMAT, src->path, "animation keys give no usable frame rate or too many frames");
  anim_skeleton_t skeleton;
  int rc = make_skeleton(src, bone_node, parent, nbones, &skeleton, err, errlen);
  if (rc) return rc;
  /* The fixed transform above the root bone, turned to Y up; its scale must be uniform. */
  struct aiMatrix4x4 fixed = above(src->nodes, bone_node[0]);
  trs_t g = decompose(&fixed);
  if (fabsf(g.scale.x - g.scale.y) > 1e-3f * fabsf(g.scale.x) || fabsf(g.scale.x - g.scale.z) > 1e-3f * fabsf(g.scale.x) ||
      !(g.scale.x > 0.0f))
    return fail(err, errlen, ANIM_EFORMAT, src->path, "the nodes above the skeleton scale it unevenly");
  vec3 g_translation = quat_mul_vec3(src->up, g.translation);
  quat g_rotation = quat_mul(src->up, g.rotation);
  float bone_scale = g.scale.x * src->scale;
  if ((rc = anim_clip_alloc(out, &skeleton, nframes, (float)dt))) return fail(err, errlen, rc, src->path, "out of memory");
  for (int b = 0; b < nbones; b++) {
    trs_t rest = decompose(&src->nodes->node[bone_node[b]]->mTransformation);
    for (int f = 0; f < nframes; f++) {
      double t = start + f * dt;
      vec3 p = sample_position(channel[b], t, tps, rest.translation);
      quat q = sample_rotation(channel[b], t, tps, rest.rotation);
      size_t k = (size_t)f * (size_t)nbones + (size_t)b;
      if (b == 0) {
        p = vec3_add(vec3_scale(g_translation, src->scale), vec3_scale(quat_mul_vec3(g_rotation, p), bone_scale));
        q = quat_normalize(quat_mul(g_rotation, q));
      } else {
        p = vec3_scale(p, bone_scale);
      }
      out->local_positions[k] = p;
      out->local_rotations[k] = q;
    }
  }
  return 0;
}

/* FILE, or FILE_ANIMATION when the file has several animations (cut to ANIM_NAME_MAX - 1 bytes). */
static void clip_name(char *out, const char *path, const struct aiAnimation *anim, unsigned index, int several) {
  const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
  char full[2 * MAXLEN];
  size_t stem = strlen(base);
  const char *dot = strrchr(base, '.');
  if (dot && dot != base) stem = (size_t)(dot - base);
  if (stem > MAXLEN - 1) stem = MAXLEN - 1;
  if (!several) snprintf(full, sizeof full, "%.*s", (int)stem, base);
  else if (anim->mName.length) snprintf(full, sizeof full, "%.*s_%s", (int)stem, base, anim->mName.data);
  else snprintf(full, sizeof full, "%.*s_%u", (int)stem, base, index);
  snprintf(out, ANIM_NAME_MAX, "%.*s", ANIM_NAME_MAX - 1, full);
}

int anim_assimp_import(anim_clip_list_t *list, const char *path, const anim_import_options_t *options, char *err,
                       int errlen) {
  struct aiPropertyStore *props = aiCreatePropertyStore();
  if (!props) return fail(err, errlen, ANIM_ENOMEM, path, "out of memory");
  aiSetImportPropertyInteger(props, AI_CONFIG_IMPORT_FBX_PRESERVE_PIVOTS, 0);
  const struct aiScene *scene = aiImportFileExWithProperties(path, aiProcess_ValidateDataStructure, NULL, props);
  aiReleasePropertyStore(props);
  if (!scene) return fail(err, errlen, ANIM_EFORMAT, path, "assimp cannot read it: %s", aiGetErrorString());
  nodes_t *nodes = calloc(1, sizeof *nodes);
  int rc = nodes ? 0 : fail(err, errlen, ANIM_ENOMEM, path, "out of memory");
  if (!rc && collect_nodes(nodes, scene->mRootNode, -1))
    rc = fail(err, errlen, ANIM_EFORMAT, path, "more than %d nodes", MAX_NODES);
  unsigned animated = 0;
  for (unsigned a = 0; a < scene->mNumAnimations; a++) animated += scene->mAnimations[a]->mNumChannels > 0;
  if (!rc && !animated) rc = fail(err, errlen, ANIM_EFORMAT, path, "no animation in the file");
  source_t src = {path, scene, nodes, options && options->scale > 0.0f ? options->scale : file_scale(scene, path),
                  up_to_y(scene, path)};
  for (unsigned a = 0; !rc && a < scene->mNumAnimations; a++) {
    const struct aiAnimation *anim = scene->mAnimations[a];
    if (anim->mNumChannels == 0) continue;
    anim_clip_t clip;
    memset(&clip, 0, sizeof clip);
    rc = import_animation(&clip, &src, anim, err, errlen);
    if (!rc) clip_name(clip.name, path, anim, a, animated > 1);
    if (!rc && (rc = anim_clip_validate(&clip, err, errlen)) == 0 && (rc = anim_clip_list_append(list, &clip)))
      fail(err, errlen, rc, path, "out of memory");
    anim_clip_free(&clip);
  }
  free(nodes);
  aiReleaseImport(scene);
  return rc;
}
