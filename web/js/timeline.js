// timeline.js: a range of the described database played in the view: its
// frames fetched with pose requests (max_pose_frames at a time), the clip's
// skeleton and path drawn, and the timeline under the view (range, play /
// pause, step, speed, scrub). state.playback says where it is.
//
// It plays frames the database already has, or a recording (replay.js hands
// it one through playClip: a clip carries its own skeleton and rate); it
// drives no character (character.js) and chooses no database
// (databases.js). main.js advances it each rendered frame (advancePlayback).
import { $, state, viewer } from './shared.js';
import { call } from './session.js';
import { Rig, Trail } from './viewer.js';

let clipRig = null;
let clipTrail = null;
let clip = null; // {globals: Float32Array[], contacts: number[], frameRate, label}
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
  playClip({ globals, contacts, parents: d.parents, contactBones: d.contactBones, names: d.names,
    frameRate: d.frameRate, start: r.start, label: 'frame', range: index, recording: null }, play);
}

// Plays a clip on the timeline: world joint positions a frame (globals),
// contact bits, the skeleton it is drawn with (parents, names, contact
// bones), its rate (Hz), its first frame number (start) and what the label
// calls a frame. A range of the database, or a recording (replay.js).
export function playClip(c, play) {
  clip = c;
  const stop = c.start + c.globals.length;
  Object.assign(state.playback, { range: c.range, recording: c.recording, start: c.start, stop, frame: c.start,
    playing: play });
  if (clipRig) clipRig.dispose();
  clipRig = null;
  clipRig = new Rig(viewer, c.parents, c.recording ? 0xce93d8 : 0xb0bec5, { contactBones: c.contactBones || [],
    names: c.names || [] });
  if (!clipTrail) clipTrail = new Trail(viewer, 0x90a4ae, 100000, 0.5);
  clipTrail.set(c.globals.map((g) => [g[0], 0.01, g[2]]));
  showClip(true);
  $('scrub').min = c.start;
  $('scrub').max = stop - 1;
  $('play').innerHTML = play ? '&#10074;&#10074;' : '&#9654;';
  playhead = c.start;
  showFrame(c.start);
  if (!state.character.id) viewer.frame(c.globals[0][0], 0.9, c.globals[0][2], 5);
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
  $('frame-label').textContent = `${clip.label} ${f}  ${((f - p.start) / clip.frameRate).toFixed(2)} s`;
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
    playhead += dt * clip.frameRate * p.speed;
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
