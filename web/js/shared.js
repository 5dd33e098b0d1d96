// shared.js: what every panel of the previewer shares: the page's state
// (window.previewer.state: the tests read it instead of pixels), the 3-D view
// they all draw in, and the small helpers more than one panel uses (the
// toast, number formatting, a streamed pose to world joints). It holds no
// connection (session.js) and no panel; it sends no request.
import { decodeQuantized } from './quantized.js';
import { forwardKinematics, heading } from './kinematics.js';
import { Viewer } from './viewer.js';

export const $ = (id) => document.getElementById(id);

// One object, its shape the tests' contract: fields are added here, never
// replaced by another object (panels hold on to state.character, state.crowd).
export const state = {
  connected: false, server: null, databases: [], skeletons: {}, database: null, describe: null,
  encoding: 'ENCODING_FLOAT', streamFrames: 0, errors: [], stalls: 0,
  playback: { range: -1, recording: null, start: 0, stop: 0, frame: 0, playing: false, speed: 1, framesShown: 0,
    root: null },
  character: { id: null, subscription: null, frames: 0, tick: 0, root: null, joints: null, contacts: 0,
    touchdowns: [], state: null, states: 0, feet: [], locks: [] },
  input: { stick: [0, 0], strafe: false, azimuth: 0, sent: 0, source: 'keyboard' },
  crowd: { subscription: null, characters: {}, missing: [] },
  match: null, matchError: null,
  debug: { on: false, paused: false, history: null, index: -1, shown: null, rows: [], groups: [], applied: null,
    sort: { column: 'cost', ascending: true }, selected: null, picked: false, ghosts: null, streamed: {},
    streamedTicks: [] },
  stats: { samples: [], polls: 0, drawn: {}, error: null },
  replay: { name: null, format: null, frames: 0, bones: 0, names: [], parents: [], frameTime: 0, opened: 0 },
  reconnect: { wanted: false, attempts: 0, restored: 0, lost: null, refused: null },
};
// window.previewer: the state, the view and the page's actions (main.js adds them).
export const app = { state };
window.previewer = app;

export const viewer = new Viewer($('view'));

// A message for a moment at the bottom of the view; `error` false for news
// that is not a failure (state.errors lists the failures).
export function toast(text, error = true) {
  if (error) state.errors.push(text);
  const el = $('toast');
  el.textContent = text;
  el.style.display = 'block';
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { el.style.display = 'none'; }, 5000);
}

// A failed request has already said why (toast): nothing is left unhandled.
export const quietly = (promise) => promise.catch(() => {});

export const hex = (v) => (v && v.toString ? BigInt.asUintN(64, BigInt(v.toString())).toString(16).padStart(16, '0') : '');
export const fmt = (v, d = 3) => (typeof v === 'number' ? v.toFixed(d) : String(v));
export const yaw = (q) => (q ? heading([q.w, q.x, q.y, q.z]) : 0);

// Local pose of a CharacterPose (either encoding) -> world positions of every joint.
export function poseGlobals(pose, encoding, skeleton) {
  let positions, rotations;
  if (encoding === 'ENCODING_QUANTIZED' || encoding === 1) {
    ({ positions, rotations } = decodeQuantized(pose.quantized));
  } else {
    positions = pose.positions;
    rotations = pose.rotations;
  }
  return forwardKinematics(skeleton.parents, positions, rotations).positions;
}
