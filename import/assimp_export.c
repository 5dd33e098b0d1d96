/*
 * assimp_export.c: builds an aiScene from a clip in plain C (calloc'd
 * structs, freed here: assimp's exporter copies the scene before it touches
 * it) and hands it to aiExportScene. See assimp_export.h.
 */
#include "assimp_export.h"
#include <assimp/cexport.h>
#include <assimp/cimport.h>
#include <assimp/scene.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "anim_error.h"

#define TRIANGLE_SIZE 0.01f /* metres: the skin mesh's triangles, small beside any bone */

static void set_name(struct aiString *s, const char *name) {
  size_t n = strlen(name);
  if (n >= sizeof s->data) n = sizeof s->data - 1;
  memcpy(s->data, name, n);
  s->data[n] = '\0';
  s->length = (ai_uint32)n;
}

static struct aiMatrix4x4 translation(vec3 t) {
  struct aiMatrix4x4 m = {1, 0, 0, t.x, 0, 1, 0, t.y, 0, 0, 1, t.z, 0, 0, 0, 1};
  return m;
}

static void free_node(struct aiNode *node) {
  if (!node) return;
  for (unsigned i = 0; i < node->mNumChildren; i++) free_node(node->mChildren[i]);
  free(node->mChildren);
  free(node->mMeshes);
  free(node);
}

static void free_scene(struct aiScene *scene) {
  free_node(scene->mRootNode);
  for (unsigned m = 0; m < scene->mNumMeshes; m++) {
    struct aiMesh *mesh = scene->mMeshes[m];
    if (!mesh) continue;
    for (unsigned b = 0; b < mesh->mNumBones; b++) {
      if (mesh->mBones[b]) free(mesh->mBones[b]->mWeights);
      free(mesh->mBones[b]);
    }
    free(mesh->mBones);
    for (unsigned f = 0; f < mesh->mNumFaces; f++) free(mesh->mFaces[f].mIndices);
    free(mesh->mFaces);
    free(mesh->mVertices);
    free(mesh);
  }
  free(scene->mMeshes);
  for (unsigned m = 0; m < scene->mNumMaterials; m++) free(scene->mMaterials[m]);
  free(scene->mMaterials);
  for (unsigned a = 0; a < scene->mNumAnimations; a++) {
    struct aiAnimation *anim = scene->mAnimations[a];
    if (!anim) continue;
    for (unsigned c = 0; c < anim->mNumChannels; c++) {
      if (!anim->mChannels[c]) continue;
      free(anim->mChannels[c]->mPositionKeys);
      free(anim->mChannels[c]->mRotationKeys);
      free(anim->mChannels[c]);
    }
    free(anim->mChannels);
    free(anim);
  }
  free(scene->mAnimations);
  free(scene);
}

/* Bone nodes b.. under parent (nodes[b] made for every bone); 0 or ANIM_ENOMEM. */
static int make_bone_nodes(const anim_skeleton_t *s, struct aiNode **nodes) {
  for (int b = 0; b < s->nbones; b++) {
    if (!(nodes[b] = calloc(1, sizeof *nodes[b]))) return ANIM_ENOMEM;
    set_name(&nodes[b]->mName, s->names[b]);
    nodes[b]->mTransformation = translation(s->offsets[b]);
  }
  for (int b = 0; b < s->nbones; b++) {
    int n = 0;
    for (int c = b + 1; c < s->nbones; c++) n += s->parents[c] == b;
    if (!n) continue;
    if (!(nodes[b]->mChildren = calloc((size_t)n, sizeof *nodes[b]->mChildren))) return ANIM_ENOMEM;
    for (int c = b + 1; c < s->nbones; c++)
      if (s->parents[c] == b) {
        nodes[b]->mChildren[nodes[b]->mNumChildren++] = nodes[c];
        nodes[c]->mParent = nodes[b];
      }
  }
  return 0;
}

