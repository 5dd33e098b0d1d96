// character.js: the page's own character: Create and Destroy
// (create_characters on the selected database, destroy_characters), its
// stream (subscribe: the skeleton, trail and footprints in the view, the
// Contacts panel) and its state polled every STATE_POLL_MS (character_state
// with offsets and query: the Character panel, the predicted and desired
// trajectories in the view), handed on to the Matching panel (matching.js)
// every MATCH_EVERY polls and to the offsets chart (offsets.js) each time.
// state.character holds what it knows.
//
// What it does not: read the keyboard or gamepad (steering.js sends the
// inputs), or survive the connection (session.js's hooks reset it when the
// connection goes: the server destroys a connection's characters with it).
import { $, fmt, poseGlobals, quietly, state, toast, viewer, yaw } from './shared.js';
import { call, conn, encodingName, proto } from './session.js';
import { Footprints, Rig, Trail, TrajectoryView } from './viewer.js';
import { pausePlayback, showClip } from './timeline.js';
import { clearMatch, explainMatchOrSay } from './matching.js';
import { clearOffsets, recordOffsets } from './offsets.js';
import { clearDebugger, noteStreamed } from './debugger.js';

const STATE_POLL_MS = 100; // character_state
const MATCH_EVERY = 3; // a search with explain every third state poll

const footprints = new Footprints(viewer);
const trajectory = new TrajectoryView(viewer);
trajectory.setVisible(false);
let characterRig = null;
let characterTrail = null;

export async function createCharacter() {
  if (!state.connected) return;
  await destroyCharacter();
  pausePlayback();
  showClip(false);
  $('follow').checked = true; // framing a crowd had turned it off: the new character is what to look at
  const physical = $('physical').checked;
  const created = await call('create_characters', { database: state.database || 'default', placements: [{ x: 0, z: 0 }],
    ...(physical ? { mode: 'MODE_PHYSICAL' } : {}) });
  const id = created.characters[0];
  const skeleton = state.skeletons[state.database || 'default'];
  Object.assign(state.character, { id: id.toString(), frames: 0, root: null, joints: null, touchdowns: [], states: 0,
    feet: [], locks: [], database: state.database || 'default', physical, physics: null, physicsSeen: [], physicsTick: -1,
    pushes: 0, dropped: 0 });
  characterRig = new Rig(viewer, skeleton.parents, 0x4fc3f7, { contactBones: skeleton.contactBones, names: skeleton.names });
  characterTrail = new Trail(viewer, 0x4fc3f7, 1200, 0.8);
  trajectory.setVisible(true);
  footprints.clear();
  clearOffsets();
  const sub = await call('subscribe', { characters: [id], encoding: state.encoding });
  state.character.subscription = sub.subscription.toString();
  conn.onStream(sub.subscription, (m) => characterFrame(m, skeleton));
  contactsPanel(skeleton);
  state.input.sent = 0;
  pollState(id, skeleton);
}

function characterFrame(message, skeleton) {
  state.streamFrames++;
  for (const pose of message.poses) {
    const g = poseGlobals(pose, message.encoding, skeleton);
    const c = state.character;
    const before = c.contacts;
    Object.assign(c, { frames: c.frames + 1, tick: Number(message.tick.toString()), root: [g[0], g[1], g[2]],
      joints: Array.from(g), contacts: pose.contacts, frame: pose.frame });
    noteStreamed(c.tick, pose.frame);
    notePhysics(pose.physics, c.tick);
    characterRig.update(g, pose.contacts);
    characterTrail.push(g[0], 0.015, g[2]);
    skeleton.contactBones.forEach((name, i) => {
      if ((pose.contacts >> i) & 1 && !((before >> i) & 1)) {
        const b = skeleton.names.indexOf(name);
        footprints.add(g[3 * b], g[3 * b + 2], i ? 0xffb74d : 0x81c784);
        c.touchdowns[i] = (c.touchdowns[i] || 0) + 1;
      }
    });
    updateContacts(skeleton, pose.contacts);
  }
  state.character.dropped += Number(message.dropped_frames || 0);
  if (message.gone.some((g) => g.toString() === state.character.id)) {
    toast(`character ${state.character.id} is gone`);
    resetCharacter();
  }
  $('stream-info').textContent = `${encodingName(message.encoding)}: tick ${message.tick}, ` +
    `dropped ${message.dropped_frames}, dt ${fmt(message.dt, 4)} s`;
}

// A physical character's state (PhysicsState) at a tick, from its stream or
// its character_state, whichever tells of a later tick: the changes in
// state.character.physicsSeen. Both: a page too slow for its stream has
// frames dropped by the server (latest wins), and a push's stagger lasts
// under a second.
function notePhysics(code, tick) {
  const c = state.character;
  if (!c.physical || !(tick > c.physicsTick)) return;
  c.physicsTick = tick;
  const name = proto.root.lookupEnum('animserver.PhysicsState').valuesById[code] || String(code);
  if (name !== c.physics) c.physicsSeen.push(name);
  c.physics = name;
  $('physics-state').textContent = name.replace('PHYSICS_', '').toLowerCase();
}

async function pollState(id, skeleton) {
  let n = 0;
  while (conn && state.character.id === id.toString()) {
    const started = performance.now();
    try {
      const s = await conn.call('character_state', { character: id, offsets: true, query: true });
      state.character.state = s;
      state.character.states++;
      notePhysics(s.physics, Number(s.tick.toString()));
      showState(s, skeleton);
      if (n++ % MATCH_EVERY === 0) await explainMatchOrSay(s, skeleton);
    } catch (e) {
      if (state.character.id === id.toString()) toast(e.message);
      return;
    }
    await new Promise((r) => setTimeout(r, Math.max(0, STATE_POLL_MS - (performance.now() - started))));
  }
}

