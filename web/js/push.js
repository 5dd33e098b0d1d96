// push.js: pushes for a physical character (MODE_PHYSICAL; the Character
// panel's "physical" box): a click on one of its bones pushes that bone
// away from the camera, horizontally, with the panel's impulse (N s), and
// the panel shows the physics state each stream frame carries (kinematic,
// powered, fallen, limp, recovering). The server refuses what it must
// (not physical, not ours, a bone without a body): the toast says why.
import * as THREE from 'three';
import { $, quietly, state, toast, viewer } from './shared.js';
import { call } from './session.js';

const PICK_PX = 24; // a click within this many pixels of a joint pushes its bone
const v = new THREE.Vector3();

// The bone whose joint is nearest (x, y) on the canvas, within PICK_PX; bone 0
// (the ground projection, never simulated) is not a choice.
function boneAt(x, y) {
  const g = state.character.joints, canvas = viewer.renderer.domElement;
  if (!g) return -1;
  let best = -1, bestD = PICK_PX;
  for (let b = 1; b < g.length / 3; b++) {
    v.set(g[3 * b], g[3 * b + 1], g[3 * b + 2]).project(viewer.camera);
    if (v.z > 1) continue;
    const d = Math.hypot((v.x + 1) / 2 * canvas.clientWidth - x, (1 - v.y) / 2 * canvas.clientHeight - y);
    if (d < bestD) best = b, bestD = d;
  }
  return best;
}

// Pushes bone b away from the camera with the panel's impulse.
export async function pushBone(b) {
  const c = state.character;
  const size = Number($('push-impulse').value);
  if (!c.id || !c.physical || !(size > 0)) return;
  const dir = new THREE.Vector3(c.joints[3 * b], 0, c.joints[3 * b + 2]).sub(viewer.camera.position.clone().setY(0));
  if (dir.lengthSq() < 1e-9) dir.set(0, 0, 1);
  dir.normalize().multiplyScalar(size);
  try {
    await call('push', { character: c.id, bone_index: b, impulse: { x: dir.x, y: 0, z: dir.z } });
    c.pushes = (c.pushes || 0) + 1;
  } catch (e) {
    toast(e.message);
  }
}

const canvas = viewer.renderer.domElement;
let down = null;
canvas.addEventListener('pointerdown', (ev) => { down = [ev.clientX, ev.clientY]; });
canvas.addEventListener('pointerup', (ev) => {
  if (!down || Math.hypot(ev.clientX - down[0], ev.clientY - down[1]) > 4 || !state.character.physical) return;
  const r = canvas.getBoundingClientRect();
  const b = boneAt(ev.clientX - r.left, ev.clientY - r.top);
  if (b > 0) quietly(pushBone(b));
});
