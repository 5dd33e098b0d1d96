// main.js: the previewer's panels and loops. Connection and messages:
// protocol.js (protobufjs over the websockify bridge); drawing: viewer.js;
// quantized poses: quantized.js; forward kinematics: kinematics.js.
//
// Everything the page shows comes from a request: list_databases and
// describe_database (databases), pose (the timeline), create_characters,
// set_inputs, character_state, subscribe / update_subscription / unsubscribe
// (characters and crowds), character_state with the query the character
// would search with now and its foot locks, search of that query with
// explain and include_features (matching), character_state of each crowd
// character for the database it runs on (its skeleton). The server pushes
// no event when a database is loaded or unloaded: the page lists them again
// every DATABASES_POLL_MS while it is visible. window.previewer exposes the
// page's state (tests read it instead of pixels).
import { AnimError, Connection, loadProtocol } from './protocol.js';
import { decodeQuantized, quantizedBones } from './quantized.js';
import { forwardKinematics, heading } from './kinematics.js';
import { Footprints, PALETTE, Rig, Trail, TrajectoryView, Viewer } from './viewer.js';

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const STATE_POLL_MS = 100; // character_state
const MATCH_EVERY = 3; // a search with explain every third state poll
const INPUT_RESEND_MS = 250; // set_inputs at least this often while a key is held
const CHART_SECONDS = 6;
// list_databases this often while the page is visible and connected: another
// client's load, reload or unload shows in the table (the server pushes none).
const DATABASES_POLL_MS = 2000;
// character_state requests in flight at once while a crowd's databases are learned.
const CROWD_STATE_CALLS = 8;
// A connection lost without the user asking (the server restarted, the
// bridge went away) is tried again after these delays, the last repeated.
const RECONNECT_MS = [500, 1000, 2000, 4000];
// The controller's search settings (ControllerParams defaults, which the
// page's characters keep), so the page's search of a character's query finds
// what the character's own search would.
const CONTROLLER_SEARCH = { ignore_surrounding: 20, ignore_range_end: 20, transition_cost: 0.01 };

const state = {
  connected: false, server: null, databases: [], skeletons: {}, database: null, describe: null,
  encoding: 'ENCODING_FLOAT', streamFrames: 0, errors: [], stalls: 0,
  playback: { range: -1, start: 0, stop: 0, frame: 0, playing: false, speed: 1, framesShown: 0, root: null },
  character: { id: null, subscription: null, frames: 0, tick: 0, root: null, joints: null, contacts: 0,
    touchdowns: [], state: null, states: 0, feet: [], locks: [] },
  input: { stick: [0, 0], strafe: false, azimuth: 0, sent: 0, source: 'keyboard' },
  crowd: { subscription: null, characters: {}, missing: [] },
  match: null, matchError: null,
  reconnect: { wanted: false, attempts: 0, restored: 0, lost: null, refused: null },
};
const app = { state };
window.previewer = app;

let proto = null;
let conn = null;
const viewer = new Viewer($('view'));
const footprints = new Footprints(viewer);
const trajectory = new TrajectoryView(viewer);
trajectory.setVisible(false);
let clipRig = null;
let clipTrail = null;
let clip = null; // {globals: Float32Array[], contacts: number[]}
let characterRig = null;
let characterTrail = null;
const chart = [];

// ---- helpers --------------------------------------------------------------------
// A message for a moment at the bottom of the view; `error` false for news
// that is not a failure (state.errors lists the failures).
function toast(text, error = true) {
  if (error) state.errors.push(text);
  const el = $('toast');
  el.textContent = text;
  el.style.display = 'block';
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { el.style.display = 'none'; }, 5000);
}

async function call(kind, body) {
  try {
    return await conn.call(kind, body);
  } catch (e) {
    toast(e.message);
    throw e;
  }
}

const hex = (v) => (v && v.toString ? BigInt.asUintN(64, BigInt(v.toString())).toString(16).padStart(16, '0') : '');
const fmt = (v, d = 3) => (typeof v === 'number' ? v.toFixed(d) : String(v));
const yaw = (q) => (q ? heading([q.w, q.x, q.y, q.z]) : 0);

// Local pose of a CharacterPose (either encoding) -> world positions of every joint.
function poseGlobals(pose, encoding, skeleton) {
  let positions, rotations;
  if (encoding === 'ENCODING_QUANTIZED' || encoding === 1) {
    ({ positions, rotations } = decodeQuantized(pose.quantized));
  } else {
    positions = pose.positions;
    rotations = pose.rotations;
  }
  return forwardKinematics(skeleton.parents, positions, rotations).positions;
}

const encodingName = (e) => (typeof e === 'string' ? e : proto.PoseEncoding.valuesById[e]);

