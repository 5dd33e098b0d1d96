// timeline.js: a range of the described database played in the view: its
// frames fetched with pose requests (max_pose_frames at a time), the clip's
// skeleton and path drawn, and the timeline under the view (range, play /
// pause, step, speed, scrub). state.playback says where it is.
//
// It plays frames the database already has; it drives no character
// (character.js) and chooses no database (databases.js). main.js advances it
// each rendered frame (advancePlayback).
import { $, state, viewer } from './shared.js';
import { call } from './session.js';
import { Rig, Trail } from './viewer.js';

let clipRig = null;
let clipTrail = null;
let clip = null; // {globals: Float32Array[], contacts: number[]}
let playhead = 0;

// Fetches range `index` of the selected database and shows its first frame,
// playing when `play`.
export async function selectRange(index, play) {
  const d = state.skeletons[state.database];
  const r = d.describe.ranges[index];
  const limit = state.server.limits.max_pose_frames || 1000;
  const globals = [];
  const contacts = [];
  for (let f = r.start; f < r.stop; f += limit) {
    const count = Math.min(limit, r.stop - f);
    const answer = await call('pose', { database: state.database, frame: f, count, options: { global: true } });
    for (const p of answer.poses) {
      globals.push(Float32Array.from(p.global_positions));
      contacts.push(p.contacts.reduce((bits, c, i) => bits | (c ? 1 << i : 0), 0));
    }
  }
  clip = { globals, contacts };
  Object.assign(state.playback, { range: index, start: r.start, stop: r.stop, frame: r.start, playing: play });
  if (clipRig) clipRig.dispose();
  clipRig = null;
  clipRig = new Rig(viewer, d.parents, 0xb0bec5, { contactBones: d.contactBones, names: d.names });
  if (!clipTrail) clipTrail = new Trail(viewer, 0x90a4ae, 100000, 0.5);
  clipTrail.set(globals.map((g) => [g[0], 0.01, g[2]]));
  showClip(true);
  $('scrub').min = r.start;
  $('scrub').max = r.stop - 1;
  $('play').innerHTML = play ? '&#10074;&#10074;' : '&#9654;';
  showFrame(r.start);
  if (!state.character.id) viewer.frame(globals[0][0], 0.9, globals[0][2], 5);
}

function showFrame(frame) {
  if (!clip) return;
  const p = state.playback;
  const f = Math.min(Math.max(Math.round(frame), p.start), p.stop - 1);
  p.frame = f;
  const g = clip.globals[f - p.start];
  clipRig.update(g, clip.contacts[f - p.start]);
  p.root = [g[0], g[1], g[2]];
  p.framesShown++;
  $('scrub').value = f;
  const rate = state.skeletons[state.database].frameRate;
  $('frame-label').textContent = `frame ${f}  ${((f - p.start) / rate).toFixed(2)} s`;
}

// The clip's skeleton and path: hidden while a character is driven (they
// share the ground), back with play or another range.
export function showClip(visible) {
  state.playback.visible = visible;
  if (clipRig) clipRig.setVisible(visible);
  if (clipTrail) clipTrail.line.visible = visible;
}

export function pausePlayback() {
  state.playback.playing = false;
  $('play').innerHTML = '&#9654;';
}

// One rendered frame, dt seconds after the last: the clip moves on while playing.
export function advancePlayback(dt) {
  const p = state.playback;
  if (p.playing && clip) {
    if (Math.abs(playhead - p.frame) > 1) playhead = p.frame;
    playhead += dt * state.skeletons[state.database].frameRate * p.speed;
    if (playhead >= p.stop) playhead = p.start;
    showFrame(Math.floor(playhead));
  }
}

$('play').onclick = () => {
  state.playback.playing = !state.playback.playing;
  if (state.playback.playing) showClip(true);
  $('play').innerHTML = state.playback.playing ? '&#10074;&#10074;' : '&#9654;';
  playhead = state.playback.frame;
};
$('step-back').onclick = () => { state.playback.playing = false; showFrame(state.playback.frame - 1); };
$('step-fwd').onclick = () => { state.playback.playing = false; showFrame(state.playback.frame + 1); };
$('speed').onchange = () => { state.playback.speed = Number($('speed').value); };
$('scrub').oninput = () => showFrame(Number($('scrub').value));
$('range').onchange = () => selectRange(Number($('range').value), state.playback.playing);
