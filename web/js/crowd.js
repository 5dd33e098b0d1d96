// crowd.js: the Crowd panel: the characters of a running crowd (anyone's),
// by ids (ranges like A-B) or as a region around the view (a region
// subscription: characters announced as they enter and leave), each in its
// own colour, the camera framed on them all; each drawn with the skeleton of
// the database it runs on (by ids: character_state's database, since a stream
// frame does not say; in a region: the entered message's). Drawn by
// crowdview.js in three draw calls whatever the count; a click picks one
// (labelled, drawn as a full rig, its id in the panel). state.crowd holds
// what it knows; an encoding switch is recorded per character
// (entry.switched).
//
// It creates and steers no character (character.js, steering.js); ids that
// name no character are left out and listed as not found. A lost connection
// takes the subscription with it (crowdLost, through session.js's hooks).
import { $, fmt, poseGlobals, quietly, state, toast, viewer } from './shared.js';
import { conn, encodingName } from './session.js';
import { AnimError } from './protocol.js';
import { PALETTE, Trail } from './viewer.js';
import { CrowdView } from './crowdview.js';
import { quantizedBones } from './quantized.js';
import { skeletonOf } from './databases.js';
import { showClip } from './timeline.js';

// character_state requests in flight at once while a crowd's databases are learned.
const CROWD_STATE_CALLS = 8;
const LISTED = 40;        // rows of the panel's list (the rest: "and N more")
const TRAILS_BELOW = 24;  // crowds this small get trails
const LIST_EVERY_MS = 250;

const view = new CrowdView(viewer, $('crowd-labels'));
let listedAt = 0;

// A short name for a character: its slot (the low half of an id is slot + 1).
const labelOf = (id) => `#${(BigInt(id) & 0xffffffffn) - 1n}`;

function addEntry(id, index, database = null) {
  const color = PALETTE[index % PALETTE.length];
  const entry = { id, color, frames: 0, root: null, trail: null, gone: false, database, skeleton: null, joints: null,
    label: labelOf(id) };
  state.crowd.characters[id] = entry;
  return entry;
}

// The panel's list: the first LISTED characters with where they are, and a count.
function renderList(force = false) {
  const now = performance.now();
  if (!force && now - listedAt < LIST_EVERY_MS) return;
  listedAt = now;
  const list = $('crowd-list');
  const ids = Object.keys(state.crowd.characters);
  const rows = [];
  for (const id of ids.slice(0, LISTED)) {
    const e = state.crowd.characters[id];
    const where = e.gone ? (e.lostWith ? 'connection lost' : 'gone') : e.root ? `(${fmt(e.root[0], 1)}, ${fmt(e.root[2], 1)})` : '';
    rows.push(`<li id="crowd-${id}"><i style="background:#${e.color.toString(16).padStart(6, '0')}"></i>` +
      `${e.label} <small>${e.database ? (e.skeleton ? e.database : `${e.database}: not described`) : ''}</small> <span>${where}</span></li>`);
  }
  if (ids.length > LISTED) rows.push(`<li>and ${ids.length - LISTED} more</li>`);
  for (const id of state.crowd.missing) rows.push(`<li><i></i>${id} <span>not found</span></li>`);
  list.innerHTML = rows.join('');
  const chosen = view.chosen && state.crowd.characters[view.chosen.id];
  $('crowd-chosen').textContent = chosen ? `${chosen.label}: id ${view.chosen.id} on ${chosen.database || '?'}` +
    (chosen.root ? ` at (${fmt(chosen.root[0], 2)}, ${fmt(chosen.root[2], 2)})` : '') : '';
}

// "3, 10-12" -> ['3', '10', '11', '12'] (at most 10000 ids); anything else is refused.
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

// A subscribe the server refused is a failure (the toast, state.errors); one
// that met its connection closing is news (a page too slow for a crowd's
// stream is cut by the server, and connects again by itself).
function sayFailed(e) {
  toast(e.message, e instanceof AnimError);
}

