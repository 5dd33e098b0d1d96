// replay.js: a recording opened in the page and played on the timeline: the
// glTF 2.0 (.glb, or .gltf with its .bin picked alongside) or BVH that
// `animctl record` writes (docs/export.md), from the Recording panel's file
// picker or dropped on the view. three.js's own loaders read them
// (GLTFLoader, BVHLoader, from the npm package the page already vendors:
// no parser here); the animation is sampled at each of its keys (a key a
// recorded frame) into world joint positions, and the timeline plays those
// frames as it plays a database's range (play, pause, step, scrub, speed),
// on the skeleton the file carries (its bones, named as the database's).
// state.replay says what is loaded.
//
// Units: glTF is metres; the BVH animctl writes is centimetres (read here
// x 0.01). What it does not: talk to the server (a recording is a file), or
// read the recording's JSON lines (-o), which the glTF and BVH carry all of.
import * as THREE from 'three';
import { GLTFLoader } from 'three/addons/loaders/GLTFLoader.js';
import { BVHLoader } from 'three/addons/loaders/BVHLoader.js';
import { $, app, quietly, state, toast } from './shared.js';
import { playClip } from './timeline.js';

const BVH_METRES = 0.01; // animctl record writes BVH in centimetres

let frames = null; // Float32Array(3 x bones) a frame, world metres

// The picked or dropped files: the first .glb, .gltf or .bvh among them
// (a .gltf's .bin and images found among the others by name).
export async function openRecording(fileList) {
  const files = Array.from(fileList);
  const main = files.find((f) => /\.(glb|gltf|bvh)$/i.test(f.name));
  if (!main) return toast(`a recording is a .glb, .gltf or .bvh (animctl record): not ${files.map((f) => f.name).join(', ')}`);
  let root, bones, clip, times;
  try {
    ({ root, bones, clip } = /\.bvh$/i.test(main.name) ? await readBvh(main) : await readGltf(main, files));
    times = clip.tracks.reduce((longest, t) => (t.times.length > longest.length ? t.times : longest), []);
    if (times.length < 1) throw new Error('its animation has no keys');
  } catch (e) {
    toast(`${main.name}: ${e.message || e}`);
    throw e;
  }
  const names = bones.map((b) => b.name);
  const parents = bones.map((b) => bones.indexOf(b.parent));
  frames = sample(root, bones, clip, times);
  const frameTime = times.length > 1 ? (times[times.length - 1] - times[0]) / (times.length - 1) : 1 / 60;
  Object.assign(state.replay, { name: main.name, format: /\.bvh$/i.test(main.name) ? 'bvh' : 'gltf',
    frames: frames.length, bones: bones.length, names, parents, frameTime, opened: state.replay.opened + 1 });
  $('replay-info').textContent = `${main.name}: ${frames.length} frames of ${bones.length} bones at ` +
    `${(1 / frameTime).toFixed(1)} Hz (${(frames.length * frameTime).toFixed(2)} s), on the timeline`;
  playClip({ globals: frames, contacts: frames.map(() => 0), parents, names, contactBones: [],
    frameRate: 1 / frameTime, start: 0, label: main.name, range: -1, recording: main.name }, true);
  return state.replay;
}

async function readGltf(main, files) {
  const urls = new Map(files.map((f) => [f.name, URL.createObjectURL(f)]));
  const manager = new THREE.LoadingManager();
  manager.setURLModifier((url) => urls.get(decodeURIComponent(url.split('/').pop())) || url);
  try {
    const gltf = await new GLTFLoader(manager).parseAsync(await main.arrayBuffer(), '');
    if (!gltf.animations.length) throw new Error('no animation in it');
    // The skin's joints are the skeleton (animctl's glTF skins every bone:
    // importers make an armature only from a skin).
    let skeleton = null;
    gltf.scene.traverse((o) => { if (!skeleton && o.isSkinnedMesh) skeleton = o.skeleton; });
    if (!skeleton) throw new Error('no skin: no skeleton to draw');
    return { root: gltf.scene, bones: skeleton.bones, clip: gltf.animations[0] };
  } finally {
    urls.forEach((u) => URL.revokeObjectURL(u));
  }
}

// BVH's position channels: three's BVHLoader adds them to the joint's
// OFFSET (as if relative to it); animctl's writer (core/offline/bvh_write.h),
// the project's reader and Blender's importer take them as the joint's
// local position itself (the usual reading: a root's OFFSET is mostly zero,
// where the two agree). The joints with position channels are named in the
// header; their offset is taken back off their position keys.
async function readBvh(main) {
  const text = await main.text();
  const { skeleton, clip } = new BVHLoader().parse(text);
  const positioned = new Set();
  for (const m of text.matchAll(/(?:ROOT|JOINT)\s+(\S+)\s*\{\s*OFFSET[^\n]*\n\s*CHANNELS\s+\d+([^\n]*)/g)) {
    if (/position/i.test(m[2])) positioned.add(m[1]);
  }
  for (const track of clip.tracks) {
    const [name, property] = [track.name.slice(0, track.name.lastIndexOf('.')), track.name.slice(track.name.lastIndexOf('.') + 1)];
    const bone = skeleton.bones.find((b) => b.name === name);
    if (property !== 'position' || !positioned.has(name) || !bone) continue;
    for (let k = 0; k < track.values.length; k += 3) {
      track.values[k] -= bone.position.x;
      track.values[k + 1] -= bone.position.y;
      track.values[k + 2] -= bone.position.z;
    }
  }
  const root = new THREE.Group();
  root.scale.setScalar(BVH_METRES);
  root.add(skeleton.bones[0]);
  return { root, bones: skeleton.bones.filter((b) => b.name !== 'ENDSITE'), clip };
}

// Each key time's world joint positions: every track evaluated at the time
// (its own interpolant: slerp for rotations) onto its node, then the world
// matrices. Sampling at the keys gives the keys back exactly.
function sample(root, bones, clip, times) {
  const targets = clip.tracks.map((track) => {
    const { nodeName, propertyName } = THREE.PropertyBinding.parseTrackName(track.name);
    const node = root.getObjectByName(nodeName) || root.getObjectByProperty('uuid', nodeName);
    return node && node[propertyName] ? { node, property: propertyName, interpolant: track.createInterpolant() } : null;
  }).filter(Boolean);
  const p = new THREE.Vector3();
  return Array.from(times, (t) => {
    for (const { node, property, interpolant } of targets) node[property].fromArray(interpolant.evaluate(t));
    root.updateMatrixWorld(true);
    const g = new Float32Array(3 * bones.length);
    bones.forEach((b, i) => { b.getWorldPosition(p); g.set([p.x, p.y, p.z], 3 * i); });
    return g;
  });
}

// A frame of the recording as sampled: world positions, 3 a bone (the tests'
// view of it; the timeline draws the same arrays).
export const replayJoints = (frame) => (frames && frames[frame] ? Array.from(frames[frame]) : null);

$('recording-file').onchange = (e) => { if (e.target.files.length) quietly(openRecording(e.target.files)); };
const view = $('center');
view.addEventListener('dragover', (e) => { e.preventDefault(); view.classList.add('dropping'); });
view.addEventListener('dragleave', () => view.classList.remove('dropping'));
view.addEventListener('drop', (e) => {
  e.preventDefault();
  view.classList.remove('dropping');
  if (e.dataTransfer.files.length) quietly(openRecording(e.dataTransfer.files));
});
Object.assign(app, { openRecording, replayJoints });