// Seconds ahead of the trajectory samples (the schema's trajectory-position offsets).
function trajectoryTimes(skeleton) {
  const term = skeleton.describe.features.find((f) => proto.FeatureKind.valuesById[f.kind] === 'FEATURE_TRAJECTORY_POSITION');
  return term ? term.frame_offsets.map((o) => o / skeleton.frameRate) : [];
}

function showState(s, skeleton) {
  const times = trajectoryTimes(skeleton);
  trajectory.update(s, yaw, times);
  const v = s.velocity, dv = s.desired_velocity;
  const c = state.character;
  c.feet = s.feet.map((f) => ({ bone: f.bone, locked: f.locked, released: f.released,
    position: [f.position.x, f.position.y, f.position.z] }));
  c.desired = [[s.position.x, s.position.z], ...times.map((t) => [s.position.x + dv.x * t, s.position.z + dv.z * t])];
  // A locked foot's latest streamed toe against where it is held (the
  // lock's slip on the ground; the last 200 samples).
  s.feet.forEach((f) => {
    const b = skeleton.names.indexOf(f.bone);
    if (f.locked && c.joints && b >= 0) {
      c.locks.push(Math.hypot(c.joints[3 * b] - f.position.x, c.joints[3 * b + 2] - f.position.z));
      if (c.locks.length > 200) c.locks.shift();
    }
  });
  const rows = [
    ['tick', s.tick], ['frame', `${s.frame}  (${s.range_name})`], ['since transition', `${fmt(s.time_since_transition, 2)} s`],
    ['searches / transitions', `${s.searches} / ${s.transitions}`],
    ['position', `${fmt(s.position.x, 2)}, ${fmt(s.position.z, 2)}`],
    ['speed / desired', `${fmt(Math.hypot(v.x, v.z), 2)} / ${fmt(Math.hypot(dv.x, dv.z), 2)} m/s`],
    ['facing / desired', `${fmt(yaw(s.rotation) * 180 / Math.PI, 0)}° / ${fmt(yaw(s.desired_rotation) * 180 / Math.PI, 0)}°`],
    ['predicted', s.trajectory.map((p) => `(${fmt(p.x, 1)},${fmt(p.z, 1)})`).join(' ')],
    ['desired', c.desired.slice(1).map((p) => `(${fmt(p[0], 1)},${fmt(p[1], 1)})`).join(' ')],
    ['halflife', `${fmt(s.inertialize_halflife, 2)} s`],
    // Animation warping (docs/characters.md): the clip's play rate, its stride scale, the upper
    // body's turn back to the asked facing, a stance held at rest.
    ['warp', `rate ${fmt(s.play_rate ?? 1, 2)}, stride ${fmt(s.stride_scale || 1, 2)}, ` +
      `turn ${fmt((s.warp_angle ?? 0) * 180 / Math.PI, 0)}°, steer ${fmt(s.root_steering ?? 0, 2)} m/s` +
      (s.warp_held ? ', held' : '')],
  ];
  // One line a row, the whole value in its title (previewer.css): a row wrapping as its digits changed
  // moved the Debugger's buttons under a click.
  $('char-state').innerHTML = rows.map(([k, val]) => `<dt>${k}</dt><dd title="${val}">${val}</dd>`).join('');
  recordOffsets(s);
}

function contactsPanel(skeleton) {
  $('contacts').innerHTML = skeleton.contactBones.map((b, i) =>
    `<div class="foot" id="foot-${i}">${b}<br><b>-</b><br><small></small></div>`).join('');
}

function updateContacts(skeleton, bits) {
  skeleton.contactBones.forEach((b, i) => {
    const el = $(`foot-${i}`);
    if (!el) return;
    const down = ((bits >> i) & 1) === 1;
    const foot = state.character.feet.find((f) => f.bone === b);
    const lock = foot ? (foot.locked ? 'locked' : foot.released ? 'stepping' : 'free') : 'no lock';
    el.classList.toggle('down', down);
    el.classList.toggle('locked', !!(foot && foot.locked));
    el.querySelector('b').textContent = `${down ? 'planted' : 'swing'} · ${lock}`;
    el.querySelector('small').textContent = `${state.character.touchdowns[i] || 0} steps`;
  });
}

export async function destroyCharacter() {
  const c = state.character;
  if (!c.id) return;
  const id = c.id;
  c.id = null;
  if (conn && c.subscription) { conn.offStream(c.subscription); await conn.call('unsubscribe', { subscription: c.subscription }).catch(() => {}); }
  if (conn) await conn.call('destroy_characters', { characters: [id] }).catch(() => {});
  resetCharacter();
}

// The character is gone (destroyed, its connection closed or lost): so is
// what the page drew and showed of it.
export function resetCharacter() {
  const c = state.character;
  Object.assign(c, { id: null, subscription: null, root: null, joints: null, state: null, physical: false, physics: null });
  $('physics-state').textContent = '';
  if (characterRig) characterRig.dispose();
  if (characterTrail) characterTrail.dispose();
  characterRig = characterTrail = null;
  trajectory.setVisible(false);
  // Its panels go with it: nothing shown belongs to a character that is not there.
  clearMatch();
  clearDebugger();
  footprints.clear();
  clearOffsets();
  for (const id of ['char-state', 'contacts']) $(id).innerHTML = '';
}

$('create').onclick = () => quietly(createCharacter());
$('destroy').onclick = () => quietly(destroyCharacter());

// The camera on the character when "follow" is checked, or on the clip while it plays.
export function followCamera() {
  if (!$('follow').checked) return;
  const p = state.playback;
  const target = state.character.root || (p.playing ? p.root : null);
  if (target) viewer.follow(target[0], 0.9, target[2]);
}