// ---- connection -----------------------------------------------------------------
// Connects (the Connect button, the page's start, a reconnection): hello,
// then the databases. Until Disconnect, a lost connection is tried again
// (RECONNECT_MS); characters and subscriptions do not survive it (the server
// destroys a connection's characters with it), so the page drops them.
async function connect(retrying = false) {
  const r = state.reconnect;
  clearTimeout(r.timer);
  closeConnection();
  r.wanted = true;
  let opened;
  try {
    proto = proto || await loadProtocol('animserver.proto');
    opened = new Connection(proto, $('url').value);
    await opened.open();
  } catch (e) {
    if (!retrying) toast(e.message);
    scheduleReconnect(e.message);
    return;
  }
  conn = opened;
  conn.onclose = (why) => { if (conn === opened) connectionLost(why); };
  // Slow, not failed: the answer still comes (protocol.js); said, and counted in state.stalls.
  conn.onstall = (kind, ms) => {
    state.stalls++;
    toast(`${kind}: no answer yet after ${ms / 1000} s (a busy server, bridge or browser); still waiting`, false);
  };
  let hello;
  try {
    hello = await opened.call('hello', { protocol_version: 1, client_name: 'previewer', auth_token: $('token').value });
  } catch (e) {
    // A refused token or protocol would be refused again; a connection lost
    // meanwhile is tried again (connectionLost), without a word each time.
    if (e instanceof AnimError) {
      toast(e.message);
      r.wanted = false;
      r.refused = e.serverMessage; // the status keeps it (the bridge's close reason says only "Target closed")
    }
    return;
  }
  if (r.attempts) r.restored++;
  r.attempts = 0;
  r.refused = null;
  state.server = hello;
  state.connected = true;
  $('status').textContent = `connected: animserver ${hello.server_version}`;
  $('status').className = 'status on';
  const l = hello.limits;
  $('server-info').textContent = `protocol ${hello.protocol_version}, connection ${hello.connection_id}` +
    `${hello.admin ? ', admin' : ''}\ntick ${l.tick_rate} Hz, max pose frames ${l.max_pose_frames}\n` +
    `capabilities: ${hello.capabilities.join(' ')}`;
  await listDatabases();
}

function disconnect() {
  state.reconnect.wanted = false;
  clearTimeout(state.reconnect.timer);
  closeConnection();
  $('status').textContent = 'disconnected';
  $('status').className = 'status off';
}

function closeConnection() {
  clearCrowd();
  resetCharacter();
  if (conn) { conn.onclose = null; conn.close(); }
  conn = null;
  state.connected = false;
}

// The connection went away under the page: its character and subscriptions
// went with it on the server, so they go here too (no input is sent to a
// character that no longer exists), and the page tries again.
function connectionLost(why) {
  conn = null;
  state.connected = false;
  state.reconnect.lost = why;
  resetCharacter();
  crowdLost();
  const refused = state.reconnect.refused;
  $('status').textContent = refused ? `refused: ${refused}` : `disconnected: ${why}`;
  $('status').className = 'status off';
  scheduleReconnect(why);
}

function scheduleReconnect(why) {
  const r = state.reconnect;
  if (!r.wanted) return;
  const delay = RECONNECT_MS[Math.min(r.attempts, RECONNECT_MS.length - 1)];
  r.attempts++;
  $('status').textContent = `disconnected (${why}): reconnecting in ${(delay / 1000).toFixed(1)} s`;
  $('status').className = 'status off';
  r.timer = setTimeout(() => connect(true), delay);
}

// Lists the databases into the table and their skeletons (described
// again when their content changed, dropped when gone). On connecting the
// selected database is described (kept when it is still there, else
// "default" or the first); a refresh (another client loaded, reloaded or
// unloaded one) describes it again only when it changed or went away, and
// fails without a word when the connection went meanwhile.
async function listDatabases(refresh = false) {
  const list = refresh ? await conn.call('list_databases', {}) : await call('list_databases', {});
  const before = new Map(state.databases.map((d) => [d.name, d.version]));
  state.databases = list.databases.map((d) => ({
    name: d.name, version: hex(d.version), frames: d.frames, bones: d.bones, frame_rate: d.frame_rate,
    feature_dims: d.feature_dims, ranges: d.ranges, memory_bytes: Number(d.memory_bytes.toString()),
  }));
  const same = (d) => before.get(d.name) === d.version;
  if (refresh && state.databases.length === before.size && state.databases.every(same)) return;
  const body = $('databases').querySelector('tbody');
  body.innerHTML = '';
  for (const d of state.databases) {
    const row = body.insertRow();
    row.innerHTML = `<td>${d.name}</td><td>${d.frames}</td><td>${d.bones}</td><td>${d.frame_rate}</td>` +
      `<td>${d.feature_dims}</td><td>${d.ranges}</td><td>${(d.memory_bytes / 1048576).toFixed(1)}</td>`;
    row.title = `version ${d.version}`;
    row.dataset.name = d.name;
    row.onclick = () => describe(d.name);
  }
  for (const name of Object.keys(state.skeletons)) {
    if (!state.databases.some((d) => d.name === name)) delete state.skeletons[name];
  }
  for (const d of state.databases) {
    if (!same(d) || !state.skeletons[d.name]) await loadSkeleton(d.name, refresh).catch(() => {});
  }
  listed = conn;
  const selected = state.databases.find((d) => d.name === state.database);
  if (refresh && selected && same(selected) && state.skeletons[selected.name]) {
    markSelected();
  } else if (state.databases.length) {
    const name = selected && state.skeletons[selected.name] ? selected.name
      : state.databases.some((d) => d.name === 'default') ? 'default' : state.databases[0].name;
    await describe(name);
  } else {
    state.database = null;
    state.describe = null;
    $('describe').classList.add('hidden');
  }
}

