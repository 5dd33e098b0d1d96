#!/bin/sh
# Builds the previewer into OUT: the page, its scripts, the protocol
# (proto/animserver.proto and its parts, fetched and parsed by protobufjs at start, so the
# page always speaks the proto of this tree) and the npm packages it uses
# (three with its glTF and BVH loaders, protobufjs, long) from NODE_MODULES (installed by `npm ci`).
# No bundler: ES modules and an import map.
# Usage: web/build.sh OUT NODE_MODULES
set -eu
out=$1
modules=$2
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
for f in three/build/three.module.js three/build/three.core.js three/examples/jsm/controls/OrbitControls.js \
         three/examples/jsm/loaders/GLTFLoader.js three/examples/jsm/loaders/BVHLoader.js \
         three/examples/jsm/utils/BufferGeometryUtils.js three/examples/jsm/utils/SkeletonUtils.js \
         protobufjs/dist/protobuf.min.js long/umd/index.js; do
  [ -f "$modules/$f" ] || { echo "web/build.sh: $modules/$f missing (npm ci in web/)" >&2; exit 1; }
done
# Into the folder itself, not a replacement of it: a running websockify serves
# from the folder it started in (make preview rebuilds under it).
mkdir -p "$out"
rm -rf "${out:?}"/*
mkdir -p "$out/js" "$out/css" "$out/vendor/three/addons/controls" "$out/vendor/three/addons/loaders" \
  "$out/vendor/three/addons/utils"
cp "$here/index.html" "$out/"
cp "$here"/js/*.js "$out/js/"
cp "$here"/css/*.css "$out/css/"
cp -r "$root/proto/animserver.proto" "$root/proto/animserver" "$out/"
cp "$modules/three/build/three.module.js" "$modules/three/build/three.core.js" "$out/vendor/three/"
cp "$modules/three/examples/jsm/controls/OrbitControls.js" "$out/vendor/three/addons/controls/"
# The recordings replayed (replay.js): three's glTF and BVH loaders, and what GLTFLoader imports.
cp "$modules/three/examples/jsm/loaders/GLTFLoader.js" "$modules/three/examples/jsm/loaders/BVHLoader.js" \
  "$out/vendor/three/addons/loaders/"
cp "$modules/three/examples/jsm/utils/BufferGeometryUtils.js" "$modules/three/examples/jsm/utils/SkeletonUtils.js" \
  "$out/vendor/three/addons/utils/"
cp "$modules/protobufjs/dist/protobuf.min.js" "$out/vendor/"
cp "$modules/long/umd/index.js" "$out/vendor/long.js"
