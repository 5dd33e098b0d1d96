// ghosts.js: what the Debugger draws in the view while a history is paused:
// the character as it was at the scrubbed tick (white, translucent: the
// history's pose), and beside where it stood when the search that decided
// that tick ran, the search's chosen candidate (green, GHOST_SIDE_M to its
// left) and the candidate selected in the table (orange, to its right) as
// ghosts posed from their database frames. Arrows (arrows.js): the recorded
// query's feature bones (positions, velocities) and trajectory at the
// character's root, each ghost's own features at its root.
//
// Where the numbers come from: a database frame's pose is the `pose`
// request (global positions, rotations and velocities; the local positions
// that rebuild a history pose), already the protocol's, so nothing new was
// added; a candidate's features are one `search` of the recorded query with
// the recorded settings and include_features (the candidates table is that
// same search, frame for frame). A ghost is its frame's world pose moved
// rigidly: bone 0 (the simulation bone, the frame the features are in) onto
// the character's root at the search tick, shifted sideways, so a ghost's
// feature arrows end on its own joints when the features and the pose
// agree (the browser test checks that).
//
// What it does not: draw anything while the history is live, or ask
// anything of a character but the page's own.
import * as THREE from 'three';
import { $, state, viewer } from './shared.js';
import { call } from './session.js';
import { Rig } from './viewer.js';
import { forwardKinematics } from './kinematics.js';
import { FeatureArrows } from './arrows.js';

export const GHOST_SIDE_M = 1.2; // a ghost stands this far to the side of the character
const POSES_KEPT = 256; // database frames' poses cached (a paused history is scrubbed back and forth)

const COLOURS = { then: 0xeceff1, chosen: 0x81c784, selected: 0xffb74d, query: 0x4fc3f7 };

const rigs = { then: null, chosen: null, selected: null };
const arrows = { query: null, chosen: null, selected: null };
let rigParents = null;
const poses = new Map(); // "database:frame" -> Pose
let candidateRows = { key: null, rows: new Map() }; // a search tick's candidates' normalized features
let generation = 0; // a later scrub wins over an earlier one still fetching

const quat = (a, i = 0) => new THREE.Quaternion(a[i + 1], a[i + 2], a[i + 3], a[i]); // wire (w, x, y, z)
const vec = (p) => new THREE.Vector3(p.x, p.y, p.z);

async function framePose(database, frame) {
  const key = `${database}:${frame}`;
  if (!poses.has(key)) {
    const answer = await call('pose', { database, frame, count: 1,
      options: { local: true, global: true, velocities: true } });
    if (poses.size >= POSES_KEPT) poses.clear();
    poses.set(key, answer.poses[0]);
  }
  return poses.get(key);
}

// The normalized features of a search tick's candidates, by frame: the
// recorded query searched again with the recorded settings.
async function candidateFeatures(database, search, k) {
  const key = `${database}:${search.tick}`;
  if (candidateRows.key !== key) {
    const answer = await call('search', { database, query: { features: search.query, k,
      current_frame: search.current_frame >= 0 ? { frame: search.current_frame } : null,
      transition_cost: search.transition_cost, ignore_range_end: search.ignore_range_end,
      ignore_surrounding: search.ignore_surrounding, include_features: true } });
    candidateRows = { key, rows: new Map(answer.result.matches.map((m) => [m.frame, Array.from(m.features)])) };
  }
  return candidateRows.rows;
}

function ensureDrawables(parents) {
  if (rigParents !== parents) {
    disposeDrawables();
    rigParents = parents;
    for (const name of Object.keys(rigs)) {
      rigs[name] = new Rig(viewer, parents, COLOURS[name], { opacity: name === 'then' ? 0.55 : 0.42 });
    }
    for (const name of Object.keys(arrows)) arrows[name] = new FeatureArrows(viewer, COLOURS[name]);
  }
}

function disposeDrawables() {
  for (const name of Object.keys(rigs)) { if (rigs[name]) rigs[name].dispose(); rigs[name] = null; }
  for (const name of Object.keys(arrows)) { if (arrows[name]) arrows[name].dispose(); arrows[name] = null; }
  rigParents = null;
}

// A database frame's world pose moved rigidly: its bone 0 onto `base` with
// rotation `rotation` (the character's root rotation).
function placed(pose, rotation, base) {
  const g = pose.global_positions;
  const p0 = new THREE.Vector3(g[0], g[1], g[2]);
  const turn = rotation.clone().multiply(quat(pose.global_rotations).invert());
  const out = new Float32Array(g.length);
  const p = new THREE.Vector3();
  for (let b = 0; b < g.length / 3; b++) {
    p.set(g[3 * b], g[3 * b + 1], g[3 * b + 2]).sub(p0).applyQuaternion(turn).add(base);
    out.set([p.x, p.y, p.z], 3 * b);
  }
  return out;
}