// list_databases again (DATABASES_POLL_MS), one at a time, while the page
// is visible and connected (once the connection's first list is in), and
// once the page is shown again.
let refreshing = null;
let listed = null; // the connection whose databases were listed
function refreshDatabases() {
  if (refreshing || !conn || !state.connected || listed !== conn || document.visibilityState !== 'visible') return;
  refreshing = listDatabases(true)
    .catch((e) => { if (state.connected) toast(e.message); })
    .finally(() => { refreshing = null; });
}
setInterval(refreshDatabases, DATABASES_POLL_MS);
document.addEventListener('visibilitychange', refreshDatabases);

// quiet: a database unloaded meanwhile is no failure of the page's (a refresh, a crowd's).
async function loadSkeleton(name, quiet = false) {
  const d = quiet ? await conn.call('describe_database', { name }) : await call('describe_database', { name });
  state.skeletons[name] = {
    describe: d, parents: d.bones.map((b) => b.parent), names: d.bones.map((b) => b.name),
    contactBones: d.contact_bones, frameRate: d.summary.frame_rate,
  };
  return d;
}

// The skeleton of database name, described when the page has none (one
// request per name however many ask); null when it cannot be described.
const skeletonsAsked = new Map();
async function skeletonOf(name) {
  if (state.skeletons[name]) return state.skeletons[name];
  if (!skeletonsAsked.has(name)) {
    skeletonsAsked.set(name, loadSkeleton(name, true).catch(() => null).finally(() => skeletonsAsked.delete(name)));
  }
  await skeletonsAsked.get(name);
  return state.skeletons[name] || null;
}

function markSelected() {
  for (const tr of $('databases').querySelectorAll('tbody tr')) tr.classList.toggle('on', tr.dataset.name === state.database);
}

// ---- databases ------------------------------------------------------------------
async function describe(name) {
  const d = await loadSkeleton(name);
  state.database = name;
  state.describe = {
    name, bones: d.bones.map((b) => ({ name: b.name, parent: b.parent })),
    ranges: d.ranges.map((r) => ({ name: r.name, start: r.start, stop: r.stop, tags: r.tags })),
    features: d.features.map((f) => ({
      kind: proto.FeatureKind.valuesById[f.kind], bone: f.bone, weight: f.weight, first_column: f.first_column,
      dims: f.dims, frame_offsets: f.frame_offsets, halflife: f.halflife,
    })),
    contact_bones: d.contact_bones,
  };
  markSelected();
  $('describe').classList.remove('hidden');
  const s = d.summary;
  $('db-summary').textContent = `${s.name}  version ${hex(s.version)}\n${s.frames} frames at ${s.frame_rate} Hz` +
    ` (${(s.frames / s.frame_rate).toFixed(1)} s), ${s.bones} bones, ${s.feature_dims} feature dims`;
  const tree = $('skeleton');
  tree.innerHTML = '';
  const depth = (b) => (b < 0 ? -1 : 1 + depth(d.bones[b].parent));
  d.bones.forEach((b, i) => {
    const li = document.createElement('li');
    const contact = d.contact_bones.includes(b.name);
    li.textContent = `${String(i).padStart(2)} ${'  '.repeat(depth(i))}${b.name}${contact ? '  (contact)' : ''}`;
    if (contact) li.className = 'contact';
    tree.appendChild(li);
  });
  const ranges = $('ranges').querySelector('tbody');
  ranges.innerHTML = '';
  d.ranges.forEach((r, i) => {
    const row = ranges.insertRow();
    row.innerHTML = `<td>${i}</td><td>${r.name}</td><td>${r.start}-${r.stop - 1}</td>` +
      `<td>${r.tags.map((t) => `<span class="tag">${t}</span>`).join('')}</td>`;
    row.onclick = () => { $('range').value = String(i); selectRange(i, true); };
  });
  const features = $('features').querySelector('tbody');
  features.innerHTML = '';
  for (const f of d.features) {
    const kind = proto.FeatureKind.valuesById[f.kind].replace('FEATURE_', '').toLowerCase().replace('_', ' ');
    const row = features.insertRow();
    const norm = f.offset.map((o, i) => `(${fmt(o, 2)}/${fmt(f.scale[i], 2)})`).slice(0, 3).join(' ');
    row.innerHTML = `<td>${f.bone ? `${f.bone} ` : ''}${kind}${f.halflife ? ` h=${f.halflife}` : ''}</td>` +
      `<td>${fmt(f.weight, 2)}</td><td>${f.first_column}+${f.dims}</td>` +
      `<td>${f.frame_offsets.join(',')}</td><td title="offset/scale per column">${norm}${f.offset.length > 3 ? ' ...' : ''}</td>`;
  }
  // What a frame of one character costs on this skeleton (docs/protocol.md, Streams).
  const n = d.bones.length;
  $('encoding').options[0].textContent = `float (${28 * n} B/char)`;
  $('encoding').options[1].textContent = `quantized (${12 + 7 * n + 6 * (n - 1)} B/char)`;
  const select = $('range');
  select.innerHTML = d.ranges.map((r, i) => `<option value="${i}">${i}: ${r.name} (${r.stop - r.start})</option>`).join('');
  await selectRange(0, false);
}

