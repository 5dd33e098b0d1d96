// assimp_convert.cpp: BVH to FBX/glTF with assimp's importer and exporter (see assimp_convert.h).
#include "assimp_convert.h"
#include <assimp/Exporter.hpp>
#include <assimp/Importer.hpp>
#include <assimp/scene.h>
#include <cstdio>
#include <cstring>

static int fail(char *err, int errlen, const char *what, const char *detail) {
  if (err && errlen > 0) std::snprintf(err, (size_t)errlen, "%s: %s", what, detail ? detail : "");
  return -1;
}

// Puts the root joint under a static node, so an exporter that drops its
// scene root keeps the joint.
static void wrap_root(aiScene *scene) {
  aiNode *wrapper = new aiNode("Scene");
  aiNode *joint = scene->mRootNode;
  wrapper->mNumChildren = 1;
  wrapper->mChildren = new aiNode *[1];
  wrapper->mChildren[0] = joint;
  joint->mParent = wrapper;
  scene->mRootNode = wrapper;
}

// Key times in seconds, 1 tick per second (the FBX exporter's reading).
static void times_in_seconds(aiScene *scene) {
  for (unsigned a = 0; a < scene->mNumAnimations; a++) {
    aiAnimation *anim = scene->mAnimations[a];
    double tps = anim->mTicksPerSecond > 0.0 ? anim->mTicksPerSecond : 25.0;
    for (unsigned c = 0; c < anim->mNumChannels; c++) {
      aiNodeAnim *ch = anim->mChannels[c];
      for (unsigned k = 0; k < ch->mNumPositionKeys; k++) ch->mPositionKeys[k].mTime /= tps;
      for (unsigned k = 0; k < ch->mNumRotationKeys; k++) ch->mRotationKeys[k].mTime /= tps;
      for (unsigned k = 0; k < ch->mNumScalingKeys; k++) ch->mScalingKeys[k].mTime /= tps;
    }
    anim->mDuration /= tps;
    anim->mTicksPerSecond = 1.0;
  }
}

// Removes every animation (the exporter then writes the skeleton alone).
static void drop(aiScene *scene) {
  for (unsigned a = 0; a < scene->mNumAnimations; a++) delete scene->mAnimations[a];
  delete[] scene->mAnimations;
  scene->mAnimations = nullptr;
  scene->mNumAnimations = 0;
}

extern "C" int anim_test_assimp_convert(const char *bvh_path, const char *out_path, const char *format,
                                        int drop_animations, char *err, int errlen) {
  Assimp::Importer importer;
  if (!importer.ReadFile(bvh_path, 0)) return fail(err, errlen, bvh_path, importer.GetErrorString());
  aiScene *scene = importer.GetOrphanedScene();
  wrap_root(scene);
  if (drop_animations) drop(scene);
  if (std::strncmp(format, "fbx", 3) == 0) times_in_seconds(scene);
  Assimp::Exporter exporter;
  int rc = exporter.Export(scene, format, out_path) == AI_SUCCESS
               ? 0 : fail(err, errlen, out_path, exporter.GetErrorString());
  delete scene;
  return rc;
}