// Draws the paused history at a tick: `tick` the scrubbed one, `search` the
// tick whose search decided its frame (both HistoryTicks with their poses,
// search with its query), `selected` the table's selected frame (or null).
// state.debug.ghosts says what was drawn once it is.
export async function drawGhosts({ database, tick, search, selected, k, frame = false }) {
  const mine = ++generation;
  const skeleton = state.skeletons[database];
  if (!skeleton || !tick.rotations.length || !search.searched || !search.rotations.length) return hideGhosts();
  const [thenPose, chosenPose, selectedPose, rows] = await Promise.all([
    framePose(database, tick.frame), framePose(database, search.chosen),
    selected === null ? null : framePose(database, selected), candidateFeatures(database, search, k)]);
  if (mine !== generation || !state.debug.paused) return; // scrubbed on, or live again, meanwhile
  ensureDrawables(skeleton.parents);
  // The character then: the history's root and local rotations, the frame's local positions.
  const locals = Float32Array.from(thenPose.local_positions);
  locals.set([tick.root_position.x, tick.root_position.y, tick.root_position.z], 0);
  rigs.then.update(forwardKinematics(skeleton.parents, locals, tick.rotations).positions);
  rigs.then.setVisible(true);
  // Where the search ran: the root then, its rotation; the ghosts beside it.
  const rootQ = quat(search.rotations);
  const root = vec(search.root_position);
  const side = (m) => new THREE.Vector3(m, 0, 0).applyQuaternion(rootQ).add(root);
  const anchor = (p) => ({ position: p.toArray(), rotation: [rootQ.w, rootQ.x, rootQ.y, rootQ.z] });
  arrows.query.update(skeleton.describe.features, search.query, anchor(root));
  const ghost = (name, frame, pose, at) => {
    const row = rows.get(frame);
    rigs[name].setVisible(!!pose);
    arrows[name].setVisible(!!(pose && row));
    if (!pose) return null;
    rigs[name].update(placed(pose, rootQ, at));
    if (row) arrows[name].update(skeleton.describe.features, row, anchor(at));
    return { frame, root: at.toArray(), features: !!row };
  };
  state.debug.ghosts = {
    tick: Number(tick.tick.toString()), searchTick: Number(search.tick.toString()), side: GHOST_SIDE_M,
    root: root.toArray(), rotation: [rootQ.w, rootQ.x, rootQ.y, rootQ.z],
    chosen: ghost('chosen', search.chosen, chosenPose, side(GHOST_SIDE_M)),
    selected: ghost('selected', selected, selectedPose, side(-GHOST_SIDE_M)),
    draws: (state.debug.ghosts ? state.debug.ghosts.draws : 0) + 1,
  };
  if (frame) frameGhosts(root, rootQ);
}

// The camera on the ghosts, from in front of the character and a little to
// its side and above, so the three stand side by side in the view (the
// camera stops following the live character, which walks on).
function frameGhosts(root, rootQ) {
  $('follow').checked = false;
  const target = root.clone().setY(0.9);
  const from = new THREE.Vector3(0.7, 1.3, 3.9).applyQuaternion(rootQ);
  viewer.controls.target.copy(target);
  viewer.camera.position.copy(target).add(from);
}

export function hideGhosts() {
  generation++;
  for (const r of Object.values(rigs)) if (r) r.setVisible(false);
  for (const a of Object.values(arrows)) if (a) a.setVisible(false);
  state.debug.ghosts = null;
}

// The character is gone (or the connection): so are its ghosts and what was
// cached for it (a database may be reloaded meanwhile).
export function clearGhosts() {
  generation++;
  disposeDrawables();
  poses.clear();
  candidateRows = { key: null, rows: new Map() };
  state.debug.ghosts = null;
}

// What is drawn, read back from the view (the tests' view of it): the
// joints of each skeleton and the arrows' bases and tips, world space.
export function ghostsDrawn() {
  if (!state.debug.ghosts) return null;
  const joints = (r) => (r && r.group.visible ? r.drawnJoints() : null);
  const drawn = (a) => (a && a.group.visible ? a.drawn() : null);
  return { then: joints(rigs.then), chosen: joints(rigs.chosen), selected: joints(rigs.selected),
    queryArrows: drawn(arrows.query), chosenArrows: drawn(arrows.chosen), selectedArrows: drawn(arrows.selected) };
}