/* The skin's carrier: a triangle per bone at its rest world position. */
static struct aiMesh *make_skin_mesh(const anim_skeleton_t *s) {
  struct aiMesh *mesh = calloc(1, sizeof *mesh);
  if (!mesh) return NULL;
  set_name(&mesh->mName, "Skin");
  mesh->mPrimitiveTypes = aiPrimitiveType_TRIANGLE;
  mesh->mNumVertices = 3u * (unsigned)s->nbones;
  mesh->mVertices = calloc(mesh->mNumVertices, sizeof *mesh->mVertices);
  mesh->mFaces = calloc((size_t)s->nbones, sizeof *mesh->mFaces);
  mesh->mBones = calloc((size_t)s->nbones, sizeof *mesh->mBones);
  if (!mesh->mVertices || !mesh->mFaces || !mesh->mBones) return mesh; /* caller sees the NULLs */
  vec3 world[ANIM_MAX_BONES];
  for (int b = 0; b < s->nbones; b++) {
    vec3 o = s->offsets[b];
    world[b] = b == 0 ? o : vec3_make(world[s->parents[b]].x + o.x, world[s->parents[b]].y + o.y,
                                      world[s->parents[b]].z + o.z);
    struct aiFace *face = &mesh->mFaces[mesh->mNumFaces];
    if (!(face->mIndices = calloc(3, sizeof *face->mIndices))) return mesh;
    mesh->mNumFaces++;
    face->mNumIndices = 3;
    struct aiBone *bone = calloc(1, sizeof *bone);
    if (!bone) return mesh;
    mesh->mBones[mesh->mNumBones++] = bone;
    set_name(&bone->mName, s->names[b]);
    /* The rest pose has no rotations: the inverse bind matrix undoes the translation. */
    bone->mOffsetMatrix = translation(vec3_make(-world[b].x, -world[b].y, -world[b].z));
    if (!(bone->mWeights = calloc(3, sizeof *bone->mWeights))) return mesh;
    bone->mNumWeights = 3;
    static const float corner[3][2] = {{0, 0}, {1, 0}, {0, 1}};
    for (int v = 0; v < 3; v++) {
      unsigned i = 3u * (unsigned)b + (unsigned)v;
      mesh->mVertices[i] = (struct aiVector3D){world[b].x + corner[v][0] * TRIANGLE_SIZE,
                                               world[b].y + corner[v][1] * TRIANGLE_SIZE, world[b].z};
      face->mIndices[v] = i;
      bone->mWeights[v] = (struct aiVertexWeight){i, 1.0f};
    }
  }
  return mesh;
}

static int mesh_complete(const struct aiMesh *mesh, int nbones) {
  if (!mesh || !mesh->mVertices || !mesh->mFaces || !mesh->mBones) return 0;
  if ((int)mesh->mNumFaces != nbones || (int)mesh->mNumBones != nbones) return 0;
  for (int b = 0; b < nbones; b++)
    if (!mesh->mBones[b]->mWeights) return 0;
  return 1;
}

static struct aiAnimation *make_animation(const anim_clip_t *clip) {
  const anim_skeleton_t *s = &clip->skeleton;
  struct aiAnimation *anim = calloc(1, sizeof *anim);
  if (!anim) return NULL;
  set_name(&anim->mName, "recording");
  /* One tick per frame: the exporter writes key times in ticks / mTicksPerSecond seconds. */
  anim->mTicksPerSecond = 1.0 / (double)clip->frame_time;
  anim->mDuration = (double)(clip->nframes - 1);
  if (!(anim->mChannels = calloc((size_t)s->nbones, sizeof *anim->mChannels))) return anim;
  for (int b = 0; b < s->nbones; b++) {
    struct aiNodeAnim *ch = calloc(1, sizeof *ch);
    if (!ch) return anim;
    anim->mChannels[anim->mNumChannels++] = ch;
    set_name(&ch->mNodeName, s->names[b]);
    ch->mPositionKeys = calloc((size_t)clip->nframes, sizeof *ch->mPositionKeys);
    ch->mRotationKeys = calloc((size_t)clip->nframes, sizeof *ch->mRotationKeys);
    if (!ch->mPositionKeys || !ch->mRotationKeys) return anim;
    ch->mNumPositionKeys = ch->mNumRotationKeys = (unsigned)clip->nframes;
    for (int f = 0; f < clip->nframes; f++) {
      size_t k = (size_t)f * s->nbones + b;
      vec3 p = clip->local_positions[k];
      quat q = clip->local_rotations[k];
      ch->mPositionKeys[f] = (struct aiVectorKey){(double)f, {p.x, p.y, p.z}};
      ch->mRotationKeys[f] = (struct aiQuatKey){(double)f, {q.w, q.x, q.y, q.z}};
    }
  }
  return anim;
}