for (const b of document.querySelectorAll('.tabs button')) {
  b.onclick = () => {
    for (const other of document.querySelectorAll('.tabs button')) other.classList.toggle('on', other === b);
    for (const t of document.querySelectorAll('.tab')) t.classList.toggle('hidden', t.id !== `tab-${b.dataset.tab}`);
  };
}

// ---- timeline (pose requests) ---------------------------------------------------
async function selectRange(index, play) {
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
function showClip(visible) {
  state.playback.visible = visible;
  if (clipRig) clipRig.setVisible(visible);
  if (clipTrail) clipTrail.line.visible = visible;
}

let playhead = 0;
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

let lastTime = 0;
viewer.hooks.push((t) => {
  const dt = Math.min(0.1, (t - (lastTime || t)) / 1000);
  lastTime = t;
  const p = state.playback;
  if (p.playing && clip) {
    if (Math.abs(playhead - p.frame) > 1) playhead = p.frame;
    playhead += dt * state.skeletons[state.database].frameRate * p.speed;
    if (playhead >= p.stop) playhead = p.start;
    showFrame(Math.floor(playhead));
  }
  steer(dt, t);
  if ($('follow').checked) {
    const target = state.character.root || (p.playing ? p.root : null);
    if (target) viewer.follow(target[0], 0.9, target[2]);
  }
  meters(t);
});

// ---- characters -----------------------------------------------------------------
async function createCharacter() {
  if (!state.connected) return;
  await destroyCharacter();
  state.playback.playing = false;
  $('play').innerHTML = '&#9654;';
  showClip(false);
  $('follow').checked = true; // framing a crowd had turned it off: the new character is what to look at
  const created = await call('create_characters', { database: state.database || 'default', placements: [{ x: 0, z: 0 }] });
  const id = created.characters[0];
  const skeleton = state.skeletons[state.database || 'default'];
  Object.assign(state.character, { id: id.toString(), frames: 0, root: null, joints: null, touchdowns: [], states: 0,
    feet: [], locks: [], database: state.database || 'default' });
  characterRig = new Rig(viewer, skeleton.parents, 0x4fc3f7, { contactBones: skeleton.contactBones, names: skeleton.names });
  characterTrail = new Trail(viewer, 0x4fc3f7, 1200, 0.8);
  trajectory.setVisible(true);
  footprints.clear();
  chart.length = 0;
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
  if (message.gone.some((g) => g.toString() === state.character.id)) {
    toast(`character ${state.character.id} is gone`);
    resetCharacter();
  }
  $('stream-info').textContent = `${encodingName(message.encoding)}: tick ${message.tick}, ` +
    `dropped ${message.dropped_frames}, dt ${fmt(message.dt, 4)} s`;
}

async function pollState(id, skeleton) {
  let n = 0;
  while (conn && state.character.id === id.toString()) {
    const started = performance.now();
    try {
      const s = await conn.call('character_state', { character: id, offsets: true, query: true });
      state.character.state = s;
      state.character.states++;
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
  ];
  $('char-state').innerHTML = rows.map(([k, val]) => `<dt>${k}</dt><dd>${val}</dd>`).join('');
  const o = s.inertializer;
  let position = 0, rotation = 0;
  const n = o.offset_positions.length / 3;
  for (let b = 1; b < n; b++) {
    position += Math.hypot(o.offset_positions[3 * b], o.offset_positions[3 * b + 1], o.offset_positions[3 * b + 2]);
    const w = Math.min(1, Math.abs(o.offset_rotations[4 * b]));
    rotation = Math.max(rotation, 2 * Math.acos(w) * 180 / Math.PI);
  }
  const last = chart[chart.length - 1];
  const transitions = Number(s.transitions.toString());
  chart.push({ t: performance.now() / 1000, position, rotation, transition: last && transitions > last.transitions, transitions });
  while (chart.length && chart[0].t < chart[chart.length - 1].t - CHART_SECONDS) chart.shift();
  state.character.offsets = { position, rotation };
  drawChart();
}

// A failed search (the database unloaded under a character that keeps
// running on it) says so once and in the panel; the state goes on.
async function explainMatchOrSay(s, skeleton) {
  try {
    await explainMatch(s, skeleton);
    state.matchError = null;
  } catch (e) {
    if (!state.character.id) return; // gone meanwhile (destroyed, connection lost): nothing to say
    if (e.message !== state.matchError) toast(e.message);
    state.matchError = e.message;
    state.match = null;
    $('match-info').textContent = `no match: ${e.message}`;
  }
}

// The character's query as it would search now (character_state with
// query), searched with the controller's settings, explained (cost split by
// feature group, margin to the runner-up) and with the feature rows: the
// match the character's next search would find, and why.
async function explainMatch(s, skeleton) {
  if (!s.query.length) return;
  const query = {
    features: s.query, current_frame: { frame: s.frame }, ...CONTROLLER_SEARCH, k: 2, explain: true,
    include_features: true,
  };
  const answer = await conn.call('search', { database: state.character.database, query });
  const r = answer.result;
  const best = r.matches[0];
  const groups = skeleton.describe.features.map((f, i) => ({
    name: r.explanation[i].name, cost: r.explanation[i].cost, first: f.first_column, dims: f.dims,
  }));
  state.match = {
    frame: best.frame, range: best.range_name, cost: best.cost, margin: r.margin, current: s.frame,
    transitionCost: best.frame === s.frame ? 0 : CONTROLLER_SEARCH.transition_cost, // in cost, not in the groups
    groups, query: Array.from(r.query), features: Array.from(best.features),
    runnerUp: r.matches[1] ? { frame: r.matches[1].frame, range: r.matches[1].range_name, cost: r.matches[1].cost } : null,
  };
  const stays = best.frame === s.frame;
  $('match-info').textContent = `playing ${s.frame} (${s.range_name})\n` +
    `best    ${best.frame} (${best.range_name}) cost ${fmt(best.cost, 4)}${stays ? '  = playing: stays' : ''}\n` +
    (r.matches[1] ? `runner-up ${r.matches[1].frame} (${r.matches[1].range_name}), margin ${fmt(r.margin, 4)}` : '');
  const total = r.explanation.reduce((a, g) => a + g.cost, 0);
  const scale = Math.max(total, 1e-3); // below this the split is noise: short bars
  $('cost-bars').innerHTML = groups.map((g) => `<div class="bar"><span>${g.name}</span>` +
    `<div class="track"><div class="fill" style="width:${(100 * g.cost / scale).toFixed(1)}%"></div></div>` +
    `<span class="val">${fmt(g.cost, 4)}</span></div>`).join('');
  drawFeatures(state.match);
}

// Query (blue) against match (orange), column by column, grouped by feature
// group: normalized values, clipped to +-CLIP.
function drawFeatures(m) {
  const canvas = $('feature-chart');
  const ctx = canvas.getContext('2d');
  const w = canvas.width, h = canvas.height, CLIP = 3, top = 6, bottom = h - 16;
  const mid = (top + bottom) / 2, unit = (bottom - top) / (2 * CLIP);
  ctx.clearRect(0, 0, w, h);
  const cols = m.query.length, gap = 4;
  const colW = (w - gap * (m.groups.length - 1)) / cols;
  const y = (v) => mid - Math.max(-CLIP, Math.min(CLIP, v)) * unit;
  ctx.strokeStyle = '#2e343c';
  ctx.beginPath(); ctx.moveTo(0, mid); ctx.lineTo(w, mid); ctx.stroke();
  ctx.font = '9px monospace';
  let x = 0;
  m.groups.forEach((g, gi) => {
    const x0 = x;
    const worst = g.cost / Math.max(1e-9, ...m.groups.map((o) => o.cost));
    ctx.fillStyle = `rgba(229,115,115,${(0.08 + 0.25 * worst).toFixed(3)})`;
    ctx.fillRect(x0, top, colW * g.dims, bottom - top);
    for (let c = g.first; c < g.first + g.dims; c++) {
      const bw = Math.max(1, colW / 2 - 1);
      ctx.fillStyle = '#4fc3f7';
      ctx.fillRect(x + 0.5, Math.min(mid, y(m.query[c])), bw, Math.abs(y(m.query[c]) - mid) || 1);
      ctx.fillStyle = '#ffb74d';
      ctx.fillRect(x + colW / 2, Math.min(mid, y(m.features[c])), bw, Math.abs(y(m.features[c]) - mid) || 1);
      x += colW;
    }
    ctx.fillStyle = '#8a94a0';
    ctx.fillText(shortGroup(g.name), x0 + 1, h - 4, colW * g.dims);
    x += gi < m.groups.length - 1 ? gap : 0;
  });
}

// "LeftFoot position" -> "LFoot p", "trajectory direction" -> "traj d".
function shortGroup(name) {
  const [what, ...rest] = name.split(' ');
  const kind = rest.join(' ');
  const head = what === 'trajectory' ? 'traj' : what.replace(/^Left/, 'L').replace(/^Right/, 'R');
  return `${head} ${kind ? kind[0] : ''}`;
}

function drawChart() {
  const canvas = $('offsets-chart');
  const ctx = canvas.getContext('2d');
  const w = canvas.width, h = canvas.height;
  ctx.clearRect(0, 0, w, h);
  if (chart.length < 2) return;
  const t1 = chart[chart.length - 1].t, t0 = t1 - CHART_SECONDS;
  const x = (t) => ((t - t0) / CHART_SECONDS) * w;
  const maxP = Math.max(0.05, ...chart.map((c) => c.position));
  const maxR = Math.max(5, ...chart.map((c) => c.rotation));
  ctx.strokeStyle = '#2e343c';
  for (let i = 1; i < 4; i++) { ctx.beginPath(); ctx.moveTo(0, (h * i) / 4); ctx.lineTo(w, (h * i) / 4); ctx.stroke(); }
  ctx.strokeStyle = '#e57373';
  for (const c of chart) if (c.transition) { ctx.beginPath(); ctx.moveTo(x(c.t), 0); ctx.lineTo(x(c.t), h); ctx.stroke(); }
  const line = (key, max, color) => {
    ctx.strokeStyle = color;
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    chart.forEach((c, i) => { const y = h - 4 - (c[key] / max) * (h - 10); if (i) ctx.lineTo(x(c.t), y); else ctx.moveTo(x(c.t), y); });
    ctx.stroke();
  };
  line('position', maxP, '#4fc3f7');
  line('rotation', maxR, '#ffb74d');
  ctx.fillStyle = '#8a94a0';
  ctx.font = '10px monospace';
  ctx.fillText(`${maxP.toFixed(2)} m / ${maxR.toFixed(0)}°`, 4, 11);
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

async function destroyCharacter() {
  const c = state.character;
  if (!c.id) return;
  const id = c.id;
  c.id = null;
  if (conn && c.subscription) { conn.offStream(c.subscription); await conn.call('unsubscribe', { subscription: c.subscription }).catch(() => {}); }
  if (conn) await conn.call('destroy_characters', { characters: [id] }).catch(() => {});
  resetCharacter();
}

function resetCharacter() {
  const c = state.character;
  Object.assign(c, { id: null, subscription: null, root: null, joints: null, state: null });
  if (characterRig) characterRig.dispose();
  if (characterTrail) characterTrail.dispose();
  characterRig = characterTrail = null;
  trajectory.setVisible(false);
  // Its panels go with it: nothing shown belongs to a character that is not there.
  state.match = null;
  state.matchError = null;
  footprints.clear();
  chart.length = 0;
  drawChart();
  for (const id of ['char-state', 'match-info', 'cost-bars', 'contacts']) $(id).innerHTML = '';
  const features = $('feature-chart');
  features.getContext('2d').clearRect(0, 0, features.width, features.height);
}

// A failed request has already said why (toast): nothing is left unhandled.
const quietly = (promise) => promise.catch(() => {});
$('create').onclick = () => quietly(createCharacter());
$('destroy').onclick = () => quietly(destroyCharacter());

// ---- input: keyboard and gamepad, relative to the camera as in the seed ----------
const keys = new Set();
const typing = () => ['INPUT', 'SELECT', 'TEXTAREA'].includes(document.activeElement && document.activeElement.tagName);
window.addEventListener('keydown', (e) => {
  if (typing()) return;
  keys.add(e.code);
  if (e.code === 'Space' || e.code.startsWith('Arrow')) e.preventDefault();
});
window.addEventListener('keyup', (e) => keys.delete(e.code));
window.addEventListener('blur', () => keys.clear());

function steer(dt, now) {
  const c = state.character;
  let sx = 0, sy = 0, strafe = false, orbit = 0;
  if (keys.has('KeyW') || keys.has('ArrowUp')) sy += 1;
  if (keys.has('KeyS') || keys.has('ArrowDown')) sy -= 1;
  if (keys.has('KeyD') || keys.has('ArrowRight')) sx += 1;
  if (keys.has('KeyA') || keys.has('ArrowLeft')) sx -= 1;
  if (keys.has('KeyQ')) orbit += 1;
  if (keys.has('KeyE')) orbit -= 1;
  strafe = keys.has('Space');
  let source = 'keyboard';
  const pad = navigator.getGamepads ? [...navigator.getGamepads()].find((g) => g && g.connected) : null;
  if (pad) {
    const dead = (v) => (Math.abs(v) < 0.15 ? 0 : v);
    const lx = dead(pad.axes[0] || 0), ly = dead(pad.axes[1] || 0), rx = dead(pad.axes[2] || 0);
    if (lx || ly || rx || (pad.buttons[6] && pad.buttons[6].value > 0.5)) {
      source = `gamepad ${pad.id.slice(0, 24)}`;
      sx += lx; sy -= ly; orbit -= rx * 1.5;
      strafe = strafe || (pad.buttons[6] && pad.buttons[6].value > 0.5) || (pad.buttons[4] && pad.buttons[4].pressed);
    }
  }
  if (orbit) viewer.orbit(orbit * 1.6 * dt);
  let length = Math.hypot(sx, sy);
  if (length > 1) { sx /= length; sy /= length; length = 1; }
  if (keys.has('ShiftLeft') || keys.has('ShiftRight')) { sx *= 0.45; sy *= 0.45; }
  // Screen directions -> world -> the server's stick frame: world = yaw(azimuth) (x, z).
  const { forward, right } = viewer.groundBasis();
  const wx = forward[0] * sy + right[0] * sx, wz = forward[1] * sy + right[1] * sx;
  const azimuth = viewer.cameraAzimuth();
  const ca = Math.cos(azimuth), sa = Math.sin(azimuth);
  const stick = [wx * ca - wz * sa, wx * sa + wz * ca];
  const input = state.input;
  const changed = Math.hypot(stick[0] - input.stick[0], stick[1] - input.stick[1]) > 0.01 || strafe !== input.strafe ||
    (Math.hypot(...stick) > 0 && Math.abs(azimuth - input.azimuth) > 0.02);
  Object.assign(input, { source, world: [wx, wz] });
  $('hud-input').textContent = c.id ? `${source}: stick (${fmt(stick[0], 2)}, ${fmt(stick[1], 2)})  camera ` +
    `${fmt(azimuth * 180 / Math.PI, 0)}°${strafe ? '  strafe' : ''}` : 'create a character to drive it';
  if (!c.id || !conn || !state.connected) return;
  if (!changed && (Math.hypot(...stick) === 0 || now - input.sent < INPUT_RESEND_MS)) return;
  Object.assign(input, { stick, strafe, azimuth, sent: now });
  conn.call('set_inputs', { inputs: [{ character: c.id, stick: { x: stick[0], z: stick[1], camera_azimuth: azimuth, strafe } }] })
    .catch((e) => { if (state.connected) toast(e.message); }); // a lost connection says so itself
}

// ---- crowds -----------------------------------------------------------------------
function parseIds(text) {
  const ids = [];
  for (const part of text.split(/[\s,]+/).filter(Boolean)) {
    const m = part.match(/^(\d+)-(\d+)$/);
    if (m) for (let i = BigInt(m[1]); i <= BigInt(m[2]) && ids.length < 10000; i++) ids.push(i.toString());
    else if (/^\d+$/.test(part)) ids.push(part);
    else throw new Error(`not a character id: ${part}`);
  }
  return ids;
}

async function subscribeCrowd() {
  let ids;
  try { ids = parseIds($('crowd-ids').value); } catch (e) { toast(e.message); return; }
  if (!ids.length || !conn) return;
  clearCrowd();
  // A subscription names existing characters, all or nothing: an id that is
  // not (a gap in a range, one destroyed since) is dropped and the rest
  // subscribed; the list says which were not found.
  const missing = [];
  let sub = null;
  while (ids.length) {
    try {
      sub = await conn.call('subscribe', { characters: ids, encoding: state.encoding });
      break;
    } catch (e) {
      const m = e.codeName === 'ERROR_NOT_FOUND' && /^subscribe\.characters\[(\d+)\]/.exec(e.serverMessage || '');
      if (!m || Number(m[1]) >= ids.length) { toast(e.message); return; }
      missing.push(ids.splice(Number(m[1]), 1)[0]);
    }
  }
  state.crowd.missing = missing;
  if (missing.length) {
    toast(`not subscribed, no such character${missing.length > 1 ? 's' : ''}: ${missing.slice(0, 8).join(', ')}` +
      `${missing.length > 8 ? ', ...' : ''}`, false);
  }
  if (!sub) return;
  const subscription = sub.subscription.toString();
  state.crowd.subscription = subscription;
  if (!state.playback.playing) showClip(false); // the clip's skeleton is not one of the crowd
  const list = $('crowd-list');
  list.innerHTML = '';
  ids.forEach((id, i) => {
    const color = PALETTE[i % PALETTE.length];
    state.crowd.characters[id] = { color, frames: 0, root: null, rig: null, trail: null, gone: false, database: null,
      skeleton: null };
    const li = document.createElement('li');
    li.id = `crowd-${id}`;
    li.innerHTML = `<i style="background:#${color.toString(16).padStart(6, '0')}"></i>${id} <small></small> <span></span>`;
    list.appendChild(li);
  });
  for (const id of missing) {
    const li = document.createElement('li');
    li.innerHTML = `<i></i>${id} <span>not found</span>`;
    list.appendChild(li);
  }
  state.crowd.framed = false;
  conn.onStream(sub.subscription, crowdFrame);
  await crowdDatabases(ids, subscription);
}

// The database each crowd character runs on (character_state.database: a
// stream frame does not say, and two databases may have as many bones but
// other skeletons) and that database's skeleton, CROWD_STATE_CALLS
// requests at a time; a character's frames are drawn once both are known.
// One gone meanwhile is left to the stream (it reports it gone).
async function crowdDatabases(ids, subscription) {
  const queue = [...ids];
  const current = () => state.crowd.subscription === subscription;
  const learn = async () => {
    while (queue.length && current() && conn) {
      const id = queue.shift();
      let database;
      try {
        database = (await conn.call('character_state', { character: id })).database;
      } catch (e) {
        continue;
      }
      const skeleton = await skeletonOf(database);
      const entry = state.crowd.characters[id];
      if (!entry || !current()) continue;
      Object.assign(entry, { database, skeleton });
      const li = $(`crowd-${id}`);
      if (li) li.querySelector('small').textContent = skeleton ? database : `${database}: not described`;
    }
  };
  await Promise.all(Array.from({ length: Math.min(CROWD_STATE_CALLS, queue.length) }, learn));
}

// The camera on the whole crowd (once all have a pose; the Frame button).
function frameCrowd() {
  const roots = Object.values(state.crowd.characters).filter((e) => e.root && !e.gone).map((e) => [e.root[0], e.root[2]]);
  if (!roots.length) return;
  $('follow').checked = false;
  viewer.frameAll(roots);
  state.crowd.framed = true;
}

function crowdFrame(message) {
  state.streamFrames++;
  for (const pose of message.poses) {
    const id = pose.character.toString();
    const entry = state.crowd.characters[id];
    if (!entry) continue;
    const bones = encodingName(message.encoding) === 'ENCODING_QUANTIZED' ? quantizedBones(pose.quantized.length, false) : pose.rotations.length / 4;
    const skeleton = entry.skeleton; // its database's (crowdDatabases): unknown yet, not drawn yet
    if (!skeleton || skeleton.parents.length !== bones) continue;
    if (!entry.rig) {
      entry.rig = new Rig(viewer, skeleton.parents, entry.color, { contactBones: skeleton.contactBones, names: skeleton.names });
      entry.trail = new Trail(viewer, entry.color, 400, 0.6);
    }
    const g = poseGlobals(pose, message.encoding, skeleton);
    const encoding = encodingName(message.encoding), tick = Number(message.tick.toString());
    // An encoding switch: how far the root moved from the last frame of the
    // old encoding to the first of the new, and over how many ticks.
    if (entry.encoding && entry.encoding !== encoding && entry.root) {
      entry.switched = { from: entry.encoding, to: encoding, ticks: tick - entry.tick,
        move: Math.hypot(g[0] - entry.root[0], g[1] - entry.root[1], g[2] - entry.root[2]) };
    }
    entry.rig.update(g, pose.contacts);
    entry.trail.push(g[0], 0.012, g[2]);
    Object.assign(entry, { root: [g[0], g[1], g[2]], joints: g, encoding, tick, frames: entry.frames + 1 });
  }
  for (const gone of message.gone) {
    const entry = state.crowd.characters[gone.toString()];
    if (!entry) continue;
    entry.gone = true;
    if (entry.rig) entry.rig.setVisible(false);
    const li = $(`crowd-${gone.toString()}`);
    if (li) li.querySelector('span').textContent = 'gone';
  }
  if (!state.crowd.framed && Object.values(state.crowd.characters).every((e) => e.root)) frameCrowd();
  for (const [id, e] of Object.entries(state.crowd.characters)) {
    const li = $(`crowd-${id}`);
    if (li && e.root && !e.gone) li.querySelector('span').textContent = `(${fmt(e.root[0], 1)}, ${fmt(e.root[2], 1)})`;
  }
}

// The connection was lost: the subscription went with it; the list says so
// and the skeletons stay where they were last seen, greyed.
function crowdLost() {
  const crowd = state.crowd;
  crowd.subscription = null;
  for (const [id, e] of Object.entries(crowd.characters)) {
    e.gone = true;
    if (e.rig) e.rig.setVisible(false);
    const li = $(`crowd-${id}`);
    if (li) li.querySelector('span').textContent = 'connection lost';
  }
}

function clearCrowd() {
  const crowd = state.crowd;
  if (conn && crowd.subscription) {
    conn.offStream(crowd.subscription);
    conn.call('unsubscribe', { subscription: crowd.subscription }).catch(() => {});
  }
  for (const e of Object.values(crowd.characters)) { if (e.rig) e.rig.dispose(); if (e.trail) e.trail.dispose(); }
  crowd.subscription = null;
  crowd.characters = {};
  crowd.missing = [];
  $('crowd-list').innerHTML = '';
}

$('crowd-subscribe').onclick = () => quietly(subscribeCrowd());
$('crowd-clear').onclick = () => clearCrowd();
$('crowd-frame').onclick = () => frameCrowd();

// ---- encodings --------------------------------------------------------------------
$('encoding').onchange = async () => {
  state.encoding = $('encoding').value;
  for (const s of [state.character.subscription, state.crowd.subscription]) {
    if (s && conn) await call('update_subscription', { subscription: s, rate_divisor: 1, encoding: state.encoding });
  }
};

// ---- meters -----------------------------------------------------------------------
let meterT = 0, meterFrames = 0, meterBytes = 0, frameCount = 0;
function meters(t) {
  frameCount++;
  if (t - meterT < 1000) return;
  const s = (t - meterT) / 1000;
  $('fps').textContent = `${Math.round(frameCount / s)} fps`;
  if (conn) {
    $('traffic').textContent = `${Math.round((state.streamFrames - meterFrames) / s)} frames/s  ` +
      `${((conn.bytesIn - meterBytes) / 1024 / s).toFixed(1)} KiB/s in`;
    meterBytes = conn.bytesIn;
  }
  meterFrames = state.streamFrames;
  frameCount = 0;
  meterT = t;
}

// ---- start --------------------------------------------------------------------------
$('url').value = params.get('bridge') || `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/`;
$('token').value = params.get('token') || '';
$('connect').onclick = () => quietly(connect());
$('disconnect').onclick = () => disconnect();
Object.assign(app, { connect, describe, selectRange, createCharacter, destroyCharacter, subscribeCrowd, frameCrowd, viewer });
if (params.get('connect') !== '0') quietly(connect());