export async function subscribeCrowd() {
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
      if (!m || Number(m[1]) >= ids.length) { sayFailed(e); return; }
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
  ids.forEach((id, i) => addEntry(id, i));
  state.crowd.framed = false;
  renderList(true);
  conn.onStream(sub.subscription, crowdFrame);
  await crowdDatabases(ids, subscription);
}

// A region subscription: every character within the radius of the point the
// camera looks at, announced as it enters (with its database) and leaves.
export async function watchRegion() {
  if (!conn) return;
  const radius = Number($('crowd-radius').value);
  if (!(radius > 0)) { toast('the radius must be a number of metres above 0'); return; }
  clearCrowd();
  const target = viewer.controls.target;
  let sub;
  try {
    // Quantized, a third of the radius at 10 Hz and the rest at 2 Hz: what a
    // viewer of a large crowd can tell apart, for about a twentieth of the
    // float stream at 60 Hz (a page that cannot read 1,000 float poses 60
    // times a second is cut by the server as a slow reader).
    sub = await conn.call('subscribe', { encoding: 'ENCODING_QUANTIZED',
      region: { centre: { x: target.x, y: 0, z: target.z }, radius,
        bands: [{ radius: radius / 3, rate_divisor: 6 }, { radius, rate_divisor: 30 }] } });
  } catch (e) { sayFailed(e); return; }
  const subscription = sub.subscription.toString();
  state.crowd.subscription = subscription;
  state.crowd.region = { x: target.x, z: target.z, radius };
  if (!state.playback.playing) showClip(false);
  state.crowd.framed = false;
  renderList(true);
  conn.onStream(sub.subscription, crowdFrame);
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
    }
  };
  await Promise.all(Array.from({ length: Math.min(CROWD_STATE_CALLS, queue.length) }, learn));
  renderList(true);
}

// The camera on the whole crowd (once all have a pose; the Frame button).
export function frameCrowd() {
  const roots = Object.values(state.crowd.characters).filter((e) => e.root && !e.gone).map((e) => [e.root[0], e.root[2]]);
  if (!roots.length) return;
  $('follow').checked = false;
  viewer.frameAll(roots);
  state.crowd.framed = true;
}

function crowdFrame(message) {
  state.streamFrames++;
  const crowd = state.crowd;
  for (const entered of message.entered || []) {
    const id = entered.character.toString();
    if (crowd.characters[id] && !crowd.characters[id].gone) continue;
    const entry = addEntry(id, crowd.entered = (crowd.entered || 0) + 1, entered.database);
    skeletonOf(entered.database).then((skeleton) => { entry.skeleton = skeleton; }).catch(() => {});
  }
  const quantized = encodingName(message.encoding) === 'ENCODING_QUANTIZED';
  const eager = Object.keys(crowd.characters).length < TRAILS_BELOW;
  for (const pose of message.poses) {
    const id = pose.character.toString();
    const entry = crowd.characters[id];
    if (!entry) continue;
    const bones = quantized ? quantizedBones(pose.quantized.length, false) : pose.rotations.length / 4;
    const skeleton = entry.skeleton; // its database's: unknown yet, not drawn yet
    if (!skeleton || skeleton.parents.length !== bones) continue;
    // A large crowd's poses are turned into joints once an animation frame
    // (drawCrowd), not once a stream frame: a slow page skips the ones it
    // would never draw.
    entry.pending = { pose, encoding: message.encoding, tick: Number(message.tick.toString()) };
    if (eager) resolvePose(entry, true);
  }
  for (const gone of [...message.gone, ...(message.left || [])]) {
    const id = gone.toString(), entry = crowd.characters[id];
    if (!entry) continue;
    if (entry.trail) entry.trail.dispose();
    if (crowd.region) delete crowd.characters[id]; // left the region: no longer of this view
    else entry.gone = true;
    if (view.chosen && view.chosen.id === id) view.choose(null);
  }
  if (!crowd.framed && !crowd.region && Object.values(crowd.characters).every((e) => e.root)) frameCrowd();
  renderList();
}