static int animation_complete(const struct aiAnimation *anim, int nbones) {
  if (!anim || !anim->mChannels || (int)anim->mNumChannels != nbones) return 0;
  for (int b = 0; b < nbones; b++)
    if (!anim->mChannels[b]->mPositionKeys || !anim->mChannels[b]->mRotationKeys) return 0;
  return 1;
}

int anim_assimp_export(const anim_clip_t *clip, const char *path, const char *format, char *err, int errlen) {
  if (!clip || !path || !format) {
    if (err) snprintf(err, (size_t)errlen, "export: no %s", !clip ? "clip" : !path ? "path" : "format");
    return ANIM_EINVAL;
  }
  if (strcmp(format, "glb2") != 0 && strcmp(format, "gltf2") != 0) {
    if (err) snprintf(err, (size_t)errlen, "export: format \"%s\" is not glb2 or gltf2", format);
    return ANIM_EINVAL;
  }
  if (anim_clip_validate(clip, err, errlen) != 0) return ANIM_EINVAL;
  const anim_skeleton_t *s = &clip->skeleton;
  struct aiScene *scene = calloc(1, sizeof *scene);
  struct aiNode *nodes[ANIM_MAX_BONES] = {0};
  int rc = scene ? 0 : ANIM_ENOMEM;
  if (!rc) {
    rc = ANIM_ENOMEM;
    scene->mRootNode = calloc(1, sizeof *scene->mRootNode);
    scene->mMeshes = calloc(1, sizeof *scene->mMeshes);
    scene->mMaterials = calloc(1, sizeof *scene->mMaterials);
    scene->mAnimations = calloc(1, sizeof *scene->mAnimations);
    if (scene->mRootNode && scene->mMeshes && scene->mMaterials && scene->mAnimations) rc = 0;
  }
  if (!rc) {
    struct aiNode *root = scene->mRootNode;
    set_name(&root->mName, "Scene");
    root->mTransformation = translation(vec3_make(0, 0, 0));
    rc = make_bone_nodes(s, nodes);
    /* Scene's children: the root bone, then the skin's node. */
    struct aiNode *skin = calloc(1, sizeof *skin);
    root->mChildren = calloc(2, sizeof *root->mChildren);
    if (nodes[0]) root->mChildren[root->mNumChildren++] = nodes[0], nodes[0]->mParent = root;
    else for (int b = 1; b < s->nbones; b++) free_node(nodes[b]); /* not reachable from the root */
    if (skin && root->mChildren) {
      root->mChildren[root->mNumChildren++] = skin;
      skin->mParent = root;
      set_name(&skin->mName, "Skin");
      skin->mTransformation = translation(vec3_make(0, 0, 0));
      if ((skin->mMeshes = calloc(1, sizeof *skin->mMeshes))) skin->mNumMeshes = 1;
    } else {
      free(skin);
    }
    if (!rc && (!skin || !root->mChildren || !skin->mMeshes)) rc = ANIM_ENOMEM;
  }
  if (!rc) {
    scene->mMeshes[scene->mNumMeshes++] = make_skin_mesh(s);
    if (!mesh_complete(scene->mMeshes[0], s->nbones)) rc = ANIM_ENOMEM;
    /* One empty material: meshes index one (glTF gives it the default look). */
    if ((scene->mMaterials[0] = calloc(1, sizeof *scene->mMaterials[0]))) scene->mNumMaterials = 1;
    else rc = ANIM_ENOMEM;
    scene->mAnimations[scene->mNumAnimations++] = make_animation(clip);
    if (!animation_complete(scene->mAnimations[0], s->nbones)) rc = ANIM_ENOMEM;
  }
  if (rc == ANIM_ENOMEM) {
    if (err) snprintf(err, (size_t)errlen, "export %s: out of memory", path);
  } else if (aiExportScene(scene, format, path, 0) != aiReturn_SUCCESS) {
    if (err) snprintf(err, (size_t)errlen, "export %s: %s", path, aiGetErrorString());
    rc = ANIM_EIO;
  }
  if (scene) free_scene(scene);
  return rc;
}
