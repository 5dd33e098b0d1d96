// crowd.js: the Crowd panel: several characters of a running crowd (anyone's
// ids, ranges like A-B), subscribed at once, each in its own colour with a
// trail, the camera framed on them all; each drawn with the skeleton of the
// database it runs on (character_state's database: a stream frame does not
// say, and two databases may have as many bones in another order).
// state.crowd holds what it knows; an encoding switch is recorded per
// character (entry.switched).
//
// It creates and steers no character (character.js, steering.js); ids that
// name no character are left out and listed as not found. A lost connection
// takes the subscription with it (crowdLost, through session.js's hooks).
import { $, fmt, poseGlobals, quietly, state, toast, viewer } from './shared.js';
import { conn, encodingName } from './session.js';
import { PALETTE, Rig, Trail } from './viewer.js';
import { quantizedBones } from './quantized.js';
import { skeletonOf } from './databases.js';
import { showClip } from './timeline.js';

// character_state requests in flight at once while a crowd's databases are learned.
const CROWD_STATE_CALLS = 8;

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
export function frameCrowd() {
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
export function crowdLost() {
  const crowd = state.crowd;
  crowd.subscription = null;
  for (const [id, e] of Object.entries(crowd.characters)) {
    e.gone = true;
    if (e.rig) e.rig.setVisible(false);
    const li = $(`crowd-${id}`);
    if (li) li.querySelector('span').textContent = 'connection lost';
  }
}

export function clearCrowd() {
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