// An entry's latest pose as world joint positions (and its root, trail, encoding switch); small: the
// crowd is small enough for trails (counted by the caller: once a pose, Object.keys of a crowd of 1,000
// made a 1,000-long array for each of the hundreds of poses a frame resolves).
function resolvePose(entry, small) {
  const { pose, encoding: code, tick } = entry.pending;
  entry.pending = null;
  const g = poseGlobals(pose, code, entry.skeleton);
  const encoding = encodingName(code);
  // An encoding switch: how far the root moved from the last frame of the
  // old encoding to the first of the new, and over how many ticks.
  if (entry.encoding && entry.encoding !== encoding && entry.root) {
    entry.switched = { from: entry.encoding, to: encoding, ticks: tick - entry.tick,
      move: Math.hypot(g[0] - entry.root[0], g[1] - entry.root[1], g[2] - entry.root[2]) };
  }
  if (!entry.trail && small) {
    entry.trail = new Trail(viewer, entry.color, 400, 0.6);
  }
  if (entry.trail) entry.trail.push(g[0], 0.012, g[2]);
  entry.root = [g[0], g[1], g[2]];
  entry.joints = g, entry.encoding = encoding, entry.tick = tick, entry.frames++;
}

// The drawing, once an animation frame (not once a stream frame): the
// entries drawn are kept in one list, changed in place, so a frame allocates
// nothing for a crowd that keeps its members (1,000 objects a frame went
// before); the view is told when the list changed.
const drawn = [];
function drawCrowd() {
  let n = 0, layout = false, count = 0;
  const characters = state.crowd.characters;
  for (const id in characters) count++; // eslint-disable-line no-unused-vars
  const small = count < TRAILS_BELOW;
  for (const id in characters) {
    const e = characters[id];
    if (e.pending && !e.gone) resolvePose(e, small);
    if (!e.joints || e.gone || !e.skeleton) continue;
    if (drawn[n] !== e) drawn[n] = e, layout = true;
    n++;
  }
  if (drawn.length !== n) drawn.length = n, layout = true;
  view.update(drawn, layout);
  view.drawLabels();
}
viewer.hooks.push(drawCrowd);

// Picking: a click (not a drag) on a character chooses it; the pointer over one labels it.
const canvas = viewer.renderer.domElement;
let down = null;
canvas.addEventListener('pointerdown', (ev) => { down = [ev.clientX, ev.clientY]; });
canvas.addEventListener('pointerup', (ev) => {
  if (!down || Math.hypot(ev.clientX - down[0], ev.clientY - down[1]) > 4) return;
  const r = canvas.getBoundingClientRect();
  const hit = view.pick(ev.clientX - r.left, ev.clientY - r.top);
  if (!hit && !view.chosen) return;
  view.choose(hit);
  state.crowd.chosen = hit ? hit.id : null;
  renderList(true);
});
canvas.addEventListener('pointermove', (ev) => {
  const r = canvas.getBoundingClientRect();
  view.hovered = view.pick(ev.clientX - r.left, ev.clientY - r.top);
});

// The connection was lost: the subscription went with it; the list says so.
export function crowdLost() {
  const crowd = state.crowd;
  crowd.subscription = null;
  for (const e of Object.values(crowd.characters)) e.gone = true, e.lostWith = true;
  view.choose(null);
  renderList(true);
}

export function clearCrowd() {
  const crowd = state.crowd;
  if (conn && crowd.subscription) {
    conn.offStream(crowd.subscription);
    conn.call('unsubscribe', { subscription: crowd.subscription }).catch(() => {});
  }
  for (const e of Object.values(crowd.characters)) if (e.trail) e.trail.dispose();
  view.clear();
  Object.assign(crowd, { subscription: null, characters: {}, missing: [], region: null, chosen: null, entered: 0 });
  renderList(true);
}

$('crowd-subscribe').onclick = () => quietly(subscribeCrowd());
$('crowd-watch').onclick = () => quietly(watchRegion());
$('crowd-clear').onclick = () => clearCrowd();
$('crowd-frame').onclick = () => frameCrowd();
